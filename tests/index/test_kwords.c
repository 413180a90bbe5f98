/* test_kwords.c - a keyword field's term ordinal per row (index/kwords.c
 * qr_invfield_ordinals) on a segment of 5000 OpenTelemetry rows: each row's
 * ordinal is its value's rank among the segment's distinct values in
 * dictionary order (code point length, then bytes: computed here from the
 * values written), NULL and too-long values have none; dense values
 * (bitmaps), inline and block postings alike; threads racing to build it
 * share one copy; a canceled build keeps nothing and a later one succeeds;
 * a full-text field is refused; corrupt postings are reported (XX001). */
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>

#include "index/invfmt.h"
#include "index/invindex.h"
#include "index/keymap.h"
#include "index/termdict.h"

enum { ROWS = 5000 };

static char *dir;
static char path[4200];
static char *trace[ROWS]; /* each row's TraceId as written, NULL = none */
static const char *svc[ROWS];

static int setup(void **st)
{
    (void)st;
    dir = tu_tmpdir();
    qr_buf t;
    qr_buf_init(&t);
    static const char *const services[] = {"cart", "checkout", "payment", "email", "ad"};
    char longid[400];
    memset(longid, 'f', 300);
    longid[300] = 0;
    for (int r = 0; r < ROWS; r++) {
        char id[400];
        if (r % 17 == 0)
            trace[r] = NULL; /* no TraceId key: NULL */
        else if (r % 13 == 0)
            trace[r] = strdup("");
        else if (r % 101 == 0)
            trace[r] = strdup(longid); /* longer than a term: not indexed */
        else if (r % 29 == 0)
            trace[r] = strdup("é"); /* one code point, two bytes */
        else {
            /* ids of a few rows each, some of 1 or 2 (inline postings) */
            snprintf(id, sizeof id, "%x%s", r < 4000 ? r / 9 : r, r % 3 ? "" : "a");
            trace[r] = strdup(id);
        }
        svc[r] = r % 11 == 0 ? services[r % 5] : services[r % 2]; /* dense: bitmaps */
        char line[600];
        int n = snprintf(
            line, sizeof line,
            "{\"Timestamp\":\"2025-09-23T00:00:%02d.%06dZ\",\"ServiceName\":\"%s\"%s%s%s}\n",
            r / 1000000, r % 1000000, svc[r], trace[r] ? ",\"TraceId\":\"" : "",
            trace[r] ? trace[r] : "", trace[r] ? "\"" : "");
        qr_buf_put(&t, line, (size_t)n);
    }
    qr_buf_put_u8(&t, 0);
    tu_build_segment(dir, "s.qseg", (const char *)t.p, ROWS, path);
    qr_buf_free(&t);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    for (int r = 0; r < ROWS; r++)
        free(trace[r]);
    tu_rmdir(dir);
    return 0;
}

static uint16_t index_of(const char *col, uint8_t kind)
{
    const qr_tabdef *d = tu_otel();
    for (uint32_t i = 0; i < d->nixs; i++)
        if (!strcmp(d->cols[d->ixs[i].col].name, col) && d->ixs[i].kind == kind)
            return d->ixs[i].id;
    fail_msg("no %s index on %s", kind == QR_IX_KEYWORD ? "keyword" : "other", col);
    return 0;
}

/* The segment and its keyword field on col, opened. */
static qr_segment *open_field(const char *col, qr_invfield *f)
{
    qr_err e;
    qr_segment *s = qr_seg_open(path, &e);
    assert_non_null(s);
    assert_int_equal(s->rows, ROWS);
    assert_int_equal(qr_invfield_open(f, s, index_of(col, QR_IX_KEYWORD), &e), 0);
    return s;
}

static const char **sort_vals;
static int by_dict_order(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    return qr_term_cmp(x, strlen(x), y, strlen(y));
}

/* Each row's expected ordinal: its value's rank among the distinct indexed
 * values in dictionary order. */
