/* segsearch.c - compiling a filter tree into iterators for one segment
 * (see segsearch.h): the segment's fields, opened on first use, terms,
 * phrases, and the boolean nodes (bitmap algebra for dense children,
 * leapfrog for sparse ones); multi-term nodes are expand.c's, ranges
 * ranges.c's. */
#include "match/match_int.h"

#include <stdlib.h>
#include <string.h>

#include "format/segfmt.h"
#include "automaton/automaton.h"

void qr_segsearch_init(qr_segsearch *ss, qr_segment *seg)
{
    memset(ss, 0, sizeof *ss);
    ss->seg = seg;
}

void qr_segsearch_init_ref(qr_segsearch *ss, qr_segref *ref)
{
    qr_segsearch_init(ss, qr_segref_segment(ref));
    ss->ref = ref;
}

void qr_segsearch_close(qr_segsearch *ss)
{
    if (ss->own.node || ss->own.aut) /* a search's segsearches use its threads' */
        qr_qrun_free(&ss->own);
    if (ss->fields) {
        for (uint32_t i = 0; i < ss->seg->nsecs; i++)
            if (ss->opened >> i & 1)
                qr_invfield_close(&ss->fields[i]);
        free(ss->fields);
    }
    memset(ss, 0, sizeof *ss);
}

qr_invfield *qr_segsearch_field(qr_segsearch *ss, uint16_t sec, qr_err *e)
{
    if (ss->ref)
        return qr_segref_field(ss->ref, sec, e);
    for (uint32_t i = 0; i < ss->seg->nsecs; i++)
        if (ss->seg->secs[i].id == sec) {
            if (!(ss->opened >> i & 1)) {
                if (!ss->fields && !(ss->fields = calloc(ss->seg->nsecs, sizeof *ss->fields))) {
                    qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", ss->seg->path);
                    return NULL;
                }
                if (qr_invfield_open(&ss->fields[i], ss->seg, sec, e) != 0)
                    return NULL;
                ss->opened |= 1ull << i;
            }
            return &ss->fields[i];
        }
    qr_errf(e, QR_E_UNDEFINED_OBJECT,
            "segment %s: has no index %u (the index is newer than the segment)", ss->seg->path,
            sec);
    return NULL;
}

qr_it *mt_nomem(qr_err *e)
{
    qr_errf(e, QR_E_NOMEM, "out of memory: the query needs more than its memory limit");
    return NULL;
}

static qr_it *term_it(qr_segsearch *ss, uint16_t sec, const char *t, size_t n, qr_arena *a,
                      qr_err *e)
{
    qr_invfield *f = qr_segsearch_field(ss, sec, e);
    if (!f)
        return NULL;
    qr_terminfo ti;
    int r = n <= QR_MAX_TERM ? qr_tdict_lookup(&f->dict, t, n, &ti, e) : 0;
    if (r < 0)
        return (void)qr_err_prefix(e, "segment %s: %s index: ", ss->seg->path, f->def.name),
               NULL;
    qr_it *it;
    if (r && ti.has_bitmap) { /* dense term: its bitmap, count = df */
        const unsigned char *bits = qr_invfield_bitmap(f, &ti, e);
        if (!bits)
            return NULL;
        it = qr_it_bitmap(a, bits, f->rows, ti.df);
    } else {
        if (r && qr_invfield_check_term(f, &ti, e) != 0) /* the cursor reads it */
            return NULL;
        it = r ? qr_it_postings(a, f, &ti) : qr_it_empty(a);
    }
    return it ? it : mt_nomem(e);
}

/* The shapes a count of phrase q may use: the field's, verified, when no
 * word of q is variable (its rows of one shape then hold q's words alike);
 * NULL when a word is, the field has none, or QUARRY_NO_SHAPES is set (the
 * tests compare both ways). 0, or -1 with e set. */
