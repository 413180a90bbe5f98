/* copy.c - the COPY sub-protocol, for a statement of the simple or the
 * extended protocol (docs/SERVER.md "COPY"):
 *
 *   COPY ... FROM STDIN: CopyInResponse ('G'), then the client's CopyData
 *   ('d') fed to qr_sql_copy_feed as they come, CopyDone ('c') ends it
 *   (CommandComplete "COPY n"), CopyFail ('f') abandons it (57014 "COPY
 *   from stdin failed: <the client's message>"). Flush and Sync in between
 *   are ignored (as PostgreSQL does); any other message fails the copy
 *   (08P01); a CancelRequest (or a shutdown past its grace period) fails
 *   it at the next CopyData (57014). A failure sends ErrorResponse at once; the caller then skips
 *   the rest of the Query text (simple) or discards until Sync (extended),
 *   and CopyData / CopyDone / CopyFail arriving later are dropped by the
 *   message loop. Nothing of a failed copy is visible (the SQL layer
 *   commits once, at CopyDone).
 *   COPY ... TO STDOUT: CopyOutResponse ('H'), one CopyData per line, sent
 *   in batches of about PGW_FLUSH_AT bytes from this connection's thread
 *   (a client that stops reading holds up only itself), CopyDone,
 *   CommandComplete "COPY n".
 * Memory: one message (at most PGW_MAX_MSG) and the SQL layer's bounded
 * copy state in; the query's result and one batch out. */
#include <stdio.h>
#include <string.h>

#include "server/conn.h"

int pgw_copy_kind(const char *sql, size_t n)
{
    if (qr_sql_is_copy_from_stdin(sql, n))
        return PGW_COPY_IN;
    if (qr_sql_is_copy_to_stdout(sql, n))
        return PGW_COPY_OUT;
    return 0;
}

/* CopyInResponse / CopyOutResponse: text format, ncols columns of it. */
static void put_copy_response(qr_buf *b, char type, uint32_t ncols)
{
    size_t at = pgw_msg_begin(b, type);
    qr_buf_put_u8(b, 0);
    pgw_put_i16(b, (int16_t)ncols);
    for (uint32_t i = 0; i < ncols; i++)
        pgw_put_i16(b, 0);
    pgw_msg_end(b, at);
}

static void put_rows_tag(qr_buf *b, uint64_t rows)
{
    char tag[40];
    snprintf(tag, sizeof tag, "COPY %llu", (unsigned long long)rows);
    pgw_put_complete(b, tag);
}

static int copy_in_loop(pgw_conn *c, qr_sql_copy_in *ci, qr_buf *body);

int pgw_copy_in(pgw_conn *c, const char *sql, size_t n, long (*map)(void *, long), void *arg)
{
    qr_err e;
    qr_err_clear(&e);
    qr_sql_copy_in *ci = qr_sql_copy_begin(&c->sess, sql, n, &e);
    if (!ci) {
        pgw_send_error(c, &e, map, arg);
        return PGW_COPY_FAILED;
    }
    pgw_stmt_begin_cancel(c); /* as a statement starts */
    put_copy_response(&c->io->out, 'G', qr_sql_copy_columns(ci));
    if (pgw_flush(c->io) != 0) {
        qr_sql_copy_abort(ci);
        return PGW_COPY_GONE;
    }
    qr_buf msg; /* not c->body: it holds the Query text whose statements follow */
    qr_buf_init(&msg);
    int rc = copy_in_loop(c, ci, &msg);
    qr_buf_free(&msg);
    return rc;
}

