/* pool.c - worker threads running jobs of k slots (see pool.h).
 *
 * A job lives on its submitter's stack. While it has unclaimed slots it
 * sits in the pool's FIFO queue; claiming its last slot unlinks it. Every
 * field of a job and of the pool is read and written under pool->mu; the
 * submitter returns only after seeing done == k under the mutex, and no
 * thread touches a job after counting its slot done, so the stack frame
 * is never used after it is gone. */
#include "util/pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct job {
    qr_pool_fn fn;
    void *ctx;
    int k, next, done; /* slots; the next unclaimed one; finished ones */
    struct job *link;  /* queue order */
} job;

struct qr_pool {
    pthread_mutex_t mu;
    pthread_cond_t work; /* a job was queued, or stop */
    pthread_cond_t done; /* a job's last slot finished */
    job *head, *tail;    /* jobs with unclaimed slots, oldest first */
    int stop, nthreads;
    pthread_t tid[];
};

/* Under mu: claim j's next slot; unlink j once every slot is claimed. */
static int claim(qr_pool *p, job *j)
{
    int s = j->next++;
    if (j->next < j->k)
        return s;
    job **at = &p->head, *prev = NULL;
    while (*at != j) {
        prev = *at;
        at = &(*at)->link;
    }
    *at = j->link;
    if (p->tail == j)
        p->tail = prev;
    return s;
}

/* Under mu: count a slot of j done. */
static void finish(qr_pool *p, job *j)
{
    if (++j->done == j->k)
        pthread_cond_broadcast(&p->done);
}

static void *worker(void *arg)
{
    qr_pool *p = arg;
    pthread_setname_np(pthread_self(), "quarry-worker"); /* as top -H and /proc show it */
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stop)
            pthread_cond_wait(&p->work, &p->mu);
        if (!p->head)
            break; /* stopping, nothing left */
        job *j = p->head;
        int s = claim(p, j);
        pthread_mutex_unlock(&p->mu);
        j->fn(j->ctx, s);
        pthread_mutex_lock(&p->mu);
        finish(p, j);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void stop_and_join(qr_pool *p, int started)
{
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < started; i++)
        pthread_join(p->tid[i], NULL);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

qr_pool *qr_pool_new(int nthreads, qr_err *e)
{
    if (nthreads < 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n < 1 ? 1 : (int)(n < QR_POOL_MAX_THREADS ? n : QR_POOL_MAX_THREADS);
    }
    if (nthreads > QR_POOL_MAX_THREADS)
        nthreads = QR_POOL_MAX_THREADS;
    qr_pool *p = calloc(1, sizeof *p + sizeof(pthread_t) * (size_t)nthreads);
    if (!p) {
        qr_errf(e, QR_E_NOMEM, "out of memory for a pool of %d threads", nthreads);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    p->nthreads = nthreads;
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_create(&p->tid[i], NULL, worker, p);
        if (rc != 0) {
            stop_and_join(p, i);
            qr_errf(e, QR_E_NOMEM, "cannot start thread %d of a pool of %d: %s", i + 1, nthreads,
                    strerror(rc));
            return NULL;
        }
    }
    return p;
}

int qr_pool_threads(const qr_pool *pool) { return pool ? pool->nthreads : 0; }

void qr_pool_run(qr_pool *pool, int k, qr_pool_fn fn, void *ctx)
{
    if (k < 1)
        return;
    if (!pool || !pool->nthreads || k == 1) {
        for (int s = 0; s < k; s++)
            fn(ctx, s);
        return;
    }
    job j = {fn, ctx, k, 1, 0, NULL}; /* slot 0 is ours */
    pthread_mutex_lock(&pool->mu);
    if (pool->tail)
        pool->tail->link = &j;
    else
        pool->head = &j;
    pool->tail = &j;
    pthread_mutex_unlock(&pool->mu);
    if (k - 1 >= pool->nthreads)
        pthread_cond_broadcast(&pool->work);
    else
        for (int i = 0; i < k - 1; i++)
            pthread_cond_signal(&pool->work);
    fn(ctx, 0);
    pthread_mutex_lock(&pool->mu);
    finish(pool, &j);
    while (j.next < j.k) { /* slots no thread took yet: run them here */
        int s = claim(pool, &j);
        pthread_mutex_unlock(&pool->mu);
        fn(ctx, s);
        pthread_mutex_lock(&pool->mu);
        finish(pool, &j);
    }
    while (j.done < j.k)
        pthread_cond_wait(&pool->done, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}

void qr_pool_free(qr_pool *pool)
{
    if (pool)
        stop_and_join(pool, pool->nthreads);
}
