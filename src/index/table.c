/* table.c - table directories, the manifest file and the writer lock
 * (see table.h; manifest layout in docs/FORMAT.md).
 *
 * MANIFEST: "QRYMANI\n" | u32 version | u32 0 | u64 generation | u64 next_id |
 * u64 wal_seq (version 2) | u32 nsegs | nsegs x {u64 id, u64 rows, i64 min_ts, i64 max_ts,
 * u64 file_bytes, u64 del_gen, u64 deleted (version 3)} | u32 checksum (XXH3 low 32 bits
 * of all preceding bytes).
 */
#include "index/table.h"

#include "index/catalog.h"
#include "index/deletes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/hash.h"

#define MAN_MAGIC "QRYMANI\n"
#define MAN_ENTRY_V2 40u
#define MAN_ENTRY    56u

void qr_manifest_encode(const qr_manifest *m, qr_buf *out)
{
    size_t start = out->len;
    qr_buf_put(out, MAN_MAGIC, 8);
    qr_buf_put_u32(out, QR_MANIFEST_VERSION);
    qr_buf_put_u32(out, 0);
    qr_buf_put_u64(out, m->generation);
    qr_buf_put_u64(out, m->next_id);
    qr_buf_put_u64(out, m->wal_seq);
    qr_buf_put_u32(out, m->nsegs);
    for (uint32_t i = 0; i < m->nsegs; i++) {
        const qr_seg_entry *s = &m->segs[i];
        qr_buf_put_u64(out, s->id);
        qr_buf_put_u64(out, s->rows);
        qr_buf_put_u64(out, (uint64_t)s->min_ts);
        qr_buf_put_u64(out, (uint64_t)s->max_ts);
        qr_buf_put_u64(out, s->file_bytes);
        qr_buf_put_u64(out, s->del_gen);
        qr_buf_put_u64(out, s->deleted);
    }
    if (!out->oom)
        qr_buf_put_u32(out, qr_checksum32(out->p + start, out->len - start));
}

int qr_manifest_decode(const unsigned char *p, size_t n, const char *path, qr_manifest *m,
                       qr_err *e)
{
    memset(m, 0, sizeof *m);
    if (n < 36 || memcmp(p, MAN_MAGIC, 8) != 0)
        return qr_errf(e, QR_E_CORRUPT, "manifest %s: corrupt: bad magic or too short", path);
    if (qr_checksum32(p, n - 4) != qr_load_u32(p + n - 4))
        return qr_errf(e, QR_E_CORRUPT, "manifest %s: corrupt: checksum mismatch", path);
    qr_rd r;
    qr_rd_init(&r, p + 8, n - 12);
    uint32_t ver = qr_rd_u32(&r);
    (void)qr_rd_u32(&r);
    if (ver < 1 || ver > QR_MANIFEST_VERSION)
        return qr_errf(e, QR_E_VERSION, "manifest %s: format version %u, this build reads 1 to %u",
                       path, ver, QR_MANIFEST_VERSION);
    m->generation = qr_rd_u64(&r);
    m->next_id = qr_rd_u64(&r);
    m->wal_seq = ver >= 2 ? qr_rd_u64(&r) : 0;
    uint32_t ns = qr_rd_u32(&r);
    uint64_t entry = ver >= 3 ? MAN_ENTRY : MAN_ENTRY_V2;
    if (r.bad || (uint64_t)ns * entry != qr_rd_left(&r))
        return qr_errf(e, QR_E_CORRUPT,
                       "manifest %s: corrupt: segment count %u does not match size", path, ns);
    m->segs = calloc(ns ? ns : 1, sizeof *m->segs);
    if (!m->segs)
        return qr_errf(e, QR_E_NOMEM, "manifest %s: out of memory", path);
    for (uint32_t i = 0; i < ns; i++) {
        qr_seg_entry *s = &m->segs[i];
        s->id = qr_rd_u64(&r);
        s->rows = qr_rd_u64(&r);
        s->min_ts = (int64_t)qr_rd_u64(&r);
        s->max_ts = (int64_t)qr_rd_u64(&r);
        s->file_bytes = qr_rd_u64(&r);
        s->del_gen = ver >= 3 ? qr_rd_u64(&r) : 0;
        s->deleted = ver >= 3 ? qr_rd_u64(&r) : 0;
        const char *bad = s->id >= m->next_id ? "segment id %llu >= next id"
                          : (s->del_gen == 0) != (s->deleted == 0) ||
                                  (s->deleted && s->deleted >= s->rows) ||
                                  s->del_gen > m->generation
                              ? "segment %llu: bad deletion entry"
                              : NULL;
        if (bad) {
            char what[96];
            snprintf(what, sizeof what, bad, (unsigned long long)s->id);
            free(m->segs);
            m->segs = NULL;
            return qr_errf(e, QR_E_CORRUPT, "manifest %s: corrupt: %s", path, what);
        }
    }
    m->nsegs = ns;
    return 0;
}

