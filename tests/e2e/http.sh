#!/usr/bin/env bash
# End-to-end tests of `quarry serve --http` ($QUARRY): NDJSON, _bulk and
# OTLP/HTTP (JSON and protobuf) sent by curl, gzip bodies, Idempotency-Key
# retries, create _id conflicts, the error statuses (400 404 405 413 415
# 401), HTTP Basic against SCRAM users, and that what was answered 200 is
# there through psql with exact counts and values, also after a SIGKILL and
# a restart (durable before answered; the idempotency window too). Real
# shippers from npm (@elastic/elasticsearch's bulk helper, the
# OpenTelemetry JS SDK's OTLP log exporters) when build/npm has them, and
# rsyslog's omelasticsearch.
# Servers listen on 127.0.0.1 only, on ports the kernel picks; every request
# loop is bounded; servers are killed at exit. Prints "e2e-http: N passed, M failed".
set -uo pipefail
Q=${QUARRY:?set QUARRY to the quarry binary}
Q=$(cd "$(dirname "$Q")" && pwd)/$(basename "$Q")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/quarry-e2e-http-XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT
pass=0; fail=0; tag=$(basename "$(dirname "$Q")")
ok()   { pass=$((pass + 1)); echo "ok   e2e-http[$tag] $1"; }
bad()  { fail=$((fail + 1)); echo "FAIL e2e-http[$tag] $1"; [ -n "${2:-}" ] && sed 's/^/     /' "$2" | head -20; }
check() { # name, then a command that must succeed
    local name=$1; shift
    if "$@" >"$T/out" 2>&1; then ok "$name"; else bad "$name" "$T/out"; fi
}
eq() { # name, expected text, actual text
    if [ "$2" = "$3" ]; then ok "$1"; else printf 'want: %s\ngot:  %s\n' "$2" "$3" > "$T/diff"; bad "$1" "$T/diff"; fi
}

# serve NAME DATA ARGS...: a server with --http, its ports in NAME_pg / NAME_http
serve() {
    local name=$1 data=$2; shift 2
    rm -f "$T/$name.port" "$T/$name.hport"
    "$Q" serve --data "$data" --listen 127.0.0.1:0 --port-file "$T/$name.port" \
        --http 127.0.0.1:0 --http-port-file "$T/$name.hport" "$@" >"$T/$name.log" 2>&1 &
    local pid=$!
    pids+=("$pid")
    eval "${name}_pid=$pid"
    for _ in $(seq 1 100); do [ -s "$T/$name.port" ] && break; sleep 0.1; done
    eval "${name}_pg=$(cat "$T/$name.port" 2>/dev/null || echo 0)"
    eval "${name}_http=$(cat "$T/$name.hport" 2>/dev/null || echo 0)"
}
stop() { # NAME: SIGTERM and wait (bounded: 20 s)
    local pid; eval "pid=\$${1}_pid"
    kill -TERM "$pid"
    for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    wait "$pid"
}

D=$T/d
"$Q" sql --data "$D" "CREATE TABLE t (ts TIMESTAMP, msg TEXT, n INT64)" >/dev/null
serve main "$D" --http-max-body 1048576
check "serve prints the HTTP address" grep -q "HTTP ingest on 127.0.0.1:$main_http" "$T/main.log"
U=http://127.0.0.1:$main_http
P() { timeout 30 psql -X -A -t -h 127.0.0.1 -p "$main_pg" -U quarry -d quarry -c "$1"; }
# post PATH [curl args...]: prints the status line "CODE" then the body
post() {
    local path=$1; shift
    curl -s -m 30 -o "$T/body" -w '%{http_code}' -D "$T/headers" -XPOST "$U$path" "$@"
    echo
    cat "$T/body"
}
ND=(-H 'Content-Type: application/x-ndjson')

