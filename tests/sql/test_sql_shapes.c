/* test_sql_shapes.c - SQL over tables of other shapes than the
 * OpenTelemetry one, against SQLite: 20k web access logs (http_logs) and 6k
 * nested GitHub events (github_events) are generated, ingested the way
 * `quarry ingest` does (the definition inferred from the sample, several
 * segments), and every answer is compared row for row with SQLite's answer
 * over the same NDJSON lines, read there by SQLite's own JSON functions
 * (json_extract): an independent reading of every value. Word matches
 * (`@@`) are checked against a plain tokenizer registered in SQLite. */
#include "testutil.h"

#include <ctype.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <strings.h>
#include <unistd.h>

#include "exec/render.h"
#include "gen/ghevents.h"
#include "gen/httplogs.h"
#include "index/catalog.h"
#include "ingest/infer.h"
#include "ingest/ingest.h"
#include "sql/sql.h"
#include "sqlite_csv.h"

#define SEED      20251207u
#define HTTP_ROWS 20000u
#define GH_ROWS   6000u

static char *datadir;
static qr_sql_session sess;
static sqlite3 *db;

/* ---- loading ---- */

/* Generate rows of a dataset, ingest them as table `name` (the definition
 * inferred, segments of seg_rows lines) and give SQLite the same lines as
 * table raw_NAME(j). */
static void load(const char *name, int is_gh, uint32_t rows, uint32_t seg_rows)
{
    qr_err e;
    qr_buf text;
    qr_buf_init(&text);
    if (is_gh) {
        ghevents_ctx *g = ghevents_new(SEED, 0);
        for (uint32_t i = 0; i < rows; i++)
            ghevents_row(g, &text);
        ghevents_free(g);
    } else {
        httplogs_ctx *g = httplogs_new(SEED, 0);
        for (uint32_t i = 0; i < rows; i++)
            httplogs_row(g, &text);
        httplogs_free(g);
    }
    assert_false(text.oom);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.ndjson", datadir, name);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text.p, text.len), (ssize_t)text.len);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);

    size_t sample = text.len < QR_INFER_SAMPLE_BYTES ? text.len : QR_INFER_SAMPLE_BYTES;
    qr_tabdef *def = qr_infer_schema(name, (const char *)text.p, sample, path, &e);
    if (!def)
        fail_msg("%s: infer: %s", name, e.msg);
    int created = 0;
    if (qr_catalog_create_table(datadir, def, &created, &e) != 0)
        fail_msg("%s: create: %s", name, e.msg);
    assert_true(created);
    qr_tabdef_free(def);
    qr_table *t = qr_table_open(datadir, name, QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    if (!t)
        fail_msg("%s: open: %s", name, e.msg);
    qr_ingest_opts o;
    qr_ingest_opts_default(&o);
    o.segment_rows = seg_rows;
    o.threads = 2;
    o.strict = 1;
    qr_ingest_stats st;
    if (qr_ingest(t, fd, path, &o, &st, &e) != 0)
        fail_msg("%s: ingest: %s", name, e.msg);
    assert_int_equal(st.rows, rows);
    assert_int_equal(st.segments, (rows + seg_rows - 1) / seg_rows);
    qr_table_close(t);
    close(fd);

    char sql[128];
    snprintf(sql, sizeof sql, "CREATE TABLE raw_%s(n INTEGER PRIMARY KEY, j TEXT)", name);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    snprintf(sql, sizeof sql, "INSERT INTO raw_%s(j) VALUES (?)", name);
    sqlite3_stmt *ins;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &ins, NULL), SQLITE_OK);
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    const char *p = (const char *)text.p, *end = p + text.len;
    uint32_t n = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        assert_non_null(nl);
        sqlite3_bind_text(ins, 1, p, (int)(nl - p), SQLITE_STATIC);
        assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
        sqlite3_reset(ins);
        p = nl + 1;
        n++;
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_finalize(ins);
    assert_int_equal(n, rows);
    qr_buf_free(&text);
}

/* has_word(text, w): text holds w as a word: a maximal run of ASCII letters
 * and digits (and any byte >= 0x80), compared without ASCII case. */
static void has_word(sqlite3_context *cx, int argc, sqlite3_value **v)
{
    (void)argc;
    const unsigned char *t = sqlite3_value_text(v[0]), *w = sqlite3_value_text(v[1]);
    if (!t || !w) {
        sqlite3_result_null(cx);
        return;
    }
    size_t wn = strlen((const char *)w);
    int found = 0;
    for (size_t i = 0; t[i] && !found;) {
        size_t j = i;
        while (t[j] && (isalnum(t[j]) || t[j] >= 0x80))
            j++;
        if (j - i == wn && !strncasecmp((const char *)t + i, (const char *)w, wn))
            found = 1;
        i = j > i ? j : i + 1;
    }
    sqlite3_result_int(cx, found);
}

