/* test_pgwire_libpq.c - the server over real sockets on 127.0.0.1 (a free
 * port the kernel picks), with libpq as the client: simple queries answer
 * as a session of `quarry sql` does, PQexecParams / PQprepare with text
 * and binary parameters and results, errors with SQLSTATE and position and
 * the session going on, Execute row limits (PortalSuspended, by a raw
 * socket client), cancel of a running statement, SCRAM passwords, the
 * connection cap, many clients at once with checked answers, a client that
 * stops reading, TLS with a certificate, and the graceful shutdown. Every
 * loop is bounded. */
#include "server/pgtest.h"

#include <libpq-fe.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>

#include "exec/render.h"
#include "server/types.h"

#define ROWS 60000

static char *datadir;
static qr_sql_db *db;

typedef struct running {
    pgw_server *s;
    pthread_t t;
    int rc;
    pgw_users users;
} running;

static running trust, scram;

static void *run_server(void *p)
{
    running *r = p;
    qr_err e;
    r->rc = pgw_server_run(r->s, &e);
    if (r->rc)
        fprintf(stderr, "server: %s\n", e.msg);
    return NULL;
}

static pgw_config defaults(void)
{
    pgw_config cfg;
    pgw_config_default(&cfg);
    return cfg;
}

static void start(running *r, pgw_config *cfg)
{
    qr_err e;
    memset(r, 0, sizeof *r);
    cfg->host = "127.0.0.1";
    cfg->port = 0;
    r->s = pgw_server_new(cfg, db, &e);
    if (!r->s)
        fail_msg("server: %s", e.msg);
    assert_int_equal(pthread_create(&r->t, NULL, run_server, r), 0);
}

static void stop(running *r)
{
    pgw_server_stop(r->s);
    assert_int_equal(pthread_join(r->t, NULL), 0);
    assert_int_equal(r->rc, 0);
    pgw_server_free(r->s);
    r->s = NULL;
}

static int setup(void **st)
{
    datadir = pt_datadir(ROWS, 7);
    qr_err e;
    db = qr_sql_db_open(datadir, 2, &e);
    if (!db)
        fail_msg("db: %s", e.msg);
    pgw_config cfg;
    pgw_config_default(&cfg);
    cfg.max_conn = 64;
    start(&trust, &cfg);
    /* a users file made as `quarry passwd` makes it, read back by the loader */
    char path[4200], line[512];
    snprintf(path, sizeof path, "%s/users", datadir);
    FILE *f = fopen(path, "w");
    assert_int_equal(pgw_users_line("alice", "s3cret pass", line, sizeof line, &e), 0);
    fprintf(f, "# test users\n\n%s", line);
    fclose(f);
    static pgw_users users;
    if (pgw_users_load(path, &users, &e) != 0)
        fail_msg("users: %s", e.msg);
    assert_int_equal(users.n, 1);
    cfg = defaults();
    cfg.auth = PGW_AUTH_SCRAM;
    cfg.users = &users;
    start(&scram, &cfg);
    scram.users = users;
    return 0;
}

static int teardown(void **st)
{
    stop(&trust);
    stop(&scram);
    pgw_users_free(&scram.users);
    qr_sql_db_close(db);
    tu_rmdir(datadir);
    return 0;
}

static PGconn *connect_to(const running *r, const char *user, const char *password)
{
    char ci[512];
    snprintf(ci, sizeof ci,
             "host=127.0.0.1 port=%d user=%s dbname=quarry sslmode=disable connect_timeout=10%s%s",
             pgw_server_port(r->s), user, password ? " password=" : "", password ? password : "");
    return PQconnectdb(ci);
}

static PGconn *conn(void)
{
    PGconn *c = connect_to(&trust, "quarry", NULL);
    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("connect: %s", PQerrorMessage(c));
    return c;
}

/* ---- reference answers: a session of the same database, as `quarry sql` */
typedef struct ref {
    qr_sql_session s;
    qr_qctx ctx;
    qr_result r;
} ref;

static void ref_run(ref *x, const char *sql)
{
    qr_sql_session_init(&x->s, db);
    qr_sql_ctx_init(&x->s, &x->ctx, NULL);
    qr_result_init(&x->r, &x->ctx);
    qr_err e;
    if (qr_sql_exec(&x->s, sql, strlen(sql), &x->r, &e) != 0)
        fail_msg("%s: %s", sql, e.msg);
}

static void ref_done(ref *x)
{
    qr_result_free(&x->r);
    qr_sql_close(&x->s);
}

static char *ref_text(const char *sql)
{
    ref x;
    ref_run(&x, sql);
    qr_buf b;
    qr_buf_init(&b);
    for (uint64_t i = 0; i < x.r.nrows; i++) {
        for (uint32_t c = 0; c < x.r.ncols; c++) {
            if (c)
                qr_buf_put_u8(&b, '|');
            qr_cell_text(&x.r, c, &qr_result_row(&x.r, i)[c], &b);
        }
        qr_buf_put_u8(&b, '\n');
    }
    qr_buf_put_u8(&b, 0);
    ref_done(&x);
    return (char *)b.p;
}

/* The same rows as the server sends them in text format (types.c). */
static char *ref_wire_text(const char *sql)
{
    ref x;
    ref_run(&x, sql);
    qr_buf b;
    qr_buf_init(&b);
    for (uint64_t i = 0; i < x.r.nrows; i++) {
        for (uint32_t c = 0; c < x.r.ncols; c++) {
            if (c)
                qr_buf_put_u8(&b, '|');
            const qr_cell *cell = &qr_result_row(&x.r, i)[c];
            if (!cell->null)
                pgw_cell_encode(&x.r, c, cell, 0, &b);
        }
        qr_buf_put_u8(&b, '\n');
    }
    qr_buf_put_u8(&b, 0);
    ref_done(&x);
    return (char *)b.p;
}

static char *pq_text(PGresult *res)
{
    qr_buf b;
    qr_buf_init(&b);
    for (int i = 0; i < PQntuples(res); i++) {
        for (int c = 0; c < PQnfields(res); c++) {
            if (c)
                qr_buf_put_u8(&b, '|');
            qr_buf_put(&b, PQgetvalue(res, i, c), (size_t)PQgetlength(res, i, c));
        }
        qr_buf_put_u8(&b, '\n');
    }
    qr_buf_put_u8(&b, 0);
    return (char *)b.p;
}

static PGresult *must(PGconn *c, PGresult *res, ExecStatusType want)
{
    if (PQresultStatus(res) != want)
        fail_msg("status %s: %s", PQresStatus(PQresultStatus(res)), PQerrorMessage(c));
    return res;
}

static const char *compared[] = {
    "SELECT count(*) FROM logs",
    "SELECT count(*) FROM logs WHERE Body @@ 'failed'",
    "SELECT ServiceName, count(*) FROM logs GROUP BY ServiceName ORDER BY 2 DESC",
    "SELECT Body, bm25() FROM logs WHERE Body @@ ts_any(['failed', 'cache']) ORDER BY bm25() DESC "
    "LIMIT 7",
    ("SELECT ServiceName, SeverityText, count(*), avg(SeverityNumber) FROM logs "
     "WHERE SeverityNumber >= 9 GROUP BY 1, 2 ORDER BY 3 DESC"),
};

