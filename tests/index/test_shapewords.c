/* test_shapewords.c - the SHAPEWORDS block (index/shapewords.c): its bytes
 * for a small corpus, field by field; lookups of every word, absent words
 * and words before the first and after the last; a copy when the block is
 * not aligned; random corpora against a brute force over the shapes'
 * text; a built segment stores the block its SHAPES make, and a query's
 * field reads it in place or, without it (a segment written before it),
 * makes the same index; the shapes holding every one of a few words
 * (qr_shape_words_all) against the text; malformed blocks are refused (XX001); quarry
 * verify's check of a field finds blocks that parse but disagree. */
#include "testutil.h"

#include "gen/otelgen.h"
#include "index/invfmt.h"
#include "index/invindex.h"
#include "index/norms.h"
#include "index/shapewords.h"

/* The SHAPES block of rows given as space-separated words ("" no tokens). */
static void shapes_of(const char *const *rows, uint32_t n, qr_buf *out, qr_shapes *s)
{
    static char store[8192];
    size_t used = 0;
    qr_slice terms[256];
    uint32_t nterms = 0, tids[2048], doclen[256], nt = 0;
    assert_true(n <= 256);
    for (uint32_t r = 0; r < n; r++) {
        doclen[r] = 0;
        const char *p = rows[r];
        while (*p) {
            while (*p == ' ')
                p++;
            size_t l = strcspn(p, " ");
            if (!l)
                break;
            uint32_t t = 0;
            while (t < nterms && !(terms[t].n == l && !memcmp(terms[t].p, p, l)))
                t++;
            if (t == nterms) {
                assert_true(nterms < 256 && used + l < sizeof store);
                memcpy(store + used, p, l);
                terms[nterms++] = (qr_slice){store + used, l};
                used += l;
            }
            assert_true(nt < 2048);
            tids[nt++] = t;
            doclen[r]++;
            p += l;
        }
    }
    qr_buf_init(out);
    assert_int_equal(qr_shapes_build(tids, doclen, n, terms, nterms, out), 0);
    qr_err e;
    assert_int_equal(qr_shapes_parse(out->p, out->len, n, s, "t", &e), 0);
}

