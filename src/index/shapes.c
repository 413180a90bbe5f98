/* shapes.c - row shapes (shapes.h): found at build from each row's term
 * ids, numbered alike across a merge's sources from their text, read as a
 * number per row. */
#include "index/shapes.h"

#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

#define NO_TERM UINT32_MAX /* a masked (variable) token in a build's sequences */
#define HEADER  12u

int qr_shape_variable(const char *t, size_t n)
{
    int hex = n >= 8 || n == 4; /* uuids: 8-4-4-4-12 */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c >= '0' && c <= '9')
            return 1;
        hex &= c >= 'a' && c <= 'f';
    }
    return hex;
}

/* Header, then the shapes numbered in `num` (ids of m with num[id] != 0,
 * in id order: number order) as text(m, id), then each row's number. */
/* Bits a shape number takes with k shapes (0..16). */
static uint32_t width_of(uint32_t k)
{
    uint32_t w = 0;
    while (w < 16 && (1u << w) <= k)
        w++;
    return w;
}

static void put_header(qr_buf *out, uint32_t k)
{
    qr_buf_put_u8(out, (uint8_t)width_of(k));
    qr_buf_put(out, "\0\0\0", 3);
    qr_buf_put_u32(out, k);
    qr_buf_put_u32(out, 0); /* D, once known */
}

/* D into the header, then the rows' numbers packed at the width k needs,
 * three bytes of zeros after (a reader loads four bytes at any row). */
static void put_ids(qr_buf *out, size_t dict_at, const uint16_t *ids, uint32_t rows, uint32_t k)
{
    if (out->oom)
        return;
    qr_store_u32(out->p + dict_at - 4, (uint32_t)(out->len - dict_at));
    uint32_t w = width_of(k);
    size_t n = ((size_t)rows * w + 7) / 8 + 3;
    unsigned char *p = qr_buf_reserve(out, n);
    if (!p)
        return;
    memset(p, 0, n);
    for (uint32_t r = 0; r < rows && w; r++) {
        size_t bit = (size_t)r * w;
        uint32_t v = (uint32_t)ids[r] << (bit & 7);
        p[bit >> 3] |= (unsigned char)v;
        p[(bit >> 3) + 1] |= (unsigned char)(v >> 8);
        p[(bit >> 3) + 2] |= (unsigned char)(v >> 16);
    }
    out->len += n;
}

int qr_shapes_build(uint32_t *tids, const uint32_t *doclen, uint32_t rows, const qr_slice *terms,
                    uint32_t nterms, qr_buf *out)
{
    uint8_t *var = malloc(nterms ? nterms : 1);
    uint32_t *sid = malloc(sizeof *sid * (rows ? rows : 1));
    uint16_t *ids = calloc(rows ? rows : 1, sizeof *ids);
    qr_strmap m;
    qr_strmap_init(&m);
    int rc = -1;
    if (!var || !sid || !ids)
        goto out;
    for (uint32_t t = 0; t < nterms; t++)
        var[t] = (uint8_t)qr_shape_variable(terms[t].p, terms[t].n);
    /* each row's masked sequence of term ids, as the key of its shape (ids
     * name terms exactly within the build: equal keys, equal text) */
    size_t off = 0;
    for (uint32_t d = 0; d < rows; d++) {
        uint32_t n = doclen[d];
        sid[d] = UINT32_MAX;
        if (!n)
            continue;
        uint32_t *s = tids + off;
        for (uint32_t p = 0; p < n; p++)
            s[p] = var[s[p]] ? NO_TERM : s[p];
        int added;
        int64_t id = qr_strmap_put(&m, (const char *)s, (size_t)n * 4, &added);
        if (id < 0)
            goto out;
        sid[d] = (uint32_t)id;
        off += n;
    }
    if (m.count > QR_SHAPES_MAX) { /* not templated enough: no block */
        rc = 0;
        goto out;
    }
    uint32_t k = m.count; /* strmap ids go by first row: numbers (id + 1) do */
    put_header(out, k);
    size_t dict_at = out->len;
    for (uint32_t i = 0; i < m.count; i++) {
        const uint32_t *s = (const uint32_t *)(const void *)m.keys[i].p;
        uint32_t n = (uint32_t)(m.keys[i].n / 4);
        qr_buf_put_varint(out, n);
        for (uint32_t p = 0; p < n; p++) {
            if (s[p] == NO_TERM) {
                qr_buf_put_varint(out, 0);
            } else {
                qr_buf_put_varint(out, (uint64_t)terms[s[p]].n + 1);
                qr_buf_put(out, terms[s[p]].p, terms[s[p]].n);
            }
        }
    }
    for (uint32_t d = 0; d < rows; d++)
        ids[d] = sid[d] == UINT32_MAX ? 0 : (uint16_t)(sid[d] + 1);
    put_ids(out, dict_at, ids, rows, k);
    rc = out->oom ? -1 : 0;
out:
    qr_strmap_free(&m);
    free(var);
    free(sid);
    free(ids);
    return rc;
}

