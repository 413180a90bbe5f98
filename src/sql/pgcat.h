/* pgcat.h - the system catalog answers: SELECTs over pg_catalog and
 * information_schema relations (what psql's \d, \dt, \l, \dn, \du and the
 * drivers' start-up and type-lookup queries read), answered by a small
 * row-at-a-time evaluator over libpg_query's tree (pgcat_eval.c) on
 * relations materialised per statement from Quarry's catalog (pgcat_rel.c).
 *
 * The data tables keep going to the vectorized engine: a statement that
 * names both a catalog relation and a data table is 0A000. A SELECT without
 * FROM comes here when it calls a function only this module knows
 * (version(), current_setting(), pg_* ...; qr_pgcat_wants).
 *
 * Ownership: everything a statement builds (relations, rows, values) lives
 * in an arena charged to the result's query context and freed at the end
 * of qr_pgcat_exec; the rows are copied into the qr_result. */
#ifndef QR_SQL_PGCAT_H
#define QR_SQL_PGCAT_H
#include <stdint.h>

#include "exec/result.h"
#include "index/catalog.h"
#include "sql/parse.h"
#include "util/err.h"

/* What the catalog answers need of the session and the database. */
typedef struct qr_pgcat_env {
    const qr_catalog *cat; /* held shared by the caller for the statement */
    const char *user;      /* current_user, the owner of everything */
    const char *database;  /* current_database() */
    int32_t pid;           /* pg_backend_pid() */
    /* SHOW name into buf (current_setting): 0, or -1 with e set */
    int (*setting)(void *ctx, const char *name, char *buf, size_t n, qr_err *e);
    /* a table's rows (reltuples) and bytes of its segments; -1 unknown */
    int64_t (*table_rows)(void *ctx, const char *table);
    int64_t (*table_bytes)(void *ctx, const char *table);
    void *ctx;
} qr_pgcat_env;

/* 1 when statement st (a SelectStmt or ExplainStmt node) is for this
 * module: it names a pg_catalog or information_schema relation (qualified,
 * or by a name of pg_catalog's, which is first in the search path), or has
 * no FROM anywhere and calls a function only this module knows. */
int qr_pgcat_wants(const PgQuery__Node *st, const qr_catalog *cat);

/* Run SELECT st into out (columns with their PostgreSQL types in
 * qr_rcol.pgoid, rows). 0, or -1 with e set: 42P01 unknown relation, 42703
 * unknown column, 42883 unknown function, 0A000 a construct not supported
 * (named, with its position), 22P02 a bad literal for a cast, 53200. */
int qr_pgcat_exec(const qr_pgcat_env *env, const qr_sqlparse *p, const PgQuery__Node *st,
                  qr_result *out, qr_err *e);

/* The OID the catalog answers give table `name` (stable across restarts:
 * from its name), or 0 when the catalog has no such table. */
uint32_t qr_pgcat_table_oid(const qr_catalog *cat, const char *name);
#endif