static int group_setup(void **st)
{
    (void)st;
    datadir = tu_tmpdir();
    assert_non_null(datadir);
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(sqlite3_create_function(db, "has_word", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                             NULL, has_word, NULL, NULL),
                     SQLITE_OK);
    /* LIKE is case-sensitive in SQL (SQLite's default folds ASCII case) */
    assert_int_equal(sqlite3_exec(db, "PRAGMA case_sensitive_like = ON", NULL, NULL, NULL),
                     SQLITE_OK);
    load("http_logs", 0, HTTP_ROWS, 6000);
    load("github_events", 1, GH_ROWS, 2500);
    /* the columns as SQLite reads them; timestamps as ns integers */
    static const char *views[] = {
        "CREATE VIEW http_logs AS SELECT n, "
        "json_extract(j, '$.\"@timestamp\"') * 1000000000 AS ts, "
        "json_extract(j, '$.clientip') AS clientip, json_extract(j, '$.request') AS request, "
        "json_extract(j, '$.status') AS status, json_extract(j, '$.size') AS size "
        "FROM raw_http_logs",
        "CREATE VIEW github_events AS SELECT n, json_extract(j, '$.id') AS id, "
        "json_extract(j, '$.type') AS type, "
        "CAST(strftime('%s', json_extract(j, '$.created_at')) AS INTEGER) * 1000000000 AS ts, "
        "json_extract(j, '$.public') AS public, json_extract(j, '$.actor.login') AS login, "
        "json_extract(j, '$.repo.name') AS repo, json_extract(j, '$.org.login') AS org, "
        "json_type(j, '$.org') AS org_type, "
        "json_extract(j, '$.payload.action') AS action, "
        "json_extract(j, '$.payload.size') AS psize, "
        "json_extract(j, '$.payload.pull_request.state') AS pr_state, "
        "json_extract(j, '$.payload.pull_request.additions') AS pr_add, "
        "json_extract(j, '$.payload.pull_request.title') AS pr_title "
        "FROM raw_github_events",
    };
    for (size_t i = 0; i < sizeof views / sizeof *views; i++)
        if (sqlite3_exec(db, views[i], NULL, NULL, NULL) != SQLITE_OK)
            fail_msg("sqlite: %s", sqlite3_errmsg(db));
    qr_err e;
    if (qr_sql_open(&sess, datadir, 2, &e) != 0)
        fail_msg("session: %s", e.msg);
    return 0;
}

static int group_teardown(void **st)
{
    (void)st;
    qr_sql_close(&sess);
    sqlite3_close(db);
    tu_rmdir(datadir);
    return 0;
}

/* ---- comparing ---- */

static void sqlite_csv(const char *sql, qr_buf *out) { sqlite_csv_of(db, sql, out); }

/* Quarry's answer to q (timestamps as ns integers), CSV without the header,
 * must equal SQLite's answer to s and hold at least min_rows rows. */
static void same(const char *q, const char *s, uint64_t min_rows)
{
    qr_qctx ctx;
    qr_sql_ctx_init(&sess, &ctx, NULL);
    qr_result r;
    qr_result_init(&r, &ctx);
    qr_err e;
    if (qr_sql_exec(&sess, q, strlen(q), &r, &e) != 0)
        fail_msg("%s: %s %s", q, e.code, e.msg);
    for (uint32_t c = 0; c < r.ncols; c++)
        if (r.cols[c].type == QT_TIMESTAMP)
            r.cols[c].type = QT_INT64;
    qr_buf got, want;
    qr_buf_init(&got);
    qr_buf_init(&want);
    qr_result_render(&r, QR_FMT_CSV, &got);
    const char *body = memchr(got.p, '\n', got.len) + 1;
    size_t blen = got.len - (size_t)(body - (const char *)got.p);
    sqlite_csv(s, &want);
    if (want.len != blen || (blen && memcmp(body, want.p, blen)))
        fail_msg("%s\nquarry (%zu bytes):\n%.*s\nsqlite (%zu bytes):\n%.*s", q, blen,
                 (int)(blen > 3000 ? 3000 : blen), body, want.len,
                 (int)(want.len > 3000 ? 3000 : want.len), (const char *)want.p);
    if (r.nrows < min_rows)
        fail_msg("%s: %llu rows, expected at least %llu (a test that cannot fail)", q,
                 (unsigned long long)r.nrows, (unsigned long long)min_rows);
    qr_buf_free(&got);
    qr_buf_free(&want);
    qr_result_free(&r);
    assert_int_equal(ctx.used, 0);
}

/* Quarry's rows of q (sorted) collapsed into "row,copies" lines must equal
 * SQLite's answer to s (which counts them itself). */
static void same_counted(const char *q, const char *s, uint64_t min_rows)
{
    qr_qctx ctx;
    qr_sql_ctx_init(&sess, &ctx, NULL);
    qr_result r;
    qr_result_init(&r, &ctx);
    qr_err e;
    if (qr_sql_exec(&sess, q, strlen(q), &r, &e) != 0)
        fail_msg("%s: %s %s", q, e.code, e.msg);
    qr_buf got, want, out;
    qr_buf_init(&got);
    qr_buf_init(&want);
    qr_buf_init(&out);
    qr_result_render(&r, QR_FMT_CSV, &got);
    qr_buf_put_u8(&got, 0);
    const char *line = strchr((const char *)got.p, '\n') + 1, *prev = NULL;
    size_t plen = 0;
    uint64_t copies = 0;
    for (;;) {
        const char *nl = *line ? strchr(line, '\n') : NULL;
        size_t len = nl ? (size_t)(nl - line) : 0;
        if (prev && (!nl || len != plen || memcmp(line, prev, len))) {
            char t[32];
            qr_buf_put(&out, prev, plen);
            snprintf(t, sizeof t, ",%llu\n", (unsigned long long)copies);
            qr_buf_put(&out, t, strlen(t));
            copies = 0;
        }
        if (!nl)
            break;
        prev = line, plen = len, copies++;
        line = nl + 1;
    }
    sqlite_csv(s, &want);
    if (want.len != out.len || (out.len && memcmp(want.p, out.p, out.len)))
        fail_msg("%s\nquarry:\n%.*s\nsqlite:\n%.*s", q, (int)out.len, (const char *)out.p,
                 (int)want.len, (const char *)want.p);
    if (r.nrows < min_rows)
        fail_msg("%s: %llu rows, expected at least %llu", q, (unsigned long long)r.nrows,
                 (unsigned long long)min_rows);
    qr_buf_free(&got);
    qr_buf_free(&want);
    qr_buf_free(&out);
    qr_result_free(&r);
    assert_int_equal(ctx.used, 0);
}

