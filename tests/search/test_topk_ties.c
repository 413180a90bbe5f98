/* test_topk_ties.c - top-k by score where thousands of rows tie: log
 * bodies from a handful of templates, repeated across many segments, so
 * the best score is shared by far more rows than k and pruning decides on
 * bounds that equal the threshold exactly (a block, window or segment
 * whose best only ties the heap's worst, and comes after it in the order,
 * is skipped). For every query shape, k and thread count, the pruned run
 * equals the exhaustive one bit for bit, and the tie order is the
 * documented one (equal scores: segment, then row, ascending). Also: whole
 * segments are skipped by their score bound on these tables. */
#include "testutil.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "index/invfmt.h"
#include "index/invindex.h"
#include "index/shapes.h"
#include "query/query.h"
#include "score/bm25.h"
#include "score/scorer.h"
#include "search/parallel.h"
#include "search/topk.h"

#define NSEGS 7
static const uint32_t seg_rows[NSEGS] = {3000, 5000, 700, 9000, 4096, 1, 6000};

/* templates: the ties; a few rows differ (longer, repeated words) */
static const char *templates[] = {
    "failed to place order for user",
    "error connecting to cache server",
    "failed to charge card error timeout",
    "request completed",
    "cache miss for order",
    "post to email service failed error error",
    "conversion request failed",
};
#define NTPL (sizeof templates / sizeof *templates)

static struct {
    char *dir;
    qr_segment *segs[NSEGS];
    qr_pool *pool;
} tb;

static int setup(void **st)
{
    (void)st;
    tb.dir = tu_tmpdir();
    assert_non_null(tb.dir);
    uint64_t x = 12345;
    int64_t ts = 1758585600000000000ll;
    for (int s = 0; s < NSEGS; s++) {
        qr_buf text;
        qr_buf_init(&text);
        for (uint32_t r = 0; r < seg_rows[s]; r++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            const char *body = templates[x % NTPL];
            char line[512];
            /* one row in 97 is a variant: an extra word or a repeat (one
             * in 83 holds its phrase twice: frequency 2) */
            const char *extra = x % 97 == 0   ? " again and again"
                                : x % 89 == 0 ? " failed"
                                : x % 83 == 0 ? " and failed to place order"
                                              : "";
            int n = snprintf(line, sizeof line,
                             "{\"Timestamp\":%lld,\"SeverityText\":\"%s\",\"SeverityNumber\":%d,"
                             "\"ServiceName\":\"%s\",\"Body\":\"%s%s\"}\n",
                             (long long)(ts += 1000), x % 3 ? "INFO" : "ERROR", x % 3 ? 9 : 17,
                             x % 31 == 7 ? "shipping"
                             : x % 2     ? "cart"
                                         : "checkout",
                             body, extra);
            qr_buf_put(&text, line, (size_t)n);
        }
        char name[32];
        snprintf(name, sizeof name, "s%d.qseg", s);
        tb.segs[s] = tu_open_built(tb.dir, name, &text, seg_rows[s]);
    }
    qr_err e;
    assert_non_null(tb.pool = qr_pool_new(2, &e));
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    for (int s = 0; s < NSEGS; s++)
        qr_seg_close(tb.segs[s]);
    qr_pool_free(tb.pool);
    tu_rmdir(tb.dir);
    return 0;
}

static int hit_before(const qr_hit *a, const qr_hit *b)
{
    if (a->score != b->score)
        return a->score > b->score;
    return a->seg != b->seg ? a->seg < b->seg : a->doc < b->doc;
}

static const char *queries[] = {
    "failed",
    "order",
    "failed OR error",
    "connection OR request OR conversion OR post",
    "failed AND order",
    "failed AND charge AND card",
    "atleast(2, error, failed, charge, cache)",
    "failed -cache",
    "\"failed to place order\"",
    "\"failed ? ? order\"",
    /* phrases among words; a repeated word; proximity (1/d summed) */
    "\"place order\" OR failed",
    "\"failed to\" AND card",
    "\"to to\" OR cache",
    "\"to place order\" OR \"error error\"",
    "\"order failed\"~2",
    "\"failed order\"~2 OR cache", /* at exactly the reach: failed to place order */
    "\"failed order\"~6 AND card",
    "\"error error\"~3 OR \"failed to\"~1",
    "\"order failed\"",
    "\"failed order\"~3 OR error",
    "failed OR ord*",
    "(failed OR error) AND service:cart",
    "error AND sevnum:>=13",
    "cache OR (failed AND order)",
    "again OR failed",
    "request OR completed OR cache OR miss OR email OR timeout",
    /* a rare filter: where the leapfrog scores the conjunction (small
     * segments, phrases), its own rows lead */
    "service:shipping AND failed",
    "service:shipping AND (failed OR error)",
    "failed AND order AND service:shipping",
    "service:shipping AND \"failed to place order\"",
    /* rows scoring 0 (the filter alone) compete once k passes the rows
     * holding the word, or when no row holds it */
    "again OR service:shipping",
    "zzzz OR service:shipping",
    /* a value of a column without an index (a scan, field 0): may hold */
    "failed OR SpanId:abc",
    /* no scored word: every row scores 0 (the shapes cannot say) */
    "service:shipping",
    "NOT failed",
};

