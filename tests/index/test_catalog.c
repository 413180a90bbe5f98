/* test_catalog.c - tests for index/catalog: create, find, reload, the same
 * definition again, another definition, drop; the exact CATALOG text; a
 * CATALOG of another format, truncated, with flipped bytes or a bad
 * definition gives a clean error naming the file, line and column; two
 * processes creating tables at once lose none (the lock); no CATALOG.tmp
 * is left behind. Each test works in its own mkdtemp directory.
 * (Self-contained: testutil.h pulls in the segment code, which is being
 * rewritten.)
 */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "index/catalog.h"

/* ---- helpers ---- */

typedef struct fixture {
    char base[256]; /* the mkdtemp directory */
    char data[300]; /* base/data: the data directory (created by the code) */
    char cat[320];  /* data/CATALOG */
    char tmp[320];  /* data/CATALOG.tmp */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    const char *t = getenv("TMPDIR");
    snprintf(f->base, sizeof f->base, "%s/quarry-cat-XXXXXX", t ? t : "/tmp");
    if (!mkdtemp(f->base))
        return -1;
    snprintf(f->data, sizeof f->data, "%s/data", f->base);
    snprintf(f->cat, sizeof f->cat, "%s/CATALOG", f->data);
    snprintf(f->tmp, sizeof f->tmp, "%s/CATALOG.tmp", f->data);
    *state = f;
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int teardown(void **state)
{
    fixture *f = *state;
    int rc = nftw(f->base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return rc;
}

static void write_text(const char *path, const char *text, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(text, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

/* The whole file, NUL-terminated (caller frees); *n its size. */
static char *read_text(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    char *b = malloc(1 << 16);
    *n = fread(b, 1, (1 << 16) - 1, fp);
    b[*n] = 0;
    fclose(fp);
    return b;
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

/* ts timestamp, msg text; sorted by ts; fulltext "body" on msg (id 1). */
static qr_tabdef *small_def(const char *name)
{
    qr_tabdef *d = qr_tabdef_new(name);
    assert_int_equal(qr_tabdef_add_col(d, "ts", 2, QT_TIMESTAMP, 1, NULL), 0);
    assert_int_equal(qr_tabdef_add_col(d, "msg", 3, QT_TEXT, 1, NULL), 1);
    d->sort_col = 0;
    assert_int_equal(qr_tabdef_add_index(d, 1, QR_IX_FULLTEXT, 1, "body", NULL), 0);
    return d;
}

static void create_ok(const fixture *f, const qr_tabdef *d, int want_created)
{
    qr_err e;
    int created = -1;
    if (qr_catalog_create_table(f->data, d, &created, &e))
        fail_msg("create %s: %s %s", d->name, e.code, e.msg);
    assert_int_equal(created, want_created);
    assert_false(exists(f->tmp));
}

static void load_ok(const fixture *f, qr_catalog *c)
{
    qr_err e;
    if (qr_catalog_load(f->data, c, &e))
        fail_msg("load: %s %s", e.code, e.msg);
}

/* Loading f's CATALOG fails with code and message (PATH stands for f->cat). */
static void load_fails(const fixture *f, const char *code, const char *fmt)
{
    char want[1024];
    snprintf(want, sizeof want, fmt, f->cat);
    qr_catalog c;
    qr_err e;
    assert_int_equal(qr_catalog_load(f->data, &c, &e), -1);
    assert_int_equal(c.ntables, 0);
    assert_null(c.tables);
    assert_string_equal(e.code, code);
    assert_string_equal(e.msg, want);
}

/* ---- create, find, reload, drop ---- */

static void test_missing_catalog_is_empty(void **state)
{
    fixture *f = *state;
    qr_catalog c;
    load_ok(f, &c); /* not even the data directory exists */
    assert_int_equal(c.generation, 0);
    assert_int_equal(c.ntables, 0);
    assert_null(qr_catalog_find(&c, "logs"));
    qr_catalog_free(&c);
    assert_false(exists(f->data)); /* loading creates nothing */
}

static const char small_catalog[] =
    "{\n"
    "  \"format\": 1,\n"
    "  \"generation\": 1,\n"
    "  \"tables\": [\n"
    "    {\n"
    "      \"name\": \"logs\",\n"
    "      \"columns\": [\n"
    "        {\"name\": \"ts\", \"type\": \"timestamp\"},\n"
    "        {\"name\": \"msg\", \"type\": \"text\"}\n"
    "      ],\n"
    "      \"sort\": \"ts\",\n"
    "      \"indexes\": [\n"
    "        {\"column\": \"msg\", \"kind\": \"fulltext\", \"name\": \"body\", \"id\": 1}\n"
    "      ]\n"
    "    }\n"
    "  ]\n"
    "}\n";

static void test_create_writes_the_catalog_and_creates_the_data_directory(void **state)
{
    fixture *f = *state;
    umask(022);
    qr_tabdef *d = small_def("logs");
    create_ok(f, d, 1);
    struct stat st;
    assert_int_equal(stat(f->data, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);
    size_t n;
    char *text = read_text(f->cat, &n);
    assert_string_equal(text, small_catalog);
    free(text);
    char lock[400];
    snprintf(lock, sizeof lock, "%s/CATALOG.lock", f->data);
    assert_true(exists(lock));
    qr_tabdef_free(d);
}

static void test_create_find_and_reload(void **state)
{
    fixture *f = *state;
    qr_tabdef *logs = small_def("logs"), *otel = qr_tabdef_otel("Otel_Logs");
    create_ok(f, logs, 1);
    create_ok(f, otel, 1);
    qr_catalog c;
    load_ok(f, &c);
    assert_int_equal(c.generation, 2);
    assert_int_equal(c.ntables, 2);
    const qr_tabdef *a = qr_catalog_find(&c, "LOGS"), *b = qr_catalog_find(&c, "otel_logs");
    assert_non_null(a);
    assert_non_null(b);
    assert_ptr_equal(a, c.tables[0]);
    assert_ptr_equal(b, c.tables[1]);
    assert_string_equal(a->name, "logs");
    assert_string_equal(b->name, "Otel_Logs"); /* the case it was created with */
    assert_true(qr_tabdef_equal(a, logs));
    assert_true(qr_tabdef_equal(b, otel));
    assert_null(qr_catalog_find(&c, "log"));
    qr_catalog_free(&c);
    assert_int_equal(c.ntables, 0);
    qr_catalog_free(&c); /* again: still fine */
    qr_tabdef_free(logs);
    qr_tabdef_free(otel);
}

static void test_create_same_definition_again_changes_nothing(void **state)
{
    fixture *f = *state;
    qr_tabdef *d = small_def("logs"), *d2 = small_def("LOGS");
    create_ok(f, d, 1);
    size_t n1, n2;
    char *before = read_text(f->cat, &n1);
    create_ok(f, d, 0);
    create_ok(f, d2, 0); /* names ignore case */
    char *after = read_text(f->cat, &n2);
    assert_string_equal(after, before); /* generation 1 still */
    free(before);
    free(after);
    qr_tabdef_free(d);
    qr_tabdef_free(d2);
}

static void test_create_another_definition_is_refused(void **state)
{
    fixture *f = *state;
    qr_tabdef *d = small_def("logs"), *other = small_def("Logs");
    other->ixs[0].positions = 0;
    create_ok(f, d, 1);
    qr_err e;
    int created = -1;
    assert_int_equal(qr_catalog_create_table(f->data, other, &created, &e), -1);
    assert_int_equal(created, 0);
    assert_string_equal(e.code, QR_E_DUPLICATE_TABLE);
    assert_string_equal(e.msg, "table logs already exists with another definition");
    assert_false(exists(f->tmp));
    qr_catalog c;
    load_ok(f, &c);
    assert_int_equal(c.generation, 1);
    assert_true(qr_tabdef_equal(c.tables[0], d));
    qr_catalog_free(&c);
    qr_tabdef_free(d);
    qr_tabdef_free(other);
}

static void test_create_checks_the_name_and_the_definition(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *name, *msg;
    } bad[] = {
        {NULL, "a table definition without a name"},
        {"", "table name \"\" is not 1-63 of [A-Za-z0-9_] not starting with a digit"},
        {"1logs", "table name \"1logs\" is not 1-63 of [A-Za-z0-9_] not starting with a digit"},
        {"my-logs", "table name \"my-logs\" is not 1-63 of [A-Za-z0-9_] not starting with a digit"},
        {"a123456789b123456789c123456789d123456789e123456789f123456789ghij",
         "table name \"a123456789b123456789c123456789d123456789e123456789f123456789ghij\" is not "
         "1-63 of [A-Za-z0-9_] not starting with a digit"},
        {"Catalog", "table name \"Catalog\" is reserved"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        qr_tabdef *d = small_def(bad[i].name);
        qr_err e;
        int created = -1;
        assert_int_equal(qr_catalog_create_table(f->data, d, &created, &e), -1);
        assert_int_equal(created, 0);
        assert_string_equal(e.code, QR_E_ARGS);
        assert_string_equal(e.msg, bad[i].msg);
        qr_tabdef_free(d);
    }
    assert_true(
        qr_catalog_name_ok("a12345678_b123456789c123456789d123456789e123456789f123456789ghi"));
    qr_tabdef *empty = qr_tabdef_new("empty");
    qr_err e;
    int created;
    assert_int_equal(qr_catalog_create_table(f->data, empty, &created, &e), -1);
    assert_string_equal(e.code, QR_E_ARGS);
    assert_string_equal(e.msg, "table empty: no columns");
    qr_tabdef_free(empty);
    assert_false(exists(f->cat));
}

static void test_drop_removes_a_table_and_missing_is_42P01(void **state)
{
    fixture *f = *state;
    qr_err e;
    assert_int_equal(qr_catalog_drop_table(f->data, "logs", &e), -1);
    assert_string_equal(e.code, QR_E_UNDEFINED_TABLE);
    assert_string_equal(e.msg, "table logs does not exist");
    assert_false(exists(f->data)); /* a failed drop creates nothing */
    qr_tabdef *a = small_def("a"), *b = small_def("b"), *c3 = small_def("c");
    create_ok(f, a, 1);
    create_ok(f, b, 1);
    create_ok(f, c3, 1);
    assert_int_equal(qr_catalog_drop_table(f->data, "B", &e), 0);
    assert_false(exists(f->tmp));
    assert_int_equal(qr_catalog_drop_table(f->data, "b", &e), -1);
    assert_string_equal(e.code, QR_E_UNDEFINED_TABLE);
    assert_string_equal(e.msg, "table b does not exist");
    qr_catalog c;
    load_ok(f, &c);
    assert_int_equal(c.generation, 4);
    assert_int_equal(c.ntables, 2);
    assert_string_equal(c.tables[0]->name, "a");
    assert_string_equal(c.tables[1]->name, "c");
    assert_null(qr_catalog_find(&c, "b"));
    qr_catalog_free(&c);
    /* dropped, it can be created again, with another definition */
    b->omit_nulls = 1;
    create_ok(f, b, 1);
    assert_int_equal(qr_catalog_drop_table(f->data, "a", &e), 0);
    assert_int_equal(qr_catalog_drop_table(f->data, "c", &e), 0);
    assert_int_equal(qr_catalog_drop_table(f->data, "b", &e), 0);
    load_ok(f, &c);
    assert_int_equal(c.generation, 8);
    assert_int_equal(c.ntables, 0);
    qr_catalog_free(&c);
    size_t n;
    char *text = read_text(f->cat, &n);
    assert_string_equal(text, "{\n  \"format\": 1,\n  \"generation\": 8,\n  \"tables\": []\n}\n");
    free(text);
    qr_tabdef_free(a);
    qr_tabdef_free(b);
    qr_tabdef_free(c3);
}

/* ---- damaged catalogs ---- */

static void test_catalog_of_another_format_is_refused(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkdir(f->data, 0755), 0);
    static const char v2[] = "{\"format\": 2, \"generation\": 9, \"tables\": [{\"x\": 1}]}";
    write_text(f->cat, v2, sizeof v2 - 1);
    load_fails(f, QR_E_VERSION, "catalog %s: format 2, this build reads 1");
    /* decided by "format" wherever it is, whatever the tables hold */
    static const char v3[] = "{\"tables\": [{\"bogus\": true}], \"generation\": 1, \"format\": 3}";
    write_text(f->cat, v3, sizeof v3 - 1);
    load_fails(f, QR_E_VERSION, "catalog %s: format 3, this build reads 1");
    /* and nothing can be created in it */
    qr_tabdef *d = small_def("logs");
    qr_err e;
    int created = -1;
    assert_int_equal(qr_catalog_create_table(f->data, d, &created, &e), -1);
    assert_string_equal(e.code, QR_E_VERSION);
    assert_int_equal(created, 0);
    assert_false(exists(f->tmp));
    assert_int_equal(qr_catalog_drop_table(f->data, "logs", &e), -1);
    assert_string_equal(e.code, QR_E_VERSION);
    qr_tabdef_free(d);
}

static void test_bad_catalog_names_file_line_and_column(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkdir(f->data, 0755), 0);
    static const struct {
        const char *text, *msg;
    } cases[] = {
        {"", "catalog %s:1:1: empty file"},
        {"[]", "catalog %s:1:1: not an object"},
        {"{\n"
         "  \"format\": 1,\n"
         "  \"generation\": 4,\n"
         "  \"tables\": [\n"
         "    {\"name\": \"a\", \"columns\": [{\"name\": \"x\", \"type\": \"strng\"}]}\n"
         "  ]\n"
         "}\n",
         "catalog %s:5:53: unknown type \"strng\""},
        {"{\"format\": 1, \"generation\": 2, \"tables\": [\n"
         "  {\"name\": \"a\", \"columns\": [{\"name\": \"x\", \"type\": \"text\"}]},\n"
         "  {\"name\": \"A\", \"columns\": [{\"name\": \"x\", \"type\": \"text\"}]}\n"
         "]}",
         "catalog %s:3:3: a second table named \"A\""},
        {"{\"format\": 1, \"generation\": 2, \"tables\": [\n"
         "  {\"columns\": [{\"name\": \"x\", \"type\": \"text\"}]}]}",
         "catalog %s:2:3: a table without a \"name\""},
        {"{\"format\": 1, \"generation\": 2, \"tables\": [\n"
         "  {\"name\": \"9a\", \"columns\": [{\"name\": \"x\", \"type\": \"text\"}]}]}",
         "catalog %s:2:3: bad table name \"9a\""},
        {"{\"format\": 1, \"generation\": 0, \"tables\": [], \"x\": 1}",
         "catalog %s:1:46: unknown key \"x\""},
        {"{\"format\": 1, \"generation\": 0, \"tables\": [], \"format\": 1}",
         "catalog %s:1:46: duplicate key \"format\""},
        {"{\"format\": \"1\", \"generation\": 0, \"tables\": []}",
         "catalog %s:1:12: \"format\" must be an integer >= 0"},
        {"{\"format\": 1, \"generation\": -1, \"tables\": []}",
         "catalog %s:1:29: \"generation\" must be an integer >= 0"},
        {"{\"format\": 1, \"generation\": 0, \"tables\": {}}",
         "catalog %s:1:42: \"tables\" must be an array"},
        {"{\"generation\": 0, \"tables\": []}", "catalog %s:1:1: no \"format\""},
        {"{\"format\": 1, \"tables\": []}", "catalog %s:1:1: no \"generation\""},
        {"{\"format\": 1, \"generation\": 0}", "catalog %s:1:1: no \"tables\""},
        {"{\"format\": 1, \"generation\": 0, \"tables\": []} {}",
         "catalog %s:1:46: trailing characters"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_text(f->cat, cases[i].text, strlen(cases[i].text));
        load_fails(f, QR_E_CORRUPT, cases[i].msg);
    }
}

/* Writes a catalog of two tables through the API; returns its text. */
static char *two_table_catalog(const fixture *f, size_t *n)
{
    qr_tabdef *a = small_def("logs"), *b = qr_tabdef_otel("otel");
    create_ok(f, a, 1);
    create_ok(f, b, 1);
    qr_tabdef_free(a);
    qr_tabdef_free(b);
    return read_text(f->cat, n);
}

static void test_truncated_catalog_is_corrupt(void **state)
{
    fixture *f = *state;
    size_t n;
    char *text = two_table_catalog(f, &n);
    assert_int_equal(text[n - 1], '\n');
    for (size_t len = 0; len < n - 1; len++) { /* without its final newline it is whole */
        write_text(f->cat, text, len);
        qr_catalog c;
        qr_err e;
        if (qr_catalog_load(f->data, &c, &e) == 0)
            fail_msg("a catalog cut to %zu of %zu bytes loaded", len, n);
        assert_string_equal(e.code, QR_E_CORRUPT);
        assert_int_equal(strncmp(e.msg, "catalog ", 8), 0);
        assert_non_null(strstr(e.msg, f->cat));
    }
    write_text(f->cat, text, 40);
    load_fails(f, QR_E_CORRUPT, "catalog %s:4:3: unterminated string");
    write_text(f->cat, text, n - 1);
    qr_catalog c;
    load_ok(f, &c);
    assert_int_equal(c.ntables, 2);
    qr_catalog_free(&c);
    free(text);
}

static void test_flipped_bytes_give_clean_errors(void **state)
{
    fixture *f = *state;
    size_t n;
    char *text = two_table_catalog(f, &n);
    for (size_t i = 0; i < n; i++) {
        for (int m = 0; m < 2; m++) {
            char *bad = malloc(n);
            memcpy(bad, text, n);
            bad[i] ^= m ? 0x01 : 0x80;
            write_text(f->cat, bad, n);
            free(bad);
            qr_catalog c;
            qr_err e;
            int rc = qr_catalog_load(f->data, &c, &e);
            if (rc == 0) { /* some 0x01 flips leave valid JSON: a renamed column */
                if (!m)
                    fail_msg("byte %zu ^ 0x80 loaded", i);
                qr_catalog_free(&c);
                continue;
            }
            if (strcmp(e.code, QR_E_CORRUPT) != 0 && strcmp(e.code, QR_E_VERSION) != 0)
                fail_msg("byte %zu ^ %d: %s %s", i, m ? 1 : 0x80, e.code, e.msg);
            assert_int_equal(strncmp(e.msg, "catalog ", 8), 0);
        }
    }
    /* "format": 1 -> 0 */
    char *p = strstr(text, "\"format\": 1");
    assert_non_null(p);
    p[10] ^= 0x01;
    write_text(f->cat, text, n);
    load_fails(f, QR_E_VERSION, "catalog %s: format 0, this build reads 1");
    free(text);
}

/* ---- concurrency and temporary files ---- */

enum { PER_CHILD = 12 };

static void test_concurrent_creates_from_two_processes_all_land(void **state)
{
    fixture *f = *state;
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0) {
            for (int i = 0; i < PER_CHILD; i++) {
                char name[32];
                snprintf(name, sizeof name, "%c_%d", 'a' + k, i);
                qr_tabdef *d = small_def(name);
                qr_err e;
                int created = 0;
                int rc = qr_catalog_create_table(f->data, d, &created, &e);
                qr_tabdef_free(d);
                if (rc || !created) {
                    fprintf(stderr, "child %d: %s: %s %s\n", k, name, e.code, e.msg);
                    _exit(1);
                }
            }
            _exit(0);
        }
    }
    for (int k = 0; k < 2; k++) {
        int st;
        assert_int_equal(waitpid(kids[k], &st, 0), kids[k]);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
    }
    qr_catalog c;
    load_ok(f, &c);
    assert_int_equal(c.ntables, 2 * PER_CHILD);
    assert_int_equal(c.generation, 2 * PER_CHILD);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < PER_CHILD; i++) {
            char name[32];
            snprintf(name, sizeof name, "%c_%d", 'a' + k, i);
            if (!qr_catalog_find(&c, name))
                fail_msg("table %s lost", name);
        }
    qr_catalog_free(&c);
    assert_false(exists(f->tmp));
}

static void test_no_catalog_tmp_is_left_behind(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkdir(f->data, 0755), 0);
    /* a CATALOG.tmp left by a crash is overwritten and renamed away */
    write_text(f->tmp, "garbage from a crash", 20);
    qr_tabdef *d = small_def("logs");
    create_ok(f, d, 1);
    qr_catalog c;
    load_ok(f, &c);
    assert_int_equal(c.ntables, 1);
    qr_catalog_free(&c);
    /* failures: another definition, a damaged catalog */
    qr_err e;
    int created;
    d->omit_nulls = 1;
    assert_int_equal(qr_catalog_create_table(f->data, d, &created, &e), -1);
    assert_false(exists(f->tmp));
    write_text(f->cat, "{\"format\": 1,", 13);
    d->omit_nulls = 0;
    assert_int_equal(qr_catalog_create_table(f->data, d, &created, &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    assert_false(exists(f->tmp));
    assert_int_equal(qr_catalog_drop_table(f->data, "logs", &e), -1);
    assert_false(exists(f->tmp));
    qr_tabdef_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_missing_catalog_is_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_create_writes_the_catalog_and_creates_the_data_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_find_and_reload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_same_definition_again_changes_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_create_another_definition_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_create_checks_the_name_and_the_definition, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_drop_removes_a_table_and_missing_is_42P01, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_catalog_of_another_format_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_catalog_names_file_line_and_column, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_truncated_catalog_is_corrupt, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flipped_bytes_give_clean_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_creates_from_two_processes_all_land, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_catalog_tmp_is_left_behind, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
