/* wire.c - PostgreSQL v3 message framing and the connection's byte channel
 * (wire.h): big-endian writers, the body reader, reads with limits and
 * timeouts, blocking writes from the connection's own thread.
 *
 * Invariants: a length is checked before any of its bytes are buffered; a
 * socket read or write waits in poll slices of PGW_SLICE_MS so that a
 * deadline or the server's stop flags are seen while a peer is silent. */
#include "server/wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/qctx.h"

#include <openssl/err.h>

#define PGW_SLICE_MS 200

void pgw_put_i16(qr_buf *b, int16_t v)
{
    uint16_t u = (uint16_t)v;
    uint8_t t[2] = {(uint8_t)(u >> 8), (uint8_t)u};
    qr_buf_put(b, t, 2);
}

void pgw_put_i32(qr_buf *b, int32_t v)
{
    uint32_t u = (uint32_t)v;
    uint8_t t[4] = {(uint8_t)(u >> 24), (uint8_t)(u >> 16), (uint8_t)(u >> 8), (uint8_t)u};
    qr_buf_put(b, t, 4);
}

void pgw_put_i64(qr_buf *b, int64_t v)
{
    pgw_put_i32(b, (int32_t)((uint64_t)v >> 32));
    pgw_put_i32(b, (int32_t)(uint32_t)v);
}

void pgw_put_str(qr_buf *b, const char *s) { qr_buf_put(b, s, strlen(s) + 1); }

size_t pgw_msg_begin(qr_buf *b, char type)
{
    qr_buf_put_u8(b, (uint8_t)type);
    size_t at = b->len;
    pgw_put_i32(b, 0);
    return at;
}

void pgw_msg_end(qr_buf *b, size_t at)
{
    if (b->oom)
        return;
    uint32_t n = (uint32_t)(b->len - at);
    b->p[at] = (uint8_t)(n >> 24);
    b->p[at + 1] = (uint8_t)(n >> 16);
    b->p[at + 2] = (uint8_t)(n >> 8);
    b->p[at + 3] = (uint8_t)n;
}

int16_t pgw_rd_i16(pgw_rd *r)
{
    const uint8_t *p = pgw_rd_bytes(r, 2);
    return p ? (int16_t)(uint16_t)((uint16_t)p[0] << 8 | p[1]) : 0;
}

int32_t pgw_rd_i32(pgw_rd *r)
{
    const uint8_t *p = pgw_rd_bytes(r, 4);
    return p ? (int32_t)pgw_load_be32(p) : 0;
}

const char *pgw_rd_str(pgw_rd *r)
{
    if (r->bad)
        return "";
    const uint8_t *z = memchr(r->p, 0, pgw_rd_left(r));
    if (!z) {
        r->bad = 1;
        return "";
    }
    const char *s = (const char *)r->p;
    r->p = z + 1;
    return s;
}

const uint8_t *pgw_rd_bytes(pgw_rd *r, size_t n)
{
    if (r->bad || pgw_rd_left(r) < n) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += n;
    return p;
}

void pgw_io_init_fd(pgw_io *io, int fd)
{
    memset(io, 0, sizeof *io);
    io->fd = fd;
    qr_buf_init(&io->out);
}

void pgw_io_init_mem(pgw_io *io, const uint8_t *in, size_t n, qr_buf *sink)
{
    memset(io, 0, sizeof *io);
    io->fd = -1;
    io->in = in;
    io->inlen = n;
    io->sink = sink;
    qr_buf_init(&io->out);
}

void pgw_io_free(pgw_io *io)
{
    if (io->ssl) {
        SSL_shutdown(io->ssl); /* one close_notify, not waiting for the peer's */
        SSL_free(io->ssl);
        io->ssl = NULL;
    }
    qr_buf_free(&io->out);
}

/* One send or recv on the socket, through TLS when it is on: > 0 bytes
 * moved; 0 when it would block (*want: POLLIN or POLLOUT to wait for);
 * -1 when the peer is gone or the connection failed (-2: a clean end on
 * reading). */
