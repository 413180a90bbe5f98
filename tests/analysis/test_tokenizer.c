/* test_tokenizer.c - tests for analysis/tokenizer: the contract in
 * tokenizer.h, example by example (log idioms, case, separators, invalid and
 * 4-byte UTF-8, combining marks, Turkish I, final sigma, 255-byte cut,
 * positions), zero-copy and reuse, qr_tok_analyze with its arena, and the
 * ASCII fast path against the general Unicode path on random input.
 *
 * Every text is copied into a malloc'ed buffer of its exact size, so ASan
 * catches any read past the end, and every expectation is checked on both
 * paths. `QT_BENCH=<file> test_tokenizer` prints the throughput of
 * tokenizing each line of <file> instead of running the tests.
 */
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "analysis/tokenizer.h"

/* Tokenize text[0, n) (exact-size copy) with the fast path (unicode_only = 0)
 * or the general path (1), and compare with the NULL-terminated list want. */
static void expect_path(const char *text, size_t n, const char *const *want, int unicode_only)
{
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    if (n)
        memcpy(copy, text, n);
    qr_tokenizer t;
    qr_tok_init(&t);
    t.unicode_only = unicode_only;
    qr_tok_reset(&t, copy, n);
    qr_token tok;
    size_t i = 0;
    while (qr_tok_next(&t, &tok)) {
        if (!want[i])
            fail_msg("unexpected extra token '%.*s' (path %d)", (int)tok.n, tok.p, unicode_only);
        if (tok.n != strlen(want[i]) || memcmp(tok.p, want[i], tok.n) != 0)
            fail_msg("token %zu: got '%.*s' (%u bytes), want '%s' (path %d)", i, (int)tok.n, tok.p,
                     tok.n, want[i], unicode_only);
        assert_int_equal(tok.pos, i);
        assert_true(tok.n >= 1 && tok.n <= QR_TOK_MAX_BYTES);
        i++;
    }
    if (want[i])
        fail_msg("missing token %zu '%s' (path %d)", i, want[i], unicode_only);
    assert_int_equal(qr_tok_next(&t, &tok), 0); /* stays at the end */
    qr_tok_free(&t);
    free(copy);
}

static void expect_n(const char *text, size_t n, const char *const *want)
{
    expect_path(text, n, want, 0);
    expect_path(text, n, want, 1);
}

/* EXPECT("text", "tok0", "tok1", ...) over the literal's bytes (NULs included). */
#define EXPECT(text, ...) expect_n(text, sizeof(text) - 1, (const char *const[]){__VA_ARGS__, NULL})
#define EXPECT_NONE(text) expect_n(text, sizeof(text) - 1, (const char *const[]){NULL})

/* ---- the examples of the contract ---- */

static void test_log_idioms(void **state)
{
    (void)state;
    EXPECT("send_order_confirmation", "send", "order", "confirmation");
    EXPECT("v1.2.3", "v1", "2", "3");
    EXPECT("GetCartAsync", "getcartasync");
    EXPECT("userId=f596bf3c-8012", "userid", "f596bf3c", "8012");
    EXPECT("GetCartAsync called with userId=f596bf3c-8012-4375-319d-ec1c375f45a3", "getcartasync",
           "called", "with", "userid", "f596bf3c", "8012", "4375", "319d", "ec1c375f45a3");
    EXPECT("connection to valkey-cart:6379 timed out after 796ms\n   at "
           "StackExchange.Redis.RedisTimeoutException",
           "connection", "to", "valkey", "cart", "6379", "timed", "out", "after", "796ms", "at",
           "stackexchange", "redis", "redistimeoutexception");
    EXPECT("GET /api/v2/orders?id=42&x=a%20b HTTP/1.1", "get", "api", "v2", "orders", "id", "42",
           "x", "a", "20b", "http", "1", "1");
}

static void test_upper_case(void **state)
{
    (void)state;
    EXPECT("ERROR WARN Info", "error", "warn", "info");
    EXPECT("ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz 0123456789",
           "abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz", "0123456789");
    EXPECT_NONE("@[`{"); /* the bytes around A-Z and a-z are separators */
}

static void test_underscores_and_punctuation(void **state)
{
    (void)state;
    EXPECT("__init__", "init");
    EXPECT("a_b__c___d", "a", "b", "c", "d");
    EXPECT("x!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~y", "x", "y");
}

