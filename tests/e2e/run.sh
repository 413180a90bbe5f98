#!/usr/bin/env bash
# End-to-end tests through the real quarry binary ($QUARRY): generate,
# ingest, read back, bad input, failed writes and a full disk, corruption,
# locking. QUARRY_SMALL=1 uses
# fewer rows (for the sanitizer build). Prints "e2e: N passed, M failed".
set -uo pipefail
Q=${QUARRY:?set QUARRY to the quarry binary}
Q=$(cd "$(dirname "$Q")" && pwd)/$(basename "$Q")
ROWS=100000
[ "${QUARRY_SMALL:-0}" = 1 ] && ROWS=30000
SEGROWS=$((ROWS / 5))
T=$(mktemp -d "${TMPDIR:-/tmp}/quarry-e2e-XXXXXX")
trap 'mountpoint -q "$T/full" 2>/dev/null && umount "$T/full"; rm -rf "$T"' EXIT
pass=0; fail=0; tag=$(basename "$(dirname "$Q")")

ok()   { pass=$((pass + 1)); echo "ok   e2e[$tag] $1"; }
bad()  { fail=$((fail + 1)); echo "FAIL e2e[$tag] $1"; [ -n "${2:-}" ] && sed 's/^/     /' "$2" | head -20; }
# lines of file $1 that file $2 does not have (a hash of the few lines of $1:
# `grep -f` with $2's 100k long lines as patterns needs gigabytes)
missing() { awk 'NR == FNR { want[$0] = 1; next } ($0 in want) { delete want[$0] }
                 END { for (k in want) print k }' "$1" "$2"; }
check() { # name, then a command that must succeed
    local name=$1; shift
    if "$@" >"$T/out" 2>&1; then ok "$name"; else bad "$name" "$T/out"; fi
}

# --- round trip across several segments -------------------------------------
"$Q" gen --rows $ROWS --seed 7 > "$T/gen.ndjson"
check "gen writes $ROWS lines" test "$(wc -l < "$T/gen.ndjson")" -eq $ROWS
"$Q" ingest --data "$T/d" --table logs --segment-rows $SEGROWS "$T/gen.ndjson" 2>"$T/ing.err"
rc=$?
check "ingest exits 0" test $rc -eq 0
check "ingest summary counts rows" grep -q "ingested $ROWS rows from $ROWS lines (0 bad, 0 blank) into 5 segments" "$T/ing.err"
check "five segment files" test "$(ls "$T/d/logs/"*.qseg | wc -l)" -eq 5
"$Q" cat --data "$T/d" --table logs > "$T/cat.ndjson"
check "cat equals the generated input byte for byte" cmp "$T/gen.ndjson" "$T/cat.ndjson"
"$Q" cat --data "$T/d" --table logs --limit 7 > "$T/cat7"
check "cat --limit 7" cmp "$T/cat7" <(head -n 7 "$T/gen.ndjson")
check "verify reads every block" "$Q" verify --data "$T/d" --table logs
"$Q" stats --data "$T/d" --table logs > "$T/stats"
check "stats reports rows and segments" grep -q "table logs: $ROWS rows in 5 segments" "$T/stats"
check "stats lists all 15 columns" test "$(sed -n '/^column/,/^footers/p' "$T/stats" | grep -cE '^(Timestamp|TraceId|SpanId|TraceFlags|SeverityText|SeverityNumber|ServiceName|Body|ResourceSchemaUrl|ResourceAttributes|ScopeSchemaUrl|ScopeName|ScopeVersion|ScopeAttributes|LogAttributes) ')" -eq 15
check "stats lists the 5 indexes" test "$(sed -n '/^index/,$p' "$T/stats" | grep -cE '^(Body|ServiceName|SeverityText|ScopeName|TraceId) ')" -eq 5

# stdin, one thread, appended to the same table: cat = both inputs in order
head -n 1000 "$T/gen.ndjson" | "$Q" ingest --data "$T/d" --table logs --threads 1 --quiet -
check "ingest from stdin appends" test "$("$Q" cat --data "$T/d" --table logs | wc -l)" -eq $((ROWS + 1000))
check "appended rows come last" cmp <("$Q" cat --data "$T/d" --table logs | tail -n 1000) <(head -n 1000 "$T/gen.ndjson")

# --- search ---------------------------------------------------------------------
cnt() { "$Q" search --data "$T/d" --table logs --count "$1"; }
check "search: failed matches something" test "$(cnt failed)" -gt 0
check "search: charg* equals charge" test "$(cnt 'charg*')" -eq "$(cnt charge)"
check "search: /c.che/ equals cache" test "$(cnt '/c.che/')" -eq "$(cnt cache)"
check "search: every place order is in failed to place order" \
    test "$(cnt '"place order"')" -eq "$(cnt '"failed to place order"')"
check "search: inclusion-exclusion for OR" \
    test "$(cnt 'error OR failed')" -eq $(( $(cnt error) + $(cnt failed) - $(cnt 'error failed') ))
check "search: NOT complements" \
    test $(( $(cnt cache) + $(cnt 'NOT cache') )) -eq $((ROWS + 1000))
"$Q" search --data "$T/d" --table logs --limit 100000000 'service:payment "charge card"~3' > "$T/found"
check "search: rows printed = count" test "$(wc -l < "$T/found")" -eq "$(cnt 'service:payment "charge card"~3')"
check "search: printed rows are stored rows" test -z "$(missing "$T/found" "$T/cat.ndjson")"
check "search: printed rows match the filter" test -z "$(grep -v '"ServiceName":"payment"' "$T/found" | head -1)"
"$Q" search --data "$T/d" --table logs --count '(failed' 2>"$T/q.err"; rc=$?
check "search: bad query exits 1" test $rc -eq 1
check "search: bad query names the byte" grep -q "query: expected ')' at byte 1" "$T/q.err"

# --- top-k ----------------------------------------------------------------------
S() { "$Q" search --data "$T/d" --table logs "$@"; }
ts() { sed 's/.*"Timestamp":"\([^"]*\)".*/\1/'; }
S --top 20 --by score 'failed OR cache' > "$T/top"
check "top: 20 rows by score" test "$(wc -l < "$T/top")" -eq 20
check "top: every row matches" test -z "$(grep -viE '(failed|cache)' "$T/top" | head -1)"
check "top: rows are stored rows" test -z "$(missing "$T/top" "$T/cat.ndjson")"
check "top: pruned equals exhaustive" cmp "$T/top" <(S --top 20 --exhaustive 'failed OR cache')
check "top: 1 thread equals 2" cmp "$T/top" <(S --top 20 --threads 1 'failed OR cache')
S --top 20 --explain 'failed OR cache' 2>"$T/topx" >/dev/null
check "top: --explain ranks 20 hits with scores" test "$(grep -c '^#[0-9]* score' "$T/topx")" -eq 20
check "top: --explain reports skipped blocks" grep -q 'postings blocks: [0-9]* of [0-9]* skipped' "$T/topx"
check "top: --explain prints the plan: how the OR was scored" grep -qE '^OR  \[scored (term at a time|from dense bitmaps|by block-max MaxScore) [0-9]+' "$T/topx"
check "top: --explain prints the plan: its words" grep -qE '^  failed  \[scored with block maxima [0-9]+\]' "$T/topx"
S --count --explain 'cahce~1 AND TraceFlags:>=1' 2>"$T/cntx" >/dev/null
check "count: --explain plan counts a fuzzy node's terms and the blocks they came from" grep -qE '^  cahce~1  \[.*; [0-9]+ terms from [0-9]+ dictionary blocks; <= [0-9]+ rows\]' "$T/cntx"
check "count: --explain plan shows a column scan's blocks" grep -qE '^  TraceFlags:.*column scan [0-9]+.*column blocks [0-9]+ read, [0-9]+ skipped by min/max' "$T/cntx"
S --limit 100000 'error' | ts | sort -r | head -n 15 > "$T/newest.want"
S --top 15 --by time 'error' | ts > "$T/newest.got"
check "top by time: the 15 newest timestamps" cmp "$T/newest.want" "$T/newest.got"
check "top by time: rows match" test -z "$(S --top 15 --by time error | grep -viw error | head -1)"
check "limit: first rows in table order" cmp <(S --limit 3 failed) <(S --limit 100000 failed | head -n 3)
check "limit: any number, streamed in batches" test "$(S --limit 99999999 'error OR failed' | wc -l)" -eq "$(cnt 'error OR failed')"
S --by time failed > /dev/null 2>&1; rc=$?
check "top: --by without --top is a usage error" test $rc -eq 2
S --top 100001 failed > /dev/null 2>"$T/topbig"; rc=$?
check "top: k above the limit is refused" test $rc -eq 2

# --- optimize: merging segments -------------------------------------------------
cp -r "$T/d" "$T/o"
"$Q" optimize --data "$T/o" --table logs --segment-rows $((SEGROWS * 2)) > "$T/opt" 2>&1; rc=$?
check "optimize exits 0" test $rc -eq 0
check "optimize reports before and after" grep -qE "^table logs: $((ROWS + 1000)) rows; 6 segments, [0-9]+ bytes .* -> $(( (ROWS + 1000 + SEGROWS * 2 - 1) / (SEGROWS * 2) )) segments" "$T/opt"
check "optimize: every row is still there" cmp <("$Q" cat --data "$T/d" --table logs | sort) <("$Q" cat --data "$T/o" --table logs | sort)
check "optimize: verify reads every block" "$Q" verify --data "$T/o" --table logs
for q in failed 'failed AND order' '"failed to place order"' 'cahce~1' 'service:payment'; do
    check "optimize: count of $q unchanged" test "$(cnt "$q")" -eq "$("$Q" search --data "$T/o" --table logs --count "$q")"
done
scores() { "$Q" search --data "$1" --table logs --top 50 --explain "$2" 2>&1 >/dev/null | sed -n 's/^#[0-9]* score \([0-9.]*\).*/\1/p'; }
check "optimize: the top 50 scores are the same" cmp <(scores "$T/d" 'failed OR cache') <(scores "$T/o" 'failed OR cache')
"$Q" optimize --data "$T/o" --table nosuch > /dev/null 2>"$T/opt.err"; rc=$?
check "optimize: an unknown table exits 1" test $rc -eq 1

# --- sql ------------------------------------------------------------------------
SQL() { "$Q" sql --data "$T/d" "$@"; }
sqlc() { SQL --format csv "SELECT count(*) FROM logs WHERE $1" | tail -1; }
check "sql: count = search --count (full text)" test "$(sqlc "Body @@ ts_phrase('failed') ## 2 ## 'order'")" -eq "$(cnt '"failed ? ? order"')"
check "sql: count = search --count (keywords, ranges)" test "$(sqlc "ServiceName IN ('cart','payment') AND SeverityNumber >= 13")" -eq "$(cnt '(service:cart OR service:payment) sevnum:>=13')"
check "sql: bare list literal = ARRAY" test "$(sqlc "Body @@ ts_any(['error','cache'], 2)")" -eq "$(sqlc "Body @@ ts_any(ARRAY['error','cache'], 2)")"
SQL --format csv "SELECT ServiceName, count(*) FROM logs GROUP BY ServiceName" | tail -n +2 > "$T/sqlgb"
check "sql: GROUP BY counts add up to the table" test "$(awk -F, '{s += $NF} END {print s}' "$T/sqlgb")" -eq "$(SQL --format csv "SELECT count(*) FROM logs" | tail -1)"
check "sql: GROUP BY cart = search service:cart" grep -qx "cart,$(cnt service:cart)" "$T/sqlgb"
SQL --format ndjson "SELECT Timestamp, ServiceName FROM logs WHERE Body @@ 'failed' ORDER BY Timestamp DESC LIMIT 5" > "$T/sqlnew"
S --top 5 --by time failed | sed 's/^{"Timestamp":\("[^"]*"\).*"ServiceName":\("[^"]*"\|null\).*/{"Timestamp":\1,"ServiceName":\2}/' > "$T/srchnew"
check "sql: newest 5 = search --top 5 --by time" cmp "$T/sqlnew" "$T/srchnew"
check "sql: residual LIKE count = keyword IN count" test "$(sqlc "Body @@ 'failed' AND ServiceName LIKE 'ca%'")" -eq "$(sqlc "Body @@ 'failed' AND ServiceName IN ('cart')")"
SQL --format csv "SELECT date_trunc('second', Timestamp) AS s, count(*) FROM logs GROUP BY 1 HAVING count(*) > 0 ORDER BY 1" | tail -n +2 > "$T/sqlsec"
check "sql: GROUP BY date_trunc adds up to the table" test "$(awk -F, '{s += $NF} END {print s}' "$T/sqlsec")" -eq "$(SQL --format csv "SELECT count(*) FROM logs" | tail -1)"
check "sql: SELECT without FROM" test "$(SQL --format csv "SELECT 1 + 2 * 3 AS x" | tail -1)" = 7
SQL --format csv "SELECT TraceId, count(*) FROM logs WHERE ServiceName = 'frontend' AND TraceId <> '' GROUP BY 1" | tail -n +2 | sort > "$T/tr_a"
SQL --format csv "SELECT TraceId, count(*) FROM logs WHERE ServiceName = 'checkout' AND TraceId <> '' GROUP BY 1" | tail -n +2 | sort > "$T/tr_b"
check "sql: trace join count = sum over traces of the two sides' counts" test "$(SQL --format csv "SELECT count(*) FROM logs a JOIN logs b USING (TraceId) WHERE a.ServiceName = 'frontend' AND b.ServiceName = 'checkout' AND a.TraceId <> ''" | tail -1)" -eq "$(join -t, "$T/tr_a" "$T/tr_b" | awk -F, '{s += $2 * $3} END {print s + 0}')"
SQL "SELECT bdy FROM logs" 2>"$T/sqlerr"; rc=$?
check "sql: unknown column exits 1" test $rc -eq 1
check "sql: unknown column names code and position" grep -q 'error 42703: column "bdy" does not exist at character 8' "$T/sqlerr"
FE="(SELECT TraceId FROM logs WHERE ServiceName = 'frontend' AND TraceId <> '') a"
CO="(SELECT TraceId FROM logs WHERE ServiceName = 'checkout' AND TraceId <> '') b"
n_full=$(SQL --format csv "SELECT count(*) FROM $FE FULL JOIN $CO ON a.TraceId = b.TraceId" | tail -1)
n_left=$(SQL --format csv "SELECT count(*) FROM $FE LEFT JOIN $CO ON a.TraceId = b.TraceId" | tail -1)
n_ronly=$(SQL --format csv "SELECT count(*) FROM $FE RIGHT JOIN $CO ON a.TraceId = b.TraceId WHERE a.TraceId IS NULL" | tail -1)
check "sql: FULL JOIN = LEFT JOIN + the RIGHT JOIN's unmatched rows ($n_full)" test "$n_full" -gt 0 -a "$n_full" -eq $((n_left + n_ronly))
SQL --format csv --timing --repeat 3 "SELECT count(*) FROM logs WHERE Body @@ 'failed'" > "$T/tim.out" 2> "$T/tim.err"
check "sql --timing: a Time line per run" test "$(grep -cE '^Time: [0-9]+\.[0-9]{3} ms$' "$T/tim.err")" -eq 3
check "sql --timing: the result printed once" test "$(cat "$T/tim.out")" = "$(printf 'count\n%s' "$(cnt failed)")"
check "sql: EXPLAIN says row count only" sh -c "\"$Q\" sql --data \"$T/d\" \"EXPLAIN SELECT count(*) FROM logs WHERE Body @@ 'failed'\" | grep -q 'row count only'"

# --- sql statements: several per call, -f, stdin, errors stop, COPY ------------
SS() { "$Q" sql --data "$T/s" "$@"; }
SS -c "CREATE TABLE t (ts timestamp NOT NULL, svc text, msg text, n bigint) WITH (sort_column = ts);
       CREATE INDEX ON t USING inverted (msg);
       INSERT INTO t VALUES ('2025-01-01 00:00:01', 'cart', 'failed; twice', 1), ('2025-01-01 00:00:02', 'pay', 'ok', 2);
       SELECT count(*) FROM t WHERE msg @@ 'failed'" > "$T/ss1" 2>&1
printf 'CREATE TABLE\nCREATE INDEX\nINSERT 0 2\n count\n------\n     1\n(1 row)\n' > "$T/ss1.want"
check "sql: several statements in one -c run in order, tags printed" cmp "$T/ss1" "$T/ss1.want"
printf -- "-- a comment; with a semicolon\nINSERT INTO t (ts, svc, msg) VALUES\n ('2025-01-01 00:00:03', 'cart', 'a;b');\nSELECT svc, count(*) FROM t GROUP BY svc ORDER BY svc;\n" > "$T/ss.sql"
SS --format csv -f "$T/ss.sql" > "$T/ss2" 2>&1
printf 'svc,count\ncart,2\npay,1\n' > "$T/ss2.want"
check "sql: -f runs a file (';' in comments and strings do not split)" cmp "$T/ss2" "$T/ss2.want"
printf "SELECT count(*)\n  FROM t;\nSHOW TABLES;\n" | SS --format csv > "$T/ss3" 2>&1
printf 'count\n3\nname\nt\n' > "$T/ss3.want"
check "sql: statements from stdin" cmp "$T/ss3" "$T/ss3.want"
SS -c "INSERT INTO t (ts) VALUES ('2025-01-01 00:00:04'); SELECT bdy FROM t; INSERT INTO t (ts) VALUES ('2025-01-01 00:00:05')" > "$T/ss4" 2>"$T/ss4.err"; rc=$?
check "sql: an error stops the run with status 1" test $rc -eq 1
check "sql: the error names code and position" grep -qx 'quarry: error 42703: column "bdy" does not exist at character 8' "$T/ss4.err"
check "sql: statements after the error did not run" test "$(SS --format csv -c 'SELECT count(*) FROM t' | tail -1)" -eq 4
printf "SELECT bdy FROM t;\nINSERT INTO t (ts) VALUES ('2025-01-01 00:00:05');\n" | SS > /dev/null 2>&1; rc=$?
check "sql: an error on stdin stops too" test $rc -eq 1 -a "$(SS --format csv -c 'SELECT count(*) FROM t' | tail -1)" -eq 4
SS --continue-on-error -c "SELECT bdy FROM t; INSERT INTO t (ts) VALUES ('2025-01-01 00:00:05')" > /dev/null 2>&1; rc=$?
check "sql: --continue-on-error runs the rest, still status 1" test $rc -eq 1 -a "$(SS --format csv -c 'SELECT count(*) FROM t' | tail -1)" -eq 5
printf 'ts,svc,msg,n\n2025-01-02 00:00:00,csv,"from, stdin",7\n2025-01-02 00:00:01,csv,second,8\n' | SS -c "COPY t FROM STDIN (FORMAT csv, HEADER)" > "$T/ss5" 2>&1
check "sql: COPY FROM STDIN reads stdin" grep -qx 'COPY 2' "$T/ss5"
SS -c "COPY (SELECT svc, msg, n FROM t WHERE svc = 'csv' ORDER BY n) TO STDOUT (FORMAT csv, HEADER)" > "$T/ss5b" 2>&1
printf 'svc,msg,n\ncsv,"from, stdin",7\ncsv,second,8\n' > "$T/ss5b.want"
check "sql: COPY TO STDOUT writes the lines to stdout" cmp -s "$T/ss5b.want" "$T/ss5b"
SS -c "COPY t TO '$T/t.ndjson' (FORMAT json); CREATE TABLE t2 (ts timestamp NOT NULL, svc text, msg text, n bigint) WITH (sort_column = ts); COPY t2 FROM '$T/t.ndjson' (FORMAT json)" > /dev/null 2>&1
check "sql: COPY TO then COPY FROM gives the same rows (quarry cat)" cmp <("$Q" cat --data "$T/s" --table t) <("$Q" cat --data "$T/s" --table t2)
# the OpenTelemetry table made in SQL equals the preset; COPY FROM json = ingest
cat > "$T/otel.sql" <<'EOF'
CREATE TABLE logs ("Timestamp" timestamp, "TraceId" text, "SpanId" text, "TraceFlags" uint8,
  "SeverityText" text, "SeverityNumber" integer, "ServiceName" text, "Body" text,
  "ResourceSchemaUrl" text, "ResourceAttributes" map, "ScopeSchemaUrl" text, "ScopeName" text,
  "ScopeVersion" text, "ScopeAttributes" map, "LogAttributes" map) WITH (sort_column = "Timestamp");
CREATE INDEX body ON logs USING inverted ("Body");
CREATE INDEX service ON logs USING keyword ("ServiceName");
CREATE INDEX severity ON logs USING keyword ("SeverityText");
CREATE INDEX scope ON logs USING keyword ("ScopeName");
CREATE INDEX trace ON logs USING keyword ("TraceId");
CREATE INDEX sevnum ON logs USING range ("SeverityNumber");
EOF
SS -f "$T/otel.sql" > /dev/null 2>&1
check "sql: CREATE TABLE + CREATE INDEX give the OpenTelemetry table" cmp <("$Q" describe --data "$T/s" --table logs) <("$Q" describe --data "$T/d" --table logs)
SS -c "COPY logs FROM '$T/gen.ndjson' (FORMAT json)" > "$T/ss6" 2>&1
check "sql: COPY FROM json loads every row" grep -qx "COPY $ROWS" "$T/ss6"
check "sql: COPY FROM json = ingest (cat byte for byte)" cmp <("$Q" cat --data "$T/s" --table logs) "$T/gen.ndjson"
SS -c "DROP TABLE logs; SHOW TABLES" > "$T/ss7" 2>&1
check "sql: DROP TABLE removes the table and its files" sh -c "grep -qx ' t2  *' '$T/ss7' && ! grep -q logs '$T/ss7' && test ! -e '$T/s/logs'"

# --- bad input ----------------------------------------------------------------
{
    head -n 3 "$T/gen.ndjson"
    echo '{"Body": "unterminated'
    echo '{"TraceFlags": "one"}'
    echo ''
    echo '{"Nope": 1}'
    sed -n 4p "$T/gen.ndjson"
    printf '{"Body":"no newline at end"}'
} > "$T/mixed.ndjson"
"$Q" ingest --data "$T/d" --table mixed "$T/mixed.ndjson" 2>"$T/mixed.err"
rc=$?
check "bad lines: exit status 3" test $rc -eq 3
check "bad lines: reported with file:line" grep -q "mixed.ndjson:4: byte 10: unterminated string" "$T/mixed.err"
check "bad lines: wrong type named" grep -q "mixed.ndjson:5: byte 16: column TraceFlags: expected an integer, got string" "$T/mixed.err"
check "bad lines: unknown column named" grep -q 'mixed.ndjson:7: byte 2: unknown column "Nope"' "$T/mixed.err"
check "bad lines: summary" grep -q "ingested 5 rows from 9 lines (3 bad, 1 blank)" "$T/mixed.err"
check "bad lines: good rows kept" test "$("$Q" cat --data "$T/d" --table mixed | wc -l)" -eq 5
check "last line without newline kept" grep -q '"Body":"no newline at end"' <("$Q" cat --data "$T/d" --table mixed)

# strict: aborts, nothing committed, no files left
before=$(ls "$T/d/logs" | sort | md5sum)
"$Q" ingest --data "$T/d" --table logs --strict --segment-rows 2 "$T/mixed.ndjson" 2>"$T/strict.err"
rc=$?
check "strict: exit status 1" test $rc -eq 1
check "strict: names the first bad line" grep -q "mixed.ndjson:4: byte 10: unterminated string" "$T/strict.err"
check "strict: table unchanged" test "$(ls "$T/d/logs" | sort | md5sum)" = "$before"
check "strict: row count unchanged" test "$("$Q" cat --data "$T/d" --table logs | wc -l)" -eq $((ROWS + 1000))

# --- failed writes: the Nth file operation fails, for every N ----------------
# QUARRY_FAULT=KIND:N:ERRNO (util/fsutil.h) fails the Nth create, write, fsync,
# link or rename of the ingest: each must exit 1 naming the file and the
# cause, commit nothing and leave no file; the first N that the whole ingest
# does not reach lets it succeed.
head -n 300 "$T/gen.ndjson" > "$T/f1.ndjson"
sed -n '301,1300p' "$T/gen.ndjson" > "$T/f2.ndjson"
"$Q" ingest --data "$T/d" --table faults --quiet "$T/f1.ndjson"
ls "$T/d/faults" > "$T/faults.ls"
n=0; fault_bad=0; : > "$T/fault.ops"
while [ $n -lt 200 ]; do
    n=$((n + 1)); err=ENOSPC; cause="No space left on device"; code=53100
    [ $((n % 3)) -eq 0 ] && { err=EIO; cause="Input/output error"; code=58030; }
    QUARRY_FAULT=any:$n:$err "$Q" ingest --data "$T/d" --table faults --quiet --segment-rows 200 \
        "$T/f2.ndjson" 2>"$T/fault.err"
    rc=$?
    [ $rc -eq 0 ] && break
    line=$(head -n 1 "$T/fault.err")
    case "$line" in
    "quarry: error $code: "*" $T/d/faults"*": $cause") ;;
    *) fault_bad=$((fault_bad + 1)); echo "     fault $n: unexpected message: $line" ;;
    esac
    echo "$line" | sed 's/^quarry: error \(53100\|58030\): \(fsync directory\|[a-z]*\) .*/\2/' >> "$T/fault.ops"
    if [ $rc -ne 1 ] || ! cmp -s <(ls "$T/d/faults") "$T/faults.ls" ||
       ! cmp -s <("$Q" cat --data "$T/d" --table faults) "$T/f1.ndjson"; then
        fault_bad=$((fault_bad + 1)); echo "     fault $n: exit $rc, files: $(ls "$T/d/faults" | tr '\n' ' ')"
    fi
