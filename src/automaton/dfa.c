/* dfa.c - the core of the automata (see automaton.h): finalisation of
 * a front end's NFA (CSR adjacency, liveness, byte classes), the lazily
 * built DFA and its bounded cache, and the literal prefix.
 *
 * DFA layout: one row of (ncls + 1 + LEN_WORDS) uint32 per DFA state in
 * `trans`; entries 0..ncls-1 hold the next state per byte class (AUT_UNK
 * until computed), entry ncls holds flags (bit 0 = accepting), the last
 * LEN_WORDS the state's lengths: bit r set when some accepted term goes
 * on from it with exactly r more code points (see qr_aut_can_end; the
 * union of its NFA states', found once per automaton by a fixpoint over
 * the NFA, nfa_lengths). A state id is its row offset,
 * so a step is trans[s + cls[byte]]; row 0 is the dead state, all zeros.
 * A DFA state stands for a sorted set of NFA states, keeping only live ones
 * (an accepting state is reachable) that have byte edges or accept: the
 * empty set is the dead state, which makes dead detection exact, and sets
 * that differ only in epsilon-only states share one DFA state. A state that
 * would pass the cache limit is not built: the step returns 0 uncached and
 * sets `overflow`, so walks end fast and qr_aut_error reports it.
 */
#include "automaton/aut_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AUT_UNK    UINT32_MAX
#define NF_ACCEPT  1u
#define NF_LIVE    2u
#define NF_KEEP    4u
#define PREFIX_MAX 1024
#define LEN_WORDS  8u /* 256 bits: code point counts 0..QR_AUT_LEN_MAX */
/* edge visits nfa_lengths may spend before it gives up (every length is
 * then taken as possible: no pruning, still exact matching): a few ms */
#define LEN_BUDGET (1u << 20)

struct qr_aut {
    /* NFA, adjacency in CSR form */
    uint32_t nn, nstart;
    uint32_t *eoff; /* nn + 1 offsets into elo/ehi/eto */
    uint8_t *elo, *ehi;
    uint32_t *eto;
    uint32_t *poff; /* nn + 1 offsets into pto (epsilon edges) */
    uint32_t *pto;
    uint8_t *nflag;
    /* byte classes: bytes no edge tells apart share a class */
    uint8_t cls[256];
    uint32_t ncls, w; /* w = ncls + 1 + LEN_WORDS = row width */
    uint8_t rep[256]; /* a byte of each class (its first: classes are ranges) */
    uint8_t run_end[256]; /* the last byte of each byte's class */
    uint16_t csize[256];
    /* lazy DFA */
    uint32_t *trans;
    size_t trans_cap; /* entries */
    uint32_t nd;      /* rows (DFA states, dead included) */
    struct dstate {
        uint32_t off, len, hash; /* its NFA set in pool */
    } * ds;
    size_t ds_cap;
    uint32_t *pool; /* NFA state sets */
    size_t npool, pool_cap;
    uint32_t *ht; /* row index, 0 = empty */
    size_t ht_cap;
    size_t mem, limit;
    qr_qctx *ctx;   /* the query's budget, charged with mem; may be NULL */
    int overflow;
    int ctx_full;   /* the overflow came from the query's budget */
    uint32_t start;
    /* scratch for closures, nn entries each */
    uint32_t *mark, gen;
    uint32_t *stk, *tmp;
    /* per NFA state, LEN_WORDS words: the code point counts of its accepted
     * continuations (in mem); NULL when not computed (too large a pattern) */
    uint32_t *nlen;
    /* bytes every accepted term contains (bit b of word b / 64) */
    uint64_t req[4];
    char prefix[PREFIX_MAX];
    size_t nprefix;
    char desc[160];
};

/* ---- lazy DFA ---- */

/* grow() under the cache limit, counting the bytes in a->mem; -1 past it. */
static int grow_within(qr_aut *a, void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc < need)
        nc *= 2;
    if (a->mem + (nc - *cap) * elem > a->limit)
        nc = need; /* near the limit: grow exactly */
    if (a->mem + (nc - *cap) * elem > a->limit)
        return -1;
    if (qr_qctx_charge(a->ctx, (nc - *cap) * elem) != 0)
        return a->ctx_full = 1, -1;
    void *q = realloc(*p, nc * elem);
    if (!q) {
        qr_qctx_release(a->ctx, (nc - *cap) * elem);
        return -1;
    }
    a->mem += (nc - *cap) * elem;
    *p = q;
    *cap = nc;
    return 0;
}

