/* test_wal.c - the write-ahead log: records replayed exactly, in order,
 * after a reopen; a torn tail cut at every possible byte; damage before the
 * last file reported; rotation and release; a failed write leaves nothing;
 * a failed fsync poisons the log; concurrent writers share fsyncs; the
 * lock keeps a second owner out. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "index/wal.h"
#include "util/fsutil.h"

typedef struct seen {
    uint64_t seq[4096];
    char text[4096][32];
    uint32_t n;
} seen;

static int collect(void *arg, uint64_t seq, const unsigned char *p, size_t n, qr_err *e)
{
    seen *s = arg;
    assert_true(s->n < 4096);
    assert_true(n < 32);
    s->seq[s->n] = seq;
    memcpy(s->text[s->n], p, n);
    s->text[s->n][n] = 0;
    s->n++;
    return 0;
}

static void put(qr_wal *w, const char *text, uint64_t want_seq)
{
    qr_err e;
    uint64_t seq = 0;
    assert_int_equal(qr_wal_write(w, text, strlen(text), &seq, &e), 0);
    assert_int_equal(seq, want_seq);
    assert_int_equal(qr_wal_sync(w, seq, &e), 0);
}

/* The one log file in dir whose first seq is first. */
static void wal_file(const char *dir, uint64_t first, char *buf, size_t n)
{
    snprintf(buf, n, "%s/wal-%016llx.log", dir, (unsigned long long)first);
}

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static void test_records_replay_in_order(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    qr_err e;
    assert_false(qr_wal_present(dir));
    qr_wal *w = qr_wal_open(dir, 0, 1, NULL, NULL, &e);
    assert_non_null(w);
    put(w, "one", 1);
    put(w, "", 2); /* an empty payload is a record too */
    put(w, "three", 3);
    assert_int_equal(qr_wal_last(w), 3);
    /* a second owner is kept out while the first holds the log */
    assert_null(qr_wal_open(dir, 0, 1, collect, NULL, &e));
    assert_string_equal(e.code, QR_E_LOCKED);
    qr_wal_close(w);
    assert_true(qr_wal_present(dir));

    static seen s;
    s.n = 0;
    w = qr_wal_open(dir, 0, 1, collect, &s, &e);
    assert_non_null(w);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.seq[0], 1);
    assert_string_equal(s.text[0], "one");
    assert_string_equal(s.text[1], "");
    assert_int_equal(s.seq[2], 3);
    assert_string_equal(s.text[2], "three");
    put(w, "four", 4); /* numbering goes on, in a new file */
    qr_wal_close(w);

    /* records at or below `after` are not handed out */
    s.n = 0;
    w = qr_wal_open(dir, 2, 1, collect, &s, &e);
    assert_non_null(w);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.seq[0], 3);
    assert_int_equal(s.seq[1], 4);
    qr_wal_close(w);
    /* with no callback, a record above after is an error, not skipped */
    assert_null(qr_wal_open(dir, 3, 1, NULL, NULL, &e));
    assert_string_equal(e.code, QR_E_INTERNAL);
    tu_rmdir(dir);
}

static void test_torn_tail_is_cut_at_every_byte(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    qr_err e;
    qr_wal *w = qr_wal_open(dir, 0, 0, NULL, NULL, &e);
    assert_non_null(w);
    put(w, "alpha", 1);
    put(w, "beta", 2);
    qr_wal_close(w);
    char path[4096];
    wal_file(dir, 1, path, sizeof path);
    unsigned char *full;
    size_t n;
    assert_int_equal(qr_read_file(path, &full, &n, &e), 0);
    size_t rec2 = n - (20 + 4); /* the last record: 20 header bytes + "beta" */
    for (size_t cut = 0; cut < n; cut++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, full, cut), (ssize_t)cut);
        close(fd);
        static seen s;
        s.n = 0;
        w = qr_wal_open(dir, 0, 0, collect, &s, &e);
        assert_non_null(w);
        /* whole records only: the first iff it is complete, never the torn one */
        assert_int_equal(s.n, cut >= rec2 ? 1 : 0);
        if (s.n)
            assert_string_equal(s.text[0], "alpha");
        /* the next record follows the last good one, and reads back */
        put(w, "gamma", s.n + 1);
        qr_wal_close(w);
        s.n = 0;
        w = qr_wal_open(dir, 0, 0, collect, &s, &e);
        assert_non_null(w);
        assert_int_equal(s.n, cut >= rec2 ? 2 : 1);
        assert_string_equal(s.text[s.n - 1], "gamma");
        qr_wal_close(w);
        /* back to one file holding the two original records */
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "rm -f %s/wal-*.log", dir);
        assert_int_equal(system(cmd), 0);
    }
    /* a flipped bit in the last record: cut too */
    for (size_t i = rec2; i < n; i++) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        full[i] ^= 0x04;
        assert_int_equal(write(fd, full, n), (ssize_t)n);
        full[i] ^= 0x04;
        close(fd);
        static seen s;
        s.n = 0;
        w = qr_wal_open(dir, 0, 0, collect, &s, &e);
        assert_non_null(w);
        assert_int_equal(s.n, 1);
        qr_wal_close(w);
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "rm -f %s/wal-*.log", dir);
        assert_int_equal(system(cmd), 0);
    }
    free(full);
    tu_rmdir(dir);
}

