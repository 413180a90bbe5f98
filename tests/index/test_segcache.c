/* test_segcache.c - the open-segment cache (index/segcache.h) on a table
 * directory of small segments: hits and misses, a failed open not cached,
 * fields opened once for every holder, the count and byte bounds evicting
 * only unheld entries in LRU order, invalidation against a manifest (a held
 * handle stays usable; released, the file is unmapped), many threads
 * acquiring one missing segment opening it once, the reader pool and its
 * bound, and acquire_all refusing a segment whose rows differ from the
 * manifest's. */
#include "testutil.h"

#include <pthread.h>

#include "index/invfmt.h"
#include "index/segcache.h"

enum { NSEGS = 6 };

static char *dir;   /* the table directory */
static char *other; /* a second table directory (same files) */
static uint64_t rows[NSEGS];
static uint64_t seg_bytes[NSEGS]; /* file sizes */

static void seg_file(const char *d, uint64_t id, char *path) { qr_seg_path_in(d, id, path, 4200); }

static int setup(void **st)
{
    (void)st;
    dir = tu_tmpdir();
    other = tu_tmpdir();
    for (uint64_t id = 0; id < NSEGS; id++) {
        qr_buf t;
        qr_buf_init(&t);
        for (int r = 0; r < 50; r++) {
            char line[200];
            int n =
                snprintf(line, sizeof line,
                         "{\"Body\":\"segment %llu row %d failed %s\",\"ServiceName\":\"s%d\"}\n",
                         (unsigned long long)id, r, r % 2 ? "order" : "cache", r % 3);
            qr_buf_put(&t, line, (size_t)n);
        }
        qr_buf_put_u8(&t, 0);
        char name[64], path[4200], p2[4200];
        snprintf(name, sizeof name, "seg-%016llx.qseg", (unsigned long long)id);
        tu_build_segment(dir, name, (const char *)t.p, 100, path);
        seg_file(other, id, p2);
        assert_int_equal(link(path, p2), 0);
        qr_buf_free(&t);
        rows[id] = 50;
        qr_err e;
        qr_segment *s = qr_seg_open(path, &e);
        assert_non_null(s);
        seg_bytes[id] = s->len;
        qr_seg_close(s);
    }
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    tu_rmdir(dir);
    tu_rmdir(other);
    return 0;
}

/* A manifest listing `n` of the ids. */
static qr_manifest manifest_of(const uint64_t *ids, uint32_t n, qr_seg_entry *buf)
{
    for (uint32_t i = 0; i < n; i++)
        buf[i] = (qr_seg_entry){.id = ids[i], .rows = rows[ids[i]]};
    return (qr_manifest){.generation = 1, .next_id = NSEGS, .nsegs = n, .segs = buf};
}

static qr_segcache_stats stats(qr_segcache *c)
{
    qr_segcache_stats s;
    qr_segcache_get_stats(c, &s);
    return s;
}

/* Is `path` mapped in this process? (/proc/self/maps names mapped files.) */
static int mapped(const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[8192];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, path) != NULL;
    fclose(f);
    return found;
}

static void test_hits_misses_and_a_failed_open(void **st)
{
    (void)st;
    qr_err e;
    qr_segcache *c = qr_segcache_new(NULL, &e);
    assert_non_null(c);
    qr_segref *a = qr_segcache_acquire(c, dir, 1, &e);
    assert_non_null(a);
    qr_segref *b = qr_segcache_acquire(c, dir, 1, &e);
    assert_ptr_equal(a, b);
    assert_int_equal(qr_segref_segment(a)->rows, 50);
    qr_segref *o = qr_segcache_acquire(c, other, 1, &e); /* another table: its own entry */
    assert_non_null(o);
    assert_ptr_not_equal(o, a);
    qr_segcache_stats s = stats(c);
    assert_int_equal(s.misses, 2);
    assert_int_equal(s.hits, 1);
    assert_int_equal(s.segments, 2);
    assert_int_equal(s.held, 2);
    assert_int_equal(s.bytes, 2 * seg_bytes[1]);
    qr_segcache_release(a);
    qr_segcache_release(b);
    qr_segcache_release(o);
    s = stats(c);
    assert_int_equal(s.held, 0);
    assert_int_equal(s.segments, 2); /* kept for the next query */
    /* a missing file: an error every time, nothing cached */
    for (int i = 0; i < 2; i++) {
        assert_null(qr_segcache_acquire(c, dir, 99, &e));
        assert_string_equal(e.code, QR_E_IO);
        assert_non_null(strstr(e.msg, "seg-0000000000000063.qseg"));
    }
    s = stats(c);
    assert_int_equal(s.misses, 4);
    assert_int_equal(s.segments, 2);
    assert_int_equal(s.held, 0);
    qr_segcache_free(c);
}

