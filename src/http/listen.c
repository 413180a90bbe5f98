/* listen.c - the HTTP listener and router (http.h): a libmicrohttpd daemon
 * on a socket bound here (so the address rules and port 0 behave as the
 * PostgreSQL port's), one thread per connection. Each request goes:
 * authentication (Basic, with --auth scram) -> route (404 / 405) ->
 * Content-Type (415) and Content-Encoding (identity or gzip, else 415) ->
 * Content-Length against the limit (413) -> Idempotency-Key (an answer
 * stored before is sent again) -> the endpoint, fed the body as it
 * arrives, inflated on the fly (zlib) and cut into lines for NDJSON and
 * _bulk, held whole for OTLP; more than max_body bytes before or after
 * inflating is a 413 and stores nothing. Every answer is JSON (OTLP: its
 * own encodings) and carries X-Elastic-Product: Elasticsearch, which the
 * Elasticsearch clients check. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>
#include <zlib.h>

#include "http/http_int.h"
#include "util/json.h"

#define CHUNK (64u << 10)

struct qh_server {
    qh_config cfg;
    qr_sql_db *db;
    qh_idem *idem;
    struct MHD_Daemon *d;
    int fd, port;
};

typedef struct hreq {
    qh_req q;
    qh_server *srv;
    int started; /* the endpoint was started (the body goes to it) */
    int gzip;
    z_stream z;
    int z_init, z_end;
    uint64_t raw, dec; /* body bytes received, after inflating */
    qr_buf part;       /* lines mode: the line being cut */
    int replay;        /* answer = a stored one */
    int claimed;       /* holds the Idempotency-Key claim */
} hreq;

void qh_config_default(qh_config *c)
{
    memset(c, 0, sizeof *c);
    c->host = "127.0.0.1";
    c->port = 9200;
    c->auth = PGW_AUTH_TRUST;
    c->max_body = QH_DEFAULT_MAX_BODY;
    c->max_conn = 64;
    c->timeout_s = 60;
}

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a))
            return a->s6_addr[12] == 127;
        return IN6_IS_ADDR_LOOPBACK(a);
    }
    return 0;
}

static struct addrinfo *resolve(const char *host, int port, qr_err *e)
{
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    if (strcmp(host, "localhost") != 0)
        hints.ai_flags |= AI_NUMERICHOST;
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(strcmp(host, "localhost") ? host : "127.0.0.1", ps, &hints, &ai);
    if (rc != 0) {
        qr_errf(e, QR_E_ARGS, "--http: invalid address \"%s\": %s", host, gai_strerror(rc));
        return NULL;
    }
    return ai;
}

int qh_config_check(const qh_config *c, qr_err *e)
{
    struct addrinfo *ai = resolve(c->host, c->port, e);
    if (!ai)
        return -1;
    int loop = is_loopback(ai->ai_addr);
    freeaddrinfo(ai);
    if (!loop && c->auth != PGW_AUTH_SCRAM)
        return qr_errf(e, QR_E_ARGS,
                       "refusing to listen on %s without authentication (--auth scram)", c->host);
    if (c->max_body == 0)
        return qr_errf(e, QR_E_ARGS, "--http-max-body must be positive");
    return 0;
}

void qh_req_error(qh_req *q, int status, const char *code, const char *msg, uint64_t line)
{
    q->done = 1;
    q->status = status;
    snprintf(q->ctype, sizeof q->ctype, "application/json");
    qr_buf_clear(&q->resp);
    qr_buf_put(&q->resp, "{\"error\":{\"code\":", 17);
    qj_write_string(&q->resp, code, strlen(code));
    qr_buf_put(&q->resp, ",\"message\":", 11);
    qj_write_string(&q->resp, msg, strlen(msg));
    if (line) {
        char num[48];
        snprintf(num, sizeof num, ",\"line\":%llu", (unsigned long long)line);
        qr_buf_put(&q->resp, num, strlen(num));
    }
    qr_buf_put(&q->resp, "},\"status\":", 11);
    char st[16];
    snprintf(st, sizeof st, "%d}", status);
    qr_buf_put(&q->resp, st, strlen(st));
}

