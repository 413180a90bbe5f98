/* rows.c - rows from SQL into a table's segments and one commit (rows.h). */
#include "sql/rows.h"

#include "index/deletes.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index/deletes.h"
#include "index/invindex.h"
#include "sql/db.h"
#include "sql/live.h"

#define LINES_FLUSH_BYTES (64u << 20) /* a batch's line bytes before it is written */

static int rows_init(qr_rowwriter *w, const qr_tabdef *def, uint32_t seg_rows, qr_qctx *ctx,
                     qr_err *e)
{
    if (qr_ndjson_init(&w->nj, def, e) != 0)
        return -1;
    if (qr_batch_init(&w->b, def, seg_rows ? seg_rows : QR_ROWS_SEGMENT_ROWS, e) != 0) {
        qr_ndjson_free(&w->nj);
        return -1;
    }
    qr_arena_init(&w->lines, 64 << 10, 0);
    qr_arena_set_ctx(&w->lines, ctx);
    w->line_bytes = LINES_FLUSH_BYTES;
    qr_seg_opts_default(&w->seg);
    return 0;
}

/* Table name opened for writing, with its writer slot (held: the caller
 * has it already; else waited for up to wait_ms, 0: as long as it takes).
 * NULL with e set (and the slot given back). */
static qr_table *open_direct(qr_sql_db *db, const char *name, int held, uint32_t wait_ms, qr_err *e)
{
    if (!held && !wait_ms && qr_sqldb_writer_begin(db, name, e) != 0)
        return NULL;
    if (!held && wait_ms) {
        int r = qr_sqldb_writer_try(db, name, wait_ms, e);
        if (r < 0)
            return NULL;
        if (r > 0) {
            qr_errf(e, QR_E_LOCKED,
                    "table %s: another writer (a transaction block or a COPY) has held it for "
                    "%u ms; retry",
                    name, wait_ms);
            return NULL;
        }
    }
    qr_table *t = qr_table_open(qr_sql_db_dir(db), name, QR_TABLE_WRITE | QR_TABLE_CREATE, e);
    if (!t)
        qr_sqldb_writer_end(db, name);
    return t;
}

static int begin(qr_rowwriter *w, qr_sql_db *db, const char *name, uint32_t seg_rows, int logged,
                 int held, uint32_t wait_ms, qr_qctx *ctx, qr_err *e)
{
    memset(w, 0, sizeof *w);
    w->db = db;
    w->wait_ms = wait_ms;
    w->own = 1;
    qr_buf_init(&w->rec);
    if (logged)
        w->t = qr_table_open(qr_sql_db_dir(db), name, QR_TABLE_READ, e);
    else
        w->t = open_direct(db, name, held, wait_ms, e);
    w->slot = w->direct = !logged;
    if (w->t && rows_init(w, w->t->def, seg_rows, ctx, e) == 0)
        return 0;
    if (w->t && w->slot)
        qr_sqldb_writer_end(db, name);
    qr_table_close(w->t);
    w->t = NULL;
    return -1;
}

int qr_rows_begin(qr_rowwriter *w, qr_sql_db *db, const char *name, uint32_t seg_rows, qr_qctx *ctx,
                  qr_err *e)
{
    return begin(w, db, name, seg_rows, qr_sqldb_live(db) != NULL, 0, 0, ctx, e);
}

int qr_rows_begin_waiting(qr_rowwriter *w, qr_sql_db *db, const char *name, uint32_t wait_ms,
                          qr_err *e)
{
    return begin(w, db, name, 0, qr_sqldb_live(db) != NULL, 0, wait_ms, NULL, e);
}

int qr_rows_begin_direct(qr_rowwriter *w, qr_sql_db *db, const char *name, qr_err *e)
{
    return begin(w, db, name, 0, 0, 0, 0, NULL, e);
}

int qr_rows_begin_held(qr_rowwriter *w, qr_sql_db *db, const char *name, qr_err *e)
{
    return begin(w, db, name, 0, 0, 1, 0, NULL, e);
}

/* A logged writer turns direct: the slot and the LOCK now, and the
 * definition its rows were parsed with must still be the table's. */
static int go_direct(qr_rowwriter *w, qr_err *e)
{
    if (w->direct)
        return 0;
    qr_table *t = open_direct(w->db, w->t->name, 0, w->wait_ms, e);
    if (!t)
        return -1;
    if (!qr_tabdef_equal(t->def, w->t->def)) {
        qr_errf(e, "40001", "table %s: its definition changed during the statement; retry it",
                t->name);
        qr_table_close(t);
        qr_sqldb_writer_end(w->db, w->t->name);
        return -1;
    }
    /* the batch and parser keep pointing at the old definition: equal */
    w->old_t = w->t;
    w->t = t;
    w->slot = w->direct = 1;
    qr_buf_free(&w->rec);
    return 0;
}

static void end(qr_rowwriter *w)
{
    qr_arena_free(&w->lines);
    qr_batch_free(&w->b);
    qr_ndjson_free(&w->nj);
    if (w->own) {
        char name[128];
        snprintf(name, sizeof name, "%s", w->t->name);
        qr_table_close(w->t);
        qr_table_close(w->old_t);
        if (w->slot)
            qr_sqldb_writer_end(w->db, name);
    }
    qr_buf_free(&w->rec);
    free(w->segs);
    w->t = NULL;
}

