/* test_sql_live.c - a database running live (sql/live.h, sql/merge.h):
 * rows acknowledged into the write-ahead log are seen by the next query at
 * once, from live segments, before any commit; a copy of the data
 * directory taken while rows are only in the log and live segments (what
 * a crash leaves) recovers them exactly once, also with a torn last
 * record; a commit that fails keeps the live segments and a retry commits
 * them all; TRUNCATE and DROP take live rows with them; a writer past the
 * uncommitted-rows limit is refused with 53000 while the flusher cannot
 * commit; the merge policy picks runs of
 * adjacent small segments; background merges bound the segment count and
 * leave every row, count and BM25 score as it was; retention (CREATE TABLE
 * WITH and ALTER TABLE SET / RESET) drops expired segments and trims one
 * that straddles the limit; DELETE takes waiting rows too, and merges
 * running beside it never bring deleted rows back. */
#include "sqltest.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "index/table.h"
#include "sql/db.h"
#include "sql/live.h"
#include "sql/merge.h"
#include "sql/rows.h"
#include "util/fsutil.h"

#include <errno.h>

static void live(uint32_t refresh_ms, int merge)
{
    qr_live_opts o;
    qr_live_opts_default(&o);
    o.refresh_ms = refresh_ms;
    o.merge = merge;
    qr_err e;
    if (qr_sql_db_live(st_s.db, &o, &e) != 0)
        fail_msg("live: %s", e.msg);
}

/* Live, no commit by age, writers waiting at most 100 ms for room. */
static void live_limited(size_t max_pending, uint32_t max_unmerged, int merge)
{
    qr_live_opts o;
    qr_live_opts_default(&o);
    o.refresh_ms = 60000;
    o.max_pending = max_pending;
    o.max_unmerged = max_unmerged;
    o.pending_wait_ms = 100;
    o.merge = merge;
    qr_err e;
    if (qr_sql_db_live(st_s.db, &o, &e) != 0)
        fail_msg("live: %s", e.msg);
}

static int count_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        n += !strncmp(de->d_name, prefix, strlen(prefix));
    if (d)
        closedir(d);
    return n;
}

static qr_manifest manifest_of(const char *datadir, const char *table)
{
    qr_err e;
    qr_table *t = qr_table_open(datadir, table, QR_TABLE_READ, &e);
    if (!t)
        fail_msg("open %s: %s", table, e.msg);
    qr_manifest m = t->man;
    m.segs = malloc(sizeof *m.segs * (m.nsegs ? m.nsegs : 1));
    if (m.nsegs)
        memcpy(m.segs, t->man.segs, sizeof *m.segs * m.nsegs);
    qr_table_close(t);
    return m;
}

static void insert_rows(int from, int n)
{
    qr_buf sql;
    qr_buf_init(&sql);
    const char *head = "INSERT INTO t VALUES ";
    qr_buf_put(&sql, head, strlen(head));
    for (int i = from; i < from + n; i++) {
        char row[160];
        int k = snprintf(row, sizeof row, "%s('2025-01-01 00:%02d:%02d', 'row %d %s', %d)",
                         i > from ? ", " : "", i / 60 % 60, i % 60, i,
                         i % 3 ? "failed to place order" : "request completed", i);
        qr_buf_put(&sql, row, (size_t)k);
    }
    qr_buf_put_u8(&sql, 0);
    char tag[64];
    snprintf(tag, sizeof tag, "INSERT 0 %d", n);
    st_ok((const char *)sql.p, tag);
    qr_buf_free(&sql);
}

static void make_table(void)
{
    st_ok("CREATE TABLE t (ts TIMESTAMP, msg text, n bigint)", "CREATE TABLE");
    st_ok("CREATE INDEX ON t USING inverted (msg)", "CREATE INDEX");
}

/* Copy the data directory as it is on disk now: what a SIGKILL leaves. */
static char *crash_image(void)
{
    char *img = tu_tmpdir();
    char cmd[9000];
    snprintf(cmd, sizeof cmd, "cp -a %s/. %s/", st_dir, img);
    assert_int_equal(system(cmd), 0);
    return img;
}