static int phrase_shapes(qr_invfield *f, const qr_query *q, qr_phrase_shapes *sh, qr_err *e)
{
    memset(sh, 0, sizeof *sh);
    const char *off = getenv("QUARRY_NO_SHAPES");
    if (off && *off && strcmp(off, "0") != 0)
        return 0;
    for (uint32_t i = 0; i < q->n; i++)
        if (qr_shape_variable(q->terms[i], q->term_lens[i]))
            return 0;
    if (qr_invfield_load_shapes(f, e) != 0)
        return -1;
    if (!qr_invfield_shapes(f))
        return 0;
    if (!(sh->st = qr_invfield_shape_stats(f, e)))
        return -1;
    sh->sh = qr_invfield_shapes(f);
    sh->words = q->terms;
    sh->lens = q->term_lens;
    return 0;
}

int qr_segsearch_phrase_words(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_invfield **f,
                              qr_terminfo **tis, qr_phrase_shapes *sh, qr_err *e)
{
    memset(sh, 0, sizeof *sh);
    if (!(*f = qr_segsearch_field(ss, q->field, e)) || qr_invfield_load_positions(*f, e) != 0)
        return -1;
    if (!(*tis = qr_arena_alloc(a, sizeof **tis * q->n)))
        return (void)mt_nomem(e), -1;
    for (uint32_t i = 0; i < q->n; i++) {
        int r = q->term_lens[i] <= QR_MAX_TERM
                    ? qr_tdict_lookup(&(*f)->dict, q->terms[i], q->term_lens[i], &(*tis)[i], e)
                    : 0;
        if (r <= 0)
            return r;
        if (qr_invfield_check_term(*f, &(*tis)[i], e) != 0) /* what its cursor reads */
            return -1;
    }
    /* dense words' bitmaps give the phrase its candidate rows (phrase.c) */
    for (uint32_t i = 0; i < q->n; i++)
        if ((*tis)[i].has_bitmap && !qr_invfield_bitmap(*f, &(*tis)[i], e))
            return -1;
    return phrase_shapes(*f, q, sh, e) != 0 ? -1 : 1;
}

/* ---- the tree ---- */
static qr_it *compile(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e);

/* How a conjunction evaluates (compile_and), by cost. Its lead is the
 * positive clause with the fewest rows. Another word's list is read whole
 * into a bitmap (~2 ns a doc, plus a few passes over the segment's bitmap
 * words, ~rows / 50 ns) when that is cheaper than advancing it at each of
 * the lead's rows (~40 ns a row: a skip-table step and a block decode);
 * bitmaps, dense words' and these, combine word by word. A lead that is a
 * word's list is then walked with a bit test per doc against that bitmap
 * (~2 ns a doc) unless the bitmap is far rarer. Measured at 10M rows, one
 * thread: `failed AND place` (a 3% word against a 13% dense one) 4.6 ms
 * leapfrogged, 1.3 ms read whole; `timeout AND cache` (two lists) 4.0 ms
 * leapfrogged. */
#define AND_ADVANCE_NS 40u
#define AND_DOC_NS     2u
static int read_whole(const qr_it *it, uint32_t rows, uint64_t lead)
{
    return qr_it_is_postings(it) && AND_DOC_NS * it->cost + rows / 50 < AND_ADVANCE_NS * lead;
}

