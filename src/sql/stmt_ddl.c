/* stmt_ddl.c - statements that change the catalog or a table as a whole:
 * CREATE TABLE, DROP TABLE, CREATE INDEX, TRUNCATE; and SHOW TABLES.
 *
 * Each holds the database's catalog lock exclusively (db.h) over its change
 * and the reload after it, so no statement of this process binds against a
 * half-done change; DROP, TRUNCATE and CREATE INDEX first take the table's
 * writer slot and LOCK file (without the catalog lock, which other
 * statements need meanwhile), so no writer of this or another process adds
 * segments while they change the table. The catalog file itself
 * is changed through index/catalog.h (its own lock file, atomic replace),
 * so other processes see the old catalog or the new one. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "index/catalog.h"
#include "index/table.h"
#include "sql/db.h"
#include "sql/live.h"
#include "sql/merge.h"
#include "sql/stmt.h"
#include "util/fsutil.h"

static void set_tag(qr_result *out, const char *tag)
{
    snprintf(out->tag, sizeof out->tag, "%s", tag);
}

/* ---- CREATE TABLE ---- */

/* The catalog type of a PostgreSQL type name (its last part, as
 * libpg_query spells it: int8 for bigint, float8 for double precision).
 * -1 unknown, -2 known to PostgreSQL but not stored by Quarry. */
static int sql_type(const char *t)
{
    static const struct {
        const char *name;
        int type;
    } map[] = {
        {"text", QT_TEXT},
        {"varchar", QT_TEXT},
        {"bpchar", QT_TEXT},
        {"string", QT_TEXT},
        {"int8", QT_INT64},
        {"bigint", QT_INT64},
        {"int4", QT_INT32},
        {"integer", QT_INT32},
        {"int", QT_INT32},
        {"int2", QT_INT16},
        {"smallint", QT_INT16},
        {"tinyint", QT_INT8},
        {"float8", QT_FLOAT64},
        {"float4", QT_FLOAT64},
        {"double", QT_FLOAT64},
        {"float", QT_FLOAT64},
        {"real", QT_FLOAT64},
        {"bool", QT_BOOL},
        {"boolean", QT_BOOL},
        {"timestamp", QT_TIMESTAMP},
        {"timestamptz", QT_TIMESTAMP},
        {"timestamp_ns", QT_TIMESTAMP},
        {"json", QT_JSON},
        {"jsonb", QT_JSON},
        {"map", QT_MAP},
        {"utinyint", QT_UINT8},
        {"usmallint", QT_UINT16},
        {"uinteger", QT_UINT32},
        {"ubigint", QT_UINT64},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcasecmp(map[i].name, t))
            return map[i].type;
    static const char *const unsupported[] = {"numeric", "date", "time", "timetz", "interval",
                                              "bytea",   "uuid", "inet", "money",  NULL};
    for (const char *const *u = unsupported; *u; u++)
        if (!strcasecmp(*u, t))
            return -2;
    /* Quarry's own names (uint8 is one byte here, unlike PostgreSQL's int8) */
    return qr_type_by_name(t, strlen(t));
}

