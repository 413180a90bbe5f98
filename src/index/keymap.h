/* keymap.h - the keys that several keyword fields share. For a set of
 * fields (one keyword index of each segment of a table, or of two tables),
 * which terms more than one of them holds, each such key given a shared
 * id. What a join on the fields counts with (exec/termjoin.c): per
 * segment, matching rows are counted per key by ordinal (kwords.c); a key
 * no other field holds is settled where it is, the others' counts are
 * summed by shared id, and no term is read per query. (Elasticsearch's
 * global ordinals, for the keys that need one.)
 *
 * A map is built from the fields' dictionaries by two walks of each, in
 * parallel over the fields: the first marks each term's 64-bit hash in
 * two bit filters (seen; seen again), 16 bits or more a term; the second
 * lists the terms whose bit was seen again, with their bytes, and a k-way
 * merge of those sorted lists compares them whole: a term that two or more
 * fields hold gets a shared id in each of them. What is kept is sid[o] per
 * member field, per term ordinal: its shared id, or QR_KM_ONE for a term
 * of that field alone (4 bytes a term).
 *
 * A map answers for any subset of its fields: a key two fields of the
 * subset hold is shared in the map; a key shared in the map that the
 * subset holds once is summed over that one field, the same count. Fields
 * are told apart by their open's serial (invindex.h), so a map never
 * answers for another segment, or for one opened again.
 *
 * The cache (one per segment cache: index/segcache.h) keeps the
 * QR_KMCACHE_MAPS maps used last, refcounted: a map stays valid while its
 * holder holds it, whatever the cache drops meanwhile. Maps belong to the
 * segments, as ordinals do: they are not charged to a query; the lists a
 * build makes are. */
#ifndef QR_KEYMAP_H
#define QR_KEYMAP_H
#include <stdint.h>

#include "index/invindex.h"
#include "util/err.h"
#include "util/pool.h"
#include "util/qctx.h"

#define QR_KM_ONE       UINT32_MAX
#define QR_KMCACHE_MAPS 4u

typedef struct qr_keymap qr_keymap;
typedef struct qr_kmcache qr_kmcache;

/* NULL with e set when out of memory. */
qr_kmcache *qr_kmcache_new(qr_err *e);
/* Release the cache's maps (holders keep theirs) and free it. NULL: no-op. */
void qr_kmcache_free(qr_kmcache *c);
/* A map whose members include every field of f[0..n), held (give it back
 * with qr_keymap_release), or NULL when the cache has none. */
qr_keymap *qr_kmcache_find(qr_kmcache *c, qr_invfield *const *f, uint32_t n);

/* Build the map of keyword fields f[0..n) (a field given twice counts
 * once), on up to `threads` slots of pool (NULL: the caller alone), and
 * put it in cache c (NULL: kept by the caller alone; the cache drops the
 * maps this one covers). ctx (may be NULL) can stop the build and is
 * charged its lists. Returned held. NULL with e set: out of memory,
 * canceled (57014), a dictionary with more terms than it says (XX001), or
 * more shared keys than 32-bit ids (54000). */
qr_keymap *qr_keymap_build(qr_kmcache *c, qr_invfield *const *f, uint32_t n, qr_pool *pool,
                           int threads, qr_qctx *ctx, qr_err *e);
void qr_keymap_release(qr_keymap *m);

/* Member f's shared ids by term ordinal (f->dict.nterms of them), or NULL
 * when f is not a member. */
const uint32_t *qr_keymap_sids(const qr_keymap *m, const qr_invfield *f);
/* How many keys are shared (ids 0 .. this - 1). */
uint32_t qr_keymap_shared(const qr_keymap *m);
#endif