static void test_fields_are_opened_once_for_every_holder(void **st)
{
    (void)st;
    qr_err e;
    qr_segcache *c = qr_segcache_new(NULL, &e);
    qr_segref *a = qr_segcache_acquire(c, dir, 2, &e), *b = qr_segcache_acquire(c, dir, 2, &e);
    qr_invfield *f = qr_segref_field(a, SEC_BODY, &e);
    assert_non_null(f);
    assert_ptr_equal(qr_segref_field(b, SEC_BODY, &e), f);
    assert_ptr_not_equal(qr_segref_field(a, SEC_KW_SERVICE, &e), f);
    qr_terminfo ti;
    assert_int_equal(qr_tdict_lookup(&f->dict, "failed", 6, &ti, &e), 1);
    assert_int_equal(ti.df, 50);
    assert_int_equal(qr_invfield_load_positions(f, &e), 0);
    assert_int_equal(qr_invfield_load_positions(f, &e), 0); /* mapped once, then a no-op */
    assert_null(qr_segref_field(a, 77, &e));
    assert_string_equal(e.code, QR_E_UNDEFINED_OBJECT);
    qr_segcache_release(a);
    /* released and taken again: the entry, and its open field, were kept */
    a = qr_segcache_acquire(c, dir, 2, &e);
    assert_ptr_equal(qr_segref_field(a, SEC_BODY, &e), f);
    qr_segcache_release(a);
    qr_segcache_release(b);
    qr_segcache_free(c);
}

static void test_count_bound_evicts_only_unheld_entries_lru_first(void **st)
{
    (void)st;
    qr_err e;
    qr_segcache_opts o = {.max_segments = 3};
    qr_segcache *c = qr_segcache_new(&o, &e);
    qr_segref *r[NSEGS];
    for (int i = 0; i < 4; i++) /* four held: over the bound, nothing to evict */
        assert_non_null(r[i] = qr_segcache_acquire(c, dir, (uint64_t)i, &e));
    qr_segcache_stats s = stats(c);
    assert_int_equal(s.segments, 4);
    assert_int_equal(s.held, 4);
    assert_int_equal(s.evictions, 0);
    /* each handle still works */
    for (int i = 0; i < 4; i++)
        assert_non_null(qr_segref_field(r[i], SEC_BODY, &e));
    qr_segcache_release(r[2]); /* over the bound: the one released goes */
    s = stats(c);
    assert_int_equal(s.segments, 3);
    assert_int_equal(s.evictions, 1);
    assert_int_equal(s.closed, 1);
    qr_segcache_release(r[0]);
    qr_segcache_release(r[1]);
    qr_segcache_release(r[3]); /* idle, least recent first: 0, 1, 3 */
    s = stats(c);
    assert_int_equal(s.segments, 3);
    assert_int_equal(s.held, 0);
    assert_int_equal(s.evictions, 1);
    /* a miss evicts the least recently released (0) */
    r[4] = qr_segcache_acquire(c, dir, 4, &e);
    s = stats(c);
    assert_int_equal(s.evictions, 2);
    uint64_t misses = s.misses;
    qr_segcache_release(qr_segcache_acquire(c, dir, 1, &e)); /* hit: 1 becomes the most recent */
    qr_segcache_release(qr_segcache_acquire(c, dir, 3, &e)); /* hit */
    assert_int_equal(stats(c).misses, misses);
    qr_segcache_release(qr_segcache_acquire(c, dir, 0, &e)); /* evicted: a miss; evicts 1 */
    assert_int_equal(stats(c).misses, misses + 1);
    qr_segcache_release(qr_segcache_acquire(c, dir, 3, &e)); /* still there */
    assert_int_equal(stats(c).misses, misses + 1);
    qr_segcache_release(qr_segcache_acquire(c, dir, 1, &e)); /* was evicted */
    assert_int_equal(stats(c).misses, misses + 2);
    qr_segcache_release(r[4]);
    s = stats(c);
    assert_int_equal(s.segments, 3);
    assert_int_equal(s.bytes, seg_bytes[1] + seg_bytes[3] + seg_bytes[4]);
    qr_segcache_free(c);
}