static void test_block_bytes(void **st)
{
    (void)st;
    static const char *const rows[] = {
        "card ending 2254 declined",       /* shape 1 */
        "cache miss",                      /* 2 */
        "",                                /* 0 */
        "card ending 7 declined declined", /* 3 */
        "card ending 0071 declined",       /* 1 */
        "declined declined declined",      /* 4 */
    };
    qr_buf sb, b;
    qr_shapes s;
    qr_err e;
    shapes_of(rows, 6, &sb, &s);
    assert_int_equal(s.k, 4);
    qr_buf_init(&b);
    assert_int_equal(qr_shape_words_build(&s, &b, "t", &e), 0);
    /* words in byte order: cache card declined ending miss */
    static const char *const words[] = {"cache", "card", "declined", "ending", "miss"};
    static const uint32_t first[] = {0, 1, 3, 6, 8, 9};
    static const uint32_t occ[][2] = {{2, 1}, {1, 1}, {3, 1}, {1, 1}, {3, 2},
                                      {4, 3}, {1, 1}, {3, 1}, {2, 1}};
    static const uint32_t len[] = {0, 4, 2, 5, 3};
    const unsigned char *p = b.p;
    assert_int_equal(qr_load_u32(p), 5);
    assert_int_equal(qr_load_u32(p + 4), 9);
    assert_int_equal(qr_load_u32(p + 8), 4);
    assert_int_equal(qr_load_u32(p + 12), 0);
    p += 16;
    for (int i = 0; i < 6; i++, p += 4)
        assert_int_equal(qr_load_u32(p), first[i]);
    uint32_t end = 0;
    assert_int_equal(qr_load_u32(p), 0);
    p += 4;
    for (int i = 0; i < 5; i++, p += 4)
        assert_int_equal(qr_load_u32(p), end += (uint32_t)strlen(words[i]));
    for (int i = 0; i < 9; i++, p += 8) {
        assert_int_equal(qr_load_u32(p), occ[i][0]);
        assert_int_equal(qr_load_u32(p + 4), occ[i][1]);
    }
    for (int j = 0; j < 5; j++)
        assert_int_equal(*p++, qr_norm_encode(len[j]));
    for (int j = 5; j < 8; j++)
        assert_int_equal(*p++, 0); /* padding to 4 bytes */
    for (int i = 0; i < 5; i++, p += strlen(words[i - 1]))
        assert_memory_equal(p, words[i], strlen(words[i]));
    assert_ptr_equal(p, b.p + b.len);
    /* read back in place; lookups of each word, of absent ones, and of
     * words before the first and after the last */
    qr_shape_words w;
    assert_int_equal(qr_shape_words_parse(b.p, b.len, 4, &w, "t", &e), 0);
    assert_null(w.own);
    for (int i = 0; i < 5; i++) {
        uint32_t n = 99;
        const qr_shape_occ *o = qr_shape_words_find(&w, words[i], strlen(words[i]), &n);
        assert_int_equal(n, first[i + 1] - first[i]);
        for (uint32_t j = 0; j < n; j++) {
            assert_int_equal(o[j].shape, occ[first[i] + j][0]);
            assert_int_equal(o[j].tf, occ[first[i] + j][1]);
        }
    }
    static const char *const absent[] = {"2254", "a", "cach", "cachex", "decline", "zzz", ""};
    for (size_t i = 0; i < sizeof absent / sizeof *absent; i++) {
        uint32_t n = 99;
        assert_null(qr_shape_words_find(&w, absent[i], strlen(absent[i]), &n));
        assert_int_equal(n, 0);
    }
    for (uint32_t j = 0; j <= 4; j++)
        assert_int_equal(w.norm[j], qr_norm_encode(len[j]));
    qr_shape_words_free(&w);
    /* made from the text: the same bytes, owned */
    assert_int_equal(qr_shape_words_make(&s, &w, "t", &e), 0);
    assert_non_null(w.own);
    assert_memory_equal(w.own, b.p, b.len);
    qr_shape_words_free(&w);
    /* not 4-byte aligned: read from a copy */
    unsigned char *odd = malloc(b.len + 1);
    memcpy(odd + 1, b.p, b.len);
    assert_int_equal(qr_shape_words_parse(odd + 1, b.len, 4, &w, "t", &e), 0);
    assert_non_null(w.own);
    uint32_t n;
    const qr_shape_occ *o = qr_shape_words_find(&w, "declined", 8, &n);
    assert_int_equal(n, 3);
    assert_int_equal(o[2].shape, 4);
    assert_int_equal(o[2].tf, 3);
    qr_shape_words_free(&w);
    free(odd);
    qr_buf_free(&b);
    qr_buf_free(&sb);
}

/* Each malformation of a valid block is refused with XX001, and the
 * result is left empty. */
