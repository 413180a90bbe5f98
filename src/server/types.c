/* types.c - result columns as PostgreSQL type OIDs and their text and
 * binary encodings (types.h). The text forms follow PostgreSQL's output
 * functions (bool 't'/'f', timestamptz with "+00"); everything else reads
 * as exec/render.c prints it, through qr_cell_text. */
#include "server/types.h"

#include <math.h>
#include <string.h>

#include "exec/render.h"
#include "format/schema.h"
#include "server/wire.h"
#include "util/timefmt.h"

/* 2000-01-01T00:00:00Z, PostgreSQL's epoch, in Unix seconds. */
#define PG_EPOCH_UNIX_S 946684800LL

uint32_t pgw_col_oid(const qr_rcol *c)
{
    if (c->pgoid)
        return c->pgoid;
    switch (c->kind) {
    case QR_RK_FLOAT:
        return PGW_OID_FLOAT8;
    case QR_RK_TEXT:
        return PGW_OID_TEXT;
    case QR_RK_JSON:
        return PGW_OID_JSON;
    default:
        break;
    }
    switch (c->type) {
    case QT_BOOL:
        return PGW_OID_BOOL;
    case QT_INT8:
    case QT_UINT8:
    case QT_INT16:
        return PGW_OID_INT2;
    case QT_UINT16:
    case QT_INT32:
        return PGW_OID_INT4;
    case QT_UINT64:
        return PGW_OID_NUMERIC;
    case QT_FLOAT64:
        return PGW_OID_FLOAT8;
    case QT_TIMESTAMP:
        return PGW_OID_TIMESTAMPTZ;
    default: /* uint32, int64 and anything wider */
        return PGW_OID_INT8;
    }
}

int16_t pgw_oid_len(uint32_t oid)
{
    switch (oid) {
    case PGW_OID_BOOL:
        return 1;
    case PGW_OID_INT2:
        return 2;
    case PGW_OID_INT4:
    case PGW_OID_FLOAT4:
    case 26: /* oid */
    case 24: /* regproc */
    case 2205: /* regclass */
    case 2206: /* regtype */
        return 4;
    case 18: /* "char" */
        return 1;
    case 19: /* name */
        return 64;
    case PGW_OID_INT8:
    case PGW_OID_FLOAT8:
    case PGW_OID_TIMESTAMP:
    case PGW_OID_TIMESTAMPTZ:
        return 8;
    default:
        return -1;
    }
}

/* floor(a / b) for b > 0 */
static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b < 0); }

void pgw_timestamptz_text(int64_t ns, qr_buf *out)
{
    int64_t us = floor_div(ns, 1000);
    char t[QR_TIME_TEXT_LEN + 1];
    qr_time_format(us * 1000, t); /* YYYY-MM-DDTHH:MM:SS.fffffffffZ */
    t[10] = ' ';
    size_t keep = 6; /* microsecond digits at t[20..25] */
    while (keep > 0 && t[20 + keep - 1] == '0')
        keep--;
    qr_buf_put(out, t, 19);
    if (keep) {
        qr_buf_put_u8(out, '.');
        qr_buf_put(out, t + 20, keep);
    }
    qr_buf_put(out, "+00", 3);
}

void pgw_numeric_u64(uint64_t u, qr_buf *out)
{
    /* base-10000 digits, most significant first; weight = ndigits - 1 */
    int16_t d[5];
    int n = 0;
    uint64_t x = u;
    while (x) {
        d[n++] = (int16_t)(x % 10000);
        x /= 10000;
    }
    int lead = n; /* trailing zero digits are left out (weight says where) */
    int low = 0;
    while (low < n && d[low] == 0)
        low++;
    int16_t ndigits = (int16_t)(n - low);
    pgw_put_i16(out, ndigits);
    pgw_put_i16(out, (int16_t)(n ? lead - 1 : 0));
    pgw_put_i16(out, 0); /* sign: positive */
    pgw_put_i16(out, 0); /* dscale */
    for (int i = n - 1; i >= low; i--)
        pgw_put_i16(out, d[i]);
}

static double cell_double(const qr_rcol *rc, const qr_cell *c)
{
    if (rc->kind == QR_RK_FLOAT)
        return c->f;
    return qr_num_to_f64(c->i);
}

static void put_binary(const qr_result *r, uint32_t col, const qr_cell *c, qr_buf *out)
{
    const qr_rcol *rc = &r->cols[col];
    uint32_t oid = pgw_col_oid(rc);
    switch (oid) {
    case PGW_OID_BOOL:
        qr_buf_put_u8(out, c->i ? 1 : 0);
        return;
    case PGW_OID_INT2:
        pgw_put_i16(out, (int16_t)c->i);
        return;
    case PGW_OID_INT4:
        pgw_put_i32(out, (int32_t)c->i);
        return;
    case 26: /* oid: an unsigned 4 bytes */
        pgw_put_i32(out, (int32_t)(uint32_t)c->i);
        return;
    case PGW_OID_INT8:
        pgw_put_i64(out, c->i);
        return;
    case PGW_OID_NUMERIC:
        pgw_numeric_u64(qr_num_to_u64(c->i), out);
        return;
    case PGW_OID_FLOAT8: {
        double f = cell_double(rc, c);
        int64_t bits;
        memcpy(&bits, &f, 8);
        pgw_put_i64(out, bits);
        return;
    }
    case PGW_OID_TIMESTAMPTZ:
        pgw_put_i64(out, floor_div(c->i, 1000) - PG_EPOCH_UNIX_S * 1000000);
        return;
    case PGW_OID_FLOAT4: {
        float f = (float)cell_double(rc, c);
        int32_t bits;
        memcpy(&bits, &f, 4);
        pgw_put_i32(out, bits);
        return;
    }
    default: /* text and json: their bytes */
        qr_buf_put(out, c->s, c->n);
    }
}

void pgw_cell_encode(const qr_result *r, uint32_t col, const qr_cell *c, int binary, qr_buf *out)
{
    if (binary) {
        put_binary(r, col, c, out);
        return;
    }
    const qr_rcol *rc = &r->cols[col];
    if (rc->kind == QR_RK_INT && rc->type == QT_BOOL)
        qr_buf_put_u8(out, c->i ? 't' : 'f');
    else if (rc->kind == QR_RK_INT && rc->type == QT_TIMESTAMP)
        pgw_timestamptz_text(c->i, out);
    else
        qr_cell_text(r, col, c, out);
}
