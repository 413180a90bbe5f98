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
 * How: the table's live rows, in table order, are cut into pieces of
 * segment_rows rows (default 1,048,576; the option `segment_rows N`, 1024
 * .. 16,777,216; a piece ends inside a segment when it fills there), and
 * each piece is written by qr_segment_merge (index/segmerge.c): its
 * sources' column blocks decoded straight into a batch, sorted by the sort
 * column as every segment is, each index merged from the sources' postings
 * (no text, no tokenizing): the bytes a build of the same rows writes. The
 * pieces are written on the database's pool (each thread takes the next
 * piece) and replace the old segments in one manifest commit. Index-wide
 * statistics (row count, lengths, document frequencies) are sums over the
 * rows, so BM25 scores do not change; rows that tie keep table order
 * within a segment, which the merge may change (equal timestamps from
 * different input segments keep their input order, rows of different
 * times are sorted).
 *
 * Locks, as CREATE INDEX's rewrite: the table's writer slot and LOCK for
 * the whole statement (ingest into this table waits, 55P03 for another
 * process), the catalog lock only for the swap, so queries keep reading
 * the old segments until the commit; a failure leaves the table as it was
 * and removes what was written. Memory: a batch of one piece per thread
 * (at most 1 GiB of values each: a piece is cut early past that, by each
 * segment's bytes per row), not charged to the statement's memory_limit (a merge of large segments
 * needs more than a query's default). Other options of PostgreSQL's VACUUM (FULL, FREEZE, VERBOSE,
 * ANALYZE) are accepted and change nothing: there is no dead row to reclaim. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "index/catalog.h"
#include "index/deletes.h"
#include "index/invindex.h"
#include "index/table.h"
#include "util/pool.h"
#include "sql/db.h"
#include "sql/live.h"
#include "sql/rows.h"
#include "sql/stmt.h"

#define VACUUM_SEGMENT_ROWS (1u << 20)
#define VACUUM_MIN_ROWS     1024u
#define VACUUM_MAX_ROWS     (1u << 24)
#define VACUUM_BYTES        ((uint64_t)1 << 30) /* value bytes of one merged segment */

/* The plan: the table's live rows in table order, cut into pieces of
 * seg_rows rows (or VACUUM_BYTES of values, estimated per segment), each
 * piece a run of source row ranges; pieces are written on the pool's
 * threads, each taking the next unwritten one. */
typedef struct piece {
    uint32_t first, n; /* its sources in plan.src */
} piece;

typedef struct plan {
    const qr_tabdef *def;
    const char *dir;
    qr_merge_src *src;
    uint32_t nsrc, capsrc;
    piece *pieces;
    uint32_t npieces, cappieces;
    uint64_t first_id;
    qr_seg_entry *made; /* per piece (rows 0: nothing written) */
    qr_qctx *ctx;
    atomic_uint next;
    atomic_int failed;
    pthread_mutex_t mu;
    qr_err err; /* the first failure */
} plan;

static int add_src(plan *p, qr_segment *sg, uint32_t lo, uint32_t hi, qr_err *e)
{
    if (p->nsrc == p->capsrc) {
        uint32_t nc = p->capsrc ? p->capsrc * 2 : 64;
        qr_merge_src *ns = realloc(p->src, sizeof *ns * nc);
        if (!ns)
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        p->src = ns;
        p->capsrc = nc;
    }
    p->src[p->nsrc++] = (qr_merge_src){sg, lo, hi};
    return 0;
}

static int add_piece(plan *p, uint32_t first, qr_err *e)
{
    if (p->npieces == p->cappieces) {
        uint32_t nc = p->cappieces ? p->cappieces * 2 : 16;
        piece *np = realloc(p->pieces, sizeof *np * nc);
        if (!np)
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        p->pieces = np;
        p->cappieces = nc;
    }
    p->pieces[p->npieces++] = (piece){first, p->nsrc - first};
    return 0;
}

/* Cut segs (open, in table order) into pieces of at most seg_rows live
 * rows: a piece ends inside a segment when it fills there. */
static int cut(plan *p, qr_segment **segs, uint32_t n, uint32_t seg_rows, qr_err *e)
{
    uint64_t rows = 0, bytes = 0; /* in the open piece */
    uint32_t open = 0;            /* its first source */
    for (uint32_t i = 0; i < n; i++) {
        qr_segment *sg = segs[i];
        uint64_t raw = 0;
        for (uint32_t c = 0; c < sg->ncols; c++)
            raw += sg->cols[c].raw_bytes;
        uint64_t per = sg->rows ? raw / sg->rows + 1 : 1; /* value bytes per row */
        uint32_t r = 0;
        while (r < sg->rows) {
            uint64_t room = seg_rows - rows, broom = (VACUUM_BYTES - bytes) / per;
            if (broom < room)
                room = broom ? broom : 1;
            /* the row where the piece has `room` more live rows */
            uint32_t end = r;
            uint64_t live = 0;
            if (!sg->deleted) {
                uint64_t left = sg->rows - r;
                live = left < room ? left : room;
                end = r + (uint32_t)live;
            } else {
                while (end < sg->rows && live < room)
                    live += !qr_seg_is_deleted(sg, end++);
            }
            if (add_src(p, sg, r, end, e) != 0)
                return -1;
            rows += live;
            bytes += live * per;
            r = end;
            if (rows >= seg_rows || bytes + per > VACUUM_BYTES) { /* the piece is full */
                if (add_piece(p, open, e) != 0)
                    return -1;
                open = p->nsrc;
                rows = bytes = 0;
            }
        }
    }
    return p->nsrc > open ? add_piece(p, open, e) : 0;
}

static void write_pieces(void *arg, int slot)
{
    (void)slot;
    plan *p = arg;
    qr_seg_opts o;
    qr_seg_opts_default(&o);
    for (;;) {
        uint32_t k = atomic_fetch_add(&p->next, 1);
        if (k >= p->npieces || atomic_load(&p->failed))
            return;
        char path[PATH_MAX];
        qr_seg_path_in(p->dir, p->first_id + k, path, sizeof path);
        qr_seg_summary sum;
        qr_err e;
        const piece *pc = &p->pieces[k];
        if (qr_segment_merge(path, p->def, p->src + pc->first, pc->n, INT64_MIN, p->ctx, &o, &sum,
                             &e) != 0) {
            pthread_mutex_lock(&p->mu);
            if (!atomic_load(&p->failed))
                p->err = e;
            atomic_store(&p->failed, 1);
            pthread_mutex_unlock(&p->mu);
            return;
        }
        p->made[k] =
            (qr_seg_entry){p->first_id + k, sum.rows, sum.min_ts, sum.max_ts, sum.file_bytes, 0, 0};
    }
}

/* Merge table `name` (the catalog's spelling) into segments of seg_rows. */
static int vacuum_table(qr_sql_db *db, const char *name, uint32_t seg_rows, qr_qctx *ctx, qr_err *e)
{
    /* rows waiting in the table's log are merged too */
    if (qr_live_flush(db, name, e) != 0 || qr_sqldb_writer_begin(db, name, e) != 0)
        return -1;
    qr_table *t = qr_table_open(qr_sql_db_dir(db), name, QR_TABLE_WRITE | QR_TABLE_CREATE, e);
    if (!t) {
        qr_sqldb_writer_end(db, name);
        return -1;
    }
    int rc = 0, deleted = 0;
    uint32_t n = t->man.nsegs;
    for (uint32_t i = 0; i < n; i++)
        deleted |= t->man.segs[i].deleted != 0;
    if (n > 1 || deleted) {
        qr_segment **segs = calloc(n, sizeof *segs);
        plan p = {.def = t->def, .dir = t->dir, .ctx = ctx};
        pthread_mutex_init(&p.mu, NULL);
        rc = segs ? 0 : qr_errf(e, QR_E_NOMEM, "out of memory");
        for (uint32_t i = 0; rc == 0 && i < n; i++)
            if (!(segs[i] = qr_table_open_segment(t->dir, &t->man.segs[i], e)))
                rc = -1;
        if (rc == 0)
            rc = cut(&p, segs, n, seg_rows, e);
        if (rc == 0 && !(p.made = calloc(p.npieces ? p.npieces : 1, sizeof *p.made)))
            rc = qr_errf(e, QR_E_NOMEM, "out of memory");
        if (rc == 0) {
            p.first_id = qr_table_reserve_ids(t, p.npieces);
            int k = qr_sql_db_threads(db);
            qr_pool_run(qr_sql_db_pool(db), k < 1 ? 1 : k, write_pieces, &p);
            if (atomic_load(&p.failed)) {
                *e = p.err;
                rc = -1;
            }
        }
        uint32_t nm = 0; /* a piece whose rows were all deleted writes nothing */
        for (uint32_t k = 0; rc == 0 && k < p.npieces; k++)
            if (p.made[k].rows)
                p.made[nm++] = p.made[k];
        if (rc == 0) { /* the new segments take the old ones' place, under the catalog
                        * lock: statements of this process see the old table or the new */
            qr_sqldb_lock(db, 1);
            rc = qr_table_replace(t, p.made, nm, e);
            int rl = qr_sqldb_reload(db, rc == 0 ? e : NULL);
            rc = rc == 0 ? rl : rc;
            qr_sqldb_forget_table(db, t->name);
            qr_sqldb_unlock(db);
        }
        if (rc != 0 && p.made) /* remove what was written */
            for (uint32_t k = 0; k < p.npieces; k++) {
                char path[PATH_MAX];
                qr_table_seg_path(t, p.first_id + k, path, sizeof path);
                unlink(path);
            }
        for (uint32_t i = 0; segs && i < n; i++)
            qr_seg_close(segs[i]);
        free(segs);
        free(p.src);
        free(p.pieces);
        free(p.made);
        pthread_mutex_destroy(&p.mu);
    }
    qr_table_close(t);
    qr_sqldb_writer_end(db, name);
    return rc;
}

/* segment_rows N (Quarry's); PostgreSQL's own options are accepted. */
static int vacuum_options(const qr_sqlparse *p, const PgQuery__VacuumStmt *v, uint32_t *seg_rows,
                          qr_err *e)
{
    static const char *pg[] = {
        "full",          "freeze",   "verbose",  "analyze",       "skip_locked",
        "index_cleanup", "truncate", "parallel", "process_toast", "disable_page_skipping"};
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
    char(*names)[128] = NULL;
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
        const PgQuery__RangeVar *rv = rn->node_case == PG_QUERY__NODE__NODE_VACUUM_RELATION
                                          ? rn->vacuum_relation->relation
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
    /* the merged segments carry every index of the definition, those still
     * being built too: the build then only marks them built */
    for (size_t i = 0; rc == 0 && i < n; i++)
        if ((rc = vacuum_table(db, names[i], seg_rows, out->ctx, e)) == 0)
            rc = qr_sql_build_indexes(s, names[i], out->ctx, e);
    free(names);
    if (rc == 0)
        snprintf(out->tag, sizeof out->tag, "VACUUM");
    return rc;
}