/* ---- http_logs ---- */

static void test_http_counts_and_filters(void **st)
{
    (void)st;
    same("SELECT count(*), count(size), sum(size), min(size), max(size), min(\"@timestamp\"), "
         "max(\"@timestamp\") FROM http_logs",
         "SELECT count(*), count(size), sum(size), min(size), max(size), min(ts), max(ts) FROM "
         "http_logs",
         1);
    /* index filters: keyword, range, words, and their mixtures */
    static const char *q[][2] = {
        {"status = 404", "status = 404"},
        {"status >= 400 AND status < 500", "status >= 400 AND status < 500"},
        {"status IN (304, 500)", "status IN (304, 500)"},
        {"NOT status = 200", "NOT status = 200"},
        {"request @@ 'images'", "has_word(request, 'images')"},
        {"request @@ 'gif' AND status = 200", "has_word(request, 'gif') AND status = 200"},
        {"request @@ ts_any(['head', 'post'])",
         "has_word(request, 'head') OR has_word(request, 'post')"},
        {"request @@ 'english' AND NOT request @@ 'images'",
         "has_word(request, 'english') AND NOT has_word(request, 'images')"},
        {"clientip = '64.201.17.0'", "clientip = '64.201.17.0'"},
        /* residuals on column vectors */
        {"request LIKE 'GET /english/%'", "request LIKE 'GET /english/%'"},
        {"request LIKE '%.gif HTTP/1.0'", "request LIKE '%.gif HTTP/1.0'"},
        {"size IS NULL", "size IS NULL"},
        {"size > 20000 AND status = 200", "size > 20000 AND status = 200"},
        {"size BETWEEN 100 AND 1000 OR status = 206", "size BETWEEN 100 AND 1000 OR status = 206"},
        {"NOT size > 5000", "NOT size > 5000"}, /* NULL sizes are neither */
        {"length(request) > 40 AND request @@ 'htm'",
         "length(request) > 40 AND has_word(request, 'htm')"},
        {"\"@timestamp\" >= TIMESTAMP '1998-04-30 20:10:00' AND status = 200",
         "ts >= 893967000000000000 AND status = 200"},
    };
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
        char a[512], b[512];
        snprintf(a, sizeof a, "SELECT count(*), sum(size) FROM http_logs WHERE %s", q[i][0]);
        snprintf(b, sizeof b, "SELECT count(*), sum(size) FROM http_logs WHERE %s", q[i][1]);
        same(a, b, 1);
    }
    /* none of those is trivially empty or everything */
    qr_buf w;
    qr_buf_init(&w);
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
        char b[512];
        qr_buf_clear(&w);
        snprintf(b, sizeof b, "SELECT count(*) FROM http_logs WHERE %s", q[i][1]);
        sqlite_csv(b, &w);
        qr_buf_put_u8(&w, 0); /* strtol reads a C string */
        assert_false(w.oom);
        long n = strtol((const char *)w.p, NULL, 10);
        if (n <= 0 || n >= (long)HTTP_ROWS)
            fail_msg("%s: %ld rows: choose a filter that splits the table", q[i][1], n);
    }
    qr_buf_free(&w);
}

