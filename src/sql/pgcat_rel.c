/* pgcat_rel.c - the catalog relations the answers read (pgcat.h): their
 * columns, as PostgreSQL 15 names and types them (the columns clients
 * read; a relation Quarry has nothing for is empty with its columns), and
 * their rows, built from Quarry's catalog when a statement first names
 * them.
 *
 * OIDs: namespaces, types, access methods, the database and the catalog
 * relations have PostgreSQL's own; the owner is 10 (the session's user); a
 * user table's OID comes from its name (FNV-1a, so it stays the same
 * across restarts and other tables' drops: 16384 + 128 * h), its indexes
 * follow it (+1 + position), so regclass casts and pg_get_indexdef find
 * them again. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sql/pgcat_int.h"

#define OWNER_OID   10
#define NSP_CATALOG 11
#define NSP_PUBLIC  2200
#define NSP_INFO    13000
#define DB_OID      16383
#define AM_HEAP     2
#define AM_BTREE    403
#define AM_QUARRY   16100 /* + qr_ixkind: inverted, keyword, range, paths */

/* ---- types ---- */
static const pctype types[] = {
    {PT_BOOL, "bool", "boolean", 1, 'B', PT_BOOL_ARR, 0, 'c', 'p', 0},
    {PT_BYTEA, "bytea", "bytea", -1, 'U', 1001, 0, 'i', 'x', 0},
    {PT_CHAR, "char", "\"char\"", 1, 'Z', PT_CHAR_ARR, 0, 'c', 'p', 0},
    {PT_NAME, "name", "name", 64, 'S', PT_NAME_ARR, 0, 'c', 'p', 950},
    {PT_INT8, "int8", "bigint", 8, 'N', PT_INT8_ARR, 0, 'd', 'p', 0},
    {PT_INT2, "int2", "smallint", 2, 'N', PT_INT2_ARR, 0, 's', 'p', 0},
    {PT_INT2VECTOR, "int2vector", "int2vector", -1, 'A', 1006, PT_INT2, 'i', 'p', 0},
    {PT_INT4, "int4", "integer", 4, 'N', PT_INT4_ARR, 0, 'i', 'p', 0},
    {PT_REGPROC, "regproc", "regproc", 4, 'N', 1008, 0, 'i', 'p', 0},
    {PT_TEXT, "text", "text", -1, 'S', PT_TEXT_ARR, 0, 'i', 'x', 100},
    {PT_OID, "oid", "oid", 4, 'N', PT_OID_ARR, 0, 'i', 'p', 0},
    {PT_OIDVECTOR, "oidvector", "oidvector", -1, 'A', 1013, PT_OID, 'i', 'p', 0},
    {PT_JSON, "json", "json", -1, 'U', 199, 0, 'i', 'x', 0},
    {PT_NODETREE, "pg_node_tree", "pg_node_tree", -1, 'Z', 0, 0, 'i', 'x', 100},
    {PT_FLOAT4, "float4", "real", 4, 'N', 1021, 0, 'i', 'p', 0},
    {PT_FLOAT8, "float8", "double precision", 8, 'N', 1022, 0, 'd', 'p', 0},
    {PT_UNKNOWN, "unknown", "unknown", -2, 'X', 0, 0, 'c', 'p', 0},
    {PT_ACLITEM, "aclitem", "aclitem", 12, 'U', PT_ACLITEM_ARR, 0, 'i', 'p', 0},
    {PT_BPCHAR, "bpchar", "character", -1, 'S', 1014, 0, 'i', 'x', 100},
    {PT_VARCHAR, "varchar", "character varying", -1, 'S', 1015, 0, 'i', 'x', 100},
    {1082, "date", "date", 4, 'D', 1182, 0, 'i', 'p', 0},
    {1083, "time", "time without time zone", 8, 'D', 1183, 0, 'd', 'p', 0},
    {PT_TIMESTAMP, "timestamp", "timestamp without time zone", 8, 'D', 1115, 0, 'd', 'p', 0},
    {PT_TIMESTAMPTZ, "timestamptz", "timestamp with time zone", 8, 'D', 1185, 0, 'd', 'p', 0},
    {1186, "interval", "interval", 16, 'T', 1187, 0, 'd', 'p', 0},
    {PT_NUMERIC, "numeric", "numeric", -1, 'N', 1231, 0, 'i', 'm', 0},
    {2950, "uuid", "uuid", 16, 'U', 2951, 0, 'c', 'p', 0},
    {3802, "jsonb", "jsonb", -1, 'U', 3807, 0, 'i', 'x', 0},
    {PT_REGCLASS, "regclass", "regclass", 4, 'N', 2210, 0, 'i', 'p', 0},
    {PT_REGTYPE, "regtype", "regtype", 4, 'N', 2211, 0, 'i', 'p', 0},
    {PT_REGNAMESPACE, "regnamespace", "regnamespace", 4, 'N', 4090, 0, 'i', 'p', 0},
    {PT_RECORD, "record", "record", -1, 'P', 2287, 0, 'd', 'x', 0},
    {2278, "void", "void", 4, 'P', 0, 0, 'i', 'p', 0},
    {PT_BOOL_ARR, "_bool", "boolean[]", -1, 'A', 0, PT_BOOL, 'i', 'x', 0},
    {1001, "_bytea", "bytea[]", -1, 'A', 0, PT_BYTEA, 'i', 'x', 0},
    {PT_CHAR_ARR, "_char", "\"char\"[]", -1, 'A', 0, PT_CHAR, 'i', 'x', 0},
    {PT_NAME_ARR, "_name", "name[]", -1, 'A', 0, PT_NAME, 'i', 'x', 950},
    {PT_INT2_ARR, "_int2", "smallint[]", -1, 'A', 0, PT_INT2, 'i', 'x', 0},
    {1006, "_int2vector", "int2vector[]", -1, 'A', 0, PT_INT2VECTOR, 'i', 'x', 0},
    {PT_INT4_ARR, "_int4", "integer[]", -1, 'A', 0, PT_INT4, 'i', 'x', 0},
    {1008, "_regproc", "regproc[]", -1, 'A', 0, PT_REGPROC, 'i', 'x', 0},
    {PT_TEXT_ARR, "_text", "text[]", -1, 'A', 0, PT_TEXT, 'i', 'x', 100},
    {1013, "_oidvector", "oidvector[]", -1, 'A', 0, PT_OIDVECTOR, 'i', 'x', 0},
    {1014, "_bpchar", "character[]", -1, 'A', 0, PT_BPCHAR, 'i', 'x', 100},
    {1015, "_varchar", "character varying[]", -1, 'A', 0, PT_VARCHAR, 'i', 'x', 100},
    {PT_INT8_ARR, "_int8", "bigint[]", -1, 'A', 0, PT_INT8, 'd', 'x', 0},
    {1021, "_float4", "real[]", -1, 'A', 0, PT_FLOAT4, 'i', 'x', 0},
    {1022, "_float8", "double precision[]", -1, 'A', 0, PT_FLOAT8, 'd', 'x', 0},
    {PT_OID_ARR, "_oid", "oid[]", -1, 'A', 0, PT_OID, 'i', 'x', 0},
    {PT_ACLITEM_ARR, "_aclitem", "aclitem[]", -1, 'A', 0, PT_ACLITEM, 'i', 'x', 0},
    {1115, "_timestamp", "timestamp without time zone[]", -1, 'A', 0, PT_TIMESTAMP, 'd', 'x', 0},
    {1182, "_date", "date[]", -1, 'A', 0, 1082, 'i', 'x', 0},
    {1183, "_time", "time without time zone[]", -1, 'A', 0, 1083, 'd', 'x', 0},
    {1185, "_timestamptz", "timestamp with time zone[]", -1, 'A', 0, PT_TIMESTAMPTZ, 'd', 'x', 0},
    {1187, "_interval", "interval[]", -1, 'A', 0, 1186, 'd', 'x', 0},
    {1231, "_numeric", "numeric[]", -1, 'A', 0, PT_NUMERIC, 'i', 'x', 0},
    {199, "_json", "json[]", -1, 'A', 0, PT_JSON, 'i', 'x', 0},
    {2951, "_uuid", "uuid[]", -1, 'A', 0, 2950, 'i', 'x', 0},
    {3807, "_jsonb", "jsonb[]", -1, 'A', 0, 3802, 'i', 'x', 0},
    {2210, "_regclass", "regclass[]", -1, 'A', 0, PT_REGCLASS, 'i', 'x', 0},
    {2211, "_regtype", "regtype[]", -1, 'A', 0, PT_REGTYPE, 'i', 'x', 0},
    {4090, "_regnamespace", "regnamespace[]", -1, 'A', 0, PT_REGNAMESPACE, 'i', 'x', 0},
    {2287, "_record", "record[]", -1, 'A', 0, PT_RECORD, 'd', 'x', 0},
};
#define NTYPES (sizeof types / sizeof *types)

