#!/usr/bin/env bash
# bench/server.sh - quarry serve through the PostgreSQL protocol at N rows
# (default 1M): queries per second and mean latency with 1, 8 and 32
# clients (pgbench, simple and extended protocol) for SELECT 1, a keyword count and a
# GROUP BY, next to PostgreSQL 15 answering `SELECT 1` on this machine (the
# protocol's floor: no table at all), and the same count through `quarry sql
# --repeat` (no protocol). Servers listen on 127.0.0.1 only, on free ports,
# and are stopped at exit. Needs pgbench (postgresql-contrib) and, for the
# PostgreSQL column, its server binaries (run as the postgres user when
# root).
# Usage: bash bench/server.sh [ROWS] [SECONDS]  (writes bench/out/server-ROWS.md)
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
SECS=${2:-5}
source bench/lib.sh
ensure_table "$ROWS"
REPORT=$OUT/server-$ROWS.md
W=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    [ -n "${PGBIN:-}" ] && [ -d "$W/pg" ] && as_pg "$PGBIN/pg_ctl" -D "$W/pg" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$W"
}
trap cleanup EXIT
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

$Q serve --data "$DATA" --listen 127.0.0.1:0 --port-file "$W/port" > "$W/serve.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$W/port" ] && break; sleep 0.1; done
QP=$(cat "$W/port")
echo "SELECT count(*) FROM logs WHERE ServiceName = 'cart';" > "$W/count.sql"
echo "SELECT ServiceName, count(*) FROM logs WHERE Body @@ 'failed' GROUP BY ServiceName ORDER BY 2 DESC;" > "$W/group.sql"
echo "SELECT 1;" > "$W/one.sql"

bench() { # port script clients mode -> "tps latency_ms"
    timeout $((SECS + 30)) pgbench -n -h 127.0.0.1 -p "$1" -U "$5" "$6" -f "$2" -c "$3" -j 2 -T "$SECS" -M "$4" 2>&1 |
        awk '/^latency average/ {l = $4} /^tps/ {t = $3} END {printf "%.0f %.3f", t, l}'
}

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1 || true)
PGP=""
if [ -n "$PGBIN" ] && [ -x "$PGBIN/postgres" ]; then
    mkdir -p "$W/pg" && chown postgres "$W" "$W/pg" 2>/dev/null || true
    if as_pg "$PGBIN/initdb" -D "$W/pg" -A trust -U quarry >/dev/null 2>&1; then
        PGP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        as_pg "$PGBIN/pg_ctl" -D "$W/pg" -l "$W/pg.log" -w \
            -o "-c listen_addresses=127.0.0.1 -c port=$PGP -c unix_socket_directories=$W/pg" start >/dev/null
        as_pg "$PGBIN/createdb" -h 127.0.0.1 -p "$PGP" -U quarry quarry
    fi
fi

{
echo "# quarry serve at $ROWS rows ($(date -u +%Y-%m-%d), $(nproc) cores, ${SECS} s per cell, pgbench -j 2)"
echo
echo "Queries per second / mean latency in ms, over 127.0.0.1."
echo
echo "| query | protocol | 1 client | 8 clients | 32 clients |"
echo "|---|---|---|---|---|"
for q in one count group; do
    for m in simple extended; do
        row="| quarry: $q | $m |"
        for c in 1 8 32; do
            read -r tps lat <<< "$(bench "$QP" "$W/$q.sql" $c $m quarry quarry)"
            row="$row $tps / $lat |"
        done
        echo "$row"
    done
done
if [ -n "$PGP" ]; then
    for m in simple extended; do
        row="| PostgreSQL 15: SELECT 1 | $m |"
        for c in 1 8 32; do
            read -r tps lat <<< "$(bench "$PGP" "$W/one.sql" $c $m quarry quarry)"
            row="$row $tps / $lat |"
        done
        echo "$row"
    done
else
    echo "| PostgreSQL 15 | (not installed) | | | |"
fi
echo
echo "count: \`$(cat "$W/count.sql")\`; group: \`$(cat "$W/group.sql")\`"
echo
echo "The same count without the protocol (\`quarry sql --repeat 200\`, one session):"
echo
echo '```'
$Q sql --data "$DATA" --format csv --repeat 200 "$(sed 's/;$//' "$W/count.sql")" 2>&1 >/dev/null
echo '```'
} | tee "$REPORT"
