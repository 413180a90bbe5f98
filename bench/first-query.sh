#!/usr/bin/env bash
# bench/first-query.sh - the first query after opening a table, old binary
# against new: each query runs in a new process (`quarry search --repeat 2`,
# its "first" figure: the search that opens every segment, page cache as
# it is), binaries alternating, ROUNDS times; prints min-max per binary.
# Warm the page cache first (a few queries) for figures that do not measure
# the disk. Used for issue 16's item 4 (a 525-segment table under 50 ms).
#
# Usage: D=bench/out/scale-100000000 R=3 bash bench/first-query.sh OLD NEW ...
# A binary may name its own table as BIN@DIR (old and new formats: each
# binary on the table it wrote), else it reads $D. Prints min / median /
# max per binary: one round on a virtual machine can be twice another.
set -u
D=${D:-bench/out/scale-100000000}
R=${R:-3}
declare -a QS=(
"count|failed" "count|\"failed to place order\"" "count|ord*" "count|like:%tion" "count|/c.che/" "count|cahce~1" "count|error -cache" "count|atleast(2, error, failed, charge, cache)" "count|zzzqqq"
"score|connection OR request OR conversion OR post" "score|service:payment AND failed" "score|(failed OR error) AND service:cart" "score|atleast(2, error, failed, charge, cache)" "score|\"failed to place order\"" "score|error -cache"
"time|service:checkout AND failed AND order" "time|failed")
declare -A MIN MAX ALL
for r in $(seq $R); do
  for bd in "$@"; do
    b=${bd%@*}; dir=$D; [[ $bd == *@* ]] && dir=${bd#*@}
    for qq in "${QS[@]}"; do
      kind=${qq%%|*}; q=${qq#*|}
      case $kind in
        count) v=$($b search --data $dir --table logs --count --repeat 2 "$q" 2>&1 >/dev/null | grep -o 'first [0-9.]*' | sed 's/first //');;
        score) v=$($b search --data $dir --table logs --top 100 --repeat 2 "$q" 2>&1 >/dev/null | grep -o 'first [0-9.]*' | sed 's/first //');;
        time) v=$($b search --data $dir --table logs --top 100 --by time --repeat 2 "$q" 2>&1 >/dev/null | grep -o 'first [0-9.]*' | sed 's/first //');;
      esac
      k="$bd|$qq"
      ALL[$k]="${ALL[$k]:-} $v"
      if [ -z "${MIN[$k]:-}" ] || (( $(echo "$v < ${MIN[$k]}" | bc) )); then MIN[$k]=$v; fi
      if [ -z "${MAX[$k]:-}" ] || (( $(echo "$v > ${MAX[$k]}" | bc) )); then MAX[$k]=$v; fi
    done
  done
done
printf "| query |"; for bd in "$@"; do printf " %s |" $(basename ${bd%@*}); done; echo
printf "|---|"; for b in "$@"; do printf "%s" "---:|"; done; echo
for qq in "${QS[@]}"; do
  printf "| %s \`%s\` |" "${qq%%|*}" "${qq#*|}"
  for bd in "$@"; do
    k="$bd|$qq"
    med=$(echo ${ALL[$k]} | tr ' ' '\n' | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}')
    printf " %.1f / %.1f / %.1f |" ${MIN[$k]} $med ${MAX[$k]}
  done; echo
done
