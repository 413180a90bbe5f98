/* test_gen_stats.c - the OpenTelemetry generator reproduces the corpus facts
 * of DATASET.md, and is deterministic however the stream is split.
 *
 * The checks read the output only: a strict scanner of Quarry's canonical
 * NDJSON (keys in schema order, compact, canonical string escapes) and an
 * independent tokenizer (lowercase, split on every non-alphanumeric byte).
 * Nothing here looks at the generator's templates or internals.
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

#include "gen/otelgen.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/timefmt.h"

#define STATS_ROWS 1000000u
#ifndef SEED
#define SEED 42u /* -DSEED=n to check other seeds */
#endif

/* ---------- a strict scanner of one canonical line ---------- */

typedef struct scan {
    const char *p, *end;
    int bad;
    const char *why;
} scan;

typedef struct field {
    const char *raw; /* between the quotes, still escaped */
    size_t raw_len;
} field;

static void scan_fail(scan *s, const char *why)
{
    if (!s->bad) {
        s->bad = 1;
        s->why = why;
    }
}

static void expect_lit(scan *s, const char *lit)
{
    if (s->bad)
        return;
    const char *p = s->p;
    for (; *lit; lit++, p++)
        if (p == s->end || *p != *lit) {
            scan_fail(s, lit);
            return;
        }
    s->p = p;
}

static int is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

/* A canonical JSON string: only \" \\ \b \f \n \r \t \u00xx (for other
 * control bytes) escapes, no raw control bytes. Decodes into out when given. */
static field read_string(scan *s, char *out, size_t *out_len)
{
    field f = {NULL, 0};
    size_t o = 0;
    expect_lit(s, "\"");
    if (s->bad)
        return f;
    f.raw = s->p;
    while (s->p < s->end && *s->p != '"') {
        unsigned char c = (unsigned char)*s->p;
        if (c < 0x20) {
            scan_fail(s, "raw control byte in string");
            return f;
        }
        if (c == '\\') {
            if (s->end - s->p < 2) {
                scan_fail(s, "truncated escape");
                return f;
            }
            char e = s->p[1], d;
            s->p += 2;
            switch (e) {
            case '"': d = '"'; break;
            case '\\': d = '\\'; break;
            case 'b': d = '\b'; break;
            case 'f': d = '\f'; break;
            case 'n': d = '\n'; break;
            case 'r': d = '\r'; break;
            case 't': d = '\t'; break;
            case 'u': {
                if (s->end - s->p < 4 || s->p[0] != '0' || s->p[1] != '0' || !is_hex(s->p[2]) ||
                    !is_hex(s->p[3])) {
                    scan_fail(s, "non-canonical \\u escape");
                    return f;
                }
                unsigned v = (unsigned)strtoul((char[]){s->p[2], s->p[3], 0}, NULL, 16);
                if (v >= 0x20 || v == '\b' || v == '\f' || v == '\n' || v == '\r' || v == '\t') {
                    scan_fail(s, "\\u escape where a short or no escape is canonical");
                    return f;
                }
                d = (char)v;
                s->p += 4;
                break;
            }
            default: scan_fail(s, "non-canonical escape"); return f;
            }
            if (out)
                out[o++] = d;
        } else {
            if (out)
                out[o++] = (char)c;
            s->p++;
        }
    }
    f.raw_len = (size_t)(s->p - f.raw);
    expect_lit(s, "\"");
    if (out_len)
        *out_len = o;
    return f;
}

static int64_t read_int(scan *s)
{
    int64_t v = 0;
    int nd = 0;
    while (!s->bad && s->p < s->end && *s->p >= '0' && *s->p <= '9') {
        if (nd && v == 0)
            scan_fail(s, "leading zero");
        v = v * 10 + (*s->p - '0');
        s->p++;
        nd++;
    }
    if (!nd)
        scan_fail(s, "expected an integer");
    return v;
}

/* A map: {"k":"v",...} with string values; returns the pair count and
 * the value of `want_key` (if present) in *want. */
