/* shapewords.c - the SHAPEWORDS block (shapewords.h): made from the
 * shapes' text at build and merge, checked and read in place by queries,
 * words found by binary search. */
#include "index/shapewords.h"

#include <stdlib.h>
#include <string.h>

#include "index/norms.h"
#include "util/strmap.h"

#define HEADER 16u

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "SHAPEWORDS arrays are read in place as little-endian"
#endif

static int word_cmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

static int by_bytes(const void *x, const void *y, void *ctx)
{
    const qr_slice *k = ctx;
    const qr_slice *a = &k[*(const uint32_t *)x], *b = &k[*(const uint32_t *)y];
    return word_cmp((const unsigned char *)a->p, a->n, (const unsigned char *)b->p, b->n);
}

int qr_shape_words_build(const qr_shapes *s, qr_buf *out, const char *path, qr_err *e)
{
    qr_strmap m;
    qr_strmap_init(&m);
    /* (word id, shape) of every non-variable token, in shape order */
    size_t np = 0, cap = 1024;
    uint64_t *pair = malloc(sizeof *pair * cap);
    uint8_t *norm = malloc((size_t)s->k + 1);
    uint32_t *order = NULL, *rank = NULL, *first = NULL, *fill = NULL;
    qr_shape_occ *occ = NULL;
    int rc = -1;
    if (!pair || !norm)
        goto oom;
    norm[0] = qr_norm_encode(0);
    qr_rd r;
    qr_rd_init(&r, s->dict, s->dict_len);
    for (uint32_t j = 1; j <= s->k && !r.bad; j++) {
        uint64_t n = qr_rd_varint(&r);
        norm[j] = qr_norm_encode(n > UINT32_MAX ? UINT32_MAX : (uint32_t)n);
        for (uint64_t t = 0; t < n && !r.bad; t++) {
            uint64_t l = qr_rd_varint(&r);
            const unsigned char *p = l ? qr_rd_bytes(&r, l - 1) : NULL;
            if (!p)
                continue; /* variable (or past the end: r.bad) */
            int added;
            int64_t id = qr_strmap_put(&m, (const char *)p, (size_t)(l - 1), &added);
            if (id < 0)
                goto oom;
            if (np == cap) {
                uint64_t *more = realloc(pair, sizeof *pair * (cap *= 2));
                if (!more)
                    goto oom;
                pair = more;
            }
            pair[np++] = (uint64_t)id << 32 | j;
        }
    }
    if (r.bad || qr_rd_left(&r) != 0) {
        qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: SHAPES text", path);
        goto out;
    }
    /* words in byte order: rank[id] is word id's place */
    uint32_t nw = m.count;
    order = malloc(sizeof *order * (nw + 1));
    rank = malloc(sizeof *rank * (nw + 1));
    first = calloc((size_t)nw + 1, sizeof *first);
    fill = calloc((size_t)nw + 1, sizeof *fill);
    occ = malloc(sizeof *occ * (np + 1));
    if (!order || !rank || !first || !fill || !occ)
        goto oom;
    for (uint32_t i = 0; i < nw; i++)
        order[i] = i;
    qsort_r(order, nw, sizeof *order, by_bytes, m.keys);
    for (uint32_t i = 0; i < nw; i++)
        rank[order[i]] = i;
    /* each word's distinct shapes (the pairs go by shape: fill holds the
     * last shape a word was seen in), then its list, repeats into tf */
    for (size_t i = 0; i < np; i++) {
        uint32_t w = rank[pair[i] >> 32], j = (uint32_t)pair[i];
        first[w + 1] += fill[w] != j;
        fill[w] = j;
    }
    for (uint32_t i = 0; i < nw; i++)
        first[i + 1] += first[i];
    memcpy(fill, first, sizeof *fill * nw);
    for (size_t i = 0; i < np; i++) {
        uint32_t w = rank[pair[i] >> 32], j = (uint32_t)pair[i];
        if (fill[w] > first[w] && occ[fill[w] - 1].shape == j)
            occ[fill[w] - 1].tf++;
        else
            occ[fill[w]++] = (qr_shape_occ){j, 1};
    }
    uint32_t no = nw ? first[nw] : 0;
    qr_buf_put_u32(out, nw);
    qr_buf_put_u32(out, no);
    qr_buf_put_u32(out, s->k);
    qr_buf_put_u32(out, 0);
    for (uint32_t i = 0; i <= nw; i++)
        qr_buf_put_u32(out, first[i]);
    uint32_t end = 0;
    qr_buf_put_u32(out, 0);
    for (uint32_t i = 0; i < nw; i++)
        qr_buf_put_u32(out, end += (uint32_t)m.keys[order[i]].n);
    for (uint32_t i = 0; i < no; i++) {
        qr_buf_put_u32(out, occ[i].shape);
        qr_buf_put_u32(out, occ[i].tf);
    }
    qr_buf_put(out, norm, (size_t)s->k + 1);
    static const unsigned char zeros[4];
    qr_buf_put(out, zeros, (4 - ((size_t)s->k + 1) % 4) % 4);
    for (uint32_t i = 0; i < nw; i++)
        qr_buf_put(out, m.keys[order[i]].p, m.keys[order[i]].n);
    if (out->oom)
        goto oom;
    rc = 0;
    goto out;
oom:
    qr_errf(e, QR_E_NOMEM, "segment %s: out of memory indexing row shapes", path);
out:
    qr_strmap_free(&m);
    free(pair);
    free(norm);
    free(order);
    free(rank);
    free(first);
    free(fill);
    free(occ);
    return rc;
}

