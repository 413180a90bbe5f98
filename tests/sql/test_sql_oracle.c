/* test_sql_oracle.c - SQL answers against independent oracles, on the
 * search oracle's 100k generated rows (tests/search/oracle.h) registered as
 * table "logs" of a data directory:
 *   - WHERE clauses in the full-text dialect give exactly the counts of the
 *     brute-force per-row matcher run on the equivalent `quarry search`
 *     tree, and the same top-k rows and BM25 scores as qr_par_topk on it;
 *   - GROUP BY answers equal SQLite's on the same rows (loaded from the
 *     oracle's independent read-back);
 *   - newest-k equals a brute-force sort of the matching rows. */
#include "search/oracle.h"

#include <limits.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <time.h>

#include "exec/render.h"
#include "index/table.h"
#include "search/topk.h"
#include "sql/sql.h"
#include "sqlite_csv.h"

ORACLE_FIXTURE

static char *datadir;
static qr_sql_session sess;
static sqlite3 *db;

/* The oracle's segments as table logs of a fresh data directory (hard
 * links: the same files). */
static void make_datadir(void)
{
    qr_err e;
    datadir = tu_tmpdir();
    assert_non_null(datadir);
    tu_create_otel_table(datadir, "logs");
    qr_table *w = qr_table_open(datadir, "logs", QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    if (!w)
        fail_msg("open: %s", e.msg);
    uint64_t id = qr_table_reserve_ids(w, NSEG);
    qr_seg_entry add[NSEG];
    for (int s = 0; s < NSEG; s++) {
        char from[PATH_MAX], to[PATH_MAX];
        snprintf(from, sizeof from, "%s/s%d.qseg", od.dir, s);
        qr_table_seg_path(w, id + (uint64_t)s, to, sizeof to);
        assert_int_equal(link(from, to), 0);
        struct stat sb;
        assert_int_equal(stat(to, &sb), 0);
        add[s] = (qr_seg_entry){id + (uint64_t)s, od.segs[s]->rows, 0, 0, (uint64_t)sb.st_size, 0, 0};
    }
    if (qr_table_commit(w, add, NSEG, &e) != 0)
        fail_msg("commit: %s", e.msg);
    qr_table_close(w);
}

static void load_sqlite(void)
{
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE logs(ServiceName TEXT, SeverityText TEXT, "
                                  "ScopeName TEXT, SeverityNumber INTEGER, Timestamp INTEGER, TraceId TEXT)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_stmt *ins;
    assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO logs VALUES (?,?,?,?,?,?)", -1, &ins, NULL),
                     SQLITE_OK);
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    for (int s = 0; s < NSEG; s++)
        for (uint32_t r = 0; r < od.nrows[s]; r++) {
            const orow *o = &od.rows[s][r];
            const char *txt[3] = {o->service, o->severity, o->scope};
            for (int k = 0; k < 3; k++)
                txt[k] ? sqlite3_bind_text(ins, k + 1, txt[k], -1, SQLITE_STATIC)
                       : sqlite3_bind_null(ins, k + 1);
            o->sevnum_null ? sqlite3_bind_null(ins, 4) : sqlite3_bind_int64(ins, 4, o->sevnum);
            o->ts_null ? sqlite3_bind_null(ins, 5) : sqlite3_bind_int64(ins, 5, o->ts);
            o->trace ? sqlite3_bind_text(ins, 6, o->trace, -1, SQLITE_STATIC)
                     : sqlite3_bind_null(ins, 6);
            assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
            sqlite3_reset(ins);
        }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_finalize(ins);
}

static int group_setup(void **st)
{
    setup(st);
    make_datadir();
    load_sqlite();
    qr_err e;
    if (qr_sql_open(&sess, datadir, 2, &e) != 0)
        fail_msg("session: %s", e.msg);
    return 0;
}

static int group_teardown(void **st)
{
    qr_sql_close(&sess);
    sqlite3_close(db);
    tu_rmdir(datadir);
    return teardown(st);
}

/* Run sql into r (a fresh result under ctx); the statement must succeed. */
static void run(const char *sql, qr_qctx *ctx, qr_result *r)
{
    qr_err e;
    qr_qctx_init(ctx, QR_QCTX_DEFAULT_LIMIT);
    qr_result_init(r, ctx);
    if (qr_sql_exec(&sess, sql, strlen(sql), r, &e) != 0)
        fail_msg("%s: %s %s", sql, e.code, e.msg);
}

/* A SET (or RESET) statement that must succeed. */
static void run_set(const char *sql)
{
    qr_qctx ctx;
    qr_result r;
    run(sql, &ctx, &r);
    qr_result_free(&r);
}

/* Under setting `set`, sql must fail with code; RESET ALL after. The
 * statement starts 5 ms after its context (a statement timeout of 1 ms has
 * passed by its first check). */
static void run_fails(const char *set, const char *sql, const char *code)
{
    run_set(set);
    qr_qctx ctx;
    qr_err e;
    qr_sql_ctx_init(&sess, &ctx, NULL);
    nanosleep(&(struct timespec){0, 5000000}, NULL);
    qr_result r;
    qr_result_init(&r, &ctx);
    int rc = qr_sql_exec(&sess, sql, strlen(sql), &r, &e);
    qr_result_free(&r);
    assert_int_equal(ctx.used, 0);
    if (rc == 0 || strcmp(e.code, code) != 0)
        fail_msg("%s under %s: %s, expected %s", sql, set, rc == 0 ? "succeeded" : e.code, code);
    run_set("RESET ALL");
}

static uint64_t sql_count(const char *where)
{
    char sql[2048];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM logs WHERE %s", where);
    qr_qctx ctx;
    qr_result r;
    run(sql, &ctx, &r);
    assert_int_equal(r.nrows, 1);
    uint64_t n = (uint64_t)qr_result_row(&r, 0)[0].i;
    qr_result_free(&r);
    assert_int_equal(ctx.used, 0); /* everything given back */
    return n;
}

static uint64_t oracle_count(const char *search)
{
    qr_arena a;
    qr_arena_init(&a, 1 << 12, 0);
    qr_query *q = oracle_parse(search, &a);
    regex_t *res[16];
    int nre = 0;
    oracle_collect_regexes(q, res, &nre);
    uint64_t n = 0;
    for (int s = 0; s < NSEG; s++)
        for (uint32_t r = 0; r < od.nrows[s]; r++) {
            int ri = 0;
            n += (uint64_t)oracle_full(&od.rows[s][r], q, res, &ri);
        }
    oracle_free_regexes(res, nre);
    qr_arena_free(&a);
    return n;
}

/* SQL WHERE clause and the equivalent quarry search query. */
static const char *pairs[][2] = {
    {"Body @@ 'failed'", "failed"},
    {"body @@ 'FAILED'", "failed"},
    {"\"Body\" @@ 'cache'", "cache"},
    {"ts_split_by_non_alpha(Body, true) @@ 'order'", "order"},
    {"Body @@ ts_all(['failed', 'order'])", "failed AND order"},
    {"Body @@ ts_all(ARRAY['failed', 'order'])", "failed AND order"},
    {"Body @@ ts_any(['error', 'cache'])", "error OR cache"},
    {"Body @@ ts_any(['error', 'failed', 'charge', 'cache'], 2)",
     "atleast(2, error, failed, charge, cache)"},
    {"Body @@ ts_phrase('failed', 'to', 'place', 'order')", "\"failed to place order\""},
    {"Body @@ ts_phrase('failed') ## 2 ## 'order'", "\"failed ? ? order\""},
    {"Body @@ 'send_order'", "send_order"},
    {"logs @@@ 'failed AND order -cache'", "failed AND order -cache"},
    {"Body @@@ '(service:cart OR /c.che/) sevnum:>=9'", "(service:cart OR /c.che/) sevnum:>=9"},
    {"Body @@ ts_regexp('c.che')", "/c.che/"},
    {"Body @@ ts_starts_with('ord')", "ord*"},
    {"Body @@ ts_like('%tion')", "like:%tion"},
    {"Body @@ ts_levenshtein('cahce', 1)", "cahce~1"},
    {"Body @@ ts_levenshtein('cahce', 2)", "cahce~2"},
    {"ServiceName = 'cart'", "service:cart"},
    {"ServiceName IN ('cart', 'payment')", "service:cart OR service:payment"},
    {"ServiceName NOT IN ('cart', 'payment')", "NOT (service:cart OR service:payment)"},
    {"SeverityText = 'ERROR' AND Body @@ 'failed'", "severity:ERROR failed"},
    {"SeverityNumber >= 13", "sevnum:>=13"},
    {"SeverityNumber > 13", "sevnum:>=14"},
    {"SeverityNumber >= '13'", "sevnum:>=13"}, /* an unknown-typed literal takes the column's type */
    {"SeverityNumber < 9", "sevnum:<9"},
    {"SeverityNumber BETWEEN 9 AND 17", "sevnum:[9 TO 17]"},
    {"SeverityNumber NOT BETWEEN 9 AND 17", "NOT sevnum:[9 TO 17]"},
    {"SeverityNumber <> 9", "NOT sevnum:9"},
    {"Body @@ 'error' AND NOT Body @@ 'cache'", "error -cache"},
    {"NOT Body @@ 'failed'", "NOT failed"},
    {"(Body @@ 'failed' OR ServiceName = 'cart') AND SeverityNumber >= 9",
     "(failed OR service:cart) AND sevnum:>=9"},
    {"Timestamp BETWEEN TIMESTAMP '2025-09-23 00:00:00' AND TIMESTAMP '2025-09-23 00:00:00.05'",
     "time:[2025-09-23T00:00:00Z TO 2025-09-23T00:00:00.05Z]"},
    {"Timestamp >= '2025-09-23T00:00:00.1Z'::TIMESTAMP_NS AND Body @@ 'failed'",
     "time:>=2025-09-23T00:00:00.1Z failed"},
};

static void test_sql_counts_equal_the_oracle(void **st)
{
    (void)st;
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        uint64_t got = sql_count(pairs[i][0]), want = oracle_count(pairs[i][1]);
        /* SQL's NOT of a comparison leaves out the rows where the column is
         * NULL (NULL <> v is NULL); the search's NOT keeps them */
        int svc = strstr(pairs[i][0], "ServiceName NOT IN") != NULL;
        int sev = strstr(pairs[i][0], "SeverityNumber NOT BETWEEN") ||
                  strstr(pairs[i][0], "SeverityNumber <>");
        for (int sg = 0; (svc || sev) && sg < NSEG; sg++)
            for (uint32_t r = 0; r < od.nrows[sg]; r++)
                want -= (uint64_t)((svc && !od.rows[sg][r].service) ||
                                   (sev && od.rows[sg][r].sevnum_null));
        if (got != want)
            fail_msg("%s: sql %llu, oracle (%s) %llu", pairs[i][0], (unsigned long long)got,
                     pairs[i][1], (unsigned long long)want);
    }
    assert_true(sql_count("Body @@ 'failed'") > 1000); /* the data exercises it */
}

