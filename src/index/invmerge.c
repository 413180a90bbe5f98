/* invmerge.c - one field's index of a merged segment, from the same field
 * of its source segments instead of from the rows' values: no tokenizing,
 * no hashing of terms. The sources' dictionaries are walked together in
 * dictionary order; each term's postings are read from every source that
 * has it, its docs renumbered into the merged segment's order (a dropped
 * row, deleted or trimmed, is left out; a term left without docs is not
 * written), and encoded by the same writer as a build (qr_postw_term,
 * qr_tdictw_add, qr_field_finish). Norms are copied per row. So the
 * sections are the bytes a build from the merged rows writes: the merge
 * tests compare the two files.
 *
 * Each source's renumbering is increasing (a source is in time order and
 * the merged order is a stable sort by time), so a term's docs from one
 * source come in order; sources whose time ranges overlap interleave, and
 * then the term's entries are sorted by doc before they are written. */
#include <stdatomic.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

#include "index/invbuild_int.h"

#define CANCEL_EVERY 1024u

/* One term's docs being gathered: parallel arrays, positions flattened. */
typedef struct gather {
    uint32_t *docs, *tfs, *posoff;
    size_t n, cap;
    uint32_t *pos;
    size_t npos, cappos;
    /* scratch of a reorder */
    uint64_t *keys;
    uint32_t *docs2, *tfs2, *pos2;
    size_t capkeys, cappos2;
} gather;

static int grow_u32(uint32_t **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 1024;
    while (nc < need)
        nc *= 2;
    uint32_t *np = realloc(*p, sizeof *np * nc);
    if (!np)
        return -1;
    *p = np;
    *cap = nc;
    return 0;
}

static int gather_room(gather *g, size_t n)
{
    if (n <= g->cap)
        return 0;
    size_t c1 = g->cap, c2 = g->cap, c3 = g->cap;
    if (grow_u32(&g->docs, &c1, n) || grow_u32(&g->tfs, &c2, n) || grow_u32(&g->posoff, &c3, n))
        return -1;
    g->cap = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
    return 0;
}

