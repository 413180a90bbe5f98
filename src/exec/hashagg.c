/* hashagg.c - hash aggregation over cell batches (hashagg.h): one open-
 * addressing table of groups keyed by their key values, and a compact set
 * of the (aggregate, group, value) triples count(DISTINCT) has seen. */
#include "exec/hashagg.h"

#include <string.h>

#include "format/schema.h"
#include "util/arena.h"
#include "util/hash.h"

typedef struct hst {
    int64_t cnt;
    __int128 sum;
    int64_t min, max;
} hst;

/* A table of fixed-width entries: hash, then `width` cells. */
typedef struct htab {
    qr_qctx *ctx;
    uint32_t width;
    uint64_t n, cap, mask;
    uint64_t *hash;
    qr_cell *vals;   /* n x width */
    uint32_t *slots; /* entry + 1; 0 empty */
} htab;

/* count(DISTINCT)'s triples: 24 bytes an entry in one open-addressing
 * array (at most half full). A triple as three result cells with the
 * generic table's hash and slot arrays took ~140 bytes, ~300 at the peak
 * of a growth; a GROUP BY of 50k groups over 7.5M rows passed the 2 GiB
 * memory limit. */
typedef struct dent {
    uint64_t h;  /* the triple's hash, never 0 (0: an empty slot) */
    uint64_t ga; /* group << 8 | aggregate */
    uint64_t v;  /* the value: an integer's (or a double's) bits, or for
                  * text where its u32 length and bytes lie in the arena */
} dent;

_Static_assert(QR_GB_MAX_AGGS <= 256, "an aggregate's number fits dent.ga's low byte");

typedef struct dset {
    dent *e;
    uint64_t n, mask; /* mask + 1 slots, or none */
} dset;

struct qr_hagg {
    const qr_hagg_spec *sp;
    qr_qctx *ctx;
    qr_arena bytes; /* copied key and distinct text */
    htab groups;    /* width = nkeys */
    hst *st;        /* groups.cap x naggs */
    uint64_t *count;
    dset seen;      /* count(DISTINCT) */
};

static void htab_init(htab *t, qr_qctx *ctx, uint32_t width)
{
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    t->width = width;
}

