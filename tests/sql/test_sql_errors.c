/* test_sql_errors.c - the front end's errors: SQLSTATE codes and
 * PostgreSQL-style character positions for syntax errors, unknown tables
 * and columns, unsupported constructs and bad arguments; names bound
 * case-insensitively unless quoted; the list-literal rewrite keeps
 * positions of the user's text. */
#include "testutil.h"

#include "sql/parse.h"
#include "sql/sql.h"

static qr_catalog cat;
static char *dir;

static int setup(void **st)
{
    (void)st;
    dir = tu_tmpdir();
    tu_create_otel_table(dir, "logs");
    qr_err e;
    assert_int_equal(qr_catalog_load(dir, &cat, &e), 0);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    qr_catalog_free(&cat);
    tu_rmdir(dir);
    return 0;
}

static void expect(const char *sql, const char *code, const char *msg)
{
    qr_err e;
    qr_err_clear(&e);
    int rc = qr_sql_check(&cat, sql, strlen(sql), &e);
    if (!code) {
        if (rc != 0)
            fail_msg("%s: unexpected %s %s", sql, e.code, e.msg);
        return;
    }
    if (rc == 0)
        fail_msg("%s: accepted, expected %s", sql, code);
    if (strcmp(e.code, code) || strcmp(e.msg, msg))
        fail_msg("%s:\n got  %s %s\n want %s %s", sql, e.code, e.msg, code, msg);
}

static void test_sql_error_positions(void **st)
{
    (void)st;
    expect("SELECT Body FROM logs WHERE bdy @@ 'x'", "42703",
           "column \"bdy\" does not exist at character 29");
    expect("SELECT bdy FROM logs", "42703", "column \"bdy\" does not exist at character 8");
    expect("SELECT * FORM logs", "42601", "syntax error at or near \"FORM\" at character 10");
    expect("SELECT * FROM nope", "42P01", "relation \"nope\" does not exist at character 15");
    expect("SELECT x.Body FROM logs t", "42P01",
           "missing FROM-clause entry for table \"x\" at character 8");
    /* positions count characters, not bytes, and ignore the inserted ARRAY */
    expect("SELECT Body FROM logs WHERE Body @@ ts_any(['é', 'ü']) AND nope = 1", "42703",
           "column \"nope\" does not exist at character 60");
    expect("SELECT * FROM logs WHERE Body @@ ts_any([1, 2])", "42804",
           "expected a string literal, found a literal at character 42");
}

static void test_sql_identifiers_fold_unless_quoted(void **st)
{
    (void)st;
    expect("SELECT Body, body, BODY, \"Body\" FROM LOGS WHERE servicename = 'cart'", NULL, NULL);
    expect("SELECT \"body\" FROM logs", "42703", "column \"body\" does not exist at character 8");
    expect("SELECT t.body FROM logs AS t WHERE T.SeverityNumber > 3", NULL, NULL);
    expect("SELECT Body FROM \"LOGS\"", "42P01",
           "relation \"LOGS\" does not exist at character 18");
}

