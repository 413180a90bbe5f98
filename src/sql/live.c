/* live.c - a running server's writes (live.h): each table's write-ahead
 * log and its rows waiting in memory, back-pressure on writers, the
 * flusher thread that writes waiting rows as segments, the wait of queries
 * for acknowledged rows, and the merger thread (retention and merges:
 * merge.h). Recovery at start is recover.c's.
 *
 * Locks, in this order: the live mutex (the table list, the threads'
 * flags), then a table's mutex (its log writes, waiting rows, flushing);
 * neither is held while waiting for a table's writer slot, which flushes
 * and merges take with a timeout (DROP holds the slot while it waits for
 * them). */
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

#include "index/table.h"
#include "index/wal.h"
#include "sql/db.h"
#include "sql/merge.h"
#include "sql/rows.h"
#include "util/fsutil.h"

#define LIVE_MAX_TABLES 256
#define FLUSH_BYTES     (4u << 20) /* waiting rows flushed at once past this */
#define TICK_MS         10u
#define MERGER_NICE     5 /* the merger's nice value above the server's */
#define FLUSH_ZSTD_LEVEL 1 /* flush segments: no trained dictionaries either */

/* Waiting rows: the log records' payloads, each block owned, in order
 * (a statement's record buffer is taken over, not copied). */
typedef struct blocks {
    unsigned char **p;
    size_t *n;
    uint32_t nb, cap;
    size_t len; /* bytes in all */
} blocks;

/* Room for at least `need` blocks in all. 0, or -1 (out of memory: b as it was). */
static int blocks_reserve(blocks *b, uint32_t need)
{
    if (need <= b->cap)
        return 0;
    uint32_t nc = b->cap ? b->cap : 16;
    while (nc < need)
        nc *= 2;
    unsigned char **np = realloc(b->p, sizeof *np * nc);
    if (!np)
        return -1;
    b->p = np;
    size_t *nn = realloc(b->n, sizeof *nn * nc);
    if (!nn)
        return -1;
    b->n = nn;
    b->cap = nc;
    return 0;
}

/* Room for one more block. */
static int blocks_room(blocks *b) { return blocks_reserve(b, b->nb + 1); }

static void blocks_free(blocks *b)
{
    for (uint32_t i = 0; i < b->nb; i++)
        free(b->p[i]);
    free(b->p);
    free(b->n);
    memset(b, 0, sizeof *b);
}

/* a's blocks, then b's, into a (b emptied). -1: out of memory (nothing moved). */
static int blocks_append(blocks *a, blocks *b)
{
    if (blocks_reserve(a, a->nb + b->nb) != 0)
        return -1;
    if (b->nb) { /* b's arrays may be NULL when it holds nothing */
        memcpy(a->p + a->nb, b->p, sizeof *b->p * b->nb);
        memcpy(a->n + a->nb, b->n, sizeof *b->n * b->nb);
    }
    a->nb += b->nb;
    a->len += b->len;
    free(b->p);
    free(b->n);
    memset(b, 0, sizeof *b);
    return 0;
}

