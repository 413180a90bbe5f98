/* extended.c - the extended query protocol: Parse (named and unnamed
 * statements, declared parameter types), Bind (parameters substituted as
 * literals by subst.c into a portal; result formats), Describe,
 * Execute (with a row limit: PortalSuspended, the next Execute goes on),
 * Close, Sync and Flush. After an error every message up to Sync is
 * discarded (conn.c); Sync drops the portals (each statement is its own
 * transaction) and sends ReadyForQuery.
 *
 * A portal runs its statement once, when it is first described or
 * executed, and keeps the whole result (counted against its memory limit);
 * Execute sends rows from there. Describe of a statement (before any Bind)
 * runs a SELECT, EXPLAIN or SHOW to learn its
 * columns, each parameter replaced by a neutral value of its declared type
 * (0, FALSE, ''); other statements, and one that fails so, describe as
 * NoData. A portal of COPY FROM STDIN / TO STDOUT runs its sub-protocol
 * at Execute (copy.c) and describes as NoData. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/conn.h"
#include "server/types.h"

static void stmt_free(pgw_stmt *s)
{
    free(s->hd.name);
    free(s->sql);
    free(s->oids);
    free(s);
}

static void portal_free(pgw_portal *p)
{
    if (p->ran)
        qr_result_free(&p->r);
    pgw_text_free(&p->text);
    free(p->fmts);
    free(p->hd.name);
    free(p);
}

/* Statements and portals are lists of entries that start with pgw_named. */
static pgw_named **find_named(pgw_named **head, const char *name)
{
    while (*head && strcmp((*head)->name, name))
        head = &(*head)->next;
    return head;
}

static pgw_stmt *find_stmt(pgw_conn *c, const char *name)
{
    return (pgw_stmt *)*find_named(&c->stmts, name);
}

static pgw_portal *find_portal(pgw_conn *c, const char *name)
{
    return (pgw_portal *)*find_named(&c->portals, name);
}

/* Unlink the entry called name from its list; it, or NULL. */
static pgw_named *unlink_named(pgw_named **head, const char *name)
{
    pgw_named **at = find_named(head, name), *d = *at;
    if (d)
        *at = d->next;
    return d;
}

static void drop_stmt(pgw_conn *c, const char *name)
{
    pgw_stmt *d = (pgw_stmt *)unlink_named(&c->stmts, name);
    if (d) {
        stmt_free(d);
        c->nstmts--;
    }
}

static void drop_portal(pgw_conn *c, const char *name)
{
    pgw_portal *d = (pgw_portal *)unlink_named(&c->portals, name);
    if (d) {
        portal_free(d);
        c->nportals--;
    }
}

void pgw_extended_free(pgw_conn *c)
{
    while (c->portals)
        drop_portal(c, c->portals->name);
    while (c->stmts)
        drop_stmt(c, c->stmts->name);
}

static void put_empty(qr_buf *b, char type)
{
    size_t at = pgw_msg_begin(b, type);
    pgw_msg_end(b, at);
}

/* A failure the client caused: ErrorResponse (sent at once, as PostgreSQL
 * does, so a client waiting before its Sync learns of it), then discard
 * until Sync. */
static int fail(pgw_conn *c, const qr_err *e, long (*map)(void *, long), void *arg)
{
    pgw_send_error(c, e, map, arg);
    pgw_flush(c->io);
    c->skip_to_sync = 1;
    return 0;
}

static int bad(qr_err *e, const char *what)
{
    return qr_errf(e, PGW_E_PROTOCOL, "invalid %s message format", what);
}

