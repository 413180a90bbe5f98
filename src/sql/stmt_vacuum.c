/* stmt_vacuum.c - VACUUM [ ( option [, ...] ) ] [ table [, ...] ]: merge a
 * table's segments into few large ones (`quarry optimize` runs it).
 *
 * Why: ingest writes a segment per ~190k rows, so 100M rows are 525
 * segments, and every query pays a fixed cost per segment (a term lookup
 * per word, a scorer, a task); ids that recur across segments (a trace
 * spans a few seconds) are stored once in each segment's term dictionary.
 * Merged segments of ~1M rows cost a fifth as many per-segment steps, and
 * the dictionaries shrink.
 *
 * How: every row is read back in table order (segment by segment, row by
 * row, exactly as `quarry cat` prints it) and written again through the row
 * writer (rows.h) in batches of segment_rows rows (default 1,048,576; the
 * option `segment_rows N`, 1024 .. 16,777,216), each sorted by the sort
 * column as every segment is, with every index built; the new segments
 * replace the old ones in one manifest commit. Index-wide statistics (row
 * count, lengths, document frequencies) are sums over the rows, so BM25
 * scores do not change; rows that tie keep table order within a segment,
 * which the merge may change (equal timestamps from different input
 * segments keep their input order, rows of different times are sorted).
 *
 * Locks, as CREATE INDEX's rewrite: the table's writer slot and LOCK for
 * the whole statement (ingest into this table waits, 55P03 for another
 * process), the catalog lock only for the swap, so queries keep reading
 * the old segments until the commit; a failure leaves the table as it was
 * and removes what was written. Memory: one batch of segment_rows rows and
 * their lines (at most 1 GiB of line bytes: a batch is written early past
 * that), not charged to the statement's memory_limit (a merge of large
 * segments needs more than a query's default). Other options of
 * PostgreSQL's VACUUM (FULL, FREEZE, VERBOSE, ANALYZE) are accepted and
 * change nothing: there is no dead row to reclaim. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "index/catalog.h"
#include "index/table.h"
#include "sql/db.h"
#include "sql/rows.h"
#include "sql/stmt.h"

#define VACUUM_SEGMENT_ROWS (1u << 20)
#define VACUUM_MIN_ROWS     1024u
#define VACUUM_MAX_ROWS     (1u << 24)
#define VACUUM_LINE_BYTES   ((size_t)1 << 30)

/* Every row of t's segments, in table order, into w (begun on t). */
static int merge_rows(qr_table *t, qr_rowwriter *w, qr_qctx *ctx, qr_err *e)
{
    const qr_tabdef *d = t->def;
    qr_colreader **rd = calloc(d->ncols ? d->ncols : 1, sizeof *rd);
    qr_buf line;
    qr_buf_init(&line);
    int rc = rd ? 0 : qr_errf(e, QR_E_NOMEM, "out of memory");
    for (uint32_t i = 0; rc == 0 && i < t->man.nsegs; i++) {
        char path[PATH_MAX];
        qr_table_seg_path(t, t->man.segs[i].id, path, sizeof path);
        qr_segment *sg = qr_seg_open(path, e);
        if (!sg || qr_row_readers_open(sg, d, rd, e) != 0) {
            qr_seg_close(sg);
            rc = -1;
        }
        for (uint32_t r = 0; rc == 0 && r < sg->rows; r++) {
            qr_buf_clear(&line);
            rc = qr_row_json(d, rd, r, &line, e);
            if (rc == 0 && line.oom)
                rc = qr_errf(e, QR_E_NOMEM, "out of memory");
            if (rc == 0) /* the line without its '\n' */
                rc = qr_rows_add(w, (const char *)line.p, line.len - 1, e);
            if (rc == 0 && ctx && (r & 65535) == 65535)
                rc = qr_qctx_check(ctx, e); /* cancel and statement_timeout */
        }
        if (sg) {
            qr_row_readers_close(d, rd);
            qr_seg_close(sg);
        }
        if (rc != 0)
            qr_err_prefix(e, "merging segment %s: ", path);
    }
    qr_buf_free(&line);
    free(rd);
    return rc;
}

/* Merge table `name` (the catalog's spelling); *before / *after get its
 * segment counts. */
