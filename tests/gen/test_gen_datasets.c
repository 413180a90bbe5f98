/* test_gen_datasets.c - the http_logs and github_events generators: the same
 * bytes for the same seed however the stream is split or threaded, every line
 * one canonical JSON object with the documented keys, and the documented
 * shares (docs/DATASETS.md) at 100k rows.
 *
 * Lines are read with the project's JSON parser (util/json.h) into a small
 * tree, which is written back canonically (compact, keys in order, strings
 * through qj_write_string) and must give the line's exact bytes: that proves
 * valid UTF-8 JSON, no spaces and canonical escapes. Nothing here looks at
 * the generators' tables or internals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gen/genutil.h"
#include "gen/ghevents.h"
#include "gen/httplogs.h"
#include "gen/otelgen.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/json.h"

#ifndef SEED
#define SEED 42u /* -DSEED=n to check other seeds */
#endif
#define STATS_ROWS 100000u

/* ---------- the datasets behind one interface ---------- */

typedef struct dataset {
    const char *name;
    void *(*make)(uint64_t seed, uint64_t first);
    void (*row)(void *g, qr_buf *b);
    void (*seek)(void *g, uint64_t row);
    uint64_t (*next)(const void *g);
    void (*del)(void *g);
    int (*write)(int fd, uint64_t rows, uint64_t seed, int threads, qr_err *e);
    size_t row_max;
} dataset;

static void *hl_make(uint64_t s, uint64_t f) { return httplogs_new(s, f); }
static void hl_row(void *g, qr_buf *b) { httplogs_row(g, b); }
static void hl_seek(void *g, uint64_t r) { httplogs_seek(g, r); }
static uint64_t hl_next(const void *g) { return httplogs_next_row(g); }
static void hl_del(void *g) { httplogs_free(g); }
static void *gh_make(uint64_t s, uint64_t f) { return ghevents_new(s, f); }
static void gh_row(void *g, qr_buf *b) { ghevents_row(g, b); }
static void gh_seek(void *g, uint64_t r) { ghevents_seek(g, r); }
static uint64_t gh_next(const void *g) { return ghevents_next_row(g); }
static void gh_del(void *g) { ghevents_free(g); }

static const dataset http_logs = {
    "http_logs",           hl_make,         hl_row, hl_seek, hl_next, hl_del,
    httplogs_write_ndjson, HTTPLOGS_ROW_MAX};
static const dataset github_events = {
    "github_events",       gh_make,         gh_row, gh_seek, gh_next, gh_del,
    ghevents_write_ndjson, GHEVENTS_ROW_MAX};

static uint64_t hash_rows(const dataset *d, void *g, uint64_t n)
{
    XXH3_state_t *h = XXH3_createState();
    assert_non_null(h);
    XXH3_64bits_reset(h);
    qr_buf b;
    qr_buf_init(&b);
    for (uint64_t i = 0; i < n; i++) {
        qr_buf_clear(&b);
        d->row(g, &b);
        assert_false(b.oom);
        assert_true(b.len <= d->row_max);
        XXH3_64bits_update(h, b.p, b.len);
    }
    uint64_t v = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    qr_buf_free(&b);
    return v;
}

static uint64_t hash_of(const dataset *d, uint64_t seed, uint64_t first, uint64_t n)
{
    void *g = d->make(seed, first);
    assert_non_null(g);
    assert_int_equal(d->next(g), first);
    uint64_t v = hash_rows(d, g, n);
    d->del(g);
    return v;
}

static uint64_t hash_fd(int fd, uint64_t *len)
{
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    XXH3_state_t *h = XXH3_createState();
    assert_non_null(h);
    XXH3_64bits_reset(h);
    char buf[1 << 16];
    ssize_t k;
    *len = 0;
    while ((k = read(fd, buf, sizeof buf)) > 0) {
        XXH3_64bits_update(h, buf, (size_t)k);
        *len += (uint64_t)k;
    }
    assert_int_equal(k, 0);
    uint64_t v = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    return v;
}

static void check_same_seed_same_bytes(const dataset *d)
{
    uint64_t a = hash_of(d, 7, 0, 20000);
    assert_int_equal(a, hash_of(d, 7, 0, 20000));
    assert_int_not_equal(a, hash_of(d, 8, 0, 20000));
    assert_int_not_equal(hash_of(d, 7, 0, 100), hash_of(d, 7, 100, 100));
}

/* Rows [first, first + n) are the same whether the generator starts there,
 * seeks there, or runs from row 0. */
static void check_start_midstream_matches_tail(const dataset *d)
{
    static const struct {
        uint64_t first, n;
    } win[] = {
        {(uint64_t)GU_CHUNK_ROWS - 1, 3}, /* across the first chunk boundary */
        {(uint64_t)2 * GU_CHUNK_ROWS, 500},
        {40000, 3000}, /* mid-chunk */
    };
    enum { NWIN = sizeof win / sizeof win[0] };
    XXH3_state_t *h[NWIN];
    for (int k = 0; k < NWIN; k++) {
        h[k] = XXH3_createState();
        assert_non_null(h[k]);
        XXH3_64bits_reset(h[k]);
    }
    void *g = d->make(SEED, 0);
    assert_non_null(g);
    qr_buf b;
    qr_buf_init(&b);
    for (uint64_t i = 0; i < 43000; i++) {
        qr_buf_clear(&b);
        d->row(g, &b);
        for (int k = 0; k < NWIN; k++)
            if (i >= win[k].first && i < win[k].first + win[k].n)
                XXH3_64bits_update(h[k], b.p, b.len);
    }
    qr_buf_free(&b);
    for (int k = 0; k < NWIN; k++) {
        uint64_t want = XXH3_64bits_digest(h[k]);
        assert_int_equal(hash_of(d, SEED, win[k].first, win[k].n), want);
        d->seek(g, win[k].first); /* backwards from row 43000 */
        assert_int_equal(d->next(g), win[k].first);
        assert_int_equal(hash_rows(d, g, win[k].n), want);
        XXH3_freeState(h[k]);
    }
    d->del(g);
}

