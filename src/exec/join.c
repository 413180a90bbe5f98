/* join.c - hash join (join.h): chains over R's rows by key hash; for
 * RIGHT and FULL, a byte per R row marked by the probes, then the rows left
 * unmarked. */
#include "exec/join.h"

#include <string.h>

#include "util/hash.h"

static int bytes_type(int t)
{
    return t == QR_XT_TEXT || t == QR_XT_JSON || t == QR_XT_NULL;
}

static uint64_t key_hash(const qr_cell *const *k, uint64_t i, const uint8_t *kt, uint32_t nk,
                         int *null)
{
    uint64_t h = 0x9e37;
    *null = 0;
    for (uint32_t x = 0; x < nk; x++) {
        const qr_cell *c = &k[x][i];
        if (c->null) {
            *null = 1;
            return 0;
        }
        uint64_t v;
        if (bytes_type(kt[x])) {
            v = qr_hash64(c->s, c->n);
        } else if (kt[x] == QR_XT_FLOAT) {
            double d = c->f == 0 ? 0.0 : c->f;
            memcpy(&v, &d, sizeof v);
        } else {
            v = (uint64_t)c->i;
        }
        h = (h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2))) * 0xff51afd7ed558ccdull;
    }
    return h;
}

static int keys_eq(const qr_cell *const *a, uint64_t i, const qr_cell *const *b, uint64_t j,
                   const uint8_t *kt, uint32_t nk)
{
    for (uint32_t x = 0; x < nk; x++) {
        const qr_cell *p = &a[x][i], *q = &b[x][j];
        if (bytes_type(kt[x])) {
            if (p->n != q->n || (p->n && memcmp(p->s, q->s, p->n)))
                return 0;
        } else if (kt[x] == QR_XT_FLOAT ? p->f != q->f : p->i != q->i) {
            return 0;
        }
    }
    return 1;
}

static int add_pair(qr_qctx *ctx, uint64_t **li, uint64_t **ri, uint64_t *np, uint64_t *cap,
                    uint64_t l, uint64_t r)
{
    if (*np == *cap) {
        uint64_t c = *cap ? *cap * 2 : 4096;
        uint64_t *a = qr_qrealloc(ctx, *li, sizeof *a * c);
        if (!a)
            return -1;
        *li = a;
        uint64_t *b = qr_qrealloc(ctx, *ri, sizeof *b * c);
        if (!b)
            return -1;
        *ri = b;
        *cap = c;
    }
    (*li)[*np] = l;
    (*ri)[*np] = r;
    (*np)++;
    return 0;
}

/* The probe of L's rows [i0, i1) against the built table: the pairs into
 * one slot's arrays; R's matched rows marked in `matched` (RIGHT, FULL;
 * else NULL), shared by the slots. */
typedef struct probe {
    const qr_cell *const *lk, *const *rk;
    const uint8_t *kt;
    uint32_t nk;
    int kind;
    uint8_t *matched;
    qr_qctx *ctx;
    const uint64_t *head, *next, *hash;
    uint64_t nb, nl;
    int k;
    uint64_t *li[QR_POOL_MAX_THREADS + 1], *ri[QR_POOL_MAX_THREADS + 1];
    uint64_t np[QR_POOL_MAX_THREADS + 1];
    int rc[QR_POOL_MAX_THREADS + 1];
    qr_err err[QR_POOL_MAX_THREADS + 1];
} probe;

static void probe_slot(void *ctx, int slot)
{
    probe *p = ctx;
    uint64_t i0 = p->nl * (uint64_t)slot / (uint64_t)p->k;
    uint64_t i1 = p->nl * (uint64_t)(slot + 1) / (uint64_t)p->k;
    uint64_t **li = &p->li[slot], **ri = &p->ri[slot], *np = &p->np[slot], cap = 0;
    qr_err *e = &p->err[slot];
    int keep_l = p->kind == QR_JOIN_LEFT || p->kind == QR_JOIN_FULL;
    /* and every 64K steps (probes and chain entries: one L row may have
     * millions of matches) */
    int rc = qr_qctx_check(p->ctx, e);
    uint32_t steps = 0;
    for (uint64_t i = i0; i < i1 && rc == 0; i++) {
        if ((++steps & 0xffff) == 0 && qr_qctx_check(p->ctx, e) != 0) {
            rc = -1;
            break;
        }
        int null, matched = 0;
        uint64_t h = key_hash(p->lk, i, p->kt, p->nk, &null);
        for (uint64_t j = null ? UINT64_MAX : p->head[h & (p->nb - 1)]; j != UINT64_MAX && rc == 0;
             j = p->next[j]) {
            if ((++steps & 0xffff) == 0 && qr_qctx_check(p->ctx, e) != 0) {
                rc = -1;
                break;
            }
            if (p->hash[j] != h || !keys_eq(p->lk, i, p->rk, j, p->kt, p->nk))
                continue;
            matched = 1;
            /* another slot may mark j too: a relaxed store of the same 1,
             * skipped once set (no cache line written per repeat) */
            if (p->matched && !__atomic_load_n(&p->matched[j], __ATOMIC_RELAXED))
                __atomic_store_n(&p->matched[j], 1, __ATOMIC_RELAXED);
            if (add_pair(p->ctx, li, ri, np, &cap, i, j) != 0)
                rc = qr_qctx_nomem(p->ctx, e);
            if (p->kind == QR_JOIN_SEMI) /* once */
                break;
        }
        if (rc == 0 && keep_l && !matched && add_pair(p->ctx, li, ri, np, &cap, i, UINT64_MAX) != 0)
            rc = qr_qctx_nomem(p->ctx, e);
    }
    p->rc[slot] = rc;
}