static void test_malformed(void **st)
{
    (void)st;
    static const char *const rows[] = {"alpha beta gamma", "beta beta delta", "gamma 12 alpha"};
    qr_buf sb, b;
    qr_shapes s;
    qr_err e;
    shapes_of(rows, 3, &sb, &s);
    qr_buf_init(&b);
    assert_int_equal(qr_shape_words_build(&s, &b, "t", &e), 0);
    uint32_t nw = qr_load_u32(b.p), no = qr_load_u32(b.p + 4), k = s.k;
    assert_int_equal(nw, 4);
    assert_int_equal(k, 3);
    size_t at_first = 16, at_ends = at_first + 4 * (nw + 1), at_occ = at_ends + 4 * (nw + 1);
    size_t at_norm = at_occ + 8ull * no, at_pad = at_norm + k + 1;
    size_t at_bytes = at_norm + (k + 1 + 3) / 4 * 4;
    (void)at_pad; /* k + 1 = 4: no padding here (the second corpus has) */
    unsigned char *bad = malloc(b.len + 8);
    qr_shape_words w;
#define REFUSED(len, kk)                                                                           \
    do {                                                                                           \
        qr_err_clear(&e);                                                                          \
        assert_int_equal(qr_shape_words_parse(bad, (len), (kk), &w, "t", &e), -1);                 \
        assert_string_equal(e.code, QR_E_CORRUPT);                                                 \
        assert_non_null(strstr(e.msg, "SHAPEWORDS"));                                              \
        assert_null(w.first);                                                                      \
    } while (0)
#define FRESH() memcpy(bad, b.p, b.len)
    FRESH();
    assert_int_equal(qr_shape_words_parse(bad, b.len, k, &w, "t", &e), 0);
    qr_shape_words_free(&w);
    REFUSED(15, k);        /* short */
    REFUSED(b.len, k + 1); /* another count of shapes */
    qr_store_u32(bad + 12, 1);
    REFUSED(b.len, k); /* reserved word */
    FRESH();
    qr_store_u32(bad, nw + 100);
    REFUSED(b.len, k); /* arrays past the block */
    FRESH();
    qr_store_u32(bad + 4, no + 1);
    REFUSED(b.len, k); /* occurrences do not match first[W] */
    FRESH();
    REFUSED(b.len - 1, k); /* bytes do not match ends[W] */
    qr_store_u32(bad + at_first, 1);
    REFUSED(b.len, k); /* first[0] */
    FRESH();
    qr_store_u32(bad + at_first + 8, qr_load_u32(bad + at_first + 4)); /* a word without shapes */
    REFUSED(b.len, k);
    FRESH();
    qr_store_u32(bad + at_first + 4, no + 100); /* offsets rising past the occurrences: */
    qr_store_u32(bad + at_first + 8, no + 200); /* refused before any is followed */
    REFUSED(b.len, k);
    FRESH();
    qr_store_u32(bad + at_ends + 8, qr_load_u32(bad + at_ends + 4)); /* an empty word */
    REFUSED(b.len, k);
    FRESH();
    qr_store_u32(bad + at_occ, 0); /* shape 0 */
    REFUSED(b.len, k);
    FRESH();
    qr_store_u32(bad + at_occ, k + 1); /* past the count */
    REFUSED(b.len, k);
    FRESH();
    qr_store_u32(bad + at_occ + 4, 0); /* tf 0 */
    REFUSED(b.len, k);
    /* a word of two shapes listed out of order: "alpha" is in 1 and 3 */
    FRESH();
    assert_int_equal(qr_load_u32(bad + at_first + 4), 2);
    qr_store_u32(bad + at_occ, 3);
    qr_store_u32(bad + at_occ + 8, 1);
    REFUSED(b.len, k);
    /* the lists are checked flat (a shape not above the one before it only
     * where a word starts): alpha {1, 3}, beta {1, 2}, delta {2}, gamma
     * {1, 3}; a later word's list out of order, where the next word's
     * start is not such a place, and a shape repeated in a list */
    FRESH();
    assert_int_equal(qr_load_u32(bad + at_first + 8), 4);
    assert_int_equal(qr_load_u32(bad + at_occ + 16), 1);
    assert_int_equal(qr_load_u32(bad + at_occ + 24), 2);
    qr_store_u32(bad + at_occ + 16, 2); /* beta {2, 1} */
    qr_store_u32(bad + at_occ + 24, 1);
    REFUSED(b.len, k);
    FRESH();
    assert_int_equal(qr_load_u32(bad + at_occ + 48), 3);
    qr_store_u32(bad + at_occ + 40, 3); /* gamma {3, 3} */
    REFUSED(b.len, k);
    /* two words out of byte order: "alpha" and "beta" swapped */
    FRESH();
    assert_memory_equal(bad + at_bytes, "alphabeta", 9);
    memcpy(bad + at_bytes, "betaalpha", 9);
    qr_store_u32(bad + at_ends + 4, 4);
    REFUSED(b.len, k);
    qr_buf_free(&b);
    qr_buf_free(&sb);
    /* padding: k + 1 = 3 leaves a byte of it, which must be 0 */
    static const char *const rows2[] = {"alpha beta", "beta gamma"};
    shapes_of(rows2, 2, &sb, &s);
    qr_buf_init(&b);
    assert_int_equal(qr_shape_words_build(&s, &b, "t", &e), 0);
    nw = qr_load_u32(b.p);
    no = qr_load_u32(b.p + 4);
    at_pad = 16 + 8 * (nw + 1) + 8ull * no + s.k + 1;
    FRESH();
    assert_int_equal(bad[at_pad], 0);
    bad[at_pad] = 1;
    REFUSED(b.len, s.k);
#undef REFUSED
#undef FRESH
    free(bad);
    qr_buf_free(&b);
    qr_buf_free(&sb);
}

