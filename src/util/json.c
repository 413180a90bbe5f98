/* json.c - zero-copy JSON pull parser and canonical string writer (see
 * json.h).
 *
 * Invariants: every read is checked against j->end (inputs are not
 * NUL-terminated); the first error sticks. A string is validated in one pass
 * (scan_string: escapes, surrogate pairs, UTF-8, control bytes) that finds its
 * closing quote; only a string holding escapes gets a second pass
 * (decode_string) into the arena, which may then trust the input. The one
 * SIMD kernel is scan_plain (runs of bytes needing no attention): SSE2 when
 * the compiler targets it, else its scalar twin, which the tests compare.
 */
#include "util/json.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

_Static_assert(QJ_MAX_DEPTH == 64, "the depth message and qj_skip's stack assume 64");

#define E_EOF "unexpected end of input"
#define E_DEPTH "nesting deeper than 64"
#define E_UNTERMINATED "unterminated string"
#define E_BAD_HEX "invalid \\u escape: expected 4 hex digits"
#define E_LONE_HIGH "lone surrogate \\ud800-\\udbff: no low surrogate follows"
#define E_LONE_LOW "lone surrogate \\udc00-\\udfff: no high surrogate before"
#define E_UTF8_CONT "invalid UTF-8 in string: unexpected continuation byte"
#define E_UTF8_OVERLONG "invalid UTF-8 in string: overlong encoding"
#define E_UTF8_SURROGATE "invalid UTF-8 in string: encoded surrogate"
#define E_UTF8_BIG "invalid UTF-8 in string: above U+10FFFF"
#define E_UTF8_TRUNC "invalid UTF-8 in string: truncated sequence"
#define E_UTF8_BYTE "invalid UTF-8 in string: invalid byte"

/* ---- errors ---- */

static __attribute__((cold, noinline)) int fail(qr_json *j, const char *at, const char *why)
{
    if (!j->err_why) {
        j->err_off = (size_t)(at - j->s);
        j->err_why = why;
    }
    return -1;
}

/* The same, for helpers that return the position after what they read. */
static __attribute__((cold, noinline)) const char *failp(qr_json *j, const char *at,
                                                         const char *why)
{
    fail(j, at, why);
    return NULL;
}

#define E(c) "invalid escape \\" c
static const char *const bad_escape_msg[0x7f - 0x21] = {
    E("!"), E("\""), E("#"), E("$"), E("%"), E("&"), E("'"), E("("), E(")"),
    E("*"), E("+"), E(","), E("-"), E("."), E("/"), E("0"), E("1"), E("2"),
    E("3"), E("4"), E("5"), E("6"), E("7"), E("8"), E("9"), E(":"), E(";"),
    E("<"), E("="), E(">"), E("?"), E("@"), E("A"), E("B"), E("C"), E("D"),
    E("E"), E("F"), E("G"), E("H"), E("I"), E("J"), E("K"), E("L"), E("M"),
    E("N"), E("O"), E("P"), E("Q"), E("R"), E("S"), E("T"), E("U"), E("V"),
    E("W"), E("X"), E("Y"), E("Z"), E("["), E("\\"), E("]"), E("^"), E("_"),
    E("`"), E("a"), E("b"), E("c"), E("d"), E("e"), E("f"), E("g"), E("h"),
    E("i"), E("j"), E("k"), E("l"), E("m"), E("n"), E("o"), E("p"), E("q"),
    E("r"), E("s"), E("t"), E("u"), E("v"), E("w"), E("x"), E("y"), E("z"),
    E("{"), E("|"), E("}"), E("~"),
};
#undef E

/* "invalid escape \q" naming a printable escape character, else generic. */
static const char *bad_escape(unsigned char c)
{
    return c >= 0x21 && c < 0x7f ? bad_escape_msg[c - 0x21] : "invalid escape";
}

/* ---- small scanners ---- */

static inline int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