/* ORDER BY bm25 DESC LIMIT k: the rows and scores of qr_par_topk on the
 * search tree, in order. */
static void test_sql_topk_equals_search(void **st)
{
    (void)st;
    static const char *q[][2] = {
        {"Body @@ 'failed'", "failed"},
        {"Body @@ ts_any(['error', 'cache', 'order'])", "error OR cache OR order"},
        {"Body @@ ts_phrase('failed') ## 2 ## 'order'", "\"failed ? ? order\""},
        {"Body @@ ts_all(['failed','order']) AND ServiceName = 'checkout'",
         "failed order service:checkout"}};
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
        char sql[1024];
        snprintf(sql, sizeof sql,
                 "SELECT Timestamp, bm25(), ServiceName FROM logs t WHERE %s ORDER BY "
                 "BM25(t.tableoid) DESC LIMIT 40 OFFSET 5",
                 q[i][0]);
        qr_qctx ctx;
        qr_result r;
        run(sql, &ctx, &r);
        qr_arena a;
        qr_arena_init(&a, 1 << 12, 0);
        qr_query *tree = oracle_parse(q[i][1], &a);
        qr_par_search ps;
        qr_err e;
        assert_int_equal(qr_par_init_tree(&ps, NULL, tu_otel(), od.segs, NSEG, tree, 1, &e), 0);
        qr_hit hits[45];
        uint32_t n = 0;
        assert_int_equal(qr_par_topk(&ps, QR_BY_SCORE, 45, 1, hits, &n, NULL, &e), 0);
        assert_true(n > 5);
        assert_int_equal(r.nrows, n - 5);
        for (uint32_t k = 5; k < n; k++) {
            const qr_cell *row = qr_result_row(&r, k - 5);
            const orow *o = &od.rows[hits[k].seg][hits[k].doc];
            assert_true(row[1].f == hits[k].score); /* bit for bit */
            assert_int_equal(row[0].null, o->ts_null);
            if (!o->ts_null)
                assert_int_equal(row[0].i, o->ts);
            assert_int_equal(row[2].null, o->service == NULL);
            if (o->service)
                assert_memory_equal(row[2].s, o->service, strlen(o->service));
        }
        qr_par_free(&ps);
        qr_arena_free(&a);
        qr_result_free(&r);
    }
}

/* ORDER BY Timestamp DESC LIMIT k: the k newest matching rows by brute force. */
static int cmp_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x > y ? -1 : x < y;
}

static void test_sql_newest_equals_brute_force(void **st)
{
    (void)st;
    qr_qctx ctx;
    qr_result r;
    run("SELECT Timestamp, SeverityNumber FROM logs WHERE Body @@ 'failed' AND SeverityNumber >= "
        "13 ORDER BY Timestamp DESC LIMIT 25",
        &ctx, &r);
    qr_arena a;
    qr_arena_init(&a, 1 << 12, 0);
    qr_query *q = oracle_parse("failed sevnum:>=13", &a);
    int64_t *ts = malloc(sizeof *ts * NSEG * (ROWS_PER_SEG + 10));
    size_t n = 0;
    for (int s = 0; s < NSEG; s++)
        for (uint32_t k = 0; k < od.nrows[s]; k++)
            if (oracle(&od.rows[s][k], q))
                ts[n++] = od.rows[s][k].ts;
    qsort(ts, n, sizeof *ts, cmp_desc);
    assert_int_equal(r.nrows, 25);
    for (uint64_t i = 0; i < r.nrows; i++) {
        assert_int_equal(qr_result_row(&r, i)[0].i, ts[i]);
        assert_true(qr_result_row(&r, i)[1].i >= 13);
    }
    free(ts);
    qr_arena_free(&a);
    qr_result_free(&r);
}

/* A GROUP BY answer rendered as CSV (no header) and SQLite's answer to the
 * same statement written out the same way must be equal. */
static void sqlite_csv(const char *sql, qr_buf *out) { sqlite_csv_of(db, sql, out); }

