/* join.h - hash join of two materialised results on equal keys.
 *
 * The build side is R: its rows are hashed by their key values (cells of
 * the key expressions evaluated over R, natural domain); L's rows probe in
 * order, and each match gives one pair (L row, R row). So the pairs keep
 * L's order, and R's order among one L row's matches. Keys compare by type
 * (text and JSON bytewise, doubles by value with -0 equal to 0); a NULL key
 * matches nothing (SQL). The kind says what else comes out:
 *   QR_JOIN_INNER  the matching pairs only;
 *   QR_JOIN_LEFT   also, in its place in L's order, one pair (l, UINT64_MAX)
 *                  for each L row without a match (R's columns NULL);
 *   QR_JOIN_SEMI   one pair at most per L row (its first match: IN);
 *   QR_JOIN_RIGHT  the matching pairs, then one pair (UINT64_MAX, r) for
 *                  each R row that no L row matched, in R's order;
 *   QR_JOIN_FULL   LEFT's pairs, then RIGHT's unmatched R rows.
 * For RIGHT and FULL the probe marks each R row it matches in a byte per R
 * row (relaxed atomic stores: probes on several threads may mark the same
 * row; the pool's join orders them before the unmatched rows are read).
 *
 * The pairs (*li, *ri: np entries, qr_qmalloc'ed from ctx, freed by the
 * caller with qr_qfree) let the caller gather only the columns it reads.
 * Memory (the hash table, the marks, the pairs) is charged to ctx; past its
 * limit, 53200. Stops (qr_qctx_check) are honoured every 64K steps of the
 * probe (an L row, or an R row of its chain: one key may match millions)
 * and every 64K R rows looked at for the unmatched ones. The build is one
 * pass; L's probes are split in `threads` ranges run on the pool (when
 * there are enough of them), each range's pairs appended in L's order. */
#ifndef QR_EXEC_JOIN_H
#define QR_EXEC_JOIN_H
#include <stdint.h>

#include "exec/expr.h"
#include "exec/result.h"
#include "util/pool.h"

#define QR_JOIN_MAX_KEYS 4

enum { QR_JOIN_INNER = 0, QR_JOIN_LEFT = 1, QR_JOIN_SEMI = 2, QR_JOIN_RIGHT = 3, QR_JOIN_FULL = 4 };

int qr_x_hash_join_pairs(uint64_t nl, const qr_cell *const *lk, uint64_t nr,
                         const qr_cell *const *rk, const uint8_t *ktypes, uint32_t nk, int kind,
                         qr_pool *pool, int threads, qr_qctx *ctx, uint64_t **li, uint64_t **ri,
                         uint64_t *np, qr_err *e);
#endif
