/* strmap.h - open-addressing hash map from byte strings to uint32 ids.
 *
 * Keys are not copied: the caller keeps them alive as long as the map.
 * Ids are assigned densely in insertion order (0, 1, 2, ...), so the map
 * doubles as a distinct-value collector.
 */
#ifndef QR_STRMAP_H
#define QR_STRMAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/json.h"

typedef struct qr_strmap {
    uint32_t *slots;   /* id + 1, 0 = empty */
    uint64_t *hashes;  /* per id */
    qr_slice *keys;    /* per id */
    uint32_t count, cap_ids, mask;
    uint64_t key_bytes; /* sum of key lengths */
} qr_strmap;

void qr_strmap_init(qr_strmap *m);
void qr_strmap_free(qr_strmap *m);
/* Returns the id of key (inserting it if new), or -1 when out of memory.
 * *added is set to 1 when the key was new. */
int64_t qr_strmap_put(qr_strmap *m, const char *p, size_t n, int *added);
/* Returns the id, or -1 when absent. */
int64_t qr_strmap_get(const qr_strmap *m, const char *p, size_t n);
/* The same two, given the key's hash h = qr_strmap_hash(p, n): a caller
 * that looks a key up and then inserts it hashes it once. */
uint64_t qr_strmap_hash(const char *p, size_t n);
int64_t qr_strmap_put_h(qr_strmap *m, const char *p, size_t n, uint64_t h, int *added);
int64_t qr_strmap_get_h(const qr_strmap *m, const char *p, size_t n, uint64_t h);

#endif