static void test_acknowledged_rows_are_seen_and_survive_a_crash(void **st)
{
    (void)st;
    st_open();
    make_table();
    live(60000, 0); /* no commit by age: rows stay in the log and live segments */
    insert_rows(0, 10);
    insert_rows(10, 5);
    char tdir[4200], ldir[4300];
    snprintf(tdir, sizeof tdir, "%s/t", st_dir);
    snprintf(ldir, sizeof ldir, "%s/t/live", st_dir);
    assert_int_equal(count_files(tdir, "wal-"), 1);
    assert_int_equal(count_files(ldir, "seg-"), 2); /* one per statement */
    qr_manifest m = manifest_of(st_dir, "t");
    assert_int_equal(m.nsegs, 0); /* in the log only */
    assert_int_equal(m.wal_seq, 0);
    free(m.segs);
    /* seen at once, committed or not, with the indexes */
    st_rows("SELECT count(*), sum(n) FROM t", "count,sum\n15,105\n");
    st_rows("SELECT count(*) FROM t WHERE msg @@ 'failed'", "count\n10\n");
    m = manifest_of(st_dir, "t");
    assert_int_equal(m.nsegs, 0);
    free(m.segs);

    /* what a crash now leaves: the log, no segment */
    char *img = crash_image();
    /* a torn record at the log's end, as a write cut by the crash leaves */
    char wal[4300];
    snprintf(wal, sizeof wal, "%s/t/wal-0000000000000001.log", img);
    FILE *f = fopen(wal, "ab");
    assert_non_null(f);
    fwrite("QWR1\x40\x00\x00\x00garbage", 1, 15, f);
    fclose(f);

    /* a commit merges both live segments into one table segment */
    qr_err fe;
    assert_int_equal(qr_live_flush(st_s.db, "t", &fe), 0);
    m = manifest_of(st_dir, "t");
    assert_int_equal(m.nsegs, 1);
    assert_int_equal(m.segs[0].rows, 15);
    assert_int_equal(m.wal_seq, 2);
    free(m.segs);
    assert_int_equal(count_files(ldir, "seg-"), 0);
    st_rows("SELECT count(*), sum(n) FROM t", "count,sum\n15,105\n");
    st_close();

    /* recovery of the image: both records, once, the torn tail cut, the
     * live segments it holds not read */
    qr_sql_session s2;
    qr_err e;
    if (qr_sql_open(&s2, img, 1, &e) != 0)
        fail_msg("recover: %s", e.msg);
    char *out = st_run_on(&s2, "SELECT count(*), count(DISTINCT n), sum(n) FROM t", NULL, &e);
    assert_non_null(out);
    assert_string_equal(out, "count,count,sum\n15,15,105\n");
    free(out);
    qr_manifest m2 = manifest_of(img, "t");
    assert_int_equal(m2.wal_seq, 2);
    free(m2.segs);
    snprintf(ldir, sizeof ldir, "%s/t/live", img);
    assert_int_equal(count_files(ldir, "seg-"), 0);
    qr_sql_close(&s2);
    /* recovered once: opening again adds nothing */
    if (qr_sql_open(&s2, img, 1, &e) != 0)
        fail_msg("reopen: %s", e.msg);
    out = st_run_on(&s2, "SELECT count(*) FROM t", NULL, &e);
    assert_string_equal(out, "count\n15\n");
    free(out);
    qr_sql_close(&s2);
    tu_rmdir(img);
}

static void test_visibility_setting_is_kept_and_rows_are_seen(void **st)
{
    (void)st;
    st_open();
    make_table();
    live(60000, 0);
    st_fails("SET visibility = 'soon'", "22023",
             "visibility must be acknowledged or refreshed, not \"soon\"");
    st_ok("SET visibility = refreshed", "SET");
    st_rows("SHOW visibility", "visibility\nrefreshed\n");
    insert_rows(0, 4);
    st_rows("SELECT count(*) FROM t", "count\n4\n"); /* either value: no wait, every row */
    st_ok("SET visibility = acknowledged", "SET");
    st_rows("SELECT count(*) FROM t", "count\n4\n");
    st_ok("RESET visibility", "RESET");
    insert_rows(4, 1);
    st_rows("SELECT count(*) FROM t", "count\n5\n");
    qr_manifest m = manifest_of(st_dir, "t");
    assert_int_equal(m.nsegs, 0);
    free(m.segs);
    st_close();
}

