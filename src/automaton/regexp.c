/* regexp.c - the regexp and LIKE front ends. A regexp (syntax in
 * automaton.h) is parsed by recursive descent into a small tree in an arena,
 * then compiled into a byte NFA (aut_int.h) by Thompson's
 * construction: a counted repetition copies its body once per count, loops
 * hang only on fresh states, so branches may share their entry and exit
 * states. A LIKE pattern needs no tree and goes straight to the NFA. Errors
 * name the pattern and the 0-based byte where they were found.
 */
#include "automaton/aut_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"

#define RX_MAX_DEPTH 100

enum { RX_EMPTY, RX_SET, RX_CAT, RX_ALT, RX_REP };

typedef struct rx_node {
    int op;
    int min, max;         /* RX_REP; max < 0 = unbounded */
    size_t pos;           /* byte offset of the construct in the pattern */
    struct rx_node **kid; /* RX_CAT, RX_ALT: nkid children; RX_REP: kid[0] */
    size_t nkid;
    aut_range *r; /* RX_SET */
    size_t nr;
} rx_node;

typedef struct rx_parser {
    const unsigned char *s;
    size_t n, pos;
    int depth;
    qr_arena ar;
    const char *desc;
    qr_err *e;
    int failed;
} rx_parser;

typedef struct rvec {
    aut_range *v;
    size_t n, cap;
} rvec;

typedef struct nvec {
    rx_node **v;
    size_t n, cap;
} nvec;

static const aut_range R_DIGIT[] = {{'0', '9'}};
static const aut_range R_WORD[] = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
static const aut_range R_SPACE[] = {{'\t', '\r'}, {' ', ' '}};
static const aut_range R_ANY[] = {{0, AUT_CP_MAX}};

__attribute__((format(printf, 4, 5))) static void *fail(rx_parser *p, const char *code, size_t pos,
                                                        const char *fmt, ...)
{
    char m[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (!p->failed) /* the first error wins */
        qr_errf(p->e, code, "%s: %s at byte %zu", p->desc, m, pos);
    p->failed = 1;
    return NULL;
}

static void *oom(rx_parser *p)
{
    if (!p->failed)
        qr_errf(p->e, QR_E_NOMEM, "%s: out of memory", p->desc);
    p->failed = 1;
    return NULL;
}

static int rv_add(rvec *r, uint32_t lo, uint32_t hi)
{
    if (r->n == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 16;
        aut_range *v = realloc(r->v, nc * sizeof *v);
        if (!v)
            return -1;
        r->v = v;
        r->cap = nc;
    }
    r->v[r->n++] = (aut_range){lo, hi};
    return 0;
}

static int range_lo_cmp(const void *x, const void *y)
{
    const aut_range *a = x, *b = y;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Sort and merge overlapping or adjacent ranges. */
static void rv_normalize(rvec *r)
{
    if (r->n < 2)
        return;
    qsort(r->v, r->n, sizeof *r->v, range_lo_cmp);
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (m && r->v[i].lo <= r->v[m - 1].hi + 1) {
            if (r->v[i].hi > r->v[m - 1].hi)
                r->v[m - 1].hi = r->v[i].hi;
        } else {
            r->v[m++] = r->v[i];
        }
    }
    r->n = m;
}

/* Complement of a normalised set within 0..AUT_CP_MAX, into out. */
static int rv_complement(const aut_range *v, size_t n, rvec *out)
{
    uint32_t next = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].lo > next && rv_add(out, next, v[i].lo - 1))
            return -1;
        next = v[i].hi + 1;
    }
    if (next <= AUT_CP_MAX && rv_add(out, next, AUT_CP_MAX))
        return -1;
    return 0;
}

static int nv_push(nvec *v, rx_node *x)
{
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 8;
        rx_node **q = realloc(v->v, nc * sizeof *q);
        if (!q)
            return -1;
        v->v = q;
        v->cap = nc;
    }
    v->v[v->n++] = x;
    return 0;
}