done
check "failed writes: every fault exits 1, names file and cause, leaves the table as it was" \
    test $fault_bad -eq 0
check "failed writes: create, write, fsync, link, rename and directory fsync were each hit" \
    test "$(LC_ALL=C sort -u "$T/fault.ops" | tr '\n' ' ')" = "create fsync fsync directory link rename write "
check "failed writes: the ingest succeeds once N is past its last operation" test $rc -eq 0 -a $n -gt 20
check "failed writes: then cat = earlier rows + new rows" \
    cmp <("$Q" cat --data "$T/d" --table faults) <(cat "$T/f1.ndjson" "$T/f2.ndjson")
QUARRY_FAULT=write:x "$Q" ingest --data "$T/d" --table faults /dev/null 2>"$T/fault.err"; rc=$?
check "QUARRY_FAULT malformed: usage error" test $rc -eq 2

# --- a real full disk: a small tmpfs (root only) -------------------------------
if [ "$(id -u)" -ne 0 ]; then
    echo "skip e2e[$tag] full disk: needs root to mount a tmpfs"
elif ! mkdir -p "$T/full" || ! mount -t tmpfs -o size=$(( $(du -sk "$T/d/logs" | cut -f1) / 2 ))k \
        tmpfs "$T/full" 2>"$T/mount.err"; then
    echo "skip e2e[$tag] full disk: mount -t tmpfs failed: $(cat "$T/mount.err")"