static void test_a_failed_commit_keeps_the_rows_and_retries(void **st)
{
    (void)st;
    st_open();
    make_table();
    live(60000, 0);
    for (int i = 0; i < 60; i++) /* 60 live segments: fewer than a commit waits for */
        insert_rows(i * 3, 3);
    /* the commit's first write fails (the merged segment file: the log is
     * not written while nobody inserts); the rows stay live and seen, and
     * the retry commits them all */
    qr_fault_set(QR_FAULT_WRITE, 1, ENOSPC);
    qr_err e;
    assert_int_equal(qr_live_flush(st_s.db, "t", &e), -1);
    assert_true(qr_fault_seen() >= 1);
    qr_fault_set(QR_FAULT_OFF, 0, 0);
    assert_string_equal(e.code, QR_E_DISK_FULL);
    qr_manifest m = manifest_of(st_dir, "t");
    assert_int_equal(m.nsegs, 0);
    free(m.segs);
    st_rows("SELECT count(*), count(DISTINCT n), sum(n) FROM t", "count,count,sum\n180,180,16110\n");
    assert_int_equal(qr_live_flush(st_s.db, "t", &e), 0);
    m = manifest_of(st_dir, "t");
    assert_int_equal(m.wal_seq, 60);
    assert_int_equal(m.nsegs, 1);
    free(m.segs);
    st_rows("SELECT count(*), count(DISTINCT n), sum(n) FROM t", "count,count,sum\n180,180,16110\n");
    st_close();
}

/* A commit links a live segment of 16384 rows or more into the table as it
 * is (its bytes unchanged) and merges runs of smaller ones. */
static void test_commit_links_big_live_segments_and_merges_small_ones(void **st)
{
    (void)st;
    st_open();
    make_table();
    live(60000, 0);
    insert_rows(0, 3);
    /* 20000 rows in one statement: more SQL text than a statement may
     * have, so through the writer INSERT and COPY FROM STDIN use (the
     * same rows insert_rows writes) */
    qr_rowwriter w;
    qr_err we;
    assert_int_equal(qr_rows_begin(&w, st_s.db, "t", 0, NULL, &we), 0);
    for (int i = 3; i < 20003; i++) {
        char line[200];
        int k = snprintf(line, sizeof line,
                         "{\"ts\":\"2025-01-01 00:%02d:%02d\",\"msg\":\"row %d %s\",\"n\":%d}",
                         i / 60 % 60, i % 60, i, i % 3 ? "failed to place order" : "request completed",
                         i);
        if (qr_rows_add(&w, line, (size_t)k, &we) != 0)
            fail_msg("row %d: %s", i, we.msg);
    }
    uint64_t added;
    assert_int_equal(qr_rows_commit(&w, &added, &we), 0);
    assert_int_equal(added, 20000);
    insert_rows(20003, 2);
    insert_rows(20005, 3);
    char ldir[4300];
    snprintf(ldir, sizeof ldir, "%s/t/live", st_dir);
    assert_int_equal(count_files(ldir, "seg-"), 4);
    qr_err e;
    assert_int_equal(qr_live_flush(st_s.db, "t", &e), 0);
    qr_manifest m = manifest_of(st_dir, "t");
    assert_int_equal(m.nsegs, 3); /* 3 alone, 20000 linked, 2 + 3 merged */
    assert_int_equal(m.segs[0].rows, 3);
    assert_int_equal(m.segs[1].rows, 20000);
    assert_int_equal(m.segs[2].rows, 5);
    assert_int_equal(m.wal_seq, 4);
    free(m.segs);
    assert_int_equal(count_files(ldir, "seg-"), 0);
    st_rows("SELECT count(*), count(DISTINCT n), sum(n), min(n), max(n) FROM t",
            "count,count,sum,min,max\n20008,20008,200150028,0,20007\n");
    st_rows("SELECT count(*) FROM t WHERE msg @@ 'failed'", "count\n13338\n");
    st_close();
}

/* A writer inserting while the flusher commits every few milliseconds and
 * the merger merges: each query, taken between two acknowledgements, sees
 * every row acknowledged before it and none twice (a live segment is read
 * from the live list or from the manifest, never both, never neither). */
enum { RACE_STMTS = 150, RACE_ROWS = 3 };
static atomic_int race_acked;

static void *race_writer(void *arg)
{
    qr_sql_session *s = arg;
    for (int i = 0; i < RACE_STMTS; i++) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "INSERT INTO t VALUES ('2025-01-01 00:00:00', 'race %d failed', %d), "
                 "('2025-01-01 00:00:01', 'race %d ok', %d), ('2025-01-01 00:00:02', 'race', %d)",
                 i, i, i, i, i);
        qr_err e;
        char *out = st_run_on(s, sql, NULL, &e);
        if (!out)
            fail_msg("%s: %s", sql, e.msg);
        free(out);
        atomic_store(&race_acked, i + 1);
    }
    return NULL;
}

