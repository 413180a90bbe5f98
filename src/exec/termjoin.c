/* termjoin.c - join counts as a merge of keyword indexes' term
 * dictionaries (termjoin.h): per segment each side's matches counted per
 * key through the field's ordinal per row, the keys with rows listed in
 * dictionary order, then a k-way merge of the per-segment sorted lists. */
#include "exec/termjoin.h"

#include <stdatomic.h>
#include <string.h>

#include "match/select.h"

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
    /* Which keys more than one list holds: each slot marks the hash of
     * every key it lists in seen[slot] (and in dup[slot] when already
     * seen), 2^fshift bits each; a key whose bit is in no slot's dup and
     * in one slot's seen only is in one list, and settles there */
    uint64_t *seen[QR_MAX_SEARCH_THREADS], *dup[QR_MAX_SEARCH_THREADS];
    uint32_t fshift;
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
 * with *failed = 0 when that is every row of a segment without deletions. */
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

/* Side rows per key: c[o] += the rows of bits (NULL: every row) whose
 * value has ordinal o (ord: qr_invfield_ordinals). */
static int count_rows(const qr_invfield *f, const uint32_t *ord, const uint64_t *bits, uint32_t *c,
                      uint64_t nt, qr_err *e)
{
    uint32_t rows = f->rows;
    if (!bits) {
        for (uint32_t d = 0; d < rows; d++)
            if (ord[d] != QR_NO_ORD) {
                if (ord[d] >= nt)
                    goto bad;
                c[ord[d]]++;
            }
        return 0;
    }
    for (size_t w = 0; w < ((size_t)rows + 63) / 64; w++)
        for (uint64_t v = bits[w]; v; v &= v - 1) {
            uint32_t o = ord[w * 64 + (size_t)__builtin_ctzll(v)];
            if (o != QR_NO_ORD) {
                if (o >= nt)
                    goto bad;
                c[o]++;
            }
        }
    return 0;
bad:
    return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s has more terms than its dictionary",
                   f->seg->path, f->def.name);
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
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (n >= 8) {
        memcpy(&k8, t, 8);
        k8 = __builtin_bswap64(k8); /* big-endian: compares as the bytes do */
    } else
#endif
    {
        for (size_t i = 0; i < 8; i++)
            k8 = k8 << 8 | (i < n ? (unsigned char)t[i] : 0);
    }
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

/* A key's bit in the filters: of its code point length and first 8 bytes
 * only (keys equal there share it and go to the merge, which compares
 * them whole). */
static inline uint64_t key_hash(const tjent *x, uint32_t fshift)
{
    return ((x->k8 ^ (uint64_t)x->cpl << 48) * 0x9e3779b97f4a7c15ull) >> (64 - fshift);
}