static void check_threads_write_identical_bytes(const dataset *d)
{
    const uint64_t rows = (uint64_t)2 * GU_CHUNK_ROWS + 123; /* odd chunk count, partial last */
    uint64_t h[3], len[3];
    for (int t = 1; t <= 3; t++) {
        FILE *f = tmpfile();
        assert_non_null(f);
        qr_err e;
        assert_int_equal(d->write(fileno(f), rows, SEED, t, &e), 0);
        h[t - 1] = hash_fd(fileno(f), &len[t - 1]);
        fclose(f);
    }
    assert_int_equal(h[0], h[1]);
    assert_int_equal(h[0], h[2]);
    assert_int_equal(len[0], len[1]);
    assert_int_equal(h[0], hash_of(d, SEED, 0, rows));

    FILE *f = tmpfile();
    assert_non_null(f);
    qr_err e;
    assert_int_equal(d->write(fileno(f), 0, SEED, 2, &e), 0);
    uint64_t n0;
    hash_fd(fileno(f), &n0);
    assert_int_equal(n0, 0);
    fclose(f);
    assert_int_equal(d->write(1, 10, SEED, 0, &e), -1);
    assert_string_equal(e.code, QR_E_ARGS);
    int p[2];
    assert_int_equal(pipe(p), 0);
    close(p[1]);
    assert_int_equal(d->write(p[1], (uint64_t)3 * GU_CHUNK_ROWS, SEED, 2, &e), -1);
    assert_string_equal(e.code, QR_E_IO);
    close(p[0]);
}

static void test_http_logs_same_seed_same_bytes(void **state)
{
    (void)state;
    check_same_seed_same_bytes(&http_logs);
}
static void test_github_events_same_seed_same_bytes(void **state)
{
    (void)state;
    check_same_seed_same_bytes(&github_events);
}
static void test_http_logs_start_midstream_matches_tail(void **state)
{
    (void)state;
    check_start_midstream_matches_tail(&http_logs);
}
static void test_github_events_start_midstream_matches_tail(void **state)
{
    (void)state;
    check_start_midstream_matches_tail(&github_events);
}
static void test_http_logs_threads_write_identical_bytes(void **state)
{
    (void)state;
    check_threads_write_identical_bytes(&http_logs);
}
static void test_github_events_threads_write_identical_bytes(void **state)
{
    (void)state;
    check_threads_write_identical_bytes(&github_events);
}

/* The first rows of every dataset at seed 42, pinned: a change to any
 * generator's output must be deliberate (update the digest and say so). */
static void test_outputs_pinned_at_seed_42(void **state)
{
    (void)state;
    static const uint64_t want_http = 0x126a68282837e560ULL, want_gh = 0x5f32c01426495506ULL,
                          want_otel = 0xeefe158b297bf613ULL;
    uint64_t got_http = hash_of(&http_logs, 42, 0, 2000);
    uint64_t got_gh = hash_of(&github_events, 42, 0, 2000);
    gen_ctx *g = gen_new(42, 0);
    assert_non_null(g);
    qr_buf b;
    qr_buf_init(&b);
    for (int i = 0; i < 2000; i++)
        gen_row(g, &b);
    assert_false(b.oom);
    uint64_t got_otel = XXH3_64bits(b.p, b.len);
    qr_buf_free(&b);
    gen_free(g);
    printf("  digests: http_logs %#llx github_events %#llx otel %#llx\n",
           (unsigned long long)got_http, (unsigned long long)got_gh, (unsigned long long)got_otel);
    assert_int_equal(got_http, want_http);
    assert_int_equal(got_gh, want_gh);
    assert_int_equal(got_otel, want_otel);
}

/* ---------- a small JSON tree read with util/json.h ---------- */

typedef struct jv jv;
struct jv {
    qj_type t;
    qr_slice s;     /* QJ_STRING: the decoded text; QJ_NUMBER: the raw text */
    int64_t i;      /* QJ_NUMBER: the value; QJ_TRUE/QJ_FALSE: 1/0 */
    uint32_t n;     /* members or elements */
    qr_slice *keys; /* QJ_OBJECT */
    jv *kids;
};

#define JV_MAX_KIDS 64

/* Every number in these corpora is a non-negative integer in canonical form. */
static int read_uint(qr_slice raw, int64_t *v)
{
    if (!raw.n || raw.n > 18 || (raw.p[0] == '0' && raw.n > 1))
        return -1;
    int64_t x = 0;
    for (size_t k = 0; k < raw.n; k++) {
        if (raw.p[k] < '0' || raw.p[k] > '9')
            return -1;
        x = x * 10 + (raw.p[k] - '0');
    }
    *v = x;
    return 0;
}

