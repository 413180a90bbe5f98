/* tx.c - a transaction block's writes: one row writer per table, published
 * at COMMIT, dropped at ROLLBACK, on an error and when the session ends
 * (tx.h). */
#include "sql/tx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/db.h"

struct qr_sql_tx {
    uint32_t n;
    qr_rowwriter *w[QR_TX_TABLES]; /* malloc'ed, begun */
    uint64_t rows0;                /* the writer's rows when the statement began */
};

static void drop_all(qr_sql_session *s)
{
    if (!s->tx)
        return;
    for (uint32_t i = 0; i < s->tx->n; i++) {
        qr_rows_abort(s->tx->w[i]);
        free(s->tx->w[i]);
    }
    free(s->tx);
    s->tx = NULL;
}

static int is_end(const PgQuery__Node *st)
{
    if (st->node_case != PG_QUERY__NODE__NODE_TRANSACTION_STMT)
        return 0;
    PgQuery__TransactionStmtKind k = st->transaction_stmt->kind;
    return k == PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_COMMIT ||
           k == PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK;
}

int qr_tx_admit(const qr_sql_session *s, const PgQuery__Node *st, qr_err *e)
{
    if (s->tx_failed && !is_end(st))
        return qr_errf(e, "25P02",
                       "current transaction is aborted, commands ignored until end of "
                       "transaction block");
    if (!s->tx || !s->tx->n)
        return 0;
    switch (st->node_case) {
    case PG_QUERY__NODE__NODE_SELECT_STMT:
    case PG_QUERY__NODE__NODE_EXPLAIN_STMT:
    case PG_QUERY__NODE__NODE_VARIABLE_SET_STMT:
    case PG_QUERY__NODE__NODE_VARIABLE_SHOW_STMT:
    case PG_QUERY__NODE__NODE_TRANSACTION_STMT:
    case PG_QUERY__NODE__NODE_INSERT_STMT:
    case PG_QUERY__NODE__NODE_COPY_STMT:
        return 0;
    default:
        return qr_errf(e, "25001",
                       "this statement cannot run in a transaction block that has written rows "
                       "(COMMIT or ROLLBACK first)");
    }
}

void qr_tx_fail(qr_sql_session *s)
{
    if (!s->in_tx)
        return;
    drop_all(s);
    s->tx_failed = 1;
}

int qr_tx_end(qr_sql_session *s, int commit, int *rolled_back, qr_err *e)
{
    int rc = 0;
    *rolled_back = !commit || s->tx_failed;
    if (commit && !s->tx_failed && s->tx)
        for (uint32_t i = 0; rc == 0 && i < s->tx->n; i++) {
            uint64_t rows;
            rc = qr_rows_commit(s->tx->w[i], &rows, e);
            free(s->tx->w[i]);
            s->tx->w[i] = NULL;
            if (rc != 0 && i)
                qr_err_prefix(e,
                              "COMMIT published the rows of %u of its %u tables, not the rest: ", i,
                              s->tx->n);
        }
    if (s->tx) /* what was not committed */
        for (uint32_t i = 0; i < s->tx->n; i++)
            if (s->tx->w[i]) {
                qr_rows_abort(s->tx->w[i]);
                free(s->tx->w[i]);
            }
    free(s->tx);
    s->tx = NULL;
    s->tx_failed = 0;
    s->in_tx = 0;
    return rc;
}

int qr_tx_writer(qr_sql_session *s, const char *name, uint32_t seg_rows, qr_qctx *ctx,
                 qr_rowwriter *own, qr_rowwriter **w, qr_err *e)
{
    if (!s->in_tx) {
        *w = own;
        return qr_rows_begin(own, s->db, name, seg_rows, ctx, e);
    }
    if (!s->tx && !(s->tx = calloc(1, sizeof *s->tx))) {
        qr_tx_fail(s);
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    }
    for (uint32_t i = 0; i < s->tx->n; i++)
        if (!strcasecmp(s->tx->w[i]->t->name, name)) {
            *w = s->tx->w[i];
            s->tx->rows0 = (*w)->rows;
            return 0;
        }
    if (s->tx->n == QR_TX_TABLES) {
        qr_tx_fail(s);
        return qr_errf(e, QR_E_TOO_LONG, "a transaction block writes at most %u tables",
                       QR_TX_TABLES);
    }
    /* the block's writer outlives the statement: not charged to its ctx */
    qr_rowwriter *nw = malloc(sizeof *nw);
    if (!nw || qr_rows_begin_waiting(nw, s->db, name, (uint32_t)s->set.lock_timeout_ms, e) != 0) {
        if (!nw)
            qr_errf(e, QR_E_NOMEM, "out of memory");
        free(nw);
        qr_tx_fail(s);
        return -1;
    }
    s->tx->w[s->tx->n++] = nw;
    s->tx->rows0 = 0;
    *w = nw;
    return 0;
}

void qr_tx_stmt_abort(qr_sql_session *s, qr_rowwriter *own, qr_rowwriter *w)
{
    if (w == own)
        qr_rows_abort(own);
    else
        qr_tx_fail(s);
}

int qr_tx_stmt_end(qr_sql_session *s, qr_rowwriter *own, qr_rowwriter *w, int ok, uint64_t *rows,
                   qr_err *e)
{
    *rows = 0;
    if (!ok) {
        qr_tx_stmt_abort(s, own, w);
        return 0;
    }
    if (w == own)
        return qr_rows_commit(own, rows, e);
    *rows = w->rows - s->tx->rows0;
    return 0;
}

void qr_sql_tx_error(qr_sql_session *s) { qr_tx_fail(s); }

char qr_sql_tx_status(const qr_sql_session *s) { return s->tx_failed ? 'E' : s->in_tx ? 'T' : 'I'; }
