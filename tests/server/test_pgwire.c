/* test_pgwire.c - the server's parts without a socket: SCRAM-SHA-256
 * against RFC 7677's test vector, parameter substitution (quoting,
 * injection attempts, numbers, binary values, positions), type encodings,
 * and whole connections over a memory channel: malformed, truncated and
 * oversized packets end in 08P01 and a close, queries and the extended
 * protocol give exact message sequences. */
#include "server/pgtest.h"

#include <math.h>

#include "server/conn.h"
#include "server/scram.h"
#include "server/subst.h"
#include "server/types.h"

static char *datadir;
static qr_sql_db *db;

static int setup(void **st)
{
    datadir = pt_datadir(3000, 5);
    qr_err e;
    db = qr_sql_db_open(datadir, 2, &e);
    if (!db)
        fail_msg("db: %s", e.msg);
    return 0;
}

static int teardown(void **st)
{
    qr_sql_db_close(db);
    tu_rmdir(datadir);
    return 0;
}

/* ---- SCRAM ---- */
static void test_scram_rfc7677_vector(void **st)
{
    uint8_t salt[32];
    const char *s64 = "W22ZaJ0SNY7soEsUEjb6gQ==";
    long sl = pgw_b64_decode(s64, strlen(s64), salt, sizeof salt);
    assert_int_equal(sl, 16);
    char v[256];
    qr_err e;
    assert_int_equal(pgw_scram_verifier("pencil", salt, (size_t)sl, 4096, v, sizeof v, &e), 0);
    pgw_scram sc;
    memset(&sc, 0, sizeof sc);
    assert_int_equal(pgw_scram_parse(v, &sc.sec, &e), 0);
    assert_int_equal(sc.sec.iters, 4096);
    const char *cf = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
    qr_buf out;
    qr_buf_init(&out);
    assert_int_equal(
        pgw_scram_first(&sc, cf, strlen(cf), "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0", &out, &e), 0);
    const char *sf =
        "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
    assert_int_equal(out.len, strlen(sf));
    assert_memory_equal(out.p, sf, out.len);
    pgw_scram wrong = sc;
    const char *fin = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                      "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    qr_buf_clear(&out);
    assert_int_equal(pgw_scram_final(&sc, fin, strlen(fin), &out, &e), 0);
    const char *sfin = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";
    assert_int_equal(out.len, strlen(sfin));
    assert_memory_equal(out.p, sfin, out.len);
    /* one bit of the proof changed: refused with 28P01 */
    const char *bad = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                      "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVU=";
    qr_buf_clear(&out);
    assert_int_equal(pgw_scram_final(&wrong, bad, strlen(bad), &out, &e), -1);
    assert_string_equal(e.code, "28P01");
    /* another nonce: a protocol error */
    const char *other = "c=biws,r=xyz,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
    assert_int_equal(pgw_scram_final(&wrong, other, strlen(other), &out, &e), -1);
    assert_string_equal(e.code, "08P01");
    qr_buf_free(&out);
}

static void test_scram_verifier_parse_rejects_garbage(void **st)
{
    pgw_scram_secret s;
    qr_err e;
    assert_int_equal(pgw_scram_parse("md5abc", &s, &e), -1);
    assert_int_equal(pgw_scram_parse("SCRAM-SHA-256$x:AAAA$AAAA:AAAA", &s, &e), -1);
    assert_int_equal(pgw_scram_parse("SCRAM-SHA-256$4096:!!!!$AAAA:AAAA", &s, &e), -1);
    assert_int_equal(pgw_scram_parse("SCRAM-SHA-256$4096:AAAA$AAAA:AAAA", &s, &e),
                     -1); /* short keys */
    assert_string_equal(e.code, "22023");
}

/* ---- parameter substitution ---- */
static char *subst1(const char *sql, uint32_t oid, int16_t fmt, const void *v, int32_t len,
                    qr_err *e)
{
    pgw_param p = {v, len, fmt, oid};
    pgw_text t;
    if (pgw_subst(sql, strlen(sql), &p, 1, &t, e) != 0)
        return NULL;
    char *s = strdup(t.s);
    pgw_text_free(&t);
    return s;
}

static void expect_subst(const char *sql, uint32_t oid, const char *val, const char *want)
{
    qr_err e;
    char *s = subst1(sql, oid, 0, val, val ? (int32_t)strlen(val) : -1, &e);
    if (!s)
        fail_msg("%s with %s: %s %s", sql, val, e.code, e.msg);
    assert_string_equal(s, want);
    free(s);
}

static void test_subst_quotes_text_and_resists_injection(void **st)
{
    expect_subst("SELECT * FROM t WHERE a = $1", 0, "cart", "SELECT * FROM t WHERE a = 'cart'");
    expect_subst("SELECT * FROM t WHERE a = $1", PGW_OID_TEXT, "'); DROP TABLE t; --",
                 "SELECT * FROM t WHERE a = '''); DROP TABLE t; --'");
    expect_subst("SELECT $1", 0, "it's", "SELECT 'it''s'");
    expect_subst("SELECT $1", 0, "a\\'b", "SELECT 'a\\''b'"); /* standard strings: \ is plain */
    expect_subst("SELECT $1", PGW_OID_INT4, NULL, "SELECT NULL");
    /* a $1 inside a string, a quoted name or a comment is not a parameter */
    expect_subst("SELECT '$1', \"$1\", $1 -- $1", 0, "x", "SELECT '$1', \"$1\", 'x' -- $1");
}

