/* shapebound.c - whether any row of a segment can beat a top-k threshold,
 * answered from the segment's row shapes (index/shapes.h) before a posting
 * is read.
 *
 * Rows of one shape hold every non-variable word the same number of times
 * and have the same length, so a query whose scored words are all such
 * words gives every row of a shape the same score -- computed here from
 * the shape, by the expression and in the order the scorers add
 * (scorer.h), so it is the rows' score bit for bit. The best of those over
 * the shapes holding a scored word (and shape 0, which holds none: the rows
 * no word matches) bounds the segment exactly, where the words' maximum
 * impacts bound it only word by word: in templated logs, once the heap
 * holds the best-scoring rows of the first segments, nearly every later
 * segment is passed over without decoding a list (at 100M rows, the four
 * lists of `connection OR request OR conversion OR post` were read in
 * each of 523 segments only to find no row holding two of the words).
 *
 * Filters may or may not hold in a shape's rows, so they count as
 * matching (their score is 0), except a keyword value whose index records
 * the shapes of its rows (index/valshapes.h): it holds only in those, so
 * `service:payment AND failed` is bounded by the payment rows' shapes
 * alone, where the shorter rows of other services beat the threshold.
 * A phrase of such words (gaps, proximity) has the same frequency in every
 * row of a shape, computed from the shape's text as the phrase iterator
 * computes it (qr_phrase_shape_freq), in the shapes holding all its words
 * and only where a bound from the words' counts there beats the
 * threshold. The same program ranks the shapes of a segment that is not
 * passed over, when no filter makes a shape's rows differ: a top-k then
 * walks the rows' shape numbers (search/topk_score.c).
 * Not applicable (no bound): a multi-term clause, a
 * variable word (a shape masks it), a phrase in a shape of more tokens
 * than a phrase walk reads, or a segment without shapes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index/invindex.h"
#include "index/shapes.h"
#include "index/shapewords.h"
#include "index/termdict.h"
#include "score/scorer_int.h"

#define MAX_LEAVES 16u
#define MAX_OPS    256u

/* The query as a postfix program, so that scoring a shape is a loop, not
 * a walk of the tree: a scored word, a filter (0: may hold), or the
 * sum of the last n values in written order when `need` of them match. */
typedef struct op {
    uint8_t kind; /* OP_* */
    uint8_t leaf;
    uint16_t n, need;
    const qr_query *q;        /* its node (OP_VALUE: the keyword term) */
    const unsigned char *set; /* OP_VALUE: its shapes (valshapes.h), NULL: may hold */
} op;
/* a scored word; a filter that may hold; a keyword value, in the shapes
 * of its rows; one that no row holds; a join of the last n */
enum { OP_WORD, OP_FILTER, OP_VALUE, OP_NONE, OP_JOIN, OP_NOT };

typedef struct leaf {
    const qr_shape_occ *occ; /* the shapes holding the word, in number order */
    uint32_t n, at;          /* at: the cursor of the walk over the shapes */
    uint32_t cur;            /* the entry of occ for the shape scored, or n */
    const qr_query *phrase;  /* a phrase: its frequency per entry of occ, */
    double *freq;            /* at most (exact[i] 0) or exactly (1) */
    uint8_t *exact;
    double tf;               /* in the shape being scored (0: none) */
    double w;
} leaf;

typedef struct bound {
    qr_segsearch *ss;
    qr_arena *a; /* phrases' shapes and frequencies (the query's memory limit) */
    const qr_qweights *qw;
    qr_invfield *f; /* the scored words' field */
    const qr_shape_words *sw;
    leaf leaves[MAX_LEAVES];
    uint32_t nleaves; /* scored words (leaves[]) */
    uint32_t inexact; /* phrase leaves whose frequencies are bounds */
    op ops[MAX_OPS];
    uint32_t nops;
    double stack[MAX_OPS]; /* score_in's values */
    /* a count's plan: the rows each op holds in (tally[i] += weight, the
     * rows of the shape scored, where op i's value is not -INFINITY) */
    uint64_t *tally, weight;
    /* the shapes' text, read only when a phrase's frequency must be exact */
    qr_phrase_shapes text;
    const unsigned char **tok;
    uint32_t *len;
} bound;

