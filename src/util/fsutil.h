/* fsutil.h - file-system helpers: whole-file reads, atomic replace
 * (write temp, fsync, rename, fsync directory), directory creation. */
#ifndef QR_FSUTIL_H
#define QR_FSUTIL_H

#include <stddef.h>

#include "util/err.h"

/* mkdir -p; ok if it exists. */
int qr_mkdirs(const char *path, qr_err *e);
/* Write `n` bytes to `path` atomically: path.tmp, fsync, rename, fsync dir. */
int qr_write_file_atomic(const char *path, const void *p, size_t n, qr_err *e);
/* Write all bytes to fd (retrying short writes). */
int qr_write_all(int fd, const void *p, size_t n, const char *what, qr_err *e);
/* fsync the directory containing `path` (or `path` itself if a dir). */
int qr_fsync_dir(const char *dir, qr_err *e);
/* Read a whole file into a malloc'ed buffer (caller frees *out). */
int qr_read_file(const char *path, unsigned char **out, size_t *n, qr_err *e);

#endif
