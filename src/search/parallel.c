/* parallel.c - multi-threaded counting over segments (see parallel.h). */
#include "search/parallel.h"

#include "automaton/automaton.h"
#include "score/scorer.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int qr_par_init(qr_par_search *p, const qr_tabdef *def, qr_segment **segs, uint32_t nsegs,
                const char *text, size_t len, int threads, qr_err *e)
{
    if (qr_par_init_pool(p, NULL, def, segs, nsegs, text, len, threads, e) != 0)
        return -1;
    if (p->threads > 1) {
        qr_err pe; /* no pool: the jobs run on the caller, answers unchanged */
        p->pool = qr_pool_new(p->threads - 1, &pe);
        p->own_pool = p->pool != NULL;
    }
    return 0;
}

/* The state of a search but its tree: over segs, or cache handles refs. */
static int setup(qr_par_search *p, qr_pool *pool, const qr_tabdef *def, qr_segment **segs,
                 qr_segref **refs, uint32_t nsegs, int threads, qr_err *e);
static int init_text(qr_par_search *p, qr_pool *pool, const qr_tabdef *def, qr_segment **segs,
                     qr_segref **refs, uint32_t nsegs, const char *text, size_t len, int threads,
                     qr_err *e);
static int init_tree(qr_par_search *p, qr_pool *pool, const qr_tabdef *def, qr_segment **segs,
                     qr_segref **refs, uint32_t nsegs, const qr_query *tree, int threads,
                     qr_err *e);

int qr_par_init_pool(qr_par_search *p, qr_pool *pool, const qr_tabdef *def, qr_segment **segs,
                     uint32_t nsegs, const char *text, size_t len, int threads, qr_err *e)
{
    return init_text(p, pool, def, segs, NULL, nsegs, text, len, threads, e);
}

int qr_par_init_tree(qr_par_search *p, qr_pool *pool, const qr_tabdef *def, qr_segment **segs,
                     uint32_t nsegs, const qr_query *tree, int threads, qr_err *e)
{
    return init_tree(p, pool, def, segs, NULL, nsegs, tree, threads, e);
}

int qr_par_init_refs(qr_par_search *p, qr_pool *pool, const qr_tabdef *def, qr_segref **refs,
                     uint32_t nsegs, const char *text, size_t len, int threads, qr_err *e)
{
    return init_text(p, pool, def, NULL, refs, nsegs, text, len, threads, e);
}

int qr_par_init_refs_tree(qr_par_search *p, qr_pool *pool, const qr_tabdef *def,
                          qr_segref **refs, uint32_t nsegs, const qr_query *tree, int threads,
                          qr_err *e)
{
    return init_tree(p, pool, def, NULL, refs, nsegs, tree, threads, e);
}

static int init_text(qr_par_search *p, qr_pool *pool, const qr_tabdef *def, qr_segment **segs,
                     qr_segref **refs, uint32_t nsegs, const char *text, size_t len, int threads,
                     qr_err *e)
{
    if (setup(p, pool, def, segs, refs, nsegs, threads, e) != 0)
        return -1;
    if (!(p->q[0] = qr_query_parse_for(def, text, len, &p->qarena[0], e))) {
        qr_par_free(p);
        return -1;
    }
    for (int t = 1; t < p->threads; t++)
        p->q[t] = p->q[0];
    return 0;
}

static int init_tree(qr_par_search *p, qr_pool *pool, const qr_tabdef *def, qr_segment **segs,
                     qr_segref **refs, uint32_t nsegs, const qr_query *tree, int threads,
                     qr_err *e)
{
    if (!tree)
        return qr_errf(e, QR_E_ARGS, "search: no query tree");
    if (setup(p, pool, def, segs, refs, nsegs, threads, e) != 0)
        return -1;
    for (int t = 0; t < p->threads; t++)
        p->q[t] = (qr_query *)tree; /* read only: see match/segsearch.h qr_qrun */
    return 0;
}

void qr_par_set_limits(qr_par_search *p, const atomic_int *cancel, int64_t deadline_ns)
{
    qr_qctx_set_stop(p->ctx, cancel, deadline_ns);
}

void qr_par_set_memory_limit(qr_par_search *p, size_t bytes) { p->ctx->limit = bytes; }

void qr_par_set_explain(qr_par_search *p)
{
    p->explain = 1;
    for (int t = 0; t < p->threads; t++) {
        qr_plan_free(&p->plan[t]); /* a fresh plan */
        p->qrun[t].plan = &p->plan[t];
    }
}

void qr_par_plan(const qr_par_search *p, qr_plan *out)
{
    for (int t = 0; p->explain && t < p->threads; t++)
        qr_plan_merge(out, &p->plan[t]);
}

int qr_par_set_ctx(qr_par_search *p, qr_qctx *ctx, qr_err *e)
{
    if (!ctx)
        ctx = &p->own_ctx;
    for (int t = 0; t < p->threads; t++) {
        qr_arena_set_ctx(&p->run[t], ctx);
        for (uint32_t i = 0; i < p->qrun[t].n; i++)
            if (qr_aut_set_ctx(p->qrun[t].aut[i], ctx) != 0)
                return qr_qctx_nomem(ctx, e);
        p->qrun[t].ctx = ctx;
    }
    p->ctx = ctx;
    return 0;
}