static rx_node *node(rx_parser *p, int op, size_t pos)
{
    rx_node *x = qr_arena_alloc(&p->ar, sizeof *x);
    if (!x)
        return oom(p);
    memset(x, 0, sizeof *x);
    x->op = op;
    x->pos = pos;
    return x;
}

static rx_node *set_node(rx_parser *p, size_t pos, const aut_range *r, size_t nr)
{
    rx_node *x = node(p, RX_SET, pos);
    if (!x)
        return NULL;
    x->r = qr_arena_memdup(&p->ar, r, nr * sizeof *r);
    if (!x->r)
        return oom(p);
    x->nr = nr;
    return x;
}

/* The set of a class escape letter (d w s D W S), or NULL. */
static const aut_range *class_escape(unsigned char c, size_t *n, int *neg)
{
    *neg = c == 'D' || c == 'W' || c == 'S';
    switch (c | 0x20) {
    case 'd':
        *n = 1;
        return R_DIGIT;
    case 'w':
        *n = sizeof R_WORD / sizeof *R_WORD;
        return R_WORD;
    case 's':
        *n = sizeof R_SPACE / sizeof *R_SPACE;
        return R_SPACE;
    }
    return NULL;
}

/* One character or escape at p->pos, inside or outside a class. Returns 1
 * with *cp for a single character, 2 with the ranges added to `set` for a
 * class escape, 0 after an error. */
static int parse_char(rx_parser *p, uint32_t *cp, rvec *set)
{
    size_t at = p->pos;
    if (p->s[at] == '\\') {
        if (at + 1 >= p->n) {
            fail(p, QR_E_INVALID_REGEXP, at, "trailing backslash");
            return 0;
        }
        unsigned char c = p->s[at + 1];
        size_t nr;
        int neg;
        const aut_range *r = class_escape(c, &nr, &neg);
        if (r) {
            p->pos += 2;
            int bad = neg ? rv_complement(r, nr, set) : 0;
            for (size_t i = 0; !neg && i < nr && !bad; i++)
                bad = rv_add(set, r[i].lo, r[i].hi);
            if (bad)
                oom(p);
            return bad ? 0 : 2;
        }
        if (c < 0x80 && ((unsigned)((c | 0x20) - 'a') < 26u || (unsigned)(c - '0') < 10u)) {
            fail(p, QR_E_INVALID_REGEXP, at, "unknown escape \\%c", c);
            return 0;
        }
        at++;
    }
    size_t len = aut_utf8_decode(p->s + at, p->n - at, cp);
    if (!len) {
        fail(p, QR_E_INVALID_REGEXP, at, "invalid UTF-8");
        return 0;
    }
    p->pos = at + len;
    return 1;
}

static rx_node *parse_class(rx_parser *p)
{
    size_t open = p->pos++;
    int neg = 0, first = 1;
    if (p->pos < p->n && p->s[p->pos] == '^') {
        neg = 1;
        p->pos++;
    }
    rvec rv = {0}, comp = {0};
    rx_node *x = NULL;
    for (;;) {
        if (p->pos >= p->n) {
            fail(p, QR_E_INVALID_REGEXP, p->n, "missing ']'");
            goto out;
        }
        if (p->s[p->pos] == ']' && !first) {
            p->pos++;
            break;
        }
        first = 0;
        size_t at = p->pos;
        uint32_t lo, hi;
        int k = parse_char(p, &lo, &rv);
        if (!k)
            goto out;
        if (k == 2)
            continue;
        hi = lo;
        if (p->pos + 1 < p->n && p->s[p->pos] == '-' && p->s[p->pos + 1] != ']') {
            p->pos++;
            rvec dummy = {0};
            int k2 = parse_char(p, &hi, &dummy);
            free(dummy.v);
            if (!k2)
                goto out;
            if (k2 == 2 || hi < lo) {
                fail(p, QR_E_INVALID_REGEXP, at, "bad class range %.*s", (int)(p->pos - at),
                     (const char *)p->s + at);
                goto out;
            }
        }
        if (rv_add(&rv, lo, hi)) {
            oom(p);
            goto out;
        }
    }
    rv_normalize(&rv);
    if (neg) {
        if (rv_complement(rv.v, rv.n, &comp)) {
            oom(p);
            goto out;
        }
        x = set_node(p, open, comp.v, comp.n);
    } else {
        x = set_node(p, open, rv.v, rv.n);
    }
out:
    free(rv.v);
    free(comp.v);
    return x;
}