static uint32_t set_hash(const uint32_t *s, uint32_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    for (uint32_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
    }
    return (uint32_t)(h ^ (h >> 32));
}

static int ht_rebuild(qr_aut *a, size_t cap)
{
    size_t bytes = cap * sizeof(uint32_t), old = a->ht_cap * sizeof(uint32_t);
    if (a->mem - old + bytes > a->limit)
        return -1;
    if (bytes > old && qr_qctx_charge(a->ctx, bytes - old) != 0)
        return a->ctx_full = 1, -1;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t) {
        if (bytes > old)
            qr_qctx_release(a->ctx, bytes - old);
        return -1;
    }
    for (uint32_t r = 1; r < a->nd; r++) {
        size_t j = a->ds[r].hash & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = r;
    }
    free(a->ht);
    a->ht = t;
    a->mem = a->mem - old + bytes;
    a->ht_cap = cap;
    return 0;
}

/* The DFA state for the kept-state set s[0..n) (sorted), made if new.
 * Returns its id, 0 for the empty set, or 0 with `overflow` set when the
 * cache limit (or memory) does not allow another state. */
static uint32_t dfa_state(qr_aut *a, const uint32_t *s, uint32_t n)
{
    if (!n)
        return 0;
    uint32_t h = set_hash(s, n);
    size_t j = h & (a->ht_cap - 1);
    for (uint32_t r; (r = a->ht[j]); j = (j + 1) & (a->ht_cap - 1))
        if (a->ds[r].hash == h && a->ds[r].len == n &&
            !memcmp(a->pool + a->ds[r].off, s, n * sizeof *s))
            return r * a->w;
    uint32_t r = a->nd;
    if ((size_t)(r + 1) * a->w >= UINT32_MAX || a->npool + n >= UINT32_MAX)
        goto full;
    if (grow_within(a, (void **)&a->trans, &a->trans_cap, (size_t)(r + 1) * a->w, 4) ||
        grow_within(a, (void **)&a->pool, &a->pool_cap, a->npool + n, 4) ||
        grow_within(a, (void **)&a->ds, &a->ds_cap, (size_t)r + 1, sizeof *a->ds))
        goto full;
    if ((size_t)(r + 1) * 2 > a->ht_cap && ht_rebuild(a, a->ht_cap * 2))
        goto full;
    uint32_t *row = a->trans + (size_t)r * a->w;
    uint32_t flags = 0;
    for (uint32_t i = 0; i < n; i++)
        if (a->nflag[s[i]] & NF_ACCEPT)
            flags = 1;
    for (uint32_t c = 0; c < a->ncls; c++)
        row[c] = AUT_UNK;
    row[a->ncls] = flags;
    uint32_t *lens = row + a->ncls + 1;
    memset(lens, a->nlen ? 0 : 0xff, LEN_WORDS * sizeof *lens);
    for (uint32_t i = 0; a->nlen && i < n; i++)
        for (uint32_t k = 0; k < LEN_WORDS; k++)
            lens[k] |= a->nlen[(size_t)s[i] * LEN_WORDS + k];
    memcpy(a->pool + a->npool, s, n * sizeof *s);
    a->ds[r] = (struct dstate){(uint32_t)a->npool, n, h};
    a->npool += n;
    a->nd++;
    j = h & (a->ht_cap - 1);
    while (a->ht[j])
        j = (j + 1) & (a->ht_cap - 1);
    a->ht[j] = r;
    return r * a->w;
full:
    a->overflow = 1;
    return 0;
}

