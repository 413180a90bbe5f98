/* fuzz_pgwire.c - libFuzzer target for the PostgreSQL protocol server: the
 * input is what a client sends, served by one connection over a memory
 * channel (pgw_serve_io) against an empty OpenTelemetry table. The first
 * byte picks the mode: bit 0 clear = a valid startup packet comes first
 * (so the message loop, simple and extended query are reached), set = the
 * input is the startup phase itself; bit 1 = SCRAM authentication. Any
 * input ends in a closed connection, never a crash, a hang or a leak.
 * COPY FROM STDIN adds rows to the table: every 256 inputs it is emptied
 * again, so the runs stay as fast as the first. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_tmp.h"
#include "server/scram.h"
#include "server/server.h"

static char dir[4096];
static qr_sql_db *db;

static void cleanup(void)
{
    qr_sql_db_close(db);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return;
}

static void open_db(void)
{
    qr_err e;
    int created;
    qr_tabdef *d = qr_tabdef_otel("logs");
    fuzz_tmp_path(dir, sizeof dir, "quarry-fuzz-pgwire-XXXXXX");
    if (!mkdtemp(dir) || !d || qr_catalog_create_table(dir, d, &created, &e) != 0)
        abort();
    qr_tabdef_free(d);
    db = qr_sql_db_open(dir, 1, &e);
    if (!db)
        abort();
    atexit(cleanup);
}

static const uint8_t startup[] = {0,   0,   0,   37,  0,   3,   0,   0,   'u', 's', 'e', 'r', 0,
                                  'q', 'u', 'a', 'r', 'r', 'y', 0,   'd', 'a', 't', 'a', 'b', 'a',
                                  's', 'e', 0,   'q', 'u', 'a', 'r', 'r', 'y', 0,   0};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!db)
        open_db();
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    qr_buf in;
    qr_buf_init(&in);
    if (!(mode & 1))
        qr_buf_put(&in, startup, sizeof startup);
    qr_buf_put(&in, data + 1, size - 1);
    static char verifier[200];
    static pgw_user alice = {"quarry", verifier};
    static pgw_users us = {&alice, 1};
    qr_err e;
    if (!verifier[0] && pgw_scram_verifier("pw", (const uint8_t *)"fuzzsaltfuzzsalt", 16, 4096,
                                           verifier, sizeof verifier, &e) != 0)
        abort();
    pgw_config cfg;
    pgw_config_default(&cfg);
    cfg.port = -1;
    cfg.auth = (mode & 2) ? PGW_AUTH_SCRAM : PGW_AUTH_TRUST;
    cfg.users = &us;
    pgw_server *s = pgw_server_new(&cfg, db, &e);
    if (!s)
        abort();
    pgw_io io;
    pgw_io_init_mem(&io, in.p, in.len, NULL);
    pgw_serve_io(s, &io);
    pgw_io_free(&io);
    pgw_server_free(s);
    qr_buf_free(&in);
    static unsigned runs;
    if (++runs % 256 == 0) {
        qr_sql_session ss;
        qr_sql_session_init(&ss, db);
        qr_result r;
        qr_result_init(&r, NULL);
        qr_sql_exec(&ss, "TRUNCATE logs", 13, &r, &e);
        qr_result_free(&r);
        qr_sql_close(&ss);
    }
    return 0;
}