typedef struct ltab {
    char name[64];
    qr_wal *wal;
    pthread_mutex_t mu; /* writes to the log, the waiting rows, flushing */
    pthread_cond_t cv;  /* a flush ended */
    blocks pending;     /* rows of the records after the manifest's wal_seq */
    uint64_t pending_rows;
    uint64_t pending_seq; /* the last record in pending (0: none) */
    int64_t since_ms;     /* when the oldest waiting row came */
    int flushing;
    atomic_int dead;      /* dropped: forget everything; background work gives up */
    int merging;          /* the merger works on it (under the live mutex) */
    atomic_int mcancel;   /* a merge of it gives up (dropped, or the database stops) */
    int broken;           /* rows could not be kept in memory: they stay in the log only */
    int64_t retry_ms;     /* after a failed flush: not before */
    uint64_t flushed_seq; /* records <= this are in committed segments */
    int urgent;           /* a reader waits: flush at the next tick, whatever the age */
    uint32_t fails;
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
    o->refresh_ms = 50;
    o->wal_sync = 1;
    o->max_pending = (size_t)8 << 20;
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

/* ---- writing rows as segments ---- */

typedef struct towriter {
    qr_rowwriter *w;
    uint64_t rows;
} towriter;

static int add_row(void *arg, const char *line, size_t n, qr_err *e)
{
    towriter *t = arg;
    t->rows++;
    return qr_rows_add(t->w, line, n, e);
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

/* Rows payload p[0..n) as segments of table name, committed with the
 * manifest's wal_seq = seq. */
static int write_segments(qr_sql_db *db, const char *name, atomic_int *dead, const blocks *b,
                          uint64_t seq, qr_err *e)
{
    int r = slot_unless(db, name, dead, e);
    if (r != 0)
        return r < 0 ? -1 : qr_errf(e, QR_E_UNDEFINED_TABLE, "table %s: dropped", name);
    qr_rowwriter w;
    if (qr_rows_begin_held(&w, db, name, e) != 0)
        return -1;
    /* flush segments are small and soon merged (which compresses again,
     * at the table's level with dictionaries): written fast */
    w.seg.zstd_level = FLUSH_ZSTD_LEVEL;
    w.seg.zdict_bytes = 0;
    towriter tw = {&w, 0};
    for (uint32_t i = 0; i < b->nb; i++)
        if (qr_live_each_row(b->p[i], b->n[i], add_row, &tw, e) != 0) {
            qr_err_prefix(e, "table %s: writing logged rows: ", name);
            qr_rows_abort(&w);
            return -1;
        }
    uint64_t rows;
    return qr_rows_commit_wal(&w, seq, &rows, e);
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

static void tab_free(ltab *t)
{
    qr_wal_close(t->wal);
    blocks_free(&t->pending);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    free(t);
}

/* Table name's live state, its log opened (after the manifest's wal_seq,
 * which recovery brought up to the log's end). The log is opened holding
 * the table's writer slot (waiting at most wait_ms; UINT32_MAX: as long as
 * it takes), so that a DROP, which holds it, cannot remove the directory
 * under a log being opened. NULL with e set (55P03 when the slot was not
 * free in time, or another process owns the log). */
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
    if (wal) /* the log is ours: so is what an interrupted merge left */
        qr_merge_clean(tb->dir);
    qr_table_close(tb);
    if (wal && !(t = calloc(1, sizeof *t)))
        qr_errf(e, QR_E_NOMEM, "out of memory");
    if (!t) {
        qr_wal_close(wal);
        qr_sqldb_writer_end(l->db, name);
        return NULL;
    }
    snprintf(t->name, sizeof t->name, "%s", name);
    t->wal = wal;
    t->flushed_seq = qr_wal_last(wal);
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    pthread_mutex_lock(&l->mu);
    l->tabs[l->ntabs++] = t;
    pthread_mutex_unlock(&l->mu);
    qr_sqldb_writer_end(l->db, name);
    return t;
}

int qr_live_append(qr_sql_db *db, const char *name, qr_buf *rec, uint64_t rows, qr_err *e)
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
    /* back-pressure: wait for the flusher while too much is waiting */
    int64_t until = now_ms() + l->o.pending_wait_ms;
    while (!t->dead && t->pending.len && t->pending.len + n > l->o.max_pending) {
        wake_flusher(l); /* t->mu is held: not l->mu (the lock order is l->mu, t->mu) */
        int64_t left = until - now_ms();
        if (left <= 0) {
            size_t mib = t->pending.len >> 20;
            pthread_mutex_unlock(&t->mu);
            free(p);
            return qr_errf(e, QR_E_BUSY,
                           "table %s: %zu MiB of rows wait to be written to segments (limit %zu "
                           "MiB); retry later",
                           name, mib, l->o.max_pending >> 20);
        }
        struct timespec ts = qr_abstime_after_ms(left < 100 ? left : 100);
        pthread_cond_timedwait(&t->cv, &t->mu, &ts);
    }
    if (t->dead) {
        pthread_mutex_unlock(&t->mu);
        free(p);
        return qr_errf(e, QR_E_UNDEFINED_TABLE, "table \"%s\" does not exist (dropped)", name);
    }
    /* room first: a record in the log must also be in the waiting rows */
    if (t->broken || blocks_room(&t->pending) != 0) {
        pthread_mutex_unlock(&t->mu);
        free(p);
        return qr_errf(e, QR_E_NOMEM, "table %s: out of memory holding %zu bytes of rows", name, n);
    }
    uint64_t seq;
    if (qr_wal_write(t->wal, p, n, &seq, e) != 0) {
        pthread_mutex_unlock(&t->mu);
        free(p);
        return qr_err_prefix(e, "table %s: ", name);
    }
    if (!t->pending.len)
        t->since_ms = now_ms();
    t->pending.p[t->pending.nb] = p;
    t->pending.n[t->pending.nb++] = n;
    t->pending.len += n;
    t->pending_rows += rows;
    t->pending_seq = seq;
    int big = t->pending.len >= FLUSH_BYTES;
    pthread_mutex_unlock(&t->mu);
    if (big)
        wake_flusher(l);
    return qr_wal_sync(t->wal, seq, e) == 0 ? 0 : qr_err_prefix(e, "table %s: ", name);
}

/* Write t's waiting rows as segments. 0 (also: nothing waiting), or -1 with
 * e set (the rows wait on, for the next try). */
static int flush_tab(qr_live *l, ltab *t, qr_err *e)
{
    pthread_mutex_lock(&t->mu);
    while (t->flushing)
        pthread_cond_wait(&t->cv, &t->mu);
    if (t->dead || t->broken || !t->pending.len) {
        pthread_mutex_unlock(&t->mu);
        return 0;
    }
    blocks take = t->pending;
    uint64_t seq = t->pending_seq, rows = t->pending_rows;
    memset(&t->pending, 0, sizeof t->pending);
    t->pending_rows = 0;
    int64_t since = t->since_ms;
    t->flushing = 1;
    /* later records go to a new file once this one is big, so the old one
     * can go after this commit */
    qr_err re;
    if (qr_wal_rotate(t->wal, QR_WAL_ROTATE_BYTES, &re) != 0)
        fprintf(stderr, "quarry: table %s: %s\n", t->name, re.msg);
    pthread_mutex_unlock(&t->mu);

    int rc = write_segments(l->db, t->name, &t->dead, &take, seq, e);

    pthread_mutex_lock(&t->mu);
    if (rc == 0) {
        qr_wal_release(t->wal, seq);
        t->flushed_seq = seq;
        blocks_free(&take);
        t->fails = 0;
    } else if (!t->dead) { /* the rows wait again, before the newer ones */
        if (blocks_append(&take, &t->pending) != 0) { /* the log has them all; no later flush
                                                       * may pass them */
            blocks_free(&t->pending);
            t->broken = 1;
            fprintf(stderr,
                    "quarry: table %s: out of memory keeping rows that wait; they stay "
                    "in its log for the next start, and writes are refused until then\n",
                    t->name);
        }
        t->pending = take;
        t->pending_rows += rows;
        t->since_ms = since;
        t->fails++;
        t->retry_ms = now_ms() + (t->fails < 10 ? 100 * t->fails : 1000);
    } else {
        blocks_free(&take);
    }
    t->flushing = 0;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return rc;
}

int qr_live_flush(qr_sql_db *db, const char *name, qr_err *e)
{
    qr_live *l = qr_sqldb_live(db);
    if (!l)
        return 0;
    pthread_mutex_lock(&l->mu);
    ltab *t = find_tab(l, name);
    pthread_mutex_unlock(&l->mu);
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
    blocks_free(&t->pending);
    t->pending_rows = 0;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

int qr_live_visible(qr_sql_db *db)
{
    qr_live *l = qr_sqldb_live(db);
    if (!l)
        return 0;
    ltab *tabs[LIVE_MAX_TABLES];
    uint64_t want[LIVE_MAX_TABLES];
    uint32_t n = 0;
    pthread_mutex_lock(&l->mu);
    for (uint32_t i = 0; i < l->ntabs; i++) {
        ltab *t = l->tabs[i];
        pthread_mutex_lock(&t->mu);
        uint64_t last = qr_wal_last(t->wal);
        if (!t->dead && !t->broken && last > t->flushed_seq) {
            t->urgent = 1;
            tabs[n] = t;
            want[n++] = last;
        }
        pthread_mutex_unlock(&t->mu);
    }
    if (n)
        pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    int64_t until = now_ms() + QR_LIVE_VISIBLE_MS;
    int late = 0;
    for (uint32_t i = 0; i < n; i++) {
        ltab *t = tabs[i];
        pthread_mutex_lock(&t->mu);
        while (!t->dead && !t->broken && t->flushed_seq < want[i]) {
            int64_t left = until - now_ms();
            if (left <= 0) {
                late = 1;
                break;
            }
            struct timespec ts = qr_abstime_after_ms(left < 50 ? left : 50);
            pthread_cond_timedwait(&t->cv, &t->mu, &ts);
            if (t->pending.len && !t->flushing) { /* the flusher may have missed the flag */
                t->urgent = 1;
                wake_flusher(l);
            }
        }
        pthread_mutex_unlock(&t->mu);
    }
    return late;
}

static void free_live(qr_live *l);
static void stop_threads(qr_live *l, int merger_started);

/* ---- the flusher ---- */

/* 1 when a reader waits for some table's rows (l->mu held). */
static int any_urgent(qr_live *l)
{
    int u = 0;
    for (uint32_t i = 0; i < l->ntabs && !u; i++) {
        ltab *t = l->tabs[i];
        pthread_mutex_lock(&t->mu);
        u = t->urgent && t->pending.len && !t->flushing;
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
        /* a reader that asked while the last flush ran signalled nobody:
         * its table's flag says so, and is served without a tick's sleep */
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
            if (t->pending.len && !t->flushing && (t->urgent || now >= t->retry_ms) &&
                (t->urgent || now - t->since_ms >= (int64_t)l->o.refresh_ms ||
                 t->pending.len >= FLUSH_BYTES))
                due[ndue++] = t;
            t->urgent = 0;
            pthread_mutex_unlock(&t->mu);
        }
        pthread_mutex_unlock(&l->mu);
        for (uint32_t i = 0; i < ndue; i++) {
            qr_err e;
            if (flush_tab(l, due[i], &e) != 0)
                fprintf(stderr, "quarry: table %s: flushing logged rows: %s (%s); retrying\n",
                        due[i]->name, e.msg, e.code);
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
                int br = qr_build_indexes_table(l->db, t->name, &t->mcancel, 2000, &built, &left,
                                                &e);
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
                int r = qr_merge_table(l->db, t->name, &t->mcancel, &rows, &before, &after, &e);
                if (r < 0)
                    fprintf(stderr, "quarry: table %s: background merge: %s (%s)\n", t->name, e.msg,
                            e.code);
                else if (r > 0 && l->o.log_merges)
                    fprintf(stderr,
                            "quarry: table %s: merged %llu rows, %u -> %u segments in "
                            "%lld ms\n",
                            t->name, (unsigned long long)rows, before, after,
                            (long long)(now_ms() - t0));
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
    if (pthread_create(&l->th, NULL, flusher, l) != 0) {
        free_live(l);
        return qr_errf(e, QR_E_INTERNAL, "cannot start the flusher thread: %s", strerror(errno));
    }
    if (l->o.merge && pthread_create(&l->mth, NULL, merger, l) != 0) {
        stop_threads(l, 0);
        free_live(l);
        return qr_errf(e, QR_E_INTERNAL, "cannot start the merger thread: %s", strerror(errno));
    }
    qr_sqldb_set_live(db, l);
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
