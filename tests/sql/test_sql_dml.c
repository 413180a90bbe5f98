/* test_sql_dml.c - INSERT ... VALUES / SELECT and COPY: inserted rows are
 * found exactly by count, GROUP BY and full-text search; type and NULL
 * errors carry their positions and write nothing; COPY FROM ndjson, csv
 * and text files (bad lines named by line and column); COPY TO then COPY
 * FROM gives the same rows; the streaming COPY FROM STDIN takes chunks cut
 * anywhere; two sessions inserting at once lose nothing. */
#include "sqltest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "util/fsutil.h"

static int setup(void **st)
{
    (void)st;
    st_open();
    st_ok("CREATE TABLE logs (ts timestamp NOT NULL, svc text, msg text, sev integer, "
          "big bigint, d double precision, ok boolean, j json) WITH (sort_column = ts)",
          "CREATE TABLE");
    st_ok("CREATE INDEX ON logs USING inverted (msg)", "CREATE INDEX");
    st_ok("CREATE INDEX ON logs USING keyword (svc)", "CREATE INDEX");
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    st_close();
    return 0;
}

static void test_insert_values_then_select(void **st)
{
    (void)st;
    st_ok("INSERT INTO logs VALUES "
          "('2025-01-01 00:00:03', 'cart', 'failed to place order', 17, 5000000000, 1.5, true, "
          "'{\"a\": [1, 2]}'),"
          "('2025-01-01 00:00:01', 'pay', 'order placed', 9, -1, -0.25, false, 'null'),"
          "(TIMESTAMP '2025-01-01 00:00:02', 'cart', 'cache miss', 13, NULL, NULL, 't', '\"x\"')",
          "INSERT 0 3");
    st_ok("INSERT INTO logs (svc, ts, msg) VALUES ('pay', '2025-01-01T00:00:04Z', 'Order "
          "FAILED')",
          "INSERT 0 1");
    st_rows("SELECT count(*) FROM logs", "count\n4\n");
    st_rows("SELECT count(*) FROM logs WHERE msg @@ 'failed'", "count\n2\n");
    st_rows("SELECT count(*) FROM logs WHERE msg @@ ts_all(['order', 'failed'])", "count\n2\n");
    st_rows("SELECT svc, count(*) FROM logs GROUP BY svc ORDER BY svc",
            "svc,count\ncart,2\npay,2\n");
    st_rows(
        "SELECT svc, count(*), sum(sev) FROM logs WHERE msg @@ 'order' GROUP BY svc ORDER BY svc",
        "svc,count,sum\ncart,1,17\npay,2,9\n");
    /* every value as stored, newest first */
    st_rows("SELECT ts, svc, sev, big, d, ok, j FROM logs ORDER BY ts DESC LIMIT 4",
            "ts,svc,sev,big,d,ok,j\n"
            "2025-01-01T00:00:04.000000000Z,pay,,,,,\n"
            "2025-01-01T00:00:03.000000000Z,cart,17,5000000000,1.5,true,\"{\"\"a\"\":[1,2]}\"\n"
            "2025-01-01T00:00:02.000000000Z,cart,13,,,true,\"\"\"x\"\"\"\n"
            "2025-01-01T00:00:01.000000000Z,pay,9,-1,-0.25,false,\n"); /* json null is NULL */
    st_ok("TRUNCATE logs", "TRUNCATE TABLE");
}

