/* termdict.c - front-coded term dictionary writer and reader (see
 * termdict.h). The sparse index (one term in 64) is small enough to keep in
 * arrays; a lookup binary-searches it and scans one block. */
#include "index/termdict.h"

#include <stdlib.h>
#include <string.h>

void qr_tdictw_init(qr_tdictw *w)
{
    memset(w, 0, sizeof *w);
    qr_buf_init(&w->dict);
    qr_buf_init(&w->index);
    qr_buf_put_u32(&w->index, 0); /* block count, patched */
    qr_buf_put_u64(&w->index, 0); /* term count, patched */
}

void qr_tdictw_free(qr_tdictw *w)
{
    qr_buf_free(&w->dict);
    qr_buf_free(&w->index);
}

/* Store the finished block's byte-class mask in its index entry. */
static void patch_mask(qr_tdictw *w)
{
    if (w->nblocks && !w->index.oom)
        qr_store_u64(w->index.p + w->mask_at, w->mask);
    w->mask = 0;
}

int qr_tdictw_add(qr_tdictw *w, const char *term, size_t n, const void *info, size_t info_len,
                  uint64_t post_off, uint64_t pos_off)
{
    if (n > QR_MAX_TERM)
        return -1;
    size_t shared = 0;
    if (w->in_block == QR_TERMS_PER_BLOCK || w->nterms == 0) {
        patch_mask(w);
        w->in_block = 0;
        w->nblocks++;
        qr_buf_put_u32(&w->index, (uint32_t)w->dict.len);
        qr_buf_put_varint(&w->index, post_off);
        qr_buf_put_varint(&w->index, pos_off);
        qr_buf_put_lenbytes(&w->index, term, n);
        w->mask_at = w->index.len;
        qr_buf_put_u64(&w->index, 0); /* the block's mask, patched */
    } else {
        size_t m = n < w->prev_len ? n : w->prev_len;
        while (shared < m && w->prev[shared] == term[shared])
            shared++;
    }
    qr_buf_put_varint(&w->dict, shared);
    qr_buf_put_varint(&w->dict, n - shared);
    qr_buf_put(&w->dict, term + shared, n - shared);
    qr_buf_put_varint(&w->dict, info_len); /* lets readers skip unneeded infos */
    qr_buf_put(&w->dict, info, info_len);
    for (size_t i = 0; i < n; i++)
        w->mask |= 1ull << qr_tdict_byte_class((unsigned char)term[i]);
    memcpy(w->prev, term, n);
    w->prev_len = n;
    w->in_block++;
    w->nterms++;
    return w->dict.oom || w->index.oom ? -1 : 0;
}

int qr_tdictw_finish(qr_tdictw *w)
{
    patch_mask(w);
    if (w->index.oom)
        return -1;
    qr_store_u32(w->index.p, w->nblocks);
    qr_store_u64(w->index.p + 4, w->nterms);
    return 0;
}

int qr_tdict_open(qr_tdict *d, const unsigned char *index, size_t index_len,
                  const unsigned char *dict, size_t dict_len, int has_freqs, int has_pos,
                  const char *what, qr_err *e)
{
    memset(d, 0, sizeof *d);
    d->dict = dict;
    d->dict_len = dict_len;
    d->has_freqs = has_freqs;
    d->has_pos = has_pos;
    qr_rd r;
    qr_rd_init(&r, index, index_len);
    uint32_t nb = qr_rd_u32(&r);
    d->nterms = qr_rd_u64(&r);
    if (r.bad || nb > index_len / 15 || d->nterms > (uint64_t)nb * QR_TERMS_PER_BLOCK ||
        (nb && d->nterms <= (uint64_t)(nb - 1) * QR_TERMS_PER_BLOCK))
        return qr_errf(e, QR_E_CORRUPT, "%s: corrupt term index header", what);
    d->nblocks = nb;
    d->blk_off = malloc(sizeof *d->blk_off * (nb ? nb : 1));
    d->blk_first = malloc(sizeof *d->blk_first * (nb ? nb : 1));
    d->blk_post = malloc(sizeof *d->blk_post * (nb ? nb : 1));
    d->blk_pos = malloc(sizeof *d->blk_pos * (nb ? nb : 1));
    d->blk_mask = malloc(sizeof *d->blk_mask * (nb ? nb : 1));
    if (!d->blk_off || !d->blk_first || !d->blk_post || !d->blk_pos || !d->blk_mask) {
        qr_tdict_close(d);
        return qr_errf(e, QR_E_NOMEM, "%s: out of memory", what);
    }
    for (uint32_t i = 0; i < nb; i++) {
        d->blk_off[i] = qr_rd_u32(&r);
        d->blk_post[i] = qr_rd_varint(&r);
        d->blk_pos[i] = qr_rd_varint(&r);
        uint64_t l = qr_rd_varint(&r);
        const unsigned char *t = l <= QR_MAX_TERM ? qr_rd_bytes(&r, (size_t)l) : NULL;
        d->blk_mask[i] = qr_rd_u64(&r);
        if (r.bad || !t || d->blk_off[i] >= dict_len || (i && d->blk_off[i] <= d->blk_off[i - 1])) {
            qr_tdict_close(d);
            return qr_errf(e, QR_E_CORRUPT, "%s: corrupt term index entry %u", what, i);
        }
        d->blk_first[i].p = (const char *)t;
        d->blk_first[i].n = (size_t)l;
    }
    if (qr_rd_left(&r) != 0) {
        qr_tdict_close(d);
        return qr_errf(e, QR_E_CORRUPT, "%s: trailing bytes in term index", what);
    }
    return 0;
}

