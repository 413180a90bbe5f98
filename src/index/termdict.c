/* termdict.c - front-coded term dictionary writer and reader (see
 * termdict.h). The sparse index (a block's first term, one in up to 64)
 * is one fixed record per block, read in place from the mapped TERMINDEX
 * (format 8's varint entries are parsed into the same records); a lookup
 * binary-searches it and scans one block's terms, reading an info only
 * when asked for it. */
#include "index/termdict.h"

#include "index/shapes.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* blocks ahead whose heads a landing prefetches */
#define PREFETCH_BLOCKS 4

/* The records are read in place, as the struct: its layout is the format. */
_Static_assert(sizeof(qr_tblk) == QR_TDICT_REC, "TERMINDEX record size");
_Static_assert(offsetof(qr_tblk, post) == 8 && offsetof(qr_tblk, off) == 16 &&
                   offsetof(qr_tblk, first) == 24 && offsetof(qr_tblk, cpl) == 28 &&
                   offsetof(qr_tblk, first_len) == 30,
               "TERMINDEX record layout");
_Static_assert(QR_MAX_TERM <= 255, "a first term's length is a byte");
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "TERMINDEX records (and bitmap words) are read in place as little-endian"
#endif

void qr_tdictw_init(qr_tdictw *w) { memset(w, 0, sizeof *w); }

void qr_tdictw_free(qr_tdictw *w)
{
    qr_buf_free(&w->dict);
    qr_buf_free(&w->index);
    qr_buf_free(&w->infos);
    qr_buf_free(&w->recs);
    qr_buf_free(&w->masks);
    qr_buf_free(&w->vmasks);
    qr_buf_free(&w->firsts);
}

/* The first 8 bytes of a term as a big-endian number, zero-padded. Two
 * terms whose key8 differ compare as their key8 do (a shorter term's
 * padding is below the other's byte there, unless that byte is 0: then
 * the key8 are equal); equal key8 need the bytes. */
static uint64_t key8(const char *t, size_t n)
{
    if (n >= 8) {
        uint64_t k;
        memcpy(&k, t, 8);
        return __builtin_bswap64(k);
    }
    uint64_t k = 0;
    for (size_t i = 0; i < 8; i++)
        k = k << 8 | (i < n ? (unsigned char)t[i] : 0u);
    return k;
}

/* Close the current block: its infos follow its terms, and its record gets
 * the terms part's length and its mask. */
static void end_block(qr_tdictw *w)
{
    if (!w->nblocks)
        return;
    size_t tlen = w->dict.len - w->blk_start;
    qr_buf_put(&w->dict, w->infos.p, w->infos.len);
    qr_buf_clear(&w->infos);
    if (!w->recs.oom) {
        qr_tblk *b = (qr_tblk *)(void *)(w->recs.p + w->recs.len - sizeof *b);
        b->tlen = (uint32_t)tlen;
    }
    qr_buf_put_u64(&w->masks, w->mask);
    if (w->variable_masks)
        qr_buf_put_u64(&w->vmasks, w->vmask);
    w->mask = w->vmask = 0;
}

int qr_tdictw_add(qr_tdictw *w, const char *term, size_t n, const void *info, size_t info_len,
                  uint64_t post_off, uint64_t pos_off)
{
    if (n > QR_MAX_TERM || info_len > QR_TERMINFO_MAX)
        return -1;
    size_t shared = 0;
    uint32_t cpl = qr_term_cpl(term, n);
    if (w->in_block == QR_TERMS_PER_BLOCK || w->nterms == 0 || cpl != w->prev_cpl) {
        if (post_off > UINT32_MAX || pos_off > UINT32_MAX || w->dict.len > UINT32_MAX ||
            w->firsts.len > UINT32_MAX)
            return -1; /* past what a block can hold */
        end_block(w);
        w->prev_cpl = cpl;
        w->in_block = 0;
        w->nblocks++;
        w->blk_start = w->dict.len;
        qr_tblk b = {key8(term, n),
                     (uint32_t)post_off,
                     (uint32_t)pos_off,
                     (uint32_t)w->dict.len,
                     0,
                     (uint32_t)w->firsts.len,
                     (uint16_t)cpl,
                     (uint8_t)n,
                     0};
        qr_buf_put(&w->recs, &b, sizeof b); /* `first` is made absolute at finish */
        qr_buf_put(&w->firsts, term, n);
    } else {
        size_t m = n < w->prev_len ? n : w->prev_len;
        while (shared < m && w->prev[shared] == term[shared])
            shared++;
    }
    qr_buf_put_varint(&w->dict, shared);
    qr_buf_put_varint(&w->dict, n - shared);
    qr_buf_put(&w->dict, term + shared, n - shared);
    qr_buf_put_varint(&w->infos, info_len); /* lets readers skip unneeded infos */
    qr_buf_put(&w->infos, info, info_len);
    uint64_t m = 0;
    for (size_t i = 0; i < n; i++)
        m |= 1ull << qr_tdict_byte_class((unsigned char)term[i]);
    w->mask |= m;
    if (w->variable_masks && qr_shape_variable(term, n))
        w->vmask |= m;
    memcpy(w->prev, term, n);
    w->prev_len = n;
    w->in_block++;
    w->nterms++;
    return w->dict.oom || w->recs.oom || w->firsts.oom || w->infos.oom ? -1 : 0;
}

