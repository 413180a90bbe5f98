/* otelgen.h - the deterministic OpenTelemetry log generator: streams the
 * reference corpus described in DATASET.md (/work/shared/DATASET.md) as
 * canonical NDJSON, one 15-key object per line.
 *
 * Determinism: rows are cut into chunks of GEN_CHUNK_ROWS; a chunk's PRNG is
 * seeded from (seed, chunk index) only, so row r is a pure function of
 * (seed, r) and the stream is byte-identical however it is split between
 * threads or gen_new() starting points. Row r's Timestamp is
 * GEN_BASE_NS + r * GEN_NS_PER_ROW + jitter in [0, GEN_NS_PER_ROW), hence
 * strictly increasing.
 */
#ifndef QR_OTELGEN_H
#define QR_OTELGEN_H

#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

#define GEN_CHUNK_ROWS 16384u
#define GEN_BASE_NS 1758585600000000000LL /* 2025-09-23T00:00:00Z */
#define GEN_NS_PER_ROW 1800               /* ~1.8 s per 1M rows */
#define GEN_ROW_MAX 4096                  /* no generated line is longer */

typedef struct gen_ctx gen_ctx;

/* A generator for rows [first_row, ...) of the corpus with this seed. Row r's
 * content depends only on (seed, r's chunk) so chunks can be generated in
 * parallel and the stream is identical however it is split. Costs up to one
 * chunk of skipped rows when first_row is not chunk-aligned. Returns NULL when
 * out of memory. Free with gen_free. */
gen_ctx *gen_new(uint64_t seed, uint64_t first_row);
void gen_free(gen_ctx *g);

/* Reposition g so that the next gen_row() yields row `row`. */
void gen_seek(gen_ctx *g, uint64_t row);
/* Index of the row the next gen_row() will produce. */
uint64_t gen_next_row(const gen_ctx *g);

/* Append the next row as one NDJSON line, '\n' included, to b. On allocation
 * failure b->oom is set and nothing is appended (the row is still consumed). */
void gen_row(gen_ctx *g, qr_buf *b);

/* Stream `rows` rows to fd, using `threads` threads (1 or 2; at most 64)
 * generating alternate chunks, written in order. Returns 0, or -1 with `e`
 * filled (QR_E_ARGS, QR_E_NOMEM, QR_E_IO). */
int gen_write_ndjson(int fd, uint64_t rows, uint64_t seed, int threads, qr_err *e);

#endif
