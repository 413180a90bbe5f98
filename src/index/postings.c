/* postings.c - postings list encoding and cursors (layout in postings.h,
 * docs/FORMAT.md). Doc gaps and tfs are bit-packed per 128-doc block with
 * the scalar packer of util/bitpack; a block whose docs are dense is stored
 * as a bitmap instead when that is smaller. */
#include "index/postings.h"

#include <string.h>

#include "util/bitpack.h"

/* ---------------------------------------------------------------- writing */

static void put_packed(qr_buf *b, const uint64_t *v, uint32_t n)
{
    uint64_t mx = 0;
    for (uint32_t i = 0; i < n; i++)
        mx |= v[i];
    unsigned w = qr_bits_needed(mx);
    qr_buf_put_u8(b, (uint8_t)w);
    size_t nb = qr_bitpack_bytes(n, w);
    unsigned char *d = qr_buf_reserve(b, nb);
    if (!d)
        return;
    qr_bitpack(v, n, w, d);
    b->len += nb;
}

/* Append the positions of docs [from, to) to the positions stream. */
static void put_positions(qr_buf *pos, const uint32_t *tfs, const uint32_t **pp, uint32_t from,
                          uint32_t to)
{
    for (uint32_t i = from; i < to; i++) {
        uint32_t prev = 0;
        for (uint32_t k = 0; k < tfs[i]; k++) {
            uint32_t p = (*pp)[k];
            qr_buf_put_varint(pos, k ? p - prev : p);
            prev = p;
        }
        *pp += tfs[i];
    }
}

