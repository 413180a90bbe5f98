/* buf.h - growable byte buffer (writer side) and bounds-checked cursor
 * (reader side) for little-endian fixed-width and LEB128 varint fields.
 *
 * qr_buf owns its heap memory (qr_buf_free). A failed allocation sets
 * `oom`; writers keep going as no-ops so a whole encoder can check once.
 * qr_rd never reads past its end: a short read sets `bad` and returns 0, so
 * decoders of untrusted files check `bad` after a run of reads.
 */
#ifndef QR_BUF_H
#define QR_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct qr_buf {
    unsigned char *p;
    size_t len, cap;
    int oom;
} qr_buf;

void qr_buf_init(qr_buf *b);
void qr_buf_free(qr_buf *b);
/* Make room for n more bytes; returns pointer to p+len or NULL (oom set). */
unsigned char *qr_buf_reserve(qr_buf *b, size_t n);
void qr_buf_put(qr_buf *b, const void *src, size_t n);
void qr_buf_put_u8(qr_buf *b, uint8_t v);
void qr_buf_put_u16(qr_buf *b, uint16_t v);
void qr_buf_put_u32(qr_buf *b, uint32_t v);
void qr_buf_put_u64(qr_buf *b, uint64_t v);
void qr_buf_put_varint(qr_buf *b, uint64_t v);
/* varint length followed by the bytes */
void qr_buf_put_lenbytes(qr_buf *b, const void *src, size_t n);

static inline void qr_buf_clear(qr_buf *b) { b->len = 0; }

static inline void qr_store_u32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void qr_store_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint32_t qr_load_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t qr_load_u64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

typedef struct qr_rd {
    const unsigned char *p, *end;
    int bad; /* set once any read ran past the end or a varint was malformed */
} qr_rd;

static inline void qr_rd_init(qr_rd *r, const void *p, size_t n)
{
    r->p = p;
    r->end = (const unsigned char *)p + n;
    r->bad = 0;
}
static inline size_t qr_rd_left(const qr_rd *r) { return (size_t)(r->end - r->p); }
uint8_t qr_rd_u8(qr_rd *r);
uint16_t qr_rd_u16(qr_rd *r);
uint32_t qr_rd_u32(qr_rd *r);
uint64_t qr_rd_u64(qr_rd *r);
uint64_t qr_rd_varint_slow(qr_rd *r);
/* Inline for the one-byte case, which is most of a term dictionary's and a
 * positions list's varints; longer ones and errors take the call. */
static inline uint64_t qr_rd_varint(qr_rd *r)
{
    if (__builtin_expect(!r->bad && r->p < r->end && *r->p < 0x80, 1))
        return *r->p++;
    return qr_rd_varint_slow(r);
}
/* Returns a pointer to the next n bytes and skips them, or NULL (bad set). */
static inline const unsigned char *qr_rd_bytes(qr_rd *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return NULL;
    }
    const unsigned char *p = r->p;
    r->p += n;
    return p;
}

#endif
