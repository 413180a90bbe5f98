/* where.c - the WHERE clause to one filter tree (query/query.h), built with
 * the tree constructors that `quarry search`'s parser also uses, so a SQL
 * predicate and the equivalent search query are the same tree:
 *
 *   col @@ 'text'                 qr_q_text (analysed like the column)
 *   col @@ ts_all([...])          AND of texts; ts_any([...]) OR; ts_any([...], k) at least k
 *   col @@ ts_phrase('a','b')     phrase; ts_phrase('a') ## N ## 'b': N words between
 *   col @@ ts_regexp / ts_starts_with / ts_like / ts_levenshtein(t, 1|2)   multi-term
 *   ts_split_by_non_alpha(col, true) @@ ...   the same as col @@ ...
 *   col = 'v', col IN (...)       keyword equality (OR of equals)
 *   col = N, <, <=, >, >=, <>, BETWEEN   ranges (numbers, bool, timestamps)
 *   AND / OR / NOT                the tree's AND / OR / NOT
 * Anything else the index cannot answer fails with 0A000 naming it. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/tokenizer.h"
#include "sql/bind.h"
#include "util/timefmt.h"

#define MAX_LIST 1024

typedef PgQuery__Node Node;

static const char *str_of(const Node *n)
{
    return n && n->node_case == PG_QUERY__NODE__NODE_STRING ? n->string->sval : NULL;
}

/* The operator name of an A_Expr ("=", "@@", "##"). */
static const char *op_name(const PgQuery__AExpr *x)
{
    return x->n_name ? str_of(x->name[x->n_name - 1]) : NULL;
}

static const char *func_name(const PgQuery__FuncCall *f)
{
    return f->n_funcname ? str_of(f->funcname[f->n_funcname - 1]) : NULL;
}

/* A string literal (also 'x'::text): its text, or NULL. */
static const char *string_lit(const Node *n)
{
    if (n && n->node_case == PG_QUERY__NODE__NODE_TYPE_CAST)
        n = n->type_cast->arg;
    if (n && n->node_case == PG_QUERY__NODE__NODE_A_CONST &&
        n->a_const->val_case == PG_QUERY__A__CONST__VAL_SVAL)
        return n->a_const->sval->sval;
    return NULL;
}

/* An integer literal; 0 when n is one. */
static int int_lit(const Node *n, int64_t *v)
{
    if (n && n->node_case == PG_QUERY__NODE__NODE_A_CONST &&
        n->a_const->val_case == PG_QUERY__A__CONST__VAL_IVAL) {
        *v = n->a_const->ival->ival;
        return 0;
    }
    if (n && n->node_case == PG_QUERY__NODE__NODE_A_CONST &&
        n->a_const->val_case == PG_QUERY__A__CONST__VAL_FVAL) { /* beyond int32 */
        char *end;
        errno = 0;
        long long x = strtoll(n->a_const->fval->fval, &end, 10);
        if (!*end && !errno) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* The elements of a list argument: ARRAY[...] (or a rewritten [...]). */
static int list_arg(qr_binder *b, const Node *n, Node ***items, size_t *nitems)
{
    if (!n || n->node_case != PG_QUERY__NODE__NODE_A_ARRAY_EXPR)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_DATATYPE,
                            "expected a list of strings (['a','b'] or ARRAY['a','b'])");
    *items = n->a_array_expr->elements;
    *nitems = n->a_array_expr->n_elements;
    if (*nitems == 0)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_ARGS, "an empty list matches nothing");
    if (*nitems > MAX_LIST)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_TOO_LONG, "a list has at most %d elements",
                            MAX_LIST);
    return 0;
}

static qr_query *check(qr_binder *b, qr_query *q, int32_t loc)
{
    if (!q && b->e->msg[0] && !strstr(b->e->msg, " at character "))
        qr_sqlp_at(b->p, loc, b->e);
    return q;
}

/* ---- full text ---- */
typedef struct ftcol {
    int col, ix; /* table column and its full-text index (position in def->ixs) */
} ftcol;

static int keep_case(const qr_binder *b, const ftcol *f) { return !b->def->ixs[f->ix].lowercase; }

static qr_query *ft_text(qr_binder *b, const ftcol *f, const Node *n)
{
    const char *s = string_lit(n);
    if (!s) {
        qr_bind_fail(b, qr_node_loc(n), QR_E_DATATYPE, "expected a string literal, found %s",
                     qr_node_what(n));
        return NULL;
    }
    return check(b, qr_q_text(b->def, f->ix, s, strlen(s), b->a, b->e), qr_node_loc(n));
}