else
    # half the size the generated rows took in the round trip above
    "$Q" ingest --data "$T/full" --table logs --quiet "$T/f1.ndjson"
    ls "$T/full/logs" > "$T/full.ls"
    "$Q" ingest --data "$T/full" --table logs --quiet --segment-rows $SEGROWS "$T/gen.ndjson" \
        2>"$T/full.err"
    rc=$?
    check "full disk: exit 1" test $rc -eq 1
    check "full disk: names the file and the cause" \
        grep -q "^quarry: error 53100: [a-z ]* $T/full/logs/.*: No space left on device\$" "$T/full.err"
    check "full disk: nothing committed" grep -q "ingest aborted; nothing was committed" "$T/full.err"
    check "full disk: no file left behind" cmp <(ls "$T/full/logs") "$T/full.ls"
    check "full disk: cat shows the earlier rows" cmp <("$Q" cat --data "$T/full" --table logs) "$T/f1.ndjson"
    "$Q" ingest --data "$T/full" --table logs --quiet "$T/f2.ndjson"; rc=$?
    check "full disk: the space is back, a small ingest succeeds" test $rc -eq 0
    mount -o remount,size=$(( $(du -sk "$T/d/logs" | cut -f1) * 2 ))k "$T/full"
    "$Q" ingest --data "$T/full" --table logs --quiet --segment-rows $SEGROWS "$T/gen.ndjson"; rc=$?
    check "full disk: after freeing space the big ingest succeeds" test $rc -eq 0
    check "full disk: cat = every committed ingest, in order" \
        cmp <("$Q" cat --data "$T/full" --table logs) <(cat "$T/f1.ndjson" "$T/f2.ndjson" "$T/gen.ndjson")
    umount "$T/full"
