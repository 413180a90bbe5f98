/* expand.c - multi-term nodes (prefix, regexp, LIKE, fuzzy): the run
 * state keeping each thread's compiled automata, and the walk of a term
 * dictionary with an automaton, keeping the automaton state for every
 * prefix depth so consecutive terms only feed their new suffix bytes, and
 * seeking, when the automaton dies, straight to the next string it can
 * still continue. */
#include "match/match_int.h"

#include <stdlib.h>
#include <string.h>

#include "automaton/automaton.h"
#include "index/shapes.h"

void qr_qrun_init(qr_qrun *r) { memset(r, 0, sizeof *r); }

void qr_qrun_free(qr_qrun *r)
{
    for (uint32_t i = 0; i < r->n; i++)
        qr_aut_free(r->aut[i]);
    free(r->node);
    free(r->aut);
    memset(r, 0, sizeof *r);
}

/* The automaton compiled for node q in this run, or NULL. */
static qr_aut *run_get(const qr_qrun *r, const qr_query *q)
{
    for (uint32_t i = 0; i < r->n; i++)
        if (r->node[i] == q)
            return r->aut[i];
    return NULL;
}

static int run_put(qr_qrun *r, const qr_query *q, qr_aut *aut)
{
    if (r->n == r->cap) {
        uint32_t nc = r->cap ? r->cap * 2 : 8;
        const qr_query **nn = realloc(r->node, sizeof *nn * nc);
        if (!nn)
            return -1;
        r->node = nn;
        void **na = realloc(r->aut, sizeof *na * nc);
        if (!na)
            return -1;
        r->aut = na;
        r->cap = nc;
    }
    r->node[r->n] = q;
    r->aut[r->n++] = aut;
    return 0;
}


