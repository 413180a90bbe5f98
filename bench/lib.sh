# bench/lib.sh - shared by the benchmark scripts: the generated corpus and a
# table ingested from it, rebuilt whenever the code that writes segments or
# indexes changed (a stamp of the writer sources is kept beside it).
# Usage: source bench/lib.sh; ensure_table ROWS  -> sets CORPUS and DATA
Q=${Q:-./build/rel/quarry}
OUT=${BENCH_OUT:-bench/out}

ensure_table() {
    local rows=$1 stamp
    mkdir -p "$OUT"
    CORPUS=$OUT/otel-$rows.ndjson
    if [ ! -s "$CORPUS" ]; then
        echo "generating $rows rows -> $CORPUS"
        $Q gen --rows "$rows" --seed 42 > "$CORPUS"
    fi
    DATA=$OUT/search-data-$rows
    stamp=$(cat src/format/segfmt.h src/format/segwriter.c src/format/codec.h \
        src/index/invfmt.h src/index/invbuild.c src/index/postings.c src/index/termdict.c \
        src/index/norms.c | md5sum | cut -c1-16)
    if [ "$(cat "$DATA/.writer-stamp" 2>/dev/null)" != "$stamp" ] ||
        ! $Q stats --data "$DATA" --table logs >/dev/null 2>&1; then
        rm -rf "$DATA"
        echo "ingesting $CORPUS (segment writer changed or no table yet)"
        $Q ingest --data "$DATA" --table logs --quiet "$CORPUS"
        echo "$stamp" > "$DATA/.writer-stamp"
    fi
}