# --- NDJSON --------------------------------------------------------------------
printf '%s\n' '{"ts":"2025-01-01T00:00:00Z","msg":"alpha","n":1}' \
    '{"ts":"2025-01-01T00:00:01Z","msg":"beta","n":2}' '' \
    '{"ts":"2025-01-01T00:00:02Z","msg":"gamma","n":3}' > "$T/a.ndjson"
eq "ndjson: 3 rows answered" "$(printf '200\n{"rows":3}')" "$(post /v1/ingest/t "${ND[@]}" --data-binary @"$T/a.ndjson")"
eq "ndjson: the rows through psql" "$(printf 'alpha|1\nbeta|2\ngamma|3')" "$(P "SELECT msg, n FROM t ORDER BY ts")"
printf '%s\n' '{"ts":"2025-01-01T00:00:03Z","msg":"ok","n":4}' '{"ts":"2025-01-01T00:00:04Z","msg":"bad","n":"five"}' > "$T/b.ndjson"
post /v1/ingest/t "${ND[@]}" --data-binary @"$T/b.ndjson" > "$T/r"
check "ndjson: a bad line is a 400" grep -qx 400 "$T/r"
check "ndjson: ... naming the line and the SQLSTATE" grep -q '"code":"42804".*"line 2: column n:.*"line":2' "$T/r"
eq "ndjson: ... and nothing of the request is stored" 3 "$(P "SELECT count(*) FROM t")"
eq "ndjson: an unknown table is a 404" 404 "$(post /v1/ingest/nope "${ND[@]}" --data-binary @"$T/a.ndjson" | head -1)"
printf '%s\n' '{"ts":"2025-01-01T00:00:05Z","msg":"zipped","n":5}' '{"ts":"2025-01-01T00:00:06Z","msg":"zipped","n":6}' | gzip -c > "$T/c.gz"
eq "gzip: a compressed body" "$(printf '200\n{"rows":2}')" "$(post /v1/ingest/t "${ND[@]}" -H 'Content-Encoding: gzip' --data-binary @"$T/c.gz")"
eq "gzip: ... its rows" 11 "$(P "SELECT sum(n) FROM t WHERE msg = 'zipped'")"
head -c 10 "$T/c.gz" > "$T/trunc.gz"
eq "gzip: a truncated body is a 400" 400 "$(post /v1/ingest/t "${ND[@]}" -H 'Content-Encoding: gzip' --data-binary @"$T/trunc.gz" | head -1)"

# --- Idempotency-Key on /v1/ingest -----------------------------------------------
printf '%s\n' '{"ts":"2025-01-01T00:00:07Z","msg":"once","n":7}' '{"ts":"2025-01-01T00:00:08Z","msg":"once","n":8}' > "$T/k.ndjson"
eq "idempotency: first send" "$(printf '200\n{"rows":2}')" "$(post /v1/ingest/t "${ND[@]}" -H 'Idempotency-Key: k-1' --data-binary @"$T/k.ndjson")"
eq "idempotency: the retry gets the same answer" "$(printf '200\n{"rows":2}')" "$(post /v1/ingest/t "${ND[@]}" -H 'Idempotency-Key: k-1' --data-binary @"$T/k.ndjson")"
check "idempotency: ... marked as a replay" grep -qi '^Idempotent-Replayed: true' "$T/headers"
eq "idempotency: ... and the rows are stored once" 2 "$(P "SELECT count(*) FROM t WHERE msg = 'once'")"

