/* test_ingest_faults.c - ingest never mistakes its own failure for bad input:
 * a failed create, write, fsync, rename or manifest commit at every point of
 * an ingest (util/fsutil fault injection), and running out of memory while
 * parsing, stop the ingest with an error naming the file and the cause,
 * commit nothing, leave no file behind, and leave a table that reads as
 * before and takes the next ingest. */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>

#include "index/table.h"
#include "ingest/ingest.h"
#include "util/fsutil.h"

/* ---- helpers ---- */

static void write_buf(const char *path, const qr_buf *b)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(b->p, 1, b->len, f), b->len);
    fclose(f);
}

/* `n` good lines, numbered from `first`, in canonical form (what cat prints). */
static void make_lines(qr_buf *out, int first, int n)
{
    char line[600];
    for (int i = first; i < first + n; i++) {
        int k = snprintf(line, sizeof line,
                         "{\"Timestamp\":\"2025-09-23T00:%02d:%02d.%09dZ\",\"TraceId\":null,"
                         "\"SpanId\":null,\"TraceFlags\":null,\"SeverityText\":\"INFO\","
                         "\"SeverityNumber\":9,\"ServiceName\":\"svc%d\",\"Body\":\"line %d "
                         "of the fault test\",\"ResourceSchemaUrl\":null,"
                         "\"ResourceAttributes\":null,\"ScopeSchemaUrl\":null,\"ScopeName\":null,"
                         "\"ScopeVersion\":null,\"ScopeAttributes\":null,\"LogAttributes\":null}\n",
                         i / 60000 % 60, i / 1000 % 60, i % 1000 * 1000, i % 7, i);
        qr_buf_put(out, line, (size_t)k);
    }
}

/* The sorted names in dir, one per line. */
static void list_dir(const char *dir, qr_buf *out)
{
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "ls -1 '%s' | sort", dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char b[4096];
    size_t k;
    qr_buf_clear(out);
    while ((k = fread(b, 1, sizeof b, p)) > 0)
        qr_buf_put(out, b, k);
    pclose(p);
}

/* Every row of the table as stored on disk (a fresh reader), in order. */
static void table_rows(const char *data, qr_buf *out)
{
    qr_err e;
    qr_table *r = qr_table_open(data, "t", QR_TABLE_READ, &e);
    if (!r)
        fail_msg("reopen: %s", e.msg);
    qr_buf_clear(out);
    for (uint32_t i = 0; i < r->man.nsegs; i++) {
        char p[4200];
        qr_table_seg_path(r, r->man.segs[i].id, p, sizeof p);
        if (tu_seg_json(p, out, &e) != 0)
            fail_msg("read back: %s", e.msg);
    }
    qr_table_close(r);
}

static void assert_buf_equal(const qr_buf *a, const qr_buf *b)
{
    assert_int_equal(a->len, b->len);
    if (a->len)
        assert_memory_equal(a->p, b->p, a->len);
}

typedef struct feeder {
    int fd;
    const unsigned char *p;
    size_t n;
} feeder;

/* Writes the input in small pieces, so the reader is mid-line when a
 * worker's failure stops it; gives up once the reader has stopped. */