static void test_queries_during_commits_see_each_row_once(void **st)
{
    (void)st;
    st_open();
    make_table();
    live(2, 1);
    atomic_store(&race_acked, 0);
    qr_sql_session w;
    qr_sql_session_init(&w, st_s.db);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, race_writer, &w), 0);
    int checks = 0, last = 0;
    while (atomic_load(&race_acked) < RACE_STMTS) {
        int before = atomic_load(&race_acked);
        qr_err e;
        char *out = st_run_on(&st_s, "SELECT count(*), count(DISTINCT n) FROM t", NULL, &e);
        int after = atomic_load(&race_acked);
        if (!out)
            fail_msg("count: %s", e.msg);
        int c = -1, d = -1;
        if (sscanf(out, "count,count\n%d,%d", &c, &d) != 2)
            fail_msg("count: %s", out);
        free(out);
        /* whole statements, at least those acknowledged before, at most one
         * more than those acknowledged after (durable, not yet answered) */
        if (c % RACE_ROWS || c != d * RACE_ROWS || c < before * RACE_ROWS ||
            c > (after + 1) * RACE_ROWS || c < last)
            fail_msg("count %d (distinct %d) between %d and %d statements acknowledged (last %d)",
                     c, d, before, after, last);
        last = c;
        checks++;
    }
    pthread_join(th, NULL);
    qr_sql_close(&w);
    char want[64];
    snprintf(want, sizeof want, "count\n%d\n", RACE_STMTS * RACE_ROWS);
    st_rows("SELECT count(*) FROM t", want);
    snprintf(want, sizeof want, "count\n%d\n", RACE_STMTS);
    st_rows("SELECT count(*) FROM t WHERE msg @@ 'failed'", want);
    assert_true(checks > 10);
    st_close();
}

/* CREATE INDEX in a live database: on a table without rows it is usable
 * at once; on one whose rows are all in live segments (written without
 * it) the statement commits them with it and builds it before returning,
 * so the next query uses it and counts every row. */
static void test_create_index_over_live_rows(void **st)
{
    (void)st;
    st_open();
    live(60000, 1);
    make_table(); /* CREATE INDEX on the empty table */
    insert_rows(0, 3);
    st_rows("SELECT count(*) FROM t WHERE msg @@ 'failed'", "count\n2\n");
    st_rows("SELECT indisvalid FROM pg_index", "indisvalid\ntrue\n");
    st_ok("CREATE TABLE u (ts TIMESTAMP, msg text, n bigint)", "CREATE TABLE");
    st_ok("INSERT INTO u VALUES ('2025-01-01 00:00:00', 'a failed', 1), "
          "('2025-01-01 00:00:01', 'b ok', 2)",
          "INSERT 0 2");
    qr_manifest m = manifest_of(st_dir, "u");
    assert_int_equal(m.nsegs, 0); /* live only */
    free(m.segs);
    st_ok("CREATE INDEX ON u USING inverted (msg)", "CREATE INDEX");
    st_ok("INSERT INTO u VALUES ('2025-01-01 00:00:02', 'c failed', 3)", "INSERT 0 1");
    st_rows("SELECT n FROM u WHERE msg @@ 'failed' ORDER BY n", "n\n1\n3\n");
    st_rows("SELECT indisvalid FROM pg_index ORDER BY indexrelid", "indisvalid\ntrue\ntrue\n");
    st_close();
}

static void test_truncate_and_drop_take_waiting_rows(void **st)
{
    (void)st;
    st_open();
    make_table();
    live(60000, 0);
    insert_rows(0, 7);
    st_ok("TRUNCATE t", "TRUNCATE TABLE");
    st_rows("SELECT count(*) FROM t", "count\n0\n");
    insert_rows(100, 3);
    st_rows("SELECT count(*), min(n) FROM t", "count,min\n3,100\n");
    insert_rows(200, 4); /* waiting when the table goes */
    st_ok("DROP TABLE t", "DROP TABLE");
    char tdir[4200];
    snprintf(tdir, sizeof tdir, "%s/t", st_dir);
    assert_int_equal(access(tdir, F_OK), -1); /* log and all */
    make_table();
    st_rows("SELECT count(*) FROM t", "count\n0\n");
    insert_rows(300, 2);
    st_rows("SELECT count(*), min(n) FROM t", "count,min\n2,300\n");
    st_close();
}

