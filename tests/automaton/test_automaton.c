/* test_automaton.c - the search automata (prefix, regexp, LIKE, fuzzy)
 * against brute-force oracles written here, independently of src/search:
 * a position-set regexp matcher with its own parser (it explores every
 * alignment, like a backtracking matcher, but cannot loop), a recursive LIKE
 * matcher, the optimal-string-alignment distance, memcmp; on random and
 * realistic ASCII and UTF-8 terms, malformed bytes included. Also: dead
 * states are exact both ways, literal prefixes, error messages, the cache
 * limit, the dataset facts. */
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "automaton/automaton.h"
#include "util/qctx.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) { return tu_rand(&rng); }
static unsigned rn(unsigned n) { return (unsigned)(rnd() % n); }

#define MAXCP 64

/* ---- UTF-8, written from the definition ---- */

/* All of s as code points into cp[0..max); -1 when malformed or too long. */
static int tdecode(const unsigned char *s, size_t n, uint32_t *cp, int max)
{
    int k = 0;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        int len;
        uint32_t v, min;
        if (c < 0x80)
            len = 1, v = c, min = 0;
        else if ((c & 0xE0) == 0xC0)
            len = 2, v = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0)
            len = 3, v = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0)
            len = 4, v = c & 0x07, min = 0x10000;
        else
            return -1;
        if (i + (size_t)len > n)
            return -1;
        for (int j = 1; j < len; j++) {
            if ((s[i + j] & 0xC0) != 0x80)
                return -1;
            v = (v << 6) | (s[i + j] & 0x3F);
        }
        if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) || k >= max)
            return -1;
        cp[k++] = v;
        i += (size_t)len;
    }
    return k;
}

static size_t tencode(uint32_t cp, unsigned char *o)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 63));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | (cp >> 6 & 63));
        o[2] = (unsigned char)(0x80 | (cp & 63));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | (cp >> 12 & 63));
    o[2] = (unsigned char)(0x80 | (cp >> 6 & 63));
    o[3] = (unsigned char)(0x80 | (cp & 63));
    return 4;
}

/* Characters the random strings and patterns are made of: ASCII, 2, 3 and
 * 4-byte UTF-8. */
static const uint32_t ALPHA[] = {'a',
                                 'b',
                                 'c',
                                 'z',
                                 '1',
                                 '_',
                                 '-',
                                 '.',
                                 ' ',
                                 0xE9 /* é */,
                                 0xFF /* ÿ */,
                                 0x436 /* ж */,
                                 0x65E5 /* 日 */,
                                 0x1F600 /* 😀 */};
#define NALPHA (sizeof ALPHA / sizeof *ALPHA)

/* Malformed or truncated sequences mixed into random strings. */
static const char *const BAD[] = {
    "\xFF", "\x80", "\xC0\xAF", "\xED\xA0\x80", "\xE6\x97", "\xF4\x90\x80\x80", "\xC3"};

/* A random string of up to maxlen characters, sometimes with bad bytes. */
static size_t rand_string(unsigned char *o, unsigned maxlen, int allow_bad)
{
    size_t n = 0;
    unsigned len = rn(maxlen + 1);
    for (unsigned i = 0; i < len; i++) {
        if (allow_bad && rn(40) == 0) {
            const char *b = BAD[rn(sizeof BAD / sizeof *BAD)];
            memcpy(o + n, b, strlen(b));
            n += strlen(b);
        } else {
            n += tencode(ALPHA[rn(NALPHA)], o + n);
        }
    }
    return n;
}

/* ---- the generic check: one automaton, one oracle, one string ---- */

typedef int (*oracle_fn)(const void *ctx, const unsigned char *s, size_t n);

/* Byte strings appended to a prefix that died: whole characters and the
 * tails of multi-byte ones (a walk can die in the middle of a character). */
static const char *const EXT[] = {"",
                                  "a",
                                  "b",
                                  "c",
                                  "1",
                                  "_",
                                  "z",
                                  "-",
                                  ".",
                                  "\xA9",
                                  "\xB6",
                                  "\x97\xA5",
                                  "\x9F\x98\x80",
                                  "\xBF",
                                  "ab",
                                  "ba",
                                  "aa",
                                  "cc",
                                  "\xC3\xA9",
                                  "\xD0\xB6",
                                  "\xE6\x97\xA5",
                                  "a\xC3\xA9",
                                  "abc",
                                  "\xF0\x9F\x98\x80"};

static unsigned char catbuf[1024];

static int oracle_cat(oracle_fn o, const void *ctx, const unsigned char *s, size_t n,
                      const unsigned char *t, size_t m)
{
    memcpy(catbuf, s, n);
    memcpy(catbuf + n, t, m);
    return o(ctx, catbuf, n + m);
}

/* Breadth-first search of the DFA from s for a shortest byte path to an
 * accepting state; returns its length or -1. */
static int path_to_accept(qr_aut *a, qr_aut_state s, unsigned char *path)
{
    enum { MAXQ = 1 << 16, HT = 1 << 18 };
    static qr_aut_state q[MAXQ], seen[HT]; /* seen: 0 = free (0 is the dead state) */
    static size_t slot[MAXQ];
    static int parent[MAXQ];
    static unsigned char via[MAXQ];
    int qh = 0, qt = 0, found = -1;
    q[qt] = s, parent[qt] = -1, qt++;
    while (qh < qt && found < 0) {
        int cur = qh++;
        if (qr_aut_accepts(a, q[cur])) {
            found = cur;
            break;
        }
        for (int b = 0; b < 256 && qt < MAXQ; b++) {
            qr_aut_state t = qr_aut_step(a, q[cur], (unsigned char)b);
            if (!t)
                continue;
            size_t h = (t * 2654435761u) % HT;
            while (seen[h] && seen[h] != t)
                h = (h + 1) % HT;
            if (!seen[h] && t != s) {
                seen[h] = t;
                slot[qt] = h;
                q[qt] = t, parent[qt] = cur, via[qt] = (unsigned char)b, qt++;
            }
        }
    }
    for (int k = 1; k < qt; k++)
        seen[slot[k]] = 0;
    if (found < 0)
        return -1;
    int len = 0;
    for (int k = found; parent[k] >= 0; k = parent[k])
        len++;
    int i = len;
    for (int k = found; parent[k] >= 0; k = parent[k])
        path[--i] = via[k];
    return len;
}

static long n_checked, n_accepted, n_died, n_paths;
static char cur_pat[2048]; /* named in failure messages */

/* Everything the automaton promises, for string s:
 * - accepts(final state) and qr_aut_matches equal the oracle;
 * - qr_aut_walk equals stepping byte by byte;
 * - once a state is dead, no extension of that prefix is accepted;
 * - (deep) from the last live state an accepting state is reachable, and
 *   the oracle accepts the string that leads there. */
static void check(qr_aut *a, oracle_fn o, const void *ctx, const unsigned char *s, size_t n,
                  int deep)
{
    qr_aut_state st[1100], wk[1100];
    assert_true(n < 1000);
    int want = o(ctx, s, n);
    memset(st, 0, (n + 1) * sizeof *st);
    st[0] = qr_aut_start(a);
    size_t live = 0; /* bytes after which the state is still live */
    while (live < n && st[live]) {
        st[live + 1] = qr_aut_step(a, st[live], s[live]);
        if (st[live + 1])
            live++;
        else
            break;
    }
    int died = live < n || !st[0];
    int got = !died && qr_aut_accepts(a, st[n]);
    if (got != want)
        fail_msg("%s: string \"%.*s\" (%zu bytes): automaton %d, oracle %d", cur_pat, (int)n, s, n,
                 got, want);
    assert_int_equal(qr_aut_matches(a, (const char *)s, n), want);
    if (st[0]) {
        memset(wk, 0, (n + 1) * sizeof *wk);
        size_t w = qr_aut_walk(a, st[0], s, n, wk);
        assert_int_equal(w, live);
        for (size_t i = 0; i < w; i++)
            assert_int_equal(wk[i], st[i + 1]);
        if (w < n)
            assert_int_equal(wk[w], 0);
    }
    n_checked++;
    n_accepted += want;
    if (died) {
        n_died++;
        size_t plen = st[0] ? live + 1 : 0; /* the prefix that killed it */
        for (size_t k = 0; k < sizeof EXT / sizeof *EXT; k++)
            if (oracle_cat(o, ctx, s, plen, (const unsigned char *)EXT[k], strlen(EXT[k])))
                fail_msg("%s: dead after \"%.*s\" but \"%.*s%s\" matches", cur_pat, (int)plen, s,
                         (int)plen, s, EXT[k]);
        for (int k = 0; k < 8; k++) {
            unsigned char t[64];
            size_t m = rand_string(t, 3, 0);
            if (oracle_cat(o, ctx, s, plen, t, m))
                fail_msg("%s: dead after \"%.*s\" but an extension matches", cur_pat, (int)plen, s);
        }
    } else if (deep) {
        size_t at = rn((unsigned)n + 1); /* a random live prefix */
        unsigned char path[4096];
        int len = path_to_accept(a, st[at], path);
        if (len < 0)
            fail_msg("%s: live after \"%.*s\" but no accepting state is reachable", cur_pat,
                     (int)at, s);
        if (!oracle_cat(o, ctx, s, at, path, (size_t)len))
            fail_msg("%s: path from \"%.*s\" to an accepting state: oracle rejects", cur_pat,
                     (int)at, s);
        n_paths++;
    }
}

