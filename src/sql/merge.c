/* merge.c - the merge policy and one background merge (merge.h). */
#include "sql/merge.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sql/db.h"
#include "sql/rows.h"
#include "util/fsutil.h"

static int level_of(uint64_t rows)
{
    int l = 0;
    for (uint64_t b = QR_MERGE_BASE_ROWS; rows >= b && l < 40; b *= QR_MERGE_FACTOR)
        l++;
    return l;
}

int qr_merge_pick(const qr_seg_entry *segs, uint32_t nsegs, uint32_t *first, uint32_t *n)
{
    int top = 0;
    for (uint32_t i = 0; i < nsegs; i++)
        if (segs[i].rows < QR_MERGE_FINAL_ROWS && level_of(segs[i].rows) > top)
            top = level_of(segs[i].rows);
    for (int l = 0; l <= top; l++) {
        for (uint32_t i = 0; i < nsegs;) {
            uint32_t j = i;
            while (j < nsegs && segs[j].rows < QR_MERGE_FINAL_ROWS && level_of(segs[j].rows) <= l)
                j++;
            if (j - i >= QR_MERGE_FACTOR) {
                *first = i;
                *n = j - i < QR_MERGE_MAX_RUN ? j - i : QR_MERGE_MAX_RUN;
                return 1;
            }
            i = j + 1;
        }
    }
    return 0;
}

void qr_merge_clean(const char *table_dir)
{
    char dir[PATH_MAX], path[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/merge", table_dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.' &&
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name) < (int)sizeof path)
            unlink(path);
    closedir(d);
    rmdir(dir);
}

static int add_line(void *w, const char *line, size_t n, qr_err *e)
{
    return qr_rows_add(w, line, n - 1, e); /* without its '\n' */
}

/* Where the run segs[0..n) (by id) is in m now; -1 when it is not whole. */
static int64_t run_at(const qr_manifest *m, const qr_seg_entry *run, uint32_t n)
{
    for (uint32_t i = 0; i + n <= m->nsegs; i++) {
        if (m->segs[i].id != run[0].id)
            continue;
        for (uint32_t k = 1; k < n; k++)
            if (m->segs[i + k].id != run[k].id)
                return -1;
        return i;
    }
    return -1;
}

static void unlink_all(const char *dir, const qr_seg_entry *s, uint32_t n)
{
    char path[PATH_MAX];
    for (uint32_t i = 0; i < n; i++) {
        qr_seg_path_in(dir, s[i].id, path, sizeof path);
        unlink(path);
    }
}

/* Swap the merged segments made[0..nm) (files in mdir) in for run[0..n)
 * of table name: 1 done, 0 given up, -1 with e set. */
static int publish(qr_sql_db *db, const char *name, const char *mdir, const qr_seg_entry *run,
                   uint32_t n, const qr_seg_entry *made, uint32_t nm, const atomic_int *cancel,
                   uint32_t *after, qr_err *e)
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
    qr_table *t = qr_table_open(qr_sql_db_dir(db), name, QR_TABLE_WRITE, e);
    if (!t) {
        qr_sqldb_writer_end(db, name);
        return !strcmp(e->code, QR_E_UNDEFINED_TABLE) ? 0 : -1;
    }
    int64_t at = run_at(&t->man, run, n);
    int rc = 0;
    qr_seg_entry *list = NULL;
    uint32_t nl = 0, moved = 0;
    if (at >= 0 && !atomic_load(cancel)) {
        nl = t->man.nsegs - n + nm;
        list = malloc(sizeof *list * (nl ? nl : 1));
        rc = list ? 0 : qr_errf(e, QR_E_NOMEM, "out of memory");
    }
    if (list && rc == 0) {
        uint64_t id = qr_table_reserve_ids(t, nm);
        memcpy(list, t->man.segs, sizeof *list * (size_t)at);
        char from[PATH_MAX], to[PATH_MAX];
        for (uint32_t i = 0; i < nm && rc == 0; i++) {
            list[at + i] = made[i];
            list[at + i].id = id + i;
            qr_seg_path_in(mdir, made[i].id, from, sizeof from);
            qr_table_seg_path(t, id + i, to, sizeof to);
            if ((rc = qr_rename(from, to, e)) == 0)
                moved++;
        }
        memcpy(list + at + nm, t->man.segs + at + n, sizeof *list * (t->man.nsegs - at - n));
        if (rc == 0)
            rc = qr_table_replace(t, list, nl, e); /* deletes the run's files */
        if (rc != 0) {
            char path[PATH_MAX];
            for (uint32_t i = 0; i < moved; i++) {
                qr_table_seg_path(t, id + i, path, sizeof path);
                unlink(path);
            }
        } else {
            *after = nl;
        }
    }
    int done = list && rc == 0;
    free(list);
    qr_table_close(t);
    qr_sqldb_writer_end(db, name);
    return rc != 0 ? -1 : done;
}

int qr_merge_table(qr_sql_db *db, const char *name, const atomic_int *cancel, uint64_t *rows,
                   uint32_t *before, uint32_t *after, qr_err *e)
{
    *rows = 0;
    qr_table *t = qr_table_open(qr_sql_db_dir(db), name, QR_TABLE_READ, e);
    if (!t)
        return !strcmp(e->code, QR_E_UNDEFINED_TABLE) ? 0 : -1;
    uint32_t first, n;
    if (!qr_merge_pick(t->man.segs, t->man.nsegs, &first, &n)) {
        qr_table_close(t);
        return 0;
    }
    *before = t->man.nsegs;
    qr_seg_entry run[QR_MERGE_MAX_RUN];
    memcpy(run, t->man.segs + first, sizeof *run * n);
    for (uint32_t i = 0; i < n; i++)
        *rows += run[i].rows;
    char mdir[PATH_MAX];
    snprintf(mdir, sizeof mdir, "%s/merge", t->dir);
    int rc = qr_mkdirs(mdir, e);
    /* the new segments are built beside the table, under scratch ids */
    qr_table scratch = {.dir = mdir, .name = t->name, .def = t->def, .lock_fd = -1};
    qr_table sub = *t;
    sub.man.segs = run;
    sub.man.nsegs = n;
    qr_qctx ctx;
    qr_qctx_init(&ctx, 0);
    qr_qctx_set_stop(&ctx, cancel, 0);
    qr_rowwriter w;
    qr_seg_entry *made = NULL;
    uint32_t nm = 0;
    if (rc == 0 && (rc = qr_rows_begin_sized(&w, &scratch, t->def, QR_MERGE_SEG_ROWS,
                                             QR_MERGE_LINE_BYTES, NULL, e)) == 0) {
        rc = qr_rows_each(&sub, t->def, add_line, NULL, &w, &ctx, e);
        if (rc == 0)
            rc = qr_rows_finish(&w, &made, &nm, e);
        else
            qr_rows_abort(&w);
    }
    if (rc == 0)
        rc = publish(db, name, mdir, run, n, made, nm, cancel, after, e);
    else if (!strcmp(e->code, QR_E_CANCELED))
        rc = 0;
    if (rc != 1)
        unlink_all(mdir, made, nm);
    free(made);
    qr_table_close(t);
    return rc;
}