int mt_termset_add(termset *s, const qr_terminfo *ti)
{
    if (s->n == s->cap) {
        uint32_t nc = s->cap ? s->cap * 2 : 64;
        qr_terminfo *nv = qr_qrealloc(s->ctx, s->v, sizeof *nv * nc);
        if (!nv)
            return -1;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = *ti;
    s->total_df += ti->df;
    return 0;
}

/* The smallest string > term[0..d] (d = where the walk left term) that
 * the automaton can still continue to an accepted term of `len` code
 * points: the same first `depth` bytes and a next byte above term[depth]
 * whose state can end in the code points left (cp[depth]: those of the
 * first depth bytes), backing up a byte when there is none. Never backs
 * into the literal prefix (`keep` bytes). Returns its length in out, 0
 * when none is left. */
static size_t next_live(qr_aut *aut, const qr_aut_state *st, const uint32_t *cp, uint32_t len,
                        const char *term, size_t d, size_t keep, char *out)
{
    for (size_t depth = d + 1; depth-- > keep;) {
        int c = cp[depth] <= len
                    ? qr_aut_next_byte_ending(aut, st[depth], (unsigned char)term[depth] + 1u,
                                              len - cp[depth])
                    : -1;
        if (c >= 0) {
            memcpy(out, term, depth);
            out[depth] = (char)c;
            return depth + 1;
        }
    }
    return 0;
}

/* The shapes holding word t (every one of a variable word: 1, else 0). */
static int mark_shapes(shape_marks *m, const char *t, size_t n)
{
    if (qr_shape_variable(t, n)) {
        m->variable = 1;
        return 1;
    }
    uint32_t cnt;
    const qr_shape_occ *o = qr_shape_words_find(m->sw, t, n, &cnt);
    for (uint32_t i = 0; i < cnt; i++)
        if (!m->mark[o[i].shape]) { /* a shape's rows counted once */
            m->mark[o[i].shape] = 1;
            m->marked_rows += m->rows[o[i].shape];
        }
    return 0;
}

/* Where term (of the walk's current length) stands against the literal
 * prefix: -1 before every term starting with it, 0 starting with it, 1
 * after them all. */
static int vs_literal(const qr_titer *it, const char *lit, size_t litn)
{
    size_t m = it->len < litn ? it->len : litn;
    int c = memcmp(it->term, lit, m);
    if (c)
        return c < 0 ? -1 : 1;
    return it->len < litn ? -1 : 0;
}

/* The next term length from `from` on, at most max, that the walk must read: one the
 * automaton can end in and at which some term may start with the literal
 * prefix (qr_tdict_len_below passes over the lengths an earlier walk
 * found all below it, without a seek). *len = UINT32_MAX when none is
 * left. 0, or -1 with e set. */
static int walk_len(const qr_tdict *d, qr_aut *aut, qr_aut_state s0, uint32_t from, uint32_t max,
                    const char *lit, size_t litn, uint32_t *len, qr_err *e)
{
    for (uint32_t l = qr_aut_next_len(aut, s0, from);; l = qr_aut_next_len(aut, s0, l + 1)) {
        if (l > max)
            l = UINT32_MAX;
        int below = l == UINT32_MAX || !litn ? 0 : qr_tdict_len_below(d, l, lit, litn, e);
        if (below < 0)
            return -1;
        if (below == 0 || below == 2) {
            *len = below == 2 ? UINT32_MAX : l;
            return 0;
        }
    }
}

/* Seek `it` to the literal prefix among the terms of length len (fresh: a
 * new iterator on d, else on from where it is); when no term of that
 * length is at or above it, the dictionary remembers (qr_tdict_note_below).
 * Without a literal prefix, to the smallest first byte a match of that
 * length can have: `cahce~1` at length 4 seeks `a` (`ahce`), not the
 * length's first term, a block of numbers no match is in. */
static int seek_lit(const qr_tdict *d, qr_aut *aut, qr_titer *it, int fresh, uint32_t len,
                    const char *lit, size_t litn, qr_err *e)
{
    char first;
    if (!litn) {
        int c = qr_aut_next_byte_ending(aut, qr_aut_start(aut), 0, len);
        if (c > 0) {
            first = (char)c;
            lit = &first;
            litn = 1;
        }
    }
    int r = fresh ? qr_tdict_seek_at(d, it, len, lit, litn, e)
                  : qr_titer_seek_at(it, len, lit, litn, e);
    if (lit == &first)
        return r;
    if (litn && (r == 0 || (r == 1 && qr_titer_cpl(it) > len)))
        qr_tdict_note_below(d, len, lit, litn);
    return r;
}

/* The lengths a walk takes (those the automaton can end in among them),
 * and whether it keeps its variable matches alone (the others found
 * among the shape words). */
typedef struct len_range {
    uint32_t lo, hi;
    int vars_only;
} len_range;

/* Walk f's dictionary with automaton `aut`, collecting accepted terms
 * (Lucene's automaton intersection). The dictionary orders terms by code
 * point length, then bytes; the walk takes the lengths the automaton can
 * accept one after the other (qr_aut_next_len), and within one it is the
 * classic walk, knowing the length: st[i] is the state after the first i
 * bytes of the last term walked, cp[i] their code points; a new term
 * re-walks only from the prefix it shares with it. When the automaton dies
 * at byte d of a term, or can no longer end in the term's length, and the
 * next term starts with the same d + 1 bytes, the walk seeks straight to
 * the next string it can continue to that length (a byte above term[d]
 * that can, else above term[d-1], ...), so a dead prefix costs one seek,
 * not a walk over its terms. */
static int expand(qr_segsearch *ss, qr_invfield *f, qr_aut *aut, uint64_t need,
                  const len_range *only, termset *out, qr_err *e)
{
    uint32_t lo = only ? only->lo : 0, hi = only ? only->hi : UINT32_MAX;
    const char *lit;
    size_t litn = qr_aut_literal_prefix(aut, &lit);
    qr_aut_state st[QR_MAX_TERM + 1];
    uint32_t cp[QR_MAX_TERM + 1];
    size_t valid = 0; /* st[0..valid] are states of the previous term's prefix */
    st[0] = qr_aut_start(aut);
    cp[0] = 0;
    uint32_t len;
    if (walk_len(&f->dict, aut, st[0], lo, hi, lit, litn, &len, e) != 0)
        return -1;
    if (len == UINT32_MAX)
        return 0;
    qr_titer it;
    int r = seek_lit(&f->dict, aut, &it, 1, len, lit, litn, e);
    size_t shared = 0; /* bytes the current term shares with the previous one */
    uint32_t checked = UINT32_MAX; /* the last block whose byte classes were checked */
    uint32_t at_blk = 0, at_in = 0; /* where the walk was (block, entries read) */
    uint32_t entered = UINT32_MAX;
    while (r == 1) {
        if (mt_tick(ss, e) != 0)
            return -1;
        uint32_t cur = qr_titer_cpl(&it);
        if (cur != len) { /* into longer terms: on to the next length the automaton takes */
            uint32_t want;
            if (walk_len(&f->dict, aut, st[0], cur, hi, lit, litn, &want, e) != 0)
                return -1;
            if (want == UINT32_MAX)
                break;
            len = want;
            if (want != cur) {
                r = seek_lit(&f->dict, aut, &it, 0, len, lit, litn, e);
                shared = valid = 0;
                continue;
            }
        }
        /* every step must move forward: on a damaged dictionary whose order
         * is broken a seek could land back on a term already walked */
        if (it.blk < at_blk || (it.blk == at_blk && it.in_blk <= at_in))
            return qr_errf(e, QR_E_CORRUPT, "corrupt term dictionary (terms out of order)");
        at_blk = it.blk;
        at_in = it.in_blk;
        if (it.blk != entered) {
            entered = it.blk;
            out->blocks++;
        }
        int lv = litn ? vs_literal(&it, lit, litn) : 0;
        if (lv != 0) { /* to this length's terms with the prefix, or the next length's */
            uint32_t want = len;
            if (lv > 0 && walk_len(&f->dict, aut, st[0], len + 1, hi, lit, litn, &want, e) != 0)
                return -1;
            if (want == UINT32_MAX)
                break;
            len = want;
            r = seek_lit(&f->dict, aut, &it, 0, len, lit, litn, e);
            shared = valid = 0;
            continue;
        }
        if (need && it.blk != checked) {
            checked = it.blk;
            uint32_t b;
            if (qr_tdict_find_mask(&f->dict, it.blk, need, &b, e) != 0)
                return -1;
            if (b != it.blk) { /* no term of these blocks has every byte a match needs */
                r = qr_tdict_seek_block(&f->dict, &it, b, e);
                shared = valid = 0;
                continue;
            }
        }
        size_t depth = shared < valid ? shared : valid, dead = SIZE_MAX;
        size_t live = qr_aut_walk_ending(aut, st[depth], (const unsigned char *)it.term + depth,
                                         it.len - depth, len, st + depth + 1, cp + depth);
        if (live < it.len - depth)
            dead = depth + live;
        if (dead == SIZE_MAX) {
            valid = it.len;
            if (qr_aut_accepts(aut, st[it.len]) &&
                (!only || !only->vars_only || qr_shape_variable(it.term, it.len))) {
                qr_terminfo ti;
                if (qr_titer_info(&it, &ti, e) != 0)
                    return -1;
                if (mt_termset_add(out, &ti) != 0)
                    return qr_qctx_nomem(out->ctx, e);
                if (out->marks && mark_shapes(out->marks, it.term, it.len) && out->marks->vars &&
                    mt_termset_add(out->marks->vars, &ti) != 0)
                    return qr_qctx_nomem(out->ctx, e);
            }
            r = qr_titer_next(&it, e);
            shared = it.shared;
            continue;
        }
        /* dead at byte `dead`: the next term is often past the dead
         * prefix already (it shares at most `dead` bytes with this one),
         * and the walk goes on from it; a seek pays only when terms start
         * with the dead prefix (a run of hex pieces, say), and then the
         * next term's first dead + 1 bytes are this one's */
        valid = dead;
        r = qr_titer_next(&it, e);
        if (r != 1)
            continue;
        if (it.shared <= dead) {
            shared = it.shared;
            continue;
        }
        char target[QR_MAX_TERM + 1];
        size_t tn = next_live(aut, st, cp, len, it.term, dead, litn, target);
        if (tn == 0) { /* nothing more of this length can be accepted */
            uint32_t want;
            if (walk_len(&f->dict, aut, st[0], len + 1, hi, lit, litn, &want, e) != 0)
                return -1;
            if (want == UINT32_MAX)
                break;
            len = want;
            r = seek_lit(&f->dict, aut, &it, 0, len, lit, litn, e);
            shared = valid = 0;
            continue;
        }
        r = qr_titer_seek_at(&it, len, target, tn, e);
        /* st[0..tn-1] and cp[0..tn-1] hold for target's first tn-1 bytes:
         * keep those the found term shares with it */
        shared = 0;
        while (r == 1 && shared < tn - 1 && shared < it.len && it.term[shared] == target[shared])
            shared++;
        valid = tn - 1;
    }
    if (r < 0)
        return -1;
    return qr_aut_error(aut, e);
}

_Static_assert(QR_MAX_TERM <= QR_AUT_LEN_MAX, "a term's length is one the automata track");

qr_it *mt_union_of(qr_segsearch *ss, qr_invfield *f, termset *ts, qr_arena *a, qr_err *e)
{
    ss->terms_expanded += ts->n;
    if (ts->n == 0)
        return qr_it_empty(a) ? qr_it_empty(a) : mt_nomem(e);
    int any_dense = 0;
    for (uint32_t i = 0; i < ts->n; i++)
        any_dense |= ts->v[i].has_bitmap;
    /* one word's list as it is (its count is its df), a heap for a few
     * words of few rows; else one bitmap, cheaper per doc */
    if (!any_dense && (ts->n == 1 || (ts->n <= 8 && !bm_union_cheaper(ts->total_df, f->rows)))) {
        qr_it **kids = qr_arena_alloc(a, sizeof *kids * ts->n);
        if (!kids)
            return mt_nomem(e);
        for (uint32_t i = 0; i < ts->n; i++) {
            if (qr_invfield_check_term(f, &ts->v[i], e) != 0)
                return NULL;
            if (!(kids[i] = qr_it_postings(a, f, &ts->v[i])))
                return mt_nomem(e);
        }
        qr_it *it = qr_it_or(a, kids, ts->n);
        return it ? it : mt_nomem(e);
    }
    /* many terms, or dense ones: materialise a bitmap */
    uint32_t rows = f->rows;
    uint64_t *bits = bm_new(a, rows);
    if (!bits)
        return mt_nomem(e);
    for (uint32_t i = 0; i < ts->n; i++) {
        if (ts->v[i].has_bitmap) {
            const unsigned char *b = qr_invfield_bitmap(f, &ts->v[i], e);
            if (!b)
                return NULL;
            bm_apply(bits, b, nwords(rows), BM_OR);
            continue;
        }
        qr_pcursor c;
        if (qr_invfield_cursor(f, &ts->v[i], &c, e) != 0)
            return NULL;
        if (qr_pc_set_bits(&c, bits, rows) < 0) /* a decoded block at a time */
            return (void)qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s postings (index section %u)",
                                 ss->seg->path, f->def.name, f->def.sec),
                   NULL;
    }
    qr_it *it = qr_it_bitmap(a, bits, rows, bm_count_words(bits, nwords(rows)));
    return it ? it : mt_nomem(e);
}