/* ---- regexp oracle: own parser, position-set matcher ---- */

enum { O_SET, O_CAT, O_ALT, O_REP, O_EMPTY };

typedef struct oitem {
    uint32_t lo, hi;
    char esc; /* d w s D W S, or 0 for the range lo..hi */
} oitem;

typedef struct onode {
    int op, neg, min, max, nk, ni;
    oitem it[24];
    struct onode *k[24];
} onode;

static onode opool[2048];
static int nopool;
static const unsigned char *ops;
static size_t opi, opn;

static onode *onew(int op)
{
    assert_true(nopool < 2048);
    onode *x = &opool[nopool++];
    memset(x, 0, sizeof *x);
    x->op = op;
    return x;
}

static uint32_t ocp(void)
{
    uint32_t cp[1];
    size_t len = ops[opi] < 0x80 ? 1 : ops[opi] < 0xE0 ? 2 : ops[opi] < 0xF0 ? 3 : 4;
    assert_int_equal(tdecode(ops + opi, len, cp, 1), 1);
    opi += len;
    return cp[0];
}

static oitem oitem_parse(void)
{
    oitem it = {0, 0, 0};
    if (ops[opi] == '\\') {
        opi++;
        if (strchr("dwsDWS", ops[opi])) {
            it.esc = (char)ops[opi++];
            return it;
        }
    }
    it.lo = it.hi = ocp();
    return it;
}

static int esc_has(char e, uint32_t c)
{
    int in;
    switch (e | 0x20) {
    case 'd':
        in = c >= '0' && c <= '9';
        break;
    case 'w':
        in = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        break;
    default:
        in = c == ' ' || (c >= 9 && c <= 13);
    }
    return (e & 0x20) ? in : !in;
}

static int oset_has(const onode *x, uint32_t c)
{
    int in = 0;
    for (int i = 0; i < x->ni && !in; i++)
        in = x->it[i].esc ? esc_has(x->it[i].esc, c) : (c >= x->it[i].lo && c <= x->it[i].hi);
    return in != x->neg;
}

static onode *oalt(void);

static onode *oatom(void)
{
    unsigned char c = ops[opi];
    onode *x;
    if (c == '(') {
        opi++;
        x = oalt();
        opi++;
        return x;
    }
    if ((c == '^' && opi == 0) || (c == '$' && opi + 1 == opn)) {
        opi++;
        return onew(O_EMPTY);
    }
    x = onew(O_SET);
    if (c == '.') {
        opi++;
        x->it[x->ni++] = (oitem){0, 0x10FFFF, 0};
    } else if (c == '[') {
        opi++;
        if (ops[opi] == '^')
            x->neg = 1, opi++;
        for (int first = 1; first || ops[opi] != ']'; first = 0) {
            oitem it = oitem_parse();
            if (!it.esc && ops[opi] == '-' && ops[opi + 1] != ']') {
                opi++;
                it.hi = oitem_parse().lo;
            }
            assert_true(x->ni < 24);
            x->it[x->ni++] = it;
        }
        opi++;
    } else {
        x->it[x->ni++] = oitem_parse();
    }
    return x;
}

static int oquant(void) { return opi < opn && strchr("*+?{", ops[opi]); }

static int onum(void)
{
    int v = 0;
    while (ops[opi] >= '0' && ops[opi] <= '9')
        v = v * 10 + (ops[opi++] - '0');
    return v;
}

static onode *orep(void)
{
    onode *x = oatom();
    if (!oquant())
        return x;
    onode *r = onew(O_REP);
    r->k[r->nk++] = x;
    char c = (char)ops[opi++];
    r->min = c == '+';
    r->max = c == '?' ? 1 : -1;
    if (c == '{') {
        r->min = r->max = onum();
        if (ops[opi] == ',') {
            opi++;
            r->max = ops[opi] == '}' ? -1 : onum();
        }
        opi++;
    }
    if (opi < opn && ops[opi] == '?')
        opi++; /* lazy marker */
    return r;
}

static onode *ocat(void)
{
    onode *x = onew(O_CAT);
    while (opi < opn && ops[opi] != '|' && ops[opi] != ')') {
        assert_true(x->nk < 24);
        x->k[x->nk++] = orep();
    }
    return x;
}

static onode *oalt(void)
{
    onode *x = onew(O_ALT);
    x->k[x->nk++] = ocat();
    while (opi < opn && ops[opi] == '|') {
        opi++;
        assert_true(x->nk < 24);
        x->k[x->nk++] = ocat();
    }
    return x;
}

static onode *oparse(const char *re)
{
    nopool = 0;
    ops = (const unsigned char *)re;
    opn = strlen(re);
    opi = 0;
    onode *x = oalt();
    assert_int_equal(opi, opn);
    return x;
}

/* The set of positions where x can end, starting from any position in S. */
static uint64_t oeval(const onode *x, uint64_t S, const uint32_t *c, int n)
{
    uint64_t r = 0, cur, acc;
    switch (x->op) {
    case O_EMPTY:
        return S;
    case O_SET:
        for (int p = 0; p < n; p++)
            if ((S >> p & 1) && oset_has(x, c[p]))
                r |= 2ull << p;
        return r;
    case O_CAT:
        for (int i = 0; i < x->nk; i++)
            S = oeval(x->k[i], S, c, n);
        return S;
    case O_ALT:
        for (int i = 0; i < x->nk; i++)
            r |= oeval(x->k[i], S, c, n);
        return r;
    default:
        cur = S;
        for (int i = 0; i < x->min; i++)
            cur = oeval(x->k[0], cur, c, n);
        acc = cur;
        for (int i = x->min; x->max < 0 || i < x->max; i++) {
            cur = oeval(x->k[0], cur, c, n) & ~acc; /* only new end positions */
            if (!cur)
                break;
            acc |= cur;
        }
        return acc;
    }
}

static int oracle_regexp(const void *ctx, const unsigned char *s, size_t n)
{
    uint32_t c[MAXCP];
    int m = tdecode(s, n, c, MAXCP - 1);
    if (m < 0)
        return 0;
    return (int)(oeval(ctx, 1, c, m) >> m & 1);
}

/* A random string the pattern accepts (most of the time). */
static void osample(const onode *x, uint32_t *o, int *n)
{
    if (*n >= 40)
        return;
    switch (x->op) {
    case O_EMPTY:
        return;
    case O_SET:
        for (int t = 0; t < 60; t++) {
            uint32_t c = ALPHA[rn(NALPHA)];
            if (t & 1 && x->ni && !x->neg) {
                const oitem *it = &x->it[rn((unsigned)x->ni)];
                if (!it->esc) {
                    uint32_t span = it->hi - it->lo;
                    c = it->lo + (span > 2000 ? rn(2000) : rn(span + 1));
                }
            }
            if (c >= 0xD800 && c <= 0xDFFF)
                continue;
            if (oset_has(x, c)) {
                o[(*n)++] = c;
                return;
            }
        }
        return;
    case O_CAT:
        for (int i = 0; i < x->nk; i++)
            osample(x->k[i], o, n);
        return;
    case O_ALT:
        osample(x->k[rn((unsigned)x->nk)], o, n);
        return;
    default: {
        int times = x->min + (int)rn(3);
        if (x->max >= 0 && times > x->max)
            times = x->max;
        for (int i = 0; i < times; i++)
            osample(x->k[0], o, n);
    }
    }
}

/* ---- random regexps over the same alphabet ---- */

static const char *const RLIT[] = {"a",  "b", "c",   "1", "_",   "é", "ж",
                                   "日", "😀", "\\.", "-", "\\-", "z", "[^\\d\\D]"};
static const char *const RCLS[] = {"a",   "b",   "c",   "é",    "日",   "a-c", "b-z",
                                   "0-9", "é-ж", "a-é", "ж-日", "日-😀", "\\d", "\\w",
                                   "\\S", "\\-", "_",   "😀",    "\\]",  ".",   "ÿ-ж"};
