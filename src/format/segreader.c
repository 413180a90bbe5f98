/* segreader.c - opening a segment file: header, trailer and footer read
 * (pread) and checked, the file mapped for the rest,
 * directory parsing with bounds checks, and checksummed block access: a
 * whole block, or (format 9) the chunks of a block holding the bytes a
 * reader is about to decode, each verified once per open.
 *
 * Nothing read from the file is trusted: every offset, length and count is
 * checked before use, and a failure names the file and the structure.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "format/codec.h"
#include "format/segfmt.h"
#include "format/segment.h"
#include "util/hash.h"

/* Per thread, kept between opens and freed when the thread ends: a zstd
 * decompression context for footers and column directories (ZSTD_decompress
 * makes and frees one of ~100 KB on every call), and the buffers an open
 * reads the file's tail and decompresses the footer into. Fresh pages cost
 * a fault each on first touch (~15 us on a virtual machine); a buffer
 * malloc'ed and freed per open was trimmed back to the system between
 * opens and faulted in again every time. */
typedef struct open_scratch {
    ZSTD_DCtx *dctx;
    unsigned char *buf[2];
    size_t cap[2];
} open_scratch;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static void scratch_free(void *p)
{
    open_scratch *o = p;
    ZSTD_freeDCtx(o->dctx);
    free(o->buf[0]);
    free(o->buf[1]);
    free(o);
}
static void scratch_init(void) { (void)pthread_key_create(&scratch_key, scratch_free); }

static open_scratch *scratch(void)
{
    (void)pthread_once(&scratch_once, scratch_init);
    open_scratch *o = pthread_getspecific(scratch_key);
    if (!o && (o = calloc(1, sizeof *o)) != NULL && pthread_setspecific(scratch_key, o) != 0) {
        free(o);
        o = NULL;
    }
    return o;
}

/* This thread's scratch buffer i (0: the file's tail, 1: the raw footer)
 * of at least n bytes, or NULL (out of memory). Valid until the next call
 * for the same i on this thread. */
static unsigned char *scratch_buf(int i, size_t n)
{
    open_scratch *o = scratch();
    if (!o)
        return NULL;
    if (o->cap[i] < n) {
        free(o->buf[i]);
        o->cap[i] = 0;
        if (!(o->buf[i] = malloc(n)))
            return NULL;
        o->cap[i] = n;
    }
    return o->buf[i];
}

static size_t decompress(void *dst, size_t cap, const void *src, size_t len)
{
    open_scratch *o = scratch();
    if (o && !o->dctx)
        o->dctx = ZSTD_createDCtx();
    return o && o->dctx ? ZSTD_decompressDCtx(o->dctx, dst, cap, src, len)
                        : ZSTD_decompress(dst, cap, src, len);
}

/* A fuzzing-only build (-DQR_FUZZ_NO_CHECKSUMS, fuzz/fuzz_segment_nocrc.c)
 * takes every checksum as right, so the fuzzer reaches the decoders behind
 * them instead of stopping at a mismatch. Never in a real build. */
#ifdef QR_FUZZ_NO_CHECKSUMS
#define QR_SKIP_CHECKSUMS 1
#else
#define QR_SKIP_CHECKSUMS 0
#endif

static int corrupt(qr_err *e, const char *path, const char *what)
{
    return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s", path, what);
}

static int valid_encoding(int type, uint8_t enc, uint8_t hex_bytes)
{
    if (!qr_type_valid(type))
        return 0;
    if (qr_type_is_int(type))
        return enc == ENC_INT;
    if (enc == ENC_HEXID)
        return type == QT_TEXT && hex_bytes >= 4 && hex_bytes <= 32;
    return enc == ENC_DICT || enc == ENC_PAGED;
}

/* "column NAME" or "index section ID": whose directory entry it is. */
static const char *entry_owner(char *buf, size_t n, const char *col, uint32_t sec)
{
    if (col)
        snprintf(buf, n, "column %s", col);
    else
        snprintf(buf, n, "index section %u", sec);
    return buf;
}

/* One block directory entry (layout in segfmt.h / FORMAT.md): 44 bytes,
 * then in formats 9 to 11 the chunk checksums of a chunked block, copied
 * to s->own_sums (room for every u32 of the footer: `sums_cap`). Format 12
 * entries take their checksums from the table in the file, in order. The
 * entry is block bi of column `col` (or, when col is NULL, of index
 * section `sec`), for messages. */
