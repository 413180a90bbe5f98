#!/usr/bin/env bash
# bench/psql.sh [ROWS] [REPS] - the SQL families of bench/sql-queries.tsv
# through real psql against `quarry serve` (one connection; psql's \timing,
# which measures from sending the query to having printed its result),
# next to the same statements through `quarry sql --repeat` (one session,
# no protocol). Each query runs REPS + 1 times in one psql session, the first
# dropped; the hot median is reported, and the answers of the two paths are
# compared (psql's unaligned rows against `quarry sql --format csv` read the
# same way). The server listens on 127.0.0.1, on a free port, and stops at
# exit. Writes bench/out/psql-ROWS.md. Default 1M rows; 10M is the headline.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
REPS=${2:-10}
source bench/lib.sh
ensure_table "$ROWS"
REPORT=$OUT/psql-$ROWS.md
QUERIES=bench/sql-queries.tsv
W=$(mktemp -d)
pid=""
cleanup() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT

$Q serve --data "$DATA" --listen 127.0.0.1:0 --port-file "$W/port" > "$W/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -s "$W/port" ] && break; sleep 0.1; done
PORT=$(cat "$W/port")
PSQL=(psql -X -q -h 127.0.0.1 -p "$PORT" -U quarry -d quarry -v ON_ERROR_STOP=1)

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

{
echo "# SQL families through psql at $ROWS rows ($(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "Hot medians of $REPS runs (ms). psql: one connection to \`quarry serve\` on 127.0.0.1, psql's"
echo "\\timing (query sent to result printed). quarry sql: \`--repeat\` in one session, no protocol."
echo "overhead = psql - quarry sql."
echo
echo '| family | query | psql ms | quarry sql ms | overhead ms | answers |'
echo '|---|---|---:|---:|---:|---|'
} > "$REPORT"
mism=0
while IFS=$'\t' read -r fam name qsql _; do
    [[ -z "$fam" || "$fam" == \#* ]] && continue
    {
        echo '\timing on'
        for _ in $(seq 0 "$REPS"); do echo "$qsql;"; done
    } > "$W/q.sql"
    "${PSQL[@]}" -A -t -f "$W/q.sql" > "$W/out" 2>&1
    ptime=$(grep '^Time: ' "$W/out" | tail -n +2 | awk '{print $2}' | median)
    # one run's rows: the lines between the first two Time: lines' runs
    awk '/^Time: / {exit} {print}' "$W/out" > "$W/psql.rows"
    qlat=$($Q sql --data "$DATA" --repeat "$REPS" "$qsql" 2>&1 >/dev/null | sed -n 's/^hot: median \([0-9.]*\) ms.*/\1/p')
    # quarry sql's CSV read back as psql's unaligned rows (fields joined by |)
    $Q sql --data "$DATA" --format csv "$qsql" |
        python3 -c 'import csv, sys; r = csv.reader(sys.stdin); next(r); [print("|".join(row)) for row in r]' > "$W/quarry.rows"
    # timestamps: psql prints PostgreSQL's text (microseconds), quarry sql RFC 3339 (ns)
    norm() { sed -E 's/([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9:]{8})[.0-9]*(\+00|Z)/\1 \2/g' "$1"; }
    if cmp -s <(norm "$W/psql.rows") <(norm "$W/quarry.rows"); then
        agree=equal
    else
        agree="MISMATCH"
        mism=$((mism + 1))
    fi
    over=$(awk -v p="$ptime" -v q="$qlat" 'BEGIN {printf "%.3f", p - q}')
    printf '| %s | %s | %s | %s | %s | %s |\n' "$fam" "$name" "$ptime" "$qlat" "$over" "$agree" | tee -a "$REPORT"
done < "$QUERIES"
echo "report: $REPORT ($mism mismatches)"