/* Probes per slot below which one slot does it all. */
#define PROBE_MIN 16384

/* RIGHT, FULL: after the probes (the pool's join orders their marks before
 * these reads), a pair (UINT64_MAX, j) for each R row j left unmarked, in
 * R's order, appended to the pairs. */
static int add_unmatched(const uint8_t *matched, uint64_t nr, qr_qctx *ctx, uint64_t **li,
                         uint64_t **ri, uint64_t *np, qr_err *e)
{
    uint64_t nu = 0;
    for (uint64_t j = 0; j < nr; j++) {
        if ((j & 0xffff) == 0xffff && qr_qctx_check(ctx, e) != 0)
            return -1;
        nu += !matched[j];
    }
    if (!nu)
        return 0;
    uint64_t *a = qr_qrealloc(ctx, *li, sizeof *a * (*np + nu));
    if (!a)
        return qr_qctx_nomem(ctx, e);
    *li = a;
    uint64_t *b = qr_qrealloc(ctx, *ri, sizeof *b * (*np + nu));
    if (!b)
        return qr_qctx_nomem(ctx, e);
    *ri = b;
    for (uint64_t j = 0; j < nr; j++)
        if (!matched[j]) {
            a[*np] = UINT64_MAX;
            b[(*np)++] = j;
        }
    return 0;
}

int qr_x_hash_join_pairs(uint64_t nl, const qr_cell *const *lk, uint64_t nr,
                         const qr_cell *const *rk, const uint8_t *ktypes, uint32_t nk, int kind,
                         qr_pool *pool, int threads, qr_qctx *ctx, uint64_t **li, uint64_t **ri,
                         uint64_t *np, qr_err *e)
{
    *li = *ri = NULL;
    *np = 0;
    uint64_t nb = 16;
    while (nb < nr * 2)
        nb <<= 1;
    uint64_t *head = qr_qmalloc(ctx, sizeof *head * nb);
    uint64_t *next = qr_qmalloc(ctx, sizeof *next * (nr ? nr : 1));
    uint64_t *hash = qr_qmalloc(ctx, sizeof *hash * (nr ? nr : 1));
    probe *p = qr_qmalloc(ctx, sizeof *p);
    int mark = kind == QR_JOIN_RIGHT || kind == QR_JOIN_FULL;
    uint8_t *matched = mark ? qr_qmalloc(ctx, nr ? nr : 1) : NULL;
    int rc = head && next && hash && p && (matched || !mark) ? 0 : qr_qctx_nomem(ctx, e);
    if (rc == 0) {
        if (matched)
            memset(matched, 0, nr ? nr : 1);
        for (uint64_t b = 0; b < nb; b++)
            head[b] = UINT64_MAX;
        for (uint64_t j = nr; j-- > 0;) { /* chains ascend by row */
            int null;
            uint64_t h = key_hash(rk, j, ktypes, nk, &null);
            hash[j] = h;
            next[j] = UINT64_MAX;
            if (null)
                continue;
            next[j] = head[h & (nb - 1)];
            head[h & (nb - 1)] = j;
        }
        memset(p, 0, sizeof *p);
        *p = (probe){.lk = lk,
                     .rk = rk,
                     .kt = ktypes,
                     .nk = nk,
                     .kind = kind,
                     .matched = matched,
                     .ctx = ctx,
                     .head = head,
                     .next = next,
                     .hash = hash,
                     .nb = nb,
                     .nl = nl};
        int k = threads < 1 ? 1 : threads;
        if (k > QR_POOL_MAX_THREADS + 1)
            k = QR_POOL_MAX_THREADS + 1;
        if ((uint64_t)k > nl / PROBE_MIN)
            k = nl / PROBE_MIN > 1 ? (int)(nl / PROBE_MIN) : 1;
        p->k = k;
        qr_pool_run(k > 1 ? pool : NULL, k, probe_slot, p);
        uint64_t total = 0;
        for (int s = 0; s < k; s++) {
            if (p->rc[s] != 0 && rc == 0) {
                *e = p->err[s];
                rc = -1;
            }
            total += p->np[s];
        }
        if (rc == 0 && k == 1) { /* the one slot's arrays are the answer */
            *li = p->li[0], *ri = p->ri[0], *np = p->np[0];
            p->li[0] = p->ri[0] = NULL;
        } else if (rc == 0 && total) { /* the slots' pairs in L's order */
            *li = qr_qmalloc(ctx, sizeof **li * total);
            *ri = qr_qmalloc(ctx, sizeof **ri * total);
            if (!*li || !*ri) {
                rc = qr_qctx_nomem(ctx, e);
            } else {
                for (int s = 0; s < k; s++) {
                    if (p->np[s]) {
                        memcpy(*li + *np, p->li[s], sizeof **li * p->np[s]);
                        memcpy(*ri + *np, p->ri[s], sizeof **ri * p->np[s]);
                    }
                    *np += p->np[s];
                }
            }
        }
        for (int s = 0; s < k; s++) {
            qr_qfree(ctx, p->li[s]);
            qr_qfree(ctx, p->ri[s]);
        }
        if (rc == 0 && matched)
            rc = add_unmatched(matched, nr, ctx, li, ri, np, e);
    }
    qr_qfree(ctx, matched);
    qr_qfree(ctx, p);
    qr_qfree(ctx, head);
    qr_qfree(ctx, next);
    qr_qfree(ctx, hash);
    if (rc != 0) {
        qr_qfree(ctx, *li);
        qr_qfree(ctx, *ri);
        *li = *ri = NULL;
        *np = 0;
    }
    return rc;
}