static void test_sql_group_by_equals_sqlite(void **st)
{
    (void)st;
    /* {quarry, sqlite}: the same question; ORDER BY makes both orders total */
    static const char *q[][2] = {
        {"SELECT ServiceName, count(*) FROM logs GROUP BY ServiceName ORDER BY ServiceName",
         "SELECT ServiceName, count(*) FROM logs GROUP BY ServiceName ORDER BY ServiceName IS "
         "NULL, ServiceName"},
        {"SELECT severitytext, count(*) AS n FROM logs GROUP BY SeverityText ORDER BY n DESC, 1",
         "SELECT SeverityText, count(*) AS n FROM logs GROUP BY SeverityText ORDER BY n DESC, "
         "SeverityText IS NULL, 1"},
        {"SELECT ScopeName, count(*), min(SeverityNumber), max(SeverityNumber), "
         "sum(SeverityNumber), count(SeverityNumber) FROM logs GROUP BY ScopeName ORDER BY "
         "count(*) DESC, ScopeName LIMIT 7",
         "SELECT ScopeName, count(*), min(SeverityNumber), max(SeverityNumber), "
         "sum(SeverityNumber), count(SeverityNumber) FROM logs GROUP BY ScopeName ORDER BY "
         "count(*) DESC, ScopeName IS NULL, ScopeName LIMIT 7"},
        {"SELECT ServiceName, SeverityText, count(*), avg(SeverityNumber) FROM logs WHERE "
         "SeverityNumber >= 9 AND ServiceName IN ('cart', 'payment', 'checkout') GROUP BY "
         "ServiceName, SeverityText ORDER BY ServiceName, SeverityText",
         "SELECT ServiceName, SeverityText, count(*), avg(SeverityNumber) FROM logs WHERE "
         "SeverityNumber >= 9 AND ServiceName IN ('cart', 'payment', 'checkout') GROUP BY "
         "ServiceName, SeverityText ORDER BY ServiceName, SeverityText IS NULL, SeverityText"},
        /* two keys, counts only: every row's codes (four histograms), and a
         * filter's matches */
        {"SELECT SeverityText, ScopeName, count(*) FROM logs GROUP BY 1, 2 ORDER BY 1, 2",
         "SELECT SeverityText, ScopeName, count(*) FROM logs GROUP BY 1, 2 ORDER BY SeverityText "
         "IS NULL, 1, ScopeName IS NULL, 2"},
        {"SELECT ScopeName, ServiceName, count(*) FROM logs WHERE SeverityNumber >= 13 GROUP BY "
         "1, 2 ORDER BY 1, 2",
         "SELECT ScopeName, ServiceName, count(*) FROM logs WHERE SeverityNumber >= 13 GROUP BY "
         "1, 2 ORDER BY ScopeName IS NULL, 1, ServiceName IS NULL, 2"},
        {"SELECT SeverityNumber, count(*) FROM logs GROUP BY SeverityNumber ORDER BY count(*) "
         "DESC, SeverityNumber LIMIT 3 OFFSET 1",
         "SELECT SeverityNumber, count(*) FROM logs GROUP BY SeverityNumber ORDER BY count(*) "
         "DESC, SeverityNumber IS NULL, SeverityNumber LIMIT 3 OFFSET 1"},
        /* ORDER BY ... LIMIT of many groups (a bounded heap, not a sort of
         * every group): rows tied on the ORDER BY keys come in the groups'
         * key order, as after a sort of all */
        {"SELECT TraceId, count(*) AS n FROM logs GROUP BY TraceId ORDER BY n DESC LIMIT 10",
         "SELECT TraceId, count(*) AS n FROM logs GROUP BY TraceId ORDER BY n DESC, TraceId IS "
         "NULL, TraceId LIMIT 10"},
        {"SELECT ServiceName, TraceId, count(*) FROM logs GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 5 "
         "OFFSET 3",
         "SELECT ServiceName, TraceId, count(*) FROM logs GROUP BY 1, 2 ORDER BY 3 DESC, "
         "ServiceName IS NULL, ServiceName, TraceId IS NULL, TraceId LIMIT 5 OFFSET 3"},
        {"SELECT TraceId, count(*) FROM logs GROUP BY TraceId HAVING count(*) >= 2 ORDER BY 2 "
         "LIMIT 4",
         "SELECT TraceId, count(*) FROM logs GROUP BY TraceId HAVING count(*) >= 2 ORDER BY 2, "
         "TraceId IS NULL, TraceId LIMIT 4"},
        {"SELECT TraceId FROM logs GROUP BY TraceId ORDER BY max(SeverityNumber) DESC LIMIT 6",
         "SELECT TraceId FROM logs GROUP BY TraceId ORDER BY max(SeverityNumber) DESC, TraceId IS "
         "NULL, TraceId LIMIT 6"},
        {"SELECT count(*), min(Timestamp), max(Timestamp), sum(SeverityNumber) FROM logs WHERE "
         "SeverityNumber BETWEEN 1 AND 12",
         "SELECT count(*), min(Timestamp), max(Timestamp), sum(SeverityNumber) FROM logs WHERE "
         "SeverityNumber BETWEEN 1 AND 12"},
        {"SELECT min(SeverityNumber), count(SeverityNumber) FROM logs WHERE ServiceName = 'nope'",
         "SELECT min(SeverityNumber), count(SeverityNumber) FROM logs WHERE ServiceName = 'nope'"},
    };
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
        qr_qctx ctx;
        qr_result r;
        run(q[i][0], &ctx, &r);
        /* timestamps as ns integers, like the SQLite table */
        for (uint32_t c = 0; c < r.ncols; c++)
            if (r.cols[c].type == QT_TIMESTAMP)
                r.cols[c].type = QT_INT64;
        qr_buf got, want;
        qr_buf_init(&got);
        qr_buf_init(&want);
        qr_result_render(&r, QR_FMT_CSV, &got);
        const char *body = memchr(got.p, '\n', got.len) + 1; /* past the header */
        sqlite_csv(q[i][1], &want);
        qr_buf_put_u8(&want, 0);
        if (strlen((const char *)want.p) != got.len - (size_t)(body - (const char *)got.p) ||
            memcmp(body, want.p, strlen((const char *)want.p)))
            fail_msg("%s\nquarry:\n%.*s\nsqlite:\n%s", q[i][0],
                     (int)(got.len - (size_t)(body - (const char *)got.p)), body, want.p);
        assert_true(r.nrows > 0);
        qr_buf_free(&got);
        qr_buf_free(&want);
        qr_result_free(&r);
        assert_int_equal(ctx.used, 0);
    }
}

/* GROUP BY over full-text matches: counts per group add up to the oracle's
 * count of the same filter, and each group's count is the oracle's. */
static void test_sql_group_by_fulltext_equals_oracle(void **st)
{
    (void)st;
    qr_qctx ctx;
    qr_result r;
    run("SELECT ServiceName, count(*) FROM logs WHERE Body @@ 'failed' GROUP BY ServiceName", &ctx,
        &r);
    assert_true(r.nrows > 1);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < r.nrows; i++) {
        const qr_cell *row = qr_result_row(&r, i);
        char q[256];
        sum += (uint64_t)row[1].i;
        if (row[0].null)
            continue; /* the rows without a ServiceName: counted in the sum */
        snprintf(q, sizeof q, "failed service:\"%.*s\"", (int)row[0].n, row[0].s);
        assert_int_equal((uint64_t)row[1].i, oracle_count(q));
    }
    assert_int_equal(sum, oracle_count("failed"));
    qr_result_free(&r);
}

/* One row of a result as text: cells joined by '|', NULL as "NULL", FLOAT
 * with 6 decimals. */
static void row_text(const qr_result *r, uint64_t i, char *out, size_t n)
{
    size_t w = 0;
    out[0] = 0;
    for (uint32_t c = 0; c < r->ncols && w + 1 < n; c++) {
        const qr_cell *v = &qr_result_row(r, i)[c];
        if (v->null)
            w += (size_t)snprintf(out + w, n - w, "%sNULL", c ? "|" : "");
        else if (r->cols[c].kind == QR_RK_FLOAT)
            w += (size_t)snprintf(out + w, n - w, "%s%.6f", c ? "|" : "", v->f);
        else if (r->cols[c].kind == QR_RK_INT)
            w += (size_t)snprintf(out + w, n - w, "%s%lld", c ? "|" : "", (long long)v->i);
        else
            w += (size_t)snprintf(out + w, n - w, "%s%.*s", c ? "|" : "", (int)v->n, v->s);
    }
}

static void sqlite_row_text(sqlite3_stmt *q, char *out, size_t n)
{
    size_t w = 0;
    out[0] = 0;
    for (int c = 0; c < sqlite3_column_count(q) && w + 1 < n; c++) {
        int t = sqlite3_column_type(q, c);
        if (t == SQLITE_NULL)
            w += (size_t)snprintf(out + w, n - w, "%sNULL", c ? "|" : "");
        else if (t == SQLITE_FLOAT)
            w += (size_t)snprintf(out + w, n - w, "%s%.6f", c ? "|" : "",
                                  sqlite3_column_double(q, c));
        else
            w += (size_t)snprintf(out + w, n - w, "%s%s", c ? "|" : "",
                                  (const char *)sqlite3_column_text(q, c));
    }
}

