/* http_int.h - what the files of src/http share beyond http.h: the OTLP
 * row builder (otlp_map.c), the idempotency store (idem.c), Basic auth
 * (auth.c), a request's rows (sink.c) and the request itself (listen.c
 * drives it; ndjson.c, bulk.c, otlp.c are its endpoints). Internal. */
#ifndef QR_HTTP_INT_H
#define QR_HTTP_INT_H
#include <pthread.h>
#include <stdint.h>

#include "http/http.h"
#include "sql/rows.h"
#include "util/buf.h"

/* ---- OTLP: one resource, one scope, one record -> one row (otlp_map.c) ---- */
typedef struct qh_otlp_res {
    qr_buf attrs;   /* ResourceAttributes: a JSON object of strings */
    qr_buf service; /* service.name as text ("" when absent) */
    qr_buf schema;  /* ResourceSchemaUrl */
} qh_otlp_res;
typedef struct qh_otlp_scope {
    qr_buf attrs, name, version, schema;
} qh_otlp_scope;
typedef struct qh_otlp_rec {
    uint64_t time_ns, observed_ns;
    char trace[33], span[17]; /* lowercase hex, "" when empty or all zero */
    int bad_id;               /* an id of the wrong length or not hex: rejected */
    uint32_t flags;
    int32_t sev_num;
    qr_buf sev_text, body, attrs; /* attrs: LogAttributes as a JSON object of strings */
} qh_otlp_rec;
void qh_otlp_res_init(qh_otlp_res *r);
void qh_otlp_res_free(qh_otlp_res *r);
void qh_otlp_scope_init(qh_otlp_scope *s);
void qh_otlp_scope_free(qh_otlp_scope *s);
void qh_otlp_rec_init(qh_otlp_rec *r);
void qh_otlp_rec_reset(qh_otlp_rec *r);
void qh_otlp_rec_free(qh_otlp_rec *r);
/* The row's NDJSON object into out (cleared first). */
void qh_otlp_row(const qh_otlp_res *res, const qh_otlp_scope *sc, const qh_otlp_rec *r,
                 qr_buf *out);
/* An id's bytes as lowercase hex into out (2n+1 bytes); "" when all zero. */
void qh_hex_id(const uint8_t *p, size_t n, char *out);
/* Attribute maps: "{" ... "}" with string values (qh_map_put). */
void qh_map_begin(qr_buf *b);
void qh_map_put(qr_buf *b, const char *k, size_t kn, const char *v, size_t vn);
void qh_map_end(qr_buf *b);
/* A double as AsString writes it (shortest text that reads back; NaN,
 * +Inf, -Inf). */
void qh_fmt_double(double d, char *out, size_t cap);

/* ---- idempotency (idem.c; docs/SERVER.md "Idempotency") ---- */
#define QH_IDEM_IDS       100000u     /* per table: create _ids remembered (at least half) */
#define QH_IDEM_KEYS      10000u      /* Idempotency-Key answers remembered */
#define QH_IDEM_KEY_BYTES (64u << 20) /* their bodies, in all */
typedef struct qh_idem qh_idem;
qh_idem *qh_idem_open(const char *datadir, qr_err *e);
void qh_idem_close(qh_idem *m);
/* A stored answer (qh_idem_key_claim 1). body malloc'ed. */
typedef struct qh_reply {
    int status;
    char ctype[64];
    unsigned char *body;
    size_t n;
} qh_reply;
/* 0: key is new and now claimed by the caller (release or store it), 1:
 * answered before (*r filled), 2: a request with this key is running. */
int qh_idem_key_claim(qh_idem *m, const char *key, qh_reply *r);
void qh_idem_key_release(qh_idem *m, const char *key);
/* 1 when table's set holds this _id (the caller holds its writer). */
int qh_idem_has_id(qh_idem *m, const char *table, uint64_t h);
/* A batch about to be committed as generation gen of table (the caller
 * holds its writer): its create _ids (hashes) and, for a request's last
 * commit, its key and answer. The record is fsynced before this returns
 * 0, and counts after a restart only when the table reached gen; the ids
 * are in the set from now on. -1 with e set (nothing recorded). table NULL
 * (no rows to commit): only the key, valid at once. */
int qh_idem_record(qh_idem *m, const char *table, uint64_t gen, const uint64_t *ids, uint32_t nids,
                   const char *key, const qh_reply *r, qr_err *e);
/* After the commit of that batch: ok, or failed (then it is forgotten:
 * a tombstone record, its ids out of the set, the key released). */
void qh_idem_settle(qh_idem *m, const char *table, uint64_t gen, const uint64_t *ids, uint32_t nids,
                    const char *key, int ok);
uint64_t qh_id_hash(const char *id, size_t n);

/* ---- Basic auth (auth.c) ---- */
/* 0 when the Authorization user and password match a verifier (the users
 * file's, then the data directory's LOGIN users), else -1. */
int qh_auth_check(const qh_config *cfg, qr_sql_db *db, const char *user, const char *password);

