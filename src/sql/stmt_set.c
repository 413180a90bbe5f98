/* stmt_set.c - a session's settings: SET [LOCAL] name {= | TO} value,
 * SET name TO DEFAULT, RESET name, RESET ALL, SHOW name, SHOW ALL (sql.h
 * qr_sql_set / qr_sql_show for the server's startup options), and BEGIN /
 * COMMIT / ROLLBACK.
 *
 * Four settings change how statements run (qr_sql_settings' numeric
 * fields): threads, memory_limit (alias quarry.memory_limit),
 * statement_timeout and lock_timeout. Every other name is kept as text in the session's
 * list, with a default for the parameters PostgreSQL clients ask for
 * (docs/SQL.md "Settings"). Transactions: BEGIN ... COMMIT holds the
 * block's INSERT and COPY rows until COMMIT (sql/tx.h), and SET LOCAL
 * inside one lasts until its COMMIT or ROLLBACK (outside one it does
 * nothing, as PostgreSQL, which only warns). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sql/db.h"
#include "sql/stmt.h"
#include "sql/tx.h"

#define QR_E_CANT_CHANGE "55P02" /* a read-only parameter */

/* Parameters with a default: SHOW prints it until SET changes it. */
typedef struct known {
    const char *name; /* as PostgreSQL spells it (SHOW's column name) */
    const char *dflt;
    int readonly;
    const char *desc;
} known;

static const known knowns[] = {
    {"application_name", "", 0, "the client's name"},
    {"client_encoding", "UTF8", 0, "the client's character set (UTF8 only)"},
    {"DateStyle", "ISO, MDY", 0, "kept for clients; timestamps print as RFC 3339"},
    {"default_transaction_isolation", "read committed", 0, "kept for clients"},
    {"enable_mergejoin", "on", 0,
     "off: every join and count(DISTINCT) runs by hash; on: those whose counts the keyword "
     "indexes answer are counted from them (docs/SQL.md \"Joins\")"},
    {"extra_float_digits", "1", 0, "kept for clients; floats print exactly"},
    {"integer_datetimes", "on", 1, "timestamps are integers"},
    {"IntervalStyle", "postgres", 0, "kept for clients"},
    {"is_superuser", "on", 1,
     "the session may CREATE USER (not under --auth scram as a user "
     "without SUPERUSER)"},
    {"max_identifier_length", "63", 1, "the longest table name"},
    {"password_encryption", "scram-sha-256", 1, "how CREATE USER keeps passwords"},
    {"search_path", "\"$user\", public", 0, "kept for clients; tables live in public"},
    {"server_encoding", "UTF8", 1, "text is UTF-8"},
    {"server_version", "15.0", 1, "the PostgreSQL version Quarry speaks"},
    {"server_version_num", "150000", 1, "the PostgreSQL version Quarry speaks"},
    {"standard_conforming_strings", "on", 0, "backslashes are literal in '...'"},
    {"TimeZone", "UTC", 0, "the time zone (UTC only)"},
    {"transaction_isolation", "read committed", 0, "kept for clients"},
    {"visibility", "acknowledged", 0,
     "kept for clients of earlier versions: every query sees every row acknowledged before it, "
     "at no wait, whichever value (acknowledged or refreshed)"},
};
#define NKNOWN (sizeof knowns / sizeof *knowns)

static const known *find_known(const char *name)
{
    for (size_t i = 0; i < NKNOWN; i++)
        if (!strcasecmp(knowns[i].name, name))
            return &knowns[i];
    return NULL;
}

/* ---- the text settings ---- */

static void gucs_free(qr_sql_settings *st)
{
    for (uint32_t i = 0; i < st->ngucs; i++) {
        free(st->gucs[i].name);
        free(st->gucs[i].value);
    }
    free(st->gucs);
    st->gucs = NULL;
    st->ngucs = 0;
}

void qr_sql_settings_free(qr_sql_session *s)
{
    gucs_free(&s->set);
    if (s->has_saved)
        gucs_free(&s->saved);
    s->has_saved = 0;
}

static qr_sql_guc *guc_find(const qr_sql_settings *st, const char *name)
{
    for (uint32_t i = 0; i < st->ngucs; i++)
        if (!strcasecmp(st->gucs[i].name, name))
            return &st->gucs[i];
    return NULL;
}

