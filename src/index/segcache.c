/* segcache.c - the open-segment cache (see segcache.h).
 *
 * Invariants, all under c->mu:
 * - An entry is *listed* (in the hash table, counted in c->count and, once
 *   open, c->bytes) or *detached* (evicted, invalidated, or its open
 *   failed). Whoever drops a detached entry's last reference frees it.
 * - A listed entry nobody holds is on the idle list, most recently released
 *   first; a held one is not. Eviction takes the idle list's tail, so it
 *   never touches a held entry.
 * - state OPENING: the thread that missed is opening the file with the lock
 *   released; other acquirers take a reference and wait on c->opened.
 * - Entries point to their table's tabkey, which lives while any entry
 *   (listed or not yet freed) does: lookups compare the directory's bytes
 *   once per call, then entries by the tabkey's address.
 * Files are opened and closed with the lock released: whoever detaches an
 * idle entry collects it and closes it after unlocking.
 */
#include "index/segcache.h"

#include "index/deletes.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

enum { ST_OPENING, ST_READY, ST_FAILED };

/* A table directory the cache has entries of. */
typedef struct tabkey {
    struct tabkey *next;
    uint64_t hash;    /* of the directory's bytes */
    uint32_t entries; /* entries pointing here */
    size_t len;
    char dir[];
} tabkey;

/* Three parts on their own cache lines: what every holder reads (written
 * only before the entry is published, and fopen once per field), what the
 * cache's lock guards (refcounts, lists: written by every acquire and
 * release), and the reader pool. A search's workers then read an entry
 * without pulling in the line its acquirer wrote. */
struct qr_segref {
    qr_segment *seg;     /* ST_READY */
    qr_invfield *fields; /* by section position (seg->nsecs) */
    qr_segcache *c;
    uint8_t fopen[QR_SEG_MAX_SECTIONS_PUBLIC]; /* fields[i] is open (release
                                                * store / acquire load) */
    _Alignas(64) tabkey *tab;                  /* under c->mu from here */
    uint64_t id, gen, hash; /* gen: the deletion file's generation (0: none) */
    qr_seg_entry ent;       /* the manifest entry it was opened for */
    qr_segref *hnext;       /* hash chain (listed) */
    qr_segref *prev, *next; /* idle list (listed, refs == 0); next: free list */
    uint32_t refs;
    uint8_t state, listed;
    uint64_t bytes;                   /* mapped bytes counted in c->bytes (0 until then) */
    qr_err err;                       /* ST_FAILED: why (written by the opener, read once failed) */
    _Alignas(64) pthread_mutex_t fmu; /* serialises opening fields; guards the pool */
    qr_colreader **idle_rd;           /* column readers nobody uses, any columns */
    uint32_t nidle_rd, cap_idle_rd;
};

struct qr_segcache {
    pthread_mutex_t mu;
    pthread_cond_t opened; /* an OPENING entry became READY or FAILED */
    qr_segcache_opts o;
    qr_segref **bucket;
    uint64_t mask;
    qr_segref idle; /* sentinel: idle.next most recently released */
    tabkey *tabs;
    uint32_t count, held;
    uint64_t bytes;
    qr_segcache_stats st;                      /* the counters */
    atomic_uint idle_readers;                  /* in every entry's pool */
    atomic_ullong reader_opens, reader_reuses; /* counters */
    qr_kmcache *keymaps;                       /* shared keys of the entries' fields */
};

qr_segcache *qr_segcache_new(const qr_segcache_opts *o, qr_err *e)
{
    qr_segcache *c = calloc(1, sizeof *c);
    if (c && o)
        c->o = *o;
    if (c && !c->o.max_segments)
        c->o.max_segments = QR_SEGCACHE_DEFAULT_SEGMENTS;
    if (c && !c->o.max_readers)
        c->o.max_readers = QR_SEGCACHE_DEFAULT_READERS;
    uint64_t nb = 64;
    while (c && nb < 2ull * c->o.max_segments && nb < (1u << 20))
        nb *= 2;
    if (c && !(c->keymaps = qr_kmcache_new(e))) {
        free(c);
        return NULL;
    }
    if (!c || !(c->bucket = calloc(nb, sizeof *c->bucket))) {
        if (c)
            qr_kmcache_free(c->keymaps);
        free(c);
        qr_errf(e, QR_E_NOMEM, "segment cache: out of memory");
        return NULL;
    }
    c->mask = nb - 1;
    c->idle.next = c->idle.prev = &c->idle;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->opened, NULL);
    return c;
}

