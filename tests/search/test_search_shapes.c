/* test_search_shapes.c - search over tables that are not the OpenTelemetry
 * table: http_logs (20k rows) and github_events (6k rows) from the library's
 * generators, with the definition qr_infer_schema gives for them, in 4 and 3
 * segments, against a brute-force oracle computed from the generated JSON
 * lines themselves.
 *
 * The oracle reads every line on its own (util/json.h's pull parser for the
 * values) and keeps per row the top-level values, every leaf of an object as
 * (path, value) by its own path walk (keys joined with '.', array elements
 * sharing their array's path), and the words of every string (a top-level
 * string, or an object's string leaves in document order) by its own
 * tokenizer: runs of ASCII letters and digits, lowercased; non-ASCII code
 * points by their Unicode category through libunistring (letters and digits
 * are word characters, marks extend a word) so that word positions and
 * lengths are right on rows with non-ASCII text (queries use ASCII words).
 * Every query is written twice: as the text the engine parses and as an
 * oracle expression (ox) built here, so a query that reaches the wrong
 * column fails as well.
 *
 * Checked with 1 and 2 threads: for every query the count, the exact
 * matching rows (qr_par_first) and its class (some rows, none, all); for
 * some, the rows as NDJSON (qr_par_rows) equal the input lines byte for
 * byte; newest first (k 10 and 100) in the oracle's order; by score (k 10
 * and 100) pruned equal to exhaustive bit for bit, the scores equal to a
 * brute-force BM25 (docs/SEARCH.md "Relevance") within 1e-9 relative, ties
 * in (segment, row) order. Plus the inferred definitions and the parse
 * errors' exact messages. */
#include "testutil.h"

#include <math.h>
#include <stdarg.h>
#include <time.h>
#include <unicase.h>
#include <unictype.h>
#include <unistr.h>

#include "gen/ghevents.h"
#include "gen/httplogs.h"
#include "index/norms.h"
#include "ingest/infer.h"
#include "search/parallel.h"
#include "query/query.h"
#include "search/topk.h"
#include "util/json.h"

#define SEED      20251207u
#define HTTP_ROWS 20000u
#define GH_ROWS   6000u
#define MAXSEG    4
#define MAXKEYS   16
#define MAXW      8
#define PATH_MAX_ 1024
#define K1        1.2
#define BM25_B    0.75
#define REL_TOL   1e-9
#define TERM_MAX  255 /* invindex.h: longer keyword and path terms are not indexed */

/* ---- the oracle's view of the rows ---- */
typedef struct otok {
    const char *s; /* lowercased word, in the dataset's arena */
    uint32_t n;
} otok;

typedef struct oleaf {
    const char *path; /* relative to its column, NUL-terminated */
    const char *val;  /* a string's decoded bytes, else the JSON text */
    uint32_t pn, vn;
    int str; /* the leaf is a string */
} oleaf;

typedef struct oval {
    const char *key; /* NUL-terminated */
    qj_type kind;    /* the JSON kind of the value */
    const char *str; /* QJ_STRING: decoded bytes */
    size_t sn;
    int64_t num;           /* QJ_NUMBER: the integer; QJ_TRUE 1, QJ_FALSE 0 */
    uint32_t leaf0, nleaf; /* objects and arrays: their leaves */
    uint32_t tok0, ntok;   /* the words of the string or of the string leaves */
} oval;

typedef struct orow {
    const char *line; /* into the dataset's text, without its '\n' */
    size_t len;
    uint32_t nval;
    oval v[MAXKEYS];
    int64_t ts; /* the time key in ns */
} orow;

typedef struct dataset {
    const char *name;
    const char *timekey; /* the key the rows are sorted by */
    const char *deftext; /* the column of the default full-text index */
    qr_buf text;         /* every generated line */
    orow *rows;
    uint32_t nrows;
    otok *toks;
    size_t ntoks, tokcap;
    oleaf *leaves;
    size_t nleaves, leafcap;
    qr_arena arena; /* decoded strings, words, paths */
    qr_tabdef *def;
    size_t sample; /* bytes given to qr_infer_schema */
    char *dir;
    qr_segment *segs[MAXSEG];
    uint32_t nsegs;
    uint32_t seg_first[MAXSEG + 1];
    /* BM25 statistics of the default full-text column */
    uint64_t n_docs, total_words;
    double avgdl;
    /* per-query scratch, one per row */
    uint8_t *match, *seen;
    double *score;
    uint32_t *idx;
} dataset;

static dataset http, gh;
static qr_arena oxa; /* oracle expressions */