/* q's rows must equal SQLite's answer to lite (q itself when NULL), row for
 * row, and there must be some; the statement's memory all given back. */
static void same_rows(const char *q, const char *lite)
{
    qr_qctx ctx;
    qr_result r;
    run(q, &ctx, &r);
    sqlite3_stmt *sq;
    lite = lite ? lite : q;
    if (sqlite3_prepare_v2(db, lite, -1, &sq, NULL) != SQLITE_OK)
        fail_msg("sqlite: %s: %s", lite, sqlite3_errmsg(db));
    uint64_t row = 0;
    char a[512], b[512];
    while (sqlite3_step(sq) == SQLITE_ROW) {
        if (row >= r.nrows)
            fail_msg("%s: quarry has %llu rows, sqlite more", q, (unsigned long long)r.nrows);
        row_text(&r, row, a, sizeof a);
        sqlite_row_text(sq, b, sizeof b);
        if (strcmp(a, b))
            fail_msg("%s: row %llu: quarry %s, sqlite %s", q, (unsigned long long)row, a, b);
        row++;
    }
    if (row != r.nrows || row == 0)
        fail_msg("%s: quarry %llu rows, sqlite %llu", q, (unsigned long long)r.nrows,
                 (unsigned long long)row);
    if (getenv("QUARRY_TEST_SHOW")) /* to see what a query exercises */
        for (uint64_t i = 0; i < r.nrows && i < 8; i++) {
            row_text(&r, i, a, sizeof a);
            fprintf(stderr, "  %s\n", a);
        }
    sqlite3_finalize(sq);
    qr_result_free(&r);
    assert_int_equal(ctx.used, 0);
}

/* Expressions, residual filters, GROUP BY on expressions, HAVING,
 * DISTINCT, ORDER BY any keys: every row equal to SQLite's answer. */
static void test_sql_expressions_equal_sqlite(void **st)
{
    (void)st;
    static const char *q[][2] = {
        {"SELECT count(*) FROM logs WHERE SeverityNumber * 2 > 20", NULL},
        {"SELECT count(*) FROM logs WHERE SeverityText IS NULL", NULL},
        {"SELECT count(*), count(*) FROM logs WHERE ScopeName LIKE '%a%'", NULL},
        {"SELECT count(*) FROM logs WHERE lower(ServiceName) IN ('cart', 'ad', 'nope')", NULL},
        {"SELECT count(*) FROM logs WHERE ServiceName IS NOT NULL AND ScopeName LIKE '%a%'", NULL},
        {"SELECT ServiceName, count(*) FROM logs WHERE ServiceName LIKE 'c%' GROUP BY ServiceName "
         "ORDER BY ServiceName",
         NULL},
        {"SELECT ServiceName, count(*) FROM logs WHERE ServiceName IS NOT NULL GROUP BY ServiceName "
         "HAVING count(*) > 1000 ORDER BY 2 DESC, 1",
         NULL},
        {"SELECT DISTINCT SeverityText FROM logs WHERE SeverityText IS NOT NULL ORDER BY 1", NULL},
        {"SELECT SeverityNumber / 4 AS b, count(*), sum(SeverityNumber * 2), min(SeverityNumber - 1), "
         "max(SeverityNumber) FROM logs WHERE SeverityNumber IS NOT NULL GROUP BY 1 ORDER BY 1",
         NULL},
        {"SELECT CASE WHEN SeverityNumber >= 17 THEN 'error' WHEN SeverityNumber >= 9 THEN 'info' "
         "ELSE 'debug' END AS c, count(*) FROM logs GROUP BY 1 ORDER BY 1",
         NULL},
        {"SELECT lower(SeverityText), length(ServiceName), count(*) FROM logs WHERE SeverityText IS "
         "NOT NULL AND ServiceName IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2",
         NULL},
        {"SELECT coalesce(SeverityText, 'none') AS s, count(*) FROM logs GROUP BY 1 ORDER BY 1", NULL},
        {"SELECT ServiceName, SeverityNumber FROM logs WHERE ScopeName LIKE '%a%' AND "
         "SeverityNumber IS NOT NULL AND ServiceName IS NOT NULL ORDER BY SeverityNumber DESC, "
         "ServiceName LIMIT 20 OFFSET 3",
         NULL},
        {"SELECT date_trunc('millisecond', Timestamp) AS m, count(*), avg(SeverityNumber) FROM logs "
         "WHERE Timestamp IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10",
         "SELECT (Timestamp / 1000000) * 1000000 AS m, count(*), avg(SeverityNumber) FROM logs "
         "WHERE Timestamp IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10"},
        {"SELECT SeverityNumber % 3 = 1 OR ServiceName IN ('cart', 'ad') AS x, count(*) FROM logs "
         "WHERE SeverityNumber IS NOT NULL AND ServiceName IS NOT NULL GROUP BY 1 ORDER BY 1",
         NULL},
        {"SELECT substr(ServiceName, 2, 3) AS s, count(*) FROM logs WHERE ServiceName NOT LIKE "
         "'%t%' GROUP BY 1 ORDER BY 1",
         NULL},
        {"SELECT 1 + 2 * 3, 7 / 2, 7 % 3, 'a' || 'b', coalesce(NULL, 5)", NULL},
        /* subqueries in FROM, WITH */
        {"SELECT s, n FROM (SELECT ServiceName AS s, count(*) AS n FROM logs WHERE ServiceName IS "
         "NOT NULL GROUP BY 1) t WHERE n > 1000 ORDER BY n DESC, s",
         NULL},
        {"WITH f AS (SELECT TraceId FROM logs WHERE ServiceName = 'checkout' AND TraceId <> '') "
         "SELECT count(*), count(DISTINCT l.ServiceName) FROM logs l JOIN f ON l.TraceId = "
         "f.TraceId",
         NULL},
        {"SELECT avg(c), max(c), count(*) FROM (SELECT TraceId, count(*) AS c FROM logs WHERE "
         "TraceId <> '' GROUP BY 1) x",
         NULL},
        {"SELECT t.k, count(*) FROM (SELECT SeverityNumber / 4 AS k FROM logs WHERE SeverityNumber "
         "IS NOT NULL) t GROUP BY 1 ORDER BY 1",
         NULL},
        /* IN (SELECT ...): a semi join */
        {"SELECT ServiceName, count(*) FROM logs WHERE TraceId IN (SELECT TraceId FROM logs WHERE "
         "ServiceName = 'checkout' AND TraceId <> '') AND ServiceName IS NOT NULL GROUP BY 1 ORDER "
         "BY 2 DESC, 1",
         NULL},
        {"SELECT count(*) FROM logs WHERE SeverityNumber >= 13 AND ServiceName IN (SELECT "
         "ServiceName FROM logs WHERE SeverityText = 'ERROR')",
         NULL},
        /* UNION ALL, UNION */
        {"SELECT ServiceName, count(*) AS n FROM logs WHERE SeverityText = 'ERROR' AND ServiceName "
         "IS NOT NULL GROUP BY 1 UNION ALL SELECT 'zz total', count(*) FROM logs ORDER BY 1",
         NULL},
        {"SELECT ServiceName FROM logs WHERE SeverityText = 'ERROR' AND ServiceName IS NOT NULL "
         "UNION SELECT ScopeName FROM logs WHERE SeverityNumber >= 17 AND ScopeName IS NOT NULL "
         "ORDER BY 1 LIMIT 15",
         NULL},
        /* ORDER BY ... LIMIT over ~100k matches: the best rows kept as they come */
        {"SELECT ServiceName, SeverityNumber, Timestamp FROM logs WHERE SeverityNumber IS NOT NULL "
         "AND Timestamp IS NOT NULL ORDER BY SeverityNumber, Timestamp DESC LIMIT 5 OFFSET 2",
         NULL},
        {"SELECT Timestamp, SeverityNumber % 7 FROM logs WHERE Timestamp IS NOT NULL AND "
         "SeverityNumber IS NOT NULL ORDER BY SeverityNumber % 7 DESC, Timestamp LIMIT 4",
         NULL},
        /* date_trunc of the sort column, count(*): a time-range count per bucket */
        {"SELECT date_trunc('millisecond', Timestamp) AS m, count(*) FROM logs GROUP BY 1 ORDER "
         "BY coalesce(date_trunc('millisecond', Timestamp), TIMESTAMP '1970-01-01')",
         "SELECT (Timestamp / 1000000) * 1000000 AS m, count(*) FROM logs GROUP BY 1 ORDER BY "
         "coalesce(m, 0)"},
        {"SELECT date_trunc('millisecond', Timestamp) AS m, count(*) FROM logs WHERE ServiceName = "
         "'cart' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 7",
         "SELECT (Timestamp / 1000000) * 1000000 AS m, count(*) FROM logs WHERE ServiceName = "
         "'cart' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 7"},
        {"SELECT date_trunc('second', Timestamp) AS m, count(*) FROM logs WHERE SeverityNumber >= "
         "9 GROUP BY 1 ORDER BY coalesce(date_trunc('second', Timestamp), TIMESTAMP "
         "'1970-01-01')",
         "SELECT (Timestamp / 1000000000) * 1000000000 AS m, count(*) FROM logs WHERE "
         "SeverityNumber >= 9 GROUP BY 1 ORDER BY coalesce(m, 0)"},
        {"SELECT date_trunc('hour', Timestamp) AS m, count(*) FROM logs GROUP BY 1 ORDER BY "
         "coalesce(date_trunc('hour', Timestamp), TIMESTAMP '1970-01-01')",
         "SELECT (Timestamp / 3600000000000) * 3600000000000 AS m, count(*) FROM logs GROUP BY 1 "
         "ORDER BY coalesce(m, 0)"},
        /* one keyword key, count(*): a count the index answers per value */
        {"SELECT SeverityText, count(*), count(*) FROM logs WHERE SeverityNumber >= 9 GROUP BY 1 "
         "ORDER BY coalesce(SeverityText, '')",
         NULL},
        {"SELECT ServiceName, count(*) AS n FROM logs GROUP BY 1 HAVING count(*) > 100 ORDER BY n "
         "DESC, coalesce(ServiceName, '')",
         NULL},
        /* dictionary keys without WHERE: the array-by-code paths */
        {"SELECT SeverityText, count(*) FROM logs GROUP BY 1 ORDER BY coalesce(SeverityText, '')",
         NULL},
        {"SELECT ServiceName, SeverityText, count(*) FROM logs GROUP BY 1, 2 ORDER BY "
         "coalesce(ServiceName, ''), coalesce(SeverityText, '')",
         NULL},
        {"SELECT ServiceName, count(*), max(SeverityNumber), sum(SeverityNumber) FROM logs GROUP "
         "BY 1 ORDER BY coalesce(ServiceName, '')",
         NULL},
        /* count(DISTINCT), joins (trace correlation) */
        {"SELECT count(DISTINCT TraceId), count(*) FROM logs WHERE ServiceName = 'cart'", NULL},
        {"SELECT ServiceName, count(DISTINCT SeverityText), count(DISTINCT TraceId) FROM logs "
         "WHERE ServiceName IS NOT NULL GROUP BY 1 ORDER BY 1",
         NULL},
        /* integers, a NULL group, three distinct counts, and a group per
         * trace (many groups, few values each) */
        {"SELECT SeverityText, count(DISTINCT SeverityNumber), count(DISTINCT ServiceName), "
         "count(DISTINCT TraceId) FROM logs GROUP BY 1 ORDER BY coalesce(SeverityText, '')",
         NULL},
        {"SELECT count(*), sum(d), sum(s) FROM (SELECT TraceId, count(DISTINCT ScopeName) AS d, "
         "count(DISTINCT SeverityNumber) AS s FROM logs GROUP BY TraceId) t",
         NULL},
        {"SELECT count(*), count(DISTINCT a.TraceId) FROM logs a JOIN logs b ON a.TraceId = "
         "b.TraceId WHERE a.ServiceName = 'frontend' AND b.ServiceName = 'checkout' AND a.TraceId "
         "<> ''",
         NULL},
        {"SELECT a.ServiceName, count(*) FROM logs a JOIN logs b USING (TraceId) WHERE "
         "b.SeverityText = 'ERROR' AND a.TraceId <> '' AND a.ServiceName IS NOT NULL GROUP BY 1 "
         "ORDER BY 1",
         NULL},
        {"SELECT count(*), count(b.ServiceName) FROM logs a LEFT JOIN logs b ON a.TraceId = "
         "b.TraceId AND b.ServiceName = 'payment' WHERE a.ServiceName = 'checkout' AND "
         "a.TraceId <> ''",
         NULL},
        {"SELECT count(*) FROM logs a, logs b WHERE a.TraceId = b.TraceId AND a.ServiceName = "
         "'cart' AND b.ServiceName = 'ad' AND a.TraceId <> '' AND a.SeverityNumber < "
         "b.SeverityNumber + 5",
         NULL},
        {"SELECT a.Timestamp, b.ServiceName FROM logs a JOIN logs b ON a.TraceId = b.TraceId "
         "WHERE a.ServiceName = 'cart' AND b.ServiceName <> 'cart' AND a.TraceId <> '' AND "
         "b.Timestamp IS NOT NULL ORDER BY a.Timestamp DESC, b.Timestamp LIMIT 10",
         NULL},
        {"SELECT count(*) FROM logs a JOIN logs b ON a.TraceId = b.TraceId JOIN logs c ON "
         "c.TraceId = b.TraceId WHERE a.ServiceName = 'frontend' AND b.ServiceName = 'checkout' "
         "AND c.ServiceName = 'payment' AND a.TraceId <> ''",
         NULL},
    };
    for (size_t i = 0; i < sizeof q / sizeof *q; i++)
        same_rows(q[i][0], q[i][1]);
}

