/* test_codec.c - block codecs: bit packing, integer blocks, value lists,
 * hex id pages, the compression wrapper; every decoder on truncated input. */
#include "testutil.h"

#include <zstd.h>

#include "format/codec.h"
#include "util/bitpack.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { return tu_rand(&rng); }

static void test_bitpack_every_width(void **st)
{
    (void)st;
    uint64_t in[300], out[300];
    unsigned char packed[300 * 8 + 16];
    for (unsigned w = 0; w <= 64; w++) {
        uint64_t mask = w == 64 ? ~0ull : ((1ull << w) - 1);
        for (size_t n = 0; n < 300; n += 37) {
            for (size_t i = 0; i < n; i++)
                in[i] = rnd() & mask;
            qr_bitpack(in, n, w, packed);
            qr_bitunpack(packed, n, w, out);
            for (size_t i = 0; i < n; i++) {
                assert_int_equal(in[i], out[i]);
                assert_int_equal(in[i], qr_bitpack_get(packed, i, w));
            }
        }
    }
}

static void check_int_roundtrip(const int64_t *v, const uint8_t *nul, uint32_t n)
{
    qr_buf b;
    qr_buf_init(&b);
    qr_int_stats s;
    enc_int_block(&b, v, nul, n, &s);
    assert_false(b.oom);
    int64_t *out = malloc(sizeof *out * (n + 1));
    uint8_t *on = malloc(n + 1);
    const char *why = NULL;
    assert_int_equal(dec_int_block(b.p, b.len, n, out, on, &why), 0);
    int64_t mn = INT64_MAX, mx = INT64_MIN;
    int any = 0;
    for (uint32_t i = 0; i < n; i++) {
        int isn = nul && nul[i];
        assert_int_equal(on[i], isn);
        if (!isn) {
            assert_int_equal(out[i], v[i]);
            mn = v[i] < mn ? v[i] : mn;
            mx = v[i] > mx ? v[i] : mx;
            any = 1;
        }
    }
    assert_int_equal(s.all_null, !any);
    if (any) {
        assert_int_equal(s.min, mn);
        assert_int_equal(s.max, mx);
    }
    /* random access: every row on its own equals the block decode */
    for (uint32_t i = 0; i < n; i++) {
        int64_t one;
        uint8_t onenul;
        assert_int_equal(dec_int_one(b.p, b.len, n, i, &one, &onenul, &why), 0);
        assert_int_equal(onenul, on[i]);
        if (!on[i])
            assert_int_equal(one, out[i]);
    }
    /* every truncation is rejected, never a crash */
    for (size_t cut = 0; cut < b.len; cut++) {
        int64_t one;
        uint8_t onenul;
        assert_int_equal(dec_int_block(b.p, cut, n, out, on, &why), -1);
        if (n)
            assert_int_equal(dec_int_one(b.p, cut, n, n - 1, &one, &onenul, &why), -1);
    }
    free(out);
    free(on);
    qr_buf_free(&b);
}

static void test_int_block_roundtrip(void **st)
{
    (void)st;
    enum { N = 1000 };
    int64_t v[N];
    uint8_t nul[N];
    /* sorted timestamps (delta mode) */
    int64_t t = 1758585600000000000LL;
    for (int i = 0; i < N; i++) {
        t += (int64_t)(rnd() % 3600);
        v[i] = t;
        nul[i] = 0;
    }
    check_int_roundtrip(v, NULL, N);
    check_int_roundtrip(v, nul, N);
    /* with NULLs scattered, and a leading NULL */
    for (int i = 0; i < N; i += 7)
        nul[i] = 1;
    check_int_roundtrip(v, nul, N);
    /* unsorted small ints (FOR mode) */
    for (int i = 0; i < N; i++)
        v[i] = (int64_t)(rnd() % 24) - 3;
    check_int_roundtrip(v, nul, N);
    /* extremes: full 64-bit range */
    v[0] = INT64_MIN;
    v[1] = INT64_MAX;
    v[2] = 0;
    check_int_roundtrip(v, NULL, 3);
    /* all NULL, single row, constant */
    memset(nul, 1, N);
    check_int_roundtrip(v, nul, 10);
    check_int_roundtrip(v, NULL, 1);
    for (int i = 0; i < N; i++)
        v[i] = 9;
    check_int_roundtrip(v, NULL, N);
}

