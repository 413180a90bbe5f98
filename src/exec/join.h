/* join.h - hash join of two materialised results on equal keys.
 *
 * The build side is R: its rows are hashed by their key values (cells of
 * the key expressions evaluated over R, natural domain); L's rows probe in
 * order, and each match appends one row to `out`: L's cells, then R's. So
 * the output keeps L's order, and R's order among one L row's matches.
 * Keys compare by type (text and JSON bytewise, doubles by value with -0
 * equal to 0); a NULL key matches nothing (SQL). With `left`, an L row
 * without a match appears once with R's cells NULL (LEFT JOIN).
 *
 * out's columns are the caller's (L's ncols then R's); text cells are
 * copied into out. Memory (the hash table, out's rows) is charged to
 * out->ctx; past its limit, 53200. Stops (qr_qctx_check) are honoured
 * every 64K probes. */
#ifndef QR_EXEC_JOIN_H
#define QR_EXEC_JOIN_H
#include <stdint.h>

#include "exec/expr.h"
#include "exec/result.h"

#define QR_JOIN_MAX_KEYS 4

int qr_x_hash_join(const qr_result *L, const qr_cell *const *lk, const qr_result *R,
                   const qr_cell *const *rk, const uint8_t *ktypes, uint32_t nk, int left,
                   qr_result *out, qr_err *e);
#endif
