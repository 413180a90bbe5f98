/* httplogs.c - the http_logs corpus generator (see httplogs.h).
 *
 * Start-up (once per process, pthread_once): a catalog of ~2,400 distinct
 * paths of a World Cup 98 style site (pages under /english and /french,
 * images, team, news, history, competition and venue pages, cgi-bin scripts)
 * with a fixed byte size each, ranked by a Zipf-like popularity (weight
 * 1/(rank + 2)), and a second Zipf table over ~10,000 client ranks. Both are
 * integer alias tables, identical for every seed; a seed changes which
 * address each client rank has and every draw.
 *
 * Per row (no snprintf, no malloc): draw client, method, path, protocol and
 * status, derive the size, memcpy the pieces. The clock of a chunk starts at
 * the chunk's first second and moves forward by 0..487 ms per row.
 */
#include "gen/httplogs.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "gen/genutil.h"

#define MAX_PATHS    4096
#define PATH_POOL    (MAX_PATHS * 64)
#define PATH_MAX_LEN 80 /* longest catalog path, dynamic suffix included */
#define NCLIENTS     10000
#define CLIENT_IDS   2770000u /* the 1998 logs number their clients up to ~2.77M */
#define STEP_MS      488      /* clock step per row is uniform in [0, STEP_MS) */

/* the longest line: keys and quotes, a 10-digit second, a 15-byte address,
 * HEAD, a path, HTTP/1.x, a status and a 10-digit size */
_Static_assert(14 + 10 + 13 + 15 + 18 + PATH_MAX_LEN + 21 + 3 + 8 + 10 + 2 <= HTTPLOGS_ROW_MAX,
               "HTTPLOGS_ROW_MAX too small");

enum path_kind { K_GIF, K_JPG, K_HTML, K_CGI, K_OTHER };

typedef struct path_ent {
    uint32_t off;  /* in the pool */
    uint16_t len;  /* bytes */
    uint8_t kind;  /* enum path_kind */
    uint8_t dyn;   /* a number 0..999 is appended to each request */
    uint32_t size; /* bytes of a full 200 response */
} path_ent;

typedef struct htables {
    path_ent path[MAX_PATHS];
    uint32_t npaths;
    gu_alias paths[MAX_PATHS];
    uint32_t cgi[64]; /* the cgi-bin paths, targets of POST */
    uint32_t ncgi;
    gu_alias clients[NCLIENTS];
    char pool[PATH_POOL];
    size_t pool_len;
} htables;

static htables H;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_die(const char *why)
{
    /* invariant check: the static catalog is broken */
    fprintf(stderr, "httplogs: bad catalog: %s\n", why);
    abort();
}

/* ---------- the path catalog ---------- */

static const char *const teams[32] = {"bra", "sco", "mar", "nor", "ita", "chi", "aut", "cmr",
                                      "fra", "ksa", "den", "rsa", "esp", "nga", "par", "bul",
                                      "ned", "bel", "mex", "kor", "ger", "usa", "yug", "irn",
                                      "rom", "eng", "col", "tun", "arg", "jpn", "jam", "cro"};
static const char *const langs[2] = {"english", "french"};
static const char *const venues[10] = {"paris",    "saintdenis",  "marseille", "lyon",
                                       "lens",     "montpellier", "nantes",    "bordeaux",
                                       "toulouse", "saintetienne"};
static const char *const past_cups[15] = {"uruguay30",     "italy34",   "france38",    "brazil50",
                                          "switzerland54", "sweden58",  "chile62",     "england66",
                                          "mexico70",      "germany74", "argentina78", "spain82",
                                          "mexico86",      "italy90",   "usa94"};
static const char *const news_slugs[12] = {"tix", "fifa",  "bres", "draw", "team", "stad",
                                           "ref", "coach", "fans", "med",  "tv",   "res"};
static const char *const history_topics[6] = {"rules",   "trophy", "mascots",
                                              "posters", "balls",  "records"};

