/* test_sql_tx.c - transaction blocks (sql/tx.h): the rows of a block's
 * INSERTs and COPYs are published at COMMIT and only then, dropped by
 * ROLLBACK, by an error in the block (which then refuses every statement
 * but COMMIT / ROLLBACK with 25P02, and whose COMMIT rolls back), and by a
 * session that ends before COMMIT; so a client retrying a block it never
 * saw committed stores its rows once. In a database that writes segments
 * directly and in a live one (log and live segments), with a block whose
 * rows pass a batch, blocks waiting for a table at most lock_timeout, and
 * the status ReadyForQuery reports. */
#include "sqltest.h"

#include <dirent.h>

#include "sql/live.h"
#include "sql/rows.h"

static void make_table(void)
{
    st_ok("CREATE TABLE t (ts timestamp NOT NULL, s text, n bigint) WITH (sort_column = ts)",
          "CREATE TABLE");
    st_ok("CREATE INDEX ON t USING inverted (s)", "CREATE INDEX");
    st_ok("INSERT INTO t VALUES ('2025-01-01', 'before', 1)", "INSERT 0 1");
}

static void go_live(void)
{
    qr_live_opts o;
    qr_live_opts_default(&o);
    o.refresh_ms = 60000; /* rows stay in the log and live segments */
    o.merge = 0;
    qr_err e;
    if (qr_sql_db_live(st_s.db, &o, &e) != 0)
        fail_msg("live: %s", e.msg);
}

static const char *count_sql = "SELECT count(*), sum(n) FROM t";

/* COPY FROM STDIN of data through session s in one piece: the rows, or -1
 * with e set (the COPY aborted when a feed fails, as a server does). */
static int64_t copy_in(qr_sql_session *s, const char *data, qr_err *e)
{
    const char *sql = "COPY t FROM STDIN WITH (FORMAT json)";
    qr_sql_copy_in *ci = qr_sql_copy_begin(s, sql, strlen(sql), e);
    if (!ci)
        return -1;
    if (qr_sql_copy_feed(ci, data, strlen(data), e) != 0)
        return -1;
    uint64_t rows;
    return qr_sql_copy_end(ci, &rows, e) == 0 ? (int64_t)rows : -1;
}

/* Segment files in the table's directory and its live/ directory. */
static int seg_files(void)
{
    int n = 0;
    const char *sub[2] = {"t", "t/live"};
    for (int k = 0; k < 2; k++) {
        char dir[4300];
        snprintf(dir, sizeof dir, "%s/%s", st_dir, sub[k]);
        DIR *d = opendir(dir);
        if (!d)
            continue;
        for (struct dirent *de; (de = readdir(d));)
            n += !strncmp(de->d_name, "seg-", 4);
        closedir(d);
    }
    return n;
}

static void block_commits_and_rolls_back(void)
{
    assert_int_equal(qr_sql_tx_status(&st_s), 'I');
    st_ok("BEGIN", "BEGIN");
    assert_int_equal(qr_sql_tx_status(&st_s), 'T');
    st_ok("INSERT INTO t VALUES ('2025-01-02', 'in a block', 2), ('2025-01-03', 'in a block', 3)",
          "INSERT 0 2");
    qr_err e;
    assert_int_equal(copy_in(&st_s,
                             "{\"ts\":\"2025-01-04T00:00:00Z\",\"s\":\"copied\",\"n\":4}\n"
                             "{\"ts\":\"2025-01-05T00:00:00Z\",\"s\":\"copied\",\"n\":5}\n",
                             &e),
                     2);
    st_ok("INSERT INTO t VALUES ('2025-01-06', 'in a block', 6)", "INSERT 0 1");
    /* not published yet: not to this session, not to another */
    st_rows(count_sql, "count,sum\n1,1\n");
    qr_sql_session other;
    qr_sql_session_init(&other, st_s.db);
    char *out = st_run_on(&other, count_sql, NULL, &e);
    assert_string_equal(out, "count,sum\n1,1\n");
    free(out);
    st_ok("COMMIT", "COMMIT");
    assert_int_equal(qr_sql_tx_status(&st_s), 'I');
    st_rows(count_sql, "count,sum\n6,21\n");
    out = st_run_on(&other, "SELECT n FROM t WHERE s @@ 'copied' ORDER BY n", NULL, &e);
    assert_string_equal(out, "n\n4\n5\n");
    free(out);
    /* ROLLBACK drops a block's rows, INSERTs and COPY alike */
    st_ok("START TRANSACTION", "BEGIN");
    st_ok("INSERT INTO t VALUES ('2025-01-07', 'rolled back', 100)", "INSERT 0 1");
    assert_int_equal(copy_in(&st_s, "{\"ts\":\"2025-01-08T00:00:00Z\",\"n\":200}\n", &e), 1);
    st_ok("ROLLBACK", "ROLLBACK");
    st_rows(count_sql, "count,sum\n6,21\n");
    /* a session that ends in a block: its rows go (a dropped connection) */
    char tag[64];
    free(st_run_on(&other, "BEGIN", tag, &e));
    out =
        st_run_on(&other, "INSERT INTO t VALUES ('2025-01-09', 'never committed', 1000)", tag, &e);
    assert_non_null(out);
    free(out);
    assert_int_equal(copy_in(&other, "{\"ts\":\"2025-01-10T00:00:00Z\",\"n\":2000}\n", &e), 1);
    qr_sql_close(&other);
    st_rows(count_sql, "count,sum\n6,21\n");
    /* retried by a new session, committed: the rows are there once */
    qr_sql_session_init(&other, st_s.db);
    free(st_run_on(&other, "BEGIN", tag, &e));
    free(st_run_on(&other, "INSERT INTO t VALUES ('2025-01-09', 'committed', 1000)", tag, &e));
    assert_int_equal(copy_in(&other, "{\"ts\":\"2025-01-10T00:00:00Z\",\"n\":2000}\n", &e), 1);
    out = st_run_on(&other, "COMMIT", tag, &e);
    assert_non_null(out);
    assert_string_equal(tag, "COMMIT");
    free(out);
    qr_sql_close(&other);
    st_rows(count_sql, "count,sum\n8,3021\n");
}

