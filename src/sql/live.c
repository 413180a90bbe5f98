/* live.c - a running server's writes (live.h): each table's write-ahead
 * log and its live segments (one per record, written by the statement's
 * own thread, read by queries from the acknowledgement on: snapshots that
 * pin them), back-pressure on writers, the flusher thread that commits the
 * live segments into a table segment, and the merger thread (retention,
 * index builds and merges: merge.h). Recovery at start is recover.c's.
 *
 * Locks, in this order: the live mutex (the table list, the threads'
 * flags), then a table's mutex (its log writes, live segments, flushing);
 * neither is held while waiting for a table's writer slot, which commits
 * and merges take with a timeout (DROP holds the slot while it waits for
 * them), nor while reading the catalog. */
#include "sql/live.h"

#include <errno.h>
#include <stdatomic.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "index/catalog.h"
#include "index/table.h"
#include "index/wal.h"
#include "sql/db.h"
#include "sql/merge.h"
#include "sql/rows.h"
#include "util/fsutil.h"

#define LIVE_MAX_TABLES  256
#define FLUSH_BYTES      (32u << 20) /* live segments committed at once past this */
#define FLUSH_SEGS       64u         /* or past this many (each costs every query an open) */
#define TICK_MS          10u
#define MERGER_NICE      5 /* the merger's nice value above the server's */
#define FLUSH_ZSTD_LEVEL 1 /* live and committed-from-live segments: no dictionaries either */
/* A live segment of this many rows or more (not small to merge.h's
 * policy) is committed as it is (linked); runs of smaller ones are merged
 * to at least this many rows, so that the merger does not have to merge
 * every statement's segment again. */
#define COMMIT_LINK_ROWS QR_MERGE_BASE_ROWS

/* Live segment ids: one counter for the process, so that no two live
 * files, of any table, ever share a segment cache key (dir, id). */
static atomic_uint_fast64_t next_live_id = 1;

/* A live segment: one statement's rows, written as a segment file in
 * DATA/<table>/live/ (not fsynced: the log covers it) before they were
 * acknowledged. Queries read it until the flusher has committed it into
 * a table segment; then its file goes, once no query is about to open it. */
typedef struct lseg {
    uint64_t seq;     /* its log record */
    qr_seg_entry ent; /* ent.id names its file */
    size_t rec_bytes; /* its record's bytes */
    uint32_t pins;    /* snapshots about to open it (qr_live_snapshot) */
    int gone;         /* out of the table's list: freed at the last unpin */
    qr_tabdef *def;   /* the definition it was written with (its indexes) */
    int64_t at_ms;    /* when it was listed */
} lseg;

typedef struct ltab {
    char name[64];
    char live_dir[PATH_MAX]; /* DATA/<table>/live */
    qr_wal *wal;
    pthread_mutex_t mu; /* writes to the log, the live segments, flushing */
    pthread_cond_t cv;  /* a flush ended */
    lseg **segs;        /* the records after the manifest's wal_seq, in order */
    uint32_t nsegs, capsegs;
    size_t pending;       /* their records' bytes */
    uint64_t durable_seq; /* records <= this are durable: their segments are visible */
    int flushing;
    atomic_int dead;    /* dropped: forget everything; background work gives up */
    int merging;        /* the merger works on it (under the live mutex) */
    atomic_int mcancel; /* a merge of it gives up (dropped, or the database stops) */
    int64_t retry_ms;   /* after a failed flush: not before */
    int urgent;         /* flush at the next tick, whatever the age (qr_live_flush) */
    uint32_t fails;
    uint64_t ix_gen;   /* +1 each time qr_live_carries let an index be marked built */
    uint32_t unmerged; /* the table's segments the merger is not done with (as last counted) */
    _Atomic int64_t committed_ms; /* the flusher's last commit of rows (merge.h's idle) */
} ltab;

