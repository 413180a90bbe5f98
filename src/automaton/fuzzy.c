/* fuzzy.c - the fuzzy front end: a Levenshtein NFA for the
 * Damerau-Levenshtein distance in its optimal-string-alignment form (as
 * Lucene and SereneDB), over code points, handed to dfa.c to be
 * determinised lazily over bytes.
 *
 * State S(i, e): the first i characters of the term are aligned with what
 * was read, at a cost of e edits. From S(i, e):
 *   term[i]            -> S(i+1, e)      match
 *   any character      -> S(i, e+1)      insertion
 *   any character      -> S(i+1, e+1)    substitution
 *   nothing (epsilon)  -> S(i+1, e+1)    deletion
 *   term[i+1] term[i]  -> S(i+2, e+1)    transposition, through T(i, e)
 * S(m, e) accepts for every e <= k. "Any character" goes through one shared
 * entry state per target, A(i, e), so its UTF-8 byte paths exist once.
 * A transposed pair cannot be edited again, which is exactly OSA.
 */
#include "automaton/aut_int.h"

#include <stdlib.h>

qr_aut *qr_aut_fuzzy(const char *term, size_t n, unsigned max_edits, qr_err *e)
{
    char desc[160];
    aut_describe(desc, sizeof desc, "fuzzy", term, n);
    if (max_edits > 2) {
        qr_errf(e, QR_E_ARGS, "%s: %u edits not supported (0, 1 or 2)", desc, max_edits);
        return NULL;
    }
    if (n > QR_AUT_FUZZY_MAX_BYTES) {
        qr_errf(e, QR_E_TOO_LONG, "%s: term too long (%zu bytes, at most %d)", desc, n,
                QR_AUT_FUZZY_MAX_BYTES);
        return NULL;
    }
    uint32_t cp[QR_AUT_FUZZY_MAX_BYTES];
    size_t m = 0;
    for (size_t pos = 0; pos < n;) {
        size_t len = aut_utf8_decode((const unsigned char *)term + pos, n - pos, &cp[m]);
        if (!len) {
            qr_errf(e, QR_E_INVALID_TEXT, "%s: invalid UTF-8 at byte %zu", desc, pos);
            return NULL;
        }
        m++;
        pos += len;
    }
    uint32_t k = max_edits, w = k + 1;
    aut_nfa nfa;
    aut_nfa_init(&nfa);
    /* S(i, e) = S0 + i*w + e, A(i, e) = A0 + i*w + e (e >= 1 used), T likewise */
    uint32_t S0 = nfa.nstate;
    for (uint32_t i = 0; i < (m + 1) * w; i++)
        aut_nfa_state(&nfa);
    uint32_t A0 = nfa.nstate;
    for (uint32_t i = 0; i < (m + 1) * w; i++)
        aut_nfa_state(&nfa);
    uint32_t T0 = nfa.nstate;
    for (uint32_t i = 0; i < (m + 1) * w; i++)
        aut_nfa_state(&nfa);
    for (uint32_t i = 0; i <= m; i++)
        for (uint32_t d = 0; d <= k; d++) {
            uint32_t s = S0 + i * w + d;
            if (d >= 1)
                aut_nfa_any(&nfa, A0 + i * w + d, s);
            if (i == m)
                aut_nfa_accept(&nfa, s);
            if (i < m)
                aut_nfa_cp(&nfa, s, cp[i], s + w);
            if (d == k)
                continue;
            aut_nfa_eps(&nfa, s, A0 + i * w + d + 1); /* insertion */
            if (i < m) {
                aut_nfa_eps(&nfa, s, A0 + (i + 1) * w + d + 1); /* substitution */
                aut_nfa_eps(&nfa, s, s + w + 1);                /* deletion */
            }
            if (i + 1 < m && cp[i] != cp[i + 1]) {
                uint32_t t = T0 + i * w + d;
                aut_nfa_cp(&nfa, s, cp[i + 1], t);
                aut_nfa_cp(&nfa, t, cp[i], S0 + (i + 2) * w + d + 1);
            }
        }
    qr_aut *a = NULL;
    if (nfa.oom || nfa.full) /* full cannot happen: 255 bytes give < 10k states */
        qr_errf(e, QR_E_NOMEM, "%s: out of memory", desc);
    else
        a = aut_from_nfa(&nfa, S0, desc, e);
    aut_nfa_free(&nfa);
    return a;
}
