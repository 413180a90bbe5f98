/* hash.h - checksums and hashing, backed by xxHash (XXH3).
 * qr_checksum32 is the block checksum of every on-disk structure. */
#ifndef QR_HASH_H
#define QR_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <xxhash.h>

static inline uint32_t qr_checksum32(const void *p, size_t n)
{
    return (uint32_t)XXH3_64bits(p, n);
}
static inline uint64_t qr_hash64(const void *p, size_t n) { return XXH3_64bits(p, n); }

#endif
