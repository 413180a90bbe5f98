/* nfa.c - the byte NFA builder the automaton front ends share
 * (aut_int.h): states, byte-range and epsilon edges, code point sets
 * compiled into UTF-8 byte sequences, strict UTF-8 decoding, pattern names
 * for messages. */
#include "automaton/aut_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- NFA builder ---- */

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, nc * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

void aut_nfa_init(aut_nfa *n)
{
    memset(n, 0, sizeof *n);
    aut_nfa_state(n); /* the sink, state 0 */
}

void aut_nfa_free(aut_nfa *n)
{
    free(n->edge);
    free(n->eps);
    free(n->accept);
    memset(n, 0, sizeof *n);
}

uint32_t aut_nfa_state(aut_nfa *n)
{
    if (n->full || n->oom)
        return 0;
    if (n->nstate >= QR_AUT_NFA_MAX_STATES) {
        n->full = 1;
        return 0;
    }
    size_t cap = n->capstate;
    if (grow((void **)&n->accept, &cap, (size_t)n->nstate + 1, 1)) {
        n->oom = 1;
        return 0;
    }
    n->capstate = (uint32_t)cap;
    n->accept[n->nstate] = 0;
    return n->nstate++;
}

static int edge_room(aut_nfa *n)
{
    if (n->full || n->oom)
        return 0;
    if (n->nedge + n->neps >= AUT_NFA_MAX_EDGES) {
        n->full = 1;
        return 0;
    }
    return 1;
}

void aut_nfa_bytes(aut_nfa *n, uint32_t from, uint8_t lo, uint8_t hi, uint32_t to)
{
    if (!edge_room(n) || !from || !to || lo > hi)
        return;
    if (grow((void **)&n->edge, &n->capedge, n->nedge + 1, sizeof *n->edge)) {
        n->oom = 1;
        return;
    }
    n->edge[n->nedge++] = (aut_edge){from, to, lo, hi};
}

void aut_nfa_eps(aut_nfa *n, uint32_t from, uint32_t to)
{
    if (!edge_room(n) || !from || !to || from == to)
        return;
    if (grow((void **)&n->eps, &n->capeps, n->neps + 1, sizeof *n->eps)) {
        n->oom = 1;
        return;
    }
    n->eps[n->neps++] = (aut_eps){from, to};
}

/* Compiling a code point set: the range is split until each piece is a
 * sequence of byte ranges (the classic utf8-ranges construction, as in RE2
 * and Rust's regex), and the pieces share their tails: an intermediate state
 * "bytes lo..hi then `tgt`" is made once per (lo, hi, tgt). */
typedef struct cps_ctx {
    aut_nfa *n;
    uint32_t from, to;
    uint64_t *mkey; /* (tgt << 16 | lo << 8 | hi) + 1, 0 = empty */
    uint32_t *mval;
    size_t mcap, mcount; /* mcap a power of two or 0 */
} cps_ctx;

static uint32_t tail_state(cps_ctx *c, uint8_t lo, uint8_t hi, uint32_t tgt)
{
    uint64_t key = (((uint64_t)tgt << 16) | ((uint64_t)lo << 8) | hi) + 1;
    if (c->mcount * 2 >= c->mcap) {
        size_t nc = c->mcap ? c->mcap * 2 : 64;
        uint64_t *k = calloc(nc, sizeof *k);
        uint32_t *v = malloc(nc * sizeof *v);
        if (!k || !v) {
            free(k);
            free(v);
            c->n->oom = 1;
            return 0;
        }
        for (size_t i = 0; i < c->mcap; i++) {
            if (!c->mkey[i])
                continue;
            size_t j = (size_t)(c->mkey[i] * 0x9E3779B97F4A7C15ull >> 20) & (nc - 1);
            while (k[j])
                j = (j + 1) & (nc - 1);
            k[j] = c->mkey[i];
            v[j] = c->mval[i];
        }
        free(c->mkey);
        free(c->mval);
        c->mkey = k;
        c->mval = v;
        c->mcap = nc;
    }
    size_t j = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (c->mcap - 1);
    while (c->mkey[j]) {
        if (c->mkey[j] == key)
            return c->mval[j];
        j = (j + 1) & (c->mcap - 1);
    }
    uint32_t st = aut_nfa_state(c->n);
    if (!st)
        return 0;
    aut_nfa_bytes(c->n, st, lo, hi, tgt);
    c->mkey[j] = key;
    c->mval[j] = st;
    c->mcount++;
    return st;
}