/* ---- the oracle tokenizer ---- */
static int ascii_alnum(unsigned c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static void tok_push(dataset *d, const uint8_t *w, size_t n, int ascii)
{
    uint8_t *low;
    size_t ln = n;
    if (ascii) {
        low = qr_arena_alloc(&d->arena, n + 1);
        assert_non_null(low);
        for (size_t i = 0; i < n; i++)
            low[i] = (uint8_t)(w[i] >= 'A' && w[i] <= 'Z' ? w[i] + 32 : w[i]);
    } else {
        uint8_t *u = u8_tolower(w, n, NULL, NULL, NULL, &ln);
        assert_non_null(u);
        low = qr_arena_alloc(&d->arena, ln + 1);
        assert_non_null(low);
        memcpy(low, u, ln);
        free(u);
    }
    if (ln > 255) { /* cut at a code point boundary */
        ln = 255;
        while (ln && (low[ln] & 0xC0) == 0x80)
            ln--;
    }
    if (d->ntoks == d->tokcap) {
        d->tokcap = d->tokcap ? d->tokcap * 2 : 1 << 16;
        otok *nt = realloc(d->toks, sizeof *nt * d->tokcap);
        assert_non_null(nt);
        d->toks = nt;
    }
    d->toks[d->ntoks++] = (otok){(const char *)low, (uint32_t)ln};
}

static void tokenize(dataset *d, const char *p, size_t n)
{
    const uint8_t *s = (const uint8_t *)p, *end = s + n, *start = NULL;
    int ascii = 1;
    while (s < end) {
        int word, mark = 0, len = 1;
        if (*s < 0x80) {
            word = ascii_alnum(*s);
        } else {
            ucs4_t c;
            len = u8_mbtoucr(&c, s, (size_t)(end - s));
            if (len < 0) {
                len = 1;
                word = 0;
            } else {
                word = uc_is_general_category(c, UC_CATEGORY_L) ||
                       uc_is_general_category(c, UC_CATEGORY_N);
                mark = uc_is_general_category(c, UC_CATEGORY_M);
            }
        }
        if (word || (mark && start)) {
            if (!start)
                start = s, ascii = 1;
            if (*s >= 0x80)
                ascii = 0;
        } else if (start) {
            tok_push(d, start, (size_t)(s - start), ascii);
            start = NULL;
        }
        s += len;
    }
    if (start)
        tok_push(d, start, (size_t)(end - start), ascii);
}

/* ---- reading a line: values, leaves, words ---- */
static void add_leaf(dataset *d, const char *path, size_t pn, const char *v, size_t vn, int str)
{
    if (d->nleaves == d->leafcap) {
        d->leafcap = d->leafcap ? d->leafcap * 2 : 1 << 16;
        oleaf *nl = realloc(d->leaves, sizeof *nl * d->leafcap);
        assert_non_null(nl);
        d->leaves = nl;
    }
    char *pc = qr_arena_alloc(&d->arena, pn + 1);
    assert_non_null(pc);
    memcpy(pc, path, pn);
    pc[pn] = 0;
    d->leaves[d->nleaves++] = (oleaf){pc, v, (uint32_t)pn, (uint32_t)vn, str};
}

static void walk(dataset *d, qr_json *j, char *path, size_t plen)
{
    qr_slice s;
    int r, b;
    switch (qj_peek(j)) {
    case QJ_OBJECT:
        assert_int_equal(qj_object_begin(j), 0);
        while ((r = qj_object_next(j, &s, &d->arena)) == 1) {
            size_t n = plen;
            assert_true(plen + 1 + s.n < PATH_MAX_);
            if (n)
                path[n++] = '.';
            memcpy(path + n, s.p, s.n);
            walk(d, j, path, n + s.n);
        }
        assert_int_equal(r, 0);
        return;
    case QJ_ARRAY:
        assert_int_equal(qj_array_begin(j), 0);
        while ((r = qj_array_next(j)) == 1)
            walk(d, j, path, plen);
        assert_int_equal(r, 0);
        return;
    case QJ_STRING:
        assert_int_equal(qj_string(j, &s, &d->arena), 0);
        add_leaf(d, path, plen, s.p, s.n, 1);
        tokenize(d, s.p, s.n);
        return;
    case QJ_NUMBER:
        assert_int_equal(qj_number(j, &s), 0);
        add_leaf(d, path, plen, s.p, s.n, 0);
        return;
    case QJ_TRUE:
    case QJ_FALSE:
        assert_int_equal(qj_bool(j, &b), 0);
        add_leaf(d, path, plen, b ? "true" : "false", b ? 4 : 5, 0);
        return;
    case QJ_NULL:
        assert_int_equal(qj_null(j), 0);
        add_leaf(d, path, plen, "null", 4, 0);
        return;
    default:
        fail_msg("%s: bad JSON value", d->name);
    }
}

/* The generators' integers: non-negative, no sign, fraction or exponent. */
static int64_t parse_uint(const char *s, size_t n)
{
    int64_t v = 0;
    assert_true(n > 0 && n < 19);
    for (size_t i = 0; i < n; i++) {
        assert_true(s[i] >= '0' && s[i] <= '9');
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int dd)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + dd - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* "YYYY-MM-DDTHH:MM:SSZ" (the generators' form, and the tests') in ns. */
static int64_t utc_ns(const char *s, size_t n)
{
    char b[32];
    int y, mo, dd, h, mi, se;
    char z = 0;
    assert_int_equal(n, 20);
    memcpy(b, s, n);
    b[n] = 0;
    if (sscanf(b, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &dd, &h, &mi, &se, &z) != 7 || z != 'Z')
        fail_msg("not a UTC time: %s", b);
    int64_t sec = days_from_civil(y, mo, dd) * 86400 + h * 3600 + mi * 60 + se;
    return sec * 1000000000;
}

static int64_t T(const char *s) { return utc_ns(s, strlen(s)); }

static const oval *val_of(const orow *o, const char *key)
{
    for (uint32_t i = 0; i < o->nval; i++)
        if (!strcmp(o->v[i].key, key))
            return &o->v[i];
    return NULL;
}

static void parse_row(dataset *d, orow *o, const char *line, size_t n)
{
    qr_json j;
    qr_slice key, s;
    char path[PATH_MAX_];
    int r, b;
    o->line = line;
    o->len = n;
    qj_init(&j, line, n);
    assert_int_equal(qj_object_begin(&j), 0);
    while ((r = qj_object_next(&j, &key, &d->arena)) == 1) {
        assert_true(o->nval < MAXKEYS);
        oval *v = &o->v[o->nval++];
        memset(v, 0, sizeof *v);
        char *k = qr_arena_alloc(&d->arena, key.n + 1);
        assert_non_null(k);
        memcpy(k, key.p, key.n);
        k[key.n] = 0;
        v->key = k;
        v->kind = qj_peek(&j);
        v->tok0 = (uint32_t)d->ntoks;
        v->leaf0 = (uint32_t)d->nleaves;
        switch (v->kind) {
        case QJ_STRING:
            assert_int_equal(qj_string(&j, &s, &d->arena), 0);
            v->str = s.p;
            v->sn = s.n;
            tokenize(d, s.p, s.n);
            break;
        case QJ_NUMBER:
            assert_int_equal(qj_number(&j, &s), 0);
            v->num = parse_uint(s.p, s.n);
            break;
        case QJ_TRUE:
        case QJ_FALSE:
            assert_int_equal(qj_bool(&j, &b), 0);
            v->num = b;
            break;
        case QJ_NULL:
            assert_int_equal(qj_null(&j), 0);
            break;
        case QJ_OBJECT:
        case QJ_ARRAY:
            walk(d, &j, path, 0);
            break;
        default:
            fail_msg("%s: bad line %.*s", d->name, (int)n, line);
        }
        v->ntok = (uint32_t)(d->ntoks - v->tok0);
        v->nleaf = (uint32_t)(d->nleaves - v->leaf0);
    }
    assert_int_equal(r, 0);
    assert_int_equal(qj_finish(&j), 0);
    const oval *t = val_of(o, d->timekey);
    assert_non_null(t);
    if (t->kind == QJ_NUMBER)
        o->ts = t->num * 1000000000; /* epoch seconds */
    else
        o->ts = utc_ns(t->str, t->sn);
}

/* Generate, read, infer, build the segments (rows split in order at
 * bounds[1..nsegs-1]) and open them. */
static void load(dataset *d, int is_gh, uint32_t nrows, const uint32_t *bounds, uint32_t nsegs)
{
    qr_err e;
    d->nrows = nrows;
    d->nsegs = nsegs;
    qr_arena_init(&d->arena, 1 << 20, 0);
    qr_buf_init(&d->text);
    if (is_gh) {
        ghevents_ctx *g = ghevents_new(SEED, 0);
        assert_non_null(g);
        for (uint32_t i = 0; i < nrows; i++)
            ghevents_row(g, &d->text);
        ghevents_free(g);
    } else {
        httplogs_ctx *g = httplogs_new(SEED, 0);
        assert_non_null(g);
        for (uint32_t i = 0; i < nrows; i++)
            httplogs_row(g, &d->text);
        httplogs_free(g);
    }
    assert_false(d->text.oom);
    d->rows = calloc(nrows, sizeof *d->rows);
    d->match = calloc(nrows, 1);
    d->seen = calloc(nrows, 1);
    d->score = calloc(nrows, sizeof *d->score);
    d->idx = calloc(nrows, sizeof *d->idx);
    assert_true(d->rows && d->match && d->seen && d->score && d->idx);
    const char *p = (const char *)d->text.p, *end = p + d->text.len;
    for (uint32_t i = 0; i < nrows; i++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        assert_non_null(nl);
        parse_row(d, &d->rows[i], p, (size_t)(nl - p));
        if (i)
            assert_true(d->rows[i].ts >= d->rows[i - 1].ts);
        p = nl + 1;
    }
    assert_true(p == end);
    /* the definition, from the sample ingest would take */
    d->sample = d->text.len < QR_INFER_SAMPLE_BYTES ? d->text.len : QR_INFER_SAMPLE_BYTES;
    d->def = qr_infer_schema(d->name, (const char *)d->text.p, d->sample, d->name, &e);
    if (!d->def)
        fail_msg("%s: infer: %s", d->name, e.msg);
    /* the segments */
    d->dir = tu_tmpdir();
    assert_non_null(d->dir);
    for (uint32_t s = 0; s < nsegs; s++) {
        uint32_t lo = bounds[s], hi = bounds[s + 1];
        d->seg_first[s] = lo;
        qr_buf t;
        qr_buf_init(&t);
        const char *from = d->rows[lo].line;
        const char *to = d->rows[hi - 1].line + d->rows[hi - 1].len + 1;
        qr_buf_put(&t, from, (size_t)(to - from));
        qr_buf_put_u8(&t, 0);
        assert_false(t.oom);
        qr_batch b;
        assert_int_equal(qr_batch_init(&b, d->def, hi - lo, &e), 0);
        tu_fill_batch(&b, (const char *)t.p);
        assert_int_equal(b.nrows, hi - lo);
        char path[4200];
        snprintf(path, sizeof path, "%s/s%u.qseg", d->dir, s);
        if (qr_segment_build(path, &b, NULL, NULL, &e) != 0)
            fail_msg("%s: build %s: %s", d->name, path, e.msg);
        qr_batch_free(&b);
        qr_buf_free(&t);
        if (!(d->segs[s] = qr_seg_open(path, &e)))
            fail_msg("%s: open %s: %s", d->name, path, e.msg);
        assert_int_equal(d->segs[s]->rows, hi - lo);
    }
    d->seg_first[nsegs] = nrows;
    /* BM25 statistics of the default column: N and avgdl over the rows
     * where it is not NULL */
    for (uint32_t i = 0; i < nrows; i++) {
        const oval *v = val_of(&d->rows[i], d->deftext);
        if (v && v->kind != QJ_NULL) {
            d->n_docs++;
            d->total_words += v->ntok;
        }
    }
    assert_true(d->n_docs > 0);
    d->avgdl = (double)d->total_words / (double)d->n_docs;
}

static void unload(dataset *d)
{
    for (uint32_t s = 0; s < d->nsegs; s++)
        if (d->segs[s])
            qr_seg_close(d->segs[s]);
    if (d->dir)
        tu_rmdir(d->dir);
    qr_tabdef_free(d->def);
    qr_buf_free(&d->text);
    qr_arena_free(&d->arena);
    free(d->rows);
    free(d->toks);
    free(d->leaves);
    free(d->match);
    free(d->seen);
    free(d->score);
    free(d->idx);
    memset(d, 0, sizeof *d);
}

/* ---- oracle expressions ---- */
typedef enum {
    OX_WORD,   /* col has the word */
    OX_PHRASE, /* col has the words at consecutive positions ("?": any word) */
    OX_PREFIX, /* col has a word starting with w[0] */
    OX_KW,     /* col is the string w[0] */
    OX_NUM,    /* col is a number (or bool) in [lo, hi] */
    OX_TIME,   /* the time key in [lo, hi] ns */
    OX_PATH,   /* col has a leaf at path whose value is w[0] */
    OX_AND,
    OX_OR,
    OX_NOT
} oxkind;

typedef struct ox {
    oxkind kind;
    const char *col; /* top-level key; NULL = the default full-text column */
    const char *path;
    const char *w[MAXW];
    size_t wn[MAXW];
    uint32_t nw;
    int64_t lo, hi;
    struct ox *k[MAXW];
    uint32_t nk;
    double idf; /* OX_WORD on the default column (ox_prepare) */
} ox;

static char *ox_dup(const char *s, size_t n)
{
    char *c = qr_arena_alloc(&oxa, n + 1);
    assert_non_null(c);
    memcpy(c, s, n);
    c[n] = 0;
    return c;
}

static ox *ox_new(oxkind kind, const char *col)
{
    ox *x = qr_arena_alloc(&oxa, sizeof *x);
    assert_non_null(x);
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->col = col ? ox_dup(col, strlen(col)) : NULL;
    return x;
}

static ox *ox_str(oxkind kind, const char *col, const char *s)
{
    ox *x = ox_new(kind, col);
    x->w[0] = ox_dup(s, strlen(s));
    x->wn[0] = strlen(s);
    x->nw = 1;
    return x;
}

static ox *o_word(const char *col, const char *w) { return ox_str(OX_WORD, col, w); }
static ox *o_prefix(const char *col, const char *w) { return ox_str(OX_PREFIX, col, w); }
static ox *o_kw(const char *col, const char *v) { return ox_str(OX_KW, col, v); }

/* words: lowercase words separated by single spaces */
static ox *o_phrase(const char *col, const char *words)
{
    ox *x = ox_new(OX_PHRASE, col);
    const char *p = words;
    while (*p) {
        const char *sp = strchr(p, ' ');
        size_t n = sp ? (size_t)(sp - p) : strlen(p);
        assert_true(x->nw < MAXW);
        x->w[x->nw] = ox_dup(p, n);
        x->wn[x->nw++] = n;
        p += n + (sp ? 1 : 0);
    }
    assert_true(x->nw >= 2);
    return x;
}

static ox *o_num(const char *col, int64_t lo, int64_t hi)
{
    ox *x = ox_new(OX_NUM, col);
    x->lo = lo;
    x->hi = hi;
    return x;
}

static ox *o_time(int64_t lo, int64_t hi)
{
    ox *x = ox_new(OX_TIME, NULL);
    x->lo = lo;
    x->hi = hi;
    return x;
}

static ox *o_path(const char *col, const char *path, const char *v)
{
    ox *x = ox_str(OX_PATH, col, v);
    x->path = ox_dup(path, strlen(path));
    return x;
}

static ox *ox_listv(oxkind kind, ox *first, va_list ap)
{
    ox *x = ox_new(kind, NULL);
    for (ox *k = first; k; k = va_arg(ap, ox *)) {
        assert_true(x->nk < MAXW);
        x->k[x->nk++] = k;
    }
    return x;
}

/* Lists of clauses: o_and(a, b, ...), o_or(a, b, ...). */
static ox *ox_list(oxkind kind, ox *first, ...)
{
    va_list ap;
    va_start(ap, first);
    ox *x = ox_listv(kind, first, ap);
    va_end(ap);
    return x;
}
#define o_and(...) ox_list(OX_AND, __VA_ARGS__, (ox *)NULL)
#define o_or(...)  ox_list(OX_OR, __VA_ARGS__, (ox *)NULL)

static ox *o_not(ox *k)
{
    ox *x = ox_new(OX_NOT, NULL);
    x->k[0] = k;
    x->nk = 1;
    return x;
}

static const char *ox_col(const dataset *d, const ox *x) { return x->col ? x->col : d->deftext; }

static int tok_is(const otok *t, const char *s, size_t n)
{
    return t->n == n && !memcmp(t->s, s, n);
}

static uint32_t word_tf(const dataset *d, const oval *v, const char *w, size_t n)
{
    uint32_t tf = 0;
    for (uint32_t i = 0; i < v->ntok; i++)
        tf += (uint32_t)tok_is(&d->toks[v->tok0 + i], w, n);
    return tf;
}

static int ox_match(const dataset *d, const orow *o, const ox *x)
{
    const oval *v = NULL;
    if (x->kind < OX_AND && x->kind != OX_TIME)
        v = val_of(o, ox_col(d, x));
    switch (x->kind) {
    case OX_WORD:
        return v && word_tf(d, v, x->w[0], x->wn[0]) > 0;
    case OX_PHRASE:
        for (uint32_t p = 0; v && p + x->nw <= v->ntok; p++) {
            uint32_t i = 0;
            while (i < x->nw && ((x->wn[i] == 1 && x->w[i][0] == '?') ||
                                 tok_is(&d->toks[v->tok0 + p + i], x->w[i], x->wn[i])))
                i++;
            if (i == x->nw)
                return 1;
        }
        return 0;
    case OX_PREFIX:
        for (uint32_t i = 0; v && i < v->ntok; i++) {
            const otok *t = &d->toks[v->tok0 + i];
            if (t->n >= x->wn[0] && !memcmp(t->s, x->w[0], x->wn[0]))
                return 1;
        }
        return 0;
    case OX_KW:
        return v && v->kind == QJ_STRING && v->sn == x->wn[0] && !memcmp(v->str, x->w[0], v->sn);
    case OX_NUM:
        return v && (v->kind == QJ_NUMBER || v->kind == QJ_TRUE || v->kind == QJ_FALSE) &&
               v->num >= x->lo && v->num <= x->hi;
    case OX_TIME:
        return o->ts >= x->lo && o->ts <= x->hi;
    case OX_PATH:
        for (uint32_t i = 0; v && i < v->nleaf; i++) {
            const oleaf *l = &d->leaves[v->leaf0 + i];
            if (!strcmp(l->path, x->path) && l->vn == x->wn[0] && !memcmp(l->val, x->w[0], l->vn) &&
                l->pn + 1 + l->vn <= TERM_MAX)
                return 1;
        }
        return 0;
    case OX_AND:
        for (uint32_t i = 0; i < x->nk; i++)
            if (!ox_match(d, o, x->k[i]))
                return 0;
        return 1;
    case OX_OR:
        for (uint32_t i = 0; i < x->nk; i++)
            if (ox_match(d, o, x->k[i]))
                return 1;
        return 0;
    case OX_NOT:
        return !ox_match(d, o, x->k[0]);
    }
    return 0;
}

/* ---- brute-force BM25 on the default full-text column ---- */
static int scored(const dataset *d, const ox *x)
{
    return x->kind <= OX_PREFIX && !strcmp(ox_col(d, x), d->deftext);
}

/* idf of the scored words; only words (no phrase or prefix) may be scored */
static void ox_prepare(const dataset *d, ox *x)
{
    if (scored(d, x)) {
        assert_int_equal(x->kind, OX_WORD);
        uint64_t df = 0;
        for (uint32_t r = 0; r < d->nrows; r++) {
            const oval *v = val_of(&d->rows[r], d->deftext);
            df += v && word_tf(d, v, x->w[0], x->wn[0]) > 0;
        }
        x->idf = log1p(((double)d->n_docs - (double)df + 0.5) / ((double)df + 0.5));
    }
    for (uint32_t i = 0; i < x->nk; i++)
        ox_prepare(d, x->k[i]);
}

/* The score of a row x matches: sums in written order, filters 0. */
static double ox_score(const dataset *d, const orow *o, const ox *x)
{
    if (x->kind == OX_WORD && scored(d, x)) {
        const oval *v = val_of(o, d->deftext);
        double tf = (double)word_tf(d, v, x->w[0], x->wn[0]);
        double dl = (double)qr_norm_decode(qr_norm_encode(v->ntok));
        return x->idf * tf / (tf + K1 * (1.0 - BM25_B + BM25_B * dl / d->avgdl));
    }
    double sum = 0;
    if (x->kind == OX_AND || x->kind == OX_OR)
        for (uint32_t i = 0; i < x->nk; i++)
            if (x->kind == OX_AND || ox_match(d, o, x->k[i]))
                sum += ox_score(d, o, x->k[i]);
    return sum;
}

/* ---- comparing the engine with the oracle ---- */
enum { SOME = 1, NONE = 2, ALL = 3, NONZERO = 4 }; /* NONZERO: some or all */

static uint32_t oracle_run(dataset *d, const ox *x)
{
    uint32_t nm = 0;
    for (uint32_t r = 0; r < d->nrows; r++)
        nm += d->match[r] = (uint8_t)ox_match(d, &d->rows[r], x);
    return nm;
}

static void par_open(dataset *d, qr_par_search *ps, const char *q, int threads)
{
    qr_err e;
    if (qr_par_init(ps, d->def, d->segs, d->nsegs, q, strlen(q), threads, &e) != 0)
        fail_msg("%s: '%s' (%d threads): %s", d->name, q, threads, e.msg);
}

/* The row a hit names, as an input row index. */
static uint32_t row_of(const dataset *d, const char *q, const qr_hit *h)
{
    if (h->seg >= d->nsegs || h->doc >= d->seg_first[h->seg + 1] - d->seg_first[h->seg])
        fail_msg("%s: '%s': hit names no row (segment %u row %u)", d->name, q, h->seg, h->doc);
    return d->seg_first[h->seg] + h->doc;
}

typedef struct hitlist {
    qr_hit *h;
    size_t n, cap;
} hitlist;

static int collect(void *ctx, const qr_hit *hits, uint32_t n, qr_err *e)
{
    hitlist *l = ctx;
    if (l->n + n > l->cap) {
        l->cap = (l->n + n) * 2;
        qr_hit *nh = realloc(l->h, sizeof *nh * l->cap);
        if (!nh)
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        l->h = nh;
    }
    memcpy(l->h + l->n, hits, sizeof *hits * n);
    l->n += n;
    return 0;
}

/* The count and the exact rows of q, 1 and 2 threads; the oracle's count
 * must be of class cls. Returns the count (d->match holds the rows). */
static uint32_t check(dataset *d, const char *q, const ox *x, int cls)
{
    uint32_t nm = oracle_run(d, x);
    if ((cls == SOME && (nm == 0 || nm == d->nrows)) || (cls == NONE && nm != 0) ||
        (cls == ALL && nm != d->nrows) || (cls == NONZERO && nm == 0))
        fail_msg("%s: '%s': the oracle matches %u of %u rows, not %s", d->name, q, nm, d->nrows,
                 cls == SOME   ? "some"
                 : cls == NONE ? "none"
                 : cls == ALL  ? "all"
                               : "any");
    for (int threads = 1; threads <= 2; threads++) {
        qr_par_search ps;
        qr_err e;
        par_open(d, &ps, q, threads);
        uint64_t cnt = 0;
        if (qr_par_count(&ps, &cnt, &e) != 0)
            fail_msg("%s: count '%s': %s", d->name, q, e.msg);
        if (cnt != nm)
            fail_msg("%s: '%s' (%d threads): count %llu, oracle %u", d->name, q, threads,
                     (unsigned long long)cnt, nm);
        hitlist l = {0};
        if (qr_par_first(&ps, (uint64_t)d->nrows + 1, collect, &l, NULL, &e) != 0)
            fail_msg("%s: first '%s': %s", d->name, q, e.msg);
        if (l.n != nm)
            fail_msg("%s: '%s' (%d threads): qr_par_first gives %zu rows, oracle %u", d->name, q,
                     threads, l.n, nm);
        int64_t prev = -1;
        for (size_t i = 0; i < l.n; i++) {
            uint32_t g = row_of(d, q, &l.h[i]);
            if ((int64_t)g <= prev || !d->match[g])
                fail_msg("%s: '%s' (%d threads): hit %zu is row %u (%s)", d->name, q, threads, i, g,
                         (int64_t)g <= prev ? "out of order" : "the oracle does not match it");
            prev = g;
        }
        free(l.h);
        qr_par_free(&ps);
    }
    return nm;
}

/* The input lines of rows idx[0..n), each with its '\n'. */
static void want_lines(const dataset *d, const uint32_t *idx, uint32_t n, qr_buf *out)
{
    for (uint32_t i = 0; i < n; i++) {
        qr_buf_put(out, d->rows[idx[i]].line, d->rows[idx[i]].len);
        qr_buf_put_u8(out, '\n');
    }
    assert_false(out->oom);
}

static void rows_equal(const dataset *d, const char *q, qr_par_search *ps, const qr_hit *h,
                       uint32_t n, const uint32_t *idx)
{
    qr_buf got, want;
    qr_err e;
    qr_buf_init(&got);
    qr_buf_init(&want);
    if (qr_par_rows(ps, h, n, &got, &e) != 0)
        fail_msg("%s: rows '%s': %s", d->name, q, e.msg);
    want_lines(d, idx, n, &want);
    if (got.len != want.len || (got.len && memcmp(got.p, want.p, got.len) != 0)) {
        size_t i = 0;
        while (i < got.len && i < want.len && got.p[i] == want.p[i])
            i++;
        size_t ls = i;
        while (ls && want.p[ls - 1] != '\n')
            ls--;
        fail_msg("%s: '%s': %u rows differ from the input at byte %zu:\n got  %.200s\n want "
                 "%.200s",
                 d->name, q, n, i, (const char *)got.p + ls, (const char *)want.p + ls);
    }
    qr_buf_free(&got);
    qr_buf_free(&want);
}

/* check(), then the first k matches (by none, and qr_par_first) read back
 * with qr_par_rows: the input lines, byte for byte. */
static uint32_t check_rows(dataset *d, const char *q, const ox *x, int cls, uint32_t k)
{
    uint32_t nm = check(d, q, x, cls), n = 0;
    for (uint32_t r = 0; r < d->nrows && n < k; r++)
        if (d->match[r])
            d->idx[n++] = r;
    qr_hit *h = malloc(sizeof *h * (k ? k : 1));
    assert_non_null(h);
    for (int threads = 1; threads <= 2; threads++) {
        qr_par_search ps;
        qr_err e;
        uint32_t got;
        par_open(d, &ps, q, threads);
        if (qr_par_topk(&ps, QR_BY_NONE, k, 0, h, &got, NULL, &e) != 0)
            fail_msg("%s: top '%s': %s", d->name, q, e.msg);
        assert_int_equal(got, n);
        for (uint32_t i = 0; i < n; i++)
            if (row_of(d, q, &h[i]) != d->idx[i] || h[i].score != 0 || h[i].ts != 0)
                fail_msg("%s: '%s' by none: hit %u is row %u, want %u", d->name, q, i,
                         row_of(d, q, &h[i]), d->idx[i]);
        rows_equal(d, q, &ps, h, n, d->idx);
        hitlist l = {0};
        if (qr_par_first(&ps, k, collect, &l, NULL, &e) != 0)
            fail_msg("%s: first '%s': %s", d->name, q, e.msg);
        assert_int_equal(l.n, n);
        rows_equal(d, q, &ps, l.h, n, d->idx);
        free(l.h);
        qr_par_free(&ps);
    }
    free(h);
    return nm;
}

static const dataset *cmp_ds;
static int cmp_newest(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int64_t tx = cmp_ds->rows[x].ts, ty = cmp_ds->rows[y].ts;
    if (tx != ty)
        return tx > ty ? -1 : 1;
    return x > y ? -1 : x < y; /* the later row first */
}

static const uint32_t ks[] = {10, 100};
#define NKS (sizeof ks / sizeof *ks)

/* check(), then newest first: timestamp descending, the later row first. */
static uint32_t check_newest(dataset *d, const char *q, const ox *x, int cls)
{
    uint32_t nm = check(d, q, x, cls), n = 0;
    for (uint32_t r = 0; r < d->nrows; r++)
        if (d->match[r])
            d->idx[n++] = r;
    cmp_ds = d;
    qsort(d->idx, n, sizeof *d->idx, cmp_newest);
    qr_hit h[100];
    for (int threads = 1; threads <= 2; threads++) {
        qr_par_search ps;
        par_open(d, &ps, q, threads);
        for (size_t ki = 0; ki < NKS; ki++)
            for (int ex = 0; ex <= 1; ex++) {
                qr_err e;
                uint32_t got;
                if (qr_par_topk(&ps, QR_BY_TIME, ks[ki], ex, h, &got, NULL, &e) != 0)
                    fail_msg("%s: newest '%s': %s", d->name, q, e.msg);
                uint32_t want = nm < ks[ki] ? nm : ks[ki];
                if (got != want)
                    fail_msg("%s: '%s' newest k=%u: %u hits, want %u", d->name, q, ks[ki], got,
                             want);
                for (uint32_t i = 0; i < got; i++) {
                    uint32_t g = row_of(d, q, &h[i]);
                    if (g != d->idx[i] || h[i].ts != d->rows[g].ts || h[i].score != 0)
                        fail_msg("%s: '%s' newest k=%u exhaustive=%d threads=%d: rank %u is row "
                                 "%u ts %lld, want row %u ts %lld",
                                 d->name, q, ks[ki], ex, threads, i, g, (long long)h[i].ts,
                                 d->idx[i], (long long)d->rows[d->idx[i]].ts);
                }
                if (ki == 0)
                    rows_equal(d, q, &ps, h, got, d->idx);
            }
        qr_par_free(&ps);
    }
    return nm;
}

static int close_rel(double got, double want) { return fabs(got - want) <= REL_TOL * fabs(want); }

/* Exhaustive hits by score against the oracle's scores (d->score). */
static void check_score_hits(dataset *d, const char *q, const qr_hit *h, uint32_t n, uint32_t k,
                             uint32_t nm, int threads)
{
    uint32_t want = nm < k ? nm : k;
    if (n != want)
        fail_msg("%s: '%s' by score k=%u: %u hits, want %u", d->name, q, k, n, want);
    double smin = INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = row_of(d, q, &h[i]);
        if (!d->match[g] || d->seen[g])
            fail_msg("%s: '%s' by score k=%u: rank %u row %u %s", d->name, q, k, i, g,
                     d->seen[g] ? "twice" : "does not match");
        d->seen[g] = 1;
        if (!close_rel(h[i].score, d->score[g]) || h[i].ts != 0)
            fail_msg("%s: '%s' by score k=%u threads=%d: rank %u row %u: score %.17g, oracle "
                     "%.17g",
                     d->name, q, k, threads, i, g, h[i].score, d->score[g]);
        if (i) { /* the engine's order: score desc, then segment, row */
            const qr_hit *p = &h[i - 1];
            if (!(p->score > h[i].score ||
                  (p->score == h[i].score &&
                   (p->seg < h[i].seg || (p->seg == h[i].seg && p->doc < h[i].doc)))))
                fail_msg("%s: '%s' by score: ranks %u and %u out of order", d->name, q, i - 1, i);
        }
        if (d->score[g] < smin)
            smin = d->score[g];
    }
    /* no row left out ranks before a row kept: by a clearly higher score,
     * or by an equal score and an earlier place */
    for (uint32_t r = 0; r < d->nrows; r++) {
        if (!d->match[r] || d->seen[r])
            continue;
        if (d->score[r] > smin && !close_rel(d->score[r], smin))
            fail_msg("%s: '%s' by score k=%u: row %u (oracle %.17g) is missing, the last kept "
                     "scores %.17g",
                     d->name, q, k, r, d->score[r], smin);
        if (!close_rel(d->score[r], smin))
            continue;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t g = row_of(d, q, &h[i]);
            if (r < g && close_rel(d->score[g], d->score[r]))
                fail_msg("%s: '%s' by score k=%u: row %u ties with row %u (%.17g) and comes "
                         "first, but is missing",
                         d->name, q, k, r, g, d->score[r]);
        }
    }
    for (uint32_t i = 0; i < n; i++)
        d->seen[row_of(d, q, &h[i])] = 0;
}

