/* test_search_oracle.c - every filter kind, and nested combinations, on
 * 100k generated rows in 4 segments, against a brute-force evaluation of
 * the same semantics over the stored rows: an independent tokenizer
 * (libunistring), POSIX regcomp for regexps, fnmatch for LIKE, a direct
 * Damerau-Levenshtein (OSA) distance for fuzzy, plain comparisons for
 * keyword, numeric and time filters. Exact doc sets must agree. */
#include "testutil.h"

#include <fnmatch.h>
#include <locale.h>
#include <regex.h>
#include <unicase.h>
#include <unictype.h>
#include <unistr.h>

#include "gen/otelgen.h"
#include "index/invindex.h"
#include "search/exec.h"
#include "search/parallel.h"

#define NSEG 4
#define ROWS_PER_SEG 25000

typedef struct otok {
    char *s;
    size_t n;
} otok;

typedef struct orow {
    otok *toks;
    uint32_t ntok;
    char *service, *severity, *scope, *trace; /* NULL = NULL */
    int64_t sevnum, ts;
    int sevnum_null, ts_null;
} orow;

static char *dir;
static qr_segment *segs[NSEG];
static orow *rows[NSEG];

/* ---- the oracle tokenizer: independent of src/analysis ---- */
static void oracle_tokenize(const char *p, size_t n, orow *r)
{
    const uint8_t *s = (const uint8_t *)p, *end = s + n;
    size_t cap = 16;
    r->toks = malloc(sizeof *r->toks * cap);
    r->ntok = 0;
    uint8_t word[4096];
    size_t wn = 0;
    int in = 0;
    while (s <= end) {
        ucs4_t c = 0;
        int len = s < end ? u8_mbtoucr(&c, s, (size_t)(end - s)) : 0;
        int is_word = 0, is_mark = 0;
        if (s < end && len > 0) {
            is_word = uc_is_general_category(c, UC_CATEGORY_L) ||
                      uc_is_general_category(c, UC_CATEGORY_N);
            is_mark = uc_is_general_category(c, UC_CATEGORY_M);
        }
        if (s < end && (is_word || (is_mark && in))) {
            if (wn + (size_t)len < sizeof word)
                memcpy(word + wn, s, (size_t)len), wn += (size_t)len;
            in = 1;
        } else if (in) {
            size_t ln = 0;
            uint8_t *low = u8_tolower(word, wn, NULL, NULL, NULL, &ln);
            if (ln > 255) { /* cut at a code point boundary */
                ln = 255;
                while (ln && (low[ln] & 0xC0) == 0x80)
                    ln--;
            }
            if (r->ntok == cap)
                r->toks = realloc(r->toks, sizeof *r->toks * (cap *= 2));
            r->toks[r->ntok].s = (char *)low;
            r->toks[r->ntok].n = ln;
            r->ntok++;
            wn = 0;
            in = 0;
        }
        if (s == end)
            break;
        s += len > 0 ? len : 1;
    }
}

static char *dupslice(qr_slice v)
{
    if (!v.p)
        return NULL;
    char *d = malloc(v.n + 1);
    memcpy(d, v.p, v.n);
    d[v.n] = 0;
    return d;
}

