/* stmt_insert.c - INSERT INTO t [(cols)] VALUES (...), ... and INSERT INTO
 * t [(cols)] SELECT ...
 *
 * VALUES: every value is checked against its column before anything is
 * written (42804 for a constant of another type, 22P02 / 22007 / 22003 for
 * text that does not read as the column's type or a number out of its
 * range, 23502 for NULL in a NOT NULL column, each with its position), then
 * each row becomes one NDJSON line for the table's row writer (rows.h), so
 * it is stored exactly as `quarry ingest` would store the same row. The
 * rows of one statement land in one segment (one per 131072 rows) published
 * by one manifest commit: all of them or none.
 *
 * SELECT: the query runs first (its result held under the statement's
 * memory limit), its output columns are checked against the target columns
 * by type, then its rows go the same way. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/bind.h"
#include "sql/db.h"
#include "sql/rows.h"
#include "sql/stmt.h"
#include "sql/tx.h"
#include "util/json.h"
#include "util/timefmt.h"

#define QR_E_DATETIME "22007" /* invalid datetime format */

typedef struct ins {
    const qr_sqlparse *p;
    const qr_tabdef *def;
    int cols[QR_MAX_COLUMNS]; /* target columns, in the order values come */
    uint32_t ncols;
    qr_err *e;
} ins;

static int fail_at(const ins *x, int32_t loc, const char *code, const char *fmt, const char *a,
                   const char *b)
{
    qr_errf(x->e, code, fmt, a, b);
    return qr_sqlp_at(x->p, loc, x->e);
}

static const char *type_of(int t)
{
    switch (t) {
    case QT_TEXT:
        return "text";
    case QT_INT64:
        return "bigint";
    case QT_INT32:
        return "integer";
    case QT_INT16:
        return "smallint";
    case QT_FLOAT64:
        return "double precision";
    case QT_BOOL:
        return "boolean";
    case QT_TIMESTAMP:
        return "timestamp";
    default:
        return qr_type_name(t);
    }
}

/* The shortest decimal text that reads back as d. */
static void put_double(qr_buf *out, double d)
{
    char t[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, d);
        if (strtod(t, NULL) == d)
            break;
    }
    qr_buf_put(out, t, strlen(t));
}

/* Integer text (optional sign, digits, surrounding blanks) in the range of
 * type t: appended to out as a JSON number. 1 when it is not an integer,
 * 2 when out of range. */
static int put_integer(const char *s, int t, qr_buf *out)
{
    while (isspace((unsigned char)*s))
        s++;
    const char *q = s + (*s == '-' || *s == '+');
    if (!isdigit((unsigned char)*q))
        return 1;
    while (isdigit((unsigned char)*q))
        q++;
    const char *end = q;
    while (isspace((unsigned char)*q))
        q++;
    if (*q)
        return 1;
    errno = 0;
    char buf[64];
    size_t n = (size_t)(end - s);
    if (n >= sizeof buf)
        return 2;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (t == QT_UINT64) {
        if (buf[0] == '-')
            return 2;
        unsigned long long u = strtoull(buf, NULL, 10);
        if (errno)
            return 2;
        snprintf(buf, sizeof buf, "%llu", u);
    } else {
        long long v = strtoll(buf, NULL, 10);
        int64_t lo, hi;
        qr_type_range(t, &lo, &hi);
        if (errno || v < lo || v > hi)
            return 2;
        snprintf(buf, sizeof buf, "%lld", v);
    }
    qr_buf_put(out, buf, strlen(buf));
    return 0;
}

/* PostgreSQL's spellings of a boolean: 1 true, 0 false, -1 neither. */
static int bool_text(const char *s)
{
    static const char *const yes[] = {"t", "true", "y", "yes", "on", "1", NULL};
    static const char *const no[] = {"f", "false", "n", "no", "off", "0", NULL};
    while (isspace((unsigned char)*s))
        s++;
    char w[8];
    size_t n = 0;
    while (s[n] && !isspace((unsigned char)s[n]) && n < sizeof w - 1)
        w[n] = s[n], n++;
    w[n] = 0;
    for (int i = 0; yes[i]; i++)
        if (!strcasecmp(w, yes[i]))
            return 1;
    for (int i = 0; no[i]; i++)
        if (!strcasecmp(w, no[i]))
            return 0;
    return -1;
}