static void test_byte_bound(void **st)
{
    (void)st;
    qr_err e;
    uint64_t most = 0; /* two of the largest fit, three never do */
    for (int i = 0; i < NSEGS; i++)
        most = seg_bytes[i] > most ? seg_bytes[i] : most;
    qr_segcache_opts o = {.max_segments = 100, .max_bytes = 2 * most};
    qr_segcache *c = qr_segcache_new(&o, &e);
    for (uint64_t i = 0; i < NSEGS; i++) {
        qr_segcache_release(qr_segcache_acquire(c, dir, i, &e));
        qr_segcache_stats s = stats(c);
        assert_true(s.bytes <= 2 * most);
        assert_int_equal(s.segments, i < 2 ? i + 1 : 2);
        assert_int_equal(s.bytes, seg_bytes[i] + (i ? seg_bytes[i - 1] : 0));
    }
    assert_int_equal(stats(c).evictions, NSEGS - 2);
    qr_segcache_free(c);
}

static void test_invalidation_keeps_held_handles_and_closes_at_release(void **st)
{
    (void)st;
    qr_err e;
    /* a private copy of segment 0 to delete */
    char *tdir = tu_tmpdir(), src[4200], dst[4200];
    seg_file(dir, 0, src);
    seg_file(tdir, 0, dst);
    assert_int_equal(link(src, dst), 0);
    seg_file(dir, 1, src);
    char dst1[4200];
    seg_file(tdir, 1, dst1);
    assert_int_equal(link(src, dst1), 0);

    qr_segcache *c = qr_segcache_new(NULL, &e);
    qr_segref *h0 = qr_segcache_acquire(c, tdir, 0, &e);
    qr_segref *h1 = qr_segcache_acquire(c, tdir, 1, &e);
    qr_segcache_release(h1);                                   /* 1 idle, 0 held */
    qr_segcache_release(qr_segcache_acquire(c, other, 0, &e)); /* another table's 0 */
    assert_non_null(qr_segref_field(h0, SEC_BODY, &e));
    assert_true(mapped(dst));
    /* the manifest now lists neither: 1 is closed now, 0 when released */
    uint64_t none[] = {5};
    qr_seg_entry buf[1];
    qr_manifest m = manifest_of(none, 1, buf);
    qr_segcache_invalidate(c, tdir, &m);
    qr_segcache_stats s = stats(c);
    assert_int_equal(s.invalidated, 2);
    assert_int_equal(s.segments, 1); /* other's 0 */
    assert_int_equal(s.held, 0);
    assert_false(mapped(dst1));
    assert_true(mapped(dst));
    /* the held handle still searches */
    qr_invfield *f = qr_segref_field(h0, SEC_BODY, &e);
    qr_terminfo ti;
    assert_int_equal(qr_tdict_lookup(&f->dict, "failed", 6, &ti, &e), 1);
    qr_colreader *rd = qr_segref_reader(h0, 0, &e);
    assert_non_null(rd);
    qr_segref_reader_done(h0, rd);
    /* a new acquire opens the file afresh (the old entry left the cache) */
    qr_segref *again = qr_segcache_acquire(c, tdir, 0, &e);
    assert_non_null(again);
    assert_ptr_not_equal(again, h0);
    qr_segcache_release(again);
    qr_segcache_invalidate(c, tdir, NULL); /* drop the whole table: the fresh one goes */
    assert_int_equal(stats(c).segments, 1);
    /* delete the file while held: released, it is unmapped */
    assert_int_equal(unlink(dst), 0);
    assert_true(mapped(dst));
    uint64_t closed = stats(c).closed;
    qr_segcache_release(h0);
    assert_int_equal(stats(c).closed, closed + 1);
    assert_false(mapped(dst));
    assert_int_equal(stats(c).idle_readers, 0); /* its pooled reader went with it */
    assert_null(qr_segcache_acquire(c, tdir, 0, &e));
    assert_string_equal(e.code, QR_E_IO);
    qr_segcache_free(c);
    tu_rmdir(tdir);
}

