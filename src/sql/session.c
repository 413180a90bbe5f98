/* session.c - a SQL session: the catalog, the tables it opened, and one
 * statement's path from text to result (parse, bind, plan, run). */
#include "sql/sql.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sql/plan.h"
#include "search/parallel.h"
#include "sql/run.h"

int qr_sql_open(qr_sql_session *s, const char *datadir, int threads, qr_err *e)
{
    memset(s, 0, sizeof *s);
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (int)n : 1;
    }
    if (threads > QR_MAX_SEARCH_THREADS)
        threads = QR_MAX_SEARCH_THREADS;
    s->threads = threads;
    if (!(s->datadir = strdup(datadir)))
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    if (qr_catalog_load(datadir, &s->cat, e) != 0)
        return -1;
    if (threads > 1) {
        qr_err pe;
        s->pool = qr_pool_new(threads - 1, &pe); /* none: jobs run on the caller */
    }
    return 0;
}

void qr_sql_close(qr_sql_session *s)
{
    for (uint32_t i = 0; i < s->ntabs; i++) {
        for (uint32_t k = 0; k < s->tabs[i].nsegs; k++)
            qr_seg_close(s->tabs[i].segs[k]);
        free(s->tabs[i].segs);
        qr_table_close(s->tabs[i].t);
    }
    qr_pool_free(s->pool);
    qr_catalog_free(&s->cat);
    free(s->datadir);
    memset(s, 0, sizeof *s);
}

/* The table of definition def, opened on first use (segments mapped). */
static qr_sql_table *table_for(qr_sql_session *s, const qr_tabdef *def, qr_err *e)
{
    for (uint32_t i = 0; i < s->ntabs; i++)
        if (!strcmp(s->tabs[i].t->def->name, def->name))
            return &s->tabs[i];
    if (s->ntabs == QR_SQL_MAX_TABLES) {
        qr_errf(e, QR_E_TOO_LONG, "a session opens at most %d tables", QR_SQL_MAX_TABLES);
        return NULL;
    }
    qr_table *t = qr_table_open(s->datadir, def->name, QR_TABLE_READ, e);
    if (!t)
        return NULL;
    uint32_t ns = t->man.nsegs;
    qr_segment **segs = calloc(ns ? ns : 1, sizeof *segs);
    if (!segs) {
        qr_table_close(t);
        qr_errf(e, QR_E_NOMEM, "out of memory");
        return NULL;
    }
    for (uint32_t i = 0; i < ns; i++) {
        char path[PATH_MAX];
        qr_table_seg_path(t, t->man.segs[i].id, path, sizeof path);
        if (!(segs[i] = qr_seg_open(path, e))) {
            for (uint32_t k = 0; k < i; k++)
                qr_seg_close(segs[k]);
            free(segs);
            qr_table_close(t);
            return NULL;
        }
    }
    qr_sql_table *st = &s->tabs[s->ntabs++];
    *st = (qr_sql_table){t, segs, ns};
    return st;
}

static const PgQuery__Node *one_statement(const qr_sqlparse *p, qr_err *e)
{
    if (p->tree->n_stmts == 0) {
        qr_errf(e, QR_E_SYNTAX, "empty statement");
        return NULL;
    }
    if (p->tree->n_stmts > 1) {
        qr_errf(e, QR_E_FEATURE, "several statements in one call are not supported yet (got %zu)",
                p->tree->n_stmts);
        return NULL;
    }
    return p->tree->stmts[0]->stmt;
}

int qr_sql_check(const qr_catalog *c, const char *sql, size_t n, qr_err *e)
{
    qr_sqlparse p;
    qr_arena a;
    qr_arena_init(&a, 16 << 10, 64u << 20);
    int rc = qr_sqlp_parse(&p, sql, n, e);
    const PgQuery__Node *st = rc == 0 ? one_statement(&p, e) : NULL;
    qr_sqlsel sel;
    int kind;
    if (rc == 0)
        rc = st && qr_sql_bind(&p, st, c, &sel, &a, e) == 0 ? qr_sql_plan(&sel, &kind, e) : -1;
    qr_sqlp_free(&p);
    qr_arena_free(&a);
    return rc;
}

int qr_sql_exec(qr_sql_session *s, const char *sql, size_t n, qr_result *out, qr_err *e)
{
    qr_sqlparse p;
    qr_arena a; /* the statement's tree and names */
    qr_arena_init(&a, 16 << 10, 0);
    qr_arena_set_ctx(&a, out->ctx);
    int rc = qr_sqlp_parse(&p, sql, n, e);
    const PgQuery__Node *st = rc == 0 ? one_statement(&p, e) : NULL;
    qr_sqlsel sel;
    int kind = 0;
    if (rc == 0)
        rc =
            st && qr_sql_bind(&p, st, &s->cat, &sel, &a, e) == 0 ? qr_sql_plan(&sel, &kind, e) : -1;
    if (rc == 0 && sel.explain) {
        qr_buf b;
        qr_buf_init(&b);
        qr_sql_explain(&sel, kind, &b);
        rc = qr_result_add_col(out, "QUERY PLAN", QR_RK_TEXT, 0, 0, e);
        for (size_t at = 0; rc == 0 && at < b.len;) {
            const char *nl = memchr(b.p + at, '\n', b.len - at);
            size_t len = (size_t)(nl - (const char *)b.p) - at;
            qr_cell *c = qr_result_add_row(out, e);
            rc = c ? qr_result_set_text(out, c, (const char *)b.p + at, len, e) : -1;
            at += len + 1;
        }
        qr_buf_free(&b);
    } else if (rc == 0) {
        qr_sql_table *t = table_for(s, sel.def, e);
        rc = t ? qr_sql_run(&sel, kind, t->segs, t->nsegs, s->pool, s->threads, out, e) : -1;
    }
    qr_sqlp_free(&p);
    qr_arena_free(&a);
    return rc;
}
