/* stmt_copy.c - COPY t [(cols)] FROM 'file' | STDIN and COPY {t | (SELECT
 * ...)} TO 'file', in the formats text (PostgreSQL's default), csv, and
 * json / ndjson (newline-delimited JSON, as DuckDB names it).
 *
 * FROM a json file goes through the parallel NDJSON ingest pipeline
 * (ingest/ingest.h, strict: the first bad line aborts the copy); FROM a
 * csv or text file, and FROM STDIN in any format (qr_sql_copy_begin / feed
 * / end, sql.h), go record by record (csv.h) into the row writer (rows.h),
 * a segment per 131072 rows. Either way one manifest commit publishes all
 * the rows at the end, or none on an error, which names the input, its
 * line and the column ("data.csv:7: column \"n\": invalid input syntax for
 * an integer: \"x\"").
 *
 * TO a file or STDOUT (qr_sql_copy_out_begin / line, sql.h): the query's
 * result (held under the statement's memory limit) rendered a line at a
 * time as PostgreSQL writes text and csv (escapes, quoting, NULLs), json
 * lines by exec/render.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "exec/render.h"
#include "ingest/ingest.h"
#include "sql/csv.h"
#include "sql/db.h"
#include "sql/live.h"
#include "sql/rows.h"
#include "sql/stmt.h"
#include "sql/tx.h"
#include "util/fsutil.h"
#include "util/json.h"

#define QR_E_COPY_FORMAT "22P04"
#define COPY_MAX_LINE    (16u << 20) /* the longest json line COPY FROM STDIN takes */

enum { CP_TEXT = 0, CP_CSV = 1, CP_JSON = 2 };

/* A file name, not STDIN / STDOUT (protobuf gives those an empty string). */
static int has_file(const PgQuery__CopyStmt *cs) { return cs->filename && cs->filename[0]; }

typedef struct copy_opts {
    int fmt;
    int header;
    char delim;
    char null_str[64];
    int has_null;
} copy_opts;

static int opt_bool(const PgQuery__Node *arg, int *v)
{
    const char *s = qr_sql_strval(arg);
    if (!arg) {
        *v = 1; /* HEADER alone */
        return 0;
    }
    if (arg->node_case == PG_QUERY__NODE__NODE_BOOLEAN) {
        *v = arg->boolean->boolval;
        return 0;
    }
    if (arg->node_case == PG_QUERY__NODE__NODE_INTEGER) {
        *v = arg->integer->ival != 0;
        return 0;
    }
    if (s && (!strcasecmp(s, "true") || !strcasecmp(s, "on") || !strcmp(s, "1")))
        return *v = 1, 0;
    if (s && (!strcasecmp(s, "false") || !strcasecmp(s, "off") || !strcmp(s, "0")))
        return *v = 0, 0;
    return -1;
}