fi

# CRLF line endings
head -n 50 "$T/gen.ndjson" | sed 's/$/\r/' > "$T/crlf.ndjson"
"$Q" ingest --data "$T/d" --table crlf --quiet "$T/crlf.ndjson"
check "CRLF input reads back as LF" cmp <("$Q" cat --data "$T/d" --table crlf) <(head -n 50 "$T/gen.ndjson")

# query limits: a memory limit too small for the query's automata fails cleanly;
# a generous timeout changes nothing
"$Q" search --data "$T/d" --table logs --count --threads 2 --memory-limit 1048576 'cahce~2 OR failed' >/dev/null 2>"$T/mem.err"; rc=$?
check "search --memory-limit: exit 1" test $rc -eq 1
check "search --memory-limit: 53200" grep -qE "error 53200: .*(memory limit|out of memory)" "$T/mem.err"
"$Q" search --data "$T/d" --table logs --top 50 --memory-limit 1048576 'cahce~2 OR failed' >/dev/null 2>"$T/mem2.err"; rc=$?
check "search --memory-limit: top-k fails cleanly too" grep -q "error 53200: out of memory: the query needs more than its memory limit" "$T/mem2.err"
check "search --timeout: a generous one changes nothing" \
    test "$("$Q" search --data "$T/d" --table logs --count --timeout 60000 'cahce~2 OR failed')" -eq "$(cnt 'cahce~2 OR failed')"