static void test_block_direct(void **st)
{
    (void)st;
    st_open();
    make_table();
    block_commits_and_rolls_back();
    assert_int_equal(seg_files(), 3); /* the first INSERT, the block, the retry */
    st_close();
}

static void test_block_live(void **st)
{
    (void)st;
    st_open();
    make_table();
    go_live();
    block_commits_and_rolls_back();
    assert_int_equal(seg_files(), 3); /* a live segment per committed block */
    st_close();
}

/* An error in a block fails it: every statement but COMMIT / ROLLBACK is
 * refused, COMMIT rolls back; a COPY cut short fails it too. */
static void test_error_fails_the_block(void **st)
{
    (void)st;
    st_open();
    make_table();
    go_live();
    st_ok("BEGIN", "BEGIN");
    st_ok("INSERT INTO t VALUES ('2025-01-02', 'good', 2)", "INSERT 0 1");
    st_fails("INSERT INTO t VALUES ('2025-01-03', 'bad', 'three')", "22P02", NULL);
    assert_int_equal(qr_sql_tx_status(&st_s), 'E');
    const char *aborted =
        "current transaction is aborted, commands ignored until end of transaction block";
    st_fails(count_sql, "25P02", aborted);
    st_fails("INSERT INTO t VALUES ('2025-01-04', 'good', 4)", "25P02", aborted);
    qr_err e;
    assert_int_equal(copy_in(&st_s, "{\"ts\":\"2025-01-05T00:00:00Z\",\"n\":5}\n", &e), -1);
    assert_string_equal(e.code, "25P02");
    st_fails("SET threads = 1", "25P02", aborted);
    st_ok("COMMIT", "ROLLBACK");
    assert_int_equal(qr_sql_tx_status(&st_s), 'I');
    st_rows(count_sql, "count,sum\n1,1\n");
    /* a COPY whose data is bad, after rows of the block */
    st_ok("BEGIN", "BEGIN");
    assert_int_equal(copy_in(&st_s, "{\"ts\":\"2025-01-05T00:00:00Z\",\"n\":5}\n", &e), 1);
    assert_int_equal(copy_in(&st_s,
                             "{\"ts\":\"2025-01-06T00:00:00Z\",\"n\":6}\n"
                             "{\"ts\":\"2025-01-07T00:00:00Z\",\"n\":\"seven\"}\n",
                             &e),
                     -1);
    assert_int_equal(qr_sql_tx_status(&st_s), 'E');
    st_ok("END", "ROLLBACK");
    st_rows(count_sql, "count,sum\n1,1\n");
    /* a parse error fails it as well; ROLLBACK ends it */
    st_ok("BEGIN", "BEGIN");
    st_ok("INSERT INTO t VALUES ('2025-01-02', 'good', 2)", "INSERT 0 1");
    st_fails("SELEC 1", "42601", NULL);
    st_ok("ROLLBACK", "ROLLBACK");
    st_rows(count_sql, "count,sum\n1,1\n");
    /* statements that cannot follow a block's writes */
    st_ok("BEGIN", "BEGIN");
    st_ok("SET LOCAL threads = 1", "SET"); /* before any write: anything goes */
    st_ok("INSERT INTO t VALUES ('2025-01-02', 'good', 2)", "INSERT 0 1");
    st_rows("SHOW threads", "threads\n1\n");
    st_fails("TRUNCATE t", "25001",
             "this statement cannot run in a transaction block that has written rows (COMMIT or "
             "ROLLBACK first)");
    st_ok("COMMIT", "ROLLBACK");
    st_rows(count_sql, "count,sum\n1,1\n");
    st_close();
}

