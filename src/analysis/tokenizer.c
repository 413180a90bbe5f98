/* tokenizer.c - the Body analyser (contract in tokenizer.h).
 *
 * Two paths produce the same tokens. The ASCII fast path classifies bytes
 * with a 256-entry table and lowercases with `| 0x20`; a lowercase ASCII token
 * is returned as a pointer into the input. The first byte >= 0x80 met while
 * skipping or inside a token hands the token over to the general path, which
 * decodes UTF-8 strictly, classifies code points by general category and
 * lowercases code point by code point with libunistring's tables (plus the
 * two SpecialCasing rules that apply without a language: U+0130 and final
 * sigma), writing at most 255 bytes into the tokenizer's fixed buffer. Any
 * output past 255 bytes is never computed, so nothing is allocated.
 */
#include "analysis/tokenizer.h"

#include <string.h>

#include <unicase.h>
#include <unictype.h>
#include <unistr.h>

typedef unsigned char uchar;

/* Byte classes of the fast path. */
enum { C_SEP = 0, C_WORD = 1, C_UPPER = 2, C_HIGH = 4 };

static const uint8_t cls[256] = {
    ['0' ... '9'] = C_WORD,
    ['a' ... 'z'] = C_WORD,
    ['A' ... 'Z'] = C_WORD | C_UPPER,
    [0x80 ... 0xff] = C_HIGH,
};

/* Code point classes of the general path. */
enum { K_SEP, K_WORD, K_MARK };

#define BAD_CP 0xffffffffu

/* Decode one strict UTF-8 sequence at p (< end). Returns its length; *cp is
 * BAD_CP (length 1) when the byte at p does not start a well-formed sequence.
 * Resyncing one byte at a time finds the same well-formed sequences as
 * decoding by maximal subparts: a subpart's tail bytes are continuation
 * bytes, which never start a sequence. */
static size_t utf8_decode(const uchar *p, const uchar *end, ucs4_t *cp)
{
    uchar b = p[0];
    size_t left = (size_t)(end - p);
    *cp = BAD_CP;
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    if (b >= 0xc2 && b <= 0xdf) {
        if (left >= 2 && (p[1] & 0xc0) == 0x80) {
            *cp = ((ucs4_t)(b & 0x1f) << 6) | (p[1] & 0x3f);
            return 2;
        }
        return 1;
    }
    if (b >= 0xe0 && b <= 0xef) {
        /* second byte range excludes overlongs (E0) and surrogates (ED) */
        uchar lo = b == 0xe0 ? 0xa0 : 0x80, hi = b == 0xed ? 0x9f : 0xbf;
        if (left >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80) {
            *cp = ((ucs4_t)(b & 0x0f) << 12) | ((ucs4_t)(p[1] & 0x3f) << 6) | (p[2] & 0x3f);
            return 3;
        }
        return 1;
    }
    if (b >= 0xf0 && b <= 0xf4) {
        /* excludes overlongs (F0 80-8F) and code points above U+10FFFF */
        uchar lo = b == 0xf0 ? 0x90 : 0x80, hi = b == 0xf4 ? 0x8f : 0xbf;
        if (left >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xc0) == 0x80 &&
            (p[3] & 0xc0) == 0x80) {
            *cp = ((ucs4_t)(b & 0x07) << 18) | ((ucs4_t)(p[1] & 0x3f) << 12) |
                  ((ucs4_t)(p[2] & 0x3f) << 6) | (p[3] & 0x3f);
            return 4;
        }
        return 1;
    }
    return 1; /* continuation byte, C0, C1, F5-FF */
}

static int cp_class(ucs4_t cp)
{
    if (cp == BAD_CP)
        return K_SEP;
    uint32_t m = uc_general_category(cp).bitmask;
    if (m & (UC_CATEGORY_MASK_L | UC_CATEGORY_MASK_N))
        return K_WORD;
    if (m & UC_CATEGORY_MASK_M)
        return K_MARK;
    return K_SEP;
}

