/* test_keymap.c - the shared keys of several keyword fields
 * (index/keymap.c) on four segments of OpenTelemetry rows whose TraceIds
 * are chosen here: ids of one segment alone, ids in two, three or all four
 * segments, the empty id, 'é', NULLs and an id too long to index. Each
 * term's shared id is checked against a brute-force count of the segments
 * holding its value (one id per value held twice or more, the same in
 * each field; QR_KM_ONE for the others), with enough terms that the bit
 * filter takes hundreds of one-field terms for shared ones. Also: a
 * field given twice counts once; the cache finds a map for any subset of
 * its fields and none for a field it lacks or one opened again; a map
 * covering older ones replaces them; a canceled build or one past the
 * memory limit fails cleanly and caches nothing. */
#include "testutil.h"

#include <stdatomic.h>

#include "index/invfmt.h"
#include "index/invindex.h"
#include "index/keymap.h"

enum { SEGS = 4, ROWS = 3000 };

static char *dir;
static char path[SEGS][4200];
static char *trace[SEGS][ROWS]; /* NULL: no TraceId */

/* Row r of segment s: ids 0..999 of segment s alone, and from 1000 on ids
 * held by the segments their bits name (id 1000 + m*7 + j held by every
 * segment in mask m, for m in 1..15). */
static char *make_id(int s, int r)
{
    char id[400];
    if (r % 37 == 0)
        return NULL;
    if (r % 41 == 0)
        return strdup("");
    if (r % 43 == 0)
        return strdup("é");
    if (r % 211 == 0) {
        memset(id, 'f', 300); /* too long to index */
        id[300] = 0;
        return strdup(id);
    }
    if (r < 2000) {
        snprintf(id, sizeof id, "s%d-%d", s, r % 1000);
        return strdup(id);
    }
    /* a mask holding s, and one of 7 ids of that mask */
    int k = r - 2000, m;
    for (m = k % 15 + 1; !(m >> s & 1); m = m % 15 + 1)
        ;
    snprintf(id, sizeof id, "m%02d-%d", m, k / 15 % 7);
    return strdup(id);
}

static int setup(void **st)
{
    (void)st;
    dir = tu_tmpdir();
    for (int s = 0; s < SEGS; s++) {
        qr_buf t;
        qr_buf_init(&t);
        for (int r = 0; r < ROWS; r++) {
            trace[s][r] = make_id(s, r);
            char line[600];
            int n = snprintf(line, sizeof line,
                             "{\"Timestamp\":\"2025-09-23T00:00:%02d.%06dZ\",\"ServiceName\":"
                             "\"cart\"%s%s%s}\n",
                             r / 1000000, r % 1000000, trace[s][r] ? ",\"TraceId\":\"" : "",
                             trace[s][r] ? trace[s][r] : "", trace[s][r] ? "\"" : "");
            qr_buf_put(&t, line, (size_t)n);
        }
        qr_buf_put_u8(&t, 0);
        char name[32];
        snprintf(name, sizeof name, "s%d.qseg", s);
        tu_build_segment(dir, name, (const char *)t.p, ROWS, path[s]);
        qr_buf_free(&t);
    }
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    for (int s = 0; s < SEGS; s++)
        for (int r = 0; r < ROWS; r++)
            free(trace[s][r]);
    tu_rmdir(dir);
    return 0;
}

static uint16_t trace_index(void)
{
    const qr_tabdef *d = tu_otel();
    for (uint32_t i = 0; i < d->nixs; i++)
        if (!strcmp(d->cols[d->ixs[i].col].name, "TraceId") && d->ixs[i].kind == QR_IX_KEYWORD)
            return d->ixs[i].id;
    fail_msg("no keyword index on TraceId");
    return 0;
}

typedef struct opened {
    qr_segment *seg[SEGS];
    qr_invfield f[SEGS];
    qr_invfield *p[SEGS];
} opened;

