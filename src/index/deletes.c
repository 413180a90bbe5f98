/* deletes.c - deletion files (see deletes.h; layout in docs/FORMAT.md):
 *
 *   "QRYDEL1\n" | u64 segment id | u64 rows | u64 deleted count |
 *   ceil(rows/64) x u64 words (bit r = row r deleted) | u32 checksum
 *   (XXH3 low 32 bits of all preceding bytes)
 *
 * Raw words rather than a compressed form: a segment of 2M rows costs
 * 256 KiB, read once per process per generation, and a reader needs the
 * words as they are to exclude rows word by word.
 */
#include "index/deletes.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/fsutil.h"
#include "util/hash.h"
#include "util/popcount.h"

#define DEL_MAGIC  "QRYDEL1\n"
#define DEL_HEADER 32u

void qr_del_path_in(const char *dir, uint64_t id, uint64_t gen, char *buf, size_t n)
{
    snprintf(buf, n, "%s/del-%016llx-%016llx.qdel", dir, (unsigned long long)id,
             (unsigned long long)gen);
}

static size_t words_of(uint64_t rows) { return (size_t)((rows + 63) / 64); }

int qr_del_write(const char *dir, uint64_t id, uint64_t gen, uint64_t rows, const uint64_t *bits,
                 uint64_t count, qr_err *e)
{
    char path[PATH_MAX];
    qr_del_path_in(dir, id, gen, path, sizeof path);
    qr_buf b;
    qr_buf_init(&b);
    qr_buf_put(&b, DEL_MAGIC, 8);
    qr_buf_put_u64(&b, id);
    qr_buf_put_u64(&b, rows);
    qr_buf_put_u64(&b, count);
    for (size_t i = 0; i < words_of(rows); i++)
        qr_buf_put_u64(&b, bits[i]);
    if (!b.oom)
        qr_buf_put_u32(&b, qr_checksum32(b.p, b.len));
    int rc = b.oom ? qr_errf(e, QR_E_NOMEM, "out of memory") : 0;
    if (rc == 0)
        rc = qr_write_file_atomic(path, b.p, b.len, e);
    qr_buf_free(&b);
    return rc;
}

int qr_del_read(const char *dir, const qr_seg_entry *s, uint64_t **bits, qr_err *e)
{
    *bits = NULL;
    char path[PATH_MAX];
    qr_del_path_in(dir, s->id, s->del_gen, path, sizeof path);
    unsigned char *p;
    size_t n;
    if (qr_read_file(path, &p, &n, e) != 0)
        return -1;
    size_t nw = words_of(s->rows);
    const char *bad = NULL;
    if (n != DEL_HEADER + 8 * nw + 4 || memcmp(p, DEL_MAGIC, 8) != 0)
        bad = "bad magic or size";
    else if (qr_checksum32(p, n - 4) != qr_load_u32(p + n - 4))
        bad = "checksum mismatch";
    else if (qr_load_u64(p + 8) != s->id || qr_load_u64(p + 16) != s->rows)
        bad = "it names another segment";
    uint64_t *w = bad ? NULL : malloc(8 * (nw ? nw : 1));
    if (!bad && !w) {
        free(p);
        return qr_errf(e, QR_E_NOMEM, "deletion file %s: out of memory", path);
    }
    for (size_t i = 0; w && i < nw; i++)
        w[i] = qr_load_u64(p + DEL_HEADER + 8 * i);
    if (w && nw && (s->rows & 63) && (w[nw - 1] >> (s->rows & 63)))
        bad = "a row past the segment's end is set";
    else if (w && (qr_popcount_words(w, nw) != qr_load_u64(p + 24) ||
                   qr_load_u64(p + 24) != s->deleted))
        bad = "the count of deleted rows does not match";
    free(p);
    if (bad) {
        free(w);
        return qr_errf(e, QR_E_CORRUPT, "deletion file %s: corrupt: %s", path, bad);
    }
    *bits = w;
    return 0;
}

int qr_del_attach(const char *dir, const qr_seg_entry *s, qr_segment *seg, qr_err *e)
{
    if (!s->del_gen)
        return 0;
    uint64_t *bits;
    if (qr_del_read(dir, s, &bits, e) != 0)
        return -1;
    free(seg->deleted);
    seg->deleted = bits;
    seg->ndeleted = s->deleted;
    return 0;
}

qr_segment *qr_table_open_segment(const char *dir, const qr_seg_entry *s, qr_err *e)
{
    char path[PATH_MAX];
    qr_seg_path_in(dir, s->id, path, sizeof path);
    qr_segment *seg = qr_seg_open(path, e);
    if (seg && seg->rows != s->rows) {
        qr_errf(e, QR_E_CORRUPT, "segment %s has %llu rows, the manifest says %llu", path,
                (unsigned long long)seg->rows, (unsigned long long)s->rows);
        qr_seg_close(seg);
        return NULL;
    }
    if (seg && qr_del_attach(dir, s, seg, e) != 0) {
        qr_seg_close(seg);
        return NULL;
    }
    return seg;
}