static const char *const RQ[] = {"*",    "+",  "?",   "{2}",   "{0,2}", "{1,3}",
                                 "{1,}", "*?", "{0}", "{2,3}", "+?"};

static void gen_alt(char *o, int depth);

static void gen_atom(char *o, int depth)
{
    unsigned r = rn(12);
    if (r < 5) {
        strcat(o, RLIT[rn(sizeof RLIT / sizeof *RLIT)]);
    } else if (r == 5) {
        strcat(o, ".");
    } else if (r < 8) {
        strcat(o, rn(3) ? "[" : "[^");
        unsigned k = 1 + rn(3);
        for (unsigned i = 0; i < k; i++)
            strcat(o, RCLS[rn(sizeof RCLS / sizeof *RCLS)]);
        strcat(o, "]");
    } else if (r == 8) {
        static const char *const E[] = {"\\d", "\\w", "\\s", "\\D", "\\W", "\\S"};
        strcat(o, E[rn(6)]);
    } else if (depth > 0) {
        strcat(o, "(");
        gen_alt(o, depth - 1);
        strcat(o, ")");
    } else {
        strcat(o, "a");
    }
    if (rn(3) == 0)
        strcat(o, RQ[rn(sizeof RQ / sizeof *RQ)]);
}

static void gen_alt(char *o, int depth)
{
    unsigned branches = rn(4) == 0 ? 2 + rn(2) : 1;
    for (unsigned b = 0; b < branches; b++) {
        if (b)
            strcat(o, "|");
        unsigned len = rn(5);
        for (unsigned i = 0; i < len; i++)
            gen_atom(o, depth);
    }
}

static void check_regexp(const char *re, int nstrings)
{
    qr_err e;
    qr_err_clear(&e);
    qr_aut *a = qr_aut_regexp(re, strlen(re), &e);
    if (!a)
        fail_msg("regexp %s: %s", re, e.msg);
    snprintf(cur_pat, sizeof cur_pat, "regexp %s", re);
    const onode *root = oparse(re);
    unsigned char s[512];
    for (int i = 0; i < nstrings; i++) {
        size_t n = 0;
        if (i % 3 == 0) {
            n = rand_string(s, 7, 1);
        } else {
            uint32_t c[64];
            int m = 0;
            osample(root, c, &m);
            if (i % 3 == 2 && m > 0) { /* mutate: drop, change or add a character */
                int at = (int)rn((unsigned)m);
                unsigned op = rn(3);
                if (op == 0)
                    memmove(c + at, c + at + 1, (size_t)(m - at - 1) * 4), m--;
                else if (op == 1)
                    c[at] = ALPHA[rn(NALPHA)];
                else if (m < 60)
                    memmove(c + at + 1, c + at, (size_t)(m - at) * 4), c[at] = ALPHA[rn(NALPHA)],
                                                                       m++;
            }
            for (int k = 0; k < m; k++)
                n += tencode(c[k], s + n);
        }
        check(a, oracle_regexp, root, s, n, i % 4 == 1);
    }
    assert_int_equal(qr_aut_error(a, &e), 0);
    qr_aut_free(a);
}

static void test_regexp_random_vs_oracle(void **st)
{
    (void)st;
    n_checked = n_accepted = n_died = n_paths = 0;
    for (int i = 0; i < 3000; i++) {
        char re[2048] = "";
        if (rn(10) == 0)
            strcat(re, "^");
        gen_alt(re, 2);
        if (rn(10) == 0)
            strcat(re, "$");
        check_regexp(re, 40);
    }
    /* enough of each outcome to mean something */
    if (getenv("QR_TEST_VERBOSE"))
        printf("regexp: %ld strings, %ld accepted, %ld died, %ld paths\n", n_checked, n_accepted,
               n_died, n_paths);
    assert_true(n_accepted > n_checked / 5);
    assert_true(n_died > n_checked / 5);
    assert_true(n_paths > 5000);
}

static const char *const WORDS[] = {
    "cache",  "cachex", "cche",    "order",    "orders",  "ordering", "confirmation", "conversion",
    "tion",   "send",   "failed",  "error",    "errors",  "timeout",  "user",         "user_id",
    "a",      "",       "12345",   "0x1f",     "café",    "naïve",    "über",         "ürün",
    "日本語", "東京",   "😀ok",     "москва",   "zzz",     "ab",       "ba",           "abc",
    "acb",    "cab",    "request", "requests", "payment", "paymnet",  "retry",        "retries"};
#define NWORDS (sizeof WORDS / sizeof *WORDS)

static void test_regexp_realistic(void **st)
{
    (void)st;
    static const char *const RE[] = {"c.che",
                                     "ord.*",
                                     ".*tion",
                                     "(error|timeout)s?",
                                     "[a-z]+",
                                     "[^a-z]+",
                                     "\\d+",
                                     "\\w+",
                                     "user_\\w*",
                                     "caf[eé]",
                                     ".{3}",
                                     ".{2,4}",
                                     "[ü-ü]ber|über",
                                     "日本.",
                                     "(ab|ba)+",
                                     "a*b*c*",
                                     "(a|b)*a(a|b)",
                                     "re(try|tries)",
                                     "pay(ment|mnet)",
                                     "[^😀]*ok",
                                     "\\W*\\w+",
                                     "^order$",
                                     "or.e?r",
                                     "(.)(.)(.)?",
                                     ".*[😀日].*",
                                     "[a-c]{1,2}b?",
                                     "(((a)))",
                                     "a|",
                                     "|a",
                                     "()",
                                     "(a*)*",
                                     "(a?){3}",
                                     "[-a]",
                                     "[a-]",
                                     "[]a]+",
                                     "[\\]\\-]",
                                     "[\\d\\s]x?",
                                     "\\.",
                                     "\\\\",
                                     ".*",
                                     "[^\\W\\d]+",
                                     "[é-ж]+",
                                     "x{0}y",
                                     "(a|ab)(c|bcd)",
                                     "моск.а",
                                     "ab[^\\d\\D]|abc",
                                     "x[^\\d\\D]*y",
                                     "(a[^\\w\\W])*b",
                                     "c(a|[^\\s\\S]b)+"};
    for (size_t i = 0; i < sizeof RE / sizeof *RE; i++) {
        qr_err e;
        qr_aut *a = qr_aut_regexp(RE[i], strlen(RE[i]), &e);
        if (!a)
            fail_msg("regexp %s: %s", RE[i], e.msg);
        snprintf(cur_pat, sizeof cur_pat, "regexp %s", RE[i]);
        const onode *root = oparse(RE[i]);
        for (size_t w = 0; w < NWORDS; w++)
            check(a, oracle_regexp, root, (const unsigned char *)WORDS[w], strlen(WORDS[w]), 1);
        qr_aut_free(a);
        check_regexp(RE[i], 200);
    }
}

/* ---- LIKE oracle ---- */

typedef struct like_pat {
    int n;
    int32_t t[128]; /* -1 = %, -2 = _, else a code point */
} like_pat;

static void like_parse(const char *p, like_pat *lp)
{
    const unsigned char *s = (const unsigned char *)p;
    size_t n = strlen(p);
    lp->n = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == '%' || s[i] == '_') {
            lp->t[lp->n++] = s[i] == '%' ? -1 : -2;
            i++;
            continue;
        }
        if (s[i] == '\\')
            i++;
        size_t len = s[i] < 0x80 ? 1 : s[i] < 0xE0 ? 2 : s[i] < 0xF0 ? 3 : 4;
        uint32_t c[1];
        assert_int_equal(tdecode(s + i, len, c, 1), 1);
        lp->t[lp->n++] = (int32_t)c[0];
        i += len;
    }
}

static int like_rec(const like_pat *p, int pi, const uint32_t *c, int ci, int cn)
{
    if (pi == p->n)
        return ci == cn;
    if (p->t[pi] == -1) {
        for (int k = ci; k <= cn; k++)
            if (like_rec(p, pi + 1, c, k, cn))
                return 1;
        return 0;
    }
    if (ci == cn || (p->t[pi] >= 0 && (uint32_t)p->t[pi] != c[ci]))
        return 0;
    return like_rec(p, pi + 1, c, ci + 1, cn);
}

static int oracle_like(const void *ctx, const unsigned char *s, size_t n)
{
    uint32_t c[MAXCP];
    int m = tdecode(s, n, c, MAXCP - 1);
    return m >= 0 && like_rec(ctx, 0, c, 0, m);
}