static int parse_value(qr_json *j, qr_arena *a, jv *out)
{
    memset(out, 0, sizeof *out);
    out->t = qj_peek(j);
    switch (out->t) {
    case QJ_NULL:
        return qj_null(j);
    case QJ_TRUE:
    case QJ_FALSE: {
        int b;
        if (qj_bool(j, &b))
            return -1;
        out->i = b;
        return 0;
    }
    case QJ_NUMBER:
        return qj_number(j, &out->s) || read_uint(out->s, &out->i) ? -1 : 0;
    case QJ_STRING:
        return qj_string(j, &out->s, a);
    case QJ_OBJECT:
    case QJ_ARRAY: {
        jv kids[JV_MAX_KIDS];
        qr_slice keys[JV_MAX_KIDS];
        int obj = out->t == QJ_OBJECT, rc;
        if (obj ? qj_object_begin(j) : qj_array_begin(j))
            return -1;
        while ((rc = obj ? qj_object_next(j, &keys[out->n], a) : qj_array_next(j)) == 1) {
            if (out->n == JV_MAX_KIDS || parse_value(j, a, &kids[out->n]))
                return -1;
            out->n++;
        }
        if (rc < 0)
            return -1;
        if (out->n) {
            out->kids = qr_arena_memdup(a, kids, out->n * sizeof *kids);
            if (obj)
                out->keys = qr_arena_memdup(a, keys, out->n * sizeof *keys);
        }
        return 0;
    }
    default:
        return -1;
    }
}

/* The canonical text of v: compact, strings written by qj_write_string. */
static void emit(qr_buf *b, const jv *v)
{
    switch (v->t) {
    case QJ_NULL:
        qr_buf_put(b, "null", 4);
        break;
    case QJ_TRUE:
        qr_buf_put(b, "true", 4);
        break;
    case QJ_FALSE:
        qr_buf_put(b, "false", 5);
        break;
    case QJ_NUMBER:
        qr_buf_put(b, v->s.p, v->s.n);
        break;
    case QJ_STRING:
        qj_write_string(b, v->s.p, v->s.n);
        break;
    case QJ_OBJECT:
    case QJ_ARRAY:
        qr_buf_put_u8(b, v->t == QJ_OBJECT ? '{' : '[');
        for (uint32_t k = 0; k < v->n; k++) {
            if (k)
                qr_buf_put_u8(b, ',');
            if (v->t == QJ_OBJECT) {
                qj_write_string(b, v->keys[k].p, v->keys[k].n);
                qr_buf_put_u8(b, ':');
            }
            emit(b, &v->kids[k]);
        }
        qr_buf_put_u8(b, v->t == QJ_OBJECT ? '}' : ']');
        break;
    default:
        break;
    }
}

typedef struct line_ctx {
    const char *p;
    size_t n;
    uint64_t row;
} line_ctx;

static line_ctx cur; /* the line under test, for failure messages */

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fail_msg("row %llu: %s: %.*s", (unsigned long long)cur.row, #cond, (int)cur.n, cur.p); \
    } while (0)

/* Parse one generated line (with its '\n') into root; checks it is one
 * canonical JSON object. */
static void parse_line(const unsigned char *p, size_t n, uint64_t row, qr_arena *a, qr_buf *tmp,
                       jv *root)
{
    cur = (line_ctx){(const char *)p, n, row};
    CHECK(n >= 3 && p[n - 1] == '\n' && !memchr(p, '\n', n - 1));
    qr_json j;
    qj_init(&j, (const char *)p, n - 1);
    CHECK(parse_value(&j, a, root) == 0 && qj_finish(&j) == 0);
    CHECK(root->t == QJ_OBJECT);
    qr_buf_clear(tmp);
    emit(tmp, root);
    CHECK(!tmp->oom && tmp->len == n - 1 && !memcmp(tmp->p, p, n - 1));
}

static const jv *get(const jv *o, const char *key)
{
    if (!o || o->t != QJ_OBJECT)
        return NULL;
    size_t kl = strlen(key);
    for (uint32_t k = 0; k < o->n; k++)
        if (o->keys[k].n == kl && !memcmp(o->keys[k].p, key, kl))
            return &o->kids[k];
    return NULL;
}

/* o is an object whose keys are exactly `list` (comma-separated), in order. */
static int keys_are(const jv *o, const char *list)
{
    if (!o || o->t != QJ_OBJECT)
        return 0;
    uint32_t k = 0;
    for (const char *s = list; *s; k++) {
        const char *e = strchr(s, ',');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (k == o->n || o->keys[k].n != l || memcmp(o->keys[k].p, s, l))
            return 0;
        s += l + (e ? 1 : 0);
    }
    return k == o->n;
}

static int is_str(const jv *v) { return v && v->t == QJ_STRING; }
static int is_int(const jv *v) { return v && v->t == QJ_NUMBER; }
static int is_bool(const jv *v) { return v && (v->t == QJ_TRUE || v->t == QJ_FALSE); }
static int is_null(const jv *v) { return v && v->t == QJ_NULL; }
static int str_eq(const jv *v, const char *s)
{
    return is_str(v) && v->s.n == strlen(s) && !memcmp(v->s.p, s, v->s.n);
}
static int str_has_prefix(const jv *v, const char *s)
{
    size_t l = strlen(s);
    return is_str(v) && v->s.n >= l && !memcmp(v->s.p, s, l);
}
static int is_hex40(const jv *v)
{
    if (!is_str(v) || v->s.n != 40)
        return 0;
    for (size_t k = 0; k < 40; k++)
        if (!((v->s.p[k] >= '0' && v->s.p[k] <= '9') || (v->s.p[k] >= 'a' && v->s.p[k] <= 'f')))
            return 0;
    return 1;
}

