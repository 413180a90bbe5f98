/* cli_read.c - read-side commands: `quarry cat` (rows as NDJSON), `quarry
 * stats` (rows, segments, bytes per column and structure) and `quarry
 * verify` (every block's checksum and decoding, segments in parallel). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "format/segfmt.h"
#include "index/invindex.h"
#include "index/deletes.h"
#include "index/table.h"
#include "util/fsutil.h"
#include "util/pool.h"

typedef struct read_args {
    const char *data, *table;
    uint64_t limit, threads;
    int have_limit;
} read_args;

enum { READ_LIMIT = 1, READ_THREADS = 2 }; /* the options a command takes */

static void read_usage(FILE *f, const char *cmd, int allow)
{
    fprintf(f, "usage: quarry %s --data DIR --table T%s%s\n", cmd,
            allow & READ_LIMIT ? " [--limit N]" : "", allow & READ_THREADS ? " [--threads N]" : "");
}

static int parse_read_args(int argc, char **argv, const char *cmd, int allow, read_args *a)
{
    static const struct option opts[] = {
        {"data", required_argument, 0, 'd'},  {"table", required_argument, 0, 't'},
        {"limit", required_argument, 0, 'l'}, {"threads", required_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            a->data = optarg;
            break;
        case 't':
            a->table = optarg;
            break;
        case 'l':
            if (!(allow & READ_LIMIT) || cli_uint("--limit", optarg, UINT64_MAX, &a->limit) != 0)
                goto usage;
            a->have_limit = 1;
            break;
        case 'j':
            if (!(allow & READ_THREADS) ||
                cli_uint("--threads", optarg, QR_POOL_MAX_THREADS, &a->threads) != 0 ||
                a->threads == 0)
                goto usage;
            break;
        case 'h':
            read_usage(stdout, cmd, allow);
            return 1;
        default:
            goto usage;
        }
    }
    if (a->data && a->table && optind == argc)
        return 0;
usage:
    read_usage(stderr, cmd, allow);
    return -1;
}

static qr_segment *open_seg(qr_table *t, uint32_t i, qr_err *e)
{
    return qr_table_open_segment(t->dir, &t->man.segs[i], e);
}

int cli_cat(int argc, char **argv)
{
    read_args a;
    int pr = parse_read_args(argc, argv, "cat", READ_LIMIT, &a);
    if (pr)
        return pr > 0 ? 0 : 2;
    qr_err e;
    qr_err_clear(&e);
    qr_table *t = qr_table_open(a.data, a.table, QR_TABLE_READ, &e);
    if (!t) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    int rc = 0;
    uint64_t printed = 0;
    qr_buf out;
    qr_buf_init(&out);
    for (uint32_t i = 0; i < t->man.nsegs && rc == 0; i++) {
        if (a.have_limit && printed >= a.limit)
            break;
        qr_segment *s = open_seg(t, i, &e);
        if (!s) {
            rc = -1;
            break;
        }
        const qr_tabdef *d = t->def;
        qr_colreader **rd = calloc(d->ncols, sizeof *rd);
        if (!rd) {
            rc = qr_errf(&e, QR_E_NOMEM, "out of memory");
            qr_seg_close(s);
            break;
        }
        rc = qr_row_readers_open(s, d, rd, &e);
        for (uint32_t r = 0; r < s->rows && rc == 0; r++) {
            if (a.have_limit && printed >= a.limit)
                break;
            if (qr_seg_is_deleted(s, r))
                continue;
            if (qr_row_json(d, rd, r, &out, &e) != 0) {
                rc = -1;
                break;
            }
            printed++;
            if (out.len >= (1u << 20)) {
                rc = qr_write_all(STDOUT_FILENO, out.p, out.len, "stdout", &e);
                qr_buf_clear(&out);
            }
        }
        qr_row_readers_close(d, rd);
        free(rd);
        qr_seg_close(s);
    }
    if (rc == 0 && out.len)
        rc = qr_write_all(STDOUT_FILENO, out.p, out.len, "stdout", &e);
    qr_buf_free(&out);
    qr_table_close(t);
    if (rc != 0) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    return 0;
}