static void same_hits(const dataset *d, const char *q, const char *what, const qr_hit *a,
                      uint32_t na, const qr_hit *b, uint32_t nb)
{
    if (na != nb)
        fail_msg("%s: '%s': %s: %u hits vs %u", d->name, q, what, na, nb);
    for (uint32_t i = 0; i < na; i++)
        if (a[i].seg != b[i].seg || a[i].doc != b[i].doc || a[i].ts != b[i].ts ||
            memcmp(&a[i].score, &b[i].score, sizeof a[i].score) != 0)
            fail_msg("%s: '%s': %s: rank %u: (%u, %u, %.17g) vs (%u, %u, %.17g)", d->name, q, what,
                     i, a[i].seg, a[i].doc, a[i].score, b[i].seg, b[i].doc, b[i].score);
}

/* check(), then by score: exhaustive against the oracle's BM25, pruned
 * equal to exhaustive, 2 threads equal to 1. */
static uint32_t check_top(dataset *d, const char *q, ox *x, int cls)
{
    uint32_t nm = check(d, q, x, cls);
    ox_prepare(d, x);
    for (uint32_t r = 0; r < d->nrows; r++) {
        d->score[r] = d->match[r] ? ox_score(d, &d->rows[r], x) : 0;
        if (d->match[r] && !(d->score[r] > 0))
            fail_msg("%s: '%s': row %u matches with score %g", d->name, q, r, d->score[r]);
    }
    static qr_hit ref[NKS][100], ex[100], pr[100];
    uint32_t nref[NKS];
    for (int threads = 1; threads <= 2; threads++) {
        qr_par_search ps;
        par_open(d, &ps, q, threads);
        for (size_t ki = 0; ki < NKS; ki++) {
            qr_err e;
            uint32_t nex = 0, npr = 0;
            if (qr_par_topk(&ps, QR_BY_SCORE, ks[ki], 1, ex, &nex, NULL, &e) != 0 ||
                qr_par_topk(&ps, QR_BY_SCORE, ks[ki], 0, pr, &npr, NULL, &e) != 0)
                fail_msg("%s: top '%s': %s", d->name, q, e.msg);
            check_score_hits(d, q, ex, nex, ks[ki], nm, threads);
            same_hits(d, q, "pruned vs exhaustive", pr, npr, ex, nex);
            if (threads == 1) {
                memcpy(ref[ki], ex, sizeof *ex * nex);
                nref[ki] = nex;
            } else {
                same_hits(d, q, "2 threads vs 1", ex, nex, ref[ki], nref[ki]);
            }
            if (ki > 0) /* the order is total: a smaller k is a prefix */
                same_hits(d, q, "k 10 vs the first 10 of k 100", ref[0], nref[0], ex,
                          nex < nref[0] ? nex : nref[0]);
        }
        qr_par_free(&ps);
    }
    return nm;
}