/* Write the batch as a segment (nothing for an empty one). */
static int flush(qr_rowwriter *w, qr_err *e)
{
    if (w->b.nrows == 0)
        return 0;
    if (go_direct(w, e) != 0)
        return -1;
    if (w->nsegs == w->capsegs) {
        uint32_t nc = w->capsegs ? w->capsegs * 2 : 8;
        qr_seg_entry *ns = realloc(w->segs, sizeof *ns * nc);
        if (!ns)
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        w->segs = ns;
        w->capsegs = nc;
    }
    uint64_t id = qr_table_reserve_ids(w->t, 1);
    char path[PATH_MAX];
    qr_table_seg_path(w->t, id, path, sizeof path);
    qr_seg_summary sum;
    if (qr_segment_build(path, &w->b, &w->seg, &sum, e) != 0)
        return -1;
    w->segs[w->nsegs++] = (qr_seg_entry){id, sum.rows, sum.min_ts, sum.max_ts, sum.file_bytes, 0, 0};
    qr_batch_clear(&w->b);
    qr_arena_reset(&w->lines);
    return 0;
}

int qr_rows_flush(qr_rowwriter *w, qr_err *e) { return w->b.nrows ? flush(w, e) : 0; }

int qr_rows_add(qr_rowwriter *w, const char *line, size_t n, qr_err *e)
{
    if ((w->b.nrows == w->b.cap || w->lines.used > w->line_bytes) && flush(w, e) != 0)
        return -1;
    char *copy = qr_arena_memdup(&w->lines, line, n ? n : 1);
    if (!copy)
        return qr_errf(e, QR_E_NOMEM, "out of memory holding rows (memory_limit)");
    if (!w->direct) {
        qr_live_put_row(&w->rec, line, n);
        if (w->rec.oom)
            return qr_errf(e, QR_E_NOMEM, "out of memory holding rows");
    }
    int rc = qr_ndjson_parse(&w->nj, &w->b, copy, n, e);
    if (rc == 1)
        return qr_errf(e, QR_E_INTERNAL, "an empty row");
    if (rc < 0) {
        /* "byte N: column C: why" is about the line this module built */
        if (!strncmp(e->msg, "byte ", 5)) {
            const char *c = strstr(e->msg, ": ");
            if (c)
                memmove(e->msg, c + 2, strlen(c + 2) + 1);
        }
        return -1;
    }
    w->rows++;
    return 0;
}

static void remove_segments(qr_rowwriter *w)
{
    char path[PATH_MAX];
    for (uint32_t i = 0; i < w->nsegs; i++) {
        qr_table_seg_path(w->t, w->segs[i].id, path, sizeof path);
        unlink(path);
    }
}

int qr_rows_commit(qr_rowwriter *w, uint64_t *rows, qr_err *e)
{
    if (!w->direct) { /* every row in the record: into the log */
        int rc = w->rows ? qr_live_append(w->db, w->t->name, &w->rec, &w->b, e) : 0;
        *rows = rc == 0 ? w->rows : 0;
        end(w);
        return rc;
    }
    int rc = flush(w, e);
    if (rc == 0 && w->nsegs)
        rc = qr_table_commit(w->t, w->segs, w->nsegs, e);
    if (rc != 0)
        remove_segments(w);
    *rows = rc == 0 ? w->rows : 0;
    end(w);
    return rc;
}

int qr_rows_commit_wal(qr_rowwriter *w, uint64_t wal_seq, uint64_t *rows, qr_err *e)
{
    int rc = w->direct ? flush(w, e) : qr_errf(e, QR_E_INTERNAL, "a logged writer's wal commit");
    if (rc == 0)
        rc = qr_table_commit_wal(w->t, w->segs, w->nsegs, wal_seq, e);
    if (rc != 0)
        remove_segments(w);
    *rows = rc == 0 ? w->rows : 0;
    end(w);
    return rc;
}

void qr_rows_abort(qr_rowwriter *w)
{
    if (!w->t)
        return;
    remove_segments(w);
    end(w);
}

static int find_name(qr_sql_db *db, const char *name, char *canon, size_t cap)
{
    const qr_tabdef *d = qr_catalog_find(qr_sqldb_catalog(db), name);
    if (d)
        snprintf(canon, cap, "%s", d->name);
    return d != NULL;
}

int qr_rows_table(qr_sql_db *db, const char *name, char *canon, size_t cap)
{
    qr_sqldb_lock(db, 0);
    int found = find_name(db, name, canon, cap);
    qr_sqldb_unlock(db);
    if (found)
        return 1;
    qr_sqldb_lock(db, 1);
    found = qr_sqldb_reload(db, NULL) == 0 && find_name(db, name, canon, cap);
    qr_sqldb_unlock(db);
    return found;
}

int qr_rows_create_table(qr_sql_db *db, const qr_tabdef *def, int *created, char *canon, size_t cap,
                         qr_err *e)
{
    *created = 0;
    qr_sqldb_lock(db, 1);
    int rc = qr_sqldb_reload(db, e);
    if (rc == 0 && !find_name(db, def->name, canon, cap)) {
        rc = qr_catalog_create_table(qr_sql_db_dir(db), def, created, e);
        if (rc == 0 && *created) {
            qr_sqldb_forget_table(db, def->name); /* a table of that name dropped elsewhere */
            rc = qr_sqldb_reload(db, e);
        }
        if (rc == 0 && !find_name(db, def->name, canon, cap))
            rc = qr_errf(e, QR_E_INTERNAL, "table %s: not in the catalog after its creation",
                         def->name);
    }
    qr_sqldb_unlock(db);
    return rc;
}