int qr_tdictw_finish(qr_tdictw *w)
{
    end_block(w);
    if (w->dict.oom || w->recs.oom || w->masks.oom || w->vmasks.oom || w->firsts.oom)
        return -1;
    size_t base = QR_TDICT_HEADER + (size_t)w->nblocks * (QR_TDICT_REC + 8) +
                  w->variable_masks * 8ull * w->nblocks;
    if (base + w->firsts.len > UINT32_MAX)
        return -1;
    qr_buf_clear(&w->index);
    qr_buf_put_u32(&w->index, w->nblocks);
    qr_buf_put_u32(&w->index, w->variable_masks ? QR_TDICT_VMASKS : 0);
    qr_buf_put_u64(&w->index, w->nterms);
    for (uint32_t i = 0; i < w->nblocks; i++) {
        qr_tblk b;
        memcpy(&b, w->recs.p + (size_t)i * sizeof b, sizeof b);
        b.first += (uint32_t)base;
        qr_buf_put(&w->index, &b, sizeof b);
    }
    qr_buf_put(&w->index, w->masks.p, w->masks.len);
    qr_buf_put(&w->index, w->vmasks.p, w->vmasks.len);
    qr_buf_put(&w->index, w->firsts.p, w->firsts.len);
    return w->index.oom ? -1 : 0;
}

static inline int cmp_first(const qr_tdict *d, uint32_t b, uint32_t cpl, uint64_t k8,
                            const char *key, size_t n);

/* Record i's offsets and lengths, given record i - 1's (checked before):
 * inside TERMDICT and TERMINDEX and after the block before it, so nothing
 * a seek or a scan reads through it lies outside the two blocks. Reads the
 * records only. 0, or -1. */
static int check_self(const qr_tdict *d, size_t index_len, uint32_t i)
{
    const qr_tblk *b = &d->blk[i];
    if (b->off >= d->dict_len || b->tlen == 0 || b->tlen > d->dict_len - b->off ||
        b->first > index_len || b->first_len > index_len - b->first)
        return -1; /* (first_len, a byte, cannot pass QR_MAX_TERM) */
    return 0;
}

static int check_bounds(const qr_tdict *d, size_t index_len, uint32_t i)
{
    const qr_tblk *b = &d->blk[i];
    if (check_self(d, index_len, i) != 0)
        return -1;
    if (i && (b->off <= b[-1].off || b[-1].tlen > b->off - b[-1].off))
        return -1;
    return 0;
}

/* Bit i of an atomic bitmap (the dictionary is shared by the threads of
 * a search), read and set. */
static int bit_set(const uint64_t *bits, uint32_t i)
{
    return (int)(__atomic_load_n(&bits[i >> 6], __ATOMIC_ACQUIRE) >> (i & 63) & 1);
}

static void set_bit(uint64_t *bits, uint32_t i)
{
    __atomic_fetch_or(&bits[i >> 6], 1ull << (i & 63), __ATOMIC_RELEASE);
}

static int rec_check(const qr_tdict *d, uint32_t i, qr_err *e);

/* Lazily verified index (d->iref): record i checked against its chunk's
 * checksum, its own offsets and lengths against the blocks' sizes, once
 * (its bit in okbits). Every read of a record goes through here first, so
 * nothing unverified steers a seek; its first term's bytes (first_ok) and
 * its mask (qr_tdict_find_mask) lie elsewhere and are checked where they are
 * read: a binary search mostly decides by the record's key8 alone. 0 (also
 * when the index was checked whole at open), or -1 with e set. */
static inline int rec_ok(const qr_tdict *d, uint32_t i, qr_err *e)
{
    if (!d->iref || bit_set(d->okbits, i))
        return 0;
    return rec_check(d, i, e);
}

static int rec_check(const qr_tdict *d, uint32_t i, qr_err *e)
{
    size_t rec = QR_TDICT_HEADER + (size_t)i * QR_TDICT_REC;
    if (qr_seg_check(d->seg, d->iref, rec, QR_TDICT_REC, "TERMINDEX", e) != 0)
        return -1;
    const qr_tblk *b = &d->blk[i];
    if (b->zero != 0 || b->first < d->firsts_at || check_self(d, d->index_len, i) != 0)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt term index entry %u", d->seg->path,
                       i);
    set_bit(d->okbits, i);
    return 0;
}

/* Record i's (checked) first term bytes, verified. 0, or -1 with e set. */
static int first_ok(const qr_tdict *d, uint32_t i, qr_err *e)
{
    const qr_tblk *b = &d->blk[i];
    if (!d->iref || !b->first_len)
        return 0;
    return qr_seg_check(d->seg, d->iref, b->first, b->first_len, "TERMINDEX", e);
}

/* Record i (checked) against the key as cmp_first, verifying its first
 * term first when the comparison comes to its bytes. 0 with *c, or -1. */
static inline int cmp_first_ok(const qr_tdict *d, uint32_t i, uint32_t cpl, uint64_t k8,
                               const char *key, size_t n, int *c, qr_err *e)
{
    if (d->iref && d->blk[i].cpl == cpl && d->blk[i].key8 == k8 && first_ok(d, i, e) != 0)
        return -1;
    *c = cmp_first(d, i, cpl, k8, key, n);
    return 0;
}

