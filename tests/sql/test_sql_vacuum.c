/* test_sql_vacuum.c - VACUUM merges a table's segments (sql/stmt_vacuum.c):
 * 12 INSERTs (12 segments, overlapping time ranges, templated bodies whose
 * best scores tie) become ceil(rows / segment_rows) segments, each within
 * the bound and sorted by time; every row reads back the same, every count
 * is the same, and the BM25 scores of the top 50 are the same list (the
 * index-wide statistics are sums over the rows); errors name their
 * position; a table of one segment, and an empty one, are left alone. */
#include "sqltest.h"

#include <dirent.h>

#include "index/table.h"

#define NSEG 12
#define PER  300

static const char *bodies[] = {"failed to place order for user",
                               "error connecting to cache server",
                               "failed to charge card error timeout",
                               "request completed",
                               "cache miss for order",
                               "post to email service failed error error",
                               "conversion request failed"};

static int setup(void **st)
{
    (void)st;
    st_open();
    st_ok("CREATE TABLE logs (ts TIMESTAMP, msg text, svc text, n bigint) WITH (sort_column = ts)",
          "CREATE TABLE");
    st_ok("CREATE INDEX ON logs USING inverted (msg)", "CREATE INDEX");
    st_ok("CREATE INDEX ON logs USING keyword (svc)", "CREATE INDEX");
    uint64_t x = 99;
    for (int s = 0; s < NSEG; s++) {
        qr_buf sql;
        qr_buf_init(&sql);
        const char *head = "INSERT INTO logs VALUES ";
        qr_buf_put(&sql, head, strlen(head));
        for (int r = 0; r < PER; r++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            char row[256];
            /* time ranges overlap across segments: a merge interleaves them */
            int n = snprintf(row, sizeof row, "%s('2025-09-23 00:%02d:%02d', '%s%s', '%s', %d)",
                             r ? ", " : "", (int)(x % 60), (int)(x / 60 % 60),
                             bodies[x % 7], x % 53 == 0 ? " again" : "", x % 2 ? "cart" : "ad",
                             s * PER + r);
            qr_buf_put(&sql, row, (size_t)n);
        }
        qr_buf_put_u8(&sql, 0);
        st_ok((const char *)sql.p, "INSERT 0 300");
        qr_buf_free(&sql);
    }
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    st_close();
    return 0;
}

static uint32_t segments_of(const char *table, uint32_t *max_rows)
{
    qr_err e;
    qr_table *t = qr_table_open(st_dir, table, QR_TABLE_READ, &e);
    if (!t)
        fail_msg("%s", e.msg);
    uint32_t n = t->man.nsegs;
    *max_rows = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (t->man.segs[i].rows > *max_rows)
            *max_rows = (uint32_t)t->man.segs[i].rows;
        assert_true(t->man.segs[i].min_ts <= t->man.segs[i].max_ts);
    }
    qr_table_close(t);
    return n;
}

static const char *queries[] = {
    "SELECT count(*) FROM logs",
    "SELECT count(*) FROM logs WHERE msg @@ 'failed'",
    "SELECT count(*) FROM logs WHERE msg @@ 'failed' AND svc = 'cart'",
    "SELECT count(*) FROM logs WHERE msg @@ ts_phrase('place order')",
    "SELECT svc, count(*), min(n), max(n), sum(n) FROM logs GROUP BY svc ORDER BY svc",
    "SELECT bm25() FROM logs t WHERE t.msg @@ 'failed OR error' ORDER BY bm25() DESC LIMIT 50",
    "SELECT bm25() FROM logs t WHERE t.msg @@ 'again OR cache' ORDER BY bm25() DESC LIMIT 50",
    "SELECT ts, msg, svc, n FROM logs ORDER BY n",
};
#define NQ (sizeof queries / sizeof *queries)

static char *answer(const char *sql)
{
    qr_err e;
    char *out = st_run_on(&st_s, sql, NULL, &e);
    if (!out)
        fail_msg("%s: %s", sql, e.msg);
    return out;
}