static int u32_cmp(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

static void next_gen(qr_aut *a)
{
    if (++a->gen == 0) {
        memset(a->mark, 0, a->nn * sizeof *a->mark);
        a->gen = 1;
    }
}

static void push(qr_aut *a, uint32_t *nstk, uint32_t q)
{
    if ((a->nflag[q] & NF_LIVE) && a->mark[q] != a->gen) {
        a->mark[q] = a->gen;
        a->stk[(*nstk)++] = q;
    }
}

/* Epsilon-close the states on the stack (already marked with the current
 * generation); write the kept ones to out, sorted. Returns their count. */
static uint32_t close_stack(qr_aut *a, uint32_t nstk, uint32_t *out)
{
    uint32_t n = 0;
    while (nstk) {
        uint32_t q = a->stk[--nstk];
        if (a->nflag[q] & NF_KEEP)
            out[n++] = q;
        for (uint32_t i = a->poff[q]; i < a->poff[q + 1]; i++)
            push(a, &nstk, a->pto[i]);
    }
    if (n < 32) {
        for (uint32_t i = 1; i < n; i++) {
            uint32_t v = out[i], k = i;
            for (; k > 0 && out[k - 1] > v; k--)
                out[k] = out[k - 1];
            out[k] = v;
        }
    } else {
        qsort(out, n, sizeof *out, u32_cmp);
    }
    return n;
}

/* The kept states reached from set[0..n) on byte b, closed, into out. */
static uint32_t move(qr_aut *a, const uint32_t *set, uint32_t n, unsigned char b, uint32_t *out)
{
    next_gen(a);
    uint32_t nstk = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t q = set[i];
        for (uint32_t k = a->eoff[q]; k < a->eoff[q + 1]; k++)
            if (a->elo[k] <= b && b <= a->ehi[k])
                push(a, &nstk, a->eto[k]);
    }
    return close_stack(a, nstk, out);
}

static qr_aut_state step_slow(qr_aut *a, qr_aut_state s, unsigned char b)
{
    if (a->overflow)
        return 0;
    uint32_t r = s / a->w;
    uint32_t n = move(a, a->pool + a->ds[r].off, a->ds[r].len, b, a->tmp);
    uint32_t t = dfa_state(a, a->tmp, n);
    if (!a->overflow)
        a->trans[s + a->cls[b]] = t;
    return t;
}

qr_aut_state qr_aut_step(qr_aut *a, qr_aut_state s, unsigned char byte)
{
    uint32_t t = a->trans[s + a->cls[byte]];
    if (__builtin_expect(t != AUT_UNK, 1))
        return t;
    return step_slow(a, s, byte);
}

int qr_aut_next_byte(qr_aut *a, qr_aut_state s, unsigned from)
{
    if (!s)
        return -1;
    /* classes are ranges of bytes: one step per range */
    for (unsigned b = from; b < 256; b = a->run_end[b] + 1u)
        if (qr_aut_step(a, s, (unsigned char)b))
            return (int)b;
    return -1;
}

size_t qr_aut_walk(qr_aut *a, qr_aut_state s, const unsigned char *bytes, size_t n,
                   qr_aut_state *out)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t t = a->trans[s + a->cls[bytes[i]]];
        if (__builtin_expect(t == AUT_UNK, 0))
            t = step_slow(a, s, bytes[i]);
        out[i] = t;
        if (!t)
            return i;
        s = t;
    }
    return n;
}

qr_aut_state qr_aut_start(qr_aut *a) { return a->start; }

int qr_aut_accepts(const qr_aut *a, qr_aut_state s) { return (int)(a->trans[s + a->ncls] & 1); }

/* Exact matching without the DFA cache (used once the cache is full). */
static int nfa_matches(qr_aut *a, const unsigned char *s, size_t n)
{
    uint32_t *cur = malloc((size_t)a->nn * 2 * sizeof *cur);
    if (!cur)
        return 0; /* out of memory: nothing better to say */
    uint32_t *nxt = cur + a->nn, ncur;
    next_gen(a);
    uint32_t nstk = 0;
    push(a, &nstk, a->nstart);
    ncur = close_stack(a, nstk, cur);
    for (size_t i = 0; i < n && ncur; i++) {
        ncur = move(a, cur, ncur, s[i], nxt);
        uint32_t *t = cur;
        cur = nxt;
        nxt = t;
    }
    int acc = 0;
    for (uint32_t i = 0; i < ncur; i++)
        if (a->nflag[cur[i]] & NF_ACCEPT)
            acc = 1;
    free(cur < nxt ? cur : nxt);
    return acc;
}