static void test_simple_queries_equal_quarry_sql(void **st)
{
    PGconn *c = conn();
    for (size_t i = 0; i < sizeof compared / sizeof compared[0]; i++) {
        PGresult *res = must(c, PQexec(c, compared[i]), PGRES_TUPLES_OK);
        char *got = pq_text(res), *want = ref_text(compared[i]);
        assert_true(PQntuples(res) > 0);
        assert_string_equal(got, want);
        free(got);
        free(want);
        PQclear(res);
    }
    PGresult *res = must(c, PQexec(c, "SELECT count(*) FROM logs"), PGRES_TUPLES_OK);
    assert_string_equal(PQgetvalue(res, 0, 0), "60000");
    assert_string_equal(PQfname(res, 0), "count");
    assert_int_equal(PQftype(res, 0), 20);
    assert_string_equal(PQcmdStatus(res), "SELECT 1");
    PQclear(res);
    assert_string_equal(PQparameterStatus(c, "server_version"), "15.0 (Quarry)");
    assert_int_equal(PQserverVersion(c), 150000);
    assert_string_equal(PQparameterStatus(c, "integer_datetimes"), "on");
    PQfinish(c);
}

static int64_t be64(const char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | (uint8_t)p[i];
    return (int64_t)v;
}

static void test_exec_params_text_and_binary(void **st)
{
    PGconn *c = conn();
    char *want =
        ref_text("SELECT count(*) FROM logs WHERE ServiceName = 'cart' AND SeverityNumber >= 13");
    const Oid types[] = {25, 23};
    const char *vals[] = {"cart", "13"};
    PGresult *res = must(
        c,
        PQexecParams(c, "SELECT count(*) FROM logs WHERE ServiceName = $1 AND SeverityNumber >= $2",
                     2, types, vals, NULL, NULL, 0),
        PGRES_TUPLES_OK);
    char *got = pq_text(res);
    assert_string_equal(got, want);
    assert_true(atoi(want) > 0);
    free(got);
    PQclear(res);
    /* the int parameter in binary, the result in binary */
    const char thirteen[4] = {0, 0, 0, 13};
    const char *bvals[] = {"cart", thirteen};
    const int lens[] = {4, 4}, fmts[] = {0, 1};
    res = must(
        c,
        PQexecParams(c, "SELECT count(*) FROM logs WHERE ServiceName = $1 AND SeverityNumber >= $2",
                     2, types, bvals, lens, fmts, 1),
        PGRES_TUPLES_OK);
    assert_int_equal(PQfformat(res, 0), 1);
    assert_int_equal(PQgetlength(res, 0, 0), 8);
    assert_int_equal(be64(PQgetvalue(res, 0, 0)), atoll(want));
    PQclear(res);
    /* untyped parameters are text: no type needed */
    res = must(c,
               PQexecParams(c, "SELECT count(*) FROM logs WHERE ServiceName = $1", 1, NULL, vals,
                            NULL, NULL, 0),
               PGRES_TUPLES_OK);
    char *want2 = ref_text("SELECT count(*) FROM logs WHERE ServiceName = 'cart'");
    got = pq_text(res);
    assert_string_equal(got, want2);
    free(got);
    free(want2);
    PQclear(res);
    free(want);
    PQfinish(c);
}

static void test_prepared_statements_and_injection(void **st)
{
    PGconn *c = conn();
    const Oid types[] = {25};
    PQclear(
        must(c, PQprepare(c, "bysvc", "SELECT count(*) FROM logs WHERE ServiceName = $1", 1, types),
             PGRES_COMMAND_OK));
    PGresult *d = must(c, PQdescribePrepared(c, "bysvc"), PGRES_COMMAND_OK);
    assert_int_equal(PQnparams(d), 1);
    assert_int_equal(PQparamtype(d, 0), 25);
    assert_int_equal(PQnfields(d), 1);
    assert_int_equal(PQftype(d, 0), 20);
    PQclear(d);
    const char *svc[] = {"cart",           "payment", "checkout", "nope", "'); DROP TABLE logs; --",
                         "cart' OR '1'='1"};
    for (int i = 0; i < 6; i++) {
        const char *v[] = {svc[i]};
        PGresult *res = must(c, PQexecPrepared(c, "bysvc", 1, v, NULL, NULL, 0), PGRES_TUPLES_OK);
        char sql[200];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM logs WHERE ServiceName = '%s'",
                 i < 4 ? svc[i] : "nope");
        char *want = ref_text(sql), *got = pq_text(res);
        assert_string_equal(got, want);
        if (i >= 3)
            assert_string_equal(got, "0\n"); /* the injections are just names nobody has */
        free(want);
        free(got);
        PQclear(res);
    }
    PGresult *res = must(c, PQexec(c, "SELECT count(*) FROM logs"), PGRES_TUPLES_OK);
    assert_string_equal(PQgetvalue(res, 0, 0), "60000");
    PQclear(res);
    PQfinish(c);
}

static void test_errors_carry_sqlstate_and_position(void **st)
{
    PGconn *c = conn();
    PGresult *res = must(c, PQexec(c, "SELECT bdy FROM logs"), PGRES_FATAL_ERROR);
    assert_string_equal(PQresultErrorField(res, PG_DIAG_SQLSTATE), "42703");
    assert_string_equal(PQresultErrorField(res, PG_DIAG_STATEMENT_POSITION), "8");
    assert_string_equal(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY),
                        "column \"bdy\" does not exist");
    assert_string_equal(PQresultErrorField(res, PG_DIAG_SEVERITY), "ERROR");
    PQclear(res);
    /* in the extended protocol, after a parameter, the position is the client's */
    const char *v[] = {"a parameter longer than its $1"};
    res = must(c,
               PQexecParams(c, "SELECT count(*) FROM logs WHERE ServiceName = $1 AND nope = 1", 1,
                            NULL, v, NULL, NULL, 0),
               PGRES_FATAL_ERROR);
    assert_string_equal(PQresultErrorField(res, PG_DIAG_SQLSTATE), "42703");
    assert_string_equal(PQresultErrorField(res, PG_DIAG_STATEMENT_POSITION), "54");
    PQclear(res);
    res = must(c, PQexec(c, "SELECT count(*) FROM nosuch"), PGRES_FATAL_ERROR);
    assert_string_equal(PQresultErrorField(res, PG_DIAG_SQLSTATE), "42P01");
    PQclear(res);
    res = must(c, PQexec(c, ""), PGRES_EMPTY_QUERY);
    PQclear(res);
    res =
        must(c, PQexec(c, "SELECT count(*) FROM logs WHERE ServiceName = 'cart'"), PGRES_TUPLES_OK);
    char *want = ref_text("SELECT count(*) FROM logs WHERE ServiceName = 'cart'"),
         *got = pq_text(res);
    assert_string_equal(got, want);
    free(want);
    free(got);
    PQclear(res);
    PQfinish(c);
}

static void test_timestamps_text_and_binary(void **st)
{
    const char *sql = "SELECT Timestamp FROM logs ORDER BY Timestamp DESC LIMIT 3";
    ref x;
    ref_run(&x, sql);
    assert_int_equal(x.r.nrows, 3);
    PGconn *c = conn();
    PGresult *t = must(c, PQexecParams(c, sql, 0, NULL, NULL, NULL, NULL, 0), PGRES_TUPLES_OK);
    PGresult *b = must(c, PQexecParams(c, sql, 0, NULL, NULL, NULL, NULL, 1), PGRES_TUPLES_OK);
    assert_int_equal(PQftype(t, 0), 1184);
    for (int i = 0; i < 3; i++) {
        int64_t ns = qr_result_row(&x.r, (uint64_t)i)[0].i;
        qr_buf want;
        qr_buf_init(&want);
        pgw_timestamptz_text(ns, &want);
        qr_buf_put_u8(&want, 0);
        assert_string_equal(PQgetvalue(t, i, 0), (char *)want.p);
        assert_true(!strncmp(PQgetvalue(t, i, 0), "2025-09-2", 9));
        qr_buf_free(&want);
        int64_t us = ns / 1000 - 946684800LL * 1000000; /* ns >= 0 here */
        assert_int_equal(be64(PQgetvalue(b, i, 0)), us);
    }
    PQclear(t);
    PQclear(b);
    PQfinish(c);
    ref_done(&x);
}

