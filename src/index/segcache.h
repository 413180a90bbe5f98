/* segcache.h - a bounded cache of open segments shared by every query of a
 * process: each entry is one segment file, mmapped with its footer parsed
 * (format/segment.h), and its index fields (invindex.h), each opened (term
 * index parsed) on first use by whichever query needs it and then kept for
 * all of them.
 *
 * Keys: (table directory, segment id). Segment files are immutable and a
 * table never reuses an id, so the key names the bytes; a table dropped and
 * created again under the same directory must be dropped from the cache
 * first (qr_segcache_invalidate with a NULL manifest).
 *
 * Handles are refcounted: qr_segcache_acquire opens the segment on a miss
 * (threads that ask for the same missing segment at once wait for one open)
 * and qr_segcache_release gives it back. A handle stays valid, its segment
 * mapped and its fields open, until it is released, even when the entry is
 * evicted or invalidated meanwhile: such an entry leaves the cache at once
 * (the next acquire opens the file again) and is closed at its last
 * release.
 *
 * Bounds: at most max_segments entries and max_bytes mapped bytes (the
 * segment files' sizes). Only entries nobody holds are evicted, least
 * recently released first, when an open or a release leaves the cache over
 * a bound; held entries are never evicted, so a query over more segments
 * than the bound still runs (the cache is over its bound until they are
 * released).
 *
 * Thread safety: every function but new/free may be called by any number of
 * threads at once. One mutex guards the table and the refcounts (held for a
 * lookup, never while a file is opened or closed); a field is opened under
 * its entry's own mutex, and a field already open costs one acquire load.
 */
#ifndef QR_SEGCACHE_H
#define QR_SEGCACHE_H

#include <stdint.h>

#include "format/segment.h"
#include "index/invindex.h"
#include "index/keymap.h"
#include "index/table.h"
#include "util/err.h"
#include "util/pool.h"

#define QR_SEGCACHE_DEFAULT_SEGMENTS 1024u
#define QR_SEGCACHE_DEFAULT_READERS  256u

typedef struct qr_segcache_opts {
    uint32_t max_segments; /* entries kept (0: QR_SEGCACHE_DEFAULT_SEGMENTS) */
    uint64_t max_bytes;    /* mapped bytes kept (0: no bound) */
    uint32_t max_readers;  /* idle column readers kept over all entries
                            * (0: QR_SEGCACHE_DEFAULT_READERS) */
} qr_segcache_opts;

typedef struct qr_segcache_stats {
    uint64_t hits, misses;                /* acquires that found the entry / opened the file */
    uint64_t evictions;                   /* entries dropped by the bounds */
    uint64_t invalidated;                 /* entries dropped by qr_segcache_invalidate */
    uint64_t closed;                      /* segments closed (evicted, invalidated or freed) */
    uint32_t segments;                    /* entries in the cache now (held or not) */
    uint32_t held;                        /* of those, held by at least one handle */
    uint64_t bytes;                       /* mapped bytes of the entries in the cache */
    uint32_t idle_readers;                /* column readers in the entries' pools */
    uint64_t reader_opens, reader_reuses; /* qr_segref_reader: opened / from a pool */
} qr_segcache_stats;

typedef struct qr_segcache qr_segcache;
/* A held entry (a handle): valid until qr_segcache_release. */
typedef struct qr_segref qr_segref;

/* A cache with bounds o (NULL: the defaults). NULL with e set when out of
 * memory. */
qr_segcache *qr_segcache_new(const qr_segcache_opts *o, qr_err *e);
/* Close every segment and free the cache. Every handle must have been
 * released; no other thread may be using the cache. NULL is a no-op. */
void qr_segcache_free(qr_segcache *c);

/* A handle on segment `id` of the table in directory `dir` (its file is
 * qr_table_seg_path's name for it), opened when it is not in the cache.
 * NULL with e set when the file cannot be opened (every thread waiting on
 * that open gets the same error; nothing is cached, so a later acquire
 * tries again). */
qr_segref *qr_segcache_acquire(qr_segcache *c, const char *dir, uint64_t id, qr_err *e);
/* Handles on every segment of manifest m (refs[i] for m->segs[i]), taking
 * the cache's lock once for all the hits; a segment whose row count is not
 * the manifest's is corrupt (QR_E_CORRUPT). The misses are opened on up to
 * `threads` slots of pool (NULL or threads <= 1: on the caller), so a
 * table of hundreds of segments opens in parallel. 0, or -1 with e set and
 * nothing held. */
int qr_segcache_acquire_all(qr_segcache *c, const char *dir, const qr_manifest *m, qr_segref **refs,
                            qr_pool *pool, int threads, qr_err *e);
/* Give a handle back (NULL is a no-op). */
void qr_segcache_release(qr_segref *r);
/* Release refs[0..n) (NULL entries skipped). */
void qr_segcache_release_all(qr_segref **refs, uint32_t n);

/* The open segment (read-only, shared; valid while the handle is held). */
qr_segment *qr_segref_segment(const qr_segref *r);
/* Index section `sec` of the segment, opened on first use by any holder
 * (once: concurrent callers wait for that open) and shared by every holder
 * (read-only but for its own thread-safe lazy maps, see invindex.h). NULL
 * with e set when the segment has no such section or it is corrupt (not
 * kept: the next call tries again). */
qr_invfield *qr_segref_field(qr_segref *r, uint16_t sec, qr_err *e);

/* The cache of shared-key maps (index/keymap.h) of the cache's fields:
 * one per segment cache, shared by every query of the process. */
qr_kmcache *qr_segref_keymaps(const qr_segref *r);

/* A reader of column `col` of the segment (format/segment.h), for the
 * calling thread alone until it is given back with qr_segref_reader_done:
 * an idle one from the entry's pool, else a new one (NULL with e set on
 * failure). Opening a reader costs a zstd context, its buffers and the
 * column's dictionaries, which a query reading a few rows would otherwise
 * pay every time. */
qr_colreader *qr_segref_reader(qr_segref *r, int col, qr_err *e);
/* Give reader rd (from qr_segref_reader on the same handle; NULL is a
 * no-op) back to the pool, out of random-access mode, or close it when the
 * cache already keeps max_readers idle ones. */
void qr_segref_reader_done(qr_segref *r, qr_colreader *rd);

/* Drop the entries of the table in `dir` whose segment id manifest m (the
 * table's current one) no longer lists, or every entry of the table when m
 * is NULL. Held entries stay usable by their holders and are closed at
 * their last release (then their files may be deleted); the others are
 * closed before this returns. */
void qr_segcache_invalidate(qr_segcache *c, const char *dir, const qr_manifest *m);

void qr_segcache_get_stats(qr_segcache *c, qr_segcache_stats *st);

#endif