static enum MHD_Result send_answer(struct MHD_Connection *c, int status, const char *ctype,
                                   const void *body, size_t n, int replay)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(n, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", ctype);
    MHD_add_response_header(r, "X-Elastic-Product", "Elasticsearch");
    if (replay)
        MHD_add_response_header(r, "Idempotent-Replayed", "true");
    if (status == 405)
        MHD_add_response_header(r, "Allow", "POST");
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result send_req(struct MHD_Connection *c, hreq *h)
{
    qh_req *q = &h->q;
    if (q->resp.oom)
        qh_req_error(q, 503, QR_E_NOMEM, "out of memory", 0);
    return send_answer(c, q->status, q->ctype, q->resp.p ? (const void *)q->resp.p : "",
                       q->resp.len, h->replay);
}

static enum MHD_Result send_error(struct MHD_Connection *c, int status, const char *code,
                                  const char *msg)
{
    qh_req q;
    memset(&q, 0, sizeof q);
    qr_buf_init(&q.resp);
    qh_req_error(&q, status, code, msg, 0);
    enum MHD_Result rc = send_answer(c, status, "application/json", q.resp.p, q.resp.len, 0);
    qr_buf_free(&q.resp);
    return rc;
}

static int ctype_has(const char *ct, const char *what)
{
    return ct && strcasestr(ct, what) != NULL;
}

enum { EP_NONE, EP_NDJSON, EP_BULK, EP_OTLP, EP_ROOT };

/* The endpoint of a path, and its table or index (path part). */
static int route(const char *url, char *table, size_t cap)
{
    table[0] = 0;
    if (!strncmp(url, "/v1/ingest/", 11) && url[11] && !strchr(url + 11, '/')) {
        snprintf(table, cap, "%s", url + 11);
        return strlen(url + 11) < cap ? EP_NDJSON : EP_NONE;
    }
    if (!strcmp(url, "/v1/logs"))
        return EP_OTLP;
    if (!strcmp(url, "/_bulk"))
        return EP_BULK;
    const char *s = strchr(url + 1, '/');
    if (url[0] == '/' && s && !strcmp(s, "/_bulk") && s > url + 1) {
        if ((size_t)(s - url - 1) >= cap)
            return EP_NONE;
        memcpy(table, url + 1, (size_t)(s - url - 1));
        table[s - url - 1] = 0;
        return EP_BULK;
    }
    if (!strcmp(url, "/"))
        return EP_ROOT;
    return EP_NONE;
}

/* The body, decoded, to the endpoint: lines or the whole. */
static void consume(hreq *h, const char *p, size_t n)
{
    qh_req *q = &h->q;
    if (q->done)
        return;
    h->dec += n;
    if (h->dec > h->srv->cfg.max_body) {
        char msg[96];
        snprintf(msg, sizeof msg, "the request body is over the limit of %llu bytes",
                 (unsigned long long)h->srv->cfg.max_body);
        qh_req_error(q, 413, QR_E_TOO_LONG, msg, 0);
        return;
    }
    if (!q->lines_mode) {
        qr_buf_put(&q->body, p, n);
        if (q->body.oom)
            qh_req_error(q, 503, QR_E_NOMEM, "out of memory", 0);
        return;
    }
    while (n && !q->done) {
        const char *nl = memchr(p, '\n', n);
        size_t take = nl ? (size_t)(nl - p) : n;
        if (!nl) {
            qr_buf_put(&h->part, p, take);
            if (h->part.oom)
                qh_req_error(q, 503, QR_E_NOMEM, "out of memory", 0);
            return;
        }
        q->lines++;
        if (h->part.len) {
            qr_buf_put(&h->part, p, take);
            if (h->part.oom) {
                qh_req_error(q, 503, QR_E_NOMEM, "out of memory", 0);
                return;
            }
            q->on_line(q, (const char *)h->part.p, h->part.len);
            qr_buf_clear(&h->part);
        } else {
            q->on_line(q, p, take);
        }
        p += take + 1;
        n -= take + 1;
    }
}

static void feed(hreq *h, const char *p, size_t n)
{
    if (!h->gzip) {
        consume(h, p, n);
        return;
    }
    unsigned char out[CHUNK];
    h->z.next_in = (unsigned char *)p;
    h->z.avail_in = (uInt)n;
    while (!h->q.done && (h->z.avail_in || h->z.avail_out == 0)) {
        if (h->z_end) { /* a second gzip member follows: read it too (as gzip -d does) */
            if (inflateReset(&h->z) != Z_OK)
                break;
            h->z_end = 0;
        }
        h->z.next_out = out;
        h->z.avail_out = sizeof out;
        int zr = inflate(&h->z, Z_NO_FLUSH);
        if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
            qh_req_error(&h->q, 400, QR_E_INVALID_TEXT, "the gzip body is corrupt", 0);
            return;
        }
        consume(h, (const char *)out, sizeof out - h->z.avail_out);
        if (zr == Z_STREAM_END)
            h->z_end = 1;
        if (zr == Z_BUF_ERROR)
            break;
    }
}

/* The end of the body: the last line, then the endpoint's answer. */
static void finish(hreq *h)
{
    qh_req *q = &h->q;
    if (!q->done && h->gzip && !h->z_end && h->raw)
        qh_req_error(q, 400, QR_E_INVALID_TEXT, "the gzip body is truncated", 0);
    if (!q->done && q->lines_mode && h->part.len) {
        q->lines++;
        q->on_line(q, (const char *)h->part.p, h->part.len);
        qr_buf_clear(&h->part);
    }
    if (!q->done && q->on_end) {
        q->on_end(q);
        q->done = 1;
    }
}