static void entry_free(qr_segref *x)
{
    for (uint32_t i = 0; i < x->nidle_rd; i++)
        qr_colr_close(x->idle_rd[i]);
    atomic_fetch_sub(&x->c->idle_readers, x->nidle_rd);
    free(x->idle_rd);
    for (uint32_t i = 0; x->fields && i < x->seg->nsecs; i++)
        if (x->fopen[i])
            qr_invfield_close(&x->fields[i]);
    free(x->fields);
    qr_seg_close(x->seg);
    pthread_mutex_destroy(&x->fmu);
    free(x);
}

/* Entries collected under the lock, freed after it is released. */
static void free_list(qr_segref *x)
{
    while (x) {
        qr_segref *next = x->next;
        entry_free(x);
        x = next;
    }
}

void qr_segcache_free(qr_segcache *c)
{
    if (!c)
        return;
    for (uint64_t b = 0; b <= c->mask; b++)
        for (qr_segref *x = c->bucket[b], *next; x; x = next) {
            next = x->hnext;
            entry_free(x);
        }
    for (tabkey *t = c->tabs, *next; t; t = next) {
        next = t->next;
        free(t);
    }
    free(c->bucket);
    qr_kmcache_free(c->keymaps);
    pthread_cond_destroy(&c->opened);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static uint64_t dir_hash(const char *dir, size_t dl) { return qr_hash64(dir, dl); }

/* An entry is a segment file with one generation of its deletions: a
 * DELETE makes a new key, so a query never sees bits another snapshot
 * committed. */
static uint64_t key_hash(uint64_t dh, uint64_t id, uint64_t gen)
{
    uint64_t h = dh ^ (id * 0x9E3779B97F4A7C15ull) ^ (gen * 0xC2B2AE3D27D4EB4Full);
    return h ^ (h >> 29);
}

static tabkey *tab_find(const qr_segcache *c, const char *dir, size_t dl, uint64_t dh)
{
    for (tabkey *t = c->tabs; t; t = t->next)
        if (t->hash == dh && t->len == dl && memcmp(t->dir, dir, dl) == 0)
            return t;
    return NULL;
}

static tabkey *tab_new(qr_segcache *c, const char *dir, size_t dl, uint64_t dh)
{
    tabkey *t = calloc(1, sizeof *t + dl + 1);
    if (!t)
        return NULL;
    memcpy(t->dir, dir, dl + 1);
    t->len = dl;
    t->hash = dh;
    t->next = c->tabs;
    c->tabs = t;
    return t;
}

/* One entry (or caller) less on t: the last frees it. */
static void tab_put(qr_segcache *c, tabkey *t)
{
    if (--t->entries)
        return;
    tabkey **pp = &c->tabs;
    while (*pp != t)
        pp = &(*pp)->next;
    *pp = t->next;
    free(t);
}

static qr_segref *find(const qr_segcache *c, const tabkey *t, uint64_t h, uint64_t id,
                       uint64_t gen)
{
    for (qr_segref *x = c->bucket[h & c->mask]; x; x = x->hnext)
        if (x->hash == h && x->id == id && x->gen == gen && x->tab == t)
            return x;
    return NULL;
}

/* x is unreferenced and detached: collect it on *fl, to be freed unlocked. */
static void to_free(qr_segcache *c, qr_segref *x, qr_segref **fl)
{
    x->next = *fl;
    *fl = x;
    c->st.closed += x->seg != NULL;
    tab_put(c, x->tab);
    x->tab = NULL;
}

static void idle_unlink(qr_segref *x)
{
    x->prev->next = x->next;
    x->next->prev = x->prev;
    x->prev = x->next = NULL;
}

static void idle_push(qr_segcache *c, qr_segref *x)
{
    x->next = c->idle.next;
    x->prev = &c->idle;
    c->idle.next->prev = x;
    c->idle.next = x;
}

/* Take listed entry x out of the cache. An idle one goes on *fl (to be
 * closed by the caller once unlocked); a held one is closed by its last
 * release. */
static void detach(qr_segcache *c, qr_segref *x, qr_segref **fl)
{
    qr_segref **pp = &c->bucket[x->hash & c->mask];
    while (*pp != x)
        pp = &(*pp)->hnext;
    *pp = x->hnext;
    x->hnext = NULL;
    x->listed = 0;
    c->count--;
    c->bytes -= x->bytes;
    if (x->refs) {
        c->held--;
        return;
    }
    idle_unlink(x);
    to_free(c, x, fl);
}

static int over_bounds(const qr_segcache *c)
{
    return c->count > c->o.max_segments || (c->o.max_bytes && c->bytes > c->o.max_bytes);
}

/* Evict idle entries, least recently released first, until within bounds. */
static void trim(qr_segcache *c, qr_segref **fl)
{
    while (over_bounds(c) && c->idle.prev != &c->idle) {
        detach(c, c->idle.prev, fl);
        c->st.evictions++;
    }
}

static void ref_locked(qr_segcache *c, qr_segref *x)
{
    if (x->refs++ == 0 && x->listed) {
        idle_unlink(x);
        c->held++;
    }
}

static void unref_locked(qr_segcache *c, qr_segref *x, qr_segref **fl)
{
    if (--x->refs)
        return;
    if (x->listed) {
        c->held--;
        idle_push(c, x);
        trim(c, fl);
    } else {
        to_free(c, x, fl);
    }
}

/* Open x's file (the lock is not held): 0, or -1 with x->err set. */
static int open_entry(qr_segref *x)
{
    char path[PATH_MAX];
    qr_seg_path_in(x->tab->dir, x->id, path, sizeof path); /* x holds its tabkey */
    qr_err_clear(&x->err);
    qr_segment *s = qr_seg_open(path, &x->err);
    if (!s)
        return -1;
    if (x->gen && (s->rows != x->ent.rows || qr_del_attach(x->tab->dir, &x->ent, s, &x->err) != 0)) {
        if (s->rows != x->ent.rows)
            qr_errf(&x->err, QR_E_CORRUPT, "segment %s has %llu rows, the manifest says %llu",
                    path, (unsigned long long)s->rows, (unsigned long long)x->ent.rows);
        qr_seg_close(s);
        return -1;
    }
    x->fields = calloc(s->nsecs ? s->nsecs : 1, sizeof *x->fields);
    if (!x->fields) {
        qr_seg_close(s);
        return qr_errf(&x->err, QR_E_NOMEM, "segment %s: out of memory", path);
    }
    x->seg = s; /* x->bytes is set under the lock, when counted */
    return 0;
}

/* The entry of manifest entry ent (its id and deletions) in dir. */
static qr_segref *acquire_entry(qr_segcache *c, const char *dir, const qr_seg_entry *ent,
                                qr_err *e)
{
    uint64_t id = ent->id, gen = ent->del_gen;
    size_t dl = strlen(dir);
    uint64_t dh = dir_hash(dir, dl), h = key_hash(dh, id, gen);
    qr_segref *fl = NULL;
    pthread_mutex_lock(&c->mu);
    tabkey *t = tab_find(c, dir, dl, dh);
    qr_segref *x = t ? find(c, t, h, id, gen) : NULL;
    if (x) {
        ref_locked(c, x);
        while (x->state == ST_OPENING)
            pthread_cond_wait(&c->opened, &c->mu);
        if (x->state == ST_READY) {
            c->st.hits++;
            pthread_mutex_unlock(&c->mu);
            return x;
        }
        *e = x->err; /* the open this thread waited for failed */
        unref_locked(c, x, &fl);
        pthread_mutex_unlock(&c->mu);
        free_list(fl);
        return NULL;
    }
    if (!t && !(t = tab_new(c, dir, dl, dh))) {
        pthread_mutex_unlock(&c->mu);
        qr_errf(e, QR_E_NOMEM, "segment cache: out of memory");
        return NULL;
    }
    if (!(x = aligned_alloc(_Alignof(qr_segref), sizeof *x))) {
        t->entries++; /* (a new tabkey goes with the last entry) */
        tab_put(c, t);
        pthread_mutex_unlock(&c->mu);
        qr_errf(e, QR_E_NOMEM, "segment cache: out of memory");
        return NULL;
    }
    memset(x, 0, sizeof *x);
    x->tab = t;
    t->entries++;
    x->c = c;
    x->id = id;
    x->gen = gen;
    x->ent = *ent;
    x->hash = h;
    x->refs = 1;
    x->state = ST_OPENING;
    x->listed = 1;
    pthread_mutex_init(&x->fmu, NULL);
    x->hnext = c->bucket[h & c->mask];
    c->bucket[h & c->mask] = x;
    c->count++;
    c->held++;
    c->st.misses++;
    pthread_mutex_unlock(&c->mu);

    int rc = open_entry(x);

    pthread_mutex_lock(&c->mu);
    if (rc == 0) {
        x->state = ST_READY;
        if (x->listed) { /* (an invalidate may have detached it meanwhile) */
            x->bytes = x->seg->len;
            c->bytes += x->bytes;
            trim(c, &fl);
        }
    } else {
        x->state = ST_FAILED;
        *e = x->err;
        if (x->listed)
            detach(c, x, &fl);
        unref_locked(c, x, &fl);
    }
    pthread_cond_broadcast(&c->opened);
    pthread_mutex_unlock(&c->mu);
    free_list(fl);
    return rc == 0 ? x : NULL;
}

qr_segref *qr_segcache_acquire(qr_segcache *c, const char *dir, uint64_t id, qr_err *e)
{
    qr_seg_entry ent = {.id = id};
    return acquire_entry(c, dir, &ent, e);
}

/* The misses of one acquire_all, opened by the slots of a pool job. */
typedef struct open_job {
    qr_segcache *c;
    const char *dir;
    const qr_manifest *m;
    qr_segref **refs;
    atomic_uint next;
    atomic_int failed;
    qr_err err[QR_POOL_MAX_THREADS + 1]; /* per slot */
    int slot_failed[QR_POOL_MAX_THREADS + 1];
} open_job;

static void open_slot(void *arg, int slot)
{
    open_job *j = arg;
    for (;;) {
        uint32_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->m->nsegs || atomic_load(&j->failed))
            return;
        if (!j->refs[i] &&
            !(j->refs[i] = acquire_entry(j->c, j->dir, &j->m->segs[i], &j->err[slot]))) {
            j->slot_failed[slot] = 1;
            atomic_store(&j->failed, 1);
            return;
        }
    }
}

