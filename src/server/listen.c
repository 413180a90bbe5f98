/* listen.c - the listener: binds the configured address (refusing one
 * beyond loopback without SCRAM), accepts connections and serves each in
 * a thread of its own (sessions capped by max_conn: 53300 past it; a few
 * threads more so CancelRequests still get in), and the graceful shutdown:
 * stop accepting, idle sessions end, running statements get grace_ms, then
 * their cancel flags are set and blocked writes give up; pgw_server_run
 * returns when the last connection thread is gone. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "server/conn.h"

#define EXTRA_THREADS 8 /* past max_conn: connections that may be cancel requests */

void pgw_config_default(pgw_config *c)
{
    memset(c, 0, sizeof *c);
    c->host = "127.0.0.1";
    c->port = 5432;
    c->auth = PGW_AUTH_TRUST;
    c->max_conn = 100;
    c->grace_ms = 5000;
    c->startup_timeout_ms = 10000;
}

/* Is host (numeric, or "localhost") a loopback address? */
static int is_loopback(const char *host)
{
    if (!strcmp(host, "localhost"))
        return 1;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return 0;
}

int pgw_config_check(const pgw_config *c, qr_err *e)
{
    if (c->port >= 0 && !is_loopback(c->host) && c->auth != PGW_AUTH_SCRAM)
        return qr_errf(e, QR_E_ARGS,
                       "refusing to listen on %s without authentication: a non-loopback address "
                       "needs --auth scram (with --users FILE or users made by CREATE USER)",
                       c->host);
    if (!c->tls_cert != !c->tls_key)
        return qr_errf(e, QR_E_ARGS, "TLS needs both a certificate and its key");
    if (c->max_conn < 1 || c->max_conn > 10000)
        return qr_errf(e, QR_E_ARGS, "max connections %d is not in 1..10000", c->max_conn);
    if (c->port > 65535)
        return qr_errf(e, QR_E_ARGS, "port %d is not in 0..65535", c->port);
    return 0;
}

static int bind_listen(pgw_server *s, qr_err *e)
{
    const char *host = strcmp(s->cfg.host, "localhost") ? s->cfg.host : "127.0.0.1";
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t sl;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)s->cfg.port);
        sl = sizeof *a4;
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)s->cfg.port);
        sl = sizeof *a6;
    } else {
        return qr_errf(e, QR_E_ARGS, "listen address %s is not a numeric IPv4 or IPv6 address",
                       host);
    }
    s->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->lfd < 0)
        return qr_errf(e, QR_E_IO, "socket: %s", strerror(errno));
    int one = 1;
    setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s->lfd, (struct sockaddr *)&ss, sl) != 0 || listen(s->lfd, 128) != 0)
        return qr_errf(e, QR_E_IO, "listen on %s:%d: %s", host, s->cfg.port, strerror(errno));
    if (getsockname(s->lfd, (struct sockaddr *)&ss, &sl) != 0)
        return qr_errf(e, QR_E_IO, "getsockname: %s", strerror(errno));
    s->port = ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
    return 0;
}

/* The TLS context of the configured certificate and key (TLS 1.2 or later). */
static int tls_init(pgw_server *s, qr_err *e)
{
    s->tls = SSL_CTX_new(TLS_server_method());
    if (!s->tls)
        return qr_errf(e, QR_E_NOMEM, "cannot create a TLS context");
    SSL_CTX_set_min_proto_version(s->tls, TLS1_2_VERSION);
    SSL_CTX_set_mode(s->tls, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    const char *what = s->cfg.tls_cert;
    if (SSL_CTX_use_certificate_chain_file(s->tls, s->cfg.tls_cert) == 1) {
        what = s->cfg.tls_key;
        if (SSL_CTX_use_PrivateKey_file(s->tls, s->cfg.tls_key, SSL_FILETYPE_PEM) == 1 &&
            SSL_CTX_check_private_key(s->tls) == 1)
            return 0;
    }
    char why[200];
    ERR_error_string_n(ERR_get_error(), why, sizeof why);
    return qr_errf(e, QR_E_ARGS, "TLS: %s: %s", what, why);
}

pgw_server *pgw_server_new(const pgw_config *cfg, qr_sql_db *db, qr_err *e)
{
    if (pgw_config_check(cfg, e) != 0)
        return NULL;
    if (cfg->auth == PGW_AUTH_SCRAM && (!cfg->users || !cfg->users->n)) {
        long n = qr_sql_user_count(db, e);
        if (n < 0)
            return NULL;
        if (n == 0) {
            qr_errf(e, QR_E_ARGS,
                    "--auth scram needs a users file (--users FILE) or users made by CREATE "
                    "USER in the data directory");
            return NULL;
        }
    }
    pgw_server *s = calloc(1, sizeof *s);
    if (!s) {
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    s->db = db;
    s->lfd = -1;
    s->wake[0] = s->wake[1] = -1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pgw_keys_init(&s->keys, (uint32_t)cfg->max_conn + EXTRA_THREADS, e) != 0 ||
        (cfg->tls_cert && tls_init(s, e) != 0) || (cfg->port >= 0 && bind_listen(s, e) != 0) ||
        (cfg->port >= 0 && pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) != 0 &&
         qr_errf(e, QR_E_IO, "pipe: %s", strerror(errno)))) {
        pgw_server_free(s);
        return NULL;
    }
    return s;
}