/* The most requested paths, most popular first. */
static const char *const core_paths[] = {
    "/images/space.gif",
    "/english/index.html",
    "/images/hm_bg.jpg",
    "/images/hm_nav_bar.gif",
    "/images/hm_brdl.gif",
    "/images/hm_brdr.gif",
    "/images/hm_arw.gif",
    "/english/images/nav_home_off.gif",
    "/english/images/nav_news_off.gif",
    "/english/images/nav_team_off.gif",
    "/english/images/nav_tickets_off.gif",
    "/english/images/nav_field_off.gif",
    "/english/images/nav_sitemap_off.gif",
    "/english/images/nav_hosts_off.gif",
    "/english/images/nav_store_off.gif",
    "/english/images/nav_inet_off.gif",
    "/english/images/nav_logo_sponsors.gif",
    "/images/dot_clear.gif",
    "/images/logo_cup.gif",
    "/",
    "/french/index.html",
    "/english/frntpage.htm",
    "/cgi-bin/cup98/score.pl?match=",
    "/images/home_intro.anim.gif",
    "/images/home_logo.gif",
    "/images/home_bg_stars.gif",
    "/images/home_eng_phrase.gif",
    "/images/home_fr_phrase.gif",
    "/images/home_tool.gif",
    "/english/images/hm_official.gif",
    "/english/images/news_btn_press_off.gif",
    "/english/images/space.gif",
    "/english/splash_inet.html",
    "/cgi-bin/trivia/Trivia.pl?ENG&question=",
    "/english/news/newsevent.htm",
    "/english/competition/maincompetition.htm",
    "/english/teams/teams.htm",
    "/english/venues/venues.htm",
    "/english/history/history.htm",
    "/english/tickets/tickets.htm",
    "/english/playing/playing.htm",
    "/english/sitemap.htm",
    "/french/frntpage.htm",
    "/french/images/nav_home_off.gif",
    "/french/images/nav_news_off.gif",
    "/french/news/newsevent.htm",
    "/english/help/site.html",
    "/english/member/body.html",
    "/cgi-bin/trivia/Trivia.pl?ENG",
    "/robots.txt",
};

static enum path_kind kind_of(const char *s, size_t n)
{
    if (n >= 8 && !memcmp(s, "/cgi-bin", 8))
        return K_CGI;
    if (n >= 4 && !memcmp(s + n - 4, ".gif", 4))
        return K_GIF;
    if (n >= 4 && !memcmp(s + n - 4, ".jpg", 4))
        return K_JPG;
    if ((n >= 4 && !memcmp(s + n - 4, ".htm", 4)) || (n >= 5 && !memcmp(s + n - 5, ".html", 5)) ||
        s[n - 1] == '/')
        return K_HTML;
    return K_OTHER;
}

/* A fixed byte size for catalog entry i (the same for every seed). */
static uint32_t size_of(enum path_kind k, uint32_t i)
{
    uint64_t h = gu_mix64(0x53697a65ULL + i);
    uint32_t a = (uint32_t)(h % 100), b = (uint32_t)(h >> 32);
    switch (k) {
    case K_GIF:
        return 43 + a * a + b % 400; /* 43 B .. ~10 KB, most small */
    case K_JPG:
        return 1500 + a * 350 + b % 2000;
    case K_HTML:
        return 800 + a * 280 + b % 3000;
    case K_CGI:
        return 200 + b % 1800;
    case K_OTHER:
        return 100 + b % 900;
    }
    return 0;
}

static void add_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void add_path(const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n <= 0 || n + 3 > PATH_MAX_LEN) /* room for a dynamic suffix of 3 digits */
        tables_die("path too long");
    if (H.npaths == MAX_PATHS || H.pool_len + (size_t)n > PATH_POOL)
        tables_die("catalog full");
    for (int i = 0; i < n; i++) /* JSON-safe and without spaces: no escaping at run time */
        if ((unsigned char)tmp[i] <= ' ' || tmp[i] == '"' || tmp[i] == '\\' ||
            (unsigned char)tmp[i] >= 0x80)
            tables_die(tmp);
    path_ent *e = &H.path[H.npaths];
    e->off = (uint32_t)H.pool_len;
    e->len = (uint16_t)n;
    e->dyn = tmp[n - 1] == '=';
    e->kind = (uint8_t)kind_of(tmp, (size_t)n);
    e->size = size_of((enum path_kind)e->kind, H.npaths);
    memcpy(H.pool + H.pool_len, tmp, (size_t)n);
    H.pool_len += (size_t)n;
    H.npaths++;
}

