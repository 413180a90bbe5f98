/* exec.c - compiling a filter tree into iterators for one segment (see
 * exec.h). Multi-term queries walk the term dictionary with an automaton,
 * keeping the automaton state for every prefix depth so consecutive terms
 * only feed their new suffix bytes, and seeking, when the automaton dies,
 * straight to the next string it can still continue. */
#include "search/exec.h"

#include <stdlib.h>
#include <string.h>

#include "format/segfmt.h"
#include "search/automaton.h"

void qr_segsearch_init(qr_segsearch *ss, qr_segment *seg)
{
    memset(ss, 0, sizeof *ss);
    ss->seg = seg;
}

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

void qr_segsearch_close(qr_segsearch *ss)
{
    qr_qrun_free(&ss->own);
    for (uint32_t i = 0; i < QR_SEG_MAX_SECTIONS_PUBLIC; i++)
        if (ss->opened[i])
            qr_invfield_close(&ss->fields[i]);
    memset(ss, 0, sizeof *ss);
}

qr_invfield *qr_segsearch_field(qr_segsearch *ss, uint16_t sec, qr_err *e)
{
    for (uint32_t i = 0; i < ss->seg->nsecs; i++)
        if (ss->seg->secs[i].id == sec) {
            if (!ss->opened[i]) {
                if (qr_invfield_open(&ss->fields[i], ss->seg, sec, e) != 0)
                    return NULL;
                ss->opened[i] = 1;
            }
            return &ss->fields[i];
        }
    qr_errf(e, QR_E_UNDEFINED_OBJECT,
            "segment %s: has no index %u (the index is newer than the segment)", ss->seg->path,
            sec);
    return NULL;
}

static qr_it *nomem(qr_err *e)
{
    qr_errf(e, QR_E_NOMEM, "query: out of memory (query memory limit)");
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
    return it ? it : nomem(e);
}

/* ---- word-wise set operations on bitmaps (dense terms, expansions) ---- */
static size_t nwords(uint32_t rows) { return ((size_t)rows + 63) / 64; }

static uint64_t *bm_new(qr_arena *a, uint32_t rows)
{
    uint64_t *w = qr_arena_alloc(a, nwords(rows) * 8 + 8);
    if (w)
        memset(w, 0, nwords(rows) * 8 + 8);
    return w;
}

static uint64_t load_word(const void *p, size_t i)
{
    uint64_t v;
    memcpy(&v, (const unsigned char *)p + i * 8, 8);
    return v;
}

enum { BM_AND, BM_ANDNOT, BM_OR };
static void bm_apply(uint64_t *dst, const void *src, size_t words, int op)
{
    for (size_t i = 0; i < words; i++) {
        uint64_t v = load_word(src, i);
        dst[i] = op == BM_AND ? dst[i] & v : op == BM_ANDNOT ? dst[i] & ~v : dst[i] | v;
    }
}

static uint64_t bm_count_words(const uint64_t *w, size_t words)
{
    uint64_t n = 0;
    for (size_t i = 0; i < words; i++)
        n += (uint64_t)__builtin_popcountll(w[i]);
    return n;
}

/* Set the bits of every doc of `it` (walks it). */
static int bm_add_iter(uint64_t *dst, qr_it *it, uint32_t rows)
{
    for (uint32_t d = qr_it_next(it); d != QR_NO_DOC; d = qr_it_next(it)) {
        if (d >= rows)
            return -1;
        dst[d >> 6] |= 1ull << (d & 63);
    }
    return qr_it_failed(it) ? -1 : 0;
}

/* ---- multi-term expansion ---- */
typedef struct termset {
    qr_terminfo *v;
    uint32_t n, cap;
    uint64_t total_df;
} termset;