# --- _bulk -------------------------------------------------------------------------
cat > "$T/bulk1" <<'B'
{"create":{"_index":"t","_id":"a1"}}
{"ts":"2025-01-02T00:00:00Z","msg":"bulk-a1","n":10}
{"create":{"_id":"a2"}}
{"ts":"2025-01-02T00:00:01Z","msg":"bulk-a2","n":11}
{"index":{}}
{"ts":"2025-01-02T00:00:02Z","msg":"bulk-noid","n":12}
{"create":{"_id":"a1"}}
{"ts":"2025-01-02T00:00:03Z","msg":"bulk-dup","n":13}
{"index":{"_id":"x"}}
{"ts":"2025-01-02T00:00:04Z","msg":"bulk-bad","n":"NaN"}
{"delete":{"_id":"a2"}}
{"update":{"_id":"a2"}}
{"doc":{"n":1}}
B
items() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["errors"], " ".join("%s:%s:%s:%s" % (k, v["_id"], v["status"], v.get("error",{}).get("type","-")) for it in r["items"] for k, v in it.items()))'; }
post /t/_bulk "${ND[@]}" --data-binary @"$T/bulk1" > "$T/r"
eq "bulk: per-item statuses" "True create:a1:201:- create:a2:201:- index:$(python3 -c 'import json; print(json.load(open("'"$T/body"'"))["items"][2]["index"]["_id"])'):201:- create:a1:409:version_conflict_engine_exception index:x:400:mapper_parsing_exception delete:a2:400:mapper_parsing_exception update:a2:400:mapper_parsing_exception" "$(items < "$T/body")"
check "bulk: the answer names the index and says result created" grep -q '"_index":"t","_id":"a1","_version":1,"result":"created"' "$T/body"
check "bulk: X-Elastic-Product header" grep -qi '^X-Elastic-Product: Elasticsearch' "$T/headers"
eq "bulk: the created rows through psql" "$(printf 'bulk-a1|10\nbulk-a2|11\nbulk-noid|12')" "$(P "SELECT msg, n FROM t WHERE msg LIKE 'bulk%' ORDER BY ts")"
post /_bulk "${ND[@]}" --data-binary @<(sed 's/"create":{"_id":"a2"}/"create":{"_index":"t","_id":"a2"}/; s/"index":{}/"index":{"_index":"t"}/; s/"create":{"_id":"a1"}/"create":{"_index":"t","_id":"a1"}/' "$T/bulk1" | sed 's/"_index":"t","_index":"t"/"_index":"t"/') > "$T/r"
eq "bulk: resent, create _ids are 409, not stored twice" "True create:a1:409 create:a2:409" "$(items < "$T/body" | cut -d' ' -f1-3 | sed 's/:version_conflict_engine_exception//g')"
eq "bulk: ... only the id-less index was stored again" "$(printf 'bulk-a1|1\nbulk-a2|1\nbulk-noid|2')" "$(P "SELECT msg, count(*) FROM t WHERE msg LIKE 'bulk%' GROUP BY 1 ORDER BY 1")"
printf '%s\n' '{"index":{"_id":"i1"}}' '{"ts":"2025-01-03T00:00:00Z","msg":"keyed","n":1}' > "$T/bulk2"
post /t/_bulk "${ND[@]}" -H 'Idempotency-Key: bulk-k' --data-binary @"$T/bulk2" > "$T/r1"
post /t/_bulk "${ND[@]}" -H 'Idempotency-Key: bulk-k' --data-binary @"$T/bulk2" > "$T/r2"
check "bulk: Idempotency-Key retry gets the same bytes" cmp "$T/r1" "$T/r2"
eq "bulk: ... stored once" 1 "$(P "SELECT count(*) FROM t WHERE msg = 'keyed'")"
post /t/_bulk "${ND[@]}" --data-binary @"$T/bulk2" > "$T/r"
eq "bulk: index with a known _id is not stored again (noop)" "False index:i1:200:- 1" "$(items < "$T/body") $(P "SELECT count(*) FROM t WHERE msg = 'keyed'")"
printf '%s\n' '{"index":{}}' '{"ts":"2025-01-03T00:00:02Z","msg":"gen-id"}' '{"index":{}}' '{"ts":"2025-01-03T00:00:03Z","msg":"gen-id"}' '{"create":{}}' '{"ts":"2025-01-03T00:00:04Z","msg":"gen-id"}' > "$T/bulk_ids"
post /genid/_bulk "${ND[@]}" --data-binary @"$T/bulk_ids" > "$T/r"
eq "bulk: ids made for documents without one: 20 characters of base64url, all different" "3 distinct" "$(python3 -c 'import json,re,sys; ids=[v["_id"] for it in json.load(open(sys.argv[1]))["items"] for v in it.values()]; print(len(set(i for i in ids if re.fullmatch(r"[A-Za-z0-9_-]{20}", i))), "distinct")' "$T/body")"
printf '%s\n' '{"index":{}}' '{"ts":"2025-01-03T00:00:01Z","msg":"never"}' '{"frob":{}}' '{}' > "$T/bulk3"
post /t/_bulk "${ND[@]}" --data-binary @"$T/bulk3" > "$T/r"
check "bulk: a malformed action line is a 400 for the request" sh -c "head -1 '$T/r' | grep -qx 400 && grep -q 'Malformed action/metadata line \[3\]' '$T/r'"
eq "bulk: ... and nothing of it is stored" 0 "$(P "SELECT count(*) FROM t WHERE msg = 'never'")"
printf '%s\n' '{"index":{"_index":"web"}}' '{"@timestamp":"2025-01-04T00:00:00Z","status":200,"path":"/a"}' \
    '{"index":{"_index":"web"}}' '{"@timestamp":"2025-01-04T00:00:01Z","status":404,"path":"/b"}' | gzip -c > "$T/bulk4.gz"
