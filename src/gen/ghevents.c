/* ghevents.c - the github_events corpus generator (see ghevents.h).
 *
 * Start-up (once per process, pthread_once): the text templates of
 * ghtexts.c are compiled into op lists (literal runs already JSON-escaped,
 * and {x} placeholders), every table's longest expansion is measured, and
 * the bound of a whole line is checked against GHEVENTS_ROW_MAX. Zipf-like
 * integer alias tables rank 200,000 users (activity), 400,000 user-owned and
 * 50,000 organisation-owned repositories (popularity). They are the same for
 * every seed; a seed changes who and what each rank is.
 *
 * Per seed, users, organisations and repositories are pure functions of
 * (seed, index) (hashing, no tables): a user's id, login, display name and
 * mail; a repository's owner, name, description and language. Ids are
 * hashes of the login or "owner/name", so a name always comes with the same
 * id across the whole stream.
 *
 * Per row (no snprintf, no malloc): pick the type, the repository (20% of
 * them belong to an organisation, whose object then ends the line as
 * "org"), the actor, then write the envelope and the type's payload. The
 * clock of a chunk starts at the chunk's first second and moves forward by
 * 0..243 ms per row.
 */
#include "gen/ghevents.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "gen/genutil.h"
#include "gen/ghtexts.h"

#define NUSERS        200000
#define NORGS         5000
#define NUREPOS       400000
#define NOREPOS       50000
#define USER_IDS      10400000u /* GitHub user and organisation ids at the start of 2015 */
#define REPO_IDS      28700000u /* repository ids; forks made here get ids above */
#define LOGIN_MAX     39
#define NAME_MAX      64 /* a display name, UTF-8 bytes */
#define EMAIL_MAX     96
#define REPO_NAME_MAX 64  /* the name after "owner/" */
#define VAR_MAX       64  /* longest text a {x} can produce */
#define MAX_COMMITS   20  /* as in the archive: longer pushes list their last 20 */
#define STEP_MS       244 /* clock step per row is uniform in [0, STEP_MS) */
#define MAX_OPS       4096
#define MAX_TEXTS     512
#define POOL_SIZE     (128 * 1024)

enum ev_type {
    E_PUSH,
    E_CREATE,
    E_WATCH,
    E_ISSUE_COMMENT,
    E_PR,
    E_ISSUES,
    E_FORK,
    E_DELETE,
    E_RELEASE,
    E_NTYPES
};

/* share per 1000 events, cumulated in this order */
static const struct {
    const char *name;
    uint32_t per_mille;
} ev_types[E_NTYPES] = {
    [E_PUSH] = {"PushEvent", 500},     [E_CREATE] = {"CreateEvent", 130},
    [E_WATCH] = {"WatchEvent", 110},   [E_ISSUE_COMMENT] = {"IssueCommentEvent", 80},
    [E_PR] = {"PullRequestEvent", 60}, [E_ISSUES] = {"IssuesEvent", 50},
    [E_FORK] = {"ForkEvent", 40},      [E_DELETE] = {"DeleteEvent", 25},
    [E_RELEASE] = {"ReleaseEvent", 5},
};

/* ---------- compiled tables ---------- */

enum { V_LIT, V_FILE, V_NUM, V_VER, V_BRANCH, V_USER, V_SHORTSHA, V_REPO };

typedef struct op {
    const char *lit; /* JSON-escaped literal text, or NULL for a placeholder */
    uint16_t len;
    uint8_t var;
} op;

typedef struct ctext {
    uint32_t first; /* in T.ops */
    uint32_t nops;
} ctext;

typedef struct ctable {
    const ctext *t;
    uint32_t n;
    size_t max_len; /* longest escaped expansion */
} ctable;

typedef struct gtables {
    op ops[MAX_OPS];
    uint32_t nops;
    ctext texts[MAX_TEXTS];
    uint32_t ntexts;
    char pool[POOL_SIZE];
    size_t pool_len;
    ctable commit, ititle, ibody, comment, prtitle, prbody, desc, rbody;
    uint8_t first_len[256], last_len[256], word_len[256], company_len[256], file_len[256],
        branch_len[256], lang_len[256];
    uint32_t type_cut[E_NTYPES]; /* cumulative per mille */
    gu_alias users[NUSERS], urepos[NUREPOS], orepos[NOREPOS];
} gtables;

static gtables T;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_die(const char *why)
{
    /* invariant check: the static text tables are broken */
    fprintf(stderr, "ghevents: bad text tables: %s\n", why);
    abort();
}

static int placeholder(const char *s)
{
    static const char vars[] = "fnvbuhr";
    if (s[0] != '{' || !s[1] || s[2] != '}')
        return V_LIT;
    const char *v = memchr(vars, s[1], sizeof vars - 1);
    return v ? V_FILE + (int)(v - vars) : V_LIT;
}

static void add_op(const char *lit, size_t len, int var)
{
    if (T.nops == MAX_OPS)
        tables_die("too many ops");
    if (len > 0xffff)
        tables_die("literal too long");
    T.ops[T.nops++] = (op){lit, (uint16_t)len, (uint8_t)var};
}

static void compile_table(const gh_texts *src, ctable *dst)
{
    if (T.ntexts + src->n > MAX_TEXTS || !src->n)
        tables_die("too many or no texts");
    dst->t = T.texts + T.ntexts;
    dst->n = (uint32_t)src->n;
    dst->max_len = 0;
    for (size_t i = 0; i < src->n; i++) {
        ctext *ct = &T.texts[T.ntexts++];
        ct->first = T.nops;
        size_t bound = 0;
        for (const char *s = src->items[i]; *s;) {
            const char *run = s;
            while (*s && placeholder(s) == V_LIT)
                s++;
            if (s > run) {
                size_t n = (size_t)(s - run);
                if (T.pool_len + 6 * n > POOL_SIZE)
                    tables_die("string pool full");
                char *lit = T.pool + T.pool_len;
                size_t m = gu_json_escape(run, n, lit);
                T.pool_len += m;
                add_op(lit, m, V_LIT);
                bound += m;
            }
            int v = placeholder(s);
            if (v != V_LIT) {
                add_op(NULL, 0, v);
                bound += VAR_MAX;
                s += 3;
            }
        }
        ct->nops = T.nops - ct->first;
        if (bound > dst->max_len)
            dst->max_len = bound;
    }
}

