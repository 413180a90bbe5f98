/* invbuild_int.h - one field's index sections as the segment builders make
 * them (index-internal): invbuild.c builds a field from a batch's values,
 * invmerge.c merges it from the same field of other segments; both end in
 * qr_field_finish, so the sections they write are the same bytes for the
 * same rows. */
#ifndef QR_INVBUILD_INT_H
#define QR_INVBUILD_INT_H

#include <stdatomic.h>

#include "format/batch.h"
#include "format/segment.h"
#include "index/invindex.h"
#include "index/shapes.h"
#include "index/termdict.h"
#include "util/buf.h"
#include "util/qctx.h"

/* A field's sections being built: the streams, the dictionary writer, the
 * norms (full text) and, after qr_field_finish, the blocks to write. */
typedef struct qr_field_out {
    qr_buf post, pos, stats, bitmaps, shapes; /* shapes: empty when none */
    qr_buf valshapes;                         /* keyword: empty when none */
    qr_buf shaperows;                         /* with shapes: their row counts */
    qr_buf shapewords;                        /* with shapes: their words */
    /* keyword fields: the rows' shapes of the segment's shaped index
     * (section shapes_sec), set by the caller before the build or merge
     * (NULL: none): each value's shapes are written (index/valshapes.h) */
    const qr_shapes *row_shapes;
    uint16_t shapes_sec;
    qr_tdictw dict;
    uint8_t *norms;
    qr_sec_block blocks[11];
    uint32_t nblocks;
} qr_field_out;

/* The index of d whose row shapes keyword indexes record (the first
 * full-text index with positions), or -1: built before the others. */
int qr_field_shaped(const qr_tabdef *d);
/* The k-th index to build (k < d->nixs): the shaped one first, then the
 * others in their order. */
static inline uint32_t qr_field_nth(int shaped, uint32_t k)
{
    if (shaped < 0)
        return k;
    return k == 0 ? (uint32_t)shaped : k - 1 < (uint32_t)shaped ? k - 1 : k;
}
/* After index `shaped` (fo[shaped]) is built: parse its shapes into sh
 * and give them to every keyword field of fo[0..n) (nothing when it has
 * none). 0, or -1 (e set: its block does not parse). */
int qr_field_share_shapes(const qr_tabdef *d, int shaped, qr_field_out *fo, uint32_t rows,
                          qr_shapes *sh, const char *path, qr_err *e);
/* The field of index x of table d (its column as a batch position). */
qr_field_def qr_field_def_of(const qr_tabdef *d, const qr_ixdef *x);
/* Build field fd from batch b's values in the stored order perm. */
int qr_field_build(const qr_field_def *fd, const qr_batch *b, const uint32_t *perm,
                   qr_field_out *fo, const char *path, qr_err *e);
/* The terms a keyword, range or paths field (not full text) takes from
 * batch b's rows, counted as a build counts them (FIELDSTATS' total). */
int qr_field_count_terms(const qr_field_def *fd, const qr_batch *b, uint64_t *total, qr_err *e);
/* After every term went through fo->dict: finish the dictionary, write
 * FIELDSTATS (docs with a value, total tokens, distinct terms) and list the
 * blocks. 0, or -1 out of memory. */
int qr_field_finish(qr_field_out *fo, const qr_field_def *fd, uint64_t docs_with, uint64_t total,
                    uint64_t nterms, uint32_t rows);
/* The section fo describes, for qr_seg_write_ex (points into fo). */
void qr_field_sec_in(const qr_field_def *fd, qr_field_out *fo, qr_sec_in *si);
void qr_field_out_free(qr_field_out *fo);

/* 1 when every source segment holds field fd's index as fd defines it
 * (same id, column, kind and full-text flags): then it can be merged. */
int qr_field_mergeable(const qr_field_def *fd, qr_segment *const *src, uint32_t nsrc);
/* Field fd of a merged segment from the same field of src[0..nsrc):
 * docmap[s][r] is source row r's row in the merged segment (UINT32_MAX:
 * dropped), dropped[s] whether source s lost any row; b holds the merged
 * rows (for the count of rows with a value). Stops with 57014 when
 * ctx says (may be NULL). */
int qr_field_merge(const qr_field_def *fd, qr_segment *const *src, const uint32_t *const *docmap,
                   const uint8_t *dropped, uint32_t nsrc, const qr_batch *b, qr_field_out *fo,
                   qr_qctx *ctx, const char *path, qr_err *e);

#endif
