/* cli_sql.c - `quarry sql`: run a SQL statement on a data directory and
 * print its result as an aligned table, CSV or NDJSON. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "exec/render.h"
#include "sql/sql.h"
#include "util/fsutil.h"

static const char *usage_text =
    "usage: quarry sql --data DIR [--format table|csv|ndjson] [--threads N]\n"
    "                  [--memory-limit BYTES] [--timeout MS] [--repeat N] 'SELECT ...'\n"
    "Runs one SQL statement (docs/SQL.md) and prints its result: an aligned table\n"
    "(default), CSV (header line; NULL as an empty field) or NDJSON (one object per\n"
    "row; NULL as null). --repeat N runs it N times in one session (tables kept\n"
    "open) and prints the hot latency to stderr.\n";

int cli_sql(int argc, char **argv)
{
    static const struct option opts[] = {
        {"data", required_argument, 0, 'd'},    {"format", required_argument, 0, 'f'},
        {"threads", required_argument, 0, 'j'}, {"memory-limit", required_argument, 0, 'M'},
        {"timeout", required_argument, 0, 'T'}, {"repeat", required_argument, 0, 'r'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    const char *data = NULL;
    int fmt = QR_FMT_TABLE, c;
    uint64_t threads = 0, mem = QR_QCTX_DEFAULT_LIMIT, timeout = 0, reps = 1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            data = optarg;
            break;
        case 'f':
            if (!strcmp(optarg, "table"))
                fmt = QR_FMT_TABLE;
            else if (!strcmp(optarg, "csv"))
                fmt = QR_FMT_CSV;
            else if (!strcmp(optarg, "ndjson") || !strcmp(optarg, "json"))
                fmt = QR_FMT_NDJSON;
            else {
                fprintf(stderr, "quarry sql: --format must be table, csv or ndjson\n");
                return 2;
            }
            break;
        case 'j':
            if (cli_uint("--threads", optarg, 16, &threads) != 0)
                return 2;
            break;
        case 'M':
            if (cli_uint("--memory-limit", optarg, UINT64_MAX, &mem) != 0)
                return 2;
            break;
        case 'T':
            if (cli_uint("--timeout", optarg, 86400000, &timeout) != 0)
                return 2;
            break;
        case 'r':
            if (cli_uint("--repeat", optarg, 1000000, &reps) != 0 || reps == 0)
                return 2;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        default:
            fputs(usage_text, stderr);
            return 2;
        }
    }
    if (!data || optind != argc - 1) {
        fputs(usage_text, stderr);
        return 2;
    }
    const char *sql = argv[optind];
    qr_err e;
    qr_err_clear(&e);
    qr_sql_session s;
    if (qr_sql_open(&s, data, (int)threads, &e) != 0) {
        qr_sql_close(&s);
        cli_fail(e.code, e.msg);
        return 1;
    }
    s.set.memory_limit = mem;
    s.set.statement_timeout_ms = timeout;
    double *lat = calloc(reps, sizeof *lat);
    int rc = lat ? 0 : -1;
    qr_buf out;
    qr_buf_init(&out);
    for (uint64_t r = 0; r < reps && rc == 0; r++) {
        qr_qctx ctx;
        qr_sql_ctx_init(&s, &ctx, NULL);
        qr_result res;
        qr_result_init(&res, &ctx);
        int64_t t0 = qr_qctx_now_ns();
        rc = qr_sql_exec(&s, sql, strlen(sql), &res, &e);
        lat[r] = (double)(qr_qctx_now_ns() - t0) / 1e6;
        if (rc == 0 && r == 0) {
            qr_result_render(&res, fmt, &out);
            rc = qr_write_all(STDOUT_FILENO, out.p, out.len, "stdout", &e);
        }
        qr_result_free(&res);
    }
    if (rc == 0 && reps > 1)
        cli_print_latency(lat, reps, s.set.threads);
    qr_buf_free(&out);
    free(lat);
    qr_sql_close(&s);
    if (rc != 0) {
        cli_fail(e.code[0] ? e.code : QR_E_NOMEM, e.msg[0] ? e.msg : "out of memory");
        return 1;
    }
    return 0;
}