/* Record i's first term: its key8 and code point length as recorded, and
 * above block i - 1's first term (the order binary searches rely on).
 * Reads the first terms: done when an iterator enters block i (format 9),
 * not at open, so that opening the 525 segments of a 100M-row table does
 * not read 100 MB of first terms (the TERMINDEX checksum already covers
 * them; this catches a writer's mistake). 0, or -1. */
static int check_order(const qr_tdict *d, uint32_t i)
{
    const qr_tblk *b = &d->blk[i];
    const char *t = (const char *)d->index + b->first;
    if (b->key8 != key8(t, b->first_len) || b->cpl != qr_term_cpl(t, b->first_len))
        return -1;
    if (i && cmp_first(d, i, b[-1].cpl, b[-1].key8, (const char *)d->index + b[-1].first,
                       b[-1].first_len) <= 0)
        return -1;
    return 0;
}

static int check_record(const qr_tdict *d, size_t index_len, uint32_t i)
{
    return check_bounds(d, index_len, i) != 0 || check_order(d, i) != 0 ? -1 : 0;
}

/* Format 8's varint entries, parsed into records of our own (d->own). */
static int open_v8(qr_tdict *d, size_t index_len, const char *what, qr_err *e)
{
    const unsigned char *index = d->index;
    uint32_t nb = d->nblocks;
    qr_tblk *blk = malloc((sizeof *blk + 8) * (nb ? nb : 1));
    if (!blk)
        return qr_errf(e, QR_E_NOMEM, "%s: out of memory", what);
    uint64_t *mask = (uint64_t *)(void *)(blk + (nb ? nb : 1));
    d->own = blk;
    d->blk = blk;
    d->blk_mask = mask;
    qr_rd r;
    qr_rd_init(&r, index + 12, index_len - 12);
    for (uint32_t i = 0; i < nb; i++) {
        qr_tblk *b = &blk[i];
        b->off = qr_rd_u32(&r);
        uint64_t post = qr_rd_varint(&r), pos = qr_rd_varint(&r), l = qr_rd_varint(&r);
        const unsigned char *t = l <= QR_MAX_TERM ? qr_rd_bytes(&r, (size_t)l) : NULL;
        mask[i] = qr_rd_u64(&r);
        b->tlen = qr_rd_u32(&r);
        if (r.bad || !t || post > UINT32_MAX || pos > UINT32_MAX)
            return qr_errf(e, QR_E_CORRUPT, "%s: corrupt term index entry %u", what, i);
        b->post = (uint32_t)post;
        b->pos = (uint32_t)pos;
        b->first = (uint32_t)(t - index);
        b->first_len = (uint8_t)l;
        b->key8 = key8((const char *)t, (size_t)l);
        b->cpl = (uint16_t)qr_term_cpl((const char *)t, (size_t)l);
        b->zero = 0;
        if (check_record(d, index_len, i) != 0)
            return qr_errf(e, QR_E_CORRUPT, "%s: corrupt term index entry %u", what, i);
    }
    if (qr_rd_left(&r) != 0)
        return qr_errf(e, QR_E_CORRUPT, "%s: trailing bytes in term index", what);
    return 0;
}

/* Format 9: records, masks and first terms in place (copied when the block
 * does not start on an 8-byte boundary, which no writer does). */
static int open_v9(qr_tdict *d, size_t index_len, const char *what, qr_err *e)
{
    uint32_t nb = d->nblocks;
    size_t base = d->firsts_at;
    if (base > index_len)
        return qr_errf(e, QR_E_CORRUPT, "%s: corrupt term index header", what);
    const unsigned char *recs = d->index + QR_TDICT_HEADER;
    if (((uintptr_t)recs & 7) != 0) {
        if (!(d->own = malloc(base - QR_TDICT_HEADER + 1)))
            return qr_errf(e, QR_E_NOMEM, "%s: out of memory", what);
        memcpy(d->own, recs, base - QR_TDICT_HEADER);
        recs = d->own;
    }
    d->blk = (const qr_tblk *)(const void *)recs;
    d->blk_mask = (const uint64_t *)(const void *)(recs + (size_t)nb * QR_TDICT_REC);
    if (base > QR_TDICT_HEADER + (size_t)nb * (QR_TDICT_REC + 8))
        d->blk_vmask = d->blk_mask + nb;
    size_t next_first = base; /* the first terms follow each other */
    for (uint32_t i = 0; i < nb; i++) {
        if (d->blk[i].zero != 0 || d->blk[i].first != next_first ||
            check_bounds(d, index_len, i) != 0)
            return qr_errf(e, QR_E_CORRUPT, "%s: corrupt term index entry %u", what, i);
        next_first += d->blk[i].first_len;
    }
    if (next_first != index_len)
        return qr_errf(e, QR_E_CORRUPT, "%s: trailing bytes in term index", what);
    return 0;
}

/* The fields and the header of an index, checked: its block count and
 * term count against its size. 0, or -1 with e set. */
