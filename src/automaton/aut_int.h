/* aut_int.h - internals shared by the automaton front ends
 * (regexp.c: regexp and LIKE; fuzzy.c: Levenshtein; prefix.c) and
 * the core (nfa.c: the NFA builder; dfa.c: finalisation, lazy DFA).
 *
 * A front end builds an aut_nfa: byte-range edges and epsilon edges between
 * numbered states; code point sets are compiled into UTF-8 byte sequences by
 * aut_nfa_cps. State 0 of every builder is a non-accepting sink; once the
 * builder passes its size limit it sets `full`, new states alias state 0 and
 * new edges are dropped, so memory stays bounded and the front end reports
 * "too large". Include only from src/automaton/.
 */
#ifndef QR_AUTOMATON_INT_H
#define QR_AUTOMATON_INT_H

#include <stddef.h>
#include <stdint.h>

#include "automaton/automaton.h"
#include "util/err.h"

#define AUT_CP_MAX        0x10FFFFu
#define AUT_NFA_MAX_EDGES (8u * QR_AUT_NFA_MAX_STATES)

typedef struct aut_edge {
    uint32_t from, to;
    uint8_t lo, hi; /* byte range, inclusive */
} aut_edge;

typedef struct aut_eps {
    uint32_t from, to;
} aut_eps;

typedef struct aut_range {
    uint32_t lo, hi; /* code points, inclusive */
} aut_range;

typedef struct aut_nfa {
    aut_edge *edge;
    size_t nedge, capedge;
    aut_eps *eps;
    size_t neps, capeps;
    uint8_t *accept; /* per state */
    uint32_t nstate, capstate;
    int full; /* size limit passed */
    int oom;  /* an allocation failed */
} aut_nfa;

void aut_nfa_init(aut_nfa *n); /* creates the sink, state 0 */
void aut_nfa_free(aut_nfa *n);
uint32_t aut_nfa_state(aut_nfa *n);
void aut_nfa_bytes(aut_nfa *n, uint32_t from, uint8_t lo, uint8_t hi, uint32_t to);
void aut_nfa_eps(aut_nfa *n, uint32_t from, uint32_t to);
/* from -> to on any one code point in the union of r[0..nr) (any order,
 * overlaps fine; surrogates are never matched). */
void aut_nfa_cps(aut_nfa *n, uint32_t from, const aut_range *r, size_t nr, uint32_t to);
void aut_nfa_cp(aut_nfa *n, uint32_t from, uint32_t cp, uint32_t to);
void aut_nfa_any(aut_nfa *n, uint32_t from, uint32_t to); /* any code point */
static inline void aut_nfa_accept(aut_nfa *n, uint32_t s)
{
    if (s && s < n->nstate)
        n->accept[s] = 1;
}

/* Strict UTF-8: returns the length (1..4) of the well-formed character at
 * s[0..n) and its code point, or 0 when malformed or truncated. */
size_t aut_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* `kind "pattern"` for messages, the pattern cut at 100 bytes. */
void aut_describe(char *out, size_t cap, const char *kind, const char *p, size_t n);

/* Build the automaton from a finished NFA (start state `start`); the NFA is
 * copied, the caller still frees it. `desc` names the pattern in later
 * messages. NULL with QR_E_NOMEM in e when memory runs out. */
qr_aut *aut_from_nfa(const aut_nfa *n, uint32_t start, const char *desc, qr_err *e);

#endif