static int read_blockref(qr_segment *s, qr_rd *r, qr_blockref *b, size_t sums_cap, const char *col,
                         uint32_t sec, uint32_t bi, uint32_t slot, qr_err *e)
{
    char what[300];
    b->kind = qr_rd_u8(r);
    b->flags = qr_rd_u8(r);
    uint16_t shift = qr_rd_u16(r); /* format 8: reserved, 0 */
    b->first_row = qr_rd_u32(r);
    b->rows = qr_rd_u32(r);
    b->length = qr_rd_u32(r);
    b->offset = qr_rd_u64(r);
    b->checksum = qr_rd_u32(r);
    b->min = (int64_t)qr_rd_u64(r);
    b->max = (int64_t)qr_rd_u64(r);
    if (r->bad)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: footer truncated in %s block %u",
                       s->path, entry_owner(what, sizeof what, col, sec), bi);
    b->chunk_shift = 0;
    b->nchunks = 1;
    if (s->version >= 9 && shift != 0) {
        if (shift < QR_SEG_CHUNK_SHIFT_MIN || shift > QR_SEG_CHUNK_SHIFT_MAX || b->checksum != 0)
            return qr_errf(e, QR_E_CORRUPT,
                           "segment %s: corrupt: %s block %u: chunk shift %u, block checksum %08x",
                           s->path, entry_owner(what, sizeof what, col, sec), bi, shift,
                           b->checksum);
        b->chunk_shift = (uint8_t)shift;
        b->nchunks = (uint32_t)(((uint64_t)b->length + (1ull << shift) - 1) >> shift);
        if (s->version >= QR_SEG_VERSION_SUMS ? b->nchunks > s->nsums - s->sums_used
                                              : (uint64_t)b->nchunks * 4 > qr_rd_left(r))
            return qr_errf(e, QR_E_CORRUPT,
                           "segment %s: corrupt: %s block %u: its %u chunk checksums are not "
                           "there (%s)",
                           s->path, entry_owner(what, sizeof what, col, sec), bi, b->nchunks,
                           s->version >= QR_SEG_VERSION_SUMS ? "past the checksum table"
                                                             : "footer truncated");
    }
    if (slot != UINT32_MAX) { /* an out-of-line column directory: its slots were reserved */
        if (b->chunk_shift)
            return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s block %u is chunked",
                           s->path, entry_owner(what, sizeof what, col, sec), bi);
        b->chunk0 = slot; /* its checksum is b->checksum: no chunk table entry */
        return 0;
    }
    b->chunk0 = (uint32_t)s->nchunks;
    s->nchunks += b->nchunks;
    if (b->chunk_shift == 0)
        return 0;
    b->sum0 = (uint32_t)s->sums_used;
    if (s->version < QR_SEG_VERSION_SUMS) { /* little-endian u32s: copied as they are */
        if (!s->own_sums && !(s->own_sums = malloc(sums_cap * 4)))
            return qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", s->path);
        memcpy(s->own_sums + s->sums_used * 4, qr_rd_bytes(r, (size_t)b->nchunks * 4),
               (size_t)b->nchunks * 4);
        s->chunk_sums = s->own_sums;
    }
    s->sums_used += b->nchunks;
    return 0;
}

/* The block entries of column cm (nblocks of them) from r into blocks[],
 * checked: inside the data area, auxiliary blocks first, data blocks
 * contiguous and covering every row. slot0: UINT32_MAX for a footer
 * directory (chunk slots taken as they come), else the first of the
 * column's reserved slots (an out-of-line directory: unchunked entries).
 * Sets cm's dict/zdict/keys blocks, first_data and ndata. */
static int read_coldir(qr_segment *s, qr_rd *r, qr_colmeta *cm, qr_blockref *blocks,
                       size_t sums_cap, uint32_t slot0, qr_err *e)
{
    cm->dict_blk = cm->zdict_blk = cm->keys_blk = -1;
    uint32_t next_row = 0, ndata = 0;
    int in_data = 0, after_data = 0;
    for (uint32_t i = 0; i < cm->nblocks; i++) {
        qr_blockref *b = &blocks[i];
        if (read_blockref(s, r, b, sums_cap, cm->name, 0, i,
                          slot0 == UINT32_MAX ? UINT32_MAX : slot0 + i, e) != 0)
            return -1;
        if (b->offset < QR_SEG_HEADER_LEN || b->offset > s->data_end ||
            b->length > s->data_end - b->offset)
            return qr_errf(e, QR_E_CORRUPT,
                           "segment %s: column %s block %u lies outside the data area "
                           "(offset %llu, %u bytes)",
                           s->path, cm->name, i, (unsigned long long)b->offset, b->length);
        int32_t *slot = NULL;
        switch (b->kind) {
        case BLK_DATA:
            if (after_data || b->first_row != next_row || b->rows == 0 ||
                b->rows > QR_BLOCK_ROWS || b->rows > s->rows - next_row)
                return qr_errf(e, QR_E_CORRUPT,
                               "segment %s: column %s block %u covers rows %u+%u, "
                               "expected to start at %u",
                               s->path, cm->name, i, b->first_row, b->rows, next_row);
            if (!in_data)
                cm->first_data = i;
            in_data = 1;
            next_row += b->rows;
            ndata++;
            break;
        case BLK_DICT:
            slot = &cm->dict_blk;
            break;
        case BLK_ZDICT:
            slot = &cm->zdict_blk;
            break;
        case BLK_KEYS:
            slot = &cm->keys_blk;
            break;
        default:
            return qr_errf(e, QR_E_CORRUPT, "segment %s: column %s block %u has kind %u",
                           s->path, cm->name, i, b->kind);
        }
        if (slot) {
            if (*slot >= 0 || in_data)
                return qr_errf(e, QR_E_CORRUPT,
                               "segment %s: column %s: misplaced auxiliary block %u",
                               s->path, cm->name, i);
            *slot = (int32_t)i;
        }
        if (in_data && b->kind != BLK_DATA)
            after_data = 1;
    }
    if (next_row != s->rows)
        return qr_errf(e, QR_E_CORRUPT,
                       "segment %s: column %s blocks cover %u rows, segment has %llu",
                       s->path, cm->name, next_row, (unsigned long long)s->rows);
    cm->ndata = ndata;
    if (cm->encoding == ENC_DICT && cm->dict_blk < 0)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: column %s has no dictionary block",
                       s->path, cm->name);
    if (cm->type == QT_MAP && cm->keys_blk < 0)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: column %s has no key dictionary",
                       s->path, cm->name);
    return 0;
}