# --- tables of any shape --------------------------------------------------------
SROWS=$((ROWS / 5))
for ds in http_logs github_events; do
    "$Q" gen --dataset $ds --rows $SROWS --seed 11 > "$T/$ds.ndjson"
    "$Q" ingest --data "$T/d" --table $ds --segment-rows $((SROWS / 4)) "$T/$ds.ndjson" 2>"$T/$ds.err"
    rc=$?
    check "$ds: inferred and ingested, exit 0" test $rc -eq 0
    check "$ds: the table was created by inference" grep -q "created table $ds .* inferred from" "$T/$ds.err"
    check "$ds: four segments" test "$(ls "$T/d/$ds/"*.qseg | wc -l)" -eq 4
    check "$ds: cat equals the input byte for byte" cmp <("$Q" cat --data "$T/d" --table $ds) "$T/$ds.ndjson"
    check "$ds: verify reads every block" "$Q" verify --data "$T/d" --table $ds
    "$Q" describe --data "$T/d" --table $ds > "$T/$ds.schema"
    "$Q" ingest --data "$T/d" --table ${ds}_2 --schema "$T/$ds.schema" --quiet "$T/$ds.ndjson"
    check "$ds: with an explicit schema, cat equals the input" cmp <("$Q" cat --data "$T/d" --table ${ds}_2) "$T/$ds.ndjson"
    check "$ds: the explicit table has the same definition" cmp <("$Q" describe --data "$T/d" --table ${ds}_2 | sed 1,2d) <(sed 1,2d "$T/$ds.schema")
