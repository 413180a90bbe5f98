/* simple.c - the simple query protocol: a Query message's text is split
 * into statements (qr_sql_split); each runs in turn and sends its
 * RowDescription, DataRows (text format) and CommandComplete; the first
 * failure sends ErrorResponse (positions counted in the whole text) and
 * skips the rest, as PostgreSQL does; an empty text sends
 * EmptyQueryResponse. ReadyForQuery follows. A COPY FROM STDIN or TO
 * STDOUT runs its sub-protocol there (copy.c): the statements after it
 * run once it is done. */
#include <stdlib.h>
#include <string.h>

#include "server/conn.h"

static long shift_pos(void *arg, long pos) { return pos + (long)*(const uint32_t *)arg; }

/* Run one statement; 0, or -1 after an ErrorResponse was queued. */
static int run_one(pgw_conn *c, const char *sql, uint32_t off, uint32_t len)
{
    int copy = pgw_copy_kind(sql + off, len);
    if (copy) {
        int rc = copy == PGW_COPY_IN ? pgw_copy_in(c, sql + off, len, shift_pos, &off)
                                     : pgw_copy_out(c, sql + off, len, shift_pos, &off);
        if (rc == PGW_COPY_GONE)
            c->gone = 1;
        return rc == PGW_COPY_OK ? 0 : -1;
    }
    qr_qctx ctx;
    qr_result r;
    qr_err e;
    qr_err_clear(&e);
    pgw_stmt_ctx(c, &ctx);
    qr_result_init(&r, &ctx);
    int rc = qr_sql_exec(&c->sess, sql + off, len, &r, &e);
    if (rc != 0) {
        pgw_send_error(c, &e, shift_pos, &off);
    } else {
        if (r.ncols)
            pgw_put_rowdesc(&c->io->out, &r, NULL, 0);
        int sent = r.ncols ? pgw_send_rows(c, &r, 0, r.nrows, NULL, 0, &ctx, &e) : 0;
        if (sent == 1) { /* canceled while its rows were sent */
            pgw_send_error(c, &e, NULL, NULL);
            rc = -1;
        } else if (sent != 0) {
            rc = -1;
        } else {
            char tag[80];
            pgw_tag(&r, r.nrows, tag, sizeof tag);
            pgw_put_complete(&c->io->out, tag);
        }
    }
    qr_result_free(&r);
    return rc;
}

void pgw_simple_query(pgw_conn *c, const uint8_t *body, size_t n)
{
    const char *sql = (const char *)body;
    qr_err e;
    if (!n || body[n - 1] != 0 || memchr(body, 0, n) != body + n - 1) {
        qr_errf(&e, PGW_E_PROTOCOL, "invalid Query message: the text must end with its only NUL");
        pgw_send_error(c, &e, NULL, NULL);
        pgw_put_ready(&c->io->out, qr_sql_tx_status(&c->sess));
        return;
    }
    qr_sql_span *spans = NULL;
    uint32_t ns = 0;
    if (qr_sql_split(sql, n - 1, &spans, &ns, &e) != 0) {
        pgw_send_error(c, &e, NULL, NULL);
    } else if (ns == 0) {
        size_t at = pgw_msg_begin(&c->io->out, 'I');
        pgw_msg_end(&c->io->out, at);
    } else {
        for (uint32_t i = 0; i < ns && !c->io->closed; i++)
            if (run_one(c, sql, spans[i].off, spans[i].len) != 0)
                break;
    }
    free(spans);
    if (!c->gone)
        pgw_put_ready(&c->io->out, qr_sql_tx_status(&c->sess));
}