static void htab_free(htab *t)
{
    qr_qfree(t->ctx, t->hash);
    qr_qfree(t->ctx, t->vals);
    qr_qfree(t->ctx, t->slots);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

/* Cells compare by kind: bytes when `bytes` flags say so, else i (doubles
 * are keyed by their bits in i by the caller). */
static uint64_t cells_hash(const qr_cell *c, uint32_t n, const uint8_t *bytes)
{
    uint64_t h = 0x51ed;
    for (uint32_t i = 0; i < n; i++)
        h = mix(h, c[i].null ? 0xdeadbeefull
                   : bytes[i] ? qr_hash64(c[i].s, c[i].n)
                              : (uint64_t)c[i].i);
    return h;
}

static int cells_eq(const qr_cell *a, const qr_cell *b, uint32_t n, const uint8_t *bytes)
{
    for (uint32_t i = 0; i < n; i++) {
        if (a[i].null != b[i].null)
            return 0;
        if (a[i].null)
            continue;
        if (bytes[i] ? a[i].n != b[i].n || (a[i].n && memcmp(a[i].s, b[i].s, a[i].n))
                     : a[i].i != b[i].i)
            return 0;
    }
    return 1;
}

static int htab_grow(htab *t)
{
    uint64_t cap = t->cap ? t->cap * 2 : 64;
    uint32_t w = t->width ? t->width : 1;
    uint64_t *h = qr_qrealloc(t->ctx, t->hash, sizeof *h * cap);
    if (!h)
        return -1;
    t->hash = h;
    qr_cell *v = qr_qrealloc(t->ctx, t->vals, sizeof *v * cap * w);
    if (!v)
        return -1;
    t->vals = v;
    uint32_t *sl = qr_qmalloc(t->ctx, sizeof *sl * cap * 2);
    if (!sl)
        return -1;
    memset(sl, 0, sizeof *sl * cap * 2);
    t->mask = cap * 2 - 1;
    for (uint64_t i = 0; i < t->n; i++) {
        uint64_t j = t->hash[i] & t->mask;
        while (sl[j])
            j = (j + 1) & t->mask;
        sl[j] = (uint32_t)(i + 1);
    }
    qr_qfree(t->ctx, t->slots);
    t->slots = sl;
    t->cap = cap;
    return 0;
}

/* The entry of key k: found (*isnew 0) or added (*isnew 1, bytes copied
 * into a). -1 when out of memory. */
static int64_t htab_find(htab *t, const qr_cell *k, const uint8_t *bytes, qr_arena *a, int *isnew)
{
    uint64_t h = cells_hash(k, t->width, bytes);
    *isnew = 0;
    if (t->cap)
        for (uint64_t j = h & t->mask; t->slots[j]; j = (j + 1) & t->mask) {
            uint64_t i = t->slots[j] - 1;
            if (t->hash[i] == h && cells_eq(t->vals + i * t->width, k, t->width, bytes))
                return (int64_t)i;
        }
    if (t->n == t->cap && htab_grow(t) != 0)
        return -1;
    uint64_t i = t->n++;
    t->hash[i] = h;
    for (uint32_t x = 0; x < t->width; x++) {
        qr_cell c = k[x];
        if (bytes[x] && !c.null) {
            char *d = qr_arena_memdup(a, c.n ? c.s : "", c.n ? c.n : 1);
            if (!d)
                return -1;
            c.s = d;
        }
        t->vals[i * t->width + x] = c;
    }
    uint64_t j = h & t->mask;
    while (t->slots[j])
        j = (j + 1) & t->mask;
    t->slots[j] = (uint32_t)(i + 1);
    *isnew = 1;
    return (int64_t)i;
}

static int is_bytes(int xt)
{
    return xt == QR_XT_TEXT || xt == QR_XT_JSON || xt == QR_XT_NULL;
}

static int dset_grow(dset *d, qr_qctx *ctx)
{
    uint64_t cap = d->e ? (d->mask + 1) * 2 : 1024;
    dent *e = qr_qmalloc(ctx, sizeof *e * cap);
    if (!e)
        return -1;
    memset(e, 0, sizeof *e * cap);
    for (uint64_t i = 0; d->e && i <= d->mask; i++) {
        if (!d->e[i].h)
            continue;
        uint64_t j = d->e[i].h & (cap - 1);
        while (e[j].h)
            j = (j + 1) & (cap - 1);
        e[j] = d->e[i];
    }
    qr_qfree(ctx, d->e);
    d->e = e;
    d->mask = cap - 1;
    return 0;
}

/* Adds (aggregate a, group g, value c) to the set: 1 when it was new, 0
 * when seen before, -1 out of memory. c is not NULL; text (bytes) is
 * copied into arena ar when new. */
static int dset_add(dset *d, qr_qctx *ctx, qr_arena *ar, uint32_t a, uint64_t g,
                    const qr_cell *c, int bytes)
{
    if ((d->n + 1) * 2 > (d->e ? d->mask + 1 : 0) && dset_grow(d, ctx) != 0)
        return -1;
    uint64_t ga = g << 8 | a;
    uint64_t h = mix(mix(0x51ed, ga), bytes ? qr_hash64(c->s, c->n) : (uint64_t)c->i);
    h = h ? h : 1;
    uint64_t j = h & d->mask;
    for (; d->e[j].h; j = (j + 1) & d->mask) {
        const dent *x = &d->e[j];
        if (x->h != h || x->ga != ga)
            continue;
        if (!bytes) {
            if (x->v == (uint64_t)c->i)
                return 0;
            continue;
        }
        const unsigned char *p = (const unsigned char *)(uintptr_t)x->v;
        uint32_t n;
        memcpy(&n, p, 4);
        if (n == c->n && (n == 0 || memcmp(p + 4, c->s, n) == 0))
            return 0;
    }
    uint64_t v = (uint64_t)c->i;
    if (bytes) {
        unsigned char *p = qr_arena_alloc(ar, 4 + (size_t)c->n);
        if (!p)
            return -1;
        memcpy(p, &c->n, 4);
        if (c->n)
            memcpy(p + 4, c->s, c->n);
        v = (uint64_t)(uintptr_t)p;
    }
    d->e[j] = (dent){h, ga, v};
    d->n++;
    return 1;
}

/* A value as a key cell: doubles by their bits (0.0 and -0.0 one). */
static qr_cell key_cell(const qr_cell *c, int xt)
{
    qr_cell k = *c;
    if (!k.null && xt == QR_XT_FLOAT) {
        double d = k.f == 0 ? 0.0 : k.f;
        memcpy(&k.i, &d, sizeof d);
    }
    return k;
}

qr_hagg *qr_hagg_new(const qr_hagg_spec *sp, qr_qctx *ctx, qr_err *e)
{
    qr_hagg *h = qr_qmalloc(ctx, sizeof *h);
    if (!h) {
        qr_qctx_nomem(ctx, e);
        return NULL;
    }
    memset(h, 0, sizeof *h);
    h->sp = sp;
    h->ctx = ctx;
    qr_arena_init(&h->bytes, 64 << 10, 0);
    qr_arena_set_ctx(&h->bytes, ctx);
    htab_init(&h->groups, ctx, sp->nkeys);
    return h;
}

void qr_hagg_free(qr_hagg *h)
{
    if (!h)
        return;
    htab_free(&h->groups);
    qr_qfree(h->ctx, h->seen.e);
    qr_qfree(h->ctx, h->st);
    qr_qfree(h->ctx, h->count);
    qr_arena_free(&h->bytes);
    qr_qfree(h->ctx, h);
}

/* The group of key k, its states grown with the table. */
static int64_t group_of(qr_hagg *h, const qr_cell *k, const uint8_t *bytes)
{
    uint64_t cap0 = h->groups.cap;
    int isnew;
    int64_t g = htab_find(&h->groups, k, bytes, &h->bytes, &isnew);
    if (g < 0)
        return -1;
    uint32_t na = h->sp->naggs ? h->sp->naggs : 1;
    if (h->groups.cap != cap0 || !h->count) {
        hst *st = qr_qrealloc(h->ctx, h->st, sizeof *st * h->groups.cap * na);
        if (!st)
            return -1;
        h->st = st;
        uint64_t *c = qr_qrealloc(h->ctx, h->count, sizeof *c * h->groups.cap);
        if (!c)
            return -1;
        h->count = c;
    }
    if (isnew) {
        h->count[g] = 0;
        for (uint32_t a = 0; a < na; a++)
            h->st[(uint64_t)g * na + a] = (hst){0, 0, INT64_MAX, INT64_MIN};
    }
    return g;
}

int qr_hagg_add(qr_hagg *h, const qr_xbatch *b, const uint32_t *sel, uint32_t n, qr_arena *scratch,
                qr_err *e)
{
    const qr_hagg_spec *sp = h->sp;
    const qr_cell *kv[QR_GB_MAX_KEYS], *av[QR_GB_MAX_AGGS];
    uint8_t kb[QR_GB_MAX_KEYS];
    for (uint32_t k = 0; k < sp->nkeys; k++) {
        if (!(kv[k] = qr_expr_eval(sp->keys[k], b, scratch, e)))
            return -1;
        kb[k] = (uint8_t)is_bytes(sp->keys[k]->type);
    }
    for (uint32_t a = 0; a < sp->naggs; a++)
        if (sp->arg[a] && !(av[a] = qr_expr_eval(sp->arg[a], b, scratch, e)))
            return -1;
    uint32_t total = sel ? n : b->n;
    for (uint32_t q = 0; q < total; q++) {
        uint32_t j = sel ? sel[q] : q;
        qr_cell key[QR_GB_MAX_KEYS];
        for (uint32_t k = 0; k < sp->nkeys; k++)
            key[k] = key_cell(&kv[k][j], sp->keys[k]->type);
        int64_t g = group_of(h, key, kb);
        if (g < 0)
            return qr_qctx_nomem(h->ctx, e);
        h->count[g]++;
        for (uint32_t a = 0; a < sp->naggs; a++) {
            if (!sp->arg[a] || av[a][j].null)
                continue;
            int xt = sp->arg[a]->type;
            hst *st = &h->st[(uint64_t)g * sp->naggs + a];
            if (sp->distinct[a]) {
                qr_cell v = key_cell(&av[a][j], xt);
                int isnew = dset_add(&h->seen, h->ctx, &h->bytes, a, (uint64_t)g, &v, is_bytes(xt));
                if (isnew < 0)
                    return qr_qctx_nomem(h->ctx, e);
                st->cnt += isnew;
                continue;
            }
            st->cnt++;
            if (sp->fn[a] == QR_AGG_COUNT)
                continue;
            int64_t v = xt == QR_XT_FLOAT ? qr_num_from_f64(av[a][j].f) : av[a][j].i;
            if (v < st->min)
                st->min = v;
            if (v > st->max)
                st->max = v;
            st->sum += v;
        }
    }
    return 0;
}

int qr_hagg_finish(qr_hagg *h, qr_result *out, qr_err *e)
{
    const qr_hagg_spec *sp = h->sp;
    if (sp->nkeys == 0 && h->groups.n == 0 && group_of(h, NULL, NULL) < 0)
        return qr_qctx_nomem(h->ctx, e);
    for (uint64_t g = 0; g < h->groups.n; g++) {
        if ((g & 0xfff) == 0xfff && qr_qctx_check(h->ctx, e) != 0)
            return -1;
        qr_cell *row = qr_result_add_row(out, e);
        if (!row)
            return -1;
        for (uint32_t k = 0; k < sp->nkeys; k++) {
            qr_cell c = h->groups.vals[g * sp->nkeys + k];
            if (c.null)
                continue;
            if (is_bytes(sp->keys[k]->type)) {
                if (qr_result_set_text(out, &row[k], c.s, c.n, e) != 0)
                    return -1;
                continue;
            }
            if (sp->keys[k]->type == QR_XT_FLOAT)
                memcpy(&c.f, &c.i, sizeof c.f);
            row[k] = c;
        }
        for (uint32_t a = 0; a < sp->naggs; a++) {
            const hst *st = &h->st[g * sp->naggs + a];
            qr_cell *c = &row[sp->nkeys + a];
            int xt = sp->arg[a] ? sp->arg[a]->type : QR_XT_INT;
            switch (sp->fn[a]) {
            case QR_AGG_COUNT_STAR:
                *c = (qr_cell){.i = (int64_t)h->count[g]};
                break;
            case QR_AGG_COUNT:
                *c = (qr_cell){.i = st->cnt};
                break;
            case QR_AGG_MIN:
            case QR_AGG_MAX:
                if (!st->cnt)
                    break;
                *c = (qr_cell){.i = sp->fn[a] == QR_AGG_MIN ? st->min : st->max};
                if (xt == QR_XT_FLOAT)
                    c->f = qr_num_to_f64(c->i);
                break;
            case QR_AGG_SUM:
                if (!st->cnt)
                    break;
                if (st->sum > INT64_MAX || st->sum < INT64_MIN)
                    return qr_errf(e, QR_E_OUT_OF_RANGE, "sum is out of range for bigint");
                *c = (qr_cell){.i = (int64_t)st->sum};
                break;
            case QR_AGG_AVG:
                if (st->cnt)
                    *c = (qr_cell){.f = (double)st->sum / (double)st->cnt};
                break;
            }
        }
    }
    return 0;
}
