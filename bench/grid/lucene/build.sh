#!/bin/sh
# bench/grid/lucene/build.sh - compile the Lucene peer into bench/out/grid/lucene-classes/
# (installs Debian's liblucene8-java when missing; recompiles only when the source is newer)
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
OUT="$ROOT/bench/out/grid/lucene-classes"
if ! dpkg-query -W -f='${Status}' liblucene8-java 2>/dev/null | grep -q "install ok installed"; then
    echo "lucene: installing liblucene8-java" >&2
    apt-get install -y --no-install-recommends liblucene8-java >&2
fi
. "$HERE/classpath.sh"
SRC="$HERE/QuarryLuceneBench.java"
STAMP="$OUT/QuarryLuceneBench.class"
if [ -f "$STAMP" ] && [ "$STAMP" -nt "$SRC" ]; then
    exit 0
fi
mkdir -p "$OUT"
echo "lucene: compiling $SRC" >&2
nice javac -encoding UTF-8 -nowarn -d "$OUT" -cp "$LUCENE_JARS" "$SRC"
