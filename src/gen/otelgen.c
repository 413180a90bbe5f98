/* otelgen.c - the deterministic OpenTelemetry log generator (see otelgen.h).
 *
 * Start-up (once per process, pthread_once): the templates of bodies.c are
 * compiled into op lists (literal runs already JSON-escaped, and {var}
 * placeholders), every (service, pod) gets its precomputed JSON tail from
 * ResourceSchemaUrl to "LogAttributes":, and an integer alias table samples
 * templates by weight. These tables are immutable afterwards and shared.
 *
 * Per row (hot path, no snprintf, no malloc): pick a template, maybe a trace
 * from a pool of GEN_TRACE_SLOTS open traces, then memcpy precomputed pieces
 * and format ids/numbers with table lookups straight into the output buffer.
 * A chunk (GEN_CHUNK_ROWS rows) resets the PRNG from (seed, chunk) and empties
 * the trace pool, so rows depend only on (seed, row). The PRNG, the alias
 * sampler, the emitters and the parallel writer are genutil.h's.
 */
#include "gen/otelgen.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/bodies.h"
#include "gen/genutil.h"
#include "util/timefmt.h"

_Static_assert(GEN_CHUNK_ROWS == GU_CHUNK_ROWS, "one chunk size for every dataset");

#define GEN_TRACE_SLOTS 16
#define GEN_USERS 50000 /* distinct user ids per seed */
/* Order/request/transaction uuids come from a per-seed pool: ~173k body
 * uuids per 1M rows saturate it near 1B rows, giving the ~18M distinct body
 * terms of DATASET.md (two near-unique hex parts per uuid). */
#define GEN_IDS 8800000
#define MAX_TMPL 128
#define MAX_OPS 8192
#define MAX_PODS 4
#define POOL_SIZE ((size_t)256 * 1024)
#define VAR_MAX 160 /* longest text a {var} can produce */

/* ---------- placeholders ---------- */

enum gen_var {
    V_UID,
    V_PID,
    V_PIDR,
    V_QTY,
    V_OID,
    V_AMT,
    V_AMT2,
    V_CUR,
    V_CUR2,
    V_EMAIL,
    V_CARD4,
    V_CAT,
    V_CITY,
    V_ZIP,
    V_UUID,
    V_H8,
    V_H16,
    V_N,
    V_MS,
    V_IP,
    V_D,
    V_STATUS,
    V_PROUTE,
    V_GROUTE,
    V_IMG,
    V_UA,
    V_MM,
    V_YY,
    V_ISOTS,
    V_COUNT
};

/* Row variables keep one value per row (body and attributes agree);
 * fresh ones draw a new value at each use. */
static const struct {
    const char *name;
    int fresh;
} var_defs[V_COUNT] = {
    [V_UID] = {"uid", 0},       [V_PID] = {"pid", 0},       [V_PIDR] = {"pidr", 1},
    [V_QTY] = {"qty", 0},       [V_OID] = {"oid", 0},       [V_AMT] = {"amt", 0},
    [V_AMT2] = {"amt2", 1},     [V_CUR] = {"cur", 0},       [V_CUR2] = {"cur2", 0},
    [V_EMAIL] = {"email", 0},   [V_CARD4] = {"card4", 0},   [V_CAT] = {"cat", 0},
    [V_CITY] = {"city", 0},     [V_ZIP] = {"zip", 0},       [V_UUID] = {"uuid", 1},
    [V_H8] = {"h8", 1},         [V_H16] = {"h16", 1},       [V_N] = {"n", 1},
    [V_MS] = {"ms", 0},         [V_IP] = {"ip", 1},         [V_D] = {"d", 1},
    [V_STATUS] = {"status", 0}, [V_PROUTE] = {"proute", 0}, [V_GROUTE] = {"groute", 0},
    [V_IMG] = {"img", 0},       [V_UA] = {"ua", 0},         [V_MM] = {"mm", 0},
    [V_YY] = {"yy", 0},         [V_ISOTS] = {"isots", 0},
};

