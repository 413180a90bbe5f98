/* prefix.c - the prefix automaton: the literal bytes, then any byte. */
#include "automaton/aut_int.h"

qr_aut *qr_aut_prefix(const char *p, size_t n, qr_err *e)
{
    char desc[160];
    aut_describe(desc, sizeof desc, "prefix", p, n);
    aut_nfa nfa;
    aut_nfa_init(&nfa);
    uint32_t start = aut_nfa_state(&nfa), s = start;
    for (size_t i = 0; i < n; i++) {
        uint32_t t = aut_nfa_state(&nfa);
        aut_nfa_bytes(&nfa, s, (uint8_t)p[i], (uint8_t)p[i], t);
        s = t;
    }
    aut_nfa_bytes(&nfa, s, 0, 255, s);
    aut_nfa_accept(&nfa, s);
    qr_aut *a = NULL;
    if (nfa.oom)
        qr_errf(e, QR_E_NOMEM, "%s: out of memory building its automaton", desc);
    else if (nfa.full)
        qr_errf(e, QR_E_TOO_LONG, "%s: too long (%zu bytes)", desc, n);
    else
        a = aut_from_nfa(&nfa, start, desc, e);
    aut_nfa_free(&nfa);
    return a;
}