static void test_waiting_rows_limit_refuses_with_53000(void **st)
{
    (void)st;
    st_open();
    make_table();
    live_limited(64, QR_LIVE_MAX_UNMERGED, 0); /* one small statement's record passes 64 */
    qr_err e;
    insert_rows(0, 3); /* the first waits for nobody */
    /* the flusher cannot commit while the table's writer slot is held */
    assert_int_equal(qr_sqldb_writer_begin(st_s.db, "t", &e), 0);
    char *out = st_run_on(&st_s, "INSERT INTO t VALUES ('2025-01-01 00:00:00', 'x', 1)", NULL, &e);
    assert_null(out);
    assert_string_equal(e.code, QR_E_BUSY);
    assert_non_null(strstr(e.msg, "retry later"));
    st_rows("SELECT count(*) FROM t", "count\n3\n");
    /* a waiting writer makes the flusher commit at once: room again */
    qr_sqldb_writer_end(st_s.db, "t");
    insert_rows(3, 1);
    st_rows("SELECT count(*) FROM t", "count\n4\n");
    st_close();
}

/* Segments the merger has not merged past max_unmerged: writers wait for
 * it, then get 53000; once the table has fewer (here VACUUM merged them),
 * writes go on. */
static void test_unmerged_segments_limit_refuses_with_53000(void **st)
{
    (void)st;
    st_open();
    make_table();
    live_limited((size_t)64 << 20, 2, 1);
    qr_err e;
    for (int i = 0; i < 3; i++) { /* three commits: three small segments, no run to merge */
        insert_rows(i * 2, 2);
        assert_int_equal(qr_live_flush(st_s.db, "t", &e), 0);
    }
    char *out = st_run_on(&st_s, "INSERT INTO t VALUES ('2025-01-01 00:00:00', 'x', 1)", NULL, &e);
    assert_null(out);
    assert_string_equal(e.code, QR_E_BUSY);
    assert_string_equal(e.msg, "table t: 3 segments wait to be merged (limit 2); retry later");
    st_ok("VACUUM t", "VACUUM");
    insert_rows(6, 1);
    st_rows("SELECT count(*), sum(n) FROM t", "count,sum\n7,21\n");
    st_close();
}

