/* test_sql_merge_join.c - join counts answered by keyword indexes alone
 * (sql/termjoin.c, exec/termjoin.c, index/keymap.c), on small hand-made
 * tables of three segments each whose answers are written out: keys in
 * several segments of both tables (summed by shared id), key values left
 * out by `<>` on either side, NULL and
 * empty keys, keys that order differently by bytes and by code points
 * ('é' is shorter than 'ab' in the dictionary), keys equal in their first
 * 8 bytes, residuals on the key, deleted rows, a self-join and a join of
 * two tables; each answer also equal to the hash join's (SET
 * enable_mergejoin = off) and the plan named by EXPLAIN; a key too long to
 * index making the statement join by hash, with the same answer. */
#include "sqltest.h"

static int setup(void **st)
{
    (void)st;
    st_open();
    st_ok("CREATE TABLE a (k text, v integer)", "CREATE TABLE");
    st_ok("CREATE INDEX ON a USING keyword (k)", "CREATE INDEX");
    st_ok("CREATE INDEX ON a USING range (v)", "CREATE INDEX");
    st_ok("CREATE TABLE b (k text, w integer)", "CREATE TABLE");
    st_ok("CREATE INDEX ON b USING keyword (k)", "CREATE INDEX");
    st_ok("CREATE INDEX ON b USING range (w)", "CREATE INDEX");
    /* a segment per INSERT */
    st_ok("INSERT INTO a VALUES ('x', 1), ('y', 2), (NULL, 3), ('', 4), ('é', 5), "
          "('abcdefghij', 6)",
          "INSERT 0 6");
    st_ok("INSERT INTO a VALUES ('x', 7), ('x', 8), ('z', 9), ('ab', 10), ('abcdefghik', 11)",
          "INSERT 0 5");
    st_ok("INSERT INTO a VALUES ('y', 12), ('', 13), ('w', 14)", "INSERT 0 3");
    st_ok("INSERT INTO b VALUES ('x', 100), ('z', 101), ('', 102), ('é', 103)", "INSERT 0 4");
    st_ok("INSERT INTO b VALUES ('x', 104), ('y', 105), (NULL, 106), ('abcdefghij', 107), "
          "('ab', 108)",
          "INSERT 0 5");
    st_ok("INSERT INTO b VALUES ('q', 109), ('abcdefghik', 110), ('abcdefghik', 111)",
          "INSERT 0 3");
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    st_close();
    return 0;
}

/* The plan of sql (EXPLAIN or EXPLAIN ANALYZE: `how`) as one string. */
static char *plan_of(const char *how, const char *sql)
{
    char q[2048];
    snprintf(q, sizeof q, "%s %s", how, sql);
    qr_err e;
    char *out = st_run_on(&st_s, q, NULL, &e);
    if (!out)
        fail_msg("%s: %s %s", q, e.code, e.msg);
    return out;
}

/* sql gives csv by a merge join, and by a hash join when that is off. */
static void merged(const char *sql, const char *csv)
{
    char *p = plan_of("EXPLAIN", sql);
    if (!strstr(p, "MergeJoin on 1 equal key"))
        fail_msg("%s: not a merge join:\n%s", sql, p);
    free(p);
    p = plan_of("EXPLAIN ANALYZE", sql);
    if (!strstr(p, "keys counted by ordinal"))
        fail_msg("%s: the merge join did not run:\n%s", sql, p);
    free(p);
    st_rows(sql, csv);
    st_ok("SET enable_mergejoin = off", "SET");
    p = plan_of("EXPLAIN", sql);
    if (strstr(p, "MergeJoin") || !strstr(p, "HashJoin"))
        fail_msg("%s: not a hash join with enable_mergejoin off:\n%s", sql, p);
    free(p);
    st_rows(sql, csv);
    st_ok("RESET enable_mergejoin", "RESET");
}

/* sql gives csv by ordinals (count(DISTINCT key) of one table), and by
 * hash when merge joins are off. */
