/* test_segmerge.c - qr_segment_merge (index/segmerge.c, invmerge.c): a
 * segment merged from others, columns decoded into a batch and postings
 * merged, is byte for byte the segment qr_segment_build writes for the
 * same rows parsed from their NDJSON, in the same order (the oracle: the
 * build path every ingest takes). Cases: generated OpenTelemetry rows
 * spread over sources whose time ranges overlap (merged order interleaves
 * them); deleted rows and a min_sort trim (rows dropped, terms left
 * without docs); one source; every row dropped (no file); a table of every
 * index kind (full text case-kept without positions, json and map full
 * text, paths, range, keyword with values too long to index, empty
 * strings, NULLs); a source written before a column and an index existed
 * (the column NULL, the index built from values); and a canceled merge. */
#include <setjmp.h>
#include <stdatomic.h>

#include "../testutil.h"
#include "gen/otelgen.h"
#include "util/timefmt.h"

static char *dir;

static int setup(void **st)
{
    (void)st;
    dir = tu_tmpdir();
    return dir ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    tu_rmdir(dir);
    return 0;
}

static qr_tabdef *def_of(const char *json)
{
    qr_err e;
    qr_tabdef *d = qr_tabdef_from_json(json, strlen(json), "t.json", &e);
    if (!d)
        fail_msg("definition: %s", e.msg);
    return d;
}

/* Lines of NDJSON, each a slice of one buffer. */
typedef struct lines {
    qr_buf text;
    size_t *off, *len;
    uint32_t n;
} lines;

static void lines_add(lines *l, const char *p, size_t n)
{
    l->off = realloc(l->off, sizeof *l->off * (l->n + 1));
    l->len = realloc(l->len, sizeof *l->len * (l->n + 1));
    assert_non_null(l->off);
    assert_non_null(l->len);
    l->off[l->n] = l->text.len;
    l->len[l->n++] = n;
    qr_buf_put(&l->text, p, n);
    assert_false(l->text.oom);
}

static void lines_free(lines *l)
{
    qr_buf_free(&l->text);
    free(l->off);
    free(l->len);
    memset(l, 0, sizeof *l);
}

