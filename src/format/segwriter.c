/* segwriter.c - encodes a qr_batch as a segment file.
 *
 * Rows are first ordered by Timestamp (stable, NULLs first). Each column is
 * then written as blocks: integers as ENC_INT blocks of 64K rows; ids as
 * ENC_HEXID pages; strings and maps as ENC_DICT when they have few distinct
 * values, else ENC_PAGED (small pages compressed with a zstd dictionary
 * trained on this segment's values, so one row costs one small page to read).
 * Maps are first rewritten with ids from a per-segment key dictionary.
 * The footer (directory of every block) and trailer come last.
 */
#define ZDICT_STATIC_LINKING_ONLY
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCDict_advanced: tables sized for pages */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zdict.h>
#include <zstd.h>

#include "format/codec.h"
#include "format/segfmt.h"
#include "format/segment.h"
#include "util/bitpack.h"
#include "util/fsutil.h"
#include "util/hash.h"
#include "util/strmap.h"

void qr_seg_opts_default(qr_seg_opts *o)
{
    o->zstd_level = 3;
    o->page_bytes = 4 * 1024;
    o->zdict_bytes = 64 * 1024;
    o->chunk_shift = QR_SEG_CHUNK_SHIFT;
    o->no_sync = 0;
}

typedef struct colout {
    uint8_t encoding;
    uint8_t hex_bytes; /* ENC_HEXID: bytes of a canonical id */
    uint64_t null_count, raw_bytes;
    qr_blockref *blocks;
    uint32_t nblocks, cap;
    qr_buf chunk_sums; /* u32 checksums of the chunked blocks' chunks (chunk0 on) */
    /* a column of many blocks: its directory written out of line */
    int dir_out;
    uint64_t dir_off;
    uint32_t dir_len, dir_raw, dir_sum;
} colout;

typedef struct segw {
    const char *path;
    const char *tmp_path; /* the file being written (path.tmp), named by write errors */
    int fd;
    uint64_t off;   /* file offset of out.p[0] */
    qr_buf out;     /* pending bytes */
    qr_buf tmp, tmp2;
    ZSTD_CCtx *cctx;
    const qr_seg_opts *o;
    const qr_tabdef *def;
    colout *cols; /* def->ncols */
    colout secs[QR_SEG_MAX_SECTIONS];
    const qr_sec_in *sec_in;
    uint32_t nsecs;
    qr_err *e;
} segw;

static int flush_out(segw *w)
{
    if (w->out.oom)
        return qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
    if (qr_write_all(w->fd, w->out.p, w->out.len, w->tmp_path, w->e) != 0)
        return -1;
    w->off += w->out.len;
    qr_buf_clear(&w->out);
    return 0;
}

/* Append bytes to the file and their entry to a directory (column or section). */
static int put_raw_block(segw *w, colout *c, const char *what, uint8_t kind, const void *p,
                         size_t n, uint32_t first_row, uint32_t rows, int64_t mn, int64_t mx,
                         uint8_t flags)
{
    if (n > UINT32_MAX)
        return qr_errf(w->e, QR_E_TOO_LONG, "segment %s: %s block over 4 GiB", w->path, what);
    if (c->nblocks == c->cap) {
        uint32_t nc = c->cap ? c->cap * 2 : 16;
        qr_blockref *nb = realloc(c->blocks, sizeof *nb * nc);
        if (!nb)
            return qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
        c->blocks = nb;
        c->cap = nc;
    }
    if (kind >= QR_BLK_SECTION_MIN) { /* index blocks start on a cache line */
        static const unsigned char zeros[QR_SEC_ALIGN];
        size_t pad = (size_t)((QR_SEC_ALIGN - (w->off + w->out.len) % QR_SEC_ALIGN) % QR_SEC_ALIGN);
        qr_buf_put(&w->out, zeros, pad);
    }
    qr_blockref *b = &c->blocks[c->nblocks++];
    b->offset = w->off + w->out.len;
    b->length = (uint32_t)n;
    b->first_row = first_row;
    b->rows = rows;
    b->checksum = qr_checksum32(p, n);
    b->chunk_shift = 0;
    b->nchunks = 1;
    unsigned sh = w->o->chunk_shift;
    if (kind >= QR_BLK_SECTION_MIN && sh && n > ((size_t)1 << sh)) {
        /* read in parts: a checksum per chunk, so a reader verifies only
         * the chunks it reads */
        b->chunk_shift = (uint8_t)sh;
        b->checksum = 0;
        b->nchunks = (uint32_t)((n + ((size_t)1 << sh) - 1) >> sh);
        b->chunk0 = (uint32_t)(c->chunk_sums.len / 4);
        for (size_t at = 0; at < n; at += (size_t)1 << sh) {
            size_t cl = n - at < ((size_t)1 << sh) ? n - at : (size_t)1 << sh;
            qr_buf_put_u32(&c->chunk_sums, qr_checksum32((const unsigned char *)p + at, cl));
        }
        if (c->chunk_sums.oom)
            return qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
    }
    b->kind = kind;
    b->flags = flags;
    b->min = mn;
    b->max = mx;
    if (n >= (1u << 20)) { /* large: write through */
        if (flush_out(w) != 0 || qr_write_all(w->fd, p, n, w->tmp_path, w->e) != 0)
            return -1;
        w->off += n;
        return 0;
    }
    qr_buf_put(&w->out, p, n);
    if (w->out.len >= (1u << 20))
        return flush_out(w);
    return 0;
}

