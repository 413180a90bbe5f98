/* parse.c - parsing the command-line search syntax into a filter tree (see
 * query.h for the grammar). A small recursive-descent parser over the raw
 * text; words are analysed with the Body tokenizer so a query term is
 * exactly what indexing produced. */
#include "query/query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/schema.h"

#include "analysis/tokenizer.h"
#include "index/invfmt.h"
#include "index/invindex.h"
#include "automaton/automaton.h"
#include "util/timefmt.h"

typedef struct parser {
    const char *s, *p, *end;
    qr_arena *a;
    qr_err *e;
    int failed;
    unsigned depth; /* nesting of groups, NOT and atleast() */
    const qr_tabdef *def;
    uint16_t deftext;   /* the default full-text index, 0 = none */
    uint16_t field;     /* the full-text index words go to now */
    int keep_case;      /* that index keeps case */
} parser;

#define QR_QUERY_MAX_DEPTH 100

static qr_query *fail_at(parser *ps, const char *at, const char *fmt, const char *what)
{
    if (!ps->failed) {
        char msg[200];
        snprintf(msg, sizeof msg, fmt, what);
        qr_errf(ps->e, QR_E_INVALID_TEXT, "query: %s at byte %zu", msg, (size_t)(at - ps->s) + 1);
    }
    ps->failed = 1;
    return NULL;
}

static qr_query *node(parser *ps, qr_qtype t)
{
    qr_query *q = qr_arena_alloc(ps->a, sizeof *q);
    if (!q) {
        if (!ps->failed)
            qr_errf(ps->e, QR_E_NOMEM, "query: out of memory");
        ps->failed = 1;
        return NULL;
    }
    memset(q, 0, sizeof *q);
    q->type = t;
    q->field = ps->field;
    q->scored = ps->field != 0 && ps->field == ps->deftext;
    return q;
}

static char *copy_text(parser *ps, const char *t, size_t n)
{
    char *c = qr_arena_strndup(ps->a, t, n);
    if (!c)
        fail_at(ps, ps->p, "%s", "out of memory");
    return c;
}