typedef struct str {
    const char *s;
    unsigned n;
} str;
#define S(x)                                                                                       \
    {                                                                                              \
        x, sizeof(x) - 1                                                                           \
    }

static const str products[] = {
    S("OLJCESPC7Z"), S("66VCHSJNUP"), S("1YMWWN1N4O"), S("L9ECAV7KIM"), S("2ZYFJ3GM2N"),
    S("0PUK6V6EV0"), S("LS4PSXUNUM"), S("9SIQT8TOJO"), S("6E92ZMYYFZ"), S("HQTGWGPNH4"),
};
static const str images[] = {
    S("NationalParkFoundationExplorascope"),
    S("StarsenseExplorer"),
    S("EclipsmartTravelRefractorTelescope"),
    S("LensCleaningKit"),
    S("RedFlashlight"),
    S("RoofBinoculars"),
    S("OpticalTubeAssembly"),
    S("SolarFilter"),
    S("SolarSystemColorImager"),
    S("TheCometBook"),
};
static const str currencies[] = {S("USD"), S("EUR"), S("CAD"), S("JPY"),
                                 S("GBP"), S("TRY"), S("CHF"), S("INR")};
static const str categories[] = {S("binoculars"), S("telescopes"), S("accessories"),
                                 S("assembly"),   S("travel"),     S("books")};
static const str cities[] = {S("東京"),      S("München"), S("São Paulo"),     S("Zürich"),
                             S("Montréal"),  S("Kraków"),  S("Mountain View"), S("Seattle"),
                             S("Reykjavík"), S("Malmö"),   S("Ōsaka"),         S("Austin")};
static const str first_names[] = {S("alice"),  S("bob"),   S("carol"),  S("dave"),
                                  S("erin"),   S("frank"), S("grace"),  S("heidi"),
                                  S("ivan"),   S("judy"),  S("olivia"), S("peggy"),
                                  S("rupert"), S("sybil"), S("trent"),  S("walter")};
static const str last_names[] = {S("smith"),  S("garcia"),   S("müller"), S("tanaka"),
                                 S("nguyen"), S("kowalski"), S("rossi"),  S("dubois")};