static ssize_t sock_io(pgw_io *io, void *p, size_t n, int writing, short *want)
{
    *want = writing ? POLLOUT : POLLIN;
    if (io->ssl) {
        int k = n > INT32_MAX ? INT32_MAX : (int)n;
        ERR_clear_error();
        int r = writing ? SSL_write(io->ssl, p, k) : SSL_read(io->ssl, p, k);
        if (r > 0)
            return r;
        switch (SSL_get_error(io->ssl, r)) {
        case SSL_ERROR_WANT_READ:
            *want = POLLIN;
            return 0;
        case SSL_ERROR_WANT_WRITE:
            *want = POLLOUT;
            return 0;
        case SSL_ERROR_ZERO_RETURN:
            return writing ? -1 : -2;
        default:
            return -1;
        }
    }
    ssize_t r = writing ? send(io->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : recv(io->fd, p, n, MSG_DONTWAIT);
    if (r > 0)
        return r;
    if (r == 0)
        return writing ? 0 : -2;
    return errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
}

int pgw_flush(pgw_io *io)
{
    if (io->closed || io->out.oom) {
        io->closed = 1;
        return -1;
    }
    if (io->fd < 0) {
        if (io->sink)
            qr_buf_put(io->sink, io->out.p, io->out.len);
        qr_buf_clear(&io->out);
        return 0;
    }
    size_t off = 0;
    while (off < io->out.len) {
        short want;
        ssize_t w = sock_io(io, io->out.p + off, io->out.len - off, 1, &want);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0)
            break;
        /* the client is not reading: wait, in this thread only */
        if (io->write_stop && atomic_load(io->write_stop))
            break;
        struct pollfd pf = {io->fd, want, 0};
        poll(&pf, 1, PGW_SLICE_MS);
    }
    int ok = off == io->out.len;
    qr_buf_clear(&io->out);
    if (!ok)
        io->closed = 1;
    return ok ? 0 : -1;
}

int pgw_read_exact(pgw_io *io, void *dst, size_t n, int idle, qr_err *e)
{
    uint8_t *d = dst;
    size_t got = 0;
    if (io->fd < 0) {
        size_t have = io->inlen - io->inpos;
        if (have == 0 && idle)
            return 1;
        if (have < n)
            return qr_errf(e, PGW_E_PROTOCOL, "the input ended inside a message (%zu of %zu bytes)",
                           have, n);
        memcpy(d, io->in + io->inpos, n);
        io->inpos += n;
        return 0;
    }
    short want = POLLIN;
    while (got < n) {
        ssize_t r = sock_io(io, d + got, n - got, 0, &want);
        if (r > 0) {
            got += (size_t)r;
            idle = 0;
            continue;
        }
        if (r == -2 || r == -1) {
            if (got == 0 && idle)
                return 1;
            if (r == -1 && got == 0)
                return qr_errf(e, QR_E_IO, "the connection failed (%s)",
                               io->ssl ? "TLS" : strerror(errno));
            return qr_errf(e, PGW_E_PROTOCOL, "the client closed the connection inside a message");
        }
        if (idle && got == 0 && io->idle_stop && atomic_load(io->idle_stop))
            return 1;
        int wait = PGW_SLICE_MS;
        if (io->deadline_ns) {
            int64_t left = io->deadline_ns - qr_qctx_now_ns();
            if (left <= 0 && idle && got == 0 && io->idle_stop) /* between messages of a session */
                return qr_errf(e, "57P05", "terminating connection due to idle-session timeout");
            if (left <= 0)
                return qr_errf(e, PGW_E_PROTOCOL, "timeout waiting for the client");
            if (left / 1000000 < wait)
                wait = (int)(left / 1000000) + 1;
        }
        struct pollfd pf = {io->fd, want, 0};
        if (poll(&pf, 1, wait) < 0 && errno != EINTR)
            return qr_errf(e, QR_E_IO, "poll: %s", strerror(errno));
    }
    return 0;
}

int pgw_tls_accept(pgw_io *io, SSL_CTX *ctx, qr_err *e)
{
    io->ssl = SSL_new(ctx);
    if (!io->ssl || SSL_set_fd(io->ssl, io->fd) != 1)
        return qr_errf(e, QR_E_NOMEM, "cannot start TLS");
    for (;;) {
        ERR_clear_error();
        int r = SSL_accept(io->ssl);
        if (r == 1)
            return 0;
        int err = SSL_get_error(io->ssl, r);
        if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) {
            char why[160];
            ERR_error_string_n(ERR_peek_last_error(), why, sizeof why);
            SSL_free(io->ssl);
            io->ssl = NULL; /* nothing more can be said: the stream is not TLS */
            io->closed = 1;
            return qr_errf(e, PGW_E_PROTOCOL, "TLS handshake failed: %s", why);
        }
        int64_t left = io->deadline_ns ? io->deadline_ns - qr_qctx_now_ns() : 1000000000;
        if (left <= 0) {
            SSL_free(io->ssl);
            io->ssl = NULL;
            io->closed = 1;
            return qr_errf(e, PGW_E_PROTOCOL, "timeout in the TLS handshake");
        }
        struct pollfd pf = {io->fd, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, 0};
        poll(&pf, 1, PGW_SLICE_MS);
    }
}

