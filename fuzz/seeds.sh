#!/usr/bin/env bash
# fuzz/seeds.sh - regenerate the segment and index seeds of the fuzz corpora
# after a segment format change (old seeds would only be refused by version).
# Usage: bash fuzz/seeds.sh   (needs build/rel: make)
# The v8_* seeds are format 8 files of the old writer, and v11_chunked_40
# a format 11 one (chunk checksums in the footer's entries), kept (this
# build still reads both); they are not regenerated.
set -euo pipefail
cd "$(dirname "$0")/.."
Q=./build/rel/quarry
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cc -std=gnu11 -O1 -D_GNU_SOURCE -Isrc -o "$T/mkseed" fuzz/mkseed.c build/rel/libquarry.a \
    -lzstd -lxxhash -lunistring -lpthread -lm
seg() { # rows-file [schema] -> the table's one segment
    $Q ingest --data "$T/$1.d" --table t --quiet ${2:+--schema "$2"} "$T/$1.ndjson"
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
# other table shapes: inferred http_logs and github_events, and a table with
# a column of every type (fuzz/corpus/ndjson/wide_*.json rows)
$Q gen --dataset http_logs --rows 40 --seed 5 > "$T/http.ndjson"
$Q gen --dataset github_events --rows 8 --seed 5 > "$T/gh.ndjson"
cp "$(seg http)" fuzz/corpus/segment/http_logs_40.qseg
cp "$(seg gh)" fuzz/corpus/segment/github_events_8.qseg
cat > "$T/wide.schema" <<'JSON'
{"columns": [{"name": "t", "type": "timestamp"}, {"name": "b", "type": "bool"},
  {"name": "i8", "type": "int8"}, {"name": "i16", "type": "int16"}, {"name": "i32", "type": "int32"},
  {"name": "i64", "type": "int64"}, {"name": "u8", "type": "uint8"}, {"name": "u16", "type": "uint16"},
  {"name": "u32", "type": "uint32"}, {"name": "u64", "type": "uint64"}, {"name": "f", "type": "float64"},
  {"name": "s", "type": "text"}, {"name": "j", "type": "json"}, {"name": "m", "type": "map"},
  {"name": "e", "type": "timestamp", "format": "epoch_s"}, {"name": "_extra", "type": "json"}],
 "sort": "t", "catch_all": "_extra", "omit_nulls": true,
 "indexes": [{"column": "s", "kind": "fulltext"}, {"column": "j", "kind": "paths"},
  {"column": "m", "kind": "paths"}, {"column": "m", "kind": "fulltext"},
  {"column": "f", "kind": "range"}, {"column": "u64", "kind": "range"}]}
JSON
{ cat fuzz/corpus/ndjson/wide_all_types.json; echo; cat fuzz/corpus/ndjson/wide_sparse.json; echo; } > "$T/wide.ndjson"
cp "$(seg wide "$T/wide.schema")" fuzz/corpus/segment/wide_types.qseg
# a segment with chunk checksums (1 KiB chunks)
$Q gen --rows 40 --seed 5 > "$T/40.ndjson"
"$T/mkseed" --chunked "$T/40.ndjson" fuzz/corpus/segment/chunked_40.qseg
echo "seeds written"
