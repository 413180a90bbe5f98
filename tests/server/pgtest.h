/* pgtest.h - what the server tests share: a data directory with a table
 * `logs` of generated OpenTelemetry rows, frontend messages built by hand,
 * and a walk over the backend messages a server sent. */
#ifndef QR_TESTS_PGTEST_H
#define QR_TESTS_PGTEST_H
#include "testutil.h"

#include <fcntl.h>

#include "gen/otelgen.h"
#include "index/table.h"
#include "ingest/ingest.h"
#include "server/server.h"
#include "server/wire.h"

/* A data directory (tu_rmdir it) holding `rows` generated rows in table logs. */
static inline char *pt_datadir(uint64_t rows, uint64_t seed)
{
    char *dir = tu_tmpdir();
    assert_non_null(dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/rows.ndjson", dir);
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    assert_true(fd >= 0);
    qr_err e;
    if (gen_write_ndjson(fd, rows, seed, 2, &e) != 0)
        fail_msg("gen: %s", e.msg);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    tu_create_otel_table(dir, "logs");
    qr_table *t = qr_table_open(dir, "logs", QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    if (!t)
        fail_msg("open: %s", e.msg);
    qr_ingest_opts o;
    qr_ingest_opts_default(&o);
    o.segment_rows = (uint32_t)(rows / 3 + 1);
    o.threads = 2;
    qr_ingest_stats st;
    if (qr_ingest(t, fd, path, &o, &st, &e) != 0)
        fail_msg("ingest: %s", e.msg);
    assert_int_equal(st.rows, rows);
    qr_table_close(t);
    close(fd);
    unlink(path);
    return dir;
}

/* ---- frontend messages ---- */
static inline void pt_startup(qr_buf *b, const char *user, const char *db)
{
    size_t at = b->len;
    pgw_put_i32(b, 0);
    pgw_put_i32(b, 196608);
    pgw_put_str(b, "user");
    pgw_put_str(b, user);
    if (db) {
        pgw_put_str(b, "database");
        pgw_put_str(b, db);
    }
    qr_buf_put_u8(b, 0);
    uint32_t n = (uint32_t)(b->len - at);
    b->p[at] = (uint8_t)(n >> 24), b->p[at + 1] = (uint8_t)(n >> 16);
    b->p[at + 2] = (uint8_t)(n >> 8), b->p[at + 3] = (uint8_t)n;
}

static inline void pt_query(qr_buf *b, const char *sql)
{
    size_t at = pgw_msg_begin(b, 'Q');
    pgw_put_str(b, sql);
    pgw_msg_end(b, at);
}

static inline void pt_parse(qr_buf *b, const char *name, const char *sql, int n,
                            const uint32_t *oids)
{
    size_t at = pgw_msg_begin(b, 'P');
    pgw_put_str(b, name);
    pgw_put_str(b, sql);
    pgw_put_i16(b, (int16_t)n);
    for (int i = 0; i < n; i++)
        pgw_put_i32(b, (int32_t)oids[i]);
    pgw_msg_end(b, at);
}

/* Bind with text parameters (NULL = SQL NULL) and one result format. */
static inline void pt_bind(qr_buf *b, const char *portal, const char *stmt, int n,
                           const char *const *vals, int16_t rfmt)
{
    size_t at = pgw_msg_begin(b, 'B');
    pgw_put_str(b, portal);
    pgw_put_str(b, stmt);
    pgw_put_i16(b, 0);
    pgw_put_i16(b, (int16_t)n);
    for (int i = 0; i < n; i++) {
        if (!vals[i]) {
            pgw_put_i32(b, -1);
            continue;
        }
        pgw_put_i32(b, (int32_t)strlen(vals[i]));
        qr_buf_put(b, vals[i], strlen(vals[i]));
    }
    pgw_put_i16(b, 1);
    pgw_put_i16(b, rfmt);
    pgw_msg_end(b, at);
}

static inline void pt_execute(qr_buf *b, const char *portal, int32_t max)
{
    size_t at = pgw_msg_begin(b, 'E');
    pgw_put_str(b, portal);
    pgw_put_i32(b, max);
    pgw_msg_end(b, at);
}

static inline void pt_describe(qr_buf *b, char kind, const char *name)
{
    size_t at = pgw_msg_begin(b, 'D');
    qr_buf_put_u8(b, (uint8_t)kind);
    pgw_put_str(b, name);
    pgw_msg_end(b, at);
}

static inline void pt_empty(qr_buf *b, char type)
{
    size_t at = pgw_msg_begin(b, type);
    pgw_msg_end(b, at);
}

/* ---- backend messages ---- */
typedef struct pt_msg {
    char type;
    const uint8_t *body;
    uint32_t len;
} pt_msg;

/* The messages of out (a lone 'N' or 'S' byte, the SSLRequest answer, is
 * one message without a body); their types into types (NUL-terminated). */
static inline int pt_walk(const qr_buf *out, pt_msg *ms, int cap, char *types)
{
    size_t at = 0;
    int n = 0;
    while (at < out->len && n < cap) {
        if (out->len - at < 5) {
            ms[n].type = (char)out->p[at];
            ms[n].body = NULL;
            ms[n].len = 0;
            types[n++] = (char)out->p[at++];
            continue;
        }
        uint32_t len = pgw_load_be32(out->p + at + 1);
        assert_true(len >= 4 && at + 1 + len <= out->len);
        ms[n].type = (char)out->p[at];
        ms[n].body = out->p + at + 5;
        ms[n].len = len - 4;
        types[n++] = (char)out->p[at];
        at += 1 + len;
    }
    types[n] = 0;
    return n;
}

/* Field f ('C', 'M', 'P', 'S') of an ErrorResponse body, or "". */
static inline const char *pt_field(const pt_msg *m, char f)
{
    const uint8_t *p = m->body, *end = m->body + m->len;
    while (p < end && *p) {
        char k = (char)*p++;
        const char *v = (const char *)p;
        p += strlen(v) + 1;
        if (k == f)
            return v;
    }
    return "";
}

/* Column 0 of a DataRow as text (NUL-terminated into t). */
static inline const char *pt_cell0(const pt_msg *m, char *t, size_t cap)
{
    assert_int_equal(m->type, 'D');
    int32_t n = (int32_t)pgw_load_be32(m->body + 2);
    if (n < 0)
        return NULL;
    snprintf(t, cap, "%.*s", n, (const char *)m->body + 6);
    return t;
}
#endif