/* Words need a full-text index to go to. */
static int need_text(parser *ps, const char *at)
{
    if (ps->field)
        return 0;
    fail_at(ps, at, "%s", "this table has no full-text index: search COLUMN:value");
    return -1;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int is_stop(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == ')' || c == ',';
}

/* word at p? (exact keyword, followed by a stop char or end) */
static int at_keyword(parser *ps, const char *kw)
{
    size_t n = strlen(kw);
    return (size_t)(ps->end - ps->p) >= n && memcmp(ps->p, kw, n) == 0 &&
           (ps->p + n == ps->end || is_stop(ps->p[n]) || ps->p[n] == '"');
}

static qr_query *parse_or(parser *ps);

/* The position in def->ixs of the index with section id `id`. */
static int ix_pos(const qr_tabdef *d, uint16_t id)
{
    for (uint32_t i = 0; i < d->nixs; i++)
        if (d->ixs[i].id == id)
            return (int)i;
    return -1;
}

/* Analyse free text into a term (1 token) or a phrase (several). */
static qr_query *text_query(parser *ps, const char *t, size_t n, const char *at)
{
    qr_token toks[65];
    if (need_text(ps, at) != 0)
        return NULL;
    size_t k = qr_tok_analyze_case(t, n, ps->keep_case, ps->a, toks, 65);
    if (k == QR_TOK_NOMEM)
        return fail_at(ps, at, "%s", "out of memory");
    if (k == 0) {
        char w[64];
        snprintf(w, sizeof w, "%.*s", (int)(n > 40 ? 40 : n), t);
        return fail_at(ps, at, "'%s' has no letters or digits to search for", w);
    }
    if (k > 64)
        return fail_at(ps, at, "%s has more than 64 words", "text");
    const char *w[64];
    size_t l[64];
    uint32_t o[64];
    for (size_t i = 0; i < k; i++) {
        w[i] = toks[i].p;
        l[i] = toks[i].n;
        o[i] = (uint32_t)i;
    }
    qr_query *q = qr_q_phrase(ps->def, ix_pos(ps->def, ps->field), w, l, o, (uint32_t)k, 0, ps->a,
                              ps->e);
    if (!q)
        ps->failed = 1;
    return q;
}

/* "a b ? c"~N */
static qr_query *parse_phrase(parser *ps)
{
    const char *open = ps->p++;
    const char *close = memchr(ps->p, '"', (size_t)(ps->end - ps->p));
    if (!close)
        return fail_at(ps, open, "%s", "unterminated '\"'");
    if (need_text(ps, open) != 0)
        return NULL;
    qr_query *q = node(ps, Q_PHRASE);
    if (!q)
        return NULL;
    enum { MAXT = 64 };
    q->terms = qr_arena_alloc(ps->a, sizeof *q->terms * MAXT);
    q->term_lens = qr_arena_alloc(ps->a, sizeof *q->term_lens * MAXT);
    q->offs = qr_arena_alloc(ps->a, sizeof *q->offs * MAXT);
    if (!q->terms || !q->term_lens || !q->offs)
        return fail_at(ps, open, "%s", "out of memory");
    uint32_t pos = 0, gaps_seen = 0;
    const char *w = ps->p;
    while (w < close) {
        while (w < close && (*w == ' ' || *w == '\t'))
            w++;
        const char *we = w;
        while (we < close && *we != ' ' && *we != '\t')
            we++;
        if (we == w)
            break;
        if (we - w == 1 && *w == '?') {
            if (q->n == 0)
                return fail_at(ps, w, "%s", "a phrase cannot start with '?'");
            pos++;
            gaps_seen = 1;
        } else {
            qr_token toks[MAXT + 1];
            size_t k =
                qr_tok_analyze_case(w, (size_t)(we - w), ps->keep_case, ps->a, toks, MAXT + 1);
            if (k == QR_TOK_NOMEM)
                return fail_at(ps, w, "%s", "out of memory");
            for (size_t i = 0; i < k; i++) {
                if (q->n == MAXT)
                    return fail_at(ps, w, "%s", "phrase longer than 64 words");
                q->terms[q->n] = toks[i].p;
                q->term_lens[q->n] = toks[i].n;
                q->offs[q->n] = pos++;
                q->n++;
            }
        }
        w = we;
    }
    if (q->n == 0)
        return fail_at(ps, open, "%s", "empty phrase");
    if (pos > q->offs[q->n - 1] + 1)
        return fail_at(ps, close, "%s", "a phrase cannot end with '?'");
    ps->p = close + 1;
    if (ps->p < ps->end && *ps->p == '~') {
        const char *at = ps->p++;
        uint32_t v = 0;
        int digits = 0;
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9' && v < 100000) {
            v = v * 10 + (uint32_t)(*ps->p++ - '0');
            digits++;
        }
        if (!digits)
            return fail_at(ps, at, "%s", "expected a number after '~'");
        if (q->n != 2 || gaps_seen)
            return fail_at(ps, at, "%s", "proximity \"a b\"~N takes exactly two words");
        q->within = v;
        q->within = v; /* 0 = adjacent, the plain phrase */
    }
    if (q->n == 1) { /* a one-word phrase is a term */
        q->type = Q_TERM;
        q->text = q->terms[0];
        q->len = q->term_lens[0];
    }
    return q;
}

static int parse_i64(const char *s, size_t n, int64_t *v)
{
    int neg = 0;
    size_t i = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == n)
        return -1;
    uint64_t x = 0, max = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9 || x > (max - d) / 10)
            return -1;
        x = x * 10 + d;
    }
    *v = neg ? (int64_t)(0 - x) : (int64_t)x;
    return 0;
}

/* Stored values of +0.0 and -0.0 (qr_num_from_f64: adjacent). */
#define F_POS0 ((int64_t)0)
#define F_NEG0 ((int64_t)-1)