typedef struct qr_live qr_live;
struct qr_live {
    qr_sql_db *db;
    qr_live_opts o;
    pthread_mutex_t mu; /* tabs, stop */
    pthread_cond_t cv;  /* wakes the flusher */
    ltab *tabs[LIVE_MAX_TABLES];
    uint32_t ntabs;
    ltab *dead[LIVE_MAX_TABLES]; /* forgotten, freed at stop */
    uint32_t ndead;
    pthread_t th;          /* the flusher */
    pthread_t mth;         /* the merger */
    pthread_cond_t merged; /* a merge ended (forget waits for it) */
    pthread_cond_t mcv;    /* wakes the merger */
    atomic_int stop;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void qr_live_opts_default(qr_live_opts *o)
{
    memset(o, 0, sizeof *o);
    o->merge = 1;
    o->pending_wait_ms = QR_LIVE_WAIT_MS;
    o->refresh_ms = 1000;
    o->wal_sync = 1;
    o->max_pending = (size_t)64 << 20;
    o->max_unmerged = QR_LIVE_MAX_UNMERGED;
}

void qr_live_put_row(qr_buf *payload, const char *line, size_t n)
{
    qr_buf_put_u32(payload, (uint32_t)n);
    qr_buf_put(payload, line, n);
}

int qr_live_each_row(const unsigned char *p, size_t n,
                     int (*row)(void *arg, const char *line, size_t n, qr_err *e), void *arg,
                     qr_err *e)
{
    size_t off = 0;
    while (off < n) {
        if (n - off < 4 || qr_load_u32(p + off) > n - off - 4)
            return qr_errf(e, QR_E_CORRUPT,
                           "a logged row's length at byte %zu runs past its record", off);
        uint32_t len = qr_load_u32(p + off);
        if (row(arg, (const char *)p + off + 4, len, e) != 0)
            return -1;
        off += 4 + (size_t)len;
    }
    return 0;
}

/* ---- live segments ---- */

static void lseg_path(const ltab *t, const lseg *s, char *buf, size_t n)
{
    qr_seg_path_in(t->live_dir, s->ent.id, buf, n);
}

/* s leaves t's list (t->mu held): its file goes now, or at its last unpin. */
static void lseg_drop(ltab *t, lseg *s)
{
    s->gone = 1;
    if (s->pins)
        return;
    char path[PATH_MAX];
    lseg_path(t, s, path, sizeof path);
    unlink(path);
    qr_tabdef_free(s->def);
    free(s);
}

void qr_live_clean(const char *table_dir)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/live", table_dir);
    qr_unlink_all_in(dir);
}

/* Take table name's writer slot, waiting while *dead stays 0: 0 taken, 1
 * gave up (the table was dropped), -1 with e set. */
static int slot_unless(qr_sql_db *db, const char *name, atomic_int *dead, qr_err *e)
{
    for (;;) {
        int r = qr_sqldb_writer_try(db, name, 50, e);
        if (r <= 0)
            return r;
        if (atomic_load(dead))
            return 1;
    }
}

/* Segments of manifest m that merges may still take (not final, merge.h). */
static uint32_t unmerged_in(const qr_manifest *m)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nsegs; i++)
        n += m->segs[i].rows < QR_MERGE_FINAL_ROWS;
    return n;
}

/* unmerged_in of table name's manifest as it is now; UINT32_MAX when it
 * cannot be read. */
static uint32_t count_unmerged(qr_sql_db *db, const char *name)
{
    qr_err e;
    qr_table *tb = qr_table_open(qr_sql_db_dir(db), name, QR_TABLE_READ, &e);
    uint32_t n = tb ? unmerged_in(&tb->man) : UINT32_MAX;
    qr_table_close(tb);
    return n;
}

/* Live segments s[0..n) of t as segment files of table tb, under new ids,
 * their entries appended to out (*nout): a run of small ones merged into
 * one (qr_segment_merge: columns decoded, postings merged, indexes the
 * table gained since built from the values), a big one linked as it is
 * (after its fsync). 0, or -1 with e set (the files made so far are
 * out[0..*nout), for the caller to remove). */
static int commit_files(ltab *t, qr_table *tb, lseg *const *s, uint32_t n, qr_seg_entry *out,
                        uint32_t *nout, qr_err *e)
{
    char from[PATH_MAX], to[PATH_MAX];
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        uint64_t rows = s[i]->ent.rows;
        while (rows < COMMIT_LINK_ROWS && j < n && s[j]->ent.rows < COMMIT_LINK_ROWS)
            rows += s[j++]->ent.rows;
        uint64_t id = qr_table_reserve_ids(tb, 1);
        qr_table_seg_path(tb, id, to, sizeof to);
        if (j == i + 1) { /* alone: as it is */
            lseg_path(t, s[i], from, sizeof from);
            if (qr_fsync_link(from, to, e) != 0)
                return -1;
            out[*nout] = s[i]->ent;
            out[(*nout)++].id = id;
            i = j;
            continue;
        }
        qr_merge_src *src = calloc(j - i, sizeof *src);
        int rc = src ? 0 : qr_errf(e, QR_E_NOMEM, "out of memory");
        for (uint32_t k = i; rc == 0 && k < j; k++) {
            qr_merge_src *m = &src[k - i];
            lseg_path(t, s[k], from, sizeof from);
            if (!(m->seg = qr_seg_open(from, e)))
                rc = -1;
            else if (m->seg->rows != s[k]->ent.rows)
                rc = qr_errf(e, QR_E_CORRUPT, "%s: %llu rows, written with %llu", from,
                             (unsigned long long)m->seg->rows, (unsigned long long)s[k]->ent.rows);
            else
                m->hi = (uint32_t)m->seg->rows;
        }
        qr_seg_summary sum = {0};
        if (rc == 0) {
            qr_seg_opts o;
            qr_seg_opts_default(&o);
            /* small, and soon merged again at the table's level with dictionaries */
            o.zstd_level = FLUSH_ZSTD_LEVEL;
            o.zdict_bytes = 0;
            rc = qr_segment_merge(to, tb->def, src, j - i, INT64_MIN, NULL, &o, &sum, e);
        }
        for (uint32_t k = 0; src && k < j - i; k++)
            qr_seg_close(src[k].seg);
        free(src);
        if (rc != 0)
            return -1;
        if (sum.rows)
            out[(*nout)++] =
                (qr_seg_entry){id, sum.rows, sum.min_ts, sum.max_ts, sum.file_bytes, 0, 0};
        i = j;
    }
    return 0;
}

