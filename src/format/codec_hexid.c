/* codec_hexid.c - ENC_HEXID pages: trace and span ids stored as bytes.
 *
 * Raw page: [2-bit state per row, packed LSB-first][per row by state:
 * 0 NULL: nothing; 1 empty string: nothing; 2 canonical id: `width` bytes;
 * 3 anything else: varint length + the text]. Canonical = lowercase hex of
 * exactly 2*width characters, so decoding gives back the same text.
 */
#include <pthread.h>

#include "format/codec.h"

/* A hex digit's value, or 0x80 for any other byte. Looked up, not
 * compared: ids are random hex, so a digit-or-letter branch per character
 * mispredicts about a third of the time (it was most of a flush's cost of
 * encoding ids). */
static unsigned char hexval_tab[256];
static pthread_once_t hexval_once = PTHREAD_ONCE_INIT;

static void hexval_init(void)
{
    for (int c = 0; c < 256; c++)
        hexval_tab[c] = c >= '0' && c <= '9'   ? (unsigned char)(c - '0')
                        : c >= 'a' && c <= 'f' ? (unsigned char)(c - 'a' + 10)
                                               : 0x80;
}

static int is_canonical(const qr_slice *s, unsigned width)
{
    if (s->n != 2 * width)
        return 0;
    unsigned bad = 0;
    for (size_t i = 0; i < s->n; i++)
        bad |= hexval_tab[(unsigned char)s->p[i]];
    return !(bad & 0x80);
}

static unsigned state_of(const qr_slice *s, unsigned width)
{
    if (!s->p)
        return 0;
    if (s->n == 0)
        return 1;
    return is_canonical(s, width) ? 2 : 3;
}

void enc_hexid_page(qr_buf *out, const qr_slice *v, uint32_t n, unsigned width)
{
    pthread_once(&hexval_once, hexval_init);
    size_t nb = (n * 2 + 7) / 8;
    size_t at = out->len;
    unsigned char *st = qr_buf_reserve(out, nb);
    if (!st)
        return;
    memset(st, 0, nb);
    out->len += nb;
    for (uint32_t i = 0; i < n; i++) {
        /* the texts lie where their rows were parsed, in the rows' arrival
         * order, and are visited in the segment's order: a cache miss each
         * unless fetched ahead */
        if (i + 16 < n)
            __builtin_prefetch(v[i + 16].p);
        unsigned s = state_of(&v[i], width);
        out->p[at + (i >> 2)] |= (unsigned char)(s << ((i & 3) * 2));
        if (s == 2) {
            unsigned char *d = qr_buf_reserve(out, width);
            if (!d)
                return;
            for (unsigned k = 0; k < width; k++)
                d[k] = (unsigned char)(hexval_tab[(unsigned char)v[i].p[2 * k]] << 4 |
                                       hexval_tab[(unsigned char)v[i].p[2 * k + 1]]);
            out->len += width;
        } else if (s == 3) {
            qr_buf_put_lenbytes(out, v[i].p, v[i].n);
        }
    }
}