int qr_aut_matches(qr_aut *a, const char *s, size_t n)
{
    int was = a->overflow;
    qr_aut_state st = a->start;
    for (size_t i = 0; i < n && st; i++)
        st = qr_aut_step(a, st, (unsigned char)s[i]);
    if (!st && a->overflow) {
        a->overflow = was; /* no walk saw a wrong state */
        return nfa_matches(a, (const unsigned char *)s, n);
    }
    return st ? qr_aut_accepts(a, st) : 0;
}

void qr_aut_required_bytes(const qr_aut *a, uint64_t out[4]) { memcpy(out, a->req, sizeof a->req); }

size_t qr_aut_literal_prefix(const qr_aut *a, const char **p)
{
    *p = a->prefix;
    return a->nprefix;
}

static inline int can_end(const qr_aut *a, qr_aut_state s, uint32_t cps)
{
    if (cps > QR_AUT_LEN_MAX)
        return 0;
    return (int)(a->trans[s + a->ncls + 1 + (cps >> 5)] >> (cps & 31) & 1);
}

int qr_aut_can_end(const qr_aut *a, qr_aut_state s, uint32_t cps) { return can_end(a, s, cps); }

/* A byte's code point weight: 0 for a UTF-8 continuation byte, else 1 (as
 * the dictionary counts code points). */
static inline uint32_t byte_cps(unsigned b) { return (b & 0xC0u) != 0x80u; }

size_t qr_aut_walk_ending(qr_aut *a, qr_aut_state s, const unsigned char *bytes, size_t n,
                          uint32_t len, qr_aut_state *out, uint32_t *cps)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t t = a->trans[s + a->cls[bytes[i]]];
        if (__builtin_expect(t == AUT_UNK, 0))
            t = step_slow(a, s, bytes[i]);
        uint32_t c = cps[i] + byte_cps(bytes[i]);
        out[i] = t;
        cps[i + 1] = c;
        if (!t || c > len || !can_end(a, t, len - c))
            return i;
        s = t;
    }
    return n;
}

uint32_t qr_aut_next_len(const qr_aut *a, qr_aut_state s, uint32_t from)
{
    const uint32_t *lens = a->trans + s + a->ncls + 1;
    for (uint32_t k = from >> 5; from <= QR_AUT_LEN_MAX && k < LEN_WORDS; k++) {
        uint32_t w = lens[k] & (k == from >> 5 ? ~0u << (from & 31) : ~0u);
        if (w)
            return k * 32 + (uint32_t)__builtin_ctz(w);
    }
    return UINT32_MAX;
}

int qr_aut_next_byte_ending(qr_aut *a, qr_aut_state s, unsigned from, uint32_t cps)
{
    if (!s)
        return -1;
    /* one step per run of bytes of one class and one weight */
    for (unsigned b = from; b < 256;) {
        unsigned end = a->run_end[b], wend = b < 0x80 ? 0x7F : b < 0xC0 ? 0xBF : 0xFF;
        if (end > wend)
            end = wend;
        uint32_t w = byte_cps(b);
        if (w <= cps) {
            qr_aut_state t = qr_aut_step(a, s, (unsigned char)b);
            if (t && can_end(a, t, cps - w))
                return (int)b;
        }
        b = end + 1u;
    }
    return -1;
}

int qr_aut_error(const qr_aut *a, qr_err *e)
{
    if (!a->overflow)
        return 0;
    if (a->ctx_full)
        return qr_qctx_nomem(a->ctx, e);
    return qr_errf(e, QR_E_TOO_LONG,
                   "%s: too complex to match: its automaton needs more than the %zu-byte "
                   "state cache",
                   a->desc, a->limit);
}

void qr_aut_set_cache_limit(qr_aut *a, size_t bytes) { a->limit = bytes; }

int qr_aut_set_ctx(qr_aut *a, qr_qctx *ctx)
{
    if (qr_qctx_charge(ctx, a->mem) != 0)
        return -1;
    qr_qctx_release(a->ctx, a->mem);
    a->ctx = ctx;
    return 0;
}

size_t qr_aut_dfa_states(const qr_aut *a) { return a->nd; }

