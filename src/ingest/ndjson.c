/* ndjson.c - NDJSON line to batch row (see ndjson.h). Strings stay
 * zero-copy slices of the line unless they carry escapes. */
#include "ingest/ndjson.h"

#include <string.h>

#include "util/timefmt.h"

void qr_ndjson_init(qr_ndjson *p) { qr_buf_init(&p->scratch); }
void qr_ndjson_free(qr_ndjson *p) { qr_buf_free(&p->scratch); }

static int json_fail(qr_json *j, qr_err *e)
{
    if (j->oom) /* not the line's fault: the ingest must stop, not skip it */
        return qr_errf(e, QR_E_NOMEM, "byte %zu: out of memory decoding a string", j->err_off + 1);
    return qr_errf(e, QR_E_INVALID_TEXT, "byte %zu: %s", j->err_off + 1,
                   j->err_why ? j->err_why : "invalid JSON");
}

static const char *type_name(qj_type t)
{
    switch (t) {
    case QJ_NULL:
        return "null";
    case QJ_FALSE:
    case QJ_TRUE:
        return "boolean";
    case QJ_NUMBER:
        return "number";
    case QJ_STRING:
        return "string";
    case QJ_OBJECT:
        return "object";
    case QJ_ARRAY:
        return "array";
    default:
        return "nothing";
    }
}

static int wrong_type(qr_json *j, int col, qj_type got, const char *want, qr_err *e)
{
    return qr_errf(e, QR_E_DATATYPE, "byte %zu: column %s: expected %s, got %s",
                   (size_t)(j->p - j->s) + 1, qr_schema[col].name, want, type_name(got));
}

/* Parse a map object into map text in the batch arena. */
static int parse_map(qr_ndjson *p, qr_batch *b, qr_json *j, int col, qr_slice *out, qr_err *e)
{
    qr_buf *s = &p->scratch;
    qr_buf_clear(s);
    if (qj_object_begin(j) != 0)
        return json_fail(j, e);
    uint64_t npairs = 0;
    for (;;) {
        qr_slice k, v;
        int r = qj_object_next(j, &k, &b->arena);
        if (r < 0)
            return json_fail(j, e);
        if (r == 0)
            break;
        qj_type t = qj_peek(j);
        if (t != QJ_STRING) {
            if (t == QJ_ERROR || t == QJ_END)
                return json_fail(j, e);
            return qr_errf(e, QR_E_DATATYPE,
                           "byte %zu: column %s: map value of key \"%.*s\" must be a string, "
                           "got %s",
                           (size_t)(j->p - j->s) + 1, qr_schema[col].name,
                           (int)(k.n > 64 ? 64 : k.n), k.p, type_name(t));
        }
        if (qj_string(j, &v, &b->arena) != 0)
            return json_fail(j, e);
        qr_buf_put_lenbytes(s, k.p, k.n);
        qr_buf_put_lenbytes(s, v.p, v.n);
        npairs++;
    }
    qr_buf hdr;
    unsigned char tmp[10];
    hdr.p = tmp;
    hdr.len = 0;
    hdr.cap = sizeof tmp;
    hdr.oom = 0;
    qr_buf_put_varint(&hdr, npairs);
    char *d = qr_arena_alloc(&b->arena, hdr.len + s->len);
    if (!d || s->oom)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    memcpy(d, tmp, hdr.len);
    if (s->len)
        memcpy(d + hdr.len, s->p, s->len);
    out->p = d;
    out->n = hdr.len + s->len;
    return 0;
}