typedef struct racer {
    qr_segcache *c;
    pthread_barrier_t *go;
    qr_segref *got;
    qr_invfield *field;
} racer;

static void *race_acquire(void *arg)
{
    racer *r = arg;
    qr_err e;
    pthread_barrier_wait(r->go);
    r->got = qr_segcache_acquire(r->c, dir, 5, &e);
    if (r->got)
        r->field = qr_segref_field(r->got, SEC_BODY, &e);
    return NULL;
}

static void test_concurrent_acquirers_of_a_missing_segment_open_it_once(void **st)
{
    (void)st;
    enum { T = 8 };
    for (int round = 0; round < 20; round++) {
        qr_err e;
        qr_segcache *c = qr_segcache_new(NULL, &e);
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, T);
        pthread_t tid[T];
        racer r[T];
        for (int t = 0; t < T; t++) {
            r[t] = (racer){c, &go, NULL, NULL};
            assert_int_equal(pthread_create(&tid[t], NULL, race_acquire, &r[t]), 0);
        }
        for (int t = 0; t < T; t++)
            pthread_join(tid[t], NULL);
        for (int t = 0; t < T; t++) {
            assert_non_null(r[t].got);
            assert_ptr_equal(r[t].got, r[0].got);
            assert_non_null(r[t].field);
            assert_ptr_equal(r[t].field, r[0].field);
        }
        qr_segcache_stats s = stats(c);
        assert_int_equal(s.misses, 1);
        assert_int_equal(s.hits, T - 1);
        assert_int_equal(s.held, 1);
        for (int t = 0; t < T; t++)
            qr_segcache_release(r[t].got);
        assert_int_equal(stats(c).held, 0);
        pthread_barrier_destroy(&go);
        qr_segcache_free(c);
    }
}

static void test_reader_pool_reuses_and_is_bounded(void **st)
{
    (void)st;
    qr_err e;
    qr_segcache_opts o = {.max_readers = 2};
    qr_segcache *c = qr_segcache_new(&o, &e);
    qr_segref *h = qr_segcache_acquire(c, dir, 3, &e);
    int body = qr_seg_col(qr_segref_segment(h), "Body");
    assert_true(body >= 0);
    qr_colreader *a = qr_segref_reader(h, body, &e), *b = qr_segref_reader(h, body, &e),
                 *x = qr_segref_reader(h, 0, &e);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(x);
    assert_ptr_not_equal(a, b);
    qr_colr_random(a, 1);
    qr_segref_reader_done(h, a);
    qr_segref_reader_done(h, b);
    qr_segref_reader_done(h, x); /* a third idle one: over the bound, closed */
    qr_segcache_stats s = stats(c);
    assert_int_equal(s.idle_readers, 2);
    assert_int_equal(s.reader_opens, 3);
    qr_colreader *again = qr_segref_reader(h, body, &e);
    assert_true(again == a || again == b);
    assert_int_equal(stats(c).reader_reuses, 1);
    qr_slice v;
    assert_int_equal(qr_colr_bytes(again, 7, &v, &e), 0);
    assert_non_null(v.p);
    assert_non_null(memmem(v.p, v.n, "row", 3));
    qr_segref_reader_done(h, again);
    qr_segref_reader_done(h, NULL);
    qr_segcache_release(h);
    qr_segcache_free(c); /* closes the pooled readers with their entry */
}

