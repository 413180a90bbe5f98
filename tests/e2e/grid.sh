#!/usr/bin/env bash
# The benchmark grid's correctness, not its speed: bench/grid/grid.py runs its
# 85 queries (every family crossed with every filter kind) on a small
# generated corpus through the real server (`quarry serve`, psycopg2), in
# process (`quarry sql --timing`) and in SQLite FTS5, and compares every answer with the brute-force oracle over the
# same NDJSON. --strict fails on any mismatch and on any Quarry query that was
# not answered. No cold runs, no timing asserted.
set -uo pipefail
Q=${QUARRY:?set QUARRY to the quarry binary}
Q=$(cd "$(dirname "$Q")" && pwd)/$(basename "$Q")
root=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/quarry-grid-XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0; fail=0; tag=$(basename "$(dirname "$Q")")
if Q=$Q /usr/bin/python3 "$root/bench/grid/grid.py" --rows 20000 --engines quarry,quarry-embedded,sqlite --no-cold --strict \
        --out "$T" > "$T/log" 2>&1; then
    pass=$((pass + 1)); echo "ok   grid[$tag] 85 queries: Quarry (server and in-process) and SQLite equal the oracle"
else
    fail=$((fail + 1)); echo "FAIL grid[$tag] 85 queries against the oracle"
    sed 's/^/     /' "$T/log" | tail -20
    grep -A30 '^## Cross-check' "$T/grid/20000/report.md" 2>/dev/null | head -30 | sed 's/^/     /'
fi
grep -q '| c01 | count | term | high | failed |' "$T/grid/20000/report.md" 2>/dev/null &&
    grep -q 'Answers compared with the brute-force oracle: 0 mismatches' "$T/grid/20000/report.md" &&
    { pass=$((pass + 1)); echo "ok   grid[$tag] the report lists every query and its cross-check"; } ||
    { fail=$((fail + 1)); echo "FAIL grid[$tag] the report"; }
R="$T/grid/20000/report.md"
grep -q '^| family | sqlite/quarry-embedded |$' "$R" 2>/dev/null &&
    grep -qE '^\| count \| [0-9.]+ \| 2\.50 \| (met|missed by [0-9.]+x) \| sqlite \| ' "$R" &&
    grep -q '^Load: fastest ' "$R" &&
    { pass=$((pass + 1)); echo "ok   grid[$tag] the report compares like for like and with the targets"; } ||
    { fail=$((fail + 1)); echo "FAIL grid[$tag] the report's like-for-like and targets sections"; }
# the server's stderr: nothing from a sanitizer (the ASan build runs this too)
if grep -q -E 'AddressSanitizer|LeakSanitizer|runtime error' "$T/grid/20000/quarry-data.serve.log" 2>/dev/null; then
    fail=$((fail + 1)); echo "FAIL grid[$tag] the server's log"; grep -m5 -E 'Sanitizer|runtime error' "$T/grid/20000/quarry-data.serve.log"
else
    pass=$((pass + 1)); echo "ok   grid[$tag] no sanitizer report in the server's log"
fi
echo "grid[$tag]: $pass passed, $fail failed"
mkdir -p "$root/build/results"
echo "$pass $fail" >> "$root/build/results/grid-$tag"
[ $fail -eq 0 ]