static void distinct(const char *sql, const char *csv)
{
    char *p = plan_of("EXPLAIN", sql);
    if (!strstr(p, "distinct keys counted by the keyword index"))
        fail_msg("%s: not counted by ordinal:\n%s", sql, p);
    free(p);
    p = plan_of("EXPLAIN ANALYZE", sql);
    if (!strstr(p, "distinct keys\n") && !strstr(p, "distinct keys "))
        fail_msg("%s: the count by ordinal did not run:\n%s", sql, p);
    free(p);
    st_rows(sql, csv);
    st_ok("SET enable_mergejoin = off", "SET");
    p = plan_of("EXPLAIN", sql);
    if (!strstr(p, "HashAggregate"))
        fail_msg("%s: not by hash with enable_mergejoin off:\n%s", sql, p);
    free(p);
    st_rows(sql, csv);
    st_ok("RESET enable_mergejoin", "RESET");
}

static void test_counts_summed_over_segments(void **st)
{
    (void)st;
    /* x: 3 in a x 2 in b; y 2 x 1; z 1 x 1; '' 2 x 1; é 1 x 1; ab 1 x 1;
     * abcdefghij 1 x 1; abcdefghik 1 x 2 */
    merged("SELECT count(*), count(DISTINCT a.k), count(b.k) FROM a JOIN b ON a.k = b.k",
           "count,count,count\n16,8,16\n");
    merged("SELECT count(DISTINCT b.k) FROM b JOIN a USING (k)", "count\n8\n");
    /* range filters on both sides, the keys written the other way round */
    merged("SELECT count(*), count(DISTINCT a.k) FROM a JOIN b ON b.k = a.k WHERE a.v > 5 AND "
           "b.w < 110",
           "count,count\n9,6\n");
    /* a self-join, the empty key left out by a residual on the key */
    merged("SELECT count(*), count(DISTINCT x.k) FROM a x JOIN a y ON x.k = y.k WHERE x.k <> ''",
           "count,count\n19,8\n");
    /* key values left out (`<>`, NOT =): one count set to 0 per segment,
     * on either side or both, with other filters or none */
    merged("SELECT count(*), count(DISTINCT a.k) FROM a JOIN b ON a.k = b.k WHERE a.k <> 'x' AND "
           "b.k <> 'y'",
           "count,count\n8,6\n");
    merged("SELECT count(*), count(DISTINCT a.k) FROM a JOIN b ON a.k = b.k WHERE a.k <> 'x' AND "
           "a.v > 5",
           "count,count\n7,6\n");
    merged("SELECT count(*), count(DISTINCT a.k) FROM a JOIN b ON a.k = b.k WHERE NOT (a.k = 'x')",
           "count,count\n10,7\n");
    merged("SELECT count(*), count(DISTINCT a.k) FROM a JOIN b ON a.k = b.k WHERE a.k <> 'nope'",
           "count,count\n16,8\n");
    merged("SELECT count(*), count(DISTINCT x.k) FROM a x JOIN a y ON x.k = y.k WHERE x.k <> '' "
           "AND y.k <> 'x'",
           "count,count\n10,7\n");
    /* residuals on the key: once per key, on either side */
    merged("SELECT count(*), count(DISTINCT a.k) FROM a JOIN b ON a.k = b.k WHERE a.k LIKE 'abc%'",
           "count,count\n3,2\n");
    merged("SELECT count(*), count(DISTINCT b.k) FROM a JOIN b ON a.k = b.k WHERE b.k > 'x'",
           "count,count\n4,3\n");
    /* count(DISTINCT key) of one table: x in two segments counts once */
    distinct("SELECT count(DISTINCT k), count(k) FROM a", "count,count\n9,13\n");
    distinct("SELECT count(DISTINCT k), count(k) FROM a WHERE v > 5", "count,count\n8,9\n");
    distinct("SELECT count(k), count(DISTINCT k) FROM a WHERE k <> 'x'", "count,count\n10,8\n");
    distinct("SELECT count(DISTINCT k) AS n FROM a WHERE k LIKE 'ab%' HAVING count(DISTINCT k) > 1",
             "n\n3\n");
    distinct("SELECT count(DISTINCT b.k) FROM b WHERE w = 1000", "count\n0\n");
    /* HAVING, expressions, ORDER BY and LIMIT on the one row; none matching */
    merged("SELECT count(*) * 10 AS n FROM a, b WHERE a.k = b.k HAVING count(*) > 20", "n\n");
    merged("SELECT count(*) + 1, count(DISTINCT a.k) FROM a JOIN b ON a.k = b.k WHERE a.v = 99 "
           "ORDER BY 1 LIMIT 1",
           "?column?,count\n1,0\n");
}

