/* cli_sql.c - `quarry sql`: run SQL statements on a data directory and
 * print each result as an aligned table, CSV or NDJSON.
 *
 * Statements come from -c / the positional argument, -f FILE, or stdin
 * (one after another as each ';' completes one, with a prompt on a
 * terminal); a text of several runs them in order (qr_sql_split). A
 * statement without rows prints its tag ("INSERT 0 3") in table format,
 * as psql does. The first error stops the run with status 1, as `psql -v
 * ON_ERROR_STOP=1` (--continue-on-error runs the rest, and an interactive
 * terminal session always goes on). COPY ... FROM STDIN reads the process's
 * stdin when the statements come from -c or -f; COPY ... TO STDOUT writes
 * its lines to stdout. */
#include <errno.h>
#include <fcntl.h>
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
    "                  [--memory-limit BYTES] [--timeout MS] [--repeat N] [--timing]\n"
    "                  [--continue-on-error] [-c 'SQL' | -f FILE | 'SQL']\n"
    "Runs SQL statements (docs/SQL.md), several separated by ';', and prints each\n"
    "result: an aligned table (default; a statement without rows prints its tag,\n"
    "e.g. INSERT 0 3), CSV (header line; NULL as an empty field) or NDJSON (one\n"
    "object per row; NULL as null). Without -c, -f or SQL, statements are read from\n"
    "stdin (a `quarry> ` prompt on a terminal). The first error stops the run with\n"
    "status 1 unless --continue-on-error (an interactive terminal goes on).\n"
    "--repeat N runs each statement N times in one session (tables kept open) and\n"
    "prints the hot latency to stderr. --timing prints each run's execution time to\n"
    "stderr as psql's \\timing does (`Time: 0.412 ms`, the statement executed, not\n"
    "printed). COPY t FROM STDIN reads stdin when the SQL comes from -c or -f;\n"
    "COPY ... TO STDOUT writes to stdout.\n";

typedef struct run {
    qr_sql_session s;
    int fmt;
    uint64_t reps;
    int timing;     /* --timing: a "Time: X ms" line per run on stderr */
    int stdin_free; /* stdin is not where the statements come from */
    int failed;
} run;

/* COPY ... FROM STDIN with the process's stdin as the data. */
static int copy_in(run *r, const char *sql, size_t n, qr_result *res, qr_err *e)
{
    qr_sql_copy_in *ci = qr_sql_copy_begin(&r->s, sql, n, e);
    if (!ci)
        return -1;
    char buf[1 << 16];
    for (;;) {
        ssize_t k = read(STDIN_FILENO, buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            qr_errf(e, QR_E_IO, "read stdin: %s", strerror(errno));
            qr_sql_copy_abort(ci);
            return -1;
        }
        if (k == 0)
            break;
        if (qr_sql_copy_feed(ci, buf, (size_t)k, e) != 0)
            return -1;
    }
    uint64_t rows;
    if (qr_sql_copy_end(ci, &rows, e) != 0)
        return -1;
    snprintf(res->tag, sizeof res->tag, "COPY %llu", (unsigned long long)rows);
    return 0;
}

/* COPY ... TO STDOUT: its lines to stdout, about 1 MiB at a time (no tag,
 * as psql prints none). */
static int copy_out(run *r, const char *sql, size_t n, qr_err *e)
{
    qr_qctx ctx;
    qr_sql_ctx_init(&r->s, &ctx, NULL);
    qr_sql_copy_out co;
    if (qr_sql_copy_out_begin(&r->s, sql, n, &ctx, &co, e) != 0)
        return -1;
    qr_buf b;
    qr_buf_init(&b);
    int rc = 0;
    for (int more = 1; more && rc == 0;) {
        more = qr_sql_copy_out_line(&co, &b);
        if (b.oom)
            rc = qr_errf(e, QR_E_NOMEM, "out of memory");
        else if (b.len >= (1u << 20) || (!more && b.len)) {
            rc = qr_write_all(STDOUT_FILENO, b.p, b.len, "stdout", e);
            qr_buf_clear(&b);
        }
    }
    qr_buf_free(&b);
    qr_sql_copy_out_free(&co);
    return rc;
}

/* Run one statement (reps times) and print its result; 0, or -1 after
 * printing the error. */
