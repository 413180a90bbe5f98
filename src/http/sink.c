/* sink.c - a request's rows into its tables (http_int.h "a request's
 * rows"): one writer open at a time, the other tables' rows waiting in
 * memory, every table committed in turn at the end, each commit preceded by
 * its idempotency record (idem.c). A table that does not exist is refused
 * (42P01), inferred from its first row as Elasticsearch's dynamic mapping
 * would (ingest/infer.h), or made the OpenTelemetry table, by s->create. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http_int.h"
#include "ingest/infer.h"

int qh_status_of(const char *code)
{
    if (!strcmp(code, QH_E_CONFLICT))
        return 409;
    if (!strcmp(code, QR_E_UNDEFINED_TABLE))
        return 404;
    if (!strcmp(code, QR_E_TOO_LONG))
        return 413;
    if (!strcmp(code, QR_E_BUSY)) /* back-pressure: shippers retry after a pause */
        return 429;
    if (!strcmp(code, QR_E_DISK_FULL))
        return 507;
    if (!strcmp(code, QR_E_NOMEM) || !strcmp(code, QR_E_LOCKED))
        return 503;
    qr_err e;
    snprintf(e.code, sizeof e.code, "%s", code);
    return qr_err_is_input_fault(&e) ? 400 : 500;
}

void qh_sink_init(qh_sink *s, qr_sql_db *db, qh_idem *idem, int create)
{
    memset(s, 0, sizeof *s);
    s->db = db;
    s->idem = idem;
    s->create = create;
    s->cur = -1;
    qr_buf_init(&s->spill);
}

/* The table (creating it when s->create says so, from line). -1 with e. */
static int table_for(qh_sink *s, const char *name, const char *line, size_t n, qr_err *e)
{
    char canon[64];
    for (uint32_t i = 0; i < s->ntabs; i++)
        if (!strcasecmp(s->tabs[i].name, name))
            return (int)i;
    if (!qr_rows_table(s->db, name, canon, sizeof canon)) {
        if (!s->create)
            return qr_errf(e, QR_E_UNDEFINED_TABLE, "table \"%s\" does not exist", name);
        if (!qr_catalog_name_ok(name))
            return qr_errf(e, QR_E_ARGS,
                           "invalid table name \"%s\" (1-63 letters, digits or '_', not "
                           "starting with a digit)",
                           name);
        qr_tabdef *d =
            s->create == 2 ? qr_tabdef_otel(name) : qr_infer_schema(name, line, n, name, e);
        if (!d)
            return s->create == 2 ? qr_errf(e, QR_E_NOMEM, "out of memory") : -1;
        int created;
        int rc = qr_rows_create_table(s->db, d, &created, canon, sizeof canon, e);
        qr_tabdef_free(d);
        if (rc != 0)
            return -1;
    }
    for (uint32_t i = 0; i < s->ntabs; i++) /* the request named it in another case */
        if (!strcmp(s->tabs[i].name, canon))
            return (int)i;
    qh_sink_tab *nt = realloc(s->tabs, sizeof *nt * (s->ntabs + 1));
    if (!nt)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    s->tabs = nt;
    qh_sink_tab *t = &nt[s->ntabs];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", canon);
    return (int)s->ntabs++;
}

static int open_writer(qh_sink *s, uint32_t ti, qr_err *e)
{
    if (qr_rows_begin(&s->w, s->db, s->tabs[ti].name, 0, NULL, e) != 0)
        return -1;
    s->cur = (int)ti;
    return 0;
}

/* Add one row to the open table; 1 refused (e), -1 system failure. */
static int add_now(qh_sink *s, qh_sink_tab *t, const char *line, size_t n, uint64_t idh, qr_err *e)
{
    if (idh && (qh_u64set_has(&t->ids, idh) || qh_idem_has_id(s->idem, t->name, idh))) {
        qr_errf(e, QH_E_CONFLICT, "version conflict, document already exists");
        return 1;
    }
    if (qr_rows_add(&s->w, line, n, e) != 0)
        return qr_err_is_input_fault(e) ? 1 : -1;
    t->rows++;
    if (idh) {
        if (t->nidv == t->capidv) {
            uint32_t nc = t->capidv ? t->capidv * 2 : 64;
            uint64_t *nv = realloc(t->idv, sizeof *nv * nc);
            if (!nv)
                return qr_errf(e, QR_E_NOMEM, "out of memory");
            t->idv = nv;
            t->capidv = nc;
        }
        if (qh_u64set_add(&t->ids, idh) != 0)
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        t->idv[t->nidv++] = idh;
    }
    return 0;
}

