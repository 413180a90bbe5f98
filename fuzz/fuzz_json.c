/* fuzz_json.c - libFuzzer target for util/json.
 *
 * Walks the input as one JSON document through the pull API (objects, arrays,
 * strings, numbers, literals; some subtrees by qj_skip) and checks that
 * qj_skip alone reaches the same verdict (same error, same offset). Every key
 * and string is also decoded by a plain byte-at-a-time reference here (same
 * verdict, same bytes) and must come back byte-identical from
 * qj_write_string and a re-parse; integers must print back as their text; the
 * raw input, written as a string, must round-trip exactly when it is valid
 * UTF-8. Aborts on any mismatch.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static __attribute__((noreturn)) void die(const char *what)
{
    fprintf(stderr, "fuzz_json: %s\n", what);
    abort();
}
#define check(ok, what)                                                                        \
    do {                                                                                       \
        if (!(ok))                                                                             \
            die(what);                                                                         \
    } while (0)

/* Writes s canonically, re-parses it from an exact-size copy. Returns the
 * re-parse status; on success it must give s back and the same text again. */
static int round_trip(const char *s, size_t n, qr_arena *a, qr_json *j)
{
    qr_buf b;
    qr_buf_init(&b);
    qj_write_string(&b, s, n);
    check(!b.oom && b.p && b.len >= n + 2, "writer output too short");
    for (size_t i = 0; i < b.len; i++)
        check(b.p[i] >= 0x20, "writer left a raw control byte");
    char *copy = malloc(b.len);
    check(copy != NULL, "malloc");
    memcpy(copy, b.p, b.len);
    qr_slice out;
    qj_init(j, copy, b.len);
    int rc = qj_string(j, &out, a) || qj_finish(j) ? -1 : 0;
    if (!rc) {
        check(out.n == n && !memcmp(out.p, s, n), "write + re-parse changed the bytes");
        qr_buf b2;
        qr_buf_init(&b2);
        qj_write_string(&b2, out.p, out.n);
        check(b2.len == b.len && !memcmp(b2.p, b.p, b.len), "writer is not canonical");
        qr_buf_free(&b2);
    }
    free(copy);
    qr_buf_free(&b);
    return rc;
}

static void decoded(const char *s, size_t n, qr_arena *a)
{
    qr_json j;
    check(round_trip(s, n, a, &j) == 0, "a decoded string does not re-parse");
}

static int has_frac_or_exp(qr_slice raw)
{
    for (size_t i = 0; i < raw.n; i++)
        if (raw.p[i] == '.' || raw.p[i] == 'e' || raw.p[i] == 'E')
            return 1;
    return 0;
}

/* qj_int64 against qj_number on the same bytes; leaves j as qj_number left it. */
static int number(qr_json *j)
{
    qr_json num = *j;
    qr_slice raw;
    int64_t v;
    int rn = qj_number(&num, &raw);
    if (!qj_int64(j, &v)) {
        check(rn == 0 && num.p == j->p, "qj_int64 accepted what qj_number did not");
        char t[32];
        int len = snprintf(t, sizeof t, "%" PRId64, v);
        int same = raw.n == (size_t)len && !memcmp(raw.p, t, raw.n);
        int minus_zero = v == 0 && raw.n == 2 && !memcmp(raw.p, "-0", 2);
        check(same || minus_zero, "qj_int64 value does not print as its text");
    } else if (!rn) {
        check(!strcmp(j->err_why, has_frac_or_exp(raw) ? "expected an integer"
                                                       : "integer out of range"),
              "qj_int64 rejected a number for the wrong reason");
        check(j->err_off == (size_t)(raw.p - j->s), "qj_int64 error not at the number");
    }
    *j = num;
    return rn;
}

/* Is [s, s+n) valid UTF-8? (an independent, plain decoder) */
static int valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i], need, min, u;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc0 && c < 0xe0)
            need = 1, min = 0x80, u = c & 0x1f;
        else if (c >= 0xe0 && c < 0xf0)
            need = 2, min = 0x800, u = c & 0x0f;
        else if (c >= 0xf0 && c < 0xf8)
            need = 3, min = 0x10000, u = c & 0x07;
        else
            return 0;
        if (n - i <= need)
            return 0;
        for (unsigned k = 1; k <= need; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
            u = u << 6 | (s[i + k] & 0x3f);
        }
        if (u < min || u > 0x10ffff || (u >= 0xd800 && u <= 0xdfff))
            return 0;
        i += need + 1;
    }
    return 1;
}

