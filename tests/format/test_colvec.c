/* test_colvec.c - column vectors (format/colvec.h) against the row-at-a-time
 * readers: every column type and every encoding (ENC_INT, ENC_DICT for
 * text/json/map, ENC_PAGED for text/json/map, ENC_HEXID), random selections
 * (empty, sparse, dense, all rows, runs, rows on both sides of every block
 * boundary) over the OpenTelemetry table (150k rows: three 64K int blocks,
 * hundreds of hex-id and string pages) and a table with a column of every
 * type in several segments; gathered bytes outliving their reader; bad
 * selections; a full arena; block pruning by min/max against the rows. */
#include "testutil.h"

#include "format/colvec.h"
#include "format/segfmt.h"
#include "gen/otelgen.h"

#define OTEL_ROWS 150000u

/* ---- selections ---- */
typedef struct sel {
    uint32_t *rows;
    uint32_t n;
    const char *what;
} sel;

static void sel_add(sel *s, uint32_t r, uint32_t nrows)
{
    if (r < nrows && (s->n == 0 || r > s->rows[s->n - 1]))
        s->rows[s->n++] = r;
}

/* Selection number `kind` over nrows rows, blocks from column cm (their
 * boundaries). Returns 0 when there are no more kinds. */
static int make_sel(int kind, uint32_t nrows, const qr_colmeta *cm, uint64_t *rng, sel *s)
{
    s->n = 0;
    switch (kind) {
    case 0:
        s->what = "empty";
        return 1;
    case 1:
        s->what = "all rows";
        for (uint32_t r = 0; r < nrows; r++)
            sel_add(s, r, nrows);
        return 1;
    case 2:
        s->what = "dense (1/2)";
        for (uint32_t r = 0; r < nrows; r++)
            if (tu_rand(rng) & 1)
                sel_add(s, r, nrows);
        return 1;
    case 3:
        s->what = "sparse (1/1000)";
        for (uint32_t r = 0; r < nrows; r++)
            if (tu_rand(rng) % 1000 == 0)
                sel_add(s, r, nrows);
        return 1;
    case 4:
        s->what = "both sides of every block boundary";
        for (uint32_t b = 0; b < cm->ndata; b++) {
            uint32_t f = cm->blocks[cm->first_data + b].first_row;
            for (uint32_t r = f > 2 ? f - 2 : 0; r < f + 2; r++)
                sel_add(s, r, nrows);
        }
        for (uint32_t f = 0; f < nrows + 512; f += 512) /* hex pages, 64K blocks */
            for (uint32_t r = f ? f - 1 : 0; r <= f; r++)
                sel_add(s, r, nrows);
        return 1;
    case 5:
        s->what = "random runs";
        for (uint32_t r = (uint32_t)(tu_rand(rng) % 300); r < nrows;) {
            uint32_t len = 1 + (uint32_t)(tu_rand(rng) % 700);
            for (uint32_t k = 0; k < len; k++)
                sel_add(s, r + k, nrows);
            r += len + (uint32_t)(tu_rand(rng) % 5000);
        }
        return 1;
    case 6:
        s->what = "first and last row";
        sel_add(s, 0, nrows);
        sel_add(s, nrows - 1, nrows);
        return 1;
    default:
        return 0;
    }
}

/* ---- the comparison ---- */
static int slice_eq(qr_slice a, qr_slice b)
{
    if (!a.p || !b.p)
        return !a.p && !b.p;
    return a.n == b.n && (a.n == 0 || !memcmp(a.p, b.p, a.n));
}

/* Gather column `col` of s for selection sl and compare every value with a
 * second reader's qr_colr_int / qr_colr_bytes (and maps rendered as JSON).
 * Counts the vector kinds seen in kinds[]. */
