/* ghevents.h - the deterministic `github_events` corpus: nested events in
 * the shape of the GitHub Archive (what Quickwit's 23 TB benchmark indexed),
 * one object per line with the keys
 *
 *   id, type, actor{...}, repo{...}, payload{...}, public, created_at[, org{...}]
 *
 * and a payload whose shape depends on the type (PushEvent with commits,
 * CreateEvent, WatchEvent, IssuesEvent, IssueCommentEvent, PullRequestEvent,
 * ForkEvent, DeleteEvent, ReleaseEvent; fields and shares in docs/DATASETS.md).
 *
 * Determinism as in genutil.h: row r is a pure function of (seed, r). Ids
 * grow strictly with the row (GHEVENTS_BASE_ID + 4r + 0..3); chunk c covers
 * the seconds [GHEVENTS_BASE_TS + c * GHEVENTS_CHUNK_SECS, + GHEVENTS_CHUNK_SECS)
 * and created_at never decreases.
 */
#ifndef QR_GHEVENTS_H
#define QR_GHEVENTS_H

#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

#define GHEVENTS_BASE_ID    2489651045ULL /* the first event's id, a string in the output */
#define GHEVENTS_BASE_TS    1420124400    /* 2015-01-01T15:00:00Z */
#define GHEVENTS_CHUNK_SECS 2048          /* per GU_CHUNK_ROWS rows: ~8 events per second */
#define GHEVENTS_ROW_MAX    32768         /* no generated line is longer ('\n' included) */

typedef struct ghevents_ctx ghevents_ctx;

/* A generator positioned at row first_row (costs up to one chunk of skipped
 * rows when first_row is not chunk-aligned). NULL when out of memory. Free
 * with ghevents_free. */
ghevents_ctx *ghevents_new(uint64_t seed, uint64_t first_row);
void ghevents_free(ghevents_ctx *g);

/* Reposition g so that the next ghevents_row() yields row `row`. */
void ghevents_seek(ghevents_ctx *g, uint64_t row);
/* Index of the row the next ghevents_row() will produce. */
uint64_t ghevents_next_row(const ghevents_ctx *g);

/* Append the next row as one NDJSON line, '\n' included, to b. On allocation
 * failure b->oom is set and nothing is appended (the row is still consumed). */
void ghevents_row(ghevents_ctx *g, qr_buf *b);

/* Stream `rows` rows to fd with `threads` threads (1..64), in order. Returns
 * 0, or -1 with `e` filled (QR_E_ARGS, QR_E_NOMEM, QR_E_IO). */
int ghevents_write_ndjson(int fd, uint64_t rows, uint64_t seed, int threads, qr_err *e);

#endif