static inline const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (unsigned char)*p <= ' ' &&
           (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

static inline int is_special(unsigned char c) { return c == '"' || c == '\\' || c < 0x20; }

static inline size_t scan_plain_scalar(const char *p, size_t n, int *hi)
{
    unsigned char acc = 0;
    size_t i = 0;
    for (; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (is_special(c))
            break;
        acc |= c;
    }
    if (acc & 0x80)
        *hi = 1;
    return i;
}

/* The kernel behind qj_scan_string (contract in json.h). */
static inline size_t scan_plain(const char *p, size_t n, int *hi)
{
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i c1f = _mm_set1_epi8(0x1f), zero = _mm_setzero_si128();
    unsigned acc = 0; /* sign bits of the plain bytes seen */
    size_t i = 0;
    for (; n - i >= 16; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i sp = _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash));
        /* x <= 0x1f unsigned <=> saturating x - 0x1f == 0 */
        sp = _mm_or_si128(sp, _mm_cmpeq_epi8(_mm_subs_epu8(x, c1f), zero));
        unsigned m = (unsigned)_mm_movemask_epi8(sp);
        unsigned h = (unsigned)_mm_movemask_epi8(x);
        if (m) {
            unsigned k = (unsigned)__builtin_ctz(m);
            if (acc | (h & ((1u << k) - 1)))
                *hi = 1;
            return i + k;
        }
        acc |= h;
    }
    if (acc)
        *hi = 1;
    return i + scan_plain_scalar(p + i, n - i, hi);
#else
    return scan_plain_scalar(p, n, hi);
#endif
}

size_t qj_scan_string(const char *p, size_t n, int *hi) { return scan_plain(p, n, hi); }

size_t qj_scan_string_scalar(const char *p, size_t n, int *hi)
{
    return scan_plain_scalar(p, n, hi);
}

/* Validates [s, s+n) as UTF-8. Returns NULL when valid, else the lead byte of
 * the first bad sequence with *why set. A run never holds '"', '\\' or
 * control bytes, so a sequence cut by one of them is reported truncated. */
static const char *utf8_invalid(const char *s, size_t n, const char **why)
{
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    while (p < e) {
        if (e - p >= 8) { /* ASCII fast path, 8 bytes at a time */
            uint64_t w;
            memcpy(&w, p, 8);
            if (!(w & 0x8080808080808080ull)) {
                p += 8;
                continue;
            }
        }
        unsigned c = *p;
        if (c < 0x80) {
            p++;
            continue;
        }
        size_t need;
        unsigned lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
        const char *range_why = NULL;  /* why the second byte is out of range */
        if (c < 0xc0) {
            *why = E_UTF8_CONT;
            return (const char *)p;
        } else if (c < 0xc2) {
            *why = E_UTF8_OVERLONG;
            return (const char *)p;
        } else if (c < 0xe0) {
            need = 1;
        } else if (c < 0xf0) {
            need = 2;
            if (c == 0xe0)
                lo = 0xa0, range_why = E_UTF8_OVERLONG;
            else if (c == 0xed)
                hi = 0x9f, range_why = E_UTF8_SURROGATE;
        } else if (c < 0xf5) {
            need = 3;
            if (c == 0xf0)
                lo = 0x90, range_why = E_UTF8_OVERLONG;
            else if (c == 0xf4)
                hi = 0x8f, range_why = E_UTF8_BIG;
        } else {
            *why = c < 0xf8 ? E_UTF8_BIG : E_UTF8_BYTE;
            return (const char *)p;
        }
        for (size_t i = 1; i <= need; i++) {
            if (p + i == e || (p[i] & 0xc0) != 0x80) {
                *why = E_UTF8_TRUNC;
                return (const char *)p;
            }
        }
        if (p[1] < lo || p[1] > hi) {
            *why = range_why;
            return (const char *)p;
        }
        p += need + 1;
    }
    return NULL;
}