static int put_block(segw *w, int col, uint8_t kind, const qr_buf *payload, uint32_t first_row,
                     uint32_t rows, int64_t mn, int64_t mx, uint8_t flags)
{
    if (payload->oom)
        return qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory encoding column %s",
                       w->path, w->def->cols[col].name);
    return put_raw_block(w, &w->cols[col], w->def->cols[col].name, kind, payload->p, payload->len,
                         first_row, rows, mn, mx, flags);
}

/* ---- integers ---- */
static int write_int_column(segw *w, int col, const qr_batch *b, const uint32_t *perm)
{
    const qr_colvec *v = &b->cols[col];
    uint32_t n = b->nrows;
    int64_t *vals = malloc(sizeof *vals * QR_BLOCK_ROWS);
    uint8_t *nul = malloc(QR_BLOCK_ROWS);
    if (!vals || !nul) {
        free(vals);
        free(nul);
        return qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
    }
    int rc = 0;
    w->cols[col].encoding = ENC_INT;
    for (uint32_t start = 0; start < n && rc == 0; start += QR_BLOCK_ROWS) {
        uint32_t cnt = n - start < QR_BLOCK_ROWS ? n - start : QR_BLOCK_ROWS;
        for (uint32_t i = 0; i < cnt; i++) {
            uint32_t r = perm[start + i];
            vals[i] = v->ints[r];
            nul[i] = v->isnull[r];
            w->cols[col].null_count += nul[i];
        }
        qr_int_stats st;
        qr_buf_clear(&w->tmp);
        enc_int_block(&w->tmp, vals, nul, cnt, &st);
        w->cols[col].raw_bytes += (uint64_t)cnt * 8;
        rc = put_block(w, col, BLK_DATA, &w->tmp, start, cnt, st.min, st.max,
                       st.all_null ? QR_BLKF_ALL_NULL : 0);
    }
    free(vals);
    free(nul);
    return rc;
}

/* ---- hex ids ---- */
static int write_hexid_column(segw *w, int col, const qr_slice *vals, uint32_t n)
{
    w->cols[col].encoding = ENC_HEXID;
    for (uint32_t start = 0; start < n; start += QR_HEXID_PAGE_ROWS) {
        uint32_t cnt = n - start < QR_HEXID_PAGE_ROWS ? n - start : QR_HEXID_PAGE_ROWS;
        qr_buf_clear(&w->tmp2);
        enc_hexid_page(&w->tmp2, vals + start, cnt, w->cols[col].hex_bytes);
        qr_buf_clear(&w->tmp);
        if (comp_put(&w->tmp, w->tmp2.p, w->tmp2.len, w->o->zstd_level, w->cctx, NULL) != 0)
            return qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
        if (put_block(w, col, BLK_DATA, &w->tmp, start, cnt, 0, 0, 0) != 0)
            return -1;
    }
    return 0;
}

/* ---- dictionary-encoded strings ---- */
static __thread const qr_slice *tl_sort_keys; /* qsort context, per thread */

static int cmp_ids(const void *a, const void *b)
{
    const qr_slice *x = &tl_sort_keys[*(const uint32_t *)a], *y = &tl_sort_keys[*(const uint32_t *)b];
    size_t m = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->p, y->p, m);
    if (c)
        return c;
    return x->n < y->n ? -1 : x->n > y->n;
}

/* vals as DICT: m holds every distinct non-NULL value, ids[i] is value
 * i's id in m (unused for NULLs). */