static void test_subst_numbers_are_validated(void **st)
{
    expect_subst("SELECT a FROM t WHERE n >= $1", PGW_OID_INT4, "13",
                 "SELECT a FROM t WHERE n >= 13");
    expect_subst("SELECT a FROM t WHERE n-$1 > 0", PGW_OID_INT8, "-5",
                 "SELECT a FROM t WHERE n-(-5) > 0");
    expect_subst("SELECT $1", PGW_OID_FLOAT8, "1.5e3", "SELECT 1.5e3");
    expect_subst("SELECT $1", PGW_OID_BOOL, "yes", "SELECT TRUE");
    expect_subst("SELECT $1", PGW_OID_BOOL, "f", "SELECT FALSE");
    qr_err e;
    const char *bad[] = {"1; DROP TABLE t", "1)", "", "1.5", "0x10", "1 2"};
    for (int i = 0; i < 6; i++) {
        assert_null(subst1("SELECT $1", PGW_OID_INT4, 0, bad[i], (int32_t)strlen(bad[i]), &e));
        assert_string_equal(e.code, "22P02");
    }
    assert_null(subst1("SELECT $1", PGW_OID_BOOL, 0, "maybe", 5, &e));
    assert_string_equal(e.code, "22P02");
    assert_null(subst1("SELECT $2", 0, 0, "x", 1, &e)); /* only one parameter bound */
    assert_string_equal(e.code, "08P01");
    assert_null(subst1("SELECT $1", 0, 0, "a\0b", 3, &e));
    assert_string_equal(e.code, "22021");
}

static void test_subst_binary_values_decode_by_type(void **st)
{
    qr_err e;
    const uint8_t i4[4] = {0xff, 0xff, 0xff, 0xfe}; /* -2 */
    char *s = subst1("SELECT $1", PGW_OID_INT4, 1, i4, 4, &e);
    assert_string_equal(s, "SELECT (-2)");
    free(s);
    const uint8_t i8[8] = {0, 0, 0, 1, 0, 0, 0, 0}; /* 2^32 */
    s = subst1("SELECT $1", PGW_OID_INT8, 1, i8, 8, &e);
    assert_string_equal(s, "SELECT 4294967296");
    free(s);
    double d = 0.25;
    uint64_t bits;
    memcpy(&bits, &d, 8);
    uint8_t f8[8];
    for (int i = 0; i < 8; i++)
        f8[i] = (uint8_t)(bits >> (56 - 8 * i));
    s = subst1("SELECT $1", PGW_OID_FLOAT8, 1, f8, 8, &e);
    assert_string_equal(s, "SELECT 0.25");
    free(s);
    const uint8_t b1[1] = {1};
    s = subst1("SELECT $1", PGW_OID_BOOL, 1, b1, 1, &e);
    assert_string_equal(s, "SELECT TRUE");
    free(s);
    /* 2000-01-02 00:00:00.5 UTC = 86400.5 s after PostgreSQL's epoch */
    int64_t us = 86400500000LL;
    uint8_t ts[8];
    for (int i = 0; i < 8; i++)
        ts[i] = (uint8_t)((uint64_t)us >> (56 - 8 * i));
    s = subst1("SELECT $1", PGW_OID_TIMESTAMPTZ, 1, ts, 8, &e);
    assert_string_equal(s, "SELECT '2000-01-02T00:00:00.500000000Z'");
    free(s);
    assert_null(subst1("SELECT $1", PGW_OID_INT4, 1, i8, 8, &e)); /* wrong width */
    assert_string_equal(e.code, "08P01");
    assert_null(subst1("SELECT $1", PGW_OID_NUMERIC, 1, i8, 8, &e));
    assert_string_equal(e.code, "0A000");
}

static void test_subst_maps_positions_back(void **st)
{
    const char *sql = "SELECT $1, bdy FROM t";
    pgw_param p = {(const uint8_t *)"a long value", 12, 0, 0};
    pgw_text t;
    qr_err e;
    assert_int_equal(pgw_subst(sql, strlen(sql), &p, 1, &t, &e), 0);
    assert_string_equal(t.s, "SELECT 'a long value', bdy FROM t");
    long at = (long)(strstr(t.s, "bdy") - t.s) + 1;
    assert_int_equal(pgw_subst_pos(&t, at), 12); /* "bdy" in the client's text */
    assert_int_equal(pgw_subst_pos(&t, 3), 3);   /* before any parameter */
    assert_int_equal(pgw_subst_pos(&t, 10), 8);  /* inside the literal: the $1 */
    pgw_text_free(&t);
    uint32_t maxp;
    assert_int_equal(pgw_param_count("SELECT $3, '$9', $1", 19, &maxp, &e), 0);
    assert_int_equal(maxp, 3);
}