int64_t qr_par_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int qr_par_check(const qr_par_search *p, qr_err *e) { return qr_qctx_check(p->ctx, e); }

static int setup(qr_par_search *p, qr_pool *pool, const qr_tabdef *def, qr_segment **segs,
                 qr_segref **refs, uint32_t nsegs, int threads, qr_err *e)
{
    memset(p, 0, sizeof *p);
    p->def = def;
    p->pool = pool;
    if (threads < 1)
        threads = 1;
    if (threads > QR_MAX_SEARCH_THREADS)
        threads = QR_MAX_SEARCH_THREADS;
    if ((uint32_t)threads > nsegs)
        threads = nsegs ? (int)nsegs : 1;
    p->threads = threads;
    p->nsegs = nsegs;
    qr_qctx_init(&p->own_ctx, QR_QCTX_DEFAULT_LIMIT);
    p->ctx = &p->own_ctx;
    p->ss = calloc(nsegs ? nsegs : 1, sizeof *p->ss);
    if (!p->ss)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    for (uint32_t i = 0; i < nsegs; i++) {
        if (refs)
            qr_segsearch_init_ref(&p->ss[i], refs[i]);
        else
            qr_segsearch_init(&p->ss[i], segs[i]);
    }
    /* one tree shared by every thread: what evaluation compiles lives in
     * each thread's qrun[t] */
    for (int t = 0; t < threads; t++) {
        qr_arena_init(&p->qarena[t], 1 << 16, 0);
        qr_arena_init(&p->run[t], 1 << 20, 0);
        qr_arena_set_ctx(&p->run[t], p->ctx); /* the query's memory limit */
        qr_qrun_init(&p->qrun[t]);
        p->qrun[t].ctx = p->ctx;
    }
    return 0;
}

typedef struct task {
    qr_par_search *p;
    int t;
    atomic_uint *next;
    uint64_t count;
    int rc;
    qr_err err;
} task;

static void count_worker(void *arg, int slot)
{
    task *k = (task *)arg + slot;
    qr_par_search *p = k->p;
    for (;;) {
        uint32_t i = atomic_fetch_add(k->next, 1);
        if (i >= p->nsegs)
            break;
        uint64_t n;
        p->ss[i].run = &p->qrun[k->t];
        /* a join of words and phrases from the rows' shapes (a term or a
         * phrase alone is cheaper from its dictionary entry, or its shapes'
         * text: qr_segsearch_count) */
        const qr_query *q = p->q[k->t];
        int r = qr_par_check(p, &k->err) != 0 ? -1
                : q->type == Q_AND || q->type == Q_OR || q->type == Q_MINMATCH
                    ? qr_scorer_shapes_count(&p->ss[i], q, &p->run[k->t],
                                             qr_segsearch_plan(&p->ss[i]), &n, &k->err)
                    : 0;
        if (r < 0 ||
            (r == 0 && qr_segsearch_count(&p->ss[i], q, &p->run[k->t], &n, &k->err) != 0)) {
            k->rc = -1;
            atomic_store(k->next, p->nsegs); /* stop the others early */
            break;
        }
        k->count += n;
        qr_arena_reset(&p->run[k->t]);
    }
}

int qr_par_count(qr_par_search *p, uint64_t *count, qr_err *e)
{
    atomic_uint next = 0;
    task tasks[QR_MAX_SEARCH_THREADS];
    for (int t = 0; t < p->threads; t++)
        tasks[t] = (task){p, t, &next, 0, 0, {{0}, {0}}};
    qr_pool_run(p->pool, p->threads, count_worker, tasks); /* worker t = slot t */
    uint64_t total = 0;
    int rc = 0;
    for (int t = 0; t < p->threads; t++) {
        total += tasks[t].count;
        if (tasks[t].rc && !rc) {
            rc = -1;
            *e = tasks[t].err;
        }
    }
    *count = total;
    return rc;
}

void qr_par_free(qr_par_search *p)
{
    if (p->own_pool)
        qr_pool_free(p->pool);
    for (int t = 0; t < p->threads; t++) {
        qr_qrun_free(&p->qrun[t]);
        qr_plan_free(&p->plan[t]);
        qr_arena_free(&p->qarena[t]);
        qr_arena_free(&p->run[t]);
    }
    for (size_t i = 0; p->readers && i < (size_t)p->threads * (p->nsegs ? p->nsegs : 1) * p->def->ncols; i++) {
        qr_segref *ref = p->nsegs ? p->ss[i / p->def->ncols % p->nsegs].ref : NULL;
        if (ref) /* back to the cache entry's pool (rows.c took it there) */
            qr_segref_reader_done(ref, p->readers[i]);
        else
            qr_colr_close(p->readers[i]);
    }
    free(p->readers);
    free(p->readers_open);
    for (uint32_t i = 0; p->ss && i < p->nsegs; i++)
        qr_segsearch_close(&p->ss[i]);
    free(p->ss);
    memset(p, 0, sizeof *p);
}
