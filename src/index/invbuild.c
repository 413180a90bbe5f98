/* invbuild.c - building a segment's inverted indexes from a batch, in the
 * segment's row order, and writing the segment with them.
 *
 * Per index: every (term, doc, position) occurrence is collected with term
 * ids from a hash map, counting-sorted by term id (stable, so each term's
 * occurrences stay in doc and position order), and the terms are written in
 * dictionary order: postings and positions streams plus the front-coded
 * dictionary. Full-text indexes also get one norm byte per row. A doc's
 * terms come from its value by the index kind: tokens (full text; of every
 * string leaf on json/map columns), the value (keyword), the number as a
 * range term, or every leaf's "path\0value" (paths).
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/tokenizer.h"
#include "format/segfmt.h"
#include "index/invbuild_int.h"
#include "index/invfmt.h"
#include "index/invindex.h"
#include "index/norms.h"
#include "index/shapes.h"
#include "index/shapewords.h"
#include "index/valshapes.h"
#include "util/buf.h"
#include "util/arena.h"
#include "util/strmap.h"

typedef struct occ {
    uint32_t doc, pos;
} occ;

/* Sorting term ids into dictionary order (qr_term_cmp): each term's code
 * point length and first 8 bytes (big-endian, zero-padded) are computed
 * once, so most comparisons touch neither the term's bytes nor count its
 * characters (terms of json paths share long prefixes: comparing them from
 * scratch was 40% of an ingest of GitHub events). */
typedef struct term_key {
    uint32_t cpl, id;
    uint64_t head;
} term_key;

static __thread const qr_slice *tl_terms;
static int cmp_term_keys(const void *a, const void *b)
{
    const term_key *x = a, *y = b;
    if (x->cpl != y->cpl)
        return x->cpl < y->cpl ? -1 : 1;
    if (x->head != y->head)
        return x->head < y->head ? -1 : 1;
    const qr_slice *p = &tl_terms[x->id], *q = &tl_terms[y->id];
    return qr_term_cmp(p->p, p->n, q->p, q->n);
}

/* keys sorted by (cpl, head) with a stable LSD radix sort of 8-bit digits
 * (head's 8 bytes, then cpl's 4), tmp as scratch; a digit that every key
 * shares costs its histogram only. The result is in keys. */
static void radix_keys(term_key *keys, term_key *tmp, uint32_t nt)
{
    uint32_t hist[12][256] = {{0}};
    for (uint32_t t = 0; t < nt; t++) {
        uint64_t h = keys[t].head;
        uint32_t c = keys[t].cpl;
        for (int d = 0; d < 8; d++)
            hist[d][(h >> (8 * d)) & 0xff]++;
        for (int d = 0; d < 4; d++)
            hist[8 + d][(c >> (8 * d)) & 0xff]++;
    }
    term_key *from = keys, *to = tmp;
    for (int d = 0; d < 12; d++) {
        uint32_t *hd = hist[d], sum = 0;
        int trivial = 0;
        for (int v = 0; v < 256; v++) {
            if (hd[v] == nt)
                trivial = 1;
            uint32_t c = hd[v];
            hd[v] = sum;
            sum += c;
        }
        if (trivial)
            continue;
        for (uint32_t t = 0; t < nt; t++) {
            uint32_t v = d < 8 ? (uint32_t)(from[t].head >> (8 * d)) & 0xff
                               : (from[t].cpl >> (8 * (d - 8))) & 0xff;
            to[hd[v]++] = from[t];
        }
        term_key *x = from;
        from = to;
        to = x;
    }
    if (from != keys)
        memcpy(keys, from, sizeof *keys * nt);
}

/* Term ids in dictionary order into order[]: by (cpl, head), then runs
 * of equal (cpl, head) by their bytes. keys and tmp: nt entries each. */