/* Class and length of the code point (or invalid byte) at p. */
static int class_at(const qr_tokenizer *t, const uchar *p, const uchar *end, size_t *len, int *high)
{
    *high = p[0] >= 0x80;
    if (!*high && !t->unicode_only) {
        *len = 1;
        return (cls[p[0]] & C_WORD) ? K_WORD : K_SEP;
    }
    ucs4_t cp;
    *len = utf8_decode(p, end, &cp);
    return cp_class(cp);
}

static void emit_ascii(qr_tokenizer *t, const uchar *s, size_t n, int upper, qr_token *out)
{
    if (n > QR_TOK_MAX_BYTES)
        n = QR_TOK_MAX_BYTES;
    if (upper && !t->keep_case) {
        for (size_t i = 0; i < n; i++)
            t->fold[i] = (char)(s[i] | 0x20); /* A-Z -> a-z; digits, a-z unchanged */
        out->p = t->fold;
    } else {
        out->p = (const char *)s;
    }
    out->n = (uint32_t)n;
    out->pos = t->pos++;
}

/* Previous code point before p, which is > s, in valid UTF-8. */
static ucs4_t utf8_prev(const uchar *s, const uchar **p)
{
    const uchar *q = *p - 1;
    while (q > s && (*q & 0xc0) == 0x80)
        q--;
    ucs4_t cp;
    utf8_decode(q, *p, &cp);
    *p = q;
    return cp;
}

/* Final_Sigma as Python's str.lower() evaluates it inside the token [s, e)
 * for the sigma at [p, next): skipping case-ignorable code points backwards
 * reaches a cased one, and skipping them forwards reaches the end or a
 * code point that is not cased. (Unicode's own wording also lets a code point
 * that is both cased and case-ignorable, like U+0345, count as the cased one;
 * Python, and so Quarry, skips it.) */
static int final_sigma(const uchar *s, const uchar *p, const uchar *next, const uchar *e)
{
    ucs4_t cp = 0;
    int found = 0;
    while (p > s) {
        cp = utf8_prev(s, &p);
        if (!uc_is_property_case_ignorable(cp)) {
            found = 1;
            break;
        }
    }
    if (!found || !uc_is_property_cased(cp))
        return 0;
    while (next < e) {
        next += utf8_decode(next, e, &cp);
        if (!uc_is_property_case_ignorable(cp))
            return !uc_is_property_cased(cp);
    }
    return 1;
}

/* Lowercase the valid UTF-8 token [s, e) into t->fold, code point by code
 * point (full mapping: U+0130 gives two code points; Final_Sigma), stopping
 * before the first output code point that would pass QR_TOK_MAX_BYTES. */
static void emit_folded(qr_tokenizer *t, const uchar *s, const uchar *e, qr_token *out)
{
    size_t len = 0;
    const uchar *p = s;
    if (t->keep_case) { /* the bytes as written, cut at a code point */
        len = (size_t)(e - s);
        if (len > QR_TOK_MAX_BYTES) {
            len = QR_TOK_MAX_BYTES;
            while (len && (s[len] & 0xc0) == 0x80)
                len--;
        }
        memcpy(t->fold, s, len);
        goto done;
    }
    while (p < e) {
        ucs4_t cp, low[2];
        size_t nlow = 1;
        const uchar *next = p + utf8_decode(p, e, &cp);
        if (cp == 0x130) { /* LATIN CAPITAL LETTER I WITH DOT ABOVE */
            low[0] = 'i';
            low[1] = 0x307;
            nlow = 2;
        } else if (cp == 0x3a3) { /* GREEK CAPITAL LETTER SIGMA */
            low[0] = final_sigma(s, p, next, e) ? 0x3c2 : 0x3c3;
        } else {
            low[0] = uc_tolower(cp);
        }
        for (size_t i = 0; i < nlow; i++) {
            uint8_t enc[4];
            int m = u8_uctomb(enc, low[i], 4);
            if (m <= 0 || len + (size_t)m > QR_TOK_MAX_BYTES)
                goto done;
            memcpy(t->fold + len, enc, (size_t)m);
            len += (size_t)m;
        }
        p = next;
    }
done:
    out->p = t->fold;
    out->n = (uint32_t)len;
    out->pos = t->pos++;
}