static void test_insert_errors_have_positions_and_write_nothing(void **st)
{
    (void)st;
    st_fails("INSERT INTO logs (ts, sev) VALUES ('2025-01-01', 1), ('2025-01-01', 'x')", "22P02",
             "invalid input syntax for an integer: \"x\" for column \"sev\" at character 69");
    st_fails("INSERT INTO logs (ts, svc) VALUES ('2025-01-01', 12)", "42804",
             "column \"svc\" is of type text but expression is of type integer at character 50");
    st_fails("INSERT INTO logs (ts, sev) VALUES ('2025-01-01', 1.5)", "42804",
             "column \"sev\" is of type integer but expression is of type numeric at character 50");
    st_fails("INSERT INTO logs (ts, sev) VALUES ('2025-01-01', 3000000000)", "22003",
             "3000000000 is out of range for column \"sev\" at character 50");
    st_fails("INSERT INTO logs (ts, ok) VALUES ('2025-01-01', 1)", "42804",
             "column \"ok\" is of type boolean but expression is of type integer at character 49");
    st_fails("INSERT INTO logs (ts, j) VALUES ('2025-01-01', '{bad')", "22P02",
             "invalid input syntax for type json: \"{bad\" for column \"j\" at character 48");
    st_fails("INSERT INTO logs (ts) VALUES ('yesterday')", "22007",
             "invalid input syntax for type timestamp (RFC 3339, UTC): \"yesterday\" for column "
             "\"ts\" at character 31");
    st_fails("INSERT INTO logs (ts, svc) VALUES (NULL, 'x')", "23502",
             "null value in column \"ts\" of relation \"logs\" violates not-null constraint at "
             "character 36");
    st_fails("INSERT INTO logs (svc) VALUES ('x')", "23502",
             "null value in column \"ts\" of relation \"logs\" violates not-null constraint at "
             "character 13");
    st_fails("INSERT INTO logs (ts, svc) VALUES ('2025-01-01', 'a', 'b')", "42601",
             "INSERT has more expressions than target columns at character 55");
    st_fails("INSERT INTO logs (ts, nope) VALUES ('2025-01-01', 1)", "42703",
             "column \"nope\" of relation \"logs\" does not exist at character 23");
    st_fails("INSERT INTO nope VALUES (1)", "42P01",
             "relation \"nope\" does not exist at character 13");
    st_fails(
        "INSERT INTO logs (ts, sev) VALUES ('2025-01-01', 1 + 1)", "0A000",
        "an operator expression in VALUES is not supported yet (constants are) at character 52");
    st_rows("SELECT count(*) FROM logs", "count\n0\n");
}

static void test_insert_select_copies_rows(void **st)
{
    (void)st;
    st_ok("CREATE TABLE src (ts timestamp NOT NULL, svc text, msg text, n bigint)", "CREATE TABLE");
    st_ok("INSERT INTO src VALUES ('2025-02-01 10:00:00', 'a', 'one', 1), "
          "('2025-02-01 10:00:01', 'b', 'two', 2), ('2025-02-01 10:00:02', 'a', 'three', NULL)",
          "INSERT 0 3");
    st_ok("INSERT INTO logs (ts, svc, msg, big) SELECT ts, svc, msg, n FROM src", "INSERT 0 3");
    st_rows("SELECT svc, count(*) FROM logs GROUP BY svc ORDER BY svc", "svc,count\na,2\nb,1\n");
    st_rows("SELECT count(*) FROM logs WHERE msg @@ 'three'", "count\n1\n");
    st_fails("INSERT INTO logs (ts, sev) SELECT ts, svc FROM src", "42804",
             "column \"sev\" is of type integer but expression is of type text");
    st_ok("DROP TABLE src", "DROP TABLE");
    st_ok("TRUNCATE logs", "TRUNCATE TABLE");
}

static void test_copy_from_files(void **st)
{
    (void)st;
    char sql[8192];
    const char *nd = st_file(0, "in.ndjson",
                             "{\"ts\":\"2025-03-01T00:00:00Z\",\"svc\":\"cart\",\"msg\":\"failed "
                             "order\",\"sev\":17}\n\n"
                             "{\"ts\":\"2025-03-01T00:00:01Z\",\"svc\":\"pay\",\"msg\":\"ok\"}\n");
    snprintf(sql, sizeof sql, "COPY logs FROM '%s' (FORMAT json)", nd);
    st_ok(sql, "COPY 2");
    const char *csv = st_file(1, "in.csv",
                              "ts,svc,msg,sev,big,d,ok,j\r\n"
                              "2025-03-01 00:00:02,cart,\"failed, \"\"twice\"\"\nagain\",13,,2.5,"
                              "yes,\"{\"\"k\"\": 1}\"\r\n"
                              "2025-03-01 00:00:03,,\"\",,7,,,\n");
    snprintf(sql, sizeof sql, "COPY logs FROM '%s' WITH (FORMAT csv, HEADER true)", csv);
    st_ok(sql, "COPY 2");
    const char *txt = st_file(2, "in.txt", "2025-03-01 00:00:04\tpay\ttab\\there\t\\N\n\\.\n");
    snprintf(sql, sizeof sql, "COPY logs (ts, svc, msg, sev) FROM '%s'", txt);
    st_ok(sql, "COPY 1");
    st_rows("SELECT ts, svc, msg, sev, big, d, ok, j FROM logs ORDER BY ts DESC LIMIT 5",
            "ts,svc,msg,sev,big,d,ok,j\n"
            "2025-03-01T00:00:04.000000000Z,pay,tab\there,,,,,\n"
            "2025-03-01T00:00:03.000000000Z,,\"\",,7,,,\n"
            "2025-03-01T00:00:02.000000000Z,cart,\"failed, \"\"twice\"\"\nagain\",13,,2.5,true,"
            "\"{\"\"k\"\":1}\"\n"
            "2025-03-01T00:00:01.000000000Z,pay,ok,,,,,\n"
            "2025-03-01T00:00:00.000000000Z,cart,failed order,17,,,,\n");
    st_rows("SELECT count(*) FROM logs WHERE msg @@ 'failed'", "count\n2\n");
    st_ok("TRUNCATE logs", "TRUNCATE TABLE");
}