static int parse_footer(qr_segment *s, const unsigned char *f, size_t n, uint64_t data_end,
                        qr_err *e)
{
    s->data_end = data_end;
    qr_rd r;
    qr_rd_init(&r, f, n);
    s->rows = qr_rd_u64(&r);
    s->min_ts = (int64_t)qr_rd_u64(&r);
    s->max_ts = (int64_t)qr_rd_u64(&r);
    uint16_t sort = qr_rd_u16(&r);
    (void)qr_rd_u16(&r);
    uint32_t ncols = qr_rd_u32(&r);
    uint32_t nsums = 0, sums_sum = 0;
    if (s->version >= QR_SEG_VERSION_SUMS) {
        nsums = qr_rd_u32(&r);
        sums_sum = qr_rd_u32(&r);
    }
    if (r.bad)
        return corrupt(e, s->path, "footer truncated in segment header fields");
    if (s->version >= QR_SEG_VERSION_SUMS) {
        /* the chunk checksum table ends where the footer starts */
        uint64_t tlen = (uint64_t)nsums * 4;
        if (tlen > data_end - QR_SEG_HEADER_LEN)
            return qr_errf(e, QR_E_CORRUPT,
                           "segment %s: corrupt: a chunk checksum table of %u entries does not "
                           "fit before the footer (offset %llu)",
                           s->path, nsums, (unsigned long long)data_end);
        data_end -= tlen;
        s->data_end = data_end;
        s->nsums = nsums;
        s->chunk_sums = s->map + data_end;
        if (!QR_SKIP_CHECKSUMS && qr_checksum32(s->chunk_sums, (size_t)tlen) != sums_sum)
            return qr_errf(e, QR_E_CORRUPT,
                           "segment %s: corrupt: chunk checksum table (offset %llu, %llu bytes): "
                           "checksum mismatch",
                           s->path, (unsigned long long)data_end, (unsigned long long)tlen);
    }
    if (ncols == 0 || ncols > QR_MAX_COLUMNS || ncols > n / 26)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: footer lists %u columns", s->path,
                       ncols);
    if (s->rows > UINT32_MAX)
        return corrupt(e, s->path, "row count over 2^32");
    if (sort != QR_SEG_NO_SORT && sort >= ncols)
        return corrupt(e, s->path, "sort column out of range");
    s->sort_col = sort == QR_SEG_NO_SORT ? -1 : (int32_t)sort;
    /* bound the block count by the footer size before allocating */
    size_t max_entries = n / QR_SEG_DIRENT_LEN + 1;
    /* every entry is written as it is read: malloc leaves the unused tail of
     * this bound untouched (calloc would fault in every page of it) */
    s->all_blocks = malloc(max_entries * sizeof *s->all_blocks);
    s->cols = calloc(ncols, sizeof *s->cols);
    s->names = malloc(n + ncols); /* names are shorter than the footer */
    if (!s->all_blocks || !s->cols || !s->names)
        return qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", s->path);
    s->ncols = ncols;
    size_t used = 0, names_used = 0;
    /* formats 9 to 11: every chunk checksum is 4 bytes of the footer, so
     * one allocation of that bound holds them (its untouched tail costs
     * nothing) */
    size_t sums_cap = n / 4 + 1;
    for (uint32_t c = 0; c < ncols; c++) {
        qr_colmeta *cm = &s->cols[c];
        uint64_t nl = qr_rd_varint(&r);
        const unsigned char *np = qr_rd_bytes(&r, nl);
        if (r.bad || nl == 0 || nl > QR_MAX_NAME || !qr_col_name_ok((const char *)np, nl))
            return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: column %u has a bad name",
                           s->path, c);
        memcpy(s->names + names_used, np, nl);
        s->names[names_used + nl] = 0;
        cm->name = s->names + names_used;
        names_used += nl + 1;
        for (uint32_t k = 0; k < c; k++)
            if (strcasecmp(s->cols[k].name, cm->name) == 0)
                return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: column %s appears twice",
                               s->path, cm->name);
        cm->type = qr_rd_u8(&r);
        cm->encoding = qr_rd_u8(&r);
        cm->hex_bytes = qr_rd_u8(&r);
        uint8_t cflags = qr_rd_u8(&r); /* format 10: QR_COLF_*; before: reserved, 0 */
        cm->null_count = qr_rd_u64(&r);
        cm->raw_bytes = qr_rd_u64(&r);
        cm->nblocks = qr_rd_u32(&r);
        if (r.bad)
            return corrupt(e, s->path, "footer truncated in column header");
        if (s->version < 10 ? cflags != 0 : (cflags & ~QR_COLF_DIR_OUT) != 0)
            return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: column %s has flags %02x",
                           s->path, cm->name, cflags);
        cm->lazy = (cflags & QR_COLF_DIR_OUT) != 0;
        if (!valid_encoding(cm->type, cm->encoding, cm->hex_bytes))
            return qr_errf(e, QR_E_CORRUPT,
                           "segment %s: corrupt: column %s: type %u with encoding %u", s->path,
                           cm->name, cm->type, cm->encoding);
        if (cm->null_count > s->rows)
            return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: column %s: %llu NULLs",
                           s->path, cm->name, (unsigned long long)cm->null_count);
        if (cm->lazy) { /* format 10: blocks in their own directory, read on first use */
            cm->dir_off = qr_rd_u64(&r);
            cm->dir_len = qr_rd_u32(&r);
            cm->dir_raw = qr_rd_u32(&r);
            cm->dir_sum = qr_rd_u32(&r);
            if (r.bad)
                return corrupt(e, s->path, "footer truncated in a column directory reference");
            if (cm->nblocks == 0 || cm->nblocks > s->rows + 3 || cm->dir_off < QR_SEG_HEADER_LEN || cm->dir_off > data_end ||
                cm->dir_len > data_end - cm->dir_off ||
                cm->dir_raw != (uint64_t)cm->nblocks * QR_SEG_DIRENT_LEN)
                return qr_errf(e, QR_E_CORRUPT,
                               "segment %s: corrupt: column %s: block directory of %u blocks "
                               "at offset %llu (%u bytes, %u raw) is out of range",
                               s->path, cm->name, cm->nblocks, (unsigned long long)cm->dir_off,
                               cm->dir_len, cm->dir_raw);
            s->dir_bytes += cm->dir_len; /* its chunk bits: after the footer's */
            cm->dict_blk = cm->zdict_blk = cm->keys_blk = -1;
            continue;
        }
        if (cm->nblocks > max_entries - used)
            return qr_errf(e, QR_E_CORRUPT, "segment %s: column %s claims %u blocks", s->path,
                           cm->name, cm->nblocks);
        cm->blocks = s->all_blocks + used;
        used += cm->nblocks;
        if (read_coldir(s, &r, cm, cm->blocks, sums_cap, UINT32_MAX, e) != 0)
            return -1;
        cm->loaded = 1;
    }
    if (s->sort_col >= 0 && s->cols[s->sort_col].type != QT_TIMESTAMP)
        return corrupt(e, s->path, "the sort column is not a timestamp column");
    uint32_t nsecs = qr_rd_u32(&r);
    if (r.bad || nsecs > QR_SEG_MAX_SECTIONS)
        return corrupt(e, s->path, "bad section count in the footer");
    if (!(s->secs = calloc(nsecs ? nsecs : 1, sizeof *s->secs)))
        return qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", s->path);
    for (uint32_t i = 0; i < nsecs; i++) {
        qr_section *sec = &s->secs[i];
        sec->id = qr_rd_u16(&r);
        sec->col = qr_rd_u16(&r);
        sec->kind = qr_rd_u8(&r);
        sec->flags = qr_rd_u8(&r);
        (void)qr_rd_u16(&r);
        sec->nblocks = qr_rd_u32(&r);
        if (r.bad)
            return corrupt(e, s->path, "footer truncated in section header");
        if (sec->col >= ncols || sec->kind < QR_IX_FULLTEXT || sec->kind > QR_IX_PATHS)
            return qr_errf(e, QR_E_CORRUPT,
                           "segment %s: corrupt: section %u: column %u, index kind %u", s->path,
                           sec->id, sec->col, sec->kind);
        for (uint32_t k = 0; k < i; k++)
            if (s->secs[k].id == sec->id)
                return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: section %u appears twice",
                               s->path, sec->id);
        if (sec->nblocks > max_entries - used)
            return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: section %u claims %u blocks",
                           s->path, sec->id, sec->nblocks);
        sec->blocks = s->all_blocks + used;
        used += sec->nblocks;
        for (uint32_t k = 0; k < sec->nblocks; k++) {
            qr_blockref *b = &sec->blocks[k];
            if (read_blockref(s, &r, b, sums_cap, NULL, sec->id, k, UINT32_MAX, e) != 0)
                return -1;
            if (b->kind < QR_BLK_SECTION_MIN || b->offset < QR_SEG_HEADER_LEN ||
                b->offset > data_end || b->length > data_end - b->offset)
                return qr_errf(e, QR_E_CORRUPT,
                               "segment %s: corrupt: section %u block %u: bad kind or location",
                               s->path, sec->id, k);
        }
    }
    s->nsecs = nsecs;
    s->nall = used;
    if (qr_rd_left(&r) != 0)
        return corrupt(e, s->path, "trailing bytes after the block directory");
    if (s->version < QR_SEG_VERSION_SUMS)
        s->nsums = s->sums_used;
    else if (s->sums_used != s->nsums)
        return qr_errf(e, QR_E_CORRUPT,
                       "segment %s: corrupt: the chunk checksum table holds %zu checksums, "
                       "the block directory has %zu chunks",
                       s->path, s->nsums, s->sums_used);
    /* the out-of-line columns' blocks get verified bits after every block
     * of the footer, and no chunk table entries (an unchunked block's
     * checksum is its entry's): an open writes nothing for them */
    for (uint32_t c = 0; c < ncols; c++)
        if (s->cols[c].lazy) {
            s->cols[c].chunk_base = (uint32_t)s->nchunks;
            s->nchunks += s->cols[c].nblocks;
        }
    s->chunk_ok = calloc(s->nchunks / 64 + 1, sizeof *s->chunk_ok);
    if (!s->chunk_ok)
        return qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", s->path);
    /* Give back what the bounds above took and parsing did not use (most
     * of the names' bound, the directory's tail), so the next allocations
     * fill those pages instead of faulting in new ones: a table's open
     * makes these for every segment, and fresh pages cost a fault each. */
    /* (the pointers into them are set again as they were laid out: names
     * one after another in column order, then the inline directories in
     * column order, then the sections') */
    char *names = realloc(s->names, names_used);
    if (names) {
        s->names = names;
        for (uint32_t c = 0, at = 0; c < ncols; c++) {
            s->cols[c].name = names + at;
            at += (uint32_t)strlen(names + at) + 1;
        }
    }
    qr_blockref *blocks = used ? realloc(s->all_blocks, used * sizeof *blocks) : NULL;
    if (blocks) {
        s->all_blocks = blocks;
        size_t at = 0;
        for (uint32_t c = 0; c < ncols; c++)
            if (!s->cols[c].lazy) {
                s->cols[c].blocks = blocks + at;
                at += s->cols[c].nblocks;
            }
        for (uint32_t i = 0; i < nsecs; i++) {
            s->secs[i].blocks = blocks + at;
            at += s->secs[i].nblocks;
        }
    }
    return 0;
}