post /_bulk "${ND[@]}" -H 'Content-Encoding: gzip' --data-binary @"$T/bulk4.gz" > "$T/r"
eq "bulk: a new index is created from its first document (gzip body)" "False index:201 index:201" "$(items < "$T/body" | sed 's/:[^: ]*:\([0-9]*\):-/:\1/g')"
eq "bulk: ... its rows through psql" "$(printf '200|/a\n404|/b')" "$(P "SELECT status, path FROM web ORDER BY status")"

# --- OTLP/HTTP ---------------------------------------------------------------------
cat > "$T/otlp.json" <<'J'
{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"cart"}},{"key":"pid","value":{"intValue":"42"}}]},
 "scopeLogs":[{"scope":{"name":"my.lib","version":"1.2"},"logRecords":[
  {"timeUnixNano":"1758585600123456789","severityNumber":17,"severityText":"ERROR","body":{"stringValue":"failed to place order"},
   "traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174","flags":1,"attributes":[{"key":"user","value":{"stringValue":"u1"}}]},
  {"timeUnixNano":"1758585600000000002","severityNumber":9,"severityText":"INFO","body":{"stringValue":"cache hit"}},
  {"timeUnixNano":"1758585600000000003","traceId":"zz","body":{"stringValue":"bad trace id"}}],
  "schemaUrl":"https://scope/1"}],"schemaUrl":"https://res/1"}]}
J
post /v1/logs -H 'Content-Type: application/json' --data-binary @"$T/otlp.json" > "$T/r"
eq "otlp json: partial success names the rejected record" "$(printf '200\n{"partialSuccess":{"rejectedLogRecords":"1","errorMessage":"a log record'"'"'s traceId or spanId is not 16 or 8 bytes"}}')" "$(cat "$T/r")"
eq "otlp json: otel_logs made with the OpenTelemetry definition" "Body|inverted" "$(P "SELECT a.attname, am.amname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] JOIN pg_class t ON t.oid = i.indrelid WHERE t.relname = 'otel_logs' AND am.amname = 'inverted'" 2>/dev/null || true)"
eq "otlp json: every column of the first record" \
   '2025-09-23 00:00:00.123456+00|5b8efff798038103d269b633813fc60c|eee19b7ec3c1b174|1|ERROR|17|cart|failed to place order|https://res/1|{"service.name":"cart","pid":"42"}|https://scope/1|my.lib|1.2|{}|{"user":"u1"}' \
   "$(P "SELECT * FROM otel_logs WHERE SeverityNumber = 17")"
