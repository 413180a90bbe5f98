/* infer.c - a table definition from a sample of NDJSON lines (infer.h).
 *
 * One pass over the sample. Each line is parsed once into a list of its
 * top-level members (the JSON kind and text of each value; for objects and
 * arrays only a summary of their string leaves). Only a line that is a
 * whole JSON object without a repeated key is then folded into the
 * per-key statistics, so a bad line never sways a type. The definition is
 * decided from the statistics at the end; the rules are docs/INFERENCE.md.
 *
 * Memory is bounded by the sample: value texts are slices of the input (or
 * of a per-line arena when they have escapes), the statistics are a fixed
 * size per column, and the distinct-value sets stop at DISTINCT_CAP values.
 */
#include "ingest/infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/arena.h"
#include "util/json.h"
#include "util/strmap.h"
#include "util/timefmt.h"

/* A column with more distinct values than this has no range index. */
#define DISTINCT_MAX 1000
#define DISTINCT_CAP (DISTINCT_MAX + 1)
/* Free text: the average value this long (with some value longer than
 * TOKEN_MAX), or whitespace in half the values. */
#define FREE_TEXT_AVG 24
/* A keyword index takes values up to this long. */
#define TOKEN_MAX 64

/* JSON kinds of non-null values. */
enum { K_BOOL = 1, K_INT = 2, K_FLOAT = 4, K_STRING = 8, K_OBJECT = 16, K_ARRAY = 32 };

/* Lengths of a set of strings. */
typedef struct textstat {
    uint64_t n, bytes, spaced; /* values, their bytes, values holding whitespace */
    size_t max;                /* longest */
} textstat;

/* One top-level member of the line being read. */
typedef struct member {
    qr_slice key;   /* as decoded */
    unsigned kind;  /* K_*, 0 for null */
    int bval;       /* K_BOOL */
    qr_slice val;   /* K_STRING: the text; K_INT / K_FLOAT: the number as written */
    textstat leaf;  /* K_OBJECT / K_ARRAY: the string leaves */
    uint32_t keyid; /* in infer.keys */
} member;

/* What the sample showed for one column. */
typedef struct colstat {
    qr_slice name;      /* the first spelling; in the input or the keep arena */
    unsigned kinds;     /* K_* seen */
    uint64_t nvals;     /* non-null values */
    textstat str;       /* top-level strings */
    textstat leaf;      /* strings inside objects and arrays */
    int not_ts;         /* a string that is not an RFC 3339 date-time */
    int int_neg;        /* an integer < 0 */
    int int_big;        /* an integer > INT64_MAX (that fits uint64) */
    int64_t imin, imax; /* over the integers that fit int64 */
    uint64_t nint;
    qr_strmap distinct; /* scalar values (numbers as written), up to DISTINCT_CAP */
} colstat;

/* Per distinct key (ASCII case folded). */
typedef struct keyinfo {
    uint32_t stamp; /* the last line number that had it (duplicate check) */
    int32_t col;    /* its column, KEY_NEW before the first usable line with it,
                     * KEY_EXTRA when it goes to the catch-all */
} keyinfo;
#define KEY_NEW   (-1)
#define KEY_EXTRA (-2)

typedef struct infer {
    const char *buf;
    size_t len;
    qr_arena line; /* decoded strings of the current line */
    qr_arena keep; /* copies that outlive a line: keys, names, distinct values */
    qr_strmap keys;
    keyinfo *ki;
    size_t ki_cap;
    colstat *cols;
    uint32_t ncols, cols_cap;
    member *m;
    size_t nm, m_cap;
} infer;