/* Queries no row matches: words of different templates, a value no row
 * has. Every segment is passed over by its shapes before any list is
 * read (no threshold needed). */
static const char *no_match[] = {
    "completed AND timeout",
    "service:nosuch AND failed",
};

/* For each query and k: the exhaustive top-k (in the documented order),
 * then the pruned one on 1..max_threads threads, which must equal it bit
 * for bit. Returns the segments skipped whole by the pruned runs. */
static uint64_t check_pruned(qr_segment **segs, uint32_t nsegs, const char *const *qs, size_t nq,
                             const uint32_t *ks, size_t nk, int max_threads)
{
    uint32_t kmax = 0;
    for (size_t ki = 0; ki < nk; ki++)
        kmax = ks[ki] > kmax ? ks[ki] : kmax;
    qr_hit *ref = malloc(sizeof *ref * kmax), *got = malloc(sizeof *got * kmax);
    uint64_t skipped = 0;
    for (size_t q = 0; q < nq; q++)
        for (size_t ki = 0; ki < nk; ki++) {
            uint32_t k = ks[ki], nref, ngot;
            qr_par_search ps;
            qr_err e;
            const char *t = qs[q];
            assert_int_equal(
                qr_par_init_pool(&ps, NULL, tu_otel(), segs, nsegs, t, strlen(t), 1, &e), 0);
            assert_int_equal(qr_par_topk(&ps, QR_BY_SCORE, k, 1, ref, &nref, NULL, &e), 0);
            qr_par_free(&ps);
            assert_true(nref > 0);
            for (uint32_t i = 1; i < nref; i++)
                assert_true(hit_before(&ref[i - 1], &ref[i]));
            for (int threads = 1; threads <= max_threads; threads++) {
                assert_int_equal(qr_par_init_pool(&ps, threads > 1 ? tb.pool : NULL, tu_otel(),
                                                  segs, nsegs, t, strlen(t), threads, &e), 0);
                qr_topk_stats s;
                assert_int_equal(qr_par_topk(&ps, QR_BY_SCORE, k, 0, got, &ngot, &s, &e), 0);
                skipped += s.segments_skipped;
                qr_par_free(&ps);
                if (ngot != nref || memcmp(got, ref, sizeof *ref * nref) != 0)
                    fail_msg("'%s' k=%u threads=%d: pruned differs from exhaustive (%u vs %u hits)",
                             t, k, threads, ngot, nref);
            }
        }
    free(ref);
    free(got);
    return skipped;
}

/* Does every scored clause of q come from words alone (AND, OR,
 * at-least-k of non-variable words or phrases of them, no filter)?
 * Then the bound from the
 * row shapes is exact: a segment is passed over exactly when no row beats
 * the threshold. */
static int words_only(const qr_query *q)
{
    if (q->type == Q_TERM)
        return q->scored && !qr_shape_variable(q->text, q->len);
    if (q->type == Q_PHRASE) { /* phrases too: their frequency is the shape's */
        for (uint32_t i = 0; i < q->n; i++)
            if (qr_shape_variable(q->terms[i], q->term_lens[i]))
                return 0;
        return q->scored;
    }
    if (q->type != Q_AND && q->type != Q_OR && q->type != Q_MINMATCH)
        return 0;
    for (uint32_t i = 0; i < q->n; i++)
        if (!words_only(q->kids[i]))
            return 0;
    return 1;
}

/* Or words ANDed with one keyword value (`(failed OR error) AND
 * service:cart`): exact too, by the shapes of the value's rows (a row
 * with the value has each of those shapes, and holds the words). */
static int words_and_value(const qr_query *q)
{
    if (words_only(q))
        return 1;
    if (q->type != Q_AND)
        return 0;
    uint32_t values = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        const qr_query *k = q->kids[i];
        if (k->type == Q_TERM && !k->scored && k->field == SEC_KW_SERVICE)
            values++;
        else if (!words_only(k))
            return 0;
    }
    return values <= 1;
}