/* Commit live segments s[0..n) of t into table segments (commit_files),
 * with the manifest's wal_seq = seq, the last record among them. 0, or -1
 * with e set (nothing committed, no file left). */
static int commit_live(qr_live *l, ltab *t, lseg *const *s, uint32_t n, uint64_t seq,
                       uint32_t *unmerged, qr_err *e)
{
    int r = slot_unless(l->db, t->name, &t->dead, e);
    if (r != 0)
        return r < 0 ? -1 : qr_errf(e, QR_E_UNDEFINED_TABLE, "table %s: dropped", t->name);
    qr_table *tb = qr_table_open(qr_sql_db_dir(l->db), t->name, QR_TABLE_WRITE, e);
    qr_seg_entry *out = tb ? malloc(sizeof *out * n) : NULL;
    int rc = !tb ? -1 : out ? 0 : qr_errf(e, QR_E_NOMEM, "out of memory");
    uint32_t nout = 0;
    if (rc == 0)
        rc = commit_files(t, tb, s, n, out, &nout, e);
    if (rc == 0 && (rc = qr_table_commit_wal(tb, out, nout, seq, e)) == 0)
        *unmerged = unmerged_in(&tb->man);
    if (rc != 0) {
        char path[PATH_MAX];
        for (uint32_t i = 0; i < nout; i++) {
            qr_table_seg_path(tb, out[i].id, path, sizeof path);
            unlink(path);
        }
        qr_err_prefix(e, "table %s: committing live segments: ", t->name);
    }
    free(out);
    qr_table_close(tb);
    qr_sqldb_writer_end(l->db, t->name);
    return rc;
}

/* Wake the flusher now rather than at its next tick. Signalled without its
 * mutex, so callable holding a table's: a wakeup lost to the race costs at
 * most one tick (TICK_MS). */
static void wake_flusher(qr_live *l) { pthread_cond_signal(&l->cv); }

/* ---- tables ---- */

static ltab *find_tab(qr_live *l, const char *name)
{
    for (uint32_t i = 0; i < l->ntabs; i++)
        if (!strcmp(l->tabs[i]->name, name))
            return l->tabs[i];
    return NULL;
}

/* Table name's live state if it has one (taking the live mutex). */
static ltab *lookup(qr_live *l, const char *name)
{
    pthread_mutex_lock(&l->mu);
    ltab *t = find_tab(l, name);
    pthread_mutex_unlock(&l->mu);
    return t;
}

/* Forget t's live segments (t->mu held; their rows are in the log, or the
 * table went). */
static void drop_segs(ltab *t)
{
    for (uint32_t i = 0; i < t->nsegs; i++)
        lseg_drop(t, t->segs[i]);
    t->nsegs = 0;
    t->pending = 0;
}

static void tab_free(ltab *t)
{
    qr_wal_close(t->wal);
    drop_segs(t);
    free(t->segs);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    free(t);
}

/* Table name's live state, its log opened (after the manifest's wal_seq,
 * which recovery brought up to the log's end) and its live/ directory
 * emptied. The log is opened holding the table's writer slot (waiting at
 * most wait_ms; UINT32_MAX: as long as it takes), so that a DROP, which
 * holds it, cannot remove the directory under a log being opened. NULL
 * with e set (55P03 when the slot was not free in time, or another process
 * owns the log). */