/* ---- a raw client, for what libpq does not send ---- */
static int raw_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(0x7f000001);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void raw_send(int fd, qr_buf *b)
{
    assert_int_equal(send(fd, b->p, b->len, MSG_NOSIGNAL), (ssize_t)b->len);
    qr_buf_clear(b);
}

/* Read messages until one of type `until` (bounded by 10 s); their types. */
static void raw_read_until(int fd, char until, char *types, size_t cap)
{
    size_t n = 0;
    int64_t end = qr_qctx_now_ns() + 10000000000LL;
    qr_buf body;
    qr_buf_init(&body);
    for (;;) {
        pgw_io io;
        pgw_io_init_fd(&io, fd);
        io.deadline_ns = end;
        uint8_t t;
        qr_err e;
        int rc = pgw_read_msg(&io, &t, &body, 1u << 30, &e);
        pgw_io_free(&io);
        if (rc != 0)
            fail_msg("raw read: %d %s (so far %.*s)", rc, e.msg, (int)n, types);
        if (n + 1 < cap)
            types[n++] = (char)t;
        if (t == until)
            break;
    }
    types[n] = 0;
    qr_buf_free(&body);
}

static int raw_session(int port)
{
    int fd = raw_connect(port);
    qr_buf b;
    qr_buf_init(&b);
    pt_startup(&b, "quarry", "quarry");
    raw_send(fd, &b);
    char types[64];
    raw_read_until(fd, 'Z', types, sizeof types);
    assert_string_equal(types, "RSSSSSSSSSSSKZ");
    qr_buf_free(&b);
    return fd;
}

static void test_execute_row_limit_portal_suspended(void **st)
{
    int fd = raw_session(pgw_server_port(trust.s));
    qr_buf b;
    qr_buf_init(&b);
    pt_parse(&b, "", "SELECT ServiceName, count(*) FROM logs GROUP BY 1 ORDER BY 1", 0, NULL);
    pt_bind(&b, "c", "", 0, NULL, 0);
    pt_execute(&b, "c", 3);
    pt_empty(&b, 'H'); /* Flush: the first rows before Sync */
    raw_send(fd, &b);
    char types[256];
    raw_read_until(fd, 's', types, sizeof types);
    assert_string_equal(types, "12DDDs");
    pt_execute(&b, "c", 3);
    pt_execute(&b, "c", 0);
    pt_empty(&b, 'S');
    raw_send(fd, &b);
    raw_read_until(fd, 'Z', types, sizeof types);
    char *want = ref_text("SELECT ServiceName, count(*) FROM logs GROUP BY 1 ORDER BY 1");
    int groups = 0;
    for (char *p = want; *p; p++)
        groups += *p == '\n';
    assert_true(groups > 6);
    char expect[256] = "DDDs";
    for (int i = 6; i < groups; i++)
        strcat(expect, "D");
    strcat(expect, "CZ");
    assert_string_equal(types, expect);
    free(want);
    pt_empty(&b, 'X');
    raw_send(fd, &b);
    qr_buf_free(&b);
    close(fd);
}

#define LONG_QUERY                                                                                 \
    "SELECT Body, SpanId, TraceId, count(*) FROM logs GROUP BY 1, 2, 3 ORDER BY 4 DESC LIMIT 1"

static void test_cancel_a_running_statement(void **st)
{
    PGconn *c = conn();
    int64_t t0 = qr_qctx_now_ns();
    PQclear(must(c, PQexec(c, LONG_QUERY), PGRES_TUPLES_OK));
    double full_ms = (double)(qr_qctx_now_ns() - t0) / 1e6;
    int canceled = 0;
    /* the engine looks at the cancel flag while it scans, merges the
     * threads' groups, renders and sorts them: cancel 1/2 to 1/16 into the
     * statement (the first, timed run can be several times slower than the
     * next ones on a busy machine, so half of it may be past the end) */
    for (int attempt = 0; attempt < 12 && !canceled; attempt++) {
        assert_int_equal(PQsendQuery(c, LONG_QUERY), 1);
        usleep((useconds_t)(full_ms * 1000 / (2 << (attempt % 4))));
        PGcancel *k = PQgetCancel(c);
        char err[256];
        assert_int_equal(PQcancel(k, err, sizeof err), 1);
        PQfreeCancel(k);
        PGresult *res;
        while ((res = PQgetResult(c))) {
            if (PQresultStatus(res) == PGRES_FATAL_ERROR) {
                assert_string_equal(PQresultErrorField(res, PG_DIAG_SQLSTATE), "57014");
                canceled = 1;
            }
            PQclear(res);
        }
    }
    printf("cancel: the statement takes %.1f ms; canceled 1/2 to 1/16 into it\n", full_ms);
    assert_true(canceled);
    PGresult *res = must(c, PQexec(c, "SELECT count(*) FROM logs"), PGRES_TUPLES_OK);
    assert_string_equal(PQgetvalue(res, 0, 0), "60000");
    PQclear(res);
    /* a cancel request with a wrong secret cancels nothing */
    int fd = raw_connect(pgw_server_port(trust.s));
    qr_buf b;
    qr_buf_init(&b);
    pgw_put_i32(&b, 16);
    pgw_put_i32(&b, 80877102);
    pgw_put_i32(&b, PQbackendPID(c));
    pgw_put_i32(&b, 12345);
    raw_send(fd, &b);
    qr_buf_free(&b);
    char x;
    assert_int_equal(recv(fd, &x, 1, 0), 0); /* closed without a reply */
    close(fd);
    PQclear(must(c, PQexec(c, LONG_QUERY), PGRES_TUPLES_OK));
    PQfinish(c);
}

/* A result that takes long to send is canceled between its batches of
 * rows, as PostgreSQL's executor is between rows: the client, reading
 * nothing until the answer began (the sockets hold far less than the ~40 MB,
 * so the server waits in its writes), cancels, then reads part of the rows
 * and 57014. (No small SO_RCVBUF here: a full 40 MB through one stalls in
 * TCP's retransmission backoff.) */
/* After the statement just sent began to answer: a cancel while its rows
 * wait for the client gives 57014 and no complete result; the session then
 * goes on and its next statement is not canceled. */
static void cancel_while_sending(PGconn *c)
{
    struct pollfd pf = {PQsocket(c), POLLIN, 0};
    assert_int_equal(poll(&pf, 1, 120000), 1); /* the rows began */
    usleep(100000);
    PGcancel *k = PQgetCancel(c);
    char err[256];
    assert_int_equal(PQcancel(k, err, sizeof err), 1);
    PQfreeCancel(k);
    PGresult *res;
    int canceled = 0, ok = 0;
    while ((res = PQgetResult(c))) {
        if (PQresultStatus(res) == PGRES_FATAL_ERROR) {
            assert_string_equal(PQresultErrorField(res, PG_DIAG_SQLSTATE), "57014");
            canceled = 1;
        }
        ok += PQresultStatus(res) == PGRES_TUPLES_OK;
        PQclear(res);
    }
    assert_true(canceled);
    assert_int_equal(ok, 0);
    res = must(c, PQexec(c, "SELECT count(*) FROM logs"), PGRES_TUPLES_OK);
    assert_string_equal(PQgetvalue(res, 0, 0), "60000");
    PQclear(res);
}