/* The long tail, in family order (shuffled into ranks afterwards). */
static void add_tail_paths(void)
{
    static const unsigned mdays[4][2] = {{4, 30}, {5, 31}, {6, 30}, {7, 26}}; /* month, last day */
    for (unsigned i = 102320; i < 102900; i++)
        add_path("/images/%u.gif", i);
    for (unsigned i = 102320; i < 102520; i++)
        add_path("/images/s%u.gif", i);
    for (unsigned i = 0; i < 100; i++)
        add_path("/images/%u.jpg", 10512 + i * 7);
    for (unsigned t = 0; t < 32; t++) {
        add_path("/images/flags/%s.gif", teams[t]);
        add_path("/english/images/team_%s.gif", teams[t]);
        for (unsigned l = 0; l < 2; l++)
            add_path("/%s/teams/teambio%u.htm", langs[l], 140 + t);
        for (unsigned p = 1; p <= 22; p++)
            add_path("/english/teams/players/%s%02u.htm", teams[t], p);
        add_path("/english/competition/results/%s.htm", teams[t]);
    }
    for (unsigned l = 0; l < 2; l++) {
        for (unsigned m = 0; m < 4; m++)
            for (unsigned d = m ? 1 : 30; d <= mdays[m][1]; d++)
                for (unsigned k = 0; k < 2; k++)
                    add_path("/%s/news/%02u%02u%s.htm", langs[l], d, mdays[m][0],
                             news_slugs[(d * 7 + m * 3 + k * 5) % 12]);
        for (unsigned c = 0; c < 15; c++)
            add_path("/%s/history/past_cups/%s.html", langs[l], past_cups[c]);
        for (unsigned t = 0; t < 6; t++)
            add_path("/%s/history/history_of/%s.html", langs[l], history_topics[t]);
        for (unsigned g = 1; g <= 64; g++)
            add_path("/%s/competition/match%02u.htm", langs[l], g);
        for (char g = 'a'; g <= 'h'; g++)
            add_path("/%s/competition/group%c.htm", langs[l], g);
        add_path("/%s/competition/stage1.htm", langs[l]);
        add_path("/%s/competition/stage2.htm", langs[l]);
        for (unsigned v = 0; v < 10; v++)
            add_path("/%s/venues/cities/%s.html", langs[l], venues[v]);
        add_path("/%s/tickets/body.html", langs[l]);
        add_path("/%s/playing/body.html", langs[l]);
        add_path("/%s/history/body.html", langs[l]);
    }
    for (unsigned c = 0; c < 15; c++)
        add_path("/english/history/history_of/images/cup/%s.jpg", past_cups[c]);
    for (unsigned v = 0; v < 10; v++) {
        add_path("/english/venues/images/%s_stad.jpg", venues[v]);
        add_path("/images/venues/%s_map.gif", venues[v]);
    }
    for (unsigned i = 1; i <= 20; i++)
        add_path("/english/playing/download/images/saver%02u.gif", i);
    add_path("/english/competition/stats/top_scorers.htm");
    add_path("/english/competition/stats/cards.htm");
    add_path("/cgi-bin/trivia/Trivia.pl?FRA");
    add_path("/cgi-bin/cup98/score.pl?lang=french&match=");
    add_path("/cgi-bin/store/catalog.pl?item=");
    add_path("/cgi-bin/mail/subscribe.pl");
    add_path("/cgi-bin/poll/vote.pl?q=");
}