static int setup(void **st)
{
    (void)st;
    setlocale(LC_ALL, "C.UTF-8");
    dir = tu_tmpdir();
    gen_ctx *g = gen_new(20251123, 0);
    qr_ndjson nj;
    qr_ndjson_init(&nj);
    for (int s = 0; s < NSEG; s++) {
        qr_buf text;
        qr_buf_init(&text);
        for (int i = 0; i < ROWS_PER_SEG; i++)
            gen_row(g, &text);
        /* a few hand-made rows: empty and NULL bodies, odd text */
        static const char *extra[] = {
            "{\"Body\":\"\",\"ServiceName\":\"cart\",\"SeverityNumber\":9}",
            "{\"Timestamp\":\"2025-09-23T00:00:00.5Z\",\"SeverityText\":\"WARN\"}",
            ("{\"Timestamp\":\"2025-09-23T00:00:00.000001Z\",\"Body\":\"CACHE Miss CAFÉ "
             "Größe send_order_confirmation v1.2.3 failed failed failed\"}"),
            "{\"Body\":\"order failed to place order order\"}",
        };
        for (size_t k = 0; k < sizeof extra / sizeof *extra; k++) {
            qr_buf_put(&text, extra[k], strlen(extra[k]));
            qr_buf_put_u8(&text, '\n');
        }
        qr_buf_put_u8(&text, 0);
        qr_batch b;
        qr_err e;
        assert_int_equal(qr_batch_init(&b, ROWS_PER_SEG + 10, &e), 0);
        tu_fill_batch(&b, (const char *)text.p);
        char path[4200];
        snprintf(path, sizeof path, "%s/s%d.qseg", dir, s);
        if (qr_segment_build(path, &b, NULL, NULL, &e) != 0)
            fail_msg("%s", e.msg);
        qr_batch_free(&b);
        qr_buf_free(&text);
        segs[s] = qr_seg_open(path, &e);
        assert_non_null(segs[s]);
        /* the oracle's view of every stored row */
        uint32_t n = (uint32_t)segs[s]->rows;
        rows[s] = calloc(n, sizeof **rows);
        qr_colreader *rd[COL_COUNT];
        for (int c = 0; c < COL_COUNT; c++)
            assert_non_null(rd[c] = qr_colr_open(segs[s], c, &e));
        for (uint32_t r = 0; r < n; r++) {
            orow *o = &rows[s][r];
            qr_slice v;
            assert_int_equal(qr_colr_bytes(rd[COL_BODY], r, &v, &e), 0);
            if (v.p)
                oracle_tokenize(v.p, v.n, o);
            qr_colr_bytes(rd[COL_SERVICE_NAME], r, &v, &e);
            o->service = dupslice(v);
            qr_colr_bytes(rd[COL_SEVERITY_TEXT], r, &v, &e);
            o->severity = dupslice(v);
            qr_colr_bytes(rd[COL_SCOPE_NAME], r, &v, &e);
            o->scope = dupslice(v);
            qr_colr_bytes(rd[COL_TRACE_ID], r, &v, &e);
            o->trace = dupslice(v);
            qr_colr_int(rd[COL_SEVERITY_NUMBER], r, &o->sevnum, &o->sevnum_null, &e);
            qr_colr_int(rd[COL_TIMESTAMP], r, &o->ts, &o->ts_null, &e);
        }
        for (int c = 0; c < COL_COUNT; c++)
            qr_colr_close(rd[c]);
    }
    qr_ndjson_free(&nj);
    gen_free(g);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    for (int s = 0; s < NSEG; s++) {
        for (uint32_t r = 0; r < segs[s]->rows; r++) {
            orow *o = &rows[s][r];
            for (uint32_t t = 0; t < o->ntok; t++)
                free(o->toks[t].s);
            free(o->toks);
            free(o->service);
            free(o->severity);
            free(o->scope);
            free(o->trace);
        }
        free(rows[s]);
        qr_seg_close(segs[s]);
    }
    tu_rmdir(dir);
    return 0;
}

/* ---- oracle evaluation of a parsed query on one row ---- */
static int tok_eq(const otok *t, const char *s, size_t n) { return t->n == n && !memcmp(t->s, s, n); }

static size_t cps(const char *s, size_t n, ucs4_t *out)
{
    size_t k = 0;
    const uint8_t *p = (const uint8_t *)s, *end = p + n;
    while (p < end) {
        int l = u8_mbtouc(&out[k++], p, (size_t)(end - p));
        p += l > 0 ? l : 1;
    }
    return k;
}