static void check_column(qr_segment *s, int col, const sel *sl, int kinds[4])
{
    qr_err e;
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    qr_colreader *g = qr_colr_open(s, col, &e), *r = qr_colr_open(s, col, &e);
    assert_non_null(g);
    assert_non_null(r);
    const qr_colmeta *cm = &s->cols[col];
    qr_vec v;
    if (qr_colvec_gather(g, sl->rows, sl->n, &v, &a, &e) != 0)
        fail_msg("gather %s (%s): %s", cm->name, sl->what, e.msg);
    assert_int_equal(v.n, sl->n);
    assert_int_equal(v.type, cm->type);
    kinds[v.kind]++;
    /* copied values must not depend on the reader that read them */
    if (v.kind == QR_VEC_BYTES && cm->type != QT_MAP) {
        qr_colr_close(g);
        g = NULL;
    }
    qr_buf mj1, mj2;
    qr_buf_init(&mj1);
    qr_buf_init(&mj2);
    for (uint32_t i = 0; i < sl->n; i++) {
        uint32_t row = sl->rows[i];
        if (qr_type_is_int(cm->type)) {
            assert_int_equal(v.kind, QR_VEC_INT);
            int64_t want;
            int wnull;
            assert_int_equal(qr_colr_int(r, row, &want, &wnull, &e), 0);
            if (v.isnull[i] != wnull || (!wnull && v.ints[i] != want))
                fail_msg("%s (%s) row %u: got %lld/%d, want %lld/%d", cm->name, sl->what, row,
                         (long long)v.ints[i], v.isnull[i], (long long)want, wnull);
            continue;
        }
        assert_true(v.kind == QR_VEC_CODES || v.kind == QR_VEC_BYTES);
        qr_slice want, got = qr_vec_bytes(&v, i);
        assert_int_equal(qr_colr_bytes(r, row, &want, &e), 0);
        if (!slice_eq(got, want))
            fail_msg("%s (%s) row %u: got %.*s (%zu), want %.*s (%zu)", cm->name, sl->what, row,
                     (int)got.n, got.p ? got.p : "NULL", got.n, (int)want.n,
                     want.p ? want.p : "NULL", want.n);
        if (v.kind == QR_VEC_CODES) {
            assert_true(v.codes[i] <= v.ndict);
            if (want.p)
                assert_int_equal(v.codes[i], qr_colr_dict_code(r, want.p, want.n));
            else
                assert_int_equal(v.codes[i], 0);
        }
        if (cm->type == QT_MAP && want.p) {
            qr_buf_clear(&mj1);
            qr_buf_clear(&mj2);
            assert_int_equal(qr_colr_map_json(g, got, &mj1, &e), 0);
            assert_int_equal(qr_colr_map_json(r, want, &mj2, &e), 0);
            assert_int_equal(mj1.len, mj2.len);
            assert_memory_equal(mj1.p, mj2.p, mj1.len);
        }
    }
    qr_buf_free(&mj1);
    qr_buf_free(&mj2);
    qr_colr_close(g);
    qr_colr_close(r);
    qr_arena_free(&a);
}

/* Every column of s, every selection kind. Returns the encodings seen as
 * a bit set (1 << ENC_*). */
static unsigned check_segment(qr_segment *s, uint64_t seed, int kinds[4])
{
    uint32_t nrows = (uint32_t)s->rows;
    sel sl = {malloc(sizeof(uint32_t) * (nrows + 1)), 0, NULL};
    assert_non_null(sl.rows);
    unsigned encs = 0;
    for (uint32_t c = 0; c < s->ncols; c++) {
        encs |= 1u << s->cols[c].encoding;
        uint64_t rng = seed + c;
        qr_err e;
        const qr_colmeta *cm = qr_seg_colmeta(s, (int)c, &e);
        if (!cm)
            fail_msg("%s", e.msg);
        for (int k = 0; make_sel(k, nrows, cm, &rng, &sl); k++)
            check_column(s, (int)c, &sl, kinds);
    }
    free(sl.rows);
    return encs;
}

