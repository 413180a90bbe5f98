/* kwords.c - a keyword field's term ordinal per row (invindex.h
 * qr_invfield_ordinals): the inverse of its postings, made by one walk of
 * the dictionary in order, term k's rows given ordinal k. What a join on
 * the field counts with (exec/termjoin.c): a side's matches read through
 * it count each key's rows without decoding a posting per query. A keyword
 * row holds one value, so a row met twice means corrupt postings. */
#include <stdlib.h>
#include <string.h>

#include "index/invindex.h"
#include "util/hash.h"

int qr_invfield_term_rows(qr_invfield *f, const qr_terminfo *ti, qr_pcursor *c, qr_row_fn fn,
                          void *arg, qr_err *e)
{
    uint32_t rows = f->rows;
    int r = 0;
    if (ti->kind == TI_INLINE) {
        for (uint32_t i = 0; r == 0 && i < ti->df && i < QR_INLINE_DF; i++)
            r = ti->idocs[i] < rows ? fn(arg, ti->idocs[i]) : -2;
    } else if (ti->has_bitmap) {
        const unsigned char *vb = qr_invfield_bitmap(f, ti, e);
        if (!vb)
            return -1;
        for (size_t w = 0; r == 0 && w < ((size_t)rows + 63) / 64; w++) {
            uint64_t v;
            memcpy(&v, vb + 8 * w, 8);
            for (; r == 0 && v; v &= v - 1) {
                uint32_t d = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(v));
                r = d < rows ? fn(arg, d) : -2;
            }
        }
    } else {
        if (qr_invfield_cursor(f, ti, c, e) != 0)
            return -1;
        for (uint32_t d = qr_pc_next(c); r == 0 && d != QR_NO_DOC; d = qr_pc_next(c))
            r = d < rows ? fn(arg, d) : -2;
        if (r == 0 && c->corrupt)
            r = -2;
    }
    if (r == -2)
        return qr_errf(e, QR_E_CORRUPT,
                       "segment %s: corrupt: %s postings out of range or overlapping", f->seg->path,
                       f->def.name);
    return r;
}

/* Term k's rows given ordinal k: a row met twice means corrupt postings. */
typedef struct setord {
    uint32_t *ord, k;
} setord;

static int set_row(void *arg, uint32_t d)
{
    setord *s = arg;
    if (s->ord[d] != QR_NO_ORD)
        return -2;
    s->ord[d] = s->k;
    return 0;
}

static int set_rows(qr_invfield *f, const qr_terminfo *ti, uint32_t k, uint32_t *ord, qr_pcursor *c,
                    qr_err *e)
{
    setord s = {ord, k};
    return qr_invfield_term_rows(f, ti, c, set_row, &s, e);
}

const uint32_t *qr_invfield_ordinals(qr_invfield *f, qr_qctx *ctx, qr_err *e)
{
    const uint32_t *have = __atomic_load_n(&f->ords, __ATOMIC_ACQUIRE);
    if (have)
        return have;
    if (f->def.kind != QR_IX_KEYWORD) {
        qr_errf(e, QR_E_INTERNAL, "segment %s: %s: ordinals of an index that is not a keyword one",
                f->seg->path, f->def.name);
        return NULL;
    }
    uint32_t *ord = malloc(sizeof *ord * (f->rows ? f->rows : 1));
    qr_pcursor *c = malloc(sizeof *c);
    int rc = ord && c ? 0 : qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", f->seg->path);
    if (rc == 0)
        memset(ord, 0xff, sizeof *ord * f->rows);
    qr_titer it;
    int r = rc == 0 ? qr_tdict_seek(&f->dict, &it, NULL, 0, e) : -1;
    uint32_t k = 0;
    while (r == 1) {
        qr_terminfo ti;
        /* every ordinal below the dictionary's term count: what readers
         * index their per-key arrays by */
        if (((k >= f->dict.nterms || k == QR_NO_ORD) &&
             qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s has more terms than it says",
                     f->seg->path, f->def.name)) ||
            ((k & 0xfff) == 0 && ctx && qr_qctx_check(ctx, e) != 0) ||
            qr_titer_info(&it, &ti, e) != 0 || set_rows(f, &ti, k, ord, c, e) != 0) {
            r = -1;
            break;
        }
        k++;
        r = qr_titer_next(&it, e);
    }
    free(c);
    if (r < 0) {
        free(ord);
        return NULL;
    }
    uint32_t *none = NULL;
    if (!__atomic_compare_exchange_n(&f->ords, &none, ord, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(ord); /* another thread's copy is the one */
        return none;
    }
    return ord;
}

