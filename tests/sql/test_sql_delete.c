/* test_sql_delete.c - DELETE (sql/stmt_delete.c, index/deletes.h).
 *
 * The oracle: table `a` gets 12 INSERTs of generated rows; table `b` gets
 * the same rows except those the DELETEs below remove, decided here in C
 * from the generator's values (no SQL). After the DELETEs on `a`, every
 * query family answers on `a` exactly as on `b`: counts (index, residual,
 * time range), GROUP BY, newest-k, every row read back, a self-join, and
 * top-k by BM25 as a set; after VACUUM of `a` (deleted rows rewritten
 * away, so the index-wide statistics are b's) the BM25 scores too.
 * Also: deletions accumulate over DELETEs, a fully deleted segment leaves
 * the manifest with its file, DELETE 0 changes nothing, the background
 * merge policy rewrites a segment that is a quarter deleted, a corrupt
 * deletion file is XX001 naming it, and errors name their position. */
#include "sqltest.h"

#include <dirent.h>

#include "index/deletes.h"
#include "index/table.h"
#include "sql/merge.h"

#define NSEG 12
#define PER  300

static const char *bodies[] = {"failed to place order for user",
                               "error connecting to cache server",
                               "failed to charge card error timeout",
                               "request completed",
                               "cache miss for order",
                               "post to email service failed error error",
                               "conversion request failed"};

typedef struct grow {
    int min, sec, n;
    const char *body, *svc, *again;
} grow;

static grow row_at(uint64_t *x, int s, int r)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    uint64_t v = *x;
    return (grow){(int)(v % 60), (int)(v / 60 % 60), s * PER + r, bodies[v % 7],
                  v % 2 ? "cart" : "ad", v % 53 == 0 ? " again" : ""};
}

/* The DELETEs' predicates, in C. */
static int gone_1(const grow *g) /* svc = 'cart' AND msg @@ 'failed' */
{
    return !strcmp(g->svc, "cart") && strstr(g->body, "failed") != NULL;
}
static int gone_2(const grow *g) { return g->n % 7 == 3; }  /* n % 7 = 3 (residual) */
static int gone_3(const grow *g) { return g->min < 5; }     /* ts < 00:05:00 */
static int gone(const grow *g) { return gone_1(g) || gone_2(g) || gone_3(g); }

static uint64_t expect[3]; /* rows each DELETE removes (in order, of what is left) */

static void load(const char *table, int skip_gone)
{
    uint64_t x = 99;
    for (int s = 0; s < NSEG; s++) {
        qr_buf sql;
        qr_buf_init(&sql);
        char head[64];
        snprintf(head, sizeof head, "INSERT INTO %s VALUES ", table);
        qr_buf_put(&sql, head, strlen(head));
        int k = 0;
        for (int r = 0; r < PER; r++) {
            grow g = row_at(&x, s, r);
            if (!skip_gone) {
                expect[0] += gone_1(&g);
                expect[1] += !gone_1(&g) && gone_2(&g);
                expect[2] += !gone_1(&g) && !gone_2(&g) && gone_3(&g);
            }
            if (skip_gone && gone(&g))
                continue;
            char row[256];
            int n = snprintf(row, sizeof row, "%s('2025-09-23 00:%02d:%02d', '%s%s', '%s', %d)",
                             k++ ? ", " : "", g.min, g.sec, g.body, g.again, g.svc, g.n);
            qr_buf_put(&sql, row, (size_t)n);
        }
        qr_buf_put_u8(&sql, 0);
        char tag[32];
        snprintf(tag, sizeof tag, "INSERT 0 %d", k);
        if (k)
            st_ok((const char *)sql.p, tag);
        qr_buf_free(&sql);
    }
}

static int setup(void **st)
{
    (void)st;
    st_open();
    for (int t = 0; t < 2; t++) {
        char sql[160];
        snprintf(sql, sizeof sql,
                 "CREATE TABLE %s (ts TIMESTAMP, msg text, svc text, n bigint) WITH (sort_column "
                 "= ts)",
                 t ? "b" : "a");
        st_ok(sql, "CREATE TABLE");
        snprintf(sql, sizeof sql, "CREATE INDEX ON %s USING inverted (msg)", t ? "b" : "a");
        st_ok(sql, "CREATE INDEX");
        snprintf(sql, sizeof sql, "CREATE INDEX ON %s USING keyword (svc)", t ? "b" : "a");
        st_ok(sql, "CREATE INDEX");
    }
    load("a", 0);
    load("b", 1);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    st_close();
    return 0;
}