static void test_cancel_while_rows_are_sent(void **st)
{
    PGconn *c = conn();
    assert_int_equal(PQsendQuery(c, "SELECT * FROM logs"), 1); /* ~40 MB */
    cancel_while_sending(c);
    PQfinish(c);
}

/* The same through the extended protocol (Parse, Bind, Describe, Execute,
 * Sync): the portal's rows are sent under the statement's cancel flag
 * too. */
static void test_cancel_while_portal_rows_are_sent(void **st)
{
    PGconn *c = conn();
    assert_int_equal(PQsendQueryParams(c, "SELECT * FROM logs", 0, NULL, NULL, NULL, NULL, 0), 1);
    cancel_while_sending(c);
    PQfinish(c);
}

static void test_scram_passwords(void **st)
{
    PGconn *c = connect_to(&scram, "alice", "'s3cret pass'");
    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("connect: %s", PQerrorMessage(c));
    PGresult *res = must(c, PQexec(c, "SELECT count(*) FROM logs"), PGRES_TUPLES_OK);
    assert_string_equal(PQgetvalue(res, 0, 0), "60000");
    PQclear(res);
    PQfinish(c);
    const char *who[][2] = {{"alice", "wrong"}, {"nobody", "'s3cret pass'"}};
    for (int i = 0; i < 2; i++) {
        c = connect_to(&scram, who[i][0], who[i][1]);
        assert_int_equal(PQstatus(c), CONNECTION_BAD);
        char want[128];
        snprintf(want, sizeof want, "password authentication failed for user \"%s\"", who[i][0]);
        if (!strstr(PQerrorMessage(c), want))
            fail_msg("%s", PQerrorMessage(c));
        PQfinish(c);
    }
    c = connect_to(&scram, "alice", NULL); /* no password at all */
    assert_int_equal(PQstatus(c), CONNECTION_BAD);
    PQfinish(c);
}

static void test_non_loopback_listen_needs_auth(void **st)
{
    pgw_config cfg;
    pgw_config_default(&cfg);
    const char *hosts[] = {"0.0.0.0", "::", "10.1.2.3"};
    qr_err e;
    for (int i = 0; i < 3; i++) {
        cfg.host = hosts[i];
        cfg.port = 0;
        assert_null(pgw_server_new(&cfg, db, &e));
        assert_string_equal(e.code, "22023");
        assert_non_null(strstr(e.msg, "refusing to listen"));
    }
    cfg.auth = PGW_AUTH_SCRAM;
    assert_int_equal(pgw_config_check(&cfg, &e), 0);
    cfg.host = "127.0.0.1"; /* SCRAM without users: no file, none made by CREATE USER */
    assert_null(pgw_server_new(&cfg, db, &e));
    assert_non_null(
        strstr(e.msg, "needs a users file (--users FILE) or users made by CREATE USER"));
    cfg.host = "0.0.0.0";
    cfg.users = &scram.users;
    assert_int_equal(pgw_config_check(&cfg, &e), 0);
    cfg.host = "::1";
    cfg.auth = PGW_AUTH_TRUST;
    assert_int_equal(pgw_config_check(&cfg, &e), 0);
}

static PGconn *must_connect(const running *r, const char *user, const char *password)
{
    PGconn *c = connect_to(r, user, password);
    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("connect %s: %s", user, PQerrorMessage(c));
    return c;
}

static void expect_refused(const running *r, const char *user, const char *password,
                           const char *why)
{
    PGconn *c = connect_to(r, user, password);
    assert_int_equal(PQstatus(c), CONNECTION_BAD);
    if (!strstr(PQerrorMessage(c), why))
        fail_msg("%s: %s", user, PQerrorMessage(c));
    PQfinish(c);
}

static void expect_code(PGconn *c, const char *sql, const char *code)
{
    PGresult *res = must(c, PQexec(c, sql), PGRES_FATAL_ERROR);
    assert_string_equal(PQresultErrorField(res, PG_DIAG_SQLSTATE), code);
    PQclear(res);
}

/* CREATE USER over one connection; the next connection logs in as that
 * user, without a restart; a server with no users file serves them. */
static void test_users_made_over_the_wire_log_in_next(void **st)
{
    PGconn *a = must_connect(&scram, "alice", "'s3cret pass'"); /* the file's: a superuser */
    assert_string_equal(PQparameterStatus(a, "is_superuser"), "on");
    PQclear(must(a, PQexec(a, "CREATE USER bob PASSWORD 'bob pw'"), PGRES_COMMAND_OK));
    PQclear(must(a, PQexec(a, "CREATE ROLE nl PASSWORD 'nl'"), PGRES_COMMAND_OK));
    expect_code(a, "CREATE USER bob", "42710");
    expect_code(a, "DROP USER nobody", "42704");
    PGconn *b = must_connect(&scram, "bob", "'bob pw'");
    assert_string_equal(PQparameterStatus(b, "is_superuser"), "off");
    PGresult *res = must(b, PQexec(b, "SELECT count(*) FROM logs"), PGRES_TUPLES_OK);
    assert_string_equal(PQgetvalue(res, 0, 0), "60000");
    PQclear(res);
    expect_code(b, "CREATE USER eve PASSWORD 'x'", "42501");
    expect_code(b, "DROP USER bob", "42501");
    PQclear(must(b, PQexec(b, "ALTER USER CURRENT_USER PASSWORD 'new pw'"), PGRES_COMMAND_OK));
    PQfinish(b);
    expect_refused(&scram, "bob", "'bob pw'", "password authentication failed for user \"bob\"");
    expect_refused(&scram, "nl", "nl", "role \"nl\" is not permitted to log in");
    /* --auth scram without a users file: the data directory's users */
    running r;
    pgw_config cfg = defaults();
    cfg.auth = PGW_AUTH_SCRAM;
    start(&r, &cfg);
    b = must_connect(&r, "bob", "'new pw'");
    PQfinish(b);
    expect_refused(&r, "alice", "'s3cret pass'", "password authentication failed");
    PQclear(must(a, PQexec(a, "DROP USER bob, nl"), PGRES_COMMAND_OK));
    expect_refused(&r, "bob", "'new pw'", "password authentication failed for user \"bob\"");
    stop(&r);
    PQfinish(a);
}

/* All the data of a COPY ... TO STDOUT through PQgetCopyData (malloc'ed,
 * NUL-terminated); *msgs gets the number of CopyData messages. */
static char *copy_out_all(PGconn *c, PGresult *res, long *msgs)
{
    assert_int_equal(PQresultStatus(res), PGRES_COPY_OUT);
    PQclear(res);
    qr_buf b;
    qr_buf_init(&b);
    char *line;
    int n;
    *msgs = 0;
    while ((n = PQgetCopyData(c, &line, 0)) > 0) {
        qr_buf_put(&b, line, (size_t)n);
        (*msgs)++;
        PQfreemem(line);
    }
    assert_int_equal(n, -1);
    res = PQgetResult(c);
    assert_int_equal(PQresultStatus(res), PGRES_COMMAND_OK);
    PQclear(res);
    assert_null(PQgetResult(c));
    qr_buf_put_u8(&b, 0);
    return (char *)b.p;
}