static void test_http_group_by(void **st)
{
    (void)st;
    same("SELECT status, count(*), sum(size), min(size), max(size), count(size), avg(size) FROM "
         "http_logs GROUP BY status ORDER BY status",
         "SELECT status, count(*), sum(size), min(size), max(size), count(size), avg(size) FROM "
         "http_logs GROUP BY status ORDER BY status",
         5);
    same("SELECT clientip, count(*) FROM http_logs GROUP BY clientip ORDER BY 2 DESC, 1 LIMIT 12",
         "SELECT clientip, count(*) FROM http_logs GROUP BY clientip ORDER BY 2 DESC, 1 LIMIT 12",
         12);
    same("SELECT clientip, count(*) AS n FROM http_logs WHERE status >= 400 GROUP BY 1 HAVING "
         "count(*) >= 3 ORDER BY n DESC, clientip",
         "SELECT clientip, count(*) AS n FROM http_logs WHERE status >= 400 GROUP BY 1 HAVING "
         "count(*) >= 3 ORDER BY n DESC, clientip",
         1);
    same("SELECT date_trunc('hour', \"@timestamp\") AS h, count(*), sum(size) FROM http_logs "
         "GROUP BY 1 ORDER BY 1",
         "SELECT ts - ts % 3600000000000 AS h, count(*), sum(size) FROM http_logs GROUP BY 1 "
         "ORDER BY 1",
         2);
    same("SELECT date_trunc('minute', \"@timestamp\") AS m, count(*) FROM http_logs WHERE "
         "status = 404 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10",
         "SELECT ts - ts % 60000000000 AS m, count(*) FROM http_logs WHERE status = 404 GROUP "
         "BY 1 ORDER BY 2 DESC, 1 LIMIT 10",
         10);
    /* expression keys */
    same("SELECT substr(request, 1, strpos(request, ' ') - 1) AS method, count(*) FROM "
         "http_logs GROUP BY 1 ORDER BY 1",
         "SELECT substr(request, 1, instr(request, ' ') - 1) AS method, count(*) FROM "
         "http_logs GROUP BY 1 ORDER BY 1",
         2);
    same("SELECT CASE WHEN status >= 500 THEN 'server error' WHEN status >= 400 THEN 'client "
         "error' WHEN status >= 300 THEN 'redirect' ELSE 'ok' END AS class, count(*), "
         "coalesce(sum(size), 0) FROM http_logs GROUP BY 1 ORDER BY 1",
         "SELECT CASE WHEN status >= 500 THEN 'server error' WHEN status >= 400 THEN 'client "
         "error' WHEN status >= 300 THEN 'redirect' ELSE 'ok' END AS class, count(*), "
         "coalesce(sum(size), 0) FROM http_logs GROUP BY 1 ORDER BY 1",
         3);
    same("SELECT status, count(DISTINCT clientip) FROM http_logs GROUP BY status ORDER BY 1",
         "SELECT status, count(DISTINCT clientip) FROM http_logs GROUP BY status ORDER BY 1", 5);
    same("SELECT count(DISTINCT clientip), count(DISTINCT status) FROM http_logs WHERE request "
         "@@ 'images'",
         "SELECT count(DISTINCT clientip), count(DISTINCT status) FROM http_logs WHERE "
         "has_word(request, 'images')",
         1);
    /* strpos and position(sub IN s) count characters, 1-based, 0 absent,
     * with a FROM and without one (no FROM stays in the vectorized engine,
     * though libpg_query spells it pg_catalog.position) */
    same("SELECT position('c' IN 'abc'), strpos('abc', 'c'), position('' IN 'abc'), "
         "strpos('h\xc3\xa9llo', 'l'), strpos(NULL, 'a'), position('z' IN 'abc')",
         "SELECT instr('abc', 'c'), instr('abc', 'c'), instr('abc', ''), instr('h\xc3\xa9llo', "
         "'l'), instr(NULL, 'a'), instr('abc', 'z')",
         1);
    same("SELECT position('/' IN substr(request, 2)), count(*) FROM http_logs GROUP BY 1 ORDER BY 1",
         "SELECT instr(substr(request, 2), '/'), count(*) FROM http_logs GROUP BY 1 ORDER BY 1", 2);
    same("SELECT DISTINCT status FROM http_logs WHERE size IS NULL ORDER BY 1",
         "SELECT DISTINCT status FROM http_logs WHERE size IS NULL ORDER BY 1", 1);
}

static void test_http_order_and_joins(void **st)
{
    (void)st;
    /* newest-k: the time column alone (rows tie on the second), then a
     * total order */
    same("SELECT \"@timestamp\" FROM http_logs WHERE status = 404 ORDER BY \"@timestamp\" DESC "
         "LIMIT 15",
         "SELECT ts FROM http_logs WHERE status = 404 ORDER BY ts DESC LIMIT 15", 15);
    same("SELECT \"@timestamp\", clientip, request, size FROM http_logs WHERE request @@ 'gif' "
         "ORDER BY \"@timestamp\" DESC, clientip, request, size LIMIT 20",
         "SELECT ts, clientip, request, size FROM http_logs WHERE has_word(request, 'gif') "
         "ORDER BY ts DESC, clientip, request, size IS NULL, size LIMIT 20",
         20);
    same("SELECT size, request FROM http_logs WHERE size IS NOT NULL ORDER BY size DESC, "
         "request LIMIT 10 OFFSET 5",
         "SELECT size, request FROM http_logs WHERE size IS NOT NULL ORDER BY size DESC, "
         "request LIMIT 10 OFFSET 5",
         10);
    same("SELECT size FROM http_logs ORDER BY size NULLS FIRST, 1 LIMIT 3",
         "SELECT size FROM http_logs ORDER BY size IS NOT NULL, size LIMIT 3", 3);
    /* a client's 404s next to its successes */
    same("SELECT count(*), count(DISTINCT a.clientip) FROM http_logs a JOIN http_logs b ON "
         "a.clientip = b.clientip WHERE a.status = 404 AND b.status = 200",
         "SELECT count(*), count(DISTINCT a.clientip) FROM http_logs a JOIN http_logs b ON "
         "a.clientip = b.clientip WHERE a.status = 404 AND b.status = 200",
         1);
    same("SELECT a.clientip, count(*) FROM http_logs a LEFT JOIN http_logs b ON a.clientip = "
         "b.clientip AND b.status >= 500 WHERE a.status = 304 GROUP BY 1 ORDER BY 2 DESC, 1 "
         "LIMIT 8",
         "SELECT a.clientip, count(*) FROM http_logs a LEFT JOIN http_logs b ON a.clientip = "
         "b.clientip AND b.status >= 500 WHERE a.status = 304 GROUP BY 1 ORDER BY 2 DESC, 1 "
         "LIMIT 8",
         8);
    same("SELECT count(*) FROM http_logs WHERE status = 200 AND clientip IN (SELECT clientip "
         "FROM http_logs WHERE status = 404)",
         "SELECT count(*) FROM http_logs WHERE status = 200 AND clientip IN (SELECT clientip "
         "FROM http_logs WHERE status = 404)",
         1);
    same("WITH e AS (SELECT clientip, count(*) AS n FROM http_logs WHERE status >= 400 GROUP BY "
         "1) SELECT n, count(*) FROM e GROUP BY n ORDER BY n",
         "WITH e AS (SELECT clientip, count(*) AS n FROM http_logs WHERE status >= 400 GROUP BY "
         "1) SELECT n, count(*) FROM e GROUP BY n ORDER BY n",
         2);
}