/* A phrase leaf's shapes: those holding every word of it (their lists
 * merged), each with a bound on the phrase's frequency there -- an exact
 * phrase occurs at most as often as each of its words, one within reach
 * at most once per occurrence of its first word -- made exact from the
 * shape's text (exact_freq) only where the bound could beat the
 * threshold: in templated logs most shapes never are, and the text is
 * not read nor verified. 1 ready, -1 with e set. */
static int phrase_occ(bound *b, const qr_query *q, leaf *l, qr_err *e)
{
    qr_shape_occ *occ;
    l->phrase = q;
    if (qr_shape_words_all(b->sw, (const char *const *)q->terms, q->term_lens, q->n, q->within != 0,
                           b->a, &occ, &l->n) != 0 ||
        (l->n && (!(l->freq = qr_arena_alloc(b->a, sizeof *l->freq * l->n)) ||
                  !(l->exact = qr_arena_alloc(b->a, l->n)))))
        return qr_errf(e, QR_E_NOMEM, "out of memory: the query needs more than its memory limit");
    for (uint32_t i = 0; i < l->n; i++) {
        l->freq[i] = occ[i].tf; /* (none: a word no shape holds, in no row) */
        l->exact[i] = 0;
    }
    l->occ = occ;
    b->inexact += l->n > 0;
    return 1;
}
_Static_assert(QR_PHRASE_MAX_WORDS <= QR_SHAPE_WORDS_ALL_MAX, "a phrase's words are merged whole");

/* The exact frequency of phrase leaf l in the shape of its entry i, from
 * the shape's text (qr_phrase_shape_freq): 1 done, 0 the shapes cannot
 * say (a shape too long), -1 with e set. */
static int exact_freq(bound *b, leaf *l, uint32_t i, qr_err *e)
{
    if (l->exact[i])
        return 1;
    if (!b->text.sh) {
        if (qr_invfield_load_shape_text(b->f, e) != 0)
            return -1;
        if (!(b->text.sh = qr_invfield_shape_text(b->f)))
            return 0;
        if (!(b->text.st = qr_invfield_shape_stats(b->f, e)))
            return -1;
        b->tok = qr_arena_alloc(b->a, sizeof *b->tok * QR_PHRASE_MAX_POS);
        b->len = qr_arena_alloc(b->a, sizeof *b->len * QR_PHRASE_MAX_POS);
        if (!b->tok || !b->len)
            return qr_errf(e, QR_E_NOMEM,
                           "out of memory: the query needs more than its memory limit");
    }
    const qr_query *q = l->phrase;
    qr_phrase_shapes ps = {b->text.sh, b->text.st, (const char *const *)q->terms, q->term_lens};
    double f;
    if (qr_phrase_shape_freq(&ps, q->offs, q->n, q->within, l->occ[i].shape, b->tok, b->len, &f) !=
        0)
        return 0;
    l->freq[i] = f;
    l->exact[i] = 1;
    return 1;
}

/* Check q, find its words' shapes (leaves numbered as scorer.c numbers
 * them: *num) and append its program. 1 ready, 0 not applicable, -1 with
 * e set. */