static int write_dict_column(segw *w, int col, const qr_slice *vals, const uint32_t *ids,
                             uint32_t n, qr_strmap *m)
{
    w->cols[col].encoding = ENC_DICT;
    uint32_t nd = m->count;
    uint32_t *order = malloc(sizeof *order * (nd ? nd : 1));
    uint32_t *code = malloc(sizeof *code * (nd ? nd : 1));
    qr_slice *sorted = malloc(sizeof *sorted * (nd ? nd : 1));
    uint64_t *codes = malloc(sizeof *codes * QR_BLOCK_ROWS);
    int rc = 0;
    if (!order || !code || !sorted || !codes) {
        rc = qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
        goto out;
    }
    for (uint32_t i = 0; i < nd; i++)
        order[i] = i;
    tl_sort_keys = m->keys;
    qsort(order, nd, sizeof *order, cmp_ids);
    for (uint32_t i = 0; i < nd; i++) {
        code[order[i]] = i + 1;
        sorted[i] = m->keys[order[i]];
    }
    qr_buf_clear(&w->tmp2);
    vlist_put(&w->tmp2, sorted, nd);
    qr_buf_clear(&w->tmp);
    if (comp_put(&w->tmp, w->tmp2.p, w->tmp2.len, w->o->zstd_level, w->cctx, NULL) != 0 ||
        put_block(w, col, BLK_DICT, &w->tmp, 0, nd, 0, 0, 0) != 0) {
        rc = -1;
        goto out;
    }
    unsigned width = qr_bits_needed(nd);
    for (uint32_t start = 0; start < n && rc == 0; start += QR_BLOCK_ROWS) {
        uint32_t cnt = n - start < QR_BLOCK_ROWS ? n - start : QR_BLOCK_ROWS;
        uint64_t mn = UINT64_MAX, mx = 0;
        for (uint32_t i = 0; i < cnt; i++) {
            uint64_t c = vals[start + i].p ? code[ids[start + i]] : 0;
            codes[i] = c;
            mn = c < mn ? c : mn;
            mx = c > mx ? c : mx;
        }
        qr_buf_clear(&w->tmp);
        qr_buf_put_u8(&w->tmp, (uint8_t)width);
        size_t pb = qr_bitpack_bytes(cnt, width);
        unsigned char *d = qr_buf_reserve(&w->tmp, pb);
        if (d) {
            qr_bitpack(codes, cnt, width, d);
            w->tmp.len += pb;
        }
        rc = put_block(w, col, BLK_DATA, &w->tmp, start, cnt, (int64_t)mn, (int64_t)mx, 0);
    }
out:
    free(order);
    free(code);
    free(sorted);
    free(codes);
    return rc;
}

/* ---- paged strings ---- */
/* Train a zstd dictionary on this column's values and write it as BLK_ZDICT.
 * *cd stays NULL when the column is too small or training gives nothing
 * (pages are then compressed without a dictionary). */
static int train_zdict(segw *w, int col, const qr_slice *vals, uint32_t n, uint64_t total,
                       ZSTD_CDict **cd)
{
    *cd = NULL;
    size_t want = w->o->zdict_bytes;
    if (!want || total < 16 * want || n < 1000)
        return 0;
    /* samples: runs of consecutive values of about 1 KiB (what a page
     * compresses together), spread evenly over the column, 1 MiB in all */
    const size_t budget = 1u << 20, run_bytes = 1024;
    size_t nruns = budget / run_bytes, nsamp = 0;
    uint64_t stride = n / nruns > 0 ? n / nruns : 1;
    size_t *sizes = malloc(sizeof *sizes * (nruns + 1));
    qr_buf_clear(&w->tmp2);
    if (!sizes)
        return qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
    for (uint64_t start = 0; start < n && nsamp < nruns; start += stride) {
        size_t before = w->tmp2.len;
        for (uint64_t i = start; i < n && w->tmp2.len - before < run_bytes; i++)
            if (vals[i].p)
                qr_buf_put(&w->tmp2, vals[i].p, vals[i].n);
        if (w->tmp2.len > before)
            sizes[nsamp++] = w->tmp2.len - before;
    }
    int rc = 0;
    if (nsamp >= 64 && !w->tmp2.oom) {
        void *dict = malloc(want);
        ZDICT_fastCover_params_t p;
        memset(&p, 0, sizeof p);
        p.k = 200;
        p.d = 8;
        p.f = 20;
        p.accel = 1;
        p.zParams.compressionLevel = w->o->zstd_level;
        size_t got = dict ? ZDICT_trainFromBuffer_fastCover(dict, want, w->tmp2.p, sizes,
                                                            (unsigned)nsamp, p)
                          : 0;
        if (dict && !ZDICT_isError(got) && got > 0) {
            qr_buf blk;
            qr_buf_init(&blk);
            qr_buf_put_u8(&blk, COMP_NONE);
            qr_buf_put(&blk, dict, got);
            rc = put_block(w, col, BLK_ZDICT, &blk, 0, 0, 0, 0, 0);
            /* size the match tables for one page, not for an unknown-size
             * stream: every page compression resets them */
            ZSTD_compressionParameters cp =
                ZSTD_getCParams(w->o->zstd_level, w->o->page_bytes, got);
            if (rc == 0 && !(*cd = ZSTD_createCDict_advanced(dict, got, ZSTD_dlm_byCopy,
                                                             ZSTD_dct_auto, cp,
                                                             ZSTD_defaultCMem)))
                rc = qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
            qr_buf_free(&blk);
        }
        free(dict);
    }
    free(sizes);
    return rc;
}