/* One word of a multi-term function, analysed like the column. */
static int one_word(qr_binder *b, const ftcol *f, const Node *n, const char *what, qr_token *t)
{
    const char *s = string_lit(n);
    if (!s)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_DATATYPE, "%s takes a string literal", what);
    size_t k = qr_tok_analyze_case(s, strlen(s), keep_case(b, f), b->a, t, 2);
    if (k == QR_TOK_NOMEM)
        return qr_errf(b->e, QR_E_NOMEM, "out of memory");
    if (k != 1)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_ARGS, "%s takes one word (letters and digits)",
                            what);
    return 0;
}

/* The words of a phrase piece, appended at positions from *pos. */
static int phrase_piece(qr_binder *b, const ftcol *f, const Node *n, const char **w, size_t *l,
                        uint32_t *o, uint32_t *nw, uint32_t *pos)
{
    const char *s = string_lit(n);
    if (!s)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_DATATYPE,
                            "ts_phrase takes string literals, found %s", qr_node_what(n));
    qr_token t[65];
    size_t k = qr_tok_analyze_case(s, strlen(s), keep_case(b, f), b->a, t, 65);
    if (k == QR_TOK_NOMEM)
        return qr_errf(b->e, QR_E_NOMEM, "out of memory");
    if (k == 0)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_ARGS,
                            "'%.40s' has no letters or digits to search for", s);
    if (*nw + k > 64)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_TOO_LONG, "a phrase has at most 64 words");
    for (size_t i = 0; i < k; i++) {
        w[*nw] = t[i].p;
        l[*nw] = t[i].n;
        o[*nw] = (*pos)++;
        (*nw)++;
    }
    return 0;
}

/* ts_phrase(args) followed by the gaps and pieces of a ## chain. */
static qr_query *ft_phrase(qr_binder *b, const ftcol *f, const PgQuery__FuncCall *fc,
                           Node *const *gaps, Node *const *pieces, size_t nchain)
{
    const char *w[64];
    size_t l[64];
    uint32_t o[64], nw = 0, pos = 0;
    if (fc->n_args == 0) {
        qr_bind_fail(b, fc->location, QR_E_ARGS, "ts_phrase needs at least one word");
        return NULL;
    }
    for (size_t i = 0; i < fc->n_args; i++)
        if (phrase_piece(b, f, fc->args[i], w, l, o, &nw, &pos) != 0)
            return NULL;
    for (size_t i = 0; i < nchain; i++) {
        int64_t gap;
        if (int_lit(gaps[i], &gap) != 0 || gap < 0 || gap > 1000) {
            qr_bind_fail(b, qr_node_loc(gaps[i]), QR_E_ARGS,
                         "## takes a number of words from 0 to 1000");
            return NULL;
        }
        pos += (uint32_t)gap;
        if (phrase_piece(b, f, pieces[i], w, l, o, &nw, &pos) != 0)
            return NULL;
    }
    return check(b, qr_q_phrase(b->def, f->ix, w, l, o, nw, 0, b->a, b->e), fc->location);
}

