/* session.c - the shared database (catalog, pool, segment cache, each
 * table's latest manifest) and a session's path of one statement from text
 * to result (parse, bind, plan, run).
 *
 * Freshness: another process (quarry ingest, a DDL of another server) may
 * change the catalog or a table's manifest at any time; both files are
 * replaced atomically, so a statement stats them (two syscalls) and reads
 * again only what changed. A table's definition and manifest form a
 * snapshot that running statements keep (refcounted) while a newer one
 * replaces it for the statements that start later. */
#include "sql/sql.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "index/segcache.h"
#include "search/parallel.h"
#include "sql/db.h"
#include "sql/initplan.h"
#include "sql/live.h"
#include "sql/pgcat.h"
#include "sql/plan.h"
#include "sql/run.h"
#include "sql/run_int.h"
#include "sql/stmt.h"
#include "sql/tx.h"
#include "sql/union.h"

/* Identity of a file replaced by rename: any change gives another value. */
typedef struct fileid {
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
} fileid;

static int file_id(const char *path, fileid *id)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    if (stat(path, &st) != 0)
        return -1;
    *id = (fileid){st.st_dev, st.st_ino, st.st_size,
                   (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec};
    return 0;
}

static int same_file(const fileid *a, const fileid *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns;
}

#define SQL_MAX_TABLES 256 /* snapshots kept; past it a statement opens its own */

/* One table as of one manifest (read-only once published). */
typedef struct tsnap {
    qr_table *t;
    fileid man_id;
    int refs; /* under db->tlock: the db's pointer + each statement's */
    atomic_int live_swept; /* the cache dropped the live segments this manifest holds */
} tsnap;

struct qr_sql_db {
    char *dir;
    int threads;
    qr_pool *pool; /* threads - 1 workers: each statement's caller is one */
    qr_segcache *cache;
    pthread_rwlock_t catlock; /* shared by statements, exclusive to reload */
    qr_catalog cat;
    fileid cat_id;
    pthread_mutex_t tlock; /* the table snapshots */
    uint32_t ntabs;
    tsnap *tabs[SQL_MAX_TABLES];
    /* in-process writers, one per table at a time (db.h): under tlock */
    pthread_cond_t wcv;
    uint32_t nwriting;
    char *writing[SQL_MAX_TABLES];
    struct qr_live *live; /* running live (sql/live.h), else NULL */
};

struct qr_live *qr_sqldb_live(qr_sql_db *db) { return db->live; }
void qr_sqldb_set_live(qr_sql_db *db, struct qr_live *l) { db->live = l; }

qr_sql_db *qr_sql_db_open(const char *datadir, int threads, qr_err *e)
{
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    if (threads > QR_MAX_SEARCH_THREADS)
        threads = QR_MAX_SEARCH_THREADS;
    qr_sql_db *db = calloc(1, sizeof *db);
    if (!db || !(db->dir = strdup(datadir))) {
        free(db);
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    db->threads = threads;
    pthread_rwlock_init(&db->catlock, NULL);
    pthread_mutex_init(&db->tlock, NULL);
    pthread_cond_init(&db->wcv, NULL);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/CATALOG", datadir);
    file_id(path, &db->cat_id);
    if (qr_catalog_load(datadir, &db->cat, e) != 0 || !(db->cache = qr_segcache_new(NULL, e))) {
        qr_sql_db_close(db);
        return NULL;
    }
    if (threads > 1) {
        qr_err pe;
        db->pool = qr_pool_new(threads - 1, &pe); /* none: jobs run on the caller */
    }
    return db;
}

static void snap_unref(qr_sql_db *db, tsnap *t)
{
    pthread_mutex_lock(&db->tlock);
    int last = --t->refs == 0;
    pthread_mutex_unlock(&db->tlock);
    if (last) {
        qr_table_close(t->t);
        free(t);
    }
}

void qr_sql_db_close(qr_sql_db *db)
{
    if (!db)
        return;
    qr_live_stop(db->live);
    db->live = NULL;
    for (uint32_t i = 0; i < db->ntabs; i++)
        snap_unref(db, db->tabs[i]);
    qr_segcache_free(db->cache);
    qr_pool_free(db->pool);
    qr_catalog_free(&db->cat);
    pthread_rwlock_destroy(&db->catlock);
    pthread_mutex_destroy(&db->tlock);
    pthread_cond_destroy(&db->wcv);
    for (uint32_t i = 0; i < db->nwriting; i++)
        free(db->writing[i]);
    free(db->dir);
    free(db);
}

const char *qr_sql_db_dir(const qr_sql_db *db) { return db->dir; }

int qr_sql_db_threads(const qr_sql_db *db) { return db->threads; }

qr_pool *qr_sql_db_pool(qr_sql_db *db) { return db->pool; }

/* Read the catalog again when its file changed since the last read. Called
 * without the lock; takes it exclusively only to swap. */
static int catalog_fresh(qr_sql_db *db, qr_err *e)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/CATALOG", db->dir);
    fileid now;
    file_id(path, &now);
    pthread_rwlock_rdlock(&db->catlock);
    int same = same_file(&now, &db->cat_id);
    pthread_rwlock_unlock(&db->catlock);
    if (same)
        return 0;
    qr_catalog c;
    if (qr_catalog_load(db->dir, &c, e) != 0)
        return -1;
    pthread_rwlock_wrlock(&db->catlock);
    qr_catalog_free(&db->cat);
    db->cat = c;
    db->cat_id = now;
    pthread_rwlock_unlock(&db->catlock);
    return 0;
}