static unsigned osa(const char *a, size_t an, const char *b, size_t bn)
{
    ucs4_t x[300], y[300];
    size_t n = cps(a, an, x), m = cps(b, bn, y);
    static unsigned d[302][302];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            unsigned c = x[i - 1] != y[j - 1];
            unsigned v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + c < v)
                v = d[i - 1][j - 1] + c;
            if (i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

static int any_tok(const orow *o, const qr_query *q, regex_t *re)
{
    for (uint32_t t = 0; t < o->ntok; t++) {
        const otok *k = &o->toks[t];
        char buf[300];
        memcpy(buf, k->s, k->n);
        buf[k->n] = 0;
        switch (q->type) {
        case Q_PREFIX:
            if (k->n >= q->len && !memcmp(k->s, q->text, q->len))
                return 1;
            break;
        case Q_REGEXP:
            if (regexec(re, buf, 0, NULL, 0) == 0)
                return 1;
            break;
        case Q_LIKE: {
            char pat[300];
            size_t pn = 0;
            for (size_t i = 0; i < q->len; i++)
                pat[pn++] = q->text[i] == '%' ? '*' : q->text[i] == '_' ? '?' : q->text[i];
            pat[pn] = 0;
            if (fnmatch(pat, buf, 0) == 0)
                return 1;
            break;
        }
        case Q_FUZZY:
            if (osa(k->s, k->n, q->text, q->len) <= q->k)
                return 1;
            break;
        default:
            break;
        }
    }
    return 0;
}

static int kw_eq(const char *v, const qr_query *q)
{
    return v && strlen(v) == q->len && !memcmp(v, q->text, q->len);
}

static int oracle(const orow *o, const qr_query *q)
{
    switch (q->type) {
    case Q_ALL:
        return 1;
    case Q_TERM:
        if (q->field == SEC_BODY) {
            for (uint32_t t = 0; t < o->ntok; t++)
                if (tok_eq(&o->toks[t], q->text, q->len))
                    return 1;
            return 0;
        }
        return kw_eq(q->field == SEC_KW_SERVICE    ? o->service
                     : q->field == SEC_KW_SEVERITY ? o->severity
                     : q->field == SEC_KW_SCOPE    ? o->scope
                                                   : o->trace,
                     q);
    case Q_PHRASE:
        for (uint32_t p = 0; p < o->ntok; p++) {
            if (!tok_eq(&o->toks[p], q->terms[0], q->term_lens[0]))
                continue;
            if (q->within) {
                for (uint32_t d = 1; d <= q->within + 1 && p + d < o->ntok; d++)
                    if (tok_eq(&o->toks[p + d], q->terms[1], q->term_lens[1]))
                        return 1;
                continue;
            }
            uint32_t i = 1;
            for (; i < q->n; i++)
                if (p + q->offs[i] >= o->ntok ||
                    !tok_eq(&o->toks[p + q->offs[i]], q->terms[i], q->term_lens[i]))
                    break;
            if (i == q->n)
                return 1;
        }
        return 0;
    case Q_AND:
        for (uint32_t i = 0; i < q->n; i++)
            if (!oracle(o, q->kids[i]))
                return 0;
        return 1;
    case Q_OR:
        for (uint32_t i = 0; i < q->n; i++)
            if (oracle(o, q->kids[i]))
                return 1;
        return 0;
    case Q_NOT:
        return !oracle(o, q->kids[0]);
    case Q_MINMATCH: {
        uint32_t c = 0;
        for (uint32_t i = 0; i < q->n; i++)
            c += (uint32_t)oracle(o, q->kids[i]);
        return c >= q->k;
    }
    case Q_INT_RANGE:
        return !o->sevnum_null && o->sevnum >= q->lo && o->sevnum <= q->hi;
    case Q_TIME_RANGE:
        return !o->ts_null && o->ts >= q->lo && o->ts <= q->hi;
    default:
        break;
    }
    return -1; /* multi-term: handled by caller with the regex */
}

static int oracle_full(const orow *o, const qr_query *q, regex_t **res, int *ri)
{
    switch (q->type) {
    case Q_PREFIX:
    case Q_REGEXP:
    case Q_LIKE:
    case Q_FUZZY: {
        regex_t *re = q->type == Q_REGEXP ? res[(*ri)++] : NULL;
        return any_tok(o, q, re);
    }
    case Q_AND:
    case Q_OR:
    case Q_MINMATCH:
    case Q_NOT: {
        uint32_t c = 0;
        for (uint32_t i = 0; i < q->n; i++)
            c += (uint32_t)oracle_full(o, q->kids[i], res, ri);
        if (q->type == Q_AND)
            return c == q->n;
        if (q->type == Q_OR)
            return c > 0;
        if (q->type == Q_NOT)
            return c == 0;
        return c >= q->k;
    }
    default:
        return oracle(o, q);
    }
}

static void collect_regexes(const qr_query *q, regex_t **res, int *n)
{
    if (q->type == Q_REGEXP) {
        char pat[600];
        snprintf(pat, sizeof pat, "^(%.*s)$", (int)q->len, q->text);
        res[*n] = malloc(sizeof(regex_t));
        assert_int_equal(regcomp(res[*n], pat, REG_EXTENDED | REG_NOSUB), 0);
        (*n)++;
    }
    for (uint32_t i = 0; i < q->n && q->kids; i++)
        collect_regexes(q->kids[i], res, n);
}

static uint64_t check_query(const char *text)
{
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_err e;
    qr_query *q = qr_query_parse(text, strlen(text), &a, &e);
    if (!q)
        fail_msg("parse %s: %s", text, e.msg);
    regex_t *res[16];
    int nre = 0;
    collect_regexes(q, res, &nre);
    uint64_t total = 0;
    for (int s = 0; s < NSEG; s++) {
        qr_segsearch ss;
        qr_segsearch_init(&ss, segs[s]);
        qr_it *it = qr_segsearch_compile(&ss, q, &a, &e);
        if (!it)
            fail_msg("compile %s: %s", text, e.msg);
        uint32_t n = (uint32_t)segs[s]->rows;
        uint32_t d = qr_it_next(it);
        uint64_t matched = 0;
        for (uint32_t r = 0; r < n; r++) {
            int ri = 0;
            int want = oracle_full(&rows[s][r], q, res, &ri);
            if (want) {
                if (d != r)
                    fail_msg("%s: segment %d: oracle has row %u, index gives %u", text, s, r, d);
                d = qr_it_next(it);
                matched++;
            } else if (d == r) {
                fail_msg("%s: segment %d: index has row %u, oracle does not", text, s, r);
            }
        }
        assert_int_equal(d, QR_NO_DOC);
        assert_false(qr_it_failed(it));
        /* counting without walking gives the same number */
        uint64_t c;
        assert_int_equal(qr_segsearch_count(&ss, q, &a, &c, &e), 0);
        assert_int_equal(c, matched);
        total += matched;
        qr_segsearch_close(&ss);
    }
    qr_query_release(q);
    for (int i = 0; i < nre; i++) {
        regfree(res[i]);
        free(res[i]);
    }
    qr_arena_free(&a);
    return total;
}

static void test_terms_in_every_band(void **st)
{
    (void)st;
    const char *qs[] = {"failed", "error", "charge", "order", "cache", "place", "connection",
                        "service", "request", "conversion", "post", "email", "confirmation",
                        "send", "refused", "payment", "expected", "CACHE", "Größe", "café",
                        "500", "v1", "nosuchterm", "e8092fe38864"};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++)
        check_query(qs[i]);
    /* DATASET shape, roughly (100k rows): failed is a high-band term */
    assert_true(check_query("failed") > 10000);
    assert_true(check_query("payment") < 1000);
}