/* "YYYY-MM-DDTHH:MM:SSZ" to seconds since 1970, or -1. */
static int64_t rfc3339_secs(const jv *v)
{
    if (!is_str(v) || v->s.n != 20)
        return -1;
    const char *s = v->s.p;
    static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    for (int k = 0; k < 20; k++)
        if (shape[k] == 'd' ? (s[k] < '0' || s[k] > '9') : s[k] != shape[k])
            return -1;
#define D2(o) ((s[o] - '0') * 10 + (s[(o) + 1] - '0'))
    int64_t y = D2(0) * 100 + D2(2), m = D2(5), d = D2(8), hh = D2(11), mm = D2(14), ss = D2(17);
#undef D2
    if (m < 1 || m > 12 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 59)
        return -1;
    /* days from civil (proleptic Gregorian) */
    y -= m <= 2;
    int64_t era = y / 400, yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = era * 146097 + doe - 719468;
    return days * 86400 + hh * 3600 + mm * 60 + ss;
}

/* ---------- small sets of 64-bit hashes ---------- */

typedef struct hset {
    uint64_t *k;
    uint32_t *v;
    size_t cap, n;
} hset;

static void hset_init(hset *s, size_t cap)
{
    s->k = calloc(cap, sizeof *s->k);
    s->v = calloc(cap, sizeof *s->v);
    s->cap = cap;
    s->n = 0;
    assert_true(s->k && s->v);
}

static void hset_free(hset *s)
{
    free(s->k);
    free(s->v);
}

/* The slot of key (hash of p[0..n)), inserted with value v when new; returns
 * the stored value (so a second insert tells whether the values agree). */
static uint32_t hset_put(hset *s, const void *p, size_t n, uint32_t v)
{
    uint64_t h = XXH3_64bits(p, n) | 1;
    size_t i = h & (s->cap - 1);
    while (s->k[i] && s->k[i] != h)
        i = (i + 1) & (s->cap - 1);
    if (!s->k[i]) {
        assert_true(s->n * 4 < s->cap * 3);
        s->k[i] = h;
        s->v[i] = v;
        s->n++;
    }
    return s->v[i];
}

static int within(const char *what, double got, double lo, double hi)
{
    int ok = got >= lo && got <= hi;
    printf("  %-40s %9.4f  in [%g, %g]  %s\n", what, got, lo, hi, ok ? "ok" : "OUT OF RANGE");
    return ok;
}

/* ---------- http_logs ---------- */

static void test_http_logs_lines_and_statistics(void **state)
{
    (void)state;
    httplogs_ctx *g = httplogs_new(SEED, 0);
    assert_non_null(g);
    qr_buf b, tmp;
    qr_buf_init(&b);
    qr_buf_init(&tmp);
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    hset paths, clients;
    hset_init(&paths, 1 << 14);
    hset_init(&clients, 1 << 15);
    uint64_t st200 = 0, st304 = 0, st404 = 0, st206 = 0, st302 = 0, st500 = 0, other = 0;
    uint64_t gets = 0, head = 0, post = 0, http11 = 0, no_size = 0, no_size_304 = 0, query = 0;
    uint64_t bytes = 0, max_len = 0;
    int64_t prev_ts = 0, first_ts = 0, last_ts = 0;
    uint32_t *client_rows = calloc(1 << 15, sizeof *client_rows);
    assert_non_null(client_rows);
    for (uint64_t i = 0; i < STATS_ROWS; i++) {
        qr_buf_clear(&b);
        httplogs_row(g, &b);
        assert_false(b.oom);
        bytes += b.len;
        if (b.len > max_len)
            max_len = b.len;
        CHECK(b.len <= HTTPLOGS_ROW_MAX);
        qr_arena_reset(&a);
        jv root;
        parse_line(b.p, b.len, i, &a, &tmp, &root);
        const jv *size = get(&root, "size");
        CHECK(keys_are(&root, size ? "@timestamp,clientip,request,status,size"
                                   : "@timestamp,clientip,request,status"));
        /* time */
        const jv *ts = get(&root, "@timestamp");
        CHECK(is_int(ts) && ts->i >= prev_ts);
        if (!i)
            first_ts = ts->i;
        prev_ts = last_ts = ts->i;
        /* client: a dotted quad */
        const jv *ip = get(&root, "clientip");
        CHECK(is_str(ip));
        {
            int dots = 0, digits = 0, val = 0, ok = ip->s.n >= 7 && ip->s.n <= 15;
            for (size_t k = 0; k <= ip->s.n && ok; k++) {
                char c = k < ip->s.n ? ip->s.p[k] : '.';
                if (c == '.') {
                    ok = digits > 0 && val <= 255;
                    dots++;
                    digits = val = 0;
                } else if (c >= '0' && c <= '9' && digits < 3) {
                    ok = !(digits && val == 0);
                    val = val * 10 + (c - '0');
                    digits++;
                } else {
                    ok = 0;
                }
            }
            CHECK(ok && dots == 4);
        }
        uint32_t ci = hset_put(&clients, ip->s.p, ip->s.n, (uint32_t)clients.n);
        client_rows[ci]++;
        /* request: METHOD SP /path SP HTTP/1.x */
        const jv *rq = get(&root, "request");
        CHECK(is_str(rq));
        const char *r = rq->s.p, *sp1 = memchr(r, ' ', rq->s.n);
        CHECK(sp1 && rq->s.n > 10 && !memcmp(r + rq->s.n - 9, " HTTP/1.", 8));
        char minor = r[rq->s.n - 1];
        CHECK(minor == '0' || minor == '1');
        http11 += minor == '1';
        size_t ml = (size_t)(sp1 - r), pl = rq->s.n - 9 - ml - 1;
        const char *path = sp1 + 1;
        CHECK(pl >= 1 && path[0] == '/' && !memchr(path, ' ', pl));
        if (ml == 3 && !memcmp(r, "GET", 3))
            gets++;
        else if (ml == 4 && !memcmp(r, "HEAD", 4))
            head++;
        else if (ml == 4 && !memcmp(r, "POST", 4))
            post++;
        else
            CHECK(!"method GET, HEAD or POST");
        const char *q = memchr(path, '?', pl);
        query += q != NULL;
        hset_put(&paths, path, q ? (size_t)(q - path) : pl, 0);
        /* status and size */
        const jv *st = get(&root, "status");
        CHECK(is_int(st));
        switch (st->i) {
        case 200:
            st200++;
            break;
        case 304:
            st304++;
            break;
        case 404:
            st404++;
            break;
        case 206:
            st206++;
            break;
        case 302:
            st302++;
            break;
        case 500:
            st500++;
            break;
        case 400:
            other++;
            break;
        default:
            CHECK(!"status 200, 304, 404, 206, 302, 500 or 400");
        }
        if (!size) {
            no_size++;
            no_size_304 += st->i == 304;
        } else {
            CHECK(is_int(size));
            if (st->i == 304 || (ml == 4 && !memcmp(r, "HEAD", 4)))
                CHECK(size->i == 0);
            if (st->i == 200 && ml == 3)
                CHECK(size->i > 0);
        }
    }
    uint32_t top = 0;
    for (size_t k = 0; k < clients.n; k++)
        if (client_rows[k] > top)
            top = client_rows[k];
    double n = STATS_ROWS;
    printf("  %llu rows, %.1f bytes per line, longest %llu\n", (unsigned long long)STATS_ROWS,
           (double)bytes / n, (unsigned long long)max_len);
    int ok = 1;
    ok &= within("first @timestamp - 893964617", (double)(first_ts - 893964617), 0, 0);
    ok &= within("rows per second", n / (double)(last_ts - first_ts + 1), 3, 5);
    ok &= within("status 200 share", (double)st200 / n, 0.88, 0.92);
    ok &= within("status 304 share", (double)st304 / n, 0.06, 0.08);
    ok &= within("status 404 share", (double)st404 / n, 0.008, 0.016);
    ok &= within("status 206 share", (double)st206 / n, 0.005, 0.011);
    ok &= within("status 302 share", (double)st302 / n, 0.004, 0.008);
    ok &= within("status 500 share", (double)st500 / n, 0.0001, 0.0015);
    ok &= within("status 400 share", (double)other / n, 0.0001, 0.0015);
    ok &= within("GET share", (double)gets / n, 0.985, 0.995);
    ok &= within("HEAD share", (double)head / n, 0.005, 0.011);
    ok &= within("POST share", (double)post / n, 0.001, 0.0035);
    ok &= within("HTTP/1.1 share", (double)http11 / n, 0.15, 0.21);
    ok &= within("size absent share", (double)no_size / n, 0.007, 0.014);
    ok &= within("share of absent sizes on 304s", (double)no_size_304 / (double)no_size, 0.6, 1);
    ok &= within("requests with a query string", (double)query / n, 0.01, 0.05);
    ok &= within("distinct paths (without query)", (double)paths.n, 1500, 5000);
    ok &= within("distinct clients", (double)clients.n, 2000, 10000);
    ok &= within("busiest client's share", (double)top / n, 0.01, 0.06);
    assert_true(ok);
    free(client_rows);
    hset_free(&paths);
    hset_free(&clients);
    qr_arena_free(&a);
    qr_buf_free(&b);
    qr_buf_free(&tmp);
    httplogs_free(g);
}

