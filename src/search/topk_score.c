/* topk_score.c - the k best rows by BM25: one task per segment on the
 * search's pool, a heap per worker, block-max scorers pruning against the
 * best threshold any worker has published; heaps merged at the end. */
#include "search/topk_int.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "score/bm25.h"
#include "score/scorer.h"

typedef struct shared {
    qr_par_search *p;
    const qr_qweights *qw;
    uint32_t k;
    int exhaustive;
    atomic_uint next;
    /* the best full-heap threshold of any thread: its worst hit's score
     * and segment (a pair, so under the lock; read once per segment and
     * when the heap changes) */
    pthread_mutex_t mu;
    double thr;
    uint32_t thr_seg;
} shared;

typedef struct task {
    shared *sh;
    int t, rc;
    heap h;
    qr_topk_stats st;
    qr_err err;
} task;

/* A full heap's worst hit, offered as everyone's threshold: k hits at
 * least this good (in the total order) exist. */
static void publish(shared *sh, const qr_hit *worst)
{
    pthread_mutex_lock(&sh->mu);
    if (worst->score > sh->thr || (worst->score == sh->thr && worst->seg < sh->thr_seg)) {
        sh->thr = worst->score;
        sh->thr_seg = worst->seg;
    }
    pthread_mutex_unlock(&sh->mu);
}

/* The minimum to push down while scoring segment si: docs scoring <= it
 * cannot make the result. Our own heap: a later doc with an equal score
 * loses the tie (this thread visits segments in increasing order). Another
 * thread's threshold: ties lose too when its worst hit lies in an earlier
 * segment (every row of si comes after it in the order); otherwise an
 * equal score might still win on order, so strictly below. */
static double competitive(task *k, uint32_t si)
{
    double m = -INFINITY;
    if (heap_full(&k->h))
        m = k->h.v[0].score;
    shared *sh = k->sh;
    pthread_mutex_lock(&sh->mu);
    double s = sh->thr;
    uint32_t s_seg = sh->thr_seg;
    pthread_mutex_unlock(&sh->mu);
    if (s != -INFINITY) {
        double t = s_seg < si ? s : nextafter(s, -INFINITY);
        m = t > m ? t : m;
    }
    return m;
}

/* The segment's rows by their shapes, when the query's score in a row is
 * its shape's (qr_scorer_shapes_rank) and the shapes above the threshold
 * hold enough rows that decoding their lists would cost more than reading
 * every row's shape number (templated logs: thousands of rows tie at the
 * best score, and block maxima, which bound word by word, skip none of
 * their blocks). Only the segment's own k best can make the result: every
 * row of the better shapes, then the first rows in order of the shapes
 * tying at the score where k is reached; the walk stops once it has them
 * (with rows deleted, it offers every live row of the shapes above the
 * threshold). 1 done, 0 not applicable (the scorer searches), -1 with
 * k->err set. */