int dec_hexid_page(const unsigned char *p, size_t len, uint32_t n, unsigned width, qr_buf *text,
                   qr_slice *v, const char **why)
{
    static const char hexd[] = "0123456789abcdef";
    qr_rd r;
    qr_rd_init(&r, p, len);
    const unsigned char *st = qr_rd_bytes(&r, (n * 2 + 7) / 8);
    if (!st) {
        *why = "id page truncated in state bits";
        return -1;
    }
    /* first pass: sizes, so text never moves while slices point into it */
    qr_rd r2 = r;
    size_t need = 0;
    for (uint32_t i = 0; i < n; i++) {
        unsigned s = (st[i >> 2] >> ((i & 3) * 2)) & 3;
        if (s == 2) {
            if (!qr_rd_bytes(&r2, width))
                break;
            need += 2 * width;
        } else if (s == 3) {
            uint64_t l = qr_rd_varint(&r2);
            if (r2.bad || l > len || !qr_rd_bytes(&r2, (size_t)l)) {
                r2.bad = 1;
                break;
            }
            need += (size_t)l;
        }
    }
    if (r2.bad || qr_rd_left(&r2) != 0) {
        *why = "id page length does not match its contents";
        return -1;
    }
    qr_buf_clear(text);
    if (!qr_buf_reserve(text, need + 1)) {
        *why = "out of memory";
        return -1;
    }
    static const char empty[1] = {0};
    for (uint32_t i = 0; i < n; i++) {
        unsigned s = (st[i >> 2] >> ((i & 3) * 2)) & 3;
        char *d = (char *)text->p + text->len;
        if (s == 0) {
            v[i].p = NULL;
            v[i].n = 0;
        } else if (s == 1) {
            v[i].p = empty;
            v[i].n = 0;
        } else if (s == 2) {
            const unsigned char *b = qr_rd_bytes(&r, width);
            for (unsigned k = 0; k < width; k++) {
                d[2 * k] = hexd[b[k] >> 4];
                d[2 * k + 1] = hexd[b[k] & 15];
            }
            v[i].p = d;
            v[i].n = 2 * width;
            text->len += 2 * width;
        } else {
            uint64_t l = qr_rd_varint(&r);
            const unsigned char *b = qr_rd_bytes(&r, (size_t)l);
            memcpy(d, b, (size_t)l);
            v[i].p = d;
            v[i].n = (size_t)l;
            text->len += (size_t)l;
        }
    }
    return 0;
}

int hexid_page_index(const unsigned char *p, size_t len, uint32_t n, unsigned width,
                     uint32_t *off, const char **why)
{
    qr_rd r;
    qr_rd_init(&r, p, len);
    const unsigned char *st = qr_rd_bytes(&r, (n * 2 + 7) / 8);
    if (!st || len > UINT32_MAX) {
        *why = "id page truncated in state bits";
        return -1;
    }
    for (uint32_t i = 0; i < n && !r.bad; i++) {
        unsigned s = (st[i >> 2] >> ((i & 3) * 2)) & 3;
        off[i] = (uint32_t)(r.p - p);
        if (s == 2) {
            if (!qr_rd_bytes(&r, width))
                r.bad = 1;
        } else if (s == 3) {
            uint64_t l = qr_rd_varint(&r);
            if (r.bad || l > len || !qr_rd_bytes(&r, (size_t)l))
                r.bad = 1;
        }
    }
    if (r.bad || qr_rd_left(&r) != 0) {
        *why = "id page length does not match its contents";
        return -1;
    }
    return 0;
}

int dec_hexid_at(const unsigned char *p, size_t len, unsigned width, uint32_t row,
                 const uint32_t *off, qr_buf *text, qr_slice *v)
{
    static const char hexd[] = "0123456789abcdef";
    static const char empty[1] = {0};
    unsigned s = (p[row >> 2] >> ((row & 3) * 2)) & 3;
    qr_buf_clear(text);
    if (s < 2) {
        v->p = s ? empty : NULL;
        v->n = 0;
        return 0;
    }
    qr_rd r;
    qr_rd_init(&r, p + off[row], len - off[row]); /* bounds checked by hexid_page_index */
    size_t l = s == 2 ? width : (size_t)qr_rd_varint(&r);
    const unsigned char *b = qr_rd_bytes(&r, l);
    char *d = (char *)qr_buf_reserve(text, 2 * l + 1);
    if (!b || !d)
        return -1;
    if (s == 2) {
        for (size_t k = 0; k < l; k++) {
            d[2 * k] = hexd[b[k] >> 4];
            d[2 * k + 1] = hexd[b[k] & 15];
        }
        l *= 2;
    } else {
        memcpy(d, b, l);
    }
    text->len = l;
    v->p = d;
    v->n = l;
    return 0;
}
