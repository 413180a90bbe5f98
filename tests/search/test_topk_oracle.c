/* test_topk_oracle.c - top-k search (search/topk.h) on 100k generated rows
 * in 4 segments against a brute-force oracle over the stored rows.
 *
 * The oracle (oracle.h for the rows, the tokenizer and the per-word
 * matchers; this file for the scoring) implements docs/SEARCH.md
 * "Relevance and top-k" on its own: BM25 with k1 1.2, b 0.75, Lucene's idf,
 * the SmallFloat one-byte length norm re-implemented here, index-wide N,
 * avgdl and df counted from the rows, and the composite rules (sums in
 * written order, phrases weighted by the sum of their words' idf with the
 * phrase or proximity frequency, constant 1 for prefix/regexp/LIKE/fuzzy, 0
 * for NOT and the keyword, numeric and time filters). It scores every row
 * by walking the parsed tree (query.h).
 *
 * For every query, with 1 and 2 threads and k in {1, 10, 100, 1000}:
 *   by score  exhaustive scoring against the oracle: every rank's score
 *             within 1e-6 of the oracle's, the engine's score of each row
 *             within 1e-6 of the oracle's score of that row, the same rows
 *             except inside the group of rows tied (to 1e-6) with the k-th,
 *             and the engine's own order the total order of topk.h; then
 *             every pruned run (each k, 1 and 2 threads) equal bit for bit
 *             to the first k hits of the exhaustive one;
 *   by time   exactly the oracle's rows and timestamps;
 *   by none   exactly the first k matches in table order.
 * Plus: block-max pruning skips blocks on frequent single terms, and
 * qr_par_rows gives what qr_row_json gives, in hit order. */
#include "oracle.h"

#include <math.h>
#include <time.h>

#include "search/parallel.h"
#include "search/topk.h"

#define K1             1.2
#define BM25_B         0.75
#define TOL            1e-6
#define NOT_IN_VOCAB   UINT32_MAX
#define PHRASE_MAX_POS 4096 /* docs/SEARCH.md: positions counted per word */

static oracle_data od;

/* ---- the oracle's index-wide view: interned words, df, norms ---- */
static uint32_t base[NSEG + 1]; /* global row index = base[seg] + row */
static uint32_t *tid;           /* word ids of every row, flat */
static uint64_t *tid_off;       /* row g's ids: tid[tid_off[g] .. tid_off[g + 1]) */
static const otok **vocab;      /* id -> the word */
static uint32_t nvocab, vocab_cap;
static uint32_t *vocab_df; /* rows containing the word, summed over segments */
static uint32_t *htab;     /* open addressing: id + 1, 0 = empty */
static uint32_t hcap;
static uint64_t n_docs;      /* N: rows whose Body is not NULL */
static uint64_t total_words; /* over those rows */
static double avgdl;
static double *lennorm; /* per global row: k1 * (1 - b + b * dl / avgdl) */
static uint32_t max_seg_df_failed;

/* Which words of the vocabulary a multi-term query matches: one flag per
 * word id, computed once per pattern (the lists repeat a few). */
typedef struct vm_entry {
    qr_qtype type;
    uint32_t k;
    char text[256];
    uint8_t *vm;
} vm_entry;

static vm_entry vm_cache[256];
static uint32_t vm_cached;

/* per query scratch */
static double *score_of; /* per global row; NAN = no match */

typedef struct mrow {
    double score;
    int64_t ts; /* INT64_MIN for NULL */
    uint32_t seg, row;
} mrow;

static mrow *matches, *by_score, *by_time;
static uint8_t *seen; /* per global row, for duplicate checks */

/* ---- Lucene SmallFloat.intToByte4 / byte4ToInt, written from Lucene ---- */
/* longToInt4: 4 significant bits (implicit leading 1 dropped), 4-bit shift */
static uint32_t sf_long_to_int4(uint64_t i)
{
    int nbits = 0;
    for (uint64_t x = i; x; x >>= 1)
        nbits++;
    if (nbits < 4)
        return (uint32_t)i; /* subnormal */
    int shift = nbits - 4;
    uint32_t enc = (uint32_t)(i >> shift) & 7u;
    return enc | (uint32_t)(shift + 1) << 3;
}

static uint64_t sf_int4_to_long(uint32_t i)
{
    uint64_t bits = i & 7u;
    int shift = (int)(i >> 3) - 1;
    return shift == -1 ? bits : (bits | 8u) << shift;
}

/* NUM_FREE_VALUES = 255 - longToInt4(Integer.MAX_VALUE) */
static uint32_t sf_free_values(void) { return 255u - sf_long_to_int4(2147483647u); }

static uint8_t sf_int_to_byte4(uint32_t i)
{
    uint32_t nf = sf_free_values();
    if (i < nf)
        return (uint8_t)i;
    return (uint8_t)(nf + sf_long_to_int4((uint64_t)i - nf));
}

static uint32_t sf_byte4_to_int(uint8_t b)
{
    uint32_t nf = sf_free_values();
    if (b < nf)
        return b;
    return (uint32_t)(nf + sf_int4_to_long(b - nf));
}

static double bm25_idf(uint64_t df)
{
    return log(1.0 + ((double)n_docs - (double)df + 0.5) / ((double)df + 0.5));
}

/* ---- interning ---- */
static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static uint32_t vocab_find(const char *s, size_t n)
{
    for (uint64_t h = hash_bytes(s, n) & (hcap - 1);; h = (h + 1) & (hcap - 1)) {
        uint32_t v = htab[h];
        if (!v)
            return NOT_IN_VOCAB;
        if (tok_eq(vocab[v - 1], s, n))
            return v - 1;
    }
}

static uint32_t vocab_add(const otok *t)
{
    uint64_t h = hash_bytes(t->s, t->n) & (hcap - 1);
    for (;; h = (h + 1) & (hcap - 1)) {
        uint32_t v = htab[h];
        if (!v)
            break;
        if (tok_eq(vocab[v - 1], t->s, t->n))
            return v - 1;
    }
    if (nvocab == vocab_cap) {
        vocab_cap = vocab_cap ? vocab_cap * 2 : 1024;
        const otok **nv = realloc(vocab, sizeof *vocab * vocab_cap);
        assert_non_null(nv);
        vocab = nv;
    }
    assert_true(nvocab < hcap / 2);
    vocab[nvocab] = t;
    htab[h] = ++nvocab;
    return nvocab - 1;
}

