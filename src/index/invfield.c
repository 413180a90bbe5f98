/* invfield.c - opening one field's inverted index in a segment: locating
 * its blocks, opening the sparse term index, reading the field stats, and
 * verifying what a read is about to decode. The small blocks every query reads
 * (FIELDSTATS, TERMINDEX) are verified whole at open, NORMS whole when a
 * scorer first needs them; the large ones (TERMDICT, POSTINGS, POSITIONS,
 * BITMAPS) are mapped unverified and checked range by range, by chunk
 * (format 9; the whole block once in format 8): a dictionary block when an
 * iterator enters it (termdict.c), a term's postings and positions when a
 * cursor on it opens, a dense term's bitmap words when first asked for. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/invfmt.h"
#include "format/segfmt.h"
#include "index/invindex.h"

static int32_t block_index(const qr_section *sec, uint8_t kind)
{
    for (uint32_t i = 0; i < sec->nblocks; i++)
        if (sec->blocks[i].kind == kind)
            return (int32_t)i;
    return -1;
}

/* Block `kind` of the section, mapped, and verified whole when `whole`. */
static int find_block(const qr_segment *s, const qr_section *sec, uint8_t kind, int whole,
                      const unsigned char **p, size_t *len, const qr_blockref **ref, int required,
                      qr_err *e)
{
    static const char *const names[] = {"TERMINDEX", "TERMDICT",   "POSTINGS",  "POSITIONS",
                                        "NORMS",     "FIELDSTATS", "BITMAPS",   "SHAPES",
                                        "VALSHAPES", "SHAPEROWS",  "SHAPEWORDS"};
    int32_t i = block_index(sec, kind);
    *p = NULL;
    *len = 0;
    if (ref)
        *ref = NULL;
    if (i < 0)
        return required ? qr_errf(e, QR_E_CORRUPT,
                                  "segment %s: corrupt: index section %u lacks block kind %u",
                                  s->path, sec->id, kind)
                        : 0;
    if (ref)
        *ref = &sec->blocks[i];
    if (qr_seg_sec_map(s, sec, (uint32_t)i, p, len, e) != 0)
        return -1;
    return whole ? qr_seg_check(s, &sec->blocks[i], 0, *len, names[kind - IBLK_TERMINDEX], e) : 0;
}

int qr_invfield_open(qr_invfield *f, const qr_segment *s, uint16_t sec_id, qr_err *e)
{
    static atomic_ullong serials;
    memset(f, 0, sizeof *f);
    f->serial = atomic_fetch_add(&serials, 1) + 1;
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
    const qr_blockref *dict_ref, *idx_ref;
    if (find_block(s, sec, IBLK_FIELDSTATS, 1, &stats, &stats_len, NULL, 1, e) != 0 ||
        find_block(s, sec, IBLK_TERMINDEX, 0, &idx, &idx_len, &idx_ref, 1, e) != 0 ||
        find_block(s, sec, IBLK_TERMDICT, 0, &dict, &dict_len, &dict_ref, 1, e) != 0 ||
        find_block(s, sec, IBLK_POSTINGS, 0, &f->post, &f->post_len, &f->post_ref, 1, e) != 0 ||
        find_block(s, sec, IBLK_NORMS, 0, &f->norms_map, &norms_len, &f->norms_ref, ft, e) != 0 ||
        find_block(s, sec, IBLK_POSITIONS, 0, &f->pos_map, &f->pos_len, &f->pos_ref, fp, e) != 0 ||
        find_block(s, sec, IBLK_BITMAPS, 0, &f->bitmaps, &f->bitmaps_len, &f->bm_ref, 0, e) != 0 ||
        find_block(s, sec, IBLK_SHAPES, 0, &f->shapes_map, &f->shapes_len, &f->shapes_ref, 0, e) !=
            0 ||
        find_block(s, sec, IBLK_VALSHAPES, 0, &f->valshapes_map, &f->valshapes_len,
                   &f->valshapes_ref, 0, e) != 0 ||
        find_block(s, sec, IBLK_SHAPEROWS, 0, &f->shaperows_map, &f->shaperows_len,
                   &f->shaperows_ref, 0, e) != 0 ||
        find_block(s, sec, IBLK_SHAPEWORDS, 0, &f->shapewords_map, &f->shapewords_len,
                   &f->shapewords_ref, 0, e) != 0)
        return -1;
    f->sec = sec;
    if (stats_len != 24 || (ft && norms_len != s->rows))
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s index stats or norms size",
                       s->path, f->def.name);
    f->docs_with_field = qr_load_u64(stats);
    f->total_tokens = qr_load_u64(stats + 8);
    char what[4400];
    snprintf(what, sizeof what, "segment %s: %s index", s->path, f->def.name);
    /* its records verified as seeks read them (termdict.h) */
    return qr_tdict_open_in(&f->dict, s, idx_ref, dict_ref, idx, idx_len, dict, dict_len, ft, fp,
                            what, e);
}