/* Random rows of words from a small vocabulary (some variable): every
 * word the index knows, and every vocabulary word, found as the shapes'
 * text says (brute force: count the word in each shape's tokens). */
static void test_random_against_text(void **st)
{
    (void)st;
    static const char *const vocab[] = {"a",    "b",        "failed", "order", "zz", "zzz",
                                        "cafe", "deadbeef", "ab",     "abc",   "to", "place",
                                        "42",   "x1",       "é",      "ü1",    "aa", "failedx"};
    enum { NV = sizeof vocab / sizeof *vocab };
    uint64_t x = 77;
    for (int round = 0; round < 40; round++) {
        static char text[200][128];
        const char *rows[200];
        uint32_t n = 1 + (uint32_t)(round * 5 % 200);
        for (uint32_t r = 0; r < n; r++) {
            text[r][0] = 0;
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t len = (uint32_t)(x % 9);
            for (uint32_t t = 0; t < len; t++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                /* few templates: the words drawn from a row-dependent slice */
                const char *wd = vocab[(x % 4 + r % 5 * 3) % NV];
                snprintf(text[r] + strlen(text[r]), sizeof text[r] - strlen(text[r]), "%s%s",
                         t ? " " : "", wd);
            }
            rows[r] = text[r];
        }
        qr_buf sb;
        qr_shapes s;
        qr_err e;
        shapes_of(rows, n, &sb, &s);
        qr_shape_stats ss;
        assert_int_equal(qr_shape_stats_make(&s, NULL, 0, &ss, "t", &e), 0);
        qr_shape_words w;
        assert_int_equal(qr_shape_words_make(&s, &w, "t", &e), 0);
        uint32_t total = 0;
        for (int v = 0; v < NV; v++) {
            const char *wd = vocab[v];
            uint32_t cnt;
            const qr_shape_occ *o = qr_shape_words_find(&w, wd, strlen(wd), &cnt);
            uint32_t seen = 0;
            for (uint32_t j = 1; j <= s.k; j++) {
                const unsigned char *tok[16];
                uint32_t tl[16], tf = 0;
                int64_t nt = qr_shape_tokens(&s, &ss, j, tok, tl, 16);
                assert_true(nt >= 0);
                for (int64_t t = 0; t < nt; t++)
                    tf += tok[t] && tl[t] == strlen(wd) && !memcmp(tok[t], wd, tl[t]);
                if (!tf)
                    continue;
                assert_true(seen < cnt);
                assert_int_equal(o[seen].shape, j);
                assert_int_equal(o[seen].tf, tf);
                seen++;
            }
            assert_int_equal(seen, cnt);
            if (qr_shape_variable(wd, strlen(wd)))
                assert_int_equal(cnt, 0);
            total += cnt > 0;
        }
        assert_int_equal(total, w.nw); /* no word the vocabulary lacks */
        /* the shapes holding every one of 1-3 words (a phrase's): each
         * shape's text against each word, the least tf (or the first
         * word's), absent and variable words holding none */
        qr_arena a;
        qr_arena_init(&a, 1 << 12, 0);
        for (int c = 0; c < 60; c++) {
            const char *ws[3];
            size_t wl[3];
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint32_t nw = 1 + (uint32_t)(x % 3);
            for (uint32_t i = 0; i < nw; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                ws[i] = vocab[x % NV];
                wl[i] = strlen(ws[i]);
            }
            for (int first = 0; first < 2; first++) {
                qr_shape_occ *all;
                uint32_t cnt, seen = 0;
                assert_int_equal(qr_shape_words_all(&w, ws, wl, nw, first, &a, &all, &cnt), 0);
                for (uint32_t j = 1; j <= s.k; j++) {
                    const unsigned char *tok[16];
                    uint32_t tl[16], least = UINT32_MAX;
                    int64_t nt = qr_shape_tokens(&s, &ss, j, tok, tl, 16);
                    for (uint32_t i = 0; i < nw; i++) {
                        uint32_t tf = 0;
                        for (int64_t t = 0; t < nt; t++)
                            tf += tok[t] && tl[t] == wl[i] && !memcmp(tok[t], ws[i], wl[i]);
                        if (!tf)
                            least = 0;
                        else if (least && (!first || i == 0) && tf < least)
                            least = tf;
                    }
                    if (!least)
                        continue;
                    assert_true(seen < cnt);
                    assert_int_equal(all[seen].shape, j);
                    assert_int_equal(all[seen].tf, least);
                    seen++;
                }
                assert_int_equal(seen, cnt);
            }
        }
        qr_arena_free(&a);
        qr_shape_words_free(&w);
        qr_shape_stats_free(&ss);
        qr_buf_free(&sb);
    }
}