static void test_rotation_release_and_damage_before_the_end(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    qr_err e;
    qr_wal *w = qr_wal_open(dir, 0, 1, NULL, NULL, &e);
    assert_non_null(w);
    put(w, "a", 1);
    put(w, "b", 2);
    assert_int_equal(qr_wal_rotate(w, 1u << 20, &e), 0); /* too small: stays */
    put(w, "c", 3);
    assert_int_equal(qr_wal_rotate(w, 0, &e), 0);
    put(w, "d", 4);
    assert_int_equal(qr_wal_rotate(w, 0, &e), 0);
    put(w, "e", 5);
    char p1[4096], p4[4096], p5[4096];
    wal_file(dir, 1, p1, sizeof p1);
    wal_file(dir, 4, p4, sizeof p4);
    wal_file(dir, 5, p5, sizeof p5);
    assert_true(file_size(p1) > 0 && file_size(p4) > 0 && file_size(p5) > 0);
    qr_wal_release(w, 3); /* file 1 (records 1-3) goes; 4 and the current stay */
    assert_int_equal(file_size(p1), -1);
    assert_true(file_size(p4) > 0);
    qr_wal_release(w, 5); /* the current file is never released */
    assert_int_equal(file_size(p4), -1);
    assert_true(file_size(p5) > 0);
    qr_wal_close(w);

    static seen s;
    s.n = 0;
    w = qr_wal_open(dir, 3, 1, collect, &s, &e);
    assert_non_null(w);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.seq[0], 5);
    put(w, "f", 6);
    assert_int_equal(qr_wal_rotate(w, 0, &e), 0);
    put(w, "g", 7);
    qr_wal_close(w);
    /* damage in a file that is not the newest is corruption, not a tail */
    unsigned char *p;
    size_t n;
    char p6[4096];
    wal_file(dir, 6, p6, sizeof p6);
    assert_int_equal(qr_read_file(p6, &p, &n, &e), 0);
    p[n - 1] ^= 1;
    int fd = open(p6, O_WRONLY | O_TRUNC);
    assert_int_equal(write(fd, p, n), (ssize_t)n);
    close(fd);
    free(p);
    s.n = 0;
    assert_null(qr_wal_open(dir, 0, 1, collect, &s, &e));
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, "wal-0000000000000006.log"));
    assert_non_null(strstr(e.msg, "offset"));
    tu_rmdir(dir);
}

static void test_failed_write_leaves_nothing_and_failed_fsync_poisons(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    qr_err e;
    qr_wal *w = qr_wal_open(dir, 0, 1, NULL, NULL, &e);
    assert_non_null(w);
    put(w, "kept", 1);
    /* the payload's write fails after the header's went through */
    qr_fault_set(QR_FAULT_WRITE, 2, ENOSPC);
    uint64_t seq = 0;
    assert_int_equal(qr_wal_write(w, "lost", 4, &seq, &e), -1);
    qr_fault_set(QR_FAULT_OFF, 0, 0);
    assert_string_equal(e.code, QR_E_DISK_FULL);
    put(w, "next", 2); /* the number of the failed record is reused */
    /* an fsync fails: that record is not acknowledged, nor any later one */
    assert_int_equal(qr_wal_write(w, "maybe", 5, &seq, &e), 0);
    qr_fault_set(QR_FAULT_FSYNC, 1, EIO);
    assert_int_equal(qr_wal_sync(w, seq, &e), -1);
    qr_fault_set(QR_FAULT_OFF, 0, 0);
    assert_int_equal(qr_wal_write(w, "after", 5, &seq, &e), -1);
    assert_non_null(strstr(e.msg, "refuses writes"));
    qr_wal_close(w);
    static seen s;
    s.n = 0;
    w = qr_wal_open(dir, 0, 1, collect, &s, &e);
    assert_non_null(w);
    assert_true(s.n == 2 || s.n == 3); /* "maybe" is on disk or not: never "lost" */
    assert_string_equal(s.text[0], "kept");
    assert_string_equal(s.text[1], "next");
    qr_wal_close(w);
    tu_rmdir(dir);
}

typedef struct writer_arg {
    qr_wal *w;
    pthread_mutex_t *mu;
    int id;
    uint64_t seqs[200];
} writer_arg;

static void *writer(void *p)
{
    writer_arg *a = p;
    for (int i = 0; i < 200; i++) {
        char text[32];
        int n = snprintf(text, sizeof text, "w%d-%d", a->id, i);
        qr_err e;
        pthread_mutex_lock(a->mu); /* writes are the caller's to serialise */
        int rc = qr_wal_write(a->w, text, (size_t)n, &a->seqs[i], &e);
        pthread_mutex_unlock(a->mu);
        assert_int_equal(rc, 0);
        assert_int_equal(qr_wal_sync(a->w, a->seqs[i], &e), 0); /* syncs overlap */
    }
    return NULL;
}

static void test_concurrent_writers_share_fsyncs(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    qr_err e;
    qr_wal *w = qr_wal_open(dir, 0, 1, NULL, NULL, &e);
    assert_non_null(w);
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static writer_arg a[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (writer_arg){.w = w, .mu = &mu, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, writer, &a[i]), 0);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(qr_wal_last(w), 800);
    qr_wal_close(w);
    static seen s;
    s.n = 0;
    w = qr_wal_open(dir, 0, 1, collect, &s, &e);
    assert_non_null(w);
    assert_int_equal(s.n, 800);
    /* each writer's records in its order, under the numbers it was given */
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 200; j++) {
            char text[32];
            snprintf(text, sizeof text, "w%d-%d", i, j);
            assert_string_equal(s.text[a[i].seqs[j] - 1], text);
        }
    qr_wal_close(w);
    tu_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_replay_in_order),
        cmocka_unit_test(test_torn_tail_is_cut_at_every_byte),
        cmocka_unit_test(test_rotation_release_and_damage_before_the_end),
        cmocka_unit_test(test_failed_write_leaves_nothing_and_failed_fsync_poisons),
        cmocka_unit_test(test_concurrent_writers_share_fsyncs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