/* A segment's scorer built with a threshold already known (what a
 * segment meets when other threads' heaps filled first, at any value) and
 * walked with it: exactly the rows the exhaustive scorer gives above it,
 * with the same scores. Thresholds: just above 0, and the exhaustive
 * scores at several ranks of each segment. Deterministic, where the
 * parallel runs above meet such thresholds only by timing (a filter
 * walked into a bitmap and then leapfrogged lost a segment's rows, one
 * 2-thread run in two). */
static uint64_t shapes_lost; /* segments check_thresholds saw passed over by their shapes */

static void check_thresholds(qr_segment **segs, uint32_t nsegs, const char *text)
{
    qr_arena a, qa;
    qr_arena_init(&a, 1 << 20, 0);
    qr_arena_init(&qa, 1 << 16, 0);
    qr_err e;
    qr_query *q = qr_query_parse(text, strlen(text), &qa, &e);
    if (!q)
        fail_msg("parse %s: %s", text, e.msg);
    qr_segsearch *ss = calloc(nsegs, sizeof *ss);
    for (uint32_t s = 0; s < nsegs; s++)
        qr_segsearch_init(&ss[s], segs[s]);
    qr_qweights qw;
    if (qr_qweights_compute(&qw, ss, nsegs, q, &qa, NULL, NULL, 1, &e) != 0)
        fail_msg("%s: %s", text, e.msg);
    for (uint32_t s = 0; s < nsegs; s++) {
        uint32_t rows = (uint32_t)segs[s]->rows, n = 0;
        double *ref = calloc(rows, sizeof *ref); /* exhaustive score by row */
        uint8_t *hit = calloc(rows, 1);          /* matched */
        qr_arena_reset(&a);
        qr_sc *sc = qr_scorer_build(&ss[s], q, &qw, -INFINITY, &a, &e);
        if (!sc)
            fail_msg("%s: %s", text, e.msg);
        for (uint32_t d = qr_sc_next(sc); d != QR_NO_DOC; d = qr_sc_next(sc), n++) {
            ref[d] = qr_sc_score(sc);
            hit[d] = 1;
        }
        /* no threshold: passed over only when no row matches; for words
         * (and one keyword value), exactly then */
        qr_invfield *kw = qr_segsearch_field(&ss[s], SEC_KW_SERVICE, &e);
        assert_non_null(kw);
        int exact = words_only(q) || (words_and_value(q) && kw->valshapes_map);
        int none = qr_scorer_shapes_lose(&ss[s], q, &qw, -INFINITY, &a, &e);
        if (none < 0)
            fail_msg("%s: %s", text, e.msg);
        if (none ? n > 0 : n == 0 && exact && !getenv("QUARRY_NO_SHAPES"))
            fail_msg("'%s' segment %u: %u rows match, yet the shapes say %s", text, s, n,
                     none ? "none can" : "some may");
        shapes_lost += none;
        double *sorted = calloc(n + 1, sizeof *sorted), best = 0;
        for (uint32_t d = 0, j = 0; d < rows; d++)
            if (ref[d] > 0) {
                sorted[j++] = ref[d];
                best = ref[d] > best ? ref[d] : best;
            }
        /* thresholds: just below 0 (rows scoring 0 compete), just above,
         * several ranks of the scores, and the best score (none beats it) */
        for (int t = 0; t < 7 && n > 0; t++) {
            double min = t == 0   ? nextafter(0, -INFINITY)
                         : t == 1 ? 1e-9
                         : t == 6 ? best
                                  : sorted[(uint64_t)n * (uint64_t)(t - 1) / 5];
            uint32_t want = 0, got = 0;
            for (uint32_t d = 0; d < rows; d++)
                want += hit[d] && ref[d] > min;
            /* the row shapes pass the segment over only when no row beats
             * min; for words alone, exactly then */
            int lose = qr_scorer_shapes_lose(&ss[s], q, &qw, min, &a, &e);
            if (lose < 0)
                fail_msg("%s: %s", text, e.msg);
            if (lose && want)
                fail_msg("'%s' segment %u threshold %.17g: passed over by its shapes, yet %u "
                         "rows beat it",
                         text, s, min, want);
            /* (a value's shapes are exact where the block is written:
             * segments of many shapes, too free for templates, have none) */
            if (!lose && !want && exact && !getenv("QUARRY_NO_SHAPES"))
                fail_msg("'%s' segment %u threshold %.17g: no row beats it, yet the shapes did "
                         "not show it",
                         text, s, min);
            shapes_lost += lose;
            qr_arena_reset(&a);
            sc = qr_scorer_build(&ss[s], q, &qw, min, &a, &e);
            if (!sc)
                fail_msg("%s: %s", text, e.msg);
            if (sc->cost > 0 && sc->vt->max_score(sc, QR_SC_END, 0) > min) {
                sc->vt->set_min(sc, min);
                for (uint32_t d = qr_sc_next(sc); d != QR_NO_DOC; d = qr_sc_next(sc)) {
                    double v = qr_sc_score(sc);
                    if (v > min && v != ref[d])
                        fail_msg("'%s' segment %u threshold %.17g: row %u scores %.17g, "
                                 "exhaustive %.17g",
                                 text, s, min, d, v, ref[d]);
                    got += v > min;
                }
                assert_false(sc->vt->failed(sc));
            }
            if (got != want)
                fail_msg("'%s' segment %u threshold %.17g: %u rows above it, exhaustive %u", text,
                         s, min, got, want);
        }
        free(sorted);
        free(ref);
        free(hit);
    }
    for (uint32_t s = 0; s < nsegs; s++)
        qr_segsearch_close(&ss[s]);
    free(ss);
    qr_query_release(q);
    qr_arena_free(&qa);
    qr_arena_free(&a);
}

