/* auth.c - authentication of a session: trust (AuthenticationOk at once)
 * or SCRAM-SHA-256 against the users file and the data directory's users
 * (CREATE USER: sql.h, read at each connection; scram.c does the math): the
 * AuthenticationSASL offer, SASLInitialResponse -> SASLContinue,
 * SASLResponse -> SASLFinal + AuthenticationOk, or FATAL 28P01 and the
 * connection closed. An unknown user goes through the same steps with a
 * mock verifier, so the answer does not tell which users exist (so does a
 * user without a password, and every user while the data directory's
 * USERS file is unreadable); a NOLOGIN user gets 28000 after its proof.
 * The session is restricted (no CREATE / ALTER / DROP USER but its own
 * password) unless its user is from the users file or a SUPERUSER. Also the
 * users file: loading it, and making a line of it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#include "server/conn.h"
#include "server/scram.h"

enum { AUTH_OK = 0, AUTH_SASL = 10, AUTH_SASL_CONTINUE = 11, AUTH_SASL_FINAL = 12 };

static void put_auth(qr_buf *b, int32_t kind, const void *data, size_t n)
{
    size_t at = pgw_msg_begin(b, 'R');
    pgw_put_i32(b, kind);
    qr_buf_put(b, data, n);
    pgw_msg_end(b, at);
}

static const char *find_verifier(const pgw_users *us, const char *name)
{
    for (uint32_t i = 0; us && i < us->n; i++)
        if (!strcmp(us->u[i].name, name))
            return us->u[i].verifier;
    return NULL;
}

/* The next 'p' message's body; -1 with a FATAL queued. */
static int read_sasl(pgw_conn *c)
{
    uint8_t t;
    qr_err e;
    int rc = pgw_read_msg(c->io, &t, &c->body, 64 << 10, &e);
    if (rc == 1)
        return -1;
    if (rc != 0) {
        pgw_send_fatal(c, e.code, "%s", e.msg);
        return -1;
    }
    if (t != 'p') {
        pgw_send_fatal(c, PGW_E_PROTOCOL, "expected SASL response, got message type %d", t);
        return -1;
    }
    return 0;
}

/* The user's verifier and rights: the users file first (its users are
 * superusers), then the data directory's users (CREATE USER), read now so
 * that a user made on another connection is known. *v NULL: no such user
 * (or no password). */
static void find_user(pgw_conn *c, char *v, size_t cap, int *login, int *superuser)
{
    const char *fv = find_verifier(c->srv->cfg.users, c->user);
    *login = 1;
    *superuser = 1;
    v[0] = 0;
    if (fv) {
        snprintf(v, cap, "%s", fv);
        return;
    }
    qr_sql_user u;
    qr_err e;
    if (qr_sql_user_find(c->srv->db, c->user, &u, &e) == 1) { /* a bad USERS file: nobody */
        snprintf(v, cap, "%s", u.verifier);
        *login = u.login;
        *superuser = u.superuser;
    }
}

static int scram_exchange(pgw_conn *c)
{
    pgw_scram st;
    memset(&st, 0, sizeof st);
    char vbuf[256];
    int login, superuser;
    find_user(c, vbuf, sizeof vbuf, &login, &superuser);
    const char *v = vbuf[0] ? vbuf : NULL;
    c->sess.restricted = !superuser;
    qr_err e;
    if (!v || pgw_scram_parse(v, &st.sec, &e) != 0)
        pgw_scram_mock(c->user, &st.sec);
    static const char mech[] = "SCRAM-SHA-256\0";
    put_auth(&c->io->out, AUTH_SASL, mech, sizeof mech);
    if (pgw_flush(c->io) != 0 || read_sasl(c) != 0)
        return -1;
    pgw_rd r;
    pgw_rd_init(&r, c->body.p, c->body.len);
    const char *m = pgw_rd_str(&r);
    int32_t len = pgw_rd_i32(&r);
    const uint8_t *data = len >= 0 ? pgw_rd_bytes(&r, (size_t)len) : NULL;
    if (r.bad || !data || pgw_rd_left(&r) != 0) {
        pgw_send_fatal(c, PGW_E_PROTOCOL, "malformed SASLInitialResponse message");
        return -1;
    }
    if (strcmp(m, "SCRAM-SHA-256") != 0) {
        pgw_send_fatal(c, PGW_E_PROTOCOL,
                       "client selected an invalid SASL authentication mechanism");
        return -1;
    }
    uint8_t raw[18];
    char snonce[32];
    if (RAND_bytes(raw, sizeof raw) != 1) {
        pgw_send_fatal(c, QR_E_INTERNAL, "could not generate a random nonce");
        return -1;
    }
    pgw_b64_encode(raw, sizeof raw, snonce);
    qr_buf msg;
    qr_buf_init(&msg);
    int rc = pgw_scram_first(&st, (const char *)data, (size_t)len, snonce, &msg, &e);
    if (rc == 0) {
        put_auth(&c->io->out, AUTH_SASL_CONTINUE, msg.p, msg.len);
        rc = pgw_flush(c->io) != 0 || read_sasl(c) != 0 ? -2 : 0;
    }
    if (rc == 0) {
        qr_buf_clear(&msg);
        rc = pgw_scram_final(&st, (const char *)c->body.p, c->body.len, &msg, &e);
        if (rc == 0 && !v) /* a mock verifier cannot pass; never let it */
            rc = qr_errf(&e, PGW_E_AUTH, "password authentication failed");
        if (rc == 0)
            put_auth(&c->io->out, AUTH_SASL_FINAL, msg.p, msg.len);
    }
    qr_buf_free(&msg);
    if (rc == 0 && !login) {
        pgw_send_fatal(c, "28000", "role \"%s\" is not permitted to log in", c->user);
        return -1;
    }
    if (rc == -1) {
        if (!strcmp(e.code, PGW_E_AUTH))
            pgw_send_fatal(c, PGW_E_AUTH, "password authentication failed for user \"%s\"",
                           c->user);
        else
            pgw_send_fatal(c, e.code, "%s", e.msg);
    }
    return rc == 0 ? 0 : -1;
}

