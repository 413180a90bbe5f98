/* cli_util.c - option value parsing, error printing and process set-up
 * shared by commands. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

int cli_uint(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    int digits = 0;
    const char *p = s;
    for (; *p; p++) {
        if (*p == '_' && digits)
            continue;
        if (*p < '0' || *p > '9')
            break;
        if (v > (UINT64_MAX - 9) / 10)
            goto bad;
        v = v * 10 + (uint64_t)(*p - '0');
        digits++;
    }
    if (!digits)
        goto bad;
    uint64_t mul = 1;
    if (*p == 'k' || *p == 'K')
        mul = 1000, p++;
    else if (*p == 'M')
        mul = 1000000, p++;
    else if (*p == 'G')
        mul = 1000000000, p++;
    if (*p || (mul > 1 && v > UINT64_MAX / mul))
        goto bad;
    v *= mul;
    if (v > max) {
        fprintf(stderr, "quarry: %s %s: must be at most %llu\n", opt, s, (unsigned long long)max);
        return -1;
    }
    *out = v;
    return 0;
bad:
    fprintf(stderr, "quarry: %s: '%s' is not a non-negative integer\n", opt, s);
    return -1;
}

void cli_fail(const char *code, const char *msg)
{
    fprintf(stderr, "quarry: error %s: %s\n", code, msg);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void cli_print_latency(double *lat, uint64_t reps, int threads)
{
    double first = lat[0];
    qsort(lat, reps, sizeof *lat, cmp_double);
    fprintf(stderr,
            "hot: median %.3f ms, p90 %.3f ms, min %.3f ms over %llu runs (first %.3f ms), "
            "%d threads\n",
            lat[reps / 2], lat[reps * 9 / 10], lat[0], (unsigned long long)reps, first, threads);
}

/* Segment builds, and queries that gather column vectors and hash tables,
 * allocate and free the same large arrays again and again; keeping them in
 * the heap (not mmap/munmap each time) saves the page faults of touching
 * fresh memory again. The footprint stays what the work needs: freed memory
 * is reused. */
void cli_tune_malloc(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}