/* Task k: one segment's matches counted per key, its keys listed. */
static int walk(tjob *j, int t, uint32_t k, qr_err *e)
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
    const uint32_t *ord = f ? qr_invfield_ordinals(f, j->ctx, e) : NULL;
    if (!ord)
        return -1;
    /* each key's rows on each side, by ordinal */
    uint64_t nt = f->dict.nterms;
    uint32_t *cnt = qr_qmalloc(j->ctx, sizeof *cnt * 2 * (nt ? nt : 1));
    if (!cnt)
        return qr_qctx_nomem(j->ctx, e);
    memset(cnt, 0, sizeof *cnt * 2 * nt);
    int r = count_rows(f, ord, ba, cnt, nt, e) == 0 &&
                    (!j->same || count_rows(f, ord, bb, cnt + nt, nt, e) == 0)
                ? 0
                : -1;
    /* the keys with rows, in dictionary order: room for every term and
     * about the dictionary's bytes (a list grown by doubling spent a tenth
     * of the join in realloc) */
    tjlist own = {0}, *l = &own; /* a local: the tasks' lists share cache lines */
    if (r == 0) {
        own.cap = nt ? nt : 1;
        own.bcap = f->dict.dict_len ? f->dict.dict_len : 1;
        own.e = qr_qmalloc(j->ctx, sizeof *own.e * own.cap);
        own.bytes = qr_qmalloc(j->ctx, own.bcap);
        if (!own.e || !own.bytes) {
            r = qr_qctx_nomem(j->ctx, e);
            own.cap = own.bcap = 0;
        }
    }
    qr_titer it;
    if (r == 0)
        r = qr_tdict_seek(&f->dict, &it, NULL, 0, e);
    uint64_t n = 0;
    while (r == 1) {
        if (n >= nt) {
            r = qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s has more terms than it says",
                        ps->ss[si].seg->path, f->def.name);
            break;
        }
        uint32_t ca = cnt[n], cb = j->same ? cnt[nt + n] : 0;
        if (((++n & 0xfff) == 0 && qr_qctx_check(j->ctx, e) != 0) ||
            ((ca | cb) && list_add(j->ctx, l, it.term, it.len, qr_titer_cpl(&it), s0 ? 0 : ca,
                                   s0 ? ca : cb, e) != 0)) {
            r = -1;
            break;
        }
        r = qr_titer_next(&it, e);
    }
    qr_qfree(j->ctx, cnt);
    j->terms[t] += n;
    int rc = r < 0 ? -1 : 0;
    if (rc == 0 && x->rest)
        rc = filter_keys(x, l, s0, a, e);
    if (rc == 0 && j->same && j->side[1]->rest)
        rc = filter_keys(j->side[1], l, 1, &j->side[1]->ps->run[t], e);
    for (uint64_t i = 0; rc == 0 && i < own.n; i++) {
        uint64_t h = key_hash(&own.e[i], j->fshift), b = 1ull << (h & 63);
        uint64_t *sw = &j->seen[t][h >> 6];
        if (*sw & b)
            j->dup[t][h >> 6] |= b;
        *sw |= b;
    }
    j->lists[k] = own; /* freed with the others, whatever rc */
    return rc;
}

static void worker(void *arg, int slot)
{
    tjob *j = arg;
    for (;;) {
        if (atomic_load(&j->failed))
            break;
        uint32_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->ntasks)
            break;
        if (qr_par_check(j->side[0]->ps, &j->err[slot]) != 0 ||
            walk(j, slot, k, &j->err[slot]) != 0) {
            j->rc[slot] = -1;
            atomic_store(&j->failed, 1);
            break;
        }
    }
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

/* The merge of one key range: a binary heap of the lists' heads, smallest
 * on top, each node holding its head's code point length and first 8
 * bytes (most comparisons end there, without a load); each key's counts
 * summed over the lists that hold it. */
typedef struct hnode {
    uint64_t k8;
    uint32_t cpl, list;
    const tjent *x, *end; /* the head, and the end of the list's range */
} hnode;

typedef struct merge {
    const tjlist *l;
    hnode *h;
    uint32_t nh;
} merge;

static inline int node_less(const merge *m, const hnode *p, const hnode *q)
{
    if (p->cpl != q->cpl)
        return p->cpl < q->cpl;
    if (p->k8 != q->k8)
        return p->k8 < q->k8;
    return ent_cmp(&m->l[p->list], p->x, &m->l[q->list], q->x) < 0;
}

static inline void node_at(hnode *n, const tjent *x)
{
    n->x = x;
    n->k8 = x->k8;
    n->cpl = x->cpl;
}