/* rec: the node the plan records it under (q, or the NOT node q stands for) */
static qr_it *compile_and(qr_segsearch *ss, const qr_query *q, const qr_query *rec, qr_arena *a,
                          qr_err *e)
{
    qr_it **pos = qr_arena_alloc(a, sizeof *pos * q->n);
    qr_it **neg = qr_arena_alloc(a, sizeof *neg * q->n);
    if (!pos || !neg)
        return mt_nomem(e);
    uint32_t np = 0, nn = 0;
    for (uint32_t i = 0; i < q->n; i++) {
        const qr_query *k = q->kids[i];
        qr_it *it = compile(ss, k->type == Q_NOT ? k->kids[0] : k, a, e);
        if (!it)
            return NULL;
        if (k->type == Q_NOT)
            neg[nn++] = it;
        else
            pos[np++] = it;
    }
    uint32_t rows = (uint32_t)ss->seg->rows;
    size_t nw = nwords(rows);
    if (np == 0) { /* only negatives: every row, minus them, as a bitmap */
        uint64_t *acc = bm_new(a, rows);
        if (!acc)
            return mt_nomem(e);
        bm_fill_all(acc, rows);
        uint64_t *tmp = NULL;
        for (uint32_t i = 0; i < nn; i++) {
            const void *nb = qr_it_bitmap_bits(neg[i]);
            if (nb) { /* a bitmap: word by word */
                bm_apply(acc, nb, nw, BM_ANDNOT);
                continue;
            }
            if (qr_it_is_postings(neg[i])) { /* a word: its list a block at a time */
                if (!tmp && !(tmp = bm_new(a, rows)))
                    return mt_nomem(e);
                memset(tmp, 0, nw * 8);
                if (qr_it_postings_bits(neg[i], tmp, rows) >= 0)
                    bm_apply(acc, tmp, nw, BM_ANDNOT);
                continue; /* corrupt: reported below */
            }
            for (uint32_t d = qr_it_next(neg[i]); d != QR_NO_DOC; d = qr_it_next(neg[i])) {
                if (d >= rows)
                    break;
                acc[d >> 6] &= ~(1ull << (d & 63));
            }
        }
        for (uint32_t i = 0; i < nn; i++)
            if (qr_it_failed(neg[i]))
                return (void)qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings",
                                     ss->seg->path),
                       NULL;
        qr_it *it = qr_it_bitmap(a, acc, rows, bm_count_words(acc, nw));
        return it ? it : mt_nomem(e);
    }
    /* the lead, and which clauses join one bitmap (in[i]: positive i,
     * in[np + i]: negative i) */
    uint32_t lead = 0;
    for (uint32_t i = 1; i < np; i++)
        lead = pos[i]->cost < pos[lead]->cost ? i : lead;
    uint64_t lead_rows = pos[lead]->cost;
    if (lead_rows == 0) { /* a clause without rows (cost bounds them) */
        qr_it *it = qr_it_empty(a);
        return it ? it : mt_nomem(e);
    }
    int lead_list = qr_it_is_postings(pos[lead]);
    uint8_t *in = qr_arena_alloc(a, np + nn);
    if (!in)
        return mt_nomem(e);
    uint32_t nin = 0, nwhole = 0, one = UINT32_MAX;
    for (uint32_t i = 0; i < np; i++) {
        int bm = qr_it_bitmap_bits(pos[i]) != NULL;
        in[i] = (uint8_t)(bm || (i != lead && read_whole(pos[i], rows, lead_rows)));
        nwhole += in[i] && !bm;
        nin += in[i];
        one = in[i] ? i : one;
    }
    /* negatives are subtracted from the positives' bitmap, or from every
     * row for a lead word to be probed in */
    int neg_in = nin || (lead_list && nn);
    for (uint32_t i = 0; i < nn; i++) {
        int bm = qr_it_bitmap_bits(neg[i]) != NULL;
        in[np + i] = (uint8_t)(neg_in && (bm || read_whole(neg[i], rows, lead_rows)));
        nwhole += in[np + i] && !bm;
        nin += in[np + i];
    }
    if (nwhole)
        qr_plan_way(mt_run(ss)->plan, rec, "frequent words read whole");
    /* the bitmap: a positive clause's own words when it is the only one,
     * else a copy every other one is ANDed into */
    const void *bits = NULL;
    uint64_t nbits = 0;
    if (nin == 1 && one != UINT32_MAX && !nwhole) {
        bits = qr_it_bitmap_bits(pos[one]);
        nbits = pos[one]->cost;
    } else if (nin) {
        uint64_t *acc = bm_new(a, rows), *tmp = NULL;
        if (!acc)
            return mt_nomem(e);
        int first = 1;
        for (uint32_t i = 0; i < np + nn; i++) {
            if (!in[i])
                continue;
            if (first && i >= np) { /* no positive: every row to start from */
                bm_fill_all(acc, rows);
                first = 0;
            }
            qr_it *it = i < np ? pos[i] : neg[i - np];
            const void *b = qr_it_bitmap_bits(it);
            if (!b) { /* a word read whole */
                uint64_t *to = acc;
                if (!first) {
                    if (!tmp && !(tmp = bm_new(a, rows)))
                        return mt_nomem(e);
                    memset(tmp, 0, nw * 8);
                    to = tmp;
                }
                if (qr_it_postings_bits(it, to, rows) < 0)
                    return (void)qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings",
                                         ss->seg->path),
                           NULL;
                b = to;
            }
            if (first && b != acc)
                memcpy(acc, b, nw * 8);
            else if (!first)
                bm_apply(acc, b, nw, i < np ? BM_AND : BM_ANDNOT);
            first = 0;
        }
        bits = acc;
        nbits = bm_count_words(acc, nw);
    }
    /* what is left: clauses outside the bitmap, and the bitmap itself or
     * the lead probed in it */
    uint32_t kp = 0, kn = 0;
    int probe = bits && lead_list && !in[lead] && AND_DOC_NS * lead_rows <= AND_ADVANCE_NS * nbits;
    for (uint32_t i = 0; i < np; i++) {
        if (in[i])
            continue;
        if (probe && i == lead) {
            if (!(pos[kp++] = qr_it_postings_in(a, pos[i], bits, rows)))
                return mt_nomem(e);
            continue;
        }
        pos[kp++] = pos[i];
    }
    if (bits && !probe && !(pos[kp++] = qr_it_bitmap(a, bits, rows, nbits)))
        return mt_nomem(e);
    for (uint32_t i = 0; i < nn; i++)
        if (!in[np + i])
            neg[kn++] = neg[i];
    qr_it *inc = kp == 1 ? pos[0] : qr_it_and(a, pos, kp);
    if (inc && kn)
        inc = qr_it_andnot(a, inc, kn == 1 ? neg[0] : qr_it_or(a, neg, kn));
    return inc ? inc : mt_nomem(e);
}

