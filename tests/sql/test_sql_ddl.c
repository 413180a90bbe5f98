/* test_sql_ddl.c - CREATE TABLE (types, NOT NULL, IF NOT EXISTS, 42P07,
 * unknown types with their position), DROP TABLE (IF EXISTS, files gone,
 * the name reusable with another definition), CREATE INDEX (on an empty
 * table, and on one with segments), TRUNCATE and SHOW TABLES. */
#include "sqltest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

static int setup(void **st)
{
    (void)st;
    st_open();
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    st_close();
    return 0;
}

static void test_create_table_maps_postgres_types(void **st)
{
    (void)st;
    st_ok("CREATE TABLE events (ts TIMESTAMP NOT NULL, tz timestamptz, ns TIMESTAMP_NS, "
          "body text, name varchar(20), big bigint, i integer, small smallint, "
          "d double precision, f8 float8, ok boolean, j jsonb, m map, u ubigint) "
          "WITH (sort_column = ts)",
          "CREATE TABLE");
    qr_catalog c;
    qr_err e;
    assert_int_equal(qr_catalog_load(st_dir, &c, &e), 0);
    const qr_tabdef *d = qr_catalog_find(&c, "events");
    assert_non_null(d);
    static const int types[] = {QT_TIMESTAMP, QT_TIMESTAMP, QT_TIMESTAMP, QT_TEXT,    QT_TEXT,
                                QT_INT64,     QT_INT32,     QT_INT16,     QT_FLOAT64, QT_FLOAT64,
                                QT_BOOL,      QT_JSON,      QT_MAP,       QT_UINT64};
    assert_int_equal(d->ncols, 14);
    for (uint32_t i = 0; i < d->ncols; i++)
        assert_int_equal(d->cols[i].type, types[i]);
    assert_int_equal(d->cols[0].nullable, 0);
    assert_int_equal(d->cols[1].nullable, 1);
    assert_int_equal(d->sort_col, 0);
    assert_string_equal(d->cols[3].name, "body");
    qr_catalog_free(&c);
    st_rows("SHOW TABLES", "name\nevents\n");
    st_ok("DROP TABLE events", "DROP TABLE");
}

static void test_create_table_errors_name_the_position(void **st)
{
    (void)st;
    st_fails("CREATE TABLE t (a int, b strng)", "42704",
             "type \"strng\" does not exist at character 26");
    st_fails("CREATE TABLE t (a numeric)", "0A000",
             "type \"numeric\" is not supported (text, bigint, integer, smallint, double "
             "precision, boolean, timestamp, json, map are) at character 19");
    st_fails("CREATE TABLE t (a int PRIMARY KEY)", "0A000",
             "column constraints other than NOT NULL and NULL are not supported (no DEFAULT, "
             "PRIMARY KEY, UNIQUE, CHECK or REFERENCES) at character 23");
    st_fails("CREATE TABLE t (a int, A text)", "22023",
             "column \"a\" defined twice (names ignore case) at character 24");
    st_fails("CREATE TABLE t (a int) WITH (sort_column = a)", "22023",
             "sort_column must name a timestamp column of the table at character 30");
    /* nothing was created by the failures */
    st_rows("SHOW TABLES", "name\n");
}

static void test_create_twice_and_if_not_exists(void **st)
{
    (void)st;
    st_ok("CREATE TABLE t (a bigint)", "CREATE TABLE");
    st_fails("CREATE TABLE t (a bigint)", "42P07", "relation \"t\" already exists at character 14");
    st_fails("CREATE TABLE T (b text)", "42P07",
             "relation \"t\" already exists (with another definition) at character 14");
    st_ok("CREATE TABLE IF NOT EXISTS t (a bigint)", "CREATE TABLE");
    st_ok("CREATE TABLE IF NOT EXISTS t (b text)", "CREATE TABLE");
    st_rows("SHOW TABLES", "name\nt\n");
    st_ok("DROP TABLE t", "DROP TABLE");
}

static void test_drop_removes_files_and_frees_the_name(void **st)
{
    (void)st;
    st_ok("CREATE TABLE t (a bigint, s text)", "CREATE TABLE");
    st_ok("INSERT INTO t VALUES (1, 'x'), (2, 'y')", "INSERT 0 2");
    st_rows("SELECT count(*) FROM t", "count\n2\n");
    char path[4200];
    snprintf(path, sizeof path, "%s/t", st_dir);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    st_ok("DROP TABLE t", "DROP TABLE");
    assert_int_not_equal(stat(path, &sb), 0); /* the directory and its segments are gone */
    st_fails("SELECT count(*) FROM t", "42P01", "relation \"t\" does not exist at character 22");
    st_fails("DROP TABLE t", "42P01", "table \"t\" does not exist");
    st_ok("DROP TABLE IF EXISTS t", "DROP TABLE");
    /* the same name with another definition: no old row, no old column */
    st_ok("CREATE TABLE t (b text)", "CREATE TABLE");
    st_rows("SELECT count(*) FROM t", "count\n0\n");
    st_ok("INSERT INTO t VALUES ('z')", "INSERT 0 1");
    st_rows("SELECT b FROM t", "b\nz\n");
    st_fails("SELECT a FROM t", "42703", "column \"a\" does not exist at character 8");
    st_ok("DROP TABLE IF EXISTS nope, t", "DROP TABLE");
    st_rows("SHOW TABLES", "name\n");
}