int qr_postw_term(qr_postw *w, const uint32_t *docs, const uint32_t *tfs,
                  const uint32_t *positions, uint32_t df, qr_buf *ti)
{
    uint64_t pos_start = w->has_pos ? w->pos->len : 0;
    const uint32_t *pp = positions;
    if (df <= QR_INLINE_DF) {
        if (w->has_pos)
            put_positions(w->pos, tfs, &pp, 0, df);
        qr_buf_put_varint(ti, 0); /* no postings list */
        if (w->has_pos)
            qr_buf_put_varint(ti, w->pos->len - pos_start);
        qr_buf_put_varint(ti, df);
        qr_buf_put_u8(ti, TI_INLINE);
        for (uint32_t i = 0; i < df; i++)
            qr_buf_put_varint(ti, i ? docs[i] - docs[i - 1] - 1 : docs[i]);
        if (w->has_freqs)
            for (uint32_t i = 0; i < df; i++)
                qr_buf_put_varint(ti, tfs[i]);
        return ti->oom || (w->has_pos && w->pos->oom) ? -1 : 0;
    }
    qr_buf *b = w->post;
    uint64_t start = b->len;
    uint32_t nblocks = (df + QR_POSTING_BLOCK - 1) / QR_POSTING_BLOCK;
    /* one block: no skip table, just its last doc (saves ~15 bytes for the
     * many short lists; block-max data equals the term's own maximum) */
    unsigned char single[QR_SKIP_ENTRY];
    size_t skip_at = b->len;
    if (nblocks == 1) {
        qr_buf_put_varint(b, docs[df - 1]);
    } else {
        if (!qr_buf_reserve(b, (size_t)nblocks * QR_SKIP_ENTRY))
            return -1;
        memset(b->p + skip_at, 0, (size_t)nblocks * QR_SKIP_ENTRY);
        b->len += (size_t)nblocks * QR_SKIP_ENTRY;
    }
    size_t data_start = b->len;
    uint64_t gaps[QR_POSTING_BLOCK];
    uint32_t prev_last = 0; /* docs of block k start at prev_last (+1 after block 0) */
    for (uint32_t k = 0; k < nblocks; k++) {
        uint32_t from = k * QR_POSTING_BLOCK;
        uint32_t n = df - from < QR_POSTING_BLOCK ? df - from : QR_POSTING_BLOCK;
        uint32_t base = k ? prev_last + 1 : 0;
        uint32_t last = docs[from + n - 1];
        unsigned char *se = nblocks == 1 ? single : b->p + skip_at + (size_t)k * QR_SKIP_ENTRY;
        uint32_t max_tf = 1;
        uint8_t min_norm = 255, min_norm1 = 255, min_norm2 = 255; /* all, tf = 1, tf >= 2 */
        for (uint32_t i = 0; i < n; i++) {
            uint32_t tf = w->has_freqs ? tfs[from + i] : 1;
            uint8_t nm = w->norms ? w->norms[docs[from + i]] : 0;
            max_tf = tf > max_tf ? tf : max_tf;
            min_norm = nm < min_norm ? nm : min_norm;
            if (tf == 1)
                min_norm1 = nm < min_norm1 ? nm : min_norm1;
            else
                min_norm2 = nm < min_norm2 ? nm : min_norm2;
        }
        qr_store_u32(se, last);
        qr_store_u32(se + 4, (uint32_t)(b->len - data_start));
        qr_store_u32(se + 8, w->has_pos ? (uint32_t)(w->pos->len - pos_start) : 0);
        se[12] = (uint8_t)(max_tf > 255 ? 255 : max_tf);
        se[13] = w->norms ? min_norm : 0;
        if (w->norms) { /* two impacts: (1, min_norm1) and (max_tf, min_norm2) */
            se[14] = min_norm1;
            se[15] = min_norm2;
        }
        /* packed gaps or a bitmap over [base, last], whichever is smaller */
        uint64_t mx = 0;
        for (uint32_t i = 0; i < n; i++) {
            gaps[i] = i ? docs[from + i] - docs[from + i - 1] - 1 : docs[from] - base;
            mx |= gaps[i];
        }
        uint64_t span = (uint64_t)last - base + 1;
        size_t packed_bytes = 1 + qr_bitpack_bytes(n, qr_bits_needed(mx));
        if ((span + 7) / 8 < packed_bytes) {
            qr_buf_put_u8(b, PB_BITMAP);
            size_t nb = (size_t)(span + 7) / 8;
            unsigned char *d = qr_buf_reserve(b, nb);
            if (!d)
                return -1;
            memset(d, 0, nb);
            for (uint32_t i = 0; i < n; i++) {
                uint32_t off = docs[from + i] - base;
                d[off >> 3] |= (unsigned char)(1u << (off & 7));
            }
            b->len += nb;
        } else {
            qr_buf_put_u8(b, PB_PACKED);
            put_packed(b, gaps, n);
        }
        if (w->has_freqs) {
            for (uint32_t i = 0; i < n; i++)
                gaps[i] = tfs[from + i] - 1;
            put_packed(b, gaps, n);
        }
        if (w->has_pos)
            put_positions(w->pos, tfs, &pp, from, from + n);
        prev_last = last;
        if (b->oom)
            return -1;
    }
    int dense = w->bitmaps && w->rows >= QR_DENSE_MIN_ROWS && df >= w->rows / QR_DENSE_DIV;
    /* offsets are implicit: each term's lists follow the previous term's
     * (the dictionary keeps a base per block), so only lengths are stored */
    qr_buf_put_varint(ti, b->len - start);
    if (w->has_pos)
        qr_buf_put_varint(ti, w->pos->len - pos_start);
    qr_buf_put_varint(ti, df);
    int multi = dense && w->has_freqs;
    qr_buf_put_u8(ti, (uint8_t)(TI_BLOCKS | (dense ? TI_HAS_BITMAP : 0) | (multi ? TI_HAS_MULTI : 0)));
    if (dense) {
        size_t words = ((size_t)w->rows + 63) / 64;
        qr_buf_put_varint(ti, w->bitmaps->len / 8);
        unsigned char *d = qr_buf_reserve(w->bitmaps, words * 8);
        if (!d)
            return -1;
        memset(d, 0, words * 8);
        for (uint32_t i = 0; i < df; i++)
            d[docs[i] >> 3] |= (unsigned char)(1u << (docs[i] & 7));
        w->bitmaps->len += words * 8;
    }
    if (multi) {
        /* the norms the word's rows have (bit n: some row of norm code n):
         * rows holding two words have one length, so two words whose
         * short rows have different lengths cannot be in one short row
         * (a row with both must have a norm both have) */
        unsigned char *nm = qr_buf_reserve(w->bitmaps, 64);
        if (!nm)
            return -1;
        memset(nm, w->norms ? 0 : 0xff, 64);
        for (uint32_t i = 0; i < df && w->norms; i++) {
            uint8_t v = w->norms[docs[i]];
            nm[v >> 3] |= (unsigned char)(1u << (v & 7));
            if (tfs[i] >= 2) /* the second mask: the norms of its rows with tf >= 2 */
                nm[32 + (v >> 3)] |= (unsigned char)(1u << (v & 7));
        }
        w->bitmaps->len += 64;
        /* the rows holding the word more than once: with them a scorer
         * bounds every other row of the word by its exact tf-1 score (in
         * templated logs the words of a query are twice in different
         * templates, and the bound that assumed each at its largest tf in
         * every row let whole segments of ties through) */
        size_t at = w->bitmaps->len;
        uint32_t n = 0, prev = 0;
        for (uint32_t i = 0; i < df; i++)
            if (tfs[i] >= 2) {
                qr_buf_put_varint(w->bitmaps, n ? docs[i] - prev - 1 : docs[i]);
                prev = docs[i];
                n++;
            }
        uint64_t len = w->bitmaps->len - at;
        while (w->bitmaps->len % 8) /* the next bitmap starts on a word */
            qr_buf_put_u8(w->bitmaps, 0);
        qr_buf_put_varint(ti, n);
        qr_buf_put_varint(ti, len);
    }
    return ti->oom || b->oom || (w->has_pos && w->pos->oom) ? -1 : 0;
}