static int in_input(const infer *in, const char *p)
{
    return p >= in->buf && p < in->buf + in->len;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void text_add(textstat *t, const char *p, size_t n)
{
    t->n++;
    t->bytes += n;
    if (n > t->max)
        t->max = n;
    for (size_t i = 0; i < n; i++)
        if (is_space(p[i])) {
            t->spaced++;
            break;
        }
}

static void text_merge(textstat *t, const textstat *s)
{
    t->n += s->n;
    t->bytes += s->bytes;
    t->spaced += s->spaced;
    if (s->max > t->max)
        t->max = s->max;
}

/* Values that read as prose rather than as tokens (ids, addresses, codes). */
static int free_text(const textstat *t)
{
    if (!t->n)
        return 0;
    if (t->spaced * 2 >= t->n)
        return 1;
    return t->bytes >= (uint64_t)FREE_TEXT_AVG * t->n && t->max > TOKEN_MAX;
}

/* A json column's string leaves hold prose when one in ten has whitespace:
 * commit messages and titles do; ids, names, URLs and hashes (however long)
 * do not, and a full-text index over them would only compete with the
 * real text for the default column. */
static int prose_leaves(const textstat *t)
{
    return t->n && t->spaced * 10 >= t->n && t->bytes >= (uint64_t)FREE_TEXT_AVG * t->n / 2;
}

static int name_is(qr_slice s, const char *lit)
{
    size_t k = strlen(lit);
    return s.n == k && strncasecmp(s.p, lit, k) == 0;
}

static int name_ends(qr_slice s, const char *suf)
{
    size_t k = strlen(suf);
    return s.n > k && strncasecmp(s.p + s.n - k, suf, k) == 0;
}

/* How time-like a column name is: 0 @timestamp, 1 timestamp, 2 time, 3 ts,
 * 4 created_at, 5 another time-like name, 6 not time-like. */
static int time_rank(qr_slice s)
{
    static const char *const best[] = {"@timestamp", "timestamp", "time", "ts", "created_at"};
    for (int i = 0; i < 5; i++)
        if (name_is(s, best[i]))
            return i;
    if (name_is(s, "date") || name_is(s, "datetime") || name_is(s, "event_time") ||
        name_ends(s, "_at") || name_ends(s, "_time"))
        return 5;
    return 6;
}

static int free_text_name(qr_slice s)
{
    return name_is(s, "request") || name_is(s, "message") || name_is(s, "msg") ||
           name_is(s, "body") || name_is(s, "log");
}

/* An RFC 3339 date and time (not a bare date). */
static int is_datetime(const char *p, size_t n)
{
    int64_t ns;
    const char *why;
    return n >= 19 && (p[10] == 'T' || p[10] == ' ') && qr_time_parse(p, n, &ns, &why) == 0;
}

/* The epoch unit (QR_TS_EPOCH_*) in which v falls in 1990..2099, or -1. */
static int epoch_unit(int64_t v)
{
    int64_t lo = 631152000, hi = 4102444800; /* 1990-01-01, 2100-01-01 in seconds */
    for (int f = QR_TS_EPOCH_S;; f++) {
        if (v >= lo && v < hi)
            return f;
        if (f == QR_TS_EPOCH_NS)
            return -1;
        lo *= 1000, hi *= 1000; /* 4.1e18 at most: no overflow */
    }
}

/* A JSON number as written: K_INT with *v set (or *big = 1 when above
 * INT64_MAX but within uint64), else K_FLOAT (fraction, exponent, or an
 * integer beyond 64 bits). */
static unsigned number_kind(qr_slice r, int64_t *v, int *big)
{
    size_t i = 0;
    int neg = r.n > 0 && r.p[0] == '-';
    uint64_t m = 0;
    *big = 0;
    for (i = (size_t)neg; i < r.n; i++) {
        unsigned d = (unsigned)(r.p[i] - '0');
        if (d > 9 || m > (UINT64_MAX - d) / 10)
            return K_FLOAT;
        m = m * 10 + d;
    }
    if (neg) {
        if (m > (uint64_t)INT64_MAX + 1)
            return K_FLOAT;
        *v = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
    } else if (m > (uint64_t)INT64_MAX) {
        *big = 1;
        *v = 0;
    } else {
        *v = (int64_t)m;
    }
    return K_INT;
}

/* ---- reading one line ---- */

/* Consume one nested value, summing its string leaves into t. */
static int walk_value(qr_json *j, textstat *t, qr_arena *a)
{
    qr_slice s;
    int b, r;
    switch (qj_peek(j)) {
    case QJ_NULL:
        return qj_null(j);
    case QJ_TRUE:
    case QJ_FALSE:
        return qj_bool(j, &b);
    case QJ_NUMBER:
        return qj_number(j, &s);
    case QJ_STRING:
        if (qj_string(j, &s, a))
            return -1;
        text_add(t, s.p, s.n);
        return 0;
    case QJ_OBJECT:
        if (qj_object_begin(j))
            return -1;
        while ((r = qj_object_next(j, &s, a)) == 1)
            if (walk_value(j, t, a))
                return -1;
        return r;
    case QJ_ARRAY:
        if (qj_array_begin(j))
            return -1;
        while ((r = qj_array_next(j)) == 1)
            if (walk_value(j, t, a))
                return -1;
        return r;
    default:
        return -1;
    }
}

static member *push_member(infer *in)
{
    if (in->nm == in->m_cap) {
        size_t nc = in->m_cap ? in->m_cap * 2 : 64;
        member *nm = realloc(in->m, nc * sizeof *nm);
        if (!nm)
            return NULL;
        in->m = nm;
        in->m_cap = nc;
    }
    member *m = &in->m[in->nm++];
    memset(m, 0, sizeof *m);
    return m;
}

/* Parse the line into in->m. 1: a JSON object; 0: not one (or blank); -1:
 * out of memory. */
static int read_members(infer *in, const char *p, size_t n)
{
    qr_json j;
    qj_init(&j, p, n);
    in->nm = 0;
    if (qj_peek(&j) != QJ_OBJECT || qj_object_begin(&j))
        return 0;
    for (;;) {
        qr_slice key;
        int r = qj_object_next(&j, &key, &in->line);
        if (r < 0)
            return 0;
        if (r == 0)
            break;
        member *m = push_member(in);
        if (!m)
            return -1;
        m->key = key;
        switch (qj_peek(&j)) {
        case QJ_NULL:
            r = qj_null(&j);
            break;
        case QJ_TRUE:
        case QJ_FALSE:
            m->kind = K_BOOL;
            r = qj_bool(&j, &m->bval);
            break;
        case QJ_NUMBER:
            m->kind = K_INT; /* or K_FLOAT: decided when folded in */
            r = qj_number(&j, &m->val);
            break;
        case QJ_STRING:
            m->kind = K_STRING;
            r = qj_string(&j, &m->val, &in->line);
            break;
        case QJ_OBJECT:
        case QJ_ARRAY:
            m->kind = qj_peek(&j) == QJ_OBJECT ? K_OBJECT : K_ARRAY;
            r = walk_value(&j, &m->leaf, &in->line);
            break;
        default:
            r = -1;
        }
        if (r < 0)
            return 0;
    }
    return qj_finish(&j) == 0;
}

/* The id of key (ASCII case folded), adding it when new; -1 when out of
 * memory. */
static int64_t key_id(infer *in, qr_slice key)
{
    const char *p = key.p;
    int upper = 0;
    for (size_t i = 0; i < key.n && !upper; i++)
        upper = key.p[i] >= 'A' && key.p[i] <= 'Z';
    if (upper) { /* fold into the line arena: most keys are lowercase already */
        char *low = qr_arena_alloc(&in->line, key.n ? key.n : 1);
        if (!low)
            return -1;
        for (size_t i = 0; i < key.n; i++) {
            char c = key.p[i];
            low[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
        p = low;
    }
    int64_t id = qr_strmap_get(&in->keys, p, key.n);
    if (id >= 0)
        return id;
    /* the map keeps the pointer: it must outlive the line */
    if ((upper || !in_input(in, p)) && !(p = qr_arena_memdup(&in->keep, p, key.n)))
        return -1;
    int added;
    id = qr_strmap_put(&in->keys, p, key.n, &added);
    if (id < 0)
        return -1;
    if ((size_t)id >= in->ki_cap) {
        size_t nc = in->ki_cap ? in->ki_cap * 2 : 256;
        keyinfo *nk = realloc(in->ki, nc * sizeof *nk);
        if (!nk)
            return -1;
        in->ki = nk;
        in->ki_cap = nc;
    }
    in->ki[id].stamp = 0;
    in->ki[id].col = KEY_NEW;
    return id;
}

/* Give every member its key id. 1: ok; 0: a key repeats; -1: out of memory. */
static int check_keys(infer *in, uint32_t lineno)
{
    for (size_t i = 0; i < in->nm; i++) {
        int64_t id = key_id(in, in->m[i].key);
        if (id < 0)
            return -1;
        if (in->ki[id].stamp == lineno)
            return 0;
        in->ki[id].stamp = lineno;
        in->m[i].keyid = (uint32_t)id;
    }
    return 1;
}

/* ---- folding a line into the statistics ---- */

/* The column of a member's key, making it when first seen; KEY_EXTRA for
 * the catch-all; -1 when out of memory (KEY_NEW is never returned). */
static int32_t column_of(infer *in, const member *m)
{
    keyinfo *k = &in->ki[m->keyid];
    if (k->col != KEY_NEW)
        return k->col;
    if (!qr_col_name_ok(m->key.p, m->key.n) || in->ncols >= QR_MAX_COLUMNS - 1)
        return k->col = KEY_EXTRA;
    if (in->ncols == in->cols_cap) {
        uint32_t nc = in->cols_cap ? in->cols_cap * 2 : 32;
        colstat *ncs = realloc(in->cols, nc * sizeof *ncs);
        if (!ncs)
            return -1;
        in->cols = ncs;
        in->cols_cap = nc;
    }
    colstat *c = &in->cols[in->ncols];
    memset(c, 0, sizeof *c);
    qr_strmap_init(&c->distinct);
    c->name = m->key;
    if (!in_input(in, c->name.p) && !(c->name.p = qr_arena_memdup(&in->keep, m->key.p, m->key.n)))
        return -1;
    return k->col = (int32_t)in->ncols++;
}

/* Count a scalar value as written (static text or a slice that may die
 * with the line) in the column's distinct set. */
static int add_distinct(infer *in, colstat *c, const char *p, size_t n, int is_static)
{
    if (c->distinct.count >= DISTINCT_CAP || qr_strmap_get(&c->distinct, p, n) >= 0)
        return 0;
    if (!is_static && !in_input(in, p) && !(p = qr_arena_memdup(&in->keep, p, n)))
        return -1;
    int added;
    return qr_strmap_put(&c->distinct, p, n, &added) < 0 ? -1 : 0;
}

static int fold_member(infer *in, colstat *c, const member *m)
{
    if (!m->kind)
        return 0;
    c->nvals++;
    switch (m->kind) {
    case K_BOOL:
        c->kinds |= K_BOOL;
        return add_distinct(in, c, m->bval ? "true" : "false", m->bval ? 4 : 5, 1);
    case K_INT: {
        int64_t v;
        int big;
        unsigned k = number_kind(m->val, &v, &big);
        c->kinds |= k;
        if (k == K_INT && big) {
            c->int_big = 1;
        } else if (k == K_INT) {
            if (!c->nint || v < c->imin)
                c->imin = v;
            if (!c->nint || v > c->imax)
                c->imax = v;
            c->nint++;
            c->int_neg |= v < 0;
        }
        return add_distinct(in, c, m->val.p, m->val.n, 0);
    }
    case K_STRING:
        c->kinds |= K_STRING;
        text_add(&c->str, m->val.p, m->val.n);
        if (!c->not_ts && !(c->not_ts = !is_datetime(m->val.p, m->val.n)))
            return add_distinct(in, c, m->val.p, m->val.n, 0);
        return 0;
    default: /* K_OBJECT, K_ARRAY */
        c->kinds |= m->kind;
        text_merge(&c->leaf, &m->leaf);
        return 0;
    }
}

static int fold_line(infer *in)
{
    for (size_t i = 0; i < in->nm; i++) {
        int32_t col = column_of(in, &in->m[i]);
        if (col == -1)
            return -1;
        if (col >= 0 && fold_member(in, &in->cols[col], &in->m[i]) < 0)
            return -1;
    }
    return 0;
}

static int line_is_otel(const infer *in)
{
    if (in->nm != QR_OTEL_NCOLS)
        return 0;
    qr_slice keys[QR_OTEL_NCOLS];
    for (size_t i = 0; i < in->nm; i++)
        keys[i] = in->m[i].key;
    return qr_keys_are_otel(keys, in->nm);
}

/* ---- deciding the definition ---- */

/* The column type (and time format) the statistics call for. */
static int column_type(const colstat *c, uint8_t *tsfmt)
{
    unsigned k = c->kinds;
    *tsfmt = QR_TS_RFC3339;
    if (!k)
        return QT_TEXT;
    if (k == K_BOOL)
        return QT_BOOL;
    if (k == K_STRING) {
        if (c->not_ts)
            return QT_TEXT;
        *tsfmt = QR_TS_RFC3339_SHORT; /* prints "...:00Z" back as it came */
        return QT_TIMESTAMP;
    }
    if (k & ~(unsigned)(K_INT | K_FLOAT))
        return QT_JSON;
    if ((k & K_FLOAT) || (c->int_big && c->int_neg))
        return QT_FLOAT64;
    if (c->int_big)
        return QT_UINT64;
    int u = epoch_unit(c->imin);
    if (time_rank(c->name) <= 5 && u >= 0 && epoch_unit(c->imax) == u) {
        *tsfmt = (uint8_t)u;
        return QT_TIMESTAMP;
    }
    return QT_INT64;
}

/* Index candidates, in the order they are kept when there are more than
 * QR_MAX_INDEXES. */
enum { TIER_FULLTEXT, TIER_KEYWORD, TIER_PATHS, TIER_RANGE, TIER_JSON_TEXT, NTIERS };

typedef struct cand {
    int col, kind, tier, keep;
} cand;

/* The alias of an index on column `name`: the name lowercased when it is
 * [a-z_][a-z0-9_]* and not a word of the query syntax; else NULL. */
static const char *alias_for(const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    if (n == 0 || n >= cap || (name[0] >= '0' && name[0] <= '9'))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c + 32);
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
            return NULL;
        out[i] = c;
    }
    out[n] = 0;
    if (strcmp(out, "like") == 0 || strcmp(out, "time") == 0)
        return NULL;
    return out;
}

static int add_indexes(qr_tabdef *d, const infer *in, qr_err *e)
{
    cand *cs = calloc((size_t)d->ncols * 2, sizeof *cs);
    if (!cs)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    size_t nc = 0;
    for (uint32_t i = 0; i < d->ncols; i++) {
        const qr_coldef *col = &d->cols[i];
        if ((int32_t)i == d->extra_col) {
            cs[nc++] = (cand){(int)i, QR_IX_PATHS, TIER_PATHS, 0};
            continue;
        }
        const colstat *c = &in->cols[i];
        if (col->type == QT_TEXT) {
            if (free_text_name(c->name) || free_text(&c->str))
                cs[nc++] = (cand){(int)i, QR_IX_FULLTEXT, TIER_FULLTEXT, 0};
            else if (c->str.n && c->str.max <= TOKEN_MAX)
                cs[nc++] = (cand){(int)i, QR_IX_KEYWORD, TIER_KEYWORD, 0};
        } else if (col->type == QT_JSON) {
            textstat all = c->str;
            text_merge(&all, &c->leaf);
            cs[nc++] = (cand){(int)i, QR_IX_PATHS, TIER_PATHS, 0};
            if (prose_leaves(&all))
                cs[nc++] = (cand){(int)i, QR_IX_FULLTEXT, TIER_JSON_TEXT, 0};
        } else if ((int32_t)i != d->sort_col && c->distinct.count > 0 &&
                   c->distinct.count <= DISTINCT_MAX &&
                   (uint64_t)c->distinct.count * 2 <= c->nvals) {
            cs[nc++] = (cand){(int)i, QR_IX_RANGE, TIER_RANGE, 0};
        }
    }
    size_t kept = 0;
    for (int t = 0; t < NTIERS; t++)
        for (size_t k = 0; k < nc && kept < QR_MAX_INDEXES; k++)
            if (cs[k].tier == t)
                cs[k].keep = 1, kept++;
    char alias[QR_MAX_NAME + 1];
    int rc = 0, last_col = -1;
    for (size_t k = 0; k < nc && rc == 0; k++) {
        if (!cs[k].keep)
            continue;
        const char *a = NULL;
        if (cs[k].col != last_col) /* the first index on a column takes the alias */
            a = alias_for(d->cols[cs[k].col].name, alias, sizeof alias);
        if (a && qr_tabdef_index_by_name(d, a, strlen(a)) >= 0)
            a = NULL;
        last_col = cs[k].col;
        if (qr_tabdef_add_index(d, cs[k].col, cs[k].kind, 0, a, e) < 0)
            rc = -1;
    }
    free(cs);
    return rc;
}

static qr_tabdef *build(const infer *in, const char *name, qr_err *e)
{
    qr_tabdef *d = qr_tabdef_new(name);
    if (!d) {
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    int best = 6;
    for (uint32_t i = 0; i < in->ncols; i++) {
        const colstat *c = &in->cols[i];
        uint8_t tsfmt;
        int type = column_type(c, &tsfmt);
        if (qr_tabdef_add_col(d, c->name.p, c->name.n, type, 1, e) < 0)
            goto fail;
        d->cols[i].tsfmt = tsfmt;
        int rank = time_rank(c->name);
        if (type == QT_TIMESTAMP && (rank < 5 ? rank : 5) < best) {
            best = rank < 5 ? rank : 5;
            d->sort_col = (int32_t)i;
        }
    }
    char extra[24] = "_extra"; /* at most QR_MAX_COLUMNS names can be taken */
    for (int k = 2; qr_tabdef_col(d, extra, strlen(extra)) >= 0; k++)
        snprintf(extra, sizeof extra, "_extra%d", k);
    if ((d->extra_col = qr_tabdef_add_col(d, extra, strlen(extra), QT_JSON, 1, e)) < 0)
        goto fail;
    d->omit_nulls = 1;
    if (add_indexes(d, in, e) < 0)
        goto fail;
    return d;
fail:
    qr_tabdef_free(d);
    return NULL;
}

static void infer_free(infer *in)
{
    for (uint32_t i = 0; i < in->ncols; i++)
        qr_strmap_free(&in->cols[i].distinct);
    free(in->cols);
    free(in->ki);
    free(in->m);
    qr_strmap_free(&in->keys);
    qr_arena_free(&in->line);
    qr_arena_free(&in->keep);
}

qr_tabdef *qr_infer_schema(const char *name, const char *buf, size_t len, const char *src,
                           qr_err *e)
{
    infer in;
    memset(&in, 0, sizeof in);
    in.buf = buf;
    in.len = len;
    qr_arena_init(&in.line, 64 * 1024, 0);
    qr_arena_init(&in.keep, 64 * 1024, 0);
    qr_strmap_init(&in.keys);
    qr_tabdef *d = NULL;
    uint32_t lineno = 0, usable = 0;
    size_t off = 0;
    while (off < len && lineno < QR_INFER_SAMPLE_LINES) {
        const char *p = buf + off;
        const char *nl = memchr(p, '\n', len - off);
        size_t n = nl ? (size_t)(nl - p) : len - off;
        off += n + (nl != NULL);
        lineno++;
        qr_arena_reset(&in.line);
        int r = read_members(&in, p, n);
        if (r > 0)
            r = check_keys(&in, lineno);
        if (r < 0)
            goto nomem;
        if (r == 0)
            continue;
        if (usable++ == 0 && line_is_otel(&in)) {
            if (!(d = qr_tabdef_otel(name)))
                goto nomem;
            goto done;
        }
        if (fold_line(&in) < 0)
            goto nomem;
    }
    if (!usable) {
        if (lineno == 0)
            qr_errf(e, QR_E_INVALID_TEXT,
                    "%s: empty input: no JSON object to infer a schema from; give --schema", src);
        else if (lineno == 1)
            qr_errf(e, QR_E_INVALID_TEXT,
                    "%s: no JSON object in the first line to infer a schema from; give --schema",
                    src);
        else
            qr_errf(e, QR_E_INVALID_TEXT,
                    "%s: no JSON object in the first %u lines to infer a schema from; give "
                    "--schema",
                    src, lineno);
        goto done;
    }
    if (!(d = build(&in, name, e))) {
        qr_err_prefix(e, "%s: inferring a schema: ", src);
        goto done;
    }
    if (qr_tabdef_validate(d, src, e) < 0) { /* an invariant: the rules make valid tables */
        qr_tabdef_free(d);
        d = NULL;
    }
    goto done;
nomem:
    qr_errf(e, QR_E_NOMEM, "%s: out of memory while inferring a schema", src);
done:
    infer_free(&in);
    return d;
}
