/* stmt_user.c - CREATE USER / ROLE, ALTER USER / ROLE, DROP USER / ROLE:
 * the users kept in the data directory's USERS file (sql.h "users"), which
 * a server's SCRAM authentication reads at each connection.
 *
 * The file: a comment line, then one user a line, `NAME TAB FLAGS TAB
 * VERIFIER`, FLAGS "login", "superuser", "login,superuser" or "-",
 * VERIFIER PostgreSQL's SCRAM-SHA-256 text or "-" (no password: the user
 * cannot log in with SCRAM). Names are at most 63 bytes, without tab,
 * newline or NUL. A password given in clear is hashed at once (a random
 * salt, 4096 iterations); a 'SCRAM-SHA-256$...' string is taken as the
 * verifier (as PostgreSQL does); the clear text is never stored, printed
 * or put in a message.
 *
 * Changes are a read-modify-write under an exclusive flock on USERS.lock
 * (other sessions and other processes wait), replacing the file
 * atomically: USERS.tmp (mode 0600), fsync, rename, fsync of the
 * directory. Readers need no lock: they see the old file or the new. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sql/stmt.h"
#include "util/fsutil.h"
#include "util/scram.h"

#define E_PRIVILEGE "42501"
#define E_DUP_OBJ   "42710"
#define E_BAD_NAME  "42602"
#define MAX_USERS   100000

typedef struct userlist {
    qr_sql_user *u;
    uint32_t n, cap;
} userlist;

static void users_path(const qr_sql_db *db, const char *suffix, char *out, size_t cap)
{
    snprintf(out, cap, "%s/USERS%s", qr_sql_db_dir(db), suffix);
}

/* Parse one line (NUL-terminated, no newline) into u; -1 when malformed. */
static int parse_line(char *line, qr_sql_user *u)
{
    char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    if (!t1 || !t2 || t1 == line || (size_t)(t1 - line) >= sizeof u->name)
        return -1;
    memset(u, 0, sizeof *u);
    memcpy(u->name, line, (size_t)(t1 - line));
    *t2 = 0;
    const char *flags = t1 + 1, *v = t2 + 1;
    if (strcmp(flags, "-") && strcmp(flags, "login") && strcmp(flags, "superuser") &&
        strcmp(flags, "login,superuser"))
        return -1;
    u->login = strstr(flags, "login") != NULL;
    u->superuser = strstr(flags, "superuser") != NULL;
    if (strcmp(v, "-") != 0) {
        qr_scram_secret sec;
        if (strlen(v) >= sizeof u->verifier || qr_scram_parse(v, &sec, NULL) != 0)
            return -1;
        snprintf(u->verifier, sizeof u->verifier, "%s", v);
    }
    return 0;
}

/* Read USERS into l (empty when there is no file). 0, or -1 with e naming
 * the file and line. */