static void test_sql_unsupported_says_what(void **st)
{
    (void)st;
    expect("SELECT a.Body FROM logs a JOIN logs b ON a.TraceId = b.TraceId", NULL, NULL);
    expect("SELECT a.Body FROM logs a FULL JOIN logs b ON a.TraceId = b.TraceId", NULL, NULL);
    expect("SELECT a.Body FROM logs a RIGHT JOIN logs b USING (TraceId) WHERE b.Body @@ 'x'", NULL,
           NULL);
    /* an outer join's ON: equal keys, and terms that may filter one scan first */
    expect("SELECT a.Body FROM logs a RIGHT JOIN logs b ON a.TraceId = b.TraceId AND a.Body @@ "
           "'x' AND a.SeverityNumber > 9",
           NULL, NULL);
    expect("SELECT a.Body FROM logs a FULL JOIN logs b ON a.TraceId = b.TraceId AND "
           "b.SeverityNumber > 9",
           "0A000",
           "this FULL JOIN condition is not supported yet (equal keys are) at character 90");
    expect("SELECT a.Body FROM logs a RIGHT JOIN logs b ON a.TraceId = b.TraceId AND b.Body @@ "
           "'x'",
           "0A000",
           "this RIGHT JOIN condition is not supported yet (equal keys, and conditions on one "
           "table before it are) at character 81");
    expect("SELECT a.Body FROM logs a RIGHT JOIN logs b ON a.TraceId = b.TraceId AND "
           "a.SeverityNumber < b.SeverityNumber",
           "0A000",
           "this RIGHT JOIN condition is not supported yet (equal keys, and conditions on one "
           "table before it are) at character 91");
    expect("SELECT a.Body FROM logs a LEFT JOIN logs b ON a.TraceId = b.TraceId AND "
           "a.SeverityNumber > 9",
           "0A000",
           "this LEFT JOIN condition is not supported yet (equal keys, and conditions on the "
           "joined table are) at character 90");
    /* a full-text term must filter its table's scan, which a null-extended
     * table's cannot */
    expect("SELECT a.Body FROM logs a LEFT JOIN logs b ON a.TraceId = b.TraceId WHERE b.Body @@ "
           "'x'",
           "0A000",
           "a full-text condition on \"b\" is not supported here: an outer join null-extends its "
           "rows at character 82");
    expect("SELECT a.Body FROM logs a FULL JOIN logs b USING (TraceId) WHERE a.Body @@ 'x'",
           "0A000",
           "a full-text condition on \"a\" is not supported here: an outer join null-extends its "
           "rows at character 73");
    expect("SELECT a.Body FROM logs a JOIN logs b ON a.TraceId = b.TraceId AND a.Body = c.Body "
           "JOIN logs c ON c.TraceId = a.TraceId",
           "42P01",
           "invalid reference to FROM-clause entry for table \"c\" (an ON condition may name "
           "only the tables joined so far) at character 75");
    expect("SELECT Body FROM logs a JOIN logs b ON a.TraceId = b.TraceId", "42702",
           "column reference \"body\" is ambiguous at character 8");
    expect("SELECT a.Body FROM logs a JOIN logs b ON a.Body @@ 'x'", "0A000",
           "table \"b\" is joined without an equal key (cross joins are not supported) at "
           "character 32");
    expect("SELECT a.Body FROM logs a JOIN logs a ON a.TraceId = a.TraceId", "42712",
           "table name \"a\" specified more than once (give each an alias) at character 32");
    expect("SELECT count(*) FROM logs a JOIN logs b ON a.TraceId = b.SeverityNumber", "42883",
           "operator does not exist: text vs bigint at character 54");
    expect("SELECT max(DISTINCT SeverityNumber) FROM logs", "0A000",
           "max(DISTINCT ...) is not supported yet (count(DISTINCT ...) is) at character 8");
    expect("UPDATE logs SET Body = 'x'", "0A000",
           "UPDATE is not supported yet (SELECT and EXPLAIN SELECT are)");
    expect("SELECT count(DISTINCT TraceId) FROM logs", NULL, NULL);
    expect("SELECT Body FROM logs WHERE Body @@ 'x' OR Body LIKE '%x%'", "0A000",
           "@@ outside the index filter (under OR with a predicate the index cannot answer, or "
           "outside WHERE) is not supported at character 34");
    expect("SELECT Body FROM logs WHERE ServiceName + 1 > 2", "42883",
           "operator does not exist: + on these types at character 41");
    expect("SELECT nosuchfn(Body) FROM logs", "42883",
           "function nosuchfn() does not exist (docs/SQL.md lists the functions) at character 8");
    expect("SELECT Body FROM logs GROUP BY ServiceName", "42803",
           "column \"Body\" must appear in the GROUP BY clause or be used in an aggregate "
           "function at character 8");
    expect("SELECT date_trunc('fortnight', Timestamp) FROM logs", "22023",
           "date_trunc unit \"fortnight\" not recognized at character 19");
    expect("SELECT Body FROM logs WHERE SeverityNumber = 'x'", "22P02",
           "invalid input syntax for type int32: \"x\" (column \"SeverityNumber\") at character 46");
    expect("SELECT ServiceName FROM logs UNION ALL SELECT ScopeName FROM logs ORDER BY 1", NULL,
           NULL);
    expect("SELECT ServiceName FROM logs UNION SELECT nope FROM logs", "42703",
           "column \"nope\" does not exist at character 43");
    expect("SELECT 1 INTERSECT SELECT 'a'", "42804",
           "INTERSECT column 1: the two sides' types cannot be matched (cast one)");
    expect("SELECT ServiceName FROM logs EXCEPT ALL SELECT 1, 2", "42601",
           "each EXCEPT query must have the same number of columns (1 and 2)");
    expect("SELECT Body FROM logs WHERE count(*) > 1", "42803",
           "aggregate functions are not allowed in WHERE at character 29");
    expect("SELECT Body FROM logs WHERE ServiceName @@ 'x'", "0A000",
           "column \"ServiceName\" has no full-text index: @@ needs one at character 29");
    expect("SELECT Body FROM logs ORDER BY bm25() DESC", "0A000",
           "bm25() needs ORDER BY bm25() DESC LIMIT k (alone) in this version");
    expect("SELECT Body, count(*) FROM logs", "42803",
           "column \"Body\" must appear in the GROUP BY clause or be used in an aggregate "
           "function at character 8");
    expect("SELECT sum(Body) FROM logs", "42804",
           "function sum(text) does not exist (column \"Body\") at character 8");
    expect("SELECT 1; SELECT 2", "0A000",
           "one statement at a time here (got 2): split them with qr_sql_split");
}

