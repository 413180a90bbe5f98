/* codec_int.c - ENC_INT blocks: frame-of-reference or delta bit-packing.
 *
 * [u8 mode][u8 has_nulls][bitmap ceil(n/8) if has_nulls][i64 base][u8 width]
 * [packed]. INT_FOR packs v[i]-base for n values; INT_DELTA (values
 * non-decreasing) packs v[i]-v[i-1] for i >= 1 with base = v[0]. NULL rows
 * carry a filler value (the previous value, or base) so they cost ~0 bits.
 */
#include <stdlib.h>
#include <string.h>

#include "format/codec.h"
#include "format/segfmt.h"
#include "util/bitpack.h"

void enc_int_block(qr_buf *out, const int64_t *v, const uint8_t *isnull, uint32_t n,
                   qr_int_stats *st)
{
    int has_nulls = 0, first = 1;
    int64_t mn = 0, mx = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (isnull && isnull[i]) {
            has_nulls = 1;
            continue;
        }
        if (first || v[i] < mn)
            mn = v[i];
        if (first || v[i] > mx)
            mx = v[i];
        first = 0;
    }
    st->min = mn;
    st->max = mx;
    st->all_null = first;

    /* fill NULL slots so they pack to zero bits */
    uint64_t *tmp = malloc(sizeof *tmp * (n ? n : 1));
    int64_t *fv = malloc(sizeof *fv * (n ? n : 1));
    if (!tmp || !fv) {
        free(tmp);
        free(fv);
        out->oom = 1;
        return;
    }
    int64_t prev = mn;
    int monotone = 1;
    for (uint32_t i = 0; i < n; i++) {
        fv[i] = (isnull && isnull[i]) ? prev : v[i];
        if (i && fv[i] < fv[i - 1])
            monotone = 0;
        prev = fv[i];
    }
    uint8_t mode = monotone && n > 1 ? INT_DELTA : INT_FOR;
    int64_t base = mode == INT_DELTA ? fv[0] : mn;
    uint64_t maxd = 0;
    uint32_t m = 0;
    if (mode == INT_DELTA) {
        for (uint32_t i = 1; i < n; i++) {
            tmp[m] = (uint64_t)fv[i] - (uint64_t)fv[i - 1];
            if (tmp[m] > maxd)
                maxd = tmp[m];
            m++;
        }
    } else {
        for (uint32_t i = 0; i < n; i++) {
            tmp[m] = (uint64_t)fv[i] - (uint64_t)base;
            if (tmp[m] > maxd)
                maxd = tmp[m];
            m++;
        }
    }
    unsigned width = qr_bits_needed(maxd);
    qr_buf_put_u8(out, mode);
    qr_buf_put_u8(out, (uint8_t)has_nulls);
    if (has_nulls) {
        size_t nb = (n + 7) / 8;
        unsigned char *bm = qr_buf_reserve(out, nb);
        if (bm) {
            memset(bm, 0, nb);
            for (uint32_t i = 0; i < n; i++)
                if (isnull[i])
                    bm[i >> 3] |= (unsigned char)(1u << (i & 7));
            out->len += nb;
        }
    }
    qr_buf_put_u64(out, (uint64_t)base);
    qr_buf_put_u8(out, (uint8_t)width);
    size_t pb = qr_bitpack_bytes(m, width);
    unsigned char *pp = qr_buf_reserve(out, pb);
    if (pp) {
        qr_bitpack(tmp, m, width, pp);
        out->len += pb;
    }
    free(tmp);
    free(fv);
}

int dec_int_block(const unsigned char *p, size_t len, uint32_t n, int64_t *v, uint8_t *isnull,
                  const char **why)
{
    qr_rd r;
    qr_rd_init(&r, p, len);
    uint8_t mode = qr_rd_u8(&r), has_nulls = qr_rd_u8(&r);
    if (r.bad || mode > INT_DELTA || has_nulls > 1) {
        *why = "bad integer block header";
        return -1;
    }
    if (has_nulls) {
        const unsigned char *bm = qr_rd_bytes(&r, (n + 7) / 8);
        if (!bm) {
            *why = "integer block truncated in NULL bitmap";
            return -1;
        }
        for (uint32_t i = 0; i < n; i++)
            isnull[i] = (bm[i >> 3] >> (i & 7)) & 1;
    } else {
        memset(isnull, 0, n);
    }
    int64_t base = (int64_t)qr_rd_u64(&r);
    unsigned width = qr_rd_u8(&r);
    if (r.bad || width > 64) {
        *why = "bad integer block width";
        return -1;
    }
    uint32_t m = mode == INT_DELTA ? (n ? n - 1 : 0) : n;
    size_t pb = qr_bitpack_bytes(m, width);
    const unsigned char *pp = qr_rd_bytes(&r, pb);
    if (!pp || qr_rd_left(&r) != 0) {
        *why = "integer block length does not match its row count";
        return -1;
    }
    uint64_t *tmp = (uint64_t *)v; /* unpack in place: same size */
    if (mode == INT_DELTA) {
        if (n == 0)
            return 0;
        qr_bitunpack(pp, m, width, tmp + 1);
        uint64_t acc = (uint64_t)base;
        tmp[0] = acc;
        for (uint32_t i = 1; i < n; i++) {
            acc += tmp[i];
            tmp[i] = acc;
        }
    } else {
        qr_bitunpack(pp, m, width, tmp);
        for (uint32_t i = 0; i < n; i++)
            tmp[i] += (uint64_t)base;
    }
    return 0;
}

int dec_int_one(const unsigned char *p, size_t len, uint32_t n, uint32_t i, int64_t *v,
                uint8_t *isnull, const char **why)
{
    qr_rd r;
    qr_rd_init(&r, p, len);
    uint8_t mode = qr_rd_u8(&r), has_nulls = qr_rd_u8(&r);
    if (r.bad || mode > INT_DELTA || has_nulls > 1 || i >= n) {
        *why = "bad integer block header";
        return -1;
    }
    *isnull = 0;
    if (has_nulls) {
        const unsigned char *bm = qr_rd_bytes(&r, (n + 7) / 8);
        if (!bm) {
            *why = "integer block truncated in NULL bitmap";
            return -1;
        }
        *isnull = (bm[i >> 3] >> (i & 7)) & 1;
    }
    int64_t base = (int64_t)qr_rd_u64(&r);
    unsigned width = qr_rd_u8(&r);
    if (r.bad || width > 64) {
        *why = "bad integer block width";
        return -1;
    }
    uint32_t m = mode == INT_DELTA ? n - 1 : n;
    const unsigned char *pp = qr_rd_bytes(&r, qr_bitpack_bytes(m, width));
    if (!pp || qr_rd_left(&r) != 0) {
        *why = "integer block length does not match its row count";
        return -1;
    }
    if (mode == INT_FOR) {
        *v = (int64_t)((uint64_t)base + qr_bitpack_get(pp, i, width));
        return 0;
    }
    /* delta: the sum of the first i deltas, unpacked 256 at a time (a run
     * of 256 values starts on a byte boundary) */
    uint64_t acc = (uint64_t)base, tmp[256];
    for (uint32_t j = 0; j < i; j += 256) {
        uint32_t c = i - j < 256 ? i - j : 256;
        qr_bitunpack(pp + (size_t)j * width / 8, c, width, tmp);
        for (uint32_t k = 0; k < c; k++)
            acc += tmp[k];
    }
    *v = (int64_t)acc;
    return 0;
}
