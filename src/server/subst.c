/* subst.c - $n parameters replaced by SQL literals at the text level
 * (subst.h), found with libpg_query's scanner so strings, quoted names and
 * comments are never touched; each value is validated or quoted so no
 * value can end its literal early (a text "'); DROP" stays one string). */
#include "server/subst.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pg_query.h>
#include <pg_query/pg_query.pb-c.h>

#include "server/types.h"
#include "server/wire.h"
#include "util/buf.h"
#include "util/timefmt.h"

#define PG_EPOCH_UNIX_S 946684800LL

typedef struct scan {
    PgQueryScanResult sr;
    PgQuery__ScanResult *toks;
} scan;

static void scan_open(scan *s, const char *sql)
{
    s->sr = pg_query_scan(sql);
    s->toks = NULL;
    if (!s->sr.error)
        s->toks =
            pg_query__scan_result__unpack(NULL, s->sr.pbuf.len, (const uint8_t *)s->sr.pbuf.data);
}

static void scan_close(scan *s)
{
    if (s->toks)
        pg_query__scan_result__free_unpacked(s->toks, NULL);
    pg_query_free_scan_result(s->sr);
}

/* The number of the $n token at [a, b): 0 when malformed or past 65535. */
static uint32_t param_no(const char *sql, int32_t a, int32_t b)
{
    uint32_t v = 0;
    if (b - a < 2 || sql[a] != '$')
        return 0;
    for (int32_t i = a + 1; i < b; i++) {
        if (sql[i] < '0' || sql[i] > '9' || v > 65535)
            return 0;
        v = v * 10 + (uint32_t)(sql[i] - '0');
    }
    return v <= 65535 ? v : 0;
}

int pgw_param_count(const char *sql, size_t n, uint32_t *maxp, qr_err *e)
{
    (void)n;
    scan s;
    scan_open(&s, sql);
    int rc = 0;
    *maxp = 0;
    for (size_t i = 0; s.toks && i < s.toks->n_tokens; i++) {
        const PgQuery__ScanToken *t = s.toks->tokens[i];
        if (t->token != PG_QUERY__TOKEN__PARAM)
            continue;
        uint32_t k = param_no(sql, t->start, t->end);
        if (!k) {
            rc = qr_errf(e, "42P02", "invalid parameter %.*s at character %d",
                         (int)(t->end - t->start), sql + t->start, t->start + 1);
            break;
        }
        if (k > *maxp)
            *maxp = k;
    }
    scan_close(&s);
    return rc;
}

static int is_number_oid(uint32_t oid)
{
    return oid == PGW_OID_INT2 || oid == PGW_OID_INT4 || oid == PGW_OID_INT8 ||
           oid == PGW_OID_NUMERIC || oid == PGW_OID_FLOAT4 || oid == PGW_OID_FLOAT8;
}
static int is_int_oid(uint32_t oid)
{
    return oid == PGW_OID_INT2 || oid == PGW_OID_INT4 || oid == PGW_OID_INT8;
}

/* [+-]digits[.digits][e[+-]digits] (integers: [+-]digits), spaces around
 * allowed as PostgreSQL's input functions do. */
static int valid_number(const char *p, size_t n, int integer)
{
    size_t i = 0, d = 0;
    while (i < n && p[i] == ' ')
        i++;
    if (i < n && (p[i] == '+' || p[i] == '-'))
        i++;
    while (i < n && p[i] >= '0' && p[i] <= '9')
        i++, d++;
    if (!integer && i < n && p[i] == '.') {
        i++;
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++, d++;
    }
    if (!d)
        return 0;
    if (!integer && i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            i++;
        size_t x = 0;
        while (i < n && p[i] >= '0' && p[i] <= '9')
            i++, x++;
        if (!x)
            return 0;
    }
    while (i < n && p[i] == ' ')
        i++;
    return i == n;
}

static void put_number(qr_buf *o, const char *p, size_t n)
{
    while (n && *p == ' ')
        p++, n--;
    while (n && p[n - 1] == ' ')
        n--;
    if (*p == '+')
        p++, n--;
    if (*p == '-') { /* "x-$1" must not become the comment "x--1" */
        qr_buf_put_u8(o, '(');
        qr_buf_put(o, p, n);
        qr_buf_put_u8(o, ')');
    } else {
        qr_buf_put(o, p, n);
    }
}

