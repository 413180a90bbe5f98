/* test_phrase_paths.c - every path of the phrase iterator (match/phrase.c)
 * against a brute-force match and phrase frequency, on one segment built to
 * reach them all: generated rows make failed, to and order dense (row
 * bitmaps: rank moves, the all-dense lead) while place, post, email ... stay
 * postings-led; hand-made rows put phrase words past position 127 (blocks
 * whose positions are not one byte each: the varint path), repeat a word 6
 * times (tf - 1 wider than 2 bits: tfs decoded into arrays) and twice (a
 * start proposed by a word with several positions). The rows' Body is read
 * back and split by the oracle's own tokenizer (oracle.h). */
#include "oracle.h"

#define GEN_ROWS 6000

static qr_segment *seg;
static orow *rows;
static uint32_t nrows;
static char *dir;

static void put_row(qr_buf *t, const char *body)
{
    qr_buf_put(t, "{\"Body\":\"", 9);
    qr_buf_put(t, body, strlen(body));
    qr_buf_put(t, "\"}\n", 3);
}

/* A row after every generated one in time order (rows sort by time; the
 * rows put_row adds have none, and come first). */
static void put_late_row(qr_buf *t, const char *body)
{
    qr_buf_put(t, "{\"Timestamp\":\"2030-01-01T00:00:00Z\",\"Body\":\"", 44);
    qr_buf_put(t, body, strlen(body));
    qr_buf_put(t, "\"}\n", 3);
}

static int setup(void **st)
{
    (void)st;
    setlocale(LC_ALL, "C.UTF-8");
    dir = tu_tmpdir();
    gen_ctx *g = gen_new(424242, 0);
    qr_buf text, lng;
    qr_buf_init(&text);
    qr_buf_init(&lng);
    for (int k = 0; k < 140; k++) /* 140 filler words: later words sit past 127 */
        qr_buf_put(&lng, "x ", 2);
    qr_buf_put(&lng, "failed to place order ", 22);
    for (int k = 0; k < 130; k++)
        qr_buf_put(&lng, "y ", 2);
    qr_buf_put(&lng, "failed ab cd order failed to place order", 40);
    qr_buf_put_u8(&lng, 0);
    /* rows of more tokens than a phrase walk reads positions of one word
     * (4096): a count by the shapes' text cannot answer for their shape,
     * and their rows are walked instead (no word is there 4096 times: the
     * walk's limit, which the oracle does not model) */
    qr_buf huge;
    qr_buf_init(&huge);
    for (int k = 0; k < 2100; k++)
        qr_buf_put(&huge, "x y ", 4);
    qr_buf_put(&huge, "failed to place order failed ab cd order to to", 46);
    qr_buf_put_u8(&huge, 0);
    for (int i = 0; i < GEN_ROWS; i++) {
        gen_row(g, &text);
        if (i % 500 == 7)
            put_row(&text, (const char *)lng.p);
        if (i % 3000 == 29)
            put_row(&text, (const char *)huge.p);
        if (i % 300 == 11)
            put_row(&text, "failed to place order to to to to to order to failed");
        if (i % 400 == 13)
            put_row(&text, "order order failed failed to place order failed order order order");
        if (i % 700 == 17)
            put_row(&text, "post to email service expected 200 got 500 and to place order");
        /* shapes first met late in the segment, beside rows of other
         * shapes: counting checks their first rows by the dense words'
         * ranks there, which must be exact (one that matches, one with
         * every word that does not) */
        if (i >= 5000 && i % 97 == 3)
            put_late_row(&text, "failed to failed to place order");
        if (i >= 5000 && i % 89 == 5)
            put_late_row(&text, "order to place failed to order");
        /* "failed order"~3 at the edge of its reach: 4 apart holds, 5
         * apart does not */
        if (i % 250 == 21)
            put_row(&text, i % 500 == 21 ? "failed a b c order" : "failed a b c d order");
        /* one shape ("error # failed to # order"), the numbers differ: a
         * phrase with one of them holds in some of its rows only, even
         * where a row has that number (in the other place) */
        if (i % 200 == 19) {
            char b[80];
            snprintf(b, sizeof b, "error %d failed to %d order", 500 + i % 3, 500 + i / 200 % 3);
            put_row(&text, b);
        }
    }
    qr_buf_put_u8(&text, 0);
    gen_free(g);
    char path[4200];
    tu_build_segment(dir, "p.qseg", (const char *)text.p, GEN_ROWS + 240, path);
    qr_err e;
    qr_buf_free(&text);
    qr_buf_free(&lng);
    qr_buf_free(&huge);
    assert_non_null(seg = qr_seg_open(path, &e));
    nrows = (uint32_t)seg->rows;
    rows = calloc(nrows, sizeof *rows);
    qr_colreader *rd = qr_colr_open(seg, COL_BODY, &e);
    assert_non_null(rd);
    for (uint32_t r = 0; r < nrows; r++) {
        qr_slice v;
        assert_int_equal(qr_colr_bytes(rd, r, &v, &e), 0);
        if (v.p)
            oracle_tokenize(v.p, v.n, &rows[r]);
    }
    qr_colr_close(rd);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    for (uint32_t r = 0; r < nrows; r++) {
        for (uint32_t t = 0; t < rows[r].ntok; t++)
            free(rows[r].toks[t].s);
        free(rows[r].toks);
    }
    free(rows);
    qr_seg_close(seg);
    tu_rmdir(dir);
    return 0;
}