/* The latest snapshot of table `name` (one reference for the caller), read
 * again when its manifest file changed. NULL with e set. */
static tsnap *table_snap(qr_sql_db *db, const char *name, qr_err *e)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/MANIFEST", db->dir, name);
    fileid now;
    file_id(path, &now);
    pthread_mutex_lock(&db->tlock);
    uint32_t at = db->ntabs;
    for (uint32_t i = 0; i < db->ntabs; i++)
        if (!strcmp(db->tabs[i]->t->name, name))
            at = i;
    if (at < db->ntabs && same_file(&db->tabs[at]->man_id, &now)) {
        tsnap *t = db->tabs[at];
        t->refs++;
        pthread_mutex_unlock(&db->tlock);
        return t;
    }
    pthread_mutex_unlock(&db->tlock);
    tsnap *t = calloc(1, sizeof *t);
    if (!t) {
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    if (!(t->t = qr_table_open(db->dir, name, QR_TABLE_READ, e))) {
        free(t);
        return NULL;
    }
    t->man_id = now;
    t->refs = 2; /* the db's and the caller's */
    qr_segcache_invalidate(db->cache, t->t->dir, &t->t->man);
    tsnap *old = NULL;
    pthread_mutex_lock(&db->tlock);
    at = db->ntabs;
    for (uint32_t i = 0; i < db->ntabs; i++)
        if (!strcmp(db->tabs[i]->t->name, name))
            at = i;
    if (at < db->ntabs) {
        old = db->tabs[at];
        db->tabs[at] = t;
    } else if (db->ntabs < SQL_MAX_TABLES) {
        db->tabs[db->ntabs++] = t;
    } else {
        t->refs = 1; /* not kept: the caller's only */
    }
    pthread_mutex_unlock(&db->tlock);
    if (old)
        snap_unref(db, old);
    return t;
}

/* 1 when table snapshot t's manifest is no longer the table's. */
static int snap_stale(const qr_sql_db *db, const tsnap *t)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/MANIFEST", db->dir, t->t->name);
    fileid now;
    file_id(path, &now);
    return !same_file(&t->man_id, &now);
}

void qr_sql_session_init(qr_sql_session *s, qr_sql_db *db)
{
    memset(s, 0, sizeof *s);
    s->db = db;
    s->set.threads = db->threads;
    s->set.memory_limit = QR_QCTX_DEFAULT_LIMIT;
    s->set.lock_timeout_ms = QR_SQL_LOCK_TIMEOUT_MS;
    qr_sql_session_boot(s);
}

void qr_sql_session_boot(qr_sql_session *s)
{
    s->boot_threads = s->set.threads;
    s->boot_memory_limit = s->set.memory_limit;
    s->boot_timeout_ms = s->set.statement_timeout_ms;
    s->boot_lock_ms = s->set.lock_timeout_ms;
}

int qr_sql_open(qr_sql_session *s, const char *datadir, int threads, qr_err *e)
{
    memset(s, 0, sizeof *s);
    qr_sql_db *db = qr_sql_db_open(datadir, threads, e);
    if (!db)
        return -1;
    if (qr_sql_db_recover(db, e) != 0) { /* a crashed server's logged rows */
        qr_sql_db_close(db);
        return -1;
    }
    qr_sql_session_init(s, db);
    s->own_db = 1;
    return 0;
}

void qr_sql_close(qr_sql_session *s)
{
    int rolled_back;
    qr_err e;
    qr_tx_end(s, 0, &rolled_back, &e); /* a block never committed: its rows go */
    qr_sql_settings_free(s);
    if (s->own_db)
        qr_sql_db_close(s->db);
    memset(s, 0, sizeof *s);
}