int qr_segcache_acquire_all(qr_segcache *c, const char *dir, const qr_manifest *m, qr_segref **refs,
                            qr_pool *pool, int threads, qr_err *e)
{
    size_t dl = strlen(dir);
    uint64_t dh = dir_hash(dir, dl);
    pthread_mutex_lock(&c->mu);
    tabkey *t = tab_find(c, dir, dl, dh);
    for (uint32_t i = 0; i < m->nsegs; i++) {
        const qr_seg_entry *g = &m->segs[i];
        qr_segref *x = t ? find(c, t, key_hash(dh, g->id, g->del_gen), g->id, g->del_gen) : NULL;
        refs[i] = NULL;
        if (x && x->state == ST_READY) {
            ref_locked(c, x);
            c->st.hits++;
            refs[i] = x;
        }
    }
    uint32_t misses = 0;
    for (uint32_t i = 0; i < m->nsegs; i++)
        misses += !refs[i];
    pthread_mutex_unlock(&c->mu);
    if (misses) {
        int k = threads < 1 ? 1 : threads > QR_POOL_MAX_THREADS ? QR_POOL_MAX_THREADS : threads;
        if ((uint32_t)k > misses)
            k = (int)misses;
        open_job *j = malloc(sizeof *j);
        if (!j) {
            qr_errf(e, QR_E_NOMEM, "segment cache: out of memory");
            goto fail;
        }
        j->c = c;
        j->dir = dir;
        j->m = m;
        j->refs = refs;
        atomic_init(&j->next, 0);
        atomic_init(&j->failed, 0);
        memset(j->slot_failed, 0, sizeof j->slot_failed);
        qr_pool_run(k > 1 ? pool : NULL, k, open_slot, j);
        int bad = -1;
        for (int s = 0; s < k && bad < 0; s++)
            if (j->slot_failed[s])
                bad = s;
        if (bad >= 0)
            *e = j->err[bad];
        free(j);
        if (bad >= 0)
            goto fail;
    }
    for (uint32_t i = 0; i < m->nsegs; i++) {
        if (refs[i]->seg->rows != m->segs[i].rows) {
            qr_errf(e, QR_E_CORRUPT, "segment %s has %llu rows, the manifest says %llu",
                    refs[i]->seg->path, (unsigned long long)refs[i]->seg->rows,
                    (unsigned long long)m->segs[i].rows);
            goto fail;
        }
    }
    return 0;
fail:
    qr_segcache_release_all(refs, m->nsegs);
    return -1;
}

