/* testutil.h - helpers shared by the unit tests: reproducible random
 * numbers, temporary directories, building a batch or a segment from NDJSON
 * lines, reading a segment back as NDJSON. */
#ifndef QR_TESTUTIL_H
#define QR_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "format/segment.h"
#include "index/catalog.h"
#include "index/invindex.h"
#include "ingest/ndjson.h"
#include "util/buf.h"

/* xorshift64: the tests' reproducible random numbers (*state != 0). */
static inline uint64_t tu_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

/* mkdtemp under $TMPDIR; caller frees and removes with tu_rmdir. */
static inline char *tu_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/quarry-test-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(p)) {
        free(p);
        return NULL;
    }
    return p;
}

static inline void tu_rmdir(char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    free(dir);
}

/* The OpenTelemetry table's definition, made once (reachable until exit). */
static inline const qr_tabdef *tu_otel(void)
{
    static qr_tabdef *d;
    if (!d && !(d = qr_tabdef_otel("logs")))
        fail_msg("out of memory");
    return d;
}

/* Register an OpenTelemetry table `name` in dir's catalog. */
static inline void tu_create_otel_table(const char *dir, const char *name)
{
    qr_tabdef *d = qr_tabdef_otel(name);
    qr_err e;
    int created;
    if (!d || qr_catalog_create_table(dir, d, &created, &e) != 0)
        fail_msg("create table %s: %s", name, d ? e.msg : "out of memory");
    qr_tabdef_free(d);
}

/* Parse each line of `text` (NDJSON) into b; every line must be good. */
static inline void tu_fill_batch(qr_batch *b, const char *text)
{
    qr_ndjson nj;
    if (qr_ndjson_init(&nj, b->def, NULL) != 0)
        fail_msg("out of memory");
    const char *p = text, *end = text + strlen(text);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        qr_err e;
        qr_err_clear(&e);
        int rc = qr_ndjson_parse(&nj, b, p, n, &e);
        if (rc < 0)
            fail_msg("line rejected: %s: %.*s", e.msg, (int)n, p);
        p += n + (nl ? 1 : 0);
    }
    qr_ndjson_free(&nj);
}

/* Build segment file dir/name from NDJSON `text` (every line good, at
 * most max_rows of them) into path (4200 bytes). */
static inline void tu_build_segment(const char *dir, const char *name, const char *text,
                                    uint32_t max_rows, char *path)
{
    qr_batch b;
    qr_err e;
    assert_int_equal(qr_batch_init(&b, tu_otel(), max_rows, &e), 0);
    tu_fill_batch(&b, text);
    snprintf(path, 4200, "%s/%s", dir, name);
    assert_int_equal(qr_segment_build(path, &b, NULL, NULL, &e), 0);
    qr_batch_free(&b);
}

/* The segment of the NDJSON lines in *text (at most max_rows; the buffer
 * is consumed and freed) built as dir/name and opened; the test fails when
 * it cannot be. */
static inline qr_segment *tu_open_built(const char *dir, const char *name, qr_buf *text,
                                        uint32_t max_rows)
{
    char path[4200];
    qr_buf_put_u8(text, 0);
    tu_build_segment(dir, name, (const char *)text->p, max_rows, path);
    qr_buf_free(text);
    qr_err e;
    qr_segment *s = qr_seg_open(path, &e);
    if (!s)
        fail_msg("%s: %s", path, e.msg);
    return s;
}

/* Read every row of a segment as NDJSON into out (appended). Returns 0 or
 * -1 with e set. */
static inline int tu_seg_json(const char *path, qr_buf *out, qr_err *e)
{
    qr_segment *s = qr_seg_open(path, e);
    if (!s)
        return -1;
    qr_colreader *rd[QR_OTEL_NCOLS] = {0};
    int rc = qr_row_readers_open(s, tu_otel(), rd, e);
    for (uint32_t r = 0; r < s->rows && rc == 0; r++)
        rc = qr_row_json(tu_otel(), rd, r, out, e);
    qr_row_readers_close(tu_otel(), rd);
    qr_seg_close(s);
    return rc;
}

#endif