void qr_aut_free(qr_aut *a)
{
    if (!a)
        return;
    qr_qctx_release(a->ctx, a->mem);
    free(a->eoff);
    free(a->elo);
    free(a->ehi);
    free(a->eto);
    free(a->poff);
    free(a->pto);
    free(a->nflag);
    free(a->nlen);
    free(a->trans);
    free(a->ds);
    free(a->pool);
    free(a->ht);
    free(a->mark);
    free(a->stk);
    free(a->tmp);
    free(a);
}

/* ---- finalisation ---- */

static void find_literal_prefix(qr_aut *a)
{
    qr_aut_state s = a->start;
    while (s && !qr_aut_accepts(a, s) && a->nprefix < PREFIX_MAX) {
        uint32_t live = 0, only = 0;
        qr_aut_state next = 0;
        for (uint32_t c = 0; c < a->ncls && live < 2; c++) {
            qr_aut_state t = qr_aut_step(a, s, a->rep[c]);
            if (t) {
                live++;
                only = c;
                next = t;
            }
        }
        if (live != 1 || a->csize[only] != 1)
            break;
        a->prefix[a->nprefix++] = (char)a->rep[only];
        s = next;
    }
}

/* Liveness: states from which an accepting state is reachable (reverse BFS). */
static int mark_live(qr_aut *a, const aut_nfa *n)
{
    uint32_t nn = a->nn;
    uint32_t *roff = calloc((size_t)nn + 1, sizeof *roff);
    uint32_t *rfrom = malloc((n->nedge + n->neps + 1) * sizeof *rfrom);
    uint32_t *queue = malloc((size_t)nn * sizeof *queue);
    if (!roff || !rfrom || !queue) {
        free(roff);
        free(rfrom);
        free(queue);
        return -1;
    }
    for (size_t i = 0; i < n->nedge; i++)
        roff[n->edge[i].to + 1]++;
    for (size_t i = 0; i < n->neps; i++)
        roff[n->eps[i].to + 1]++;
    for (uint32_t q = 0; q < nn; q++)
        roff[q + 1] += roff[q];
    for (size_t i = 0; i < n->nedge; i++)
        rfrom[roff[n->edge[i].to]++] = n->edge[i].from;
    for (size_t i = 0; i < n->neps; i++)
        rfrom[roff[n->eps[i].to]++] = n->eps[i].from;
    for (uint32_t q = nn; q > 0; q--) /* undo the fill's shift */
        roff[q] = roff[q - 1];
    roff[0] = 0;
    uint32_t qh = 0, qt = 0;
    for (uint32_t q = 0; q < nn; q++)
        if (a->nflag[q] & NF_ACCEPT) {
            a->nflag[q] |= NF_LIVE;
            queue[qt++] = q;
        }
    while (qh < qt) {
        uint32_t q = queue[qh++];
        for (uint32_t i = roff[q]; i < roff[q + 1]; i++)
            if (!(a->nflag[rfrom[i]] & NF_LIVE)) {
                a->nflag[rfrom[i]] |= NF_LIVE;
                queue[qt++] = rfrom[i];
            }
    }
    free(roff);
    free(rfrom);
    free(queue);
    return 0;
}

/* out |= what an edge from a state to one with lengths in[] gives it:
 * in[] shifted by one where a byte of the edge starts a code point
 * (lead), as it is where one continues it (0x80..0xBF) or for an epsilon
 * edge (same); a byte edge may hold both kinds. */
static void len_edge(uint32_t *out, const uint32_t *in, int lead, int same)
{
    for (uint32_t k = 0; k < LEN_WORDS; k++) {
        uint32_t v = same ? in[k] : 0;
        if (lead)
            v |= in[k] << 1 | (k ? in[k - 1] >> 31 : 0);
        out[k] |= v;
    }
}

/* The NFA's states in DFS postorder over byte and epsilon edges (a
 * state after every state it reaches, except around loops) into order;
 * stk, next and seen (zeroed) are scratch of nn entries. Returns nn. */
