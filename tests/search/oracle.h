/* oracle.h - the brute-force side of the search oracle tests, shared as
 * static inline functions (each test is a single-file program).
 *
 * What it owns: 100k generated rows (plus a few hand-made ones) loaded into
 * NSEG segments through gen + qr_segment_build, and an independent view of
 * every stored row (orow) read back through the column readers:
 *   - Body split into words by a tokenizer written against libunistring
 *     directly (not src/analysis), each word at its position: toks[p] is the
 *     word at position p;
 *   - the keyword fields, SeverityNumber and Timestamp as plain values.
 * And the per-row matcher: oracle()/oracle_full() evaluate a parsed query
 * (query.h) on one row with plain loops, POSIX regcomp for regexps, fnmatch
 * for LIKE and a direct Damerau-Levenshtein (OSA) distance for fuzzy.
 * oracle_tok_matches() is the per-word test of the multi-term kinds.
 *
 * Ownership: oracle_load() fills an oracle_data the caller keeps (usually a
 * static); oracle_unload() frees everything and removes the directory. */
#ifndef QR_TESTS_SEARCH_ORACLE_H
#define QR_TESTS_SEARCH_ORACLE_H

#include "testutil.h"

#include <fnmatch.h>
#include <locale.h>
#include <regex.h>
#include <unicase.h>
#include <unictype.h>
#include <unistr.h>

#include "gen/otelgen.h"
#include "index/invindex.h"
#include "match/segsearch.h"
#include "query/query.h"

#define NSEG         4
#define ROWS_PER_SEG 25000
#define ORACLE_SEED  20251123

typedef struct otok {
    char *s; /* lowercased word, NUL-terminated */
    size_t n;
} otok;

typedef struct orow {
    otok *toks; /* toks[p] = the word at position p; NULL when Body is NULL */
    uint32_t ntok;
    int body_null;
    char *service, *severity, *scope, *trace; /* NULL = NULL */
    int64_t sevnum, ts;
    int sevnum_null, ts_null;
} orow;

typedef struct oracle_data {
    char *dir;
    qr_segment *segs[NSEG];
    orow *rows[NSEG];
    uint32_t nrows[NSEG];
} oracle_data;