/* RIGHT and FULL joins on text (clientip) and integer keys (status, and
 * size, which has NULLs). SQLite's RIGHT JOIN of two whole tables is asked
 * as the LEFT JOIN with the sides swapped (it scans the left side whole and
 * probes the view; the same rows by definition). */
static void test_http_outer_joins(void **st)
{
    (void)st;
    /* each 302, 400 and 500 next to the client's 404s, if any */
    same("SELECT b.status, count(*), count(a.clientip), count(DISTINCT b.clientip) FROM "
         "http_logs a RIGHT JOIN http_logs b ON a.clientip = b.clientip AND a.status = 404 "
         "WHERE b.status IN (302, 400, 500) GROUP BY 1 ORDER BY 1",
         "SELECT b.status, count(*), count(a.clientip), count(DISTINCT b.clientip) FROM "
         "http_logs b LEFT JOIN http_logs a ON a.clientip = b.clientip AND a.status = 404 "
         "WHERE b.status IN (302, 400, 500) GROUP BY 1 ORDER BY 1",
         3);
    /* WHERE on the null-extended side, after the join */
    same("SELECT count(*), count(a.size) FROM http_logs a RIGHT JOIN http_logs b ON a.clientip = "
         "b.clientip AND a.status = 304 WHERE b.status IN (302, 400, 500) AND (a.size IS NULL OR "
         "a.size > 1000)",
         "SELECT count(*), count(a.size) FROM http_logs b LEFT JOIN http_logs a ON a.clientip = "
         "b.clientip AND a.status = 304 WHERE b.status IN (302, 400, 500) AND (a.size IS NULL OR "
         "a.size > 1000)",
         1);
    /* clients with 404s, with other errors or redirects, or both */
    same("WITH e AS (SELECT clientip, count(*) AS n FROM http_logs WHERE status = 404 GROUP BY "
         "1), s AS (SELECT clientip, count(*) AS n FROM http_logs WHERE status IN (302, 400, 500) "
         "GROUP BY 1) SELECT count(*), count(e.clientip), count(s.clientip), sum(e.n), sum(s.n) "
         "FROM e FULL JOIN s ON e.clientip = s.clientip",
         "WITH e AS (SELECT clientip, count(*) AS n FROM http_logs WHERE status = 404 GROUP BY "
         "1), s AS (SELECT clientip, count(*) AS n FROM http_logs WHERE status IN (302, 400, 500) "
         "GROUP BY 1) SELECT count(*), count(e.clientip), count(s.clientip), sum(e.n), sum(s.n) "
         "FROM e FULL JOIN s ON e.clientip = s.clientip",
         1);
    /* an integer key with NULLs (the 304s and 500s without a size): each
     * NULL row once */
    same("SELECT a.size, a.c, b.size, b.c FROM (SELECT size, count(*) AS c FROM http_logs WHERE "
         "status IN (304, 500) GROUP BY 1) a FULL JOIN (SELECT size, count(*) AS c FROM http_logs "
         "WHERE status IN (206, 500) GROUP BY 1) b ON a.size = b.size ORDER BY coalesce(a.size, "
         "b.size) NULLS FIRST, a.c NULLS FIRST, b.c NULLS FIRST LIMIT 30",
         "SELECT a.size, a.c, b.size, b.c FROM (SELECT size, count(*) AS c FROM http_logs WHERE "
         "status IN (304, 500) GROUP BY 1) a FULL JOIN (SELECT size, count(*) AS c FROM http_logs "
         "WHERE status IN (206, 500) GROUP BY 1) b ON a.size = b.size ORDER BY coalesce(a.size, "
         "b.size) NULLS FIRST, a.c NULLS FIRST, b.c NULLS FIRST LIMIT 30",
         30);
    same("WITH a AS (SELECT status, count(*) AS n FROM http_logs WHERE size > 20000 GROUP BY 1), "
         "b AS (SELECT status, count(*) AS n FROM http_logs WHERE size IS NULL GROUP BY 1) "
         "SELECT a.status, b.status, a.n, b.n FROM a FULL JOIN b USING (status) ORDER BY "
         "coalesce(a.status, b.status)",
         "WITH a AS (SELECT status, count(*) AS n FROM http_logs WHERE size > 20000 GROUP BY 1), "
         "b AS (SELECT status, count(*) AS n FROM http_logs WHERE size IS NULL GROUP BY 1) "
         "SELECT a.status, b.status, a.n, b.n FROM a FULL JOIN b USING (status) ORDER BY "
         "coalesce(a.status, b.status)",
         3);
}

/* ---- github_events: nested JSON ---- */