done
"$Q" describe --data "$T/d" --table logs > "$T/otel.schema"
"$Q" ingest --data "$T/d" --table logs_2 --schema "$T/otel.schema" --quiet --segment-rows $SEGROWS "$T/gen.ndjson"
check "otel with an explicit schema: cat equals the input" cmp <("$Q" cat --data "$T/d" --table logs_2) "$T/gen.ndjson"
hcnt() { "$Q" search --data "$T/d" --table http_logs --count "$1"; }
# independent counts with awk over the same lines
check "http_logs: status:404 = the lines with status 404" \
    test "$(hcnt status:404)" -eq "$(grep -cE '"status":404[,}]' "$T/http_logs.ndjson")"
check "http_logs: size missing = rows not matching any size" \
    test $(( SROWS - $(hcnt 'size:>=0') )) -eq "$(grep -vc '"size":' "$T/http_logs.ndjson")"
check "http_logs: status:>=400 by a range" \
    test "$(hcnt 'status:>=400')" -eq "$(grep -cE '"status":(4|5)[0-9][0-9][,}]' "$T/http_logs.ndjson")"
check "http_logs: words in the request line" \
    test "$(hcnt 'request:gif')" -eq "$(grep -ciE '"request":"[^"]*[^a-z0-9]gif[^a-z0-9]' "$T/http_logs.ndjson")"
ip=$(sed -n 's/.*"clientip":"\([^"]*\)".*/\1/p' "$T/http_logs.ndjson" | sort | uniq -c | sort -rn | head -1 | awk '{print $2}')
check "http_logs: keyword equality on clientip" \
    test "$(hcnt "clientip:$ip")" -eq "$(grep -cF "\"clientip\":\"$ip\"" "$T/http_logs.ndjson")"
"$Q" search --data "$T/d" --table http_logs --top 5 --by time 'status:200' > "$T/h.newest"
check "http_logs: newest 5 by @timestamp are the last 200s" \
    cmp "$T/h.newest" <(grep -E '"status":200[,}]' "$T/http_logs.ndjson" | tail -n 5 | tac)
gcnt() { "$Q" search --data "$T/d" --table github_events --count "$1"; }
check "github_events: type:PushEvent" \
    test "$(gcnt type:PushEvent)" -eq "$(grep -c '"type":"PushEvent"' "$T/github_events.ndjson")"
check "github_events: a JSON path (payload.action:opened)" \
    test "$(gcnt payload.action:opened)" -eq "$(grep -c '"payload":{"action":"opened"' "$T/github_events.ndjson")"
check "github_events: rows with an org" \
    test "$(gcnt 'org.login:acme-project')" -eq "$(grep -c '"org":{"id":[0-9]*,"login":"acme-project"' "$T/github_events.ndjson")"
check "github_events: org.login matches something" test "$(gcnt 'org.login:acme-project')" -gt 0