/* The automaton of node q, compiled once per run. NULL with e set. */
static qr_aut *node_aut(qr_segsearch *ss, const qr_query *q, qr_err *e)
{
    qr_qrun *run = mt_run(ss);
    qr_aut *aut = run_get(run, q);
    if (!aut) {
        aut = q->type == Q_PREFIX   ? qr_aut_prefix(q->text, q->len, e)
              : q->type == Q_REGEXP ? qr_aut_regexp(q->text, q->len, e)
              : q->type == Q_LIKE   ? qr_aut_like(q->text, q->len, e)
                                    : qr_aut_fuzzy(q->text, q->len, q->k, e);
        if (!aut)
            return NULL;
        /* kept in the run, so later segments of this thread reuse the DFA
         * states built so far; the tree stays untouched */
        if (qr_aut_set_ctx(aut, run->ctx) != 0 || run_put(run, q, aut) != 0) {
            qr_aut_free(aut);
            return (void)qr_qctx_nomem(run->ctx, e), NULL;
        }
    }
    return aut;
}

/* The classes of the bytes the automaton requires (returned) and of its
 * literal prefix (*lit_classes). */
static uint64_t aut_classes(const qr_aut *aut, uint64_t *lit_classes)
{
    uint64_t req[4], need = 0;
    qr_aut_required_bytes(aut, req);
    for (unsigned w = 0; w < 4; w++) /* a few bytes: their bits only */
        for (uint64_t x = req[w]; x; x &= x - 1)
            need |= 1ull << qr_tdict_byte_class((unsigned char)(w * 64 + __builtin_ctzll(x)));
    const char *lit;
    size_t litn = qr_aut_literal_prefix(aut, &lit);
    *lit_classes = 0;
    for (size_t i = 0; i < litn; i++)
        *lit_classes |= 1ull << qr_tdict_byte_class((unsigned char)lit[i]);
    return need;
}

