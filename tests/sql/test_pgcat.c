/* test_pgcat.c - the catalog answers (sql/pgcat.h) with exact results: the
 * relations psql and the drivers read (tables, columns and their
 * PostgreSQL types, indexes, namespaces), the evaluator's joins, LEFT
 * joins, correlated subqueries, regex matches, casts, arrays, grouping,
 * window numbering, UNION, and its errors with positions; then extract()
 * and floor() over a data table (Grafana's time buckets). */
#include "sqltest.h"

static int setup(void **st)
{
    (void)st;
    st_open();
    st_ok("CREATE TABLE t (ts timestamp NOT NULL, msg text, n integer, big bigint, ok boolean, "
          "j json) WITH (sort_column = ts)",
          "CREATE TABLE");
    st_ok("CREATE INDEX words ON t USING inverted (msg)", "CREATE INDEX");
    st_ok("INSERT INTO t VALUES ('2025-01-01T00:00:10Z', 'a b', 1, 10, true, '{}'), "
          "('2025-01-01T00:01:20Z', 'b c', 2, 20, false, '[]'), "
          "('2025-01-01T00:01:50Z', 'c d', 3, 30, NULL, NULL)",
          "INSERT 0 3");
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    st_close();
    return 0;
}

static void test_psql_dt_lists_the_table(void **st)
{
    (void)st;
    st_rows("SELECT n.nspname as \"Schema\", c.relname as \"Name\", "
            "CASE c.relkind WHEN 'r' THEN 'table' WHEN 'i' THEN 'index' END as \"Type\", "
            "pg_catalog.pg_get_userbyid(c.relowner) as \"Owner\" "
            "FROM pg_catalog.pg_class c "
            "LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
            "LEFT JOIN pg_catalog.pg_am am ON am.oid = c.relam "
            "WHERE c.relkind IN ('r','p','') AND n.nspname <> 'pg_catalog' "
            "AND n.nspname !~ '^pg_toast' AND n.nspname <> 'information_schema' "
            "AND pg_catalog.pg_table_is_visible(c.oid) ORDER BY 1,2",
            "Schema,Name,Type,Owner\npublic,t,table,quarry\n");
}

static void test_columns_with_postgres_types(void **st)
{
    (void)st;
    st_rows("SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, "
            "a.attstorage FROM pg_catalog.pg_attribute a WHERE a.attrelid = "
            "(SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relname "
            "OPERATOR(pg_catalog.~) '^(t)$' COLLATE pg_catalog.default) "
            "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
            "attname,format_type,attnotnull,attstorage\n"
            "ts,timestamp with time zone,true,p\n"
            "msg,text,false,x\n"
            "n,integer,false,p\n"
            "big,bigint,false,p\n"
            "ok,boolean,false,p\n"
            "j,json,false,x\n");
    /* an oid given as a string literal, as psql sends it; regclass both ways */
    st_rows("SELECT count(*) FROM pg_attribute WHERE attrelid = 't'::regclass::oid::text",
            "count\n6\n");
    st_rows("SELECT 't'::regclass::text, 'pg_class'::regclass::oid, 'int4'::regtype::oid, "
            "23::regtype::text",
            "text,oid,oid,text\nt,1259,23,integer\n");
}

static void test_indexes_and_index_definitions(void **st)
{
    (void)st;
    st_rows("SELECT c2.relname, pg_catalog.pg_get_indexdef(i.indexrelid, 0, true), "
            "i.indisprimary FROM pg_catalog.pg_class c, pg_catalog.pg_class c2, "
            "pg_catalog.pg_index i WHERE c.relname = 't' AND c.oid = i.indrelid "
            "AND i.indexrelid = c2.oid ORDER BY i.indisprimary DESC, c2.relname",
            "relname,pg_get_indexdef,indisprimary\n"
            "words,CREATE INDEX words ON public.t USING inverted (msg),false\n");
}

static void test_information_schema(void **st)
{
    (void)st;
    st_rows("SELECT table_schema, table_name, table_type FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')",
            "table_schema,table_name,table_type\npublic,t,BASE TABLE\n");
    st_rows("SELECT column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_name = 't' AND ordinal_position <= 3 ORDER BY ordinal_position",
            "column_name,data_type,is_nullable\nts,timestamp with time zone,NO\n"
            "msg,text,YES\nn,integer,YES\n");
    st_rows("SELECT schema_name FROM information_schema.schemata ORDER BY 1",
            "schema_name\ninformation_schema\npg_catalog\npublic\n");
}

