/* fuzz_copy.c - libFuzzer target for COPY's CSV and text records (sql/csv.h):
 * the first byte picks the format and a chunk size, the rest is the data.
 * Parsed in chunks and in one piece, the records (fields, NULLs) and the
 * outcome (error code) must be the same; a failure always has a code and a
 * message; nothing crashes or leaks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sql/csv.h"

static int collect(void *arg, const qr_recparser *rp, qr_err *e)
{
    qr_buf *b = arg;
    qr_buf_put_u32(b, rp->nfields);
    qr_buf_put_u64(b, rp->rec_line);
    for (uint32_t i = 0; i < rp->nfields; i++) {
        const char *p;
        size_t n;
        int null = qr_rec_field(rp, i, &p, &n);
        qr_buf_put_u8(b, (uint8_t)null);
        qr_buf_put_lenbytes(b, p, n);
    }
    (void)e;
    return 0;
}

static int parse(const uint8_t *d, size_t n, int csv, size_t chunk, qr_buf *out, qr_err *e)
{
    qr_recparser rp;
    qr_rec_init(&rp, csv, csv ? ',' : '\t', csv ? "" : NULL);
    int rc = 0;
    for (size_t at = 0; rc == 0 && at < n; at += chunk)
        rc = qr_rec_feed(&rp, (const char *)d + at, at + chunk < n ? chunk : n - at, collect, out,
                         e);
    if (rc == 0)
        rc = qr_rec_finish(&rp, collect, out, e);
    qr_rec_free(&rp);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int csv = data[0] & 1;
    size_t chunk = (size_t)(data[0] >> 1) % 17 + 1;
    qr_buf a, b;
    qr_buf_init(&a);
    qr_buf_init(&b);
    qr_err ea, eb;
    qr_err_clear(&ea);
    qr_err_clear(&eb);
    int ra = parse(data + 1, size - 1, csv, chunk, &a, &ea);
    int rb = parse(data + 1, size - 1, csv, size, &b, &eb);
    if (ra != rb || strcmp(ea.code, eb.code) != 0)
        abort(); /* chunking changed the outcome */
    if (ra != 0 && (!ea.code[0] || !ea.msg[0]))
        abort();
    if (ra == 0 && (a.len != b.len || (a.len && memcmp(a.p, b.p, a.len) != 0)))
        abort(); /* chunking changed the records */
    qr_buf_free(&a);
    qr_buf_free(&b);
    return 0;
}