static int write_paged_column(segw *w, int col, const qr_slice *vals, uint32_t n, uint64_t total)
{
    w->cols[col].encoding = ENC_PAGED;
    ZSTD_CDict *cd;
    int rc = train_zdict(w, col, vals, n, total, &cd);
    uint32_t start = 0;
    while (start < n && rc == 0) {
        uint32_t end = start;
        size_t bytes = 0;
        while (end < n && end - start < QR_BLOCK_ROWS && bytes < w->o->page_bytes) {
            bytes += vals[end].n + 1;
            end++;
        }
        qr_buf_clear(&w->tmp2);
        vlist_put(&w->tmp2, vals + start, end - start);
        qr_buf_clear(&w->tmp);
        if (comp_put(&w->tmp, w->tmp2.p, w->tmp2.len, w->o->zstd_level, w->cctx, cd) != 0) {
            rc = qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
            break;
        }
        rc = put_block(w, col, BLK_DATA, &w->tmp, start, end - start, 0, 0, 0);
        start = end;
    }
    ZSTD_freeCDict(cd);
    return rc;
}

/* Rewrite map texts (string keys) into the keyed form; writes BLK_KEYS. */
static int key_maps(segw *w, int col, qr_slice *vals, uint32_t n, qr_buf *store)
{
    qr_strmap keys;
    qr_strmap_init(&keys);
    int rc = 0;
    size_t *offs = malloc(sizeof *offs * (n ? n : 1));
    if (!offs)
        return qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
    /* the keyed form is about as long as the text (a key's text becomes
     * its number): one allocation, not a doubling copy of a buffer of
     * hundreds of megabytes */
    size_t need = 0;
    for (uint32_t i = 0; i < n; i++)
        need += vals[i].n;
    qr_buf_reserve(store, need + need / 8 + 64);
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        if (!vals[i].p)
            continue;
        qr_rd r;
        qr_rd_init(&r, vals[i].p, vals[i].n);
        offs[i] = store->len;
        uint64_t np = qr_rd_varint(&r);
        qr_buf_put_varint(store, np);
        for (uint64_t k = 0; k < np && !r.bad; k++) {
            uint64_t kl = qr_rd_varint(&r);
            const unsigned char *kp = qr_rd_bytes(&r, kl);
            uint64_t vt = qr_rd_varint(&r), vl = vt >> 1;
            const unsigned char *vp = qr_rd_bytes(&r, vl);
            if (r.bad)
                break;
            int added;
            int64_t id = qr_strmap_put(&keys, (const char *)kp, kl, &added);
            if (id < 0) {
                rc = qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
                break;
            }
            qr_buf_put_varint(store, (uint64_t)id << 1 | (vt & 1)); /* tag: typed JSON value */
            qr_buf_put_lenbytes(store, vp, vl);
        }
        if (r.bad || qr_rd_left(&r))
            rc = qr_errf(w->e, QR_E_INTERNAL, "segment %s: column %s: malformed map text",
                         w->path, w->def->cols[col].name);
    }
    if (store->oom && rc == 0)
        rc = qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
    if (rc == 0) {
        /* slices into the final store buffer (it no longer moves) */
        size_t prev_end = store->len;
        for (uint32_t i = n; i-- > 0;) {
            if (!vals[i].p)
                continue;
            vals[i].p = (const char *)store->p + offs[i];
            vals[i].n = prev_end - offs[i];
            prev_end = offs[i];
        }
        qr_buf_clear(&w->tmp2);
        vlist_put(&w->tmp2, keys.keys, keys.count);
        qr_buf_clear(&w->tmp);
        if (comp_put(&w->tmp, w->tmp2.p, w->tmp2.len, w->o->zstd_level, w->cctx, NULL) != 0)
            rc = qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
        else
            rc = put_block(w, col, BLK_KEYS, &w->tmp, 0, keys.count, 0, 0, 0);
    }
    free(offs);
    qr_strmap_free(&keys);
    return rc;
}