static void check_like(const char *pat, int nstrings)
{
    qr_err e;
    qr_aut *a = qr_aut_like(pat, strlen(pat), &e);
    if (!a)
        fail_msg("LIKE %s: %s", pat, e.msg);
    snprintf(cur_pat, sizeof cur_pat, "LIKE %s", pat);
    like_pat lp;
    like_parse(pat, &lp);
    unsigned char s[512];
    for (int i = 0; i < nstrings; i++) {
        size_t n = 0;
        if (i % 2) {
            n = rand_string(s, 7, 1);
        } else { /* fill the pattern in, then maybe spoil one character */
            for (int k = 0; k < lp.n; k++) {
                int32_t t = lp.t[k];
                if (t == -1)
                    for (unsigned r = rn(3); r > 0; r--)
                        n += tencode(ALPHA[rn(NALPHA)], s + n);
                else
                    n += tencode(t == -2 ? ALPHA[rn(NALPHA)] : (uint32_t)t, s + n);
            }
            if (n && rn(3) == 0)
                s[rn((unsigned)n)] = "ab\xA9\xC3"[rn(4)];
        }
        check(a, oracle_like, &lp, s, n, i % 4 == 0);
    }
    for (size_t w = 0; w < NWORDS; w++)
        check(a, oracle_like, &lp, (const unsigned char *)WORDS[w], strlen(WORDS[w]), 1);
    qr_aut_free(a);
}

static void test_like_vs_oracle(void **st)
{
    (void)st;
    static const char *const FIXED[] = {"%tion", "conf%", "%",      "",       "_",    "__",
                                        "%_%",   "a%b%c", "%a%",    "c_che",  "%日%", "_😀%",
                                        "\\%",   "\\_%",  "a\\\\b", "%%ab",   "caf_", "ü%",
                                        "%ion%", "_%_",   "%a_",    "\\a\\b%"};
    for (size_t i = 0; i < sizeof FIXED / sizeof *FIXED; i++)
        check_like(FIXED[i], 150);
    static const char *const PIECE[] = {"%", "_",   "a",   "b",    "c",  "é", "日",
                                        "😀", "\\%", "\\_", "\\\\", "%%", "1", "ж"};
    for (int i = 0; i < 1500; i++) {
        char pat[256] = "";
        for (unsigned k = rn(7); k > 0; k--)
            strcat(pat, PIECE[rn(sizeof PIECE / sizeof *PIECE)]);
        check_like(pat, 30);
    }
}

/* ---- fuzzy oracle: optimal string alignment distance on code points ---- */

typedef struct fz {
    uint32_t c[MAXCP];
    int n;
    unsigned k;
} fz;

static int osa(const uint32_t *a, int n, const uint32_t *b, int m)
{
    static int d[MAXCP + 1][MAXCP + 1];
    for (int i = 0; i <= n; i++)
        d[i][0] = i;
    for (int j = 0; j <= m; j++)
        d[0][j] = j;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= m; j++) {
            int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

static int oracle_fuzzy(const void *ctx, const unsigned char *s, size_t n)
{
    const fz *f = ctx;
    uint32_t c[MAXCP];
    int m = tdecode(s, n, c, MAXCP - 1);
    return m >= 0 && osa(f->c, f->n, c, m) <= (int)f->k;
}

/* Apply `edits` random edits (insert, delete, substitute, transpose, at any
 * position including both ends) to c[0..*n). */
static void random_edits(uint32_t *c, int *n, int edits)
{
    for (int e = 0; e < edits; e++) {
        unsigned op = rn(4);
        if (op == 0 && *n < 40) {
            int at = (int)rn((unsigned)*n + 1);
            memmove(c + at + 1, c + at, (size_t)(*n - at) * 4);
            c[at] = ALPHA[rn(NALPHA)];
            (*n)++;
        } else if (op == 1 && *n > 0) {
            int at = (int)rn((unsigned)*n);
            memmove(c + at, c + at + 1, (size_t)(*n - at - 1) * 4);
            (*n)--;
        } else if (op == 2 && *n > 0) {
            c[rn((unsigned)*n)] = ALPHA[rn(NALPHA)];
        } else if (*n > 1) {
            int at = (int)rn((unsigned)*n - 1);
            uint32_t t = c[at];
            c[at] = c[at + 1];
            c[at + 1] = t;
        }
    }
}

static void check_fuzzy(const unsigned char *term, size_t tn, unsigned k, int nstrings)
{
    qr_err e;
    qr_aut *a = qr_aut_fuzzy((const char *)term, tn, k, &e);
    if (!a)
        fail_msg("fuzzy %.*s: %s", (int)tn, term, e.msg);
    snprintf(cur_pat, sizeof cur_pat, "fuzzy %.*s~%u", (int)tn, term, k);
    fz f;
    f.k = k;
    f.n = tdecode(term, tn, f.c, MAXCP);
    assert_true(f.n >= 0);
    unsigned char s[512];
    for (int i = 0; i < nstrings; i++) {
        size_t n = 0;
        if (i % 5 == 0) {
            n = rand_string(s, 9, 1);
        } else {
            uint32_t c[MAXCP];
            int m = f.n;
            memcpy(c, f.c, (size_t)m * 4);
            random_edits(c, &m, (int)rn(k + 3));
            for (int j = 0; j < m; j++)
                n += tencode(c[j], s + n);
        }
        check(a, oracle_fuzzy, &f, s, n, i % 4 == 1);
    }
    qr_aut_free(a);
}

static void test_fuzzy_vs_osa(void **st)
{
    (void)st;
    n_checked = n_accepted = n_died = n_paths = 0;
    for (size_t w = 0; w < NWORDS; w++)
        for (unsigned k = 0; k <= 2; k++) {
            check_fuzzy((const unsigned char *)WORDS[w], strlen(WORDS[w]), k, 150);
            qr_err e;
            qr_aut *a = qr_aut_fuzzy(WORDS[w], strlen(WORDS[w]), k, &e);
            snprintf(cur_pat, sizeof cur_pat, "fuzzy %s~%u", WORDS[w], k);
            fz f = {.k = k};
            f.n = tdecode((const unsigned char *)WORDS[w], strlen(WORDS[w]), f.c, MAXCP);
            for (size_t v = 0; v < NWORDS; v++)
                check(a, oracle_fuzzy, &f, (const unsigned char *)WORDS[v], strlen(WORDS[v]), 1);
            qr_aut_free(a);
        }
    for (int i = 0; i < 2500; i++) {
        unsigned char t[128];
        size_t n = rand_string(t, 6, 0);
        check_fuzzy(t, n, 1 + rn(2), 40);
    }
    if (getenv("QR_TEST_VERBOSE"))
        printf("fuzzy: %ld strings, %ld accepted, %ld died, %ld paths\n", n_checked, n_accepted,
               n_died, n_paths);
    assert_true(n_accepted > n_checked / 4);
    assert_true(n_died > n_checked / 10);
}

static void test_fuzzy_edit_kinds(void **st)
{
    (void)st;
    qr_err e;
    qr_aut *a1 = qr_aut_fuzzy("order", 5, 1, &e), *a2 = qr_aut_fuzzy("order", 5, 2, &e);
    struct {
        const char *s;
        int d1, d2;
    } T[] = {{"order", 1, 1},  {"oder", 1, 1},   {"roder", 1, 1},   {"ordre", 1, 1},
             {"orderx", 1, 1}, {"xorder", 1, 1}, {"ordex", 1, 1},   {"rder", 1, 1},
             {"orde", 1, 1},   {"roedr", 0, 1},  {"xxorder", 0, 1}, {"orderxx", 0, 1},
             {"odr", 0, 1},    {"ord", 0, 1},    {"or", 0, 0},      {"", 0, 0},
             {"ordér", 1, 1},  {"órdér", 0, 1},  {"ro", 0, 0},      {"redro", 0, 0},
             {"oredr", 1, 1},  {"xrdex", 0, 1},  {"orderxyz", 0, 0}};
    for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
        if (qr_aut_matches(a1, T[i].s, strlen(T[i].s)) != T[i].d1)
            fail_msg("fuzzy order~1 vs %s", T[i].s);
        if (qr_aut_matches(a2, T[i].s, strlen(T[i].s)) != T[i].d2)
            fail_msg("fuzzy order~2 vs %s", T[i].s);
    }
    qr_aut_free(a1);
    qr_aut_free(a2);
    /* OSA, not unrestricted Damerau: "ca" -> "abc" is 3 in OSA (2 unrestricted) */
    a2 = qr_aut_fuzzy("ca", 2, 2, &e);
    assert_false(qr_aut_matches(a2, "abc", 3));
    assert_true(qr_aut_matches(a2, "ac", 2));
    qr_aut_free(a2);
    /* empty term: anything of at most k characters, multi-byte ones count once */
    a2 = qr_aut_fuzzy("", 0, 2, &e);
    assert_true(qr_aut_matches(a2, "", 0));
    assert_true(qr_aut_matches(a2, "😀日", 7));
    assert_false(qr_aut_matches(a2, "😀日a", 8));
    assert_false(qr_aut_matches(a2, "\xC3", 1));
    qr_aut_free(a2);
    /* transposition of two multi-byte characters is one edit */
    a1 = qr_aut_fuzzy("日本語", 9, 1, &e);
    assert_true(qr_aut_matches(a1, "本日語", 9));
    assert_true(qr_aut_matches(a1, "日本", 6));
    assert_true(qr_aut_matches(a1, "日本語😀", 13));
    assert_false(qr_aut_matches(a1, "本語日", 9));
    qr_aut_free(a1);
    /* longest term */
    char big[QR_AUT_FUZZY_MAX_BYTES + 1];
    memset(big, 'x', sizeof big);
    a2 = qr_aut_fuzzy(big, QR_AUT_FUZZY_MAX_BYTES, 2, &e);
    assert_non_null(a2);
    assert_true(qr_aut_matches(a2, big, QR_AUT_FUZZY_MAX_BYTES - 2));
    assert_false(qr_aut_matches(a2, big, QR_AUT_FUZZY_MAX_BYTES - 3));
    qr_aut_free(a2);
}