/* The headers of SHAPES and VALSHAPES, parsed on first use (not
 * verified: their users verify what they read): a header that does not
 * parse is this marker, and its users say what is wrong once the block is
 * verified whole. */
static qr_shapes bad_shapes;
static qr_valshapes bad_valshapes;

/* Publish a freshly parsed header at *slot unless another thread did
 * first: the header to use (ours, theirs, or the marker; *mine freed when
 * it is not the one). */
static void *publish_header(void **slot, void *mine, void *marker)
{
    void *none = NULL;
    if (__atomic_compare_exchange_n(slot, &none, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return mine;
    if (mine != marker)
        free(mine);
    return none;
}

/* f's SHAPES header (or &bad_shapes), or NULL: out of memory (e set). */
static const qr_shapes *shapes_header(qr_invfield *f, qr_err *e)
{
    qr_shapes *have = __atomic_load_n(&f->shapes_hdr, __ATOMIC_ACQUIRE);
    if (have)
        return have;
    qr_shapes *h = malloc(sizeof *h);
    if (!h)
        return (void)qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", f->seg->path), NULL;
    if (qr_shapes_parse(f->shapes_map, f->shapes_len, f->rows, h, f->seg->path, NULL) != 0) {
        free(h);
        h = &bad_shapes;
    }
    return publish_header((void **)&f->shapes_hdr, h, &bad_shapes);
}

static const qr_valshapes *valshapes_header(qr_invfield *f, qr_err *e)
{
    qr_valshapes *have = __atomic_load_n(&f->valshapes_hdr, __ATOMIC_ACQUIRE);
    if (have)
        return have;
    qr_valshapes *h = malloc(sizeof *h);
    if (!h)
        return (void)qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", f->seg->path), NULL;
    if (qr_valshapes_parse(f->valshapes_map, f->valshapes_len, h, f->seg->path, NULL) != 0) {
        free(h);
        h = &bad_valshapes;
    }
    return publish_header((void **)&f->valshapes_hdr, h, &bad_valshapes);
}

const qr_shape_stats *qr_invfield_shape_stats(qr_invfield *f, qr_err *e)
{
    const qr_shape_stats *have = __atomic_load_n(&f->shape_stats, __ATOMIC_ACQUIRE);
    const qr_shapes *sh = qr_invfield_shape_text(f);
    if (have || !sh) {
        if (!have)
            qr_errf(e, QR_E_INTERNAL, "segment %s: shape statistics before the shapes",
                    f->seg->path);
        return have;
    }
    /* the rows per shape as stored (SHAPEROWS, verified whole), else
     * counted from every row's number (the whole SHAPES block verified) */
    const unsigned char *counts = f->shaperows_map;
    if (counts && qr_seg_check(f->seg, f->shaperows_ref, 0, f->shaperows_len, "SHAPEROWS", e) != 0)
        return NULL;
    if (!counts && qr_invfield_load_shapes(f, e) != 0)
        return NULL;
    qr_shape_stats *st = malloc(sizeof *st);
    if (!st) {
        qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", f->seg->path);
        return NULL;
    }
    if (qr_shape_stats_make(sh, counts, f->shaperows_len, st, f->seg->path, e) != 0) {
        free(st);
        return NULL;
    }
    qr_shape_stats *none = NULL;
    if (!__atomic_compare_exchange_n(&f->shape_stats, &none, st, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        qr_shape_stats_free(st); /* another thread's are the ones */
        free(st);
        return none;
    }
    return st;
}

int qr_invfield_load_shape_words(qr_invfield *f, qr_err *e)
{
    if (qr_invfield_shape_words(f) || !f->shapes_map)
        return 0;
    const qr_shapes *h = shapes_header(f, e);
    if (!h)
        return -1;
    if (h == &bad_shapes) /* the header: say what is wrong */
        return qr_invfield_load_shapes(f, e);
    qr_shape_words *w = malloc(sizeof *w);
    if (!w)
        return qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", f->seg->path);
    /* stored (verified whole, read in place), else made from the text */
    int rc;
    if (f->shapewords_map)
        rc = qr_seg_check(f->seg, f->shapewords_ref, 0, f->shapewords_len, "SHAPEWORDS", e) != 0 ||
                     qr_shape_words_parse(f->shapewords_map, f->shapewords_len, h->k, w,
                                          f->seg->path, e) != 0
                 ? -1
                 : 0;
    else
        rc = qr_invfield_load_shape_text(f, e) != 0 ||
                     qr_shape_words_make(h, w, f->seg->path, e) != 0
                 ? -1
                 : 0;
    if (rc != 0) {
        free(w);
        return -1;
    }
    qr_shape_words *none = NULL;
    if (!__atomic_compare_exchange_n(&f->shape_words, &none, w, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        qr_shape_words_free(w); /* another thread's are the ones */
        free(w);
    }
    return 0;
}

int qr_invfield_load_shape_rows(qr_invfield *f, qr_err *e)
{
    if (qr_invfield_shape_rows(f) || !f->shapes_map)
        return 0;
    const qr_shapes *h = shapes_header(f, e);
    if (!h)
        return -1;
    if (h == &bad_shapes) /* the header: say what is wrong */
        return qr_invfield_load_shapes(f, e);
    const uint32_t *rows;
    if (f->shaperows_map && ((uintptr_t)f->shaperows_map & 3) == 0) {
        /* in place: verified whole, then its size and sum checked (the
         * host is little-endian, as for the term index's records) */
        if (qr_seg_check(f->seg, f->shaperows_ref, 0, f->shaperows_len, "SHAPEROWS", e) != 0)
            return -1;
        rows = (const uint32_t *)(const void *)f->shaperows_map;
        uint64_t sum = 0;
        int bad = f->shaperows_len != ((size_t)h->k + 1) * 4;
        for (uint32_t j = 0; j <= h->k && !bad; j++)
            sum += rows[j];
        if (bad || sum != f->rows)
            return qr_errf(e, QR_E_CORRUPT,
                           "segment %s: corrupt: %s index SHAPEROWS: %zu bytes for %u shapes, or "
                           "not the segment's rows",
                           f->seg->path, f->def.name, f->shaperows_len, h->k);
    } else { /* counted with the statistics (the text verified) */
        const qr_shape_stats *st;
        if (qr_invfield_load_shape_text(f, e) != 0 || !(st = qr_invfield_shape_stats(f, e)))
            return -1;
        rows = st->rows;
    }
    const uint32_t *none = NULL;
    __atomic_compare_exchange_n(&f->shape_rows, &none, rows, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE); /* any thread's are the same counts */
    return 0;
}

void qr_invfield_close(qr_invfield *f)
{
    if (f->shape_words) {
        qr_shape_words_free(f->shape_words);
        free(f->shape_words);
        f->shape_words = NULL;
    }
    f->shape_rows = NULL; /* in the map or the statistics */
    if (f->shapes_hdr != &bad_shapes)
        free(f->shapes_hdr);
    f->shapes_hdr = NULL;
    if (f->valshapes_hdr != &bad_valshapes)
        free(f->valshapes_hdr);
    f->valshapes_hdr = NULL;
    if (f->shape_stats) {
        qr_shape_stats_free(f->shape_stats);
        free(f->shape_stats);
        f->shape_stats = NULL;
    }
    qr_tdict_close(&f->dict);
    free(f->ords);
    f->ords = NULL;
    free(f->hashes);
    f->hashes = NULL;
}

int qr_invfield_load_norms(qr_invfield *f, qr_err *e)
{
    if (qr_invfield_norms(f) || !f->norms_ref)
        return 0;
    /* scorers read the norms of any row: the block is verified whole (the
     * chunks' bits are atomic; threads racing here verify the same bytes
     * and publish the same pointer) */
    if (qr_seg_check(f->seg, f->norms_ref, 0, f->norms_ref->length, "NORMS", e) != 0)
        return -1;
    __atomic_store_n(&f->norms, f->norms_map, __ATOMIC_RELEASE);
    return 0;
}

int qr_invfield_load_shape_text(qr_invfield *f, qr_err *e)
{
    if (qr_invfield_shape_text(f) || !f->shapes_map)
        return 0;
    const qr_shapes *h = shapes_header(f, e);
    if (!h)
        return -1;
    if (h == &bad_shapes) /* the header: say what is wrong, the whole verified */
        return qr_invfield_load_shapes(f, e);
    /* the header and the shapes' text, not the rows' numbers (threads
     * racing here verify the same bytes and publish the same pointer) */
    if (qr_seg_check(f->seg, f->shapes_ref, 0, (uint64_t)(h->dict - f->shapes_map) + h->dict_len,
                     "SHAPES", e) != 0)
        return -1;
    __atomic_store_n(&f->shape_text, h, __ATOMIC_RELEASE);
    return 0;
}

int qr_invfield_shape_numbers(qr_invfield *f, const qr_shapes **sh, qr_err *e)
{
    if ((*sh = qr_invfield_shape_text(f)) || !f->shapes_map)
        return 0;
    const qr_shapes *h = shapes_header(f, e);
    if (!h)
        return -1;
    if (h == &bad_shapes) { /* say what is wrong, the whole verified */
        if (qr_invfield_load_shapes(f, e) != 0)
            return -1;
        *sh = qr_invfield_shapes(f);
        return 0;
    }
    /* the header alone: where the numbers start, their width, k */
    if (qr_seg_check(f->seg, f->shapes_ref, 0, (uint64_t)(h->dict - f->shapes_map), "SHAPES", e) !=
        0)
        return -1;
    *sh = h;
    return 0;
}

int qr_invfield_load_shapes(qr_invfield *f, qr_err *e)
{
    if (qr_invfield_shapes(f) || !f->shapes_map)
        return 0;
    /* a phrase reads the shape of any row: verified whole, once (threads
     * racing here verify the same bytes and publish the same pointer) */
    if (qr_seg_check(f->seg, f->shapes_ref, 0, f->shapes_len, "SHAPES", e) != 0)
        return -1;
    const qr_shapes *h = shapes_header(f, e);
    if (!h)
        return -1;
    if (h == &bad_shapes) { /* verified, yet malformed: say how */
        qr_shapes again;
        return qr_shapes_parse(f->shapes_map, f->shapes_len, f->rows, &again, f->seg->path, e);
    }
    __atomic_store_n(&f->shape_text, h, __ATOMIC_RELEASE);
    __atomic_store_n(&f->shapes, h, __ATOMIC_RELEASE);
    return 0;
}

const qr_valshapes *qr_invfield_valshapes(qr_invfield *f, int *bad, qr_err *e)
{
    *bad = 0;
    const qr_valshapes *have = __atomic_load_n(&f->valshapes, __ATOMIC_ACQUIRE);
    if (have || !f->valshapes_map)
        return have;
    /* verified whole, once (threads racing here verify the same bytes and
     * publish the same pointer), then its header parsed */
    if (qr_seg_check(f->seg, f->valshapes_ref, 0, f->valshapes_len, "VALSHAPES", e) != 0) {
        *bad = 1;
        return NULL;
    }
    const qr_valshapes *h = valshapes_header(f, e);
    if (!h) {
        *bad = 1; /* out of memory */
        return NULL;
    }
    if (h == &bad_valshapes) { /* verified, yet malformed: say how */
        qr_valshapes again;
        (void)qr_valshapes_parse(f->valshapes_map, f->valshapes_len, &again, f->seg->path, e);
        *bad = 1;
        return NULL;
    }
    __atomic_store_n(&f->valshapes, h, __ATOMIC_RELEASE);
    return h;
}

int qr_invfield_load_positions(qr_invfield *f, qr_err *e)
{
    if (qr_invfield_positions(f) || !f->def.fulltext)
        return 0;
    if (!f->def.positions)
        return qr_errf(e, QR_E_FEATURE, "the %s index stores no positions: phrases cannot "
                       "be searched on it", f->def.name);
    /* each term's range is verified when its cursor opens */
    __atomic_store_n(&f->pos, f->pos_map, __ATOMIC_RELEASE);
    return 0;
}

/* Where a dense term's bitmap lies in BITMAPS: 0, or -1 out of range. */
static int bitmap_range(const qr_invfield *f, const qr_terminfo *ti, uint64_t *off, uint64_t *len)
{
    uint64_t words = ((uint64_t)f->rows + 63) / 64;
    if (!f->bitmaps || !ti->has_bitmap || ti->bm_word > f->bitmaps_len / 8 ||
        words > f->bitmaps_len / 8 - ti->bm_word)
        return -1;
    *off = ti->bm_word * 8;
    *len = words * 8;
    return 0;
}

const unsigned char *qr_invfield_bitmap_mapped(const qr_invfield *f, const qr_terminfo *ti)
{
    uint64_t off, len;
    if (bitmap_range(f, ti, &off, &len) != 0 || !qr_seg_checked(f->seg, f->bm_ref, off, len))
        return NULL;
    return f->bitmaps + off;
}

const unsigned char *qr_invfield_bitmap(qr_invfield *f, const qr_terminfo *ti, qr_err *e)
{
    uint64_t off, len;
    if (bitmap_range(f, ti, &off, &len) != 0) {
        qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s term bitmap out of range (index section %u)",
                f->seg->path, f->def.name, f->def.sec);
        return NULL;
    }
    if (qr_seg_check(f->seg, f->bm_ref, off, len, "BITMAPS", e) != 0)
        return NULL;
    return f->bitmaps + off;
}

const unsigned char *qr_invfield_norm_mask(qr_invfield *f, const qr_terminfo *ti, qr_err *e)
{
    uint64_t off, len;
    if (!ti->has_multi) {
        qr_errf(e, QR_E_INTERNAL, "%s term has no mask of its norms", f->def.name);
        return NULL;
    }
    if (bitmap_range(f, ti, &off, &len) != 0 || 64 > f->bitmaps_len - (off + len)) {
        qr_errf(e, QR_E_CORRUPT,
                "segment %s: corrupt: %s term's norm masks out of range (index section %u)",
                f->seg->path, f->def.name, f->def.sec);
        return NULL;
    }
    if (qr_seg_check(f->seg, f->bm_ref, off + len, 64, "BITMAPS", e) != 0)
        return NULL;
    return f->bitmaps + off + len;
}

int qr_invfield_multi_bits(qr_invfield *f, const qr_terminfo *ti, uint64_t *bits, qr_err *e)
{
    uint64_t off, len;
    if (!ti->has_multi)
        return qr_errf(e, QR_E_INTERNAL, "%s term has no list of rows with tf >= 2", f->def.name);
    if (bitmap_range(f, ti, &off, &len) != 0 || 64 > f->bitmaps_len - (off + len) ||
        ti->multi_len > f->bitmaps_len - (off + len + 64)) {
        return qr_errf(e, QR_E_CORRUPT,
                       "segment %s: corrupt: %s term's rows with tf >= 2 out of range "
                       "(index section %u)",
                       f->seg->path, f->def.name, f->def.sec);
    }
    off += len + 64;
    if (qr_seg_check(f->seg, f->bm_ref, off, ti->multi_len, "BITMAPS", e) != 0)
        return -1;
    qr_rd r;
    qr_rd_init(&r, f->bitmaps + off, (size_t)ti->multi_len);
    uint64_t row = 0;
    for (uint32_t i = 0; i < ti->multi_n; i++) {
        uint64_t g = qr_rd_varint(&r);
        if (r.bad || g >= f->rows || (row = i ? row + g + 1 : g) >= f->rows) {
            row = f->rows;
            break;
        }
        bits[row >> 6] |= 1ull << (row & 63);
    }
    if (r.bad || row >= f->rows || qr_rd_left(&r) != 0)
        return qr_errf(e, QR_E_CORRUPT,
                       "segment %s: corrupt: %s term's rows with tf >= 2 do not decode "
                       "(index section %u, BITMAPS offset %llu)",
                       f->seg->path, f->def.name, f->def.sec, (unsigned long long)off);
    return 0;
}

int qr_invfield_check_term(const qr_invfield *f, const qr_terminfo *ti, qr_err *e)
{
    if (ti->kind != TI_INLINE &&
        qr_seg_check(f->seg, f->post_ref, ti->post_off, ti->post_len, "POSTINGS", e) != 0)
        return -1;
    if (qr_invfield_positions(f) && f->def.positions &&
        qr_seg_check(f->seg, f->pos_ref, ti->pos_off, ti->pos_len, "POSITIONS", e) != 0)
        return -1;
    return 0;
}

int qr_invfield_cursor(const qr_invfield *f, const qr_terminfo *ti, qr_pcursor *c, qr_err *e)
{
    /* positions only once qr_invfield_load_positions mapped them (phrases) */
    const unsigned char *pp = qr_invfield_positions(f);
    int ft = f->def.fulltext, pos = f->def.positions && pp;
    if (qr_invfield_check_term(f, ti, e) != 0) {
        qr_pc_open_corrupt(c, ti);
        return -1;
    }
    if (qr_pc_open(c, f->post, f->post_len, pp, f->pos_len, ft, pos, ti) != 0)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s postings out of range",
                       f->seg->path, f->def.name);
    return 0;
}

/* Every term in order, each info decoded and its lists verified; as many
 * as the index says. */
static int verify_terms(qr_invfield *f, qr_err *e)
{
    const char *path = f->seg->path;
    qr_titer it;
    char prev[QR_MAX_TERM];
    size_t prev_len = 0;
    uint64_t n = 0;
    int r = qr_tdict_seek_block(&f->dict, &it, 0, e);
    for (; r == 1; r = qr_titer_next(&it, e), n++) {
        if (n && qr_term_cmp(prev, prev_len, it.term, it.len) >= 0)
            return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s index: term %llu out of order",
                           path, f->def.name, (unsigned long long)n);
        qr_terminfo ti;
        if (qr_titer_info(&it, &ti, e) != 0 || qr_invfield_check_term(f, &ti, e) != 0)
            return qr_err_prefix(e, "segment %s: %s index: ", path, f->def.name);
        memcpy(prev, it.term, it.len);
        prev_len = it.len;
    }
    if (r < 0)
        return qr_err_prefix(e, "segment %s: %s index: ", path, f->def.name);
    if (n != f->dict.nterms)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s index: %llu terms, its header says %llu",
                       path, f->def.name, (unsigned long long)n, (unsigned long long)f->dict.nterms);
    return 0;
}