static void test_copy_errors_name_file_line_and_column(void **st)
{
    (void)st;
    char sql[8192], msg[8192];
    const char *csv = st_file(0, "bad.csv",
                              "2025-03-01 00:00:00,a,x,1\n2025-03-01 00:00:01,b,\"y\nz\",2\n"
                              "2025-03-01 00:00:02,c,w,three\n");
    snprintf(sql, sizeof sql, "COPY logs (ts, svc, msg, sev) FROM '%s' (FORMAT csv)", csv);
    snprintf(msg, sizeof msg,
             "%s:4: column \"sev\": invalid input syntax for an integer: \"three\"", csv);
    st_fails(sql, "22P02", msg);
    csv = st_file(0, "short.csv", "2025-03-01 00:00:00,a\n");
    snprintf(sql, sizeof sql, "COPY logs (ts, svc, msg) FROM '%s' (FORMAT csv)", csv);
    snprintf(msg, sizeof msg, "%s:1: missing data for column \"msg\"", csv);
    st_fails(sql, "22P04", msg);
    csv = st_file(0, "quote.csv", "2025-03-01 00:00:00,a\"b\n");
    snprintf(sql, sizeof sql, "COPY logs (ts, svc) FROM '%s' (FORMAT csv)", csv);
    snprintf(msg, sizeof msg,
             "%s: line 1: a quote inside an unquoted field (quote the whole field)", csv);
    st_fails(sql, "22P04", msg);
    csv = st_file(0, "null.csv", "2025-03-01 00:00:00,a\n,b\n");
    snprintf(sql, sizeof sql, "COPY logs (ts, svc) FROM '%s' (FORMAT csv)", csv);
    snprintf(msg, sizeof msg, "%s:2: column ts: NULL in a NOT NULL column", csv);
    st_fails(sql, "23502", NULL);
    const char *nd = st_file(1, "bad.ndjson",
                             "{\"ts\":\"2025-03-01T00:00:00Z\"}\n{\"ts\":\"2025-03-01T00:00:01Z\","
                             "\"sev\":\"x\"}\n");
    snprintf(sql, sizeof sql, "COPY logs FROM '%s' (FORMAT ndjson)", nd);
    qr_err e;
    char *out = st_run_on(&st_s, sql, NULL, &e);
    assert_null(out);
    assert_string_equal(e.code, "42804");
    snprintf(msg, sizeof msg, "%s:2: ", nd);
    if (strncmp(e.msg, msg, strlen(msg)) != 0 || !strstr(e.msg, "column sev"))
        fail_msg("%s", e.msg);
    snprintf(sql, sizeof sql, "COPY logs FROM '%s/none.csv' (FORMAT csv)", st_dir);
    snprintf(msg, sizeof msg,
             "could not open file \"%s/none.csv\" for reading: No such file or directory", st_dir);
    st_fails(sql, "58030", msg);
    st_fails("COPY logs FROM STDIN", "0A000",
             "COPY FROM STDIN needs a client that sends the data (the PostgreSQL protocol; "
             "qr_sql_copy_begin): use COPY FROM 'file'");
    st_fails("COPY logs FROM '/x' (FORMAT parquet)", "0A000",
             "COPY format \"parquet\" is not supported (text, csv, json, ndjson are) at character "
             "22");
    /* nothing of the failed copies was committed */
    st_rows("SELECT count(*) FROM logs", "count\n0\n");
}

