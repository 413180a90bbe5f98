/* norms.c - SmallFloat-style length quantisation (see norms.h). */
#include "index/norms.h"

static uint32_t long_to_int4(uint64_t i)
{
    unsigned bits = i ? 64u - (unsigned)__builtin_clzll(i) : 0u;
    if (bits < 4)
        return (uint32_t)i; /* subnormal */
    unsigned shift = bits - 4;
    uint32_t enc = (uint32_t)(i >> shift) & 0x07u; /* implicit leading bit dropped */
    return enc | ((shift + 1) << 3);
}

static uint64_t int4_to_long(uint32_t i)
{
    uint64_t bits = i & 0x07u;
    int shift = (int)(i >> 3) - 1;
    return shift < 0 ? bits : (bits | 0x08u) << shift;
}

/* 255 - longToInt4(INT32_MAX) */
#define NUM_FREE_VALUES (255u - 231u)

uint8_t qr_norm_encode(uint32_t length)
{
    if (length < NUM_FREE_VALUES)
        return (uint8_t)length;
    uint32_t v = NUM_FREE_VALUES + long_to_int4(length - NUM_FREE_VALUES);
    return (uint8_t)(v > 255 ? 255 : v);
}

uint32_t qr_norm_decode(uint8_t code)
{
    if (code < NUM_FREE_VALUES)
        return code;
    uint64_t d = NUM_FREE_VALUES + int4_to_long(code - NUM_FREE_VALUES);
    return d > INT32_MAX ? INT32_MAX : (uint32_t)d;
}