/* Send data with PQputCopyData in pieces of `piece` bytes, then end the
 * copy (fail: with that CopyFail message); the final result. */
static PGresult *copy_in_all(PGconn *c, PGresult *res, const char *data, size_t n, size_t piece,
                             const char *fail)
{
    assert_int_equal(PQresultStatus(res), PGRES_COPY_IN);
    PQclear(res);
    for (size_t at = 0; at < n; at += piece)
        assert_int_equal(PQputCopyData(c, data + at, (int)(n - at < piece ? n - at : piece)), 1);
    assert_int_equal(PQputCopyEnd(c, fail), 1);
    res = PQgetResult(c);
    PGresult *more;
    while ((more = PQgetResult(c)))
        PQclear(more);
    return res;
}

static long count_of(PGconn *c, const char *sql)
{
    PGresult *res = must(c, PQexec(c, sql), PGRES_TUPLES_OK);
    long n = atol(PQgetvalue(res, 0, 0));
    PQclear(res);
    return n;
}

/* libpq's PQputCopyData / PQgetCopyData: COPY out what COPY in took, byte
 * for byte; a copy's rows appear only at its end; CopyFail and bad data
 * leave nothing; the extended protocol (PQexecParams) works the same. */
static void test_copy_in_and_out_with_libpq(void **st)
{
    PGconn *c = conn(), *other = conn();
    PQclear(must(c,
                 PQexec(c, "CREATE TABLE wire (ts timestamp, svc text, body text, sev integer, "
                           "attrs map)"),
                 PGRES_COMMAND_OK));
    const char *out_sql = "COPY (SELECT Timestamp, ServiceName, Body, SeverityNumber, "
                          "LogAttributes FROM logs ORDER BY 1, 2, 3, 4) TO STDOUT";
    long msgs;
    char *first = copy_out_all(c, PQexec(c, out_sql), &msgs);
    assert_int_equal(msgs, 60000); /* one CopyData a row, as PostgreSQL sends them */
    size_t n = strlen(first);
    /* in, cut every 1000 bytes (mid-line, mid-field); invisible until the end */
    PGresult *res = PQexec(c, "COPY wire FROM STDIN");
    assert_int_equal(PQresultStatus(res), PGRES_COPY_IN);
    PQclear(res);
    assert_int_equal(PQputCopyData(c, first, (int)(n / 2)), 1);
    assert_int_equal(PQflush(c), 0);
    usleep(100000);
    assert_int_equal(count_of(other, "SELECT count(*) FROM wire"), 0);
    res = PQgetResult(c); /* still copying: libpq reports COPY_IN again */
    assert_int_equal(PQresultStatus(res), PGRES_COPY_IN);
    res = copy_in_all(c, res, first + n / 2, n - n / 2, 1000, NULL);
    assert_int_equal(PQresultStatus(res), PGRES_COMMAND_OK);
    assert_string_equal(PQcmdStatus(res), "COPY 60000");
    PQclear(res);
    assert_int_equal(count_of(other, "SELECT count(*) FROM wire"), 60000);
    char *second = copy_out_all(
        c, PQexec(c, "COPY (SELECT * FROM wire ORDER BY 1, 2, 3, 4) TO STDOUT"), &msgs);
    assert_string_equal(first, second);
    free(second);
    /* csv with a header, through the extended protocol both ways */
    res = PQexecParams(
        c, "COPY (SELECT * FROM wire ORDER BY 1, 2, 3, 4) TO STDOUT (FORMAT csv, HEADER)", 0, NULL,
        NULL, NULL, NULL, 0);
    char *csv = copy_out_all(c, res, &msgs);
    assert_true(!strncmp(csv, "ts,svc,body,sev,attrs\n", 22));
    PQclear(must(c, PQexec(c, "TRUNCATE wire"), PGRES_COMMAND_OK));
    res =
        PQexecParams(c, "COPY wire FROM STDIN (FORMAT csv, HEADER)", 0, NULL, NULL, NULL, NULL, 0);
    res = copy_in_all(c, res, csv, strlen(csv), 70000, NULL);
    assert_int_equal(PQresultStatus(res), PGRES_COMMAND_OK);
    PQclear(res);
    second = copy_out_all(c, PQexec(c, "COPY (SELECT * FROM wire ORDER BY 1, 2, 3, 4) TO STDOUT"),
                          &msgs);
    assert_string_equal(first, second);
    free(second);
    free(csv);
    /* CopyFail: 57014 with the client's message; bad data: 22P02 naming line and column */
    res = copy_in_all(c, PQexec(c, "COPY wire FROM STDIN"), first, n, 65536, "changed my mind");
    assert_int_equal(PQresultStatus(res), PGRES_FATAL_ERROR);
    assert_string_equal(PQresultErrorField(res, PG_DIAG_SQLSTATE), "57014");
    assert_string_equal(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY),
                        "COPY from stdin failed: changed my mind");
    PQclear(res);
    static const char bad[] = "2025-01-01 00:00:00\tsvc\tbody\t7\t{}\n"
                              "2025-01-01 00:00:01\tsvc\tbody\tseven\t{}\n";
    res = copy_in_all(c, PQexec(c, "COPY wire FROM STDIN"), bad, sizeof bad - 1, 10, NULL);
    assert_int_equal(PQresultStatus(res), PGRES_FATAL_ERROR);
    assert_string_equal(PQresultErrorField(res, PG_DIAG_SQLSTATE), "22P02");
    if (!strstr(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY), "STDIN:2: column \"sev\""))
        fail_msg("%s", PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY));
    PQclear(res);
    res = copy_in_all(c, PQexecParams(c, "COPY wire FROM STDIN", 0, NULL, NULL, NULL, NULL, 0), bad,
                      sizeof bad - 1, 10, NULL);
    assert_string_equal(PQresultErrorField(res, PG_DIAG_SQLSTATE), "22P02");
    PQclear(res);
    /* a cancel request during copy-in fails the copy at its next CopyData */
    res = PQexec(c, "COPY wire FROM STDIN");
    assert_int_equal(PQresultStatus(res), PGRES_COPY_IN);
    PQclear(res);
    assert_int_equal(PQputCopyData(c, first, 1000), 1);
    assert_int_equal(PQflush(c), 0);
    PGcancel *k = PQgetCancel(c);
    char err[256];
    assert_int_equal(PQcancel(k, err, sizeof err), 1);
    PQfreeCancel(k);
    res = copy_in_all(c, PQgetResult(c), first + 1000, 1000, 100, NULL);
    assert_int_equal(PQresultStatus(res), PGRES_FATAL_ERROR);
    assert_string_equal(PQresultErrorField(res, PG_DIAG_SQLSTATE), "57014");
    PQclear(res);
    assert_int_equal(count_of(c, "SELECT count(*) FROM wire"), 60000); /* nothing of those */
    /* the session goes on; a text of COPY and another statement runs both */
    res = PQexec(c, "COPY wire FROM STDIN; SELECT count(*) FROM wire");
    size_t line1 = (size_t)(strchr(bad, '\n') - bad) + 1;
    res = copy_in_all(c, res, bad, line1, line1, NULL);
    free(first);
    PQclear(res);
    assert_int_equal(count_of(c, "SELECT count(*) FROM wire"), 60001);
    PQclear(must(c, PQexec(c, "DROP TABLE wire"), PGRES_COMMAND_OK));
    PQfinish(other);
    PQfinish(c);
}

