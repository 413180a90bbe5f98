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
    uint64_t *wt[QR_MAX_SEARCH_THREADS]; /* grouped: each key's weight */
    uint64_t cnt_cap[QR_MAX_SEARCH_THREADS];
    qr_tjcount part[QR_MAX_SEARCH_THREADS];
    /* GROUP BY a column of side gs (qr_x_term_join_groups): step 1 keeps
     * the other side's count per key of each task (kc[k]) and sums the
     * shared keys' (ktot); step 2 weighs each row of side gs by its key's
     * count, per group ordinal of the task's group field (gcnt[k]) */
    int grouped, step, gs;
    uint16_t gsec;
    uint32_t **kc;
    uint64_t *ktot;
    uint64_t **gcnt;
    qr_invfield **gf;
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

/* Side r's rows of task tk counted per key into c (zeroed, the field's
 * nterms counts): its filter's bitmap, then its left-out values set to 0
 * (one lookup each), then its residual tested per key. Returns the bitmap
 * (in the side's run arena of slot t, until its next reset; NULL: every
 * row) and sets *ok, or sets *ok = 0 with e set. */
static const uint64_t *side_bitmap_count(tjob *j, int t, const tjtask *tk, int r,
                                         const uint32_t *ord, uint32_t *c, int *ok, qr_err *e)
{
    qr_invfield *f = tk->f;
    uint64_t nt = f->dict.nterms;
    const qr_tjside *x = j->side[r];
    qr_arena *a = &x->ps->run[t];
    qr_arena_reset(a);
    int failed = 0;
    const uint64_t *bits = side_bits(x, (uint32_t)tk->si[r], t, a, e, &failed);
    int bad = failed || count_rows(f, ord, bits, c, nt, e) != 0;
    for (uint32_t i = 0; !bad && i < x->nexcl; i++) {
        /* a value left out: its count, found by one lookup, is 0 */
        uint32_t eo;
        int got = qr_invfield_ordinal_of(f, x->excl[i]->text, x->excl[i]->len, &eo, e);
        if (got == 1 && eo >= nt)
            got = qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s ordinals", f->seg->path,
                          f->def.name);
        if (got == 1)
            c[eo] = 0;
        bad = got < 0;
    }
    if (!bad && x->rest)
        bad = filter_keys(x, f, c, a, &j->part[t].terms, e) != 0;
    *ok = !bad;
    return bits;
}

static int side_count(tjob *j, int t, const tjtask *tk, int r, const uint32_t *ord, uint32_t *c,
                      qr_err *e)
{
    int ok;
    side_bitmap_count(j, t, tk, r, ord, c, &ok, e);
    return ok;
}

/* Slot t's per-key counts, room for n (zeroed when made; every task
 * leaves them zeroed), and with weights, n per-key weights too. */
static int slot_counts(tjob *j, int t, uint64_t n, int weights, qr_err *e)
{
    if (j->cnt_cap[t] >= n && (!weights || j->wt[t]))
        return 0;
    qr_qfree(j->ctx, j->cnt[t]);
    qr_qfree(j->ctx, j->wt[t]);
    j->wt[t] = NULL;
    j->cnt_cap[t] = 0;
    if (!(j->cnt[t] = qr_qmalloc(j->ctx, sizeof *j->cnt[t] * (n + 1))) ||
        (weights && !(j->wt[t] = qr_qmalloc(j->ctx, sizeof *j->wt[t] * (n + 1)))))
        return qr_qctx_nomem(j->ctx, e);
    memset(j->cnt[t], 0, sizeof *j->cnt[t] * (n + 1));
    j->cnt_cap[t] = n;
    return 0;
}

/* A task's key field: its ordinal per row and its shared ids. */
static int task_keys(tjob *j, qr_invfield *f, const uint32_t **ord, const uint32_t **sid, qr_err *e)
{
    if (!(*ord = qr_invfield_ordinals(f, j->ctx, e)))
        return -1;
    if (!(*sid = qr_keymap_sids(j->map, f)))
        return qr_errf(e, QR_E_INTERNAL, "segment %s: %s is not in the join's key map",
                       f->seg->path, f->def.name);
    return 0;
}

/* Task k on slot t: the field's matching rows counted per key, by
 * ordinal, on each side that scans it; a key of this field alone settled
 * here, a shared one's counts added to the slot's sums by shared id. */
