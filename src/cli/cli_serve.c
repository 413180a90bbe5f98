/* cli_serve.c - `quarry serve`: the PostgreSQL protocol server over a data
 * directory (docs/SERVER.md), stopped by SIGTERM or SIGINT with a graceful
 * shutdown; and `quarry passwd`: a users-file line for a password. */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "http/http.h"
#include "server/server.h"
#include "sql/sql.h"

static const char *usage_text =
    "usage: quarry serve --data DIR [--listen HOST:PORT] [--auth trust|scram]\n"
    "                    [--users FILE] [--max-connections N] [--threads N]\n"
    "                    [--port-file FILE] [--tls-cert FILE --tls-key FILE]\n"
    "                    [--idle-timeout SECONDS]\n"
    "                    [--http HOST:PORT [--http-port-file FILE] [--http-max-body BYTES]]\n"
    "                    [--refresh-ms MS] [--wal-sync on|off] [--max-pending-mib N]\n"
    "                    [--no-warm]\n"
    "Serves the data directory over the PostgreSQL protocol (psql, libpq, drivers).\n"
    "Default 127.0.0.1:5432 with trust; port 0 picks a free port (printed, and\n"
    "written to --port-file). A non-loopback address needs --auth scram --users FILE\n"
    "(lines of `quarry passwd NAME`). With a PEM certificate and key, clients that\n"
    "ask for TLS get it. --http adds the HTTP ingest listener (NDJSON, Elasticsearch\n"
    "_bulk, OTLP/HTTP logs; loopback unless --auth scram, which it then requires as\n"
    "HTTP Basic). Rows written are acknowledged once in the table's write-ahead\n"
    "log (fsync'ed unless --wal-sync off, one fsync shared by concurrent writers)\n"
    "and in a live segment, which queries read from then on; live segments are\n"
    "committed into a table segment after --refresh-ms (default 1000);\n"
    "--max-pending-mib (default 64) bounds the uncommitted rows per table before\n"
    "writers wait, then get 53000 (HTTP 429). Once listening, the server opens\n"
    "every table's segments and indexes in the background, so that first queries\n"
    "find them open (--no-warm: each on first use). SIGTERM: graceful shutdown\n"
    "(docs/SERVER.md).\n";

static pgw_server *running;

/* Warming the segment cache beside the first connections (qr_sql_db_warm),
 * stopped early by a shutdown. */
typedef struct warm_job {
    qr_sql_db *db;
    atomic_int stop;
} warm_job;

static void *warm_main(void *arg)
{
    warm_job *w = arg;
    pthread_setname_np(pthread_self(), "quarry-warm");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint32_t segs;
    uint64_t fields;
    qr_err e;
    int rc = qr_sql_db_warm(w->db, &w->stop, &segs, &fields, &e);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (rc != 0)
        fprintf(stderr, "quarry serve: warming stopped after %u segments: %s (%s)\n", segs, e.msg,
                e.code);
    else
        printf("quarry serve: opened %u segments and %llu index fields in %.0f ms%s\n", segs,
               (unsigned long long)fields, ms, atomic_load(&w->stop) ? " (stopped)" : "");
    fflush(stdout);
    return NULL;
}

static void on_signal(int sig)
{
    (void)sig;
    if (running)
        pgw_server_stop(running);
}

/* HOST:PORT, [V6]:PORT, HOST or :PORT into host (cap bytes) and *port. */
static int parse_listen(const char *s, char *host, size_t cap, int *port)
{
    const char *colon = NULL;
    if (s[0] == '[') {
        const char *rb = strchr(s, ']');
        if (!rb || (size_t)(rb - s - 1) >= cap)
            return -1;
        memcpy(host, s + 1, (size_t)(rb - s - 1));
        host[rb - s - 1] = 0;
        colon = rb[1] == ':' ? rb + 1 : NULL;
        if (!colon && rb[1])
            return -1;
    } else {
        colon = strrchr(s, ':');
        size_t hl = colon ? (size_t)(colon - s) : strlen(s);
        if (hl >= cap)
            return -1;
        memcpy(host, s, hl);
        host[hl] = 0;
        if (!hl)
            snprintf(host, cap, "127.0.0.1");
    }
    if (colon) {
        uint64_t p;
        if (cli_uint("--listen port", colon + 1, 65535, &p) != 0)
            return -1;
        *port = (int)p;
    }
    return 0;
}