/* ---- the oracle tokenizer: independent of src/analysis ---- */
static inline void oracle_tokenize(const char *p, size_t n, orow *r)
{
    const uint8_t *s = (const uint8_t *)p, *end = s + n;
    size_t cap = 16;
    r->toks = malloc(sizeof *r->toks * cap);
    assert_non_null(r->toks);
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
            /* NUL-terminate (regexec and fnmatch take C strings) */
            uint8_t *t = realloc(low, ln + 1);
            assert_non_null(t);
            t[ln] = 0;
            if (r->ntok == cap) {
                otok *nt = realloc(r->toks, sizeof *r->toks * (cap *= 2));
                assert_non_null(nt);
                r->toks = nt;
            }
            r->toks[r->ntok].s = (char *)t;
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

static inline char *oracle_dupslice(qr_slice v)
{
    if (!v.p)
        return NULL;
    char *d = malloc(v.n + 1);
    memcpy(d, v.p, v.n);
    d[v.n] = 0;
    return d;
}

/* Generate the rows, build NSEG segments under a fresh temporary directory,
 * open them and read every row back into od->rows. Fails the test on error. */
/* Parse a query a test writes: a syntax error fails the test. */
static inline qr_query *oracle_parse(const char *text, qr_arena *a)
{
    qr_err e;
    qr_query *q = qr_query_parse(text, strlen(text), a, &e);
    if (!q)
        fail_msg("parse %s: %s", text, e.msg);
    return q;
}

static inline void oracle_load(oracle_data *od)
{
    memset(od, 0, sizeof *od);
    setlocale(LC_ALL, "C.UTF-8");
    od->dir = tu_tmpdir();
    assert_non_null(od->dir);
    gen_ctx *g = gen_new(ORACLE_SEED, 0);
    assert_non_null(g);
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
            /* SeverityNumber across zero and at the ends of its range */
            "{\"Body\":\"below zero\",\"SeverityNumber\":-7}",
            "{\"Body\":\"int32 max\",\"SeverityNumber\":2147483647}",
            "{\"Body\":\"int32 min\",\"SeverityNumber\":-2147483648}",
        };
        for (size_t k = 0; k < sizeof extra / sizeof *extra; k++) {
            qr_buf_put(&text, extra[k], strlen(extra[k]));
            qr_buf_put_u8(&text, '\n');
        }
        qr_buf_put_u8(&text, 0);
        qr_batch b;
        qr_err e;
        assert_int_equal(qr_batch_init(&b, tu_otel(), ROWS_PER_SEG + 10, &e), 0);
        tu_fill_batch(&b, (const char *)text.p);
        char path[4200];
        snprintf(path, sizeof path, "%s/s%d.qseg", od->dir, s);
        if (qr_segment_build(path, &b, NULL, NULL, &e) != 0)
            fail_msg("%s", e.msg);
        qr_batch_free(&b);
        qr_buf_free(&text);
        od->segs[s] = qr_seg_open(path, &e);
        assert_non_null(od->segs[s]);
        /* the oracle's view of every stored row */
        uint32_t n = (uint32_t)od->segs[s]->rows;
        od->nrows[s] = n;
        od->rows[s] = calloc(n, sizeof **od->rows);
        qr_colreader *rd[QR_OTEL_NCOLS];
        for (int c = 0; c < QR_OTEL_NCOLS; c++)
            assert_non_null(rd[c] = qr_colr_open(od->segs[s], c, &e));
        for (uint32_t r = 0; r < n; r++) {
            orow *o = &od->rows[s][r];
            qr_slice v;
            assert_int_equal(qr_colr_bytes(rd[COL_BODY], r, &v, &e), 0);
            if (v.p)
                oracle_tokenize(v.p, v.n, o);
            else
                o->body_null = 1;
            assert_int_equal(qr_colr_bytes(rd[COL_SERVICE_NAME], r, &v, &e), 0);
            o->service = oracle_dupslice(v);
            assert_int_equal(qr_colr_bytes(rd[COL_SEVERITY_TEXT], r, &v, &e), 0);
            o->severity = oracle_dupslice(v);
            assert_int_equal(qr_colr_bytes(rd[COL_SCOPE_NAME], r, &v, &e), 0);
            o->scope = oracle_dupslice(v);
            assert_int_equal(qr_colr_bytes(rd[COL_TRACE_ID], r, &v, &e), 0);
            o->trace = oracle_dupslice(v);
            assert_int_equal(
                qr_colr_int(rd[COL_SEVERITY_NUMBER], r, &o->sevnum, &o->sevnum_null, &e), 0);
            assert_int_equal(qr_colr_int(rd[COL_TIMESTAMP], r, &o->ts, &o->ts_null, &e), 0);
        }
        for (int c = 0; c < QR_OTEL_NCOLS; c++)
            qr_colr_close(rd[c]);
    }
    gen_free(g);
}

static inline void oracle_unload(oracle_data *od)
{
    for (int s = 0; s < NSEG; s++) {
        for (uint32_t r = 0; od->rows[s] && r < od->nrows[s]; r++) {
            orow *o = &od->rows[s][r];
            for (uint32_t t = 0; t < o->ntok; t++)
                free(o->toks[t].s);
            free(o->toks);
            free(o->service);
            free(o->severity);
            free(o->scope);
            free(o->trace);
        }
        free(od->rows[s]);
        if (od->segs[s])
            qr_seg_close(od->segs[s]);
    }
    if (od->dir)
        tu_rmdir(od->dir);
    memset(od, 0, sizeof *od);
}

/* The oracle's data as a cmocka group fixture: a test file writes
 * ORACLE_FIXTURE once, reads `od`, and passes setup / teardown to
 * cmocka_run_group_tests. */
#define ORACLE_FIXTURE                                                                             \
    static oracle_data od;                                                                         \
    static int setup(void **st)                                                                    \
    {                                                                                              \
        (void)st;                                                                                  \
        oracle_load(&od);                                                                          \
        return 0;                                                                                  \
    }                                                                                              \
    static int teardown(void **st)                                                                 \
    {                                                                                              \
        (void)st;                                                                                  \
        oracle_unload(&od);                                                                        \
        return 0;                                                                                  \
    }