static int bad(qr_shape_words *w, const char *path, const char *what, qr_err *e)
{
    free(w->own);
    memset(w, 0, sizeof *w);
    return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: SHAPEWORDS %s", path, what);
}

int qr_shape_words_parse(const unsigned char *p, size_t len, uint32_t k, qr_shape_words *w,
                         const char *path, qr_err *e)
{
    memset(w, 0, sizeof *w);
    if (len < HEADER)
        return bad(w, path, "header", e);
    uint32_t nw = qr_load_u32(p), no = qr_load_u32(p + 4);
    if (qr_load_u32(p + 8) != k || qr_load_u32(p + 12) != 0)
        return bad(w, path, "header (not the shapes' count)", e);
    uint64_t norm_len = ((uint64_t)k + 1 + 3) / 4 * 4;
    uint64_t fixed = HEADER + 8ull * ((uint64_t)nw + 1) + 8ull * no + norm_len;
    if (fixed > len)
        return bad(w, path, "arrays past the block", e);
    if (((uintptr_t)p & 3) != 0) { /* arrays are read in place: copy when misaligned */
        if (!(w->own = malloc(len)))
            return qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", path);
        memcpy(w->own, p, len);
        p = w->own;
    }
    w->nw = nw;
    w->k = k;
    w->first = (const uint32_t *)(const void *)(p + HEADER);
    w->ends = w->first + nw + 1;
    w->occ = (const qr_shape_occ *)(const void *)(w->ends + nw + 1);
    w->norm = (const uint8_t *)(w->occ + no);
    w->bytes = w->norm + norm_len;
    if (w->first[0] != 0 || w->first[nw] != no || w->ends[0] != 0 || w->ends[nw] != len - fixed)
        return bad(w, path, "array bounds", e);
    for (uint64_t i = k + 1; i < norm_len; i++)
        if (w->norm[i])
            return bad(w, path, "padding", e);
    /* Checked at every open (a count by shapes loads the block in each
     * of a table's segments: ~3,400 occurrences a segment at 100M rows),
     * so the occurrences are checked in one flat pass without branches,
     * not word by word: a word's shapes increase when every place where a
     * shape does not exceed the one before it is the start of a word. */
    for (uint32_t i = 0; i < nw; i++) {
        if (w->first[i + 1] <= w->first[i] || w->ends[i + 1] <= w->ends[i])
            return bad(w, path, "offsets", e);
        if (i && word_cmp(w->bytes + w->ends[i - 1], w->ends[i] - w->ends[i - 1],
                          w->bytes + w->ends[i], w->ends[i + 1] - w->ends[i]) >= 0)
            return bad(w, path, "word order", e);
    }
    uint32_t starts_down = 0;         /* such places at the words' starts */
    for (uint32_t i = 1; i < nw; i++) /* first[i] in 1..no - 1: they rise from 0 to no */
        starts_down += w->occ[w->first[i]].shape <= w->occ[w->first[i] - 1].shape;
    uint32_t out_of_range = 0, down = 0, prev = 0; /* (the first shape is never <= 0) */
    for (uint32_t o = 0; o < no; o++) {
        uint32_t sh = w->occ[o].shape; /* shape 0, past k, or tf 0 */
        out_of_range |= (uint32_t)(sh - 1u >= k) | (uint32_t)(w->occ[o].tf == 0);
        down += sh <= prev;
        prev = sh;
    }
    if (out_of_range || down != starts_down)
        return bad(w, path, "shape list", e);
    return 0;
}