/* ---------------------------------------------------------------- reading */

int qr_terminfo_read(qr_rd *r, int has_freqs, int has_pos, uint64_t post_off, uint64_t pos_off,
                     qr_terminfo *ti)
{
    memset(ti, 0, sizeof *ti);
    ti->post_off = post_off;
    ti->pos_off = pos_off;
    ti->post_len = qr_rd_varint(r);
    if (has_pos)
        ti->pos_len = qr_rd_varint(r);
    uint64_t df = qr_rd_varint(r);
    ti->kind = qr_rd_u8(r);
    if (r->bad || df == 0 || df > UINT32_MAX)
        return -1;
    ti->df = (uint32_t)df;
    if (ti->kind == TI_INLINE) {
        if (df > QR_INLINE_DF)
            return -1;
        uint64_t d = 0;
        for (uint32_t i = 0; i < ti->df; i++) {
            uint64_t g = qr_rd_varint(r);
            d = i ? d + g + 1 : g;
            if (d >= QR_NO_DOC)
                return -1;
            ti->idocs[i] = (uint32_t)d;
            ti->itfs[i] = 1;
        }
        if (has_freqs)
            for (uint32_t i = 0; i < ti->df; i++) {
                uint64_t tf = qr_rd_varint(r);
                if (tf == 0 || tf > UINT32_MAX)
                    return -1;
                ti->itfs[i] = (uint32_t)tf;
            }
        if (ti->post_len != 0)
            return -1;
    } else if ((ti->kind & ~(TI_HAS_BITMAP | TI_HAS_MULTI)) == TI_BLOCKS) {
        if (ti->kind & TI_HAS_BITMAP) {
            ti->has_bitmap = 1;
            ti->bm_word = qr_rd_varint(r);
            if (ti->kind & TI_HAS_MULTI) {
                uint64_t n = qr_rd_varint(r);
                if (!has_freqs || n > df)
                    return -1;
                ti->has_multi = 1;
                ti->multi_n = (uint32_t)n;
                ti->multi_len = qr_rd_varint(r);
            }
        } else if (ti->kind & TI_HAS_MULTI) {
            return -1;
        }
        ti->kind = TI_BLOCKS;
    } else {
        return -1;
    }
    return r->bad ? -1 : 0;
}