static rx_node *parse_alt(rx_parser *p);

static rx_node *parse_atom(rx_parser *p)
{
    size_t at = p->pos;
    unsigned char c = p->s[at];
    switch (c) {
    case '(': {
        if (++p->depth > RX_MAX_DEPTH)
            return fail(p, QR_E_INVALID_REGEXP, at, "groups nested deeper than %d", RX_MAX_DEPTH);
        p->pos++;
        rx_node *x = parse_alt(p);
        if (!x)
            return NULL;
        if (p->pos >= p->n || p->s[p->pos] != ')')
            return fail(p, QR_E_INVALID_REGEXP, p->pos, "missing ')'");
        p->pos++;
        p->depth--;
        return x;
    }
    case '[':
        return parse_class(p);
    case '.':
        p->pos++;
        return set_node(p, at, R_ANY, 1);
    case '^':
    case '$':
        if ((c == '^' && at == 0) || (c == '$' && at + 1 == p->n)) {
            p->pos++;
            return node(p, RX_EMPTY, at);
        }
        return fail(p, QR_E_INVALID_REGEXP, at, "'%c' is only allowed at the %s (write \\%c)", c,
                    c == '^' ? "start" : "end", c);
    case '*':
    case '+':
    case '?':
    case '{':
        return fail(p, QR_E_INVALID_REGEXP, at, "nothing to repeat");
    default: {
        rvec rv = {0};
        uint32_t cp;
        int k = parse_char(p, &cp, &rv);
        rx_node *x = NULL;
        if (k == 1)
            x = set_node(p, at, &(aut_range){cp, cp}, 1);
        else if (k == 2)
            x = set_node(p, at, rv.v, rv.n);
        free(rv.v);
        return x;
    }
    }
}

/* Digits at p->pos (at least one), saturating; -1 when there are none. */
static long parse_count(rx_parser *p)
{
    long v = -1;
    while (p->pos < p->n && (unsigned)(p->s[p->pos] - '0') < 10u) {
        v = (v < 0 ? 0 : v) * 10 + (p->s[p->pos++] - '0');
        if (v > 1000000)
            v = 1000000;
    }
    return v;
}

static int is_quant(unsigned char c) { return c == '*' || c == '+' || c == '?' || c == '{'; }

static rx_node *parse_rep(rx_parser *p)
{
    rx_node *x = parse_atom(p);
    int nq = 0, lazy = 0;
    while (x && p->pos < p->n && is_quant(p->s[p->pos])) {
        size_t at = p->pos;
        unsigned char c = p->s[p->pos++];
        if (nq == 1 && c == '?' && !lazy) {
            lazy = 1; /* Perl's lazy marker: the same language */
            continue;
        }
        if (nq)
            return fail(p, QR_E_INVALID_REGEXP, at, "stacked repetition (use a group)");
        long mn = c == '+', mx = c == '?' ? 1 : -1;
        if (c == '{') {
            mn = parse_count(p);
            mx = mn;
            if (mn >= 0 && p->pos < p->n && p->s[p->pos] == ',') {
                p->pos++;
                mx = parse_count(p);
            }
            if (mn < 0 || p->pos >= p->n || p->s[p->pos] != '}')
                return fail(p, QR_E_INVALID_REGEXP, at, "bad repetition count");
            p->pos++;
            if (mn > QR_AUT_REPEAT_MAX || mx > QR_AUT_REPEAT_MAX)
                return fail(p, QR_E_INVALID_REGEXP, at, "repetition count over %d",
                            QR_AUT_REPEAT_MAX);
            if (mx >= 0 && mx < mn)
                return fail(p, QR_E_INVALID_REGEXP, at, "repetition range {%ld,%ld} is reversed",
                            mn, mx);
        }
        rx_node *r = node(p, RX_REP, at);
        if (!r)
            return NULL;
        r->kid = qr_arena_alloc(&p->ar, sizeof *r->kid);
        if (!r->kid)
            return oom(p);
        r->kid[0] = x;
        r->nkid = 1;
        r->min = (int)mn;
        r->max = (int)mx;
        x = r;
        nq = 1;
    }
    return x;
}

