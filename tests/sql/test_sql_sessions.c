/* test_sql_sessions.c - sessions sharing one database (sql.h): a statement
 * sees the table's latest manifest, several sessions run at once on the
 * shared pool and segment cache with the answers of one session alone, and
 * a text of several statements splits where libpg_query's scanner says. */
#include "search/oracle.h"

#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>

#include "index/table.h"
#include "sql/sql.h"

ORACLE_FIXTURE

static char *datadir;

/* Publish oracle segments [from, to) into table logs (hard links). */
static void publish(int from, int to)
{
    qr_err e;
    qr_table *w = qr_table_open(datadir, "logs", QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    if (!w)
        fail_msg("open: %s", e.msg);
    uint64_t id = qr_table_reserve_ids(w, (uint32_t)(to - from));
    qr_seg_entry add[NSEG];
    for (int s = from; s < to; s++) {
        char src[PATH_MAX], dst[PATH_MAX];
        snprintf(src, sizeof src, "%s/s%d.qseg", od.dir, s);
        qr_table_seg_path(w, id + (uint64_t)(s - from), dst, sizeof dst);
        assert_int_equal(link(src, dst), 0);
        struct stat sb;
        assert_int_equal(stat(dst, &sb), 0);
        add[s - from] =
            (qr_seg_entry){id + (uint64_t)(s - from), od.segs[s]->rows, 0, 0, (uint64_t)sb.st_size, 0, 0};
    }
    if (qr_table_commit(w, add, (uint32_t)(to - from), &e) != 0)
        fail_msg("commit: %s", e.msg);
    qr_table_close(w);
}

static int64_t count_of(qr_sql_session *s, const char *sql)
{
    qr_qctx ctx;
    qr_sql_ctx_init(s, &ctx, NULL);
    qr_result r;
    qr_result_init(&r, &ctx);
    qr_err e;
    if (qr_sql_exec(s, sql, strlen(sql), &r, &e) != 0)
        fail_msg("%s: %s %s", sql, e.code, e.msg);
    assert_int_equal(r.nrows, 1);
    int64_t n = qr_result_row(&r, 0)[0].i;
    qr_result_free(&r);
    assert_int_equal(ctx.used, 0);
    return n;
}

static uint64_t rows_of(int from, int to)
{
    uint64_t n = 0;
    for (int s = from; s < to; s++)
        n += od.nrows[s];
    return n;
}

/* A commit between two statements of one session is seen by the second. */
static void test_sql_sees_the_latest_manifest(void **st)
{
    (void)st;
    datadir = tu_tmpdir();
    assert_non_null(datadir);
    tu_create_otel_table(datadir, "logs");
    publish(0, 2);
    qr_sql_session s;
    qr_err e;
    if (qr_sql_open(&s, datadir, 2, &e) != 0)
        fail_msg("open: %s", e.msg);
    assert_int_equal(count_of(&s, "SELECT count(*) FROM logs"), (int64_t)rows_of(0, 2));
    publish(2, NSEG);
    assert_int_equal(count_of(&s, "SELECT count(*) FROM logs"), (int64_t)rows_of(0, NSEG));
    /* a table created after the session opened is found */
    tu_create_otel_table(datadir, "later");
    assert_int_equal(count_of(&s, "SELECT count(*) FROM later"), 0);
    qr_sql_close(&s);
}


/* Run sql under ctx; returns the SQLSTATE ("" when it succeeded). */
static const char *run_code(qr_sql_session *s, const char *sql, qr_qctx *ctx, char *code)
{
    qr_result r;
    qr_result_init(&r, ctx);
    qr_err e;
    qr_err_clear(&e);
    int rc = qr_sql_exec(s, sql, strlen(sql), &r, &e);
    snprintf(code, 6, "%s", rc == 0 ? "" : e.code);
    if (rc != 0 && getenv("SQLT_VERBOSE"))
        fprintf(stderr, "%s: %s %s\n", sql, e.code, e.msg);
    qr_result_free(&r);
    assert_int_equal(ctx->used, 0); /* everything given back, also after a failure */
    return code;
}

/* Past the memory limit: 53200; canceled or past the statement timeout:
 * 57014; each time nothing is kept and the next statement works. */
static void test_sql_limits_and_cancel(void **st)
{
    (void)st;
    qr_sql_session s;
    qr_err e;
    if (qr_sql_open(&s, datadir, 2, &e) != 0)
        fail_msg("open: %s", e.msg);
    static const char *q[] = {
        "SELECT TraceId, ServiceName, count(*) FROM logs GROUP BY 1, 2",
        "SELECT SeverityNumber * 100000 + length(Body), count(*) FROM logs GROUP BY 1",
        "SELECT date_trunc('microsecond', Timestamp), count(*) FROM logs GROUP BY 1",
        "SELECT count(DISTINCT Body) FROM logs", /* (of TraceId: by ordinal, test_sql_oracle) */
        "SELECT count(*) FROM logs a JOIN logs b ON a.TraceId = b.TraceId WHERE a.ServiceName = "
        "'cart' AND a.TraceId <> ''",
        "SELECT count(*), count(a.TraceId) FROM logs a RIGHT JOIN logs b ON a.TraceId = "
        "b.TraceId AND a.ServiceName = 'cart' WHERE b.ServiceName = 'checkout' AND b.TraceId <> "
        "''",
        "SELECT count(a.TraceId), count(b.TraceId) FROM (SELECT TraceId FROM logs WHERE "
        "ServiceName = 'checkout' AND TraceId <> '') a FULL JOIN logs b ON a.TraceId = b.TraceId "
        "WHERE b.ServiceName IS NULL OR b.ServiceName = 'payment'",
        "SELECT Body FROM logs WHERE ScopeName LIKE '%a%' ORDER BY SeverityNumber, Timestamp "
        "LIMIT 5",
    };
    char code[6];
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
        qr_qctx ctx;
        qr_qctx_init(&ctx, 256 << 10);
        assert_string_equal(run_code(&s, q[i], &ctx, code), "53200");
        qr_sql_ctx_init(&s, &ctx, NULL);
        assert_string_equal(run_code(&s, q[i], &ctx, code), "");
        atomic_int cancel = 1;
        qr_sql_ctx_init(&s, &ctx, &cancel);
        assert_string_equal(run_code(&s, q[i], &ctx, code), "57014");
        qr_qctx_init(&ctx, QR_QCTX_DEFAULT_LIMIT);
        qr_qctx_set_stop(&ctx, NULL, qr_qctx_now_ns() - 1); /* the timeout has passed */
        assert_string_equal(run_code(&s, q[i], &ctx, code), "57014");
        qr_sql_ctx_init(&s, &ctx, NULL);
        assert_string_equal(run_code(&s, q[i], &ctx, code), "");
    }
    /* the session's own settings do the same */
    s.set.memory_limit = 128 << 10;
    qr_qctx ctx;
    qr_sql_ctx_init(&s, &ctx, NULL);
    assert_string_equal(run_code(&s, q[0], &ctx, code), "53200");
    s.set.memory_limit = QR_QCTX_DEFAULT_LIMIT;
    qr_sql_ctx_init(&s, &ctx, NULL);
    assert_string_equal(run_code(&s, q[0], &ctx, code), "");
    qr_sql_close(&s);
}