static void test_int_block_constant_is_tiny(void **st)
{
    (void)st;
    int64_t v[65536];
    for (int i = 0; i < 65536; i++)
        v[i] = 9;
    qr_buf b;
    qr_buf_init(&b);
    qr_int_stats s;
    enc_int_block(&b, v, NULL, 65536, &s);
    /* mode, has_nulls, base, width and no packed bits */
    assert_int_equal(b.len, 11);
    qr_buf_free(&b);
}

static void test_vlist_roundtrip(void **st)
{
    (void)st;
    qr_slice in[6] = {{"abc", 3}, {NULL, 0}, {"", 0}, {"x\0y", 3}, {NULL, 0}, {"last", 4}};
    qr_buf b;
    qr_buf_init(&b);
    vlist_put(&b, in, 6);
    qr_slice out[6];
    const char *why;
    assert_int_equal(vlist_get(b.p, b.len, 6, out, &why), 0);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(out[i].p == NULL, in[i].p == NULL);
        assert_int_equal(out[i].n, in[i].n);
        if (in[i].p)
            assert_memory_equal(out[i].p, in[i].p, in[i].n);
    }
    assert_int_equal(vlist_get(b.p, b.len, 5, out, &why), -1);
    for (size_t cut = 0; cut < b.len; cut++)
        assert_int_equal(vlist_get(b.p, cut, 6, out, &why), -1);
    qr_buf_free(&b);
}

static void test_hexid_roundtrip(void **st)
{
    (void)st;
    qr_slice in[7] = {
        {"0123456789abcdef0123456789abcdef", 32}, /* canonical: stored as 16 bytes */
        {"", 0},
        {NULL, 0},
        {"0123456789ABCDEF0123456789ABCDEF", 32}, /* upper case: kept as text */
        {"abc", 3},                               /* wrong length */
        {"zz23456789abcdef0123456789abcdef", 32}, /* not hex */
        {"ffffffffffffffffffffffffffffffff", 32},
    };
    qr_buf b, text;
    qr_buf_init(&b);
    qr_buf_init(&text);
    enc_hexid_page(&b, in, 7, 16);
    qr_slice out[7];
    const char *why;
    assert_int_equal(dec_hexid_page(b.p, b.len, 7, 16, &text, out, &why), 0);
    for (int i = 0; i < 7; i++) {
        assert_int_equal(out[i].p == NULL, in[i].p == NULL);
        assert_int_equal(out[i].n, in[i].n);
        if (in[i].p)
            assert_memory_equal(out[i].p, in[i].p, in[i].n);
    }
    /* one row at a time (through the row index) equals the page decode */
    uint32_t off[10];
    assert_int_equal(hexid_page_index(b.p, b.len, 7, 16, off, &why), 0);
    for (uint32_t i = 0; i < 7; i++) {
        qr_slice one;
        assert_int_equal(dec_hexid_at(b.p, b.len, 16, i, off, &text, &one), 0);
        assert_int_equal(one.p == NULL, in[i].p == NULL);
        assert_int_equal(one.n, in[i].n);
        if (in[i].p)
            assert_memory_equal(one.p, in[i].p, in[i].n);
    }
    /* every byte at the first and the last position: only 0-9 and a-f
     * keep an id canonical (16 bytes), anything else keeps it as text */
    for (int c = 0; c < 256; c++)
        for (int at = 0; at < 32; at += 31) {
            char id[33] = "0123456789abcdef0123456789abcdef";
            id[at] = (char)c;
            qr_slice one = {id, 32};
            int hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
            qr_buf_clear(&b);
            enc_hexid_page(&b, &one, 1, 16);
            assert_int_equal(b.len, hex ? 1 + 16 : 1 + 1 + 32);
            qr_slice back;
            assert_int_equal(dec_hexid_page(b.p, b.len, 1, 16, &text, &back, &why), 0);
            assert_int_equal(back.n, 32);
            assert_memory_equal(back.p, id, 32);
        }
    qr_buf_clear(&b);
    enc_hexid_page(&b, in, 7, 16);
    /* 1 state byte per 4 rows, canonical ids as bytes */
    assert_int_equal(b.len, 2 + 16 + 33 + 4 + 33 + 16);
    for (size_t cut = 0; cut < b.len; cut++) {
        qr_slice one;
        assert_int_equal(dec_hexid_page(b.p, cut, 7, 16, &text, out, &why), -1);
        (void)one;
        assert_int_equal(hexid_page_index(b.p, cut, 7, 16, off, &why), -1);
    }
    /* a page of canonical ids only, odd row count */
    qr_slice ids[9];
    char idtext[9][33];
    for (int i = 0; i < 9; i++) {
        snprintf(idtext[i], sizeof idtext[i], "%016llx%016llx", 0x1234567890abcdefull * (i + 1),
                 0xfedcba0987654321ull ^ (unsigned long long)i);
        ids[i] = (qr_slice){idtext[i], 32};
    }
    qr_buf_clear(&b);
    enc_hexid_page(&b, ids, 9, 16);
    assert_int_equal(hexid_page_index(b.p, b.len, 9, 16, off, &why), 0);
    for (uint32_t i = 0; i < 9; i++) {
        qr_slice one;
        assert_int_equal(dec_hexid_at(b.p, b.len, 16, i, off, &text, &one), 0);
        assert_int_equal(one.n, 32);
        assert_memory_equal(one.p, idtext[i], 32);
    }
    assert_int_equal(hexid_page_index(b.p, b.len - 1, 9, 16, off, &why), -1);
    qr_buf_free(&b);
    qr_buf_free(&text);
}

