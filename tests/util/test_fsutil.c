/* test_fsutil.c - util/fsutil and util/err: which errors are the input's
 * fault; the fault injection hook (one operation fails, of the kind asked,
 * with the errno asked; its text form); an atomic replace that fails at any
 * of its operations leaves the old file and no temp file. */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>

#include "util/err.h"
#include "util/fsutil.h"

static void test_input_fault_is_class_22_or_42(void **st)
{
    (void)st;
    static const struct {
        const char *code;
        int input;
    } cases[] = {
        {QR_E_INVALID_TEXT, 1},    {QR_E_DATATYPE, 1},         {QR_E_OUT_OF_RANGE, 1},
        {QR_E_LINE_TOO_LONG, 1},   {QR_E_UNDEFINED_COLUMN, 1}, {QR_E_ARGS, 1},
        {QR_E_UNDEFINED_TABLE, 1}, {QR_E_TOO_LONG, 0},         {QR_E_IO, 0},
        {QR_E_CORRUPT, 0},         {QR_E_VERSION, 0},          {QR_E_NOMEM, 0},
        {QR_E_INTERNAL, 0},        {QR_E_LOCKED, 0},           {"", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        qr_err e;
        qr_err_clear(&e);
        if (cases[i].code[0])
            qr_errf(&e, cases[i].code, "x");
        if (qr_err_is_input_fault(&e) != cases[i].input)
            fail_msg("%s: expected %d", cases[i].code, cases[i].input);
    }
    assert_int_equal(qr_err_is_input_fault(NULL), 0);
}

static void test_fault_fails_the_nth_operation_once(void **st)
{
    (void)st;
    char *dir = tu_tmpdir();
    char path[4200];
    snprintf(path, sizeof path, "%s/f", dir);
    int fd = qr_create_file(path, NULL);
    assert_true(fd >= 0);
    qr_err e;
    qr_fault_set(QR_FAULT_WRITE, 3, EIO);
    for (int i = 1; i <= 5; i++) {
        int rc = qr_write_all(fd, "ab", 2, path, &e);
        assert_int_equal(rc, i == 3 ? -1 : 0);
    }
    assert_int_equal(qr_fault_seen(), 5);
    char want[9000];
    snprintf(want, sizeof want, "write %s: %s", path, strerror(EIO));
    assert_string_equal(e.msg, want);
    assert_string_equal(e.code, QR_E_IO);
    /* other kinds are not counted */
    assert_int_equal(qr_fsync_file(fd, path, &e), 0);
    assert_int_equal(qr_fault_seen(), 5);
    close(fd);
    /* a kind of its own: the first rename */
    qr_fault_set(QR_FAULT_RENAME, 1, ENOSPC);
    char to[4300];
    snprintf(to, sizeof to, "%s.2", path);
    assert_int_equal(qr_write_all(STDERR_FILENO, "", 0, "stderr", &e), 0);
    assert_int_equal(qr_rename(path, to, &e), -1);
    snprintf(want, sizeof want, "rename %s -> %s: %s", path, to, strerror(ENOSPC));
    assert_string_equal(e.msg, want);
    assert_int_equal(access(path, F_OK), 0); /* nothing was renamed */
    assert_int_equal(qr_rename(path, to, &e), 0);
    /* off: nothing fails, nothing is counted */
    qr_fault_set(QR_FAULT_OFF, 0, 0);
    assert_true((fd = qr_create_file(path, &e)) >= 0);
    close(fd);
    assert_int_equal(qr_fault_seen(), 0);
    tu_rmdir(dir);
}

static void test_fault_parse(void **st)
{
    (void)st;
    qr_err e;
    assert_int_equal(qr_fault_parse("write:2", &e), 0);
    assert_int_equal(qr_write_all(STDERR_FILENO, "", 0, "stderr", &e), 0);
    assert_int_equal(qr_write_all(STDERR_FILENO, "", 0, "stderr", &e), -1);
    assert_string_equal(e.msg, "write stderr: No space left on device");
    assert_int_equal(qr_fault_parse("any:1:EIO", &e), 0);
    assert_int_equal(qr_write_all(STDERR_FILENO, "", 0, "stderr", &e), -1);
    assert_string_equal(e.msg, "write stderr: Input/output error");
    assert_int_equal(qr_fault_parse("any:1:28", &e), 0);
    assert_int_equal(qr_fsync_file(STDERR_FILENO, "stderr", &e), -1);
    assert_string_equal(e.msg, "fsync stderr: No space left on device");
    static const char *bad[] = {"", "write", "write:", "write:0", "write:-1", "write:1x",
                                "write:1:", "write:1:ENOPE", "write:1:0", "sync:1",
                                "write:99999999999999999999",
                                /* longer than any spec it keeps */
                                "write:000000000000000000000000000000000000000000000000000000001"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        qr_fault_set(QR_FAULT_OFF, 0, 0);
        if (qr_fault_parse(bad[i], &e) != -1)
            fail_msg("'%s' accepted", bad[i]);
        assert_string_equal(e.code, QR_E_ARGS);
        assert_int_equal(qr_write_all(STDERR_FILENO, "", 0, "stderr", &e), 0); /* not armed */
    }
    qr_fault_set(QR_FAULT_OFF, 0, 0);
}

/* Replace a file with the fault at every operation in turn: each failure
 * leaves the old content (or no file) and no temp file. */
static void replace_at_every_fault(int exists)
{
    char *dir = tu_tmpdir();
    char path[4200], cmd[4400];
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    qr_err e;
    if (exists)
        assert_int_equal(qr_write_file_atomic(path, "old", 3, &e), 0);
    uint64_t n;
    for (n = 1; n < 100; n++) {
        qr_fault_set(QR_FAULT_ANY, n, n % 2 ? ENOSPC : EIO);
        int rc = qr_write_file_atomic(path, "new content", 11, &e);
        uint64_t ops = qr_fault_seen();
        qr_fault_set(QR_FAULT_OFF, 0, 0);
        if (rc == 0) {
            assert_true(ops < n);
            break;
        }
        assert_string_equal(e.code, n % 2 ? QR_E_DISK_FULL : QR_E_IO);
        assert_non_null(strstr(e.msg, n % 2 ? strerror(ENOSPC) : strerror(EIO)));
        unsigned char *b;
        size_t len;
        if (exists) {
            assert_int_equal(qr_read_file(path, &b, &len, &e), 0);
            assert_int_equal(len, 3);
            assert_memory_equal(b, "old", 3);
            free(b);
        } else {
            assert_int_equal(access(path, F_OK), -1);
        }
        snprintf(cmd, sizeof cmd, "test \"$(ls '%s' | wc -l)\" -eq %d", dir, exists);
        if (system(cmd) != 0)
            fail_msg("fault %llu (%s): files left behind", (unsigned long long)n, e.msg);
    }
    /* create, write, fsync, link, rename, fsync directory */
    assert_int_equal(n, 7);
    unsigned char *b;
    size_t len;
    assert_int_equal(qr_read_file(path, &b, &len, &e), 0);
    assert_int_equal(len, 11);
    free(b);
    snprintf(cmd, sizeof cmd, "test \"$(ls '%s')\" = MANIFEST", dir);
    assert_int_equal(system(cmd), 0);
    tu_rmdir(dir);
}

static void test_atomic_replace_fails_whole(void **st)
{
    (void)st;
    replace_at_every_fault(1);
    replace_at_every_fault(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_input_fault_is_class_22_or_42),
        cmocka_unit_test(test_fault_fails_the_nth_operation_once),
        cmocka_unit_test(test_fault_parse),
        cmocka_unit_test(test_atomic_replace_fails_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