const pctype *pc_type_by_oid(uint32_t oid)
{
    for (size_t i = 0; i < NTYPES; i++)
        if (types[i].oid == oid)
            return &types[i];
    return NULL;
}

const pctype *pc_type_by_name(const char *name)
{
    static const struct {
        const char *alias, *name;
    } alias[] = {{"boolean", "bool"},
                 {"integer", "int4"},
                 {"int", "int4"},
                 {"smallint", "int2"},
                 {"bigint", "int8"},
                 {"real", "float4"},
                 {"double precision", "float8"},
                 {"character varying", "varchar"},
                 {"character", "bpchar"},
                 {"timestamptz", "timestamptz"},
                 {"decimal", "numeric"}};
    for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
        if (!strcasecmp(name, alias[i].alias))
            name = alias[i].name;
    for (size_t i = 0; i < NTYPES; i++)
        if (!strcasecmp(types[i].name, name))
            return &types[i];
    return NULL;
}

uint32_t pc_array_elem(uint32_t t)
{
    const pctype *ty = pc_type_by_oid(t);
    return ty && ty->category == 'A' && t != PT_INT2VECTOR && t != PT_OIDVECTOR ? ty->elem : 0;
}

uint32_t pc_type_of_qr(int qt)
{
    switch (qt) {
    case QT_BOOL:
        return PT_BOOL;
    case QT_INT8:
    case QT_UINT8:
    case QT_INT16:
        return PT_INT2;
    case QT_UINT16:
    case QT_INT32:
        return PT_INT4;
    case QT_UINT64:
        return PT_NUMERIC;
    case QT_FLOAT64:
        return PT_FLOAT8;
    case QT_TIMESTAMP:
        return PT_TIMESTAMPTZ;
    case QT_TEXT:
        return PT_TEXT;
    case QT_JSON:
    case QT_MAP:
        return PT_JSON;
    default:
        return PT_INT8;
    }
}

/* ---- relation definitions ---- */
#define C(n, t)                                                                                    \
    {                                                                                              \
        n, t                                                                                       \
    }
static const pccol c_namespace[] = {C("oid", PT_OID), C("nspname", PT_NAME), C("nspowner", PT_OID),
                                    C("nspacl", PT_ACLITEM_ARR)};
static const pccol c_class[] = {C("oid", PT_OID),
                                C("relname", PT_NAME),
                                C("relnamespace", PT_OID),
                                C("reltype", PT_OID),
                                C("reloftype", PT_OID),
                                C("relowner", PT_OID),
                                C("relam", PT_OID),
                                C("relfilenode", PT_OID),
                                C("reltablespace", PT_OID),
                                C("relpages", PT_INT4),
                                C("reltuples", PT_FLOAT4),
                                C("relallvisible", PT_INT4),
                                C("reltoastrelid", PT_OID),
                                C("relhasindex", PT_BOOL),
                                C("relisshared", PT_BOOL),
                                C("relpersistence", PT_CHAR),
                                C("relkind", PT_CHAR),
                                C("relnatts", PT_INT2),
                                C("relchecks", PT_INT2),
                                C("relhasrules", PT_BOOL),
                                C("relhastriggers", PT_BOOL),
                                C("relhassubclass", PT_BOOL),
                                C("relrowsecurity", PT_BOOL),
                                C("relforcerowsecurity", PT_BOOL),
                                C("relispopulated", PT_BOOL),
                                C("relreplident", PT_CHAR),
                                C("relispartition", PT_BOOL),
                                C("relrewrite", PT_OID),
                                C("relfrozenxid", PT_INT8),
                                C("relminmxid", PT_INT8),
                                C("relacl", PT_ACLITEM_ARR),
                                C("reloptions", PT_TEXT_ARR),
                                C("relpartbound", PT_NODETREE)};
enum {
    CL_OID,
    CL_NAME,
    CL_NSP,
    CL_TYPE,
    CL_OFTYPE,
    CL_OWNER,
    CL_AM,
    CL_FILENODE,
    CL_TBLSPC,
    CL_PAGES,
    CL_TUPLES,
    CL_ALLVIS,
    CL_TOAST,
    CL_HASINDEX,
    CL_SHARED,
    CL_PERSIST,
    CL_KIND,
    CL_NATTS,
    CL_CHECKS,
    CL_RULES,
    CL_TRIGGERS,
    CL_SUBCLASS,
    CL_RLS,
    CL_FRLS,
    CL_POPULATED,
    CL_REPLIDENT,
    CL_PARTITION,
    CL_REWRITE,
    CL_FROZEN,
    CL_MINMX,
    CL_ACL,
    CL_OPTIONS,
    CL_PARTBOUND,
    CL_N
};
static const pccol c_attribute[] = {
    C("attrelid", PT_OID),           C("attname", PT_NAME),       C("atttypid", PT_OID),
    C("attstattarget", PT_INT4),     C("attlen", PT_INT2),        C("attnum", PT_INT2),
    C("attndims", PT_INT4),          C("attcacheoff", PT_INT4),   C("atttypmod", PT_INT4),
    C("attbyval", PT_BOOL),          C("attalign", PT_CHAR),      C("attstorage", PT_CHAR),
    C("attcompression", PT_CHAR),    C("attnotnull", PT_BOOL),    C("atthasdef", PT_BOOL),
    C("atthasmissing", PT_BOOL),     C("attidentity", PT_CHAR),   C("attgenerated", PT_CHAR),
    C("attisdropped", PT_BOOL),      C("attislocal", PT_BOOL),    C("attinhcount", PT_INT4),
    C("attcollation", PT_OID),       C("attacl", PT_ACLITEM_ARR), C("attoptions", PT_TEXT_ARR),
    C("attfdwoptions", PT_TEXT_ARR), C("attmissingval", PT_TEXT)};
enum {
    AT_RELID,
    AT_NAME,
    AT_TYPID,
    AT_STATTARGET,
    AT_LEN,
    AT_NUM,
    AT_NDIMS,
    AT_CACHEOFF,
    AT_TYPMOD,
    AT_BYVAL,
    AT_ALIGN,
    AT_STORAGE,
    AT_COMPRESSION,
    AT_NOTNULL,
    AT_HASDEF,
    AT_HASMISSING,
    AT_IDENTITY,
    AT_GENERATED,
    AT_DROPPED,
    AT_LOCAL,
    AT_INHCOUNT,
    AT_COLLATION,
    AT_ACL,
    AT_OPTIONS,
    AT_FDWOPTIONS,
    AT_MISSINGVAL,
    AT_N
};
static const pccol c_type[] = {C("oid", PT_OID),
                               C("typname", PT_NAME),
                               C("typnamespace", PT_OID),
                               C("typowner", PT_OID),
                               C("typlen", PT_INT2),
                               C("typbyval", PT_BOOL),
                               C("typtype", PT_CHAR),
                               C("typcategory", PT_CHAR),
                               C("typispreferred", PT_BOOL),
                               C("typisdefined", PT_BOOL),
                               C("typdelim", PT_CHAR),
                               C("typrelid", PT_OID),
                               C("typsubscript", PT_REGPROC),
                               C("typelem", PT_OID),
                               C("typarray", PT_OID),
                               C("typinput", PT_REGPROC),
                               C("typoutput", PT_REGPROC),
                               C("typreceive", PT_REGPROC),
                               C("typsend", PT_REGPROC),
                               C("typmodin", PT_REGPROC),
                               C("typmodout", PT_REGPROC),
                               C("typanalyze", PT_REGPROC),
                               C("typalign", PT_CHAR),
                               C("typstorage", PT_CHAR),
                               C("typnotnull", PT_BOOL),
                               C("typbasetype", PT_OID),
                               C("typtypmod", PT_INT4),
                               C("typndims", PT_INT4),
                               C("typcollation", PT_OID),
                               C("typdefaultbin", PT_NODETREE),
                               C("typdefault", PT_TEXT),
                               C("typacl", PT_ACLITEM_ARR)};