/* The explain text of sql. */
static void explain(const char *sql, char *out, size_t n)
{
    char q[2048];
    snprintf(q, sizeof q, "EXPLAIN %s", sql);
    qr_qctx ctx;
    qr_result r;
    run(q, &ctx, &r);
    size_t w = 0;
    out[0] = 0;
    for (uint64_t i = 0; i < r.nrows && w + 1 < n; i++) {
        const qr_cell *c = &qr_result_row(&r, i)[0];
        w += (size_t)snprintf(out + w, n - w, "%.*s\n", (int)c->n, c->s);
    }
    qr_result_free(&r);
}

/* Join counts the keyword indexes answer (sql/termjoin.c: a merge of the
 * TraceId dictionaries of the 10 segments, traces crossing segments, NULL
 * and empty TraceIds): equal to SQLite's answers, and to the hash join's
 * (SET enable_mergejoin = off); EXPLAIN names the plan each time. */
static void test_sql_merge_joins_equal_sqlite(void **st)
{
    (void)st;
    static const char *q[][2] = {
        {"SELECT count(*), count(DISTINCT a.TraceId) FROM logs a JOIN logs b ON a.TraceId = "
         "b.TraceId WHERE a.ServiceName = 'frontend' AND b.ServiceName = 'checkout' AND a.TraceId "
         "<> ''",
         NULL},
        /* no filter on either side: every pair of rows sharing a TraceId, '' included */
        {"SELECT count(*), count(DISTINCT b.TraceId), count(a.TraceId) FROM logs a JOIN logs b "
         "ON a.TraceId = b.TraceId",
         NULL},
        /* a range filter on one side, the keys written the other way round */
        {"SELECT count(DISTINCT a.TraceId), count(*) FROM logs a JOIN logs b ON b.TraceId = "
         "a.TraceId WHERE b.SeverityNumber BETWEEN 9 AND 13 AND a.ServiceName = 'cart'",
         NULL},
        /* residuals on the key, tested once per key */
        {"SELECT count(*), count(DISTINCT a.TraceId) FROM logs a JOIN logs b ON a.TraceId = "
         "b.TraceId WHERE a.TraceId LIKE 'a%' AND b.SeverityNumber >= 13",
         NULL},
        {"SELECT count(*) FROM logs a JOIN logs b ON a.TraceId = b.TraceId WHERE "
         "substr(a.TraceId, 3, 1) IN ('0', '7') AND b.TraceId > '8' AND b.ServiceName IN ('cart', "
         "'ad', 'frontend')",
         NULL},
        /* the comma form, HAVING, ORDER BY, LIMIT on the one row */
        {"SELECT count(*) AS n FROM logs a, logs b WHERE a.TraceId = b.TraceId AND "
         "a.ServiceName = 'checkout' AND b.ServiceName = 'payment' HAVING count(*) > 10 ORDER BY 1 "
         "LIMIT 1",
         NULL},
        {"SELECT count(*) + 1, count(DISTINCT b.TraceId) * 2 FROM logs a JOIN logs b ON "
         "a.TraceId = b.TraceId WHERE a.SeverityText = 'ERROR' AND b.SeverityNumber >= 9",
         NULL},
        /* a key of few values: dense ones' postings are bitmaps */
        {"SELECT count(*), count(DISTINCT a.ServiceName) FROM logs a JOIN logs b ON "
         "a.ServiceName = b.ServiceName WHERE a.SeverityText = 'ERROR' AND b.SeverityNumber >= 17 "
         "AND b.ServiceName IN ('cart', 'payment')",
         NULL},
        /* nothing matches on one side */
        {"SELECT count(*), count(DISTINCT a.TraceId) FROM logs a JOIN logs b ON a.TraceId = "
         "b.TraceId WHERE a.ServiceName = 'nope'",
         NULL},
        /* GROUP BY a keyword column of either side: rows weighed by their
         * key's rows on the other side */
        {"SELECT a.ServiceName, count(*) FROM logs a JOIN logs b ON a.TraceId = b.TraceId WHERE "
         "b.TraceId <> '' GROUP BY 1 ORDER BY 1",
         NULL},
        {"SELECT b.SeverityText, count(*), count(a.TraceId) FROM logs a JOIN logs b ON a.TraceId "
         "= b.TraceId WHERE a.ServiceName = 'checkout' AND a.TraceId <> '' GROUP BY b.SeverityText "
         "ORDER BY 2 DESC, 1",
         NULL},
        {"SELECT a.ServiceName, count(*) FROM logs a JOIN logs b ON a.TraceId = b.TraceId WHERE "
         "a.TraceId LIKE 'a%' AND b.SeverityNumber >= 13 GROUP BY 1 HAVING count(*) > 2 ORDER BY "
         "1",
         NULL},
        /* few keys join: the grouping side's rows read from their postings,
         * with its filter and without */
        {"SELECT a.ServiceName, count(*) FROM logs a JOIN logs b ON a.TraceId = b.TraceId WHERE "
         "b.TraceId LIKE 'ab%' AND b.SeverityNumber >= 9 GROUP BY 1 ORDER BY 1",
         NULL},
        {"SELECT a.SeverityText, count(*) FROM logs a JOIN logs b ON a.TraceId = b.TraceId WHERE "
         "a.SeverityNumber >= 13 AND a.TraceId <> 'x' AND b.TraceId LIKE 'a0%' GROUP BY 1 ORDER "
         "BY 2 DESC, 1",
         NULL},
    };
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
        char plan[4096];
        explain(q[i][0], plan, sizeof plan);
        if (!strstr(plan, "MergeJoin on 1 equal key"))
            fail_msg("%s: not a merge join:\n%s", q[i][0], plan);
        same_rows(q[i][0], q[i][1]);
        run_set("SET enable_mergejoin = off");
        explain(q[i][0], plan, sizeof plan);
        if (!strstr(plan, "HashJoin"))
            fail_msg("%s: not a hash join with enable_mergejoin off:\n%s", q[i][0], plan);
        same_rows(q[i][0], q[i][1]);
        run_set("RESET enable_mergejoin");
    }
    /* count(DISTINCT key) of one table, by ordinal */
    static const char *d[] = {
        "SELECT count(DISTINCT TraceId), count(TraceId) FROM logs WHERE ServiceName = 'checkout' "
        "AND TraceId <> ''",
        "SELECT count(DISTINCT TraceId) FROM logs",
        "SELECT count(DISTINCT ServiceName) FROM logs WHERE SeverityNumber >= 17",
        "SELECT count(DISTINCT TraceId) FROM logs WHERE TraceId LIKE 'ab%' AND SeverityNumber "
        ">= 13",
    };
    for (size_t i = 0; i < sizeof d / sizeof *d; i++) {
        char plan[4096];
        explain(d[i], plan, sizeof plan);
        if (!strstr(plan, "distinct keys counted by the keyword index"))
            fail_msg("%s: not counted by ordinal:\n%s", d[i], plan);
        same_rows(d[i], NULL);
    }
    /* shapes that are not counts of the keys: by hash */
    static const char *h[] = {
        "SELECT count(DISTINCT a.ServiceName) FROM logs a JOIN logs b ON a.TraceId = b.TraceId",
        "SELECT count(*) FROM logs a JOIN logs b ON a.TraceId = b.TraceId WHERE a.SeverityNumber "
        "< b.SeverityNumber",
        "SELECT count(*) FROM logs a JOIN logs b ON a.TraceId = b.TraceId WHERE a.ServiceName "
        "LIKE 'c%'",
        "SELECT count(*) FROM logs a LEFT JOIN logs b ON a.TraceId = b.TraceId",
        "SELECT a.SeverityNumber, count(*) FROM logs a JOIN logs b ON a.TraceId = b.TraceId GROUP "
        "BY 1",
        "SELECT a.ServiceName, b.ServiceName, count(*) FROM logs a JOIN logs b ON a.TraceId = "
        "b.TraceId GROUP BY 1, 2",
        "SELECT a.ServiceName, count(DISTINCT a.TraceId) FROM logs a JOIN logs b ON a.TraceId = "
        "b.TraceId GROUP BY 1",
        "SELECT count(*) FROM logs a JOIN logs b ON a.ServiceName = b.ServiceName AND a.TraceId = "
        "b.TraceId",
    };
    for (size_t i = 0; i < sizeof h / sizeof *h; i++) {
        char plan[4096];
        explain(h[i], plan, sizeof plan);
        if (strstr(plan, "MergeJoin") || !strstr(plan, "HashJoin"))
            fail_msg("%s: expected a hash join:\n%s", h[i], plan);
    }
    /* the memory limit and the statement timeout stop it; the session goes on */
    const char *all = "SELECT count(*), count(DISTINCT a.TraceId) FROM logs a JOIN logs b ON "
                      "a.TraceId = b.TraceId";
    run_fails("SET memory_limit = '64kB'", all, "53200");
    run_fails("SET statement_timeout = 1", all, "57014");
    same_rows(all, NULL);
    /* and the distinct keys of one table, likewise */
    const char *keys = "SELECT count(DISTINCT TraceId) FROM logs WHERE ServiceName <> 'nope'";
    run_fails("SET memory_limit = '64kB'", keys, "53200");
    run_fails("SET statement_timeout = 1", keys, "57014");
    same_rows(keys, NULL);
}

