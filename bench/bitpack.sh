#!/usr/bin/env bash
# Bit-unpacking kernels end to end: the hot count latency of postings-heavy
# queries with the AVX2 unpack (default dispatch) and with QUARRY_NO_SIMD=1
# (scalar), alternating the two ROUNDS times per query and printing the
# median of each round's `--repeat 20` median. Then the kernel micro-
# benchmark (bench/bitpack.c). Not part of `make test`.
#
#   bash bench/bitpack.sh [ROWS]      (default 1000000; data in $TMPDIR, removed)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
rounds=${ROUNDS:-5}
threads=${THREADS:-}
make -j1 --no-print-directory -s build/rel/quarry build/rel/bench/bitpack
q=build/rel/quarry
tmp=$(mktemp -d "${TMPDIR:-/tmp}/quarry-bitpack-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$q" gen --rows "$rows" --seed 42 > "$tmp/logs.ndjson"
"$q" ingest --quiet --data "$tmp/data" --table otel_logs "$tmp/logs.ndjson"
rm -f "$tmp/logs.ndjson"

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
hot() { # prints the hot median in ms of one --repeat 20 run
    "$q" search --data "$tmp/data" --table otel_logs --count --repeat 20 ${threads:+--threads $threads} \
        "$1" 2>&1 >/dev/null | sed -n 's/^hot: median \([0-9.]*\) ms.*/\1/p'
}

echo "| query | count | scalar (QUARRY_NO_SIMD=1) ms | avx2 ms | change |"
echo "|---|---:|---:|---:|---:|"
for query in '"failed to place order"' 'failed AND charge AND card AND cache' 'error -cache' \
    'order AND NOT failed' 'atleast(2, error, failed, charge, cache)'; do
    count=$("$q" search --data "$tmp/data" --table otel_logs --count "$query")
    s=(); a=()
    for ((r = 0; r < rounds; r++)); do
        s+=("$(QUARRY_NO_SIMD=1 hot "$query")")
        a+=("$(hot "$query")")
    done
    ms=$(printf '%s\n' "${s[@]}" | median)
    ma=$(printf '%s\n' "${a[@]}" | median)
    echo "| \`$query\` | $count | $ms | $ma | $(awk -v s="$ms" -v a="$ma" 'BEGIN {printf "%+.1f%%", (a - s) / s * 100}') |"
done
echo
build/rel/bench/bitpack 2>/dev/null
