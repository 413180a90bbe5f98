/* colreader.c - per-thread cursors over one column of a segment.
 *
 * A reader decodes the block holding the requested row and keeps it, so a
 * sequential scan decodes each block once and a random read decodes one
 * block (for strings: one small page). Dictionaries (values, zstd dict, map
 * keys) are loaded when the reader opens. Also: map values to JSON, whole
 * rows to canonical NDJSON, and full-segment verification.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "format/codec.h"
#include "format/segfmt.h"
#include "format/segment.h"
#include "util/bitpack.h"
#include "util/timefmt.h"

struct qr_colreader {
    qr_segment *seg;
    int col;
    const qr_colmeta *cm;
    int64_t cur; /* index (in cm->blocks) of the decoded block, -1 none */
    uint32_t cur_first, cur_rows;
    int64_t *ints; /* ENC_INT */
    uint8_t *isnull;
    uint64_t *codes; /* ENC_DICT */
    qr_slice *vals;  /* ENC_PAGED / ENC_HEXID */
    qr_buf page, text;
    qr_slice *dict; /* ENC_DICT values */
    uint32_t ndict;
    qr_buf dictraw;
    qr_slice *keys; /* maps: key dictionary */
    uint32_t nkeys;
    qr_buf keysraw;
    ZSTD_DCtx *dctx;          /* made on the first compressed page */
    const ZSTD_DDict *ddict;  /* the segment's (qr_colmeta.ddict) */
    int random;         /* qr_colr_random: point reads of int/code blocks */
    int64_t point_blk;  /* block of the last point read, -1 none */
    int64_t page_blk;   /* ENC_HEXID point reads: block in `page`, -1 none */
    uint32_t *page_off; /* ENC_HEXID point reads: where each row of `page` starts */
    qr_slice one;       /* ENC_HEXID point reads: the value */
};

static int blk_err(qr_colreader *r, uint32_t bi, const char *why, qr_err *e)
{
    const qr_blockref *b = &r->cm->blocks[bi];
    return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: column %s block %u (offset %llu): %s",
                   r->seg->path, r->cm->name, bi, (unsigned long long)b->offset, why);
}

/* comp_get with the reader's decompression context, made on the first
 * compressed payload (columns of ints and codes never need one). */
static int page_get(qr_colreader *r, const unsigned char *p, size_t len, qr_buf *dst,
                    const ZSTD_DDict *ddict, size_t max_raw, const char **why)
{
    if (len && p[0] != COMP_NONE && !r->dctx && !(r->dctx = ZSTD_createDCtx())) {
        *why = "out of memory";
        return -1;
    }
    return comp_get(p, len, dst, r->dctx, ddict, max_raw, why);
}

/* Decompress an auxiliary value list (dictionary / keys) into raw + slices. */
static int load_vlist(qr_colreader *r, int32_t bi, qr_buf *raw, qr_slice **out, uint32_t *n,
                      qr_err *e)
{
    const unsigned char *p;
    size_t len;
    if (qr_seg_block(r->seg, r->col, (uint32_t)bi, &p, &len, e) != 0)
        return -1;
    const char *why;
    uint32_t cnt = r->cm->blocks[bi].rows;
    if (page_get(r, p, len, raw, NULL, 1u << 30, &why) != 0)
        return blk_err(r, (uint32_t)bi, why, e);
    if (cnt > raw->len + 1)
        return blk_err(r, (uint32_t)bi, "value count larger than the block", e);
    *out = malloc(sizeof **out * (cnt ? cnt : 1));
    if (!*out)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    if (vlist_get(raw->p, raw->len, cnt, *out, &why) != 0)
        return blk_err(r, (uint32_t)bi, why, e);
    *n = cnt;
    return 0;
}

