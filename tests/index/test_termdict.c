/* test_termdict.c - tests for index/termdict: a dictionary of random terms
 * written and read back; seeks to every term, seeks to arbitrary keys and chains
 * of forward seeks from a positioned iterator (qr_titer_seek, what the
 * automaton walk uses) all compared with a binary search over the sorted
 * terms; ordered iteration; block byte-class masks; term infos, which are
 * read lazily (each term's lists start where the previous term's end).
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

#include "index/invfmt.h"
#include "index/termdict.h"

#define NTERMS 20000

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { return tu_rand(&rng_state); }

typedef struct term {
    char s[40];
    size_t n;
    size_t chars; /* characters: the length the dictionary orders by first */
} term;

/* Dictionary order, written out independently: characters, then bytes. */
static int cmp_term(const void *a, const void *b)
{
    const term *x = a, *y = b;
    if (x->chars != y->chars)
        return x->chars < y->chars ? -1 : 1;
    size_t m = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->s, y->s, m);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* Characters of a UTF-8 string (the lead bytes). */
static size_t count_chars(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)s[i] >> 6) != 2;
    return c;
}

/* A random term over a small alphabet (so terms share long prefixes) with
 * some two- and three-byte characters, so lengths in bytes and in
 * characters differ. */
static void random_term(term *t)
{
    static const char *const alpha[] = {"a", "b", "c", "0", "1", "9", "z", "\xc3\xa9", "\xe2\x82\xac"};
    size_t chars = 1 + rnd() % 12;
    t->n = 0;
    for (size_t i = 0; i < chars; i++) {
        unsigned k = (unsigned)(rnd() % 16);
        const char *c = alpha[k < 7 ? k : k < 14 ? k % 7 : k - 7];
        memcpy(t->s + t->n, c, strlen(c));
        t->n += strlen(c);
    }
    t->chars = chars;
}

/* After cutting or extending key bytes: its characters again. */
static void recount(term *t) { t->chars = count_chars(t->s, t->n); }