static void sort_terms(const qr_slice *terms, uint32_t nt, term_key *keys, term_key *tmp,
                       uint32_t *order)
{
    for (uint32_t t = 0; t < nt; t++) {
        const qr_slice *v = &terms[t];
        uint64_t h = 0;
        for (size_t i = 0; i < 8; i++)
            h = h << 8 | (i < v->n ? (unsigned char)v->p[i] : 0);
        keys[t] = (term_key){qr_term_cpl(v->p, v->n), t, h};
    }
    tl_terms = terms;
    if (nt < 64) {
        qsort(keys, nt, sizeof *keys, cmp_term_keys);
    } else {
        radix_keys(keys, tmp, nt);
        for (uint32_t i = 0; i < nt;) {
            uint32_t j = i + 1;
            while (j < nt && keys[j].cpl == keys[i].cpl && keys[j].head == keys[i].head)
                j++;
            if (j - i > 1)
                qsort(keys + i, j - i, sizeof *keys, cmp_term_keys);
            i = j;
        }
    }
    for (uint32_t t = 0; t < nt; t++)
        order[t] = keys[t].id;
}

/* Term ids of every token in doc order (pass 1); a counting sort then
 * scatters (doc, position) pairs into per-term runs (pass 2). 12 bytes per
 * token at the peak. */
typedef struct u32vec {
    uint32_t *v;
    size_t n, cap;
} u32vec;

static int u32_push(u32vec *o, uint32_t x)
{
    if (o->n == o->cap) {
        size_t nc = o->cap ? o->cap + o->cap / 2 : 1u << 16;
        uint32_t *nv = realloc(o->v, sizeof *nv * nc);
        if (!nv)
            return -1;
        o->v = nv;
        o->cap = nc;
    }
    o->v[o->n++] = x;
    return 0;
}

/* Collecting one field's occurrences. */
typedef struct collect {
    qr_strmap *terms;
    qr_arena *arena;
    u32vec *tids;
    qr_tokenizer *tok;
    uint32_t len; /* tokens of the current doc */
    int oom;
} collect;

static int add_term(void *ctx, const char *t, size_t n)
{
    collect *c = ctx;
    if (n > QR_MAX_TERM)
        return 0; /* cannot be looked up: not indexed */
    int added;
    uint64_t h = qr_strmap_hash(t, n);
    int64_t id = qr_strmap_get_h(c->terms, t, n, h);
    if (id < 0) {
        char *copy = qr_arena_memdup(c->arena, t, n ? n : 1);
        if (!copy || (id = qr_strmap_put_h(c->terms, copy, n, h, &added)) < 0)
            return c->oom = 1, -1;
    }
    if (u32_push(c->tids, (uint32_t)id) != 0)
        return c->oom = 1, -1;
    c->len++;
    return 0;
}

static int add_tokens(collect *c, const char *p, size_t n)
{
    qr_tok_reset(c->tok, p, n);
    qr_token t;
    while (qr_tok_next(c->tok, &t))
        if (add_term(c, t.p, t.n) != 0)
            return -1;
    return 0;
}

/* Full text over a json value: the tokens of its string leaves (keys are
 * not text). */
static int add_json_tokens(collect *c, qr_json *j, qr_arena *a)
{
    qr_slice s;
    switch (qj_peek(j)) {
    case QJ_STRING:
        return qj_string(j, &s, a) != 0 ? -1 : add_tokens(c, s.p, s.n);
    case QJ_OBJECT: {
        if (qj_object_begin(j) != 0)
            return -1;
        int r;
        while ((r = qj_object_next(j, &s, a)) == 1)
            if (add_json_tokens(c, j, a) != 0)
                return -1;
        return r < 0 ? -1 : 0;
    }
    case QJ_ARRAY: {
        if (qj_array_begin(j) != 0)
            return -1;
        int r;
        while ((r = qj_array_next(j)) == 1)
            if (add_json_tokens(c, j, a) != 0)
                return -1;
        return r < 0 ? -1 : 0;
    }
    default:
        return qj_skip(j);
    }
}