uint64_t *qr_seg_codes_ok(const qr_segment *cs)
{
    qr_segment *s = (qr_segment *)cs; /* the one part made later */
    uint64_t *have = __atomic_load_n(&s->codes_ok, __ATOMIC_ACQUIRE);
    if (have)
        return have;
    uint64_t *mine = calloc(s->nchunks / 64 + 1, sizeof *mine), *none = NULL;
    if (mine && !__atomic_compare_exchange_n(&s->codes_ok, &none, mine, 0, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE)) {
        free(mine); /* another thread's are the ones */
        return none;
    }
    return mine;
}

/* Read column col's out-of-line directory (format 10): checksum,
 * decompress, check its entries as the footer's are checked. Under the
 * segment's directory lock; the entries are published with a release
 * store of cm->loaded, so readers that see it set see them whole. */
static int load_coldir(qr_segment *s, qr_colmeta *cm, qr_err *e)
{
    const unsigned char *z = s->map + cm->dir_off;
    if (!QR_SKIP_CHECKSUMS && qr_checksum32(z, cm->dir_len) != cm->dir_sum)
        return qr_errf(e, QR_E_CORRUPT,
                       "segment %s: corrupt: column %s: block directory checksum mismatch "
                       "(offset %llu, %u bytes)",
                       s->path, cm->name, (unsigned long long)cm->dir_off, cm->dir_len);
    unsigned char *raw = malloc(cm->dir_raw);
    qr_blockref *blocks = calloc(cm->nblocks, sizeof *blocks);
    if (!raw || !blocks) {
        free(raw);
        free(blocks);
        return qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", s->path);
    }
    size_t got = decompress(raw, cm->dir_raw, z, cm->dir_len);
    int rc = 0;
    if (ZSTD_isError(got) || got != cm->dir_raw) {
        rc = qr_errf(e, QR_E_CORRUPT,
                     "segment %s: corrupt: column %s: block directory (offset %llu) does not "
                     "decompress to its %u bytes",
                     s->path, cm->name, (unsigned long long)cm->dir_off, cm->dir_raw);
    } else {
        qr_rd r;
        qr_rd_init(&r, raw, cm->dir_raw);
        rc = read_coldir(s, &r, cm, blocks, 0, cm->chunk_base, e);
        if (rc == 0 && qr_rd_left(&r) != 0)
            rc = qr_errf(e, QR_E_CORRUPT,
                         "segment %s: corrupt: column %s: trailing bytes in its block directory",
                         s->path, cm->name);
    }
    free(raw);
    if (rc != 0) {
        free(blocks);
        return -1;
    }
    cm->blocks = blocks;
    __atomic_store_n(&cm->loaded, 1, __ATOMIC_RELEASE);
    return 0;
}