/* A block writes at most QR_TX_TABLES tables: the next fails it (54000),
 * and none of the rows it wrote stays. */
static void test_a_block_writes_at_most_16_tables(void **st)
{
    (void)st;
    st_open();
    char sql[160];
    for (int i = 0; i <= 16; i++) {
        snprintf(sql, sizeof sql, "CREATE TABLE w%d (ts timestamp NOT NULL, n bigint)", i);
        st_ok(sql, "CREATE TABLE");
    }
    st_ok("BEGIN", "BEGIN");
    for (int i = 0; i < 16; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO w%d VALUES ('2025-01-01', %d)", i, i);
        st_ok(sql, "INSERT 0 1");
    }
    st_fails("INSERT INTO w16 VALUES ('2025-01-01', 16)", "54000",
             "a transaction block writes at most 16 tables");
    assert_int_equal(qr_sql_tx_status(&st_s), 'E');
    st_ok("COMMIT", "ROLLBACK");
    st_rows("SELECT count(*) FROM w0", "count\n0\n");
    st_rows("SELECT count(*) FROM w15", "count\n0\n");
    st_close();
}

/* A block's rows past a batch go to unpublished segments (the writer
 * turns direct): COMMIT publishes them all, ROLLBACK removes them. */
static void test_big_block(void **st)
{
    (void)st;
    st_open();
    make_table();
    go_live();
    enum { ROWS = QR_ROWS_SEGMENT_ROWS + 1000 };
    qr_buf data;
    qr_buf_init(&data);
    for (int i = 0; i < ROWS; i++) {
        char line[128];
        int n = snprintf(line, sizeof line,
                         "{\"ts\":\"2025-02-01T00:00:00Z\",\"s\":\"big\",\"n\":%d}\n", i % 10);
        qr_buf_put(&data, line, (size_t)n);
    }
    qr_buf_put_u8(&data, 0);
    qr_err e;
    for (int commit = 0; commit < 2; commit++) {
        st_ok("BEGIN", "BEGIN");
        assert_int_equal(copy_in(&st_s, (const char *)data.p, &e), ROWS);
        st_ok("INSERT INTO t VALUES ('2025-02-02', 'big', 7)", "INSERT 0 1");
        st_rows(count_sql, "count,sum\n1,1\n");
        st_ok(commit ? "COMMIT" : "ROLLBACK", commit ? "COMMIT" : "ROLLBACK");
        if (!commit) {
            st_rows(count_sql, "count,sum\n1,1\n");
            assert_int_equal(seg_files(), 1); /* the segments written are gone */
        }
    }
    char want[64];
    snprintf(want, sizeof want, "count,sum\n%d,%lld\n", ROWS + 2,
             1 + 7 + (long long)(ROWS / 10) * 45 + (ROWS % 10) * (ROWS % 10 - 1) / 2);
    st_rows(count_sql, want);
    qr_buf_free(&data);
    st_close();
}

/* Two blocks that need one table's writer slot (a database without a
 * log: a block holds it from its first write): the second waits its
 * lock_timeout, then 55P03 fails it; after the first commits, its retry
 * goes through. */
static void test_blocks_wait_for_a_table_at_most_lock_timeout(void **st)
{
    (void)st;
    st_open();
    make_table();
    st_rows("SHOW lock_timeout", "lock_timeout\n10s\n");
    st_ok("BEGIN", "BEGIN");
    st_ok("INSERT INTO t VALUES ('2025-01-02', 'first', 2)", "INSERT 0 1");
    qr_sql_session b;
    qr_sql_session_init(&b, st_s.db);
    qr_err e;
    char tag[64];
    free(st_run_on(&b, "SET lock_timeout = '50ms'", tag, &e));
    free(st_run_on(&b, "BEGIN", tag, &e));
    assert_null(st_run_on(&b, "INSERT INTO t VALUES ('2025-01-03', 'second', 3)", tag, &e));
    assert_string_equal(e.code, "55P03");
    assert_string_equal(e.msg, "table t: another writer (a transaction block or a COPY) has held "
                               "it for 50 ms; retry");
    assert_int_equal(qr_sql_tx_status(&b), 'E');
    free(st_run_on(&b, "ROLLBACK", tag, &e));
    st_ok("COMMIT", "COMMIT");
    free(st_run_on(&b, "BEGIN", tag, &e));
    free(st_run_on(&b, "INSERT INTO t VALUES ('2025-01-03', 'second', 3)", tag, &e));
    free(st_run_on(&b, "COMMIT", tag, &e));
    assert_string_equal(tag, "COMMIT");
    qr_sql_close(&b);
    st_rows(count_sql, "count,sum\n3,6\n");
    st_close();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_direct),
        cmocka_unit_test(test_block_live),
        cmocka_unit_test(test_error_fails_the_block),
        cmocka_unit_test(test_a_block_writes_at_most_16_tables),
        cmocka_unit_test(test_big_block),
        cmocka_unit_test(test_blocks_wait_for_a_table_at_most_lock_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
