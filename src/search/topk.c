/* topk.c - the entry point of the top-k collectors (see topk.h): checks k
 * and hands the order to its collector (topk_score.c, topk_time.c,
 * rows.c). */
#include "search/topk_int.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct collect {
    qr_hit *out;
    uint32_t n;
} collect;

static int collect_hits(void *ctx, const qr_hit *hits, uint32_t n, qr_err *e)
{
    collect *c = ctx;
    memcpy(c->out + c->n, hits, sizeof *hits * n);
    c->n += n;
    return 0;
}

int qr_par_topk(qr_par_search *p, qr_topk_by by, uint32_t k, int exhaustive, qr_hit *out,
                uint32_t *nout, qr_topk_stats *stats, qr_err *e)
{
    qr_topk_stats local;
    if (!stats)
        stats = &local;
    memset(stats, 0, sizeof *stats);
    *nout = 0;
    if (k > QR_TOPK_MAX)
        return qr_errf(e, QR_E_ARGS, "top-k: k = %u is above the limit %u", k, QR_TOPK_MAX);
    if (k == 0)
        return 0;
    if (by == QR_BY_SCORE)
        return tk_by_score(p, k, exhaustive, out, nout, stats, e);
    if (by == QR_BY_TIME)
        return tk_by_time(p, k, out, nout, stats, e);
    collect c = {out, 0};
    int rc = qr_par_first(p, k, collect_hits, &c, stats, e);
    *nout = c.n;
    return rc;
}
