/* bulk.c - Elasticsearch's _bulk API: the body parser (action line, then
 * the source line for index / create / update) and the endpoint, which
 * sends each index / create source into its table (the path's index, or
 * the action's _index; a missing table is created from its first document
 * as Elasticsearch's dynamic mapping would) and answers per item in the
 * format shippers check:
 *   {"took":N,"errors":bool,"items":[{"create":{"_index":..,"_id":..,
 *    "_version":1,"result":"created","status":201,...}}, ...]}
 * A create whose _id was stored before (idem.c's window) is a 409
 * version_conflict_engine_exception; an index with a known _id is not
 * stored again (200, "noop"). update and delete are per-item 400 errors;
 * a malformed action line refuses the whole request (400) and stores
 * nothing. */
#include <openssl/rand.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http/http_int.h"
#include "util/json.h"

void qh_bulk_init(qh_bulk *b) { memset(b, 0, sizeof *b); }

static int bad_line(qr_err *e, uint64_t line, const char *why)
{
    return qr_errf(e, QR_E_INVALID_TEXT, "Malformed action/metadata line [%llu], %s",
                   (unsigned long long)line, why);
}

/* Copy a metadata string (at most cap - 1 bytes); 0, or -1 too long / bad. */
static int meta_str(qr_json *j, char *out, size_t cap, qr_arena *a)
{
    qr_slice v;
    if (qj_peek(j) == QJ_NUMBER) { /* "_id": 12 is taken as "12", as ES does */
        if (qj_number(j, &v) != 0)
            return -1;
    } else if (qj_string(j, &v, a) != 0) {
        return -1;
    }
    if (v.n >= cap || memchr(v.p, 0, v.n))
        return 1;
    memcpy(out, v.p, v.n);
    out[v.n] = 0;
    return 0;
}

static int parse_action(qh_bulk *b, const char *line, size_t n, qr_err *e)
{
    qh_bulk_item *it = &b->it;
    memset(it, 0, sizeof *it);
    it->line = b->line;
    char abuf[1024];
    qr_arena a;
    qr_arena_init(&a, sizeof abuf, 0);
    qr_json j;
    qj_init(&j, line, n);
    qr_slice k;
    int rc = -1;
    if (qj_peek(&j) != QJ_OBJECT || qj_object_begin(&j) != 0) {
        bad_line(e, b->line, "expected START_OBJECT");
        goto out;
    }
    int r = qj_object_next(&j, &k, &a);
    if (r != 1) {
        bad_line(e, b->line,
                 r == 0 ? "expected FIELD_NAME but found [END_OBJECT]" : "not valid JSON");
        goto out;
    }
    static const struct {
        const char *name;
        int op;
    } ops[] = {{"index", QH_BULK_INDEX},
               {"create", QH_BULK_CREATE},
               {"update", QH_BULK_UPDATE},
               {"delete", QH_BULK_DELETE}};
    for (unsigned i = 0; i < 4; i++)
        if (k.n == strlen(ops[i].name) && !memcmp(k.p, ops[i].name, k.n))
            it->op = ops[i].op;
    if (!it->op) {
        char why[160];
        snprintf(why, sizeof why,
                 "expected one of [create, delete, index, update] but found [%.*s]",
                 (int)(k.n > 64 ? 64 : k.n), k.p);
        bad_line(e, b->line, why);
        goto out;
    }
    if (qj_peek(&j) != QJ_OBJECT || qj_object_begin(&j) != 0) {
        bad_line(e, b->line, "the action's metadata must be an object");
        goto out;
    }
    while ((r = qj_object_next(&j, &k, &a)) == 1) {
        int m = 0;
        if (k.n == 6 && !memcmp(k.p, "_index", 6)) {
            m = meta_str(&j, it->index, sizeof it->index, &a);
            if (m == 1)
                snprintf(it->bad, sizeof it->bad, "index name too long");
        } else if (k.n == 3 && !memcmp(k.p, "_id", 3)) {
            m = meta_str(&j, it->id, sizeof it->id, &a);
            if (m == 1)
                snprintf(it->bad, sizeof it->bad,
                         "id is too long, must be no longer than 511 bytes");
            it->has_id = m == 0;
        } else { /* routing, pipeline, require_alias, version ...: not used */
            m = qj_skip(&j);
        }
        if (m < 0)
            break;
    }
    if (r != 0 || qj_object_next(&j, &k, &a) != 0 || qj_finish(&j) != 0) {
        bad_line(e, b->line, "the action line is not one JSON object of one action");
        goto out;
    }
    if (it->has_id && it->id[0] == 0)
        snprintf(it->bad, sizeof it->bad, "if _id is specified it must not be empty");
    if (it->op == QH_BULK_UPDATE)
        snprintf(it->bad, sizeof it->bad,
                 "the update action is not supported (index and create are)");
    if (it->op == QH_BULK_DELETE)
        snprintf(it->bad, sizeof it->bad,
                 "the delete action is not supported (index and create are)");
    rc = 0;
out:
    qr_arena_free(&a);
    return rc;
}