static void sift_down(merge *m, uint32_t i)
{
    hnode v = m->h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= m->nh)
            break;
        if (c + 1 < m->nh && node_less(m, &m->h[c + 1], &m->h[c]))
            c++;
        if (!node_less(m, &m->h[c], &v))
            break;
        m->h[i] = m->h[c];
        i = c;
    }
    m->h[i] = v;
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
        uint64_t at = p == 0 ? 0 : lower_bound(l, &j->lists[mj->sl], &mj->split[p - 1]);
        uint64_t end =
            p + 1 == mj->nparts ? l->n : lower_bound(l, &j->lists[mj->sl], &mj->split[p]);
        if (at < end) {
            hnode *n = &m->h[m->nh++];
            n->list = k;
            n->end = l->e + end;
            node_at(n, l->e + at);
        }
    }
    for (uint32_t i = m->nh / 2; i-- > 0;)
        sift_down(m, i);
    uint64_t steps = 0;
    while (m->nh) {
        /* one key: pop its entries from every list that holds it */
        hnode key = m->h[0];
        uint64_t ca = 0, cb = 0;
        do {
            hnode *top = &m->h[0];
            ca += top->x->ca;
            cb += top->x->cb;
            out->listed++;
            out->merged++;
            if (top->x + 1 == top->end)
                *top = m->h[--m->nh];
            else
                node_at(top, top->x + 1);
            if (m->nh)
                sift_down(m, 0);
        } while (m->nh && !node_less(m, &key, &m->h[0]));
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
    merge m = {j->lists, qr_qmalloc(j->ctx, sizeof *m.h * (j->ntasks + 1)), 0};
    int rc = m.h ? 0 : qr_qctx_nomem(j->ctx, e);
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
    qr_qfree(j->ctx, m.h);
}

/* Adds counts c into out: 0, or -1 (22003) when count(*) is out of range. */
static int add_counts(qr_tjcount *out, const qr_tjcount *c, qr_err *e)
{
    uint64_t q;
    if (__builtin_add_overflow(out->pairs, c->pairs, &q) || q > INT64_MAX)
        return qr_errf(e, QR_E_OUT_OF_RANGE, "count(*) of a join is out of range");
    out->pairs = q;
    out->keys += c->keys;
    out->rows_a += c->rows_a;
    out->rows_b += c->rows_b;
    out->listed += c->listed;
    out->merged += c->merged;
    return 0;
}

/* The keys of one list only, settled in place: counted into the slot's
 * part and left out of the list, which keeps the others (in order) for
 * the merge. dup: the bits of keys that may be in several lists. */
typedef struct sjob {
    tjob *j;
    const uint64_t *dup;
    atomic_uint next;
    qr_tjcount part[QR_MAX_SEARCH_THREADS];
    int rc[QR_MAX_SEARCH_THREADS];
    qr_err err[QR_MAX_SEARCH_THREADS];
} sjob;

static void settle_worker(void *arg, int slot)
{
    sjob *sj = arg;
    tjob *j = sj->j;
    qr_tjcount o = sj->part[slot]; /* (a local: the slots' parts share cache lines) */
    for (uint32_t k = atomic_fetch_add(&sj->next, 1); k < j->ntasks && !sj->rc[slot];
         k = atomic_fetch_add(&sj->next, 1)) {
        tjlist *l = &j->lists[k];
        uint64_t w = 0;
        for (uint64_t i = 0; i < l->n; i++) {
            const tjent *x = &l->e[i];
            uint64_t h = key_hash(x, j->fshift);
            if (sj->dup[h >> 6] >> (h & 63) & 1) {
                l->e[w++] = *x;
                continue;
            }
            o.listed++;
            o.rows_a += x->ca;
            o.rows_b += x->cb;
            if (x->ca && x->cb) {
                o.keys++;
                if (__builtin_add_overflow(o.pairs, (uint64_t)x->ca * x->cb, &o.pairs) ||
                    o.pairs > INT64_MAX)
                    sj->rc[slot] = qr_errf(&sj->err[slot], QR_E_OUT_OF_RANGE,
                                           "count(*) of a join is out of range");
            }
        }
        l->n = w;
    }
    sj->part[slot] = o;
}