static int copy_options(const qr_sqlparse *p, const PgQuery__CopyStmt *cs, copy_opts *o, qr_err *e)
{
    memset(o, 0, sizeof *o);
    o->fmt = CP_TEXT;
    int has_delim = 0;
    for (size_t i = 0; i < cs->n_options; i++) {
        const PgQuery__Node *n = cs->options[i];
        if (n->node_case != PG_QUERY__NODE__NODE_DEF_ELEM)
            continue;
        const PgQuery__DefElem *de = n->def_elem;
        const char *v = qr_sql_strval(de->arg);
        if (!strcasecmp(de->defname, "format")) {
            if (v && !strcasecmp(v, "text"))
                o->fmt = CP_TEXT;
            else if (v && !strcasecmp(v, "csv"))
                o->fmt = CP_CSV;
            else if (v && (!strcasecmp(v, "json") || !strcasecmp(v, "ndjson")))
                o->fmt = CP_JSON;
            else {
                qr_errf(e, QR_E_FEATURE,
                        "COPY format \"%s\" is not supported (text, csv, json, "
                        "ndjson are)",
                        v ? v : "?");
                return qr_sqlp_at(p, de->location, e);
            }
        } else if (!strcasecmp(de->defname, "header")) {
            if (opt_bool(de->arg, &o->header) != 0) {
                qr_errf(e, QR_E_ARGS, "HEADER takes true or false");
                return qr_sqlp_at(p, de->location, e);
            }
        } else if (!strcasecmp(de->defname, "delimiter")) {
            if (!v || strlen(v) != 1 || v[0] == '\n' || v[0] == '\r' || v[0] == '"' ||
                v[0] == '\\') {
                qr_errf(e, QR_E_ARGS,
                        "COPY delimiter must be a single byte other than a line "
                        "break, quote or backslash");
                return qr_sqlp_at(p, de->location, e);
            }
            o->delim = v[0];
            has_delim = 1;
        } else if (!strcasecmp(de->defname, "null")) {
            if (!v || strlen(v) >= sizeof o->null_str) {
                qr_errf(e, QR_E_ARGS, "COPY NULL takes a string of at most 63 bytes");
                return qr_sqlp_at(p, de->location, e);
            }
            snprintf(o->null_str, sizeof o->null_str, "%s", v);
            o->has_null = 1;
        } else if (!strcasecmp(de->defname, "encoding") && v &&
                   (!strcasecmp(v, "utf8") || !strcasecmp(v, "utf-8"))) {
            /* the only encoding */
        } else {
            qr_errf(e, QR_E_FEATURE,
                    "COPY option \"%s\" is not supported (FORMAT, HEADER, DELIMITER, NULL, "
                    "ENCODING 'UTF8' are)",
                    de->defname);
            return qr_sqlp_at(p, de->location, e);
        }
    }
    if (!has_delim)
        o->delim = o->fmt == CP_CSV ? ',' : '\t';
    if (o->has_null && o->fmt != CP_CSV)
        return qr_errf(e, QR_E_FEATURE,
                       "COPY NULL is supported with FORMAT csv only (text "
                       "format's NULL is \\N)");
    if (o->fmt == CP_JSON && (has_delim || o->header))
        return qr_errf(e, QR_E_FEATURE, "DELIMITER and HEADER do not apply to FORMAT json");
    return 0;
}

/* ---- COPY FROM: the copy state shared by files and STDIN ---- */

struct qr_sql_copy_in {
    qr_sql_db *db;
    copy_opts o;
    char src[256]; /* the input in messages: the file name or "STDIN" */
    qr_sql_session *s;
    qr_rowwriter own; /* outside a transaction block */
    qr_rowwriter *w;  /* &own, or the block's writer for the table (tx.h) */
    qr_recparser rp;
    qr_buf partial; /* json: the line not complete yet */
    uint64_t line;  /* json: lines completed */
    qr_buf row;     /* the row's NDJSON line being built */
    int skip_header;
    uint32_t ncols;
    int cols[QR_MAX_COLUMNS];
};

/* The catalog's spelling of the table cs names into name[0..n), taking
 * the catalog lock for the look-up only. 0, or -1 with e set (42P01). */
static int table_name(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__CopyStmt *cs,
                      char *name, size_t n, qr_err *e)
{
    if (qr_sql_relname(p, cs->relation, e) != 0)
        return -1;
    qr_sqldb_lock(s->db, 0);
    const qr_tabdef *d = qr_catalog_find(qr_sqldb_catalog(s->db), cs->relation->relname);
    if (d)
        snprintf(name, n, "%s", d->name);
    qr_sqldb_unlock(s->db);
    if (!d) {
        qr_errf(e, QR_E_UNDEFINED_TABLE, "relation \"%s\" does not exist", cs->relation->relname);
        return qr_sqlp_at(p, cs->relation->location, e);
    }
    return 0;
}

/* Open the copy into the table cs names (the caller does not hold the
 * catalog lock: waiting for the table's writer slot, which a client's COPY
 * FROM STDIN may hold for long, must not hold up DDL). 0, or -1 with e set
 * and nothing held. */
