/* test_sql_outer_joins.c - RIGHT and FULL joins on small hand-made tables
 * (each of two segments), every answer written out: NULL keys matching
 * nothing and coming once, duplicates, integer, text and two keys, USING,
 * joins after a FULL one, GROUP BY / count(DISTINCT) / ORDER BY / LIMIT on
 * top; EXPLAIN showing where each WHERE and ON term went (never into the
 * scan of a side that the join null-extends); the memory limit and the
 * statement timeout inside a join of a million pairs, the session usable
 * after each. */
#include "sqltest.h"

static int setup(void **st)
{
    (void)st;
    st_open();
    st_ok("CREATE TABLE a (k integer, t text, x integer)", "CREATE TABLE");
    st_ok("CREATE TABLE b (k integer, t text, y integer)", "CREATE TABLE");
    st_ok("CREATE TABLE c (k integer, z text)", "CREATE TABLE");
    st_ok("INSERT INTO a VALUES (1, 'one', 10), (2, 'two', 20), (2, 'two', 21), (NULL, NULL, 30), "
          "(4, 'four', 40)",
          "INSERT 0 5");
    st_ok("INSERT INTO a VALUES (6, 'six', 60), (NULL, 'two', 70)", "INSERT 0 2");
    st_ok("INSERT INTO b VALUES (2, 'two', 200), (3, 'three', 300), (NULL, NULL, 400)",
          "INSERT 0 3");
    st_ok("INSERT INTO b VALUES (4, 'four', 401), (4, 'four', 402), (5, 'five', 500), (2, NULL, "
          "201)",
          "INSERT 0 4");
    st_ok("INSERT INTO c VALUES (2, 'c2'), (5, 'c5'), (6, 'c6'), (NULL, 'cn')", "INSERT 0 4");
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    st_close();
    return 0;
}

static void test_right_join_keeps_every_right_row(void **st)
{
    (void)st;
    /* b's NULL-keyed row and 3, 5 have no match: once each, a's columns NULL */
    st_rows("SELECT a.x, b.k, b.y FROM a RIGHT JOIN b ON a.k = b.k ORDER BY b.y, a.x",
            "x,k,y\n20,2,200\n21,2,200\n20,2,201\n21,2,201\n,3,300\n,,400\n40,4,401\n40,4,402\n"
            ",5,500\n");
    /* text key: a's (NULL, 'two') row matches b's 'two' too */
    st_rows("SELECT a.x, b.y FROM a RIGHT JOIN b ON a.t = b.t ORDER BY b.y, a.x",
            "x,y\n20,200\n21,200\n70,200\n,201\n,300\n,400\n40,401\n40,402\n,500\n");
    /* an ON term on a filters a's scan: b's rows whose matches it drops come
     * null-extended */
    st_rows("SELECT a.x, b.y FROM a RIGHT JOIN b ON a.k = b.k AND a.x > 20 ORDER BY b.y, a.x",
            "x,y\n21,200\n21,201\n,300\n,400\n40,401\n40,402\n,500\n");
    /* WHERE on a filters the joined rows (in a's scan, x IS NULL would
     * keep 300's and 500's rows only as they are, and bring back none) */
    st_rows("SELECT a.x, b.y FROM a RIGHT JOIN b ON a.k = b.k WHERE a.x IS NULL OR a.x > 20 "
            "ORDER BY b.y, a.x",
            "x,y\n21,200\n21,201\n,300\n,400\n40,401\n40,402\n,500\n");
    st_rows("SELECT a.x, b.y FROM a RIGHT JOIN b ON a.k = b.k WHERE a.x < 21 ORDER BY b.y",
            "x,y\n20,200\n20,201\n");
    /* USING, and a WHERE term on b (its scan) */
    st_rows("SELECT b.k, count(*), count(a.x), sum(a.x) FROM a RIGHT JOIN b USING (k) WHERE b.y < "
            "500 GROUP BY 1 ORDER BY 1 NULLS FIRST",
            "k,count,count,sum\n,1,0,\n2,4,4,82\n3,1,0,\n4,2,2,80\n");
}

