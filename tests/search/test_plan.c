/* test_plan.c - the plan a search records (match/plan.h): every compiled
 * node accounts for every segment, the ways it names are the ones its
 * evaluation took, a multi-term node's term count equals the number of
 * distinct words the oracle finds matching in each segment, a column
 * scan's blocks read + skipped equal the column's blocks, recording does
 * not change any answer, and the printed plan names every node. */
#include "search/oracle.h"
#include "search/topk.h"

ORACLE_FIXTURE

static const qr_plan_node *node_of(const qr_plan *p, const qr_query *q)
{
    for (uint32_t i = 0; i < p->n; i++)
        if (p->v[i].q == q)
            return &p->v[i];
    return NULL;
}

static uint32_t ways_of(const qr_plan_node *n, const char *name)
{
    uint32_t c = 0;
    for (int w = 0; w < QR_PLAN_WAYS && n->way[w].name; w++)
        if (!name || !strcmp(n->way[w].name, name))
            c += n->way[w].n;
    return c;
}

/* Distinct Body words matching multi-term node q, summed over segments. */
static uint64_t oracle_terms(const qr_query *q)
{
    regex_t re;
    if (q->type == Q_REGEXP)
        oracle_regcomp(&re, q);
    uint64_t total = 0;
    for (int s = 0; s < NSEG; s++) {
        char **seen = NULL;
        size_t nseen = 0;
        for (uint32_t r = 0; r < od.nrows[s]; r++)
            for (uint32_t t = 0; t < od.rows[s][r].ntok; t++) {
                const otok *k = &od.rows[s][r].toks[t];
                if (!oracle_tok_matches(k, q, &re))
                    continue;
                size_t i = 0;
                while (i < nseen && strcmp(seen[i], k->s))
                    i++;
                if (i == nseen) {
                    seen = realloc(seen, sizeof *seen * (nseen + 1));
                    seen[nseen++] = k->s;
                }
            }
        total += nseen;
        free(seen);
    }
    if (q->type == Q_REGEXP)
        regfree(&re);
    return total;
}

static void plan_of(const char *text, int mode, qr_plan *pl, uint64_t *count, qr_query **tree,
                    qr_arena *a)
{
    qr_err e;
    *tree = qr_query_parse_for(tu_otel(), text, strlen(text), a, &e);
    assert_non_null(*tree);
    qr_par_search ps;
    assert_int_equal(qr_par_init_tree(&ps, NULL, tu_otel(), od.segs, NSEG, *tree, 2, &e), 0);
    uint64_t plain = 0;
    qr_hit h1[10], h2[10];
    uint32_t n1 = 0, n2 = 0;
    if (mode == 0)
        assert_int_equal(qr_par_count(&ps, &plain, &e), 0);
    else
        assert_int_equal(qr_par_topk(&ps, QR_BY_SCORE, 10, 0, h1, &n1, NULL, &e), 0);
    qr_par_set_explain(&ps);
    if (mode == 0) {
        assert_int_equal(qr_par_count(&ps, count, &e), 0);
        assert_int_equal(*count, plain); /* recording changes nothing */
    } else {
        assert_int_equal(qr_par_topk(&ps, QR_BY_SCORE, 10, 0, h2, &n2, NULL, &e), 0);
        assert_int_equal(n1, n2);
        assert_memory_equal(h1, h2, sizeof *h1 * n1);
    }
    qr_plan_init(pl);
    qr_par_plan(&ps, pl);
    assert_false(pl->oom);
    qr_par_free(&ps);
}