static int at(const orow *o, uint64_t p, const qr_query *q, uint32_t i)
{
    return p < o->ntok && tok_eq(&o->toks[p], q->terms[i], q->term_lens[i]);
}

/* The phrase frequency of row o, as docs/SEARCH.md defines it (0: no match). */
static double brute_freq(const orow *o, const qr_query *q)
{
    double f = 0;
    for (uint32_t s = 0; s < o->ntok; s++) {
        if (!at(o, s, q, 0))
            continue;
        if (q->within) { /* the nearest second word after s, if in range */
            for (uint64_t p = s + 1; p < o->ntok; p++)
                if (at(o, p, q, 1)) {
                    if (p - s <= q->within + 1)
                        f += 1.0 / (double)(p - s);
                    break;
                }
            continue;
        }
        uint32_t i = 1;
        while (i < q->n && at(o, (uint64_t)s + q->offs[i], q, i))
            i++;
        f += i == q->n;
    }
    return f;
}

static void check_phrase(const char *text, uint64_t min_matches)
{
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_err e;
    qr_query *q = oracle_parse(text, &a);
    assert_int_equal(q->type, Q_PHRASE);
    qr_segsearch ss;
    qr_segsearch_init(&ss, seg);
    qr_it *it = qr_segsearch_compile(&ss, q, &a, &e);
    assert_non_null(it);
    uint32_t d = qr_it_next(it);
    uint64_t matched = 0;
    for (uint32_t r = 0; r < nrows; r++) {
        double want = brute_freq(&rows[r], q);
        if (want > 0) {
            if (d != r)
                fail_msg("%s: row %u expected, index gives %u", text, r, d);
            double got = qr_it_phrase_freq(it);
            if (got < want - 1e-9 || got > want + 1e-9)
                fail_msg("%s: row %u: freq %g, want %g", text, r, got, want);
            d = qr_it_next(it);
            matched++;
        } else if (d == r) {
            fail_msg("%s: row %u matched, oracle says no", text, r);
        }
    }
    assert_int_equal(d, QR_NO_DOC);
    assert_false(qr_it_failed(it));
    /* counted once per row shape (index/shapes.h), and every row's
     * positions checked: both equal the oracle */
    for (int no_shapes = 0; no_shapes < 2; no_shapes++) {
        if (no_shapes)
            setenv("QUARRY_NO_SHAPES", "1", 1);
        uint64_t c;
        assert_int_equal(qr_segsearch_count(&ss, q, &a, &c, &e), 0);
        unsetenv("QUARRY_NO_SHAPES");
        if (c != matched)
            fail_msg("%s: count %lu (%s), want %lu", text, (unsigned long)c,
                     no_shapes ? "without shapes" : "by shapes", (unsigned long)matched);
    }
    if (matched < min_matches)
        fail_msg("%s: %lu matches, expected at least %lu", text, (unsigned long)matched,
                 (unsigned long)min_matches);
    /* advance() to targets in the middle agrees with next() */
    qr_segsearch_close(&ss);
    qr_segsearch_init(&ss, seg);
    it = qr_segsearch_compile(&ss, q, &a, &e);
    for (uint32_t t = 0; t < nrows; t += 997) {
        uint32_t got = qr_it_advance(it, t), want = QR_NO_DOC;
        for (uint32_t r = t; r < nrows && want == QR_NO_DOC; r++)
            if (brute_freq(&rows[r], q) > 0)
                want = r;
        assert_int_equal(got, want);
        if (got == QR_NO_DOC)
            break;
        t = got;
    }
    qr_segsearch_close(&ss);
    qr_query_release(q);
    qr_arena_free(&a);
}

static void test_dense_words_are_dense(void **st)
{
    (void)st;
    qr_err e;
    qr_invfield f;
    assert_int_equal(qr_invfield_open(&f, seg, SEC_BODY, &e), 0);
    const char *dense[] = {"failed", "to", "order"}, *sparse[] = {"place", "post", "x"};
    for (int i = 0; i < 3; i++) {
        qr_terminfo ti;
        assert_int_equal(qr_tdict_lookup(&f.dict, dense[i], strlen(dense[i]), &ti, &e), 1);
        assert_true(ti.has_bitmap);
        assert_int_equal(qr_tdict_lookup(&f.dict, sparse[i], strlen(sparse[i]), &ti, &e), 1);
        assert_false(ti.has_bitmap);
    }
    qr_invfield_close(&f);
}

