/* rows.c - a result set on the wire: RowDescription (names, type OIDs from
 * types.c, formats) and DataRow messages, sent in batches of about
 * PGW_FLUSH_AT bytes from the connection's own thread, so a client that
 * stops reading holds up only itself. */
#include <stdio.h>
#include <string.h>

#include "server/conn.h"
#include "server/types.h"

static int16_t fmt_of(const int16_t *fmts, uint16_t nfmts, uint32_t col)
{
    if (nfmts == 0)
        return 0;
    return nfmts == 1 ? fmts[0] : fmts[col];
}

void pgw_put_rowdesc(qr_buf *b, const qr_result *r, const int16_t *fmts, uint16_t nfmts)
{
    size_t at = pgw_msg_begin(b, 'T');
    pgw_put_i16(b, (int16_t)r->ncols);
    for (uint32_t i = 0; i < r->ncols; i++) {
        uint32_t oid = pgw_col_oid(&r->cols[i]);
        pgw_put_str(b, r->cols[i].name);
        pgw_put_i32(b, 0); /* table oid */
        pgw_put_i16(b, 0); /* column number */
        pgw_put_i32(b, (int32_t)oid);
        pgw_put_i16(b, pgw_oid_len(oid));
        pgw_put_i32(b, -1); /* type modifier */
        pgw_put_i16(b, fmt_of(fmts, nfmts, i));
    }
    pgw_msg_end(b, at);
}

int pgw_send_rows(pgw_conn *c, const qr_result *r, uint64_t from, uint64_t to, const int16_t *fmts,
                  uint16_t nfmts, qr_qctx *stop, qr_err *e)
{
    qr_buf *b = &c->io->out;
    for (uint64_t i = from; i < to; i++) {
        const qr_cell *row = qr_result_row(r, i);
        size_t at = pgw_msg_begin(b, 'D');
        pgw_put_i16(b, (int16_t)r->ncols);
        for (uint32_t k = 0; k < r->ncols; k++) {
            if (row[k].null) {
                pgw_put_i32(b, -1);
                continue;
            }
            size_t lat = b->len;
            pgw_put_i32(b, 0);
            pgw_cell_encode(r, k, &row[k], fmt_of(fmts, nfmts, k), b);
            if (!b->oom) {
                uint32_t n = (uint32_t)(b->len - lat - 4);
                b->p[lat] = (uint8_t)(n >> 24);
                b->p[lat + 1] = (uint8_t)(n >> 16);
                b->p[lat + 2] = (uint8_t)(n >> 8);
                b->p[lat + 3] = (uint8_t)n;
            }
        }
        pgw_msg_end(b, at);
        if (b->len >= PGW_FLUSH_AT) {
            if (stop && qr_qctx_check(stop, e) != 0)
                return 1;
            if (pgw_flush(c->io) != 0)
                return -1;
        }
    }
    return c->io->closed ? -1 : 0;
}

void pgw_tag(const qr_result *r, uint64_t rows, char *out, size_t cap)
{
    if (r->tag[0])
        snprintf(out, cap, "%s", r->tag);
    else
        snprintf(out, cap, "SELECT %llu", (unsigned long long)rows);
}