enum {
    TY_OID,
    TY_NAME,
    TY_NSP,
    TY_OWNER,
    TY_LEN,
    TY_BYVAL,
    TY_TYPE,
    TY_CATEGORY,
    TY_PREFERRED,
    TY_DEFINED,
    TY_DELIM,
    TY_RELID,
    TY_SUBSCRIPT,
    TY_ELEM,
    TY_ARRAY,
    TY_INPUT,
    TY_OUTPUT,
    TY_RECEIVE,
    TY_SEND,
    TY_MODIN,
    TY_MODOUT,
    TY_ANALYZE,
    TY_ALIGN,
    TY_STORAGE,
    TY_NOTNULL,
    TY_BASETYPE,
    TY_TYPMOD,
    TY_NDIMS,
    TY_COLLATION,
    TY_DEFAULTBIN,
    TY_DEFAULT,
    TY_ACL,
    TY_N
};
static const pccol c_database[] = {
    C("oid", PT_OID),           C("datname", PT_NAME),        C("datdba", PT_OID),
    C("encoding", PT_INT4),     C("datlocprovider", PT_CHAR), C("datistemplate", PT_BOOL),
    C("datallowconn", PT_BOOL), C("datconnlimit", PT_INT4),   C("datfrozenxid", PT_INT8),
    C("datminmxid", PT_INT8),   C("dattablespace", PT_OID),   C("datcollate", PT_TEXT),
    C("datctype", PT_TEXT),     C("daticulocale", PT_TEXT),   C("datcollversion", PT_TEXT),
    C("datacl", PT_ACLITEM_ARR)};
static const pccol c_roles[] = {C("rolname", PT_NAME),
                                C("rolsuper", PT_BOOL),
                                C("rolinherit", PT_BOOL),
                                C("rolcreaterole", PT_BOOL),
                                C("rolcreatedb", PT_BOOL),
                                C("rolcanlogin", PT_BOOL),
                                C("rolreplication", PT_BOOL),
                                C("rolconnlimit", PT_INT4),
                                C("rolpassword", PT_TEXT),
                                C("rolvaliduntil", PT_TIMESTAMPTZ),
                                C("rolbypassrls", PT_BOOL),
                                C("rolconfig", PT_TEXT_ARR),
                                C("oid", PT_OID)};
static const pccol c_user[] = {
    C("usename", PT_NAME),  C("usesysid", PT_OID),         C("usecreatedb", PT_BOOL),
    C("usesuper", PT_BOOL), C("userepl", PT_BOOL),         C("usebypassrls", PT_BOOL),
    C("passwd", PT_TEXT),   C("valuntil", PT_TIMESTAMPTZ), C("useconfig", PT_TEXT_ARR)};
static const pccol c_auth_members[] = {C("roleid", PT_OID), C("member", PT_OID),
                                       C("grantor", PT_OID), C("admin_option", PT_BOOL)};
static const pccol c_am[] = {C("oid", PT_OID), C("amname", PT_NAME), C("amhandler", PT_REGPROC),
                             C("amtype", PT_CHAR)};
static const pccol c_index[] = {C("indexrelid", PT_OID),         C("indrelid", PT_OID),
                                C("indnatts", PT_INT2),          C("indnkeyatts", PT_INT2),
                                C("indisunique", PT_BOOL),       C("indnullsnotdistinct", PT_BOOL),
                                C("indisprimary", PT_BOOL),      C("indisexclusion", PT_BOOL),
                                C("indimmediate", PT_BOOL),      C("indisclustered", PT_BOOL),
                                C("indisvalid", PT_BOOL),        C("indcheckxmin", PT_BOOL),
                                C("indisready", PT_BOOL),        C("indislive", PT_BOOL),
                                C("indisreplident", PT_BOOL),    C("indkey", PT_INT2VECTOR),
                                C("indcollation", PT_OIDVECTOR), C("indclass", PT_OIDVECTOR),
                                C("indoption", PT_INT2VECTOR),   C("indexprs", PT_NODETREE),
                                C("indpred", PT_NODETREE)};
static const pccol c_description[] = {C("objoid", PT_OID), C("classoid", PT_OID),
                                      C("objsubid", PT_INT4), C("description", PT_TEXT)};
static const pccol c_attrdef[] = {C("oid", PT_OID), C("adrelid", PT_OID), C("adnum", PT_INT2),
                                  C("adbin", PT_NODETREE)};
static const pccol c_collation[] = {C("oid", PT_OID),           C("collname", PT_NAME),
                                    C("collnamespace", PT_OID), C("collowner", PT_OID),
                                    C("collprovider", PT_CHAR), C("collisdeterministic", PT_BOOL),
                                    C("collencoding", PT_INT4), C("collcollate", PT_TEXT),
                                    C("collctype", PT_TEXT),    C("colliculocale", PT_TEXT),
                                    C("collversion", PT_TEXT)};
static const pccol c_constraint[] = {
    C("oid", PT_OID),           C("conname", PT_NAME),       C("connamespace", PT_OID),
    C("contype", PT_CHAR),      C("condeferrable", PT_BOOL), C("condeferred", PT_BOOL),
    C("convalidated", PT_BOOL), C("conrelid", PT_OID),       C("contypid", PT_OID),
    C("conindid", PT_OID),      C("conparentid", PT_OID),    C("confrelid", PT_OID),
    C("confupdtype", PT_CHAR),  C("confdeltype", PT_CHAR),   C("confmatchtype", PT_CHAR),
    C("conislocal", PT_BOOL),   C("coninhcount", PT_INT4),   C("connoinherit", PT_BOOL),
    C("conkey", PT_INT2_ARR),   C("confkey", PT_INT2_ARR),   C("conbin", PT_NODETREE)};
static const pccol c_inherits[] = {C("inhrelid", PT_OID), C("inhparent", PT_OID),
                                   C("inhseqno", PT_INT4), C("inhdetachpending", PT_BOOL)};
static const pccol c_tablespace[] = {C("oid", PT_OID), C("spcname", PT_NAME), C("spcowner", PT_OID),
                                     C("spcacl", PT_ACLITEM_ARR), C("spcoptions", PT_TEXT_ARR)};
static const pccol c_proc[] = {C("oid", PT_OID),
                               C("proname", PT_NAME),
                               C("pronamespace", PT_OID),
                               C("proowner", PT_OID),
                               C("prolang", PT_OID),
                               C("prokind", PT_CHAR),
                               C("proretset", PT_BOOL),
                               C("pronargs", PT_INT2),
                               C("prorettype", PT_OID),
                               C("proargtypes", PT_OIDVECTOR),
                               C("proargnames", PT_TEXT_ARR),
                               C("prosrc", PT_TEXT)};
static const pccol c_extension[] = {
    C("oid", PT_OID),          C("extname", PT_NAME),        C("extowner", PT_OID),
    C("extnamespace", PT_OID), C("extrelocatable", PT_BOOL), C("extversion", PT_TEXT)};
static const pccol c_settings[] = {
    C("name", PT_TEXT),       C("setting", PT_TEXT), C("unit", PT_TEXT),  C("category", PT_TEXT),
    C("short_desc", PT_TEXT), C("vartype", PT_TEXT), C("source", PT_TEXT)};
static const pccol c_statistic_ext[] = {C("oid", PT_OID),
                                        C("stxrelid", PT_OID),
                                        C("stxname", PT_NAME),
                                        C("stxnamespace", PT_OID),
                                        C("stxowner", PT_OID),
                                        C("stxstattarget", PT_INT4),
                                        C("stxkeys", PT_INT2VECTOR),
                                        C("stxkind", PT_CHAR_ARR),
                                        C("stxexprs", PT_NODETREE)};
static const pccol c_policy[] = {
    C("oid", PT_OID),          C("polname", PT_NAME),         C("polrelid", PT_OID),
    C("polcmd", PT_CHAR),      C("polpermissive", PT_BOOL),   C("polroles", PT_OID_ARR),
    C("polqual", PT_NODETREE), C("polwithcheck", PT_NODETREE)};
static const pccol c_trigger[] = {
    C("oid", PT_OID),        C("tgrelid", PT_OID),       C("tgparentid", PT_OID),
    C("tgname", PT_NAME),    C("tgfoid", PT_OID),        C("tgtype", PT_INT2),
    C("tgenabled", PT_CHAR), C("tgisinternal", PT_BOOL), C("tgconstraint", PT_OID)};
