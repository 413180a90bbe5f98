/* server.h - `quarry serve`: a PostgreSQL v3 protocol server over one
 * shared SQL database (sql.h), one thread per connection (docs/SERVER.md).
 *
 * Lifecycle: pgw_server_new binds and listens (port 0: the kernel picks
 * one; pgw_server_port tells which); pgw_server_run accepts until
 * pgw_server_stop (async-signal-safe: SIGTERM's handler calls it), then
 * shuts down gracefully: no new connections, idle sessions get FATAL
 * 57P01, running statements get grace_ms to finish, then are canceled and
 * their connections closed; it returns once every connection thread is
 * gone. pgw_serve_io runs one connection in the calling thread over a
 * channel of any kind (tests and the fuzzer use memory). */
#ifndef QR_SERVER_H
#define QR_SERVER_H
#include <stdint.h>

#include "server/wire.h"
#include "sql/sql.h"
#include "util/err.h"

enum { PGW_AUTH_TRUST = 0, PGW_AUTH_SCRAM = 1 };

/* Users with SCRAM verifiers (auth.c). */
typedef struct pgw_user {
    char *name;
    char *verifier; /* "SCRAM-SHA-256$..." */
} pgw_user;
typedef struct pgw_users {
    pgw_user *u;
    uint32_t n;
} pgw_users;

/* The users file: one "name:SCRAM-SHA-256$iter:salt$stored:server" a line;
 * blank lines and lines starting with '#' are skipped. 0, or -1 with e
 * naming the file and line. pgw_users_free frees what was loaded. */
int pgw_users_load(const char *path, pgw_users *us, qr_err *e);
void pgw_users_free(pgw_users *us);
/* "name:verifier\n" for a password (a random 16-byte salt, 4096 iterations). */
int pgw_users_line(const char *name, const char *password, char *out, size_t cap, qr_err *e);

typedef struct pgw_config {
    const char *host;       /* numeric IPv4/IPv6 address or "localhost" (default 127.0.0.1) */
    int port;               /* default 5432; 0: any free port; -1: no listener (pgw_serve_io) */
    int auth;               /* PGW_AUTH_* */
    const pgw_users *users; /* SCRAM: who may connect (superusers), besides the data
                             * directory's users (CREATE USER) */
    int max_conn;           /* sessions at once (default 100); more get 53300 */
    int grace_ms;           /* shutdown: how long running statements may finish (5000) */
    int startup_timeout_ms; /* startup packet and authentication (10000) */
    int idle_timeout_ms;  /* a session waiting this long for a message is closed (57P05); 0 = never
                           */
    const char *tls_cert; /* PEM certificate (chain) and key: SSLRequest gets TLS; */
    const char *tls_key;  /* NULL: SSLRequest is refused with 'N' */
} pgw_config;

void pgw_config_default(pgw_config *c);
/* Refuses what must not run: a listen address beyond loopback without
 * SCRAM, a certificate without its key. 0, or -1 with e set (22023).
 * pgw_server_new also refuses SCRAM without users: neither a users file
 * nor users in the data directory (CREATE USER). */
int pgw_config_check(const pgw_config *c, qr_err *e);

typedef struct pgw_server pgw_server;

/* Check cfg, bind and listen. NULL with e set. The server keeps cfg's
 * pointers (host, users) and db; the caller keeps them alive. */
pgw_server *pgw_server_new(const pgw_config *cfg, qr_sql_db *db, qr_err *e);
int pgw_server_port(const pgw_server *s);
/* Accept and serve until stopped; 0 after a graceful shutdown. */
int pgw_server_run(pgw_server *s, qr_err *e);
void pgw_server_stop(pgw_server *s);
/* After pgw_server_run returned (or instead of it). NULL is a no-op. */
void pgw_server_free(pgw_server *s);
/* Serve one connection over io in this thread, until it ends. */
void pgw_serve_io(pgw_server *s, pgw_io *io);
#endif