int qr_pc_open(qr_pcursor *c, const unsigned char *post, size_t post_len,
               const unsigned char *pos, size_t pos_len, int has_freqs, int has_pos,
               const qr_terminfo *ti)
{
    memset(c, 0, offsetof(qr_pcursor, docs));
    c->post = post;
    c->post_len = post_len;
    c->pos = pos;
    c->pos_len = pos_len;
    c->has_freqs = has_freqs;
    c->has_pos = has_pos;
    c->ti = *ti;
    c->doc = 0;
    c->pblk = UINT32_MAX;
    c->tfw = QR_TFW_ARRAYS;
    if (has_pos) {
        if (ti->pos_off > pos_len || ti->pos_len > pos_len - ti->pos_off)
            goto bad;
        c->tpos = pos + ti->pos_off;
        c->tpos_len = (size_t)ti->pos_len;
    }
    if (ti->kind == TI_INLINE) {
        c->nblocks = 1;
        c->blk = 0;
        c->n = ti->df;
        c->i = UINT32_MAX; /* before the first */
        memcpy(c->docs, ti->idocs, sizeof ti->idocs);
        memcpy(c->tfs, ti->itfs, sizeof ti->itfs);
        c->pcur = c->tpos;
        c->pcur_i = 0;
        return 0;
    }
    c->nblocks = (ti->df + QR_POSTING_BLOCK - 1) / QR_POSTING_BLOCK;
    if (ti->post_off > post_len || ti->post_len > post_len - ti->post_off)
        goto bad;
    if (c->nblocks == 1) {
        /* varint last doc, then the block: a skip entry of our own */
        qr_rd r;
        qr_rd_init(&r, post + ti->post_off, (size_t)ti->post_len);
        uint64_t last = qr_rd_varint(&r);
        if (r.bad || last >= QR_NO_DOC)
            goto bad;
        memset(c->single, 0, sizeof c->single);
        qr_store_u32(c->single, (uint32_t)last);
        c->skip = c->single;
        c->data = r.p;
        c->data_len = qr_rd_left(&r);
    } else {
        uint64_t skip_bytes = (uint64_t)c->nblocks * QR_SKIP_ENTRY;
        if (ti->post_len < skip_bytes)
            goto bad;
        c->skip = post + ti->post_off;
        c->data = c->skip + skip_bytes;
        c->data_len = (size_t)(ti->post_len - skip_bytes);
    }
    c->blk = c->nblocks; /* nothing decoded */
    c->i = UINT32_MAX;
    return 0;
bad:
    c->corrupt = 1;
    c->doc = QR_NO_DOC;
    return -1;
}

void qr_pc_open_corrupt(qr_pcursor *c, const qr_terminfo *ti)
{
    memset(c, 0, offsetof(qr_pcursor, docs));
    c->ti = *ti;
    c->pblk = UINT32_MAX;
    c->tfw = QR_TFW_ARRAYS;
    c->corrupt = 1;
    c->doc = QR_NO_DOC; /* with i = 0: next / advance return QR_NO_DOC */
}

static int unpack_run(qr_rd *r, uint32_t n, uint64_t *tmp)
{
    unsigned w = qr_rd_u8(r);
    if (r->bad || w > 32)
        return -1;
    const unsigned char *p = qr_rd_bytes(r, qr_bitpack_bytes(n, w));
    if (!p)
        return -1;
    qr_bitunpack(p, n, w, tmp);
    return 0;
}

/* Where block k is: its docs' range [*base, *last], its doc count and a
 * reader over its bytes (from the encoding byte on). 0, or -1 when the skip
 * table is inconsistent. */
static int block_locate(const qr_pcursor *c, uint32_t k, uint32_t *base, uint32_t *last,
                        uint32_t *n, qr_rd *r)
{
    const unsigned char *se = c->skip + (size_t)k * QR_SKIP_ENTRY;
    uint32_t off = qr_load_u32(se + 4);
    *last = qr_load_u32(se);
    *base = 0;
    if (k) {
        *base = qr_load_u32(se - QR_SKIP_ENTRY) + 1;
        if (*base == 0 || *base > *last)
            return -1;
    }
    *n = k + 1 < c->nblocks ? QR_POSTING_BLOCK : c->ti.df - k * QR_POSTING_BLOCK;
    uint32_t end = k + 1 < c->nblocks ? qr_load_u32(se + QR_SKIP_ENTRY + 4) : (uint32_t)c->data_len;
    if (off > end || end > c->data_len)
        return -1;
    qr_rd_init(r, c->data + off, end - off);
    return 0;
}