static int read_map(scan *s, const char *want_key, field *want, field *whole)
{
    int n = 0;
    if (whole)
        whole->raw = s->p;
    expect_lit(s, "{");
    if (!s->bad && s->p < s->end && *s->p == '}') {
        s->p++;
    } else {
        for (;;) {
            field k = read_string(s, NULL, NULL);
            expect_lit(s, ":");
            field v = read_string(s, NULL, NULL);
            if (s->bad)
                return n;
            if (want_key && k.raw_len == strlen(want_key) && !memcmp(k.raw, want_key, k.raw_len))
                *want = v;
            n++;
            if (s->p < s->end && *s->p == ',') {
                s->p++;
                continue;
            }
            expect_lit(s, "}");
            break;
        }
    }
    if (whole)
        whole->raw_len = (size_t)(s->p - whole->raw);
    return n;
}

typedef struct row {
    int64_t ts;
    field trace, span, sev, svc, res_url, scope_url, scope_name, scope_ver, res_svc;
    int64_t flags, sevnum;
    char body[4096];
    size_t body_len;
    int log_attrs;
} row;

static int parse_row(const char *line, size_t n, row *r, const char **why)
{
    scan s = {line, line + n, 0, NULL};
    expect_lit(&s, "{\"Timestamp\":");
    field ts = read_string(&s, NULL, NULL);
    if (!s.bad) {
        const char *w;
        if (ts.raw_len != QR_TIME_TEXT_LEN || ts.raw[QR_TIME_TEXT_LEN - 1] != 'Z' ||
            qr_time_parse(ts.raw, ts.raw_len, &r->ts, &w))
            scan_fail(&s, "bad Timestamp");
    }
    expect_lit(&s, ",\"TraceId\":");
    r->trace = read_string(&s, NULL, NULL);
    expect_lit(&s, ",\"SpanId\":");
    r->span = read_string(&s, NULL, NULL);
    expect_lit(&s, ",\"TraceFlags\":");
    r->flags = read_int(&s);
    expect_lit(&s, ",\"SeverityText\":");
    r->sev = read_string(&s, NULL, NULL);
    expect_lit(&s, ",\"SeverityNumber\":");
    r->sevnum = read_int(&s);
    expect_lit(&s, ",\"ServiceName\":");
    r->svc = read_string(&s, NULL, NULL);
    expect_lit(&s, ",\"Body\":");
    if (!s.bad && (size_t)(s.end - s.p) >= sizeof r->body)
        scan_fail(&s, "line too long");
    read_string(&s, r->body, &r->body_len);
    expect_lit(&s, ",\"ResourceSchemaUrl\":");
    r->res_url = read_string(&s, NULL, NULL);
    expect_lit(&s, ",\"ResourceAttributes\":");
    r->res_svc = (field){NULL, 0};
    read_map(&s, "service.name", &r->res_svc, NULL);
    expect_lit(&s, ",\"ScopeSchemaUrl\":");
    r->scope_url = read_string(&s, NULL, NULL);
    expect_lit(&s, ",\"ScopeName\":");
    r->scope_name = read_string(&s, NULL, NULL);
    expect_lit(&s, ",\"ScopeVersion\":");
    r->scope_ver = read_string(&s, NULL, NULL);
    expect_lit(&s, ",\"ScopeAttributes\":");
    read_map(&s, NULL, NULL, NULL);
    expect_lit(&s, ",\"LogAttributes\":");
    r->log_attrs = read_map(&s, NULL, NULL, NULL);
    expect_lit(&s, "}\n");
    if (!s.bad && s.p != s.end)
        scan_fail(&s, "trailing bytes");
    *why = s.why;
    return s.bad ? -1 : 0;
}

/* ---------- small distinct-string sets ---------- */

#define MAX_DISTINCT 64
typedef struct strset {
    char s[MAX_DISTINCT][96];
    uint64_t count[MAX_DISTINCT];
    int n, overflow;
} strset;

static int strset_add(strset *set, const char *a, size_t an, const char *b, size_t bn)
{
    char key[96];
    if (an + bn + 2 > sizeof key) {
        set->overflow = 1;
        return -1;
    }
    memcpy(key, a, an);
    key[an] = '|';
    memcpy(key + an + 1, b, bn);
    key[an + 1 + bn] = 0;
    for (int i = 0; i < set->n; i++)
        if (!strcmp(set->s[i], key)) {
            set->count[i]++;
            return i;
        }
    if (set->n == MAX_DISTINCT) {
        set->overflow = 1;
        return -1;
    }
    strcpy(set->s[set->n], key);
    set->count[set->n] = 1;
    return set->n++;
}

/* ---------- body statistics ---------- */

