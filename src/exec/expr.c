/* expr.c - evaluating scalar expressions a batch at a time (expr.h): each
 * node's value array from its arguments' arrays. */
#include "exec/expr.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unicase.h>
#include <unistr.h>

#include "format/schema.h"
#include "util/timefmt.h"

int qr_xtype_of_col(int t)
{
    switch (t) {
    case QT_TIMESTAMP:
        return QR_XT_TS;
    case QT_BOOL:
        return QR_XT_BOOL;
    case QT_FLOAT64:
        return QR_XT_FLOAT;
    case QT_TEXT:
        return QR_XT_TEXT;
    case QT_JSON:
    case QT_MAP:
        return QR_XT_JSON;
    default:
        return QR_XT_INT;
    }
}

const char *qr_xtype_name(int t)
{
    static const char *n[] = {"unknown", "boolean", "bigint", "double precision",
                              "text",    "timestamp", "json"};
    return t >= 0 && t <= QR_XT_JSON ? n[t] : "?";
}

int qr_xtype_ctype(int xt)
{
    switch (xt) {
    case QR_XT_BOOL:
        return QT_BOOL;
    case QR_XT_TS:
        return QT_TIMESTAMP;
    case QR_XT_JSON:
        return QT_JSON;
    case QR_XT_TEXT:
    case QR_XT_NULL:
        return QT_TEXT;
    default:
        return QT_INT64; /* INT; FLOAT is a double in f, read as it is */
    }
}

void qr_xtype_rcol(int xt, int *kind, int *type)
{
    *type = 0;
    switch (xt) {
    case QR_XT_BOOL:
        *kind = QR_RK_INT, *type = QT_BOOL;
        break;
    case QR_XT_INT:
        *kind = QR_RK_INT, *type = QT_INT64;
        break;
    case QR_XT_FLOAT:
        *kind = QR_RK_FLOAT;
        break;
    case QR_XT_TS:
        *kind = QR_RK_INT, *type = QT_TIMESTAMP;
        break;
    case QR_XT_JSON:
        *kind = QR_RK_JSON;
        break;
    default:
        *kind = QR_RK_TEXT;
        break;
    }
}

qr_cell qr_x_natural(int t, qr_cell c)
{
    if (c.null)
        return c;
    if (t == QT_FLOAT64)
        c.f = qr_num_to_f64(c.i);
    else if (t == QT_UINT64)
        c.i = (int64_t)qr_num_to_u64(c.i); /* values past INT64_MAX wrap: documented */
    return c;
}

int qr_xval_cmp(int t, const qr_cell *a, const qr_cell *b)
{
    switch (t) {
    case QR_XT_FLOAT:
        if (isnan(a->f) || isnan(b->f))
            return isnan(a->f) - isnan(b->f);
        return a->f < b->f ? -1 : a->f > b->f;
    case QR_XT_TEXT:
    case QR_XT_JSON: {
        uint32_t n = a->n < b->n ? a->n : b->n;
        int r = n ? memcmp(a->s, b->s, n) : 0;
        return r ? r : (a->n > b->n) - (a->n < b->n);
    }
    default:
        return a->i < b->i ? -1 : a->i > b->i;
    }
}

/* ---- time ---- */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return q - ((a % b) != 0 && ((a < 0) != (b < 0)));
}

int64_t qr_date_trunc(int unit, int64_t ts)
{
    static const int64_t step[] = {0, 1000, 1000000, 1000000000, 60000000000, 3600000000000,
                                   86400000000000};
    const int64_t day = 86400000000000;
    if (unit >= QR_TU_MICROSECOND && unit <= QR_TU_DAY)
        return floor_div(ts, step[unit]) * step[unit];
    int64_t days = floor_div(ts, day);
    if (unit == QR_TU_WEEK) /* 1970-01-01 was a Thursday: Monday is 3 days before */
        return (floor_div(days + 3, 7) * 7 - 3) * day;
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    if (unit == QR_TU_MONTH)
        return days_from_civil(y, m, 1) * day;
    if (unit == QR_TU_QUARTER)
        return days_from_civil(y, (m - 1) / 3 * 3 + 1, 1) * day;
    return days_from_civil(y, 1, 1) * day;
}

