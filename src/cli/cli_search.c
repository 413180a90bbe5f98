/* cli_search.c - `quarry search`: count or list the rows a filter matches. */
#include <getopt.h>
#include <stdlib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "index/table.h"
#include "search/exec.h"
#include "search/parallel.h"
#include "util/fsutil.h"

static const char *usage_text =
    "usage: quarry search --data DIR --table T [--count] [--limit N] [--explain]\n"
    "                     [--repeat N] [--threads N] 'QUERY'\n"
    "Prints the matching rows as NDJSON (first N, default 10), or with --count\n"
    "only their number. Query syntax: docs/SEARCH.md, e.g.\n"
    "  'failed AND order'  '\"failed to place order\"'  'error -cache'  'ord*'\n"
    "  '/c.che/'  'like:%tion'  'cahce~1'  'service:cart severity:ERROR'\n"
    "  'atleast(2, error, failed, charge, cache)'  'sevnum:>=13'\n"
    "Counting runs one task per segment on --threads threads (default: one per\n"
    "CPU). --repeat N counts N times with the table kept open and prints the hot\n"
    "latency (median, p90, min in ms) to stderr: for benchmarks.\n";

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Count with every segment open, `reps` times (1 = a plain count),
 * segments spread over `threads` threads; with reps > 1 the hot latency
 * goes to stderr. */
static int parallel_count(qr_table *t, const char *text, uint64_t reps, int threads,
                          int explain, qr_err *e)
{
    uint32_t ns = t->man.nsegs;
    qr_segment **segs = calloc(ns ? ns : 1, sizeof *segs);
    double *lat = calloc(reps, sizeof *lat);
    int rc = (!segs || !lat) ? qr_errf(e, QR_E_NOMEM, "out of memory") : 0;
    for (uint32_t i = 0; i < ns && rc == 0; i++) {
        char path[PATH_MAX];
        qr_table_seg_path(t, t->man.segs[i].id, path, sizeof path);
        if (!(segs[i] = qr_seg_open(path, e)))
            rc = -1;
    }
    qr_par_search ps;
    int inited = 0;
    if (rc == 0) {
        rc = qr_par_init(&ps, segs, ns, text, strlen(text), threads, e);
        inited = rc == 0;
    }
    uint64_t total = 0;
    for (uint64_t r = 0; r < reps && rc == 0; r++) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rc = qr_par_count(&ps, &total, e);
        lat[r] = ms_since(&t0);
    }
    if (rc == 0) {
        printf("%llu\n", (unsigned long long)total);
        if (reps > 1) {
            double first = lat[0];
            qsort(lat, reps, sizeof *lat, cmp_double);
            fprintf(stderr,
                    "hot: median %.3f ms, p90 %.3f ms, min %.3f ms over %llu runs (first %.3f ms), "
                    "%d threads\n",
                    lat[reps / 2], lat[reps * 9 / 10], lat[0], (unsigned long long)reps, first,
                    ps.threads);
        } else if (explain) {
            fprintf(stderr, "%u segments, %d threads, %.3f ms\n", ns, ps.threads, lat[0]);
        }
    }
    if (inited)
        qr_par_free(&ps);
    for (uint32_t i = 0; i < ns; i++)
        qr_seg_close(segs ? segs[i] : NULL);
    free(segs);
    free(lat);
    return rc;
}

