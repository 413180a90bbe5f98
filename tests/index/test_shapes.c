/* test_shapes.c - row shapes (index/shapes.c): which tokens are variable;
 * a build numbers shapes by first row, equal masked sequences alike and
 * different ones apart, rows without tokens 0, 1 or 2 bytes a number; a
 * merge writes byte for byte the block a build of the merged rows writes,
 * with rows dropped and shapes shared by sources; more than 65535 shapes
 * make no block, in a build and in a merge; which shapes hold each word,
 * and how often (for score bounds); malformed blocks are refused. */
#include "testutil.h"

#include "index/norms.h"
#include "index/shapes.h"

static void test_variable_tokens(void **st)
{
    (void)st;
    static const char *yes[] = {"2254",     "v1",           "edfa",     "cafe",
                                "abcdef12", "deadbeefcafe", "abcdefab", "0"};
    static const char *no[] = {"failed", "order", "fac", "faced", "abcdefa", "", "ecfez", "éabc"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (!qr_shape_variable(yes[i], strlen(yes[i])))
            fail_msg("%s should be variable", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (qr_shape_variable(no[i], strlen(no[i])))
            fail_msg("%s should not be variable", no[i]);
}

/* A corpus of rows as term ids over a term table of words. */
typedef struct {
    qr_slice terms[64];
    uint32_t nterms;
    uint32_t tids[4096], doclen[512], rows, ntok;
} corpus;

static uint32_t term_id(corpus *c, const char *w)
{
    for (uint32_t t = 0; t < c->nterms; t++)
        if (c->terms[t].n == strlen(w) && !memcmp(c->terms[t].p, w, c->terms[t].n))
            return t;
    c->terms[c->nterms] = (qr_slice){w, strlen(w)};
    return c->nterms++;
}

/* Append a row of space-separated words ("" for no tokens). */
static void add_row(corpus *c, const char *text)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    uint32_t n = 0;
    for (char *w = strtok(buf, " "); w; w = strtok(NULL, " "), n++) {
        /* the words stay alive: keep a copy per distinct word */
        uint32_t t = term_id(c, w);
        if (c->terms[t].p == w)
            c->terms[t].p = strdup(w);
        c->tids[c->ntok++] = t;
    }
    c->doclen[c->rows++] = n;
}

static void corpus_free(corpus *c)
{
    for (uint32_t t = 0; t < c->nterms; t++)
        free((char *)c->terms[t].p);
}

static void build(corpus *c, qr_buf *out)
{
    uint32_t *tids = malloc(sizeof *tids * (c->ntok + 1));
    memcpy(tids, c->tids, sizeof *tids * c->ntok);
    qr_buf_init(out);
    assert_int_equal(qr_shapes_build(tids, c->doclen, c->rows, c->terms, c->nterms, out), 0);
    free(tids);
}

static void test_build_numbers_by_first_row(void **st)
{
    (void)st;
    static corpus c;
    add_row(&c, "card ending 2254 declined");
    add_row(&c, "card ending 0071 declined");
    add_row(&c, "cache miss");
    add_row(&c, "");
    add_row(&c, "card ending edfa declined"); /* a hex word: variable too */
    add_row(&c, "card ending declined");      /* shorter: another shape */
    add_row(&c, "cache miss");
    add_row(&c, "card ending 7 declined declined");
    qr_buf b;
    build(&c, &b);
    qr_shapes s;
    qr_err e;
    assert_int_equal(qr_shapes_parse(b.p, b.len, c.rows, &s, "t", &e), 0);
    assert_int_equal(s.k, 4);
    assert_int_equal(s.width, 3); /* 4 shapes: 3 bits a row */
    static const uint32_t want[] = {1, 1, 2, 0, 1, 3, 2, 4};
    for (uint32_t r = 0; r < c.rows; r++)
        assert_int_equal(qr_shape_of(&s, r), want[r]);
    /* the text of shape 1: 4 tokens, the third variable */
    static const unsigned char t1[] = {4,   5, 'c', 'a', 'r', 'd', 7,   'e', 'n', 'd', 'i', 'n',
                                       'g', 0, 9,   'd', 'e', 'c', 'l', 'i', 'n', 'e', 'd'};
    assert_true(s.dict_len > sizeof t1);
    assert_memory_equal(s.dict, t1, sizeof t1);
    /* the statistics a count by text reads: rows per shape, each shape's
     * tokens (variable ones NULL) */
    qr_shape_stats ss;
    assert_int_equal(qr_shape_stats_make(&s, NULL, 0, &ss, "t", &e), 0);
    static const uint32_t nrows[] = {1, 3, 2, 1, 1}; /* shape 0: the row without tokens */
    for (uint32_t j = 0; j <= s.k; j++)
        assert_int_equal(ss.rows[j], nrows[j]);
    const unsigned char *tok[8];
    uint32_t len[8];
    assert_int_equal(qr_shape_tokens(&s, &ss, 4, tok, len, 8), 5);
    static const char *const w4[] = {"card", "ending", NULL, "declined", "declined"};
    for (int t = 0; t < 5; t++) {
        if (!w4[t]) {
            assert_null(tok[t]);
            continue;
        }
        assert_int_equal(len[t], strlen(w4[t]));
        assert_memory_equal(tok[t], w4[t], len[t]);
    }
    assert_int_equal(qr_shape_tokens(&s, &ss, 4, tok, len, 4), -1); /* more than max */
    qr_shape_stats_free(&ss);
    /* the rows per shape as stored (SHAPEROWS), and the statistics made
     * from them: the same; of another size or sum, XX001 */
    qr_buf rc;
    qr_buf_init(&rc);
    assert_int_equal(qr_shapes_row_counts(b.p, b.len, c.rows, &rc), 0);
    assert_int_equal(rc.len, 4 * (s.k + 1));
    for (uint32_t j = 0; j <= s.k; j++)
        assert_int_equal(qr_load_u32(rc.p + 4 * j), nrows[j]);
    assert_int_equal(qr_shape_stats_make(&s, rc.p, rc.len, &ss, "t", &e), 0);
    for (uint32_t j = 0; j <= s.k; j++)
        assert_int_equal(ss.rows[j], nrows[j]);
    assert_int_equal(ss.at[2] - ss.at[1], sizeof t1);
    qr_shape_stats_free(&ss);
    assert_int_equal(qr_shape_stats_make(&s, rc.p, rc.len - 4, &ss, "t", &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    qr_store_u32(rc.p, 2); /* 9 rows counted of 8 */
    assert_int_equal(qr_shape_stats_make(&s, rc.p, rc.len, &ss, "t", &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_null(ss.rows);
    assert_int_equal(qr_shapes_row_counts(b.p, b.len, c.rows + 1, &rc), -1); /* does not parse */
    qr_buf_free(&rc);
    /* a row naming a shape past K, or text that does not parse: XX001 */
    unsigned char *bad = malloc(b.len);
    memcpy(bad, b.p, b.len);
    qr_shapes sb;
    assert_int_equal(qr_shapes_parse(bad, b.len, c.rows, &sb, "t", &e), 0);
    ((unsigned char *)sb.ids)[0] |= 0x7; /* row 0: shape 7 of 4 */
    assert_int_equal(qr_shape_stats_make(&sb, NULL, 0, &ss, "t", &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_null(ss.rows);
    memcpy(bad, b.p, b.len);
    assert_int_equal(qr_shapes_parse(bad, b.len, c.rows, &sb, "t", &e), 0);
    ((unsigned char *)sb.dict)[0] = 0x7f; /* shape 1: 127 tokens, past the text */
    assert_int_equal(qr_shape_stats_make(&sb, NULL, 0, &ss, "t", &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    free(bad);
    /* malformed: short, a width that is not what K takes, more shapes
     * than that width holds, lengths that do not add up */
    assert_int_equal(qr_shapes_parse(b.p, 11, c.rows, &s, "t", &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    bad = malloc(b.len);
    memcpy(bad, b.p, b.len);
    bad[0] = 4;
    assert_int_equal(qr_shapes_parse(bad, b.len, c.rows, &s, "t", &e), -1);
    memcpy(bad, b.p, b.len);
    qr_store_u32(bad + 4, 256);
    assert_int_equal(qr_shapes_parse(bad, b.len, c.rows, &s, "t", &e), -1);
    assert_int_equal(qr_shapes_parse(b.p, b.len, c.rows + 1, &s, "t", &e), -1);
    memcpy(bad, b.p, b.len);
    qr_store_u32(bad + 8, qr_load_u32(bad + 8) + 1);
    assert_int_equal(qr_shapes_parse(bad, b.len, c.rows, &s, "t", &e), -1);
    free(bad);
    qr_buf_free(&b);
    corpus_free(&c);
}

/* Which shapes hold each word, and how often; each shape's norm code. */
static void test_shape_words(void **st)
{
    (void)st;
    static corpus c;
    add_row(&c, "card ending 2254 declined");       /* shape 1 */
    add_row(&c, "cache miss");                      /* 2 */
    add_row(&c, "");                                /* 0 */
    add_row(&c, "card ending 7 declined declined"); /* 3 */
    add_row(&c, "card ending 0071 declined");       /* 1 */
    add_row(&c, "declined declined declined");      /* 4 */
    qr_buf b;
    build(&c, &b);
    qr_shapes s;
    qr_err e;
    assert_int_equal(qr_shapes_parse(b.p, b.len, c.rows, &s, "t", &e), 0);
    assert_int_equal(s.k, 4);
    qr_shape_words w;
    assert_int_equal(qr_shape_words_make(&s, &w, "t", &e), 0);
    static const struct {
        const char *word;
        uint32_t n, shape[3], tf[3];
    } want[] = {
        {"declined", 3, {1, 3, 4}, {1, 2, 3}},
        {"card", 2, {1, 3}, {1, 1}},
        {"cache", 1, {2}, {1}},
        {"2254", 0, {0}, {0}}, /* variable: in no shape's text */
        {"decline", 0, {0}, {0}},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        uint32_t n = 99;
        const qr_shape_occ *o = qr_shape_words_find(&w, want[i].word, strlen(want[i].word), &n);
        assert_int_equal(n, want[i].n);
        for (uint32_t j = 0; j < n; j++) {
            assert_int_equal(o[j].shape, want[i].shape[j]);
            assert_int_equal(o[j].tf, want[i].tf[j]);
        }
    }
    static const uint32_t len[] = {0, 4, 2, 5, 3};
    for (uint32_t j = 0; j <= s.k; j++)
        assert_int_equal(w.norm[j], qr_norm_encode(len[j]));
    qr_shape_words_free(&w);
    /* text that does not parse: XX001 */
    unsigned char *bad = malloc(b.len);
    memcpy(bad, b.p, b.len);
    qr_shapes sb;
    assert_int_equal(qr_shapes_parse(bad, b.len, c.rows, &sb, "t", &e), 0);
    ((unsigned char *)sb.dict)[0] = 0x7f; /* shape 1: 127 tokens, past the text */
    assert_int_equal(qr_shape_words_make(&sb, &w, "t", &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_null(w.norm);
    free(bad);
    qr_buf_free(&b);
    corpus_free(&c);
}

/* Sources of rows from a few templates; the merge of them (some rows
 * dropped, the rest interleaved) against a build of the merged rows. */
static void test_merge_writes_what_a_build_writes(void **st)
{
    (void)st;
    static const char *tpl[] = {"failed to place order 11",
                                "cache miss",
                                "failed to place order 12",
                                "request completed in 5 ms",
                                "user cafe logged in",
                                "user bob logged in",
                                "timeout",
                                ""};
    enum { NS = 3, PER = 40 };
    static corpus src[NS], all;
    uint32_t *docmap[NS], rows = 0;
    uint64_t x = 5;
    for (int s = 0; s < NS; s++) {
        docmap[s] = malloc(sizeof **docmap * PER);
        for (uint32_t r = 0; r < PER; r++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            /* source 2 alone has "user bob": a shape only it has */
            add_row(&src[s], tpl[x % (s == 2 ? 8 : 5)]);
        }
    }
    /* merged order: round robin over the sources, every 7th row dropped */
    for (uint32_t r = 0; r < PER; r++)
        for (int s = 0; s < NS; s++) {
            if ((r * NS + (uint32_t)s) % 7 == 3) {
                docmap[s][r] = UINT32_MAX;
                continue;
            }
            docmap[s][r] = rows++;
            /* the same row in the corpus of all: rebuild its text */
            char text[256] = "";
            uint32_t off = 0;
            for (uint32_t q = 0; q < r; q++)
                off += src[s].doclen[q];
            for (uint32_t k = 0; k < src[s].doclen[r]; k++) {
                const qr_slice *w = &src[s].terms[src[s].tids[off + k]];
                snprintf(text + strlen(text), sizeof text - strlen(text), "%s%.*s", k ? " " : "",
                         (int)w->n, w->p);
            }
            add_row(&all, text);
        }
    qr_buf b[NS], merged, want;
    qr_shapes sh[NS];
    qr_err e;
    for (int s = 0; s < NS; s++) {
        build(&src[s], &b[s]);
        assert_int_equal(qr_shapes_parse(b[s].p, b[s].len, PER, &sh[s], "t", &e), 0);
    }
    qr_buf_init(&merged);
    assert_int_equal(
        qr_shapes_merge(sh, NS, (const uint32_t *const *)docmap, rows, &merged, "t", &e), 0);
    build(&all, &want);
    assert_int_equal(merged.len, want.len);
    assert_memory_equal(merged.p, want.p, want.len);
    /* a source whose row names a shape past its count is refused */
    unsigned char *ids = (unsigned char *)sh[1].ids;
    uint32_t kept = 0;
    while (docmap[1][kept] == UINT32_MAX)
        kept++;
    unsigned char keep = ids[kept];
    ids[kept] = (unsigned char)(sh[1].k + 1);
    qr_buf_clear(&merged);
    assert_int_equal(
        qr_shapes_merge(sh, NS, (const uint32_t *const *)docmap, rows, &merged, "t", &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    ids[kept] = keep;
    for (int s = 0; s < NS; s++) {
        qr_buf_free(&b[s]);
        free(docmap[s]);
        corpus_free(&src[s]);
    }
    qr_buf_free(&merged);
    qr_buf_free(&want);
    corpus_free(&all);
}

/* n rows of one token each, every one a different word (no digit, not
 * hex): n shapes. */
static void many_shapes(uint32_t n, qr_buf *out)
{
    qr_slice *terms = malloc(sizeof *terms * n);
    uint32_t *tids = malloc(sizeof *tids * n), *len = malloc(sizeof *len * n);
    char *words = malloc((size_t)n * 8);
    for (uint32_t i = 0; i < n; i++) {
        char *w = words + (size_t)i * 8;
        uint32_t v = i;
        w[0] = 'z';
        for (int k = 1; k < 6; k++, v /= 20)
            w[k] = (char)('g' + v % 20); /* g..z: never hex */
        terms[i] = (qr_slice){w, 6};
        tids[i] = i;
        len[i] = 1;
    }
    qr_buf_init(out);
    assert_int_equal(qr_shapes_build(tids, len, n, terms, n, out), 0);
    free(terms);
    free(tids);
    free(len);
    free(words);
}

static void test_too_many_shapes_make_no_block(void **st)
{
    (void)st;
    qr_buf b;
    many_shapes(QR_SHAPES_MAX, &b);
    qr_shapes s;
    qr_err e;
    assert_int_equal(qr_shapes_parse(b.p, b.len, QR_SHAPES_MAX, &s, "t", &e), 0);
    assert_int_equal(s.k, QR_SHAPES_MAX);
    assert_int_equal(s.width, 16);
    assert_int_equal(qr_shape_of(&s, QR_SHAPES_MAX - 1), QR_SHAPES_MAX);
    /* the same block twice, merged: still 65535 shapes */
    qr_shapes two[2] = {s, s};
    uint32_t *dm[2];
    for (int k = 0; k < 2; k++) {
        dm[k] = malloc(sizeof **dm * QR_SHAPES_MAX);
        for (uint32_t r = 0; r < QR_SHAPES_MAX; r++)
            dm[k][r] = k == 0 ? r : UINT32_MAX;
    }
    qr_buf m;
    qr_buf_init(&m);
    assert_int_equal(
        qr_shapes_merge(two, 2, (const uint32_t *const *)dm, QR_SHAPES_MAX, &m, "t", &e), 0);
    assert_int_equal(m.len, b.len);
    assert_memory_equal(m.p, b.p, b.len);
    qr_buf_free(&m);
    qr_buf_free(&b);
    /* one more: no block, built or merged */
    many_shapes(QR_SHAPES_MAX + 1, &b);
    assert_int_equal(b.len, 0);
    qr_buf_free(&b);
    qr_buf big;
    many_shapes(QR_SHAPES_MAX, &big);
    assert_int_equal(qr_shapes_parse(big.p, big.len, QR_SHAPES_MAX, &s, "t", &e), 0);
    qr_buf small;
    qr_slice w = {"zextra", 6};
    uint32_t tid = 0, len = 1;
    qr_buf_init(&small);
    assert_int_equal(qr_shapes_build(&tid, &len, 1, &w, 1, &small), 0);
    qr_shapes both[2] = {s, {0}};
    assert_int_equal(qr_shapes_parse(small.p, small.len, 1, &both[1], "t", &e), 0);
    uint32_t one = QR_SHAPES_MAX;
    const uint32_t *dm2[2] = {dm[0], &one};
    qr_buf_init(&m);
    assert_int_equal(qr_shapes_merge(both, 2, dm2, QR_SHAPES_MAX + 1, &m, "t", &e), 0);
    assert_int_equal(m.len, 0);
    qr_buf_free(&m);
    qr_buf_free(&big);
    qr_buf_free(&small);
    free(dm[0]);
    free(dm[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variable_tokens),
        cmocka_unit_test(test_build_numbers_by_first_row),
        cmocka_unit_test(test_shape_words),
        cmocka_unit_test(test_merge_writes_what_a_build_writes),
        cmocka_unit_test(test_too_many_shapes_make_no_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
