/* wal.c - the write-ahead log's files, records, group commit and replay
 * (wal.h; the layout is in docs/FORMAT.md "Write-ahead log").
 *
 * File:   "QRYWAL1\n" | u64 first seq
 * Record: u32 magic "QWR1" | u32 payload bytes n | u64 seq |
 *         u32 checksum (low 32 bits of XXH3 of the payload seeded with XXH3
 *         of the 16 header bytes before it) | payload
 */
#include "index/wal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fsutil.h"
#include "util/hash.h"

#define FILE_MAGIC "QRYWAL1\n"
#define FILE_HEAD  16u
#define REC_MAGIC  0x31525751u /* "QWR1" little-endian */
#define REC_HEAD   20u

struct qr_wal {
    char *dir;
    int lock_fd;
    int fd;              /* current file, -1 until the first write after open/rotate */
    char path[PATH_MAX]; /* its name */
    uint64_t size;       /* bytes in it */
    uint64_t *firsts;    /* first seq of each file, oldest first (the current last) */
    uint32_t nfiles, capfiles;
    uint64_t bytes_old; /* bytes in the files before the current one */
    int sync;
    pthread_mutex_t mu; /* everything below */
    pthread_cond_t cv;
    uint64_t next_seq; /* next to assign */
    uint64_t written;  /* last written */
    uint64_t durable;  /* last known on disk */
    int syncing;
    int poisoned;
    qr_err why; /* the poisoning failure */
};

static void file_path(const char *dir, uint64_t first, char *buf, size_t n)
{
    snprintf(buf, n, "%s/wal-%016llx.log", dir, (unsigned long long)first);
}

static int is_wal_name(const char *name, uint64_t *first)
{
    unsigned long long v;
    int used = 0;
    if (sscanf(name, "wal-%16llx.log%n", &v, &used) != 1 || name[used] || used != 24)
        return 0;
    *first = v;
    return 1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The log files of dir, sorted by first seq (malloc'ed; *n of them). */
static int list_files(const char *dir, uint64_t **out, uint32_t *n, qr_err *e)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return 0;
        return qr_errf(e, QR_E_IO, "open directory %s: %s", dir, strerror(errno));
    }
    uint32_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        uint64_t first;
        if (!is_wal_name(de->d_name, &first))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            uint64_t *nv = realloc(*out, sizeof *nv * cap);
            if (!nv) {
                closedir(d);
                free(*out);
                *out = NULL;
                return qr_errf(e, QR_E_NOMEM, "out of memory");
            }
            *out = nv;
        }
        (*out)[(*n)++] = first;
    }
    closedir(d);
    if (*n)
        qsort(*out, *n, sizeof **out, cmp_u64);
    return 0;
}

int qr_wal_present(const char *dir)
{
    uint64_t *f;
    uint32_t n;
    if (list_files(dir, &f, &n, NULL) != 0)
        return 1; /* let the open say what is wrong */
    free(f);
    return n > 0;
}

static uint32_t rec_check(const unsigned char *head16, const unsigned char *p, size_t n)
{
    return (uint32_t)XXH3_64bits_withSeed(p, n, XXH3_64bits(head16, 16));
}

/* Replay one file. last: the newest file (a bad tail is cut, not an error).
 * *seq is the last seq seen so far (records must follow it). */
static int replay_file(qr_wal *w, uint64_t first, int last, uint64_t after, qr_wal_replay_fn fn,
                       void *arg, uint64_t *seq, uint64_t *bytes, qr_err *e)
{
    char path[PATH_MAX];
    file_path(w->dir, first, path, sizeof path);
    unsigned char *p;
    size_t n;
    if (qr_read_file(path, &p, &n, e) != 0)
        return -1;
    size_t off = 0, good = 0;
    const char *why = NULL;
    if (n < FILE_HEAD || memcmp(p, FILE_MAGIC, 8) != 0 || qr_load_u64(p + 8) != first)
        why = n < FILE_HEAD ? "file header cut short" : "bad file header";
    else
        off = good = FILE_HEAD;
    int rc = 0;
    while (!why && off < n) {
        if (n - off < REC_HEAD) {
            why = "record header cut short";
            break;
        }
        const unsigned char *h = p + off;
        uint32_t len = qr_load_u32(h + 4);
        uint64_t s = qr_load_u64(h + 8);
        if (qr_load_u32(h) != REC_MAGIC)
            why = "bad record magic";
        else if (len > QR_WAL_MAX_RECORD || len > n - off - REC_HEAD)
            why = "record cut short";
        else if (rec_check(h, h + REC_HEAD, len) != qr_load_u32(h + 16))
            why = "record checksum mismatch";
        else if (s <= *seq || (*seq && s != *seq + 1) || s < first)
            why = "record out of sequence";
        if (why)
            break;
        if (s > after) {
            if (!fn) {
                rc = qr_errf(e, QR_E_INTERNAL, "wal %s: record %llu not replayed", path,
                             (unsigned long long)s);
                break;
            }
            if (fn(arg, s, h + REC_HEAD, len, e) != 0) {
                rc = -1;
                break;
            }
        }
        *seq = s;
        off += REC_HEAD + len;
        good = off;
    }
    free(p);
    if (rc != 0)
        return -1;
    if (why && !last)
        return qr_errf(e, QR_E_CORRUPT, "wal %s: corrupt: %s at offset %zu", path, why, off);
    if (why) { /* a crash mid-write: cut the tail (a file without a header goes) */
        if (good == 0) {
            if (unlink(path) != 0)
                return qr_errf(e, QR_E_IO, "unlink %s: %s", path, strerror(errno));
            *bytes = 0;
            return 1; /* no such file any more */
        }
        int fd = open(path, O_WRONLY);
        if (fd < 0 || ftruncate(fd, (off_t)good) != 0) {
            int err = errno;
            if (fd >= 0)
                close(fd);
            return qr_errf(e, QR_E_IO, "truncate %s to %zu bytes: %s", path, good, strerror(err));
        }
        int src = qr_fsync_file(fd, path, e);
        close(fd);
        if (src != 0)
            return -1;
        fprintf(stderr, "quarry: wal %s: %s at offset %zu: cut there (a write torn by a crash)\n",
                path, why, off);
    }
    *bytes = good;
    return 0;
}