static int users_read(const qr_sql_db *db, userlist *l, qr_err *e)
{
    memset(l, 0, sizeof *l);
    char path[PATH_MAX];
    users_path(db, "", path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : qr_errf(e, QR_E_IO, "open %s: %s", path, strerror(errno));
    char line[1024];
    int rc = 0;
    for (unsigned no = 1; rc == 0 && fgets(line, sizeof line, f); no++) {
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n')
            line[--n] = 0;
        else if (!feof(f))
            rc = qr_errf(e, QR_E_CORRUPT, "%s:%u: line too long", path, no);
        if (rc != 0 || !n || line[0] == '#')
            continue;
        if (l->n == l->cap) {
            uint32_t nc = l->cap ? l->cap * 2 : 16;
            qr_sql_user *nu = nc <= MAX_USERS ? realloc(l->u, sizeof *nu * nc) : NULL;
            if (!nu) {
                rc = qr_errf(e, QR_E_NOMEM, "%s: too many users", path);
                break;
            }
            l->u = nu;
            l->cap = nc;
        }
        if (parse_line(line, &l->u[l->n]) != 0)
            rc = qr_errf(e, QR_E_CORRUPT, "%s:%u: expected NAME<tab>FLAGS<tab>VERIFIER", path, no);
        else
            l->n++;
    }
    if (rc == 0 && ferror(f))
        rc = qr_errf(e, QR_E_IO, "read %s: %s", path, strerror(errno));
    fclose(f);
    if (rc != 0) {
        free(l->u);
        memset(l, 0, sizeof *l);
    }
    return rc;
}

/* Replace USERS with l: USERS.tmp (0600), fsync, rename, fsync dir. */
static int users_write(const qr_sql_db *db, const userlist *l, qr_err *e)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    users_path(db, "", path, sizeof path);
    users_path(db, ".tmp", tmp, sizeof tmp);
    qr_buf b;
    qr_buf_init(&b);
    static const char head[] = "# quarry users: NAME<tab>FLAGS<tab>VERIFIER (CREATE USER; "
                               "docs/SERVER.md)\n";
    qr_buf_put(&b, head, sizeof head - 1);
    for (uint32_t i = 0; i < l->n; i++) {
        const qr_sql_user *u = &l->u[i];
        const char *flags = u->login && u->superuser ? "login,superuser"
                            : u->login               ? "login"
                            : u->superuser           ? "superuser"
                                                     : "-";
        qr_buf_put(&b, u->name, strlen(u->name));
        qr_buf_put_u8(&b, '\t');
        qr_buf_put(&b, flags, strlen(flags));
        qr_buf_put_u8(&b, '\t');
        const char *v = u->verifier[0] ? u->verifier : "-";
        qr_buf_put(&b, v, strlen(v));
        qr_buf_put_u8(&b, '\n');
    }
    int rc = b.oom ? qr_errf(e, QR_E_NOMEM, "out of memory writing %s", path) : 0;
    int fd = rc == 0 ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
    if (rc == 0 && fd < 0)
        rc = qr_errf(e, QR_E_IO, "create %s: %s", tmp, strerror(errno));
    if (rc == 0 && fchmod(fd, 0600) != 0) /* an old tmp of another mode */
        rc = qr_errf(e, QR_E_IO, "chmod %s: %s", tmp, strerror(errno));
    if (rc == 0)
        rc = qr_write_all(fd, b.p, b.len, tmp, e);
    if (rc == 0)
        rc = qr_fsync_file(fd, tmp, e);
    if (fd >= 0 && close(fd) != 0 && rc == 0)
        rc = qr_errf(e, QR_E_IO, "close %s: %s", tmp, strerror(errno));
    if (rc == 0)
        rc = qr_rename(tmp, path, e);
    if (rc == 0)
        rc = qr_fsync_dir(qr_sql_db_dir(db), e);
    if (rc != 0)
        unlink(tmp);
    qr_buf_free(&b);
    return rc;
}

static int find(const userlist *l, const char *name)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (!strcmp(l->u[i].name, name))
            return (int)i;
    return -1;
}

int qr_sql_user_find(const qr_sql_db *db, const char *name, qr_sql_user *u, qr_err *e)
{
    userlist l;
    if (users_read(db, &l, e) != 0)
        return -1;
    int at = find(&l, name);
    if (at >= 0)
        *u = l.u[at];
    free(l.u);
    return at >= 0;
}

long qr_sql_user_count(const qr_sql_db *db, qr_err *e)
{
    userlist l;
    if (users_read(db, &l, e) != 0)
        return -1;
    free(l.u);
    return (long)l.n;
}

/* ---- the statements ---- */

/* The exclusive lock on USERS.lock: its fd, or -1 with e set. */
static int lock_users(const qr_sql_db *db, qr_err *e)
{
    char path[PATH_MAX];
    users_path(db, ".lock", path, sizeof path);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return qr_errf(e, QR_E_IO, "open %s: %s", path, strerror(errno));
    while (flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            close(fd);
            return qr_errf(e, QR_E_IO, "lock %s: %s", path, strerror(errno));
        }
    return fd;
}

static int check_name(const qr_sqlparse *p, const char *name, int32_t loc, qr_err *e)
{
    size_t n = strlen(name);
    if (n == 0 || n >= sizeof((qr_sql_user *)0)->name || strpbrk(name, "\t\n\r")) {
        qr_errf(e, E_BAD_NAME, "invalid role name \"%.63s\" (1 to 63 bytes, no tab or line break)",
                name);
        return loc >= 0 ? qr_sqlp_at(p, loc, e) : -1;
    }
    return 0;
}

static int opt_true(const PgQuery__Node *arg)
{
    if (!arg)
        return 1;
    if (arg->node_case == PG_QUERY__NODE__NODE_BOOLEAN)
        return arg->boolean->boolval;
    if (arg->node_case == PG_QUERY__NODE__NODE_INTEGER)
        return arg->integer->ival != 0;
    return 1;
}

