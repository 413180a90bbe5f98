/* conn.h - the server's internal contract: the server object (listen.c),
 * the backend key table (cancel.c) and one connection's state, shared by
 * the files that handle its phases: startup.c, auth.c, simple.c,
 * extended.c, rows.c, copy.c, and conn.c (the message loop). A connection is used
 * by its own thread only; the server's shared parts are the key table
 * (under its mutex) and atomics. */
#ifndef QR_SERVER_CONN_H
#define QR_SERVER_CONN_H
#include <pthread.h>
#include <stdatomic.h>

#include "server/server.h"
#include "server/subst.h"
#include "server/wire.h"
#include "sql/sql.h"

/* ---- backend keys for CancelRequest (cancel.c) ---- */
typedef struct pgw_key {
    int32_t pid, secret;
    atomic_int *flag; /* NULL: free entry */
} pgw_key;
typedef struct pgw_keys {
    pthread_mutex_t mu;
    pgw_key *k;
    uint32_t n, cap;
    int32_t next_pid;
} pgw_keys;
int pgw_keys_init(pgw_keys *t, uint32_t cap, qr_err *e);
void pgw_keys_free(pgw_keys *t);
/* A new key (a pid and a random secret) for flag; -1 with e when full. */
int pgw_keys_add(pgw_keys *t, atomic_int *flag, int32_t *pid, int32_t *secret, qr_err *e);
void pgw_keys_remove(pgw_keys *t, int32_t pid);
/* Set the flag of the session with this key; 1 if one matched. */
int pgw_keys_cancel(pgw_keys *t, int32_t pid, int32_t secret);
/* Set every session's flag (shutdown past its grace period). */
void pgw_keys_cancel_all(pgw_keys *t);

struct pgw_server {
    pgw_config cfg;
    qr_sql_db *db;
    int lfd, port;
    SSL_CTX *tls; /* with a certificate configured: TLS for SSLRequest */
    int wake[2];  /* a pipe: pgw_server_stop writes a byte, the accept loop wakes */
    pgw_keys keys;
    atomic_int stopping;   /* no new connections; idle sessions end */
    atomic_int past_grace; /* running statements are canceled; blocked writes give up */
    atomic_int sessions;   /* authenticated-or-authenticating sessions (the cap) */
    pthread_mutex_t mu;    /* live: connection threads, for the shutdown wait */
    pthread_cond_t cv;
    int live;
};

/* ---- one connection ---- */
/* The head of a statement or a portal: a list by name. */
typedef struct pgw_named {
    struct pgw_named *next;
    char *name;
} pgw_named;

typedef struct pgw_stmt {
    pgw_named hd; /* first: the lists are of pgw_named */
    char *sql;    /* NUL-terminated */
    size_t n;
    uint32_t nparams;
    uint32_t *oids; /* nparams declared types (0 = unspecified) */
} pgw_stmt;

typedef struct pgw_portal {
    pgw_named hd;  /* first */
    pgw_text text; /* the statement with its parameters substituted */
    int16_t *fmts; /* result column formats as Bind gave them */
    uint16_t nfmts;
    int copy;   /* PGW_COPY_IN / PGW_COPY_OUT: Execute runs the copy */
    int ran;    /* the statement ran: r holds its result */
    int failed; /* ... and failed (e) */
    qr_err e;
    qr_qctx ctx;
    qr_result r;
    uint64_t row; /* the next row Execute sends */
} pgw_portal;

typedef struct pgw_conn {
    pgw_server *srv;
    pgw_io *io;
    qr_sql_session sess;
    atomic_int cancel;
    int32_t pid, secret;
    int keyed;
    int counted; /* counted in srv->sessions */
    char user[64], database[64], appname[64];
    qr_buf body;        /* the message being handled */
    pgw_named *stmts;   /* of pgw_stmt */
    pgw_named *portals; /* of pgw_portal */
    uint32_t nstmts, nportals;
    int skip_to_sync; /* an error in extended mode: discard until Sync */
    int gone;         /* a COPY found the connection over: the loop ends */
} pgw_conn;

#define PGW_MAX_STMTS   1000
#define PGW_MAX_PORTALS 1000

/* startup.c: 1 = a session to serve, 0 = done (a cancel request, or the
 * client left), -1 = failed (a FATAL was queued when it could be). */
int pgw_startup(pgw_conn *c);
/* auth.c: 0 authenticated (AuthenticationOk queued), -1 refused (FATAL queued). */
int pgw_authenticate(pgw_conn *c);
/* simple.c: a Query message. */
void pgw_simple_query(pgw_conn *c, const uint8_t *body, size_t n);
/* extended.c: Parse, Bind, Describe, Execute, Close, Sync, Flush; 0, or -1
 * when the message is malformed (e set: the connection ends). */
int pgw_extended(pgw_conn *c, uint8_t type, const uint8_t *body, size_t n, qr_err *e);
void pgw_extended_free(pgw_conn *c);
/* rows.c: RowDescription of r (formats as Bind gives them: 0 = all text,
 * 1 = one for all, else one per column); DataRows [from, to) (flushing as
 * the buffer fills; -1 when the client is gone). With stop, the statement's
 * context, each flush first looks at its cancel flag and deadline: 1 with e
 * set (57014) stops a result that takes long to send, as PostgreSQL's
 * executor does between rows. */
void pgw_put_rowdesc(qr_buf *b, const qr_result *r, const int16_t *fmts, uint16_t nfmts);
int pgw_send_rows(pgw_conn *c, const qr_result *r, uint64_t from, uint64_t to, const int16_t *fmts,
                  uint16_t nfmts, qr_qctx *stop, qr_err *e);
/* copy.c: COPY FROM STDIN / TO STDOUT of a statement (its text sql[0..n);
 * map and arg map an error's position back to the client's text).
 * pgw_copy_kind: PGW_COPY_IN, PGW_COPY_OUT or 0 (another statement).
 * The copies return PGW_COPY_OK (CommandComplete queued), PGW_COPY_FAILED
 * (ErrorResponse queued: the caller skips the rest of the Query text, or
 * discards until Sync) or PGW_COPY_GONE (the connection ends; a FATAL may
 * be queued). */
enum { PGW_COPY_IN = 1, PGW_COPY_OUT = 2 };
enum { PGW_COPY_OK = 0, PGW_COPY_FAILED = 1, PGW_COPY_GONE = 2 };
int pgw_copy_kind(const char *sql, size_t n);
int pgw_copy_in(pgw_conn *c, const char *sql, size_t n, long (*map)(void *, long), void *arg);
int pgw_copy_out(pgw_conn *c, const char *sql, size_t n, long (*map)(void *, long), void *arg);
/* The command tag of a finished statement: r->tag, or "SELECT n". */
void pgw_tag(const qr_result *r, uint64_t rows, char *out, size_t cap);
/* conn.c: a statement is about to run: its query context (the session's
 * settings, the connection's cancel flag: cleared, unless the server is
 * past its shutdown grace period). */
void pgw_stmt_ctx(pgw_conn *c, qr_qctx *ctx);
/* The cancel flag alone, as pgw_stmt_ctx sets it (COPY FROM STDIN). */
void pgw_stmt_begin_cancel(pgw_conn *c);
/* conn.c: queue an ErrorResponse (ERROR) for e; positions mapped by map. */
void pgw_send_error(pgw_conn *c, const qr_err *e, long (*map)(void *, long), void *arg);
void pgw_send_fatal(pgw_conn *c, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#endif