static void test_pruned_equals_exhaustive_with_ties(void **st)
{
    (void)st;
    static const uint32_t ks[] = {1, 10, 100, 1000};
    size_t nq = sizeof queries / sizeof *queries;
    /* with the row shapes' bounds, and without (the words' bounds alone) */
    uint64_t skipped = check_pruned(tb.segs, NSEGS, queries, nq, ks, sizeof ks / sizeof *ks, 3);
    shapes_lost = 0;
    for (size_t i = 0; i < nq; i++)
        check_thresholds(tb.segs, NSEGS, queries[i]);
    assert_true(shapes_lost > 0);
    for (size_t i = 0; i < sizeof no_match / sizeof *no_match; i++) {
        check_thresholds(tb.segs, NSEGS, no_match[i]);
        qr_par_search ps;
        qr_err e;
        qr_hit h[10];
        uint32_t nh = 1;
        qr_topk_stats ts;
        const char *t = no_match[i];
        assert_int_equal(
            qr_par_init_pool(&ps, NULL, tu_otel(), tb.segs, NSEGS, t, strlen(t), 1, &e), 0);
        assert_int_equal(qr_par_topk(&ps, QR_BY_SCORE, 10, 0, h, &nh, &ts, &e), 0);
        qr_par_free(&ps);
        assert_int_equal(nh, 0);
        assert_int_equal(ts.segments_skipped, NSEGS);
    }
    setenv("QUARRY_NO_SHAPES", "1", 1);
    uint64_t unshaped = check_pruned(tb.segs, NSEGS, queries, nq, ks, sizeof ks / sizeof *ks, 3);
    for (size_t i = 0; i < nq; i++)
        check_thresholds(tb.segs, NSEGS, queries[i]);
    unsetenv("QUARRY_NO_SHAPES");
    /* the best rows are in the first segments: later ones are skipped
     * whole, more often by the shapes' exact bounds */
    assert_true(unshaped > 0);
    assert_true(skipped > unshaped);
}

/* Bodies of random length from a few frequent words, each possibly
 * repeated: every word is dense (has a row bitmap) in every segment, rows
 * hold words once, twice or three times at every length, and many rows
 * tie. The bounds that use each dense word's rows holding it more than
 * once (format 11) must still never skip a row that enters: pruned equals
 * exhaustive for OR, AND and at-least-k of two to four words. */
