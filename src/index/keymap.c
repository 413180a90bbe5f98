/* keymap.c - the shared keys of several keyword fields (keymap.h): built
 * by two walks of each field's dictionary and a merge of the terms a bit
 * filter cannot tell apart; kept in a small refcounted cache. */
#include "index/keymap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

struct qr_keymap {
    atomic_uint refs;
    uint32_t n;       /* members */
    uint64_t *serial; /* the members' serials, ascending */
    uint32_t **sid;   /* by member, in serial order: nterms[i] ids */
    uint64_t *nterms;
    uint32_t nshared;
    uint64_t used; /* the cache's tick when last found or put */
};

struct qr_kmcache {
    pthread_mutex_t mu;
    qr_keymap *m[QR_KMCACHE_MAPS];
    uint64_t tick;
};

static void map_free(qr_keymap *m)
{
    for (uint32_t i = 0; m && m->sid && i < m->n; i++)
        free(m->sid[i]);
    if (m) {
        free(m->sid);
        free(m->serial);
        free(m->nterms);
    }
    free(m);
}

void qr_keymap_release(qr_keymap *m)
{
    if (m && atomic_fetch_sub(&m->refs, 1) == 1)
        map_free(m);
}

static int64_t member(const qr_keymap *m, uint64_t serial)
{
    uint32_t lo = 0, hi = m->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->serial[mid] < serial)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n && m->serial[lo] == serial ? (int64_t)lo : -1;
}

const uint32_t *qr_keymap_sids(const qr_keymap *m, const qr_invfield *f)
{
    int64_t i = member(m, f->serial);
    return i < 0 || m->nterms[i] != f->dict.nterms ? NULL : m->sid[i];
}

uint32_t qr_keymap_shared(const qr_keymap *m) { return m->nshared; }

qr_kmcache *qr_kmcache_new(qr_err *e)
{
    qr_kmcache *c = calloc(1, sizeof *c);
    if (!c || pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        qr_errf(e, QR_E_NOMEM, "key map cache: out of memory");
        return NULL;
    }
    return c;
}

void qr_kmcache_free(qr_kmcache *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < QR_KMCACHE_MAPS; i++)
        qr_keymap_release(c->m[i]);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static int covers(const qr_keymap *m, qr_invfield *const *f, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!qr_keymap_sids(m, f[i]))
            return 0;
    return 1;
}

qr_keymap *qr_kmcache_find(qr_kmcache *c, qr_invfield *const *f, uint32_t n)
{
    qr_keymap *got = NULL;
    pthread_mutex_lock(&c->mu);
    for (uint32_t i = 0; i < QR_KMCACHE_MAPS && !got; i++)
        if (c->m[i] && covers(c->m[i], f, n)) {
            got = c->m[i];
            got->used = ++c->tick;
            atomic_fetch_add(&got->refs, 1);
        }
    pthread_mutex_unlock(&c->mu);
    return got;
}

/* Put m in the cache (it takes a reference): in place of the maps m
 * covers, else of the one used longest ago. */
static void cache_put(qr_kmcache *c, qr_keymap *m)
{
    qr_keymap *drop[QR_KMCACHE_MAPS];
    uint32_t nd = 0, at = QR_KMCACHE_MAPS;
    atomic_fetch_add(&m->refs, 1);
    pthread_mutex_lock(&c->mu);
    m->used = ++c->tick;
    for (uint32_t i = 0; i < QR_KMCACHE_MAPS; i++) {
        qr_keymap *o = c->m[i];
        int sub = o != NULL;
        for (uint32_t k = 0; o && sub && k < o->n; k++)
            sub = member(m, o->serial[k]) >= 0;
        if (sub) {
            drop[nd++] = o;
            c->m[i] = NULL;
        }
        if (!c->m[i] && at == QR_KMCACHE_MAPS)
            at = i;
    }
    if (at == QR_KMCACHE_MAPS) {
        at = 0;
        for (uint32_t i = 1; i < QR_KMCACHE_MAPS; i++)
            if (c->m[i]->used < c->m[at]->used)
                at = i;
        drop[nd++] = c->m[at];
    }
    c->m[at] = m;
    pthread_mutex_unlock(&c->mu);
    for (uint32_t i = 0; i < nd; i++)
        qr_keymap_release(drop[i]);
}

/* ---- building ---- */

/* A term a bit filter could not tell from another field's: its full hash,
 * where it is (member, ordinal), and once read, its bytes (in bytes[member]
 * at off). */
typedef struct cand {
    uint64_t h;
    uint32_t member, ord;
} cand;

#define PREFETCH 16u /* terms ahead: the filters are too big for a cache */

