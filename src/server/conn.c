/* conn.c - one connection from its first byte to its close, in the thread
 * that serves it: startup (startup.c), authentication (auth.c), the
 * session's ParameterStatus and BackendKeyData, then the message loop:
 * Query (simple.c), the extended protocol (extended.c), Terminate. A
 * malformed or unknown message gets FATAL 08P01 and the connection closes;
 * so does a server shutdown while the session is idle (57P01), and an
 * idle session past the idle timeout (57P05; the wait for a message's
 * first byte and its whole body). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/conn.h"

void pgw_stmt_ctx(pgw_conn *c, qr_qctx *ctx)
{
    pgw_stmt_begin_cancel(c);
    qr_sql_ctx_init(&c->sess, ctx, &c->cancel);
}

void pgw_stmt_begin_cancel(pgw_conn *c)
{
    /* cleared first, then the shutdown looked at: storing the flag as
     * read could overwrite the 1 that the shutdown's cancel-all stored
     * between the read and the store, and the statement would then run
     * to its end past the grace period */
    atomic_store(&c->cancel, 0);
    if (atomic_load(&c->srv->past_grace))
        atomic_store(&c->cancel, 1);
}

void pgw_send_error(pgw_conn *c, const qr_err *e, long (*map)(void *, long), void *arg)
{
    pgw_put_error(&c->io->out, 'E', "ERROR", e, map, arg);
    qr_sql_tx_error(&c->sess); /* whatever failed, a transaction block fails with it */
}

void pgw_send_fatal(pgw_conn *c, const char *code, const char *fmt, ...)
{
    qr_err e;
    snprintf(e.code, sizeof e.code, "%s", code && *code ? code : QR_E_INTERNAL);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.msg, sizeof e.msg, fmt, ap);
    va_end(ap);
    pgw_put_error(&c->io->out, 'E', "FATAL", &e, NULL, NULL);
}

static void put_key(qr_buf *b, int32_t pid, int32_t secret)
{
    size_t at = pgw_msg_begin(b, 'K');
    pgw_put_i32(b, pid);
    pgw_put_i32(b, secret);
    pgw_msg_end(b, at);
}

/* After authentication: what the session is, and that it is ready. */
static int start_session(pgw_conn *c)
{
    qr_err e;
    if (pgw_keys_add(&c->srv->keys, &c->cancel, &c->pid, &c->secret, &e) != 0) {
        pgw_send_fatal(c, e.code, "%s", e.msg);
        return -1;
    }
    c->keyed = 1;
    snprintf(c->sess.user, sizeof c->sess.user, "%s", c->user);
    c->sess.backend_pid = c->pid;
    static const char *fixed[][2] = {
        {"server_version", "15.0 (Quarry)"},
        {"server_encoding", "UTF8"},
        {"client_encoding", "UTF8"},
        {"DateStyle", "ISO, MDY"},
        {"integer_datetimes", "on"},
        {"standard_conforming_strings", "on"},
        {"TimeZone", "UTC"},
        {"IntervalStyle", "postgres"},
    };
    qr_buf *b = &c->io->out;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        pgw_put_param_status(b, fixed[i][0], fixed[i][1]);
    pgw_put_param_status(b, "application_name", c->appname);
    pgw_put_param_status(b, "is_superuser", c->sess.restricted ? "off" : "on");
    pgw_put_param_status(b, "session_authorization", c->user);
    put_key(b, c->pid, c->secret);
    pgw_put_ready(b, 'I');
    return pgw_flush(c->io);
}

static void message_loop(pgw_conn *c)
{
    qr_err e;
    for (;;) {
        if (atomic_load(&c->srv->stopping)) { /* shutting down: no new statement */
            pgw_send_fatal(c, "57P01", "terminating connection due to administrator command");
            return;
        }
        uint8_t t;
        if (c->body.cap > (1u << 20)) { /* after a large message: a small buffer again */
            qr_buf_free(&c->body);
            qr_buf_init(&c->body);
        }
        int idle_ms = c->srv->cfg.idle_timeout_ms;
        c->io->deadline_ns = idle_ms > 0 ? qr_qctx_now_ns() + (int64_t)idle_ms * 1000000 : 0;
        int rc = pgw_read_msg(c->io, &t, &c->body, PGW_MAX_MSG, &e);
        c->io->deadline_ns = 0;
        if (rc == 1) {
            if (c->io->idle_stop && atomic_load(c->io->idle_stop))
                pgw_send_fatal(c, "57P01", "terminating connection due to administrator command");
            return;
        }
        if (rc != 0) {
            pgw_send_fatal(c, e.code, "%s", e.msg);
            return;
        }
        if (t == 'X')
            return;
        if (c->skip_to_sync && t != 'S')
            continue;
        switch (t) {
        case 'Q':
            pgw_simple_query(c, c->body.p, c->body.len);
            if (pgw_flush(c->io) != 0 || c->gone)
                return;
            break;
        case 'P':
        case 'B':
        case 'D':
        case 'E':
        case 'C':
        case 'H':
        case 'S':
            if (pgw_extended(c, t, c->body.p, c->body.len, &e) != 0) {
                pgw_send_fatal(c, e.code, "%s", e.msg);
                return;
            }
            if ((t == 'S' || c->io->out.len >= PGW_FLUSH_AT) && pgw_flush(c->io) != 0)
                return;
            if (c->io->closed || c->gone)
                return;
            break;
        case 'd':
        case 'c':
        case 'f': /* COPY data outside COPY: ignored, as PostgreSQL does */
            break;
        case 'F':
            qr_errf(&e, QR_E_FEATURE, "the function call protocol is not supported");
            pgw_send_error(c, &e, NULL, NULL);
            pgw_put_ready(&c->io->out, qr_sql_tx_status(&c->sess));
            if (pgw_flush(c->io) != 0)
                return;
            break;
        default:
            pgw_send_fatal(c, PGW_E_PROTOCOL, "invalid frontend message type %d", t);
            return;
        }
    }
}

void pgw_serve_io(pgw_server *s, pgw_io *io)
{
    pgw_conn *c = calloc(1, sizeof *c);
    if (!c)
        return;
    c->srv = s;
    c->io = io;
    qr_buf_init(&c->body);
    qr_sql_session_init(&c->sess, s->db);
    if (s->cfg.startup_timeout_ms > 0 && io->fd >= 0)
        io->deadline_ns = qr_qctx_now_ns() + (int64_t)s->cfg.startup_timeout_ms * 1000000;
    int rc = pgw_startup(c);
    if (rc == 1) {
        if (atomic_fetch_add(&s->sessions, 1) >= s->cfg.max_conn) {
            pgw_send_fatal(c, "53300", "sorry, too many clients already");
            rc = -1;
        }
        c->counted = 1;
    }
    if (rc == 1 && strcmp(c->database, "quarry") != 0) {
        pgw_send_fatal(c, "3D000", "database \"%s\" does not exist", c->database);
        rc = -1;
    }
    if (rc == 1 && pgw_authenticate(c) != 0)
        rc = -1;
    if (rc == 1) {
        io->deadline_ns = 0;
        io->idle_stop = &s->stopping;
        io->write_stop = &s->past_grace;
        if (start_session(c) == 0)
            message_loop(c);
    }
    pgw_flush(io); /* a last FATAL, if any */
    if (c->keyed)
        pgw_keys_remove(&s->keys, c->pid);
    if (c->counted)
        atomic_fetch_sub(&s->sessions, 1);
    pgw_extended_free(c);
    qr_sql_close(&c->sess);
    qr_buf_free(&c->body);
    free(c);
}
