/* httplogs.h - the deterministic `http_logs` corpus: web server access logs
 * shaped like Elasticsearch Rally's http_logs track (the 1998 World Cup
 * site), one flat object per line (fields and shares in docs/DATASETS.md):
 *
 *   {"@timestamp":893964617,"clientip":"40.135.0.0",
 *    "request":"GET /images/hm_bg.jpg HTTP/1.0","status":200,"size":24736}
 *
 * `size` is absent on ~1% of rows. Determinism as in genutil.h: row r is a
 * pure function of (seed, r). Chunk c covers the seconds
 * [HTTPLOGS_BASE_TS + c * HTTPLOGS_CHUNK_SECS, + HTTPLOGS_CHUNK_SECS), and
 * within a chunk the clock only moves forward, so @timestamp never decreases.
 */
#ifndef QR_HTTPLOGS_H
#define QR_HTTPLOGS_H

#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

#define HTTPLOGS_BASE_TS    893964617 /* 1998-04-30T19:30:17Z, the first row's second */
#define HTTPLOGS_CHUNK_SECS 4096      /* per GU_CHUNK_ROWS rows: ~4 rows per second */
#define HTTPLOGS_ROW_MAX    256       /* no generated line is longer ('\n' included) */

typedef struct httplogs_ctx httplogs_ctx;

/* A generator positioned at row first_row (costs up to one chunk of skipped
 * rows when first_row is not chunk-aligned). NULL when out of memory. Free
 * with httplogs_free. */
httplogs_ctx *httplogs_new(uint64_t seed, uint64_t first_row);
void httplogs_free(httplogs_ctx *g);

/* Reposition g so that the next httplogs_row() yields row `row`. */
void httplogs_seek(httplogs_ctx *g, uint64_t row);
/* Index of the row the next httplogs_row() will produce. */
uint64_t httplogs_next_row(const httplogs_ctx *g);

/* Append the next row as one NDJSON line, '\n' included, to b. On allocation
 * failure b->oom is set and nothing is appended (the row is still consumed). */
void httplogs_row(httplogs_ctx *g, qr_buf *b);

/* Stream `rows` rows to fd with `threads` threads (1..64), in order. Returns
 * 0, or -1 with `e` filled (QR_E_ARGS, QR_E_NOMEM, QR_E_IO). */
int httplogs_write_ndjson(int fd, uint64_t rows, uint64_t seed, int threads, qr_err *e);

#endif
