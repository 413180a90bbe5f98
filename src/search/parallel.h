/* parallel.h - counting a query over many segments with several threads:
 * one task per segment, handed out by an atomic counter, partial counts
 * added up. The query is parsed once and its tree shared by every worker
 * (q[t] all point at it: a tree is never written); what evaluation compiles
 * (automata, whose DFA caches grow lazily) is each worker's own qrun[t],
 * reused over the segments it searches; a segment is searched by one
 * thread at a time (its segsearch's run is set to the worker's).
 *
 * Threads: a search has `threads` workers, numbered 0..threads-1; worker t
 * owns qrun[t], run[t] and its column readers. Each count, top-k
 * or row read is one job of util/pool (worker = the job's slot; worker 0
 * is the calling thread), so no thread is created per query. The pool is
 * the caller's (qr_par_init_pool: shared by any number of searches, each
 * run by one thread at a time) or, with qr_par_init, a private one of
 * threads-1 threads started once by init and joined by qr_par_free. */
#ifndef QR_PARALLEL_H
#define QR_PARALLEL_H

#include <stdatomic.h>
#include <stdint.h>

#include "match/segsearch.h"
#include "util/pool.h"
#include "util/qctx.h"

#define QR_MAX_SEARCH_THREADS 16

typedef struct qr_par_search {
    const qr_tabdef *def; /* the table (not owned: outlives the search) */
    qr_segsearch *ss; /* one per segment, persistent (fields opened once) */
    uint32_t nsegs;
    int threads; /* workers per job (slots), <= nsegs and QR_MAX_SEARCH_THREADS */
    qr_pool *pool; /* runs the jobs; NULL = on the calling thread alone */
    int own_pool;  /* pool was started by qr_par_init, freed by qr_par_free */
    qr_query *q[QR_MAX_SEARCH_THREADS];
    qr_arena qarena[QR_MAX_SEARCH_THREADS]; /* qarena[0]: the one tree */
    qr_qrun qrun[QR_MAX_SEARCH_THREADS];    /* per thread: its compiled automata */
    qr_arena run[QR_MAX_SEARCH_THREADS];    /* iterators of one count, reset */
    qr_colreader **readers; /* threads x nsegs x def->ncols, opened on first
                             * use by qr_par_rows (random-access mode), kept */
    uint8_t *readers_open;  /* threads x nsegs: that set is open */
    qr_qctx *ctx;     /* the query's budget and stop conditions: own_ctx, or
                       * the caller's (qr_par_set_ctx) */
    qr_qctx own_ctx;  /* default: QR_QCTX_DEFAULT_LIMIT, no stop conditions */
    qr_plan plan[QR_MAX_SEARCH_THREADS]; /* per worker, once qr_par_set_explain */
    int explain;
} qr_par_search;

/* Prepare: parses `text` for table def once per worker. def and segs stay
 * owned by the caller and must outlive p. Starts a private pool of
 * threads-1 threads (none for one worker; if they cannot be started, every
 * job runs on the calling thread, as when a pthread_create failed before). */
int qr_par_init(qr_par_search *p, const qr_tabdef *def, qr_segment **segs, uint32_t nsegs,
                const char *text, size_t len, int threads, qr_err *e);
/* The same, running jobs on `pool` (not owned, may be NULL, outlives p;
 * other searches may use it at the same time). */
int qr_par_init_pool(qr_par_search *p, qr_pool *pool, const qr_tabdef *def, qr_segment **segs,
                     uint32_t nsegs, const char *text, size_t len, int threads, qr_err *e);
/* The same with a tree the caller built (query.h constructors, or
 * qr_query_parse_for): not owned, never written, must outlive p; every
 * worker shares it. */
int qr_par_init_tree(qr_par_search *p, qr_pool *pool, const qr_tabdef *def, qr_segment **segs,
                     uint32_t nsegs, const qr_query *tree, int threads, qr_err *e);
/* The same two over handles of a segment cache (index/segcache.h): the
 * search uses refs[i]'s segment and the fields its entry keeps open for
 * every query, so setting up opens nothing once the segments are cached
 * (a server's query: acquire the table's handles, init, run, qr_par_free,
 * release). The handles stay the caller's and must be held until
 * qr_par_free; segment index i is refs[i]. */
int qr_par_init_refs(qr_par_search *p, qr_pool *pool, const qr_tabdef *def, qr_segref **refs,
                     uint32_t nsegs, const char *text, size_t len, int threads, qr_err *e);
int qr_par_init_refs_tree(qr_par_search *p, qr_pool *pool, const qr_tabdef *def,
                          qr_segref **refs, uint32_t nsegs, const qr_query *tree, int threads,
                          qr_err *e);
/* Stop conditions of every later count, top-k and row read: `*cancel` set
 * non-zero by anyone (a client's cancel request), or the monotonic clock
 * past deadline_ns (qr_par_now_ns() + timeout; 0 = none). They are checked
 * between segments and inside the long loops of one (terms walked by an
 * automaton, column blocks scanned, windows of newest rows, rows read), so
 * a search stops within milliseconds, failing with QR_E_CANCELED (57014),
 * saying which. A stop is latched until the next qr_par_set_limits. */
void qr_par_set_limits(qr_par_search *p, const atomic_int *cancel, int64_t deadline_ns);
/* The memory limit of the search's own context (default 2 GiB): iterator
 * arenas, heaps, term sets and automata of all its workers together. Past
 * it the search fails with QR_E_NOMEM (53200) and frees what it took; the
 * next search works. */
void qr_par_set_memory_limit(qr_par_search *p, size_t bytes);
/* Run under the caller's context instead (a SQL statement's, shared by
 * every operator of it; NULL = back to the own one): what the search holds
 * moves to it. ctx outlives p. 0, or -1 (53200) when it does not fit. */
int qr_par_set_ctx(qr_par_search *p, qr_qctx *ctx, qr_err *e);
int64_t qr_par_now_ns(void);
/* 0, or -1 with e set (57014) when the search must stop. */
int qr_par_check(const qr_par_search *p, qr_err *e);
/* Record, from now on, what evaluation chooses for each node in each
 * segment (match/plan.h), in a fresh plan (each call starts one);
 * qr_par_plan sums it over the workers into `out`
 * (initialised by the caller, freed with qr_plan_free). */
void qr_par_set_explain(qr_par_search *p);
void qr_par_plan(const qr_par_search *p, qr_plan *out);
/* Count matches over every segment (0, or -1 with e set). */
int qr_par_count(qr_par_search *p, uint64_t *count, qr_err *e);
void qr_par_free(qr_par_search *p);

#endif
