/* wal.h - a table's write-ahead log: rows acknowledged before they are in a
 * segment (sql/live.h decides what goes in; this file only keeps records).
 *
 *   DATA/<table>/wal-<16 hex first seq>.log   log files, oldest first
 *   DATA/<table>/WAL.LOCK                      flock'ed by the one process
 *                                              that owns the log
 *
 * A record is an opaque payload with a sequence number (1, 2, ...: one per
 * record, never reused), checksummed with its header. Records are appended
 * to the newest file; qr_wal_rotate starts another (after making the old one
 * durable), and qr_wal_release deletes files whose every record is at or
 * below a sequence number the table's manifest says is in segments.
 *
 * Durability: qr_wal_write appends (write(2)); qr_wal_sync waits until a
 * record is on disk. Concurrent callers share fsyncs (group commit): the
 * first waiter syncs everything written so far while the others wait, and
 * one fsync acknowledges them all. With sync off, qr_wal_sync returns at
 * once (a record then survives a crash of the process, not of the machine).
 * A failed fsync poisons the log: the pages it covered are in an unknown
 * state, so every later write and sync fails until the log is reopened
 * (which replays what is really on disk).
 *
 * Opening replays: every record above `after` is handed to a callback in
 * order; a torn or corrupt tail of the newest file (a crash mid-write) is
 * cut at the last good record; damage anywhere else is corruption (XX001,
 * naming file and offset), since those files were synced whole before the
 * next was started. */
#ifndef QR_WAL_H
#define QR_WAL_H
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define QR_WAL_MAX_RECORD   (1u << 30)  /* payload bytes of one record */
#define QR_WAL_ROTATE_BYTES (16u << 20) /* qr_wal_rotate_big's threshold */

typedef struct qr_wal qr_wal;

/* A replayed record: 0 to go on, -1 with e set to stop (open fails). */
typedef int (*qr_wal_replay_fn)(void *arg, uint64_t seq, const unsigned char *p, size_t n,
                                qr_err *e);

/* Open table directory dir's log: take WAL.LOCK (QR_E_LOCKED when another
 * process holds it), read every file, hand each record with seq > after to
 * fn (may be NULL: then any such record is an error), cut a torn tail.
 * Later writes go to a new file. sync: 1 fsync before qr_wal_sync returns,
 * 0 not. NULL with e set. */
qr_wal *qr_wal_open(const char *dir, uint64_t after, int sync, qr_wal_replay_fn fn, void *arg,
                    qr_err *e);
void qr_wal_close(qr_wal *w);
/* Whether dir holds any log file (a table to replay at start). */
int qr_wal_present(const char *dir);
/* Append one record (the caller serialises writes; syncs may run
 * meanwhile); *seq gets its number. On failure nothing of it remains in the
 * file (53100 disk full, 58030 I/O, 54000 too long). */
int qr_wal_write(qr_wal *w, const void *p, size_t n, uint64_t *seq, qr_err *e);
/* Wait until record seq is durable (group commit). 0, or -1 with e set. */
int qr_wal_sync(qr_wal *w, uint64_t seq, qr_err *e);
/* The last sequence number written (0: none yet). */
uint64_t qr_wal_last(qr_wal *w);
/* Make the current file durable and start a new one for later records,
 * when the current one holds at least min_bytes (0: always, if it has any
 * record). The caller serialises it with writes. 0, or -1 with e set. */
int qr_wal_rotate(qr_wal *w, size_t min_bytes, qr_err *e);
/* Delete the files (not the current one) whose records are all <= upto. */
void qr_wal_release(qr_wal *w, uint64_t upto);
/* Bytes in the log's files (what a crash would replay at most). */
uint64_t qr_wal_bytes(qr_wal *w);
#endif
