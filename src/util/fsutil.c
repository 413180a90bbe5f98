/* fsutil.c - file-system helpers (see fsutil.h). */
#include "util/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
                return qr_errf(e, QR_E_IO, "mkdir %s: %s", tmp, strerror(errno));
            tmp[i] = c;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return qr_errf(e, QR_E_IO, "%s is not a directory", path);
    return 0;
}

int qr_write_all(int fd, const void *p, size_t n, const char *what, qr_err *e)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return qr_errf(e, QR_E_IO, "write %s: %s", what, strerror(errno));
        }
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int qr_fsync_dir(const char *dir, qr_err *e)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return qr_errf(e, QR_E_IO, "open directory %s: %s", dir, strerror(errno));
    int rc = fsync(fd);
    int err = errno;
    close(fd);
    if (rc != 0 && err != EINVAL)
        return qr_errf(e, QR_E_IO, "fsync directory %s: %s", dir, strerror(err));
    return 0;
}

int qr_write_file_atomic(const char *path, const void *p, size_t n, qr_err *e)
{
    char tmp[PATH_MAX], dir[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return qr_errf(e, QR_E_ARGS, "path too long: %s", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return qr_errf(e, QR_E_IO, "create %s: %s", tmp, strerror(errno));
    if (qr_write_all(fd, p, n, tmp, e) != 0) {
        close(fd);
        unlink(tmp);
        return -1;
    }
    if (fsync(fd) != 0) {
        int err = errno;
        close(fd);
        unlink(tmp);
        return qr_errf(e, QR_E_IO, "fsync %s: %s", tmp, strerror(err));
    }
    close(fd);
    if (rename(tmp, path) != 0) {
        int err = errno;
        unlink(tmp);
        return qr_errf(e, QR_E_IO, "rename %s -> %s: %s", tmp, path, strerror(err));
    }
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    return qr_fsync_dir(dir, e);
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
            return qr_errf(e, QR_E_IO, "read %s: %s", path, r == 0 ? "unexpected end" : strerror(err));
        }
        got += (size_t)r;
    }
    close(fd);
    *out = b;
    *n = sz;
    return 0;
}