eq "otlp json: full-text search finds it" 1 "$(P "SELECT count(*) FROM otel_logs WHERE Body @@ 'failed'")"
python3 "$ROOT/tests/e2e/otlp_pb.py" 5 checkout > "$T/otlp.pb"
post /v1/logs -H 'Content-Type: application/x-protobuf' --data-binary @"$T/otlp.pb" > "$T/r"
eq "otlp protobuf: 200 with an empty ExportLogsServiceResponse" "200 0" "$(head -1 "$T/r") $(stat -c %s "$T/body")"
check "otlp protobuf: ... as application/x-protobuf" grep -qi '^Content-Type: application/x-protobuf' "$T/headers"
eq "otlp protobuf: the records through psql" "5|5" \
   "$(P "SELECT count(*), count(DISTINCT Body) FROM otel_logs WHERE ServiceName = 'checkout'")"
eq "otlp protobuf: ids, flags, severity, scope and schema URLs" \
   "1|0102030405060708090a0b0c0d0e0f10|0102030405060708|5 WARN|13|pb.scope|0.9|5 https://scope/1|https://res/1|5" \
   "$(P "SELECT TraceFlags, TraceId, SpanId, count(*) FROM otel_logs WHERE ServiceName = 'checkout' GROUP BY 1, 2, 3") $(P "SELECT SeverityText, SeverityNumber, ScopeName, ScopeVersion, count(*) FROM otel_logs WHERE ServiceName = 'checkout' GROUP BY 1, 2, 3, 4") $(P "SELECT ScopeSchemaUrl, ResourceSchemaUrl, count(*) FROM otel_logs WHERE ServiceName = 'checkout' GROUP BY 1, 2")"
eq "otlp protobuf: bodies, attributes and times" \
   "$(printf 'pb record 0|{"i":"0"}|{"service.name":"checkout","host.name":"h1"}|2025-09-23 00:00:00+00\npb record 4|{"i":"4"}|{"service.name":"checkout","host.name":"h1"}|2025-09-23 00:00:00+00')" \
   "$(P "SELECT Body, LogAttributes, ResourceAttributes, Timestamp FROM otel_logs WHERE ServiceName = 'checkout' AND Body @@ ts_any(['0', '4']) ORDER BY Body")"
gzip -c "$T/otlp.pb" > "$T/otlp.pb.gz"
post "/v1/logs?table=otlp_q" -H 'Content-Type: application/x-protobuf' -H 'Content-Encoding: gzip' --data-binary @"$T/otlp.pb.gz" > /dev/null
post /v1/logs -H 'Content-Type: application/x-protobuf' -H 'X-Quarry-Table: otlp_h' --data-binary @"$T/otlp.pb" > /dev/null
eq "otlp: the table by query parameter (gzip) and by X-Quarry-Table" "5 5" "$(P "SELECT count(*) FROM otlp_q") $(P "SELECT count(*) FROM otlp_h")"
printf 'garbage' > "$T/junk"
eq "otlp: an undecodable protobuf body is a 400" 400 "$(post /v1/logs -H 'Content-Type: application/x-protobuf' --data-binary @"$T/junk" | head -1)"
eq "otlp: a JSON body that is not a request is a 400" 400 "$(post /v1/logs -H 'Content-Type: application/json' --data-binary '[1]' | head -1)"

