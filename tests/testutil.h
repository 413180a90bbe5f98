/* testutil.h - helpers shared by the unit tests: temporary directories,
 * building a batch from NDJSON lines, reading a segment back as NDJSON. */
#ifndef QR_TESTUTIL_H
#define QR_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "format/segment.h"
#include "ingest/ndjson.h"
#include "util/buf.h"

/* mkdtemp under $TMPDIR; caller frees and removes with tu_rmdir. */
static inline char *tu_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char *p = malloc(4096);
    snprintf(p, 4096, "%s/quarry-test-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(p)) {
        free(p);
        return NULL;
    }
    return p;
}

static inline void tu_rmdir(char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    free(dir);
}

/* Parse each line of `text` (NDJSON) into b; every line must be good. */
static inline void tu_fill_batch(qr_batch *b, const char *text)
{
    qr_ndjson nj;
    qr_ndjson_init(&nj);
    const char *p = text, *end = text + strlen(text);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        qr_err e;
        qr_err_clear(&e);
        int rc = qr_ndjson_parse(&nj, b, p, n, &e);
        if (rc < 0)
            fail_msg("line rejected: %s: %.*s", e.msg, (int)n, p);
        p += n + (nl ? 1 : 0);
    }
    qr_ndjson_free(&nj);
}

/* Read every row of a segment as NDJSON into out (appended). Returns 0 or
 * -1 with e set. */
static inline int tu_seg_json(const char *path, qr_buf *out, qr_err *e)
{
    qr_segment *s = qr_seg_open(path, e);
    if (!s)
        return -1;
    qr_colreader *rd[COL_COUNT] = {0};
    int rc = 0;
    for (int c = 0; c < COL_COUNT && rc == 0; c++)
        if (!(rd[c] = qr_colr_open(s, c, e)))
            rc = -1;
    for (uint32_t r = 0; r < s->rows && rc == 0; r++)
        rc = qr_row_json(rd, r, out, e);
    for (int c = 0; c < COL_COUNT; c++)
        qr_colr_close(rd[c]);
    qr_seg_close(s);
    return rc;
}

#endif