static int count_task(tjob *j, int t, uint32_t k, qr_err *e)
{
    const tjtask *tk = &j->task[k];
    qr_invfield *f = tk->f;
    const uint32_t *ord, *sid;
    if (task_keys(j, f, &ord, &sid, e) != 0)
        return -1;
    uint64_t nt = f->dict.nterms;
    if (slot_counts(j, t, 2 * nt, 0, e) != 0)
        return -1;
    uint32_t *c[2] = {j->cnt[t], j->cnt[t] + nt};
    for (int r = 0; r < 2; r++)
        if (tk->si[r] >= 0 && !side_count(j, t, tk, r, ord, c[r], e)) {
            memset(j->cnt[t], 0, sizeof *j->cnt[t] * 2 * nt);
            return -1;
        }
    qr_tjcount *o = &j->part[t];
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

static int key_counts_task(tjob *j, int t, uint32_t k, qr_err *e);
static int distinct_task(tjob *j, int t, uint32_t k, qr_err *e);
static int group_task(tjob *j, int t, uint32_t k, qr_err *e);

static void worker(void *arg, int slot)
{
    tjob *j = arg;
    for (;;) {
        if (atomic_load(&j->failed))
            break;
        uint32_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->ntasks)
            break;
        int r = qr_par_check(j->side[0]->ps, &j->err[slot]);
        if (r == 0)
            r = !j->side[1]    ? distinct_task(j, slot, k, &j->err[slot])
                : !j->grouped  ? count_task(j, slot, k, &j->err[slot])
                : j->step == 1 ? key_counts_task(j, slot, k, &j->err[slot])
                               : group_task(j, slot, k, &j->err[slot]);
        if (r != 0) {
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
    uint32_t n0 = j->side[0]->ps->nsegs, n1 = j->side[1] ? j->side[1]->ps->nsegs : 0;
    j->task = qr_qmalloc(j->ctx, sizeof *j->task * ((size_t)n0 + n1 + 1));
    if (!j->task)
        return qr_qctx_nomem(j->ctx, e);
    uint32_t n = 0;
    for (int r = 0; r < 2 && j->side[r]; r++) {
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
    for (int r = 0; r < 2 && j->side[r] && !ref; r++)
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

/* Ready j to count a join of a and b: both sides indexed, the tasks,
 * the key map, the slots' sums (two counts per shared id). 0; 1 when a
 * segment cannot answer; -1 with e set. *nt: the slots. */
static int job_open(tjob *j, const qr_tjside *a, const qr_tjside *b, qr_tjcount *out, int *nt,
                    qr_err *e)
{
    int ok = side_indexed(a, e);
    if (ok == 1 && b)
        ok = side_indexed(b, e);
    if (ok != 1)
        return ok < 0 ? -1 : 1;
    j->side[0] = a;
    j->side[1] = b; /* NULL: distinct keys of a alone */
    j->ctx = a->ps->ctx;
    *nt = a->ps->threads < 1 ? 1 : a->ps->threads;
    if (b && b->ps->threads < *nt)
        *nt = b->ps->threads < 1 ? 1 : b->ps->threads;
    if (make_tasks(j, e) != 0)
        return -1;
    if (!(j->map = get_map(j, *nt, out, e)))
        return -1;
    j->nshared = qr_keymap_shared(j->map);
    size_t ab = sizeof(uint64_t) * 2 * ((size_t)j->nshared + 1);
    for (int t = 0; t < *nt; t++) {
        if (!(j->acc[t] = qr_qmalloc(j->ctx, ab)))
            return qr_qctx_nomem(j->ctx, e);
        memset(j->acc[t], 0, ab);
    }
    return 0;
}

/* Run the tasks on nt slots: 0, or -1 with e set. */
static int job_run(tjob *j, int nt, qr_err *e)
{
    atomic_store(&j->next, 0);
    atomic_store(&j->failed, 0);
    qr_pool_run(nt > 1 ? j->side[0]->ps->pool : NULL, nt, worker, j);
    for (int t = 0; t < nt; t++)
        if (j->rc[t]) {
            *e = j->err[t];
            return -1;
        }
    return 0;
}

/* The slots' counts added into out (count(*) checked). */
static int job_parts(const tjob *j, int nt, qr_tjcount *out, qr_err *e)
{
    for (int t = 0; t < nt; t++) {
        const qr_tjcount *p = &j->part[t];
        uint64_t q;
        if (__builtin_add_overflow(out->pairs, p->pairs, &q) || q > INT64_MAX)
            return qr_errf(e, QR_E_OUT_OF_RANGE, "count(*) of a join is out of range");
        out->pairs = q;
        out->keys += p->keys;
        out->rows_a += p->rows_a;
        out->rows_b += p->rows_b;
        out->terms += p->terms;
        out->settled += p->settled;
        out->summed += p->summed;
    }
    out->shared = j->nshared;
    return 0;
}

static void job_close(tjob *j)
{
    for (int t = 0; t < QR_MAX_SEARCH_THREADS; t++) {
        qr_qfree(j->ctx, j->acc[t]);
        qr_qfree(j->ctx, j->cnt[t]);
        qr_qfree(j->ctx, j->wt[t]);
    }
    for (uint32_t k = 0; k < j->ntasks; k++) {
        if (j->kc)
            qr_qfree(j->ctx, j->kc[k]);
        if (j->gcnt)
            qr_qfree(j->ctx, j->gcnt[k]);
    }
    qr_qfree(j->ctx, j->kc);
    qr_qfree(j->ctx, j->gcnt);
    qr_qfree(j->ctx, j->gf);
    qr_qfree(j->ctx, j->ktot);
    qr_keymap_release((qr_keymap *)j->map);
    qr_qfree(j->ctx, j->task);
    qr_qfree(j->ctx, j);
}

static tjob *job_new(qr_qctx *ctx, qr_err *e)
{
    tjob *j = qr_qmalloc(ctx, sizeof *j);
    if (!j) {
        qr_qctx_nomem(ctx, e);
        return NULL;
    }
    memset(j, 0, sizeof *j);
    j->ctx = ctx;
    atomic_init(&j->next, 0);
    atomic_init(&j->failed, 0);
    return j;
}

/* The counts of a join of a and b, or (b NULL) of a's distinct keys: the
 * tasks, then the shared keys summed over the slots. */
static int run_counts(const qr_tjside *a, const qr_tjside *b, qr_tjcount *out, qr_err *e)
{
    memset(out, 0, sizeof *out);
    tjob *j = job_new(a->ps->ctx, e);
    if (!j)
        return -1;
    int nt = 1, rc = job_open(j, a, b, out, &nt, e);
    if (rc == 0)
        rc = job_run(j, nt, e);
    if (rc == 0)
        rc = job_parts(j, nt, out, e);
    for (uint64_t s = 0; rc == 0 && s < j->nshared; s++) {
        uint64_t ca = 0, cb = 0;
        for (int t = 0; t < nt; t++) {
            ca += j->acc[t][b ? 2 * s : s];
            cb += b ? j->acc[t][2 * s + 1] : 0;
        }
        if (!b) {
            out->keys += ca != 0;
            continue;
        }
        rc = add_key(out, ca, cb, e);
        out->rows_a -= ca; /* (counted by the tasks already) */
        out->rows_b -= cb;
    }
    job_close(j);
    return rc;
}

int qr_x_term_join_count(const qr_tjside *a, const qr_tjside *b, qr_tjcount *out, qr_err *e)
{
    return run_counts(a, b, out, e);
}

/* ---- GROUP BY a column of one side ---- */

/* Step 1, task k: the counting side's rows per key, kept for step 2; the
 * shared keys' added to the slot's sums. */
static int key_counts_task(tjob *j, int t, uint32_t k, qr_err *e)
{
    const tjtask *tk = &j->task[k];
    int ks = 1 - j->gs;
    if (tk->si[ks] < 0)
        return 0;
    qr_invfield *f = tk->f;
    const uint32_t *ord, *sid;
    if (task_keys(j, f, &ord, &sid, e) != 0)
        return -1;
    uint64_t nt = f->dict.nterms, rows = 0;
    uint32_t *c = qr_qmalloc(j->ctx, sizeof *c * (nt + 1));
    if (!c)
        return qr_qctx_nomem(j->ctx, e);
    memset(c, 0, sizeof *c * (nt + 1));
    j->kc[k] = c;
    if (!side_count(j, t, tk, ks, ord, c, e))
        return -1;
    uint64_t *acc = j->acc[t];
    for (uint64_t i = 0; i < nt; i++) {
        rows += c[i];
        if (sid[i] != QR_KM_ONE && c[i]) {
            if (sid[i] >= j->nshared)
                return qr_errf(e, QR_E_INTERNAL, "a key map's shared id out of range");
            acc[sid[i]] += c[i];
        }
    }
    *(ks == 0 ? &j->part[t].rows_a : &j->part[t].rows_b) += rows;
    return 0;
}

/* A key's rows on the counting side: its own segment's count for a key of
 * one segment (none when that side does not scan it), else the sum by
 * shared id. */
static inline uint64_t key_weight(const tjob *j, const uint32_t *sid, const uint32_t *kc,
                                  uint64_t o)
{
    return sid[o] == QR_KM_ONE ? (kc ? kc[o] : 0) : j->ktot[sid[o]];
}

/* Where step 2 adds: a task's group counts by group ordinal (gnt: NULL). */
typedef struct gsum {
    const uint64_t *bits; /* the grouping side's matches (NULL: every row) */
    const uint32_t *gord;
    uint64_t *gc, gnt;
    uint64_t w; /* the key at hand's weight (postings) */
    uint64_t rows, pairs;
} gsum;

/* Row d adds weight w to its group: 0, -3 on overflow, -4 corrupt. */
static inline int add_row(gsum *g, uint32_t d, uint64_t w)
{
    uint32_t o = g->gord[d];
    uint64_t at = o == QR_NO_ORD ? g->gnt : o;
    if (at > g->gnt)
        return -4;
    if (__builtin_add_overflow(g->gc[at], w, &g->gc[at]) ||
        __builtin_add_overflow(g->pairs, w, &g->pairs))
        return -3;
    g->rows++;
    return 0;
}

static int posting_row(void *arg, uint32_t d)
{
    gsum *g = arg;
    if (g->bits && !(g->bits[d >> 6] >> (d & 63) & 1))
        return 0;
    return add_row(g, d, g->w);
}

static int sum_error(const qr_invfield *gf, int r, qr_err *e)
{
    if (r == -3)
        return qr_errf(e, QR_E_OUT_OF_RANGE, "count(*) of a join is out of range");
    return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s ordinals", gf->seg->path,
                   gf->def.name);
}

/* Step 2 by rows: every matching row of the grouping side read through
 * its key's ordinal, adding its key's weight (w) to its group. */
static int weigh_rows(tjob *j, const tjtask *tk, const uint32_t *ord, const uint64_t *w,
                      const qr_invfield *gf, gsum *g, qr_err *e)
{
    uint32_t nrows = tk->f->rows;
    const uint64_t *bits = g->bits;
    int r = 0;
    for (uint32_t b = 0; r == 0 && b < (nrows + 63) / 64; b++) {
        uint64_t v = ~0ull; /* no bitmap: every row */
        if (bits)
            v = bits[b];
        else if (b + 1 == (nrows + 63) / 64 && (nrows & 63))
            v = ~0ull >> (64 - (nrows & 63));
        for (; r == 0 && v; v &= v - 1) {
            uint32_t d = b * 64 + (uint32_t)__builtin_ctzll(v), o = ord[d];
            if (o != QR_NO_ORD && w[o] && (r = add_row(g, d, w[o])) != 0)
                r = sum_error(gf, r, e); /* (o < nt: the ordinals' build checked) */
        }
        if (r == 0 && (b & 0xffff) == 0xffff)
            r = qr_qctx_check(j->ctx, e);
    }
    return r;
}

/* Step 2 by postings: the keys with a weight, read from the dictionary,
 * each one's rows from its postings (those the side's filter matches):
 * when few of the segment's keys join, far fewer rows than a scan reads. */
static int weigh_postings(tjob *j, const tjtask *tk, const uint64_t *w, qr_pcursor *c,
                          const qr_invfield *gf, gsum *g, qr_err *e)
{
    qr_invfield *f = tk->f;
    uint64_t nt = f->dict.nterms;
    qr_titer it;
    int r = qr_tdict_seek(&f->dict, &it, NULL, 0, e);
    for (uint64_t o = 0; r == 1; o++, r = qr_titer_next(&it, e)) {
        if (o >= nt)
            return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s has more terms than it says",
                           f->seg->path, f->def.name);
        if ((o & 0xfff) == 0 && qr_qctx_check(j->ctx, e) != 0)
            return -1;
        if (!w[o])
            continue;
        qr_terminfo ti;
        if (qr_titer_info(&it, &ti, e) != 0)
            return -1;
        g->w = w[o];
        int rr = qr_invfield_term_rows(f, &ti, c, posting_row, g, e);
        if (rr == -3 || rr == -4)
            return sum_error(gf, rr, e);
        if (rr != 0)
            return -1;
    }
    return r < 0 ? -1 : 0;
}

/* Each key's weight for the grouping side's rows of task tk (w: nt of
 * them): its rows on the other side, 0 for a value the side leaves out or
 * its residual rejects (tested on the keys its matches hold). Sets
 * g->bits to the side's matches; *nw: the keys with a weight. */
static int key_weights(tjob *j, int t, const tjtask *tk, const uint32_t *ord, const uint32_t *sid,
                       uint64_t *w, uint64_t *nw, gsum *g, qr_err *e)
{
    qr_invfield *f = tk->f;
    uint64_t nt = f->dict.nterms;
    const qr_tjside *x = j->side[j->gs];
    const uint32_t *kc = j->kc[tk - j->task];
    for (uint64_t o = 0; o < nt; o++)
        w[o] = key_weight(j, sid, kc, o);
    if (x->rest) { /* the side's own counts say which keys its residual keeps */
        uint32_t *cg = j->cnt[t];
        int ok;
        g->bits = side_bitmap_count(j, t, tk, j->gs, ord, cg, &ok, e);
        for (uint64_t o = 0; o < nt; o++) {
            w[o] = cg[o] ? w[o] : 0;
            cg[o] = 0;
        }
        if (!ok)
            return -1;
    } else {
        qr_arena *a = &x->ps->run[t];
        qr_arena_reset(a);
        int failed = 0;
        g->bits = side_bits(x, (uint32_t)tk->si[j->gs], t, a, e, &failed);
        if (failed)
            return -1;
        for (uint32_t i = 0; i < x->nexcl; i++) {
            uint32_t eo;
            int got = qr_invfield_ordinal_of(f, x->excl[i]->text, x->excl[i]->len, &eo, e);
            if (got < 0)
                return -1;
            if (got == 1 && eo < nt)
                w[eo] = 0;
        }
    }
    *nw = 0;
    for (uint64_t o = 0; o < nt; o++)
        *nw += w[o] != 0;
    return 0;
}

/* Step 2, task k: each matching row of the grouping side adds its key's
 * count on the other side to its group's count, by the group field's
 * ordinal (one past the last: NULL). By rows, or by postings when under
 * 1/64 of the segment's keys join (a cursor per key costs about what 64
 * rows of a scan do). */
static int group_task(tjob *j, int t, uint32_t k, qr_err *e)
{
    const tjtask *tk = &j->task[k];
    int gs = j->gs;
    if (tk->si[gs] < 0)
        return 0;
    qr_invfield *f = tk->f;
    const uint32_t *ord, *sid;
    if (task_keys(j, f, &ord, &sid, e) != 0)
        return -1;
    qr_par_search *ps = j->side[gs]->ps;
    qr_invfield *gf = qr_segsearch_field(&ps->ss[tk->si[gs]], j->gsec, e);
    const uint32_t *gord = gf ? qr_invfield_ordinals(gf, j->ctx, e) : NULL;
    if (!gord)
        return -1;
    uint64_t nt = f->dict.nterms, gnt = gf->dict.nterms, nw = 0;
    uint64_t *gc = qr_qmalloc(j->ctx, sizeof *gc * (gnt + 1));
    if (!gc)
        return qr_qctx_nomem(j->ctx, e);
    memset(gc, 0, sizeof *gc * (gnt + 1));
    j->gcnt[k] = gc;
    j->gf[k] = gf;
    /* per slot: the side's counts per key (zeroed, left zeroed: a residual
     * needs them) and each key's weight, grown with the segments */
    if (slot_counts(j, t, nt, 1, e) != 0)
        return -1;
    gsum g = {.gord = gord, .gc = gc, .gnt = gnt};
    int r = key_weights(j, t, tk, ord, sid, j->wt[t], &nw, &g, e);
    qr_pcursor *c = NULL;
    if (r == 0 && nw * 64 < nt) { /* few keys join here: their postings */
        if (!(c = qr_qmalloc(j->ctx, sizeof *c)))
            r = qr_qctx_nomem(j->ctx, e);
        else
            r = weigh_postings(j, tk, j->wt[t], c, gf, &g, e);
        qr_qfree(j->ctx, c);
    } else if (r == 0) {
        r = weigh_rows(j, tk, ord, j->wt[t], gf, &g, e);
    }
    if (r != 0)
        return -1;
    qr_tjcount *p = &j->part[t];
    *(gs == 0 ? &p->rows_a : &p->rows_b) += g.rows;
    if (__builtin_add_overflow(p->pairs, g.pairs, &p->pairs) || p->pairs > INT64_MAX)
        return qr_errf(e, QR_E_OUT_OF_RANGE, "count(*) of a join is out of range");
    return 0;
}

/* 1 when every segment side x scans has index gsec, a keyword one
 * holding every non-NULL value; 0 when not; -1 with e set. */
static int group_indexed(const qr_tjside *x, uint16_t gsec, qr_err *e)
{
    qr_par_search *ps = x->ps;
    for (uint32_t si = 0; si < ps->nsegs; si++) {
        if (!has_sec(ps->ss[si].seg, gsec))
            return 0;
        qr_invfield *f = qr_segsearch_field(&ps->ss[si], gsec, e);
        if (!f)
            return -1;
        if (f->def.kind != QR_IX_KEYWORD || f->total_tokens != f->docs_with_field ||
            f->dict.nterms >= QR_NO_ORD)
            return 0;
    }
    return 1;
}

static int group_cmp(const void *x, const void *y)
{
    const qr_tjgroup *a = x, *b = y;
    size_t m = a->n < b->n ? a->n : b->n;
    int c = m ? memcmp(a->s, b->s, m) : 0;
    return c ? c : a->n < b->n ? -1 : a->n > b->n;
}

/* The groups of every task: each one's values with a count, read from
 * its group field's dictionary, then equal values summed. */
static int collect_groups(tjob *j, qr_tjgroups *out, qr_err *e)
{
    uint64_t n = 0, cap = 0;
    for (uint32_t k = 0; k < j->ntasks; k++) {
        const uint64_t *gc = j->gcnt[k];
        if (!gc)
            continue;
        qr_invfield *gf = j->gf[k];
        uint64_t gnt = gf->dict.nterms;
        if (__builtin_add_overflow(out->null_count, gc[gnt], &out->null_count))
            return qr_errf(e, QR_E_OUT_OF_RANGE, "count(*) of a join is out of range");
        qr_titer it;
        int r = qr_tdict_seek(&gf->dict, &it, NULL, 0, e);
        for (uint64_t o = 0; r == 1 && o < gnt; o++, r = qr_titer_next(&it, e)) {
            if (!gc[o])
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                qr_tjgroup *p = qr_qrealloc(j->ctx, out->g, sizeof *p * cap);
                if (!p)
                    return qr_qctx_nomem(j->ctx, e);
                out->g = p;
            }
            char *s = qr_arena_alloc(&out->a, it.len + 1);
            if (!s)
                return qr_qctx_nomem(j->ctx, e);
            memcpy(s, it.term, it.len);
            out->g[n++] = (qr_tjgroup){s, (uint32_t)it.len, gc[o]};
        }
        if (r < 0)
            return -1;
    }
    if (n > 1)
        qsort(out->g, n, sizeof *out->g, group_cmp);
    uint64_t w = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (w && group_cmp(&out->g[w - 1], &out->g[i]) == 0) {
            if (__builtin_add_overflow(out->g[w - 1].count, out->g[i].count, &out->g[w - 1].count))
                return qr_errf(e, QR_E_OUT_OF_RANGE, "count(*) of a join is out of range");
            continue;
        }
        out->g[w++] = out->g[i];
    }
    out->n = w;
    return 0;
}

