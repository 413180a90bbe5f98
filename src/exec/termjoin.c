/* termjoin.c - join counts as a merge of keyword indexes' term
 * dictionaries (termjoin.h): per segment a walk of the dictionary counting
 * each term's postings against the filters' bitmaps, then a k-way merge of
 * the per-segment sorted lists. */
#include "exec/termjoin.h"

#include <stdatomic.h>
#include <string.h>

#include "match/select.h"
#include "util/popcount.h"

/* A key some matched row of a segment holds: its term (bytes at off in the
 * list's byte buffer), ordered as the dictionary orders terms (code point
 * length, then bytes: k8 is the first 8 bytes big-endian, zero padded, so
 * most comparisons never reach the bytes), and the rows of each side. */
typedef struct tjent {
    uint64_t k8;
    uint32_t off;
    uint16_t cpl;
    uint16_t len;
    uint32_t ca, cb;
} tjent;

/* One segment's keys, in dictionary order. */
typedef struct tjlist {
    tjent *e;
    uint64_t n, cap;
    char *bytes;
    uint64_t nb, bcap;
} tjlist;

/* A task: segment si of side 0 (a), of side 1 (b), or of both (same). */
typedef struct tjob {
    const qr_tjside *side[2];
    int same;
    qr_qctx *ctx;
    uint32_t ntasks;
    tjlist *lists; /* one per task */
    uint64_t terms[QR_MAX_SEARCH_THREADS];
    atomic_uint next;
    atomic_int failed;
    int rc[QR_MAX_SEARCH_THREADS];
    qr_err err[QR_MAX_SEARCH_THREADS];
} tjob;

static int has_sec(const qr_segment *s, uint16_t sec)
{
    for (uint32_t i = 0; i < s->nsecs; i++)
        if (s->secs[i].id == sec)
            return 1;
    return 0;
}

/* The rows of segment si that side x counts, as a bitmap in arena a; NULL
 * (and *none = 0) when that is every row of a segment without deletions,
 * which counts a term's df. */
static uint64_t *side_bits(const qr_tjside *x, uint32_t si, int t, qr_arena *a, qr_err *e,
                           int *failed)
{
    qr_par_search *ps = x->ps;
    qr_segment *seg = ps->ss[si].seg;
    uint32_t rows = (uint32_t)seg->rows;
    size_t nw = ((size_t)rows + 63) / 64;
    *failed = 0;
    if (x->all && !seg->deleted)
        return NULL;
    uint64_t *bits = qr_arena_alloc(a, 8 * (nw + 1));
    if (!bits) {
        *failed = 1;
        qr_qctx_nomem(ps->ctx, e);
        return NULL;
    }
    if (x->all) { /* every row that is not deleted */
        for (size_t w = 0; w < nw; w++)
            bits[w] = ~seg->deleted[w];
        if (rows & 63)
            bits[nw - 1] &= ~0ull >> (64 - (rows & 63));
        return bits;
    }
    ps->ss[si].run = &ps->qrun[t];
    qr_it *it = qr_segsearch_compile(&ps->ss[si], ps->q[t], a, e);
    if (!it) {
        *failed = 1;
        return NULL;
    }
    qr_itsel sel;
    qr_itsel_init(&sel, it, rows);
    if (qr_it_select_bits(&sel, 0, rows, bits, e) < 0) {
        *failed = 1;
        return NULL;
    }
    return bits;
}

/* Rows of term ti in bits (NULL: every row). c: a cursor to reuse. */
static int count_term(qr_invfield *f, const qr_terminfo *ti, const uint64_t *ba, const uint64_t *bb,
                      int two, qr_pcursor *c, uint32_t *ca, uint32_t *cb, qr_err *e)
{
    uint32_t rows = f->rows, na = 0, nb = 0;
    if (ti->kind == TI_INLINE) {
        for (uint32_t i = 0; i < ti->df && i < QR_INLINE_DF; i++) {
            uint32_t d = ti->idocs[i];
            if (d >= rows)
                return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s postings past the rows",
                               f->seg->path, f->def.name);
            na += ba ? (uint32_t)(ba[d >> 6] >> (d & 63) & 1) : 1;
            nb += bb ? (uint32_t)(bb[d >> 6] >> (d & 63) & 1) : 1;
        }
    } else if (ti->has_bitmap) { /* a dense value: popcounts */
        const unsigned char *vb = qr_invfield_bitmap(f, ti, e);
        if (!vb)
            return -1;
        size_t nw = ((size_t)rows + 63) / 64;
        for (size_t w = 0; w < nw; w++) {
            uint64_t v;
            memcpy(&v, vb + 8 * w, 8);
            na += (uint32_t)__builtin_popcountll(ba ? v & ba[w] : v);
            nb += (uint32_t)__builtin_popcountll(bb ? v & bb[w] : v);
        }
    } else if (!ba && (!two || !bb)) { /* every row counts: the df */
        na = nb = ti->df;
    } else {
        if (qr_invfield_cursor(f, ti, c, e) != 0)
            return -1;
        if (qr_pc_count_bits(c, ba, bb, rows, &na, &nb) < 0)
            return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s postings do not decode",
                           f->seg->path, f->def.name);
    }
    *ca = na;
    *cb = two ? nb : 0;
    return 0;
}

