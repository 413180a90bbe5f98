/* merge.c - the merge policy and one background merge (merge.h). */
#include "sql/merge.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "index/catalog.h"
#include "index/deletes.h"
#include "index/invindex.h"
#include "sql/db.h"
#include "sql/live.h"
#include "sql/rows.h"
#include "util/fsutil.h"

static int is_final(const qr_seg_entry *segs, const uint64_t *raw, uint32_t i)
{
    return segs[i].rows >= QR_MERGE_FINAL_ROWS || (raw && raw[i] >= QR_MERGE_LINE_BYTES / 2);
}

int qr_merge_pick(const qr_seg_entry *segs, const uint64_t *raw, uint32_t nsegs, int idle,
                  uint32_t *first, uint32_t *n)
{
    /* small: a run of the flusher's small commits */
    for (uint32_t i = 0; i < nsegs;) {
        uint32_t j = i;
        while (j < nsegs && segs[j].rows < QR_MERGE_BASE_ROWS && !is_final(segs, raw, j))
            j++;
        if (j - i >= QR_MERGE_FACTOR) {
            *first = i;
            *n = j - i < QR_MERGE_MAX_RUN ? j - i : QR_MERGE_MAX_RUN;
            return 1;
        }
        i = j + 1;
    }
    /* to final: the prefix of a non-final run that makes one: the
     * shortest of QR_MERGE_FINAL_ROWS rows, or the longest one merge holds
     * (its values over QR_MERGE_LINE_BYTES - a non-final segment's, so over
     * half), or QR_MERGE_MAX_RUN segments; idle, a whole run of
     * QR_MERGE_FACTOR or more short of that too */
    for (uint32_t i = 0; i < nsegs;) {
        uint64_t rows = 0, bytes = 0;
        uint32_t j = i;
        int full = 0;
        while (j < nsegs && !is_final(segs, raw, j)) {
            uint64_t b = raw ? raw[j] : 0;
            if (bytes + b > QR_MERGE_LINE_BYTES || rows + segs[j].rows > QR_MERGE_SEG_ROWS) {
                full = 1;
                break;
            }
            rows += segs[j].rows;
            bytes += b;
            j++;
            if (rows >= QR_MERGE_FINAL_ROWS || j - i == QR_MERGE_MAX_RUN) {
                full = 1;
                break;
            }
        }
        if (full || (idle && j - i >= QR_MERGE_FACTOR)) {
            *first = i;
            *n = j - i;
            return 1;
        }
        i = j + 1;
    }
    for (uint32_t i = 0; i < nsegs; i++) /* a quarter or more deleted: rewritten alone */
        if (segs[i].deleted && segs[i].deleted * QR_MERGE_EXPUNGE >= segs[i].rows) {
            *first = i;
            *n = 1;
            return 1;
        }
    return 0;
}

void qr_merge_clean(const char *table_dir)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/merge", table_dir);
    qr_unlink_all_in(dir);
    rmdir(dir);
}

static void unlink_all(const char *dir, const qr_seg_entry *s, uint32_t n)
{
    char path[PATH_MAX];
    for (uint32_t i = 0; i < n; i++) {
        qr_seg_path_in(dir, s[i].id, path, sizeof path);
        unlink(path);
    }
}

/* A change of the manifest: segment old[i] is replaced by made[from[i] ..
 * from[i] + count[i]) (none: it goes), in its place. */
typedef struct swap {
    const qr_seg_entry *old;
    uint32_t nold;
    const qr_seg_entry *made; /* files in mdir, under scratch ids */
    const uint32_t *from, *count;
} swap;

/* Where the manifest entry g is among w's old segments; -1 not there, -2
 * there but with other deletions than w read (a DELETE committed since:
 * the rows w rebuilt include rows now deleted, so w must not publish). */
static int64_t old_at(const swap *w, const qr_seg_entry *g)
{
    for (uint32_t i = 0; i < w->nold; i++)
        if (w->old[i].id == g->id)
            return w->old[i].del_gen == g->del_gen ? (int64_t)i : -2;
    return -1;
}

/* 1 when segments written with definition `made` carry every index of
 * `now` that queries use: an index that became usable while they were
 * written (qr_build_indexes_table marked it built) would be missing. */
static int carries_usable(const qr_tabdef *made, const qr_tabdef *now)
{
    for (uint32_t i = 0; i < now->nixs; i++) {
        const qr_ixdef *x = &now->ixs[i], *y = qr_tabdef_index_by_id(made, x->id);
        if (!x->building && (!y || y->col != x->col || y->kind != x->kind ||
                             y->lowercase != x->lowercase || y->positions != x->positions))
            return 0;
    }
    return 1;
}