static void gather_free(gather *g)
{
    free(g->docs);
    free(g->tfs);
    free(g->posoff);
    free(g->pos);
    free(g->keys);
    free(g->docs2);
    free(g->tfs2);
    free(g->pos2);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sort the gathered entries by doc (docs are distinct), positions along. */
static int gather_sort(gather *g, int has_pos)
{
    size_t n = g->n;
    if (n > g->capkeys) {
        uint64_t *nk = realloc(g->keys, sizeof *nk * n);
        if (!nk)
            return -1;
        g->keys = nk;
        g->capkeys = n;
    }
    for (size_t i = 0; i < n; i++)
        g->keys[i] = (uint64_t)g->docs[i] << 32 | (uint32_t)i;
    qsort(g->keys, n, sizeof *g->keys, cmp_u64);
    size_t c1 = 0, c2 = 0;
    uint32_t *d2 = NULL, *t2 = NULL;
    if (grow_u32(&d2, &c1, n) || grow_u32(&t2, &c2, n)) {
        free(d2);
        free(t2);
        return -1;
    }
    size_t np = 0;
    if (has_pos && grow_u32(&g->pos2, &g->cappos2, g->npos ? g->npos : 1)) {
        free(d2);
        free(t2);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        uint32_t i = (uint32_t)g->keys[k];
        d2[k] = g->docs[i];
        t2[k] = g->tfs[i];
        if (has_pos) {
            memcpy(g->pos2 + np, g->pos + g->posoff[i], sizeof *g->pos * g->tfs[i]);
            np += g->tfs[i];
        }
    }
    free(g->docs);
    free(g->tfs);
    g->docs = d2;
    g->tfs = t2;
    g->cap = c1 < c2 ? c1 : c2;
    if (has_pos) {
        uint32_t *t = g->pos;
        size_t tc = g->cappos;
        g->pos = g->pos2;
        g->cappos = g->cappos2;
        g->pos2 = t;
        g->cappos2 = tc;
    }
    return 0;
}

/* Does segment s hold field fd's index as the table defines it? */
static const qr_section *same_section(const qr_segment *s, const qr_field_def *fd)
{
    const qr_section *sec = qr_seg_section(s, fd->sec);
    if (!sec || sec->kind != fd->kind || sec->col >= s->ncols ||
        strcasecmp(s->cols[sec->col].name, fd->name) != 0 || s->cols[sec->col].type != fd->coltype)
        return NULL;
    int lc = (sec->flags & QR_SECF_LOWERCASE) != 0, ps = (sec->flags & QR_SECF_POSITIONS) != 0;
    if (fd->fulltext && (lc != fd->lowercase || ps != fd->positions))
        return NULL;
    return sec;
}

int qr_field_mergeable(const qr_field_def *fd, qr_segment *const *src, uint32_t nsrc)
{
    for (uint32_t s = 0; s < nsrc; s++)
        if (!same_section(src[s], fd))
            return 0;
    return 1;
}

int qr_seg_has_index(const qr_segment *s, const qr_tabdef *d, const qr_ixdef *x)
{
    qr_field_def fd = qr_field_def_of(d, x);
    return same_section(s, &fd) != NULL;
}

/* Rows of batch column fd->col with a value: FIELDSTATS' first count. */
static uint64_t docs_with_value(const qr_field_def *fd, const qr_batch *b)
{
    const qr_colvec *v = &b->cols[fd->col];
    uint64_t k = 0;
    for (uint32_t r = 0; r < b->nrows; r++)
        k += v->ints ? !v->isnull[r] : v->strs[r].p != NULL;
    return k;
}

int qr_field_merge(const qr_field_def *fd, qr_segment *const *src, const uint32_t *const *docmap,
                   const uint8_t *dropped, uint32_t nsrc, const qr_batch *b, qr_field_out *fo,
                   qr_qctx *ctx, const char *path, qr_err *e)
{
    uint32_t rows = b->nrows;
    qr_invfield *f = calloc(nsrc ? nsrc : 1, sizeof *f);
    qr_titer *it = calloc(nsrc ? nsrc : 1, sizeof *it);
    int *live = calloc(nsrc ? nsrc : 1, sizeof *live);
    qr_pcursor *c = malloc(sizeof *c);
    gather g = {0};
    qr_buf ti;
    qr_buf_init(&ti);
    int rc = -1;
    if (!f || !it || !live || !c)
        goto oom;
    if (fd->fulltext && !(fo->norms = calloc(rows ? rows : 1, 1)))
        goto oom;
    for (uint32_t s = 0; s < nsrc; s++) {
        if (qr_invfield_open(&f[s], src[s], fd->sec, e) != 0 ||
            (fd->positions && qr_invfield_load_positions(&f[s], e) != 0) ||
            (fd->fulltext && qr_invfield_load_norms(&f[s], e) != 0))
            goto fail;
        if (fd->fulltext) {
            const uint8_t *nm = qr_invfield_norms(&f[s]);
            for (uint32_t r = 0; r < f[s].rows; r++)
                if (docmap[s][r] != UINT32_MAX)
                    fo->norms[docmap[s][r]] = nm[r];
        }
        int k = qr_tdict_seek_block(&f[s].dict, &it[s], 0, e);
        if (k < 0)
            goto fail;
        live[s] = k;
    }
    qr_postw pw = {fd->fulltext, fd->positions, &fo->post, &fo->pos, fo->norms, &fo->bitmaps, rows};
    qr_tdictw_init(&fo->dict);
    uint64_t nterms = 0, total = 0, steps = 0;
    char term[QR_MAX_TERM + 1];
    for (;;) {
        int m = -1; /* the smallest current term */
        for (uint32_t s = 0; s < nsrc; s++)
            if (live[s] && (m < 0 || qr_term_cmp(it[s].term, it[s].len, it[m].term, it[m].len) < 0))
                m = (int)s;
        if (m < 0)
            break;
        size_t tl = it[m].len;
        memcpy(term, it[m].term, tl);
        g.n = g.npos = 0;
        int sorted = 1;
        for (uint32_t s = (uint32_t)m; s < nsrc; s++) {
            if (!live[s] || qr_term_cmp(it[s].term, it[s].len, term, tl) != 0)
                continue;
            qr_terminfo info;
            if (qr_titer_info(&it[s], &info, e) != 0 || qr_invfield_cursor(&f[s], &info, c, e) != 0)
                goto fail;
            const uint32_t *map = docmap[s];
            uint32_t d;
            while ((d = qr_pc_next(c)) != QR_NO_DOC) {
                if (d >= f[s].rows)
                    break;
                uint32_t nd = map[d];
                if (nd == UINT32_MAX)
                    continue;
                if (gather_room(&g, g.n + 1) != 0)
                    goto oom;
                uint32_t tf = fd->fulltext ? qr_pc_tf(c) : 1;
                if (g.n && nd < g.docs[g.n - 1])
                    sorted = 0;
                g.docs[g.n] = nd;
                g.tfs[g.n] = tf;
                g.posoff[g.n] = (uint32_t)g.npos;
                if (fd->positions) {
                    if (grow_u32(&g.pos, &g.cappos, g.npos + tf) != 0)
                        goto oom;
                    if (qr_pc_positions(c, g.pos + g.npos, tf) != (int64_t)tf)
                        break; /* corrupt, reported below */
                    g.npos += tf;
                }
                g.n++;
                total += fd->fulltext ? tf : 0;
            }
            if (c->corrupt || d != QR_NO_DOC) {
                qr_errf(e, QR_E_CORRUPT,
                        "segment %s: corrupt: index %s: the postings of a term do not decode",
                        src[s]->path, fd->name);
                goto fail;
            }
            int k = qr_titer_next(&it[s], e);
            if (k < 0)
                goto fail;
            live[s] = k;
        }
        if (ctx && ++steps % CANCEL_EVERY == 0 && qr_qctx_check(ctx, e) != 0)
            goto fail;
        if (g.n == 0) /* every doc of it was dropped */
            continue;
        if (!sorted && gather_sort(&g, fd->positions) != 0)
            goto oom;
        qr_buf_clear(&ti);
        uint64_t post_off = fo->post.len, pos_off = fo->pos.len;
        if (qr_postw_term(&pw, g.docs, g.tfs, g.pos, (uint32_t)g.n, &ti) != 0 ||
            qr_tdictw_add(&fo->dict, term, tl, ti.p, ti.len, post_off, pos_off) != 0)
            goto oom;
        nterms++;
    }
    if (!fd->fulltext) { /* the sources' counts, or counted again when rows went */
        int any = 0;
        for (uint32_t s = 0; s < nsrc; s++) {
            any |= dropped[s];
            total += f[s].total_tokens;
        }
        if (any && qr_field_count_terms(fd, b, &total, e) != 0)
            goto fail;
    }
    if (qr_field_finish(fo, fd, docs_with_value(fd, b), total, nterms, rows) != 0)
        goto oom;
    rc = 0;
    goto out;
oom:
    qr_errf(e, QR_E_NOMEM, "segment %s: out of memory merging the %s index", path, fd->name);
fail:
out:
    for (uint32_t s = 0; f && s < nsrc; s++) /* closing a field never opened is a no-op */
        qr_invfield_close(&f[s]);
    qr_buf_free(&ti);
    gather_free(&g);
    free(c);
    free(f);
    free(it);
    free(live);
    return rc;
}