static void check_error(dataset *d, const char *q, const char *msg)
{
    qr_arena a;
    qr_err e;
    qr_arena_init(&a, 4096, 0);
    qr_err_clear(&e);
    if (qr_query_parse_for(d->def, q, strlen(q), &a, &e))
        fail_msg("%s: '%s' parses; want the error \"%s\"", d->name, q, msg);
    if (strcmp(e.msg, msg) != 0 || strcmp(e.code, QR_E_INVALID_TEXT) != 0)
        fail_msg("%s: '%s': error %s \"%s\"; want \"%s\"", d->name, q, e.code, e.msg, msg);
    qr_arena_free(&a);
    qr_par_search ps;
    qr_err_clear(&e);
    if (qr_par_init(&ps, d->def, d->segs, d->nsegs, q, strlen(q), 2, &e) == 0)
        fail_msg("%s: '%s': qr_par_init accepts it", d->name, q);
    assert_string_equal(e.msg, msg);
}

/* The most frequent value of key (path NULL: a top-level string; else a
 * leaf of the object at key), counted in rows, ties to the smaller bytes;
 * *rare: the smallest value found in exactly one row. In the oracle arena. */
typedef struct vref {
    const char *p;
    size_t n;
} vref;

static int cmp_vref(const void *a, const void *b)
{
    const vref *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->p, y->p, n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

static const char *frequent_value(const dataset *d, const char *key, const char *path,
                                  const char **rare, uint32_t *count)
{
    vref *v = malloc(sizeof *v * d->nrows);
    assert_non_null(v);
    uint32_t n = 0;
    for (uint32_t r = 0; r < d->nrows; r++) {
        const oval *o = val_of(&d->rows[r], key);
        if (!o)
            continue;
        if (!path && o->kind == QJ_STRING) {
            v[n++] = (vref){o->str, o->sn};
            continue;
        }
        for (uint32_t i = 0; path && i < o->nleaf; i++) {
            const oleaf *l = &d->leaves[o->leaf0 + i];
            if (!strcmp(l->path, path)) {
                v[n++] = (vref){l->val, l->vn};
                break;
            }
        }
    }
    assert_true(n > 0);
    qsort(v, n, sizeof *v, cmp_vref);
    vref best = v[0], one = {NULL, 0};
    uint32_t bestc = 0;
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        while (j < n && !cmp_vref(&v[i], &v[j]))
            j++;
        if (j - i > bestc)
            best = v[i], bestc = j - i;
        if (j - i == 1 && !one.p)
            one = v[i];
        i = j;
    }
    if (rare) {
        assert_non_null(one.p);
        *rare = ox_dup(one.p, one.n);
    }
    if (count)
        *count = bestc;
    free(v);
    return ox_dup(best.p, best.n);
}