static qr_query *ft_func(qr_binder *b, const ftcol *f, const PgQuery__FuncCall *fc)
{
    const char *name = func_name(fc);
    size_t na = fc->n_args;
    int32_t loc = fc->location;
    if (!name)
        name = "?";
    if (!strcmp(name, "ts_phrase"))
        return ft_phrase(b, f, fc, NULL, NULL, 0);
    if (!strcmp(name, "ts_all") || !strcmp(name, "ts_any")) {
        int any = name[3] == 'a' && name[4] == 'n';
        if (na < 1 || na > (any ? 2u : 1u)) {
            qr_bind_fail(b, loc, QR_E_ARGS, "%s takes %s", name,
                         any ? "a list and an optional minimum match" : "one list");
            return NULL;
        }
        Node **items = NULL;
        size_t ni = 0;
        if (list_arg(b, fc->args[0], &items, &ni) != 0)
            return NULL;
        qr_query **kids = qr_arena_alloc(b->a, sizeof *kids * ni);
        if (!kids) {
            qr_errf(b->e, QR_E_NOMEM, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < ni; i++)
            if (!(kids[i] = ft_text(b, f, items[i])))
                return NULL;
        if (na == 2) {
            int64_t k;
            if (int_lit(fc->args[1], &k) != 0 || k < 1) {
                qr_bind_fail(b, qr_node_loc(fc->args[1]), QR_E_ARGS,
                             "ts_any's minimum match is a number >= 1");
                return NULL;
            }
            if ((uint64_t)k > ni) {
                qr_bind_fail(b, qr_node_loc(fc->args[1]), QR_E_ARGS,
                             "ts_any's minimum match %lld is more than its %zu words", (long long)k,
                             ni);
                return NULL;
            }
            return check(b, qr_q_minmatch((uint32_t)k, kids, (uint32_t)ni, b->a, b->e), loc);
        }
        return check(b, qr_q_list(any ? Q_OR : Q_AND, kids, (uint32_t)ni, b->a, b->e), loc);
    }
    if (!strcmp(name, "ts_regexp") || !strcmp(name, "ts_like")) {
        const char *s = na == 1 ? string_lit(fc->args[0]) : NULL;
        if (!s) {
            qr_bind_fail(b, loc, QR_E_ARGS, "%s takes one string literal", name);
            return NULL;
        }
        size_t n = strlen(s);
        int like = name[3] == 'l';
        char *pat = qr_arena_strndup(b->a, s, n);
        if (!pat) {
            qr_errf(b->e, QR_E_NOMEM, "out of memory");
            return NULL;
        }
        if (like && !keep_case(b, f)) /* as quarry search's like: ASCII letters folded */
            for (size_t i = 0; i < n; i++)
                pat[i] = (char)tolower((unsigned char)pat[i]);
        return check(b, qr_q_multi(b->def, f->ix, like ? Q_LIKE : Q_REGEXP, pat, n, 0, b->a, b->e),
                     loc);
    }
    if (!strcmp(name, "ts_starts_with") || !strcmp(name, "ts_levenshtein")) {
        int fuzzy = name[3] == 'l';
        int64_t k = 0;
        if (na != (fuzzy ? 2u : 1u) ||
            (fuzzy && (int_lit(fc->args[1], &k) != 0 || (k != 1 && k != 2)))) {
            qr_bind_fail(b, loc, QR_E_ARGS, "%s",
                         fuzzy ? "ts_levenshtein takes a word and a distance of 1 or 2"
                               : "ts_starts_with takes one string literal");
            return NULL;
        }
        qr_token t[2];
        if (one_word(b, f, fc->args[0], name, t) != 0)
            return NULL;
        return check(b,
                     qr_q_multi(b->def, f->ix, fuzzy ? Q_FUZZY : Q_PREFIX, t[0].p, t[0].n,
                                (uint32_t)k, b->a, b->e),
                     loc);
    }
    qr_bind_fail(b, loc, QR_E_FEATURE, "full-text function %s() is not supported", name);
    return NULL;
}

/* The column on the left of @@: col, or ts_split_by_non_alpha(col, true). */
static int ft_column(qr_binder *b, const Node *n, ftcol *f)
{
    if (n && n->node_case == PG_QUERY__NODE__NODE_FUNC_CALL) {
        const PgQuery__FuncCall *fc = n->func_call;
        const char *name = func_name(fc);
        if (!name || strcmp(name, "ts_split_by_non_alpha") || fc->n_args < 1 || fc->n_args > 2)
            return qr_bind_fail(b, fc->location, QR_E_FEATURE,
                                "@@ on %s() is not supported (a column or "
                                "ts_split_by_non_alpha(column, true))",
                                name ? name : "?");
        n = fc->args[0];
    }
    if (!n || n->node_case != PG_QUERY__NODE__NODE_COLUMN_REF)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_FEATURE,
                            "@@ on %s is not supported (a full-text indexed column)",
                            qr_node_what(n));
    if ((f->col = qr_bind_column(b, n->column_ref)) < 0)
        return -1;
    f->ix = qr_tabdef_index_on(b->def, f->col, QR_IX_FULLTEXT);
    if (f->ix < 0 && qr_tabdef_index_any(b->def, f->col, QR_IX_FULLTEXT) >= 0)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_NOT_READY,
                            "the full-text index on column \"%s\" is being built: @@ can use it "
                            "once it is (pg_index.indisvalid)",
                            b->def->cols[f->col].name);
    if (f->ix < 0)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_FEATURE,
                            "column \"%s\" has no full-text index: @@ needs one",
                            b->def->cols[f->col].name);
    return 0;
}

static qr_query *fulltext(qr_binder *b, const PgQuery__AExpr *x)
{
    ftcol f;
    if (ft_column(b, x->lexpr, &f) != 0)
        return NULL;
    const Node *r = x->rexpr;
    if (r && r->node_case == PG_QUERY__NODE__NODE_FUNC_CALL)
        return ft_func(b, &f, r->func_call);
    return ft_text(b, &f, r);
}

