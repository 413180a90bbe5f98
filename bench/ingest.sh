#!/usr/bin/env bash
# Ingest benchmark: how fast Quarry loads the generated OpenTelemetry NDJSON
# corpus (rows/s wall, rows/s per CPU-second, peak RSS, with default threads
# and with --threads 1) and how many bytes it stores (total and per column),
# side by side in the same run with its peers given a fair configuration:
# DuckDB (native table, explicit schema, persistent file after CHECKPOINT),
# SQLite (plain table, one transaction, journal off) and zstd -3 / -19 of the
# raw file (the "just compress it" size floor, no random access).
#
# usage: bash bench/ingest.sh [ROWS ...]        (default: 1000000 10000000)
# env:   BENCH_OUT=bench/out   corpora (kept, reused) and ingest-N.md reports
#        BENCH_SEED=42         generator seed
#        BENCH_REPEAT=R        runs per engine, best (lowest wall) kept; default
#                              3 up to 2M rows, 1 above (zstd -19 always once)
#        BENCH_RETRY=K         extra runs while other processes took > 15% of
#                              the CPUs during the best run; default 2 up to
#                              2M rows, 1 above
#        ZSTD19_SAMPLE_MB=64   zstd -19 runs at ~2 MB/s, so it compresses the
#                              first rows up to this many MiB and extrapolates
#                              the size; 0 = the whole file
#        QUIET_WAIT=30         before each run, wait up to this many seconds for
#                              the machine to be idle (others' builds and tests)
#        QUARRY=build/rel/quarry
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
Q=${QUARRY:-$ROOT/build/rel/quarry}
OUT=${BENCH_OUT:-bench/out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SEED=${BENCH_SEED:-42}
ZSTD19_SAMPLE_MB=${ZSTD19_SAMPLE_MB:-64}
PEERS=$ROOT/bench/peers
ROW_COUNTS=("$@")
[ ${#ROW_COUNTS[@]} -eq 0 ] && ROW_COUNTS=(1000000 10000000)

say() { printf '==> %s\n' "$*" >&2; }
die() { printf 'bench/ingest.sh: %s\n' "$*" >&2; exit 1; }

[ -x "$Q" ] || die "no quarry binary at $Q (run make -C $ROOT all)"
[ -x /usr/bin/time ] || die "/usr/bin/time missing (apt-get install time)"
for n in "${ROW_COUNTS[@]}"; do
    [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "row count must be a positive integer: $n"
done

WORK=""
cleanup() { [ -n "$WORK" ] && rm -rf "$WORK"; return 0; }
trap cleanup EXIT

# --- measurement helpers ---------------------------------------------------

# timed KEY CMD...: runs CMD under /usr/bin/time -v, records wall seconds,
# user+sys CPU seconds and peak RSS (KiB) in WALL/CPU/RSS[KEY], and in
# OTHER[KEY] the CPU used by everything else on the machine meanwhile, as a
# percentage of all CPUs (a noise indicator: other work skews the numbers).
# The command's stdout is the caller's stdout. Returns its exit status.
declare -A WALL CPU RSS BYTES RATE_ROWS IN_BYTES NOTE LABEL OTHER TRIES
NCPU=$(nproc)
CLK_TCK=$(getconf CLK_TCK)
busy_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9; exit}' /proc/stat; }
timed() {
    local key=$1; shift
    local tf="$WORK/$key.time" rc=0 b0 b1
    b0=$(busy_ticks)
    /usr/bin/time -v -o "$tf" "$@" || rc=$?
    b1=$(busy_ticks)
    WALL[$key]=$(awk -F': ' '/Elapsed \(wall clock\)/ {
        n = split($2, p, ":"); s = 0
        for (i = 1; i <= n; i++) s = s * 60 + p[i]
        print s }' "$tf")
    CPU[$key]=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2}
        END {printf "%.2f", u + s}' "$tf")
    RSS[$key]=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tf")
    OTHER[$key]=$(awk "BEGIN { o = (($b1 - $b0) / $CLK_TCK - ${CPU[$key]}) / (${WALL[$key]} + 0.01) / $NCPU * 100;
        printf \"%.0f\", o < 0 ? 0 : o }")
    return $rc
}

# wait_quiet: waits (up to QUIET_WAIT seconds) until the machine has been
# idle for a second (< 10% of all CPUs busy), so that other people's builds
# and tests do not land in the measurements.
QUIET_WAIT=${QUIET_WAIT:-30}
wait_quiet() {
    local waited=0 b0 b1
    while :; do
        b0=$(busy_ticks); sleep 1; b1=$(busy_ticks)
        awk "BEGIN { exit !(($b1 - $b0) / $CLK_TCK < 0.10 * $NCPU) }" && return 0
        waited=$((waited + 1))
        if [ "$waited" -ge "$QUIET_WAIT" ]; then
            say "machine still busy after ${QUIET_WAIT}s; measuring anyway"; return 0
        fi
    done
}

# best_of KEY CLEAN CMD...: runs CMD $REPEAT times, each after eval'ing
# CLEAN (which removes the previous try's output), and keeps the numbers of
# the try with the lowest wall time under KEY; if other processes used more
# than 15% of the CPUs during that best try, tries up to $RETRY more. Stops
# at the first failure.
best_of() {
    local key=$1 clean=$2 i; shift 2
    WALL[$key]=""; OTHER[$key]=""
    # up to $RETRY extra tries while the best one was disturbed by other work
    for ((i = 1; i <= REPEAT || (i <= REPEAT + RETRY && ${OTHER[$key]:-0} > 15); i++)); do
        [ "$i" -gt "$REPEAT" ] && say "  other processes used ${OTHER[$key]}% CPU during that run; running it again"
        eval "$clean"
        wait_quiet
        timed "$key.try" "$@" || return $?
        TRIES[$key]=$i
        if [ -z "${WALL[$key]}" ] || awk "BEGIN { exit !(${WALL[$key.try]} < ${WALL[$key]}) }"; then
            WALL[$key]=${WALL[$key.try]}; CPU[$key]=${CPU[$key.try]}
            RSS[$key]=${RSS[$key.try]}; OTHER[$key]=${OTHER[$key.try]}
        fi
    done
}

fsize() { stat -c %s "$1"; }
# f EXPR: evaluate an awk arithmetic expression
f() { awk "BEGIN { printf \"%.6f\", $1 }"; }
# fmt FORMAT EXPR
fmt() { awk "BEGIN { printf \"$1\", $2 }"; }
# thousands separators for an integer
commas() { sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta' <<<"$1"; }

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# --- peers: availability ---------------------------------------------------

DUCKDB_STATUS=ok
ensure_duckdb() {
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        DUCKDB_STATUS="node/npm not installed"; return
    fi
    if [ ! -f "$PEERS/node_modules/@duckdb/node-api/package.json" ]; then
        say "installing @duckdb/node-api into bench/peers"
        local log; log=$(mktemp)
        if ! npm install --prefix "$PEERS" --no-audit --no-fund @duckdb/node-api >"$log" 2>&1; then
            DUCKDB_STATUS="npm install @duckdb/node-api failed: $(tail -n 3 "$log" | tr '\n' ' ')"
            rm -f "$log"; return
        fi
        rm -f "$log"
    fi
}

SQLITE_STATUS=ok
ensure_sqlite() {
    command -v sqlite3 >/dev/null && return
    say "installing sqlite3 (apt)"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    if ! { DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends sqlite3 >/dev/null 2>&1 ||
           { $sudo apt-get update -qq >/dev/null 2>&1 &&
             DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends sqlite3 >/dev/null 2>&1; }; }; then
        SQLITE_STATUS="sqlite3 CLI not installed and apt-get install sqlite3 failed"
        return
    fi
    command -v sqlite3 >/dev/null || SQLITE_STATUS="sqlite3 CLI not found after install"
}

# --- the corpus --------------------------------------------------------------

# corpus N: makes sure $OUT/otel-N.ndjson holds N rows of seed $SEED from the
# current generator; sets CORPUS, CORPUS_BYTES, GEN_NOTE.
corpus() {
    local n=$1
    CORPUS=$OUT/otel-$n.ndjson
    local meta=$CORPUS.meta
    # fingerprint of the generator: the first 1000 rows at this seed are the
    # same whatever the row count, so a changed generator invalidates corpora
    local fp; fp=$("$Q" gen --rows 1000 --seed "$SEED" | md5sum | cut -d' ' -f1)
    if [ -f "$CORPUS" ] && [ -f "$meta" ]; then
        local m_rows m_seed m_fp m_bytes m_wall m_cpu
        read -r m_rows m_seed m_fp m_bytes m_wall m_cpu < "$meta" || true
        if [ "$m_rows" = "$n" ] && [ "$m_seed" = "$SEED" ] && [ "$m_fp" = "$fp" ] &&
           [ "$m_bytes" = "$(fsize "$CORPUS")" ]; then
            CORPUS_BYTES=$m_bytes
            GEN_NOTE="reused $(basename "$CORPUS"); generated earlier in $(fmt %.2f "$m_wall") s = $(commas "$(fmt %.0f "$n / $m_wall")") rows/s wall, $(fmt %.0f "$m_bytes / $m_wall / 1e6") MB/s ($(fmt %.2f "$m_cpu") CPU s)"
            return
        fi
    fi
    say "generating $n rows (seed $SEED) -> $CORPUS"
    rm -f "$CORPUS" "$meta"
    timed gen "$Q" gen --rows "$n" --seed "$SEED" > "$CORPUS.tmp" || die "quarry gen failed"
    mv "$CORPUS.tmp" "$CORPUS"
    CORPUS_BYTES=$(fsize "$CORPUS")
    echo "$n $SEED $fp $CORPUS_BYTES ${WALL[gen]} ${CPU[gen]}" > "$meta"
    GEN_NOTE="generated in $(fmt %.2f "${WALL[gen]}") s = $(commas "$(fmt %.0f "$n / ${WALL[gen]}")") rows/s wall, $(fmt %.0f "$CORPUS_BYTES / ${WALL[gen]} / 1e6") MB/s (${CPU[gen]} CPU s)"
}

# --- engines -------------------------------------------------------------------

ENGINES=()
add_engine() { ENGINES+=("$1"); LABEL[$1]=$2; }
fail_engine() { ENGINES+=("$1"); LABEL[$1]=$2; NOTE[$1]=$3; WALL[$1]=""; }

run_quarry() {
    local n=$1 key=$2 label=$3; shift 3
    local dir="$WORK/$key"
    say "$label: ingest"
    if ! best_of "$key" "rm -rf '$dir'" "$Q" ingest --data "$dir" --table logs --quiet "$@" "$CORPUS"; then
        fail_engine "$key" "$label" "quarry ingest failed (exit status, see above)"; return 1
    fi
    add_engine "$key" "$label"
    BYTES[$key]=$(du -sb "$dir" | cut -f1)
    RATE_ROWS[$key]=$n; IN_BYTES[$key]=$CORPUS_BYTES
    "$Q" stats --data "$dir" --table logs > "$WORK/$key.stats" || true
    local rows idx
    rows=$(awk '/^table / {print $3; exit}' "$WORK/$key.stats")
    idx=$(awk '$1 == "index" {s = 1; next} s && NF >= 3 {printf "%s%s", (k++ ? ", " : ""), $1}' "$WORK/$key.stats")
    NOTE[$key]="all 15 columns stored; index on: ${idx:-(none reported by stats)}"
    [ "$rows" = "$n" ] || NOTE[$key]="${NOTE[$key]}; WARNING: stats reports $rows rows, expected $n"
}

run_duckdb() {
    local n=$1 key=duckdb
    if [ "$DUCKDB_STATUS" != ok ]; then
        fail_engine "$key" "DuckDB" "unavailable ($DUCKDB_STATUS)"; return
    fi
    say "DuckDB: load"
    local db="$WORK/duck.duckdb" js
    if ! best_of "$key" "rm -f '$db' '$db.wal'" env NODE_PATH="$PEERS/node_modules" node "$ROOT/bench/duckdb-load.cjs" \
            "$CORPUS" "$db" >"$WORK/duck.out" 2>"$WORK/duck.err"; then
        fail_engine "$key" "DuckDB" "unavailable ($(tail -n 2 "$WORK/duck.err" | tr '\n' ' '))"; return
    fi
    local ver thr rows loads
    js=$(tail -n 1 "$WORK/duck.out")
    ver=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' <<<"$js")
    thr=$(sed -n 's/.*"threads":\([0-9]*\).*/\1/p' <<<"$js")
    rows=$(sed -n 's/.*"rows":\([0-9]*\).*/\1/p' <<<"$js")
    loads=$(sed -n 's/.*"load_s":\([0-9.e+-]*\).*/\1/p' <<<"$js")
    add_engine "$key" "DuckDB $ver ($thr threads)"
    local b=0 fl
    for fl in "$db" "$db.wal"; do [ -f "$fl" ] && b=$((b + $(fsize "$fl"))); done
    BYTES[$key]=$b; RATE_ROWS[$key]=$n; IN_BYTES[$key]=$CORPUS_BYTES
    NOTE[$key]="native table, explicit schema (Timestamp TIMESTAMP_NS, maps MAP(VARCHAR,VARCHAR)), storage_compatibility_version=latest (newer compression, ~7% smaller than the v1.0 default file format, no slower); in-process CREATE TABLE AS + CHECKPOINT $(fmt %.2f "$loads") s"
    [ "$rows" = "$n" ] || NOTE[$key]="${NOTE[$key]}; WARNING: $rows rows loaded, expected $n"
    rm -f "$db" "$db.wal"
}

run_sqlite() {
    local n=$1 key=sqlite
    if [ "$SQLITE_STATUS" != ok ]; then
        fail_engine "$key" "SQLite" "skipped ($SQLITE_STATUS)"; return
    fi
    say "SQLite: load"
    local db="$WORK/lite.db" ver
    ver=$(sqlite3 --version | cut -d' ' -f1)
    # One pass, one transaction: .import streams each line into a view whose
    # INSTEAD OF trigger extracts the 15 fields with the JSON operators into a
    # plain rowid table (Timestamp as INTEGER nanoseconds, maps as JSON text).
    cat > "$WORK/lite.sql" <<EOF
PRAGMA journal_mode=OFF;
PRAGMA synchronous=OFF;
PRAGMA cache_size=-262144;
CREATE TABLE logs(
  Timestamp INTEGER, TraceId TEXT, SpanId TEXT, TraceFlags INTEGER,
  SeverityText TEXT, SeverityNumber INTEGER, ServiceName TEXT, Body TEXT,
  ResourceSchemaUrl TEXT, ResourceAttributes TEXT, ScopeSchemaUrl TEXT,
  ScopeName TEXT, ScopeVersion TEXT, ScopeAttributes TEXT, LogAttributes TEXT);
CREATE TEMP VIEW ndjson(j) AS SELECT NULL;
CREATE TEMP TRIGGER ndjson_ins INSTEAD OF INSERT ON ndjson BEGIN
  INSERT INTO logs SELECT
    unixepoch(substr(t, 1, 19)) * 1000000000 + CAST(substr(t || '000000000', 21, 9) AS INTEGER),
    a, b, c, d, e, f, g, h, i, k, l, m, n, o
  FROM (SELECT j->>'\$.Timestamp' AS t, j->>'\$.TraceId' AS a, j->>'\$.SpanId' AS b,
          j->>'\$.TraceFlags' AS c, j->>'\$.SeverityText' AS d, j->>'\$.SeverityNumber' AS e,
          j->>'\$.ServiceName' AS f, j->>'\$.Body' AS g, j->>'\$.ResourceSchemaUrl' AS h,
          j->'\$.ResourceAttributes' AS i, j->>'\$.ScopeSchemaUrl' AS k, j->>'\$.ScopeName' AS l,
          j->>'\$.ScopeVersion' AS m, j->'\$.ScopeAttributes' AS n, j->'\$.LogAttributes' AS o
        FROM (SELECT NEW.j AS j));
END;
.mode ascii
.separator "\\037" "\\n"
.import '$CORPUS' ndjson
.mode list
SELECT 'rows=' || count(*) FROM logs;
EOF
    local out
    if ! best_of "$key" "rm -f '$db'" sqlite3 "$db" ".read $WORK/lite.sql" </dev/null >"$WORK/lite.out" 2>"$WORK/lite.err"; then
        fail_engine "$key" "SQLite $ver" "failed ($(tail -n 2 "$WORK/lite.err" | tr '\n' ' '))"; rm -f "$db"; return
    fi
    add_engine "$key" "SQLite $ver"
    BYTES[$key]=$(fsize "$db"); RATE_ROWS[$key]=$n; IN_BYTES[$key]=$CORPUS_BYTES
    out=$(tail -n 1 "$WORK/lite.out")
    NOTE[$key]="rowid table, JSON ->> extraction via .import into a view with an INSTEAD OF trigger, one transaction, journal_mode=OFF, synchronous=OFF, 256 MiB cache; maps as JSON text, no index"
    local rows; rows=$(sed -n 's/^rows=//p' <<<"$out")
    [ "$rows" = "$n" ] || NOTE[$key]="${NOTE[$key]}; WARNING: $rows rows loaded, expected $n"
    rm -f "$db"
}

run_zstd() {
    local n=$1 level=$2 key=zstd$2
    if ! command -v zstd >/dev/null; then
        fail_engine "$key" "zstd -$level -T0" "skipped (zstd not installed)"; return
    fi
    local src=$CORPUS rows=$n inb=$CORPUS_BYTES sample=""
    if [ "$level" -ge 19 ] && [ "$ZSTD19_SAMPLE_MB" -gt 0 ] &&
       [ "$CORPUS_BYTES" -gt $((ZSTD19_SAMPLE_MB * 1048576)) ]; then
        rows=$(fmt %d "$n * $ZSTD19_SAMPLE_MB * 1048576 / $CORPUS_BYTES")
        src="$WORK/sample.ndjson"
        head -n "$rows" "$CORPUS" > "$src"
        inb=$(fsize "$src")
        sample=1
    fi
    say "zstd -$level -T0${sample:+ (first $rows rows)}"
    local repeat_saved=$REPEAT
    [ "$level" -ge 19 ] && REPEAT=1
    if ! best_of "$key" "rm -f '$WORK/out.zst'" zstd -q -f -"$level" -T0 "$src" -o "$WORK/out.zst"; then
        REPEAT=$repeat_saved
        fail_engine "$key" "zstd -$level -T0" "zstd failed"; return
    fi
    REPEAT=$repeat_saved
    add_engine "$key" "zstd -$level -T0"
    local zb; zb=$(fsize "$WORK/out.zst")
    RATE_ROWS[$key]=$rows; IN_BYTES[$key]=$inb
    if [ -n "$sample" ]; then
        BYTES[$key]=$(fmt %.0f "$zb * $CORPUS_BYTES / $inb")
        NOTE[$key]="compressed file, no random access; measured on the first $(commas "$rows") rows ($(fmt %.0f "$inb / 1048576") MiB), size extrapolated (~)"
        LABEL[$key]="zstd -$level -T0 ~"
    else
        BYTES[$key]=$zb
        NOTE[$key]="compressed file, no random access"
    fi
    rm -f "$WORK/out.zst" "$WORK/sample.ndjson"
}

# --- report ----------------------------------------------------------------------

# per-engine derived numbers
rate()    { f "${RATE_ROWS[$1]} / ${WALL[$1]}"; }
percore() { f "${RATE_ROWS[$1]} / (${CPU[$1]} > 0 ? ${CPU[$1]} : 0.01)"; }

report() {
    local n=$1 md=$2
    local q=quarry
    {
        echo "## Quarry ingest benchmark: $(commas "$n") rows"
        echo
        echo "- machine: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM; load average before/after: $LOAD_BEFORE / $(loadavg)"
        echo "- quarry: $Q, built $(date -u -r "$Q" '+%Y-%m-%d %H:%M UTC'), HEAD $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '(no commit)')"
        echo "- corpus: $(basename "$CORPUS"), seed $SEED, $(commas "$CORPUS_BYTES") bytes ($(fmt %.1f "$CORPUS_BYTES / $n") bytes/row); $GEN_NOTE"
        echo "- each engine runs $REPEAT time(s) (zstd -19 once), plus up to $RETRY more while other processes took > 15% of the CPUs (runs column); the run with the lowest wall time is shown; the corpus is read from the page cache; wall, CPU (user+sys) and peak RSS from /usr/bin/time -v of the whole process"
        echo "- rows/s/core = rows / CPU seconds; ratio = bytes on disk / NDJSON bytes; other CPU% = CPU used by other processes on the machine during that run (noise; should be ~0)"
        echo
        printf '| %-28s | %8s | %10s | %11s | %7s | %8s | %14s | %9s | %7s | %10s | %4s |\n' \
            engine "wall s" "rows/s" "rows/s/core" "MB/s in" "RSS MiB" "bytes on disk" "bytes/row" ratio "other CPU%" runs
        printf '|%s|%s:|%s:|%s:|%s:|%s:|%s:|%s:|%s:|%s:|%s:|\n' \
            "$(printf -- '-%.0s' {1..30})" "$(printf -- '-%.0s' {1..9})" "$(printf -- '-%.0s' {1..11})" \
            "$(printf -- '-%.0s' {1..11})" "$(printf -- '-%.0s' {1..8})" "$(printf -- '-%.0s' {1..9})" \
            "$(printf -- '-%.0s' {1..15})" "$(printf -- '-%.0s' {1..10})" "$(printf -- '-%.0s' {1..8})" \
            "$(printf -- '-%.0s' {1..11})" "$(printf -- '-%.0s' {1..5})"
        local e
        for e in "${ENGINES[@]}"; do
            if [ -z "${WALL[$e]}" ]; then
                printf '| %-28s | %8s | %10s | %11s | %7s | %8s | %14s | %9s | %7s | %10s | %4s |\n' \
                    "${LABEL[$e]}" - - - - - - - - - -
                continue
            fi
            printf '| %-28s | %8.2f | %10s | %11s | %7.0f | %8.0f | %14s | %9.1f | %7.4f | %10s | %4s |\n' \
                "${LABEL[$e]}" "${WALL[$e]}" "$(commas "$(fmt %.0f "$(rate "$e")")")" \
                "$(commas "$(fmt %.0f "$(percore "$e")")")" \
                "$(f "${IN_BYTES[$e]} / ${WALL[$e]} / 1e6")" "$(f "${RSS[$e]} / 1024")" \
                "$(commas "${BYTES[$e]}")" "$(f "${BYTES[$e]} / $n")" \
                "$(f "${BYTES[$e]} / $CORPUS_BYTES")" "${OTHER[$e]}" "${TRIES[$e]}"
        done
        echo
        for e in "${ENGINES[@]}"; do
            if [ -n "${NOTE[$e]:-}" ]; then echo "- ${LABEL[$e]}: ${NOTE[$e]}"; fi
        done
        if [ -n "${WALL[$q]:-}" ]; then
            echo
            echo "### Quarry (default threads) vs each peer"
            echo
            echo "| peer | load speed (wall rows/s) | speed per core | size (peer bytes / Quarry bytes) |"
            echo "|---|---:|---:|---:|"
            for e in "${ENGINES[@]}"; do
                case $e in quarry*) continue ;; esac
                if [ -z "${WALL[$e]}" ]; then
                    echo "| ${LABEL[$e]} | - | - | - |"; continue
                fi
                printf '| %s | %.2fx | %.2fx | %.2fx |\n' "${LABEL[$e]}" \
                    "$(f "$(rate $q) / $(rate "$e")")" "$(f "$(percore $q) / $(percore "$e")")" \
                    "$(f "${BYTES[$e]} / ${BYTES[$q]}")"
            done
            echo
            echo "(> 1x: Quarry is faster / smaller.)"
            if [ -n "${WALL[quarry1]:-}" ]; then
                echo
                echo "Thread scaling: --threads 1 $(commas "$(fmt %.0f "$(rate quarry1)")") rows/s wall, default threads $(commas "$(fmt %.0f "$(rate $q)")") rows/s wall = $(fmt %.2f "$(rate $q) / $(rate quarry1)")x."
            fi
            echo
            echo "### Quarry bytes per column ($(commas "$n") rows)"
            echo
            echo "| column | encoding | bytes/row | raw/row | share |"
            echo "|---|---|---:|---:|---:|"
            # quarry stats prints a column section (name encoding data dict
            # zdict keys nulls bytes/row raw/row, then footers+headers) and an
            # index section (name termindex termdict postings positions norms
            # bytes/row); a row's bytes are the sum of its byte fields.
            awk -v total="$STATS_TOTAL" -v n="$n" '
                function row(name, enc, b, bpr, raw) {
                    sum += b
                    printf "| %s | %s | %s | %s | %.1f%% |\n", name, enc, bpr, raw,
                        (total > 0) ? 100 * b / total : 0
                }
                /^table / || NF == 0 { next }
                $1 == "column" { sec = "col"; next }
                $1 == "index" { sec = "idx"; next }
                sec == "col" && NF >= 5 {
                    b = 0; for (i = 3; i <= NF - 2; i++) b += $i
                    row($1, $2, b, $(NF-1), $NF); next
                }
                sec == "col" && NF == 3 { row($1, "-", $2, $3, "-"); next }
                sec == "idx" && NF >= 3 {
                    b = 0; for (i = 2; i <= NF - 1; i++) b += $i
                    row("index: " $1, "index", b, $NF, "-"); next
                }
                END {
                    d = total - sum
                    if (total > 0 && (d > 0.0005 * total || -d > 0.0005 * total))
                        printf "| (not itemised by stats) | - | %.2f | - | %.1f%% |\n", d / n, 100 * d / total
                }' "$WORK/$q.stats"
            echo
            echo "$(grep '^table ' "$WORK/$q.stats"); data directory (du -sb): $(commas "${BYTES[$q]}") bytes."
            echo
            echo "### Targets (DESIGN.md)"
            echo
            local pc ratio rssm smaller=yes
            pc=$(percore $q); ratio=$(f "${BYTES[$q]} / $CORPUS_BYTES"); rssm=$(f "${RSS[$q]} / 1024")
            for e in duckdb sqlite; do
                if [ -n "${WALL[$e]:-}" ] && [ "${BYTES[$e]}" -le "${BYTES[$q]}" ]; then
                    smaller="no (${LABEL[$e]})"
                fi
            done
            echo "- ingest >= 110,000 rows/s per core: $(commas "$(fmt %.0f "$pc")") -> $(awk "BEGIN{print ($pc >= 110000) ? \"PASS\" : \"FAIL\"}")"
            echo "- size <= 0.10 x NDJSON: $(fmt %.4f "$ratio") -> $(awk "BEGIN{print ($ratio <= 0.10) ? \"PASS\" : \"FAIL\"}")"
            echo "- smaller than every database peer that ran: $smaller"
            echo "- ingest peak RSS <= 1 GiB: $(fmt %.0f "$rssm") MiB -> $(awk "BEGIN{print ($rssm <= 1024) ? \"PASS\" : \"FAIL\"}")"
        fi
    } > "$md"
}

# --- main ------------------------------------------------------------------------

ensure_duckdb
ensure_sqlite

for N in "${ROW_COUNTS[@]}"; do
    WORK=$(mktemp -d "$OUT/work-$N.XXXXXX")
    ENGINES=(); WALL=(); CPU=(); RSS=(); BYTES=(); RATE_ROWS=(); IN_BYTES=(); NOTE=(); LABEL=()
    OTHER=(); TRIES=()
    LOAD_BEFORE=$(loadavg)
    REPEAT=${BENCH_REPEAT:-$([ "$N" -le 2000000 ] && echo 3 || echo 1)}
    RETRY=${BENCH_RETRY:-$([ "$N" -le 2000000 ] && echo 2 || echo 1)}
    corpus "$N"
    sync

    STATS_TOTAL=0
    if run_quarry "$N" quarry "Quarry ($(nproc) threads, default)"; then
        STATS_TOTAL=$(sed -n 's/^table .* \([0-9][0-9]*\) bytes on disk.*/\1/p' "$WORK/quarry.stats")
        rm -rf "$WORK/quarry"
    fi
    run_quarry "$N" quarry1 "Quarry (--threads 1)" --threads 1 && rm -rf "$WORK/quarry1"
    run_duckdb "$N"
    run_sqlite "$N"
    run_zstd "$N" 3
    run_zstd "$N" 19

    report "$N" "$OUT/ingest-$N.md"
    echo
    cat "$OUT/ingest-$N.md"
    echo
    rm -rf "$WORK"; WORK=""
done