void qr_tdict_close(qr_tdict *d)
{
    free(d->blk_off);
    free(d->blk_first);
    free(d->blk_post);
    free(d->blk_pos);
    free(d->blk_mask);
    d->blk_mask = NULL;
    d->blk_off = NULL;
    d->blk_first = NULL;
    d->blk_post = d->blk_pos = NULL;
}

static int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
    size_t m = an < bn ? an : bn;
    int c = memcmp(a, b, m);
    if (c)
        return c;
    return an < bn ? -1 : an > bn;
}

static void iter_at_block(const qr_tdict *d, qr_titer *it, uint32_t blk)
{
    it->d = d;
    it->blk = blk;
    it->in_blk = 0;
    it->len = 0;
    it->corrupt = 0;
    it->post_run = d->blk_post[blk];
    it->pos_run = d->blk_pos[blk];
    size_t end = blk + 1 < d->nblocks ? d->blk_off[blk + 1] : d->dict_len;
    qr_rd_init(&it->r, d->dict + d->blk_off[blk], end - d->blk_off[blk]);
}

/* Read the next entry of the current block (1), or 0 when the block ends. */
static int read_entry(qr_titer *it)
{
    if (qr_rd_left(&it->r) == 0 || it->in_blk == QR_TERMS_PER_BLOCK)
        return 0;
    uint64_t shared = qr_rd_varint(&it->r), suf = qr_rd_varint(&it->r);
    if (it->r.bad || shared > it->len || shared + suf > QR_MAX_TERM ||
        (it->in_blk == 0 && shared != 0))
        goto bad;
    const unsigned char *p = qr_rd_bytes(&it->r, (size_t)suf);
    if (!p)
        goto bad;
    if (suf <= 16 && qr_rd_left(&it->r) + (size_t)suf >= 16)
        memcpy(it->term + shared, p, 16); /* fixed size: two moves, no call */
    else
        memcpy(it->term + shared, p, (size_t)suf);
    it->len = (size_t)(shared + suf);
    it->shared = (size_t)shared;
    uint64_t il = qr_rd_varint(&it->r);
    const unsigned char *ip = qr_rd_bytes(&it->r, (size_t)il);
    if (!ip || il > 1024)
        goto bad;
    it->info_p = ip; /* decoded on demand: qr_titer_info */
    it->info_len = (size_t)il;
    {
        /* the list lengths lead the info: keep the running offsets */
        qr_rd li;
        qr_rd_init(&li, ip, (size_t)il);
        uint64_t pl = qr_rd_varint(&li), ql = it->d->has_pos ? qr_rd_varint(&li) : 0;
        if (li.bad || pl > (1ull << 40) || ql > (1ull << 40))
            goto bad;
        it->cur_post = it->post_run;
        it->cur_pos = it->pos_run;
        it->post_run += pl;
        it->pos_run += ql;
    }
    it->in_blk++;
    return 1;
bad:
    it->corrupt = 1;
    return -1;
}

