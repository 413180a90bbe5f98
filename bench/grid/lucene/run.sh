#!/bin/sh
# bench/grid/lucene/run.sh ARGS... - run the Lucene peer (builds it first when needed):
#   run.sh load CORPUS.ndjson INDEXDIR
#   run.sh run INDEXDIR QUERIES.json IDS ROUNDS
# JVM: fixed 4 GB heap (-Xms = -Xmx, no resizing noise), parallel GC; the index itself is
# memory-mapped outside the heap. Override with LUCENE_JAVA_OPTS; LUCENE_JAVA_PROPS is added
# after them (grid.py passes -Dquarry.timeout_ms there).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
"$HERE/build.sh"
. "$HERE/classpath.sh"
exec java ${LUCENE_JAVA_OPTS:--Xms4g -Xmx4g -XX:+UseParallelGC -XX:-UsePerfData} ${LUCENE_JAVA_PROPS:-} \
    -cp "$ROOT/bench/out/grid/lucene-classes:$LUCENE_JARS" QuarryLuceneBench "$@"
