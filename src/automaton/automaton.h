/* automaton.h - byte-level automata for multi-term queries: prefix, regexp,
 * LIKE and fuzzy (Damerau-Levenshtein) patterns that the term dictionary
 * intersects with its sorted terms, pruning every subtree whose state is dead.
 *
 * Every kind compiles to one byte NFA (code points compiled to UTF-8 byte
 * sequences) that is determinised lazily: a DFA state is created the first
 * time a byte leads to it and cached, so a step on a known transition is one
 * table lookup. The cache is bounded (QR_AUT_CACHE_BYTES); see qr_aut_error.
 *
 * Walking protocol (the term dictionary): keep one state per depth,
 *
 *     st[0] = qr_aut_start(a);
 *     for each term t (sorted), sharing `lcp` bytes with the previous one:
 *         for (d = lcp; d < len; d++)
 *             if (!(st[d + 1] = qr_aut_step(a, st[d], t[d]))) -> skip every
 *                 term that starts with t[0..d] (no continuation can match)
 *         if (qr_aut_accepts(a, st[len])) -> t matches
 *     if (qr_aut_error(a, &e)) -> fail the query (the cache overflowed)
 *
 * qr_aut_walk() does the inner loop in one call. States are plain integers:
 * they stay valid while the automaton lives, whatever the cache does.
 *
 * Text and matching. Terms and patterns are UTF-8. Regexp, LIKE and fuzzy
 * automata match code points and accept only well-formed UTF-8 (shortest
 * form, no surrogates, <= U+10FFFF); a term with malformed bytes never
 * matches them. Prefix automata compare bytes only. Matching is exact and
 * case-sensitive (terms are lowercased by the tokenizer; lowercase patterns
 * before compiling when the user's text should be analysed like the body).
 *
 * Regexp syntax (whole-term match, as if wrapped in ^...$):
 *   x          a literal character (any UTF-8 character not listed below)
 *   .          any one character (code point)
 *   [abc]      one of a, b, c        [a-z]  a range of code points
 *   [^a-z]     any character not in the set; inside [...]: `]` first is a
 *              literal, `-` first or last is a literal, `\` escapes,
 *              \d \w \s \D \W \S may appear
 *   \d \w \s   digit [0-9]; word [0-9A-Za-z_]; space [ \t\n\v\f\r] (ASCII)
 *   \D \W \S   their complements (any other code point)
 *   \.  \\     a backslash before any ASCII punctuation or space makes it a
 *              literal: \. \\ \* \+ \? \( \) \[ \] \{ \} \| \^ \$ \-
 *   e*  e+  e? zero or more, one or more, zero or one
 *   e{m} e{m,} e{m,n}   m to n repetitions, 0 <= m <= n <= 1000
 *              a `?` right after a repetition (lazy in Perl) is accepted
 *              and changes nothing; any other stacked repetition (a**) is
 *              an error, write (a*)* instead
 *   e|f        alternation (an empty branch matches the empty string)
 *   (e)        grouping, nested at most 100 deep
 *   ^ ... $    optional: a `^` as the first byte and a `$` as the last byte
 *              are accepted and ignored (matching is always whole-term);
 *              anywhere else they are errors (escape them as \^ \$)
 * Errors name the pattern and the 0-based byte where the problem was found:
 *   regexp "a(b": missing ')' at byte 3
 *
 * LIKE syntax (whole-term): % any run of characters (also empty), _ exactly
 * one character, \x the character x literally (so \% \_ \\), anything else
 * literal. A trailing lone backslash is an error.
 *
 * Fuzzy: terms within max_edits (0, 1 or 2) Damerau-Levenshtein edits in the
 * optimal string alignment sense (insert, delete, substitute one character,
 * or transpose two adjacent ones; no substring edited twice), counted on
 * code points: the distance Lucene's and SereneDB's fuzzy queries use. The
 * term is at most QR_AUT_FUZZY_MAX_BYTES bytes.
 *
 * Threads: an automaton is immutable after compile except its DFA cache, so
 * it is used by one thread at a time; compile one per query per thread.
 */
