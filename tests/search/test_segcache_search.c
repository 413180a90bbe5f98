/* test_segcache_search.c - searches over a shared segment cache
 * (qr_par_init_refs): a fresh search per query finds every segment, field
 * and row reader already open and answers as a search over its own
 * segments does; then 4 client threads acquire, search (counts, top-k by
 * score / by time / first-k, row reads) and release on a shared pool while
 * a fifth invalidates segments under them, with a cache smaller than the
 * table: the clients search the whole table or one segment of it, so
 * entries fall idle, are evicted and reopened while others search them,
 * and every answer must equal the single-threaded one. */
#include "oracle.h"

#include <pthread.h>
#include <sched.h>

#include "index/segcache.h"
#include "search/topk.h"

ORACLE_FIXTURE

static const char *qs[] = {"failed", "error OR failed",           "failed AND order",
                           "ord*",   "\"failed to place order\"", "service:cart AND sevnum:>=13"};
enum { NQ = sizeof qs / sizeof *qs, K = 20, ORDERS = 3 };

typedef struct answer {
    uint64_t count;
    qr_hit hits[ORDERS][K];
    uint32_t nhits[ORDERS];
    qr_buf rows; /* the by-score hits' rows */
} answer;

/* What a client searches: the whole table (0) or segment v-1 alone. */
enum { NVIEW = NSEG + 1 };

static answer want[NQ][NVIEW];
static char *tdir; /* the table directory: od's segments as seg-<id>.qseg */
static qr_seg_entry entries[NSEG];
static qr_manifest man, view[NVIEW];

/* Answer with search p (set up by the caller); frees p. */
static int answer_with(qr_par_search *p, answer *a, qr_err *e)
{
    qr_buf_init(&a->rows);
    int rc = qr_par_count(p, &a->count, e);
    static const qr_topk_by by[ORDERS] = {QR_BY_SCORE, QR_BY_TIME, QR_BY_NONE};
    for (int o = 0; o < ORDERS && rc == 0; o++)
        rc = qr_par_topk(p, by[o], K, 0, a->hits[o], &a->nhits[o], NULL, e);
    if (rc == 0)
        rc = qr_par_rows(p, a->hits[0], a->nhits[0], &a->rows, e);
    qr_par_free(p);
    return rc;
}

/* A fresh search of query i over view v from the cache: acquire, set up,
 * answer, release. */
static int answer_cached(qr_segcache *c, qr_pool *pool, int threads, int i, int v, answer *a,
                         qr_err *e)
{
    qr_segref *refs[NSEG];
    const qr_manifest *m = &view[v];
    if (qr_segcache_acquire_all(c, tdir, m, refs, NULL, 1, e) != 0)
        return -1;
    qr_par_search ps;
    int rc =
        qr_par_init_refs(&ps, pool, tu_otel(), refs, m->nsegs, qs[i], strlen(qs[i]), threads, e);
    if (rc == 0)
        rc = answer_with(&ps, a, e);
    else
        qr_buf_init(&a->rows);
    qr_segcache_release_all(refs, m->nsegs);
    return rc;
}

static int same_answer(const answer *x, const answer *y)
{
    if (x->count != y->count || x->rows.len != y->rows.len ||
        (x->rows.len && memcmp(x->rows.p, y->rows.p, x->rows.len) != 0))
        return 0;
    for (int o = 0; o < ORDERS; o++)
        if (x->nhits[o] != y->nhits[o] ||
            memcmp(x->hits[o], y->hits[o], sizeof(qr_hit) * x->nhits[o]) != 0)
            return 0;
    return 1;
}