int qr_x_term_join_groups(const qr_tjside *a, const qr_tjside *b, int gside, uint16_t gsec,
                          qr_tjgroups *out, qr_tjcount *c, qr_err *e)
{
    memset(c, 0, sizeof *c);
    memset(out, 0, sizeof *out);
    out->ctx = a->ps->ctx;
    qr_arena_init(&out->a, 16 << 10, 0);
    qr_arena_set_ctx(&out->a, out->ctx);
    int ok = group_indexed(gside == 0 ? a : b, gsec, e);
    if (ok != 1)
        return ok < 0 ? -1 : 1;
    tjob *j = job_new(a->ps->ctx, e);
    if (!j)
        return -1;
    j->grouped = 1;
    j->gs = gside;
    j->gsec = gsec;
    int nt = 1, rc = job_open(j, a, b, c, &nt, e);
    if (rc == 0) {
        size_t n = (size_t)j->ntasks + 1;
        j->kc = qr_qmalloc(j->ctx, sizeof *j->kc * n);
        j->gcnt = qr_qmalloc(j->ctx, sizeof *j->gcnt * n);
        j->gf = qr_qmalloc(j->ctx, sizeof *j->gf * n);
        j->ktot = qr_qmalloc(j->ctx, sizeof *j->ktot * ((size_t)j->nshared + 1));
        if (!j->kc || !j->gcnt || !j->gf || !j->ktot)
            rc = qr_qctx_nomem(j->ctx, e);
        else {
            memset(j->kc, 0, sizeof *j->kc * n);
            memset(j->gcnt, 0, sizeof *j->gcnt * n);
            memset(j->gf, 0, sizeof *j->gf * n);
        }
    }
    j->step = 1;
    if (rc == 0)
        rc = job_run(j, nt, e);
    for (uint64_t s = 0; rc == 0 && s < j->nshared; s++) {
        uint64_t x = 0;
        for (int t = 0; t < nt; t++)
            x += j->acc[t][s];
        j->ktot[s] = x;
    }
    j->step = 2;
    if (rc == 0)
        rc = job_run(j, nt, e);
    if (rc == 0)
        rc = job_parts(j, nt, c, e);
    if (rc == 0)
        rc = collect_groups(j, out, e);
    job_close(j);
    if (rc != 0)
        qr_tjgroups_free(out);
    return rc;
}