static int prepare(bound *b, const qr_query *q, uint32_t *num, qr_err *e)
{
    if (b->nops == MAX_OPS)
        return 0;
    int kind = sc_kind_of(q);
    /* a value of an index, resolved below (field 0: a column without
     * one, scanned: may hold) */
    /* counting (no weights): NOT of what the shapes decide is decided too */
    if (!b->qw && q->type == Q_NOT && q->n == 1) {
        int r = prepare(b, q->kids[0], num, e);
        if (r <= 0 || b->nops == MAX_OPS)
            return r < 0 ? -1 : 0;
        b->ops[b->nops++] = (op){.kind = OP_NOT, .q = q};
        return 1;
    }
    if (kind == SC_FILTER && q->type == Q_TERM && q->field) {
        *num += qr_bm25_count_leaves(q);
        b->ops[b->nops++] = (op){.kind = OP_VALUE, .q = q};
        return 1;
    }
    if (kind == SC_FILTER && q->type != Q_AND && q->type != Q_OR && q->type != Q_MINMATCH) {
        *num += qr_bm25_count_leaves(q);
        b->ops[b->nops++] = (op){.kind = OP_FILTER};
        return 1;
    }
    if (kind == SC_CONST)
        return 0;
    if (!qr_bm25_is_leaf(q)) { /* (filters of filters too: their sums are 0) */
        if (q->n > UINT16_MAX)
            return 0;
        for (uint32_t i = 0; i < q->n; i++) {
            int r = prepare(b, q->kids[i], num, e);
            if (r <= 0)
                return r;
        }
        uint32_t need = q->type == Q_AND ? q->n : q->type == Q_MINMATCH ? q->k : 1;
        if (b->nops == MAX_OPS || need > q->n)
            return 0; /* (at-least-k past its clauses matches nothing: scorer.c) */
        b->ops[b->nops++] =
            (op){.kind = OP_JOIN, .n = (uint16_t)q->n, .need = (uint16_t)need, .q = q};
        return 1;
    }
    if (b->nleaves == MAX_LEAVES || (b->qw && *num >= b->qw->n))
        return 0;
    if (q->type == Q_PHRASE) { /* of words none of them variable */
        if (q->n > QR_PHRASE_MAX_WORDS)
            return 0;
        for (uint32_t i = 0; i < q->n; i++)
            if (q->term_lens[i] > QR_MAX_TERM || qr_shape_variable(q->terms[i], q->term_lens[i]))
                return 0;
    } else if (q->type != Q_TERM || qr_shape_variable(q->text, q->len)) {
        return 0;
    }
    qr_invfield *f = qr_segsearch_field(b->ss, q->field, e);
    if (!f)
        return -1;
    if (b->f && f != b->f)
        return 0;
    if (!b->f) {
        if (qr_invfield_load_shape_words(f, e) != 0)
            return -1;
        if (!(b->sw = qr_invfield_shape_words(f)))
            return 0;
        b->f = f;
    }
    leaf *l = &b->leaves[b->nleaves];
    memset(l, 0, sizeof *l);
    l->w = b->qw ? b->qw->w[*num] : 0; /* (no weights: a count) */
    (*num)++;
    if (q->type == Q_PHRASE) {
        int r = phrase_occ(b, q, l, e);
        if (r <= 0)
            return r;
    } else {
        l->occ = q->len <= QR_MAX_TERM ? qr_shape_words_find(b->sw, q->text, q->len, &l->n) : NULL;
    }
    if (!l->occ)
        l->n = 0;
    b->ops[b->nops++] = (op){.kind = OP_WORD, .leaf = (uint8_t)b->nleaves++, .q = q};
    return 1;
}

/* The score of the query in the rows of shape s (each leaf's tf set),
 * summed as the scorers add; -INFINITY when it cannot match them. s = 0
 * stands for every shape holding no scored word (all tf 0): a keyword
 * value may hold in some of them. */
static double score_in(bound *b, uint32_t s)
{
    double *v = b->stack;
    uint32_t top = 0;
    for (uint32_t i = 0; i < b->nops; i++) {
        const op *o = &b->ops[i];
        if (o->kind == OP_WORD) {
            const leaf *l = &b->leaves[o->leaf];
            v[top++] = !l->tf  ? -INFINITY
                       : b->qw ? qr_bm25_score(&b->qw->m, l->w, l->tf, b->sw->norm[s])
                               : 0;
        } else if (o->kind == OP_FILTER || (o->kind == OP_VALUE && (!o->set || !s))) {
            v[top++] = 0;
        } else if (o->kind == OP_VALUE) {
            v[top++] = qr_valshapes_has(o->set, s) ? 0 : -INFINITY;
        } else if (o->kind == OP_NONE) {
            v[top++] = -INFINITY;
        } else if (o->kind == OP_NOT) {
            v[top - 1] = v[top - 1] == -INFINITY ? 0 : -INFINITY;
        } else {
            uint32_t hit = 0;
            double sum = 0;
            top -= o->n;
            for (uint32_t j = 0; j < o->n; j++)
                if (v[top + j] != -INFINITY) {
                    sum += v[top + j];
                    hit++;
                }
            v[top++] = hit >= o->need ? sum : -INFINITY;
        }
        if (b->tally && top && v[top - 1] != -INFINITY)
            b->tally[i] += b->weight;
    }
    return top ? v[0] : -INFINITY;
}