static const char *enc_name(uint8_t enc)
{
    switch (enc) {
    case ENC_INT:
        return "int";
    case ENC_DICT:
        return "dict";
    case ENC_PAGED:
        return "paged";
    case ENC_HEXID:
        return "hexid";
    }
    return "?";
}

int cli_stats(int argc, char **argv)
{
    read_args a;
    int pr = parse_read_args(argc, argv, "stats", 0, &a);
    if (pr)
        return pr > 0 ? 0 : 2;
    qr_err e;
    qr_err_clear(&e);
    qr_table *t = qr_table_open(a.data, a.table, QR_TABLE_READ, &e);
    if (!t) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    /* per column: bytes by block kind; encodings seen */
    const qr_tabdef *d = t->def;
    uint32_t nc = d->ncols;
    uint64_t(*by_kind)[5] = calloc(nc, sizeof *by_kind);
    uint64_t *raw = calloc(nc, sizeof *raw), *nulls = calloc(nc, sizeof *nulls);
    unsigned *encs = calloc(nc, sizeof *encs);
    if (!by_kind || !raw || !nulls || !encs) {
        free(by_kind), free(raw), free(nulls), free(encs);
        qr_table_close(t);
        cli_fail(QR_E_NOMEM, "out of memory");
        return 1;
    }
    uint64_t rows = 0, deleted = 0, file_bytes = 0, footer = 0, header = 0;
    /* index sections: bytes by section id and block kind */
    uint64_t sec_bytes[QR_SEG_MAX_SECTIONS][QR_BLK_SECTION_MIN + 11];
    memset(sec_bytes, 0, sizeof sec_bytes);
    int rc = 0;
    for (uint32_t i = 0; i < t->man.nsegs; i++) {
        qr_segment *s = open_seg(t, i, &e);
        if (!s) {
            rc = -1;
            break;
        }
        rows += s->rows;
        deleted += s->ndeleted;
        file_bytes += s->len;
        footer += s->footer_bytes + s->dir_bytes; /* directories */
        header += QR_SEG_HEADER_LEN;
        for (uint32_t c = 0; c < nc; c++) {
            int sc = qr_seg_col(s, d->cols[c].name);
            if (sc < 0)
                continue;
            const qr_colmeta *cm = qr_seg_colmeta(s, sc, &e);
            if (!cm) {
                rc = -1;
                break;
            }
            raw[c] += cm->raw_bytes;
            nulls[c] += cm->null_count;
            encs[c] |= 1u << cm->encoding;
            for (uint32_t b = 0; b < cm->nblocks; b++)
                by_kind[c][cm->blocks[b].kind] += cm->blocks[b].length;
        }
        if (rc != 0) {
            qr_seg_close(s);
            break;
        }
        for (uint32_t k = 0; k < s->nsecs; k++)
            for (uint32_t b = 0; b < s->secs[k].nblocks; b++) {
                unsigned id = s->secs[k].id, kind = s->secs[k].blocks[b].kind;
                if (id < QR_SEG_MAX_SECTIONS && kind < QR_BLK_SECTION_MIN + 11)
                    sec_bytes[id][kind] += s->secs[k].blocks[b].length;
            }
        qr_seg_close(s);
    }
    if (rc != 0) {
        free(by_kind), free(raw), free(nulls), free(encs);
        qr_table_close(t);
        cli_fail(e.code, e.msg);
        return 1;
    }
    printf("table %s: %llu rows in %u segments, %llu bytes on disk (%.1f bytes/row)\n",
           a.table, (unsigned long long)rows, t->man.nsegs, (unsigned long long)file_bytes,
           rows ? (double)file_bytes / rows : 0.0);
    if (deleted)
        printf("of them %llu deleted (their bytes stay until a merge rewrites the segments)\n",
               (unsigned long long)deleted);
    printf("%-20s %-11s %12s %12s %10s %10s %10s %9s %9s\n", "column", "encoding", "data",
           "dict", "zdict", "keys", "nulls", "bytes/row", "raw/row");
    for (uint32_t c = 0; c < nc; c++) {
        char enc[32] = "";
        for (int k = 1; k <= ENC_HEXID; k++)
            if (encs[c] & (1u << k)) {
                if (enc[0])
                    strcat(enc, "+");
                strcat(enc, enc_name((uint8_t)k));
            }
        uint64_t tot = by_kind[c][BLK_DATA] + by_kind[c][BLK_DICT] + by_kind[c][BLK_ZDICT] +
                       by_kind[c][BLK_KEYS];
        printf("%-20s %-11s %12llu %12llu %10llu %10llu %10llu %9.2f %9.2f\n", d->cols[c].name,
               enc, (unsigned long long)by_kind[c][BLK_DATA],
               (unsigned long long)by_kind[c][BLK_DICT], (unsigned long long)by_kind[c][BLK_ZDICT],
               (unsigned long long)by_kind[c][BLK_KEYS], (unsigned long long)nulls[c],
               rows ? (double)tot / rows : 0.0, rows ? (double)raw[c] / rows : 0.0);
    }
    printf("%-20s %-11s %12llu %12s %10s %10s %10s %9.2f\n", "footers+headers", "",
           (unsigned long long)(footer + header), "", "", "", "",
           rows ? (double)(footer + header) / rows : 0.0);
    static const char *kinds[] = {"termindex", "termdict", "postings", "positions", "norms",
                                  "fieldstats"};
    printf("\n%-20s %12s %12s %12s %12s %10s %10s %10s %9s\n", "index", "termindex", "termdict",
           "postings", "positions", "norms", "bitmaps", "shapes", "bytes/row");
    for (unsigned id = 1; id < QR_SEG_MAX_SECTIONS; id++) {
        uint64_t tot = 0;
        for (unsigned k = QR_BLK_SECTION_MIN; k < QR_BLK_SECTION_MIN + 10; k++)
            tot += sec_bytes[id][k];
        if (!tot)
            continue;
        const qr_ixdef *x = qr_tabdef_index_by_id(d, (uint16_t)id);
        char label[300];
        snprintf(label, sizeof label, "%s%s%s", x ? d->cols[x->col].name : "?",
                 x && x->kind != QR_IX_FULLTEXT && x->kind != QR_IX_KEYWORD ? " " : "",
                 x && x->kind != QR_IX_FULLTEXT && x->kind != QR_IX_KEYWORD
                     ? qr_ixkind_name(x->kind)
                     : "");
        printf("%-20s", label);
        for (unsigned k = 0; k < 5; k++)
            printf(" %*llu", k == 4 ? 10 : 12,
                   (unsigned long long)sec_bytes[id][QR_BLK_SECTION_MIN + k]);
        printf(" %10llu", (unsigned long long)sec_bytes[id][QR_BLK_SECTION_MIN + 6]);
        /* shapes: a full-text index's rows' (SHAPES, SHAPEROWS,
         * SHAPEWORDS), a keyword index's values' (VALSHAPES) */
        printf(" %10llu", (unsigned long long)(sec_bytes[id][QR_BLK_SECTION_MIN + 7] +
                                               sec_bytes[id][QR_BLK_SECTION_MIN + 8] +
                                               sec_bytes[id][QR_BLK_SECTION_MIN + 9] +
                                               sec_bytes[id][QR_BLK_SECTION_MIN + 10]));
        printf(" %9.2f\n", rows ? (double)tot / rows : 0.0);
        (void)kinds;
    }
    free(by_kind), free(raw), free(nulls), free(encs);
    qr_table_close(t);
    return 0;
}