/* COPY TO in each format, then COPY FROM into a second table: the same rows. */
static void test_copy_to_then_from_round_trips(void **st)
{
    (void)st;
    st_ok("INSERT INTO logs VALUES "
          "('2025-04-01 00:00:00.123456789', 'cart', 'a, \"quoted\"\nline\twith tab\\', 1, 2, "
          "0.1, true, '{\"m\": {\"n\": null}}'),"
          "('2025-04-01 00:00:01', '', NULL, NULL, NULL, 1e300, false, '[]'),"
          "('2025-04-01 00:00:02', NULL, 'plain', -7, -9000000000, -2.5, NULL, NULL)",
          "INSERT 0 3");
    static const char *const fmts[] = {"csv", "json", "text"};
    char sql[8192];
    for (int f = 0; f < 3; f++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/out.%s", st_dir, fmts[f]);
        snprintf(sql, sizeof sql, "COPY logs TO '%s' (FORMAT %s%s)", path, fmts[f],
                 f == 0 ? ", HEADER" : "");
        st_ok(sql, "COPY 3");
        st_ok("CREATE TABLE copy2 (ts timestamp NOT NULL, svc text, msg text, sev integer, "
              "big bigint, d double precision, ok boolean, j json) WITH (sort_column = ts)",
              "CREATE TABLE");
        snprintf(sql, sizeof sql, "COPY copy2 FROM '%s' (FORMAT %s%s)", path, fmts[f],
                 f == 0 ? ", HEADER" : "");
        st_ok(sql, "COPY 3");
        qr_err e;
        char *a = st_run_on(&st_s, "SELECT * FROM logs ORDER BY ts DESC LIMIT 10", NULL, &e);
        char *b = st_run_on(&st_s, "SELECT * FROM copy2 ORDER BY ts DESC LIMIT 10", NULL, &e);
        assert_non_null(a);
        assert_non_null(b);
        if (strcmp(a, b) != 0)
            fail_msg("%s round trip:\n%s\nvs\n%s", fmts[f], a, b);
        free(a);
        free(b);
        st_ok("DROP TABLE copy2", "DROP TABLE");
    }
    /* a query's result */
    char path[4200];
    snprintf(path, sizeof path, "%s/q.csv", st_dir);
    snprintf(sql, sizeof sql,
             "COPY (SELECT svc, count(*) FROM logs GROUP BY svc ORDER BY svc) TO '%s' (FORMAT csv, "
             "HEADER true)",
             path);
    st_ok(sql, "COPY 3");
    unsigned char *text;
    size_t n;
    qr_err e;
    assert_int_equal(qr_read_file(path, &text, &n, &e), 0);
    assert_int_equal(n, strlen("svc,count\n\"\",1\ncart,1\n,1\n"));
    assert_memory_equal(text, "svc,count\n\"\",1\ncart,1\n,1\n", n);
    free(text);
    st_ok("TRUNCATE logs", "TRUNCATE TABLE");
}

/* Feed `data` to a COPY FROM STDIN in chunks of the sizes in cuts[]
 * (cycled); returns the rows copied, or -1 with e set. */
static int64_t stream(const char *sql, const char *data, const size_t *cuts, size_t ncuts,
                      qr_err *e)
{
    qr_sql_copy_in *ci = qr_sql_copy_begin(&st_s, sql, strlen(sql), e);
    if (!ci)
        return -1;
    size_t n = strlen(data), at = 0;
    for (size_t k = 0; at < n; k++) {
        size_t len = cuts[k % ncuts];
        if (len > n - at)
            len = n - at;
        if (qr_sql_copy_feed(ci, data + at, len, e) != 0)
            return -1;
        at += len;
    }
    uint64_t rows;
    return qr_sql_copy_end(ci, &rows, e) == 0 ? (int64_t)rows : -1;
}

