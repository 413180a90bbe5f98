/* test_par_stress.c - the search core under concurrent load: 8 client
 * threads run a fixed list of mixed queries over one shared table (one
 * qr_table, its qr_segment handles, one qr_pool) and every answer must be
 * the one computed single-threaded beforehand (1 worker, no pool).
 *
 * Every query kind (term, AND, OR, atleast, NOT, phrase, gap and proximity
 * phrases, prefix, regexp, LIKE, fuzzy, keyword fields, number and time
 * ranges, column scans, mixtures) in four modes: count; top-k by score
 * (hits compared bit for bit, scores included); top-k by time; first-k;
 * each with k of 1, 10 and 100. The hits of the last three are read back
 * with qr_par_rows and compared byte for byte.
 *
 * Each client picks queries and modes from its own seeded PRNG and runs
 * them with 1 or 2 workers on the shared pool, through a small cache of
 * searches of its own (so a search is reused, its automata and column
 * readers kept, and others are made and freed while the rest run). Some
 * iterations stop: a cancel flag set beforehand or a deadline already past
 * must fail with QR_E_CANCELED (57014) and the next query on that search
 * must give the right answer; a deadline a few milliseconds away, or a
 * flag that a canceller thread sets at random moments, may stop the
 * search or not, and if not the answer must be right.
 *
 * The run lasts QUARRY_STRESS_SECONDS (default 2: `make test` runs this
 * optimised and under ASan) and at most QUARRY_STRESS_ITERS iterations per
 * client (default 1000 a second; each client does at least 4);
 * QUARRY_STRESS_SEED changes the clients' seeds. `make
 * tsan-stress` runs it under ThreadSanitizer for 20 s. Nothing here is
 * timed: the counts printed at the end are for a reader, not asserted. */
#include "search/oracle.h" /* the generator and the test helpers */

#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>

#include "index/table.h"
#include "search/parallel.h"
#include "search/topk.h"
#include "util/err.h"

#define STRESS_SEED  20251207u
#define NSEGS        5
#define NCLIENTS     8
#define POOL_THREADS 2
#define NCACHE       3   /* searches a client keeps */
#define K_MAX        100 /* the largest k asked for */
#define MAX_REPORTS  40  /* mismatch lines printed (all are counted) */

/* Rows per segment (tens of thousands in all). Generated rows go to the
 * segments in runs of 997, round robin, so every segment spans the whole
 * time range and newest-first must merge them all. */
static const uint32_t seg_rows[NSEGS] = {16000, 11000, 14000, 9000, 12000};

static const char *qs[] = {
    /* single terms */
    "failed", "payment", "cache", "nosuchterm",
    /* AND, OR, atleast, NOT */
    "failed AND order", "error AND charge AND card", "error OR failed",
    "cache OR payment OR refused", "atleast(2, error, failed, charge, cache)",
    "atleast(3, error, failed, charge, cache, order)", "error AND NOT cache", "NOT failed",
    "error -cache",
    /* phrases: plain, with gaps, proximity */
    "\"failed to place order\"", "\"place order\"", "\"failed ? ? order\"", "\"failed ? place\"",
    "\"failed order\"~2", "\"charge card\"~5",
    /* multi-term */
    "ord*", "conn*", "/c.che/", "/ord(er|ers)?/", "/[0-9]{3}/", "like:%tion", "like:c_che",
    "cahce~1", "paymnet~2", "ordre~1",
    /* keyword fields, number and time ranges */
    "service:cart", "severity:ERROR", "scope:cart.cartstore.ValkeyCartStore", "sevnum:>=13",
    "sevnum:[5 TO 9]", "time:[2025-09-23T00:00:00.01Z TO 2025-09-23T00:00:00.03Z]",
    "time:>=2025-09-23T00:00:00.08Z", "trace:e1466f794485c1df0d54a46e6400e848",
    /* columns without an index: scans (a number, a dictionary-coded text,
     * a hex id) */
    "TraceFlags:=1 AND payment", "ResourceSchemaUrl:\"https://opentelemetry.io/schemas/1.26.0\"",
    "SpanId:0ab6ac0e05751c22 OR cahce~1",
    /* mixtures */
    "(error OR failed) AND (order OR charge) AND NOT cache", "(cahce~1 OR /c.rd/) AND failed",
    "service:cart AND sevnum:>=13", "like:%tion AND NOT cache",
    "\"failed to place order\" AND NOT cache",
    "time:[2025-09-23T00:00:00.02Z TO 2025-09-23T00:00:00.07Z] AND (error OR payment)",
    "severity:ERROR AND (ord* OR \"charge card\"~3)"};