/* ---- prefix ---- */

static int oracle_prefix(const void *ctx, const unsigned char *s, size_t n)
{
    const char *p = ctx;
    return n >= strlen(p) && !memcmp(s, p, strlen(p));
}

static void test_prefix_vs_memcmp(void **st)
{
    (void)st;
    for (int i = 0; i < 300; i++) {
        unsigned char p[64];
        size_t pn = rand_string(p, 3, 1);
        p[pn] = 0;
        if (strlen((char *)p) != pn)
            continue;
        qr_err e;
        qr_aut *a = qr_aut_prefix((const char *)p, pn, &e);
        const char *lp;
        assert_int_equal(qr_aut_literal_prefix(a, &lp), pn);
        assert_memory_equal(lp, p, pn);
        unsigned char s[128];
        for (int k = 0; k < 60; k++) {
            size_t n = rand_string(s, 5, 1);
            if (k % 2 && n + pn < sizeof s) { /* start with the prefix */
                memmove(s + pn, s, n);
                memcpy(s, p, pn);
                n += pn;
                if (k % 3 == 0)
                    n = rn((unsigned)n + 1);
            }
            check(a, oracle_prefix, p, s, n, k % 4 == 1);
        }
        qr_aut_free(a);
    }
    qr_err e;
    qr_aut *a = qr_aut_prefix("ord", 3, &e);
    assert_true(qr_aut_matches(a, "order", 5));
    assert_true(qr_aut_matches(a, "ord", 3));
    assert_false(qr_aut_matches(a, "or", 2));
    assert_false(qr_aut_matches(a, "word", 4));
    qr_aut_free(a);
    a = qr_aut_prefix("", 0, &e); /* every term, malformed bytes too: it compares bytes */
    assert_true(qr_aut_matches(a, "", 0));
    assert_true(qr_aut_matches(a, "\xFF", 1));
    qr_aut_free(a);
}

/* ---- UTF-8 compilation of code point ranges ---- */

typedef struct cprange {
    uint32_t lo, hi;
} cprange;

static int oracle_range(const void *ctx, const unsigned char *s, size_t n)
{
    const cprange *r = ctx;
    uint32_t c[2];
    return tdecode(s, n, c, 2) == 1 && c[0] >= r->lo && c[0] <= r->hi;
}

static uint32_t near_boundary(void)
{
    static const uint32_t B[] = {0,       0x7F,    0x80,     0x7FF,    0x800,   0xFFF,
                                 0x1000,  0xD7FF,  0xE000,   0xFFFF,   0x10000, 0x3FFFF,
                                 0x40000, 0xFFFFF, 0x100000, 0x10FFFF, 0xE9,    0x65E5};
    uint32_t c;
    do {
        c = B[rn(sizeof B / sizeof *B)] + rn(5) - 2;
        if (rn(4) == 0)
            c = rn(0x110000);
    } while (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF) || c == ']' || c == '\\' || c == '-' ||
             c == '^');
    return c;
}

static void test_utf8_ranges_exact(void **st)
{
    (void)st;
    for (int i = 0; i < 300; i++) {
        cprange r = {near_boundary(), near_boundary()};
        if (r.lo > r.hi) {
            uint32_t t = r.lo;
            r.lo = r.hi;
            r.hi = t;
        }
        unsigned char re[16];
        size_t n = 0;
        re[n++] = '[';
        n += tencode(r.lo, re + n);
        re[n++] = '-';
        n += tencode(r.hi, re + n);
        re[n++] = ']';
        qr_err e;
        qr_aut *a = qr_aut_regexp((const char *)re, n, &e);
        if (!a)
            fail_msg("%.*s: %s", (int)n, re, e.msg);
        unsigned char s[8];
        for (int k = 0; k < 200; k++) {
            size_t m;
            if (k % 4 == 3) { /* random bytes, mostly malformed */
                m = 1 + rn(4);
                for (size_t j = 0; j < m; j++)
                    s[j] = (unsigned char)rnd();
                if (rn(2))
                    s[0] = (unsigned char)(0xC0 + rn(64));
            } else {
                uint32_t c = k % 4 == 0 ? r.lo + rn(r.hi - r.lo + 1) : near_boundary();
                if (c >= 0xD800 && c <= 0xDFFF)
                    c = r.lo;
                m = tencode(c, s);
            }
            check(a, oracle_range, &r, s, m, k % 8 == 0);
        }
        qr_aut_free(a);
    }
    /* `.` accepts exactly the well-formed one-character strings of 1 and 2
     * bytes, and every 3 and 4-byte string with a valid lead/second byte */
    qr_err e;
    qr_aut *a = qr_aut_regexp(".", 1, &e);
    cprange all = {0, 0x10FFFF};
    unsigned char s[4];
    for (unsigned b = 0; b < 65536; b++) {
        s[0] = (unsigned char)(b >> 8), s[1] = (unsigned char)b;
        assert_int_equal(qr_aut_matches(a, (char *)s, 2), oracle_range(&all, s, 2));
        if (b < 256)
            assert_int_equal(qr_aut_matches(a, (char *)s + 1, 1), oracle_range(&all, s + 1, 1));
    }
    for (unsigned b = 0; b < 65536; b++) {
        s[0] = (unsigned char)(0xE0 + (b >> 12)), s[1] = (unsigned char)(0x80 + (b >> 6 & 63));
        s[2] = (unsigned char)(0x80 + (b & 63));
        if (b & 1) /* some broken third bytes */
            s[2] ^= 0x40;
        assert_int_equal(qr_aut_matches(a, (char *)s, 3), oracle_range(&all, s, 3));
        s[0] = (unsigned char)(0xF0 + (b >> 12)), s[3] = (unsigned char)rnd();
        assert_int_equal(qr_aut_matches(a, (char *)s, 4), oracle_range(&all, s, 4));
    }
    qr_aut_free(a);
}

/* ---- facts, prefixes, errors, limits ---- */

static int re_match(const char *re, const char *s)
{
    qr_err e;
    qr_aut *a = qr_aut_regexp(re, strlen(re), &e);
    if (!a)
        fail_msg("%s: %s", re, e.msg);
    int m = qr_aut_matches(a, s, strlen(s));
    qr_aut_free(a);
    return m;
}

static int like_match(const char *pat, const char *s)
{
    qr_err e;
    qr_aut *a = qr_aut_like(pat, strlen(pat), &e);
    int m = qr_aut_matches(a, s, strlen(s));
    qr_aut_free(a);
    return m;
}

static void test_dataset_facts(void **st)
{
    (void)st;
    assert_true(re_match("c.che", "cache"));
    assert_false(re_match("c.che", "cachex"));
    assert_false(re_match("c.che", "cche"));
    assert_true(re_match("ord.*", "order"));
    assert_true(re_match("ord.*", "ord"));
    assert_false(re_match("ord.*", "word"));         /* whole term, not substring */
    assert_false(like_match("%tion", "conversion")); /* ends in "sion" */
    assert_true(like_match("%tion", "confirmation"));
    assert_true(like_match("%p_t%", "output"));
    assert_false(like_match("%p_t%", "pt"));
    assert_true(like_match("caf_", "café")); /* _ is one character, not one byte */
    assert_false(like_match("caf__", "café"));
}