# schema errors: a clear message naming file, line and column; nothing created
printf '{\n  "columns": [\n    {"name": "a", "type": "strng"}\n  ]\n}\n' > "$T/bad1.schema"
printf '{"columns": [{"name": "a", "type": "text"}, {"name": "A", "type": "int32"}]}\n' > "$T/bad2.schema"
printf '{"columns": [{"name": "a", "type": "text"}\n' > "$T/bad3.schema"
"$Q" ingest --data "$T/d" --table bad1 --schema "$T/bad1.schema" /dev/null 2>"$T/bad1.err"; rc=$?
check "schema: unknown type is an error" test $rc -eq 1
check "schema: unknown type names file:line:col" grep -q "bad1.schema:3:[0-9]*: .*strng" "$T/bad1.err"
"$Q" ingest --data "$T/d" --table bad2 --schema "$T/bad2.schema" /dev/null 2>"$T/bad2.err"
check "schema: a duplicate column names file:line:col" grep -qE "bad2.schema:1:[0-9]+: .*(twice|duplicate)" "$T/bad2.err"
"$Q" ingest --data "$T/d" --table bad3 --schema "$T/bad3.schema" /dev/null 2>"$T/bad3.err"
check "schema: invalid JSON names file:line:col" grep -qE "bad3.schema:[0-9]+:[0-9]+: " "$T/bad3.err"
check "schema: nothing committed for bad definitions" \
    test ! -e "$T/d/bad1" -a ! -e "$T/d/bad2" -a ! -e "$T/d/bad3"
check "schema: the catalog has none of them" sh -c "! grep -q bad '$T/d/CATALOG'"
# a value of the wrong type is a bad line naming file, line, byte and column
printf '{"@timestamp":893964617,"clientip":"1.2.3.4","request":"GET / HTTP/1.0","status":"ok","size":1}\n' > "$T/wrong.ndjson"
"$Q" ingest --data "$T/d" --table http_logs "$T/wrong.ndjson" 2>"$T/wrong.err"; rc=$?
check "wrong type: exit 3" test $rc -eq 3
check "wrong type: FILE:LINE: byte N: column X: reason" grep -q 'wrong.ndjson:1: byte 82: column status: expected an integer, got string' "$T/wrong.err"
# an existing table and another definition
"$Q" ingest --data "$T/d" --table http_logs --schema "$T/otel.schema" /dev/null 2>"$T/other.err"; rc=$?
check "another definition for an existing table is refused" grep -q "exists with another definition" "$T/other.err"

# float ranges take both zeros; epoch columns take integer bounds in their unit
printf '{"columns":[{"name":"ts","type":"timestamp","format":"epoch_s"},{"name":"f","type":"float64"},{"name":"%s","type":"int64"}],"sort":"ts"}\n' \
    "$(printf 'c%.0s' $(seq 200))" > "$T/f.schema"
printf '{"ts":1,"f":-0.0}\n{"ts":2,"f":0}\n{"ts":3,"f":5e-324}\n{"ts":4,"f":-5e-324}\n' > "$T/f.ndjson"
"$Q" ingest --data "$T/d" --table floats --schema "$T/f.schema" --quiet "$T/f.ndjson"
fcnt() { "$Q" search --data "$T/d" --table floats --count "$1"; }
check "float: f:0 is both zeros" test "$(fcnt f:0)" -eq 2
check "float: f:>=0, f:<=0, f:>0, f:<0" test "$(fcnt 'f:>=0') $(fcnt 'f:<=0') $(fcnt 'f:>0') $(fcnt 'f:<0')" = "3 3 1 1"
check "epoch bounds in the column's unit" test "$(fcnt 'ts:[2 TO 3]') $(fcnt 'time:>=4')" = "2 1"
long=$(printf 'c%.0s' $(seq 200))
check "explain prints a range on a 200-byte column name" "$Q" search --data "$T/d" --table floats --explain --count "$long:>=1"
check "int64 bounds take INT64_MIN and INT64_MAX" test "$(fcnt "$long:[-9223372036854775808 TO 9223372036854775807]")" -eq 0
# an index name that is another column's name is refused
printf '{"columns":[{"name":"a","type":"int64"},{"name":"b","type":"int64"}],"indexes":[{"column":"b","kind":"range","name":"a"}]}\n' > "$T/shadow.schema"
"$Q" ingest --data "$T/d" --table shadow --schema "$T/shadow.schema" /dev/null 2>"$T/shadow.err"
check "an index may not take another column's name" grep -q 'index name "a" is the name of another column' "$T/shadow.err"
# a first ingest that commits nothing leaves no table behind
printf '{"a":1}\n{"a":\n' > "$T/strictbad.ndjson"
"$Q" ingest --data "$T/d" --table strictbad --strict "$T/strictbad.ndjson" 2>/dev/null
check "a failed first ingest creates no table" sh -c "! '$Q' describe --data '$T/d' --table strictbad 2>/dev/null && test ! -e '$T/d/strictbad'"

# empty input: a new table cannot be inferred from nothing; an existing one
# (or one given by --schema) takes it
"$Q" describe --data "$T/d" --table logs > "$T/otel.schema"
"$Q" ingest --data "$T/d" --table empty /dev/null 2>"$T/empty.err"
rc=$?
check "empty input, new table: exit 1" test $rc -eq 1
check "empty input, new table: says to give --schema" grep -q "no JSON object to infer a schema from; give --schema" "$T/empty.err"
check "empty input, new table: nothing created" test ! -e "$T/d/empty"
"$Q" ingest --data "$T/d" --table empty --schema "$T/otel.schema" /dev/null 2>"$T/empty.err"
rc=$?
check "empty input with --schema: exit 0" test $rc -eq 0
check "empty input: 0 rows" grep -q "ingested 0 rows from 0 lines" "$T/empty.err"
check "empty input: cat prints nothing" test -z "$("$Q" cat --data "$T/d" --table empty)"