/* The byte classes every match has (those of the bytes the automaton
 * requires, qr_aut_required_bytes: a LIKE pattern's literal bytes, a
 * regexp's fixed ones): a dictionary block whose mask lacks one holds no
 * match, and the walk passes over it (past the terms with the literal
 * prefix too, ending the length early). None when the literal prefix
 * alone has them all: the walk enters blocks by seeking to it, so every
 * block it enters has them (a prefix walk checks no masks). */
static uint64_t aut_needs(const qr_aut *aut)
{
    uint64_t lit, need = aut_classes(aut, &lit);
    return (need & ~lit) ? need : 0;
}

/* Every byte class a match has, the literal prefix's too: what a walk
 * that enters blocks by their masks alone, not by seeking, can ask. */
static uint64_t aut_needs_all(const qr_aut *aut)
{
    uint64_t lit, need = aut_classes(aut, &lit);
    return need | lit;
}

/* The matched words of a walk by words (expand_by_words): indexes into
 * the shape words. */
typedef struct word_matches {
    uint32_t *w, n;
} word_matches;

/* Their rows summed, each word's the rows of its shapes (its df). */
static uint64_t words_df(const shape_marks *m, const word_matches *wm)
{
    uint64_t df = 0;
    for (uint32_t i = 0; i < wm->n; i++)
        for (uint32_t o = m->sw->first[wm->w[i]]; o < m->sw->first[wm->w[i] + 1]; o++)
            df += m->rows[m->sw->occ[o].shape];
    return df;
}

/* Dictionary blocks, by number. */
typedef struct block_list {
    uint32_t *b, n;
} block_list;

/* The blocks whose variable masks have every class of `need`, in order,
 * into l (the query's arena); past `max` of them the list stops at max + 1
 * (the caller wants few). 0, or -1 with e set. */
static int vmask_blocks(const qr_tdict *d, uint64_t need, uint32_t max, qr_arena *a, block_list *l,
                        qr_err *e)
{
    l->n = 0;
    size_t cap = max < d->nblocks ? (size_t)max + 1 : d->nblocks;
    if (!(l->b = qr_arena_alloc(a, sizeof *l->b * (cap ? cap : 1))))
        return (void)mt_nomem(e), -1;
    for (uint32_t b = 0; l->n <= max; b++) {
        if (qr_tdict_find_vmask(d, b, need, &b, e) != 0)
            return -1;
        if (b >= d->nblocks)
            return 0;
        l->b[l->n++] = b;
    }
    return 0;
}

/* A pattern with a literal prefix goes by words when its matches may have
 * at least this many term lengths and its variable matches lie in at most
 * this many dictionary blocks (see mt_count_multi). */
#define WORDS_PREFIX_LENGTHS 8u
#define WORDS_PREFIX_BLOCKS  16u

/* How many term lengths the automaton's matches may have, counted up to
 * cap. */
static uint32_t aut_lengths(qr_aut *aut, uint32_t cap)
{
    qr_aut_state s0 = qr_aut_start(aut);
    uint32_t n = 0;
    for (uint32_t l = qr_aut_next_len(aut, s0, 0); l != UINT32_MAX && n < cap;
         l = qr_aut_next_len(aut, s0, l + 1))
        n++;
    return n;
}