/* ---------- github_events ---------- */

enum { T_PUSH, T_CREATE, T_WATCH, T_ICOMMENT, T_PR, T_ISSUES, T_FORK, T_DELETE, T_RELEASE, NT };
static const struct {
    const char *name;
    double lo, hi; /* share of events */
} gh_types[NT] = {
    {"PushEvent", 0.48, 0.52},          {"CreateEvent", 0.12, 0.14},
    {"WatchEvent", 0.10, 0.12},         {"IssueCommentEvent", 0.072, 0.088},
    {"PullRequestEvent", 0.053, 0.067}, {"IssuesEvent", 0.044, 0.056},
    {"ForkEvent", 0.035, 0.045},        {"DeleteEvent", 0.021, 0.029},
    {"ReleaseEvent", 0.0035, 0.0065},
};

typedef struct gh_stats {
    uint64_t type[NT], org, pushes, commits, empty_pushes, capped_pushes, max_commits;
    uint64_t nulls, trues, falses, empty_arrays, multiline_msgs, non_ascii_msgs;
    uint64_t esc_quote, esc_backslash, esc_ctrl, esc_tab, merged, closed_prs;
} gh_stats;

/* {"login":"L","id":N} */
static int is_user_short(const jv *u)
{
    return keys_are(u, "login,id") && is_str(get(u, "login")) && is_int(get(u, "id"));
}

static void count_kinds(gh_stats *st, const jv *v)
{
    switch (v->t) {
    case QJ_NULL:
        st->nulls++;
        break;
    case QJ_TRUE:
        st->trues++;
        break;
    case QJ_FALSE:
        st->falses++;
        break;
    case QJ_ARRAY:
    case QJ_OBJECT:
        st->empty_arrays += v->t == QJ_ARRAY && v->n == 0;
        for (uint32_t k = 0; k < v->n; k++)
            count_kinds(st, &v->kids[k]);
        break;
    default:
        break;
    }
}

