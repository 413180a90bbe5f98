/* cli_search.c - `quarry search`: count or list the rows a filter matches. */
#include <getopt.h>
#include <stdlib.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "index/segcache.h"
#include "index/table.h"
#include "match/segsearch.h"
#include "search/parallel.h"
#include "search/topk.h"
#include "util/fsutil.h"

static const char *usage_text =
    "usage: quarry search --data DIR --table T [--count] [--limit N]\n"
    "                     [--top N --by score|time] [--exhaustive] [--explain]\n"
    "                     [--repeat N] [--threads N] [--timeout MS]\n"
    "                     [--memory-limit BYTES] 'QUERY'\n"
    "Prints the matching rows as NDJSON (first N in table order, default 10,\n"
    "streamed: any N), or\n"
    "with --count only their number, or with --top N the N best rows by BM25\n"
    "(--by score, the default) or the N newest (--by time). --exhaustive scores\n"
    "every match without block-max pruning (for comparison). Query syntax:\n"
    "docs/SEARCH.md, e.g.\n"
    "  'failed AND order'  '\"failed to place order\"'  'error -cache'  'ord*'\n"
    "  '/c.che/'  'like:%tion'  'cahce~1'  'service:cart severity:ERROR'\n"
    "  'atleast(2, error, failed, charge, cache)'  'sevnum:>=13'\n"
    "Counting runs one task per segment on --threads threads (default: one per\n"
    "CPU). --repeat N runs the search N times, each a fresh search over the\n"
    "segments the first one opened (kept in the process's segment cache), and\n"
    "prints the hot latency (median, p90, min in ms) to stderr: for benchmarks\n"
    "(with --top or --limit: the search plus reading the rows).\n"
    "--timeout MS stops a search that runs longer (each repeat gets MS), with\n"
    "SQLSTATE 57014; --memory-limit BYTES bounds the memory of a search (its\n"
    "iterators, heaps, term sets, automata and rows read, all threads together;\n"
    "default 2 GiB): past it, 53200.\n";

static double ms_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

typedef struct run_opts {
    int count_only, explain, exhaustive;
    qr_topk_by by;   /* QR_BY_NONE: --limit, streamed */
    uint32_t k;      /* --top */
    uint64_t limit;  /* --limit */
    uint64_t reps;
    int threads;
    uint64_t timeout_ms;   /* 0 = none */
    uint64_t memory_limit; /* bytes for the run arenas of all threads */
} run_opts;

/* --limit: rows go out in batches as they are found (any number of them). */
typedef struct stream {
    qr_par_search *ps;
    qr_buf *out;
    int write; /* the first run writes; --repeat runs only time */
    uint64_t rows;
} stream;

static int stream_rows(void *ctx, const qr_hit *hits, uint32_t n, qr_err *e)
{
    stream *s = ctx;
    qr_buf_clear(s->out);
    if (qr_par_rows(s->ps, hits, n, s->out, e) != 0)
        return -1;
    s->rows += n;
    return s->write ? qr_write_all(STDOUT_FILENO, s->out->p, s->out->len, "stdout", e) : 0;
}

static void explain_hits(const run_opts *o, qr_table *t, const qr_hit *h, uint32_t n,
                         const qr_topk_stats *st)
{
    for (uint32_t i = 0; i < n; i++) {
        if (o->by == QR_BY_SCORE)
            fprintf(stderr, "#%u score %.6f", i + 1, h[i].score);
        else if (o->by == QR_BY_TIME)
            fprintf(stderr, "#%u ts %lld", i + 1, (long long)h[i].ts);
        else
            fprintf(stderr, "#%u", i + 1);
        fprintf(stderr, " segment %016llx row %u\n",
                (unsigned long long)t->man.segs[h[i].seg].id, h[i].doc);
    }
    uint64_t skipped = st->blocks_total - st->blocks_decoded;
    fprintf(stderr,
            "%llu of %u segments searched (%llu skipped whole by their score bound), %llu rows "
            "reached the heap, postings blocks: %llu of %llu skipped (%.1f%%)\n",
            (unsigned long long)st->segments, t->man.nsegs,
            (unsigned long long)st->segments_skipped, (unsigned long long)st->docs_collected,
            (unsigned long long)skipped, (unsigned long long)st->blocks_total,
            st->blocks_total ? 100.0 * (double)skipped / (double)st->blocks_total : 0.0);
}

/* What evaluation chose for each node of the tree, over the segments, into
 * out (printed after the hits: the search and its tree are gone by then). */
static void plan_text(const qr_par_search *ps, qr_buf *out)
{
    qr_plan pl;
    qr_plan_init(&pl);
    qr_par_plan(ps, &pl);
    qr_buf_put(out, "plan (per node: how it found its rows, in how many segments):\n", 62);
    qr_plan_print(&pl, ps->q[0], out);
    qr_plan_free(&pl);
}