static const pccol c_publication[] = {
    C("oid", PT_OID),           C("pubname", PT_NAME),     C("pubowner", PT_OID),
    C("puballtables", PT_BOOL), C("pubinsert", PT_BOOL),   C("pubupdate", PT_BOOL),
    C("pubdelete", PT_BOOL),    C("pubtruncate", PT_BOOL), C("pubviaroot", PT_BOOL)};
static const pccol c_publication_rel[] = {C("oid", PT_OID), C("prpubid", PT_OID),
                                          C("prrelid", PT_OID), C("prqual", PT_NODETREE),
                                          C("prattrs", PT_INT2VECTOR)};
static const pccol c_publication_namespace[] = {C("oid", PT_OID), C("pnpubid", PT_OID),
                                                C("pnnspid", PT_OID)};
static const pccol c_rewrite[] = {C("oid", PT_OID),          C("rulename", PT_NAME),
                                  C("ev_class", PT_OID),     C("ev_type", PT_CHAR),
                                  C("ev_enabled", PT_CHAR),  C("is_instead", PT_BOOL),
                                  C("ev_qual", PT_NODETREE), C("ev_action", PT_NODETREE)};
static const pccol c_enum[] = {C("oid", PT_OID), C("enumtypid", PT_OID),
                               C("enumsortorder", PT_FLOAT4), C("enumlabel", PT_NAME)};
static const pccol c_range[] = {C("rngtypid", PT_OID), C("rngsubtype", PT_OID),
                                C("rngmultitypid", PT_OID)};
static const pccol c_foreign_table[] = {C("ftrelid", PT_OID), C("ftserver", PT_OID),
                                        C("ftoptions", PT_TEXT_ARR)};
static const pccol c_sequence[] = {C("seqrelid", PT_OID), C("seqtypid", PT_OID),
                                   C("seqstart", PT_INT8), C("seqincrement", PT_INT8)};
static const pccol c_stat_activity[] = {
    C("datid", PT_OID),    C("datname", PT_NAME),          C("pid", PT_INT4),
    C("usename", PT_NAME), C("application_name", PT_TEXT), C("state", PT_TEXT),
    C("query", PT_TEXT)};
/* information_schema (sql_identifier, character_data ... are domains over
 * name and varchar: reported as their base types) */
static const pccol c_is_schemata[] = {C("catalog_name", PT_NAME),
                                      C("schema_name", PT_NAME),
                                      C("schema_owner", PT_NAME),
                                      C("default_character_set_catalog", PT_NAME),
                                      C("default_character_set_schema", PT_NAME),
                                      C("default_character_set_name", PT_NAME),
                                      C("sql_path", PT_VARCHAR)};
static const pccol c_is_tables[] = {C("table_catalog", PT_NAME),
                                    C("table_schema", PT_NAME),
                                    C("table_name", PT_NAME),
                                    C("table_type", PT_VARCHAR),
                                    C("self_referencing_column_name", PT_NAME),
                                    C("reference_generation", PT_VARCHAR),
                                    C("user_defined_type_catalog", PT_NAME),
                                    C("user_defined_type_schema", PT_NAME),
                                    C("user_defined_type_name", PT_NAME),
                                    C("is_insertable_into", PT_VARCHAR),
                                    C("is_typed", PT_VARCHAR),
                                    C("commit_action", PT_VARCHAR)};
static const pccol c_is_columns[] = {C("table_catalog", PT_NAME),
                                     C("table_schema", PT_NAME),
                                     C("table_name", PT_NAME),
                                     C("column_name", PT_NAME),
                                     C("ordinal_position", PT_INT4),
                                     C("column_default", PT_VARCHAR),
                                     C("is_nullable", PT_VARCHAR),
                                     C("data_type", PT_VARCHAR),
                                     C("character_maximum_length", PT_INT4),
                                     C("character_octet_length", PT_INT4),
                                     C("numeric_precision", PT_INT4),
                                     C("numeric_precision_radix", PT_INT4),
                                     C("numeric_scale", PT_INT4),
                                     C("datetime_precision", PT_INT4),
                                     C("interval_type", PT_VARCHAR),
                                     C("collation_name", PT_NAME),
                                     C("udt_catalog", PT_NAME),
                                     C("udt_schema", PT_NAME),
                                     C("udt_name", PT_NAME),
                                     C("dtd_identifier", PT_NAME),
                                     C("is_identity", PT_VARCHAR),
                                     C("is_generated", PT_VARCHAR),
                                     C("is_updatable", PT_VARCHAR)};
#undef C

enum {
    R_NAMESPACE,
    R_CLASS,
    R_ATTRIBUTE,
    R_TYPE,
    R_DATABASE,
    R_ROLES,
    R_AUTHID,
    R_USER,
    R_AUTH_MEMBERS,
    R_AM,
    R_INDEX,
    R_DESCRIPTION,
    R_SHDESCRIPTION,
    R_ATTRDEF,
    R_COLLATION,
    R_CONSTRAINT,
    R_INHERITS,
    R_TABLESPACE,
    R_PROC,
    R_EXTENSION,
    R_SETTINGS,
    R_STATISTIC_EXT,
    R_POLICY,
    R_TRIGGER,
    R_PUBLICATION,
    R_PUBLICATION_REL,
    R_PUBLICATION_NAMESPACE,
    R_REWRITE,
    R_ENUM,
    R_RANGE,
    R_FOREIGN_TABLE,
    R_SEQUENCE,
    R_STAT_ACTIVITY,
    R_IS_SCHEMATA,
    R_IS_TABLES,
    R_IS_COLUMNS,
    R_NDEFS
};

static const struct reldef {
    const char *schema, *name;
    uint32_t oid;
    const pccol *cols;
    uint32_t ncols;
} defs[R_NDEFS] = {
#define D(s, n, o, c)                                                                              \
    {                                                                                              \
        s, n, o, c, sizeof c / sizeof *c                                                           \
    }
    [R_NAMESPACE] = D("pg_catalog", "pg_namespace", 2615, c_namespace),
    [R_CLASS] = D("pg_catalog", "pg_class", 1259, c_class),
    [R_ATTRIBUTE] = D("pg_catalog", "pg_attribute", 1249, c_attribute),
    [R_TYPE] = D("pg_catalog", "pg_type", 1247, c_type),
    [R_DATABASE] = D("pg_catalog", "pg_database", 1262, c_database),
    [R_ROLES] = D("pg_catalog", "pg_roles", 12001, c_roles),
    [R_AUTHID] = D("pg_catalog", "pg_authid", 1260, c_roles),
    [R_USER] = D("pg_catalog", "pg_user", 12002, c_user),
    [R_AUTH_MEMBERS] = D("pg_catalog", "pg_auth_members", 1261, c_auth_members),
    [R_AM] = D("pg_catalog", "pg_am", 2601, c_am),
    [R_INDEX] = D("pg_catalog", "pg_index", 2610, c_index),
    [R_DESCRIPTION] = D("pg_catalog", "pg_description", 2609, c_description),
    [R_SHDESCRIPTION] = D("pg_catalog", "pg_shdescription", 2396, c_description),
    [R_ATTRDEF] = D("pg_catalog", "pg_attrdef", 2604, c_attrdef),
    [R_COLLATION] = D("pg_catalog", "pg_collation", 3456, c_collation),
    [R_CONSTRAINT] = D("pg_catalog", "pg_constraint", 2606, c_constraint),
    [R_INHERITS] = D("pg_catalog", "pg_inherits", 2611, c_inherits),
    [R_TABLESPACE] = D("pg_catalog", "pg_tablespace", 1213, c_tablespace),
    [R_PROC] = D("pg_catalog", "pg_proc", 1255, c_proc),
    [R_EXTENSION] = D("pg_catalog", "pg_extension", 3079, c_extension),
    [R_SETTINGS] = D("pg_catalog", "pg_settings", 12003, c_settings),
    [R_STATISTIC_EXT] = D("pg_catalog", "pg_statistic_ext", 3381, c_statistic_ext),
    [R_POLICY] = D("pg_catalog", "pg_policy", 3256, c_policy),
    [R_TRIGGER] = D("pg_catalog", "pg_trigger", 2620, c_trigger),
    [R_PUBLICATION] = D("pg_catalog", "pg_publication", 6104, c_publication),
    [R_PUBLICATION_REL] = D("pg_catalog", "pg_publication_rel", 6106, c_publication_rel),
    [R_PUBLICATION_NAMESPACE] =
        D("pg_catalog", "pg_publication_namespace", 6237, c_publication_namespace),
    [R_REWRITE] = D("pg_catalog", "pg_rewrite", 2618, c_rewrite),
    [R_ENUM] = D("pg_catalog", "pg_enum", 3501, c_enum),
    [R_RANGE] = D("pg_catalog", "pg_range", 3541, c_range),
    [R_FOREIGN_TABLE] = D("pg_catalog", "pg_foreign_table", 3118, c_foreign_table),
    [R_SEQUENCE] = D("pg_catalog", "pg_sequence", 2224, c_sequence),
    [R_STAT_ACTIVITY] = D("pg_catalog", "pg_stat_activity", 12004, c_stat_activity),
    [R_IS_SCHEMATA] = D("information_schema", "schemata", 13100, c_is_schemata),
    [R_IS_TABLES] = D("information_schema", "tables", 13101, c_is_tables),
    [R_IS_COLUMNS] = D("information_schema", "columns", 13102, c_is_columns),
#undef D
};