static int termset_add(termset *s, const qr_terminfo *ti)
{
    if (s->n == s->cap) {
        uint32_t nc = s->cap ? s->cap * 2 : 64;
        qr_terminfo *nv = realloc(s->v, sizeof *nv * nc);
        if (!nv)
            return -1;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = *ti;
    s->total_df += ti->df;
    return 0;
}

/* The smallest string > term[0..d] (d = where the automaton died on term)
 * that the automaton can still continue: the same first `depth` bytes and
 * a next byte above term[depth] with a live transition from st[depth],
 * backing up a byte when there is none. Never backs into the literal
 * prefix (`keep` bytes). Returns its length in out, 0 when none is left. */
static size_t next_live(qr_aut *aut, const qr_aut_state *st, const char *term, size_t d,
                        size_t keep, char *out)
{
    for (size_t depth = d + 1; depth-- > keep;) {
        int c = qr_aut_next_byte(aut, st[depth], (unsigned char)term[depth] + 1u);
        if (c >= 0) {
            memcpy(out, term, depth);
            out[depth] = (char)c;
            return depth + 1;
        }
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

/* Walk f's dictionary with automaton `aut`, collecting accepted terms
 * (Lucene's automaton intersection). The dictionary orders terms by code
 * point length, then bytes; the walk takes the lengths the automaton can
 * accept one after the other, and within one it is the classic walk. st[i]
 * is the state after the first i bytes of the last term walked; a new term
 * re-walks only from the prefix it shares with it. When the automaton dies
 * at byte d of a term, the walk seeks straight to the next string the
 * automaton can continue (a live byte above term[d], else above term[d-1],
 * ...), so a dead prefix costs one seek, not a walk over its terms. */
static int expand(qr_invfield *f, qr_aut *aut, uint64_t need, termset *out, qr_err *e)
{
    const char *lit;
    size_t litn = qr_aut_literal_prefix(aut, &lit);
    uint32_t len, len_hi;
    qr_aut_cp_bounds(aut, &len, &len_hi);
    qr_aut_state st[QR_MAX_TERM + 1];
    size_t valid = 0; /* st[0..valid] are states of the previous term's prefix */
    st[0] = qr_aut_start(aut);
    if (!st[0])
        return 0;
    qr_titer it;
    int r = qr_tdict_seek_at(&f->dict, &it, len, lit, litn, e);
    size_t shared = 0; /* bytes the current term shares with the previous one */
    uint32_t checked = UINT32_MAX; /* the last block whose byte classes were checked */
    uint32_t at_blk = 0, at_in = 0; /* where the walk was (block, entries read) */
    while (r == 1) {
        uint32_t cur = qr_titer_cpl(&it);
        if (cur > len_hi)
            break; /* longer than any match */
        len = cur;
        /* every step must move forward: on a damaged dictionary whose order
         * is broken a seek could land back on a term already walked */
        if (it.blk < at_blk || (it.blk == at_blk && it.in_blk <= at_in))
            return qr_errf(e, QR_E_CORRUPT, "corrupt term dictionary (terms out of order)");
        at_blk = it.blk;
        at_in = it.in_blk;
        int lv = litn ? vs_literal(&it, lit, litn) : 0;
        if (lv != 0) { /* to this length's terms with the prefix, or the next length's */
            if (len == UINT32_MAX)
                break;
            r = qr_titer_seek_at(&it, lv < 0 ? len : len + 1, lit, litn, e);
            shared = valid = 0;
            continue;
        }
        if (need && it.blk != checked) {
            checked = it.blk;
            if ((f->dict.blk_mask[it.blk] & need) != need) {
                /* no term of this block has every byte a match needs */
                uint32_t b = it.blk + 1;
                while (b < f->dict.nblocks && (f->dict.blk_mask[b] & need) != need)
                    b++;
                r = qr_tdict_seek_block(&f->dict, &it, b, e);
                shared = valid = 0;
                continue;
            }
        }
        size_t depth = shared < valid ? shared : valid, dead = SIZE_MAX;
        for (size_t i = depth; i < it.len; i++)
            if (!(st[i + 1] = qr_aut_step(aut, st[i], (unsigned char)it.term[i]))) {
                dead = i;
                break;
            }
        if (dead == SIZE_MAX) {
            valid = it.len;
            if (qr_aut_accepts(aut, st[it.len])) {
                qr_terminfo ti;
                if (qr_titer_info(&it, &ti, e) != 0)
                    return -1;
                if (termset_add(out, &ti) != 0)
                    return qr_errf(e, QR_E_NOMEM, "query: out of memory expanding terms");
            }
            r = qr_titer_next(&it, e);
            shared = it.shared;
            continue;
        }
        char target[QR_MAX_TERM + 1];
        size_t tn = next_live(aut, st, it.term, dead, litn, target);
        if (tn == 0) { /* nothing more of this length can be accepted */
            if (len == UINT32_MAX)
                break;
            r = qr_titer_seek_at(&it, len + 1, lit, litn, e);
            shared = valid = 0;
            continue;
        }
        r = qr_titer_seek_at(&it, len, target, tn, e);
        /* st[0..tn-1] hold for target's first tn-1 bytes: keep those the
         * found term shares with it */
        shared = 0;
        while (r == 1 && shared < tn - 1 && shared < it.len && it.term[shared] == target[shared])
            shared++;
        valid = tn - 1;
    }
    if (r < 0)
        return -1;
    return qr_aut_error(aut, e);
}

static qr_it *union_of(qr_segsearch *ss, qr_invfield *f, termset *ts, qr_arena *a, qr_err *e)
{
    ss->terms_expanded += ts->n;
    if (ts->n == 0)
        return qr_it_empty(a) ? qr_it_empty(a) : nomem(e);
    int any_dense = 0;
    for (uint32_t i = 0; i < ts->n; i++)
        any_dense |= ts->v[i].has_bitmap;
    if (ts->n <= 8 && !any_dense) {
        qr_it **kids = qr_arena_alloc(a, sizeof *kids * ts->n);
        if (!kids)
            return nomem(e);
        for (uint32_t i = 0; i < ts->n; i++) {
            if (qr_invfield_check_term(f, &ts->v[i], e) != 0)
                return NULL;
            if (!(kids[i] = qr_it_postings(a, f, &ts->v[i])))
                return nomem(e);
        }
        qr_it *it = qr_it_or(a, kids, ts->n);
        return it ? it : nomem(e);
    }
    /* many terms, or dense ones: materialise a bitmap */
    uint32_t rows = f->rows;
    uint64_t *bits = bm_new(a, rows);
    if (!bits)
        return nomem(e);
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
        for (uint32_t d = qr_pc_next(&c); d != QR_NO_DOC; d = qr_pc_next(&c)) {
            if (d >= rows) {
                c.corrupt = 1;
                break;
            }
            bits[d >> 6] |= 1ull << (d & 63);
        }
        if (c.corrupt)
            return (void)qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s postings (index section %u)",
                                 ss->seg->path, f->def.name, f->def.sec),
                   NULL;
    }
    qr_it *it = qr_it_bitmap(a, bits, rows, bm_count_words(bits, nwords(rows)));
    return it ? it : nomem(e);
}

static qr_it *multi_term(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    qr_invfield *f = qr_segsearch_field(ss, q->field, e);
    if (!f)
        return NULL;
    qr_qrun *run = ss->run ? ss->run : &ss->own;
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
        if (run_put(run, q, aut) != 0) {
            qr_aut_free(aut);
            return nomem(e);
        }
    }
    /* LIKE: every literal byte of the pattern is in every match */
    uint64_t need = 0;
    for (size_t i = 0; q->type == Q_LIKE && i < q->len; i++) {
        unsigned char c = (unsigned char)q->text[i];
        if (c != '%' && c != '_' && c != '\\')
            need |= 1ull << qr_tdict_byte_class(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    termset ts = {0};
    qr_it *it = NULL;
    if (expand(f, aut, need, &ts, e) == 0)
        it = union_of(ss, f, &ts, a, e);
    free(ts.v);
    return it;
}

/* ---- columns: ranges ---- */
static qr_it *empty(qr_arena *a, qr_err *e)
{
    qr_it *it = qr_it_empty(a);
    return it ? it : nomem(e);
}

/* Rows of column `c` (integer-stored) in [lo, hi], by reading it: blocks
 * whose min/max miss the range are skipped, blocks inside it taken whole
 * (but for NULLs). */
static qr_it *scan_range(qr_segsearch *ss, int c, int64_t lo, int64_t hi, qr_arena *a, qr_err *e)
{
    qr_segment *s = ss->seg;
    const qr_colmeta *cm = &s->cols[c];
    uint32_t rows = (uint32_t)s->rows;
    uint64_t *bits = bm_new(a, rows);
    if (!bits)
        return nomem(e);
    uint64_t count = 0;
    qr_colreader *r = NULL;
    for (uint32_t di = 0; di < cm->ndata; di++) {
        const qr_blockref *b = &cm->blocks[cm->first_data + di];
        if ((b->flags & QR_BLKF_ALL_NULL) || b->max < lo || b->min > hi)
            continue;
        if (!r && !(r = qr_colr_open(s, c, e)))
            return NULL;
        const int64_t *v;
        const uint8_t *nul;
        uint32_t first, n;
        if (qr_colr_int_block(r, di, &v, &nul, &first, &n, e) != 0) {
            qr_colr_close(r);
            return NULL;
        }
        for (uint32_t i = 0; i < n; i++)
            if (!nul[i] && v[i] >= lo && v[i] <= hi) {
                uint32_t row = first + i;
                bits[row >> 6] |= 1ull << (row & 63);
                count++;
            }
    }
    qr_colr_close(r);
    qr_it *it = qr_it_bitmap(a, bits, rows, count);
    return it ? it : nomem(e);
}

/* Rows whose text column equals q->text, without an index: by reading the
 * column; a dictionary-coded one skips the blocks whose code range misses
 * the value's code (and the whole segment when no row has it). */
static qr_it *scan_text(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    qr_segment *s = ss->seg;
    int c = q->colname ? qr_seg_col(s, q->colname) : -1;
    if (c < 0)
        return empty(a, e);
    if (s->cols[c].type != QT_TEXT)
        return (void)qr_errf(e, QR_E_DATATYPE, "segment %s: column %s is %s, not text", s->path,
                             q->colname, qr_type_name(s->cols[c].type)),
               NULL;
    const qr_colmeta *cm = &s->cols[c];
    uint32_t rows = (uint32_t)s->rows;
    uint64_t *bits = bm_new(a, rows);
    if (!bits)
        return nomem(e);
    qr_colreader *r = qr_colr_open(s, c, e);
    if (!r)
        return NULL;
    int64_t code = qr_colr_dict_code(r, q->text, q->len);
    uint64_t count = 0;
    for (uint32_t di = 0; code != 0 && di < cm->ndata; di++) {
        const qr_blockref *b = &cm->blocks[cm->first_data + di];
        if (code > 0 && (b->max < code || b->min > code))
            continue;
        for (uint32_t row = b->first_row; row < b->first_row + b->rows; row++) {
            qr_slice v;
            if (qr_colr_bytes(r, row, &v, e) != 0) {
                qr_colr_close(r);
                return NULL;
            }
            if (v.p && v.n == q->len && (v.n == 0 || memcmp(v.p, q->text, v.n) == 0)) {
                bits[row >> 6] |= 1ull << (row & 63);
                count++;
            }
        }
    }
    qr_colr_close(r);
    qr_it *it = qr_it_bitmap(a, bits, rows, count);
    return it ? it : nomem(e);
}

/* The segment column a range names; -1 (with no error) when the segment
 * has no such column (added later: NULL in every row, so nothing matches). */
static int range_col(qr_segsearch *ss, const qr_query *q, qr_err *e)
{
    qr_segment *s = ss->seg;
    int c = q->colname ? qr_seg_col(s, q->colname) : s->sort_col;
    if (c >= 0 && s->cols[c].type != q->coltype && q->colname)
        return qr_errf(e, QR_E_DATATYPE, "segment %s: column %s is %s, the query wants %s",
                       s->path, q->colname, qr_type_name(s->cols[c].type),
                       qr_type_name(q->coltype)), -2;
    return c;
}

static qr_it *time_range(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    qr_segment *s = ss->seg;
    int64_t lo = q->lo, hi = q->hi;
    int c = range_col(ss, q, e);
    if (c == -2)
        return NULL;
    if (c < 0 || lo > hi)
        return empty(a, e);
    if (c != s->sort_col)
        return scan_range(ss, c, lo, hi, a, e);
    uint32_t first = (uint32_t)s->cols[c].null_count; /* NULLs sort first */
    uint32_t n = (uint32_t)s->rows;
    if (first >= n || hi < s->min_ts || lo > s->max_ts)
        return empty(a, e);
    qr_colreader *r = qr_colr_open(s, c, e);
    if (!r)
        return NULL;
    /* lower bounds: first row with ts >= lo, first row with ts > hi */
    uint32_t bounds[2];
    for (int k = 0; k < 2; k++) {
        uint32_t l = first, h = n;
        while (l < h) {
            uint32_t mid = l + (h - l) / 2;
            int64_t v;
            int isnull;
            if (qr_colr_int(r, mid, &v, &isnull, e) != 0) {
                qr_colr_close(r);
                return NULL;
            }
            if (k == 0 ? v < lo : v <= hi)
                l = mid + 1;
            else
                h = mid;
        }
        bounds[k] = l;
    }
    qr_colr_close(r);
    qr_it *it = qr_it_range(a, bounds[0], bounds[1]);
    return it ? it : nomem(e);
}

/* A number column in [lo, hi]: by its range index, the run of terms from
 * lo's to hi's (qr_range_term sorts like the numbers), a few dense values'
 * bitmaps or lists, OR-ed; without one, a scan of the column. */
static qr_it *int_range(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    int64_t lo = q->lo, hi = q->hi, tlo, thi;
    qr_type_range(q->coltype, &tlo, &thi);
    lo = lo < tlo ? tlo : lo;
    hi = hi > thi ? thi : hi;
    if (lo > hi)
        return empty(a, e);
    if (!q->field) {
        int c = range_col(ss, q, e);
        if (c == -2)
            return NULL;
        return c < 0 ? empty(a, e) : scan_range(ss, c, lo, hi, a, e);
    }
    qr_invfield *f = qr_segsearch_field(ss, q->field, e);
    if (!f)
        return NULL;
    char from[QR_NUM_TERM64_LEN], to[QR_NUM_TERM64_LEN];
    unsigned tl = qr_range_term(f->def.coltype, lo, from);
    qr_range_term(f->def.coltype, hi, to);
    termset ts = {0};
    qr_titer it;
    int r = qr_tdict_seek_at(&f->dict, &it, tl, from, tl, e);
    for (; r == 1; r = qr_titer_next(&it, e)) {
        if (it.len != tl || memcmp(it.term, to, tl) > 0)
            break;
        qr_terminfo ti;
        if (qr_titer_info(&it, &ti, e) != 0) {
            r = -1;
            break;
        }
        if (termset_add(&ts, &ti) != 0) {
            free(ts.v);
            return nomem(e);
        }
    }
    qr_it *res = NULL;
    if (r >= 0)
        res = union_of(ss, f, &ts, a, e);
    else
        qr_err_prefix(e, "segment %s: %s index: ", ss->seg->path, f->def.name);
    free(ts.v);
    return res;
}

int qr_segsearch_phrase_words(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_invfield **f,
                              qr_terminfo **tis, qr_err *e)
{
    if (!(*f = qr_segsearch_field(ss, q->field, e)) || qr_invfield_load_positions(*f, e) != 0)
        return -1;
    if (!(*tis = qr_arena_alloc(a, sizeof **tis * q->n)))
        return (void)nomem(e), -1;
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
    return 1;
}

/* ---- the tree ---- */
static qr_it *compile(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e);

/* A word's list long enough (>= 1/32 of the rows) to be read whole into a
 * bitmap when intersected, rather than advanced through. */
static int frequent_list(const qr_it *it, uint32_t rows)
{
    return qr_it_is_postings(it) && it->cost >= rows / 32;
}

static qr_it *compile_and(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    qr_it **pos = qr_arena_alloc(a, sizeof *pos * q->n);
    qr_it **neg = qr_arena_alloc(a, sizeof *neg * q->n);
    if (!pos || !neg)
        return nomem(e);
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
    /* bitmaps among the children combine word by word into one bitmap, and
     * frequent words' postings join it (one pass over their decoded blocks,
     * a bit per doc): a leapfrog would advance through every such list at
     * every candidate, several times the cost */
    uint32_t rows = (uint32_t)ss->seg->rows, nbp = 0, nbn = 0, nfp = 0;
    for (uint32_t i = 0; i < np; i++) {
        nbp += qr_it_bitmap_bits(pos[i]) != NULL;
        nfp += frequent_list(pos[i], rows);
    }
    for (uint32_t i = 0; i < nn; i++)
        nbn += qr_it_bitmap_bits(neg[i]) != NULL;
    if ((nbp >= 1 && nbp + nbn >= 2) || (nfp >= 1 && nbp + nfp >= 2)) {
        uint64_t *acc = bm_new(a, rows), *tmp = NULL;
        if (!acc)
            return nomem(e);
        int first = 1;
        uint32_t kp = 0, kn = 0;
        for (uint32_t i = 0; i < np; i++) {
            const void *b = qr_it_bitmap_bits(pos[i]);
            if (!b && frequent_list(pos[i], rows)) {
                if (!first && !tmp && !(tmp = bm_new(a, rows)))
                    return nomem(e);
                if (!first)
                    memset(tmp, 0, nwords(rows) * 8);
                if (qr_it_postings_bits(pos[i], first ? acc : tmp, rows) < 0)
                    return (void)qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings",
                                         ss->seg->path),
                           NULL;
                if (!first)
                    bm_apply(acc, tmp, nwords(rows), BM_AND);
                first = 0;
                continue;
            }
            if (!b) {
                pos[kp++] = pos[i];
                continue;
            }
            if (first)
                memcpy(acc, b, nwords(rows) * 8);
            else
                bm_apply(acc, b, nwords(rows), BM_AND);
            first = 0;
        }
        for (uint32_t i = 0; i < nn; i++) {
            const void *b = qr_it_bitmap_bits(neg[i]);
            if (b)
                bm_apply(acc, b, nwords(rows), BM_ANDNOT);
            else
                neg[kn++] = neg[i];
        }
        pos[kp++] = qr_it_bitmap(a, acc, rows, bm_count_words(acc, nwords(rows)));
        if (!pos[kp - 1])
            return nomem(e);
        np = kp;
        nn = kn;
    }
    if (np == 1 && nn && qr_it_bitmap_bits(pos[0])) {
        /* bitmap minus postings: clear their docs in a copy */
        uint64_t *acc = bm_new(a, rows);
        if (!acc)
            return nomem(e);
        memcpy(acc, qr_it_bitmap_bits(pos[0]), nwords(rows) * 8);
        uint64_t *tmp = NULL;
        for (uint32_t i = 0; i < nn; i++) {
            if (qr_it_is_postings(neg[i])) { /* a word: its list a block at a time */
                if (!tmp && !(tmp = bm_new(a, rows)))
                    return nomem(e);
                memset(tmp, 0, nwords(rows) * 8);
                if (qr_it_postings_bits(neg[i], tmp, rows) >= 0)
                    bm_apply(acc, tmp, nwords(rows), BM_ANDNOT);
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
        qr_it *it = qr_it_bitmap(a, acc, rows, bm_count_words(acc, nwords(rows)));
        return it ? it : nomem(e);
    }
    qr_it *inc = np ? qr_it_and(a, pos, np) : qr_it_range(a, 0, rows);
    if (inc && nn)
        inc = qr_it_andnot(a, inc, nn == 1 ? neg[0] : qr_it_or(a, neg, nn));
    return inc ? inc : nomem(e);
}

static qr_it *compile(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    switch (q->type) {
    case Q_ALL: {
        qr_it *it = qr_it_range(a, 0, (uint32_t)ss->seg->rows);
        return it ? it : nomem(e);
    }
    case Q_TERM:
        if (!q->field)
            return scan_text(ss, q, a, e);
        return term_it(ss, q->field, q->text, q->len, a, e);
    case Q_PHRASE: {
        qr_invfield *f;
        qr_terminfo *tis;
        int r = qr_segsearch_phrase_words(ss, q, a, &f, &tis, e);
        if (r < 0)
            return NULL;
        qr_it *it = r ? qr_it_phrase(a, f, tis, q->offs, q->n, q->within) : qr_it_empty(a);
        return it ? it : nomem(e);
    }
    case Q_AND:
        return compile_and(ss, q, a, e);
    case Q_NOT: {
        qr_query and1 = {.type = Q_AND, .n = 1, .kids = (qr_query **)&q};
        return compile_and(ss, &and1, a, e);
    }
    case Q_OR:
    case Q_MINMATCH: {
        qr_it **kids = qr_arena_alloc(a, sizeof *kids * q->n);
        if (!kids)
            return nomem(e);
        uint32_t nb = 0;
        for (uint32_t i = 0; i < q->n; i++) {
            if (!(kids[i] = compile(ss, q->kids[i], a, e)))
                return NULL;
            nb += qr_it_bitmap_bits(kids[i]) != NULL;
        }
        if (q->type == Q_MINMATCH && nb >= 1 && q->k >= 2 && q->k < q->n) {
            /* at least k of n, word by word: plane[j] has the bits set in
             * at least j children so far (saturating bit-sliced counter) */
            uint32_t rows = (uint32_t)ss->seg->rows;
            size_t nw = nwords(rows);
            uint64_t **plane = qr_arena_alloc(a, sizeof *plane * (q->k + 1));
            uint64_t *tmp = bm_new(a, rows);
            if (!plane || !tmp)
                return nomem(e);
            for (uint32_t j = 1; j <= q->k; j++)
                if (!(plane[j] = bm_new(a, rows)))
                    return nomem(e);
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
            return it ? it : nomem(e);
        }
        if (q->type == Q_OR && nb >= 1 && q->n >= 2) {
            /* a union with a dense member: build the bitmap directly */
            uint32_t rows = (uint32_t)ss->seg->rows;
            uint64_t *acc = bm_new(a, rows);
            if (!acc)
                return nomem(e);
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
            return it ? it : nomem(e);
        }
        qr_it *it = q->type == Q_OR ? qr_it_or(a, kids, q->n)
                                    : qr_it_minmatch(a, kids, q->n, q->k);
        return it ? it : nomem(e);
    }
    case Q_PREFIX:
    case Q_REGEXP:
    case Q_LIKE:
    case Q_FUZZY:
        return multi_term(ss, q, a, e);
    case Q_INT_RANGE:
        return int_range(ss, q, a, e);
    case Q_TIME_RANGE:
        return time_range(ss, q, a, e);
    }
    qr_errf(e, QR_E_INTERNAL, "query node type %d", (int)q->type);
    return NULL;
}

qr_it *qr_segsearch_compile(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e)
{
    return compile(ss, q, a, e);
}

int qr_segsearch_count(qr_segsearch *ss, const qr_query *q, qr_arena *a, uint64_t *count,
                       qr_err *e)
{
    qr_it *it = compile(ss, q, a, e);
    if (!it)
        return -1;
    *count = qr_it_count(it);
    if (qr_it_failed(it))
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt postings met during the search",
                       ss->seg->path);
    return 0;
}
