/* idem.c - the idempotency store of the HTTP endpoints: per table the
 * hashes of the last create _ids (QH_IDEM_IDS: two generations of sets, so
 * at least the last half and at most all of them), and the answers to the
 * last QH_IDEM_KEYS Idempotency-Keys (bodies QH_IDEM_KEY_BYTES in all).
 *
 * Persisted in DATA/HTTP_IDEMPOTENCY, an append-only log of checksummed
 * records, fsynced before the table commit they belong to:
 *   "QHIDEM1\n", then records: u32 len, u32 check (XXH3 low bits), payload
 *   payload: u8 type (1 batch, 2 tombstone), u8 n + table name, u64 gen,
 *            batch: u32 nids, u64 ids[nids], u32 n + key,
 *                   with a key: u16 status, u8 n + content type, u32 n + body
 * A batch counts only when its table's manifest reached generation gen
 * (the commit it was written for happened) and no tombstone names it (the
 * commit failed); a torn or corrupt tail is cut. The log is read at start
 * and rewritten compacted (atomically), and again whenever it has doubled
 * (at least 16 MiB) while no commit is in flight. The window of a dropped
 * table is forgotten at the next start. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http/http_int.h"
#include "index/table.h"
#include "util/fsutil.h"
#include "util/hash.h"

#define MAGIC "QHIDEM1\n"
#define HALF  (QH_IDEM_IDS / 2)

uint64_t qh_id_hash(const char *id, size_t n)
{
    uint64_t h = qr_hash64(id, n);
    return h < 2 ? h + 2 : h;
}

/* ---- sets ---- */
static int set_grow(qh_u64set *s)
{
    uint32_t nc = s->cap ? s->cap * 2 : 64;
    while (s->n * 2 >= nc)
        nc *= 2;
    uint64_t *ns = calloc(nc, sizeof *ns);
    if (!ns)
        return -1;
    for (uint32_t i = 0; i < s->cap; i++) {
        uint64_t h = s->slot[i];
        if (h < 2)
            continue;
        uint32_t j = (uint32_t)h & (nc - 1);
        while (ns[j])
            j = (j + 1) & (nc - 1);
        ns[j] = h;
    }
    free(s->slot);
    s->slot = ns;
    s->cap = nc;
    s->used = s->n;
    return 0;
}

int qh_u64set_has(const qh_u64set *s, uint64_t h)
{
    if (!s->cap)
        return 0;
    for (uint32_t j = (uint32_t)h & (s->cap - 1);; j = (j + 1) & (s->cap - 1)) {
        if (s->slot[j] == h)
            return 1;
        if (!s->slot[j])
            return 0;
    }
}

int qh_u64set_add(qh_u64set *s, uint64_t h)
{
    if (qh_u64set_has(s, h))
        return 0;
    if ((s->used + 1) * 10 >= (uint64_t)s->cap * 7 && set_grow(s) != 0)
        return -1;
    uint32_t j = (uint32_t)h & (s->cap - 1);
    while (s->slot[j] >= 2)
        j = (j + 1) & (s->cap - 1);
    if (!s->slot[j])
        s->used++;
    s->slot[j] = h;
    s->n++;
    return 0;
}

void qh_u64set_del(qh_u64set *s, uint64_t h)
{
    if (!s->cap)
        return;
    for (uint32_t j = (uint32_t)h & (s->cap - 1); s->slot[j]; j = (j + 1) & (s->cap - 1))
        if (s->slot[j] == h) {
            s->slot[j] = 1;
            s->n--;
            return;
        }
}

void qh_u64set_free(qh_u64set *s)
{
    free(s->slot);
    memset(s, 0, sizeof *s);
}

/* ---- the store ---- */
typedef struct idem_tab {
    char name[64];
    uint64_t gen;           /* the last generation known committed */
    qh_u64set cur, prev;    /* cur: the newest ids (up to HALF) */
    uint64_t *curv, *prevv; /* the same in order (for compaction) */
    uint32_t ncur, nprev;
    int pending; /* a batch between record and settle */
} idem_tab;