/* ---- the tables ---- */
static qr_segment *build_otel(const char *dir, uint32_t rows, uint64_t seed)
{
    gen_ctx *g = gen_new(seed, 0);
    assert_non_null(g);
    qr_buf text;
    qr_buf_init(&text);
    for (uint32_t i = 0; i < rows; i++)
        gen_row(g, &text);
    qr_buf_put_u8(&text, 0);
    gen_free(g);
    qr_batch b;
    qr_err e;
    assert_int_equal(qr_batch_init(&b, tu_otel(), rows, &e), 0);
    tu_fill_batch(&b, (const char *)text.p); /* the batch's strings point into text */
    char path[4200];
    snprintf(path, sizeof path, "%s/otel.qseg", dir);
    qr_seg_opts o;
    qr_seg_opts_default(&o);
    o.zstd_level = 1;
    if (qr_seg_write(path, &b, &o, NULL, &e) != 0)
        fail_msg("%s", e.msg);
    qr_batch_free(&b);
    qr_buf_free(&text);
    qr_segment *s = qr_seg_open(path, &e);
    assert_non_null(s);
    return s;
}

static const struct {
    const char *name;
    int type;
} wide_cols[] = {
    {"t", QT_TIMESTAMP}, {"b", QT_BOOL},     {"i8", QT_INT8},     {"i16", QT_INT16},
    {"i32", QT_INT32},   {"i64", QT_INT64},  {"u8", QT_UINT8},    {"u16", QT_UINT16},
    {"u32", QT_UINT32},  {"u64", QT_UINT64}, {"f", QT_FLOAT64},   {"s_lo", QT_TEXT},
    {"s_hi", QT_TEXT},   {"hex", QT_TEXT},   {"j_lo", QT_JSON},   {"j_hi", QT_JSON},
    {"m_lo", QT_MAP},    {"m_hi", QT_MAP},   {"e", QT_TIMESTAMP},
};
#define WIDE_NCOLS (sizeof wide_cols / sizeof *wide_cols)

static qr_tabdef *wide_def(void)
{
    qr_tabdef *d = qr_tabdef_new("wide");
    assert_non_null(d);
    for (size_t i = 0; i < WIDE_NCOLS; i++)
        assert_int_equal(qr_tabdef_add_col(d, wide_cols[i].name, strlen(wide_cols[i].name),
                                           wide_cols[i].type, 1, NULL),
                         (int)i);
    d->sort_col = 0;
    return d;
}

/* One row of the wide table: each column NULL (left out) one time in 8,
 * low-cardinality columns from 5 values, high-cardinality ones unique. */
static void wide_row(qr_buf *out, uint64_t *rng, uint32_t i)
{
    char t[512];
    int n;
    qr_buf_put_u8(out, '{');
    int first = 1;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        n = snprintf(t, sizeof t, __VA_ARGS__);                                                    \
        if (!first)                                                                                \
            qr_buf_put_u8(out, ',');                                                               \
        first = 0;                                                                                 \
        qr_buf_put(out, t, (size_t)n);                                                             \
    } while (0)
    for (size_t c = 0; c < WIDE_NCOLS; c++) {
        uint64_t x = tu_rand(rng);
        if (c > 0 && x % 8 == 0)
            continue;
        const char *nm = wide_cols[c].name;
        uint64_t y = tu_rand(rng);
        switch (c) {
        case 0:
            PUT("\"t\":%llu", (unsigned long long)(1700000000000000000ull + y % 1000000000000ull));
            break;
        case 1:
            PUT("\"%s\":%s", nm, y & 1 ? "true" : "false");
            break;
        case 2:
            PUT("\"%s\":%d", nm, (int)(int8_t)y);
            break;
        case 3:
            PUT("\"%s\":%d", nm, (int)(int16_t)y);
            break;
        case 4:
            PUT("\"%s\":%d", nm, (int)(int32_t)y);
            break;
        case 5:
            PUT("\"%s\":%lld", nm, (long long)(int64_t)y);
            break;
        case 6:
            PUT("\"%s\":%u", nm, (unsigned)(uint8_t)y);
            break;
        case 7:
            PUT("\"%s\":%u", nm, (unsigned)(uint16_t)y);
            break;
        case 8:
            PUT("\"%s\":%u", nm, (unsigned)(uint32_t)y);
            break;
        case 9:
            PUT("\"%s\":%llu", nm, (unsigned long long)y);
            break;
        case 10:
            PUT("\"%s\":%.17g", nm, ((double)(int64_t)y) / 1e9);
            break;
        case 11: {
            static const char *v[] = {"", "alpha", "beta gamma", "caf\\u00e9", "z"};
            PUT("\"%s\":\"%s\"", nm, v[y % 5]);
            break;
        }
        case 12:
            PUT("\"%s\":\"row %u says %llx %.*s\"", nm, i, (unsigned long long)y, (int)(y % 40),
                "lorem ipsum dolor sit amet consectetur ad");
            break;
        case 13:
            if (y % 20 == 0)
                PUT("\"%s\":\"not-a-hex-id-%u\"", nm, i);
            else
                PUT("\"%s\":\"%016llx%016llx\"", nm, (unsigned long long)y,
                    (unsigned long long)tu_rand(rng));
            break;
        case 14: {
            static const char *v[] = {"null", "[]", "{\"a\":1}", "\"s\"", "2.5"};
            PUT("\"%s\":%s", nm, v[y % 5]);
            break;
        }
        case 15:
            PUT("\"%s\":{\"i\":%u,\"v\":[%llu,\"x\"]}", nm, i, (unsigned long long)(y % 100000));
            break;
        case 16: {
            static const char *v[] = {"{}", "{\"k\":\"v\"}", "{\"k\":1,\"k\":\"1\"}",
                                      "{\"a\":{\"b\":[true]}}", "{\"z\":null}"};
            PUT("\"%s\":%s", nm, v[y % 5]);
            break;
        }
        case 17:
            PUT("\"%s\":{\"id\":\"%u\",\"n\":%llu,\"o\":{\"p\":%u}}", nm, i,
                (unsigned long long)(y % 1000), (unsigned)(y % 7));
            break;
        case 18:
            PUT("\"%s\":%llu", nm, (unsigned long long)(y % 100000));
            break;
        }
    }