/* A segment at path of d from the lines idx[0..n) of l. */
static void build(const char *path, const qr_tabdef *d, const lines *l, const uint32_t *idx,
                  uint32_t n)
{
    qr_batch b;
    qr_err e;
    assert_int_equal(qr_batch_init(&b, d, n ? n : 1, &e), 0);
    qr_ndjson nj;
    assert_int_equal(qr_ndjson_init(&nj, d, NULL), 0);
    for (uint32_t i = 0; i < n; i++) {
        const char *p = (const char *)l->text.p + l->off[idx[i]];
        if (qr_ndjson_parse(&nj, &b, p, l->len[idx[i]], &e) != 0)
            fail_msg("line %u: %s", idx[i], e.msg);
    }
    qr_ndjson_free(&nj);
    if (qr_segment_build(path, &b, NULL, NULL, &e) != 0)
        fail_msg("build %s: %s", path, e.msg);
    qr_batch_free(&b);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc((size_t)len + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return p;
}

static void same_file(const char *a, const char *b)
{
    size_t na, nb;
    unsigned char *pa = slurp(a, &na), *pb = slurp(b, &nb);
    size_t at = 0;
    while (at < na && at < nb && pa[at] == pb[at])
        at++;
    if (na != nb || at != na)
        fail_msg("%s (%zu bytes) and %s (%zu bytes) differ at byte %zu", a, na, b, nb, at);
    free(pa);
    free(pb);
}

/* Sources: source s holds the lines of src[s][0..nsrc_rows[s]); src_def[s]
 * its definition. Deleted rows (by source row) per source. Merge with d,
 * then build the kept lines in source order with d: the files must match. */
#define MAX_SRC 64 /* the live merger's longest run (QR_MERGE_MAX_RUN) */

typedef struct mcase {
    const qr_tabdef *d;
    const qr_tabdef *src_def[MAX_SRC];
    const uint32_t *rows[MAX_SRC];
    uint32_t nrows[MAX_SRC];
    const uint8_t *deleted[MAX_SRC]; /* per source row, or NULL */
    uint32_t lo[MAX_SRC], hi[MAX_SRC];     /* the rows of each source merged (hi 0: all) */
    uint32_t nsrc;
    int64_t min_sort;
    const char *sort_key; /* the sort column's JSON key, for the trim */
} mcase;

static int64_t line_ts(const lines *l, uint32_t i, const char *key)
{
    /* the oracle reads the sort value off the line's text: "key":"..." */
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = (const char *)l->text.p + l->off[i];
    const char *at = memmem(p, l->len[i], pat, strlen(pat));
    if (!at)
        return INT64_MIN; /* NULL: kept */
    at += strlen(pat);
    int64_t ns;
    const char *why = NULL;
    const char *end = memchr(at, '"', l->len[i] - (size_t)(at - p));
    if (qr_time_parse(at, (size_t)(end - at), &ns, &why) != 0)
        fail_msg("timestamp: %s", why);
    return ns;
}

static int run_case(const mcase *c, const lines *l, const char *tag, const atomic_int *cancel,
                    qr_err *e)
{
    char path[4200], mpath[4200], rpath[4200];
    qr_merge_src seg[MAX_SRC];
    uint32_t *keep = malloc(sizeof *keep * (l->n + 1)), nkeep = 0;
    assert_non_null(keep);
    for (uint32_t s = 0; s < c->nsrc; s++) {
        snprintf(path, sizeof path, "%s/%s-src%u.qseg", dir, tag, s);
        build(path, c->src_def[s] ? c->src_def[s] : c->d, l, c->rows[s], c->nrows[s]);
        qr_err oe;
        seg[s] =
            (qr_merge_src){qr_seg_open(path, &oe), c->lo[s], c->hi[s] ? c->hi[s] : c->nrows[s]};
        if (!seg[s].seg)
            fail_msg("open: %s", oe.msg);
        /* the source is in time order: its row r is the r-th line by time
         * (stable); the test's sources are built from lines already sorted */
        if (c->deleted[s]) {
            uint32_t words = (c->nrows[s] + 63) / 64;
            seg[s].seg->deleted = calloc(words ? words : 1, 8);
            assert_non_null(seg[s].seg->deleted);
            for (uint32_t r = 0; r < c->nrows[s]; r++)
                if (c->deleted[s][r]) {
                    seg[s].seg->deleted[r >> 6] |= 1ull << (r & 63);
                    seg[s].seg->ndeleted++;
                }
        }
        for (uint32_t r = 0; r < c->nrows[s]; r++) {
            if ((c->deleted[s] && c->deleted[s][r]) || r < seg[s].lo || r >= seg[s].hi)
                continue;
            if (c->min_sort != INT64_MIN) {
                int64_t ts = line_ts(l, c->rows[s][r], c->sort_key);
                if (ts != INT64_MIN && ts < c->min_sort)
                    continue;
            }
            keep[nkeep++] = c->rows[s][r];
        }
    }
    snprintf(mpath, sizeof mpath, "%s/%s-merged.qseg", dir, tag);
    snprintf(rpath, sizeof rpath, "%s/%s-built.qseg", dir, tag);
    qr_seg_summary sum;
    qr_qctx ctx;
    qr_qctx_init(&ctx, 0);
    qr_qctx_set_stop(&ctx, cancel, 0);
    int rc = qr_segment_merge(mpath, c->d, seg, c->nsrc, c->min_sort, &ctx, NULL, &sum, e);
    for (uint32_t s = 0; s < c->nsrc; s++)
        qr_seg_close(seg[s].seg);
    if (rc == 0) {
        assert_int_equal(sum.rows, nkeep);
        if (nkeep == 0) {
            assert_int_equal(access(mpath, F_OK), -1); /* no rows: no file */
        } else {
            build(rpath, c->d, l, keep, nkeep);
            same_file(mpath, rpath);
        }
    }
    free(keep);
    return rc;
}

/* Sources must hold their lines in time order for the deletions above to
 * name rows; each of c's sources takes every nsrc-th line of a sorted
 * stream of n with an offset, so their time ranges overlap. rows[s] is
 * source s's (c->rows[s] too), for the caller to free. */
static void spread(uint32_t n, mcase *c, uint32_t **rows)
{
    for (uint32_t s = 0; s < c->nsrc; s++) {
        rows[s] = malloc(sizeof **rows * (n / (3 * c->nsrc) + 2) * 3); /* whole runs of 3 */
        c->rows[s] = rows[s];
        c->nrows[s] = 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = (i / 3) % c->nsrc; /* runs of 3: interleaved, not alternating */
        rows[s][c->nrows[s]++] = i;
    }
}

static void gen_lines(lines *l, uint32_t n, uint64_t seed)
{
    gen_ctx *g = gen_new(seed, 0);
    assert_non_null(g);
    qr_buf row;
    qr_buf_init(&row);
    for (uint32_t i = 0; i < n; i++) {
        qr_buf_clear(&row);
        gen_row(g, &row);
        lines_add(l, (const char *)row.p, row.len - 1);
    }
    qr_buf_free(&row);
    gen_free(g);
}

static void test_otel_overlapping(void **st)
{
    (void)st;
    lines l = {0};
    qr_buf_init(&l.text);
    gen_lines(&l, 6000, 7);
    mcase c = {.d = tu_otel(), .nsrc = 5, .min_sort = INT64_MIN};
    uint32_t *rows[MAX_SRC];
    spread(l.n, &c, rows);
    qr_err e;
    if (run_case(&c, &l, "otel", NULL, &e) != 0)
        fail_msg("merge: %s", e.msg);
    /* one source alone */
    c.nsrc = 1;
    if (run_case(&c, &l, "otel1", NULL, &e) != 0)
        fail_msg("merge: %s", e.msg);
    for (uint32_t s = 0; s < 5; s++)
        free(rows[s]);
    /* the longest run the live merger takes, and an odd count below it:
     * many sources at each term (their dictionaries walked together) */
    for (uint32_t n = 11; n <= MAX_SRC; n += MAX_SRC - 11) {
        c.nsrc = n;
        spread(l.n, &c, rows);
        if (run_case(&c, &l, n == MAX_SRC ? "otel64" : "otel11", NULL, &e) != 0)
            fail_msg("merge: %s", e.msg);
        for (uint32_t s = 0; s < n; s++)
            free(rows[s]);
    }
    lines_free(&l);
}

static void test_otel_dropped(void **st)
{
    (void)st;
    lines l = {0};
    qr_buf_init(&l.text);
    gen_lines(&l, 5000, 11);
    mcase c = {.d = tu_otel(), .nsrc = 4, .min_sort = INT64_MIN, .sort_key = "Timestamp"};
    uint32_t *rows[MAX_SRC];
    spread(l.n, &c, rows);
    uint8_t *del[4];
    uint64_t x = 5;
    for (uint32_t s = 0; s < c.nsrc; s++) {
        del[s] = calloc(c.nrows[s], 1);
        for (uint32_t r = 0; r < c.nrows[s]; r++) /* a third of source 1, a few elsewhere,
                                                   * all of source 3's first 500 */
            del[s][r] = s == 1 ? tu_rand(&x) % 3 == 0 : s == 3 ? r < 500 : tu_rand(&x) % 97 == 0;
        c.deleted[s] = del[s];
    }
    qr_err e;
    if (run_case(&c, &l, "del", NULL, &e) != 0)
        fail_msg("merge with deletions: %s", e.msg);
    /* a trim: rows before the middle of the stream go, deletions as well */
    c.min_sort = line_ts(&l, 2500, "Timestamp");
    if (run_case(&c, &l, "trim", NULL, &e) != 0)
        fail_msg("merge with a trim: %s", e.msg);
    /* row ranges (how VACUUM cuts its segments): a middle part of source
     * 1, the tail of source 2, with the trim */
    c.lo[1] = 100;
    c.hi[1] = 700;
    c.lo[2] = 333;
    if (run_case(&c, &l, "range", NULL, &e) != 0)
        fail_msg("merge of row ranges: %s", e.msg);
    c.lo[1] = c.hi[1] = c.lo[2] = 0;
    /* every row dropped: no segment */
    c.min_sort = INT64_MAX;
    if (run_case(&c, &l, "none", NULL, &e) != 0)
        fail_msg("merge of nothing: %s", e.msg);
    /* canceled: 57014, no file */
    atomic_int cancel = 1;
    c.min_sort = INT64_MIN;
    assert_int_equal(run_case(&c, &l, "cancel", &cancel, &e), -1);
    assert_string_equal(e.code, QR_E_CANCELED);
    char p[4200];
    snprintf(p, sizeof p, "%s/cancel-merged.qseg", dir);
    assert_int_equal(access(p, F_OK), -1);
    for (uint32_t s = 0; s < c.nsrc; s++) {
        free(rows[s]);
        free(del[s]);
    }
    lines_free(&l);
}

static const char *KINDS_DEF =
    "{\"name\":\"k\",\"sort\":\"ts\",\"columns\":["
    "{\"name\":\"ts\",\"type\":\"timestamp\"},{\"name\":\"msg\",\"type\":\"text\"},"
    "{\"name\":\"Code\",\"type\":\"text\"},{\"name\":\"lvl\",\"type\":\"text\"},"
    "{\"name\":\"n\",\"type\":\"int32\"},{\"name\":\"f\",\"type\":\"float64\"},"
    "{\"name\":\"ok\",\"type\":\"bool\"},{\"name\":\"doc\",\"type\":\"json\"},"
    "{\"name\":\"attrs\",\"type\":\"map\"},{\"name\":\"later\",\"type\":\"text\"}],"
    "\"indexes\":["
    "{\"column\":\"msg\",\"kind\":\"fulltext\",\"id\":1},"
    "{\"column\":\"Code\",\"kind\":\"fulltext\",\"id\":2,\"lowercase\":false,\"positions\":false},"
    "{\"column\":\"lvl\",\"kind\":\"keyword\",\"id\":3},"
    "{\"column\":\"n\",\"kind\":\"range\",\"id\":4},{\"column\":\"f\",\"kind\":\"range\",\"id\":5},"
    "{\"column\":\"doc\",\"kind\":\"paths\",\"id\":6},{\"column\":\"doc\",\"kind\":\"fulltext\","
    "\"id\":7},"
    "{\"column\":\"attrs\",\"kind\":\"paths\",\"id\":8},{\"column\":\"attrs\",\"kind\":"
    "\"fulltext\",\"id\":9},"
    "{\"column\":\"later\",\"kind\":\"keyword\",\"id\":10}]}";

/* The same table before the column `later` and its index existed. */
static const char *OLD_DEF =
    "{\"name\":\"k\",\"sort\":\"ts\",\"columns\":["
    "{\"name\":\"ts\",\"type\":\"timestamp\"},{\"name\":\"msg\",\"type\":\"text\"},"
    "{\"name\":\"Code\",\"type\":\"text\"},{\"name\":\"lvl\",\"type\":\"text\"},"
    "{\"name\":\"n\",\"type\":\"int32\"},{\"name\":\"f\",\"type\":\"float64\"},"
    "{\"name\":\"ok\",\"type\":\"bool\"},{\"name\":\"doc\",\"type\":\"json\"},"
    "{\"name\":\"attrs\",\"type\":\"map\"}],"
    "\"indexes\":["
    "{\"column\":\"msg\",\"kind\":\"fulltext\",\"id\":1},"
    "{\"column\":\"Code\",\"kind\":\"fulltext\",\"id\":2,\"lowercase\":false,\"positions\":false},"
    "{\"column\":\"lvl\",\"kind\":\"keyword\",\"id\":3},"
    "{\"column\":\"n\",\"kind\":\"range\",\"id\":4},{\"column\":\"f\",\"kind\":\"range\",\"id\":5},"
    "{\"column\":\"doc\",\"kind\":\"paths\",\"id\":6},{\"column\":\"doc\",\"kind\":\"fulltext\","
    "\"id\":7},"
    "{\"column\":\"attrs\",\"kind\":\"paths\",\"id\":8},{\"column\":\"attrs\",\"kind\":"
    "\"fulltext\",\"id\":9}]}";

static void kinds_lines(lines *l, uint32_t n)
{
    static const char *words[] = {"Alpha", "beta",   "GAMMA", "delta", "alpha",
                                  "Beta",  "éclair", "x",     ""};
    uint64_t x = 3;
    char line[2048], longv[400];
    memset(longv, 'v', sizeof longv - 1);
    longv[sizeof longv - 1] = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t r = tu_rand(&x);
        int k = 0;
        /* times ascend with repeats (ties keep source order) */
        k += snprintf(line + k, sizeof line - (size_t)k, "{\"ts\":\"2025-09-23T00:00:%02u.%03uZ\"",
                      i / 1000 % 60, i % 1000 / 2);
        if (r % 11)
            k += snprintf(line + k, sizeof line - (size_t)k, ",\"msg\":\"%s %s %s %s\"",
                          words[r % 9], words[r / 9 % 9], words[r / 81 % 9], words[r % 9]);
        else if (r % 2)
            k += snprintf(line + k, sizeof line - (size_t)k, ",\"msg\":\"\"");
        k += snprintf(line + k, sizeof line - (size_t)k, ",\"Code\":\"E%u e%u E%u\"",
                      (unsigned)(r % 5), (unsigned)(r / 5 % 5), (unsigned)(r % 5));
        if (r % 13 == 0)
            k += snprintf(line + k, sizeof line - (size_t)k, ",\"lvl\":\"%s\"", longv);
        else if (r % 7)
            k += snprintf(line + k, sizeof line - (size_t)k, ",\"lvl\":\"%s\"",
                          r % 3   ? "info"
                          : r % 2 ? ""
                                  : "warn");
        if (r % 5)
            k += snprintf(line + k, sizeof line - (size_t)k, ",\"n\":%d,\"f\":%d.%d",
                          (int)(r % 2001) - 1000, (int)(r % 17) - 8, (int)(r % 10));
        k += snprintf(line + k, sizeof line - (size_t)k, ",\"ok\":%s", r % 3 ? "true" : "false");
        if (r % 4)
            k += snprintf(line + k, sizeof line - (size_t)k,
                          ",\"doc\":{\"a\":{\"b\":\"%s\",\"c\":[1,1,%u]},\"t\":\"%s words\","
                          "\"z\":null}",
                          words[r % 9], (unsigned)(r % 4), words[r / 7 % 9]);
        else if (r % 8 == 4)
            k += snprintf(line + k, sizeof line - (size_t)k, ",\"doc\":[\"x\",\"x\",2]");
        if (r % 6)
            k += snprintf(line + k, sizeof line - (size_t)k,
                          ",\"attrs\":{\"k%u\":\"%s\",\"n\":%u,\"k%u\":\"dup %s\",\"k%u\":\"%s\"}",
                          (unsigned)(r % 40), words[r % 9], (unsigned)(r % 3),
                          (unsigned)(r / 3 % 40), words[r / 5 % 9], (unsigned)(r % 40),
                          words[r / 11 % 9]);
        k += snprintf(line + k, sizeof line - (size_t)k, "}");
        lines_add(l, line, (size_t)k);
    }
}