static void test_streaming_copy_takes_any_chunks(void **st)
{
    (void)st;
    const char *csv = "ts,svc,msg\r\n"
                      "2025-05-01 00:00:00,cart,\"multi\r\nline, \"\"quoted\"\"\"\r\n"
                      "2025-05-01 00:00:01,pay,plain\n"
                      "2025-05-01 00:00:02,\"\",\n"
                      "2025-05-01 00:00:03,é日本,last without newline";
    const char *ndj = "{\"ts\":\"2025-05-01T00:00:04Z\",\"svc\":\"x\",\"msg\":\"j1\"}\r\n"
                      "\n{\"ts\":\"2025-05-01T00:00:05Z\",\"msg\":\"j2 \\u00e9\"}";
    const char *txt = "2025-05-01 00:00:06\tt\\\\ab\\tc\\nd\\101\t\n2025-05-01 00:00:07\t\\N\tz\n";
    static const size_t one[] = {1}, odd[] = {3, 1, 7, 2, 13}, all[] = {1 << 20};
    const size_t *cuts[] = {one, odd, all};
    const size_t ncuts[] = {1, 5, 1};
    char *expect = NULL;
    for (int c = 0; c < 3; c++) {
        qr_err e;
        if (stream("COPY logs (ts, svc, msg) FROM STDIN WITH (FORMAT csv, HEADER)", csv, cuts[c],
                   ncuts[c], &e) != 4 ||
            stream("COPY logs FROM STDIN (FORMAT json)", ndj, cuts[c], ncuts[c], &e) != 2 ||
            stream("COPY logs (ts, svc, msg) FROM STDIN", txt, cuts[c], ncuts[c], &e) != 2)
            fail_msg("cuts %d: %s %s", c, e.code, e.msg);
        char *got =
            st_run_on(&st_s, "SELECT ts, svc, msg FROM logs ORDER BY ts DESC LIMIT 20", NULL, &e);
        assert_non_null(got);
        if (!expect) {
            expect = got;
            assert_string_equal(
                got, "ts,svc,msg\n"
                     "2025-05-01T00:00:07.000000000Z,,z\n"
                     "2025-05-01T00:00:06.000000000Z,\"t\\ab\tc\ndA\",\"\"\n"
                     "2025-05-01T00:00:05.000000000Z,,j2 é\n"
                     "2025-05-01T00:00:04.000000000Z,x,j1\n"
                     "2025-05-01T00:00:03.000000000Z,é日本,last without newline\n"
                     "2025-05-01T00:00:02.000000000Z,\"\",\n"
                     "2025-05-01T00:00:01.000000000Z,pay,plain\n"
                     "2025-05-01T00:00:00.000000000Z,cart,\"multi\r\nline, \"\"quoted\"\"\"\n");
        } else {
            assert_string_equal(got, expect);
            free(got);
        }
        st_ok("TRUNCATE logs", "TRUNCATE TABLE");
    }
    free(expect);
    /* a bad row stops the copy and commits nothing; the session goes on */
    qr_err e;
    assert_int_equal(stream("COPY logs (ts, sev) FROM STDIN (FORMAT csv)",
                            "2025-05-01 00:00:00,1\n2025-05-01 00:00:01,x\n", odd, 5, &e),
                     -1);
    assert_string_equal(e.code, "22P02");
    assert_string_equal(e.msg,
                        "STDIN:2: column \"sev\": invalid input syntax for an integer: \"x\"");
    assert_int_equal(stream("COPY logs FROM STDIN (FORMAT csv)", "\"open\n", one, 1, &e), -1);
    assert_string_equal(e.msg, "STDIN: line 1: a quoted field is not closed");
    st_rows("SELECT count(*) FROM logs", "count\n0\n");
    /* abandoned by the client */
    const char *sql = "COPY logs (ts) FROM STDIN";
    qr_sql_copy_in *ci = qr_sql_copy_begin(&st_s, sql, strlen(sql), &e);
    assert_non_null(ci);
    assert_int_equal(qr_sql_copy_columns(ci), 1);
    assert_int_equal(qr_sql_copy_feed(ci, "2025-05-01 00:00:00\n", 20, &e), 0);
    qr_sql_copy_abort(ci);
    st_rows("SELECT count(*) FROM logs", "count\n0\n");
    assert_int_equal(qr_sql_is_copy_from_stdin(sql, strlen(sql)), 1);
    assert_int_equal(qr_sql_is_copy_from_stdin("COPY logs FROM '/x'", 19), 0);
    assert_null(qr_sql_copy_begin(&st_s, "SELECT 1", 8, &e));
    assert_string_equal(e.code, "0A000");
}

/* Many rows through the row writer: several segments, one commit. */
/* All the lines of a COPY ... TO STDOUT (malloc'ed), or NULL with e set. */
static char *copy_out(const char *sql, uint64_t *rows, qr_err *e)
{
    qr_qctx ctx;
    qr_sql_ctx_init(&st_s, &ctx, NULL);
    qr_sql_copy_out co;
    if (qr_sql_copy_out_begin(&st_s, sql, strlen(sql), &ctx, &co, e) != 0)
        return NULL;
    qr_buf b;
    qr_buf_init(&b);
    while (qr_sql_copy_out_line(&co, &b))
        ;
    qr_buf_put_u8(&b, 0);
    *rows = co.r.nrows;
    qr_sql_copy_out_free(&co);
    return (char *)b.p;
}