/* Table name's writer slot (waited for in steps of 50 ms, so that a DROP,
 * which holds it while it waits for background work, or *cancel can make
 * this give up) and the table opened for writing into *t: 1, 0 given up
 * (the table went, another process writes it, *cancel), -1 with e. */
static int take_table(qr_sql_db *db, const char *name, const atomic_int *cancel, qr_table **t,
                      qr_err *e)
{
    for (;;) {
        int r = qr_sqldb_writer_try(db, name, 50, e);
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        if (atomic_load(cancel))
            return 0;
    }
    if (!(*t = qr_table_open(qr_sql_db_dir(db), name, QR_TABLE_WRITE, e))) {
        qr_sqldb_writer_end(db, name);
        return !strcmp(e->code, QR_E_UNDEFINED_TABLE) || !strcmp(e->code, QR_E_LOCKED) ? 0 : -1;
    }
    return 1;
}

/* Apply w, whose segments were written with definition `made`, to table
 * name's manifest: 1 done, 0 given up (a segment of it is not in the
 * manifest any more or has new deletions, an index was built meanwhile,
 * the table went, or *cancel), -1 with e. */
static int publish(qr_sql_db *db, const char *name, const char *mdir, const swap *w,
                   const qr_tabdef *made, const atomic_int *cancel, uint32_t *after, qr_err *e)
{
    qr_table *t;
    int r = take_table(db, name, cancel, &t, e);
    if (r <= 0)
        return r;
    uint32_t found = 0, nmade = 0;
    for (uint32_t i = 0; i < t->man.nsegs; i++)
        found += old_at(w, &t->man.segs[i]) >= 0;
    for (uint32_t i = 0; i < w->nold; i++)
        nmade += w->count[i];
    int rc = 0, done = 0;
    qr_seg_entry *list = NULL;
    uint64_t id = 0;
    uint32_t nl = 0, moved = 0;
    if (found == w->nold && carries_usable(made, t->def) && !atomic_load(cancel)) {
        list = malloc(sizeof *list * (t->man.nsegs + nmade + 1));
        rc = list ? 0 : qr_errf(e, QR_E_NOMEM, "out of memory");
        id = qr_table_reserve_ids(t, nmade);
    }
    char from[PATH_MAX], to[PATH_MAX];
    for (uint32_t i = 0; list && rc == 0 && i < t->man.nsegs; i++) {
        int64_t o = old_at(w, &t->man.segs[i]);
        if (o < 0) {
            list[nl++] = t->man.segs[i];
            continue;
        }
        for (uint32_t k = 0; rc == 0 && k < w->count[o]; k++) {
            const qr_seg_entry *m = &w->made[w->from[o] + k];
            qr_seg_path_in(mdir, m->id, from, sizeof from);
            qr_table_seg_path(t, id + moved, to, sizeof to);
            if ((rc = qr_rename(from, to, e)) == 0) {
                list[nl] = *m;
                list[nl++].id = id + moved++;
            }
        }
    }
    if (list && rc == 0 && (rc = qr_table_replace(t, list, nl, e)) == 0) {
        done = 1; /* the replaced segments' files are deleted by the commit */
        *after = nl;
    }
    if (list && !done)
        for (uint32_t i = 0; i < moved; i++) {
            qr_table_seg_path(t, id + i, to, sizeof to);
            unlink(to);
        }
    free(list);
    qr_table_close(t);
    qr_sqldb_writer_end(db, name);
    return rc != 0 ? -1 : done;
}

/* Raw value bytes of a segment: what its rows hold in memory in a merge. */
static uint64_t raw_bytes(const qr_segment *s)
{
    uint64_t n = 0;
    for (uint32_t c = 0; c < s->ncols; c++)
        n += s->cols[c].raw_bytes;
    return n;
}

/* Each segment's raw_bytes for the policy (those final by their rows
 * alone get 0: not read), malloc'ed; NULL with e set. */
