/* cli_gen.c - `quarry gen`: the deterministic corpus generators (otel,
 * http_logs, github_events; docs/DATASETS.md). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "gen/ghevents.h"
#include "gen/httplogs.h"
#include "gen/otelgen.h"

typedef int (*write_fn)(int fd, uint64_t rows, uint64_t seed, int threads, qr_err *e);

static const struct {
    const char *name;
    write_fn write;
} datasets[] = {
    {"otel", gen_write_ndjson},
    {"http_logs", httplogs_write_ndjson},
    {"github_events", ghevents_write_ndjson},
};
#define NDATASETS (sizeof datasets / sizeof datasets[0])

#define GEN_USAGE                                                                                  \
    "usage: quarry gen [--dataset otel|http_logs|github_events] --rows N [--seed S]\n"             \
    "                  [--threads 1|2]\n"

int cli_gen(int argc, char **argv)
{
    static const struct option opts[] = {
        {"dataset", required_argument, 0, 'd'}, {"rows", required_argument, 0, 'r'},
        {"seed", required_argument, 0, 's'},    {"threads", required_argument, 0, 't'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    uint64_t rows = 0, seed = 42, threads = 2;
    int have_rows = 0, c;
    size_t ds = 0; /* otel */
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            for (ds = 0; ds < NDATASETS && strcmp(optarg, datasets[ds].name); ds++)
                ;
            if (ds == NDATASETS) {
                fprintf(stderr,
                        "quarry: --dataset: unknown dataset '%s' (valid: otel, http_logs, "
                        "github_events)\n" GEN_USAGE,
                        optarg);
                return 2;
            }
            break;
        case 'r':
            if (cli_uint("--rows", optarg, UINT64_MAX / 2, &rows) != 0)
                return 2;
            have_rows = 1;
            break;
        case 's':
            if (cli_uint("--seed", optarg, UINT64_MAX, &seed) != 0)
                return 2;
            break;
        case 't':
            if (cli_uint("--threads", optarg, 2, &threads) != 0 || threads == 0)
                return 2;
            break;
        case 'h':
            fputs(GEN_USAGE
                  "Writes N generated records as NDJSON to stdout, one object per line; the same\n"
                  "seed gives the same bytes whatever the thread count (default seed 42).\n"
                  "Datasets (fields and shares in docs/DATASETS.md):\n"
                  "  otel           OpenTelemetry log records, 15 keys (the default)\n"
                  "  http_logs      web server access logs like Rally's http_logs track:\n"
                  "                 @timestamp, clientip, request, status, size\n"
                  "  github_events  nested GitHub Archive events (PushEvent, IssuesEvent, ...)\n",
                  stdout);
            return 0;
        default:
            return 2;
        }
    }
    if (!have_rows || optind != argc) {
        fputs(GEN_USAGE, stderr);
        return 2;
    }
    qr_err e;
    qr_err_clear(&e);
    if (datasets[ds].write(STDOUT_FILENO, rows, seed, (int)threads, &e) != 0) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    return 0;
}