int cli_search(int argc, char **argv)
{
    static const struct option opts[] = {{"data", required_argument, 0, 'd'},
                                         {"table", required_argument, 0, 't'},
                                         {"count", no_argument, 0, 'c'},
                                         {"limit", required_argument, 0, 'l'},
                                         {"explain", no_argument, 0, 'x'},
                                         {"repeat", required_argument, 0, 'r'},
                                         {"threads", required_argument, 0, 'j'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *data = NULL, *table = NULL;
    int count_only = 0, explain = 0, c;
    uint64_t limit = 10, repeat = 0, threads = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            data = optarg;
            break;
        case 't':
            table = optarg;
            break;
        case 'c':
            count_only = 1;
            break;
        case 'x':
            explain = 1;
            break;
        case 'l':
            if (cli_uint("--limit", optarg, UINT64_MAX, &limit) != 0)
                return 2;
            break;
        case 'r':
            if (cli_uint("--repeat", optarg, 1000000, &repeat) != 0 || repeat == 0)
                return 2;
            break;
        case 'j':
            if (cli_uint("--threads", optarg, QR_MAX_SEARCH_THREADS, &threads) != 0 ||
                threads == 0)
                return 2;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        default:
            return 2;
        }
    }
    if (!data || !table || optind != argc - 1) {
        fputs(usage_text, stderr);
        return 2;
    }
    const char *text = argv[optind];
    qr_err e;
    qr_err_clear(&e);
    qr_arena a;
    qr_arena_init(&a, 1 << 20, 2ull << 30); /* query memory limit: 2 GiB */
    qr_query *q = qr_query_parse(text, strlen(text), &a, &e);
    if (!q) {
        cli_fail(e.code, e.msg);
        qr_arena_free(&a);
        return 1;
    }
    if (explain) {
        char buf[4096];
        qr_query_print(q, buf, sizeof buf);
        fprintf(stderr, "query: %s\n", buf);
    }
    qr_table *t = qr_table_open(data, table, QR_TABLE_READ, &e);
    if (!t) {
        cli_fail(e.code, e.msg);
        qr_arena_free(&a);
        return 1;
    }
    if (count_only || repeat) {
        if (!threads)
            threads = (uint64_t)sysconf(_SC_NPROCESSORS_ONLN);
        int r = parallel_count(t, text, repeat ? repeat : 1, (int)threads, explain, &e);
        qr_query_release(q);
        qr_table_close(t);
        qr_arena_free(&a);
        if (r != 0) {
            cli_fail(e.code, e.msg);
            return 1;
        }
        return 0;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t total = 0, printed = 0;
    int rc = 0;
    qr_buf out;
    qr_buf_init(&out);
    for (uint32_t i = 0; i < t->man.nsegs && rc == 0; i++) {
        char path[PATH_MAX];
        qr_table_seg_path(t, t->man.segs[i].id, path, sizeof path);
        qr_segment *s = qr_seg_open(path, &e);
        if (!s) {
            rc = -1;
            break;
        }
        qr_segsearch ss;
        qr_segsearch_init(&ss, s);
        if (count_only) {
            uint64_t n;
            rc = qr_segsearch_count(&ss, q, &a, &n, &e);
            total += n;
        } else if (printed < limit) {
            qr_it *it = qr_segsearch_compile(&ss, q, &a, &e);
            qr_colreader *rd[COL_COUNT] = {0};
            if (!it)
                rc = -1;
            for (int k = 0; k < COL_COUNT && rc == 0; k++)
                if (!(rd[k] = qr_colr_open(s, k, &e)))
                    rc = -1;
            for (uint32_t d = rc ? QR_NO_DOC : qr_it_next(it); d != QR_NO_DOC && printed < limit;
                 d = qr_it_next(it)) {
                if (qr_row_json(rd, d, &out, &e) != 0) {
                    rc = -1;
                    break;
                }
                printed++;
            }
            if (rc == 0 && qr_it_failed(it))
                rc = qr_errf(&e, QR_E_CORRUPT, "segment %s: corrupt postings", path);
            for (int k = 0; k < COL_COUNT; k++)
                qr_colr_close(rd[k]);
        }
        qr_segsearch_close(&ss);
        qr_seg_close(s);
        qr_query_release(q);
        qr_arena_reset(&a);
        /* the query tree lives in the arena too: re-parse after a reset */
        if (i + 1 < t->man.nsegs && !(q = qr_query_parse(text, strlen(text), &a, &e)))
            rc = -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc == 0) {
        if (count_only)
            printf("%llu\n", (unsigned long long)total);
        else
            rc = qr_write_all(STDOUT_FILENO, out.p, out.len, "stdout", &e);
    }
    if (explain && rc == 0)
        fprintf(stderr, "%u segments, %.3f ms\n", t->man.nsegs,
                (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
    qr_buf_free(&out);
    qr_table_close(t);
    qr_arena_free(&a);
    if (rc != 0) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    return 0;
}