/* Walk a json value, building the path of every leaf in buf. */
static int path_walk(qr_json *j, qr_buf *buf, size_t plen, qr_arena *a,
                     int (*fn)(void *, const char *, size_t), void *ctx)
{
    qr_slice s;
    qj_type t = qj_peek(j);
    if (t == QJ_OBJECT) {
        if (qj_object_begin(j) != 0)
            return -1;
        int r;
        while ((r = qj_object_next(j, &s, a)) == 1) {
            buf->len = plen;
            if (plen)
                qr_buf_put_u8(buf, '.');
            qr_buf_put(buf, s.p, s.n);
            if (path_walk(j, buf, buf->len, a, fn, ctx) != 0)
                return -1;
        }
        return r < 0 ? -1 : 0;
    }
    if (t == QJ_ARRAY) { /* elements share the array's path */
        if (qj_array_begin(j) != 0)
            return -1;
        int r;
        while ((r = qj_array_next(j)) == 1)
            if (path_walk(j, buf, plen, a, fn, ctx) != 0)
                return -1;
        return r < 0 ? -1 : 0;
    }
    buf->len = plen;
    qr_buf_put_u8(buf, (unsigned char)QR_PATH_SEP);
    if (t == QJ_STRING) {
        if (qj_string(j, &s, a) != 0)
            return -1;
        qr_buf_put(buf, s.p, s.n);
    } else if (qj_copy(j, buf, a) != 0) {
        return -1;
    }
    if (buf->oom)
        return -1;
    return fn(ctx, (const char *)buf->p, buf->len);
}

int qr_json_path_terms(const char *json, size_t n, qr_buf *buf,
                       int (*fn)(void *ctx, const char *t, size_t n), void *ctx)
{
    qr_json j;
    qr_arena a;
    qr_arena_init(&a, 4096, 0);
    qj_init(&j, json, n);
    qr_buf_clear(buf);
    int rc = path_walk(&j, buf, 0, &a, fn, ctx);
    if (rc == 0 && qj_finish(&j) != 0)
        rc = -1;
    qr_arena_free(&a);
    return rc;
}

/* A map value (batch map text) as terms: per pair, "key\0value" (paths)
 * or the tokens of its string values (full text). */
static int map_terms(collect *c, const qr_slice *v, int paths, qr_buf *buf)
{
    qr_rd r;
    qr_rd_init(&r, v->p, v->n);
    uint64_t np = qr_rd_varint(&r);
    for (uint64_t k = 0; k < np && !r.bad; k++) {
        uint64_t kl = qr_rd_varint(&r);
        const unsigned char *kp = qr_rd_bytes(&r, kl);
        uint64_t vt = qr_rd_varint(&r);
        const unsigned char *vp = qr_rd_bytes(&r, vt >> 1);
        if (r.bad)
            break;
        if (!paths) {
            if (!(vt & 1) && add_tokens(c, (const char *)vp, vt >> 1) != 0)
                return -1;
            continue;
        }
        qr_buf_clear(buf);
        qr_buf_put(buf, kp, kl);
        qr_buf_put_u8(buf, (unsigned char)QR_PATH_SEP);
        qr_buf_put(buf, vp, vt >> 1);
        if (buf->oom || add_term(c, (const char *)buf->p, buf->len) != 0)
            return -1;
    }
    return r.bad ? -1 : 0;
}