void qr_sql_ctx_init(const qr_sql_session *s, qr_qctx *ctx, const atomic_int *cancel)
{
    qr_qctx_init(ctx, (size_t)s->set.memory_limit);
    int64_t deadline = 0;
    if (s->set.statement_timeout_ms)
        deadline = qr_qctx_now_ns() + (int64_t)s->set.statement_timeout_ms * 1000000;
    qr_qctx_set_stop(ctx, cancel, deadline);
}

static const PgQuery__Node *one_statement(const qr_sqlparse *p, qr_err *e)
{
    if (p->tree->n_stmts == 0) {
        qr_errf(e, QR_E_SYNTAX, "empty statement");
        return NULL;
    }
    if (p->tree->n_stmts > 1) {
        qr_errf(e, QR_E_FEATURE,
                "one statement at a time here (got %zu): split them with qr_sql_split",
                p->tree->n_stmts);
        return NULL;
    }
    return p->tree->stmts[0]->stmt;
}

/* qr_sql_check's "run" of a scalar or EXISTS subquery: bound and planned,
 * its output columns defined, no rows (so its value is NULL). */
static int check_sub(void *ctx, PgQuery__Node *sub, qr_result *out, qr_err *e);

/* qr_sql_check's "run" of a UNION arm: its output columns only. */
static int check_arm(void *ctx, const qr_sqlsel *sel, int kind, qr_result *out, qr_err *e)
{
    (void)ctx;
    (void)kind;
    return qr_run_define_columns(sel, out, e);
}

typedef struct checkctx {
    const qr_catalog *c;
    qr_sqlparse *p;
    qr_arena *a;
} checkctx;

static int check_node(const checkctx *k, const PgQuery__Node *st, qr_result *out, qr_err *e)
{
    if (qr_sql_initplans(k->p, (PgQuery__Node *)st, check_sub, (void *)k, out->ctx, e) != 0)
        return -1;
    if (st->node_case == PG_QUERY__NODE__NODE_SELECT_STMT &&
        st->select_stmt->op != PG_QUERY__SET_OPERATION__SETOP_NONE) /* every arm bound */
        return qr_sql_union(k->p, st->select_stmt, k->c, k->a, check_arm, NULL, out, e);
    qr_sqlsel sel;
    int kind;
    if (qr_sql_bind(k->p, st, k->c, &sel, k->a, e) != 0 || qr_sql_plan(&sel, &kind, e) != 0)
        return -1;
    return out ? qr_run_define_columns(&sel, out, e) : 0;
}

static int check_sub(void *ctx, PgQuery__Node *sub, qr_result *out, qr_err *e)
{
    return check_node(ctx, sub, out, e);
}

int qr_sql_check(const qr_catalog *c, const char *sql, size_t n, qr_err *e)
{
    qr_sqlparse p;
    qr_arena a;
    qr_arena_init(&a, 16 << 10, 64u << 20);
    int rc = qr_sqlp_parse(&p, sql, n, e);
    const PgQuery__Node *st = rc == 0 ? one_statement(&p, e) : NULL;
    if (rc == 0 && st && qr_pgcat_wants(st, c)) { /* the catalog answers: run them */
        qr_pgcat_env env = {.cat = c, .user = "quarry", .database = "quarry"};
        qr_qctx ctx;
        qr_qctx_init(&ctx, 64u << 20);
        qr_result r;
        qr_result_init(&r, &ctx);
        rc = qr_pgcat_exec(&env, &p, st, &r, e);
        qr_result_free(&r);
    } else if (rc == 0 && st) {
        checkctx k = {c, &p, &a};
        qr_result r;
        qr_result_init(&r, NULL);
        rc = check_node(&k, st, &r, e);
        qr_result_free(&r);
    } else {
        rc = -1;
    }
    qr_sqlp_free(&p);
    qr_arena_free(&a);
    return rc;
}

static int explain_rows(const qr_sqlsel *sel, int kind, qr_result *out, qr_err *e)
{
    qr_buf b;
    qr_buf_init(&b);
    qr_sql_explain(sel, kind, &b);
    int rc = qr_result_add_col(out, "QUERY PLAN", QR_RK_TEXT, 0, 0, e);
    for (size_t at = 0; rc == 0 && at < b.len;) {
        const char *nl = memchr(b.p + at, '\n', b.len - at);
        size_t len = (size_t)(nl - (const char *)b.p) - at;
        qr_cell *c = qr_result_add_row(out, e);
        rc = c ? qr_result_set_text(out, c, (const char *)b.p + at, len, e) : -1;
        at += len + 1;
    }
    qr_buf_free(&b);
    return rc;
}

/* SET enable_mergejoin (on unless set off). */
static int merge_join_on(const qr_sql_session *s)
{
    char v[8];
    return qr_sql_show(s, "enable_mergejoin", v, sizeof v, NULL) != 0 || strcmp(v, "off") != 0;
}