static int column_def(const qr_sqlparse *p, qr_tabdef *d, const PgQuery__ColumnDef *cd, qr_err *e)
{
    const PgQuery__TypeName *tn = cd->type_name;
    const char *tname = tn && tn->n_names ? qr_sql_strval(tn->names[tn->n_names - 1]) : NULL;
    if (!tname) {
        qr_errf(e, QR_E_SYNTAX, "column \"%s\" needs a type", cd->colname);
        return qr_sqlp_at(p, cd->location, e);
    }
    int type = sql_type(tname);
    if (type == -1) {
        qr_errf(e, QR_E_UNDEFINED_OBJECT, "type \"%s\" does not exist", tname);
        return qr_sqlp_at(p, tn->location, e);
    }
    if (type == -2) {
        qr_errf(e, QR_E_FEATURE,
                "type \"%s\" is not supported (text, bigint, integer, smallint, double "
                "precision, boolean, timestamp, json, map are)",
                tname);
        return qr_sqlp_at(p, tn->location, e);
    }
    if (tn->n_array_bounds) {
        qr_errf(e, QR_E_FEATURE, "array types are not supported (json holds arrays)");
        return qr_sqlp_at(p, tn->location, e);
    }
    int nullable = !cd->is_not_null;
    for (size_t i = 0; i < cd->n_constraints; i++) {
        const PgQuery__Node *n = cd->constraints[i];
        if (n->node_case != PG_QUERY__NODE__NODE_CONSTRAINT)
            continue;
        const PgQuery__Constraint *c = n->constraint;
        if (c->contype == PG_QUERY__CONSTR_TYPE__CONSTR_NOTNULL)
            nullable = 0;
        else if (c->contype == PG_QUERY__CONSTR_TYPE__CONSTR_NULL)
            nullable = 1;
        else {
            qr_errf(e, QR_E_FEATURE,
                    "column constraints other than NOT NULL and NULL are not supported "
                    "(no DEFAULT, PRIMARY KEY, UNIQUE, CHECK or REFERENCES)");
            return qr_sqlp_at(p, c->location, e);
        }
    }
    if (cd->raw_default) {
        qr_errf(e, QR_E_FEATURE, "DEFAULT is not supported (a missing value is NULL)");
        return qr_sqlp_at(p, cd->location, e);
    }
    if (qr_tabdef_add_col(d, cd->colname, strlen(cd->colname), type, nullable, e) < 0)
        return qr_sqlp_at(p, cd->location, e);
    return 0;
}

/* WITH (sort_column = name): the timestamp column the rows are sorted by
 * (newest-first queries on it stop early). */
static int table_options(const qr_sqlparse *p, qr_tabdef *d, const PgQuery__CreateStmt *c,
                         qr_err *e)
{
    for (size_t i = 0; i < c->n_options; i++) {
        const PgQuery__Node *n = c->options[i];
        if (n->node_case != PG_QUERY__NODE__NODE_DEF_ELEM)
            continue;
        const PgQuery__DefElem *de = n->def_elem;
        const char *v = NULL;
        if (de->arg && de->arg->node_case == PG_QUERY__NODE__NODE_TYPE_NAME &&
            de->arg->type_name->n_names)
            v = qr_sql_strval(de->arg->type_name->names[de->arg->type_name->n_names - 1]);
        else
            v = qr_sql_strval(de->arg);
        if (!strcasecmp(de->defname, "retention")) {
            if (qr_sql_retention_option(p, de, &d->retention_s, e) != 0)
                return -1;
            continue;
        }
        if (strcasecmp(de->defname, "sort_column") != 0) {
            qr_errf(e, QR_E_FEATURE,
                    "table option \"%s\" is not supported (sort_column and retention are)",
                    de->defname);
            return qr_sqlp_at(p, de->location, e);
        }
        int col = v ? qr_tabdef_col(d, v, strlen(v)) : -1;
        if (col < 0 || d->cols[col].type != QT_TIMESTAMP) {
            qr_errf(e, QR_E_ARGS, "sort_column must name a timestamp column of the table");
            return qr_sqlp_at(p, de->location, e);
        }
        d->sort_col = col;
    }
    if (d->retention_s && d->sort_col < 0)
        return qr_errf(e, QR_E_ARGS,
                       "retention needs a sort column (WITH (sort_column = ...)): it goes by "
                       "the sort column's time");
    return 0;
}