/* RIGHT and FULL joins: trace self-joins on TraceId (each side's filter in
 * the ON of the side that may take it, in WHERE, or in a subquery), NULL
 * keys, two keys, integer keys, USING, GROUP BY / count(DISTINCT) / ORDER BY
 * / LIMIT on top, an inner or LEFT join before a RIGHT one, and WHERE terms
 * on a null-extended side that must not filter its scan. Every row equal to
 * SQLite 3.40's. SQLite plans `a RIGHT JOIN b` by scanning a whole and
 * probing b, testing a's ON terms only after the probe (seconds per query
 * on these 100k rows): where a is a whole table its answer is asked of the
 * same join written as b LEFT JOIN a (the same rows by definition); its FULL
 * joins of subqueries are nested loops, so those sides are small. */
static void test_sql_outer_joins_equal_sqlite(void **st)
{
    (void)st;
    static const char *q[][2] = {
        /* RIGHT: the ON term on a filters a's scan, the WHERE terms on b b's */
        {"SELECT count(*), count(a.TraceId), count(DISTINCT b.TraceId), count(DISTINCT "
         "a.SeverityText) FROM logs a RIGHT JOIN logs b ON a.TraceId = b.TraceId AND "
         "a.ServiceName = 'frontend' WHERE b.ServiceName = 'checkout' AND b.TraceId <> ''",
         "SELECT count(*), count(a.TraceId), count(DISTINCT b.TraceId), count(DISTINCT "
         "a.SeverityText) FROM logs b LEFT JOIN logs a ON a.TraceId = b.TraceId AND "
         "a.ServiceName = 'frontend' WHERE b.ServiceName = 'checkout' AND b.TraceId <> ''"},
        {"SELECT b.ServiceName, count(*), count(a.TraceId), count(DISTINCT a.ServiceName) FROM "
         "logs a RIGHT JOIN logs b ON a.TraceId = b.TraceId AND a.SeverityText = 'ERROR' WHERE "
         "b.TraceId <> '' AND b.SeverityText <> 'INFO' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5",
         "SELECT b.ServiceName, count(*), count(a.TraceId), count(DISTINCT a.ServiceName) FROM "
         "logs b LEFT JOIN logs a ON a.TraceId = b.TraceId AND a.SeverityText = 'ERROR' WHERE "
         "b.TraceId <> '' AND b.SeverityText <> 'INFO' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5"},
        /* WHERE on the null-extended side: after the join (pushed into a's
         * scan, the IS NULL would keep b rows whose matches it drops) */
        {"SELECT count(*), count(a.ServiceName), count(DISTINCT b.TraceId) FROM logs a RIGHT JOIN "
         "logs b ON a.TraceId = b.TraceId AND a.ServiceName = 'cart' WHERE b.ServiceName = "
         "'checkout' AND b.TraceId <> '' AND (a.SeverityNumber IS NULL OR a.SeverityNumber >= "
         "13)",
         "SELECT count(*), count(a.ServiceName), count(DISTINCT b.TraceId) FROM logs b LEFT JOIN "
         "logs a ON a.TraceId = b.TraceId AND a.ServiceName = 'cart' WHERE b.ServiceName = "
         "'checkout' AND b.TraceId <> '' AND (a.SeverityNumber IS NULL OR a.SeverityNumber >= "
         "13)"},
        {"SELECT count(*), count(a.ServiceName) FROM logs a RIGHT JOIN logs b ON a.TraceId = "
         "b.TraceId AND a.ServiceName = 'cart' AND a.TraceId <> '' WHERE b.ServiceName = "
         "'checkout' AND b.TraceId <> '' AND a.SeverityNumber = b.SeverityNumber",
         "SELECT count(*), count(a.ServiceName) FROM logs b LEFT JOIN logs a ON a.TraceId = "
         "b.TraceId AND a.ServiceName = 'cart' AND a.TraceId <> '' WHERE b.ServiceName = "
         "'checkout' AND b.TraceId <> '' AND a.SeverityNumber = b.SeverityNumber"},
        /* rows, ORDER BY (NULLs placed alike in both), LIMIT */
        {"SELECT b.Timestamp, a.Timestamp, a.SeverityText FROM logs a RIGHT JOIN logs b ON "
         "a.TraceId = b.TraceId AND a.ServiceName = 'payment' WHERE b.ServiceName = 'checkout' "
         "AND b.TraceId <> '' AND b.Timestamp IS NOT NULL ORDER BY b.Timestamp DESC, a.Timestamp "
         "NULLS FIRST LIMIT 12",
         "SELECT b.Timestamp, a.Timestamp, a.SeverityText FROM logs b LEFT JOIN logs a ON "
         "a.TraceId = b.TraceId AND a.ServiceName = 'payment' WHERE b.ServiceName = 'checkout' "
         "AND b.TraceId <> '' AND b.Timestamp IS NOT NULL ORDER BY b.Timestamp DESC, a.Timestamp "
         "NULLS FIRST LIMIT 12"},
        /* two keys */
        {"SELECT count(*), count(a.TraceId), count(DISTINCT b.TraceId) FROM logs a RIGHT JOIN "
         "logs b ON a.TraceId = b.TraceId AND a.SeverityText = b.SeverityText AND a.ServiceName "
         "= 'frontend' WHERE b.ServiceName = 'cart' AND b.TraceId <> ''",
         "SELECT count(*), count(a.TraceId), count(DISTINCT b.TraceId) FROM logs b LEFT JOIN "
         "logs a ON a.TraceId = b.TraceId AND a.SeverityText = b.SeverityText AND a.ServiceName "
         "= 'frontend' WHERE b.ServiceName = 'cart' AND b.TraceId <> ''"},
        /* an inner join's non-key ON term filters before the RIGHT JOIN
         * after it (at the end it would drop c's null-extended rows) */
        {"SELECT count(*), count(a.TraceId), count(DISTINCT c.TraceId) FROM logs a JOIN logs b "
         "ON a.TraceId = b.TraceId AND b.ServiceName = 'checkout' AND b.TraceId <> '' AND "
         "a.SeverityNumber < b.SeverityNumber RIGHT JOIN logs c ON c.TraceId = a.TraceId WHERE "
         "c.ServiceName = 'frontend' AND c.TraceId <> ''",
         "SELECT count(*), count(a.TraceId), count(DISTINCT c.TraceId) FROM logs c LEFT JOIN "
         "(logs a JOIN logs b ON a.TraceId = b.TraceId AND b.ServiceName = 'checkout' AND "
         "b.TraceId <> '' AND a.SeverityNumber < b.SeverityNumber) ON c.TraceId = a.TraceId "
         "WHERE c.ServiceName = 'frontend' AND c.TraceId <> ''"},
        /* a LEFT JOIN's inner side as a RIGHT JOIN's key (NULL when it was
         * null-extended); the RIGHT JOIN's ON term on a filters a's scan */
        {"SELECT count(*), count(a.TraceId), count(b.TraceId), count(DISTINCT c.TraceId) FROM "
         "logs a LEFT JOIN logs b ON a.TraceId = b.TraceId AND b.ServiceName = 'payment' RIGHT "
         "JOIN logs c ON c.TraceId = b.TraceId AND a.ServiceName = 'checkout' WHERE "
         "c.ServiceName = 'email' AND c.TraceId <> ''",
         "SELECT count(*), count(a.TraceId), count(b.TraceId), count(DISTINCT c.TraceId) FROM "
         "logs c LEFT JOIN (logs a LEFT JOIN logs b ON a.TraceId = b.TraceId AND b.ServiceName = "
         "'payment') ON c.TraceId = b.TraceId AND a.ServiceName = 'checkout' WHERE "
         "c.ServiceName = 'email' AND c.TraceId <> ''"},
        /* RIGHT of subqueries, as written (NULL keys on both sides) */
        {"SELECT count(*), count(a.t), count(b.t), count(DISTINCT b.t), sum(a.n) FROM (SELECT "
         "nullif(TraceId, '') AS t, SeverityNumber AS n FROM logs WHERE ServiceName = "
         "'accounting') a RIGHT JOIN (SELECT nullif(TraceId, '') AS t FROM logs WHERE "
         "ServiceName = 'email') b ON a.t = b.t",
         NULL},
        {"SELECT b.SeverityNumber, count(*), count(a.TraceId) FROM (SELECT TraceId FROM logs "
         "WHERE ServiceName = 'fraud-detection' AND TraceId <> '') a RIGHT JOIN (SELECT TraceId, "
         "SeverityNumber FROM logs WHERE ServiceName = 'accounting') b USING (TraceId) GROUP BY 1 "
         "ORDER BY 1 NULLS FIRST",
         NULL},
        /* FULL of two filtered sides (WITH) */
        {"WITH f AS (SELECT TraceId, SeverityNumber FROM logs WHERE ServiceName = 'accounting' "
         "AND TraceId <> ''), c AS (SELECT TraceId, SeverityNumber FROM logs WHERE ServiceName = "
         "'email' AND TraceId <> '') SELECT count(*), count(f.TraceId), count(c.TraceId), "
         "count(DISTINCT coalesce(f.TraceId, c.TraceId)), sum(f.SeverityNumber), "
         "sum(c.SeverityNumber) FROM f FULL JOIN c ON f.TraceId = c.TraceId",
         NULL},
        /* GROUP BY on top; NULL keys (nullif) each come once */
        {"SELECT coalesce(a.s, b.s, '-') AS svc, count(*), count(a.t), count(b.t), count(DISTINCT "
         "coalesce(a.t, b.t)) FROM (SELECT nullif(TraceId, '') AS t, ServiceName AS s FROM logs "
         "WHERE SeverityText = 'ERROR' AND ServiceName IN ('ad', 'load-generator', 'shipping', "
         "'payment', 'image-provider')) a FULL JOIN (SELECT nullif(TraceId, '') AS t, ServiceName "
         "AS s FROM logs WHERE SeverityText = 'WARN') b ON a.t = b.t GROUP BY 1 ORDER BY 2 DESC, "
         "1 LIMIT 6",
         NULL},
        /* WHERE on either side: a filter on the joined rows */
        {"SELECT count(*), count(a.t), count(b.t) FROM (SELECT nullif(TraceId, '') AS t, "
         "SeverityNumber AS n FROM logs WHERE ServiceName = 'accounting') a FULL JOIN (SELECT "
         "nullif(TraceId, '') AS t, SeverityNumber AS n FROM logs WHERE ServiceName = "
         "'fraud-detection') b ON a.t = b.t WHERE a.n >= 9 OR b.n IS NULL",
         NULL},
        {"SELECT count(*), count(DISTINCT b.t) FROM (SELECT nullif(TraceId, '') AS t FROM logs "
         "WHERE ServiceName = 'email') a FULL JOIN (SELECT nullif(TraceId, '') AS t FROM logs "
         "WHERE ServiceName = 'fraud-detection') b ON a.t = b.t WHERE a.t IS NULL",
         NULL},
        /* whole tables on two keys, WHERE on either side (neither scan
         * filtered); NULL timestamps and services match nothing */
        {"SELECT count(*), count(a.Timestamp), count(b.Timestamp), count(a.ServiceName), "
         "count(b.ServiceName) FROM logs a FULL JOIN logs b ON a.Timestamp = b.Timestamp AND "
         "a.ServiceName = b.ServiceName WHERE a.SeverityText = 'WARN' OR b.SeverityText IN "
         "('WARN', 'TRACE') OR a.Timestamp IS NULL",
         NULL},
        /* integer keys, a NULL among them */
        {"SELECT a.n, a.c, b.n, b.c FROM (SELECT SeverityNumber AS n, count(*) AS c FROM logs "
         "WHERE ServiceName = 'cart' GROUP BY 1) a FULL JOIN (SELECT SeverityNumber AS n, "
         "count(*) AS c FROM logs WHERE ServiceName IS NULL OR ServiceName = 'kafka' GROUP BY 1) "
         "b ON a.n = b.n ORDER BY coalesce(a.n, b.n) NULLS FIRST, a.c NULLS FIRST, b.c NULLS FIRST",
         NULL},
        /* rows: ORDER BY, LIMIT, OFFSET */
        {"SELECT coalesce(a.t, b.t) AS t, a.n, b.n FROM (SELECT nullif(TraceId, '') AS t, "
         "SeverityNumber AS n FROM logs WHERE ServiceName = 'accounting') a FULL JOIN (SELECT "
         "nullif(TraceId, '') AS t, SeverityNumber AS n FROM logs WHERE ServiceName = 'email') b "
         "ON a.t = b.t ORDER BY 1 NULLS LAST, 2 NULLS FIRST, 3 NULLS FIRST LIMIT 15 OFFSET 40",
         NULL},
        /* USING */
        {"SELECT count(*), count(a.TraceId), count(b.TraceId), count(DISTINCT "
         "coalesce(a.TraceId, b.TraceId)) FROM (SELECT TraceId FROM logs WHERE ServiceName = "
         "'accounting' AND TraceId <> '') a FULL JOIN (SELECT TraceId FROM logs WHERE ServiceName "
         "= 'email' AND TraceId <> '') b USING (TraceId)",
         NULL},
        /* LEFT: a WHERE equality across the join filters the joined rows
         * (it is no LEFT key) */
        {"SELECT count(*), count(b.TraceId) FROM logs a LEFT JOIN logs b ON a.TraceId = b.TraceId "
         "AND b.ServiceName = 'ad' WHERE a.ServiceName = 'cart' AND a.TraceId <> '' AND "
         "a.SeverityNumber = b.SeverityNumber",
         NULL},
    };
    /* SQLite's plans need these (dropped again: other tests keep its scans) */
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE INDEX oj_trace ON logs(TraceId); CREATE INDEX oj_ts ON "
                                  "logs(Timestamp)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    for (size_t i = 0; i < sizeof q / sizeof *q; i++)
        same_rows(q[i][0], q[i][1]);
    assert_int_equal(sqlite3_exec(db, "DROP INDEX oj_trace; DROP INDEX oj_ts", NULL, NULL, NULL),
                     SQLITE_OK);
}