static int setup(void **st)
{
    (void)st;
    oracle_load(&od);
    for (int s = 0; s < NSEG; s++)
        base[s + 1] = base[s] + od.nrows[s];
    uint32_t nall = base[NSEG];
    uint64_t ntok = 0;
    for (int s = 0; s < NSEG; s++)
        for (uint32_t r = 0; r < od.nrows[s]; r++)
            ntok += od.rows[s][r].ntok;
    hcap = 1u << 22;
    htab = calloc(hcap, sizeof *htab);
    tid = malloc(sizeof *tid * (ntok ? ntok : 1));
    tid_off = malloc(sizeof *tid_off * (nall + 1));
    lennorm = malloc(sizeof *lennorm * nall);
    score_of = malloc(sizeof *score_of * nall);
    matches = malloc(sizeof *matches * nall);
    by_score = malloc(sizeof *by_score * nall);
    by_time = malloc(sizeof *by_time * nall);
    seen = calloc(nall, 1);
    assert_true(htab && tid && tid_off && lennorm && score_of && matches && by_score && by_time &&
                seen);
    uint64_t at = 0;
    for (int s = 0; s < NSEG; s++)
        for (uint32_t r = 0; r < od.nrows[s]; r++) {
            const orow *o = &od.rows[s][r];
            tid_off[base[s] + r] = at;
            for (uint32_t p = 0; p < o->ntok; p++)
                tid[at++] = vocab_add(&o->toks[p]);
            if (!o->body_null) {
                n_docs++;
                total_words += o->ntok;
            }
        }
    tid_off[nall] = at;
    /* df: rows containing the word (index-wide) */
    vocab_df = calloc(nvocab, sizeof *vocab_df);
    uint32_t *last = malloc(sizeof *last * nvocab);
    assert_true(vocab_df && last);
    memset(last, 0xff, sizeof *last * nvocab);
    for (uint32_t g = 0; g < nall; g++)
        for (uint64_t i = tid_off[g]; i < tid_off[g + 1]; i++)
            if (last[tid[i]] != g) {
                last[tid[i]] = g;
                vocab_df[tid[i]]++;
            }
    /* the largest per-segment df of "failed" (multi-block lists?) */
    uint32_t f = vocab_find("failed", 6);
    assert_int_not_equal(f, NOT_IN_VOCAB);
    memset(last, 0xff, sizeof *last * nvocab);
    for (int s = 0; s < NSEG; s++) {
        uint32_t c = 0;
        for (uint32_t g = base[s]; g < base[s + 1]; g++)
            for (uint64_t i = tid_off[g]; i < tid_off[g + 1]; i++)
                if (tid[i] == f) {
                    c++;
                    break;
                }
        if (c > max_seg_df_failed)
            max_seg_df_failed = c;
    }
    free(last);
    avgdl = (double)total_words / (double)n_docs;
    for (int s = 0; s < NSEG; s++)
        for (uint32_t r = 0; r < od.nrows[s]; r++) {
            uint32_t dl = sf_byte4_to_int(sf_int_to_byte4(od.rows[s][r].ntok));
            lennorm[base[s] + r] = K1 * (1.0 - BM25_B + BM25_B * (double)dl / avgdl);
        }
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    free(htab);
    free(tid);
    free(tid_off);
    free(vocab);
    free(vocab_df);
    free(lennorm);
    free(score_of);
    free(matches);
    free(by_score);
    free(by_time);
    free(seen);
    for (uint32_t i = 0; i < vm_cached; i++)
        free(vm_cache[i].vm);
    oracle_unload(&od);
    return 0;
}

/* ---- the oracle's scorer: the parsed tree, resolved against the vocab ---- */
typedef struct onode {
    const qr_query *q;
    struct onode *kids;
    uint32_t nkids;
    uint32_t term;  /* Q_TERM on Body: word id or NOT_IN_VOCAB */
    double idf;     /* Q_TERM on Body */
    uint32_t *pt;   /* Q_PHRASE: word ids */
    int pt_missing; /* Q_PHRASE: a word is in no row */
    double w;       /* Q_PHRASE: the sum of the words' idf, in order */
    uint8_t *vm;    /* multi-term: per word id, does the word match */
    int vm_owned;   /* vm is not in the cache: free it with the node */
} onode;