static int list_add(qr_qctx *ctx, tjlist *l, const char *t, size_t n, uint32_t cpl, uint32_t ca,
                    uint32_t cb, qr_err *e)
{
    if (l->n == l->cap) {
        uint64_t cap = l->cap ? l->cap * 2 : 1024;
        tjent *p = qr_qrealloc(ctx, l->e, sizeof *p * cap);
        if (!p)
            return qr_qctx_nomem(ctx, e);
        l->e = p;
        l->cap = cap;
    }
    if (l->nb + n > l->bcap || !l->bytes) { /* (allocated for an empty key too) */
        uint64_t cap = l->bcap ? l->bcap * 2 : 16384;
        while (cap < l->nb + n)
            cap *= 2;
        char *p = qr_qrealloc(ctx, l->bytes, cap);
        if (!p)
            return qr_qctx_nomem(ctx, e);
        l->bytes = p;
        l->bcap = cap;
    }
    if (l->nb > UINT32_MAX - n)
        return qr_errf(e, QR_E_TOO_LONG, "a join's keys in one segment pass 4 GiB");
    uint64_t k8 = 0;
    for (size_t i = 0; i < 8; i++)
        k8 = k8 << 8 | (i < n ? (unsigned char)t[i] : 0);
    if (n)
        memcpy(l->bytes + l->nb, t, n);
    l->e[l->n++] = (tjent){k8, (uint32_t)l->nb, (uint16_t)cpl, (uint16_t)n, ca, cb};
    l->nb += n;
    return 0;
}

#define KEY_BATCH 1024u

/* Side x's residual over the keys of l that side's rows hold (count > 0:
 * no other value is tested, so an error is one the rows would raise too),
 * a batch at a time: a key it does not hold for counts no row of that side.
 * Entries left with no count are dropped. */
static int filter_keys(const qr_tjside *x, tjlist *l, int second, qr_arena *a, qr_err *e)
{
    qr_cell *cells = qr_arena_alloc(a, sizeof *cells * KEY_BATCH);
    uint32_t *sel = qr_arena_alloc(a, sizeof *sel * KEY_BATCH);
    uint64_t *ent = qr_arena_alloc(a, sizeof *ent * KEY_BATCH);
    const qr_cell **cols = qr_arena_alloc(a, sizeof *cols * (x->ncols ? x->ncols : 1));
    if (!cells || !sel || !ent || !cols)
        return qr_qctx_nomem(x->ps->ctx, e);
    memset(cols, 0, sizeof *cols * (x->ncols ? x->ncols : 1));
    cols[x->key_col] = cells;
    qr_arena scratch;
    qr_arena_init(&scratch, 64 << 10, 0);
    qr_arena_set_ctx(&scratch, x->ps->ctx);
    int rc = 0;
    for (uint64_t i = 0; i < l->n && rc == 0;) {
        uint32_t n = 0, ns = 0;
        for (; i < l->n && n < KEY_BATCH; i++) {
            const tjent *t = &l->e[i];
            if (second ? t->cb : t->ca) {
                ent[n] = i;
                cells[n++] = (qr_cell){.s = l->bytes + t->off, .n = t->len};
            }
        }
        qr_arena_reset(&scratch);
        qr_xbatch b = {n, x->ncols, cols, x->types, NULL};
        rc = n ? qr_expr_filter(x->rest, &b, sel, &ns, &scratch, e) : 0;
        for (uint32_t k = 0, q = 0; rc == 0 && k < n; k++) {
            if (q < ns && sel[q] == k) {
                q++;
                continue;
            }
            tjent *t = &l->e[ent[k]];
            *(second ? &t->cb : &t->ca) = 0;
        }
        if (rc == 0)
            rc = qr_qctx_check(x->ps->ctx, e);
    }
    qr_arena_free(&scratch);
    uint64_t w = 0;
    for (uint64_t i = 0; rc == 0 && i < l->n; i++)
        if (l->e[i].ca | l->e[i].cb)
            l->e[w++] = l->e[i];
    if (rc == 0)
        l->n = w;
    return rc;
}

