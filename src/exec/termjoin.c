/* termjoin.c - join counts from keyword indexes (termjoin.h): per
 * segment each side's matches counted per key through the field's ordinal
 * per row; a key of one segment alone settled there, the others summed by
 * the shared ids of the segments' key map (index/keymap.h). */
#include "exec/termjoin.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "index/keymap.h"
#include "index/segcache.h"
#include "match/select.h"

/* A task: one keyword field (a segment's index), the segment index in
 * each side's search that scans it, -1 for a side that does not. A
 * segment both sides scan (a self-join) is one task counting both. */
typedef struct tjtask {
    qr_invfield *f;
    int32_t si[2];
} tjtask;

typedef struct tjob {
    const qr_tjside *side[2];
    qr_qctx *ctx;
    tjtask *task;
    uint32_t ntasks;
    const qr_keymap *map;
    uint32_t nshared;
    /* per slot: two counts (sides a, b) per shared id, summed at the end;
     * the per-ordinal counts of the task at hand (reused, grown) */
    uint64_t *acc[QR_MAX_SEARCH_THREADS];
    uint32_t *cnt[QR_MAX_SEARCH_THREADS];
    uint64_t cnt_cap[QR_MAX_SEARCH_THREADS];
    qr_tjcount part[QR_MAX_SEARCH_THREADS];
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


#define KEY_BATCH 1024u

/* Side x's residual over the keys its rows hold in field f (c[o] > 0: no
 * other value is tested, so an error is one the rows would raise too),
 * read from the dictionary in order a batch at a time: a key it does not
 * hold for counts no row of that side (c[o] = 0). *terms: terms read. */
static int filter_keys(const qr_tjside *x, qr_invfield *f, uint32_t *c, qr_arena *a,
                       uint64_t *terms, qr_err *e)
{
    qr_cell *cells = qr_arena_alloc(a, sizeof *cells * KEY_BATCH);
    uint32_t *sel = qr_arena_alloc(a, sizeof *sel * KEY_BATCH);
    uint32_t *ent = qr_arena_alloc(a, sizeof *ent * KEY_BATCH);
    char *bytes = qr_arena_alloc(a, (size_t)KEY_BATCH * QR_MAX_TERM);
    const qr_cell **cols = qr_arena_alloc(a, sizeof *cols * (x->ncols ? x->ncols : 1));
    if (!cells || !sel || !ent || !bytes || !cols)
        return qr_qctx_nomem(x->ps->ctx, e);
    memset(cols, 0, sizeof *cols * (x->ncols ? x->ncols : 1));
    cols[x->key_col] = cells;
    qr_arena scratch;
    qr_arena_init(&scratch, 64 << 10, 0);
    qr_arena_set_ctx(&scratch, x->ps->ctx);
    uint64_t nt = f->dict.nterms, o = 0;
    qr_titer it;
    int r = qr_tdict_seek(&f->dict, &it, NULL, 0, e), rc = 0;
    while (rc == 0 && r >= 0) {
        uint32_t n = 0, ns = 0;
        size_t at = 0;
        for (; r == 1 && n < KEY_BATCH; r = qr_titer_next(&it, e), o++) {
            if (o >= nt) {
                r = qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s has more terms than it says",
                            f->seg->path, f->def.name);
                break;
            }
            if (c[o] && it.len <= QR_MAX_TERM) {
                memcpy(bytes + at, it.term, it.len);
                cells[n] = (qr_cell){.s = bytes + at, .n = it.len};
                ent[n++] = (uint32_t)o;
                at += it.len;
            }
        }
        if (r < 0) {
            rc = -1;
            break;
        }
        qr_arena_reset(&scratch);
        qr_xbatch b = {n, x->ncols, cols, x->types, NULL};
        rc = n ? qr_expr_filter(x->rest, &b, sel, &ns, &scratch, e) : 0;
        for (uint32_t k = 0, q = 0; rc == 0 && k < n; k++) {
            if (q < ns && sel[q] == k)
                q++;
            else
                c[ent[k]] = 0;
        }
        if (rc == 0)
            rc = qr_qctx_check(x->ps->ctx, e);
        if (r == 0)
            break;
    }
    qr_arena_free(&scratch);
    *terms += o;
    return rc;
}

/* Adds a key's counts on both sides into *o: 0, or -1 (22003) when
 * count(*) passes 2^63 - 1. */
static inline int add_key(qr_tjcount *o, uint64_t ca, uint64_t cb, qr_err *e)
{
    o->rows_a += ca;
    o->rows_b += cb;
    if (ca && cb) {
        uint64_t q;
        o->keys++;
        if (__builtin_mul_overflow(ca, cb, &q) || __builtin_add_overflow(o->pairs, q, &q) ||
            q > INT64_MAX)
            return qr_errf(e, QR_E_OUT_OF_RANGE, "count(*) of a join is out of range");
        o->pairs = q;
    }
    return 0;
}

/* Task k on slot t: the field's matching rows counted per key, by
 * ordinal, on each side that scans it; a key of this field alone settled
 * here, a shared one's counts added to the slot's sums by shared id. */