typedef struct build {
    qr_keymap *m;
    qr_invfield **f;     /* by member */
    const uint64_t **hs; /* by member: each term's hash */
    qr_qctx *ctx;
    int step; /* HASH, MARK, CANDS, BYTES */
    uint32_t fshift;
    uint64_t *seen[QR_POOL_MAX_THREADS + 1], *dup[QR_POOL_MAX_THREADS + 1];
    cand *cands[QR_POOL_MAX_THREADS + 1];
    uint64_t ncands[QR_POOL_MAX_THREADS + 1], capcands[QR_POOL_MAX_THREADS + 1];
    /* BYTES: per member, the (ordinal << 32 | candidate) whose bytes a
     * comparison needs, ascending; the bytes, and where each one's are */
    uint64_t **need, *nneed;
    char **bytes;
    uint64_t *nbytes;
    uint32_t *boff;
    uint16_t *blen;
    atomic_uint next;
    atomic_int failed;
    int rc[QR_POOL_MAX_THREADS + 1];
    qr_err err[QR_POOL_MAX_THREADS + 1];
} build;

enum { HASH, MARK, CANDS, BYTES };

static inline uint64_t bit_of(const build *b, uint64_t h) { return h >> (64 - b->fshift); }

static int add_cand(build *b, int t, uint64_t h, uint32_t i, uint32_t o, qr_err *e)
{
    if (b->ncands[t] == b->capcands[t]) {
        uint64_t cap = b->capcands[t] ? b->capcands[t] * 2 : 1024;
        cand *p = qr_qrealloc(b->ctx, b->cands[t], sizeof *p * cap);
        if (!p)
            return qr_qctx_nomem(b->ctx, e);
        b->cands[t] = p;
        b->capcands[t] = cap;
    }
    b->cands[t][b->ncands[t]++] = (cand){h, i, o};
    return 0;
}

/* The bytes of member i's needed terms, by one walk of its dictionary up
 * to the last of them. */
static int read_bytes(build *b, uint32_t i, qr_err *e)
{
    qr_invfield *f = b->f[i];
    const uint64_t *need = b->need[i];
    uint64_t nn = b->nneed[i], k = 0, o = 0, cap = 0;
    if (!nn)
        return 0;
    qr_titer it;
    int r = qr_tdict_seek(&f->dict, &it, NULL, 0, e);
    for (; r == 1 && k < nn; r = qr_titer_next(&it, e), o++) {
        if ((o & 0xfff) == 0 && qr_qctx_check(b->ctx, e) != 0)
            return -1;
        for (; k < nn && need[k] >> 32 == o; k++) {
            if (b->nbytes[i] + it.len > cap || !b->bytes[i]) {
                cap = cap ? cap * 2 : 4096;
                while (cap < b->nbytes[i] + it.len)
                    cap *= 2;
                char *p = qr_qrealloc(b->ctx, b->bytes[i], cap);
                if (!p)
                    return qr_qctx_nomem(b->ctx, e);
                b->bytes[i] = p;
            }
            if (b->nbytes[i] > UINT32_MAX - it.len)
                return qr_errf(e, QR_E_TOO_LONG, "a key map's terms of one segment pass 4 GiB");
            uint32_t c = (uint32_t)need[k];
            memcpy(b->bytes[i] + b->nbytes[i], it.term, it.len);
            b->boff[c] = (uint32_t)b->nbytes[i];
            b->blen[c] = (uint16_t)it.len;
            b->nbytes[i] += it.len;
        }
    }
    if (r < 0)
        return -1;
    if (k < nn) /* the hashes came from this dictionary: it has these terms */
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s has fewer terms than it says",
                       f->seg->path, f->def.name);
    return 0;
}