/* The process's shared state: every search of this process takes its
 * segments from one cache and runs on one pool, as a server's queries do. */
typedef struct search_env {
    qr_segcache *cache;
    qr_pool *pool; /* NULL: every job on the calling thread */
} search_env;

/* Count, or find and print the top / first rows, `reps` times (1 = once):
 * each time a fresh search over the table's segments from the cache (the
 * first one opens them), set up, run and freed, so with reps > 1 the hot
 * latency (to stderr) is what a query costs with the segments cached. */
static int run(qr_table *t, const search_env *env, const char *text, const run_opts *o,
               qr_err *e)
{
    uint32_t ns = t->man.nsegs;
    qr_segref **refs = calloc(ns ? ns : 1, sizeof *refs);
    double *lat = calloc(o->reps, sizeof *lat);
    int top = !o->count_only && o->by != QR_BY_NONE;
    qr_hit *hits = top ? malloc(sizeof *hits * (o->k ? o->k : 1)) : NULL;
    int rc = (!refs || !lat || (top && !hits)) ? qr_errf(e, QR_E_NOMEM, "out of memory") : 0;
    int threads = 1;
    uint64_t total = 0;
    uint32_t nhits = 0;
    double search_ms = 0;
    qr_topk_stats st;
    qr_buf out, plan;
    qr_buf_init(&out);
    qr_buf_init(&plan);
    for (uint64_t r = 0; r < o->reps && rc == 0; r++) {
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        qr_par_search ps;
        int open_threads = o->threads > 0 ? o->threads : qr_pool_threads(env->pool) + 1;
        if (qr_segcache_acquire_all(env->cache, t->dir, &t->man, refs, env->pool, open_threads,
                                    e) != 0) {
            rc = -1;
            break;
        }
        if (qr_par_init_refs(&ps, env->pool, t->def, refs, ns, text, strlen(text), o->threads,
                             e) != 0) {
            qr_segcache_release_all(refs, ns);
            rc = -1;
            break;
        }
        threads = ps.threads;
        if (o->memory_limit)
            qr_par_set_memory_limit(&ps, o->memory_limit);
        if (o->timeout_ms)
            qr_par_set_limits(&ps, NULL, qr_par_now_ns() + (int64_t)o->timeout_ms * 1000000);
        if (o->explain)
            qr_par_set_explain(&ps); /* the last run's plan is printed */
        if (o->count_only) {
            rc = qr_par_count(&ps, &total, e);
        } else if (!top) {
            stream sm = {&ps, &out, r == 0, 0};
            memset(&st, 0, sizeof st);
            rc = qr_par_first(&ps, o->limit, stream_rows, &sm, &st, e);
            total = sm.rows;
        } else {
            qr_buf_clear(&out);
            rc = qr_par_topk(&ps, o->by, o->k, o->exhaustive, hits, &nhits, &st, e);
            search_ms = ms_since(&t0);
            if (rc == 0)
                rc = qr_par_rows(&ps, hits, nhits, &out, e);
        }
        if (rc == 0 && o->explain && r + 1 == o->reps)
            plan_text(&ps, &plan); /* the last run's */
        qr_par_free(&ps);
        qr_segcache_release_all(refs, ns);
        lat[r] = ms_since(&t0);
        if (rc != 0 && o->timeout_ms && o->explain && !strcmp(e->code, QR_E_CANCELED))
            fprintf(stderr, "stopped %.3f ms after the start, %.3f ms past the %llu ms timeout\n",
                    lat[r], lat[r] - (double)o->timeout_ms, (unsigned long long)o->timeout_ms);
    }
    if (rc == 0) {
        if (o->count_only)
            printf("%llu\n", (unsigned long long)total);
        else if (top)
            rc = qr_write_all(STDOUT_FILENO, out.p, out.len, "stdout", e);
        if (rc == 0 && !top && !o->count_only && o->explain)
            fprintf(stderr, "%llu rows listed, %llu of %u segments searched\n",
                    (unsigned long long)total, (unsigned long long)st.segments, ns);
        if (rc == 0 && top && o->explain) {
            explain_hits(o, t, hits, nhits, &st);
            fprintf(stderr, "search %.3f ms, reading %u rows %.3f ms (last run)\n", search_ms,
                    nhits, lat[o->reps - 1] - search_ms);
        }
        if (rc == 0 && o->explain)
            fprintf(stderr, "%.*s", (int)plan.len, (const char *)plan.p);
        if (rc == 0 && o->reps > 1)
            cli_print_latency(lat, o->reps, threads);
        else if (rc == 0 && o->explain)
            fprintf(stderr, "%u segments, %d threads, %.3f ms\n", ns, threads, lat[0]);
    }
    qr_buf_free(&out);
    qr_buf_free(&plan);
    free(refs);
    free(lat);
    free(hits);
    return rc;
}

