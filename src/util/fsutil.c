/* fsutil.c - file-system helpers (see fsutil.h). The fault hook costs one
 * relaxed atomic load per operation while disarmed. */
#include "util/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The SQLSTATE of a failed write: 53100 when the device is full (a client
 * may free space and retry), else 58030. */
static const char *io_code(int err)
{
    return err == ENOSPC || err == EDQUOT ? QR_E_DISK_FULL : QR_E_IO;
}

int qr_mkdirs(const char *path, qr_err *e)
{
    char tmp[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp)
        return qr_errf(e, QR_E_ARGS, "invalid directory path '%s'", path);
    memcpy(tmp, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] == '/' || tmp[i] == 0) {
            char c = tmp[i];
            tmp[i] = 0;
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                return qr_errf(e, io_code(errno), "mkdir %s: %s", tmp, strerror(errno));
            tmp[i] = c;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return qr_errf(e, QR_E_IO, "%s is not a directory", path);
    return 0;
}

/* ---- fault injection (see fsutil.h) ---- */

static atomic_int fault_op; /* qr_fault_op; QR_FAULT_OFF = disarmed */
static atomic_int fault_errno;
static atomic_uint_fast64_t fault_nth, fault_count;

void qr_fault_set(qr_fault_op op, uint64_t nth, int err)
{
    atomic_store(&fault_op, QR_FAULT_OFF);
    atomic_store(&fault_count, 0);
    atomic_store(&fault_nth, nth);
    atomic_store(&fault_errno, err);
    atomic_store(&fault_op, (int)op);
}

uint64_t qr_fault_seen(void) { return atomic_load(&fault_count); }

/* 1 (errno set) when this operation of kind `op` is the one to fail. */
static int fault_hit(qr_fault_op op)
{
    int armed = atomic_load_explicit(&fault_op, memory_order_relaxed);
    if (armed == QR_FAULT_OFF || (armed != QR_FAULT_ANY && armed != (int)op))
        return 0;
    if (atomic_fetch_add(&fault_count, 1) + 1 != atomic_load(&fault_nth))
        return 0;
    errno = atomic_load(&fault_errno);
    return 1;
}

/* "ENOSPC", "EIO" or a positive number; 0 when it is none of them. */
static int parse_errno(const char *s)
{
    if (strcmp(s, "ENOSPC") == 0)
        return ENOSPC;
    if (strcmp(s, "EIO") == 0)
        return EIO;
    char *end;
    long v = *s >= '1' && *s <= '9' ? strtol(s, &end, 10) : 0;
    return v > 0 && v < 4096 && *end == 0 ? (int)v : 0;
}

int qr_fault_parse(const char *spec, qr_err *e)
{
    static const char *const kinds[] = {
        [QR_FAULT_ANY] = "any",     [QR_FAULT_CREATE] = "create", [QR_FAULT_WRITE] = "write",
        [QR_FAULT_FSYNC] = "fsync", [QR_FAULT_RENAME] = "rename",
    };
    char buf[64];
    snprintf(buf, sizeof buf, "%s", spec);
    char *num = strchr(buf, ':');
    char *err_s = num ? strchr(num + 1, ':') : NULL;
    if (num)
        *num++ = 0;
    if (err_s)
        *err_s++ = 0;
    int op = QR_FAULT_OFF;
    for (int k = QR_FAULT_ANY; k <= QR_FAULT_RENAME; k++)
        if (strcmp(buf, kinds[k]) == 0)
            op = k;
    char *end = NULL;
    errno = 0;
    unsigned long long nth = num && *num >= '1' && *num <= '9' ? strtoull(num, &end, 10) : 0;
    int err = err_s ? parse_errno(err_s) : ENOSPC;
    if (strlen(spec) >= sizeof buf || op == QR_FAULT_OFF || nth == 0 || errno || *end || !err)
        return qr_errf(e, QR_E_ARGS,
                       "fault '%s': expected KIND:N[:ERRNO] (KIND any, create, write, fsync "
                       "or rename; N >= 1; ERRNO ENOSPC, EIO or a number)",
                       spec);
    qr_fault_set((qr_fault_op)op, nth, err);
    return 0;
}

/* ---- durable writes ---- */

int qr_create_file(const char *path, qr_err *e)
{
    int fd = fault_hit(QR_FAULT_CREATE) ? -1 : open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return qr_errf(e, io_code(errno), "create %s: %s", path, strerror(errno));
    return fd;
}

