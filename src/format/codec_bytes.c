/* codec_bytes.c - byte-payload codecs: the zstd compression wrapper used by
 * every compressed block, and value lists (the raw form of string pages and
 * dictionaries).
 *
 * Compressed payload: [u8 comp][u32 raw_len][zstd frame]; COMP_NONE is
 * [0][raw bytes]. Value list: [varint n][u8 has_nulls][bitmap if has_nulls]
 * [varint length per non-NULL value][concatenated bytes].
 */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_forceAttachDict */
#include <zstd.h>

#include "format/codec.h"
#include "format/segfmt.h"

int comp_put(qr_buf *out, const void *raw, size_t n, int level, void *cctx, const void *cdict)
{
    size_t bound = ZSTD_compressBound(n);
    size_t start = out->len;
    unsigned char *d = qr_buf_reserve(out, 5 + bound);
    if (!d)
        return -1;
    size_t c;
    if (cdict) {
        /* attach (never copy) the dictionary's tables: the working tables are
         * then sized for this small page only, instead of being cleared at
         * dictionary size for every page */
        ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_forceAttachDict, ZSTD_dictForceAttach);
        ZSTD_CCtx_refCDict(cctx, cdict);
        c = ZSTD_compress2(cctx, d + 5, bound, raw, n);
    } else {
        c = ZSTD_compressCCtx(cctx, d + 5, bound, raw, n, level);
    }
    if (!ZSTD_isError(c) && c + 4 < n) {
        d[0] = cdict ? COMP_ZSTD_DICT : COMP_ZSTD;
        qr_store_u32(d + 1, (uint32_t)n);
        out->len = start + 5 + c;
    } else {
        d[0] = COMP_NONE;
        out->len = start + 1;
        qr_buf_put(out, raw, n);
    }
    return out->oom ? -1 : 0;
}

int comp_get(const unsigned char *p, size_t len, qr_buf *dst, void *dctx, const void *ddict,
             size_t max_raw, const char **why)
{
    qr_buf_clear(dst);
    if (len < 1) {
        *why = "empty compressed payload";
        return -1;
    }
    if (p[0] == COMP_NONE) {
        qr_buf_put(dst, p + 1, len - 1);
        if (dst->oom) {
            *why = "out of memory";
            return -1;
        }
        return 0;
    }
    if ((p[0] != COMP_ZSTD && p[0] != COMP_ZSTD_DICT) || len < 5) {
        *why = "unknown compression kind";
        return -1;
    }
    if (p[0] == COMP_ZSTD_DICT && !ddict) {
        *why = "page needs a zstd dictionary the column does not have";
        return -1;
    }
    uint32_t raw = qr_load_u32(p + 1);
    if (raw > max_raw) {
        *why = "compressed payload claims an implausible size";
        return -1;
    }
    unsigned char *d = qr_buf_reserve(dst, raw ? raw : 1);
    if (!d) {
        *why = "out of memory";
        return -1;
    }
    size_t got = p[0] == COMP_ZSTD_DICT
                     ? ZSTD_decompress_usingDDict(dctx, d, raw, p + 5, len - 5, ddict)
                     : ZSTD_decompressDCtx(dctx, d, raw, p + 5, len - 5);
    if (ZSTD_isError(got) || got != raw) {
        *why = "zstd frame does not decode to its stated size";
        return -1;
    }
    dst->len = raw;
    return 0;
}

void vlist_put(qr_buf *out, const qr_slice *v, uint32_t n)
{
    int has_nulls = 0;
    for (uint32_t i = 0; i < n && !has_nulls; i++)
        has_nulls = v[i].p == NULL;
    qr_buf_put_varint(out, n);
    qr_buf_put_u8(out, (uint8_t)has_nulls);
    if (has_nulls) {
        size_t nb = (n + 7) / 8;
        unsigned char *bm = qr_buf_reserve(out, nb);
        if (!bm)
            return;
        memset(bm, 0, nb);
        for (uint32_t i = 0; i < n; i++)
            if (!v[i].p)
                bm[i >> 3] |= (unsigned char)(1u << (i & 7));
        out->len += nb;
    }
    for (uint32_t i = 0; i < n; i++)
        if (v[i].p)
            qr_buf_put_varint(out, v[i].n);
    for (uint32_t i = 0; i < n; i++)
        if (v[i].p)
            qr_buf_put(out, v[i].p, v[i].n);
}

int vlist_get(const unsigned char *p, size_t len, uint32_t n, qr_slice *v, const char **why)
{
    qr_rd r;
    qr_rd_init(&r, p, len);
    uint64_t cnt = qr_rd_varint(&r);
    uint8_t has_nulls = qr_rd_u8(&r);
    if (r.bad || cnt != n || has_nulls > 1) {
        *why = "value list header does not match the row count";
        return -1;
    }
    const unsigned char *bm = NULL;
    if (has_nulls && !(bm = qr_rd_bytes(&r, (n + 7) / 8))) {
        *why = "value list truncated in NULL bitmap";
        return -1;
    }
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (bm && (bm[i >> 3] >> (i & 7)) & 1) {
            v[i].p = NULL;
            v[i].n = 0;
            continue;
        }
        uint64_t l = qr_rd_varint(&r);
        if (r.bad || l > len) {
            *why = "value list length field malformed";
            return -1;
        }
        v[i].n = (size_t)l;
        v[i].p = (const char *)(uintptr_t)total; /* offset for now */
        total += l;
    }
    if (total != qr_rd_left(&r)) {
        *why = "value list bytes do not match the lengths";
        return -1;
    }
    static const char empty[1] = {0};
    const char *base = (const char *)r.p;
    for (uint32_t i = 0; i < n; i++) {
        if (bm && (bm[i >> 3] >> (i & 7)) & 1)
            continue;
        uintptr_t off = (uintptr_t)v[i].p;
        v[i].p = v[i].n ? base + off : empty;
    }
    return 0;
}