/* A bound of a range on a column, in its stored domain. */
static int range_value(const qr_coldef *cd, const char *s, size_t n, int64_t *v, const char **why)
{
    int type = cd->type;
    if (type == QT_TIMESTAMP) { /* RFC 3339, or an integer in the column's unit */
        int64_t x, unit = qr_tsfmt_unit_ns(cd->tsfmt);
        if (n && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) && parse_i64(s, n, &x) == 0) {
            if (x > INT64_MAX / unit || x < INT64_MIN / unit)
                return *why = "out of range", -1;
            *v = x * unit;
            return 0;
        }
        return qr_time_parse(s, n, v, why);
    }
    if (type == QT_BOOL && n == 4 && memcmp(s, "true", 4) == 0)
        return *v = 1, 0;
    if (type == QT_BOOL && n == 5 && memcmp(s, "false", 5) == 0)
        return *v = 0, 0;
    if (type == QT_FLOAT64 || type == QT_UINT64) {
        char tmp[64];
        if (n == 0 || n >= sizeof tmp)
            return -1;
        memcpy(tmp, s, n);
        tmp[n] = 0;
        char *end;
        if (type == QT_FLOAT64) {
            double d = strtod(tmp, &end);
            if (*end || d != d)
                return -1;
            *v = qr_num_from_f64(d);
            return 0;
        }
        if (tmp[0] == '-')
            return -1;
        errno = 0;
        unsigned long long u = strtoull(tmp, &end, 10);
        if (*end || errno)
            return -1;
        *v = qr_num_from_u64(u);
        return 0;
    }
    return parse_i64(s, n, v);
}

/* Range value: "17", ">=13", "<5", "[9 TO 17]" on a number or timestamp
 * column (qr_q_range picks its range index, the sort column's binary search
 * or a scan). */
static qr_query *parse_range(parser *ps, int col, const char *v, size_t n, const char *at)
{
    int type = ps->def->cols[col].type;
    int is_time = type == QT_TIMESTAMP;
    qr_query *q = qr_q_range(ps->def, col, INT64_MIN, INT64_MAX, ps->a, ps->e);
    if (!q) {
        ps->failed = 1;
        return NULL;
    }
    q->lo = INT64_MIN;
    q->hi = INT64_MAX;
    const char *why = NULL;
#define VAL(s_, n_, out_) range_value(&ps->def->cols[col], (s_), (n_), (out_), &why)
    if (n && v[0] == '[') {
        const char *to = NULL;
        for (size_t i = 1; i + 4 <= n; i++)
            if (memcmp(v + i, " TO ", 4) == 0) {
                to = v + i;
                break;
            }
        if (!to || v[n - 1] != ']')
            return fail_at(ps, at, "%s", "expected [LOW TO HIGH]");
        if (VAL(v + 1, (size_t)(to - v - 1), &q->lo) != 0 ||
            VAL(to + 4, (size_t)(v + n - 1 - to - 4), &q->hi) != 0)
            return fail_at(ps, at, "bad range bound%s", why ? " (timestamp)" : "");
        if (type == QT_FLOAT64) { /* 0 as a bound takes both zeros */
            if (q->lo == F_POS0 || q->lo == F_NEG0)
                q->lo = F_NEG0;
            if (q->hi == F_POS0 || q->hi == F_NEG0)
                q->hi = F_POS0;
        }
        return q;
    }
    int64_t x;
    size_t skip = 0;
    int op = 0; /* 0 =, 1 >=, 2 >, 3 <=, 4 < */
    if (n >= 2 && v[0] == '>' && v[1] == '=')
        op = 1, skip = 2;
    else if (n >= 1 && v[0] == '>')
        op = 2, skip = 1;
    else if (n >= 2 && v[0] == '<' && v[1] == '=')
        op = 3, skip = 2;
    else if (n >= 1 && v[0] == '<')
        op = 4, skip = 1;
    else if (n >= 1 && v[0] == '=')
        skip = 1; /* =N, as documented: the same as N */
    if (VAL(v + skip, n - skip, &x) != 0)
        return fail_at(ps, at, "bad %s value", is_time ? "time" : qr_type_name(type));
#undef VAL
    if (type == QT_FLOAT64 && (x == F_POS0 || x == F_NEG0)) {
        /* -0 and +0 are the adjacent stored values -1 and 0; a bound of 0
         * means both: >= and = start at -0, > after +0, <= and = end at
         * +0, < before -0 */
        x = op == 0 || op == 1 || op == 4 ? F_NEG0 : F_POS0;
        if (op == 0) {
            q->lo = F_NEG0, q->hi = F_POS0;
            return q;
        }
    }
    switch (op) {
    case 0:
        q->lo = q->hi = x;
        break;
    case 1:
        q->lo = x;
        break;
    case 2:
        if (x == INT64_MAX)
            q->lo = x, q->hi = x - 1;
        else
            q->lo = x + 1;
        break;
    case 3:
        q->hi = x;
        break;
    case 4:
        if (x == INT64_MIN)
            q->lo = x + 1, q->hi = x;
        else
            q->hi = x - 1;
        break;
    }
    return q;
}