typedef struct idem_key {
    char *key;
    uint64_t h;
    char table[64];
    uint64_t gen;
    qh_reply r;
} idem_key;

struct qh_idem {
    pthread_mutex_t mu;
    char path[PATH_MAX];
    int fd;
    uint64_t size, compacted; /* bytes of the log; after the last rewrite */
    idem_tab *tabs;
    uint32_t ntabs;
    idem_key *keys; /* a ring of QH_IDEM_KEYS */
    uint32_t khead, nkeys;
    uint64_t kbytes;
    char **claims; /* keys of running requests */
    uint32_t nclaims;
};

static idem_tab *tab_get(qh_idem *m, const char *name, int add)
{
    for (uint32_t i = 0; i < m->ntabs; i++)
        if (!strcmp(m->tabs[i].name, name))
            return &m->tabs[i];
    if (!add)
        return NULL;
    idem_tab *nt = realloc(m->tabs, sizeof *nt * (m->ntabs + 1));
    if (!nt)
        return NULL;
    m->tabs = nt;
    idem_tab *t = &nt[m->ntabs++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    return t;
}

static int tab_add_id(idem_tab *t, uint64_t h)
{
    if (qh_u64set_has(&t->cur, h) || qh_u64set_has(&t->prev, h))
        return 0;
    if (t->ncur >= HALF) { /* the older half is forgotten */
        qh_u64set_free(&t->prev);
        free(t->prevv);
        t->prev = t->cur;
        t->prevv = t->curv;
        t->nprev = t->ncur;
        memset(&t->cur, 0, sizeof t->cur);
        t->curv = NULL;
        t->ncur = 0;
    }
    if (!t->curv && !(t->curv = malloc(sizeof *t->curv * HALF)))
        return -1;
    if (qh_u64set_add(&t->cur, h) != 0)
        return -1;
    t->curv[t->ncur++] = h;
    return 0;
}

static void key_free(idem_key *k)
{
    free(k->key);
    free(k->r.body);
    memset(k, 0, sizeof *k);
}

static idem_key *key_find(qh_idem *m, const char *key)
{
    uint64_t h = qr_hash64(key, strlen(key));
    for (uint32_t i = 0; i < m->nkeys; i++) {
        idem_key *k = &m->keys[i];
        if (k->key && k->h == h && !strcmp(k->key, key))
            return k;
    }
    return NULL;
}

/* Keep key's answer (copied), evicting the oldest past the bounds. */
static int key_put(qh_idem *m, const char *key, const char *table, uint64_t gen, const qh_reply *r)
{
    idem_key *old = key_find(m, key);
    if (old) {
        m->kbytes -= old->r.n;
        key_free(old);
    }
    idem_key k = {0};
    k.key = strdup(key);
    k.h = qr_hash64(key, strlen(key));
    snprintf(k.table, sizeof k.table, "%s", table);
    k.gen = gen;
    k.r.status = r->status;
    snprintf(k.r.ctype, sizeof k.r.ctype, "%s", r->ctype);
    k.r.n = r->n;
    k.r.body = malloc(r->n ? r->n : 1);
    if (!k.key || !k.r.body) {
        key_free(&k);
        return -1;
    }
    if (r->n)
        memcpy(k.r.body, r->body, r->n);
    if (m->nkeys < QH_IDEM_KEYS) {
        m->keys[m->nkeys++] = k;
    } else {
        m->kbytes -= m->keys[m->khead].r.n;
        key_free(&m->keys[m->khead]);
        m->keys[m->khead] = k;
        m->khead = (m->khead + 1) % QH_IDEM_KEYS;
    }
    m->kbytes += r->n;
    for (uint32_t i = 0; m->kbytes > QH_IDEM_KEY_BYTES && i < m->nkeys; i++) {
        idem_key *e = &m->keys[(m->khead + i) % m->nkeys];
        if (e->key && strcmp(e->key, key) != 0) {
            m->kbytes -= e->r.n;
            key_free(e);
        }
    }
    return 0;
}

/* ---- records ---- */
static void put_str8(qr_buf *b, const char *s)
{
    size_t n = strlen(s);
    qr_buf_put_u8(b, (uint8_t)n);
    qr_buf_put(b, s, n);
}

static void rec_begin(qr_buf *b) { qr_buf_put_u64(b, 0); }
static void rec_end(qr_buf *b, size_t at)
{
    uint32_t len = (uint32_t)(b->len - at - 8);
    if (b->oom)
        return;
    qr_store_u32(b->p + at, len);
    qr_store_u32(b->p + at + 4, (uint32_t)qr_hash64(b->p + at + 8, len));
}

static void rec_batch(qr_buf *b, const char *table, uint64_t gen, const uint64_t *ids, uint32_t n,
                      const char *key, const qh_reply *r)
{
    size_t at = b->len;
    rec_begin(b);
    qr_buf_put_u8(b, 1);
    put_str8(b, table ? table : "");
    qr_buf_put_u64(b, gen);
    qr_buf_put_u32(b, n);
    for (uint32_t i = 0; i < n; i++)
        qr_buf_put_u64(b, ids[i]);
    size_t kn = key ? strlen(key) : 0;
    qr_buf_put_u32(b, (uint32_t)kn);
    qr_buf_put(b, key, kn);
    if (kn) {
        qr_buf_put_u16(b, (uint16_t)r->status);
        put_str8(b, r->ctype);
        qr_buf_put_u32(b, (uint32_t)r->n);
        qr_buf_put(b, r->body, r->n);
    }
    rec_end(b, at);
}

static void rec_tomb(qr_buf *b, const char *table, uint64_t gen)
{
    size_t at = b->len;
    rec_begin(b);
    qr_buf_put_u8(b, 2);
    put_str8(b, table);
    qr_buf_put_u64(b, gen);
    rec_end(b, at);
}

/* Append and fsync; the log grows only by whole records. */
static int log_write(qh_idem *m, const qr_buf *b, qr_err *e)
{
    if (b->oom)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    if (qr_write_all(m->fd, b->p, b->len, m->path, e) != 0 ||
        qr_fsync_file(m->fd, m->path, e) != 0) {
        if (ftruncate(m->fd, (off_t)m->size) != 0) { /* keep the log whole */
        }
        return -1;
    }
    m->size += b->len;
    return 0;
}

/* The whole state as records (the compacted log). */
static void state_encode(qh_idem *m, qr_buf *b)
{
    qr_buf_put(b, MAGIC, 8);
    for (uint32_t i = 0; i < m->ntabs; i++) {
        idem_tab *t = &m->tabs[i];
        uint32_t n = 0;
        uint64_t *ids = malloc(sizeof *ids * (t->nprev + t->ncur + 1));
        if (!ids) {
            b->oom = 1;
            return;
        }
        for (uint32_t j = 0; j < t->nprev; j++)
            if (qh_u64set_has(&t->prev, t->prevv[j]))
                ids[n++] = t->prevv[j];
        for (uint32_t j = 0; j < t->ncur; j++)
            if (qh_u64set_has(&t->cur, t->curv[j]))
                ids[n++] = t->curv[j];
        if (n)
            rec_batch(b, t->name, t->gen, ids, n, NULL, NULL);
        free(ids);
    }
    for (uint32_t i = 0; i < m->nkeys; i++) {
        idem_key *k = &m->keys[(m->khead + i) % m->nkeys];
        if (k->key)
            rec_batch(b, k->table, k->gen, NULL, 0, k->key, &k->r);
    }
}

static int rewrite(qh_idem *m, qr_err *e)
{
    qr_buf b;
    qr_buf_init(&b);
    state_encode(m, &b);
    int rc = b.oom ? qr_errf(e, QR_E_NOMEM, "out of memory")
                   : qr_write_file_atomic(m->path, b.p, b.len, e);
    if (rc == 0) {
        int fd = open(m->path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd < 0) {
            rc = qr_errf(e, QR_E_IO, "open %s: %s", m->path, strerror(errno));
        } else {
            if (m->fd >= 0)
                close(m->fd);
            m->fd = fd;
            m->size = m->compacted = b.len;
        }
    }
    qr_buf_free(&b);
    return rc;
}

/* ---- loading ---- */
typedef struct rec {
    int type;
    char table[256];
    uint64_t gen;
    uint32_t nids;
    const unsigned char *ids;
    char *key; /* malloc'ed, or NULL */
    qh_reply r;
} rec;

static int rec_parse(const unsigned char *p, size_t n, rec *r)
{
    qr_rd d;
    qr_rd_init(&d, p, n);
    memset(r, 0, sizeof *r);
    r->type = qr_rd_u8(&d);
    uint8_t tl = qr_rd_u8(&d);
    const unsigned char *tp = qr_rd_bytes(&d, tl);
    r->gen = qr_rd_u64(&d);
    if (d.bad || (r->type != 1 && r->type != 2))
        return -1;
    memcpy(r->table, tp, tl);
    r->table[tl] = 0;
    if (r->type == 2)
        return qr_rd_left(&d) == 0 ? 0 : -1;
    r->nids = qr_rd_u32(&d);
    if (d.bad || r->nids > qr_rd_left(&d) / 8)
        return -1;
    r->ids = qr_rd_bytes(&d, (size_t)r->nids * 8);
    uint32_t kl = qr_rd_u32(&d);
    const unsigned char *kp = kl <= qr_rd_left(&d) ? qr_rd_bytes(&d, kl) : NULL;
    if (d.bad || !kp)
        return -1;
    if (kl) {
        r->r.status = qr_rd_u16(&d);
        uint8_t cl = qr_rd_u8(&d);
        const unsigned char *cp = qr_rd_bytes(&d, cl);
        uint32_t bl = qr_rd_u32(&d);
        r->r.body = (unsigned char *)(bl <= qr_rd_left(&d) ? qr_rd_bytes(&d, bl) : NULL);
        r->r.n = bl;
        if (d.bad || !r->r.body || cl >= sizeof r->r.ctype || qr_rd_left(&d) != 0)
            return -1;
        memcpy(r->r.ctype, cp, cl);
        r->key = strndup((const char *)kp, kl);
        if (!r->key)
            return -1;
    }
    return qr_rd_left(&d) == 0 ? 0 : -1;
}

typedef struct tabgen {
    char name[256];
    uint64_t gen;
    int exists;
} tabgen;

/* The table's manifest generation now (exists 0: no such table). */
static tabgen *gen_of(const char *datadir, tabgen **v, uint32_t *n, const char *name)
{
    for (uint32_t i = 0; i < *n; i++)
        if (!strcmp((*v)[i].name, name))
            return &(*v)[i];
    tabgen *nv = realloc(*v, sizeof *nv * (*n + 1));
    if (!nv)
        return NULL;
    *v = nv;
    tabgen *g = &nv[(*n)++];
    snprintf(g->name, sizeof g->name, "%s", name);
    qr_err e;
    qr_table *t = qr_table_open(datadir, name, QR_TABLE_READ, &e);
    g->exists = t != NULL;
    g->gen = t ? t->man.generation : 0;
    qr_table_close(t);
    return g;
}

static int tombed(const unsigned char *p, size_t n, const rec *r)
{
    /* a tombstone later in the log for (table, gen) */
    size_t off = 8;
    while (off + 8 <= n) {
        uint32_t len = qr_load_u32(p + off);
        if (len > n - off - 8)
            break;
        rec t;
        if (p[off + 8] == 2 && rec_parse(p + off + 8, len, &t) == 0 && t.gen == r->gen &&
            !strcmp(t.table, r->table))
            return 1;
        off += 8 + (size_t)len;
    }
    return 0;
}

static int load(qh_idem *m, const char *datadir, qr_err *e)
{
    unsigned char *p = NULL;
    size_t n = 0;
    if (access(m->path, F_OK) != 0)
        return 0;
    if (qr_read_file(m->path, &p, &n, e) != 0)
        return -1;
    tabgen *gens = NULL;
    uint32_t ngens = 0;
    int rc = 0;
    size_t off = 8;
    if (n < 8 || memcmp(p, MAGIC, 8) != 0)
        off = n; /* not ours or torn at birth: start empty */
    /* the valid prefix: records whose length and checksum hold */
    size_t end = off;
    while (end + 8 <= n) {
        uint32_t len = qr_load_u32(p + end);
        if (len > n - end - 8 || qr_load_u32(p + end + 4) != (uint32_t)qr_hash64(p + end + 8, len))
            break;
        end += 8 + (size_t)len;
    }
    int ntomb = 0;
    for (size_t o = off; o < end; o += 8 + qr_load_u32(p + o))
        ntomb += p[o + 8] == 2;
    for (size_t o = off; rc == 0 && o < end; o += 8 + qr_load_u32(p + o)) {
        rec r;
        if (rec_parse(p + o + 8, qr_load_u32(p + o), &r) != 0) {
            free(r.key);
            continue;
        }
        if (r.type == 1) {
            int valid = 1;
            tabgen *g = NULL;
            if (r.table[0]) {
                g = gen_of(datadir, &gens, &ngens, r.table);
                valid = g && g->exists && g->gen >= r.gen && !(ntomb && tombed(p, end, &r));
            }
            if (valid && r.nids) {
                idem_tab *t = tab_get(m, r.table, 1);
                if (!t)
                    rc = qr_errf(e, QR_E_NOMEM, "out of memory");
                for (uint32_t i = 0; rc == 0 && i < r.nids; i++)
                    if (tab_add_id(t, qr_load_u64(r.ids + 8 * (size_t)i)) != 0)
                        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
            }
            if (valid && r.key && key_put(m, r.key, r.table, r.gen, &r.r) != 0)
                rc = qr_errf(e, QR_E_NOMEM, "out of memory");
        }
        free(r.key);
    }
    for (uint32_t i = 0; i < m->ntabs; i++) {
        tabgen *g = gen_of(datadir, &gens, &ngens, m->tabs[i].name);
        m->tabs[i].gen = g ? g->gen : 0;
    }
    free(gens);
    free(p);
    return rc;
}

qh_idem *qh_idem_open(const char *datadir, qr_err *e)
{
    qh_idem *m = calloc(1, sizeof *m);
    if (!m || !(m->keys = calloc(QH_IDEM_KEYS, sizeof *m->keys))) {
        free(m);
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&m->mu, NULL);
    m->fd = -1;
    snprintf(m->path, sizeof m->path, "%s/HTTP_IDEMPOTENCY", datadir);
    if (qr_mkdirs(datadir, e) != 0 || load(m, datadir, e) != 0 || rewrite(m, e) != 0) {
        qh_idem_close(m);
        return NULL;
    }
    return m;
}

void qh_idem_close(qh_idem *m)
{
    if (!m)
        return;
    if (m->fd >= 0)
        close(m->fd);
    for (uint32_t i = 0; i < m->ntabs; i++) {
        qh_u64set_free(&m->tabs[i].cur);
        qh_u64set_free(&m->tabs[i].prev);
        free(m->tabs[i].curv);
        free(m->tabs[i].prevv);
    }
    free(m->tabs);
    for (uint32_t i = 0; i < m->nkeys; i++)
        key_free(&m->keys[i]);
    free(m->keys);
    for (uint32_t i = 0; i < m->nclaims; i++)
        free(m->claims[i]);
    free(m->claims);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

static int claimed(qh_idem *m, const char *key)
{
    for (uint32_t i = 0; i < m->nclaims; i++)
        if (!strcmp(m->claims[i], key))
            return (int)i;
    return -1;
}

int qh_idem_key_claim(qh_idem *m, const char *key, qh_reply *r)
{
    pthread_mutex_lock(&m->mu);
    int rc = 0;
    idem_key *k = claimed(m, key) >= 0 ? NULL : key_find(m, key);
    if (claimed(m, key) >= 0) {
        rc = 2; /* running: its answer (recorded before its commit) is not final yet */
    } else if (k) {
        *r = k->r;
        r->body = malloc(k->r.n ? k->r.n : 1);
        if (r->body) {
            memcpy(r->body, k->r.body, k->r.n);
            rc = 1;
        } else {
            rc = 2; /* out of memory: the client retries */
        }
    } else {
        char **nc = realloc(m->claims, sizeof *nc * (m->nclaims + 1));
        char *d = strdup(key);
        if (nc)
            m->claims = nc;
        if (!nc || !d) {
            free(d);
            rc = 2;
        } else {
            m->claims[m->nclaims++] = d;
        }
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static void release_locked(qh_idem *m, const char *key)
{
    int i = claimed(m, key);
    if (i < 0)
        return;
    free(m->claims[i]);
    m->claims[i] = m->claims[--m->nclaims];
}

void qh_idem_key_release(qh_idem *m, const char *key)
{
    pthread_mutex_lock(&m->mu);
    release_locked(m, key);
    pthread_mutex_unlock(&m->mu);
}

int qh_idem_has_id(qh_idem *m, const char *table, uint64_t h)
{
    pthread_mutex_lock(&m->mu);
    idem_tab *t = tab_get(m, table, 0);
    int has = t && (qh_u64set_has(&t->cur, h) || qh_u64set_has(&t->prev, h));
    pthread_mutex_unlock(&m->mu);
    return has;
}

static int any_pending(const qh_idem *m)
{
    for (uint32_t i = 0; i < m->ntabs; i++)
        if (m->tabs[i].pending)
            return 1;
    return 0;
}

int qh_idem_record(qh_idem *m, const char *table, uint64_t gen, const uint64_t *ids, uint32_t nids,
                   const char *key, const qh_reply *r, qr_err *e)
{
    pthread_mutex_lock(&m->mu);
    qr_err ce;
    if (m->size > (16u << 20) && m->size > 2 * m->compacted && !any_pending(m))
        rewrite(m, &ce); /* a failed compaction leaves the log as it was */
    qr_buf b;
    qr_buf_init(&b);
    rec_batch(&b, table, gen, ids, nids, key, r);
    int rc = log_write(m, &b, e);
    qr_buf_free(&b);
    idem_tab *t = rc == 0 && table ? tab_get(m, table, 1) : NULL;
    if (rc == 0 && table && !t)
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    if (t) {
        t->pending = 1;
        for (uint32_t i = 0; rc == 0 && i < nids; i++)
            if (tab_add_id(t, ids[i]) != 0)
                rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    }
    if (rc == 0 && key && key_put(m, key, table ? table : "", gen, r) != 0)
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    if (rc == 0 && key && !table)
        release_locked(m, key);
    pthread_mutex_unlock(&m->mu);
    if (rc != 0 && table)
        qh_idem_settle(m, table, gen, ids, nids, key, 0);
    return rc;
}

void qh_idem_settle(qh_idem *m, const char *table, uint64_t gen, const uint64_t *ids, uint32_t nids,
                    const char *key, int ok)
{
    pthread_mutex_lock(&m->mu);
    idem_tab *t = tab_get(m, table, 0);
    if (t) {
        t->pending = 0;
        if (ok && gen > t->gen)
            t->gen = gen;
    }
    if (!ok) {
        qr_buf b;
        qr_buf_init(&b);
        rec_tomb(&b, table, gen);
        qr_err e;
        log_write(m, &b, &e); /* at worst the next start keeps a batch that failed */
        qr_buf_free(&b);
        for (uint32_t i = 0; t && i < nids; i++) {
            qh_u64set_del(&t->cur, ids[i]);
            qh_u64set_del(&t->prev, ids[i]);
        }
        idem_key *k = key ? key_find(m, key) : NULL;
        if (k) {
            m->kbytes -= k->r.n;
            key_free(k);
        }
    }
    if (key)
        release_locked(m, key);
    pthread_mutex_unlock(&m->mu);
}