/* a ## N ## b ##...: the chain flattened, leftmost first. */
static qr_query *gap_chain(qr_binder *b, const PgQuery__AExpr *x)
{
    Node *gaps[64], *pieces[64];
    size_t n = 0;
    const Node *cur = NULL;
    const PgQuery__AExpr *top = x;
    /* x = ((L ## g1) ## p1) ## g2 ... : peel pairs (gap, piece) from the right */
    Node *right[130];
    size_t nr = 0;
    for (;;) {
        if (nr == 130) {
            qr_bind_fail(b, top->location, QR_E_TOO_LONG, "a phrase has at most 64 gaps");
            return NULL;
        }
        right[nr++] = x->rexpr;
        cur = x->lexpr;
        if (cur && cur->node_case == PG_QUERY__NODE__NODE_A_EXPR && op_name(cur->a_expr) &&
            !strcmp(op_name(cur->a_expr), "##")) {
            x = cur->a_expr;
            continue;
        }
        break;
    }
    if (nr % 2) {
        qr_bind_fail(b, top->location, QR_E_SYNTAX,
                     "## must alternate gaps and words: ts_phrase('a') ## N ## 'b'");
        return NULL;
    }
    for (size_t i = nr; i >= 2; i -= 2) {
        gaps[n] = right[i - 1];
        pieces[n] = right[i - 2];
        n++;
    }
    ftcol f = {-1, -1};
    const PgQuery__FuncCall *fc = NULL;
    if (cur && cur->node_case == PG_QUERY__NODE__NODE_A_EXPR && op_name(cur->a_expr) &&
        !strcmp(op_name(cur->a_expr), "@@")) {
        if (ft_column(b, cur->a_expr->lexpr, &f) != 0)
            return NULL;
        cur = cur->a_expr->rexpr;
    }
    if (cur && cur->node_case == PG_QUERY__NODE__NODE_FUNC_CALL && func_name(cur->func_call) &&
        !strcmp(func_name(cur->func_call), "ts_phrase"))
        fc = cur->func_call;
    if (!fc || f.col < 0) {
        qr_bind_fail(b, top->location, QR_E_FEATURE,
                     "## is only supported as column @@ ts_phrase(...) ## N ## '...'");
        return NULL;
    }
    return ft_phrase(b, &f, fc, gaps, pieces, n);
}

/* ---- comparisons ---- */

/* Normalise SQL timestamp text ('2025-09-23 00:00:00', '2025-09-23') to RFC
 * 3339 and parse it. */
int qr_sql_parse_time(const char *s, int64_t *ns)
{
    char t[80];
    size_t n = strlen(s);
    if (n == 0 || n > 60)
        return -1;
    memcpy(t, s, n + 1);
    if (n == 10)
        memcpy(t + 10, "T00:00:00Z", 11), n += 10;
    else if (n > 10 && t[10] == ' ')
        t[10] = 'T';
    const char *tz = t + 19 < t + n ? t + 19 : NULL;
    int zone = tz && (strchr(tz, 'Z') || strchr(tz, '+') || strchr(tz, '-'));
    if (!zone && n < sizeof t - 1)
        t[n++] = 'Z', t[n] = 0;
    /* PostgreSQL's own text form ends in an offset of hours ("+00": what it
     * prints, and what this server sends) or "+HHMM": as "+HH:MM" */
    size_t k = n;
    while (k > 19 && t[k - 1] >= '0' && t[k - 1] <= '9')
        k--;
    if (k > 19 && (t[k - 1] == '+' || t[k - 1] == '-') && (n - k == 2 || n - k == 4)) {
        char mm[3] = {n - k == 4 ? t[k + 2] : '0', n - k == 4 ? t[k + 3] : '0', 0};
        t[k + 2] = ':';
        memcpy(t + k + 3, mm, 3);
        n = k + 5;
    }
    const char *why;
    return qr_time_parse(t, n, ns, &why);
}