static qr_query *parse_word(parser *ps);

/* The words of a full-text column: term, "phrase" or prefix*, analysed
 * like that column. */
static qr_query *fulltext_value(parser *ps, const qr_ixdef *x, const char *v, size_t vn)
{
    uint16_t field = ps->field;
    int keep = ps->keep_case;
    ps->field = x->id;
    ps->keep_case = !x->lowercase;
    parser sub = *ps; /* parse the value on its own */
    sub.s = ps->s;
    sub.p = v;
    sub.end = v + vn;
    qr_query *q = vn && v[0] == '"' ? parse_phrase(&sub) : parse_word(&sub);
    if (q && sub.p != sub.end)
        q = fail_at(&sub, sub.p, "%s", "one word, \"phrase\" or prefix* after COLUMN:");
    ps->failed |= sub.failed;
    ps->field = field;
    ps->keep_case = keep;
    return q;
}

/* NAME:VALUE for an index alias, the sort column (time), a column, or a
 * json/map column's path (COLUMN.path). */
static qr_query *field_query(parser *ps, const char *w, size_t fn, const char *v, size_t vn)
{
    const qr_tabdef *d = ps->def;
    int ix = qr_tabdef_index_by_name(d, w, fn), col = -1;
    const char *path = NULL;
    size_t pn = 0;
    if (ix >= 0) {
        col = d->ixs[ix].col;
        if (d->ixs[ix].building) /* not usable yet: the alias names its column */
            ix = -1;
    } else if (fn == 4 && memcmp(w, "time", 4) == 0 && d->sort_col >= 0 &&
               qr_tabdef_col(d, w, fn) < 0) {
        col = d->sort_col;
    } else if ((col = qr_tabdef_col(d, w, fn)) < 0) {
        /* the longest column name followed by '.' */
        for (size_t k = fn; k-- > 1;)
            if (w[k] == '.' && (col = qr_tabdef_col(d, w, k)) >= 0) {
                path = w + k + 1;
                pn = fn - k - 1;
                break;
            }
        if (col < 0)
            return fail_at(ps, w, "unknown column or index '%s'",
                           copy_text(ps, w, fn > 64 ? 64 : fn));
    }
    int type = d->cols[col].type;
    if (vn >= 2 && v[0] == '"' && v[vn - 1] == '"' && !path &&
        (ix < 0 || d->ixs[ix].kind != QR_IX_FULLTEXT) &&
        qr_tabdef_index_on(d, col, QR_IX_FULLTEXT) < 0)
        v++, vn -= 2;
    if (path) {
        if (vn >= 2 && v[0] == '"' && v[vn - 1] == '"')
            v++, vn -= 2;
        if (qr_tabdef_index_on(d, col, QR_IX_PATHS) < 0)
            return fail_at(ps, w, "column %s has no paths index", d->cols[col].name);
        qr_query *q = qr_q_path(d, col, path, pn, v, vn, ps->a, ps->e);
        if (!q)
            ps->failed = 1;
        return q;
    }
    if (qr_type_is_int(type))
        return parse_range(ps, col, v, vn, v);
    if (vn && (v[0] == '>' || v[0] == '<' || (v[0] == '[' && v[vn - 1] == ']' && memmem(v, vn, " TO ", 4))))
        return fail_at(ps, v, "column %s is not a number or timestamp column: no range on it",
                       d->cols[col].name);
    int kx = ix >= 0 && d->ixs[ix].kind == QR_IX_KEYWORD ? ix : -1;
    int fx = ix >= 0 && d->ixs[ix].kind == QR_IX_FULLTEXT ? ix : -1;
    if (kx < 0 && fx < 0) {
        fx = qr_tabdef_index_on(d, col, QR_IX_FULLTEXT);
        kx = fx >= 0 ? -1 : qr_tabdef_index_on(d, col, QR_IX_KEYWORD);
    }
    if (fx >= 0)
        return fulltext_value(ps, &d->ixs[fx], v, vn);
    if (kx < 0 && type != QT_TEXT)
        return fail_at(ps, w, "column %s has no index to search it by (a paths index finds "
                              "COLUMN.path:value)",
                       d->cols[col].name);
    qr_query *q = qr_q_equals(d, col, v, vn, ps->a, ps->e); /* keyword index, or a scan */
    if (!q)
        ps->failed = 1;
    return q;
}