const char *qr_sql_text_value(const char *s, size_t n, int type, qr_buf *out, const char **why)
{
    char stack[128];
    char *z = n < sizeof stack ? stack : malloc(n + 1);
    if (!z) {
        *why = "out of memory";
        return QR_E_NOMEM;
    }
    memcpy(z, s, n);
    z[n] = 0;
    const char *code = NULL;
    switch (type) {
    case QT_TEXT:
        qj_write_string(out, s, n);
        break;
    case QT_BOOL: {
        int b = bool_text(z);
        if (b < 0) {
            *why = "invalid input syntax for type boolean";
            code = QR_E_INVALID_TEXT;
        } else {
            qr_buf_put(out, b ? "true" : "false", b ? 4 : 5);
        }
        break;
    }
    case QT_FLOAT64: {
        char *end;
        double d = strtod(z, &end);
        while (isspace((unsigned char)*end))
            end++;
        if (end == z || *end || !isfinite(d)) {
            *why = "invalid input syntax for type double precision (a finite number)";
            code = QR_E_INVALID_TEXT;
        } else {
            put_double(out, d);
        }
        break;
    }
    case QT_TIMESTAMP: {
        int64_t ns;
        if (put_integer(z, QT_INT64, out) == 0) /* an integer: in the column's unit */
            break;
        /* RFC 3339, 'YYYY-MM-DD[ HH:MM:SS[.f]]' (UTC; a date is its midnight),
         * PostgreSQL's "+00" offsets: as a WHERE literal reads */
        if (strlen(z) != n || qr_sql_parse_time(z, &ns) != 0) {
            *why = "invalid input syntax for type timestamp (RFC 3339, UTC)";
            code = QR_E_DATETIME;
        } else {
            char t[QR_TIME_TEXT_LEN + 2];
            t[0] = '"';
            qr_time_format(ns, t + 1);
            t[QR_TIME_TEXT_LEN + 1] = '"';
            qr_buf_put(out, t, sizeof t);
        }
        break;
    }
    case QT_JSON:
    case QT_MAP: {
        qr_json j;
        qj_init(&j, s, n);
        qj_type jt = qj_peek(&j);
        if (jt == QJ_END || jt == QJ_ERROR || (type == QT_MAP && jt != QJ_OBJECT) ||
            qj_skip(&j) != 0 || qj_finish(&j) != 0) {
            *why = type == QT_MAP ? "invalid input syntax for type map (a JSON object)"
                                  : "invalid input syntax for type json";
            code = QR_E_INVALID_TEXT;
        } else {
            qr_buf_put(out, s, n);
        }
        break;
    }
    default: {
        int r = put_integer(z, type, out);
        if (r) {
            *why = r == 1 ? "invalid input syntax for an integer" : "integer out of range";
            code = r == 1 ? QR_E_INVALID_TEXT : QR_E_OUT_OF_RANGE;
        }
    }
    }
    if (z != stack)
        free(z);
    return code;
}

/* One VALUES item for column cd, appended to out as JSON ("null" for NULL,
 * which the caller checks against NOT NULL). */
