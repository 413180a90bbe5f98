/* bitpack.h - fixed-width bit packing of unsigned integers (LSB-first).
 *
 * Values are packed back to back, `width` bits each (0..64), little-endian
 * bit order; a packed run of n values takes qr_bitpack_bytes(n, width) bytes.
 * Used by frame-of-reference integer blocks and dictionary codes.
 */
#ifndef QR_BITPACK_H
#define QR_BITPACK_H

#include <stddef.h>
#include <stdint.h>

static inline size_t qr_bitpack_bytes(size_t n, unsigned width)
{
    return (n * width + 7) / 8;
}

/* Smallest width that holds v (0 for v == 0). */
static inline unsigned qr_bits_needed(uint64_t v)
{
    return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
}

/* Pack n values into out (which must have qr_bitpack_bytes(n,width) bytes). */
void qr_bitpack(const uint64_t *in, size_t n, unsigned width, unsigned char *out);
/* Unpack n values; `in` must hold qr_bitpack_bytes(n,width) bytes and is
 * never read past them. Runs the kernel picked on first use (see below). */
void qr_bitunpack(const unsigned char *in, size_t n, unsigned width, uint64_t *out);
/* Read the i-th value of a packed run of `width` bits (random access). */
uint64_t qr_bitpack_get(const unsigned char *in, size_t i, unsigned width);

/* ---- the kernels behind qr_bitunpack (for tests and benchmarks) ----
 * The first call picks one, once, thread-safely: AVX2 (widths 1..56; others
 * go to the scalar code) when the CPU has it, else the scalar reference. The
 * environment variable QUARRY_NO_SIMD set to anything but "" or "0" forces
 * the scalar one. All kernels give identical results. */
typedef void (*qr_bitunpack_fn)(const unsigned char *in, size_t n, unsigned width, uint64_t *out);
typedef enum { QR_BITUNPACK_SCALAR, QR_BITUNPACK_AVX2 } qr_bitunpack_kind;
/* The kernel of that kind, callable directly whatever the dispatch chose;
 * NULL when this build or CPU lacks it (AVX2 off x86-64 or on older CPUs). */
qr_bitunpack_fn qr_bitunpack_kernel(qr_bitunpack_kind kind);
/* Name of the kernel qr_bitunpack runs: "scalar" or "avx2". */
const char *qr_bitunpack_active(void);

#endif