/* Hex ids: lowercase hex text of one even length (8..64 characters). A
 * text column whose sampled non-empty values are such ids, nine in ten of
 * them of one length, is stored as bytes (ENC_HEXID; other values stay
 * text inside it, so nothing is lost). Returns the id's bytes, or 0. */
#define HEX_SAMPLES 512 /* values looked at: enough for the nine-in-ten test, and
                         * cheap for the small segments a live flush writes */
static unsigned hex_width(const qr_slice *vals, uint32_t n)
{
    unsigned by_len[33] = {0}, sampled = 0;
    uint32_t step = n > HEX_SAMPLES ? n / HEX_SAMPLES : 1;
    for (uint32_t i = 0; i < n; i += step) {
        const qr_slice *v = &vals[i];
        if (!v->p || v->n == 0)
            continue;
        sampled++;
        if (v->n < 8 || v->n > 64 || (v->n & 1))
            continue;
        size_t k = 0;
        while (k < v->n && ((v->p[k] >= '0' && v->p[k] <= '9') || (v->p[k] >= 'a' && v->p[k] <= 'f')))
            k++;
        if (k == v->n)
            by_len[v->n / 2]++;
    }
    unsigned best = 0;
    for (unsigned w = 4; w <= 32; w++)
        if (by_len[w] > by_len[best])
            best = w;
    return sampled && by_len[best] * 10 >= sampled * 9 ? best : 0;
}

static int write_bytes_column(segw *w, int col, const qr_batch *b, const uint32_t *perm)
{
    uint32_t n = b->nrows;
    qr_slice *vals = malloc(sizeof *vals * (n ? n : 1));
    if (!vals)
        return qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
    const qr_slice *src = b->cols[col].strs;
    for (uint32_t i = 0; i < n; i++) {
        vals[i] = src[perm[i]];
        if (!vals[i].p)
            w->cols[col].null_count++;
        w->cols[col].raw_bytes += vals[i].n;
    }
    int rc;
    qr_buf store;
    qr_buf_init(&store);
    if (w->def->cols[col].type == QT_TEXT && (w->cols[col].hex_bytes = hex_width(vals, n))) {
        rc = write_hexid_column(w, col, vals, n);
        goto out;
    }
    if (w->def->cols[col].type == QT_MAP && (rc = key_maps(w, col, vals, n, &store)) != 0)
        goto out;
    /* distinct values decide between dictionary and pages; each value's
     * id is kept for the dictionary's codes */
    qr_strmap m;
    qr_strmap_init(&m);
    uint64_t total = 0;
    int dict = 1;
    uint32_t *ids = malloc(sizeof *ids * (n ? n : 1));
    if (!ids) {
        rc = qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
        goto out;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!vals[i].p)
            continue;
        total += vals[i].n;
        if (!dict)
            continue;
        int added;
        int64_t id = qr_strmap_put(&m, vals[i].p, vals[i].n, &added);
        if (id < 0) {
            qr_strmap_free(&m);
            free(ids);
            rc = qr_errf(w->e, QR_E_NOMEM, "segment %s: out of memory", w->path);
            goto out;
        }
        ids[i] = (uint32_t)id;
        if (m.count > 65536 || (m.count > 256 && (uint64_t)m.count * 8 > n))
            dict = 0;
    }
    rc = dict ? write_dict_column(w, col, vals, ids, n, &m)
              : write_paged_column(w, col, vals, n, total);
    qr_strmap_free(&m);
    free(ids);
out:
    qr_buf_free(&store);
    free(vals);
    return rc;
}