const qr_colmeta *qr_seg_colmeta_slow(const qr_segment *cs, int col, qr_err *e)
{
    /* the segment is shared read-only; the directory lock guards the one
     * part that is filled in later */
    qr_segment *s = (qr_segment *)cs;
    qr_colmeta *cm = &s->cols[col];
    pthread_mutex_lock(&s->dir_mu);
    int rc = __atomic_load_n(&cm->loaded, __ATOMIC_ACQUIRE) ? 0 : load_coldir(s, cm, e);
    pthread_mutex_unlock(&s->dir_mu);
    return rc == 0 ? cm : NULL;
}

/* Bytes read at the end of a file at open: the trailer and, in one read,
 * the footer of a 190k-row segment (~1.5 KB in format 12; ~15 KB when it
 * held the chunk checksums); a larger footer is read again whole. 64 KB
 * a file copied 4x what format 11 opens needed: a third of a 525-segment
 * table's open time was that copy. */
#define SEG_TAIL_READ (4u << 10)
#define SCRATCH_MAX   (1u << 20)  /* larger footers get buffers of their own */

/* n bytes at offset off of fd into p. 0, or -1 with e set (a short read:
 * the file changed under us, or is being cut). */
static int read_at(int fd, void *p, size_t n, uint64_t off, const char *path, qr_err *e)
{
    unsigned char *c = p;
    while (n) {
        ssize_t r = pread(fd, c, n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return qr_errf(e, QR_E_IO, "segment %s: read at offset %llu: %s", path,
                           (unsigned long long)off, strerror(errno));
        if (r == 0)
            return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: file ends at offset %llu",
                           path, (unsigned long long)off);
        c += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

qr_segment *qr_seg_open(const char *path, qr_err *e)
{
    unsigned char head[QR_SEG_HEADER_LEN], *tail = NULL, *raw = NULL;
    unsigned char *own_foot = NULL, *own_raw = NULL; /* past SCRATCH_MAX: not kept */
    int fd = -1;
    qr_segment *s = calloc(1, sizeof *s);
    if (!s) {
        qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", path);
        return NULL;
    }
    s->path = strdup(path);
    pthread_mutex_init(&s->dir_mu, NULL);
    s->dir_mu_init = 1;
    fd = open(path, O_RDONLY);
    if (fd < 0) {
        qr_errf(e, QR_E_IO, "segment %s: open: %s", path, strerror(errno));
        goto fail;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        qr_errf(e, QR_E_IO, "segment %s: stat: %s", path, strerror(errno));
        goto fail;
    }
    s->len = (size_t)st.st_size;
    if (s->len < QR_SEG_HEADER_LEN + QR_SEG_TRAILER_LEN) {
        qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: file is %zu bytes, too short", path,
                s->len);
        goto fail;
    }
    /* The header, trailer and footer are read with pread, not through the
     * map: a first touch of a mapped page costs a fault (and page tables
     * for the new mapping), ~50-100 us each on a virtual machine, against
     * ~1 us for a read from the page cache; opening a 525-segment table
     * touched ~3 such windows per file. The tail read takes the trailer
     * and, for all but huge footers, the footer with it. */
    size_t tail_len = s->len < SEG_TAIL_READ ? s->len : SEG_TAIL_READ;
    tail = scratch_buf(0, tail_len);
    if (!tail) {
        qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", path);
        goto fail;
    }
    if (read_at(fd, head, sizeof head, 0, path, e) != 0 ||
        read_at(fd, tail, tail_len, s->len - tail_len, path, e) != 0)
        goto fail;
    void *m = mmap(NULL, s->len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        qr_errf(e, QR_E_IO, "segment %s: mmap: %s", path, strerror(errno));
        goto fail;
    }
    s->map = m;
    if (memcmp(head, QR_SEG_MAGIC, 8) != 0) {
        corrupt(e, path, "bad magic at offset 0 (not a Quarry segment)");
        goto fail;
    }
    uint32_t hv = qr_load_u32(head + 8);
    if (hv < QR_SEG_VERSION_MIN || hv > QR_SEG_VERSION) {
        qr_errf(e, QR_E_VERSION,
                "segment %s: format version %u, this build reads versions %u to %u", path, hv,
                QR_SEG_VERSION_MIN, QR_SEG_VERSION);
        goto fail;
    }
    s->version = hv;
    if (qr_load_u32(head + 12) != 0) {
        corrupt(e, path, "unknown header flags at offset 12");
        goto fail;
    }
    const unsigned char *t = tail + tail_len - QR_SEG_TRAILER_LEN;
    if (memcmp(t + 32, QR_SEG_TRAILER_MAGIC, 8) != 0) {
        corrupt(e, path, "bad trailer magic (file truncated or not fully written)");
        goto fail;
    }
    uint64_t foot_off = qr_load_u64(t);
    uint32_t foot_len = qr_load_u32(t + 8), foot_raw = qr_load_u32(t + 12);
    uint32_t foot_sum = qr_load_u32(t + 16), tv = qr_load_u32(t + 20);
    uint64_t file_len = qr_load_u64(t + 24);
    if (tv != hv) {
        qr_errf(e, QR_E_VERSION, "segment %s: trailer format version %u, header version %u", path,
                tv, hv);
        goto fail;
    }
    if (file_len != s->len) {
        qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: file is %zu bytes, trailer says %llu",
                path, s->len, (unsigned long long)file_len);
        goto fail;
    }
    uint64_t data_end = s->len - QR_SEG_TRAILER_LEN;
    if (foot_off < QR_SEG_HEADER_LEN || foot_off > data_end || foot_len != data_end - foot_off ||
        foot_raw > QR_SEG_MAX_FOOTER) {
        corrupt(e, path, "footer location in the trailer is out of range");
        goto fail;
    }
    const unsigned char *foot;
    if (foot_off >= s->len - tail_len) { /* in the tail already read */
        foot = tail + (foot_off - (s->len - tail_len));
    } else {
        tail = foot_len <= SCRATCH_MAX ? scratch_buf(0, foot_len ? foot_len : 1)
                                       : (own_foot = malloc(foot_len));
        if (!tail) {
            qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", path);
            goto fail;
        }
        if (read_at(fd, tail, foot_len, foot_off, path, e) != 0) {
            goto fail;
        }
        foot = tail;
    }
    close(fd);
    fd = -1;
    if (!QR_SKIP_CHECKSUMS && qr_checksum32(foot, foot_len) != foot_sum) {
        qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: footer checksum mismatch (offset %llu, %u bytes)",
                path, (unsigned long long)foot_off, foot_len);
        goto fail;
    }
    raw = foot_raw <= SCRATCH_MAX ? scratch_buf(1, foot_raw ? foot_raw : 1)
                                  : (own_raw = malloc(foot_raw));
    if (!raw) {
        qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", path);
        goto fail;
    }
    size_t got = decompress(raw, foot_raw, foot, foot_len);
    if (ZSTD_isError(got) || got != foot_raw) {
        corrupt(e, path, "footer does not decompress to its stated size");
        goto fail;
    }
    s->footer_bytes = foot_len + QR_SEG_TRAILER_LEN;
    if (parse_footer(s, raw, foot_raw, foot_off, e) != 0)
        goto fail;
    free(own_raw);
    free(own_foot);
    return s;