static size_t count_cps(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static uint8_t *multi_matches(const qr_query *q, int *owned)
{
    *owned = 0;
    int cacheable = q->len < sizeof vm_cache[0].text;
    for (uint32_t i = 0; cacheable && i < vm_cached; i++) {
        vm_entry *c = &vm_cache[i];
        if (c->type == q->type && c->k == q->k && strlen(c->text) == q->len &&
            !memcmp(c->text, q->text, q->len))
            return c->vm;
    }
    regex_t re;
    if (q->type == Q_REGEXP)
        oracle_regcomp(&re, q);
    uint8_t *vm = malloc(nvocab ? nvocab : 1);
    assert_non_null(vm);
    size_t qcps = q->type == Q_FUZZY ? count_cps(q->text, q->len) : 0;
    for (uint32_t v = 0; v < nvocab; v++) {
        if (q->type == Q_FUZZY) { /* the distance is at least the length difference */
            size_t wc = count_cps(vocab[v]->s, vocab[v]->n);
            if ((wc > qcps ? wc - qcps : qcps - wc) > q->k) {
                vm[v] = 0;
                continue;
            }
        }
        vm[v] = (uint8_t)oracle_tok_matches(vocab[v], q, &re);
    }
    if (q->type == Q_REGEXP)
        regfree(&re);
    if (!cacheable || vm_cached == sizeof vm_cache / sizeof *vm_cache) {
        *owned = 1; /* the caller frees it */
        return vm;
    }
    vm_entry *c = &vm_cache[vm_cached++];
    c->type = q->type;
    c->k = q->k;
    memcpy(c->text, q->text, q->len);
    c->text[q->len] = 0;
    c->vm = vm;
    return vm;
}

static void onode_build(onode *n, const qr_query *q)
{
    memset(n, 0, sizeof *n);
    n->q = q;
    switch (q->type) {
    case Q_TERM:
        if (q->field == SEC_BODY) {
            n->term = vocab_find(q->text, q->len);
            n->idf = n->term == NOT_IN_VOCAB ? 0 : bm25_idf(vocab_df[n->term]);
        }
        break;
    case Q_PHRASE:
        n->pt = malloc(sizeof *n->pt * q->n);
        assert_non_null(n->pt);
        n->w = 0;
        for (uint32_t i = 0; i < q->n; i++) {
            n->pt[i] = vocab_find(q->terms[i], q->term_lens[i]);
            if (n->pt[i] == NOT_IN_VOCAB)
                n->pt_missing = 1;
            else
                n->w += bm25_idf(vocab_df[n->pt[i]]);
        }
        break;
    case Q_PREFIX:
    case Q_REGEXP:
    case Q_LIKE:
    case Q_FUZZY:
        n->vm = multi_matches(q, &n->vm_owned);
        break;
    default:
        break;
    }
    if (q->kids && q->n && q->type != Q_PHRASE) {
        n->nkids = q->n;
        n->kids = calloc(q->n, sizeof *n->kids);
        assert_non_null(n->kids);
        for (uint32_t i = 0; i < q->n; i++)
            onode_build(&n->kids[i], q->kids[i]);
    }
}

static void onode_free(onode *n)
{
    for (uint32_t i = 0; i < n->nkids; i++)
        onode_free(&n->kids[i]);
    free(n->kids);
    free(n->pt);
    if (n->vm_owned)
        free(n->vm);
}

/* Position p of row g counts for phrases: the word there is among the first
 * PHRASE_MAX_POS occurrences of that word in the row. */
static int pos_counts(const uint32_t *ids, uint32_t ntok, uint32_t p)
{
    if (ntok <= PHRASE_MAX_POS)
        return 1;
    uint32_t c = 0;
    for (uint32_t i = 0; i < p; i++)
        c += ids[i] == ids[p];
    return c < PHRASE_MAX_POS;
}

/* The phrase (or proximity) frequency of n in a row. */
static double phrase_freq(const onode *n, const uint32_t *ids, uint32_t ntok)
{
    const qr_query *q = n->q;
    double f = 0;
    if (n->pt_missing)
        return 0;
    for (uint32_t p = 0; p < ntok; p++) {
        if (ids[p] != n->pt[0] || !pos_counts(ids, ntok, p))
            continue;
        if (q->within) {
            for (uint32_t d = 1; d <= q->within + 1 && p + d < ntok; d++)
                if (ids[p + d] == n->pt[1] && pos_counts(ids, ntok, p + d)) {
                    f += 1.0 / (double)d;
                    break;
                }
            continue;
        }
        uint32_t i = 1;
        for (; i < q->n; i++) {
            uint64_t at = (uint64_t)p + q->offs[i];
            if (at >= ntok || ids[at] != n->pt[i] || !pos_counts(ids, ntok, (uint32_t)at))
                break;
        }
        if (i == q->n)
            f += 1;
    }
    return f;
}

/* Does row (s, r) match n; its score into *sc (0 when it does not). */
static int oracle_score(const onode *n, uint32_t s, uint32_t r, double *sc)
{
    const qr_query *q = n->q;
    const orow *o = &od.rows[s][r];
    uint32_t g = base[s] + r;
    const uint32_t *ids = tid + tid_off[g];
    uint32_t ntok = o->ntok;
    *sc = 0;
    switch (q->type) {
    case Q_ALL:
        return 1;
    case Q_TERM: {
        if (q->field != SEC_BODY)
            return kw_eq(oracle_kw_value(o, q), q);
        uint32_t tf = 0;
        for (uint32_t p = 0; p < ntok; p++)
            tf += ids[p] == n->term;
        if (!tf)
            return 0;
        *sc = n->idf * (double)tf / ((double)tf + lennorm[g]);
        return 1;
    }
    case Q_PHRASE: {
        double f = phrase_freq(n, ids, ntok);
        if (f == 0)
            return 0;
        *sc = n->w * f / (f + lennorm[g]);
        return 1;
    }
    case Q_AND: {
        double sum = 0, k;
        for (uint32_t i = 0; i < n->nkids; i++) {
            if (!oracle_score(&n->kids[i], s, r, &k))
                return 0;
            sum += k;
        }
        *sc = sum;
        return 1;
    }
    case Q_OR:
    case Q_MINMATCH: {
        double sum = 0, k;
        uint32_t c = 0;
        for (uint32_t i = 0; i < n->nkids; i++)
            if (oracle_score(&n->kids[i], s, r, &k)) {
                c++;
                sum += k;
            }
        if (q->type == Q_OR ? c == 0 : c < q->k)
            return 0;
        *sc = sum;
        return 1;
    }
    case Q_NOT: {
        double k;
        return !oracle_score(&n->kids[0], s, r, &k);
    }
    case Q_PREFIX:
    case Q_REGEXP:
    case Q_LIKE:
    case Q_FUZZY:
        for (uint32_t p = 0; p < ntok; p++)
            if (n->vm[ids[p]]) {
                *sc = 1;
                return 1;
            }
        return 0;
    case Q_INT_RANGE:
        return !o->sevnum_null && o->sevnum >= q->lo && o->sevnum <= q->hi;
    case Q_TIME_RANGE:
        return !o->ts_null && o->ts >= q->lo && o->ts <= q->hi;
    }
    fail_msg("oracle: unknown query node type %d", (int)q->type);
    return 0;
}

static int cmp_score(const void *a, const void *b)
{
    const mrow *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (x->seg != y->seg)
        return x->seg < y->seg ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int cmp_time(const void *a, const void *b)
{
    const mrow *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts > y->ts ? -1 : 1;
    if (x->seg != y->seg)
        return x->seg > y->seg ? -1 : 1;
    return x->row > y->row ? -1 : x->row < y->row;
}

/* Score every row; fills score_of, matches (table order), by_score and
 * by_time. Returns the number of matches. */
static uint32_t oracle_run(const qr_query *q)
{
    onode root;
    onode_build(&root, q);
    uint32_t nm = 0;
    for (uint32_t s = 0; s < NSEG; s++)
        for (uint32_t r = 0; r < od.nrows[s]; r++) {
            double sc;
            uint32_t g = base[s] + r;
            if (!oracle_score(&root, s, r, &sc)) {
                score_of[g] = NAN;
                continue;
            }
            score_of[g] = sc;
            const orow *o = &od.rows[s][r];
            matches[nm++] = (mrow){sc, o->ts_null ? INT64_MIN : o->ts, s, r};
        }
    onode_free(&root);
    memcpy(by_score, matches, sizeof *matches * nm);
    memcpy(by_time, matches, sizeof *matches * nm);
    qsort(by_score, nm, sizeof *by_score, cmp_score);
    qsort(by_time, nm, sizeof *by_time, cmp_time);
    return nm;
}

/* ---- comparing the engine with the oracle ---- */
static int close_to(double got, double want)
{
    return fabs(got - want) <= TOL * fmax(1.0, fabs(want));
}

static const char *by_name(qr_topk_by by)
{
    return by == QR_BY_SCORE ? "score" : by == QR_BY_TIME ? "time" : "none";
}

typedef struct run_ctx {
    const char *text;
    qr_topk_by by;
    uint32_t k;
    int exhaustive, threads;
} run_ctx;

#define RUN_FMT     "query '%s' by %s k=%u exhaustive=%d threads=%d: "
#define RUN_ARGS(c) (c)->text, by_name((c)->by), (c)->k, (c)->exhaustive, (c)->threads

static void check_score_hits(const run_ctx *c, const qr_hit *h, uint32_t n, uint32_t nm)
{
    uint32_t want_n = nm < c->k ? nm : c->k;
    if (n != want_n)
        fail_msg(RUN_FMT "%u hits, oracle has %u (%u rows match)", RUN_ARGS(c), n, want_n, nm);
    for (uint32_t i = 0; i < n; i++) {
        if (h[i].seg >= NSEG || h[i].doc >= od.nrows[h[i].seg])
            fail_msg(RUN_FMT "rank %u: no such row (segment %u row %u)", RUN_ARGS(c), i, h[i].seg,
                     h[i].doc);
        uint32_t g = base[h[i].seg] + h[i].doc;
        const mrow *w = &by_score[i];
        if (isnan(score_of[g]))
            fail_msg(RUN_FMT "rank %u: segment %u row %u does not match (oracle rank %u is "
                             "segment %u row %u score %.17g)",
                     RUN_ARGS(c), i, h[i].seg, h[i].doc, i, w->seg, w->row, w->score);
        if (seen[g])
            fail_msg(RUN_FMT "rank %u: segment %u row %u returned twice", RUN_ARGS(c), i, h[i].seg,
                     h[i].doc);
        seen[g] = 1;
        if (!close_to(h[i].score, score_of[g]))
            fail_msg(RUN_FMT "rank %u: segment %u row %u: score %.17g, oracle %.17g", RUN_ARGS(c),
                     i, h[i].seg, h[i].doc, h[i].score, score_of[g]);
        if (!close_to(h[i].score, w->score) ||
            ((h[i].seg != w->seg || h[i].doc != w->row) && !close_to(score_of[g], w->score)))
            fail_msg(RUN_FMT "rank %u: got segment %u row %u score %.17g (oracle: %.17g), "
                             "oracle has segment %u row %u score %.17g",
                     RUN_ARGS(c), i, h[i].seg, h[i].doc, h[i].score, score_of[g], w->seg, w->row,
                     w->score);
        if (h[i].ts != 0)
            fail_msg(RUN_FMT "rank %u: ts %lld, want 0 by score", RUN_ARGS(c), i,
                     (long long)h[i].ts);
        /* the engine's own order: score desc, then segment, row asc */
        if (i > 0) {
            const qr_hit *p = &h[i - 1];
            int ok = p->score > h[i].score ||
                     (p->score == h[i].score &&
                      (p->seg < h[i].seg || (p->seg == h[i].seg && p->doc < h[i].doc)));
            if (!ok)
                fail_msg(RUN_FMT "ranks %u and %u out of order: (%.17g, %u, %u) then "
                                 "(%.17g, %u, %u)",
                         RUN_ARGS(c), i - 1, i, p->score, p->seg, p->doc, h[i].score, h[i].seg,
                         h[i].doc);
        }
    }
    /* every oracle row clearly above the k-th must be there */
    if (n) {
        double kth = by_score[n - 1].score;
        for (uint32_t i = 0; i < n; i++) {
            const mrow *w = &by_score[i];
            if (!seen[base[w->seg] + w->row] && !close_to(w->score, kth))
                fail_msg(RUN_FMT "oracle rank %u (segment %u row %u score %.17g, k-th %.17g) "
                                 "missing",
                         RUN_ARGS(c), i, w->seg, w->row, w->score, kth);
        }
    }
    for (uint32_t i = 0; i < n; i++)
        seen[base[h[i].seg] + h[i].doc] = 0;
}

static void check_exact_hits(const run_ctx *c, const qr_hit *h, uint32_t n, uint32_t nm)
{
    uint32_t want_n = nm < c->k ? nm : c->k;
    if (n != want_n)
        fail_msg(RUN_FMT "%u hits, oracle has %u (%u rows match)", RUN_ARGS(c), n, want_n, nm);
    const mrow *want = c->by == QR_BY_TIME ? by_time : matches;
    for (uint32_t i = 0; i < n; i++) {
        const mrow *w = &want[i];
        int64_t wts = c->by == QR_BY_TIME ? w->ts : 0;
        if (h[i].seg != w->seg || h[i].doc != w->row || h[i].ts != wts || h[i].score != 0)
            fail_msg(RUN_FMT "rank %u: got segment %u row %u ts %lld score %g, want segment %u "
                             "row %u ts %lld",
                     RUN_ARGS(c), i, h[i].seg, h[i].doc, (long long)h[i].ts, h[i].score, w->seg,
                     w->row, (long long)wts);
    }
}

static void check_same_hits(const run_ctx *c, const char *what, const qr_hit *a, uint32_t na,
                            const qr_hit *b, uint32_t nb)
{
    if (na != nb)
        fail_msg(RUN_FMT "%s: %u hits vs %u", RUN_ARGS(c), what, na, nb);
    for (uint32_t i = 0; i < na; i++)
        if (a[i].seg != b[i].seg || a[i].doc != b[i].doc || a[i].ts != b[i].ts ||
            memcmp(&a[i].score, &b[i].score, sizeof a[i].score) != 0)
            fail_msg(RUN_FMT "%s: rank %u: (%u, %u, %.17g, %lld) vs (%u, %u, %.17g, %lld)",
                     RUN_ARGS(c), what, i, a[i].seg, a[i].doc, a[i].score, (long long)a[i].ts,
                     b[i].seg, b[i].doc, b[i].score, (long long)b[i].ts);
}

static const uint32_t ks[] = {1, 10, 100, 1000};
#define NKS  (sizeof ks / sizeof *ks)
#define KMAX 1000

static double t_oracle, t_engine, t_by[3][2]; /* seconds, for the summary */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void run_topk(qr_par_search *ps, const run_ctx *c, qr_hit *out, uint32_t *n,
                     qr_topk_stats *st)
{
    qr_err e;
    qr_err_clear(&e);
    memset(st, 0, sizeof *st);
    for (uint32_t i = 0; i < c->k; i++) /* poison: every returned hit must be written */
        out[i] = (qr_hit){-12345.0, -12345, 0xdeadbeef, 0xdeadbeef};
    *n = 0xdeadbeef;
    double t0 = now();
    if (qr_par_topk(ps, c->by, c->k, c->exhaustive, out, n, st, &e) != 0)
        fail_msg(RUN_FMT "qr_par_topk failed: %s", RUN_ARGS(c), e.msg);
    t_engine += now() - t0;
    t_by[c->by][c->exhaustive] += now() - t0;
    if (*n > c->k)
        fail_msg(RUN_FMT "%u hits for k %u", RUN_ARGS(c), *n, c->k);
    if (st->blocks_decoded > st->blocks_total || st->segments > NSEG)
        fail_msg(RUN_FMT "stats: segments %llu, blocks %llu decoded of %llu", RUN_ARGS(c),
                 (unsigned long long)st->segments, (unsigned long long)st->blocks_decoded,
                 (unsigned long long)st->blocks_total);
}

/* Which orders to check; every query gets QR_BY_SCORE. */
enum { CHECK_TIME = 1, CHECK_NONE = 2, CHECK_ALL = 3 };

/* The whole comparison for one query; returns the number of matches. */
static uint32_t check_query_opts(const char *text, int orders)
{
    double t0 = now();
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_err e;
    qr_query *q = oracle_parse(text, &a);
    uint32_t nm = oracle_run(q);
    qr_query_release(q);
    qr_arena_free(&a);
    t_oracle += now() - t0;

    /* The reference: exhaustive scoring, 1 thread, the largest k, checked
     * against the oracle. Every other run by score must give exactly its
     * first min(k, matches) hits, bit for bit (the order is total, so a
     * smaller k gives a prefix). Exhaustive scoring costs the same for every
     * k, so it runs twice (1 thread k 1000, 2 threads k 10); pruned runs
     * for every k and thread count. By time and in table order the oracle's
     * answer is exact: 1 thread every k, plus exhaustive = 1 and 2 threads
     * at the largest k. */
    static qr_hit ref[KMAX], out[KMAX];
    uint32_t nref = 0, n;
    qr_topk_stats st;
    for (int threads = 1; threads <= 2; threads++) {
        qr_par_search ps;
        if (qr_par_init(&ps, tu_otel(), od.segs, NSEG, text, strlen(text), threads, &e) != 0)
            fail_msg("qr_par_init %s: %s", text, e.msg);
        /* the oracle's matching agrees with counting (tested elsewhere) */
        uint64_t cnt = 0;
        if (qr_par_count(&ps, &cnt, &e) != 0)
            fail_msg("count %s: %s", text, e.msg);
        if (cnt != nm)
            fail_msg("query '%s': the oracle matches %u rows, qr_par_count says %llu", text, nm,
                     (unsigned long long)cnt);
        /* by score, exhaustive */
        run_ctx c = {text, QR_BY_SCORE, threads == 1 ? KMAX : 10, 1, threads};
        qr_hit *x = threads == 1 ? ref : out;
        uint32_t *nx = threads == 1 ? &nref : &n;
        run_topk(&ps, &c, x, nx, &st);
        if (st.docs_collected != nm)
            fail_msg(RUN_FMT "scored %llu rows, %u match", RUN_ARGS(&c),
                     (unsigned long long)st.docs_collected, nm);
        check_score_hits(&c, x, *nx, nm);
        if (threads == 2)
            check_same_hits(&c, "exhaustive, 2 threads vs 1 (prefix)", out, n, ref,
                            c.k < nref ? c.k : nref);
        /* by score, pruned */
        c.exhaustive = 0;
        for (size_t ki = 0; ki < NKS; ki++) {
            c.k = ks[ki];
            run_topk(&ps, &c, out, &n, &st);
            check_same_hits(&c, "pruned vs exhaustive (1 thread, k 1000, prefix)", out, n, ref,
                            c.k < nref ? c.k : nref);
        }
        /* by time, in table order */
        for (int by = QR_BY_TIME; by <= QR_BY_NONE; by++) {
            if (!(orders & (by == QR_BY_TIME ? CHECK_TIME : CHECK_NONE)))
                continue;
            for (size_t ki = 0; ki < NKS; ki++)
                for (int ex = 0; ex <= 1; ex++) {
                    int last = ki == NKS - 1;
                    if (threads == 2 ? !last || ex : ex && !last)
                        continue;
                    run_ctx ct = {text, (qr_topk_by)by, ks[ki], ex, threads};
                    run_topk(&ps, &ct, out, &n, &st);
                    check_exact_hits(&ct, out, n, nm);
                }
        }
        qr_par_free(&ps);
    }
    return nm;
}

static uint32_t check_query(const char *text) { return check_query_opts(text, CHECK_ALL); }

/* Every query by score and in table order; by time every `every`-th (the
 * newest-first path depends on the filter's density, not on scoring, and
 * is the slow one under ASan). */
static void check_list(const char *const *qs, size_t n, size_t every)
{
    for (size_t i = 0; i < n; i++)
        check_query_opts(qs[i], i % every == 0 ? CHECK_ALL : CHECK_NONE);
}

#define CHECK_LIST(qs, every) check_list((qs), sizeof(qs) / sizeof *(qs), (every))

/* ---- the tests ---- */

/* The norm scheme and the statistics the oracle scores with. */
static void test_oracle_norms_and_stats(void **st)
{
    (void)st;
    assert_int_equal(sf_free_values(), 24);
    for (uint32_t i = 0; i < 24; i++) {
        assert_int_equal(sf_int_to_byte4(i), i);
        assert_int_equal(sf_byte4_to_int((uint8_t)i), i);
    }
    /* Lucene's SmallFloat: 24 + (length - 24) with 4 significant bits, so
     * exact up to 24 + 15, then 2 apart, 4 apart, ... */
    assert_int_equal(sf_byte4_to_int(sf_int_to_byte4(24)), 24);
    assert_int_equal(sf_byte4_to_int(sf_int_to_byte4(39)), 39);
    assert_int_equal(sf_byte4_to_int(sf_int_to_byte4(40)), 40);
    assert_int_equal(sf_byte4_to_int(sf_int_to_byte4(41)), 40);
    assert_int_equal(sf_byte4_to_int(sf_int_to_byte4(42)), 42);
    assert_int_equal(sf_byte4_to_int(sf_int_to_byte4(71)), 68);
    assert_int_equal(sf_byte4_to_int(sf_int_to_byte4(72)), 72);
    assert_int_equal(sf_byte4_to_int(sf_int_to_byte4(100)), 96);
    assert_int_equal(sf_int_to_byte4(39), 39);
    assert_int_equal(sf_int_to_byte4(40), 40);
    assert_int_equal(sf_int_to_byte4(72), 52);
    assert_int_equal(sf_int_to_byte4(100), 57);
    assert_int_equal(sf_int_to_byte4(2147483647u), 255);
    uint32_t prev = 0;
    for (uint32_t i = 0; i < 100000; i++) {
        uint32_t d = sf_byte4_to_int(sf_int_to_byte4(i));
        assert_true(d <= i && d >= prev);
        assert_true((double)(i - d) <= (double)i / 8.0);
        assert_int_equal(sf_int_to_byte4(d), sf_int_to_byte4(i));
        prev = d;
    }
    for (int b = 0; b < 255; b++)
        assert_true(sf_byte4_to_int((uint8_t)b) < sf_byte4_to_int((uint8_t)(b + 1)));
    /* the rows: 7 hand-made per segment, one with a NULL Body */
    assert_int_equal(base[NSEG], NSEG * (ROWS_PER_SEG + 7));
    assert_true(n_docs >= base[NSEG] - NSEG && n_docs < base[NSEG]);
    assert_true(avgdl > 5 && avgdl < 50);
    assert_true(vocab_df[vocab_find("failed", 6)] > 10000);
    assert_true(max_seg_df_failed > 128);
}

static void test_terms_in_every_band(void **st)
{
    (void)st;
    static const char *qs[] = {
        "failed",       "error",   "charge",     "order", "cache",  "place",        "connection",
        "service",      "request", "conversion", "post",  "email",  "confirmation", "send",
        "refused",      "payment", "expected",   "card",  "miss",   "500",          "v1",
        "e8092fe38864", "Größe",   "café",       "CACHE", "FAILED", "Failed"};
    CHECK_LIST(qs, 2);
    /* a rare hex-ish word (df 1) and a few rare ones (df 2..9) of the data */
    int got1 = 0, gotn = 0;
    for (uint32_t v = 0; v < nvocab && (got1 < 2 || gotn < 3); v++) {
        const otok *t = vocab[v];
        int hexish = t->n >= 8;
        for (size_t i = 0; i < t->n && hexish; i++)
            hexish = (t->s[i] >= '0' && t->s[i] <= '9') || (t->s[i] >= 'a' && t->s[i] <= 'f');
        if (!hexish)
            continue;
        if (vocab_df[v] == 1 && got1 < 2) {
            got1++;
            assert_int_equal(check_query(t->s), 1);
            /* with very different dfs: rare OR frequent (MaxScore) */
            char q[600];
            snprintf(q, sizeof q, "%s OR failed", t->s);
            check_query_opts(q, CHECK_NONE);
            snprintf(q, sizeof q, "error OR %s OR cache OR payment", t->s);
            check_query_opts(q, CHECK_NONE);
            snprintf(q, sizeof q, "%s OR (failed AND order)", t->s);
            check_query_opts(q, CHECK_NONE);
            /* AND with a frequent word of its row */
            for (uint32_t g = 0; g < base[NSEG]; g++)
                for (uint64_t j = tid_off[g]; j < tid_off[g + 1]; j++)
                    if (tid[j] == v) {
                        uint32_t other = tid[tid_off[g]] != v ? tid[tid_off[g]] : tid[j - 1];
                        snprintf(q, sizeof q, "%s AND %s", vocab[other]->s, t->s);
                        assert_int_equal(check_query(q), 1);
                        g = base[NSEG] - 1;
                        break;
                    }
        } else if (vocab_df[v] >= 2 && vocab_df[v] < 10 && gotn < 3) {
            gotn++;
            assert_int_equal(check_query(t->s), vocab_df[v]);
        }
    }
    assert_int_equal(got1, 2);
    assert_true(check_query("nosuchterm") == 0);
}

static void test_boolean(void **st)
{
    (void)st;
    static const char *qs[] = {"failed AND order",
                               "failed order",
                               "failed charge card",
                               "FAILED AND Order",
                               "failed AND charge AND card AND cache",
                               "error connection refused",
                               "error OR failed",
                               "payment OR failed",
                               "CACHE OR Error",
                               "email OR confirmation OR send",
                               "refused OR expected OR cache OR order OR failed",
                               "e8092fe38864 OR failed OR payment",
                               "miss OR order OR failed OR email OR conversion",
                               /* rare words, frequent together: term at a time */
                               "connection OR request OR conversion OR post",
                               "atleast(2, error, failed, charge, cache)",
                               "atleast(3, error, failed, charge, cache, order)",
                               "atleast(1, payment, failed)",
                               "atleast(2, payment, refused, failed, order)",
                               "NOT failed",
                               "error -cache",
                               "error AND NOT cache",
                               "failed -order -charge",
                               "NOT (failed OR error OR cache OR charge)",
                               "failed AND nosuchterm",
                               "nosuchterm OR payment",
                               "failed failed",
                               "failed OR failed"};
    CHECK_LIST(qs, 2);
}

static void test_nested(void **st)
{
    (void)st;
    static const char *qs[] = {
        "(error OR failed) AND (order OR charge) AND NOT cache",
        "(cache AND NOT miss) OR (email AND NOT (send OR confirmation))",
        "(failed AND (order OR card)) OR (payment AND charge)",
        "atleast(2, (failed AND order), \"place order\", cache OR refused, payment)",
        "(failed OR (error AND connection)) AND (NOT cache OR refused)",
        "((order))",
        "(conversion OR (request AND (post OR email))) -failed"};
    CHECK_LIST(qs, 1);
}

static void test_phrases(void **st)
{
    (void)st;
    static const char *qs[] = {"\"failed to place order\"",
                               "\"place order\"",
                               "\"FAILED TO Place ORDER\"",
                               "\"post to email service expected 200 got 500\"",
                               "\"failed ? ? order\"",
                               "\"failed ? place\"",
                               "\"failed ? ? ? ? order\"",
                               "\"order order\"",
                               "\"failed failed failed\"",
                               "\"failed failed\"",
                               "\"failed order\"~2",
                               "\"failed order\"~0",
                               "\"charge card\"~5",
                               "\"order failed\"~3",
                               "\"order order\"~2",
                               "\"failed failed\"~4",
                               "\"place to failed\"",
                               "\"failed to place order\" AND NOT cache",
                               "\"failed to place order\" OR payment",
                               "\"place order\" AND charge",
                               "send_order_confirmation",
                               "send_order_confirmation OR \"order order\"",
                               "atleast(2, \"place order\", cache, refused)",
                               "\"place order\" OR \"charge card\"~3 OR failed"};
    CHECK_LIST(qs, 2);
}

static void test_multi_term(void **st)
{
    (void)st;
    static const char *qs[] = {"ord*",
                               "conn*",
                               "charg*",
                               "zzz*",
                               "/c.che/",
                               "/ord(er|ers)?/",
                               "/[0-9]{3}/",
                               "like:%tion",
                               "like:c_che",
                               "like:%TION",
                               "cahce~1",
                               "ordre~1",
                               "paymnet~2",
                               "ord* AND failed",
                               "failed AND ord* AND NOT cache",
                               "cahce~1 OR failed",
                               "(cahce~1 OR /c.rd/) AND failed",
                               "like:%tion OR refused",
                               "atleast(2, ord*, failed, cahce~1)",
                               "conn* refused OR payment",
                               "\"place order\" OR /c.che/"};
    CHECK_LIST(qs, 3);
}

static void test_keyword_numeric_time(void **st)
{
    (void)st;
    static const char *qs[] = {
        "service:cart",
        "severity:ERROR",
        "scope:cart.cartstore.ValkeyCartStore",
        "service:\"nosuch\"",
        "sevnum:>=13",
        "sevnum:[5 TO 9]",
        "time:[2025-09-23T00:00:00.01Z TO 2025-09-23T00:00:00.02Z]",
        "time:>=2025-09-23T00:00:00.15Z",
        "service:cart AND severity:ERROR AND failed",
        "time:[2025-09-23T00:00:00.05Z TO 2025-09-23T00:00:00.09Z] AND error",
        "failed AND service:cart AND time:[2025-09-23T00:00:00.04Z TO 2025-09-23T00:00:00.06Z]",
        "time:<=2025-09-23T00:00:00.03Z AND time:>=2025-09-23T00:00:00.02Z",
        "sevnum:>=13 AND NOT service:cart",
        "failed OR service:cart",
        "service:cart AND (cache OR failed)",
        "cache OR sevnum:>=17",
        "atleast(2, service:cart, failed, cache, sevnum:>=13)",
        "NOT nosuchterm",
        /* negation alone: every row minus a bitmap, postings, a phrase, a union */
        "NOT failed",
        "NOT refused",
        "NOT \"failed to place order\"",
        "NOT (failed OR error)",
        "cache OR NOT failed",
        /* conjunctions with filters: where the block-max leapfrog scores
         * them (phrases, rare words), the conjunction's own rows lead */
        "service:payment AND failed",
        "service:checkout AND failed AND order",
        "service:shipping AND (failed OR error)",
        "service:ad AND error",
        "service:currency AND (failed OR error OR cache) -charge",
        "service:payment AND atleast(2, failed, error, charge, card)",
        "service:payment AND \"failed to charge card\"",
        "service:recommendation AND failed AND sevnum:>=13",
        "service:ad AND connection",
        "service:currency AND (refused OR timeout)",
        "severity:ERROR AND connection AND refused",
        "service:checkout AND \"place order\" -cache",
    };
    CHECK_LIST(qs, 1);
    char q[96];
    const char *tr = od.rows[1][77].trace;
    if (tr && tr[0]) {
        snprintf(q, sizeof q, "trace:%s", tr);
        assert_true(check_query(q) >= 1);
        snprintf(q, sizeof q, "trace:%s OR failed", tr);
        check_query(q);
    }
}

/* MaxScore over clauses of very different dfs: frequent words whose best
 * score is reached by few rows (so their block bounds vary: some blocks
 * cannot compete once the heap is full, later ones can) OR a word of one
 * row late in its segment, far ahead of the windows in between. */
static void test_or_frequent_and_rare(void **st)
{
    (void)st;
    /* per word: the best single-term score and how many rows reach it */
    double *best = calloc(nvocab, sizeof *best);
    uint32_t *at_best = calloc(nvocab, sizeof *at_best);
    assert_true(best && at_best);
    for (uint32_t g = 0; g < base[NSEG]; g++) {
        const uint32_t *ids = tid + tid_off[g];
        uint32_t nt = (uint32_t)(tid_off[g + 1] - tid_off[g]);
        for (uint32_t p = 0; p < nt; p++) {
            uint32_t tf = 0, first = 1;
            for (uint32_t j = 0; j < nt; j++)
                if (ids[j] == ids[p]) {
                    first &= j >= p;
                    tf++;
                }
            if (!first)
                continue; /* counted at its first position */
            double sc = bm25_idf(vocab_df[ids[p]]) * tf / (tf + lennorm[g]);
            if (sc > best[ids[p]])
                best[ids[p]] = sc, at_best[ids[p]] = 1;
            else if (sc == best[ids[p]])
                at_best[ids[p]]++;
        }
    }
    /* the 8 words of df >= 2000 with the fewest rows at their best */
    enum { NPICK = 8 };
    uint32_t pick[NPICK], npick = 0;
    for (uint32_t v = 0; v < nvocab; v++) {
        if (vocab_df[v] < 2000)
            continue;
        uint32_t i = npick < NPICK ? npick++ : NPICK;
        if (i == NPICK && at_best[v] >= at_best[pick[NPICK - 1]])
            continue;
        if (i == NPICK)
            i = NPICK - 1;
        while (i > 0 && at_best[pick[i - 1]] > at_best[v]) {
            pick[i] = pick[i - 1];
            i--;
        }
        pick[i] = v;
    }
    free(best);
    free(at_best);
    assert_int_equal(npick, NPICK);
    /* a word of one row in the last quarter of each segment */
    uint32_t rare[NSEG];
    for (int s = 0; s < NSEG; s++) {
        rare[s] = NOT_IN_VOCAB;
        for (uint32_t g = base[s] + od.nrows[s] * 3 / 4; g < base[s + 1] && rare[s] == NOT_IN_VOCAB;
             g++)
            for (uint64_t j = tid_off[g]; j < tid_off[g + 1]; j++)
                if (vocab_df[tid[j]] == 1) {
                    rare[s] = tid[j];
                    break;
                }
        assert_int_not_equal(rare[s], NOT_IN_VOCAB);
    }
    char q[800];
    for (uint32_t i = 0; i < NPICK; i++) {
        const char *f = vocab[pick[i]]->s;
        for (int s = 0; s < NSEG; s += 1 + (int)(i % 2)) {
            const char *r = vocab[rare[s]]->s;
            snprintf(q, sizeof q, "%s OR %s", s % 2 ? f : r, s % 2 ? r : f);
            check_query_opts(q, 0);
        }
        snprintf(q, sizeof q, "atleast(1, %s, %s, %s)", vocab[rare[i % NSEG]]->s,
                 vocab[pick[(i + 1) % NPICK]]->s, f);
        check_query_opts(q, 0);
    }
}

/* k at its largest, over every row (scores all 0: table order). */
static void test_largest_k(void **st)
{
    (void)st;
    static qr_hit out[QR_TOPK_MAX];
    const char *text = "NOT nosuchterm";
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_err e;
    qr_query *q = oracle_parse(text, &a);
    uint32_t nm = oracle_run(q);
    qr_arena_free(&a);
    assert_int_equal(nm, base[NSEG]);
    qr_par_search ps;
    assert_int_equal(qr_par_init(&ps, tu_otel(), od.segs, NSEG, text, strlen(text), 2, &e), 0);
    for (int by = 0; by < 3; by++) {
        run_ctx c = {text, (qr_topk_by)by, QR_TOPK_MAX, 0, 2};
        uint32_t n;
        qr_topk_stats sts;
        run_topk(&ps, &c, out, &n, &sts);
        if (by == QR_BY_SCORE)
            check_score_hits(&c, out, n, nm);
        else
            check_exact_hits(&c, out, n, nm);
    }
    qr_par_free(&ps);
}

/* Block-max pruning skips postings blocks on a frequent single term. With
 * the row shapes, a segment's top k of a templated word may come from its
 * rows' shape numbers, reading no block (test_topk_ties): here without. */
static void test_pruning_happens(void **st)
{
    (void)st;
    static const char *qs[] = {"failed", "error", "order", "cache", "charge"};
    qr_hit out[10];
    setenv("QUARRY_NO_SHAPES", "1", 1);
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        uint32_t v = vocab_find(qs[i], strlen(qs[i]));
        assert_int_not_equal(v, NOT_IN_VOCAB);
        /* multi-block lists: more than 128 rows in some segment */
        uint32_t maxdf = 0;
        for (int s = 0; s < NSEG; s++) {
            uint32_t c = 0;
            for (uint32_t g = base[s]; g < base[s + 1]; g++)
                for (uint64_t j = tid_off[g]; j < tid_off[g + 1]; j++)
                    if (tid[j] == v) {
                        c++;
                        break;
                    }
            if (c > maxdf)
                maxdf = c;
        }
        if (maxdf <= 128)
            continue;
        for (int threads = 1; threads <= 2; threads++) {
            qr_par_search ps;
            qr_err e;
            assert_int_equal(qr_par_init(&ps, tu_otel(), od.segs, NSEG, qs[i], strlen(qs[i]), threads, &e), 0);
            run_ctx c = {qs[i], QR_BY_SCORE, 10, 0, threads};
            uint32_t n;
            qr_topk_stats sp, sx;
            run_topk(&ps, &c, out, &n, &sp);
            c.exhaustive = 1;
            run_topk(&ps, &c, out, &n, &sx);
            if (!(sp.blocks_total > 0 && sp.blocks_decoded < sp.blocks_total))
                fail_msg(RUN_FMT "no block skipped: %llu decoded of %llu (exhaustive: %llu of "
                                 "%llu; largest segment df %u)",
                         qs[i], "score", 10u, 0, threads, (unsigned long long)sp.blocks_decoded,
                         (unsigned long long)sp.blocks_total, (unsigned long long)sx.blocks_decoded,
                         (unsigned long long)sx.blocks_total, maxdf);
            assert_true(sp.blocks_decoded <= sx.blocks_decoded);
            qr_par_free(&ps);
        }
    }
    unsetenv("QUARRY_NO_SHAPES");
}

/* qr_par_rows: the winners' rows as qr_row_json gives them, in hit order. */
static void expect_rows(const qr_hit *h, uint32_t n, qr_buf *out)
{
    qr_err e;
    qr_colreader *rd[NSEG][QR_OTEL_NCOLS] = {{0}};
    for (uint32_t i = 0; i < n; i++) {
        if (!rd[h[i].seg][0])
            for (int c = 0; c < QR_OTEL_NCOLS; c++)
                assert_non_null(rd[h[i].seg][c] = qr_colr_open(od.segs[h[i].seg], c, &e));
        assert_int_equal(qr_row_json(tu_otel(), rd[h[i].seg], h[i].doc, out, &e), 0);
    }
    for (int s = 0; s < NSEG; s++)
        for (int c = 0; c < QR_OTEL_NCOLS; c++)
            if (rd[s][c])
                qr_colr_close(rd[s][c]);
}

static void check_rows(qr_par_search *ps, const char *what, const qr_hit *h, uint32_t n)
{
    qr_buf got, want;
    qr_buf_init(&got);
    qr_buf_init(&want);
    static const char prefix[] = "{\"already\":\"here\"}\n";
    qr_buf_put(&got, prefix, sizeof prefix - 1);
    qr_buf_put(&want, prefix, sizeof prefix - 1);
    qr_err e;
    if (qr_par_rows(ps, h, n, &got, &e) != 0)
        fail_msg("qr_par_rows %s: %s", what, e.msg);
    expect_rows(h, n, &want);
    assert_false(got.oom || want.oom);
    if (got.len != want.len || memcmp(got.p, want.p, got.len) != 0) {
        size_t i = 0;
        while (i < got.len && i < want.len && got.p[i] == want.p[i])
            i++;
        size_t from = i > 60 ? i - 60 : 0;
        fail_msg("qr_par_rows %s (%u hits): differs at byte %zu: got '%.*s', want '%.*s'", what, n,
                 i, (int)((got.len > from ? got.len - from : 0) < 200 ? got.len - from : 200),
                 (const char *)got.p + from,
                 (int)((want.len > from ? want.len - from : 0) < 200 ? want.len - from : 200),
                 (const char *)want.p + from);
    }
    qr_buf_free(&got);
    qr_buf_free(&want);
}

static void test_rows_late_materialisation(void **st)
{
    (void)st;
    static const char *qs[] = {"failed AND order", "cache", "service:cart"};
    static const uint32_t kk[] = {100, 7, 5};
    static qr_hit out[100];
    for (int threads = 1; threads <= 2; threads++) {
        for (int by = 0; by < 3; by++) {
            qr_par_search ps;
            qr_err e;
            const char *q = qs[by];
            assert_int_equal(qr_par_init(&ps, tu_otel(), od.segs, NSEG, q, strlen(q), threads, &e), 0);
            uint32_t n;
            qr_topk_stats sts;
            run_ctx c = {q, (qr_topk_by)by, kk[by], 0, threads};
            run_topk(&ps, &c, out, &n, &sts);
            assert_int_equal(n, kk[by]);
            check_rows(&ps, q, out, n);
            if (by == QR_BY_NONE) {
                /* any hits, any order: every segment, first and last rows,
                 * repeats; and none */
                qr_hit mix[] = {{0, 0, 3, od.nrows[3] - 1}, {0, 0, 0, 0},
                                {0, 0, 2, 12345},           {0, 0, 3, 0},
                                {0, 0, 1, od.nrows[1] - 1}, {0, 0, 0, 0},
                                {0, 0, 0, od.nrows[0] - 2}, {0, 0, 2, 12344}};
                check_rows(&ps, "mixed hits", mix, sizeof mix / sizeof *mix);
                check_rows(&ps, "no hits", mix, 0);
            }
            qr_par_free(&ps);
        }
    }
}

/* ---- random queries from words of the corpus ---- */
static uint64_t rng = 0x5eed2025ull;

static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t rnd_below(uint32_t n) { return (uint32_t)(rnd() % n); }

/* A random row with at least `min` words. */
static const orow *rnd_row(uint32_t min)
{
    for (;;) {
        uint32_t s = rnd_below(NSEG);
        const orow *o = &od.rows[s][rnd_below(od.nrows[s])];
        if (o->ntok >= min)
            return o;
    }
}

/* A word: mostly by frequency (a random position of a random row), some
 * uniformly over the vocabulary (mostly rare ids). */
static const otok *rnd_word(void)
{
    if (rnd_below(4) == 0)
        return vocab[rnd_below(nvocab)];
    const orow *o = rnd_row(1);
    return &o->toks[rnd_below(o->ntok)];
}

static void put(char *q, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *q, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(q);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q + n, cap - n, fmt, ap);
    va_end(ap);
}