/* Opening the index fields of a table's segments on the pool: slot j
 * takes segments j, j + k, ...; each slot's first error in its own place. */
typedef struct fields_job {
    qr_segref **refs;
    uint32_t n, k;
    const qr_tabdef *def;
    const atomic_int *stop;
    atomic_ullong fields;
    qr_err err[QR_MAX_SEARCH_THREADS];
    int failed[QR_MAX_SEARCH_THREADS];
} fields_job;

static void warm_fields(void *ctx, int slot)
{
    fields_job *w = ctx;
    for (uint32_t i = (uint32_t)slot; i < w->n && !(w->stop && atomic_load(w->stop)); i += w->k)
        for (uint32_t x = 0; x < w->def->nixs; x++) {
            qr_err *fe = &w->err[slot]; /* 42704: an index newer than the segment, no error */
            if (w->def->ixs[x].building)
                continue;
            qr_invfield *f = qr_segref_field(w->refs[i], w->def->ixs[x].id, fe);
            /* its term index verified whole now (and so mapped): every
             * lookup reads a record, a byte mask and a first term of it,
             * a page fault each on a segment's first query otherwise */
            const qr_blockref *ti = f ? f->dict.iref : NULL;
            if (ti && qr_seg_check(f->seg, ti, 0, ti->length, "TERMINDEX", fe) != 0) {
                w->failed[slot] = 1;
                return;
            }
            if (f) {
                atomic_fetch_add(&w->fields, 1);
            } else if (strcmp(fe->code, QR_E_UNDEFINED_OBJECT) != 0) {
                w->failed[slot] = 1;
                return;
            }
        }
}

int qr_sql_db_warm(qr_sql_db *db, const atomic_int *stop, uint32_t *segs, uint64_t *fields,
                   qr_err *e)
{
    *segs = 0;
    *fields = 0;
    if (catalog_fresh(db, e) != 0)
        return -1;
    for (uint32_t i = 0;; i++) {
        if (stop && atomic_load(stop))
            return 0;
        /* one table at a time under the catalog (a DROP waits for it) */
        pthread_rwlock_rdlock(&db->catlock);
        if (i >= db->cat.ntables) {
            pthread_rwlock_unlock(&db->catlock);
            return 0;
        }
        const qr_tabdef *def = db->cat.tables[i];
        tsnap *t = table_snap(db, def->name, e);
        if (!t) {
            pthread_rwlock_unlock(&db->catlock);
            return -1;
        }
        uint32_t n = t->t->man.nsegs;
        int rc = 0;
        if (n && *segs + n <= QR_SEGCACHE_DEFAULT_SEGMENTS) { /* the bound db->cache has */
            qr_segref **refs = malloc(sizeof *refs * n);
            int held = 0;
            if (!refs)
                rc = qr_errf(e, QR_E_NOMEM, "out of memory");
            else if ((rc = qr_segcache_acquire_all(db->cache, t->t->dir, &t->t->man, refs, db->pool,
                                                   db->threads, e)) == 0)
                held = 1;
            fields_job *w = held ? calloc(1, sizeof *w) : NULL; /* zeroed: counts, errors */
            if (held && !w)
                rc = qr_errf(e, QR_E_NOMEM, "out of memory");
            if (w) {
                w->refs = refs;
                w->n = n;
                w->def = def;
                w->stop = stop;
                w->k = (uint32_t)(db->threads < QR_MAX_SEARCH_THREADS ? db->threads
                                                                      : QR_MAX_SEARCH_THREADS);
                qr_pool_run(db->pool, (int)w->k, warm_fields, w);
                *fields += atomic_load(&w->fields);
                for (uint32_t j = 0; j < w->k && rc == 0; j++)
                    if (w->failed[j]) {
                        *e = w->err[j];
                        rc = -1;
                    }
                free(w);
            }
            if (held) {
                qr_segcache_release_all(refs, n);
                if (rc == 0)
                    *segs += n;
            }
            free(refs);
        }
        snap_unref(db, t);
        pthread_rwlock_unlock(&db->catlock);
        if (rc != 0)
            return -1;
    }
}

/* Handles on the segments a statement reads of table snapshot t: the
 * manifest's, then the live segments of ls newer than it (sql/live.h), in
 * *refs (from ctx) and *n. 0, or -1 with e set and nothing held. */