int qr_tunit_parse(const char *s)
{
    static const struct {
        const char *name;
        int unit;
    } u[] = {{"microsecond", QR_TU_MICROSECOND}, {"microseconds", QR_TU_MICROSECOND},
             {"millisecond", QR_TU_MILLISECOND}, {"milliseconds", QR_TU_MILLISECOND},
             {"second", QR_TU_SECOND},           {"seconds", QR_TU_SECOND},
             {"minute", QR_TU_MINUTE},           {"minutes", QR_TU_MINUTE},
             {"hour", QR_TU_HOUR},               {"hours", QR_TU_HOUR},
             {"day", QR_TU_DAY},                 {"days", QR_TU_DAY},
             {"week", QR_TU_WEEK},               {"weeks", QR_TU_WEEK},
             {"month", QR_TU_MONTH},             {"months", QR_TU_MONTH},
             {"quarter", QR_TU_QUARTER},         {"year", QR_TU_YEAR},
             {"years", QR_TU_YEAR}};
    for (size_t i = 0; i < sizeof u / sizeof *u; i++)
        if (!strcasecmp(s, u[i].name))
            return u[i].unit;
    return 0;
}

/* ---- LIKE ---- */
static int like_at(const uint8_t *s, const uint8_t *se, const uint8_t *p, const uint8_t *pe)
{
    while (p < pe) {
        if (*p == '%') {
            while (p < pe && *p == '%')
                p++;
            if (p == pe)
                return 1;
            for (const uint8_t *t = s; t <= se;) {
                if (like_at(t, se, p, pe))
                    return 1;
                if (t == se)
                    break;
                int l = u8_mblen(t, (size_t)(se - t));
                t += l > 0 ? l : 1;
            }
            return 0;
        }
        if (s == se)
            return 0;
        if (*p == '_') {
            int l = u8_mblen(s, (size_t)(se - s));
            s += l > 0 ? l : 1;
            p++;
            continue;
        }
        if (*p == '\\' && p + 1 < pe)
            p++;
        if (*p != *s)
            return 0;
        p++, s++;
    }
    return s == se;
}

int qr_like(const char *s, size_t n, const char *pat, size_t pn, int icase)
{
    if (!icase)
        return like_at((const uint8_t *)s, (const uint8_t *)s + n, (const uint8_t *)pat,
                       (const uint8_t *)pat + pn);
    size_t fn = 0, fpn = 0;
    uint8_t *fs = u8_casefold((const uint8_t *)s, n, NULL, NULL, NULL, &fn);
    uint8_t *fp = u8_casefold((const uint8_t *)pat, pn, NULL, NULL, NULL, &fpn);
    int r = fs && fp ? like_at(fs, fs + fn, fp, fp + fpn) : 0;
    free(fs);
    free(fp);
    return r;
}

/* ---- JSON access on canonical JSON text ---- */
static const char *json_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* The end of the JSON value at p (NULL when malformed). */
static const char *json_skip(const char *p, const char *e)
{
    p = json_ws(p, e);
    if (p >= e)
        return NULL;
    if (*p == '"') {
        for (p++; p < e; p++) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                return p + 1;
        }
        return NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (; p < e; p++) {
            if (*p == '"') {
                const char *q = json_skip(p, e);
                if (!q)
                    return NULL;
                p = q - 1;
            } else if (*p == '{' || *p == '[') {
                depth++;
            } else if (*p == '}' || *p == ']') {
                if (--depth == 0)
                    return p + 1;
            }
        }
        return NULL;
    }
    while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ')
        p++;
    return p;
}

/* Unescape JSON string body [p, e) into arena text; NULL when out of memory. */
static char *json_unescape(const char *p, const char *e, uint32_t *n, qr_arena *a)
{
    char *o = qr_arena_alloc(a, (size_t)(e - p) + 1), *w = o;
    if (!o)
        return NULL;
    while (p < e) {
        if (*p != '\\' || p + 1 >= e) {
            *w++ = *p++;
            continue;
        }
        p++;
        char c = *p++;
        switch (c) {
        case 'n': *w++ = '\n'; break;
        case 't': *w++ = '\t'; break;
        case 'r': *w++ = '\r'; break;
        case 'b': *w++ = '\b'; break;
        case 'f': *w++ = '\f'; break;
        case 'u': {
            unsigned cp = 0;
            for (int k = 0; k < 4 && p < e; k++, p++)
                cp = cp * 16 + (unsigned)(*p <= '9' ? *p - '0' : (*p | 32) - 'a' + 10);
            if (cp >= 0xD800 && cp < 0xDC00 && p + 6 <= e && p[0] == '\\' && p[1] == 'u') {
                unsigned lo = 0;
                for (int k = 2; k < 6; k++)
                    lo = lo * 16 + (unsigned)(p[k] <= '9' ? p[k] - '0' : (p[k] | 32) - 'a' + 10);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            }
            int l = u8_uctomb((uint8_t *)w, cp, 4);
            w += l > 0 ? l : 0;
            break;
        }
        default: *w++ = c; break;
        }
    }
    *n = (uint32_t)(w - o);
    return o;
}