fail:
    if (fd >= 0)
        close(fd);
    free(own_raw);
    free(own_foot);
    qr_seg_close(s);
    return NULL;
}

void qr_seg_close(qr_segment *s)
{
    if (!s)
        return;
    if (s->map)
        munmap((void *)s->map, s->len);
    free(s->all_blocks);
    for (uint32_t c = 0; s->cols && c < s->ncols; c++) {
        if (s->cols[c].lazy)
            free(s->cols[c].blocks);
        ZSTD_freeDDict(s->cols[c].ddict);
    }
    if (s->dir_mu_init)
        pthread_mutex_destroy(&s->dir_mu);
    free(s->cols);
    free(s->secs);
    free(s->names);
    free(s->own_sums);
    free(s->chunk_ok);
    free(s->codes_ok);
    free(s->deleted);
    free(s->path);
    free(s);
}

/* Who owns block b, for messages: "column Body block 12", "index section 1
 * (Body) block 3 (POSTINGS)". */
static void block_name(const qr_segment *s, const qr_blockref *b, const char *name, char *out,
                       size_t n)
{
    for (uint32_t c = 0; c < s->ncols; c++) {
        const qr_colmeta *cm = &s->cols[c];
        if (cm->blocks && b >= cm->blocks && b < cm->blocks + cm->nblocks) {
            snprintf(out, n, "column %s block %u", cm->name, (unsigned)(b - cm->blocks));
            return;
        }
    }
    for (uint32_t i = 0; i < s->nsecs; i++) {
        const qr_section *sec = &s->secs[i];
        if (b >= sec->blocks && b < sec->blocks + sec->nblocks) {
            char kind[16];
            snprintf(kind, sizeof kind, "kind %u", b->kind);
            snprintf(out, n, "index section %u (%s) block %u (%s)", sec->id, s->cols[sec->col].name,
                     (unsigned)(b - sec->blocks), name ? name : kind);
            return;
        }
    }
    snprintf(out, n, "block at offset %llu", (unsigned long long)b->offset);
}