typedef struct client {
    qr_sql_db *db;
    int id;
    int64_t want[3];
    int mismatches;
} client;

static const char *mix[3] = {
    "SELECT count(*) FROM logs WHERE Body @@ 'failed'",
    "SELECT count(*) FROM logs WHERE Body @@ ts_all(['failed', 'order'])",
    "SELECT count(*) FROM logs WHERE ServiceName = 'cart' AND SeverityNumber >= 9",
};

static void *client_main(void *arg)
{
    client *c = arg;
    qr_sql_session s;
    qr_sql_session_init(&s, c->db);
    s.set.threads = 1 + c->id % 2;
    for (int i = 0; i < 60; i++) {
        int q = (i + c->id) % 3;
        qr_qctx ctx;
        qr_sql_ctx_init(&s, &ctx, NULL);
        qr_result r;
        qr_result_init(&r, &ctx);
        qr_err e;
        if (qr_sql_exec(&s, mix[q], strlen(mix[q]), &r, &e) != 0 || r.nrows != 1 ||
            qr_result_row(&r, 0)[0].i != c->want[q])
            c->mismatches++;
        qr_result_free(&r);
    }
    qr_sql_close(&s); /* not its database: that stays open */
    return NULL;
}

/* Four sessions at once on one database give one session's answers. */
/* Rows of the oracle's segments matching search query `text`, by brute force. */
static int64_t brute_count(const char *text)
{
    qr_arena a;
    qr_arena_init(&a, 1 << 12, 0);
    qr_query *q = oracle_parse(text, &a);
    int64_t n = 0;
    for (int s = 0; s < NSEG; s++)
        for (uint32_t r = 0; r < od.nrows[s]; r++)
            n += oracle(&od.rows[s][r], q);
    qr_arena_free(&a);
    return n;
}

/* Warming a database (a server's start): a set stop flag opens nothing;
 * then every committed segment of every table and each of its index
 * fields is opened, and answers stay the same; a table with a damaged
 * segment stops it with XX001 naming the file, after the tables before
 * it. */