/* Make block k the current one (after its docs and tfs are in place). */
static int block_enter(qr_pcursor *c, uint32_t k, uint32_t n, uint8_t tfw)
{
    c->blk = k;
    c->pblk = UINT32_MAX;
    c->rk_n = 0;
    c->tfw = tfw;
    c->decoded++;
    c->n = n;
    c->i = 0;
    if (c->has_pos) {
        uint32_t po = qr_load_u32(c->skip + (size_t)k * QR_SKIP_ENTRY + 8);
        if (po > c->tpos_len)
            return -1;
        c->pcur = c->tpos + po;
        c->pcur_i = 0;
    }
    return 0;
}

/* Unpack a tf run (tf - 1 packed, or all 1 for docs-only fields). */
static int decode_tfs(qr_pcursor *c, qr_rd *r, uint32_t n)
{
    uint64_t tmp[QR_POSTING_BLOCK];
    if (!c->has_freqs) {
        for (uint32_t i = 0; i < n; i++)
            c->tfs[i] = 1;
        return 0;
    }
    if (c->docs_only) { /* stepped over, its width checked as unpack_run does */
        unsigned w = qr_rd_u8(r);
        return r->bad || w > 32 || !qr_rd_bytes(r, qr_bitpack_bytes(n, w)) ? -1 : 0;
    }
    if (unpack_run(r, n, tmp) != 0)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        c->tfs[i] = (uint32_t)tmp[i] + 1;
    return 0;
}

/* Decode block k into docs/tfs. */
static int decode_block(qr_pcursor *c, uint32_t k)
{
    uint32_t base, last, n;
    qr_rd r;
    if (block_locate(c, k, &base, &last, &n, &r) != 0)
        return -1;
    uint8_t enc = qr_rd_u8(&r);
    uint64_t tmp[QR_POSTING_BLOCK];
    if (enc == PB_PACKED) {
        if (unpack_run(&r, n, tmp) != 0)
            return -1;
        /* doc i = base + tmp[0] + ... + tmp[i] + i, so the loop carries a
         * single add and no branch (~2x faster than d += gap + 1 with a
         * check per doc). Docs strictly grow (no overflow in 64 bits: n <=
         * 128, gaps < 2^32), so the last one being `last` bounds them all
         * and makes the truncation exact. */
        uint64_t s = base;
        for (uint32_t i = 0; i < n; i++) {
            s += tmp[i];
            c->docs[i] = (uint32_t)(s + i);
        }
        if (s + n - 1 != last)
            return -1;
    } else if (enc == PB_BITMAP) {
        uint64_t span = (uint64_t)last - base + 1;
        const unsigned char *bm = qr_rd_bytes(&r, (size_t)((span + 7) / 8));
        if (!bm)
            return -1;
        uint32_t m = 0;
        for (uint64_t byte = 0; byte < (span + 7) / 8; byte++) {
            unsigned v = bm[byte];
            while (v) {
                unsigned bit = (unsigned)__builtin_ctz(v);
                v &= v - 1;
                uint64_t off2 = byte * 8 + bit;
                if (off2 >= span || m >= n)
                    return -1;
                c->docs[m++] = (uint32_t)(base + off2);
            }
        }
        if (m != n || c->docs[n - 1] != last)
            return -1;
    } else {
        return -1;
    }
    if (decode_tfs(c, &r, n) != 0 || qr_rd_left(&r) != 0)
        return -1;
    return block_enter(c, k, n, QR_TFW_ARRAYS);
}

/* Block k for qr_pc_at_rank: the docs are passed over by their length;
 * tf - 1 values of at most 2 bits whose positions are all one byte stay
 * packed (qr_pc_doc_positions sums them with popcounts), others go to tfs[]
 * as decode_block does. Called once per block a phrase visits, so the
 * header is parsed with plain pointer arithmetic (every length checked). */