/* quarry verify: each segment on its own slot of a pool (verifying is
 * decoding, CPU-bound: a 10M-row table took 6 s in one thread); the
 * outcomes are kept by segment and reported in manifest order, so the
 * output does not depend on which thread finished first. */
typedef struct verify_out {
    int ok;
    uint64_t rows;
    qr_err err; /* when !ok */
} verify_out;

typedef struct verify_job {
    qr_table *t;
    verify_out *out;
    uint32_t next; /* the next segment to take (atomic) */
} verify_job;

static void verify_segment(qr_table *t, uint32_t i, verify_out *o)
{
    qr_err_clear(&o->err);
    qr_segment *s = open_seg(t, i, &o->err);
    int ok = s && qr_seg_verify(s, &o->err) == 0;
    /* and the indexes read as queries read them: structure, not only checksums */
    for (uint32_t k = 0; ok && k < s->nsecs; k++) {
        qr_invfield f;
        if (!(ok = qr_invfield_open(&f, s, s->secs[k].id, &o->err) == 0))
            break;
        ok = qr_invfield_verify(&f, &o->err) == 0;
        qr_invfield_close(&f);
    }
    o->ok = ok;
    o->rows = ok ? s->rows - s->ndeleted : 0;
    qr_seg_close(s);
}

static void verify_slot(void *ctx, int slot)
{
    (void)slot;
    verify_job *j = ctx;
    for (;;) {
        uint32_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->t->man.nsegs)
            return;
        verify_segment(j->t, i, &j->out[i]);
    }
}

