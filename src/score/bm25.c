/* bm25.c - the BM25 model and index-wide query statistics (see bm25.h). */
#include "score/bm25.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "index/invfmt.h"
#include "index/invindex.h"
#include "index/norms.h"
#include "index/shapes.h"
#include "index/shapewords.h"

void qr_bm25_init(qr_bm25 *m, uint64_t docs, uint64_t tokens)
{
    memset(m, 0, sizeof *m);
    m->docs = docs;
    m->tokens = tokens;
    m->avgdl = docs && tokens ? (double)tokens / (double)docs : 1.0;
    for (int i = 0; i < 256; i++)
        m->K[i] = QR_BM25_K1 * ((1.0 - QR_BM25_B) +
                                QR_BM25_B * (double)qr_norm_decode((uint8_t)i) / m->avgdl);
}

double qr_bm25_idf(const qr_bm25 *m, uint64_t df)
{
    double n = (double)m->docs, d = (double)df;
    return log(1.0 + (n - d + 0.5) / (d + 0.5));
}

int qr_bm25_is_leaf(const qr_query *q)
{
    return (q->type == Q_TERM || q->type == Q_PHRASE) && q->scored;
}

uint32_t qr_bm25_count_leaves(const qr_query *q)
{
    uint32_t n = qr_bm25_is_leaf(q);
    if (q->type == Q_AND || q->type == Q_OR || q->type == Q_NOT || q->type == Q_MINMATCH)
        for (uint32_t i = 0; i < q->n; i++)
            n += qr_bm25_count_leaves(q->kids[i]);
    return n;
}

/* The scored index of a tree (its scored nodes all name the table's
 * default full-text index), or 0 when nothing is scored. */
static uint16_t scored_field(const qr_query *q)
{
    if (q->scored)
        return q->field;
    if (q->type == Q_AND || q->type == Q_OR || q->type == Q_NOT || q->type == Q_MINMATCH)
        for (uint32_t i = 0; i < q->n; i++) {
            uint16_t f = scored_field(q->kids[i]);
            if (f)
                return f;
        }
    return 0;
}

/* The scored words of a tree in leaf order (a phrase's words one by one):
 * their field, bytes and length; n counts them (arrays NULL: count only). */
typedef struct {
    uint16_t *field;
    const char **t;
    size_t *len;
    uint32_t n;
} words;

static void collect(const qr_query *q, words *w)
{
    if (qr_bm25_is_leaf(q)) {
        uint32_t n = q->type == Q_TERM ? 1 : q->n;
        for (uint32_t i = 0; i < n; i++, w->n++)
            if (w->t) {
                w->field[w->n] = q->field;
                w->t[w->n] = q->type == Q_TERM ? q->text : q->terms[i];
                w->len[w->n] = q->type == Q_TERM ? q->len : q->term_lens[i];
            }
    }
    if (q->type == Q_AND || q->type == Q_OR || q->type == Q_NOT || q->type == Q_MINMATCH)
        for (uint32_t i = 0; i < q->n; i++)
            collect(q->kids[i], w);
}

/* The statistics of segments taken one at a time by the workers of a pool
 * job: opening a segment's index and looking its words up verifies what
 * they read, most of a first query's work on a table of many segments,
 * so it is shared out rather than done on the calling thread alone. */
typedef struct {
    qr_segsearch *ss;
    uint32_t nsegs;
    uint16_t field; /* the scored index: rows and tokens */
    const words *w;
    qr_qctx *ctx;
    atomic_uint next;
} stat_job;
typedef struct {
    stat_job *j;
    uint64_t docs, tokens, *df;
    int rc;
    qr_err err;
} stat_slot;

/* A non-variable word's document frequency in f from the row shapes
 * (index/shapes.h): the rows of the shapes holding it, as many as hold the
 * word (the shapes' counts include deleted rows, as the dictionary's df
 * does). Its dictionary entry need not be looked up -- a top-k reads the
 * shapes' words for its bounds anyway, and a first query would read each
 * word's dictionary block in every segment. 1 with *df, 0 when the field
 * has no shapes (or QUARRY_NO_SHAPES), -1 with e set. */
static int df_by_shapes(qr_invfield *f, const char *t, size_t n, uint64_t *df, qr_err *e)
{
    const char *off = getenv("QUARRY_NO_SHAPES");
    if (!f->def.positions || (off && *off && strcmp(off, "0") != 0) || qr_shape_variable(t, n))
        return 0;
    if (qr_invfield_load_shape_words(f, e) != 0 || qr_invfield_load_shape_rows(f, e) != 0)
        return -1;
    const qr_shape_words *sw = qr_invfield_shape_words(f);
    const uint32_t *rows = qr_invfield_shape_rows(f);
    if (!sw || !rows)
        return 0;
    uint32_t cnt;
    const qr_shape_occ *o = qr_shape_words_find(sw, t, n, &cnt);
    *df = 0;
    for (uint32_t i = 0; o && i < cnt; i++)
        *df += rows[o[i].shape];
    return 1;
}

