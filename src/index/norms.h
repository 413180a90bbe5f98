/* norms.h - one-byte field-length norms, Lucene's SmallFloat.intToByte4
 * scheme: lengths below 24 exactly, larger ones with a 4-bit mantissa
 * (relative error under 1/8), so BM25 length normalisation matches Lucene. */
#ifndef QR_NORMS_H
#define QR_NORMS_H

#include <stdint.h>

uint8_t qr_norm_encode(uint32_t length);
uint32_t qr_norm_decode(uint8_t code);

#endif