static rx_node *list_node(rx_parser *p, int op, size_t pos, nvec *v)
{
    if (v->n == 1)
        return v->v[0];
    rx_node *x = node(p, v->n ? op : RX_EMPTY, pos);
    if (x && v->n) {
        x->kid = qr_arena_memdup(&p->ar, v->v, v->n * sizeof *v->v);
        if (!x->kid)
            return oom(p);
        x->nkid = v->n;
    }
    return x;
}

static rx_node *parse_cat(rx_parser *p)
{
    size_t at = p->pos;
    nvec v = {0};
    rx_node *x = NULL;
    while (p->pos < p->n && p->s[p->pos] != '|' && p->s[p->pos] != ')') {
        rx_node *k = parse_rep(p);
        if (!k)
            goto out;
        if (k->op != RX_EMPTY && nv_push(&v, k)) {
            oom(p);
            goto out;
        }
    }
    x = list_node(p, RX_CAT, at, &v);
out:
    free(v.v);
    return x;
}

static rx_node *parse_alt(rx_parser *p)
{
    size_t at = p->pos;
    nvec v = {0};
    rx_node *x = NULL;
    for (;;) {
        rx_node *k = parse_cat(p);
        if (!k)
            goto out;
        if (nv_push(&v, k)) {
            oom(p);
            goto out;
        }
        if (p->pos >= p->n || p->s[p->pos] != '|')
            break;
        p->pos++;
    }
    x = list_node(p, RX_ALT, at, &v);
out:
    free(v.v);
    return x;
}

/* Wire x between states from and to. On passing the size limit, *bigpos
 * becomes the outermost repetition being expanded. */
static void compile(aut_nfa *n, const rx_node *x, uint32_t from, uint32_t to, size_t *bigpos)
{
    if (n->full || n->oom)
        return;
    switch (x->op) {
    case RX_EMPTY:
        aut_nfa_eps(n, from, to);
        break;
    case RX_SET:
        aut_nfa_cps(n, from, x->r, x->nr, to);
        break;
    case RX_CAT: {
        uint32_t cur = from;
        for (size_t i = 0; i < x->nkid; i++) {
            uint32_t nxt = i + 1 == x->nkid ? to : aut_nfa_state(n);
            compile(n, x->kid[i], cur, nxt, bigpos);
            cur = nxt;
        }
        break;
    }
    case RX_ALT:
        for (size_t i = 0; i < x->nkid; i++)
            compile(n, x->kid[i], from, to, bigpos);
        break;
    case RX_REP: {
        uint32_t cur = from;
        for (int i = 0; i < x->min && !n->full; i++) {
            uint32_t nxt = aut_nfa_state(n);
            compile(n, x->kid[0], cur, nxt, bigpos);
            cur = nxt;
        }
        if (x->max < 0) {
            uint32_t loop = aut_nfa_state(n); /* fresh: the only state with a back edge */
            aut_nfa_eps(n, cur, loop);
            compile(n, x->kid[0], loop, loop, bigpos);
            cur = loop;
        } else {
            for (int i = x->min; i < x->max && !n->full; i++) {
                uint32_t nxt = aut_nfa_state(n);
                aut_nfa_eps(n, cur, to);
                compile(n, x->kid[0], cur, nxt, bigpos);
                cur = nxt;
            }
        }
        aut_nfa_eps(n, cur, to);
        if (n->full)
            *bigpos = x->pos;
        break;
    }
    }
}