static void check_issue(const jv *is, const jv *repo_url)
{
    CHECK(keys_are(is, "url,id,number,title,user,labels,state,locked,comments,created_at,"
                       "updated_at,closed_at,body"));
    CHECK(str_has_prefix(get(is, "url"), "https://api.github.com/repos/") &&
          get(is, "url")->s.n > repo_url->s.n &&
          !memcmp(get(is, "url")->s.p, repo_url->s.p, repo_url->s.n));
    CHECK(is_int(get(is, "id")) && is_int(get(is, "number")) && is_str(get(is, "title")));
    CHECK(is_user_short(get(is, "user")));
    const jv *labels = get(is, "labels");
    CHECK(labels && labels->t == QJ_ARRAY && labels->n <= 3);
    for (uint32_t k = 0; k < labels->n; k++)
        CHECK(keys_are(&labels->kids[k], "name,color") && get(&labels->kids[k], "color")->s.n == 6);
    int closed = str_eq(get(is, "state"), "closed");
    CHECK(closed || str_eq(get(is, "state"), "open"));
    CHECK(closed ? rfc3339_secs(get(is, "closed_at")) >= 0 : is_null(get(is, "closed_at")));
    CHECK(get(is, "locked")->t == QJ_FALSE && is_int(get(is, "comments")));
    CHECK(rfc3339_secs(get(is, "created_at")) >= 0 &&
          rfc3339_secs(get(is, "created_at")) <= rfc3339_secs(get(is, "updated_at")));
    CHECK(is_str(get(is, "body")) || is_null(get(is, "body")));
}

static void check_push(gh_stats *st, const jv *pl, const jv *repo_url)
{
    CHECK(keys_are(pl, "push_id,size,distinct_size,ref,head,before,commits"));
    const jv *commits = get(pl, "commits"), *size = get(pl, "size"), *ds = get(pl, "distinct_size");
    CHECK(is_int(get(pl, "push_id")) && is_int(size) && is_int(ds));
    CHECK(str_has_prefix(get(pl, "ref"), "refs/heads/"));
    CHECK(is_hex40(get(pl, "head")) && is_hex40(get(pl, "before")));
    CHECK(commits && commits->t == QJ_ARRAY && commits->n <= 20 && size->i >= commits->n);
    CHECK(commits->n == 20 || size->i == commits->n);
    int64_t distinct = size->i - commits->n;
    for (uint32_t k = 0; k < commits->n; k++) {
        const jv *c = &commits->kids[k];
        CHECK(keys_are(c, "sha,author,message,distinct,url"));
        CHECK(is_hex40(get(c, "sha")) && keys_are(get(c, "author"), "email,name"));
        CHECK(
            is_str(get(get(c, "author"), "email")) &&
            memchr(get(get(c, "author"), "email")->s.p, '@', get(get(c, "author"), "email")->s.n));
        CHECK(is_str(get(get(c, "author"), "name")) && get(get(c, "author"), "name")->s.n > 0);
        const jv *msg = get(c, "message"), *url = get(c, "url");
        CHECK(is_str(msg) && msg->s.n > 0 && is_bool(get(c, "distinct")));
        distinct += get(c, "distinct")->t == QJ_TRUE;
        CHECK(is_str(url) && url->s.n == repo_url->s.n + 9 + 40 &&
              !memcmp(url->s.p, repo_url->s.p, repo_url->s.n) &&
              !memcmp(url->s.p + repo_url->s.n, "/commits/", 9) &&
              !memcmp(url->s.p + repo_url->s.n + 9, get(c, "sha")->s.p, 40));
        st->multiline_msgs += memchr(msg->s.p, '\n', msg->s.n) != NULL;
        for (size_t i = 0; i < msg->s.n; i++)
            if ((unsigned char)msg->s.p[i] >= 0x80) {
                st->non_ascii_msgs++;
                break;
            }
    }
    CHECK(ds->i == distinct);
    if (commits->n)
        CHECK(!memcmp(get(pl, "head")->s.p, get(&commits->kids[commits->n - 1], "sha")->s.p, 40));
    st->pushes++;
    st->commits += commits->n;
    st->empty_pushes += commits->n == 0;
    st->capped_pushes += size->i > 20;
    if (commits->n > st->max_commits)
        st->max_commits = commits->n;
}

