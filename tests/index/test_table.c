/* test_table.c - tables and manifests: create, commit, reopen, leftovers
 * removed, the writer lock, and corrupt manifests rejected. */
#include "testutil.h"

#include <fcntl.h>

#include "index/table.h"
#include "util/hash.h"

static void test_manifest_roundtrip_and_corruption(void **st)
{
    (void)st;
    qr_seg_entry segs[2] = {{1, 10, -5, 7, 1000, 2, 3}, {4, 20, 100, 200, 2000, 0, 0}};
    qr_manifest m = {.generation = 3, .next_id = 5, .wal_seq = 77, .nsegs = 2, .segs = segs};
    qr_buf b;
    qr_buf_init(&b);
    qr_manifest_encode(&m, &b);
    qr_manifest out;
    qr_err e;
    assert_int_equal(qr_manifest_decode(b.p, b.len, "M", &out, &e), 0);
    assert_int_equal(out.generation, 3);
    assert_int_equal(out.next_id, 5);
    assert_int_equal(out.wal_seq, 77);
    assert_int_equal(out.nsegs, 2);
    assert_memory_equal(out.segs, segs, sizeof segs);
    free(out.segs);
    /* deletion entries that cannot be: all rows, a count without a file, a
     * file without a count, a generation from the future */
    qr_seg_entry bad[4][1] = {{{1, 10, 0, 0, 9, 2, 10}},
                              {{1, 10, 0, 0, 9, 0, 3}},
                              {{1, 10, 0, 0, 9, 2, 0}},
                              {{1, 10, 0, 0, 9, 4, 3}}};
    for (int k = 0; k < 4; k++) {
        qr_manifest mb = {.generation = 3, .next_id = 5, .nsegs = 1, .segs = bad[k]};
        qr_buf bb;
        qr_buf_init(&bb);
        qr_manifest_encode(&mb, &bb);
        assert_int_equal(qr_manifest_decode(bb.p, bb.len, "MB", &out, &e), -1);
        assert_string_equal(e.code, QR_E_CORRUPT);
        assert_string_equal(e.msg, "manifest MB: corrupt: segment 1: bad deletion entry");
        qr_buf_free(&bb);
    }
    /* a version 1 manifest (before the write-ahead log) reads, wal_seq 0 */
    qr_buf v1;
    qr_buf_init(&v1);
    qr_buf_put(&v1, "QRYMANI\n", 8);
    qr_buf_put_u32(&v1, 1);
    qr_buf_put_u32(&v1, 0);
    qr_buf_put_u64(&v1, 3);
    qr_buf_put_u64(&v1, 5);
    qr_buf_put_u32(&v1, 1);
    qr_buf_put_u64(&v1, 4);
    qr_buf_put_u64(&v1, 20);
    qr_buf_put_u64(&v1, 100);
    qr_buf_put_u64(&v1, 200);
    qr_buf_put_u64(&v1, 2000);
    qr_buf_put_u32(&v1, qr_checksum32(v1.p, v1.len));
    assert_int_equal(qr_manifest_decode(v1.p, v1.len, "M1", &out, &e), 0);
    assert_int_equal(out.wal_seq, 0);
    assert_int_equal(out.nsegs, 1);
    assert_int_equal(out.segs[0].id, 4);
    assert_int_equal(out.segs[0].file_bytes, 2000);
    free(out.segs);
    qr_buf_free(&v1);
    for (size_t i = 0; i < b.len; i++) {
        b.p[i] ^= 0x10;
        assert_int_equal(qr_manifest_decode(b.p, b.len, "M", &out, &e), -1);
        assert_true(!strcmp(e.code, QR_E_CORRUPT) || !strcmp(e.code, QR_E_VERSION));
        b.p[i] ^= 0x10;
    }
    for (size_t n = 0; n < b.len; n++)
        assert_int_equal(qr_manifest_decode(b.p, n, "M", &out, &e), -1);
    qr_buf_free(&b);
}

static void test_create_commit_reopen(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    qr_err e;
    assert_null(qr_table_open(dir, "t", QR_TABLE_READ, &e));
    assert_string_equal(e.code, QR_E_UNDEFINED_TABLE);
    tu_create_otel_table(dir, "t");
    qr_table *t = qr_table_open(dir, "t", QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    assert_non_null(t);
    assert_int_equal(t->man.nsegs, 0);
    assert_int_equal(qr_table_reserve_ids(t, 2), 0);
    qr_seg_entry add = {1, 5, 0, 0, 100, 0, 0};
    assert_int_equal(qr_table_commit(t, &add, 1, &e), 0);
    /* a second writer is refused while the first holds the lock */
    assert_null(qr_table_open(dir, "t", QR_TABLE_WRITE, &e));
    assert_string_equal(e.code, QR_E_LOCKED);
    /* a reader sees the committed manifest */
    qr_table *r = qr_table_open(dir, "t", QR_TABLE_READ, &e);
    assert_non_null(r);
    assert_int_equal(r->man.nsegs, 1);
    assert_int_equal(r->man.segs[0].id, 1);
    assert_int_equal(r->man.next_id, 2);
    qr_table_close(r);
    qr_table_close(t);
    /* leftovers (unlisted segments, temp files) vanish when a writer opens */
    char p[4200];
    snprintf(p, sizeof p, "%s/t/seg-0000000000000009.qseg", dir);
    close(open(p, O_CREAT | O_WRONLY, 0644));
    snprintf(p, sizeof p, "%s/t/seg-0000000000000001.qseg", dir);
    close(open(p, O_CREAT | O_WRONLY, 0644));
    snprintf(p, sizeof p, "%s/t/x.tmp", dir);
    close(open(p, O_CREAT | O_WRONLY, 0644));
    t = qr_table_open(dir, "t", QR_TABLE_WRITE, &e);
    assert_non_null(t);
    snprintf(p, sizeof p, "%s/t/seg-0000000000000009.qseg", dir);
    assert_int_equal(access(p, F_OK), -1);
    snprintf(p, sizeof p, "%s/t/x.tmp", dir);
    assert_int_equal(access(p, F_OK), -1);
    snprintf(p, sizeof p, "%s/t/seg-0000000000000001.qseg", dir);
    assert_int_equal(access(p, F_OK), 0); /* listed: kept */
    qr_table_close(t);
    tu_rmdir(dir);
}

static void test_table_names(void **st)
{
    (void)st;
    assert_true(qr_table_name_ok("otel_logs"));
    assert_true(qr_table_name_ok("_x9"));
    assert_false(qr_table_name_ok(""));
    assert_false(qr_table_name_ok("9lives"));
    assert_false(qr_table_name_ok("a/b"));
    assert_false(qr_table_name_ok(".."));
    assert_false(qr_table_name_ok("a-b"));
    char longname[70];
    memset(longname, 'a', 64);
    longname[64] = 0;
    assert_false(qr_table_name_ok(longname));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest_roundtrip_and_corruption),
        cmocka_unit_test(test_create_commit_reopen),
        cmocka_unit_test(test_table_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