enum { NQ = sizeof qs / sizeof *qs };

typedef enum { M_COUNT, M_SCORE, M_TIME, M_FIRST, NMODES } mode;
static const char *mode_name[NMODES] = {"count", "by score", "by time", "first"};

/* What a run asks for: a mode and a k (none for a count). A smaller k
 * prunes harder: top-1 by score lives on the shared threshold. */
static const struct variant {
    mode m;
    uint32_t k;
} variants[] = {{M_COUNT, 0}, {M_SCORE, 1},    {M_SCORE, 10}, {M_SCORE, K_MAX}, {M_TIME, 1},
                {M_TIME, 10}, {M_TIME, K_MAX}, {M_FIRST, 1},  {M_FIRST, 10},    {M_FIRST, K_MAX}};
enum { NVARIANTS = sizeof variants / sizeof *variants };

/* One answer: the count, or the hits and their rows. */
typedef struct answer {
    uint64_t count;
    qr_hit hits[K_MAX];
    uint32_t nhits, cap;
    qr_buf rows;
} answer;

/* ---- the table: built once, shared by every client ---- */
static struct {
    char *dir;
    qr_table *t;
    qr_segment *segs[NSEGS];
    qr_pool *pool;
    answer want[NQ][NVARIANTS];
} tb;

static void build_table(void)
{
    qr_err e;
    tb.dir = tu_tmpdir();
    assert_non_null(tb.dir);
    tu_create_otel_table(tb.dir, "logs");
    qr_table *w = qr_table_open(tb.dir, "logs", QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    if (!w)
        fail_msg("open for writing: %s", e.msg);
    qr_buf text[NSEGS];
    uint32_t left[NSEGS], total = 0;
    for (int s = 0; s < NSEGS; s++) {
        qr_buf_init(&text[s]);
        left[s] = seg_rows[s];
        total += seg_rows[s];
    }
    gen_ctx *g = gen_new(STRESS_SEED, 0);
    assert_non_null(g);
    for (int s = 0; total > 0; s = (s + 1) % NSEGS)
        for (int i = 0; i < 997 && left[s] > 0; i++, left[s]--, total--)
            gen_row(g, &text[s]);
    gen_free(g);
    uint64_t id = qr_table_reserve_ids(w, NSEGS);
    qr_seg_entry add[NSEGS];
    for (int s = 0; s < NSEGS; s++) {
        qr_buf_put_u8(&text[s], 0);
        assert_false(text[s].oom);
        qr_batch b;
        assert_int_equal(qr_batch_init(&b, w->def, seg_rows[s], &e), 0);
        tu_fill_batch(&b, (const char *)text[s].p);
        char path[PATH_MAX];
        qr_table_seg_path(w, id + (uint64_t)s, path, sizeof path);
        qr_seg_summary sum;
        if (qr_segment_build(path, &b, NULL, &sum, &e) != 0)
            fail_msg("%s", e.msg);
        add[s] = (qr_seg_entry){id + (uint64_t)s, sum.rows, sum.min_ts, sum.max_ts, sum.file_bytes, 0, 0};
        qr_batch_free(&b);
        qr_buf_free(&text[s]);
    }
    if (qr_table_commit(w, add, NSEGS, &e) != 0)
        fail_msg("commit: %s", e.msg);
    qr_table_close(w);
}

static int setup(void **st)
{
    (void)st;
    qr_err e;
    build_table();
    if (!(tb.t = qr_table_open(tb.dir, "logs", QR_TABLE_READ, &e)))
        fail_msg("open: %s", e.msg);
    assert_int_equal(tb.t->man.nsegs, NSEGS);
    for (int s = 0; s < NSEGS; s++) {
        char path[PATH_MAX];
        qr_table_seg_path(tb.t, tb.t->man.segs[s].id, path, sizeof path);
        if (!(tb.segs[s] = qr_seg_open(path, &e)))
            fail_msg("%s", e.msg);
    }
    if (!(tb.pool = qr_pool_new(POOL_THREADS, &e)))
        fail_msg("%s", e.msg);
    for (int q = 0; q < NQ; q++)
        for (int v = 0; v < NVARIANTS; v++)
            qr_buf_init(&tb.want[q][v].rows);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    for (int q = 0; q < NQ; q++)
        for (int v = 0; v < NVARIANTS; v++)
            qr_buf_free(&tb.want[q][v].rows);
    qr_pool_free(tb.pool);
    for (int s = 0; s < NSEGS; s++)
        qr_seg_close(tb.segs[s]);
    qr_table_close(tb.t);
    tu_rmdir(tb.dir);
    return 0;
}

/* ---- running one mode ---- */
static int init_search(qr_par_search *ps, qr_pool *pool, int q, int workers, qr_err *e)
{
    return qr_par_init_pool(ps, pool, tb.t->def, tb.segs, NSEGS, qs[q], strlen(qs[q]), workers, e);
}

static int collect_first(void *ctx, const qr_hit *h, uint32_t n, qr_err *e)
{
    answer *a = ctx;
    if (a->nhits + n > a->cap)
        return qr_errf(e, QR_E_INTERNAL, "first-k: more than %u hits", a->cap);
    memcpy(a->hits + a->nhits, h, sizeof *h * n);
    a->nhits += n;
    return 0;
}

/* Run variant v on ps into a (a->rows cleared first): 0, or -1 with e set. */
static int run_variant(qr_par_search *ps, int v, int exhaustive, answer *a, qr_err *e)
{
    uint32_t k = variants[v].k;
    a->count = 0;
    a->nhits = 0;
    a->cap = k;
    qr_buf_clear(&a->rows);
    int rc;
    switch (variants[v].m) {
    case M_COUNT:
        return qr_par_count(ps, &a->count, e);
    case M_SCORE:
        rc = qr_par_topk(ps, QR_BY_SCORE, k, exhaustive, a->hits, &a->nhits, NULL, e);
        break;
    case M_TIME:
        rc = qr_par_topk(ps, QR_BY_TIME, k, 0, a->hits, &a->nhits, NULL, e);
        break;
    default:
        rc = qr_par_first(ps, k, collect_first, a, NULL, e);
        break;
    }
    if (rc == 0)
        rc = qr_par_rows(ps, a->hits, a->nhits, &a->rows, e);
    a->count = a->nhits;
    return rc;
}

/* 1 when got is want; else 0 with what differs in why. */
static int same_answer(const answer *got, const answer *want, char *why, size_t n)
{
    if (got->count != want->count) {
        snprintf(why, n, "count %" PRIu64 ", want %" PRIu64, got->count, want->count);
        return 0;
    }
    if (got->nhits != want->nhits) {
        snprintf(why, n, "%u hits, want %u", got->nhits, want->nhits);
        return 0;
    }
    for (uint32_t i = 0; i < got->nhits; i++) {
        const qr_hit *x = &got->hits[i], *y = &want->hits[i];
        if (x->seg != y->seg || x->doc != y->doc || x->ts != y->ts ||
            memcmp(&x->score, &y->score, sizeof x->score) != 0) {
            snprintf(why, n,
                     "hit %u: segment %u row %u score %a ts %" PRId64
                     ", want segment %u row %u score %a ts %" PRId64,
                     i, x->seg, x->doc, x->score, x->ts, y->seg, y->doc, y->score, y->ts);
            return 0;
        }
    }
    if (got->rows.len != want->rows.len ||
        (got->rows.len && memcmp(got->rows.p, want->rows.p, got->rows.len) != 0)) {
        size_t at = 0;
        while (at < got->rows.len && at < want->rows.len && got->rows.p[at] == want->rows.p[at])
            at++;
        snprintf(why, n, "rows differ at byte %zu (%zu bytes, want %zu)", at, got->rows.len,
                 want->rows.len);
        return 0;
    }
    return 1;
}

/* ---- the single-threaded answers ---- */
/* The variant of mode m with the largest k. */
static int widest(mode m)
{
    int w = -1;
    for (int v = 0; v < NVARIANTS; v++)
        if (variants[v].m == m && (w < 0 || variants[v].k > variants[w].k))
            w = v;
    return w;
}

static void test_single_threaded_answers(void **st)
{
    (void)st;
    int nonzero = 0;
    for (int q = 0; q < NQ; q++) {
        qr_par_search ps;
        qr_err e;
        if (init_search(&ps, NULL, q, 1, &e) != 0)
            fail_msg("'%s': %s", qs[q], e.msg);
        for (int v = 0; v < NVARIANTS; v++)
            if (run_variant(&ps, v, 0, &tb.want[q][v], &e) != 0)
                fail_msg("'%s' %s %u: %s", qs[q], mode_name[variants[v].m], variants[v].k, e.msg);
        qr_par_free(&ps);
        /* the answers agree with each other: min(k, count) hits, and in a
         * total order the best k are the first k of the best K_MAX */
        uint64_t c = tb.want[q][0].count;
        for (int v = 1; v < NVARIANTS; v++) {
            const answer *a = &tb.want[q][v], *all = &tb.want[q][widest(variants[v].m)];
            assert_int_equal(a->nhits, c < variants[v].k ? c : variants[v].k);
            assert_memory_equal(a->hits, all->hits, sizeof *a->hits * a->nhits);
            assert_true(a->rows.len <= all->rows.len);
            assert_memory_equal(a->rows.p, all->rows.p, a->rows.len);
        }
        nonzero += c > 0;
    }
    assert_int_equal(tb.want[3][0].count, 0); /* nosuchterm */
    assert_int_equal(nonzero, NQ - 1);
}

/* ---- the clients ---- */
typedef enum {
    S_NONE,  /* no stop condition */
    S_FLAG,  /* cancel flag set before the call: must stop */
    S_PAST,  /* deadline already past: must stop */
    S_SOON,  /* deadline 0-2 ms away: may stop */
    S_ASYNC, /* flag the canceller thread may set: may stop */
    NSTOPS
} stop_kind;
static const char *stop_name[NSTOPS] = {"", ", canceled before", ", deadline past",
                                        ", deadline soon", ", canceled while running"};

typedef struct cached {
    qr_par_search ps;
    int q, workers, live;
} cached;

typedef struct client {
    int id;
    atomic_int async_cancel; /* the canceller thread sets it at random */
    uint64_t rng, max_iters;
    int64_t end_ns;
    cached cache[NCACHE];
    answer got;
    /* what happened */
    uint64_t iters, runs[NMODES], stopped[NSTOPS], completed[NSTOPS], mismatches, errors;
} client;

static client clients[NCLIENTS];
static atomic_int reports, stop_canceller;

/* One line naming the query, the variant and how it was run. */
static void report(const client *c, int q, int v, int workers, stop_kind s, const char *what)
{
    char how[64];
    if (v < 0)
        snprintf(how, sizeof how, "init");
    else if (variants[v].m == M_COUNT)
        snprintf(how, sizeof how, "count");
    else if (variants[v].m == M_FIRST)
        snprintf(how, sizeof how, "first %u with rows", variants[v].k);
    else
        snprintf(how, sizeof how, "top-%u %s with rows", variants[v].k, mode_name[variants[v].m]);
    if (atomic_fetch_add(&reports, 1) < MAX_REPORTS)
        fprintf(stderr, "client %d iteration %" PRIu64 ": '%s' %s (%d worker%s%s): %s\n", c->id,
                c->iters, qs[q], how, workers, workers > 1 ? "s" : "", stop_name[s], what);
}

static uint32_t pick(client *c, uint32_t n) { return (uint32_t)(tu_rand(&c->rng) >> 16) % n; }

/* The client's search for query q with `workers` workers: a cached one, or
 * a new one in place of a random slot. NULL with e set on error. */
static cached *get_search(client *c, int q, int workers, qr_err *e)
{
    for (int i = 0; i < NCACHE; i++)
        if (c->cache[i].live && c->cache[i].q == q && c->cache[i].workers == workers)
            return &c->cache[i];
    cached *s = &c->cache[pick(c, NCACHE)];
    if (s->live)
        qr_par_free(&s->ps);
    s->live = 0;
    if (init_search(&s->ps, tb.pool, q, workers, e) != 0)
        return NULL;
    s->q = q;
    s->workers = workers;
    s->live = 1;
    return s;
}

static void *run_client(void *arg)
{
    client *c = arg;
    cached *after_stop = NULL; /* a stopped search: its next query must work */
    for (; c->iters < c->max_iters && (c->iters < 4 || qr_par_now_ns() < c->end_ns); c->iters++) {
        qr_err e;
        qr_err_clear(&e);
        cached *s = after_stop;
        if (!s) {
            int q;
            uint32_t r = pick(c, 2 * NCACHE);
            if (r < NCACHE && c->cache[r].live) /* half the time a search kept */
                s = &c->cache[r];
            else if (q = (int)pick(c, NQ), !(s = get_search(c, q, 1 + (int)pick(c, 2), &e))) {
                report(c, q, -1, 0, S_NONE, e.msg);
                c->errors++;
                continue;
            }
        }
        int v = (int)pick(c, NVARIANTS);
        mode m = variants[v].m;
        stop_kind k = S_NONE;
        if (!after_stop) {
            uint32_t r = pick(c, 32);
            k = r < 2 ? S_FLAG : r < 4 ? S_PAST : r < 6 ? S_SOON : r < 8 ? S_ASYNC : S_NONE;
        }
        after_stop = NULL;
        atomic_int now_cancel = 1;
        switch (k) {
        case S_FLAG:
            qr_par_set_limits(&s->ps, &now_cancel, 0);
            break;
        case S_PAST:
            qr_par_set_limits(&s->ps, NULL, qr_par_now_ns() - 1 - (int64_t)pick(c, 1000000));
            break;
        case S_SOON:
            qr_par_set_limits(&s->ps, NULL, qr_par_now_ns() + (int64_t)pick(c, 2000000));
            break;
        case S_ASYNC:
            atomic_store(&c->async_cancel, 0);
            qr_par_set_limits(&s->ps, &c->async_cancel, 0);
            break;
        default:
            break;
        }
        int exhaustive = m == M_SCORE && pick(c, 8) == 0;
        int rc = run_variant(&s->ps, v, exhaustive, &c->got, &e);
        qr_par_set_limits(&s->ps, NULL, 0);
        c->runs[m]++;
        const answer *want = &tb.want[s->q][v];
        char why[512];
        if (rc != 0) {
            if (k == S_NONE || strcmp(e.code, QR_E_CANCELED) != 0) {
                report(c, s->q, v, s->workers, k, e.msg);
                c->errors++;
            } else if (k == S_FLAG && strcmp(e.msg, "canceling statement due to user request")) {
                report(c, s->q, v, s->workers, k, e.msg);
                c->errors++;
            } else if (k == S_PAST &&
                       strcmp(e.msg, "canceling statement due to statement timeout")) {
                report(c, s->q, v, s->workers, k, e.msg);
                c->errors++;
            } else {
                c->stopped[k]++;
                after_stop = s;
            }
        } else if (k == S_FLAG || k == S_PAST) {
            report(c, s->q, v, s->workers, k, "not stopped");
            c->errors++;
        } else if (!same_answer(&c->got, want, why, sizeof why)) {
            report(c, s->q, v, s->workers, k, why);
            c->mismatches++;
        } else {
            c->completed[k]++;
        }
    }
    for (int i = 0; i < NCACHE; i++)
        if (c->cache[i].live)
            qr_par_free(&c->cache[i].ps);
    return NULL;
}

/* Sets a random client's async flag every ~200 us until told to stop. */
static void *run_canceller(void *arg)
{
    uint64_t rng = *(const uint64_t *)arg;
    while (!atomic_load(&stop_canceller)) {
        struct timespec d = {0, 100000 + (long)(tu_rand(&rng) % 200000)};
        nanosleep(&d, NULL);
        atomic_store(&clients[tu_rand(&rng) % NCLIENTS].async_cancel, 1);
    }
    return NULL;
}

static double env_num(const char *name, double dflt)
{
    const char *v = getenv(name);
    char *end;
    double x = v && *v ? strtod(v, &end) : dflt;
    if (v && *v && (*end || x < 0))
        fail_msg("%s=%s: want a number >= 0", name, v);
    return x;
}

static void test_eight_clients_agree_with_one_thread(void **st)
{
    (void)st;
    double seconds = env_num("QUARRY_STRESS_SECONDS", 2);
    /* the time ends a run; the cap (1000 a second per client by default, a
     * few times what a fast machine does) only bounds it */
    uint64_t max_iters =
        (uint64_t)env_num("QUARRY_STRESS_ITERS", 1000 * (seconds < 1 ? 1 : seconds));
    uint64_t seed = (uint64_t)env_num("QUARRY_STRESS_SEED", 1);
    int64_t start = qr_par_now_ns();
    pthread_t tid[NCLIENTS], canceller;
    for (int i = 0; i < NCLIENTS; i++) {
        client *c = &clients[i];
        memset(c, 0, sizeof *c);
        c->id = i;
        c->rng = (seed + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)(i + 1) * 0xBF58476D1CE4E5B9ull;
        c->max_iters = max_iters;
        c->end_ns = start + (int64_t)(seconds * 1e9);
        qr_buf_init(&c->got.rows);
        atomic_init(&c->async_cancel, 0);
    }
    uint64_t crng = seed * 0x94D049BB133111EBull + 1;
    atomic_store(&stop_canceller, 0);
    assert_int_equal(pthread_create(&canceller, NULL, run_canceller, &crng), 0);
    for (int i = 0; i < NCLIENTS; i++)
        assert_int_equal(pthread_create(&tid[i], NULL, run_client, &clients[i]), 0);
    for (int i = 0; i < NCLIENTS; i++)
        pthread_join(tid[i], NULL);
    atomic_store(&stop_canceller, 1);
    pthread_join(canceller, NULL);
    double took = (double)(qr_par_now_ns() - start) / 1e9;

    uint64_t iters = 0, runs[NMODES] = {0}, stopped[NSTOPS] = {0}, completed[NSTOPS] = {0};
    uint64_t mismatches = 0, errors = 0;
    for (int i = 0; i < NCLIENTS; i++) {
        client *c = &clients[i];
        iters += c->iters;
        for (int m = 0; m < NMODES; m++)
            runs[m] += c->runs[m];
        for (int k = 0; k < NSTOPS; k++) {
            stopped[k] += c->stopped[k];
            completed[k] += c->completed[k];
        }
        mismatches += c->mismatches;
        errors += c->errors;
        qr_buf_free(&c->got.rows);
    }
    printf("stress: %d clients, %.1f s, seed %" PRIu64 ": %" PRIu64 " iterations (count %" PRIu64
           ", by score %" PRIu64 ", by time %" PRIu64 ", first-k %" PRIu64 "); stopped: "
           "flag %" PRIu64 ", past deadline %" PRIu64 ", near deadline %" PRIu64 " of %" PRIu64
           ", async flag %" PRIu64 " of %" PRIu64 "; %" PRIu64 " mismatches, %" PRIu64 " errors\n",
           NCLIENTS, took, seed, iters, runs[M_COUNT], runs[M_SCORE], runs[M_TIME], runs[M_FIRST],
           stopped[S_FLAG], stopped[S_PAST], stopped[S_SOON], stopped[S_SOON] + completed[S_SOON],
           stopped[S_ASYNC], stopped[S_ASYNC] + completed[S_ASYNC], mismatches, errors);
    assert_int_equal(mismatches, 0);
    assert_int_equal(errors, 0);
    for (int m = 0; m < NMODES && iters >= 200; m++)
        assert_true(runs[m] > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_threaded_answers),
        cmocka_unit_test(test_eight_clients_agree_with_one_thread),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