/* Verify chunks [c0, c1] of block b (those not yet verified in this open). */
static int check_chunks(const qr_segment *s, const qr_blockref *b, uint32_t c0, uint32_t c1,
                        const char *name, qr_err *e)
{
    for (uint32_t c = c0; c <= c1; c++) {
        uint32_t idx = b->chunk0 + c;
        if (qr_seg_chunk_ok(s, idx))
            continue;
        uint64_t start = b->chunk_shift ? (uint64_t)c << b->chunk_shift : 0;
        uint64_t len = b->chunk_shift ? (uint64_t)1 << b->chunk_shift : b->length;
        if (len > b->length - start)
            len = b->length - start;
        uint32_t want =
            b->chunk_shift ? qr_load_u32(s->chunk_sums + ((size_t)b->sum0 + c) * 4) : b->checksum;
        uint32_t sum = QR_SKIP_CHECKSUMS ? want : qr_checksum32(s->map + b->offset + start, len);
        if (sum != want) {
            char who[400];
            block_name(s, b, name, who, sizeof who);
            if (b->chunk_shift == 0)
                return qr_errf(e, QR_E_CORRUPT,
                               "segment %s: corrupt: %s (offset %llu, %u bytes): "
                               "checksum mismatch (stored %08x, computed %08x)",
                               s->path, who, (unsigned long long)b->offset, b->length, want, sum);
            return qr_errf(e, QR_E_CORRUPT,
                           "segment %s: corrupt: %s chunk %u of %u (file offset %llu, %llu "
                           "bytes): checksum mismatch (stored %08x, computed %08x)",
                           s->path, who, c, b->nchunks, (unsigned long long)(b->offset + start),
                           (unsigned long long)len, want, sum);
        }
        __atomic_fetch_or(&s->chunk_ok[idx >> 6], 1ull << (idx & 63), __ATOMIC_RELEASE);
    }
    return 0;
}

