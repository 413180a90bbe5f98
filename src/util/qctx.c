/* qctx.c - a query's memory budget and stop conditions (see qctx.h). */
#include "util/qctx.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

void qr_qctx_init(qr_qctx *c, size_t limit)
{
    memset(c, 0, sizeof *c);
    c->limit = limit;
}

void qr_qctx_set_stop(qr_qctx *c, const atomic_int *cancel, int64_t deadline_ns)
{
    c->cancel = cancel;
    c->deadline_ns = deadline_ns;
    atomic_store(&c->stopped, QR_QCTX_RUNNING);
}

int64_t qr_qctx_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int qr_qctx_charge(qr_qctx *c, size_t n)
{
    if (!c)
        return 0;
    size_t was = atomic_fetch_add(&c->used, n);
    if (c->limit && (was + n > c->limit || was + n < was)) {
        atomic_fetch_sub(&c->used, n);
        return -1;
    }
    size_t now = was + n, pk = atomic_load(&c->peak);
    while (now > pk && !atomic_compare_exchange_weak(&c->peak, &pk, now))
        ;
    return 0;
}

void qr_qctx_release(qr_qctx *c, size_t n)
{
    if (c)
        atomic_fetch_sub(&c->used, n);
}

/* a counted block: its size in front, 16 bytes keep the payload aligned */
#define HDR 16

void *qr_qmalloc(qr_qctx *c, size_t n)
{
    if (n > SIZE_MAX - HDR || qr_qctx_charge(c, n + HDR) != 0)
        return NULL;
    unsigned char *b = malloc(n + HDR);
    if (!b) {
        qr_qctx_release(c, n + HDR);
        return NULL;
    }
    memcpy(b, &n, sizeof n);
    return b + HDR;
}

void *qr_qrealloc(qr_qctx *c, void *p, size_t n)
{
    if (!p)
        return qr_qmalloc(c, n);
    unsigned char *b = (unsigned char *)p - HDR;
    size_t old;
    memcpy(&old, b, sizeof old);
    if (n > SIZE_MAX - HDR)
        return NULL;
    if (n > old && qr_qctx_charge(c, n - old) != 0)
        return NULL;
    unsigned char *nb = realloc(b, n + HDR);
    if (!nb) {
        if (n > old)
            qr_qctx_release(c, n - old);
        return NULL;
    }
    if (n < old)
        qr_qctx_release(c, old - n);
    memcpy(nb, &n, sizeof n);
    return nb + HDR;
}

void qr_qfree(qr_qctx *c, void *p)
{
    if (!p)
        return;
    unsigned char *b = (unsigned char *)p - HDR;
    size_t n;
    memcpy(&n, b, sizeof n);
    qr_qctx_release(c, n + HDR);
    free(b);
}

int qr_qctx_nomem(const qr_qctx *c, qr_err *e)
{
    if (c && c->limit)
        return qr_errf(e, QR_E_NOMEM,
                       "out of memory: the query needs more than its memory limit of %zu bytes",
                       c->limit);
    return qr_errf(e, QR_E_NOMEM, "out of memory");
}

int qr_qctx_check(qr_qctx *c, qr_err *e)
{
    if (!c)
        return 0;
    int st = atomic_load_explicit(&c->stopped, memory_order_relaxed);
    if (st == QR_QCTX_RUNNING) {
        if (c->cancel && atomic_load_explicit(c->cancel, memory_order_relaxed))
            st = QR_QCTX_CANCELED;
        else if (c->deadline_ns && qr_qctx_now_ns() >= c->deadline_ns)
            st = QR_QCTX_TIMEOUT;
        else
            return 0;
        atomic_store(&c->stopped, st);
    }
    return qr_errf(e, QR_E_CANCELED,
                   st == QR_QCTX_CANCELED ? "canceling statement due to user request"
                                          : "canceling statement due to statement timeout");
}

struct timespec qr_abstime_after_ms(int64_t ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = ts.tv_nsec + ms * 1000000;
    ts.tv_sec += ns / 1000000000;
    ts.tv_nsec = ns % 1000000000;
    return ts;
}