int qr_field_finish(qr_field_out *fo, const qr_field_def *fd, uint64_t docs_with, uint64_t total,
                    uint64_t nterms, uint32_t rows)
{
    if (qr_tdictw_finish(&fo->dict) != 0)
        return -1;
    qr_buf_put_u64(&fo->stats, docs_with);
    qr_buf_put_u64(&fo->stats, total);
    qr_buf_put_u64(&fo->stats, nterms);
    if (fo->stats.oom || fo->bitmaps.oom || fo->post.oom || fo->pos.oom || fo->shapes.oom)
        return -1;
    if (fo->shapes.len) { /* from the block just made: merges write what builds do */
        qr_shapes sh;
        if (qr_shapes_row_counts(fo->shapes.p, fo->shapes.len, rows, &fo->shaperows) != 0 ||
            qr_shapes_parse(fo->shapes.p, fo->shapes.len, rows, &sh, "(new)", NULL) != 0 ||
            qr_shape_words_build(&sh, &fo->shapewords, "(new)", NULL) != 0)
            return -1;
    }
    /* In the file, in this order (readers find blocks by kind): the small
     * blocks every query of the field reads in every segment -- its
     * statistics, the shapes' rows and words, a keyword's value shapes,
     * the term index -- side by side, so a first query faults them in
     * with a window or two of pages, not one each (at 100M rows they lay
     * a few MB apart: SHAPES, POSTINGS and TERMDICT between them) */
    qr_sec_block *bl = fo->blocks;
    fo->nblocks = 0;
    bl[fo->nblocks++] = (qr_sec_block){IBLK_FIELDSTATS, fo->stats.p, fo->stats.len, 0, 0, 0};
    if (fo->shaperows.len)
        bl[fo->nblocks++] =
            (qr_sec_block){IBLK_SHAPEROWS, fo->shaperows.p, fo->shaperows.len, 0, 0, 0};
    if (fo->shapewords.len)
        bl[fo->nblocks++] =
            (qr_sec_block){IBLK_SHAPEWORDS, fo->shapewords.p, fo->shapewords.len, 0, 0, 0};
    if (fo->valshapes.len)
        bl[fo->nblocks++] =
            (qr_sec_block){IBLK_VALSHAPES, fo->valshapes.p, fo->valshapes.len, 0, 0, 0};
    bl[fo->nblocks++] =
        (qr_sec_block){IBLK_TERMINDEX, fo->dict.index.p, fo->dict.index.len, 0, 0, 0};
    bl[fo->nblocks++] = (qr_sec_block){IBLK_TERMDICT, fo->dict.dict.p, fo->dict.dict.len, 0, 0, 0};
    bl[fo->nblocks++] = (qr_sec_block){IBLK_POSTINGS, fo->post.p, fo->post.len, 0, 0, 0};
    if (fo->bitmaps.len)
        bl[fo->nblocks++] = (qr_sec_block){IBLK_BITMAPS, fo->bitmaps.p, fo->bitmaps.len, 0, 0, 0};
    if (fd->positions)
        bl[fo->nblocks++] = (qr_sec_block){IBLK_POSITIONS, fo->pos.p, fo->pos.len, 0, 0, 0};
    if (fd->fulltext)
        bl[fo->nblocks++] = (qr_sec_block){IBLK_NORMS, fo->norms, rows, 0, 0, 0};
    if (fo->shapes.len)
        bl[fo->nblocks++] = (qr_sec_block){IBLK_SHAPES, fo->shapes.p, fo->shapes.len, 0, 0, 0};
    return 0;
}

int qr_field_shaped(const qr_tabdef *d)
{
    for (uint32_t i = 0; i < d->nixs; i++) {
        qr_field_def fd = qr_field_def_of(d, &d->ixs[i]);
        if (fd.positions)
            return (int)i;
    }
    return -1;
}

int qr_field_share_shapes(const qr_tabdef *d, int shaped, qr_field_out *fo, uint32_t rows,
                          qr_shapes *sh, const char *path, qr_err *e)
{
    if (shaped < 0 || !fo[shaped].shapes.len)
        return 0;
    if (qr_shapes_parse(fo[shaped].shapes.p, fo[shaped].shapes.len, rows, sh, path, e) != 0)
        return -1;
    for (uint32_t i = 0; i < d->nixs; i++)
        if (d->ixs[i].kind == QR_IX_KEYWORD) {
            fo[i].row_shapes = sh;
            fo[i].shapes_sec = d->ixs[shaped].id;
        }
    return 0;
}

void qr_field_out_free(qr_field_out *fo)
{
    qr_buf_free(&fo->post);
    qr_buf_free(&fo->pos);
    qr_buf_free(&fo->stats);
    qr_buf_free(&fo->bitmaps);
    qr_buf_free(&fo->shapes);
    qr_buf_free(&fo->valshapes);
    qr_buf_free(&fo->shaperows);
    qr_buf_free(&fo->shapewords);
    qr_tdictw_free(&fo->dict);
    free(fo->norms);
    memset(fo, 0, sizeof *fo);
}