/* Each keyword value of the program: the shapes of its rows, when its
 * field records them for the scored field's shapes (else it may hold in
 * any). 0, or -1 with e set (corrupt block). */
static int resolve_values(bound *b, qr_err *e)
{
    for (uint32_t i = 0; i < b->nops; i++) {
        op *o = &b->ops[i];
        if (o->kind != OP_VALUE)
            continue;
        qr_invfield *f = qr_segsearch_field(b->ss, o->q->field, e);
        if (!f)
            return -1;
        if (f->def.kind != QR_IX_KEYWORD)
            continue;
        int bad;
        const qr_valshapes *vs = qr_invfield_valshapes(f, &bad, e);
        if (bad)
            return -1;
        if (!vs || vs->sec != b->f->def.sec || vs->k != b->sw->k)
            continue;
        if (!(o->set = qr_valshapes_find(vs, o->q->text, o->q->len)))
            o->kind = OP_NONE;
    }
    return 0;
}

/* The program of q over segment ss's shapes: 1 ready (b->f set), 0 not
 * applicable, -1 with e set. */
static int setup(bound *b, qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, qr_arena *a,
                 qr_err *e)
{
    const char *off = getenv("QUARRY_NO_SHAPES");
    if (off && *off && strcmp(off, "0") != 0)
        return 0;
    memset(b, 0, sizeof *b);
    b->ss = ss, b->a = a, b->qw = qw;
    uint32_t num = 0;
    int r = prepare(b, q, &num, e);
    if (r > 0 && !b->f) /* (no scored word: the shapes cannot say) */
        r = 0;
    if (r > 0 && resolve_values(b, e) != 0)
        r = -1;
    return r;
}

/* Step the walk over the shapes holding a scored word, in number order (a
 * merge of the words' lists), after shape 0 (none: the rows no word
 * matches): set each leaf's tf in shape s; the next shape, or UINT32_MAX
 * after the last. */
static uint32_t step(bound *b, uint32_t s)
{
    uint32_t next = UINT32_MAX;
    for (uint32_t i = 0; i < b->nleaves; i++) {
        leaf *l = &b->leaves[i];
        l->tf = 0;
        l->cur = l->n;
        if (l->at < l->n && l->occ[l->at].shape == s) {
            l->tf = l->freq ? l->freq[l->at] : l->occ[l->at].tf;
            l->cur = l->at++;
        }
        if (l->at < l->n && l->occ[l->at].shape < next)
            next = l->occ[l->at].shape;
    }
    return next;
}

/* The score of the rows of shape s (after step), exact: phrase leaves'
 * bounds made exact first when the bound beats min (below it, the exact
 * score, which is no higher, does too). 1 with *v, 0 the shapes cannot
 * say, -1 with e set. */
static int shape_score(bound *b, uint32_t s, double min, double *v, qr_err *e)
{
    *v = score_in(b, s);
    if (*v <= min || !b->inexact)
        return 1;
    int again = 0;
    for (uint32_t i = 0; i < b->nleaves; i++) {
        leaf *l = &b->leaves[i];
        if (!l->phrase || l->cur == l->n || l->exact[l->cur])
            continue;
        int r = exact_freq(b, l, l->cur, e);
        if (r <= 0)
            return r;
        l->tf = l->freq[l->cur];
        again = 1;
    }
    if (again)
        *v = score_in(b, s);
    return 1;
}