static int decode_block_tfs(qr_pcursor *c, uint32_t k)
{
    uint32_t base, last, n;
    qr_rd r;
    if (block_locate(c, k, &base, &last, &n, &r) != 0)
        return -1;
    if (k + 1 < c->nblocks) { /* the walk comes to the next block soon: start
                               * loading its header, tfs and positions */
        const unsigned char *nx = c->skip + (size_t)(k + 1) * QR_SKIP_ENTRY;
        size_t o = qr_load_u32(nx + 4), po = qr_load_u32(nx + 8);
        for (size_t at = o; at < o + 192 && at < c->data_len; at += 64)
            __builtin_prefetch(c->data + at);
        if (po < c->tpos_len)
            __builtin_prefetch(c->tpos + po);
    }
    const unsigned char *p = r.p, *end = r.end;
    size_t docs_len;
    if (end - p < 2)
        return -1;
    if (p[0] == PB_PACKED) {
        if (p[1] > 32)
            return -1;
        docs_len = 2 + qr_bitpack_bytes(n, p[1]);
    } else if (p[0] == PB_BITMAP) {
        docs_len = 1 + (size_t)(((uint64_t)last - base + 1 + 7) / 8);
    } else {
        return -1;
    }
    if ((size_t)(end - p) < docs_len)
        return -1;
    p += docs_len; /* the tf run: u8 width, packed tf - 1 */
    unsigned w = c->has_freqs && p < end ? *p : QR_TFW_ARRAYS;
    size_t nb = w <= 2 ? qr_bitpack_bytes(n, w) : 0;
    if (c->has_pos && w <= 2 && (size_t)(end - p) == 1 + nb) {
        memset(c->tfbits, 0, sizeof c->tfbits);
        memcpy(c->tfbits, p + 1, nb); /* n * w <= 256 bits */
        c->tfhi = w == 2 ? 0xAAAAAAAAAAAAAAAAull : 0;
        uint32_t sum = 0;
        for (uint32_t j = 0; j < 4; j++) {
            c->tfsum[j] = sum;
            if (j * 8 < nb)
                sum += (uint32_t)(__builtin_popcountll(c->tfbits[j]) +
                                  __builtin_popcountll(c->tfbits[j] & c->tfhi));
        }
        /* positions: one byte each iff their span is n + sum(tf - 1) */
        const unsigned char *se = c->skip + (size_t)k * QR_SKIP_ENTRY;
        uint64_t start = qr_load_u32(se + 8);
        uint64_t pend = k + 1 < c->nblocks ? qr_load_u32(se + QR_SKIP_ENTRY + 8) : c->tpos_len;
        if (start <= pend && pend <= c->tpos_len && pend - start == (uint64_t)n + sum) {
            if (block_enter(c, k, n, (uint8_t)w) != 0)
                return -1;
            c->pbytes = c->tpos + start;
            return 0;
        }
    }
    qr_rd_init(&r, p, (size_t)(end - p));
    if (decode_tfs(c, &r, n) != 0 || qr_rd_left(&r) != 0)
        return -1;
    return block_enter(c, k, n, QR_TFW_ARRAYS);
}

static uint32_t fail(qr_pcursor *c)
{
    c->corrupt = 1;
    c->rk_n = 0;
    c->doc = QR_NO_DOC;
    return QR_NO_DOC;
}

/* Hand the docs left in the list to run(arg, docs, m), a decoded block at
 * a time (docs ascend, all < rows), leaving the cursor exhausted: a list
 * read whole into a bitmap or probed in one. The blocks' tfs are stepped
 * over. 0, or -1 when the list is corrupt (a doc >= rows included). */
static inline int each_run(qr_pcursor *c, uint32_t rows,
                           void (*run)(void *arg, const uint32_t *docs, uint32_t m), void *arg)
{
    c->docs_only = 1; /* it ends exhausted: no tf is read again */
    for (uint32_t d = qr_pc_next(c); d != QR_NO_DOC; d = qr_pc_next(c)) {
        uint32_t j = c->i, m = c->n;
        if (c->ti.kind == TI_INLINE || c->blk >= c->nblocks || j >= m || c->docs[j] != d) {
            if (d >= rows) /* not a plain decoded block: this doc alone */
                goto bad;
            run(arg, &d, 1);
            continue;
        }
        if (c->docs[m - 1] >= rows)
            goto bad;
        run(arg, c->docs + j, m - j);
        c->i = m - 1; /* the block is done: the next call decodes the next */
        c->doc = c->docs[m - 1];
    }
    return c->corrupt ? -1 : 0;
bad:
    c->corrupt = 1;
    return -1;
}

typedef struct {
    uint64_t *bits;
    uint64_t n;
} set_arg;
static void run_set(void *arg, const uint32_t *docs, uint32_t m)
{
    set_arg *s = arg;
    for (uint32_t j = 0; j < m; j++)
        s->bits[docs[j] >> 6] |= 1ull << (docs[j] & 63);
    s->n += m;
}