/* One step for member i on slot t. */
static int step(build *b, int t, uint32_t i, qr_err *e)
{
    qr_invfield *f = b->f[i];
    uint64_t nt = f->dict.nterms;
    const uint64_t *h = b->hs[i];
    switch (b->step) {
    case HASH:
        return (b->hs[i] = qr_invfield_term_hashes(f, b->ctx, e)) ? 0 : -1;
    case MARK: {
        /* each term's bit in this slot's filters: seen, and dup when seen */
        uint64_t *seen = b->seen[t], *dup = b->dup[t];
        for (uint64_t o = 0; o < nt; o++) {
            if (o + PREFETCH < nt)
                __builtin_prefetch(&seen[bit_of(b, h[o + PREFETCH]) >> 6], 1);
            uint64_t x = bit_of(b, h[o]), bit = 1ull << (x & 63);
            if (seen[x >> 6] & bit)
                dup[x >> 6] |= bit;
            seen[x >> 6] |= bit;
            if ((o & 0xfffff) == 0xfffff && qr_qctx_check(b->ctx, e) != 0)
                return -1;
        }
        return 0;
    }
    case CANDS: {
        /* the terms whose bit two fields marked (dup[0]: the union) */
        const uint64_t *dup = b->dup[0];
        for (uint64_t o = 0; o < nt; o++) {
            if (o + PREFETCH < nt)
                __builtin_prefetch(&dup[bit_of(b, h[o + PREFETCH]) >> 6]);
            uint64_t x = bit_of(b, h[o]);
            if ((dup[x >> 6] >> (x & 63) & 1) && add_cand(b, t, h[o], i, (uint32_t)o, e) != 0)
                return -1;
            if ((o & 0xfffff) == 0xfffff && qr_qctx_check(b->ctx, e) != 0)
                return -1;
        }
        return 0;
    }
    default:
        return read_bytes(b, i, e);
    }
}

static void stepper(void *arg, int slot)
{
    build *b = arg;
    for (;;) {
        if (atomic_load(&b->failed))
            break;
        uint32_t i = atomic_fetch_add(&b->next, 1);
        if (i >= b->m->n)
            break;
        if (step(b, slot, i, &b->err[slot]) != 0) {
            b->rc[slot] = -1;
            atomic_store(&b->failed, 1);
            break;
        }
    }
}

static int run_step(build *b, int st, qr_pool *pool, int nt, qr_err *e)
{
    b->step = st;
    atomic_store(&b->next, 0);
    qr_pool_run(nt > 1 ? pool : NULL, nt, stepper, b);
    for (int t = 0; t < nt; t++)
        if (b->rc[t]) {
            *e = b->err[t];
            return -1;
        }
    return 0;
}

/* Sort c[0..n) by hash: least significant digit first, 11 bits a pass. */
static int sort_cands(qr_qctx *ctx, cand *c, uint64_t n, qr_err *e)
{
    cand *tmp = qr_qmalloc(ctx, sizeof *tmp * (n + 1));
    uint64_t *cnt = qr_qmalloc(ctx, sizeof *cnt * 2048);
    if (!tmp || !cnt) {
        qr_qfree(ctx, tmp);
        qr_qfree(ctx, cnt);
        return qr_qctx_nomem(ctx, e);
    }
    cand *from = c, *to = tmp;
    for (int sh = 0; sh < 64; sh += 11) {
        memset(cnt, 0, sizeof *cnt * 2048);
        for (uint64_t i = 0; i < n; i++)
            cnt[from[i].h >> sh & 2047]++;
        for (uint64_t d = 0, sum = 0; d < 2048; d++) {
            uint64_t k = cnt[d];
            cnt[d] = sum;
            sum += k;
        }
        for (uint64_t i = 0; i < n; i++)
            to[cnt[from[i].h >> sh & 2047]++] = from[i];
        cand *x = from;
        from = to;
        to = x;
    }
    if (from != c) /* 6 passes: back in c; kept for other digit widths */
        memcpy(c, from, sizeof *c * n);
    qr_qfree(ctx, tmp);
    qr_qfree(ctx, cnt);
    return 0;
}

static int u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static int same_bytes(const build *b, const cand *c, uint64_t x, uint64_t y)
{
    return b->blen[x] == b->blen[y] && memcmp(b->bytes[c[x].member] + b->boff[x],
                                              b->bytes[c[y].member] + b->boff[y], b->blen[x]) == 0;
}

/* The candidates (sorted by hash) that share a hash with another are read
 * and compared: a term in two or more fields gets a shared id in each. */