static ltab *get_tab(qr_live *l, const char *name, uint32_t wait_ms, qr_err *e)
{
    pthread_mutex_lock(&l->mu);
    ltab *t = find_tab(l, name);
    uint32_t n = l->ntabs;
    pthread_mutex_unlock(&l->mu);
    if (t)
        return t;
    if (n == LIVE_MAX_TABLES) {
        qr_errf(e, QR_E_TOO_LONG, "more than %u tables written by one server", LIVE_MAX_TABLES);
        return NULL;
    }
    int r = wait_ms == UINT32_MAX ? qr_sqldb_writer_begin(l->db, name, e)
                                  : qr_sqldb_writer_try(l->db, name, wait_ms, e);
    if (r != 0) {
        if (r > 0)
            qr_errf(e, QR_E_LOCKED, "table %s: its writer slot is busy", name);
        return NULL;
    }
    pthread_mutex_lock(&l->mu);
    t = find_tab(l, name); /* made meanwhile, before we had the slot */
    pthread_mutex_unlock(&l->mu);
    if (t) {
        qr_sqldb_writer_end(l->db, name);
        return t;
    }
    qr_table *tb = qr_table_open(qr_sql_db_dir(l->db), name, QR_TABLE_READ, e);
    if (tb && qr_mkdirs(tb->dir, e) != 0) {
        qr_table_close(tb);
        tb = NULL;
    }
    qr_wal *wal = tb ? qr_wal_open(tb->dir, tb->man.wal_seq, l->o.wal_sync, NULL, NULL, e) : NULL;
    char live_dir[PATH_MAX] = "";
    if (wal) { /* the log is ours: so is what an interrupted merge or a previous run left */
        qr_merge_clean(tb->dir);
        snprintf(live_dir, sizeof live_dir, "%s/live", tb->dir);
        qr_live_clean(tb->dir);
        if (qr_mkdirs(live_dir, e) != 0) {
            qr_wal_close(wal);
            wal = NULL;
        }
    }
    qr_table_close(tb);
    if (wal && !(t = calloc(1, sizeof *t)))
        qr_errf(e, QR_E_NOMEM, "out of memory");
    if (!t) {
        qr_wal_close(wal);
        qr_sqldb_writer_end(l->db, name);
        return NULL;
    }
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->live_dir, sizeof t->live_dir, "%s", live_dir);
    t->wal = wal;
    t->durable_seq = qr_wal_last(wal);
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    pthread_mutex_lock(&l->mu);
    l->tabs[l->ntabs++] = t;
    pthread_mutex_unlock(&l->mu);
    qr_sqldb_writer_end(l->db, name);
    return t;
}

/* 1 when a segment written with definition `made` holds index x as it is
 * defined now. */
static int holds_index(const qr_tabdef *made, const qr_ixdef *x)
{
    const qr_ixdef *y = qr_tabdef_index_by_id(made, x->id);
    return y && y->col == x->col && y->kind == x->kind && y->lowercase == x->lowercase &&
           y->positions == x->positions;
}

/* 0 when rows parsed with definition `made` may become a live segment of
 * table name: it has every index the table has now, built or being built
 * (a live segment is read as it was written; an index created since the
 * statement began would be missing from it once marked built). Else -1
 * with 40001, as a logged writer turning direct gets (sql/rows.c). */
static int def_current(qr_sql_db *db, const char *name, const qr_tabdef *made, qr_err *e)
{
    qr_sqldb_lock(db, 0);
    const qr_tabdef *now = qr_catalog_find(qr_sqldb_catalog(db), name);
    int ok = now != NULL;
    for (uint32_t i = 0; ok && i < now->nixs; i++)
        ok = holds_index(made, &now->ixs[i]);
    qr_sqldb_unlock(db);
    return ok ? 0
              : qr_errf(e, "40001",
                        "table %s: its definition changed during the statement; retry it", name);
}

int qr_live_carries(qr_sql_db *db, const char *name, const qr_tabdef *d)
{
    qr_live *l = qr_sqldb_live(db);
    if (!l)
        return 1;
    ltab *t = lookup(l, name);
    if (!t)
        return 1;
    pthread_mutex_lock(&t->mu);
    int ok = 1;
    for (uint32_t i = 0; ok && i < t->nsegs; i++)
        for (uint32_t k = 0; ok && k < d->nixs; k++)
            ok = !d->ixs[k].building || holds_index(t->segs[i]->def, &d->ixs[k]);
    if (ok) /* a writer that read the definition before this one now must read it again */
        t->ix_gen++;
    pthread_mutex_unlock(&t->mu);
    return ok;
}

/* Batch b as live segment file of t: *out, malloc'ed. 0, or -1 with e set
 * (nothing left behind). */
static int write_lseg(ltab *t, const qr_batch *b, lseg **out, qr_err *e)
{
    lseg *s = calloc(1, sizeof *s);
    if (s && !(s->def = qr_tabdef_clone(b->def))) {
        free(s);
        s = NULL;
    }
    if (!s)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    s->ent.id = atomic_fetch_add(&next_live_id, 1);
    qr_seg_opts o;
    qr_seg_opts_default(&o);
    o.zstd_level = FLUSH_ZSTD_LEVEL;
    o.zdict_bytes = 0;
    o.no_sync = 1; /* the log record is what makes the rows durable */
    char path[PATH_MAX];
    lseg_path(t, s, path, sizeof path);
    qr_seg_summary sum;
    if (qr_segment_build(path, b, &o, &sum, e) != 0) {
        qr_tabdef_free(s->def);
        free(s);
        return -1;
    }
    s->ent.rows = sum.rows;
    s->ent.min_ts = sum.min_ts;
    s->ent.max_ts = sum.max_ts;
    s->ent.file_bytes = sum.file_bytes;
    *out = s;
    return 0;
}