/* Lengths of a table of JSON-safe strings, checked to be at most `max`. */
static void measure(const char *const *items, size_t n, uint8_t *len, size_t max)
{
    if (!n || n > 256)
        tables_die("table size");
    for (size_t i = 0; i < n; i++) {
        size_t k = strlen(items[i]);
        if (!k || k > max)
            tables_die(items[i]);
        for (size_t j = 0; j < k; j++)
            if ((unsigned char)items[i][j] < 0x20 || items[i][j] == '"' || items[i][j] == '\\')
                tables_die(items[i]);
        len[i] = (uint8_t)k;
    }
}

static void measure_names(const gh_name *names, size_t n, uint8_t *len)
{
    const char *disp[256] = {0}, *asc[256] = {0};
    uint8_t dl[256];
    if (n > 256)
        tables_die("too many names");
    for (size_t i = 0; i < n; i++) {
        disp[i] = names[i].display;
        asc[i] = names[i].ascii;
    }
    measure(disp, n, dl, (NAME_MAX - 1) / 2);
    measure(asc, n, len, 12);
    for (size_t i = 0; i < n; i++)
        for (const char *s = asc[i]; *s; s++)
            if (*s < 'a' || *s > 'z')
                tables_die(asc[i]);
}

static void zipf_alias(uint32_t n, uint32_t q, gu_alias *tab)
{
    uint64_t *w = malloc((size_t)n * sizeof *w);
    if (!w)
        tables_die("out of memory");
    for (uint32_t i = 0; i < n; i++)
        w[i] = (1ULL << 40) / (i + q);
    if (gu_alias_build(w, n, tab) != 0)
        tables_die("alias table");
    free(w);
}