static int count_task(tjob *j, int t, uint32_t k, qr_err *e)
{
    const tjtask *tk = &j->task[k];
    qr_invfield *f = tk->f;
    const uint32_t *ord = qr_invfield_ordinals(f, j->ctx, e);
    if (!ord)
        return -1;
    const uint32_t *sid = qr_keymap_sids(j->map, f);
    if (!sid)
        return qr_errf(e, QR_E_INTERNAL, "segment %s: %s is not in the join's key map",
                       f->seg->path, f->def.name);
    uint64_t nt = f->dict.nterms;
    if (j->cnt_cap[t] < 2 * nt) { /* zeroed here; each task leaves it zeroed */
        qr_qfree(j->ctx, j->cnt[t]);
        j->cnt_cap[t] = 0;
        j->cnt[t] = qr_qmalloc(j->ctx, sizeof *j->cnt[t] * (2 * nt + 1));
        if (!j->cnt[t])
            return qr_qctx_nomem(j->ctx, e);
        memset(j->cnt[t], 0, sizeof *j->cnt[t] * (2 * nt + 1));
        j->cnt_cap[t] = 2 * nt;
    }
    uint32_t *c[2] = {j->cnt[t], j->cnt[t] + nt};
    qr_tjcount *o = &j->part[t];
    for (int r = 0; r < 2; r++) {
        if (tk->si[r] < 0)
            continue;
        const qr_tjside *x = j->side[r];
        qr_arena *a = &x->ps->run[t];
        qr_arena_reset(a);
        int failed = 0;
        const uint64_t *bits = side_bits(x, (uint32_t)tk->si[r], t, a, e, &failed);
        int bad = failed || count_rows(f, ord, bits, c[r], nt, e) != 0;
        for (uint32_t i = 0; !bad && i < x->nexcl; i++) {
            /* a value left out: its count, found by one lookup, is 0 */
            uint32_t eo;
            int got = qr_invfield_ordinal_of(f, x->excl[i]->text, x->excl[i]->len, &eo, e);
            if (got == 1 && eo >= nt)
                got = qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s ordinals", f->seg->path,
                              f->def.name);
            if (got == 1)
                c[r][eo] = 0;
            bad = got < 0;
        }
        if (bad || (x->rest && filter_keys(x, f, c[r], a, &o->terms, e) != 0)) {
            memset(j->cnt[t], 0, sizeof *j->cnt[t] * 2 * nt);
            return -1;
        }
    }
    /* every key: without a branch on its counts (most keys of a trace join
     * have rows, at random), zeroing them for the next task; a segment's
     * sum of count_a * count_b is below its rows squared, under 2^64 */
    uint64_t *acc = j->acc[t];
    uint32_t *ca = c[0], *cb = c[1];
    uint64_t pairs = 0, keys = 0, ra = 0, rb = 0, settled = 0, summed = 0;
    int bad = 0;
    for (uint64_t i = 0; i < nt; i++) {
        uint64_t x = ca[i], y = cb[i];
        ca[i] = cb[i] = 0;
        uint32_t sh = sid[i];
        uint64_t one = sh == QR_KM_ONE, any = (x | y) != 0;
        ra += x;
        rb += y;
        pairs += one * x * y;
        keys += one & (x != 0) & (y != 0);
        settled += one & any;
        if (__builtin_expect(!one, 0) && any) {
            summed++;
            bad |= sh >= j->nshared;
            if (sh < j->nshared) {
                acc[2 * (uint64_t)sh] += x;
                acc[2 * (uint64_t)sh + 1] += y;
            }
        }
    }
    if (bad)
        return qr_errf(e, QR_E_INTERNAL, "a key map's shared id out of range");
    o->rows_a += ra;
    o->rows_b += rb;
    o->keys += keys;
    o->settled += settled;
    o->summed += summed;
    if (__builtin_add_overflow(o->pairs, pairs, &o->pairs) || o->pairs > INT64_MAX)
        return qr_errf(e, QR_E_OUT_OF_RANGE, "count(*) of a join is out of range");
    return 0;
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
            count_task(j, slot, k, &j->err[slot]) != 0) {
            j->rc[slot] = -1;
            atomic_store(&j->failed, 1);
            break;
        }
    }
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

static int task_cmp(const void *x, const void *y)
{
    uint64_t a = ((const tjtask *)x)->f->serial, b = ((const tjtask *)y)->f->serial;
    return a < b ? -1 : a > b;
}

/* The tasks: every field either side scans, once (sorted by serial, so a
 * field both sides scan is found), with the segment each side scans it as. */
