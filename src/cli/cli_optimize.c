/* cli_optimize.c - quarry optimize: merge a table's segments offline (the
 * SQL statement VACUUM, sql/stmt_vacuum.c), printing the segments and
 * bytes before and after. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "index/table.h"
#include "sql/sql.h"

static const char optimize_usage[] =
    "usage: quarry optimize --data DIR --table T [--segment-rows N]\n"
    "Merges the table's segments into segments of up to N rows (default\n"
    "1048576; 1024 .. 16777216), each sorted by time with every index, in\n"
    "one atomic commit: what the SQL statement VACUUM (segment_rows N) T does\n"
    "(docs/SQL.md). Queries of other processes keep reading the old segments\n"
    "until it commits; writers of the table wait (55P03 in another process).\n"
    "Scores do not change (index-wide statistics are sums over the rows).\n"
    "Prints the segments and bytes per row before and after.\n";

/* "N segments, B bytes (x bytes/row)" of table name in data. */
static int describe(const char *data, const char *name, uint32_t *segs, uint64_t *bytes,
                    uint64_t *rows)
{
    qr_err e;
    qr_table *t = qr_table_open(data, name, QR_TABLE_READ, &e);
    if (!t) {
        cli_fail(e.code, e.msg);
        return -1;
    }
    *segs = t->man.nsegs;
    *bytes = *rows = 0;
    for (uint32_t i = 0; i < t->man.nsegs; i++) {
        *bytes += t->man.segs[i].file_bytes;
        *rows += t->man.segs[i].rows;
    }
    qr_table_close(t);
    return 0;
}

int cli_optimize(int argc, char **argv)
{
    static const struct option opts[] = {{"data", required_argument, 0, 'd'},
                                         {"table", required_argument, 0, 't'},
                                         {"segment-rows", required_argument, 0, 'r'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *data = NULL, *table = NULL;
    long long seg_rows = 1 << 20;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            data = optarg;
            break;
        case 't':
            table = optarg;
            break;
        case 'r': {
            uint64_t v;
            if (cli_uint("--segment-rows", optarg, 1 << 24, &v) != 0) /* it says why */
                return 2;
            if (v < 1024) {
                cli_fail(QR_E_ARGS, "--segment-rows takes a number from 1024 to 16777216");
                return 2;
            }
            seg_rows = (long long)v;
            break;
        }
        case 'h':
            fputs(optimize_usage, stdout);
            return 0;
        default:
            fputs(optimize_usage, stderr);
            return 2;
        }
    }
    if (!data || !table || optind != argc) {
        fputs(optimize_usage, stderr);
        return 2;
    }
    qr_err e;
    qr_err_clear(&e);
    qr_sql_db *db = qr_sql_db_open(data, 0, &e);
    if (db && qr_sql_db_recover(db, &e) != 0) { /* a crashed server's logged rows too */
        qr_sql_db_close(db);
        db = NULL;
    }
    if (!db) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    uint32_t s0, s1;
    uint64_t b0, b1, r0, r1;
    if (describe(data, table, &s0, &b0, &r0) != 0) {
        qr_sql_db_close(db);
        return 1;
    }
    qr_sql_session s;
    qr_sql_session_init(&s, db);
    /* the name as an identifier: double quotes, doubled inside */
    qr_buf sql;
    qr_buf_init(&sql);
    char head[64];
    snprintf(head, sizeof head, "VACUUM (segment_rows %lld) \"", seg_rows);
    qr_buf_put(&sql, head, strlen(head));
    for (const char *p = table; *p; p++) {
        if (*p == '"')
            qr_buf_put_u8(&sql, '"');
        qr_buf_put_u8(&sql, (unsigned char)*p);
    }
    qr_buf_put_u8(&sql, '"');
    qr_qctx ctx;
    qr_sql_ctx_init(&s, &ctx, NULL);
    qr_result res;
    qr_result_init(&res, &ctx);
    int rc = sql.oom ? qr_errf(&e, QR_E_NOMEM, "out of memory")
                     : qr_sql_exec(&s, (const char *)sql.p, sql.len, &res, &e);
    qr_result_free(&res);
    qr_buf_free(&sql);
    qr_sql_db_close(db);
    if (rc != 0) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    if (describe(data, table, &s1, &b1, &r1) != 0)
        return 1;
    printf("table %s: %llu rows; %u segments, %llu bytes (%.1f bytes/row) -> %u segments, %llu "
           "bytes (%.1f bytes/row)\n",
           table, (unsigned long long)r1, s0, (unsigned long long)b0, r0 ? (double)b0 / r0 : 0.0,
           s1, (unsigned long long)b1, r1 ? (double)b1 / r1 : 0.0);
    return 0;
}