/* A bare word (possibly with field:, *, ~N). */
static qr_query *parse_word(parser *ps)
{
    const char *w = ps->p;
    const char *colon = NULL;
    /* field:"quoted value" or field:[a TO b] may contain spaces */
    while (ps->p < ps->end && !is_stop(*ps->p)) {
        if (*ps->p == ':' && !colon) {
            colon = ps->p;
            if (ps->p + 1 < ps->end && (ps->p[1] == '"' || ps->p[1] == '[')) {
                char closer = ps->p[1] == '"' ? '"' : ']';
                const char *c = memchr(ps->p + 2, closer, (size_t)(ps->end - ps->p - 2));
                if (!c)
                    return fail_at(ps, ps->p + 1, "unterminated '%s'", closer == '"' ? "\"" : "[");
                ps->p = c + 1;
                break;
            }
        }
        ps->p++;
    }
    size_t n = (size_t)(ps->p - w);
    if (colon) {
        size_t fn = (size_t)(colon - w);
        const char *v = colon + 1;
        size_t vn = n - fn - 1;
        if (fn == 4 && memcmp(w, "like", 4) == 0 && qr_tabdef_col(ps->def, w, fn) < 0) {
            if (need_text(ps, w) != 0)
                return NULL;
            qr_query *q = node(ps, Q_LIKE);
            if (!q)
                return NULL;
            char *low = qr_arena_alloc(ps->a, vn + 1);
            if (!low)
                return fail_at(ps, w, "%s", "out of memory");
            for (size_t i = 0; i < vn; i++)
                low[i] = (char)(v[i] >= 'A' && v[i] <= 'Z' && !ps->keep_case ? v[i] + 32 : v[i]);
            q->text = low;
            q->len = vn;
            return q;
        }
        return field_query(ps, w, fn, v, vn);
    }
    if (n >= 2 && w[n - 1] == '*' && !memchr(w, '*', n - 1)) {
        qr_token t[2];
        if (need_text(ps, w) != 0)
            return NULL;
        size_t k = qr_tok_analyze_case(w, n - 1, ps->keep_case, ps->a, t, 2);
        if (k != 1)
            return fail_at(ps, w, "%s", "a prefix must be one word (letters and digits)");
        qr_query *q = node(ps, Q_PREFIX);
        if (q) {
            q->text = t[0].p;
            q->len = t[0].n;
        }
        return q;
    }
    const char *tilde = memchr(w, '~', n);
    if (tilde) {
        size_t tn = (size_t)(tilde - w);
        uint32_t d = 2;
        if (tilde + 1 < w + n) {
            if (tilde + 2 != w + n || (tilde[1] != '1' && tilde[1] != '2'))
                return fail_at(ps, tilde, "%s", "fuzzy distance must be ~1 or ~2");
            d = (uint32_t)(tilde[1] - '0');
        }
        qr_token t[2];
        if (need_text(ps, w) != 0)
            return NULL;
        size_t k = qr_tok_analyze_case(w, tn, ps->keep_case, ps->a, t, 2);
        if (k != 1)
            return fail_at(ps, w, "%s", "a fuzzy term must be one word");
        qr_query *q = node(ps, Q_FUZZY);
        if (q) {
            q->text = t[0].p;
            q->len = t[0].n;
            q->k = d;
        }
        return q;
    }
    return text_query(ps, w, n, w);
}