/* Every chunk of block b. */
static int check_block(const qr_segment *s, const qr_blockref *b, qr_err *e)
{
    return b->nchunks ? check_chunks(s, b, 0, b->nchunks - 1, NULL, e) : 0;
}

int qr_seg_check_slow(const qr_segment *s, const qr_blockref *b, uint64_t off, uint64_t n,
                      const char *name, qr_err *e)
{
    if (off > b->length || n > b->length - off) {
        char who[400];
        block_name(s, b, name, who, sizeof who);
        return qr_errf(e, QR_E_CORRUPT,
                       "segment %s: corrupt: %s: bytes %llu..%llu lie outside the block (%u "
                       "bytes)",
                       s->path, who, (unsigned long long)off, (unsigned long long)(off + n),
                       b->length);
    }
    if (n == 0)
        return 0;
    uint32_t c0 = b->chunk_shift ? (uint32_t)(off >> b->chunk_shift) : 0;
    uint32_t c1 = b->chunk_shift ? (uint32_t)((off + n - 1) >> b->chunk_shift) : 0;
    return check_chunks(s, b, c0, c1, name, e);
}

int qr_seg_checked(const qr_segment *s, const qr_blockref *b, uint64_t off, uint64_t n)
{
    if (off > b->length || n > b->length - off)
        return 0;
    if (n == 0)
        return 1;
    uint32_t c0 = b->chunk_shift ? (uint32_t)(off >> b->chunk_shift) : 0;
    uint32_t c1 = b->chunk_shift ? (uint32_t)((off + n - 1) >> b->chunk_shift) : 0;
    for (uint32_t c = c0; c <= c1; c++)
        if (!qr_seg_chunk_ok(s, b->chunk0 + c))
            return 0;
    return 1;
}

int qr_seg_block(const qr_segment *s, int col, uint32_t bi, const unsigned char **p, size_t *len,
                 qr_err *e)
{
    const qr_colmeta *cm = qr_seg_colmeta(s, col, e);
    if (!cm)
        return -1;
    if (bi >= cm->nblocks)
        return qr_errf(e, QR_E_INTERNAL, "segment %s: column %s has no block %u", s->path,
                       cm->name, bi);
    const qr_blockref *b = &cm->blocks[bi];
    if (check_block(s, b, e) != 0)
        return -1;
    *p = s->map + b->offset;
    *len = b->length;
    return 0;
}

qr_tabdef *qr_seg_tabdef(const qr_segment *s, qr_err *e)
{
    qr_tabdef *d = qr_tabdef_new(NULL);
    if (!d) {
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    for (uint32_t c = 0; c < s->ncols; c++)
        if (qr_tabdef_add_col(d, s->cols[c].name, strlen(s->cols[c].name), s->cols[c].type, 1,
                              e) < 0) {
            qr_tabdef_free(d);
            return NULL;
        }
    d->sort_col = s->sort_col;
    return d;
}

int qr_seg_col(const qr_segment *s, const char *name)
{
    for (uint32_t c = 0; c < s->ncols; c++)
        if (strcasecmp(s->cols[c].name, name) == 0)
            return (int)c;
    return -1;
}

const qr_section *qr_seg_section(const qr_segment *s, uint16_t id)
{
    for (uint32_t i = 0; i < s->nsecs; i++)
        if (s->secs[i].id == id)
            return &s->secs[i];
    return NULL;
}

int qr_seg_sec_block(const qr_segment *s, const qr_section *sec, uint32_t bi,
                     const unsigned char **p, size_t *len, qr_err *e)
{
    if (bi >= sec->nblocks)
        return qr_errf(e, QR_E_INTERNAL, "segment %s: section %u has no block %u", s->path,
                       sec->id, bi);
    const qr_blockref *b = &sec->blocks[bi];
    if (check_block(s, b, e) != 0)
        return -1;
    *p = s->map + b->offset;
    *len = b->length;
    return 0;
}

int qr_seg_sec_map(const qr_segment *s, const qr_section *sec, uint32_t bi, const unsigned char **p,
                   size_t *len, qr_err *e)
{
    if (bi >= sec->nblocks)
        return qr_errf(e, QR_E_INTERNAL, "segment %s: section %u has no block %u", s->path, sec->id,
                       bi);
    *p = s->map + sec->blocks[bi].offset;
    *len = sec->blocks[bi].length;
    return 0;
}