/* A literal as the stored-domain value of column col. 0, or -1 with e set. */
static int col_value(qr_binder *b, int col, const Node *n, int64_t *v)
{
    int t = b->def->cols[col].type;
    const char *cname = b->def->cols[col].name;
    int32_t loc = qr_node_loc(n);
    const Node *lit = n;
    if (lit && lit->node_case == PG_QUERY__NODE__NODE_TYPE_CAST)
        lit = lit->type_cast->arg;
    if (!lit || lit->node_case != PG_QUERY__NODE__NODE_A_CONST || lit->a_const->isnull)
        return qr_bind_fail(
            b, loc, QR_E_FEATURE,
            "comparing \"%s\" with %s is not answered by the index (a literal "
            "is; filters on column values come next)",
            cname,
            lit && lit->node_case == PG_QUERY__NODE__NODE_A_CONST ? "NULL" : qr_node_what(n));
    const PgQuery__AConst *c = lit->a_const;
    /* a quoted literal has no type of its own (PostgreSQL's unknown): it
     * takes the column's, as '13' does for an integer column, and as a
     * driver's text-format parameter arrives */
    if (c->val_case == PG_QUERY__A__CONST__VAL_SVAL && t != QT_TIMESTAMP) {
        const char *sv = c->sval->sval;
        char *end;
        errno = 0;
        if (t == QT_BOOL) {
            if (!strcasecmp(sv, "true") || !strcasecmp(sv, "t") || !strcmp(sv, "1")) {
                *v = 1;
                return 0;
            }
            if (!strcasecmp(sv, "false") || !strcasecmp(sv, "f") || !strcmp(sv, "0")) {
                *v = 0;
                return 0;
            }
        } else if (t == QT_FLOAT64) {
            double d = strtod(sv, &end);
            if (*sv && !*end) {
                *v = qr_num_from_f64(d);
                return 0;
            }
        } else if (qr_type_is_int(t)) {
            long long x = strtoll(sv, &end, 10);
            if (*sv && !*end && !errno && (t != QT_UINT64 || x >= 0)) {
                *v = t == QT_UINT64 ? qr_num_from_u64((uint64_t)x) : x;
                return 0;
            }
        }
        return qr_bind_fail(b, loc, QR_E_INVALID_TEXT,
                            "invalid input syntax for type %s: \"%s\" (column \"%s\")",
                            qr_type_name(t), sv, cname);
    }
    if (t == QT_TIMESTAMP) {
        if (c->val_case == PG_QUERY__A__CONST__VAL_SVAL && qr_sql_parse_time(c->sval->sval, v) == 0)
            return 0;
        return qr_bind_fail(b, loc, QR_E_INVALID_TEXT,
                            "invalid timestamp for column \"%s\" (TIMESTAMP 'YYYY-MM-DD "
                            "HH:MM:SS[.fffffffff]' or RFC 3339)",
                            cname);
    }
    if (t == QT_BOOL) {
        if (c->val_case == PG_QUERY__A__CONST__VAL_BOOLVAL) {
            *v = c->boolval->boolval;
            return 0;
        }
        return qr_bind_fail(b, loc, QR_E_DATATYPE,
                            "column \"%s\" is bool: compare it with "
                            "true or false",
                            cname);
    }
    if (t == QT_FLOAT64) {
        double d;
        if (c->val_case == PG_QUERY__A__CONST__VAL_IVAL)
            d = c->ival->ival;
        else if (c->val_case == PG_QUERY__A__CONST__VAL_FVAL)
            d = strtod(c->fval->fval, NULL);
        else
            return qr_bind_fail(b, loc, QR_E_DATATYPE,
                                "column \"%s\" is float64: compare it "
                                "with a number",
                                cname);
        *v = qr_num_from_f64(d);
        return 0;
    }
    if (qr_type_is_int(t)) {
        int64_t x;
        if (int_lit(lit, &x) != 0) {
            if (c->val_case == PG_QUERY__A__CONST__VAL_FVAL && t == QT_UINT64) {
                char *end;
                errno = 0;
                unsigned long long u = strtoull(c->fval->fval, &end, 10);
                if (!*end && !errno) {
                    *v = qr_num_from_u64(u);
                    return 0;
                }
            }
            return qr_bind_fail(b, loc, QR_E_DATATYPE,
                                "column \"%s\" is %s: compare it with an "
                                "integer",
                                cname, qr_type_name(t));
        }
        if (t == QT_UINT64) {
            if (x < 0)
                return qr_bind_fail(b, loc, QR_E_OUT_OF_RANGE,
                                    "%lld is out of range for uint64 column \"%s\"", (long long)x,
                                    cname);
            x = qr_num_from_u64((uint64_t)x);
        }
        *v = x;
        return 0;
    }
    return qr_bind_fail(b, loc, QR_E_INTERNAL, "no value form for column \"%s\"", cname);
}

static qr_query *range(qr_binder *b, int col, int64_t lo, int64_t hi, int32_t loc)
{
    int64_t tlo, thi;
    qr_type_range(b->def->cols[col].type, &tlo, &thi);
    if (b->def->cols[col].type == QT_FLOAT64)
        tlo = INT64_MIN, thi = INT64_MAX;
    if (lo < tlo)
        lo = tlo;
    if (hi > thi)
        hi = thi;
    if (lo > hi) { /* nothing can match: an empty range of the column */
        lo = 1;
        hi = 0;
    }
    return check(b, qr_q_range(b->def, col, lo, hi, b->a, b->e), loc);
}

/* A numeric literal that no int64 equals: a fraction (2.5), or past the
 * int64 range. *d gets its value. */
