/* join.h - hash join of two materialised results on equal keys.
 *
 * The build side is R: its rows are hashed by their key values (cells of
 * the key expressions evaluated over R, natural domain); L's rows probe in
 * order, and each match gives one pair (L row, R row). So the pairs keep
 * L's order, and R's order among one L row's matches. Keys compare by type
 * (text and JSON bytewise, doubles by value with -0 equal to 0); a NULL key
 * matches nothing (SQL). With left = 1, an L row without a match gives one
 * pair with R row UINT64_MAX (LEFT JOIN: R's columns NULL); with left = 2,
 * an L row gives one pair at most (its first match: a semi join, IN).
 *
 * The pairs (*li, *ri: np entries, qr_qmalloc'ed from ctx, freed by the
 * caller with qr_qfree) let the caller gather only the columns it reads.
 * Memory (the hash table, the pairs) is charged to ctx; past its limit,
 * 53200. Stops (qr_qctx_check) are honoured every 64K probes. The build is
 * one pass; L's probes are split in `threads` ranges run on the pool (when
 * there are enough of them), each range's pairs appended in L's order. */
#ifndef QR_EXEC_JOIN_H
#define QR_EXEC_JOIN_H
#include <stdint.h>

#include "exec/expr.h"
#include "exec/result.h"
#include "util/pool.h"

#define QR_JOIN_MAX_KEYS 4

int qr_x_hash_join_pairs(uint64_t nl, const qr_cell *const *lk, uint64_t nr,
                         const qr_cell *const *rk, const uint8_t *ktypes, uint32_t nk, int left,
                         qr_pool *pool, int threads, qr_qctx *ctx, uint64_t **li, uint64_t **ri,
                         uint64_t *np, qr_err *e);
#endif
