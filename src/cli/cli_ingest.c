/* cli_ingest.c - `quarry ingest`: NDJSON from a file or stdin into a table.
 *
 * The process-wide choices are made here, not in the library: malloc tuning
 * for the pipeline, and (for the end-to-end tests) the fault injection of
 * QUARRY_FAULT=KIND:N[:ERRNO], which makes the Nth file operation of that
 * kind fail (util/fsutil.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "index/catalog.h"
#include "ingest/infer.h"
#include "ingest/ingest.h"
#include "util/fsutil.h"

static const char *usage_text =
    "usage: quarry ingest --data DIR --table T [options] [FILE|-]\n"
    "Loads NDJSON (one JSON object per line) into table T. A table that does not exist\n"
    "is created: from --schema FILE, else inferred from the first lines (rows with the\n"
    "15 OpenTelemetry keys get the OpenTelemetry table; docs/INFERENCE.md).\n"
    "  --schema FILE        the table's definition (JSON, as `quarry describe` prints;\n"
    "                       a name in it is ignored): creates T, or must equal T's\n"
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

/* The first lines of the input, to infer a table from: up to SAMPLE_BYTES
 * or SAMPLE_LINES lines. They are ingested first (qr_ingest_opts.prefix). */
#define SAMPLE_BYTES (4u << 20)
#define SAMPLE_LINES 10000u

static int read_sample(int fd, const char *name, char **out, size_t *len, qr_err *e)
{
    char *b = malloc(SAMPLE_BYTES);
    size_t n = 0, lines = 0;
    if (!b)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    while (n < SAMPLE_BYTES && lines < SAMPLE_LINES) {
        ssize_t r = read(fd, b + n, SAMPLE_BYTES - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(b);
            return qr_errf(e, QR_E_IO, "read %s: %s", name, strerror(errno));
        }
        if (r == 0)
            break;
        for (ssize_t i = 0; i < r; i++)
            lines += b[n + (size_t)i] == '\n';
        n += (size_t)r;
    }
    *out = b;
    *len = n;
    return 0;
}

/* Undo a table this run created when the run commits nothing: its catalog
 * entry and its (empty) directory. */
static void forget_table(const char *data, const char *table)
{
    qr_err e;
    char path[PATH_MAX];
    if (qr_catalog_drop_table(data, table, &e) != 0)
        fprintf(stderr, "quarry: could not remove the new table %s: %s\n", table, e.msg);
    snprintf(path, sizeof path, "%s/%s/LOCK", data, table);
    unlink(path);
    snprintf(path, sizeof path, "%s/%s", data, table);
    rmdir(path);
}

/* The table to load into: opened if the catalog has it (a --schema must
 * then be its definition), else created from the schema file or from what
 * the first lines look like. */
static qr_table *open_or_create(const char *data, const char *table, const char *schema, int fd,
                                const char *name, int quiet, char **sample, qr_ingest_opts *o,
                                int *made, qr_err *e)
{
    *made = 0;
    qr_tabdef *def = NULL;
    if (schema) {
        unsigned char *buf;
        size_t n;
        if (qr_read_file(schema, &buf, &n, e) != 0)
            return NULL;
        def = qr_tabdef_from_json((const char *)buf, n, schema, e);
        free(buf);
        if (!def)
            return NULL;
        free(def->name); /* the table is the one --table names (a file may
                          * come from `quarry describe` of another) */
        if (!(def->name = strdup(table))) {
            qr_tabdef_free(def);
            qr_errf(e, QR_E_NOMEM, "out of memory");
            return NULL;
        }
    }
    qr_table *t = qr_table_open(data, table, QR_TABLE_WRITE, e);
    if (t) {
        if (def && !qr_tabdef_equal(def, t->def)) {
            qr_errf(e, QR_E_DUPLICATE_TABLE,
                    "table %s exists with another definition than %s (see quarry describe)",
                    table, schema);
            qr_table_close(t);
            t = NULL;
        }
        qr_tabdef_free(def);
        return t;
    }
    if (strcmp(e->code, QR_E_UNDEFINED_TABLE) != 0) {
        qr_tabdef_free(def);
        return NULL;
    }
    const char *how = "from ";
    if (!def) {
        size_t n = 0;
        if (read_sample(fd, name, sample, &n, e) != 0)
            return NULL;
        o->prefix = *sample;
        o->prefix_len = n;
        if (!(def = qr_infer_schema(table, *sample, n, name, e)))
            return NULL;
        how = "inferred from the first lines of ";
    }
    int created;
    if (qr_catalog_create_table(data, def, &created, e) != 0) {
        qr_tabdef_free(def);
        return NULL;
    }
    *made = created;
    if (!quiet && created) {
        qr_tabdef *otel = schema ? NULL : qr_tabdef_otel(table);
        if (otel && qr_tabdef_equal(def, otel))
            fprintf(stderr, "created table %s: the OpenTelemetry table (%s has its 15 keys)\n",
                    table, name);
        else
            fprintf(stderr, "created table %s (%u columns, %u indexes) %s%s\n", table, def->ncols,
                    def->nixs, how, schema ? schema : name);
        qr_tabdef_free(otel);
    }
    qr_tabdef_free(def);
    return qr_table_open(data, table, QR_TABLE_WRITE | QR_TABLE_CREATE, e);
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
                                         {"schema", required_argument, 0, 'S'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *data = NULL, *table = NULL, *schema = NULL;
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
        case 'S':
            schema = optarg;
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
    cli_tune_malloc();
    char *sample = NULL;
    int made;
    qr_table *t = open_or_create(data, table, schema, fd, name, quiet, &sample, &o, &made, &e);
    if (!t) {
        cli_fail(e.code, e.msg);
        if (fd != STDIN_FILENO)
            close(fd);
        free(sample);
        if (made)
            forget_table(data, table);
        return 1;
    }
    qr_ingest_stats st;
    int rc = qr_ingest(t, fd, name, &o, &st, &e);
    if (fd != STDIN_FILENO)
        close(fd);
    free(sample);
    qr_table_close(t);
    if (rc != 0 && made)
        forget_table(data, table); /* nothing was committed: no table either */
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