/* The shape words (SHAPEWORDS: every term of the field that is not
 * variable) the automaton accepts, into wm (the query's arena), each
 * marking its shapes. 0, or -1 with e set. */
static int walk_shape_words(qr_segsearch *ss, qr_aut *aut, shape_marks *m, qr_arena *a,
                            word_matches *wm, qr_err *e)
{
    const qr_shape_words *sw = m->sw;
    memset(wm, 0, sizeof *wm);
    if (!(wm->w = qr_arena_alloc(a, sizeof *wm->w * (sw->nw ? sw->nw : 1))))
        return (void)mt_nomem(e), -1;
    /* the words in byte order: each walks the automaton from the prefix it
     * shares with the one before (st[0..valid]: the states of that one's
     * first bytes) */
    qr_aut_state st[QR_MAX_TERM + 1];
    st[0] = qr_aut_start(aut);
    size_t valid = 0, prevn = 0;
    const unsigned char *prev = NULL;
    for (uint32_t i = 0; i < sw->nw; i++) {
        if ((i & 63) == 0 && mt_tick(ss, e) != 0)
            return -1;
        const unsigned char *t = sw->bytes + sw->ends[i];
        size_t n = sw->ends[i + 1] - sw->ends[i], sh = 0;
        if (n > QR_MAX_TERM) { /* no term is that long: none of the walk */
            if (!qr_aut_matches(aut, (const char *)t, n))
                continue;
        } else {
            size_t lim = n < prevn ? n : prevn;
            lim = lim < valid ? lim : valid;
            while (sh < lim && prev[sh] == t[sh])
                sh++;
            size_t live = qr_aut_walk(aut, st[sh], t + sh, n - sh, st + sh + 1);
            valid = sh + live;
            prev = t;
            prevn = n;
            if (live < n - sh || !qr_aut_accepts(aut, st[n]))
                continue;
        }
        wm->w[wm->n++] = i;
        for (uint32_t o = sw->first[i]; o < sw->first[i + 1]; o++) {
            uint32_t j = sw->occ[o].shape;
            if (!m->mark[j]) { /* a shape's rows counted once */
                m->mark[j] = 1;
                m->marked_rows += m->rows[j];
            }
        }
    }
    return 0;
}

/* Dictionary block b's variable terms the automaton accepts (from the
 * literal prefix on), into out and the marks' vars: the others are the
 * shape words'. 0, or -1 with e set. */
static int walk_var_block(qr_segsearch *ss, qr_invfield *f, qr_aut *aut, uint32_t b,
                          const char *lit, size_t litn, termset *out, qr_err *e)
{
    shape_marks *m = out->marks;
    qr_titer it;
    int r = qr_tdict_seek_block(&f->dict, &it, b, e);
    out->blocks++;
    for (; r == 1 && it.blk == b; r = qr_titer_next(&it, e)) {
        if (mt_tick(ss, e) != 0)
            return -1;
        int lv = litn ? vs_literal(&it, lit, litn) : 0;
        if (lv > 0)
            break; /* past the terms with the literal prefix (sorted) */
        if (lv < 0 || !qr_shape_variable(it.term, it.len) || !qr_aut_matches(aut, it.term, it.len))
            continue;
        qr_terminfo ti;
        if (qr_titer_info(&it, &ti, e) != 0)
            return -1;
        m->variable = 1;
        if (mt_termset_add(out, &ti) != 0 || mt_termset_add(m->vars, &ti) != 0)
            return qr_qctx_nomem(out->ctx, e);
    }
    return r < 0 ? -1 : 0;
}

/* A count's walk by words, for a dictionary with variable masks (format
 * 13), after the shape words' (walk_shape_words): the dictionary is
 * entered only at the blocks of vb (those whose variable
 * terms have every class a match needs, vmask_blocks) of a term length the
 * automaton can end in, for the variable matches, which go to out and the
 * marks' vars as expand puts them. LIKE '%tion' enters ~2 blocks of a
 * segment's ~3,950 instead of ~26: the blocks of words, of numbers next to
 * words, of names with a digit, all pass the byte classes of the terms but
 * not those of the variable ones. 0, or -1 with e set. */
static int expand_by_words(qr_segsearch *ss, qr_invfield *f, qr_aut *aut, const block_list *vb,
                           termset *out, qr_err *e)
{
    const qr_tdict *d = &f->dict;
    qr_aut_state s0 = qr_aut_start(aut);
    const char *lit;
    size_t litn = qr_aut_literal_prefix(aut, &lit);
    for (uint32_t k = 0, cpl; k < vb->n; k++) {
        if (qr_tdict_block_cpl(d, vb->b[k], &cpl, e) != 0)
            return -1;
        if (qr_aut_can_end(aut, s0, cpl) && /* a match may have its terms' length */
            walk_var_block(ss, f, aut, vb->b[k], lit, litn, out, e) != 0)
            return -1;
    }
    return qr_aut_error(aut, e);
}