static const str post_routes[] = {S("/api/cart"), S("/api/checkout"), S("/otlp-http/v1/traces")};
static const str get_routes[] = {
    S("/"),
    S("/api/products"),
    S("/api/products/OLJCESPC7Z"),
    S("/api/products/66VCHSJNUP"),
    S("/api/products/L9ECAV7KIM"),
    S("/api/cart"),
    S("/api/recommendations?productIds=2ZYFJ3GM2N"),
    S("/api/data?contextKeys=telescopes"),
    S("/api/currency"),
    S("/api/shipping?itemList=1&currencyCode=USD"),
    S("/images/products/SolarFilter.jpg"),
    S("/_next/static/chunks/main-app.js"),
};
static const str user_agents[] = {
    S("python-requests/2.31.0"),
    S("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
      "Chrome/128.0.0.0 Safari/537.36"),
    S("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) Gecko/20100101 Firefox/130.0"),
    S("Locust/2.31.5"),
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---------- compiled tables ---------- */

typedef struct op {
    const char *lit; /* literal text (already JSON-escaped where needed) or NULL */
    uint16_t len;
    uint8_t var;
} op;

typedef struct ctmpl {
    const char *prefix; /* ,"SeverityText":..,"Body":" */
    unsigned prefix_len;
    const op *body, *attrs;
    unsigned nbody, nattrs;
    uint8_t svc;
} ctmpl;

typedef struct ctables {
    ctmpl tmpl[MAX_TMPL];
    unsigned ntmpl;
    str tail[32][MAX_PODS]; /* per service and pod */
    unsigned pods[32];
    unsigned trace_pct[32];
    const char *svc_name[32];
    /* alias sampler over templates */
    gu_alias alias[MAX_TMPL];
    op ops[MAX_OPS];
    unsigned nops;
    char pool[POOL_SIZE];
    size_t pool_len;
} ctables;

static ctables T;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_die(const char *why)
{
    /* invariant check: the static template tables are broken */
    fprintf(stderr, "otelgen: bad template tables: %s\n", why);
    abort();
}

static char *pool_alloc(size_t n)
{
    if (T.pool_len + n > POOL_SIZE)
        tables_die("string pool full");
    char *p = T.pool + T.pool_len;
    T.pool_len += n;
    return p;
}

static const char *pool_str(const char *s, size_t n)
{
    char *p = pool_alloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

static int var_lookup(const char *name, size_t n)
{
    for (int v = 0; v < V_COUNT; v++)
        if (strlen(var_defs[v].name) == n && memcmp(var_defs[v].name, name, n) == 0)
            return v;
    return -1;
}

/* Length of a placeholder "{name}" at s, or 0 when s is literal text. */
static size_t placeholder_len(const char *s)
{
    if (s[0] != '{')
        return 0;
    size_t i = 1;
    while ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9'))
        i++;
    return (i > 1 && s[i] == '}') ? i + 1 : 0;
}

static void add_op(const char *lit, size_t len, int var)
{
    if (T.nops == MAX_OPS)
        tables_die("too many ops");
    if (len > 0xffff)
        tables_die("literal too long");
    T.ops[T.nops++] = (op){lit, (uint16_t)len, (uint8_t)var};
}

/* Compile template text into ops; escape literal runs when `escape`.
 * Returns the first op; *nops gets the count, *maxlen an upper bound. */
static const op *compile(const char *text, int escape, unsigned *nops, size_t *maxlen)
{
    unsigned first = T.nops;
    size_t bound = 0;
    const char *s = text;
    while (*s) {
        const char *run = s;
        while (*s && !placeholder_len(s))
            s++;
        if (s > run) {
            size_t n = (size_t)(s - run);
            if (escape) {
                char *tmp = malloc(6 * n);
                if (!tmp)
                    tables_die("out of memory");
                size_t m = gu_json_escape(run, n, tmp);
                add_op(pool_str(tmp, m), m, 0);
                free(tmp);
                bound += m;
            } else {
                add_op(run, n, 0);
                bound += n;
            }
        }
        size_t pl = placeholder_len(s);
        if (pl) {
            int v = var_lookup(s + 1, pl - 2);
            if (v < 0)
                tables_die(text);
            add_op(NULL, 0, v);
            bound += VAR_MAX;
            s += pl;
        }
    }
    *nops = T.nops - first;
    *maxlen = bound;
    return T.ops + first;
}

/* Fill a resource-attribute template for one pod (start-up only). */
static str build_tail(const gen_svc_def *sd, unsigned svc, unsigned pod)
{
    static const char k8s[] = "bcdfghjklmnpqrstvwxz2456789";
    uint64_t h = gu_mix64(0x51ab5eedULL ^ ((uint64_t)svc << 8) ^ pod);
    char podname[96], node[64], cid[17], poduid[37], ppid[16];
    int n = snprintf(podname, sizeof podname, "%s-", sd->name);
    for (int i = 0; i < 10; i++, h /= 27)
        podname[n++] = k8s[h % 27];
    podname[n++] = '-';
    h = gu_mix64(h ^ 1);
    for (int i = 0; i < 5; i++, h /= 27)
        podname[n++] = k8s[h % 27];
    podname[n] = 0;
    h = gu_mix64(h ^ 2);
    snprintf(node, sizeof node, "aks-nodepool1-%08u-vmss%06u", (unsigned)(h % 100000000u),
             (unsigned)(h >> 40) % 6);
    h = gu_mix64(h ^ 4);
    snprintf(cid, sizeof cid, "%012llx", (unsigned long long)(h >> 16)); /* short docker id */
    h = gu_mix64(h ^ 3);
    uint64_t h2 = gu_mix64(h);
    snprintf(poduid, sizeof poduid, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)h,
             (unsigned)(h >> 32) & 0xffff, (unsigned)(h >> 48) & 0xfff,
             (unsigned)(h2 & 0x3fff) | 0x8000, (unsigned long long)(h2 >> 16));
    snprintf(ppid, sizeof ppid, "%u", 1 + (unsigned)(h2 % 97));

    char ra[2048];
    size_t o = 0;
    for (const char *s = sd->res_attrs; *s;) {
        size_t pl = placeholder_len(s);
        const char *val = NULL;
        if (pl) {
            if (!strncmp(s, "{svc}", pl))
                val = sd->name;
            else if (!strncmp(s, "{pod}", pl))
                val = podname;
            else if (!strncmp(s, "{node}", pl))
                val = node;
            else if (!strncmp(s, "{cid}", pl))
                val = cid;
            else if (!strncmp(s, "{poduid}", pl))
                val = poduid;
            else if (!strncmp(s, "{ppid}", pl))
                val = ppid;
            else
                tables_die(sd->res_attrs);
            size_t vl = strlen(val);
            if (o + vl >= sizeof ra)
                tables_die("resource attributes too long");
            memcpy(ra + o, val, vl);
            o += vl;
            s += pl;
        } else {
            if (o + 1 >= sizeof ra)
                tables_die("resource attributes too long");
            ra[o++] = *s++;
        }
    }
    ra[o] = 0;

    char tail[4096];
    char e1[512], e2[512], e3[512], e4[512];
    e1[gu_json_escape(sd->res_schema_url, strlen(sd->res_schema_url), e1)] = 0;
    e2[gu_json_escape(sd->scope_schema_url, strlen(sd->scope_schema_url), e2)] = 0;
    e3[gu_json_escape(sd->scope_name, strlen(sd->scope_name), e3)] = 0;
    e4[gu_json_escape(sd->scope_version, strlen(sd->scope_version), e4)] = 0;
    int tn = snprintf(tail, sizeof tail,
                      "\",\"ResourceSchemaUrl\":\"%s\",\"ResourceAttributes\":%s,"
                      "\"ScopeSchemaUrl\":\"%s\",\"ScopeName\":\"%s\",\"ScopeVersion\":\"%s\","
                      "\"ScopeAttributes\":%s,\"LogAttributes\":",
                      e1, ra, e2, e3, e4, sd->scope_attrs);
    if (tn < 0 || (size_t)tn >= sizeof tail)
        tables_die("tail too long");
    return (str){pool_str(tail, (size_t)tn), (unsigned)tn};
}

/* Vose's alias method in integers: exact and platform-independent. */
static void build_alias(void)
{
    uint64_t w[MAX_TMPL];
    for (unsigned i = 0; i < T.ntmpl; i++)
        w[i] = gen_templates[i].weight;
    if (gu_alias_build(w, T.ntmpl, T.alias) != 0)
        tables_die("zero total weight");
}

static void build_tables(void)
{
    if (gen_ntemplates > MAX_TMPL || gen_nservices > 32)
        tables_die("too many templates or services");
    size_t max_tail = 0;
    for (unsigned s = 0; s < gen_nservices; s++) {
        const gen_svc_def *sd = &gen_services[s];
        if (sd->pods < 1 || sd->pods > MAX_PODS)
            tables_die("pods out of range");
        T.pods[s] = sd->pods;
        T.trace_pct[s] = sd->trace_pct;
        T.svc_name[s] = sd->name;
        for (unsigned k = 0; k < sd->pods; k++) {
            T.tail[s][k] = build_tail(sd, s, k);
            if (T.tail[s][k].n > max_tail)
                max_tail = T.tail[s][k].n;
        }
    }
    size_t max_row = 0;
    for (unsigned i = 0; i < gen_ntemplates; i++) {
        const gen_tmpl_def *td = &gen_templates[i];
        ctmpl *ct = &T.tmpl[i];
        if (td->svc >= gen_nservices || td->sev >= GEN_SEV_COUNT)
            tables_die("bad template service or severity");
        char pre[256];
        int n =
            snprintf(pre, sizeof pre,
                     ",\"SeverityText\":\"%s\",\"SeverityNumber\":%d,\"ServiceName\":\"%s\","
                     "\"Body\":\"",
                     gen_sevs[td->sev].text, gen_sevs[td->sev].number, gen_services[td->svc].name);
        if (n < 0 || (size_t)n >= sizeof pre)
            tables_die("prefix too long");
        ct->prefix = pool_str(pre, (size_t)n);
        ct->prefix_len = (unsigned)n;
        ct->svc = td->svc;
        size_t bb, ab;
        ct->body = compile(td->body, 1, &ct->nbody, &bb);
        const char *attrs = td->log_attrs ? td->log_attrs : gen_services[td->svc].log_attrs;
        ct->attrs = compile(attrs, 0, &ct->nattrs, &ab);
        size_t row = 14 + 30 + 13 + 32 + 12 + 16 + 15 + 1 + ct->prefix_len + bb + max_tail + ab + 2;
        if (row > max_row)
            max_row = row;
    }
    T.ntmpl = (unsigned)gen_ntemplates;
    if (max_row > GEN_ROW_MAX)
        tables_die("GEN_ROW_MAX too small for the templates");
    build_alias();
}

/* ---------- the generator ---------- */

typedef struct trace_slot {
    char tid[32];
    char sid[16];
    uint32_t left;     /* rows still to emit in this trace */
    uint8_t span_svc;  /* service of the current span, 0xff none */
    uint8_t span_left; /* further rows that may reuse the span */
} trace_slot;

struct gen_ctx {
    uint64_t seed;
    uint64_t row;       /* next row */
    uint64_t chunk_end; /* first row of the next chunk */
    gu_rng rng;         /* xoshiro256** */
    uint64_t user_key, id_key;
    int64_t ts;
    trace_slot slots[GEN_TRACE_SLOTS];
    uint32_t have; /* row variables computed for this row */
    uint8_t vlen[V_COUNT];
    char vbuf[V_COUNT][VAR_MAX];
    char line[GEN_ROW_MAX]; /* used only when the output buffer cannot grow */
};

static inline uint64_t rnd(gen_ctx *g) { return gu_next(&g->rng); }

static inline uint32_t below(gen_ctx *g, uint32_t n) { return gu_below(&g->rng, n); }

static void chunk_reset(gen_ctx *g, uint64_t chunk)
{
    gu_rng_seed_chunk(&g->rng, g->seed, chunk);
    for (int i = 0; i < GEN_TRACE_SLOTS; i++) {
        g->slots[i].left = 0;
        g->slots[i].span_svc = 0xff;
    }
    g->row = chunk * GEN_CHUNK_ROWS;
    g->chunk_end = g->row + GEN_CHUNK_ROWS;
}

static inline char *put_str(char *p, str s)
{
    memcpy(p, s.s, s.n);
    return p + s.n;
}

static char *put_uuid(char *p, uint64_t a, uint64_t b)
{
    p = gu_put_hex(p, a >> 32, 8);
    *p++ = '-';
    p = gu_put_hex(p, a >> 16, 4);
    *p++ = '-';
    p = gu_put_hex(p, a, 4);
    *p++ = '-';
    p = gu_put_hex(p, b >> 48, 4);
    *p++ = '-';
    return gu_put_hex(p, b, 12);
}

static char *put_amount(gen_ctx *g, char *p)
{
    uint32_t cents = below(g, 250000) + 99;
    p = gu_put_uint(p, cents / 100);
    *p++ = '.';
    *p++ = (char)('0' + cents / 10 % 10);
    *p++ = (char)('0' + cents % 10);
    return p;
}

static char *put_status(gen_ctx *g, char *p)
{
    uint32_t r = below(g, 100);
    if (r < 92)
        return GU_PUT(p, "200");
    if (r < 95)
        return GU_PUT(p, "304");
    if (r < 97)
        return GU_PUT(p, "404");
    if (r < 99)
        return GU_PUT(p, "500");
    return GU_PUT(p, "503");
}

/* Write a fresh value of variable v at p. */
static char *gen_value(gen_ctx *g, int v, char *p)
{
    switch (v) {
    case V_UID: {
        uint64_t u = below(g, GEN_USERS);
        uint64_t a = gu_mix64(g->user_key ^ u), b = gu_mix64(a ^ g->user_key);
        return put_uuid(p, a, b);
    }
    case V_PID:
    case V_PIDR: return put_str(p, products[below(g, COUNT(products))]);
    case V_QTY: return gu_put_uint(p, 1 + below(g, 10));
    case V_OID:
    case V_UUID: {
        uint64_t a = gu_mix64(g->id_key ^ below(g, GEN_IDS));
        return put_uuid(p, a, gu_mix64(a ^ g->id_key));
    }
    case V_AMT:
    case V_AMT2: return put_amount(g, p);
    case V_CUR:
    case V_CUR2: return put_str(p, currencies[below(g, COUNT(currencies))]);
    case V_EMAIL: {
        uint32_t r = (uint32_t)(rnd(g) >> 16);
        p = put_str(p, first_names[r % COUNT(first_names)]);
        *p++ = '.';
        p = put_str(p, last_names[(r >> 8) % COUNT(last_names)]);
        p = gu_put_uint(p, (r >> 16) % 1000);
        return GU_PUT(p, "@example.com");
    }
    case V_CARD4: return gu_put_uint(p, 1000 + below(g, 9000));
    case V_CAT: return put_str(p, categories[below(g, COUNT(categories))]);
    case V_CITY: return put_str(p, cities[below(g, COUNT(cities))]);
    case V_ZIP: return gu_put_uint(p, 10000 + below(g, 90000));
    case V_H8: return gu_put_hex(p, rnd(g), 8);
    case V_H16: return gu_put_hex(p, rnd(g), 16);
    case V_N: return gu_put_uint(p, below(g, 100000));
    case V_MS: return gu_put_uint(p, 1 + below(g, 2999));
    case V_IP: {
        uint64_t r = rnd(g);
        p = GU_PUT(p, "10.");
        p = gu_put_uint(p, (r >> 8) & 3);
        *p++ = '.';
        p = gu_put_uint(p, (r >> 16) & 255);
        *p++ = '.';
        return gu_put_uint(p, 1 + ((r >> 24) & 255) % 254);
    }
    case V_D: *p++ = (char)('0' + below(g, 10)); return p;
    case V_STATUS: return put_status(g, p);
    case V_PROUTE: return put_str(p, post_routes[below(g, COUNT(post_routes))]);
    case V_GROUTE: return put_str(p, get_routes[below(g, COUNT(get_routes))]);
    case V_IMG: return put_str(p, images[below(g, COUNT(images))]);
    case V_UA: return put_str(p, user_agents[below(g, COUNT(user_agents))]);
    case V_MM: {
        uint32_t m = 1 + below(g, 12);
        *p++ = (char)('0' + m / 10);
        *p++ = (char)('0' + m % 10);
        return p;
    }
    case V_YY: return gu_put_uint(p, 26 + below(g, 6));
    case V_ISOTS: { /* the row time in milliseconds, as Envoy prints it */
        char t[QR_TIME_TEXT_LEN];
        qr_time_format(g->ts, t);
        p = gu_put_lit(p, t, 23);
        *p++ = 'Z';
        return p;
    }
    }
    return p;
}

static inline char *put_var(gen_ctx *g, int v, char *p)
{
    if (var_defs[v].fresh)
        return gen_value(g, v, p);
    if (!(g->have & (1u << v))) {
        char *e = gen_value(g, v, g->vbuf[v]);
        g->vlen[v] = (uint8_t)(e - g->vbuf[v]);
        g->have |= 1u << v;
    }
    return gu_put_lit(p, g->vbuf[v], g->vlen[v]);
}

static inline char *put_ops(gen_ctx *g, const op *o, unsigned n, char *p)
{
    for (unsigned i = 0; i < n; i++)
        p = o[i].lit ? gu_put_lit(p, o[i].lit, o[i].len) : put_var(g, o[i].var, p);
    return p;
}

static void new_trace(gen_ctx *g, trace_slot *t)
{
    gu_put_hex(t->tid, rnd(g), 16);
    gu_put_hex(t->tid + 16, rnd(g), 16);
    t->left = 1 + below(g, 15); /* 8 rows on average */
    t->span_svc = 0xff;
}

/* Generate the current row into p (>= GEN_ROW_MAX bytes); returns its end. */
static char *render_row(gen_ctx *g, char *p)
{
    uint64_t r = rnd(g);
    uint32_t ti = (uint32_t)(((r >> 32) * T.ntmpl) >> 32);
    if ((uint32_t)r >= T.alias[ti].thr)
        ti = T.alias[ti].to;
    const ctmpl *ct = &T.tmpl[ti];
    unsigned svc = ct->svc;
    g->have = 0;
    g->ts = GEN_BASE_NS + (int64_t)g->row * GEN_NS_PER_ROW + below(g, GEN_NS_PER_ROW);

    p = GU_PUT(p, "{\"Timestamp\":\"");
    qr_time_format(g->ts, p);
    p += QR_TIME_TEXT_LEN;
    p = GU_PUT(p, "\",\"TraceId\":\"");
    int traced = below(g, 100) < T.trace_pct[svc];
    if (traced) {
        trace_slot *t = &g->slots[below(g, GEN_TRACE_SLOTS)];
        if (!t->left)
            new_trace(g, t);
        t->left--;
        if (t->span_svc != svc || !t->span_left) {
            gu_put_hex(t->sid, rnd(g), 16);
            t->span_svc = (uint8_t)svc;
            t->span_left = (uint8_t)below(g, 3);
        } else {
            t->span_left--;
        }
        p = gu_put_lit(p, t->tid, 32);
        p = GU_PUT(p, "\",\"SpanId\":\"");
        p = gu_put_lit(p, t->sid, 16);
        p = GU_PUT(p, "\",\"TraceFlags\":1");
    } else {
        p = GU_PUT(p, "\",\"SpanId\":\"\",\"TraceFlags\":0");
    }
    p = gu_put_lit(p, ct->prefix, ct->prefix_len);
    p = put_ops(g, ct->body, ct->nbody, p);
    p = put_str(p, T.tail[svc][T.pods[svc] > 1 ? below(g, T.pods[svc]) : 0]);
    p = put_ops(g, ct->attrs, ct->nattrs, p);
    p = GU_PUT(p, "}\n");
    return p;
}

void gen_row(gen_ctx *g, qr_buf *b)
{
    if (g->row == g->chunk_end)
        chunk_reset(g, g->row / GEN_CHUNK_ROWS);
    unsigned char *dst = qr_buf_reserve(b, GEN_ROW_MAX);
    char *start = dst ? (char *)dst : g->line;
    char *end = render_row(g, start);
    g->row++;
    if (dst)
        b->len += (size_t)(end - start);
}

void gen_seek(gen_ctx *g, uint64_t row)
{
    chunk_reset(g, row / GEN_CHUNK_ROWS);
    while (g->row < row) {
        render_row(g, g->line);
        g->row++;
    }
}

uint64_t gen_next_row(const gen_ctx *g) { return g->row; }

gen_ctx *gen_new(uint64_t seed, uint64_t first_row)
{
    pthread_once(&tables_once, build_tables);
    gen_ctx *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->seed = seed;
    g->user_key = gu_mix64(seed ^ 0x75736572ULL);
    g->id_key = gu_mix64(seed ^ 0x6f72646572ULL);
    gen_seek(g, first_row);
    return g;
}

void gen_free(gen_ctx *g) { free(g); }

/* ---------- streaming to a file descriptor ---------- */

static void *otel_open(uint64_t seed) { return gen_new(seed, 0); }

static void otel_chunk(void *gen, uint64_t first, uint64_t last, qr_buf *b)
{
    gen_ctx *g = gen;
    gen_seek(g, first);
    for (uint64_t r = first; r < last; r++)
        gen_row(g, b);
}

static void otel_close(void *gen) { gen_free(gen); }

static const gu_dataset otel_dataset = {"otel", GEN_CHUNK_ROWS, otel_open, otel_chunk, otel_close};

int gen_write_ndjson(int fd, uint64_t rows, uint64_t seed, int threads, qr_err *e)
{
    return gu_write_ndjson(fd, rows, seed, threads, &otel_dataset, e);
}