/* json -> key (an object member) or -> index (an array element): the raw
 * value slice, or 0 when there is none. */
static int json_get(const char *s, uint32_t n, const qr_cell *key, int key_is_int, const char **vp,
                    uint32_t *vn)
{
    const char *p = json_ws(s, s + n), *e = s + n;
    if (p >= e)
        return 0;
    if (*p == '[' && key_is_int) {
        int64_t want = key->i, at = 0;
        p = json_ws(p + 1, e);
        while (p < e && *p != ']') {
            const char *q = json_skip(p, e);
            if (!q)
                return 0;
            if (at++ == want) {
                *vp = p;
                *vn = (uint32_t)(q - p);
                return 1;
            }
            p = json_ws(q, e);
            if (p < e && *p == ',')
                p = json_ws(p + 1, e);
        }
        return 0;
    }
    if (*p != '{' || key_is_int)
        return 0;
    p = json_ws(p + 1, e);
    while (p < e && *p == '"') {
        const char *ke = json_skip(p, e);
        if (!ke)
            return 0;
        const char *v = json_ws(ke, e);
        if (v >= e || *v != ':')
            return 0;
        v = json_ws(v + 1, e);
        const char *ve = json_skip(v, e);
        if (!ve)
            return 0;
        /* canonical text escapes only what it must, so most keys compare raw */
        size_t kn = (size_t)(ke - p) - 2;
        if (kn == key->n && !memcmp(p + 1, key->s, kn)) {
            *vp = v;
            *vn = (uint32_t)(ve - v);
            return 1;
        }
        p = json_ws(ve, e);
        if (p < e && *p == ',')
            p = json_ws(p + 1, e);
    }
    return 0;
}

/* ---- evaluation ---- */
static qr_cell *cells(uint32_t n, qr_arena *a, qr_err *e)
{
    qr_cell *c = qr_arena_alloc(a, sizeof *c * (n ? n : 1));
    if (!c)
        qr_errf(e, QR_E_NOMEM, "out of memory evaluating an expression");
    return c;
}

static int fail_at(qr_err *e, const char *code, const char *msg, const qr_expr *x)
{
    (void)x;
    return qr_errf(e, code, "%s", msg);
}

static double as_f(int t, const qr_cell *c)
{
    return t == QR_XT_FLOAT ? c->f : (double)c->i;
}

static int arith(const qr_expr *x, const qr_cell *l, const qr_cell *r, uint32_t n, qr_cell *o,
                 qr_err *e)
{
    int lt = x->args[0]->type, rt = x->args[1]->type;
    int fl = x->type == QR_XT_FLOAT;
    for (uint32_t i = 0; i < n; i++) {
        if (l[i].null || r[i].null) {
            o[i] = (qr_cell){.null = 1};
            continue;
        }
        o[i] = (qr_cell){0};
        if (fl) {
            double a = as_f(lt, &l[i]), b = as_f(rt, &r[i]);
            switch (x->op) {
            case '+': o[i].f = a + b; break;
            case '-': o[i].f = a - b; break;
            case '*': o[i].f = a * b; break;
            case '/':
                if (b == 0)
                    return fail_at(e, "22012", "division by zero", x);
                o[i].f = a / b;
                break;
            default:
                if (b == 0)
                    return fail_at(e, "22012", "division by zero", x);
                o[i].f = fmod(a, b);
                break;
            }
            continue;
        }
        int64_t a = l[i].i, b = r[i].i, v = 0;
        int ovf = 0;
        switch (x->op) {
        case '+': ovf = __builtin_add_overflow(a, b, &v); break;
        case '-': ovf = __builtin_sub_overflow(a, b, &v); break;
        case '*': ovf = __builtin_mul_overflow(a, b, &v); break;
        default:
            if (b == 0)
                return fail_at(e, "22012", "division by zero", x);
            if (a == INT64_MIN && b == -1)
                ovf = x->op == '/', v = 0;
            else
                v = x->op == '/' ? a / b : a % b;
            break;
        }
        if (ovf)
            return fail_at(e, QR_E_OUT_OF_RANGE, "bigint out of range", x);
        o[i].i = v;
    }
    return 0;
}

static int cmp_holds(int op, int c)
{
    switch (op) {
    case QR_CMP_EQ: return c == 0;
    case QR_CMP_NE: return c != 0;
    case QR_CMP_LT: return c < 0;
    case QR_CMP_LE: return c <= 0;
    case QR_CMP_GT: return c > 0;
    default: return c >= 0;
    }
}