static void expect(const char *const *vals, uint32_t *want)
{
    sort_vals = malloc(sizeof *sort_vals * ROWS);
    size_t n = 0;
    for (int r = 0; r < ROWS; r++)
        if (vals[r] && strlen(vals[r]) <= QR_MAX_TERM)
            sort_vals[n++] = vals[r];
    qsort(sort_vals, n, sizeof *sort_vals, by_dict_order);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || strcmp(sort_vals[u - 1], sort_vals[i]))
            sort_vals[u++] = sort_vals[i];
    for (int r = 0; r < ROWS; r++) {
        want[r] = QR_NO_ORD;
        if (!vals[r] || strlen(vals[r]) > QR_MAX_TERM)
            continue;
        const char **hit = bsearch(&vals[r], sort_vals, u, sizeof *sort_vals, by_dict_order);
        assert_non_null(hit);
        want[r] = (uint32_t)(hit - sort_vals);
    }
    free(sort_vals);
}

static void check_field(const char *col, const char *const *vals)
{
    qr_err e;
    qr_invfield f;
    qr_segment *s = open_field(col, &f);
    const uint32_t *ord = qr_invfield_ordinals(&f, NULL, &e);
    if (!ord)
        fail_msg("%s: %s", col, e.msg);
    assert_ptr_equal(qr_invfield_ordinals(&f, NULL, &e), ord); /* built once */
    uint32_t *want = malloc(sizeof *want * ROWS);
    expect(vals, want);
    for (uint32_t r = 0; r < ROWS; r++)
        if (ord[r] != want[r])
            fail_msg("%s: row %u (%s): ordinal %u, expected %u", col, r, vals[r] ? vals[r] : "NULL",
                     ord[r], want[r]);
    free(want);
    qr_invfield_close(&f);
    qr_seg_close(s);
}

static void test_ordinals_are_dictionary_ranks(void **st)
{
    (void)st;
    check_field("TraceId", (const char *const *)trace);
    check_field("ServiceName", svc);
}

typedef struct race {
    qr_invfield *f;
    const uint32_t *got;
} race;

static void *build(void *arg)
{
    race *r = arg;
    qr_err e;
    r->got = qr_invfield_ordinals(r->f, NULL, &e);
    return NULL;
}

static void test_racing_builds_share_one_copy(void **st)
{
    (void)st;
    qr_invfield f;
    qr_segment *s = open_field("TraceId", &f);
    enum { N = 4 };
    pthread_t th[N];
    race r[N];
    for (int i = 0; i < N; i++) {
        r[i] = (race){&f, NULL};
        assert_int_equal(pthread_create(&th[i], NULL, build, &r[i]), 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < N; i++) {
        assert_non_null(r[i].got);
        assert_ptr_equal(r[i].got, f.ords); /* the losers freed theirs (ASan) */
    }
    qr_invfield_close(&f);
    qr_seg_close(s);
}

static void test_canceled_build_keeps_nothing(void **st)
{
    (void)st;
    qr_err e;
    qr_invfield f;
    qr_segment *s = open_field("TraceId", &f);
    atomic_int stop = 1;
    qr_qctx ctx;
    qr_qctx_init(&ctx, 0);
    qr_qctx_set_stop(&ctx, &stop, 0);
    assert_null(qr_invfield_ordinals(&f, &ctx, &e));
    assert_string_equal(e.code, QR_E_CANCELED);
    assert_null(f.ords);
    qr_qctx_init(&ctx, 0); /* a later statement's */
    assert_non_null(qr_invfield_ordinals(&f, &ctx, &e));
    /* a full-text field has no ordinals */
    qr_invfield b;
    assert_int_equal(qr_invfield_open(&b, s, index_of("Body", QR_IX_FULLTEXT), &e), 0);
    assert_null(qr_invfield_ordinals(&b, NULL, &e));
    assert_string_equal(e.code, QR_E_INTERNAL);
    qr_invfield_close(&b);
    qr_invfield_close(&f);
    qr_seg_close(s);
}

/* A flipped byte in the field's postings: the build says which segment
 * and field are corrupt (XX001) and keeps nothing. */
static void test_corrupt_postings_are_reported(void **st)
{
    (void)st;
    qr_err e;
    qr_invfield f;
    qr_segment *s = open_field("TraceId", &f);
    size_t off = (size_t)(f.post - s->map) + f.post_len / 2;
    qr_invfield_close(&f);
    qr_seg_close(s);
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/bad.qseg", dir);
    FILE *in = fopen(path, "rb"), *out = fopen(bad, "wb");
    assert_non_null(in);
    assert_non_null(out);
    for (size_t i = 0, c; (c = (size_t)fgetc(in)) != (size_t)EOF; i++)
        fputc(i == off ? (int)(c ^ 0x5a) : (int)c, out);
    fclose(in);
    fclose(out);
    s = qr_seg_open(bad, &e);
    assert_non_null(s);
    assert_int_equal(qr_invfield_open(&f, s, index_of("TraceId", QR_IX_KEYWORD), &e), 0);
    assert_null(qr_invfield_ordinals(&f, NULL, &e));
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, "bad.qseg"));
    assert_null(f.ords);
    qr_invfield_close(&f);
    qr_seg_close(s);
}