static uint64_t *raw_sizes(const qr_table *t, qr_err *e)
{
    uint64_t *raw = calloc(t->man.nsegs ? t->man.nsegs : 1, sizeof *raw);
    if (!raw) {
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    char path[PATH_MAX];
    for (uint32_t i = 0; i < t->man.nsegs; i++) {
        if (t->man.segs[i].rows >= QR_MERGE_FINAL_ROWS)
            continue;
        qr_seg_path_in(t->dir, t->man.segs[i].id, path, sizeof path);
        qr_segment *s = qr_seg_open(path, e);
        if (!s) {
            free(raw);
            return NULL;
        }
        raw[i] = raw_bytes(s);
        qr_seg_close(s);
    }
    return raw;
}

/* The rows of segs[0..n) of t (those with sort column >= min_sort) as new
 * segments in mdir: *made (malloc'ed), *nm. Consecutive sources go into one
 * merged segment while it stays within QR_MERGE_SEG_ROWS rows and
 * QR_MERGE_LINE_BYTES of values (a source is never split), each written by
 * qr_segment_merge: columns decoded into a batch, postings merged. 0, or -1
 * with e set. */
static int rebuild(qr_table *t, const qr_seg_entry *segs, uint32_t n, int64_t min_sort,
                   const char *mdir, uint64_t first_id, const atomic_int *cancel,
                   qr_seg_entry **made, uint32_t *nm, qr_err *e)
{
    *made = NULL;
    *nm = 0;
    qr_merge_src *src = calloc(n ? n : 1, sizeof *src);
    qr_seg_entry *out = calloc(n ? n : 1, sizeof *out);
    int rc = src && out ? 0 : qr_errf(e, QR_E_NOMEM, "out of memory");
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        if (!(src[i].seg = qr_table_open_segment(t->dir, &segs[i], e)))
            rc = -1;
        else
            src[i].hi = (uint32_t)src[i].seg->rows;
    qr_seg_opts o;
    qr_seg_opts_default(&o);
    qr_qctx ctx;
    qr_qctx_init(&ctx, 0);
    qr_qctx_set_stop(&ctx, cancel, 0);
    uint64_t id = first_id;
    for (uint32_t i = 0; rc == 0 && i < n;) {
        uint32_t j = i + 1;
        uint64_t rows = src[i].seg->rows, bytes = raw_bytes(src[i].seg);
        while (j < n && rows + src[j].seg->rows <= QR_MERGE_SEG_ROWS &&
               bytes + raw_bytes(src[j].seg) <= QR_MERGE_LINE_BYTES) {
            rows += src[j].seg->rows;
            bytes += raw_bytes(src[j].seg);
            j++;
        }
        char path[PATH_MAX];
        qr_seg_path_in(mdir, id, path, sizeof path);
        qr_seg_summary sum;
        rc = qr_segment_merge(path, t->def, src + i, j - i, min_sort, &ctx, &o, &sum, e);
        if (rc == 0 && sum.rows)
            out[(*nm)++] =
                (qr_seg_entry){id++, sum.rows, sum.min_ts, sum.max_ts, sum.file_bytes, 0, 0};
        i = j;
    }
    for (uint32_t i = 0; src && i < n; i++)
        qr_seg_close(src[i].seg);
    free(src);
    if (rc != 0) {
        unlink_all(mdir, out, *nm);
        free(out);
        *nm = 0;
        return -1;
    }
    *made = out;
    return 0;
}

int qr_merge_table(qr_sql_db *db, const char *name, int idle, const atomic_int *cancel,
                   uint64_t *rows, uint32_t *before, uint32_t *after, qr_err *e)
{
    *rows = 0;
    qr_table *t = qr_table_open(qr_sql_db_dir(db), name, QR_TABLE_READ, e);
    if (!t)
        return !strcmp(e->code, QR_E_UNDEFINED_TABLE) ? 0 : -1;
    uint32_t first, n;
    uint64_t *raw = raw_sizes(t, e);
    int picked = raw ? qr_merge_pick(t->man.segs, raw, t->man.nsegs, idle, &first, &n) : -1;
    free(raw);
    if (picked <= 0) {
        qr_table_close(t);
        return picked;
    }
    *before = t->man.nsegs;
    qr_seg_entry run[QR_MERGE_MAX_RUN];
    memcpy(run, t->man.segs + first, sizeof *run * n);
    for (uint32_t i = 0; i < n; i++)
        *rows += run[i].rows;
    char mdir[PATH_MAX];
    snprintf(mdir, sizeof mdir, "%s/merge", t->dir);
    qr_seg_entry *made = NULL;
    uint32_t nm = 0;
    int rc = qr_mkdirs(mdir, e);
    if (rc == 0)
        rc = rebuild(t, run, n, INT64_MIN, mdir, 0, cancel, &made, &nm, e);
    if (rc == 0) {
        /* the run's first segment becomes the merged ones, the others go */
        uint32_t from[QR_MERGE_MAX_RUN] = {0}, count[QR_MERGE_MAX_RUN] = {0};
        count[0] = nm;
        swap w = {run, n, made, from, count};
        rc = publish(db, name, mdir, &w, t->def, cancel, after, e);
    } else if (!strcmp(e->code, QR_E_CANCELED)) {
        rc = 0;
    }
    if (rc != 1)
        unlink_all(mdir, made, nm);
    free(made);
    qr_table_close(t);
    return rc;
}

int qr_retain_table(qr_sql_db *db, const char *name, int64_t now_ns, const atomic_int *cancel,
                    uint64_t *dropped_rows, uint32_t *dropped_segs, qr_err *e)
{
    *dropped_rows = 0;
    *dropped_segs = 0;
    qr_table *t = qr_table_open(qr_sql_db_dir(db), name, QR_TABLE_READ, e);
    if (!t)
        return !strcmp(e->code, QR_E_UNDEFINED_TABLE) ? 0 : -1;
    const qr_tabdef *d = t->def;
    if (d->retention_s <= 0 || d->sort_col < 0 || d->retention_s > INT64_MAX / 1000000000) {
        qr_table_close(t);
        return 0;
    }
    int64_t cutoff = now_ns - d->retention_s * 1000000000;
    uint32_t n = t->man.nsegs;
    qr_seg_entry *old = malloc(sizeof *old * (n ? n : 1));
    uint32_t *from = calloc(n ? n : 1, sizeof *from), *count = calloc(n ? n : 1, sizeof *count);
    int rc = old && from && count ? 0 : qr_errf(e, QR_E_NOMEM, "out of memory");
    uint32_t nold = 0, ntrim = 0;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        const qr_seg_entry *sg = &t->man.segs[i];
        if (sg->rows == 0 || sg->min_ts >= cutoff)
            continue;
        /* past the limit whole, or at least half its time span: a trim */
        if (sg->max_ts < cutoff ||
            (uint64_t)(cutoff - sg->min_ts) * 2 >= (uint64_t)(sg->max_ts - sg->min_ts))
            old[nold++] = *sg;
    }
    char mdir[PATH_MAX];
    snprintf(mdir, sizeof mdir, "%s/merge", t->dir);
    qr_seg_entry *made = NULL;
    uint32_t nm = 0;
    if (rc == 0 && nold)
        rc = qr_mkdirs(mdir, e);
    for (uint32_t i = 0; rc == 0 && i < nold; i++) {
        from[i] = nm;
        if (old[i].max_ts < cutoff) { /* dropped whole */
            *dropped_rows += old[i].rows;
            (*dropped_segs)++;
            continue;
        }
        qr_seg_entry *part;
        uint32_t np;
        rc = rebuild(t, &old[i], 1, cutoff, mdir, 1000000 * (uint64_t)(ntrim + 1), cancel, &part,
                     &np, e);
        if (rc != 0)
            break;
        ntrim++;
        qr_seg_entry *nv = realloc(made, sizeof *nv * (nm + np + 1));
        if (!nv) {
            unlink_all(mdir, part, np);
            free(part);
            rc = qr_errf(e, QR_E_NOMEM, "out of memory");
            break;
        }
        made = nv;
        uint64_t kept = 0;
        for (uint32_t k = 0; k < np; k++) {
            made[nm + k] = part[k];
            kept += part[k].rows;
        }
        free(part);
        count[i] = np;
        nm += np;
        *dropped_rows += old[i].rows - kept;
    }
    uint32_t after = 0;
    if (rc == 0 && nold) {
        swap w = {old, nold, made, from, count};
        rc = publish(db, name, mdir, &w, t->def, cancel, &after, e);
    } else if (rc != 0 && !strcmp(e->code, QR_E_CANCELED)) {
        rc = 0;
    }
    if (rc != 1)
        unlink_all(mdir, made, nm);
    if (rc != 1)
        *dropped_rows = *dropped_segs = 0;
    free(made);
    free(old);
    free(from);
    free(count);
    qr_table_close(t);
    return rc;
}