int pc_rel_find(const char *schema, const char *name)
{
    for (int d = 0; d < R_NDEFS; d++) {
        if (schema ? strcmp(schema, defs[d].schema) != 0
                   : strcmp(defs[d].schema, "pg_catalog") != 0)
            continue;
        if (!strcmp(name, defs[d].name))
            return d;
    }
    return -1;
}

/* ---- user tables ---- */
uint32_t qr_pgcat_table_oid(const qr_catalog *cat, const char *name)
{
    const qr_tabdef *d = qr_catalog_find(cat, name);
    if (!d)
        return 0;
    uint32_t oids[64];
    uint32_t mine = 0;
    /* each table's oid from its name, bumped past earlier tables' (creation
     * order) on the rare collision */
    for (uint32_t t = 0; t < cat->ntables; t++) {
        uint32_t h = 2166136261u;
        for (const char *s = cat->tables[t]->name; *s; s++)
            h = (h ^ (uint8_t)tolower((unsigned char)*s)) * 16777619u;
        uint32_t oid = 16384 + (h % 16000000u) * 128;
        for (int again = 1; again;) {
            again = 0;
            for (uint32_t k = 0; k < t && k < 64; k++)
                if (oids[k] == oid) {
                    oid = 16384 + ((oid - 16384) / 128 + 1) % 16000000u * 128;
                    again = 1;
                }
        }
        if (t < 64)
            oids[t] = oid;
        if (cat->tables[t] == d) {
            mine = oid;
            break;
        }
    }
    return mine;
}

static uint32_t table_oid_at(pcx *x, uint32_t t)
{
    return qr_pgcat_table_oid(x->env->cat, x->env->cat->tables[t]->name);
}

const qr_tabdef *pc_table_of(pcx *x, int64_t oid)
{
    for (uint32_t t = 0; t < x->env->cat->ntables; t++)
        if (table_oid_at(x, t) == oid)
            return x->env->cat->tables[t];
    return NULL;
}

static const char *am_name(int kind)
{
    switch (kind) {
    case QR_IX_FULLTEXT:
        return "inverted";
    case QR_IX_KEYWORD:
        return "keyword";
    case QR_IX_RANGE:
        return "range";
    default:
        return "paths";
    }
}

/* An index's name: its alias, else TABLE_COLUMN_idx as PostgreSQL names one. */
static const char *index_name(pcx *x, const qr_tabdef *d, const qr_ixdef *ix)
{
    if (ix->name)
        return ix->name;
    char buf[600];
    snprintf(buf, sizeof buf, "%s_%s_%s_idx", d->name, d->cols[ix->col].name, am_name(ix->kind));
    return qr_arena_strndup(x->a, buf, strlen(buf));
}