int pgw_server_port(const pgw_server *s) { return s->port; }

void pgw_server_stop(pgw_server *s)
{
    atomic_store(&s->stopping, 1);
    if (s->wake[1] >= 0) {
        ssize_t w = write(s->wake[1], "x", 1); /* async-signal-safe */
        (void)w;
    }
}

typedef struct conn_arg {
    pgw_server *s;
    int fd;
} conn_arg;

/* Close a connection so that what was sent last (a FATAL) reaches the
 * client: closing with unread input makes the kernel reset the connection,
 * and a reset can discard the answer before the client reads it. So: no
 * more sending, read and drop what the client still sends until it closes
 * (bounded: 300 ms, 1 MiB), then close. */
static void linger_close(int fd)
{
    shutdown(fd, SHUT_WR);
    char junk[4096];
    size_t total = 0;
    int64_t end = qr_qctx_now_ns() + 300000000;
    while (total < (1u << 20)) {
        ssize_t r = recv(fd, junk, sizeof junk, MSG_DONTWAIT);
        if (r > 0) {
            total += (size_t)r;
            continue;
        }
        if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            break;
        int64_t left = end - qr_qctx_now_ns();
        if (left <= 0)
            break;
        struct pollfd pf = {fd, POLLIN, 0};
        poll(&pf, 1, (int)(left / 1000000) + 1);
    }
    close(fd);
}

static void *conn_thread(void *p)
{
    conn_arg a = *(conn_arg *)p;
    free(p);
    pthread_setname_np(pthread_self(), "quarry-conn"); /* as top -H and /proc show it */
    pgw_io io;
    pgw_io_init_fd(&io, a.fd);
    pgw_serve_io(a.s, &io);
    pgw_io_free(&io);
    linger_close(a.fd);
    /* this thread's OpenSSL state (the cancel key's random generator) goes
     * now, not in a thread-exit destructor that the process's exit may
     * outrun once the count below lets the server stop */
    OPENSSL_thread_stop();
    pthread_mutex_lock(&a.s->mu);
    a.s->live--;
    pthread_cond_broadcast(&a.s->cv);
    pthread_mutex_unlock(&a.s->mu);
    return NULL;
}

static void accept_one(pgw_server *s)
{
    int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0)
        return;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    pthread_mutex_lock(&s->mu);
    int full = s->live >= s->cfg.max_conn + EXTRA_THREADS;
    if (!full)
        s->live++;
    pthread_mutex_unlock(&s->mu);
    conn_arg *a = full ? NULL : malloc(sizeof *a);
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int ok = 0;
    if (a) {
        a->s = s;
        a->fd = fd;
        ok = pthread_create(&t, &at, conn_thread, a) == 0;
        if (!ok)
            free(a);
    }
    pthread_attr_destroy(&at);
    if (ok)
        return;
    if (!full) {
        pthread_mutex_lock(&s->mu);
        s->live--;
        pthread_mutex_unlock(&s->mu);
    }
    /* no thread for it: say so in one write (never blocks long: tiny) */
    pgw_io io;
    pgw_io_init_fd(&io, fd);
    qr_err e;
    qr_errf(&e, "53300", "sorry, too many clients already");
    pgw_put_error(&io.out, 'E', "FATAL", &e, NULL, NULL);
    pgw_flush(&io);
    pgw_io_free(&io);
    close(fd); /* the client has sent nothing yet: no reset can eat the answer */
}

/* Wait until no connection thread is left or ms passed; the count left. */
static int wait_live(pgw_server *s, int ms)
{
    int64_t end = qr_qctx_now_ns() + (int64_t)ms * 1000000;
    pthread_mutex_lock(&s->mu);
    while (s->live > 0) {
        int64_t left = end - qr_qctx_now_ns();
        if (left <= 0)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t w = left < 100000000 ? left : 100000000;
        ts.tv_nsec += w;
        ts.tv_sec += ts.tv_nsec / 1000000000;
        ts.tv_nsec %= 1000000000;
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    int n = s->live;
    pthread_mutex_unlock(&s->mu);
    return n;
}

int pgw_server_run(pgw_server *s, qr_err *e)
{
    if (s->lfd < 0)
        return qr_errf(e, QR_E_ARGS, "the server has no listening socket");
    while (!atomic_load(&s->stopping)) {
        struct pollfd pf[2] = {{s->lfd, POLLIN, 0}, {s->wake[0], POLLIN, 0}};
        int pr = poll(pf, 2, 1000);
        if (pr > 0 && (pf[0].revents & POLLIN) && !atomic_load(&s->stopping))
            accept_one(s);
    }
    close(s->lfd);
    s->lfd = -1;
    if (wait_live(s, s->cfg.grace_ms) > 0) {
        atomic_store(&s->past_grace, 1);
        pgw_keys_cancel_all(&s->keys);
        /* statements stop at their next check; a blocked write within a poll slice */
        if (wait_live(s, 10000) > 0)
            return qr_errf(e, QR_E_INTERNAL, "connections still open after the grace period");
    }
    return 0;
}

void pgw_server_free(pgw_server *s)
{
    if (!s)
        return;
    if (s->lfd >= 0)
        close(s->lfd);
    for (int i = 0; i < 2; i++)
        if (s->wake[i] >= 0)
            close(s->wake[i]);
    pgw_keys_free(&s->keys);
    SSL_CTX_free(s->tls);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