static qr_query *parse_primary(parser *ps)
{
    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail_at(ps, ps->p, "%s", "unexpected end of query");
    char c = *ps->p;
    if (c == '(') {
        const char *open = ps->p++;
        ps->depth++;
        qr_query *q = parse_or(ps);
        ps->depth--;
        skip_ws(ps);
        if (!q)
            return NULL;
        if (ps->p >= ps->end || *ps->p != ')')
            return fail_at(ps, ps->p >= ps->end ? open : ps->p, "%s", "expected ')'");
        ps->p++;
        return q;
    }
    if (c == '"')
        return parse_phrase(ps);
    if (c == '/') {
        const char *open = ps->p++;
        const char *close = memchr(ps->p, '/', (size_t)(ps->end - ps->p));
        if (!close)
            return fail_at(ps, open, "%s", "unterminated regexp '/'");
        if (need_text(ps, open) != 0)
            return NULL;
        qr_query *q = node(ps, Q_REGEXP);
        if (q) {
            q->len = (size_t)(close - ps->p);
            if (!(q->text = copy_text(ps, ps->p, q->len)))
                return NULL;
        }
        ps->p = close + 1;
        return q;
    }
    if (c == ')' || c == ',')
        return fail_at(ps, ps->p, "unexpected '%s'", c == ')' ? ")" : ",");
    if ((size_t)(ps->end - ps->p) > 8 && memcmp(ps->p, "atleast(", 8) == 0) {
        const char *at = ps->p;
        ps->p += 8;
        skip_ws(ps);
        uint32_t k = 0;
        int digits = 0;
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9' && k < 100000)
            k = k * 10 + (uint32_t)(*ps->p++ - '0'), digits++;
        skip_ws(ps);
        if (!digits || ps->p >= ps->end || *ps->p != ',')
            return fail_at(ps, at, "%s", "expected atleast(K, query, ...)");
        qr_query *q = node(ps, Q_MINMATCH);
        if (!q)
            return NULL;
        q->k = k;
        qr_query *kids[256];
        while (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            if (q->n == 256)
                return fail_at(ps, ps->p, "%s", "more than 256 clauses");
            ps->depth++;
            kids[q->n] = parse_or(ps);
            ps->depth--;
            if (!kids[q->n++])
                return NULL;
            skip_ws(ps);
        }
        if (ps->p >= ps->end || *ps->p != ')')
            return fail_at(ps, ps->p, "%s", "expected ')' to close atleast(");
        ps->p++;
        if (k == 0 || k > q->n)
            return fail_at(ps, at, "%s", "atleast(K, ...) needs 1 <= K <= number of clauses");
        q->kids = qr_arena_memdup(ps->a, kids, sizeof *kids * q->n);
        return q->kids ? q : fail_at(ps, at, "%s", "out of memory");
    }
    return parse_word(ps);
}