int qr_invfield_ordinal_of(qr_invfield *f, const char *t, size_t n, uint32_t *o, qr_err *e)
{
    const uint32_t *ord = __atomic_load_n(&f->ords, __ATOMIC_ACQUIRE);
    if (!ord)
        return qr_errf(e, QR_E_INTERNAL, "segment %s: %s: ordinal of a term before ordinals",
                       f->seg->path, f->def.name);
    qr_terminfo ti;
    int r = qr_tdict_lookup(&f->dict, t, n, &ti, e);
    if (r != 1 || ti.df == 0)
        return r < 0 ? -1 : 0;
    /* the term's first row holds it: that row's ordinal is the term's */
    uint32_t d = QR_NO_DOC;
    if (ti.kind == TI_INLINE) {
        d = ti.idocs[0];
    } else if (ti.has_bitmap) {
        const unsigned char *vb = qr_invfield_bitmap(f, &ti, e);
        if (!vb)
            return -1;
        for (size_t w = 0; d == QR_NO_DOC && w < ((size_t)f->rows + 63) / 64; w++) {
            uint64_t v;
            memcpy(&v, vb + 8 * w, 8);
            if (v)
                d = (uint32_t)(w * 64 + (size_t)__builtin_ctzll(v));
        }
    } else {
        qr_pcursor *c = malloc(sizeof *c);
        if (!c)
            return qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", f->seg->path);
        if (qr_invfield_cursor(f, &ti, c, e) != 0) {
            free(c);
            return -1;
        }
        d = qr_pc_next(c);
        int bad = c->corrupt;
        free(c);
        if (bad)
            d = QR_NO_DOC;
    }
    if (d >= f->rows || ord[d] == QR_NO_ORD)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s postings out of range",
                       f->seg->path, f->def.name);
    *o = ord[d];
    return 1;
}

const uint64_t *qr_invfield_term_hashes(qr_invfield *f, qr_qctx *ctx, qr_err *e)
{
    const uint64_t *have = __atomic_load_n(&f->hashes, __ATOMIC_ACQUIRE);
    if (have)
        return have;
    uint64_t nt = f->dict.nterms, k = 0;
    uint64_t *h = malloc(sizeof *h * (nt ? nt : 1));
    if (!h) {
        qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", f->seg->path);
        return NULL;
    }
    qr_titer it;
    int r = qr_tdict_seek(&f->dict, &it, NULL, 0, e);
    for (; r == 1; r = qr_titer_next(&it, e), k++) {
        if (k >= nt) {
            r = qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s has more terms than it says",
                        f->seg->path, f->def.name);
            break;
        }
        if ((k & 0xfff) == 0 && ctx && qr_qctx_check(ctx, e) != 0) {
            r = -1;
            break;
        }
        h[k] = qr_hash64(it.term, it.len);
    }
    if (r == 0 && k != nt)
        r = qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s has fewer terms than it says",
                    f->seg->path, f->def.name);
    if (r < 0) {
        free(h);
        return NULL;
    }
    uint64_t *none = NULL;
    if (!__atomic_compare_exchange_n(&f->hashes, &none, h, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(h);
        return none;
    }
    return h;
}