static int open_header(qr_tdict *d, uint32_t version, const unsigned char *index,
                       size_t index_len, const unsigned char *dict, size_t dict_len,
                       int has_freqs, int has_pos, const char *what, qr_err *e)
{
    memset(d, 0, sizeof *d);
    d->dict = dict;
    d->index = index;
    d->dict_len = dict_len;
    d->index_len = index_len;
    d->has_freqs = has_freqs;
    d->has_pos = has_pos;
    /* format 8: u32 blocks, u64 terms, entries of at least 19 bytes;
     * format 9: u32 blocks, u32 0, u64 terms, 40 bytes a block and more */
    size_t hdr = version >= 9 ? QR_TDICT_HEADER : 12, min_entry = version >= 9 ? 40 : 19;
    if (index_len < hdr || index_len > UINT32_MAX)
        return qr_errf(e, QR_E_CORRUPT, "%s: corrupt term index header", what);
    uint32_t nb = qr_load_u32(index);
    d->nterms = qr_load_u64(index + hdr - 8);
    if (nb > (index_len - hdr) / min_entry || d->nterms > (uint64_t)nb * QR_TERMS_PER_BLOCK ||
        d->nterms < nb)
        return qr_errf(e, QR_E_CORRUPT, "%s: corrupt term index header", what);
    d->nblocks = nb;
    /* format 9 to 12: flags 0; 13: variable masks or not */
    uint32_t flags = version >= 9 ? qr_load_u32(index + 4) : 0;
    if (flags & ~(version >= 13 ? QR_TDICT_VMASKS : 0u))
        return qr_errf(e, QR_E_CORRUPT, "%s: corrupt term index header (flags %08x)", what, flags);
    d->firsts_at = QR_TDICT_HEADER + (size_t)nb * (QR_TDICT_REC + 8) +
                   (flags & QR_TDICT_VMASKS ? (size_t)nb * 8 : 0);
    if (version >= 9 && d->firsts_at > index_len)
        return qr_errf(e, QR_E_CORRUPT, "%s: corrupt term index header", what);
    return 0;
}

int qr_tdict_open(qr_tdict *d, uint32_t version, const unsigned char *index, size_t index_len,
                  const unsigned char *dict, size_t dict_len, int has_freqs, int has_pos,
                  const char *what, qr_err *e)
{
    if (open_header(d, version, index, index_len, dict, dict_len, has_freqs, has_pos, what, e) !=
        0)
        return -1;
    if ((version >= 9 ? open_v9 : open_v8)(d, index_len, what, e) != 0) {
        qr_tdict_close(d);
        return -1;
    }
    return 0;
}

int qr_tdict_open_in(qr_tdict *d, const qr_segment *s, const qr_blockref *iref,
                     const qr_blockref *dref, const unsigned char *index, size_t index_len,
                     const unsigned char *dict, size_t dict_len, int has_freqs, int has_pos,
                     const char *what, qr_err *e)
{
    int lazy = s->version >= 9 && ((uintptr_t)(index + QR_TDICT_HEADER) & 7) == 0;
    /* lazily: the header now (the records' count and size), else the whole
     * block before it is parsed */
    if (qr_seg_check(s, iref, 0, lazy && index_len > QR_TDICT_HEADER ? QR_TDICT_HEADER : index_len,
                     "TERMINDEX", e) != 0)
        return -1;
    if (!lazy) {
        if (qr_tdict_open(d, s->version, index, index_len, dict, dict_len, has_freqs, has_pos,
                          what, e) != 0)
            return -1;
        qr_tdict_verify_by(d, s, dref);
        return 0;
    }
    if (open_header(d, s->version, index, index_len, dict, dict_len, has_freqs, has_pos, what,
                    e) != 0)
        return -1;
    uint32_t nb = d->nblocks;
    const unsigned char *recs = index + QR_TDICT_HEADER;
    d->blk = (const qr_tblk *)(const void *)recs;
    d->blk_mask = (const uint64_t *)(const void *)(recs + (size_t)nb * QR_TDICT_REC);
    if (d->firsts_at > QR_TDICT_HEADER + (size_t)nb * (QR_TDICT_REC + 8))
        d->blk_vmask = d->blk_mask + nb;
    if (!(d->okbits = calloc(2 * ((size_t)nb / 64 + 1), sizeof *d->okbits)))
        return qr_errf(e, QR_E_NOMEM, "%s: out of memory", what);
    qr_tdict_verify_by(d, s, dref);
    d->iref = iref;
    return 0;
}

void qr_tdict_close(qr_tdict *d)
{
    free(d->own);
    d->own = NULL;
    free(d->okbits);
    d->okbits = NULL;
    free(d->lens);
    d->lens = NULL;
    d->blk = NULL;
    d->blk_mask = NULL;
    d->blk_vmask = NULL;
}

/* Byte order of two terms. A loop, not memcmp: terms are short and most
 * differ in their first bytes, so the call would cost more than the work. */
static inline int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
    size_t m = an < bn ? an : bn;
    for (size_t i = 0; i < m; i++)
        if (a[i] != b[i])
            return (unsigned char)a[i] < (unsigned char)b[i] ? -1 : 1;
    return an < bn ? -1 : an > bn;
}

void qr_tdict_verify_by(qr_tdict *d, const qr_segment *s, const qr_blockref *ref)
{
    d->seg = s;
    d->ref = ref;
}