static int acquire_snap(qr_sql_db *db, tsnap *t, const qr_live_snap *ls, qr_segref ***refs,
                        uint32_t *n, int threads, qr_qctx *ctx, qr_err *e)
{
    const qr_manifest *m = &t->t->man;
    uint32_t k = 0;
    while (k < ls->n && ls->seqs[k] <= m->wal_seq)
        k++;
    qr_manifest lm;
    memset(&lm, 0, sizeof lm);
    lm.segs = ls->n ? ls->ents + k : NULL; /* NULL + 0 is undefined */
    lm.nsegs = ls->n - k;
    if (ls->dir[0] && !atomic_exchange(&t->live_swept, 1)) /* those this manifest holds */
        qr_segcache_invalidate(db->cache, ls->dir, &lm);
    *n = m->nsegs + lm.nsegs;
    *refs = qr_qmalloc(ctx, sizeof **refs * (*n ? *n : 1));
    if (!*refs)
        return qr_qctx_nomem(ctx, e);
    int rc = qr_segcache_acquire_all(db->cache, t->t->dir, m, *refs, db->pool, threads, e);
    if (rc == 0 && lm.nsegs &&
        (rc = qr_segcache_acquire_all(db->cache, ls->dir, &lm, *refs + m->nsegs, db->pool, threads,
                                      e)) != 0)
        qr_segcache_release_all(*refs, m->nsegs);
    if (rc != 0) {
        qr_qfree(ctx, *refs);
        *refs = NULL;
    }
    return rc;
}

/* Run a bound SELECT over its tables' latest segments, held through the
 * segment cache for the statement's length. */
static int run_select(qr_sql_session *s, const qr_sqlsel *sel, int kind, qr_result *out, qr_err *e)
{
    qr_sql_db *db = s->db;
    int threads = s->set.threads > 0 && s->set.threads < db->threads ? s->set.threads : db->threads;
    if (!sel->def && !sel->scope.n) /* no FROM */
        return qr_sql_run(sel, kind, NULL, 0, db->pool, threads, out, e);
    uint32_t n = sel->scope.n ? sel->scope.n : 1;
    tsnap *t[QR_SQL_MAX_RANGES] = {0};
    qr_segref **refs[QR_SQL_MAX_RANGES] = {0};
    uint32_t ns[QR_SQL_MAX_RANGES] = {0};
    int held[QR_SQL_MAX_RANGES] = {0};
    qr_result *sub[QR_SQL_MAX_RANGES] = {0};
    int rc = 0;
    for (uint32_t r = 0; r < n && rc == 0; r++) {
        if (sel->scope.n && sel->rng[r].sub) { /* a subquery: its rows first */
            if (!(sub[r] = qr_qmalloc(out->ctx, sizeof *sub[r]))) {
                rc = qr_qctx_nomem(out->ctx, e);
                break;
            }
            qr_result_init(sub[r], out->ctx);
            rc = run_select(s, sel->rng[r].sub, sel->rng[r].sub_kind, sub[r], e);
            continue;
        }
        const char *name = sel->scope.n ? sel->scope.r[r].def->name : sel->def->name;
        /* a commit between reading the manifest and opening its segments
         * (a merge, an index build, VACUUM) may have removed one of them:
         * then the newer manifest is read and opened instead */
        for (int attempt = 0;; attempt++) {
            qr_live_snap ls; /* before the manifest: see live.h */
            if (qr_live_snapshot(db, name, &ls, e) != 0) {
                rc = -1;
                break;
            }
            if (!(t[r] = table_snap(db, name, e))) {
                qr_live_snapshot_done(&ls);
                rc = -1;
                break;
            }
            rc = acquire_snap(db, t[r], &ls, &refs[r], &ns[r], threads, out->ctx, e);
            qr_live_snapshot_done(&ls);
            if (rc == 0 || attempt == 4 || !snap_stale(db, t[r]))
                break;
            snap_unref(db, t[r]);
            t[r] = NULL;
        }
        if (!t[r])
            break;
        held[r] = rc == 0;
    }
    if (rc == 0)
        rc = kind == QR_PLAN_JOIN
                 ? qr_sql_run_join(sel, refs, ns, sub, db->pool, threads, merge_join_on(s), out, e)
                 : qr_sql_run(sel, kind, refs[0], ns[0], db->pool, threads, out, e);
    for (uint32_t r = 0; r < n; r++)
        if (sub[r]) {
            qr_result_free(sub[r]);
            qr_qfree(out->ctx, sub[r]);
        }
    for (uint32_t r = 0; r < n; r++) {
        if (held[r])
            qr_segcache_release_all(refs[r], ns[r]);
        qr_qfree(out->ctx, refs[r]);
        if (t[r])
            snap_unref(db, t[r]);
    }
    return rc;
}

static int run_arm(void *ctx, const qr_sqlsel *sel, int kind, qr_result *out, qr_err *e)
{
    return run_select(ctx, sel, kind, out, e);
}

