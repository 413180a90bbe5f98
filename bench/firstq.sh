#!/usr/bin/env bash
# bench/firstq.sh - the first query after opening a table, two source trees
# side by side: bench/firstq.c built against each tree's library, each
# query's quartiles of N fresh opens in one process (no process start per
# query: figures steady to a millisecond or two), the trees alternating
# ROUNDS times. For a change to what a first query reads (issue 16 item 4);
# bench/first-query.sh times the CLI as a user runs it.
#
# Usage: D=bench/out/scale13-100000000 bash bench/firstq.sh OLD_TREE NEW_TREE
#   Each tree built (`make` there: build/rel/libquarry.a); N (default 15),
#   ROUNDS (default 2). Warm the page cache first (cat the segments).
set -euo pipefail
cd "$(dirname "$0")/.."
D=${D:-bench/out/scale13-100000000}
N=${N:-15}
ROUNDS=${ROUNDS:-2}
old=$1 new=$2
libs="-lpg_query -lprotobuf-c -lmicrohttpd -lz -lzstd -lxxhash -lunistring -lssl -lcrypto -lpthread -lm"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/quarry-firstq-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for side in old new; do
    tree=${!side}
    # shellcheck disable=SC2086
    ${CC:-cc} -std=gnu11 -O2 -D_GNU_SOURCE -I"$tree/src" -I"$tree/build/gen" bench/firstq.c \
        "$tree/build/rel/libquarry.a" $libs -o "$tmp/$side"
done
declare -a QS=(
"count|failed" "count|\"failed to place order\"" "count|ord*" "count|like:%tion" "count|/c.che/"
"count|cahce~1" "count|error -cache" "count|atleast(2, error, failed, charge, cache)" "count|zzzqqq"
"score|connection OR request OR conversion OR post" "score|service:payment AND failed"
"score|(failed OR error) AND service:cart" "score|atleast(2, error, failed, charge, cache)"
"score|\"failed to place order\"" "score|error -cache"
"time|service:checkout AND failed AND order" "time|failed")
echo "| query | old: q1 median q3 (ms), each round | new |"
echo "|---|---|---|"
for qq in "${QS[@]}"; do
    mode=${qq%%|*} q=${qq#*|} o="" n=""
    for ((r = 0; r < ROUNDS; r++)); do
        o+="$("$tmp/old" "$D" logs "$mode" "$q" "$N"); "
        n+="$("$tmp/new" "$D" logs "$mode" "$q" "$N"); "
    done
    echo "| $mode \`$q\` | ${o%; } | ${n%; } |"
done
