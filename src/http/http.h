/* http.h - the HTTP ingest listener of `quarry serve --http` (docs/SERVER.md
 * "HTTP ingest"): NDJSON (POST /v1/ingest/<table>), Elasticsearch's _bulk
 * (POST /_bulk, POST /<index>/_bulk) and OTLP/HTTP logs (POST /v1/logs,
 * protobuf or JSON), over libmicrohttpd (one thread per connection), into
 * the same row writer as INSERT and COPY (sql/rows.h): a request's rows are
 * in committed, fsynced segments before it is answered 200.
 *
 * Layer: above sql, next to server (it reuses server.h's users file and
 * auth rules). Lifecycle: qh_server_new binds, listens and starts serving
 * at once from libmicrohttpd's threads; qh_server_free stops accepting,
 * lets running requests end and frees everything.
 *
 * The parsers are exposed too (tests, fuzz/fuzz_http.c): they touch no
 * database. */
#ifndef QR_HTTP_H
#define QR_HTTP_H
#include <stddef.h>
#include <stdint.h>

#include "server/server.h"
#include "sql/sql.h"
#include "util/buf.h"
#include "util/err.h"

#define QH_DEFAULT_MAX_BODY (64ull << 20)

typedef struct qh_config {
    const char *host;       /* numeric IPv4/IPv6 address or "localhost" (default 127.0.0.1) */
    int port;               /* 0: any free port */
    int auth;               /* PGW_AUTH_TRUST, or PGW_AUTH_SCRAM: HTTP Basic checked against
                             * the users' SCRAM verifiers */
    const pgw_users *users; /* the users file (may be NULL), besides CREATE USER's */
    uint64_t max_body;      /* bytes of a request body, before and after gzip (413 past it) */
    int max_conn;           /* connections at once (default 64) */
    int timeout_s;          /* an idle connection is closed after this (default 60) */
} qh_config;

void qh_config_default(qh_config *c);
/* The PostgreSQL port's rule: beyond loopback only with SCRAM (22023). */
int qh_config_check(const qh_config *c, qr_err *e);

typedef struct qh_server qh_server;
/* Check cfg, load the idempotency store (DATA/HTTP_IDEMPOTENCY), bind,
 * listen and serve. NULL with e set. Keeps cfg's pointers and db. */
qh_server *qh_server_new(const qh_config *cfg, qr_sql_db *db, qr_err *e);
int qh_server_port(const qh_server *s);
/* Stop and free (NULL is a no-op): no new connections, running requests
 * finish first. */
void qh_server_free(qh_server *s);

/* ---- the _bulk body (bulk.c) ---- */
enum { QH_BULK_INDEX = 1, QH_BULK_CREATE, QH_BULK_UPDATE, QH_BULK_DELETE };
typedef struct qh_bulk_item {
    int op;          /* QH_BULK_* */
    char index[128]; /* "_index" ("" = the path's) */
    char id[512];    /* "_id" */
    int has_id;
    const char *doc; /* the source line (INDEX, CREATE, UPDATE), into the caller's line */
    size_t ndoc;
    uint64_t line; /* the action line's number (from 1) */
    char bad[200]; /* "" or why the action cannot be done (a per-item 400) */
} qh_bulk_item;
typedef struct qh_bulk {
    int want_doc;    /* the action line was read; its source line is next */
    uint64_t line;   /* lines seen */
    qh_bulk_item it; /* the item being read */
} qh_bulk;
void qh_bulk_init(qh_bulk *b);
/* Take the next line of the body (no '\n'; a trailing '\r' is ignored).
 * 1: an item is complete (*out; its doc points into this line), 0: more is
 * needed (an action line that wants its source, or a blank line), -1: a
 * malformed action line (e: 22P02 naming the line; the whole request is
 * refused, as Elasticsearch does). An action with metadata Quarry does not
 * take (update, delete, an _id too long, a bad _index) is still an item,
 * with it->bad set. */
int qh_bulk_line(qh_bulk *b, const char *line, size_t n, qh_bulk_item *out, qr_err *e);
/* At the end of the body: 0, or -1 when an action's source line is
 * missing. */
int qh_bulk_finish(const qh_bulk *b, qr_err *e);

/* ---- OTLP logs to rows (otlp_pb.c, otlp_json.c, otlp_map.c) ----
 * Each log record becomes one NDJSON object of the OpenTelemetry table's 15
 * columns (format/schema.h), mapped as the OpenTelemetry Collector's
 * ClickHouse exporter maps them: Timestamp = time_unix_nano (or the
 * observed time when 0), TraceId / SpanId lowercase hex ("" when empty),
 * TraceFlags = flags & 0xff, SeverityText, SeverityNumber, ServiceName =
 * the resource attribute service.name, Body and every attribute value as
 * text (AnyValue's AsString: strings as they are, integers in decimal,
 * doubles shortest, bools true/false, bytes base64, arrays and maps as
 * JSON), the resource's and scope's schema URLs, scope name and version,
 * and the three attribute maps. row(arg, line, n, e) gets each record:
 * 0 taken, 1 rejected (counted), -1 stop (fatal; e set). */
typedef int (*qh_row_fn)(void *arg, const char *line, size_t n, qr_err *e);
/* ExportLogsServiceRequest in protobuf. 0 with *records the number of log
 * records seen and *rejected those row() refused, or -1 with e set
 * (22P02: not a valid message; or row()'s error). */
int qh_otlp_pb_rows(const uint8_t *p, size_t n, qh_row_fn row, void *arg, uint64_t *records,
                    uint64_t *rejected, qr_err *e);
/* The same in OTLP's JSON encoding (camelCase or snake_case names, hex ids,
 * 64-bit integers as strings or numbers, severityNumber as a number or its
 * enum name). */
int qh_otlp_json_rows(const char *p, size_t n, qh_row_fn row, void *arg, uint64_t *records,
                      uint64_t *rejected, qr_err *e);
/* ExportLogsServiceResponse: protobuf bytes or JSON text into out
 * (rejected 0: an empty message, as the spec asks). */
void qh_otlp_response_pb(uint64_t rejected, const char *msg, qr_buf *out);
void qh_otlp_response_json(uint64_t rejected, const char *msg, qr_buf *out);
#endif