static void test_evaluator_constructs(void **st)
{
    (void)st;
    /* correlated scalar subquery, EXISTS / NOT EXISTS, IN (subquery) */
    st_rows("SELECT n.nspname, (SELECT count(*) FROM pg_class c WHERE c.relnamespace = n.oid "
            "AND c.relkind = 'r') AS tables, EXISTS (SELECT 1 FROM pg_class c "
            "WHERE c.relnamespace = n.oid AND c.relname = 't') AS has_t "
            "FROM pg_namespace n WHERE n.oid IN (SELECT relnamespace FROM pg_class) "
            "AND NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = n.nspname) ORDER BY 1",
            "nspname,tables,has_t\ninformation_schema,0,false\npg_catalog,29,false\n"
            "public,1,true\n");
    /* LEFT JOIN with no match gives NULLs; COALESCE; ~* and !~ */
    st_rows("SELECT c.relname, COALESCE(d.description, '-') FROM pg_class c "
            "LEFT JOIN pg_description d ON d.objoid = c.oid WHERE c.relname ~* '^T$' "
            "OR c.relname !~ '.' ",
            "relname,coalesce\nt,-\n");
    /* arrays: NULL || array(...), array_to_string, subscripts, unnest */
    st_rows("SELECT array_to_string(c.reloptions || array(select 'toast.' || x from "
            "pg_catalog.unnest(ARRAY['a','b']) x), ', ') FROM pg_class c WHERE c.relname = 't'",
            "array_to_string\n\"toast.a, toast.b\"\n");
    st_rows("SELECT (current_schemas(true))[2], array_upper(current_schemas(false), 1), "
            "(parse_ident('public.\"Ab\"'))[2]",
            "current_schemas,array_upper,parse_ident\npublic,1,Ab\n");
    /* GROUP BY with string_agg, row_number() OVER, DISTINCT, UNION ALL, LIMIT/OFFSET */
    st_rows("SELECT typcategory, count(*), string_agg(typname, ',') FROM pg_type "
            "WHERE typname IN ('int2','int4','int8','text','bool') GROUP BY 1 ORDER BY 2 DESC",
            "typcategory,count,string_agg\nN,3,\"int8,int2,int4\"\nB,1,bool\nS,1,text\n");
    st_rows("SELECT attname, row_number() OVER (PARTITION BY attrelid ORDER BY attnum DESC) "
            "FROM pg_attribute WHERE attrelid = 't'::regclass ORDER BY 2 LIMIT 2 OFFSET 1",
            "attname,row_number\nok,2\nbig,3\n");
    st_rows("SELECT DISTINCT relkind FROM pg_class ORDER BY 1", "relkind\ni\nr\nv\n");
    st_rows("SELECT 1 AS a UNION ALL SELECT 2 UNION SELECT 1 ORDER BY a DESC", "a\n2\n1\n");
    st_rows("SELECT g.r * 2 FROM generate_series(1, 3) AS g(r) WHERE g.r <> 2", "?column?\n2\n6\n");
}

static void test_no_from_functions(void **st)
{
    (void)st;
    st_rows("SELECT current_database(), current_schema(), current_user, "
            "pg_size_pretty(10240::bigint), pg_size_pretty(123456789), quote_ident('Ab'), "
            "quote_ident('ab'), current_setting('server_version')",
            "current_database,current_schema,current_user,pg_size_pretty,pg_size_pretty,"
            "quote_ident,quote_ident,current_setting\n"
            "quarry,public,quarry,10 kB,118 MB,\"\"\"Ab\"\"\",ab,15.0\n");
    st_rows("SELECT version()",
            "version\n\"PostgreSQL 15.0 (Quarry) on x86_64-pc-linux-gnu, 64-bit\"\n");
}

static void test_errors_name_what_and_where(void **st)
{
    (void)st;
    st_fails("SELECT relnam FROM pg_catalog.pg_class", "42703",
             "column \"relnam\" does not exist at character 8");
    st_fails("SELECT * FROM pg_catalog.pg_nope", "42P01",
             "relation \"pg_catalog.pg_nope\" does not exist at character 15");
    st_fails("SELECT pg_nofn(oid) FROM pg_class", "42883",
             "function pg_nofn() does not exist at character 8");
    st_fails("SELECT c.relname FROM pg_class c JOIN t ON true", "0A000",
             "a query over catalog relations cannot also read table \"t\" at character 39");
    st_fails("SELECT 'nope'::regclass", "42P01",
             "relation \"nope\" does not exist at character 14");
    st_fails("SELECT oid FROM pg_class WHERE oid = 'x1'", "22P02",
             "invalid input syntax for type oid: \"x1\" at character 36");
    st_fails("SELECT relname FROM pg_class c FULL JOIN pg_am a ON true", "0A000",
             "RIGHT and FULL joins are not supported in catalog queries");
}

static void test_grafana_time_buckets_over_a_table(void **st)
{
    (void)st;
    st_rows("SELECT floor(extract(epoch from ts)/60)*60 AS \"time\", count(*) FROM t "
            "WHERE ts BETWEEN '2025-01-01T00:00:00Z' AND '2025-01-01T00:05:00Z' "
            "GROUP BY 1 ORDER BY 1",
            "time,count\n1735689600,1\n1735689660,2\n");
    st_rows("SELECT extract(minute from ts), extract(epoch from ts), ceil(n / 2.0) FROM t "
            "ORDER BY ts LIMIT 1",
            "extract,extract,ceil\n0,1735689610,1\n");
    st_fails("SELECT extract(fortnight from ts) FROM t", "0A000",
             "extract field \"fortnight\" is not supported at character 16");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_psql_dt_lists_the_table),
        cmocka_unit_test(test_columns_with_postgres_types),
        cmocka_unit_test(test_indexes_and_index_definitions),
        cmocka_unit_test(test_information_schema),
        cmocka_unit_test(test_evaluator_constructs),
        cmocka_unit_test(test_no_from_functions),
        cmocka_unit_test(test_errors_name_what_and_where),
        cmocka_unit_test(test_grafana_time_buckets_over_a_table),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
