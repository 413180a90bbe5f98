#!/bin/sh
# bench/grid/lucene/build.sh - compile the Lucene peer into bench/out/grid/lucene-classes/
# (installs Debian's liblucene8-java, and a JDK when there is no javac, when missing;
# recompiles only when the source is newer). Idempotent; grid.py runs it before using Lucene.
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
OUT="$ROOT/bench/out/grid/lucene-classes"
need=""
dpkg-query -W -f='${Status}' liblucene8-java 2>/dev/null | grep -q "install ok installed" || need="liblucene8-java"
command -v javac >/dev/null 2>&1 || need="$need openjdk-17-jdk-headless"
if [ -n "$need" ]; then
    echo "lucene: installing$need" >&2
    export DEBIAN_FRONTEND=noninteractive
    # a fresh machine may not have the package lists yet: update once and retry
    apt-get install -y --no-install-recommends $need >&2 ||
        { apt-get update -qq >&2 && apt-get install -y --no-install-recommends $need >&2; }
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