static int rank_by_shapes(task *k, uint32_t si, double applied)
{
    shared *sh = k->sh;
    qr_par_search *p = sh->p;
    qr_segsearch *ss = &p->ss[si];
    qr_err *e = &k->err;
    if (!sh->k)
        return 0;
    /* with rows deleted the shapes' counts include them: every shape above
     * the threshold is walked, the deleted rows passed over, no early stop */
    int deleted = ss->seg->deleted != NULL;
    qr_arena *a = &p->run[k->t];
    qr_shape_rank rk;
    int r = qr_scorer_shapes_rank(ss, p->q[k->t], sh->qw, applied, a, &rk, e);
    if (r <= 0)
        return r;
    const uint32_t *count = rk.count;
    /* the shapes the segment's k best come from: [0, m) */
    uint64_t rows = 0, above = 0, at_last = 0, wanted = 0;
    uint32_t m = 0;
    for (; m < rk.n && rows < sh->k; m++)
        rows += count[rk.shape[m]];
    double last = m ? rk.score[m - 1] : 0;
    for (uint32_t i = 0; i < m; i++)
        above += rk.score[i] > last ? count[rk.shape[i]] : 0;
    for (; m < rk.n && (deleted || rk.score[m] == last); m++)
        ;
    for (uint32_t i = 0; i < m; i++)
        at_last += rk.score[i] == last ? count[rk.shape[i]] : 0;
    /* where the walk can stop: after every row above the last score (as
     * far as the last row, rows spread through the segment), or, when the
     * last score alone fills k, after k of its rows (their share of the
     * segment). It reads a number a row; the scorer decodes a posting a
     * row of each word's list, and more work for each */
    double stop = rk.f->rows;
    if (!deleted && !above && at_last > sh->k && 2.0 * sh->k / (double)at_last < 1)
        stop *= 2.0 * sh->k / (double)at_last;
    if (!rk.n || stop > 4.0 * (double)rk.lists)
        return 0;
    if (qr_invfield_load_shapes(rk.f, e) != 0)
        return -1;
    const qr_shapes *shp = qr_invfield_shapes(rk.f);
    if (!shp)
        return 0;
    /* shape -> 1 + its place in the ranking (m <= K < 65536) */
    uint16_t *place = qr_arena_alloc(a, sizeof *place * ((size_t)shp->k + 1));
    if (!place)
        return qr_errf(e, QR_E_NOMEM, "out of memory: the query needs more than its memory limit");
    memset(place, 0, sizeof *place * ((size_t)shp->k + 1));
    for (uint32_t i = 0; i < m; i++)
        if (rk.shape[i] <= shp->k)
            place[rk.shape[i]] = (uint16_t)(i + 1);
    wanted = sh->k - above; /* rows wanted at the last score (above < k) */
    uint64_t n = 0, got_above = 0, got_last = 0;
    for (uint32_t d = 0; d < shp->rows; d++) {
        uint32_t j = qr_shape_of(shp, d);
        if (j > shp->k)
            return qr_errf(e, QR_E_CORRUPT,
                           "segment %s: corrupt: %s index SHAPES: row %u has shape %u of %u",
                           ss->seg->path, rk.f->def.name, d, j, shp->k);
        if (!place[j] || (deleted && qr_seg_is_deleted(ss->seg, d)))
            continue;
        qr_hit h = {rk.score[place[j] - 1], 0, si, d};
        heap_offer(&k->h, &h);
        n++;
        if (deleted)
            continue;
        if (h.score > last)
            got_above++;
        else if (++got_last >= wanted && got_above == above)
            break;
    }
    if (heap_full(&k->h))
        publish(sh, &k->h.v[0]);
    qr_plan_way(qr_segsearch_plan(ss), p->q[k->t], "ranked by row shapes");
    k->st.segments++;
    k->st.docs_collected += n;
    return 1;
}

static int score_segment(task *k, uint32_t si)
{
    shared *sh = k->sh;
    qr_par_search *p = sh->p;
    qr_arena *a = &p->run[k->t];
    qr_arena_reset(a);
    p->ss[si].run = &p->qrun[k->t];
    double applied = sh->exhaustive ? -INFINITY : competitive(k, si);
    /* the best a row of the segment can score, from its row shapes:
     * exact where the query's words are a template's, so templated logs
     * pass most segments over before a list is read (and, before the heap
     * is full, those where no row can match: `service:ad AND connection`) */
    int lose = sh->exhaustive
                   ? 0
                   : qr_scorer_shapes_lose(&p->ss[si], p->q[k->t], sh->qw, applied, a, &k->err);
    if (lose < 0)
        return -1;
    if (lose) {
        qr_plan_way(qr_segsearch_plan(&p->ss[si]), p->q[k->t],
                    "passed over: no row shape beats the threshold");
        k->st.segments_skipped++;
        return 0;
    }
    int ranked = sh->exhaustive ? 0 : rank_by_shapes(k, si, applied);
    if (ranked)
        return ranked < 0 ? -1 : 0;
    qr_sc *sc = qr_scorer_build(&p->ss[si], p->q[k->t], sh->qw, applied, a, &k->err);
    if (!sc)
        return -1;
    if (applied != -INFINITY) {
        /* the segment's best possible score (its words' maximum impacts,
         * summed as scores add) cannot beat the threshold, or the scorer
         * found no row that can: none of its rows can enter, so it is not
         * read */
        if (sc->cost == 0 || sc->vt->max_score(sc, QR_SC_END, 0) <= applied) {
            k->st.segments_skipped++;
            return 0;
        }
        sc->vt->set_min(sc, applied);
    }
    k->st.segments++;
    uint64_t n = 0;
    const qr_segment *seg = p->ss[si].seg;
    for (uint32_t d = qr_sc_next(sc); d != QR_NO_DOC; d = qr_sc_next(sc)) {
        if (qr_seg_is_deleted(seg, d)) /* removed by a DELETE: never a hit */
            continue;
        qr_hit h = {qr_sc_score(sc), 0, si, d};
        n++;
        if (!heap_offer(&k->h, &h) && (n & 1023))
            continue;
        if (sh->exhaustive || !heap_full(&k->h))
            continue;
        publish(sh, &k->h.v[0]);
        double m = competitive(k, si);
        if (m > applied) {
            sc->vt->set_min(sc, m);
            applied = m;
        }
    }
    k->st.docs_collected += n;
    qr_sc_stats st = {0, 0};
    sc->vt->stats(sc, &st);
    k->st.blocks_total += st.blocks_total;
    k->st.blocks_decoded += st.blocks_decoded;
    if (sc->vt->failed(sc))
        return qr_errf(&k->err, QR_E_CORRUPT, "segment %s: corrupt postings met during the search",
                       p->ss[si].seg->path);
    return 0;
}