static void quote_ident_into(const char *s, qr_buf *b)
{
    int plain = (*s >= 'a' && *s <= 'z') || *s == '_';
    for (const char *p = s; *p && plain; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
    if (plain) {
        qr_buf_put(b, s, strlen(s));
        return;
    }
    qr_buf_put_u8(b, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            qr_buf_put_u8(b, '"');
        qr_buf_put_u8(b, (uint8_t)*p);
    }
    qr_buf_put_u8(b, '"');
}

const char *pc_indexdef(pcx *x, int64_t oid, int col)
{
    for (uint32_t t = 0; t < x->env->cat->ntables; t++) {
        uint32_t toid = table_oid_at(x, t);
        const qr_tabdef *d = x->env->cat->tables[t];
        if (oid <= toid || oid > (int64_t)toid + d->nixs)
            continue;
        const qr_ixdef *ix = &d->ixs[oid - toid - 1];
        qr_buf b;
        qr_buf_init(&b);
        if (col > 1) {
            qr_buf_free(&b);
            return "";
        }
        if (col == 0) {
            qr_buf_put(&b, "CREATE INDEX ", 13);
            quote_ident_into(index_name(x, d, ix), &b);
            qr_buf_put(&b, " ON public.", 11);
            quote_ident_into(d->name, &b);
            qr_buf_put(&b, " USING ", 7);
            qr_buf_put(&b, am_name(ix->kind), strlen(am_name(ix->kind)));
            qr_buf_put(&b, " (", 2);
        }
        quote_ident_into(d->cols[ix->col].name, &b);
        if (col == 0)
            qr_buf_put_u8(&b, ')');
        const char *s = b.oom ? NULL : qr_arena_strndup(x->a, (const char *)b.p, b.len);
        qr_buf_free(&b);
        return s;
    }
    return NULL;
}

const char *pc_relname_of(pcx *x, int64_t oid, const char **nsp)
{
    *nsp = "public";
    for (uint32_t t = 0; t < x->env->cat->ntables; t++) {
        uint32_t toid = table_oid_at(x, t);
        const qr_tabdef *d = x->env->cat->tables[t];
        if (oid == toid)
            return d->name;
        if (oid > toid && oid <= (int64_t)toid + d->nixs)
            return index_name(x, d, &d->ixs[oid - toid - 1]);
    }
    for (int r = 0; r < R_NDEFS; r++)
        if (defs[r].oid == oid) {
            *nsp = defs[r].schema;
            return defs[r].name;
        }
    return NULL;
}

uint32_t pc_reloid_of(pcx *x, const char *name)
{
    const char *dot = strchr(name, '.');
    char schema[64] = "";
    if (dot) {
        snprintf(schema, sizeof schema, "%.*s", (int)(dot - name), name);
        name = dot + 1;
    }
    if (!dot || !strcmp(schema, "public")) {
        if (!dot || 1) {
            int d = dot ? -1 : pc_rel_find(NULL, name); /* pg_catalog first */
            if (d >= 0)
                return defs[d].oid;
        }
        for (uint32_t t = 0; t < x->env->cat->ntables; t++) {
            const qr_tabdef *td = x->env->cat->tables[t];
            uint32_t toid = table_oid_at(x, t);
            if (!strcmp(td->name, name))
                return toid;
            for (uint32_t i = 0; i < td->nixs; i++)
                if (!strcmp(index_name(x, td, &td->ixs[i]), name))
                    return toid + 1 + i;
        }
        return 0;
    }
    int d = pc_rel_find(schema, name);
    return d >= 0 ? defs[d].oid : 0;
}

/* ---- building the rows ---- */
typedef struct rowb {
    pcx *x;
    pcrel *r;
    pcv v[40];
} rowb;

static void rb_clear(rowb *b)
{
    for (uint32_t i = 0; i < b->r->ncols; i++) {
        b->v[i] = pc_null();
        b->v[i].t = b->r->cols[i].type;
    }
}
static void rb_int(rowb *b, int c, int64_t i) { b->v[c] = pc_int(i, b->r->cols[c].type); }
static void rb_bool(rowb *b, int c, int v) { b->v[c] = pc_bool(v); }
static void rb_str(rowb *b, int c, const char *s) { b->v[c] = pc_cstr(s, b->r->cols[c].type); }
static void rb_float(rowb *b, int c, double f)
{
    b->v[c] = (pcv){.k = PV_FLOAT, .t = b->r->cols[c].type, .f = f};
}
static int rb_add(rowb *b) { return pc_rel_add(b->x, b->r, b->v); }

/* column index by name in a definition (build code names columns) */
static int ci(const struct reldef *d, const char *name)
{
    for (uint32_t i = 0; i < d->ncols; i++)
        if (!strcmp(d->cols[i].name, name))
            return (int)i;
    return -1;
}

static int set_named(rowb *b, const struct reldef *d, const char *name, pcv v)
{
    int c = ci(d, name);
    if (c < 0)
        return -1;
    v.t = d->cols[c].type;
    b->v[c] = v;
    return 0;
}

static int build_namespace(rowb *b)
{
    static const struct {
        uint32_t oid;
        const char *name;
        uint32_t owner;
    } ns[] = {{NSP_CATALOG, "pg_catalog", OWNER_OID},
              {NSP_PUBLIC, "public", 6171},
              {NSP_INFO, "information_schema", OWNER_OID}};
    for (size_t i = 0; i < 3; i++) {
        rb_clear(b);
        rb_int(b, 0, ns[i].oid);
        rb_str(b, 1, ns[i].name);
        rb_int(b, 2, ns[i].owner);
        if (rb_add(b) != 0)
            return -1;
    }
    return 0;
}

static void class_common(rowb *b, uint32_t oid, const char *name, uint32_t nsp, char kind)
{
    static const char kinds[][2] = {{'r', 0}, {'i', 0}, {'v', 0}, {'p', 0}, {'n', 0}, {'h', 0}};
    rb_clear(b);
    rb_int(b, CL_OID, oid);
    rb_str(b, CL_NAME, name);
    rb_int(b, CL_NSP, nsp);
    rb_int(b, CL_TYPE, 0);
    rb_int(b, CL_OFTYPE, 0);
    rb_int(b, CL_OWNER, OWNER_OID);
    rb_int(b, CL_AM, kind == 'r' ? AM_HEAP : 0);
    rb_int(b, CL_FILENODE, oid);
    rb_int(b, CL_TBLSPC, 0);
    rb_int(b, CL_PAGES, 0);
    rb_float(b, CL_TUPLES, -1);
    rb_int(b, CL_ALLVIS, 0);
    rb_int(b, CL_TOAST, 0);
    rb_bool(b, CL_HASINDEX, 0);
    rb_bool(b, CL_SHARED, 0);
    rb_str(b, CL_PERSIST, "p");
    const char *k = kind == 'r' ? kinds[0] : kind == 'i' ? kinds[1] : kinds[2];
    rb_str(b, CL_KIND, k);
    rb_int(b, CL_NATTS, 0);
    rb_int(b, CL_CHECKS, 0);
    for (int c = CL_RULES; c <= CL_FRLS; c++)
        rb_bool(b, c, 0);
    rb_bool(b, CL_POPULATED, 1);
    rb_str(b, CL_REPLIDENT, kind == 'r' ? "d" : "n");
    rb_bool(b, CL_PARTITION, 0);
    rb_int(b, CL_REWRITE, 0);
    rb_int(b, CL_FROZEN, 0);
    rb_int(b, CL_MINMX, 0);
}

static int build_class(rowb *b)
{
    pcx *x = b->x;
    const qr_catalog *cat = x->env->cat;
    for (uint32_t t = 0; t < cat->ntables; t++) {
        const qr_tabdef *d = cat->tables[t];
        uint32_t oid = table_oid_at(x, t);
        class_common(b, oid, d->name, NSP_PUBLIC, 'r');
        rb_int(b, CL_NATTS, d->ncols);
        rb_bool(b, CL_HASINDEX, d->nixs > 0);
        int64_t rows = x->env->table_rows ? x->env->table_rows(x->env->ctx, d->name) : -1;
        int64_t bytes = x->env->table_bytes ? x->env->table_bytes(x->env->ctx, d->name) : -1;
        rb_float(b, CL_TUPLES, rows >= 0 ? (double)rows : -1);
        rb_int(b, CL_PAGES, bytes > 0 ? (bytes + 8191) / 8192 : 0);
        if (rb_add(b) != 0)
            return -1;
        for (uint32_t i = 0; i < d->nixs; i++) {
            class_common(b, oid + 1 + i, index_name(x, d, &d->ixs[i]), NSP_PUBLIC, 'i');
            rb_int(b, CL_AM, AM_QUARRY + d->ixs[i].kind);
            rb_int(b, CL_NATTS, 1);
            rb_float(b, CL_TUPLES, rows >= 0 ? (double)rows : -1);
            if (rb_add(b) != 0)
                return -1;
        }
    }
    for (int r = 0; r < R_NDEFS; r++) {
        int info = !strcmp(defs[r].schema, "information_schema");
        int view = info || defs[r].oid >= 12000;
        class_common(b, defs[r].oid, defs[r].name, info ? NSP_INFO : NSP_CATALOG, view ? 'v' : 'r');
        rb_int(b, CL_NATTS, defs[r].ncols);
        if (view)
            rb_int(b, CL_AM, 0);
        if (rb_add(b) != 0)
            return -1;
    }
    return 0;
}

static void attr_row(rowb *b, uint32_t relid, const char *name, uint32_t type, int num, int notnull)
{
    const pctype *ty = pc_type_by_oid(type);
    rb_clear(b);
    rb_int(b, AT_RELID, relid);
    rb_str(b, AT_NAME, name);
    rb_int(b, AT_TYPID, type);
    rb_int(b, AT_STATTARGET, -1);
    rb_int(b, AT_LEN, ty ? ty->len : -1);
    rb_int(b, AT_NUM, num);
    rb_int(b, AT_NDIMS, pc_array_elem(type) ? 1 : 0);
    rb_int(b, AT_CACHEOFF, -1);
    rb_int(b, AT_TYPMOD, -1);
    rb_bool(b, AT_BYVAL, ty && ty->len > 0 && ty->len <= 8);
    static const char al[][2] = {{'c', 0}, {'s', 0}, {'i', 0}, {'d', 0}};
    static const char st[][2] = {{'p', 0}, {'x', 0}, {'m', 0}};
    char a = ty ? ty->align : 'i', s = ty ? ty->storage : 'x';
    rb_str(b, AT_ALIGN, a == 'c' ? al[0] : a == 's' ? al[1] : a == 'd' ? al[3] : al[2]);
    rb_str(b, AT_STORAGE, s == 'p' ? st[0] : s == 'm' ? st[2] : st[1]);
    rb_str(b, AT_COMPRESSION, "");
    rb_bool(b, AT_NOTNULL, notnull);
    rb_bool(b, AT_HASDEF, 0);
    rb_bool(b, AT_HASMISSING, 0);
    rb_str(b, AT_IDENTITY, "");
    rb_str(b, AT_GENERATED, "");
    rb_bool(b, AT_DROPPED, 0);
    rb_bool(b, AT_LOCAL, 1);
    rb_int(b, AT_INHCOUNT, 0);
    rb_int(b, AT_COLLATION, ty ? ty->collation : 0);
}

static int build_attribute(rowb *b)
{
    pcx *x = b->x;
    const qr_catalog *cat = x->env->cat;
    for (uint32_t t = 0; t < cat->ntables; t++) {
        const qr_tabdef *d = cat->tables[t];
        uint32_t oid = table_oid_at(x, t);
        for (uint32_t c = 0; c < d->ncols; c++) {
            attr_row(b, oid, d->cols[c].name, pc_type_of_qr(d->cols[c].type), (int)c + 1,
                     !d->cols[c].nullable);
            if (rb_add(b) != 0)
                return -1;
        }
        for (uint32_t i = 0; i < d->nixs; i++) {
            const qr_coldef *col = &d->cols[d->ixs[i].col];
            attr_row(b, oid + 1 + i, col->name, pc_type_of_qr(col->type), 1, 0);
            if (rb_add(b) != 0)
                return -1;
        }
    }
    for (int r = 0; r < R_NDEFS; r++)
        for (uint32_t c = 0; c < defs[r].ncols; c++) {
            attr_row(b, defs[r].oid, defs[r].cols[c].name, defs[r].cols[c].type, (int)c + 1, 0);
            if (rb_add(b) != 0)
                return -1;
        }
    return 0;
}

static int build_type(rowb *b)
{
    static const char ty1[][2] = {{'b', 0}, {'p', 0}};
    for (size_t i = 0; i < NTYPES; i++) {
        const pctype *t = &types[i];
        char cat[2] = {t->category, 0}, al[2] = {t->align, 0}, st[2] = {t->storage, 0};
        rb_clear(b);
        rb_int(b, TY_OID, t->oid);
        rb_str(b, TY_NAME, t->name);
        rb_int(b, TY_NSP, NSP_CATALOG);
        rb_int(b, TY_OWNER, OWNER_OID);
        rb_int(b, TY_LEN, t->len);
        rb_bool(b, TY_BYVAL, t->len > 0 && t->len <= 8);
        rb_str(b, TY_TYPE, t->category == 'P' ? ty1[1] : ty1[0]);
        b->v[TY_CATEGORY] = pc_str(b->x, cat, 1, PT_CHAR);
        rb_bool(b, TY_PREFERRED,
                t->oid == PT_TEXT || t->oid == PT_FLOAT8 || t->oid == PT_BOOL ||
                    t->oid == PT_TIMESTAMPTZ || t->oid == PT_OID);
        rb_bool(b, TY_DEFINED, 1);
        rb_str(b, TY_DELIM, ",");
        rb_int(b, TY_RELID, 0);
        int arr = t->category == 'A';
        rb_str(b, TY_SUBSCRIPT, arr ? "array_subscript_handler" : "-");
        rb_int(b, TY_ELEM, t->elem);
        rb_int(b, TY_ARRAY, t->array);
        const char *base =
            arr && t->oid != PT_INT2VECTOR && t->oid != PT_OIDVECTOR ? "array" : t->name;
        char fn[4][48];
        snprintf(fn[0], sizeof fn[0], "%sin", base);
        snprintf(fn[1], sizeof fn[1], "%sout", base);
        snprintf(fn[2], sizeof fn[2], "%srecv", base);
        snprintf(fn[3], sizeof fn[3], "%ssend", base);
        for (int k = 0; k < 4; k++)
            b->v[TY_INPUT + k] = pc_str(b->x, fn[k], strlen(fn[k]), PT_REGPROC);
        rb_str(b, TY_MODIN, "-");
        rb_str(b, TY_MODOUT, "-");
        rb_str(b, TY_ANALYZE, "-");
        b->v[TY_ALIGN] = pc_str(b->x, al, 1, PT_CHAR);
        b->v[TY_STORAGE] = pc_str(b->x, st, 1, PT_CHAR);
        rb_bool(b, TY_NOTNULL, 0);
        rb_int(b, TY_BASETYPE, 0);
        rb_int(b, TY_TYPMOD, -1);
        rb_int(b, TY_NDIMS, 0);
        rb_int(b, TY_COLLATION, t->collation);
        if (rb_add(b) != 0)
            return -1;
    }
    return 0;
}

static int build_database(rowb *b)
{
    const struct reldef *d = &defs[R_DATABASE];
    rb_clear(b);
    set_named(b, d, "oid", pc_int(DB_OID, 0));
    set_named(b, d, "datname", pc_cstr(b->x->env->database, 0));
    set_named(b, d, "datdba", pc_int(OWNER_OID, 0));
    set_named(b, d, "encoding", pc_int(6, 0));
    set_named(b, d, "datlocprovider", pc_cstr("c", 0));
    set_named(b, d, "datistemplate", pc_bool(0));
    set_named(b, d, "datallowconn", pc_bool(1));
    set_named(b, d, "datconnlimit", pc_int(-1, 0));
    set_named(b, d, "datfrozenxid", pc_int(0, 0));
    set_named(b, d, "datminmxid", pc_int(1, 0));
    set_named(b, d, "dattablespace", pc_int(1663, 0));
    set_named(b, d, "datcollate", pc_cstr("C.UTF-8", 0));
    set_named(b, d, "datctype", pc_cstr("C.UTF-8", 0));
    return rb_add(b);
}

static int build_roles(rowb *b, const struct reldef *d)
{
    rb_clear(b);
    set_named(b, d, "rolname", pc_cstr(b->x->env->user, 0));
    set_named(b, d, "rolsuper", pc_bool(1));
    set_named(b, d, "rolinherit", pc_bool(1));
    set_named(b, d, "rolcreaterole", pc_bool(1));
    set_named(b, d, "rolcreatedb", pc_bool(1));
    set_named(b, d, "rolcanlogin", pc_bool(1));
    set_named(b, d, "rolreplication", pc_bool(1));
    set_named(b, d, "rolconnlimit", pc_int(-1, 0));
    set_named(b, d, "rolpassword", pc_cstr("********", 0));
    set_named(b, d, "rolbypassrls", pc_bool(1));
    set_named(b, d, "oid", pc_int(OWNER_OID, 0));
    return rb_add(b);
}

static int build_user(rowb *b)
{
    const struct reldef *d = &defs[R_USER];
    rb_clear(b);
    set_named(b, d, "usename", pc_cstr(b->x->env->user, 0));
    set_named(b, d, "usesysid", pc_int(OWNER_OID, 0));
    set_named(b, d, "usecreatedb", pc_bool(1));
    set_named(b, d, "usesuper", pc_bool(1));
    set_named(b, d, "userepl", pc_bool(1));
    set_named(b, d, "usebypassrls", pc_bool(1));
    set_named(b, d, "passwd", pc_cstr("********", 0));
    return rb_add(b);
}

static int build_am(rowb *b)
{
    static const struct {
        uint32_t oid;
        const char *name, *handler, *type;
    } am[] = {{AM_HEAP, "heap", "heap_tableam_handler", "t"},
              {AM_BTREE, "btree", "bthandler", "i"},
              {AM_QUARRY + QR_IX_FULLTEXT, "inverted", "-", "i"},
              {AM_QUARRY + QR_IX_KEYWORD, "keyword", "-", "i"},
              {AM_QUARRY + QR_IX_RANGE, "range", "-", "i"},
              {AM_QUARRY + QR_IX_PATHS, "paths", "-", "i"}};
    for (size_t i = 0; i < sizeof am / sizeof *am; i++) {
        rb_clear(b);
        rb_int(b, 0, am[i].oid);
        rb_str(b, 1, am[i].name);
        rb_str(b, 2, am[i].handler);
        rb_str(b, 3, am[i].type);
        if (rb_add(b) != 0)
            return -1;
    }
    return 0;
}

static int build_index(rowb *b)
{
    pcx *x = b->x;
    const struct reldef *d = &defs[R_INDEX];
    for (uint32_t t = 0; t < x->env->cat->ntables; t++) {
        const qr_tabdef *td = x->env->cat->tables[t];
        uint32_t oid = table_oid_at(x, t);
        for (uint32_t i = 0; i < td->nixs; i++) {
            rb_clear(b);
            set_named(b, d, "indexrelid", pc_int(oid + 1 + i, 0));
            set_named(b, d, "indrelid", pc_int(oid, 0));
            set_named(b, d, "indnatts", pc_int(1, 0));
            set_named(b, d, "indnkeyatts", pc_int(1, 0));
            static const char *const flags[] = {
                "indisunique",    "indnullsnotdistinct", "indisprimary",  "indisexclusion",
                "indisclustered", "indcheckxmin",        "indisreplident"};
            for (size_t f = 0; f < sizeof flags / sizeof *flags; f++)
                set_named(b, d, flags[f], pc_bool(0));
            set_named(b, d, "indimmediate", pc_bool(1));
            /* an index being built is PostgreSQL's invalid one (psql \d says
             * INVALID): ready for writes, not used by queries */
            set_named(b, d, "indisvalid", pc_bool(!td->ixs[i].building));
            set_named(b, d, "indisready", pc_bool(1));
            set_named(b, d, "indislive", pc_bool(1));
            pcv *key = qr_arena_alloc(x->a, sizeof *key * 2);
            if (!key)
                return pc_nomem(x);
            key[0] = pc_int(td->ixs[i].col + 1, PT_INT2);
            key[1] = pc_int(0, PT_INT2);
            set_named(b, d, "indkey", (pcv){.k = PV_ARR, .n = 1, .a = key});
            set_named(b, d, "indoption", (pcv){.k = PV_ARR, .n = 1, .a = key + 1});
            if (rb_add(b) != 0)
                return -1;
        }
    }
    return 0;
}

static int build_collation(rowb *b)
{
    static const struct {
        uint32_t oid;
        const char *name, *prov;
    } co[] = {{100, "default", "d"}, {950, "C", "c"}, {951, "POSIX", "c"}};
    const struct reldef *d = &defs[R_COLLATION];
    for (size_t i = 0; i < 3; i++) {
        rb_clear(b);
        set_named(b, d, "oid", pc_int(co[i].oid, 0));
        set_named(b, d, "collname", pc_cstr(co[i].name, 0));
        set_named(b, d, "collnamespace", pc_int(NSP_CATALOG, 0));
        set_named(b, d, "collowner", pc_int(OWNER_OID, 0));
        set_named(b, d, "collprovider", pc_cstr(co[i].prov, 0));
        set_named(b, d, "collisdeterministic", pc_bool(1));
        set_named(b, d, "collencoding", pc_int(i ? -1 : -1, 0));
        if (rb_add(b) != 0)
            return -1;
    }
    return 0;
}

static int build_tablespace(rowb *b)
{
    static const struct {
        uint32_t oid;
        const char *name;
    } ts[] = {{1663, "pg_default"}, {1664, "pg_global"}};
    for (size_t i = 0; i < 2; i++) {
        rb_clear(b);
        rb_int(b, 0, ts[i].oid);
        rb_str(b, 1, ts[i].name);
        rb_int(b, 2, OWNER_OID);
        if (rb_add(b) != 0)
            return -1;
    }
    return 0;
}

static int build_settings(rowb *b)
{
    static const char *const names[] = {"application_name",
                                        "client_encoding",
                                        "DateStyle",
                                        "integer_datetimes",
                                        "IntervalStyle",
                                        "search_path",
                                        "server_encoding",
                                        "server_version",
                                        "server_version_num",
                                        "standard_conforming_strings",
                                        "statement_timeout",
                                        "TimeZone",
                                        "max_identifier_length",
                                        "transaction_isolation",
                                        "default_transaction_read_only"};
    pcx *x = b->x;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char val[256];
        qr_err e2;
        if (!x->env->setting || x->env->setting(x->env->ctx, names[i], val, sizeof val, &e2) != 0)
            continue;
        rb_clear(b);
        rb_str(b, 0, names[i]);
        b->v[1] = pc_str(x, val, strlen(val), PT_TEXT);
        rb_str(b, 3, "Quarry");
        rb_str(b, 5, "string");
        rb_str(b, 6, "default");
        if (rb_add(b) != 0)
            return -1;
    }
    return 0;
}

