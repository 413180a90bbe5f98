/* catalog.c - DATA/CATALOG, the definitions of a data directory's tables
 * (catalog.h; docs/FORMAT.md "CATALOG").
 *
 * The file is read in two passes: the first checks the top-level object
 * (its keys, "format", "generation") skipping the tables, so a file of
 * another format is refused as such (XX002) whatever its tables hold; the
 * second parses the tables. Every problem in the file is XX001 with
 * "catalog PATH:LINE:COL". Changes hold an exclusive flock on
 * DATA/CATALOG.lock from the re-read to the rename, so concurrent changes
 * serialise; the file itself is replaced with qr_write_file_atomic.
 */
#include "index/catalog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/json.h"

/* ---- names and paths ---- */

int qr_catalog_name_ok(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 63 || (name[0] >= '0' && name[0] <= '9'))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_'))
            return 0;
    }
    return strcasecmp(name, "CATALOG") != 0;
}

/* DATA + suffix ("/CATALOG", "/CATALOG.lock"), DATA without trailing '/'. */
static int data_path(const char *datadir, const char *suffix, char *buf, size_t n, qr_err *e)
{
    size_t len = strlen(datadir);
    while (len > 1 && datadir[len - 1] == '/')
        len--;
    if (len == 0 || (size_t)snprintf(buf, n, "%.*s%s", (int)len, datadir, suffix) >= n)
        return qr_errf(e, QR_E_ARGS, "bad data directory path \"%s\"", datadir);
    return 0;
}

/* ---- reading ---- */

typedef struct cctx {
    qr_json j;
    const char *src; /* "catalog PATH" */
    qr_err *e;
} cctx;