static void run_repeats(int one_repeat)
{
    static const char *words[] = {"failed", "error", "order", "cache", "card", "retry"};
    static const uint32_t rows[] = {2000, 4000, 1500, 6000, 3000, 2500};
    enum { NS = sizeof rows / sizeof *rows };
    char *dir = tu_tmpdir();
    qr_segment *segs[NS];
    uint64_t x = 99;
    int64_t ts = 1758585600000000000ll;
    for (int s = 0; s < NS; s++) {
        qr_buf text;
        qr_buf_init(&text);
        for (uint32_t r = 0; r < rows[s]; r++) {
            char body[400];
            size_t n = 0;
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t len = 2 + (uint32_t)(x % 11), seen[6] = {0}, repeated = 0;
            for (uint32_t j = 0; j < len; j++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                /* a filler word half the time (lengths vary apart from the
                 * words), and a word at most twice a row, so that the best
                 * rows tie across segments and whole segments are skipped;
                 * with one_repeat, at most one word twice a row (as in
                 * templated logs: then no row repeats two words of a query,
                 * which the bounds use) */
                uint32_t wi = (uint32_t)(x >> 8) % 6;
                int no = seen[wi] == 2 || (one_repeat && seen[wi] == 1 && repeated);
                const char *w = x % 2 || no ? "filler" : words[wi];
                seen[wi] += w == words[wi];
                repeated += seen[wi] == 2 && w == words[wi];
                n += (size_t)snprintf(body + n, sizeof body - n, "%s%s", j ? " " : "", w);
            }
            char line[600];
            /* a service of three, from the row number: filters keep a
             * third of the rows, across every length and count */
            static const char *const svc[] = {"cart", "payment", "email"};
            /* and a rare one (1 row in 23: a filter that is a list, not a
             * bitmap) */
            const char *sv = r % 23 == 5 ? "shipping" : svc[(r * 7 + (uint32_t)s) % 3];
            int m = snprintf(line, sizeof line,
                             "{\"Timestamp\":%lld,\"SeverityText\":\"INFO\",\"SeverityNumber\":9,"
                             "\"ServiceName\":\"%s\",\"Body\":\"%s\"}\n",
                             (long long)(ts += 1000), sv, body);
            qr_buf_put(&text, line, (size_t)m);
        }
        char name[32];
        snprintf(name, sizeof name, "r%d-%d.qseg", one_repeat, s);
        segs[s] = tu_open_built(dir, name, &text, rows[s]);
    }
    static const char *qs[] = {
        "failed OR error",
        "failed AND error",
        "order OR cache OR card",
        "failed AND error AND order",
        "atleast(2, failed, error, order, cache)",
        "atleast(3, failed, error, order, cache)",
        "failed OR error OR order OR retry",
        "card AND retry",
        "(failed OR error) AND service:cart",
        "atleast(2, failed, error, order, cache) AND service:payment",
        "(failed OR error OR order) AND service:email -retry",
        "service:cart AND (order OR card OR retry)",
        "service:shipping AND failed",
        "service:shipping AND (failed OR error)",
        "service:shipping AND failed AND error",
        "service:shipping AND (order OR card) -retry",
        "atleast(2, failed, error, order, cache) AND service:shipping",
    };
    static const uint32_t ks[] = {1, 10, 100};
    assert_true(check_pruned(segs, NS, qs, sizeof qs / sizeof *qs, ks, sizeof ks / sizeof *ks, 2) >
                0);
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++)
        check_thresholds(segs, NS, qs[i]);
    for (int s = 0; s < NS; s++)
        qr_seg_close(segs[s]);
    tu_rmdir(dir);
}

/* A phrase's bound takes its scratch and its shapes' frequencies from the
 * arena it is given, under that arena's limit: past it, 53200 and no
 * answer; within it, the same answer as ever. */
static void test_phrase_bound_under_memory_limit(void **st)
{
    (void)st;
    qr_arena qa, small, big;
    qr_arena_init(&qa, 1 << 16, 0);
    qr_arena_init(&small, 4096, 16384);
    qr_arena_init(&big, 1 << 16, 0);
    qr_err e;
    const char *text = "\"failed to place order\"";
    qr_query *q = qr_query_parse(text, strlen(text), &qa, &e);
    assert_non_null(q);
    qr_segsearch ss;
    qr_segsearch_init(&ss, tb.segs[0]);
    qr_qweights qw;
    assert_int_equal(qr_qweights_compute(&qw, &ss, 1, q, &qa, NULL, NULL, 1, &e), 0);
    qr_err_clear(&e);
    assert_int_equal(qr_scorer_shapes_lose(&ss, q, &qw, -INFINITY, &small, &e), -1);
    assert_string_equal(e.code, QR_E_NOMEM);
    /* the segment has rows holding the phrase: not passed over without a
     * threshold, passed over above the best score there is */
    assert_int_equal(qr_scorer_shapes_lose(&ss, q, &qw, -INFINITY, &big, &e), 0);
    assert_int_equal(qr_scorer_shapes_lose(&ss, q, &qw, 1e9, &big, &e), 1);
    qr_segsearch_close(&ss);
    qr_query_release(q);
    qr_arena_free(&small);
    qr_arena_free(&big);
    qr_arena_free(&qa);
}

static void test_pruned_equals_exhaustive_with_repeats(void **st)
{
    (void)st;
    run_repeats(0);
    run_repeats(1);
}

/* How many segments the plan of a top-k run of `text` says its root was
 * passed over in (way: by sc_dense_apart, or by the row shapes), the
 * hits in out. */