int qr_shapes_parse(const unsigned char *p, size_t len, uint32_t rows, qr_shapes *s,
                    const char *path, qr_err *e)
{
    memset(s, 0, sizeof *s);
    if (len < HEADER)
        return qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: SHAPES block of %zu bytes", path,
                       len);
    uint32_t width = p[0], k = qr_load_u32(p + 4), d = qr_load_u32(p + 8);
    if (width > 16 || k > QR_SHAPES_MAX || width != width_of(k) || d > len - HEADER ||
        len - HEADER - d != ((size_t)rows * width + 7) / 8 + 3)
        return qr_errf(e, QR_E_CORRUPT,
                       "segment %s: corrupt: SHAPES header (width %u, %u shapes, %u bytes of "
                       "text) does not fit its %zu bytes and %u rows",
                       path, width, k, d, len, rows);
    s->width = width;
    s->k = k;
    s->rows = rows;
    s->dict = p + HEADER;
    s->dict_len = d;
    s->ids = p + HEADER + d;
    return 0;
}

/* The next shape's text in r: its bytes [*at, r->p). 0, or -1 when it
 * does not parse. */
static int next_shape(qr_rd *r, const unsigned char **at)
{
    *at = r->p;
    uint64_t n = qr_rd_varint(r);
    for (uint64_t t = 0; t < n && !r->bad; t++) {
        uint64_t l = qr_rd_varint(r);
        if (l)
            qr_rd_bytes(r, l - 1);
    }
    return r->bad || r->p == *at ? -1 : 0;
}

int qr_shapes_row_counts(const unsigned char *p, size_t len, uint32_t rows, qr_buf *out)
{
    qr_shapes s;
    if (qr_shapes_parse(p, len, rows, &s, "", NULL) != 0)
        return -1;
    uint32_t *n = calloc((size_t)s.k + 1, sizeof *n);
    if (!n)
        return -1;
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t v = qr_shape_of(&s, r);
        if (v > s.k) {
            free(n);
            return -1;
        }
        n[v]++;
    }
    for (uint32_t j = 0; j <= s.k; j++)
        qr_buf_put_u32(out, n[j]);
    free(n);
    return out->oom ? -1 : 0;
}

int qr_shape_stats_make(const qr_shapes *s, const unsigned char *counts, size_t counts_len,
                        qr_shape_stats *st, const char *path, qr_err *e)
{
    st->rows = calloc((size_t)s->k + 1, sizeof *st->rows);
    st->at = malloc(sizeof *st->at * ((size_t)s->k + 2));
    if (!st->rows || !st->at) {
        qr_shape_stats_free(st);
        return qr_errf(e, QR_E_NOMEM, "segment %s: out of memory counting row shapes", path);
    }
    qr_rd r;
    qr_rd_init(&r, s->dict, s->dict_len);
    const unsigned char *at = s->dict;
    for (uint32_t j = 1; j <= s->k; j++) {
        if (next_shape(&r, &at) != 0)
            break;
        st->at[j] = (uint32_t)(at - s->dict);
    }
    st->at[s->k + 1] = (uint32_t)(r.p - s->dict);
    int bad = r.bad || qr_rd_left(&r) != 0;
    if (counts) { /* stored: their size and sum checked */
        uint64_t sum = 0;
        bad |= counts_len != ((size_t)s->k + 1) * 4;
        for (uint32_t j = 0; j <= s->k && !bad; j++)
            sum += st->rows[j] = qr_load_u32(counts + (size_t)j * 4);
        bad |= sum != s->rows;
    }
    for (uint32_t row = 0; row < s->rows && !bad && !counts; row++) {
        uint32_t v = qr_shape_of(s, row);
        if (v > s->k)
            bad = 1;
        else
            st->rows[v]++;
    }
    if (bad) {
        qr_shape_stats_free(st);
        return qr_errf(e, QR_E_CORRUPT,
                       "segment %s: corrupt: SHAPES text, a row's shape or SHAPEROWS", path);
    }
    return 0;
}