/* A scalar or EXISTS subquery, run on its own (initplan.h). */
static int run_sub(void *ctx, PgQuery__Node *sub, qr_result *out, qr_err *e)
{
    qr_sql_session *s = ((void **)ctx)[0];
    const qr_sqlparse *p = ((void **)ctx)[1];
    return qr_sql_select_node(s, p, sub, out, e);
}

/* ---- what the catalog answers read (pgcat.h) ---- */
static int env_setting(void *ctx, const char *name, char *buf, size_t n, qr_err *e)
{
    return qr_sql_show(ctx, name, buf, n, e);
}

static int64_t env_table_rows(void *ctx, const char *table)
{
    qr_sql_session *s = ctx;
    qr_err e;
    tsnap *t = table_snap(s->db, table, &e);
    if (!t)
        return -1;
    int64_t rows = 0;
    for (uint32_t i = 0; i < t->t->man.nsegs; i++)
        rows += (int64_t)(t->t->man.segs[i].rows - t->t->man.segs[i].deleted);
    snap_unref(s->db, t);
    return rows;
}

/* the bytes of the table's segment files (what its rows and indexes take) */
static int64_t env_table_bytes(void *ctx, const char *table)
{
    qr_sql_session *s = ctx;
    qr_err e;
    tsnap *t = table_snap(s->db, table, &e);
    if (!t)
        return -1;
    int64_t bytes = 0;
    for (uint32_t i = 0; i < t->t->man.nsegs; i++)
        bytes += (int64_t)t->t->man.segs[i].file_bytes;
    snap_unref(s->db, t);
    return bytes;
}

static void pgcat_env(qr_sql_session *s, qr_pgcat_env *env)
{
    *env = (qr_pgcat_env){.cat = &s->db->cat,
                          .user = s->user[0] ? s->user : "quarry",
                          .database = "quarry",
                          .pid = s->backend_pid,
                          .setting = env_setting,
                          .table_rows = env_table_rows,
                          .table_bytes = env_table_bytes,
                          .ctx = s};
}

/* A SELECT, UNION or EXPLAIN [ANALYZE] (the catalog held shared). */
static int select_statement(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__Node *st,
                            qr_arena *a, qr_result *out, qr_err *e)
{
    if (qr_pgcat_wants(st, &s->db->cat)) { /* pg_catalog, information_schema, version() ... */
        qr_pgcat_env env;
        pgcat_env(s, &env);
        return qr_pgcat_exec(&env, p, st, out, e);
    }
    void *sub[2] = {s, (void *)p};
    if (qr_sql_initplans((qr_sqlparse *)p, (PgQuery__Node *)st, run_sub, sub, out->ctx, e) != 0)
        return -1;
    if (st->node_case == PG_QUERY__NODE__NODE_SELECT_STMT &&
        st->select_stmt->op != PG_QUERY__SET_OPERATION__SETOP_NONE) /* UNION */
        return qr_sql_union(p, st->select_stmt, &s->db->cat, a, run_arm, s, out, e);
    qr_sqlsel sel;
    int kind = 0;
    int rc = qr_sql_bind(p, st, &s->db->cat, &sel, a, e) == 0 ? qr_sql_plan(&sel, &kind, e) : -1;
    sel.no_merge_join = !merge_join_on(s);
    qr_sqlstats stats;
    if (rc == 0 && sel.explain == 2) { /* EXPLAIN ANALYZE: run it, keep the figures */
        memset(&stats, 0, sizeof stats);
        sel.stats = &stats;
        qr_result scratch;
        qr_result_init(&scratch, out->ctx);
        int64_t t0 = qr_qctx_now_ns();
        rc = run_select(s, &sel, kind, &scratch, e);
        stats.t_total = qr_qctx_now_ns() - t0;
        stats.out = scratch.nrows;
        qr_result_free(&scratch);
    }
    if (rc == 0)
        rc = sel.explain ? explain_rows(&sel, kind, out, e) : run_select(s, &sel, kind, out, e);
    return rc;
}