static uint32_t passed_over(qr_segment **segs, uint32_t nsegs, const char *text, uint32_t k,
                            const char *way, qr_hit *out, uint32_t *nout)
{
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_err e;
    qr_query *t = qr_query_parse_for(tu_otel(), text, strlen(text), &a, &e);
    assert_non_null(t);
    qr_par_search ps;
    assert_int_equal(qr_par_init_tree(&ps, NULL, tu_otel(), segs, nsegs, t, 1, &e), 0);
    qr_par_set_explain(&ps);
    assert_int_equal(qr_par_topk(&ps, QR_BY_SCORE, k, 0, out, nout, NULL, &e), 0);
    qr_plan pl;
    qr_plan_init(&pl);
    qr_par_plan(&ps, &pl);
    assert_false(pl.oom);
    uint32_t n = 0;
    for (uint32_t i = 0; i < pl.n; i++)
        for (int w = 0; w < QR_PLAN_WAYS && pl.v[i].way[w].name; w++)
            if (strstr(pl.v[i].way[w].name, way))
                n += pl.v[i].way[w].n;
    qr_plan_free(&pl);
    qr_par_free(&ps);
    qr_arena_free(&a);
    return n;
}

/* An OR of words that are neither dense nor rare (each in ~1/40 of the
 * rows), from templates of their own, so no row holds two of them: once
 * the heap holds the tying best rows, a segment is passed over after
 * reading the words' lists into one bitmap (sc_dense_apart), without the
 * words' bitmaps or a walk of them. Segment 3 has a few rows holding two
 * of the words at once: short, so they are the best rows of all, and a
 * check that wrongly passed a segment over would lose them. Pruned equals
 * exhaustive; the passing over happens; the shared rows come first. */
static void test_or_of_words_no_row_shares(void **st)
{
    (void)st;
    static const char *sparse[] = {"connection refused by peer", "request completed ok",
                                   "conversion done", "post sent to the queue"};
    static const uint32_t rows[] = {6000, 5000, 7000, 4000, 6500, 3000};
    enum { NS = sizeof rows / sizeof *rows };
    char *dir = tu_tmpdir();
    qr_segment *segs[NS];
    uint64_t x = 4242;
    int64_t ts = 1758585600000000000ll;
    for (int s = 0; s < NS; s++) {
        qr_buf text;
        qr_buf_init(&text);
        for (uint32_t r = 0; r < rows[s]; r++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            char body[128];
            if (s == 3 && r % 1000 == 999) /* two words in one short row */
                snprintf(body, sizeof body, "%s", r % 2000 == 999 ? "request conversion"
                                                                   : "post connection");
            else if (x % 40 < 4)
                snprintf(body, sizeof body, "%s", sparse[x % 40]);
            else /* filler: dense words, lengths 3..8 */
                snprintf(body, sizeof body, "%.*s", 6 + 6 * (int)(x % 6),
                         "alpha beta gamma delta epsil zetas eta");
            char line[256];
            int m = snprintf(line, sizeof line,
                             "{\"Timestamp\":%lld,\"SeverityText\":\"INFO\",\"SeverityNumber\":9,"
                             "\"ServiceName\":\"%s\",\"Body\":\"%s\"}\n",
                             (long long)(ts += 1000), r % 3 ? "cart" : "email", body);
            qr_buf_put(&text, line, (size_t)m);
        }
        char name[32];
        snprintf(name, sizeof name, "apart%d.qseg", s);
        segs[s] = tu_open_built(dir, name, &text, rows[s]);
    }
    static const char *qs[] = {
        "connection OR request OR conversion OR post",
        "request OR conversion",
        "(connection OR request OR conversion) AND service:cart",
        "connection OR alpha",
    };
    static const uint32_t ks[] = {1, 5, 10, 100};
    check_pruned(segs, NS, qs, sizeof qs / sizeof *qs, ks, sizeof ks / sizeof *ks, 2);
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++)
        check_thresholds(segs, NS, qs[i]);
    /* the rows holding two words lead; with k beyond them, the tying rows
     * of segment 0 fill the heap and segments 1, 2, 4 and 5 are passed over
     * (segment 3 holds shared rows: it is scored) */
    qr_hit h[100];
    uint32_t n = 0;
    /* by the lists read into one bitmap (the row shapes' bounds off) */
    setenv("QUARRY_NO_SHAPES", "1", 1);
    check_pruned(segs, NS, qs, sizeof qs / sizeof *qs, ks, sizeof ks / sizeof *ks, 2);
    uint32_t passed = passed_over(segs, NS, qs[0], 100, "no row can beat", h, &n);
    assert_int_equal(n, 100);
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(h[i].seg, 3);
    assert_int_equal(h[4].seg, 0);
    assert_true(passed >= 3 && passed <= 4);
    /* the same words, each with a filter: passed over too */
    assert_true(passed_over(segs, NS, qs[2], 100, "no row can beat", h, &n) >= 3);
    unsetenv("QUARRY_NO_SHAPES");
    /* by the row shapes, before a list is read: the same segments */
    passed = passed_over(segs, NS, qs[0], 100, "no row shape", h, &n);
    assert_int_equal(n, 100);
    assert_int_equal(h[4].seg, 0);
    assert_true(passed >= 3 && passed <= 4);
    assert_true(passed_over(segs, NS, qs[2], 100, "no row shape", h, &n) >= 3);
    for (int s = 0; s < NS; s++)
        qr_seg_close(segs[s]);
    tu_rmdir(dir);
}