void qr_shape_stats_free(qr_shape_stats *st)
{
    free(st->rows);
    free(st->at);
    st->rows = st->at = NULL;
}

int64_t qr_shape_tokens(const qr_shapes *s, const qr_shape_stats *st, uint32_t j,
                        const unsigned char **tok, uint32_t *len, uint32_t max)
{
    qr_rd r;
    qr_rd_init(&r, s->dict + st->at[j], st->at[j + 1] - st->at[j]);
    uint64_t n = qr_rd_varint(&r);
    if (n > max)
        return -1;
    for (uint64_t t = 0; t < n; t++) {
        uint64_t l = qr_rd_varint(&r);
        len[t] = l ? (uint32_t)(l - 1) : 0;
        tok[t] = l ? qr_rd_bytes(&r, l - 1) : NULL;
    }
    return r.bad ? -1 : (int64_t)n; /* parsed once already: never bad */
}

int qr_shapes_merge(const qr_shapes *src, uint32_t n, const uint32_t *const *docmap, uint32_t rows,
                    qr_buf *out, const char *path, qr_err *e)
{
    qr_strmap m;
    qr_strmap_init(&m);
    uint16_t *ids = calloc(rows ? rows : 1, sizeof *ids);
    uint64_t *from = malloc(sizeof *from * (rows ? rows : 1)); /* merged row: source << 32 | row */
    const unsigned char ***text = calloc(n ? n : 1, sizeof *text); /* [s][j]: shape j's text */
    int rc = -1;
    if (!ids || !from || !text)
        goto oom;
    memset(from, 0xff, sizeof *from * rows);
    for (uint32_t s = 0; s < n; s++) {
        if (!(text[s] = malloc(sizeof **text * ((size_t)src[s].k + 2))))
            goto oom;
        qr_rd r;
        qr_rd_init(&r, src[s].dict, src[s].dict_len);
        for (uint32_t j = 1; j <= src[s].k; j++)
            if (next_shape(&r, &text[s][j]) != 0) {
                qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: shape %u of a merge source", path,
                        j);
                goto out;
            }
        text[s][src[s].k + 1] = r.p; /* where the last one ends */
        if (qr_rd_left(&r) != 0) {
            qr_errf(e, QR_E_CORRUPT, "segment %s: corrupt: SHAPES text of a merge source", path);
            goto out;
        }
        for (uint32_t row = 0; row < src[s].rows; row++)
            if (docmap[s][row] != UINT32_MAX && docmap[s][row] < rows)
                from[docmap[s][row]] = (uint64_t)s << 32 | row;
    }
    /* numbered by first row in the merged order, as a build of the same
     * rows numbers them: the merged block is the one a build writes */
    for (uint32_t o = 0; o < rows; o++) {
        if (from[o] == UINT64_MAX) {
            qr_errf(e, QR_E_INTERNAL, "segment %s: merged row %u has no source row", path, o);
            goto out;
        }
        uint32_t s = (uint32_t)(from[o] >> 32), row = (uint32_t)from[o];
        uint32_t v = qr_shape_of(&src[s], row);
        if (v > src[s].k) {
            qr_errf(e, QR_E_CORRUPT,
                    "segment %s: corrupt: a merge source's row %u has shape %u of %u", path, row, v,
                    src[s].k);
            goto out;
        }
        if (!v) /* no tokens */
            continue;
        int added;
        int64_t id = qr_strmap_put(&m, (const char *)text[s][v],
                                   (size_t)(text[s][v + 1] - text[s][v]), &added);
        if (id < 0)
            goto oom;
        if (m.count > QR_SHAPES_MAX) { /* as a build: no block */
            rc = 0;
            goto out;
        }
        ids[o] = (uint16_t)(id + 1);
    }
    put_header(out, m.count);
    size_t dict_at = out->len;
    for (uint32_t i = 0; i < m.count; i++)
        qr_buf_put(out, m.keys[i].p, m.keys[i].n);
    put_ids(out, dict_at, ids, rows, m.count);
    if (out->oom)
        goto oom;
    rc = 0;
    goto out;
oom:
    qr_errf(e, QR_E_NOMEM, "segment %s: out of memory merging row shapes", path);
out:
    qr_strmap_free(&m);
    for (uint32_t s = 0; text && s < n; s++)
        free(text[s]);
    free(text);
    free(from);
    free(ids);
    return rc;
}