static int build_is_schemata(rowb *b)
{
    static const char *const ns[] = {"information_schema", "pg_catalog", "public"};
    for (size_t i = 0; i < 3; i++) {
        rb_clear(b);
        rb_str(b, 0, b->x->env->database);
        rb_str(b, 1, ns[i]);
        rb_str(b, 2, i == 2 ? "pg_database_owner" : b->x->env->user);
        if (rb_add(b) != 0)
            return -1;
    }
    return 0;
}

static int build_is_tables(rowb *b)
{
    pcx *x = b->x;
    for (uint32_t t = 0; t < x->env->cat->ntables; t++) {
        rb_clear(b);
        rb_str(b, 0, x->env->database);
        rb_str(b, 1, "public");
        rb_str(b, 2, x->env->cat->tables[t]->name);
        rb_str(b, 3, "BASE TABLE");
        rb_str(b, 9, "YES");
        rb_str(b, 10, "NO");
        if (rb_add(b) != 0)
            return -1;
    }
    for (int r = 0; r < R_NDEFS; r++) {
        rb_clear(b);
        rb_str(b, 0, x->env->database);
        rb_str(b, 1, defs[r].schema);
        rb_str(b, 2, defs[r].name);
        rb_str(b, 3, defs[r].oid >= 12000 ? "VIEW" : "BASE TABLE");
        rb_str(b, 9, "NO");
        rb_str(b, 10, "NO");
        if (rb_add(b) != 0)
            return -1;
    }
    return 0;
}