/* Task k: one segment's dictionary walked, its keys listed. */
static int walk(tjob *j, int t, uint32_t k, qr_pcursor *cur, qr_err *e)
{
    int s0 = j->same ? 0 : k < j->side[0]->ps->nsegs ? 0 : 1;
    const qr_tjside *x = j->side[s0];
    uint32_t si = j->same || s0 == 0 ? k : k - j->side[0]->ps->nsegs;
    qr_par_search *ps = x->ps;
    qr_arena *a = &ps->run[t];
    qr_arena_reset(a);
    int failed = 0;
    const uint64_t *ba = side_bits(x, si, t, a, e, &failed), *bb = NULL;
    if (failed)
        return -1;
    if (j->same) {
        qr_arena *a2 = &j->side[1]->ps->run[t];
        qr_arena_reset(a2);
        bb = side_bits(j->side[1], si, t, a2, e, &failed);
        if (failed)
            return -1;
    }
    qr_invfield *f = qr_segsearch_field(&ps->ss[si], x->sec, e);
    if (!f)
        return -1;
    qr_titer it;
    int r = qr_tdict_seek(&f->dict, &it, NULL, 0, e);
    tjlist own = {0}, *l = &own; /* a local: the tasks' lists share cache lines */
    uint64_t n = 0;
    while (r == 1) {
        qr_terminfo ti;
        uint32_t ca = 0, cb = 0;
        if (((++n & 0xfff) == 0 && qr_qctx_check(j->ctx, e) != 0) ||
            qr_titer_info(&it, &ti, e) != 0 ||
            count_term(f, &ti, ba, bb, j->same, cur, &ca, &cb, e) != 0 ||
            ((ca | cb) && list_add(j->ctx, l, it.term, it.len, qr_titer_cpl(&it), s0 ? 0 : ca,
                                   s0 ? ca : cb, e) != 0)) {
            r = -1;
            break;
        }
        r = qr_titer_next(&it, e);
    }
    j->terms[t] += n;
    int rc = r < 0 ? -1 : 0;
    if (rc == 0 && x->rest)
        rc = filter_keys(x, l, s0, a, e);
    if (rc == 0 && j->same && j->side[1]->rest)
        rc = filter_keys(j->side[1], l, 1, &j->side[1]->ps->run[t], e);
    j->lists[k] = own; /* freed with the others, whatever rc */
    return rc;
}

static void worker(void *arg, int slot)
{
    tjob *j = arg;
    qr_pcursor *cur = qr_qmalloc(j->ctx, sizeof *cur);
    if (!cur) {
        j->rc[slot] = qr_qctx_nomem(j->ctx, &j->err[slot]);
        atomic_store(&j->failed, 1);
        return;
    }
    for (;;) {
        if (atomic_load(&j->failed))
            break;
        uint32_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->ntasks)
            break;
        if (qr_par_check(j->side[0]->ps, &j->err[slot]) != 0 ||
            walk(j, slot, k, cur, &j->err[slot]) != 0) {
            j->rc[slot] = -1;
            atomic_store(&j->failed, 1);
            break;
        }
    }
    qr_qfree(j->ctx, cur);
}

static int ent_cmp(const tjlist *la, const tjent *x, const tjlist *lb, const tjent *y)
{
    if (x->cpl != y->cpl)
        return x->cpl < y->cpl ? -1 : 1;
    if (x->k8 != y->k8)
        return x->k8 < y->k8 ? -1 : 1;
    size_t m = x->len < y->len ? x->len : y->len;
    int c = m > 8 ? memcmp(la->bytes + x->off + 8, lb->bytes + y->off + 8, m - 8) : 0;
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* The merge of one key range: a binary heap of the lists' heads (list
 * numbers, smallest head on top), list k read over [at[k], end[k]); each
 * key's counts summed over the lists that hold it. */
typedef struct merge {
    const tjlist *l;
    uint64_t *at, *end;
    uint32_t *h, nh;
} merge;

static int head_less(const merge *m, uint32_t p, uint32_t q)
{
    return ent_cmp(&m->l[p], &m->l[p].e[m->at[p]], &m->l[q], &m->l[q].e[m->at[q]]) < 0;
}

static void sift_down(merge *m, uint32_t i)
{
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= m->nh)
            return;
        if (c + 1 < m->nh && head_less(m, m->h[c + 1], m->h[c]))
            c++;
        if (!head_less(m, m->h[c], m->h[i]))
            return;
        uint32_t t = m->h[c];
        m->h[c] = m->h[i];
        m->h[i] = t;
        i = c;
    }
}

