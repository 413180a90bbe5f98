# sourced: LUCENE_JARS = the Debian Lucene jars the peer needs (versioned or unversioned names)
jar() {
    for f in /usr/share/java/lucene-$1.jar /usr/share/java/lucene-$1-8*.jar; do
        [ -f "$f" ] && { echo "$f"; return; }
    done
    echo "lucene: missing /usr/share/java/lucene-$1*.jar (apt-get install liblucene8-java)" >&2
    return 1
}
LUCENE_JARS="$(jar core):$(jar analyzers-common):$(jar sandbox)"