/* ---- index builds ---- */

/* 1 when segment s of t lacks an index of t->def being built; 0 when not;
 * -2 when its file is gone (a VACUUM or TRUNCATE replaced it since t's
 * manifest was read); -1 with e. */
static int lacks_index(const qr_table *t, const qr_seg_entry *s, qr_err *e)
{
    qr_segment *sg = qr_table_open_segment(t->dir, s, e);
    if (!sg) {
        char path[PATH_MAX];
        qr_seg_path_in(t->dir, s->id, path, sizeof path);
        return access(path, F_OK) != 0 ? -2 : -1;
    }
    int lacks = 0;
    for (uint32_t i = 0; i < t->def->nixs && !lacks; i++)
        lacks = t->def->ixs[i].building && !qr_seg_has_index(sg, t->def, &t->def->ixs[i]);
    qr_seg_close(sg);
    return lacks;
}

/* With the table's writer slot and LOCK: when every segment holds the
 * indexes being built, they are marked built in the catalog (queries use
 * them from the next statement). 1 marked, 0 given up (a segment lacks
 * one: a merge of the old definition committed meanwhile; the table went;
 * *cancel), -1 with e. */
static int mark_built(qr_sql_db *db, const char *name, const atomic_int *cancel, qr_err *e)
{
    qr_table *t;
    int r = take_table(db, name, cancel, &t, e);
    if (r <= 0)
        return r;
    int rc = 1;
    for (uint32_t i = 0; rc == 1 && i < t->man.nsegs; i++) {
        int l = lacks_index(t, &t->man.segs[i], e);
        rc = l == -1 ? -1 : l ? 0 : 1;
    }
    if (rc == 1 && !qr_live_carries(db, name, t->def)) /* and the live segments */
        rc = 0;
    qr_tabdef *d = rc == 1 ? qr_tabdef_clone(t->def) : NULL;
    if (rc == 1 && !d)
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    if (rc == 1) {
        for (uint32_t i = 0; i < d->nixs; i++)
            d->ixs[i].building = 0;
        /* the table's slot and LOCK are held: its definition cannot change
         * under us (DDL takes them first) */
        qr_sqldb_lock(db, 1);
        if (qr_catalog_replace_table(qr_sql_db_dir(db), d, e) != 0)
            rc = -1;
        int rl = qr_sqldb_reload(db, rc == 1 ? e : NULL);
        rc = rc == 1 && rl != 0 ? -1 : rc;
        qr_sqldb_forget_table(db, name);
        qr_sqldb_unlock(db);
    }
    qr_tabdef_free(d);
    qr_table_close(t);
    qr_sqldb_writer_end(db, name);
    return rc;
}