static void test_count_plans_account_for_every_segment(void **st)
{
    (void)st;
    const char *qs[] = {"failed AND order", "error -cache", "cahce~1 AND service:cart",
                        "atleast(2, error, failed, charge, cache)", "ord* OR /c.che/",
                        "\"failed to place order\" AND sevnum:>=13", "like:%tion AND NOT error"};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        qr_arena a;
        qr_arena_init(&a, 1 << 16, 0);
        qr_plan pl;
        uint64_t count;
        qr_query *t;
        plan_of(qs[i], 0, &pl, &count, &t, &a);
        /* the root and each child of it were compiled in every segment */
        const qr_plan_node *root = node_of(&pl, t);
        assert_non_null(root);
        assert_int_equal(root->segments, NSEG);
        assert_true(ways_of(root, NULL) >= NSEG);
        assert_true(root->est_rows >= count);
        for (uint32_t k = 0; k < t->n; k++) {
            const qr_query *kid = t->kids[k]->type == Q_NOT ? t->kids[k]->kids[0] : t->kids[k];
            const qr_plan_node *n = node_of(&pl, kid);
            assert_non_null(n);
            assert_int_equal(n->segments, NSEG);
            if (kid->type == Q_PREFIX || kid->type == Q_REGEXP || kid->type == Q_LIKE ||
                kid->type == Q_FUZZY)
                assert_int_equal(n->terms, oracle_terms(kid));
        }
        qr_buf b;
        qr_buf_init(&b);
        qr_plan_print(&pl, t, &b);
        qr_buf_put_u8(&b, 0);
        /* one line per node, the root's first and annotated */
        const char *root_label = t->type == Q_AND ? "AND  [" : t->type == Q_OR ? "OR  ["
                                                             : "atleast(2)  [";
        assert_memory_equal(b.p, root_label, strlen(root_label));
        size_t lines = 0;
        for (size_t j = 0; j < b.len; j++)
            lines += b.p[j] == '\n';
        assert_true(lines >= 1 + t->n);
        qr_buf_free(&b);
        qr_plan_free(&pl);
        qr_arena_free(&a);
    }
}