static int resolve(build *b, cand *c, uint64_t n, qr_pool *pool, int nt, qr_err *e)
{
    qr_keymap *m = b->m;
    if (n > UINT32_MAX)
        return qr_errf(e, QR_E_TOO_LONG, "a key map has more than 2^32 candidate keys");
    b->need = qr_qmalloc(b->ctx, sizeof *b->need * (m->n + 1));
    b->nneed = qr_qmalloc(b->ctx, sizeof *b->nneed * (m->n + 1));
    b->bytes = qr_qmalloc(b->ctx, sizeof *b->bytes * (m->n + 1));
    b->nbytes = qr_qmalloc(b->ctx, sizeof *b->nbytes * (m->n + 1));
    b->boff = qr_qmalloc(b->ctx, sizeof *b->boff * (n + 1));
    b->blen = qr_qmalloc(b->ctx, sizeof *b->blen * (n + 1));
    if (!b->need || !b->nneed || !b->bytes || !b->nbytes || !b->boff || !b->blen)
        return qr_qctx_nomem(b->ctx, e);
    memset(b->need, 0, sizeof *b->need * (m->n + 1));
    memset(b->nneed, 0, sizeof *b->nneed * (m->n + 1));
    memset(b->bytes, 0, sizeof *b->bytes * (m->n + 1));
    memset(b->nbytes, 0, sizeof *b->nbytes * (m->n + 1));
    /* which terms of each member: those of a hash held twice or more */
    for (int pass = 0; pass < 2; pass++) {
        for (uint64_t i = 0, j; i < n; i = j) {
            for (j = i + 1; j < n && c[j].h == c[i].h; j++)
                ;
            for (uint64_t k = i; j - i > 1 && k < j; k++) {
                uint32_t mb = c[k].member;
                if (pass == 0)
                    b->nneed[mb]++;
                else
                    b->need[mb][b->nneed[mb]++] = (uint64_t)c[k].ord << 32 | k;
            }
        }
        for (uint32_t mb = 0; pass == 0 && mb < m->n; mb++) {
            if (b->nneed[mb] &&
                !(b->need[mb] = qr_qmalloc(b->ctx, sizeof(uint64_t) * b->nneed[mb])))
                return qr_qctx_nomem(b->ctx, e);
            b->nneed[mb] = 0;
        }
    }
    for (uint32_t mb = 0; mb < m->n; mb++)
        if (b->nneed[mb] > 1)
            qsort(b->need[mb], b->nneed[mb], sizeof *b->need[mb], u64_cmp);
    if (run_step(b, BYTES, pool, nt, e) != 0)
        return -1;
    /* each hash's candidates: one shared id per distinct bytes held twice
     * (hashes that collide are compared pairwise: never in practice) */
    for (uint64_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && c[j].h == c[i].h; j++)
            ;
        if (j - i < 2)
            continue;
        int all = 1;
        for (uint64_t k = i + 1; all && k < j; k++)
            all = same_bytes(b, c, i, k);
        for (uint64_t k = i; k < j; k++) {
            if (m->sid[c[k].member][c[k].ord] != QR_KM_ONE)
                continue; /* in a class already */
            uint64_t eq = 0;
            for (uint64_t q = k + 1; q < j; q++)
                eq += all || same_bytes(b, c, k, q);
            if (!eq)
                continue;
            if (m->nshared == QR_KM_ONE)
                return qr_errf(e, QR_E_TOO_LONG, "a key map holds more than %u shared keys",
                               QR_KM_ONE - 1);
            for (uint64_t q = k; q < j; q++)
                if (q == k || all || same_bytes(b, c, k, q))
                    m->sid[c[q].member][c[q].ord] = m->nshared;
            m->nshared++;
            if (all)
                break;
        }
    }
    return 0;
}

static int serial_cmp(const void *x, const void *y)
{
    uint64_t a = (*(qr_invfield *const *)x)->serial, c = (*(qr_invfield *const *)y)->serial;
    return a < c ? -1 : a > c;
}

static void build_free(build *b, qr_qctx *ctx, uint32_t nm)
{
    for (int t = 0; t < QR_POOL_MAX_THREADS + 1; t++) {
        qr_qfree(ctx, b->seen[t]);
        qr_qfree(ctx, b->dup[t]);
        qr_qfree(ctx, b->cands[t]);
    }
    for (uint32_t i = 0; i < nm; i++) {
        if (b->need)
            qr_qfree(ctx, b->need[i]);
        if (b->bytes)
            qr_qfree(ctx, b->bytes[i]);
    }
    qr_qfree(ctx, b->need);
    qr_qfree(ctx, b->nneed);
    qr_qfree(ctx, b->bytes);
    qr_qfree(ctx, b->nbytes);
    qr_qfree(ctx, b->boff);
    qr_qfree(ctx, b->blen);
    qr_qfree(ctx, (void *)b->hs);
    qr_qfree(ctx, b);
}