static int utf8_encode(uint32_t cp, uint8_t *b)
{
    if (cp < 0x80) {
        b[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        b[0] = (uint8_t)(0xC0 | (cp >> 6));
        b[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        b[0] = (uint8_t)(0xE0 | (cp >> 12));
        b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    b[0] = (uint8_t)(0xF0 | (cp >> 18));
    b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

static void cps_range(cps_ctx *c, uint32_t lo, uint32_t hi)
{
    if (lo > hi || c->n->full || c->n->oom)
        return;
    if (lo <= 0xDFFF && hi >= 0xD800) { /* surrogates are not characters */
        if (lo < 0xD800)
            cps_range(c, lo, 0xD7FF);
        if (hi > 0xDFFF)
            cps_range(c, 0xE000, hi);
        return;
    }
    static const uint32_t lenmax[3] = {0x7F, 0x7FF, 0xFFFF};
    for (int i = 0; i < 3; i++)
        if (lo <= lenmax[i] && hi > lenmax[i]) {
            cps_range(c, lo, lenmax[i]);
            cps_range(c, lenmax[i] + 1, hi);
            return;
        }
    if (hi < 0x80) {
        aut_nfa_bytes(c->n, c->from, (uint8_t)lo, (uint8_t)hi, c->to);
        return;
    }
    for (int i = 1; i < 4; i++) {
        uint32_t m = (1u << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            if (lo & m) {
                cps_range(c, lo, lo | m);
                cps_range(c, (lo | m) + 1, hi);
                return;
            }
            if ((hi & m) != m) {
                cps_range(c, lo, (hi & ~m) - 1);
                cps_range(c, hi & ~m, hi);
                return;
            }
        }
    }
    uint8_t a[4] = {0}, b[4] = {0};
    int len = utf8_encode(lo, a); /* hi has the same length here */
    utf8_encode(hi, b);
    uint32_t tgt = c->to;
    for (int j = len - 1; j >= 1 && tgt; j--)
        tgt = tail_state(c, a[j], b[j], tgt);
    if (tgt)
        aut_nfa_bytes(c->n, c->from, a[0], b[0], tgt);
}

static int range_cmp(const void *x, const void *y)
{
    const aut_range *a = x, *b = y;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

void aut_nfa_cps(aut_nfa *n, uint32_t from, const aut_range *r, size_t nr, uint32_t to)
{
    if (n->full || n->oom || !nr)
        return;
    aut_range *s = malloc(nr * sizeof *s);
    if (!s) {
        n->oom = 1;
        return;
    }
    memcpy(s, r, nr * sizeof *s);
    qsort(s, nr, sizeof *s, range_cmp);
    size_t m = 0;
    for (size_t i = 0; i < nr; i++) {
        if (s[i].lo > s[i].hi || s[i].lo > AUT_CP_MAX)
            continue;
        if (s[i].hi > AUT_CP_MAX)
            s[i].hi = AUT_CP_MAX;
        if (m && s[i].lo <= s[m - 1].hi + 1) {
            if (s[i].hi > s[m - 1].hi)
                s[m - 1].hi = s[i].hi;
        } else {
            s[m++] = s[i];
        }
    }
    cps_ctx c = {.n = n, .from = from, .to = to};
    for (size_t i = 0; i < m; i++)
        cps_range(&c, s[i].lo, s[i].hi);
    free(c.mkey);
    free(c.mval);
    free(s);
}

void aut_nfa_cp(aut_nfa *n, uint32_t from, uint32_t cp, uint32_t to)
{
    uint8_t b[4];
    int len = utf8_encode(cp, b);
    for (int i = 0; i < len - 1; i++) {
        uint32_t mid = aut_nfa_state(n);
        aut_nfa_bytes(n, from, b[i], b[i], mid);
        from = mid;
    }
    aut_nfa_bytes(n, from, b[len - 1], b[len - 1], to);
}

void aut_nfa_any(aut_nfa *n, uint32_t from, uint32_t to)
{
    aut_range all = {0, AUT_CP_MAX};
    aut_nfa_cps(n, from, &all, 1, to);
}

size_t aut_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (!n)
        return 0;
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c < 0xC2)
        return 0;
    else if (c < 0xE0)
        len = 2;
    else if (c < 0xF0) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c < 0xF5) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    uint32_t v = c & (0xFFu >> (len + 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    *cp = v;
    return len;
}

void aut_describe(char *out, size_t cap, const char *kind, const char *p, size_t n)
{
    size_t cut = n > 100 ? 100 : n;
    while (cut < n && cut > 0 && ((unsigned char)p[cut] & 0xC0) == 0x80)
        cut--; /* do not split a character */
    snprintf(out, cap, "%s \"%.*s%s\"", kind, (int)cut, p, cut < n ? "..." : "");
}
