/* sqlite_csv.h - an SQLite answer written as CSV the way render.c writes
 * Quarry's (tests' oracle side): no header, empty for NULL, "" for an empty
 * text, a field quoted when it holds , " CR or LF, doubles in the shortest
 * form that reads back the same. */
#ifndef QR_TEST_SQLITE_CSV_H
#define QR_TEST_SQLITE_CSV_H
#include "testutil.h"

#include <sqlite3.h>

#include "util/buf.h"

static inline void sqlite_csv_field(qr_buf *out, const char *p, size_t n)
{
    if (!n) {
        qr_buf_put(out, "\"\"", 2);
        return;
    }
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

/* db's answer to sql appended to out (the statement must succeed). */
static inline void sqlite_csv_of(sqlite3 *db, const char *sql, qr_buf *out)
{
    sqlite3_stmt *stm;
    if (sqlite3_prepare_v2(db, sql, -1, &stm, NULL) != SQLITE_OK)
        fail_msg("sqlite: %s: %s", sql, sqlite3_errmsg(db));
    int rc;
    while ((rc = sqlite3_step(stm)) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(stm); c++) {
            if (c)
                qr_buf_put_u8(out, ',');
            int ty = sqlite3_column_type(stm, c);
            if (ty == SQLITE_FLOAT) {
                char t[64];
                double d = sqlite3_column_double(stm, c);
                for (int p = 15; p <= 17; p++) {
                    snprintf(t, sizeof t, "%.*g", p, d);
                    if (strtod(t, NULL) == d)
                        break;
                }
                qr_buf_put(out, t, strlen(t));
            } else if (ty != SQLITE_NULL) {
                const char *t = (const char *)sqlite3_column_text(stm, c);
                sqlite_csv_field(out, t, strlen(t));
            }
        }
        qr_buf_put_u8(out, '\n');
    }
    assert_int_equal(rc, SQLITE_DONE);
    sqlite3_finalize(stm);
}
#endif
