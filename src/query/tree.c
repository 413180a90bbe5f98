/* tree.c - building filter trees as data (query.h, "building trees"): the
 * constructors a planner calls and the text parser uses. A node names its
 * index by section id and, for scans and ranges, its column by name, so one
 * tree serves every segment of the table; every string is copied into the
 * tree's arena. */
#include <string.h>

#include "analysis/tokenizer.h"
#include "format/schema.h"
#include "index/invfmt.h"
#include "query/query.h"

#define QR_PHRASE_MAX 64

static qr_query *nomem(qr_err *e)
{
    qr_errf(e, QR_E_NOMEM, "query: out of memory");
    return NULL;
}

static qr_query *new_node(qr_qtype t, qr_arena *a, qr_err *e)
{
    qr_query *q = qr_arena_alloc(a, sizeof *q);
    if (!q)
        return nomem(e);
    memset(q, 0, sizeof *q);
    q->type = t;
    return q;
}

static char *dup_text(const char *t, size_t n, qr_arena *a) { return qr_arena_strndup(a, t, n); }

/* The table's default full-text index: its first (of those built). */
static int default_text(const qr_tabdef *d)
{
    for (uint32_t i = 0; i < d->nixs; i++)
        if (d->ixs[i].kind == QR_IX_FULLTEXT && !d->ixs[i].building)
            return (int)i;
    return -1;
}

static int text_index(const qr_tabdef *d, int ix, qr_err *e)
{
    if (ix < 0 || (uint32_t)ix >= d->nixs || d->ixs[ix].kind != QR_IX_FULLTEXT ||
        d->ixs[ix].building)
        return qr_errf(e, QR_E_ARGS, "query: index %d is not a full-text index", ix);
    return 0;
}

static void text_node(qr_query *q, const qr_tabdef *d, int ix)
{
    q->field = d->ixs[ix].id;
    q->scored = ix == default_text(d);
}

qr_query *qr_q_all(qr_arena *a, qr_err *e) { return new_node(Q_ALL, a, e); }

qr_query *qr_q_phrase(const qr_tabdef *d, int ix, const char *const *words, const size_t *lens,
                      const uint32_t *offs, uint32_t n, uint32_t within, qr_arena *a, qr_err *e)
{
    if (text_index(d, ix, e) != 0)
        return NULL;
    if (n == 0 || n > QR_PHRASE_MAX)
        return (void)qr_errf(e, QR_E_ARGS, "query: a phrase of %u words (1 to %d)", n,
                             QR_PHRASE_MAX),
               NULL;
    if (within && n != 2)
        return (void)qr_errf(e, QR_E_ARGS, "query: proximity takes exactly two words"), NULL;
    for (uint32_t i = 0; i < n; i++)
        if (i == 0 ? offs[0] != 0 : offs[i] <= offs[i - 1])
            return (void)qr_errf(e, QR_E_ARGS, "query: phrase positions must increase from 0"),
                   NULL;
    qr_query *q = new_node(n == 1 ? Q_TERM : Q_PHRASE, a, e);
    if (!q)
        return NULL;
    text_node(q, d, ix);
    if (n == 1) {
        if (!(q->text = dup_text(words[0], lens[0], a)))
            return nomem(e);
        q->len = lens[0];
        return q;
    }
    q->n = n;
    q->within = within;
    q->terms = qr_arena_alloc(a, sizeof *q->terms * n);
    q->term_lens = qr_arena_alloc(a, sizeof *q->term_lens * n);
    q->offs = qr_arena_alloc(a, sizeof *q->offs * n);
    if (!q->terms || !q->term_lens || !q->offs)
        return nomem(e);
    for (uint32_t i = 0; i < n; i++) {
        if (!(q->terms[i] = dup_text(words[i], lens[i], a)))
            return nomem(e);
        q->term_lens[i] = lens[i];
        q->offs[i] = offs[i];
    }
    return q;
}