/* Compare values of two (possibly different numeric) types. */
static int cmp2(int lt, const qr_cell *l, int rt, const qr_cell *r)
{
    if (lt != rt && (lt == QR_XT_FLOAT || rt == QR_XT_FLOAT)) {
        qr_cell a = {.f = as_f(lt, l)}, b = {.f = as_f(rt, r)};
        return qr_xval_cmp(QR_XT_FLOAT, &a, &b);
    }
    return qr_xval_cmp(lt, l, r);
}

static qr_cell text_cell(const char *s, uint32_t n)
{
    return (qr_cell){.s = s, .n = n};
}

/* Text of a value for casts and concatenation; bytes from a. */
static int to_text(int t, const qr_cell *c, qr_cell *o, qr_arena *a, qr_err *e)
{
    char buf[64];
    int len = 0;
    switch (t) {
    case QR_XT_TEXT:
    case QR_XT_JSON:
        *o = text_cell(c->s, c->n);
        return 0;
    case QR_XT_BOOL:
        *o = text_cell(c->i ? "true" : "false", c->i ? 4 : 5);
        return 0;
    case QR_XT_INT:
        len = snprintf(buf, sizeof buf, "%lld", (long long)c->i);
        break;
    case QR_XT_FLOAT:
        len = snprintf(buf, sizeof buf, "%.17g", c->f);
        break;
    case QR_XT_TS: {
        qr_time_format(c->i, buf);
        len = QR_TIME_TEXT_LEN;
        break;
    }
    default:
        *o = (qr_cell){.null = 1};
        return 0;
    }
    char *p = qr_arena_memdup(a, buf, (size_t)len);
    if (!p)
        return qr_errf(e, QR_E_NOMEM, "out of memory evaluating an expression");
    *o = text_cell(p, (uint32_t)len);
    return 0;
}

static int cast1(const qr_expr *x, const qr_cell *in, qr_cell *o, qr_arena *a, qr_err *e)
{
    int from = x->args[0]->type, to = x->type;
    if (in->null || from == to) {
        *o = *in;
        return 0;
    }
    *o = (qr_cell){0};
    if (to == QR_XT_TEXT || to == QR_XT_JSON)
        return to_text(from, in, o, a, e);
    char buf[128];
    if (from == QR_XT_TEXT || from == QR_XT_JSON) {
        uint32_t n = in->n < sizeof buf - 1 ? in->n : (uint32_t)sizeof buf - 1;
        memcpy(buf, in->s, n);
        buf[n] = 0;
        char *end;
        if (to == QR_XT_INT) {
            errno = 0;
            long long v = strtoll(buf, &end, 10);
            while (*end == ' ')
                end++;
            if (!n || *end || errno || in->n != n)
                return qr_errf(e, QR_E_INVALID_TEXT, "invalid input syntax for type bigint: \"%.*s\"",
                               (int)n, buf);
            o->i = v;
        } else if (to == QR_XT_FLOAT) {
            o->f = strtod(buf, &end);
            if (!n || *end)
                return qr_errf(e, QR_E_INVALID_TEXT,
                               "invalid input syntax for type double precision: \"%.*s\"", (int)n,
                               buf);
        } else if (to == QR_XT_BOOL) {
            if (!strcasecmp(buf, "true") || !strcasecmp(buf, "t") || !strcmp(buf, "1"))
                o->i = 1;
            else if (!strcasecmp(buf, "false") || !strcasecmp(buf, "f") || !strcmp(buf, "0"))
                o->i = 0;
            else
                return qr_errf(e, QR_E_INVALID_TEXT,
                               "invalid input syntax for type boolean: \"%.*s\"", (int)n, buf);
        } else if (to == QR_XT_TS) {
            const char *why;
            if (qr_time_parse(buf, n, &o->i, &why) != 0)
                return qr_errf(e, QR_E_INVALID_TEXT,
                               "invalid input syntax for type timestamp: \"%.*s\"", (int)n, buf);
        }
        return 0;
    }
    if (to == QR_XT_FLOAT) {
        o->f = (double)in->i;
        return 0;
    }
    if (to == QR_XT_INT && from == QR_XT_FLOAT) {
        double r = nearbyint(in->f);
        if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0))
            return qr_errf(e, QR_E_OUT_OF_RANGE, "bigint out of range");
        o->i = (int64_t)r;
        return 0;
    }
    o->i = to == QR_XT_BOOL ? in->i != 0 : in->i; /* int <-> bool, ts -> int (ns) */
    return 0;
}

static uint32_t u8_chars(const char *s, uint32_t n)
{
    return (uint32_t)u8_mbsnlen((const uint8_t *)s, n);
}