int qr_sql_stmt_create(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__CreateStmt *c,
                       qr_result *out, qr_err *e)
{
    qr_sql_db *db = s->db;
    const char *name = c->relation ? c->relation->relname : NULL;
    if (!name || qr_sql_relname(p, c->relation, e) != 0)
        return name ? -1 : qr_errf(e, QR_E_SYNTAX, "CREATE TABLE needs a name");
    if (c->n_inh_relations || c->partspec || c->of_typename || c->n_constraints) {
        qr_errf(e, QR_E_FEATURE,
                "CREATE TABLE with INHERITS, PARTITION BY, OF or table constraints is not "
                "supported");
        return qr_sqlp_at(p, c->relation->location, e);
    }
    if (c->relation->relpersistence && c->relation->relpersistence[0] == 't') {
        qr_errf(e, QR_E_FEATURE, "temporary tables are not supported");
        return qr_sqlp_at(p, c->relation->location, e);
    }
    qr_tabdef *d = qr_tabdef_new(name);
    if (!d)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->n_table_elts; i++) {
        const PgQuery__Node *n = c->table_elts[i];
        if (n->node_case == PG_QUERY__NODE__NODE_COLUMN_DEF) {
            rc = column_def(p, d, n->column_def, e);
        } else {
            qr_errf(e, QR_E_FEATURE, "table constraints and LIKE are not supported");
            rc = qr_sqlp_at(p, c->relation->location, e);
        }
    }
    if (rc == 0 && d->ncols == 0) {
        qr_errf(e, QR_E_SYNTAX, "a table needs at least one column");
        rc = qr_sqlp_at(p, c->relation->location, e);
    }
    if (rc == 0)
        rc = table_options(p, d, c, e);
    if (rc == 0) {
        qr_sqldb_lock(db, 1);
        int created = 0;
        rc = qr_catalog_create_table(qr_sql_db_dir(db), d, &created, e);
        if (rc == 0 && !created && !c->if_not_exists)
            rc = qr_errf(e, QR_E_DUPLICATE_TABLE, "relation \"%s\" already exists", name);
        else if (rc != 0 && !strcmp(e->code, QR_E_DUPLICATE_TABLE))
            rc = c->if_not_exists
                     ? 0
                     : qr_errf(e, QR_E_DUPLICATE_TABLE,
                               "relation \"%s\" already exists (with another definition)", name);
        if (rc == 0 && created) {
            qr_sqldb_forget_table(db, name); /* a table of that name dropped elsewhere */
            rc = qr_sqldb_reload(db, e);
        }
        qr_sqldb_unlock(db);
        if (rc != 0 && strcmp(e->code, QR_E_DUPLICATE_TABLE) == 0)
            qr_sqlp_at(p, c->relation->location, e);
    }
    qr_tabdef_free(d);
    if (rc == 0)
        set_tag(out, "CREATE TABLE");
    return rc;
}

/* ---- DROP TABLE ---- */

/* Remove every file of a table's directory, its live/ directory's (sql/live.h)
 * included, then the directory. */
static void remove_table_files(const char *dir)
{
    char sub[PATH_MAX];
    if (snprintf(sub, sizeof sub, "%s/live", dir) < (int)sizeof sub) {
        qr_unlink_all_in(sub);
        rmdir(sub);
    }
    qr_unlink_all_in(dir);
    rmdir(dir);
}

/* The table's writer slot and LOCK file (creating its directory if it was
 * never written). NULL with e set; qr_sqldb_writer_end is the caller's
 * after qr_table_close. */
static qr_table *open_writer(qr_sql_db *db, const char *name, qr_err *e)
{
    if (qr_sqldb_writer_begin(db, name, e) != 0)
        return NULL;
    qr_table *t = qr_table_open(qr_sql_db_dir(db), name, QR_TABLE_WRITE | QR_TABLE_CREATE, e);
    if (!t)
        qr_sqldb_writer_end(db, name);
    return t;
}

/* The catalog's spelling of table `name` (case-insensitive), or NULL. */
static const char *catalog_name(qr_sql_db *db, const char *name)
{
    const qr_tabdef *d = qr_catalog_find(qr_sqldb_catalog(db), name);
    return d ? d->name : NULL;
}

/* A change of one table: its writer slot and LOCK, taken without the
 * catalog lock (so that waiting for a long writer, a client's COPY FROM
 * STDIN, holds up no other statement), then the catalog lock exclusively
 * with the catalog read again. 0 with *t and canon (the catalog's
 * spelling) set; 1 when there is no such table (nothing held); -1 with e
 * set (55P03 when another process writes it). */
static int ddl_begin(qr_sql_db *db, const char *name, char *canon, size_t n, qr_table **t,
                     qr_err *e)
{
    *t = NULL;
    qr_sqldb_lock(db, 0);
    const char *cn = catalog_name(db, name);
    if (cn)
        snprintf(canon, n, "%s", cn);
    qr_sqldb_unlock(db);
    if (!cn)
        return 1;
    /* rows acknowledged into the table's log go into segments first */
    if (qr_live_flush(db, canon, e) != 0 || !(*t = open_writer(db, canon, e)))
        return -1;
    qr_sqldb_lock(db, 1);
    int rc = qr_sqldb_reload(db, e) != 0 ? -1 : catalog_name(db, canon) ? 0 : 1;
    if (rc != 0) { /* dropped meanwhile, or the catalog does not read */
        qr_sqldb_unlock(db);
        qr_table_close(*t);
        qr_sqldb_writer_end(db, canon);
        *t = NULL;
    }
    return rc;
}