static int on_parse(pgw_conn *c, pgw_rd *r, qr_err *e)
{
    const char *name = pgw_rd_str(r), *sql = pgw_rd_str(r);
    int16_t np = pgw_rd_i16(r);
    if (r->bad || np < 0)
        return bad(e, "Parse");
    uint32_t *oids = calloc((size_t)np + 1, sizeof *oids);
    if (!oids)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    for (int i = 0; i < np; i++)
        oids[i] = (uint32_t)pgw_rd_i32(r);
    if (r->bad || pgw_rd_left(r)) {
        free(oids);
        return bad(e, "Parse");
    }
    qr_err ue;
    size_t n = strlen(sql);
    uint32_t maxp = 0, nspans = 0;
    qr_sql_span *spans = NULL;
    int rc = 0;
    if (*name && find_stmt(c, name))
        rc = qr_errf(&ue, "42P05", "prepared statement \"%s\" already exists", name);
    else if (!*name || c->nstmts < PGW_MAX_STMTS)
        rc = pgw_param_count(sql, n, &maxp, &ue);
    else
        rc = qr_errf(&ue, QR_E_TOO_LONG, "too many prepared statements (limit %d)", PGW_MAX_STMTS);
    if (rc == 0 && (rc = qr_sql_split(sql, n, &spans, &nspans, &ue)) == 0 && nspans > 1)
        rc = qr_errf(&ue, "42601", "cannot insert multiple commands into a prepared statement");
    free(spans);
    if (rc != 0) {
        free(oids);
        return fail(c, &ue, NULL, NULL);
    }
    if (!*name)
        drop_stmt(c, "");
    pgw_stmt *s = calloc(1, sizeof *s);
    uint32_t total = maxp > (uint32_t)np ? maxp : (uint32_t)np;
    uint32_t *all = s ? realloc(oids, sizeof *oids * (total + 1)) : NULL;
    if (all)
        oids = all;
    if (s) {
        s->hd.name = strdup(name);
        s->sql = strndup(sql, n);
    }
    if (!s || !all || !s->hd.name || !s->sql) {
        free(oids);
        if (s)
            stmt_free(s);
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    }
    for (uint32_t i = (uint32_t)np; i < total; i++)
        oids[i] = 0;
    s->n = n;
    s->nparams = total;
    s->oids = oids;
    s->hd.next = c->stmts;
    c->stmts = &s->hd;
    c->nstmts++;
    put_empty(&c->io->out, '1');
    return 0;
}

static int on_bind(pgw_conn *c, pgw_rd *r, qr_err *e)
{
    const char *pname = pgw_rd_str(r), *sname = pgw_rd_str(r);
    int16_t nf = pgw_rd_i16(r);
    if (r->bad || nf < 0)
        return bad(e, "Bind");
    const uint8_t *fp = pgw_rd_bytes(r, 2u * (uint16_t)nf);
    int16_t np = pgw_rd_i16(r);
    if (r->bad || np < 0)
        return bad(e, "Bind");
    pgw_param *ps = calloc((size_t)np + 1, sizeof *ps);
    if (!ps)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    for (int i = 0; i < np && !r->bad; i++) {
        int32_t len = pgw_rd_i32(r);
        ps[i].len = len < 0 ? -1 : len;
        ps[i].p = len > 0 ? pgw_rd_bytes(r, (size_t)len) : (const uint8_t *)"";
        if (len < -1)
            r->bad = 1;
    }
    int16_t nr = pgw_rd_i16(r);
    const uint8_t *rp = nr >= 0 ? pgw_rd_bytes(r, 2u * (uint16_t)nr) : NULL;
    if (r->bad || nr < 0 || pgw_rd_left(r)) {
        free(ps);
        return bad(e, "Bind");
    }
    qr_err ue;
    pgw_stmt *s = find_stmt(c, sname);
    int rc = 0;
    if (!s)
        rc = qr_errf(&ue, "26000", "prepared statement \"%s\" does not exist", sname);
    else if ((uint32_t)np != s->nparams)
        rc = qr_errf(
            &ue, PGW_E_PROTOCOL,
            "bind message supplies %d parameters, but prepared statement \"%s\" requires %u", np,
            sname, s->nparams);
    else if (nf > 1 && nf != np)
        rc = qr_errf(&ue, PGW_E_PROTOCOL, "bind message has %d parameter formats but %d parameters",
                     nf, np);
    else if (*pname && find_portal(c, pname))
        rc = qr_errf(&ue, "42P03", "cursor \"%s\" already exists", pname);
    else if (*pname && c->nportals >= PGW_MAX_PORTALS)
        rc = qr_errf(&ue, QR_E_TOO_LONG, "too many portals (limit %d)", PGW_MAX_PORTALS);
    for (int i = 0; rc == 0 && i < np; i++) {
        int16_t f =
            nf == 0 ? 0 : (int16_t)(fp[2 * (nf == 1 ? 0 : i)] << 8 | fp[2 * (nf == 1 ? 0 : i) + 1]);
        if (f != 0 && f != 1)
            rc = qr_errf(&ue, PGW_E_PROTOCOL, "unsupported format code: %d", f);
        ps[i].fmt = f;
        ps[i].oid = s->oids[i];
    }
    pgw_portal *p = NULL;
    if (rc == 0 && !(p = calloc(1, sizeof *p))) {
        free(ps);
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    }
    if (rc == 0 && pgw_subst(s->sql, s->n, ps, s->nparams, &p->text, &ue) != 0)
        rc = -1;
    free(ps);
    if (rc == 0) {
        p->nfmts = (uint16_t)nr;
        p->fmts = calloc((size_t)nr + 1, sizeof *p->fmts);
        p->hd.name = strdup(pname);
        if (!p->fmts || !p->hd.name) {
            portal_free(p);
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        }
        for (int i = 0; i < nr; i++) {
            p->fmts[i] = (int16_t)(rp[2 * i] << 8 | rp[2 * i + 1]);
            if (p->fmts[i] != 0 && p->fmts[i] != 1)
                rc = qr_errf(&ue, PGW_E_PROTOCOL, "unsupported format code: %d", p->fmts[i]);
        }
    }
    if (rc != 0) {
        if (p)
            portal_free(p);
        return fail(c, &ue, NULL, NULL);
    }
    if (!*pname)
        drop_portal(c, "");
    p->copy = pgw_copy_kind(p->text.s, p->text.n);
    p->hd.next = c->portals;
    c->portals = &p->hd;
    c->nportals++;
    put_empty(&c->io->out, '2');
    return 0;
}