int qr_sql_exec(qr_sql_session *s, const char *sql, size_t n, qr_result *out, qr_err *e)
{
    qr_sql_db *db = s->db;
    if (catalog_fresh(db, e) != 0)
        return -1;
    qr_sqlparse p;
    qr_arena a; /* the statement's tree and names */
    qr_arena_init(&a, 16 << 10, 0);
    qr_arena_set_ctx(&a, out->ctx);
    int rc = qr_sqlp_parse(&p, sql, n, e);
    const PgQuery__Node *st = rc == 0 ? one_statement(&p, e) : NULL;
    int select = st && (st->node_case == PG_QUERY__NODE__NODE_SELECT_STMT ||
                        st->node_case == PG_QUERY__NODE__NODE_EXPLAIN_STMT);
    if (!st || qr_tx_admit(s, st, e) != 0) {
        rc = -1;
    } else if (!select) {
        /* SET, DDL, INSERT, COPY ... (stmt.h): each takes the locks it needs */
        rc = qr_sql_stmt(s, &p, st, out, e);
    } else {
        pthread_rwlock_rdlock(&db->catlock);
        rc = select_statement(s, &p, st, &a, out, e);
        pthread_rwlock_unlock(&db->catlock);
    }
    if (rc != 0)
        qr_tx_fail(s); /* an error ends what a transaction block may still commit */
    qr_sqlp_free(&p);
    qr_arena_free(&a);
    return rc;
}

/* ---- for the statement modules (db.h) ---- */

void qr_sqldb_lock(qr_sql_db *db, int exclusive)
{
    if (exclusive)
        pthread_rwlock_wrlock(&db->catlock);
    else
        pthread_rwlock_rdlock(&db->catlock);
}

void qr_sqldb_unlock(qr_sql_db *db) { pthread_rwlock_unlock(&db->catlock); }

const qr_catalog *qr_sqldb_catalog(const qr_sql_db *db) { return &db->cat; }

int qr_sqldb_reload(qr_sql_db *db, qr_err *e)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/CATALOG", db->dir);
    qr_catalog c;
    if (qr_catalog_load(db->dir, &c, e) != 0) {
        qr_catalog_free(&c);
        return -1;
    }
    qr_catalog_free(&db->cat);
    db->cat = c;
    file_id(path, &db->cat_id);
    return 0;
}

void qr_sqldb_forget_table(qr_sql_db *db, const char *name)
{
    tsnap *old = NULL;
    pthread_mutex_lock(&db->tlock);
    for (uint32_t i = 0; i < db->ntabs; i++)
        if (!strcasecmp(db->tabs[i]->t->name, name)) {
            old = db->tabs[i];
            db->tabs[i] = db->tabs[--db->ntabs];
            break;
        }
    pthread_mutex_unlock(&db->tlock);
    if (old)
        snap_unref(db, old);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/%s", db->dir, name);
    qr_segcache_invalidate(db->cache, dir, NULL);
    snprintf(dir, sizeof dir, "%s/%s/live", db->dir, name);
    qr_segcache_invalidate(db->cache, dir, NULL);
}

static int writing_at(const qr_sql_db *db, const char *name)
{
    for (uint32_t i = 0; i < db->nwriting; i++)
        if (!strcasecmp(db->writing[i], name))
            return (int)i;
    return -1;
}

int qr_sqldb_writer_begin(qr_sql_db *db, const char *name, qr_err *e)
{
    char *copy = strdup(name);
    if (!copy)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    pthread_mutex_lock(&db->tlock);
    while (writing_at(db, name) >= 0 || db->nwriting == SQL_MAX_TABLES)
        pthread_cond_wait(&db->wcv, &db->tlock);
    db->writing[db->nwriting++] = copy;
    pthread_mutex_unlock(&db->tlock);
    return 0;
}

int qr_sqldb_writer_try(qr_sql_db *db, const char *name, uint32_t wait_ms, qr_err *e)
{
    char *copy = strdup(name);
    if (!copy)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    struct timespec until = qr_abstime_after_ms(wait_ms);
    pthread_mutex_lock(&db->tlock);
    int timed_out = 0;
    while (!timed_out && (writing_at(db, name) >= 0 || db->nwriting == SQL_MAX_TABLES))
        timed_out = pthread_cond_timedwait(&db->wcv, &db->tlock, &until) != 0;
    if (!timed_out || (writing_at(db, name) < 0 && db->nwriting < SQL_MAX_TABLES)) {
        db->writing[db->nwriting++] = copy;
        copy = NULL;
    }
    pthread_mutex_unlock(&db->tlock);
    int got = copy == NULL;
    free(copy);
    return got ? 0 : 1;
}

void qr_sqldb_writer_end(qr_sql_db *db, const char *name)
{
    pthread_mutex_lock(&db->tlock);
    int at = writing_at(db, name);
    if (at >= 0) {
        free(db->writing[at]);
        db->writing[at] = db->writing[--db->nwriting];
    }
    pthread_cond_broadcast(&db->wcv);
    pthread_mutex_unlock(&db->tlock);
}