/* At most this many blocks of one length a fuzzy term's count enters by
 * their variable masks (expand_by_lengths); past it, the length's walk. */
#define LENGTH_BLOCKS 16u

/* The byte classes of the digits: a variable term of a length other than
 * 4 or 8 and more has one (a piece of only a-f is variable at those
 * lengths alone, qr_shape_variable). */
static uint64_t digit_classes(void)
{
    uint64_t m = 0;
    for (unsigned char c = '0'; c <= '9'; c++)
        m |= 1ull << qr_tdict_byte_class(c);
    return m;
}

/* What a fuzzy term's matches have: the byte classes the automaton
 * requires (need), and all but at most `miss` of the classes of the
 * term's ASCII bytes (cls): an edit takes one character away, so k edits
 * leave all but k of them (`failde~1`: 5 of f, a, i, l, d, e), each of
 * one byte and one class. */
typedef struct fuzzy_classes {
    uint64_t need, cls;
    uint32_t miss;
} fuzzy_classes;

static fuzzy_classes fuzzy_classes_of(const qr_query *q, uint64_t need)
{
    fuzzy_classes fc = {need, 0, q->k};
    for (size_t i = 0; i < q->len; i++)
        if ((unsigned char)q->text[i] < 0x80)
            fc.cls |= 1ull << qr_tdict_byte_class((unsigned char)q->text[i]);
    return fc;
}

/* Whether m has more than `miss` bits set (cleared one at a time: no
 * popcount call without -mpopcnt). */
static inline int more_than(uint64_t m, uint32_t miss)
{
    for (uint32_t i = 0; i < miss && m; i++)
        m &= m - 1;
    return m != 0;
}

/* A block whose variable terms' classes (vmask) may hold a match: with
 * the classes fc asks for, and a digit (dig) where a variable term of the
 * block's length must have one. */
static inline int fuzzy_block_may(const fuzzy_classes *fc, uint64_t vmask, uint64_t dig)
{
    return !more_than(fc->cls & ~vmask, fc->miss) && (vmask & fc->need) == fc->need &&
           (!dig || (vmask & dig));
}

/* A fuzzy term's count by words (format 13), after the shape words'
 * (walk_shape_words): at each length the automaton can end in, the
 * variable matches: from the blocks of that length whose variable
 * masks may hold one (fuzzy_block_may) when at most LENGTH_BLOCKS, else by
 * the walk of that length (expand, keeping the variable matches alone).
 * `cahce~1` at 100M rows: no block of length 5 or 6 has a variable term
 * with three of c, a, h, e and a digit, so of its ~40 seeks a segment (a
 * substitution or an insertion at each first byte) only length 4's
 * remain, where the hex pieces (`cace`) are. 0, or -1 with e set. */
static int expand_by_lengths(qr_segsearch *ss, qr_invfield *f, qr_aut *aut, const fuzzy_classes *fc,
                             termset *out, qr_err *e)
{
    const qr_tdict *d = &f->dict;
    qr_aut_state s0 = qr_aut_start(aut);
    const char *lit;
    size_t litn = qr_aut_literal_prefix(aut, &lit);
    uint64_t digits = digit_classes();
    uint32_t lo = 0, hi = 0, have = UINT32_MAX; /* [lo, hi): the blocks of length `have` */
    for (uint32_t l = qr_aut_next_len(aut, s0, 0); l != UINT32_MAX;
         l = qr_aut_next_len(aut, s0, l + 1)) {
        if (have == UINT32_MAX || l != have + 1) {
            if (qr_tdict_len_start(d, l, &lo, e) != 0)
                return -1;
        } else {
            lo = hi;
        }
        if (qr_tdict_len_start(d, l + 1, &hi, e) != 0)
            return -1;
        have = l;
        if (lo >= d->nblocks)
            break; /* no term is that long */
        uint64_t dig = l == 4 || l >= 8 ? 0 : digits;
        /* the masks a few hundred at a time (verified, then scanned in
         * place), until more than LENGTH_BLOCKS pass */
        uint32_t pick[LENGTH_BLOCKS], n = 0;
        for (uint32_t b = lo; b < hi && n <= LENGTH_BLOCKS;) {
            uint32_t end = hi - b > 512 ? b + 512 : hi;
            if (qr_tdict_check_vmasks(d, b, end - b, e) != 0)
                return -1;
            for (; b < end; b++)
                if (fuzzy_block_may(fc, d->blk_vmask[b], dig)) {
                    if (n == LENGTH_BLOCKS) {
                        n++;
                        break;
                    }
                    pick[n++] = b;
                }
        }
        if (n > LENGTH_BLOCKS) {
            len_range only = {l, l, 1};
            if (expand(ss, f, aut, aut_needs(aut), &only, out, e) != 0)
                return -1;
            continue;
        }
        for (uint32_t k = 0; k < n; k++)
            if (walk_var_block(ss, f, aut, pick[k], lit, litn, out, e) != 0)
                return -1;
    }
    return qr_aut_error(aut, e);
}

/* The lists of the words a walk by words matched, into ts: for a count
 * that needs every match's rows after all. 0, or -1 with e set (a shape
 * word the dictionary lacks is a corrupt segment). */
