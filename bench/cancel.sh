#!/usr/bin/env bash
# bench/cancel.sh DATA [TABLE] - how soon a search stops past its deadline:
# every query kind, counted and top-k, with --timeout 2, 5 and 20 ms; prints
# the overshoot (ms past the deadline) `quarry search --explain` reports.
# The issue's bound is 50 ms. Example (10M rows): bench/cancel.sh bench/out/ab-B-10000000
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:?usage: bench/cancel.sh DATA [TABLE]}
TABLE=${2:-logs}
Q=./build/rel/quarry
queries=('failed OR error OR cache' '"failed to place order"' '"failed ? ? order"' 'cahce~2'
         'like:%tion' '/.*e.*r.*/' 'atleast(2, error, failed, charge, cache)' 'sevnum:>=13')
printf '| query | mode | timeout ms | past the deadline ms |\n|---|---|---:|---:|\n'
worst=0
for q in "${queries[@]}"; do
    for mode in --count "--top 100" "--top 100 --by time"; do
        for t in 2 5 20; do
            # shellcheck disable=SC2086
            line=$($Q search --data "$DATA" --table "$TABLE" $mode --timeout $t --explain "$q" 2>&1 >/dev/null |
                   grep -o 'start, [0-9.]* ms past' | grep -o '[0-9.]* ms past' | cut -d' ' -f1 || true)
            [ -n "$line" ] || line="finished in time"
            printf '| `%s` | %s | %s | %s |\n' "$q" "$mode" "$t" "$line"
            case $line in finished*) ;; *) worst=$(echo "$line $worst" | awk '{print ($1>$2)?$1:$2}') ;; esac
        done
    done
done
echo
echo "worst: $worst ms past the deadline"