static void test_comp_roundtrip_and_garbage(void **st)
{
    (void)st;
    char raw[5000];
    for (int i = 0; i < 5000; i++)
        raw[i] = "abcabcabd"[i % 9];
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    qr_buf b, d;
    qr_buf_init(&b);
    qr_buf_init(&d);
    assert_int_equal(comp_put(&b, raw, sizeof raw, 3, cc, NULL), 0);
    assert_true(b.len < 200);
    const char *why;
    assert_int_equal(comp_get(b.p, b.len, &d, dc, NULL, 1 << 20, &why), 0);
    assert_int_equal(d.len, sizeof raw);
    assert_memory_equal(d.p, raw, sizeof raw);
    /* the size bound is enforced */
    assert_int_equal(comp_get(b.p, b.len, &d, dc, NULL, 100, &why), -1);
    /* every truncation fails cleanly */
    for (size_t cut = 0; cut < b.len; cut++)
        assert_int_equal(comp_get(b.p, cut, &d, dc, NULL, 1 << 20, &why), -1);
    /* incompressible data is stored raw */
    qr_buf_clear(&b);
    for (int i = 0; i < 64; i++)
        raw[i] = (char)rnd();
    assert_int_equal(comp_put(&b, raw, 64, 3, cc, NULL), 0);
    assert_int_equal(b.p[0], 0);
    assert_int_equal(b.len, 65);
    ZSTD_freeCCtx(cc);
    ZSTD_freeDCtx(dc);
    qr_buf_free(&b);
    qr_buf_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bitpack_every_width),
        cmocka_unit_test(test_int_block_roundtrip),
        cmocka_unit_test(test_int_block_constant_is_tiny),
        cmocka_unit_test(test_vlist_roundtrip),
        cmocka_unit_test(test_hexid_roundtrip),
        cmocka_unit_test(test_comp_roundtrip_and_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
