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
#include "index/valshapes.h"

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

/* Sort the gathered entries by doc (docs are distinct), positions along.
 * The entries come as runs, one per source holding the term, each
 * increasing (runs[0] = 0 < runs[1] < ... < runs[nruns] = n): merged
 * pairwise, log2(nruns) passes over (doc, entry) keys. */
static int gather_sort(gather *g, int has_pos, size_t *runs, uint32_t nruns)
{
    size_t n = g->n;
    if (2 * n > g->capkeys) {
        uint64_t *nk = realloc(g->keys, sizeof *nk * 2 * n);
        if (!nk)
            return -1;
        g->keys = nk;
        g->capkeys = 2 * n;
    }
    uint64_t *k = g->keys, *t = g->keys + n;
    for (size_t i = 0; i < n; i++)
        k[i] = (uint64_t)g->docs[i] << 32 | (uint32_t)i;
    while (nruns > 1) {
        uint32_t w = 0;
        for (uint32_t r = 0; r < nruns; r += 2) {
            size_t lo = runs[r], mid = runs[r + 1], hi = r + 2 <= nruns ? runs[r + 2] : mid;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                t[o++] = k[j] < k[i] ? k[j++] : k[i++];
            while (i < mid)
                t[o++] = k[i++];
            while (j < hi)
                t[o++] = k[j++];
            runs[w++] = lo;
        }
        runs[w] = n;
        nruns = w;
        uint64_t *x = k;
        k = t;
        t = x;
    }
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
    for (size_t o = 0; o < n; o++) {
        uint32_t i = (uint32_t)k[o];
        d2[o] = g->docs[i];
        t2[o] = g->tfs[i];
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
        uint32_t *old = g->pos;
        size_t oc = g->cappos;
        g->pos = g->pos2;
        g->cappos = g->cappos2;
        g->pos2 = old;
        g->cappos2 = oc;
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

/* The sources whose dictionaries are walked together: a binary min-heap
 * of source numbers by (current term in dictionary order, source), each
 * term's code point length computed once when its source reaches it; so a
 * term costs log2(sources) comparisons, not two scans of all sources. */
typedef struct srcheap {
    const qr_titer *it;
    uint32_t *cpl; /* per source: its current term's code point length */
    uint32_t *h, n;
} srcheap;

static int src_before(const srcheap *q, uint32_t a, uint32_t b)
{
    if (q->cpl[a] != q->cpl[b])
        return q->cpl[a] < q->cpl[b];
    const qr_titer *x = &q->it[a], *y = &q->it[b];
    size_t m = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->term, y->term, m);
    if (c)
        return c < 0;
    if (x->len != y->len)
        return x->len < y->len;
    return a < b;
}

static void heap_push(srcheap *q, uint32_t s)
{
    q->cpl[s] = qr_term_cpl(q->it[s].term, q->it[s].len);
    uint32_t i = q->n++;
    while (i > 0 && src_before(q, s, q->h[(i - 1) / 2])) {
        q->h[i] = q->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->h[i] = s;
}

static uint32_t heap_pop(srcheap *q)
{
    uint32_t top = q->h[0], last = q->h[--q->n], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && src_before(q, q->h[c + 1], q->h[c]))
            c++;
        if (!src_before(q, q->h[c], last))
            break;
        q->h[i] = q->h[c];
        i = c;
    }
    if (q->n)
        q->h[i] = last;
    return top;
}

/* Does the heap's first source hold the term (term, tl)? */
static int heap_top_is(const srcheap *q, const char *term, size_t tl)
{
    if (!q->n)
        return 0;
    const qr_titer *x = &q->it[q->h[0]];
    return x->len == tl && memcmp(x->term, term, tl) == 0;
}

/* The merged rows' shapes when every source has them (a source written
 * before they existed leaves the merged segment without: phrases then
 * check every row's positions, as before). 0, or -1 with e set. */
static int merge_shapes(qr_invfield *f, uint32_t nsrc, const uint32_t *const *docmap, uint32_t rows,
                        qr_field_out *fo, const char *path, qr_err *e)
{
    for (uint32_t s = 0; s < nsrc; s++) {
        if (qr_invfield_load_shapes(&f[s], e) != 0)
            return -1;
        if (!qr_invfield_shapes(&f[s]))
            return 0;
    }
    qr_shapes *src = malloc(sizeof *src * (nsrc ? nsrc : 1));
    if (!src)
        return qr_errf(e, QR_E_NOMEM, "segment %s: out of memory merging row shapes", path);
    for (uint32_t s = 0; s < nsrc; s++)
        src[s] = *qr_invfield_shapes(&f[s]);
    int rc = qr_shapes_merge(src, nsrc, docmap, rows, &fo->shapes, path, e);
    free(src);
    return rc;
}