static int inexact_lit(const Node *n, double *d)
{
    if (!n || n->node_case != PG_QUERY__NODE__NODE_A_CONST || n->a_const->isnull ||
        n->a_const->val_case != PG_QUERY__A__CONST__VAL_FVAL)
        return 0;
    char *end;
    *d = strtod(n->a_const->fval->fval, &end);
    if (*end || *d != *d)
        return 0;
    return *d != floor(*d) || *d >= 9223372036854775808.0 || *d < -9223372036854775808.0;
}

static qr_query *equals(qr_binder *b, int col, const Node *v, int32_t loc)
{
    int t = b->def->cols[col].type;
    double d;
    if (qr_type_is_int(t) && t != QT_UINT64 && inexact_lit(v, &d))
        return range(b, col, 1, 0, loc); /* no integer equals 2.5 */
    if (qr_type_is_int(t)) {
        int64_t x;
        if (col_value(b, col, v, &x) != 0)
            return NULL;
        return range(b, col, x, x, loc);
    }
    const char *s = string_lit(v);
    const Node *lit = v && v->node_case == PG_QUERY__NODE__NODE_TYPE_CAST ? v->type_cast->arg : v;
    if (!s && (!lit || lit->node_case != PG_QUERY__NODE__NODE_A_CONST || lit->a_const->isnull)) {
        qr_bind_fail(b, qr_node_loc(v), QR_E_FEATURE,
                     "comparing \"%s\" with %s is not answered by the index (a literal is)",
                     b->def->cols[col].name, qr_node_what(v));
        return NULL;
    }
    if (!s) {
        qr_bind_fail(b, qr_node_loc(v), QR_E_DATATYPE,
                     "column \"%s\" is %s: compare it with a string literal",
                     b->def->cols[col].name, qr_type_name(t));
        return NULL;
    }
    if (t != QT_TEXT) {
        qr_bind_fail(b, loc, QR_E_FEATURE, "= on %s column \"%s\" is not supported yet",
                     qr_type_name(t), b->def->cols[col].name);
        return NULL;
    }
    return check(b, qr_q_equals(b->def, col, s, strlen(s), b->a, b->e), loc);
}

/* The column of the left side of a comparison. */
static int cmp_column(qr_binder *b, const Node *n, const char *op)
{
    if (n && n->node_case == PG_QUERY__NODE__NODE_TYPE_CAST) /* Timestamp::TIMESTAMP_NS */
        n = n->type_cast->arg;
    if (!n || n->node_case != PG_QUERY__NODE__NODE_COLUMN_REF)
        return qr_bind_fail(b, qr_node_loc(n), QR_E_FEATURE,
                            "%s on %s is not answered by the index (column op literal is; "
                            "filters on computed values come next)",
                            op, qr_node_what(n));
    return qr_bind_column(b, n->column_ref);
}

static qr_query *not_of(qr_binder *b, qr_query *q)
{
    if (!q)
        return NULL;
    q = qr_q_not(q, b->a, b->e);
    if (!q && !b->e->msg[0])
        qr_errf(b->e, QR_E_NOMEM, "out of memory");
    return q;
}

static qr_query *compare(qr_binder *b, const PgQuery__AExpr *x, const char *op)
{
    int col = cmp_column(b, x->lexpr, op);
    if (col < 0)
        return NULL;
    int t = b->def->cols[col].type;
    if (!strcmp(op, "="))
        return equals(b, col, x->rexpr, x->location);
    if (!strcmp(op, "<>") || !strcmp(op, "!="))
        return not_of(b, equals(b, col, x->rexpr, x->location));
    if (!qr_type_is_int(t)) {
        qr_bind_fail(b, x->location, QR_E_FEATURE,
                     "%s on %s column \"%s\" is not answered by the index (filters on column "
                     "values come next)",
                     op, qr_type_name(t), b->def->cols[col].name);
        return NULL;
    }
    int64_t v;
    double d;
    if (t != QT_UINT64 && inexact_lit(x->rexpr, &d)) {
        /* an integer column against 2.5: x < 2.5 is x <= 2, x > 2.5 is x >= 3 */
        int below = !strcmp(op, "<") || !strcmp(op, "<=");
        if (!below && strcmp(op, ">") && strcmp(op, ">=")) {
            qr_bind_fail(b, x->location, QR_E_FEATURE, "operator %s is not supported in WHERE", op);
            return NULL;
        }
        double f = below ? floor(d) : ceil(d);
        if (f >= 9223372036854775808.0)
            return below ? range(b, col, INT64_MIN, INT64_MAX, x->location)
                         : range(b, col, 1, 0, x->location);
        if (f < -9223372036854775808.0)
            return below ? range(b, col, 1, 0, x->location)
                         : range(b, col, INT64_MIN, INT64_MAX, x->location);
        return below ? range(b, col, INT64_MIN, (int64_t)f, x->location)
                     : range(b, col, (int64_t)f, INT64_MAX, x->location);
    }
    if (col_value(b, col, x->rexpr, &v) != 0)
        return NULL;
    if (!strcmp(op, "<"))
        return v == INT64_MIN ? range(b, col, 1, 0, x->location)
                              : range(b, col, INT64_MIN, v - 1, x->location);
    if (!strcmp(op, "<="))
        return range(b, col, INT64_MIN, v, x->location);
    if (!strcmp(op, ">"))
        return v == INT64_MAX ? range(b, col, 1, 0, x->location)
                              : range(b, col, v + 1, INT64_MAX, x->location);
    if (!strcmp(op, ">="))
        return range(b, col, v, INT64_MAX, x->location);
    qr_bind_fail(b, x->location, QR_E_FEATURE, "operator %s is not supported in WHERE", op);
    return NULL;
}