/* A segment built from generated rows stores the block its SHAPES make;
 * the field reads it in place, and without it makes the same index. */
static void test_segment_stores_it(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    gen_ctx *g = gen_new(3, 0);
    qr_buf text;
    qr_buf_init(&text);
    for (int r = 0; r < 3000; r++)
        gen_row(g, &text);
    gen_free(g);
    qr_segment *seg = tu_open_built(dir, "s.qseg", &text, 3000);
    qr_err e;
    qr_invfield f;
    assert_int_equal(qr_invfield_open(&f, seg, SEC_BODY, &e), 0);
    assert_non_null(f.shapewords_map);
    /* the words and the rows per shape, read without the shapes' text */
    assert_int_equal(qr_invfield_load_shape_words(&f, &e), 0);
    const qr_shape_words *w = qr_invfield_shape_words(&f);
    assert_non_null(w);
    assert_null(w->own); /* in place */
    assert_true(w->nw > 20);
    assert_int_equal(qr_invfield_load_shape_rows(&f, &e), 0);
    const uint32_t *rows = qr_invfield_shape_rows(&f);
    assert_ptr_equal(rows, f.shaperows_map);
    assert_null(qr_invfield_shape_text(&f));
    assert_int_equal(qr_invfield_load_shape_text(&f, &e), 0);
    const qr_shapes *sh = qr_invfield_shape_text(&f);
    assert_non_null(sh);
    qr_buf want;
    qr_buf_init(&want);
    assert_int_equal(qr_shape_words_build(sh, &want, "t", &e), 0);
    assert_int_equal(f.shapewords_len, want.len);
    assert_memory_equal(f.shapewords_map, want.p, want.len);
    /* the rows per shape: each shape's rows counted from every row */
    uint32_t *count = calloc((size_t)sh->k + 1, sizeof *count);
    assert_int_equal(qr_invfield_load_shapes(&f, &e), 0);
    for (uint32_t r = 0; r < f.rows; r++)
        count[qr_shape_of(qr_invfield_shapes(&f), r)]++;
    assert_memory_equal(rows, count, sizeof *count * (sh->k + 1));
    /* as a segment without the block: made from the text */
    qr_invfield g2;
    assert_int_equal(qr_invfield_open(&g2, seg, SEC_BODY, &e), 0);
    g2.shapewords_map = NULL;
    assert_int_equal(qr_invfield_load_shape_text(&g2, &e), 0);
    assert_int_equal(qr_invfield_load_shape_words(&g2, &e), 0);
    const qr_shape_words *m = qr_invfield_shape_words(&g2);
    assert_non_null(m);
    assert_non_null(m->own);
    assert_int_equal(m->nw, w->nw);
    for (uint32_t i = 0; i < w->nw; i++) {
        const char *wd = (const char *)w->bytes + w->ends[i];
        size_t l = w->ends[i + 1] - w->ends[i];
        uint32_t a, b;
        const qr_shape_occ *oa = qr_shape_words_find(w, wd, l, &a);
        const qr_shape_occ *ob = qr_shape_words_find(m, wd, l, &b);
        assert_int_equal(a, b);
        assert_true(a > 0);
        assert_memory_equal(oa, ob, sizeof *oa * a);
    }
    assert_memory_equal(w->norm, m->norm, (size_t)sh->k + 1);
    assert_int_equal(qr_invfield_load_shape_rows(&g2, &e), 0);
    qr_invfield_close(&g2);
    /* without SHAPEROWS: the statistics' counts, the same */
    assert_int_equal(qr_invfield_open(&g2, seg, SEC_BODY, &e), 0);
    g2.shaperows_map = NULL;
    assert_int_equal(qr_invfield_load_shape_rows(&g2, &e), 0);
    assert_ptr_not_equal(qr_invfield_shape_rows(&g2), f.shaperows_map);
    assert_memory_equal(qr_invfield_shape_rows(&g2), count, sizeof *count * (sh->k + 1));
    qr_invfield_close(&g2);
    /* SHAPEROWS of another size than the shapes', or another sum: XX001 */
    for (int bad = 0; bad < 2; bad++) {
        assert_int_equal(qr_invfield_open(&g2, seg, SEC_BODY, &e), 0);
        if (bad == 0) {
            g2.shaperows_len -= 4;
        } else { /* the SHAPES header parsed first, for the true row count */
            assert_int_equal(qr_invfield_load_shape_text(&g2, &e), 0);
            g2.rows += 1;
        }
        qr_err_clear(&e);
        assert_int_equal(qr_invfield_load_shape_rows(&g2, &e), -1);
        assert_string_equal(e.code, QR_E_CORRUPT);
        assert_non_null(strstr(e.msg, "SHAPEROWS"));
        assert_null(qr_invfield_shape_rows(&g2));
        qr_invfield_close(&g2);
    }
    free(count);
    qr_invfield_close(&f);
    qr_buf_free(&want);
    qr_seg_close(seg);
    tu_rmdir(dir);
}

