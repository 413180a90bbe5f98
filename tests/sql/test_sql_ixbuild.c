/* test_sql_ixbuild.c - CREATE INDEX on a table that holds rows (sql/merge.h
 * qr_build_indexes_table): the index is added marked building, writers
 * build it from then on, the older segments are rewritten with it one at a
 * time, and queries answer exactly as before at every step in between
 * (keyword equality and ranges by the column, @@ refused with 55000 until
 * the index is built, pg_index.indisvalid false) and by the index once it
 * is; the rows read back unchanged. Run live, the build goes on in the
 * background while rows come in, resumes after a restart and gives up
 * cleanly when the table is dropped. Every count is checked against one
 * computed here from the generated rows. */
#include "sqltest.h"

#include <stdatomic.h>
#include <time.h>

#include "format/segment.h"
#include "index/catalog.h"
#include "index/deletes.h"
#include "index/invindex.h"
#include "index/table.h"
#include "sql/merge.h"
#include "sql/rows.h"
#include "sql/stmt.h"

#define SEG_ROWS 300

static const char *const words[] = {"failed", "order", "cache", "miss", "charge", "placed"};
static const char *const svcs[] = {"cart", "pay", "db"};

/* Row i's columns, a function of i alone (the oracle recomputes them). */
static const char *svc_of(int i) { return svcs[i % 3]; }
static int sev_of(int i) { return i * 7 % 11; }
static void msg_of(int i, char *buf, size_t n)
{
    snprintf(buf, n, "%s %s row%d", words[i % 6], words[i * 5 % 4], i);
}

static int has_word(int i, const char *w)
{
    return !strcmp(words[i % 6], w) || !strcmp(words[i * 5 % 4], w);
}

static void insert_rows(qr_sql_session *s, int from, int n)
{
    qr_buf sql;
    qr_buf_init(&sql);
    const char *head = "INSERT INTO logs VALUES ";
    qr_buf_put(&sql, head, strlen(head));
    for (int i = from; i < from + n; i++) {
        char row[200], msg[80];
        msg_of(i, msg, sizeof msg);
        int k = snprintf(row, sizeof row, "%s('2025-01-01 %02d:%02d:%02d', '%s', '%s', %d)",
                         i > from ? ", " : "", i / 3600 % 24, i / 60 % 60, i % 60, svc_of(i), msg,
                         sev_of(i));
        qr_buf_put(&sql, row, (size_t)k);
    }
    qr_buf_put_u8(&sql, 0);
    qr_err e;
    char tag[64];
    char *out = st_run_on(s, (const char *)sql.p, tag, &e);
    if (!out)
        fail_msg("insert: %s %s", e.code, e.msg);
    free(out);
    qr_buf_free(&sql);
}

/* The expected answers over rows [0, n). */
static char *expect_count(int n, int which)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        k += which == 0   ? !strcmp(svc_of(i), "cart")
             : which == 1 ? sev_of(i) >= 3 && sev_of(i) <= 7
                          : has_word(i, "failed") && !has_word(i, "cache");
    char *s = malloc(32);
    snprintf(s, 32, "count\n%d\n", k);
    return s;
}

static const char *const q_svc = "SELECT count(*) FROM logs WHERE svc = 'cart'";
static const char *const q_sev = "SELECT count(*) FROM logs WHERE sev BETWEEN 3 AND 7";
static const char *const q_ft =
    "SELECT count(*) FROM logs WHERE msg @@ 'failed' AND NOT msg @@ 'cache'";

/* The keyword and range queries answer right whatever the build's state;
 * the full-text one fails with 55000 while its index is being built (or
 * answers right, when it is built and may_ft). */
static void check_queries(qr_sql_session *s, int rows, int may_ft)
{
    for (int which = 0; which < 3; which++) {
        qr_err e;
        char *want = expect_count(rows, which);
        char *got = st_run_on(s, which == 0 ? q_svc : which == 1 ? q_sev : q_ft, NULL, &e);
        if (which == 2 && !got) {
            assert_string_equal(e.code, "55000");
            assert_string_equal(e.msg,
                                "the full-text index on column \"msg\" is being built: @@ can "
                                "use it once it is (pg_index.indisvalid) at character 33");
        } else {
            if (!got)
                fail_msg("%s: %s %s", which == 0 ? q_svc : q_sev, e.code, e.msg);
            assert_true(which < 2 || may_ft);
            assert_string_equal(got, want);
        }
        free(got);
        free(want);
    }
}