int qr_sql_select_node(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__Node *st,
                       qr_result *out, qr_err *e)
{
    qr_arena a;
    qr_arena_init(&a, 16 << 10, 0);
    qr_arena_set_ctx(&a, out->ctx);
    qr_sqlsel sel;
    int kind = 0;
    int rc;
    void *sub[2] = {s, (void *)p};
    if (qr_sql_initplans((qr_sqlparse *)p, (PgQuery__Node *)st, run_sub, sub, out->ctx, e) != 0) {
        rc = -1;
    } else if (st->node_case == PG_QUERY__NODE__NODE_SELECT_STMT &&
               st->select_stmt->op != PG_QUERY__SET_OPERATION__SETOP_NONE) { /* UNION */
        rc = qr_sql_union(p, st->select_stmt, &s->db->cat, &a, run_arm, s, out, e);
    } else {
        rc = qr_sql_bind(p, st, &s->db->cat, &sel, &a, e) == 0 ? qr_sql_plan(&sel, &kind, e) : -1;
        if (rc == 0 && sel.explain)
            rc = qr_errf(e, QR_E_FEATURE, "EXPLAIN is not supported here");
        if (rc == 0)
            rc = run_select(s, &sel, kind, out, e);
    }
    qr_arena_free(&a);
    return rc;
}

int qr_sql_table_matches(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__Node *st,
                         const qr_table *t, qr_qctx *ctx, qr_run_rows_fn fn, void *arg, qr_err *e)
{
    qr_sql_db *db = s->db;
    int threads = s->set.threads > 0 && s->set.threads < db->threads ? s->set.threads : db->threads;
    qr_arena a;
    qr_arena_init(&a, 16 << 10, 0);
    qr_arena_set_ctx(&a, ctx);
    void *subctx[2] = {s, (void *)p};
    uint32_t n = t->man.nsegs;
    qr_segref **refs = qr_qmalloc(ctx, sizeof *refs * (n ? n : 1));
    int rc = refs ? 0 : qr_qctx_nomem(ctx, e), held = 0;
    pthread_rwlock_rdlock(&db->catlock);
    qr_sqlsel sel;
    int kind = 0;
    if (rc == 0)
        rc = qr_sql_initplans((qr_sqlparse *)p, (PgQuery__Node *)st, run_sub, subctx, ctx, e);
    if (rc == 0)
        rc = qr_sql_bind(p, st, &db->cat, &sel, &a, e) == 0 ? qr_sql_plan(&sel, &kind, e) : -1;
    if (rc == 0 && !sel.def)
        rc = qr_errf(e, QR_E_INTERNAL, "DELETE: no table bound");
    if (rc == 0)
        held = (rc = qr_segcache_acquire_all(db->cache, t->dir, &t->man, refs, db->pool, threads,
                                             e)) == 0;
    if (rc == 0)
        rc = qr_sql_run_matches(&sel, refs, n, db->pool, threads, ctx, fn, arg, e);
    pthread_rwlock_unlock(&db->catlock);
    if (held)
        qr_segcache_release_all(refs, n);
    qr_qfree(ctx, refs);
    qr_arena_free(&a);
    return rc;
}

int qr_sql_split(const char *sql, size_t n, qr_sql_span **spans, uint32_t *nspans, qr_err *e)
{
    *spans = NULL;
    *nspans = 0;
    char *text = malloc(n + 1);
    if (!text)
        return qr_errf(e, QR_E_NOMEM, "out of memory splitting SQL");
    memcpy(text, sql, n);
    text[n] = 0;
    PgQuerySplitResult r = pg_query_split_with_scanner(text);
    int rc = 0;
    if (r.error || strlen(text) != n) {
        /* the scanner gave up (or a NUL byte inside): one statement, whose
         * parse reports the error with its position */
        if ((*spans = malloc(sizeof **spans)))
            **spans = (qr_sql_span){0, (uint32_t)n}, *nspans = 1;
        else
            rc = qr_errf(e, QR_E_NOMEM, "out of memory splitting SQL");
    } else if (r.n_stmts > 0) {
        if (!(*spans = malloc(sizeof **spans * (size_t)r.n_stmts)))
            rc = qr_errf(e, QR_E_NOMEM, "out of memory splitting SQL");
        for (int i = 0; rc == 0 && i < r.n_stmts; i++) {
            uint32_t off = (uint32_t)r.stmts[i]->stmt_location;
            uint32_t len = (uint32_t)r.stmts[i]->stmt_len;
            if (len == 0 && off < n) /* the last statement, without a ';' */
                len = (uint32_t)n - off;
            int blank = 1;
            for (uint32_t k = off; k < off + len && blank; k++)
                blank = text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r';
            if (!blank)
                (*spans)[(*nspans)++] = (qr_sql_span){off, len};
        }
    }
    pg_query_free_split_result(r);
    free(text);
    return rc;
}