qr_field_def qr_field_def_of(const qr_tabdef *d, const qr_ixdef *x)
{
    return (qr_field_def){x->id,
                          x->col,
                          x->kind,
                          d->cols[x->col].type,
                          x->kind == QR_IX_FULLTEXT,
                          x->kind == QR_IX_FULLTEXT && x->positions,
                          x->kind != QR_IX_FULLTEXT || x->lowercase,
                          d->cols[x->col].name};
}

void qr_field_sec_in(const qr_field_def *fd, qr_field_out *fo, qr_sec_in *si)
{
    si->id = fd->sec;
    si->col = (uint16_t)fd->col;
    si->kind = fd->kind;
    si->flags = (uint8_t)((fd->fulltext && fd->lowercase ? QR_SECF_LOWERCASE : 0) |
                          (fd->positions ? QR_SECF_POSITIONS : 0));
    si->nblocks = fo->nblocks;
    si->blocks = fo->blocks;
}

static int count_term(void *ctx, const char *t, size_t n)
{
    (void)t;
    *(uint64_t *)ctx += n <= QR_MAX_TERM;
    return 0;
}

int qr_field_count_terms(const qr_field_def *fd, const qr_batch *b, uint64_t *total, qr_err *e)
{
    const qr_colvec *v = &b->cols[fd->col];
    qr_buf pbuf;
    qr_buf_init(&pbuf);
    uint64_t k = 0;
    int rc = 0;
    for (uint32_t r = 0; r < b->nrows && rc == 0; r++) {
        if (fd->kind == QR_IX_RANGE) {
            k += !v->isnull[r];
            continue;
        }
        const qr_slice *s = &v->strs[r];
        if (!s->p)
            continue;
        if (fd->kind == QR_IX_KEYWORD) {
            k += s->n <= QR_MAX_TERM;
        } else if (fd->coltype == QT_MAP) { /* paths: a term per pair */
            qr_rd rd;
            qr_rd_init(&rd, s->p, s->n);
            uint64_t np = qr_rd_varint(&rd);
            for (uint64_t i = 0; i < np && !rd.bad; i++) {
                uint64_t kl = qr_rd_varint(&rd);
                qr_rd_bytes(&rd, kl);
                uint64_t vt = qr_rd_varint(&rd);
                qr_rd_bytes(&rd, vt >> 1);
                k += !rd.bad && kl + 1 + (vt >> 1) <= QR_MAX_TERM;
            }
            if (rd.bad)
                rc = -1;
        } else if (qr_json_path_terms(s->p, s->n, &pbuf, count_term, &k) != 0) {
            rc = -1;
        }
        if (rc != 0)
            rc = pbuf.oom
                     ? qr_errf(e, QR_E_NOMEM, "out of memory")
                     : qr_errf(e, QR_E_INTERNAL, "column %s: row %u: malformed value", fd->name, r);
    }
    qr_buf_free(&pbuf);
    *total = k;
    return rc;
}