static int make_tasks(tjob *j, qr_err *e)
{
    uint32_t n0 = j->side[0]->ps->nsegs, n1 = j->side[1]->ps->nsegs;
    j->task = qr_qmalloc(j->ctx, sizeof *j->task * ((size_t)n0 + n1 + 1));
    if (!j->task)
        return qr_qctx_nomem(j->ctx, e);
    uint32_t n = 0;
    for (int r = 0; r < 2; r++) {
        const qr_tjside *x = j->side[r];
        for (uint32_t si = 0; si < x->ps->nsegs; si++) {
            qr_invfield *f = qr_segsearch_field(&x->ps->ss[si], x->sec, e);
            if (!f)
                return -1;
            j->task[n++] = (tjtask){f, {r == 0 ? (int32_t)si : -1, r == 1 ? (int32_t)si : -1}};
        }
    }
    if (n > 1)
        qsort(j->task, n, sizeof *j->task, task_cmp);
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (w && j->task[w - 1].f->serial == j->task[i].f->serial) {
            tjtask *p = &j->task[w - 1];
            int r = j->task[i].si[0] >= 0 ? 0 : 1;
            if (p->si[r] >= 0) /* a search scans each segment once */
                return qr_errf(e, QR_E_INTERNAL, "segment %s scanned twice by one side",
                               p->f->seg->path);
            p->si[r] = j->task[i].si[r];
            continue;
        }
        j->task[w++] = j->task[i];
    }
    j->ntasks = w;
    return 0;
}

/* The map of the tasks' fields: the segment cache's, else built (and put
 * there when the segments come from a cache). */
static const qr_keymap *get_map(tjob *j, int nt, qr_tjcount *out, qr_err *e)
{
    const qr_segref *ref = NULL;
    for (int r = 0; r < 2 && !ref; r++)
        if (j->side[r]->ps->nsegs)
            ref = j->side[r]->ps->ss[0].ref;
    qr_kmcache *c = ref ? qr_segref_keymaps(ref) : NULL;
    qr_invfield **f = qr_qmalloc(j->ctx, sizeof *f * (j->ntasks + 1));
    if (!f) {
        qr_qctx_nomem(j->ctx, e);
        return NULL;
    }
    for (uint32_t k = 0; k < j->ntasks; k++)
        f[k] = j->task[k].f;
    qr_keymap *m = c ? qr_kmcache_find(c, f, j->ntasks) : NULL;
    if (!m) {
        int64_t t0 = qr_qctx_now_ns();
        m = qr_keymap_build(c, f, j->ntasks, j->side[0]->ps->pool, nt, j->ctx, e);
        out->map_built = 1;
        out->map_ns = qr_qctx_now_ns() - t0;
    }
    qr_qfree(j->ctx, f);
    return m;
}

int qr_x_term_join_count(const qr_tjside *a, const qr_tjside *b, qr_tjcount *out, qr_err *e)
{
    memset(out, 0, sizeof *out);
    int ok = side_indexed(a, e);
    if (ok == 1)
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
    j->ctx = ps->ctx;
    int nt = ps->threads < 1 ? 1 : ps->threads;
    if (b->ps->threads < nt)
        nt = b->ps->threads < 1 ? 1 : b->ps->threads;
    int rc = make_tasks(j, e);
    qr_keymap *map = NULL;
    if (rc == 0 && !(map = (qr_keymap *)get_map(j, nt, out, e)))
        rc = -1;
    if (rc == 0) {
        j->map = map;
        j->nshared = qr_keymap_shared(map);
        size_t ab = sizeof(uint64_t) * 2 * ((size_t)j->nshared + 1);
        for (int t = 0; t < nt && rc == 0; t++) {
            if (!(j->acc[t] = qr_qmalloc(j->ctx, ab)))
                rc = qr_qctx_nomem(j->ctx, e);
            else
                memset(j->acc[t], 0, ab);
        }
    }
    if (rc == 0) {
        atomic_init(&j->next, 0);
        atomic_init(&j->failed, 0);
        qr_pool_run(nt > 1 ? ps->pool : NULL, nt, worker, j);
        for (int t = 0; t < nt && rc == 0; t++) {
            if (j->rc[t]) {
                *e = j->err[t];
                rc = -1;
            }
        }
    }
    /* the slots' settled keys, then the shared keys summed over the slots */
    for (int t = 0; t < nt && rc == 0; t++) {
        const qr_tjcount *p = &j->part[t];
        uint64_t q;
        if (__builtin_add_overflow(out->pairs, p->pairs, &q) || q > INT64_MAX)
            rc = qr_errf(e, QR_E_OUT_OF_RANGE, "count(*) of a join is out of range");
        out->pairs = q;
        out->keys += p->keys;
        out->rows_a += p->rows_a;
        out->rows_b += p->rows_b;
        out->terms += p->terms;
        out->settled += p->settled;
        out->summed += p->summed;
    }
    for (uint64_t s = 0; rc == 0 && s < j->nshared; s++) {
        uint64_t ca = 0, cb = 0;
        for (int t = 0; t < nt; t++) {
            ca += j->acc[t][2 * s];
            cb += j->acc[t][2 * s + 1];
        }
        rc = add_key(out, ca, cb, e);
        out->rows_a -= ca; /* (counted by the tasks already) */
        out->rows_b -= cb;
    }
    out->shared = j->nshared;
    for (int t = 0; t < nt; t++) {
        qr_qfree(j->ctx, j->acc[t]);
        qr_qfree(j->ctx, j->cnt[t]);
    }
    qr_keymap_release(map);
    qr_qfree(j->ctx, j->task);
    qr_qfree(j->ctx, j);
    return rc;
}
