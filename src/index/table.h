/* table.h - a table on disk: a directory of immutable segment files and the
 * manifest that says which of them are live.
 *
 *   DATA/<table>/MANIFEST        live segments (written atomically)
 *   DATA/<table>/seg-<id>.qseg   segment files (id in 16 hex digits)
 *   DATA/<table>/del-<id>-<gen>.qdel  rows of a segment deleted (deletes.h)
 *   DATA/<table>/LOCK            flock'ed by the one writer
 *
 * Readers take the manifest as of open. A writer holds the lock from open to
 * close, allocates segment ids, and publishes new segments with one atomic
 * manifest replace; files not named by the manifest are leftovers of an
 * aborted write and are removed when a writer opens the table.
 */
#ifndef QR_TABLE_H
#define QR_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "format/segment.h"
#include "util/err.h"

#define QR_MANIFEST_VERSION 3u /* reads 1 (no wal_seq), 2 (no deletions) and 3 */

typedef struct qr_seg_entry {
    uint64_t id;
    uint64_t rows; /* in the file, deleted ones included */
    int64_t min_ts, max_ts;
    uint64_t file_bytes;
    uint64_t del_gen; /* its deletion file's generation (index/deletes.h), 0: none */
    uint64_t deleted; /* rows deleted (0 when del_gen is 0; < rows) */
} qr_seg_entry;

typedef struct qr_manifest {
    uint64_t generation; /* +1 per commit */
    uint64_t next_id;    /* next unused segment id */
    uint64_t wal_seq;    /* write-ahead log records <= this are in segments (wal.h) */
    uint32_t nsegs;
    qr_seg_entry *segs; /* malloc'ed */
} qr_manifest;

/* Serialize / parse (parse checks magic, version, checksum, every count). */
void qr_manifest_encode(const qr_manifest *m, qr_buf *out);
int qr_manifest_decode(const unsigned char *p, size_t n, const char *path, qr_manifest *m,
                       qr_err *e);

enum { QR_TABLE_READ = 0, QR_TABLE_WRITE = 1, QR_TABLE_CREATE = 2 };

typedef struct qr_table {
    char *dir; /* DATA/<name> */
    char *name;
    qr_tabdef *def; /* the table's definition (owned) */
    qr_manifest man;
    int lock_fd; /* >= 0 when opened for writing */
} qr_table;

/* Open table `name` under `datadir`: its definition from the data
 * directory's catalog (index/catalog.h; QR_E_UNDEFINED_TABLE when it is not
 * there). QR_TABLE_WRITE takes the writer lock (fails with QR_E_LOCKED if
 * another process holds it) and removes leftover files; QR_TABLE_CREATE
 * (with WRITE) creates the table's directory if missing. A table defined in
 * the catalog but never written opens for reading as an empty one. */
qr_table *qr_table_open(const char *datadir, const char *name, int flags, qr_err *e);
void qr_table_close(qr_table *t);
/* Path of segment `id` in the table's directory. */
void qr_table_seg_path(const qr_table *t, uint64_t id, char *buf, size_t n);
/* The same for a table directory `dir` (index/segcache.h keys by it). */
void qr_seg_path_in(const char *dir, uint64_t id, char *buf, size_t n);
/* Reserve `n` consecutive segment ids (writer only); returns the first. */
uint64_t qr_table_reserve_ids(qr_table *t, uint64_t n);
/* Publish segments: fsync of the directory, then one atomic manifest replace
 * (writer only). On failure (-1, e names the file and the cause) the
 * manifest, on disk and in t->man, is unchanged. */
int qr_table_commit(qr_table *t, const qr_seg_entry *add, uint32_t nadd, qr_err *e);
/* The same, recording that the log's records up to wal_seq are now in
 * segments (sql/live.c's flush; the log's files up to it may then go). */
int qr_table_commit_wal(qr_table *t, const qr_seg_entry *add, uint32_t nadd, uint64_t wal_seq,
                        qr_err *e);
/* Publish an empty manifest (writer only; TRUNCATE): every segment leaves
 * the table in one atomic manifest replace, then their files are removed
 * (a reader that mapped one keeps its mapping). Segment ids are not reused.
 * On failure the manifest, on disk and in t->man, is unchanged. */
int qr_table_truncate(qr_table *t, qr_err *e);
/* Publish exactly segments segs[0..n) (writer only; a table rewritten, as
 * CREATE INDEX does for the segments it had, or its deletions changed):
 * fsync of the directory, one atomic manifest replace, then the files of
 * the segments no longer listed, and the deletion files no entry names any
 * more, are removed. On failure the manifest, on disk and in t->man, is
 * unchanged. */
int qr_table_replace(qr_table *t, const qr_seg_entry *segs, uint32_t n, qr_err *e);
/* Table names: 1-63 chars of [A-Za-z0-9_], not starting with a digit. */
int qr_table_name_ok(const char *name);

#endif