void qr_tjgroups_free(qr_tjgroups *g)
{
    qr_qfree(g->ctx, g->g);
    g->g = NULL;
    g->n = 0;
    qr_arena_free(&g->a);
}

/* ---- count(DISTINCT key) of one scan ---- */

/* Task k: the side's rows per key; a key of this segment alone with rows
 * is one distinct key, a shared one's rows go to its id's sum. */
static int distinct_task(tjob *j, int t, uint32_t k, qr_err *e)
{
    const tjtask *tk = &j->task[k];
    qr_invfield *f = tk->f;
    const uint32_t *ord, *sid;
    if (task_keys(j, f, &ord, &sid, e) != 0)
        return -1;
    uint64_t nt = f->dict.nterms;
    if (slot_counts(j, t, nt, 0, e) != 0)
        return -1;
    uint32_t *c = j->cnt[t];
    if (!side_count(j, t, tk, 0, ord, c, e)) {
        memset(c, 0, sizeof *c * nt);
        return -1;
    }
    uint64_t *acc = j->acc[t], keys = 0, rows = 0, settled = 0, summed = 0;
    int bad = 0;
    for (uint64_t i = 0; i < nt; i++) {
        uint64_t x = c[i];
        c[i] = 0;
        uint32_t sh = sid[i];
        uint64_t one = sh == QR_KM_ONE, any = x != 0;
        rows += x;
        keys += one & any;
        settled += one & any;
        if (__builtin_expect(!one, 0) && any) {
            summed++;
            bad |= sh >= j->nshared;
            if (sh < j->nshared)
                acc[sh] += x;
        }
    }
    if (bad)
        return qr_errf(e, QR_E_INTERNAL, "a key map's shared id out of range");
    qr_tjcount *p = &j->part[t];
    p->keys += keys;
    p->rows_a += rows;
    p->settled += settled;
    p->summed += summed;
    return 0;
}

int qr_x_term_distinct(const qr_tjside *a, qr_tjcount *out, qr_err *e)
{
    return run_counts(a, NULL, out, e);
}