static void build_tables(void)
{
    size_t ncore = sizeof core_paths / sizeof core_paths[0];
    for (size_t i = 0; i < ncore; i++)
        add_path("%s", core_paths[i]);
    uint32_t tail0 = H.npaths;
    add_tail_paths();
    /* shuffle the tail (a fixed permutation) so that popularity mixes families */
    gu_rng r;
    gu_rng_seed_chunk(&r, 0x68747470ULL, 0);
    for (uint32_t i = H.npaths - 1; i > tail0; i--) {
        uint32_t j = tail0 + gu_below(&r, i - tail0 + 1);
        path_ent t = H.path[i];
        H.path[i] = H.path[j];
        H.path[j] = t;
    }
    static uint64_t w[NCLIENTS > MAX_PATHS ? NCLIENTS : MAX_PATHS];
    for (uint32_t i = 0; i < H.npaths; i++) {
        w[i] = (1ULL << 40) / (i + 2);
        if (H.path[i].kind == K_CGI && H.ncgi < 64)
            H.cgi[H.ncgi++] = i;
    }
    if (!H.ncgi || gu_alias_build(w, H.npaths, H.paths) != 0)
        tables_die("path weights");
    for (uint32_t i = 0; i < NCLIENTS; i++)
        w[i] = (1ULL << 40) / (i + 5);
    if (gu_alias_build(w, NCLIENTS, H.clients) != 0)
        tables_die("client weights");
}

/* ---------- the generator ---------- */

struct httplogs_ctx {
    uint64_t seed;
    uint64_t row;       /* next row */
    uint64_t chunk_end; /* first row of the next chunk */
    uint64_t client_key;
    int64_t chunk_ts;  /* first second of the current chunk */
    uint32_t clock_ms; /* since chunk_ts */
    gu_rng rng;
    char line[HTTPLOGS_ROW_MAX]; /* used only when the output buffer cannot grow */
};

static void chunk_reset(httplogs_ctx *g, uint64_t chunk)
{
    gu_rng_seed_chunk(&g->rng, g->seed ^ 0x485454504c4f4753ULL, chunk);
    g->row = chunk * GU_CHUNK_ROWS;
    g->chunk_end = g->row + GU_CHUNK_ROWS;
    g->chunk_ts = HTTPLOGS_BASE_TS + (int64_t)chunk * HTTPLOGS_CHUNK_SECS;
    g->clock_ms = 0;
}

/* The client with this popularity rank as a dotted IPv4 address: the 1998
 * logs' client number written byte by byte, low byte first ("40.135.0.0"). */
static char *put_client(const httplogs_ctx *g, char *p, uint32_t rank)
{
    uint32_t id = 1 + (uint32_t)(gu_mix64(g->client_key ^ rank) % CLIENT_IDS);
    p = gu_put_uint(p, id & 255);
    *p++ = '.';
    p = gu_put_uint(p, (id >> 8) & 255);
    *p++ = '.';
    p = gu_put_uint(p, (id >> 16) & 255);
    *p++ = '.';
    return gu_put_uint(p, id >> 24);
}