static void test_vacuum_merges_and_answers_stay(void **st)
{
    (void)st;
    uint32_t max_rows;
    assert_int_equal(segments_of("logs", &max_rows), NSEG);
    char *before[NQ];
    for (size_t q = 0; q < NQ; q++)
        before[q] = answer(queries[q]);
    st_ok("VACUUM (segment_rows 1024) logs", "VACUUM");
    assert_int_equal(segments_of("logs", &max_rows), (NSEG * PER + 1023) / 1024);
    assert_int_equal(max_rows, 1024);
    for (size_t q = 0; q < NQ; q++) {
        char *now = answer(queries[q]);
        if (strcmp(now, before[q]))
            fail_msg("%s changed:\n%s\nnow:\n%s", queries[q], before[q], now);
        free(now);
    }
    /* the default (1M rows) and every table: one segment */
    st_ok("VACUUM", "VACUUM");
    assert_int_equal(segments_of("logs", &max_rows), 1);
    assert_int_equal(max_rows, NSEG * PER);
    for (size_t q = 0; q < NQ; q++) {
        char *now = answer(queries[q]);
        if (strcmp(now, before[q]))
            fail_msg("%s changed:\n%s\nnow:\n%s", queries[q], before[q], now);
        free(now);
        free(before[q]);
    }
    /* one segment: nothing to merge; PostgreSQL's options are accepted */
    st_ok("VACUUM (FULL, VERBOSE, ANALYZE) logs", "VACUUM");
    assert_int_equal(segments_of("logs", &max_rows), 1);
    st_ok("CREATE TABLE empty (a bigint)", "CREATE TABLE");
    st_ok("VACUUM empty", "VACUUM");
    assert_int_equal(segments_of("empty", &max_rows), 0);
    st_ok("DROP TABLE empty", "DROP TABLE");
}

static void test_vacuum_errors_name_the_position(void **st)
{
    (void)st;
    st_fails("VACUUM nosuch", "42P01", "relation \"nosuch\" does not exist at character 8");
    st_fails("VACUUM (bogus) logs", "42601", "unrecognized VACUUM option \"bogus\" at character 9");
    st_fails("VACUUM (segment_rows 10) logs", "22023",
             "VACUUM option segment_rows takes a number of rows from 1024 to 16777216 at "
             "character 9");
    st_fails("VACUUM (segment_rows 'x') logs", "22023",
             "VACUUM option segment_rows takes a number of rows from 1024 to 16777216 at "
             "character 9");
}

/* A corrupt block met while merging: VACUUM fails naming it, and the table
 * is as it was (its segments listed and on disk, nothing else left). */
static void test_vacuum_of_a_corrupt_segment_changes_nothing(void **st)
{
    (void)st;
    st_ok("CREATE TABLE c (ts TIMESTAMP, msg text) WITH (sort_column = ts)", "CREATE TABLE");
    for (int i = 0; i < 3; i++) {
        char sql[4096];
        int n = snprintf(sql, sizeof sql, "INSERT INTO c VALUES ");
        for (int r = 0; r < 100; r++)
            n += snprintf(sql + n, sizeof sql - (size_t)n, "%s('2025-09-23 00:00:%02d', 'row %d')",
                          r ? ", " : "", r % 60, i * 100 + r);
        st_ok(sql, "INSERT 0 100");
    }
    uint32_t max_rows;
    assert_int_equal(segments_of("c", &max_rows), 3);
    qr_err e;
    qr_table *t = qr_table_open(st_dir, "c", QR_TABLE_READ, &e);
    assert_non_null(t);
    char path[4200];
    qr_table_seg_path(t, t->man.segs[1].id, path, sizeof path);
    qr_table_close(t);
    qr_segment *sg = qr_seg_open(path, &e);
    assert_non_null(sg);
    const qr_colmeta *cm = qr_seg_colmeta(sg, qr_seg_col(sg, "msg"), &e);
    assert_non_null(cm);
    uint64_t off = cm->blocks[cm->first_data].offset + cm->blocks[cm->first_data].length / 2;
    qr_seg_close(sg);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, (long)off, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, (long)off, SEEK_SET);
    fputc(ch ^ 0x40, f);
    fclose(f);
    st_fails("VACUUM c", "XX001", NULL);
    assert_int_equal(segments_of("c", &max_rows), 3);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/c", st_dir);
    int files = 0;
    DIR *dh = opendir(dir);
    assert_non_null(dh);
    for (struct dirent *de; (de = readdir(dh));)
        files += de->d_name[0] != '.';
    closedir(dh);
    assert_int_equal(files, 3 + 2); /* the segments, MANIFEST, LOCK */
    st_ok("DROP TABLE c", "DROP TABLE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vacuum_merges_and_answers_stay),
        cmocka_unit_test(test_vacuum_errors_name_the_position),
        cmocka_unit_test(test_vacuum_of_a_corrupt_segment_changes_nothing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