/* The merge is cut into key ranges (part p: from splitter p - 1 to splitter
 * p, each list's range found by a lower bound), merged in parallel: every
 * entry of one key is in one range. */
#define PARTS_PER_THREAD 4u

typedef struct mjob {
    tjob *j;
    uint32_t nparts;
    const tjent *split; /* nparts - 1 keys, of list `sl` */
    uint32_t sl;
    atomic_uint next;
    atomic_int failed;
    qr_tjcount part[QR_MAX_SEARCH_THREADS];
    int rc[QR_MAX_SEARCH_THREADS];
    qr_err err[QR_MAX_SEARCH_THREADS];
} mjob;

/* The first entry of l not below key (of list kl). */
static uint64_t lower_bound(const tjlist *l, const tjlist *kl, const tjent *key)
{
    uint64_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (ent_cmp(l, &l->e[mid], kl, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int merge_part(mjob *mj, merge *m, uint32_t p, qr_tjcount *res, qr_err *e)
{
    qr_tjcount o = *res, *out = &o; /* (a local: the slots' results share cache lines) */
    tjob *j = mj->j;
    m->nh = 0;
    for (uint32_t k = 0; k < j->ntasks; k++) {
        const tjlist *l = &j->lists[k];
        m->at[k] = p == 0 ? 0 : lower_bound(l, &j->lists[mj->sl], &mj->split[p - 1]);
        m->end[k] = p + 1 == mj->nparts ? l->n : lower_bound(l, &j->lists[mj->sl], &mj->split[p]);
        if (m->at[k] < m->end[k])
            m->h[m->nh++] = k;
    }
    for (uint32_t i = m->nh / 2; i-- > 0;)
        sift_down(m, i);
    uint64_t steps = 0;
    while (m->nh) {
        /* one key: pop its entries from every list that holds it */
        uint32_t k0 = m->h[0];
        const tjlist *kl = &m->l[k0];
        const tjent *key = &kl->e[m->at[k0]];
        uint64_t ca = 0, cb = 0;
        do {
            uint32_t k = m->h[0];
            const tjent *x = &m->l[k].e[m->at[k]];
            ca += x->ca;
            cb += x->cb;
            out->listed++;
            if (++m->at[k] == m->end[k])
                m->h[0] = m->h[--m->nh];
            sift_down(m, 0);
        } while (m->nh && ent_cmp(kl, key, &m->l[m->h[0]], &m->l[m->h[0]].e[m->at[m->h[0]]]) == 0);
        if ((++steps & 0xffff) == 0 && qr_qctx_check(j->ctx, e) != 0)
            return -1;
        out->rows_a += ca;
        out->rows_b += cb;
        if (ca && cb) {
            uint64_t q;
            if (__builtin_mul_overflow(ca, cb, &q) || __builtin_add_overflow(out->pairs, q, &q) ||
                q > INT64_MAX)
                return qr_errf(e, QR_E_OUT_OF_RANGE, "count(*) of a join is out of range");
            out->pairs = q;
            out->keys++;
        }
    }
    *res = o;
    return 0;
}

static void merge_worker(void *arg, int slot)
{
    mjob *mj = arg;
    tjob *j = mj->j;
    qr_err *e = &mj->err[slot];
    merge m = {j->lists, qr_qmalloc(j->ctx, sizeof *m.at * (j->ntasks + 1)),
               qr_qmalloc(j->ctx, sizeof *m.end * (j->ntasks + 1)),
               qr_qmalloc(j->ctx, sizeof *m.h * (j->ntasks + 1)), 0};
    int rc = m.at && m.end && m.h ? 0 : qr_qctx_nomem(j->ctx, e);
    while (rc == 0 && !atomic_load(&mj->failed)) {
        uint32_t p = atomic_fetch_add(&mj->next, 1);
        if (p >= mj->nparts)
            break;
        rc = merge_part(mj, &m, p, &mj->part[slot], e);
    }
    if (rc != 0) {
        mj->rc[slot] = -1;
        atomic_store(&mj->failed, 1);
    }
    qr_qfree(j->ctx, m.at);
    qr_qfree(j->ctx, m.end);
    qr_qfree(j->ctx, m.h);
}

static int merge_lists(tjob *j, qr_pool *pool, int nt, qr_tjcount *out, qr_err *e)
{
    mjob *mj = qr_qmalloc(j->ctx, sizeof *mj);
    if (!mj)
        return qr_qctx_nomem(j->ctx, e);
    memset(mj, 0, sizeof *mj);
    mj->j = j;
    /* splitters: evenly spaced keys of the longest list */
    for (uint32_t k = 1; k < j->ntasks; k++)
        if (j->lists[k].n > j->lists[mj->sl].n)
            mj->sl = k;
    const tjlist *sl = &j->lists[mj->sl];
    uint64_t np = (uint64_t)nt * PARTS_PER_THREAD;
    if (nt < 2 || sl->n < np * 64)
        np = 1;
    mj->nparts = (uint32_t)np;
    tjent *split = np > 1 ? qr_qmalloc(j->ctx, sizeof *split * (np - 1)) : NULL;
    int rc = np > 1 && !split ? qr_qctx_nomem(j->ctx, e) : 0;
    for (uint64_t p = 1; rc == 0 && p < np; p++)
        split[p - 1] = sl->e[sl->n * p / np];
    mj->split = split;
    atomic_init(&mj->next, 0);
    atomic_init(&mj->failed, 0);
    if (rc == 0)
        qr_pool_run(nt > 1 && np > 1 ? pool : NULL, np > 1 ? nt : 1, merge_worker, mj);
    for (int t = 0; rc == 0 && t < (np > 1 ? nt : 1); t++) {
        if (mj->rc[t]) {
            *e = mj->err[t];
            rc = -1;
            break;
        }
        const qr_tjcount *c = &mj->part[t];
        uint64_t q;
        if (__builtin_add_overflow(out->pairs, c->pairs, &q) || q > INT64_MAX) {
            rc = qr_errf(e, QR_E_OUT_OF_RANGE, "count(*) of a join is out of range");
            break;
        }
        out->pairs = q;
        out->keys += c->keys;
        out->rows_a += c->rows_a;
        out->rows_b += c->rows_b;
        out->listed += c->listed;
    }
    qr_qfree(j->ctx, split);
    qr_qfree(j->ctx, mj);
    return rc;
}

/* 1 when every segment of x has its index, holding every non-NULL value. */
static int side_indexed(const qr_tjside *x, qr_err *e)
{
    qr_par_search *ps = x->ps;
    for (uint32_t si = 0; si < ps->nsegs; si++) {
        if (!has_sec(ps->ss[si].seg, x->sec))
            return 0;
        qr_invfield *f = qr_segsearch_field(&ps->ss[si], x->sec, e);
        if (!f)
            return -1;
        if (f->def.kind != QR_IX_KEYWORD || f->total_tokens != f->docs_with_field)
            return 0;
    }
    return 1;
}

int qr_x_term_join_count(const qr_tjside *a, const qr_tjside *b, int same, qr_tjcount *out,
                         qr_err *e)
{
    memset(out, 0, sizeof *out);
    int ok = side_indexed(a, e);
    if (ok == 1 && !same)
        ok = side_indexed(b, e);
    if (ok != 1)
        return ok < 0 ? -1 : 1;
    qr_par_search *ps = a->ps;
    tjob *j = qr_qmalloc(ps->ctx, sizeof *j);
    if (!j)
        return qr_qctx_nomem(ps->ctx, e);
    memset(j, 0, sizeof *j);
    j->side[0] = a;
    j->side[1] = b;
    j->same = same;
    j->ctx = ps->ctx;
    j->ntasks = same ? ps->nsegs : ps->nsegs + b->ps->nsegs;
    j->lists = qr_qmalloc(j->ctx, sizeof *j->lists * (j->ntasks + 1));
    int rc = j->lists ? 0 : qr_qctx_nomem(j->ctx, e);
    int nt = ps->threads < 1 ? 1 : ps->threads;
    if (b->ps->threads < nt)
        nt = b->ps->threads < 1 ? 1 : b->ps->threads;
    if (rc == 0) {
        memset(j->lists, 0, sizeof *j->lists * (j->ntasks + 1));
        atomic_init(&j->next, 0);
        atomic_init(&j->failed, 0);
        qr_pool_run(ps->pool, nt, worker, j);
        for (int t = 0; t < nt; t++) {
            out->terms += j->terms[t];
            if (j->rc[t] && rc == 0) {
                *e = j->err[t];
                rc = -1;
            }
        }
    }
    if (rc == 0)
        rc = merge_lists(j, ps->pool, nt, out, e);
    for (uint32_t k = 0; j->lists && k < j->ntasks; k++) {
        qr_qfree(j->ctx, j->lists[k].e);
        qr_qfree(j->ctx, j->lists[k].bytes);
    }
    qr_qfree(j->ctx, j->lists);
    qr_qfree(j->ctx, j);
    return rc;
}