static void test_connection_cap(void **st)
{
    running small;
    pgw_config cfg = defaults();
    cfg.max_conn = 2;
    start(&small, &cfg);
    PGconn *a = connect_to(&small, "quarry", NULL), *b = connect_to(&small, "quarry", NULL);
    assert_int_equal(PQstatus(a), CONNECTION_OK);
    assert_int_equal(PQstatus(b), CONNECTION_OK);
    PGconn *c = connect_to(&small, "quarry", NULL);
    assert_int_equal(PQstatus(c), CONNECTION_BAD);
    assert_non_null(strstr(PQerrorMessage(c), "too many clients"));
    PQfinish(c);
    PQfinish(a);
    c = NULL;
    for (int i = 0; i < 50 && !c; i++) { /* the closed one's thread leaves soon */
        c = connect_to(&small, "quarry", NULL);
        if (PQstatus(c) != CONNECTION_OK) {
            PQfinish(c);
            c = NULL;
            usleep(20000);
        }
    }
    assert_non_null(c);
    PQfinish(c);
    PQfinish(b);
    stop(&small);
}

/* ---- many clients: the soak ---- */
#define SOAK_CLIENTS 50
#define SOAK_LAT_CAP 40000 /* latencies kept per client and phase */
#define TRACE_JOIN                                                                                 \
    "SELECT l.ServiceName, count(*), count(DISTINCT l.TraceId) AS traces FROM logs l JOIN logs f " \
    "ON l.TraceId = f.TraceId WHERE f.ServiceName = 'checkout' AND f.Body @@ 'failed' AND "        \
    "f.TraceId <> '' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5"
#define PREPARED "SELECT count(*) FROM logs WHERE ServiceName = $1 AND SeverityNumber >= $2"

/* The mixed query set; a NULL sql is the prepared statement with params. */
typedef struct soakq {
    const char *sql;
    const char *params[2];
    char *want;
} soakq;
static soakq soak_qs[] = {
    {"SELECT count(*) FROM logs WHERE Body @@ 'failed'", {0}, 0},
    {"SELECT Body, bm25() FROM logs WHERE Body @@ ts_any(['failed', 'cache']) ORDER BY bm25() "
     "DESC LIMIT 10",
     {0},
     0},
    {"SELECT Timestamp FROM logs ORDER BY Timestamp DESC LIMIT 20", {0}, 0},
    {"SELECT ServiceName, count(*) FROM logs GROUP BY ServiceName ORDER BY 2 DESC, 1", {0}, 0},
    {TRACE_JOIN, {0}, 0},
    {NULL, {"cart", "13"}, 0},
    {NULL, {"payment", "9"}, 0},
    {NULL, {"nope", "1"}, 0},
};
#define NSOAKQ (int)(sizeof soak_qs / sizeof soak_qs[0])

static atomic_int soak_phase; /* 0 without the stuck client, 1 with it, 2 stop */

typedef struct worker {
    int id, ok, bad;
    char why[256];
    float *lat[2];
    int nlat[2];
} worker;

static void *soak_client(void *p)
{
    worker *w = p;
    PGconn *c = connect_to(&trust, "quarry", NULL);
    if (PQstatus(c) != CONNECTION_OK) {
        snprintf(w->why, sizeof w->why, "connect: %s", PQerrorMessage(c));
        w->bad++;
        PQfinish(c);
        return NULL;
    }
    PGresult *prep = PQprepare(c, "q", PREPARED, 0, NULL);
    if (PQresultStatus(prep) != PGRES_COMMAND_OK) {
        snprintf(w->why, sizeof w->why, "prepare: %s", PQerrorMessage(c));
        w->bad++;
    }
    PQclear(prep);
    for (int i = 0;; i++) {
        int phase = atomic_load(&soak_phase);
        if (phase == 2)
            break;
        const soakq *q = &soak_qs[(w->id + i) % NSOAKQ];
        int64_t t0 = qr_qctx_now_ns();
        PGresult *res =
            q->sql ? PQexec(c, q->sql) : PQexecPrepared(c, "q", 2, q->params, NULL, NULL, 0);
        float ms = (float)(qr_qctx_now_ns() - t0) / 1e6f;
        char *got = PQresultStatus(res) == PGRES_TUPLES_OK ? pq_text(res) : NULL;
        if (got && !strcmp(got, q->want)) {
            w->ok++;
        } else {
            if (!w->bad++)
                snprintf(w->why, sizeof w->why, "%s: %.200s", q->sql ? q->sql : q->params[0],
                         got ? got : PQerrorMessage(c));
        }
        if (w->nlat[phase] < SOAK_LAT_CAP)
            w->lat[phase][w->nlat[phase]++] = ms;
        free(got);
        PQclear(res);
    }
    PQfinish(c);
    return NULL;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* A raw session that asks for every column of the rows of sql and never
 * reads (a 4 KiB receive buffer): once poll says the answer began (within
 * 120 s, else -1), the server's thread for it is blocked writing. */
static int stuck_client_start(const char *sql)
{
    int fd = raw_session(pgw_server_port(trust.s));
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    qr_buf b;
    qr_buf_init(&b);
    pt_query(&b, sql);
    raw_send(fd, &b);
    qr_buf_free(&b);
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, 120000) != 1) {
        close(fd);
        return -1;
    }
    usleep(200000);
    return fd;
}

/* It is still there, holding part of the answer; closing it ends its thread. */
static void stuck_client_end(int fd)
{
    char buf[4096];
    ssize_t got = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    assert_true(got > 0);
    assert_int_equal(buf[0], 'T');
    close(fd);
}

/* 50 clients for QUARRY_SOAK_SECONDS (30 by default) run the mixed set
 * (count, top-k by BM25, newest-k, GROUP BY, a trace join, a prepared
 * statement with parameters), every answer checked against the one
 * computed up front; in the second half one more client stops reading in
 * the middle of a large result. Latencies of both halves are reported. */