static void test_create_index_then_search(void **st)
{
    (void)st;
    st_ok("CREATE TABLE logs (ts timestamp NOT NULL, svc text, msg text, sev integer) "
          "WITH (sort_column = ts)",
          "CREATE TABLE");
    st_ok("CREATE INDEX ON logs USING inverted (msg) INCLUDE (svc)", "CREATE INDEX");
    st_ok("CREATE INDEX service ON logs USING keyword (svc)", "CREATE INDEX");
    st_ok("CREATE INDEX ON logs (sev)", "CREATE INDEX"); /* btree: a range index */
    st_fails("CREATE INDEX ON logs USING inverted (msg)", "42P07",
             "relation \"logs\" already has a fulltext index on \"msg\" at character 17");
    st_ok("CREATE INDEX IF NOT EXISTS x ON logs USING inverted (msg)", "CREATE INDEX");
    st_fails("CREATE INDEX ON logs USING bloom (msg)", "42704",
             "access method \"bloom\" does not exist (inverted, keyword, range, paths, btree) at "
             "character 17");
    st_fails("CREATE INDEX ON logs USING inverted (nope)", "42703",
             "column \"nope\" does not exist at character 17");
    st_fails("CREATE INDEX ON nope USING inverted (msg)", "42P01",
             "relation \"nope\" does not exist at character 17");
    qr_catalog c;
    qr_err e;
    assert_int_equal(qr_catalog_load(st_dir, &c, &e), 0);
    const qr_tabdef *d = qr_catalog_find(&c, "logs");
    assert_int_equal(d->nixs, 3);
    assert_int_equal(d->ixs[0].kind, QR_IX_FULLTEXT);
    assert_int_equal(d->ixs[1].kind, QR_IX_KEYWORD);
    assert_string_equal(d->ixs[1].name, "service");
    assert_int_equal(d->ixs[2].kind, QR_IX_RANGE);
    qr_catalog_free(&c);
    st_ok("INSERT INTO logs VALUES ('2025-01-01 00:00:02', 'cart', 'failed to place order', 17),"
          " ('2025-01-01 00:00:01', 'pay', 'order placed', 9),"
          " ('2025-01-01 00:00:03', 'cart', 'cache miss', 13)",
          "INSERT 0 3");
    st_rows("SELECT count(*) FROM logs WHERE msg @@ 'order'", "count\n2\n");
    st_rows("SELECT count(*) FROM logs WHERE msg @@ ts_phrase('place', 'order')", "count\n1\n");
    st_rows("SELECT svc, count(*) FROM logs WHERE sev >= 13 GROUP BY svc", "svc,count\ncart,2\n");
    st_rows("SELECT ts, svc FROM logs WHERE svc = 'cart' ORDER BY ts DESC LIMIT 1",
            "ts,svc\n2025-01-01T00:00:03.000000000Z,cart\n");
    /* a table with segments: they are rewritten with the new index, the
     * same rows in the same order */
    st_ok("INSERT INTO logs VALUES ('2025-01-01 00:00:00', 'db', 'slow query', 5)", "INSERT 0 1");
    qr_err e2;
    char *before = st_run_on(&st_s, "SELECT * FROM logs", NULL, &e2);
    assert_non_null(before);
    st_fails("SELECT count(*) FROM logs WHERE svc @@ 'cart'", "0A000",
             "column \"svc\" has no full-text index: @@ needs one at character 33");
    st_ok("CREATE INDEX ON logs USING inverted (svc)", "CREATE INDEX");
    st_rows("SELECT count(*) FROM logs WHERE svc @@ 'cart'", "count\n2\n");
    st_rows("SELECT count(*) FROM logs WHERE msg @@ 'order' OR svc @@ 'db'", "count\n3\n");
    char *after = st_run_on(&st_s, "SELECT * FROM logs", NULL, &e2);
    assert_non_null(after);
    assert_string_equal(before, after);
    free(before);
    free(after);
    qr_table *t = qr_table_open(st_dir, "logs", QR_TABLE_READ, &e2);
    assert_non_null(t);
    assert_int_equal(t->man.nsegs, 2); /* one per segment it had */
    assert_int_equal(t->man.segs[0].id, 2);
    qr_table_close(t);
    char path[4200];
    snprintf(path, sizeof path, "%s/logs/seg-0000000000000000.qseg", st_dir);
    assert_int_not_equal(access(path, F_OK), 0); /* the old files are gone */
    st_ok("DROP TABLE logs", "DROP TABLE");
}