#ifndef QR_AUTOMATON_H
#define QR_AUTOMATON_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "util/qctx.h"

/* SQLSTATE codes of pattern errors (PostgreSQL's). Besides these: 22P02
 * (QR_E_INVALID_TEXT) malformed UTF-8 in a LIKE pattern or fuzzy term, 22023
 * (QR_E_ARGS) unsupported max_edits, 54000 (QR_E_TOO_LONG) a pattern too
 * large to compile, a fuzzy term too long, a DFA cache overflow. */
#define QR_E_INVALID_REGEXP "2201B" /* malformed regexp (syntax or UTF-8) */
#define QR_E_INVALID_ESCAPE "22025" /* LIKE pattern ending in a backslash */

#define QR_AUT_FUZZY_MAX_BYTES 255         /* longest fuzzy term */
#define QR_AUT_REPEAT_MAX      1000        /* largest {m,n} count */
#define QR_AUT_NFA_MAX_STATES  100000      /* compiled pattern size limit */
#define QR_AUT_CACHE_BYTES     (16u << 20) /* default DFA cache limit */

typedef struct qr_aut qr_aut;
typedef uint32_t qr_aut_state; /* 0 = dead: no continuation can be accepted */

/* Compile an automaton. Each returns a new automaton that the caller frees
 * with qr_aut_free, or NULL with `e` filled (pattern errors name the pattern
 * and the byte position; QR_E_NOMEM when memory runs out). Patterns need not
 * be NUL-terminated and are not referenced after the call. */
qr_aut *qr_aut_prefix(const char *p, size_t n, qr_err *e);
qr_aut *qr_aut_regexp(const char *re, size_t n, qr_err *e);
qr_aut *qr_aut_like(const char *pat, size_t n, qr_err *e);
qr_aut *qr_aut_fuzzy(const char *term, size_t n, unsigned max_edits, qr_err *e);
void qr_aut_free(qr_aut *a); /* NULL is fine */

/* The state before any byte; 0 when the automaton accepts nothing. */
qr_aut_state qr_aut_start(qr_aut *a);
/* The state after `byte`, or 0 when no string continuing this way can be
 * accepted (the dead state is exact, so pruning on it loses nothing). `s`
 * is 0 or a state this automaton returned; stepping from 0 gives 0. A cached transition is a table
 * lookup; a new one builds a DFA state. If that would pass the cache limit, the step returns 0 and
 * the automaton records an error (see qr_aut_error). */
qr_aut_state qr_aut_step(qr_aut *a, qr_aut_state s, unsigned char byte);
/* The smallest byte >= from with a live transition from s, or -1: where an
 * automaton walk over a sorted dictionary goes next. Bytes of one class
 * (most of them) share a transition, so runs of them cost one step. */
int qr_aut_next_byte(qr_aut *a, qr_aut_state s, unsigned from);
/* 1 when the bytes that led to `s` form an accepted term. */
int qr_aut_accepts(const qr_aut *a, qr_aut_state s);
/* Step through bytes[0..n) from `s`, storing the state after byte i in
 * out[i]. Stops at the first dead state: returns the number of bytes after
 * which the state is still live (n when it never died; when it returns
 * i < n, out[i] == 0 and out[i+1..] are untouched). */
size_t qr_aut_walk(qr_aut *a, qr_aut_state s, const unsigned char *bytes, size_t n,
                   qr_aut_state *out);
/* 1 when the whole of s[0..n) is accepted. Always exact: when the DFA cache
 * is full it simulates the NFA instead. */
int qr_aut_matches(qr_aut *a, const char *s, size_t n);

/* The bytes every accepted term starts with ("ord" for ord.*, "" when
 * none), found from the automaton itself; the dictionary can seek straight
 * to it and stop once terms no longer start with it. *p points into `a`
 * (valid until qr_aut_free); may end inside a multi-byte character; at most
 * 1024 bytes (a longer one is cut, which is still a valid seek key). */