static void test_digits(void **state)
{
    (void)state;
    EXPECT("404", "404");
    EXPECT("3.14159 -17 1e9 0x1F", "3", "14159", "17", "1e9", "0x1f");
    EXPECT("2025-09-23T00:00:00.000000492Z", "2025", "09", "23t00", "00", "00", "000000492z");
    EXPECT("10.0.0.1:8080", "10", "0", "0", "1", "8080");
}

static void test_empty_and_only_separators(void **state)
{
    (void)state;
    EXPECT_NONE("");
    EXPECT_NONE(" ");
    EXPECT_NONE("  \t\r\n-_=.,;:!?()[]{}<>/\\|\"'`~@#$%^&*+");
    EXPECT_NONE("\xe2\x80\x94\xe2\x80\xa6\xc2\xa0");         /* em dash, ellipsis, NBSP */
    EXPECT_NONE("\xf0\x9f\x98\x80\xe2\x9d\xa4\xef\xb8\x8f"); /* emoji, heart + VS16 */
    expect_n(NULL, 0, (const char *const[]){NULL});
}

static void test_nul_is_a_separator(void **state)
{
    (void)state;
    EXPECT("ab\0cd", "ab", "cd");
    EXPECT("\0\0x\0", "x");
}

static void test_unicode_letters_fold(void **state)
{
    (void)state;
    EXPECT("Größe", "größe");
    EXPECT("ÉCOLE", "école");
    EXPECT("東京", "東京"); /* CJK is not segmented */
    EXPECT("東京都の天気", "東京都の天気");
    EXPECT("Kraków, Zürich; ПРИВЕТ мир", "kraków", "zürich", "привет", "мир");
    EXPECT("café-crème", "café", "crème");
    EXPECT("x² ½ Ⅻ", "x²", "½", "ⅻ"); /* No and Nl are word characters */
    EXPECT("ǅ", "ǆ");                 /* titlecase digraph */
    EXPECT("ß ẞ", "ß", "ß");          /* lowercasing, not case folding */
    EXPECT("ＡＢ１", "ａｂ１");       /* no normalisation: fullwidth stays */
    EXPECT("Ⱥ", "ⱥ");                 /* 2 bytes lower to 3 */
    EXPECT("abc—def", "abc", "def");  /* non-ASCII separator after ASCII */
    EXPECT("abc\xc2\xa0"
           "Déf",
           "abc", "déf");
}

static void test_invalid_utf8_is_a_separator(void **state)
{
    (void)state;
    EXPECT("ab\x80"
           "cd",
           "ab", "cd"); /* lone continuation byte */
    EXPECT("ab\xff"
           "cd\xfe",
           "ab", "cd");
    EXPECT("ab\xc1\x81"
           "cd",
           "ab", "cd"); /* overlong 'A', 2 bytes */
    EXPECT("ab\xe0\x81\x81"
           "cd",
           "ab", "cd"); /* overlong 'A', 3 bytes: not a letter */
    EXPECT("ab\xf0\x80\x81\x81"
           "cd",
           "ab", "cd"); /* overlong 'A', 4 bytes */
    EXPECT("ab\xe0\x83\xa9"
           "cd",
           "ab", "cd"); /* overlong 'é' */
    EXPECT("ab\xed\xa0\x80"
           "cd",
           "ab", "cd"); /* surrogate D800 */
    EXPECT("ab\xf4\x90\x80\x80"
           "cd",
           "ab", "cd"); /* above U+10FFFF */
    EXPECT("ab\xf5\x80\x80\x80"
           "cd",
           "ab", "cd");
    EXPECT("ab\xc3"
           "cd",
           "ab", "cd"); /* truncated 2-byte sequence */
    EXPECT("ab\xe4\xba"
           "cd",
           "ab", "cd");     /* truncated 3-byte sequence */
    EXPECT("ab\xc3", "ab"); /* truncated at the end of the text */
    EXPECT_NONE("\xf0\x9f\x98");
    EXPECT("\xc3\xa9\xc3", "é");
    EXPECT("\xe2\x82\xc3\xa9", "é"); /* a valid sequence right after a broken one */
    EXPECT("\xc3\xc3\xa9", "é");
}