static void score_worker(void *arg, int slot)
{
    task *k = (task *)arg + slot;
    shared *sh = k->sh;
    for (;;) {
        uint32_t i = atomic_fetch_add(&sh->next, 1);
        if (i >= sh->p->nsegs)
            break;
        if (qr_par_check(sh->p, &k->err) != 0 || score_segment(k, i) != 0) {
            k->rc = -1;
            atomic_store(&sh->next, sh->p->nsegs); /* stop the others early */
            break;
        }
    }
    qr_arena_reset(&sh->p->run[k->t]);
}

int tk_by_score(qr_par_search *p, uint32_t k, int exhaustive, qr_hit *out, uint32_t *nout,
                    qr_topk_stats *st, qr_err *e)
{
    qr_qweights qw;
    qr_arena wa;
    qr_arena_init(&wa, 4096, 0);
    int rc =
        qr_qweights_compute(&qw, p->ss, p->nsegs, p->q[0], &wa, p->ctx, p->pool, p->threads, e);
    shared sh = {.p = p, .qw = &qw, .k = k, .exhaustive = exhaustive};
    atomic_init(&sh.next, 0);
    sh.thr = -INFINITY;
    sh.thr_seg = UINT32_MAX;
    pthread_mutex_init(&sh.mu, NULL);
    task tasks[QR_MAX_SEARCH_THREADS];
    int nt = rc == 0 ? p->threads : 0;
    for (int t = 0; t < nt; t++) {
        tasks[t] = (task){.sh = &sh, .t = t,
                          .h = {QR_BY_SCORE, qr_qmalloc(p->ctx, sizeof(qr_hit) * (k ? k : 1)), 0, k}};
        if (!tasks[t].h.v) {
            rc = qr_qctx_nomem(p->ctx, e);
            nt = t + 1;
            break;
        }
    }
    if (rc == 0)
        qr_pool_run(p->pool, nt, score_worker, tasks); /* worker t = slot t */
    heap all = {QR_BY_SCORE, out, 0, k};
    for (int t = 0; t < nt; t++) {
        if (tasks[t].rc && rc == 0) {
            rc = -1;
            *e = tasks[t].err;
        }
        for (uint32_t i = 0; i < tasks[t].h.n; i++)
            heap_offer(&all, &tasks[t].h.v[i]);
        if (st) {
            st->segments += tasks[t].st.segments;
            st->blocks_total += tasks[t].st.blocks_total;
            st->blocks_decoded += tasks[t].st.blocks_decoded;
            st->docs_collected += tasks[t].st.docs_collected;
            st->segments_skipped += tasks[t].st.segments_skipped;
        }
        qr_qfree(p->ctx, tasks[t].h.v);
    }
    pthread_mutex_destroy(&sh.mu);
    qr_arena_free(&wa);
    if (rc != 0)
        return -1;
    sort_hits(QR_BY_SCORE, out, all.n);
    *nout = all.n;
    return 0;
}
