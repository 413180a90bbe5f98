/* termjoin.h - the counts of an inner equi-join of two filtered scans on
 * keyword-indexed columns, as a merge join of the indexes' term
 * dictionaries: no key value is read from a column, no row pair is made.
 *
 * A keyword index holds each value of its column once per segment, as a
 * term, with the rows holding it as postings, in dictionary order
 * (index/termdict.h: code point length, then bytes), and its ordinal per
 * row (index/kwords.c: built on the first join, kept with the open field).
 * So per segment each side's filter is evaluated once into a bitmap, each
 * matching row counts one for its value's ordinal (deleted rows never
 * count), and the dictionary's terms are read in order: the terms some row
 * of either side holds, with their two counts, form a sorted list per
 * segment. A key that one list alone holds (bit filters of the listed
 * keys' hashes tell: 8+ bits a key) is counted where it is; the others
 * go through a k-way merge of the lists that sums each value's counts over
 * every segment of both tables. Each key adds
 *   pairs += count_a * count_b,   keys += (count_a > 0 && count_b > 0)
 * which are count(*) and count(DISTINCT key) of the joined rows. A trace
 * spread over several segments is counted once, as the hash join would.
 *
 * When both sides scan the same segments on the same index (a self-join:
 * trace correlation), one task per segment counts both sides. Segments
 * are counted in parallel on the searches' pool (one task per segment);
 * the settling of single-list keys and the merge (cut into key ranges)
 * run in parallel too. The lists are sized for every term of their
 * segment's dictionary (24 bytes a term plus its bytes), charged.
 *
 * A side's residual that reads only its key column is a test of each key
 * listed for the segment, in batches (the same expression code as rows).
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
} qr_tjside;

typedef struct qr_tjcount {
    uint64_t pairs;          /* joined rows: count(*) */
    uint64_t keys;           /* distinct keys with rows on both sides */
    uint64_t rows_a, rows_b; /* each side's matches that hold a key */
    uint64_t terms;          /* dictionary terms read */
    uint64_t listed;         /* (segment, key) entries listed */
    uint64_t merged;         /* of those, the ones merged (their key maybe in
                              * another segment's list too) */
} qr_tjcount;

/* Count the join of a and b on their indexed columns (same: a and b scan
 * the same segments, in the same order, on the same index). Memory (the
 * bitmaps, the per-key counts, the per-segment lists) is charged to
 * a->ps's query context; a field's ordinals, built here on first use, are
 * its segment's (invindex.h qr_invfield_ordinals).
 * Returns 0 with *out set; 1 when some segment lacks the index or left a
 * value out of it (nothing counted: join by hash); -1 with e set (53200,
 * 57014, XX001 corrupt postings, 22003 when count(*) passes 2^63 - 1). */
int qr_x_term_join_count(const qr_tjside *a, const qr_tjside *b, int same, qr_tjcount *out,
                         qr_err *e);
#endif