static void test_four_byte_utf8(void **state)
{
    (void)state;
    EXPECT("𐐀𐐁", "𐐨𐐩");               /* Deseret capitals lower (4 bytes each) */
    EXPECT("a𝟘b", "a𝟘b");             /* U+1D7D8 MATHEMATICAL DOUBLE-STRUCK DIGIT ZERO, Nd */
    EXPECT("𠀀𠀁", "𠀀𠀁");           /* CJK extension B */
    EXPECT("ok😀fine", "ok", "fine");  /* emoji (So) separates */
    EXPECT("\xf3\xb0\x80\x80x", "x"); /* private use plane 15: a separator */
}

static void test_combining_marks(void **state)
{
    (void)state;
    EXPECT("e\xcc\x81"
           "cole",
           "e\xcc\x81"
           "cole"); /* decomposed é stays in the word */
    EXPECT("E\xcc\x81"
           "COLE",
           "e\xcc\x81"
           "cole");
    EXPECT("\xcc\x81"
           "abc",
           "abc");                           /* a mark at the start of the text is a separator */
    EXPECT("x \xcc\x81\xcc\x81y", "x", "y"); /* marks after a separator */
    EXPECT("a\xcc\x81\xcc\xa7\xcc\x88", "a\xcc\x81\xcc\xa7\xcc\x88");
    EXPECT("1\xe2\x83\xa3", "1\xe2\x83\xa3"); /* keycap, Me, extends a digit */
    EXPECT("क्षत्रिय", "क्षत्रिय");               /* Devanagari vowel signs and virama */
    EXPECT("\xc3\xa9" /* precomposed */ " e\xcc\x81", "\xc3\xa9", "e\xcc\x81"); /* no NFC */
}

static void test_turkish_dotted_i(void **state)
{
    (void)state;
    /* U+0130 lowers to i + U+0307; no Turkish tailoring, so "I" -> "i" and
     * "İstanbul" does not match "istanbul"; dotless ı stays. */
    EXPECT("İstanbul", "i\xcc\x87stanbul");
    EXPECT("İ", "i\xcc\x87");
    EXPECT("ISTANBUL", "istanbul");
    EXPECT("ıi Iı", "ıi", "iı");
    EXPECT("DİYARBAKIR", "di\xcc\x87yarbakir");
}

static void test_final_sigma(void **state)
{
    (void)state;
    EXPECT("ΟΔΟΣ", "οδος");
    EXPECT("ΣΑ", "σα");
    EXPECT("Σ", "σ");
    EXPECT("ΟΔΟΣ_Α", "οδος", "α"); /* only the token is the context */
    EXPECT("ΟΔΟΣΑ", "οδοσα");
    EXPECT("ΑΣ\xcc\x81", "ας\xcc\x81"); /* a mark after sigma is skipped */
    EXPECT("ΑΣ\xcc\x81Α", "ασ\xcc\x81α");
    EXPECT("οδος ΟΔΟΣ", "οδος", "οδος");
    /* U+0345 is cased and case-ignorable: Python (and Quarry) skip it. */
    EXPECT("一\xcd\x85Σ", "一\xcd\x85σ");
    EXPECT("ΑΣ\xcd\x85", "ας\xcd\x85");
}

/* ---- the 255-byte cut ---- */

static char *repeat(const char *unit, size_t times, size_t *n)
{
    size_t u = strlen(unit);
    char *s = malloc(u * times + 1);
    for (size_t i = 0; i < times; i++)
        memcpy(s + i * u, unit, u);
    s[u * times] = 0;
    *n = u * times;
    return s;
}

static void expect_long(const char *text, size_t n, const char *want0, size_t want0_n)
{
    /* text is one long word then " next" */
    for (int path = 0; path < 2; path++) {
        char *copy = malloc(n + 5);
        memcpy(copy, text, n);
        memcpy(copy + n, " next", 5);
        qr_tokenizer t;
        qr_tok_init(&t);
        t.unicode_only = path;
        qr_tok_reset(&t, copy, n + 5);
        qr_token tok;
        assert_int_equal(qr_tok_next(&t, &tok), 1);
        assert_int_equal(tok.n, want0_n);
        assert_memory_equal(tok.p, want0, want0_n);
        assert_int_equal(tok.pos, 0);
        assert_int_equal(qr_tok_next(&t, &tok), 1);
        assert_int_equal(tok.n, 4);
        assert_memory_equal(tok.p, "next", 4);
        assert_int_equal(tok.pos, 1); /* the dropped tail took no position */
        assert_int_equal(qr_tok_next(&t, &tok), 0);
        qr_tok_free(&t);
        free(copy);
    }
}