qr_aut *qr_aut_regexp(const char *re, size_t n, qr_err *e)
{
    char desc[160];
    aut_describe(desc, sizeof desc, "regexp", re, n);
    rx_parser p = {.s = (const unsigned char *)re, .n = n, .desc = desc, .e = e};
    qr_arena_init(&p.ar, 16 * 1024, 0);
    rx_node *root = parse_alt(&p);
    if (root && p.pos < n)
        fail(&p, QR_E_INVALID_REGEXP, p.pos, "unmatched ')'");
    qr_aut *a = NULL;
    if (!p.failed) {
        aut_nfa nfa;
        aut_nfa_init(&nfa);
        uint32_t start = aut_nfa_state(&nfa), final = aut_nfa_state(&nfa);
        size_t bigpos = n;
        compile(&nfa, root, start, final, &bigpos);
        aut_nfa_accept(&nfa, final);
        if (nfa.oom)
            qr_errf(e, QR_E_NOMEM, "%s: out of memory", desc);
        else if (nfa.full)
            qr_errf(e, QR_E_TOO_LONG, "%s: too large (over %d automaton states) at byte %zu", desc,
                    QR_AUT_NFA_MAX_STATES, bigpos);
        else
            a = aut_from_nfa(&nfa, start, desc, e);
        aut_nfa_free(&nfa);
    }
    qr_arena_free(&p.ar);
    return a;
}

qr_aut *qr_aut_like(const char *pat, size_t n, qr_err *e)
{
    char desc[160];
    aut_describe(desc, sizeof desc, "LIKE", pat, n);
    const unsigned char *s = (const unsigned char *)pat;
    aut_nfa nfa;
    aut_nfa_init(&nfa);
    uint32_t start = aut_nfa_state(&nfa), cur = start;
    int after_pct = 0;
    qr_aut *a = NULL;
    for (size_t pos = 0; pos < n;) {
        if (s[pos] == '%') {
            if (!after_pct) { /* %% is % */
                uint32_t loop = aut_nfa_state(&nfa);
                aut_nfa_eps(&nfa, cur, loop);
                aut_nfa_any(&nfa, loop, loop);
                cur = loop;
            }
            after_pct = 1;
            pos++;
            continue;
        }
        after_pct = 0;
        uint32_t nxt = aut_nfa_state(&nfa);
        if (s[pos] == '_') {
            aut_nfa_any(&nfa, cur, nxt);
            cur = nxt;
            pos++;
            continue;
        }
        if (s[pos] == '\\' && ++pos == n) {
            qr_errf(e, QR_E_INVALID_ESCAPE, "%s: trailing escape character at byte %zu", desc,
                    pos - 1);
            goto out;
        }
        uint32_t cp;
        size_t len = aut_utf8_decode(s + pos, n - pos, &cp);
        if (!len) {
            qr_errf(e, QR_E_INVALID_TEXT, "%s: invalid UTF-8 at byte %zu", desc, pos);
            goto out;
        }
        aut_nfa_cp(&nfa, cur, cp, nxt);
        cur = nxt;
        pos += len;
    }
    aut_nfa_accept(&nfa, cur);
    if (nfa.oom)
        qr_errf(e, QR_E_NOMEM, "%s: out of memory", desc);
    else if (nfa.full)
        qr_errf(e, QR_E_TOO_LONG, "%s: too large (over %d automaton states)", desc,
                QR_AUT_NFA_MAX_STATES);
    else
        a = aut_from_nfa(&nfa, start, desc, e);
out:
    aut_nfa_free(&nfa);
    return a;
}