/* One segment: one list, nothing to merge with. */
static void test_one_segment(void **st)
{
    (void)st;
    st_ok("CREATE TABLE c (k text)", "CREATE TABLE");
    st_ok("CREATE INDEX ON c USING keyword (k)", "CREATE INDEX");
    st_ok("INSERT INTO c VALUES ('p'), ('p'), ('q'), (NULL), ('')", "INSERT 0 5");
    merged("SELECT count(*), count(DISTINCT x.k) FROM c x JOIN c y ON x.k = y.k",
           "count,count\n6,3\n");
    merged("SELECT count(*), count(DISTINCT a.k) FROM a JOIN c ON a.k = c.k", "count,count\n2,1\n");
    st_ok("DROP TABLE c", "DROP TABLE");
}

static void test_deleted_rows_never_count(void **st)
{
    (void)st;
    st_ok("DELETE FROM a WHERE v = 7", "DELETE 1");
    merged("SELECT count(*), count(DISTINCT a.k), count(b.k) FROM a JOIN b ON a.k = b.k",
           "count,count,count\n14,8,14\n");
    /* no filter on either side: every row not deleted */
    merged("SELECT count(*), count(DISTINCT x.k) FROM a x JOIN a y ON x.k = y.k",
           "count,count\n18,9\n");
    distinct("SELECT count(DISTINCT k), count(k) FROM a", "count,count\n9,12\n");
    /* a side left with no filter but a key left out: still not the deleted */
    merged("SELECT count(*), count(DISTINCT x.k) FROM a x JOIN a y ON x.k = y.k WHERE x.k <> 'y'",
           "count,count\n14,8\n");
    st_ok("INSERT INTO a VALUES ('x', 7)", "INSERT 0 1");
}

/* GROUP BY a keyword column of either side: each row of that side weighs
 * its key's count on the other. Keys in one, two and three segments,
 * NULL groups, the empty key, deleted rows. */