static int group_setup(void **st)
{
    setup(st);
    tdir = tu_tmpdir();
    for (int s = 0; s < NSEG; s++) {
        char from[4200], to[4200];
        snprintf(from, sizeof from, "%s/s%d.qseg", od.dir, s);
        qr_seg_path_in(tdir, (uint64_t)s, to, sizeof to);
        assert_int_equal(link(from, to), 0);
        entries[s] = (qr_seg_entry){.id = (uint64_t)s, .rows = od.segs[s]->rows};
    }
    man = (qr_manifest){.generation = 1, .next_id = NSEG, .nsegs = NSEG, .segs = entries};
    view[0] = man;
    for (int v = 1; v < NVIEW; v++)
        view[v] =
            (qr_manifest){.generation = 1, .next_id = NSEG, .nsegs = 1, .segs = &entries[v - 1]};
    qr_err e;
    for (int i = 0; i < NQ; i++) /* the reference: own segments, one thread */
        for (int v = 0; v < NVIEW; v++) {
            qr_par_search ps;
            qr_segment **segs = v ? &od.segs[v - 1] : od.segs;
            assert_int_equal(
                qr_par_init(&ps, tu_otel(), segs, view[v].nsegs, qs[i], strlen(qs[i]), 1, &e), 0);
            if (answer_with(&ps, &want[i][v], &e) != 0)
                fail_msg("'%s': %s", qs[i], e.msg);
            assert_true(v || want[i][v].count > 0);
        }
    return 0;
}

static int group_teardown(void **st)
{
    for (int i = 0; i < NQ; i++)
        for (int v = 0; v < NVIEW; v++)
            qr_buf_free(&want[i][v].rows);
    tu_rmdir(tdir);
    return teardown(st);
}

static void test_fresh_searches_reuse_what_the_cache_opened(void **st)
{
    (void)st;
    qr_err e;
    qr_segcache *c = qr_segcache_new(NULL, &e);
    assert_non_null(c);
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < NQ; i++) {
            answer got;
            if (answer_cached(c, NULL, 1 + i % 2, i, 0, &got, &e) != 0)
                fail_msg("'%s': %s", qs[i], e.msg);
            if (!same_answer(&got, &want[i][0]))
                fail_msg("'%s' over the cache differs", qs[i]);
            qr_buf_free(&got.rows);
        }
    qr_segcache_stats s;
    qr_segcache_get_stats(c, &s);
    assert_int_equal(s.misses, NSEG); /* each segment opened once */
    assert_int_equal(s.held, 0);
    uint64_t opens = s.reader_opens;
    answer got; /* the third time: no reader opened either */
    assert_int_equal(answer_cached(c, NULL, 2, 0, 0, &got, &e), 0);
    qr_buf_free(&got.rows);
    qr_segcache_get_stats(c, &s);
    assert_int_equal(s.reader_opens, opens);
    assert_true(s.reader_reuses > 0);
    /* a caller-built tree over the handles answers the same */
    for (int i = 0; i < NQ; i++) {
        qr_arena a;
        qr_arena_init(&a, 1 << 12, 0);
        qr_query *tree = qr_query_parse_for(tu_otel(), qs[i], strlen(qs[i]), &a, &e);
        assert_non_null(tree);
        qr_segref *refs[NSEG];
        assert_int_equal(qr_segcache_acquire_all(c, tdir, &man, refs, NULL, 1, &e), 0);
        qr_par_search ps;
        assert_int_equal(qr_par_init_refs_tree(&ps, NULL, tu_otel(), refs, NSEG, tree, 2, &e), 0);
        if (answer_with(&ps, &got, &e) != 0 || !same_answer(&got, &want[i][0]))
            fail_msg("'%s' from a tree over the cache differs (%s)", qs[i], e.msg);
        qr_buf_free(&got.rows);
        qr_segcache_release_all(refs, NSEG);
        qr_query_release(tree);
        qr_arena_free(&a);
    }
    qr_segcache_free(c);
}

static atomic_int queries_done; /* by every client: paces the invalidator */

typedef struct client {
    qr_segcache *c;
    qr_pool *pool;
    int id, rounds, failures;
    qr_err err;
} client;