static void test_exact_phrases(void **st)
{
    (void)st;
    check_phrase("\"failed to place order\"", 50);
    check_phrase("\"to place order\"", 50);
    check_phrase("\"place order\"", 50);
    check_phrase("\"failed to\"", 100);
    check_phrase("\"to to\"", 10);
    check_phrase("\"order order\"", 10);
    check_phrase("\"failed failed\"", 1);
    check_phrase("\"x failed to\"", 10);
    check_phrase("\"y failed\"", 10);
    check_phrase("\"post to email service expected 200 got 500\"", 5);
}

/* The segment has shapes, and most phrases use them: a count checks
 * positions once per shape (the walk above does per row). A shape number
 * past the block's count makes the count fail, not answer. */
static void test_counts_by_shape(void **st)
{
    (void)st;
    qr_err e;
    qr_invfield f;
    assert_int_equal(qr_invfield_open(&f, seg, SEC_BODY, &e), 0);
    assert_int_equal(qr_invfield_load_shapes(&f, &e), 0);
    const qr_shapes *sh = qr_invfield_shapes(&f);
    assert_non_null(sh);
    assert_true(sh->k > 10 && sh->k < nrows / 4);
    /* phrases with a variable word (a number) check every row */
    check_phrase("\"error 501 failed\"", 5);
    check_phrase("\"501 failed to\"", 5);
    check_phrase("\"error failed\"~1", 20);
    check_phrase("\"error ? failed to ? order\"", 20);
    /* with rows deleted, a count is not the shapes' row counts: the rows
     * are walked (every third row gone here) */
    {
        const char *texts[] = {"\"failed to place order\"", "\"failed ? ? order\"",
                               "\"failed order\"~3"};
        uint64_t *del = calloc((nrows + 63) / 64, 8), ndel = 0;
        for (uint32_t r = 0; r < nrows; r += 3, ndel++)
            del[r >> 6] |= 1ull << (r & 63);
        seg->deleted = del;
        seg->ndeleted = ndel;
        for (int t = 0; t < 3; t++) {
            qr_arena da;
            qr_arena_init(&da, 1 << 16, 0);
            qr_query *dq = oracle_parse(texts[t], &da);
            uint64_t want = 0, got = 0;
            for (uint32_t r = 0; r < nrows; r++)
                want += r % 3 != 0 && brute_freq(&rows[r], dq) > 0;
            qr_segsearch ss;
            qr_segsearch_init(&ss, seg);
            assert_int_equal(qr_segsearch_count(&ss, dq, &da, &got, &e), 0);
            qr_segsearch_close(&ss);
            if (got != want)
                fail_msg("%s with rows deleted: %lu, want %lu", texts[t], (unsigned long)got,
                         (unsigned long)want);
            qr_query_release(dq);
            qr_arena_free(&da);
        }
        seg->deleted = NULL;
        seg->ndeleted = 0;
        free(del);
    }
    /* a block whose rows name a shape past its count */
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_query *q = oracle_parse("\"failed ? ? order\"", &a);
    qr_terminfo tis[2];
    assert_int_equal(qr_invfield_load_positions(&f, &e), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(qr_tdict_lookup(&f.dict, q->terms[i], q->term_lens[i], &tis[i], &e), 1);
        if (tis[i].has_bitmap)
            assert_non_null(qr_invfield_bitmap(&f, &tis[i], &e));
    }
    unsigned char *ids = malloc(nrows + 3);
    memset(ids, 7, nrows + 3);
    qr_shapes bad = {.ids = ids, .width = 8, .k = 6, .rows = nrows};
    qr_phrase_shapes ps = {&bad, NULL, NULL, NULL};
    qr_it *it = qr_it_phrase(&a, &f, tis, q->offs, q->n, q->within, &ps);
    assert_non_null(it);
    qr_it_count(it);
    assert_true(qr_it_failed(it));
    free(ids);
    qr_query_release(q);
    qr_arena_free(&a);
    qr_invfield_close(&f);
}

static void test_gaps_and_proximity(void **st)
{
    (void)st;
    check_phrase("\"failed ? ? order\"", 100);
    check_phrase("\"failed ? place\"", 50);
    check_phrase("\"failed order\"~3", 100);
    check_phrase("\"order failed\"~2", 10);
    check_phrase("\"to order\"~6", 50);
    check_phrase("\"x place\"~2", 10);
    check_phrase("\"failed order\"~0", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_words_are_dense),
        cmocka_unit_test(test_exact_phrases),
        cmocka_unit_test(test_gaps_and_proximity),
        cmocka_unit_test(test_counts_by_shape),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