static int corrupt_err(qr_err *e)
{
    return qr_errf(e, QR_E_CORRUPT, "corrupt term dictionary entry");
}

int qr_titer_next(qr_titer *it, qr_err *e)
{
    for (;;) {
        int r = read_entry(it);
        if (r < 0)
            return corrupt_err(e);
        if (r == 1)
            return 1;
        if (qr_rd_left(&it->r) != 0 && it->in_blk == QR_TERMS_PER_BLOCK) {
            it->corrupt = 1;
            return corrupt_err(e);
        }
        if (it->blk + 1 >= it->d->nblocks)
            return 0;
        iter_at_block(it->d, it, it->blk + 1);
        it->shared = 0;
    }
}

/* Last block whose first term <= key (0 if key is before every term). */
static uint32_t find_block(const qr_tdict *d, const char *key, size_t n)
{
    uint32_t lo = 0, hi = d->nblocks;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cmp_bytes(d->blk_first[mid].p, d->blk_first[mid].n, key, n) <= 0)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Step `it` to the first term >= key. Once a term is known to be below the
 * key, sharing m bytes with it, the next term's shared-prefix length alone
 * decides most steps (as Lucene's terms enum does): sharing more than m
 * bytes it is still below, fewer and it is above; only at exactly m are
 * bytes compared, from m on. A block's first entry stores no shared prefix,
 * so it is compared in full. `below`: the current term is below the key. */
static int scan_to(qr_titer *it, const char *key, size_t n, int below, qr_err *e)
{
    size_t m = 0;
    if (below)
        while (m < it->len && m < n && it->term[m] == key[m])
            m++;
    for (;;) {
        int r = qr_titer_next(it, e);
        if (r <= 0)
            return r;
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

int qr_tdict_seek(const qr_tdict *d, qr_titer *it, const char *key, size_t n, qr_err *e)
{
    memset(it, 0, offsetof(qr_titer, term));
    if (d->nblocks == 0)
        return 0;
    iter_at_block(d, it, find_block(d, key, n));
    return scan_to(it, key, n, 0, e);
}

/* First block > from whose first term > key, by galloping then binary
 * search: a forward seek usually lands a block or two ahead. */
static uint32_t gallop_block(const qr_tdict *d, uint32_t from, const char *key, size_t n)
{
    uint32_t lo = from, step = 1, hi = from;
    while (hi < d->nblocks && cmp_bytes(d->blk_first[hi].p, d->blk_first[hi].n, key, n) <= 0) {
        lo = hi + 1;
        hi = hi + step;
        step *= 2;
    }
    if (hi > d->nblocks)
        hi = d->nblocks;
    while (lo < hi) { /* first block in [lo, hi) whose first term > key */
        uint32_t mid = lo + (hi - lo) / 2;
        if (cmp_bytes(d->blk_first[mid].p, d->blk_first[mid].n, key, n) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int qr_titer_seek(qr_titer *it, const char *key, size_t n, qr_err *e)
{
    const qr_tdict *d = it->d;
    if (!d || it->corrupt || cmp_bytes(it->term, it->len, key, n) >= 0)
        return d ? qr_tdict_seek(d, it, key, n, e) : 0;
    /* key is ahead: if it is past the next block's first term, jump to the
     * last block starting at or before it, else scan on from here */
    uint32_t b = gallop_block(d, it->blk + 1, key, n);
    if (b > it->blk + 1) {
        iter_at_block(d, it, b - 1);
        return scan_to(it, key, n, 0, e);
    }
    return scan_to(it, key, n, 1, e);
}

int qr_tdict_seek_block(const qr_tdict *d, qr_titer *it, uint32_t b, qr_err *e)
{
    memset(it, 0, offsetof(qr_titer, term));
    if (b >= d->nblocks)
        return 0;
    iter_at_block(d, it, b);
    int r = qr_titer_next(it, e);
    it->shared = 0;
    return r;
}

int qr_titer_info(qr_titer *it, qr_terminfo *info, qr_err *e)
{
    qr_rd r;
    qr_rd_init(&r, it->info_p, it->info_len);
    if (qr_terminfo_read(&r, it->d->has_freqs, it->d->has_pos, it->cur_post, it->cur_pos, info) !=
            0 ||
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