static void test_soak_50_clients_mixed_queries_checked(void **st)
{
    const char *env = getenv("QUARRY_SOAK_SECONDS");
    int secs = env && atoi(env) > 0 ? atoi(env) : 30;
    alarm((unsigned)secs + 240); /* the hard limit: a hang kills the test */
    for (int i = 0; i < NSOAKQ; i++) {
        char sql[256];
        if (!soak_qs[i].sql)
            snprintf(sql, sizeof sql,
                     "SELECT count(*) FROM logs WHERE ServiceName = '%s' AND SeverityNumber >= %s",
                     soak_qs[i].params[0], soak_qs[i].params[1]);
        soak_qs[i].want = ref_wire_text(soak_qs[i].sql ? soak_qs[i].sql : sql);
        assert_true(strlen(soak_qs[i].want) > 1);
    }
    atomic_store(&soak_phase, 0);
    pthread_t t[SOAK_CLIENTS];
    worker *w = calloc(SOAK_CLIENTS, sizeof *w);
    for (int i = 0; i < SOAK_CLIENTS; i++) {
        w[i].id = i;
        for (int k = 0; k < 2; k++)
            assert_non_null(w[i].lat[k] = malloc(sizeof(float) * SOAK_LAT_CAP));
        assert_int_equal(pthread_create(&t[i], NULL, soak_client, &w[i]), 0);
    }
    int64_t t0 = qr_qctx_now_ns();
    usleep((useconds_t)secs * 500000);
    /* ~10 MB: far more than the sockets hold, and quick to make under ASan */
    int stuck = stuck_client_start("SELECT * FROM logs LIMIT 15000");
    atomic_store(&soak_phase, 1); /* the second half starts once it is stuck */
    int64_t t1 = qr_qctx_now_ns();
    while (stuck >= 0 && qr_qctx_now_ns() - t1 < (int64_t)secs * 500000000)
        usleep(50000);
    atomic_store(&soak_phase, 2);
    long ok = 0, bad = 0;
    float *all[2];
    long nall[2] = {0, 0};
    for (int k = 0; k < 2; k++)
        assert_non_null(all[k] = malloc(sizeof(float) * SOAK_LAT_CAP * SOAK_CLIENTS));
    for (int i = 0; i < SOAK_CLIENTS; i++) {
        pthread_join(t[i], NULL);
        ok += w[i].ok;
        bad += w[i].bad;
        if (w[i].bad)
            fprintf(stderr, "client %d: %d wrong, first: %s\n", i, w[i].bad, w[i].why);
        for (int k = 0; k < 2; k++) {
            memcpy(all[k] + nall[k], w[i].lat[k], sizeof(float) * (size_t)w[i].nlat[k]);
            nall[k] += w[i].nlat[k];
            free(w[i].lat[k]);
        }
    }
    double secs_run = (double)(qr_qctx_now_ns() - t0) / 1e9;
    if (stuck < 0)
        fail_msg("the stuck client's statement did not answer within 120 s");
    stuck_client_end(stuck);
    float p50[2], p99[2];
    for (int k = 0; k < 2; k++) {
        if (nall[k] == 0)
            fail_msg("phase %d: no queries (%ld checked, %ld wrong)", k, ok, bad);
        qsort(all[k], (size_t)nall[k], sizeof(float), cmp_float);
        p50[k] = all[k][nall[k] / 2];
        p99[k] = all[k][nall[k] * 99 / 100];
    }
    printf("soak: %d clients for %.1f s, %ld queries checked (%.0f/s), %ld wrong; latency p50 "
           "%.2f ms, p99 %.2f ms without a stuck client (%ld queries), p50 %.2f ms, p99 %.2f ms "
           "while one holds a ~10 MB result unread (%ld queries)\n",
           SOAK_CLIENTS, secs_run, ok + bad, (double)(ok + bad) / secs_run, bad, p50[0], p99[0],
           nall[0], p50[1], p99[1], nall[1]);
    assert_int_equal(bad, 0);
    /* nobody waits on the stuck client: the tail is the machine's load, not it */
    assert_true(p99[1] < 3 * p99[0] + 2000);
    for (int k = 0; k < 2; k++)
        free(all[k]);
    free(w);
    for (int i = 0; i < NSOAKQ; i++)
        free(soak_qs[i].want);
    alarm(0);
}

/* Hostile clients over real sockets, each on its own connection, while a
 * well-behaved one keeps working: every bad one gets an error or a close,
 * never a hang (each read is bounded), and the server keeps serving. */