# --- a larger body, and requests at once ----------------------------------------------
"$Q" gen --rows 1000 --seed 5 > "$T/gen.ndjson"
n0=$(P "SELECT count(*) FROM otel_logs")
eq "ndjson: 1000 generated rows in one request" "$(printf '200\n{"rows":1000}')" "$(post /v1/ingest/otel_logs "${ND[@]}" --data-binary @"$T/gen.ndjson")"
eq "ndjson: ... all there" "$((n0 + 1000))" "$(P "SELECT count(*) FROM otel_logs")"
first=$(head -1 "$T/gen.ndjson")
tid=$(printf '%s' "$first" | sed 's/.*"TraceId":"\([^"]*\)".*/\1/'); sid=$(printf '%s' "$first" | sed 's/.*"SpanId":"\([^"]*\)".*/\1/')
body=$(printf '%s' "$first" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["Body"])')
eq "ndjson: ... the first one as it was sent" "$body" "$(P "SELECT Body FROM otel_logs WHERE TraceId = '$tid' AND SpanId = '$sid'")"
P "CREATE TABLE ca (ts TIMESTAMP, k INT64)" >/dev/null
P "CREATE TABLE cb (ts TIMESTAMP, k INT64)" >/dev/null
# 6 _bulk requests at once, each with 50 items for ca and 50 for cb, half of
# them naming cb first: no request may hold two writers (they would deadlock)
for r in 0 1 2 3 4 5; do
    if [ $((r % 2)) = 0 ]; then first=ca; second=cb; else first=cb; second=ca; fi
    for i in $(seq 1 50); do
        printf '{"index":{"_index":"%s"}}\n{"ts":%d,"k":%d}\n' "$first" "$i" "$r"
        printf '{"index":{"_index":"%s"}}\n{"ts":%d,"k":%d}\n' "$second" "$i" "$r"
    done > "$T/conc$r"
done
cpids=()
for r in 0 1 2 3 4 5; do
    curl -s -m 60 -o "$T/conc$r.out" -w '%{http_code}\n' -XPOST "$U/_bulk" "${ND[@]}" --data-binary @"$T/conc$r" > "$T/conc$r.code" &
    cpids+=($!)
done
wait "${cpids[@]}" # the curls only (curl -m bounds each), not the server
eq "concurrent _bulk across two tables in both orders: all answered 200" "200 200 200 200 200 200" "$(cat "$T"/conc?.code | tr '\n' ' ' | sed 's/ $//')"
eq "... with no item error" "0" "$(cat "$T"/conc?.out | grep -c '"errors":true')"
eq "... every row there once" "300|6 300|6" "$(P "SELECT count(*), count(DISTINCT k) FROM ca") $(P "SELECT count(*), count(DISTINCT k) FROM cb")"

# --- statuses ------------------------------------------------------------------------
status() { curl -s -m 30 -o "$T/sbody" -w '%{http_code}' "$@"; }
eq "a wrong method is a 405" 405 "$(status "$U/v1/ingest/t")"
check "... with a JSON error body" grep -q '"error":{"code":' "$T/sbody"
eq "an unknown path is a 404" 404 "$(status -XPOST "$U/nope" --data-binary x)"
eq "a bad content type is a 415" 415 "$(status -XPOST "$U/v1/ingest/t" -H 'Content-Type: text/csv' --data-binary x)"
eq "OTLP with a bad content type is a 415" 415 "$(status -XPOST "$U/v1/logs" -H 'Content-Type: text/plain' --data-binary x)"
eq "an unknown Content-Encoding is a 415" 415 "$(status -XPOST "$U/v1/ingest/t" "${ND[@]}" -H 'Content-Encoding: br' --data-binary x)"
head -c 1200000 /dev/zero | tr '\0' 'x' > "$T/big"
eq "a body over --http-max-body is a 413" 413 "$(status -XPOST "$U/v1/ingest/t" "${ND[@]}" --data-binary @"$T/big")"
gzip -c "$T/big" > "$T/big.gz"
eq "... also when it is only that big once inflated" 413 "$(status -XPOST "$U/v1/ingest/t" "${ND[@]}" -H 'Content-Encoding: gzip' --data-binary @"$T/big.gz")"
eq "... with chunked transfer (no Content-Length)" 413 "$(status -XPOST "$U/v1/ingest/t" "${ND[@]}" -H 'Transfer-Encoding: chunked' --data-binary @"$T/big")"
eq "GET / answers like Elasticsearch" 200 "$(status "$U/")"
eq "the table is as it was after the refusals" 7 "$(P "SELECT count(*) FROM t WHERE msg NOT LIKE 'bulk%' AND msg <> 'keyed'")"