#undef PUT
    qr_buf_put(out, "}\n", 2);
}

static qr_segment *build_wide(const char *dir, const qr_tabdef *d, uint32_t rows, uint64_t seed,
                              int k)
{
    qr_buf text;
    qr_buf_init(&text);
    uint64_t rng = seed;
    for (uint32_t i = 0; i < rows; i++)
        wide_row(&text, &rng, i);
    qr_buf_put_u8(&text, 0);
    qr_batch b;
    qr_err e;
    assert_int_equal(qr_batch_init(&b, d, rows, &e), 0);
    tu_fill_batch(&b, (const char *)text.p); /* the batch's strings point into text */
    char path[4200];
    snprintf(path, sizeof path, "%s/w%d.qseg", dir, k);
    qr_seg_opts o;
    qr_seg_opts_default(&o);
    o.zstd_level = 1;
    if (qr_seg_write(path, &b, &o, NULL, &e) != 0)
        fail_msg("%s", e.msg);
    qr_batch_free(&b);
    qr_buf_free(&text);
    qr_segment *s = qr_seg_open(path, &e);
    assert_non_null(s);
    return s;
}

/* ---- tests ---- */
static char *g_dir;
static qr_segment *g_otel; /* OTEL_ROWS rows, shared by the tests */

static int setup(void **st)
{
    (void)st;
    g_dir = tu_tmpdir();
    g_otel = build_otel(g_dir, OTEL_ROWS, 77);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    qr_seg_close(g_otel);
    tu_rmdir(g_dir);
    return 0;
}

static void test_otel_vectors_match_the_row_reader_across_block_boundaries(void **st)
{
    (void)st;
    qr_segment *s = g_otel;
    assert_int_equal(s->rows, OTEL_ROWS);
    /* the shapes this test is about: several int blocks, many pages */
    qr_err e;
    for (uint32_t c = 0; c < s->ncols; c++) /* read the out-of-line directories */
        assert_non_null(qr_seg_colmeta(s, (int)c, &e));
    assert_int_equal(s->cols[COL_TIMESTAMP].ndata, 3);
    assert_int_equal(s->cols[COL_TRACE_ID].encoding, ENC_HEXID);
    assert_true(s->cols[COL_TRACE_ID].ndata >= OTEL_ROWS / 512);
    assert_int_equal(s->cols[COL_BODY].encoding, ENC_PAGED);
    assert_true(s->cols[COL_BODY].ndata > 100);
    int kinds[4] = {0};
    unsigned encs = check_segment(s, 1234, kinds);
    assert_true(encs & (1u << ENC_INT));
    assert_true(encs & (1u << ENC_DICT));
    assert_true(encs & (1u << ENC_PAGED));
    assert_true(encs & (1u << ENC_HEXID));
    assert_true(kinds[QR_VEC_INT] && kinds[QR_VEC_CODES] && kinds[QR_VEC_BYTES]);
}

