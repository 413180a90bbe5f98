/* test_sql_set.c - SET / SHOW / RESET and transactions: values with units
 * shown as PostgreSQL shows them, the settings applied to the statements
 * that follow (a timeout cancels with 57014, a memory limit fails with
 * 53200 and RESET lifts it), text settings kept per session, UTF8 and UTC
 * only, SET LOCAL until the end of its transaction. */
#include "sqltest.h"

#include <time.h>

static int setup(void **st)
{
    (void)st;
    st_open();
    st_ok("CREATE TABLE t (ts timestamp NOT NULL, s text, n bigint) WITH (sort_column = ts)",
          "CREATE TABLE");
    st_ok("CREATE INDEX ON t USING inverted (s)", "CREATE INDEX");
    st_ok("INSERT INTO t VALUES ('2025-01-01', 'a b', 1), ('2025-01-02', 'b c', 2)", "INSERT 0 2");
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    st_close();
    return 0;
}

static void test_numeric_settings_show_with_units(void **st)
{
    (void)st;
    st_rows("SHOW statement_timeout", "statement_timeout\n0\n");
    st_ok("SET statement_timeout = '5s'", "SET");
    st_rows("SHOW statement_timeout", "statement_timeout\n5s\n");
    assert_int_equal(st_s.set.statement_timeout_ms, 5000);
    st_ok("SET statement_timeout TO 1500", "SET");
    st_rows("SHOW statement_timeout", "statement_timeout\n1500ms\n");
    st_ok("SET statement_timeout = '2min'", "SET");
    st_rows("SHOW statement_timeout", "statement_timeout\n2min\n");
    st_ok("SET statement_timeout = '1.5 s'", "SET");
    assert_int_equal(st_s.set.statement_timeout_ms, 1500);
    st_fails("SET statement_timeout = '5 parsecs'", "22023",
             "invalid value for parameter \"statement_timeout\": \"5 parsecs\" (unknown unit "
             "\"parsecs\")");
    st_fails("SET statement_timeout = -1", "22023",
             "invalid value for parameter \"statement_timeout\": \"-1\"");
    st_ok("RESET statement_timeout", "RESET");
    assert_int_equal(st_s.set.statement_timeout_ms, 0);
    st_rows("SHOW lock_timeout", "lock_timeout\n10s\n");
    st_ok("SET lock_timeout = '250ms'", "SET");
    assert_int_equal(st_s.set.lock_timeout_ms, 250);
    st_rows("SHOW lock_timeout", "lock_timeout\n250ms\n");
    st_ok("SET lock_timeout = 0", "SET");
    st_rows("SHOW lock_timeout", "lock_timeout\n0\n");
    st_ok("RESET lock_timeout", "RESET");
    assert_int_equal(st_s.set.lock_timeout_ms, 10000);

    st_rows("SHOW memory_limit", "memory_limit\n2GB\n");
    st_ok("SET memory_limit = '512MB'", "SET");
    assert_int_equal(st_s.set.memory_limit, 512ull << 20);
    st_rows("SHOW quarry.memory_limit", "quarry.memory_limit\n512MB\n");
    st_ok("SET quarry.memory_limit TO 1536", "SET");
    st_rows("SHOW memory_limit", "memory_limit\n1536B\n");
    st_ok("SET memory_limit TO DEFAULT", "SET");
    assert_int_equal(st_s.set.memory_limit, QR_QCTX_DEFAULT_LIMIT);

    st_ok("SET threads = 1", "SET");
    st_rows("SHOW threads", "threads\n1\n");
    st_fails("SET threads = 3", "22023", "threads must be 1..2 (the database's pool), not 3");
    st_fails("SET threads = 0", "22023", "threads must be 1..2 (the database's pool), not 0");
    st_ok("RESET ALL", "RESET");
    st_rows("SHOW threads", "threads\n2\n");
}

/* The timeout becomes the statement's deadline; a statement past it stops
 * with 57014 and commits nothing. */
static void test_statement_timeout_cancels(void **st)
{
    (void)st;
    st_ok("SET statement_timeout = '5s'", "SET");
    qr_qctx ctx;
    int64_t t0 = qr_qctx_now_ns();
    qr_sql_ctx_init(&st_s, &ctx, NULL);
    assert_true(ctx.deadline_ns >= t0 + 5000000000ll);
    assert_true(ctx.deadline_ns <= qr_qctx_now_ns() + 5000000000ll);
    /* a COPY of a few MiB checks the deadline after each read */
    char path[4200];
    snprintf(path, sizeof path, "%s/big.csv", st_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < 120000; i++)
        fprintf(f, "%lld,row number %d with some words to fill it,%d\n", 1700000000000000000ll + i,
                i, i);
    fclose(f);
    char sql[4400];
    snprintf(sql, sizeof sql, "COPY t FROM '%s' (FORMAT csv)", path);
    st_ok("SET statement_timeout = 1", "SET");
    qr_sql_ctx_init(&st_s, &ctx, NULL);
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL); /* past the 1 ms deadline */
    qr_result r;
    qr_result_init(&r, &ctx);
    qr_err e;
    assert_int_equal(qr_sql_exec(&st_s, sql, strlen(sql), &r, &e), -1);
    assert_string_equal(e.code, "57014");
    qr_result_free(&r);
    assert_int_equal(ctx.used, 0);
    st_ok("RESET statement_timeout", "RESET");
    st_rows("SELECT count(*) FROM t", "count\n2\n");
    st_ok(sql, "COPY 120000");
    st_rows("SELECT count(*) FROM t", "count\n120002\n");
}

