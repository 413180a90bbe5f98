/* invbuild.c - building a segment's inverted indexes from a batch, in the
 * segment's time order, and writing the segment with them.
 *
 * Per field: every (term, doc, position) occurrence is collected with term
 * ids from a hash map, counting-sorted by term id (stable, so each term's
 * occurrences stay in doc and position order), and the terms are written in
 * byte order: postings and positions streams plus the front-coded
 * dictionary. Body also gets one norm byte per row.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/tokenizer.h"
#include "index/invfmt.h"
#include "index/invindex.h"
#include "index/norms.h"
#include "util/arena.h"
#include "util/strmap.h"

const qr_field_def qr_fields[QR_NUM_FIELDS] = {
    {SEC_BODY, COL_BODY, 1, "body"},
    {SEC_KW_SERVICE, COL_SERVICE_NAME, 0, "service"},
    {SEC_KW_SEVERITY, COL_SEVERITY_TEXT, 0, "severity"},
    {SEC_KW_SCOPE, COL_SCOPE_NAME, 0, "scope"},
    {SEC_KW_TRACE, COL_TRACE_ID, 0, "trace"},
    {SEC_KW_SEVNUM, COL_SEVERITY_NUMBER, 0, "sevnum"},
};

const qr_field_def *qr_field_by_sec(uint16_t sec)
{
    for (int i = 0; i < QR_NUM_FIELDS; i++)
        if (qr_fields[i].sec == sec)
            return &qr_fields[i];
    return NULL;
}

const qr_field_def *qr_field_by_name(const char *name, size_t n)
{
    for (int i = 0; i < QR_NUM_FIELDS; i++)
        if (strlen(qr_fields[i].name) == n && memcmp(qr_fields[i].name, name, n) == 0)
            return &qr_fields[i];
    return NULL;
}

typedef struct occ {
    uint32_t doc, pos;
} occ;

typedef struct field_out {
    qr_buf post, pos, stats, bitmaps;
    qr_tdictw dict;
    uint8_t *norms;
    qr_sec_block blocks[7];
    uint32_t nblocks;
} field_out;

/* Term ids in dictionary order (qr_term_cmp) */
static __thread const qr_slice *tl_terms;
static int cmp_term_ids(const void *a, const void *b)
{
    const qr_slice *x = &tl_terms[*(const uint32_t *)a], *y = &tl_terms[*(const uint32_t *)b];
    return qr_term_cmp(x->p, x->n, y->p, y->n);
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

static int build_field(const qr_field_def *fd, const qr_batch *b, const uint32_t *perm,
                       field_out *fo, const char *path, qr_err *e)
{
    uint32_t n = b->nrows;
    const qr_slice *vals = b->cols[fd->col].strs;
    const int64_t *ints = b->cols[fd->col].ints; /* numeric fields */
    const uint8_t *nulls = b->cols[fd->col].isnull;
    int numeric = qr_schema[fd->col].type == TYPE_INT32 || qr_schema[fd->col].type == TYPE_UINT8;
    qr_strmap terms;
    qr_strmap_init(&terms);
    qr_arena arena;
    qr_arena_init(&arena, 1 << 20, 0);
    u32vec tids = {0};
    uint32_t *doclen = NULL;
    qr_tokenizer tok;
    qr_tok_init(&tok);
    uint64_t docs_with = 0, total = 0;
    uint32_t *order = NULL, *start = NULL, *docs = NULL, *tfs = NULL, *poss = NULL;
    occ *sorted = NULL;
    int rc = -1;
    if (fd->fulltext && !(fo->norms = calloc(n ? n : 1, 1)))
        goto oom;
    if (!(doclen = calloc(n ? n : 1, sizeof *doclen)))
        goto oom;
    for (uint32_t d = 0; d < n; d++) {
        if (numeric) { /* its value as a term (an INT32 column) */
            if (nulls[perm[d]])
                continue;
            char t[QR_NUM_TERM_LEN];
            qr_num_term((int32_t)ints[perm[d]], t);
            int added;
            int64_t id = qr_strmap_get(&terms, t, sizeof t);
            if (id < 0) {
                char *copy = qr_arena_memdup(&arena, t, sizeof t);
                if (!copy || (id = qr_strmap_put(&terms, copy, sizeof t, &added)) < 0)
                    goto oom;
            }
            if (u32_push(&tids, (uint32_t)id) != 0)
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
        if (!fd->fulltext) {
            if (v->n > QR_MAX_TERM)
                continue;
            int added;
            int64_t id = qr_strmap_put(&terms, v->p, v->n, &added);
            if (id < 0 || u32_push(&tids, (uint32_t)id) != 0)
                goto oom;
            doclen[d] = 1;
            total++;
            continue;
        }
        qr_tok_reset(&tok, v->p, v->n);
        qr_token t;
        uint32_t len = 0;
        while (qr_tok_next(&tok, &t)) {
            int added;
            int64_t id = qr_strmap_get(&terms, t.p, t.n);
            if (id < 0) {
                char *copy = qr_arena_memdup(&arena, t.p, t.n);
                if (!copy || (id = qr_strmap_put(&terms, copy, t.n, &added)) < 0)
                    goto oom;
            }
            if (u32_push(&tids, (uint32_t)id) != 0)
                goto oom;
            len++;
        }
        doclen[d] = len;
        fo->norms[d] = qr_norm_encode(len);
        total += len;
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
    free(tids.v);
    tids.v = NULL;
    for (uint32_t t = 0; t < nt; t++)
        order[t] = t;
    tl_terms = terms.keys;
    qsort(order, nt, sizeof *order, cmp_term_ids);
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
    qr_postw pw = {fd->fulltext, fd->fulltext, &fo->post, &fo->pos, fo->norms, &fo->bitmaps, n};
    qr_tdictw_init(&fo->dict);
    qr_buf ti;
    qr_buf_init(&ti);
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
                          pos_off) != 0) {
            qr_buf_free(&ti);
            goto oom;
        }
    }
    qr_buf_free(&ti);
    if (qr_tdictw_finish(&fo->dict) != 0)
        goto oom;
    qr_buf_put_u64(&fo->stats, docs_with);
    qr_buf_put_u64(&fo->stats, total);
    qr_buf_put_u64(&fo->stats, nt);
    if (fo->stats.oom || fo->bitmaps.oom)
        goto oom;
    qr_sec_block *bl = fo->blocks;
    bl[fo->nblocks++] = (qr_sec_block){IBLK_FIELDSTATS, fo->stats.p, fo->stats.len, 0, 0, 0};
    bl[fo->nblocks++] =
        (qr_sec_block){IBLK_TERMINDEX, fo->dict.index.p, fo->dict.index.len, 0, 0, 0};
    bl[fo->nblocks++] =
        (qr_sec_block){IBLK_TERMDICT, fo->dict.dict.p, fo->dict.dict.len, 0, 0, 0};
    bl[fo->nblocks++] = (qr_sec_block){IBLK_POSTINGS, fo->post.p, fo->post.len, 0, 0, 0};
    if (fo->bitmaps.len)
        bl[fo->nblocks++] =
            (qr_sec_block){IBLK_BITMAPS, fo->bitmaps.p, fo->bitmaps.len, 0, 0, 0};
    if (fd->fulltext) {
        bl[fo->nblocks++] = (qr_sec_block){IBLK_POSITIONS, fo->pos.p, fo->pos.len, 0, 0, 0};
        bl[fo->nblocks++] = (qr_sec_block){IBLK_NORMS, fo->norms, n, 0, 0, 0};
    }
    rc = 0;
    goto out;
oom:
    qr_errf(e, QR_E_NOMEM, "segment %s: out of memory building the %s index", path, fd->name);
out:
    qr_tok_free(&tok);
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

int qr_segment_build(const char *path, const qr_batch *b, const qr_seg_opts *o,
                     qr_seg_summary *out, qr_err *e)
{
    uint32_t *perm = qr_seg_time_order(b);
    if (!perm)
        return qr_errf(e, QR_E_NOMEM, "segment %s: out of memory", path);
    field_out fo[QR_NUM_FIELDS];
    memset(fo, 0, sizeof fo);
    qr_sec_in secs[QR_NUM_FIELDS];
    int rc = 0;
    for (int i = 0; i < QR_NUM_FIELDS && rc == 0; i++) {
        rc = build_field(&qr_fields[i], b, perm, &fo[i], path, e);
        secs[i].id = qr_fields[i].sec;
        secs[i].nblocks = fo[i].nblocks;
        secs[i].blocks = fo[i].blocks;
    }
    if (rc == 0)
        rc = qr_seg_write_ex(path, b, perm, secs, QR_NUM_FIELDS, o, out, e);
    for (int i = 0; i < QR_NUM_FIELDS; i++) {
        qr_buf_free(&fo[i].post);
        qr_buf_free(&fo[i].pos);
        qr_buf_free(&fo[i].stats);
        qr_buf_free(&fo[i].bitmaps);
        qr_tdictw_free(&fo[i].dict);
        free(fo[i].norms);
    }
    free(perm);
    return rc;
}
