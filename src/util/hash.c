/* hash.c - XXH3 of long inputs through libxxhash's x86 dispatcher, which
 * chooses the widest vector kernel the CPU has when first called (see
 * hash.h for why short inputs stay inline). Kept out of hash.h: the
 * dispatcher's header declares library functions, which XXH_INLINE_ALL
 * would turn into static ones. */
#include <stddef.h>
#include <stdint.h>

#include <xxh_x86dispatch.h>

#include "util/hash.h"

uint64_t qr_hash_long(const void *p, size_t n) { return XXH3_64bits_dispatch(p, n); }