int qr_build_indexes_table(qr_sql_db *db, const char *name, const atomic_int *cancel,
                           uint32_t budget_ms, uint32_t *built, uint32_t *left, qr_err *e)
{
    *built = *left = 0;
    qr_table *t = qr_table_open(qr_sql_db_dir(db), name, QR_TABLE_READ, e);
    if (!t)
        return !strcmp(e->code, QR_E_UNDEFINED_TABLE) ? 0 : -1;
    int building = 0;
    for (uint32_t i = 0; i < t->def->nixs; i++)
        building |= t->def->ixs[i].building;
    if (!building) {
        qr_table_close(t);
        return 0;
    }
    uint32_t n = t->man.nsegs;
    qr_seg_entry *todo = malloc(sizeof *todo * (n ? n : 1));
    int rc = todo ? 0 : qr_errf(e, QR_E_NOMEM, "out of memory");
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        int l = lacks_index(t, &t->man.segs[i], e);
        if (l == -2) { /* the table changed: the next call looks again */
            free(todo);
            qr_table_close(t);
            return 0;
        }
        if (l < 0)
            rc = -1;
        else if (l)
            todo[(*left)++] = t->man.segs[i];
    }
    char mdir[PATH_MAX];
    snprintf(mdir, sizeof mdir, "%s/merge", t->dir);
    if (rc == 0 && *left)
        rc = qr_mkdirs(mdir, e);
    /* one segment at a time, each its own commit: the writer slot is held
     * only to swap it in, so ingest and merges go on meanwhile */
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint32_t i = 0; rc == 0 && i < *left;) {
        qr_seg_entry *made = NULL;
        uint32_t nm = 0, after = 0, from = 0, count;
        rc = rebuild(t, &todo[i], 1, INT64_MIN, mdir, 0, cancel, &made, &nm, e);
        if (rc == 0) {
            count = nm;
            swap w = {&todo[i], 1, made, &from, &count};
            rc = publish(db, name, mdir, &w, t->def, cancel, &after, e);
        }
        if (rc != 1)
            unlink_all(mdir, made, nm);
        free(made);
        if (rc != 1)
            break; /* given up: the table changed; the next call looks again */
        rc = 0;
        (*built)++;
        (*left)--;
        todo[i] = todo[*left]; /* order does not matter */
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >=
            (long)budget_ms)
            break;
    }
    if (rc == 1 || (rc < 0 && !strcmp(e->code, QR_E_CANCELED)))
        rc = 0;
    free(todo);
    qr_table_close(t);
    if (rc == 0 && *left == 0 && !atomic_load(cancel)) {
        int m = mark_built(db, name, cancel, e);
        if (m < 0)
            return -1;
        if (m > 0)
            rmdir(mdir); /* when empty: the merger's next merge makes it again */
        if (m == 0 && !*built)
            return 0;
        return 1;
    }
    return rc < 0 ? -1 : *built > 0;
}