static void test_github_json_paths(void **st)
{
    (void)st;
    same("SELECT type, count(*) FROM github_events GROUP BY type ORDER BY 2 DESC, 1",
         "SELECT type, count(*) FROM github_events GROUP BY type ORDER BY 2 DESC, 1", 5);
    same("SELECT repo->>'name' AS r, count(*) FROM github_events GROUP BY 1 ORDER BY 2 DESC, 1 "
         "LIMIT 10",
         "SELECT repo, count(*) FROM github_events GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10", 10);
    same("SELECT actor->>'login', count(*) FROM github_events WHERE type = 'PushEvent' GROUP BY "
         "1 ORDER BY 2 DESC, 1 LIMIT 5",
         "SELECT login, count(*) FROM github_events WHERE type = 'PushEvent' GROUP BY 1 ORDER "
         "BY 2 DESC, 1 LIMIT 5",
         5);
    same("SELECT payload->>'action' AS a, count(*) FROM github_events WHERE type IN "
         "('PullRequestEvent', 'IssuesEvent') GROUP BY 1 ORDER BY 1 NULLS FIRST",
         "SELECT action, count(*) FROM github_events WHERE type IN ('PullRequestEvent', "
         "'IssuesEvent') GROUP BY 1 ORDER BY 1",
         2);
    same("SELECT payload->'pull_request'->>'state' AS s, count(*), "
         "sum(CAST(payload->'pull_request'->>'additions' AS BIGINT)) FROM github_events WHERE "
         "type = 'PullRequestEvent' GROUP BY 1 ORDER BY 1",
         "SELECT pr_state, count(*), sum(pr_add) FROM github_events WHERE type = "
         "'PullRequestEvent' GROUP BY 1 ORDER BY 1",
         1);
    same("SELECT count(*), sum(CAST(payload->>'size' AS BIGINT)), max(CAST(payload->>'size' AS "
         "BIGINT)) FROM github_events WHERE type = 'PushEvent'",
         "SELECT count(*), sum(psize), max(psize) FROM github_events WHERE type = 'PushEvent'",
         1);
    /* org is on some rows only; public is a bool column */
    same("SELECT org IS NULL, public, count(*) FROM github_events GROUP BY 1, 2 ORDER BY 1, 2",
         "SELECT CASE WHEN org_type IS NULL THEN 'true' ELSE 'false' END, CASE public WHEN 1 "
         "THEN 'true' ELSE 'false' END, count(*) FROM github_events GROUP BY 1, 2 ORDER BY 1, 2",
         1);
    same("SELECT org->>'login', count(*) FROM github_events WHERE org IS NOT NULL GROUP BY 1 "
         "ORDER BY 2 DESC, 1 LIMIT 5",
         "SELECT org, count(*) FROM github_events WHERE org_type IS NOT NULL GROUP BY 1 ORDER "
         "BY 2 DESC, 1 LIMIT 5",
         1);
    same("SELECT count(*) FROM github_events WHERE repo->>'name' LIKE '%/go%'",
         "SELECT count(*) FROM github_events WHERE repo LIKE '%/go%'", 1);
    same("SELECT id, type, created_at FROM github_events WHERE actor->>'login' = (SELECT "
         "actor->>'login' FROM github_events ORDER BY id LIMIT 1) ORDER BY id",
         "SELECT id, type, ts FROM github_events WHERE login = (SELECT login FROM "
         "github_events ORDER BY id LIMIT 1) ORDER BY id",
         1);
    same("SELECT date_trunc('hour', created_at), count(*) FROM github_events GROUP BY 1 ORDER "
         "BY 1",
         "SELECT ts - ts % 3600000000000, count(*) FROM github_events GROUP BY 1 ORDER BY 1", 1);
    same("SELECT created_at, id FROM github_events WHERE type = 'IssuesEvent' ORDER BY "
         "created_at DESC, id LIMIT 7",
         "SELECT ts, id FROM github_events WHERE type = 'IssuesEvent' ORDER BY ts DESC, id "
         "LIMIT 7",
         7);
    same("SELECT count(*) FROM github_events WHERE payload @@ 'license' AND type = "
         "'PullRequestEvent'",
         "SELECT count(*) FROM github_events WHERE has_word(pr_title, 'license') AND type = "
         "'PullRequestEvent'",
         1);
}

static void test_github_joins(void **st)
{
    (void)st;
    /* actors who pushed, who watched, or both */
    same("SELECT count(*), count(p.l), count(w.l) FROM (SELECT DISTINCT actor->>'login' AS l FROM "
         "github_events WHERE type = 'PushEvent') p FULL JOIN (SELECT DISTINCT actor->>'login' "
         "AS l FROM github_events WHERE type = 'WatchEvent') w ON p.l = w.l",
         "SELECT count(*), count(p.l), count(w.l) FROM (SELECT DISTINCT login AS l FROM "
         "github_events WHERE type = 'PushEvent') p FULL JOIN (SELECT DISTINCT login AS l FROM "
         "github_events WHERE type = 'WatchEvent') w ON p.l = w.l",
         1);
    /* actors who pushed and also opened a pull request */
    same("SELECT count(*) FROM (SELECT DISTINCT actor->>'login' AS l FROM github_events WHERE "
         "type = 'PushEvent') p JOIN (SELECT DISTINCT actor->>'login' AS l FROM github_events "
         "WHERE type = 'PullRequestEvent') q ON p.l = q.l",
         "SELECT count(*) FROM (SELECT DISTINCT login AS l FROM github_events WHERE type = "
         "'PushEvent') p JOIN (SELECT DISTINCT login AS l FROM github_events WHERE type = "
         "'PullRequestEvent') q ON p.l = q.l",
         1);
    same("SELECT type, count(*) FROM github_events WHERE actor->>'login' IN (SELECT "
         "actor->>'login' FROM github_events WHERE type = 'ForkEvent') GROUP BY 1 ORDER BY 1",
         "SELECT type, count(*) FROM github_events WHERE login IN (SELECT login FROM "
         "github_events WHERE type = 'ForkEvent') GROUP BY 1 ORDER BY 1",
         2);
    /* the two tables at once */
    same("SELECT (SELECT count(*) FROM http_logs WHERE status = 404) AS a, count(*) FROM "
         "github_events WHERE type = 'PushEvent'",
         "SELECT (SELECT count(*) FROM http_logs WHERE status = 404) AS a, count(*) FROM "
         "github_events WHERE type = 'PushEvent'",
         1);
    same("SELECT 'http', count(*) FROM http_logs UNION ALL SELECT 'github', count(*) FROM "
         "github_events ORDER BY 1",
         "SELECT 'http', count(*) FROM http_logs UNION ALL SELECT 'github', count(*) FROM "
         "github_events ORDER BY 1",
         2);
}