static void test_boolean_and_nested(void **st)
{
    (void)st;
    const char *qs[] = {"error OR failed",
                        "failed AND order",
                        "failed order",
                        "error -cache",
                        "error AND NOT cache",
                        "NOT failed",
                        "failed AND charge AND card AND cache",
                        "atleast(2, error, failed, charge, cache)",
                        "atleast(3, error, failed, charge, cache, order)",
                        "(error OR failed) AND (order OR charge) AND NOT cache",
                        "(cache AND NOT miss) OR (email AND NOT (send OR confirmation))",
                        "NOT (failed OR error OR cache OR charge)",
                        "send_order_confirmation"};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++)
        check_query(qs[i]);
}

static void test_phrases_and_proximity(void **st)
{
    (void)st;
    const char *qs[] = {"\"failed to place order\"",
                        "\"place order\"",
                        "\"post to email service expected 200 got 500\"",
                        "\"failed ? ? order\"",
                        "\"failed ? place\"",
                        "\"order order\"",
                        "\"failed failed failed\"",
                        "\"failed order\"~2",
                        "\"failed order\"~0",
                        "\"charge card\"~5",
                        "\"order failed\"~3",
                        "\"failed to place order\" AND NOT cache"};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++)
        check_query(qs[i]);
    /* every "place order" is inside "failed to place order" */
    assert_int_equal(check_query("\"place order\""), check_query("\"failed to place order\""));
}