/* Generate the current row into p (>= HTTPLOGS_ROW_MAX bytes); returns its end. */
static char *render_row(httplogs_ctx *g, char *p)
{
    gu_rng *r = &g->rng;
    uint32_t sec = g->clock_ms / 1000;
    if (sec >= HTTPLOGS_CHUNK_SECS)
        sec = HTTPLOGS_CHUNK_SECS - 1;
    g->clock_ms += gu_below(r, STEP_MS);

    p = GU_PUT(p, "{\"@timestamp\":");
    p = gu_put_uint(p, (uint64_t)(g->chunk_ts + sec));
    p = GU_PUT(p, ",\"clientip\":\"");
    p = put_client(g, p, gu_alias_pick(r, H.clients, NCLIENTS));

    uint32_t m = gu_below(r, 1000); /* GET 99%, HEAD 0.8%, POST 0.2% */
    int head = m < 8, post = m >= 8 && m < 10;
    uint32_t pi = post ? H.cgi[gu_below(r, H.ncgi)] : gu_alias_pick(r, H.paths, H.npaths);
    const path_ent *pe = &H.path[pi];
    p = head   ? GU_PUT(p, "\",\"request\":\"HEAD ")
        : post ? GU_PUT(p, "\",\"request\":\"POST ")
               : GU_PUT(p, "\",\"request\":\"GET ");
    p = gu_put_lit(p, H.pool + pe->off, pe->len);
    if (pe->dyn)
        p = gu_put_uint(p, gu_below(r, 1000));
    p = gu_below(r, 100) < 18 ? GU_PUT(p, " HTTP/1.1\",\"status\":")
                              : GU_PUT(p, " HTTP/1.0\",\"status\":");

    /* status per 10,000: 200 90.3%, 304 7%, 404 1.2%, 206 0.8%, 302 0.6%,
     * 500 0.05%, 400 0.05%; size absent on 1/8 of 304s, every 500 and 0.15%
     * of the rest; 0 for 304s and HEAD */
    uint32_t s = gu_below(r, 10000), size;
    int has_size = gu_below(r, 10000) >= 15;
    if (s < 9030) {
        p = GU_PUT(p, "200");
        size = pe->size + (pe->kind == K_CGI ? gu_below(r, 512) : 0);
    } else if (s < 9730) {
        p = GU_PUT(p, "304");
        size = 0;
        has_size = gu_below(r, 8) != 0;
    } else if (s < 9850) {
        p = GU_PUT(p, "404");
        size = 300 + gu_below(r, 60);
    } else if (s < 9930) {
        p = GU_PUT(p, "206");
        size = 1 + gu_below(r, pe->size);
    } else if (s < 9990) {
        p = GU_PUT(p, "302");
        size = 150 + gu_below(r, 100);
    } else if (s < 9995) {
        p = GU_PUT(p, "500");
        size = 0;
        has_size = 0;
    } else {
        p = GU_PUT(p, "400");
        size = 0;
    }
    if (head) /* no body */
        size = 0;
    if (has_size) {
        p = GU_PUT(p, ",\"size\":");
        p = gu_put_uint(p, size);
    }
    return GU_PUT(p, "}\n");
}

void httplogs_row(httplogs_ctx *g, qr_buf *b)
{
    if (g->row == g->chunk_end)
        chunk_reset(g, g->row / GU_CHUNK_ROWS);
    unsigned char *dst = qr_buf_reserve(b, HTTPLOGS_ROW_MAX);
    char *start = dst ? (char *)dst : g->line;
    char *end = render_row(g, start);
    g->row++;
    if (dst)
        b->len += (size_t)(end - start);
}

void httplogs_seek(httplogs_ctx *g, uint64_t row)
{
    chunk_reset(g, row / GU_CHUNK_ROWS);
    while (g->row < row) {
        render_row(g, g->line);
        g->row++;
    }
}

uint64_t httplogs_next_row(const httplogs_ctx *g) { return g->row; }

httplogs_ctx *httplogs_new(uint64_t seed, uint64_t first_row)
{
    pthread_once(&tables_once, build_tables);
    httplogs_ctx *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->seed = seed;
    g->client_key = gu_mix64(seed ^ 0x636c69656e74ULL);
    httplogs_seek(g, first_row);
    return g;
}

void httplogs_free(httplogs_ctx *g) { free(g); }

/* ---------- streaming to a file descriptor ---------- */

static void *hl_open(uint64_t seed) { return httplogs_new(seed, 0); }

static void hl_chunk(void *gen, uint64_t first, uint64_t last, qr_buf *b)
{
    httplogs_ctx *g = gen;
    httplogs_seek(g, first);
    for (uint64_t r = first; r < last; r++)
        httplogs_row(g, b);
}

static void hl_close(void *gen) { httplogs_free(gen); }

static const gu_dataset hl_dataset = {"http_logs", GU_CHUNK_ROWS, hl_open, hl_chunk, hl_close};

int httplogs_write_ndjson(int fd, uint64_t rows, uint64_t seed, int threads, qr_err *e)
{
    return gu_write_ndjson(fd, rows, seed, threads, &hl_dataset, e);
}