/* ---- the inferred definitions ---- */
typedef struct want_col {
    const char *name;
    int type, tsfmt;
} want_col;

typedef struct want_ix {
    const char *col;
    int kind;
    const char *name; /* NULL: none */
} want_ix;

static void check_def(const dataset *d, const want_col *wc, uint32_t nc, const want_ix *wi,
                      uint32_t ni, const char *sort)
{
    const qr_tabdef *t = d->def;
    qr_buf j;
    qr_buf_init(&j);
    qr_tabdef_to_json(t, &j);
    qr_buf_put_u8(&j, 0);
    int ok = t->ncols == nc + 1 && t->nixs == ni + 1 && t->omit_nulls == 1 &&
             t->extra_col == (int32_t)nc && t->sort_col >= 0 &&
             !strcmp(t->cols[t->sort_col].name, sort);
    for (uint32_t i = 0; ok && i < nc; i++)
        ok = !strcmp(t->cols[i].name, wc[i].name) && t->cols[i].type == wc[i].type &&
             t->cols[i].nullable == 1 &&
             (wc[i].type != QT_TIMESTAMP || t->cols[i].tsfmt == wc[i].tsfmt);
    ok = ok && !strcmp(t->cols[nc].name, "_extra") && t->cols[nc].type == QT_JSON;
    for (uint32_t i = 0; ok && i < ni; i++) {
        const qr_ixdef *x = &t->ixs[i];
        ok = x->id == i + 1 && !strcmp(t->cols[x->col].name, wi[i].col) && x->kind == wi[i].kind &&
             (wi[i].name ? x->name && !strcmp(x->name, wi[i].name) : x->name == NULL);
        if (ok && x->kind == QR_IX_FULLTEXT)
            ok = x->lowercase == 1 && x->positions == 1;
    }
    ok = ok && t->ixs[ni].id == ni + 1 && t->ixs[ni].col == nc && t->ixs[ni].kind == QR_IX_PATHS &&
         t->ixs[ni].name && !strcmp(t->ixs[ni].name, "_extra");
    if (!ok)
        fail_msg("%s: inferred definition:\n%s", d->name, (const char *)j.p);
    /* it reads back as itself */
    qr_err e;
    qr_tabdef *back = qr_tabdef_from_json((const char *)j.p, j.len - 1, d->name, &e);
    if (!back)
        fail_msg("%s: %s", d->name, e.msg);
    assert_true(qr_tabdef_equal(back, t));
    qr_tabdef_free(back);
    qr_buf_free(&j);
    /* the default full-text column: the first full-text index */
    for (uint32_t i = 0; i < t->nixs; i++)
        if (t->ixs[i].kind == QR_IX_FULLTEXT) {
            assert_string_equal(t->cols[t->ixs[i].col].name, d->deftext);
            break;
        }
}

/* Over the rows the sample holds: the string leaves of key, their average
 * length and the longest (INFERENCE.md: a json column is free text when
 * they average at least 24 bytes and one is longer than 64). */
static void leaf_lengths(const dataset *d, const char *key, double *avg, size_t *longest,
                         double *spaced)
{
    uint64_t sum = 0, n = 0, ws = 0;
    *longest = 0;
    for (uint32_t r = 0; r < d->nrows; r++) {
        const orow *o = &d->rows[r];
        if ((size_t)(o->line + o->len - (const char *)d->text.p) >= d->sample)
            break;
        const oval *v = val_of(o, key);
        for (uint32_t i = 0; v && i < v->nleaf; i++) {
            const oleaf *l = &d->leaves[v->leaf0 + i];
            if (!l->str)
                continue;
            n++;
            sum += l->vn;
            if (l->vn > *longest)
                *longest = l->vn;
            ws += memchr(l->val, ' ', l->vn) != NULL;
        }
    }
    assert_true(n > 0);
    *avg = (double)sum / (double)n;
    *spaced = (double)ws / (double)n;
}

/* ---- setup ---- */
static int http_setup(void **st)
{
    (void)st;
    qr_arena_init(&oxa, 1 << 16, 0);
    http.name = "http_logs";
    http.timekey = "@timestamp";
    http.deftext = "request";
    static const uint32_t b[] = {0, 4001, 9999, 15013, HTTP_ROWS};
    load(&http, 0, HTTP_ROWS, b, 4);
    return 0;
}

static int http_teardown(void **st)
{
    (void)st;
    unload(&http);
    qr_arena_free(&oxa);
    return 0;
}

static int gh_setup(void **st)
{
    (void)st;
    qr_arena_init(&oxa, 1 << 16, 0);
    gh.name = "github_events";
    gh.timekey = "created_at";
    gh.deftext = "payload";
    static const uint32_t b[] = {0, 2222, 4001, GH_ROWS};
    load(&gh, 1, GH_ROWS, b, 3);
    return 0;
}

static int gh_teardown(void **st)
{
    (void)st;
    unload(&gh);
    qr_arena_free(&oxa);
    return 0;
}

/* Segment boundaries inside runs of equal timestamps: newest-first ties
 * then cross segments. */
static void assert_split_ties(const dataset *d)
{
    int ties = 0;
    for (uint32_t s = 1; s < d->nsegs; s++)
        ties += d->rows[d->seg_first[s] - 1].ts == d->rows[d->seg_first[s]].ts;
    assert_true(ties > 0);
}

/* ================= http_logs ================= */

static void test_http_inferred_definition(void **st)
{
    (void)st;
    static const want_col cols[] = {{"@timestamp", QT_TIMESTAMP, QR_TS_EPOCH_S},
                                    {"clientip", QT_TEXT, 0},
                                    {"request", QT_TEXT, 0},
                                    {"status", QT_INT64, 0},
                                    {"size", QT_INT64, 0}};
    static const want_ix ixs[] = {{"clientip", QR_IX_KEYWORD, "clientip"},
                                  {"request", QR_IX_FULLTEXT, "request"},
                                  {"status", QR_IX_RANGE, "status"}};
    check_def(&http, cols, 5, ixs, 3, "@timestamp");
    assert_int_equal(http.sample, http.text.len); /* 20k lines fit in the sample */
    assert_split_ties(&http);
    /* the oracle's data: size missing on ~1% of rows, every key otherwise */
    uint32_t nosize = 0;
    for (uint32_t r = 0; r < http.nrows; r++) {
        assert_true(http.rows[r].nval == 4 || http.rows[r].nval == 5);
        nosize += val_of(&http.rows[r], "size") == NULL;
    }
    assert_true(nosize > 50 && nosize < 500);
    assert_int_equal(http.n_docs, http.nrows);
}

static void test_http_words_and_boolean(void **st)
{
    (void)st;
    check(&http, "GET", o_word(NULL, "get"), SOME);
    check(&http, "get", o_word(NULL, "get"), SOME);
    check(&http, "HEAD", o_word(NULL, "head"), SOME);
    check(&http, "POST", o_word(NULL, "post"), SOME);
    check(&http, "images", o_word(NULL, "images"), SOME);
    check(&http, "html", o_word(NULL, "html"), SOME);
    check(&http, "english", o_word(NULL, "english"), SOME);
    check(&http, "teams", o_word(NULL, "teams"), SOME);
    check(&http, "http", o_word(NULL, "http"), ALL);
    check(&http, "request:gif", o_word("request", "gif"), SOME);
    check(&http, "request:HTTP", o_word("request", "http"), ALL);
    check(&http, "nosuchword", o_word(NULL, "nosuchword"), NONE);
    check(&http, "images AND gif", o_and(o_word(NULL, "images"), o_word(NULL, "gif")), SOME);
    check(&http, "english teams", o_and(o_word(NULL, "english"), o_word(NULL, "teams")), SOME);
    check(&http, "html OR htm", o_or(o_word(NULL, "html"), o_word(NULL, "htm")), SOME);
    check(&http, "HEAD OR POST", o_or(o_word(NULL, "head"), o_word(NULL, "post")), SOME);
    check(&http, "images -gif", o_and(o_word(NULL, "images"), o_not(o_word(NULL, "gif"))), SOME);
    check(&http, "NOT images", o_not(o_word(NULL, "images")), SOME);
    check(&http, "NOT http", o_not(o_word(NULL, "http")), NONE);
    check(&http, "english AND NOT (teams OR news)",
          o_and(o_word(NULL, "english"), o_not(o_or(o_word(NULL, "teams"), o_word(NULL, "news")))),
          SOME);
    check(&http, "(gif OR jpg) AND NOT space",
          o_and(o_or(o_word(NULL, "gif"), o_word(NULL, "jpg")), o_not(o_word(NULL, "space"))),
          SOME);
    check(&http, "GET AND POST", o_and(o_word(NULL, "get"), o_word(NULL, "post")), NONE);
    /* path segments: the words of a few rows' paths, each alone, and the
     * rarest word of a row ANDed with its commonest */
    for (uint32_t r = 7; r < http.nrows; r += 4999) {
        const oval *v = val_of(&http.rows[r], "request");
        for (uint32_t i = 0; i < v->ntok; i++) {
            const otok *t = &http.toks[v->tok0 + i];
            char q[300];
            snprintf(q, sizeof q, "%.*s", (int)t->n, t->s);
            check(&http, q, o_word(NULL, q), NONZERO);
        }
        const otok *a = &http.toks[v->tok0 + 1], *z = &http.toks[v->tok0 + v->ntok - 3];
        char q[700], wa[300], wz[300];
        snprintf(wa, sizeof wa, "%.*s", (int)a->n, a->s);
        snprintf(wz, sizeof wz, "%.*s", (int)z->n, z->s);
        snprintf(q, sizeof q, "request:%s AND %s", wa, wz);
        check(&http, q, o_and(o_word("request", wa), o_word(NULL, wz)), NONZERO);
    }
}

