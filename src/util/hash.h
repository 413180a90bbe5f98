/* hash.h - checksums and hashing, backed by xxHash (XXH3).
 * qr_checksum32 is the block checksum of every on-disk structure.
 *
 * xxHash is compiled in, inline (XXH_INLINE_ALL, the mode its header
 * offers), rather than called in libxxhash: libpg_query exports XXH3
 * symbols of its own (0.8.0), and our calls bound to those or to
 * libxxhash's depending on link order. Inline, the functions are static
 * (XXH_INLINE_ names) and the code is the header's, whatever is linked.
 * The hashes are the same (XXH3 is stable since 0.8.0): segments written
 * before and after are byte-identical. */
#ifndef QR_HASH_H
#define QR_HASH_H

#include <stddef.h>
#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static inline uint32_t qr_checksum32(const void *p, size_t n)
{
    return (uint32_t)XXH3_64bits(p, n);
}
static inline uint64_t qr_hash64(const void *p, size_t n) { return XXH3_64bits(p, n); }

#endif
