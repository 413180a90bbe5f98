/* bitpack.c - scalar bit packing (see bitpack.h). The layout is a plain
 * LSB-first bit stream so random access needs only the value index. */
#include "util/bitpack.h"

#include <string.h>

void qr_bitpack(const uint64_t *in, size_t n, unsigned width, unsigned char *out)
{
    size_t nbytes = qr_bitpack_bytes(n, width);
    memset(out, 0, nbytes);
    if (!width)
        return;
    uint64_t mask = width == 64 ? ~0ULL : ((1ULL << width) - 1);
    size_t bit = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = in[i] & mask;
        size_t byte = bit >> 3;
        unsigned sh = bit & 7;
        /* write up to 72 bits across 9 bytes */
        unsigned done = 0;
        out[byte] |= (unsigned char)(v << sh);
        done = 8 - sh;
        byte++;
        while (done < width) {
            out[byte++] |= (unsigned char)(v >> done);
            done += 8;
        }
        bit += width;
    }
}

uint64_t qr_bitpack_get(const unsigned char *in, size_t i, unsigned width)
{
    if (!width)
        return 0;
    size_t bit = i * width;
    size_t byte = bit >> 3;
    unsigned sh = bit & 7;
    size_t need = (sh + width + 7) / 8; /* bytes spanned, <= 9 */
    uint64_t lo = 0;
    unsigned char tmp[16] = {0};
    memcpy(tmp, in + byte, need);
    memcpy(&lo, tmp, 8);
    uint64_t v = lo >> sh;
    if (sh + width > 64)
        v |= (uint64_t)tmp[8] << (64 - sh);
    return width == 64 ? v : v & ((1ULL << width) - 1);
}

void qr_bitunpack(const unsigned char *in, size_t n, unsigned width, uint64_t *out)
{
    if (!width) {
        memset(out, 0, n * sizeof *out);
        return;
    }
    size_t full = qr_bitpack_bytes(n, width);
    uint64_t mask = width == 64 ? ~0ULL : ((1ULL << width) - 1);
    size_t bit = 0;
    for (size_t i = 0; i < n; i++, bit += width) {
        size_t byte = bit >> 3;
        unsigned sh = bit & 7;
        if (byte + 9 <= full) {
            uint64_t lo;
            memcpy(&lo, in + byte, 8);
            uint64_t v = lo >> sh;
            if (sh + width > 64)
                v |= (uint64_t)in[byte + 8] << (64 - sh);
            out[i] = v & mask;
        } else {
            out[i] = qr_bitpack_get(in, i, width);
        }
    }
}