static inline int hex_val(char ch)
{
    unsigned char c = (unsigned char)ch;
    if ((unsigned)c - '0' < 10u)
        return c - '0';
    c |= 0x20;
    if ((unsigned)c - 'a' < 6u)
        return c - 'a' + 10;
    return -1;
}

/* The 4 hex digits of the \u escape whose backslash is at p; -1 on error
 * (q is the string's opening quote, for "unterminated string"). */
static int read_hex4(qr_json *j, const char *q, const char *p)
{
    int v = 0;
    for (int i = 2; i < 6; i++) {
        if (j->end - p <= i)
            return fail(j, q, E_UNTERMINATED);
        int d = hex_val(p[i]);
        if (d < 0)
            return fail(j, p, E_BAD_HEX);
        v = v << 4 | d;
    }
    return v;
}

/* Validates the escape whose backslash is at p; returns the byte after it. */
static const char *scan_escape(qr_json *j, const char *q, const char *p)
{
    const char *end = j->end;
    if (end - p < 2)
        return failp(j, q, E_UNTERMINATED);
    switch (p[1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        return p + 2;
    case 'u':
        break;
    default:
        return failp(j, p, bad_escape((unsigned char)p[1]));
    }
    int u = read_hex4(j, q, p);
    if (u < 0)
        return NULL;
    if (u >= 0xdc00 && u <= 0xdfff)
        return failp(j, p, E_LONE_LOW);
    if (u < 0xd800 || u > 0xdbff)
        return p + 6;
    const char *r = p + 6; /* a high surrogate: "\uDC00-DFFF" must follow */
    if (r == end || (r[0] == '\\' && end - r == 1))
        return failp(j, q, E_UNTERMINATED);
    if (r[0] != '\\' || r[1] != 'u')
        return failp(j, p, E_LONE_HIGH);
    int lo = read_hex4(j, q, r);
    if (lo < 0)
        return NULL;
    if (lo < 0xdc00 || lo > 0xdfff)
        return failp(j, p, E_LONE_HIGH);
    return r + 6;
}

/* Validates the string whose opening quote is at q. Returns the byte after
 * the closing quote (NULL on error); sets *esc when it holds an escape. */
static inline const char *scan_string(qr_json *j, const char *q, int *esc)
{
    const char *p = q + 1, *end = j->end;
    for (;;) {
        int hi = 0;
        const char *run = p;
        p += scan_plain(p, (size_t)(end - p), &hi);
        if (p == end)
            return failp(j, q, E_UNTERMINATED);
        if (hi) {
            const char *why, *bad = utf8_invalid(run, (size_t)(p - run), &why);
            if (bad)
                return failp(j, bad, why);
        }
        if (*p == '"')
            return p + 1;
        if (*p != '\\')
            return failp(j, p, "control character in string");
        *esc = 1;
        if (!(p = scan_escape(j, q, p)))
            return NULL;
    }
}

static size_t put_utf8(char *o, unsigned u)
{
    if (u < 0x80) {
        o[0] = (char)u;
        return 1;
    }
    if (u < 0x800) {
        o[0] = (char)(0xc0 | u >> 6);
        o[1] = (char)(0x80 | (u & 0x3f));
        return 2;
    }
    if (u < 0x10000) {
        o[0] = (char)(0xe0 | u >> 12);
        o[1] = (char)(0x80 | (u >> 6 & 0x3f));
        o[2] = (char)(0x80 | (u & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | u >> 18);
    o[1] = (char)(0x80 | (u >> 12 & 0x3f));
    o[2] = (char)(0x80 | (u >> 6 & 0x3f));
    o[3] = (char)(0x80 | (u & 0x3f));
    return 4;
}

/* 4 hex digits that scan_escape already checked */
static unsigned hex4_trusted(const char *p)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 4 | ((unsigned)hex_val(p[i]) & 15);
    return v;
}

/* Decodes the body [p, e) of a string scan_string accepted into o (room for
 * e - p bytes: decoding never grows). Returns the decoded length. */
static size_t decode_string(const char *p, const char *e, char *o)
{
    char *o0 = o;
    for (;;) {
        int hi = 0;
        size_t k = scan_plain(p, (size_t)(e - p), &hi);
        memcpy(o, p, k);
        o += k;
        p += k;
        if (p == e)
            break;
        char c = p[1]; /* *p is '\\': the only special byte left in a body */
        p += 2;
        switch (c) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned u = hex4_trusted(p);
            p += 4;
            if (u >= 0xd800 && u <= 0xdbff) {
                u = 0x10000 + ((u - 0xd800) << 10) + (hex4_trusted(p + 2) - 0xdc00);
                p += 6;
            }
            o += put_utf8(o, u);
            break;
        }
        default: *o++ = c; break; /* '"', '\\', '/' */
        }
    }
    return (size_t)(o - o0);
}