int qr_field_build(const qr_field_def *fd, const qr_batch *b, const uint32_t *perm,
                   qr_field_out *fo, const char *path, qr_err *e)
{
    uint32_t n = b->nrows;
    const qr_slice *vals = b->cols[fd->col].strs;
    const int64_t *ints = b->cols[fd->col].ints; /* range fields */
    const uint8_t *nulls = b->cols[fd->col].isnull;
    qr_strmap terms;
    qr_strmap_init(&terms);
    qr_arena arena, scratch;
    qr_arena_init(&arena, 1 << 20, 0);
    qr_arena_init(&scratch, 1 << 16, 0);
    u32vec tids = {0};
    uint32_t *doclen = NULL;
    qr_tokenizer tok;
    qr_tok_init(&tok);
    tok.keep_case = fd->fulltext && !fd->lowercase;
    qr_buf pbuf;
    qr_buf_init(&pbuf);
    collect cl = {&terms, &arena, &tids, &tok, 0, 0};
    uint64_t docs_with = 0, total = 0;
    uint32_t *order = NULL, *start = NULL, *docs = NULL, *tfs = NULL, *poss = NULL;
    occ *sorted = NULL;
    int rc = -1;
    if (fd->fulltext && !(fo->norms = calloc(n ? n : 1, 1)))
        goto oom;
    if (!(doclen = calloc(n ? n : 1, sizeof *doclen)))
        goto oom;
    for (uint32_t d = 0; d < n; d++) {
        cl.len = 0;
        if (fd->kind == QR_IX_RANGE) { /* its value as a term */
            if (nulls[perm[d]])
                continue;
            char t[QR_NUM_TERM64_LEN];
            unsigned tl = qr_range_term(fd->coltype, ints[perm[d]], t);
            if (add_term(&cl, t, tl) != 0)
                goto oom;
            docs_with++;
            doclen[d] = 1;
            total++;
            continue;
        }
        const qr_slice *v = &vals[perm[d]];
        if (!v->p)
            continue;
        docs_with++;
        int r = 0;
        if (fd->kind == QR_IX_KEYWORD) {
            r = add_term(&cl, v->p, v->n);
        } else if (fd->coltype == QT_MAP) {
            r = map_terms(&cl, v, fd->kind == QR_IX_PATHS, &pbuf);
        } else if (fd->coltype == QT_JSON && fd->kind == QR_IX_PATHS) {
            r = qr_json_path_terms(v->p, v->n, &pbuf, add_term, &cl);
        } else if (fd->coltype == QT_JSON) {
            qr_json j;
            qj_init(&j, v->p, v->n);
            qr_arena_reset(&scratch);
            r = add_json_tokens(&cl, &j, &scratch);
        } else {
            r = add_tokens(&cl, v->p, v->n);
        }
        if (r != 0) {
            if (cl.oom || pbuf.oom)
                goto oom;
            qr_errf(e, QR_E_INTERNAL, "segment %s: column %s: row %u: malformed value", path,
                    fd->name, d);
            goto out;
        }
        doclen[d] = cl.len;
        if (fd->fulltext)
            fo->norms[d] = qr_norm_encode(cl.len);
        total += cl.len;
    }
    /* counting sort of occurrences by term id (stable) */
    uint32_t nt = terms.count;
    start = calloc((size_t)nt + 1, sizeof *start);
    sorted = malloc(sizeof *sorted * (tids.n ? tids.n : 1));
    order = malloc(sizeof *order * (nt ? nt : 1));
    if (!start || !sorted || !order)
        goto oom;
    for (size_t i = 0; i < tids.n; i++)
        start[tids.v[i] + 1]++;
    for (uint32_t t = 0; t < nt; t++)
        start[t + 1] += start[t];
    {
        uint32_t *fill = malloc(sizeof *fill * (nt ? nt : 1));
        if (!fill)
            goto oom;
        memcpy(fill, start, sizeof *fill * nt);
        size_t i = 0;
        for (uint32_t d = 0; d < n; d++)
            for (uint32_t p = 0; p < doclen[d]; p++, i++) {
                occ *o = &sorted[fill[tids.v[i]]++];
                o->doc = d;
                o->pos = p;
            }
        free(fill);
    }
    /* the rows' shapes, from their term ids in position order (phrases
     * check positions once per shape) */
    if (fd->positions && qr_shapes_build(tids.v, doclen, n, terms.keys, nt, &fo->shapes) != 0)
        goto oom;
    free(tids.v);
    tids.v = NULL;
    {
        term_key *keys = malloc(sizeof *keys * 2 * (nt ? nt : 1));
        if (!keys)
            goto oom;
        sort_terms(terms.keys, nt, keys, keys + nt, order);
        free(keys);
    }
    /* per term: docs, tfs, positions */
    uint32_t maxocc = 0;
    for (uint32_t t = 0; t < nt; t++)
        if (start[t + 1] - start[t] > maxocc)
            maxocc = start[t + 1] - start[t];
    docs = malloc(sizeof *docs * (maxocc ? maxocc : 1));
    tfs = malloc(sizeof *tfs * (maxocc ? maxocc : 1));
    poss = malloc(sizeof *poss * (maxocc ? maxocc : 1));
    if (!docs || !tfs || !poss)
        goto oom;
    qr_postw pw = {fd->fulltext, fd->positions, &fo->post, &fo->pos, fo->norms, &fo->bitmaps, n};
    qr_tdictw_init(&fo->dict);
    if (fd->positions) /* row shapes: its other words are in SHAPEWORDS */
        qr_tdictw_variable_masks(&fo->dict);
    qr_buf ti;
    qr_buf_init(&ti);
    qr_valshapes_w vw; /* keyword: each value's row shapes */
    qr_valshapes_w_init(&vw, fd->kind == QR_IX_KEYWORD ? fo->row_shapes : NULL, fo->shapes_sec, n);
    for (uint32_t k = 0; k < nt; k++) {
        uint32_t t = order[k];
        uint32_t df = 0;
        for (uint32_t i = start[t]; i < start[t + 1]; i++) {
            const occ *o = &sorted[i];
            if (df && docs[df - 1] == o->doc) {
                tfs[df - 1]++;
            } else {
                docs[df] = o->doc;
                tfs[df] = 1;
                df++;
            }
            poss[i - start[t]] = o->pos;
        }
        qr_buf_clear(&ti);
        uint64_t post_off = fo->post.len, pos_off = fo->pos.len;
        if (qr_postw_term(&pw, docs, tfs, poss, df, &ti) != 0 ||
            qr_tdictw_add(&fo->dict, terms.keys[t].p, terms.keys[t].n, ti.p, ti.len, post_off,
                          pos_off) != 0 ||
            qr_valshapes_w_add(&vw, terms.keys[t].p, terms.keys[t].n, docs, df) != 0) {
            qr_buf_free(&ti);
            qr_valshapes_w_free(&vw);
            goto oom;
        }
    }
    qr_buf_free(&ti);
    int vr = qr_valshapes_w_finish(&vw, &fo->valshapes);
    qr_valshapes_w_free(&vw);
    if (vr != 0 || qr_field_finish(fo, fd, docs_with, total, nt, n) != 0)
        goto oom;
    rc = 0;
    goto out;
oom:
    qr_errf(e, QR_E_NOMEM, "segment %s: out of memory building the %s index", path, fd->name);
out:
    qr_tok_free(&tok);
    qr_buf_free(&pbuf);
    qr_arena_free(&scratch);
    qr_strmap_free(&terms);
    qr_arena_free(&arena);
    free(tids.v);
    free(doclen);
    free(start);
    free(sorted);
    free(order);
    free(docs);
    free(tfs);
    free(poss);
    return rc;
}

