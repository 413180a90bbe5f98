/* main.c - entry point of the quarry binary: dispatches subcommands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
    fputs("usage: quarry <command> [options]\n"
          "\n"
          "commands:\n"
          "  gen     [--dataset D] --rows N [--seed S]   generate NDJSON: otel (OpenTelemetry logs),\n"
          "                                              http_logs, github_events\n"
          "  ingest  --data DIR --table T [FILE|-]       load NDJSON into a table (creating it)\n"
          "  describe --data DIR --table T               the table's definition as JSON\n"
          "  cat     --data DIR --table T [--limit N]    print rows back as NDJSON\n"
          "  stats   --data DIR --table T                rows, segments, bytes per column\n"
          "  verify  --data DIR --table T [--threads N]  check every block of every segment\n"
          "  optimize --data DIR --table T              merge its segments into large ones\n"
          "  search  --data DIR --table T [--count] 'QUERY'   full-text and keyword search\n"
          "  sql     --data DIR [--format table|csv|ndjson] 'SELECT ...'   SQL (docs/SQL.md)\n"
          "  serve   --data DIR [--listen HOST:PORT] [--auth trust|scram]  PostgreSQL protocol\n"
          "                                              server (docs/SERVER.md)\n"
          "  passwd  NAME < password                     a users-file line for serve --auth scram\n"
          "\n"
          "`quarry <command> --help` shows the options of a command.\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "gen"))
        return cli_gen(argc - 1, argv + 1);
    if (!strcmp(cmd, "ingest"))
        return cli_ingest(argc - 1, argv + 1);
    if (!strcmp(cmd, "cat"))
        return cli_cat(argc - 1, argv + 1);
    if (!strcmp(cmd, "stats"))
        return cli_stats(argc - 1, argv + 1);
    if (!strcmp(cmd, "verify"))
        return cli_verify(argc - 1, argv + 1);
    if (!strcmp(cmd, "describe"))
        return cli_describe(argc - 1, argv + 1);
    if (!strcmp(cmd, "search"))
        return cli_search(argc - 1, argv + 1);
    if (!strcmp(cmd, "sql"))
        return cli_sql(argc - 1, argv + 1);
    if (!strcmp(cmd, "optimize"))
        return cli_optimize(argc - 1, argv + 1);
    if (!strcmp(cmd, "serve"))
        return cli_serve(argc - 1, argv + 1);
    if (!strcmp(cmd, "passwd"))
        return cli_passwd(argc - 1, argv + 1);
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "quarry: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