/* Enter dictionary block blk: verify its bytes (terms and infos), then
 * point the iterator at its first term. 0, or -1 (e set) when they do not
 * verify: the iterator is then corrupt. */
static int iter_at_block(const qr_tdict *d, qr_titer *it, uint32_t blk, qr_err *e)
{
    it->d = d;
    it->blk = blk;
    /* a lazily verified index: this record, the one before (the order) and
     * the one after (where this block's infos end) */
    uint64_t *entered = d->iref ? d->okbits + (d->nblocks / 64 + 1) : NULL;
    int known = entered && bit_set(entered, blk);
    if (d->iref && !known &&
        (rec_ok(d, blk, e) != 0 || first_ok(d, blk, e) != 0 ||
         (blk && (rec_ok(d, blk - 1, e) != 0 || first_ok(d, blk - 1, e) != 0)) ||
         (blk + 1 < d->nblocks && rec_ok(d, blk + 1, e) != 0))) {
        qr_rd_init(&it->r, d->dict, 0);
        it->in_blk = 0;
        it->corrupt = 1;
        return -1;
    }
    const qr_tblk *b = &d->blk[blk];
    size_t end = blk + 1 < d->nblocks ? b[1].off : d->dict_len;
    if (!known &&
        ((d->iref && (check_bounds(d, d->index_len, blk) != 0 ||
                      (blk + 1 < d->nblocks && check_bounds(d, d->index_len, blk + 1) != 0))) ||
         check_order(d, blk) != 0)) {
        qr_errf(e, QR_E_CORRUPT, "%s: corrupt term index entry %u (its first term)",
                d->seg ? d->seg->path : "term dictionary", blk);
        qr_rd_init(&it->r, d->dict, 0);
        it->in_blk = 0;
        it->corrupt = 1;
        return -1;
    }
    if (d->seg && qr_seg_check(d->seg, d->ref, b->off, end - b->off, "TERMDICT", e) != 0) {
        qr_rd_init(&it->r, d->dict, 0);
        it->in_blk = 0;
        it->corrupt = 1;
        return -1;
    }
    if (entered && !known)
        set_bit(entered, blk);
    it->in_blk = 0;
    it->len = 0;
    it->corrupt = 0;
    it->post_run = b->post;
    it->pos_run = b->pos;
    const unsigned char *p = d->dict + b->off;
    qr_rd_init(&it->r, p, b->tlen);
    /* a seek scans on from here: ask for all the terms' lines at once; an
     * automaton walk lands a few blocks on next: ask for their heads (a
     * walk over hex ids is bound by these misses) */
    for (uint32_t o = 64; o < b->tlen; o += 64)
        __builtin_prefetch(p + o);
    for (uint32_t k = 1; k <= PREFETCH_BLOCKS && blk + k < d->nblocks; k++) {
        __builtin_prefetch(d->dict + b[k].off);
        __builtin_prefetch(d->dict + b[k].off + 64);
    }
    it->acc_p = p + b->tlen;
    it->info_end = d->dict + end;
    it->acc_i = 0;
    return 0;
}

/* Read the next term of the current block (1), or 0 when the block ends.
 * Only the term is decoded: infos are read on demand (qr_titer_info).
 * Inlined into the scans, where it is the whole cost of a seek. */
static inline __attribute__((always_inline)) int read_entry(qr_titer *it)
{
    if (qr_rd_left(&it->r) == 0 || it->in_blk == QR_TERMS_PER_BLOCK)
        return 0;
    uint64_t shared = qr_rd_varint(&it->r), suf = qr_rd_varint(&it->r);
    if (shared > it->len || shared + suf > QR_MAX_TERM || (it->in_blk == 0 && shared != 0))
        goto bad;
    const unsigned char *p = qr_rd_bytes(&it->r, (size_t)suf); /* NULL once bad */
    if (!p)
        goto bad;
    if (suf <= 16 && qr_rd_left(&it->r) + (size_t)suf >= 16)
        memcpy(it->term + shared, p, 16); /* fixed size: two moves, no call */
    else
        memcpy(it->term + shared, p, (size_t)suf);
    it->len = (size_t)(shared + suf);
    it->shared = (size_t)shared;
    it->in_blk++;
    return 1;
bad:
    it->corrupt = 1;
    return -1;
}

/* One info of the infos part at *pp: its bytes (NULL when malformed). */
static const unsigned char *next_info(const unsigned char **pp, const unsigned char *end,
                                      size_t *len)
{
    qr_rd r;
    qr_rd_init(&r, *pp, (size_t)(end - *pp));
    uint64_t il = qr_rd_varint(&r);
    const unsigned char *ip = il <= QR_TERMINFO_MAX ? qr_rd_bytes(&r, (size_t)il) : NULL;
    if (!ip)
        return NULL;
    *pp = r.p;
    *len = (size_t)il;
    return ip;
}

/* Move acc_p to the current term's info, adding the list lengths of the
 * infos passed (they lead each info) to the running offsets. */
