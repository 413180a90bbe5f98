/* test_pool.c - util/pool: jobs give the sequential answer, every slot runs
 * exactly once and never twice at a time; concurrent submitters; k above
 * the pool size; a job submitted from inside a job; NULL and 0-thread
 * pools; free while idle. */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>

#include "util/pool.h"

enum { NVAL = 10000, MAXK = 64 };

static uint64_t vals[NVAL];

/* A job summing vals[0..n) in chunks handed out by an atomic counter, like
 * qr_par_count hands out segments. */
typedef struct sumjob {
    atomic_uint next;
    uint32_t n, chunk;
    uint64_t part[MAXK];
    atomic_int ran[MAXK], active[MAXK];
    atomic_int overlap;
} sumjob;

static void sum_slot(void *ctx, int slot)
{
    sumjob *j = ctx;
    if (atomic_fetch_add(&j->active[slot], 1) != 0)
        atomic_store(&j->overlap, 1);
    atomic_fetch_add(&j->ran[slot], 1);
    for (;;) {
        uint32_t c = atomic_fetch_add(&j->next, 1), from = c * j->chunk;
        if (from >= j->n)
            break;
        uint32_t to = from + j->chunk < j->n ? from + j->chunk : j->n;
        for (uint32_t i = from; i < to; i++)
            j->part[slot] += vals[i];
    }
    atomic_fetch_sub(&j->active[slot], 1);
}

static uint64_t seq_sum(uint32_t n)
{
    uint64_t s = 0;
    for (uint32_t i = 0; i < n; i++)
        s += vals[i];
    return s;
}

/* Run one sum job of k slots; 0 when the answer is right and each slot ran
 * once (no cmocka assertion: submitter threads call it too). */
static int run_sum_job(qr_pool *pool, int k, uint32_t n, uint32_t chunk)
{
    sumjob *j = calloc(1, sizeof *j);
    if (!j)
        return -1;
    j->n = n;
    j->chunk = chunk;
    qr_pool_run(pool, k, sum_slot, j);
    uint64_t total = 0;
    int bad = atomic_load(&j->overlap);
    for (int s = 0; s < MAXK; s++) {
        if (atomic_load(&j->ran[s]) != (s < k)) {
            fprintf(stderr, "k %d: slot %d ran %d times\n", k, s, atomic_load(&j->ran[s]));
            bad = 1;
        }
        total += j->part[s];
    }
    if (total != seq_sum(n)) {
        fprintf(stderr, "k %d n %u: sum %llu, expected %llu\n", k, n, (unsigned long long)total,
                (unsigned long long)seq_sum(n));
        bad = 1;
    }
    free(j);
    return bad ? -1 : 0;
}

static void check_sum_job(qr_pool *pool, int k, uint32_t n, uint32_t chunk)
{
    assert_int_equal(run_sum_job(pool, k, n, chunk), 0);
}

static int setup_vals(void **st)
{
    (void)st;
    uint64_t x = 88172645463325252ull;
    for (uint32_t i = 0; i < NVAL; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        vals[i] = x >> 20;
    }
    return 0;
}

static void test_many_small_jobs_equal_the_sequential_sum(void **st)
{
    (void)st;
    qr_err e;
    qr_pool *pool = qr_pool_new(3, &e);
    assert_non_null(pool);
    assert_int_equal(qr_pool_threads(pool), 3);
    for (int r = 0; r < 3000; r++)
        check_sum_job(pool, 1 + r % 8, (uint32_t)(r * 7) % NVAL, 1 + (uint32_t)r % 97);
    qr_pool_free(pool);
}

static void test_k_larger_than_the_pool_runs_every_slot_once(void **st)
{
    (void)st;
    qr_err e;
    qr_pool *pool = qr_pool_new(2, &e);
    assert_non_null(pool);
    for (int k = 1; k <= MAXK; k++)
        check_sum_job(pool, k, NVAL, 100);
    qr_pool_free(pool);
}