/* ---- row order ---- */
static __thread const int64_t *tl_keys;
static int cmp_rows(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (tl_keys[x] != tl_keys[y])
        return tl_keys[x] < tl_keys[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

uint32_t *qr_seg_time_order(const qr_batch *b)
{
    uint32_t n = b->nrows;
    uint32_t *perm = malloc(sizeof *perm * (n ? n : 1));
    int64_t *keys = malloc(sizeof *keys * (n ? n : 1));
    if (!perm || !keys) {
        free(perm);
        free(keys);
        return NULL;
    }
    int sorted = 1;
    if (b->def->sort_col < 0) { /* insertion order */
        for (uint32_t i = 0; i < n; i++)
            perm[i] = i;
        free(keys);
        return perm;
    }
    const qr_colvec *ts = &b->cols[b->def->sort_col];
    for (uint32_t i = 0; i < n; i++) {
        perm[i] = i;
        keys[i] = ts->isnull[i] ? INT64_MIN : ts->ints[i];
        if (i && keys[i] < keys[i - 1])
            sorted = 0;
    }
    if (!sorted) {
        tl_keys = keys;
        qsort(perm, n, sizeof *perm, cmp_rows);
    }
    free(keys);
    return perm;
}

static void put_entries(qr_buf *f, const colout *co)
{
    for (uint32_t i = 0; i < co->nblocks; i++) {
        const qr_blockref *b = &co->blocks[i];
        qr_buf_put_u8(f, b->kind);
        qr_buf_put_u8(f, b->flags);
        qr_buf_put_u16(f, b->chunk_shift); /* format 8: reserved, 0 */
        qr_buf_put_u32(f, b->first_row);
        qr_buf_put_u32(f, b->rows);
        qr_buf_put_u32(f, b->length);
        qr_buf_put_u64(f, b->offset);
        qr_buf_put_u32(f, b->checksum);
        qr_buf_put_u64(f, (uint64_t)b->min);
        qr_buf_put_u64(f, (uint64_t)b->max);
    }
}

/* The chunk checksum table (segfmt.h QR_SEG_VERSION_SUMS): every chunked
 * block's checksums in the footer's order, columns then sections. Each
 * directory's chunk_sums already holds its blocks' in block order. */
static void put_sums(qr_buf *t, const segw *w)
{
    for (uint32_t c = 0; c < w->def->ncols; c++)
        qr_buf_put(t, w->cols[c].chunk_sums.p, w->cols[c].chunk_sums.len);
    for (uint32_t i = 0; i < w->nsecs; i++)
        qr_buf_put(t, w->secs[i].chunk_sums.p, w->secs[i].chunk_sums.len);
}

static void put_dir(qr_buf *f, const colout *co)
{
    qr_buf_put_u32(f, co->nblocks);
    if (co->dir_out) {
        qr_buf_put_u64(f, co->dir_off);
        qr_buf_put_u32(f, co->dir_len);
        qr_buf_put_u32(f, co->dir_raw);
        qr_buf_put_u32(f, co->dir_sum);
        return;
    }
    put_entries(f, co);
}

/* The directories of the columns of many blocks, each its own zstd frame
 * in the data area (segfmt.h QR_SEG_INLINE_BLOCKS): an open then reads
 * only the footer's small directories. Column blocks are never chunked, so
 * the entries carry no chunk checksums. */
static int put_col_dirs(segw *w)
{
    for (uint32_t c = 0; c < w->def->ncols; c++) {
        colout *co = &w->cols[c];
        if (co->nblocks <= QR_SEG_INLINE_BLOCKS)
            continue;
        qr_buf_clear(&w->tmp2);
        put_entries(&w->tmp2, co);
        if (w->tmp2.oom || w->tmp2.len != (size_t)co->nblocks * QR_SEG_DIRENT_LEN)
            return qr_errf(w->e, w->tmp2.oom ? QR_E_NOMEM : QR_E_INTERNAL,
                           "segment %s: column %s: cannot write its block directory", w->path,
                           w->def->cols[c].name);
        qr_buf_clear(&w->tmp);
        size_t bound = ZSTD_compressBound(w->tmp2.len);
        unsigned char *z = qr_buf_reserve(&w->tmp, bound);
        size_t zl = z ? ZSTD_compressCCtx(w->cctx, z, bound, w->tmp2.p, w->tmp2.len, 3) : 0;
        if (!z || ZSTD_isError(zl))
            return qr_errf(w->e, QR_E_NOMEM, "segment %s: cannot compress a block directory",
                           w->path);
        co->dir_out = 1;
        co->dir_off = w->off + w->out.len;
        co->dir_len = (uint32_t)zl;
        co->dir_raw = (uint32_t)w->tmp2.len;
        co->dir_sum = qr_checksum32(z, zl);
        qr_buf_put(&w->out, z, zl);
        if (w->out.len >= (1u << 20) && flush_out(w) != 0)
            return -1;
    }
    return 0;
}

static void put_footer(qr_buf *f, const segw *w, const qr_seg_summary *s, uint32_t nsums,
                       uint32_t sums_sum)
{
    qr_buf_put_u64(f, s->rows);
    qr_buf_put_u64(f, (uint64_t)s->min_ts);
    qr_buf_put_u64(f, (uint64_t)s->max_ts);
    qr_buf_put_u16(f, w->def->sort_col < 0 ? QR_SEG_NO_SORT : (uint16_t)w->def->sort_col);
    qr_buf_put_u16(f, 0);
    qr_buf_put_u32(f, w->def->ncols);
    qr_buf_put_u32(f, nsums);
    qr_buf_put_u32(f, sums_sum);
    for (uint32_t c = 0; c < w->def->ncols; c++) {
        const colout *co = &w->cols[c];
        const qr_coldef *cd = &w->def->cols[c];
        qr_buf_put_lenbytes(f, cd->name, strlen(cd->name));
        qr_buf_put_u8(f, cd->type);
        qr_buf_put_u8(f, co->encoding);
        qr_buf_put_u8(f, co->hex_bytes);
        qr_buf_put_u8(f, co->dir_out ? QR_COLF_DIR_OUT : 0);
        qr_buf_put_u64(f, co->null_count);
        qr_buf_put_u64(f, co->raw_bytes);
        put_dir(f, co);
    }
    qr_buf_put_u32(f, w->nsecs);
    for (uint32_t i = 0; i < w->nsecs; i++) {
        const qr_sec_in *si = &w->sec_in[i];
        qr_buf_put_u16(f, si->id);
        qr_buf_put_u16(f, si->col);
        qr_buf_put_u8(f, si->kind);
        qr_buf_put_u8(f, si->flags);
        qr_buf_put_u16(f, 0);
        put_dir(f, &w->secs[i]);
    }
}

int qr_seg_write(const char *path, const qr_batch *b, const qr_seg_opts *opts,
                 qr_seg_summary *out, qr_err *e)
{
    uint32_t *perm = qr_seg_time_order(b);
    if (!perm)
        return qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", path);
    int rc = qr_seg_write_ex(path, b, perm, NULL, 0, opts, out, e);
    free(perm);
    return rc;
}

int qr_seg_write_ex(const char *path, const qr_batch *b, const uint32_t *perm,
                    const qr_sec_in *secs, uint32_t nsecs, const qr_seg_opts *opts,
                    qr_seg_summary *out, qr_err *e)
{
    qr_seg_opts defo;
    if (!opts) {
        qr_seg_opts_default(&defo);
        opts = &defo;
    }
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return qr_errf(e, QR_E_ARGS, "segment path too long: %s", path);
    segw w;
    memset(&w, 0, sizeof w);
    w.path = path;
    w.tmp_path = tmp;
    w.o = opts;
    w.e = e;
    w.fd = -1;
    w.def = b->def;
    w.sec_in = secs;
    qr_seg_summary s = {.rows = b->nrows};
    int rc = -1;
    if (opts->chunk_shift &&
        (opts->chunk_shift < QR_SEG_CHUNK_SHIFT_MIN || opts->chunk_shift > QR_SEG_CHUNK_SHIFT_MAX))
        return qr_errf(e, QR_E_ARGS, "segment %s: chunk shift %u outside %u..%u", path,
                       opts->chunk_shift, QR_SEG_CHUNK_SHIFT_MIN, QR_SEG_CHUNK_SHIFT_MAX);
    if (nsecs > QR_SEG_MAX_SECTIONS)
        return qr_errf(e, QR_E_INTERNAL, "segment %s: %u sections, at most %u", path, nsecs,
                       QR_SEG_MAX_SECTIONS);
    for (uint32_t i = 0; i < nsecs; i++)
        if (secs[i].col >= b->def->ncols)
            return qr_errf(e, QR_E_INTERNAL, "segment %s: section %u on column %u of %u", path,
                           secs[i].id, secs[i].col, b->def->ncols);
    w.cols = calloc(b->def->ncols ? b->def->ncols : 1, sizeof *w.cols);
    w.cctx = ZSTD_createCCtx();
    if (!w.cctx || !w.cols) {
        qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", path);
        goto done;
    }
    w.fd = qr_create_file(tmp, e);
    if (w.fd < 0)
        goto done;
    qr_buf_put(&w.out, QR_SEG_MAGIC, 8);
    qr_buf_put_u32(&w.out, QR_SEG_VERSION);
    qr_buf_put_u32(&w.out, 0);
    for (uint32_t c = 0; c < b->def->ncols; c++) {
        int r = qr_type_is_int(b->def->cols[c].type) ? write_int_column(&w, (int)c, b, perm)
                                                     : write_bytes_column(&w, (int)c, b, perm);
        if (r != 0)
            goto done;
    }
    for (uint32_t i = 0; i < nsecs; i++) {
        w.nsecs = i + 1;
        for (uint32_t k = 0; k < secs[i].nblocks; k++) {
            const qr_sec_block *sb = &secs[i].blocks[k];
            if (sb->kind < QR_BLK_SECTION_MIN) {
                qr_errf(e, QR_E_INTERNAL, "segment %s: section block kind %u is reserved", path,
                        sb->kind);
                goto done;
            }
            if (put_raw_block(&w, &w.secs[i], "index", sb->kind, sb->p, sb->n, 0, sb->count,
                              sb->min, sb->max, 0) != 0)
                goto done;
        }
    }
    /* time range from the sort column's blocks */
    int any = 0;
    const colout *tc = b->def->sort_col >= 0 ? &w.cols[b->def->sort_col] : NULL;
    for (uint32_t i = 0; tc && i < tc->nblocks; i++) {
        const qr_blockref *br = &tc->blocks[i];
        if (br->flags & QR_BLKF_ALL_NULL)
            continue;
        if (!any || br->min < s.min_ts)
            s.min_ts = br->min;
        if (!any || br->max > s.max_ts)
            s.max_ts = br->max;
        any = 1;
    }
    if (put_col_dirs(&w) != 0)
        goto done;
    qr_buf_clear(&w.tmp2);
    put_sums(&w.tmp2, &w);
    if (w.tmp2.oom || w.tmp2.len / 4 > UINT32_MAX) {
        qr_errf(e, QR_E_NOMEM, "segment %s: cannot write the chunk checksum table", path);
        goto done;
    }
    uint32_t nsums = (uint32_t)(w.tmp2.len / 4), sums_sum = qr_checksum32(w.tmp2.p, w.tmp2.len);
    qr_buf_put(&w.out, w.tmp2.p, w.tmp2.len);
    if (w.out.len >= (1u << 20) && flush_out(&w) != 0)
        goto done;
    qr_buf_clear(&w.tmp2);
    put_footer(&w.tmp2, &w, &s, nsums, sums_sum);
    qr_buf_clear(&w.tmp);
    size_t bound = ZSTD_compressBound(w.tmp2.len);
    unsigned char *fz = qr_buf_reserve(&w.tmp, bound);
    size_t fl = fz ? ZSTD_compressCCtx(w.cctx, fz, bound, w.tmp2.p, w.tmp2.len, 3) : 0;
    if (!fz || ZSTD_isError(fl) || w.tmp2.oom) {
        qr_errf(e, QR_E_NOMEM, "segment %s: cannot compress footer", path);
        goto done;
    }
    w.tmp.len = fl;
    uint64_t foot_off = w.off + w.out.len;
    qr_buf_put(&w.out, w.tmp.p, w.tmp.len);
    uint64_t file_len = foot_off + fl + QR_SEG_TRAILER_LEN;
    qr_buf_put_u64(&w.out, foot_off);
    qr_buf_put_u32(&w.out, (uint32_t)fl);
    qr_buf_put_u32(&w.out, (uint32_t)w.tmp2.len);
    qr_buf_put_u32(&w.out, qr_checksum32(w.tmp.p, fl));
    qr_buf_put_u32(&w.out, QR_SEG_VERSION);
    qr_buf_put_u64(&w.out, file_len);
    qr_buf_put(&w.out, QR_SEG_TRAILER_MAGIC, 8);
    if (flush_out(&w) != 0)
        goto done;
    if (!opts->no_sync && qr_fsync_file(w.fd, tmp, e) != 0)
        goto done;
    if (close(w.fd) != 0) {
        w.fd = -1;
        qr_errf(e, QR_E_IO, "close %s: %s", tmp, strerror(errno));
        goto done;
    }
    w.fd = -1;
    if (qr_rename(tmp, path, e) != 0)
        goto done;
    s.file_bytes = file_len;
    if (out)
        *out = s;
    rc = 0;
done:
    if (w.fd >= 0)
        close(w.fd);
    if (rc != 0)
        unlink(tmp);
    ZSTD_freeCCtx(w.cctx);
    qr_buf_free(&w.out);
    qr_buf_free(&w.tmp);
    qr_buf_free(&w.tmp2);
    for (uint32_t c = 0; w.cols && c < b->def->ncols; c++) {
        free(w.cols[c].blocks);
        qr_buf_free(&w.cols[c].chunk_sums);
    }
    free(w.cols);
    for (uint32_t i = 0; i < QR_SEG_MAX_SECTIONS; i++) {
        free(w.secs[i].blocks);
        qr_buf_free(&w.secs[i].chunk_sums);
    }
    return rc;
}
