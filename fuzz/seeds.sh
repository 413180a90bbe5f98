#!/usr/bin/env bash
# fuzz/seeds.sh - regenerate the segment and index seeds of the fuzz corpora
# after a segment format change (old seeds would only be refused by version).
# Usage: bash fuzz/seeds.sh   (needs build/rel: make)
set -euo pipefail
cd "$(dirname "$0")/.."
Q=./build/rel/quarry
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cc -std=gnu11 -O1 -D_GNU_SOURCE -Isrc -o "$T/mkseed" fuzz/mkseed.c build/rel/libquarry.a \
    -lzstd -lxxhash -lunistring -lpthread -lm
seg() { # rows-file -> the table's one segment
    $Q ingest --data "$T/$1.d" --table t --quiet "$T/$1.ndjson"
    ls "$T/$1.d/t/"*.qseg
}
$Q gen --rows 3 --seed 5 > "$T/3.ndjson"
$Q gen --rows 400 --seed 5 > "$T/400.ndjson"
echo '{"Body":"one sparse row","SeverityNumber":9}' > "$T/1.ndjson"
cp "$(seg 3)" fuzz/corpus/segment/three_rows.qseg
cp "$(seg 1)" fuzz/corpus/segment/one_sparse_row.qseg
"$T/mkseed" "$(ls "$T/3.d/t/"*.qseg)" 1 fuzz/corpus/index/body3.bin
s400=$(seg 400)
"$T/mkseed" "$s400" 1 fuzz/corpus/index/body400.bin
"$T/mkseed" "$s400" 2 fuzz/corpus/index/service400.bin
echo "seeds written"
