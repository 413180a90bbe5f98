/* invfield.c - opening one field's inverted index in a segment: locating
 * and verifying its blocks, parsing the sparse term index and field stats.
 * Positions and dense-term bitmaps are mapped on first use, once per open
 * field even when threads share it: the first user takes f->lazy, verifies
 * the block and publishes the pointer (length first) with a release store;
 * every later use is one acquire load (a plain load on x86). */
#include <stdio.h>
#include <string.h>

#include "index/invfmt.h"
#include "format/segfmt.h"
#include "index/invindex.h"

static int find_block(const qr_segment *s, const qr_section *sec, uint8_t kind,
                      const unsigned char **p, size_t *len, int required, qr_err *e)
{
    for (uint32_t i = 0; i < sec->nblocks; i++)
        if (sec->blocks[i].kind == kind)
            return qr_seg_sec_block(s, sec, i, p, len, e);
    *p = NULL;
    *len = 0;
    if (!required)
        return 0;
    return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: index section %u lacks block kind %u",
                   s->path, sec->id, kind);
}

static int32_t block_index(const qr_section *sec, uint8_t kind)
{
    for (uint32_t i = 0; i < sec->nblocks; i++)
        if (sec->blocks[i].kind == kind)
            return (int32_t)i;
    return -1;
}

int qr_invfield_open(qr_invfield *f, const qr_segment *s, uint16_t sec_id, qr_err *e)
{
    memset(f, 0, sizeof *f);
    f->seg = s;
    f->rows = (uint32_t)s->rows;
    const qr_section *sec = qr_seg_section(s, sec_id);
    if (!sec)
        return qr_errf(e, QR_E_UNDEFINED_OBJECT,
                       "segment %s: has no index %u (the index is newer than the segment)",
                       s->path, sec_id);
    const qr_colmeta *cm = &s->cols[sec->col];
    f->def.sec = sec_id;
    f->def.col = sec->col;
    f->def.kind = sec->kind;
    f->def.coltype = cm->type;
    f->def.fulltext = sec->kind == QR_IX_FULLTEXT;
    f->def.positions = f->def.fulltext && (sec->flags & QR_SECF_POSITIONS);
    f->def.lowercase = !f->def.fulltext || (sec->flags & QR_SECF_LOWERCASE);
    f->def.name = cm->name;
    int ft = f->def.fulltext, fp = f->def.positions;
    const unsigned char *idx, *dict, *stats;
    size_t idx_len, dict_len, stats_len, norms_len;
    if (find_block(s, sec, IBLK_FIELDSTATS, &stats, &stats_len, 1, e) != 0 ||
        find_block(s, sec, IBLK_TERMINDEX, &idx, &idx_len, 1, e) != 0 ||
        find_block(s, sec, IBLK_TERMDICT, &dict, &dict_len, 1, e) != 0 ||
        find_block(s, sec, IBLK_POSTINGS, &f->post, &f->post_len, 1, e) != 0 ||
        find_block(s, sec, IBLK_NORMS, &f->norms, &norms_len, ft, e) != 0)
        return -1;
    /* positions (phrases only) and dense-term bitmaps are verified and
     * mapped when first needed: most queries read neither, and checksumming
     * them is a third of a cold first query */
    f->sec = sec;
    f->pos_blk = block_index(sec, IBLK_POSITIONS);
    f->bm_blk = block_index(sec, IBLK_BITMAPS);
    if (fp && f->pos_blk < 0)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: index section %u lacks block kind %u",
                       s->path, sec->id, IBLK_POSITIONS);
    if (stats_len != 24 || (ft && norms_len != s->rows))
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s index stats or norms size",
                       s->path, f->def.name);
    f->docs_with_field = qr_load_u64(stats);
    f->total_tokens = qr_load_u64(stats + 8);
    char what[4400];
    snprintf(what, sizeof what, "segment %s: %s index", s->path, f->def.name);
    if (qr_tdict_open(&f->dict, idx, idx_len, dict, dict_len, ft, fp, what, e) != 0)
        return -1;
    pthread_mutex_init(&f->lazy, NULL);
    return 0;
}

void qr_invfield_close(qr_invfield *f)
{
    qr_tdict_close(&f->dict);
    pthread_mutex_destroy(&f->lazy);
}

static const unsigned char *load_ptr(const unsigned char *const *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Map block `blk` of the field's section into *p / *len once: the length is
 * stored before the pointer is published, so a reader that sees the
 * pointer sees its length. */
static int map_once(qr_invfield *f, int32_t blk, const unsigned char **p, size_t *len, qr_err *e)
{
    int rc = 0;
    pthread_mutex_lock(&f->lazy);
    if (!__atomic_load_n(p, __ATOMIC_RELAXED)) {
        const unsigned char *q;
        size_t n;
        rc = qr_seg_sec_block(f->seg, f->sec, (uint32_t)blk, &q, &n, e);
        if (rc == 0) {
            *len = n;
            __atomic_store_n(p, q, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&f->lazy);
    return rc;
}

int qr_invfield_load_positions(qr_invfield *f, qr_err *e)
{
    if (!f->def.fulltext || load_ptr(&f->pos))
        return 0;
    if (!f->def.positions)
        return qr_errf(e, QR_E_FEATURE, "the %s index stores no positions: phrases cannot "
                       "be searched on it", f->def.name);
    return map_once(f, f->pos_blk, &f->pos, &f->pos_len, e);
}

static inline const unsigned char *bitmap_mapped(const qr_invfield *f, const qr_terminfo *ti)
{
    uint64_t words = ((uint64_t)f->rows + 63) / 64;
    const unsigned char *bm = load_ptr(&f->bitmaps);
    if (!bm || !ti->has_bitmap || ti->bm_word > f->bitmaps_len / 8 ||
        words > f->bitmaps_len / 8 - ti->bm_word)
        return NULL;
    return bm + ti->bm_word * 8;
}

const unsigned char *qr_invfield_bitmap_mapped(const qr_invfield *f, const qr_terminfo *ti)
{
    return bitmap_mapped(f, ti);
}

const unsigned char *qr_invfield_bitmap(qr_invfield *f, const qr_terminfo *ti, qr_err *e)
{
    if (f->bm_blk >= 0 && !load_ptr(&f->bitmaps) &&
        map_once(f, f->bm_blk, &f->bitmaps, &f->bitmaps_len, e) != 0)
        return NULL;
    const unsigned char *b = bitmap_mapped(f, ti);
    if (!b)
        qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s term bitmap out of range (index section %u)",
                f->seg->path, f->def.name, f->def.sec);
    return b;
}

int qr_invfield_cursor(const qr_invfield *f, const qr_terminfo *ti, qr_pcursor *c, qr_err *e)
{
    /* positions only once qr_invfield_load_positions mapped them (phrases) */
    const unsigned char *pp = load_ptr(&f->pos);
    int ft = f->def.fulltext, pos = f->def.positions && pp;
    if (qr_pc_open(c, f->post, f->post_len, pp, pp ? f->pos_len : 0, ft, pos, ti) != 0)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s postings out of range",
                       f->seg->path, f->def.name);
    return 0;
}
