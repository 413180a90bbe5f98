#!/usr/bin/env bash
# bench/topk.sh - top-k at N rows (default 10M): per query shape, the hot
# median latency of the top 100 by BM25 with block-max pruning and with
# exhaustive scoring (every match scored), the share of postings blocks the
# pruning skipped; then newest-100 (ORDER BY Timestamp DESC LIMIT 100) and
# first-100 (LIMIT 100). Every latency includes reading the 100 rows (late
# materialisation). `quarry search --top 100 [--by time] --repeat 20`.
# Usage: bash bench/topk.sh [ROWS]     (writes bench/out/topk-ROWS.md)
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-10000000}
REPS=${REPS:-20}
source bench/lib.sh
ensure_table "$ROWS"
REPORT=$OUT/topk-$ROWS.md
S="$Q search --data $DATA --table logs"

median() { sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' "$1"; }

{
echo "# Top-k at $ROWS rows ($(date -u +%Y-%m-%d), $(nproc) cores, $($Q stats --data "$DATA" --table logs | head -1 | sed 's/.*in \([0-9]*\) segments.*/\1/') segments)"
echo
echo "Hot median of $REPS runs with the table open, 2 threads; rows returned and read."
echo
echo '## Top 100 by BM25: block-max pruning vs exhaustive scoring'
echo
echo '| shape | query | matches | pruned ms | exhaustive ms | speed-up | blocks skipped | rows reaching the heap (pruned / all) |'
echo '|---|---|---:|---:|---:|---:|---:|---:|'
} > "$REPORT"

score() {
    local shape=$1 q=$2 n pr ex skip scored all
    n=$($S --count "$q")
    $S --top 100 --explain "$q" 2>"$OUT/x.txt" >/dev/null
    skip=$(sed -n 's/.*postings blocks: \([0-9]*\) of \([0-9]*\) skipped (\([0-9.]*%\)).*/\1 of \2 (\3)/p' "$OUT/x.txt")
    scored=$(sed -n 's/.*searched, \([0-9]*\) rows reached the heap.*/\1/p' "$OUT/x.txt")
    $S --top 100 --exhaustive --explain "$q" 2>"$OUT/x.txt" >/dev/null
    all=$(sed -n 's/.*searched, \([0-9]*\) rows reached the heap.*/\1/p' "$OUT/x.txt")
    $S --top 100 --repeat "$REPS" "$q" 2>"$OUT/lat.txt" >/dev/null
    pr=$(median "$OUT/lat.txt")
    $S --top 100 --exhaustive --repeat "$REPS" "$q" 2>"$OUT/lat.txt" >/dev/null
    ex=$(median "$OUT/lat.txt")
    printf '| %s | `%s` | %s | %s | %s | %.1fx | %s | %s / %s |\n' "$shape" "$q" "$n" "$pr" "$ex" \
        "$(echo "$ex / $pr" | bc -l)" "$skip" "$scored" "$all" | tee -a "$REPORT"
}
score 'term, frequent' failed
score 'term, mid' payment
score 'term, rare' 'timeout'
score 'AND' 'failed AND order'
score 'AND of 4' 'failed AND charge AND card AND cache'
score 'OR' 'error OR failed'
score 'OR, rare + frequent' 'timeout OR failed'
score 'OR of 4' 'error OR failed OR cache OR timeout'
score 'min-should-match' 'atleast(2, error, failed, charge, cache)'
score 'NOT' 'error -cache'
score 'phrase' '"failed to place order"'
score 'phrase (8 words)' '"post to email service expected 200 got 500"'
score 'proximity' '"failed order"~3'
score 'prefix (constant score)' 'ord*'
score 'fuzzy (constant score)' 'cahce~1'
score 'term AND keyword filter' 'service:payment AND failed'
score 'term AND time window' 'failed AND time:[2025-09-23T00:00:01Z TO 2025-09-23T00:00:02Z]'

{
echo
echo '## Newest 100 (ORDER BY Timestamp DESC LIMIT 100) and first 100 (LIMIT 100)'
echo
echo '| query | matches | newest-100 ms | segments searched | first-100 ms |'
echo '|---|---:|---:|---:|---:|'
} >> "$REPORT"
newest() {
    local q=$1 n t f segs
    n=$($S --count "$q")
    $S --top 100 --by time --explain "$q" 2>"$OUT/x.txt" >/dev/null
    segs=$(sed -n 's/^\([0-9]*\) of \([0-9]*\) segments searched.*/\1 of \2/p' "$OUT/x.txt")
    $S --top 100 --by time --repeat "$REPS" "$q" 2>"$OUT/lat.txt" >/dev/null
    t=$(median "$OUT/lat.txt")
    $S --limit 100 --repeat "$REPS" "$q" 2>"$OUT/lat.txt" >/dev/null
    f=$(median "$OUT/lat.txt")
    printf '| `%s` | %s | %s | %s | %s |\n' "$q" "$n" "$t" "$segs" "$f" | tee -a "$REPORT"
    QN[$q]=$n; QT[$q]=$t; QF[$q]=$f
}
declare -A QN QT QF
newest failed
newest 'error OR failed'
newest '"failed to place order"'
newest 'timeout'
newest 'service:cart'
newest 'sevnum:>=17'
newest 'cahce~1'
newest 'NOT failed'
# --- the peer: DuckDB (native table, no text index: fts cannot be installed
# offline), same filters; skipped when @duckdb/node-api is not installed ---
PEERS=bench/peers
if [ -f "$PEERS/node_modules/@duckdb/node-api/package.json" ] && command -v node >/dev/null; then
    DUCK=$OUT/duck-$ROWS.duckdb
    if [ ! -s "$DUCK" ]; then
        echo "loading $CORPUS into DuckDB ($DUCK)"
        NODE_PATH=$PEERS/node_modules node bench/duckdb-load.cjs "$CORPUS" "$DUCK" >/dev/null
    fi
    {
    echo
    echo '## Against DuckDB (same rows, native table; word filters as regular expressions)'
    echo
    echo '| filter | rows (Quarry / DuckDB) | newest-100 Quarry ms | DuckDB ms | ratio | first-100 Quarry ms | DuckDB ms | ratio |'
    echo '|---|---:|---:|---:|---:|---:|---:|---:|'
    } >> "$REPORT"
    NODE_PATH=$PEERS/node_modules node bench/duckdb-topk.cjs "$DUCK" 10 > "$OUT/duck-topk.jsonl"
    while IFS= read -r line; do
        name=$(sed 's/.*"name":"\(\(\\"\|[^"]\)*\)".*/\1/; s/\\"/"/g' <<<"$line")
        cnt=$(sed 's/.*"count":\([0-9]*\).*/\1/' <<<"$line")
        dn=$(sed 's/.*"newest_ms":\([0-9.]*\).*/\1/' <<<"$line")
        df=$(sed 's/.*"first_ms":\([0-9.]*\).*/\1/' <<<"$line")
        printf '| `%s` | %s / %s | %s | %.1f | %.0fx | %s | %.1f | %.0fx |\n' "$name" "${QN[$name]:-?}" "$cnt" \
            "${QT[$name]:-?}" "$dn" "$(echo "$dn / ${QT[$name]:-1}" | bc -l)" "${QF[$name]:-?}" "$df" \
            "$(echo "$df / ${QF[$name]:-1}" | bc -l)" | tee -a "$REPORT"
    done < "$OUT/duck-topk.jsonl"
fi
echo "report: $REPORT"