static void test_full_join_keeps_both_sides(void **st)
{
    (void)st;
    /* a's NULL keys (30, 70), 1 and 6 alone; b's NULL key, 3 and 5 alone */
    st_rows("SELECT a.x, b.y FROM a FULL JOIN b ON a.k = b.k ORDER BY coalesce(a.x, 0), "
            "coalesce(b.y, 0)",
            "x,y\n,300\n,400\n,500\n10,\n20,200\n20,201\n21,200\n21,201\n30,\n40,401\n40,402\n"
            "60,\n70,\n");
    st_rows("SELECT a.x, b.y FROM a FULL JOIN b ON a.t = b.t ORDER BY coalesce(a.x, 0), "
            "coalesce(b.y, 0)",
            "x,y\n,201\n,300\n,400\n,500\n10,\n20,200\n21,200\n30,\n40,401\n40,402\n60,\n70,200\n");
    /* two keys: (2, 'two') matches 200 only; (NULL, 'two') nothing */
    st_rows("SELECT a.x, b.y FROM a FULL OUTER JOIN b ON a.k = b.k AND a.t = b.t ORDER BY "
            "coalesce(a.x, 0), coalesce(b.y, 0)",
            "x,y\n,201\n,300\n,400\n,500\n10,\n20,200\n21,200\n30,\n40,401\n40,402\n60,\n70,\n");
    st_rows("SELECT coalesce(a.k, b.k) AS k, count(*), count(a.x), count(b.y) FROM a FULL JOIN b "
            "USING (k) GROUP BY 1 ORDER BY 1 NULLS FIRST",
            "k,count,count,count\n,3,2,1\n1,1,1,0\n2,4,4,4\n3,1,0,1\n4,2,2,2\n5,1,0,1\n6,1,1,0\n");
    st_rows("SELECT count(*), count(DISTINCT a.t), count(DISTINCT b.t), count(DISTINCT "
            "coalesce(a.k, b.k)) FROM a FULL JOIN b ON a.k = b.k",
            "count,count,count,count\n13,4,4,6\n");
    /* WHERE on either side: after the join */
    st_rows("SELECT a.x, b.y FROM a FULL JOIN b ON a.k = b.k WHERE a.x >= 40 OR b.y >= 400 ORDER "
            "BY coalesce(a.x, 0), coalesce(b.y, 0)",
            "x,y\n,400\n,500\n40,401\n40,402\n60,\n70,\n");
    st_rows("SELECT b.y FROM a FULL JOIN b ON a.k = b.k WHERE a.k IS NULL ORDER BY b.y NULLS FIRST",
            "y\n\n\n300\n400\n500\n");
    st_rows("SELECT a.x, b.y FROM a FULL JOIN b ON a.k = b.k ORDER BY coalesce(a.x, 0) DESC, "
            "coalesce(b.y, 0) LIMIT 3 OFFSET 2",
            "x,y\n40,401\n40,402\n30,\n");
}

static void test_joins_around_outer_ones(void **st)
{
    (void)st;
    /* after a FULL JOIN: an inner join on a key over both of its sides */
    st_rows("SELECT a.x, b.y, c.z FROM a FULL JOIN b ON a.k = b.k JOIN c ON c.k = coalesce(a.k, "
            "b.k) ORDER BY c.z, coalesce(a.x, 0), coalesce(b.y, 0)",
            "x,y,z\n20,200,c2\n20,201,c2\n21,200,c2\n21,201,c2\n,500,c5\n60,,c6\n");
    /* a LEFT JOIN on a's side, NULL when a was null-extended */
    st_rows("SELECT a.x, b.y, c.z FROM a FULL JOIN b ON a.k = b.k LEFT JOIN c ON c.k = a.k WHERE "
            "b.y >= 300 OR a.x >= 60 ORDER BY coalesce(a.x, 0), coalesce(b.y, 0)",
            "x,y,z\n,300,\n,400,\n,500,\n40,401,\n40,402,\n60,,c6\n70,,\n");
    /* an inner join's other ON term filters before the RIGHT JOIN after it:
     * c's rows whose matches it drops come null-extended */
    st_rows("SELECT a.x, b.y, c.z FROM a JOIN b ON a.k = b.k AND a.x * 10 > b.y RIGHT JOIN c ON "
            "c.k = b.k ORDER BY c.z, a.x, b.y",
            "x,y,z\n21,200,c2\n21,201,c2\n,,c5\n,,c6\n,,cn\n");
    /* RIGHT after LEFT: b null-extended by the LEFT JOIN gives c no key */
    st_rows("SELECT a.x, b.y, c.z FROM a LEFT JOIN b ON a.k = b.k AND b.y > 300 RIGHT JOIN c ON "
            "c.k = coalesce(b.k, a.k) ORDER BY c.z, a.x",
            "x,y,z\n20,,c2\n21,,c2\n,,c5\n60,,c6\n,,cn\n");
}

/* Where each term went, as EXPLAIN shows it (CSV: a line with a comma is
 * quoted). */
