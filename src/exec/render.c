/* render.c - result sets as an aligned table, CSV or NDJSON (render.h). */
#include "exec/render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/schema.h"
#include "format/segment.h"
#include "util/json.h"

static void put_s(qr_buf *b, const char *s) { qr_buf_put(b, s, strlen(s)); }

/* The shortest text that reads back as the same double. */
static void put_double(qr_buf *b, double d)
{
    char t[40];
    if (!isfinite(d)) {
        put_s(b, isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, d);
        if (strtod(t, NULL) == d)
            break;
    }
    put_s(b, t);
}

/* JSON text of an integer-stored cell (timestamps quoted). */
static void int_json(const qr_rcol *c, int64_t v, qr_buf *out)
{
    qr_value_int_json(c->type, c->tsfmt, v, out);
}

void qr_cell_text(const qr_result *r, uint32_t col, const qr_cell *c, qr_buf *out)
{
    const qr_rcol *rc = &r->cols[col];
    if (c->null)
        return;
    switch (rc->kind) {
    case QR_RK_INT: {
        size_t at = out->len;
        int_json(rc, c->i, out);
        if (out->len > at && out->p[at] == '"') { /* a timestamp: drop the quotes */
            memmove(out->p + at, out->p + at + 1, out->len - at - 2);
            out->len -= 2;
        }
        break;
    }
    case QR_RK_FLOAT:
        put_double(out, c->f);
        break;
    default:
        qr_buf_put(out, c->s, c->n);
    }
}

static void csv_field(qr_buf *out, const char *p, size_t n)
{
    if (n == 0)
        return; /* NULL, or an empty text */
    if (!memchr(p, ',', n) && !memchr(p, '"', n) && !memchr(p, '\n', n) && !memchr(p, '\r', n)) {
        qr_buf_put(out, p, n);
        return;
    }
    qr_buf_put_u8(out, '"');
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"')
            qr_buf_put_u8(out, '"');
        qr_buf_put_u8(out, (uint8_t)p[i]);
    }
    qr_buf_put_u8(out, '"');
}

static void render_csv(const qr_result *r, qr_buf *out)
{
    qr_buf t;
    qr_buf_init(&t);
    for (uint32_t c = 0; c < r->ncols; c++) {
        if (c)
            qr_buf_put_u8(out, ',');
        csv_field(out, r->cols[c].name, strlen(r->cols[c].name));
    }
    qr_buf_put_u8(out, '\n');
    for (uint64_t i = 0; i < r->nrows; i++) {
        const qr_cell *row = qr_result_row(r, i);
        for (uint32_t c = 0; c < r->ncols; c++) {
            if (c)
                qr_buf_put_u8(out, ',');
            qr_buf_clear(&t);
            qr_cell_text(r, c, &row[c], &t);
            if (!row[c].null && t.len == 0)
                qr_buf_put(out, "\"\"", 2); /* an empty text, not NULL */
            else
                csv_field(out, (const char *)t.p, t.len);
        }
        qr_buf_put_u8(out, '\n');
    }
    qr_buf_free(&t);
}

static void render_ndjson(const qr_result *r, qr_buf *out)
{
    for (uint64_t i = 0; i < r->nrows; i++) {
        const qr_cell *row = qr_result_row(r, i);
        qr_buf_put_u8(out, '{');
        for (uint32_t c = 0; c < r->ncols; c++) {
            const qr_rcol *rc = &r->cols[c];
            if (c)
                qr_buf_put_u8(out, ',');
            qj_write_string(out, rc->name, strlen(rc->name));
            qr_buf_put_u8(out, ':');
            const qr_cell *x = &row[c];
            if (x->null)
                put_s(out, "null");
            else if (rc->kind == QR_RK_INT)
                int_json(rc, x->i, out);
            else if (rc->kind == QR_RK_FLOAT)
                isfinite(x->f) ? put_double(out, x->f) : put_s(out, "null");
            else if (rc->kind == QR_RK_JSON)
                qr_buf_put(out, x->s, x->n);
            else
                qj_write_string(out, x->s, x->n);
        }
        put_s(out, "}\n");
    }
}

/* Display width of UTF-8 text: code points (good enough for alignment). */
static size_t width(const uint8_t *p, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        w += (p[i] & 0xC0) != 0x80;
    return w;
}

static void pad(qr_buf *out, size_t n)
{
    while (n--)
        qr_buf_put_u8(out, ' ');
}

static void render_table(const qr_result *r, qr_buf *out)
{
    size_t w[QR_RESULT_MAX_COLS];
    qr_buf t;
    qr_buf_init(&t);
    for (uint32_t c = 0; c < r->ncols; c++)
        w[c] = width((const uint8_t *)r->cols[c].name, strlen(r->cols[c].name));
    for (uint64_t i = 0; i < r->nrows; i++)
        for (uint32_t c = 0; c < r->ncols; c++) {
            qr_buf_clear(&t);
            qr_cell_text(r, c, &qr_result_row(r, i)[c], &t);
            size_t x = width(t.p, t.len);
            if (x > w[c])
                w[c] = x;
        }
    for (uint32_t c = 0; c < r->ncols; c++) {
        put_s(out, c ? " | " : " ");
        put_s(out, r->cols[c].name);
        pad(out, w[c] - width((const uint8_t *)r->cols[c].name, strlen(r->cols[c].name)));
    }
    qr_buf_put_u8(out, '\n');
    for (uint32_t c = 0; c < r->ncols; c++) {
        put_s(out, c ? "-+-" : "-");
        for (size_t k = 0; k < w[c]; k++)
            qr_buf_put_u8(out, '-');
    }
    qr_buf_put_u8(out, '\n');
    for (uint64_t i = 0; i < r->nrows; i++) {
        for (uint32_t c = 0; c < r->ncols; c++) {
            qr_buf_clear(&t);
            qr_cell_text(r, c, &qr_result_row(r, i)[c], &t);
            size_t x = width(t.p, t.len);
            put_s(out, c ? " | " : " ");
            int right = r->cols[c].kind == QR_RK_FLOAT ||
                        (r->cols[c].kind == QR_RK_INT && r->cols[c].type != QT_TIMESTAMP);
            if (right)
                pad(out, w[c] - x);
            qr_buf_put(out, t.p, t.len);
            if (!right)
                pad(out, w[c] - x);
        }
        qr_buf_put_u8(out, '\n');
    }
    char tail[64];
    snprintf(tail, sizeof tail, "(%llu row%s)\n", (unsigned long long)r->nrows,
             r->nrows == 1 ? "" : "s");
    put_s(out, tail);
    qr_buf_free(&t);
}

void qr_result_render(const qr_result *r, int fmt, qr_buf *out)
{
    if (fmt == QR_FMT_CSV)
        render_csv(r, out);
    else if (fmt == QR_FMT_NDJSON)
        render_ndjson(r, out);
    else
        render_table(r, out);
}
