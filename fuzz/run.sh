#!/usr/bin/env bash
# fuzz/run.sh - builds and runs every libFuzzer target fuzz/fuzz_X.c.
# Usage: bash fuzz/run.sh SECONDS   (FUZZ_ONLY=fuzz_X: that target alone)
#
# The library sources (src/*/*.c but src/cli) are compiled once per set of
# flags into fuzz/build/lib-*.a (both cores); each target links against it,
# then is fuzzed for SECONDS on a scratch copy of fuzz/corpus/X/ (the
# committed corpus never grows). Prints one line per target, appends
# "passed failed" to build/results/fuzz, and exits non-zero when a target
# failed to build or found a crash (input saved as fuzz/build/fuzz_X-crash-*).
set -uo pipefail
cd "$(dirname "$0")/.."

secs=${1:-}
if ! [[ $secs =~ ^[0-9]+$ ]] || [ "$secs" -eq 0 ]; then
    echo "usage: bash fuzz/run.sh SECONDS" >&2
    exit 2
fi

CFLAGS=(-std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Isrc -Ibuild/gen)
LIBS=(-lpg_query -lprotobuf-c -lmicrohttpd -lz -lzstd -lxxhash -lunistring -lssl -lcrypto -lpthread -lm)
shopt -s nullglob
# the generated OTLP messages too (make fuzz makes them first)
lib_src=($(ls src/*/*.c | grep -v "^src/cli/") build/gen/http/otlp_logs.pb-c.c)
# UB must stop the run like a crash does, not just print a warning.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1"

mkdir -p fuzz/build build/results
rm -rf fuzz/build/lib-* fuzz/build/obj-* # sources may have changed since the last run
pass=0
fail=0

# The library for a set of extra flags, built once (objects in parallel).
lib_for() {
    local key lib objdir
    key=$(echo "${CFLAGS[*]} $*" | md5sum | cut -c1-12)
    lib=fuzz/build/lib-$key.a
    if [ ! -f "$lib" ]; then
        objdir=fuzz/build/obj-$key
        rm -rf "$objdir"
        mkdir -p "$objdir"
        printf '%s\n' "${lib_src[@]}" | xargs -P 2 -I{} sh -c \
            'clang "$@" -c "$0" -o "'"$objdir"'/$(echo "$0" | tr / _).o"' {} "${CFLAGS[@]}" "$@" ||
            return 1
        ar rcs "$lib" "$objdir"/*.o || return 1
    fi
    echo "$lib"
}
for src in fuzz/fuzz_*.c; do
    [ -n "${FUZZ_ONLY:-}" ] && [ "$(basename "$src" .c)" != "$FUZZ_ONLY" ] && continue
    name=$(basename "$src" .c)
    bin=fuzz/build/$name
    log=fuzz/build/$name.log
    # a target may add flags for the whole build and name another's corpus
    # ("fuzz-cflags: ..." / "fuzz-corpus: NAME" in its header comment)
    extra=($(sed -n 's/^ \* fuzz-cflags: //p' "$src"))
    corpus=$(sed -n 's/^ \* fuzz-corpus: //p' "$src")
    if ! lib=$(lib_for "${extra[@]}" 2>"$log") ||
        ! clang "${CFLAGS[@]}" "${extra[@]}" -Ifuzz -o "$bin" "$src" "$lib" "${LIBS[@]}" >>"$log" 2>&1; then
        tail -20 "$log"
        echo "FAIL $name: does not build (see $log)"
        fail=$((fail + 1))
        continue
    fi
    work=fuzz/build/$name.corpus
    rm -rf "$work" fuzz/build/"$name"-crash-* fuzz/build/"$name"-leak-* \
        fuzz/build/"$name"-timeout-* fuzz/build/"$name"-oom-*
    mkdir -p "$work"
    seeds=fuzz/corpus/${corpus:-${name#fuzz_}}
    [ -d "$seeds" ] && cp -R "$seeds"/. "$work"/
    nseeds=$(find "$work" -type f | wc -l)
    # scratch files in a directory of the target's own, removed after the
    # run whatever its end (fuzz_tmp.h)
    scratch=$PWD/fuzz/build/$name.tmp
    rm -rf "$scratch"
    mkdir -p "$scratch"
    TMPDIR=$scratch "$bin" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
        -artifact_prefix=fuzz/build/"$name"- "$work" >>"$log" 2>&1
    rc=$?
    rm -rf "$scratch"
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ $rc -eq 0 ]; then
        echo "ok   $name: ${runs:-?} runs in ${secs}s, corpus $nseeds -> $(find "$work" -type f | wc -l)"
        pass=$((pass + 1))
    else
        tail -40 "$log"
        found=$(ls fuzz/build/"$name"-* 2>/dev/null | grep -v -e '\.log$' -e '\.corpus$' | head -1)
        echo "FAIL $name: exit $rc after ${runs:-?} runs${found:+, input saved as $found} (log $log)"
        fail=$((fail + 1))
    fi
done
echo "$pass $fail" >>build/results/fuzz
echo "fuzz: $pass passed, $fail failed"
[ $fail -eq 0 ]
