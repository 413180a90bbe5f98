/* hash.h - checksums and hashing, backed by xxHash (XXH3).
 * qr_checksum32 is the block checksum of every on-disk structure.
 *
 * Short inputs are hashed inline: xxHash compiled in (XXH_INLINE_ALL, the
 * mode its header offers), not called in libxxhash, because libpg_query
 * exports XXH3 symbols of its own (0.8.0) and our calls would bind to
 * those or to libxxhash's depending on link order; inline, the functions
 * are static (XXH_INLINE_ names). Long inputs (the 4 KiB chunks a query
 * verifies, the blocks a writer sums) go to libxxhash's x86 dispatcher
 * (hash.c: XXH3_64bits_dispatch, a name only libxxhash has), which picks
 * the AVX2 or AVX-512 kernel the CPU has at run time: a 4 KiB chunk in
 * cache hashes in ~170 ns against ~400 with the inline SSE2 code. The
 * hashes are the same whichever code computes them (XXH3 is stable since
 * 0.8.0; tests/util/test_hash.c compares the two on every length and
 * alignment): segments written before and after are byte-identical. */
#ifndef QR_HASH_H
#define QR_HASH_H

#include <stddef.h>
#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Inputs longer than this take the dispatched kernel (XXH3's own
 * boundary: up to 240 bytes it has no vector loop). */
#define QR_HASH_LONG 240u

/* XXH3 of a long input by libxxhash's run-time dispatch (hash.c). */
uint64_t qr_hash_long(const void *p, size_t n);

static inline uint64_t qr_hash64(const void *p, size_t n)
{
    return n > QR_HASH_LONG ? qr_hash_long(p, n) : XXH3_64bits(p, n);
}
static inline uint32_t qr_checksum32(const void *p, size_t n) { return (uint32_t)qr_hash64(p, n); }

#endif
