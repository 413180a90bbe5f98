/* test_ingest.c - the ingest pipeline: lines cut into segments at every
 * boundary (rows, bytes, read chunks, oversize lines) with input arriving in
 * random pieces through a pipe; rows read back in input order; strict mode
 * leaves nothing behind. */
#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>

#include "index/table.h"
#include "ingest/ingest.h"

typedef struct feeder {
    int fd;
    const unsigned char *p;
    size_t n;
    uint64_t seed;
} feeder;

static void *feed(void *arg)
{
    feeder *f = arg;
    size_t off = 0;
    uint64_t x = f->seed;
    while (off < f->n) {
        x = x * 6364136223846793005ull + 1;
        size_t k = (size_t)(x >> 33) % 70000 + 1;
        if (k > f->n - off)
            k = f->n - off;
        ssize_t w = write(f->fd, f->p + off, k);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(f->fd);
    return NULL;
}

/* Build input: `n` lines, every 37th one oversize, lengths varied. The
 * expected output holds the good lines in canonical form. */
static void make_input(qr_buf *in, qr_buf *want, int n, size_t max_line, uint64_t *bad)
{
    uint64_t x = 99;
    *bad = 0;
    for (int i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t blen = i % 37 == 5 ? max_line + 10 + (x >> 40) % 5000 : (x >> 35) % 900;
        if (i == 1000)
            blen = 2500000; /* longer than a read chunk */
        char head[200];
        int hn = snprintf(head, sizeof head,
                          "{\"Timestamp\":\"2025-09-23T00:00:%02d.%09dZ\",\"TraceId\":null,"
                          "\"SpanId\":null,\"TraceFlags\":null,\"SeverityText\":null,"
                          "\"SeverityNumber\":%d,\"ServiceName\":null,\"Body\":\"",
                          i / 1000000 % 60, i % 1000000 * 1000, i);
        const char *tail = "\",\"ResourceSchemaUrl\":null,\"ResourceAttributes\":null,"
                           "\"ScopeSchemaUrl\":null,\"ScopeName\":null,\"ScopeVersion\":null,"
                           "\"ScopeAttributes\":null,\"LogAttributes\":null}\n";
        size_t at = in->len;
        qr_buf_put(in, head, (size_t)hn);
        unsigned char *d = qr_buf_reserve(in, blen);
        for (size_t k = 0; k < blen; k++)
            d[k] = (unsigned char)('a' + (k * 7 + (size_t)i) % 26);
        in->len += blen;
        qr_buf_put(in, tail, strlen(tail));
        if (in->len - at - 1 > max_line)
            (*bad)++;
        else
            qr_buf_put(want, in->p + at, in->len - at);
    }
}

static void run_case(int N, uint32_t seg_rows, uint64_t seg_bytes, int threads, uint64_t seed)
{
    const size_t max_line = 2000;
    qr_buf in, want, got;
    qr_buf_init(&in);
    qr_buf_init(&want);
    qr_buf_init(&got);
    uint64_t bad;
    make_input(&in, &want, N, max_line, &bad);
    char *dir = tu_tmpdir();
    qr_err e;
    tu_create_otel_table(dir, "t");
    qr_table *t = qr_table_open(dir, "t", QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    assert_non_null(t);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    feeder f = {fds[1], in.p, in.len, seed};
    pthread_t th;
    pthread_create(&th, NULL, feed, &f);
    qr_ingest_opts o;
    qr_ingest_opts_default(&o);
    o.segment_rows = seg_rows;
    o.segment_bytes = seg_bytes;
    o.max_line = max_line;
    o.threads = threads;
    qr_ingest_stats s;
    int rc = qr_ingest(t, fds[0], "pipe", &o, &s, &e);
    pthread_join(th, NULL);
    close(fds[0]);
    if (rc != 0)
        fail_msg("%s", e.msg);
    assert_int_equal(s.lines, N);
    assert_int_equal(s.bad_lines, bad);
    assert_int_equal(s.rows, N - bad);
    assert_int_equal(s.blank_lines, 0);
    assert_int_equal(s.input_bytes, in.len);
    for (uint32_t i = 0; i < t->man.nsegs; i++) {
        char p[4200];
        qr_table_seg_path(t, t->man.segs[i].id, p, sizeof p);
        assert_int_equal(tu_seg_json(p, &got, &e), 0);
    }
    assert_int_equal(got.len, want.len);
    assert_memory_equal(got.p, want.p, want.len);
    qr_table_close(t);
    tu_rmdir(dir);
    qr_buf_free(&in);
    qr_buf_free(&want);
    qr_buf_free(&got);
}

static void test_cut_by_rows(void **st)
{
    (void)st;
    run_case(3000, 7, 1u << 30, 2, 1);
    run_case(200, 1, 1u << 30, 2, 2);
    run_case(3000, 1000, 1u << 30, 1, 3);
}

static void test_cut_by_bytes(void **st)
{
    (void)st;
    run_case(3000, 1000000, 50000, 2, 4);
    run_case(200, 1000000, 1, 2, 5);
    run_case(3000, 1000000, 300000, 3, 6);
}

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_strict_leaves_nothing(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    qr_err e;
    tu_create_otel_table(dir, "t");
    qr_table *t = qr_table_open(dir, "t", QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    char path[4200];
    snprintf(path, sizeof path, "%s/in.ndjson", dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 5000; i++)
        fprintf(f, i == 4321 ? "{\"Body\":1}\n" : "{\"Body\":\"line %d\"}\n", i);
    fclose(f);
    int fd = open(path, O_RDONLY);
    qr_ingest_opts o;
    qr_ingest_opts_default(&o);
    o.segment_rows = 100;
    o.strict = 1;
    o.threads = 2;
    qr_ingest_stats s;
    assert_int_equal(qr_ingest(t, fd, "in.ndjson", &o, &s, &e), -1);
    close(fd);
    assert_string_equal(e.code, QR_E_DATATYPE);
    assert_string_equal(e.msg, "in.ndjson:4322: byte 9: column Body: expected a string, got number");
    assert_int_equal(t->man.nsegs, 0);
    snprintf(path, sizeof path, "%s/t", dir);
    assert_int_equal(count_files(path), 1); /* only LOCK */
    qr_table_close(t);
    tu_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut_by_rows),
        cmocka_unit_test(test_cut_by_bytes),
        cmocka_unit_test(test_strict_leaves_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
