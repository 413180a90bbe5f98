/* stmt.c - dispatch of the statements that are not SELECT (stmt.h) to the
 * module that runs each. */
#include "sql/stmt.h"

#include <string.h>

const char *qr_sql_strval(const PgQuery__Node *n)
{
    return n && n->node_case == PG_QUERY__NODE__NODE_STRING ? n->string->sval : NULL;
}

int qr_sql_relname(const qr_sqlparse *p, const PgQuery__RangeVar *rv, qr_err *e)
{
    if (rv->catalogname && rv->catalogname[0]) {
        qr_errf(e, QR_E_FEATURE, "database names in a table name are not supported");
        return qr_sqlp_at(p, rv->location, e);
    }
    if (rv->schemaname && rv->schemaname[0] && strcmp(rv->schemaname, "public") != 0) {
        qr_errf(e, QR_E_FEATURE, "schema \"%.64s\" is not supported (tables live in public)",
                rv->schemaname);
        return qr_sqlp_at(p, rv->location, e);
    }
    return 0;
}

int qr_sql_stmt(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__Node *st, qr_result *out,
                qr_err *e)
{
    switch (st->node_case) {
    case PG_QUERY__NODE__NODE_VARIABLE_SET_STMT:
        return qr_sql_stmt_set(s, p, st->variable_set_stmt, out, e);
    case PG_QUERY__NODE__NODE_VARIABLE_SHOW_STMT: {
        if (!strcmp(st->variable_show_stmt->name, "tables"))
            return qr_sql_show_tables(s, out, e);
        /* a few rows that SET made: not bound by memory_limit, so that a
         * limit too small for anything can still be seen (and RESET) */
        size_t limit = out->ctx ? out->ctx->limit : 0;
        if (out->ctx)
            out->ctx->limit = 0;
        int rc = qr_sql_stmt_show(s, st->variable_show_stmt, out, e);
        if (out->ctx)
            out->ctx->limit = limit;
        return rc;
    }
    case PG_QUERY__NODE__NODE_TRANSACTION_STMT:
        return qr_sql_stmt_transaction(s, p, st->transaction_stmt, out, e);
    case PG_QUERY__NODE__NODE_CREATE_STMT:
        return qr_sql_stmt_create(s, p, st->create_stmt, out, e);
    case PG_QUERY__NODE__NODE_DROP_STMT:
        return qr_sql_stmt_drop(s, p, st->drop_stmt, out, e);
    case PG_QUERY__NODE__NODE_INDEX_STMT:
        return qr_sql_stmt_index(s, p, st->index_stmt, out, e);
    case PG_QUERY__NODE__NODE_TRUNCATE_STMT:
        return qr_sql_stmt_truncate(s, p, st->truncate_stmt, out, e);
    case PG_QUERY__NODE__NODE_VACUUM_STMT:
        return qr_sql_stmt_vacuum(s, p, st->vacuum_stmt, out, e);
    case PG_QUERY__NODE__NODE_INSERT_STMT:
        return qr_sql_stmt_insert(s, p, st->insert_stmt, out, e);
    case PG_QUERY__NODE__NODE_DELETE_STMT:
        return qr_sql_stmt_delete(s, p, st->delete_stmt, out, e);
    case PG_QUERY__NODE__NODE_COPY_STMT:
        return qr_sql_stmt_copy(s, p, st->copy_stmt, out, e);
    case PG_QUERY__NODE__NODE_ALTER_TABLE_STMT:
        return qr_sql_stmt_alter(s, p, st->alter_table_stmt, out, e);
    case PG_QUERY__NODE__NODE_CREATE_ROLE_STMT:
    case PG_QUERY__NODE__NODE_ALTER_ROLE_STMT:
    case PG_QUERY__NODE__NODE_DROP_ROLE_STMT:
        return qr_sql_stmt_role(s, p, st, out, e);
    default: {
        const char *what =
            st->node_case == PG_QUERY__NODE__NODE_UPDATE_STMT ? "UPDATE" : "this statement";
        return qr_errf(
            e, QR_E_FEATURE,
            "%s is not supported yet (SELECT, EXPLAIN, SET, SHOW, CREATE TABLE, "
            "CREATE INDEX, DROP TABLE, TRUNCATE, ALTER TABLE SET (retention), INSERT, DELETE, COPY "
            "and CREATE/ALTER/DROP USER are)",
            what);
    }
    }
}