# --- real shippers (npm, installed by scripts/install-deps into build/npm) ---------
NM=$ROOT/build/npm/node_modules
if [ -f "$NM/@elastic/elasticsearch/package.json" ]; then
    NODE_PATH=$NM timeout 60 node "$ROOT/tests/e2e/es_bulk.js" "$U" > "$T/es.out" 2>&1
    check "@elastic/elasticsearch: helpers.bulk and bulk() succeed" grep -qx "es: helper 100 ok, bulk 2 created 1 conflict" "$T/es.out"
    eq "@elastic/elasticsearch: ... the rows through psql" "102|1" "$(P "SELECT count(*), count(DISTINCT src) FROM es_docs")"
else
    bad "@elastic/elasticsearch is installed in build/npm (scripts/install-deps)"
fi
if [ -f "$NM/@opentelemetry/exporter-logs-otlp-proto/package.json" ] && [ -f "$NM/@opentelemetry/exporter-logs-otlp-http/package.json" ]; then
    NODE_PATH=$NM timeout 60 node "$ROOT/tests/e2e/otel_logs.js" "$U" > "$T/otel.out" 2>&1
    check "OpenTelemetry JS SDK: both exporters export" grep -qx 'otel: proto ok, http ok' "$T/otel.out"
    eq "OpenTelemetry JS SDK: ... the records through psql" \
       "$(printf 'js-http|INFO|9|20|20\njs-proto|WARN|13|20|20')" \
       "$(P "SELECT ServiceName, SeverityText, SeverityNumber, count(*), count(DISTINCT Body) FROM otel_js GROUP BY 1, 2, 3 ORDER BY 1")"
else
    bad "the OpenTelemetry OTLP log exporters are installed in build/npm (scripts/install-deps)"
fi

# rsyslog's omelasticsearch (Debian rsyslog-elasticsearch): syslog lines over TCP into
# rsyslogd, which ships them to _bulk in bulk mode; the index is created by inference
if command -v rsyslogd >/dev/null && [ -f /usr/lib/x86_64-linux-gnu/rsyslog/omelasticsearch.so ]; then
    RS=$T/rsyslog
    mkdir -p "$RS/work"
    TP=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
    cat > "$RS/rs.conf" <<RSC
global(workDirectory="$RS/work")
module(load="imtcp")
module(load="omelasticsearch")
template(name="doc" type="list" option.jsonf="on") {
  property(outname="@timestamp" name="timereported" dateFormat="rfc3339" format="jsonf")
  property(outname="host" name="hostname" format="jsonf")
  property(outname="severity" name="syslogseverity-text" format="jsonf")
  property(outname="program" name="programname" format="jsonf")
  property(outname="message" name="msg" format="jsonf")
}
ruleset(name="es") {
  action(type="omelasticsearch" server="127.0.0.1" serverport="$main_http" template="doc"
         searchIndex="syslog" bulkmode="on" errorFile="$RS/es-errors.json")
}
input(type="imtcp" port="$TP" address="127.0.0.1" ruleset="es")
RSC
    rsyslogd -n -f "$RS/rs.conf" -i "$RS/rs.pid" > "$RS/rsyslog.log" 2>&1 &
    rs_pid=$!
    pids+=("$rs_pid")
    for _ in $(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/$TP) 2>/dev/null && break; sleep 0.1; done
    for i in $(seq 1 40); do
        if [ $((i % 4)) -eq 0 ]; then logger --tcp -n 127.0.0.1 -P "$TP" -t cart -p user.err "order $i failed to charge card"
        else logger --tcp -n 127.0.0.1 -P "$TP" -t web -p user.info "GET /item/$i 200"; fi
    done
    for _ in $(seq 1 100); do [ "$(P "SELECT count(*) FROM syslog" 2>/dev/null)" = 40 ] && break; sleep 0.1; done
    eq "rsyslog omelasticsearch: 40 lines shipped, each once" "40|40" "$(P "SELECT count(*), count(DISTINCT message) FROM syslog")"
    eq "rsyslog omelasticsearch: ... by program and severity" "$(printf 'cart|err|10\nweb|info|30')" \
       "$(P "SELECT program, severity, count(*) FROM syslog GROUP BY 1, 2 ORDER BY 1")"
    eq "rsyslog omelasticsearch: ... and searchable" 10 "$(P "SELECT count(*) FROM syslog WHERE message @@ 'charge'")"
    check "rsyslog omelasticsearch: no item was refused" test ! -s "$RS/es-errors.json"
    kill -TERM "$rs_pid" 2>/dev/null