/* Apply the options of CREATE / ALTER to u; *pw_set when PASSWORD was given.
 * 0, or -1 with e set. */
static int apply_options(const qr_sqlparse *p, PgQuery__Node **opts, size_t n, qr_sql_user *u,
                         int *pw_set, qr_err *e)
{
    for (size_t i = 0; i < n; i++) {
        if (opts[i]->node_case != PG_QUERY__NODE__NODE_DEF_ELEM)
            continue;
        const PgQuery__DefElem *de = opts[i]->def_elem;
        if (!strcmp(de->defname, "password")) {
            *pw_set = 1;
            const char *pw = qr_sql_strval(de->arg);
            if (!pw) { /* PASSWORD NULL */
                u->verifier[0] = 0;
                continue;
            }
            qr_scram_secret sec;
            if (!strncmp(pw, "SCRAM-SHA-256$", 14)) {
                if (qr_scram_parse(pw, &sec, e) != 0 || strlen(pw) >= sizeof u->verifier) {
                    qr_errf(e, QR_E_ARGS,
                            "the SCRAM-SHA-256 verifier given as the password is "
                            "malformed");
                    return qr_sqlp_at(p, de->location, e);
                }
                snprintf(u->verifier, sizeof u->verifier, "%s", pw);
            } else if (!pw[0]) {
                u->verifier[0] = 0; /* PostgreSQL: an empty password is none */
            } else if (qr_scram_new_verifier(pw, u->verifier, sizeof u->verifier, e) != 0) {
                return -1;
            }
        } else if (!strcmp(de->defname, "superuser")) {
            u->superuser = opt_true(de->arg);
        } else if (!strcmp(de->defname, "canlogin")) {
            u->login = opt_true(de->arg);
        } else if (!strcmp(de->defname, "createdb") || !strcmp(de->defname, "createrole") ||
                   !strcmp(de->defname, "inherit")) {
            /* accepted: nothing in Quarry depends on them */
        } else {
            qr_errf(e, QR_E_FEATURE,
                    "role option \"%s\" is not supported (PASSWORD, SUPERUSER, LOGIN, and "
                    "CREATEDB, CREATEROLE, INHERIT, which change nothing, are)",
                    de->defname);
            return qr_sqlp_at(p, de->location, e);
        }
    }
    return 0;
}

static int denied(qr_err *e, const char *what)
{
    return qr_errf(e, E_PRIVILEGE,
                   "permission denied to %s (only a superuser may: a user of --users FILE or "
                   "one made WITH SUPERUSER)",
                   what);
}

static int create_role(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__CreateRoleStmt *c,
                       qr_result *out, qr_err *e)
{
    if (s->restricted)
        return denied(e, "create role");
    if (c->stmt_type == PG_QUERY__ROLE_STMT_TYPE__ROLESTMT_GROUP)
        return qr_errf(e, QR_E_FEATURE, "CREATE GROUP is not supported (CREATE USER is)");
    if (check_name(p, c->role, -1, e) != 0)
        return -1;
    qr_sql_user u;
    memset(&u, 0, sizeof u);
    snprintf(u.name, sizeof u.name, "%s", c->role);
    u.login = c->stmt_type == PG_QUERY__ROLE_STMT_TYPE__ROLESTMT_USER; /* CREATE ROLE: NOLOGIN */
    int pw = 0;
    if (apply_options(p, c->options, c->n_options, &u, &pw, e) != 0)
        return -1;
    int fd = lock_users(s->db, e);
    if (fd < 0)
        return -1;
    userlist l;
    int rc = users_read(s->db, &l, e);
    if (rc == 0 && find(&l, u.name) >= 0)
        rc = qr_errf(e, E_DUP_OBJ, "role \"%s\" already exists", u.name);
    if (rc == 0 && l.n == l.cap) {
        qr_sql_user *nu = l.n < MAX_USERS ? realloc(l.u, sizeof *nu * (l.n + 1)) : NULL;
        rc = nu ? 0 : qr_errf(e, QR_E_NOMEM, "too many users");
        if (nu)
            l.u = nu, l.cap = l.n + 1;
    }
    if (rc == 0) {
        l.u[l.n++] = u;
        rc = users_write(s->db, &l, e);
    }
    free(l.u);
    close(fd);
    if (rc == 0)
        snprintf(out->tag, sizeof out->tag, "CREATE ROLE");
    return rc;
}