static int value_json(const ins *x, const PgQuery__Node *n, const qr_coldef *cd, qr_buf *out,
                      int *is_null)
{
    *is_null = 0;
    int32_t loc = qr_node_loc(n);
    if (n->node_case == PG_QUERY__NODE__NODE_SET_TO_DEFAULT) {
        *is_null = 1;
        qr_buf_put(out, "null", 4);
        return 0;
    }
    if (n->node_case == PG_QUERY__NODE__NODE_TYPE_CAST && n->type_cast->arg &&
        n->type_cast->arg->node_case == PG_QUERY__NODE__NODE_A_CONST)
        n = n->type_cast->arg; /* TIMESTAMP '...', '...'::json: the column says the type */
    if (n->node_case != PG_QUERY__NODE__NODE_A_CONST)
        return fail_at(x, loc, QR_E_FEATURE, "%s in VALUES is not supported yet (constants are)%s",
                       qr_node_what(n), "");
    const PgQuery__AConst *c = n->a_const;
    loc = c->location;
    if (c->isnull) {
        *is_null = 1;
        qr_buf_put(out, "null", 4);
        return 0;
    }
    int t = cd->type;
    char num[64];
    const char *given = NULL;
    switch (c->val_case) {
    case PG_QUERY__A__CONST__VAL_SVAL: {
        const char *why = "";
        const char *code = qr_sql_text_value(c->sval->sval, strlen(c->sval->sval), t, out, &why);
        if (code) {
            qr_errf(x->e, code, "%s: \"%.100s\" for column \"%s\"", why, c->sval->sval, cd->name);
            return qr_sqlp_at(x->p, loc, x->e);
        }
        return 0;
    }
    case PG_QUERY__A__CONST__VAL_BOOLVAL:
        if (t == QT_BOOL) {
            qr_buf_put(out, c->boolval->boolval ? "true" : "false", c->boolval->boolval ? 4 : 5);
            return 0;
        }
        given = "boolean";
        break;
    case PG_QUERY__A__CONST__VAL_IVAL:
    case PG_QUERY__A__CONST__VAL_FVAL: {
        if (c->val_case == PG_QUERY__A__CONST__VAL_IVAL)
            snprintf(num, sizeof num, "%d", (int)c->ival->ival);
        else
            snprintf(num, sizeof num, "%s", c->fval->fval);
        int integral = strspn(num + (num[0] == '-'), "0123456789") == strlen(num + (num[0] == '-'));
        if (t == QT_FLOAT64) {
            put_double(out, strtod(num, NULL));
            return 0;
        }
        if (qr_type_is_int(t) && t != QT_BOOL && t != QT_TIMESTAMP && integral) {
            if (put_integer(num, t, out) != 0)
                return fail_at(x, loc, QR_E_OUT_OF_RANGE, "%s is out of range for column \"%s\"",
                               num, cd->name);
            return 0;
        }
        given = integral ? "integer" : "numeric";
        break;
    }
    default:
        given = "bit string";
    }
    qr_errf(x->e, QR_E_DATATYPE, "column \"%s\" is of type %s but expression is of type %s",
            cd->name, type_of(t), given);
    return qr_sqlp_at(x->p, loc, x->e);
}

static int not_null_error(const ins *x, const qr_coldef *cd, int32_t loc)
{
    qr_errf(x->e, QR_E_NOT_NULL,
            "null value in column \"%s\" of relation \"%s\" violates not-null constraint", cd->name,
            x->def->name);
    return qr_sqlp_at(x->p, loc, x->e);
}

/* A row's line: {"col":value,...} for the target columns. */
static int values_line(const ins *x, const PgQuery__List *row, qr_buf *line)
{
    qr_buf_clear(line);
    qr_buf_put_u8(line, '{');
    for (uint32_t i = 0; i < x->ncols; i++) {
        const qr_coldef *cd = &x->def->cols[x->cols[i]];
        if (i)
            qr_buf_put_u8(line, ',');
        qj_write_string(line, cd->name, strlen(cd->name));
        qr_buf_put_u8(line, ':');
        int is_null;
        if (value_json(x, row->items[i], cd, line, &is_null) != 0)
            return -1;
        if (is_null && !cd->nullable)
            return not_null_error(x, cd, qr_node_loc(row->items[i]));
    }
    qr_buf_put_u8(line, '}');
    return line->oom ? qr_errf(x->e, QR_E_NOMEM, "out of memory") : 0;
}

/* The target columns: the list given, else every column in order. */
static int target_columns(ins *x, const PgQuery__InsertStmt *st)
{
    if (!st->n_cols) {
        x->ncols = x->def->ncols;
        for (uint32_t i = 0; i < x->ncols; i++)
            x->cols[i] = (int)i;
        return 0;
    }
    uint8_t seen[QR_MAX_COLUMNS] = {0};
    for (size_t i = 0; i < st->n_cols; i++) {
        const PgQuery__ResTarget *rt = st->cols[i]->res_target;
        int c = qr_tabdef_col(x->def, rt->name, strlen(rt->name));
        if (c < 0)
            return fail_at(x, rt->location, QR_E_UNDEFINED_COLUMN,
                           "column \"%s\" of relation \"%s\" does not exist", rt->name,
                           x->def->name);
        if (rt->n_indirection)
            return fail_at(x, rt->location, QR_E_FEATURE,
                           "assigning to a part of column \"%s\" is not supported%s", rt->name, "");
        if (seen[c]++)
            return fail_at(x, rt->location, "42701", "column \"%s\" specified more than once%s",
                           rt->name, "");
        x->cols[x->ncols++] = c;
    }
    /* a NOT NULL column left out would be NULL in every row */
    for (uint32_t c = 0; c < x->def->ncols; c++)
        if (!seen[c] && !x->def->cols[c].nullable)
            return not_null_error(x, &x->def->cols[c], st->relation->location);
    return 0;
}