static uint32_t postorder(const qr_aut *a, uint32_t *order, uint32_t *stk, uint32_t *next,
                          uint8_t *seen)
{
    uint32_t nn = a->nn, no = 0;
    for (uint32_t root = 0; root < nn; root++) {
        if (seen[root])
            continue;
        uint32_t ns = 0;
        stk[ns++] = root;
        seen[root] = 1;
        next[root] = 0;
        while (ns) {
            uint32_t q = stk[ns - 1], nb = a->eoff[q + 1] - a->eoff[q];
            uint32_t deg = nb + (a->poff[q + 1] - a->poff[q]);
            if (next[q] == deg) {
                order[no++] = q;
                ns--;
                continue;
            }
            uint32_t k = next[q]++; /* edge k < nb: a byte edge, else epsilon */
            uint32_t p = k < nb ? a->eto[a->eoff[q] + k] : a->pto[a->poff[q] + (k - nb)];
            if (!seen[p]) {
                seen[p] = 1;
                next[p] = 0;
                stk[ns++] = p;
            }
        }
    }
    return no;
}

/* Lengths: for every NFA state, the code point counts 0..QR_AUT_LEN_MAX of
 * the accepted strings that go on from it. The least fixpoint of
 *   L(q) = {0 if q accepts} | L(p) over epsilon edges q -> p
 *          | L(p) + 1 over a byte edge of lead bytes | L(p) over one of
 *          continuation bytes,
 * found by passes over the states in DFS postorder (successors first), so
 * an acyclic NFA (a fuzzy term's, most regexps') is done in one pass and
 * checked by a second; a loop adds at least one length a pass. Past
 * LEN_BUDGET edge visits (a pattern of thousands of states with loops) it
 * gives up and leaves a->nlen NULL: every length possible. -1 when out of
 * memory. */
static int nfa_lengths(qr_aut *a)
{
    uint32_t nn = a->nn;
    uint32_t *order = malloc(((size_t)nn + 1) * sizeof *order);
    uint32_t *stk = malloc(((size_t)nn + 1) * sizeof *stk);
    uint32_t *next = malloc(((size_t)nn + 1) * sizeof *next); /* DFS: next edge to follow */
    uint8_t *seen = calloc((size_t)nn + 1, 1);
    uint32_t *L = calloc((size_t)nn * LEN_WORDS + 1, sizeof *L);
    int rc = -1;
    if (!order || !stk || !next || !seen || !L)
        goto out;
    uint32_t no = postorder(a, order, stk, next, seen);
    size_t spent = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t i = 0; i < no; i++) {
            uint32_t q = order[i], *lq = L + (size_t)q * LEN_WORDS, v[LEN_WORDS] = {0};
            v[0] = (a->nflag[q] & NF_ACCEPT) != 0;
            int loop = 0; /* a byte edge back to q that starts a code point */
            for (uint32_t k = a->eoff[q]; k < a->eoff[q + 1]; k++) {
                uint8_t lo = a->elo[k], hi = a->ehi[k];
                int lead = lo < 0x80 || hi > 0xBF, cont = lo <= 0xBF && hi >= 0x80;
                loop |= a->eto[k] == q && lead;
                len_edge(v, L + (size_t)a->eto[k] * LEN_WORDS, lead, cont);
            }
            for (uint32_t k = a->poff[q]; k < a->poff[q + 1]; k++)
                len_edge(v, L + (size_t)a->pto[k] * LEN_WORDS, 0, 1);
            if (loop) { /* q -> q again and again: every length from its least on */
                uint32_t k = 0;
                while (k < LEN_WORDS && !v[k])
                    k++;
                if (k < LEN_WORDS) {
                    v[k] |= ~0u << __builtin_ctz(v[k]);
                    while (++k < LEN_WORDS)
                        v[k] = ~0u;
                }
            }
            if (memcmp(v, lq, sizeof v) != 0) {
                memcpy(lq, v, sizeof v);
                changed = 1;
            }
            spent += 1 + (a->eoff[q + 1] - a->eoff[q]) + (a->poff[q + 1] - a->poff[q]);
        }
        if (spent > LEN_BUDGET) { /* give up: no pruning by length */
            rc = 0;
            goto out;
        }
    }
    a->nlen = L;
    L = NULL;
    rc = 0;
out:
    free(order);
    free(stk);
    free(next);
    free(seen);
    free(L);
    return rc;
}