/* ---- types ---- */
static void test_types_oids_and_encodings(void **st)
{
    qr_result r;
    qr_result_init(&r, NULL);
    qr_err e;
    assert_int_equal(qr_result_add_col(&r, "t", QR_RK_INT, QT_TIMESTAMP, QR_TS_RFC3339, &e), 0);
    assert_int_equal(qr_result_add_col(&r, "b", QR_RK_INT, QT_BOOL, 0, &e), 0);
    assert_int_equal(qr_result_add_col(&r, "u", QR_RK_INT, QT_UINT64, 0, &e), 0);
    assert_int_equal(qr_result_add_col(&r, "i", QR_RK_INT, QT_INT32, 0, &e), 0);
    assert_int_equal(qr_result_add_col(&r, "f", QR_RK_FLOAT, 0, 0, &e), 0);
    assert_int_equal(qr_result_add_col(&r, "j", QR_RK_JSON, 0, 0, &e), 0);
    assert_int_equal(pgw_col_oid(&r.cols[0]), 1184);
    assert_int_equal(pgw_col_oid(&r.cols[1]), 16);
    assert_int_equal(pgw_col_oid(&r.cols[2]), 1700);
    assert_int_equal(pgw_col_oid(&r.cols[3]), 23);
    assert_int_equal(pgw_col_oid(&r.cols[4]), 701);
    assert_int_equal(pgw_col_oid(&r.cols[5]), 114);
    qr_buf b;
    qr_buf_init(&b);
    /* 2025-09-23T00:00:00.123456789Z: microseconds kept, nanoseconds cut */
    qr_cell c = {.i = 1758585600123456789LL};
    pgw_cell_encode(&r, 0, &c, 0, &b);
    assert_int_equal(b.len, strlen("2025-09-23 00:00:00.123456+00"));
    assert_memory_equal(b.p, "2025-09-23 00:00:00.123456+00", b.len);
    qr_buf_clear(&b);
    c.i = -1; /* 1 ns before 1970: truncated toward minus infinity */
    pgw_cell_encode(&r, 0, &c, 0, &b);
    assert_memory_equal(b.p, "1969-12-31 23:59:59.999999+00", b.len);
    qr_buf_clear(&b);
    c.i = 1758585600120000000LL; /* trailing zeros dropped, as PostgreSQL prints */
    pgw_cell_encode(&r, 0, &c, 0, &b);
    assert_memory_equal(b.p, "2025-09-23 00:00:00.12+00", b.len);
    qr_buf_clear(&b);
    c.i = 946684800000001000LL; /* binary: us since 2000-01-01 */
    pgw_cell_encode(&r, 0, &c, 1, &b);
    assert_int_equal(b.len, 8);
    assert_memory_equal(b.p, "\0\0\0\0\0\0\0\1", 8);
    qr_buf_clear(&b);
    c.i = 1;
    pgw_cell_encode(&r, 1, &c, 0, &b);
    assert_memory_equal(b.p, "t", 1);
    qr_buf_clear(&b);
    c.i = qr_num_from_u64(UINT64_MAX);
    pgw_cell_encode(&r, 2, &c, 0, &b);
    assert_memory_equal(b.p, "18446744073709551615", b.len);
    qr_buf_clear(&b);
    /* numeric 18446744073709551615 = 1844 6744 0737 0955 1615 (base 10000) */
    pgw_cell_encode(&r, 2, &c, 1, &b);
    const uint8_t num[] = {0,    5,    0,    4,    0,    0,    0,    0,    0x07,
                           0x34, 0x1a, 0x58, 0x02, 0xe1, 0x03, 0xbb, 0x06, 0x4f};
    assert_int_equal(b.len, sizeof num);
    assert_memory_equal(b.p, num, sizeof num);
    qr_buf_clear(&b);
    c.i = qr_num_from_u64(20000); /* 2 0000: one digit, weight 1 */
    pgw_cell_encode(&r, 2, &c, 1, &b);
    const uint8_t num2[] = {0, 1, 0, 1, 0, 0, 0, 0, 0, 2};
    assert_memory_equal(b.p, num2, sizeof num2);
    qr_buf_clear(&b);
    c.i = -7;
    pgw_cell_encode(&r, 3, &c, 1, &b);
    assert_memory_equal(b.p, "\xff\xff\xff\xf9", 4);
    qr_buf_clear(&b);
    c.f = 0.1;
    pgw_cell_encode(&r, 4, &c, 0, &b);
    assert_memory_equal(b.p, "0.1", b.len);
    qr_buf_free(&b);
    qr_result_free(&r);
}

/* ---- whole connections over memory ---- */
typedef struct conv {
    qr_buf in, out;
    pt_msg m[4096];
    char types[4097];
    int n;
    size_t nrefusals;
} conv;