int qh_bulk_line(qh_bulk *b, const char *line, size_t n, qh_bulk_item *out, qr_err *e)
{
    b->line++;
    if (n && line[n - 1] == '\r')
        n--;
    if (b->want_doc) {
        b->want_doc = 0;
        b->it.doc = line;
        b->it.ndoc = n;
        *out = b->it;
        return 1;
    }
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i == n)
        return 0; /* blank lines between actions are skipped */
    if (parse_action(b, line, n, e) != 0)
        return -1;
    if (b->it.op == QH_BULK_DELETE) {
        *out = b->it;
        return 1;
    }
    b->want_doc = 1;
    return 0;
}

int qh_bulk_finish(const qh_bulk *b, qr_err *e)
{
    if (b->want_doc)
        return qr_errf(e, QR_E_INVALID_TEXT,
                       "The bulk request must be terminated by a newline [\\n]: the action on "
                       "line %llu has no source line",
                       (unsigned long long)b->it.line);
    return 0;
}

/* ---- the endpoint ---- */
typedef struct bulk_res {
    uint8_t op;
    uint16_t status;                     /* 0: pending (its table's commit decides) */
    uint32_t tab;                        /* with status 0 */
    uint32_t index_off, id_off, err_off; /* into names: NUL-terminated */
} bulk_res;

typedef struct bulk_ep {
    qh_bulk p;
    qh_sink sink;
    bulk_res *res;
    uint64_t nres, capres;
    qr_buf names; /* index names, ids, error texts */
    struct timespec t0;
    long took; /* ms, fixed at the first rendering (-1 before), so a stored answer and the
                * one sent are the same bytes */
} bulk_ep;

static uint32_t name_put(bulk_ep *b, const char *s)
{
    uint32_t at = (uint32_t)b->names.len;
    qr_buf_put(&b->names, s, strlen(s) + 1);
    return at;
}

static int res_add(bulk_ep *b, const qh_bulk_item *it, const char *index, const char *id)
{
    if (b->nres == b->capres) {
        uint64_t nc = b->capres ? b->capres * 2 : 256;
        bulk_res *nr = realloc(b->res, sizeof *nr * nc);
        if (!nr)
            return -1;
        b->res = nr;
        b->capres = nc;
    }
    bulk_res *r = &b->res[b->nres++];
    memset(r, 0, sizeof *r);
    r->op = (uint8_t)it->op;
    r->index_off = name_put(b, index);
    r->id_off = name_put(b, id);
    return b->names.oom ? -1 : 0;
}

static void res_fail(bulk_ep *b, uint64_t seq, int status, const char *why)
{
    bulk_res *r = &b->res[seq];
    if (status == 409 && r->op == QH_BULK_INDEX) {
        r->status = 200; /* a known _id: stored before, not again */
        return;
    }
    r->status = (uint16_t)status;
    r->err_off = name_put(b, why);
}

static void on_fail(void *arg, uint64_t seq, int status, const qr_err *e)
{
    qh_req *q = arg;
    res_fail(q->ep, seq, status, e->msg);
}

/* Ids for documents sent without one: 20 characters of base64url (15
 * bytes), like Elasticsearch's own. Bytes 0..7 count up from the wall
 * clock in nanoseconds when the process first made one; bytes 8..14 are
 * drawn at random once per process. Ids are therefore unique within a
 * process, and across processes unless both the random bytes and the
 * counts collide. One RAND_bytes per process rather than per document:
 * OpenSSL's generator was a tenth of a _bulk connection's CPU. */
static atomic_uint_fast64_t id_next;
static unsigned char id_salt[7];
static pthread_once_t id_once = PTHREAD_ONCE_INIT;