/* Required bytes: for every NFA state, the bytes that every accepted
 * string going on from it contains. The greatest fixpoint of
 *   R(q) = {} if q accepts, else the intersection over its edges to live
 *          states p of R(p) plus the edge's byte when it takes exactly
 *          one (an epsilon edge adds none),
 * from R = every byte: passes in DFS postorder until nothing shrinks
 * (each pass removes a byte somewhere or ends it). The start state's set
 * is what qr_aut_required_bytes reports: a dictionary block without one
 * of those bytes holds no match (/.*nnec.* / needs n, e and c). Past the
 * budget it reports none. -1 when out of memory. */
static int nfa_required(qr_aut *a)
{
    uint32_t nn = a->nn;
    uint64_t *R = malloc(((size_t)nn * 4 + 1) * sizeof *R);
    uint32_t *order = malloc(((size_t)nn + 1) * sizeof *order);
    uint32_t *stk = malloc(((size_t)nn + 1) * sizeof *stk);
    uint32_t *next = malloc(((size_t)nn + 1) * sizeof *next);
    uint8_t *seen = calloc((size_t)nn + 1, 1);
    int rc = -1;
    memset(a->req, 0, sizeof a->req);
    if (!R || !order || !stk || !next || !seen)
        goto out;
    uint32_t no = postorder(a, order, stk, next, seen);
    for (size_t i = 0; i < (size_t)nn * 4; i++)
        R[i] = ~0ull;
    size_t spent = 0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t i = 0; i < no; i++) {
            uint32_t q = order[i];
            uint64_t v[4] = {0, 0, 0, 0};
            if (!(a->nflag[q] & NF_ACCEPT)) {
                v[0] = v[1] = v[2] = v[3] = ~0ull; /* no live edge: nothing to match */
                for (uint32_t k = a->eoff[q]; k < a->eoff[q + 1]; k++) {
                    uint32_t p = a->eto[k];
                    if (!(a->nflag[p] & NF_LIVE))
                        continue;
                    for (int w = 0; w < 4; w++) {
                        uint64_t with = R[(size_t)p * 4 + w];
                        if (a->elo[k] == a->ehi[k] && a->elo[k] / 64 == w)
                            with |= 1ull << (a->elo[k] % 64);
                        v[w] &= with;
                    }
                }
                for (uint32_t k = a->poff[q]; k < a->poff[q + 1]; k++) {
                    uint32_t p = a->pto[k];
                    if (a->nflag[p] & NF_LIVE)
                        for (int w = 0; w < 4; w++)
                            v[w] &= R[(size_t)p * 4 + w];
                }
            }
            uint64_t *rq = R + (size_t)q * 4;
            if (memcmp(v, rq, sizeof v) != 0) {
                memcpy(rq, v, sizeof v);
                changed = 1;
            }
            spent += 1 + (a->eoff[q + 1] - a->eoff[q]) + (a->poff[q + 1] - a->poff[q]);
        }
        if (spent > LEN_BUDGET) { /* give up: none required */
            rc = 0;
            goto out;
        }
    }
    if (a->nstart < nn && (a->nflag[a->nstart] & NF_LIVE))
        memcpy(a->req, R + (size_t)a->nstart * 4, sizeof a->req);
    rc = 0;
out:
    free(R);
    free(order);
    free(stk);
    free(next);
    free(seen);
    return rc;
}

static void make_classes(qr_aut *a, const aut_nfa *n)
{
    uint8_t bound[257] = {0};
    bound[0] = 1;
    for (size_t i = 0; i < n->nedge; i++) {
        bound[n->edge[i].lo] = 1;
        bound[n->edge[i].hi + 1] = 1;
    }
    uint32_t c = 0; /* bound[0] is set: byte 0 opens class 0 */
    for (int b = 0; b < 256; b++) {
        if (b && bound[b])
            a->rep[++c] = (uint8_t)b;
        a->cls[b] = (uint8_t)c;
        a->csize[c]++;
    }
    a->ncls = c + 1;
    a->w = a->ncls + 1 + LEN_WORDS;
    for (int b = 255, end = 255; b >= 0; b--) {
        a->run_end[b] = (uint8_t)end;
        if (b && a->cls[b - 1] != a->cls[b])
            end = b - 1;
    }
}