static int catch_up(qr_titer *it)
{
    if (it->in_blk == 0 || it->acc_i > it->in_blk - 1)
        return -1;
    while (it->acc_i < it->in_blk - 1) {
        size_t il;
        const unsigned char *ip = next_info(&it->acc_p, it->info_end, &il);
        if (!ip)
            return -1;
        qr_rd li;
        qr_rd_init(&li, ip, il);
        uint64_t pl = qr_rd_varint(&li), ql = it->d->has_pos ? qr_rd_varint(&li) : 0;
        if (li.bad || pl > (1ull << 40) || ql > (1ull << 40))
            return -1;
        it->post_run += pl;
        it->pos_run += ql;
        it->acc_i++;
    }
    return 0;
}

static int corrupt_err(qr_err *e)
{
    return qr_errf(e, QR_E_CORRUPT, "corrupt term dictionary entry");
}

/* The end of a block: check it ended where it should, move to the next. */
static int __attribute__((noinline)) next_block(qr_titer *it, qr_err *e)
{
    if (qr_rd_left(&it->r) != 0 && it->in_blk == QR_TERMS_PER_BLOCK) {
        it->corrupt = 1;
        return corrupt_err(e);
    }
    if (it->blk + 1 >= it->d->nblocks)
        return 0;
    if (iter_at_block(it->d, it, it->blk + 1, e) != 0)
        return -1;
    it->shared = 0;
    return 1;
}

static inline __attribute__((always_inline)) int next_term(qr_titer *it, qr_err *e)
{
    for (;;) {
        int r = read_entry(it);
        if (__builtin_expect(r == 1, 1))
            return 1;
        if (r < 0)
            return corrupt_err(e);
        if ((r = next_block(it, e)) <= 0)
            return r;
    }
}

int qr_titer_next(qr_titer *it, qr_err *e) { return next_term(it, e); }

/* Block b's first term against key (cpl code points, k8 = its key8), in
 * dictionary order: mostly decided by the block's code point count and
 * key8, without a cache miss on the index's term bytes. */
static inline int cmp_first(const qr_tdict *d, uint32_t b, uint32_t cpl, uint64_t k8,
                            const char *key, size_t n)
{
    if (d->blk[b].cpl != cpl)
        return d->blk[b].cpl < cpl ? -1 : 1;
    uint64_t f = d->blk[b].key8;
    if (f != k8)
        return f < k8 ? -1 : 1;
    return cmp_bytes((const char *)d->index + d->blk[b].first, d->blk[b].first_len, key, n);
}

/* Last block whose first term <= key (0 if key is before every term);
 * UINT32_MAX with e set when a record does not verify. */