static void test_http_phrases_and_prefix(void **st)
{
    (void)st;
    check(&http, "request:\"images hm_bg jpg\"", o_phrase("request", "images hm bg jpg"), SOME);
    check(&http, "\"/images/hm_bg.jpg\"", o_phrase(NULL, "images hm bg jpg"), SOME);
    check(&http, "hm_bg.jpg", o_phrase(NULL, "hm bg jpg"), SOME);
    check(&http, "\"HTTP/1.1\"", o_phrase(NULL, "http 1 1"), SOME);
    check(&http, "\"jpg images\"", o_phrase(NULL, "jpg images"), NONE);
    check(&http, "\"get http\"", o_phrase(NULL, "get http"), SOME); /* GET / HTTP/1.0 */
    check(&http, "\"http get\"", o_phrase(NULL, "http get"), NONE);
    check(&http, "\"english teams\" AND NOT \"teams players\"",
          o_and(o_phrase(NULL, "english teams"), o_not(o_phrase(NULL, "teams players"))), SOME);
    /* phrases of 2, 3 and 4 words from real request lines */
    uint32_t made = 0;
    for (uint32_t r = 3; r < http.nrows; r += 1733) {
        const oval *v = val_of(&http.rows[r], "request");
        for (uint32_t len = 2; len <= 4 && len <= v->ntok; len++) {
            uint32_t at = (r / 7 + len) % (v->ntok - len + 1);
            char words[512] = "", q[600];
            size_t wl = 0;
            for (uint32_t i = 0; i < len; i++) {
                const otok *t = &http.toks[v->tok0 + at + i];
                wl += (size_t)snprintf(words + wl, sizeof words - wl, "%s%.*s", i ? " " : "",
                                       (int)t->n, t->s);
            }
            snprintf(q, sizeof q, "request:\"%s\"", words);
            check(&http, q, o_phrase("request", words), NONZERO);
            made++;
        }
    }
    assert_true(made >= 30);
    check(&http, "imag*", o_prefix(NULL, "imag"), SOME);
    check(&http, "request:teamb*", o_prefix("request", "teamb"), SOME);
    check(&http, "IMAG*", o_prefix(NULL, "imag"), SOME);
    check(&http, "zzzq*", o_prefix(NULL, "zzzq"), NONE);
    check(&http, "imag* -gif", o_and(o_prefix(NULL, "imag"), o_not(o_word(NULL, "gif"))), SOME);
}

static void test_http_keyword_numeric_time(void **st)
{
    (void)st;
    const char *rare = NULL;
    uint32_t topc = 0;
    const char *top = frequent_value(&http, "clientip", NULL, &rare, &topc);
    assert_true(topc > 100); /* Zipf: the busiest client makes ~2.5% */
    char q[600];
    snprintf(q, sizeof q, "clientip:%s", top);
    assert_int_equal(check(&http, q, o_kw("clientip", top), SOME), topc);
    snprintf(q, sizeof q, "clientip:\"%s\"", top); /* quoted: the same exact value */
    assert_int_equal(check(&http, q, o_kw("clientip", top), SOME), topc);
    snprintf(q, sizeof q, "clientip:%s", rare);
    assert_int_equal(check_rows(&http, q, o_kw("clientip", rare), SOME, 10), 1);
    snprintf(q, sizeof q, "clientip:%s OR clientip:%s", top, rare);
    check(&http, q, o_or(o_kw("clientip", top), o_kw("clientip", rare)), SOME);
    snprintf(q, sizeof q, "clientip:%s AND status:304", top);
    check(&http, q, o_and(o_kw("clientip", top), o_num("status", 304, 304)), SOME);
    check(&http, "clientip:40.135.0", o_kw("clientip", "40.135.0"), NONE);
    check_error(&http, "clientip:>=40.0.0.0",
                "query: column clientip is not a number or timestamp column: no range on it at byte 10");

    check(&http, "status:404", o_num("status", 404, 404), SOME);
    check(&http, "status:\"404\"", o_num("status", 404, 404), SOME);
    check(&http, "status:=200", o_num("status", 200, 200), SOME);
    check(&http, "status:>=400", o_num("status", 400, INT64_MAX), SOME);
    check(&http, "status:>304", o_num("status", 305, INT64_MAX), SOME);
    check(&http, "status:<=206", o_num("status", INT64_MIN, 206), SOME);
    check(&http, "status:<200", o_num("status", INT64_MIN, 199), NONE);
    check(&http, "status:[300 TO 399]", o_num("status", 300, 399), SOME);
    check(&http, "status:[0 TO 1000]", o_num("status", 0, 1000), ALL);
    check(&http, "status:301", o_num("status", 301, 301), NONE);
    check_rows(&http, "status:500", o_num("status", 500, 500), SOME, 1000);
    check(&http, "size:[1000 TO 5000]", o_num("size", 1000, 5000), SOME);
    check(&http, "size:<100", o_num("size", INT64_MIN, 99), SOME);
    check(&http, "size:0", o_num("size", 0, 0), SOME);
    check(&http, "size:>=0", o_num("size", 0, INT64_MAX), SOME); /* not the rows without */
    check_rows(&http, "NOT size:>=0", o_not(o_num("size", 0, INT64_MAX)), SOME, 1000);
    check(&http, "size:>100000000", o_num("size", 100000001, INT64_MAX), NONE);
    check(&http, "status:304 AND size:>0",
          o_and(o_num("status", 304, 304), o_num("size", 1, INT64_MAX)), NONE);
    check(&http, "status:304 AND request:gif",
          o_and(o_num("status", 304, 304), o_word("request", "gif")), SOME);
    check(&http, "status:404 OR status:500 OR HEAD",
          o_or(o_num("status", 404, 404), o_num("status", 500, 500), o_word(NULL, "head")), SOME);
    check(&http, "images AND NOT status:200",
          o_and(o_word(NULL, "images"), o_not(o_num("status", 200, 200))), SOME);

    check(&http, "@timestamp:[1998-04-30T19:40:00Z TO 1998-04-30T20:00:00Z]",
          o_time(T("1998-04-30T19:40:00Z"), T("1998-04-30T20:00:00Z")), SOME);
    check(&http, "time:>=1998-04-30T20:30:00Z", o_time(T("1998-04-30T20:30:00Z"), INT64_MAX), SOME);
    check(&http, "time:<1998-04-30T19:30:17Z", o_time(INT64_MIN, T("1998-04-30T19:30:17Z") - 1),
          NONE);
    check(&http, "time:<=1998-04-30T19:30:17Z", o_time(INT64_MIN, T("1998-04-30T19:30:17Z")), SOME);
    check(&http, "@timestamp:1998-04-30T19:45:00Z",
          o_time(T("1998-04-30T19:45:00Z"), T("1998-04-30T19:45:00Z")), SOME);
    check(&http, "@timestamp:>1998-04-30T19:45:00Z AND @timestamp:<1998-04-30T19:46:00Z",
          o_time(T("1998-04-30T19:45:00Z") + 1, T("1998-04-30T19:46:00Z") - 1), SOME);
    check(&http, "time:>=1998-05-01T00:00:00Z", o_time(T("1998-05-01T00:00:00Z"), INT64_MAX), NONE);
    check(&http, "time:[1998-04-30T19:50:00Z TO 1998-04-30T20:10:00Z] AND status:404 AND html",
          o_and(o_time(T("1998-04-30T19:50:00Z"), T("1998-04-30T20:10:00Z")),
                o_num("status", 404, 404), o_word(NULL, "html")),
          SOME);
    /* no range syntax on a text column */
    check_error(&http, "request:>=400",
                "query: column request is not a number or timestamp column: no range on it at byte 9");
}

static void test_http_rows_byte_for_byte(void **st)
{
    (void)st;
    /* every row: quarry cat's canonical form is the generator's output */
    check_rows(&http, "http", o_word(NULL, "http"), ALL, HTTP_ROWS);
    check_rows(&http, "status:304 AND request:gif",
               o_and(o_num("status", 304, 304), o_word("request", "gif")), SOME, 100);
    check_rows(&http, "\"images hm_bg jpg\" AND size:>=0",
               o_and(o_phrase(NULL, "images hm bg jpg"), o_num("size", 0, INT64_MAX)), SOME, 1000);
}

static void test_http_newest_first(void **st)
{
    (void)st;
    check_newest(&http, "http", o_word(NULL, "http"), ALL);
    check_newest(&http, "images", o_word(NULL, "images"), SOME);
    check_newest(&http, "status:404", o_num("status", 404, 404), SOME);
    check_newest(&http, "NOT size:>=0", o_not(o_num("size", 0, INT64_MAX)), SOME);
    check_newest(&http, "time:<=1998-04-30T19:40:00Z AND gif",
                 o_and(o_time(INT64_MIN, T("1998-04-30T19:40:00Z")), o_word(NULL, "gif")), SOME);
    check_newest(&http, "POST", o_word(NULL, "post"), SOME);
    check_newest(&http, "nosuchword", o_word(NULL, "nosuchword"), NONE);
}