/* The general path: skip separators from p, then read one token, handling
 * ASCII and non-ASCII alike. */
static int next_general(qr_tokenizer *t, const uchar *p, qr_token *out)
{
    const uchar *end = t->end;
    size_t len;
    int high, k;
    for (;;) {
        if (p == end) {
            t->cur = p;
            return 0;
        }
        if (class_at(t, p, end, &len, &high) == K_WORD)
            break;
        p += len; /* separator, invalid byte, or mark with no word to extend */
    }
    const uchar *s = p;
    int any_high = high, upper = (cls[*p] & C_UPPER) != 0;
    p += len;
    while (p < end) {
        k = class_at(t, p, end, &len, &high);
        if (k == K_SEP) {
            t->cur = p + len; /* the separator is consumed with the token */
            goto emit;
        }
        any_high |= high;
        upper |= (cls[*p] & C_UPPER) != 0;
        p += len;
    }
    t->cur = p;
emit:
    if (!any_high && !t->unicode_only)
        emit_ascii(t, s, (size_t)(p - s), upper, out);
    else
        emit_folded(t, s, p, out);
    return 1;
}

void qr_tok_init(qr_tokenizer *t)
{
    t->cur = t->end = NULL;
    t->pos = 0;
    t->unicode_only = 0;
    t->keep_case = 0;
}

void qr_tok_free(qr_tokenizer *t) { t->cur = t->end = NULL; }

void qr_tok_reset(qr_tokenizer *t, const char *text, size_t n)
{
    t->pos = 0;
    t->cur = t->end = NULL;
    if (n > 0) {
        t->cur = (const uchar *)text;
        t->end = t->cur + n;
    }
}

int qr_tok_next(qr_tokenizer *t, qr_token *out)
{
    const uchar *p = t->cur, *end = t->end;
    if (t->unicode_only)
        return next_general(t, p, out);
    while (p < end && cls[*p] == C_SEP)
        p++;
    if (p == end) {
        t->cur = p;
        return 0;
    }
    const uchar *s = p;
    unsigned flags = 0, c = C_SEP;
    while (p < end && ((c = cls[*p]) & C_WORD)) {
        flags |= c;
        p++;
    }
    if (p < end && c == C_HIGH)
        return next_general(t, s, out); /* a non-ASCII byte: at s or inside the token */
    t->cur = p;
    emit_ascii(t, s, (size_t)(p - s), (flags & C_UPPER) != 0, out);
    return 1;
}

size_t qr_tok_analyze(const char *text, size_t n, qr_arena *a, qr_token *out, size_t max)
{
    return qr_tok_analyze_case(text, n, 0, a, out, max);
}

size_t qr_tok_analyze_case(const char *text, size_t n, int keep_case, qr_arena *a, qr_token *out,
                           size_t max)
{
    qr_tokenizer t;
    qr_token tok;
    size_t k = 0;
    qr_tok_init(&t);
    t.keep_case = keep_case;
    qr_tok_reset(&t, text, n);
    while (k < max && qr_tok_next(&t, &tok)) {
        char *copy = qr_arena_memdup(a, tok.p, tok.n);
        if (!copy) {
            qr_tok_free(&t);
            return QR_TOK_NOMEM;
        }
        out[k].p = copy;
        out[k].n = tok.n;
        out[k].pos = tok.pos;
        k++;
    }
    qr_tok_free(&t);
    return k;
}
