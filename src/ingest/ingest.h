/* ingest.h - streaming NDJSON ingest into a table.
 *
 * The calling thread reads the input and cuts it, at line boundaries, into
 * units of at most segment_rows lines / segment_bytes bytes; worker threads
 * parse each unit into a batch and write it as one segment. Memory stays
 * bounded by about (threads + 1) units whatever the input size. A line
 * longer than max_line is never buffered whole: it is skipped as an error.
 * New segments become visible in one atomic manifest commit at the end.
 *
 * Bad lines (malformed JSON, wrong types, unknown columns, too long: the
 * errors for which qr_err_is_input_fault is true) are reported as
 * "NAME:LINE: reason"; by default they are skipped and counted, with
 * `strict` the first one aborts the ingest. Any other failure (out of
 * memory, a limit, a failed read, write, fsync, rename or manifest commit)
 * always aborts it. An aborted ingest commits nothing and leaves no file of
 * its own behind (temp files and this run's segments are removed).
 */
#ifndef QR_INGEST_H
#define QR_INGEST_H

#include <stdint.h>
#include <stdio.h>

#include "format/segment.h"
#include "index/table.h"

typedef struct qr_ingest_opts {
    uint32_t segment_rows;  /* lines per segment (default 1,000,000) */
    uint64_t segment_bytes; /* input bytes per segment (default 128 MiB) */
    uint64_t max_line;      /* longest accepted line (default 16 MiB) */
    int threads;            /* workers; 0 = one per online CPU */
    int strict;             /* abort on the first bad line */
    int progress;           /* progress line on `report` about once a second */
    unsigned max_reported;  /* bad lines printed in full (default 20) */
    FILE *report;           /* where bad lines and progress go (NULL = none) */
    const char *prefix;     /* bytes already read from the input, ingested first */
    size_t prefix_len;      /* (e.g. the sample a schema was inferred from) */
    size_t arena_limit;     /* bytes of decoded strings (escaped strings, map
                             * texts) one segment's batch may hold; past it
                             * the ingest stops with QR_E_NOMEM. 0 = none (the
                             * batch is bounded by its unit's input anyway) */
    qr_seg_opts seg;
    /* How the segments written are published: NULL appends them
     * (qr_table_commit); else publish(publish_ctx, ...) decides (VACUUM
     * replaces the table's segments with them, or refuses: -1 with e set,
     * and the ingest removes them as after any failure). */
    int (*publish)(void *ctx, qr_table *t, const qr_seg_entry *segs, uint32_t n, qr_err *e);
    void *publish_ctx;
} qr_ingest_opts;

typedef struct qr_ingest_stats {
    uint64_t input_bytes, lines, rows, bad_lines, blank_lines, segments, segment_bytes;
    double seconds;
} qr_ingest_stats;

void qr_ingest_opts_default(qr_ingest_opts *o);

/* Ingest NDJSON from fd (named `name` in messages) into t, which must be
 * open for writing. Returns 0 when the ingest committed (bad lines may have
 * been skipped: see st->bad_lines), -1 with e set when it did not: then the
 * table, on disk and in t->man, holds what it held before. Changes no
 * process-wide setting (malloc tuning is the caller's choice). */
int qr_ingest(qr_table *t, int fd, const char *name, const qr_ingest_opts *o, qr_ingest_stats *st,
              qr_err *e);

#endif