/* A phrase from consecutive words of a row: exact, with ? gaps, or ~N. */
static void rnd_phrase(char *q, size_t cap)
{
    uint32_t kind = rnd_below(3);
    uint32_t len = kind == 2 ? 2 : 2 + rnd_below(3);
    const orow *o = rnd_row(kind == 2 ? 6 : len);
    if (kind == 2) {
        uint32_t d = 1 + rnd_below(4);
        uint32_t p = rnd_below(o->ntok - d);
        put(q, cap, "\"%s %s\"~%u", o->toks[p].s, o->toks[p + d].s, rnd_below(5));
        return;
    }
    uint32_t p = rnd_below(o->ntok - len + 1);
    put(q, cap, "\"");
    for (uint32_t i = 0; i < len; i++) {
        int gap = kind == 1 && i > 0 && i + 1 < len && rnd_below(2);
        put(q, cap, "%s%s", i ? " " : "", gap ? "?" : o->toks[p + i].s);
    }
    put(q, cap, "\"");
}

static int is_ascii_word(const otok *t)
{
    for (size_t i = 0; i < t->n; i++)
        if ((unsigned char)t->s[i] >= 0x80)
            return 0;
    return 1;
}

/* A constant-score clause (prefix or fuzzy) from a word, or a filter. */
static void rnd_other(char *q, size_t cap)
{
    static const char *filters[] = {"service:cart", "sevnum:>=13", "severity:INFO",
                                    "time:>=2025-09-23T00:00:00.1Z"};
    const otok *w = rnd_word();
    uint32_t r = rnd_below(3);
    if (r == 0 && w->n >= 3 && is_ascii_word(w))
        put(q, cap, "%.*s*", (int)(2 + rnd_below((uint32_t)w->n - 1)), w->s);
    else if (r == 1 && w->n >= 4 && w->n <= 12 && is_ascii_word(w))
        put(q, cap, "%s~1", w->s);
    else
        put(q, cap, "%s", filters[rnd_below(sizeof filters / sizeof *filters)]);
}