int pgw_authenticate(pgw_conn *c)
{
    snprintf(c->sess.user, sizeof c->sess.user, "%s", c->user);
    c->sess.restricted = 0; /* trust: loopback only, anyone may */
    if (c->srv->cfg.auth == PGW_AUTH_SCRAM && scram_exchange(c) != 0)
        return -1;
    put_auth(&c->io->out, AUTH_OK, NULL, 0);
    return 0;
}

int pgw_users_load(const char *path, pgw_users *us, qr_err *e)
{
    memset(us, 0, sizeof *us);
    FILE *f = fopen(path, "r");
    if (!f)
        return qr_errf(e, QR_E_IO, "open %s: %s", path, strerror(errno));
    char line[1024];
    int rc = 0;
    for (unsigned no = 1; rc == 0 && fgets(line, sizeof line, f); no++) {
        size_t n = strlen(line);
        if (n == sizeof line - 1 && line[n - 1] != '\n') {
            rc = qr_errf(e, QR_E_TOO_LONG, "%s:%u: line too long", path, no);
            break;
        }
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = 0;
        if (!n || line[0] == '#')
            continue;
        char *colon = strchr(line, ':');
        pgw_scram_secret sec;
        if (!colon || colon == line) {
            rc = qr_errf(e, QR_E_ARGS, "%s:%u: expected name:SCRAM-SHA-256$...", path, no);
            break;
        }
        *colon = 0;
        if (pgw_scram_parse(colon + 1, &sec, e) != 0) {
            rc = qr_err_prefix(e, "%s:%u: user %s: ", path, no, line);
            break;
        }
        if (find_verifier(us, line)) {
            rc = qr_errf(e, QR_E_ARGS, "%s:%u: user %s appears twice", path, no, line);
            break;
        }
        pgw_user *nu = realloc(us->u, sizeof *us->u * (us->n + 1));
        if (!nu) {
            rc = qr_errf(e, QR_E_NOMEM, "out of memory reading %s", path);
            break;
        }
        us->u = nu;
        nu[us->n].name = strdup(line);
        nu[us->n].verifier = strdup(colon + 1);
        us->n++;
        if (!nu[us->n - 1].name || !nu[us->n - 1].verifier)
            rc = qr_errf(e, QR_E_NOMEM, "out of memory reading %s", path);
    }
    if (rc == 0 && ferror(f))
        rc = qr_errf(e, QR_E_IO, "read %s: %s", path, strerror(errno));
    fclose(f);
    if (rc == 0 && us->n == 0)
        rc = qr_errf(e, QR_E_ARGS, "%s: no users", path);
    if (rc != 0)
        pgw_users_free(us);
    return rc;
}

void pgw_users_free(pgw_users *us)
{
    for (uint32_t i = 0; i < us->n; i++) {
        free(us->u[i].name);
        free(us->u[i].verifier);
    }
    free(us->u);
    memset(us, 0, sizeof *us);
}

int pgw_users_line(const char *name, const char *password, char *out, size_t cap, qr_err *e)
{
    uint8_t salt[16];
    char v[256];
    if (!*name || strchr(name, ':') || strchr(name, '\n'))
        return qr_errf(e, QR_E_ARGS, "a user name must be non-empty, without ':' or newline");
    if (RAND_bytes(salt, sizeof salt) != 1)
        return qr_errf(e, QR_E_INTERNAL, "RAND_bytes failed");
    if (pgw_scram_verifier(password, salt, sizeof salt, PGW_SCRAM_ITERS, v, sizeof v, e) != 0)
        return -1;
    if ((size_t)snprintf(out, cap, "%s:%s\n", name, v) >= cap)
        return qr_errf(e, QR_E_TOO_LONG, "user name too long");
    return 0;
}