static void test_every_kind(void **st)
{
    (void)st;
    qr_tabdef *d = def_of(KINDS_DEF), *old = def_of(OLD_DEF);
    lines l = {0};
    qr_buf_init(&l.text);
    kinds_lines(&l, 4000);
    mcase c = {.d = d, .nsrc = 3, .min_sort = INT64_MIN, .sort_key = "ts"};
    uint32_t *rows[MAX_SRC];
    spread(l.n, &c, rows);
    uint8_t *del = calloc(c.nrows[0], 1);
    for (uint32_t r = 0; r < c.nrows[0]; r += 5)
        del[r] = 1;
    qr_err e;
    if (run_case(&c, &l, "kinds", NULL, &e) != 0)
        fail_msg("merge: %s", e.msg);
    c.deleted[0] = del;
    c.min_sort = line_ts(&l, 1200, "ts");
    if (run_case(&c, &l, "kinds-drop", NULL, &e) != 0)
        fail_msg("merge with drops: %s", e.msg);
    /* source 1 written before `later` and its index: merged with the new
     * definition, the column is NULL there and index 10 is built */
    c.deleted[0] = NULL;
    c.min_sort = INT64_MIN;
    c.src_def[1] = old;
    if (run_case(&c, &l, "kinds-old", NULL, &e) != 0)
        fail_msg("merge of an older source: %s", e.msg);
    for (uint32_t s = 0; s < c.nsrc; s++)
        free(rows[s]);
    free(del);
    lines_free(&l);
    qr_tabdef_free(d);
    qr_tabdef_free(old);
}