static void *run_client(void *arg)
{
    client *cl = arg;
    for (int r = 0; r < cl->rounds; r++) {
        int i = (r + cl->id) % NQ, v = (r * 7 + cl->id) % NVIEW;
        answer got;
        if (answer_cached(cl->c, cl->pool, 1 + (r + cl->id) % 2, i, v, &got, &cl->err) != 0 ||
            !same_answer(&got, &want[i][v])) {
            fprintf(stderr, "client %d round %d: '%s' on view %d differs (%s)\n", cl->id, r, qs[i],
                    v, cl->err.msg);
            cl->failures++;
        }
        qr_buf_free(&got.rows);
        atomic_fetch_add(&queries_done, 1);
    }
    return NULL;
}

typedef struct invalidator {
    qr_segcache *c;
    atomic_int stop;
    int rounds;
} invalidator;

/* Every few queries, drop a segment from the manifest (while clients hold
 * it) and put it back: the held entries stay usable, the next acquire
 * reopens. */
static void *run_invalidator(void *arg)
{
    invalidator *iv = arg;
    qr_seg_entry less[NSEG];
    int seen = 0;
    while (!atomic_load(&iv->stop)) {
        if (atomic_load(&queries_done) < seen + 3) {
            usleep(100);
            continue;
        }
        seen = atomic_load(&queries_done);
        int k = iv->rounds++ % NSEG, n = 0;
        for (int s = 0; s < NSEG; s++)
            if (s != k)
                less[n++] = entries[s];
        qr_manifest m = {.generation = 2, .next_id = NSEG, .nsegs = (uint32_t)n, .segs = less};
        qr_segcache_invalidate(iv->c, tdir, &m);
        sched_yield();
        qr_segcache_invalidate(iv->c, tdir, &man); /* drops nothing */
    }
    return NULL;
}

static void test_four_clients_race_eviction_and_invalidation(void **st)
{
    (void)st;
    qr_err e;
    /* smaller than the table: every search holds more than the cache keeps */
    qr_segcache_opts o = {.max_segments = 2, .max_readers = 8};
    qr_segcache *c = qr_segcache_new(&o, &e);
    qr_pool *pool = qr_pool_new(2, &e);
    assert_non_null(c);
    assert_non_null(pool);
    enum { CLIENTS = 4 };
    pthread_t tid[CLIENTS], itid;
    client cl[CLIENTS];
    invalidator iv = {.c = c};
    atomic_init(&iv.stop, 0);
    assert_int_equal(pthread_create(&itid, NULL, run_invalidator, &iv), 0);
    for (int t = 0; t < CLIENTS; t++) {
        cl[t] = (client){.c = c, .pool = pool, .id = t, .rounds = 8 * NQ};
        assert_int_equal(pthread_create(&tid[t], NULL, run_client, &cl[t]), 0);
    }
    for (int t = 0; t < CLIENTS; t++)
        pthread_join(tid[t], NULL);
    atomic_store(&iv.stop, 1);
    pthread_join(itid, NULL);
    for (int t = 0; t < CLIENTS; t++)
        assert_int_equal(cl[t].failures, 0);
    qr_segcache_stats s;
    qr_segcache_get_stats(c, &s);
    if (getenv("QR_TEST_VERBOSE"))
        fprintf(stderr, "misses %llu hits %llu evictions %llu invalidated %llu rounds %d\n",
                (unsigned long long)s.misses, (unsigned long long)s.hits,
                (unsigned long long)s.evictions, (unsigned long long)s.invalidated, iv.rounds);
    assert_int_equal(s.held, 0);
    assert_true(s.segments <= 2);
    uint64_t largest = 0; /* the bytes of what is left (no count lost in a race) */
    for (int k = 0; k < NSEG; k++)
        largest = od.segs[k]->len > largest ? od.segs[k]->len : largest;
    assert_true(s.bytes <= s.segments * largest);
    assert_true(s.bytes > 0 || s.segments == 0);
    assert_true(s.evictions > 0);
    assert_true(s.misses > NSEG); /* segments were reopened after eviction */
    assert_true(s.idle_readers <= 8);
    assert_true(iv.rounds > 0);
    qr_pool_free(pool);
    qr_segcache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fresh_searches_reuse_what_the_cache_opened),
        cmocka_unit_test(test_four_clients_race_eviction_and_invalidation),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