/* The end of ddl_begin's change: the table's snapshot and cached segments
 * are forgotten before other statements see the new catalog. */
static void ddl_end(qr_sql_db *db, const char *canon, qr_table *t)
{
    qr_sqldb_forget_table(db, canon);
    qr_sqldb_unlock(db);
    qr_table_close(t);
    qr_sqldb_writer_end(db, canon);
}

static int drop_one(qr_sql_db *db, const char *name, int missing_ok, qr_err *e)
{
    char canon[128];
    qr_table *t;
    int rc = ddl_begin(db, name, canon, sizeof canon, &t, e);
    if (rc == 1)
        return missing_ok ? 0
                          : qr_errf(e, QR_E_UNDEFINED_TABLE, "table \"%s\" does not exist", name);
    if (rc != 0)
        return -1;
    rc = qr_catalog_drop_table(qr_sql_db_dir(db), canon, e);
    if (rc == 0) {
        qr_live_forget(db, canon);  /* its log goes with the files */
        qr_merge_clean(t->dir);     /* and what a merge left */
        remove_table_files(t->dir); /* with its LOCK held: no writer is inside */
    }
    int rl = qr_sqldb_reload(db, rc == 0 ? e : NULL);
    ddl_end(db, canon, t);
    return rc == 0 ? rl : rc;
}

int qr_sql_stmt_drop(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__DropStmt *d,
                     qr_result *out, qr_err *e)
{
    if (d->remove_type != PG_QUERY__OBJECT_TYPE__OBJECT_TABLE)
        return qr_errf(e, QR_E_FEATURE, "DROP of anything but a table is not supported yet");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < d->n_objects; i++) {
        const PgQuery__Node *o = d->objects[i];
        const char *name = NULL;
        if (o->node_case == PG_QUERY__NODE__NODE_LIST && o->list->n_items)
            name = qr_sql_strval(o->list->items[o->list->n_items - 1]);
        if (!name)
            rc = qr_errf(e, QR_E_SYNTAX, "DROP TABLE needs table names");
        else
            rc = drop_one(s->db, name, d->missing_ok, e);
    }
    if (rc == 0)
        set_tag(out, "DROP TABLE");
    return rc;
}

/* ---- TRUNCATE ---- */

int qr_sql_stmt_truncate(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__TruncateStmt *t,
                         qr_result *out, qr_err *e)
{
    qr_sql_db *db = s->db;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < t->n_relations; i++) {
        const PgQuery__Node *n = t->relations[i];
        if (n->node_case != PG_QUERY__NODE__NODE_RANGE_VAR) {
            rc = qr_errf(e, QR_E_SYNTAX, "TRUNCATE needs table names");
            break;
        }
        const PgQuery__RangeVar *rv = n->range_var;
        if ((rc = qr_sql_relname(p, rv, e)) != 0)
            break;
        char canon[128];
        qr_table *w;
        rc = ddl_begin(db, rv->relname, canon, sizeof canon, &w, e);
        if (rc == 1) {
            qr_errf(e, QR_E_UNDEFINED_TABLE, "relation \"%s\" does not exist", rv->relname);
            rc = qr_sqlp_at(p, rv->location, e);
        }
        if (rc != 0)
            break;
        rc = qr_table_truncate(w, e);
        ddl_end(db, canon, w);
    }
    if (rc == 0)
        set_tag(out, "TRUNCATE TABLE");
    return rc;
}

/* ---- CREATE INDEX ---- */

/* The index kind of USING method for a column of type `type`; -1 unknown. */
static int index_kind(const char *method, int type)
{
    int text = type == QT_TEXT, tree = type == QT_JSON || type == QT_MAP;
    if (!strcasecmp(method, "inverted") || !strcasecmp(method, "fulltext") ||
        !strcasecmp(method, "gin"))
        return QR_IX_FULLTEXT;
    if (!strcasecmp(method, "keyword") || !strcasecmp(method, "hash"))
        return QR_IX_KEYWORD;
    if (!strcasecmp(method, "range"))
        return QR_IX_RANGE;
    if (!strcasecmp(method, "paths"))
        return QR_IX_PATHS;
    if (!strcasecmp(method, "btree")) /* the default: exact values */
        return text ? QR_IX_KEYWORD : tree ? QR_IX_PATHS : QR_IX_RANGE;
    return -1;
}

