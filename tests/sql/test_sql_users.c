/* test_sql_users.c - CREATE / ALTER / DROP USER (ROLE): users kept in the
 * data directory's USERS file with SCRAM-SHA-256 verifiers (mode 0600, no
 * clear password anywhere in it), the verifier checking the password it
 * was made from, a pre-hashed verifier taken as it is, the errors
 * (42710, 42704, 42501, 42602, 0A000), a restricted session changing only
 * its own password, and sessions creating users at once losing none. */
#include "sqltest.h"

#include <pthread.h>
#include <sys/stat.h>

#include "util/fsutil.h"
#include "util/scram.h"

static int setup(void **st)
{
    (void)st;
    st_open();
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    st_close();
    return 0;
}

static qr_sql_user must_find(const char *name)
{
    qr_sql_user u;
    qr_err e;
    if (qr_sql_user_find(st_s.db, name, &u, &e) != 1)
        fail_msg("user %s not found (%s)", name, e.msg);
    return u;
}

/* The verifier's keys equal the ones made from password with its salt. */
static int verifier_is_of(const char *v, const char *password)
{
    qr_scram_secret sec;
    qr_err e;
    char again[256];
    assert_int_equal(qr_scram_parse(v, &sec, &e), 0);
    assert_int_equal(
        qr_scram_verifier(password, sec.salt, sec.saltlen, sec.iters, again, sizeof again, &e), 0);
    return !strcmp(v, again);
}

static void test_create_alter_drop_users(void **st)
{
    (void)st;
    qr_err e;
    assert_int_equal(qr_sql_user_count(st_s.db, &e), 0);
    st_ok("CREATE USER alice PASSWORD 's3cret pass'", "CREATE ROLE");
    st_ok("CREATE ROLE reader", "CREATE ROLE");
    st_ok("CREATE USER boss WITH SUPERUSER ENCRYPTED PASSWORD 'b0ss' CREATEDB", "CREATE ROLE");
    st_ok("CREATE ROLE app LOGIN PASSWORD 'app'", "CREATE ROLE");
    assert_int_equal(qr_sql_user_count(st_s.db, &e), 4);
    qr_sql_user u = must_find("alice");
    assert_true(u.login && !u.superuser);
    assert_true(verifier_is_of(u.verifier, "s3cret pass"));
    assert_false(verifier_is_of(u.verifier, "s3cret pasS"));
    u = must_find("reader"); /* CREATE ROLE: NOLOGIN, no password */
    assert_true(!u.login && !u.superuser && !u.verifier[0]);
    u = must_find("boss");
    assert_true(u.login && u.superuser && verifier_is_of(u.verifier, "b0ss"));
    assert_true(must_find("app").login);
    assert_int_equal(qr_sql_user_find(st_s.db, "nobody", &u, &e), 0);
    /* the file: 0600, verifiers only */
    char path[4200];
    snprintf(path, sizeof path, "%s/USERS", st_dir);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    unsigned char *text;
    size_t n;
    assert_int_equal(qr_read_file(path, &text, &n, &e), 0);
    assert_null(memmem(text, n, "s3cret", 6));
    assert_null(memmem(text, n, "b0ss", 4));
    free(text);
    /* a pre-hashed verifier is kept as it is; ALTER changes what it names */
    char v[256];
    assert_int_equal(qr_scram_new_verifier("hashed elsewhere", v, sizeof v, &e), 0);
    char sql[512];
    snprintf(sql, sizeof sql, "ALTER USER alice WITH PASSWORD '%s' SUPERUSER", v);
    st_ok(sql, "ALTER ROLE");
    u = must_find("alice");
    assert_string_equal(u.verifier, v);
    assert_true(u.superuser && u.login);
    st_ok("ALTER ROLE alice NOSUPERUSER NOLOGIN", "ALTER ROLE");
    u = must_find("alice");
    assert_true(!u.superuser && !u.login && verifier_is_of(u.verifier, "hashed elsewhere"));
    st_ok("ALTER USER alice PASSWORD NULL", "ALTER ROLE");
    assert_false(must_find("alice").verifier[0]);
    /* errors */
    st_fails("CREATE USER alice", "42710", "role \"alice\" already exists");
    st_fails("ALTER USER nobody PASSWORD 'x'", "42704",
             "role \"nobody\" does not exist at character 12");
    st_fails("DROP USER reader, nobody", "42704", "role \"nobody\" does not exist at character 19");
    assert_true(must_find("reader").name[0]); /* all or nothing */
    st_fails("CREATE USER x PASSWORD 'SCRAM-SHA-256$4096:bad'", "22023",
             "the SCRAM-SHA-256 verifier given as the password is malformed at character 15");
    st_fails("CREATE USER x VALID UNTIL 'infinity'", "0A000",
             "role option \"validUntil\" is not supported (PASSWORD, SUPERUSER, LOGIN, and "
             "CREATEDB, CREATEROLE, INHERIT, which change nothing, are) at character 15");
    st_fails("CREATE USER \"tab\there\"", "42602",
             "invalid role name \"tab\there\" (1 to 63 bytes, no tab or line break)");
    st_fails("CREATE GROUP g", "0A000", "CREATE GROUP is not supported (CREATE USER is)");
    st_ok("DROP USER IF EXISTS nobody, reader", "DROP ROLE");
    st_ok("DROP ROLE app, boss, alice", "DROP ROLE");
    assert_int_equal(qr_sql_user_count(st_s.db, &e), 0);
}