static void test_http_top_by_score(void **st)
{
    (void)st;
    check_top(&http, "images", o_word(NULL, "images"), SOME);
    check_top(&http, "GET", o_word(NULL, "get"), SOME);
    check_top(&http, "http", o_word(NULL, "http"), ALL);
    check_top(&http, "english", o_word(NULL, "english"), SOME);
    check_top(&http, "POST", o_word(NULL, "post"), SOME);
    check_top(&http, "images OR html", o_or(o_word(NULL, "images"), o_word(NULL, "html")), SOME);
    check_top(&http, "english AND teams", o_and(o_word(NULL, "english"), o_word(NULL, "teams")),
              SOME);
    check_top(
        &http, "gif OR jpg OR html OR cgi",
        o_or(o_word(NULL, "gif"), o_word(NULL, "jpg"), o_word(NULL, "html"), o_word(NULL, "cgi")),
        SOME);
    check_top(&http, "request:gif AND NOT nav",
              o_and(o_word("request", "gif"), o_not(o_word(NULL, "nav"))), SOME);
    check_top(&http, "html AND status:404", o_and(o_word(NULL, "html"), o_num("status", 404, 404)),
              SOME);
    /* a rare word of a real row */
    const oval *v = val_of(&http.rows[12345], "request");
    char w[300];
    uint32_t best = 0, bestdf = UINT32_MAX;
    for (uint32_t i = 0; i < v->ntok; i++) {
        const otok *t = &http.toks[v->tok0 + i];
        snprintf(w, sizeof w, "%.*s", (int)t->n, t->s);
        uint32_t df = oracle_run(&http, o_word(NULL, w));
        if (df < bestdf)
            bestdf = df, best = i;
    }
    const otok *t = &http.toks[v->tok0 + best];
    snprintf(w, sizeof w, "%.*s", (int)t->n, t->s);
    char q[600];
    snprintf(q, sizeof q, "%s OR GET", w);
    check_top(&http, w, o_word(NULL, w), SOME);
    check_top(&http, q, o_or(o_word(NULL, w), o_word(NULL, "get")), SOME);
}

static void test_http_errors(void **st)
{
    (void)st;
    check_error(&http, "nosuchcol:x", "query: unknown column or index 'nosuchcol' at byte 1");
    check_error(&http, "images AND Request.x:1",
                "query: column request has no paths index at byte 12");
    check_error(&http, "request:[200 TO 300]",
                "query: column request is not a number or timestamp column: no range on it at byte 9");
    check_error(&http, "status:abc", "query: bad int64 value at byte 8");
    check_error(&http, "status:\"404 x\"", "query: bad int64 value at byte 9");
    check_error(&http, "size:[1 TO x]", "query: bad range bound at byte 6");
    check_error(&http, "time:>=yesterday", "query: bad time value at byte 6");
    check_error(&http, "@timestamp:[1998-04-30 TO 1998-05-01]",
                "query: bad range bound (timestamp) at byte 12");
    check_error(&http, "status:[200 TO 300", "query: unterminated '[' at byte 8");
}

/* ================= github_events ================= */

static void test_gh_inferred_definition(void **st)
{
    (void)st;
    static const want_col cols[] = {{"id", QT_TEXT, 0},
                                    {"type", QT_TEXT, 0},
                                    {"actor", QT_JSON, 0},
                                    {"repo", QT_JSON, 0},
                                    {"payload", QT_JSON, 0},
                                    {"public", QT_BOOL, 0},
                                    {"created_at", QT_TIMESTAMP, QR_TS_RFC3339_SHORT},
                                    {"org", QT_JSON, 0}};
    static const want_ix ixs[] = {
        {"id", QR_IX_KEYWORD, "id"},       {"type", QR_IX_KEYWORD, "type"},
        {"actor", QR_IX_PATHS, "actor"},   {"repo", QR_IX_PATHS, "repo"},
        {"payload", QR_IX_PATHS, "payload"}, {"payload", QR_IX_FULLTEXT, NULL},
        {"public", QR_IX_RANGE, "public"},  {"org", QR_IX_PATHS, "org"}};
    check_def(&gh, cols, 8, ixs, 8, "created_at");
    assert_true(gh.sample == QR_INFER_SAMPLE_BYTES && gh.sample < gh.text.len);
    assert_split_ties(&gh);
    /* why payload is full text and repo and actor are not (docs/INFERENCE.md:
     * a json column's string leaves hold prose when one in ten has
     * whitespace; long URLs and names do not count) */
    double avg, spaced;
    size_t longest;
    leaf_lengths(&gh, "repo", &avg, &longest, &spaced);
    assert_true(avg >= 24 && longest > 64 && spaced < 0.1);
    leaf_lengths(&gh, "actor", &avg, &longest, &spaced);
    assert_true(longest <= 64 && spaced < 0.1);
    leaf_lengths(&gh, "payload", &avg, &longest, &spaced);
    assert_true(avg >= 12 && longest > 64 && spaced >= 0.1);
    /* org on some rows only */
    uint32_t org = 0;
    for (uint32_t r = 0; r < gh.nrows; r++)
        org += val_of(&gh.rows[r], "org") != NULL;
    assert_true(org > gh.nrows / 10 && org < gh.nrows / 2);
}

static void test_gh_keyword_and_paths(void **st)
{
    (void)st;
    char q[800];
    check(&gh, "type:PushEvent", o_kw("type", "PushEvent"), SOME);
    check(&gh, "type:\"PushEvent\"", o_kw("type", "PushEvent"), SOME);
    check(&gh, "type:pushevent", o_kw("type", "pushevent"), NONE);
    check(&gh, "type:\"Push Event\"", o_kw("type", "Push Event"), NONE);
    check(&gh, "-type:PushEvent", o_not(o_kw("type", "PushEvent")), SOME);
    check(&gh, "type:WatchEvent OR type:ForkEvent",
          o_or(o_kw("type", "WatchEvent"), o_kw("type", "ForkEvent")), SOME);
    check_rows(&gh, "type:ReleaseEvent", o_kw("type", "ReleaseEvent"), SOME, 1000);
    const oval *id = val_of(&gh.rows[4321], "id");
    snprintf(q, sizeof q, "id:%.*s", (int)id->sn, id->str);
    assert_int_equal(check_rows(&gh, q, o_kw("id", q + 3), SOME, 10), 1);

    check(&gh, "payload.action:opened", o_path("payload", "action", "opened"), SOME);
    check(&gh, "payload.action:opened AND type:IssuesEvent",
          o_and(o_path("payload", "action", "opened"), o_kw("type", "IssuesEvent")), SOME);
    check(&gh, "payload.action:closed AND NOT type:PullRequestEvent",
          o_and(o_path("payload", "action", "closed"), o_not(o_kw("type", "PullRequestEvent"))),
          SOME);
    check(&gh, "payload.action:Opened", o_path("payload", "action", "Opened"), NONE);
    check(&gh, "payload.ref_type:branch", o_path("payload", "ref_type", "branch"), SOME);
    check(&gh, "payload.ref_type:tag AND type:DeleteEvent",
          o_and(o_path("payload", "ref_type", "tag"), o_kw("type", "DeleteEvent")), SOME);
    check(&gh, "payload.ref_type:branch AND type:PushEvent",
          o_and(o_path("payload", "ref_type", "branch"), o_kw("type", "PushEvent")), NONE);
    check(&gh, "payload.ref:refs/heads/master", o_path("payload", "ref", "refs/heads/master"),
          SOME);
    check(&gh, "type:PushEvent -payload.ref:refs/heads/master",
          o_and(o_kw("type", "PushEvent"), o_not(o_path("payload", "ref", "refs/heads/master"))),
          SOME);
    /* leaves that are not strings: their JSON text */
    check(&gh, "payload.pull_request.merged:true", o_path("payload", "pull_request.merged", "true"),
          SOME);
    check(&gh, "payload.issue.locked:false", o_path("payload", "issue.locked", "false"), SOME);
    check(&gh, "payload.issue.locked:true", o_path("payload", "issue.locked", "true"), NONE);
    check(&gh, "payload.description:null", o_path("payload", "description", "null"), SOME);
    check(&gh, "payload.size:1", o_path("payload", "size", "1"), SOME);
    check(&gh, "payload.commits.distinct:false", o_path("payload", "commits.distinct", "false"),
          SOME);
    check(&gh, "actor.gravatar_id:\"\"", o_path("actor", "gravatar_id", ""), ALL);
    check(&gh, "_extra.x:1", o_path("_extra", "x", "1"), NONE);

    uint32_t c;
    const char *login = frequent_value(&gh, "actor", "login", NULL, &c);
    assert_true(c > 1);
    snprintf(q, sizeof q, "actor.login:%s", login);
    assert_int_equal(check_newest(&gh, q, o_path("actor", "login", login), SOME), c);
    snprintf(q, sizeof q, "actor.login:%s AND NOT type:PushEvent", login);
    check(&gh, q, o_and(o_path("actor", "login", login), o_not(o_kw("type", "PushEvent"))), SOME);
    const char *aid = frequent_value(&gh, "actor", "id", NULL, NULL);
    snprintf(q, sizeof q, "actor.id:%s", aid);
    assert_int_equal(check(&gh, q, o_path("actor", "id", aid), SOME), c);
    const char *name = frequent_value(&gh, "repo", "name", NULL, &c);
    assert_true(c > 1 && strchr(name, '/'));
    snprintf(q, sizeof q, "repo.name:%s", name);
    assert_int_equal(check_rows(&gh, q, o_path("repo", "name", name), SOME, 1000), c);
    const char *author = frequent_value(&gh, "payload", "commits.author.name", NULL, NULL);
    snprintf(q, sizeof q, "payload.commits.author.name:\"%s\"", author);
    check(&gh, q, o_path("payload", "commits.author.name", author), SOME);
    const char *ol = frequent_value(&gh, "org", "login", NULL, &c);
    snprintf(q, sizeof q, "org.login:%s", ol);
    assert_int_equal(check_rows(&gh, q, o_path("org", "login", ol), SOME, 1000), c);
    snprintf(q, sizeof q, "org.login:%s OR repo.name:%s", ol, name);
    check(&gh, q, o_or(o_path("org", "login", ol), o_path("repo", "name", name)), SOME);
    check(&gh, "org.login:nosuchorg", o_path("org", "login", "nosuchorg"), NONE);

    check(&gh, "public:true", o_num("public", 1, 1), ALL);
    check(&gh, "public:false", o_num("public", 0, 0), NONE);
    check(&gh, "public:>=false", o_num("public", 0, INT64_MAX), ALL);
    check(&gh, "public:true AND NOT type:PushEvent",
          o_and(o_num("public", 1, 1), o_not(o_kw("type", "PushEvent"))), SOME);
}

