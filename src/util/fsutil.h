/* fsutil.h - file-system helpers: whole-file reads, atomic replace
 * (write temp, fsync, rename, fsync directory), directory creation, and the
 * writes that make a segment or a manifest durable.
 *
 * Every file write of a segment and of the manifest goes through
 * qr_create_file, qr_write_all, qr_fsync_file, qr_fsync_dir and qr_rename,
 * so that errors name the file and the cause ("write PATH: No space left on
 * device") and so that tests can make any one of those operations fail
 * (qr_fault_set below).
 */
#ifndef QR_FSUTIL_H
#define QR_FSUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* mkdir -p; ok if it exists. */
int qr_mkdirs(const char *path, qr_err *e);
/* Replace `path` with `n` bytes atomically: path.tmp, fsync, rename, fsync of
 * the directory. On failure (-1) `path` is as it was (old content, or
 * absent) and no temp file is left: until the directory fsync succeeds the
 * old file is kept under a second name (path.old.tmp), and a failed fsync
 * renames it back. (Whether that undo survives a crash is as unknown as
 * anything after a failed fsync; visible state always matches the result.) */
int qr_write_file_atomic(const char *path, const void *p, size_t n, qr_err *e);
/* Create (or truncate) `path` for writing, mode 0644. Returns the fd, or -1
 * with "create PATH: reason". */
int qr_create_file(const char *path, qr_err *e);
/* Write all bytes to fd (retrying short writes); `what` names the file in
 * the error ("write WHAT: reason"). */
int qr_write_all(int fd, const void *p, size_t n, const char *what, qr_err *e);
/* fsync(fd); "fsync WHAT: reason" on failure. */
int qr_fsync_file(int fd, const char *what, qr_err *e);
/* fsync the directory `dir` (a file system that cannot is not an error). */
int qr_fsync_dir(const char *dir, qr_err *e);
/* rename(from, to); "rename FROM -> TO: reason" on failure. */
int qr_rename(const char *from, const char *to, qr_err *e);
/* Make file `from` durable (fsync) and give it the second name `to`
 * (link(2); `to` must not exist): how a file written without fsync joins a
 * directory whose fsync, at the commit that lists it, makes the name
 * durable. "fsync FROM: reason" / "link FROM -> TO: reason" on failure. */
int qr_fsync_link(const char *from, const char *to, qr_err *e);
/* Unlink every entry of directory dir but "." names (files; a
 * subdirectory stays). A missing dir is nothing to do. */
void qr_unlink_all_in(const char *dir);
/* Read a whole file into a malloc'ed buffer (caller frees *out). */
int qr_read_file(const char *path, unsigned char **out, size_t *n, qr_err *e);

/* ---- fault injection (tests only) ----
 * qr_fault_set(op, nth, err) makes the nth operation of kind `op` (counted
 * from 1, from this call on, across all threads) fail with errno `err`
 * (ENOSPC, EIO, ...) as if the system had refused it; it writes nothing.
 * Only that one operation fails; QR_FAULT_OFF disarms (and stops counting).
 * The setting is process-wide, off unless a test arms it; the quarry binary
 * arms it from the environment variable QUARRY_FAULT=KIND:N[:ERRNO] (see
 * qr_fault_parse) for the end-to-end tests. Clean-up operations (unlink of a
 * temp file, undoing a replace) are never failed on purpose. */
typedef enum qr_fault_op {
    QR_FAULT_OFF = 0,
    QR_FAULT_ANY,    /* every operation below counts */
    QR_FAULT_CREATE, /* qr_create_file; the link that keeps a replaced file; qr_fsync_link's */
    QR_FAULT_WRITE,  /* one qr_write_all call */
    QR_FAULT_FSYNC,  /* qr_fsync_file, qr_fsync_dir */
    QR_FAULT_RENAME, /* qr_rename */
} qr_fault_op;

void qr_fault_set(qr_fault_op op, uint64_t nth, int err);
/* Operations of the armed kind seen since qr_fault_set, the failed one
 * included (a run that saw fewer than nth never hit the fault). */
uint64_t qr_fault_seen(void);
/* Arm from text "KIND:N[:ERRNO]": KIND is any, create, write, fsync or
 * rename; N >= 1; ERRNO is ENOSPC (default), EIO or a number. -1 with
 * QR_E_ARGS when the text is malformed (nothing is armed then). */
int qr_fault_parse(const char *spec, qr_err *e);

#endif
