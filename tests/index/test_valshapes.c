/* test_valshapes.c - the VALSHAPES block of a keyword index
 * (index/valshapes.c): each value's set of row shapes, written value by
 * value and found again by value; a field of too many values gets no
 * block; malformed blocks are refused (XX001). */
#include "testutil.h"

#include "index/valshapes.h"

/* A shapes block of rows whose shapes are given (1..k, 0: no tokens): row
 * r of shape j holds the word "wj" (a shape per number). */
static void shapes_of(const uint32_t *shape, uint32_t rows, qr_buf *out, qr_shapes *s)
{
    static char words[64][8];
    qr_slice terms[64];
    uint32_t tids[256], doclen[256], nt = 0;
    for (uint32_t t = 0; t < 64; t++) {
        snprintf(words[t], sizeof words[t], "w%c", 'a' + (int)t % 26);
        words[t][2] = (char)('a' + (int)t / 26);
        terms[t] = (qr_slice){words[t], 3};
    }
    for (uint32_t r = 0; r < rows; r++) {
        doclen[r] = shape[r] ? 1 : 0;
        if (shape[r])
            tids[nt++] = shape[r] - 1;
    }
    qr_buf_init(out);
    assert_int_equal(qr_shapes_build(tids, doclen, rows, terms, 64, out), 0);
    qr_err e;
    assert_int_equal(qr_shapes_parse(out->p, out->len, rows, s, "t", &e), 0);
}

static void test_sets_by_value(void **st)
{
    (void)st;
    /* shapes numbered by first row: rows' shapes 1 2 0 1 3 2 ... */
    static const uint32_t shape[] = {1, 2, 0, 1, 3, 2, 4, 3, 1, 2};
    enum { ROWS = sizeof shape / sizeof *shape };
    qr_buf sb;
    qr_shapes s;
    shapes_of(shape, ROWS, &sb, &s);
    assert_int_equal(s.k, 4);
    /* values in dictionary order: "a" (rows 0 3 8), "cart" (1 2 5), "zz"
     * (4 6 7 9) */
    static const uint32_t ra[] = {0, 3, 8}, rc[] = {1, 2, 5}, rz[] = {4, 6, 7, 9};
    qr_valshapes_w w;
    qr_valshapes_w_init(&w, &s, 7, 1 << 20);
    assert_int_equal(qr_valshapes_w_add(&w, "a", 1, ra, 3), 0);
    assert_int_equal(qr_valshapes_w_add(&w, "zz", 2, rz, 4), 0);
    assert_int_equal(qr_valshapes_w_add(&w, "cart", 4, rc, 3), 0);
    qr_buf out;
    qr_buf_init(&out);
    assert_int_equal(qr_valshapes_w_finish(&w, &out), 0);
    qr_valshapes_w_free(&w);
    qr_valshapes vs;
    qr_err e;
    assert_int_equal(qr_valshapes_parse(out.p, out.len, &vs, "t", &e), 0);
    assert_int_equal(vs.sec, 7);
    assert_int_equal(vs.k, 4);
    assert_int_equal(vs.nvals, 3);
    assert_int_equal(vs.words, 1);
    static const struct {
        const char *v;
        uint32_t bits; /* shapes 0..4 */
    } want[] = {{"a", 1u << 1}, {"zz", 1u << 3 | 1u << 4 | 1u << 2}, {"cart", 1u << 2 | 1u << 0}};
    for (int i = 0; i < 3; i++) {
        const unsigned char *set = qr_valshapes_find(&vs, want[i].v, strlen(want[i].v));
        assert_non_null(set);
        for (uint32_t j = 0; j <= vs.k; j++)
            if (qr_valshapes_has(set, j) != (int)(want[i].bits >> j & 1))
                fail_msg("value %s shape %u", want[i].v, j);
    }
    assert_null(qr_valshapes_find(&vs, "b", 1));
    assert_null(qr_valshapes_find(&vs, "car", 3));
    assert_null(qr_valshapes_find(&vs, "", 0));
    /* malformed: short, a nonzero pad, words that are not K / 64 + 1, no
     * values, offsets out of order or past the end, an entry's length */
    unsigned char *bad = malloc(out.len);
    assert_int_equal(qr_valshapes_parse(out.p, 15, &vs, "t", &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, "VALSHAPES"));
    static const struct {
        size_t at;
        unsigned char v;
    } flips[] = {{2, 1}, {12, 2}, {8, 0}, {20, 200}, {16, 9}, {28, 3}};
    for (size_t i = 0; i < sizeof flips / sizeof *flips; i++) {
        memcpy(bad, out.p, out.len);
        bad[flips[i].at] = flips[i].v;
        if (qr_valshapes_parse(bad, out.len, &vs, "t", &e) != -1)
            fail_msg("byte %zu set to %u parsed", flips[i].at, flips[i].v);
        assert_string_equal(e.code, QR_E_CORRUPT);
    }
    assert_int_equal(qr_valshapes_parse(out.p, out.len - 1, &vs, "t", &e), -1);
    free(bad);
    qr_buf_free(&out);
    qr_buf_free(&sb);
}

/* A block larger than a bit a row (and 1 KiB) is not written; nor is one
 * without shapes or without values. */
static void test_too_many_values_make_no_block(void **st)
{
    (void)st;
    static uint32_t shape[256];
    for (uint32_t r = 0; r < 256; r++)
        shape[r] = r % 64 + 1;
    qr_buf sb;
    qr_shapes s;
    shapes_of(shape, 256, &sb, &s);
    assert_int_equal(s.k, 64); /* sets of two words: 16 bytes */
    qr_buf out;
    qr_buf_init(&out);
    for (int limit = 0; limit < 2; limit++) {
        /* values of one row each, 25 bytes a value after 16 of header:
         * 1024 bytes hold 40, not 41 */
        uint32_t nvals = limit ? 41 : 40;
        qr_valshapes_w w;
        qr_valshapes_w_init(&w, &s, 1, 256);
        for (uint32_t v = 0; v < nvals; v++) {
            char t[8];
            snprintf(t, sizeof t, "v%03u", v);
            assert_int_equal(qr_valshapes_w_add(&w, t, 4, &v, 1), 0);
        }
        qr_buf_clear(&out);
        assert_int_equal(qr_valshapes_w_finish(&w, &out), 0);
        qr_valshapes_w_free(&w);
        if (limit)
            assert_int_equal(out.len, 0);
        else
            assert_true(out.len > 0 && out.len <= 1024);
    }
    qr_valshapes_w w;
    qr_valshapes_w_init(&w, NULL, 1, 256); /* no shapes */
    uint32_t r0 = 0;
    assert_int_equal(qr_valshapes_w_add(&w, "a", 1, &r0, 1), 0);
    assert_int_equal(qr_valshapes_w_finish(&w, &out), 0);
    qr_valshapes_w_free(&w);
    qr_valshapes_w_init(&w, &s, 1, 256); /* no values */
    assert_int_equal(qr_valshapes_w_finish(&w, &out), 0);
    qr_valshapes_w_free(&w);
    assert_int_equal(out.len, 0);
    qr_buf_free(&out);
    qr_buf_free(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sets_by_value),
        cmocka_unit_test(test_too_many_values_make_no_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