static void test_memory_limit_then_reset(void **st)
{
    (void)st;
    st_ok("SET memory_limit = '1kB'", "SET");
    qr_err e;
    char *out = st_run_on(&st_s, "SELECT count(*) FROM t WHERE s @@ 'b'", NULL, &e);
    assert_null(out);
    assert_string_equal(e.code, "53200");
    st_ok("RESET memory_limit", "RESET");
    st_rows("SELECT count(*) FROM t WHERE s @@ 'b'", "count\n2\n");
}

static void test_text_settings(void **st)
{
    (void)st;
    st_rows("SHOW application_name", "application_name\n\"\"\n");
    st_ok("SET application_name = 'psql'", "SET");
    st_rows("SHOW application_name", "application_name\npsql\n");
    st_ok("SET DateStyle = ISO, MDY", "SET");
    st_rows("SHOW datestyle", "DateStyle\n\"ISO, MDY\"\n");
    st_ok("SET search_path TO a, \"$user\"", "SET");
    st_rows("SHOW search_path", "search_path\n\"a, $user\"\n");
    st_ok("SET extra_float_digits = 3", "SET");
    st_rows("SHOW extra_float_digits", "extra_float_digits\n3\n");
    st_ok("SET my.custom = 'x'", "SET");
    st_rows("SHOW my.custom", "my.custom\nx\n");
    st_ok("SET client_encoding TO 'utf-8'", "SET");
    st_rows("SHOW client_encoding", "client_encoding\nUTF8\n");
    st_fails("SET client_encoding = 'LATIN1'", "22023",
             "client_encoding \"LATIN1\" is not supported: Quarry speaks UTF8 only");
    st_ok("SET TIME ZONE 'UTC'", "SET");
    st_ok("SET TimeZone = 'Etc/UTC'", "SET");
    st_rows("SHOW timezone", "TimeZone\nUTC\n");
    st_fails("SET TIME ZONE 'Europe/Paris'", "22023",
             "time zone \"Europe/Paris\" is not supported: timestamps are UTC (SET TimeZone = "
             "'UTC')");
    st_fails("SHOW nope", "42704", "unrecognized configuration parameter \"nope\"");
    st_fails("SET server_version = '9'", "55P02", "parameter \"server_version\" cannot be changed");
    st_rows("SHOW server_version", "server_version\n15.0\n");
    char buf[64];
    qr_err e;
    assert_int_equal(qr_sql_set(&st_s, "Application_Name", "server", &e), 0);
    assert_int_equal(qr_sql_show(&st_s, "application_name", buf, sizeof buf, &e), 0);
    assert_string_equal(buf, "server");
    st_ok("RESET application_name", "RESET");
    st_rows("SHOW application_name", "application_name\n\"\"\n");
    st_ok("RESET ALL", "RESET");
    st_fails("SHOW my.custom", "42704", "unrecognized configuration parameter \"my.custom\"");
    st_rows("SHOW DateStyle", "DateStyle\n\"ISO, MDY\"\n"); /* the default again */
}

static void test_transactions_and_set_local(void **st)
{
    (void)st;
    st_ok("BEGIN", "BEGIN");
    st_ok("INSERT INTO t VALUES ('2025-02-01', 'in a transaction', 3)", "INSERT 0 1");
    st_ok("COMMIT", "COMMIT");
    st_ok("START TRANSACTION", "BEGIN");
    st_ok("ROLLBACK", "ROLLBACK"); /* sql/tx.h: test_sql_tx has the rows of blocks */
    st_ok("END", "COMMIT");
    st_ok("ABORT", "ROLLBACK");
    st_rows("SELECT count(*) FROM t WHERE s @@ 'transaction'", "count\n1\n");
    st_fails("SAVEPOINT a", "0A000",
             "savepoints and prepared transactions are not supported (BEGIN, COMMIT and "
             "ROLLBACK are)");
    /* SET LOCAL outside a transaction does nothing */
    st_ok("SET LOCAL statement_timeout = '7s'", "SET");
    st_rows("SHOW statement_timeout", "statement_timeout\n0\n");
    /* inside one, until its end; a plain SET in it stays */
    st_ok("SET application_name = 'before'", "SET");
    st_ok("BEGIN", "BEGIN");
    st_ok("SET LOCAL statement_timeout = '7s'", "SET");
    st_ok("SET LOCAL application_name = 'local'", "SET");
    st_ok("SET LOCAL application_name = 'local2'", "SET");
    st_ok("SET LOCAL my.here = 'here'", "SET");
    st_ok("SET threads = 1", "SET");
    st_rows("SHOW statement_timeout", "statement_timeout\n7s\n");
    st_rows("SHOW application_name", "application_name\nlocal2\n");
    st_ok("COMMIT", "COMMIT");
    st_rows("SHOW statement_timeout", "statement_timeout\n0\n");
    st_rows("SHOW application_name", "application_name\nbefore\n");
    st_fails("SHOW my.here", "42704", "unrecognized configuration parameter \"my.here\"");
    st_rows("SHOW threads", "threads\n1\n");
    st_ok("RESET ALL", "RESET");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numeric_settings_show_with_units),
        cmocka_unit_test(test_statement_timeout_cancels),
        cmocka_unit_test(test_memory_limit_then_reset),
        cmocka_unit_test(test_text_settings),
        cmocka_unit_test(test_transactions_and_set_local),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