qr_aut *aut_from_nfa(const aut_nfa *n, uint32_t start, const char *desc, qr_err *e)
{
    qr_aut *a = calloc(1, sizeof *a);
    if (!a)
        goto oom;
    snprintf(a->desc, sizeof a->desc, "%s", desc);
    uint32_t nn = a->nn = n->nstate;
    a->nstart = start;
    a->limit = QR_AUT_CACHE_BYTES;
    a->eoff = calloc((size_t)nn + 1, sizeof *a->eoff);
    a->poff = calloc((size_t)nn + 1, sizeof *a->poff);
    a->elo = malloc(n->nedge + 1);
    a->ehi = malloc(n->nedge + 1);
    a->eto = malloc((n->nedge + 1) * sizeof *a->eto);
    a->pto = malloc((n->neps + 1) * sizeof *a->pto);
    a->nflag = calloc(nn, 1);
    a->mark = calloc(nn, sizeof *a->mark);
    a->stk = malloc((size_t)nn * sizeof *a->stk);
    a->tmp = malloc((size_t)nn * sizeof *a->tmp);
    if (!a->eoff || !a->poff || !a->elo || !a->ehi || !a->eto || !a->pto || !a->nflag || !a->mark ||
        !a->stk || !a->tmp)
        goto oom;
    /* CSR: count, prefix-sum, fill (fill shifts offsets by one slot) */
    for (size_t i = 0; i < n->nedge; i++)
        a->eoff[n->edge[i].from + 1]++;
    for (size_t i = 0; i < n->neps; i++)
        a->poff[n->eps[i].from + 1]++;
    for (uint32_t q = 0; q < nn; q++) {
        a->eoff[q + 1] += a->eoff[q];
        a->poff[q + 1] += a->poff[q];
    }
    for (size_t i = 0; i < n->nedge; i++) {
        uint32_t k = a->eoff[n->edge[i].from]++;
        a->elo[k] = n->edge[i].lo;
        a->ehi[k] = n->edge[i].hi;
        a->eto[k] = n->edge[i].to;
    }
    for (size_t i = 0; i < n->neps; i++)
        a->pto[a->poff[n->eps[i].from]++] = n->eps[i].to;
    for (uint32_t q = nn; q > 0; q--) {
        a->eoff[q] = a->eoff[q - 1];
        a->poff[q] = a->poff[q - 1];
    }
    a->eoff[0] = a->poff[0] = 0;
    for (uint32_t q = 0; q < nn; q++) {
        if (n->accept[q])
            a->nflag[q] |= NF_ACCEPT;
        if (n->accept[q] || a->eoff[q + 1] > a->eoff[q])
            a->nflag[q] |= NF_KEEP;
    }
    if (mark_live(a, n) || nfa_lengths(a) || nfa_required(a))
        goto oom;
    make_classes(a, n);
    /* the dead row */
    a->ht_cap = 16;
    a->ht = calloc(a->ht_cap, sizeof *a->ht);
    /* the lengths table is the automaton's too: counted with the DFA
     * cache, so qr_aut_set_ctx charges it to the query's budget */
    a->mem = a->ht_cap * sizeof *a->ht + (a->nlen ? (size_t)nn * LEN_WORDS * sizeof *a->nlen : 0);
    if (!a->ht || grow_within(a, (void **)&a->trans, &a->trans_cap, a->w, 4) ||
        grow_within(a, (void **)&a->ds, &a->ds_cap, 1, sizeof *a->ds))
        goto oom;
    memset(a->trans, 0, a->w * sizeof *a->trans);
    a->ds[0] = (struct dstate){0, 0, 0};
    a->nd = 1;
    next_gen(a);
    uint32_t nstk = 0;
    if (start < nn)
        push(a, &nstk, start);
    uint32_t ns = close_stack(a, nstk, a->tmp);
    a->start = dfa_state(a, a->tmp, ns);
    if (a->overflow)
        goto oom;
    find_literal_prefix(a);
    a->overflow = 0; /* the prefix is an optimisation; walks start clean */
    return a;
oom:
    qr_aut_free(a);
    qr_errf(e, QR_E_NOMEM, "%s: out of memory building its automaton", desc);
    return NULL;
}