static void test_where_terms_skip_null_extended_scans(void **st)
{
    (void)st;
    /* FULL: neither scan takes a WHERE term */
    st_rows(
        "EXPLAIN SELECT a.x FROM a FULL JOIN b ON a.k = b.k WHERE a.x > 15 AND b.y > 15",
        "QUERY PLAN\n  Filter on joined rows\n  HashJoin FULL on 1 equal key (build: b)\n"
        "\"    IndexScan on b: every match, the columns used\"\n      index filter: (all rows)\n"
        "\"    IndexScan on a: every match, the columns used\"\n      index filter: (all rows)\n");
    /* RIGHT: b's WHERE term and a's ON term go to their scans, a's WHERE
     * term after the join */
    st_rows("EXPLAIN SELECT a.x FROM a RIGHT JOIN b ON a.k = b.k AND a.x > 15 WHERE b.y > 15 AND "
            "a.x < 100",
            "QUERY PLAN\n  Filter on joined rows\n  HashJoin RIGHT on 1 equal key (build: b)\n"
            "\"    IndexScan on b: every match, the columns used\"\n"
            "      index filter: y:[16 TO 2147483647]\n"
            "\"    IndexScan on a: every match, the columns used\"\n"
            "      index filter: x:[16 TO 2147483647]\n");
    /* a WHERE equality with a null-extended side is no join key */
    st_rows(
        "EXPLAIN SELECT a.x FROM a LEFT JOIN b ON a.k = b.k WHERE a.x = b.y",
        "QUERY PLAN\n  Filter on joined rows\n  HashJoin LEFT on 1 equal key (build: b)\n"
        "\"    IndexScan on b: every match, the columns used\"\n      index filter: (all rows)\n"
        "\"    IndexScan on a: every match, the columns used\"\n      index filter: (all rows)\n");
    st_rows("SELECT a.x FROM a LEFT JOIN b ON a.k = b.k WHERE a.x * 10 = b.y", "x\n20\n");
    /* an inner join's non-key ON term right after it, before a RIGHT JOIN */
    st_rows(
        "EXPLAIN SELECT a.x FROM a JOIN b ON a.k = b.k AND a.x * 10 > b.y RIGHT JOIN c ON c.k "
        "= b.k",
        "QUERY PLAN\n  HashJoin RIGHT on 1 equal key (build: c)\n"
        "\"    IndexScan on c: every match, the columns used\"\n      index filter: (all rows)\n"
        "  Filter on joined rows (ON)\n  HashJoin on 1 equal key (build: b)\n"
        "\"    IndexScan on b: every match, the columns used\"\n      index filter: (all rows)\n"
        "\"    IndexScan on a: every match, the columns used\"\n      index filter: (all rows)\n");
}

/* 1000 rows of one key joined to themselves: a million pairs. */
static void test_limit_and_timeout_inside_outer_joins(void **st)
{
    (void)st;
    st_ok("CREATE TABLE big (k integer, v integer)", "CREATE TABLE");
    char *ins = malloc(64 * 1024);
    assert_non_null(ins);
    size_t w = (size_t)sprintf(ins, "INSERT INTO big VALUES ");
    for (int i = 0; i < 1000; i++)
        w += (size_t)sprintf(ins + w, "%s(%d, %d)", i ? ", " : "", i == 999 ? 2 : 1, i);
    st_ok(ins, "INSERT 0 1000");
    free(ins);
    static const char *q[] = {
        "SELECT count(*), count(a.v), count(b.v) FROM big a FULL JOIN big b ON a.k = b.k",
        "SELECT count(*), count(a.v), count(b.v) FROM big a RIGHT JOIN big b ON a.k = b.k",
    };
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
        st_ok("SET memory_limit = '4MB'", "SET");
        st_fails(q[i], "53200", NULL);
        st_ok("RESET memory_limit", "RESET");
        st_ok("SET statement_timeout = 1", "SET");
        st_fails(q[i], "57014", NULL);
        st_ok("RESET statement_timeout", "RESET");
        st_rows(q[i], "count,count,count\n998002,998002,998002\n");
    }
    /* b's k = 2 row has no a.k = 3 */
    st_rows("SELECT count(*), count(a.v), count(b.v) FROM big a RIGHT JOIN big b ON a.k = b.k + 1",
            "count,count,count\n1000,999,1000\n");
    st_ok("DROP TABLE big", "DROP TABLE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_right_join_keeps_every_right_row),
        cmocka_unit_test(test_full_join_keeps_both_sides),
        cmocka_unit_test(test_joins_around_outer_ones),
        cmocka_unit_test(test_where_terms_skip_null_extended_scans),
        cmocka_unit_test(test_limit_and_timeout_inside_outer_joins),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