static void fails(const char *q, const char *code, const char *msg);

/* ---- set operations ---- */

static void test_set_operations(void **st)
{
    (void)st;
#define BIG   "SELECT status FROM http_logs WHERE size > 20000"
#define ONES  "SELECT status FROM http_logs WHERE clientip LIKE '1%'"
#define GET   "SELECT clientip FROM http_logs WHERE request LIKE 'GET %'"
#define E404  "SELECT clientip FROM http_logs WHERE status = 404"
    same(GET " INTERSECT " E404 " ORDER BY 1", GET " INTERSECT " E404 " ORDER BY 1", 5);
    same(GET " EXCEPT " E404 " ORDER BY 1 LIMIT 20 OFFSET 3",
         GET " EXCEPT " E404 " ORDER BY 1 LIMIT 20 OFFSET 3", 20);
    same(E404 " EXCEPT " GET " ORDER BY 1", E404 " EXCEPT " GET " ORDER BY 1", 0);
    same(BIG " UNION " ONES " ORDER BY 1", BIG " UNION " ONES " ORDER BY 1", 3);
    /* INTERSECT binds tighter than UNION; parentheses group */
    same(E404 " UNION " GET " INTERSECT " E404 " ORDER BY 1",
         E404 " UNION SELECT * FROM (" GET " INTERSECT " E404 ") ORDER BY 1", 5);
    same("(" GET " EXCEPT " E404 ") INTERSECT SELECT clientip FROM http_logs WHERE status = "
         "200 ORDER BY 1",
         "SELECT * FROM (" GET " EXCEPT " E404 ") INTERSECT SELECT clientip FROM http_logs "
         "WHERE status = 200 ORDER BY 1",
         5);
    /* a UNION inside, then UNION ALL: the inner duplicates go, the outer stay */
    same_counted("(" BIG " UNION " BIG ") UNION ALL " BIG " ORDER BY 1",
                 "SELECT status, count(*) + 1 FROM http_logs WHERE size > 20000 GROUP BY 1 "
                 "ORDER BY 1",
                 3);
    /* the ALL forms count copies (SQLite has neither: counted there) */
    same_counted(BIG " INTERSECT ALL " ONES " ORDER BY 1",
                 "WITH a AS (" BIG "), b AS (" ONES "), ca AS (SELECT status, count(*) AS c FROM "
                 "a GROUP BY 1), cb AS (SELECT status, count(*) AS c FROM b GROUP BY 1) SELECT "
                 "status, min(ca.c, cb.c) FROM ca JOIN cb USING (status) ORDER BY 1",
                 3);
    same_counted(ONES " EXCEPT ALL " BIG " ORDER BY 1",
                 "WITH a AS (" ONES "), b AS (" BIG "), ca AS (SELECT status, count(*) AS c FROM "
                 "a GROUP BY 1), cb AS (SELECT status, count(*) AS c FROM b GROUP BY 1) SELECT "
                 "status, ca.c - coalesce(cb.c, 0) FROM ca LEFT JOIN cb USING (status) WHERE "
                 "ca.c > coalesce(cb.c, 0) ORDER BY 1",
                 3);
    same("SELECT NULL::bigint INTERSECT SELECT NULL::bigint", "SELECT NULL INTERSECT SELECT NULL",
         1);
    fails(GET " INTERSECT SELECT status FROM http_logs", "42804",
          "INTERSECT column 1: the two sides' types cannot be matched (cast one)");
    fails(GET " EXCEPT SELECT clientip, status FROM http_logs", "42601",
          "each EXCEPT query must have the same number of columns (1 and 2)");
#undef BIG
#undef ONES
#undef GET
#undef E404
}

/* ---- scalar and EXISTS subqueries (initplan.c) ---- */

static void fails(const char *q, const char *code, const char *msg)
{
    qr_qctx ctx;
    qr_sql_ctx_init(&sess, &ctx, NULL);
    qr_result r;
    qr_result_init(&r, &ctx);
    qr_err e;
    if (qr_sql_exec(&sess, q, strlen(q), &r, &e) == 0)
        fail_msg("%s: succeeded, expected %s %s", q, code, msg);
    if (strcmp(e.code, code) || strcmp(e.msg, msg))
        fail_msg("%s:\ngot %s %s\nexpected %s %s", q, e.code, e.msg, code, msg);
    qr_result_free(&r);
    assert_int_equal(ctx.used, 0);
}

