/* cli_gen.c - `quarry gen`: the deterministic OpenTelemetry log generator. */
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/cli.h"
#include "gen/otelgen.h"

int cli_gen(int argc, char **argv)
{
    static const struct option opts[] = {{"rows", required_argument, 0, 'r'},
                                         {"seed", required_argument, 0, 's'},
                                         {"threads", required_argument, 0, 't'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    uint64_t rows = 0, seed = 42, threads = 2;
    int have_rows = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
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
            puts("usage: quarry gen --rows N [--seed S] [--threads 1|2]\n"
                 "Writes N OpenTelemetry log records as NDJSON to stdout; the same seed gives\n"
                 "the same bytes (default seed 42).");
            return 0;
        default:
            return 2;
        }
    }
    if (!have_rows || optind != argc) {
        fputs("usage: quarry gen --rows N [--seed S] [--threads 1|2]\n", stderr);
        return 2;
    }
    qr_err e;
    qr_err_clear(&e);
    if (gen_write_ndjson(STDOUT_FILENO, rows, seed, (int)threads, &e) != 0) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    return 0;
}