/* quarry verify's check of a field (qr_invfield_verify): every index of a
 * built segment passes; a SHAPEWORDS that parses but is not what the
 * text makes, SHAPEROWS that add up but are not each shape's rows, and a
 * term count the dictionary does not have each fail with XX001. */
static void test_verify(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    gen_ctx *g = gen_new(5, 0);
    qr_buf text;
    qr_buf_init(&text);
    for (int r = 0; r < 2000; r++)
        gen_row(g, &text);
    gen_free(g);
    qr_segment *seg = tu_open_built(dir, "s.qseg", &text, 2000);
    qr_err e;
    for (uint32_t k = 0; k < seg->nsecs; k++) {
        qr_invfield f;
        assert_int_equal(qr_invfield_open(&f, seg, seg->secs[k].id, &e), 0);
        if (qr_invfield_verify(&f, &e) != 0)
            fail_msg("section %u: %s", seg->secs[k].id, e.msg);
        qr_invfield_close(&f);
    }
    for (int bad = 0; bad < 3; bad++) {
        qr_invfield f;
        assert_int_equal(qr_invfield_open(&f, seg, SEC_BODY, &e), 0);
        unsigned char *copy = NULL;
        if (bad == 0) { /* a tf one more: parses, but not the text's */
            copy = malloc(f.shapewords_len);
            memcpy(copy, f.shapewords_map, f.shapewords_len);
            uint32_t nw = qr_load_u32(copy);
            size_t at_occ = 16 + 8 * ((size_t)nw + 1);
            qr_store_u32(copy + at_occ + 4, qr_load_u32(copy + at_occ + 4) + 1);
            f.shapewords_map = copy;
        } else if (bad == 1) { /* a row moved from shape 1 to shape 2 */
            copy = malloc(f.shaperows_len);
            memcpy(copy, f.shaperows_map, f.shaperows_len);
            assert_true(qr_load_u32(copy + 4) > 0);
            qr_store_u32(copy + 4, qr_load_u32(copy + 4) - 1);
            qr_store_u32(copy + 8, qr_load_u32(copy + 8) + 1);
            f.shaperows_map = copy;
        } else {
            f.dict.nterms++;
        }
        qr_err_clear(&e);
        assert_int_equal(qr_invfield_verify(&f, &e), -1);
        assert_string_equal(e.code, QR_E_CORRUPT);
        static const char *const says[] = {"SHAPEWORDS", "SHAPEROWS", "terms, its header says"};
        if (!strstr(e.msg, says[bad]) || !strstr(e.msg, "s.qseg"))
            fail_msg("%d: %s", bad, e.msg);
        qr_invfield_close(&f);
        free(copy);
    }
    qr_seg_close(seg);
    tu_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_bytes),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_random_against_text),
        cmocka_unit_test(test_segment_stores_it),
        cmocka_unit_test(test_verify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