static int segment_stats(stat_slot *sl, qr_segsearch *ss)
{
    const words *w = sl->j->w;
    qr_invfield *f = qr_segsearch_field(ss, sl->j->field, &sl->err);
    if (!f)
        return -1;
    sl->docs += f->docs_with_field;
    sl->tokens += f->total_tokens;
    for (uint32_t i = 0; i < w->n; i++) {
        if (w->len[i] > QR_MAX_TERM)
            continue;
        if (!(f = qr_segsearch_field(ss, w->field[i], &sl->err)))
            return -1;
        uint64_t df;
        int r = df_by_shapes(f, w->t[i], w->len[i], &df, &sl->err);
        if (r < 0)
            return -1;
        if (r) {
            sl->df[i] += df;
            continue;
        }
        qr_terminfo ti;
        r = qr_tdict_lookup(&f->dict, w->t[i], w->len[i], &ti, &sl->err);
        if (r < 0)
            return qr_err_prefix(&sl->err, "segment %s: %s index: ", ss->seg->path, f->def.name);
        if (r)
            sl->df[i] += ti.df;
    }
    return 0;
}

static void stat_worker(void *arg, int slot)
{
    stat_slot *sl = (stat_slot *)arg + slot;
    stat_job *j = sl->j;
    for (;;) {
        uint32_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->nsegs)
            break;
        /* opening a segment's field verifies it: not free */
        if (qr_qctx_check(j->ctx, &sl->err) != 0 || segment_stats(sl, &j->ss[i]) != 0) {
            sl->rc = -1;
            atomic_store(&j->next, j->nsegs); /* stop the others early */
            break;
        }
    }
}

/* Each leaf's weight from its words' dfs (in collect's order). */
static void weigh(qr_qweights *qw, const qr_query *q, const uint64_t *df, uint32_t *word,
                  uint32_t *at)
{
    if (qr_bm25_is_leaf(q)) {
        double w = 0;
        uint32_t n = q->type == Q_TERM ? 1 : q->n;
        for (uint32_t i = 0; i < n; i++)
            w += qr_bm25_idf(&qw->m, df[(*word)++]);
        qw->w[(*at)++] = w;
    }
    if (q->type == Q_AND || q->type == Q_OR || q->type == Q_NOT || q->type == Q_MINMATCH)
        for (uint32_t i = 0; i < q->n; i++)
            weigh(qw, q->kids[i], df, word, at);
}

int qr_qweights_compute(qr_qweights *qw, qr_segsearch *ss, uint32_t nsegs, const qr_query *q,
                        qr_arena *a, qr_qctx *ctx, qr_pool *pool, int threads, qr_err *e)
{
    words w = {0};
    collect(q, &w);
    uint32_t nw = w.n;
    w.n = 0;
    w.field = qr_arena_alloc(a, sizeof *w.field * (nw + 1));
    w.t = qr_arena_alloc(a, sizeof *w.t * (nw + 1));
    w.len = qr_arena_alloc(a, sizeof *w.len * (nw + 1));
    uint64_t *df = qr_arena_alloc(a, sizeof *df * (nw + 1));
    if (threads < 1 || !pool)
        threads = 1;
    if ((uint32_t)threads > nsegs)
        threads = nsegs ? (int)nsegs : 1;
    stat_slot *sl = qr_arena_alloc(a, sizeof *sl * (size_t)threads);
    for (int t = 0; sl && t < threads; t++)
        if (!(sl[t].df = qr_arena_alloc(a, sizeof *df * (nw + 1))))
            df = NULL;
    if (!sl)
        df = NULL;
    if (!w.field || !w.t || !w.len || !df)
        return qr_errf(e, QR_E_NOMEM, "out of memory: the query needs more than its memory limit");
    collect(q, &w);
    uint16_t field = scored_field(q);
    stat_job j = {ss, field ? nsegs : 0, field, &w, ctx, 0};
    for (int t = 0; t < threads; t++) {
        sl[t].j = &j;
        sl[t].docs = sl[t].tokens = 0;
        memset(sl[t].df, 0, sizeof *df * (nw + 1));
        sl[t].rc = 0;
        qr_err_clear(&sl[t].err);
    }
    if (j.nsegs)
        qr_pool_run(pool, threads, stat_worker, sl); /* worker t = slot t */
    uint64_t docs = 0, tokens = 0;
    memset(df, 0, sizeof *df * (nw + 1));
    for (int t = 0; t < threads; t++) {
        if (sl[t].rc) {
            *e = sl[t].err;
            return -1;
        }
        docs += sl[t].docs;
        tokens += sl[t].tokens;
        for (uint32_t i = 0; i < nw; i++)
            df[i] += sl[t].df[i];
    }
    qr_bm25_init(&qw->m, docs, tokens);
    qw->n = qr_bm25_count_leaves(q);
    qw->w = qr_arena_alloc(a, sizeof *qw->w * (qw->n ? qw->n : 1));
    if (!qw->w)
        return qr_errf(e, QR_E_NOMEM, "out of memory: the query needs more than its memory limit");
    uint32_t word = 0, at = 0;
    weigh(qw, q, df, &word, &at);
    qw->tab = qr_arena_alloc(a, sizeof *qw->tab * QR_BM25_TAB * (qw->n ? qw->n : 1));
    if (!qw->tab)
        return qr_errf(e, QR_E_NOMEM, "out of memory: the query needs more than its memory limit");
    for (uint32_t i = 0; i < qw->n; i++)
        for (unsigned tf = 1; tf <= QR_BM25_TAB_TF; tf++)
            for (unsigned nc = 0; nc < 256; nc++)
                qw->tab[(size_t)i * QR_BM25_TAB + (tf - 1) * 256 + nc] =
                    qr_bm25_score(&qw->m, qw->w[i], tf, (uint8_t)nc);
    return 0;
}