static int add_word_lists(qr_segsearch *ss, qr_invfield *f, const word_matches *wm, termset *ts,
                          qr_err *e)
{
    const qr_shape_words *sw = qr_invfield_shape_words(f);
    for (uint32_t i = 0; i < wm->n; i++) {
        const char *t = (const char *)sw->bytes + sw->ends[wm->w[i]];
        size_t n = sw->ends[wm->w[i] + 1] - sw->ends[wm->w[i]];
        qr_terminfo ti;
        int r = qr_tdict_lookup(&f->dict, t, n, &ti, e);
        if (r < 0)
            return -1;
        if (r == 0)
            return qr_errf(e, QR_E_CORRUPT,
                           "segment %s: corrupt: word %u of SHAPEWORDS (%s) is not in the term "
                           "dictionary",
                           ss->seg->path, wm->w[i], f->def.name);
        if (mt_termset_add(ts, &ti) != 0)
            return qr_qctx_nomem(ts->ctx, e);
    }
    return 0;
}

/* The rows holding a variable match (vars) whose shape holds no other
 * match (not marked: those rows are counted by their shapes), deleted
 * rows left out: the variable matches' lists walked, each row's shape
 * number read where it lies (the chunk of SHAPES holding it verified,
 * not the block). 1 with *n, 0 when the field's shapes cannot say, -1
 * with e set. */
static int count_unmarked(qr_segsearch *ss, qr_invfield *f, termset *vars, const uint8_t *mark,
                          qr_arena *a, uint64_t *n, qr_err *e)
{
    *n = 0;
    const qr_shapes *sh;
    if (qr_invfield_shape_numbers(f, &sh, e) != 0)
        return -1;
    if (!sh)
        return 0;
    uint64_t expanded = ss->terms_expanded; /* (the caller counts the terms) */
    qr_it *it = mt_union_of(ss, f, vars, a, e);
    ss->terms_expanded = expanded;
    if (!it)
        return -1;
    /* the rows 64 at a time, their numbers' bytes prefetched first: many
     * rows (`cahce~2`'s hex pieces, ~1,500 a segment at 100M rows) read
     * numbers far apart, each a cache miss */
    for (uint32_t batch[64], nb = 64; nb == 64;) {
        nb = 0;
        for (uint32_t d; nb < 64 && (d = qr_it_next(it)) != QR_NO_DOC;)
            if (!qr_seg_is_deleted(ss->seg, d)) {
                __builtin_prefetch(sh->ids + (((size_t)d * sh->width) >> 3));
                batch[nb++] = d;
            }
        for (uint32_t i = 0, j; i < nb; i++) {
            if (qr_invfield_row_shape(f, sh, batch[i], &j, e) != 0)
                return -1;
            *n += !mark[j];
        }
    }
    if (qr_it_failed(it))
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings met during the search",
                       ss->seg->path);
    return 1;
}