/* Whether a union's members cost less read into one bitmap than merged
 * in a heap (bm_union_cheaper). */
static int union_cheaper(qr_it **kids, uint32_t n, uint32_t rows)
{
    uint64_t docs = 0;
    for (uint32_t i = 0; i < n; i++)
        docs += kids[i]->cost;
    return bm_union_cheaper(docs, rows);
}

static qr_it *compile_node(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    switch (q->type) {
    case Q_ALL: {
        qr_it *it = qr_it_range(a, 0, (uint32_t)ss->seg->rows);
        return it ? it : mt_nomem(e);
    }
    case Q_TERM:
        if (!q->field)
            return mt_scan_text(ss, q, a, e);
        return term_it(ss, q->field, q->text, q->len, a, e);
    case Q_PHRASE: {
        qr_invfield *f;
        qr_terminfo *tis;
        qr_phrase_shapes sh;
        int r = qr_segsearch_phrase_words(ss, q, a, &f, &tis, &sh, e);
        if (r < 0)
            return NULL;
        qr_it *it = r ? qr_it_phrase(a, f, tis, q->offs, q->n, q->within, &sh) : qr_it_empty(a);
        return it ? it : mt_nomem(e);
    }
    case Q_AND:
        return compile_and(ss, q, q, a, e);
    case Q_NOT: {
        qr_query and1 = {.type = Q_AND, .n = 1, .kids = (qr_query **)&q};
        return compile_and(ss, &and1, q, a, e);
    }
    case Q_OR:
    case Q_MINMATCH: {
        qr_it **kids = qr_arena_alloc(a, sizeof *kids * q->n);
        if (!kids)
            return mt_nomem(e);
        uint32_t nb = 0;
        for (uint32_t i = 0; i < q->n; i++) {
            if (!(kids[i] = compile(ss, q->kids[i], a, e)))
                return NULL;
            nb += qr_it_bitmap_bits(kids[i]) != NULL;
        }
        /* one bitmap (or bit-sliced counter) with a dense member, or when
         * the members' rows make it cheaper than a heap (union_cheaper) */
        int as_bits = nb >= 1 || union_cheaper(kids, q->n, (uint32_t)ss->seg->rows);
        if (q->type == Q_MINMATCH && as_bits && q->k >= 2 && q->k < q->n) {
            /* at least k of n, word by word: plane[j] has the bits set in
             * at least j children so far (saturating bit-sliced counter) */
            uint32_t rows = (uint32_t)ss->seg->rows;
            size_t nw = nwords(rows);
            uint64_t **plane = qr_arena_alloc(a, sizeof *plane * (q->k + 1));
            uint64_t *tmp = bm_new(a, rows);
            if (!plane || !tmp)
                return mt_nomem(e);
            for (uint32_t j = 1; j <= q->k; j++)
                if (!(plane[j] = bm_new(a, rows)))
                    return mt_nomem(e);
            for (uint32_t i = 0; i < q->n; i++) {
                const void *b = qr_it_bitmap_bits(kids[i]);
                if (!b) {
                    memset(tmp, 0, nw * 8);
                    if (bm_add_iter(tmp, kids[i], rows) != 0)
                        return (void)qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings",
                                             ss->seg->path),
                               NULL;
                    b = tmp;
                }
                for (size_t w = 0; w < nw; w++) {
                    uint64_t x = load_word(b, w);
                    for (uint32_t j = q->k; j >= 2; j--)
                        plane[j][w] |= plane[j - 1][w] & x;
                    plane[1][w] |= x;
                }
            }
            qr_it *it = qr_it_bitmap(a, plane[q->k], rows, bm_count_words(plane[q->k], nw));
            return it ? it : mt_nomem(e);
        }
        if (q->type == Q_OR && as_bits && q->n >= 2) {
            uint32_t rows = (uint32_t)ss->seg->rows;
            uint64_t *acc = bm_new(a, rows);
            if (!acc)
                return mt_nomem(e);
            for (uint32_t i = 0; i < q->n; i++) {
                const void *b = qr_it_bitmap_bits(kids[i]);
                if (b)
                    bm_apply(acc, b, nwords(rows), BM_OR);
                else if (bm_add_iter(acc, kids[i], rows) != 0)
                    return (void)qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings",
                                         ss->seg->path),
                           NULL;
            }
            qr_it *it = qr_it_bitmap(a, acc, rows, bm_count_words(acc, nwords(rows)));
            return it ? it : mt_nomem(e);
        }
        qr_it *it = q->type == Q_OR ? qr_it_or(a, kids, q->n)
                                    : qr_it_minmatch(a, kids, q->n, q->k);
        return it ? it : mt_nomem(e);
    }
    case Q_PREFIX:
    case Q_REGEXP:
    case Q_LIKE:
    case Q_FUZZY:
        return mt_multi_term(ss, q, a, e);
    case Q_INT_RANGE:
        return mt_int_range(ss, q, a, e);
    case Q_TIME_RANGE:
        return mt_time_range(ss, q, a, e);
    }
    qr_errf(e, QR_E_INTERNAL, "query node type %d", (int)q->type);
    return NULL;
}

