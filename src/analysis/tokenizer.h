/* tokenizer.h - the Body analyser: splits text into lowercase words with
 * positions. Indexing and query analysis both go through it, so this comment
 * is the contract that search (and every oracle test) relies on.
 *
 * THE CONTRACT (Unicode 14.0.0, the version of libunistring 1.0 and of
 * Python 3.11's unicodedata)
 *
 * 1. Decoding. The text is UTF-8. Only well-formed sequences decode to a code
 *    point (no overlongs, no surrogates D800-DFFF, nothing above U+10FFFF);
 *    every byte that is not part of a well-formed sequence is a separator.
 *    (Equivalently: decode with Python's errors="replace"; U+FFFD is a
 *    separator anyway.) NUL is an ordinary separator, not an end.
 *
 * 2. Splitting. A code point is
 *    - a word character if its general category is L* (Lu Ll Lt Lm Lo) or
 *      N* (Nd Nl No): "a", "Z", "7", "é", "ß", "東", "²", "½", "Ⅻ";
 *    - a mark if its category is M* (Mn Mc Me): a mark extends the token in
 *      progress ("e" U+0301 stays one word), and a mark with no token in
 *      progress (text start, after a separator) is a separator;
 *    - a separator otherwise: everything in P*, S*, Z*, C* (so "_", "-",
 *      ".", "=", emoji, ZWJ/ZWNJ U+200C/U+200D, private use, unassigned).
 *    A token is a maximal run of a word character followed by word characters
 *    and marks. Nothing else splits words: camelCase is not split
 *    ("GetCartAsync" -> getcartasync), letters and digits are not split from
 *    each other ("v1.2.3" -> v1, 2, 3), and CJK / Thai / other scripts
 *    written without spaces are not segmented ("東京都" is one token).
 *
 * 3. Folding. Each token, taken on its own as a whole string, gets the full
 *    Unicode lowercase mapping without language tailoring, exactly as
 *    Python's `token.lower()` computes it: every code point maps by
 *    UnicodeData's simple lowercase mapping, except for the two SpecialCasing
 *    rules that apply with no language, below. "Größe" -> "größe", "ÉCOLE" ->
 *    "école", "ABC" -> "abc".
 *    - U+0130 (Turkish dotted capital I) lowers to "i" + U+0307 COMBINING DOT
 *      ABOVE (3 bytes): "İstanbul" -> "i̇stanbul", which does NOT equal
 *      "istanbul"; dotless ı (U+0131) stays ı; "I" is always "i" (no Turkish
 *      rule).
 *    - Σ (U+03A3) lowers to final ς (U+03C2) when, inside the token, skipping
 *      case-ignorable code points backwards from it reaches a cased code
 *      point, and skipping case-ignorable code points forwards reaches the end
 *      of the token or a code point that is not cased; otherwise to σ. So
 *      "ΟΔΟΣ" -> "οδος", "ΣΑ" -> "σα", a lone "Σ" -> "σ", and "ΟΔΟΣ_Α" ->
 *      "οδος", "α" (the token ends at "_"). This is Python's reading of
 *      Final_Sigma; it differs from the Unicode text (and libunistring's
 *      u8_tolower) only when a code point that is both cased and
 *      case-ignorable (U+0345, modifier letters such as U+02B0) is next to Σ.
 *    - No normalisation: precomposed "é" (U+00E9) and decomposed "e"+U+0301
 *      are different tokens; fullwidth "ＡＢ" -> "ａｂ", not "ab".
 *    - This is lowercasing, not case folding: "ß" stays "ß" (not "ss"), "ς"
 *      stays "ς".
 *    Cased, case-ignorable and the mappings are libunistring 1.0's tables,
 *    checked equal to Python 3.11's for every code point.
 *
 * 4. Length. A token longer than QR_TOK_MAX_BYTES (255) bytes after folding is
 *    cut to its longest prefix of at most 255 bytes that ends on a code point
 *    boundary (fold first, then cut; a mark may thus be separated from its
 *    base, and "İ" may keep only its "i"). Final sigma still looks at the
 *    whole token. The rest of the long word is dropped: it yields no further
 *    tokens and takes no positions.
 *
 * 5. Positions. The k-th token of a text (0-based, counting tokens only, not
 *    separators) has position k. Empty text, or text of separators only,
 *    gives no tokens.
 *
 * Oracle in Python 3.11 (bytes b):
 *    s = b.decode("utf-8", "replace"); toks = []; cur = None
 *    for ch in s:
 *        c = unicodedata.category(ch)[0]
 *        if c in "LN" or (c == "M" and cur is not None): cur = (cur or "") + ch
 *        else: cur is not None and toks.append(cur); cur = None
 *    cur is not None and toks.append(cur)
 *    toks = [cut255(t.lower().encode()) for t in toks]   # positions 0, 1, ...
 *    def cut255(u):  # u: bytes of valid UTF-8
 *        n = min(len(u), 255)
 *        while n < len(u) and u[n] & 0xC0 == 0x80: n -= 1
 *        return u[:n]
 *
 * Performance: ASCII runs through a 256-entry class table; lowercase ASCII
 * tokens point straight into the input (no copy). Non-ASCII code points go
 * through libunistring's tables. Nothing is allocated, ever; work per token
 * is linear in the token's length. Link with -lunistring.
 */
