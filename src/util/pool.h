/* pool.h - a pool of worker threads that run "jobs": fn(ctx, slot) for
 * slot = 0..k-1, with the submitting thread taking part.
 *
 * Contract:
 * - qr_pool_run(pool, k, fn, ctx) returns when all k slots have run. The
 *   caller runs slot 0 itself, then takes any slot no pool thread has
 *   claimed yet, then sleeps (condvar) until the claimed ones finish. So a
 *   job always completes, whatever the pool size or load: k may exceed the
 *   pool (slots then run one after another), a pool may have 0 threads or
 *   be NULL (every slot on the caller), and fn may itself submit jobs.
 * - Slots are distinct: no two run at once under the same index, so state
 *   indexed by slot needs no lock. Which thread runs a slot, and whether
 *   slots run concurrently, is not promised (a slot may run after another
 *   has finished): fn must not wait for another slot of its job.
 * - Several threads may submit at once: jobs queue in arrival order and
 *   share the pool threads (a thread takes the next unclaimed slot of the
 *   oldest job), each submitter working on its own job.
 * - No busy waiting: one mutex, a condvar for work, one for completions.
 */
#ifndef QR_POOL_H
#define QR_POOL_H

#include "util/err.h"

#define QR_POOL_MAX_THREADS 16

typedef struct qr_pool qr_pool;

/* One slot of a job: slot is 0..k-1 (0 = the submitting thread's). */
typedef void (*qr_pool_fn)(void *ctx, int slot);

/* Start a pool of nthreads threads (< 0: one per online CPU; 0: no thread,
 * jobs run on their callers), at most QR_POOL_MAX_THREADS. NULL with e set
 * when a thread or memory cannot be had (nothing is left running). Free
 * with qr_pool_free. */
qr_pool *qr_pool_new(int nthreads, qr_err *e);

/* Worker threads of the pool (0 for NULL). */
int qr_pool_threads(const qr_pool *pool);

/* Run fn(ctx, slot) for slot 0..k-1 (k >= 1; k < 1 runs nothing) and
 * return when all have returned. pool may be NULL. Thread-safe. */
void qr_pool_run(qr_pool *pool, int k, qr_pool_fn fn, void *ctx);

/* Stop and join every thread. The pool must be idle (no qr_pool_run in
 * progress). NULL is a no-op. */
void qr_pool_free(qr_pool *pool);

#endif