typedef struct fixture {
    term *terms;
    size_t n;
    uint64_t *post_at; /* where term i's postings start (n + 1 entries) */
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
    f->post_at = malloc(sizeof *f->post_at * (n + 1));
    f->post_at[0] = 0;
    for (size_t i = 0; i < n; i++) {
        /* a blocks-kind info: postings length (one or two varint bytes),
         * df 1, kind */
        uint64_t pl = 1 + (i * 37) % 300;
        qr_buf info;
        qr_buf_init(&info);
        qr_buf_put_varint(&info, pl);
        qr_buf_put_varint(&info, 1);
        qr_buf_put_u8(&info, TI_BLOCKS);
        assert_int_equal(qr_tdictw_add(&f->w, f->terms[i].s, f->terms[i].n, info.p, info.len,
                                       f->post_at[i], 0),
                         0);
        qr_buf_free(&info);
        f->post_at[i + 1] = f->post_at[i] + pl;
    }
    assert_int_equal(qr_tdictw_finish(&f->w), 0);
    qr_err e = {0};
    assert_int_equal(qr_tdict_open(&f->d, QR_SEG_VERSION, f->w.index.p, f->w.index.len, f->w.dict.p,
                                   f->w.dict.len, 0, 0, "test", &e),
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
    free(f->post_at);
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

/* The current term's info: its lists start where the previous term's end. */
static void assert_info(const fixture *f, qr_titer *it, size_t want)
{
    qr_terminfo ti;
    qr_err e = {0};
    assert_int_equal(qr_titer_info(it, &ti, &e), 0);
    assert_int_equal(ti.post_off, f->post_at[want]);
    assert_int_equal(ti.post_len, f->post_at[want + 1] - f->post_at[want]);
    assert_int_equal(ti.df, 1);
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
        /* a key placed among the terms of another length (what an automaton
         * walk does with a prefix), then a forward seek from there */
        key.n = rnd() % (key.n + 1);
        key.chars = rnd() % 15;
        r = qr_tdict_seek_at(&f->d, &it, (uint32_t)key.chars, key.s, key.n, &e);
        size_t want = lower_bound(f, &key);
        assert_at(f, &it, r, want);
        if (r == 1) {
            term next;
            random_term(&next);
            next.chars = key.chars + rnd() % 2;
            if (cmp_term(&next, &key) > 0) {
                r = qr_titer_seek_at(&it, (uint32_t)next.chars, next.s, next.n, &e);
                assert_at(f, &it, r, lower_bound(f, &next));
            }
        }
    }
}

/* The lengths below a literal prefix, as walks learn them: seeks to
 * random keys (of 1..12 bytes) at random lengths, each noted when it lands
 * past the length (what a walk does), then asked about. A 1 only when no
 * term of the length is >= the key (else a walk would skip matches), a 2
 * only when no term is that long or longer; a key noted (of at most 8
 * bytes) is answered 1 when asked again, and so is any key above it. */
static void check_below(const fixture *f, uint32_t cpl, const char *key, size_t n, int got)
{
    if (got != 1)
        return;
    for (size_t i = 0; i < f->n; i++) /* brute force: every term of the length below it */
        if (f->terms[i].chars == cpl) {
            size_t m = n < f->terms[i].n ? n : f->terms[i].n;
            int c = memcmp(f->terms[i].s, key, m);
            if (!(c < 0 || (c == 0 && f->terms[i].n < n)))
                fail_msg("length %u: said below a %zu-byte key, but a term is not", cpl, n);
        }
}

static void test_lengths_below_keys(void **state)
{
    fixture *f = *state;
    qr_err e = {0};
    size_t longest = f->terms[f->n - 1].chars;
    int fired = 0;
    for (int k = 0; k < 40000; k++) {
        term key;
        random_term(&key);
        key.n = 1 + rnd() % key.n;
        uint32_t cpl = 1 + (uint32_t)(rnd() % 15);
        if (k % 2 == 0) { /* a walk's seek */
            qr_titer it;
            int r = qr_tdict_seek_at(&f->d, &it, cpl, key.s, key.n, &e);
            assert_true(r >= 0);
            if (r == 0 || qr_titer_cpl(&it) > cpl) {
                qr_tdict_note_below(&f->d, cpl, key.s, key.n);
                if (key.n <= 8 && cpl <= longest) {
                    assert_int_equal(qr_tdict_len_below(&f->d, cpl, key.s, key.n, &e), 1);
                    fired++;
                }
                /* a longer key's first bytes are below it, not above the terms */
                for (size_t cut = 1; cut < key.n && cpl <= longest; cut++)
                    check_below(f, cpl, key.s, cut, qr_tdict_len_below(&f->d, cpl, key.s, cut, &e));
            }
            continue;
        }
        int got = qr_tdict_len_below(&f->d, cpl, key.s, key.n, &e);
        assert_true(got >= 0);
        if (got == 2) {
            assert_true(cpl > longest);
            continue;
        }
        assert_true(cpl <= longest);
        check_below(f, cpl, key.s, key.n, got);
    }
    /* keys just above each length's last term: its bytes and one more,
     * so their first 8 bytes (of a last term that long) are not above it */
    for (size_t i = 0; i < f->n; i++) {
        if (i + 1 < f->n && f->terms[i + 1].chars == f->terms[i].chars)
            continue;
        uint32_t cpl = (uint32_t)f->terms[i].chars;
        char key[48];
        size_t n = f->terms[i].n;
        memcpy(key, f->terms[i].s, n);
        key[n++] = 'z';
        qr_titer it;
        int r = qr_tdict_seek_at(&f->d, &it, cpl, key, n, &e);
        assert_true(r == 0 || (r == 1 && qr_titer_cpl(&it) > cpl));
        qr_tdict_note_below(&f->d, cpl, key, n);
        for (size_t cut = 1; cut <= n; cut++)
            check_below(f, cpl, key, cut, qr_tdict_len_below(&f->d, cpl, key, cut, &e));
    }
    if (fired < 20)
        fail_msg("only %d seeks past a length to learn from", fired);
    qr_tdict_close(&f->d);
    /* what was learned goes with the dictionary; a reopened one knows none */
    assert_int_equal(qr_tdict_open(&f->d, QR_SEG_VERSION, f->w.index.p, f->w.index.len, f->w.dict.p,
                                   f->w.dict.len, 0, 0, "test", &e),
                     0);
    assert_null(f->d.lens);
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
                        key.n--; /* a shorter key: maybe cut inside a character */
                }
                recount(&key);
            }
            r = qr_titer_seek(&it, key.s, key.n, &e);
            size_t want = lower_bound(f, &key);
            assert_at(f, &it, r, want);
            if (want < f->n && rnd() % 3 == 0)
                assert_info(f, &it, want);
            at = want;
        }
    }
}