static void test_acquire_all_checks_the_manifest_rows(void **st)
{
    (void)st;
    qr_err e;
    qr_segcache *c = qr_segcache_new(NULL, &e);
    uint64_t ids[] = {4, 0, 2};
    qr_seg_entry buf[3];
    qr_manifest m = manifest_of(ids, 3, buf);
    qr_segref *refs[3], *one[3];
    assert_int_equal(qr_segcache_acquire_all(c, dir, &m, refs, NULL, 1, &e), 0);
    for (int i = 0; i < 3; i++)
        assert_ptr_equal(one[i] = qr_segcache_acquire(c, dir, ids[i], &e), refs[i]);
    qr_segcache_release_all(refs, 3);
    assert_int_equal(stats(c).held, 3);
    for (int i = 0; i < 3; i++)
        qr_segcache_release(one[i]);
    assert_int_equal(stats(c).held, 0);
    assert_int_equal(qr_segcache_acquire_all(c, dir, &m, refs, NULL, 1, &e), 0); /* all hits */
    assert_int_equal(stats(c).misses, 3);
    qr_segcache_release_all(refs, 3);
    assert_null(refs[0]);
    buf[2].rows = 49;
    assert_int_equal(qr_segcache_acquire_all(c, dir, &m, refs, NULL, 1, &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_non_null(strstr(e.msg, "the manifest says 49"));
    assert_int_equal(stats(c).held, 0);
    buf[2].rows = 50;
    buf[1].id = 42; /* a listed file that is missing */
    assert_int_equal(qr_segcache_acquire_all(c, dir, &m, refs, NULL, 1, &e), -1);
    assert_string_equal(e.code, QR_E_IO);
    assert_int_equal(stats(c).held, 0);
    qr_segcache_free(c);
}

/* The misses opened on a pool's threads: the same handles, each segment
 * opened once, and a missing file among them fails the whole call with
 * nothing held. */
static void test_acquire_all_opens_misses_in_parallel(void **st)
{
    (void)st;
    qr_err e;
    qr_pool *pool = qr_pool_new(2, &e);
    assert_non_null(pool);
    qr_segcache *c = qr_segcache_new(NULL, &e);
    uint64_t ids[] = {4, 0, 2, 1, 3};
    qr_seg_entry buf[5];
    qr_manifest m = manifest_of(ids, 5, buf);
    qr_segref *refs[5];
    assert_int_equal(qr_segcache_acquire_all(c, dir, &m, refs, pool, 3, &e), 0);
    assert_int_equal(stats(c).misses, 5);
    for (int i = 0; i < 5; i++) {
        assert_non_null(refs[i]);
        assert_int_equal(qr_segref_segment(refs[i])->rows, buf[i].rows);
        qr_segref *again = qr_segcache_acquire(c, dir, ids[i], &e);
        assert_ptr_equal(again, refs[i]);
        qr_segcache_release(again);
    }
    qr_segcache_release_all(refs, 5);
    qr_segcache_invalidate(c, dir, NULL); /* every entry: the next call opens again */
    buf[3].id = 42; /* missing */
    assert_int_equal(qr_segcache_acquire_all(c, dir, &m, refs, pool, 4, &e), -1);
    assert_string_equal(e.code, QR_E_IO);
    assert_int_equal(stats(c).held, 0);
    qr_segcache_free(c);
    qr_pool_free(pool);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hits_misses_and_a_failed_open),
        cmocka_unit_test(test_acquire_all_opens_misses_in_parallel),
        cmocka_unit_test(test_fields_are_opened_once_for_every_holder),
        cmocka_unit_test(test_count_bound_evicts_only_unheld_entries_lru_first),
        cmocka_unit_test(test_byte_bound),
        cmocka_unit_test(test_invalidation_keeps_held_handles_and_closes_at_release),
        cmocka_unit_test(test_concurrent_acquirers_of_a_missing_segment_open_it_once),
        cmocka_unit_test(test_reader_pool_reuses_and_is_bounded),
        cmocka_unit_test(test_acquire_all_checks_the_manifest_rows),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