static void open_all(opened *o)
{
    qr_err e;
    for (int s = 0; s < SEGS; s++) {
        o->seg[s] = qr_seg_open(path[s], &e);
        assert_non_null(o->seg[s]);
        if (qr_invfield_open(&o->f[s], o->seg[s], trace_index(), &e) != 0)
            fail_msg("%s", e.msg);
        if (!qr_invfield_ordinals(&o->f[s], NULL, &e))
            fail_msg("%s", e.msg);
        o->p[s] = &o->f[s];
    }
}

static void close_all(opened *o)
{
    for (int s = 0; s < SEGS; s++) {
        qr_invfield_close(&o->f[s]);
        qr_seg_close(o->seg[s]);
    }
}

/* Does segment s hold value v (indexed)? */
static int holds(int s, const char *v)
{
    for (int r = 0; r < ROWS; r++)
        if (trace[s][r] && !strcmp(trace[s][r], v))
            return 1;
    return 0;
}

/* m's shared ids of fields `which` (a mask of segments) against the
 * brute-force count of the segments of `which` holding each value. */
static void check_map(const qr_keymap *m, opened *o, int which)
{
    qr_err e;
    uint64_t shared_entries = 0, want_entries = 0;
    uint32_t nshared = qr_keymap_shared(m);
    uint8_t *seen_id = calloc(nshared + 1, 1);
    for (int s = 0; s < SEGS; s++) {
        if (!(which >> s & 1))
            continue;
        const uint32_t *sid = qr_keymap_sids(m, &o->f[s]);
        assert_non_null(sid);
        for (uint64_t i = 0; i < o->f[s].dict.nterms; i++)
            shared_entries += sid[i] != QR_KM_ONE;
        for (int r = 0; r < ROWS; r++) {
            const char *v = trace[s][r];
            if (!v || strlen(v) > QR_MAX_TERM)
                continue;
            uint32_t ord;
            assert_int_equal(qr_invfield_ordinal_of(&o->f[s], v, strlen(v), &ord, &e), 1);
            int held = 0, first = -1;
            for (int t = 0; t < SEGS; t++)
                if ((which >> t & 1) && holds(t, v)) {
                    held++;
                    if (first < 0)
                        first = t;
                }
            if (held < 2) {
                if (sid[ord] != QR_KM_ONE)
                    fail_msg("segment %d: '%s' is in no other field but has id %u", s, v, sid[ord]);
                continue;
            }
            if (sid[ord] == QR_KM_ONE || sid[ord] >= nshared)
                fail_msg("segment %d: '%s' is in %d fields but has id %u of %u", s, v, held,
                         sid[ord], nshared);
            /* the same id in the first field holding it */
            uint32_t o0;
            assert_int_equal(qr_invfield_ordinal_of(&o->f[first], v, strlen(v), &o0, &e), 1);
            assert_int_equal(qr_keymap_sids(m, &o->f[first])[o0], sid[ord]);
            seen_id[sid[ord]] = 1;
        }
    }
    /* every entry with an id is a value held twice: count them per value */
    const char *vals[] = {"", "é"};
    for (int k = 0; k < 2; k++) {
        int held = 0;
        for (int t = 0; t < SEGS; t++)
            held += (which >> t & 1) && holds(t, vals[k]);
        want_entries += held >= 2 ? (uint64_t)held : 0;
    }
    for (int mask = 1; mask < 16; mask++)
        for (int j = 0; j < 7; j++) {
            char v[32];
            snprintf(v, sizeof v, "m%02d-%d", mask, j);
            int held = 0;
            for (int t = 0; t < SEGS; t++)
                held += (which >> t & 1) && holds(t, v);
            want_entries += held >= 2 ? (uint64_t)held : 0;
        }
    assert_int_equal(shared_entries, want_entries);
    for (uint32_t i = 0; i < nshared; i++)
        if (!seen_id[i])
            fail_msg("shared id %u is no value's", i);
    free(seen_id);
}