static uint32_t find_block(const qr_tdict *d, uint32_t cpl, const char *key, size_t n, qr_err *e)
{
    uint64_t k8 = key8(key, n);
    uint32_t lo = 0, hi = d->nblocks;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        /* both places the next step may look: the records of a large
         * index are cache misses, and this overlaps two levels of them */
        __builtin_prefetch(&d->blk[lo + (mid - lo) / 2]);
        __builtin_prefetch(&d->blk[mid + (hi - mid) / 2]);
        int c;
        if (rec_ok(d, mid, e) != 0 || cmp_first_ok(d, mid, cpl, k8, key, n, &c, e) != 0)
            return UINT32_MAX;
        if (c <= 0)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* The inner loop of a scan (below): step over the current block's entries
 * that are certainly below the key, reading bytes in place. An entry whose
 * shared prefix is longer than m is below; one sharing exactly m is
 * compared from m. Stops, leaving the entry unread, at one that may be >=
 * the key, at the block's end, and at anything unusual (a multi-byte
 * varint, a suffix over 16 bytes, an entry near the block's end), which
 * the general reader handles or reports. Returns the new m. */
static inline size_t skip_below(qr_titer *it, const char *key, size_t n, size_t m)
{
    const unsigned char *p = it->r.p, *end = it->r.end;
    uint32_t in_blk = it->in_blk;
    size_t len = it->len;
    while (in_blk - 1u < QR_TERMS_PER_BLOCK - 1u && end - p >= 18) {
        size_t sh = p[0], sf = p[1];
        if ((sh | sf) >= 0x80 || sf > 16 || sh < m || sh > len || sh + sf > QR_MAX_TERM)
            break;
        if (sh == m) {
            const unsigned char *t = p + 2; /* t[j] is the term's byte m + j */
            size_t tl = sh + sf, cp = m;
            while (cp < tl && cp < n && t[cp - m] == (unsigned char)key[cp])
                cp++;
            if (cp == n || (cp < tl && t[cp - m] > (unsigned char)key[cp]))
                break; /* at or above the key: the general path takes it */
            m = cp;
        }
        memcpy(it->term + sh, p + 2, 16); /* 18 bytes left: in range */
        len = sh + sf;
        p += 2 + sf;
        in_blk++;
    }
    it->r.p = p;
    it->in_blk = in_blk;
    it->len = len;
    return m;
}

/* Step `it` to the first term >= key. Once a term is known to be below the
 * key, sharing m bytes with it, the next term's shared-prefix length alone
 * decides most steps (as Lucene's terms enum does): sharing more than m
 * bytes it is still below, fewer and it is above; only at exactly m are
 * bytes compared, from m on. A block's first entry stores no shared prefix,
 * so it is compared in full. `below`: the current term is below the key. */
static int scan_to(qr_titer *it, uint32_t cpl, const char *key, size_t n, int below, qr_err *e)
{
    size_t m = 0;
    if (below)
        while (m < it->len && m < n && it->term[m] == key[m])
            m++;
    for (;;) {
        if (below)
            m = skip_below(it, key, n, m);
        int r = next_term(it, e);
        if (r <= 0)
            return r;
        if (it->in_blk == 1 && it->d->blk[it->blk].cpl != cpl)
            break; /* a block of longer terms: above the key */
        size_t from = 0;
        if (below && it->in_blk > 1) {
            if (it->shared > m)
                continue; /* same bytes as the last term up to m: below */
            if (it->shared < m)
                break;    /* above the last term where it matched the key */
            from = m;
        }
        size_t cp = from;
        while (cp < it->len && cp < n && it->term[cp] == key[cp])
            cp++;
        if (cp == n || (cp < it->len && (unsigned char)it->term[cp] > (unsigned char)key[cp]))
            break; /* key is a prefix of it, or it is above at cp */
        m = cp;    /* below: a prefix of the key, or smaller at cp */
        below = 1;
    }
    it->shared = 0; /* the caller starts a new walk here */
    return 1;
}

/* Position `it` in block b, whose first term is <= the key (cpl, key) and
 * whose next block's first term is above it: on the block's first term
 * >= key, else on the next block's first. `below`: the iterator is on a
 * term of block b below the key (a forward seek), not at its start. */
static int seek_in(const qr_tdict *d, qr_titer *it, uint32_t b, uint32_t cpl, const char *key,
                   size_t n, int below, qr_err *e)
{
    if (b == UINT32_MAX || rec_ok(d, b, e) != 0)
        return -1;
    if (d->blk[b].cpl < cpl) /* shorter terms, all below the key */
        return qr_tdict_seek_block(d, it, b + 1, e);
    if (d->blk[b].cpl > cpl) /* b = 0 and the key is below every term */
        return qr_tdict_seek_block(d, it, b, e);
    if (!below && iter_at_block(d, it, b, e) != 0)
        return -1;
    return scan_to(it, cpl, key, n, below, e);
}

int qr_tdict_seek_at(const qr_tdict *d, qr_titer *it, uint32_t cpl, const char *key, size_t n,
                     qr_err *e)
{
    memset(it, 0, offsetof(qr_titer, term));
    if (d->nblocks == 0)
        return 0;
    return seek_in(d, it, find_block(d, cpl, key, n, e), cpl, key, n, 0, e);
}

int qr_tdict_seek(const qr_tdict *d, qr_titer *it, const char *key, size_t n, qr_err *e)
{
    return qr_tdict_seek_at(d, it, qr_term_cpl(key, n), key, n, e);
}

/* First block > from whose first term > key, by galloping then binary
 * search: a forward seek usually lands a block or two ahead. */
static uint32_t gallop_block(const qr_tdict *d, uint32_t from, uint32_t cpl, const char *key,
                             size_t n, qr_err *e)
{
    uint64_t k8 = key8(key, n);
    uint32_t lo = from, step = 1, hi = from;
    for (;;) {
        if (hi >= d->nblocks)
            break;
        int c;
        if (rec_ok(d, hi, e) != 0 || cmp_first_ok(d, hi, cpl, k8, key, n, &c, e) != 0)
            return UINT32_MAX;
        if (c > 0)
            break;
        lo = hi + 1;
        hi = hi + step;
        step *= 2;
    }
    if (hi > d->nblocks)
        hi = d->nblocks;
    while (lo < hi) { /* first block in [lo, hi) whose first term > key */
        uint32_t mid = lo + (hi - lo) / 2;
        int c;
        if (rec_ok(d, mid, e) != 0 || cmp_first_ok(d, mid, cpl, k8, key, n, &c, e) != 0)
            return UINT32_MAX;
        if (c <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int qr_titer_seek_at(qr_titer *it, uint32_t cpl, const char *key, size_t n, qr_err *e)
{
    const qr_tdict *d = it->d;
    if (!d)
        return 0;
    uint32_t cur = d->blk[it->blk].cpl;
    if (it->corrupt || cur > cpl || (cur == cpl && cmp_bytes(it->term, it->len, key, n) >= 0))
        return qr_tdict_seek_at(d, it, cpl, key, n, e);
    /* key is ahead: if it is past the next block's first term, jump to the
     * last block starting at or before it, else go on in this one */
    uint32_t b = gallop_block(d, it->blk + 1, cpl, key, n, e);
    if (b == UINT32_MAX)
        return -1;
    if (b > it->blk + 1)
        return seek_in(d, it, b - 1, cpl, key, n, 0, e);
    return seek_in(d, it, it->blk, cpl, key, n, 1, e);
}

int qr_titer_seek(qr_titer *it, const char *key, size_t n, qr_err *e)
{
    return qr_titer_seek_at(it, qr_term_cpl(key, n), key, n, e);
}

int qr_tdict_block_cpl(const qr_tdict *d, uint32_t b, uint32_t *cpl, qr_err *e)
{
    if (b >= d->nblocks)
        return qr_errf(e, QR_E_INTERNAL, "term dictionary: no block %u", b);
    if (rec_ok(d, b, e) != 0)
        return -1;
    *cpl = d->blk[b].cpl;
    return 0;
}

int qr_tdict_len_start(const qr_tdict *d, uint32_t cpl, uint32_t *b, qr_err *e)
{
    uint32_t lo = 0, hi = d->nblocks; /* the answer is in [lo, hi] */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (rec_ok(d, mid, e) != 0)
            return -1;
        if (d->blk[mid].cpl < cpl)
            lo = mid + 1;
        else
            hi = mid;
    }
    *b = lo;
    return 0;
}

int qr_tdict_count_masks(const qr_tdict *d, uint64_t need, uint32_t *n, qr_err *e)
{
    uint32_t nb = d->nblocks, k = 0;
    size_t at = QR_TDICT_HEADER + (size_t)nb * QR_TDICT_REC;
    if (nb && d->iref && qr_seg_check(d->seg, d->iref, at, (size_t)nb * 8, "TERMINDEX", e) != 0)
        return -1;
    for (uint32_t b = 0; b < nb; b++)
        k += (d->blk_mask[b] & need) == need;
    *n = k;
    return 0;
}

int qr_tdict_seek_block(const qr_tdict *d, qr_titer *it, uint32_t b, qr_err *e)
{
    memset(it, 0, offsetof(qr_titer, term));
    if (b >= d->nblocks)
        return 0;
    if (iter_at_block(d, it, b, e) != 0)
        return -1;
    int r = qr_titer_next(it, e);
    it->shared = 0;
    return r;
}

int qr_titer_info(qr_titer *it, qr_terminfo *info, qr_err *e)
{
    const unsigned char *p;
    size_t il = 0;
    qr_rd r;
    if (catch_up(it) != 0 || !(p = it->acc_p, p = next_info(&p, it->info_end, &il)) ||
        (qr_rd_init(&r, p, il),
         qr_terminfo_read(&r, it->d->has_freqs, it->d->has_pos, it->post_run, it->pos_run,
                          info) != 0) ||
        qr_rd_left(&r)) {
        it->corrupt = 1;
        return corrupt_err(e);
    }
    return 0;
}

int qr_tdict_lookup(const qr_tdict *d, const char *term, size_t n, qr_terminfo *info,
                    qr_err *e)
{
    qr_titer it;
    int r = qr_tdict_seek(d, &it, term, n, e);
    if (r <= 0)
        return r;
    if (it.len != n || memcmp(it.term, term, n) != 0)
        return 0;
    return qr_titer_info(&it, info, e) == 0 ? 1 : -1;
}

/* The length cache of qr_tdict_len_below, made on first use: slot 0 the
 * longest length + 1 (0: not read yet), slot cpl the smallest key8 known
 * to be above every term of that length (UINT64_MAX: none known). */
static uint64_t *len_cache(const qr_tdict *d)
{
    uint64_t **at = (uint64_t **)&((qr_tdict *)d)->lens; /* the cache is the mutable part */
    uint64_t *c = __atomic_load_n(at, __ATOMIC_ACQUIRE);
    if (c)
        return c;
    uint64_t *mine = malloc(256 * sizeof *mine), *none = NULL;
    if (!mine)
        return NULL;
    mine[0] = 0;
    for (int i = 1; i < 256; i++)
        mine[i] = UINT64_MAX;
    if (__atomic_compare_exchange_n(at, &none, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return mine;
    free(mine); /* another thread's is the one */
    return none;
}

/* A key whose key8 stands for it exactly: at most 8 bytes, no NUL. */
static int exact8(const char *key, size_t n) { return n >= 1 && n <= 8 && !memchr(key, 0, n); }

int qr_tdict_len_below(const qr_tdict *d, uint32_t cpl, const char *key, size_t n, qr_err *e)
{
    if (cpl == 0 || cpl > 255 || n == 0 || d->nblocks == 0)
        return 0;
    uint64_t *c = len_cache(d);
    if (!c)
        return 0; /* no memory for the cache: seek as without it */
    uint64_t longest = __atomic_load_n(&c[0], __ATOMIC_RELAXED);
    if (!longest) { /* the last block's length, from its record */
        if (rec_ok(d, d->nblocks - 1, e) != 0)
            return -1;
        longest = (uint64_t)d->blk[d->nblocks - 1].cpl + 1;
        __atomic_store_n(&c[0], longest, __ATOMIC_RELAXED);
    }
    if (cpl >= longest)
        return 2;
    uint64_t above = __atomic_load_n(&c[cpl], __ATOMIC_RELAXED);
    /* every term < above <= key: none is >= key (above is some exact8
     * key's key8, so key8 order is byte order here) */
    return above != UINT64_MAX && !memchr(key, 0, n < 8 ? n : 8) && key8(key, n) >= above;
}

void qr_tdict_note_below(const qr_tdict *d, uint32_t cpl, const char *key, size_t n)
{
    if (cpl == 0 || cpl > 255 || !exact8(key, n))
        return;
    uint64_t *c = len_cache(d);
    if (!c)
        return;
    uint64_t k = key8(key, n), was = __atomic_load_n(&c[cpl], __ATOMIC_RELAXED);
    while (k < was &&
           !__atomic_compare_exchange_n(&c[cpl], &was, k, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}