int qr_live_append(qr_sql_db *db, const char *name, qr_buf *rec, const qr_batch *b, qr_err *e)
{
    unsigned char *p = rec->p;
    size_t n = rec->len;
    qr_buf_init(rec); /* ours now */
    qr_live *l = qr_sqldb_live(db);
    if (!l) {
        free(p);
        return qr_errf(e, QR_E_INTERNAL, "table %s: logged rows without a live database", name);
    }
    ltab *t = get_tab(l, name, UINT32_MAX, e);
    if (!t) {
        free(p);
        return -1;
    }
    pthread_mutex_lock(&t->mu);
    /* back-pressure: wait while too much waits for the flusher (records
     * not committed) or for the merger (segments not merged) */
    int64_t until = now_ms() + l->o.pending_wait_ms;
    for (;;) {
        int full = t->pending && t->pending + n > l->o.max_pending;
        int unmerged = l->o.merge && t->unmerged > l->o.max_unmerged; /* merges on */
        if (t->dead || (!full && !unmerged))
            break;
        if (full) {
            t->urgent = 1;   /* committed now, whatever their age */
            wake_flusher(l); /* t->mu is held: not l->mu (the lock order is l->mu, t->mu) */
        }
        if (unmerged)
            pthread_cond_signal(&l->mcv); /* a lost wakeup costs the merger's tick */
        int64_t left = until - now_ms();
        if (left <= 0) {
            size_t mib = t->pending >> 20;
            uint32_t segs = t->unmerged;
            pthread_mutex_unlock(&t->mu);
            free(p);
            if (full)
                return qr_errf(e, QR_E_BUSY,
                               "table %s: %zu MiB of rows wait to be written to segments (limit "
                               "%zu MiB); retry later",
                               name, mib, l->o.max_pending >> 20);
            return qr_errf(e, QR_E_BUSY,
                           "table %s: %u segments wait to be merged (limit %u); retry later", name,
                           segs, l->o.max_unmerged);
        }
        struct timespec ts = qr_abstime_after_ms(left < 100 ? left : 100);
        pthread_cond_timedwait(&t->cv, &t->mu, &ts);
        if (unmerged) { /* counted again: a VACUUM or TRUNCATE may have merged them too */
            pthread_mutex_unlock(&t->mu);
            uint32_t c = count_unmerged(l->db, name);
            pthread_mutex_lock(&t->mu);
            if (c != UINT32_MAX)
                t->unmerged = c;
        }
    }
    int dead = atomic_load(&t->dead);
    pthread_mutex_unlock(&t->mu);
    lseg *s = NULL;
    /* the rows are a segment first (on this connection's thread, no lock
     * held), so that once acknowledged they are visible at once */
    if (dead || write_lseg(t, b, &s, e) != 0) {
        free(p);
        return dead
                   ? qr_errf(e, QR_E_UNDEFINED_TABLE, "table \"%s\" does not exist (dropped)", name)
                   : qr_err_prefix(e, "table %s: ", name);
    }
    s->rec_bytes = n;
    /* the definition checked, and no index marked built between that check
     * and the listing below (qr_live_carries bumps ix_gen; it is called only
     * once the index is in the catalog, so a check after it sees it) */
    int rc;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        uint64_t gen = t->ix_gen;
        pthread_mutex_unlock(&t->mu);
        rc = def_current(l->db, name, b->def, e);
        pthread_mutex_lock(&t->mu);
        if (rc != 0 || t->ix_gen == gen)
            break;
    }
    if (rc == 0 && t->dead)
        rc = qr_errf(e, QR_E_UNDEFINED_TABLE, "table \"%s\" does not exist (dropped)", name);
    else if (rc == 0 && t->nsegs == t->capsegs) { /* room first: a logged record must be listed */
        uint32_t nc = t->capsegs ? t->capsegs * 2 : 64;
        lseg **ns = realloc(t->segs, sizeof *ns * nc);
        if (ns) {
            t->segs = ns;
            t->capsegs = nc;
        } else {
            rc = qr_errf(e, QR_E_NOMEM, "table %s: out of memory", name);
        }
    }
    if (rc == 0 && qr_wal_write(t->wal, p, n, &s->seq, e) != 0)
        rc = qr_err_prefix(e, "table %s: ", name);
    free(p);
    if (rc != 0) {
        lseg_drop(t, s);
        pthread_mutex_unlock(&t->mu);
        return -1;
    }
    s->at_ms = now_ms();
    t->segs[t->nsegs++] = s;
    t->pending += n;
    uint64_t seq = s->seq;
    int big = t->pending >= FLUSH_BYTES || t->nsegs >= FLUSH_SEGS;
    pthread_mutex_unlock(&t->mu);
    if (big)
        wake_flusher(l);
    if (qr_wal_sync(t->wal, seq, e) != 0)
        return qr_err_prefix(e, "table %s: ", name);
    /* durable, and every record before it too (one fsync covers all the
     * records written before it): visible to queries from now on */
    pthread_mutex_lock(&t->mu);
    if (t->durable_seq < seq)
        t->durable_seq = seq;
    pthread_mutex_unlock(&t->mu);
    return 0;
}

/* Commit t's live segments into a table segment. 0 (also: none), or -1
 * with e set (they stay live, for the next try). */