static int copy_setup(qr_sql_copy_in *ci, qr_sql_session *s, const qr_sqlparse *p,
                      const PgQuery__CopyStmt *cs, const char *src, qr_qctx *ctx, qr_err *e)
{
    memset(ci, 0, sizeof *ci);
    ci->db = s->db;
    snprintf(ci->src, sizeof ci->src, "%s", src);
    char name[128];
    if (copy_options(p, cs, &ci->o, e) != 0 || table_name(s, p, cs, name, sizeof name, e) != 0)
        return -1;
    if (ci->o.fmt == CP_JSON && cs->n_attlist) {
        qr_errf(e, QR_E_FEATURE,
                "a column list with FORMAT json is not supported (the keys "
                "name the columns)");
        return qr_sqlp_at(p, cs->relation->location, e);
    }
    ci->s = s;
    if (qr_tx_writer(s, name, 0, ctx, &ci->own, &ci->w, e) != 0)
        return -1;
    /* the columns of the definition the rows follow (read under the table's lock) */
    const qr_tabdef *d = ci->w->t->def;
    uint8_t seen[QR_MAX_COLUMNS] = {0};
    for (size_t i = 0; i < cs->n_attlist; i++) {
        const char *nm = qr_sql_strval(cs->attlist[i]);
        int c = nm ? qr_tabdef_col(d, nm, strlen(nm)) : -1;
        if (c < 0 || seen[c]++) {
            qr_errf(e, c < 0 ? QR_E_UNDEFINED_COLUMN : "42701",
                    c < 0 ? "column \"%s\" of relation \"%s\" does not exist"
                          : "column \"%s\" specified more than once in relation \"%s\"",
                    nm ? nm : "?", d->name);
            qr_tx_stmt_abort(s, &ci->own, ci->w);
            return qr_sqlp_at(p, cs->relation->location, e);
        }
        ci->cols[ci->ncols++] = c;
    }
    if (!cs->n_attlist)
        for (uint32_t c = 0; c < d->ncols; c++)
            ci->cols[ci->ncols++] = (int)c;
    if (ci->o.fmt != CP_JSON)
        qr_rec_init(&ci->rp, ci->o.fmt == CP_CSV, ci->o.delim,
                    ci->o.has_null ? ci->o.null_str : "");
    qr_buf_init(&ci->partial);
    qr_buf_init(&ci->row);
    ci->skip_header = ci->o.header;
    return 0;
}

static void copy_free(qr_sql_copy_in *ci)
{
    if (ci->o.fmt != CP_JSON)
        qr_rec_free(&ci->rp);
    qr_buf_free(&ci->partial);
    qr_buf_free(&ci->row);
}

/* One csv / text record as a row. */
static int record_row(void *arg, const qr_recparser *rp, qr_err *e)
{
    qr_sql_copy_in *ci = arg;
    unsigned long long line = (unsigned long long)rp->rec_line;
    if (ci->skip_header) {
        ci->skip_header = 0;
        return 0;
    }
    const qr_tabdef *d = ci->w->t->def;
    if (rp->nfields != ci->ncols)
        return rp->nfields < ci->ncols
                   ? qr_errf(e, QR_E_COPY_FORMAT, "%s:%llu: missing data for column \"%s\"",
                             ci->src, line, d->cols[ci->cols[rp->nfields]].name)
                   : qr_errf(e, QR_E_COPY_FORMAT,
                             "%s:%llu: extra data after the last expected column (%u)", ci->src,
                             line, ci->ncols);
    qr_buf *b = &ci->row;
    qr_buf_clear(b);
    qr_buf_put_u8(b, '{');
    for (uint32_t i = 0; i < ci->ncols; i++) {
        const qr_coldef *cd = &d->cols[ci->cols[i]];
        const char *f;
        size_t n;
        int null = qr_rec_field(rp, i, &f, &n);
        if (i)
            qr_buf_put_u8(b, ',');
        qj_write_string(b, cd->name, strlen(cd->name));
        qr_buf_put_u8(b, ':');
        if (null) {
            qr_buf_put(b, "null", 4);
            continue;
        }
        const char *why = "";
        const char *code = qr_sql_text_value(f, n, cd->type, b, &why);
        if (code)
            return qr_errf(e, code, "%s:%llu: column \"%s\": %s: \"%.*s\"", ci->src, line, cd->name,
                           why, n > 60 ? 60 : (int)n, f);
    }
    qr_buf_put_u8(b, '}');
    if (b->oom)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    if (qr_rows_add(ci->w, (const char *)b->p, b->len, e) != 0)
        return qr_err_prefix(e, "%s:%llu: ", ci->src, line);
    return 0;
}

/* One json line (no '\n') as a row; blank lines are skipped. */
static int json_line(qr_sql_copy_in *ci, const char *p, size_t n, qr_err *e)
{
    ci->line++;
    if (n && p[n - 1] == '\r')
        n--;
    size_t k = 0;
    while (k < n && (p[k] == ' ' || p[k] == '\t'))
        k++;
    if (k == n || (n == 2 && p[0] == '\\' && p[1] == '.'))
        return 0;
    if (qr_rows_add(ci->w, p, n, e) != 0)
        return qr_err_prefix(e, "%s:%llu: ", ci->src, (unsigned long long)ci->line);
    return 0;
}