int qr_scorer_shapes_lose(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, double min,
                          qr_arena *a, qr_err *e)
{
    bound b;
    int r = setup(&b, ss, q, qw, a, e); /* (min -INFINITY: can any shape match?) */
    for (uint32_t s = 0; r > 0;) {
        uint32_t next = step(&b, s);
        double v;
        if ((r = shape_score(&b, s, min, &v, e)) <= 0)
            break;
        if (v > min)
            r = 0;
        else if (next == UINT32_MAX)
            break;
        s = next;
    }
    return r;
}

static int by_rank(const void *x, const void *y, void *ctx)
{
    const double *sc = ctx;
    const uint32_t *i = x, *j = y;
    if (sc[*i] != sc[*j])
        return sc[*i] > sc[*j] ? -1 : 1;
    return *i < *j ? -1 : *i > *j;
}

/* Is q made of scored words and phrases alone, joined by AND, OR and
 * at-least-k (and NOT, when nots)? What the shapes decide exactly, found
 * before any block is read: a filter's index (a keyword's VALSHAPES) is
 * not opened for nothing. */
static int words_only(const qr_query *q, int nots)
{
    if (qr_bm25_is_leaf(q))
        return 1;
    if (q->type != Q_AND && q->type != Q_OR && q->type != Q_MINMATCH && !(nots && q->type == Q_NOT))
        return 0;
    for (uint32_t i = 0; i < q->n; i++)
        if (!words_only(q->kids[i], nots))
            return 0;
    return 1;
}

int qr_scorer_shapes_rank(qr_segsearch *ss, const qr_query *q, const qr_qweights *qw, double min,
                          qr_arena *a, qr_shape_rank *out, qr_err *e)
{
    memset(out, 0, sizeof *out);
    if (!words_only(q, 0))
        return 0;
    bound b;
    int r = setup(&b, ss, q, qw, a, e);
    /* exact only when nothing but scored words decides: a filter or a
     * keyword value may hold in some of a shape's rows and not others */
    for (uint32_t i = 0; r > 0 && i < b.nops; i++)
        if (b.ops[i].kind != OP_WORD && b.ops[i].kind != OP_JOIN)
            r = 0;
    if (r <= 0)
        return r;
    if (qr_invfield_load_shape_rows(b.f, e) != 0)
        return -1;
    const uint32_t *count = qr_invfield_shape_rows(b.f);
    if (!count)
        return 0;
    uint32_t k = b.sw->k;
    /* the rows of the scored words' lists: each word's rows are those of
     * the shapes holding it (a phrase's words all read) */
    uint64_t lists = 0;
    for (uint32_t i = 0; i < b.nleaves; i++) {
        const leaf *l = &b.leaves[i];
        const qr_query *p = l->phrase;
        for (uint32_t w = 0; w < (p ? p->n : 1); w++) {
            uint32_t no = l->n;
            const qr_shape_occ *o =
                p ? qr_shape_words_find(b.sw, p->terms[w], p->term_lens[w], &no) : l->occ;
            for (uint32_t j = 0; o && j < no; j++)
                lists += o[j].shape <= k ? count[o[j].shape] : 0;
        }
    }
    double *score = qr_arena_alloc(a, sizeof *score * ((size_t)k + 1));
    uint32_t *shape = qr_arena_alloc(a, sizeof *shape * ((size_t)k + 1));
    if (!score || !shape)
        return qr_errf(e, QR_E_NOMEM, "out of memory: the query needs more than its memory limit");
    uint32_t n = 0;
    for (uint32_t s = 0;;) {
        uint32_t next = step(&b, s);
        double v;
        if ((r = shape_score(&b, s, min, &v, e)) <= 0)
            return r;
        if (s && s <= k && v > min) /* (shape 0: rows without a scored word) */
            score[s] = v, shape[n++] = s;
        if (next == UINT32_MAX)
            break;
        s = next;
    }
    qsort_r(shape, n, sizeof *shape, by_rank, score);
    double *sorted = qr_arena_alloc(a, sizeof *sorted * (n ? n : 1));
    if (!sorted)
        return qr_errf(e, QR_E_NOMEM, "out of memory: the query needs more than its memory limit");
    for (uint32_t i = 0; i < n; i++)
        sorted[i] = score[shape[i]];
    *out = (qr_shape_rank){b.f, n, shape, sorted, count, lists};
    return 1;
}