static void test_a_restricted_session_changes_only_its_own_password(void **st)
{
    (void)st;
    st_ok("CREATE USER carol PASSWORD 'one'", "CREATE ROLE");
    st_rows("SHOW is_superuser", "is_superuser\non\n"); /* quarry sql's session */
    qr_sql_session s;
    qr_sql_session_init(&s, st_s.db);
    snprintf(s.user, sizeof s.user, "carol");
    s.restricted = 1;
    qr_err e;
    static const char *const refused[] = {
        "CREATE USER mallory PASSWORD 'x'", "ALTER USER carol SUPERUSER",
        "ALTER USER carol PASSWORD 'x' SUPERUSER", "DROP USER carol"};
    for (int i = 0; i < 4; i++) {
        assert_null(st_run_on(&s, refused[i], NULL, &e));
        assert_string_equal(e.code, "42501");
    }
    char *out = st_run_on(&s, "SHOW is_superuser", NULL, &e);
    assert_string_equal(out, "is_superuser\noff\n");
    free(out);
    out = st_run_on(&s, "ALTER USER CURRENT_USER PASSWORD 'two'", NULL, &e);
    assert_non_null(out);
    free(out);
    assert_true(verifier_is_of(must_find("carol").verifier, "two"));
    out = st_run_on(&s, "ALTER USER carol PASSWORD 'three'", NULL, &e);
    assert_non_null(out);
    free(out);
    assert_true(verifier_is_of(must_find("carol").verifier, "three"));
    assert_false(must_find("carol").superuser);
    s.restricted = 0; /* a superuser session cannot drop itself */
    assert_null(st_run_on(&s, "DROP USER carol", NULL, &e));
    assert_string_equal(e.code, "55006");
    qr_sql_close(&s);
    st_ok("DROP USER carol", "DROP ROLE");
}

typedef struct maker {
    int id;
    int failed;
} maker;

static void *make_users(void *p)
{
    maker *m = p;
    qr_sql_session s;
    qr_sql_session_init(&s, st_s.db);
    for (int i = 0; i < 10; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "CREATE USER u%d_%d PASSWORD 'pw'", m->id, i);
        qr_err e;
        char *out = st_run_on(&s, sql, NULL, &e);
        m->failed += !out;
        free(out);
    }
    qr_sql_close(&s);
    return NULL;
}

static void test_sessions_creating_users_at_once_lose_none(void **st)
{
    (void)st;
    pthread_t t[4];
    maker m[4];
    for (int i = 0; i < 4; i++) {
        m[i] = (maker){i, 0};
        assert_int_equal(pthread_create(&t[i], NULL, make_users, &m[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(m[i].failed, 0);
    }
    qr_err e;
    assert_int_equal(qr_sql_user_count(st_s.db, &e), 40);
    qr_sql_user u;
    assert_int_equal(qr_sql_user_find(st_s.db, "u3_9", &u, &e), 1);
    /* a malformed file is an error naming its line, not a silent empty list */
    char path[4200];
    snprintf(path, sizeof path, "%s/USERS", st_dir);
    FILE *f = fopen(path, "a");
    fputs("broken line\n", f);
    fclose(f);
    assert_int_equal(qr_sql_user_count(st_s.db, &e), -1);
    assert_non_null(strstr(e.msg, "USERS:42: expected NAME<tab>FLAGS<tab>VERIFIER"));
    unlink(path);
    assert_int_equal(qr_sql_user_count(st_s.db, &e), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_alter_drop_users),
        cmocka_unit_test(test_a_restricted_session_changes_only_its_own_password),
        cmocka_unit_test(test_sessions_creating_users_at_once_lose_none),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