int qr_table_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 63 || (name[0] >= '0' && name[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return 0;
    }
    return 1;
}

void qr_seg_path_in(const char *dir, uint64_t id, char *buf, size_t n)
{
    snprintf(buf, n, "%s/seg-%016llx.qseg", dir, (unsigned long long)id);
}

void qr_table_seg_path(const qr_table *t, uint64_t id, char *buf, size_t n)
{
    qr_seg_path_in(t->dir, id, buf, n);
}

static int in_manifest(const qr_manifest *m, uint64_t id)
{
    for (uint32_t i = 0; i < m->nsegs; i++)
        if (m->segs[i].id == id)
            return 1;
    return 0;
}

/* Some entry of segs[0..n) names deletion file (id, gen). */
static int del_named(const qr_seg_entry *segs, uint32_t n, uint64_t id, uint64_t gen)
{
    for (uint32_t i = 0; i < n; i++)
        if (segs[i].id == id && segs[i].del_gen == gen)
            return 1;
    return 0;
}

/* Remove segment, deletion and temp files the manifest does not name. */
static void remove_leftovers(qr_table *t)
{
    DIR *d = opendir(t->dir);
    if (!d)
        return;
    struct dirent *de;
    char path[PATH_MAX];
    while ((de = readdir(d))) {
        unsigned long long id;
        int used = 0;
        unsigned long long gen;
        int is_seg = sscanf(de->d_name, "seg-%16llx.qseg%n", &id, &used) == 1;
        int stale_seg = is_seg && de->d_name[used] == 0 && !in_manifest(&t->man, id);
        used = 0;
        int is_del = sscanf(de->d_name, "del-%16llx-%16llx.qdel%n", &id, &gen, &used) == 2;
        int stale_del = is_del && used && de->d_name[used] == 0 &&
                        !del_named(t->man.segs, t->man.nsegs, id, gen);
        int is_tmp =
            strlen(de->d_name) > 4 && strcmp(de->d_name + strlen(de->d_name) - 4, ".tmp") == 0;
        if (stale_seg || stale_del || is_tmp) {
            snprintf(path, sizeof path, "%s/%s", t->dir, de->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

qr_table *qr_table_open(const char *datadir, const char *name, int flags, qr_err *e)
{
    if (!qr_table_name_ok(name)) {
        qr_errf(e, QR_E_ARGS,
                "invalid table name '%s' (1-63 letters, digits or '_', not starting with a digit)",
                name);
        return NULL;
    }
    qr_table *t = calloc(1, sizeof *t);
    char path[PATH_MAX];
    if (!t) {
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    t->lock_fd = -1;
    t->name = strdup(name);
    {
        qr_catalog cat;
        if (qr_catalog_load(datadir, &cat, e) != 0)
            goto fail;
        const qr_tabdef *d = qr_catalog_find(&cat, name);
        if (d && !(t->def = qr_tabdef_clone(d)))
            qr_errf(e, QR_E_NOMEM, "out of memory");
        else if (!d)
            qr_errf(e, QR_E_UNDEFINED_TABLE, "table %s does not exist in %s", name, datadir);
        qr_catalog_free(&cat);
        if (!t->def)
            goto fail;
    }
    if (snprintf(path, sizeof path, "%s/%s", datadir, name) >= (int)sizeof path) {
        qr_errf(e, QR_E_ARGS, "data directory path too long");
        goto fail;
    }
    t->dir = strdup(path);
    struct stat st;
    if (stat(t->dir, &st) != 0) {
        if (!(flags & QR_TABLE_WRITE))
            return t; /* defined, never written: an empty table to read */
        if (!(flags & QR_TABLE_CREATE)) {
            qr_errf(e, QR_E_UNDEFINED_TABLE, "table %s does not exist in %s", name, datadir);
            goto fail;
        }
        if (qr_mkdirs(t->dir, e) != 0)
            goto fail;
    }
    if (flags & QR_TABLE_WRITE) {
        snprintf(path, sizeof path, "%s/LOCK", t->dir);
        t->lock_fd = open(path, O_RDWR | O_CREAT, 0644);
        if (t->lock_fd < 0) {
            qr_errf(e, QR_E_IO, "open %s: %s", path, strerror(errno));
            goto fail;
        }
        if (flock(t->lock_fd, LOCK_EX | LOCK_NB) != 0) {
            qr_errf(e, QR_E_LOCKED, "table %s is being written by another process", name);
            goto fail;
        }
    }
    snprintf(path, sizeof path, "%s/MANIFEST", t->dir);
    unsigned char *buf;
    size_t n;
    if (access(path, F_OK) != 0) {
        t->man.segs = NULL; /* new table: empty manifest */
    } else {
        if (qr_read_file(path, &buf, &n, e) != 0)
            goto fail;
        int rc = qr_manifest_decode(buf, n, path, &t->man, e);
        free(buf);
        if (rc != 0)
            goto fail;
    }
    if (flags & QR_TABLE_WRITE)
        remove_leftovers(t);
    return t;
fail:
    qr_table_close(t);
    return NULL;
}

void qr_table_close(qr_table *t)
{
    if (!t)
        return;
    if (t->lock_fd >= 0)
        close(t->lock_fd);
    free(t->man.segs);
    free(t->dir);
    free(t->name);
    qr_tabdef_free(t->def);
    free(t);
}

uint64_t qr_table_reserve_ids(qr_table *t, uint64_t n)
{
    uint64_t first = t->man.next_id;
    t->man.next_id += n;
    return first;
}

int qr_table_commit(qr_table *t, const qr_seg_entry *add, uint32_t nadd, qr_err *e)
{
    return qr_table_commit_wal(t, add, nadd, t->man.wal_seq, e);
}

int qr_table_commit_wal(qr_table *t, const qr_seg_entry *add, uint32_t nadd, uint64_t wal_seq,
                        qr_err *e)
{
    if (t->lock_fd < 0)
        return qr_errf(e, QR_E_INTERNAL, "table %s: commit without the writer lock", t->name);
    qr_manifest m = t->man;
    m.generation++;
    m.wal_seq = wal_seq;
    m.nsegs = t->man.nsegs + nadd;
    m.segs = malloc(sizeof *m.segs * (m.nsegs ? m.nsegs : 1));
    if (!m.segs)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    if (t->man.nsegs)
        memcpy(m.segs, t->man.segs, sizeof *m.segs * t->man.nsegs);
    if (nadd)
        memcpy(m.segs + t->man.nsegs, add, sizeof *add * nadd);
    qr_buf b;
    qr_buf_init(&b);
    qr_manifest_encode(&m, &b);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/MANIFEST", t->dir);
    int rc;
    if (b.oom)
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    else if (qr_fsync_dir(t->dir, e) != 0) /* the new segments' names are durable first */
        rc = -1;
    else
        rc = qr_write_file_atomic(path, b.p, b.len, e);
    qr_buf_free(&b);
    if (rc != 0) {
        free(m.segs);
        return -1;
    }
    free(t->man.segs);
    t->man = m;
    return 0;
}

static int listed(const qr_seg_entry *segs, uint32_t n, uint64_t id)
{
    for (uint32_t i = 0; i < n; i++)
        if (segs[i].id == id)
            return 1;
    return 0;
}

int qr_table_replace(qr_table *t, const qr_seg_entry *segs, uint32_t n, qr_err *e)
{
    if (t->lock_fd < 0)
        return qr_errf(e, QR_E_INTERNAL, "table %s: replace without the writer lock", t->name);
    qr_manifest m = t->man;
    m.generation++;
    m.nsegs = n;
    m.segs = malloc(sizeof *m.segs * (n ? n : 1));
    if (!m.segs)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    if (n)
        memcpy(m.segs, segs, sizeof *segs * n);
    qr_buf b;
    qr_buf_init(&b);
    qr_manifest_encode(&m, &b);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/MANIFEST", t->dir);
    int rc = b.oom                          ? qr_errf(e, QR_E_NOMEM, "out of memory")
             : qr_fsync_dir(t->dir, e) != 0 ? -1 /* the new segments' names first */
                                            : qr_write_file_atomic(path, b.p, b.len, e);
    qr_buf_free(&b);
    if (rc != 0) {
        free(m.segs);
        return -1;
    }
    for (uint32_t i = 0; i < t->man.nsegs; i++) {
        const qr_seg_entry *o = &t->man.segs[i];
        if (!listed(segs, n, o->id)) {
            qr_table_seg_path(t, o->id, path, sizeof path);
            unlink(path);
        }
        if (o->del_gen && !del_named(segs, n, o->id, o->del_gen)) {
            qr_del_path_in(t->dir, o->id, o->del_gen, path, sizeof path);
            unlink(path);
        }
    }
    free(t->man.segs);
    t->man = m;
    return 0;
}

int qr_table_truncate(qr_table *t, qr_err *e) { return qr_table_replace(t, NULL, 0, e); }