/* Queries whose match and score in a row are its shape's (words and
 * phrases of them, joined, no filter): where the best shapes hold many
 * rows, a segment's top k come from a walk of the rows' shape numbers
 * (topk_score.c: rank_by_shapes), not from lists. Pruned equals
 * exhaustive for k around the ties' counts, on 1-3 threads, and the walk
 * happens; with rows deleted in two segments, those are walked whole (the
 * shapes' counts include deleted rows: no early stop) and still equal. */
static void test_ranked_by_shapes(void **st)
{
    (void)st;
    static const char *qs[] = {
        "failed",
        "order",
        "failed OR error",
        "failed AND order",
        "\"failed to place order\"",
        "\"failed ? ? order\"",
        "\"order failed\"~2",
        "\"failed order\"~3 OR error",
        "atleast(2, error, failed, charge, cache)",
        "again OR failed",
        "request OR completed OR cache OR miss OR email OR timeout",
    };
    static const uint32_t ks[] = {1, 2, 37, 100, 101, 999, 4000, 40000};
    enum { NQ = sizeof qs / sizeof *qs, NK = sizeof ks / sizeof *ks };
    check_pruned(tb.segs, NSEGS, qs, NQ, ks, NK, 3);
    qr_hit *h = malloc(sizeof *h * 100);
    uint32_t n, ranked[NQ];
    for (int i = 0; i < NQ; i++)
        ranked[i] = passed_over(tb.segs, NSEGS, qs[i], 100, "ranked by row shapes", h, &n);
    /* the templated phrase and words: every segment that is searched */
    assert_true(ranked[0] > 0);
    assert_true(ranked[4] > 0);
    assert_true(ranked[5] > 0);
    assert_true(ranked[8] > 0);
    /* under QUARRY_NO_SHAPES, never */
    setenv("QUARRY_NO_SHAPES", "1", 1);
    assert_int_equal(passed_over(tb.segs, NSEGS, qs[0], 100, "ranked by row shapes", h, &n), 0);
    unsetenv("QUARRY_NO_SHAPES");
    /* every 5th row of segments 0 and 3 deleted */
    uint64_t *del[2];
    const int which[2] = {0, 3};
    for (int d = 0; d < 2; d++) {
        qr_segment *seg = tb.segs[which[d]];
        del[d] = calloc((seg->rows + 63) / 64, 8);
        assert_non_null(del[d]);
        uint64_t nd = 0;
        for (uint64_t r = 0; r < seg->rows; r += 5, nd++)
            del[d][r >> 6] |= 1ull << (r & 63);
        seg->deleted = del[d];
        seg->ndeleted = nd;
    }
    check_pruned(tb.segs, NSEGS, qs, NQ, ks, NK, 2);
    /* segment 0 alone, its deleted rows passed over by the walk */
    assert_true(passed_over(tb.segs, 1, qs[0], 100, "ranked by row shapes", h, &n) == 1);
    assert_int_equal(n, 100);
    for (uint32_t i = 0; i < n; i++)
        assert_true(h[i].doc % 5 != 0);
    for (int d = 0; d < 2; d++) {
        tb.segs[which[d]]->deleted = NULL;
        tb.segs[which[d]]->ndeleted = 0;
        free(del[d]);
    }
    free(h);
    /* shapes that tie: two templates of one length holding `failed` once,
     * their rows interleaved, so the k best mix both shapes in row order */
    qr_segment *two[2];
    uint64_t x = 777;
    int64_t ts = 1758585600000000000ll;
    for (int sg = 0; sg < 2; sg++) {
        static const char *tie[] = {"failed to charge card", "failed to reach cache",
                                    "order sent to queue"};
        qr_buf text;
        qr_buf_init(&text);
        for (uint32_t r = 0; r < 3000; r++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            char line[256];
            int len = snprintf(line, sizeof line,
                               "{\"Timestamp\":%lld,\"ServiceName\":\"cart\",\"Body\":\"%s\"}\n",
                               (long long)(ts += 1000), tie[x % 3]);
            qr_buf_put(&text, line, (size_t)len);
        }
        char name[32];
        snprintf(name, sizeof name, "tie%d.qseg", sg);
        two[sg] = tu_open_built(tb.dir, name, &text, 3000);
    }
    static const char *tq[] = {"failed", "failed OR card OR cache", "\"failed to\""};
    check_pruned(two, 2, tq, 3, ks, NK, 2);
    h = malloc(sizeof *h * 100);
    assert_int_equal(passed_over(two, 2, tq[0], 100, "ranked by row shapes", h, &n), 1);
    free(h);
    for (int sg = 0; sg < 2; sg++)
        qr_seg_close(two[sg]);
}