static void test_group_by_a_side_column(void **st)
{
    (void)st;
    st_ok("CREATE TABLE t (tr text, svc text, n integer)", "CREATE TABLE");
    st_ok("CREATE INDEX ON t USING keyword (tr)", "CREATE INDEX");
    st_ok("CREATE INDEX ON t USING keyword (svc)", "CREATE INDEX");
    st_ok("INSERT INTO t VALUES ('t1', 'web', 1), ('t1', 'db', 2), ('t2', 'web', 3), "
          "(NULL, 'web', 4), ('t3', NULL, 5)",
          "INSERT 0 5");
    st_ok("INSERT INTO t VALUES ('t1', 'api', 6), ('t2', 'db', 7), ('t3', 'web', 8), ('', 'api', 9)",
          "INSERT 0 4");
    st_ok("INSERT INTO t VALUES ('t2', 'api', 10), ('t4', 'db', 11), ('t3', 'db', 12), "
          "('', 'web', 13)",
          "INSERT 0 4");
    /* f's db rows: one per key t1..t4; l's rows of those keys by service */
    merged("SELECT l.svc, count(*) FROM t l JOIN t f ON l.tr = f.tr WHERE f.svc = 'db' GROUP BY 1 "
           "ORDER BY 1",
           "svc,count\napi,2\ndb,4\nweb,3\n,1\n");
    /* grouped by the other side's column, with a key left out there */
    merged("SELECT f.svc, count(*) FROM t l JOIN t f ON l.tr = f.tr WHERE l.svc = 'web' AND "
           "f.tr <> '' GROUP BY f.svc ORDER BY 2 DESC, 1",
           "svc,count\ndb,3\nweb,3\napi,2\n,1\n");
    /* no filter: each row weighs its key's rows; HAVING, ORDER BY, LIMIT */
    merged("SELECT l.svc AS s, count(*) AS n FROM t l JOIN t f ON l.tr = f.tr GROUP BY l.svc "
           "HAVING count(*) > 5 ORDER BY n DESC LIMIT 2",
           "s,n\nweb,11\ndb,10\n");
    /* grouped by the key itself */
    merged("SELECT l.tr, count(*), count(f.tr) FROM t l JOIN t f ON l.tr = f.tr WHERE f.svc = 'web' "
           "AND l.tr <> '' GROUP BY 1 ORDER BY 1",
           "tr,count,count\nt1,3,3\nt2,3,3\nt3,3,3\n");
    /* distinct keys per group are not counted from the indexes: by hash */
    char *p = plan_of("EXPLAIN", "SELECT l.svc, count(DISTINCT l.tr) FROM t l JOIN t f ON "
                                 "l.tr = f.tr GROUP BY 1");
    if (strstr(p, "MergeJoin") || !strstr(p, "HashJoin"))
        fail_msg("count(DISTINCT) per group: not a hash join:\n%s", p);
    free(p);
    /* a new segment: the next join's key map is another (t4 now in two) */
    st_ok("INSERT INTO t VALUES ('t4', 'api', 14)", "INSERT 0 1");
    merged("SELECT l.svc, count(*) FROM t l JOIN t f ON l.tr = f.tr WHERE f.svc = 'db' GROUP BY 1 "
           "ORDER BY 1",
           "svc,count\napi,3\ndb,4\nweb,3\n,1\n");
    merged("SELECT count(*), count(DISTINCT l.tr) FROM t l JOIN t f ON l.tr = f.tr WHERE f.svc = "
           "'db' AND l.svc = 'api'",
           "count,count\n3,3\n");
    st_ok("DELETE FROM t WHERE n = 2", "DELETE 1");
    merged("SELECT l.svc, count(*) FROM t l JOIN t f ON l.tr = f.tr WHERE f.svc = 'db' GROUP BY 1 "
           "ORDER BY 1",
           "svc,count\napi,2\ndb,3\nweb,2\n,1\n");
    st_ok("DROP TABLE t", "DROP TABLE");
}

/* A key longer than a keyword index keeps (255 bytes): the segment cannot
 * answer, so the statement joins rows by hash, with the same answer. */
static void test_unindexed_key_joins_by_hash(void **st)
{
    (void)st;
    char k[400], sql[1024];
    memset(k, 'k', 300);
    k[300] = 0;
    snprintf(sql, sizeof sql, "INSERT INTO a VALUES ('%s', 20), ('x', 21)", k);
    st_ok(sql, "INSERT 0 2");
    snprintf(sql, sizeof sql, "INSERT INTO b VALUES ('%s', 120)", k);
    st_ok(sql, "INSERT 0 1");
    const char *q = "SELECT count(*), count(DISTINCT a.k) FROM a JOIN b ON a.k = b.k";
    char *p = plan_of("EXPLAIN ANALYZE", q);
    if (strstr(p, "keys counted by ordinal") || !strstr(p, "scan a:"))
        fail_msg("%s: not joined by hash:\n%s", q, p);
    free(p);
    /* 16 as before, + 2 for the new 'x' in a, + the long key's 1 x 1 */
    st_rows(q, "count,count\n19,9\n");
    st_ok("DELETE FROM a WHERE v >= 20", "DELETE 2");
    st_ok("DELETE FROM b WHERE w = 120", "DELETE 1");
    /* the segments still hold the long value (deleted): still by hash */
    st_rows(q, "count,count\n16,8\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts_summed_over_segments),
        cmocka_unit_test(test_one_segment),
        cmocka_unit_test(test_deleted_rows_never_count),
        cmocka_unit_test(test_group_by_a_side_column),
        cmocka_unit_test(test_unindexed_key_joins_by_hash),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