void mt_record(qr_segsearch *ss, const qr_query *q, const qr_it *it, const char *how, uint64_t est)
{
    qr_plan *pl = mt_run(ss)->plan;
    if (!pl)
        return;
    qr_plan_node *n = qr_plan_at(pl, q);
    if (n) {
        n->segments++;
        n->est_rows += it ? it->cost : est;
    }
    if (it) {
        how = it->vt->name;
        int boolean = q->type == Q_AND || q->type == Q_OR || q->type == Q_NOT ||
                      q->type == Q_MINMATCH;
        int multi = q->type == Q_PREFIX || q->type == Q_REGEXP || q->type == Q_LIKE ||
                    q->type == Q_FUZZY;
        if (boolean && qr_it_bitmap_bits(it))
            how = "bitmap algebra";
        else if (multi && qr_it_bitmap_bits(it))
            how = "terms' union as a bitmap";
        else if (multi && !strcmp(how, "heap"))
            how = "terms' union by a heap";
    }
    qr_plan_way(pl, q, how);
}

/* Every node goes through here: with a plan, what it became is recorded. */
static qr_it *compile(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    qr_it *it = compile_node(ss, q, a, e);
    if (it)
        mt_record(ss, q, it, NULL, 0);
    return it;
}

/* The matches of it that a DELETE has not removed (qr_segment.deleted):
 * a bitmap or a row range stays a bitmap (the deleted words cleared, so
 * counts and selections keep their word-at-a-time paths); any other
 * iterator is walked minus the deleted rows' bitmap. */
