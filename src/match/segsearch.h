/* segsearch.h - evaluating a filter tree on one segment: the tree becomes an
 * iterator tree over the segment's indexes and columns.
 *
 *   term, phrase          postings (phrase: two-phase, positions last)
 *   AND / OR / atleast    leapfrog conjunction, heap disjunction
 *   NOT                   exclusion from the enclosing conjunction
 *   prefix/regexp/like/   automaton intersected with the term dictionary
 *   fuzzy                 (dead states prune whole prefixes), then the
 *                         union of the matched terms' postings
 *   keyword fields        exact term of the field's dictionary
 *   number ranges         a run of the range index's terms; without an
 *                         index, the column, skipping blocks by min/max
 *   time range            on the sort column, a binary search: a row range,
 *                         no index needed; other timestamp columns as
 *                         number ranges
 */
#ifndef QR_EXEC_H
#define QR_EXEC_H

#include "format/segment.h"
#include "index/invindex.h"
#include "index/segcache.h"
#include "match/iter.h"
#include "match/plan.h"
#include "query/query.h"
#include "util/qctx.h"

/* What evaluating a tree compiles (the automata of its multi-term nodes,
 * whose DFA caches grow lazily), kept apart from the tree: one per thread
 * of a search, so threads share one immutable tree and a thread reuses its
 * automata over every segment it searches. */
typedef struct qr_qrun {
    uint32_t n, cap;
    const qr_query **node;
    void **aut; /* qr_aut *, owned */
    qr_qctx *ctx;   /* the query's budget and stop conditions (NULL: none):
                     * automata, term sets and long loops answer to it */
    uint32_t ticks; /* the run's qr_qctx_tick counter */
    qr_plan *plan;  /* what evaluation chose is recorded here (NULL: not) */
} qr_qrun;

void qr_qrun_init(qr_qrun *r);
/* Free every automaton (the tree is untouched). */
void qr_qrun_free(qr_qrun *r);

/* A segment's fields come from a cache entry (qr_segsearch_init_ref: opened
 * once and shared with every other query, index/segcache.h) or are the
 * segsearch's own (qr_segsearch_init: opened on first use, closed by
 * qr_segsearch_close). Either way a segsearch is used by one thread at a
 * time. */
typedef struct qr_segsearch {
    qr_segment *seg;
    qr_segref *ref; /* the cache entry the fields come from (held by the
                     * caller, not released here); NULL = own fields */
    qr_qrun *run; /* the searching thread's run state, set by the caller before
                   * compiling; NULL = the segment's own (qr_segsearch_close frees it) */
    qr_qrun own;
    qr_invfield *fields; /* own fields by section position, allocated on first use */
    uint64_t opened;     /* own fields: bit i = fields[i] is open */
    uint64_t terms_expanded; /* stats: terms matched by multi-term queries */
} qr_segsearch;

void qr_segsearch_init(qr_segsearch *ss, qr_segment *seg);
/* Where what evaluation chooses is recorded (NULL: nowhere). */
static inline qr_plan *qr_segsearch_plan(const qr_segsearch *ss)
{
    return ss->run ? ss->run->plan : ss->own.plan;
}
/* Search the segment of cache handle ref with the entry's fields; ref must
 * stay held until qr_segsearch_close. */
void qr_segsearch_init_ref(qr_segsearch *ss, qr_segref *ref);
void qr_segsearch_close(qr_segsearch *ss);
/* Field `sec`'s index, opened on first use (NULL with e set on error). */
qr_invfield *qr_segsearch_field(qr_segsearch *ss, uint16_t sec, qr_err *e);
/* Look up a phrase's words in its field: 1 all found (*tis[i] per word,
 * from `a`), 0 one is missing (no row can match), -1 error. Maps the
 * positions and, when a word is dense, the bitmaps (qr_it_phrase uses
 * them); *sh: the field's row shapes, verified, with their statistics
 * and q's words, when no word is variable and the field has them
 * (index/shapes.h; QUARRY_NO_SHAPES=1: never), else all NULL. */
int qr_segsearch_phrase_words(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_invfield **f,
                              qr_terminfo **tis, qr_phrase_shapes *sh, qr_err *e);
/* Build the iterator for q over this segment (memory from `a`): rows a
 * DELETE removed (qr_segment.deleted) never match. */
qr_it *qr_segsearch_compile(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e);
/* The same, leaving the plan and the statistics as they were: a second
 * iterator over nodes already compiled for this segment (a scorer's lead),
 * which --explain must not count twice. */
qr_it *qr_segsearch_compile_unrecorded(qr_segsearch *ss, const qr_query *q, qr_arena *a, qr_err *e);
/* The rows [*lo, *hi) outside of which q cannot match, from its time
 * ranges on the sort column (q one, or an AND with such children: a binary
 * search each); the whole segment when it has none. 0, or -1 with e set. */
int qr_segsearch_row_bounds(qr_segsearch *ss, const qr_query *q, qr_arena *a, uint32_t *lo,
                            uint32_t *hi, qr_err *e);
/* Count matches of q in the segment (0 ok / -1 error). */
int qr_segsearch_count(qr_segsearch *ss, const qr_query *q, qr_arena *a, uint64_t *count,
                       qr_err *e);

#endif
