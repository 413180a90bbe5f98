/* termjoin.h - the counts of an inner equi-join of two filtered scans on
 * keyword-indexed columns, from the indexes alone: no key value is read
 * from a column, no row pair is made, and no term is read per query.
 *
 * A keyword index holds each value of its column once per segment, as a
 * term, with its ordinal per row (index/kwords.c: built on the first join,
 * kept with the open field). So per segment each side's filter is
 * evaluated once into a bitmap and each matching row counts one for its
 * value's ordinal (deleted rows never count). Which keys more than one
 * segment holds is the segments' key map (index/keymap.h: built by the
 * first join over a set of segments, kept in the segment cache, shared
 * by later joins over those segments or some of them). A key of one
 * segment alone is settled where it is counted; the others' counts are
 * summed by shared id over every segment of both tables. Each key adds
 *   pairs += count_a * count_b,   keys += (count_a > 0 && count_b > 0)
 * which are count(*) and count(DISTINCT key) of the joined rows. A trace
 * spread over several segments is counted once, as the hash join would.
 *
 * A segment both sides scan on the same index (a self-join: trace
 * correlation) is one task counting both sides. Tasks (one per segment)
 * run in parallel on the searches' pool, each slot summing its shared
 * keys' counts (two 8-byte counts per shared key, charged).
 *
 * A side's residual that reads only its key column is a test of each key
 * the side's rows hold in a segment, read from the dictionary in order,
 * in batches (the same expression code as rows). A key value the side
 * excludes (`a.TraceId <> ''`) is one count set to 0.
 *
 * Exactness: equal keys are equal terms. A keyword index leaves out NULLs
 * (they match nothing: SQL) and values longer than QR_MAX_TERM bytes; a
 * segment with such a value, or without the index (created after it was
 * written), makes the operator decline (returns 1, nothing counted) so the
 * caller joins rows by hash instead. */
#ifndef QR_EXEC_TERMJOIN_H
#define QR_EXEC_TERMJOIN_H
#include <stdint.h>

#include "exec/expr.h"
#include "search/parallel.h"

/* One side of the join: the entry's segments and filter tree (ps, its
 * workers and context shared with the other side's), the keyword index
 * of its key column (sec: the table's index id), and whether the filter
 * matches every row (no WHERE term on this entry). */
typedef struct qr_tjside {
    qr_par_search *ps;
    uint16_t sec;
    int all;
    /* A predicate on the key column alone, or NULL: evaluated once per key
     * (the term's bytes are the column's value), not once per row; a key
     * for which it is not true counts no row of this side. Its column
     * slots are the table's: key_col, of types[ncols] (qr_type). */
    const qr_expr *rest;
    uint32_t key_col, ncols;
    const uint8_t *types;
    /* Key values this side's rows must not hold (`key <> 'v'`, taken out
     * of its filter): Q_TERM nodes of the key's index. A segment's count
     * of such a key is set to 0 (its ordinal found by one lookup), where
     * the filter would have read every row holding it. */
    const qr_query *const *excl;
    uint32_t nexcl;
} qr_tjside;

typedef struct qr_tjcount {
    uint64_t pairs;          /* joined rows: count(*) */
    uint64_t keys;           /* distinct keys with rows on both sides */
    uint64_t rows_a, rows_b; /* each side's matches that hold a key */
    uint64_t terms;          /* dictionary terms read (residuals on the key) */
    uint64_t settled;        /* (segment, key) with rows, of that segment alone */
    uint64_t summed;         /* (segment, key) with rows, summed by shared id */
    uint64_t shared;         /* keys the map has more than one segment hold */
    int map_built;           /* the key map was built by this join */
    int64_t map_ns;          /* and how long that took */
} qr_tjcount;

/* Count the join of a and b on their indexed columns. Memory (the bitmaps,
 * the per-key counts, the shared keys' sums, a key map build's lists) is
 * charged to a->ps's query context; a field's ordinals and the key map,
 * built here on first use, are the segments' (kept with them, uncharged).
 * Returns 0 with *out set; 1 when some segment lacks the index or left a
 * value out of it (nothing counted: join by hash); -1 with e set (53200,
 * 57014, XX001 corrupt postings, 22003 when count(*) passes 2^63 - 1). */
int qr_x_term_join_count(const qr_tjside *a, const qr_tjside *b, qr_tjcount *out, qr_err *e);

/* GROUP BY one text column of one side (gside: 0 for a, 1 for b) with a
 * keyword index (gsec) in each of its segments: count(*) of the joined
 * rows per value of that column. Step 1 counts the other side's rows per
 * key (kept per segment; shared keys summed by id); step 2 reads each
 * matching row of the grouping side once, through two ordinals (its key's
 * and its group's), adding its key's count on the other side to its
 * group. So the cost is the grouping side's matches, not the joined rows.
 * The values are read from each segment's dictionary of the group column
 * (those with a count only) and equal ones summed. */
typedef struct qr_tjgroup {
    const char *s; /* the value's bytes (in the groups' arena) */
    uint32_t n;
    uint64_t count; /* joined rows: > 0 */
} qr_tjgroup;

typedef struct qr_tjgroups {
    qr_tjgroup *g; /* by value (bytes), each once */
    uint32_t n;
    uint64_t null_count; /* joined rows whose group column is NULL */
    qr_arena a;
    qr_qctx *ctx;
} qr_tjgroups;

/* 0 with *out (free with qr_tjgroups_free) and *c (pairs: every joined
 * row; rows_a, rows_b; keys not counted) set; 1 when a segment cannot
 * answer (as qr_x_term_join_count, or the group column's index is missing
 * or leaves a value out: nothing set, join by hash); -1 with e set. */
int qr_x_term_join_groups(const qr_tjside *a, const qr_tjside *b, int gside, uint16_t gsec,
                          qr_tjgroups *out, qr_tjcount *c, qr_err *e);
void qr_tjgroups_free(qr_tjgroups *g);

/* count(DISTINCT key) of one filtered scan on a keyword-indexed column:
 * per segment its matches counted per key by ordinal; a key of one
 * segment alone with rows counts once where it is, the shared ones once
 * over all by shared id. 0 with out->keys (distinct keys) and out->rows_a
 * (matches holding a key: count(key)) set; 1 when a segment cannot answer
 * (nothing set: count by hash); -1 with e set. */
int qr_x_term_distinct(const qr_tjside *a, qr_tjcount *out, qr_err *e);
#endif