int cli_verify(int argc, char **argv)
{
    read_args a;
    int pr = parse_read_args(argc, argv, "verify", READ_THREADS, &a);
    if (pr)
        return pr > 0 ? 0 : 2;
    qr_err e;
    qr_err_clear(&e);
    qr_table *t = qr_table_open(a.data, a.table, QR_TABLE_READ, &e);
    if (!t) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    uint32_t n = t->man.nsegs;
    verify_job j = {.t = t, .out = calloc(n ? n : 1, sizeof *j.out)};
    /* a thread per CPU unless told (the caller is one of them); without
     * a pool every segment is verified on the caller, as before */
    long threads = a.threads ? (long)a.threads : sysconf(_SC_NPROCESSORS_ONLN);
    if (threads > (long)n)
        threads = (long)n;
    if (!j.out) {
        cli_fail(QR_E_NOMEM, "out of memory");
        qr_table_close(t);
        return 1;
    }
    qr_pool *pool = NULL;
    if (threads > 1) {
        qr_err pe;
        pool = qr_pool_new((int)threads - 1, &pe);
    }
    qr_pool_run(pool, qr_pool_threads(pool) + 1, verify_slot, &j);
    qr_pool_free(pool);
    int bad = 0;
    uint64_t rows = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!j.out[i].ok) {
            cli_fail(j.out[i].err.code, j.out[i].err.msg);
            bad++;
        } else {
            rows += j.out[i].rows;
        }
    }
    free(j.out);
    printf("%u segments checked, %d bad, %llu rows readable\n", n, bad, (unsigned long long)rows);
    qr_table_close(t);
    return bad ? 1 : 0;
}

int cli_describe(int argc, char **argv)
{
    read_args a;
    int pr = parse_read_args(argc, argv, "describe", 0, &a);
    if (pr)
        return pr > 0 ? 0 : 2;
    qr_err e;
    qr_err_clear(&e);
    qr_table *t = qr_table_open(a.data, a.table, QR_TABLE_READ, &e);
    if (!t) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    qr_buf out;
    qr_buf_init(&out);
    qr_tabdef_to_json(t->def, &out);
    qr_buf_put_u8(&out, '\n');
    int rc = out.oom ? qr_errf(&e, QR_E_NOMEM, "out of memory")
                     : qr_write_all(STDOUT_FILENO, out.p, out.len, "stdout", &e);
    qr_buf_free(&out);
    qr_table_close(t);
    if (rc != 0) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    return 0;
}