/* Byte offset of character k (0-based) of s, clamped to n. */
static uint32_t u8_off(const char *s, uint32_t n, int64_t k)
{
    uint32_t off = 0;
    while (k > 0 && off < n) {
        int l = u8_mblen((const uint8_t *)s + off, n - off);
        off += l > 0 ? (uint32_t)l : 1;
        k--;
    }
    return off;
}

static int regex_row(const qr_expr *x, const qr_cell *s, const qr_cell *p, int *hit, qr_err *e)
{
    char sb[4096], *str = s->n < sizeof sb ? sb : malloc(s->n + 1);
    if (!str)
        return qr_errf(e, QR_E_NOMEM, "out of memory evaluating regexp_matches");
    memcpy(str, s->s, s->n);
    str[s->n] = 0;
    int rc = 0;
    if (x->re) {
        *hit = regexec(x->re, str, 0, NULL, 0) == 0;
    } else {
        char pb[1024];
        if (p->n >= sizeof pb) {
            rc = qr_errf(e, QR_E_TOO_LONG, "regular expression longer than %zu bytes", sizeof pb);
        } else {
            memcpy(pb, p->s, p->n);
            pb[p->n] = 0;
            regex_t re;
            if (regcomp(&re, pb, REG_EXTENDED | REG_NOSUB) != 0) {
                rc = qr_errf(e, "2201B", "invalid regular expression: %s", pb);
            } else {
                *hit = regexec(&re, str, 0, NULL, 0) == 0;
                regfree(&re);
            }
        }
    }
    if (str != sb)
        free(str);
    return rc;
}