qr_wal *qr_wal_open(const char *dir, uint64_t after, int sync, qr_wal_replay_fn fn, void *arg,
                    qr_err *e)
{
    qr_wal *w = calloc(1, sizeof *w);
    if (!w || !(w->dir = strdup(dir))) {
        free(w);
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    w->fd = -1;
    w->sync = sync;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/WAL.LOCK", dir);
    w->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (w->lock_fd < 0) {
        qr_errf(e, QR_E_IO, "open %s: %s", path, strerror(errno));
        goto fail;
    }
    if (flock(w->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            qr_errf(e, QR_E_LOCKED, "wal of %s: in use by another process", dir);
        else
            qr_errf(e, QR_E_IO, "flock %s: %s", path, strerror(errno));
        goto fail;
    }
    uint64_t *files;
    uint32_t nf;
    if (list_files(dir, &files, &nf, e) != 0)
        goto fail;
    uint64_t seq = 0;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < nf; i++) {
        uint64_t bytes = 0;
        if (i + 1 < nf && files[i + 1] - 1 <= after) { /* wholly in segments already */
            file_path(dir, files[i], path, sizeof path);
            unlink(path);
            continue;
        }
        if (seq == 0 && files[i] > 1)
            seq = files[i] - 1; /* the files before it were released */
        int r = replay_file(w, files[i], i + 1 == nf, after, fn, arg, &seq, &bytes, e);
        if (r < 0) {
            free(files);
            goto fail;
        }
        if (r == 0) {
            files[kept++] = files[i];
            w->bytes_old += bytes;
        }
    }
    w->firsts = files;
    w->nfiles = kept;
    w->capfiles = nf;
    if (seq < after)
        seq = after;
    w->next_seq = seq + 1;
    w->written = w->durable = seq;
    return w;
fail:
    qr_wal_close(w);
    return NULL;
}

void qr_wal_close(qr_wal *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    if (w->lock_fd >= 0)
        close(w->lock_fd);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w->firsts);
    free(w->dir);
    free(w);
}

uint64_t qr_wal_last(qr_wal *w)
{
    pthread_mutex_lock(&w->mu);
    uint64_t s = w->written;
    pthread_mutex_unlock(&w->mu);
    return s;
}

uint64_t qr_wal_bytes(qr_wal *w) { return w->bytes_old + w->size; }

static int poisoned(qr_wal *w, qr_err *e)
{
    return qr_errf(e, QR_E_IO,
                   "wal of %s: refuses writes after a failure (%s); restart to replay it", w->dir,
                   w->why.msg);
}

/* Start the file whose first record is seq: header written, file and
 * directory fsync'ed (its name must be durable before a record in it is
 * acknowledged). */
static int new_file(qr_wal *w, uint64_t seq, qr_err *e)
{
    if (w->nfiles == w->capfiles) {
        uint32_t nc = w->capfiles ? w->capfiles * 2 : 8;
        uint64_t *nv = realloc(w->firsts, sizeof *nv * nc);
        if (!nv)
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        w->firsts = nv;
        w->capfiles = nc;
    }
    char path[PATH_MAX];
    file_path(w->dir, seq, path, sizeof path);
    unsigned char head[FILE_HEAD];
    memcpy(head, FILE_MAGIC, 8);
    qr_store_u64(head + 8, seq);
    int fd = qr_create_file(path, e);
    if (fd < 0)
        return -1;
    if (qr_write_all(fd, head, sizeof head, path, e) != 0 || qr_fsync_file(fd, path, e) != 0 ||
        qr_fsync_dir(w->dir, e) != 0) {
        close(fd);
        unlink(path);
        return -1;
    }
    /* a file of that name left by a crash had no record above seq - 1 */
    if (w->nfiles && w->firsts[w->nfiles - 1] == seq)
        w->nfiles--;
    w->firsts[w->nfiles++] = seq;
    pthread_mutex_lock(&w->mu); /* a sync's leader reads fd and path under it */
    w->fd = fd;
    snprintf(w->path, sizeof w->path, "%s", path);
    pthread_mutex_unlock(&w->mu);
    w->size = FILE_HEAD;
    return 0;
}