enum {
    W_FAILED,
    W_ERROR,
    W_CHARGE,
    W_ORDER,
    W_CACHE,
    W_PLACE,
    W_CONNECTION,
    W_SERVICE,
    W_REQUEST,
    W_CONVERSION,
    W_POST,
    W_EMAIL,
    W_CONFIRMATION,
    W_SEND,
    W_REFUSED,
    W_PAYMENT,
    W_EXPECTED,
    W_CARD,
    W_TO,
    W_GOT,
    W_200,
    W_500,
    NWORDS
};
static const char *const words[NWORDS] = {
    "failed",   "error",      "charge", "order", "cache",        "place", "connection", "service",
    "request",  "conversion", "post",   "email", "confirmation", "send",  "refused",    "payment",
    "expected", "card",       "to",     "got",   "200",          "500"};
/* document frequency per 1M rows, from DATASET.md; 0 = not a target */
static const double word_target[NWORDS] = {129e3, 101e3, 68e3,  66e3,  57e3, 31e3,
                                           30e3,  24e3,  19e3,  15e3,  15e3, 6.6e3,
                                           5.2e3, 5e3,   2.6e3, 1.7e3, 1.1e3};
static size_t word_len[NWORDS];

typedef struct stats {
    uint64_t rows, bytes;
    uint64_t df[NWORDS];
    uint64_t err_or_failed, failed_and_order, two_of_four, phrase_place, bigram_place_order;
    uint64_t prefix_ord, prefix_conn, suffix_tion, contains_nnec, error_not_cache, four_way;
    uint64_t phrase_email;
    uint64_t bad_charg, bad_cche; /* terms breaking "only charge" / "only cache" */
    uint64_t sev_ge13, cart, non_ascii, escaped_quote, escaped_ctrl;
} stats;

static int word_id(const char *p, size_t n)
{
    for (int w = 0; w < NWORDS; w++)
        if (word_len[w] == n && words[w][0] == p[0] && !memcmp(words[w], p, n))
            return w;
    return -1;
}

static int phrase_at(const int *ids, size_t nt, size_t i, const int *ph, size_t k)
{
    if (i + k > nt)
        return 0;
    for (size_t j = 0; j < k; j++)
        if (ids[i + j] != ph[j])
            return 0;
    return 1;
}

static int has_sub4(const char *p, size_t n, const char *w)
{
    for (size_t i = 0; i + 4 <= n; i++)
        if (p[i] == w[0] && p[i + 1] == w[1] && p[i + 2] == w[2] && p[i + 3] == w[3])
            return 1;
    return 0;
}

static void body_stats(stats *st, const char *body, size_t n)
{
    char low[4096];
    int ids[512]; /* word id of each token in order, -1 for other words */
    size_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)body[i];
        if (c >= 0x80)
            st->non_ascii++, c = ' ';
        int alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        low[i] = (char)(alnum ? (c | ((c >= 'A' && c <= 'Z') ? 0x20 : 0)) : 0);
    }
    int has[NWORDS] = {0};
    int ord = 0, conn = 0, tion = 0, nnec = 0;
    for (size_t i = 0; i < n;) {
        if (!low[i]) {
            i++;
            continue;
        }
        const char *p = low + i;
        size_t k = 0;
        while (i + k < n && low[i + k])
            k++;
        i += k;
        int id = word_id(p, k);
        if (nt < 512)
            ids[nt++] = id;
        if (id >= 0)
            has[id] = 1;
        if (k >= 3 && p[0] == 'o' && p[1] == 'r' && p[2] == 'd')
            ord = 1;
        if (k >= 4 && has_sub4(p, 4, "conn"))
            conn = 1;
        if (k >= 4 && has_sub4(p + k - 4, 4, "tion"))
            tion = 1;
        if (has_sub4(p, k, "nnec"))
            nnec = 1;
        if (k >= 5 && p[0] == 'c' && !memcmp(p, "charg", 5) && id != W_CHARGE)
            st->bad_charg++;
        if (k == 5 && p[0] == 'c' && !memcmp(p + 2, "che", 3) && id != W_CACHE)
            st->bad_cche++;
    }
    static const int place[] = {W_FAILED, W_TO, W_PLACE, W_ORDER};
    static const int email_ph[] = {W_POST,     W_TO,  W_EMAIL, W_SERVICE,
                                   W_EXPECTED, W_200, W_GOT,   W_500};
    int ph_place = 0, bi_place = 0, ph_email = 0;
    for (size_t i = 0; i < nt; i++) {
        if (ids[i] == W_FAILED && phrase_at(ids, nt, i, place, 4))
            ph_place = 1;
        if (ids[i] == W_PLACE && phrase_at(ids, nt, i, place + 2, 2))
            bi_place = 1;
        if (ids[i] == W_POST && phrase_at(ids, nt, i, email_ph, 8))
            ph_email = 1;
    }
    for (int w = 0; w < NWORDS; w++)
        st->df[w] += (uint64_t)has[w];
    st->err_or_failed += has[W_ERROR] || has[W_FAILED];
    st->failed_and_order += has[W_FAILED] && has[W_ORDER];
    st->two_of_four += has[W_ERROR] + has[W_FAILED] + has[W_CHARGE] + has[W_CACHE] >= 2;
    st->error_not_cache += has[W_ERROR] && !has[W_CACHE];
    st->four_way += has[W_FAILED] && has[W_CHARGE] && has[W_CARD] && has[W_CACHE];
    st->phrase_place += (uint64_t)ph_place;
    st->bigram_place_order += (uint64_t)bi_place;
    st->phrase_email += (uint64_t)ph_email;
    st->prefix_ord += (uint64_t)ord;
    st->prefix_conn += (uint64_t)conn;
    st->suffix_tion += (uint64_t)tion;
    st->contains_nnec += (uint64_t)nnec;
}