static void test_hostile_clients_over_sockets(void **st)
{
    static const struct {
        const char *bytes;
        size_t n;
        int startup; /* send a good startup packet first */
    } evil[] = {
        {"\x80\0\0\0\0\3\0\0", 8, 0},           /* startup length 2^31 */
        {"\0\0\0\x02", 4, 0},                   /* startup length 2 */
        {"\0\0\x27\x11\0\3\0\0", 8, 0},         /* 10001 bytes: over the startup limit */
        {"Q\x80\0\0\0", 5, 1},                  /* message length 2^31 */
        {"Q\x7f\xff\xff\xff", 5, 1},            /* 2^31 - 1 */
        {"Q\x01\0\0\x05", 5, 1},                /* 16 MiB + 1: just over the limit */
        {"\x01\0\0\0\x04", 5, 1},               /* unknown type */
        {"E\0\0\0\x0dnope\0\0\0\0\0", 14, 1},   /* Execute of no portal: an ERROR */
        {"B\0\0\0\x0c\0\0\0\x01\0\0\0", 13, 1}, /* Bind cut short inside: 08P01 */
        {"S\0\0\0\x05x", 6, 1},                 /* Sync with a body */
    };
    PGconn *good = conn();
    int port = pgw_server_port(trust.s);
    for (size_t i = 0; i < sizeof evil / sizeof evil[0]; i++) {
        int fd = evil[i].startup ? raw_session(port) : raw_connect(port);
        assert_int_equal(send(fd, evil[i].bytes, evil[i].n, MSG_NOSIGNAL), (ssize_t)evil[i].n);
        if (evil[i].startup &&
            evil[i].bytes[0] == 'E') { /* an ERROR: the session goes on to Sync */
            char types[16];
            raw_read_until(fd, 'E', types, sizeof types);
            qr_buf b;
            qr_buf_init(&b);
            pt_empty(&b, 'S');
            raw_send(fd, &b);
            raw_read_until(fd, 'Z', types, sizeof types);
            qr_buf_free(&b);
        } else { /* FATAL then close: read to the end, bounded */
            char buf[1024], first = 0;
            ssize_t total = 0, got;
            struct pollfd pf = {fd, POLLIN, 0};
            int closed = 0;
            while (poll(&pf, 1, 10000) == 1) {
                got = recv(fd, buf, sizeof buf, 0);
                if (got <= 0) { /* EOF, or a reset of what the server did not read */
                    closed = 1;
                    break;
                }
                if (!total)
                    first = buf[0];
                total += got;
            }
            /* an ErrorResponse, or the connection closed (a TCP reset may
             * drop the FATAL before it is read: the byte sequences' exact
             * answers are checked over a memory channel in test_pgwire.c) */
            if (total && first != 'E')
                fail_msg("hostile case %zu: the answer starts with '%c', not an ErrorResponse", i,
                         first);
            if (!total && !closed)
                fail_msg("hostile case %zu: neither an answer nor a close within 10 s", i);
        }
        close(fd);
        PGresult *res = must(good, PQexec(good, "SELECT count(*) FROM logs"), PGRES_TUPLES_OK);
        assert_string_equal(PQgetvalue(res, 0, 0), "60000");
        PQclear(res);
    }
    /* out of order: Execute and Bind before any Parse; a FATAL-free error each time */
    int fd = raw_session(port);
    qr_buf b;
    qr_buf_init(&b);
    pt_bind(&b, "", "nostmt", 0, NULL, 0);
    pt_execute(&b, "", 0);
    pt_empty(&b, 'S');
    pt_query(&b, "SELECT count(*) FROM logs");
    raw_send(fd, &b);
    char types[32];
    raw_read_until(fd, 'Z', types, sizeof types);
    assert_string_equal(types, "EZ");
    raw_read_until(fd, 'Z', types, sizeof types);
    assert_string_equal(types, "TDCZ");
    qr_buf_free(&b);
    close(fd);
    PQfinish(good);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median and the largest latency of n count queries on c, in ms. */
static void latencies(PGconn *c, int n, double *median, double *max)
{
    double lat[64];
    for (int i = 0; i < n; i++) {
        int64_t t0 = qr_qctx_now_ns();
        PGresult *res = must(c, PQexec(c, "SELECT count(*) FROM logs WHERE ServiceName = 'cart'"),
                             PGRES_TUPLES_OK);
        lat[i] = (double)(qr_qctx_now_ns() - t0) / 1e6;
        assert_true(atoi(PQgetvalue(res, 0, 0)) > 0);
        PQclear(res);
    }
    qsort(lat, (size_t)n, sizeof *lat, cmp_double);
    *median = lat[n / 2];
    *max = lat[n - 1];
}

static void test_a_client_that_stops_reading_blocks_nobody(void **st)
{
    PGconn *c = conn();
    double med0, max0, med1, max1;
    latencies(c, 40, &med0, &max0);
    int fd = stuck_client_start("SELECT * FROM logs");
    assert_true(fd >= 0);
    latencies(c, 40, &med1, &max1);
    printf("slow reader: count latency median %.2f ms (max %.2f) before, %.2f ms (max %.2f) while "
           "a client holds a ~40 MB result unread\n",
           med0, max0, med1, max1);
    assert_true(max1 < 1000);
    stuck_client_end(fd); /* its thread's write fails and the connection ends */
    PQfinish(c);
}

static void test_tls_when_a_certificate_is_configured(void **st)
{
    char cmd[9000], cert[4200], key[4200];
    snprintf(cert, sizeof cert, "%s/cert.pem", datadir);
    snprintf(key, sizeof key, "%s/key.pem", datadir);
    snprintf(cmd, sizeof cmd,
             "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost "
             "-keyout '%s' -out '%s' 2>/dev/null",
             key, cert);
    assert_int_equal(system(cmd), 0);
    running r;
    pgw_config cfg = defaults();
    cfg.tls_cert = cert;
    cfg.tls_key = key;
    start(&r, &cfg);
    char ci[512];
    const char *modes[] = {"require", "disable"};
    char *answers[2];
    for (int i = 0; i < 2; i++) {
        snprintf(ci, sizeof ci, "host=127.0.0.1 port=%d user=quarry dbname=quarry sslmode=%s",
                 pgw_server_port(r.s), modes[i]);
        PGconn *c = PQconnectdb(ci);
        if (PQstatus(c) != CONNECTION_OK)
            fail_msg("connect (%s): %s", modes[i], PQerrorMessage(c));
        assert_int_equal(PQsslInUse(c), i == 0);
        /* a result of many TLS records, equal to the plain one */
        PGresult *res =
            must(c, PQexec(c, "SELECT TraceId, Body, LogAttributes FROM logs LIMIT 20000"),
                 PGRES_TUPLES_OK);
        assert_int_equal(PQntuples(res), 20000);
        answers[i] = pq_text(res);
        PQclear(res);
        PQfinish(c);
    }
    assert_string_equal(answers[0], answers[1]);
    free(answers[0]);
    free(answers[1]);
    /* without a certificate, a client that insists on TLS is turned away */
    snprintf(ci, sizeof ci, "host=127.0.0.1 port=%d user=quarry dbname=quarry sslmode=require",
             pgw_server_port(trust.s));
    PGconn *c = PQconnectdb(ci);
    assert_int_equal(PQstatus(c), CONNECTION_BAD);
    assert_non_null(strstr(PQerrorMessage(c), "server does not support SSL"));
    PQfinish(c);
    stop(&r);
    /* a key that is not the certificate's is refused at start */
    cfg.tls_key = cert;
    qr_err e;
    assert_null(pgw_server_new(&cfg, db, &e));
    assert_string_equal(e.code, "22023");
    assert_non_null(strstr(e.msg, cert));
}

static void test_idle_sessions_are_closed_past_the_idle_timeout(void **st)
{
    running r;
    pgw_config cfg = defaults();
    cfg.idle_timeout_ms = 400;
    start(&r, &cfg);
    PGconn *busy = connect_to(&r, "quarry", NULL), *idle = connect_to(&r, "quarry", NULL);
    assert_int_equal(PQstatus(busy), CONNECTION_OK);
    assert_int_equal(PQstatus(idle), CONNECTION_OK);
    for (int i = 0; i < 8; i++) { /* 800 ms of queries 100 ms apart: never idle for long */
        usleep(100000);
        PGresult *res = must(busy, PQexec(busy, "SELECT count(*) FROM logs"), PGRES_TUPLES_OK);
        PQclear(res);
    }
    PGresult *res = PQexec(idle, "SELECT count(*) FROM logs");
    assert_int_not_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    assert_non_null(strstr(PQerrorMessage(idle), "idle-session timeout"));
    PQclear(res);
    PQfinish(idle);
    PQfinish(busy);
    stop(&r);
}

static void test_graceful_shutdown(void **st)
{
    for (int grace = 0; grace < 2; grace++) {
        running r;
        pgw_config cfg = defaults();
        cfg.grace_ms = grace ? 5000 : 1;
        start(&r, &cfg);
        PGconn *idle = connect_to(&r, "quarry", NULL), *busy = connect_to(&r, "quarry", NULL);
        assert_int_equal(PQstatus(idle), CONNECTION_OK);
        assert_int_equal(PQstatus(busy), CONNECTION_OK);
        assert_int_equal(PQsendQuery(busy, LONG_QUERY), 1);
        /* the statement is running (it takes ~200 ms, and looks at its
         * cancel flag throughout) */
        usleep(grace ? 20000 : 5000);
        int64_t t0 = qr_qctx_now_ns();
        stop(&r); /* returns once every connection is gone */
        double ms = (double)(qr_qctx_now_ns() - t0) / 1e6;
        PGresult *res = PQgetResult(busy);
        /* with a grace period the statement finishes; without one it is canceled */
        if (grace) {
            assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
        } else { /* canceled; or, had the server not read it yet, never started */
            assert_int_equal(PQresultStatus(res), PGRES_FATAL_ERROR);
            const char *code = PQresultErrorField(res, PG_DIAG_SQLSTATE);
            if (strcmp(code, "57014") && strcmp(code, "57P01"))
                fail_msg("shutdown without grace: %s %s", code, PQerrorMessage(busy));
        }
        PQclear(res);
        while ((res = PQgetResult(busy)))
            PQclear(res);
        res = PQexec(idle, "SELECT count(*) FROM logs");
        assert_int_not_equal(PQresultStatus(res), PGRES_TUPLES_OK);
        assert_non_null(
            strstr(PQerrorMessage(idle), "terminating connection due to administrator command"));
        PQclear(res);
        printf("shutdown (grace %d ms): %.0f ms\n", cfg.grace_ms, ms);
        assert_true(ms < 6000);
        PQfinish(idle);
        PQfinish(busy);
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_queries_equal_quarry_sql),
        cmocka_unit_test(test_exec_params_text_and_binary),
        cmocka_unit_test(test_prepared_statements_and_injection),
        cmocka_unit_test(test_errors_carry_sqlstate_and_position),
        cmocka_unit_test(test_timestamps_text_and_binary),
        cmocka_unit_test(test_execute_row_limit_portal_suspended),
        cmocka_unit_test(test_cancel_a_running_statement),
        cmocka_unit_test(test_cancel_while_rows_are_sent),
        cmocka_unit_test(test_cancel_while_portal_rows_are_sent),
        cmocka_unit_test(test_scram_passwords),
        cmocka_unit_test(test_non_loopback_listen_needs_auth),
        cmocka_unit_test(test_users_made_over_the_wire_log_in_next),
        cmocka_unit_test(test_copy_in_and_out_with_libpq),
        cmocka_unit_test(test_connection_cap),
        cmocka_unit_test(test_hostile_clients_over_sockets),
        cmocka_unit_test(test_soak_50_clients_mixed_queries_checked),
        cmocka_unit_test(test_a_client_that_stops_reading_blocks_nobody),
        cmocka_unit_test(test_tls_when_a_certificate_is_configured),
        cmocka_unit_test(test_idle_sessions_are_closed_past_the_idle_timeout),
        cmocka_unit_test(test_graceful_shutdown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