/* A dictionary whose term count is not the terms it holds (its count
 * lowered or raised in memory, as a corrupt TERMINDEX would say): ordinals
 * (which readers index per-key arrays by), term hashes and a key map all
 * refuse it (XX001) and keep nothing; with the true count they work. */
static void test_term_count_mismatch_is_reported(void **st)
{
    (void)st;
    qr_err e;
    qr_invfield f;
    qr_segment *s = open_field("TraceId", &f);
    uint64_t nt = f.dict.nterms;
    qr_invfield *one = &f;
    f.dict.nterms = nt - 1; /* says one term fewer than it holds */
    assert_null(qr_invfield_ordinals(&f, NULL, &e));
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, "more terms than it says"));
    assert_null(f.ords);
    assert_null(qr_invfield_term_hashes(&f, NULL, &e));
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_null(f.hashes);
    assert_null(qr_keymap_build(NULL, &one, 1, NULL, 1, NULL, &e));
    assert_string_equal(e.code, QR_E_CORRUPT);
    f.dict.nterms = nt + 1; /* one more than it holds */
    assert_null(qr_invfield_term_hashes(&f, NULL, &e));
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, "fewer terms than it says"));
    assert_null(f.hashes);
    f.dict.nterms = nt;
    const uint32_t *ord = qr_invfield_ordinals(&f, NULL, &e);
    assert_non_null(ord);
    assert_non_null(qr_invfield_term_hashes(&f, NULL, &e));
    /* a value's ordinal by lookup is its rows' ordinal; an absent one has none */
    for (uint32_t r = 0; r < ROWS; r++) {
        if (!trace[r] || strlen(trace[r]) > QR_MAX_TERM)
            continue;
        uint32_t o = QR_NO_ORD;
        assert_int_equal(qr_invfield_ordinal_of(&f, trace[r], strlen(trace[r]), &o, &e), 1);
        assert_int_equal(o, ord[r]);
    }
    uint32_t o;
    assert_int_equal(qr_invfield_ordinal_of(&f, "no such id", 10, &o, &e), 0);
    qr_invfield_close(&f);
    qr_seg_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ordinals_are_dictionary_ranks),
        cmocka_unit_test(test_racing_builds_share_one_copy),
        cmocka_unit_test(test_canceled_build_keeps_nothing),
        cmocka_unit_test(test_corrupt_postings_are_reported),
        cmocka_unit_test(test_term_count_mismatch_is_reported),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