static void test_sql_dialect_accepted(void **st)
{
    (void)st;
    static const char *ok[] = {
        "SELECT count(*) FROM logs WHERE Body @@ ts_phrase('failed') ## 2 ## 'order'",
        "SELECT count(*) FROM logs t WHERE t.Body @@ ts_any(ARRAY['a','b'], 2)",
        "SELECT Body, BM25(t.tableoid) FROM logs t WHERE Body @@ 'x' ORDER BY BM25(t.tableoid) "
        "DESC LIMIT 10",
        "SELECT * FROM logs WHERE Timestamp BETWEEN TIMESTAMP '2025-09-23 00:00:00' AND "
        "'2025-09-23 00:01:00'::TIMESTAMP_NS ORDER BY Timestamp DESC LIMIT 5",
        "SELECT ServiceName, SeverityText, count(*), min(SeverityNumber), avg(SeverityNumber) "
        "FROM logs GROUP BY 1, SeverityText ORDER BY 3 DESC LIMIT 5 OFFSET 2",
        "EXPLAIN SELECT count(*) FROM logs WHERE Body @@ ts_levenshtein('cahce', 2)",
        "SELECT Body FROM logs WHERE ServiceName NOT IN ('a', 'b') AND NOT (SeverityNumber < 9)",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        expect(ok[i], NULL, NULL);
    expect("SELECT count(*) FROM logs WHERE Body @@ ts_levenshtein('cahce', 3)", "22023",
           "ts_levenshtein takes a word and a distance of 1 or 2 at character 41");
    expect("SELECT count(*) FROM logs WHERE Body @@ ts_any(['a'], 2)", "22023",
           "ts_any's minimum match 2 is more than its 1 words at character 55");
    expect(
        "SELECT count(*) FROM logs WHERE Timestamp > TIMESTAMP 'yesterday'", "22P02",
        "invalid timestamp for column \"Timestamp\" (TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.fffffffff]' "
        "or RFC 3339) at character 55");
}

/* Statements that would nest the parse tree past what the C stack holds
 * get 54001, never a crash (libpg_query and protobuf-c recurse per level). */
static char *chain(const char *head, const char *piece, int n, const char *tail)
{
    size_t hl = strlen(head), pl = strlen(piece), tl = strlen(tail);
    char *q = malloc(hl + pl * (size_t)n + tl + 1);
    assert_non_null(q);
    memcpy(q, head, hl);
    for (int i = 0; i < n; i++)
        memcpy(q + hl + pl * (size_t)i, piece, pl);
    memcpy(q + hl + pl * (size_t)n, tail, tl + 1);
    return q;
}

static void test_sql_deep_statements_refused(void **st)
{
    (void)st;
    static const struct {
        const char *head, *piece, *tail;
        int n;
        const char *code, *msg;
    } c[] = {
        {"SELECT 1", " + 1", "", 400, NULL, NULL},
        {"SELECT count(*) FROM logs WHERE SeverityNumber > 0", " + 1", "", 300, NULL, NULL},
        {"SELECT 1", " + 1", "", 5000, "54001",
         "statement nested too deeply (more than 1000 levels: a chain of thousands of operators "
         "or parentheses)"},
        {"SELECT 'a'", " || 'a'", "", 60000, "54001",
         "statement too complex: 60000 operators, parentheses and NOTs (at most 20000)"},
        {"SELECT ", "NOT ", "true", 30000, "54001",
         "statement too complex: 30000 operators, parentheses and NOTs (at most 20000)"},
        {"SELECT ", "CASE WHEN true THEN ", "1", 25000, "54001",
         "statement too complex: 25000 operators, parentheses and NOTs (at most 20000)"},
        {"SELECT ", "lower(", "'x'", 21000, "54001",
         "statement too complex: 21000 operators, parentheses and NOTs (at most 20000)"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char *q = chain(c[i].head, c[i].piece, c[i].n, c[i].tail);
        expect(q, c[i].code, c[i].msg);
        free(q);
    }
}

static void test_sql_list_rewrite_positions(void **st)
{
    (void)st;
    const char *sql = "SELECT x FROM t WHERE a @@ ts_any(['a', ['b']], x[1])";
    qr_sqlparse p;
    qr_err e;
    assert_int_equal(qr_sqlp_parse(&p, sql, strlen(sql), &e), 0);
    /* two lists rewritten ( '(' before one, ',' before the other); x[1] a subscript */
    assert_int_equal(p.nins, 2);
    assert_non_null(strstr(p.text, "ts_any(ARRAY['a', ARRAY['b']], x[1])"));
    assert_int_equal(qr_sqlp_origoff(&p, 34), 34); /* the first "ARRAY" -> its '[' */
    assert_int_equal(qr_sqlp_origoff(&p, 39), 34); /* its '[' */
    assert_int_equal(qr_sqlp_origoff(&p, 45), 40); /* the second "ARRAY" -> its '[' */
    assert_int_equal(qr_sqlp_origoff(&p, 52), 42); /* past both: 10 bytes earlier */
    assert_int_equal(qr_sqlp_charpos(&p, 52), 43);
    qr_sqlp_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sql_error_positions),
        cmocka_unit_test(test_sql_identifiers_fold_unless_quoted),
        cmocka_unit_test(test_sql_unsupported_says_what),
        cmocka_unit_test(test_sql_dialect_accepted),
        cmocka_unit_test(test_sql_list_rewrite_positions),
        cmocka_unit_test(test_sql_deep_statements_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