typedef struct submitter {
    qr_pool *pool;
    int id, failures;
} submitter;

static void *submit_many(void *arg)
{
    submitter *s = arg;
    for (int r = 0; r < 500; r++)
        if (run_sum_job(s->pool, 1 + (r + s->id) % 5, NVAL - (uint32_t)(r * 13 + s->id), 50))
            s->failures++;
    return NULL;
}

static void test_four_submitters_share_the_pool(void **st)
{
    (void)st;
    qr_err e;
    qr_pool *pool = qr_pool_new(2, &e);
    assert_non_null(pool);
    pthread_t tid[4];
    submitter sub[4];
    for (int i = 0; i < 4; i++) {
        sub[i] = (submitter){pool, i, 0};
        assert_int_equal(pthread_create(&tid[i], NULL, submit_many, &sub[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(tid[i], NULL);
        assert_int_equal(sub[i].failures, 0);
    }
    qr_pool_free(pool);
}

/* A slot that submits its own job to the same pool: no deadlock, as each
 * submitter can finish its job alone. */
typedef struct nested {
    qr_pool *pool;
    atomic_int failures;
} nested;

static void nested_slot(void *ctx, int slot)
{
    nested *n = ctx;
    if (run_sum_job(n->pool, 3, NVAL, 64) != 0)
        atomic_fetch_add(&n->failures, 1);
}

static void test_a_slot_may_submit_a_job(void **st)
{
    (void)st;
    qr_err e;
    nested n = {qr_pool_new(2, &e), 0};
    assert_non_null(n.pool);
    for (int r = 0; r < 50; r++)
        qr_pool_run(n.pool, 4, nested_slot, &n);
    assert_int_equal(atomic_load(&n.failures), 0);
    qr_pool_free(n.pool);
}

static void test_null_and_threadless_pools_run_on_the_caller(void **st)
{
    (void)st;
    check_sum_job(NULL, 5, NVAL, 10);
    qr_err e;
    qr_pool *pool = qr_pool_new(0, &e);
    assert_non_null(pool);
    assert_int_equal(qr_pool_threads(pool), 0);
    check_sum_job(pool, 7, NVAL, 10);
    qr_pool_run(pool, 0, sum_slot, NULL); /* k < 1: nothing runs */
    qr_pool_free(pool);
    qr_pool_free(NULL);
}

static void test_free_while_idle_joins_every_thread(void **st)
{
    (void)st;
    qr_err e;
    for (int r = 0; r < 20; r++) { /* never used */
        qr_pool *pool = qr_pool_new(4, &e);
        assert_non_null(pool);
        qr_pool_free(pool);
    }
    qr_pool *pool = qr_pool_new(-1, &e); /* one per online CPU, capped */
    assert_non_null(pool);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    assert_int_equal(qr_pool_threads(pool), cpus < 1                     ? 1
                                            : cpus > QR_POOL_MAX_THREADS ? QR_POOL_MAX_THREADS
                                                                         : cpus);
    check_sum_job(pool, 4, NVAL, 10);
    usleep(20000); /* the threads are asleep again */
    qr_pool_free(pool);
    pool = qr_pool_new(QR_POOL_MAX_THREADS + 5, &e);
    assert_non_null(pool);
    assert_int_equal(qr_pool_threads(pool), QR_POOL_MAX_THREADS);
    qr_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_small_jobs_equal_the_sequential_sum),
        cmocka_unit_test(test_k_larger_than_the_pool_runs_every_slot_once),
        cmocka_unit_test(test_four_submitters_share_the_pool),
        cmocka_unit_test(test_a_slot_may_submit_a_job),
        cmocka_unit_test(test_null_and_threadless_pools_run_on_the_caller),
        cmocka_unit_test(test_free_while_idle_joins_every_thread),
    };
    return cmocka_run_group_tests(tests, setup_vals, NULL);
}