int qr_segment_build(const char *path, const qr_batch *b, const qr_seg_opts *o, qr_seg_summary *out,
                     qr_err *e)
{
    const qr_tabdef *d = b->def;
    uint32_t nix = d->nixs;
    uint32_t *perm = qr_seg_time_order(b);
    qr_field_out *fo = calloc(nix ? nix : 1, sizeof *fo);
    qr_sec_in *secs = calloc(nix ? nix : 1, sizeof *secs);
    int rc = 0;
    if (!perm || !fo || !secs)
        rc = qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", path);
    /* the shaped index first: keyword indexes record its rows' shapes */
    int shaped = qr_field_shaped(d);
    qr_shapes sh;
    for (uint32_t k = 0; k < nix && rc == 0; k++) {
        uint32_t i = qr_field_nth(shaped, k);
        qr_field_def fd = qr_field_def_of(d, &d->ixs[i]);
        rc = qr_field_build(&fd, b, perm, &fo[i], path, e);
        qr_field_sec_in(&fd, &fo[i], &secs[i]);
        if (rc == 0 && (int)i == shaped)
            rc = qr_field_share_shapes(d, shaped, fo, b->nrows, &sh, path, e);
    }
    if (rc == 0)
        rc = qr_seg_write_ex(path, b, perm, secs, nix, o, out, e);
    for (uint32_t i = 0; fo && i < nix; i++)
        qr_field_out_free(&fo[i]);
    free(fo);
    free(secs);
    free(perm);
    return rc;
}