/* Dictionary order (code point length, then bytes), written out here
 * independently of the builders. */
static int dict_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t ca = 0, cb = 0;
    for (size_t i = 0; i < an; i++)
        ca += ((unsigned char)a[i] >> 6) != 2;
    for (size_t i = 0; i < bn; i++)
        cb += ((unsigned char)b[i] >> 6) != 2;
    if (ca != cb)
        return ca < cb ? -1 : 1;
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an > bn) - (an < bn);
}

/* Every term of index `sec` of the segment at path, strictly in dictionary
 * order; returns how many. */
static uint64_t assert_dict_order(const char *path, uint16_t sec)
{
    qr_err e;
    qr_segment *sg = qr_seg_open(path, &e);
    if (!sg)
        fail_msg("open %s: %s", path, e.msg);
    qr_invfield f;
    if (qr_invfield_open(&f, sg, sec, &e) != 0)
        fail_msg("index %u: %s", sec, e.msg);
    qr_titer it;
    char prev[QR_MAX_TERM];
    size_t pn = 0;
    uint64_t n = 0;
    int r = qr_tdict_seek(&f.dict, &it, "", 0, &e);
    for (; r == 1; r = qr_titer_next(&it, &e), n++) {
        if (n && dict_cmp(prev, pn, it.term, it.len) >= 0)
            fail_msg("index %u: term %llu (%.*s) is not after (%.*s)", sec, (unsigned long long)n,
                     (int)it.len, it.term, (int)pn, prev);
        memcpy(prev, it.term, it.len);
        pn = it.len;
    }
    if (r < 0)
        fail_msg("index %u: %s", sec, e.msg);
    assert_int_equal(n, f.dict.nterms);
    qr_invfield_close(&f);
    qr_seg_close(sg);
    return n;
}