int qr_field_merge(const qr_field_def *fd, qr_segment *const *src, const uint32_t *const *docmap,
                   const uint8_t *dropped, uint32_t nsrc, const qr_batch *b, qr_field_out *fo,
                   qr_qctx *ctx, const char *path, qr_err *e)
{
    uint32_t rows = b->nrows;
    qr_invfield *f = calloc(nsrc ? nsrc : 1, sizeof *f);
    qr_titer *it = calloc(nsrc ? nsrc : 1, sizeof *it);
    uint32_t *cpl = calloc(nsrc ? nsrc : 1, sizeof *cpl), *heap = calloc(nsrc ? nsrc : 1, 4);
    uint32_t *now = calloc(nsrc ? nsrc : 1, sizeof *now); /* the sources holding the term */
    size_t *runs = calloc((size_t)nsrc + 1, sizeof *runs);
    srcheap q = {it, cpl, heap, 0};
    qr_pcursor *c = malloc(sizeof *c);
    gather g = {0};
    qr_buf ti;
    qr_buf_init(&ti);
    qr_valshapes_w vw; /* keyword: each value's row shapes */
    qr_valshapes_w_init(&vw, NULL, 0, 0);
    int rc = -1;
    if (!f || !it || !cpl || !heap || !now || !runs || !c)
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
        if (k)
            heap_push(&q, s);
    }
    qr_postw pw = {fd->fulltext, fd->positions, &fo->post, &fo->pos, fo->norms, &fo->bitmaps, rows};
    qr_tdictw_init(&fo->dict);
    if (fd->positions) /* as a build writes it */
        qr_tdictw_variable_masks(&fo->dict);
    qr_valshapes_w_init(&vw, fd->kind == QR_IX_KEYWORD ? fo->row_shapes : NULL, fo->shapes_sec,
                        rows);
    uint64_t nterms = 0, total = 0, steps = 0;
    char term[QR_MAX_TERM + 1];
    while (q.n) {
        /* the smallest current term, and every source at it, in source order */
        uint32_t nnow = 0;
        size_t tl = it[q.h[0]].len;
        memcpy(term, it[q.h[0]].term, tl);
        do
            now[nnow++] = heap_pop(&q);
        while (heap_top_is(&q, term, tl));
        g.n = g.npos = 0;
        int sorted = 1;
        uint32_t nruns = 0;
        for (uint32_t k = 0; k < nnow; k++) {
            uint32_t s = now[k];
            runs[nruns++] = g.n;
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
            int more = qr_titer_next(&it[s], e);
            if (more < 0)
                goto fail;
            if (more)
                heap_push(&q, s);
        }
        runs[nruns] = g.n;
        if (ctx && ++steps % CANCEL_EVERY == 0 && qr_qctx_check(ctx, e) != 0)
            goto fail;
        if (g.n == 0) /* every doc of it was dropped */
            continue;
        if (!sorted && gather_sort(&g, fd->positions, runs, nruns) != 0)
            goto oom;
        qr_buf_clear(&ti);
        uint64_t post_off = fo->post.len, pos_off = fo->pos.len;
        if (qr_postw_term(&pw, g.docs, g.tfs, g.pos, (uint32_t)g.n, &ti) != 0 ||
            qr_tdictw_add(&fo->dict, term, tl, ti.p, ti.len, post_off, pos_off) != 0 ||
            qr_valshapes_w_add(&vw, term, tl, g.docs, (uint32_t)g.n) != 0)
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
    if (fd->positions && merge_shapes(f, nsrc, docmap, rows, fo, path, e) != 0)
        goto fail;
    if (qr_valshapes_w_finish(&vw, &fo->valshapes) != 0)
        goto oom;
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
    qr_valshapes_w_free(&vw);
    gather_free(&g);
    free(c);
    free(f);
    free(it);
    free(cpl);
    free(heap);
    free(now);
    free(runs);
    return rc;
}