qr_keymap *qr_keymap_build(qr_kmcache *c, qr_invfield *const *f, uint32_t n, qr_pool *pool,
                           int threads, qr_qctx *ctx, qr_err *e)
{
    qr_keymap *m = calloc(1, sizeof *m);
    build *b = qr_qmalloc(ctx, sizeof *b);
    qr_invfield **fs = qr_qmalloc(ctx, sizeof *fs * (n + 1));
    int rc = m && b && fs ? 0 : qr_qctx_nomem(ctx, e);
    if (b)
        memset(b, 0, sizeof *b);
    /* the members: each field once, by serial */
    uint32_t nm = 0;
    if (rc == 0) {
        atomic_init(&m->refs, 1);
        if (n)
            memcpy(fs, f, sizeof *fs * n);
        if (n > 1)
            qsort(fs, n, sizeof *fs, serial_cmp);
        for (uint32_t i = 0; i < n; i++)
            if (!nm || fs[nm - 1]->serial != fs[i]->serial)
                fs[nm++] = fs[i];
        m->serial = calloc(nm + 1, sizeof *m->serial);
        m->nterms = calloc(nm + 1, sizeof *m->nterms);
        m->sid = calloc(nm + 1, sizeof *m->sid);
        b->hs = qr_qmalloc(ctx, sizeof *b->hs * (nm + 1));
        rc = m->serial && m->nterms && m->sid ? 0 : qr_qctx_nomem(NULL, e);
        if (rc == 0 && !b->hs)
            rc = qr_qctx_nomem(ctx, e);
    }
    uint64_t total = 0;
    for (uint32_t i = 0; rc == 0 && i < nm; i++) {
        m->n = i + 1;
        m->serial[i] = fs[i]->serial;
        uint64_t nt = fs[i]->dict.nterms;
        m->nterms[i] = nt;
        if (nt >= QR_KM_ONE) {
            rc = qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s says it has %llu terms",
                         fs[i]->seg->path, fs[i]->def.name, (unsigned long long)nt);
            break;
        }
        m->sid[i] = malloc(sizeof *m->sid[i] * (nt ? nt : 1));
        if (!m->sid[i])
            rc = qr_qctx_nomem(NULL, e);
        else
            memset(m->sid[i], 0xff, sizeof *m->sid[i] * nt);
        total += nt;
    }
    int nt = threads < 1 ? 1 : threads > QR_POOL_MAX_THREADS ? QR_POOL_MAX_THREADS : threads;
    if ((uint32_t)nt > nm)
        nt = nm ? (int)nm : 1;
    cand *all = NULL;
    uint64_t ncand = 0, at = 0;
    if (rc == 0) {
        b->m = m;
        b->f = fs;
        b->ctx = ctx;
        atomic_init(&b->next, 0);
        atomic_init(&b->failed, 0);
        /* 16 bits or more a term: about 1 term in 16 of one field only is
         * taken for a shared one, and told apart by its whole hash */
        b->fshift = 12;
        while (b->fshift < 40 && ((uint64_t)1 << b->fshift) < 16 * total)
            b->fshift++;
        size_t fbytes = ((size_t)1 << b->fshift) / 8;
        for (int t = 0; t < nt && rc == 0; t++) {
            b->seen[t] = qr_qmalloc(ctx, fbytes);
            b->dup[t] = qr_qmalloc(ctx, fbytes);
            if (!b->seen[t] || !b->dup[t])
                rc = qr_qctx_nomem(ctx, e);
            else {
                memset(b->seen[t], 0, fbytes);
                memset(b->dup[t], 0, fbytes);
            }
        }
        if (rc == 0)
            rc = run_step(b, HASH, pool, nt, e);
        if (rc == 0)
            rc = run_step(b, MARK, pool, nt, e);
        /* dup[0] becomes every bit two fields marked: a slot's own dup, or
         * seen by two slots */
        size_t nw = fbytes / 8;
        for (int t = 1; rc == 0 && t < nt; t++) {
            uint64_t *s0 = b->seen[0], *d0 = b->dup[0], *s = b->seen[t], *d = b->dup[t];
            for (size_t w = 0; w < nw; w++) {
                d0[w] |= d[w] | (s0[w] & s[w]);
                s0[w] |= s[w];
            }
        }
        if (rc == 0)
            rc = run_step(b, CANDS, pool, nt, e);
        for (int t = 0; rc == 0 && t < nt; t++)
            ncand += b->ncands[t];
        if (rc == 0 && !(all = qr_qmalloc(ctx, sizeof *all * (ncand + 1))))
            rc = qr_qctx_nomem(ctx, e);
        for (int t = 0; rc == 0 && t < nt; t++) {
            if (b->ncands[t])
                memcpy(all + at, b->cands[t], sizeof *all * b->ncands[t]);
            at += b->ncands[t];
        }
        if (rc == 0)
            rc = sort_cands(ctx, all, ncand, e);
        if (rc == 0)
            rc = resolve(b, all, ncand, pool, nt, e);
    }
    qr_qfree(ctx, all);
    if (b)
        build_free(b, ctx, nm);
    qr_qfree(ctx, fs);
    if (rc != 0) {
        map_free(m);
        return NULL;
    }
    if (c)
        cache_put(c, m);
    return m;
}