qr_colreader *qr_colr_open(qr_segment *s, int col, qr_err *e)
{
    qr_colreader *r = calloc(1, sizeof *r);
    if (!r) {
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    r->seg = s;
    r->col = col;
    r->cm = qr_seg_colmeta(s, col, e);
    if (!r->cm) {
        free(r);
        return NULL;
    }
    r->cur = -1;
    r->point_blk = -1;
    r->page_blk = -1;
    size_t n = QR_BLOCK_ROWS;
    if (r->cm->encoding == ENC_INT) {
        r->ints = malloc(sizeof *r->ints * n);
        r->isnull = malloc(n);
    } else if (r->cm->encoding == ENC_DICT) {
        r->codes = malloc(sizeof *r->codes * n);
    } else {
        r->vals = malloc(sizeof *r->vals * n);
    }
    if ((!r->ints && !r->codes && !r->vals) ||
        (r->cm->encoding == ENC_INT && !r->isnull)) {
        qr_errf(e, QR_E_NOMEM, "out of memory");
        goto fail;
    }
    if (r->cm->dict_blk >= 0 &&
        load_vlist(r, r->cm->dict_blk, &r->dictraw, &r->dict, &r->ndict, e) != 0)
        goto fail;
    if (r->cm->keys_blk >= 0 &&
        load_vlist(r, r->cm->keys_blk, &r->keysraw, &r->keys, &r->nkeys, e) != 0)
        goto fail;
    if (r->cm->zdict_blk >= 0) {
        const unsigned char *p;
        size_t len;
        if (qr_seg_block(s, col, (uint32_t)r->cm->zdict_blk, &p, &len, e) != 0)
            goto fail;
        qr_colmeta *cm = (qr_colmeta *)r->cm; /* its ddict is a cache */
        ZSTD_DDict *dd = __atomic_load_n((ZSTD_DDict **)&cm->ddict, __ATOMIC_ACQUIRE);
        if (!dd) {
            if (len < 2 || p[0] != COMP_NONE || !(dd = ZSTD_createDDict(p + 1, len - 1))) {
                blk_err(r, (uint32_t)r->cm->zdict_blk, "unusable zstd dictionary", e);
                goto fail;
            }
            void *none = NULL;
            if (!__atomic_compare_exchange_n(&cm->ddict, &none, dd, 0, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE)) {
                ZSTD_freeDDict(dd); /* another reader's came first */
                dd = none;
            }
        }
        r->ddict = dd;
    }
    return r;
fail:
    qr_colr_close(r);
    return NULL;
}

void qr_colr_close(qr_colreader *r)
{
    if (!r)
        return;
    free(r->ints);
    free(r->isnull);
    free(r->codes);
    free(r->vals);
    free(r->dict);
    free(r->keys);
    qr_buf_free(&r->page);
    free(r->page_off);
    qr_buf_free(&r->text);
    qr_buf_free(&r->dictraw);
    qr_buf_free(&r->keysraw);
    ZSTD_freeDCtx(r->dctx);
    free(r);
}

/* Index in cm->blocks of the data block holding `row` (binary search). */
static uint32_t find_block(const qr_colmeta *cm, uint32_t row)
{
    uint32_t lo = cm->first_data, hi = cm->first_data + cm->ndata;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cm->blocks[mid].first_row <= row)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The data block holding `row`, which must exist. */
static int block_of(const qr_colreader *r, uint32_t row, uint32_t *bi, qr_err *e)
{
    if (row >= r->seg->rows)
        return qr_errf(e, QR_E_ARGS, "segment %s: row %u out of range (%llu rows)", r->seg->path,
                       row, (unsigned long long)r->seg->rows);
    /* reads mostly go forward: the block of the last point read, or the
     * next one, before a binary search */
    const qr_colmeta *cm = r->cm;
    int64_t pb = r->point_blk;
    for (int k = 0; pb >= 0 && k < 2; k++, pb++) {
        if ((uint64_t)pb >= (uint64_t)cm->first_data + cm->ndata)
            break;
        const qr_blockref *b = &cm->blocks[pb];
        if (row >= b->first_row && row - b->first_row < b->rows) {
            *bi = (uint32_t)pb;
            return 0;
        }
    }
    *bi = find_block(cm, row);
    return 0;
}

static int load_block(qr_colreader *r, uint32_t row, qr_err *e)
{
    if (r->cur >= 0 && row >= r->cur_first && row - r->cur_first < r->cur_rows)
        return 0;
    uint32_t bi;
    if (block_of(r, row, &bi, e) != 0)
        return -1;
    const qr_blockref *b = &r->cm->blocks[bi];
    const unsigned char *p;
    size_t len;
    if (qr_seg_block(r->seg, r->col, bi, &p, &len, e) != 0)
        return -1;
    const char *why = NULL;
    int rc = 0;
    r->cur = -1;
    r->page_blk = -1; /* page and text are about to be reused */
    switch (r->cm->encoding) {
    case ENC_INT:
        rc = dec_int_block(p, len, b->rows, r->ints, r->isnull, &why);
        break;
    case ENC_DICT: {
        unsigned width = len ? p[0] : 99;
        if (width > 32 || len != 1 + qr_bitpack_bytes(b->rows, width)) {
            why = "code block length does not match its row count";
            rc = -1;
            break;
        }
        qr_bitunpack(p + 1, b->rows, width, r->codes);
        /* every code in range, checked once per block and open (the bytes
         * never change): a GROUP BY decodes each block of its keys once per
         * query, and the check cost as much as the unpacking; a width that
         * cannot exceed the dictionary needs none */
        uint32_t at = b->chunk0;
        if (width < 64 && ((uint64_t)1 << width) - 1 <= r->ndict)
            break;
        uint64_t *ok = qr_seg_codes_ok(r->seg);
        if (ok && b->nchunks && __atomic_load_n(&ok[at >> 6], __ATOMIC_ACQUIRE) >> (at & 63) & 1)
            break;
        const uint64_t *c = r->codes;
        uint64_t nd = r->ndict, bad = 0;
        for (uint32_t i = 0; i < b->rows; i++)
            bad |= c[i] > nd;
        if (bad) {
            why = "dictionary code out of range";
            rc = -1;
        } else if (ok && b->nchunks) {
            __atomic_fetch_or(&ok[at >> 6], 1ull << (at & 63), __ATOMIC_RELEASE);
        }
        break;
    }
    case ENC_PAGED:
        rc = page_get(r, p, len, &r->page, r->ddict, 64u << 20, &why);
        if (rc == 0)
            rc = vlist_get(r->page.p, r->page.len, b->rows, r->vals, &why);
        break;
    case ENC_HEXID:
        rc = page_get(r, p, len, &r->page, NULL, 64u << 20, &why);
        if (rc == 0)
            rc = dec_hexid_page(r->page.p, r->page.len, b->rows, r->cm->hex_bytes, &r->text,
                                r->vals, &why);
        break;
    default:
        why = "unknown encoding";
        rc = -1;
    }
    if (rc != 0)
        return blk_err(r, bi, why, e);
    r->cur = bi;
    r->cur_first = b->first_row;
    r->cur_rows = b->rows;
    return 0;
}

void qr_colr_random(qr_colreader *r, int on) { r->random = on; }

/* A point read of row `row` when the reader is in random mode and its block
 * is not the decoded one: 1 = done (value in *iv / *code), 0 = decode the
 * block instead (the second read in a row from the same block, or not an
 * int/code column), -1 = error. */
static int point_read(qr_colreader *r, uint32_t row, int64_t *iv, uint8_t *isnull, uint64_t *code,
                      qr_err *e)
{
    int enc = r->cm->encoding;
    if (!r->random || (enc != ENC_INT && enc != ENC_DICT && enc != ENC_HEXID) ||
        (r->cur >= 0 && row >= r->cur_first && row - r->cur_first < r->cur_rows))
        return 0;
    uint32_t bi;
    if (block_of(r, row, &bi, e) != 0)
        return -1;
    const qr_blockref *b = &r->cm->blocks[bi];
    const unsigned char *p;
    size_t len;
    if (qr_seg_block(r->seg, r->col, bi, &p, &len, e) != 0)
        return -1;
    if (enc == ENC_INT && (int64_t)bi == r->point_blk && len && p[0] == INT_DELTA)
        return 0; /* a delta block read again: decode it whole (a point read
                   * costs O(row) there; in a frame-of-reference block O(1)) */
    r->point_blk = bi;
    const char *why = NULL;
    uint32_t i = row - b->first_row;
    if (enc == ENC_HEXID) { /* the page stays decompressed; one row to text */
        if (r->page_blk != (int64_t)bi) {
            r->page_blk = -1;
            if (page_get(r, p, len, &r->page, NULL, 64u << 20, &why) != 0)
                return blk_err(r, bi, why, e);
            /* where every row starts: then each row of the page is O(1) */
            uint32_t *no = realloc(r->page_off, sizeof *no * ((size_t)b->rows + 1));
            if (!no)
                return qr_errf(e, QR_E_NOMEM, "out of memory");
            r->page_off = no;
            if (hexid_page_index(r->page.p, r->page.len, b->rows, r->cm->hex_bytes, r->page_off,
                                 &why) != 0)
                return blk_err(r, bi, why, e);
            r->page_blk = bi;
        }
        if (dec_hexid_at(r->page.p, r->page.len, r->cm->hex_bytes, i, r->page_off, &r->text,
                         &r->one) != 0)
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        r->cur = -1; /* page and text no longer hold the decoded block */
        return 1;
    }
    if (enc == ENC_INT) {
        if (dec_int_one(p, len, b->rows, i, iv, isnull, &why) != 0)
            return blk_err(r, bi, why, e);
        return 1;
    }
    unsigned width = len ? p[0] : 99;
    if (width > 32 || len != 1 + qr_bitpack_bytes(b->rows, width))
        return blk_err(r, bi, "code block length does not match its row count", e);
    *code = qr_bitpack_get(p + 1, i, width);
    if (*code > r->ndict)
        return blk_err(r, bi, "dictionary code out of range", e);
    return 1;
}

int qr_colr_int(qr_colreader *r, uint32_t row, int64_t *v, int *isnull, qr_err *e)
{
    if (r->cm->encoding != ENC_INT)
        return qr_errf(e, QR_E_INTERNAL, "column %s is not an integer column", r->cm->name);
    uint8_t nul;
    uint64_t code;
    int pr = point_read(r, row, v, &nul, &code, e);
    if (pr != 0) {
        *isnull = nul;
        return pr < 0 ? -1 : 0;
    }
    if (load_block(r, row, e) != 0)
        return -1;
    *v = r->ints[row - r->cur_first];
    *isnull = r->isnull[row - r->cur_first];
    return 0;
}

int qr_colr_int_block(qr_colreader *r, uint32_t di, const int64_t **v, const uint8_t **isnull,
                      uint32_t *first_row, uint32_t *n, qr_err *e)
{
    if (r->cm->encoding != ENC_INT || di >= r->cm->ndata)
        return qr_errf(e, QR_E_INTERNAL, "column %s: no integer block %u", r->cm->name, di);
    const qr_blockref *b = &r->cm->blocks[r->cm->first_data + di];
    if (load_block(r, b->first_row, e) != 0)
        return -1;
    *v = r->ints;
    *isnull = r->isnull;
    *first_row = r->cur_first;
    *n = r->cur_rows;
    return 0;
}

int qr_colr_code_block(qr_colreader *r, uint32_t di, const uint64_t **codes, uint32_t *first_row,
                       uint32_t *n, qr_err *e)
{
    if (r->cm->encoding != ENC_DICT || di >= r->cm->ndata)
        return qr_errf(e, QR_E_INTERNAL, "column %s: no dictionary code block %u", r->cm->name, di);
    if (load_block(r, r->cm->blocks[r->cm->first_data + di].first_row, e) != 0)
        return -1;
    *codes = r->codes;
    *first_row = r->cur_first;
    *n = r->cur_rows;
    return 0;
}

int qr_colr_codes_at(qr_colreader *r, uint32_t di, const uint32_t *rows, uint32_t m, uint32_t *out,
                     qr_err *e)
{
    if (r->cm->encoding != ENC_DICT || di >= r->cm->ndata)
        return qr_errf(e, QR_E_INTERNAL, "column %s: no dictionary code block %u", r->cm->name, di);
    uint32_t bi = r->cm->first_data + di;
    const qr_blockref *b = &r->cm->blocks[bi];
    if (r->cur == (int64_t)bi) { /* unpacked already */
        for (uint32_t j = 0; j < m; j++)
            out[j] = (uint32_t)r->codes[rows[j] - b->first_row];
        return 0;
    }
    const unsigned char *p;
    size_t len;
    if (qr_seg_block(r->seg, r->col, bi, &p, &len, e) != 0)
        return -1;
    unsigned width = len ? p[0] : 99;
    if (width > 32 || len != 1 + qr_bitpack_bytes(b->rows, width))
        return blk_err(r, bi, "code block length does not match its row count", e);
    for (uint32_t j = 0; j < m; j++) {
        uint32_t at = rows[j] - b->first_row;
        uint64_t c = at < b->rows ? qr_bitpack_get(p + 1, at, width) : UINT64_MAX;
        if (c > r->ndict)
            return blk_err(r, bi, at < b->rows ? "dictionary code out of range" : "row out of block",
                           e);
        out[j] = (uint32_t)c;
    }
    return 0;
}

int qr_colr_bytes_block(qr_colreader *r, uint32_t di, const qr_slice **vals, uint32_t *first_row,
                        uint32_t *n, qr_err *e)
{
    int enc = r->cm->encoding;
    if ((enc != ENC_PAGED && enc != ENC_HEXID) || di >= r->cm->ndata)
        return qr_errf(e, QR_E_INTERNAL, "column %s: no value page %u", r->cm->name, di);
    if (load_block(r, r->cm->blocks[r->cm->first_data + di].first_row, e) != 0)
        return -1;
    *vals = r->vals;
    *first_row = r->cur_first;
    *n = r->cur_rows;
    return 0;
}

const qr_slice *qr_colr_dict(const qr_colreader *r, uint32_t *n)
{
    *n = r->ndict;
    return r->cm->encoding == ENC_DICT ? r->dict : NULL;
}

int qr_colr_bytes(qr_colreader *r, uint32_t row, qr_slice *v, qr_err *e)
{
    if (r->cm->encoding == ENC_INT)
        return qr_errf(e, QR_E_INTERNAL, "column %s is an integer column", r->cm->name);
    int64_t iv;
    uint8_t nul;
    uint64_t c;
    int pr = point_read(r, row, &iv, &nul, &c, e);
    if (pr < 0)
        return -1;
    if (pr == 0 && load_block(r, row, e) != 0)
        return -1;
    uint32_t i = row - r->cur_first;
    if (pr == 1 && r->cm->encoding == ENC_HEXID) {
        *v = r->one;
    } else if (r->cm->encoding == ENC_DICT) {
        if (pr == 0)
            c = r->codes[i];
        if (c == 0) {
            v->p = NULL;
            v->n = 0;
        } else {
            *v = r->dict[c - 1];
        }
    } else {
        *v = r->vals[i];
    }
    return 0;
}

/* The next pair of a keyed map value: its key, whether the value is typed
 * (JSON text) and the value's bytes. 0, or -1 (rd->bad set) when malformed. */
static int map_pair(const qr_colreader *r, qr_rd *rd, const qr_slice **key, int *typed,
                    const unsigned char **vp, uint64_t *vl)
{
    uint64_t tid = qr_rd_varint(rd), id = tid >> 1;
    *vl = qr_rd_varint(rd);
    *vp = qr_rd_bytes(rd, *vl);
    if (rd->bad || id >= r->nkeys || ((tid & 1) && *vl == 0)) {
        rd->bad = 1;
        return -1;
    }
    *key = &r->keys[id];
    *typed = (int)(tid & 1);
    return 0;
}

static int bad_map(const qr_colreader *r, qr_err *e)
{
    return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: column %s: malformed map value",
                   r->seg->path, r->cm->name);
}