static void test_long_tokens_are_cut_at_255_bytes(void **state)
{
    (void)state;
    size_t n, wn;
    char *s, *w;

    s = repeat("a", 255, &n); /* exactly 255: kept whole */
    expect_long(s, n, s, 255);
    free(s);

    s = repeat("a", 256, &n); /* one byte too many */
    expect_long(s, n, s, 255);
    free(s);

    s = repeat("A", 1000, &n);
    w = repeat("a", 255, &wn);
    expect_long(s, n, w, 255);
    free(s);
    free(w);

    s = repeat("é", 200, &n); /* 400 bytes: 127 é = 254 bytes */
    expect_long(s, n, s, 254);
    free(s);

    s = repeat("É", 200, &n);
    w = repeat("é", 127, &wn);
    expect_long(s, n, w, 254);
    free(s);
    free(w);

    /* a long ASCII word that turns non-ASCII only after byte 255 */
    s = malloc(512);
    memset(s, 'B', 300);
    memcpy(s + 300, "É", 2);
    w = repeat("b", 255, &wn);
    expect_long(s, 302, w, 255);
    free(s);
    free(w);

    /* "İ" straddling the cut keeps only its "i": 253 x + İ -> 253 x + "i" */
    s = malloc(512);
    memset(s, 'x', 253);
    memcpy(s + 253, "İ", 2);
    memset(s + 255, 'y', 10);
    w = malloc(512);
    memset(w, 'x', 253);
    w[253] = 'i';
    expect_long(s, 265, w, 254);
    free(s);
    free(w);

    /* 4-byte letters: 63 fit in 252 bytes */
    s = repeat("𐐀", 100, &n);
    w = repeat("𐐨", 63, &wn);
    expect_long(s, n, w, 252);
    free(s);
    free(w);

    /* a mark can be cut off its base: 254 bytes of 'a' then é decomposed */
    s = malloc(512);
    memset(s, 'a', 254);
    memcpy(s + 254, "e\xcc\x81", 3);
    w = malloc(512);
    memset(w, 'a', 254);
    w[254] = 'e';
    expect_long(s, 257, w, 255);
    free(s);
    free(w);

    /* final sigma sees the whole token, beyond the cut: 126 Α (252 bytes),
     * then Σ (kept, 254 bytes), then 200 combining acutes (case-ignorable,
     * cut off) and then either Α (so σ) or the end of the token (so ς) */
    for (int final = 0; final < 2; final++) {
        size_t an;
        char *alpha = repeat("Α", 126, &an);
        char *marks = repeat("\xcc\x81", 200, &n);
        s = malloc(1024);
        memcpy(s, alpha, an);
        memcpy(s + an, "Σ", 2);
        memcpy(s + an + 2, marks, n);
        size_t len = an + 2 + n;
        if (!final) {
            memcpy(s + len, "Α", 2);
            len += 2;
        }
        char *alphas = repeat("α", 126, &wn);
        w = malloc(512);
        memcpy(w, alphas, wn);
        memcpy(w + wn, final ? "ς" : "σ", 2);
        free(alphas);
        expect_long(s, len, w, 254);
        free(alpha);
        free(marks);
        free(s);
        free(w);
    }
}

/* ---- positions, zero copy, reuse ---- */

static void test_positions_count_tokens_only(void **state)
{
    (void)state;
    const char text[] = "  --a  b,,,c\xff\xfe  d  ";
    qr_tokenizer t;
    qr_tok_init(&t);
    qr_tok_reset(&t, text, sizeof text - 1);
    qr_token tok;
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(qr_tok_next(&t, &tok), 1);
        assert_int_equal(tok.pos, i);
        assert_int_equal(tok.n, 1);
        assert_int_equal(tok.p[0], "abcd"[i]);
    }
    assert_int_equal(qr_tok_next(&t, &tok), 0);
    qr_tok_free(&t);
}

static void test_lowercase_ascii_points_into_input(void **state)
{
    (void)state;
    const char text[] = "hello World";
    qr_tokenizer t;
    qr_tok_init(&t);
    qr_tok_reset(&t, text, sizeof text - 1);
    qr_token tok;
    assert_int_equal(qr_tok_next(&t, &tok), 1);
    assert_ptr_equal(tok.p, text); /* no copy */
    assert_int_equal(qr_tok_next(&t, &tok), 1);
    assert_ptr_equal(tok.p, t.fold); /* folded into the tokenizer's buffer */
    assert_memory_equal(tok.p, "world", 5);
    qr_tok_free(&t);
}

