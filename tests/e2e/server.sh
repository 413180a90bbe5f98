#!/usr/bin/env bash
# End-to-end tests of `quarry serve` ($QUARRY) with real clients: psql
# (exact output, compared with `quarry sql`), psycopg2 with parameters,
# COPY in and out through psql, psycopg2, pgjdbc (the rows round-trip
# byte for byte), cancels (psycopg2, JDBC), SCRAM users made by `quarry
# passwd` and by CREATE USER over psql, the refusal of a non-loopback listen
# without authentication, TLS with a self-signed certificate, SIGTERM. Servers listen on 127.0.0.1 only, on a
# port the kernel picks (--port-file), and are killed at exit even on
# failure. QUARRY_SMALL=1: fewer rows (sanitizer build); the sanitizer's
# reports (leaks included) fail the run. Prints "e2e-server: N passed, M failed".
set -uo pipefail
Q=${QUARRY:?set QUARRY to the quarry binary}
Q=$(cd "$(dirname "$Q")" && pwd)/$(basename "$Q")
ROWS=20000
[ "${QUARRY_SMALL:-0}" = 1 ] && ROWS=5000
T=$(mktemp -d "${TMPDIR:-/tmp}/quarry-e2e-server-XXXXXX")
pids=()
PY=/usr/bin/python3
cleanup() {
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT
pass=0; fail=0; tag=$(basename "$(dirname "$Q")")
ok()   { pass=$((pass + 1)); echo "ok   e2e-server[$tag] $1"; }
bad()  { fail=$((fail + 1)); echo "FAIL e2e-server[$tag] $1"; [ -n "${2:-}" ] && sed 's/^/     /' "$2" | head -20; }
check() { # name, then a command that must succeed
    local name=$1; shift
    if "$@" >"$T/out" 2>&1; then ok "$name"; else bad "$name" "$T/out"; fi
}
same() { # name, expected file, actual file
    if cmp -s "$2" "$3"; then ok "$1"; else diff "$2" "$3" > "$T/diff"; bad "$1" "$T/diff"; fi
}

# serve NAME ARGS...: start a server in the background, wait for its port
serve() {
    local name=$1; shift
    rm -f "$T/$name.port"
    "$Q" serve --data "$T/d" --listen 127.0.0.1:0 --port-file "$T/$name.port" "$@" \
        >"$T/$name.log" 2>&1 &
    local pid=$!
    pids+=("$pid")
    eval "${name}_pid=$pid"
    for _ in $(seq 1 100); do
        [ -s "$T/$name.port" ] && break
        sleep 0.1
    done
    eval "${name}_port=$(cat "$T/$name.port" 2>/dev/null || echo 0)"
}
# stop NAME: SIGTERM, and its exit status (bounded: 20 s)
stop() {
    local pid; eval "pid=\$${1}_pid"
    kill -TERM "$pid"
    for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    wait "$pid"
}

"$Q" gen --rows $ROWS --seed 11 | "$Q" ingest --data "$T/d" --table logs --quiet --segment-rows $((ROWS / 4)) -
SQL() { "$Q" sql --data "$T/d" --format csv "$1"; }
# a statement of some seconds (64 arms, each a GROUP BY over every row): for cancels
LONG=$($PY -c "print(' UNION ALL '.join('(SELECT Body, SpanId, TraceId, count(*) + %d FROM logs GROUP BY 1, 2, 3 ORDER BY 4 DESC LIMIT 1)' % i for i in range(64)))")

serve main
check "serve prints where it listens" grep -q "listening on 127.0.0.1:$main_port (auth trust" "$T/main.log"
# once listening it opens the table's 4 segments and their 6 index fields each
warmed() { for _ in $(seq 1 100); do grep -q "$1" "$2" && return 0; sleep 0.1; done; return 1; }
check "serve opens every segment and index field in the background" \
    warmed "opened 4 segments and 24 index fields in [0-9]* ms$" "$T/main.log"
P() { timeout 30 psql -X -h 127.0.0.1 -p "$main_port" -U quarry -d quarry "$@"; }

# --- psql: exact output ---------------------------------------------------------
P -A -t -c 'SELECT count(*) FROM logs' > "$T/c1"
echo $ROWS > "$T/c1.want"
same "psql: count(*)" "$T/c1.want" "$T/c1"
for q in "SELECT count(*) FROM logs WHERE Body @@ 'failed'" \
         "SELECT ServiceName, count(*) FROM logs GROUP BY ServiceName ORDER BY 2 DESC" \
         "SELECT Body, bm25() FROM logs WHERE Body @@ ts_any(['failed', 'cache']) ORDER BY bm25() DESC LIMIT 10" \
         "SELECT ServiceName, SeverityText, count(*), avg(SeverityNumber) FROM logs WHERE SeverityNumber >= 9 GROUP BY 1, 2 ORDER BY 3 DESC"; do
    SQL "$q" > "$T/q.want"
    P --csv -c "$q" > "$T/q.got"
    same "psql --csv = quarry sql --format csv: ${q:0:60}" "$T/q.want" "$T/q.got"
done
cat > "$T/table.want" <<'OUT'
 ServiceName | count 
-------------+-------
 cart        |  1234
(1 row)

OUT
cart=$(SQL "SELECT count(*) FROM logs WHERE ServiceName = 'cart'" | tail -1)
sed -i "s/ 1234/$(printf '%5s' "$cart")/" "$T/table.want"
P -c "SELECT ServiceName, count(*) FROM logs WHERE ServiceName = 'cart' GROUP BY 1" > "$T/table.got"
same "psql: aligned table" "$T/table.want" "$T/table.got"
P -A -t -c "SELECT count(*) FROM logs; SELECT count(*) FROM logs WHERE ServiceName = 'cart'" > "$T/two"
printf '%s\n%s\n' $ROWS "$cart" > "$T/two.want"
same "psql: two statements in one query, two results" "$T/two.want" "$T/two"
P -A -t -c "SELECT Timestamp FROM logs ORDER BY Timestamp DESC LIMIT 1" > "$T/ts"
check "psql: timestamptz text form" grep -Eq '^2025-09-23 [0-9:]{8}(\.[0-9]{1,6})?\+00$' "$T/ts"
P -c 'SELECT bdy FROM logs' > /dev/null 2>"$T/err"; rc=$?
check "psql: an error exits 1" test $rc -eq 1
check "psql: the error's message" grep -qx 'ERROR:  column "bdy" does not exist' "$T/err"
check "psql: the error's position (caret under bdy)" grep -qx '               ^' "$T/err"
P -A -t -c 'SELECT bdy FROM logs' -c 'SELECT count(*) FROM logs' > "$T/after" 2>/dev/null
echo $ROWS > "$T/after.want"
same "psql: the session goes on after an error" "$T/after.want" "$T/after"
P -A -t -c 'EXPLAIN SELECT count(*) FROM logs WHERE Body @@ '"'failed'" > "$T/expl"
check "psql: EXPLAIN" grep -q 'row count only' "$T/expl"

# --- the catalog answers: psql's meta-commands, exact output -------------------
# (expected/ holds what quarry answers; PostgreSQL 15 answers the same for an
# equivalent table, but for the indexes and the one database)
EXP="$(dirname "$0")/expected"
for m in dt d 'd logs' 'd+ logs' di l dn du; do
    f=$(echo "$m" | tr ' +' '_p')
    P -c "\\$m" > "$T/meta.$f" 2>&1
    same "psql \\$m" "$EXP/psql_$f.out" "$T/meta.$f"
done
P -c '\dt+' > "$T/dtp" 2>&1
check "psql \\dt+: the table's size" grep -Eq '^ public \| logs \| table \| quarry \| permanent   \| heap          \| [0-9]+ (kB|MB) \| $' "$T/dtp"
timeout 30 psql -X -h 127.0.0.1 -p "$main_port" -U quarry -d quarry -c '\d nope' > "$T/dnope" 2>&1
check "psql \\d of an unknown table" grep -qx 'Did not find any relation named "nope".' "$T/dnope"
P -A -t -c "SELECT version(); SELECT current_database(), current_schema(), current_user" > "$T/ver"
printf 'PostgreSQL 15.0 (Quarry) on x86_64-pc-linux-gnu, 64-bit\nquarry|public|quarry\n' > "$T/ver.want"
same "SELECT version(), current_database() ..." "$T/ver.want" "$T/ver"

# --- Grafana's PostgreSQL data source: table and column lists, time series ------
for g in tables columns; do
    P -f "$(dirname "$0")/grafana_$g.sql" > "$T/graf.$g" 2>&1
    same "Grafana's $g list query" "$EXP/grafana_$g.out" "$T/graf.$g"
done
# $__timeFilter("Timestamp") and $__timeGroupAlias("Timestamp", 1ms) as Grafana
# expands them (the rows span a few ms); the buckets must add up to the count
TF="\"Timestamp\" BETWEEN '2025-09-23T00:00:00.001Z' AND '2025-09-23T00:00:00.020Z'"
P -A -t -F ' ' -c "SELECT floor(extract(epoch from \"Timestamp\")/0.001)*0.001 AS \"time\", count(*) AS n FROM logs WHERE $TF GROUP BY 1 ORDER BY 1" > "$T/tga" 2>&1
P -A -t -F ' ' -c "SELECT date_trunc('millisecond', \"Timestamp\") AS \"time\", count(*) FROM logs WHERE $TF GROUP BY 1 ORDER BY 1" > "$T/dtr" 2>&1
want_tf=$(SQL "SELECT count(*) FROM logs WHERE $TF" | tail -1)
check "Grafana \$__timeFilter matches rows" test "$want_tf" -gt 0
check "Grafana \$__timeGroupAlias buckets add up to the \$__timeFilter count ($want_tf)" \
    test "$(awk '{s += $2} END {print s}' "$T/tga")" = "$want_tf"
check "Grafana \$__timeGroupAlias buckets are whole ms, ascending" \
    awk 'NR > 1 && $1 <= p {exit 1} {p = $1} END {exit NR < 2}' "$T/tga"
check "date_trunc time series adds up to the same count" \
    test "$(awk '{s += $NF} END {print s}' "$T/dtr")" = "$want_tf"
check "date_trunc and \$__timeGroupAlias give as many buckets" \
    test "$(wc -l < "$T/dtr")" = "$(wc -l < "$T/tga")"

# --- psql: COPY in and out (\copy, and COPY ... FROM STDIN / TO STDOUT) -----------
COLS="Timestamp, ServiceName, Body, SeverityNumber, LogAttributes"
DEF="(ts timestamp, svc text, body text, sev integer, attrs map)"
P -c "\\copy (SELECT $COLS FROM logs ORDER BY 1, 2, 3, 4) TO '$T/copy1.txt'" > "$T/cp0" 2>&1
check "psql: \\copy (SELECT ...) TO a file: COPY n" grep -qx "COPY $ROWS" "$T/cp0"
P -c "CREATE TABLE cp $DEF" > /dev/null
P -c "\\copy cp FROM '$T/copy1.txt'" > "$T/cp1" 2>&1
check "psql: \\copy t FROM a file" grep -qx "COPY $ROWS" "$T/cp1"
P -c "COPY (SELECT * FROM cp ORDER BY 1, 2, 3, 4) TO STDOUT" > "$T/copy2.txt"
same "psql: COPY TO STDOUT gives back what \\copy FROM took (text format, byte for byte)" "$T/copy1.txt" "$T/copy2.txt"
P -c "COPY (SELECT * FROM cp ORDER BY 1, 2, 3, 4) TO STDOUT (FORMAT csv, HEADER)" > "$T/copy1.csv"
P -c "CREATE TABLE cp2 $DEF" > /dev/null
P -c "COPY cp2 FROM STDIN (FORMAT csv, HEADER); SELECT count(*) FROM cp2" -A -t < "$T/copy1.csv" > "$T/cp2" 2>&1
printf 'COPY %s\n%s\n' $ROWS $ROWS > "$T/cp2.want"
check "psql: COPY FROM STDIN (csv) from a file, then the statement after it" cmp -s "$T/cp2" "$T/cp2.want"
P -c "COPY (SELECT * FROM cp2 ORDER BY 1, 2, 3, 4) TO STDOUT (FORMAT csv, HEADER)" > "$T/copy2.csv"
same "psql: csv out = csv in" "$T/copy1.csv" "$T/copy2.csv"
printf '2025-01-01 00:00:00\tsvc\tbody\t7\t{}\n2025-01-01 00:00:01\tsvc\tbody\tseven\t{}\n' > "$T/bad.txt"
P -c "\\copy cp FROM '$T/bad.txt'" > /dev/null 2> "$T/cp3"
check "psql: bad data names its line and column" grep -q 'ERROR:  STDIN:2: column "sev": invalid input syntax' "$T/cp3"
P -A -t -c "SELECT count(*) FROM cp" > "$T/cp4"
echo $ROWS > "$T/cp4.want"
same "psql: ... and adds no row" "$T/cp4.want" "$T/cp4"

# --- psql: DELETE (deletion bitmaps) on the copy -------------------------------------
want_del=$(P -A -t -c "SELECT count(*) FROM cp2 WHERE svc = 'cart' AND body LIKE '%failed%'")
want_left=$(( $(P -A -t -c "SELECT count(*) FROM cp2") - want_del ))
P -c "DELETE FROM cp2 WHERE svc = 'cart' AND body LIKE '%failed%'" > "$T/del1" 2>&1
check "psql: DELETE tags the rows it removed ($want_del, a residual filter)" grep -qx "DELETE $want_del" "$T/del1"
P -A -t -c "SELECT count(*) FROM cp2" > "$T/del2"
echo "$want_left" > "$T/del2.want"
same "psql: ... and the next query no longer sees them" "$T/del2.want" "$T/del2"
P -A -t -c "SELECT count(*) FROM cp2 WHERE svc = 'cart' AND body LIKE '%failed%'" > "$T/del3"
echo 0 > "$T/del3.want"
same "psql: ... nor by the filter" "$T/del3.want" "$T/del3"
P -c "DELETE FROM cp2 WHERE nosuch = 1" > /dev/null 2> "$T/del4"
check "psql: DELETE of an unknown column: its error" grep -qx 'ERROR:  column "nosuch" does not exist' "$T/del4"

# --- psql: CREATE INDEX on a table that holds rows, built in the background -------
# cp has 4 segments (rows copied in 4 parts); the oracle: its bodies' words
for part in 0 1 2 3; do
    awk -v p=$part 'NR % 4 == p' "$T/copy1.txt" > "$T/part$part.txt"
    P -c "\\copy cp FROM '$T/part$part.txt'" > /dev/null
done
want_ft=$($PY -c "
import re, sys
n = 0
for line in open(sys.argv[1], encoding='utf-8'):
    body = line.rstrip('\n').split('\t')[2]
    words = set(w.lower() for w in re.split(r'[^0-9A-Za-z]+', body) if w)
    n += 'failed' in words and 'cache' not in words
print(2 * n)" "$T/copy1.txt")
want_svc=$(P -A -t -c "SELECT count(*) FROM cp WHERE svc = 'checkout'")
P -c "CREATE INDEX ON cp USING inverted (body)" > "$T/ix1" 2>&1
check "psql: CREATE INDEX on a populated table returns" grep -qx "CREATE INDEX" "$T/ix1"
ix_wrong=0; ix_valid=
for _ in $(seq 1 300); do
    got=$(P -A -t -c "SELECT count(*) FROM cp WHERE svc = 'checkout'" 2>&1)
    [ "$got" = "$want_svc" ] || { ix_wrong=$((ix_wrong + 1)); echo "svc = 'checkout': $got" > "$T/ix2.bad"; }
    ix_valid=$(P -A -t -c "SELECT indisvalid FROM pg_index WHERE indrelid = 'cp'::regclass")
    [ "$ix_valid" = t ] && break
    # refused while building; or right, when it became valid just now
    P -A -t -c "SELECT count(*) FROM cp WHERE body @@ 'failed' AND NOT body @@ 'cache'" > "$T/ix2" 2>&1
    grep -q 'ERROR:  the full-text index on column "body" is being built' "$T/ix2" ||
        [ "$(cat "$T/ix2")" = "$want_ft" ] || { ix_wrong=$((ix_wrong + 1)); cp "$T/ix2" "$T/ix2.bad"; }
    sleep 0.1
done
check "psql: queries during the build answer as before (@@: 55000 until it is built)" sh -c "test $ix_wrong = 0 || { cat '$T/ix2.bad'; exit 1; }"
check "psql: ... and the index becomes valid (pg_index.indisvalid)" test "$ix_valid" = t
P -A -t -c "SELECT count(*) FROM cp WHERE body @@ 'failed' AND NOT body @@ 'cache'" > "$T/ix3" 2>&1
echo "$want_ft" > "$T/ix3.want"
same "psql: @@ by the new index = brute force over the rows" "$T/ix3.want" "$T/ix3"

# --- psycopg2: parameters ---------------------------------------------------------
if $PY -c 'import psycopg2' 2>/dev/null; then
    want13=$(SQL "SELECT count(*) FROM logs WHERE ServiceName = 'payment' AND SeverityNumber >= 13" | tail -1)
    $PY - "$main_port" > "$T/py" 2>&1 <<'PYEOF'
import sys, psycopg2
c = psycopg2.connect(host="127.0.0.1", port=int(sys.argv[1]), user="quarry", dbname="quarry")
c.autocommit = True
cur = c.cursor()
cur.execute("SELECT count(*) FROM logs WHERE ServiceName = %s AND SeverityNumber >= %s", ("payment", 13))
print(cur.fetchone()[0])
cur.execute("SELECT count(*) FROM logs WHERE ServiceName = %s", ("'); DROP TABLE logs; --",))
print(cur.fetchone()[0])
try:
    cur.execute("SELECT nope FROM logs")
except psycopg2.Error as e:
    print(e.pgcode)
cur.execute("SELECT ServiceName, count(*) FROM logs GROUP BY 1 ORDER BY 2 DESC LIMIT 1")
print(cur.fetchone()[0], [d.name for d in cur.description])
cur.execute("SELECT Timestamp FROM logs ORDER BY Timestamp DESC LIMIT 1")
print(type(cur.fetchone()[0]).__name__)
cur.execute("SELECT typname, typarray FROM pg_catalog.pg_type WHERE oid = %s", (1184,))
print(cur.fetchone())
cur.execute("SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
            "WHERE c.relname = %s AND a.attnum = %s", ("logs", 7))
print(cur.fetchone()[0])
cur.execute("SELECT pg_backend_pid()")
print(cur.fetchone()[0] == c.get_backend_pid())
PYEOF
    printf '%s\n0\n42703\ncart [%s]\ndatetime\n%s\nServiceName\nTrue\n' "$want13" "'ServiceName', 'count'" \
        "('timestamptz', 1185)" > "$T/py.want"
    same "psycopg2: parameters, injection, error code, columns, timestamps, catalog lookups" "$T/py.want" "$T/py"
    # the driver's default: statements inside BEGIN ... COMMIT / ROLLBACK
    $PY - "$main_port" > "$T/pytx" 2>&1 <<'PYEOF'
import sys, psycopg2
c = psycopg2.connect(host="127.0.0.1", port=int(sys.argv[1]), user="quarry", dbname="quarry")
cur = c.cursor()
cur.execute("SELECT count(*) FROM logs WHERE ServiceName = %s AND SeverityNumber >= %s", ("payment", 13))
print(cur.fetchone()[0])
c.commit()
cur.execute("SET statement_timeout = '5s'")
cur.execute("SHOW statement_timeout")
print(cur.fetchone()[0])
c.rollback()
c.close()
PYEOF
    printf '%s\n5s\n' "$want13" > "$T/pytx.want"
    same "psycopg2: transactions (BEGIN, COMMIT, ROLLBACK) as the driver sends them" "$T/pytx.want" "$T/pytx"
    $PY - "$main_port" "$LONG" > "$T/pycopy" 2>&1 <<'PYEOF'
import io, sys, threading, psycopg2, psycopg2.extensions
c = psycopg2.connect(host="127.0.0.1", port=int(sys.argv[1]), user="quarry", dbname="quarry")
c.autocommit = True
cur = c.cursor()
first = io.StringIO()
cur.copy_expert("COPY (SELECT Timestamp, ServiceName, Body, SeverityNumber, LogAttributes FROM logs ORDER BY 1, 2, 3, 4) TO STDOUT", first)
cur.execute("CREATE TABLE pycopy (ts timestamp, svc text, body text, sev integer, attrs map)")
cur.copy_expert("COPY pycopy FROM STDIN", io.StringIO(first.getvalue()))
print(cur.rowcount)
second = io.StringIO()
cur.copy_expert("COPY (SELECT * FROM pycopy ORDER BY 1, 2, 3, 4) TO STDOUT", second)
print(first.getvalue() == second.getvalue(), len(first.getvalue()) > 0)
try:
    cur.copy_expert("COPY pycopy FROM STDIN", io.StringIO("2025-01-01 00:00:00\tx\ty\tnot a number\t{}\n"))
except psycopg2.Error as e:
    print(e.pgcode)
threading.Timer(0.3, c.cancel).start()
try:
    cur.execute(sys.argv[2])
    print("not canceled")
except psycopg2.extensions.QueryCanceledError as e:
    print(e.pgcode)
cur.execute("SELECT count(*) FROM pycopy")
print(cur.fetchone()[0])
PYEOF
    printf '%s\nTrue True\n22P02\n57014\n%s\n' $ROWS $ROWS > "$T/pycopy.want"
    same "psycopg2: copy_expert out, in, out again (the same text), bad data, conn.cancel()" "$T/pycopy.want" "$T/pycopy"
    # transaction blocks (psycopg2's default mode): rows at COMMIT only; a
    # block whose connection drops before COMMIT, retried, is stored once
    $PY - "$main_port" > "$T/pyblock" 2>&1 <<'PYEOF'
import io, os, socket, sys, psycopg2
def conn():
    return psycopg2.connect(host="127.0.0.1", port=int(sys.argv[1]), user="quarry", dbname="quarry")
def load(c):
    cur = c.cursor()
    cur.execute("INSERT INTO pyblock VALUES ('2025-01-01', 1), ('2025-01-02', 2)")
    cur.copy_expert("COPY pyblock FROM STDIN", io.StringIO("2025-01-03 00:00:00\t3\n2025-01-04 00:00:00\t4\n"))
    return cur
c = conn()
c.autocommit = True
c.cursor().execute("CREATE TABLE pyblock (ts timestamp, n integer)")
c.autocommit = False
load(c)
print(c.get_transaction_status())  # 2: in a transaction
s = socket.socket(fileno=os.dup(c.fileno()))
s.shutdown(socket.SHUT_RDWR)  # the connection drops before COMMIT
s.close()
c = conn()
cur = load(c)
c.commit()
cur.execute("SELECT count(*), sum(n) FROM pyblock")
print(cur.fetchone())
try:
    cur.execute("INSERT INTO pyblock VALUES ('2025-01-05', 'five')")
except psycopg2.Error as e:
    print(e.pgcode)
print(c.get_transaction_status())  # 3: in a failed transaction
try:
    cur.execute("SELECT 1")
except psycopg2.Error as e:
    print(e.pgcode)
c.rollback()
cur.execute("SELECT count(*), sum(n) FROM pyblock")
print(cur.fetchone())
c.rollback()
c.autocommit = True
c.cursor().execute("DROP TABLE pyblock")
c.close()
PYEOF
    printf '2\n(4, 10)\n22P02\n3\n25P02\n(4, 10)\n' > "$T/pyblock.want"
    same "psycopg2: transaction blocks: COMMIT, a dropped connection, an error, 25P02, ROLLBACK" "$T/pyblock.want" "$T/pyblock"
else
    bad "psycopg2 is installed (scripts/install-deps)"
fi

# --- node-pg (npm pg, installed by scripts/install-deps into build/npm) ---------
NODE_PG=$(cd "$(dirname "$0")/../.." && pwd)/build/npm/node_modules
if [ -f "$NODE_PG/pg/package.json" ] && command -v node >/dev/null; then
    want_cart=$(SQL "SELECT count(*) FROM logs WHERE ServiceName = 'cart'" | tail -1)
    NODE_PATH=$NODE_PG timeout 60 node - "$main_port" > "$T/node" 2>&1 <<'JSEOF'
const { Client } = require('pg');
(async () => {
  const c = new Client({ host: '127.0.0.1', port: Number(process.argv[2]), user: 'quarry', database: 'quarry' });
  await c.connect();
  let r = await c.query('SELECT count(*) AS n FROM logs WHERE ServiceName = $1', ['cart']);
  console.log(r.rows[0].n);
  r = await c.query({ text: 'SELECT ServiceName, count(*) AS n FROM logs WHERE SeverityNumber >= $1 GROUP BY 1 ORDER BY 2 DESC LIMIT 2', values: [9], name: 'top2' });
  console.log(r.rows.length, r.fields.map((f) => f.name).join(','));
  try { await c.query('SELECT nope FROM logs'); } catch (e) { console.log(e.code, e.position); }
  r = await c.query('SELECT Timestamp FROM logs ORDER BY Timestamp DESC LIMIT 1');
  console.log(r.rows[0].Timestamp instanceof Date);
  r = await c.query('SELECT typname, typlen FROM pg_catalog.pg_type WHERE oid = $1', [25]);
  console.log(r.rows[0].typname, r.rows[0].typlen);
  await c.end();
})().catch((e) => { console.log('error', e.message); process.exit(1); });
JSEOF
    printf '%s\n2 ServiceName,n\n42703 8\ntrue\ntext -1\n' "$want_cart" > "$T/node.want"
    same "node-pg: parameters, a named prepared statement, an error with its position, timestamps, a type lookup" "$T/node.want" "$T/node"
else
    bad "node-pg is installed (scripts/install-deps: node and npm install pg)"
fi

# --- JDBC (pgjdbc, Debian libpostgresql-jdbc-java; a single-file Java program) ------
JDBC_JAR=/usr/share/java/postgresql.jar
if [ -f "$JDBC_JAR" ] && command -v java >/dev/null; then
    want13=${want13:-$(SQL "SELECT count(*) FROM logs WHERE ServiceName = 'payment' AND SeverityNumber >= 13" | tail -1)}
    timeout 120 java -Duser.timezone=UTC -cp "$JDBC_JAR" "$(dirname "$0")/JdbcCheck.java" \
        "$main_port" "$LONG" > "$T/jdbc" 2>&1
    printf '%s\ncart n\n42703\ntrue\ncopy %s %s true\ncancel 57014\nafter %s\ntx 1 4\n' "$want13" $ROWS $ROWS $ROWS > "$T/jdbc.want"
    same "JDBC: prepared statement with parameters, GROUP BY names, an error, timestamps, CopyManager out/in/out, Statement.cancel(), autoCommit off with rollback and commit" "$T/jdbc.want" "$T/jdbc"
    # the metadata lists every table: the COPY tests' own go first
    P -c "DROP TABLE IF EXISTS cp, cp2, pycopy, jdbc_copy" > /dev/null
    timeout 120 java -Duser.timezone=UTC -cp "$JDBC_JAR" "$(dirname "$0")/JdbcMeta.java" \
        "$main_port" > "$T/jdbcmeta" 2>&1
    same "JDBC: DatabaseMetaData getTables, getColumns, getSchemas, getIndexInfo, getTypeInfo" \
        "$EXP/jdbc_meta.out" "$T/jdbcmeta"
else
    bad "pgjdbc and java are installed (scripts/install-deps)"
fi

# --- authentication -----------------------------------------------------------------
printf 's3cret\n' | "$Q" passwd alice > "$T/users"
check "passwd writes a SCRAM verifier line" grep -Eq '^alice:SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$' "$T/users"
serve auth --auth scram --users "$T/users"
PGPASSWORD=s3cret timeout 30 psql -X -A -t -h 127.0.0.1 -p "$auth_port" -U alice -d quarry -c 'SELECT count(*) FROM logs' > "$T/a1" 2>&1
echo $ROWS > "$T/a1.want"
same "scram: the right password connects" "$T/a1.want" "$T/a1"
PGPASSWORD=wrong timeout 30 psql -X -h 127.0.0.1 -p "$auth_port" -U alice -d quarry -c 'SELECT 1' > /dev/null 2>"$T/a2"; rc=$?
check "scram: a wrong password is refused" test $rc -eq 2
check "scram: ... with 28P01's message" grep -q 'password authentication failed for user "alice"' "$T/a2"
AP() { timeout 30 psql -X -A -t -h 127.0.0.1 -p "$auth_port" -d quarry "$@"; }
PGPASSWORD=s3cret AP -U alice -c "CREATE USER dave PASSWORD 'd4ve pw'" > "$T/u1" 2>&1
check "users: CREATE USER over psql (a superuser of the users file)" grep -qx "CREATE ROLE" "$T/u1"
PGPASSWORD='d4ve pw' AP -U dave -c 'SELECT count(*) FROM logs' -c 'SHOW is_superuser' > "$T/u2" 2>&1
printf '%s\noff\n' $ROWS > "$T/u2.want"
same "users: the new user logs in on the next connection (scram), not a superuser" "$T/u2.want" "$T/u2"
PGPASSWORD=wrong AP -U dave -c 'SELECT 1' > /dev/null 2>"$T/u3"; rc=$?
check "users: a wrong password is refused" test $rc -eq 2
check "users: ... with 28P01's message" grep -q 'password authentication failed for user "dave"' "$T/u3"
PGPASSWORD='d4ve pw' AP -U dave -c "CREATE USER eve PASSWORD 'x'" > /dev/null 2>"$T/u4"
check "users: a user that is not a superuser may not create one (42501)" grep -q 'permission denied to create role' "$T/u4"
check "users: USERS is 0600 and holds no password" sh -c "[ \$(stat -c %a '$T/d/USERS') = 600 ] && ! grep -q d4ve '$T/d/USERS'"
check "scram: SIGTERM exits 0" stop auth
serve auth2 --auth scram --no-warm
PGPASSWORD='d4ve pw' timeout 30 psql -X -A -t -h 127.0.0.1 -p "$auth2_port" -U dave -d quarry -c 'SELECT 1' > "$T/u5" 2>&1
check "users: --auth scram without a users file serves the data directory's users" grep -qx 1 "$T/u5"
check "users: SIGTERM exits 0" stop auth2
check "serve --no-warm opens nothing ahead of queries" sh -c "! grep -q 'opened [0-9]* segments' '$T/auth2.log'"
"$Q" sql --data "$T/d" -c 'DROP USER dave' > /dev/null
timeout 10 "$Q" serve --data "$T/d" --listen 0.0.0.0:0 > /dev/null 2>"$T/nl"; rc=$?
check "a non-loopback listen without auth is refused (exit 1)" test $rc -eq 1
check "... saying why" grep -q 'refusing to listen on 0.0.0.0 without authentication' "$T/nl"
timeout 10 "$Q" serve --data "$T/d" --listen 0.0.0.0:0 --auth scram > /dev/null 2>"$T/nl2"; rc=$?
check "scram without a users file is refused" grep -q 'needs a users file' "$T/nl2"

# --- usage ------------------------------------------------------------------------
"$Q" serve --data "$T/d" --listen 127.0.0.1:99999 >/dev/null 2>&1; rc=$?
check "usage: a port past 65535 is a usage error" test $rc -eq 2
"$Q" serve --data "$T/d" --auth md5 >/dev/null 2>&1; rc=$?
check "usage: an unknown --auth is a usage error" test $rc -eq 2
printf 'alice:md5abc\n' > "$T/badusers"
timeout 10 "$Q" serve --data "$T/d" --listen 127.0.0.1:0 --auth scram --users "$T/badusers" >/dev/null 2>"$T/bu"; rc=$?
check "usage: a malformed users file stops the server, naming the line" grep -q "badusers:1: user alice" "$T/bu"
printf '' | "$Q" passwd alice >/dev/null 2>&1; rc=$?
check "usage: passwd without a password fails" test $rc -eq 1

# --- TLS -----------------------------------------------------------------------------
if openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
        -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null; then
    serve tls --tls-cert "$T/cert.pem" --tls-key "$T/key.pem"
    check "tls: serve says it offers TLS" grep -q "TLS offered" "$T/tls.log"
    PGSSLMODE=require timeout 30 psql -X -h 127.0.0.1 -p "$tls_port" -U quarry -d quarry \
        -A -t -c 'SELECT count(*) FROM logs' -c '\conninfo' > "$T/t1" 2>&1
    check "tls: psql sslmode=require gets the answer" grep -qx "$ROWS" "$T/t1"
    check "tls: ... over TLS" grep -q "SSL connection (protocol: TLSv1.[23]" "$T/t1"
    PGSSLMODE=require timeout 30 psql -X -h 127.0.0.1 -p "$tls_port" -U quarry -d quarry --csv \
        -c "SELECT ServiceName, count(*) FROM logs GROUP BY ServiceName ORDER BY 2 DESC" > "$T/t2"
    SQL "SELECT ServiceName, count(*) FROM logs GROUP BY ServiceName ORDER BY 2 DESC" > "$T/t2.want"
    same "tls: GROUP BY = quarry sql" "$T/t2.want" "$T/t2"
    check "tls: SIGTERM exits 0" stop tls
    PGSSLMODE=require timeout 30 psql -X -h 127.0.0.1 -p "$main_port" -U quarry -d quarry -c 'SELECT 1' >/dev/null 2>"$T/t3"
    check "tls: without a certificate, sslmode=require is refused" grep -q "server does not support SSL" "$T/t3"
    timeout 10 "$Q" serve --data "$T/d" --listen 127.0.0.1:0 --tls-cert "$T/cert.pem" --tls-key "$T/cert.pem" >/dev/null 2>"$T/t4"
    check "tls: a bad key file is refused, named" grep -q "TLS: $T/cert.pem" "$T/t4"
else
    bad "openssl makes a certificate (scripts/install-deps)"
fi

# --- shutdown -----------------------------------------------------------------------
check "SIGTERM: exit status 0" stop main
check "SIGTERM: says it shut down" grep -q "quarry serve: shut down" "$T/main.log"
check "no sanitizer report" sh -c "! grep -E 'Sanitizer|runtime error' '$T/main.log' '$T/auth.log' '$T/auth2.log' '$T/tls.log'"

echo "e2e-server[$tag]: $pass passed, $fail failed"
mkdir -p "$(dirname "$0")/../../build/results"
echo "$pass $fail" >> "$(dirname "$0")/../../build/results/e2e-server-$tag"
[ $fail -eq 0 ]
