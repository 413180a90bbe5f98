#!/usr/bin/env bash
# bench/scale.sh - every search family at several table sizes, side by side
# (issue "Search at 100M rows"): each size is generated and streamed into
# `quarry ingest` (no NDJSON file on disk: 100M rows would be ~86 GB), then
# counts, top-100 by score and newest-100 run as hot medians of REPS runs,
# with what --explain says (postings blocks and segments skipped) and the
# first query after opening the table.
#
# Usage: bash bench/scale.sh [SIZE...]   (default: 10000000 100000000)
#   SIZE is ROWS, or ROWS:merged for the same rows after `quarry optimize`
#   (segments of MERGE_ROWS rows, default 1048576: VACUUM in SQL).
#   tables: bench/out/scale-ROWS[-merged] (kept; delete to rebuild); report:
#   bench/out/scale.md. REPS (default 20), THREADS (default: all CPUs).
set -euo pipefail
cd "$(dirname "$0")/.."
Q=${Q:-./build/rel/quarry}
OUT=${BENCH_OUT:-bench/out}
REPS=${REPS:-20}
THREADS=${THREADS:-$(nproc)}
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000000 100000000)
mkdir -p "$OUT"
REPORT=$OUT/scale.md

# the table directory of a size: scale-ROWS or scale-ROWS-merged
dir_of() { local r=${1%%:*} v=; [[ $1 == *:* ]] && v=-${1#*:}; echo "$OUT/scale-$r$v"; }

declare -A INFO
for size in "${SIZES[@]}"; do
    rows=${size%%:*}
    d=$(dir_of "$size")
    if ! $Q stats --data "$d" --table logs >/dev/null 2>&1; then
        rm -rf "$d"
        echo "ingesting $rows rows into $d (streamed from quarry gen)" >&2
        t0=$(date +%s.%N)
        $Q gen --rows "$rows" --seed 42 | $Q ingest --data "$d" --table logs --quiet -
        t1=$(date +%s.%N)
        echo "$t1 - $t0" | bc > "$d/.ingest-seconds"
        if [[ $size == *:merged ]]; then
            echo "merging $d (quarry optimize)" >&2
            $Q optimize --data "$d" --table logs --segment-rows "${MERGE_ROWS:-1048576}" >&2
            t2=$(date +%s.%N)
            echo "$t2 - $t1" | bc > "$d/.optimize-seconds"
        fi
    fi
    segs=$($Q stats --data "$d" --table logs | sed -n 's/.* in \([0-9]*\) segments.*/\1/p')
    bytes=$(du -sb "$d/logs" | cut -f1)
    opt=""
    [ -f "$d/.optimize-seconds" ] && opt=" + $(cat "$d/.optimize-seconds") s optimize"
    INFO[$size]="$(cat "$d/.ingest-seconds" 2>/dev/null || echo '?') s ingest$opt, $bytes bytes, $segs segments"
done

# one run: prints "median|first|count|explain" for a mode and query
run() { # size, query, mode args...
    local size=$1 q=$2; shift 2
    local d err n med first ex
    d=$(dir_of "$size")
    err=$($Q search --data "$d" --table logs --threads "$THREADS" --repeat "$REPS" "$@" "$q" 2>&1 >/dev/null)
    med=$(sed -n 's/.*median \([0-9.]*\) ms.*/\1/p' <<<"$err")
    first=$(sed -n 's/.*(first \([0-9.]*\) ms).*/\1/p' <<<"$err")
    n=$($Q search --data "$d" --table logs --count "$q")
    ex=""
    if [[ " $* " == *" --by score "* ]]; then
        ex=$($Q search --data "$d" --table logs --threads "$THREADS" --explain "$@" "$q" 2>&1 >/dev/null |
             sed -n 's/^\([0-9]*\) of \([0-9]*\) segments searched (\([0-9]*\) skipped whole.*postings blocks: \([0-9]*\) of \([0-9]*\) skipped.*/\1 of \2 segs searched, \4 of \5 blocks skipped/p')
    fi
    echo "$med|$first|$n|$ex"
}

{
echo "# Search families by table size"
echo
echo "$(date -u +%Y-%m-%d), $(nproc) cores, $THREADS threads, hot median of $REPS runs (ms); 'first' is the first query after opening the table."
echo
for rows in "${SIZES[@]}"; do echo "- $rows rows: ${INFO[$rows]}"; done
echo
hdr="| mode | query |"; sep="|---|---|"
for rows in "${SIZES[@]}"; do hdr+=" $rows ms | first | rows | pruning |"; sep+="---:|---:|---:|---|"; done
echo "$hdr"; echo "$sep"
} | tee "$REPORT"

line() { # mode-name, query, mode args...
    local name=$1 q=$2; shift 2
    local row="| $name | \`$q\` |"
    for rows in "${SIZES[@]}"; do
        IFS='|' read -r med first n ex <<<"$(run "$rows" "$q" "$@")"
        row+=" $med | $first | $n | $ex |"
    done
    echo "$row" | tee -a "$REPORT"
}

for q in failed 'failed AND order' 'error OR failed' 'atleast(2, error, failed, charge, cache)' \
    'error -cache' '"failed to place order"' '"failed ? ? order"' '"failed order"~3' 'ord*' \
    '/c.che/' 'like:%tion' 'cahce~1' 'service:payment AND failed' 'sevnum:>=13'; do
    line count "$q" --count
done
for q in 'connection OR request OR conversion OR post' 'failed OR error' 'failed AND order' \
    'atleast(2, error, failed, charge, cache)' charge '"failed to place order"' \
    '"failed ? ? order"' '"failed order"~3' 'error -cache' \
    'service:payment AND failed' '(failed OR error) AND service:cart' \
    'service:ad AND connection' 'service:currency AND (failed OR error)'; do
    line top100 "$q" --top 100 --by score
done
for q in failed 'service:checkout AND failed AND order' '"failed to place order"' 'NOT failed'; do
    line newest100 "$q" --top 100 --by time
done
echo "report: $REPORT"