int qh_sink_add(qh_sink *s, const char *table, const char *line, size_t n, uint64_t idh,
                uint64_t seq, uint32_t *tab, qr_err *e)
{
    int ti = table_for(s, table, line, n, e);
    if (ti < 0)
        return qr_err_is_input_fault(e) || !strcmp(e->code, QR_E_UNDEFINED_TABLE) ? 1 : -1;
    *tab = (uint32_t)ti;
    if (s->cur < 0 && !s->tabs[ti].done && open_writer(s, (uint32_t)ti, e) != 0)
        return -1;
    if (s->cur == ti)
        return add_now(s, &s->tabs[ti], line, n, idh, e);
    /* another table is open: this row waits for its table's turn */
    if (s->nwait == s->capwait) {
        uint64_t nc = s->capwait ? s->capwait * 2 : 256;
        qh_sink_wait *nw = realloc(s->wait, sizeof *nw * nc);
        if (!nw)
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        s->wait = nw;
        s->capwait = nc;
    }
    s->wait[s->nwait++] = (qh_sink_wait){(uint32_t)ti, seq, idh, s->spill.len, n};
    qr_buf_put(&s->spill, line, n);
    return s->spill.oom ? qr_errf(e, QR_E_NOMEM, "out of memory") : 0;
}

/* Commit the open table; last: carry key and build()'s answer. */
static int commit_cur(qh_sink *s, const char *key, qh_reply_fn build, void *arg, int last)
{
    qh_sink_tab *t = &s->tabs[s->cur];
    s->cur = -1;
    t->done = 1;
    qr_err *e = &t->err;
    /* a commit with an idempotency record writes segments (the record names
     * the manifest generation of its commit), every one before the record;
     * any other goes to the table's log when the database runs live */
    int want_rec = t->nidv || (last && key);
    int rc = want_rec ? qr_rows_flush(&s->w, e) : 0;
    uint64_t gen = s->w.t->man.generation + 1;
    int has_rec = rc == 0 && want_rec;
    qh_reply r = {0};
    int with_key = 0;
    if (rc == 0 && last && key && build) {
        if (build(arg, &r) != 0)
            rc = qr_errf(e, QR_E_NOMEM, "out of memory");
        else
            with_key = 1;
    }
    if (rc == 0 && s->w.nsegs == 0) { /* nothing to commit: no new generation */
        has_rec = 0;
        if (with_key)
            rc = qh_idem_record(s->idem, NULL, 0, NULL, 0, key, &r, e);
        with_key = 0;
    }
    if (rc == 0 && has_rec)
        rc = qh_idem_record(s->idem, t->name, gen, t->idv, t->nidv, with_key ? key : NULL, &r, e);
    free(r.body);
    if (rc != 0) {
        qr_rows_abort(&s->w);
        t->status = qh_status_of(e->code);
        return -1;
    }
    uint64_t rows;
    rc = qr_rows_commit(&s->w, &rows, e);
    if (has_rec)
        qh_idem_settle(s->idem, t->name, gen, t->idv, t->nidv, with_key ? key : NULL, rc == 0);
    if (rc != 0)
        t->status = qh_status_of(e->code);
    return rc;
}

int qh_sink_commit(qh_sink *s, const char *key, qh_reply_fn build, qh_item_fail_fn fail, void *arg)
{
    int rc = 0;
    uint64_t done_waits = 0;
    for (;;) {
        /* the next table with waiting rows */
        int next = -1;
        for (uint64_t i = done_waits; i < s->nwait && next < 0; i++)
            if (!s->tabs[s->wait[i].tab].done && (int)s->wait[i].tab != s->cur)
                next = (int)s->wait[i].tab;
        if (s->cur >= 0) {
            if (commit_cur(s, key, build, arg, next < 0) != 0)
                rc = -1;
            else if (next < 0)
                return rc; /* the key went with this last commit */
        }
        if (next < 0)
            break;
        qh_sink_tab *t = &s->tabs[next];
        if (open_writer(s, (uint32_t)next, &t->err) != 0) {
            t->status = qh_status_of(t->err.code);
            t->done = 1;
            rc = -1;
            continue;
        }
        for (uint64_t i = 0; i < s->nwait; i++) {
            qh_sink_wait *w = &s->wait[i];
            if (w->tab != (uint32_t)next)
                continue;
            qr_err e;
            int r = add_now(s, t, (const char *)s->spill.p + w->off, w->n, w->idh, &e);
            if (r == 1 && fail)
                fail(arg, w->seq, qh_status_of(e.code), &e);
            if (r < 0) {
                t->err = e;
                t->status = qh_status_of(e.code);
                qr_rows_abort(&s->w);
                s->cur = -1;
                t->done = 1;
                rc = -1;
                break;
            }
        }
    }
    /* no table committed last: the key goes alone */
    if (key && rc == 0 && build) {
        qh_reply r = {0};
        qr_err e;
        if (build(arg, &r) != 0 || qh_idem_record(s->idem, NULL, 0, NULL, 0, key, &r, &e) != 0)
            rc = -1;
        free(r.body);
    }
    return rc;
}

void qh_sink_abort(qh_sink *s)
{
    if (s->cur >= 0)
        qr_rows_abort(&s->w);
    s->cur = -1;
}

void qh_sink_free(qh_sink *s)
{
    qh_sink_abort(s);
    for (uint32_t i = 0; i < s->ntabs; i++) {
        qh_u64set_free(&s->tabs[i].ids);
        free(s->tabs[i].idv);
    }
    free(s->tabs);
    free(s->wait);
    qr_buf_free(&s->spill);
    memset(s, 0, sizeof *s);
    s->cur = -1;
}