static int feed(qr_sql_copy_in *ci, const char *p, size_t n, qr_err *e)
{
    if (ci->o.fmt != CP_JSON) {
        if (qr_rec_feed(&ci->rp, p, n, record_row, ci, e) != 0)
            return strncmp(e->msg, ci->src, strlen(ci->src)) ? qr_err_prefix(e, "%s: ", ci->src)
                                                             : -1;
        return 0;
    }
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (ci->partial.len + take > COPY_MAX_LINE)
            return qr_errf(e, QR_E_LINE_TOO_LONG, "%s:%llu: line longer than %u bytes", ci->src,
                           (unsigned long long)ci->line + 1, COPY_MAX_LINE);
        if (!nl) {
            qr_buf_put(&ci->partial, p, n);
            break;
        }
        int rc;
        if (ci->partial.len) {
            qr_buf_put(&ci->partial, p, take);
            rc = ci->partial.oom ? qr_errf(e, QR_E_NOMEM, "out of memory")
                                 : json_line(ci, (const char *)ci->partial.p, ci->partial.len, e);
            qr_buf_clear(&ci->partial);
        } else {
            rc = json_line(ci, p, take, e);
        }
        if (rc != 0)
            return -1;
        p += take + 1;
        n -= take + 1;
    }
    return ci->partial.oom ? qr_errf(e, QR_E_NOMEM, "out of memory") : 0;
}

static int finish(qr_sql_copy_in *ci, uint64_t *rows, qr_err *e)
{
    int rc = 0;
    if (ci->o.fmt != CP_JSON) {
        if (qr_rec_finish(&ci->rp, record_row, ci, e) != 0)
            rc = strncmp(e->msg, ci->src, strlen(ci->src)) ? qr_err_prefix(e, "%s: ", ci->src) : -1;
    } else if (ci->partial.len) {
        rc = json_line(ci, (const char *)ci->partial.p, ci->partial.len, e);
    }
    if (rc == 0)
        return qr_tx_stmt_end(ci->s, &ci->own, ci->w, 1, rows, e);
    qr_tx_stmt_abort(ci->s, &ci->own, ci->w);
    return -1;
}

/* ---- the streaming API (sql.h) ---- */

qr_sql_copy_in *qr_sql_copy_begin(qr_sql_session *s, const char *sql, size_t n, qr_err *e)
{
    qr_sqlparse p;
    int rc = qr_sqlp_parse(&p, sql, n, e);
    const PgQuery__Node *st = rc == 0 && p.tree->n_stmts == 1 ? p.tree->stmts[0]->stmt : NULL;
    qr_sql_copy_in *ci = NULL;
    if (rc == 0 && (!st || st->node_case != PG_QUERY__NODE__NODE_COPY_STMT))
        rc = qr_errf(e, QR_E_FEATURE, "qr_sql_copy_begin takes one COPY ... FROM STDIN");
    const PgQuery__CopyStmt *cs = rc == 0 ? st->copy_stmt : NULL;
    if (rc == 0 && (!cs->is_from || has_file(cs) || cs->is_program || !cs->relation))
        rc = qr_errf(e, QR_E_FEATURE,
                     "qr_sql_copy_begin takes COPY t FROM STDIN (run other "
                     "COPY statements with qr_sql_exec)");
    if (rc == 0)
        rc = qr_tx_admit(s, st, e);
    if (rc == 0 && !(ci = malloc(sizeof *ci)))
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    if (rc == 0) {
        rc = copy_setup(ci, s, &p, cs, "STDIN", NULL, e);
        if (rc != 0) {
            free(ci);
            ci = NULL;
        }
    }
    if (rc != 0)
        qr_tx_fail(s);
    qr_sqlp_free(&p);
    return ci;
}

uint32_t qr_sql_copy_columns(const qr_sql_copy_in *ci) { return ci->ncols; }

int qr_sql_copy_feed(qr_sql_copy_in *ci, const void *p, size_t n, qr_err *e)
{
    if (feed(ci, p, n, e) == 0)
        return 0;
    qr_sql_copy_abort(ci);
    return -1;
}

int qr_sql_copy_end(qr_sql_copy_in *ci, uint64_t *rows, qr_err *e)
{
    int rc = finish(ci, rows, e);
    copy_free(ci);
    free(ci);
    return rc;
}