static qr_query *in_list(qr_binder *b, const PgQuery__AExpr *x, int neg)
{
    int col = cmp_column(b, x->lexpr, "IN");
    if (col < 0)
        return NULL;
    const Node *r = x->rexpr;
    if (!r || r->node_case != PG_QUERY__NODE__NODE_LIST) {
        qr_bind_fail(b, x->location, QR_E_FEATURE, "IN (subquery) is not supported yet");
        return NULL;
    }
    size_t n = r->list->n_items;
    if (n > MAX_LIST) {
        qr_bind_fail(b, x->location, QR_E_TOO_LONG, "an IN list has at most %d values", MAX_LIST);
        return NULL;
    }
    qr_query **kids = qr_arena_alloc(b->a, sizeof *kids * (n ? n : 1));
    if (!kids) {
        qr_errf(b->e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!(kids[i] = equals(b, col, r->list->items[i], qr_node_loc(r->list->items[i]))))
            return NULL;
    qr_query *q = check(b, qr_q_list(Q_OR, kids, (uint32_t)n, b->a, b->e), x->location);
    return neg ? not_of(b, q) : q;
}

static qr_query *between(qr_binder *b, const PgQuery__AExpr *x, int neg)
{
    int col = cmp_column(b, x->lexpr, "BETWEEN");
    if (col < 0)
        return NULL;
    const Node *r = x->rexpr;
    if (!qr_type_is_int(b->def->cols[col].type)) {
        qr_bind_fail(b, x->location, QR_E_FEATURE,
                     "BETWEEN on %s column \"%s\" is not answered "
                     "by the index",
                     qr_type_name(b->def->cols[col].type), b->def->cols[col].name);
        return NULL;
    }
    int64_t lo, hi;
    if (!r || r->node_case != PG_QUERY__NODE__NODE_LIST || r->list->n_items != 2 ||
        col_value(b, col, r->list->items[0], &lo) != 0 ||
        col_value(b, col, r->list->items[1], &hi) != 0) {
        if (!b->e->code[0])
            qr_bind_fail(b, x->location, QR_E_SYNTAX, "BETWEEN takes two values");
        return NULL;
    }
    qr_query *q = range(b, col, lo, hi, x->location);
    return neg ? not_of(b, q) : q;
}

/* `t @@@ 'query'` (t the table, its alias, or any of its columns): the
 * query in `quarry search` syntax (docs/SEARCH.md), fields and all. */
static qr_query *search_syntax(qr_binder *b, const PgQuery__AExpr *x)
{
    const Node *l = x->lexpr;
    if (!l || l->node_case != PG_QUERY__NODE__NODE_COLUMN_REF) {
        qr_bind_fail(b, qr_node_loc(l), QR_E_FEATURE,
                     "@@@ takes the table (or a column) on its left: t @@@ 'query'");
        return NULL;
    }
    const PgQuery__ColumnRef *cr = l->column_ref;
    const char *nm = cr->n_fields == 1 ? str_of(cr->fields[0]) : NULL;
    int is_table = nm && ((b->alias && !strcmp(nm, b->alias)) ||
                          (!b->alias && !strcasecmp(nm, b->def->name)));
    if (!is_table) {
        qr_err tmp;
        qr_binder tb = *b;
        tb.e = &tmp;
        if (qr_bind_column(&tb, cr) < 0) {
            qr_bind_fail(b, cr->location, QR_E_UNDEFINED_COLUMN,
                         "@@@ takes the table, its alias or one of its columns on its left");
            return NULL;
        }
    }
    const char *q = string_lit(x->rexpr);
    if (!q) {
        qr_bind_fail(b, qr_node_loc(x->rexpr), QR_E_DATATYPE,
                     "@@@ takes a string in quarry search syntax on its right");
        return NULL;
    }
    qr_err pe;
    qr_err_clear(&pe);
    qr_query *t = qr_query_parse_for(b->def, q, strlen(q), b->a, &pe);
    if (!t) {
        qr_bind_fail(b, qr_node_loc(x->rexpr), pe.code[0] ? pe.code : QR_E_SYNTAX, "%s", pe.msg);
        return NULL;
    }
    return t;
}

static qr_query *a_expr(qr_binder *b, const PgQuery__AExpr *x)
{
    const char *op = op_name(x);
    switch (x->kind) {
    case PG_QUERY__A__EXPR__KIND__AEXPR_OP:
        if (!op)
            break;
        if (!strcmp(op, "@@"))
            return fulltext(b, x);
        if (!strcmp(op, "@@@"))
            return search_syntax(b, x);
        if (!strcmp(op, "##"))
            return gap_chain(b, x);
        if (!strcmp(op, "=") || !strcmp(op, "<>") || !strcmp(op, "!=") || !strcmp(op, "<") ||
            !strcmp(op, "<=") || !strcmp(op, ">") || !strcmp(op, ">="))
            return compare(b, x, op);
        qr_bind_fail(b, x->location, QR_E_FEATURE, "operator %s is not supported in WHERE", op);
        return NULL;
    case PG_QUERY__A__EXPR__KIND__AEXPR_IN:
        return in_list(b, x, op && !strcmp(op, "<>"));
    case PG_QUERY__A__EXPR__KIND__AEXPR_BETWEEN:
        return between(b, x, 0);
    case PG_QUERY__A__EXPR__KIND__AEXPR_NOT_BETWEEN:
        return between(b, x, 1);
    case PG_QUERY__A__EXPR__KIND__AEXPR_LIKE:
    case PG_QUERY__A__EXPR__KIND__AEXPR_ILIKE:
        qr_bind_fail(b, x->location, QR_E_FEATURE,
                     "%s on a column value is not answered by the index (ts_like matches words; "
                     "filters on column values come next)",
                     x->kind == PG_QUERY__A__EXPR__KIND__AEXPR_LIKE ? "LIKE" : "ILIKE");
        return NULL;
    default:
        break;
    }
    qr_bind_fail(b, x->location, QR_E_FEATURE, "this %s expression is not supported in WHERE",
                 op ? op : "operator");
    return NULL;
}

qr_query *qr_sql_where(qr_binder *b, const Node *n)
{
    if (!n) {
        qr_errf(b->e, QR_E_INTERNAL, "empty WHERE clause");
        return NULL;
    }
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_BOOL_EXPR: {
        const PgQuery__BoolExpr *x = n->bool_expr;
        if (x->boolop == PG_QUERY__BOOL_EXPR_TYPE__NOT_EXPR)
            return x->n_args == 1 ? not_of(b, qr_sql_where(b, x->args[0])) : NULL;
        if (x->n_args > MAX_LIST) {
            qr_bind_fail(b, x->location, QR_E_TOO_LONG, "at most %d terms in one AND/OR", MAX_LIST);
            return NULL;
        }
        qr_query **kids = qr_arena_alloc(b->a, sizeof *kids * (x->n_args ? x->n_args : 1));
        if (!kids) {
            qr_errf(b->e, QR_E_NOMEM, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < x->n_args; i++)
            if (!(kids[i] = qr_sql_where(b, x->args[i])))
                return NULL;
        return check(b,
                     qr_q_list(x->boolop == PG_QUERY__BOOL_EXPR_TYPE__AND_EXPR ? Q_AND : Q_OR, kids,
                               (uint32_t)x->n_args, b->a, b->e),
                     x->location);
    }
    case PG_QUERY__NODE__NODE_A_EXPR:
        return a_expr(b, n->a_expr);
    case PG_QUERY__NODE__NODE_NULL_TEST:
        qr_bind_fail(b, n->null_test->location, QR_E_FEATURE,
                     "IS %sNULL is not answered by the index (filters on column values come next)",
                     n->null_test->nulltesttype == PG_QUERY__NULL_TEST_TYPE__IS_NOT_NULL ? "NOT "
                                                                                         : "");
        return NULL;
    case PG_QUERY__NODE__NODE_A_CONST:
        if (n->a_const->val_case == PG_QUERY__A__CONST__VAL_BOOLVAL) {
            qr_query *q = qr_q_all(b->a, b->e);
            return n->a_const->boolval->boolval ? q : not_of(b, q);
        }
        break;
    default:
        break;
    }
    qr_bind_fail(b, qr_node_loc(n), QR_E_FEATURE, "%s in WHERE is not supported", qr_node_what(n));
    return NULL;
}
