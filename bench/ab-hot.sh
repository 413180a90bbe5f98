#!/usr/bin/env bash
# bench/ab-hot.sh - an old binary against a new one on the same table, hot:
# each query R times per binary, alternating (old, new, old, ...), each a
# hot median of REPS runs (`quarry search --repeat REPS`). For paths whose
# format did not change, where bench/ab.sh's two ingests are not needed.
# Prints one Markdown row per query: the old medians, then the new.
#
# Usage: D=bench/out/scale-100000000 MODE="--count" bash bench/ab-hot.sh OLD NEW QUERY...
#   MODE: --count, "--top 100" or "--top 100 --by time"; R (default 3),
#   REPS (default 20). A binary may name its own table as BIN@DIR (old and
#   new formats: each binary on the table it wrote), else it reads $D.
set -euo pipefail
D=${D:-bench/out/scale-100000000}
MODE=${MODE:---count}
R=${R:-3}
REPS=${REPS:-20}
OLD=$1 NEW=$2
shift 2
echo "| query | old (ms) | new (ms) |"
echo "|---|---|---|"
for q in "$@"; do
  o= n=
  for r in $(seq "$R"); do
    for b in old new; do
      bin=$OLD; [ $b = new ] && bin=$NEW
      dir=$D; [[ $bin == *@* ]] && dir=${bin#*@} && bin=${bin%@*}
      # shellcheck disable=SC2086
      v=$("$bin" search --data "$dir" --table logs $MODE --repeat "$REPS" "$q" 2>&1 >/dev/null |
          grep -o 'median [0-9.]*' | sed 's/median //')
      if [ $b = old ]; then o="$o $v"; else n="$n $v"; fi
    done
  done
  printf '| `%s` |%s |%s |\n' "$q" "$o" "$n"
done