static int run_one(run *r, const char *sql, size_t n)
{
    qr_err e;
    qr_err_clear(&e);
    double *lat = calloc(r->reps, sizeof *lat);
    int rc = lat ? 0 : qr_errf(&e, QR_E_NOMEM, "out of memory");
    qr_buf out;
    qr_buf_init(&out);
    int copy = r->stdin_free && qr_sql_is_copy_from_stdin(sql, n);
    uint64_t reps = r->reps;
    if (rc == 0 && qr_sql_is_copy_to_stdout(sql, n)) {
        rc = copy_out(r, sql, n, &e);
        reps = 0; /* once; no latency line */
    }
    for (uint64_t k = 0; k < reps && rc == 0; k++) {
        qr_qctx ctx;
        qr_sql_ctx_init(&r->s, &ctx, NULL);
        qr_result res;
        qr_result_init(&res, &ctx);
        int64_t t0 = qr_qctx_now_ns();
        rc = copy ? copy_in(r, sql, n, &res, &e) : qr_sql_exec(&r->s, sql, n, &res, &e);
        lat[k] = (double)(qr_qctx_now_ns() - t0) / 1e6;
        if (rc == 0 && r->timing)
            fprintf(stderr, "Time: %.3f ms\n", lat[k]);
        if (rc == 0 && k == 0) {
            qr_buf_clear(&out);
            if (res.ncols)
                qr_result_render(&res, r->fmt, &out);
            else if (res.tag[0] && r->fmt == QR_FMT_TABLE) {
                qr_buf_put(&out, res.tag, strlen(res.tag));
                qr_buf_put_u8(&out, '\n');
            }
            rc = qr_write_all(STDOUT_FILENO, out.p, out.len, "stdout", &e);
        }
        qr_result_free(&res);
        copy = 0; /* stdin is read once */
    }
    if (rc == 0 && reps > 1)
        cli_print_latency(lat, reps, r->s.set.threads);
    qr_buf_free(&out);
    free(lat);
    if (rc != 0) {
        cli_fail(e.code[0] ? e.code : QR_E_NOMEM, e.msg[0] ? e.msg : "out of memory");
        r->failed = 1;
    }
    return rc;
}

/* Run the statements of text[0..n) that are complete (followed by ';'),
 * or all of them when `all`; returns the bytes consumed, or -1 when a
 * statement failed and the run stops. */
static long run_text(run *r, const char *text, size_t n, int all, int stop_on_error)
{
    qr_sql_span *sp;
    uint32_t ns;
    qr_err e;
    if (qr_sql_split(text, n, &sp, &ns, &e) != 0) {
        cli_fail(e.code, e.msg);
        r->failed = 1;
        return -1;
    }
    size_t used = 0;
    for (uint32_t i = 0; i < ns; i++) {
        size_t end = (size_t)sp[i].off + sp[i].len;
        int complete = end < n && text[end] == ';';
        if (!complete && !all)
            break;
        /* positions in errors count from the statement's first word, as psql
         * sends it */
        size_t off = sp[i].off, len = sp[i].len;
        while (len &&
               (text[off] == ' ' || text[off] == '\t' || text[off] == '\n' || text[off] == '\r'))
            off++, len--;
        if (run_one(r, text + off, len) != 0 && stop_on_error) {
            free(sp);
            return -1;
        }
        used = complete ? end + 1 : n;
    }
    free(sp);
    return all ? (long)n : (long)used;
}

/* Statements from stdin, each run as its ';' arrives. */
static int run_stdin(run *r, int stop_on_error)
{
    int tty = isatty(STDIN_FILENO);
    char *text = NULL, *line = NULL;
    size_t len = 0, cap = 0, lcap = 0;
    int rc = 0;
    for (;;) {
        if (tty) {
            int blank = 1;
            for (size_t i = 0; i < len && blank; i++)
                blank = text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r';
            fputs(blank ? "quarry> " : "quarry-> ", stdout);
            fflush(stdout);
        }
        ssize_t k = getline(&line, &lcap, stdin);
        if (k < 0)
            break;
        if (len + (size_t)k + 1 > cap) {
            size_t nc = (len + (size_t)k + 1) * 2;
            char *nt = realloc(text, nc);
            if (!nt) {
                cli_fail(QR_E_NOMEM, "out of memory reading stdin");
                rc = -1;
                break;
            }
            text = nt;
            cap = nc;
        }
        memcpy(text + len, line, (size_t)k);
        len += (size_t)k;
        if (!memchr(line, ';', (size_t)k))
            continue; /* no statement can have ended */
        long used = run_text(r, text, len, 0, stop_on_error && !tty);
        if (used < 0) {
            rc = -1;
            break;
        }
        memmove(text, text + used, len - (size_t)used);
        len -= (size_t)used;
    }
    if (rc == 0 && len && run_text(r, text, len, 1, stop_on_error && !tty) < 0)
        rc = -1;
    if (tty)
        fputc('\n', stdout);
    free(line);
    free(text);
    return rc;
}

