/* fuzz_ndjson.c - libFuzzer target for the NDJSON ingest parser and the
 * segment round trip, for two table shapes (the OpenTelemetry table, and a
 * table with a column of every type, an epoch-seconds time, every index
 * kind and a catch-all): any line either is rejected with a message, or is
 * stored in a segment and read back as canonical JSON L1; L1 must itself be
 * accepted and read back as exactly L1 (canonical output is a fixed point). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_tmp.h"
#include "index/invindex.h"
#include "ingest/ndjson.h"

static qr_tabdef *wide_table(void)
{
    static const struct {
        const char *name;
        int type;
    } cols[] = {{"t", QT_TIMESTAMP}, {"b", QT_BOOL},    {"i8", QT_INT8},     {"i16", QT_INT16},
                {"i32", QT_INT32},   {"i64", QT_INT64}, {"u8", QT_UINT8},    {"u16", QT_UINT16},
                {"u32", QT_UINT32},  {"u64", QT_UINT64}, {"f", QT_FLOAT64},  {"s", QT_TEXT},
                {"j", QT_JSON},      {"m", QT_MAP},     {"e", QT_TIMESTAMP}, {"_extra", QT_JSON}};
    qr_tabdef *d = qr_tabdef_new("wide");
    for (size_t i = 0; d && i < sizeof cols / sizeof *cols; i++)
        if (qr_tabdef_add_col(d, cols[i].name, strlen(cols[i].name), cols[i].type, 1, NULL) < 0)
            abort();
    d->cols[14].tsfmt = QR_TS_EPOCH_S;
    d->sort_col = 0;
    d->extra_col = 15;
    d->omit_nulls = 1;
    if (qr_tabdef_add_index(d, 11, QR_IX_FULLTEXT, 0, "s", NULL) < 0 ||
        qr_tabdef_add_index(d, 12, QR_IX_PATHS, 0, "j", NULL) < 0 ||
        qr_tabdef_add_index(d, 13, QR_IX_PATHS, 0, "m", NULL) < 0 ||
        qr_tabdef_add_index(d, 13, QR_IX_FULLTEXT, 0, NULL, NULL) < 0 ||
        qr_tabdef_add_index(d, 10, QR_IX_RANGE, 0, "f", NULL) < 0 ||
        qr_tabdef_add_index(d, 9, QR_IX_RANGE, 0, "u64", NULL) < 0)
        abort();
    return d;
}

static int roundtrip(const qr_tabdef *d, const char *line, size_t n, qr_buf *out,
                     const char *path)
{
    qr_batch b;
    qr_err e;
    qr_ndjson nj;
    if (qr_batch_init(&b, d, 1, &e) != 0 || qr_ndjson_init(&nj, d, &e) != 0)
        abort();
    int rc = qr_ndjson_parse(&nj, &b, line, n, &e);
    if (rc == 0) {
        if (qr_segment_build(path, &b, NULL, NULL, &e) != 0) {
            fprintf(stderr, "segment write failed: %s\n", e.msg);
            abort();
        }
        qr_segment *s = qr_seg_open(path, &e);
        if (!s) {
            fprintf(stderr, "segment open failed: %s\n", e.msg);
            abort();
        }
        qr_colreader **rd = calloc(d->ncols, sizeof *rd);
        if (!rd || qr_row_readers_open(s, d, rd, &e) != 0 || qr_seg_verify(s, &e) != 0) {
            fprintf(stderr, "segment read failed: %s\n", e.msg);
            abort();
        }
        if (qr_row_json(d, rd, 0, out, &e) != 0) {
            fprintf(stderr, "read back failed: %s\n", e.msg);
            abort();
        }
        qr_row_readers_close(d, rd);
        free(rd);
        qr_seg_close(s);
    } else if (rc < 0 && !e.msg[0]) {
        abort(); /* a rejection always says why */
    }
    qr_ndjson_free(&nj);
    qr_batch_free(&b);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[4096];
    static qr_tabdef *defs[2];
    if (!path[0]) {
        char name[64];
        snprintf(name, sizeof name, "quarry-fuzz-nd-%d.qseg", (int)getpid());
        fuzz_tmp_path(path, sizeof path, name);
        defs[0] = qr_tabdef_otel("otel");
        defs[1] = wide_table();
        if (!defs[0] || !defs[1])
            abort();
    }
    if (memchr(data, '\n', size))
        return 0; /* one line */
    for (int k = 0; k < 2; k++) {
        qr_buf l1, l2;
        qr_buf_init(&l1);
        qr_buf_init(&l2);
        if (roundtrip(defs[k], (const char *)data, size, &l1, path) == 0) {
            if (roundtrip(defs[k], (const char *)l1.p, l1.len - 1, &l2, path) != 0 ||
                l1.len != l2.len || memcmp(l1.p, l2.p, l1.len) != 0) {
                fprintf(stderr, "canonical form is not a fixed point:\n%.*s%.*s", (int)l1.len,
                        (const char *)l1.p, (int)l2.len, (const char *)l2.p);
                abort();
            }
        }
        qr_buf_free(&l1);
        qr_buf_free(&l2);
    }
    return 0;
}