static int insert_values(ins *x, qr_sql_session *s, const PgQuery__SelectStmt *sel, qr_result *out,
                         uint64_t *rows)
{
    qr_err *e = x->e;
    /* check every row first: a bad value writes nothing */
    qr_buf line;
    qr_buf_init(&line);
    int rc = 0;
    for (size_t r = 0; rc == 0 && r < sel->n_values_lists; r++) {
        const PgQuery__List *row = sel->values_lists[r]->list;
        if (row->n_items != x->ncols) {
            int32_t loc =
                row->n_items
                    ? qr_node_loc(row->items[row->n_items > x->ncols ? x->ncols : row->n_items - 1])
                    : -1;
            rc = fail_at(x, loc, QR_E_SYNTAX,
                         row->n_items > x->ncols
                             ? "INSERT has more expressions than target columns%s%s"
                             : "INSERT has more target columns than expressions%s%s",
                         "", "");
        } else {
            rc = values_line(x, row, &line);
        }
    }
    qr_rowwriter own, *w;
    uint32_t seg = sel->n_values_lists < QR_ROWS_SEGMENT_ROWS ? (uint32_t)sel->n_values_lists
                                                              : QR_ROWS_SEGMENT_ROWS;
    if (rc == 0)
        rc = qr_tx_writer(s, x->def->name, seg, out->ctx, &own, &w, e);
    if (rc == 0) {
        for (size_t r = 0; rc == 0 && r < sel->n_values_lists; r++) {
            rc = values_line(x, sel->values_lists[r]->list, &line);
            if (rc == 0 && qr_rows_add(w, (const char *)line.p, line.len, e) != 0)
                rc = qr_err_prefix(e, "row %zu: ", r + 1);
        }
        if (qr_tx_stmt_end(s, &own, w, rc == 0, rows, e) != 0)
            rc = -1;
    }
    qr_buf_free(&line);
    return rc;
}

/* ---- INSERT ... SELECT ---- */

/* What a result column holds, for the type check against a target. */
static const char *result_type(const qr_rcol *c)
{
    if (c->kind == QR_RK_FLOAT)
        return "double precision";
    if (c->kind == QR_RK_TEXT)
        return "text";
    if (c->kind == QR_RK_JSON)
        return "json";
    return type_of(c->type);
}

static int assignable(const qr_rcol *c, int t)
{
    switch (c->kind) {
    case QR_RK_FLOAT:
        return t == QT_FLOAT64;
    case QR_RK_TEXT:
        return t == QT_TEXT;
    case QR_RK_JSON:
        return t == QT_JSON || t == QT_MAP;
    default:
        if (c->type == QT_TIMESTAMP || t == QT_TIMESTAMP)
            return c->type == t;
        if (c->type == QT_BOOL || t == QT_BOOL)
            return c->type == t;
        if (c->type == QT_FLOAT64)
            return t == QT_FLOAT64;
        return qr_type_is_int(t) || t == QT_FLOAT64;
    }
}

static void cell_json(const qr_rcol *c, const qr_cell *v, qr_buf *out)
{
    char t[64];
    if (v->null) {
        qr_buf_put(out, "null", 4);
        return;
    }
    switch (c->kind) {
    case QR_RK_FLOAT:
        if (isfinite(v->f))
            put_double(out, v->f);
        else
            qr_buf_put(out, "null", 4);
        return;
    case QR_RK_TEXT:
        qj_write_string(out, v->s, v->n);
        return;
    case QR_RK_JSON:
        qr_buf_put(out, v->s, v->n);
        return;
    }
    if (c->type == QT_TIMESTAMP) {
        t[0] = '"';
        qr_time_format(v->i, t + 1);
        t[QR_TIME_TEXT_LEN + 1] = '"';
        qr_buf_put(out, t, QR_TIME_TEXT_LEN + 2);
    } else if (c->type == QT_BOOL) {
        qr_buf_put(out, v->i ? "true" : "false", v->i ? 4 : 5);
    } else if (c->type == QT_FLOAT64) {
        put_double(out, qr_num_to_f64(v->i));
    } else if (c->type == QT_UINT64) {
        snprintf(t, sizeof t, "%llu", (unsigned long long)qr_num_to_u64(v->i));
        qr_buf_put(out, t, strlen(t));
    } else {
        snprintf(t, sizeof t, "%lld", (long long)v->i);
        qr_buf_put(out, t, strlen(t));
    }
}