void qr_sql_copy_abort(qr_sql_copy_in *ci)
{
    if (!ci)
        return;
    qr_tx_stmt_abort(ci->s, &ci->own, ci->w);
    copy_free(ci);
    free(ci);
}

/* ---- COPY FROM a file ---- */

/* A json file through the parallel ingest pipeline. */
static int copy_json_file(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__CopyStmt *cs,
                          uint64_t *rows, qr_err *e)
{
    char name[128];
    if (table_name(s, p, cs, name, sizeof name, e) != 0)
        return -1;
    if (cs->n_attlist) {
        qr_errf(e, QR_E_FEATURE,
                "a column list with FORMAT json is not supported (the keys "
                "name the columns)");
        return qr_sqlp_at(p, cs->relation->location, e);
    }
    int fd = open(cs->filename, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return qr_errf(e, QR_E_IO, "could not open file \"%s\" for reading: %s", cs->filename,
                       strerror(errno));
    int rc = qr_sqldb_writer_begin(s->db, name, e);
    if (rc == 0) {
        qr_table *t =
            qr_table_open(qr_sql_db_dir(s->db), name, QR_TABLE_WRITE | QR_TABLE_CREATE, e);
        if (t) {
            qr_ingest_opts o;
            qr_ingest_opts_default(&o);
            o.strict = 1;
            o.threads = s->set.threads;
            qr_ingest_stats st;
            rc = qr_ingest(t, fd, cs->filename, &o, &st, e);
            *rows = rc == 0 ? st.rows : 0;
            qr_table_close(t);
        } else {
            rc = -1;
        }
        qr_sqldb_writer_end(s->db, name);
    }
    close(fd);
    return rc;
}

static int copy_from_file(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__CopyStmt *cs,
                          qr_qctx *ctx, uint64_t *rows, qr_err *e)
{
    copy_opts o;
    if (copy_options(p, cs, &o, e) != 0)
        return -1;
    if (o.fmt == CP_JSON && !s->in_tx) /* in a block its rows wait for COMMIT: below */
        return copy_json_file(s, p, cs, rows, e);
    int fd = open(cs->filename, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return qr_errf(e, QR_E_IO, "could not open file \"%s\" for reading: %s", cs->filename,
                       strerror(errno));
    qr_sql_copy_in *ci = malloc(sizeof *ci);
    char *buf = malloc(1u << 20);
    int rc = ci && buf ? copy_setup(ci, s, p, cs, cs->filename, ctx, e)
                       : qr_errf(e, QR_E_NOMEM, "out of memory");
    if (rc == 0) {
        for (;;) {
            ssize_t r = read(fd, buf, 1u << 20);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                rc = qr_errf(e, QR_E_IO, "read %s: %s", cs->filename, strerror(errno));
                break;
            }
            if (r == 0 || (rc = feed(ci, buf, (size_t)r, e)) != 0)
                break;
            if (ctx && (rc = qr_qctx_check(ctx, e)) != 0)
                break;
        }
        if (rc == 0)
            rc = finish(ci, rows, e);
        else
            qr_tx_stmt_abort(s, &ci->own, ci->w);
        copy_free(ci);
    }
    free(buf);
    free(ci);
    close(fd);
    return rc;
}

/* ---- COPY TO: the query and its lines (a file, or STDOUT through sql.h) ---- */

/* One field of text format as PostgreSQL writes it (CopyAttributeOutText):
 * backslash, the delimiter and \b \f \n \r \t \v are escaped; other bytes
 * go as they are. */
static void text_field(qr_buf *out, const uint8_t *p, size_t n, char delim)
{
    for (size_t k = 0; k < n; k++) {
        uint8_t ch = p[k];
        char esc = ch == '\b'   ? 'b'
                   : ch == '\f' ? 'f'
                   : ch == '\n' ? 'n'
                   : ch == '\r' ? 'r'
                   : ch == '\t' ? 't'
                   : ch == '\v' ? 'v'
                                : 0;
        if (esc) {
            qr_buf_put_u8(out, '\\');
            qr_buf_put_u8(out, (uint8_t)esc);
        } else {
            if (ch == '\\' || ch == (uint8_t)delim)
                qr_buf_put_u8(out, '\\');
            qr_buf_put_u8(out, ch);
        }
    }
}

/* One field of CSV as PostgreSQL writes it (CopyAttributeOutCSV): quoted
 * when it holds the delimiter, a quote, CR or LF, when it is empty (an
 * unquoted empty field is NULL), or when it is "\." alone in its line (the
 * end-of-data marker); a quote inside is doubled. */
static void csv_field(qr_buf *out, const uint8_t *p, size_t n, char delim, int single)
{
    int quote = n == 0 || (single && n == 2 && p[0] == '\\' && p[1] == '.');
    for (size_t k = 0; k < n && !quote; k++)
        quote = p[k] == (uint8_t)delim || p[k] == '"' || p[k] == '\n' || p[k] == '\r';
    if (!quote) {
        qr_buf_put(out, p, n);
        return;
    }
    qr_buf_put_u8(out, '"');
    for (size_t k = 0; k < n; k++) {
        if (p[k] == '"')
            qr_buf_put_u8(out, '"');
        qr_buf_put_u8(out, p[k]);
    }
    qr_buf_put_u8(out, '"');
}

static void put_field(const qr_sql_copy_out *co, qr_buf *out, const uint8_t *p, size_t n)
{
    if (co->fmt == QR_SQL_COPY_CSV)
        csv_field(out, p, n, co->delim, co->r.ncols == 1);
    else
        text_field(out, p, n, co->delim);
}

int qr_sql_copy_out_line(qr_sql_copy_out *co, qr_buf *b)
{
    const qr_result *r = &co->r;
    if (co->header_left) { /* the column names (not for json) */
        co->header_left = 0;
        for (uint32_t c = 0; c < r->ncols; c++) {
            if (c)
                qr_buf_put_u8(b, (uint8_t)co->delim);
            put_field(co, b, (const uint8_t *)r->cols[c].name, strlen(r->cols[c].name));
        }
        qr_buf_put_u8(b, '\n');
        return 1;
    }
    if (co->next >= r->nrows)
        return 0;
    const qr_cell *row = qr_result_row(r, co->next++);
    if (co->fmt == QR_SQL_COPY_JSON) { /* the renderer's NDJSON of this one row */
        qr_result view = *r;
        view.cells = (qr_cell *)row;
        view.nrows = 1;
        qr_result_render(&view, QR_FMT_NDJSON, b);
        return 1;
    }
    qr_buf *t = &co->t;
    for (uint32_t c = 0; c < r->ncols; c++) {
        if (c)
            qr_buf_put_u8(b, (uint8_t)co->delim);
        if (row[c].null) {
            if (co->fmt == QR_SQL_COPY_TEXT)
                qr_buf_put(b, "\\N", 2); /* csv: nothing */
            continue;
        }
        if (r->cols[c].kind == QR_RK_INT && r->cols[c].type == QT_BOOL) {
            qr_buf_put_u8(b, row[c].i ? 't' : 'f'); /* PostgreSQL's spelling */
            continue;
        }
        qr_buf_clear(t);
        qr_cell_text(r, c, &row[c], t);
        put_field(co, b, t->p, t->len);
    }
    qr_buf_put_u8(b, '\n');
    return 1;
}

void qr_sql_copy_out_free(qr_sql_copy_out *co)
{
    qr_result_free(&co->r);
    qr_buf_free(&co->t);
}

/* The rows of COPY cs's query into r: its SELECT, or SELECT cols FROM t in
 * the catalog's spelling (the caller holds the catalog lock shared). */
static int copy_query(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__CopyStmt *cs,
                      qr_result *r, qr_err *e)
{
    if (cs->query)
        return qr_sql_select_node(s, p, cs->query, r, e);
    if (qr_sql_relname(p, cs->relation, e) != 0)
        return -1;
    const qr_tabdef *d = qr_catalog_find(qr_sqldb_catalog(s->db), cs->relation->relname);
    if (!d) {
        qr_errf(e, QR_E_UNDEFINED_TABLE, "relation \"%s\" does not exist", cs->relation->relname);
        return qr_sqlp_at(p, cs->relation->location, e);
    }
    qr_buf q;
    qr_buf_init(&q);
    qr_buf_put(&q, "SELECT ", 7);
    for (size_t i = 0; i < cs->n_attlist; i++) {
        const char *nm = qr_sql_strval(cs->attlist[i]);
        int c = nm ? qr_tabdef_col(d, nm, strlen(nm)) : -1;
        if (c < 0) {
            qr_buf_free(&q);
            qr_errf(e, QR_E_UNDEFINED_COLUMN, "column \"%s\" of relation \"%s\" does not exist",
                    nm ? nm : "?", d->name);
            return qr_sqlp_at(p, cs->relation->location, e);
        }
        if (i)
            qr_buf_put(&q, ", ", 2);
        qj_write_string(&q, d->cols[c].name, strlen(d->cols[c].name)); /* a quoted name */
    }
    if (!cs->n_attlist)
        qr_buf_put_u8(&q, '*');
    qr_buf_put(&q, " FROM ", 6);
    qj_write_string(&q, d->name, strlen(d->name));
    qr_sqlparse p2;
    int rc = q.oom ? qr_errf(e, QR_E_NOMEM, "out of memory")
                   : qr_sqlp_parse(&p2, (const char *)q.p, q.len, e);
    if (rc == 0)
        rc = qr_sql_select_node(s, &p2, p2.tree->stmts[0]->stmt, r, e);
    if (!q.oom)
        qr_sqlp_free(&p2);
    qr_buf_free(&q);
    return rc;
}

/* Options and rows of a COPY TO into co (under out_ctx); 0, or -1 with e
 * set and nothing to free. */
static int copy_out_setup(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__CopyStmt *cs,
                          qr_qctx *ctx, qr_sql_copy_out *co, qr_err *e)
{
    memset(co, 0, sizeof *co);
    copy_opts o;
    if (copy_options(p, cs, &o, e) != 0)
        return -1;
    if (o.has_null)
        return qr_errf(e, QR_E_FEATURE,
                       "COPY TO with NULL is not supported (NULL is \\N in text, an empty "
                       "field in csv)");
    co->fmt = o.fmt == CP_CSV ? QR_SQL_COPY_CSV : o.fmt == CP_JSON ? QR_SQL_COPY_JSON : 0;
    co->delim = o.delim;
    co->header_left = o.header && o.fmt != CP_JSON;
    qr_result_init(&co->r, ctx);
    qr_buf_init(&co->t);
    qr_sqldb_lock(s->db, 0);
    int rc = copy_query(s, p, cs, &co->r, e);
    qr_sqldb_unlock(s->db);
    if (rc != 0)
        qr_sql_copy_out_free(co);
    return rc;
}

static int copy_to_file(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__CopyStmt *cs,
                        qr_result *out, uint64_t *rows, qr_err *e)
{
    qr_sql_copy_out co;
    if (copy_out_setup(s, p, cs, out->ctx, &co, e) != 0)
        return -1;
    int fd = open(cs->filename, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = 0;
    if (fd < 0)
        rc = qr_errf(e, QR_E_IO, "could not open file \"%s\" for writing: %s", cs->filename,
                     strerror(errno));
    qr_buf b;
    qr_buf_init(&b);
    while (rc == 0) { /* written in pieces of about 1 MiB */
        int more = qr_sql_copy_out_line(&co, &b);
        if (b.oom)
            rc = qr_errf(e, QR_E_NOMEM, "out of memory rendering a row");
        else if (b.len >= (1u << 20) || (!more && b.len)) {
            rc = qr_write_all(fd, b.p, b.len, cs->filename, e);
            qr_buf_clear(&b);
        }
        if (!more)
            break;
    }
    if (fd >= 0 && close(fd) != 0 && rc == 0)
        rc = qr_errf(e, QR_E_IO, "close %s: %s", cs->filename, strerror(errno));
    *rows = co.r.nrows;
    qr_buf_free(&b);
    qr_sql_copy_out_free(&co);
    return rc;
}

/* ---- COPY TO STDOUT (sql.h) ---- */

/* Parse sql as one COPY statement: its node, or NULL (p freed) when it is
 * not one. */
static const PgQuery__CopyStmt *one_copy(qr_sqlparse *p, const char *sql, size_t n, qr_err *e)
{
    if (qr_sqlp_parse(p, sql, n, e) != 0) {
        qr_sqlp_free(p);
        return NULL;
    }
    if (p->tree->n_stmts == 1 &&
        p->tree->stmts[0]->stmt->node_case == PG_QUERY__NODE__NODE_COPY_STMT)
        return p->tree->stmts[0]->stmt->copy_stmt;
    qr_sqlp_free(p);
    return NULL;
}

int qr_sql_copy_out_begin(qr_sql_session *s, const char *sql, size_t n, qr_qctx *ctx,
                          qr_sql_copy_out *co, qr_err *e)
{
    memset(co, 0, sizeof *co);
    qr_sqlparse p;
    qr_err pe;
    qr_err_clear(&pe);
    const PgQuery__CopyStmt *cs = one_copy(&p, sql, n, &pe);
    if (!cs) {
        if (pe.code[0] && strcmp(pe.code, "00000")) { /* the parse error, with its position */
            *e = pe;
            return -1;
        }
        return qr_errf(e, QR_E_FEATURE, "qr_sql_copy_out_begin takes one COPY ... TO STDOUT");
    }
    int rc = 0;
    if (cs->is_from || has_file(cs) || cs->is_program)
        rc = qr_errf(e, QR_E_FEATURE,
                     "qr_sql_copy_out_begin takes COPY ... TO STDOUT (run other COPY "
                     "statements with qr_sql_exec)");
    if (rc == 0)
        rc = qr_tx_admit(s, p.tree->stmts[0]->stmt, e);
    if (rc == 0)
        rc = copy_out_setup(s, &p, cs, ctx, co, e);
    if (rc != 0)
        qr_tx_fail(s);
    qr_sqlp_free(&p);
    return rc;
}

uint32_t qr_sql_copy_out_columns(const qr_sql_copy_out *co) { return co->r.ncols; }

int qr_sql_stmt_copy(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__CopyStmt *cs,
                     qr_result *out, qr_err *e)
{
    if (cs->is_program)
        return qr_errf(e, QR_E_FEATURE, "COPY ... PROGRAM is not supported");
    if (cs->where_clause)
        return qr_errf(e, QR_E_FEATURE, "COPY FROM ... WHERE is not supported");
    if (!has_file(cs))
        return qr_errf(e, QR_E_FEATURE,
                       cs->is_from ? "COPY FROM STDIN needs a client that sends the data (the "
                                     "PostgreSQL protocol; qr_sql_copy_begin): use COPY FROM 'file'"
                                   : "COPY TO STDOUT needs a client that takes the rows (the "
                                     "PostgreSQL protocol; qr_sql_copy_out_begin): use COPY TO "
                                     "'file'");
    uint64_t rows = 0;
    int rc;
    if (cs->is_from) { /* takes the catalog lock for its look-up only */
        rc = copy_from_file(s, p, cs, out->ctx, &rows, e);
    } else {
        qr_sqldb_lock(s->db, 0);
        rc = copy_to_file(s, p, cs, out, &rows, e);
        qr_sqldb_unlock(s->db);
    }
    if (rc == 0)
        snprintf(out->tag, sizeof out->tag, "COPY %llu", (unsigned long long)rows);
    return rc;
}

/* Does the text start with the word COPY (after blanks and comments)? A
 * cheap test before a parse, for every statement a server runs. */
static int starts_with_copy(const char *sql, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (sql[i] == ' ' || sql[i] == '\t' || sql[i] == '\n' || sql[i] == '\r' || sql[i] == '\f')
            i++;
        else if (i + 1 < n && sql[i] == '-' && sql[i + 1] == '-')
            while (i < n && sql[i] != '\n')
                i++;
        else if (i + 1 < n && sql[i] == '/' && sql[i + 1] == '*') {
            const char *end = memmem(sql + i + 2, n - i - 2, "*/", 2);
            i = end ? (size_t)(end - sql) + 2 : n;
        } else
            break;
    }
    return n - i >= 4 && !strncasecmp(sql + i, "copy", 4) &&
           (n - i == 4 || !(sql[i + 4] == '_' || (sql[i + 4] >= '0' && sql[i + 4] <= '9') ||
                            ((sql[i + 4] | 0x20) >= 'a' && (sql[i + 4] | 0x20) <= 'z')));
}

/* 1 FROM STDIN, 2 TO STDOUT, 0 anything else. */
static int stdio_copy(const char *sql, size_t n)
{
    if (!starts_with_copy(sql, n))
        return 0;
    qr_sqlparse p;
    const PgQuery__CopyStmt *cs = one_copy(&p, sql, n, NULL);
    if (!cs)
        return 0;
    int k = has_file(cs) || cs->is_program ? 0 : cs->is_from ? 1 : 2;
    qr_sqlp_free(&p);
    return k;
}

int qr_sql_is_copy_from_stdin(const char *sql, size_t n) { return stdio_copy(sql, n) == 1; }

int qr_sql_is_copy_to_stdout(const char *sql, size_t n) { return stdio_copy(sql, n) == 2; }