static int index_options(const qr_sqlparse *p, qr_ixdef *ix, const PgQuery__IndexStmt *x, qr_err *e)
{
    for (size_t i = 0; i < x->n_options; i++) {
        const PgQuery__Node *n = x->options[i];
        if (n->node_case != PG_QUERY__NODE__NODE_DEF_ELEM)
            continue;
        const PgQuery__DefElem *de = n->def_elem;
        const char *v = qr_sql_strval(de->arg);
        int on = -1;
        if (de->arg && de->arg->node_case == PG_QUERY__NODE__NODE_INTEGER)
            on = de->arg->integer->ival != 0;
        else if (de->arg && de->arg->node_case == PG_QUERY__NODE__NODE_BOOLEAN)
            on = de->arg->boolean->boolval;
        else if (v)
            on = !strcasecmp(v, "true") || !strcasecmp(v, "on") || !strcmp(v, "1")     ? 1
                 : !strcasecmp(v, "false") || !strcasecmp(v, "off") || !strcmp(v, "0") ? 0
                                                                                       : -1;
        int is_lc = !strcasecmp(de->defname, "lowercase"),
            is_pos = !strcasecmp(de->defname, "positions");
        if ((!is_lc && !is_pos) || ix->kind != QR_IX_FULLTEXT) {
            qr_errf(e, QR_E_FEATURE,
                    "index option \"%s\" is not supported (lowercase and positions, on an "
                    "inverted index, are)",
                    de->defname);
            return qr_sqlp_at(p, de->location, e);
        }
        if (on < 0) {
            qr_errf(e, QR_E_ARGS, "index option \"%s\" takes true or false", de->defname);
            return qr_sqlp_at(p, de->location, e);
        }
        if (is_lc)
            ix->lowercase = (uint8_t)on;
        else
            ix->positions = (uint8_t)on;
    }
    return 0;
}

/* Add the index of x to a copy of t's definition; *def gets it (NULL and
 * 0 for IF NOT EXISTS when such an index is there). */
static int index_def(const qr_sqlparse *p, const qr_table *t, const PgQuery__IndexStmt *x,
                     qr_tabdef **def, qr_err *e)
{
    *def = NULL;
    int32_t loc = x->relation->location;
    if (x->unique || x->primary || x->where_clause || x->n_exclude_op_names) {
        qr_errf(e, QR_E_FEATURE, "UNIQUE, partial and exclusion indexes are not supported");
        return qr_sqlp_at(p, loc, e);
    }
    if (x->n_index_params != 1) {
        qr_errf(e, QR_E_FEATURE, "an index is on one column (got %zu)", x->n_index_params);
        return qr_sqlp_at(p, loc, e);
    }
    const PgQuery__Node *pn = x->index_params[0];
    const PgQuery__IndexElem *el =
        pn->node_case == PG_QUERY__NODE__NODE_INDEX_ELEM ? pn->index_elem : NULL;
    if (!el || !el->name || !el->name[0]) {
        qr_errf(e, QR_E_FEATURE, "an index on an expression is not supported (on a column is)");
        return qr_sqlp_at(p, loc, e);
    }
    int col = qr_tabdef_col(t->def, el->name, strlen(el->name));
    if (col < 0) {
        qr_errf(e, QR_E_UNDEFINED_COLUMN, "column \"%s\" does not exist", el->name);
        return qr_sqlp_at(p, loc, e);
    }
    /* INCLUDE (...) is accepted: every column is stored anyway; its names
     * must be columns */
    for (size_t i = 0; i < x->n_index_including_params; i++) {
        const PgQuery__Node *in = x->index_including_params[i];
        const char *nm =
            in->node_case == PG_QUERY__NODE__NODE_INDEX_ELEM ? in->index_elem->name : NULL;
        if (!nm || qr_tabdef_col(t->def, nm, strlen(nm)) < 0) {
            qr_errf(e, QR_E_UNDEFINED_COLUMN, "column \"%s\" in INCLUDE does not exist",
                    nm ? nm : "?");
            return qr_sqlp_at(p, loc, e);
        }
    }
    const char *method = x->access_method && x->access_method[0] ? x->access_method : "btree";
    int kind = index_kind(method, t->def->cols[col].type);
    if (kind < 0) {
        qr_errf(e, QR_E_UNDEFINED_OBJECT,
                "access method \"%s\" does not exist (inverted, keyword, range, paths, btree)",
                method);
        return qr_sqlp_at(p, loc, e);
    }
    const char *alias = x->idxname && x->idxname[0] ? x->idxname : NULL;
    if ((alias && qr_tabdef_index_by_name(t->def, alias, strlen(alias)) >= 0) ||
        qr_tabdef_index_any(t->def, col, kind) >= 0) {
        if (x->if_not_exists)
            return 0;
        qr_errf(e, QR_E_DUPLICATE_TABLE, "relation \"%s\" already has a %s index%s%s on \"%s\"",
                t->name, qr_ixkind_name(kind), alias ? " or one named " : "", alias ? alias : "",
                t->def->cols[col].name);
        return qr_sqlp_at(p, loc, e);
    }
    qr_tabdef *d = qr_tabdef_clone(t->def);
    if (!d)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    int at = qr_tabdef_add_index(d, col, kind, 0, alias, e);
    if (at < 0 || index_options(p, &d->ixs[at], x, e) != 0) {
        qr_tabdef_free(d);
        return at < 0 ? qr_sqlp_at(p, loc, e) : -1;
    }
    *def = d;
    return 0;
}