size_t qr_aut_literal_prefix(const qr_aut *a, const char **p);

/* The bytes every accepted term contains: bit b % 64 of out[b / 64] for
 * byte b (only bytes the pattern fixes; a character class requires none
 * of its members). A dictionary block whose byte mask lacks one of them
 * holds no match: /.*nnec.* / skips every block without n, e and c, as
 * LIKE '%nnec%' does. Exact for the patterns the front ends build (worked
 * out from the NFA at compile time); none past the size budget. */
void qr_aut_required_bytes(const qr_aut *a, uint64_t out[4]);

/* Lengths. The dictionary orders terms by their length in code points
 * (bytes that are not UTF-8 continuation bytes 0x80..0xBF, whatever the
 * bytes) first, so a walk takes one length at a time and, knowing it, can
 * drop every prefix no accepted term of that length starts with: /c.che/
 * reads only 5-character terms, cahce~1 at length 4 only those starting
 * with what a deletion leaves ("a", "c"), not every hex piece of an id.
 * Lengths are tracked up to QR_AUT_LEN_MAX code points (no term is longer:
 * QR_MAX_TERM bytes); none above is ever reported. A pattern too large for
 * its lengths to be worked out (many thousands of NFA states) reports every
 * length 0..QR_AUT_LEN_MAX for every live state: walks are then as without.
 *
 * 1 when some accepted term goes on from the bytes that led to s with
 * exactly `cps` more code points; 0 when none does (always for s = 0). */
#define QR_AUT_LEN_MAX 255u
int qr_aut_can_end(const qr_aut *a, qr_aut_state s, uint32_t cps);
/* The smallest cps >= from for which qr_aut_can_end(a, s, cps), or
 * UINT32_MAX when there is none: from the start state, the next term
 * length the walk needs. */
uint32_t qr_aut_next_len(const qr_aut *a, qr_aut_state s, uint32_t from);
/* qr_aut_walk for a term of `len` code points: cps[0] holds those before
 * bytes[0]; stores the state after byte i in out[i] and the code points so
 * far in cps[i + 1]; stops at the first state that is dead or can no
 * longer end in `len` (returns its i), else returns n. */
size_t qr_aut_walk_ending(qr_aut *a, qr_aut_state s, const unsigned char *bytes, size_t n,
                          uint32_t len, qr_aut_state *out, uint32_t *cps);
/* As qr_aut_next_byte, for a term that has `cps` code points left after
 * the bytes that led to s: the smallest byte b >= from whose state can end
 * with the code points left after b (cps - 1, or cps for a continuation
 * byte). -1 when none. */
int qr_aut_next_byte_ending(qr_aut *a, qr_aut_state s, unsigned from, uint32_t cps);

/* 0 while every step so far was exact. -1 with `e` filled (QR_E_TOO_LONG)
 * once a step could not build a state within the cache limit and returned 0
 * instead; results of that walk are incomplete and the query must fail.
 * Pathological regexps only (e.g. (a|b)*a(a|b){20} over a big dictionary). */
int qr_aut_error(const qr_aut *a, qr_err *e);
/* Change the cache limit (bytes, default QR_AUT_CACHE_BYTES); mainly for
 * tests. A limit below what is already used takes effect for new states. */
void qr_aut_set_cache_limit(qr_aut *a, size_t bytes);
/* Charge the DFA cache to a query's budget from now on (what it holds now,
 * then every state it builds; released by qr_aut_free). -1 when what it
 * holds does not fit. A step the budget cannot pay for fails like a full
 * cache, and qr_aut_error then reports QR_E_NOMEM. */
int qr_aut_set_ctx(qr_aut *a, qr_qctx *ctx);
/* Number of DFA states built so far (the dead state included); for stats. */
size_t qr_aut_dfa_states(const qr_aut *a);

#endif