/* The whole of file `path` ("-" = stdin), pipes included (qr_read_file
 * sizes a file by fstat). */
static int read_sql_file(const char *path, unsigned char **out, size_t *n, qr_err *e)
{
    int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    if (fd < 0)
        return qr_errf(e, QR_E_IO, "open %s: %s", path, strerror(errno));
    qr_buf b;
    qr_buf_init(&b);
    int rc = 0;
    for (;;) {
        unsigned char *p = qr_buf_reserve(&b, 1 << 16);
        if (!p) {
            rc = qr_errf(e, QR_E_NOMEM, "out of memory reading %s", path);
            break;
        }
        ssize_t k = read(fd, p, 1 << 16);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            rc = qr_errf(e, QR_E_IO, "read %s: %s", path, strerror(errno));
            break;
        }
        if (k == 0)
            break;
        b.len += (size_t)k;
    }
    if (fd != STDIN_FILENO)
        close(fd);
    if (rc != 0) {
        qr_buf_free(&b);
        return -1;
    }
    *out = b.p;
    *n = b.len;
    return 0;
}

int cli_sql(int argc, char **argv)
{
    static const struct option opts[] = {
        {"data", required_argument, 0, 'd'},    {"format", required_argument, 0, 'F'},
        {"threads", required_argument, 0, 'j'}, {"memory-limit", required_argument, 0, 'M'},
        {"timeout", required_argument, 0, 'T'}, {"repeat", required_argument, 0, 'r'},
        {"timing", no_argument, 0, 't'},        {"command", required_argument, 0, 'c'},
        {"file", required_argument, 0, 'f'},    {"continue-on-error", no_argument, 0, 'C'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    cli_tune_malloc();
    const char *data = NULL, *cmd = NULL, *file = NULL;
    int fmt = QR_FMT_TABLE, c, keep_going = 0, timing = 0;
    uint64_t threads = 0, mem = QR_QCTX_DEFAULT_LIMIT, timeout = 0, reps = 1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:f:", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            data = optarg;
            break;
        case 'F':
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
        case 't':
            timing = 1;
            break;
        case 'c':
            cmd = optarg;
            break;
        case 'f':
            file = optarg;
            break;
        case 'C':
            keep_going = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        default:
            fputs(usage_text, stderr);
            return 2;
        }
    }
    if (optind == argc - 1 && !cmd && !file)
        cmd = argv[optind++];
    if (!data || optind != argc || (cmd && file)) {
        fputs(usage_text, stderr);
        return 2;
    }
    qr_err e;
    qr_err_clear(&e);
    unsigned char *ftext = NULL;
    size_t flen = 0;
    if (file && read_sql_file(file, &ftext, &flen, &e) != 0) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    run r;
    memset(&r, 0, sizeof r);
    r.fmt = fmt;
    r.reps = reps;
    r.timing = timing;
    r.stdin_free = cmd || (file && strcmp(file, "-") != 0);
    if (qr_sql_open(&r.s, data, (int)threads, &e) != 0) {
        qr_sql_close(&r.s);
        free(ftext);
        cli_fail(e.code, e.msg);
        return 1;
    }
    r.s.set.memory_limit = mem;
    r.s.set.statement_timeout_ms = timeout;
    qr_sql_session_boot(&r.s); /* RESET returns to the flags' values */
    if (cmd)
        run_text(&r, cmd, strlen(cmd), 1, !keep_going);
    else if (file)
        run_text(&r, (const char *)ftext, flen, 1, !keep_going);
    else
        run_stdin(&r, !keep_going);
    free(ftext);
    qr_sql_close(&r.s);
    return r.failed ? 1 : 0;
}
