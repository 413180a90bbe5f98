/* sqltest.h - helpers of the SQL statement tests: one session on a fresh
 * data directory, statements run with exact expectations on their tag,
 * their rows (as CSV) or their error (code and whole message). */
#ifndef QR_SQLTEST_H
#define QR_SQLTEST_H
#include "testutil.h"

#include "exec/render.h"
#include "sql/sql.h"

static char *st_dir;
static qr_sql_session st_s;

static inline void st_open(void)
{
    st_dir = tu_tmpdir();
    assert_non_null(st_dir);
    qr_err e;
    if (qr_sql_open(&st_s, st_dir, 2, &e) != 0)
        fail_msg("open: %s", e.msg);
}

static inline void st_close(void)
{
    qr_sql_close(&st_s);
    tu_rmdir(st_dir);
    st_dir = NULL;
}

/* Run sql on session s; the result rendered as CSV (header line included)
 * into a malloc'ed string, or NULL with e set. tag (may be NULL) gets the
 * tag. The statement's memory must all be released. */
static inline char *st_run_on(qr_sql_session *s, const char *sql, char *tag, qr_err *e)
{
    qr_qctx ctx;
    qr_sql_ctx_init(s, &ctx, NULL);
    qr_result r;
    qr_result_init(&r, &ctx);
    qr_err_clear(e);
    char *out = NULL;
    if (qr_sql_exec(s, sql, strlen(sql), &r, e) == 0) {
        qr_buf b;
        qr_buf_init(&b);
        if (r.ncols)
            qr_result_render(&r, QR_FMT_CSV, &b);
        out = malloc(b.len + 1);
        assert_non_null(out);
        if (b.len)
            memcpy(out, b.p, b.len);
        out[b.len] = 0;
        qr_buf_free(&b);
        if (tag)
            strcpy(tag, r.tag);
    } else if (!e->code[0] || !e->msg[0]) {
        fail_msg("%s: a failure without a code or message", sql);
    }
    qr_result_free(&r);
    if (ctx.used != 0)
        fail_msg("%s: %zu bytes still charged", sql, (size_t)ctx.used);
    return out;
}

/* sql must succeed with exactly this tag. */
static inline void st_ok(const char *sql, const char *tag)
{
    qr_err e;
    char t[64];
    char *out = st_run_on(&st_s, sql, t, &e);
    /* a long statement is cut: the error is what matters */
    if (!out)
        fail_msg("%.200s: %s %s", sql, e.code, e.msg);
    free(out);
    if (tag && strcmp(t, tag) != 0)
        fail_msg("%.200s: tag \"%s\", expected \"%s\"", sql, t, tag);
}

/* sql must give exactly these rows (CSV with the header line). */
static inline void st_rows(const char *sql, const char *csv)
{
    qr_err e;
    char *out = st_run_on(&st_s, sql, NULL, &e);
    if (!out)
        fail_msg("%s: %s %s", sql, e.code, e.msg);
    if (strcmp(out, csv) != 0)
        fail_msg("%s:\ngot:\n%s\nexpected:\n%s", sql, out, csv);
    free(out);
}

/* sql must fail with code and exactly msg. */
static inline void st_fails(const char *sql, const char *code, const char *msg)
{
    qr_err e;
    char *out = st_run_on(&st_s, sql, NULL, &e);
    if (out)
        fail_msg("%s: succeeded, expected %s %s", sql, code, msg ? msg : "*");
    if (strcmp(e.code, code) != 0 || (msg && strcmp(e.msg, msg) != 0))
        fail_msg("%s:\ngot %s %s\nexpected %s %s", sql, e.code, e.msg, code, msg ? msg : "*");
}

/* A file under the data directory's parent with `text`; returns its path
 * (static buffer per slot). */
static inline const char *st_file(int slot, const char *name, const char *text)
{
    static char paths[4][4200];
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", st_dir, name);
    FILE *f = fopen(paths[slot], "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return paths[slot];
}
#endif