static void test_every_type_and_encoding_in_several_segments(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    qr_tabdef *d = wide_def();
    static const uint32_t sizes[] = {1, 700, 9000};
    int kinds[4] = {0};
    unsigned all_encs = 0;
    int map_dict = 0, map_paged = 0, json_dict = 0, json_paged = 0, text_dict = 0;
    for (int k = 0; k < 3; k++) {
        qr_segment *s = build_wide(dir, d, sizes[k], 99 + (uint64_t)k, k);
        assert_int_equal(s->rows, sizes[k]);
        all_encs |= check_segment(s, 555 + (uint64_t)k, kinds);
        for (uint32_t c = 0; c < s->ncols; c++) {
            int enc = s->cols[c].encoding, t = s->cols[c].type;
            map_dict += t == QT_MAP && enc == ENC_DICT;
            map_paged += t == QT_MAP && enc == ENC_PAGED;
            json_dict += t == QT_JSON && enc == ENC_DICT;
            json_paged += t == QT_JSON && enc == ENC_PAGED;
            text_dict += t == QT_TEXT && enc == ENC_DICT;
        }
        qr_seg_close(s);
    }
    /* the shapes are really covered */
    assert_int_equal(all_encs,
                     (1u << ENC_INT) | (1u << ENC_DICT) | (1u << ENC_PAGED) | (1u << ENC_HEXID));
    assert_true(map_dict && map_paged && json_dict && json_paged && text_dict);
    qr_tabdef_free(d);
    tu_rmdir(dir);
}

static void test_bad_selections_and_a_full_arena_fail_cleanly(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    qr_tabdef *d = wide_def();
    qr_segment *s = build_wide(dir, d, 3000, 5, 0);
    qr_err e;
    qr_arena a;
    qr_arena_init(&a, 4096, 0);
    qr_vec v;
    for (uint32_t c = 0; c < s->ncols; c++) {
        qr_colreader *r = qr_colr_open(s, (int)c, &e);
        assert_non_null(r);
        uint32_t unsorted[] = {5, 3}, dup[] = {7, 7}, out[] = {1, 3000};
        assert_int_equal(qr_colvec_gather(r, unsorted, 2, &v, &a, &e), -1);
        assert_string_equal(e.code, QR_E_ARGS);
        assert_int_equal(qr_colvec_gather(r, dup, 2, &v, &a, &e), -1);
        assert_string_equal(e.code, QR_E_ARGS);
        assert_int_equal(qr_colvec_gather(r, out, 2, &v, &a, &e), -1);
        assert_string_equal(e.code, QR_E_ARGS);
        qr_colr_close(r);
    }
    /* an arena limited below what the text column needs */
    uint32_t *all = malloc(sizeof *all * 3000);
    for (uint32_t i = 0; i < 3000; i++)
        all[i] = i;
    qr_arena small;
    qr_arena_init(&small, 4096, 8192);
    int c = qr_seg_col(s, "s_hi");
    qr_colreader *r = qr_colr_open(s, c, &e);
    assert_int_equal(qr_colvec_gather(r, all, 3000, &v, &small, &e), -1);
    assert_string_equal(e.code, QR_E_NOMEM);
    qr_arena_reset(&small);
    assert_int_equal(qr_colvec_gather(r, all, 10, &v, &small, &e), 0); /* fits */
    qr_colr_close(r);
    qr_arena_free(&small);
    free(all);
    qr_arena_free(&a);
    qr_seg_close(s);
    qr_tabdef_free(d);
    tu_rmdir(dir);
}

/* The pruned blocks are exactly those whose true min/max (recomputed from
 * the rows: non-NULL values of int columns in the stored domain; codes of
 * dictionary columns, NULL = 0) meet [lo, hi]; every block for other
 * encodings. */