/* ---- oracle evaluation of a parsed query on one row ---- */
static inline int tok_eq(const otok *t, const char *s, size_t n)
{
    return t->n == n && !memcmp(t->s, s, n);
}

static inline size_t oracle_cps(const char *s, size_t n, ucs4_t *out)
{
    size_t k = 0;
    const uint8_t *p = (const uint8_t *)s, *end = p + n;
    while (p < end) {
        int l = u8_mbtouc(&out[k++], p, (size_t)(end - p));
        p += l > 0 ? l : 1;
    }
    return k;
}

/* Optimal string alignment distance (Damerau-Levenshtein with adjacent
 * swaps), in code points. Words are at most 255 bytes. */
static inline unsigned osa(const char *a, size_t an, const char *b, size_t bn)
{
    ucs4_t x[300], y[300];
    size_t n = oracle_cps(a, an, x), m = oracle_cps(b, bn, y);
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

/* Does word k match the multi-term query q (prefix, regexp, LIKE, fuzzy)?
 * re: q's compiled regexp (Q_REGEXP), else unused. */
static inline int oracle_tok_matches(const otok *k, const qr_query *q, regex_t *re)
{
    switch (q->type) {
    case Q_PREFIX:
        return k->n >= q->len && !memcmp(k->s, q->text, q->len);
    case Q_REGEXP:
        return regexec(re, k->s, 0, NULL, 0) == 0;
    case Q_LIKE: {
        char pat[300];
        size_t pn = 0;
        for (size_t i = 0; i < q->len && pn < sizeof pat - 1; i++)
            pat[pn++] = q->text[i] == '%' ? '*' : q->text[i] == '_' ? '?' : q->text[i];
        pat[pn] = 0;
        return fnmatch(pat, k->s, 0) == 0;
    }
    case Q_FUZZY:
        return osa(k->s, k->n, q->text, q->len) <= q->k;
    default:
        return 0;
    }
}

static inline int any_tok(const orow *o, const qr_query *q, regex_t *re)
{
    for (uint32_t t = 0; t < o->ntok; t++)
        if (oracle_tok_matches(&o->toks[t], q, re))
            return 1;
    return 0;
}

static inline int kw_eq(const char *v, const qr_query *q)
{
    return v && strlen(v) == q->len && !memcmp(v, q->text, q->len);
}

/* The keyword field value a Q_TERM on a keyword field compares with. */
static inline const char *oracle_kw_value(const orow *o, const qr_query *q)
{
    return q->field == SEC_KW_SERVICE    ? o->service
           : q->field == SEC_KW_SEVERITY ? o->severity
           : q->field == SEC_KW_SCOPE    ? o->scope
                                         : o->trace;
}

/* 1/0 for every kind but the multi-term ones (and trees holding them),
 * for which it returns -1: use oracle_full. */
static inline int oracle(const orow *o, const qr_query *q)
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
        return kw_eq(oracle_kw_value(o, q), q);
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

/* Any query. res: the compiled regexps of q in tree order
 * (oracle_collect_regexes); *ri = 0 before the call. */
static inline int oracle_full(const orow *o, const qr_query *q, regex_t **res, int *ri)
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

/* A regexp of the query syntax as a POSIX extended regexp matching a whole
 * word; into *re (regfree it). */
static inline void oracle_regcomp(regex_t *re, const qr_query *q)
{
    char pat[600];
    snprintf(pat, sizeof pat, "^(%.*s)$", (int)q->len, q->text);
    assert_int_equal(regcomp(re, pat, REG_EXTENDED | REG_NOSUB), 0);
}

/* Compile q's regexps in tree order into res[*n...] (malloc'ed; free with
 * oracle_free_regexes). */
static inline void oracle_collect_regexes(const qr_query *q, regex_t **res, int *n)
{
    if (q->type == Q_REGEXP) {
        res[*n] = malloc(sizeof(regex_t));
        oracle_regcomp(res[*n], q);
        (*n)++;
    }
    for (uint32_t i = 0; i < q->n && q->kids; i++)
        oracle_collect_regexes(q->kids[i], res, n);
}

static inline void oracle_free_regexes(regex_t **res, int n)
{
    for (int i = 0; i < n; i++) {
        regfree(res[i]);
        free(res[i]);
    }
}

#endif