static int ref_hex4(const unsigned char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = p[i], d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* The reference: decodes the string whose opening quote is at q, one byte at
 * a time, into out (room for end - q bytes). Returns the length of its raw
 * text through the closing quote, or 0 when it is not a valid string. */
static size_t ref_string(const char *qc, const char *endc, char *out, size_t *on)
{
    const unsigned char *q = (const unsigned char *)qc, *end = (const unsigned char *)endc;
    const unsigned char *p = q + 1;
    size_t o = 0;
    while (p < end) {
        unsigned c = *p;
        if (c == '"') {
            *on = o;
            return valid_utf8((const unsigned char *)out, o) ? (size_t)(p + 1 - q) : 0;
        }
        if (c < 0x20)
            return 0;
        if (c != '\\') {
            out[o++] = (char)c;
            p++;
            continue;
        }
        if (end - p < 2)
            return 0;
        if (p[1] != 'u') {
            static const char pairs[] = "\"\"\\\\//b\bf\fn\nr\rt\t"; /* escape, value */
            const char *e = p[1] ? strchr(pairs, p[1]) : NULL;
            if (!e || (e - pairs) % 2)
                return 0;
            out[o++] = e[1];
            p += 2;
            continue;
        }
        if (end - p < 6)
            return 0;
        int u = ref_hex4(p + 2);
        if (u < 0 || (u >= 0xdc00 && u <= 0xdfff))
            return 0;
        p += 6;
        if (u >= 0xd800 && u <= 0xdbff) {
            if (end - p < 6 || p[0] != '\\' || p[1] != 'u')
                return 0;
            int lo = ref_hex4(p + 2);
            if (lo < 0xdc00 || lo > 0xdfff)
                return 0;
            u = 0x10000 + (u - 0xd800) * 0x400 + (lo - 0xdc00);
            p += 6;
        }
        if (u < 0x80) {
            out[o++] = (char)u;
        } else if (u < 0x800) {
            out[o++] = (char)(0xc0 | u >> 6);
            out[o++] = (char)(0x80 | (u & 0x3f));
        } else if (u < 0x10000) {
            out[o++] = (char)(0xe0 | u >> 12);
            out[o++] = (char)(0x80 | (u >> 6 & 0x3f));
            out[o++] = (char)(0x80 | (u & 0x3f));
        } else {
            out[o++] = (char)(0xf0 | u >> 18);
            out[o++] = (char)(0x80 | (u >> 12 & 0x3f));
            out[o++] = (char)(0x80 | (u >> 6 & 0x3f));
            out[o++] = (char)(0x80 | (u & 0x3f));
        }
    }
    return 0; /* unterminated */
}

/* Compares what the parser made of the string at q (rc, *s, error) with the
 * reference. */
static void compare_with_ref(const qr_json *j, const char *q, int rc, const qr_slice *s)
{
    char *ref = malloc((size_t)(j->end - q));
    check(ref != NULL, "malloc");
    size_t rn = 0, rl = ref_string(q, j->end, ref, &rn);
    if (!rc) {
        check(rl != 0, "parser accepted a string the reference rejects");
        check(s->n == rn && !memcmp(s->p, ref, rn), "parser and reference decode differently");
    } else if (rl) {
        size_t off = (size_t)(q - j->s);
        /* an error inside a valid string's text is wrong (at its quote it
         * is about what came before: "expected ',' or '}'") */
        check(j->err_off <= off || j->err_off >= off + rl, "parser rejected a valid string");
    }
    free(ref);
}

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int walk(qr_json *j, qr_arena *a)
{
    qr_slice s;
    int v, r;
    qj_type t = qj_peek(j);
    size_t at = (size_t)(j->p - j->s);
    if ((t == QJ_OBJECT || t == QJ_ARRAY) && at % 7 == 3)
        return qj_skip(j); /* let some subtrees go through qj_skip */
    switch (t) {
    case QJ_STRING:
        r = qj_string(j, &s, a);
        compare_with_ref(j, j->s + at, r, &s);
        if (r)
            return -1;
        if (s.p >= j->s && s.p < j->end) /* zero-copy: exactly the raw body */
            check(s.p == j->s + at + 1 && s.p + s.n + 1 == j->p, "zero-copy slice misplaced");
        decoded(s.p, s.n, a);
        return 0;
    case QJ_NUMBER: return number(j);
    case QJ_NULL: return qj_null(j);
    case QJ_TRUE:
    case QJ_FALSE:
        if (qj_bool(j, &v))
            return -1;
        check(v == (t == QJ_TRUE), "qj_bool disagrees with qj_peek");
        return 0;
    case QJ_OBJECT:
        if (qj_object_begin(j))
            return -1;
        for (;;) {
            const char *kq = j->p; /* where the key's quote should be */
            while (kq < j->end && is_ws(*kq))
                kq++;
            if (kq < j->end && *kq == ',')
                kq++;
            while (kq < j->end && is_ws(*kq))
                kq++;
            r = qj_object_next(j, &s, a);
            if (kq < j->end && *kq == '"' && r != 0)
                compare_with_ref(j, kq, r < 0, &s);
            if (r != 1)
                break;
            decoded(s.p, s.n, a);
            if (walk(j, a))
                return -1;
        }
        return r;
    case QJ_ARRAY:
        if (qj_array_begin(j))
            return -1;
        while ((r = qj_array_next(j)) == 1)
            if (walk(j, a))
                return -1;
        return r;
    case QJ_END: /* an empty document */
    case QJ_ERROR: return -1;
    }
    return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    qr_arena a;
    qr_arena_init(&a, 4096, 0);

    qr_json w, k;
    qj_init(&w, s, size);
    int empty = qj_peek(&w) == QJ_END;
    int rw = walk(&w, &a) || qj_finish(&w) ? -1 : 0;
    qj_init(&k, s, size);
    int rk = qj_skip(&k) || qj_finish(&k) ? -1 : 0;
    if (empty) {
        check(rw && rk && !strcmp(k.err_why, "unexpected end of input"), "empty document");
    } else {
        check(rw == rk, "walker and qj_skip disagree on validity");
        if (rw) {
            check(w.err_why && k.err_why, "an error without a reason");
            check(!strcmp(w.err_why, k.err_why) && w.err_off == k.err_off,
                  "walker and qj_skip disagree on the error");
            check(w.err_off <= size, "error offset past the input");
        }
    }

    /* the raw input as a string: round-trips iff it is valid UTF-8 */
    qr_json r;
    int rr = round_trip(s, size, &a, &r);
    check((rr == 0) == valid_utf8(data, size), "UTF-8 validation disagrees with a plain decoder");
    if (rr)
        check(!strncmp(r.err_why, "invalid UTF-8 in string", 23), "written string rejected");

    qr_arena_free(&a);
    return 0;
}
