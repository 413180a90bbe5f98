/* fuzz_ndjson.c - libFuzzer target for the NDJSON ingest parser and the
 * segment round trip: any line either is rejected with a message, or is
 * stored in a segment and read back as canonical JSON L1; L1 must itself be
 * accepted and read back as exactly L1 (canonical output is a fixed point). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/segment.h"
#include "ingest/ndjson.h"

static int roundtrip(const char *line, size_t n, qr_buf *out, const char *path)
{
    qr_batch b;
    qr_err e;
    qr_ndjson nj;
    if (qr_batch_init(&b, tu_otel(), 1, &e) != 0)
        abort();
    qr_ndjson_init(&nj);
    int rc = qr_ndjson_parse(&nj, &b, line, n, &e);
    if (rc == 0) {
        if (qr_seg_write(path, &b, NULL, NULL, &e) != 0) {
            fprintf(stderr, "segment write failed: %s\n", e.msg);
            abort();
        }
        qr_segment *s = qr_seg_open(path, &e);
        if (!s) {
            fprintf(stderr, "segment open failed: %s\n", e.msg);
            abort();
        }
        qr_colreader *rd[QR_OTEL_NCOLS];
        for (int c = 0; c < QR_OTEL_NCOLS; c++)
            if (!(rd[c] = qr_colr_open(s, c, &e)))
                abort();
        if (qr_row_json(tu_otel(), rd, 0, out, &e) != 0) {
            fprintf(stderr, "read back failed: %s\n", e.msg);
            abort();
        }
        for (int c = 0; c < QR_OTEL_NCOLS; c++)
            qr_colr_close(rd[c]);
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
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/quarry-fuzz-nd-%d.qseg", (int)getpid());
    if (memchr(data, '\n', size))
        return 0; /* one line */
    qr_buf l1, l2;
    qr_buf_init(&l1);
    qr_buf_init(&l2);
    if (roundtrip((const char *)data, size, &l1, path) == 0) {
        if (roundtrip((const char *)l1.p, l1.len - 1, &l2, path) != 0 || l1.len != l2.len ||
            memcmp(l1.p, l2.p, l1.len) != 0) {
            fprintf(stderr, "canonical form is not a fixed point:\n%.*s%.*s", (int)l1.len,
                    (const char *)l1.p, (int)l2.len, (const char *)l2.p);
            abort();
        }
    }
    qr_buf_free(&l1);
    qr_buf_free(&l2);
    return 0;
}