/* Infos read in order, every k-th term only (the others' infos skipped and
 * summed later), twice for one term, and after a seek. */
static void test_term_infos(void **state)
{
    fixture *f = *state;
    qr_err e = {0};
    static const size_t every[] = {1, 3, 64, 65, 200};
    for (size_t k = 0; k < sizeof every / sizeof *every; k++) {
        qr_titer it;
        int r = qr_tdict_seek(&f->d, &it, "", 0, &e);
        for (size_t i = 0; i < f->n; i++) {
            assert_int_equal(r, 1);
            if (i % every[k] == 0) {
                assert_info(f, &it, i);
                if (i % 2)
                    assert_info(f, &it, i);
            }
            r = qr_titer_next(&it, &e);
        }
        assert_int_equal(r, 0);
    }
    for (size_t i = 0; i < f->n; i += 11) {
        qr_titer it;
        assert_int_equal(qr_tdict_seek(&f->d, &it, f->terms[i].s, f->terms[i].n, &e), 1);
        assert_info(f, &it, i);
        qr_terminfo ti;
        assert_int_equal(qr_tdict_lookup(&f->d, f->terms[i].s, f->terms[i].n, &ti, &e), 1);
        assert_int_equal(ti.post_off, f->post_at[i]);
    }
}

/* Where block k's record in the term index keeps its first term and its
 * terms part's length (the index layout of termdict.h). */
static void index_entry(const fixture *f, uint32_t k, size_t *first_at, size_t *tlen_at)
{
    assert_true(k < f->d.nblocks);
    *first_at = f->d.blk[k].first;
    *tlen_at = QR_TDICT_HEADER + (size_t)k * QR_TDICT_REC + offsetof(qr_tblk, tlen);
}

static int open_copy(const fixture *f, const unsigned char *index, size_t dict_len, qr_err *e)
{
    qr_tdict d;
    int r = qr_tdict_open(&d, QR_SEG_VERSION, index, f->w.index.len, f->w.dict.p, dict_len, 0, 0,
                          "test", e);
    if (r == 0)
        qr_tdict_close(&d);
    return r;
}

/* Open, then walk every term: 0, or -1 with e set where it failed. */
static int open_walk(const fixture *f, const unsigned char *index, qr_err *e)
{
    qr_tdict d;
    if (qr_tdict_open(&d, QR_SEG_VERSION, index, f->w.index.len, f->w.dict.p, f->w.dict.len, 0,
                      0, "test", e) != 0)
        return -1;
    qr_titer it;
    int r = qr_tdict_seek_block(&d, &it, 0, e);
    while (r == 1)
        r = qr_titer_next(&it, e);
    qr_tdict_close(&d);
    return r < 0 ? -1 : 0;
}

/* A damaged term index is refused: at open, a block with an empty or an
 * oversized terms part, a first term out of place, bytes after the last;
 * when an iterator enters the block, blocks whose first terms are out of
 * order and records whose key8 or code point length disagree with their
 * term (format 9 does not read the first terms at open); infos cut short
 * when read. */
