/* bitpack.c - micro-benchmark of the bit-unpacking kernels (util/bitpack):
 * values per second of the scalar and AVX2 kernels, called directly, for
 * widths 1..32 (or the range given) at n values per call (default 128, a
 * postings block). Input: 256 packed blocks of random values, so it stays
 * in L2 as hot postings do. Prints a Markdown table; best of 7 timed runs.
 *
 *   make build/rel/bench/bitpack && build/rel/bench/bitpack [N [WMIN WMAX]]
 *
 * The end-to-end effect on queries is measured by bench/bitpack.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/bitpack.h"

#define BLOCKS 256

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Values per second of kernel f over the packed blocks. */
static double rate(qr_bitunpack_fn f, const unsigned char *packed, size_t stride, size_t n,
                   unsigned w, uint64_t *out, uint64_t *sink)
{
    double best = 0;
    for (int run = 0; run < 7; run++) {
        size_t calls = 0;
        double t0 = now(), t;
        do {
            for (size_t b = 0; b < BLOCKS; b++) {
                f(packed + b * stride, n, w, out);
                *sink += out[b % n];
            }
            calls += BLOCKS;
        } while ((t = now() - t0) < 0.02);
        double r = (double)calls * (double)n / t;
        if (r > best)
            best = r;
    }
    return best;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 128;
    unsigned wmin = argc > 3 ? (unsigned)atoi(argv[2]) : 1;
    unsigned wmax = argc > 3 ? (unsigned)atoi(argv[3]) : 32;
    if (n == 0 || wmin > wmax || wmax > 64) {
        fprintf(stderr, "usage: bitpack [N [WMIN WMAX]] (N > 0, widths 0..64)\n");
        return 2;
    }
    qr_bitunpack_fn scalar = qr_bitunpack_kernel(QR_BITUNPACK_SCALAR);
    qr_bitunpack_fn avx2 = qr_bitunpack_kernel(QR_BITUNPACK_AVX2);
    uint64_t *vals = malloc(n * sizeof *vals), *out = malloc(n * sizeof *out);
    size_t stride = qr_bitpack_bytes(n, 64);
    unsigned char *packed = malloc(BLOCKS * stride);
    if (!vals || !out || !packed) {
        free(vals);
        free(out);
        free(packed);
        return 1;
    }
    uint64_t sink = 0;
    printf("bit unpacking, %zu values per call, Mvalues/s (best of 7)%s\n\n", n,
           avx2 ? "" : "; no AVX2 on this CPU");
    printf("| width | scalar | avx2 | speedup |\n|---:|---:|---:|---:|\n");
    double gs = 0, ga = 0;
    for (unsigned w = wmin; w <= wmax; w++) {
        uint64_t mask = w == 64 ? ~0ULL : (1ULL << w) - 1;
        for (size_t b = 0; b < BLOCKS; b++) {
            for (size_t i = 0; i < n; i++)
                vals[i] = rnd() & mask;
            qr_bitpack(vals, n, w, packed + b * stride);
        }
        double s = rate(scalar, packed, stride, n, w, out, &sink);
        double a = avx2 ? rate(avx2, packed, stride, n, w, out, &sink) : 0;
        printf("| %u | %.0f | %.0f | %.2fx |\n", w, s / 1e6, a / 1e6, a / s);
        gs += s;
        ga += a;
    }
    unsigned nw = wmax - wmin + 1;
    printf("| mean | %.0f | %.0f | %.2fx |\n", gs / nw / 1e6, ga / nw / 1e6, ga / gs);
    fprintf(stderr, "(checksum %llu)\n", (unsigned long long)sink);
    free(vals);
    free(out);
    free(packed);
    return 0;
}