/* Walk a map value's pairs, each to fn (when given): the value must hold
 * exactly its pairs, each naming a key of the segment. */
typedef void (*map_pair_fn)(void *ctx, uint64_t k, const qr_slice *key, int typed,
                            const unsigned char *vp, uint64_t vl);

static inline int map_walk(const qr_colreader *r, qr_slice v, map_pair_fn fn, void *ctx, qr_err *e)
{
    qr_rd rd;
    qr_rd_init(&rd, v.p, v.n);
    uint64_t np = qr_rd_varint(&rd);
    for (uint64_t k = 0; k < np && !rd.bad; k++) {
        const qr_slice *key;
        const unsigned char *vp;
        uint64_t vl;
        int typed;
        if (map_pair(r, &rd, &key, &typed, &vp, &vl) != 0)
            break;
        if (fn)
            fn(ctx, k, key, typed, vp, vl);
    }
    if (rd.bad || qr_rd_left(&rd) != 0)
        return bad_map(r, e);
    return 0;
}

int qr_colr_map_check(const qr_colreader *r, qr_slice v, qr_err *e)
{
    return map_walk(r, v, NULL, NULL, e);
}

static void json_pair(void *ctx, uint64_t k, const qr_slice *key, int typed,
                      const unsigned char *vp, uint64_t vl)
{
    qr_buf *out = ctx;
    if (k)
        qr_buf_put_u8(out, ',');
    qj_write_string(out, key->p, key->n);
    qr_buf_put_u8(out, ':');
    if (typed) /* a typed value, kept as its canonical JSON text */
        qr_buf_put(out, vp, vl);
    else
        qj_write_string(out, (const char *)vp, vl);
}