static int func(const qr_expr *x, const qr_cell **v, uint32_t n, qr_cell *o, qr_arena *a,
                qr_err *e)
{
    const qr_expr *const *ar = (const qr_expr *const *)x->args;
    for (uint32_t i = 0; i < n; i++) {
        qr_cell r = {.null = 1};
        const qr_cell *c0 = x->nargs ? &v[0][i] : NULL;
        int any_null = 0;
        for (uint32_t k = 0; k < x->nargs; k++)
            any_null |= v[k][i].null;
        switch (x->fn) {
        case QR_FN_COALESCE:
            for (uint32_t k = 0; k < x->nargs && r.null; k++)
                if (!v[k][i].null) {
                    r = v[k][i];
                    if (ar[k]->type == QR_XT_INT && x->type == QR_XT_FLOAT)
                        r.f = (double)r.i;
                }
            break;
        case QR_FN_GREATEST:
        case QR_FN_LEAST:
            for (uint32_t k = 0; k < x->nargs; k++) {
                if (v[k][i].null)
                    continue;
                qr_cell c = v[k][i];
                if (ar[k]->type == QR_XT_INT && x->type == QR_XT_FLOAT)
                    c.f = (double)c.i;
                int cmp = r.null ? 0 : qr_xval_cmp(x->type, &c, &r);
                if (r.null || (x->fn == QR_FN_GREATEST ? cmp > 0 : cmp < 0))
                    r = c;
            }
            break;
        case QR_FN_NULLIF:
            r = *c0;
            if (!c0->null && !v[1][i].null && cmp2(ar[0]->type, c0, ar[1]->type, &v[1][i]) == 0)
                r = (qr_cell){.null = 1};
            break;
        case QR_FN_CONCAT: {
            size_t len = 0;
            qr_cell t[16];
            for (uint32_t k = 0; k < x->nargs; k++) {
                t[k] = (qr_cell){.null = 1};
                if (!v[k][i].null && to_text(ar[k]->type, &v[k][i], &t[k], a, e) != 0)
                    return -1;
                len += t[k].null ? 0 : t[k].n;
            }
            char *p = qr_arena_alloc(a, len + 1);
            if (!p)
                return qr_errf(e, QR_E_NOMEM, "out of memory evaluating concat");
            size_t w = 0;
            for (uint32_t k = 0; k < x->nargs; k++)
                if (!t[k].null && t[k].n) {
                    memcpy(p + w, t[k].s, t[k].n);
                    w += t[k].n;
                }
            r = text_cell(p, (uint32_t)w);
            break;
        }
        default:
            if (any_null)
                break;
            switch (x->fn) {
            case QR_FN_DATE_TRUNC: /* (unit, ts): the unit is bound into x->unit */
                r = (qr_cell){.i = qr_date_trunc(x->unit, v[1][i].i)};
                break;
            case QR_FN_EXTRACT:
                r = (qr_cell){.f = qr_extract(x->unit, v[1][i].i)};
                break;
            case QR_FN_FLOOR:
            case QR_FN_CEIL:
                r = *c0;
                if (x->type == QR_XT_FLOAT)
                    r.f = x->fn == QR_FN_FLOOR ? floor(r.f) : ceil(r.f);
                break;
            case QR_FN_LOWER:
            case QR_FN_UPPER: {
                size_t len = 0;
                uint8_t *m = (x->fn == QR_FN_LOWER ? u8_tolower : u8_toupper)(
                    (const uint8_t *)c0->s, c0->n, NULL, NULL, NULL, &len);
                char *p = m ? qr_arena_memdup(a, len ? (const char *)m : "", len ? len : 1) : NULL;
                free(m);
                if (!p)
                    return qr_errf(e, QR_E_NOMEM, "out of memory evaluating lower/upper");
                r = text_cell(p, (uint32_t)len);
                break;
            }
            case QR_FN_LENGTH:
                r = (qr_cell){.i = u8_chars(c0->s, c0->n)};
                break;
            case QR_FN_OCTET_LENGTH:
                r = (qr_cell){.i = c0->n};
                break;
            case QR_FN_ABS:
                r = *c0;
                if (x->type == QR_XT_FLOAT)
                    r.f = fabs(r.f);
                else if (r.i == INT64_MIN)
                    return qr_errf(e, QR_E_OUT_OF_RANGE, "bigint out of range");
                else if (r.i < 0)
                    r.i = -r.i;
                break;
            case QR_FN_SUBSTR: {
                int64_t from = v[1][i].i, cnt = x->nargs > 2 ? v[2][i].i : INT64_MAX / 2;
                if (cnt < 0)
                    return qr_errf(e, "22011", "negative substring length not allowed");
                int64_t end = from + cnt; /* characters [from, end), 1-based */
                if (from < 1)
                    from = 1;
                uint32_t b0 = end <= from ? 0 : u8_off(c0->s, c0->n, from - 1);
                uint32_t b1 = end <= from ? 0 : u8_off(c0->s, c0->n, end - 1);
                r = text_cell(c0->s + b0, b1 > b0 ? b1 - b0 : 0);
                break;
            }
            case QR_FN_CONCAT_OP: {
                qr_cell l, rr;
                if (to_text(ar[0]->type, c0, &l, a, e) != 0 ||
                    to_text(ar[1]->type, &v[1][i], &rr, a, e) != 0)
                    return -1;
                char *p = qr_arena_alloc(a, (size_t)l.n + rr.n + 1);
                if (!p)
                    return qr_errf(e, QR_E_NOMEM, "out of memory evaluating ||");
                if (l.n)
                    memcpy(p, l.s, l.n);
                if (rr.n)
                    memcpy(p + l.n, rr.s, rr.n);
                r = text_cell(p, l.n + rr.n);
                break;
            }
            case QR_FN_STARTS_WITH:
                r = (qr_cell){.i = c0->n >= v[1][i].n && !memcmp(c0->s, v[1][i].s, v[1][i].n)};
                break;
            case QR_FN_STRPOS: {
                const char *hit = v[1][i].n == 0 ? c0->s
                                  : c0->n ? memmem(c0->s, c0->n, v[1][i].s, v[1][i].n) : NULL;
                r = (qr_cell){.i = hit ? (int64_t)u8_chars(c0->s, (uint32_t)(hit - c0->s)) + 1 : 0};
                break;
            }
            case QR_FN_REGEXP_MATCHES: {
                int hit = 0;
                if (regex_row(x, c0, &v[1][i], &hit, e) != 0)
                    return -1;
                r = (qr_cell){.i = hit};
                break;
            }
            case QR_FN_JSON_GET:
            case QR_FN_JSON_GET_TEXT: {
                const char *vp;
                uint32_t vn;
                if (!json_get(c0->s, c0->n, &v[1][i], ar[1]->type == QR_XT_INT, &vp, &vn))
                    break;
                if (x->fn == QR_FN_JSON_GET) {
                    r = text_cell(vp, vn);
                } else if (vn >= 2 && vp[0] == '"') {
                    uint32_t un;
                    char *u = json_unescape(vp + 1, vp + vn - 1, &un, a);
                    if (!u)
                        return qr_errf(e, QR_E_NOMEM, "out of memory evaluating ->>");
                    r = text_cell(u, un);
                } else if (!(vn == 4 && !memcmp(vp, "null", 4))) {
                    r = text_cell(vp, vn);
                }
                break;
            }
            default:
                return qr_errf(e, QR_E_INTERNAL, "unknown function %d", x->fn);
            }
        }
        o[i] = r;
    }
    return 0;
}