static void test_merge_policy(void **st)
{
    (void)st;
    enum { N = 200 };
    static qr_seg_entry s[N];
    static uint64_t raw[N];
    memset(s, 0, sizeof s);
    uint32_t first, n;
    /* small: 8 or more adjacent commits under QR_MERGE_BASE_ROWS */
    for (int i = 0; i < N; i++)
        s[i].rows = 1000;
    assert_int_equal(qr_merge_pick(s, NULL, 7, 0, &first, &n), 0); /* fewer than 8: nothing */
    assert_int_equal(qr_merge_pick(s, NULL, 8, 0, &first, &n), 1);
    assert_int_equal(first, 0);
    assert_int_equal(n, 8);
    assert_int_equal(qr_merge_pick(s, NULL, 100, 0, &first, &n), 1);
    assert_int_equal(n, QR_MERGE_MAX_RUN);
    /* final segments split runs; only adjacent segments merge */
    for (int i = 0; i < 40; i++)
        s[i].rows = i % 5 == 0 ? QR_MERGE_FINAL_ROWS : 1000;
    assert_int_equal(qr_merge_pick(s, NULL, 40, 0, &first, &n), 0);
    /* small ones first: 8 small ones after 8 larger ones */
    for (int i = 0; i < 16; i++)
        s[i].rows = i < 8 ? 100000 : 2000;
    assert_int_equal(qr_merge_pick(s, NULL, 16, 0, &first, &n), 1);
    assert_int_equal(first, 8);
    assert_int_equal(n, 8);
    /* to final: commits of 20,000 rows wait until a prefix of the run
     * reaches QR_MERGE_FINAL_ROWS (53 of them), then merge once */
    for (int i = 0; i < N; i++)
        s[i].rows = 20000;
    assert_int_equal(qr_merge_pick(s, NULL, 52, 0, &first, &n), 0);
    assert_int_equal(qr_merge_pick(s, NULL, 53, 0, &first, &n), 1);
    assert_int_equal(first, 0);
    assert_int_equal(n, 53);
    assert_int_equal(qr_merge_pick(s, NULL, N, 0, &first, &n), 1);
    assert_int_equal(first, 0);
    assert_int_equal(n, 53);
    /* idle: a run of 8 or more short of a final size merges whole */
    assert_int_equal(qr_merge_pick(s, NULL, 52, 1, &first, &n), 1);
    assert_int_equal(first, 0);
    assert_int_equal(n, 52);
    assert_int_equal(qr_merge_pick(s, NULL, 7, 1, &first, &n), 0);
    /* after a final segment, the next run's prefix */
    s[3].rows = QR_MERGE_FINAL_ROWS + 5;
    assert_int_equal(qr_merge_pick(s, NULL, N, 0, &first, &n), 1);
    assert_int_equal(first, 4);
    assert_int_equal(n, 53);
    assert_int_equal(qr_merge_pick(s, NULL, 12, 1, &first, &n), 1);
    assert_int_equal(first, 4);
    assert_int_equal(n, 8);
    /* mixed sizes: small ones among larger ones are taken along */
    for (int i = 0; i < N; i++)
        s[i].rows = i % 2 ? 100000 : 2000;
    assert_int_equal(qr_merge_pick(s, NULL, 21, 0, &first, &n), 0); /* 1,022,000 rows */
    assert_int_equal(qr_merge_pick(s, NULL, 22, 0, &first, &n), 1);
    assert_int_equal(first, 0);
    assert_int_equal(n, 22);
    /* or QR_MERGE_MAX_RUN segments, whatever their rows */
    for (int i = 0; i < N; i++)
        s[i].rows = i % 4 ? QR_MERGE_BASE_ROWS : 10;
    assert_int_equal(qr_merge_pick(s, NULL, QR_MERGE_MAX_RUN - 1, 0, &first, &n), 0);
    assert_int_equal(qr_merge_pick(s, NULL, QR_MERGE_MAX_RUN, 0, &first, &n), 1);
    assert_int_equal(first, 0);
    assert_int_equal(n, QR_MERGE_MAX_RUN);
    /* wide rows: value bytes make a run final before its rows do, and a
     * segment of half of QR_MERGE_LINE_BYTES is final (never merged again:
     * a merge of such segments would only rewrite each alone) */
    for (int i = 0; i < N; i++) {
        s[i].rows = 20000;
        raw[i] = QR_MERGE_LINE_BYTES / 8;
    }
    assert_int_equal(qr_merge_pick(s, raw, 8, 0, &first, &n), 0); /* a ninth might fit */
    assert_int_equal(qr_merge_pick(s, raw, 9, 0, &first, &n), 1);
    assert_int_equal(first, 0);
    assert_int_equal(n, 8);
    raw[3] = QR_MERGE_LINE_BYTES / 2 - 1;
    assert_int_equal(qr_merge_pick(s, raw, 9, 0, &first, &n), 1);
    assert_int_equal(n, 5);
    for (int i = 0; i < N; i++)
        raw[i] = i % 3 ? QR_MERGE_LINE_BYTES / 2 : QR_MERGE_LINE_BYTES / 4;
    assert_int_equal(qr_merge_pick(s, raw, N, 0, &first, &n), 0);
    /* whatever the policy picks stays one merged segment: within
     * QR_MERGE_SEG_ROWS rows and QR_MERGE_LINE_BYTES of values */
    uint64_t seed = 7;
    for (int round = 0; round < 2000; round++) {
        for (int i = 0; i < N; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t r = seed >> 33;
            s[i].rows = r % 7 == 0 ? QR_MERGE_FINAL_ROWS + r % 1000 : 1 + r % 600000;
            raw[i] = (seed >> 13) % (QR_MERGE_LINE_BYTES / 3);
        }
        if (!qr_merge_pick(s, raw, N, round & 1, &first, &n))
            continue;
        uint64_t rows = 0, bytes = 0;
        for (uint32_t i = first; i < first + n; i++) {
            rows += s[i].rows;
            bytes += raw[i];
            assert_true(s[i].rows < QR_MERGE_FINAL_ROWS && raw[i] < QR_MERGE_LINE_BYTES / 2);
        }
        assert_true(n >= 2);
        assert_true(rows <= QR_MERGE_SEG_ROWS);
        assert_true(bytes <= QR_MERGE_LINE_BYTES);
        /* and makes a final segment, unless idle or cut by its count */
        if (!(round & 1) && n < QR_MERGE_MAX_RUN)
            assert_true(rows >= QR_MERGE_FINAL_ROWS || bytes >= QR_MERGE_LINE_BYTES / 2 ||
                        (n >= QR_MERGE_FACTOR && rows < QR_MERGE_BASE_ROWS * (uint64_t)n));
    }
}