qr_it *mt_live_only(qr_segsearch *ss, qr_it *it, qr_arena *a, qr_err *e)
{
    const qr_segment *seg = ss->seg;
    if (!it || !seg->deleted)
        return it;
    uint32_t rows = (uint32_t)seg->rows, lo, hi;
    const void *b = qr_it_bitmap_bits(it);
    if (b || qr_it_range_bounds(it, &lo, &hi)) {
        uint64_t *acc = bm_new(a, rows);
        if (!acc)
            return mt_nomem(e);
        if (b) {
            memcpy(acc, b, nwords(rows) * 8);
        } else {
            for (uint32_t r = lo; r < hi && r < rows;) {
                if ((r & 63) == 0 && r + 64 <= hi) {
                    acc[r >> 6] = ~0ull;
                    r += 64;
                } else {
                    acc[r >> 6] |= 1ull << (r & 63);
                    r++;
                }
            }
        }
        bm_apply(acc, seg->deleted, nwords(rows), BM_ANDNOT);
        qr_it *live = qr_it_bitmap(a, acc, rows, bm_count_words(acc, nwords(rows)));
        return live ? live : mt_nomem(e);
    }
    qr_it *gone = qr_it_bitmap(a, seg->deleted, rows, seg->ndeleted);
    qr_it *live = gone ? qr_it_andnot(a, it, gone) : NULL;
    return live ? live : mt_nomem(e);
}

int qr_segsearch_row_bounds(qr_segsearch *ss, const qr_query *q, qr_arena *a, uint32_t *lo,
                            uint32_t *hi, qr_err *e)
{
    *lo = 0;
    *hi = (uint32_t)ss->seg->rows;
    uint32_t n = q->type == Q_AND ? q->n : 1;
    for (uint32_t i = 0; i < n; i++) {
        const qr_query *k = q->type == Q_AND ? q->kids[i] : q;
        if (k->type != Q_TIME_RANGE)
            continue;
        qr_it *it = compile_node(ss, k, a, e); /* (not recorded in a plan) */
        uint32_t l, h;
        if (!it)
            return -1;
        if (qr_it_range_bounds(it, &l, &h)) { /* the sort column's binary search */
            *lo = l > *lo ? l : *lo;
            *hi = h < *hi ? h : *hi;
        } else if (!strcmp(it->vt->name, "empty")) {
            *lo = *hi = 0;
        }
    }
    if (*lo > *hi)
        *lo = *hi;
    return 0;
}

qr_it *qr_segsearch_compile(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    return mt_live_only(ss, compile(ss, q, a, e), a, e);
}

qr_it *qr_segsearch_compile_unrecorded(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    qr_plan **pl = ss->run ? &ss->run->plan : &ss->own.plan;
    qr_plan *keep = *pl;
    uint64_t expanded = ss->terms_expanded;
    *pl = NULL;
    qr_it *it = qr_segsearch_compile(ss, q, a, e);
    *pl = keep;
    ss->terms_expanded = expanded;
    return it;
}

int mt_deleted_marked(qr_segsearch *ss, qr_invfield *f, const uint8_t *mark, uint64_t *n, qr_err *e)
{
    *n = 0;
    if (!ss->seg->deleted)
        return 0;
    int r = qr_invfield_rows_in_shapes(f, ss->seg->deleted, mark, n, e);
    if (r == 0)
        return qr_errf(e, QR_E_INTERNAL,
                       "segment %s: %s index: deleted rows' shapes before the shapes",
                       ss->seg->path, f->def.name);
    return r < 0 ? -1 : 0;
}

/* A count of phrase q alone, from the shapes' text (qr_phrase_count_text):
 * the words' lists, bitmaps and (without deletions) the rows' shape
 * numbers are never read, nor verified, so a first query pays for the text
 * only; rows a DELETE removed are taken off by their shapes. 1 counted, 0
 * when the shapes cannot say (a word variable, no shapes,
 * QUARRY_NO_SHAPES, a shape too long), -1 with e set. */