static void make_table(qr_sql_session *s, int nsegs)
{
    qr_err e;
    char *out = st_run_on(s,
                          "CREATE TABLE logs (ts timestamp NOT NULL, svc text, msg text, sev "
                          "integer) WITH (sort_column = ts)",
                          NULL, &e);
    assert_non_null(out);
    free(out);
    for (int k = 0; k < nsegs; k++) /* one segment per INSERT */
        insert_rows(s, k * SEG_ROWS, SEG_ROWS);
}

/* How many of the table's segments lack an index being built, and whether
 * the catalog still has one. */
static uint32_t lacking(const char *dir, int *building)
{
    qr_err e;
again:;
    qr_table *t = qr_table_open(dir, "logs", QR_TABLE_READ, &e);
    if (!t)
        fail_msg("open: %s", e.msg);
    *building = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->def->nixs; i++)
        *building |= t->def->ixs[i].building;
    for (uint32_t s = 0; s < t->man.nsegs; s++) {
        qr_segment *sg = qr_table_open_segment(t->dir, &t->man.segs[s], &e);
        if (!sg) { /* replaced by the build since the manifest was read */
            qr_table_close(t);
            goto again;
        }
        int lacks = 0;
        for (uint32_t i = 0; i < t->def->nixs; i++)
            lacks |= !qr_seg_has_index(sg, t->def, &t->def->ixs[i]);
        n += lacks;
        qr_seg_close(sg);
    }
    qr_table_close(t);
    return n;
}

/* The catalog as CREATE INDEX leaves it on a populated table before any
 * segment is rebuilt: three indexes marked building. */
static void add_building_indexes(const char *dir)
{
    qr_catalog c;
    qr_err e;
    assert_int_equal(qr_catalog_load(dir, &c, &e), 0);
    qr_tabdef *d = qr_tabdef_clone(qr_catalog_find(&c, "logs"));
    assert_non_null(d);
    qr_catalog_free(&c);
    int at[3] = {qr_tabdef_add_index(d, 2, QR_IX_FULLTEXT, 0, NULL, &e),
                 qr_tabdef_add_index(d, 1, QR_IX_KEYWORD, 0, "service", &e),
                 qr_tabdef_add_index(d, 3, QR_IX_RANGE, 0, NULL, &e)};
    for (int i = 0; i < 3; i++) {
        assert_true(at[i] >= 0);
        d->ixs[at[i]].building = 1;
    }
    assert_int_equal(qr_catalog_replace_table(dir, d, &e), 0);
    qr_tabdef_free(d);
}

static void reopen(void)
{
    qr_sql_close(&st_s);
    qr_err e;
    if (qr_sql_open(&st_s, st_dir, 2, &e) != 0)
        fail_msg("open: %s", e.msg);
}

/* Every state between "added" and "built", step by step. */
static void test_queries_are_right_at_every_step_of_a_build(void **st)
{
    (void)st;
    st_open();
    make_table(&st_s, 5);
    qr_err e;
    char *rows_before = st_run_on(&st_s, "SELECT * FROM logs", NULL, &e);
    assert_non_null(rows_before);
    add_building_indexes(st_dir);
    reopen();
    int building;
    assert_int_equal(lacking(st_dir, &building), 5);
    assert_true(building);
    st_rows("SELECT indisvalid FROM pg_index ORDER BY indexrelid",
            "indisvalid\nfalse\nfalse\nfalse\n");
    /* the alias of an index being built names its column; the plan reads
     * the column, not the index */
    check_queries(&st_s, 5 * SEG_ROWS, 0);
    st_fails("CREATE INDEX ON logs USING keyword (svc)", "42P07",
             "relation \"logs\" already has a keyword index on \"svc\" at character 17");
    /* rows written now carry the indexes at once */
    insert_rows(&st_s, 5 * SEG_ROWS, SEG_ROWS);
    assert_int_equal(lacking(st_dir, &building), 5);
    int rows = 6 * SEG_ROWS;
    check_queries(&st_s, rows, 0);
    atomic_int never = 0;
    uint32_t built, left, steps = 0;
    for (;;) {
        /* budget 0: one segment per call */
        int r = qr_build_indexes_table(st_s.db, "logs", &never, 0, &built, &left, &e);
        if (r < 0)
            fail_msg("build: %s %s", e.code, e.msg);
        if (r == 0)
            break;
        steps++;
        uint32_t lack = lacking(st_dir, &building);
        if (building) {
            assert_int_equal(built, 1);
            assert_int_equal(lack, left);
            assert_int_equal(left, 5 - steps);
        } else {
            assert_int_equal(lack, 0);
        }
        check_queries(&st_s, rows, !building);
    }
    assert_int_equal(steps, 5); /* the last step also marked them built */
    assert_int_equal(lacking(st_dir, &building), 0);
    assert_false(building);
    st_rows("SELECT indisvalid FROM pg_index ORDER BY indexrelid",
            "indisvalid\ntrue\ntrue\ntrue\n");
    check_queries(&st_s, rows, 1);
    char *want = expect_count(rows, 0);
    st_rows("SELECT count(*) FROM logs WHERE svc = 'cart'", want); /* now by the index */
    free(want);
    /* the same rows in the same order; only the new ones added */
    char *after = st_run_on(&st_s, "SELECT * FROM logs", NULL, &e);
    assert_non_null(after);
    assert_memory_equal(after, rows_before, strlen(rows_before));
    free(after);
    free(rows_before);
    char mdir[4300];
    snprintf(mdir, sizeof mdir, "%s/logs/merge", st_dir);
    assert_int_not_equal(access(mdir, F_OK), 0); /* nothing left beside the table */
    st_close();
}