int qr_scorer_shapes_count(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_plan *pl,
                           uint64_t *count, qr_err *e)
{
    *count = 0;
    if (!words_only(q, 1))
        return 0;
    bound b;
    int r = setup(&b, ss, q, NULL, a, e);
    for (uint32_t i = 0; r > 0 && i < b.nops; i++)
        if (b.ops[i].kind != OP_WORD && b.ops[i].kind != OP_JOIN && b.ops[i].kind != OP_NOT)
            r = 0;
    if (r > 0 && qr_invfield_load_shape_rows(b.f, e) != 0)
        r = -1;
    const uint32_t *rows = r > 0 ? qr_invfield_shape_rows(b.f) : NULL;
    if (!rows)
        return r < 0 ? -1 : 0;
    if (pl && !(b.tally = qr_arena_alloc(a, sizeof *b.tally * b.nops)))
        return qr_errf(e, QR_E_NOMEM, "out of memory: the query needs more than its memory limit");
    if (b.tally)
        memset(b.tally, 0, sizeof *b.tally * b.nops);
    /* with rows deleted, the shapes where q holds, for taking those rows
     * off (the shapes' row counts include them) */
    uint8_t *mark = NULL;
    if (ss->seg->deleted && !(mark = qr_arena_alloc(a, (size_t)b.sw->k + 1)))
        return qr_errf(e, QR_E_NOMEM, "out of memory: the query needs more than its memory limit");
    if (mark)
        memset(mark, 0, (size_t)b.sw->k + 1);
    uint64_t n = 0, seen = 0; /* seen: the rows of the shapes holding a word */
    for (uint32_t s = 0;;) {
        uint32_t next = step(&b, s);
        /* a phrase's bound says only that it may hold: made exact */
        for (uint32_t i = 0; i < b.nleaves; i++) {
            leaf *l = &b.leaves[i];
            if (!l->phrase || l->cur == l->n)
                continue;
            if ((r = exact_freq(&b, l, l->cur, e)) <= 0)
                return r;
            l->tf = l->freq[l->cur];
        }
        b.weight = s && s <= b.sw->k ? rows[s] : 0;
        int holds = score_in(&b, s) != -INFINITY;
        if (!s && holds)
            return 0; /* rows holding no word match (a NOT): not counted here */
        if (s && s <= b.sw->k) {
            n += holds ? rows[s] : 0;
            seen += rows[s];
            if (mark)
                mark[s] = (uint8_t)holds;
        }
        if (next == UINT32_MAX)
            break;
        s = next;
    }
    if (mark) {
        uint64_t gone;
        if ((r = qr_invfield_rows_in_shapes(b.f, ss->seg->deleted, mark, &gone, e)) <= 0)
            return r;
        n -= gone;
    }
    *count = n;
    if (!pl)
        return 1;
    /* the rows holding no word, as shape 0 stands for them, then each
     * node's rows: the root's the count */
    for (uint32_t i = 0; i < b.nleaves; i++)
        b.leaves[i].tf = 0;
    b.weight = ss->seg->rows > seen ? ss->seg->rows - seen : 0;
    score_in(&b, 0);
    for (uint32_t i = 0; i < b.nops; i++) {
        qr_plan_node *pn = qr_plan_at(pl, b.ops[i].q);
        if (pn) {
            pn->segments++;
            pn->est_rows += b.tally[i];
        }
        qr_plan_way(pl, b.ops[i].q, i + 1 == b.nops ? "counted by row shapes" : "by row shapes");
    }
    return 1;
}
