/* stmt_delete.c - DELETE FROM t [WHERE ...]: rows leave the table by
 * deletion files (index/deletes.h), not by rewriting segments.
 *
 * The WHERE clause is bound and run as SELECT's is (index part and
 * residual, subqueries first), over the table's segments as the writer
 * holds them: the table's waiting rows are flushed into segments first and
 * its writer slot and LOCK are held to the commit, so no flush, merge or
 * other writer changes the segments between the scan and the commit. Each
 * segment with newly deleted rows gets a new deletion file (its old bits
 * and the new ones); a segment whose every row is deleted leaves the
 * manifest. One manifest commit publishes all of it: a query sees the
 * table before the DELETE or after it, never part of it. Merges that read
 * a segment before the commit see its deletions changed and give up
 * (sql/merge.c), so a deleted row never comes back. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index/catalog.h"
#include "index/deletes.h"
#include "index/table.h"
#include "sql/db.h"
#include "sql/live.h"
#include "sql/stmt.h"
#include "util/popcount.h"

/* The new deletions of one DELETE: a bitmap per segment, made on its first
 * deleted row (charged to the statement). */
typedef struct delset {
    const qr_table *t;
    qr_qctx *ctx;
    uint64_t **bits; /* per segment of t->man, NULL: none yet */
    uint64_t rows;   /* newly deleted */
} delset;

static size_t words_of(uint64_t rows) { return (size_t)((rows + 63) / 64); }

static int mark(void *arg, uint32_t seg, const uint32_t *rows, uint32_t n, qr_err *e)
{
    delset *d = arg;
    const qr_seg_entry *g = &d->t->man.segs[seg];
    uint64_t *b = d->bits[seg];
    if (!b) {
        if (!(b = d->bits[seg] = qr_qmalloc(d->ctx, 8 * (words_of(g->rows) ? words_of(g->rows) : 1))))
            return qr_qctx_nomem(d->ctx, e);
        memset(b, 0, 8 * words_of(g->rows));
    }
    for (uint32_t i = 0; i < n; i++) {
        if (rows[i] >= g->rows)
            return qr_errf(e, QR_E_INTERNAL, "DELETE: row %u past segment %llu's %llu rows",
                           rows[i], (unsigned long long)g->id, (unsigned long long)g->rows);
        uint64_t bit = 1ull << (rows[i] & 63);
        d->rows += !(b[rows[i] >> 6] & bit);
        b[rows[i] >> 6] |= bit;
    }
    return 0;
}

/* Commit d: each segment's old and new deletions in a new deletion file,
 * then one manifest replace; on failure the files written are removed. */
static int apply(qr_table *t, delset *d, qr_err *e)
{
    uint32_t n = t->man.nsegs, nl = 0, nmade = 0;
    uint64_t gen = t->man.generation + 1;
    qr_seg_entry *list = qr_qmalloc(d->ctx, sizeof *list * (n ? n : 1));
    uint64_t *made = qr_qmalloc(d->ctx, sizeof *made * (n ? n : 1)); /* segment ids */
    int rc = list && made ? 0 : qr_qctx_nomem(d->ctx, e);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        qr_seg_entry g = t->man.segs[i];
        uint64_t *b = d->bits[i];
        if (!b) {
            list[nl++] = g;
            continue;
        }
        size_t nw = words_of(g.rows);
        if (g.del_gen) { /* the deletions it had, kept */
            uint64_t *old;
            if ((rc = qr_del_read(t->dir, &g, &old, e)) != 0)
                break;
            for (size_t w = 0; w < nw; w++)
                b[w] |= old[w];
            free(old);
        }
        uint64_t count = qr_popcount_words(b, nw);
        if (count >= g.rows) /* every row gone: the segment leaves the table */
            continue;
        if ((rc = qr_del_write(t->dir, g.id, gen, g.rows, b, count, e)) != 0)
            break;
        made[nmade++] = g.id;
        g.del_gen = gen;
        g.deleted = count;
        list[nl++] = g;
    }
    if (rc == 0)
        rc = qr_table_replace(t, list, nl, e);
    if (rc != 0) /* nothing committed: the new files go */
        for (uint32_t i = 0; i < nmade; i++) {
            char path[PATH_MAX];
            qr_del_path_in(t->dir, made[i], gen, path, sizeof path);
            unlink(path);
        }
    qr_qfree(d->ctx, list);
    qr_qfree(d->ctx, made);
    return rc;
}

/* The catalog's spelling of table `name`, or 1 when there is none. */
static int canonical(qr_sql_db *db, const char *name, char *canon, size_t n)
{
    qr_sqldb_lock(db, 0);
    const qr_tabdef *d = qr_catalog_find(qr_sqldb_catalog(db), name);
    if (d)
        snprintf(canon, n, "%s", d->name);
    qr_sqldb_unlock(db);
    return d ? 0 : 1;
}