static void test_truncate_empties_the_table(void **st)
{
    (void)st;
    st_ok("CREATE TABLE t (a bigint)", "CREATE TABLE");
    st_ok("INSERT INTO t VALUES (1), (2), (3)", "INSERT 0 3");
    st_ok("INSERT INTO t VALUES (4)", "INSERT 0 1");
    st_rows("SELECT count(*) FROM t", "count\n4\n");
    st_ok("TRUNCATE t", "TRUNCATE TABLE");
    st_rows("SELECT count(*) FROM t", "count\n0\n");
    /* the segment files are gone; the table takes rows again */
    char path[4200];
    snprintf(path, sizeof path, "%s/t/seg-0000000000000000.qseg", st_dir);
    assert_int_not_equal(access(path, F_OK), 0);
    st_ok("INSERT INTO t VALUES (5)", "INSERT 0 1");
    st_rows("SELECT a FROM t", "a\n5\n");
    st_ok("TRUNCATE TABLE t", "TRUNCATE TABLE");
    st_ok("CREATE INDEX ON t (a)", "CREATE INDEX");
    st_fails("TRUNCATE nope", "42P01", "relation \"nope\" does not exist at character 10");
    st_ok("DROP TABLE t", "DROP TABLE");
}

static void test_unsupported_statements_say_so(void **st)
{
    (void)st;
    st_fails("UPDATE t SET a = 1", "0A000",
             "UPDATE is not supported yet (SELECT, EXPLAIN, SET, SHOW, CREATE TABLE, CREATE "
             "INDEX, DROP TABLE, TRUNCATE, ALTER TABLE SET (retention), INSERT, DELETE, COPY "
             "and CREATE/ALTER/DROP USER are)");
    st_fails("DROP INDEX x", "0A000", "DROP of anything but a table is not supported yet");
    st_fails("CREATE TABLE s.t (a int)", "0A000",
             "schema \"s\" is not supported (tables live in public) at character 14");
    st_ok("CREATE TABLE public.t (a int)", "CREATE TABLE");
    st_ok("DROP TABLE public.t", "DROP TABLE");
}

typedef struct counter {
    qr_sql_db *db;
    atomic_int stop, runs;
    int wrong;
} counter;

static void *count_loop(void *arg)
{
    counter *c = arg;
    qr_sql_session s;
    qr_sql_session_init(&s, c->db);
    while (!atomic_load(&c->stop)) {
        qr_err e;
        char *out = st_run_on(&s, "SELECT count(*) FROM big", NULL, &e);
        if (!out || strcmp(out, "count\n40000\n") != 0)
            c->wrong++;
        free(out);
        atomic_fetch_add(&c->runs, 1);
    }
    qr_sql_close(&s);
    return NULL;
}

/* Queries running while CREATE INDEX rewrites the segments see every row. */
static void test_create_index_with_queries_running(void **st)
{
    (void)st;
    st_ok("CREATE TABLE big (ts timestamp NOT NULL, msg text) WITH (sort_column = ts)",
          "CREATE TABLE");
    qr_err e;
    const char *sql = "COPY big FROM STDIN (FORMAT csv)";
    qr_sql_copy_in *ci = qr_sql_copy_begin(&st_s, sql, strlen(sql), &e);
    assert_non_null(ci);
    char line[96];
    for (int i = 0; i < 40000; i++) {
        int n = snprintf(line, sizeof line, "%lld,message %d %s\n",
                         1700000000000000000ll + i * 1000ll, i, i % 4 ? "fine" : "failed");
        assert_int_equal(qr_sql_copy_feed(ci, line, (size_t)n, &e), 0);
    }
    uint64_t rows;
    assert_int_equal(qr_sql_copy_end(ci, &rows, &e), 0);
    qr_sql_db *db = qr_sql_db_open(st_dir, 2, &e);
    assert_non_null(db);
    counter c = {.db = db};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, count_loop, &c), 0);
    qr_sql_session s;
    qr_sql_session_init(&s, db);
    char tag[64];
    while (atomic_load(&c.runs) == 0)
        ;
    int before = atomic_load(&c.runs);
    char *out = st_run_on(&s, "CREATE INDEX ON big USING inverted (msg)", tag, &e);
    if (!out)
        fail_msg("%s %s", e.code, e.msg);
    free(out);
    assert_true(atomic_load(&c.runs) > before); /* queries ran during the rewrite */
    out = st_run_on(&s, "SELECT count(*) FROM big WHERE msg @@ 'failed'", tag, &e);
    assert_non_null(out);
    assert_string_equal(out, "count\n10000\n");
    free(out);
    atomic_store(&c.stop, 1);
    pthread_join(t, NULL);
    qr_sql_close(&s);
    qr_sql_db_close(db);
    assert_int_equal(c.wrong, 0);
    st_ok("DROP TABLE big", "DROP TABLE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_table_maps_postgres_types),
        cmocka_unit_test(test_create_table_errors_name_the_position),
        cmocka_unit_test(test_create_twice_and_if_not_exists),
        cmocka_unit_test(test_drop_removes_files_and_frees_the_name),
        cmocka_unit_test(test_create_index_then_search),
        cmocka_unit_test(test_truncate_empties_the_table),
        cmocka_unit_test(test_create_index_with_queries_running),
        cmocka_unit_test(test_unsupported_statements_say_so),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
