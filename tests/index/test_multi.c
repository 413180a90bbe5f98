/* test_multi.c - a dense full-text term's list of the rows holding it more
 * than once and its masks of the norms of its rows and of those rows
 * (format 11: TI_HAS_MULTI, qr_invfield_multi_bits, qr_invfield_norm_mask):
 * exactly the rows with tf >= 2 and the norms there are, an empty list for
 * a word never repeated, none for words without a bitmap or fields without
 * tfs; a list or masks out of range, or a list that does not decode, are
 * XX001 naming the segment; term infos that claim a list wrongly are
 * refused. */
#include "testutil.h"

#include "index/invfmt.h"
#include "index/invindex.h"
#include "index/termdict.h"

enum { ROWS = 3000 };

static char *dir;
static qr_segment *seg;

/* alpha in every row, twice in rows r % 7 == 0, three times in r % 11 == 0;
 * beta once in every other row; gamma (rare) twice in r % 100 == 0 */
static uint32_t alpha_tf(uint32_t r) { return r % 11 == 0 ? 3 : r % 7 == 0 ? 2 : 1; }

static int setup(void **st)
{
    (void)st;
    dir = tu_tmpdir();
    qr_buf t;
    qr_buf_init(&t);
    for (uint32_t r = 0; r < ROWS; r++) {
        char body[200];
        size_t n = 0;
        for (uint32_t i = 0; i < alpha_tf(r); i++)
            n += (size_t)snprintf(body + n, sizeof body - n, "alpha ");
        if (r % 2)
            n += (size_t)snprintf(body + n, sizeof body - n, "beta ");
        if (r % 100 == 0)
            n += (size_t)snprintf(body + n, sizeof body - n, "gamma gamma ");
        snprintf(body + n, sizeof body - n, "end");
        char line[400];
        int m =
            snprintf(line, sizeof line,
                     "{\"Timestamp\":%u,\"ServiceName\":\"cart\",\"Body\":\"%s\"}\n", r + 1, body);
        qr_buf_put(&t, line, (size_t)m);
    }
    qr_buf_put_u8(&t, 0);
    char path[4200];
    tu_build_segment(dir, "m.qseg", (const char *)t.p, ROWS, path);
    qr_buf_free(&t);
    qr_err e;
    if (!(seg = qr_seg_open(path, &e)))
        fail_msg("%s", e.msg);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    qr_seg_close(seg);
    tu_rmdir(dir);
    return 0;
}

static void lookup(qr_invfield *f, const char *w, qr_terminfo *ti)
{
    qr_err e;
    assert_int_equal(qr_tdict_lookup(&f->dict, w, strlen(w), ti, &e), 1);
}

static void test_lists_hold_exactly_the_repeated_rows(void **st)
{
    (void)st;
    qr_invfield f;
    qr_err e;
    assert_int_equal(qr_invfield_open(&f, seg, SEC_BODY, &e), 0);
    qr_terminfo ti;
    lookup(&f, "alpha", &ti);
    assert_true(ti.has_bitmap);
    assert_true(ti.has_multi);
    uint32_t want = 0;
    for (uint32_t r = 0; r < ROWS; r++)
        want += alpha_tf(r) >= 2;
    assert_int_equal(ti.multi_n, want);
    uint64_t bits[(ROWS + 63) / 64] = {0};
    assert_int_equal(qr_invfield_multi_bits(&f, &ti, bits, &e), 0);
    for (uint32_t r = 0; r < ROWS; r++)
        if ((int)(bits[r / 64] >> (r % 64) & 1) != (alpha_tf(r) >= 2))
            fail_msg("row %u: listed %d, tf %u", r, (int)(bits[r / 64] >> (r % 64) & 1),
                     alpha_tf(r));
    /* the norm masks: every row's token count (exact below 24) in the
     * first, the repeated rows' in the second, nothing else */
    const unsigned char *nm = qr_invfield_norm_mask(&f, &ti, &e);
    assert_non_null(nm);
    unsigned char all[32] = {0}, rep[32] = {0};
    for (uint32_t r = 0; r < ROWS; r++) {
        uint32_t len = alpha_tf(r) + (r % 2) + (r % 100 == 0 ? 2 : 0) + 1;
        all[len / 8] |= (unsigned char)(1u << (len % 8));
        if (alpha_tf(r) >= 2)
            rep[len / 8] |= (unsigned char)(1u << (len % 8));
    }
    assert_memory_equal(nm, all, 32);
    assert_memory_equal(nm + 32, rep, 32);
    lookup(&f, "beta", &ti); /* dense, never repeated: an empty list */
    assert_true(ti.has_bitmap && ti.has_multi);
    assert_int_equal(ti.multi_n, 0);
    lookup(&f, "gamma", &ti); /* repeated, but too rare for a bitmap */
    assert_false(ti.has_bitmap);
    assert_false(ti.has_multi);
    qr_invfield_close(&f);
    /* a keyword field has no tfs: no lists */
    assert_int_equal(qr_invfield_open(&f, seg, SEC_KW_SERVICE, &e), 0);
    lookup(&f, "cart", &ti);
    assert_true(ti.has_bitmap);
    assert_false(ti.has_multi);
    qr_invfield_close(&f);
}