/* COPY TO STDOUT writes text and csv as PostgreSQL does (escapes, quotes,
 * NULLs, t/f), and COPY FROM STDIN reads what it wrote back to the same rows. */
static void test_copy_to_stdout_writes_as_postgresql_and_reads_back(void **st)
{
    (void)st;
    st_ok("INSERT INTO logs (ts, svc, msg, sev, ok) VALUES "
          "('2025-06-01 00:00:00.123456789', 'tab\there\\back\nnl\rcr\b\f\v|pipe', '', 1, true),"
          "('2025-06-01 00:00:01', NULL, '\\.', NULL, false),"
          "('2025-06-01 00:00:02', 'a,\"q\"', 'x', -2, NULL)",
          "INSERT 0 3");
    uint64_t rows;
    qr_err e;
    char *t =
        copy_out("COPY (SELECT ts, svc, msg, sev, ok FROM logs ORDER BY ts) TO STDOUT", &rows, &e);
    if (!t)
        fail_msg("%s %s", e.code, e.msg);
    assert_int_equal(rows, 3);
    assert_string_equal(t,
                        "2025-06-01T00:00:00.123456789Z\ttab\\there\\\\back\\nnl\\rcr\\b\\f\\v|pipe"
                        "\t\t1\tt\n"
                        "2025-06-01T00:00:01.000000000Z\t\\N\t\\\\.\t\\N\tf\n"
                        "2025-06-01T00:00:02.000000000Z\ta,\"q\"\tx\t-2\t\\N\n");
    free(t);
    t = copy_out("COPY (SELECT svc, msg, ok FROM logs ORDER BY ts) TO STDOUT (DELIMITER '|', "
                 "HEADER)",
                 &rows, &e);
    assert_non_null(t);
    assert_string_equal(t, "svc|msg|ok\n"
                           "tab\\there\\\\back\\nnl\\rcr\\b\\f\\v\\|pipe||t\n"
                           "\\N|\\\\.|f\n"
                           "a,\"q\"|x|\\N\n");
    free(t);
    t = copy_out("COPY (SELECT svc, msg, sev FROM logs ORDER BY ts) TO STDOUT (FORMAT csv, HEADER)",
                 &rows, &e);
    assert_non_null(t);
    assert_string_equal(t, "svc,msg,sev\n"
                           "\"tab\there\\back\nnl\rcr\b\f\v|pipe\",\"\",1\n"
                           ",\\.,\n"
                           "\"a,\"\"q\"\"\",x,-2\n");
    free(t);
    t = copy_out("COPY (SELECT msg FROM logs ORDER BY ts) TO STDOUT (FORMAT csv)", &rows, &e);
    assert_non_null(t);
    assert_string_equal(t, "\"\"\n\"\\.\"\nx\n"); /* a lone \. is quoted */
    free(t);
    /* what text and csv wrote reads back to the same rows */
    static const char *const fmts[] = {"", " (FORMAT csv)", " (FORMAT csv, DELIMITER ';')",
                                       " (FORMAT json)"};
    static const size_t cut[] = {7};
    for (int f = 0; f < 4; f++) {
        char sql[256];
        snprintf(sql, sizeof sql, "COPY logs TO STDOUT%s", fmts[f]);
        t = copy_out(sql, &rows, &e);
        assert_non_null(t);
        st_ok("CREATE TABLE copy2 (ts timestamp NOT NULL, svc text, msg text, sev integer, "
              "big bigint, d double precision, ok boolean, j json) WITH (sort_column = ts)",
              "CREATE TABLE");
        snprintf(sql, sizeof sql, "COPY copy2 FROM STDIN%s", fmts[f]);
        if (stream(sql, t, cut, 1, &e) != 3)
            fail_msg("%s: %s %s", fmts[f], e.code, e.msg);
        free(t);
        char *a = st_run_on(&st_s, "SELECT * FROM logs ORDER BY ts", NULL, &e);
        char *b = st_run_on(&st_s, "SELECT * FROM copy2 ORDER BY ts", NULL, &e);
        if (strcmp(a, b) != 0)
            fail_msg("%s round trip:\n%s\nvs\n%s", fmts[f], a, b);
        free(a);
        free(b);
        st_ok("DROP TABLE copy2", "DROP TABLE");
    }
    /* timestamps as PostgreSQL prints them (an offset of hours, "+HHMM") read too */
    static const char pgts[] = "2025-06-02 01:00:00.25+01\tpg\n2025-06-02 00:00:00-0130\tpg\n";
    assert_int_equal(stream("COPY logs (ts, svc) FROM STDIN", pgts, cut, 1, &e), 2);
    st_rows("SELECT ts FROM logs WHERE svc = 'pg' ORDER BY ts",
            "ts\n2025-06-02T00:00:00.250000000Z\n2025-06-02T01:30:00.000000000Z\n");
    st_rows("SELECT count(*) FROM logs WHERE ts = '2025-06-02 00:00:00.25+00'", "count\n1\n");
    /* errors: a bad query, a missing table; not through qr_sql_exec */
    assert_null(copy_out("COPY (SELECT nope FROM logs) TO STDOUT", &rows, &e));
    assert_string_equal(e.code, "42703");
    assert_null(copy_out("COPY nosuch TO STDOUT", &rows, &e));
    assert_string_equal(e.code, "42P01");
    assert_null(copy_out("COPY logs FROM STDIN", &rows, &e));
    assert_string_equal(e.code, "0A000");
    assert_null(copy_out("COPY logs TO STDOUT (NULL 'x')", &rows, &e));
    assert_string_equal(e.code, "0A000");
    const char *commented = " /* c */ -- x\n copy logs TO STDOUT";
    assert_int_equal(qr_sql_is_copy_to_stdout(commented, strlen(commented)), 1);
    assert_int_equal(qr_sql_is_copy_to_stdout("COPY logs TO '/x'", 17), 0);
    assert_int_equal(qr_sql_is_copy_to_stdout("copyx", 5), 0);
    st_fails("COPY logs TO STDOUT", "0A000",
             "COPY TO STDOUT needs a client that takes the rows (the PostgreSQL protocol; "
             "qr_sql_copy_out_begin): use COPY TO 'file'");
    st_ok("TRUNCATE logs", "TRUNCATE TABLE");
}