/* ---------- trace bookkeeping: open addressing on the 128-bit id ---------- */

#define TRACE_SLOTS (1u << 19)
typedef struct trace_ent {
    uint64_t a, b;
    uint64_t first_row, last_row;
    uint32_t rows;
    int16_t svc;
    uint8_t multi_svc, used;
} trace_ent;

static uint64_t parse_hex64(const char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 16; i++)
        v = v << 4 | (uint64_t)(p[i] <= '9' ? p[i] - '0' : p[i] - 'a' + 10);
    return v;
}

static trace_ent *trace_get(trace_ent *tab, uint64_t a, uint64_t b)
{
    uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ULL)) & (TRACE_SLOTS - 1);
    for (;;) {
        trace_ent *e = &tab[h];
        if (!e->used) {
            e->used = 1;
            e->a = a;
            e->b = b;
            return e;
        }
        if (e->a == a && e->b == b)
            return e;
        h = (h + 1) & (TRACE_SLOTS - 1);
    }
}

static int valid_hex(field f, size_t n)
{
    if (f.raw_len != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_hex(f.raw[i]))
            return 0;
    return 1;
}

static int within(double got, double want, double tol)
{
    return got >= want * (1 - tol) && got <= want * (1 + tol);
}

static int check(const char *name, double got, double want, double tol)
{
    int ok = within(got, want, tol);
    printf("  %-44s %10.0f  target %10.0f  %s\n", name, got, want, ok ? "ok" : "OUT OF RANGE");
    return ok;
}

