/* recover.c - at start, every table's write-ahead log records that are not
 * in segments yet (a server stopped by a crash) written as segments
 * (sql.h qr_sql_db_recover; the log's replay and torn-tail cut are
 * index/wal.c's). A table whose log another process owns is left to it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/catalog.h"
#include "index/table.h"
#include "index/wal.h"
#include "sql/db.h"
#include "sql/live.h"
#include "sql/rows.h"

typedef struct replay {
    qr_rowwriter w;
    int open;
    uint64_t last, rows;
    qr_sql_db *db;
    const char *name;
} replay;

static int add_row(void *arg, const char *line, size_t n, qr_err *e)
{
    replay *r = arg;
    r->rows++;
    return qr_rows_add(&r->w, line, n, e);
}

static int replay_record(void *arg, uint64_t seq, const unsigned char *p, size_t n, qr_err *e)
{
    replay *r = arg;
    if (!r->open) {
        if (qr_rows_begin_direct(&r->w, r->db, r->name, e) != 0)
            return -1;
        r->open = 1;
    }
    if (qr_live_each_row(p, n, add_row, r, e) != 0)
        return qr_err_prefix(e, "record %llu: ", (unsigned long long)seq);
    r->last = seq;
    return 0;
}

int qr_sql_db_recover(qr_sql_db *db, qr_err *e)
{
    qr_sqldb_lock(db, 0);
    const qr_catalog *c = qr_sqldb_catalog(db);
    uint32_t n = c->ntables;
    char(*names)[64] = calloc(n ? n : 1, sizeof *names);
    for (uint32_t i = 0; names && i < n; i++)
        snprintf(names[i], sizeof names[i], "%s", c->tables[i]->name);
    qr_sqldb_unlock(db);
    if (!names)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%s", qr_sql_db_dir(db), names[i]);
        if (!qr_wal_present(dir))
            continue;
        qr_table *tb = qr_table_open(qr_sql_db_dir(db), names[i], QR_TABLE_READ, e);
        if (!tb) {
            rc = -1;
            break;
        }
        uint64_t after = tb->man.wal_seq;
        qr_table_close(tb);
        replay r = {.db = db, .name = names[i]};
        qr_wal *w = qr_wal_open(dir, after, 1, replay_record, &r, e);
        if (!w) {
            if (r.open)
                qr_rows_abort(&r.w);
            if (!strcmp(e->code, QR_E_LOCKED)) { /* another process owns that log */
                rc = 0;
                continue;
            }
            rc = qr_err_prefix(e, "recovering table %s: ", names[i]);
            break;
        }
        qr_live_clean(dir); /* the crashed run's live segments: their rows are in the log */
        if (r.open) {
            uint64_t rows;
            rc = qr_rows_commit_wal(&r.w, r.last, &rows, e);
            if (rc == 0)
                fprintf(stderr,
                        "quarry: table %s: %llu rows of its log recovered (records %llu to "
                        "%llu)\n",
                        names[i], (unsigned long long)rows, (unsigned long long)after + 1,
                        (unsigned long long)r.last);
            else
                qr_err_prefix(e, "recovering table %s: ", names[i]);
        }
        if (rc == 0) {
            qr_wal_rotate(w, 0, NULL);
            qr_wal_release(w, r.open ? r.last : after);
        }
        qr_wal_close(w);
        qr_sqldb_forget_table(db, names[i]);
    }
    free(names);
    return rc;
}