static void test_reset_reuses_the_tokenizer(void **state)
{
    (void)state;
    qr_tokenizer t;
    qr_token tok;
    qr_tok_init(&t);
    assert_int_equal(qr_tok_next(&t, &tok), 0); /* no text yet */
    qr_tok_reset(&t, "a b c", 5);
    assert_int_equal(qr_tok_next(&t, &tok), 1);
    assert_int_equal(qr_tok_next(&t, &tok), 1);
    qr_tok_reset(&t, "Xy Z", 4); /* mid-text reset: positions restart */
    assert_int_equal(qr_tok_next(&t, &tok), 1);
    assert_int_equal(tok.pos, 0);
    assert_memory_equal(tok.p, "xy", 2);
    assert_int_equal(qr_tok_next(&t, &tok), 1);
    assert_int_equal(tok.pos, 1);
    assert_memory_equal(tok.p, "z", 1);
    assert_int_equal(qr_tok_next(&t, &tok), 0);
    qr_tok_reset(&t, NULL, 0);
    assert_int_equal(qr_tok_next(&t, &tok), 0);
    qr_tok_free(&t);
}

/* ---- qr_tok_analyze ---- */

static void test_analyze_copies_into_the_arena(void **state)
{
    (void)state;
    qr_arena a;
    qr_arena_init(&a, 0, 0);
    qr_token out[8];
    char *q = strdup("Failed_to PLACE Größe");
    size_t k = qr_tok_analyze(q, strlen(q), &a, out, 8);
    memset(q, 'Z', strlen(q)); /* the tokens must not point into the text */
    free(q);
    assert_int_equal(k, 4);
    const char *want[] = {"failed", "to", "place", "größe"};
    for (size_t i = 0; i < k; i++) {
        assert_int_equal(out[i].n, strlen(want[i]));
        assert_memory_equal(out[i].p, want[i], out[i].n);
        assert_int_equal(out[i].pos, i);
    }
    /* max bounds what is written; (n + 1) / 2 always suffices */
    assert_int_equal(qr_tok_analyze("a b c d", 7, &a, out, 2), 2);
    assert_memory_equal(out[1].p, "b", 1);
    assert_int_equal(qr_tok_analyze("a b c d", 7, &a, out, 4), 4);
    assert_int_equal(qr_tok_analyze("--", 2, &a, out, 8), 0);
    assert_int_equal(qr_tok_analyze(NULL, 0, &a, out, 8), 0);
    qr_arena_free(&a);
}

static void test_analyze_reports_arena_failure(void **state)
{
    (void)state;
    qr_arena a;
    qr_arena_init(&a, 32, 32); /* room for two 16-byte slots */
    qr_token out[8];
    assert_int_equal(qr_tok_analyze("a b c", 5, &a, out, 8), QR_TOK_NOMEM);
    qr_arena_free(&a);
}

/* ---- fast path against the general Unicode path ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) { return tu_rand(&rng_state); }

/* Compare both paths on buf[0, n): same tokens, bytes and positions. */
static void compare_paths(const char *buf, size_t n)
{
    qr_tokenizer fast, slow;
    qr_tok_init(&fast);
    qr_tok_init(&slow);
    slow.unicode_only = 1;
    qr_tok_reset(&fast, buf, n);
    qr_tok_reset(&slow, buf, n);
    qr_token a, b;
    for (;;) {
        int ra = qr_tok_next(&fast, &a), rb = qr_tok_next(&slow, &b);
        assert_int_equal(ra, rb);
        if (!ra)
            break;
        assert_int_equal(a.pos, b.pos);
        assert_int_equal(a.n, b.n);
        assert_memory_equal(a.p, b.p, a.n);
    }
    qr_tok_free(&fast);
    qr_tok_free(&slow);
}