/* Without a merger (quarry sql), CREATE INDEX builds it before it returns;
 * IF NOT EXISTS finishes a build that was interrupted. */
static void test_create_index_builds_inline_without_a_merger(void **st)
{
    (void)st;
    st_open();
    make_table(&st_s, 4);
    st_ok("CREATE INDEX ON logs USING inverted (msg)", "CREATE INDEX");
    int building;
    uint32_t lack = lacking(st_dir, &building);
    assert_int_equal(lack, 0);
    assert_false(building);
    check_queries(&st_s, 4 * SEG_ROWS, 1);
    st_close();
    st_open();
    make_table(&st_s, 3);
    add_building_indexes(st_dir); /* what a process killed in CREATE INDEX leaves */
    reopen();
    st_ok("CREATE INDEX IF NOT EXISTS body ON logs USING inverted (msg)", "CREATE INDEX");
    assert_int_equal(lacking(st_dir, &building), 0);
    assert_false(building);
    check_queries(&st_s, 3 * SEG_ROWS, 1);
    /* VACUUM finishes one too */
    st_close();
    st_open();
    make_table(&st_s, 3);
    add_building_indexes(st_dir);
    reopen();
    st_ok("VACUUM logs", "VACUUM");
    assert_int_equal(lacking(st_dir, &building), 0);
    assert_false(building);
    check_queries(&st_s, 3 * SEG_ROWS, 1);
    st_close();
}

/* A build canceled between segments leaves the index marked building and
 * every answer as it was; a later build finishes it. */
static void test_a_canceled_build_loses_nothing(void **st)
{
    (void)st;
    st_open();
    make_table(&st_s, 4);
    add_building_indexes(st_dir);
    reopen();
    atomic_int cancel = 1;
    qr_qctx ctx;
    qr_sql_ctx_init(&st_s, &ctx, &cancel);
    qr_err e;
    assert_int_equal(qr_sql_build_indexes(&st_s, "logs", &ctx, &e), -1);
    assert_string_equal(e.code, "57014");
    assert_int_equal(ctx.used, 0);
    int building;
    assert_int_equal(lacking(st_dir, &building), 4);
    assert_true(building);
    check_queries(&st_s, 4 * SEG_ROWS, 0);
    st_ok("CREATE INDEX IF NOT EXISTS body ON logs USING inverted (msg)", "CREATE INDEX");
    assert_int_equal(lacking(st_dir, &building), 0);
    assert_false(building);
    check_queries(&st_s, 4 * SEG_ROWS, 1);
    st_close();
}