static void test_gh_text_and_time(void **st)
{
    (void)st;
    /* words of the default full-text column: payload's texts */
    check(&gh, "fix", o_word(NULL, "fix"), SOME);
    check(&gh, "\"merge pull request\"", o_phrase(NULL, "merge pull request"), SOME);
    check(&gh, "\"request pull merge\"", o_phrase(NULL, "request pull merge"), NONE);
    /* payload text: commit messages, titles, bodies (payload:WORD is full
     * text: the paths index has the alias, the column a full-text index) */
    check(&gh, "payload:fix", o_word("payload", "fix"), SOME);
    check(&gh, "payload:Update", o_word("payload", "update"), SOME);
    check(&gh, "payload:readme", o_word("payload", "readme"), SOME);
    check(&gh, "payload:merge AND payload:pull",
          o_and(o_word("payload", "merge"), o_word("payload", "pull")), SOME);
    check(&gh, "payload:\"merge pull request\"", o_phrase("payload", "merge pull request"), SOME);
    check(&gh, "payload:\"request pull merge\"", o_phrase("payload", "request pull merge"), NONE);
    check(&gh, "payload:fix AND NOT type:PushEvent",
          o_and(o_word("payload", "fix"), o_not(o_kw("type", "PushEvent"))), SOME);
    check(&gh, "payload:fix OR payload:bug OR payload:typo",
          o_or(o_word("payload", "fix"), o_word("payload", "bug"), o_word("payload", "typo")),
          SOME);
    check(&gh, "payload:upd*", o_prefix("payload", "upd"), SOME);
    check(&gh, "payload:nosuchword", o_word("payload", "nosuchword"), NONE);
    check(&gh, "fix AND payload:fix", o_word(NULL, "fix"), SOME); /* the same column */
    /* ASCII words (and phrases) from real payload texts of rows with and
     * without non-ASCII text */
    uint32_t made = 0;
    for (uint32_t r = 1; r < gh.nrows; r += 211) {
        const oval *v = val_of(&gh.rows[r], "payload");
        if (v->ntok < 4)
            continue;
        uint32_t at = r % (v->ntok - 3);
        const otok *t = &gh.toks[v->tok0 + at];
        int ascii = 1;
        for (uint32_t i = 0; i < 3; i++)
            for (uint32_t b = 0; b < t[i].n; b++)
                ascii &= (unsigned char)t[i].s[b] < 0x80;
        if (!ascii)
            continue;
        char q[900], w[800];
        snprintf(w, sizeof w, "%.*s", (int)t->n, t->s);
        snprintf(q, sizeof q, "payload:%s", w);
        check(&gh, q, o_word("payload", w), NONZERO);
        snprintf(w, sizeof w, "%.*s %.*s %.*s", (int)t[0].n, t[0].s, (int)t[1].n, t[1].s,
                 (int)t[2].n, t[2].s);
        snprintf(q, sizeof q, "payload:\"%s\"", w);
        check(&gh, q, o_phrase("payload", w), NONZERO);
        made++;
    }
    assert_true(made >= 15);
    /* a non-ASCII word takes one position: "a ? b" around it */
    made = 0;
    for (uint32_t r = 0; r < gh.nrows && made < 8; r += 7) {
        const oval *v = val_of(&gh.rows[r], "payload");
        for (uint32_t p = 1; p + 1 < v->ntok; p++) {
            const otok *t = &gh.toks[v->tok0 + p - 1];
            int ascii[3] = {1, 1, 1};
            for (uint32_t i = 0; i < 3; i++)
                for (uint32_t b = 0; b < t[i].n; b++)
                    ascii[i] &= (unsigned char)t[i].s[b] < 0x80;
            if (!ascii[0] || ascii[1] || !ascii[2])
                continue;
            char q[900], w[800];
            snprintf(w, sizeof w, "%.*s ? %.*s", (int)t[0].n, t[0].s, (int)t[2].n, t[2].s);
            snprintf(q, sizeof q, "payload:\"%s\"", w);
            check(&gh, q, o_phrase("payload", w), NONZERO);
            made++;
            break;
        }
    }
    assert_int_equal(made, 8);

    check(&gh, "created_at:[2015-01-01T15:01:00Z TO 2015-01-01T15:05:00Z]",
          o_time(T("2015-01-01T15:01:00Z"), T("2015-01-01T15:05:00Z")), SOME);
    check(&gh, "time:>=2015-01-01T15:10:00Z", o_time(T("2015-01-01T15:10:00Z"), INT64_MAX), SOME);
    check(&gh, "created_at:<2015-01-01T15:00:00Z", o_time(INT64_MIN, T("2015-01-01T15:00:00Z") - 1),
          NONE);
    check(&gh, "created_at:2015-01-01T15:02:00Z",
          o_time(T("2015-01-01T15:02:00Z"), T("2015-01-01T15:02:00Z")), SOME);
    check(&gh,
          "time:[2015-01-01T15:03:00Z TO 2015-01-01T15:08:00Z] AND type:IssuesEvent AND "
          "NOT payload.action:opened",
          o_and(o_time(T("2015-01-01T15:03:00Z"), T("2015-01-01T15:08:00Z")),
                o_kw("type", "IssuesEvent"), o_not(o_path("payload", "action", "opened"))),
          SOME);
    /* a timestamp inside payload is a leaf, not the sort column */
    check(&gh, "created_at:>=2016-01-01T00:00:00Z", o_time(T("2016-01-01T00:00:00Z"), INT64_MAX),
          NONE);
}

static void test_gh_rows_and_newest(void **st)
{
    (void)st;
    /* every row reads back as generated (nested objects, escapes,
     * non-ASCII, rfc3339_short times, org left out where absent) */
    check_rows(&gh, "public:true", o_num("public", 1, 1), ALL, GH_ROWS);
    check_rows(&gh, "payload:fix AND type:PullRequestEvent",
               o_and(o_word("payload", "fix"), o_kw("type", "PullRequestEvent")), SOME, 50);
    check_newest(&gh, "public:true", o_num("public", 1, 1), ALL);
    check_newest(&gh, "type:PushEvent", o_kw("type", "PushEvent"), SOME);
    check_newest(&gh, "payload.ref_type:tag", o_path("payload", "ref_type", "tag"), SOME);
    check_newest(&gh, "time:<2015-01-01T15:03:00Z AND payload:fix",
                 o_and(o_time(INT64_MIN, T("2015-01-01T15:03:00Z") - 1), o_word("payload", "fix")),
                 SOME);
}

static void test_gh_top_by_score(void **st)
{
    (void)st;
    check_top(&gh, "fix", o_word(NULL, "fix"), SOME);
    check_top(&gh, "payload:fix", o_word(NULL, "fix"), SOME);
    check_top(&gh, "fix OR bug", o_or(o_word(NULL, "fix"), o_word(NULL, "bug")), SOME);
    check_top(&gh, "fix AND type:PushEvent", o_and(o_word(NULL, "fix"), o_kw("type", "PushEvent")),
              SOME);
    /* the first words of a few rows' payload texts */
    for (uint32_t r = 5; r < gh.nrows; r += 1499) {
        const oval *v = val_of(&gh.rows[r], "payload");
        if (!v || v->ntok < 2)
            continue;
        const otok *t = &gh.toks[v->tok0];
        char w[300], w0[300], q[700];
        snprintf(w, sizeof w, "%.*s", (int)t[1].n, t[1].s);
        snprintf(w0, sizeof w0, "%.*s", (int)t[0].n, t[0].s);
        check_top(&gh, w, o_word(NULL, w), SOME);
        snprintf(q, sizeof q, "%s OR %s OR fix", w0, w);
        check_top(&gh, q, o_or(o_word(NULL, w0), o_word(NULL, w), o_word(NULL, "fix")), SOME);
    }
}

static void test_gh_errors(void **st)
{
    (void)st;
    check_error(&gh, "nosuchcol:x", "query: unknown column or index 'nosuchcol' at byte 1");
    check_error(&gh, "nosuch.path:x", "query: unknown column or index 'nosuch.path' at byte 1");
    check_error(&gh, "type.x:PushEvent", "query: column type has no paths index at byte 1");
    check_error(&gh, "public:yes", "query: bad bool value at byte 8");
    check_error(&gh, "payload:[1 TO 2]",
                "query: column payload is not a number or timestamp column: no range on it at byte 9");
    check_error(&gh, "created_at:>=2015-13-01T00:00:00Z", "query: bad time value at byte 12");
}

int main(void)
{
    const struct CMUnitTest http_tests[] = {
        cmocka_unit_test(test_http_inferred_definition),
        cmocka_unit_test(test_http_words_and_boolean),
        cmocka_unit_test(test_http_phrases_and_prefix),
        cmocka_unit_test(test_http_keyword_numeric_time),
        cmocka_unit_test(test_http_rows_byte_for_byte),
        cmocka_unit_test(test_http_newest_first),
        cmocka_unit_test(test_http_top_by_score),
        cmocka_unit_test(test_http_errors),
    };
    const struct CMUnitTest gh_tests[] = {
        cmocka_unit_test(test_gh_inferred_definition), cmocka_unit_test(test_gh_keyword_and_paths),
        cmocka_unit_test(test_gh_text_and_time),       cmocka_unit_test(test_gh_rows_and_newest),
        cmocka_unit_test(test_gh_top_by_score),        cmocka_unit_test(test_gh_errors),
    };
    int rc = cmocka_run_group_tests_name("http_logs", http_tests, http_setup, http_teardown);
    rc |= cmocka_run_group_tests_name("github_events", gh_tests, gh_setup, gh_teardown);
    return rc;
}
