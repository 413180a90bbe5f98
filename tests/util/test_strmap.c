/* test_strmap.c - util/strmap against a brute-force oracle (a list
 * searched from the start): ids are dense in insertion order, a key put
 * again keeps its id, lookups find exactly the keys put, across many
 * growths of the table; keys that differ only in length or in their last
 * byte, the empty key and keys with NUL bytes; the _h variants, given the
 * key's hash, agree with the plain calls. */
#include "testutil.h"

#include "util/strmap.h"

typedef struct oracle {
    char (*k)[24];
    size_t *n;
    uint32_t count;
} oracle;

static int64_t oracle_find(const oracle *o, const char *p, size_t n)
{
    for (uint32_t i = 0; i < o->count; i++)
        if (o->n[i] == n && memcmp(o->k[i], p, n) == 0)
            return i;
    return -1;
}

/* Key i of a stream with repeats: a small alphabet and lengths 0..19, so
 * keys share prefixes, differ in their last byte only or are prefixes of
 * each other; some hold NUL bytes. */
static size_t make_key(uint64_t *x, char *k)
{
    size_t n = (size_t)(tu_rand(x) % 20);
    for (size_t i = 0; i < n; i++)
        k[i] = "ab\0c"[tu_rand(x) % 4];
    return n;
}

static void test_against_a_list(void **st)
{
    (void)st;
    enum { N = 6000 };
    oracle o = {malloc(sizeof *o.k * N), malloc(sizeof *o.n * N), 0};
    assert_non_null(o.k);
    assert_non_null(o.n);
    qr_strmap m, mh;
    qr_strmap_init(&m);
    qr_strmap_init(&mh);
    assert_int_equal(qr_strmap_get(&m, "a", 1), -1); /* empty map */
    char(*keys)[24] = malloc(sizeof *keys * N);      /* the maps point into these */
    assert_non_null(keys);
    uint64_t x = 42;
    for (uint32_t i = 0; i < N; i++) {
        size_t n = make_key(&x, keys[i]);
        int64_t want = oracle_find(&o, keys[i], n);
        assert_int_equal(qr_strmap_get(&m, keys[i], n), want);
        uint64_t h = qr_strmap_hash(keys[i], n);
        assert_int_equal(qr_strmap_get_h(&mh, keys[i], n, h), want);
        int added, added_h;
        int64_t id = qr_strmap_put(&m, keys[i], n, &added);
        int64_t id_h = qr_strmap_put_h(&mh, keys[i], n, h, &added_h);
        if (want < 0) {
            assert_int_equal(added, 1);
            assert_int_equal(id, o.count); /* dense, in insertion order */
            memcpy(o.k[o.count], keys[i], n);
            o.n[o.count++] = n;
        } else {
            assert_int_equal(added, 0);
            assert_int_equal(id, want);
        }
        assert_int_equal(id_h, id);
        assert_int_equal(added_h, added);
    }
    assert_int_equal(m.count, o.count);
    assert_true(o.count > 1000); /* many growths */
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < o.count; i++) {
        assert_int_equal(qr_strmap_get(&m, o.k[i], o.n[i]), i);
        /* each map answers the other kind of call: the hashes agree */
        assert_int_equal(qr_strmap_get(&mh, o.k[i], o.n[i]), i);
        assert_int_equal(qr_strmap_get_h(&m, o.k[i], o.n[i], qr_strmap_hash(o.k[i], o.n[i])), i);
        assert_int_equal(m.keys[i].n, o.n[i]);
        bytes += o.n[i];
    }
    assert_int_equal(m.key_bytes, bytes);
    /* absent keys: one byte longer than a present one */
    char k[25];
    for (uint32_t i = 0; i < o.count; i += 7) {
        memcpy(k, o.k[i], o.n[i]);
        k[o.n[i]] = 'z';
        assert_int_equal(qr_strmap_get(&m, k, o.n[i] + 1), -1);
    }
    qr_strmap_free(&m);
    qr_strmap_free(&mh);
    free(keys);
    free(o.k);
    free(o.n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_a_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