static int sev_number(field f)
{
    static const struct {
        const char *t;
        int n;
    } m[] = {{"TRACE", 1}, {"DEBUG", 5}, {"INFO", 9}, {"WARN", 13}, {"ERROR", 17}, {"FATAL", 21}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (f.raw_len == strlen(m[i].t) && !memcmp(f.raw, m[i].t, f.raw_len))
            return m[i].n;
    return -1;
}

static void test_corpus_statistics(void **state)
{
    (void)state;
    for (int w = 0; w < NWORDS; w++)
        word_len[w] = strlen(words[w]);
    gen_ctx *g = gen_new(SEED, 0);
    assert_non_null(g);
    qr_buf b;
    qr_buf_init(&b);
    stats *st = calloc(1, sizeof *st);
    trace_ent *traces = calloc(TRACE_SLOTS, sizeof *traces);
    strset *services = calloc(1, sizeof *services), *pairs = calloc(1, sizeof *pairs),
           *sevs = calloc(1, sizeof *sevs), *urls = calloc(1, sizeof *urls),
           *versions = calloc(1, sizeof *versions);
    row *r = malloc(sizeof *r);
    assert_true(st && traces && services && pairs && sevs && urls && versions && r);
    int64_t prev_ts = INT64_MIN, first_ts = 0, last_ts = 0;
    uint64_t traced_rows = 0, distinct_traces = 0, bad_rows = 0, empty_log_attrs = 0;
    for (uint64_t i = 0; i < STATS_ROWS; i++) {
        qr_buf_clear(&b);
        gen_row(g, &b);
        assert_false(b.oom);
        st->rows++;
        st->bytes += b.len;
        assert_true(b.len <= GEN_ROW_MAX);
        const char *why = NULL;
        if (parse_row((const char *)b.p, b.len, r, &why)) {
            if (bad_rows++ < 3)
                printf("row %llu unparsable (%s): %.*s", (unsigned long long)i, why, (int)b.len,
                       (const char *)b.p);
            continue;
        }
        if (memchr(b.p, '\\', b.len)) {
            if (memmem(b.p, b.len, "\\\"", 2))
                st->escaped_quote++;
            if (memmem(b.p, b.len, "\\t", 2) || memmem(b.p, b.len, "\\n", 2) ||
                memmem(b.p, b.len, "\\u00", 4))
                st->escaped_ctrl++;
        }
        /* time */
        assert_true(r->ts > prev_ts);
        prev_ts = r->ts;
        if (i == 0)
            first_ts = r->ts;
        last_ts = r->ts;
        /* severity */
        int sn = sev_number(r->sev);
        assert_int_equal(sn, r->sevnum);
        st->sev_ge13 += r->sevnum >= 13;
        strset_add(sevs, r->sev.raw, r->sev.raw_len, "", 0);
        strset_add(pairs, r->sev.raw, r->sev.raw_len, r->scope_name.raw, r->scope_name.raw_len);
        strset_add(services, r->svc.raw, r->svc.raw_len, "", 0);
        strset_add(urls, r->res_url.raw, r->res_url.raw_len, r->scope_url.raw,
                   r->scope_url.raw_len);
        strset_add(versions, r->scope_ver.raw, r->scope_ver.raw_len, "", 0);
        st->cart += r->svc.raw_len == 4 && !memcmp(r->svc.raw, "cart", 4);
        /* resource says the same service */
        assert_int_equal(r->res_svc.raw_len, r->svc.raw_len);
        assert_memory_equal(r->res_svc.raw, r->svc.raw, r->svc.raw_len);
        empty_log_attrs += r->log_attrs == 0;
        /* ids */
        assert_true(r->flags == 0 || r->flags == 1);
        if (r->trace.raw_len) {
            assert_true(valid_hex(r->trace, 32));
            assert_true(valid_hex(r->span, 16));
            assert_int_equal(r->flags, 1);
            traced_rows++;
            trace_ent *e =
                trace_get(traces, parse_hex64(r->trace.raw), parse_hex64(r->trace.raw + 16));
            int svc_id = strset_add(services, r->svc.raw, r->svc.raw_len, "", 0);
            services->count[svc_id]--; /* lookup only */
            if (!e->rows) {
                distinct_traces++;
                e->first_row = i;
                e->svc = (int16_t)svc_id;
            } else if (e->svc != svc_id) {
                e->multi_svc = 1;
            }
            e->rows++;
            e->last_row = i;
        } else {
            assert_int_equal(r->span.raw_len, 0);
            assert_int_equal(r->flags, 0);
        }
        body_stats(st, r->body, r->body_len);
    }
    assert_int_equal(bad_rows, 0);
    assert_int_equal(st->bad_charg, 0);
    assert_int_equal(st->bad_cche, 0);

    uint64_t multi_row = 0, multi_svc = 0, max_spread = 0;
    for (uint32_t i = 0; i < TRACE_SLOTS; i++) {
        if (!traces[i].used)
            continue;
        if (traces[i].rows > 1) {
            multi_row++;
            multi_svc += traces[i].multi_svc;
        }
        uint64_t spread = traces[i].last_row - traces[i].first_row;
        if (spread > max_spread)
            max_spread = spread;
    }

    double scale = 1e6 / (double)st->rows;
    int ok = 1;
    printf("Body document frequencies per 1M rows (tolerance 10%%):\n");
    for (int w = 0; w < NWORDS; w++)
        if (word_target[w] > 0)
            ok &= check(words[w], (double)st->df[w] * scale, word_target[w], 0.10);
    ok &= check("error OR failed", (double)st->err_or_failed * scale, 137e3, 0.10);
    ok &= check("failed AND order", (double)st->failed_and_order * scale, 62e3, 0.10);
    ok &= check(">= 2 of error,failed,charge,cache", (double)st->two_of_four * scale, 93e3, 0.10);
    ok &= check("phrase \"failed to place order\"", (double)st->phrase_place * scale, 31e3, 0.10);
    ok &= check("words starting with ord", (double)st->prefix_ord * scale, 69e3, 0.10);
    ok &= check("words starting with conn", (double)st->prefix_conn * scale, 30e3, 0.10);
    ok &= check("words ending in tion", (double)st->suffix_tion * scale, 113e3, 0.10);
    ok &= check("words containing nnec", (double)st->contains_nnec * scale, 30e3, 0.10);
    ok &= check("error AND NOT cache", (double)st->error_not_cache * scale, 51e3, 0.10);
    ok &= check("phrase \"post to email service expected 200 got 500\"",
                (double)st->phrase_email * scale, 1.2e3, 0.10);
    printf("  %-44s %10llu  (small, non-empty)\n", "failed AND charge AND card AND cache",
           (unsigned long long)st->four_way);
    printf("  %-44s %10llu  (must equal the phrase)\n", "docs with \"place order\"",
           (unsigned long long)st->bigram_place_order);
    assert_int_equal(st->bigram_place_order, st->phrase_place);
    assert_true(st->four_way > 0 && st->four_way * scale < 2000);

    printf("Rows:\n");
    ok &= check("cart rows", (double)st->cart * scale, 417e3, 0.10);
    ok &= check("SeverityNumber >= 13", (double)st->sev_ge13 * scale, 83e3, 0.10);
    ok &= check("bytes per row", (double)st->bytes / (double)st->rows, 690, 0.10);
    ok &= check("rows per trace", (double)traced_rows / (double)distinct_traces, 8, 0.15);
    ok &= check("span of 1M rows in ms", (double)(last_ts - first_ts) * scale / 1e6, 1800, 0.10);
    printf(
        "  distinct services %d, severities %d, (severity, scope) pairs %d, schema url pairs %d, "
        "scope versions %d\n",
        services->n, sevs->n, pairs->n, urls->n, versions->n);
    printf("  traced rows %llu, traces %llu, multi-row traces across services %.0f%%, widest "
           "trace %llu rows\n",
           (unsigned long long)traced_rows, (unsigned long long)distinct_traces,
           100.0 * (double)multi_svc / (double)multi_row, (unsigned long long)max_spread);
    printf("  rows with \\\" %llu, with control escapes %llu, non-ASCII body bytes %llu\n",
           (unsigned long long)st->escaped_quote, (unsigned long long)st->escaped_ctrl,
           (unsigned long long)st->non_ascii);
    assert_true(ok);
    assert_int_equal(services->n, 17);
    assert_int_equal(sevs->n, 5);
    assert_int_equal(pairs->n, 7);
    assert_false(services->overflow || pairs->overflow || urls->overflow || versions->overflow);
    assert_true(urls->n <= 4);
    assert_true(versions->n <= 4);
    assert_true(traced_rows < st->rows);                      /* some rows have no trace */
    assert_true((double)multi_svc > 0.5 * (double)multi_row); /* traces cross services */
    assert_true(max_spread < 4 * GEN_CHUNK_ROWS / 16);        /* a trace's rows are close */
    assert_true(first_ts >= GEN_BASE_NS && first_ts < GEN_BASE_NS + 1000000);
    assert_true(st->escaped_quote > 0 && st->escaped_ctrl > 0 && st->non_ascii > 0);
    assert_true(empty_log_attrs < st->rows);

    free(r);
    free(services);
    free(pairs);
    free(sevs);
    free(urls);
    free(versions);
    free(traces);
    free(st);
    qr_buf_free(&b);
    gen_free(g);
}

/* ---------- determinism ---------- */

/* XXH3 of rows [from, from+n) of a generator already positioned at `from`. */
static uint64_t hash_rows(gen_ctx *g, uint64_t n)
{
    XXH3_state_t *h = XXH3_createState();
    assert_non_null(h);
    XXH3_64bits_reset(h);
    qr_buf b;
    qr_buf_init(&b);
    for (uint64_t i = 0; i < n; i++) {
        qr_buf_clear(&b);
        gen_row(g, &b);
        assert_false(b.oom);
        XXH3_64bits_update(h, b.p, b.len);
    }
    uint64_t d = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    qr_buf_free(&b);
    return d;
}

static uint64_t hash_of(uint64_t seed, uint64_t first, uint64_t n)
{
    gen_ctx *g = gen_new(seed, first);
    assert_non_null(g);
    assert_int_equal(gen_next_row(g), first);
    uint64_t d = hash_rows(g, n);
    gen_free(g);
    return d;
}

static void test_same_seed_same_bytes(void **state)
{
    (void)state;
    uint64_t a = hash_of(7, 0, 20000);
    assert_int_equal(a, hash_of(7, 0, 20000));
    assert_int_not_equal(a, hash_of(8, 0, 20000));
    assert_int_not_equal(hash_of(7, 0, 100), hash_of(7, 100, 100));
}

static void test_start_midstream_matches_tail(void **state)
{
    (void)state;
    /* windows [first, first + n) of the stream from row 0; 200000 is mid-chunk */
    static const struct {
        uint64_t first, n;
    } win[] = {
        {(uint64_t)GEN_CHUNK_ROWS - 1, 3}, /* across the first chunk boundary */
        {(uint64_t)3 * GEN_CHUNK_ROWS, 1000},
        {200000, 20000},
    };
    enum { NWIN = sizeof win / sizeof win[0] };
    XXH3_state_t *h[NWIN];
    for (int k = 0; k < NWIN; k++) {
        h[k] = XXH3_createState();
        assert_non_null(h[k]);
        XXH3_64bits_reset(h[k]);
    }
    gen_ctx *g = gen_new(SEED, 0);
    assert_non_null(g);
    qr_buf b;
    qr_buf_init(&b);
    for (uint64_t i = 0; i < 220000; i++) {
        qr_buf_clear(&b);
        gen_row(g, &b);
        for (int k = 0; k < NWIN; k++)
            if (i >= win[k].first && i < win[k].first + win[k].n)
                XXH3_64bits_update(h[k], b.p, b.len);
    }
    qr_buf_free(&b);
    gen_free(g);
    for (int k = 0; k < NWIN; k++) {
        assert_int_equal(hash_of(SEED, win[k].first, win[k].n), XXH3_64bits_digest(h[k]));
        XXH3_freeState(h[k]);
    }
    /* repositioning an existing generator with gen_seek, backwards and forwards */
    gen_ctx *a = gen_new(SEED, GEN_CHUNK_ROWS - 1);
    assert_non_null(a);
    uint64_t ha = hash_rows(a, 3);
    gen_seek(a, 5);
    gen_seek(a, GEN_CHUNK_ROWS - 1);
    assert_int_equal(gen_next_row(a), GEN_CHUNK_ROWS - 1);
    assert_int_equal(hash_rows(a, 3), ha);
    gen_free(a);
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
    uint64_t d = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    return d;
}

static void test_threads_write_identical_bytes(void **state)
{
    (void)state;
    const uint64_t rows =
        (uint64_t)2 * GEN_CHUNK_ROWS + 123; /* odd chunk count, partial last chunk */
    uint64_t h[3], len[3];
    for (int t = 1; t <= 3; t++) {
        FILE *f = tmpfile();
        assert_non_null(f);
        qr_err e;
        assert_int_equal(gen_write_ndjson(fileno(f), rows, SEED, t, &e), 0);
        h[t - 1] = hash_fd(fileno(f), &len[t - 1]);
        fclose(f);
    }
    assert_int_equal(h[0], h[1]);
    assert_int_equal(h[0], h[2]);
    assert_int_equal(len[0], len[1]);
    assert_int_equal(h[0], hash_of(SEED, 0, rows));

    /* zero rows writes nothing; bad thread counts and bad fds are reported */
    FILE *f = tmpfile();
    assert_non_null(f);
    qr_err e;
    assert_int_equal(gen_write_ndjson(fileno(f), 0, SEED, 2, &e), 0);
    uint64_t n0;
    hash_fd(fileno(f), &n0);
    assert_int_equal(n0, 0);
    fclose(f);
    assert_int_equal(gen_write_ndjson(1, 10, SEED, 0, &e), -1);
    assert_string_equal(e.code, QR_E_ARGS);
    int p[2];
    assert_int_equal(pipe(p), 0);
    close(p[1]);
    assert_int_equal(gen_write_ndjson(p[1], (uint64_t)3 * GEN_CHUNK_ROWS, SEED, 2, &e), -1);
    assert_string_equal(e.code, QR_E_IO);
    close(p[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_start_midstream_matches_tail),
        cmocka_unit_test(test_threads_write_identical_bytes),
        cmocka_unit_test(test_corpus_statistics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