static void live(qr_sql_session *s)
{
    qr_live_opts o;
    qr_live_opts_default(&o);
    o.refresh_ms = 20;
    o.merge = 1;
    qr_err e;
    if (qr_sql_db_live(s->db, &o, &e) != 0)
        fail_msg("live: %s", e.msg);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* Poll until the catalog has no index being built (at most ~30 s). */
static void wait_built(void)
{
    int building = 1;
    for (int i = 0; i < 600 && building; i++) {
        lacking(st_dir, &building);
        if (building)
            sleep_ms(50);
    }
    assert_false(building);
}

/* Live: CREATE INDEX returns at once and the merger builds it while rows
 * come in and queries run; every answer is right throughout. */
static void test_live_build_in_the_background(void **st)
{
    (void)st;
    st_open();
    make_table(&st_s, 30);
    live(&st_s);
    st_ok("CREATE INDEX ON logs USING inverted (msg)", "CREATE INDEX");
    /* it returned before 30 segments were rewritten, each its own commit */
    int rows = 30 * SEG_ROWS, building = 1;
    assert_true(lacking(st_dir, &building) > 0);
    assert_true(building);
    for (int round = 0; round < 400 && building; round++) {
        if (round < 20) { /* rows during the build: logged, then flushed */
            insert_rows(&st_s, rows, 50);
            rows += 50;
        }
        check_queries(&st_s, rows, 1);
        lacking(st_dir, &building);
        if (building)
            sleep_ms(20);
    }
    wait_built();
    check_queries(&st_s, rows, 1);
    insert_rows(&st_s, rows, 50);
    rows += 50;
    check_queries(&st_s, rows, 1);
    st_close();
}


/* A live statement whose rows were parsed before CREATE INDEX would list a
 * live segment without the index, which queries would read once the index
 * is marked built: it is refused with 40001 (nothing stored), and the
 * same statement run again stores its rows with the index. */
static void test_live_writer_older_than_an_index_retries(void **st)
{
    (void)st;
    st_open();
    make_table(&st_s, 2);
    live(&st_s);
    qr_rowwriter w;
    qr_err e;
    assert_int_equal(qr_rows_begin(&w, st_s.db, "logs", 0, NULL, &e), 0);
    const char *row = "{\"ts\":\"2025-01-01 10:00:00\",\"svc\":\"cart\",\"msg\":\"failed "
                      "late\",\"sev\":1}";
    assert_int_equal(qr_rows_add(&w, row, strlen(row), &e), 0);
    st_ok("CREATE INDEX ON logs USING inverted (msg)", "CREATE INDEX");
    uint64_t n = 9;
    assert_int_equal(qr_rows_commit(&w, &n, &e), -1);
    assert_string_equal(e.code, "40001");
    assert_string_equal(e.msg, "table logs: its definition changed during the statement; retry it");
    assert_int_equal(n, 0);
    int rows = 2 * SEG_ROWS;
    insert_rows(&st_s, rows, 10); /* parsed with the index: live, with it */
    rows += 10;
    wait_built();
    check_queries(&st_s, rows, 1);
    st_rows("SELECT count(*) FROM logs WHERE msg @@ 'late'", "count\n0\n");
    st_close();
}
/* A build interrupted by a stop resumes when the database runs live again;
 * a table dropped during its build goes cleanly. */
static void test_live_build_resumes_and_drop_stops_it(void **st)
{
    (void)st;
    st_open();
    make_table(&st_s, 6);
    add_building_indexes(st_dir); /* the state a SIGKILL during a build leaves */
    reopen();
    live(&st_s);
    wait_built();
    int building;
    assert_int_equal(lacking(st_dir, &building), 0);
    check_queries(&st_s, 6 * SEG_ROWS, 1);
    st_close();

    st_open();
    make_table(&st_s, 20);
    live(&st_s);
    st_ok("CREATE INDEX ON logs USING inverted (msg)", "CREATE INDEX");
    st_ok("DROP TABLE logs", "DROP TABLE");
    st_fails("SELECT count(*) FROM logs", "42P01",
             "relation \"logs\" does not exist at character 22");
    char tdir[4300];
    snprintf(tdir, sizeof tdir, "%s/logs", st_dir);
    assert_int_not_equal(access(tdir, F_OK), 0);
    make_table(&st_s, 1); /* the name is free again */
    char *want = expect_count(SEG_ROWS, 0);
    st_rows(q_svc, want);
    free(want);
    st_close();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queries_are_right_at_every_step_of_a_build),
        cmocka_unit_test(test_create_index_builds_inline_without_a_merger),
        cmocka_unit_test(test_a_canceled_build_loses_nothing),
        cmocka_unit_test(test_live_build_in_the_background),
        cmocka_unit_test(test_live_writer_older_than_an_index_retries),
        cmocka_unit_test(test_live_build_resumes_and_drop_stops_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