int qr_wal_write(qr_wal *w, const void *p, size_t n, uint64_t *seq, qr_err *e)
{
    if (n > QR_WAL_MAX_RECORD)
        return qr_errf(e, QR_E_TOO_LONG, "wal of %s: a record of %zu bytes (limit %u)", w->dir, n,
                       QR_WAL_MAX_RECORD);
    pthread_mutex_lock(&w->mu);
    int bad = w->poisoned;
    uint64_t s = w->next_seq;
    pthread_mutex_unlock(&w->mu);
    if (bad)
        return poisoned(w, e);
    if (w->fd < 0 && new_file(w, s, e) != 0)
        return -1;
    unsigned char h[REC_HEAD];
    qr_store_u32(h, REC_MAGIC);
    qr_store_u32(h + 4, (uint32_t)n);
    qr_store_u64(h + 8, s);
    qr_store_u32(h + 16, rec_check(h, p, n));
    int rc = qr_write_all(w->fd, h, sizeof h, w->path, e);
    if (rc == 0 && n)
        rc = qr_write_all(w->fd, p, n, w->path, e);
    if (rc != 0) {
        /* nothing of the record may stay: a later record would follow it */
        if (ftruncate(w->fd, (off_t)w->size) != 0 || lseek(w->fd, (off_t)w->size, SEEK_SET) < 0) {
            pthread_mutex_lock(&w->mu);
            w->poisoned = 1;
            qr_errf(&w->why, QR_E_IO, "cutting a failed write of %s: %s", w->path, strerror(errno));
            pthread_mutex_unlock(&w->mu);
        }
        return -1;
    }
    w->size += REC_HEAD + n;
    pthread_mutex_lock(&w->mu);
    w->next_seq = s + 1;
    w->written = s;
    pthread_mutex_unlock(&w->mu);
    *seq = s;
    return 0;
}

int qr_wal_sync(qr_wal *w, uint64_t seq, qr_err *e)
{
    pthread_mutex_lock(&w->mu);
    while (!w->poisoned && w->sync && w->durable < seq) {
        if (w->syncing) {
            pthread_cond_wait(&w->cv, &w->mu);
            continue;
        }
        /* lead: everything written so far goes in this one fsync */
        w->syncing = 1;
        uint64_t target = w->written;
        int fd = w->fd;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s", w->path);
        pthread_mutex_unlock(&w->mu);
        qr_err se;
        int rc = fd >= 0 ? qr_fsync_file(fd, path, &se) : 0;
        pthread_mutex_lock(&w->mu);
        w->syncing = 0;
        if (rc != 0) {
            w->poisoned = 1;
            w->why = se;
        } else if (target > w->durable) {
            w->durable = target;
        }
        pthread_cond_broadcast(&w->cv);
    }
    int bad = w->poisoned && (w->sync ? w->durable < seq : 0);
    pthread_mutex_unlock(&w->mu);
    return bad ? poisoned(w, e) : 0;
}

int qr_wal_rotate(qr_wal *w, size_t min_bytes, qr_err *e)
{
    if (w->fd < 0 || w->size <= FILE_HEAD || w->size < min_bytes)
        return 0;
    pthread_mutex_lock(&w->mu);
    while (w->syncing)
        pthread_cond_wait(&w->cv, &w->mu);
    if (w->poisoned) {
        pthread_mutex_unlock(&w->mu);
        return poisoned(w, e);
    }
    w->syncing = 1; /* no other sync while the file changes */
    pthread_mutex_unlock(&w->mu);
    qr_err se;
    int rc = qr_fsync_file(w->fd, w->path, &se);
    pthread_mutex_lock(&w->mu);
    w->syncing = 0;
    if (rc != 0) {
        w->poisoned = 1;
        w->why = se;
    } else {
        w->durable = w->written;
        close(w->fd);
        w->fd = -1; /* the next write starts the new file */
        w->bytes_old += w->size;
        w->size = 0;
    }
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (rc != 0) {
        if (e)
            *e = se;
        return -1;
    }
    return 0;
}

void qr_wal_release(qr_wal *w, uint64_t upto)
{
    uint32_t keep = 0;
    char path[PATH_MAX];
    for (uint32_t i = 0; i < w->nfiles; i++) {
        int current = w->fd >= 0 && i + 1 == w->nfiles;
        /* file i holds seqs firsts[i] .. firsts[i+1]-1 (the last: .. written) */
        uint64_t last = i + 1 < w->nfiles ? w->firsts[i + 1] - 1 : qr_wal_last(w);
        if (!current && last <= upto) {
            file_path(w->dir, w->firsts[i], path, sizeof path);
            struct stat st;
            if (stat(path, &st) == 0)
                w->bytes_old -=
                    (uint64_t)st.st_size < w->bytes_old ? (uint64_t)st.st_size : w->bytes_old;
            unlink(path);
            continue;
        }
        w->firsts[keep++] = w->firsts[i];
    }
    w->nfiles = keep;
}
