/* buf.c - growable buffer and bounds-checked cursor (see buf.h). */
#include "util/buf.h"

#include <stdlib.h>

void qr_buf_init(qr_buf *b) { memset(b, 0, sizeof *b); }

void qr_buf_free(qr_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

unsigned char *qr_buf_reserve(qr_buf *b, size_t n)
{
    if (b->oom)
        return NULL;
    if (b->cap - b->len < n) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc - b->len < n) {
            if (nc > SIZE_MAX / 2) {
                b->oom = 1;
                return NULL;
            }
            nc *= 2;
        }
        unsigned char *np = realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return NULL;
        }
        b->p = np;
        b->cap = nc;
    }
    return b->p + b->len;
}

void qr_buf_put(qr_buf *b, const void *src, size_t n)
{
    if (!n)
        return;
    unsigned char *d = qr_buf_reserve(b, n);
    if (!d)
        return;
    memcpy(d, src, n);
    b->len += n;
}

void qr_buf_put_u8(qr_buf *b, uint8_t v) { qr_buf_put(b, &v, 1); }
void qr_buf_put_u16(qr_buf *b, uint16_t v) { qr_buf_put(b, &v, 2); }
void qr_buf_put_u32(qr_buf *b, uint32_t v) { qr_buf_put(b, &v, 4); }
void qr_buf_put_u64(qr_buf *b, uint64_t v) { qr_buf_put(b, &v, 8); }

void qr_buf_put_varint(qr_buf *b, uint64_t v)
{
    unsigned char *d = qr_buf_reserve(b, 10);
    if (!d)
        return;
    size_t i = 0;
    while (v >= 0x80) {
        d[i++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    d[i++] = (unsigned char)v;
    b->len += i;
}

void qr_buf_put_lenbytes(qr_buf *b, const void *src, size_t n)
{
    qr_buf_put_varint(b, n);
    qr_buf_put(b, src, n);
}

static int need(qr_rd *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return 0;
    }
    return 1;
}

uint8_t qr_rd_u8(qr_rd *r) { return need(r, 1) ? *r->p++ : 0; }

uint16_t qr_rd_u16(qr_rd *r)
{
    uint16_t v = 0;
    if (need(r, 2)) {
        memcpy(&v, r->p, 2);
        r->p += 2;
    }
    return v;
}

uint32_t qr_rd_u32(qr_rd *r)
{
    uint32_t v = 0;
    if (need(r, 4)) {
        memcpy(&v, r->p, 4);
        r->p += 4;
    }
    return v;
}

uint64_t qr_rd_u64(qr_rd *r)
{
    uint64_t v = 0;
    if (need(r, 8)) {
        memcpy(&v, r->p, 8);
        r->p += 8;
    }
    return v;
}

uint64_t qr_rd_varint_slow(qr_rd *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (!need(r, 1))
            return 0;
        unsigned char c = *r->p++;
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            return v;
    }
    r->bad = 1; /* more than 10 bytes: malformed */
    return 0;
}