static __attribute__((format(printf, 3, 4))) int cerr(cctx *c, size_t off, const char *fmt, ...)
{
    char why[QR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    unsigned line = 1, col = 1; /* 1-based; columns count UTF-8 characters */
    for (size_t i = 0; i < off; i++) {
        if (c->j.s[i] == '\n')
            line++, col = 1;
        else if (((unsigned char)c->j.s[i] & 0xc0) != 0x80)
            col++;
    }
    return qr_errf(c->e, QR_E_CORRUPT, "%s:%u:%u: %s", c->src, line, col, why);
}

static int jerr(cctx *c) { return cerr(c, c->j.err_off, "%s", c->j.err_why); }

static size_t value_off(const qr_json *j)
{
    const char *p = j->p;
    while (p < j->end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return (size_t)(p - j->s);
}

static size_t key_off(const qr_json *j)
{
    size_t off = value_off(j);
    if (off < (size_t)(j->end - j->s) && j->s[off] == ',') {
        qr_json t = *j;
        t.p = j->s + off + 1;
        off = value_off(&t);
    }
    return off;
}

enum { K_FORMAT, K_GENERATION, K_TABLES };

/* The next top-level key: K_*, 0x100 at '}', -1 on error. */
static int next_top_key(cctx *c, unsigned *seen)
{
    static const char *const keys[] = {"format", "generation", "tables"};
    qr_slice key;
    size_t off = key_off(&c->j);
    int r = qj_object_next(&c->j, &key, NULL);
    if (r < 0)
        return jerr(c);
    if (r == 0)
        return 0x100;
    for (int i = 0; i < 3; i++)
        if (strlen(keys[i]) == key.n && memcmp(keys[i], key.p, key.n) == 0) {
            if (*seen & (1u << i))
                return cerr(c, off, "duplicate key \"%s\"", keys[i]);
            *seen |= 1u << i;
            return i;
        }
    return cerr(c, off, "unknown key \"%.*s\"", (int)(key.n > 64 ? 64 : key.n), key.p);
}

static int read_count(cctx *c, const char *key, int64_t *v)
{
    size_t off = value_off(&c->j);
    if (qj_peek(&c->j) == QJ_ERROR)
        return jerr(c);
    if (qj_peek(&c->j) != QJ_NUMBER || qj_int64(&c->j, v) || *v < 0)
        return cerr(c, off, "\"%s\" must be an integer >= 0", key);
    return 0;
}

/* Pass 1: the top-level object, tables skipped. */
static int read_header(cctx *c, const char *path, int64_t *gen)
{
    int64_t format = -1;
    unsigned seen = 0;
    qj_type t = qj_peek(&c->j);
    if (t != QJ_OBJECT)
        return t == QJ_ERROR
                   ? jerr(c)
                   : cerr(c, value_off(&c->j), t == QJ_END ? "empty file" : "not an object");
    if (qj_object_begin(&c->j))
        return jerr(c);
    for (;;) {
        int k = next_top_key(c, &seen);
        if (k < 0)
            return -1;
        if (k == 0x100)
            break;
        if (k == K_FORMAT && read_count(c, "format", &format))
            return -1;
        if (k == K_GENERATION && read_count(c, "generation", gen))
            return -1;
        if (k == K_TABLES) {
            size_t off = value_off(&c->j);
            qj_type tt = qj_peek(&c->j);
            if (tt == QJ_ERROR)
                return jerr(c);
            if (tt != QJ_ARRAY)
                return cerr(c, off, "\"tables\" must be an array");
            if (qj_skip(&c->j))
                return jerr(c);
        }
    }
    if (qj_finish(&c->j))
        return jerr(c);
    if (!(seen & (1u << K_FORMAT)))
        return cerr(c, 0, "no \"format\"");
    if (format != QR_CATALOG_FORMAT)
        return qr_errf(c->e, QR_E_VERSION, "catalog %s: format %lld, this build reads %d", path,
                       (long long)format, QR_CATALOG_FORMAT);
    if (!(seen & (1u << K_GENERATION)))
        return cerr(c, 0, "no \"generation\"");
    if (!(seen & (1u << K_TABLES)))
        return cerr(c, 0, "no \"tables\"");
    return 0;
}

static int append_table(qr_catalog *c, qr_tabdef *d)
{
    qr_tabdef **nt = realloc(c->tables, sizeof *nt * (c->ntables + 1));
    if (!nt)
        return -1;
    c->tables = nt;
    c->tables[c->ntables++] = d;
    return 0;
}

/* Pass 2: the tables. */
static int read_tables(cctx *c, qr_catalog *cat)
{
    unsigned seen = 0;
    if (qj_object_begin(&c->j))
        return jerr(c);
    for (;;) {
        int k = next_top_key(c, &seen), r;
        if (k < 0)
            return -1;
        if (k == 0x100)
            return 0;
        if (k != K_TABLES) {
            if (qj_skip(&c->j))
                return jerr(c);
            continue;
        }
        if (qj_array_begin(&c->j))
            return jerr(c);
        while ((r = qj_array_next(&c->j)) > 0) {
            size_t off = value_off(&c->j);
            qr_tabdef *d = qr_tabdef_parse_json(&c->j, c->src, c->e);
            if (!d) {
                if (c->e && strcmp(c->e->code, QR_E_NOMEM) != 0)
                    snprintf(c->e->code, sizeof c->e->code, "%s", QR_E_CORRUPT);
                return -1;
            }
            const char *bad = !d->name                        ? "a table without a \"name\""
                              : !qr_catalog_name_ok(d->name)  ? "bad table name"
                              : qr_catalog_find(cat, d->name) ? "a second table named"
                                                              : NULL;
            if (bad) {
                cerr(c, off, "%s%s%s%s", bad, d->name ? " \"" : "", d->name ? d->name : "",
                     d->name ? "\"" : "");
                qr_tabdef_free(d);
                return -1;
            }
            if (append_table(cat, d)) {
                qr_tabdef_free(d);
                return qr_errf(c->e, QR_E_NOMEM, "%s: out of memory", c->src);
            }
        }
        if (r < 0)
            return jerr(c);
    }
}

static int parse_catalog(const char *text, size_t n, const char *path, qr_catalog *cat, qr_err *e)
{
    char src[PATH_MAX + 16];
    snprintf(src, sizeof src, "catalog %s", path);
    cctx c = {.src = src, .e = e};
    int64_t gen = 0;
    qj_init(&c.j, text, n);
    if (read_header(&c, path, &gen))
        return -1;
    cat->generation = (uint64_t)gen;
    qj_init(&c.j, text, n);
    return read_tables(&c, cat);
}

void qr_catalog_free(qr_catalog *c)
{
    for (uint32_t i = 0; i < c->ntables; i++)
        qr_tabdef_free(c->tables[i]);
    free(c->tables);
    memset(c, 0, sizeof *c);
}

int qr_catalog_load(const char *datadir, qr_catalog *c, qr_err *e)
{
    char path[PATH_MAX];
    memset(c, 0, sizeof *c);
    if (data_path(datadir, "/CATALOG", path, sizeof path, e))
        return -1;
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0;
    unsigned char *buf;
    size_t n;
    if (qr_read_file(path, &buf, &n, e))
        return -1;
    int rc = parse_catalog((const char *)buf, n, path, c, e);
    free(buf);
    if (rc)
        qr_catalog_free(c);
    return rc;
}

const qr_tabdef *qr_catalog_find(const qr_catalog *c, const char *name)
{
    for (uint32_t i = 0; i < c->ntables; i++)
        if (strcasecmp(c->tables[i]->name, name) == 0)
            return c->tables[i];
    return NULL;
}

/* ---- changing ---- */

/* Append s to out with every line after the first indented by 4 spaces. */
static void put_indented(qr_buf *out, const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        qr_buf_put_u8(out, s[i]);
        if (s[i] == '\n')
            qr_buf_put(out, "    ", 4);
    }
}

static int write_catalog(const char *datadir, const qr_catalog *c, qr_err *e)
{
    char path[PATH_MAX], head[96];
    if (data_path(datadir, "/CATALOG", path, sizeof path, e))
        return -1;
    qr_buf out, one;
    qr_buf_init(&out);
    qr_buf_init(&one);
    snprintf(head, sizeof head, "{\n  \"format\": %d,\n  \"generation\": %llu,\n  \"tables\": [",
             QR_CATALOG_FORMAT, (unsigned long long)c->generation);
    qr_buf_put(&out, head, strlen(head));
    for (uint32_t i = 0; i < c->ntables; i++) {
        qr_buf_clear(&one);
        qr_tabdef_to_json(c->tables[i], &one);
        const char *sep = i ? ",\n    " : "\n    ";
        qr_buf_put(&out, sep, strlen(sep));
        put_indented(&out, one.p, one.len);
    }
    const char *tail = c->ntables ? "\n  ]\n}\n" : "]\n}\n";
    qr_buf_put(&out, tail, strlen(tail));
    int rc = out.oom || one.oom ? qr_errf(e, QR_E_NOMEM, "catalog %s: out of memory", path)
                                : qr_write_file_atomic(path, out.p, out.len, e);
    qr_buf_free(&out);
    qr_buf_free(&one);
    return rc;
}

/* Open and flock DATA/CATALOG.lock (creating DATA when `create`); returns
 * the descriptor (closing it unlocks) or -1. */
static int lock_catalog(const char *datadir, int create, qr_err *e)
{
    char path[PATH_MAX];
    if (data_path(datadir, "/CATALOG.lock", path, sizeof path, e))
        return -1;
    if (create && qr_mkdirs(datadir, e))
        return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return qr_errf(e, QR_E_IO, "open %s: %s", path, strerror(errno));
    while (flock(fd, LOCK_EX) != 0) {
        if (errno == EINTR)
            continue;
        int err = errno;
        close(fd);
        return qr_errf(e, QR_E_IO, "flock %s: %s", path, strerror(err));
    }
    return fd;
}

int qr_catalog_create_table(const char *datadir, const qr_tabdef *d, int *created, qr_err *e)
{
    if (created)
        *created = 0;
    if (!d->name)
        return qr_errf(e, QR_E_ARGS, "a table definition without a name");
    if (!qr_catalog_name_ok(d->name))
        return qr_errf(e, QR_E_ARGS,
                       strcasecmp(d->name, "CATALOG") == 0
                           ? "table name \"%.64s\" is reserved"
                           : "table name \"%.64s\" is not 1-63 of [A-Za-z0-9_] not starting with "
                             "a digit",
                       d->name);
    char what[96];
    snprintf(what, sizeof what, "table %s", d->name);
    if (qr_tabdef_validate(d, what, e))
        return -1;
    int fd = lock_catalog(datadir, 1, e);
    if (fd < 0)
        return -1;
    qr_catalog c;
    int rc = qr_catalog_load(datadir, &c, e);
    if (rc == 0) {
        const qr_tabdef *old = qr_catalog_find(&c, d->name);
        qr_tabdef *copy = NULL;
        if (old) {
            if (!qr_tabdef_equal(old, d))
                rc = qr_errf(e, QR_E_DUPLICATE_TABLE,
                             "table %s already exists with another definition", old->name);
        } else if (!(copy = qr_tabdef_clone(d)) || append_table(&c, copy)) {
            qr_tabdef_free(copy);
            rc = qr_errf(e, QR_E_NOMEM, "table %s: out of memory", d->name);
        } else {
            c.generation++;
            rc = write_catalog(datadir, &c, e);
            if (rc == 0 && created)
                *created = 1;
        }
    }
    qr_catalog_free(&c);
    close(fd);
    return rc;
}

int qr_catalog_drop_table(const char *datadir, const char *name, qr_err *e)
{
    struct stat st;
    if (stat(datadir, &st) != 0 && errno == ENOENT)
        return qr_errf(e, QR_E_UNDEFINED_TABLE, "table %s does not exist", name);
    int fd = lock_catalog(datadir, 0, e);
    if (fd < 0)
        return -1;
    qr_catalog c;
    int rc = qr_catalog_load(datadir, &c, e);
    if (rc == 0) {
        uint32_t i = 0;
        while (i < c.ntables && strcasecmp(c.tables[i]->name, name) != 0)
            i++;
        if (i == c.ntables) {
            rc = qr_errf(e, QR_E_UNDEFINED_TABLE, "table %s does not exist", name);
        } else {
            qr_tabdef_free(c.tables[i]);
            memmove(&c.tables[i], &c.tables[i + 1], sizeof *c.tables * (c.ntables - i - 1));
            c.ntables--;
            c.generation++;
            rc = write_catalog(datadir, &c, e);
        }
    }
    qr_catalog_free(&c);
    close(fd);
    return rc;
}

int qr_catalog_replace_table(const char *datadir, const qr_tabdef *d, qr_err *e)
{
    if (!d->name)
        return qr_errf(e, QR_E_ARGS, "a table definition without a name");
    char what[96];
    snprintf(what, sizeof what, "table %s", d->name);
    if (qr_tabdef_validate(d, what, e))
        return -1;
    int fd = lock_catalog(datadir, 0, e);
    if (fd < 0)
        return -1;
    qr_catalog c;
    int rc = qr_catalog_load(datadir, &c, e);
    if (rc == 0) {
        uint32_t i = 0;
        while (i < c.ntables && strcasecmp(c.tables[i]->name, d->name) != 0)
            i++;
        qr_tabdef *copy = NULL;
        if (i == c.ntables) {
            rc = qr_errf(e, QR_E_UNDEFINED_TABLE, "table %s does not exist", d->name);
        } else if (!(copy = qr_tabdef_clone(d))) {
            rc = qr_errf(e, QR_E_NOMEM, "table %s: out of memory", d->name);
        } else {
            qr_tabdef_free(c.tables[i]);
            c.tables[i] = copy;
            c.generation++;
            rc = write_catalog(datadir, &c, e);
        }
    }
    qr_catalog_free(&c);
    close(fd);
    return rc;
}