/* Write the rows of r (the SELECT's result, run by the caller). */
static int insert_result(ins *x, qr_sql_session *s, qr_result *r, qr_result *out, uint64_t *rows)
{
    qr_err *e = x->e;
    int rc = 0;
    if (r->ncols != x->ncols)
        rc = qr_errf(e, QR_E_SYNTAX, "INSERT has %s target columns than expressions (%u, %u)",
                     r->ncols > x->ncols ? "fewer" : "more", x->ncols, r->ncols);
    for (uint32_t i = 0; rc == 0 && i < x->ncols; i++) {
        const qr_coldef *cd = &x->def->cols[x->cols[i]];
        if (!assignable(&r->cols[i], cd->type))
            rc = qr_errf(e, QR_E_DATATYPE,
                         "column \"%s\" is of type %s but expression is of type %s", cd->name,
                         type_of(cd->type), result_type(&r->cols[i]));
    }
    qr_rowwriter own, *w;
    if (rc == 0)
        rc = qr_tx_writer(s, x->def->name, 0, out->ctx, &own, &w, e);
    if (rc == 0) {
        qr_buf line;
        qr_buf_init(&line);
        for (uint64_t i = 0; rc == 0 && i < r->nrows; i++) {
            const qr_cell *row = qr_result_row(r, i);
            qr_buf_clear(&line);
            qr_buf_put_u8(&line, '{');
            for (uint32_t c = 0; c < x->ncols; c++) {
                const qr_coldef *cd = &x->def->cols[x->cols[c]];
                if (c)
                    qr_buf_put_u8(&line, ',');
                qj_write_string(&line, cd->name, strlen(cd->name));
                qr_buf_put_u8(&line, ':');
                cell_json(&r->cols[c], &row[c], &line);
            }
            qr_buf_put_u8(&line, '}');
            if (line.oom)
                rc = qr_errf(e, QR_E_NOMEM, "out of memory");
            else if (qr_rows_add(w, (const char *)line.p, line.len, e) != 0)
                rc = qr_err_prefix(e, "row %llu of the SELECT: ", (unsigned long long)i + 1);
        }
        qr_buf_free(&line);
        if (qr_tx_stmt_end(s, &own, w, rc == 0, rows, e) != 0)
            rc = -1;
    }
    return rc;
}

int qr_sql_stmt_insert(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__InsertStmt *st,
                       qr_result *out, qr_err *e)
{
    if (qr_sql_relname(p, st->relation, e) != 0)
        return -1;
    if (st->on_conflict_clause || st->n_returning_list || st->with_clause) {
        qr_errf(e, QR_E_FEATURE, "INSERT with ON CONFLICT, RETURNING or WITH is not supported");
        return qr_sqlp_at(p, st->relation->location, e);
    }
    /* The catalog lock is held to read the definition (and run the SELECT),
     * not while waiting for the table's writer slot: a writer that holds
     * it long (a client's COPY FROM STDIN) must not hold up DDL meanwhile. */
    ins x = {.p = p, .e = e};
    uint64_t rows = 0;
    qr_tabdef *def = NULL;
    qr_result r;
    qr_result_init(&r, out->ctx);
    const PgQuery__Node *sn = st->select_stmt;
    const PgQuery__SelectStmt *values =
        sn && sn->node_case == PG_QUERY__NODE__NODE_SELECT_STMT && sn->select_stmt->n_values_lists
            ? sn->select_stmt
            : NULL;
    qr_sqldb_lock(s->db, 0);
    const qr_tabdef *cd = qr_catalog_find(qr_sqldb_catalog(s->db), st->relation->relname);
    int rc = 0;
    if (!cd)
        rc = fail_at(&x, st->relation->location, QR_E_UNDEFINED_TABLE,
                     "relation \"%s\" does not exist%s", st->relation->relname, "");
    else if (!(def = qr_tabdef_clone(cd)))
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    x.def = def;
    if (rc == 0)
        rc = target_columns(&x, st);
    if (rc == 0 && !sn)
        rc = qr_errf(e, QR_E_FEATURE, "INSERT ... DEFAULT VALUES is not supported");
    if (rc == 0 && !values)
        rc = qr_sql_select_node(s, p, sn, &r, e);
    qr_sqldb_unlock(s->db);
    if (rc == 0)
        rc = values ? insert_values(&x, s, values, out, &rows)
                    : insert_result(&x, s, &r, out, &rows);
    qr_result_free(&r);
    qr_tabdef_free(def);
    if (rc == 0)
        snprintf(out->tag, sizeof out->tag, "INSERT 0 %llu", (unsigned long long)rows);
    return rc;
}