static qr_query *parse_unary(parser *ps)
{
    skip_ws(ps);
    if (ps->depth > QR_QUERY_MAX_DEPTH)
        return fail_at(ps, ps->p, "%s", "nesting deeper than 100");
    if (at_keyword(ps, "NOT") || (ps->p < ps->end && *ps->p == '-')) {
        ps->p += *ps->p == '-' ? 1 : 3;
        qr_query *q = node(ps, Q_NOT);
        ps->depth++;
        qr_query *k = parse_unary(ps);
        ps->depth--;
        if (!q || !k)
            return NULL;
        q->kids = qr_arena_alloc(ps->a, sizeof *q->kids);
        if (!q->kids)
            return NULL;
        q->kids[0] = k;
        q->n = 1;
        return q;
    }
    return parse_primary(ps);
}

static qr_query *list_node(parser *ps, qr_qtype t, qr_query **kids, uint32_t n)
{
    if (n == 1)
        return kids[0];
    qr_query *q = node(ps, t);
    if (!q)
        return NULL;
    q->n = n;
    q->kids = qr_arena_memdup(ps->a, kids, sizeof *kids * n);
    return q->kids ? q : NULL;
}

static qr_query *parse_and(parser *ps)
{
    qr_query *kids[256];
    uint32_t n = 0;
    for (;;) {
        skip_ws(ps);
        if (ps->p >= ps->end || *ps->p == ')' || *ps->p == ',' || at_keyword(ps, "OR"))
            break;
        if (at_keyword(ps, "AND")) {
            if (n == 0)
                return fail_at(ps, ps->p, "%s", "AND without a left side");
            ps->p += 3;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p == ')' || at_keyword(ps, "OR") || at_keyword(ps, "AND"))
                return fail_at(ps, ps->p, "%s", "AND without a right side");
            continue;
        }
        if (n == 256)
            return fail_at(ps, ps->p, "%s", "more than 256 clauses");
        if (!(kids[n++] = parse_unary(ps)))
            return NULL;
    }
    if (n == 0)
        return fail_at(ps, ps->p, "%s", "expected a search term");
    return list_node(ps, Q_AND, kids, n);
}

static qr_query *parse_or(parser *ps)
{
    qr_query *kids[256];
    uint32_t n = 0;
    for (;;) {
        if (n == 256)
            return fail_at(ps, ps->p, "%s", "more than 256 clauses");
        if (!(kids[n++] = parse_and(ps)))
            return NULL;
        skip_ws(ps);
        if (!at_keyword(ps, "OR"))
            break;
        ps->p += 2;
    }
    return list_node(ps, Q_OR, kids, n);
}

qr_query *qr_query_parse_for(const qr_tabdef *def, const char *text, size_t n, qr_arena *a,
                             qr_err *e)
{
    parser ps = {text, text, text + n, a, e, 0, 0, def, 0, 0, 0};
    for (uint32_t i = 0; i < def->nixs; i++)
        if (def->ixs[i].kind == QR_IX_FULLTEXT && !def->ixs[i].building) {
            ps.deftext = ps.field = def->ixs[i].id;
            ps.keep_case = !def->ixs[i].lowercase;
            break;
        }
    qr_query *q = parse_or(&ps);
    if (!q)
        return NULL;
    skip_ws(&ps);
    if (ps.p < ps.end)
        return fail_at(&ps, ps.p, "unexpected '%s'", *ps.p == ')' ? ")" : ",");
    return q;
}

qr_query *qr_query_parse(const char *text, size_t n, qr_arena *a, qr_err *e)
{
    qr_tabdef *d = qr_tabdef_otel("otel_logs");
    if (!d) {
        qr_errf(e, QR_E_NOMEM, "query: out of memory");
        return NULL;
    }
    qr_query *q = qr_query_parse_for(d, text, n, a, e);
    qr_tabdef_free(d);
    return q;
}

void qr_query_release(qr_query *q) { (void)q; }