static void test_ways_name_what_evaluation_did(void **st)
{
    (void)st;
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_plan pl;
    uint64_t count;
    qr_query *t;
    /* an unindexed number column: a scan over its blocks, min/max deciding */
    plan_of("TraceFlags:>=1 AND failed", 0, &pl, &count, &t, &a);
    const qr_plan_node *scan = node_of(&pl, t->kids[0]);
    assert_non_null(scan);
    assert_int_equal(ways_of(scan, "column scan"), NSEG);
    uint64_t blocks = 0;
    for (int s = 0; s < NSEG; s++) {
        int c = qr_seg_col(od.segs[s], "TraceFlags");
        assert_true(c >= 0);
        blocks += od.segs[s]->cols[c].ndata;
    }
    assert_int_equal(scan->blocks_read + scan->blocks_skipped, blocks);
    qr_plan_free(&pl);
    /* time on the sort column: a binary search */
    plan_of("time:>=2025-09-23T00:00:01Z", 0, &pl, &count, &t, &a);
    assert_int_equal(ways_of(node_of(&pl, t), "binary search of the sort column"), NSEG);
    qr_plan_free(&pl);
    /* a phrase, a gap and a prefix counted alone: the rows of the shapes
     * whose text holds them, in every segment (no deletions here), with
     * the same count as the walk over the rows */
    const char *by_shapes[] = {"\"failed to place order\"", "\"failed ? place\"", "ord*"};
    for (int i = 0; i < 3; i++) {
        plan_of(by_shapes[i], 0, &pl, &count, &t, &a);
        assert_int_equal(ways_of(node_of(&pl, t), "counted by row shapes"), NSEG);
        qr_plan_free(&pl);
        uint64_t walked = 0;
        setenv("QUARRY_NO_SHAPES", "1", 1);
        plan_of(by_shapes[i], 0, &pl, &walked, &t, &a);
        unsetenv("QUARRY_NO_SHAPES");
        assert_int_equal(ways_of(node_of(&pl, t), "counted by row shapes"), 0);
        assert_int_equal(walked, count);
        assert_true(count > 0);
        qr_plan_free(&pl);
    }
    /* joins of words, NOTs of them: counted by the shapes, each node with
     * the rows it holds in (the root's: the count, as the walk counts) */
    const char *joins[] = {"failed AND place", "place AND NOT failed"};
    uint64_t joined[2];
    for (int i = 0; i < 2; i++) {
        plan_of(joins[i], 0, &pl, &count, &t, &a);
        joined[i] = count;
        const qr_plan_node *root = node_of(&pl, t);
        assert_int_equal(ways_of(root, "counted by row shapes"), NSEG);
        assert_int_equal(root->est_rows, count);
        assert_true(count > 0 || i == 1);
        const qr_plan_node *kid = node_of(&pl, t->kids[0]);
        assert_int_equal(ways_of(kid, "by row shapes"), NSEG);
        assert_int_equal(kid->segments, NSEG);
        assert_true(kid->est_rows >= count);
        qr_plan_free(&pl);
    }
    /* a NOT that rows holding no word satisfy: the walk */
    plan_of("failed OR -place", 0, &pl, &count, &t, &a);
    assert_int_equal(ways_of(node_of(&pl, t), "counted by row shapes"), 0);
    qr_plan_free(&pl);
    /* without the shapes: a rare word and a dense one, the word probed in
     * the dense bitmap; a rare word without a dense one, probed in every
     * row minus the negative's bitmap */
    setenv("QUARRY_NO_SHAPES", "1", 1);
    uint64_t walked;
    plan_of("failed AND place", 0, &pl, &walked, &t, &a);
    assert_int_equal(ways_of(node_of(&pl, t), "postings probed in a bitmap"), NSEG);
    assert_int_equal(walked, joined[0]);
    qr_plan_free(&pl);
    plan_of("place AND NOT failed", 0, &pl, &walked, &t, &a);
    assert_int_equal(ways_of(node_of(&pl, t), "postings probed in a bitmap"), NSEG);
    assert_int_equal(walked, joined[1]);
    qr_plan_free(&pl);
    unsetenv("QUARRY_NO_SHAPES");
    /* scoring: the OR says how it was scored, its words that they were;
     * segments whose row shapes cannot beat the threshold are passed over
     * before the words are looked at */
    plan_of("failed OR error", 1, &pl, &count, &t, &a);
    const qr_plan_node *or = node_of(&pl, t);
    assert_non_null(or);
    uint64_t passed = ways_of(or, "passed over: no row shape beats the threshold");
    assert_true(passed < NSEG);
    assert_int_equal(ways_of(or, "scored term at a time") +
                         ways_of(or, "scored from dense bitmaps") +
                         ways_of(or, "scored by block-max MaxScore") + passed,
                     NSEG);
    assert_int_equal(ways_of(node_of(&pl, t->kids[0]), "scored with block maxima"), NSEG - passed);
    qr_buf b;
    qr_buf_init(&b);
    qr_plan_print(&pl, t, &b);
    qr_buf_put_u8(&b, 0);
    assert_non_null(strstr((char *)b.p, "OR  ["));
    char line[64];
    snprintf(line, sizeof line, "\n  failed  [scored with block maxima %u]",
             (unsigned)(NSEG - passed));
    assert_non_null(strstr((char *)b.p, line));
    qr_buf_free(&b);
    qr_plan_free(&pl);
    /* a conjunction with a filter, scored: led by its own rows, an
     * iterator compiled a second time that the plan does not count again
     * (each node once a segment, the multi-term node's words once) */
    plan_of("service:checkout AND \"place order\" AND ord*", 1, &pl, &count, &t, &a);
    const qr_plan_node *and = node_of(&pl, t);
    assert_int_equal(ways_of(and, "scored by block-max leapfrog over its matches"), NSEG);
    assert_int_equal(ways_of(and, NULL), NSEG);
    assert_int_equal(node_of(&pl, t->kids[0])->segments, NSEG);
    assert_int_equal(ways_of(node_of(&pl, t->kids[0]), NULL), NSEG);
    const qr_plan_node *ord = node_of(&pl, t->kids[2]);
    assert_int_equal(ways_of(ord, NULL), NSEG);
    assert_int_equal(ord->terms, oracle_terms(t->kids[2]));
    qr_plan_free(&pl);
    qr_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_plans_account_for_every_segment),
        cmocka_unit_test(test_ways_name_what_evaluation_did),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