static const char root_answer[] =
    "{\"name\":\"quarry\",\"cluster_name\":\"quarry\",\"cluster_uuid\":\"quarry\","
    "\"version\":{\"number\":\"8.11.0\",\"build_flavor\":\"default\","
    "\"lucene_version\":\"9.8.0\",\"minimum_wire_compatibility_version\":\"7.17.0\","
    "\"minimum_index_compatibility_version\":\"7.0.0\"},\"tagline\":\"You Know, for Search\"}";

/* The first call of a request: everything decided from its headers. 1: the
 * body goes to the endpoint; 0 answered already (rc). */
static int start(hreq *h, struct MHD_Connection *c, const char *url, const char *method,
                 enum MHD_Result *rc)
{
    qh_server *s = h->srv;
    qh_req *q = &h->q;
    if (s->cfg.auth == PGW_AUTH_SCRAM) {
        char *pass = NULL;
        char *user = MHD_basic_auth_get_username_password(c, &pass);
        int ok = user && pass && qh_auth_check(&s->cfg, s->db, user, pass) == 0;
        if (user)
            MHD_free(user);
        if (pass)
            MHD_free(pass);
        if (!ok) {
            qh_req_error(q, 401, "28P01", "authentication failed (HTTP Basic, a Quarry user)", 0);
            struct MHD_Response *r =
                MHD_create_response_from_buffer(q->resp.len, q->resp.p, MHD_RESPMEM_MUST_COPY);
            if (!r) {
                *rc = MHD_NO;
                return 0;
            }
            MHD_add_response_header(r, "Content-Type", "application/json");
            *rc = MHD_queue_basic_auth_fail_response(c, "quarry", r);
            MHD_destroy_response(r);
            return 0;
        }
    }
    int ep = route(url, q->table, sizeof q->table);
    if (ep == EP_NONE) {
        *rc = send_error(c, 404, "42704",
                         "no such endpoint (POST /v1/ingest/TABLE, /_bulk, "
                         "/INDEX/_bulk, /v1/logs)");
        return 0;
    }
    if (ep == EP_ROOT) {
        if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
            *rc = send_error(c, 405, "42601", "method not allowed");
            return 0;
        }
        *rc = send_answer(c, 200, "application/json", root_answer, sizeof root_answer - 1, 0);
        return 0;
    }
    if (strcmp(method, "POST") && !(ep == EP_BULK && !strcmp(method, "PUT"))) {
        *rc = send_error(c, 405, "42601", "method not allowed (POST)");
        return 0;
    }
    const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    int ok_ct;
    if (ep == EP_OTLP) {
        q->json = ctype_has(ct, "json");
        ok_ct = q->json || ctype_has(ct, "application/x-protobuf") ||
                ctype_has(ct, "application/protobuf");
    } else {
        ok_ct = !ct || !ct[0] || ctype_has(ct, "json") || ctype_has(ct, "text/plain");
    }
    if (!ok_ct) {
        char msg[200];
        snprintf(msg, sizeof msg, "unsupported Content-Type \"%.100s\" (%s)", ct,
                 ep == EP_OTLP ? "application/x-protobuf or application/json"
                               : "application/x-ndjson or application/json");
        *rc = send_error(c, 415, QR_E_FEATURE, msg);
        return 0;
    }
    const char *ce = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Encoding");
    if (ce && ce[0] && strcasecmp(ce, "identity") != 0) {
        if (strcasecmp(ce, "gzip") != 0 && strcasecmp(ce, "x-gzip") != 0) {
            *rc =
                send_error(c, 415, QR_E_FEATURE, "unsupported Content-Encoding (gzip or identity)");
            return 0;
        }
        h->gzip = 1;
        memset(&h->z, 0, sizeof h->z);
        if (inflateInit2(&h->z, 15 + 16) != Z_OK) {
            *rc = send_error(c, 503, QR_E_NOMEM, "out of memory");
            return 0;
        }
        h->z_init = 1;
    }
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > s->cfg.max_body) {
        char msg[96];
        snprintf(msg, sizeof msg, "the request body is over the limit of %llu bytes",
                 (unsigned long long)s->cfg.max_body);
        *rc = send_error(c, 413, QR_E_TOO_LONG, msg);
        return 0;
    }
    if (ep == EP_OTLP) {
        const char *t = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Quarry-Table");
        if (!t || !t[0])
            t = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "table");
        if (t && t[0]) {
            if (strlen(t) >= sizeof q->table) {
                *rc = send_error(c, 400, QR_E_ARGS, "the table name is too long");
                return 0;
            }
            snprintf(q->table, sizeof q->table, "%s", t);
        }
    }
    const char *key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key");
    if (key && key[0]) {
        if (strlen(key) >= sizeof q->key) {
            *rc = send_error(c, 400, QR_E_ARGS, "the Idempotency-Key is longer than 255 bytes");
            return 0;
        }
        snprintf(q->key, sizeof q->key, "%s", key);
        qh_reply r;
        int cr = qh_idem_key_claim(s->idem, q->key, &r);
        if (cr == 1) {
            *rc = send_answer(c, r.status, r.ctype, r.body, r.n, 1);
            free(r.body);
            q->key[0] = 0;
            return 0;
        }
        if (cr == 2) {
            *rc = send_error(c, 409, "55P03", "a request with this Idempotency-Key is in progress");
            q->key[0] = 0;
            return 0;
        }
        h->claimed = 1;
    }
    if (ep == EP_NDJSON)
        qh_ndjson_start(q);
    else if (ep == EP_BULK)
        qh_bulk_start(q);
    else
        qh_otlp_start(q);
    h->started = 1;
    return 1;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls)
{
    (void)version;
    qh_server *s = cls;
    hreq *h = *con_cls;
    if (!h) {
        h = calloc(1, sizeof *h);
        if (!h)
            return MHD_NO;
        h->srv = s;
        h->q.db = s->db;
        h->q.idem = s->idem;
        qr_buf_init(&h->q.body);
        qr_buf_init(&h->q.resp);
        qr_buf_init(&h->part);
        *con_cls = h;
        enum MHD_Result rc = MHD_YES;
        if (!start(h, c, url, method, &rc))
            h->q.done = 2; /* answered: the body, if any, is dropped */
        return rc;
    }
    if (h->q.done == 2) {
        *size = 0;
        return MHD_YES;
    }
    if (*size) {
        h->raw += *size;
        if (h->raw > s->cfg.max_body && !h->q.done) {
            char msg[96];
            snprintf(msg, sizeof msg, "the request body is over the limit of %llu bytes",
                     (unsigned long long)s->cfg.max_body);
            qh_req_error(&h->q, 413, QR_E_TOO_LONG, msg, 0);
        }
        feed(h, data, *size);
        *size = 0;
        return MHD_YES;
    }
    finish(h);
    h->q.done = 2;
    return send_req(c, h);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    hreq *h = *con_cls;
    if (!h)
        return;
    if (h->q.on_free)
        h->q.on_free(&h->q); /* drops what was not committed */
    if (h->claimed)
        qh_idem_key_release(h->srv->idem, h->q.key);
    if (h->z_init)
        inflateEnd(&h->z);
    qr_buf_free(&h->q.body);
    qr_buf_free(&h->q.resp);
    qr_buf_free(&h->part);
    free(h);
    *con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    (void)fmt;
    (void)ap; /* libmicrohttpd's own complaints (a client gone mid-request) are not ours to print */
}