/* The shapes' blocks against each other: every row's number (the
 * statistics counted from them) against SHAPEROWS, SHAPEWORDS against
 * what the text makes. */
static int verify_shapes(qr_invfield *f, qr_err *e)
{
    const char *path = f->seg->path;
    const qr_shapes *sh = qr_invfield_shapes(f);
    if (!sh)
        return 0;
    qr_shape_stats st;
    if (qr_shape_stats_make(sh, NULL, 0, &st, path, e) != 0)
        return -1;
    const uint32_t *rows = qr_invfield_shape_rows(f);
    int same = !rows || !memcmp(rows, st.rows, sizeof *rows * ((size_t)sh->k + 1));
    qr_shape_stats_free(&st);
    if (!same)
        return qr_errf(e, QR_E_CORRUPT,
                       "segment %s: corrupt: %s index SHAPEROWS: not the rows of each shape", path,
                       f->def.name);
    if (!f->shapewords_map)
        return 0;
    qr_buf want;
    qr_buf_init(&want);
    if (qr_shape_words_build(sh, &want, path, e) != 0) {
        qr_buf_free(&want);
        return -1;
    }
    same = want.len == f->shapewords_len && !memcmp(want.p, f->shapewords_map, want.len);
    qr_buf_free(&want);
    if (!same)
        return qr_errf(e, QR_E_CORRUPT,
                       "segment %s: corrupt: %s index SHAPEWORDS: not what the shapes' text makes",
                       path, f->def.name);
    return 0;
}