/* Table canon's definition replaced by d (its writer slot and LOCK held),
 * the database's catalog and snapshot of it refreshed. 0, or -1 with e. */
static int replace_def(qr_sql_db *db, const char *canon, const qr_tabdef *d, qr_err *e)
{
    qr_sqldb_lock(db, 1);
    int rc = 0;
    if (qr_sqldb_reload(db, e) != 0)
        rc = -1;
    else if (!catalog_name(db, canon))
        rc = qr_errf(e, QR_E_UNDEFINED_TABLE, "relation \"%s\" was dropped", canon);
    if (rc == 0)
        rc = qr_catalog_replace_table(qr_sql_db_dir(db), d, e);
    int rl = qr_sqldb_reload(db, rc == 0 ? e : NULL);
    rc = rc == 0 ? rl : rc;
    qr_sqldb_forget_table(db, canon);
    qr_sqldb_unlock(db);
    return rc;
}

/* Build table's indexes marked building here, on the statement's thread,
 * until none is (the merger may be doing the same: a step of one that the
 * other's commit overtook gives up and is tried again). */
static int build_indexes_here(qr_sql_db *db, const char *table, qr_qctx *ctx, qr_err *e)
{
    atomic_int never = 0;
    const atomic_int *stop = ctx && ctx->cancel ? ctx->cancel : &never;
    /* a step gives up when the table changed under it (another session's
     * VACUUM or build, another process writing it): tried again a while */
    for (int idle = 0;;) {
        uint32_t built, left;
        int r = ctx ? qr_qctx_check(ctx, e) : 0;
        if (r == 0)
            r = qr_build_indexes_table(db, table, stop, 1000, &built, &left, e);
        if (r < 0) {
            qr_err_prefix(e, "building the index for the rows already in %s: ", table);
            return -1;
        }
        if (r > 0) {
            idle = 0;
            continue;
        }
        /* the catalog file, which another process may have changed */
        qr_err oe;
        qr_table *t = qr_table_open(qr_sql_db_dir(db), table, QR_TABLE_READ, &oe);
        int building = 0;
        for (uint32_t i = 0; t && i < t->def->nixs; i++)
            building |= t->def->ixs[i].building;
        qr_table_close(t);
        if (!building)
            return 0;
        if (++idle == 100)
            return qr_errf(e, QR_E_LOCKED,
                           "table %s: the index is created but could not be built for the rows "
                           "already there (the table kept changing under the build, or another "
                           "process writes it); VACUUM or CREATE INDEX IF NOT EXISTS again "
                           "builds it",
                           table);
        struct timespec ts = {0, 50 * 1000000};
        nanosleep(&ts, NULL);
    }
}

int qr_sql_build_indexes(qr_sql_session *s, const char *table, qr_qctx *ctx, qr_err *e)
{
    if (qr_live_build_later(s->db))
        return 0;
    return build_indexes_here(s->db, table, ctx, e);
}