static int flush_tab(qr_live *l, ltab *t, qr_err *e)
{
    pthread_mutex_lock(&t->mu);
    while (t->flushing)
        pthread_cond_wait(&t->cv, &t->mu);
    if (t->dead || !t->nsegs) {
        pthread_mutex_unlock(&t->mu);
        return 0;
    }
    uint32_t n = t->nsegs;
    lseg **take = malloc(sizeof *take * n);
    if (!take) {
        pthread_mutex_unlock(&t->mu);
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    }
    memcpy(take, t->segs, sizeof *take * n);
    uint64_t seq = take[n - 1]->seq;
    t->flushing = 1;
    /* later records go to a new file once this one is big, so the old one
     * can go after this commit */
    qr_err re;
    if (qr_wal_rotate(t->wal, QR_WAL_ROTATE_BYTES, &re) != 0)
        fprintf(stderr, "quarry: table %s: %s\n", t->name, re.msg);
    pthread_mutex_unlock(&t->mu);

    uint32_t unmerged = 0;
    int rc = commit_live(l, t, take, n, seq, &unmerged, e);

    pthread_mutex_lock(&t->mu);
    if (rc == 0) {
        t->unmerged = unmerged;
        atomic_store(&t->committed_ms, now_ms());
        /* the manifest lists their rows now: a snapshot taken from here on
         * reads them there (qr_live_snapshot's order) */
        qr_wal_release(t->wal, seq);
        for (uint32_t i = 0; i < n; i++) {
            t->pending -= take[i]->rec_bytes;
            lseg_drop(t, take[i]);
        }
        memmove(t->segs, t->segs + n, sizeof *t->segs * (t->nsegs - n));
        t->nsegs -= n;
        t->fails = 0;
    } else if (!t->dead) {
        t->fails++;
        t->retry_ms = now_ms() + (t->fails < 10 ? 100 * t->fails : 1000);
    }
    t->flushing = 0;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    free(take);
    return rc;
}

int qr_live_flush(qr_sql_db *db, const char *name, qr_err *e)
{
    qr_live *l = qr_sqldb_live(db);
    if (!l)
        return 0;
    ltab *t = lookup(l, name);
    return t ? flush_tab(l, t, e) : 0;
}