int cli_serve(int argc, char **argv)
{
    static const struct option opts[] = {{"data", required_argument, 0, 'd'},
                                         {"listen", required_argument, 0, 'l'},
                                         {"auth", required_argument, 0, 'a'},
                                         {"users", required_argument, 0, 'u'},
                                         {"max-connections", required_argument, 0, 'm'},
                                         {"threads", required_argument, 0, 'j'},
                                         {"port-file", required_argument, 0, 'p'},
                                         {"help", no_argument, 0, 'h'},
                                         {"tls-cert", required_argument, 0, 'C'},
                                         {"tls-key", required_argument, 0, 'K'},
                                         {"idle-timeout", required_argument, 0, 'I'},
                                         {"http", required_argument, 0, 'H'},
                                         {"http-port-file", required_argument, 0, 'P'},
                                         {"http-max-body", required_argument, 0, 'B'},
                                         {"refresh-ms", required_argument, 0, 'R'},
                                         {"wal-sync", required_argument, 0, 'W'},
                                         {"max-pending-mib", required_argument, 0, 'M'},
                                         {"no-warm", no_argument, 0, 'N'},
                                         {0, 0, 0, 0}};
    cli_tune_malloc();
    pgw_config cfg;
    pgw_config_default(&cfg);
    const char *data = NULL, *users_path = NULL, *port_file = NULL, *http_port_file = NULL;
    char host[256] = "127.0.0.1", http_host[256] = "127.0.0.1";
    int with_http = 0, warm = 1;
    qh_config hcfg;
    qh_config_default(&hcfg);
    qr_live_opts lo;
    qr_live_opts_default(&lo);
    lo.log_merges = 1;
    uint64_t v, threads = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd':
            data = optarg;
            break;
        case 'l':
            if (parse_listen(optarg, host, sizeof host, &cfg.port) != 0) {
                fprintf(stderr, "quarry serve: --listen takes HOST:PORT, not '%s'\n", optarg);
                return 2;
            }
            break;
        case 'a':
            if (!strcmp(optarg, "trust"))
                cfg.auth = PGW_AUTH_TRUST;
            else if (!strcmp(optarg, "scram") || !strcmp(optarg, "scram-sha-256"))
                cfg.auth = PGW_AUTH_SCRAM;
            else {
                fprintf(stderr, "quarry serve: --auth must be trust or scram\n");
                return 2;
            }
            break;
        case 'u':
            users_path = optarg;
            break;
        case 'm':
            if (cli_uint("--max-connections", optarg, 10000, &v) != 0 || v == 0)
                return 2;
            cfg.max_conn = (int)v;
            break;
        case 'j':
            if (cli_uint("--threads", optarg, 16, &threads) != 0)
                return 2;
            break;
        case 'p':
            port_file = optarg;
            break;
        case 'I':
            if (cli_uint("--idle-timeout", optarg, 86400, &v) != 0)
                return 2;
            cfg.idle_timeout_ms = (int)v * 1000;
            break;
        case 'H':
            if (parse_listen(optarg, http_host, sizeof http_host, &hcfg.port) != 0) {
                fprintf(stderr, "quarry serve: --http takes HOST:PORT, not '%s'\n", optarg);
                return 2;
            }
            with_http = 1;
            break;
        case 'P':
            http_port_file = optarg;
            break;
        case 'B':
            if (cli_uint("--http-max-body", optarg, 1ull << 40, &v) != 0 || v == 0)
                return 2;
            hcfg.max_body = v;
            break;
        case 'R':
            if (cli_uint("--refresh-ms", optarg, 60000, &v) != 0 || v == 0)
                return 2;
            lo.refresh_ms = (uint32_t)v;
            break;
        case 'W':
            if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
                fprintf(stderr, "quarry serve: --wal-sync must be on or off\n");
                return 2;
            }
            lo.wal_sync = !strcmp(optarg, "on");
            break;
        case 'M':
            if (cli_uint("--max-pending-mib", optarg, 1u << 20, &v) != 0 || v == 0)
                return 2;
            lo.max_pending = (size_t)v << 20;
            break;
        case 'N':
            warm = 0;
            break;
        case 'C':
            cfg.tls_cert = optarg;
            break;
        case 'K':
            cfg.tls_key = optarg;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        default:
            fputs(usage_text, stderr);
            return 2;
        }
    }
    if (!data || optind != argc) {
        fputs(usage_text, stderr);
        return 2;
    }
    cfg.host = host;
    qr_err e;
    qr_err_clear(&e);
    pgw_users users = {0};
    if (users_path && pgw_users_load(users_path, &users, &e) != 0) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    cfg.users = &users;
    hcfg.host = http_host;
    hcfg.auth = cfg.auth;
    hcfg.users = &users;
    if (pgw_config_check(&cfg, &e) != 0 || (with_http && qh_config_check(&hcfg, &e) != 0)) {
        pgw_users_free(&users);
        cli_fail(e.code, e.msg);
        return 1;
    }
    qr_sql_db *db = qr_sql_db_open(data, (int)threads, &e);
    pgw_server *s = db ? pgw_server_new(&cfg, db, &e) : NULL;
    qh_server *hs = s && with_http ? qh_server_new(&hcfg, db, &e) : NULL;
    int rc = 1;
    if (s && with_http && !hs) {
        pgw_server_free(s);
        s = NULL;
    }
    /* the logs of a crashed run into segments (after the HTTP idempotency
     * store has judged its records by the manifests as they were), then
     * new rows go through the logs */
    if (s && (qr_sql_db_recover(db, &e) != 0 || qr_sql_db_live(db, &lo, &e) != 0)) {
        qh_server_free(hs);
        hs = NULL;
        pgw_server_free(s);
        s = NULL;
    }
    if (s) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        running = s;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        printf("quarry serve: listening on %s:%d (auth %s, %s, at most %d connections)\n", host,
               pgw_server_port(s), cfg.auth == PGW_AUTH_SCRAM ? "scram-sha-256" : "trust",
               cfg.tls_cert ? "TLS offered" : "no TLS", cfg.max_conn);
        fflush(stdout);
        if (hs) {
            printf("quarry serve: HTTP ingest on %s:%d (max body %llu bytes)\n", http_host,
                   qh_server_port(hs), (unsigned long long)hcfg.max_body);
            fflush(stdout);
            FILE *hf = http_port_file ? fopen(http_port_file, "w") : NULL;
            if (hf) {
                fprintf(hf, "%d\n", qh_server_port(hs));
                fclose(hf);
            }
        }
        FILE *pf = port_file ? fopen(port_file, "w") : NULL;
        if (pf) {
            fprintf(pf, "%d\n", pgw_server_port(s));
            fclose(pf);
        }
        warm_job wj = {.db = db};
        pthread_t wt;
        int warming = warm && pthread_create(&wt, NULL, warm_main, &wj) == 0;
        rc = pgw_server_run(s, &e) == 0 ? 0 : 1;
        if (warming) {
            atomic_store(&wj.stop, 1);
            pthread_join(wt, NULL);
        }
        running = NULL;
        qh_server_free(hs); /* running requests end first */
        hs = NULL;
        if (rc == 0) {
            printf("quarry serve: shut down\n");
            fflush(stdout);
        }
    }
    if (rc != 0)
        cli_fail(e.code, e.msg);
    pgw_server_free(s);
    qr_sql_db_close(db);
    pgw_users_free(&users);
    return rc;
}

static const char *passwd_usage =
    "usage: quarry passwd NAME < password\n"
    "Prints the users-file line (NAME:SCRAM-SHA-256$4096:salt$StoredKey:ServerKey) for\n"
    "the password read from the first line of standard input (docs/SERVER.md).\n";

int cli_passwd(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        fputs(passwd_usage, argc == 2 && !strcmp(argv[1], "--help") ? stdout : stderr);
        return argc == 2 && !strcmp(argv[1], "--help") ? 0 : 2;
    }
    char pw[1024];
    if (!fgets(pw, sizeof pw, stdin)) {
        fprintf(stderr, "quarry passwd: no password on standard input\n");
        return 1;
    }
    size_t n = strlen(pw);
    while (n && (pw[n - 1] == '\n' || pw[n - 1] == '\r'))
        pw[--n] = 0;
    if (!n) {
        fprintf(stderr, "quarry passwd: empty password\n");
        return 1;
    }
    char line[512];
    qr_err e;
    if (pgw_users_line(argv[1], pw, line, sizeof line, &e) != 0) {
        cli_fail(e.code, e.msg);
        return 1;
    }
    fputs(line, stdout);
    return 0;
}