static int count_phrase_text(qr_segsearch *ss, const qr_query *q, qr_arena *a, uint64_t *count,
                             qr_err *e)
{
    const char *off = getenv("QUARRY_NO_SHAPES");
    if (q->type != Q_PHRASE || (off && *off && strcmp(off, "0") != 0))
        return 0;
    for (uint32_t i = 0; i < q->n; i++)
        if (qr_shape_variable(q->terms[i], q->term_lens[i]))
            return 0;
    qr_invfield *f = qr_segsearch_field(ss, q->field, e);
    if (!f || qr_invfield_load_shape_text(f, e) != 0)
        return -1;
    qr_phrase_shapes ps = {qr_invfield_shape_text(f), NULL, (const char *const *)q->terms,
                           q->term_lens};
    if (!ps.sh)
        return 0;
    if (!(ps.st = qr_invfield_shape_stats(f, e)))
        return -1;
    uint8_t *holds = ss->seg->deleted ? qr_arena_alloc(a, (size_t)ps.sh->k + 1) : NULL;
    if (ss->seg->deleted && !holds)
        return (void)mt_nomem(e), -1;
    /* only the shapes holding every word can hold the phrase: their lists
     * (in shape order) merged, where before every shape's text was searched
     * for the longest word (two thirds of a hot count at 100M rows) */
    if (qr_invfield_load_shape_words(f, e) != 0)
        return -1;
    const qr_shape_words *sw = qr_invfield_shape_words(f);
    qr_shape_occ *cand = NULL;
    uint32_t ncand = UINT32_MAX; /* (every shape: no SHAPEWORDS to say) */
    if (sw && q->n <= QR_SHAPE_WORDS_ALL_MAX &&
        qr_shape_words_all(sw, (const char *const *)q->terms, q->term_lens, q->n, 0, a, &cand,
                           &ncand) != 0)
        return (void)mt_nomem(e), -1;
    int64_t n = qr_phrase_count_text(&ps, q->offs, q->n, q->within, cand, ncand, holds);
    if (n < 0)
        return 0;
    uint64_t gone = 0;
    if (holds && mt_deleted_marked(ss, f, holds, &gone, e) != 0)
        return -1;
    *count = (uint64_t)n - gone;
    mt_record(ss, q, NULL, "counted by row shapes", *count);
    return 1;
}

/* A term counted alone is its document frequency, in its dictionary entry
 * (read from a verified chunk like every lookup): its bitmap or postings
 * need not be read, nor verified (a count of a dense word read and hashed
 * its rows/8-byte bitmap in every segment, most of a first count's reading).
 * Not when rows were deleted: those are in df. 1 with *count, 0 when q is
 * not a lone term, -1 with e set. */
static int count_term_df(qr_segsearch *ss, const qr_query *q, uint64_t *count, qr_err *e)
{
    if (q->type != Q_TERM || !q->field || ss->seg->deleted)
        return 0;
    qr_invfield *f = qr_segsearch_field(ss, q->field, e);
    if (!f)
        return -1;
    qr_terminfo ti;
    int r = q->len <= QR_MAX_TERM ? qr_tdict_lookup(&f->dict, q->text, q->len, &ti, e) : 0;
    if (r < 0)
        return (void)qr_err_prefix(e, "segment %s: %s index: ", ss->seg->path, f->def.name), -1;
    *count = r ? ti.df : 0;
    mt_record(ss, q, NULL, "counted by the term's document frequency", *count);
    return 1;
}

int qr_segsearch_count(qr_segsearch *ss, const qr_query *q, qr_arena *a, uint64_t *count,
                       qr_err *e)
{
    /* a lone term from its dictionary entry; a multi-term node or a phrase
     * alone from the row shapes where they can say */
    int r = count_term_df(ss, q, count, e);
    if (r == 0)
        r = mt_count_multi(ss, q, a, count, e);
    if (r == 0)
        r = count_phrase_text(ss, q, a, count, e);
    if (r != 0)
        return r < 0 ? -1 : 0;
    qr_it *it = qr_segsearch_compile(ss, q, a, e);
    if (!it)
        return -1;
    *count = qr_it_count(it);
    if (qr_it_failed(it))
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings met during the search",
                       ss->seg->path);
    return 0;
}