static int guc_put(qr_sql_settings *st, const char *name, const char *value, qr_err *e)
{
    char *v = strdup(value);
    if (!v)
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    qr_sql_guc *g = guc_find(st, name);
    if (g) {
        free(g->value);
        g->value = v;
        return 0;
    }
    qr_sql_guc *ng = realloc(st->gucs, sizeof *ng * (st->ngucs + 1));
    char *n = strdup(name);
    if (!ng || !n) {
        if (ng)
            st->gucs = ng;
        free(v);
        free(n);
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    }
    for (char *c = n; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    st->gucs = ng;
    st->gucs[st->ngucs++] = (qr_sql_guc){n, v};
    return 0;
}

static void guc_drop(qr_sql_settings *st, const char *name)
{
    qr_sql_guc *g = guc_find(st, name);
    if (!g)
        return;
    free(g->name);
    free(g->value);
    *g = st->gucs[--st->ngucs];
}

static int is_name(const char *a, const char *b) { return !strcasecmp(a, b); }

enum { NUM_THREADS = 1, NUM_MEMORY, NUM_TIMEOUT, NUM_LOCK };

static int numeric_kind(const char *name)
{
    if (is_name(name, "threads"))
        return NUM_THREADS;
    if (is_name(name, "memory_limit") || is_name(name, "quarry.memory_limit"))
        return NUM_MEMORY;
    if (is_name(name, "statement_timeout"))
        return NUM_TIMEOUT;
    if (is_name(name, "lock_timeout"))
        return NUM_LOCK;
    return 0;
}

/* SET LOCAL name: remember what name was before the transaction's first
 * SET LOCAL of it (NULL: not set, its default shows), for COMMIT and
 * ROLLBACK to put back. */
static int remember_local(qr_sql_session *s, const char *name, qr_err *e)
{
    if (!s->has_saved) {
        memset(&s->saved, 0, sizeof s->saved);
        s->has_saved = 1;
    }
    if (guc_find(&s->saved, name))
        return 0;
    char buf[512];
    const char *old = NULL;
    if (numeric_kind(name) || guc_find(&s->set, name)) {
        if (qr_sql_show(s, name, buf, sizeof buf, e) != 0)
            return -1;
        old = buf;
    }
    if (guc_put(&s->saved, name, old ? old : "", e) != 0)
        return -1;
    if (!old) {
        qr_sql_guc *g = guc_find(&s->saved, name);
        free(g->value);
        g->value = NULL;
    }
    return 0;
}

/* The end of a transaction: what SET LOCAL changed goes back. */
static void restore_locals(qr_sql_session *s)
{
    if (!s->has_saved)
        return;
    for (uint32_t i = 0; i < s->saved.ngucs; i++) {
        const qr_sql_guc *g = &s->saved.gucs[i];
        qr_err e;
        if (g->value)
            qr_sql_set(s, g->name, g->value, &e); /* a value it had: it reads back */
        else
            guc_drop(&s->set, g->name);
    }
    gucs_free(&s->saved);
    s->has_saved = 0;
}

/* ---- values with units ---- */

/* "512MB", "1.5GB", "100": a number and an optional unit from units[]
 * (names and multipliers; the first is the unit of a bare number). */
typedef struct unit {
    const char *name;
    double mult;
} unit;

static int parse_with_unit(const char *name, const char *v, const unit *units, size_t nunits,
                           double max, uint64_t *out, qr_err *e)
{
    char *end;
    while (isspace((unsigned char)*v))
        v++;
    double d = strtod(v, &end);
    if (end == v || !isfinite(d) || d < 0)
        return qr_errf(e, QR_E_ARGS, "invalid value for parameter \"%s\": \"%s\"", name, v);
    while (isspace((unsigned char)*end))
        end++;
    double mult = units[0].mult;
    if (*end) {
        size_t i = 0;
        while (i < nunits && strcasecmp(end, units[i].name) != 0)
            i++;
        if (i == nunits)
            return qr_errf(e, QR_E_ARGS,
                           "invalid value for parameter \"%s\": \"%s\" (unknown unit \"%s\")", name,
                           v, end);
        mult = units[i].mult;
    }
    d *= mult;
    if (d > max)
        return qr_errf(e, QR_E_ARGS, "%s \"%s\" is out of range (at most %.0f)", name, v, max);
    *out = (uint64_t)(d + 0.5);
    return 0;
}

static const unit mem_units[] = {{"B", 1},
                                 {"kB", 1024.0},
                                 {"MB", 1048576.0},
                                 {"GB", 1073741824.0},
                                 {"TB", 1099511627776.0},
                                 {"KiB", 1024.0},
                                 {"MiB", 1048576.0},
                                 {"GiB", 1073741824.0}};
static const unit time_units[] = {{"ms", 1},      {"us", 0.001},  {"s", 1000},
                                  {"min", 60000}, {"h", 3600000}, {"d", 86400000}};

static void show_memory(uint64_t v, char *buf, size_t n)
{
    static const char *names[] = {"B", "kB", "MB", "GB", "TB"};
    int u = 0;
    while (u < 4 && v && v % 1024 == 0)
        v /= 1024, u++;
    snprintf(buf, n, "%llu%s", (unsigned long long)v, v ? names[u] : "");
}

static void show_timeout(uint64_t ms, char *buf, size_t n)
{
    if (ms == 0)
        snprintf(buf, n, "0");
    else if (ms % 86400000 == 0)
        snprintf(buf, n, "%llud", (unsigned long long)(ms / 86400000));
    else if (ms % 3600000 == 0)
        snprintf(buf, n, "%lluh", (unsigned long long)(ms / 3600000));
    else if (ms % 60000 == 0)
        snprintf(buf, n, "%llumin", (unsigned long long)(ms / 60000));
    else if (ms % 1000 == 0)
        snprintf(buf, n, "%llus", (unsigned long long)(ms / 1000));
    else
        snprintf(buf, n, "%llums", (unsigned long long)ms);
}

static int one_of(const char *v, const char *const *names)
{
    for (; *names; names++)
        if (!strcasecmp(v, *names))
            return 1;
    return 0;
}

/* ---- SET, RESET, SHOW ---- */

int qr_sql_set(qr_sql_session *s, const char *name, const char *value, qr_err *e)
{
    uint64_t v;
    int kind = numeric_kind(name);
    switch (kind) {
    case NUM_THREADS: {
        int max = qr_sql_db_threads(s->db);
        if (parse_with_unit(name, value, (const unit[]){{"", 1}}, 1, 1e9, &v, e) != 0)
            return -1;
        if (v < 1 || v > (uint64_t)max)
            return qr_errf(e, QR_E_ARGS, "threads must be 1..%d (the database's pool), not %s", max,
                           value);
        s->set.threads = (int)v;
        return 0;
    }
    case NUM_MEMORY:
        if (parse_with_unit(name, value, mem_units, sizeof mem_units / sizeof *mem_units,
                            (double)(1ull << 50), &v, e) != 0)
            return -1;
        s->set.memory_limit = v;
        return 0;
    case NUM_TIMEOUT:
    case NUM_LOCK:
        if (parse_with_unit(name, value, time_units, sizeof time_units / sizeof *time_units,
                            2147483647.0, &v, e) != 0)
            return -1;
        *(kind == NUM_TIMEOUT ? &s->set.statement_timeout_ms : &s->set.lock_timeout_ms) = v;
        return 0;
    }
    const known *k = find_known(name);
    if (k && k->readonly)
        return qr_errf(e, QR_E_CANT_CHANGE, "parameter \"%s\" cannot be changed", k->name);
    if (is_name(name, "client_encoding")) {
        static const char *const utf8[] = {"UTF8", "UTF-8", "UNICODE", "utf8mb4", NULL};
        if (!one_of(value, utf8))
            return qr_errf(e, QR_E_ARGS,
                           "client_encoding \"%s\" is not supported: Quarry speaks UTF8 only",
                           value);
        value = "UTF8";
    } else if (is_name(name, "visibility")) {
        static const char *const ack[] = {"acknowledged", NULL}, *const ref[] = {"refreshed", NULL};
        if (!one_of(value, ack) && !one_of(value, ref))
            return qr_errf(e, QR_E_ARGS, "visibility must be acknowledged or refreshed, not \"%s\"",
                           value);
        value = one_of(value, ack) ? "acknowledged" : "refreshed";
    } else if (is_name(name, "enable_mergejoin")) {
        static const char *const on[] = {"on", "true", "yes", "1", "t", "y", NULL},
                                 *const off[] = {"off", "false", "no", "0", "f", "n", NULL};
        if (!one_of(value, on) && !one_of(value, off))
            return qr_errf(e, QR_E_ARGS, "parameter \"enable_mergejoin\" requires a Boolean value");
        value = one_of(value, on) ? "on" : "off";
    } else if (is_name(name, "timezone")) {
        static const char *const utc[] = {"UTC",  "GMT",    "Etc/UTC", "Etc/GMT", "Z",
                                          "UTC0", "+00:00", "00:00",   "0",       "Universal",
                                          "Zulu", "+00",    NULL};
        if (!one_of(value, utc))
            return qr_errf(e, QR_E_ARGS,
                           "time zone \"%s\" is not supported: timestamps are UTC (SET TimeZone "
                           "= 'UTC')",
                           value);
        value = "UTC";
    }
    return guc_put(&s->set, name, value, e);
}

static void reset_one(qr_sql_session *s, const char *name)
{
    switch (numeric_kind(name)) {
    case NUM_THREADS:
        s->set.threads = s->boot_threads;
        return;
    case NUM_MEMORY:
        s->set.memory_limit = s->boot_memory_limit;
        return;
    case NUM_TIMEOUT:
        s->set.statement_timeout_ms = s->boot_timeout_ms;
        return;
    case NUM_LOCK:
        s->set.lock_timeout_ms = s->boot_lock_ms;
        return;
    }
    guc_drop(&s->set, name);
}

static void reset_all(qr_sql_session *s)
{
    s->set.threads = s->boot_threads;
    s->set.memory_limit = s->boot_memory_limit;
    s->set.statement_timeout_ms = s->boot_timeout_ms;
    s->set.lock_timeout_ms = s->boot_lock_ms;
    gucs_free(&s->set);
}

int qr_sql_show(const qr_sql_session *s, const char *name, char *buf, size_t n, qr_err *e)
{
    switch (numeric_kind(name)) {
    case NUM_THREADS:
        snprintf(buf, n, "%d", s->set.threads);
        return 0;
    case NUM_MEMORY:
        show_memory(s->set.memory_limit, buf, n);
        return 0;
    case NUM_TIMEOUT:
        show_timeout(s->set.statement_timeout_ms, buf, n);
        return 0;
    case NUM_LOCK:
        show_timeout(s->set.lock_timeout_ms, buf, n);
        return 0;
    }
    if (!strcasecmp(name, "is_superuser")) { /* the session's: may it CREATE USER? */
        snprintf(buf, n, "%s", s->restricted ? "off" : "on");
        return 0;
    }
    const qr_sql_guc *g = guc_find(&s->set, name);
    const known *k = find_known(name);
    if (!g && !k)
        return qr_errf(e, QR_E_UNDEFINED_OBJECT, "unrecognized configuration parameter \"%s\"",
                       name);
    snprintf(buf, n, "%s", g ? g->value : k->dflt);
    return 0;
}

/* The value of SET's arguments as text: constants, a list joined by ", "
 * (SET search_path = a, b), a cast's operand. NULL with e set. */
static int arg_text(const qr_sqlparse *p, const PgQuery__Node *n, qr_buf *out, qr_err *e)
{
    if (n->node_case == PG_QUERY__NODE__NODE_TYPE_CAST && n->type_cast->arg)
        return arg_text(p, n->type_cast->arg, out, e);
    if (n->node_case == PG_QUERY__NODE__NODE_A_CONST) {
        const PgQuery__AConst *c = n->a_const;
        char t[32];
        switch (c->val_case) {
        case PG_QUERY__A__CONST__VAL_SVAL:
            qr_buf_put(out, c->sval->sval, strlen(c->sval->sval));
            return 0;
        case PG_QUERY__A__CONST__VAL_IVAL:
            snprintf(t, sizeof t, "%d", (int)c->ival->ival);
            qr_buf_put(out, t, strlen(t));
            return 0;
        case PG_QUERY__A__CONST__VAL_FVAL:
            qr_buf_put(out, c->fval->fval, strlen(c->fval->fval));
            return 0;
        case PG_QUERY__A__CONST__VAL_BOOLVAL:
            qr_buf_put(out, c->boolval->boolval ? "on" : "off", c->boolval->boolval ? 2 : 3);
            return 0;
        default:
            break;
        }
    }
    qr_errf(e, QR_E_SYNTAX, "SET takes constants (a string, a number, a name)");
    int32_t loc = n->node_case == PG_QUERY__NODE__NODE_A_CONST ? n->a_const->location : -1;
    return qr_sqlp_at(p, loc, e);
}

static void set_tag(qr_result *out, const char *tag)
{
    snprintf(out->tag, sizeof out->tag, "%s", tag);
}

int qr_sql_stmt_set(qr_sql_session *s, const qr_sqlparse *p, const PgQuery__VariableSetStmt *v,
                    qr_result *out, qr_err *e)
{
    const char *name = v->name ? v->name : "";
    int reset = v->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_RESET ||
                v->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_RESET_ALL;
    set_tag(out, reset ? "RESET" : "SET");
    if (v->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_SET_MULTI)
        return 0; /* SET TRANSACTION ..., SET SESSION CHARACTERISTICS: one isolation level */
    if (v->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_SET_CURRENT)
        return qr_errf(e, QR_E_FEATURE, "SET ... FROM CURRENT is not supported");
    if (v->is_local && !s->in_tx)
        return 0; /* no transaction block: nothing to set (PostgreSQL warns) */
    if (v->is_local && remember_local(s, name, e) != 0)
        return -1;
    if (v->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_RESET_ALL) {
        reset_all(s);
        return 0;
    }
    const known *k = find_known(name);
    if (v->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_RESET ||
        v->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_SET_DEFAULT) {
        if (k && k->readonly)
            return qr_errf(e, QR_E_CANT_CHANGE, "parameter \"%s\" cannot be changed", k->name);
        reset_one(s, name);
        return 0;
    }
    qr_buf val;
    qr_buf_init(&val);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < v->n_args; i++) {
        if (i)
            qr_buf_put(&val, ", ", 2);
        rc = arg_text(p, v->args[i], &val, e);
    }
    qr_buf_put_u8(&val, 0);
    if (rc == 0 && val.oom)
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    if (rc == 0) {
        const char *text = (const char *)val.p;
        if (k && !strcmp(k->name, "DateStyle")) /* PostgreSQL prints it upper-case */
            for (unsigned char *c = val.p; *c; c++)
                *c = (unsigned char)toupper(*c);
        rc = qr_sql_set(s, name, text, e);
    }
    qr_buf_free(&val);
    return rc;
}