/* Values whose sort keys collide: a shared 8-byte head with suffixes that
 * differ late, one or two bytes long, multi-byte characters (code points
 * fewer than bytes: "\xc3\xa9" sorts by length in characters), heads that
 * differ only in their last byte, values shorter than the head, and values
 * up to the 255-byte term limit. Built (the radix sort of terms) and merged
 * (a heap over the sources' dictionaries), the dictionaries must be in
 * order and the files the same. */
static const char *ORDER_DEF =
    "{\"name\":\"o\",\"sort\":\"ts\",\"columns\":["
    "{\"name\":\"ts\",\"type\":\"timestamp\"},{\"name\":\"k\",\"type\":\"text\"}],"
    "\"indexes\":[{\"column\":\"k\",\"kind\":\"keyword\",\"id\":1},"
    "{\"column\":\"k\",\"kind\":\"fulltext\",\"id\":2}]}";

static void test_term_order(void **st)
{
    (void)st;
    qr_tabdef *d = def_of(ORDER_DEF);
    lines l = {0};
    qr_buf_init(&l.text);
    static const char *const heads[] = {"prefix__", "prefix_a", "prefix_\xc3\xa9", "pr", "",
                                        "zz\xe2\x82\xacz", "aaaaaaaa", "aaaaaaab"};
    uint64_t x = 77;
    for (uint32_t r = 0; r < 6000; r++) {
        char v[300];
        size_t k = (size_t)snprintf(v, sizeof v, "%s", heads[r % 8]);
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        unsigned tail = (unsigned)(x >> 33) % 5;
        if (tail == 0) /* long: 200..250 bytes */
            for (unsigned i = 0, m = 200 + (unsigned)(x >> 40) % 50; i < m; i++)
                v[k++] = (char)('a' + (x >> (i % 50)) % 3);
        else if (tail == 1)
            k += (size_t)snprintf(v + k, sizeof v - k, "\xc3\xa9%u", (unsigned)(x >> 45) % 97);
        else
            k += (size_t)snprintf(v + k, sizeof v - k, "%u", (unsigned)(x >> 40) % 100000);
        v[k] = 0;
        char line[400];
        int n = snprintf(line, sizeof line,
                         "{\"ts\":\"2024-01-01T00:00:%02u.%03uZ\",\"k\":\"%s\"}", r / 1000,
                         r % 1000, v);
        lines_add(&l, line, (size_t)n);
    }
    mcase c = {.d = d, .nsrc = 3, .min_sort = INT64_MIN, .sort_key = "ts"};
    uint32_t *rows[MAX_SRC];
    spread(l.n, &c, rows);
    qr_err e;
    if (run_case(&c, &l, "order", NULL, &e) != 0)
        fail_msg("merge: %s", e.msg);
    char path[4200];
    snprintf(path, sizeof path, "%s/order-built.qseg", dir);
    assert_true(assert_dict_order(path, 1) > 2000);
    assert_true(assert_dict_order(path, 2) > 2000);
    snprintf(path, sizeof path, "%s/order-src0.qseg", dir);
    assert_true(assert_dict_order(path, 1) > 500);
    for (uint32_t s = 0; s < c.nsrc; s++)
        free(rows[s]);
    lines_free(&l);
    qr_tabdef_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_otel_overlapping),
        cmocka_unit_test(test_otel_dropped),
        cmocka_unit_test(test_every_kind),
        cmocka_unit_test(test_term_order),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
