/* ndjson.c - POST /v1/ingest/<table>: an NDJSON body, one row a line, into
 * an existing table, all or nothing: the rows stream into the table's
 * writer as the body arrives (sql/rows.h: the conversions and checks of
 * INSERT, COPY and `quarry ingest`) and are committed once at the end; the
 * first bad line refuses the request (400, naming the line and its
 * SQLSTATE) and nothing of it is stored. Answer: {"rows": N}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_int.h"

typedef struct nd_ep {
    qh_sink sink;
    uint64_t rows;
} nd_ep;

static int nd_line(qh_req *q, const char *line, size_t n)
{
    nd_ep *p = q->ep;
    if (n && line[n - 1] == '\r')
        n--;
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i == n)
        return 0; /* blank lines are skipped, as quarry ingest does */
    qr_err e;
    uint32_t tab;
    int rc = qh_sink_add(&p->sink, q->table, line, n, 0, q->lines, &tab, &e);
    if (rc != 0) {
        qh_sink_abort(&p->sink);
        char msg[QR_ERR_MSG_MAX + 32];
        if (rc == 1 && strcmp(e.code, QR_E_UNDEFINED_TABLE) != 0)
            snprintf(msg, sizeof msg, "line %llu: %s", (unsigned long long)q->lines, e.msg);
        else
            snprintf(msg, sizeof msg, "%s", e.msg);
        qh_req_error(q, qh_status_of(e.code), e.code, msg,
                     rc == 1 && strcmp(e.code, QR_E_UNDEFINED_TABLE) != 0 ? q->lines : 0);
        return -1;
    }
    p->rows++;
    return 0;
}

static int nd_reply(void *arg, qh_reply *r)
{
    qh_req *q = arg;
    nd_ep *p = q->ep;
    char *b = malloc(48);
    if (!b)
        return -1;
    r->n = (size_t)snprintf(b, 48, "{\"rows\":%llu}", (unsigned long long)p->rows);
    r->body = (unsigned char *)b;
    r->status = 200;
    snprintf(r->ctype, sizeof r->ctype, "application/json");
    return 0;
}

static void nd_end(qh_req *q)
{
    nd_ep *p = q->ep;
    if (qh_sink_commit(&p->sink, q->key[0] ? q->key : NULL, nd_reply, NULL, q) != 0) {
        const qr_err *e = p->sink.ntabs ? &p->sink.tabs[0].err : NULL;
        if (e && e->code[0])
            qh_req_error(q, qh_status_of(e->code), e->code, e->msg, 0);
        else
            qh_req_error(q, 500, QR_E_IO, "could not record the request's Idempotency-Key", 0);
        return;
    }
    qh_reply r;
    if (nd_reply(q, &r) != 0) {
        qh_req_error(q, 503, QR_E_NOMEM, "out of memory", 0);
        return;
    }
    q->status = 200;
    snprintf(q->ctype, sizeof q->ctype, "application/json");
    qr_buf_clear(&q->resp);
    qr_buf_put(&q->resp, r.body, r.n);
    free(r.body);
}

static void nd_free(qh_req *q)
{
    nd_ep *p = q->ep;
    if (!p)
        return;
    qh_sink_free(&p->sink);
    free(p);
    q->ep = NULL;
}

void qh_ndjson_start(qh_req *q)
{
    nd_ep *p = calloc(1, sizeof *p);
    if (!p) {
        qh_req_error(q, 503, QR_E_NOMEM, "out of memory", 0);
        return;
    }
    qh_sink_init(&p->sink, q->db, q->idem, 0);
    q->ep = p;
    q->lines_mode = 1;
    q->on_line = nd_line;
    q->on_end = nd_end;
    q->on_free = nd_free;
}