static void test_shared_ids_match_brute_force(void **st)
{
    (void)st;
    opened o;
    open_all(&o);
    qr_err e;
    qr_keymap *m = qr_keymap_build(NULL, o.p, SEGS, NULL, 2, NULL, &e);
    if (!m)
        fail_msg("%s", e.msg);
    check_map(m, &o, 15);
    /* "" and "é" in all four; 15 masks x 7 ids, of which those of masks
     * with two segments or more (11 masks) are shared */
    assert_int_equal(qr_keymap_shared(m), 2 + 11 * 7);
    qr_keymap_release(m);
    /* two fields only; one of them given twice */
    qr_invfield *two[3] = {o.p[1], o.p[3], o.p[1]};
    m = qr_keymap_build(NULL, two, 3, NULL, 1, NULL, &e);
    assert_non_null(m);
    check_map(m, &o, 2 | 8);
    assert_null(qr_keymap_sids(m, o.p[0]));
    qr_keymap_release(m);
    close_all(&o);
}

static void test_cache_serves_subsets(void **st)
{
    (void)st;
    qr_err e;
    opened o;
    open_all(&o);
    qr_kmcache *c = qr_kmcache_new(&e);
    assert_non_null(c);
    assert_null(qr_kmcache_find(c, o.p, SEGS));
    /* maps of single fields, then one of all: it replaces them */
    for (int s = 0; s < SEGS; s++) {
        qr_keymap *m = qr_keymap_build(c, &o.p[s], 1, NULL, 1, NULL, &e);
        assert_non_null(m);
        assert_int_equal(qr_keymap_shared(m), 0);
        qr_keymap_release(m);
    }
    qr_keymap *all = qr_keymap_build(c, o.p, SEGS, NULL, 2, NULL, &e);
    assert_non_null(all);
    for (int s = 0; s < SEGS; s++) {
        qr_keymap *m = qr_kmcache_find(c, &o.p[s], 1);
        assert_ptr_equal(m, all);
        qr_keymap_release(m);
    }
    qr_invfield *sub[2] = {o.p[2], o.p[0]};
    qr_keymap *m = qr_kmcache_find(c, sub, 2);
    assert_ptr_equal(m, all);
    check_map(m, &o, 15); /* (a subset's counts are summed over its fields) */
    qr_keymap_release(m);
    /* a field opened again is another field */
    qr_invfield again;
    assert_int_equal(qr_invfield_open(&again, o.seg[0], trace_index(), &e), 0);
    qr_invfield *with[2] = {o.p[1], &again};
    assert_null(qr_kmcache_find(c, with, 2));
    qr_invfield_close(&again);
    /* the holder keeps its map when the cache is freed */
    qr_kmcache_free(c);
    check_map(all, &o, 15);
    qr_keymap_release(all);
    close_all(&o);
}

static void test_failed_builds_keep_nothing(void **st)
{
    (void)st;
    qr_err e;
    opened o;
    open_all(&o);
    qr_kmcache *c = qr_kmcache_new(&e);
    qr_qctx ctx;
    qr_qctx_init(&ctx, 0);
    atomic_int cancel = 1;
    qr_qctx_set_stop(&ctx, &cancel, 0);
    assert_null(qr_keymap_build(c, o.p, SEGS, NULL, 2, &ctx, &e));
    assert_string_equal(e.code, QR_E_CANCELED);
    assert_null(qr_kmcache_find(c, o.p, SEGS));
    assert_int_equal(atomic_load(&ctx.used), 0);
    qr_qctx small;
    qr_qctx_init(&small, 4096);
    assert_null(qr_keymap_build(c, o.p, SEGS, NULL, 1, &small, &e));
    assert_string_equal(e.code, QR_E_NOMEM);
    assert_null(qr_kmcache_find(c, o.p, SEGS));
    assert_int_equal(atomic_load(&small.used), 0);
    /* and then one that succeeds */
    qr_keymap *m = qr_keymap_build(c, o.p, SEGS, NULL, 2, NULL, &e);
    assert_non_null(m);
    qr_keymap_release(m);
    m = qr_kmcache_find(c, o.p, SEGS);
    assert_non_null(m);
    qr_keymap_release(m);
    qr_kmcache_free(c);
    close_all(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_ids_match_brute_force),
        cmocka_unit_test(test_cache_serves_subsets),
        cmocka_unit_test(test_failed_builds_keep_nothing),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