static void out(char **p, char *end, const char *s, size_t n)
{
    size_t room = (size_t)(end - *p);
    if (room <= 1)
        return;
    if (n > room - 1)
        n = room - 1;
    memcpy(*p, s, n);
    *p += n;
    **p = 0;
}

static void print_rec(const qr_query *q, char **p, char *end)
{
    char tmp[96];
    switch (q->type) {
    case Q_ALL:
        out(p, end, "ALL", 3);
        return;
    case Q_TERM: {
        const char *sep = q->colname ? memchr(q->text, QR_PATH_SEP, q->len) : NULL;
        if (q->colname) { /* a keyword, a path or a scan: its column */
            out(p, end, q->colname, strlen(q->colname));
            out(p, end, sep ? "." : ":", 1);
        } else if (!q->scored) { /* words of another full-text column */
            int k = snprintf(tmp, sizeof tmp, "index#%u:", q->field);
            out(p, end, tmp, (size_t)k);
        }
        if (sep) { /* path NUL value */
            out(p, end, q->text, (size_t)(sep - q->text));
            out(p, end, ":", 1);
            out(p, end, sep + 1, q->len - (size_t)(sep - q->text) - 1);
        } else {
            out(p, end, q->text, q->len);
        }
        return;
    }
    case Q_PHRASE:
        out(p, end, "\"", 1);
        for (uint32_t i = 0; i < q->n; i++) {
            if (i) {
                for (uint32_t g = q->offs[i - 1] + 1; g < q->offs[i]; g++)
                    out(p, end, " ?", 2);
                out(p, end, " ", 1);
            }
            out(p, end, q->terms[i], q->term_lens[i]);
        }
        out(p, end, "\"", 1);
        if (q->within) {
            int k = snprintf(tmp, sizeof tmp, "~%u", q->within);
            out(p, end, tmp, (size_t)k);
        }
        return;
    case Q_AND:
    case Q_OR:
    case Q_MINMATCH:
        if (q->type == Q_MINMATCH) {
            int k = snprintf(tmp, sizeof tmp, "atleast(%u, ", q->k);
            out(p, end, tmp, (size_t)k);
        } else {
            out(p, end, "(", 1);
        }
        for (uint32_t i = 0; i < q->n; i++) {
            if (i)
                out(p, end, q->type == Q_AND ? " AND " : q->type == Q_OR ? " OR " : ", ",
                    q->type == Q_MINMATCH ? 2 : q->type == Q_AND ? 5 : 4);
            print_rec(q->kids[i], p, end);
        }
        out(p, end, ")", 1);
        return;
    case Q_NOT:
        out(p, end, "NOT ", 4);
        print_rec(q->kids[0], p, end);
        return;
    case Q_PREFIX:
        out(p, end, q->text, q->len);
        out(p, end, "*", 1);
        return;
    case Q_REGEXP:
        out(p, end, "/", 1);
        out(p, end, q->text, q->len);
        out(p, end, "/", 1);
        return;
    case Q_LIKE:
        out(p, end, "like:", 5);
        out(p, end, q->text, q->len);
        return;
    case Q_FUZZY:
        out(p, end, q->text, q->len);
        snprintf(tmp, sizeof tmp, "~%u", q->k);
        out(p, end, tmp, strlen(tmp));
        return;
    case Q_INT_RANGE:
    case Q_TIME_RANGE: {
        const char *c = q->colname ? q->colname : "?";
        out(p, end, c, strlen(c));
        int k = snprintf(tmp, sizeof tmp, ":[%lld TO %lld]", (long long)q->lo, (long long)q->hi);
        out(p, end, tmp, k < (int)sizeof tmp ? (size_t)k : sizeof tmp - 1);
        return;
    }
    }
}

void qr_query_print(const qr_query *q, char *buf, size_t size)
{
    if (!size)
        return;
    buf[0] = 0;
    char *p = buf;
    print_rec(q, &p, buf + size);
}
