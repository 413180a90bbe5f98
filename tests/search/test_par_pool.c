/* test_par_pool.c - searches sharing one thread pool (qr_par_init_pool):
 * 4 threads, each with its own qr_par_search over the same segments, run
 * counts, top-k by score / by time / first-k and row reads at once on a
 * pool of 2 threads, and agree with one worker on the calling thread. */
#include "oracle.h"

#include <pthread.h>

#include "search/topk.h"

ORACLE_FIXTURE

static const char *qs[] = {"failed", "error OR failed",           "failed AND order",
                           "ord*",   "\"failed to place order\"", "service:cart AND sevnum:>=13"};
enum { NQ = sizeof qs / sizeof *qs, K = 20, ORDERS = 3 };

/* The answers of one query. */
typedef struct answer {
    uint64_t count;
    qr_hit hits[ORDERS][K];
    uint32_t nhits[ORDERS];
    qr_buf rows; /* the by-score hits' rows */
} answer;

static answer want[NQ];

/* Answer query i on `pool` with `threads` workers; 0, or -1 with e set. */
static int answer_query(qr_pool *pool, int threads, int i, answer *a, qr_err *e)
{
    qr_buf_init(&a->rows);
    qr_par_search ps;
    if (qr_par_init_pool(&ps, pool, tu_otel(), od.segs, NSEG, qs[i], strlen(qs[i]), threads, e))
        return -1;
    int rc = qr_par_count(&ps, &a->count, e);
    static const qr_topk_by by[ORDERS] = {QR_BY_SCORE, QR_BY_TIME, QR_BY_NONE};
    for (int o = 0; o < ORDERS && rc == 0; o++)
        rc = qr_par_topk(&ps, by[o], K, 0, a->hits[o], &a->nhits[o], NULL, e);
    if (rc == 0)
        rc = qr_par_rows(&ps, a->hits[0], a->nhits[0], &a->rows, e);
    qr_par_free(&ps);
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

typedef struct client {
    qr_pool *pool;
    int id, rounds, failures;
    qr_err err;
} client;

static void *run_client(void *arg)
{
    client *c = arg;
    for (int r = 0; r < c->rounds; r++) {
        int i = (r + c->id) % NQ;
        answer got;
        if (answer_query(c->pool, 2 + (r + c->id) % 3, i, &got, &c->err) != 0 ||
            !same_answer(&got, &want[i])) {
            fprintf(stderr, "client %d round %d: '%s' differs (%s)\n", c->id, r, qs[i], c->err.msg);
            c->failures++;
        }
        qr_buf_free(&got.rows);
    }
    return NULL;
}

static void test_four_searches_share_a_pool_and_agree_with_one_thread(void **st)
{
    (void)st;
    qr_err e;
    for (int i = 0; i < NQ; i++) {
        if (answer_query(NULL, 1, i, &want[i], &e) != 0)
            fail_msg("'%s': %s", qs[i], e.msg);
        assert_true(want[i].count > 0);
    }
    qr_pool *pool = qr_pool_new(2, &e);
    assert_non_null(pool);
    pthread_t tid[4];
    client cl[4];
    for (int t = 0; t < 4; t++) {
        cl[t] = (client){.pool = pool, .id = t, .rounds = 3 * NQ};
        assert_int_equal(pthread_create(&tid[t], NULL, run_client, &cl[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(tid[t], NULL);
        assert_int_equal(cl[t].failures, 0);
    }
    qr_pool_free(pool);
    for (int i = 0; i < NQ; i++)
        qr_buf_free(&want[i].rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_searches_share_a_pool_and_agree_with_one_thread),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