/* The messages of a copy-in until it ends; ci is ended or aborted. */
static int copy_in_loop(pgw_conn *c, qr_sql_copy_in *ci, qr_buf *body)
{
    qr_err e;
    for (;;) {
        uint8_t t;
        int idle_ms = c->srv->cfg.idle_timeout_ms;
        c->io->deadline_ns = idle_ms > 0 ? qr_qctx_now_ns() + (int64_t)idle_ms * 1000000 : 0;
        int rc = pgw_read_msg(c->io, &t, body, PGW_MAX_MSG, &e);
        c->io->deadline_ns = 0;
        if (rc != 0) { /* the client left, a bad length, a timeout, shutdown */
            qr_sql_copy_abort(ci);
            if (rc == 1 && c->io->idle_stop && atomic_load(c->io->idle_stop))
                pgw_send_fatal(c, "57P01", "terminating connection due to administrator command");
            else if (rc != 1)
                pgw_send_fatal(c, e.code, "%s", e.msg);
            return PGW_COPY_GONE;
        }
        if (atomic_load(&c->cancel) && (t == 'd' || t == 'c')) { /* CancelRequest, shutdown */
            qr_sql_copy_abort(ci);
            qr_errf(&e, QR_E_CANCELED, "canceling statement due to user request");
            pgw_send_error(c, &e, NULL, NULL);
            return PGW_COPY_FAILED;
        }
        switch (t) {
        case 'd':
            if (qr_sql_copy_feed(ci, body->p, body->len, &e) != 0) { /* ci is gone */
                pgw_send_error(c, &e, NULL, NULL);
                return PGW_COPY_FAILED;
            }
            break;
        case 'c': {
            uint64_t rows = 0;
            if (qr_sql_copy_end(ci, &rows, &e) != 0) {
                pgw_send_error(c, &e, NULL, NULL);
                return PGW_COPY_FAILED;
            }
            put_rows_tag(&c->io->out, rows);
            return PGW_COPY_OK;
        }
        case 'f': {
            qr_sql_copy_abort(ci);
            pgw_rd r;
            pgw_rd_init(&r, body->p, body->len);
            const char *why = pgw_rd_str(&r);
            qr_errf(&e, QR_E_CANCELED, "COPY from stdin failed: %.900s", r.bad ? "" : why);
            pgw_send_error(c, &e, NULL, NULL);
            return PGW_COPY_FAILED;
        }
        case 'H':
        case 'S': /* ignored during copy-in, as PostgreSQL does */
            break;
        case 'X':
            qr_sql_copy_abort(ci);
            return PGW_COPY_GONE;
        default:
            qr_sql_copy_abort(ci);
            qr_errf(&e, PGW_E_PROTOCOL, "unexpected message type 0x%02X during COPY from stdin", t);
            pgw_send_error(c, &e, NULL, NULL);
            return PGW_COPY_FAILED;
        }
    }
}

int pgw_copy_out(pgw_conn *c, const char *sql, size_t n, long (*map)(void *, long), void *arg)
{
    qr_qctx ctx;
    qr_err e;
    qr_err_clear(&e);
    pgw_stmt_ctx(c, &ctx);
    qr_sql_copy_out co;
    if (qr_sql_copy_out_begin(&c->sess, sql, n, &ctx, &co, &e) != 0) {
        pgw_send_error(c, &e, map, arg);
        return PGW_COPY_FAILED;
    }
    qr_buf *b = &c->io->out;
    put_copy_response(b, 'H', qr_sql_copy_out_columns(&co));
    int rc = PGW_COPY_OK;
    for (;;) {
        size_t at = pgw_msg_begin(b, 'd');
        int more = qr_sql_copy_out_line(&co, b);
        if (!more) {
            b->len = at - 1; /* no line: drop the message begun */
            break;
        }
        pgw_msg_end(b, at);
        if (b->oom) { /* the buffer lost bytes: the stream is broken */
            c->io->closed = 1;
            rc = PGW_COPY_GONE;
            break;
        }
        if (b->len >= PGW_FLUSH_AT && pgw_flush(c->io) != 0) {
            rc = PGW_COPY_GONE;
            break;
        }
    }
    if (rc == PGW_COPY_OK) {
        size_t at = pgw_msg_begin(b, 'c');
        pgw_msg_end(b, at);
        put_rows_tag(b, co.r.nrows);
    }
    qr_sql_copy_out_free(&co);
    return rc;
}
