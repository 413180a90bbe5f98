/* select.c - selections from an iterator (select.h).
 *
 * Two paths: a bitmap iterator's words are read in place (row vectors pop
 * bits with ctz; bitmaps are word copies, shifted when lo is not a multiple
 * of 64); any other iterator is walked with advance to the window's start
 * and next from there. Invariant: c->pos never decreases, and every match
 * below it has been handed out, so a walked iterator sits on a doc >= pos
 * or before its first doc.
 */
#include <string.h>

#include "match/select.h"
#include "util/popcount.h"

void qr_itsel_init(qr_itsel *c, qr_it *it, uint32_t rows)
{
    c->it = it;
    c->bits = qr_it_bitmap_bits(it);
    c->rows = rows;
    c->pos = 0;
}

/* Word w of the bitmap, 0 past its end. */
static inline uint64_t word_at(const qr_itsel *c, uint64_t w)
{
    uint64_t v = 0;
    if (w < ((uint64_t)c->rows + 63) / 64)
        memcpy(&v, c->bits + w * 8, 8); /* mmapped words need not be aligned */
    return v;
}

/* The iterator's first doc >= t (QR_NO_DOC at the end). */
static uint32_t seek(qr_it *it, uint32_t t)
{
    if (!it->started)
        return t == 0 ? qr_it_next(it) : qr_it_advance(it, t);
    if (it->doc == QR_NO_DOC || it->doc >= t)
        return it->doc;
    return qr_it_advance(it, t);
}

static int walk_failed(const qr_itsel *c, qr_err *e)
{
    if (!qr_it_failed(c->it))
        return 0;
    return qr_errf(e, QR_E_CORRUPT, "corrupt postings met while selecting rows");
}

int qr_it_select(qr_itsel *c, uint32_t lo, uint32_t hi, uint32_t *rows, uint32_t cap, uint32_t *n,
                 qr_err *e)
{
    *n = 0;
    uint32_t from = lo > c->pos ? lo : c->pos;
    if (from >= hi)
        return 1;
    uint32_t k = 0;
    int done = 1;
    if (c->bits) {
        uint32_t end = hi < c->rows ? hi : c->rows;
        uint64_t d = from;
        while (d < end) {
            uint64_t w = word_at(c, d >> 6) >> (d & 63);
            while (w) {
                uint64_t r = d + (uint64_t)__builtin_ctzll(w);
                if (r >= end)
                    break;
                if (k == cap) {
                    c->pos = (uint32_t)r;
                    *n = k;
                    return 0;
                }
                rows[k++] = (uint32_t)r;
                w &= w - 1;
            }
            d = (d | 63) + 1;
        }
        c->pos = hi;
        *n = k;
        return 1;
    }
    for (uint32_t d = seek(c->it, from); d < hi; d = qr_it_next(c->it)) {
        if (k == cap) {
            done = 0;
            c->pos = d; /* the iterator stays on d: the next call starts there */
            break;
        }
        rows[k++] = d;
    }
    if (done)
        c->pos = hi;
    *n = k;
    return walk_failed(c, e) ? -1 : done;
}

int64_t qr_it_select_bits(qr_itsel *c, uint32_t lo, uint32_t hi, uint64_t *words, qr_err *e)
{
    if (hi <= lo)
        return 0;
    uint32_t nw = (uint32_t)(((uint64_t)hi - lo + 63) / 64);
    memset(words, 0, (size_t)nw * 8);
    uint32_t from = lo > c->pos ? lo : c->pos;
    if (from >= hi)
        return 0;
    int64_t count = 0;
    if (c->bits) {
        uint64_t w0 = lo >> 6;
        unsigned sh = lo & 63;
        for (uint32_t k = 0; k < nw; k++) {
            uint64_t v = word_at(c, w0 + k) >> sh;
            if (sh)
                v |= word_at(c, w0 + k + 1) << (64 - sh);
            words[k] = v;
        }
        /* clear what lies before `from` (already handed out) and past hi */
        for (uint32_t r = lo; r < from && (r - lo) / 64 < nw;) {
            uint32_t i = (r - lo) / 64, b = (r - lo) & 63;
            uint32_t m = from - r < 64 - b ? from - r : 64 - b;
            words[i] &= ~(m == 64 ? ~0ull : ((1ull << m) - 1) << b);
            r += m;
        }
        uint32_t tail = (hi - lo) & 63;
        if (tail)
            words[nw - 1] &= (1ull << tail) - 1;
        count += qr_popcount_words(words, nw);
        c->pos = hi;
        return count;
    }
    for (uint32_t d = seek(c->it, from); d < hi; d = qr_it_next(c->it)) {
        words[(d - lo) >> 6] |= 1ull << ((d - lo) & 63);
        count++;
    }
    c->pos = hi;
    return walk_failed(c, e) ? -1 : count;
}