static void *feed(void *arg)
{
    feeder *f = arg;
    size_t off = 0;
    while (off < f->n) {
        size_t k = f->n - off < 7001 ? f->n - off : 7001;
        ssize_t w = write(f->fd, f->p + off, k);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(f->fd);
    return NULL;
}

/* Ingest `in` into t, through a pipe fed by a thread when `piped`. */
static int ingest_buf(qr_table *t, const char *path, const qr_buf *in, int piped,
                      const qr_ingest_opts *o, qr_ingest_stats *st, qr_err *e)
{
    if (!piped) {
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        int rc = qr_ingest(t, fd, "in.ndjson", o, st, e);
        close(fd);
        return rc;
    }
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    feeder f = {fds[1], in->p, in->len};
    pthread_t th;
    pthread_create(&th, NULL, feed, &f);
    int rc = qr_ingest(t, fds[0], "in.ndjson", o, st, e);
    close(fds[0]); /* the feeder's next write fails: it stops */
    pthread_join(th, NULL);
    return rc;
}

/* ---- a failure at every file operation ---- */

enum {
    SEEN_CREATE = 1,
    SEEN_WRITE = 2,
    SEEN_FSYNC = 4,
    SEEN_FSYNC_DIR = 8,
    SEEN_RENAME = 16,
    SEEN_LINK = 32
};

/* For N = 1, 2, ...: the Nth file operation of `op` fails; until an ingest
 * sees fewer than N of them and succeeds. Returns the bitmask of the kinds
 * of operation that failed (by the message). */
static unsigned fail_every_operation(qr_fault_op op, int threads, int piped)
{
    char *dir = tu_tmpdir();
    char tdir[4200], in_path[4200];
    snprintf(tdir, sizeof tdir, "%s/t", dir);
    snprintf(in_path, sizeof in_path, "%s/in.ndjson", dir);
    qr_buf before, in, files, files0, rows, rows0, want;
    qr_buf_init(&before);
    qr_buf_init(&in);
    qr_buf_init(&files);
    qr_buf_init(&files0);
    qr_buf_init(&rows);
    qr_buf_init(&rows0);
    qr_buf_init(&want);
    make_lines(&before, 0, 300);
    make_lines(&in, 1000, 2000);
    write_buf(in_path, &before);
    qr_err e;
    tu_create_otel_table(dir, "t");
    qr_table *t = qr_table_open(dir, "t", QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    assert_non_null(t);
    qr_ingest_opts o;
    qr_ingest_opts_default(&o);
    o.segment_rows = 400; /* five segments, then the commit */
    o.threads = threads;
    qr_ingest_stats st;
    assert_int_equal(ingest_buf(t, in_path, &before, 0, &o, &st, &e), 0); /* committed */
    write_buf(in_path, &in);
    list_dir(tdir, &files0);
    table_rows(dir, &rows0);
    assert_buf_equal(&rows0, &before);
    uint64_t gen0 = t->man.generation;
    unsigned seen = 0;
    uint64_t n;
    for (n = 1; n < 1000; n++) {
        int err = n % 3 == 0 ? EIO : ENOSPC;
        qr_fault_set(op, n, err);
        qr_err_clear(&e);
        int rc = ingest_buf(t, in_path, &in, piped, &o, &st, &e);
        uint64_t ops = qr_fault_seen();
        qr_fault_set(QR_FAULT_OFF, 0, 0);
        if (rc == 0) {
            assert_true(ops < n); /* succeeded only because nothing failed */
            break;
        }
        assert_true(ops >= n);
        /* the error names the operation, the file (in the table) and the cause */
        /* 53100 when the device is full: a client may free space and retry */
        assert_string_equal(e.code, err == ENOSPC ? QR_E_DISK_FULL : QR_E_IO);
        char cause[200];
        snprintf(cause, sizeof cause, ": %s", strerror(err));
        size_t ml = strlen(e.msg), cl = strlen(cause);
        if (ml < cl || strcmp(e.msg + ml - cl, cause) != 0 || !strstr(e.msg, tdir))
            fail_msg("fault %llu: unexpected message: %s", (unsigned long long)n, e.msg);
        if (strncmp(e.msg, "create ", 7) == 0)
            seen |= SEEN_CREATE;
        else if (strncmp(e.msg, "write ", 6) == 0)
            seen |= SEEN_WRITE;
        else if (strncmp(e.msg, "fsync directory ", 16) == 0)
            seen |= SEEN_FSYNC_DIR;
        else if (strncmp(e.msg, "fsync ", 6) == 0)
            seen |= SEEN_FSYNC;
        else if (strncmp(e.msg, "rename ", 7) == 0)
            seen |= SEEN_RENAME;
        else if (strncmp(e.msg, "link ", 5) == 0)
            seen |= SEEN_LINK;
        else
            fail_msg("fault %llu: unexpected message: %s", (unsigned long long)n, e.msg);
        /* nothing committed, nothing left behind, same rows */
        assert_int_equal(t->man.generation, gen0);
        assert_int_equal(st.segments, 0);
        list_dir(tdir, &files);
        if (files.len != files0.len || memcmp(files.p, files0.p, files.len) != 0)
            fail_msg("fault %llu (%s): files left: %.*s", (unsigned long long)n, e.msg,
                     (int)files.len, (const char *)files.p);
        table_rows(dir, &rows);
        assert_buf_equal(&rows, &rows0);
    }
    assert_true(n > 1 && n < 1000);
    /* the successful run committed everything: earlier rows, then these */
    assert_int_equal(st.rows, 2000);
    assert_int_equal(st.bad_lines, 0);
    qr_buf_put(&want, before.p, before.len);
    qr_buf_put(&want, in.p, in.len);
    table_rows(dir, &rows);
    assert_buf_equal(&rows, &want);
    qr_table_close(t);
    tu_rmdir(dir);
    qr_buf_free(&before);
    qr_buf_free(&in);
    qr_buf_free(&files);
    qr_buf_free(&files0);
    qr_buf_free(&rows);
    qr_buf_free(&rows0);
    qr_buf_free(&want);
    return seen;
}

static void test_failure_at_every_file_operation_commits_nothing(void **st)
{
    (void)st;
    unsigned seen = fail_every_operation(QR_FAULT_ANY, 1, 0);
    assert_int_equal(seen, SEEN_CREATE | SEEN_WRITE | SEEN_FSYNC | SEEN_FSYNC_DIR | SEEN_RENAME |
                               SEEN_LINK);
}

/* Two workers and input from a pipe: the failure stops the reader in the
 * middle of a line (this used to hand a unit with a partial last line to a
 * worker, which read past it: SIGSEGV). */
static void test_failure_while_reading_a_pipe_with_two_workers(void **st)
{
    (void)st;
    unsigned seen = fail_every_operation(QR_FAULT_ANY, 2, 1);
    assert_true(seen & SEEN_WRITE);
}

static void test_failure_of_each_kind(void **st)
{
    (void)st;
    assert_int_equal(fail_every_operation(QR_FAULT_CREATE, 2, 0), SEEN_CREATE | SEEN_LINK);
    assert_int_equal(fail_every_operation(QR_FAULT_WRITE, 2, 0), SEEN_WRITE);
    assert_int_equal(fail_every_operation(QR_FAULT_FSYNC, 2, 0), SEEN_FSYNC | SEEN_FSYNC_DIR);
    assert_int_equal(fail_every_operation(QR_FAULT_RENAME, 2, 0), SEEN_RENAME);
}

/* ---- failures while parsing that are not the line's ---- */

static void test_out_of_memory_parsing_stops_the_ingest(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/in.ndjson", dir);
    qr_buf in;
    qr_buf_init(&in);
    for (int i = 1; i <= 3000; i++) {
        char line[100];
        /* line 2500 needs the batch arena (an escaped string); 7 is bad */
        int k = snprintf(line, sizeof line,
                         i == 2500 ? "{\"Body\":\"tab\\there\"}\n"
                         : i == 7  ? "{\"Body\":7}\n"
                                   : "{\"Body\":\"line %d\"}\n",
                         i);
        qr_buf_put(&in, line, (size_t)k);
    }
    write_buf(path, &in);
    qr_err e;
    tu_create_otel_table(dir, "t");
    qr_table *t = qr_table_open(dir, "t", QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    assert_non_null(t);
    qr_ingest_opts o;
    qr_ingest_opts_default(&o);
    o.segment_rows = 1000;
    o.threads = 1;     /* units in order: the strict run meets line 7 first */
    o.arena_limit = 1; /* no decoded string fits */
    qr_ingest_stats s;
    for (int strict = 0; strict <= 1; strict++) {
        o.strict = strict;
        int fd = open(path, O_RDONLY);
        assert_int_equal(qr_ingest(t, fd, "in.ndjson", &o, &s, &e), -1);
        close(fd);
        if (strict) { /* the bad line comes first */
            assert_string_equal(e.code, QR_E_DATATYPE);
            assert_string_equal(e.msg,
                                "in.ndjson:7: byte 9: column Body: expected a string, got number");
        } else { /* not skipped as a bad line: the ingest stops */
            assert_string_equal(e.code, QR_E_NOMEM);
            assert_string_equal(e.msg, "in.ndjson:2500: byte 9: out of memory decoding a string");
        }
        assert_int_equal(t->man.nsegs, 0);
        snprintf(path, sizeof path, "%s/t", dir);
        qr_buf files;
        qr_buf_init(&files);
        list_dir(path, &files);
        assert_int_equal(files.len, 5);
        assert_memory_equal(files.p, "LOCK\n", 5); /* no manifest, no segment */
        qr_buf_free(&files);
        snprintf(path, sizeof path, "%s/in.ndjson", dir);
    }
    /* without the limit the same input loads, line 7 skipped */
    o.arena_limit = 0;
    o.strict = 0;
    int fd = open(path, O_RDONLY);
    assert_int_equal(qr_ingest(t, fd, "in.ndjson", &o, &s, &e), 0);
    close(fd);
    assert_int_equal(s.rows, 2999);
    assert_int_equal(s.bad_lines, 1);
    qr_table_close(t);
    tu_rmdir(dir);
    qr_buf_free(&in);
}

/* A batch arena that cannot grow is out of memory, never bad input. */
static void test_ndjson_full_arena_is_not_bad_input(void **st)
{
    (void)st;
    qr_batch b;
    qr_err e;
    assert_int_equal(qr_batch_init(&b, tu_otel(), 10, &e), 0);
    b.arena.limit = 1;
    qr_ndjson nj;
    assert_int_equal(qr_ndjson_init(&nj, tu_otel(), &e), 0);
    static const char *need_arena[] = {
        "{\"Body\":\"a\\nb\"}",              /* an escaped value */
        "{\"B\\u006fdy\":\"x\"}",            /* an escaped key */
        "{\"LogAttributes\":{\"k\":\"v\"}}", /* a map text */
    };
    for (size_t i = 0; i < sizeof need_arena / sizeof *need_arena; i++) {
        qr_err_clear(&e);
        assert_int_equal(qr_ndjson_parse(&nj, &b, need_arena[i], strlen(need_arena[i]), &e), -1);
        assert_string_equal(e.code, QR_E_NOMEM);
        assert_false(qr_err_is_input_fault(&e));
    }
    const char *bad = "{\"Body\":\"a\\qb\"}"; /* a bad escape is still the input's */
    assert_int_equal(qr_ndjson_parse(&nj, &b, bad, strlen(bad), &e), -1);
    assert_string_equal(e.code, QR_E_INVALID_TEXT);
    assert_true(qr_err_is_input_fault(&e));
    const char *plain = "{\"Body\":\"plain\"}"; /* zero copy: no arena */
    assert_int_equal(qr_ndjson_parse(&nj, &b, plain, strlen(plain), &e), 0);
    assert_int_equal(b.nrows, 1);
    qr_ndjson_free(&nj);
    qr_batch_free(&b);
}

/* The reader's own strict error (an oversize line) survives the early end
 * of its loop and is reported as an input fault of class 22. */
static void test_strict_oversize_line(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/in.ndjson", dir);
    FILE *f = fopen(path, "w");
    for (int i = 1; i <= 3000; i++) {
        if (i == 1234) {
            fputs("{\"Body\":\"", f);
            for (int k = 0; k < 5000; k++)
                fputc('x', f);
            fputs("\"}\n", f);
        } else {
            fprintf(f, "{\"Body\":\"line %d\"}\n", i);
        }
    }
    fclose(f);
    qr_err e;
    tu_create_otel_table(dir, "t");
    qr_table *t = qr_table_open(dir, "t", QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    qr_ingest_opts o;
    qr_ingest_opts_default(&o);
    o.segment_rows = 500;
    o.max_line = 1000;
    o.strict = 1;
    o.threads = 2;
    qr_ingest_stats s;
    int fd = open(path, O_RDONLY);
    assert_int_equal(qr_ingest(t, fd, "in.ndjson", &o, &s, &e), -1);
    close(fd);
    assert_string_equal(e.code, QR_E_LINE_TOO_LONG);
    assert_true(qr_err_is_input_fault(&e));
    assert_string_equal(e.msg, "in.ndjson:1234: line longer than the 1000-byte limit (--max-line)");
    assert_int_equal(t->man.nsegs, 0);
    qr_table_close(t);
    tu_rmdir(dir);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* the feeder writes to a pipe the ingest closed */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failure_at_every_file_operation_commits_nothing),
        cmocka_unit_test(test_failure_while_reading_a_pipe_with_two_workers),
        cmocka_unit_test(test_failure_of_each_kind),
        cmocka_unit_test(test_ndjson_full_arena_is_not_bad_input),
        cmocka_unit_test(test_out_of_memory_parsing_stops_the_ingest),
        cmocka_unit_test(test_strict_oversize_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