int qr_ndjson_parse(qr_ndjson *p, qr_batch *b, const char *line, size_t n, qr_err *e)
{
    qr_json j;
    qj_init(&j, line, n);
    qj_type t = qj_peek(&j);
    if (t == QJ_END)
        return 1;
    if (t != QJ_OBJECT) {
        if (t == QJ_ERROR)
            return json_fail(&j, e);
        return qr_errf(e, QR_E_DATATYPE, "byte %zu: expected a JSON object, got %s",
                       (size_t)(j.p - j.s) + 1, type_name(t));
    }
    if (b->nrows >= b->cap)
        return qr_errf(e, QR_E_INTERNAL, "batch full (%u rows)", b->cap);
    uint32_t row = qr_batch_add_null_row(b);
    unsigned seen = 0;
    uint64_t bytes = 0;
    if (qj_object_begin(&j) != 0)
        goto json_bad;
    for (;;) {
        qr_slice key;
        const char *q = j.p; /* where the key starts, for messages */
        while (q < j.end && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n' || *q == ','))
            q++;
        size_t key_at = (size_t)(q - j.s) + 1;
        int r = qj_object_next(&j, &key, &b->arena);
        if (r < 0)
            goto json_bad;
        if (r == 0)
            break;
        int col = qr_col_lookup(key.p, key.n);
        if (col < 0) {
            qr_errf(e, QR_E_UNDEFINED_COLUMN, "byte %zu: unknown column \"%.*s\"", key_at,
                    (int)(key.n > 64 ? 64 : key.n), key.p);
            goto bad;
        }
        if (seen & (1u << col)) {
            qr_errf(e, QR_E_INVALID_TEXT, "byte %zu: duplicate column %s", key_at,
                    qr_schema[col].name);
            goto bad;
        }
        seen |= 1u << col;
        qr_colvec *v = &b->cols[col];
        t = qj_peek(&j);
        if (t == QJ_ERROR || t == QJ_END)
            goto json_bad;
        if (t == QJ_NULL) {
            if (qj_null(&j) != 0)
                goto json_bad;
            continue;
        }
        switch (qr_schema[col].type) {
        case TYPE_TIMESTAMP: {
            int64_t ns;
            if (t == QJ_STRING) {
                qr_slice s;
                size_t at = (size_t)(j.p - j.s) + 1;
                if (qj_string(&j, &s, &b->arena) != 0)
                    goto json_bad;
                const char *why;
                if (qr_time_parse(s.p, s.n, &ns, &why) != 0) {
                    qr_errf(e, QR_E_INVALID_TEXT, "byte %zu: column Timestamp: %s", at, why);
                    goto bad;
                }
            } else if (t == QJ_NUMBER) {
                if (qj_int64(&j, &ns) != 0)
                    goto json_bad;
            } else {
                wrong_type(&j, col, t, "an RFC 3339 string or integer nanoseconds", e);
                goto bad;
            }
            v->ints[row] = ns;
            v->isnull[row] = 0;
            break;
        }
        case TYPE_UINT8:
        case TYPE_INT32: {
            if (t != QJ_NUMBER) {
                wrong_type(&j, col, t, "an integer", e);
                goto bad;
            }
            size_t at = (size_t)(j.p - j.s) + 1;
            int64_t x;
            if (qj_int64(&j, &x) != 0)
                goto json_bad;
            int u8 = qr_schema[col].type == TYPE_UINT8;
            if (u8 ? (x < 0 || x > 255) : (x < INT32_MIN || x > INT32_MAX)) {
                qr_errf(e, QR_E_OUT_OF_RANGE, "byte %zu: column %s: %lld out of range %s", at,
                        qr_schema[col].name, (long long)x, u8 ? "0..255" : "of int32");
                goto bad;
            }
            v->ints[row] = x;
            v->isnull[row] = 0;
            break;
        }
        case TYPE_STRING:
        case TYPE_HEXID:
            if (t != QJ_STRING) {
                wrong_type(&j, col, t, "a string", e);
                goto bad;
            }
            if (qj_string(&j, &v->strs[row], &b->arena) != 0)
                goto json_bad;
            bytes += v->strs[row].n;
            break;
        case TYPE_MAP:
            if (t != QJ_OBJECT) {
                wrong_type(&j, col, t, "an object of string values", e);
                goto bad;
            }
            if (parse_map(p, b, &j, col, &v->strs[row], e) != 0)
                goto bad;
            bytes += v->strs[row].n;
            break;
        }
    }
    if (qj_finish(&j) != 0)
        goto json_bad;
    b->payload_bytes += bytes + 32;
    return 0;
json_bad:
    json_fail(&j, e);
bad:
    qr_batch_drop_last(b);
    return -1;
}