int qr_colr_map_json(qr_colreader *r, qr_slice v, qr_buf *out, qr_err *e)
{
    qr_buf_put_u8(out, '{');
    if (map_walk(r, v, json_pair, out, e) != 0)
        return -1;
    qr_buf_put_u8(out, '}');
    return 0;
}

static void text_pair(void *ctx, uint64_t k, const qr_slice *key, int typed,
                      const unsigned char *vp, uint64_t vl)
{
    (void)k;
    qr_buf *out = ctx;
    qr_buf_put_varint(out, key->n);
    qr_buf_put(out, key->p, key->n);
    qr_buf_put_varint(out, vl << 1 | (uint64_t)typed);
    qr_buf_put(out, vp, vl);
}

int qr_colr_map_text(qr_colreader *r, qr_slice v, qr_buf *out, qr_err *e)
{
    qr_rd rd; /* the pair count first, as the batch's map text has it */
    qr_rd_init(&rd, v.p, v.n);
    qr_buf_put_varint(out, qr_rd_varint(&rd));
    if (map_walk(r, v, text_pair, out, e) != 0)
        return -1;
    return out->oom ? qr_errf(e, QR_E_NOMEM, "out of memory") : 0;
}

int qr_colr_col(const qr_colreader *r) { return r->col; }