static void conv_run(conv *cv, int auth)
{
    pgw_config cfg;
    pgw_config_default(&cfg);
    cfg.port = -1;
    cfg.auth = auth;
    qr_err e;
    char v[256];
    assert_int_equal(pgw_scram_verifier("secret", (const uint8_t *)"0123456789abcdef", 16, 4096, v,
                                        sizeof v, &e),
                     0);
    pgw_user alice = {"alice", v};
    pgw_users us = {&alice, 1};
    cfg.users = &us;
    pgw_server *s = pgw_server_new(&cfg, db, &e);
    if (!s)
        fail_msg("server: %s", e.msg);
    pgw_io io;
    qr_buf_init(&cv->out);
    pgw_io_init_mem(&io, cv->in.p, cv->in.len, &cv->out);
    pgw_serve_io(s, &io);
    pgw_io_free(&io);
    pgw_server_free(s);
    size_t skip = 0; /* answers to SSLRequest / GSSENCRequest: one byte each */
    while (skip < cv->out.len && cv->out.p[skip] == 'N' && skip < cv->nrefusals)
        cv->types[skip++] = 'N';
    qr_buf rest = {cv->out.p + skip, cv->out.len - skip, 0, 0};
    cv->n = pt_walk(&rest, cv->m, 4096, cv->types + skip);
}

static conv *conv_new(int with_startup)
{
    conv *cv = calloc(1, sizeof *cv);
    qr_buf_init(&cv->in);
    if (with_startup)
        pt_startup(&cv->in, "quarry", "quarry");
    return cv;
}

static void conv_free(conv *cv)
{
    qr_buf_free(&cv->in);
    qr_buf_free(&cv->out);
    free(cv);
}

#define SESSION_START "RSSSSSSSSSSSKZ" /* AuthenticationOk, 11 ParameterStatus, key, ready */

/* The types after the session start, and the last error's fields. */
static const char *after_start(conv *cv)
{
    assert_true(!strncmp(cv->types, SESSION_START, strlen(SESSION_START)));
    return cv->types + strlen(SESSION_START);
}

static const pt_msg *last_error(conv *cv)
{
    for (int i = cv->n - 1; i >= 0; i--)
        if (cv->m[i].type == 'E')
            return &cv->m[i];
    fail_msg("no ErrorResponse in %s", cv->types);
    return NULL;
}

static void expect_fatal(conv *cv, const char *code, const char *msg_part)
{
    const pt_msg *m = last_error(cv);
    assert_int_equal(cv->types[cv->n - 1], 'E'); /* the last message: then closed */
    assert_string_equal(pt_field(m, 'S'), "FATAL");
    assert_string_equal(pt_field(m, 'C'), code);
    if (!strstr(pt_field(m, 'M'), msg_part))
        fail_msg("message '%s' lacks '%s'", pt_field(m, 'M'), msg_part);
}