static void test_prune_keeps_exactly_the_blocks_whose_range_meets_the_predicate(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    qr_tabdef *d = wide_def();
    qr_segment *s = g_otel;
    qr_segment *w = build_wide(dir, d, 9000, 8, 1);
    qr_segment *segs[] = {s, w};
    qr_err e;
    uint64_t rng = 42;
    for (int k = 0; k < 2; k++) {
        qr_segment *sg = segs[k];
        for (uint32_t c = 0; c < sg->ncols; c++) {
            const qr_colmeta *cm = &sg->cols[c];
            qr_colreader *r = qr_colr_open(sg, (int)c, &e);
            assert_non_null(r);
            /* per block: true min/max over non-NULL rows */
            int64_t *mn = malloc(sizeof *mn * cm->ndata), *mx = malloc(sizeof *mx * cm->ndata);
            int *any = calloc(cm->ndata, sizeof *any);
            uint32_t *got = malloc(sizeof *got * (cm->ndata + 1));
            int ranged = cm->encoding == ENC_INT || cm->encoding == ENC_DICT;
            for (uint32_t b = 0; ranged && b < cm->ndata; b++) {
                const qr_blockref *br = &cm->blocks[cm->first_data + b];
                for (uint32_t row = br->first_row; row < br->first_row + br->rows; row++) {
                    int64_t v;
                    int isnull;
                    if (cm->encoding == ENC_INT) {
                        assert_int_equal(qr_colr_int(r, row, &v, &isnull, &e), 0);
                    } else {
                        qr_slice sv;
                        assert_int_equal(qr_colr_bytes(r, row, &sv, &e), 0);
                        isnull = 0; /* a NULL row is code 0 in the stored min/max */
                        v = sv.p ? qr_colr_dict_code(r, sv.p, sv.n) : 0;
                    }
                    if (isnull)
                        continue;
                    if (!any[b] || v < mn[b])
                        mn[b] = v;
                    if (!any[b] || v > mx[b])
                        mx[b] = v;
                    any[b] = 1;
                }
            }
            for (int q = 0; q < 40; q++) {
                int64_t lo, hi;
                if (cm->encoding == ENC_DICT) {
                    uint32_t nd;
                    qr_colr_dict(r, &nd);
                    lo = 1 + (int64_t)(tu_rand(&rng) % (nd ? nd : 1));
                    hi = lo + (int64_t)(tu_rand(&rng) % 3);
                } else if (q < 20 && cm->ndata) { /* around a real block's values */
                    const qr_blockref *br = &cm->blocks[cm->first_data + tu_rand(&rng) % cm->ndata];
                    lo = br->min + (int64_t)(tu_rand(&rng) % 5) - 2;
                    hi = q % 2 ? lo : br->max;
                } else {
                    lo = (int64_t)tu_rand(&rng);
                    hi = (int64_t)tu_rand(&rng);
                }
                uint32_t n = 99;
                assert_int_equal(qr_colvec_prune(sg, (int)c, lo, hi, got, &n, &e), 0);
                if (lo > hi) {
                    assert_int_equal(n, 0);
                    continue;
                }
                uint32_t want = 0;
                for (uint32_t b = 0; b < cm->ndata; b++) {
                    int keep = !ranged || (any[b] && mn[b] <= hi && mx[b] >= lo);
                    if (!keep)
                        continue;
                    if (want >= n || got[want] != b)
                        fail_msg("%s: [%lld, %lld]: block %u should be kept", cm->name,
                                 (long long)lo, (long long)hi, b);
                    want++;
                }
                assert_int_equal(n, want);
            }
            free(mn);
            free(mx);
            free(any);
            free(got);
            qr_colr_close(r);
        }
    }
    qr_seg_close(w);
    qr_tabdef_free(d);
    tu_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_otel_vectors_match_the_row_reader_across_block_boundaries),
        cmocka_unit_test(test_every_type_and_encoding_in_several_segments),
        cmocka_unit_test(test_bad_selections_and_a_full_arena_fail_cleanly),
        cmocka_unit_test(test_prune_keeps_exactly_the_blocks_whose_range_meets_the_predicate),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