const qr_colmeta *qr_colr_meta(const qr_colreader *r) { return r->cm; }

int64_t qr_colr_dict_code(const qr_colreader *r, const char *p, size_t n)
{
    if (r->cm->encoding != ENC_DICT)
        return -1;
    uint32_t lo = 0, hi = r->ndict; /* the dictionary is sorted bytewise */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const qr_slice *v = &r->dict[mid];
        size_t m = v->n < n ? v->n : n;
        int c = m ? memcmp(v->p, p, m) : 0;
        if (c == 0)
            c = v->n < n ? -1 : v->n > n;
        if (c == 0)
            return (int64_t)mid + 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static void put_i64(qr_buf *out, int64_t v)
{
    char num[24];
    int k = 23;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        num[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        num[--k] = '-';
    qr_buf_put(out, num + k, (size_t)(23 - k));
}

/* A whole number below 2^53 as an integer ("1000", "-0"); anything else as
 * the shortest %g text that reads back as the same double. */
static void put_f64(qr_buf *out, double d)
{
    char t[40];
    if (!isfinite(d)) { /* never from valid input: a damaged block */
        qr_buf_put(out, "null", 4);
        return;
    }
    if (d > -9007199254740992.0 && d < 9007199254740992.0 && d == (double)(int64_t)d) {
        snprintf(t, sizeof t, "%.0f", d);
        qr_buf_put(out, t, strlen(t));
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, d);
        if (strtod(t, NULL) == d)
            break;
    }
    qr_buf_put(out, t, strlen(t));
}

void qr_value_int_json(int type, int fmt, int64_t v, qr_buf *out)
{
    switch (type) {
    case QT_TIMESTAMP: {
        int64_t unit = qr_tsfmt_unit_ns(fmt);
        if (fmt >= QR_TS_EPOCH_S && fmt <= QR_TS_EPOCH_NS && v % unit == 0) {
            put_i64(out, v / unit);
            return;
        }
        char t[QR_TIME_TEXT_LEN + 2];
        t[0] = '"';
        qr_time_format(v, t + 1); /* "YYYY-MM-DDTHH:MM:SS.fffffffffZ" */
        size_t n = QR_TIME_TEXT_LEN + 1;
        if (fmt == QR_TS_RFC3339_SHORT) { /* drop zero groups of the fraction */
            char *f = t + 1 + 20;
            int keep = 9;
            while (keep > 0 && !memcmp(f + keep - 3, "000", 3))
                keep -= 3;
            n = 1 + 19 + (keep ? (size_t)keep + 1 : 0); /* '"', seconds, '.' digits */
            t[n++] = 'Z';
        }
        t[n] = '"';
        qr_buf_put(out, t, n + 1);
        return;
    }
    case QT_BOOL:
        if (v)
            qr_buf_put(out, "true", 4);
        else
            qr_buf_put(out, "false", 5);
        return;
    case QT_FLOAT64:
        put_f64(out, qr_num_to_f64(v));
        return;
    case QT_UINT64: {
        char num[24];
        int k = 23;
        uint64_t u = qr_num_to_u64(v);
        do {
            num[--k] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        qr_buf_put(out, num + k, (size_t)(23 - k));
        return;
    }
    default:
        put_i64(out, v);
    }
}

int qr_row_reader_col(const qr_segment *s, const qr_tabdef *d, uint32_t i, qr_err *e)
{
    int c = qr_seg_col(s, d->cols[i].name);
    if (c >= 0 && s->cols[c].type != d->cols[i].type) {
        qr_errf(e, QR_E_DATATYPE, "segment %s: column %s is %s, the table says %s", s->path,
                d->cols[i].name, qr_type_name(s->cols[c].type), qr_type_name(d->cols[i].type));
        return -2;
    }
    return c;
}

int qr_row_readers_open(qr_segment *s, const qr_tabdef *d, qr_colreader **rd, qr_err *e)
{
    for (uint32_t i = 0; i < d->ncols; i++)
        rd[i] = NULL;
    for (uint32_t i = 0; i < d->ncols; i++) {
        int c = qr_row_reader_col(s, d, i, e);
        if (c == -1)
            continue;
        if (c == -2 || !(rd[i] = qr_colr_open(s, c, e))) {
            qr_row_readers_close(d, rd);
            return -1;
        }
    }
    return 0;
}

void qr_row_readers_close(const qr_tabdef *d, qr_colreader **rd)
{
    for (uint32_t i = 0; i < d->ncols; i++) {
        qr_colr_close(rd[i]);
        rd[i] = NULL;
    }
}

static void put_key(qr_buf *out, const char *name, int *first)
{
    if (!*first)
        qr_buf_put_u8(out, ',');
    *first = 0;
    qj_write_string(out, name, strlen(name));
    qr_buf_put_u8(out, ':');
}

int qr_row_json(const qr_tabdef *d, qr_colreader *const *rd, uint32_t row, qr_buf *out, qr_err *e)
{
    qr_buf_put_u8(out, '{');
    int first = 1;
    for (uint32_t c = 0; c < d->ncols; c++) {
        qr_colreader *r = rd[c];
        const qr_coldef *cd = &d->cols[c];
        if (r && r->cm->encoding == ENC_INT) {
            int64_t v;
            int isnull;
            if (qr_colr_int(r, row, &v, &isnull, e) != 0)
                return -1;
            if (isnull && d->omit_nulls)
                continue;
            put_key(out, cd->name, &first);
            if (isnull)
                qr_buf_put(out, "null", 4);
            else
                qr_value_int_json(cd->type, cd->tsfmt, v, out);
            continue;
        }
        qr_slice v = {NULL, 0};
        if (r && qr_colr_bytes(r, row, &v, e) != 0)
            return -1;
        if ((int)c == d->extra_col) { /* spread the catch-all's members */
            if (v.p && v.n >= 2 && v.p[0] == '{' && v.p[v.n - 1] == '}') {
                if (v.n > 2) {
                    if (!first)
                        qr_buf_put_u8(out, ',');
                    first = 0;
                    qr_buf_put(out, v.p + 1, v.n - 2);
                }
            } else if (v.p) {
                return qr_errf(e, QR_E_CORRUPT,
                               "segment %s: corrupt: catch-all column %s holds "
                               "a value that is not an object",
                               r->seg->path, cd->name);
            }
            continue;
        }
        if (!v.p && d->omit_nulls)
            continue;
        put_key(out, cd->name, &first);
        if (!v.p)
            qr_buf_put(out, "null", 4);
        else if (cd->type == QT_MAP) {
            if (qr_colr_map_json(r, v, out, e) != 0)
                return -1;
        } else if (cd->type == QT_JSON)
            qr_buf_put(out, v.p, v.n);
        else
            qj_write_string(out, v.p, v.n);
    }
    qr_buf_put(out, "}\n", 2);
    if (out->oom)
        return qr_errf(e, QR_E_NOMEM, "out of memory formatting a row");
    return 0;
}

int qr_seg_verify(qr_segment *s, qr_err *e)
{
    for (uint32_t i = 0; i < s->nsecs; i++)
        for (uint32_t k = 0; k < s->secs[i].nblocks; k++) {
            const unsigned char *p;
            size_t len;
            if (qr_seg_sec_block(s, &s->secs[i], k, &p, &len, e) != 0)
                return -1;
        }
    for (uint32_t c = 0; c < s->ncols; c++) {
        qr_colreader *r = qr_colr_open(s, (int)c, e);
        if (!r)
            return -1;
        const qr_colmeta *cm = r->cm;
        for (uint32_t i = 0; i < cm->ndata; i++) {
            const qr_blockref *b = &cm->blocks[cm->first_data + i];
            if (load_block(r, b->first_row, e) != 0) {
                qr_colr_close(r);
                return -1;
            }
            /* a map's pairs must name keys of the segment's key table and
             * fill the value exactly; checked as they are read, not
             * rendered (rendering every row as JSON was half of a verify) */
            if (cm->type == QT_MAP)
                for (uint32_t k = 0; k < b->rows; k++) {
                    qr_slice v;
                    if (qr_colr_bytes(r, b->first_row + k, &v, e) != 0 ||
                        (v.p && qr_colr_map_check(r, v, e) != 0)) {
                        qr_colr_close(r);
                        return -1;
                    }
                }
        }
        qr_colr_close(r);
    }
    return 0;
}