static int text_bool(const char *p, size_t n, int *v)
{
    static const char *yes[] = {"t", "true", "y", "yes", "on", "1"};
    static const char *no[] = {"f", "false", "n", "no", "off", "0"};
    while (n && *p == ' ')
        p++, n--;
    while (n && p[n - 1] == ' ')
        n--;
    for (int i = 0; i < 6; i++) {
        if (strlen(yes[i]) == n && !strncasecmp(p, yes[i], n))
            return *v = 1, 0;
        if (strlen(no[i]) == n && !strncasecmp(p, no[i], n))
            return *v = 0, 0;
    }
    return -1;
}

static void put_quoted(qr_buf *o, const char *p, size_t n)
{
    qr_buf_put_u8(o, '\'');
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\'')
            qr_buf_put_u8(o, '\'');
        qr_buf_put_u8(o, (uint8_t)p[i]);
    }
    qr_buf_put_u8(o, '\'');
}

static uint64_t be_n(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* A binary value as the text its type's output function would give. */
static int binary_text(const pgw_param *pp, uint32_t k, char *t, size_t cap, size_t *tn, qr_err *e)
{
    const uint8_t *p = pp->p;
    int32_t n = pp->len;
    int w = -1;
    switch (pp->oid) {
    case PGW_OID_INT2:
        w = 2;
        break;
    case PGW_OID_INT4:
    case PGW_OID_FLOAT4:
        w = 4;
        break;
    case PGW_OID_INT8:
    case PGW_OID_FLOAT8:
    case PGW_OID_TIMESTAMP:
    case PGW_OID_TIMESTAMPTZ:
        w = 8;
        break;
    case PGW_OID_BOOL:
        w = 1;
        break;
    default:
        return qr_errf(e, QR_E_FEATURE, "binary format of parameter $%u (type %u) is not supported",
                       k, pp->oid);
    }
    if (n != w)
        return qr_errf(e, PGW_E_PROTOCOL,
                       "insufficient data left in message: binary parameter $%u of type %u has %d "
                       "bytes, not %d",
                       k, pp->oid, n, w);
    uint64_t v = be_n(p, w);
    switch (pp->oid) {
    case PGW_OID_INT2:
        snprintf(t, cap, "%d", (int)(int16_t)v);
        break;
    case PGW_OID_INT4:
        snprintf(t, cap, "%" PRId32, (int32_t)v);
        break;
    case PGW_OID_INT8:
        snprintf(t, cap, "%" PRId64, (int64_t)v);
        break;
    case PGW_OID_BOOL:
        snprintf(t, cap, "%s", v ? "t" : "f");
        break;
    case PGW_OID_FLOAT4:
    case PGW_OID_FLOAT8: {
        double d;
        if (w == 4) {
            float f;
            uint32_t u = (uint32_t)v;
            memcpy(&f, &u, 4);
            d = f;
        } else {
            memcpy(&d, &v, 8);
        }
        if (!isfinite(d))
            return qr_errf(e, QR_E_FEATURE, "parameter $%u: %s is not supported", k,
                           isnan(d) ? "NaN" : "an infinite float");
        snprintf(t, cap, "%.17g", d);
        break;
    }
    default: { /* timestamps: us since 2000-01-01 */
        int64_t us = (int64_t)v;
        if (us > INT64_MAX / 1000 - PG_EPOCH_UNIX_S * 1000000 ||
            us < INT64_MIN / 1000 + PG_EPOCH_UNIX_S * 1000000)
            return qr_errf(e, QR_E_OUT_OF_RANGE, "parameter $%u: timestamp out of range", k);
        qr_time_format((us + PG_EPOCH_UNIX_S * 1000000) * 1000, t);
        t[QR_TIME_TEXT_LEN] = 0;
    }
    }
    *tn = strlen(t);
    return 0;
}

/* Append the literal of parameter k (1-based). */
static int put_literal(qr_buf *o, const pgw_param *pp, uint32_t k, qr_err *e)
{
    if (pp->len < 0) {
        qr_buf_put(o, "NULL", 4);
        return 0;
    }
    const char *p = (const char *)pp->p;
    size_t n = (size_t)pp->len;
    char t[64];
    int quoted_binary = 0;
    if (pp->fmt == 1) {
        if (pp->oid == PGW_OID_TEXT || pp->oid == PGW_OID_VARCHAR || pp->oid == PGW_OID_UNKNOWN ||
            pp->oid == PGW_OID_JSON || pp->oid == 0) {
            quoted_binary = 1; /* text's binary form is its bytes */
        } else {
            if (binary_text(pp, k, t, sizeof t, &n, e) != 0)
                return -1;
            p = t;
        }
    }
    if (!quoted_binary && is_number_oid(pp->oid)) {
        if (!valid_number(p, n, is_int_oid(pp->oid)))
            return qr_errf(
                e, QR_E_INVALID_TEXT, "invalid input syntax for type %s: \"%.*s\" (parameter $%u)",
                is_int_oid(pp->oid) ? "integer" : "numeric", (int)(n > 60 ? 60 : n), p, k);
        put_number(o, p, n);
        return 0;
    }
    if (!quoted_binary && pp->oid == PGW_OID_BOOL) {
        int v;
        if (text_bool(p, n, &v) != 0)
            return qr_errf(e, QR_E_INVALID_TEXT,
                           "invalid input syntax for type boolean: \"%.*s\" (parameter $%u)",
                           (int)(n > 60 ? 60 : n), p, k);
        qr_buf_put(o, v ? "TRUE" : "FALSE", v ? 4 : 5);
        return 0;
    }
    if (memchr(p, 0, n))
        return qr_errf(e, "22021",
                       "invalid byte sequence for encoding \"UTF8\": 0x00 (parameter $%u)", k);
    put_quoted(o, p, n);
    return 0;
}

int pgw_subst(const char *sql, size_t n, const pgw_param *ps, uint32_t np, pgw_text *out, qr_err *e)
{
    memset(out, 0, sizeof *out);
    scan s;
    scan_open(&s, sql);
    qr_buf o;
    qr_buf_init(&o);
    uint32_t cap = 0;
    for (size_t i = 0; s.toks && i < s.toks->n_tokens; i++)
        cap += s.toks->tokens[i]->token == PG_QUERY__TOKEN__PARAM;
    out->r = malloc(sizeof *out->r * (cap ? cap : 1));
    int rc = out->r ? 0 : qr_errf(e, QR_E_NOMEM, "out of memory binding parameters");
    size_t r = 0;
    for (size_t i = 0; rc == 0 && s.toks && i < s.toks->n_tokens; i++) {
        const PgQuery__ScanToken *t = s.toks->tokens[i];
        if (t->token != PG_QUERY__TOKEN__PARAM)
            continue;
        uint32_t k = param_no(sql, t->start, t->end);
        if (!k || k > np) {
            rc = qr_errf(e, PGW_E_PROTOCOL, "there is no parameter %.*s at character %d",
                         (int)(t->end - t->start), sql + t->start, t->start + 1);
            break;
        }
        qr_buf_put(&o, sql + r, (size_t)t->start - r);
        pgw_repl *rp = &out->r[out->nr++];
        rp->old_off = (uint32_t)t->start;
        rp->old_len = (uint32_t)(t->end - t->start);
        rp->new_off = (uint32_t)o.len;
        rc = put_literal(&o, &ps[k - 1], k, e);
        rp->new_len = (uint32_t)(o.len - rp->new_off);
        r = (size_t)t->end;
    }
    scan_close(&s);
    if (rc == 0) {
        qr_buf_put(&o, sql + r, n - r);
        qr_buf_put_u8(&o, 0);
        if (o.oom)
            rc = qr_errf(e, QR_E_NOMEM, "out of memory binding parameters");
    }
    if (rc != 0) {
        qr_buf_free(&o);
        pgw_text_free(out);
        return -1;
    }
    out->s = (char *)o.p;
    out->n = o.len - 1;
    return 0;
}

void pgw_text_free(pgw_text *t)
{
    free(t->s);
    free(t->r);
    memset(t, 0, sizeof *t);
}

long pgw_subst_pos(void *arg, long pos)
{
    const pgw_text *t = arg;
    long at = pos - 1, shift = 0;
    for (uint32_t i = 0; i < t->nr; i++) {
        const pgw_repl *r = &t->r[i];
        if (at < (long)r->new_off)
            break;
        if (at < (long)(r->new_off + r->new_len))
            return (long)r->old_off + 1;
        shift = (long)r->old_off + (long)r->old_len - (long)(r->new_off + r->new_len);
    }
    return at + shift + 1;
}