qr_query *qr_q_text(const qr_tabdef *d, int ix, const char *text, size_t n, qr_arena *a,
                    qr_err *e)
{
    if (text_index(d, ix, e) != 0)
        return NULL;
    qr_token toks[QR_PHRASE_MAX + 1];
    size_t k = qr_tok_analyze_case(text, n, !d->ixs[ix].lowercase, a, toks, QR_PHRASE_MAX + 1);
    if (k == QR_TOK_NOMEM)
        return nomem(e);
    if (k == 0)
        return (void)qr_errf(e, QR_E_ARGS, "query: '%.*s' has no letters or digits to search for",
                             (int)(n > 40 ? 40 : n), text),
               NULL;
    if (k > QR_PHRASE_MAX)
        return (void)qr_errf(e, QR_E_ARGS, "query: text has more than %d words", QR_PHRASE_MAX),
               NULL;
    const char *w[QR_PHRASE_MAX];
    size_t l[QR_PHRASE_MAX];
    uint32_t o[QR_PHRASE_MAX];
    for (size_t i = 0; i < k; i++) {
        w[i] = toks[i].p;
        l[i] = toks[i].n;
        o[i] = (uint32_t)i;
    }
    return qr_q_phrase(d, ix, w, l, o, (uint32_t)k, 0, a, e);
}

qr_query *qr_q_multi(const qr_tabdef *d, int ix, qr_qtype type, const char *pattern, size_t n,
                     uint32_t k, qr_arena *a, qr_err *e)
{
    if (text_index(d, ix, e) != 0)
        return NULL;
    if (type != Q_PREFIX && type != Q_REGEXP && type != Q_LIKE && type != Q_FUZZY)
        return (void)qr_errf(e, QR_E_ARGS, "query: node type %d is not multi-term", (int)type),
               NULL;
    if (type == Q_FUZZY && k != 1 && k != 2)
        return (void)qr_errf(e, QR_E_ARGS, "query: fuzzy distance must be 1 or 2"), NULL;
    qr_query *q = new_node(type, a, e);
    if (!q)
        return NULL;
    text_node(q, d, ix);
    if (!(q->text = dup_text(pattern, n, a)))
        return nomem(e);
    q->len = n;
    q->k = type == Q_FUZZY ? k : 0;
    return q;
}

static int column_ok(const qr_tabdef *d, int col, qr_err *e)
{
    if (col < 0 || (uint32_t)col >= d->ncols)
        return qr_errf(e, QR_E_UNDEFINED_COLUMN, "query: column %d does not exist", col);
    return 0;
}

qr_query *qr_q_equals(const qr_tabdef *d, int col, const char *value, size_t n, qr_arena *a,
                      qr_err *e)
{
    if (column_ok(d, col, e) != 0)
        return NULL;
    int kx = qr_tabdef_index_on(d, col, QR_IX_KEYWORD);
    if (kx < 0 && d->cols[col].type != QT_TEXT)
        return (void)qr_errf(e, QR_E_DATATYPE,
                             "query: column %s is %s: equality of a value needs a text column",
                             d->cols[col].name, qr_type_name(d->cols[col].type)),
               NULL;
    qr_query *q = new_node(Q_TERM, a, e);
    if (!q)
        return NULL;
    if (!(q->text = dup_text(value, n, a)))
        return nomem(e);
    q->len = n;
    q->field = kx >= 0 ? d->ixs[kx].id : 0; /* 0: a scan of the column */
    q->coltype = QT_TEXT;
    if (!(q->colname = dup_text(d->cols[col].name, strlen(d->cols[col].name), a)))
        return nomem(e);
    return q;
}

