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
 * row, exactly as `quarry cat` prints it) and ingested again (the ingest
 * pipeline, below) in segments of segment_rows rows (default 1,048,576;
 * the option `segment_rows N`, 1024 .. 16,777,216), each sorted by the sort
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
 * and removes what was written. Memory: the ingest's, about threads + 1
 * units of segment_rows rows (at most 1 GiB of row text each: a unit is
 * cut early past that) and a batch per worker, not charged to the
 * statement's memory_limit (a merge of large segments needs more than a
 * query's default). Other options of
 * PostgreSQL's VACUUM (FULL, FREEZE, VERBOSE, ANALYZE) are accepted and
 * change nothing: there is no dead row to reclaim. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "index/catalog.h"
#include "index/table.h"
#include "ingest/ingest.h"
#include "sql/db.h"
#include "sql/live.h"
#include "sql/rows.h"
#include "sql/stmt.h"

#define VACUUM_SEGMENT_ROWS (1u << 20)
#define VACUUM_MIN_ROWS     1024u
#define VACUUM_MAX_ROWS     (1u << 24)
#define VACUUM_LINE_BYTES   ((size_t)1 << 30)

/* The merge is an ingest: a producer thread prints every row of the
 * table's segments, in table order, as canonical NDJSON (what `quarry cat`
 * prints, which reads back as the same row) into one end of a socket pair;
 * the ingest pipeline (ingest/ingest.h) reads the other end, cut into units
 * of segment_rows rows that its workers parse and write as segments on
 * both cores; its publish step replaces the table's segments with them. A
 * socket pair rather than a pipe: when the ingest stops early the producer
 * gets EPIPE from send(MSG_NOSIGNAL), not SIGPIPE. The end of the input
 * looks the same whether the producer finished or failed, so the publish
 * step first joins the producer and refuses on its error. */
typedef struct merge {
    qr_sql_db *db;
    qr_table *t;
    qr_qctx *ctx;
    int fd; /* the producer's end */
    pthread_t tid;
    int started, joined, rc;
    qr_buf out; /* lines not yet sent */
    qr_err err;
} merge;

static int send_all(int fd, const unsigned char *p, size_t n, qr_err *e)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return qr_errf(e, QR_E_IO, "merging: the writer stopped reading (%s)",
                           k < 0 ? strerror(errno) : "closed");
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Lines are sent a MiB at a time. */
static int take_line(void *arg, const char *line, size_t n, qr_err *e)
{
    merge *m = arg;
    qr_buf_put(&m->out, line, n);
    if (m->out.oom)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    if (m->out.len < (1u << 20))
        return 0;
    int rc = send_all(m->fd, m->out.p, m->out.len, e);
    qr_buf_clear(&m->out);
    return rc;
}

static void *produce(void *arg)
{
    merge *m = arg;
    qr_buf_init(&m->out);
    int rc = qr_rows_each(m->t, m->t->def, take_line, NULL, m, m->ctx, &m->err);
    if (rc == 0 && m->out.len)
        rc = send_all(m->fd, m->out.p, m->out.len, &m->err);
    if (rc != 0)
        qr_err_prefix(&m->err, "merging: ");
    qr_buf_free(&m->out);
    close(m->fd); /* the ingest sees the end */
    m->fd = -1;
    m->rc = rc;
    return NULL;
}

static int join_producer(merge *m, qr_err *e)
{
    if (m->started && !m->joined) {
        pthread_join(m->tid, NULL);
        m->joined = 1;
    }
    if (m->rc != 0) {
        *e = m->err;
        return -1;
    }
    return 0;
}

/* The ingest's publish step: every row came through, so the new segments
 * take the old ones' place, under the catalog lock (statements of this
 * process see the old table or the new one, never a manifest whose files
 * are being removed). */
static int publish(void *arg, qr_table *t, const qr_seg_entry *segs, uint32_t n, qr_err *e)
{
    merge *m = arg;
    if (join_producer(m, e) != 0)
        return -1;
    qr_sqldb_lock(m->db, 1);
    int rc = qr_table_replace(t, segs, n, e);
    int rl = qr_sqldb_reload(m->db, rc == 0 ? e : NULL);
    rc = rc == 0 ? rl : rc;
    qr_sqldb_forget_table(m->db, t->name);
    qr_sqldb_unlock(m->db);
    return rc;
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
    int rc = 0, sv[2], deleted = 0;
    for (uint32_t i = 0; i < t->man.nsegs; i++)
        deleted |= t->man.segs[i].deleted != 0;
    if (t->man.nsegs > 1 || deleted) { /* (deleted rows are not rewritten) */
        merge m = {.db = db, .t = t, .ctx = ctx, .fd = -1};
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            rc = qr_errf(e, QR_E_IO, "merging: socketpair: %s", strerror(errno));
        } else {
            m.fd = sv[1];
            if (pthread_create(&m.tid, NULL, produce, &m) != 0) {
                close(sv[1]);
                rc = qr_errf(e, QR_E_INTERNAL, "merging: cannot start a thread");
            } else {
                m.started = 1;
                qr_ingest_opts o;
                qr_ingest_opts_default(&o);
                o.segment_rows = seg_rows;
                o.segment_bytes = VACUUM_LINE_BYTES;
                o.max_line = VACUUM_LINE_BYTES;
                o.threads = qr_sql_db_threads(db);
                o.strict = 1; /* a line that does not read back is a fault of ours */
                o.publish = publish;
                o.publish_ctx = &m;
                qr_ingest_stats st;
                rc = qr_ingest(t, sv[0], t->name, &o, &st, e);
            }
            close(sv[0]); /* a producer still sending gets EPIPE */
            qr_err pe;
            if (join_producer(&m, &pe) != 0 && rc == 0) {
                *e = pe; /* (publish refused already; this is for clarity) */
                rc = -1;
            }
        }
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
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = vacuum_table(db, names[i], seg_rows, out->ctx, e);
    free(names);
    if (rc == 0)
        snprintf(out->tag, sizeof out->tag, "VACUUM");
    return rc;
}