static int vacuum_table(qr_sql_db *db, const char *name, uint32_t seg_rows, qr_qctx *ctx,
                        uint32_t *before, uint32_t *after, qr_err *e)
{
    if (qr_sqldb_writer_begin(db, name, e) != 0)
        return -1;
    qr_table *t = qr_table_open(qr_sql_db_dir(db), name, QR_TABLE_WRITE | QR_TABLE_CREATE, e);
    if (!t) {
        qr_sqldb_writer_end(db, name);
        return -1;
    }
    *before = *after = t->man.nsegs;
    int rc = 0;
    if (t->man.nsegs > 1) {
        qr_rowwriter w;
        rc = qr_rows_begin_sized(&w, t, t->def, seg_rows, VACUUM_LINE_BYTES, NULL, e);
        if (rc == 0)
            rc = merge_rows(t, &w, ctx, e);
        uint64_t rows = 0;
        qr_sqldb_lock(db, 1);
        if (rc == 0)
            rc = qr_rows_replace(&w, &rows, e);
        else if (w.t)
            qr_rows_abort(&w);
        if (rc == 0)
            *after = t->man.nsegs;
        int rl = qr_sqldb_reload(db, rc == 0 ? e : NULL);
        rc = rc == 0 ? rl : rc;
        qr_sqldb_forget_table(db, name);
        qr_sqldb_unlock(db);
    }
    qr_table_close(t);
    qr_sqldb_writer_end(db, name);
    return rc;
}

/* segment_rows N (Quarry's); PostgreSQL's own options are accepted. */
static int vacuum_options(const qr_sqlparse *p, const PgQuery__VacuumStmt *v, uint32_t *seg_rows,
                          qr_err *e)
{
    static const char *pg[] = {"full",         "freeze",     "verbose", "analyze",
                               "skip_locked",  "index_cleanup", "truncate", "parallel",
                               "process_toast", "disable_page_skipping"};
    for (size_t i = 0; i < v->n_options; i++) {
        const PgQuery__Node *n = v->options[i];
        if (n->node_case != PG_QUERY__NODE__NODE_DEF_ELEM)
            continue;
        const PgQuery__DefElem *de = n->def_elem;
        if (!strcasecmp(de->defname, "segment_rows")) {
            long long k = -1;
            if (de->arg && de->arg->node_case == PG_QUERY__NODE__NODE_INTEGER)
                k = de->arg->integer->ival;
            if (k < VACUUM_MIN_ROWS || k > VACUUM_MAX_ROWS) {
                qr_errf(e, QR_E_ARGS,
                        "VACUUM option segment_rows takes a number of rows from %u to %u",
                        VACUUM_MIN_ROWS, VACUUM_MAX_ROWS);
                return qr_sqlp_at(p, de->location, e);
            }
            *seg_rows = (uint32_t)k;
            continue;
        }
        size_t j = 0;
        while (j < sizeof pg / sizeof *pg && strcasecmp(de->defname, pg[j]))
            j++;
        if (j == sizeof pg / sizeof *pg) {
            qr_errf(e, QR_E_SYNTAX, "unrecognized VACUUM option \"%s\"", de->defname);
            return qr_sqlp_at(p, de->location, e);
        }
    }
    return 0;
}

int qr_sql_stmt_vacuum(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__VacuumStmt *v,
                       qr_result *out, qr_err *e)
{
    qr_sql_db *db = s->db;
    uint32_t seg_rows = VACUUM_SEGMENT_ROWS;
    if (vacuum_options(p, v, &seg_rows, e) != 0)
        return -1;
    /* the tables: those named, or every table of the catalog */
    char (*names)[128] = NULL;
    size_t n = 0;
    int rc = 0;
    qr_sqldb_lock(db, 0);
    const qr_catalog *cat = qr_sqldb_catalog(db);
    size_t cap = v->n_rels ? v->n_rels : cat->ntables;
    names = calloc(cap ? cap : 1, sizeof *names);
    if (!names)
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < v->n_rels; i++) {
        const PgQuery__Node *rn = v->rels[i];
        const PgQuery__RangeVar *rv =
            rn->node_case == PG_QUERY__NODE__NODE_VACUUM_RELATION ? rn->vacuum_relation->relation
                                                                  : NULL;
        if (!rv) {
            rc = qr_errf(e, QR_E_SYNTAX, "VACUUM needs table names");
            break;
        }
        if (qr_sql_relname(p, rv, e) != 0) {
            rc = -1;
            break;
        }
        const qr_tabdef *d = qr_catalog_find(cat, rv->relname);
        if (!d) {
            qr_errf(e, QR_E_UNDEFINED_TABLE, "relation \"%s\" does not exist", rv->relname);
            rc = qr_sqlp_at(p, rv->location, e);
            break;
        }
        snprintf(names[n++], sizeof *names, "%s", d->name);
    }
    for (size_t i = 0; rc == 0 && !v->n_rels && i < cat->ntables; i++)
        snprintf(names[n++], sizeof *names, "%s", cat->tables[i]->name);
    qr_sqldb_unlock(db);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint32_t before, after;
        rc = vacuum_table(db, names[i], seg_rows, out->ctx, &before, &after, e);
    }
    free(names);
    if (rc == 0)
        snprintf(out->tag, sizeof out->tag, "VACUUM");
    return rc;
}