int mt_count_multi(qr_segsearch *ss, const qr_query *q, qr_arena *a, uint64_t *count, qr_err *e)
{
    const char *off = getenv("QUARRY_NO_SHAPES");
    if ((q->type != Q_PREFIX && q->type != Q_REGEXP && q->type != Q_LIKE && q->type != Q_FUZZY) ||
        (off && *off && strcmp(off, "0") != 0))
        return 0;
    qr_invfield *f = qr_segsearch_field(ss, q->field, e);
    if (!f)
        return -1;
    if (!f->def.positions)
        return 0;
    /* the words' shapes and the shapes' rows, not the shapes' text */
    if (qr_invfield_load_shape_words(f, e) != 0 || qr_invfield_load_shape_rows(f, e) != 0)
        return -1;
    shape_marks m = {qr_invfield_shape_words(f), NULL, qr_invfield_shape_rows(f), 0, 0, NULL};
    if (!m.sw || !m.rows)
        return 0;
    uint32_t k = m.sw->k;
    qr_aut *aut = node_aut(ss, q, e);
    if (!aut)
        return -1;
    if (!(m.mark = qr_arena_alloc(a, (size_t)k + 1)))
        return (void)mt_nomem(e), -1;
    memset(m.mark, 0, (size_t)k + 1);
    termset ts = {.ctx = mt_run(ss)->ctx, .marks = &m}, vars = {.ctx = ts.ctx};
    m.vars = &vars;
    /* a dictionary with variable masks and a pattern with bytes to ask
     * for: the shape words, and the blocks variable matches may lie in */
    const char *nov = getenv("QUARRY_NO_VMASKS");
    uint64_t need_all = aut_needs_all(aut);
    word_matches wm = {0};
    block_list vb = {0};
    const char *lit;
    size_t litn = qr_aut_literal_prefix(aut, &lit);
    int vmasks = f->dict.blk_vmask && !(nov && *nov && strcmp(nov, "0") != 0);
    int by_words = vmasks && need_all;
    /* a fuzzy term (a few lengths): by words, and each length's variable
     * matches where they may be (expand_by_lengths), when its matches have
     * classes to ask for */
    fuzzy_classes fc = q->type == Q_FUZZY ? fuzzy_classes_of(q, need_all) : (fuzzy_classes){0};
    int by_lengths = vmasks && q->type == Q_FUZZY && (need_all || more_than(fc.cls, fc.miss));
    if (by_lengths) {
        by_words = 0;
    } else if (by_words && litn) {
        /* a literal prefix: the walk seeks it at each length a match may
         * have (`ord*`: ~17 seeks at 100M rows, each a page of records
         * and one of terms to fault in and verify on a first query; hot,
         * ~0.5 us a segment each); by words (a floor of ~6 us a segment:
         * the shape words' walk) when a match may have many lengths and
         * the variable terms holding its bytes lie in few blocks (`ord*`:
         * 1-2 of ~3,950; `a*`: most); `/c.che/` (one length) seeks */
        by_words = aut_lengths(aut, WORDS_PREFIX_LENGTHS) >= WORDS_PREFIX_LENGTHS;
        if (by_words && vmask_blocks(&f->dict, need_all, WORDS_PREFIX_BLOCKS, a, &vb, e) != 0)
            return -1;
        by_words = by_words && vb.n <= WORDS_PREFIX_BLOCKS;
    } else if (by_words) {
        /* no literal prefix: taken where it spares most blocks, where the variable masks pass few
         * (a 32nd at most: the walk costs little more than the shape words), or at most half as
         * many as the masks do */
        if (vmask_blocks(&f->dict, need_all, UINT32_MAX, a, &vb, e) != 0)
            return -1;
        uint32_t nall = 0;
        if ((uint64_t)vb.n * 32 > f->dict.nblocks && /* many: do the masks pass twice as many? */
            qr_tdict_count_masks(&f->dict, need_all, &nall, e) != 0)
            return -1;
        by_words = (uint64_t)vb.n * 32 <= f->dict.nblocks || (uint64_t)vb.n * 2 <= nall;
    }
    /* by words, or by lengths: the shape words first, then the variable
     * matches where they may lie */
    int rc = by_lengths || by_words ? walk_shape_words(ss, aut, &m, a, &wm, e) : 0;
    if (rc == 0)
        rc = by_lengths ? expand_by_lengths(ss, f, aut, &fc, &ts, e)
             : by_words ? expand_by_words(ss, f, aut, &vb, &ts, e)
                        : expand(ss, f, aut, aut_needs(aut), NULL, &ts, e);
    /* a few rows of variable matches (a hex piece `cace` for `cahce~1`):
     * those rows apart from the shapes, not the union of every list */
    int few = m.variable && vars.total_df * 8 < ts.total_df + (m.variable ? words_df(&m, &wm) : 0),
        r = 0;
    uint64_t unmarked = 0;
    if (rc == 0 && few && (r = count_unmarked(ss, f, &vars, m.mark, a, &unmarked, e)) < 0)
        rc = -1;
    if (rc == 0) {
        qr_plan_node *pn = qr_plan_at(mt_run(ss)->plan, q);
        if (pn) {
            pn->terms += ts.n + wm.n;
            pn->dict_blocks += ts.blocks;
        }
        if (!m.variable || r == 1) { /* a row holds a matched word iff its shape does */
            uint64_t n = m.marked_rows, gone = 0;
            ss->terms_expanded += ts.n + wm.n;
            if (mt_deleted_marked(ss, f, m.mark, &gone, e) != 0) {
                rc = -1;
            } else {
                *count = n - gone + unmarked;
                mt_record(ss, q, NULL,
                          m.variable ? "counted by row shapes and its variable words' rows"
                                     : "counted by row shapes",
                          *count);
            }
        } else if (add_word_lists(ss, f, &wm, &ts, e) != 0) {
            rc = -1;
        } else { /* the words' lists, minus the rows a DELETE removed */
            qr_it *it = mt_live_only(ss, mt_union_of(ss, f, &ts, a, e), a, e);
            if (!it) {
                rc = -1;
            } else {
                mt_record(ss, q, it, NULL, 0);
                *count = qr_it_count(it);
                if (qr_it_failed(it))
                    rc = qr_errf(e, QR_E_CORRUPT,
                                 "segment %s: corrupt postings met during the search",
                                 ss->seg->path);
            }
        }
    }
    qr_qfree(ts.ctx, ts.v);
    qr_qfree(vars.ctx, vars.v);
    return rc == 0 ? 1 : -1;
}

qr_it *mt_multi_term(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    qr_invfield *f = qr_segsearch_field(ss, q->field, e);
    if (!f)
        return NULL;
    qr_aut *aut = node_aut(ss, q, e);
    if (!aut)
        return NULL;
    qr_qrun *run = mt_run(ss);
    termset ts = {.ctx = run->ctx};
    qr_it *it = NULL;
    if (expand(ss, f, aut, aut_needs(aut), NULL, &ts, e) == 0) {
        qr_plan_node *pn = qr_plan_at(run->plan, q);
        if (pn) {
            pn->terms += ts.n;
            pn->dict_blocks += ts.blocks;
        }
        it = mt_union_of(ss, f, &ts, a, e);
    }
    qr_qfree(ts.ctx, ts.v);
    return it;
}
