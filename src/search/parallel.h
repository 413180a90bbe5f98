/* parallel.h - counting a query over many segments with several threads:
 * one task per segment, handed out by an atomic counter, partial counts
 * added up. Each thread parses its own copy of the query, so compiled
 * automata (whose DFA caches grow lazily) are never shared across threads;
 * a segment is searched by one thread at a time. */
#ifndef QR_PARALLEL_H
#define QR_PARALLEL_H

#include <stdint.h>

#include "search/exec.h"

#define QR_MAX_SEARCH_THREADS 16

typedef struct qr_par_search {
    const qr_tabdef *def; /* the table (not owned: outlives the search) */
    qr_segsearch *ss; /* one per segment, persistent (fields opened once) */
    uint32_t nsegs;
    int threads;
    qr_query *q[QR_MAX_SEARCH_THREADS];
    qr_arena qarena[QR_MAX_SEARCH_THREADS]; /* the query copies */
    qr_arena run[QR_MAX_SEARCH_THREADS];    /* iterators of one count, reset */
    qr_colreader **readers; /* threads x nsegs x def->ncols, opened on first
                             * use by qr_par_rows (random-access mode), kept */
    uint8_t *readers_open;  /* threads x nsegs: that set is open */
} qr_par_search;

/* Prepare: parses `text` for table def once per thread. def and segs stay
 * owned by the caller and must outlive p. */
int qr_par_init(qr_par_search *p, const qr_tabdef *def, qr_segment **segs, uint32_t nsegs,
                const char *text, size_t len, int threads, qr_err *e);
/* Count matches over every segment (0, or -1 with e set). */
int qr_par_count(qr_par_search *p, uint64_t *count, qr_err *e);
void qr_par_free(qr_par_search *p);

#endif