/* ---- sets of 64-bit hashes (idem.c) ---- */
typedef struct qh_u64set {
    uint64_t *slot;        /* 0 empty, 1 deleted, else a hash (qh_id_hash is never 0 or 1) */
    uint32_t cap, n, used; /* used: slots not empty (n + deleted) */
} qh_u64set;
int qh_u64set_add(qh_u64set *s, uint64_t h); /* 0, or -1 out of memory */
int qh_u64set_has(const qh_u64set *s, uint64_t h);
void qh_u64set_del(qh_u64set *s, uint64_t h);
void qh_u64set_free(qh_u64set *s);

/* ---- a request's rows, per table (sink.c) ----
 * One writer open at a time (a request never holds two tables' writer
 * slots, so requests cannot deadlock on each other): rows for the open
 * table go straight into it; rows for another table wait in memory (the
 * spill, bounded by the body limit) and are written at their table's turn,
 * after it. At the end every table is committed in turn. */
typedef struct qh_sink_tab {
    char name[64]; /* the catalog's spelling */
    int status;    /* 0 ok so far; else the HTTP status of all its items */
    qr_err err;
    qh_u64set ids; /* this request's create _id hashes */
    uint64_t *idv; /* the same in order */
    uint32_t nidv, capidv;
    uint64_t rows;
    int done; /* its rows were written (its turn came) */
} qh_sink_tab;
typedef struct qh_sink_wait {
    uint32_t tab;
    uint64_t seq, idh;
    size_t off, n;
} qh_sink_wait;
typedef struct qh_sink {
    qr_sql_db *db;
    qh_idem *idem;
    int create; /* a missing table: 0 refuse (42P01), 1 infer from its first row,
                 * 2 the OpenTelemetry table */
    qh_sink_tab *tabs;
    uint32_t ntabs;
    int cur; /* the table whose writer is open, or -1 */
    qr_rowwriter w;
    qr_buf spill;
    qh_sink_wait *wait;
    uint64_t nwait, capwait;
} qh_sink;
void qh_sink_init(qh_sink *s, qr_sql_db *db, qh_idem *idem, int create);
/* Add a row for table name; idh the create _id's hash or 0; seq numbers
 * the item. *tab gets the table's index in s->tabs (when it is known).
 * 0 taken (or waiting for its turn), 1 the row is refused (e: an input
 * fault; 409 "version_conflict" for a known _id: code "HT409"; 42P01),
 * -1 a failure of the system (e). */
int qh_sink_add(qh_sink *s, const char *table, const char *line, size_t n, uint64_t idh,
                uint64_t seq, uint32_t *tab, qr_err *e);
/* A waiting row refused at its table's turn. */
typedef void (*qh_item_fail_fn)(void *arg, uint64_t seq, int status, const qr_err *e);
/* The answer to store with the request's Idempotency-Key, built once
 * every table but the last has committed (tabs[].status say how). */
typedef int (*qh_reply_fn)(void *arg, qh_reply *r);
/* Write the waiting rows, commit every table in turn (the last record
 * carries key and build()'s answer when key is not NULL). Table failures
 * are in tabs[].status / err. 0 when every table committed and the key (if
 * any) was stored, else -1. */
int qh_sink_commit(qh_sink *s, const char *key, qh_reply_fn build, qh_item_fail_fn fail, void *arg);
/* Drop everything written (nothing of the request becomes visible). */
void qh_sink_abort(qh_sink *s);
void qh_sink_free(qh_sink *s);
/* ---- a request (listen.c drives it; ndjson.c, bulk.c, otlp.c answer it) ---- */
typedef struct qh_req qh_req;
struct qh_req {
    qr_sql_db *db;
    qh_idem *idem;
    char table[64]; /* from the path, header or query ("" none) */
    char key[256];  /* Idempotency-Key ("" none) */
    int json;       /* OTLP: the JSON encoding (else protobuf) */
    int lines_mode; /* 1: the body comes as lines (on_line), 0: whole (body) */
    qr_buf body;    /* lines_mode 0: the decoded body */
    uint64_t lines; /* lines_mode 1: lines seen */
    int done;       /* the answer is decided (status, resp); later input is dropped */
    int status;
    char ctype[64];
    qr_buf resp;
    void *ep;                                              /* the endpoint's state */
    int (*on_line)(qh_req *q, const char *line, size_t n); /* 0, or -1 with the answer set */
    void (*on_end)(qh_req *q);                             /* sets the answer */
    void (*on_free)(qh_req *q);
};
/* Answer with a JSON error {"error":{"code":..,"message":..}} (line > 0
 * adds "line"). */
void qh_req_error(qh_req *q, int status, const char *code, const char *msg, uint64_t line);
void qh_ndjson_start(qh_req *q);
void qh_bulk_start(qh_req *q);
void qh_otlp_start(qh_req *q);

#define QH_E_CONFLICT "HT409" /* a create _id stored before (HTTP 409) */
/* The HTTP status of an error code (400 for input faults, 404 42P01, 409,
 * 413 54000, 503 53200 / 55P03, 500 otherwise). */
int qh_status_of(const char *code);
#endif