static void expect_prefix(qr_aut *a, const char *want)
{
    assert_non_null(a);
    const char *p;
    size_t n = qr_aut_literal_prefix(a, &p);
    if (n != strlen(want) || memcmp(p, want, n))
        fail_msg("literal prefix \"%.*s\", want \"%s\"", (int)n, p, want);
    qr_aut_free(a);
}

static void test_literal_prefix(void **st)
{
    (void)st;
    qr_err e;
    static const char *const R[][2] = {
        {"ord.*", "ord"}, {"c.che", "c"},     {"abc", "abc"},     {"abc|abd", "ab"},
        {"a+", "a"},      {"(ab|ac)d", "a"},  {"[é-ê]x", "\xC3"}, {".*", ""},
        {"(abc)*", ""},   {"日本.*", "日本"}, {"x{3}y", "xxxy"},  {"\\.ab", ".ab"},
        {"a|b", ""},      {"[a]b", "ab"},     {"ab?", "a"},       {"^ord.*$", "ord"}};
    for (size_t i = 0; i < sizeof R / sizeof *R; i++)
        expect_prefix(qr_aut_regexp(R[i][0], strlen(R[i][0]), &e), R[i][1]);
    expect_prefix(qr_aut_like("abc%", 4, &e), "abc");
    expect_prefix(qr_aut_like("%tion", 5, &e), "");
    expect_prefix(qr_aut_like("a\\%b_", 5, &e), "a%b");
    expect_prefix(qr_aut_like("caf_", 4, &e), "caf");
    expect_prefix(qr_aut_fuzzy("order", 5, 1, &e), "");
    expect_prefix(qr_aut_fuzzy("order", 5, 0, &e), "order");
    expect_prefix(qr_aut_prefix("ord", 3, &e), "ord");
    expect_prefix(qr_aut_regexp("[^\\d\\D]", 8, &e), ""); /* accepts nothing */
}

static void expect_error(qr_aut *a, const qr_err *e, const char *code, const char *msg)
{
    assert_null(a);
    assert_string_equal(e->code, code);
    assert_string_equal(e->msg, msg);
}

static void test_error_messages(void **st)
{
    (void)st;
    static const char *const R[][3] = {
        {"a(b", "2201B", "regexp \"a(b\": missing ')' at byte 3"},
        {"a)b", "2201B", "regexp \"a)b\": unmatched ')' at byte 1"},
        {"(a))", "2201B", "regexp \"(a))\": unmatched ')' at byte 3"},
        {"*a", "2201B", "regexp \"*a\": nothing to repeat at byte 0"},
        {"a|+b", "2201B", "regexp \"a|+b\": nothing to repeat at byte 2"},
        {"(?a)", "2201B", "regexp \"(?a)\": nothing to repeat at byte 1"},
        {"{2}", "2201B", "regexp \"{2}\": nothing to repeat at byte 0"},
        {"a**", "2201B", "regexp \"a**\": stacked repetition (use a group) at byte 2"},
        {"a*?+", "2201B", "regexp \"a*?+\": stacked repetition (use a group) at byte 3"},
        {"[z-a]", "2201B", "regexp \"[z-a]\": bad class range z-a at byte 1"},
        {"x[ж-a]", "2201B", "regexp \"x[ж-a]\": bad class range ж-a at byte 2"},
        {"[a-\\d]", "2201B", "regexp \"[a-\\d]\": bad class range a-\\d at byte 1"},
        {"[abc", "2201B", "regexp \"[abc\": missing ']' at byte 4"},
        {"[]", "2201B", "regexp \"[]\": missing ']' at byte 2"},
        {"a{", "2201B", "regexp \"a{\": bad repetition count at byte 1"},
        {"a{x}", "2201B", "regexp \"a{x}\": bad repetition count at byte 1"},
        {"a{2", "2201B", "regexp \"a{2\": bad repetition count at byte 1"},
        {"a{,2}", "2201B", "regexp \"a{,2}\": bad repetition count at byte 1"},
        {"a{3,2}", "2201B", "regexp \"a{3,2}\": repetition range {3,2} is reversed at byte 1"},
        {"a{1001}", "2201B", "regexp \"a{1001}\": repetition count over 1000 at byte 1"},
        {"a{0,99999999999}", "2201B",
         "regexp \"a{0,99999999999}\": repetition count over 1000 at byte 1"},
        {"ab\\", "2201B", "regexp \"ab\\\": trailing backslash at byte 2"},
        {"a\\q", "2201B", "regexp \"a\\q\": unknown escape \\q at byte 1"},
        {"[\\1]", "2201B", "regexp \"[\\1]\": unknown escape \\1 at byte 1"},
        {"a^b", "2201B", "regexp \"a^b\": '^' is only allowed at the start (write \\^) at byte 1"},
        {"a$b", "2201B", "regexp \"a$b\": '$' is only allowed at the end (write \\$) at byte 1"},
        {"a\xFF", "2201B", "regexp \"a\xFF\": invalid UTF-8 at byte 1"},
        {"\xED\xA0\x80", "2201B", "regexp \"\xED\xA0\x80\": invalid UTF-8 at byte 0"},
        {"a\xE0\x9F\xBF", "2201B", "regexp \"a\xE0\x9F\xBF\": invalid UTF-8 at byte 1"},
        {"[\xC0\xAF]", "2201B", "regexp \"[\xC0\xAF]\": invalid UTF-8 at byte 1"},
        {"\xF4\x90\x80\x80", "2201B", "regexp \"\xF4\x90\x80\x80\": invalid UTF-8 at byte 0"},
        {"(a{1000}){1000}", "54000",
         "regexp \"(a{1000}){1000}\": too large (over 100000 automaton states) at byte 9"},
        {"((a{100}){100}){100}", "54000",
         "regexp \"((a{100}){100}){100}\": too large (over 100000 automaton states) at byte 15"},
    };
    qr_err e;
    for (size_t i = 0; i < sizeof R / sizeof *R; i++) {
        qr_err_clear(&e);
        expect_error(qr_aut_regexp(R[i][0], strlen(R[i][0]), &e), &e, R[i][1], R[i][2]);
    }
    char deep[256] = "", want[512];
    for (int i = 0; i < 101; i++)
        strcat(deep, "(");
    snprintf(want, sizeof want, "regexp \"%.100s...\": groups nested deeper than 100 at byte 100",
             deep);
    expect_error(qr_aut_regexp(deep, strlen(deep), &e), &e, "2201B", want);
    expect_error(qr_aut_like("ab\\", 3, &e), &e, "22025",
                 "LIKE \"ab\\\": trailing escape character at byte 2");
    expect_error(qr_aut_like("a\xC3", 2, &e), &e, "22P02",
                 "LIKE \"a\xC3\": invalid UTF-8 at byte 1");
    expect_error(qr_aut_fuzzy("abc", 3, 3, &e), &e, "22023",
                 "fuzzy \"abc\": 3 edits not supported (0, 1 or 2)");
    expect_error(qr_aut_fuzzy("ab\x80", 3, 1, &e), &e, "22P02",
                 "fuzzy \"ab\x80\": invalid UTF-8 at byte 2");
    char big[300];
    memset(big, 'y', sizeof big);
    snprintf(want, sizeof want, "fuzzy \"%.100s...\": term too long (256 bytes, at most 255)", big);
    expect_error(qr_aut_fuzzy(big, 256, 1, &e), &e, "54000", want);
    /* the biggest repetition that fits is fine */
    qr_aut *a = qr_aut_regexp("[a-z]{0,1000}x", 14, &e);
    assert_non_null(a);
    qr_aut_free(a);
}

/* The DFA cache limit: the classic exponential regexp, walked over every
 * string of a and b up to length 16 with a small cache, must overflow and
 * say so; qr_aut_matches stays exact by simulating the NFA. */
