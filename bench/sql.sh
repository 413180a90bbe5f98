#!/usr/bin/env bash
# bench/sql.sh [ROWS] [REPS] - SQL families (count, recent, GROUP BY, count
# DISTINCT, trace joins) through `quarry sql` with the table open (--repeat:
# hot median of REPS runs in one session, no process start-up), side by side
# with DuckDB on the same rows in the same run (native table loaded from the
# same NDJSON; bench/duckdb-sql.cjs). Every query's answer is compared
# between the two engines (the counts, or the row count) before its time is.
# Writes bench/out/sql-ROWS.md. Default 1M rows; 10M is the headline.
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
REPS=${2:-10}
source bench/lib.sh
ensure_table "$ROWS"
REPORT=$OUT/sql-$ROWS.md
PEERS=bench/peers
QUERIES=bench/sql-queries.tsv

# Quarry: hot median and the answer (the last CSV field of each row, or the row count)
quarry_run() {
    local sql=$1 lat csv n
    lat=$($Q sql --data "$DATA" --repeat "$REPS" "$sql" 2>&1 >/dev/null | sed -n 's/^hot: median \([0-9.]*\) ms.*/\1/p')
    csv=$($Q sql --data "$DATA" --format csv "$sql" | tail -n +2)
    n=$($Q sql --data "$DATA" --format ndjson "$sql" | wc -l) # rows (a CSV field may hold newlines)
    if [ "$n" -le 20 ]; then
        QCHECK=$(printf '%s\n' "$csv" | awk -F, 'NF {print $NF}' | paste -sd';')
    else
        QCHECK="$n rows"
    fi
    QLAT=$lat
}

duck=""
if command -v node >/dev/null && command -v npm >/dev/null; then
    if [ ! -f "$PEERS/node_modules/@duckdb/node-api/package.json" ]; then
        echo "installing @duckdb/node-api into $PEERS"
        npm install --prefix "$PEERS" --no-audit --no-fund @duckdb/node-api >/dev/null 2>&1 || true
    fi
    if [ -f "$PEERS/node_modules/@duckdb/node-api/package.json" ]; then
        DUCK=$OUT/duck-$ROWS.duckdb
        if [ ! -s "$DUCK" ]; then
            echo "loading $CORPUS into DuckDB ($DUCK)"
            NODE_PATH=$PEERS/node_modules node bench/duckdb-load.cjs "$CORPUS" "$DUCK" >/dev/null
        fi
        NODE_PATH=$PEERS/node_modules node bench/duckdb-sql.cjs "$DUCK" "$REPS" "$QUERIES" > "$OUT/duck-sql-$ROWS.jsonl"
        duck=$OUT/duck-sql-$ROWS.jsonl
    fi
fi

{
echo "# SQL families at $ROWS rows ($(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "Hot medians of $REPS runs; Quarry through \`quarry sql --repeat\` (one session, table open),"
echo "DuckDB in-process through @duckdb/node-api (native table). DuckDB has no text index here:"
echo "word filters are regular expressions with Quarry's word rule. ratio = DuckDB / Quarry."
echo
echo '| family | query | Quarry ms | DuckDB ms | ratio | answers |'
echo '|---|---|---:|---:|---:|---|'
} > "$REPORT"
declare -A FAM_Q FAM_D
mism=0
while IFS=$'\t' read -r fam name qsql dsql; do
    [[ -z "$fam" || "$fam" == \#* ]] && continue
    quarry_run "$qsql"
    dms="-"; dcheck="-"; ratio="-"; agree="(no DuckDB)"
    if [ -n "$duck" ]; then
        line=$(grep -F "\"name\":\"$name\"" "$duck" | head -1)
        dms=$(sed 's/.*"ms":\([0-9.e+-]*\).*/\1/' <<<"$line")
        dcheck=$(sed 's/.*"check":"\(.*\)"}$/\1/' <<<"$line")
        ratio=$(awk -v d="$dms" -v q="$QLAT" 'BEGIN {printf "%.1fx", d / q}')
        dms=$(awk -v d="$dms" 'BEGIN {printf "%.2f", d}')
        if [ "$dcheck" = "$QCHECK" ]; then agree="equal"; else agree="MISMATCH: Quarry $QCHECK, DuckDB $dcheck"; mism=$((mism + 1)); fi
    fi
    printf '| %s | %s | %s | %s | %s | %s |\n' "$fam" "$name" "$QLAT" "$dms" "$ratio" "$agree" | tee -a "$REPORT"
done < "$QUERIES"
echo "report: $REPORT ($mism mismatches)"