static void id_init(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    atomic_store(&id_next, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
    if (RAND_bytes(id_salt, sizeof id_salt) != 1) {
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
        for (unsigned i = 0; i < sizeof id_salt; i++, x >>= 8)
            id_salt[i] = (unsigned char)x;
    }
}

static void new_id(char *out)
{
    static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    pthread_once(&id_once, id_init);
    uint64_t c = atomic_fetch_add(&id_next, 1);
    unsigned char raw[15];
    for (unsigned i = 0; i < 8; i++)
        raw[i] = (unsigned char)(c >> (56 - 8 * i));
    memcpy(raw + 8, id_salt, sizeof id_salt);
    for (unsigned i = 0; i < 5; i++) {
        uint32_t v = (uint32_t)raw[3 * i] << 16 | (uint32_t)raw[3 * i + 1] << 8 | raw[3 * i + 2];
        for (unsigned k = 0; k < 4; k++)
            out[4 * i + k] = al[(v >> (18 - 6 * k)) & 63];
    }
    out[20] = 0;
}

static int bulk_line(qh_req *q, const char *line, size_t n)
{
    bulk_ep *b = q->ep;
    qh_bulk_item it;
    qr_err e;
    int r = qh_bulk_line(&b->p, line, n, &it, &e);
    if (r < 0) {
        qh_sink_abort(&b->sink);
        qh_req_error(q, 400, e.code, e.msg, b->p.line);
        return -1;
    }
    if (r == 0)
        return 0;
    const char *index = it.index[0] ? it.index : q->table;
    char gen[24];
    const char *id = it.id;
    if (!it.has_id && !it.bad[0]) {
        new_id(gen);
        id = gen;
    }
    uint64_t seq = b->nres;
    if (res_add(b, &it, index, id) != 0) {
        qh_sink_abort(&b->sink);
        qh_req_error(q, 503, QR_E_NOMEM, "out of memory", 0);
        return -1;
    }
    if (it.bad[0]) {
        res_fail(b, seq, 400, it.bad);
        return 0;
    }
    if (!index[0]) {
        res_fail(b, seq, 400, "no _index in the action and none in the path (POST /INDEX/_bulk)");
        return 0;
    }
    uint64_t idh = it.has_id ? qh_id_hash(it.id, strlen(it.id)) : 0;
    uint32_t tab = 0;
    r = qh_sink_add(&b->sink, index, it.doc, it.ndoc, idh, seq, &tab, &e);
    if (r < 0) {
        qh_sink_abort(&b->sink);
        qh_req_error(q, qh_status_of(e.code), e.code, e.msg, 0);
        return -1;
    }
    if (r == 1)
        res_fail(b, seq, qh_status_of(e.code), e.msg);
    else
        b->res[seq].tab = tab;
    return 0;
}

/* v in decimal. */
static void put_dec(qr_buf *o, uint64_t v)
{
    char d[20];
    int n = 0;
    do {
        d[sizeof d - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    qr_buf_put(o, d + sizeof d - n, (size_t)n);
}

static const char *op_name(int op)
{
    return op == QH_BULK_CREATE   ? "create"
           : op == QH_BULK_UPDATE ? "update"
           : op == QH_BULK_DELETE ? "delete"
                                  : "index";
}

static const char *err_type(int status)
{
    return status == 409   ? "version_conflict_engine_exception"
           : status == 404 ? "index_not_found_exception"
           : status == 400 ? "mapper_parsing_exception"
           : status == 503 ? "es_rejected_execution_exception"
                           : "exception";
}

/* The answer, each pending item's status taken from its table's. */
static void render(qh_req *q, bulk_ep *b, qr_buf *o)
{
    if (b->took < 0) {
        struct timespec t1;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        b->took = (t1.tv_sec - b->t0.tv_sec) * 1000 + (t1.tv_nsec - b->t0.tv_nsec) / 1000000;
    }
    long took = b->took;
    int errors = 0;
    for (uint64_t i = 0; i < b->nres; i++) {
        bulk_res *r = &b->res[i];
        int st = r->status ? r->status : b->sink.tabs[r->tab].status;
        if (st >= 300)
            errors = 1;
    }
    char num[160];
    snprintf(num, sizeof num, "{\"took\":%ld,\"errors\":%s,\"items\":[", took,
             errors ? "true" : "false");
    qr_buf_put(o, num, strlen(num));
    for (uint64_t i = 0; i < b->nres; i++) {
        bulk_res *r = &b->res[i];
        const char *why = NULL;
        int st = r->status;
        if (!st) {
            qh_sink_tab *t = &b->sink.tabs[r->tab];
            st = t->status ? t->status : 201;
            if (t->status)
                why = t->err.msg;
        } else if (st >= 300) {
            why = (const char *)b->names.p + r->err_off;
        }
        const char *nm = op_name(r->op);
        if (i)
            qr_buf_put_u8(o, ',');
        qr_buf_put(o, "{\"", 2);
        qr_buf_put(o, nm, strlen(nm));
        qr_buf_put(o, "\":{\"_index\":", 12);
        const char *ix = (const char *)b->names.p + r->index_off;
        qj_write_string(o, ix, strlen(ix));
        qr_buf_put(o, ",\"_id\":", 7);
        const char *id = (const char *)b->names.p + r->id_off;
        if (id[0])
            qj_write_string(o, id, strlen(id));
        else
            qr_buf_put(o, "null", 4);
        if (st < 300) { /* every item gets one: no printf */
            static const char created[] = ",\"_version\":1,\"result\":\"created\",";
            static const char noop[] = ",\"_version\":1,\"result\":\"noop\",";
            if (st == 201)
                qr_buf_put(o, created, sizeof created - 1);
            else
                qr_buf_put(o, noop, sizeof noop - 1);
            static const char shards[] =
                "\"_shards\":{\"total\":1,\"successful\":1,\"failed\":0},\"_seq_no\":";
            qr_buf_put(o, shards, sizeof shards - 1);
            put_dec(o, i);
            static const char term[] = ",\"_primary_term\":1,\"status\":";
            qr_buf_put(o, term, sizeof term - 1);
            put_dec(o, (uint64_t)st);
            qr_buf_put(o, "}}", 2);
        } else {
            snprintf(num, sizeof num, ",\"status\":%d,\"error\":{\"type\":\"%s\",\"reason\":", st,
                     err_type(st));
            qr_buf_put(o, num, strlen(num));
            char reason[700];
            if (st == 409)
                snprintf(reason, sizeof reason, "[%s]: version conflict, document already exists",
                         id);
            else
                snprintf(reason, sizeof reason, "%s", why ? why : "failed");
            qj_write_string(o, reason, strlen(reason));
            qr_buf_put(o, "}}}", 3);
        }
    }
    qr_buf_put(o, "]}", 2);
    (void)q;
}

static int build_reply(void *arg, qh_reply *r)
{
    qh_req *q = arg;
    qr_buf o;
    qr_buf_init(&o);
    render(q, q->ep, &o);
    if (o.oom) {
        qr_buf_free(&o);
        return -1;
    }
    r->status = 200;
    snprintf(r->ctype, sizeof r->ctype, "application/json");
    r->body = o.p;
    r->n = o.len;
    return 0;
}

static void bulk_end(qh_req *q)
{
    bulk_ep *b = q->ep;
    qr_err e;
    if (qh_bulk_finish(&b->p, &e) != 0) {
        qh_sink_abort(&b->sink);
        qh_req_error(q, 400, e.code, e.msg, b->p.line);
        return;
    }
    int rc = qh_sink_commit(&b->sink, q->key[0] ? q->key : NULL, build_reply, on_fail, q);
    (void)rc; /* failed tables' items carry their errors */
    q->status = 200;
    snprintf(q->ctype, sizeof q->ctype, "application/json");
    qr_buf_clear(&q->resp);
    render(q, b, &q->resp);
}

static void bulk_free(qh_req *q)
{
    bulk_ep *b = q->ep;
    if (!b)
        return;
    qh_sink_free(&b->sink);
    free(b->res);
    qr_buf_free(&b->names);
    free(b);
    q->ep = NULL;
}

void qh_bulk_start(qh_req *q)
{
    bulk_ep *b = calloc(1, sizeof *b);
    if (!b) {
        qh_req_error(q, 503, QR_E_NOMEM, "out of memory", 0);
        return;
    }
    qh_bulk_init(&b->p);
    qh_sink_init(&b->sink, q->db, q->idem, 1);
    qr_buf_init(&b->names);
    clock_gettime(CLOCK_MONOTONIC, &b->t0);
    b->took = -1;
    q->ep = b;
    q->lines_mode = 1;
    q->on_line = bulk_line;
    q->on_end = bulk_end;
    q->on_free = bulk_free;
}