int qr_shape_words_make(const qr_shapes *s, qr_shape_words *w, const char *path, qr_err *e)
{
    memset(w, 0, sizeof *w);
    qr_buf b;
    qr_buf_init(&b);
    if (qr_shape_words_build(s, &b, path, e) != 0) {
        qr_buf_free(&b);
        return -1;
    }
    /* the buffer becomes w's own (malloc'ed: aligned, read in place) */
    if (qr_shape_words_parse(b.p, b.len, s->k, w, path, e) != 0) {
        qr_buf_free(&b);
        return -1;
    }
    if (w->own) /* parse copied it after all */
        qr_buf_free(&b);
    else
        w->own = b.p;
    return 0;
}

void qr_shape_words_free(qr_shape_words *w)
{
    free(w->own);
    memset(w, 0, sizeof *w);
}

const qr_shape_occ *qr_shape_words_find(const qr_shape_words *w, const char *t, size_t n,
                                        uint32_t *cnt)
{
    uint32_t lo = 0, hi = w->nw; /* the first word >= t is in [lo, hi] */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (word_cmp(w->bytes + w->ends[mid], w->ends[mid + 1] - w->ends[mid],
                     (const unsigned char *)t, n) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == w->nw || word_cmp(w->bytes + w->ends[lo], w->ends[lo + 1] - w->ends[lo],
                                (const unsigned char *)t, n) != 0) {
        *cnt = 0;
        return NULL;
    }
    *cnt = w->first[lo + 1] - w->first[lo];
    return w->occ + w->first[lo];
}

int qr_shape_words_all(const qr_shape_words *w, const char *const *t, const size_t *len, uint32_t n,
                       int first_tf, qr_arena *a, qr_shape_occ **out, uint32_t *cnt)
{
    const qr_shape_occ *occ[QR_SHAPE_WORDS_ALL_MAX];
    uint32_t nocc[QR_SHAPE_WORDS_ALL_MAX], at[QR_SHAPE_WORDS_ALL_MAX] = {0}, r = 0;
    *out = NULL;
    *cnt = 0;
    if (n == 0 || n > QR_SHAPE_WORDS_ALL_MAX)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!(occ[i] = qr_shape_words_find(w, t[i], len[i], &nocc[i])))
            nocc[i] = 0;
        r = nocc[i] < nocc[r] ? i : r; /* walk the rarest word's list */
    }
    if (!nocc[r])
        return 0;
    if (!(*out = qr_arena_alloc(a, sizeof **out * nocc[r])))
        return -1;
    for (uint32_t i = 0; i < nocc[r]; i++) {
        uint32_t shape = occ[r][i].shape, least = UINT32_MAX, k = 0;
        for (; k < n; k++) {
            while (at[k] < nocc[k] && occ[k][at[k]].shape < shape)
                at[k]++;
            if (at[k] == nocc[k] || occ[k][at[k]].shape != shape)
                break;
            if ((!first_tf || k == 0) && occ[k][at[k]].tf < least)
                least = occ[k][at[k]].tf;
        }
        if (k == n)
            (*out)[(*cnt)++] = (qr_shape_occ){shape, least};
    }
    return 0;
}