void qr_live_forget(qr_sql_db *db, const char *name)
{
    qr_live *l = qr_sqldb_live(db);
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    ltab *t = find_tab(l, name);
    if (t) {
        for (uint32_t i = 0; i < l->ntabs; i++)
            if (l->tabs[i] == t)
                l->tabs[i] = l->tabs[--l->ntabs];
        if (l->ndead < LIVE_MAX_TABLES)
            l->dead[l->ndead++] = t;
        atomic_store(&t->dead, 1); /* a flush or merge waiting for the slot gives up */
        atomic_store(&t->mcancel, 1);
        while (t->merging)
            pthread_cond_wait(&l->merged, &l->mu);
    }
    pthread_mutex_unlock(&l->mu);
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    while (t->flushing)
        pthread_cond_wait(&t->cv, &t->mu);
    drop_segs(t);
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

int qr_live_snapshot(qr_sql_db *db, const char *name, qr_live_snap *out, qr_err *e)
{
    memset(out, 0, sizeof *out);
    qr_live *l = qr_sqldb_live(db);
    if (!l)
        return 0;
    ltab *t = lookup(l, name);
    if (!t)
        return 0;
    pthread_mutex_lock(&t->mu);
    uint32_t n = 0;
    while (n < t->nsegs && t->segs[n]->seq <= t->durable_seq)
        n++;
    if (n && (!(out->segs = malloc(sizeof *out->segs * n)) ||
              !(out->ents = malloc(sizeof *out->ents * n)) ||
              !(out->seqs = malloc(sizeof *out->seqs * n)))) {
        pthread_mutex_unlock(&t->mu);
        qr_live_snapshot_done(out);
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < n; i++) {
        lseg *s = t->segs[i];
        s->pins++;
        out->segs[i] = s;
        out->ents[i] = s->ent;
        out->seqs[i] = s->seq;
    }
    out->n = n;
    out->tab = t;
    snprintf(out->dir, sizeof out->dir, "%s", t->live_dir);
    pthread_mutex_unlock(&t->mu);
    return 0;
}

void qr_live_snapshot_done(qr_live_snap *s)
{
    ltab *t = s->tab;
    if (t && s->n) {
        pthread_mutex_lock(&t->mu);
        for (uint32_t i = 0; i < s->n; i++) {
            lseg *g = s->segs[i];
            if (--g->pins == 0 && g->gone)
                lseg_drop(t, g);
        }
        pthread_mutex_unlock(&t->mu);
    }
    free(s->segs);
    free(s->ents);
    free(s->seqs);
    memset(s, 0, sizeof *s);
}

static void free_live(qr_live *l);
static void stop_threads(qr_live *l, int merger_started);

/* ---- the flusher ---- */

/* 1 when some table's live segments are wanted in segments now (l->mu held). */
static int any_urgent(qr_live *l)
{
    int u = 0;
    for (uint32_t i = 0; i < l->ntabs && !u; i++) {
        ltab *t = l->tabs[i];
        pthread_mutex_lock(&t->mu);
        u = t->urgent && t->nsegs && !t->flushing;
        pthread_mutex_unlock(&t->mu);
    }
    return u;
}

static void *flusher(void *arg)
{
    qr_live *l = arg;
    pthread_setname_np(pthread_self(), "quarry-flusher"); /* as top -H and /proc show it */
    pthread_mutex_lock(&l->mu);
    while (!atomic_load(&l->stop)) {
        if (!any_urgent(l)) {
            struct timespec ts = qr_abstime_after_ms(TICK_MS);
            pthread_cond_timedwait(&l->cv, &l->mu, &ts);
        }
        if (atomic_load(&l->stop))
            break;
        ltab *due[LIVE_MAX_TABLES];
        uint32_t ndue = 0;
        int64_t now = now_ms();
        for (uint32_t i = 0; i < l->ntabs; i++) {
            ltab *t = l->tabs[i];
            pthread_mutex_lock(&t->mu);
            if (t->nsegs && !t->flushing && (t->urgent || now >= t->retry_ms) &&
                (t->urgent || now - t->segs[0]->at_ms >= (int64_t)l->o.refresh_ms ||
                 t->pending >= FLUSH_BYTES || t->nsegs >= FLUSH_SEGS))
                due[ndue++] = t;
            t->urgent = 0;
            pthread_mutex_unlock(&t->mu);
        }
        pthread_mutex_unlock(&l->mu);
        for (uint32_t i = 0; i < ndue; i++) {
            qr_err e;
            if (flush_tab(l, due[i], &e) != 0)
                fprintf(stderr, "quarry: %s (%s); retrying\n", e.msg, e.code);
        }
        pthread_mutex_lock(&l->mu);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* Every table of the catalog gets its live state (its log owned), so that
 * the merger keeps each one's segment count bounded, not only the tables
 * written since the start. A table whose log another process owns is left
 * alone. */
static void adopt_catalog(qr_live *l)
{
    qr_sqldb_lock(l->db, 0);
    const qr_catalog *c = qr_sqldb_catalog(l->db);
    uint32_t n = c->ntables;
    char(*names)[64] = calloc(n ? n : 1, sizeof *names);
    for (uint32_t i = 0; names && i < n; i++)
        snprintf(names[i], sizeof names[i], "%s", c->tables[i]->name);
    qr_sqldb_unlock(l->db);
    for (uint32_t i = 0; names && i < n && !atomic_load(&l->stop); i++) {
        qr_err e;
        get_tab(l, names[i], 0, &e);
    }
    free(names);
}

int qr_live_build_later(qr_sql_db *db)
{
    qr_live *l = qr_sqldb_live(db);
    if (!l || !l->o.merge)
        return 0;
    pthread_mutex_lock(&l->mu);
    pthread_cond_signal(&l->mcv);
    pthread_mutex_unlock(&l->mu);
    return 1;
}

/* The merger: for every table, its indexes being built built (for up to
 * two seconds at a time), its retention applied, and its segments merged
 * while the policy (merge.h) finds a run, one merge at a time. */
static void *merger(void *arg)
{
    qr_live *l = arg;
    /* Merges are background work; a flush is what a waiting query and
     * back-pressured writers wait for. On a saturated machine the merger
     * therefore yields the CPU to the flusher and the connections: its
     * thread's nice value MERGER_NICE above the process's (relative, so a
     * server started under nice keeps the order; failure leaves it). */
    id_t tid = (id_t)syscall(SYS_gettid);
    errno = 0;
    int base = getpriority(PRIO_PROCESS, tid); /* -1 is a nice value too */
    if (errno == 0)
        setpriority(PRIO_PROCESS, tid, base + MERGER_NICE);
    pthread_setname_np(pthread_self(), "quarry-merger");
    pthread_mutex_lock(&l->mu);
    while (!atomic_load(&l->stop)) {
        struct timespec ts = qr_abstime_after_ms(1000);
        pthread_cond_timedwait(&l->mcv, &l->mu, &ts);
        pthread_mutex_unlock(&l->mu);
        adopt_catalog(l);
        pthread_mutex_lock(&l->mu);
        int again = 1;
        while (again && !atomic_load(&l->stop)) {
            again = 0;
            for (uint32_t i = 0; i < l->ntabs && !atomic_load(&l->stop); i++) {
                ltab *t = l->tabs[i];
                if (atomic_load(&t->dead))
                    continue;
                t->merging = 1;
                pthread_mutex_unlock(&l->mu);
                qr_err e;
                uint64_t rows;
                uint32_t before = 0, after = 0;
                int64_t t0 = now_ms();
                uint64_t gone = 0;
                uint32_t gone_segs = 0;
                struct timespec wall;
                clock_gettime(CLOCK_REALTIME, &wall);
                int64_t now_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;
                uint32_t built = 0, left = 0;
                int br =
                    qr_build_indexes_table(l->db, t->name, &t->mcancel, 2000, &built, &left, &e);
                if (br < 0)
                    fprintf(stderr, "quarry: table %s: building an index: %s (%s)\n", t->name,
                            e.msg, e.code);
                else if (br > 0 && l->o.log_merges)
                    fprintf(stderr,
                            "quarry: table %s: indexes built for %u more segments, %u to go\n",
                            t->name, built, left);
                int rr =
                    qr_retain_table(l->db, t->name, now_ns, &t->mcancel, &gone, &gone_segs, &e);
                if (rr < 0)
                    fprintf(stderr, "quarry: table %s: retention: %s (%s)\n", t->name, e.msg,
                            e.code);
                else if (rr > 0 && l->o.log_merges)
                    fprintf(stderr,
                            "quarry: table %s: retention dropped %llu rows (%u whole "
                            "segments)\n",
                            t->name, (unsigned long long)gone, gone_segs);
                int idle = now_ms() - atomic_load(&t->committed_ms) >= QR_MERGE_IDLE_MS;
                int r =
                    qr_merge_table(l->db, t->name, idle, &t->mcancel, &rows, &before, &after, &e);
                if (r < 0)
                    fprintf(stderr, "quarry: table %s: background merge: %s (%s)\n", t->name, e.msg,
                            e.code);
                else if (r > 0 && l->o.log_merges)
                    fprintf(stderr,
                            "quarry: table %s: merged %llu rows, %u -> %u segments in "
                            "%lld ms\n",
                            t->name, (unsigned long long)rows, before, after,
                            (long long)(now_ms() - t0));
                uint32_t unmerged = count_unmerged(l->db, t->name);
                pthread_mutex_lock(&t->mu);
                if (unmerged != UINT32_MAX)
                    t->unmerged = unmerged;
                pthread_cond_broadcast(&t->cv); /* writers waiting for merges */
                pthread_mutex_unlock(&t->mu);
                pthread_mutex_lock(&l->mu);
                t->merging = 0;
                pthread_cond_broadcast(&l->merged);
                again |= r > 0 || br > 0;
                if (r < 0) { /* not again at once: the next tick */
                    again = 0;
                    break;
                }
            }
        }
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

int qr_sql_db_live(qr_sql_db *db, const qr_live_opts *o, qr_err *e)
{
    if (qr_sqldb_live(db))
        return 0;
    qr_live *l = calloc(1, sizeof *l);
    if (!l)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    l->db = db;
    l->o = *o;
    if (!l->o.refresh_ms)
        l->o.refresh_ms = 1;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cv, NULL);
    pthread_cond_init(&l->merged, NULL);
    pthread_cond_init(&l->mcv, NULL);
    /* published before the threads start: the merger asks the database for
     * it (qr_live_carries) */
    qr_sqldb_set_live(db, l);
    if (pthread_create(&l->th, NULL, flusher, l) != 0) {
        qr_sqldb_set_live(db, NULL);
        free_live(l);
        return qr_errf(e, QR_E_INTERNAL, "cannot start the flusher thread: %s", strerror(errno));
    }
    if (l->o.merge && pthread_create(&l->mth, NULL, merger, l) != 0) {
        stop_threads(l, 0);
        qr_sqldb_set_live(db, NULL);
        free_live(l);
        return qr_errf(e, QR_E_INTERNAL, "cannot start the merger thread: %s", strerror(errno));
    }
    return 0;
}

static void free_live(qr_live *l)
{
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    pthread_cond_destroy(&l->merged);
    pthread_cond_destroy(&l->mcv);
    free(l);
}

/* Stop the flusher (after its flush in progress) and, if started, the
 * merger (a merge in progress gives up). */
static void stop_threads(qr_live *l, int merger_started)
{
    pthread_mutex_lock(&l->mu);
    atomic_store(&l->stop, 1);
    for (uint32_t i = 0; i < l->ntabs; i++)
        atomic_store(&l->tabs[i]->mcancel, 1);
    pthread_cond_signal(&l->cv);
    pthread_cond_signal(&l->mcv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->th, NULL);
    if (merger_started)
        pthread_join(l->mth, NULL);
}

void qr_live_stop(qr_live *l)
{
    if (!l)
        return;
    stop_threads(l, l->o.merge);
    /* what waits is written now; what cannot be stays in the log */
    for (uint32_t i = 0; i < l->ntabs; i++) {
        qr_err e;
        if (flush_tab(l, l->tabs[i], &e) != 0)
            fprintf(stderr,
                    "quarry: table %s: rows left in its log (%s); the next start writes "
                    "them\n",
                    l->tabs[i]->name, e.msg);
        tab_free(l->tabs[i]);
    }
    for (uint32_t i = 0; i < l->ndead; i++)
        tab_free(l->dead[i]);
    free_live(l);
}