/* The walk reads the rows' shape numbers only once they verify: a byte
 * flipped among them fails the top-k with XX001 naming the SHAPES block,
 * where the lists alone would have answered; likewise a join count that
 * takes a deleted row off by its shape number. */
static void test_ranked_walk_verifies_shapes(void **st)
{
    (void)st;
    const char *src = tb.segs[3]->path;
    char path[4200];
    snprintf(path, sizeof path, "%s/flipped.qseg", tb.dir);
    FILE *in = fopen(src, "rb"), *out = fopen(path, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, got, out), got);
    fclose(in);
    fclose(out);
    qr_segment *seg = tb.segs[3];
    const qr_blockref *shapes = NULL;
    for (uint32_t i = 0; i < seg->nsecs; i++)
        for (uint32_t b = 0; b < seg->secs[i].nblocks; b++)
            if (seg->secs[i].blocks[b].kind == IBLK_SHAPES && seg->secs[i].id == SEC_BODY)
                shapes = &seg->secs[i].blocks[b];
    assert_non_null(shapes);
    qr_hit h[100];
    uint32_t n;
    assert_true(passed_over(&seg, 1, "failed", 100, "ranked by row shapes", h, &n) == 1);
    /* the last rows' numbers (before the 3 bytes of padding) */
    uint64_t at = shapes->offset + shapes->length - 5;
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, (off_t)at), 1);
    c ^= 0x5a;
    assert_int_equal(pwrite(fd, &c, 1, (off_t)at), 1);
    close(fd);
    qr_err e;
    qr_segment *bad = qr_seg_open(path, &e);
    assert_non_null(bad);
    qr_par_search ps;
    assert_int_equal(qr_par_init_pool(&ps, NULL, tu_otel(), &bad, 1, "failed", 6, 1, &e), 0);
    assert_int_equal(qr_par_topk(&ps, QR_BY_SCORE, 100, 0, h, &n, NULL, &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, "SHAPES"));
    qr_par_free(&ps);
    /* the exhaustive scorer reads lists only: it answers */
    assert_int_equal(qr_par_init_pool(&ps, NULL, tu_otel(), &bad, 1, "failed", 6, 1, &e), 0);
    assert_int_equal(qr_par_topk(&ps, QR_BY_SCORE, 100, 1, h, &n, NULL, &e), 0);
    assert_int_equal(n, 100);
    qr_par_free(&ps);
    /* a join counted by the shapes reads no row's number, so it answers;
     * with the last row deleted it reads that row's, and fails with XX001 */
    uint64_t c0 = 0, c1 = 0;
    assert_int_equal(qr_par_init_pool(&ps, NULL, tu_otel(), &bad, 1, "failed OR error", 15, 1, &e),
                     0);
    assert_int_equal(qr_par_count(&ps, &c0, &e), 0);
    assert_true(c0 > 0);
    uint64_t *del = calloc((bad->rows + 63) / 64, 8);
    assert_non_null(del);
    del[(bad->rows - 1) >> 6] |= 1ull << ((bad->rows - 1) & 63);
    bad->deleted = del;
    bad->ndeleted = 1;
    assert_int_equal(qr_par_count(&ps, &c1, &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, "SHAPES"));
    bad->deleted = NULL;
    bad->ndeleted = 0;
    free(del);
    qr_par_free(&ps);
    qr_seg_close(bad);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pruned_equals_exhaustive_with_ties),
        cmocka_unit_test(test_pruned_equals_exhaustive_with_repeats),
        cmocka_unit_test(test_or_of_words_no_row_shares),
        cmocka_unit_test(test_phrase_bound_under_memory_limit),
        cmocka_unit_test(test_ranked_by_shapes),
        cmocka_unit_test(test_ranked_walk_verifies_shapes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