static size_t max3(size_t a, size_t b, size_t c)
{
    return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

static void build_tables(void)
{
    compile_table(&gh_commit_msgs, &T.commit);
    compile_table(&gh_issue_titles, &T.ititle);
    compile_table(&gh_issue_bodies, &T.ibody);
    compile_table(&gh_comments, &T.comment);
    compile_table(&gh_pr_titles, &T.prtitle);
    compile_table(&gh_pr_bodies, &T.prbody);
    compile_table(&gh_descriptions, &T.desc);
    compile_table(&gh_release_bodies, &T.rbody);
    measure_names(gh_first_names, gh_nfirst_names, T.first_len);
    measure_names(gh_last_names, gh_nlast_names, T.last_len);
    measure(gh_words.items, gh_words.n, T.word_len, 8);
    for (size_t i = 0; i < gh_words.n; i++)
        for (const char *w = gh_words.items[i]; *w; w++)
            if (*w < 'a' || *w > 'z') /* put_cap() capitalises the first byte */
                tables_die(gh_words.items[i]);
    measure(gh_companies.items, gh_companies.n, T.company_len, 12);
    measure(gh_files.items, gh_files.n, T.file_len, VAR_MAX);
    measure(gh_branches.items, gh_branches.n, T.branch_len, VAR_MAX);
    measure(gh_languages.items, gh_languages.n, T.lang_len, 16);
    const char *label_names[256] = {0}, *label_colors[256] = {0};
    uint8_t ll[256];
    for (size_t i = 0; i < gh_nlabels && i < 256; i++) {
        label_names[i] = gh_labels[i].name;
        label_colors[i] = gh_labels[i].color;
    }
    measure(label_names, gh_nlabels, ll, 24);
    measure(label_colors, gh_nlabels, ll, 6);
    uint32_t cut = 0;
    for (int t = 0; t < E_NTYPES; t++)
        T.type_cut[t] = cut += ev_types[t].per_mille;
    if (cut != 1000)
        tables_die("event shares do not add up to 1000");
    zipf_alias(NUSERS, 50, T.users);
    zipf_alias(NUREPOS, 50, T.urepos);
    zipf_alias(NOREPOS, 20, T.orepos);

    /* The longest line, piece by piece: the envelope (ids, type, actor, repo,
     * public, created_at, org) then the largest payload. Names and urls are
     * bounded by LOGIN_MAX / REPO_NAME_MAX, every number by 20 digits. */
    size_t full = LOGIN_MAX + 1 + REPO_NAME_MAX, ts = GU_RFC3339_LEN + 2, num = 20;
    size_t user_short = 24 + LOGIN_MAX + num;
    size_t envelope = 60 + num + 20 + 200 + 3 * LOGIN_MAX + 2 * num + 120 + 2 * full + num + 40 +
                      ts + 130 + 2 * LOGIN_MAX + 2 * num;
    size_t commit = 160 + 2 * 40 + EMAIL_MAX + NAME_MAX + T.commit.max_len + full;
    size_t push = 120 + 3 * num + VAR_MAX + 2 * 40 + MAX_COMMITS * (commit + 1);
    size_t issue = 200 + full + 3 * num + T.ititle.max_len + user_short + 3 * (30 + 24 + 6) +
                   4 * ts + T.ibody.max_len;
    size_t comment = 150 + full + 2 * num + user_short + 2 * ts + T.comment.max_len;
    size_t pr = 360 + full + 9 * num + T.prtitle.max_len + user_short + T.prbody.max_len + 4 * ts;
    size_t fork = 480 + 4 * full + 6 * num + user_short + T.desc.max_len + 3 * ts + 16;
    size_t release = 320 + full + 3 * num + 3 * VAR_MAX + user_short + 2 * ts + T.rbody.max_len +
                     2 * REPO_NAME_MAX;
    size_t payload = max3(push, issue + comment, max3(pr, fork, release));
    if ((envelope + payload + 2) * 5 / 4 > GHEVENTS_ROW_MAX) /* with a margin */
        tables_die("GHEVENTS_ROW_MAX too small for the texts");
}

/* ---------- pools: users, organisations, repositories ---------- */

typedef struct gh_user {
    uint32_t id;
    uint8_t login_len, name_len, email_len;
    char login[LOGIN_MAX + 1];
    char name[NAME_MAX];
    char email[EMAIL_MAX];
} gh_user;

typedef struct gh_repo {
    uint32_t id;
    uint32_t owner; /* user or organisation index */
    int org;
    int desc;     /* index into T.desc, -1 for null */
    int language; /* index into gh_languages, -1 for null */
    uint8_t full_len, name_off;
    char full[LOGIN_MAX + 1 + REPO_NAME_MAX]; /* "owner/name" */
} gh_repo;

struct ghevents_ctx {
    uint64_t seed;
    uint64_t row;       /* next row */
    uint64_t chunk_end; /* first row of the next chunk */
    uint64_t user_key, org_key, repo_key;
    int64_t chunk_ts;  /* first second of the current chunk */
    int64_t now;       /* this row's created_at */
    uint32_t clock_ms; /* since chunk_ts */
    gu_rng rng;
    gh_user actor;
    gh_repo repo;
    gh_user org;                 /* the repository's organisation, when repo.org */
    char line[GHEVENTS_ROW_MAX]; /* used only when the output buffer cannot grow */
};

static inline char *put_n(char *p, const char *s, size_t n) { return gu_put_lit(p, s, n); }

static char *put_cap(char *p, const char *s, size_t n)
{
    p = gu_put_lit(p, s, n);
    p[-(ptrdiff_t)n] = (char)(p[-(ptrdiff_t)n] - 'a' + 'A');
    return p;
}

/* An id from a name: the same login (or repository name) always has the
 * same id, even when two pool indices happen to build the same name. */
static uint32_t id_of(uint64_t key, const char *s, size_t n, uint32_t range)
{
    uint64_t h = key;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return 1 + (uint32_t)(gu_mix64(h) % range);
}

static void make_user(const ghevents_ctx *g, uint32_t u, gh_user *o)
{
    uint64_t h = gu_mix64(g->user_key ^ u), h2 = gu_mix64(h ^ 0x75736572ULL);
    size_t fi = h % gh_nfirst_names, li = (h >> 8) % gh_nlast_names;
    size_t w1 = (h >> 16) % gh_words.n, w2 = (h >> 24) % gh_words.n;
    const gh_name *f = &gh_first_names[fi], *l = &gh_last_names[li];
    size_t fl = T.first_len[fi], ll = T.last_len[li];
    uint32_t d = (uint32_t)(h >> 32) % 1000;
    char *p = o->login;
    switch ((h >> 40) % 8) {
    case 0: /* petroav */
        p = put_n(p, f->ascii, fl);
        p = put_n(p, l->ascii, 2);
        break;
    case 1: /* jgarcia */
        *p++ = f->ascii[0];
        p = put_n(p, l->ascii, ll);
        break;
    case 2: /* jose-garcia */
        p = put_n(p, f->ascii, fl);
        *p++ = '-';
        p = put_n(p, l->ascii, ll);
        break;
    case 3: /* rocket427 */
        p = put_n(p, gh_words.items[w1], T.word_len[w1]);
        p = gu_put_uint(p, d);
        break;
    case 4: /* JoseGarcia */
        p = put_cap(p, f->ascii, fl);
        p = put_cap(p, l->ascii, ll);
        break;
    case 5: /* quietfox */
        p = put_n(p, gh_words.items[w1], T.word_len[w1]);
        p = put_n(p, gh_words.items[w2], T.word_len[w2]);
        break;
    case 6: /* anna1987 */
        p = put_n(p, f->ascii, fl);
        p = gu_put_uint(p, 1970 + (h >> 48) % 32);
        break;
    default: /* josegarcia17 */
        p = put_n(p, f->ascii, fl);
        p = put_n(p, l->ascii, ll);
        p = gu_put_uint(p, d % 100);
    }
    o->login_len = (uint8_t)(p - o->login); /* at most 12 + 1 + 12 + 4 < LOGIN_MAX */
    o->id = id_of(g->user_key, o->login, o->login_len, USER_IDS);

    p = o->name;
    if ((h2 >> 32) % 10 == 0) { /* git configured with the login as the name */
        p = put_n(p, o->login, o->login_len);
    } else {
        p = put_n(p, f->display, strlen(f->display));
        *p++ = ' ';
        p = put_n(p, l->display, strlen(l->display));
    }
    o->name_len = (uint8_t)(p - o->name);

    p = o->email;
    uint32_t e = (uint32_t)(h2 >> 40) % 10;
    if (e < 4) {
        p = put_n(p, o->login, o->login_len);
        p = GU_PUT(p, "@users.noreply.github.com");
    } else if (e < 7) {
        p = put_n(p, f->ascii, fl);
        *p++ = '.';
        p = put_n(p, l->ascii, ll);
        p = GU_PUT(p, "@gmail.com");
    } else {
        size_t c = (h2 >> 48) % gh_companies.n;
        p = put_n(p, f->ascii, fl);
        *p++ = '@';
        p = put_n(p, gh_companies.items[c], T.company_len[c]);
        p = GU_PUT(p, ".com");
    }
    o->email_len = (uint8_t)(p - o->email);
}

static void make_org(const ghevents_ctx *g, uint32_t k, gh_user *o)
{
    static const struct {
        const char *s;
        uint8_t n;
    } suffix[8] = {{"", 0},     {"-labs", 5}, {"io", 2}, {"hq", 2},
                   {"-dev", 4}, {"-team", 5}, {"js", 2}, {"-project", 8}};
    uint64_t h = gu_mix64(g->org_key ^ k);
    size_t c = h % gh_companies.n;
    char *p = put_n(o->login, gh_companies.items[c], T.company_len[c]);
    p = put_n(p, suffix[(h >> 8) % 8].s, suffix[(h >> 8) % 8].n);
    if ((h >> 16) % 3 == 0)
        p = gu_put_uint(p, (h >> 24) % 100);
    o->login_len = (uint8_t)(p - o->login);
    o->id = id_of(g->org_key, o->login, o->login_len, USER_IDS);
    o->name_len = o->email_len = 0;
}

static void make_repo(const ghevents_ctx *g, int org, uint32_t j, gh_repo *o, gh_user *owner)
{
    static const char *const common[] = {"dotfiles",    "blog",   "website", "homework", "notes",
                                         "6.828",       "cs50",   "sandbox", "test",     "demo",
                                         "hello-world", "config", "scripts"};
    static const char *const suffix[] = {"api", "cli", "docs", "server",
                                         "app", "lib", "core", "ui"};
    uint64_t h = gu_mix64(g->repo_key ^ ((uint64_t)org << 40) ^ j), h2 = gu_mix64(h);
    uint32_t n = org ? NORGS : NUSERS;
    /* owners are skewed too: a few own many repositories */
    o->owner = (uint32_t)(((h % n) * ((h >> 32) % n)) / n);
    o->org = org;
    if (org)
        make_org(g, o->owner, owner);
    else
        make_user(g, o->owner, owner);
    char *p = put_n(o->full, owner->login, owner->login_len);
    *p++ = '/';
    o->name_off = (uint8_t)(p - o->full);
    size_t w1 = h2 % gh_words.n, w2 = (h2 >> 8) % gh_words.n;
    const char *a = gh_words.items[w1], *b = gh_words.items[w2];
    size_t al = T.word_len[w1], bl = T.word_len[w2];
    switch ((h2 >> 16) % 10) {
    case 0:
    case 1:
        p = put_n(p, a, al);
        break;
    case 2:
        p = put_n(p, a, al);
        *p++ = '-';
        p = put_n(p, b, bl);
        break;
    case 3:
        p = put_n(p, a, al);
        p = GU_PUT(p, ".js");
        break;
    case 4: {
        const char *s = common[(h2 >> 24) % (sizeof common / sizeof common[0])];
        p = put_n(p, s, strlen(s));
        break;
    }
    case 5:
        p = put_n(p, owner->login, owner->login_len);
        p = GU_PUT(p, ".github.io");
        break;
    case 6: {
        const char *s = suffix[(h2 >> 24) % 8];
        p = put_n(p, a, al);
        *p++ = '-';
        p = put_n(p, s, strlen(s));
        break;
    }
    case 7:
        p = put_n(p, a, al);
        *p++ = '_';
        p = put_n(p, b, bl);
        break;
    case 8:
        p = put_cap(p, a, al);
        p = put_cap(p, b, bl);
        break;
    default:
        p = put_n(p, a, al);
        p = gu_put_uint(p, (h2 >> 24) % 10);
    }
    o->full_len = (uint8_t)(p - o->full); /* the name is at most 39 + 10 < REPO_NAME_MAX */
    o->id = id_of(g->repo_key, o->full, o->full_len, REPO_IDS);
    o->desc = (h2 >> 32) % 10 < 3 ? -1 : (int)((h2 >> 36) % T.desc.n);
    o->language = (h2 >> 48) % 10 < 2 ? -1 : (int)((h2 >> 52) % gh_languages.n);
}

/* ---------- emitters ---------- */

static inline char *put_sha(gu_rng *r, char *p)
{
    p = gu_put_hex(p, gu_next(r), 16);
    p = gu_put_hex(p, gu_next(r), 16);
    return gu_put_hex(p, gu_next(r), 8);
}

static inline char *put_ts(char *p, int64_t secs)
{
    *p++ = '"';
    p = gu_put_rfc3339(p, secs);
    *p++ = '"';
    return p;
}

static char *put_version(gu_rng *r, char *p)
{
    p = gu_put_uint(p, gu_below(r, 4));
    *p++ = '.';
    p = gu_put_uint(p, gu_below(r, 13));
    *p++ = '.';
    return gu_put_uint(p, gu_below(r, 20));
}

static char *put_var(ghevents_ctx *g, int v, char *p)
{
    gu_rng *r = &g->rng;
    switch (v) {
    case V_FILE: {
        size_t i = gu_below(r, (uint32_t)gh_files.n);
        return put_n(p, gh_files.items[i], T.file_len[i]);
    }
    case V_NUM:
        return gu_put_uint(p, 1 + gu_below(r, 999));
    case V_VER:
        return put_version(r, p);
    case V_BRANCH: {
        size_t i = gu_below(r, (uint32_t)gh_branches.n);
        return put_n(p, gh_branches.items[i], T.branch_len[i]);
    }
    case V_USER: {
        gh_user u;
        make_user(g, gu_alias_pick(r, T.users, NUSERS), &u);
        return put_n(p, u.login, u.login_len);
    }
    case V_SHORTSHA:
        return gu_put_hex(p, gu_next(r), 7);
    case V_REPO:
        return put_n(p, g->repo.full + g->repo.name_off, g->repo.full_len - g->repo.name_off);
    }
    return p;
}

/* Text i of table t, JSON-escaped, without quotes. */
static char *put_text(ghevents_ctx *g, char *p, const ctable *t, uint32_t i)
{
    const ctext *ct = &t->t[i];
    for (uint32_t k = 0; k < ct->nops; k++) {
        const op *o = &T.ops[ct->first + k];
        p = o->lit ? gu_put_lit(p, o->lit, o->len) : put_var(g, o->var, p);
    }
    return p;
}

static char *put_random_text(ghevents_ctx *g, char *p, const ctable *t)
{
    *p++ = '"';
    p = put_text(g, p, t, gu_below(&g->rng, t->n));
    *p++ = '"';
    return p;
}

/* "text" or null (null with probability null_pct %) */
static char *put_text_or_null(ghevents_ctx *g, char *p, const ctable *t, uint32_t null_pct)
{
    if (gu_below(&g->rng, 100) < null_pct)
        return GU_PUT(p, "null");
    return put_random_text(g, p, t);
}

/* {"login":"L","id":N} */
static char *put_user_short(char *p, const gh_user *u)
{
    p = GU_PUT(p, "{\"login\":\"");
    p = put_n(p, u->login, u->login_len);
    p = GU_PUT(p, "\",\"id\":");
    p = gu_put_uint(p, u->id);
    *p++ = '}';
    return p;
}

static char *put_repo_url(char *p, const gh_repo *r)
{
    p = GU_PUT(p, "https://api.github.com/repos/");
    return put_n(p, r->full, r->full_len);
}

static char *put_branch(gu_rng *r, char *p)
{
    size_t i = gu_below(r, (uint32_t)gh_branches.n);
    return put_n(p, gh_branches.items[i], T.branch_len[i]);
}

static void random_user(ghevents_ctx *g, gh_user *u)
{
    make_user(g, gu_alias_pick(&g->rng, T.users, NUSERS), u);
}

/* ---------- payloads ---------- */

static char *put_push(ghevents_ctx *g, char *p)
{
    gu_rng *r = &g->rng;
    uint32_t k = gu_below(r, 1000), n, size;
    if (k < 20)
        n = 0; /* a push of no new commits (a force push, a new branch) */
    else if (k < 600)
        n = 1;
    else if (k < 750)
        n = 2;
    else if (k < 830)
        n = 3;
    else if (k < 900)
        n = 4 + gu_below(r, 2);
    else if (k < 960)
        n = 6 + gu_below(r, 5);
    else if (k < 995)
        n = 11 + gu_below(r, 10);
    else
        n = MAX_COMMITS;
    size = k >= 995 ? MAX_COMMITS + 1 + gu_below(r, 280) : n;
    char sha[MAX_COMMITS][40];
    uint32_t distinct = 0, ndistinct = size - n; /* commits past the list count as distinct */
    for (uint32_t i = 0; i < n; i++) {
        put_sha(r, sha[i]);
        if (gu_below(r, 100) < 92) {
            distinct |= 1u << i;
            ndistinct++;
        }
    }
    p = GU_PUT(p, "{\"push_id\":");
    p = gu_put_uint(p, 536863970 + g->row * 2 + gu_below(r, 2));
    p = GU_PUT(p, ",\"size\":");
    p = gu_put_uint(p, size);
    p = GU_PUT(p, ",\"distinct_size\":");
    p = gu_put_uint(p, ndistinct);
    p = GU_PUT(p, ",\"ref\":\"refs/heads/");
    p = gu_below(r, 100) < 75 ? GU_PUT(p, "master") : put_branch(r, p);
    p = GU_PUT(p, "\",\"head\":\"");
    p = n ? gu_put_lit(p, sha[n - 1], 40) : put_sha(r, p);
    p = GU_PUT(p, "\",\"before\":\"");
    p = put_sha(r, p);
    p = GU_PUT(p, "\",\"commits\":[");
    for (uint32_t i = 0; i < n; i++) {
        gh_user other;
        const gh_user *a = &g->actor;
        if (gu_below(r, 100) >= 90) {
            random_user(g, &other);
            a = &other;
        }
        if (i)
            *p++ = ',';
        p = GU_PUT(p, "{\"sha\":\"");
        p = gu_put_lit(p, sha[i], 40);
        p = GU_PUT(p, "\",\"author\":{\"email\":\"");
        p = put_n(p, a->email, a->email_len);
        p = GU_PUT(p, "\",\"name\":\"");
        p = put_n(p, a->name, a->name_len);
        p = GU_PUT(p, "\"},\"message\":");
        p = put_random_text(g, p, &T.commit);
        p = (distinct >> i) & 1 ? GU_PUT(p, ",\"distinct\":true,\"url\":\"")
                                : GU_PUT(p, ",\"distinct\":false,\"url\":\"");
        p = put_repo_url(p, &g->repo);
        p = GU_PUT(p, "/commits/");
        p = gu_put_lit(p, sha[i], 40);
        p = GU_PUT(p, "\"}");
    }
    return GU_PUT(p, "]}");
}

static char *put_description(ghevents_ctx *g, char *p, const gh_repo *repo)
{
    if (repo->desc < 0)
        return GU_PUT(p, "null");
    *p++ = '"';
    p = put_text(g, p, &T.desc, (uint32_t)repo->desc);
    *p++ = '"';
    return p;
}

static char *put_create(ghevents_ctx *g, char *p)
{
    gu_rng *r = &g->rng;
    uint32_t k = gu_below(r, 100); /* branch 45%, tag 20%, repository 35% */
    p = GU_PUT(p, "{\"ref\":");
    if (k < 45) {
        *p++ = '"';
        p = put_branch(r, p);
        p = GU_PUT(p, "\",\"ref_type\":\"branch\"");
    } else if (k < 65) {
        p = GU_PUT(p, "\"v");
        p = put_version(r, p);
        p = GU_PUT(p, "\",\"ref_type\":\"tag\"");
    } else {
        p = GU_PUT(p, "null,\"ref_type\":\"repository\"");
    }
    p = GU_PUT(p, ",\"master_branch\":\"master\",\"description\":");
    p = put_description(g, p, &g->repo);
    return GU_PUT(p, ",\"pusher_type\":\"user\"}");
}

static char *put_labels(gu_rng *r, char *p)
{
    uint32_t k = gu_below(r, 100), n = k < 60 ? 0 : k < 90 ? 1 : k < 98 ? 2 : 3;
    uint32_t first = gu_below(r, (uint32_t)gh_nlabels);
    *p++ = '[';
    for (uint32_t i = 0; i < n; i++) {
        const gh_label *l = &gh_labels[(first + i * 2) % gh_nlabels];
        if (i)
            *p++ = ',';
        p = GU_PUT(p, "{\"name\":\"");
        p = put_n(p, l->name, strlen(l->name));
        p = GU_PUT(p, "\",\"color\":\"");
        p = put_n(p, l->color, 6);
        p = GU_PUT(p, "\"}");
    }
    *p++ = ']';
    return p;
}

/* An issue of the event's repository. `opened`: created by the actor now. */
static char *put_issue(ghevents_ctx *g, char *p, int opened, int closed)
{
    gu_rng *r = &g->rng;
    gh_user author;
    if (opened)
        author = g->actor;
    else
        random_user(g, &author);
    uint32_t number = 1 + gu_below(r, opened ? 300 : 2000);
    int64_t created = opened ? g->now : g->now - 60 - gu_below(r, 86400 * 90);
    p = GU_PUT(p, "{\"url\":\"");
    p = put_repo_url(p, &g->repo);
    p = GU_PUT(p, "/issues/");
    p = gu_put_uint(p, number);
    p = GU_PUT(p, "\",\"id\":");
    p = gu_put_uint(p, opened ? 53000000 + g->row : 1 + gu_below(r, 53000000));
    p = GU_PUT(p, ",\"number\":");
    p = gu_put_uint(p, number);
    p = GU_PUT(p, ",\"title\":");
    p = put_random_text(g, p, &T.ititle);
    p = GU_PUT(p, ",\"user\":");
    p = put_user_short(p, &author);
    p = GU_PUT(p, ",\"labels\":");
    p = put_labels(r, p);
    p = closed ? GU_PUT(p, ",\"state\":\"closed\"") : GU_PUT(p, ",\"state\":\"open\"");
    p = GU_PUT(p, ",\"locked\":false,\"comments\":");
    p = gu_put_uint(p, opened ? 0 : gu_below(r, 30));
    p = GU_PUT(p, ",\"created_at\":");
    p = put_ts(p, created);
    p = GU_PUT(p, ",\"updated_at\":");
    p = put_ts(p, g->now);
    p = GU_PUT(p, ",\"closed_at\":");
    p = closed ? put_ts(p, g->now) : GU_PUT(p, "null");
    p = GU_PUT(p, ",\"body\":");
    p = put_text_or_null(g, p, &T.ibody, 15);
    *p++ = '}';
    return p;
}

static char *put_issues(ghevents_ctx *g, char *p)
{
    uint32_t k = gu_below(&g->rng, 100); /* opened 55%, closed 40%, reopened 5% */
    if (k < 55) {
        p = GU_PUT(p, "{\"action\":\"opened\",\"issue\":");
        p = put_issue(g, p, 1, 0);
    } else if (k < 95) {
        p = GU_PUT(p, "{\"action\":\"closed\",\"issue\":");
        p = put_issue(g, p, 0, 1);
    } else {
        p = GU_PUT(p, "{\"action\":\"reopened\",\"issue\":");
        p = put_issue(g, p, 0, 0);
    }
    *p++ = '}';
    return p;
}

static char *put_issue_comment(ghevents_ctx *g, char *p)
{
    uint64_t id = 68000000 + g->row;
    p = GU_PUT(p, "{\"action\":\"created\",\"issue\":");
    p = put_issue(g, p, 0, gu_below(&g->rng, 100) < 20);
    p = GU_PUT(p, ",\"comment\":{\"url\":\"");
    p = put_repo_url(p, &g->repo);
    p = GU_PUT(p, "/issues/comments/");
    p = gu_put_uint(p, id);
    p = GU_PUT(p, "\",\"id\":");
    p = gu_put_uint(p, id);
    p = GU_PUT(p, ",\"user\":");
    p = put_user_short(p, &g->actor);
    p = GU_PUT(p, ",\"created_at\":");
    p = put_ts(p, g->now);
    p = GU_PUT(p, ",\"updated_at\":");
    p = put_ts(p, g->now);
    p = GU_PUT(p, ",\"body\":");
    p = put_random_text(g, p, &T.comment);
    return GU_PUT(p, "}}");
}

static char *put_pull_request(ghevents_ctx *g, char *p)
{
    gu_rng *r = &g->rng;
    int closed = gu_below(r, 100) >= 55, merged = closed && gu_below(r, 100) < 70;
    uint32_t number = 1 + gu_below(r, 1500);
    uint32_t files = 1 + gu_below(r, 1 + gu_below(r, 40));
    uint32_t add = gu_below(r, 1 + files * gu_below(r, 200)), del = gu_below(r, 1 + add);
    gh_user author;
    if (closed)
        random_user(g, &author);
    else
        author = g->actor;
    p = closed ? GU_PUT(p, "{\"action\":\"closed\",\"number\":")
               : GU_PUT(p, "{\"action\":\"opened\",\"number\":");
    p = gu_put_uint(p, number);
    p = GU_PUT(p, ",\"pull_request\":{\"url\":\"");
    p = put_repo_url(p, &g->repo);
    p = GU_PUT(p, "/pulls/");
    p = gu_put_uint(p, number);
    p = GU_PUT(p, "\",\"id\":");
    p = gu_put_uint(p, closed ? 1 + gu_below(r, 26700000) : 26700000 + g->row);
    p = GU_PUT(p, ",\"number\":");
    p = gu_put_uint(p, number);
    p = closed ? GU_PUT(p, ",\"state\":\"closed\",\"title\":")
               : GU_PUT(p, ",\"state\":\"open\",\"title\":");
    p = put_random_text(g, p, &T.prtitle);
    p = GU_PUT(p, ",\"user\":");
    p = put_user_short(p, &author);
    p = GU_PUT(p, ",\"body\":");
    p = put_text_or_null(g, p, &T.prbody, 20);
    p = GU_PUT(p, ",\"created_at\":");
    p = put_ts(p, closed ? g->now - 60 - gu_below(r, 86400 * 30) : g->now);
    p = GU_PUT(p, ",\"updated_at\":");
    p = put_ts(p, g->now);
    p = GU_PUT(p, ",\"closed_at\":");
    p = closed ? put_ts(p, g->now) : GU_PUT(p, "null");
    p = GU_PUT(p, ",\"merged_at\":");
    p = merged ? put_ts(p, g->now) : GU_PUT(p, "null");
    p = merged ? GU_PUT(p, ",\"merged\":true,\"comments\":")
               : GU_PUT(p, ",\"merged\":false,\"comments\":");
    p = gu_put_uint(p, closed ? gu_below(r, 12) : 0);
    p = GU_PUT(p, ",\"commits\":");
    p = gu_put_uint(p, 1 + gu_below(r, 1 + gu_below(r, 15)));
    p = GU_PUT(p, ",\"additions\":");
    p = gu_put_uint(p, add);
    p = GU_PUT(p, ",\"deletions\":");
    p = gu_put_uint(p, del);
    p = GU_PUT(p, ",\"changed_files\":");
    p = gu_put_uint(p, files);
    return GU_PUT(p, "}}");
}

static char *put_fork(ghevents_ctx *g, char *p)
{
    const gh_repo *src = &g->repo;
    const char *name = src->full + src->name_off;
    size_t nl = src->full_len - src->name_off;
    const gh_user *a = &g->actor;
    p = GU_PUT(p, "{\"forkee\":{\"id\":");
    p = gu_put_uint(p, REPO_IDS + 1 + g->row);
    p = GU_PUT(p, ",\"name\":\"");
    p = put_n(p, name, nl);
    p = GU_PUT(p, "\",\"full_name\":\"");
    p = put_n(p, a->login, a->login_len);
    *p++ = '/';
    p = put_n(p, name, nl);
    p = GU_PUT(p, "\",\"owner\":");
    p = put_user_short(p, a);
    p = GU_PUT(p, ",\"private\":false,\"html_url\":\"https://github.com/");
    p = put_n(p, a->login, a->login_len);
    *p++ = '/';
    p = put_n(p, name, nl);
    p = GU_PUT(p, "\",\"description\":");
    p = put_description(g, p, src);
    p = GU_PUT(p, ",\"fork\":true,\"url\":\"https://api.github.com/repos/");
    p = put_n(p, a->login, a->login_len);
    *p++ = '/';
    p = put_n(p, name, nl);
    p = GU_PUT(p, "\",\"created_at\":");
    p = put_ts(p, g->now);
    p = GU_PUT(p, ",\"updated_at\":");
    p = put_ts(p, g->now);
    p = GU_PUT(p, ",\"pushed_at\":");
    p = put_ts(p, g->now - 1 - gu_below(&g->rng, 86400 * 30));
    p = GU_PUT(p, ",\"stargazers_count\":0,\"watchers_count\":0,\"language\":null,"
                  "\"forks_count\":0,\"open_issues_count\":0,\"default_branch\":\"master\","
                  "\"public\":true}}");
    return p;
}

static char *put_delete(ghevents_ctx *g, char *p)
{
    gu_rng *r = &g->rng;
    p = GU_PUT(p, "{\"ref\":\"");
    if (gu_below(r, 100) < 85) {
        p = put_branch(r, p);
        p = GU_PUT(p, "\",\"ref_type\":\"branch\"");
    } else {
        *p++ = 'v';
        p = put_version(r, p);
        p = GU_PUT(p, "\",\"ref_type\":\"tag\"");
    }
    return GU_PUT(p, ",\"pusher_type\":\"user\"}");
}

static char *put_release(ghevents_ctx *g, char *p)
{
    gu_rng *r = &g->rng;
    char tag[24];
    tag[0] = 'v';
    size_t tl = (size_t)(put_version(r, tag + 1) - tag);
    uint64_t id = 800000 + g->row;
    p = GU_PUT(p, "{\"action\":\"published\",\"release\":{\"url\":\"");
    p = put_repo_url(p, &g->repo);
    p = GU_PUT(p, "/releases/");
    p = gu_put_uint(p, id);
    p = GU_PUT(p, "\",\"id\":");
    p = gu_put_uint(p, id);
    p = GU_PUT(p, ",\"tag_name\":\"");
    p = put_n(p, tag, tl);
    p = GU_PUT(p, "\",\"target_commitish\":\"master\",\"name\":");
    if (gu_below(r, 100) < 25) {
        p = GU_PUT(p, "null");
    } else {
        *p++ = '"';
        p = put_n(p, tag, tl);
        *p++ = '"';
    }
    p = GU_PUT(p, ",\"draft\":false,\"author\":");
    p = put_user_short(p, &g->actor);
    p = gu_below(r, 100) < 10 ? GU_PUT(p, ",\"prerelease\":true,\"created_at\":")
                              : GU_PUT(p, ",\"prerelease\":false,\"created_at\":");
    p = put_ts(p, g->now - 1 - gu_below(r, 3600));
    p = GU_PUT(p, ",\"published_at\":");
    p = put_ts(p, g->now);
    p = GU_PUT(p, ",\"assets\":[");
    if (gu_below(r, 100) < 20) {
        const char *name = g->repo.full + g->repo.name_off;
        p = GU_PUT(p, "{\"name\":\"");
        p = put_n(p, name, g->repo.full_len - g->repo.name_off);
        *p++ = '-';
        p = put_n(p, tag, tl);
        p = GU_PUT(p, ".tar.gz\",\"size\":");
        p = gu_put_uint(p, 1000 + gu_below(r, 5000000));
        p = GU_PUT(p, ",\"download_count\":0}");
    }
    p = GU_PUT(p, "],\"body\":");
    p = put_text_or_null(g, p, &T.rbody, 20);
    return GU_PUT(p, "}}");
}

/* ---------- the generator ---------- */

static void chunk_reset(ghevents_ctx *g, uint64_t chunk)
{
    gu_rng_seed_chunk(&g->rng, g->seed ^ 0x47484556454e5453ULL, chunk);
    g->row = chunk * GU_CHUNK_ROWS;
    g->chunk_end = g->row + GU_CHUNK_ROWS;
    g->chunk_ts = GHEVENTS_BASE_TS + (int64_t)chunk * GHEVENTS_CHUNK_SECS;
    g->clock_ms = 0;
}

/* Generate the current row into p (>= GHEVENTS_ROW_MAX bytes); returns its end. */
static char *render_row(ghevents_ctx *g, char *p)
{
    gu_rng *r = &g->rng;
    uint32_t sec = g->clock_ms / 1000;
    if (sec >= GHEVENTS_CHUNK_SECS)
        sec = GHEVENTS_CHUNK_SECS - 1;
    g->now = g->chunk_ts + sec;
    g->clock_ms += gu_below(r, STEP_MS);

    uint32_t k = gu_below(r, 1000);
    int type = 0;
    while (k >= T.type_cut[type])
        type++;
    int org = gu_below(r, 1000) < 200;
    uint32_t j = org ? gu_alias_pick(r, T.orepos, NOREPOS) : gu_alias_pick(r, T.urepos, NUREPOS);
    make_repo(g, org, j, &g->repo, org ? &g->org : &g->actor);
    int by_owner = !org &&
                   (type == E_PUSH || type == E_CREATE || type == E_DELETE || type == E_RELEASE) &&
                   gu_below(r, 100) < 85;
    if (!by_owner) /* else make_repo left the owner in g->actor */
        random_user(g, &g->actor);

    const gh_user *a = &g->actor;
    p = GU_PUT(p, "{\"id\":\"");
    p = gu_put_uint(p, GHEVENTS_BASE_ID + g->row * 4 + gu_below(r, 4));
    p = GU_PUT(p, "\",\"type\":\"");
    p = put_n(p, ev_types[type].name, strlen(ev_types[type].name));
    p = GU_PUT(p, "\",\"actor\":{\"id\":");
    p = gu_put_uint(p, a->id);
    p = GU_PUT(p, ",\"login\":\"");
    p = put_n(p, a->login, a->login_len);
    p = GU_PUT(p, "\",\"display_login\":\"");
    p = put_n(p, a->login, a->login_len);
    p = GU_PUT(p, "\",\"gravatar_id\":\"\",\"url\":\"https://api.github.com/users/");
    p = put_n(p, a->login, a->login_len);
    p = GU_PUT(p, "\",\"avatar_url\":\"https://avatars.githubusercontent.com/u/");
    p = gu_put_uint(p, a->id);
    p = GU_PUT(p, "?\"},\"repo\":{\"id\":");
    p = gu_put_uint(p, g->repo.id);
    p = GU_PUT(p, ",\"name\":\"");
    p = put_n(p, g->repo.full, g->repo.full_len);
    p = GU_PUT(p, "\",\"url\":\"");
    p = put_repo_url(p, &g->repo);
    p = GU_PUT(p, "\"},\"payload\":");
    switch (type) {
    case E_PUSH:
        p = put_push(g, p);
        break;
    case E_CREATE:
        p = put_create(g, p);
        break;
    case E_WATCH:
        p = GU_PUT(p, "{\"action\":\"started\"}");
        break;
    case E_ISSUE_COMMENT:
        p = put_issue_comment(g, p);
        break;
    case E_PR:
        p = put_pull_request(g, p);
        break;
    case E_ISSUES:
        p = put_issues(g, p);
        break;
    case E_FORK:
        p = put_fork(g, p);
        break;
    case E_DELETE:
        p = put_delete(g, p);
        break;
    default:
        p = put_release(g, p);
    }
    p = GU_PUT(p, ",\"public\":true,\"created_at\":");
    p = put_ts(p, g->now);
    if (org) {
        const gh_user *o = &g->org;
        p = GU_PUT(p, ",\"org\":{\"id\":");
        p = gu_put_uint(p, o->id);
        p = GU_PUT(p, ",\"login\":\"");
        p = put_n(p, o->login, o->login_len);
        p = GU_PUT(p, "\",\"gravatar_id\":\"\",\"url\":\"https://api.github.com/orgs/");
        p = put_n(p, o->login, o->login_len);
        p = GU_PUT(p, "\",\"avatar_url\":\"https://avatars.githubusercontent.com/u/");
        p = gu_put_uint(p, o->id);
        p = GU_PUT(p, "?\"}");
    }
    return GU_PUT(p, "}\n");
}

void ghevents_row(ghevents_ctx *g, qr_buf *b)
{
    if (g->row == g->chunk_end)
        chunk_reset(g, g->row / GU_CHUNK_ROWS);
    unsigned char *dst = qr_buf_reserve(b, GHEVENTS_ROW_MAX);
    char *start = dst ? (char *)dst : g->line;
    char *end = render_row(g, start);
    g->row++;
    if (dst)
        b->len += (size_t)(end - start);
}

void ghevents_seek(ghevents_ctx *g, uint64_t row)
{
    chunk_reset(g, row / GU_CHUNK_ROWS);
    while (g->row < row) {
        render_row(g, g->line);
        g->row++;
    }
}

uint64_t ghevents_next_row(const ghevents_ctx *g) { return g->row; }

ghevents_ctx *ghevents_new(uint64_t seed, uint64_t first_row)
{
    pthread_once(&tables_once, build_tables);
    ghevents_ctx *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->seed = seed;
    g->user_key = gu_mix64(seed ^ 0x7573657273ULL);
    g->org_key = gu_mix64(seed ^ 0x6f726773ULL);
    g->repo_key = gu_mix64(seed ^ 0x7265706f73ULL);
    ghevents_seek(g, first_row);
    return g;
}

void ghevents_free(ghevents_ctx *g) { free(g); }

/* ---------- streaming to a file descriptor ---------- */

static void *gh_open(uint64_t seed) { return ghevents_new(seed, 0); }

static void gh_chunk(void *gen, uint64_t first, uint64_t last, qr_buf *b)
{
    ghevents_ctx *g = gen;
    ghevents_seek(g, first);
    for (uint64_t r = first; r < last; r++)
        ghevents_row(g, b);
}

static void gh_close(void *gen) { ghevents_free(gen); }

static const gu_dataset gh_dataset = {"github_events", GU_CHUNK_ROWS, gh_open, gh_chunk, gh_close};

int ghevents_write_ndjson(int fd, uint64_t rows, uint64_t seed, int threads, qr_err *e)
{
    return gu_write_ndjson(fd, rows, seed, threads, &gh_dataset, e);
}