static char *answer(const char *sql)
{
    qr_err e;
    char *out = st_run_on(&st_s, sql, NULL, &e);
    if (!out)
        fail_msg("%s: %s %s", sql, e.code, e.msg);
    return out;
}

/* Each query with %s for the table. */
static const char *queries[] = {
    "SELECT count(*) FROM %s",
    "SELECT count(*) FROM %s WHERE msg @@ 'failed'",
    "SELECT count(*) FROM %s WHERE msg @@ 'error' AND svc = 'cart'",
    "SELECT count(*) FROM %s WHERE msg @@ ts_phrase('place order')",
    "SELECT count(*) FROM %s WHERE msg @@ 'cache' AND NOT msg @@ 'miss'",
    "SELECT count(*) FROM %s WHERE n > 1000 AND n < 2500",
    "SELECT count(*) FROM %s WHERE ts >= TIMESTAMP '2025-09-23 00:10:00'",
    "SELECT count(*) FROM %s WHERE msg LIKE '%%again%%'",
    "SELECT svc, count(*), min(n), max(n), sum(n) FROM %s GROUP BY svc ORDER BY svc",
    "SELECT svc, count(*) FROM %s WHERE msg @@ 'order' GROUP BY svc ORDER BY svc",
    "SELECT svc, count(*) FROM %s GROUP BY svc ORDER BY svc",
    "SELECT svc, count(*) FROM %s WHERE msg @@ ts_phrase('place order') GROUP BY 1 ORDER BY 1",
    "SELECT date_trunc('minute', ts) AS m, count(*) FROM %s GROUP BY 1 ORDER BY 1",
    "SELECT date_trunc('second', ts) AS m, count(*) FROM %s GROUP BY 1 ORDER BY 1",
    "SELECT date_trunc('second', ts) AS m, count(*) FROM %s WHERE msg @@ 'failed' GROUP BY 1 "
    "ORDER BY 1",
    "SELECT date_trunc('minute', ts) AS m, count(*) FROM %s WHERE svc = 'ad' AND n > 100 GROUP BY "
    "1 ORDER BY 1",
    "SELECT count(DISTINCT msg) FROM %s",
    "SELECT ts, n FROM %s ORDER BY ts DESC, n DESC LIMIT 40",
    "SELECT n FROM %s WHERE msg @@ 'failed' ORDER BY ts DESC, n LIMIT 25",
    "SELECT ts, msg, svc, n FROM %s ORDER BY n",
    "SELECT n FROM (SELECT n FROM %s WHERE msg @@ 'failed OR error' ORDER BY bm25() DESC "
    "LIMIT 5000) x ORDER BY n",
    "SELECT n FROM (SELECT n FROM %s WHERE msg @@ 'cache' ORDER BY ts DESC LIMIT 5000) x "
    "ORDER BY n",
    "SELECT count(*) FROM %s x JOIN %s y ON x.n = y.n + 1 WHERE x.svc = 'ad'",
};
#define NQ (sizeof queries / sizeof *queries)

static char *on(const char *q, const char *t)
{
    char sql[1024];
    snprintf(sql, sizeof sql, q, t, t);
    return answer(sql);
}

static void same_answers(const char *when)
{
    for (size_t q = 0; q < NQ; q++) {
        char *x = on(queries[q], "a"), *y = on(queries[q], "b");
        if (strcmp(x, y))
            fail_msg("%s: %s\na:\n%s\nb:\n%s", when, queries[q], x, y);
        free(x);
        free(y);
    }
}

static void dir_has(const char *table, int segs, int dels)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/%s", st_dir, table);
    int ns = 0, nd = 0;
    DIR *dh = opendir(dir);
    assert_non_null(dh);
    for (struct dirent *de; (de = readdir(dh));) {
        ns += !strncmp(de->d_name, "seg-", 4);
        nd += !strncmp(de->d_name, "del-", 4);
    }
    closedir(dh);
    if (ns != segs || nd != dels)
        fail_msg("%s: %d segment and %d deletion files, expected %d and %d", table, ns, nd, segs,
                 dels);
}