static void test_streaming_copy_many_rows_spans_segments(void **st)
{
    (void)st;
    const char *sql = "COPY logs (ts, svc, sev) FROM STDIN (FORMAT csv)";
    qr_err e;
    qr_sql_copy_in *ci = qr_sql_copy_begin(&st_s, sql, strlen(sql), &e);
    assert_non_null(ci);
    char line[128];
    const uint32_t rows = 300000;
    for (uint32_t i = 0; i < rows; i++) {
        int n = snprintf(line, sizeof line, "%lld,%s,%u\n",
                         (long long)1700000000000000000ll + i * 1000ll, i % 3 ? "a" : "b", i % 7);
        if (qr_sql_copy_feed(ci, line, (size_t)n, &e) != 0)
            fail_msg("%s", e.msg);
    }
    uint64_t got;
    assert_int_equal(qr_sql_copy_end(ci, &got, &e), 0);
    assert_int_equal(got, rows);
    st_rows("SELECT svc, count(*) FROM logs GROUP BY svc ORDER BY svc",
            "svc,count\na,200000\nb,100000\n");
    char path[4200];
    snprintf(path, sizeof path, "%s/logs/MANIFEST", st_dir);
    qr_table *t = qr_table_open(st_dir, "logs", QR_TABLE_READ, &e);
    assert_non_null(t);
    assert_int_equal(t->man.nsegs, 3); /* 131072 + 131072 + 37856 */
    qr_table_close(t);
    st_ok("TRUNCATE logs", "TRUNCATE TABLE");
}

typedef struct inserter {
    qr_sql_db *db;
    int id;
    int fails;
} inserter;

static void *insert_many(void *arg)
{
    inserter *in = arg;
    qr_sql_session s;
    qr_sql_session_init(&s, in->db);
    char sql[256], tag[64];
    for (int i = 0; i < 40; i++) {
        snprintf(sql, sizeof sql,
                 "INSERT INTO logs (ts, svc, sev) VALUES ('2025-06-01 00:00:%02d', 's%d', %d), "
                 "('2025-06-01 00:00:%02d', 's%d', %d)",
                 i % 60, in->id, i, (i + 1) % 60, in->id, i);
        qr_err e;
        char *out = st_run_on(&s, sql, tag, &e);
        if (!out || strcmp(tag, "INSERT 0 2") != 0)
            in->fails++;
        free(out);
    }
    qr_sql_close(&s);
    return NULL;
}

