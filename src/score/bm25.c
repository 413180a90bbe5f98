/* bm25.c - the BM25 model and index-wide query statistics (see bm25.h). */
#include "score/bm25.h"

#include <math.h>
#include <string.h>

#include "index/invfmt.h"
#include "index/norms.h"

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

/* df of one word summed over the segments. */
static int word_df(qr_segsearch *ss, uint32_t nsegs, uint16_t field, const char *t, size_t len,
                   uint64_t *df, qr_err *e)
{
    *df = 0;
    if (len > QR_MAX_TERM)
        return 0;
    for (uint32_t i = 0; i < nsegs; i++) {
        qr_invfield *f = qr_segsearch_field(&ss[i], field, e);
        if (!f)
            return -1;
        qr_terminfo ti;
        int r = qr_tdict_lookup(&f->dict, t, len, &ti, e);
        if (r < 0)
            return qr_err_prefix(e, "segment %s: %s index: ", ss[i].seg->path, f->def.name);
        if (r)
            *df += ti.df;
    }
    return 0;
}

static int leaves(qr_qweights *qw, qr_segsearch *ss, uint32_t nsegs, const qr_query *q,
                  uint32_t *at, qr_err *e)
{
    if (qr_bm25_is_leaf(q)) {
        double w = 0;
        uint64_t df;
        if (q->type == Q_TERM) {
            if (word_df(ss, nsegs, q->field, q->text, q->len, &df, e) != 0)
                return -1;
            w = qr_bm25_idf(&qw->m, df);
        } else {
            for (uint32_t i = 0; i < q->n; i++) {
                if (word_df(ss, nsegs, q->field, q->terms[i], q->term_lens[i], &df, e) != 0)
                    return -1;
                w += qr_bm25_idf(&qw->m, df);
            }
        }
        qw->w[(*at)++] = w;
    }
    if (q->type == Q_AND || q->type == Q_OR || q->type == Q_NOT || q->type == Q_MINMATCH)
        for (uint32_t i = 0; i < q->n; i++)
            if (leaves(qw, ss, nsegs, q->kids[i], at, e) != 0)
                return -1;
    return 0;
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

int qr_qweights_compute(qr_qweights *qw, qr_segsearch *ss, uint32_t nsegs, const qr_query *q,
                        qr_arena *a, qr_qctx *ctx, qr_err *e)
{
    uint64_t docs = 0, tokens = 0;
    uint16_t field = scored_field(q);
    for (uint32_t i = 0; field && i < nsegs; i++) {
        if (qr_qctx_check(ctx, e) != 0) /* opening a segment's field verifies it: not free */
            return -1;
        qr_invfield *f = qr_segsearch_field(&ss[i], field, e);
        if (!f)
            return -1;
        docs += f->docs_with_field;
        tokens += f->total_tokens;
    }
    qr_bm25_init(&qw->m, docs, tokens);
    qw->n = qr_bm25_count_leaves(q);
    qw->w = qr_arena_alloc(a, sizeof *qw->w * (qw->n ? qw->n : 1));
    if (!qw->w)
        return qr_errf(e, QR_E_NOMEM, "out of memory: the query needs more than its memory limit");
    uint32_t at = 0;
    if (leaves(qw, ss, nsegs, q, &at, e) != 0)
        return -1;
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
