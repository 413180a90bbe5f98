#!/usr/bin/env bash
# bench/search.sh - full-text search at N rows (default 10M): index bytes per
# row by structure, and hot count latency per filter kind (median of 20 runs
# with the table open, `quarry search --count --repeat 20`), next to grep
# and ripgrep over the NDJSON as the brute-force floor.
# Usage: bash bench/search.sh [ROWS]     (writes bench/out/search-ROWS.md)
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-10000000}
source bench/lib.sh
ensure_table "$ROWS"
REPORT=$OUT/search-$ROWS.md
{
echo "# Search at $ROWS rows ($(date -u +%Y-%m-%d), $(nproc) cores)"
echo
echo '## Index bytes per row'
echo
echo '```'
$Q stats --data "$DATA" --table logs | sed -n '1p;/^index/,$p'
echo '```'
echo
echo '## Hot count latency (ms, median of 20; table open)'
echo
echo '| kind | query | rows | median | p90 |'
echo '|---|---|---:|---:|---:|'
} > "$REPORT"
run() {
    local kind=$1 q=$2 res lat
    res=$($Q search --data "$DATA" --table logs --count --repeat 20 "$q" 2>"$OUT/lat.txt")
    lat=$(cat "$OUT/lat.txt")
    med=$(sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' <<<"$lat")
    p90=$(sed -n 's/.*p90 \([0-9.]*\) ms.*/\1/p' <<<"$lat")
    printf '| %s | `%s` | %s | %s | %s |\n' "$kind" "$q" "$res" "$med" "$p90" | tee -a "$REPORT"
}
run term failed
run term payment
run AND 'failed AND order'
run 'AND (4, rare)' 'failed AND charge AND card AND cache'
run OR 'error OR failed'
run 'min-should-match' 'atleast(2, error, failed, charge, cache)'
run NOT 'error -cache'
run phrase '"failed to place order"'
run 'phrase (8 words)' '"post to email service expected 200 got 500"'
run 'phrase with gap' '"failed ? ? order"'
run proximity '"failed order"~3'
run prefix 'ord*'
run prefix 'conn*'
run regexp '/c.che/'
run LIKE 'like:%tion'
run LIKE 'like:%nnec%'
run 'fuzzy 1' 'cahce~1'
run 'fuzzy 2' 'cahce~2'
run keyword 'service:cart'
run 'keyword AND term' 'service:payment AND failed'
run 'numeric range' 'sevnum:>=13'
run 'time window' 'time:[2025-09-23T00:00:01Z TO 2025-09-23T00:00:02Z]'
run nested '(error OR failed) AND (order OR charge) AND NOT cache'

{
echo
echo '## Brute-force floor over the NDJSON (wall seconds, one run, file in page cache)'
echo
echo '| tool | pattern | matching lines | seconds |'
echo '|---|---|---:|---:|'
} >> "$REPORT"
cat "$CORPUS" > /dev/null
floor() {
    local tool=$1 pat=$2 n t0 t1
    t0=$(date +%s.%N)
    if [ "$tool" = grep ]; then n=$(LC_ALL=C grep -ciwE "$pat" "$CORPUS" || true)
    else n=$(rg -ciw "$pat" "$CORPUS" || true); fi
    t1=$(date +%s.%N)
    printf '| %s | `%s` | %s | %.3f |\n' "$tool" "$pat" "$n" "$(echo "$t1 - $t0" | bc)" | tee -a "$REPORT"
}
command -v bc >/dev/null || apt-get install -y -qq bc >/dev/null
floor grep failed
floor grep 'failed to place order'
floor grep 'c.che'
if command -v rg >/dev/null; then
    floor rg failed
    floor rg 'failed to place order'
    floor rg 'c.che'
fi
echo
echo "(grep/rg count lines with the word anywhere in the line, including attributes: an upper bound of the Body matches, not the same answer)" | tee -a "$REPORT"
echo "report: $REPORT"