int qr_sql_stmt_delete(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__DeleteStmt *d,
                       qr_result *out, qr_err *e)
{
    if (d->n_using_clause || d->n_returning_list || d->with_clause)
        return qr_errf(e, QR_E_FEATURE, "DELETE with %s is not supported (DELETE FROM t WHERE ... is)",
                       d->n_using_clause ? "USING" : d->n_returning_list ? "RETURNING" : "WITH");
    const PgQuery__RangeVar *rv = d->relation;
    if (!rv || qr_sql_relname(p, rv, e) != 0)
        return rv ? -1 : qr_errf(e, QR_E_SYNTAX, "DELETE needs a table");
    if (rv->alias)
        return qr_errf(e, QR_E_FEATURE, "DELETE with a table alias is not supported");
    qr_sql_db *db = s->db;
    char canon[128];
    if (canonical(db, rv->relname, canon, sizeof canon) != 0) {
        qr_errf(e, QR_E_UNDEFINED_TABLE, "relation \"%s\" does not exist", rv->relname);
        return qr_sqlp_at(p, rv->location, e);
    }
    /* rows acknowledged into the table's log are in segments first, then
     * nothing changes the segments until the commit */
    if (qr_live_flush(db, canon, e) != 0 || qr_sqldb_writer_begin(db, canon, e) != 0)
        return -1;
    qr_table *t = qr_table_open(qr_sql_db_dir(db), canon, QR_TABLE_WRITE | QR_TABLE_CREATE, e);
    if (!t) {
        qr_sqldb_writer_end(db, canon);
        return -1;
    }
    /* the WHERE clause as a SELECT's: SELECT 1 FROM <relation> WHERE ... */
    PgQuery__Integer one = PG_QUERY__INTEGER__INIT;
    one.ival = 1;
    PgQuery__AConst c = PG_QUERY__A__CONST__INIT;
    c.val_case = PG_QUERY__A__CONST__VAL_IVAL;
    c.ival = &one;
    c.location = -1;
    PgQuery__Node cn = PG_QUERY__NODE__INIT;
    cn.node_case = PG_QUERY__NODE__NODE_A_CONST;
    cn.a_const = &c;
    PgQuery__ResTarget rt = PG_QUERY__RES_TARGET__INIT;
    rt.val = &cn;
    rt.location = -1;
    PgQuery__Node rtn = PG_QUERY__NODE__INIT, *targets[1] = {&rtn};
    rtn.node_case = PG_QUERY__NODE__NODE_RES_TARGET;
    rtn.res_target = &rt;
    PgQuery__Node from = PG_QUERY__NODE__INIT, *froms[1] = {&from};
    from.node_case = PG_QUERY__NODE__NODE_RANGE_VAR;
    from.range_var = (PgQuery__RangeVar *)rv;
    PgQuery__SelectStmt sel = PG_QUERY__SELECT_STMT__INIT;
    sel.n_target_list = 1;
    sel.target_list = targets;
    sel.n_from_clause = 1;
    sel.from_clause = froms;
    sel.where_clause = d->where_clause;
    sel.limit_option = PG_QUERY__LIMIT_OPTION__LIMIT_OPTION_DEFAULT;
    sel.op = PG_QUERY__SET_OPERATION__SETOP_NONE;
    PgQuery__Node st = PG_QUERY__NODE__INIT;
    st.node_case = PG_QUERY__NODE__NODE_SELECT_STMT;
    st.select_stmt = &sel;

    delset ds = {t, out->ctx, NULL, 0};
    uint32_t n = t->man.nsegs;
    ds.bits = qr_qmalloc(out->ctx, sizeof *ds.bits * (n ? n : 1));
    int rc = ds.bits ? 0 : qr_qctx_nomem(out->ctx, e);
    if (rc == 0) {
        memset(ds.bits, 0, sizeof *ds.bits * (n ? n : 1));
        rc = qr_sql_table_matches(s, p, &st, t, out->ctx, mark, &ds, e);
    }
    if (rc == 0 && ds.rows)
        rc = apply(t, &ds, e);
    for (uint32_t i = 0; ds.bits && i < n; i++)
        qr_qfree(out->ctx, ds.bits[i]);
    qr_qfree(out->ctx, ds.bits);
    qr_table_close(t);
    qr_sqldb_writer_end(db, canon);
    if (rc == 0)
        snprintf(out->tag, sizeof out->tag, "DELETE %llu", (unsigned long long)ds.rows);
    return rc;
}