else
    bad "rsyslogd with omelasticsearch is installed (scripts/install-deps)"
fi

# --- durability: SIGKILL after the answers, then a restart ----------------------------
before=$(P "SELECT count(*) FROM t")
disown "$main_pid" # no "Killed" notice from the shell
kill -KILL "$main_pid"
for _ in $(seq 1 100); do kill -0 "$main_pid" 2>/dev/null || break; sleep 0.1; done
serve main "$D"
U=http://127.0.0.1:$main_http
eq "after SIGKILL and a restart every answered row is there" "$before" "$(P "SELECT count(*) FROM t")"
post /t/_bulk "${ND[@]}" -H 'Idempotency-Key: bulk-k' --data-binary @"$T/bulk2" > "$T/r3"
check "after the restart the Idempotency-Key is answered as before" cmp "$T/r1" "$T/r3"
printf '%s\n' '{"create":{"_id":"a1"}}' '{"ts":"2025-01-05T00:00:00Z","msg":"late","n":1}' > "$T/bulk5"
post /t/_bulk "${ND[@]}" --data-binary @"$T/bulk5" > /dev/null
eq "after the restart a known create _id is still a 409" "True create:a1:409:version_conflict_engine_exception $before" "$(items < "$T/body") $(P "SELECT count(*) FROM t")"
check "SIGTERM: exit status 0" stop main

# --- authentication ------------------------------------------------------------------
printf '%s\n' 's3cret' | "$Q" passwd alice > "$T/users"
serve auth "$D" --auth scram --users "$T/users"
UA=http://127.0.0.1:$auth_http
eq "auth: no credentials is a 401" 401 "$(status -XPOST "$UA/v1/ingest/t" "${ND[@]}" --data-binary @"$T/a.ndjson")"
check "auth: ... asking for Basic" sh -c "curl -s -D - -o /dev/null -XPOST '$UA/v1/ingest/t' --data-binary x | grep -qi '^WWW-Authenticate: Basic'"
eq "auth: a wrong password is a 401" 401 "$(status -u alice:nope -XPOST "$UA/v1/ingest/t" "${ND[@]}" --data-binary @"$T/a.ndjson")"
eq "auth: an unknown user is a 401" 401 "$(status -u bob:s3cret -XPOST "$UA/v1/ingest/t" "${ND[@]}" --data-binary @"$T/a.ndjson")"
eq "auth: the right password is let in" 200 "$(status -u alice:s3cret -XPOST "$UA/v1/ingest/t" "${ND[@]}" --data-binary @"$T/a.ndjson")"
check "auth: SIGTERM exit status 0" stop auth
timeout 10 "$Q" serve --data "$D" --listen 127.0.0.1:0 --http 0.0.0.0:0 > /dev/null 2> "$T/refuse"
eq "a non-loopback --http without --auth scram is refused" "1" "$?"
check "... saying why" grep -q "22023.*refusing to listen on 0.0.0.0 without authentication" "$T/refuse"
check "no sanitizer report" sh -c "! grep -E 'Sanitizer|runtime error' '$T/main.log' '$T/auth.log'"

echo "e2e-http[$tag]: $pass passed, $fail failed"
mkdir -p "$ROOT/build/results"
echo "$pass $fail" >> "$ROOT/build/results/e2e-http-$tag"
[ $fail -eq 0 ]