static void test_background_merges_keep_rows_and_scores(void **st)
{
    (void)st;
    st_open();
    make_table();
    /* 21 segments written before the database runs live */
    for (int i = 0; i < 21; i++)
        insert_rows(i * 50, 50);
    const char *q = "SELECT n, bm25() FROM t WHERE msg @@ 'failed order' ORDER BY bm25() DESC "
                    "LIMIT 40";
    const char *c = "SELECT count(*), count(DISTINCT n), sum(n), min(ts), max(ts) FROM t";
    qr_err e;
    char *scores = st_run_on(&st_s, q, NULL, &e);
    char *counts = st_run_on(&st_s, c, NULL, &e);
    assert_non_null(scores);
    assert_non_null(counts);
    assert_string_equal(counts, "count,count,sum,min,max\n1050,1050,550725,"
                                "2025-01-01T00:00:00.000000000Z,2025-01-01T00:17:29.000000000Z\n");
    qr_manifest m = manifest_of(st_dir, "t");
    assert_int_equal(m.nsegs, 21);
    free(m.segs);
    live(20, 1); /* the merger takes every table of the catalog */
    uint32_t nsegs = 99;
    for (int i = 0; i < 400 && nsegs >= QR_MERGE_FACTOR; i++) {
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
        m = manifest_of(st_dir, "t");
        nsegs = m.nsegs;
        free(m.segs);
    }
    assert_true(nsegs < QR_MERGE_FACTOR);
    /* same rows, same counts, same scores (index-wide statistics are sums) */
    char *after = st_run_on(&st_s, c, NULL, &e);
    assert_string_equal(after, counts);
    free(after);
    after = st_run_on(&st_s, q, NULL, &e);
    assert_string_equal(after, scores);
    free(after);
    char mdir[4300];
    snprintf(mdir, sizeof mdir, "%s/t/merge", st_dir);
    assert_int_equal(count_files(mdir, "seg-"), 0); /* nothing left beside the table */
    free(scores);
    free(counts);
    st_close();
}

/* DELETE while rows arrive and the merger runs: rows acknowledged just
 * before it (still in the log) are deleted too, every tag is the count of
 * live matching rows an array here keeps, merges that read a segment
 * before a DELETE never bring its rows back, and a crash image after the
 * last DELETE holds exactly the rows left. */
static void test_delete_with_waiting_rows_and_merges(void **st)
{
    (void)st;
    enum { ROUNDS = 30, PER_ROUND = 40 };
    static uint8_t alive[ROUNDS * PER_ROUND];
    memset(alive, 0, sizeof alive);
    st_open();
    make_table();
    live(20, 1);
    for (int r = 0; r < ROUNDS; r++) {
        insert_rows(r * PER_ROUND, PER_ROUND);
        for (int i = r * PER_ROUND; i < (r + 1) * PER_ROUND; i++)
            alive[i] = 1;
        if (r % 3 != 2)
            continue;
        /* rows that match: n % 7 = r % 7 (a residual), among the last
         * round too (in the log, unflushed, when the DELETE starts) */
        int k = r % 7, want = 0;
        for (int i = 0; i < (r + 1) * PER_ROUND; i++)
            if (alive[i] && (i % 3 ? 1 : 0) && i % 7 == k) {
                alive[i] = 0;
                want++;
            }
        char sql[128], tag[32];
        snprintf(sql, sizeof sql, "DELETE FROM t WHERE msg @@ 'failed' AND n %% 7 = %d", k);
        snprintf(tag, sizeof tag, "DELETE %d", want);
        st_ok(sql, tag);
    }
    long long cnt = 0, sum = 0;
    for (int i = 0; i < ROUNDS * PER_ROUND; i++)
        if (alive[i])
            cnt++, sum += i;
    char want[128];
    snprintf(want, sizeof want, "count,sum\n%lld,%lld\n", cnt, sum);
    st_rows("SELECT count(*), sum(n) FROM t", want);
    /* the merger catches up; nothing deleted comes back */
    uint32_t nsegs = 99;
    for (int i = 0; i < 400 && nsegs >= QR_MERGE_FACTOR; i++) {
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
        qr_manifest m = manifest_of(st_dir, "t");
        nsegs = m.nsegs;
        free(m.segs);
    }
    assert_true(nsegs < QR_MERGE_FACTOR);
    st_rows("SELECT count(*), sum(n) FROM t", want);
    char *img = crash_image();
    st_close();
    qr_sql_session s2;
    qr_err e;
    if (qr_sql_open(&s2, img, 1, &e) != 0)
        fail_msg("recover: %s", e.msg);
    char *out = st_run_on(&s2, "SELECT count(*), sum(n) FROM t", NULL, &e);
    assert_non_null(out);
    assert_string_equal(out, want);
    free(out);
    qr_sql_close(&s2);
    tu_rmdir(img);
}

