#!/usr/bin/env bash
# bench/ab.sh - an old binary against a new one, alternating, in one session:
# what a change to a hot path is measured with (DEVELOPERS: "old against new,
# alternating"). Each binary ingests the same OpenTelemetry corpus into its
# own data directory (ingest time and size, ROUNDS times alternating), then
# every query of the count, top-100 and newest-100 lists runs ROUNDS times
# per binary, A then B then A ..., each a hot median of REPS runs with the
# table open; the report gives both medians of medians and B/A.
#
# Usage: bash bench/ab.sh OLD_QUARRY NEW_QUARRY [ROWS] [ROUNDS]
#   e.g. git worktree add /tmp/old HEAD~3 && make -C /tmp/old
#        bash bench/ab.sh /tmp/old/build/rel/quarry build/rel/quarry 10000000 3
# Output: bench/out/ab-ROWS.md (BENCH_OUT to change); REPS (default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
A=$(realpath "$1")
B=$(realpath "$2")
ROWS=${3:-1000000}
ROUNDS=${4:-3}
REPS=${REPS:-20}
OUT=${BENCH_OUT:-bench/out}
mkdir -p "$OUT"
CORPUS=$OUT/otel-$ROWS.ndjson
[ -s "$CORPUS" ] || "$B" gen --rows "$ROWS" --seed 42 > "$CORPUS"
REPORT=$OUT/ab-$ROWS.md

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# ---- ingest: time and bytes, alternating -------------------------------------
declare -A ING BYTES
for r in $(seq "$ROUNDS"); do
    for side in A B; do
        bin=${!side}
        d=$OUT/ab-$side-$ROWS
        rm -rf "$d"
        t0=$(date +%s.%N)
        "$bin" ingest --data "$d" --table logs --quiet "$CORPUS"
        t1=$(date +%s.%N)
        ING[$side]+="$(echo "$t1 - $t0" | bc) "
        BYTES[$side]=$(du -sb "$d/logs" | cut -f1)
    done
done
# both tables must read back the same rows
cmp <("$A" cat --data "$OUT/ab-A-$ROWS" --table logs) <("$B" cat --data "$OUT/ab-B-$ROWS" --table logs)

lat() { # side, mode args..., query: the hot median (ms) of REPS runs
    local side=$1; shift
    local bin=${!side}
    "$bin" search --data "$OUT/ab-$side-$ROWS" --table logs --repeat "$REPS" "$@" 2>&1 >/dev/null |
        sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'
}

{
echo "# $(basename "$A") (A) against $(basename "$B") (B) at $ROWS rows"
echo
echo "$(date -u +%Y-%m-%d), $(nproc) cores; A = $A, B = $B; $ROUNDS alternating rounds, each a hot median of $REPS runs."
echo
echo "| | A | B | B/A |"
echo "|---|---:|---:|---:|"
ia=$(tr ' ' '\n' <<<"${ING[A]}" | grep . | median)
ib=$(tr ' ' '\n' <<<"${ING[B]}" | grep . | median)
printf '| ingest seconds (median of %s) | %.2f | %.2f | %.3f |\n' "$ROUNDS" "$ia" "$ib" "$(echo "$ib / $ia" | bc -l)"
printf '| bytes on disk | %s | %s | %.4f |\n' "${BYTES[A]}" "${BYTES[B]}" "$(echo "${BYTES[B]} / ${BYTES[A]}" | bc -l)"
echo
echo "| mode | query | rows A | rows B | A ms | B ms | B/A |"
echo "|---|---|---:|---:|---:|---:|---:|"
} | tee "$REPORT"

one() { # mode-name, query, mode args...
    local name=$1 q=$2; shift 2
    local la="" lb="" na nb
    na=$("$A" search --data "$OUT/ab-A-$ROWS" --table logs --count "$q")
    nb=$("$B" search --data "$OUT/ab-B-$ROWS" --table logs --count "$q")
    for r in $(seq "$ROUNDS"); do
        la+="$(lat A "$@" "$q") "
        lb+="$(lat B "$@" "$q") "
    done
    local ma mb
    ma=$(tr ' ' '\n' <<<"$la" | grep . | median)
    mb=$(tr ' ' '\n' <<<"$lb" | grep . | median)
    printf '| %s | `%s` | %s | %s | %s | %s | %.2f |\n' "$name" "$q" "$na" "$nb" "$ma" "$mb" \
        "$(echo "$mb / $ma" | bc -l)" | tee -a "$REPORT"
}

for q in failed 'failed AND order' 'failed AND charge AND card AND cache' 'error OR failed' \
    'atleast(2, error, failed, charge, cache)' 'error -cache' '"failed to place order"' \
    '"post to email service expected 200 got 500"' '"failed ? ? order"' '"failed order"~3' \
    'ord*' '/c.che/' 'like:%tion' 'cahce~1' 'cahce~2' 'service:cart' \
    'service:payment AND failed' 'sevnum:>=13' 'time:[2025-09-23T00:00:01Z TO 2025-09-23T00:00:02Z]'; do
    one count "$q" --count
done
for q in failed payment 'failed AND order' 'error OR failed' 'atleast(2, error, failed, charge, cache)' \
    'error -cache' '"failed to place order"' '"failed order"~3' 'cahce~1' 'service:payment AND failed'; do
    one top100 "$q" --top 100 --by score
done
for q in failed '"failed to place order"' 'service:cart' 'sevnum:>=17' 'NOT failed'; do
    one newest100 "$q" --top 100 --by time
done
echo "report: $REPORT"