/* The name a RoleSpec names (CURRENT_USER / SESSION_USER: the session's). */
static const char *role_name(const qr_sql_session *s, const PgQuery__RoleSpec *r)
{
    if (r->roletype == PG_QUERY__ROLE_SPEC_TYPE__ROLESPEC_CSTRING)
        return r->rolename;
    if (r->roletype == PG_QUERY__ROLE_SPEC_TYPE__ROLESPEC_CURRENT_USER ||
        r->roletype == PG_QUERY__ROLE_SPEC_TYPE__ROLESPEC_CURRENT_ROLE ||
        r->roletype == PG_QUERY__ROLE_SPEC_TYPE__ROLESPEC_SESSION_USER)
        return s->user;
    return "";
}

static int alter_role(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__AlterRoleStmt *a,
                      qr_result *out, qr_err *e)
{
    const char *name = a->role ? role_name(s, a->role) : "";
    if (!name[0])
        return qr_errf(e, QR_E_FEATURE, "ALTER ROLE takes a role name");
    /* anyone may change their own password (as in PostgreSQL); the rest is a superuser's */
    int own_password = !strcmp(name, s->user) && a->n_options == 1 &&
                       a->options[0]->node_case == PG_QUERY__NODE__NODE_DEF_ELEM &&
                       !strcmp(a->options[0]->def_elem->defname, "password");
    if (s->restricted && !own_password)
        return denied(e, "alter role");
    int fd = lock_users(s->db, e);
    if (fd < 0)
        return -1;
    userlist l;
    int rc = users_read(s->db, &l, e), at = -1;
    if (rc == 0 && (at = find(&l, name)) < 0) {
        rc = qr_errf(e, QR_E_UNDEFINED_OBJECT, "role \"%s\" does not exist", name);
        if (a->role->location >= 0)
            qr_sqlp_at(p, a->role->location, e);
    }
    int pw = 0;
    if (rc == 0)
        rc = apply_options(p, a->options, a->n_options, &l.u[at], &pw, e);
    if (rc == 0)
        rc = users_write(s->db, &l, e);
    free(l.u);
    close(fd);
    if (rc == 0)
        snprintf(out->tag, sizeof out->tag, "ALTER ROLE");
    return rc;
}

static int drop_role(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__DropRoleStmt *d,
                     qr_result *out, qr_err *e)
{
    if (s->restricted)
        return denied(e, "drop role");
    int fd = lock_users(s->db, e);
    if (fd < 0)
        return -1;
    userlist l;
    int rc = users_read(s->db, &l, e), changed = 0;
    for (size_t i = 0; rc == 0 && i < d->n_roles; i++) {
        const PgQuery__Node *n = d->roles[i];
        if (n->node_case != PG_QUERY__NODE__NODE_ROLE_SPEC)
            continue;
        const char *name = role_name(s, n->role_spec);
        int at = find(&l, name);
        if (name[0] && !strcmp(name, s->user)) {
            rc = qr_errf(e, "55006", "current user cannot be dropped");
        } else if (at < 0 && !d->missing_ok) {
            rc = qr_errf(e, QR_E_UNDEFINED_OBJECT, "role \"%s\" does not exist", name);
            qr_sqlp_at(p, n->role_spec->location, e);
        } else if (at >= 0) {
            l.u[at] = l.u[--l.n];
            changed = 1;
        }
    }
    if (rc == 0 && changed)
        rc = users_write(s->db, &l, e);
    free(l.u);
    close(fd);
    if (rc == 0)
        snprintf(out->tag, sizeof out->tag, "DROP ROLE");
    return rc;
}

int qr_sql_stmt_role(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__Node *st,
                     qr_result *out, qr_err *e)
{
    switch (st->node_case) {
    case PG_QUERY__NODE__NODE_CREATE_ROLE_STMT:
        return create_role(s, p, st->create_role_stmt, out, e);
    case PG_QUERY__NODE__NODE_ALTER_ROLE_STMT:
        return alter_role(s, p, st->alter_role_stmt, out, e);
    case PG_QUERY__NODE__NODE_DROP_ROLE_STMT:
        return drop_role(s, p, st->drop_role_stmt, out, e);
    default:
        return qr_errf(e, QR_E_INTERNAL, "not a role statement");
    }
}