/* The body of a message whose int32 length (counting itself) is len. The
 * buffer grows with the bytes that arrive, so a length alone (a client
 * that claims 16 MiB and sends nothing) costs no memory. */
static int read_body(pgw_io *io, uint32_t len, uint32_t max, qr_buf *body, const char *what,
                     qr_err *e)
{
    if (len < 4 || len - 4 > max)
        return qr_errf(e, PGW_E_PROTOCOL, "invalid %s length %u (limit %u bytes)", what, len, max);
    qr_buf_clear(body);
    uint32_t n = len - 4;
    while (body->len < n) {
        size_t step = n - body->len < (64u << 10) ? n - body->len : (64u << 10);
        if (!qr_buf_reserve(body, step))
            return qr_errf(e, QR_E_NOMEM, "out of memory reading a %u-byte %s", n, what);
        if (pgw_read_exact(io, body->p + body->len, step, 0, e) != 0)
            return -1;
        body->len += step;
    }
    if (!qr_buf_reserve(body, 1))
        return qr_errf(e, QR_E_NOMEM, "out of memory reading a %u-byte %s", n, what);
    return 0;
}

int pgw_read_msg(pgw_io *io, uint8_t *type, qr_buf *body, uint32_t max, qr_err *e)
{
    uint8_t h[5];
    int rc = pgw_read_exact(io, h, 1, 1, e);
    if (rc != 0)
        return rc;
    if (pgw_read_exact(io, h + 1, 4, 0, e) != 0)
        return -1;
    *type = h[0];
    return read_body(io, pgw_load_be32(h + 1), max, body, "message", e);
}

int pgw_read_startup(pgw_io *io, qr_buf *body, qr_err *e)
{
    uint8_t h[4];
    int rc = pgw_read_exact(io, h, 1, 1, e);
    if (rc != 0)
        return rc;
    if (pgw_read_exact(io, h + 1, 3, 0, e) != 0)
        return -1;
    /* PostgreSQL's limit counts the length word itself (a message's
     * limit here is its body's): a packet of 10001 bytes is refused at
     * once, not waited for until the startup timeout */
    uint32_t len = pgw_load_be32(h);
    if (len > PGW_MAX_STARTUP)
        return qr_errf(e, PGW_E_PROTOCOL, "invalid startup packet length %u (limit %u bytes)", len,
                       PGW_MAX_STARTUP);
    return read_body(io, len, PGW_MAX_STARTUP - 4, body, "startup packet", e);
}

long pgw_err_position(const char *msg, size_t *msglen)
{
    size_t n = strlen(msg);
    *msglen = n;
    const char *k = " at character ";
    size_t kl = strlen(k);
    size_t d = n;
    while (d > 0 && msg[d - 1] >= '0' && msg[d - 1] <= '9')
        d--;
    if (d == n || n - d > 9 || d < kl || memcmp(msg + d - kl, k, kl) != 0)
        return 0;
    *msglen = d - kl;
    return strtol(msg + d, NULL, 10);
}

void pgw_put_error(qr_buf *b, char type, const char *severity, const qr_err *e,
                   long (*map_pos)(void *, long), void *map_arg)
{
    size_t at = pgw_msg_begin(b, type);
    size_t mlen;
    long pos = pgw_err_position(e->msg, &mlen);
    if (pos > 0 && map_pos)
        pos = map_pos(map_arg, pos);
    qr_buf_put_u8(b, 'S');
    pgw_put_str(b, severity);
    qr_buf_put_u8(b, 'V');
    pgw_put_str(b, severity);
    qr_buf_put_u8(b, 'C');
    pgw_put_str(b, e->code[0] ? e->code : QR_E_INTERNAL);
    qr_buf_put_u8(b, 'M');
    qr_buf_put(b, e->msg, mlen);
    qr_buf_put_u8(b, 0);
    if (pos > 0) {
        char t[24];
        snprintf(t, sizeof t, "%ld", pos);
        qr_buf_put_u8(b, 'P');
        pgw_put_str(b, t);
    }
    qr_buf_put_u8(b, 0);
    pgw_msg_end(b, at);
}

void pgw_put_ready(qr_buf *b, char status)
{
    size_t at = pgw_msg_begin(b, 'Z');
    qr_buf_put_u8(b, (uint8_t)status);
    pgw_msg_end(b, at);
}

void pgw_put_param_status(qr_buf *b, const char *name, const char *value)
{
    size_t at = pgw_msg_begin(b, 'S');
    pgw_put_str(b, name);
    pgw_put_str(b, value);
    pgw_msg_end(b, at);
}

void pgw_put_complete(qr_buf *b, const char *tag)
{
    size_t at = pgw_msg_begin(b, 'C');
    pgw_put_str(b, tag);
    pgw_msg_end(b, at);
}