static void is_column(rowb *b, const char *schema, const char *table, const char *col, int num,
                      uint32_t type, int nullable)
{
    pcx *x = b->x;
    const pctype *ty = pc_type_by_oid(type);
    rb_clear(b);
    rb_str(b, 0, x->env->database);
    rb_str(b, 1, schema);
    rb_str(b, 2, table);
    rb_str(b, 3, col);
    rb_int(b, 4, num);
    rb_str(b, 6, nullable ? "YES" : "NO");
    rb_str(b, 7, pc_array_elem(type) ? "ARRAY" : ty ? ty->fmt : "text");
    switch (type) {
    case PT_INT2:
        rb_int(b, 10, 16), rb_int(b, 11, 2), rb_int(b, 12, 0);
        break;
    case PT_INT4:
        rb_int(b, 10, 32), rb_int(b, 11, 2), rb_int(b, 12, 0);
        break;
    case PT_INT8:
        rb_int(b, 10, 64), rb_int(b, 11, 2), rb_int(b, 12, 0);
        break;
    case PT_FLOAT8:
        rb_int(b, 10, 53), rb_int(b, 11, 2);
        break;
    case PT_NUMERIC:
        rb_int(b, 11, 10);
        break;
    case PT_TIMESTAMPTZ:
        rb_int(b, 13, 6);
        break;
    case PT_TEXT:
        rb_int(b, 9, 1073741824);
        break;
    default:
        break;
    }
    rb_str(b, 16, x->env->database);
    rb_str(b, 17, "pg_catalog");
    rb_str(b, 18, ty ? ty->name : "text");
    char id[16];
    snprintf(id, sizeof id, "%d", num);
    b->v[19] = pc_str(x, id, strlen(id), PT_NAME);
    rb_str(b, 20, "NO");
    rb_str(b, 21, "NEVER");
    rb_str(b, 22, strcmp(schema, "public") ? "NO" : "YES");
}

static int build_is_columns(rowb *b)
{
    pcx *x = b->x;
    for (uint32_t t = 0; t < x->env->cat->ntables; t++) {
        const qr_tabdef *d = x->env->cat->tables[t];
        for (uint32_t c = 0; c < d->ncols; c++) {
            is_column(b, "public", d->name, d->cols[c].name, (int)c + 1,
                      pc_type_of_qr(d->cols[c].type), d->cols[c].nullable);
            if (rb_add(b) != 0)
                return -1;
        }
    }
    for (int r = 0; r < R_NDEFS; r++)
        for (uint32_t c = 0; c < defs[r].ncols; c++) {
            is_column(b, defs[r].schema, defs[r].name, defs[r].cols[c].name, (int)c + 1,
                      defs[r].cols[c].type, 1);
            if (rb_add(b) != 0)
                return -1;
        }
    return 0;
}

const pcrel *pc_rel_get(pcx *x, int d)
{
    if (d < 0 || d >= R_NDEFS)
        return NULL;
    if (x->rels[d])
        return x->rels[d];
    pcrel *r = qr_arena_alloc(x->a, sizeof *r);
    if (!r) {
        pc_nomem(x);
        return NULL;
    }
    *r = (pcrel){
        .name = defs[d].name, .oid = defs[d].oid, .ncols = defs[d].ncols, .cols = defs[d].cols};
    rowb *b = qr_arena_alloc(x->a, sizeof *b);
    if (!b) {
        pc_nomem(x);
        return NULL;
    }
    b->x = x;
    b->r = r;
    int rc = 0;
    switch (d) {
    case R_NAMESPACE:
        rc = build_namespace(b);
        break;
    case R_CLASS:
        rc = build_class(b);
        break;
    case R_ATTRIBUTE:
        rc = build_attribute(b);
        break;
    case R_TYPE:
        rc = build_type(b);
        break;
    case R_DATABASE:
        rc = build_database(b);
        break;
    case R_ROLES:
    case R_AUTHID:
        rc = build_roles(b, &defs[d]);
        break;
    case R_USER:
        rc = build_user(b);
        break;
    case R_AM:
        rc = build_am(b);
        break;
    case R_INDEX:
        rc = build_index(b);
        break;
    case R_COLLATION:
        rc = build_collation(b);
        break;
    case R_TABLESPACE:
        rc = build_tablespace(b);
        break;
    case R_SETTINGS:
        rc = build_settings(b);
        break;
    case R_IS_SCHEMATA:
        rc = build_is_schemata(b);
        break;
    case R_IS_TABLES:
        rc = build_is_tables(b);
        break;
    case R_IS_COLUMNS:
        rc = build_is_columns(b);
        break;
    default: /* Quarry has none of these: empty, with their columns */
        break;
    }
    if (rc != 0)
        return NULL;
    x->rels[d] = r;
    return r;
}