static void check_payload(gh_stats *st, int t, const jv *pl, const jv *repo, const jv *actor)
{
    const jv *repo_url = get(repo, "url");
    switch (t) {
    case T_PUSH:
        check_push(st, pl, repo_url);
        break;
    case T_CREATE: {
        CHECK(keys_are(pl, "ref,ref_type,master_branch,description,pusher_type"));
        const jv *rt = get(pl, "ref_type");
        CHECK(str_eq(rt, "branch") || str_eq(rt, "tag") || str_eq(rt, "repository"));
        CHECK(str_eq(rt, "repository") ? is_null(get(pl, "ref")) : is_str(get(pl, "ref")));
        CHECK(is_str(get(pl, "description")) || is_null(get(pl, "description")));
        CHECK(str_eq(get(pl, "pusher_type"), "user"));
        break;
    }
    case T_WATCH:
        CHECK(keys_are(pl, "action") && str_eq(get(pl, "action"), "started"));
        break;
    case T_ISSUES: {
        CHECK(keys_are(pl, "action,issue"));
        const jv *act = get(pl, "action"), *is = get(pl, "issue");
        check_issue(is, repo_url);
        int closed = str_eq(get(is, "state"), "closed");
        CHECK(str_eq(act, "closed")
                  ? closed
                  : (str_eq(act, "opened") || str_eq(act, "reopened")) && !closed);
        break;
    }
    case T_ICOMMENT: {
        CHECK(keys_are(pl, "action,issue,comment") && str_eq(get(pl, "action"), "created"));
        check_issue(get(pl, "issue"), repo_url);
        const jv *c = get(pl, "comment");
        CHECK(keys_are(c, "url,id,user,created_at,updated_at,body"));
        CHECK(is_int(get(c, "id")) && is_user_short(get(c, "user")) && is_str(get(c, "body")));
        const jv *cl = get(get(c, "user"), "login"), *al = get(actor, "login");
        CHECK(cl->s.n == al->s.n && !memcmp(cl->s.p, al->s.p, al->s.n));
        break;
    }
    case T_PR: {
        CHECK(keys_are(pl, "action,number,pull_request"));
        const jv *pr = get(pl, "pull_request");
        CHECK(keys_are(pr, "url,id,number,state,title,user,body,created_at,updated_at,closed_at,"
                           "merged_at,merged,comments,commits,additions,deletions,changed_files"));
        CHECK(get(pr, "number")->i == get(pl, "number")->i && is_user_short(get(pr, "user")));
        int closed = str_eq(get(pr, "state"), "closed"), merged = get(pr, "merged")->t == QJ_TRUE;
        CHECK(str_eq(get(pl, "action"), closed ? "closed" : "opened"));
        CHECK(is_bool(get(pr, "merged")) && (!merged || closed));
        CHECK(merged ? rfc3339_secs(get(pr, "merged_at")) >= 0 : is_null(get(pr, "merged_at")));
        CHECK(closed ? rfc3339_secs(get(pr, "closed_at")) >= 0 : is_null(get(pr, "closed_at")));
        CHECK(is_int(get(pr, "additions")) && is_int(get(pr, "deletions")) &&
              is_int(get(pr, "changed_files")) && get(pr, "changed_files")->i >= 1);
        st->closed_prs += closed;
        st->merged += merged;
        break;
    }
    case T_FORK: {
        CHECK(keys_are(pl, "forkee"));
        const jv *f = get(pl, "forkee");
        CHECK(keys_are(f, "id,name,full_name,owner,private,html_url,description,fork,url,"
                          "created_at,updated_at,pushed_at,stargazers_count,watchers_count,"
                          "language,forks_count,open_issues_count,default_branch,public"));
        const jv *login = get(actor, "login"), *fn = get(f, "full_name");
        CHECK(is_str(fn) && fn->s.n > login->s.n && !memcmp(fn->s.p, login->s.p, login->s.n) &&
              fn->s.p[login->s.n] == '/');
        CHECK(get(get(f, "owner"), "id")->i == get(actor, "id")->i);
        CHECK(get(f, "fork")->t == QJ_TRUE && get(f, "private")->t == QJ_FALSE);
        break;
    }
    case T_DELETE: {
        CHECK(keys_are(pl, "ref,ref_type,pusher_type") && is_str(get(pl, "ref")));
        CHECK(str_eq(get(pl, "ref_type"), "branch") || str_eq(get(pl, "ref_type"), "tag"));
        break;
    }
    case T_RELEASE: {
        CHECK(keys_are(pl, "action,release") && str_eq(get(pl, "action"), "published"));
        const jv *rl = get(pl, "release");
        CHECK(keys_are(rl, "url,id,tag_name,target_commitish,name,draft,author,prerelease,"
                           "created_at,published_at,assets,body"));
        CHECK(get(rl, "assets")->t == QJ_ARRAY && is_user_short(get(rl, "author")));
        break;
    }
    }
}

