/* cli_ingest.c - `quarry ingest`: NDJSON from a file or stdin into a table.
 *
 * The process-wide choices are made here, not in the library: malloc tuning
 * for the pipeline, and (for the end-to-end tests) the fault injection of
 * QUARRY_FAULT=KIND:N[:ERRNO], which makes the Nth file operation of that
 * kind fail (util/fsutil.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ingest/ingest.h"
#include "util/fsutil.h"

static const char *usage_text =
    "usage: quarry ingest --data DIR --table T [options] [FILE|-]\n"
    "Loads NDJSON (one OpenTelemetry log record per line) into table T, creating it.\n"
    "  --strict             abort on the first bad line; nothing is committed\n"
    "  --segment-rows N     lines per segment (default 1000000)\n"
    "  --segment-mb N       input MiB per segment (default 128)\n"
    "  --max-line BYTES     longest accepted line (default 16777216)\n"
    "  --threads N          worker threads (default: one per CPU)\n"
    "  --zstd-level L       compression level 1..19 (default 3)\n"
    "  --quiet              no progress line and no summary\n"
    "Exit status: 0 all lines loaded, 3 loaded but bad lines were skipped, 1 error\n"
    "(nothing committed: a failed write, a full disk, out of memory, or with\n"
    "--strict a bad line), 2 usage.\n";

/* Segment builds allocate and free the same large arrays for every segment;
 * keeping them in the heap (not mmap/munmap each time) saves the page faults
 * of touching fresh memory again. The footprint is unchanged: freed memory
 * is reused. */
static void tune_malloc(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int cli_ingest(int argc, char **argv)
{
    static const struct option opts[] = {{"data", required_argument, 0, 'd'},
                                         {"table", required_argument, 0, 't'},
                                         {"strict", no_argument, 0, 's'},
                                         {"segment-rows", required_argument, 0, 'r'},
                                         {"segment-mb", required_argument, 0, 'm'},
                                         {"max-line", required_argument, 0, 'l'},
                                         {"threads", required_argument, 0, 'j'},
                                         {"zstd-level", required_argument, 0, 'z'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *data = NULL, *table = NULL;
    qr_ingest_opts o;
    qr_ingest_opts_default(&o);
    int quiet = 0, c;
    uint64_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            data = optarg;
            break;
        case 't':
            table = optarg;
            break;
        case 's':
            o.strict = 1;
            break;
        case 'r':
            if (cli_uint("--segment-rows", optarg, 16000000, &v) != 0 || v == 0)
                return 2;
            o.segment_rows = (uint32_t)v;
            break;
        case 'm':
            if (cli_uint("--segment-mb", optarg, 2048, &v) != 0 || v == 0)
                return 2;
            o.segment_bytes = v << 20;
            break;
        case 'l':
            if (cli_uint("--max-line", optarg, 1ull << 30, &v) != 0 || v == 0)
                return 2;
            o.max_line = v;
            break;
        case 'j':
            if (cli_uint("--threads", optarg, 64, &v) != 0 || v == 0)
                return 2;
            o.threads = (int)v;
            break;
        case 'z':
            if (cli_uint("--zstd-level", optarg, 19, &v) != 0 || v == 0)
                return 2;
            o.seg.zstd_level = (int)v;
            break;
        case 'q':
            quiet = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        default:
            return 2;
        }
    }
    if (!data || !table || argc - optind > 1) {
        fputs(usage_text, stderr);
        return 2;
    }
    const char *fault = getenv("QUARRY_FAULT");
    qr_err e;
    qr_err_clear(&e);
    if (fault && *fault && qr_fault_parse(fault, &e) != 0) {
        fprintf(stderr, "quarry: QUARRY_FAULT: %s\n", e.msg);
        return 2;
    }
    const char *file = optind < argc ? argv[optind] : "-";
    int fd = STDIN_FILENO;
    const char *name = "<stdin>";
    if (strcmp(file, "-") != 0) {
        fd = open(file, O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "quarry: cannot open %s: %s\n", file, strerror(errno));
            return 1;
        }
        name = file;
    }
    o.report = stderr;
    o.progress = !quiet && isatty(STDERR_FILENO);
    tune_malloc();
    qr_table *t = qr_table_open(data, table, QR_TABLE_WRITE | QR_TABLE_CREATE, &e);
    if (!t) {
        cli_fail(e.code, e.msg);
        if (fd != STDIN_FILENO)
            close(fd);
        return 1;
    }
    qr_ingest_stats st;
    int rc = qr_ingest(t, fd, name, &o, &st, &e);
    if (fd != STDIN_FILENO)
        close(fd);
    qr_table_close(t);
    if (rc != 0) {
        cli_fail(e.code, e.msg);
        fprintf(stderr, "quarry: ingest aborted; nothing was committed\n");
        return 1;
    }
    if (!quiet || st.bad_lines)
        fprintf(stderr,
                "ingested %llu rows from %llu lines (%llu bad, %llu blank) into %llu segments: "
                "%.1f MiB in, %.1f MiB on disk (%.3fx), %.2f s, %.0f rows/s\n",
                (unsigned long long)st.rows, (unsigned long long)st.lines,
                (unsigned long long)st.bad_lines, (unsigned long long)st.blank_lines,
                (unsigned long long)st.segments, st.input_bytes / 1048576.0,
                st.segment_bytes / 1048576.0,
                st.input_bytes ? (double)st.segment_bytes / (double)st.input_bytes : 0.0,
                st.seconds, st.seconds > 0 ? st.rows / st.seconds : 0.0);
    return st.bad_lines ? 3 : 0;
}