static void test_cache_limit(void **st)
{
    (void)st;
    const char *re = "(a|b)*a(a|b){12}";
    qr_err e;
    qr_aut *a = qr_aut_regexp(re, strlen(re), &e);
    qr_aut_set_cache_limit(a, 64 * 1024);
    const onode *root = oparse(re);
    qr_aut_state stack[20];
    int overflowed = 0;
    for (unsigned len = 0; len <= 16 && !overflowed; len++)
        for (unsigned bits = 0; bits < (1u << len); bits++) {
            unsigned char s[20];
            stack[0] = qr_aut_start(a);
            for (unsigned i = 0; i < len; i++) {
                s[i] = bits >> i & 1 ? 'b' : 'a';
                stack[i + 1] = qr_aut_step(a, stack[i], s[i]);
            }
            if (qr_aut_error(a, &e)) {
                overflowed = 1;
                break;
            }
            assert_int_equal(qr_aut_accepts(a, stack[len]), oracle_regexp(root, s, len));
        }
    assert_true(overflowed);
    assert_string_equal(e.code, "54000");
    assert_string_equal(e.msg, "regexp \"(a|b)*a(a|b){12}\": too complex to match: its automaton "
                               "needs more than the 65536-byte state cache");
    for (int i = 0; i < 300; i++) {
        unsigned char s[32];
        size_t n = 10 + rn(20);
        for (size_t k = 0; k < n; k++)
            s[k] = "ab"[rn(2)];
        assert_int_equal(qr_aut_matches(a, (char *)s, n), oracle_regexp(root, s, n));
    }
    qr_aut_free(a);
    /* with the default limit the same walk fits */
    a = qr_aut_regexp(re, strlen(re), &e);
    for (unsigned bits = 0; bits < (1u << 16); bits++) {
        unsigned char s[16];
        for (unsigned i = 0; i < 16; i++)
            s[i] = bits >> i & 1 ? 'b' : 'a';
        assert_int_equal(qr_aut_matches(a, (char *)s, 16), oracle_regexp(root, s, 16));
    }
    assert_int_equal(qr_aut_error(a, &e), 0);
    qr_aut_free(a);
}

/* The dictionary's walk: sorted terms, a stack of states per depth, shared
 * prefixes not re-stepped, dead subtrees skipped; the result equals matching
 * every term on its own. */
static int term_cmp(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static void test_sorted_walk_with_pruning(void **st)
{
    (void)st;
    enum { NT = 3000 };
    static char store[NT][32];
    static const char *terms[NT];
    for (int i = 0; i < NT; i++) {
        size_t n = rand_string((unsigned char *)store[i], 6, 0);
        store[i][n] = 0;
        if (i < (int)NWORDS)
            strcpy(store[i], WORDS[i]);
        terms[i] = store[i];
    }
    qsort(terms, NT, sizeof *terms, term_cmp);
    const char *pats[] = {"c.che", "[a-c]+.*", ".*日.*", "(ab|ba)*_?", "ord.*"};
    qr_err e;
    for (size_t pi = 0; pi < 6; pi++) {
        qr_aut *a =
            pi < 5 ? qr_aut_regexp(pats[pi], strlen(pats[pi]), &e) : qr_aut_fuzzy("cab", 3, 1, &e);
        qr_aut_state stk[64];
        stk[0] = qr_aut_start(a);
        size_t valid = 0; /* stk[0..valid] hold the states of prev[0..valid) */
        const char *prev = "";
        long hits = 0, want = 0;
        for (int i = 0; i < NT; i++) {
            const char *t = terms[i];
            size_t n = strlen(t), l = 0;
            while (l < valid && t[l] && t[l] == prev[l])
                l++;
            size_t live = qr_aut_walk(a, stk[l], (const unsigned char *)t + l, n - l, stk + l + 1);
            valid = l + live;
            prev = t;
            int m = live == n - l && qr_aut_accepts(a, stk[n]);
            hits += m;
            want += qr_aut_matches(a, t, n);
            assert_int_equal(m, qr_aut_matches(a, t, n));
        }
        assert_int_equal(hits, want);
        qr_aut_free(a);
    }
}

/* ---- lengths: what a dictionary walk that knows a term's length prunes by ---- */

/* A small alphabet of one-, two- and three-byte characters that holds a
 * representative of every class the patterns below tell apart. */
static const char *const LALPHA[] = {"a", "b", "c", "e", "h", "x", "0", "5", "é", "日"};
#define NLALPHA (sizeof LALPHA / sizeof *LALPHA)

/* The automaton of pattern i of the length tests; NULL past the last. */
static qr_aut *len_pattern(int i)
{
    qr_err err, *e = &err;
    static const char *const re[] = {"c.che", "ab|ba*",  "(ab)*c?", "é.{2,3}",     "[0-9]{1,2}x",
                                     ".*e",   "a.*b.*c", "日+|x",   "(a|é)(b|日)?"};
    int nre = (int)(sizeof re / sizeof *re);
    if (i < nre)
        return qr_aut_regexp(re[i], strlen(re[i]), e);
    switch (i - nre) {
    case 0:
        return qr_aut_like("%he", 3, e);
    case 1:
        return qr_aut_like("c_%e", 4, e);
    case 2:
        return qr_aut_fuzzy("cahce", 5, 1, e);
    case 3:
        return qr_aut_fuzzy("caé", 4, 2, e);
    case 4:
        return qr_aut_fuzzy("a", 1, 1, e);
    case 5:
        return qr_aut_prefix("ca", 2, e);
    case 6:
        return qr_aut_prefix("\xc3", 1, e); /* a prefix that ends inside é */
    default:
        return NULL;
    }
}

/* The alphabet strings of k characters, numbered 0..NLALPHA^k - 1. */
static size_t len_string(unsigned k, unsigned num, char *o)
{
    size_t n = 0;
    for (unsigned i = 0; i < k; i++, num /= NLALPHA) {
        const char *c = LALPHA[num % NLALPHA];
        memcpy(o + n, c, strlen(c));
        n += strlen(c);
    }
    return n;
}

/* qr_aut_can_end of every state reached by an alphabet prefix u (up to 2
 * characters) equals whether some alphabet continuation v of exactly r
 * characters makes u v an accepted term, for r = 0..4; qr_aut_next_len
 * agrees with it. Both ways: a 0 would lose matches, a 1 lose pruning. */
static void test_lengths_exact(void **st)
{
    (void)st;
    qr_aut *a;
    for (int pi = 0; (a = len_pattern(pi)); pi++) {
        unsigned pw = 1;
        for (unsigned ku = 0; ku <= 2; ku++, pw *= NLALPHA)
            for (unsigned u = 0; u < pw; u++) {
                char buf[64];
                size_t un = len_string(ku, u, buf);
                qr_aut_state s = qr_aut_start(a);
                for (size_t i = 0; i < un && s; i++)
                    s = qr_aut_step(a, s, (unsigned char)buf[i]);
                unsigned vw = 1;
                for (unsigned r = 0; r <= 4; r++, vw *= NLALPHA) {
                    int want = 0;
                    for (unsigned v = 0; v < vw && !want; v++) {
                        size_t vn = len_string(r, v, buf + un);
                        want = qr_aut_matches(a, buf, un + vn);
                    }
                    if (qr_aut_can_end(a, s, r) != want)
                        fail_msg("pattern %d, prefix %u of %u chars, %u more: can_end %d, "
                                 "enumeration %d",
                                 pi, u, ku, r, qr_aut_can_end(a, s, r), want);
                    uint32_t nl = qr_aut_next_len(a, s, r);
                    assert_true(nl >= r);
                    if (want)
                        assert_int_equal(nl, r);
                    else
                        assert_true(nl == UINT32_MAX || qr_aut_can_end(a, s, nl));
                }
                assert_int_equal(qr_aut_can_end(a, s, QR_AUT_LEN_MAX + 1), 0);
            }
        qr_err e;
        assert_int_equal(qr_aut_error(a, &e), 0);
        qr_aut_free(a);
    }
}

/* qr_aut_next_byte_ending against trying all 256 bytes, from states
 * reached by random prefixes (malformed bytes included), for every `from`
 * and code points left 0..5: the byte runs it steps over split classes
 * where lead and continuation bytes meet (the prefix automaton's one class
 * of every byte). qr_aut_walk_ending against stepping one byte at a time. */
static void test_next_byte_ending(void **st)
{
    (void)st;
    qr_aut *a;
    for (int pi = 0; (a = len_pattern(pi)); pi++) {
        for (int trial = 0; trial < 60; trial++) {
            unsigned char p[16];
            size_t n = rand_string(p, 4, 1);
            qr_aut_state s = qr_aut_start(a);
            for (size_t i = 0; i < n && s; i++)
                s = qr_aut_step(a, s, p[i]);
            for (uint32_t left = 0; left <= 5; left++)
                for (unsigned from = 0; from <= 256; from += 1 + rn(7)) {
                    int want = -1;
                    for (unsigned b = from; b < 256 && want < 0; b++) {
                        uint32_t w = (b & 0xC0) != 0x80;
                        qr_aut_state t = qr_aut_step(a, s, (unsigned char)b);
                        if (w <= left && t && qr_aut_can_end(a, t, left - w))
                            want = (int)b;
                    }
                    assert_int_equal(qr_aut_next_byte_ending(a, s, from, left), want);
                }
            /* the walk of a random term of its own length */
            unsigned char t[16];
            size_t tn = rand_string(t, 6, 1);
            uint32_t len = 0;
            for (size_t i = 0; i < tn; i++)
                len += (t[i] & 0xC0) != 0x80;
            qr_aut_state out[17], one = qr_aut_start(a);
            uint32_t cps[18] = {0};
            size_t live = qr_aut_walk_ending(a, qr_aut_start(a), t, tn, len, out, cps);
            size_t want = tn;
            uint32_t c = 0;
            for (size_t i = 0; i < tn; i++) {
                one = qr_aut_step(a, one, t[i]);
                c += (t[i] & 0xC0) != 0x80;
                assert_int_equal(cps[i + 1], c);
                if (!one || !qr_aut_can_end(a, one, len - c)) {
                    want = i;
                    break;
                }
                assert_int_equal(out[i], one);
            }
            assert_int_equal(live, want);
            if (live == tn && tn) /* it can end in its own length: it is accepted */
                assert_int_equal(qr_aut_accepts(a, out[tn - 1]), qr_aut_matches(a, (char *)t, tn));
        }
        qr_aut_free(a);
    }
}

/* qr_aut_required_bytes against every accepted alphabet string of up to
 * 4 characters: each required byte is in all of them (else the walk would
 * pass over a block holding a match), and each byte of some match that is
 * not required is missing from another match (else a block it could skip
 * is read; ASCII bytes). Exact answers for a few patterns besides. */
static void test_required_bytes(void **st)
{
    (void)st;
    qr_aut *a;
    for (int pi = 0; (a = len_pattern(pi)); pi++) {
        uint64_t req[4];
        qr_aut_required_bytes(a, req);
        uint64_t in_all[4] = {~0ull, ~0ull, ~0ull, ~0ull}, in_some[4] = {0};
        int any = 0;
        unsigned pw = 1;
        for (unsigned k = 0; k <= 4; k++, pw *= NLALPHA)
            for (unsigned num = 0; num < pw; num++) {
                char buf[64];
                size_t n = len_string(k, num, buf);
                if (!qr_aut_matches(a, buf, n))
                    continue;
                uint64_t has[4] = {0};
                for (size_t i = 0; i < n; i++)
                    has[(unsigned char)buf[i] / 64] |= 1ull << ((unsigned char)buf[i] % 64);
                for (int w = 0; w < 4; w++) {
                    in_all[w] &= has[w];
                    in_some[w] |= has[w];
                }
                any = 1;
            }
        for (int w = 0; w < 4; w++) {
            if (!any)
                break;
            if ((req[w] & ~in_all[w]) != 0)
                fail_msg("pattern %d: a required byte is missing from a match (word %d: %016llx "
                         "against %016llx)",
                         pi, w, (unsigned long long)req[w], (unsigned long long)in_all[w]);
            /* precision on ASCII bytes: the alphabet's multi-byte
             * characters bring all their bytes together (a byte prefix
             * automaton's "\xc3" is always followed by é's 0xa9 here) */
            if (w < 2 && req[w] != (in_all[w] & in_some[w]))
                fail_msg("pattern %d: required bytes word %d %016llx, in every match %016llx", pi,
                         w, (unsigned long long)req[w], (unsigned long long)in_all[w]);
        }
        qr_aut_free(a);
    }
    static const struct {
        const char *re, *want;
    } exact[] = {{".*nnec.*", "cen"},  {"c.che", "ceh"}, {"ab|ba*", "b"}, {"(ab)*c", "c"},
                 {"[0-9]{1,2}x", "x"}, {"x|y", ""},      {"a*", ""},      {"(a|b)c(d|d)", "cd"}};
    qr_err e;
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
        a = qr_aut_regexp(exact[i].re, strlen(exact[i].re), &e);
        uint64_t req[4], want[4] = {0};
        for (const char *c = exact[i].want; *c; c++)
            want[(unsigned char)*c / 64] |= 1ull << ((unsigned char)*c % 64);
        qr_aut_required_bytes(a, req);
        for (int w = 0; w < 4; w++)
            if (req[w] != want[w])
                fail_msg("/%s/: required bytes word %d %016llx, want %016llx", exact[i].re, w,
                         (unsigned long long)req[w], (unsigned long long)want[w]);
        qr_aut_free(a);
    }
    a = qr_aut_fuzzy("cahce", 5, 1, &e); /* one edit leaves a c */
    uint64_t req[4];
    qr_aut_required_bytes(a, req);
    assert_true(req[1] == 1ull << ('c' - 64) && !req[0] && !req[2] && !req[3]);
    qr_aut_free(a);
}