const qr_cell *qr_expr_eval(const qr_expr *x, const qr_xbatch *b, qr_arena *a, qr_err *e)
{
    uint32_t n = b->n;
    qr_cell *o;
    switch (x->kind) {
    case QR_EX_COL: {
        const qr_cell *in = x->slot < b->ncols ? b->cols[x->slot] : NULL;
        if (!in) {
            qr_errf(e, QR_E_INTERNAL, "expression reads column %u, not in its batch", x->slot);
            return NULL;
        }
        if (x->ctype != QT_FLOAT64 && x->ctype != QT_UINT64)
            return in;
        if (!(o = cells(n, a, e)))
            return NULL;
        for (uint32_t i = 0; i < n; i++)
            o[i] = qr_x_natural(x->ctype, in[i]);
        return o;
    }
    case QR_EX_CONST:
        if (!(o = cells(n, a, e)))
            return NULL;
        for (uint32_t i = 0; i < n; i++)
            o[i] = x->val;
        return o;
    case QR_EX_SCORE:
        if (!(o = cells(n, a, e)))
            return NULL;
        for (uint32_t i = 0; i < n; i++)
            o[i] = b->score ? (qr_cell){.f = b->score[i]} : (qr_cell){.null = 1};
        return o;
    default:
        break;
    }
    const qr_cell *v[16];
    if (x->nargs > 16) {
        qr_errf(e, QR_E_TOO_LONG, "an expression takes at most 16 arguments");
        return NULL;
    }
    for (uint32_t k = 0; k < x->nargs; k++)
        if (!(v[k] = qr_expr_eval(x->args[k], b, a, e)))
            return NULL;
    if (!(o = cells(n, a, e)))
        return NULL;
    switch (x->kind) {
    case QR_EX_ARITH:
        return arith(x, v[0], v[1], n, o, e) == 0 ? o : NULL;
    case QR_EX_NEG:
        for (uint32_t i = 0; i < n; i++) {
            o[i] = v[0][i];
            if (o[i].null)
                continue;
            if (x->type == QR_XT_FLOAT) {
                o[i].f = -o[i].f;
            } else if (o[i].i == INT64_MIN) {
                qr_errf(e, QR_E_OUT_OF_RANGE, "bigint out of range");
                return NULL;
            } else {
                o[i].i = -o[i].i;
            }
        }
        return o;
    case QR_EX_CMP: {
        int lt = x->args[0]->type, rt = x->args[1]->type;
        for (uint32_t i = 0; i < n; i++)
            o[i] = v[0][i].null || v[1][i].null
                       ? (qr_cell){.null = 1}
                       : (qr_cell){.i = cmp_holds(x->op, cmp2(lt, &v[0][i], rt, &v[1][i]))};
        return o;
    }
    case QR_EX_AND:
    case QR_EX_OR: {
        int is_and = x->kind == QR_EX_AND;
        for (uint32_t i = 0; i < n; i++) {
            int decided = 0, null = 0;
            for (uint32_t k = 0; k < x->nargs && !decided; k++) {
                if (v[k][i].null)
                    null = 1;
                else if ((v[k][i].i != 0) != is_and)
                    decided = 1;
            }
            o[i] = decided ? (qr_cell){.i = !is_and}
                   : null  ? (qr_cell){.null = 1}
                           : (qr_cell){.i = is_and};
        }
        return o;
    }
    case QR_EX_NOT:
        for (uint32_t i = 0; i < n; i++)
            o[i] = v[0][i].null ? v[0][i] : (qr_cell){.i = !v[0][i].i};
        return o;
    case QR_EX_ISNULL:
        for (uint32_t i = 0; i < n; i++)
            o[i] = (qr_cell){.i = v[0][i].null != x->neg};
        return o;
    case QR_EX_IN:
        for (uint32_t i = 0; i < n; i++) {
            if (v[0][i].null) {
                o[i] = (qr_cell){.null = 1};
                continue;
            }
            int hit = 0, null = 0;
            for (uint32_t k = 1; k < x->nargs && !hit; k++) {
                if (v[k][i].null)
                    null = 1;
                else
                    hit = cmp2(x->args[0]->type, &v[0][i], x->args[k]->type, &v[k][i]) == 0;
            }
            o[i] = hit ? (qr_cell){.i = !x->neg} : null ? (qr_cell){.null = 1}
                                                         : (qr_cell){.i = x->neg};
        }
        return o;
    case QR_EX_LIKE:
        for (uint32_t i = 0; i < n; i++)
            o[i] = v[0][i].null || v[1][i].null
                       ? (qr_cell){.null = 1}
                       : (qr_cell){.i = qr_like(v[0][i].s, v[0][i].n, v[1][i].s, v[1][i].n,
                                                x->icase) != x->neg};
        return o;
    case QR_EX_CASE: {
        uint32_t pairs = x->nargs / 2;
        for (uint32_t i = 0; i < n; i++) {
            o[i] = (qr_cell){.null = 1};
            uint32_t k = 0;
            while (k < pairs && (v[2 * k][i].null || !v[2 * k][i].i))
                k++;
            int src = k < pairs ? (int)(2 * k + 1) : (x->nargs & 1) ? (int)x->nargs - 1 : -1;
            if (src >= 0) {
                o[i] = v[src][i];
                if (!o[i].null && x->type == QR_XT_FLOAT && x->args[src]->type == QR_XT_INT)
                    o[i].f = (double)o[i].i;
            }
        }
        return o;
    }
    case QR_EX_CAST:
        for (uint32_t i = 0; i < n; i++)
            if (cast1(x, &v[0][i], &o[i], a, e) != 0)
                return NULL;
        return o;
    case QR_EX_FUNC:
        return func(x, v, n, o, a, e) == 0 ? o : NULL;
    default:
        qr_errf(e, QR_E_INTERNAL, "unknown expression node %d", x->kind);
        return NULL;
    }
}

