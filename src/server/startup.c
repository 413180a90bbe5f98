/* startup.c - the first packet of a connection: SSLRequest is answered
 * 'S' and a TLS handshake when a certificate is configured, else 'N' (the
 * client may go on in plain text), GSSENCRequest always 'N',
 * a CancelRequest cancels the statement of the session it names and ends
 * the connection without a reply, a protocol 3.x startup packet gives the
 * user, database and application_name. The whole phase runs under the
 * startup timeout; at most two refusals before the real packet. */
#include <stdio.h>
#include <string.h>

#include "server/conn.h"

#define CODE_CANCEL 80877102
#define CODE_SSL    80877103
#define CODE_GSSENC 80877104

static void copy_name(char *dst, size_t cap, const char *s) { snprintf(dst, cap, "%s", s); }

int pgw_startup(pgw_conn *c)
{
    qr_err e;
    qr_err_clear(&e);
    for (int tries = 0; tries < 3; tries++) {
        int rc = pgw_read_startup(c->io, &c->body, &e);
        if (rc == 1)
            return 0;
        if (rc != 0) {
            pgw_send_fatal(c, e.code, "%s", e.msg);
            return -1;
        }
        pgw_rd r;
        pgw_rd_init(&r, c->body.p, c->body.len);
        int32_t code = pgw_rd_i32(&r);
        if (r.bad) {
            pgw_send_fatal(c, PGW_E_PROTOCOL, "invalid length of startup packet");
            return -1;
        }
        if (code == CODE_SSL || code == CODE_GSSENC) {
            if (pgw_rd_left(&r) != 0 || c->io->ssl) {
                pgw_send_fatal(c, PGW_E_PROTOCOL, "invalid length of startup packet");
                return -1;
            }
            int tls = code == CODE_SSL && c->srv->tls && c->io->fd >= 0;
            qr_buf_put_u8(&c->io->out, tls ? 'S' : 'N');
            if (pgw_flush(c->io) != 0)
                return 0;
            if (tls && pgw_tls_accept(c->io, c->srv->tls, &e) != 0)
                return -1; /* no FATAL: the stream is not TLS */
            continue;
        }
        if (code == CODE_CANCEL) {
            int32_t pid = pgw_rd_i32(&r), secret = pgw_rd_i32(&r);
            if (!r.bad && pgw_rd_left(&r) == 0)
                pgw_keys_cancel(&c->srv->keys, pid, secret);
            return 0;
        }
        if ((code >> 16) != 3) {
            pgw_send_fatal(c, QR_E_FEATURE,
                           "unsupported frontend protocol %d.%d: server supports 3.0", code >> 16,
                           code & 0xffff);
            return -1;
        }
        /* name/value pairs, then a final NUL */
        copy_name(c->user, sizeof c->user, "");
        copy_name(c->database, sizeof c->database, "");
        for (;;) {
            const char *k = pgw_rd_str(&r);
            if (r.bad || !*k)
                break;
            const char *v = pgw_rd_str(&r);
            if (r.bad)
                break;
            if (!strcmp(k, "user"))
                copy_name(c->user, sizeof c->user, v);
            else if (!strcmp(k, "database"))
                copy_name(c->database, sizeof c->database, v);
            else if (!strcmp(k, "application_name"))
                copy_name(c->appname, sizeof c->appname, v);
        }
        if (r.bad || pgw_rd_left(&r) != 0) {
            pgw_send_fatal(c, PGW_E_PROTOCOL,
                           "invalid startup packet layout: expected terminator as last byte");
            return -1;
        }
        if (!c->user[0]) {
            pgw_send_fatal(c, "28000", "no PostgreSQL user name specified in startup packet");
            return -1;
        }
        if (!c->database[0])
            copy_name(c->database, sizeof c->database, c->user);
        return 1;
    }
    pgw_send_fatal(c, PGW_E_PROTOCOL, "too many encryption requests before the startup packet");
    return -1;
}