int qr_sql_stmt_index(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__IndexStmt *x,
                      qr_result *out, qr_err *e)
{
    qr_sql_db *db = s->db;
    if (!x->relation || qr_sql_relname(p, x->relation, e) != 0)
        return x->relation ? -1 : qr_errf(e, QR_E_SYNTAX, "CREATE INDEX needs a table");
    if (x->concurrent)
        return qr_errf(e, QR_E_FEATURE, "CREATE INDEX CONCURRENTLY is not supported");
    char canon[128];
    qr_sqldb_lock(db, 0);
    const char *cn = catalog_name(db, x->relation->relname);
    if (cn)
        snprintf(canon, sizeof canon, "%s", cn);
    qr_sqldb_unlock(db);
    if (!cn) {
        qr_errf(e, QR_E_UNDEFINED_TABLE, "relation \"%s\" does not exist", x->relation->relname);
        return qr_sqlp_at(p, x->relation->location, e);
    }
    /* the table's writer slot and LOCK, so that no writer is between
     * reading the definition and committing; held only for the catalog
     * change. On a table that holds rows the index is added marked
     * building: every segment written from now on has it, the older ones
     * are rewritten with it one at a time (sql/merge.h), in the background
     * when the database runs live (the statement returns at once), else
     * here; queries do not use it until every segment has it, so they
     * answer as before meanwhile. */
    qr_table *t = open_writer(db, canon, e);
    if (!t)
        return -1;
    qr_tabdef *d = NULL;
    int rc = index_def(p, t, x, &d, e), populated = t->man.nsegs > 0;
    /* Live, with no committed rows: the index is added building all the
     * same, since live segments written before it lack it (sql/live.h).
     * If none lacks it, it is marked built at once (qr_live_carries then
     * also turns away a writer that read the old definition); else they
     * are committed with it (below) and it is built here. */
    int live = qr_sqldb_live(db) != NULL, staged = 0;
    if (rc == 0 && d) {
        d->ixs[d->nixs - 1].building = populated || live;
        rc = replace_def(db, canon, d, e);
        if (rc == 0 && live && !populated) {
            if (qr_live_carries(db, canon, d)) {
                d->ixs[d->nixs - 1].building = 0;
                rc = replace_def(db, canon, d, e);
            } else {
                staged = 1;
            }
        }
    }
    qr_tabdef_free(d);
    qr_table_close(t);
    qr_sqldb_writer_end(db, canon);
    if (rc == 0 && staged && (rc = qr_live_flush(db, canon, e)) == 0)
        rc = build_indexes_here(db, canon, out->ctx, e);
    /* also for IF NOT EXISTS on an index whose build was interrupted */
    if (rc == 0 && populated)
        rc = qr_sql_build_indexes(s, canon, out->ctx, e);
    if (rc == 0)
        set_tag(out, "CREATE INDEX");
    return rc;
}

/* ---- SHOW TABLES ---- */

static int cmp_names(const void *a, const void *b)
{
    return strcasecmp(*(const char *const *)a, *(const char *const *)b);
}

int qr_sql_show_tables(qr_sql_session *s, qr_result *out, qr_err *e)
{
    qr_sql_db *db = s->db;
    qr_sqldb_lock(db, 0);
    const qr_catalog *c = qr_sqldb_catalog(db);
    const char **names = qr_qmalloc(out->ctx, sizeof *names * (c->ntables ? c->ntables : 1));
    int rc =
        names ? qr_result_add_col(out, "name", QR_RK_TEXT, 0, 0, e) : qr_qctx_nomem(out->ctx, e);
    if (rc == 0) {
        for (uint32_t i = 0; i < c->ntables; i++)
            names[i] = c->tables[i]->name;
        qsort(names, c->ntables, sizeof *names, cmp_names);
        for (uint32_t i = 0; rc == 0 && i < c->ntables; i++) {
            qr_cell *cell = qr_result_add_row(out, e);
            rc = cell ? qr_result_set_text(out, cell, names[i], strlen(names[i]), e) : -1;
        }
    }
    qr_qfree(out->ctx, names);
    qr_sqldb_unlock(db);
    set_tag(out, "SHOW");
    return rc;
}