int cli_search(int argc, char **argv)
{
    static const struct option opts[] = {{"data", required_argument, 0, 'd'},
                                         {"table", required_argument, 0, 't'},
                                         {"count", no_argument, 0, 'c'},
                                         {"limit", required_argument, 0, 'l'},
                                         {"top", required_argument, 0, 'k'},
                                         {"by", required_argument, 0, 'b'},
                                         {"exhaustive", no_argument, 0, 'X'},
                                         {"explain", no_argument, 0, 'x'},
                                         {"repeat", required_argument, 0, 'r'},
                                         {"threads", required_argument, 0, 'j'},
                                         {"timeout", required_argument, 0, 'T'},
                                         {"memory-limit", required_argument, 0, 'M'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    cli_tune_malloc();
    const char *data = NULL, *table = NULL;
    run_opts o = {.by = QR_BY_NONE, .k = 10, .limit = 10, .reps = 1};
    int c, have_top = 0, have_by = 0, have_limit = 0;
    uint64_t v = 0;
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
            o.count_only = 1;
            break;
        case 'x':
            o.explain = 1;
            break;
        case 'X':
            o.exhaustive = 1;
            break;
        case 'l':
            if (cli_uint("--limit", optarg, UINT64_MAX, &o.limit) != 0)
                return 2;
            have_limit = 1;
            break;
        case 'k':
            if (cli_uint("--top", optarg, QR_TOPK_MAX, &v) != 0)
                return 2;
            o.k = (uint32_t)v;
            have_top = 1;
            break;
        case 'b':
            if (strcmp(optarg, "score") == 0) {
                o.by = QR_BY_SCORE;
            } else if (strcmp(optarg, "time") == 0) {
                o.by = QR_BY_TIME;
            } else {
                fprintf(stderr, "quarry search: --by takes score or time, not '%s'\n", optarg);
                return 2;
            }
            have_by = 1;
            break;
        case 'r':
            if (cli_uint("--repeat", optarg, 1000000, &o.reps) != 0 || o.reps == 0)
                return 2;
            break;
        case 'j':
            if (cli_uint("--threads", optarg, QR_MAX_SEARCH_THREADS, &v) != 0 || v == 0)
                return 2;
            o.threads = (int)v;
            break;
        case 'T':
            if (cli_uint("--timeout", optarg, 86400000, &o.timeout_ms) != 0 || o.timeout_ms == 0)
                return 2;
            break;
        case 'M':
            if (cli_uint("--memory-limit", optarg, 1ull << 40, &o.memory_limit) != 0 ||
                o.memory_limit < (1u << 20)) {
                if (o.memory_limit && o.memory_limit < (1u << 20))
                    fputs("quarry: --memory-limit: at least 1048576 bytes\n", stderr);
                return 2;
            }
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
    if ((have_top && have_limit) || (have_by && !have_top) ||
        (o.count_only && (have_top || have_limit))) {
        fputs("quarry search: use one of --count, --limit N, --top N [--by score|time]\n", stderr);
        return 2;
    }
    if (have_top && !have_by)
        o.by = QR_BY_SCORE;
    if (!o.threads)
        o.threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    const char *text = argv[optind];
    qr_err e;
    qr_err_clear(&e);
    qr_table *t = qr_table_open(data, table, QR_TABLE_READ, &e);
    if (!t) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_query *q = qr_query_parse_for(t->def, text, strlen(text), &a, &e);
    if (!q) {
        cli_fail(e.code, e.msg);
        qr_arena_free(&a);
        qr_table_close(t);
        return 1;
    }
    if (o.explain) {
        char buf[4096];
        qr_query_print(q, buf, sizeof buf);
        fprintf(stderr, "query: %s\n", buf);
    }
    qr_query_release(q);
    qr_arena_free(&a);
    /* one pool of workers (the caller is the first) and one cache */
    search_env env = {NULL, NULL};
    int threads = o.threads < (int)t->man.nsegs ? o.threads : (int)t->man.nsegs;
    if (threads > 1) {
        qr_err pe; /* no pool: the jobs run on the caller, answers unchanged */
        env.pool = qr_pool_new(threads - 1, &pe);
    }
    int r = -1;
    if ((env.cache = qr_segcache_new(NULL, &e)))
        r = run(t, &env, text, &o, &e);
    qr_segcache_free(env.cache);
    qr_pool_free(env.pool);
    qr_table_close(t);
    if (r != 0) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    return 0;
}