int qr_sql_stmt_show(qr_sql_session *s, const PgQuery__VariableShowStmt *v, qr_result *out,
                     qr_err *e)
{
    char buf[512];
    set_tag(out, "SHOW");
    if (!strcmp(v->name, "all")) {
        if (qr_result_add_col(out, "name", QR_RK_TEXT, 0, 0, e) ||
            qr_result_add_col(out, "setting", QR_RK_TEXT, 0, 0, e) ||
            qr_result_add_col(out, "description", QR_RK_TEXT, 0, 0, e))
            return -1;
        static const char *const nums[] = {"lock_timeout", "memory_limit", "statement_timeout",
                                           "threads"};
        static const char *const numdesc[] = {
            "a block's wait for a table another writer holds (55P03 past it; 0 = none)",
            "memory a statement may take (53200 past it; 0 = none)",
            "a statement past it is canceled (57014; 0 = none)", "workers per statement"};
        enum { NNUMS = sizeof nums / sizeof *nums };
        /* numeric ones, the known ones, then the names only SET gave */
        for (size_t i = 0; i < NNUMS + NKNOWN + s->set.ngucs; i++) {
            const char *name, *desc = "";
            if (i < NNUMS) {
                name = nums[i];
                desc = numdesc[i];
            } else if (i < NNUMS + NKNOWN) {
                name = knowns[i - NNUMS].name;
                desc = knowns[i - NNUMS].desc;
            } else {
                name = s->set.gucs[i - NNUMS - NKNOWN].name;
                if (find_known(name))
                    continue;
            }
            if (qr_sql_show(s, name, buf, sizeof buf, e) != 0)
                return -1;
            qr_cell *c = qr_result_add_row(out, e);
            if (!c || qr_result_set_text(out, &c[0], name, strlen(name), e) ||
                qr_result_set_text(out, &c[1], buf, strlen(buf), e) ||
                qr_result_set_text(out, &c[2], desc, strlen(desc), e))
                return -1;
        }
        return 0;
    }
    if (qr_sql_show(s, v->name, buf, sizeof buf, e) != 0)
        return -1;
    const known *k = find_known(v->name);
    const char *col = k ? k->name : v->name;
    if (qr_result_add_col(out, col, QR_RK_TEXT, 0, 0, e) != 0)
        return -1;
    qr_cell *c = qr_result_add_row(out, e);
    return c ? qr_result_set_text(out, c, buf, strlen(buf), e) : -1;
}

int qr_sql_stmt_transaction(qr_sql_session *s, const qr_sqlparse *p,
                            const PgQuery__TransactionStmt *t, qr_result *out, qr_err *e)
{
    switch (t->kind) {
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_BEGIN:
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_START:
        s->in_tx = 1;
        set_tag(out, "BEGIN");
        return 0;
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_COMMIT:
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK: {
        restore_locals(s); /* SET LOCAL ends with the transaction */
        int rolled_back;
        if (qr_tx_end(s, t->kind == PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_COMMIT,
                      &rolled_back, e) != 0)
            return -1;
        set_tag(out, rolled_back ? "ROLLBACK" : "COMMIT");
        return 0;
    }
    default:
        return qr_errf(e, QR_E_FEATURE,
                       "savepoints and prepared transactions are not supported (BEGIN, COMMIT "
                       "and ROLLBACK are)");
    }
}
