/* cli.h - the quarry command-line tool: one function per subcommand, plus
 * small shared helpers for option values. Each returns the process exit
 * status (0 ok, 1 error, 2 usage, 3 ingest finished but skipped bad lines). */
#ifndef QR_CLI_H
#define QR_CLI_H

#include <stdint.h>

int cli_gen(int argc, char **argv);
int cli_ingest(int argc, char **argv);
int cli_cat(int argc, char **argv);
int cli_stats(int argc, char **argv);
int cli_optimize(int argc, char **argv);
int cli_verify(int argc, char **argv);
int cli_describe(int argc, char **argv);
int cli_search(int argc, char **argv);
int cli_sql(int argc, char **argv);
int cli_serve(int argc, char **argv);
int cli_passwd(int argc, char **argv);

/* Parse a non-negative integer option value ("1000000", "1_000_000",
 * with optional k/M/G suffix = 10^3/10^6/10^9 for counts); prints a usage
 * error and returns -1 when malformed. */
int cli_uint(const char *opt, const char *s, uint64_t max, uint64_t *out);
/* Print "quarry: <code>: <msg>" for a qr_err-style failure. */
void cli_fail(const char *code, const char *msg);

/* The hot latency of --repeat runs (lat[0] the first run, sorted here):
 * median, p90 and min, to stderr. */
void cli_print_latency(double *lat, uint64_t reps, int threads);
/* Keep large freed blocks in the heap (glibc): the commands that build
 * segments or run queries call it first. */
void cli_tune_malloc(void);

#endif