/* A residual filter gives what the index gives for the same rows: LIKE
 * 'c%' on ServiceName (column values) against the IN list of the services
 * it matches (the keyword index), for counts and BM25 top-k. */
static void test_sql_residual_equals_index(void **st)
{
    (void)st;
    char in[1024] = "";
    sqlite3_stmt *sq;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT DISTINCT ServiceName FROM logs WHERE ServiceName "
                                        "LIKE 'c%' ORDER BY 1",
                                        -1, &sq, NULL),
                     SQLITE_OK);
    size_t w = 0;
    while (sqlite3_step(sq) == SQLITE_ROW)
        w += (size_t)snprintf(in + w, sizeof in - w, "%s'%s'", w ? ", " : "",
                              (const char *)sqlite3_column_text(sq, 0));
    sqlite3_finalize(sq);
    assert_true(w > 0);
    char a[2048], b[2048];
    snprintf(a, sizeof a, "Body @@ 'failed' AND ServiceName LIKE 'c%%'");
    snprintf(b, sizeof b, "Body @@ 'failed' AND ServiceName IN (%s)", in);
    uint64_t na = sql_count(a), nb = sql_count(b);
    assert_int_equal(na, nb);
    assert_true(na > 100);
    char qa[2200], qb[2200];
    snprintf(qa, sizeof qa,
             "SELECT Timestamp, ServiceName, bm25() FROM logs WHERE %s ORDER BY bm25() DESC LIMIT 40",
             a);
    snprintf(qb, sizeof qb,
             "SELECT Timestamp, ServiceName, bm25() FROM logs WHERE %s ORDER BY bm25() DESC LIMIT 40",
             b);
    qr_qctx c1, c2;
    qr_result r1, r2;
    run(qa, &c1, &r1);
    run(qb, &c2, &r2);
    assert_int_equal(r1.nrows, 40);
    assert_int_equal(r1.nrows, r2.nrows);
    for (uint64_t i = 0; i < r1.nrows; i++) {
        char x[512], y[512];
        row_text(&r1, i, x, sizeof x);
        row_text(&r2, i, y, sizeof y);
        if (strcmp(x, y))
            fail_msg("row %llu: residual %s, index %s", (unsigned long long)i, x, y);
    }
    qr_result_free(&r1);
    qr_result_free(&r2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sql_counts_equal_the_oracle),
        cmocka_unit_test(test_sql_topk_equals_search),
        cmocka_unit_test(test_sql_newest_equals_brute_force),
        cmocka_unit_test(test_sql_group_by_equals_sqlite),
        cmocka_unit_test(test_sql_group_by_fulltext_equals_oracle),
        cmocka_unit_test(test_sql_expressions_equal_sqlite),
        cmocka_unit_test(test_sql_merge_joins_equal_sqlite),
        cmocka_unit_test(test_sql_outer_joins_equal_sqlite),
        cmocka_unit_test(test_sql_residual_equals_index),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
