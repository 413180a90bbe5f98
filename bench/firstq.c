/* firstq.c - the first query after opening a table, many times in one
 * process: each iteration opens every segment afresh (a new segment
 * cache: files opened and mapped, nothing verified yet), answers the
 * query (a count, or the top 100 by score or by time with their rows
 * read) on two threads, and frees the cache (the mappings go). Prints
 * the quartiles of the iterations in ms. Without a process start per
 * query (bench/first-query.sh) the figures move by a millisecond or two
 * where a process's move by ten on a virtual machine, so two builds can
 * be told apart; the page cache is as it is (warm it first).
 *
 *   cc bench/firstq.c -ITREE/src -ITREE/build/gen TREE/build/rel/libquarry.a ...
 *   firstq DATA TABLE count|score|time|open QUERY [N]      (N default 15;
 *   open: the segments opened, no query)
 *
 * bench/firstq.sh builds it against two trees and alternates them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index/segcache.h"
#include "index/table.h"
#include "search/parallel.h"
#include "search/topk.h"
#include "util/pool.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One iteration: open, answer, close. 0, or -1 with e set. */
static int once(qr_table *t, qr_pool *pool, const char *mode, const char *text, qr_segref **refs,
                double *ms, qr_err *e)
{
    qr_segcache *c = qr_segcache_new(NULL, e);
    if (!c)
        return -1;
    uint32_t ns = t->man.nsegs;
    double t0 = now_ms();
    int rc = qr_segcache_acquire_all(c, t->dir, &t->man, refs, pool, 2, e), open = rc == 0;
    qr_par_search ps;
    if (rc == 0 && strcmp(mode, "open") != 0 &&
        (rc = qr_par_init_refs(&ps, pool, t->def, refs, ns, text, strlen(text), 2, e)) == 0) {
        if (!strcmp(mode, "count")) {
            uint64_t n;
            rc = qr_par_count(&ps, &n, e);
        } else {
            qr_hit hits[100];
            uint32_t nh = 0;
            qr_buf rows;
            qr_buf_init(&rows);
            rc = qr_par_topk(&ps, strcmp(mode, "time") ? QR_BY_SCORE : QR_BY_TIME, 100, 0, hits,
                             &nh, NULL, e);
            if (rc == 0)
                rc = qr_par_rows(&ps, hits, nh, &rows, e);
            qr_buf_free(&rows);
        }
        qr_par_free(&ps);
    }
    if (open)
        qr_segcache_release_all(refs, ns);
    *ms = now_ms() - t0;
    qr_segcache_free(c);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 5 || (strcmp(argv[3], "count") && strcmp(argv[3], "score") &&
                     strcmp(argv[3], "time") && strcmp(argv[3], "open"))) {
        fprintf(stderr, "usage: firstq DATA TABLE count|score|time|open QUERY [N]\n");
        return 2;
    }
    int n = argc > 5 ? atoi(argv[5]) : 15;
    if (n < 1 || n > 10000) {
        fprintf(stderr, "firstq: N must be 1 to 10000\n");
        return 2;
    }
    qr_err e;
    qr_err_clear(&e);
    qr_table *t = qr_table_open(argv[1], argv[2], QR_TABLE_READ, &e);
    if (!t) {
        fprintf(stderr, "firstq: %s\n", e.msg);
        return 1;
    }
    qr_pool *pool = qr_pool_new(1, &e); /* with the caller: two threads */
    qr_segref **refs = calloc(t->man.nsegs ? t->man.nsegs : 1, sizeof *refs);
    double *ms = calloc((size_t)n, sizeof *ms);
    int rc = pool && refs && ms ? 0 : 1;
    if (rc)
        fprintf(stderr, "firstq: out of memory\n");
    for (int i = 0; i < n && rc == 0; i++)
        if (once(t, pool, argv[3], argv[4], refs, &ms[i], &e) != 0) {
            fprintf(stderr, "firstq: %s\n", e.msg);
            rc = 1;
        }
    if (rc == 0) {
        qsort(ms, (size_t)n, sizeof *ms, by_value);
        printf("%.1f %.1f %.1f\n", ms[n / 4], ms[n / 2], ms[(3 * n) / 4]);
    }
    free(ms);
    free(refs);
    qr_pool_free(pool);
    qr_table_close(t);
    return rc;
}