int64_t qr_pc_set_bits(qr_pcursor *c, uint64_t *bits, uint32_t rows)
{
    set_arg s = {bits, 0};
    return each_run(c, rows, run_set, &s) != 0 ? -1 : (int64_t)s.n;
}

typedef struct {
    uint64_t *bits;
    uint64_t again;
} union_arg;
static void run_union(void *arg, const uint32_t *docs, uint32_t m)
{
    union_arg *s = arg;
    uint64_t again = 0;
    for (uint32_t j = 0; j < m; j++) {
        uint64_t *w = &s->bits[docs[j] >> 6], bit = 1ull << (docs[j] & 63);
        again |= *w & bit;
        *w |= bit;
    }
    s->again |= again;
}

int64_t qr_pc_union_bits(qr_pcursor *c, uint64_t *bits, uint32_t rows)
{
    union_arg s = {bits, 0};
    return each_run(c, rows, run_union, &s) != 0 ? -1 : s.again != 0;
}

typedef struct {
    const unsigned char *bits;
    uint64_t n;
} count_arg;
static void run_count(void *arg, const uint32_t *docs, uint32_t m)
{
    count_arg *s = arg;
    uint64_t n = 0;
    for (uint32_t j = 0; j < m; j++)
        n += (s->bits[docs[j] >> 3] >> (docs[j] & 7)) & 1;
    s->n += n;
}

int64_t qr_pc_count_in(qr_pcursor *c, const unsigned char *bits, uint32_t rows)
{
    count_arg s = {bits, 0};
    return each_run(c, rows, run_count, &s) != 0 ? -1 : (int64_t)s.n;
}

uint32_t qr_pc_next(qr_pcursor *c)
{
    if (c->doc == QR_NO_DOC && c->i != UINT32_MAX)
        return QR_NO_DOC;
    if (c->i != UINT32_MAX && c->i + 1 < c->n && c->blk < c->nblocks) {
        c->i++;
        return c->doc = c->docs[c->i];
    }
    if (c->ti.kind == TI_INLINE) {
        if (c->i == UINT32_MAX) {
            c->i = 0;
            return c->doc = c->docs[0];
        }
        return c->doc = QR_NO_DOC;
    }
    uint32_t k = c->blk < c->nblocks ? c->blk + 1 : 0;
    if (k >= c->nblocks) {
        c->i = c->n;
        return c->doc = QR_NO_DOC;
    }
    if (decode_block(c, k) != 0)
        return fail(c);
    return c->doc = c->docs[0];
}

uint32_t qr_pc_advance(qr_pcursor *c, uint32_t target)
{
    if (c->doc == QR_NO_DOC && c->i != UINT32_MAX)
        return QR_NO_DOC;
    if (c->ti.kind == TI_INLINE) {
        uint32_t d;
        while ((d = qr_pc_next(c)) != QR_NO_DOC && d < target)
            ;
        return d;
    }
    /* inside the decoded block? */
    if (c->blk < c->nblocks && c->i != UINT32_MAX && c->docs[c->n - 1] >= target) {
        uint32_t i = c->i == UINT32_MAX ? 0 : c->i;
        while (c->docs[i] < target)
            i++;
        c->i = i;
        return c->doc = c->docs[i];
    }
    /* find the first block whose last doc >= target via the skip table */
    uint32_t lo = c->blk < c->nblocks ? c->blk + 1 : 0, hi = c->nblocks;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (qr_load_u32(c->skip + (size_t)mid * QR_SKIP_ENTRY) < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= c->nblocks) {
        c->blk = c->nblocks - 1;
        c->i = c->n = 0;
        return c->doc = QR_NO_DOC;
    }
    if (decode_block(c, lo) != 0)
        return fail(c);
    uint32_t i = 0;
    while (c->docs[i] < target)
        i++;
    c->i = i;
    return c->doc = c->docs[i];
}