qr_query *qr_q_path(const qr_tabdef *d, int col, const char *path, size_t pn, const char *value,
                    size_t vn, qr_arena *a, qr_err *e)
{
    if (column_ok(d, col, e) != 0)
        return NULL;
    int px = qr_tabdef_index_on(d, col, QR_IX_PATHS);
    if (px < 0)
        return (void)qr_errf(e, QR_E_ARGS, "query: column %s has no paths index",
                             d->cols[col].name),
               NULL;
    qr_query *q = new_node(Q_TERM, a, e);
    char *t = q ? qr_arena_alloc(a, pn + 1 + vn) : NULL;
    if (!t)
        return nomem(e);
    if (pn)
        memcpy(t, path, pn);
    t[pn] = QR_PATH_SEP;
    if (vn)
        memcpy(t + pn + 1, value, vn);
    q->field = d->ixs[px].id;
    q->text = t;
    q->len = pn + 1 + vn;
    if (!(q->colname = dup_text(d->cols[col].name, strlen(d->cols[col].name), a)))
        return nomem(e);
    return q;
}

qr_query *qr_q_range(const qr_tabdef *d, int col, int64_t lo, int64_t hi, qr_arena *a, qr_err *e)
{
    if (column_ok(d, col, e) != 0)
        return NULL;
    int type = d->cols[col].type;
    if (!qr_type_is_int(type))
        return (void)qr_errf(e, QR_E_DATATYPE,
                             "query: column %s is not a number or timestamp column: no range on it",
                             d->cols[col].name),
               NULL;
    qr_query *q = new_node(type == QT_TIMESTAMP ? Q_TIME_RANGE : Q_INT_RANGE, a, e);
    if (!q)
        return NULL;
    int rx = col == d->sort_col ? -1 : qr_tabdef_index_on(d, col, QR_IX_RANGE);
    q->field = rx >= 0 ? d->ixs[rx].id : 0;
    q->coltype = (uint8_t)type;
    q->lo = lo;
    q->hi = hi;
    if (!(q->colname = dup_text(d->cols[col].name, strlen(d->cols[col].name), a)))
        return nomem(e);
    return q;
}

qr_query *qr_q_list(qr_qtype type, qr_query *const *kids, uint32_t n, qr_arena *a, qr_err *e)
{
    if ((type != Q_AND && type != Q_OR) || n == 0)
        return (void)qr_errf(e, QR_E_ARGS, "query: AND/OR of %u children", n), NULL;
    for (uint32_t i = 0; i < n; i++)
        if (!kids[i])
            return (void)qr_errf(e, QR_E_ARGS, "query: a missing child"), NULL;
    if (n == 1)
        return kids[0];
    qr_query *q = new_node(type, a, e);
    if (!q)
        return NULL;
    q->n = n;
    if (!(q->kids = qr_arena_memdup(a, kids, sizeof *kids * n)))
        return nomem(e);
    return q;
}

qr_query *qr_q_minmatch(uint32_t k, qr_query *const *kids, uint32_t n, qr_arena *a, qr_err *e)
{
    if (k == 0 || k > n)
        return (void)qr_errf(e, QR_E_ARGS,
                             "query: atleast(K, ...) needs 1 <= K <= number of clauses"),
               NULL;
    for (uint32_t i = 0; i < n; i++)
        if (!kids[i])
            return (void)qr_errf(e, QR_E_ARGS, "query: a missing child"), NULL;
    qr_query *q = new_node(Q_MINMATCH, a, e);
    if (!q)
        return NULL;
    q->k = k;
    q->n = n;
    if (!(q->kids = qr_arena_memdup(a, kids, sizeof *kids * n)))
        return nomem(e);
    return q;
}

qr_query *qr_q_not(qr_query *kid, qr_arena *a, qr_err *e)
{
    if (!kid)
        return (void)qr_errf(e, QR_E_ARGS, "query: a missing child"), NULL;
    qr_query *q = new_node(Q_NOT, a, e);
    if (!q)
        return NULL;
    if (!(q->kids = qr_arena_alloc(a, sizeof *q->kids)))
        return nomem(e);
    q->kids[0] = kid;
    q->n = 1;
    return q;
}