/* Run the portal's statement once; 0, or -1 with p->e set. */
static int portal_run(pgw_conn *c, pgw_portal *p)
{
    if (!p->ran) {
        p->ran = 1;
        qr_err_clear(&p->e);
        pgw_stmt_ctx(c, &p->ctx);
        qr_result_init(&p->r, &p->ctx);
        p->failed = qr_sql_exec(&c->sess, p->text.s, p->text.n, &p->r, &p->e) != 0;
    }
    return p->failed ? -1 : 0;
}

static int formats_ok(pgw_conn *c, pgw_portal *p)
{
    if (p->nfmts > 1 && p->nfmts != p->r.ncols) {
        qr_err ue;
        qr_errf(&ue, PGW_E_PROTOCOL, "bind message has %u result formats but query has %u columns",
                p->nfmts, p->r.ncols);
        fail(c, &ue, NULL, NULL);
        return 0;
    }
    return 1;
}

/* The portal called name, its statement run and its formats checked; NULL
 * after an ErrorResponse was queued. */
static pgw_portal *ready_portal(pgw_conn *c, const char *name)
{
    qr_err ue;
    pgw_portal *p = find_portal(c, name);
    if (!p) {
        qr_errf(&ue, "34000", "portal \"%s\" does not exist", name);
        fail(c, &ue, NULL, NULL);
        return NULL;
    }
    if (p->copy) /* Execute runs it; Describe says NoData */
        return p;
    if (portal_run(c, p) != 0) {
        fail(c, &p->e, pgw_subst_pos, &p->text);
        return NULL;
    }
    return formats_ok(c, p) ? p : NULL;
}

/* Does the statement return rows whatever its parameters (so that running
 * it with NULLs to describe it changes nothing)? */
static int reads_only(const char *sql)
{
    while (*sql && (isspace((unsigned char)*sql) || *sql == '('))
        sql++;
    static const char *kw[] = {"select", "explain", "show", "with", "values"};
    for (int i = 0; i < 5; i++) {
        size_t k = strlen(kw[i]);
        if (!strncasecmp(sql, kw[i], k) && !isalnum((unsigned char)sql[k]) && sql[k] != '_')
            return 1;
    }
    return 0;
}

static void describe_stmt(pgw_conn *c, pgw_stmt *s)
{
    qr_buf *b = &c->io->out;
    size_t at = pgw_msg_begin(b, 't');
    pgw_put_i16(b, (int16_t)s->nparams);
    for (uint32_t i = 0; i < s->nparams; i++)
        pgw_put_i32(b, (int32_t)(s->oids[i] ? s->oids[i] : PGW_OID_TEXT));
    pgw_msg_end(b, at);
    pgw_param *ps = calloc(s->nparams + 1, sizeof *ps);
    pgw_portal p;
    memset(&p, 0, sizeof p);
    for (uint32_t i = 0; ps && i < s->nparams; i++) {
        uint32_t o = s->oids[i];
        int num = o == PGW_OID_INT2 || o == PGW_OID_INT4 || o == PGW_OID_INT8 ||
                  o == PGW_OID_FLOAT4 || o == PGW_OID_FLOAT8 || o == PGW_OID_NUMERIC;
        ps[i].oid = o;
        ps[i].p = (const uint8_t *)(num ? "0" : o == PGW_OID_BOOL ? "f" : "");
        ps[i].len = (int32_t)strlen((const char *)ps[i].p);
    }
    qr_err e;
    int ok = ps && reads_only(s->sql) && pgw_subst(s->sql, s->n, ps, s->nparams, &p.text, &e) == 0;
    free(ps);
    if (ok && portal_run(c, &p) == 0 && p.r.ncols)
        pgw_put_rowdesc(b, &p.r, NULL, 0);
    else
        put_empty(b, 'n');
    if (p.ran)
        qr_result_free(&p.r);
    pgw_text_free(&p.text);
}