qh_server *qh_server_new(const qh_config *cfg, qr_sql_db *db, qr_err *e)
{
    if (qh_config_check(cfg, e) != 0)
        return NULL;
    qh_server *s = calloc(1, sizeof *s);
    if (!s) {
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    s->db = db;
    s->fd = -1;
    if (!(s->idem = qh_idem_open(qr_sql_db_dir(db), e)))
        goto fail;
    struct addrinfo *ai = resolve(cfg->host, cfg->port, e);
    if (!ai)
        goto fail;
    int fam = ai->ai_family;
    s->fd = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (s->fd < 0 || setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(s->fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(s->fd, 128) != 0) {
        qr_errf(e, QR_E_IO, "--http %s:%d: %s", cfg->host, cfg->port, strerror(errno));
        freeaddrinfo(ai);
        goto fail;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(s->fd, (struct sockaddr *)&ss, &sl);
    s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                             : ((struct sockaddr_in *)&ss)->sin_port);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_ERROR_LOG | (fam == AF_INET6 ? MHD_USE_IPv6 : 0);
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, s->fd,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_conn,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->timeout_s,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s, MHD_OPTION_END);
    if (!s->d) {
        qr_errf(e, QR_E_IO, "--http %s:%d: libmicrohttpd could not start", cfg->host, s->port);
        goto fail;
    }
    return s;
fail:
    if (s->fd >= 0)
        close(s->fd);
    qh_idem_close(s->idem);
    free(s);
    return NULL;
}

int qh_server_port(const qh_server *s) { return s->port; }

void qh_server_free(qh_server *s)
{
    if (!s)
        return;
    MHD_quiesce_daemon(s->d);
    MHD_stop_daemon(s->d); /* joins the connection threads */
    close(s->fd);
    qh_idem_close(s->idem);
    free(s);
}