static void test_github_events_lines_and_statistics(void **state)
{
    (void)state;
    ghevents_ctx *g = ghevents_new(SEED, 0);
    assert_non_null(g);
    qr_buf b, tmp;
    qr_buf_init(&b);
    qr_buf_init(&tmp);
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    hset logins, repos;
    hset_init(&logins, 1 << 17);
    hset_init(&repos, 1 << 17);
    gh_stats st = {0};
    int64_t prev_ts = 0;
    uint64_t prev_id = 0, bytes = 0, max_len = 0;
    char want[256];
    for (uint64_t i = 0; i < STATS_ROWS; i++) {
        qr_buf_clear(&b);
        ghevents_row(g, &b);
        assert_false(b.oom);
        bytes += b.len;
        if (b.len > max_len)
            max_len = b.len;
        CHECK(b.len <= GHEVENTS_ROW_MAX);
        qr_arena_reset(&a);
        jv root;
        parse_line(b.p, b.len, i, &a, &tmp, &root);
        const jv *org = get(&root, "org");
        CHECK(keys_are(&root, org ? "id,type,actor,repo,payload,public,created_at,org"
                                  : "id,type,actor,repo,payload,public,created_at"));
        /* id: a string of digits, increasing */
        const jv *id = get(&root, "id");
        int64_t idv = 0;
        CHECK(is_str(id) && read_uint(id->s, &idv) == 0 && (uint64_t)idv > prev_id);
        prev_id = (uint64_t)idv;
        /* created_at: non-decreasing */
        int64_t ts = rfc3339_secs(get(&root, "created_at"));
        CHECK(ts >= prev_ts && ts >= 1420070400); /* 2015-01-01 */
        prev_ts = ts;
        CHECK(get(&root, "public")->t == QJ_TRUE);
        /* actor */
        const jv *actor = get(&root, "actor"), *login = get(actor, "login");
        CHECK(keys_are(actor, "id,login,display_login,gravatar_id,url,avatar_url"));
        CHECK(is_int(get(actor, "id")) && is_str(login) && login->s.n >= 2 && login->s.n <= 39);
        CHECK(str_eq(get(actor, "gravatar_id"), ""));
        const jv *dl = get(actor, "display_login");
        CHECK(is_str(dl) && dl->s.n == login->s.n && !memcmp(dl->s.p, login->s.p, login->s.n));
        snprintf(want, sizeof want, "https://api.github.com/users/%.*s", (int)login->s.n,
                 login->s.p);
        CHECK(str_eq(get(actor, "url"), want));
        snprintf(want, sizeof want, "https://avatars.githubusercontent.com/u/%lld?",
                 (long long)get(actor, "id")->i);
        CHECK(str_eq(get(actor, "avatar_url"), want));
        /* one login, one id */
        CHECK(hset_put(&logins, login->s.p, login->s.n, (uint32_t)get(actor, "id")->i) ==
              (uint32_t)get(actor, "id")->i);
        /* repo */
        const jv *repo = get(&root, "repo"), *name = get(repo, "name");
        CHECK(keys_are(repo, "id,name,url") && is_int(get(repo, "id")) && is_str(name));
        const char *slash = memchr(name->s.p, '/', name->s.n);
        CHECK(slash && slash > name->s.p && (size_t)(slash - name->s.p) + 1 < name->s.n &&
              !memchr(slash + 1, '/', name->s.n - (size_t)(slash - name->s.p) - 1));
        snprintf(want, sizeof want, "https://api.github.com/repos/%.*s", (int)name->s.n, name->s.p);
        CHECK(str_eq(get(repo, "url"), want));
        CHECK(hset_put(&repos, name->s.p, name->s.n, (uint32_t)get(repo, "id")->i) ==
              (uint32_t)get(repo, "id")->i);
        /* org: owns the repository */
        if (org) {
            st.org++;
            const jv *ol = get(org, "login");
            CHECK(keys_are(org, "id,login,gravatar_id,url,avatar_url") && is_str(ol));
            CHECK((size_t)(slash - name->s.p) == ol->s.n && !memcmp(name->s.p, ol->s.p, ol->s.n));
            snprintf(want, sizeof want, "https://api.github.com/orgs/%.*s", (int)ol->s.n, ol->s.p);
            CHECK(str_eq(get(org, "url"), want));
        }
        /* type and payload */
        const jv *type = get(&root, "type");
        int t = 0;
        while (t < NT && !str_eq(type, gh_types[t].name))
            t++;
        CHECK(t < NT);
        st.type[t]++;
        const jv *pl = get(&root, "payload");
        CHECK(pl && pl->t == QJ_OBJECT);
        check_payload(&st, t, pl, repo, actor);
        count_kinds(&st, &root);
        /* escapes, as written */
        st.esc_quote += memmem(b.p, b.len, "\\\"", 2) != NULL;
        st.esc_backslash += memmem(b.p, b.len, "\\\\", 2) != NULL;
        st.esc_ctrl += memmem(b.p, b.len, "\\u00", 4) != NULL;
        st.esc_tab += memmem(b.p, b.len, "\\t", 2) != NULL;
    }
    double n = STATS_ROWS;
    printf("  %llu events, %.1f bytes per line, longest %llu, %zu logins, %zu repositories\n",
           (unsigned long long)STATS_ROWS, (double)bytes / n, (unsigned long long)max_len, logins.n,
           repos.n);
    int ok = 1;
    for (int t = 0; t < NT; t++) {
        char what[64];
        snprintf(what, sizeof what, "%s share", gh_types[t].name);
        ok &= within(what, (double)st.type[t] / n, gh_types[t].lo, gh_types[t].hi);
    }
    ok &= within("org share", (double)st.org / n, 0.185, 0.215);
    ok &= within("commits per push", (double)st.commits / (double)st.pushes, 2.2, 2.9);
    ok &= within("most commits in a push", (double)st.max_commits, 20, 20);
    ok &= within("pushes without commits", (double)st.empty_pushes / (double)st.pushes, 0.01, 0.03);
    ok &= within("pushes of more than 20 commits", (double)st.capped_pushes / (double)st.pushes,
                 0.002, 0.01);
    ok &= within("multi-line commit messages", (double)st.multiline_msgs / (double)st.commits, 0.03,
                 0.3);
    ok &= within("non-ASCII commit messages", (double)st.non_ascii_msgs / (double)st.commits, 0.03,
                 0.3);
    ok &= within("merged share of closed pull requests", (double)st.merged / (double)st.closed_prs,
                 0.6, 0.8);
    ok &= within("distinct actor logins", (double)logins.n, 10000, 50000);
    ok &= within("distinct repositories", (double)repos.n, 10000, 120000);
    ok &= within("nulls per event", (double)st.nulls / n, 0.05, 5);
    ok &= within("false values per event", (double)st.falses / n, 0.05, 20);
    ok &= within("true values per event", (double)st.trues / n, 1, 20);
    ok &= within("empty arrays per event", (double)st.empty_arrays / n, 0.01, 2);
    ok &= within("lines with \\\"", (double)st.esc_quote / n, 0.005, 0.5);
    ok &= within("lines with \\\\", (double)st.esc_backslash / n, 0.001, 0.5);
    ok &= within("lines with \\u00xx", (double)st.esc_ctrl / n, 0.0005, 0.5);
    ok &= within("lines with \\t", (double)st.esc_tab / n, 0.001, 0.5);
    assert_true(ok);
    hset_free(&logins);
    hset_free(&repos);
    qr_arena_free(&a);
    qr_buf_free(&b);
    qr_buf_free(&tmp);
    ghevents_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_logs_same_seed_same_bytes),
        cmocka_unit_test(test_github_events_same_seed_same_bytes),
        cmocka_unit_test(test_http_logs_start_midstream_matches_tail),
        cmocka_unit_test(test_github_events_start_midstream_matches_tail),
        cmocka_unit_test(test_http_logs_threads_write_identical_bytes),
        cmocka_unit_test(test_github_events_threads_write_identical_bytes),
        cmocka_unit_test(test_outputs_pinned_at_seed_42),
        cmocka_unit_test(test_http_logs_lines_and_statistics),
        cmocka_unit_test(test_github_events_lines_and_statistics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