static void test_delete_equals_never_inserted(void **st)
{
    (void)st;
    char *before = on("SELECT count(*) FROM %s", "a");
    assert_string_equal(before, "count\n3600\n");
    free(before);
    assert_true(expect[0] > 0 && expect[1] > 0 && expect[2] > 0);
    char tag[3][32];
    for (int i = 0; i < 3; i++)
        snprintf(tag[i], sizeof tag[i], "DELETE %llu", (unsigned long long)expect[i]);
    st_ok("DELETE FROM a WHERE svc = 'cart' AND msg @@ 'failed'", tag[0]); /* index only */
    dir_has("a", NSEG, NSEG);
    st_ok("delete from A where N % 7 = 3", tag[1]); /* a residual, any spelling */
    dir_has("a", NSEG, NSEG);                        /* one file per segment: the newest */
    st_ok("DELETE FROM a WHERE ts < TIMESTAMP '2025-09-23 00:05:00'", tag[2]);
    st_ok("DELETE FROM a WHERE svc = 'cart' AND msg @@ 'failed'", "DELETE 0"); /* gone already */
    same_answers("after the DELETEs");
    /* top-k by BM25 before the rewrite: the deleted rows still count in
     * the statistics, so only the set is b's (above); the scores after */
    st_ok("VACUUM a", "VACUUM");
    dir_has("a", 1, 0);
    same_answers("after VACUUM");
    /* (the score lists: ties are in table order, which VACUUM changed) */
    char *x = on("SELECT bm25() FROM %s t WHERE t.msg @@ 'failed OR error OR again' ORDER BY "
                 "bm25() DESC LIMIT 60",
                 "a");
    char *y = on("SELECT bm25() FROM %s t WHERE t.msg @@ 'failed OR error OR again' ORDER BY "
                 "bm25() DESC LIMIT 60",
                 "b");
    assert_string_equal(x, y);
    free(x);
    free(y);
}

static uint32_t nsegs_of(const char *table, uint64_t *deleted)
{
    qr_err e;
    qr_table *t = qr_table_open(st_dir, table, QR_TABLE_READ, &e);
    if (!t)
        fail_msg("%s", e.msg);
    uint32_t n = t->man.nsegs;
    *deleted = 0;
    for (uint32_t i = 0; i < n; i++)
        *deleted += t->man.segs[i].deleted;
    qr_table_close(t);
    return n;
}

static void test_whole_segments_leave_and_nothing_changes_for_delete_0(void **st)
{
    (void)st;
    st_ok("CREATE TABLE w (ts TIMESTAMP, msg text) WITH (sort_column = ts)", "CREATE TABLE");
    st_ok("CREATE INDEX ON w USING inverted (msg)", "CREATE INDEX");
    st_ok("INSERT INTO w VALUES ('2025-01-01 00:00:01', 'one a'), ('2025-01-01 00:00:02', 'two')",
          "INSERT 0 2");
    st_ok("INSERT INTO w VALUES ('2025-01-02 00:00:01', 'three a'), ('2025-01-02 00:00:02', "
          "'four a')",
          "INSERT 0 2");
    uint64_t del;
    st_ok("DELETE FROM w WHERE msg @@ 'nothing'", "DELETE 0");
    assert_int_equal(nsegs_of("w", &del), 2);
    assert_int_equal(del, 0);
    dir_has("w", 2, 0);
    st_ok("DELETE FROM w WHERE msg @@ 'a'", "DELETE 3"); /* the second segment goes whole */
    assert_int_equal(nsegs_of("w", &del), 1);
    assert_int_equal(del, 1);
    dir_has("w", 1, 1);
    st_rows("SELECT msg FROM w", "msg\ntwo\n");
    st_rows("SELECT count(*) FROM w WHERE msg @@ 'a'", "count\n0\n");
    st_rows("SELECT count(*) FROM w", "count\n1\n");
    st_ok("DELETE FROM w", "DELETE 1"); /* every row: an empty table */
    assert_int_equal(nsegs_of("w", &del), 0);
    dir_has("w", 0, 0);
    st_rows("SELECT count(*) FROM w", "count\n0\n");
    st_ok("DELETE FROM w", "DELETE 0");
    st_ok("INSERT INTO w VALUES ('2025-01-03 00:00:01', 'five a')", "INSERT 0 1");
    st_rows("SELECT msg FROM w WHERE msg @@ 'a'", "msg\nfive a\n");
    /* time buckets: a NULL time is the NULL group, a deleted row no bucket's */
    st_ok("INSERT INTO w VALUES (NULL, 'six a'), ('2025-01-03 00:00:02', 'seven')", "INSERT 0 2");
    st_ok("DELETE FROM w WHERE msg = 'seven'", "DELETE 1");
    st_rows("SELECT date_trunc('day', ts) AS d, count(*) FROM w GROUP BY 1 ORDER BY 1",
            "d,count\n2025-01-03T00:00:00.000000000Z,1\n,1\n");
    st_rows("SELECT date_trunc('day', ts) AS d, count(*) FROM w WHERE msg @@ 'a' GROUP BY 1 ORDER "
            "BY 1",
            "d,count\n2025-01-03T00:00:00.000000000Z,1\n,1\n");
    st_ok("DROP TABLE w", "DROP TABLE");
}