int qr_invfield_verify(qr_invfield *f, qr_err *e)
{
    int bad = 0;
    return qr_invfield_load_positions(f, e) != 0 || qr_invfield_load_norms(f, e) != 0 ||
                   qr_invfield_load_shapes(f, e) != 0 || qr_invfield_load_shape_rows(f, e) != 0 ||
                   qr_invfield_load_shape_words(f, e) != 0 ||
                   (!qr_invfield_valshapes(f, &bad, e) && bad) || verify_terms(f, e) != 0 ||
                   verify_shapes(f, e) != 0
               ? -1
               : 0;
}

int qr_invfield_row_shape(qr_invfield *f, const qr_shapes *sh, uint32_t r, uint32_t *j, qr_err *e)
{
    if (r >= sh->rows)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: %s index: row %u of %u", f->seg->path,
                       f->def.name, r, sh->rows);
    size_t at = (size_t)(sh->ids - f->shapes_map) + (((size_t)r * sh->width) >> 3);
    if (qr_seg_check(f->seg, f->shapes_ref, at, 4, "SHAPES", e) != 0)
        return -1;
    if ((*j = qr_shape_of(sh, r)) > sh->k)
        return qr_errf(e, QR_E_CORRUPT,
                       "segment %s: corrupt: %s index SHAPES: row %u has shape %u of %u",
                       f->seg->path, f->def.name, r, *j, sh->k);
    return 0;
}

int qr_invfield_rows_in_shapes(qr_invfield *f, const uint64_t *bits, const uint8_t *mark,
                               uint64_t *n, qr_err *e)
{
    *n = 0;
    const qr_shapes *sh;
    if (qr_invfield_shape_numbers(f, &sh, e) != 0)
        return -1;
    if (!sh)
        return 0;
    for (size_t w = 0; w < ((size_t)sh->rows + 63) / 64; w++)
        for (uint64_t x = bits[w]; x; x &= x - 1) {
            uint32_t r = (uint32_t)(w * 64 + (unsigned)__builtin_ctzll(x)), j;
            if (r >= sh->rows)
                break;
            if (qr_invfield_row_shape(f, sh, r, &j, e) != 0)
                return -1;
            *n += mark[j] != 0;
        }
    return 1;
}
