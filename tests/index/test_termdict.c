/* test_termdict.c - tests for index/termdict: a dictionary of random terms
 * written and read back; seeks to every term, seeks to arbitrary keys and chains
 * of forward seeks from a positioned iterator (qr_titer_seek, what the
 * automaton walk uses) all compared with a binary search over the sorted
 * terms; ordered iteration; block byte-class masks.
 */
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "index/termdict.h"

#define NTERMS 20000

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return tu_rand(&rng_state); }

typedef struct term {
    char s[16];
    size_t n;
} term;

static int cmp_term(const void *a, const void *b)
{
    const term *x = a, *y = b;
    size_t m = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->s, y->s, m);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* A random term over a small alphabet, so terms share long prefixes. */
static void random_term(term *t)
{
    static const char alpha[] = "abc019z";
    t->n = 1 + rnd() % 12;
    for (size_t i = 0; i < t->n; i++)
        t->s[i] = alpha[rnd() % (sizeof alpha - 1)];
}

typedef struct fixture {
    term *terms;
    size_t n;
    qr_tdictw w;
    qr_tdict d;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->terms = malloc(sizeof *f->terms * NTERMS);
    for (size_t i = 0; i < NTERMS; i++)
        random_term(&f->terms[i]);
    qsort(f->terms, NTERMS, sizeof *f->terms, cmp_term);
    size_t n = 0; /* unique */
    for (size_t i = 0; i < NTERMS; i++)
        if (n == 0 || cmp_term(&f->terms[n - 1], &f->terms[i]) != 0)
            f->terms[n++] = f->terms[i];
    f->n = n;
    qr_tdictw_init(&f->w);
    const unsigned char info[1] = {0}; /* empty postings, no positions */
    for (size_t i = 0; i < n; i++)
        assert_int_equal(qr_tdictw_add(&f->w, f->terms[i].s, f->terms[i].n, info, 1, 0, 0), 0);
    assert_int_equal(qr_tdictw_finish(&f->w), 0);
    qr_err e = {0};
    assert_int_equal(qr_tdict_open(&f->d, f->w.index.p, f->w.index.len, f->w.dict.p, f->w.dict.len,
                                   0, 0, "test", &e),
                     0);
    assert_int_equal(f->d.nterms, n);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    qr_tdict_close(&f->d);
    qr_tdictw_free(&f->w);
    free(f->terms);
    free(f);
    return 0;
}

/* Index of the first term >= key (n when none). */
static size_t lower_bound(const fixture *f, const term *key)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_term(&f->terms[mid], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void assert_at(const fixture *f, const qr_titer *it, int r, size_t want)
{
    if (want == f->n) {
        assert_int_equal(r, 0);
        return;
    }
    assert_int_equal(r, 1);
    assert_int_equal(it->len, f->terms[want].n);
    assert_memory_equal(it->term, f->terms[want].s, it->len);
}

static void test_iterate_and_seek_terms(void **state)
{
    fixture *f = *state;
    assert_true(f->n > 5 * QR_TERMS_PER_BLOCK);
    qr_titer it;
    qr_err e = {0};
    int r = qr_tdict_seek(&f->d, &it, "", 0, &e);
    for (size_t i = 0; i < f->n; i++) {
        assert_at(f, &it, r, i);
        r = qr_titer_next(&it, &e);
    }
    assert_int_equal(r, 0);
    for (size_t i = 0; i < f->n; i += 7) {
        r = qr_tdict_seek(&f->d, &it, f->terms[i].s, f->terms[i].n, &e);
        assert_at(f, &it, r, i);
    }
}

static void test_seek_random_keys(void **state)
{
    fixture *f = *state;
    qr_err e = {0};
    for (int k = 0; k < 20000; k++) {
        term key;
        random_term(&key);
        qr_titer it;
        int r = qr_tdict_seek(&f->d, &it, key.s, key.n, &e);
        assert_at(f, &it, r, lower_bound(f, &key));
    }
}

/* Chains of qr_titer_seek from a positioned iterator: short steps inside a
 * block, jumps over many blocks, keys equal to or behind the current term,
 * and keys past the last term. */
static void test_forward_seek_chains(void **state)
{
    fixture *f = *state;
    qr_err e = {0};
    for (int chain = 0; chain < 300; chain++) {
        qr_titer it;
        size_t at = rnd() % f->n;
        int r = qr_tdict_seek(&f->d, &it, f->terms[at].s, f->terms[at].n, &e);
        assert_at(f, &it, r, at);
        for (int step = 0; step < 60 && at < f->n; step++) {
            term key;
            unsigned kind = (unsigned)(rnd() % 6);
            if (kind == 0) { /* a random key: ahead or behind */
                random_term(&key);
            } else {
                size_t jump = kind == 1   ? 0
                              : kind == 2 ? 1 + rnd() % 8
                              : kind == 3 ? 1 + rnd() % (4 * QR_TERMS_PER_BLOCK)
                              : kind == 4 ? 1 + rnd() % (f->n / 4)
                                          : f->n;
                size_t t = at + jump;
                if (t >= f->n) {
                    key = f->terms[f->n - 1];
                    key.s[key.n++] = 'z'; /* past the last term */
                } else {
                    key = f->terms[t];
                    if (rnd() % 2 && key.n > 1)
                        key.n--; /* a prefix: lands on or before terms[t] */
                }
            }
            r = qr_titer_seek(&it, key.s, key.n, &e);
            size_t want = lower_bound(f, &key);
            assert_at(f, &it, r, want);
            at = want;
        }
    }
}

static void test_block_masks(void **state)
{
    fixture *f = *state;
    for (uint32_t b = 0; b < f->d.nblocks; b++) {
        uint64_t m = 0;
        for (size_t i = (size_t)b * QR_TERMS_PER_BLOCK;
             i < f->n && i < (size_t)(b + 1) * QR_TERMS_PER_BLOCK; i++)
            for (size_t j = 0; j < f->terms[i].n; j++)
                m |= 1ull << qr_tdict_byte_class((unsigned char)f->terms[i].s[j]);
        assert_true(m == f->d.blk_mask[b]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iterate_and_seek_terms),
        cmocka_unit_test(test_seek_random_keys),
        cmocka_unit_test(test_forward_seek_chains),
        cmocka_unit_test(test_block_masks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