/* Lengths of large patterns: loops and thousands of states are worked out
 * exactly within the budget; one past it (a loop that needs a pass per
 * length behind 1000 optional characters) still matches exactly and
 * reports every length of a live state: no pruning, nothing lost. */
static void test_lengths_of_large_patterns(void **st)
{
    (void)st;
    qr_err e;
    const char *big = "((.|日){1,120}é){1,8}x";
    qr_aut *a = qr_aut_regexp(big, strlen(big), &e);
    assert_non_null(a);
    qr_aut_state s = qr_aut_start(a);
    for (uint32_t r = 0; r <= QR_AUT_LEN_MAX; r++) /* "a..aéx" of every length from 3 */
        assert_int_equal(qr_aut_can_end(a, s, r), r >= 3);
    qr_aut_free(a);
    a = qr_aut_regexp("z((ab){1,500}x)*", 16, &e);
    s = qr_aut_start(a);
    /* z, then pieces of 2k + 1 (k >= 1) characters: odd sums from 3, even
     * ones from 6 */
    for (uint32_t r = 0; r <= QR_AUT_LEN_MAX; r++)
        assert_int_equal(qr_aut_can_end(a, s, r),
                         r == 1 || (r % 2 == 0 && r >= 4) || (r % 2 == 1 && r >= 7));
    qr_aut_free(a);
    /* the lengths table is the automaton's memory: charged to a query's
     * budget with its DFA cache (~32 bytes an NFA state; .{1,200}x has
     * some 1,600 states) */
    qr_qctx ctx;
    qr_qctx_init(&ctx, 16 << 10);
    a = qr_aut_regexp("ab", 2, &e);
    assert_int_equal(qr_aut_set_ctx(a, &ctx), 0);
    qr_aut_free(a);
    assert_int_equal(atomic_load(&ctx.used), 0);
    a = qr_aut_regexp(".{1,200}x", 9, &e);
    assert_int_equal(qr_aut_set_ctx(a, &ctx), -1);
    qr_qctx_init(&ctx, 0); /* unlimited: it holds more than the table */
    assert_int_equal(qr_aut_set_ctx(a, &ctx), 0);
    assert_true(atomic_load(&ctx.used) > (size_t)32 * 1000);
    qr_aut_free(a);
    assert_int_equal(atomic_load(&ctx.used), 0);
    const char *past = ".{0,1000}(ab)*z";
    a = qr_aut_regexp(past, strlen(past), &e);
    assert_non_null(a);
    s = qr_aut_start(a);
    for (uint32_t r = 0; r <= QR_AUT_LEN_MAX; r++)
        assert_int_equal(qr_aut_can_end(a, s, r), 1);
    assert_int_equal(qr_aut_next_len(a, s, 0), 0);
    assert_true(qr_aut_matches(a, "z", 1));
    assert_true(qr_aut_matches(a, "qabz", 4));
    assert_false(qr_aut_matches(a, "", 0));
    assert_false(qr_aut_matches(a, "zq", 2));
    assert_int_equal(qr_aut_can_end(a, 0, 0), 0);
    qr_aut_free(a);
}

int main(void)
{
    const char *seed = getenv("QR_TEST_SEED"); /* to explore more: QR_TEST_SEED=n */
    if (seed && strtoull(seed, NULL, 0))
        rng = strtoull(seed, NULL, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dataset_facts),
        cmocka_unit_test(test_literal_prefix),
        cmocka_unit_test(test_error_messages),
        cmocka_unit_test(test_regexp_realistic),
        cmocka_unit_test(test_regexp_random_vs_oracle),
        cmocka_unit_test(test_like_vs_oracle),
        cmocka_unit_test(test_fuzzy_vs_osa),
        cmocka_unit_test(test_fuzzy_edit_kinds),
        cmocka_unit_test(test_prefix_vs_memcmp),
        cmocka_unit_test(test_utf8_ranges_exact),
        cmocka_unit_test(test_cache_limit),
        cmocka_unit_test(test_sorted_walk_with_pruning),
        cmocka_unit_test(test_lengths_exact),
        cmocka_unit_test(test_next_byte_ending),
        cmocka_unit_test(test_lengths_of_large_patterns),
        cmocka_unit_test(test_required_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