static void rnd_clause(char *q, size_t cap, int depth)
{
    uint32_t r = rnd_below(depth > 0 ? 12 : 9);
    if (r < 4) {
        put(q, cap, "%s", rnd_word()->s);
    } else if (r < 6) {
        rnd_phrase(q, cap);
    } else if (r < 7) {
        put(q, cap, "-%s", rnd_word()->s);
    } else if (r < 8) {
        put(q, cap, "NOT ");
        rnd_phrase(q, cap);
    } else if (r < 9) {
        rnd_other(q, cap);
    } else {
        uint32_t n = 2 + rnd_below(3);
        const char *op = rnd_below(2) ? " OR " : " AND ";
        put(q, cap, "(");
        for (uint32_t i = 0; i < n; i++) {
            put(q, cap, "%s", i ? op : "");
            rnd_clause(q, cap, depth - 1);
        }
        put(q, cap, ")");
    }
}

static void rnd_query(char *q, size_t cap)
{
    q[0] = 0;
    uint32_t shape = rnd_below(6);
    uint32_t n = 2 + rnd_below(shape == 1 ? 4 : 3);
    if (shape == 0 || shape == 1) { /* AND / OR of words and phrases */
        for (uint32_t i = 0; i < n; i++) {
            put(q, cap, "%s", i ? (shape ? " OR " : " AND ") : "");
            if (rnd_below(4) == 0)
                rnd_phrase(q, cap);
            else
                put(q, cap, "%s", rnd_word()->s);
        }
    } else if (shape == 2) { /* atleast */
        put(q, cap, "atleast(%u", 1 + rnd_below(n));
        for (uint32_t i = 0; i < n; i++) {
            put(q, cap, ", ");
            rnd_clause(q, cap, 0);
        }
        put(q, cap, ")");
    } else if (shape == 3) { /* a frequent word with a rarer one, OR */
        const orow *o = rnd_row(1);
        put(q, cap, "%s OR %s", o->toks[rnd_below(o->ntok)].s, vocab[rnd_below(nvocab)]->s);
    } else { /* nested */
        for (uint32_t i = 0; i < n; i++) {
            put(q, cap, "%s", i ? (rnd_below(2) ? " OR " : " ") : "");
            rnd_clause(q, cap, 1);
        }
    }
    /* a lone exclusion cannot stand as the whole query with an OR of
     * exclusions only, but NOT alone is fine; nothing else to fix */
}