static void test_concurrent_inserts_all_land(void **st)
{
    (void)st;
    qr_err e;
    qr_sql_db *db = qr_sql_db_open(st_dir, 2, &e);
    assert_non_null(db);
    inserter in[3] = {{db, 0, 0}, {db, 1, 0}, {db, 2, 0}};
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, insert_many, &in[i]), 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 3; i++)
        assert_int_equal(in[i].fails, 0);
    qr_sql_db_close(db);
    st_rows("SELECT svc, count(*) FROM logs GROUP BY svc ORDER BY svc",
            "svc,count\ns0,80\ns1,80\ns2,80\n");
    st_ok("TRUNCATE logs", "TRUNCATE TABLE");
}

typedef struct waiter {
    qr_sql_db *db;
    atomic_int done;
    int ok;
} waiter;

static void *insert_one(void *arg)
{
    waiter *w = arg;
    qr_sql_session s;
    qr_sql_session_init(&s, w->db);
    char tag[64];
    qr_err e;
    char *out =
        st_run_on(&s, "INSERT INTO logs (ts, svc) VALUES ('2025-07-01', 'waited')", tag, &e);
    w->ok = out && !strcmp(tag, "INSERT 0 1");
    free(out);
    qr_sql_close(&s);
    atomic_store(&w->done, 1);
    return NULL;
}

/* A COPY FROM STDIN left open holds the table's writer slot: an INSERT
 * into that table waits for its end (and then lands), while statements on
 * other tables, DDL included, go on. */
static void test_open_copy_makes_writers_wait_not_others(void **st)
{
    (void)st;
    qr_err e;
    qr_sql_db *db = qr_sql_db_open(st_dir, 2, &e);
    assert_non_null(db);
    qr_sql_session a, c;
    qr_sql_session_init(&a, db);
    qr_sql_session_init(&c, db);
    const char *sql = "COPY logs (ts, svc) FROM STDIN (FORMAT csv)";
    qr_sql_copy_in *ci = qr_sql_copy_begin(&a, sql, strlen(sql), &e);
    assert_non_null(ci);
    if (qr_sql_copy_feed(ci, "2025-07-01 00:00:01,copied\n", 27, &e) != 0)
        fail_msg("%s %s", e.code, e.msg);
    waiter w = {.db = db};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, insert_one, &w), 0);
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);
    assert_int_equal(atomic_load(&w.done), 0); /* waiting for the copy */
    char tag[64];
    char *out = st_run_on(&c, "CREATE TABLE other (a bigint)", tag, &e);
    assert_non_null(out);
    free(out);
    out = st_run_on(&c, "DROP TABLE other", tag, &e);
    assert_non_null(out);
    free(out);
    assert_int_equal(atomic_load(&w.done), 0);
    uint64_t rows;
    assert_int_equal(qr_sql_copy_end(ci, &rows, &e), 0);
    assert_int_equal(rows, 1);
    pthread_join(t, NULL);
    assert_int_equal(w.ok, 1);
    qr_sql_close(&a);
    qr_sql_close(&c);
    qr_sql_db_close(db);
    st_rows("SELECT svc, count(*) FROM logs GROUP BY svc ORDER BY svc",
            "svc,count\ncopied,1\nwaited,1\n");
    st_ok("TRUNCATE logs", "TRUNCATE TABLE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_values_then_select),
        cmocka_unit_test(test_insert_errors_have_positions_and_write_nothing),
        cmocka_unit_test(test_insert_select_copies_rows),
        cmocka_unit_test(test_copy_from_files),
        cmocka_unit_test(test_copy_errors_name_file_line_and_column),
        cmocka_unit_test(test_copy_to_then_from_round_trips),
        cmocka_unit_test(test_streaming_copy_takes_any_chunks),
        cmocka_unit_test(test_streaming_copy_many_rows_spans_segments),
        cmocka_unit_test(test_copy_to_stdout_writes_as_postgresql_and_reads_back),
        cmocka_unit_test(test_concurrent_inserts_all_land),
        cmocka_unit_test(test_open_copy_makes_writers_wait_not_others),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
