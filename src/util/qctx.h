/* qctx.h - a query's context: one memory budget that every thread and
 * every structure of the query draws on (iterator arenas, heaps, term sets,
 * automata), and the query's stop conditions (a cancel flag anyone may
 * set, a deadline), checked by the loops that do the work.
 *
 * Memory is charged when it is taken and released when it is given back,
 * so `used` is what the query holds now; an allocation that would pass the
 * limit fails (the caller reports QR_E_NOMEM, 53200) and the query unwinds,
 * freeing everything. A NULL context means "not counted, never stopped":
 * the lower layers take one wherever they allocate for a query, and tests
 * or tools that need no limit pass NULL.
 *
 * Stopping: qr_qctx_check is the full check (an atomic load, and a clock
 * read when there is a deadline); qr_qctx_tick is its cheap form for inner
 * loops, doing the full check once every QR_QCTX_TICK calls. A stop is
 * latched: once seen, every later check fails the same way, on every
 * thread of the query. */
#ifndef QR_QCTX_H
#define QR_QCTX_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "util/err.h"

#define QR_QCTX_DEFAULT_LIMIT (2ull << 30) /* 2 GiB */
#define QR_QCTX_TICK          64u

enum { QR_QCTX_RUNNING = 0, QR_QCTX_CANCELED = 1, QR_QCTX_TIMEOUT = 2 };

typedef struct qr_qctx {
    atomic_size_t used;       /* bytes charged now */
    atomic_size_t peak;       /* the most ever charged at once */
    size_t limit;             /* 0 = unlimited */
    const atomic_int *cancel; /* != 0: stop (a client's cancel request); may be NULL */
    int64_t deadline_ns;      /* CLOCK_MONOTONIC ns; 0 = none */
    atomic_int stopped;       /* QR_QCTX_*: latched once a check fails */
} qr_qctx;

/* limit in bytes (0 = unlimited); no cancel flag, no deadline. */
void qr_qctx_init(qr_qctx *c, size_t limit);
void qr_qctx_set_stop(qr_qctx *c, const atomic_int *cancel, int64_t deadline_ns);
int64_t qr_qctx_now_ns(void);
/* The CLOCK_REALTIME time ms milliseconds from now, as pthread_cond_timedwait
 * takes it. */
struct timespec qr_abstime_after_ms(int64_t ms);

/* Take n bytes of the budget: 0, or -1 (nothing taken) past the limit. */
int qr_qctx_charge(qr_qctx *c, size_t n);
void qr_qctx_release(qr_qctx *c, size_t n);
/* Counted malloc/realloc/free (NULL past the limit or when malloc fails;
 * realloc leaves p untouched then). Blocks carry their size, so free
 * knows what to give back; free(NULL) is a no-op. */
void *qr_qmalloc(qr_qctx *c, size_t n);
void *qr_qrealloc(qr_qctx *c, void *p, size_t n);
void qr_qfree(qr_qctx *c, void *p);
/* Sets e to the out-of-memory error naming the limit; returns -1. */
int qr_qctx_nomem(const qr_qctx *c, qr_err *e);

/* 0, or -1 with e set to QR_E_CANCELED (57014), saying whether the user or
 * the statement timeout stopped it. */
int qr_qctx_check(qr_qctx *c, qr_err *e);
/* The cheap form for inner loops (*counter is the loop's own). */
static inline int qr_qctx_tick(qr_qctx *c, uint32_t *counter, qr_err *e)
{
    if (!c || ++*counter % QR_QCTX_TICK)
        return 0;
    return qr_qctx_check(c, e);
}

#endif