#ifndef QR_TOKENIZER_H
#define QR_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"

#define QR_TOK_MAX_BYTES 255

/* One token. `p` points either into the input text or into the tokenizer's
 * own buffer; it is valid until the next qr_tok_next/qr_tok_reset on the same
 * tokenizer (and, when it points into the input, while the input lives).
 * Not NUL-terminated. 1 <= n <= QR_TOK_MAX_BYTES. */
typedef struct qr_token {
    const char *p;
    uint32_t n;
    uint32_t pos; /* 0-based index of the token in the text */
} qr_token;

typedef struct qr_tokenizer {
    const unsigned char *cur, *end; /* unread part of the text */
    uint32_t pos;                   /* position of the next token */
    /* Tests only: route ASCII through the general Unicode path as well
     * (libunistring categories and lowercasing), the scalar twin of the ASCII
     * table. Set it after qr_tok_init; the result must not change. */
    int unicode_only;
    /* Keep tokens' case as written (an index whose analyzer does not fold
     * case). Set it after qr_tok_init. */
    int keep_case;
    char fold[QR_TOK_MAX_BYTES + 1]; /* folded bytes of the current token */
} qr_tokenizer;

/* Prepare a tokenizer (no text yet: qr_tok_next returns 0). Reusable across
 * any number of texts with qr_tok_reset. Allocates nothing. */
void qr_tok_init(qr_tokenizer *t);

/* Release the tokenizer (nothing is heap-allocated today; call it anyway). */
void qr_tok_free(qr_tokenizer *t);

/* Start tokenizing text[0, n), positions from 0. The text is borrowed: it must
 * stay unchanged while tokens are read. text may be NULL when n == 0. */
void qr_tok_reset(qr_tokenizer *t, const char *text, size_t n);

/* Next token into *out: returns 1, or 0 at the end of the text (and on every
 * later call). Cannot fail. */
int qr_tok_next(qr_tokenizer *t, qr_token *out);

/* Returned by qr_tok_analyze when the arena cannot allocate. */
#define QR_TOK_NOMEM ((size_t)-1)

/* Analyse one query string exactly as a body: writes its first `max` tokens
 * into out[0..], their bytes copied into arena `a` (so they outlive `text`),
 * with positions 0, 1, ... Returns the number written (at most max; a text of
 * n bytes has at most (n + 1) / 2 tokens, so max = (n + 1) / 2 is always
 * enough), or QR_TOK_NOMEM when the arena fails. */
size_t qr_tok_analyze(const char *text, size_t n, qr_arena *a, qr_token *out, size_t max);
/* The same with case kept as written when keep_case is 1. */
size_t qr_tok_analyze_case(const char *text, size_t n, int keep_case, qr_arena *a, qr_token *out,
                           size_t max);

#endif