static void test_multi_term(void **st)
{
    (void)st;
    const char *qs[] = {"ord*", "conn*", "charg*", "e8*", "zzz*", "/c.che/", "/ord(er|ers)?/",
                        "/[0-9]{3}/", "/.*nnec.*/", "/ca(ch|sh)e|card/", "like:%tion",
                        "like:%nnec%", "like:c_che", "like:ord%", "cahce~1", "cahce~2",
                        "ordre~1", "failde~1", "paymnet~2", "like:%TION",
                        "ord* AND NOT order", "(cahce~1 OR /c.rd/) AND failed"};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++)
        check_query(qs[i]);
    /* the only word starting with charg is charge; c.che matches only cache */
    assert_int_equal(check_query("charg*"), check_query("charge"));
    assert_int_equal(check_query("/c.che/"), check_query("cache"));
}

static void test_keyword_numeric_time(void **st)
{
    (void)st;
    const char *qs[] = {"service:cart", "service:frontend-proxy", "service:\"nosuch\"",
                        "severity:ERROR", "severity:error", "scope:cart.cartstore.ValkeyCartStore",
                        "sevnum:>=13", "sevnum:17", "sevnum:[5 TO 9]", "sevnum:<9",
                        "service:cart AND severity:ERROR AND failed",
                        "time:[2025-09-23T00:00:00.01Z TO 2025-09-23T00:00:00.02Z]",
                        "time:>=2025-09-23T00:00:00.15Z", "time:<2025-09-23T00:00:00.000002Z",
                        "time:[2025-09-23T00:00:00.05Z TO 2025-09-23T00:00:00.09Z] AND error",
                        "sevnum:>=13 AND NOT service:cart"};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++)
        check_query(qs[i]);
    /* a trace id present in the data */
    char q[64];
    snprintf(q, sizeof q, "trace:%s", rows[1][77].trace ? rows[1][77].trace : "x");
    assert_true(check_query(q) >= 1 || !rows[1][77].trace || !rows[1][77].trace[0]);
}

/* Counting with several threads (one task per segment, a query copy per
 * thread) gives the oracle's totals. */
static void test_parallel_count(void **st)
{
    (void)st;
    const char *qs[] = {"failed", "\"failed to place order\"", "ord*", "cahce~1",
                        "atleast(2, error, failed, charge, cache)", "like:%tion AND NOT cache",
                        "service:cart AND sevnum:>=13"};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        uint64_t want = check_query(qs[i]);
        for (int threads = 1; threads <= 3; threads++) {
            qr_par_search ps;
            qr_err e;
            assert_int_equal(qr_par_init(&ps, segs, NSEG, qs[i], strlen(qs[i]), threads, &e), 0);
            for (int rep = 0; rep < 2; rep++) {
                uint64_t got = 0;
                assert_int_equal(qr_par_count(&ps, &got, &e), 0);
                assert_int_equal(got, want);
            }
            qr_par_free(&ps);
        }
    }
}

static void test_parse_errors(void **st)
{
    (void)st;
    const char *bad[][2] = {
        {"(failed", "query: expected ')' at byte 1"},
        {"\"failed", "query: unterminated '\"' at byte 1"},
        {"failed AND", "query: AND without a right side at byte 11"},
        {"/c.che", "query: unterminated regexp '/' at byte 1"},
        {"atleast(5, a, b)", "query: atleast(K, ...) needs 1 <= K <= number of clauses at byte 1"},
        {"foo:bar", "query: unknown field (use service, severity, scope, trace, sevnum, time or "
                    "like) at byte 1"},
        {"cache~3", "query: fuzzy distance must be ~1 or ~2 at byte 6"},
        {"...", "query: '...' has no letters or digits to search for at byte 1"},
        {"---", "query: unexpected end of query at byte 4"},
        {"((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((("
         "(((((((((((((((((((((((a",
         "query: nesting deeper than 100 at byte 102"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        qr_arena a;
        qr_arena_init(&a, 4096, 0);
        qr_err e;
        qr_err_clear(&e);
        assert_null(qr_query_parse(bad[i][0], strlen(bad[i][0]), &a, &e));
        if (strcmp(e.msg, bad[i][1]) != 0)
            fail_msg("%s: got \"%s\"", bad[i][0], e.msg);
        qr_arena_free(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_terms_in_every_band),
        cmocka_unit_test(test_boolean_and_nested),
        cmocka_unit_test(test_phrases_and_proximity),
        cmocka_unit_test(test_multi_term),
        cmocka_unit_test(test_keyword_numeric_time),
        cmocka_unit_test(test_parallel_count),
        cmocka_unit_test(test_parse_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