# binary garbage
head -c 300000 /dev/urandom > "$T/garbage"
"$Q" ingest --data "$T/d" --table garbage --schema "$T/otel.schema" "$T/garbage" 2>"$T/garbage.err"
rc=$?
check "binary garbage: exit 3, no crash" test $rc -eq 3
check "binary garbage: no rows" test -z "$("$Q" cat --data "$T/d" --table garbage)"

# huge line: 24 MiB, over a 1 MiB limit, between two good lines
{
    sed -n 1p "$T/gen.ndjson"
    printf '{"Body":"'; head -c 25165824 /dev/zero | tr '\0' 'a'; printf '"}\n'
    sed -n 2p "$T/gen.ndjson"
} > "$T/huge.ndjson"
/usr/bin/time -f '%M' -o "$T/huge.rss" "$Q" ingest --data "$T/d" --table huge --max-line 1048576 "$T/huge.ndjson" 2>"$T/huge.err"
rc=$?
check "huge line: exit 3" test $rc -eq 3
check "huge line: reported" grep -q "huge.ndjson:2: line longer than the 1048576-byte limit" "$T/huge.err"
check "huge line: neighbours kept" cmp <("$Q" cat --data "$T/d" --table huge) <(head -n 2 "$T/gen.ndjson")
if [ "$tag" = rel ]; then
    check "huge line: never buffered whole (RSS < 200 MiB)" test "$(tail -n 1 "$T/huge.rss")" -lt 204800
fi

# --- corruption --------------------------------------------------------------
"$Q" ingest --data "$T/d" --table broken --schema "$T/otel.schema" --quiet /dev/null
cp "$T/d/logs/"* "$T/d/broken/"
seg=$(ls "$T/d/broken/"*.qseg | head -n 1)
size=$(stat -c %s "$seg")
printf "\xff" | dd of="$seg" bs=1 seek=64 conv=notrunc status=none  # inside the first column block
"$Q" cat --data "$T/d" --table broken > /dev/null 2>"$T/broken.err"
rc=$?
check "flipped byte: cat fails" test $rc -eq 1
check "flipped byte: error names file" grep -q "$(basename "$seg")" "$T/broken.err"
check "flipped byte: error names the column and block" grep -qE "corrupt: (column [A-Za-z]+ block [0-9]+|footer)" "$T/broken.err"
"$Q" verify --data "$T/d" --table broken > "$T/verify.out" 2>&1
check "flipped byte: verify reports 1 bad segment" grep -q "6 segments checked, 1 bad" "$T/verify.out"
# segments are verified in parallel; the report is in manifest order whatever the threads
seg2=$(ls "$T/d/broken/"*.qseg | tail -n 1)
printf "\xff" | dd of="$seg2" bs=1 seek=64 conv=notrunc status=none
"$Q" verify --threads 1 --data "$T/d" --table broken > "$T/verify1.out" 2>&1
rc1=$?
"$Q" verify --threads 3 --data "$T/d" --table broken > "$T/verify3.out" 2>&1
rc3=$?
check "two flipped segments: verify fails" test $rc1 -eq 1 -a $rc3 -eq 1
check "two flipped segments: 2 bad" grep -q "6 segments checked, 2 bad" "$T/verify3.out"
check "two flipped segments: both named" \
    test "$(grep -c -e "$(basename "$seg")" -e "$(basename "$seg2")" "$T/verify3.out")" -eq 2
check "two flipped segments: 1 and 3 threads report alike" cmp -s "$T/verify1.out" "$T/verify3.out"
check "verify --threads 0 is a usage error" test "$("$Q" verify --threads 0 --data "$T/d" --table broken > /dev/null 2>&1; echo $?)" -eq 2
"$Q" search --data "$T/d" --table broken --count 'failed OR ord* OR service:cart' > /dev/null 2>"$T/bsearch.err"
rc=$?
check "flipped byte: search fails cleanly or the byte was outside what it reads" \
    test $rc -eq 0 -o \( $rc -eq 1 -a -n "$(grep -l corrupt "$T/bsearch.err")" \)
truncate -s $((size - 100)) "$seg"
"$Q" cat --data "$T/d" --table broken > /dev/null 2>"$T/trunc.err"
check "truncated file: clear error" grep -q "corrupt: bad trailer magic" "$T/trunc.err"
printf 'junk' > "$T/d/broken/MANIFEST"
"$Q" cat --data "$T/d" --table broken > /dev/null 2>"$T/man.err"
check "corrupt manifest: clear error" grep -q "manifest .*MANIFEST: corrupt" "$T/man.err"
"$Q" cat --data "$T/d" --table nosuch > /dev/null 2>"$T/nosuch.err"
check "unknown table: clear error" grep -q "table nosuch does not exist" "$T/nosuch.err"

# --- one writer at a time ----------------------------------------------------
( flock -x 9; sleep 3 ) 9>"$T/d/logs/LOCK" &
sleep 0.5
"$Q" ingest --data "$T/d" --table logs --quiet /dev/null 2>"$T/lock.err"
rc=$?
wait
check "second writer refused" test $rc -eq 1
check "lock error is clear" grep -q "table logs is being written by another process" "$T/lock.err"

# --- usage errors --------------------------------------------------------------
"$Q" ingest --table x 2>/dev/null; rc=$?
check "missing --data is a usage error" test $rc -eq 2
"$Q" gen --rows abc 2>/dev/null; rc=$?
check "bad --rows is a usage error" test $rc -eq 2
"$Q" ingest --data "$T/d" --table 'bad/name' /dev/null 2>"$T/name.err"; rc=$?
check "bad table name refused" grep -q "invalid table name" "$T/name.err"

echo "e2e[$tag]: $pass passed, $fail failed"
mkdir -p "$(dirname "$0")/../../build/results"
echo "$pass $fail" >> "$(dirname "$0")/../../build/results/e2e-$tag"
[ $fail -eq 0 ]