static void test_damaged_index(void **state)
{
    fixture *f = *state;
    qr_err e = {0};
    unsigned char *ix = malloc(f->w.index.len);
    size_t first_at, tlen_at;
    index_entry(f, 3, &first_at, &tlen_at);
    static const uint32_t bad_tlen[] = {0, 1u << 30};
    for (size_t i = 0; i < 2; i++) {
        memcpy(ix, f->w.index.p, f->w.index.len);
        qr_store_u32(ix + tlen_at, bad_tlen[i]);
        assert_int_equal(open_copy(f, ix, f->w.dict.len, &e), -1);
        assert_string_equal(e.code, QR_E_CORRUPT);
    }
    /* a block's first term made smaller than the one before's (of the same
     * length): its first byte to the smallest byte */
    uint32_t k = 1;
    while (k < f->d.nblocks && f->d.blk[k].cpl != f->d.blk[k - 1].cpl)
        k++;
    assert_true(k < f->d.nblocks);
    index_entry(f, k, &first_at, &tlen_at);
    memcpy(ix, f->w.index.p, f->w.index.len);
    ix[first_at] = 0;
    assert_int_equal(open_copy(f, ix, f->w.dict.len, &e), 0);
    assert_int_equal(open_walk(f, ix, &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    /* a record whose key8 or code point length disagrees with its term:
     * found on entering it; a first term out of place, or a nonzero pad:
     * at open */
    static const size_t field_at[] = {offsetof(qr_tblk, key8), offsetof(qr_tblk, cpl),
                                      offsetof(qr_tblk, first), offsetof(qr_tblk, zero)};
    for (size_t i = 0; i < sizeof field_at / sizeof *field_at; i++) {
        memcpy(ix, f->w.index.p, f->w.index.len);
        ix[QR_TDICT_HEADER + 5 * QR_TDICT_REC + field_at[i]] ^= 1;
        assert_int_equal(open_copy(f, ix, f->w.dict.len, &e), i < 2 ? 0 : -1);
        if (i < 2)
            assert_int_equal(open_walk(f, ix, &e), -1);
        assert_string_equal(e.code, QR_E_CORRUPT);
        assert_non_null(strstr(e.msg, "entry 5"));
    }
    assert_int_equal(open_walk(f, f->w.index.p, &e), 0); /* the undamaged one walks */
    qr_tdict d;
    assert_int_equal(qr_tdict_open(&d, QR_SEG_VERSION, f->w.index.p, f->w.index.len - 1,
                                   f->w.dict.p, f->w.dict.len, 0, 0, "test", &e),
                     -1);
    /* the last block's infos cut short: its terms read, its last info not */
    assert_int_equal(qr_tdict_open(&d, QR_SEG_VERSION, f->w.index.p, f->w.index.len, f->w.dict.p,
                                   f->w.dict.len - 2, 0, 0, "test", &e),
                     0);
    qr_titer it;
    int r = qr_tdict_seek(&d, &it, f->terms[f->n - 1].s, f->terms[f->n - 1].n, &e);
    assert_int_equal(r, 1);
    qr_terminfo ti;
    assert_int_equal(qr_titer_info(&it, &ti, &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    qr_tdict_close(&d);
    free(ix);
}

/* Seeks with a length given from an iterator past the end, and to a key
 * of a length below the current term's (a fresh search, backwards). */
static void test_seek_at_edges(void **state)
{
    fixture *f = *state;
    qr_err e = {0};
    qr_titer it;
    term last = f->terms[f->n - 1];
    assert_int_equal(qr_tdict_seek(&f->d, &it, last.s, last.n, &e), 1);
    assert_int_equal(qr_titer_next(&it, &e), 0); /* past the end */
    term key = f->terms[f->n / 2];
    int r = qr_titer_seek_at(&it, (uint32_t)key.chars, key.s, key.n, &e);
    assert_at(f, &it, r, f->n / 2);
    /* now backwards: a key among shorter terms */
    key = f->terms[f->n / 5];
    assert_true(key.chars < f->terms[f->n / 2].chars);
    r = qr_titer_seek_at(&it, (uint32_t)key.chars, key.s, key.n, &e);
    assert_at(f, &it, r, f->n / 5);
    /* the empty key at length 0: the first term */
    r = qr_titer_seek_at(&it, 0, "", 0, &e);
    assert_at(f, &it, r, 0);
}

/* Each block's byte-class mask, and blocks of at most 64 terms of one
 * length in characters. */
static void test_block_masks(void **state)
{
    fixture *f = *state;
    uint64_t *m = calloc(f->d.nblocks, sizeof *m);
    uint32_t *n = calloc(f->d.nblocks, sizeof *n);
    qr_titer it;
    qr_err e = {0};
    int r = qr_tdict_seek(&f->d, &it, "", 0, &e);
    for (size_t i = 0; i < f->n; i++) {
        assert_int_equal(r, 1);
        assert_true(it.blk < f->d.nblocks);
        assert_int_equal(qr_titer_cpl(&it), f->terms[i].chars);
        n[it.blk]++;
        for (size_t j = 0; j < f->terms[i].n; j++)
            m[it.blk] |= 1ull << qr_tdict_byte_class((unsigned char)f->terms[i].s[j]);
        r = qr_titer_next(&it, &e);
    }
    assert_int_equal(r, 0);
    for (uint32_t b = 0; b < f->d.nblocks; b++) {
        assert_true(m[b] == f->d.blk_mask[b]);
        assert_true(n[b] >= 1 && n[b] <= QR_TERMS_PER_BLOCK);
    }
    free(m);
    free(n);
}

/* A term the row shapes mask, written out here: one with an ASCII digit,
 * or of a-f only and 4 or 8 and more bytes. */
static int is_variable(const char *s, size_t n)
{
    int hex = 1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= '0' && s[i] <= '9')
            return 1;
        hex &= s[i] >= 'a' && s[i] <= 'f';
    }
    return hex && (n == 4 || n >= 8);
}

/* Format 13: the same terms written with variable masks. The index has
 * the flag and 8 bytes more a block, the same records (but for where the
 * first terms are) and masks, and each block's variable mask is the
 * classes of its variable terms; the dictionary reads as before. Finding
 * blocks by their variable masks, and counting those the masks pass,
 * agree with a scan of these; the
 * flag in an index of format 12, or an unknown flag, is refused. */
static void test_variable_masks(void **state)
{
    fixture *f = *state;
    qr_tdictw w;
    qr_tdictw_init(&w);
    qr_tdictw_variable_masks(&w);
    for (size_t i = 0; i < f->n; i++) {
        qr_buf info; /* as setup writes it */
        qr_buf_init(&info);
        qr_buf_put_varint(&info, 1 + (i * 37) % 300);
        qr_buf_put_varint(&info, 1);
        qr_buf_put_u8(&info, TI_BLOCKS);
        assert_int_equal(
            qr_tdictw_add(&w, f->terms[i].s, f->terms[i].n, info.p, info.len, f->post_at[i], 0), 0);
        qr_buf_free(&info);
    }
    assert_int_equal(qr_tdictw_finish(&w), 0);
    uint32_t nb = f->d.nblocks;
    assert_int_equal(w.index.len, f->w.index.len + 8ull * nb);
    assert_int_equal(qr_load_u32(w.index.p + 4), QR_TDICT_VMASKS);
    assert_int_equal(qr_load_u32(f->w.index.p + 4), 0);
    assert_memory_equal(w.dict.p, f->w.dict.p, f->w.dict.len);
    qr_tdict d;
    qr_err e = {0};
    assert_int_equal(qr_tdict_open(&d, QR_SEG_VERSION, w.index.p, w.index.len, w.dict.p, w.dict.len,
                                   0, 0, "test", &e),
                     0);
    assert_null(f->d.blk_vmask);
    assert_non_null(d.blk_vmask);
    assert_int_equal(d.nblocks, nb);
    uint64_t *vm = calloc(nb, sizeof *vm);
    qr_titer it;
    int r = qr_tdict_seek(&d, &it, "", 0, &e);
    for (size_t i = 0; i < f->n; i++) {
        assert_int_equal(r, 1);
        assert_int_equal(it.len, f->terms[i].n);
        assert_memory_equal(it.term, f->terms[i].s, it.len);
        if (is_variable(f->terms[i].s, f->terms[i].n))
            for (size_t j = 0; j < f->terms[i].n; j++)
                vm[it.blk] |= 1ull << qr_tdict_byte_class((unsigned char)f->terms[i].s[j]);
        r = qr_titer_next(&it, &e);
    }
    assert_int_equal(r, 0);
    uint32_t with_v = 0, narrower = 0;
    for (uint32_t b = 0; b < nb; b++) {
        assert_true(d.blk_vmask[b] == vm[b]);
        assert_true(d.blk_mask[b] == f->d.blk_mask[b]);
        assert_int_equal(d.blk[b].off, f->d.blk[b].off);
        assert_int_equal(d.blk[b].first, f->d.blk[b].first + 8 * nb);
        with_v += vm[b] != 0;
        narrower += vm[b] != d.blk_mask[b];
    }
    assert_true(with_v > 0 && narrower > 0); /* variable terms, and others */
    /* blocks found and counted by their masks, against a scan */
    static const char *const needs[] = {"1", "a", "ab", "9z", "c0", "\xc3"};
    for (size_t k = 0; k < sizeof needs / sizeof *needs; k++) {
        uint64_t need = 0;
        for (const char *c = needs[k]; *c; c++)
            need |= 1ull << qr_tdict_byte_class((unsigned char)*c);
        uint32_t all = 0, var = 0, b = 0, found = 0;
        for (uint32_t x = 0; x < nb; x++) {
            all += (d.blk_mask[x] & need) == need;
            var += (vm[x] & need) == need;
        }
        for (;; b++, found++) {
            uint32_t want = b;
            while (want < nb && (vm[want] & need) != need)
                want++;
            assert_int_equal(qr_tdict_find_vmask(&d, b, need, &b, &e), 0);
            assert_int_equal(b, want);
            if (b == nb)
                break;
        }
        assert_int_equal(found, var);
        /* verified by ranges (the index is in memory here: nothing to
         * check), the same masks read in place */
        assert_int_equal(qr_tdict_check_vmasks(&d, nb / 3, nb / 3, &e), 0);
        uint32_t counted;
        assert_int_equal(qr_tdict_count_masks(&d, need, &counted, &e), 0);
        assert_int_equal(counted, all);
    }
    /* the first block of each length (and of none: past the last), by
     * the records alone, against a scan */
    for (uint32_t cpl = 0; cpl <= (uint32_t)d.blk[nb - 1].cpl + 1; cpl++) {
        uint32_t want = 0, got;
        while (want < nb && d.blk[want].cpl < cpl)
            want++;
        assert_int_equal(qr_tdict_len_start(&d, cpl, &got, &e), 0);
        assert_int_equal(got, want);
    }
    qr_tdict_close(&d);
    /* the flag where format 12 has 0, and a flag no format has */
    unsigned char *copy = malloc(w.index.len);
    memcpy(copy, w.index.p, w.index.len);
    assert_int_equal(
        qr_tdict_open(&d, 12, copy, w.index.len, w.dict.p, w.dict.len, 0, 0, "old", &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, "old: corrupt term index header"));
    qr_store_u32(copy + 4, 2);
    assert_int_equal(
        qr_tdict_open(&d, QR_SEG_VERSION, copy, w.index.len, w.dict.p, w.dict.len, 0, 0, "new", &e),
        -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    free(copy);
    free(vm);
    qr_tdictw_free(&w);
}

/* The same dictionary's index in format 8 (varint entries, what segments
 * of that format hold): written out here from the records, it opens
 * (parsed into records of its own) and reads as the format 9 one does;
 * damaged, it is refused. */
static void v8_index(const fixture *f, qr_buf *out)
{
    qr_buf_init(out);
    qr_buf_put_u32(out, f->d.nblocks);
    qr_buf_put_u64(out, f->d.nterms);
    for (uint32_t b = 0; b < f->d.nblocks; b++) {
        const qr_tblk *r = &f->d.blk[b];
        qr_buf_put_u32(out, r->off);
        qr_buf_put_varint(out, r->post);
        qr_buf_put_varint(out, r->pos);
        qr_buf_put_lenbytes(out, f->w.index.p + r->first, r->first_len);
        qr_buf_put_u64(out, f->d.blk_mask[b]);
        qr_buf_put_u32(out, r->tlen);
    }
}

static void test_format8_index(void **state)
{
    fixture *f = *state;
    qr_buf v8;
    v8_index(f, &v8);
    qr_err e = {0};
    qr_tdict d;
    assert_int_equal(
        qr_tdict_open(&d, 8, v8.p, v8.len, f->w.dict.p, f->w.dict.len, 0, 0, "test", &e), 0);
    assert_int_equal(d.nblocks, f->d.nblocks);
    assert_int_equal(d.nterms, f->n);
    for (uint32_t b = 0; b < d.nblocks; b++) {
        assert_true(d.blk[b].key8 == f->d.blk[b].key8);
        assert_int_equal(d.blk[b].off, f->d.blk[b].off);
        assert_int_equal(d.blk[b].tlen, f->d.blk[b].tlen);
        assert_int_equal(d.blk[b].post, f->d.blk[b].post);
        assert_int_equal(d.blk[b].cpl, f->d.blk[b].cpl);
        assert_true(d.blk_mask[b] == f->d.blk_mask[b]);
    }
    qr_titer it;
    int r = qr_tdict_seek(&d, &it, "", 0, &e);
    for (size_t i = 0; i < f->n; i++, r = qr_titer_next(&it, &e)) {
        assert_int_equal(r, 1);
        assert_int_equal(it.len, f->terms[i].n);
        assert_memory_equal(it.term, f->terms[i].s, it.len);
        if (i % 97 == 0) {
            qr_terminfo ti;
            assert_int_equal(qr_tdict_lookup(&d, f->terms[i].s, f->terms[i].n, &ti, &e), 1);
            assert_int_equal(ti.post_off, f->post_at[i]);
        }
    }
    assert_int_equal(r, 0);
    qr_tdict_close(&d);
    /* cut short, and with trailing bytes */
    assert_int_equal(
        qr_tdict_open(&d, 8, v8.p, v8.len - 1, f->w.dict.p, f->w.dict.len, 0, 0, "test", &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    qr_buf_put_u8(&v8, 0);
    assert_int_equal(
        qr_tdict_open(&d, 8, v8.p, v8.len, f->w.dict.p, f->w.dict.len, 0, 0, "test", &e), -1);
    assert_non_null(strstr(e.msg, "trailing bytes"));
    qr_buf_free(&v8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iterate_and_seek_terms),
        cmocka_unit_test(test_seek_random_keys),
        cmocka_unit_test(test_forward_seek_chains),
        cmocka_unit_test(test_term_infos),
        cmocka_unit_test(test_damaged_index),
        cmocka_unit_test(test_seek_at_edges),
        cmocka_unit_test(test_block_masks),
        cmocka_unit_test(test_variable_masks),
        cmocka_unit_test(test_lengths_below_keys),
        cmocka_unit_test(test_format8_index),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