int qr_write_all(int fd, const void *p, size_t n, const char *what, qr_err *e)
{
    if (fault_hit(QR_FAULT_WRITE))
        return qr_errf(e, io_code(errno), "write %s: %s", what, strerror(errno));
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return qr_errf(e, io_code(errno), "write %s: %s", what, strerror(errno));
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int qr_fsync_file(int fd, const char *what, qr_err *e)
{
    if (fault_hit(QR_FAULT_FSYNC) || fsync(fd) != 0)
        return qr_errf(e, io_code(errno), "fsync %s: %s", what, strerror(errno));
    return 0;
}

int qr_fsync_dir(const char *dir, qr_err *e)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return qr_errf(e, QR_E_IO, "open directory %s: %s", dir, strerror(errno));
    int rc = fault_hit(QR_FAULT_FSYNC) ? -1 : fsync(fd);
    int err = errno;
    close(fd);
    if (rc != 0 && err != EINVAL)
        return qr_errf(e, io_code(err), "fsync directory %s: %s", dir, strerror(err));
    return 0;
}

int qr_rename(const char *from, const char *to, qr_err *e)
{
    if (fault_hit(QR_FAULT_RENAME) || rename(from, to) != 0)
        return qr_errf(e, io_code(errno), "rename %s -> %s: %s", from, to, strerror(errno));
    return 0;
}

void qr_unlink_all_in(const char *dir)
{
    char path[PATH_MAX];
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.' &&
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name) < (int)sizeof path)
            unlink(path);
    closedir(d);
}

int qr_fsync_link(const char *from, const char *to, qr_err *e)
{
    int fd = open(from, O_RDONLY);
    if (fd < 0)
        return qr_errf(e, QR_E_IO, "open %s: %s", from, strerror(errno));
    int rc = qr_fsync_file(fd, from, e);
    close(fd);
    if (rc == 0 && (fault_hit(QR_FAULT_CREATE) || link(from, to) != 0))
        rc = qr_errf(e, io_code(errno), "link %s -> %s: %s", from, to, strerror(errno));
    return rc;
}

int qr_write_file_atomic(const char *path, const void *p, size_t n, qr_err *e)
{
    char tmp[PATH_MAX], old[PATH_MAX], dir[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp ||
        snprintf(old, sizeof old, "%s.old.tmp", path) >= (int)sizeof old)
        return qr_errf(e, QR_E_ARGS, "path too long: %s", path);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    int fd = qr_create_file(tmp, e);
    if (fd < 0)
        return -1;
    if (qr_write_all(fd, p, n, tmp, e) != 0 || qr_fsync_file(fd, tmp, e) != 0) {
        close(fd);
        unlink(tmp);
        return -1;
    }
    if (close(fd) != 0) {
        int err = errno;
        unlink(tmp);
        return qr_errf(e, io_code(err), "close %s: %s", tmp, strerror(err));
    }
    /* keep the file being replaced under a second name until the directory
     * fsync says the replacement is durable, so a failure can undo it */
    unlink(old);
    int have_old = 1;
    if (fault_hit(QR_FAULT_CREATE) || link(path, old) != 0) {
        if (errno != ENOENT) {
            int err = errno;
            unlink(tmp);
            return qr_errf(e, io_code(err), "link %s -> %s: %s", path, old, strerror(err));
        }
        have_old = 0; /* nothing to replace */
    }
    if (qr_rename(tmp, path, e) != 0) {
        unlink(tmp);
        if (have_old)
            unlink(old);
        return -1;
    }
    if (qr_fsync_dir(dir, e) != 0) {
        if (have_old ? rename(old, path) != 0 : unlink(path) != 0)
            return qr_err_prefix(e, "cannot undo the replace of %s (%s): ", path, strerror(errno));
        return -1;
    }
    if (have_old)
        unlink(old);
    return 0;
}

int qr_read_file(const char *path, unsigned char **out, size_t *n, qr_err *e)
{
    *out = NULL;
    *n = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return qr_errf(e, QR_E_IO, "open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return qr_errf(e, QR_E_IO, "stat %s: %s", path, strerror(errno));
    }
    size_t sz = (size_t)st.st_size;
    unsigned char *b = malloc(sz ? sz : 1);
    if (!b) {
        close(fd);
        return qr_errf(e, QR_E_NOMEM, "read %s: out of memory (%zu bytes)", path, sz);
    }
    size_t got = 0;
    while (got < sz) {
        ssize_t r = read(fd, b + got, sz - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int err = errno;
            free(b);
            close(fd);
            return qr_errf(e, QR_E_IO, "read %s: %s", path,
                           r == 0 ? "unexpected end" : strerror(err));
        }
        got += (size_t)r;
    }
    close(fd);
    *out = b;
    *n = sz;
    return 0;
}