static void test_sql_db_warm(void **st)
{
    (void)st;
    qr_err e;
    qr_sql_db *db = qr_sql_db_open(datadir, 2, &e);
    if (!db)
        fail_msg("db: %s", e.msg);
    uint32_t segs = 99;
    uint64_t fields = 99;
    atomic_int stop = 1;
    assert_int_equal(qr_sql_db_warm(db, &stop, &segs, &fields, &e), 0);
    assert_int_equal(segs, 0);
    assert_int_equal(fields, 0);
    atomic_store(&stop, 0);
    assert_int_equal(qr_sql_db_warm(db, &stop, &segs, &fields, &e), 0);
    assert_int_equal(segs, NSEG); /* logs; the table "later" has none */
    assert_int_equal(fields, (uint64_t)NSEG * tu_otel()->nixs);
    qr_sql_session s;
    qr_sql_session_init(&s, db);
    assert_int_equal(count_of(&s, "SELECT count(*) FROM logs"), (int64_t)rows_of(0, NSEG));
    assert_int_equal(count_of(&s, "SELECT count(*) FROM logs WHERE Body @@ 'failed'"),
                     brute_count("failed"));
    /* a table whose one segment has its trailer cut */
    tu_create_otel_table(datadir, "broken");
    qr_table *w = qr_table_open(datadir, "broken", QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    assert_non_null(w);
    uint64_t id = qr_table_reserve_ids(w, 1);
    char src[PATH_MAX], dst[PATH_MAX];
    snprintf(src, sizeof src, "%s/s0.qseg", od.dir);
    qr_table_seg_path(w, id, dst, sizeof dst);
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
    assert_true(in && out);
    int ch;
    long n = 0;
    while ((ch = fgetc(in)) != EOF && ++n)
        fputc(ch, out);
    fclose(in);
    fclose(out);
    assert_int_equal(truncate(dst, n - 1), 0);
    qr_seg_entry add = {id, od.segs[0]->rows, 0, 0, (uint64_t)n - 1, 0, 0};
    assert_int_equal(qr_table_commit(w, &add, 1, &e), 0);
    qr_table_close(w);
    assert_int_equal(qr_sql_db_warm(db, &stop, &segs, &fields, &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, dst));
    assert_int_equal(segs, NSEG);
    assert_int_equal(count_of(&s, "SELECT count(*) FROM logs"), (int64_t)rows_of(0, NSEG));
    qr_result r;
    qr_qctx ctx;
    qr_sql_ctx_init(&s, &ctx, NULL);
    qr_result_init(&r, &ctx);
    assert_int_equal(qr_sql_exec(&s, "DROP TABLE broken", 17, &r, &e), 0);
    qr_result_free(&r);
    qr_sql_close(&s);
    qr_sql_db_close(db);
}

static void test_sql_sessions_run_at_once(void **st)
{
    (void)st;
    qr_err e;
    qr_sql_db *db = qr_sql_db_open(datadir, 2, &e);
    if (!db)
        fail_msg("db: %s", e.msg);
    qr_sql_session one;
    qr_sql_session_init(&one, db);
    client c[4];
    for (int q = 0; q < 3; q++)
        c[0].want[q] = count_of(&one, mix[q]);
    assert_true(c[0].want[0] > 1000);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        c[i] = (client){db, i, {c[0].want[0], c[0].want[1], c[0].want[2]}, 0};
        assert_int_equal(pthread_create(&th[i], NULL, client_main, &c[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(c[i].mismatches, 0);
    }
    qr_sql_close(&one);
    qr_sql_db_close(db);
    tu_rmdir(datadir);
}

static void test_sql_split_statements(void **st)
{
    (void)st;
    const char *t = "SELECT 1; SELECT ';' FROM x -- a ; in a comment\n;  ;\n SELECT 3";
    qr_sql_span *sp;
    uint32_t n;
    qr_err e;
    assert_int_equal(qr_sql_split(t, strlen(t), &sp, &n, &e), 0);
    assert_int_equal(n, 3);
    char buf[3][64];
    for (uint32_t i = 0; i < n; i++)
        snprintf(buf[i], sizeof buf[i], "%.*s", (int)sp[i].len, t + sp[i].off);
    assert_string_equal(buf[0], "SELECT 1");
    assert_string_equal(buf[1], " SELECT ';' FROM x -- a ; in a comment\n");
    assert_string_equal(buf[2], "\n SELECT 3");
    free(sp);
    assert_int_equal(qr_sql_split("  ", 2, &sp, &n, &e), 0);
    assert_int_equal(n, 0);
    free(sp);
    /* an unterminated string: one statement, whose parse reports it */
    assert_int_equal(qr_sql_split("SELECT 'a; b", 12, &sp, &n, &e), 0);
    assert_int_equal(n, 1);
    assert_int_equal(sp[0].len, 12);
    free(sp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sql_sees_the_latest_manifest),
        cmocka_unit_test(test_sql_limits_and_cancel),
        cmocka_unit_test(test_sql_db_warm),
        cmocka_unit_test(test_sql_sessions_run_at_once),
        cmocka_unit_test(test_sql_split_statements),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
