/* genutil.h - what the corpus generators of src/gen share: the chunk-seeded
 * PRNG, an integer alias sampler, text emitters for the hot path, canonical
 * JSON escaping and the chunked parallel NDJSON writer.
 *
 * The determinism contract of every dataset: rows are cut into chunks of
 * GU_CHUNK_ROWS; a chunk's PRNG is seeded from (seed, chunk index) only
 * (gu_rng_seed_chunk), so a row is a pure function of (seed, row) and the
 * output is byte-identical however chunks are split between threads.
 * Everything here is integer arithmetic (no libm), so the bytes are the same
 * on every platform.
 */
#ifndef QR_GENUTIL_H
#define QR_GENUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/buf.h"
#include "util/err.h"

#define GU_CHUNK_ROWS 16384u

/* ---------- PRNG: xoshiro256** seeded through splitmix64 ---------- */

typedef struct gu_rng {
    uint64_t s[4];
} gu_rng;

static inline uint64_t gu_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline uint64_t gu_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t gu_next(gu_rng *r)
{
    uint64_t *s = r->s;
    uint64_t v = gu_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = gu_rotl(s[3], 45);
    return v;
}

/* Uniform in [0, n) (Lemire's multiply on the high 32 bits; the bias is
 * negligible for the small n used here). */
static inline uint32_t gu_below(gu_rng *r, uint32_t n)
{
    return (uint32_t)(((gu_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Seed r for chunk `chunk` of the stream with this seed. */
void gu_rng_seed_chunk(gu_rng *r, uint64_t seed, uint64_t chunk);

/* ---------- alias sampler: Vose's method in integers ---------- */

/* One entry per outcome, threshold and alias side by side (one cache line
 * per draw). Sample: pick i uniformly, keep it when the low 32 bits of the
 * draw are below thr, else take `to`. */
typedef struct gu_alias {
    uint32_t thr, to;
} gu_alias;

/* Fill tab[0..n) for integer weights w with n * sum(w) < 2^63. Returns -1
 * when n == 0, the total weight is 0 or scratch memory is short. */
int gu_alias_build(const uint64_t *w, uint32_t n, gu_alias *tab);

static inline uint32_t gu_alias_pick(gu_rng *r, const gu_alias *tab, uint32_t n)
{
    uint64_t v = gu_next(r);
    uint32_t i = (uint32_t)(((v >> 32) * n) >> 32);
    return (uint32_t)v < tab[i].thr ? i : tab[i].to;
}

/* ---------- hot-path text emitters: write at p, return the new end ---------- */

static inline char *gu_put_lit(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}
#define GU_PUT(p, lit) gu_put_lit(p, lit, sizeof(lit) - 1)

static inline char *gu_put_hex(char *p, uint64_t v, int ndigits)
{
    static const char hexd[] = "0123456789abcdef";
    for (int i = ndigits - 1; i >= 0; i--) {
        p[i] = hexd[v & 15];
        v >>= 4;
    }
    return p + ndigits;
}

static inline char *gu_put_uint(char *p, uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* "YYYY-MM-DDTHH:MM:SSZ" (GU_RFC3339_LEN bytes) for seconds since 1970,
 * years 1970..9999. */
#define GU_RFC3339_LEN 20
char *gu_put_rfc3339(char *p, int64_t secs);

/* Canonical JSON string escaping, without the quotes, into out (room for 6n
 * bytes): '"' and '\\' escaped, control bytes as \b \f \n \r \t or \u00xx,
 * everything else raw. Returns the escaped length. */
size_t gu_json_escape(const char *s, size_t n, char *out);

/* ---------- the chunked parallel writer ---------- */

/* A dataset as the writer sees it. open() makes a generator for one thread
 * (NULL when out of memory); chunk() appends rows [first, last) of one chunk
 * (first is chunk-aligned, last - first <= chunk_rows) to b, setting b->oom
 * on allocation failure; close() frees the generator. */
typedef struct gu_dataset {
    const char *name;
    uint64_t chunk_rows;
    void *(*open)(uint64_t seed);
    void (*chunk)(void *gen, uint64_t first, uint64_t last, qr_buf *b);
    void (*close)(void *gen);
} gu_dataset;

/* Stream `rows` rows of ds to fd using `threads` threads (1..64) that
 * generate alternate chunks; chunks are written in order. Returns 0, or -1
 * with `e` filled (QR_E_ARGS, QR_E_NOMEM, QR_E_IO). */
int gu_write_ndjson(int fd, uint64_t rows, uint64_t seed, int threads, const gu_dataset *ds,
                    qr_err *e);

#endif