/* Reads the string at q (its opening quote) into *out; moves j->p past it. */
static inline int read_string(qr_json *j, const char *q, qr_slice *out, qr_arena *a)
{
    int esc = 0;
    const char *e = scan_string(j, q, &esc);
    if (!e)
        return -1;
    size_t raw = (size_t)(e - q) - 2;
    if (!esc) {
        out->p = q + 1;
        out->n = raw;
    } else {
        char *o = a ? qr_arena_alloc(a, raw) : NULL;
        if (!o) {
            if (a && !j->err_why)
                j->oom = 1; /* the arena is full: not a fault of the input */
            return fail(j, q, "out of memory");
        }
        out->p = o;
        out->n = decode_string(q + 1, e - 1, o);
    }
    j->p = e;
    return 0;
}

/* Validates a number (full grammar) at p, which holds '-' or a digit. */
static const char *scan_number(qr_json *j, const char *p)
{
    const char *end = j->end;
    if (*p == '-') {
        if (++p == end)
            return failp(j, p, E_EOF);
        if (!is_digit(*p))
            return failp(j, p, "expected a digit after '-'");
    }
    if (*p == '0') {
        if (++p < end && is_digit(*p))
            return failp(j, p - 1, "leading zero in number");
    } else {
        while (p < end && is_digit(*p))
            p++;
    }
    if (p < end && *p == '.') {
        if (++p == end)
            return failp(j, p, E_EOF);
        if (!is_digit(*p))
            return failp(j, p, "expected a digit after '.'");
        while (p < end && is_digit(*p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        if (++p < end && (*p == '+' || *p == '-'))
            p++;
        if (p == end)
            return failp(j, p, E_EOF);
        if (!is_digit(*p))
            return failp(j, p, "expected a digit in exponent");
        while (p < end && is_digit(*p))
            p++;
    }
    return p;
}

/* Consumes the literal lit (len bytes) at p. */
static const char *scan_literal(qr_json *j, const char *p, const char *lit, size_t len)
{
    size_t avail = (size_t)(j->end - p);
    if (avail >= len) {
        if (!memcmp(p, lit, len))
            return p + len;
    } else if (!memcmp(p, lit, avail)) {
        return failp(j, j->end, E_EOF);
    }
    return failp(j, p, "invalid literal");
}

/* ---- the pull API ---- */

void qj_init(qr_json *j, const char *s, size_t n)
{
    memset(j, 0, sizeof *j);
    if (!s)
        s = "";
    j->s = j->p = s;
    j->end = s + n;
}

/* Skips whitespace before a value; NULL (error set) at the end of input. */
static inline const char *value_start(qr_json *j)
{
    const char *p = skip_ws(j->p, j->end);
    j->p = p;
    if (p == j->end)
        return failp(j, p, E_EOF);
    return p;
}

qj_type qj_peek(qr_json *j)
{
    if (j->err_why)
        return QJ_ERROR;
    const char *p = skip_ws(j->p, j->end);
    j->p = p;
    if (p == j->end) {
        if (!j->depth)
            return QJ_END;
        fail(j, p, E_EOF);
        return QJ_ERROR;
    }
    switch (*p) {
    case '"': return QJ_STRING;
    case '{': return QJ_OBJECT;
    case '[': return QJ_ARRAY;
    case 't': return QJ_TRUE;
    case 'f': return QJ_FALSE;
    case 'n': return QJ_NULL;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        return QJ_NUMBER;
    default:
        fail(j, p, "expected a value");
        return QJ_ERROR;
    }
}

int qj_string(qr_json *j, qr_slice *out, qr_arena *a)
{
    if (j->err_why)
        return -1;
    const char *p = value_start(j);
    if (!p)
        return -1;
    if (*p != '"')
        return fail(j, p, "expected a string");
    return read_string(j, p, out, a);
}

int qj_int64(qr_json *j, int64_t *v)
{
    if (j->err_why)
        return -1;
    const char *p = value_start(j), *start = p, *end = j->end;
    if (!p)
        return -1;
    int neg = *p == '-';
    if (neg) {
        if (++p == end)
            return fail(j, p, E_EOF);
        if (!is_digit(*p))
            return fail(j, p, "expected a digit after '-'");
    } else if (!is_digit(*p)) {
        return fail(j, p, "expected an integer");
    }
    uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, u = 0;
    int big = 0; /* past lim: reported once we know it is an integer at all */
    if (*p == '0') {
        if (++p < end && is_digit(*p))
            return fail(j, p - 1, "leading zero in number");
    } else {
        do {
            unsigned d = (unsigned)(*p - '0');
            if (u > (lim - d) / 10)
                big = 1;
            else
                u = u * 10 + d;
        } while (++p < end && is_digit(*p));
    }
    if (p < end && (*p == '.' || *p == 'e' || *p == 'E'))
        return fail(j, start, "expected an integer");
    if (big)
        return fail(j, start, "integer out of range");
    if (!neg)
        *v = (int64_t)u;
    else
        *v = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
    j->p = p;
    return 0;
}

int qj_number(qr_json *j, qr_slice *raw)
{
    if (j->err_why)
        return -1;
    const char *p = value_start(j);
    if (!p)
        return -1;
    if (*p != '-' && !is_digit(*p))
        return fail(j, p, "expected a number");
    const char *e = scan_number(j, p);
    if (!e)
        return -1;
    raw->p = p;
    raw->n = (size_t)(e - p);
    j->p = e;
    return 0;
}

int qj_null(qr_json *j)
{
    if (j->err_why)
        return -1;
    const char *p = value_start(j);
    if (!p)
        return -1;
    if (*p != 'n')
        return fail(j, p, "expected null");
    if (!(p = scan_literal(j, p, "null", 4)))
        return -1;
    j->p = p;
    return 0;
}

int qj_bool(qr_json *j, int *v)
{
    if (j->err_why)
        return -1;
    const char *p = value_start(j);
    if (!p)
        return -1;
    int t = *p == 't';
    if (!t && *p != 'f')
        return fail(j, p, "expected true or false");
    if (!(p = t ? scan_literal(j, p, "true", 4) : scan_literal(j, p, "false", 5)))
        return -1;
    *v = t;
    j->p = p;
    return 0;
}

static int open_container(qr_json *j, char open, const char *why)
{
    if (j->err_why)
        return -1;
    const char *p = value_start(j);
    if (!p)
        return -1;
    if (*p != open)
        return fail(j, p, why);
    if (j->depth >= QJ_MAX_DEPTH)
        return fail(j, p, E_DEPTH);
    j->depth++;
    j->first = 1;
    j->p = p + 1;
    return 0;
}

static void close_container(qr_json *j, const char *p)
{
    if (j->depth > 0)
        j->depth--;
    j->first = 0;
    j->p = p + 1;
}

int qj_object_begin(qr_json *j) { return open_container(j, '{', "expected '{'"); }
int qj_array_begin(qr_json *j) { return open_container(j, '[', "expected '['"); }

int qj_object_next(qr_json *j, qr_slice *key, qr_arena *a)
{
    if (j->err_why)
        return -1;
    const char *p = skip_ws(j->p, j->end), *end = j->end;
    if (p == end)
        return fail(j, p, E_EOF);
    if (*p == '}') {
        close_container(j, p);
        return 0;
    }
    if (!j->first) {
        if (*p != ',')
            return fail(j, p, "expected ',' or '}'");
        p = skip_ws(p + 1, end);
        if (p == end)
            return fail(j, p, E_EOF);
        if (*p != '"')
            return fail(j, p, "expected a string key");
    } else if (*p != '"') {
        return fail(j, p, "expected a string key or '}'");
    }
    j->first = 0;
    if (read_string(j, p, key, a))
        return -1;
    p = skip_ws(j->p, end);
    if (p == end)
        return fail(j, p, E_EOF);
    if (*p != ':')
        return fail(j, p, "expected ':'");
    j->p = p + 1;
    return 1;
}

int qj_array_next(qr_json *j)
{
    if (j->err_why)
        return -1;
    const char *p = skip_ws(j->p, j->end);
    if (p == j->end)
        return fail(j, p, E_EOF);
    if (*p == ']') {
        close_container(j, p);
        return 0;
    }
    if (!j->first) {
        if (*p != ',')
            return fail(j, p, "expected ',' or ']'");
        p++;
    }
    j->first = 0;
    j->p = p;
    return 1;
}

/* In qj_skip: a member's key and ':' from p (after '{' or ','). */
static const char *skip_key(qr_json *j, const char *p, int first)
{
    const char *end = j->end;
    p = skip_ws(p, end);
    if (p == end)
        return failp(j, p, E_EOF);
    if (*p != '"')
        return failp(j, p, first ? "expected a string key or '}'" : "expected a string key");
    int esc = 0;
    if (!(p = scan_string(j, p, &esc)))
        return NULL;
    p = skip_ws(p, end);
    if (p == end)
        return failp(j, p, E_EOF);
    if (*p != ':')
        return failp(j, p, "expected ':'");
    return p + 1;
}

int qj_skip(qr_json *j)
{
    if (j->err_why)
        return -1;
    const char *p = j->p, *end = j->end;
    uint64_t objs = 0; /* bit 0 = innermost open level is an object */
    int d = 0;         /* levels opened by this call */
    for (;;) {
        /* here a value must start */
        p = skip_ws(p, end);
        if (p == end)
            return fail(j, p, E_EOF);
        int esc = 0;
        switch (*p) {
        case '{':
        case '[': {
            if (j->depth + d >= QJ_MAX_DEPTH)
                return fail(j, p, E_DEPTH);
            int obj = *p == '{';
            objs = objs << 1 | (uint64_t)obj;
            d++;
            p = skip_ws(p + 1, end);
            if (p == end)
                return fail(j, p, E_EOF);
            if (*p != (obj ? '}' : ']')) {
                if (obj && !(p = skip_key(j, p, 1)))
                    return -1;
                continue; /* to the first member's / element's value */
            }
            p++;
            d--;
            objs >>= 1;
            break;
        }
        case '"': p = scan_string(j, p, &esc); break;
        case 't': p = scan_literal(j, p, "true", 4); break;
        case 'f': p = scan_literal(j, p, "false", 5); break;
        case 'n': p = scan_literal(j, p, "null", 4); break;
        case '-': case '0': case '1': case '2': case '3': case '4':
        case '5': case '6': case '7': case '8': case '9':
            p = scan_number(j, p);
            break;
        default:
            return fail(j, p, "expected a value");
        }
        if (!p)
            return -1;
        /* after a value: close finished levels, or step to the next value */
        for (;;) {
            if (!d) {
                j->p = p;
                return 0;
            }
            p = skip_ws(p, end);
            if (p == end)
                return fail(j, p, E_EOF);
            int obj = (int)(objs & 1);
            if (*p == ',') {
                p++;
                if (obj && !(p = skip_key(j, p, 0)))
                    return -1;
                break;
            }
            if (*p != (obj ? '}' : ']'))
                return fail(j, p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
            p++;
            d--;
            objs >>= 1;
        }
    }
}

int qj_finish(qr_json *j)
{
    if (j->err_why)
        return -1;
    const char *p = skip_ws(j->p, j->end);
    j->p = p;
    if (p != j->end)
        return fail(j, p, "trailing characters");
    if (j->depth)
        return fail(j, p, E_EOF);
    return 0;
}

/* ---- writer ---- */

void qj_write_string(qr_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (!qr_buf_reserve(b, n + 2)) /* enough unless something needs escaping */
        return;
    b->p[b->len++] = '"';
    while (n) {
        int hi = 0;
        size_t k = scan_plain(s, n, &hi);
        qr_buf_put(b, s, k);
        if (k == n)
            break;
        unsigned char c = (unsigned char)s[k];
        char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        size_t len = 2;
        switch (c) {
        case '"': e[1] = '"'; break;
        case '\\': e[1] = '\\'; break;
        case '\b': e[1] = 'b'; break;
        case '\f': e[1] = 'f'; break;
        case '\n': e[1] = 'n'; break;
        case '\r': e[1] = 'r'; break;
        case '\t': e[1] = 't'; break;
        default: len = 6; break;
        }
        qr_buf_put(b, e, len);
        s += k + 1;
        n -= k + 1;
    }
    qr_buf_put_u8(b, '"');
}

int qj_copy(qr_json *j, qr_buf *out, qr_arena *a)
{
    qr_slice s;
    int v;
    switch (qj_peek(j)) {
    case QJ_NULL:
        if (qj_null(j) != 0)
            return -1;
        qr_buf_put(out, "null", 4);
        return 0;
    case QJ_FALSE:
    case QJ_TRUE:
        if (qj_bool(j, &v) != 0)
            return -1;
        qr_buf_put(out, v ? "true" : "false", v ? 4 : 5);
        return 0;
    case QJ_NUMBER:
        if (qj_number(j, &s) != 0)
            return -1;
        qr_buf_put(out, s.p, s.n);
        return 0;
    case QJ_STRING:
        if (qj_string(j, &s, a) != 0)
            return -1;
        qj_write_string(out, s.p, s.n);
        return 0;
    case QJ_OBJECT: {
        if (qj_object_begin(j) != 0)
            return -1;
        qr_buf_put_u8(out, '{');
        int first = 1, r;
        while ((r = qj_object_next(j, &s, a)) == 1) {
            if (!first)
                qr_buf_put_u8(out, ',');
            first = 0;
            qj_write_string(out, s.p, s.n);
            qr_buf_put_u8(out, ':');
            if (qj_copy(j, out, a) != 0)
                return -1;
        }
        if (r < 0)
            return -1;
        qr_buf_put_u8(out, '}');
        return 0;
    }
    case QJ_ARRAY: {
        if (qj_array_begin(j) != 0)
            return -1;
        qr_buf_put_u8(out, '[');
        int first = 1, r;
        while ((r = qj_array_next(j)) == 1) {
            if (!first)
                qr_buf_put_u8(out, ',');
            first = 0;
            if (qj_copy(j, out, a) != 0)
                return -1;
        }
        if (r < 0)
            return -1;
        qr_buf_put_u8(out, ']');
        return 0;
    }
    case QJ_END:
        return fail(j, j->end, "unexpected end of input");
    default:
        return -1;
    }
}
