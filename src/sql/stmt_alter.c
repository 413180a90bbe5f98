/* stmt_alter.c - ALTER TABLE t SET (retention = '7 days') / RESET
 * (retention), and the interval text the retention option takes (also in
 * CREATE TABLE ... WITH (retention = ...)).
 *
 * Retention is a table's setting, not its rows' shape: it changes only the
 * catalog (no segment is rewritten), and a running server applies it in
 * the background (sql/merge.h "Retention"). */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "index/catalog.h"
#include "sql/db.h"
#include "sql/stmt.h"

int qr_sql_interval_s(const char *s, int64_t *out)
{
    /* "<n> <unit>" pairs: 7 days, 1 day 12 hours, 90 min, 3600 (seconds) */
    static const struct {
        const char *name;
        int64_t s;
    } units[] = {{"s", 1},        {"sec", 1},       {"secs", 1},      {"second", 1},
                 {"seconds", 1},  {"m", 60},        {"min", 60},      {"mins", 60},
                 {"minute", 60},  {"minutes", 60},  {"h", 3600},      {"hour", 3600},
                 {"hours", 3600}, {"d", 86400},     {"day", 86400},   {"days", 86400},
                 {"w", 604800},   {"week", 604800}, {"weeks", 604800}};
    int64_t total = 0;
    int pairs = 0;
    const char *p = s;
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (!isdigit((unsigned char)*p))
            return -1;
        int64_t n = 0;
        while (isdigit((unsigned char)*p)) {
            if (n > (INT64_MAX - 9) / 10)
                return -1;
            n = n * 10 + (*p++ - '0');
        }
        while (isspace((unsigned char)*p))
            p++;
        const char *u = p;
        while (isalpha((unsigned char)*p))
            p++;
        size_t ul = (size_t)(p - u);
        int64_t mul = ul ? 0 : 1;
        for (size_t i = 0; ul && i < sizeof units / sizeof units[0]; i++)
            if (strlen(units[i].name) == ul && !strncasecmp(units[i].name, u, ul))
                mul = units[i].s;
        if (!mul || n > INT64_MAX / mul || total > INT64_MAX - n * mul)
            return -1;
        total += n * mul;
        pairs++;
    }
    if (!pairs)
        return -1;
    *out = total;
    return 0;
}

/* The text of a DefElem's argument ('7 days', 3600, an identifier). */
static const char *def_text(const PgQuery__DefElem *de, char *buf, size_t n)
{
    const PgQuery__Node *a = de->arg;
    if (!a)
        return NULL;
    if (a->node_case == PG_QUERY__NODE__NODE_INTEGER) {
        snprintf(buf, n, "%d", a->integer->ival);
        return buf;
    }
    if (a->node_case == PG_QUERY__NODE__NODE_TYPE_NAME && a->type_name->n_names)
        return qr_sql_strval(a->type_name->names[a->type_name->n_names - 1]);
    return qr_sql_strval(a);
}

int qr_sql_retention_option(const qr_sqlparse *p, const PgQuery__DefElem *de, int64_t *secs,
                            qr_err *e)
{
    char buf[32];
    const char *v = def_text(de, buf, sizeof buf);
    if (!v || qr_sql_interval_s(v, secs) != 0) {
        qr_errf(e, QR_E_ARGS,
                "retention must be an interval such as '7 days', '12 hours' or '90 minutes' "
                "(units s, min, h, d, w), or 0 for none; not '%s'",
                v ? v : "");
        return qr_sqlp_at(p, de->location, e);
    }
    return 0;
}

int qr_sql_stmt_alter(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__AlterTableStmt *a,
                      qr_result *out, qr_err *e)
{
    if (!a->relation || qr_sql_relname(p, a->relation, e) != 0)
        return a->relation ? -1 : qr_errf(e, QR_E_SYNTAX, "ALTER TABLE needs a table");
    if (a->objtype != PG_QUERY__OBJECT_TYPE__OBJECT_TABLE)
        return qr_errf(e, QR_E_FEATURE, "only ALTER TABLE is supported");
    int have = 0;
    int64_t retention = 0;
    for (size_t i = 0; i < a->n_cmds; i++) {
        const PgQuery__Node *n = a->cmds[i];
        if (n->node_case != PG_QUERY__NODE__NODE_ALTER_TABLE_CMD)
            continue;
        const PgQuery__AlterTableCmd *c = n->alter_table_cmd;
        int set = c->subtype == PG_QUERY__ALTER_TABLE_TYPE__AT_SetRelOptions;
        int reset = c->subtype == PG_QUERY__ALTER_TABLE_TYPE__AT_ResetRelOptions;
        if (!set && !reset)
            return qr_errf(e, QR_E_FEATURE,
                           "ALTER TABLE supports only SET (retention = '...') and RESET "
                           "(retention)");
        const PgQuery__List *l =
            c->def && c->def->node_case == PG_QUERY__NODE__NODE_LIST ? c->def->list : NULL;
        for (size_t j = 0; l && j < l->n_items; j++) {
            if (l->items[j]->node_case != PG_QUERY__NODE__NODE_DEF_ELEM)
                continue;
            const PgQuery__DefElem *de = l->items[j]->def_elem;
            if (strcasecmp(de->defname, "retention") != 0) {
                qr_errf(e, QR_E_FEATURE, "table option \"%s\" cannot be changed (retention can)",
                        de->defname);
                return qr_sqlp_at(p, de->location, e);
            }
            if (set && qr_sql_retention_option(p, de, &retention, e) != 0)
                return -1;
            if (reset)
                retention = 0;
            have = 1;
        }
    }
    if (!have)
        return qr_errf(e, QR_E_SYNTAX, "ALTER TABLE ... SET needs (retention = '...')");
    qr_sql_db *db = s->db;
    qr_sqldb_lock(db, 1);
    int rc = qr_sqldb_reload(db, e);
    const qr_tabdef *cur =
        rc == 0 ? qr_catalog_find(qr_sqldb_catalog(db), a->relation->relname) : NULL;
    if (rc == 0 && !cur) {
        if (a->missing_ok) {
            qr_sqldb_unlock(db);
            snprintf(out->tag, sizeof out->tag, "ALTER TABLE");
            return 0;
        }
        qr_errf(e, QR_E_UNDEFINED_TABLE, "relation \"%s\" does not exist", a->relation->relname);
        rc = qr_sqlp_at(p, a->relation->location, e);
    }
    qr_tabdef *d = rc == 0 ? qr_tabdef_clone(cur) : NULL;
    if (rc == 0 && !d)
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    if (rc == 0 && retention && cur->sort_col < 0)
        rc = qr_errf(e, QR_E_ARGS,
                     "table \"%s\" has no sort column: retention goes by the sort column's time",
                     cur->name);
    if (rc == 0) {
        d->retention_s = retention;
        rc = qr_catalog_replace_table(qr_sql_db_dir(db), d, e);
        int rl = qr_sqldb_reload(db, rc == 0 ? e : NULL);
        rc = rc == 0 ? rl : rc;
        qr_sqldb_forget_table(db, d->name);
    }
    qr_sqldb_unlock(db);
    qr_tabdef_free(d);
    if (rc == 0)
        snprintf(out->tag, sizeof out->tag, "ALTER TABLE");
    return rc;
}