void qr_segcache_release(qr_segref *r)
{
    if (!r)
        return;
    qr_segcache *c = r->c;
    qr_segref *fl = NULL;
    pthread_mutex_lock(&c->mu);
    unref_locked(c, r, &fl);
    pthread_mutex_unlock(&c->mu);
    free_list(fl);
}

void qr_segcache_release_all(qr_segref **refs, uint32_t n)
{
    qr_segcache *c = NULL;
    qr_segref *fl = NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (!refs[i])
            continue;
        if (refs[i]->c != c) { /* one lock for the handles of one cache */
            if (c)
                pthread_mutex_unlock(&c->mu);
            c = refs[i]->c;
            pthread_mutex_lock(&c->mu);
        }
        unref_locked(c, refs[i], &fl);
        refs[i] = NULL;
    }
    if (c)
        pthread_mutex_unlock(&c->mu);
    free_list(fl);
}

qr_segment *qr_segref_segment(const qr_segref *r) { return r->seg; }

qr_invfield *qr_segref_field(qr_segref *r, uint16_t sec, qr_err *e)
{
    const qr_segment *s = r->seg;
    for (uint32_t i = 0; i < s->nsecs; i++) {
        if (s->secs[i].id != sec)
            continue;
        if (__atomic_load_n(&r->fopen[i], __ATOMIC_ACQUIRE))
            return &r->fields[i];
        int rc = 0;
        pthread_mutex_lock(&r->fmu);
        if (!r->fopen[i]) {
            rc = qr_invfield_open(&r->fields[i], s, sec, e);
            if (rc == 0)
                __atomic_store_n(&r->fopen[i], 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&r->fmu);
        return rc == 0 ? &r->fields[i] : NULL;
    }
    qr_errf(e, QR_E_UNDEFINED_OBJECT,
            "segment %s: has no index %u (the index is newer than the segment)", s->path, sec);
    return NULL;
}

qr_colreader *qr_segref_reader(qr_segref *r, int col, qr_err *e)
{
    qr_colreader *rd = NULL;
    pthread_mutex_lock(&r->fmu);
    for (uint32_t i = r->nidle_rd; i-- > 0;)
        if (qr_colr_col(r->idle_rd[i]) == col) {
            rd = r->idle_rd[i];
            r->idle_rd[i] = r->idle_rd[--r->nidle_rd];
            break;
        }
    pthread_mutex_unlock(&r->fmu);
    if (rd) {
        atomic_fetch_sub(&r->c->idle_readers, 1);
        atomic_fetch_add(&r->c->reader_reuses, 1);
        return rd;
    }
    atomic_fetch_add(&r->c->reader_opens, 1);
    return qr_colr_open(r->seg, col, e);
}

void qr_segref_reader_done(qr_segref *r, qr_colreader *rd)
{
    if (!rd)
        return;
    qr_colr_random(rd, 0); /* as qr_colr_open leaves it */
    qr_segcache *c = r->c;
    if (atomic_fetch_add(&c->idle_readers, 1) >= c->o.max_readers) {
        atomic_fetch_sub(&c->idle_readers, 1);
        qr_colr_close(rd);
        return;
    }
    pthread_mutex_lock(&r->fmu);
    if (r->nidle_rd == r->cap_idle_rd) {
        uint32_t cap = r->cap_idle_rd ? 2 * r->cap_idle_rd : 16;
        qr_colreader **v = realloc(r->idle_rd, sizeof *v * cap);
        if (!v) {
            pthread_mutex_unlock(&r->fmu);
            atomic_fetch_sub(&c->idle_readers, 1);
            qr_colr_close(rd);
            return;
        }
        r->idle_rd = v;
        r->cap_idle_rd = cap;
    }
    r->idle_rd[r->nidle_rd++] = rd;
    pthread_mutex_unlock(&r->fmu);
}

typedef struct idgen {
    uint64_t id, gen;
} idgen;

static int cmp_idgen(const void *a, const void *b)
{
    const idgen *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->gen < y->gen ? -1 : x->gen > y->gen;
}

static int listed_in(const idgen *ids, const qr_manifest *m, uint64_t id, uint64_t gen)
{
    idgen k = {id, gen};
    if (ids)
        return bsearch(&k, ids, m->nsegs, sizeof *ids, cmp_idgen) != NULL;
    for (uint32_t i = 0; i < m->nsegs; i++) /* no memory for the sorted copy */
        if (m->segs[i].id == id && m->segs[i].del_gen == gen)
            return 1;
    return 0;
}

void qr_segcache_invalidate(qr_segcache *c, const char *dir, const qr_manifest *m)
{
    idgen *ids = m ? malloc(sizeof *ids * (m->nsegs ? m->nsegs : 1)) : NULL;
    for (uint32_t i = 0; ids && i < m->nsegs; i++)
        ids[i] = (idgen){m->segs[i].id, m->segs[i].del_gen};
    if (ids)
        qsort(ids, m->nsegs, sizeof *ids, cmp_idgen);
    qr_segref *fl = NULL;
    size_t dl = strlen(dir);
    pthread_mutex_lock(&c->mu);
    tabkey *t = tab_find(c, dir, dl, dir_hash(dir, dl));
    if (t) {
        t->entries++; /* kept while its last entries are detached */
        for (uint64_t b = 0; b <= c->mask; b++)
            for (qr_segref *x = c->bucket[b], *next; x; x = next) {
                next = x->hnext;
                if (x->tab == t && (!m || !listed_in(ids, m, x->id, x->gen))) {
                    detach(c, x, &fl);
                    c->st.invalidated++;
                }
            }
        tab_put(c, t);
    }
    pthread_mutex_unlock(&c->mu);
    free(ids);
    free_list(fl);
}

void qr_segcache_get_stats(qr_segcache *c, qr_segcache_stats *st)
{
    pthread_mutex_lock(&c->mu);
    *st = c->st;
    st->segments = c->count;
    st->held = c->held;
    st->bytes = c->bytes;
    pthread_mutex_unlock(&c->mu);
    st->idle_readers = atomic_load(&c->idle_readers);
    st->reader_opens = atomic_load(&c->reader_opens);
    st->reader_reuses = atomic_load(&c->reader_reuses);
}

qr_kmcache *qr_segref_keymaps(const qr_segref *r) { return r->c->keymaps; }