int qr_expr_filter(const qr_expr *x, const qr_xbatch *b, uint32_t *sel, uint32_t *n, qr_arena *a,
                   qr_err *e)
{
    const qr_cell *v = qr_expr_eval(x, b, a, e);
    if (!v)
        return -1;
    uint32_t k = 0;
    for (uint32_t i = 0; i < b->n; i++)
        if (!v[i].null && v[i].i)
            sel[k++] = i;
    *n = k;
    return 0;
}

static int one_col(const qr_expr *x, int *col)
{
    if (x->kind == QR_EX_SCORE)
        return -1;
    if (x->kind == QR_EX_COL) {
        if (*col >= 0 && *col != (int)x->slot)
            return -1;
        *col = (int)x->slot;
    }
    for (uint32_t k = 0; k < x->nargs; k++)
        if (one_col(x->args[k], col) != 0)
            return -1;
    return 0;
}

int qr_expr_one_col(const qr_expr *x)
{
    int col = -1;
    return one_col(x, &col) == 0 ? col : -1;
}

int qr_expr_prepare(qr_expr *x, qr_err *e)
{
    for (uint32_t k = 0; k < x->nargs; k++)
        if (qr_expr_prepare(x->args[k], e) != 0)
            return -1;
    if (x->kind == QR_EX_FUNC && x->fn == QR_FN_REGEXP_MATCHES && !x->re &&
        x->args[1]->kind == QR_EX_CONST && !x->args[1]->val.null) {
        const qr_cell *p = &x->args[1]->val;
        char *pat = malloc(p->n + 1);
        regex_t *re = malloc(sizeof *re);
        if (!pat || !re) {
            free(pat);
            free(re);
            return qr_errf(e, QR_E_NOMEM, "out of memory compiling a regular expression");
        }
        memcpy(pat, p->s, p->n);
        pat[p->n] = 0;
        int rc = regcomp(re, pat, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            free(re);
            qr_errf(e, "2201B", "invalid regular expression: %s", pat);
            free(pat);
            return -1;
        }
        free(pat);
        x->re = re;
    }
    return 0;
}

void qr_expr_free_tree(qr_expr *x)
{
    if (!x)
        return;
    for (uint32_t k = 0; k < x->nargs; k++)
        qr_expr_free_tree(x->args[k]);
    if (x->re) {
        regfree(x->re);
        free(x->re);
        x->re = NULL;
    }
}

int qr_xfield_parse(const char *s)
{
    static const char *const names[] = {"", "epoch", "year", "month", "day", "hour",
                                        "minute", "second", "dow", "doy"};
    for (int f = QR_XF_EPOCH; f <= QR_XF_DOY; f++)
        if (!strcasecmp(s, names[f]))
            return f;
    return 0;
}

double qr_extract(int field, int64_t ts)
{
    int64_t s = ts / 1000000000 - (ts % 1000000000 < 0), ns = ts - s * 1000000000;
    if (field == QR_XF_EPOCH)
        return (double)s + (double)ns / 1e9;
    time_t t = (time_t)s;
    struct tm tm;
    gmtime_r(&t, &tm);
    switch (field) {
    case QR_XF_YEAR:
        return tm.tm_year + 1900;
    case QR_XF_MONTH:
        return tm.tm_mon + 1;
    case QR_XF_DAY:
        return tm.tm_mday;
    case QR_XF_HOUR:
        return tm.tm_hour;
    case QR_XF_MINUTE:
        return tm.tm_min;
    case QR_XF_SECOND:
        return tm.tm_sec + (double)ns / 1e9;
    case QR_XF_DOW:
        return tm.tm_wday;
    default:
        return tm.tm_yday + 1;
    }
}