/* A timestamp literal `ago` seconds before now (UTC). */
static const char *ago(int64_t secs, char *buf, size_t n)
{
    time_t t = time(NULL) - (time_t)secs;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

static void test_retention_drops_and_trims_by_time(void **st)
{
    (void)st;
    st_open();
    st_fails("CREATE TABLE r (ts TIMESTAMP, msg text) WITH (retention = '2 days')", "22023",
             "retention needs a sort column (WITH (sort_column = ...)): it goes by the sort "
             "column's time");
    st_fails("CREATE TABLE r (ts TIMESTAMP, msg text) WITH (sort_column = ts, retention = "
             "'2 fortnights')",
             "22023",
             "retention must be an interval such as '7 days', '12 hours' or '90 minutes' (units "
             "s, min, h, d, w), or 0 for none; not '2 fortnights' at character 65");
    st_ok("CREATE TABLE r (ts TIMESTAMP, msg text, n bigint) WITH (sort_column = ts, retention = "
          "'1 week')",
          "CREATE TABLE");
    st_ok("ALTER TABLE r RESET (retention)", "ALTER TABLE");
    st_ok("ALTER TABLE r SET (retention = '1 day 24 hours')", "ALTER TABLE"); /* 2 days */
    st_fails("ALTER TABLE nope SET (retention = '1 day')", "42P01",
             "relation \"nope\" does not exist at character 13");
    st_fails("ALTER TABLE r ADD COLUMN x text", "0A000",
             "ALTER TABLE supports only SET (retention = '...') and RESET (retention)");
    qr_err e;
    qr_table *t = qr_table_open(st_dir, "r", QR_TABLE_READ, &e);
    assert_non_null(t);
    assert_int_equal(t->def->retention_s, 2 * 86400);
    qr_table_close(t);
    /* three segments: all expired; straddling, more than half past the
     * limit; all recent */
    char a[64], b[64], c[64], d[64], sql[512];
    snprintf(sql, sizeof sql, "INSERT INTO r VALUES ('%s', 'old', 1), ('%s', 'old', 2)",
             ago(10 * 86400, a, sizeof a), ago(9 * 86400, b, sizeof b));
    st_ok(sql, "INSERT 0 2");
    snprintf(sql, sizeof sql,
             "INSERT INTO r VALUES ('%s', 'mid', 3), ('%s', 'mid', 4), ('%s', 'mid', 5), "
             "('%s', 'mid', 6)",
             ago(3 * 86400, a, sizeof a), ago(5 * 43200, b, sizeof b), ago(3 * 43200, c, sizeof c),
             ago(86400, d, sizeof d));
    st_ok(sql, "INSERT 0 4");
    snprintf(sql, sizeof sql, "INSERT INTO r VALUES ('%s', 'new', 7)", ago(3600, a, sizeof a));
    st_ok(sql, "INSERT 0 1");
    st_rows("SELECT count(*) FROM r", "count\n7\n");
    live(20, 1); /* the merger applies retention every second */
    char *out = NULL;
    for (int i = 0; i < 200; i++) {
        free(out);
        out = st_run_on(&st_s, "SELECT count(*), sum(n) FROM r", NULL, &e);
        if (out && !strcmp(out, "count,sum\n3,18\n"))
            break;
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
    assert_string_equal(out, "count,sum\n3,18\n"); /* 5, 6 and 7 are left */
    free(out);
    qr_manifest m = manifest_of(st_dir, "r");
    assert_int_equal(m.nsegs, 2); /* the old segment dropped, the middle one trimmed */
    free(m.segs);
    st_close();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acknowledged_rows_are_seen_and_survive_a_crash),
        cmocka_unit_test(test_visibility_setting_is_kept_and_rows_are_seen),
        cmocka_unit_test(test_a_failed_commit_keeps_the_rows_and_retries),
        cmocka_unit_test(test_commit_links_big_live_segments_and_merges_small_ones),
        cmocka_unit_test(test_queries_during_commits_see_each_row_once),
        cmocka_unit_test(test_create_index_over_live_rows),
        cmocka_unit_test(test_truncate_and_drop_take_waiting_rows),
        cmocka_unit_test(test_waiting_rows_limit_refuses_with_53000),
        cmocka_unit_test(test_unmerged_segments_limit_refuses_with_53000),
        cmocka_unit_test(test_merge_policy),
        cmocka_unit_test(test_background_merges_keep_rows_and_scores),
        cmocka_unit_test(test_delete_with_waiting_rows_and_merges),
        cmocka_unit_test(test_retention_drops_and_trims_by_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