/* Settle the keys in one list, leave the others to merge_lists. */
static int settle_lists(tjob *j, qr_pool *pool, int nt, qr_tjcount *out, qr_err *e)
{
    /* dup of slot 0 becomes the union: a key two slots saw is in two lists */
    size_t nw = ((size_t)1 << j->fshift) / 64;
    uint64_t *seen = j->seen[0], *dup = j->dup[0];
    for (int t = 1; t < nt; t++)
        for (size_t w = 0; w < nw; w++) {
            dup[w] |= j->dup[t][w] | (seen[w] & j->seen[t][w]);
            seen[w] |= j->seen[t][w];
        }
    sjob *sj = qr_qmalloc(j->ctx, sizeof *sj);
    if (!sj)
        return qr_qctx_nomem(j->ctx, e);
    memset(sj, 0, sizeof *sj);
    sj->j = j;
    sj->dup = dup;
    atomic_init(&sj->next, 0);
    qr_pool_run(nt > 1 ? pool : NULL, nt, settle_worker, sj);
    int rc = 0;
    for (int t = 0; t < nt && rc == 0; t++) {
        if (sj->rc[t]) {
            *e = sj->err[t];
            rc = -1;
        } else {
            rc = add_counts(out, &sj->part[t], e);
        }
    }
    qr_qfree(j->ctx, sj);
    return rc;
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
        if ((rc = add_counts(out, &mj->part[t], e)) != 0)
            break;
    }
    qr_qfree(j->ctx, split);
    qr_qfree(j->ctx, mj);
    return rc;
}

/* 1 when every segment of x has its index, holding every non-NULL value. */
static int side_indexed(const qr_tjside *x, uint64_t *nterms, qr_err *e)
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
        *nterms += f->dict.nterms;
    }
    return 1;
}

int qr_x_term_join_count(const qr_tjside *a, const qr_tjside *b, int same, qr_tjcount *out,
                         qr_err *e)
{
    memset(out, 0, sizeof *out);
    uint64_t nterms = 0;
    int ok = side_indexed(a, &nterms, e);
    if (ok == 1 && !same)
        ok = side_indexed(b, &nterms, e);
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
    if (j->lists)
        memset(j->lists, 0, sizeof *j->lists * (j->ntasks + 1));
    int nt = ps->threads < 1 ? 1 : ps->threads;
    if (b->ps->threads < nt)
        nt = b->ps->threads < 1 ? 1 : b->ps->threads;
    /* the filters: 8 bits or more per key listed at most (a key that is
     * in one list only is taken for one in several about 1 time in 8) */
    j->fshift = 12;
    while (j->fshift < 40 && ((uint64_t)1 << j->fshift) < 8 * nterms)
        j->fshift++;
    size_t fbytes = ((size_t)1 << j->fshift) / 8;
    for (int t = 0; t < nt && rc == 0; t++) {
        j->seen[t] = qr_qmalloc(j->ctx, fbytes);
        j->dup[t] = qr_qmalloc(j->ctx, fbytes);
        if (!j->seen[t] || !j->dup[t])
            rc = qr_qctx_nomem(j->ctx, e);
        else {
            memset(j->seen[t], 0, fbytes);
            memset(j->dup[t], 0, fbytes);
        }
    }
    if (rc == 0) {
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
        rc = settle_lists(j, ps->pool, nt, out, e);
    if (rc == 0)
        rc = merge_lists(j, ps->pool, nt, out, e);
    for (int t = 0; t < nt; t++) {
        qr_qfree(j->ctx, j->seen[t]);
        qr_qfree(j->ctx, j->dup[t]);
    }
    for (uint32_t k = 0; j->lists && k < j->ntasks; k++) {
        qr_qfree(j->ctx, j->lists[k].e);
        qr_qfree(j->ctx, j->lists[k].bytes);
    }
    qr_qfree(j->ctx, j->lists);
    qr_qfree(j->ctx, j);
    return rc;
}