static void test_fast_path_matches_unicode_path_on_random_ascii(void **state)
{
    (void)state;
    /* Alphabets biased towards word bytes so that runs (and 255+ runs) occur. */
    static const char words[] = "abcxyzABCXYZ0189";
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = (size_t)(rng() % (iter % 100 == 0 ? 2000 : 120));
        char *buf = malloc(n ? n : 1);
        int bias = (int)(rng() % 4);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rng();
            if (bias > 0 && r % 8 < (uint64_t)bias * 2)
                buf[i] = words[(r >> 8) % (sizeof words - 1)];
            else
                buf[i] = (char)((r >> 8) % 128); /* any ASCII byte, NUL included */
        }
        if (iter % 100 == 0) /* a long run */
            for (size_t i = 0; i < n && i < 700; i++)
                buf[i] = words[rng() % (sizeof words - 1)];
        compare_paths(buf, n);
        free(buf);
    }
}

static void test_fast_path_matches_unicode_path_on_random_bytes(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        "é", "É", "Σ", "İ", "ı", "\xcc\x81", "—", "東",      "𐐀", "\xff", "\xc3", "\xed\xa0\x80",
        " ", "_", "A", "z", "7", "\xcd\x85", "😀", "\xc2\xa0"};
    for (int iter = 0; iter < 20000; iter++) {
        char tmp[1200] = {0};
        size_t n = 0, want = (size_t)(rng() % 400);
        while (n < want) {
            uint64_t r = rng();
            if (r % 3 == 0) {
                tmp[n++] = (char)(r >> 8); /* any byte */
            } else {
                const char *p = pieces[(r >> 8) % (sizeof pieces / sizeof *pieces)];
                size_t l = strlen(p);
                memcpy(tmp + n, p, l);
                n += l;
            }
        }
        char *buf = malloc(n ? n : 1);
        memcpy(buf, tmp, n);
        compare_paths(buf, n);
        free(buf);
    }
}

/* ---- throughput (QT_BENCH=<file>) ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench(const char *file)
{
    FILE *f = fopen(file, "rb");
    if (!f) {
        perror(file);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *d = malloc((size_t)len + 1);
    if (!d || fread(d, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        return 1;
    }
    fclose(f);
    qr_tokenizer t;
    qr_tok_init(&t);
    for (int path = 0; path < 2; path++) {
        t.unicode_only = path;
        double best = 1e30;
        unsigned long ntok = 0, sum = 0;
        for (int rep = 0; rep < 5; rep++) {
            double t0 = now_s();
            const char *p = d, *e = d + len;
            ntok = 0;
            while (p < e) {
                const char *nl = memchr(p, '\n', (size_t)(e - p));
                if (!nl)
                    nl = e;
                qr_tok_reset(&t, p, (size_t)(nl - p));
                qr_token k;
                while (qr_tok_next(&t, &k)) {
                    ntok++;
                    sum += k.n + (unsigned char)k.p[0];
                }
                p = nl + 1;
            }
            double dt = now_s() - t0;
            if (dt < best)
                best = dt;
        }
        printf("%s path: %ld bytes, %lu tokens: %.0f MB/s, %.1f M tokens/s (check %lu)\n",
               path ? "unicode-only" : "fast", len, ntok, (double)len / best / 1e6,
               (double)ntok / best / 1e6, sum);
    }
    qr_tok_free(&t);
    free(d);
    return 0;
}

int main(void)
{
    const char *b = getenv("QT_BENCH");
    if (b && *b)
        return bench(b);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_idioms),
        cmocka_unit_test(test_upper_case),
        cmocka_unit_test(test_underscores_and_punctuation),
        cmocka_unit_test(test_digits),
        cmocka_unit_test(test_empty_and_only_separators),
        cmocka_unit_test(test_nul_is_a_separator),
        cmocka_unit_test(test_unicode_letters_fold),
        cmocka_unit_test(test_invalid_utf8_is_a_separator),
        cmocka_unit_test(test_four_byte_utf8),
        cmocka_unit_test(test_combining_marks),
        cmocka_unit_test(test_turkish_dotted_i),
        cmocka_unit_test(test_final_sigma),
        cmocka_unit_test(test_long_tokens_are_cut_at_255_bytes),
        cmocka_unit_test(test_positions_count_tokens_only),
        cmocka_unit_test(test_lowercase_ascii_points_into_input),
        cmocka_unit_test(test_reset_reuses_the_tokenizer),
        cmocka_unit_test(test_analyze_copies_into_the_arena),
        cmocka_unit_test(test_analyze_reports_arena_failure),
        cmocka_unit_test(test_fast_path_matches_unicode_path_on_random_ascii),
        cmocka_unit_test(test_fast_path_matches_unicode_path_on_random_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