uint32_t qr_pc_at_rank_slow(qr_pcursor *c, uint32_t rank, uint32_t doc)
{
    if (c->corrupt || rank >= c->ti.df)
        return fail(c);
    uint32_t k = rank / QR_POSTING_BLOCK;
    if (c->ti.kind != TI_INLINE && (k != c->blk || c->i == UINT32_MAX) &&
        decode_block_tfs(c, k) != 0)
        return fail(c);
    c->rk_lo = k * QR_POSTING_BLOCK; /* ranks the inline path may take */
    c->rk_n = c->n;
    c->i = rank % QR_POSTING_BLOCK;
    return c->doc = doc;
}

/* Skip n varints of r: count terminator bytes (high bit clear) eight at a
 * time. Skipped values are not decoded, so only the bounds are checked. */
static int skip_varints(qr_rd *r, uint64_t n)
{
    const unsigned char *p = r->p, *end = r->end;
    while (n && end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t t = ~w & 0x8080808080808080ull; /* one bit per terminator byte */
        uint64_t c = ((t >> 7) * 0x0101010101010101ull) >> 56; /* how many */
        if (c < n) {
            n -= c;
            p += 8;
            continue;
        }
        while (--n) /* the n-th terminator of this word ends the run */
            t &= t - 1;
        p += ((unsigned)__builtin_ctzll(t) >> 3) + 1;
        break;
    }
    for (; n && p < end; p++)
        n -= !(*p & 0x80);
    if (n) {
        r->bad = 1;
        return -1;
    }
    r->p = p;
    return 0;
}

int qr_pc_prep_positions(qr_pcursor *c)
{
    c->pblk = c->blk;
    c->pbytes = NULL;
    if (!c->has_pos || c->blk >= c->nblocks)
        return 0;
    /* the block's positions: [its skip entry's offset, the next one's) */
    uint64_t start = 0, end = c->tpos_len;
    if (c->ti.kind != TI_INLINE) {
        const unsigned char *se = c->skip + (size_t)c->blk * QR_SKIP_ENTRY;
        start = qr_load_u32(se + 8);
        if (c->blk + 1 < c->nblocks)
            end = qr_load_u32(se + QR_SKIP_ENTRY + 8);
    }
    if (start > end || end > c->tpos_len) {
        c->corrupt = 1;
        return -1;
    }
    uint64_t sum = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        c->pstart[i] = (uint32_t)sum;
        sum += c->tfs[i];
    }
    c->pstart[c->n] = (uint32_t)sum;
    /* n varints in n bytes: each is one byte (so sum < 2^32 here) */
    if (sum == end - start)
        c->pbytes = c->tpos + start;
    return 0;
}

int64_t qr_pc_positions(qr_pcursor *c, uint32_t *out, uint32_t max)
{
    if (!c->has_pos || c->doc == QR_NO_DOC)
        return -1;
    uint32_t tf;
    const unsigned char *b = qr_pc_doc_positions(c, &tf);
    if (c->corrupt)
        return -1;
    if (b) { /* one byte per position: no varint to skip or decode */
        uint64_t p = 0;
        uint32_t m = tf < max ? tf : max;
        for (uint32_t k = 0; k < m; k++)
            out[k] = (uint32_t)(p += b[k]);
        if (p > UINT32_MAX) {
            c->corrupt = 1;
            return -1;
        }
        return tf;
    }
    qr_rd r;
    /* skip the positions of earlier docs of this block */
    qr_rd_init(&r, c->pcur, (size_t)(c->tpos + c->tpos_len - c->pcur));
    if (c->pcur_i < c->i) {
        uint64_t skip = 0;
        for (uint32_t k = c->pcur_i; k < c->i; k++)
            skip += c->tfs[k];
        if (skip_varints(&r, skip) != 0) {
            c->corrupt = 1;
            return -1;
        }
        c->pcur_i = c->i;
        c->pcur = r.p;
    }
    uint64_t p = 0;
    for (uint32_t k = 0; k < tf; k++) {
        uint64_t g;
        if (r.end - r.p >= 10 && r.p[0] < 0x80) { /* one-byte gap: the usual case */
            g = *r.p++;
        } else {
            g = qr_rd_varint(&r);
        }
        p = k ? p + g : g;
        if (r.bad || p > UINT32_MAX) {
            c->corrupt = 1;
            return -1;
        }
        if (k < max)
            out[k] = (uint32_t)p;
    }
    return tf;
}
