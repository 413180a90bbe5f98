/* valshapes.c - the VALSHAPES block of a keyword index (valshapes.h):
 * written value by value as a build or a merge writes the dictionary,
 * read by a binary search over the values. */
#include "index/valshapes.h"

#include <stdlib.h>
#include <string.h>

#include "index/termdict.h"

#define HEADER 16u

void qr_valshapes_w_init(qr_valshapes_w *w, const qr_shapes *sh, uint16_t sec, uint32_t rows)
{
    memset(w, 0, sizeof *w);
    w->sh = sh;
    w->sec = sec;
    w->words = sh ? sh->k / 64 + 1 : 0;
    w->budget = rows / 8 > 1024 ? rows / 8 : 1024;
    qr_buf_init(&w->offs);
    qr_buf_init(&w->ents);
}

int qr_valshapes_w_add(qr_valshapes_w *w, const char *t, size_t tl, const uint32_t *docs,
                       uint32_t n)
{
    if (!w->sh || w->over)
        return 0;
    qr_buf_put_u32(&w->offs, (uint32_t)w->ents.len);
    qr_buf_put_varint(&w->ents, tl);
    qr_buf_put(&w->ents, t, tl);
    size_t at = w->ents.len, bytes = (size_t)w->words * 8;
    unsigned char *set = qr_buf_reserve(&w->ents, bytes);
    if (!set || w->offs.oom)
        return -1;
    memset(set, 0, bytes);
    w->ents.len += bytes;
    set = w->ents.p + at;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = qr_shape_of(w->sh, docs[i]);
        set[j >> 3] |= (unsigned char)(1u << (j & 7));
    }
    w->nvals++;
    if (HEADER + w->offs.len + w->ents.len > w->budget) { /* too many values: none */
        w->over = 1;
        qr_buf_free(&w->offs);
        qr_buf_free(&w->ents);
    }
    return 0;
}

int qr_valshapes_w_finish(qr_valshapes_w *w, qr_buf *out)
{
    if (!w->sh || w->over || !w->nvals)
        return 0;
    qr_buf_put_u16(out, w->sec);
    qr_buf_put_u16(out, 0);
    qr_buf_put_u32(out, w->sh->k);
    qr_buf_put_u32(out, w->nvals);
    qr_buf_put_u32(out, w->words);
    qr_buf_put(out, w->offs.p, w->offs.len);
    qr_buf_put(out, w->ents.p, w->ents.len);
    return out->oom ? -1 : 0;
}

void qr_valshapes_w_free(qr_valshapes_w *w)
{
    qr_buf_free(&w->offs);
    qr_buf_free(&w->ents);
}

int qr_valshapes_parse(const unsigned char *p, size_t len, qr_valshapes *vs, const char *path,
                       qr_err *e)
{
    memset(vs, 0, sizeof *vs);
    if (len < HEADER)
        goto bad;
    vs->sec = (uint16_t)(p[0] | p[1] << 8);
    vs->k = qr_load_u32(p + 4);
    vs->nvals = qr_load_u32(p + 8);
    vs->words = qr_load_u32(p + 12);
    if (p[2] || p[3] || vs->k > QR_SHAPES_MAX || vs->words != vs->k / 64 + 1 || vs->nvals == 0 ||
        vs->nvals > (len - HEADER) / 4)
        goto bad;
    vs->offs = p + HEADER;
    vs->ents = vs->offs + (size_t)vs->nvals * 4;
    vs->ents_len = len - HEADER - (size_t)vs->nvals * 4;
    /* each entry runs exactly to the next one's offset (the last to the end) */
    for (uint32_t i = 0; i < vs->nvals; i++) {
        size_t at = qr_load_u32(vs->offs + (size_t)i * 4);
        size_t end = i + 1 < vs->nvals ? qr_load_u32(vs->offs + (size_t)(i + 1) * 4) : vs->ents_len;
        if (at >= end || end > vs->ents_len)
            goto bad;
        qr_rd r;
        qr_rd_init(&r, vs->ents + at, end - at);
        uint64_t tl = qr_rd_varint(&r);
        if (r.bad || qr_rd_left(&r) < (uint64_t)vs->words * 8 ||
            qr_rd_left(&r) - (uint64_t)vs->words * 8 != tl)
            goto bad;
    }
    return 0;
bad:
    memset(vs, 0, sizeof *vs);
    return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: VALSHAPES block of %zu bytes", path, len);
}

/* Entry i's value and set. */
static const unsigned char *entry(const qr_valshapes *vs, uint32_t i, const char **t, size_t *tl)
{
    qr_rd r;
    size_t at = qr_load_u32(vs->offs + (size_t)i * 4);
    qr_rd_init(&r, vs->ents + at, vs->ents_len - at);
    *tl = (size_t)qr_rd_varint(&r);
    *t = (const char *)r.p;
    return r.p + *tl;
}

const unsigned char *qr_valshapes_find(const qr_valshapes *vs, const char *t, size_t n)
{
    uint32_t lo = 0, hi = vs->nvals;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        const char *v;
        size_t vl;
        const unsigned char *set = entry(vs, mid, &v, &vl);
        int c = qr_term_cmp(v, vl, t, n);
        if (c == 0)
            return set;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