static void test_scalar_subqueries(void **st)
{
    (void)st;
    same("SELECT count(*) FROM http_logs WHERE status = (SELECT max(status) FROM http_logs)",
         "SELECT count(*) FROM http_logs WHERE status = (SELECT max(status) FROM http_logs)", 1);
    same("SELECT count(*), min(\"@timestamp\") FROM http_logs WHERE \"@timestamp\" >= (SELECT "
         "max(\"@timestamp\") FROM http_logs WHERE status = 404)",
         "SELECT count(*), min(ts) FROM http_logs WHERE ts >= (SELECT max(ts) FROM http_logs "
         "WHERE status = 404)",
         1);
    same("SELECT count(*) FROM http_logs WHERE size > (SELECT avg(size) FROM http_logs) AND "
         "clientip = (SELECT clientip FROM http_logs GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT "
         "1)",
         "SELECT count(*) FROM http_logs WHERE size > (SELECT avg(size) FROM http_logs) AND "
         "clientip = (SELECT clientip FROM http_logs GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT "
         "1)",
         1);
    same("SELECT status, count(*) * 100 / (SELECT count(*) FROM http_logs) FROM http_logs GROUP "
         "BY 1 ORDER BY 1",
         "SELECT status, count(*) * 100 / (SELECT count(*) FROM http_logs) FROM http_logs GROUP "
         "BY 1 ORDER BY 1",
         5);
    same("SELECT coalesce((SELECT max(size) FROM http_logs WHERE status = 999), -1), (SELECT "
         "(SELECT min(status) FROM http_logs) + 1)",
         "SELECT coalesce((SELECT max(size) FROM http_logs WHERE status = 999), -1), (SELECT "
         "(SELECT min(status) FROM http_logs) + 1)",
         1);
    same("SELECT count(*) FROM http_logs WHERE status = 200 AND EXISTS (SELECT 1 FROM http_logs "
         "WHERE status >= 500)",
         "SELECT count(*) FROM http_logs WHERE status = 200 AND EXISTS (SELECT 1 FROM http_logs "
         "WHERE status >= 500)",
         1);
    same("SELECT count(*) FROM http_logs WHERE NOT EXISTS (SELECT 1 FROM http_logs WHERE status "
         "= 999) AND status = 304",
         "SELECT count(*) FROM http_logs WHERE NOT EXISTS (SELECT 1 FROM http_logs WHERE status "
         "= 999) AND status = 304",
         1);
    same("SELECT count(*) FROM github_events WHERE created_at = (SELECT max(created_at) FROM "
         "github_events WHERE type = 'ForkEvent') OR public = (SELECT public FROM github_events "
         "ORDER BY id LIMIT 1) AND type = 'WatchEvent'",
         "SELECT count(*) FROM github_events WHERE ts = (SELECT max(ts) FROM github_events WHERE "
         "type = 'ForkEvent') OR public = (SELECT public FROM github_events ORDER BY id LIMIT 1) "
         "AND type = 'WatchEvent'",
         1);
    /* NOT IN (SELECT ...): three-valued (a NULL among the values, or none) */
    static const char *notin[] = {
        "SELECT count(*) FROM http_logs WHERE status NOT IN (SELECT status FROM http_logs WHERE "
        "status >= 400)",
        "SELECT count(*) FROM http_logs WHERE size NOT IN (SELECT size FROM http_logs WHERE "
        "status = 304 AND size IS NOT NULL)",
        "SELECT count(*) FROM http_logs WHERE size NOT IN (SELECT size FROM http_logs WHERE "
        "status = 206)", /* holds a NULL: nothing passes */
        "SELECT count(*) FROM http_logs WHERE size NOT IN (SELECT size FROM http_logs WHERE "
        "status = 999)", /* empty: everything passes, NULL sizes too */
        "SELECT count(*) FROM http_logs WHERE status = 200 AND NOT clientip IN (SELECT "
        "clientip FROM http_logs WHERE status = 404 AND request LIKE '%.gif%')",
        "SELECT clientip, count(*) FROM http_logs WHERE status >= 400 AND clientip NOT IN "
        "(SELECT clientip FROM http_logs WHERE status = 200 AND size > 30000) GROUP BY 1 ORDER "
        "BY 2 DESC, 1 LIMIT 5",
    };
    for (size_t i = 0; i < sizeof notin / sizeof *notin; i++)
        same(notin[i], notin[i], 1);
    fails("SELECT count(*) FROM http_logs WHERE clientip NOT IN (SELECT clientip FROM "
          "http_logs)",
          "0A000",
          "NOT IN (SELECT ...) of more than 1024 distinct values is not supported yet (this one "
          "has 4936) at character 47");
    fails("SELECT count(*) FROM http_logs WHERE status = (SELECT status FROM http_logs)", "21000",
          "more than one row returned by a subquery used as an expression at character 47");
    fails("SELECT (SELECT status, size FROM http_logs LIMIT 1)", "42601",
          "subquery must return only one column at character 8");
    fails("SELECT count(*) FROM http_logs a WHERE size > (SELECT avg(size) FROM http_logs b WHERE "
          "b.clientip = a.clientip)",
          "42P01",
          "missing FROM-clause entry for table \"a\" at character 101 (a subquery in an "
          "expression runs once, on its own: correlated subqueries are not supported)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_counts_and_filters),
        cmocka_unit_test(test_http_group_by),
        cmocka_unit_test(test_http_order_and_joins),
        cmocka_unit_test(test_http_outer_joins),
        cmocka_unit_test(test_github_json_paths),
        cmocka_unit_test(test_github_joins),
        cmocka_unit_test(test_scalar_subqueries),
        cmocka_unit_test(test_set_operations),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