static void test_merge_policy_rewrites_deleted_segments(void **st)
{
    (void)st;
    qr_seg_entry s[3] = {{1, 2000000, 0, 0, 1, 0, 0},
                         {2, 2000000, 0, 0, 1, 5, 499999},
                         {3, 2000000, 0, 0, 1, 6, 500000}};
    uint32_t first = 9, n = 9;
    assert_int_equal(qr_merge_pick(s, NULL, 2, 0, &first, &n), 0); /* final, under a quarter */
    assert_int_equal(qr_merge_pick(s, NULL, 3, 0, &first, &n), 1);
    assert_int_equal(first, 2);
    assert_int_equal(n, 1);
}

static void test_corrupt_deletion_file_is_reported(void **st)
{
    (void)st;
    st_ok("CREATE TABLE c (ts TIMESTAMP, msg text) WITH (sort_column = ts)", "CREATE TABLE");
    st_ok("INSERT INTO c VALUES ('2025-01-01 00:00:01', 'x'), ('2025-01-01 00:00:02', 'y')",
          "INSERT 0 2");
    st_ok("DELETE FROM c WHERE msg = 'x'", "DELETE 1");
    qr_err e;
    qr_table *t = qr_table_open(st_dir, "c", QR_TABLE_READ, &e);
    assert_non_null(t);
    char path[4200];
    qr_del_path_in(t->dir, t->man.segs[0].id, t->man.segs[0].del_gen, path, sizeof path);
    qr_table_close(t);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 32, SEEK_SET); /* the first word of bits */
    int ch = fgetc(f);
    fseek(f, 32, SEEK_SET);
    fputc(ch ^ 0x02, f);
    fclose(f);
    char msg[4400];
    snprintf(msg, sizeof msg, "deletion file %s: corrupt: checksum mismatch", path);
    /* the table's snapshot is new (the catalog changed since), so the
     * segment is opened again and its deletions read */
    st_ok("CREATE TABLE c2 (a bigint)", "CREATE TABLE");
    st_ok("DROP TABLE c2", "DROP TABLE");
    qr_sql_close(&st_s);
    if (qr_sql_open(&st_s, st_dir, 2, &e) != 0)
        fail_msg("open: %s", e.msg);
    st_fails("SELECT count(*) FROM c", "XX001", msg);
    st_fails("DELETE FROM c WHERE msg = 'y'", "XX001", msg);
    st_ok("DROP TABLE c", "DROP TABLE");
}

static void test_delete_errors_name_the_position(void **st)
{
    (void)st;
    st_fails("DELETE FROM nosuch WHERE n = 1", "42P01",
             "relation \"nosuch\" does not exist at character 13");
    st_fails("DELETE FROM b WHERE nn = 1", "42703", "column \"nn\" does not exist at character 21");
    st_fails("DELETE FROM b USING a WHERE a.n = b.n", "0A000",
             "DELETE with USING is not supported (DELETE FROM t WHERE ... is)");
    st_fails("DELETE FROM b WHERE n = 1 RETURNING n", "0A000",
             "DELETE with RETURNING is not supported (DELETE FROM t WHERE ... is)");
    st_fails("DELETE FROM b AS x WHERE x.n = 1", "0A000",
             "DELETE with a table alias is not supported");
    st_fails("WITH w AS (SELECT 1) DELETE FROM b", "0A000",
             "DELETE with WITH is not supported (DELETE FROM t WHERE ... is)");
    st_fails("DELETE FROM b WHERE", "42601", NULL);
    char *x = answer("SELECT count(*) FROM b WHERE n IN (SELECT n FROM b WHERE n < 10)");
    char *y = answer("SELECT count(*) FROM b WHERE n < 10"); /* still usable */
    assert_string_equal(x, y);
    free(x);
    free(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delete_equals_never_inserted),
        cmocka_unit_test(test_whole_segments_leave_and_nothing_changes_for_delete_0),
        cmocka_unit_test(test_merge_policy_rewrites_deleted_segments),
        cmocka_unit_test(test_corrupt_deletion_file_is_reported),
        cmocka_unit_test(test_delete_errors_name_the_position),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