/* TOPK_ORACLE_RANDOM=N runs N random queries instead of 50 and
 * TOPK_ORACLE_SEED=S draws them from seed S (longer soaks by hand). */
static void test_random_queries(void **st)
{
    (void)st;
    const char *nq = getenv("TOPK_ORACLE_RANDOM"), *seed = getenv("TOPK_ORACLE_SEED");
    int n = nq ? atoi(nq) : 50;
    if (seed)
        rng = strtoull(seed, NULL, 0);
    char q[2048];
    int nonempty = 0;
    for (int i = 0; i < n; i++) {
        rnd_query(q, sizeof q);
        /* every 5th in all three orders, the others by score (the shapes
         * matter most to pruning) */
        nonempty += check_query_opts(q, i % 5 == 0 ? CHECK_ALL : CHECK_NONE) > 0;
    }
    assert_true(nonempty >= n / 2);
}

static void test_summary(void **st)
{
    (void)st;
    fprintf(stderr,
            "topk oracle: oracle %.2f s, engine %.2f s (by score %.2f + %.2f exhaustive, by "
            "time %.2f + %.2f, none %.2f + %.2f)\n",
            t_oracle, t_engine, t_by[0][0], t_by[0][1], t_by[1][0], t_by[1][1], t_by[2][0],
            t_by[2][1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_norms_and_stats),
        cmocka_unit_test(test_terms_in_every_band),
        cmocka_unit_test(test_boolean),
        cmocka_unit_test(test_nested),
        cmocka_unit_test(test_phrases),
        cmocka_unit_test(test_multi_term),
        cmocka_unit_test(test_keyword_numeric_time),
        cmocka_unit_test(test_or_frequent_and_rare),
        cmocka_unit_test(test_largest_k),
        cmocka_unit_test(test_pruning_happens),
        cmocka_unit_test(test_rows_late_materialisation),
        cmocka_unit_test(test_random_queries),
        cmocka_unit_test(test_summary),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