static int on_describe(pgw_conn *c, pgw_rd *r, qr_err *e)
{
    const uint8_t *k = pgw_rd_bytes(r, 1);
    const char *name = pgw_rd_str(r);
    if (r->bad || pgw_rd_left(r) || (*k != 'S' && *k != 'P'))
        return bad(e, "Describe");
    qr_err ue;
    if (*k == 'S') {
        pgw_stmt *s = find_stmt(c, name);
        if (!s)
            return qr_errf(&ue, "26000", "prepared statement \"%s\" does not exist", name),
                   fail(c, &ue, NULL, NULL);
        describe_stmt(c, s);
        return 0;
    }
    pgw_portal *p = ready_portal(c, name);
    if (!p)
        return 0;
    if (p->r.ncols)
        pgw_put_rowdesc(&c->io->out, &p->r, p->fmts, p->nfmts);
    else
        put_empty(&c->io->out, 'n');
    return 0;
}

static int on_execute(pgw_conn *c, pgw_rd *r, qr_err *e)
{
    const char *name = pgw_rd_str(r);
    int32_t max = pgw_rd_i32(r);
    if (r->bad || pgw_rd_left(r))
        return bad(e, "Execute");
    /* a cancel that came while nothing ran (before this Execute, or between
     * two Executes of a suspended portal) is not for this one */
    pgw_stmt_begin_cancel(c);
    pgw_portal *p = ready_portal(c, name);
    if (!p)
        return 0;
    if (p->copy) {
        int rc = p->copy == PGW_COPY_IN
                     ? pgw_copy_in(c, p->text.s, p->text.n, pgw_subst_pos, &p->text)
                     : pgw_copy_out(c, p->text.s, p->text.n, pgw_subst_pos, &p->text);
        if (rc == PGW_COPY_FAILED) {
            pgw_flush(c->io);
            c->skip_to_sync = 1;
        } else if (rc == PGW_COPY_GONE) {
            c->gone = 1;
        }
        return 0;
    }
    uint64_t to = p->r.nrows;
    if (max > 0 && p->row + (uint64_t)max < to)
        to = p->row + (uint64_t)max;
    /* the statement's cancel flag and timeout hold while its rows are
     * sent, as in the simple protocol: a canceled portal is done */
    qr_err ce;
    int sr = p->r.ncols ? pgw_send_rows(c, &p->r, p->row, to, p->fmts, p->nfmts, &p->ctx, &ce) : 0;
    if (sr == 1) {
        p->row = p->r.nrows;
        p->failed = 1;
        p->e = ce;
        return fail(c, &ce, NULL, NULL);
    }
    if (sr != 0)
        return 0; /* the client is gone: conn.c ends the connection */
    uint64_t sent = to - p->row;
    p->row = to;
    if (p->r.ncols && to < p->r.nrows) {
        put_empty(&c->io->out, 's');
        return 0;
    }
    char tag[80];
    pgw_tag(&p->r, sent, tag, sizeof tag);
    pgw_put_complete(&c->io->out, tag);
    return 0;
}

static int on_close(pgw_conn *c, pgw_rd *r, qr_err *e)
{
    const uint8_t *k = pgw_rd_bytes(r, 1);
    const char *name = pgw_rd_str(r);
    if (r->bad || pgw_rd_left(r) || (*k != 'S' && *k != 'P'))
        return bad(e, "Close");
    if (*k == 'S')
        drop_stmt(c, name);
    else
        drop_portal(c, name);
    put_empty(&c->io->out, '3');
    return 0;
}

int pgw_extended(pgw_conn *c, uint8_t type, const uint8_t *body, size_t n, qr_err *e)
{
    pgw_rd r;
    pgw_rd_init(&r, body, n);
    switch (type) {
    case 'P':
        return on_parse(c, &r, e);
    case 'B':
        return on_bind(c, &r, e);
    case 'D':
        return on_describe(c, &r, e);
    case 'E':
        return on_execute(c, &r, e);
    case 'C':
        return on_close(c, &r, e);
    case 'H':
        if (n)
            return bad(e, "Flush");
        pgw_flush(c->io);
        return 0;
    case 'S':
        if (n)
            return bad(e, "Sync");
        c->skip_to_sync = 0;
        while (c->portals)
            drop_portal(c, c->portals->name);
        pgw_put_ready(&c->io->out, qr_sql_tx_status(&c->sess));
        return 0;
    default:
        return qr_errf(e, PGW_E_PROTOCOL, "invalid frontend message type %d", type);
    }
}