static void test_startup_malformed_packets_close_with_08P01(void **st)
{
    const struct {
        const char *bytes;
        size_t n;
        const char *code, *msg;
    } cases[] = {
        {"\0\0\0\3", 4, "08P01", "invalid startup packet length 3"},
        {"\x80\0\0\0", 4, "08P01", "invalid startup packet length 2147483648"},
        {"\x7f\xff\xff\xff", 4, "08P01", "invalid startup packet length"},
        /* the limit counts the length word, as PostgreSQL's: refused at
         * once (it was waited for until the startup timeout) */
        {"\0\0\x27\x11", 4, "08P01", "invalid startup packet length 10001 (limit 10000 bytes)"},
        {"\0\0\0\x64\0\3\0\0user", 12, "08P01", "input ended inside a message"},
        {"\0\0\0\x08\0\2\0\0", 8, "0A000", "unsupported frontend protocol 2.0"},
        {"\0\0\0\x0e\0\3\0\0user\0x", 14, "08P01", "invalid startup packet layout"},
        {"\0\0\0\x09\0\3\0\0\0", 9, "28000", "no PostgreSQL user name"},
        {"\0\0\0", 3, "08P01", "input ended inside a message"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        conv *cv = conv_new(0);
        qr_buf_put(&cv->in, cases[i].bytes, cases[i].n);
        conv_run(cv, PGW_AUTH_TRUST);
        assert_string_equal(cv->types, "E");
        expect_fatal(cv, cases[i].code, cases[i].msg);
        conv_free(cv);
    }
}

static void test_ssl_request_refused_then_plain_session(void **st)
{
    conv *cv = conv_new(0);
    qr_buf_put(&cv->in, "\0\0\0\x08\x04\xd2\x16\x2f", 8); /* SSLRequest */
    qr_buf_put(&cv->in, "\0\0\0\x08\x04\xd2\x16\x30", 8); /* GSSENCRequest */
    pt_startup(&cv->in, "quarry", NULL);                  /* database = user */
    cv->nrefusals = 2;
    pt_empty(&cv->in, 'X');
    conv_run(cv, PGW_AUTH_TRUST);
    assert_string_equal(cv->types, "NN" SESSION_START);
    conv_free(cv);
    cv = conv_new(0);
    pt_startup(&cv->in, "quarry", "other");
    conv_run(cv, PGW_AUTH_TRUST);
    expect_fatal(cv, "3D000", "database \"other\" does not exist");
    conv_free(cv);
}

static void test_bad_messages_after_startup_close_with_08P01(void **st)
{
    const struct {
        const char *bytes;
        size_t n;
        const char *msg;
    } cases[] = {
        {"Q\x7f\xff\xff\xff", 5, "invalid message length 2147483647"},
        {"Q\x40\0\0\0", 5, "invalid message length 1073741824"},
        {"Q\0\0\0\2", 5, "invalid message length 2"},
        {"z\0\0\0\4", 5, "invalid frontend message type 122"},
        {"B\0\0\0\x06\0\0", 7, "invalid Bind message format"},
        {"E\0\0\0\x05\0", 6, "invalid Execute message format"},
        {"D\0\0\0\x06Z\0", 7, "invalid Describe message format"},
        {"P\0\0\0\x08\0\0\xff\xff", 9, "invalid Parse message format"},
    };
    for (size_t i = 0; i <= sizeof cases / sizeof cases[0]; i++) {
        conv *cv = conv_new(1);
        if (i == sizeof cases / sizeof cases[0]) { /* the input ends inside a message */
            qr_buf_put(&cv->in, "Q\0\0\0\x20SELECT", 11);
            conv_run(cv, PGW_AUTH_TRUST);
            expect_fatal(cv, "08P01", "input ended inside a message");
            conv_free(cv);
            break;
        }
        qr_buf_put(&cv->in, cases[i].bytes, cases[i].n);
        pt_query(&cv->in, "SELECT count(*) FROM logs"); /* never reached */
        conv_run(cv, PGW_AUTH_TRUST);
        if (strcmp(after_start(cv), "E"))
            fail_msg("case %zu: %s", i, cv->types);
        expect_fatal(cv, "08P01", cases[i].msg);
        conv_free(cv);
    }
}

static void test_simple_query_messages(void **st)
{
    conv *cv = conv_new(1);
    pt_query(&cv->in,
             "SELECT count(*) FROM logs; SELECT count(*) FROM logs WHERE ServiceName = 'cart'");
    pt_query(&cv->in, "  ;  ");
    pt_query(&cv->in, "SELECT count(*) FROM logs; SELECT bdy FROM logs; SELECT count(*) FROM logs");
    pt_empty(&cv->in, 'X');
    conv_run(cv, PGW_AUTH_TRUST);
    /* two results; an empty query; a result, the error, the third skipped */
    assert_string_equal(after_start(cv), "TDCTDCZ"
                                         "IZ"
                                         "TDCEZ");
    int k = (int)strlen(SESSION_START);
    char t[64];
    assert_string_equal(pt_cell0(&cv->m[k + 1], t, sizeof t), "3000");
    assert_string_equal((const char *)cv->m[k + 2].body, "SELECT 1");
    const pt_msg *e = last_error(cv);
    assert_string_equal(pt_field(e, 'S'), "ERROR");
    assert_string_equal(pt_field(e, 'C'), "42703");
    assert_string_equal(pt_field(e, 'M'), "column \"bdy\" does not exist");
    assert_string_equal(pt_field(e, 'P'), "35"); /* in the whole text: 27 + 8 */
    conv_free(cv);
}

static void test_extended_row_limits_suspend_the_portal(void **st)
{
    conv *cv = conv_new(1);
    pt_parse(&cv->in, "s1", "SELECT Timestamp FROM logs LIMIT 10", 0, NULL);
    pt_bind(&cv->in, "p1", "s1", 0, NULL, 0);
    pt_describe(&cv->in, 'P', "p1");
    pt_execute(&cv->in, "p1", 4);
    pt_execute(&cv->in, "p1", 4);
    pt_execute(&cv->in, "p1", 4);
    pt_empty(&cv->in, 'S');
    /* after Sync the portal is gone; the statement stays */
    pt_execute(&cv->in, "p1", 0);
    pt_empty(&cv->in, 'S');
    pt_bind(&cv->in, "", "s1", 0, NULL, 0);
    pt_execute(&cv->in, "", 0);
    pt_empty(&cv->in, 'S');
    pt_empty(&cv->in, 'X');
    conv_run(cv, PGW_AUTH_TRUST);
    assert_string_equal(after_start(cv), "12T"
                                         "DDDDs"
                                         "DDDDs"
                                         "DDC"
                                         "Z"
                                         "EZ"
                                         "2DDDDDDDDDDCZ");
    int k = (int)strlen(SESSION_START);
    assert_string_equal((const char *)cv->m[k + 15].body, "SELECT 2"); /* rows of this Execute */
    assert_string_equal(pt_field(&cv->m[k + 17], 'C'), "34000");
    conv_free(cv);
}

static void test_extended_errors_skip_to_sync(void **st)
{
    conv *cv = conv_new(1);
    const uint32_t oids[] = {PGW_OID_TEXT};
    const char *vals[] = {"cart"};
    pt_parse(&cv->in, "", "SELECT bdy FROM logs WHERE ServiceName = $1", 1, oids);
    pt_bind(&cv->in, "", "", 1, vals, 0);
    pt_execute(&cv->in, "", 0);
    pt_execute(&cv->in, "", 0); /* discarded */
    pt_empty(&cv->in, 'S');
    pt_parse(&cv->in, "two", "SELECT 1; SELECT 2", 0, NULL);
    pt_empty(&cv->in, 'S');
    pt_parse(&cv->in, "q", "SELECT count(*) FROM logs WHERE ServiceName = $1", 1, oids);
    pt_bind(&cv->in, "", "q", 0, NULL, 0); /* no parameter given */
    pt_empty(&cv->in, 'S');
    pt_describe(&cv->in, 'S', "q");
    pt_bind(&cv->in, "", "q", 1, vals, 1); /* binary result */
    pt_execute(&cv->in, "", 0);
    pt_empty(&cv->in, 'S');
    pt_empty(&cv->in, 'X');
    conv_run(cv, PGW_AUTH_TRUST);
    assert_string_equal(after_start(cv), "12EZ"
                                         "EZ"
                                         "1EZ"
                                         "tT2DCZ");
    int k = (int)strlen(SESSION_START);
    assert_string_equal(pt_field(&cv->m[k + 2], 'C'), "42703");
    assert_string_equal(pt_field(&cv->m[k + 2], 'P'), "8");
    assert_string_equal(pt_field(&cv->m[k + 4], 'C'), "42601");
    assert_string_equal(pt_field(&cv->m[k + 7], 'C'), "08P01");
    /* ParameterDescription: one text parameter */
    assert_int_equal(cv->m[k + 9].len, 6);
    assert_memory_equal(cv->m[k + 9].body, "\0\1\0\0\0\x19", 6);
    /* the count as a binary int8 */
    const pt_msg *d = &cv->m[k + 12];
    assert_int_equal(pgw_load_be32(d->body + 2), 8);
    uint64_t v = (uint64_t)pgw_load_be32(d->body + 6) << 32 | pgw_load_be32(d->body + 10);
    assert_true(v > 0 && v < 3000);
    conv_free(cv);
}

/* ReadyForQuery's status follows the transaction block (sql/tx.h): T in
 * one, E once anything failed in it (also an error the server found
 * itself, a bad Bind), and statements then get 25P02 until COMMIT, which
 * rolls back. */
static void test_ready_status_follows_the_transaction_block(void **st)
{
    conv *cv = conv_new(1);
    const uint32_t oids[] = {PGW_OID_TEXT};
    pt_query(&cv->in, "BEGIN");
    pt_parse(&cv->in, "q", "SELECT count(*) FROM logs WHERE ServiceName = $1", 1, oids);
    pt_bind(&cv->in, "", "q", 0, NULL, 0); /* no parameter given */
    pt_empty(&cv->in, 'S');
    pt_query(&cv->in, "SELECT 1");
    pt_query(&cv->in, "COMMIT");
    pt_query(&cv->in, "SELECT 1");
    pt_empty(&cv->in, 'X');
    conv_run(cv, PGW_AUTH_TRUST);
    assert_string_equal(after_start(cv), "CZ"
                                         "1EZ"
                                         "EZ"
                                         "CZ"
                                         "TDCZ");
    int k = (int)strlen(SESSION_START);
    assert_int_equal(cv->m[k + 1].body[0], 'T');
    assert_string_equal(pt_field(&cv->m[k + 3], 'C'), "08P01");
    assert_int_equal(cv->m[k + 4].body[0], 'E');
    assert_string_equal(pt_field(&cv->m[k + 5], 'C'), "25P02");
    assert_int_equal(cv->m[k + 6].body[0], 'E');
    assert_string_equal((const char *)cv->m[k + 7].body, "ROLLBACK");
    assert_int_equal(cv->m[k + 8].body[0], 'I');
    assert_int_equal(cv->m[k + 12].body[0], 'I');
    conv_free(cv);
}

static void test_scram_over_the_wire_unknown_user_gets_a_challenge(void **st)
{
    conv *cv = conv_new(0);
    pt_startup(&cv->in, "nobody", "quarry");
    size_t at = pgw_msg_begin(&cv->in, 'p');
    pgw_put_str(&cv->in, "SCRAM-SHA-256");
    const char *cf = "n,,n=,r=abcdefghijklmnop";
    pgw_put_i32(&cv->in, (int32_t)strlen(cf));
    qr_buf_put(&cv->in, cf, strlen(cf));
    pgw_msg_end(&cv->in, at);
    conv_run(cv, PGW_AUTH_SCRAM);
    /* the offer and the challenge, as for a real user; then the client left */
    assert_string_equal(cv->types, "RR");
    assert_memory_equal(cv->m[0].body, "\0\0\0\x0aSCRAM-SHA-256\0\0", 19);
    assert_memory_equal(cv->m[1].body, "\0\0\0\x0br=abcdefghijklmnop", 22);
    assert_non_null(memmem(cv->m[1].body, cv->m[1].len, ",i=4096", 7));
    conv_free(cv);
}

/* ---- COPY ---- */
static void pt_copy_data(qr_buf *b, const char *data, size_t n)
{
    size_t at = pgw_msg_begin(b, 'd');
    qr_buf_put(b, data, n);
    pgw_msg_end(b, at);
}

static void pt_copy_fail(qr_buf *b, const char *why)
{
    size_t at = pgw_msg_begin(b, 'f');
    pgw_put_str(b, why);
    pgw_msg_end(b, at);
}

static const char *body_str(const pt_msg *m) { return (const char *)m->body; }

static void test_copy_in_and_out_simple_protocol(void **st)
{
    conv *cv = conv_new(1);
    pt_query(&cv->in, "CREATE TABLE IF NOT EXISTS ct (id bigint, s text)");
    pt_query(&cv->in, "TRUNCATE ct");
    /* data cut mid-line; the statement after the COPY runs after CopyDone */
    pt_query(&cv->in, "COPY ct FROM STDIN; SELECT count(*) FROM ct");
    pt_copy_data(&cv->in, "1\tone\n2\tt", 9);
    pt_empty(&cv->in, 'H'); /* Flush and Sync are ignored during copy-in */
    pt_empty(&cv->in, 'S');
    pt_copy_data(&cv->in, "wo\n", 3);
    pt_empty(&cv->in, 'c');
    /* CopyFail: 57014 with the client's message; later copy messages dropped */
    pt_query(&cv->in, "COPY ct FROM STDIN");
    pt_copy_data(&cv->in, "3\tthree\n", 8);
    pt_copy_fail(&cv->in, "client gave up");
    pt_copy_data(&cv->in, "4\tfour\n", 7);
    pt_empty(&cv->in, 'c');
    /* bad data: the error at once, the rest of the text skipped, nothing visible */
    pt_query(&cv->in, "COPY ct FROM STDIN; SELECT 1");
    pt_copy_data(&cv->in, "5\tfive\nsix\t6\n", 14);
    pt_copy_data(&cv->in, "7\tseven\n", 8);
    pt_empty(&cv->in, 'c');
    /* another message inside copy-in fails the copy */
    pt_query(&cv->in, "COPY ct FROM STDIN");
    pt_query(&cv->in, "SELECT 1");
    pt_query(&cv->in, "SELECT count(*) FROM ct");
    pt_query(&cv->in,
             "COPY ct TO STDOUT; COPY (SELECT s FROM ct ORDER BY id) TO STDOUT (FORMAT csv, "
             "HEADER)");
    pt_query(&cv->in, "COPY nosuch FROM STDIN");
    pt_query(&cv->in, "COPY ct (nope) FROM STDIN");
    pt_empty(&cv->in, 'X');
    conv_run(cv, PGW_AUTH_TRUST);
    assert_string_equal(after_start(cv), "CZ"
                                         "CZ"
                                         "GCTDCZ"
                                         "GEZ"
                                         "GEZ"
                                         "GEZ"
                                         "TDCZ"
                                         "HddcCHdddcCZ"
                                         "EZ"
                                         "EZ");
    int k = (int)strlen(SESSION_START) + 4;
    /* CopyInResponse: text, 2 columns of text */
    assert_int_equal(cv->m[k].len, 7);
    assert_memory_equal(cv->m[k].body, "\0\0\2\0\0\0\0", 7);
    assert_string_equal(body_str(&cv->m[k + 1]), "COPY 2");
    char t[64];
    assert_string_equal(pt_cell0(&cv->m[k + 3], t, sizeof t), "2");
    const pt_msg *e = &cv->m[k + 7];
    assert_string_equal(pt_field(e, 'C'), "57014");
    assert_string_equal(pt_field(e, 'M'), "COPY from stdin failed: client gave up");
    e = &cv->m[k + 10];
    assert_string_equal(pt_field(e, 'C'), "22P02");
    if (!strstr(pt_field(e, 'M'), "STDIN:2: column \"id\""))
        fail_msg("%s", pt_field(e, 'M'));
    e = &cv->m[k + 13];
    assert_string_equal(pt_field(e, 'C'), "08P01");
    assert_string_equal(pt_field(e, 'M'), "unexpected message type 0x51 during COPY from stdin");
    assert_string_equal(pt_cell0(&cv->m[k + 16], t, sizeof t), "2"); /* nothing of the failures */
    const pt_msg *h = &cv->m[k + 19];
    assert_int_equal(h->type, 'H');
    assert_memory_equal(h->body, "\0\0\2\0\0\0\0", 7);
    assert_int_equal(cv->m[k + 20].len, 6);
    assert_memory_equal(cv->m[k + 20].body, "1\tone\n", 6);
    assert_memory_equal(cv->m[k + 21].body, "2\ttwo\n", 6);
    assert_string_equal(body_str(&cv->m[k + 23]), "COPY 2");
    assert_memory_equal(cv->m[k + 25].body, "s\n", 2);
    assert_memory_equal(cv->m[k + 27].body, "two\n", 4);
    e = &cv->m[k + 31];
    assert_string_equal(pt_field(e, 'C'), "42P01");
    assert_string_equal(pt_field(e, 'P'), "6");
    assert_string_equal(pt_field(&cv->m[k + 33], 'C'), "42703");
    conv_free(cv);
}

static void test_copy_extended_protocol(void **st)
{
    conv *cv = conv_new(1);
    pt_query(&cv->in, "CREATE TABLE IF NOT EXISTS ct (id bigint, s text)");
    pt_query(&cv->in, "TRUNCATE ct");
    /* Execute enters copy-in; the Sync sent with it is ignored, the one after CopyDone answers */
    pt_parse(&cv->in, "", "COPY ct FROM STDIN (FORMAT csv)", 0, NULL);
    pt_bind(&cv->in, "", "", 0, NULL, 0);
    pt_describe(&cv->in, 'P', "");
    pt_execute(&cv->in, "", 0);
    pt_empty(&cv->in, 'S');
    pt_copy_data(&cv->in, "1,\"a,b\"\n2,", 10);
    pt_copy_data(&cv->in, "\n", 1);
    pt_empty(&cv->in, 'c');
    pt_empty(&cv->in, 'S');
    /* an error: everything up to Sync is discarded */
    pt_parse(&cv->in, "", "COPY ct FROM STDIN (FORMAT csv)", 0, NULL);
    pt_bind(&cv->in, "", "", 0, NULL, 0);
    pt_execute(&cv->in, "", 0);
    pt_copy_data(&cv->in, "3\n", 2);
    pt_copy_data(&cv->in, "4,x\n", 4);
    pt_empty(&cv->in, 'c');
    pt_execute(&cv->in, "", 0);
    pt_empty(&cv->in, 'S');
    /* copy-out at Execute, with a parameter */
    const char *v[] = {"0"};
    const uint32_t oids[] = {PGW_OID_INT8};
    pt_parse(&cv->in, "", "COPY (SELECT id, s FROM ct WHERE id > $1 ORDER BY id) TO STDOUT", 1,
             oids);
    pt_bind(&cv->in, "", "", 1, v, 0);
    pt_describe(&cv->in, 'P', "");
    pt_execute(&cv->in, "", 0);
    pt_empty(&cv->in, 'S');
    pt_empty(&cv->in, 'X');
    conv_run(cv, PGW_AUTH_TRUST);
    assert_string_equal(after_start(cv), "CZ"
                                         "CZ"
                                         "12nGCZ"
                                         "12GEZ"
                                         "12nHddcCZ");
    int k = (int)strlen(SESSION_START) + 4;
    assert_string_equal(body_str(&cv->m[k + 4]), "COPY 2");
    assert_string_equal(pt_field(&cv->m[k + 9], 'C'), "22P04");
    assert_memory_equal(cv->m[k + 15].body, "1\ta,b\n", 6);
    assert_memory_equal(cv->m[k + 16].body, "2\t\\N\n", 5);
    conv_free(cv);
}

/* One CopyData at the 16 MiB message limit: taken whole, rows counted. */
static void test_copy_in_one_message_at_the_limit(void **st)
{
    conv *cv = conv_new(1);
    pt_query(&cv->in, "CREATE TABLE IF NOT EXISTS ct (id bigint, s text)");
    pt_query(&cv->in, "TRUNCATE ct");
    pt_query(&cv->in, "COPY ct FROM STDIN");
    size_t at = pgw_msg_begin(&cv->in, 'd');
    size_t room = PGW_MAX_MSG - 4, rows = 0;
    char line[64];
    for (;;) {
        int n = snprintf(line, sizeof line, "%zu\tsome text for row %zu\n", rows, rows);
        if (cv->in.len - at - 4 + (size_t)n + 32 > room)
            break;
        qr_buf_put(&cv->in, line, (size_t)n);
        rows++;
    }
    int n = snprintf(line, sizeof line, "%zu\t", rows);
    qr_buf_put(&cv->in, line, (size_t)n);
    while (cv->in.len - at - 4 < room) /* a last row whose text fills to the exact limit */
        qr_buf_put_u8(&cv->in, 'x');
    cv->in.p[cv->in.len - 1] = '\n';
    pgw_msg_end(&cv->in, at);
    assert_int_equal(pgw_load_be32(cv->in.p + at), PGW_MAX_MSG);
    pt_empty(&cv->in, 'c');
    pt_query(&cv->in, "SELECT count(*) FROM ct");
    pt_query(&cv->in, "TRUNCATE ct");
    pt_empty(&cv->in, 'X');
    conv_run(cv, PGW_AUTH_TRUST);
    assert_string_equal(after_start(cv), "CZCZGCZTDCZCZ");
    int k = (int)strlen(SESSION_START) + 5;
    char want[32], t[64];
    snprintf(want, sizeof want, "COPY %zu", rows + 1);
    assert_string_equal(body_str(&cv->m[k]), want);
    snprintf(want, sizeof want, "%zu", rows + 1);
    assert_string_equal(pt_cell0(&cv->m[k + 3], t, sizeof t), want);
    conv_free(cv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scram_rfc7677_vector),
        cmocka_unit_test(test_scram_verifier_parse_rejects_garbage),
        cmocka_unit_test(test_subst_quotes_text_and_resists_injection),
        cmocka_unit_test(test_subst_numbers_are_validated),
        cmocka_unit_test(test_subst_binary_values_decode_by_type),
        cmocka_unit_test(test_subst_maps_positions_back),
        cmocka_unit_test(test_types_oids_and_encodings),
        cmocka_unit_test(test_startup_malformed_packets_close_with_08P01),
        cmocka_unit_test(test_ssl_request_refused_then_plain_session),
        cmocka_unit_test(test_bad_messages_after_startup_close_with_08P01),
        cmocka_unit_test(test_simple_query_messages),
        cmocka_unit_test(test_extended_row_limits_suspend_the_portal),
        cmocka_unit_test(test_extended_errors_skip_to_sync),
        cmocka_unit_test(test_ready_status_follows_the_transaction_block),
        cmocka_unit_test(test_scram_over_the_wire_unknown_user_gets_a_challenge),
        cmocka_unit_test(test_copy_in_and_out_simple_protocol),
        cmocka_unit_test(test_copy_extended_protocol),
        cmocka_unit_test(test_copy_in_one_message_at_the_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