static void test_bad_lists_are_corrupt(void **st)
{
    (void)st;
    qr_invfield f;
    qr_err e;
    assert_int_equal(qr_invfield_open(&f, seg, SEC_BODY, &e), 0);
    qr_terminfo ti, bad;
    lookup(&f, "alpha", &ti);
    uint64_t bits[(ROWS + 63) / 64] = {0};
    bad = ti; /* past the end of BITMAPS */
    bad.multi_len = f.bitmaps_len;
    assert_int_equal(qr_invfield_multi_bits(&f, &bad, bits, &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, "m.qseg"));
    assert_non_null(strstr(e.msg, "out of range"));
    bad = ti; /* more rows than its bytes hold */
    bad.multi_n++;
    assert_int_equal(qr_invfield_multi_bits(&f, &bad, bits, &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, "do not decode"));
    bad = ti; /* fewer: bytes left over */
    bad.multi_n--;
    assert_int_equal(qr_invfield_multi_bits(&f, &bad, bits, &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    bad = ti; /* a term without a list */
    bad.has_multi = 0;
    assert_int_equal(qr_invfield_multi_bits(&f, &bad, bits, &e), -1);
    assert_string_equal(e.code, QR_E_INTERNAL);
    assert_null(qr_invfield_norm_mask(&f, &bad, &e));
    bad = ti; /* a bitmap at the very end: no room for the masks */
    bad.bm_word = f.bitmaps_len / 8 - (f.rows + 63) / 64;
    assert_null(qr_invfield_norm_mask(&f, &bad, &e));
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, "norm masks out of range"));
    qr_invfield_close(&f);
}

/* A term info of kind `kind` (df 3) with the given trailing varints, read
 * for a field with tfs and positions (has_freqs) or docs only. */
static int read_info(uint8_t kind, int has_freqs, const uint64_t *tail, int ntail, qr_terminfo *ti)
{
    qr_buf b;
    qr_buf_init(&b);
    qr_buf_put_varint(&b, 10); /* postings length */
    if (has_freqs)
        qr_buf_put_varint(&b, 5); /* positions length */
    qr_buf_put_varint(&b, 3);     /* df */
    qr_buf_put_u8(&b, kind);
    for (int i = 0; i < ntail; i++)
        qr_buf_put_varint(&b, tail[i]);
    qr_rd r;
    qr_rd_init(&r, b.p, b.len);
    int rc = qr_terminfo_read(&r, has_freqs, has_freqs, 0, 0, ti);
    qr_buf_free(&b);
    return rc;
}

/* The term info's kind 0xC1: a bitmap word, then the list's row count and
 * byte length; a list without a bitmap, on a field without tfs, or of more
 * rows than the term has, is refused. */
static void test_term_info_with_a_list(void **st)
{
    (void)st;
    qr_terminfo ti;
    const uint64_t ok[] = {7, 2, 3};
    assert_int_equal(read_info(TI_BLOCKS | TI_HAS_BITMAP | TI_HAS_MULTI, 1, ok, 3, &ti), 0);
    assert_true(ti.has_bitmap && ti.has_multi);
    assert_int_equal(ti.bm_word, 7);
    assert_int_equal(ti.multi_n, 2);
    assert_int_equal(ti.multi_len, 3);
    assert_int_equal(ti.kind, TI_BLOCKS);
    assert_int_equal(read_info(TI_BLOCKS | TI_HAS_BITMAP, 1, ok, 1, &ti), 0); /* format 10 */
    assert_false(ti.has_multi);
    assert_int_equal(read_info(TI_BLOCKS | TI_HAS_MULTI, 1, ok + 1, 2, &ti), -1);
    assert_int_equal(read_info(TI_BLOCKS | TI_HAS_BITMAP | TI_HAS_MULTI, 0, ok, 3, &ti), -1);
    const uint64_t many[] = {7, 4, 3}; /* 4 rows with tf >= 2 of a term in 3 */
    assert_int_equal(read_info(TI_BLOCKS | TI_HAS_BITMAP | TI_HAS_MULTI, 1, many, 3, &ti), -1);
    assert_int_equal(read_info(TI_BLOCKS | TI_HAS_BITMAP | TI_HAS_MULTI, 1, ok, 2, &ti), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists_hold_exactly_the_repeated_rows),
        cmocka_unit_test(test_bad_lists_are_corrupt),
        cmocka_unit_test(test_term_info_with_a_list),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
