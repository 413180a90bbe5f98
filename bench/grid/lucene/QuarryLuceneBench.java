// QuarryLuceneBench - the Lucene 8 peer of the query grid (bench/grid/grid.py).
//
//   load CORPUS.ndjson INDEXDIR          build the index, print {"engine":"lucene",...,"load_s":..}
//   run INDEXDIR QUERIES.json IDS ROUNDS run the queries (IDS: comma list or "all"), print one
//                                        JSON line per query after the last round
//
// Only stdout carries results; logs go to stderr. No libraries beyond the Lucene jars
// Debian packages (core and analyzers-common); JSON is parsed by the small parser below.
//
// Index layout (field names are the column names):
//   Body           TextField, stored; analyzer: maximal runs of Character.isLetterOrDigit,
//                  lowercased (Quarry's word rule), positions indexed, BM25 (k1 1.2, b 0.75)
//   Timestamp      long ns since the epoch: LongPoint + NumericDocValuesField + StoredField
//   ServiceName    StringField (stored) + SortedDocValuesField
//   SeverityText, ScopeName   StringField + SortedDocValuesField
//   TraceId        StringField + SortedDocValuesField, only when non-empty (so a join never
//                  sees the empty id)
//   SeverityNumber IntPoint + NumericDocValuesField
//   The other columns (SpanId, TraceFlags, schema URLs, ScopeVersion and the three attribute
//   objects) are NOT indexed nor stored: the grid returns only Timestamp, ServiceName, Body.
//   Index sorted by Timestamp ascending, one segment (forceMerge(1)).
//
// Query side: IndexSearcher over MMapDirectory, BM25Similarity, the query cache DISABLED by
// default (set LUCENE_QUERY_CACHE=1 to keep Lucene's default LRUQueryCache) so that the second
// hot round measures evaluation, not a cached filter bitset.
//
// Families: count = IndexSearcher.count's path (docFreq / numDocs shortcuts, else a hit
// counter); topk = TopScoreDocCollector(limit, total hits counted to 1000: block-max WAND),
// text nodes MUST (scored), field/time nodes FILTER; recent/time = reverse Timestamp sort over a
// growing window of the newest rows, the last matches of each time-sorted segment (see
// newest()); recent/none = the first `limit` matches
// in doc order (i.e. the oldest), then CollectionTerminatedException; group = doc values into
// per-segment ordinal count arrays (see Buffered); join = hash join over TraceId ordinals
// (see join()). A query past the time limit throws from its collector: "timeout".
// Filter nodes: term TermQuery; and/or/not/atleast BooleanQuery (MUST/SHOULD/MUST_NOT,
// minimumNumberShouldMatch); phrase PhraseQuery; gap PhraseQuery with positions 0 and gap+1;
// near SpanNearQuery(ordered, slop n); prefix PrefixQuery; regexp RegexpQuery (RegExp.NONE);
// like WildcardQuery (% -> *, _ -> ?); fuzzy FuzzyQuery (Damerau, prefix 0, <= 2 edits);
// field TermQuery / IntPoint range; time IndexSortSortedNumericDocValuesRangeQuery.
// Scores: Lucene 8's BM25 drops the constant (k1 + 1) factor and stores document lengths as
// one-byte norms (lossy), so scores are textbook BM25 / 2.2 with quantised lengths; multi-term
// queries (prefix, regexp, like) score a constant (their default constant-score rewrite); fuzzy
// scores by its blended top-terms rewrite. Equal scores come in doc id (= time) order.

import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;

import org.apache.lucene.analysis.*;
import org.apache.lucene.analysis.util.CharTokenizer;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.search.*;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.search.spans.*;
import org.apache.lucene.store.*;
import org.apache.lucene.util.*;
import org.apache.lucene.util.automaton.LevenshteinAutomata;
import org.apache.lucene.util.automaton.RegExp;
import org.apache.lucene.util.packed.PackedInts;

public class QuarryLuceneBench {
    static final String TS = "Timestamp", SVC = "ServiceName", BODY = "Body", SEV = "SeverityText",
            SCOPE = "ScopeName", TRACE = "TraceId", SEVNUM = "SeverityNumber";
    static final long TIMEOUT_NS = Long.getLong("quarry.timeout_ms", 60000L) * 1_000_000L;

    static void log(String s) { System.err.println("lucene: " + s); }

    public static void main(String[] a) throws Exception {
        if (a.length == 3 && a[0].equals("load")) { load(a[1], a[2]); return; }
        if (a.length == 5 && a[0].equals("run")) { run(a[1], a[2], a[3], Integer.parseInt(a[4])); return; }
        System.err.println("usage: load CORPUS.ndjson INDEXDIR | run INDEXDIR QUERIES.json IDS ROUNDS");
        System.exit(2);
    }

    // ---- analysis ------------------------------------------------------------------------

    /** a token = maximal run of letters and digits (code points), lowercased; no length cap */
    static final class WordTokenizer extends CharTokenizer {
        WordTokenizer() { super(TokenStream.DEFAULT_TOKEN_ATTRIBUTE_FACTORY, 1024 * 1024); }
        @Override protected boolean isTokenChar(int c) { return Character.isLetterOrDigit(c); }
    }

    static Analyzer analyzer() {
        return new Analyzer() {
            @Override protected TokenStreamComponents createComponents(String field) {
                Tokenizer t = new WordTokenizer();
                return new TokenStreamComponents(t, new LowerCaseFilter(t));
            }
            @Override protected TokenStream normalize(String field, TokenStream in) { return new LowerCaseFilter(in); }
        };
    }

    // ---- load ------------------------------------------------------------------------------

    static void load(String corpus, String dir) throws Exception {
        long t0 = System.nanoTime();
        Path p = Paths.get(dir);
        if (Files.exists(p)) { // a fresh index every time
            try (var w = Files.walk(p)) {
                w.sorted(Comparator.reverseOrder()).forEach(x -> x.toFile().delete());
            }
        }
        Files.createDirectories(p);
        IndexWriterConfig cfg = new IndexWriterConfig(analyzer());
        cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        cfg.setSimilarity(new BM25Similarity());
        cfg.setIndexSort(new Sort(new SortField(TS, SortField.Type.LONG)));
        cfg.setRAMBufferSizeMB(Double.parseDouble(System.getProperty("quarry.ram_mb", "512")));
        cfg.setRAMPerThreadHardLimitMB(1024);
        cfg.setUseCompoundFile(false);
        int threads = Integer.getInteger("quarry.threads", Math.min(2, Runtime.getRuntime().availableProcessors()));
        AtomicLong rows = new AtomicLong();
        try (Directory d = FSDirectory.open(p); IndexWriter w = new IndexWriter(d, cfg)) {
            BlockingQueue<List<String>> q = new ArrayBlockingQueue<>(64);
            final List<String> END = new ArrayList<>();
            AtomicReference<Throwable> err = new AtomicReference<>();
            Thread[] ws = new Thread[threads];
            for (int i = 0; i < threads; i++) {
                ws[i] = new Thread(() -> {
                    Doc doc = new Doc();
                    try {
                        for (List<String> batch; (batch = q.take()) != END; ) {
                            for (String line : batch) {
                                if (line.isEmpty()) continue;
                                doc.fill(line);
                                w.addDocument(doc.fields);
                                long n = rows.incrementAndGet();
                                if (n % 200000 == 0) log("loaded " + n + " rows");
                            }
                        }
                    } catch (Throwable e) { err.compareAndSet(null, e); }
                });
                ws[i].start();
            }
            try (BufferedReader r = new BufferedReader(new InputStreamReader(new FileInputStream(corpus), StandardCharsets.UTF_8), 1 << 20)) {
                List<String> batch = new ArrayList<>(1000);
                for (String line; (line = r.readLine()) != null; ) {
                    batch.add(line);
                    if (batch.size() == 1000) {
                        while (!q.offer(batch, 100, TimeUnit.MILLISECONDS))
                            if (err.get() != null) break;
                        batch = new ArrayList<>(1000);
                    }
                    if (err.get() != null) break;
                }
                if (!batch.isEmpty()) q.put(batch);
            } finally {
                for (int i = 0; i < threads; i++) q.put(END);
                for (Thread t : ws) t.join();
            }
            if (err.get() != null) throw new RuntimeException("indexing failed", err.get());
            log("parsed and indexed " + rows.get() + " rows in " + (System.nanoTime() - t0) / 1e9 + " s; force-merging");
            w.forceMerge(1);
            w.commit();
        }
        double s = (System.nanoTime() - t0) / 1e9;
        System.out.println("{\"engine\":\"lucene\",\"version\":\"" + Version.LATEST + "\",\"rows\":" + rows.get() + ",\"load_s\":" + String.format(Locale.ROOT, "%.3f", s) + "}");
    }

    /** one reusable document per indexing thread (Lucene's recommended field reuse) */
    static final class Doc {
        final LongPoint tsPoint = new LongPoint(TS, 0L);
        final NumericDocValuesField tsDv = new NumericDocValuesField(TS, 0L);
        final StoredField tsStored = new StoredField(TS, 0L);
        final Field svc = new StringField(SVC, "", Field.Store.YES);
        final SortedDocValuesField svcDv = new SortedDocValuesField(SVC, new BytesRef());
        final Field sev = new StringField(SEV, "", Field.Store.NO);
        final SortedDocValuesField sevDv = new SortedDocValuesField(SEV, new BytesRef());
        final Field scope = new StringField(SCOPE, "", Field.Store.NO);
        final SortedDocValuesField scopeDv = new SortedDocValuesField(SCOPE, new BytesRef());
        final Field trace = new StringField(TRACE, "", Field.Store.NO);
        final SortedDocValuesField traceDv = new SortedDocValuesField(TRACE, new BytesRef());
        final IntPoint sevNum = new IntPoint(SEVNUM, 0);
        final NumericDocValuesField sevNumDv = new NumericDocValuesField(SEVNUM, 0L);
        final Field body = new TextField(BODY, "", Field.Store.YES);
        final List<IndexableField> fields = new ArrayList<>();

        void fill(String line) {
            Map<String, Object> j = Json.obj(line);
            long ts = parseTs(str(j, TS));
            tsPoint.setLongValue(ts); tsDv.setLongValue(ts); tsStored.setLongValue(ts);
            String s = str(j, SVC); svc.setStringValue(s); svcDv.setBytesValue(new BytesRef(s));
            s = str(j, SEV); sev.setStringValue(s); sevDv.setBytesValue(new BytesRef(s));
            s = str(j, SCOPE); scope.setStringValue(s); scopeDv.setBytesValue(new BytesRef(s));
            Object n = j.get(SEVNUM);
            int sn = n == null ? 0 : ((Number) n).intValue();
            sevNum.setIntValue(sn); sevNumDv.setLongValue(sn);
            body.setStringValue(str(j, BODY));
            fields.clear();
            Collections.addAll(fields, tsPoint, tsDv, tsStored, svc, svcDv, sev, sevDv, scope, scopeDv, sevNum, sevNumDv, body);
            String t = str(j, TRACE);
            if (!t.isEmpty()) {
                trace.setStringValue(t); traceDv.setBytesValue(new BytesRef(t));
                fields.add(trace); fields.add(traceDv);
            }
        }

        static String str(Map<String, Object> j, String k) {
            Object v = j.get(k);
            return v == null ? "" : v.toString();
        }
    }

    /** RFC 3339 "2025-09-23T00:00:00.359998611Z" -> ns since the epoch */
    static long parseTs(String s) {
        try {
            if (s.length() >= 20 && s.charAt(4) == '-' && s.charAt(10) == 'T' && s.charAt(s.length() - 1) == 'Z') {
                int y = num(s, 0, 4), mo = num(s, 5, 7), d = num(s, 8, 10);
                int h = num(s, 11, 13), mi = num(s, 14, 16), se = num(s, 17, 19);
                long frac = 0;
                int i = 19;
                if (s.charAt(19) == '.') {
                    int digits = 0;
                    for (i = 20; i < s.length() - 1; i++, digits++) {
                        char c = s.charAt(i);
                        if (c < '0' || c > '9') throw new IllegalArgumentException(s);
                        if (digits < 9) frac = frac * 10 + (c - '0');
                    }
                    for (; digits < 9; digits++) frac *= 10;
                }
                if (i != s.length() - 1) throw new IllegalArgumentException(s);
                long days = daysFromCivil(y, mo, d);
                return ((days * 24 + h) * 60 + mi) * 60_000_000_000L + se * 1_000_000_000L + frac;
            }
        } catch (RuntimeException e) { /* fall through */ }
        java.time.Instant in = java.time.Instant.parse(s);
        return in.getEpochSecond() * 1_000_000_000L + in.getNano();
    }

    static int num(String s, int a, int b) {
        int v = 0;
        for (int i = a; i < b; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') throw new IllegalArgumentException(s);
            v = v * 10 + (c - '0');
        }
        return v;
    }

    static long daysFromCivil(long y, int m, int d) { // H. Hinnant's algorithm
        y -= m <= 2 ? 1 : 0;
        long era = (y >= 0 ? y : y - 399) / 400;
        long yoe = y - era * 400;
        long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
    }

    // ---- run -------------------------------------------------------------------------------

    static final class Unsupported extends RuntimeException { Unsupported(String m) { super(m); } }
    static final class Timeout extends RuntimeException { Timeout() { super("past the time limit", null, false, false); } }

    static final class Result {
        final String id; String status = "ok", msg; final List<Double> times = new ArrayList<>(); String rows = "[]";
        Result(String id) { this.id = id; }
    }

    static IndexSearcher searcher;
    static IndexReader reader;
    static final Set<String> ROW_FIELDS = Set.of(TS, SVC, BODY);

    static void run(String dir, String queriesPath, String ids, int rounds) throws Exception {
        BooleanQuery.setMaxClauseCount(1 << 16); // fuzzy expansions (see fuzzy())
        Map<String, Object> file = Json.obj(new String(Files.readAllBytes(Paths.get(queriesPath)), StandardCharsets.UTF_8));
        @SuppressWarnings("unchecked") List<Object> all = (List<Object>) file.get("queries");
        List<Map<String, Object>> qs = new ArrayList<>();
        Set<String> want = ids.equals("all") ? null : new HashSet<>(Arrays.asList(ids.split(",")));
        for (Object o : all) {
            @SuppressWarnings("unchecked") Map<String, Object> q = (Map<String, Object>) o;
            if (want == null || want.contains((String) q.get("id"))) qs.add(q);
        }
        try (Directory d = new MMapDirectory(Paths.get(dir))) {
            reader = DirectoryReader.open(d);
            searcher = new IndexSearcher(reader);
            searcher.setSimilarity(new BM25Similarity());
            if (!"1".equals(System.getenv("LUCENE_QUERY_CACHE"))) searcher.setQueryCache(null);
            log("index: " + reader.maxDoc() + " docs, " + reader.leaves().size() + " segment(s)");
            Map<String, Result> res = new LinkedHashMap<>();
            for (Map<String, Object> q : qs) res.put((String) q.get("id"), new Result((String) q.get("id")));
            // LUCENE_WARMUP_ROUNDS=N: N untimed rounds first (default 0: every round is timed)
            int warm = Integer.parseInt(Optional.ofNullable(System.getenv("LUCENE_WARMUP_ROUNDS")).orElse("0"));
            for (int r = 0; r < warm + rounds; r++) {
                for (Map<String, Object> q : qs) {
                    Result out = res.get((String) q.get("id"));
                    if (!out.status.equals("ok")) continue; // no second try after a timeout or an error
                    long t0 = System.nanoTime();
                    try {
                        String rows = execute(q, t0 + TIMEOUT_NS);
                        if (r >= warm) out.times.add((System.nanoTime() - t0) / 1e6);
                        out.rows = rows;
                    } catch (Unsupported e) {
                        out.status = "unsupported"; out.msg = e.getMessage(); out.times.clear();
                    } catch (Timeout e) {
                        out.status = "timeout"; out.msg = "stopped past " + TIMEOUT_NS / 1_000_000L + " ms"; out.times.clear();
                    } catch (Throwable e) {
                        out.status = "error"; out.msg = e.toString(); out.times.clear();
                        log(out.id + ": " + e);
                    }
                }
            }
            PrintStream o = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
            for (Result r : res.values()) {
                StringBuilder b = new StringBuilder("{\"id\":");
                Json.str(b, r.id);
                b.append(",\"status\":"); Json.str(b, r.status);
                if (r.msg != null) { b.append(",\"msg\":"); Json.str(b, r.msg); }
                b.append(",\"times_ms\":[");
                for (int i = 0; i < r.times.size(); i++) b.append(i > 0 ? "," : "").append(String.format(Locale.ROOT, "%.3f", r.times.get(i)));
                b.append("],\"rows\":").append(r.status.equals("ok") ? r.rows : "[]").append('}');
                o.println(b);
            }
            o.flush();
            reader.close();
        }
    }

    @SuppressWarnings("unchecked")
    static String execute(Map<String, Object> q, long deadline) throws IOException {
        String fam = (String) q.get("family");
        Map<String, Object> f = (Map<String, Object>) q.get("filter");
        switch (fam) {
            case "count": {
                Query query = build(f, false);
                long n;
                // IndexSearcher.count's shortcuts (docFreq of a term, numDocs) are instant; for
                // the rest it runs a TotalHitCountCollector: HitCounter below is the same, plus the clock.
                Query u = query instanceof ConstantScoreQuery ? ((ConstantScoreQuery) query).getQuery() : query;
                if (u instanceof TermQuery || u instanceof MatchAllDocsQuery) n = searcher.count(query);
                else { HitCounter c = new HitCounter(deadline); searcher.search(query, c); n = c.n; }
                return "[[" + n + "]]";
            }
            case "topk": {
                int limit = ((Number) q.get("limit")).intValue();
                Query query = build(f, true);
                // searcher.search(query, n)'s collector: total hits counted up to 1000, then
                // block-max WAND skipping (ScoreMode.TOP_SCORES)
                TopScoreDocCollector c = TopScoreDocCollector.create(limit, 1000);
                searcher.search(query, new Clocked(c, deadline));
                return rows(c.topDocs().scoreDocs, true);
            }
            case "recent": {
                int limit = ((Number) q.get("limit")).intValue();
                Query query = build(f, false);
                if ("time".equals(q.get("order"))) return rows(newest(query, limit, deadline), false);
                FirstN c = new FirstN(limit, deadline);
                searcher.search(query, c);
                ScoreDoc[] sd = new ScoreDoc[c.docs.size()];
                for (int i = 0; i < sd.length; i++) sd[i] = new ScoreDoc(c.docs.get(i), 0f);
                return rows(sd, false);
            }
            case "group": {
                List<Object> keys = (List<Object>) q.get("group_by");
                Query query = build(f, false);
                return group(query, keys, deadline);
            }
            case "join": {
                Map<String, Object> j = (Map<String, Object>) q.get("join");
                return join((String) j.get("a_service"), (String) j.get("b_service"), (Map<String, Object>) j.get("b_filter"), deadline);
            }
            default:
                throw new Unsupported("family " + fam);
        }
    }

    /** the newest `limit` matches, newest first.
     *  Every segment is sorted by Timestamp ascending (the index sort), so within a segment the
     *  newest matches are simply the last ones in doc id order: LastN keeps the last `limit`
     *  matching doc ids of each segment in a ring (no comparisons), and the candidates of all
     *  segments are then ordered by their Timestamp doc value. To avoid walking the whole
     *  segment, the query runs over a growing window of the newest rows first: query AND
     *  Timestamp >= hi - delta (delta x8 per step) until the window holds `limit` matches (no
     *  row outside it can be newer: all have Timestamp < hi - delta) or covers everything. The
     *  window is an IndexSortSortedNumericDocValuesRangeQuery: a doc-id range found by binary
     *  search over the doc values of the time-sorted segment.
     *  (Lucene's own TopFieldCollector with a reverse sort is the fallback when a segment is not
     *  time-sorted, and with LUCENE_RECENT=plain; its points-based skipping, setCanUsePoints,
     *  cannot help here: walking an ascending segment forward every match beats the last.) */
    static ScoreDoc[] newest(Query query, int limit, long deadline) throws IOException {
        if (limit <= 0) return new ScoreDoc[0];
        long lo = Long.MAX_VALUE, hi = Long.MIN_VALUE;
        boolean sorted = true;
        for (LeafReaderContext ctx : reader.leaves()) {
            Sort is = ctx.reader().getMetaData().getSort();
            if (is == null || is.getSort().length == 0 || !is.getSort()[0].getField().equals(TS)
                    || is.getSort()[0].getReverse() || is.getSort()[0].getType() != SortField.Type.LONG) sorted = false;
            PointValues pv = ctx.reader().getPointValues(TS);
            if (pv == null || pv.size() == 0) continue;
            lo = Math.min(lo, LongPoint.decodeDimension(pv.getMinPackedValue(), 0));
            hi = Math.max(hi, LongPoint.decodeDimension(pv.getMaxPackedValue(), 0));
        }
        if ("plain".equals(System.getenv("LUCENE_RECENT")) || !sorted || lo > hi) {
            SortField sf = new SortField(TS, SortField.Type.LONG, true);
            sf.setCanUsePoints();
            TopFieldCollector c = TopFieldCollector.create(new Sort(sf), limit, limit);
            searcher.search(query, new Clocked(c, deadline));
            return c.topDocs().scoreDocs;
        }
        double span = (double) hi - (double) lo;
        double delta = span * Math.min(1.0, 8.0 * limit / Math.max(1, reader.maxDoc()));
        while (true) {
            boolean full = delta >= span;
            Query wq = query;
            if (!full) {
                long from = hi - Math.max(1L, (long) delta);
                wq = new BooleanQuery.Builder().add(query, BooleanClause.Occur.FILTER)
                        .add(timeRange(from, Long.MAX_VALUE), BooleanClause.Occur.FILTER).build();
            }
            LastN c = new LastN(limit, deadline);
            c.run(wq);
            if (full || c.found >= limit) return c.top();
            delta *= 8;
        }
    }

    /** the last `limit` matching docs of each segment (a ring of doc ids) */
    static final class LastN extends Buffered {
        final int limit; final int[] ring; int count; long found;
        final List<long[]> cand = new ArrayList<>(); // {ts, global doc}
        LeafReaderContext ctx;
        LastN(int limit, long deadline) { super(deadline); this.limit = limit; ring = new int[limit]; }
        @Override void leaf(LeafReaderContext c) { ctx = c; count = 0; }
        @Override void block(int[] docs, int n) {
            int[] ring = this.ring; int lim = limit;
            for (int i = 0; i < n; i++) ring[(count++) % lim] = docs[i];
            found += n;
        }
        @Override void endLeaf() throws IOException {
            NumericDocValues dv = DocValues.getNumeric(ctx.reader(), TS);
            int k = Math.min(count, limit);
            int[] docs = new int[k];
            for (int i = 0; i < k; i++) docs[i] = ring[(count - k + i) % limit];
            for (int d : docs) // ascending doc ids: advanceExact moves forward only
                cand.add(new long[]{dv.advanceExact(d) ? dv.longValue() : Long.MIN_VALUE, ctx.docBase + d});
        }
        ScoreDoc[] top() {
            cand.sort((x, y) -> x[0] != y[0] ? Long.compare(y[0], x[0]) : Long.compare(x[1], y[1]));
            int k = Math.min(limit, cand.size());
            ScoreDoc[] sd = new ScoreDoc[k];
            for (int i = 0; i < k; i++) sd[i] = new ScoreDoc((int) cand.get(i)[1], 0f);
            return sd;
        }
    }

    /** Timestamp in [from, to]: a doc-id range on the time-sorted segment (binary search over
     *  the doc values, lucene-sandbox), LongPoint's BKD range where a segment is not sorted */
    static Query timeRange(long from, long to) {
        return new IndexSortSortedNumericDocValuesRangeQuery(TS, from, to, LongPoint.newRangeQuery(TS, from, to));
    }

    static String rows(ScoreDoc[] sd, boolean score) throws IOException {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < sd.length; i++) {
            Document d = searcher.doc(sd[i].doc, ROW_FIELDS);
            b.append(i > 0 ? ",[" : "[").append(d.getField(TS).numericValue().longValue()).append(',');
            Json.str(b, d.get(SVC));
            b.append(',');
            Json.str(b, d.get(BODY));
            if (score) b.append(',').append(Float.toString(sd[i].score));
            b.append(']');
        }
        return b.append(']').toString();
    }

    // ---- filter trees -> queries ---------------------------------------------------------------

    static boolean isText(Map<String, Object> n) {
        String t = (String) n.get("t");
        if (t.equals("field") || t.equals("time")) return false;
        for (Map<String, Object> c : kids(n)) if (!isText(c)) return false;
        return true;
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> kids(Map<String, Object> n) {
        Object c = n.get("c");
        if (c == null) return List.of();
        if (c instanceof List) return (List<Map<String, Object>>) (List<?>) c;
        return List.of((Map<String, Object>) c);
    }

    /** the query of a filter; scoring: text nodes score (BM25), field and time nodes are FILTERs */
    static Query build(Map<String, Object> n, boolean scoring) {
        if (n == null) return new MatchAllDocsQuery();
        // no ConstantScoreQuery wrapper without scores: the collectors' ScoreMode already says
        // COMPLETE_NO_SCORES / TOP_DOCS, and a wrapper would hide the sort's competitive iterator
        // from MatchAllDocsQuery's bulk scorer
        return node(n, scoring);
    }

    @SuppressWarnings("unchecked")
    static Query node(Map<String, Object> n, boolean scoring) {
        String t = (String) n.get("t");
        switch (t) {
            case "term": return new TermQuery(new Term(BODY, (String) n.get("w")));
            case "and": {
                BooleanQuery.Builder b = new BooleanQuery.Builder();
                boolean positive = false;
                for (Map<String, Object> c : kids(n)) {
                    String ct = (String) c.get("t");
                    if (ct.equals("not")) { b.add(node((Map<String, Object>) c.get("c"), false), BooleanClause.Occur.MUST_NOT); continue; }
                    positive = true;
                    b.add(node(c, scoring), scoring && isText(c) ? BooleanClause.Occur.MUST : BooleanClause.Occur.FILTER);
                }
                if (!positive) b.add(new MatchAllDocsQuery(), BooleanClause.Occur.FILTER);
                return b.build();
            }
            case "or": {
                BooleanQuery.Builder b = new BooleanQuery.Builder();
                for (Map<String, Object> c : kids(n)) {
                    Query cq = node(c, scoring);
                    if (!isText(c)) cq = new BoostQuery(new ConstantScoreQuery(cq), 0f); // matches, adds no score
                    b.add(cq, BooleanClause.Occur.SHOULD);
                }
                return b.build();
            }
            case "not": {
                BooleanQuery.Builder b = new BooleanQuery.Builder();
                b.add(new MatchAllDocsQuery(), BooleanClause.Occur.FILTER);
                b.add(node((Map<String, Object>) n.get("c"), false), BooleanClause.Occur.MUST_NOT);
                return b.build();
            }
            case "atleast": {
                BooleanQuery.Builder b = new BooleanQuery.Builder();
                for (Map<String, Object> c : kids(n)) b.add(node(c, scoring), BooleanClause.Occur.SHOULD);
                b.setMinimumNumberShouldMatch(((Number) n.get("k")).intValue());
                return b.build();
            }
            case "phrase": {
                List<Object> ws = (List<Object>) n.get("w");
                if (ws.size() == 1) return new TermQuery(new Term(BODY, (String) ws.get(0)));
                PhraseQuery.Builder b = new PhraseQuery.Builder();
                for (int i = 0; i < ws.size(); i++) b.add(new Term(BODY, (String) ws.get(i)), i);
                return b.build();
            }
            case "gap": { // exactly `gap` words between: positions 0 and gap+1
                List<Object> ws = (List<Object>) n.get("w");
                int gap = ((Number) n.get("gap")).intValue();
                PhraseQuery.Builder b = new PhraseQuery.Builder();
                b.add(new Term(BODY, (String) ws.get(0)), 0);
                b.add(new Term(BODY, (String) ws.get(1)), gap + 1);
                return b.build();
            }
            case "near": { // the second word 1..n+1 positions after the first
                List<Object> ws = (List<Object>) n.get("w");
                int slop = ((Number) n.get("n")).intValue();
                SpanQuery[] cl = new SpanQuery[ws.size()];
                for (int i = 0; i < cl.length; i++) cl[i] = new SpanTermQuery(new Term(BODY, (String) ws.get(i)));
                return new SpanNearQuery(cl, slop, true);
            }
            case "prefix": return new PrefixQuery(new Term(BODY, (String) n.get("p")));
            case "regexp": // whole-term match; RegExp.NONE: no optional operators (& ~ <> # @)
                return new RegexpQuery(new Term(BODY, (String) n.get("re")), RegExp.NONE);
            case "like": {
                String p = (String) n.get("p");
                StringBuilder w = new StringBuilder();
                for (int i = 0; i < p.length(); i++) {
                    char c = p.charAt(i);
                    if (c == '%') w.append('*');
                    else if (c == '_') w.append('?');
                    else { if (c == '*' || c == '?' || c == '\\') w.append('\\'); w.append(c); }
                }
                return new WildcardQuery(new Term(BODY, w.toString()));
            }
            case "fuzzy": return fuzzy((String) n.get("w"), ((Number) n.get("d")).intValue(), scoring);
            case "field": return field(n);
            case "time":
                return timeRange(((Number) n.get("from_ns")).longValue(), ((Number) n.get("to_ns")).longValue());
            default:
                throw new Unsupported("filter node " + t);
        }
    }

    /** Damerau (transpositions = one edit), prefix length 0. Lucene's Levenshtein automata stop at
     *  2 edits. Scoring: FuzzyQuery's default rewrite keeps the best maxExpansions terms (capped by
     *  BooleanQuery.maxClauseCount, raised to 65536 in run()); without scores the constant-score
     *  rewrite matches every term within the distance, no cap at all. */
    static Query fuzzy(String w, int d, boolean scoring) {
        if (d > LevenshteinAutomata.MAXIMUM_SUPPORTED_DISTANCE)
            throw new Unsupported("Lucene's FuzzyQuery supports at most " + LevenshteinAutomata.MAXIMUM_SUPPORTED_DISTANCE + " edits");
        FuzzyQuery fq = new FuzzyQuery(new Term(BODY, w), d, 0, 1 << 16, true);
        if (!scoring) fq.setRewriteMethod(MultiTermQuery.CONSTANT_SCORE_REWRITE);
        return fq;
    }

    static Query field(Map<String, Object> n) {
        String col = (String) n.get("col"), op = (String) n.get("op");
        Object v = n.get("v");
        switch (col) {
            case SVC: case SEV: case SCOPE: case TRACE: {
                Query tq = new TermQuery(new Term(col, v.toString()));
                if (op.equals("=")) return tq;
                if (op.equals("!=") || op.equals("<>")) {
                    BooleanQuery.Builder b = new BooleanQuery.Builder();
                    b.add(new MatchAllDocsQuery(), BooleanClause.Occur.FILTER);
                    b.add(tq, BooleanClause.Occur.MUST_NOT);
                    return b.build();
                }
                throw new Unsupported(col + " " + op);
            }
            case SEVNUM: {
                int x = ((Number) v).intValue();
                switch (op) {
                    case "=": return IntPoint.newExactQuery(SEVNUM, x);
                    case ">=": return IntPoint.newRangeQuery(SEVNUM, x, Integer.MAX_VALUE);
                    case ">": return IntPoint.newRangeQuery(SEVNUM, Math.addExact(x, 1), Integer.MAX_VALUE);
                    case "<=": return IntPoint.newRangeQuery(SEVNUM, Integer.MIN_VALUE, x);
                    case "<": return IntPoint.newRangeQuery(SEVNUM, Integer.MIN_VALUE, Math.addExact(x, -1));
                    default: throw new Unsupported(col + " " + op);
                }
            }
            default:
                throw new Unsupported("column " + col);
        }
    }

    // ---- collectors ---------------------------------------------------------------------------

    /** counts matches (TotalHitCountCollector) and watches the clock */
    static final class HitCounter extends SimpleCollector {
        final long deadline; long n;
        HitCounter(long deadline) { this.deadline = deadline; }
        @Override public void collect(int doc) { if ((++n & 0xFFF) == 0 && System.nanoTime() > deadline) throw new Timeout(); }
        @Override public ScoreMode scoreMode() { return ScoreMode.COMPLETE_NO_SCORES; }
    }

    /** wraps a collector with a clock check; passes the scorer and the competitive iterator
     *  through so block-max WAND and the points-based sort skipping stay on */
    static final class Clocked implements Collector {
        final Collector in; final long deadline; long n;
        Clocked(Collector in, long deadline) { this.in = in; this.deadline = deadline; }
        @Override public ScoreMode scoreMode() { return in.scoreMode(); }
        @Override public LeafCollector getLeafCollector(LeafReaderContext ctx) throws IOException {
            if (System.nanoTime() > deadline) throw new Timeout();
            LeafCollector lc = in.getLeafCollector(ctx);
            return new LeafCollector() {
                @Override public void setScorer(Scorable s) throws IOException { lc.setScorer(s); }
                @Override public void collect(int doc) throws IOException {
                    if ((++n & 0xFFF) == 0 && System.nanoTime() > deadline) throw new Timeout();
                    lc.collect(doc);
                }
                @Override public DocIdSetIterator competitiveIterator() throws IOException { return lc.competitiveIterator(); }
            };
        }
    }

    /** the first n matching docs in index order, then early termination */
    static final class FirstN extends SimpleCollector {
        final int limit; final long deadline; final List<Integer> docs = new ArrayList<>(); int base;
        FirstN(int limit, long deadline) { this.limit = limit; this.deadline = deadline; }
        @Override protected void doSetNextReader(LeafReaderContext ctx) {
            if (docs.size() >= limit) throw new CollectionTerminatedException();
            base = ctx.docBase;
        }
        @Override public void collect(int doc) {
            docs.add(base + doc);
            if (docs.size() >= limit) throw new CollectionTerminatedException();
        }
        @Override public ScoreMode scoreMode() { return ScoreMode.COMPLETE_NO_SCORES; }
    }

    /** a collector that only buffers doc ids; each subclass reads doc values for a block of ids
     *  in its own loop. Across the grid Lucene's scorer loops call collect() through a
     *  megamorphic site (dozens of collector classes); a per-doc doc-values read inside
     *  collect() then runs 10-50x slower than in a fresh JVM. The block loop keeps its own
     *  (monomorphic) profile. */
    static abstract class Buffered extends SimpleCollector {
        final long deadline; final int[] buf = new int[2048]; int n; boolean open;
        Buffered(long deadline) { this.deadline = deadline; }
        abstract void leaf(LeafReaderContext ctx) throws IOException; // a new segment
        abstract void block(int[] docs, int n) throws IOException;   // docs of the current segment
        void endLeaf() throws IOException {}
        final void drain() throws IOException {
            if (n > 0) { block(buf, n); n = 0; }
            if (open) { endLeaf(); open = false; }
        }
        @Override protected final void doSetNextReader(LeafReaderContext ctx) throws IOException {
            drain(); leaf(ctx); open = true;
        }
        @Override public final void collect(int doc) throws IOException {
            buf[n++] = doc;
            if (n == buf.length) {
                if (System.nanoTime() > deadline) throw new Timeout();
                block(buf, n); n = 0;
            }
        }
        @Override public ScoreMode scoreMode() { return ScoreMode.COMPLETE_NO_SCORES; }
        /** run the search, then drain (Lucene 8 collectors have no end-of-search callback) */
        final void run(Query q) throws IOException { searcher.search(q, this); drain(); }
    }

    /** group by Timestamp truncated to a unit (NumericDocValues; the index is sorted by time, so
     *  equal keys arrive in runs) */
    static final class TimeGroups extends Buffered {
        final long u; final Map<Long, long[]> m = new HashMap<>(); NumericDocValues dv; long last = Long.MIN_VALUE, cnt;
        TimeGroups(long u, long deadline) { super(deadline); this.u = u; }
        void flush() { if (cnt > 0) m.computeIfAbsent(last, x -> new long[1])[0] += cnt; cnt = 0; }
        @Override void leaf(LeafReaderContext ctx) throws IOException { dv = DocValues.getNumeric(ctx.reader(), TS); }
        @Override void endLeaf() { flush(); }
        @Override void block(int[] docs, int n) throws IOException {
            NumericDocValues dv = this.dv;
            for (int i = 0; i < n; i++) {
                if (!dv.advanceExact(docs[i])) continue;
                long ts = dv.longValue(), k = ts - Math.floorMod(ts, u);
                if (k != last) { flush(); last = k; }
                cnt++;
            }
        }
    }

    /** group by one or two SortedDocValues columns: counts per (combined) ordinal per segment,
     *  resolved to strings at the segment's end */
    static final class OrdGroups extends Buffered {
        final String k1, k2; final Map<List<String>, long[]> m = new HashMap<>();
        SortedDocValues d1, d2; int c2; long[] counts;
        OrdGroups(String k1, String k2, long deadline) { super(deadline); this.k1 = k1; this.k2 = k2; }
        @Override void leaf(LeafReaderContext ctx) throws IOException {
            d1 = DocValues.getSorted(ctx.reader(), k1);
            d2 = k2 == null ? null : DocValues.getSorted(ctx.reader(), k2);
            c2 = k2 == null ? 1 : Math.max(1, d2.getValueCount());
            long size = (long) Math.max(1, d1.getValueCount()) * c2;
            if (size > 50_000_000L) throw new Unsupported("too many group combinations: " + size);
            counts = new long[(int) size];
        }
        @Override void block(int[] docs, int n) throws IOException {
            SortedDocValues d1 = this.d1, d2 = this.d2; long[] counts = this.counts; int c2 = this.c2;
            if (d2 == null) {
                for (int i = 0; i < n; i++) if (d1.advanceExact(docs[i])) counts[d1.ordValue()]++;
            } else {
                for (int i = 0; i < n; i++) { // every doc has both keys (see Doc)
                    int doc = docs[i];
                    if (d1.advanceExact(doc) && d2.advanceExact(doc)) counts[d1.ordValue() * c2 + d2.ordValue()]++;
                }
            }
        }
        @Override void endLeaf() throws IOException {
            for (int i = 0; i < counts.length; i++) {
                if (counts[i] == 0) continue;
                List<String> key = new ArrayList<>(2);
                key.add(d1.lookupOrd(k2 == null ? i : i / c2).utf8ToString());
                if (k2 != null) key.add(d2.lookupOrd(i % c2).utf8ToString());
                m.computeIfAbsent(key, x -> new long[1])[0] += counts[i];
            }
            counts = null;
        }
    }

    static String group(Query query, List<Object> keys, long deadline) throws IOException {
        if (keys.isEmpty() || keys.size() > 2) throw new Unsupported("group by " + keys);
        long unit = 0;
        if (keys.size() == 1 && (keys.get(0).equals("minute") || keys.get(0).equals("second")))
            unit = keys.get(0).equals("minute") ? 60_000_000_000L : 1_000_000_000L;
        for (Object k : keys)
            if (unit == 0 && !(k.equals(SEV) || k.equals(SCOPE) || k.equals(SVC) || k.equals(TRACE)))
                throw new Unsupported("group by " + k);
        StringBuilder b = new StringBuilder("[");
        int i = 0;
        if (unit != 0) {
            TimeGroups g = new TimeGroups(unit, deadline);
            g.run(query);
            for (Map.Entry<Long, long[]> e : g.m.entrySet())
                b.append(i++ > 0 ? ",[" : "[").append(e.getKey()).append(',').append(e.getValue()[0]).append(']');
            return b.append(']').toString();
        }
        OrdGroups g = new OrdGroups((String) keys.get(0), keys.size() > 1 ? (String) keys.get(1) : null, deadline);
        g.run(query);
        for (Map.Entry<List<String>, long[]> e : g.m.entrySet()) {
            b.append(i++ > 0 ? ",[" : "[");
            for (String s2 : e.getKey()) { Json.str(b, s2); b.append(','); }
            b.append(e.getValue()[0]).append(']');
        }
        return b.append(']').toString();
    }

    /** the self-join on TraceId as an application-side hash join over doc values: side B
     *  (ServiceName = B AND b_filter) counts its rows per TraceId global ordinal (an int array;
     *  OrdinalMap when there are several segments), then side A (ServiceName = A; rows without a
     *  TraceId have no value, so '' never joins) sums countB[ord] per row (pairs) and marks the
     *  ordinals it met (distinct traces). lucene-join's JoinUtil is not used: it returns the
     *  joined documents, not the pair multiplicities count(*) needs. */
    @SuppressWarnings("unchecked")
    static String join(String aSvc, String bSvc, Map<String, Object> bFilter, long deadline) throws IOException {
        List<LeafReaderContext> leaves = reader.leaves();
        SortedDocValues[] segs = new SortedDocValues[leaves.size()];
        for (int i = 0; i < segs.length; i++) segs[i] = DocValues.getSorted(leaves.get(i).reader(), TRACE);
        OrdinalMap om = segs.length > 1 ? OrdinalMap.build(null, segs, PackedInts.DEFAULT) : null;
        long nOrds = om != null ? om.getValueCount() : segs.length == 1 ? segs[0].getValueCount() : 0;
        int[] countB = new int[(int) nOrds];
        BooleanQuery.Builder qb = new BooleanQuery.Builder();
        qb.add(new TermQuery(new Term(SVC, bSvc)), BooleanClause.Occur.FILTER);
        if (bFilter != null) qb.add(node(bFilter, false), BooleanClause.Occur.FILTER);
        new SideB(om, countB, deadline).run(new ConstantScoreQuery(qb.build()));
        SideA sa = new SideA(om, countB, (int) Math.max(1, nOrds), deadline);
        sa.run(new ConstantScoreQuery(new TermQuery(new Term(SVC, aSvc))));
        return "[[" + sa.pairs + "," + sa.seen.cardinality() + "]]";
    }

    static abstract class OrdCollector extends Buffered {
        final OrdinalMap om; final int[] countB; SortedDocValues dv; org.apache.lucene.util.LongValues toGlobal;
        OrdCollector(OrdinalMap om, int[] countB, long deadline) { super(deadline); this.om = om; this.countB = countB; }
        @Override void leaf(LeafReaderContext ctx) throws IOException {
            dv = DocValues.getSorted(ctx.reader(), TRACE);
            toGlobal = om == null ? null : om.getGlobalOrds(ctx.ord);
        }
        final int global(int o) { return toGlobal == null ? o : (int) toGlobal.get(o); }
    }

    static final class SideB extends OrdCollector {
        SideB(OrdinalMap om, int[] countB, long deadline) { super(om, countB, deadline); }
        @Override void block(int[] docs, int n) throws IOException {
            SortedDocValues dv = this.dv;
            for (int i = 0; i < n; i++) if (dv.advanceExact(docs[i])) countB[global(dv.ordValue())]++;
        }
    }

    static final class SideA extends OrdCollector {
        final FixedBitSet seen; long pairs;
        SideA(OrdinalMap om, int[] countB, int nOrds, long deadline) { super(om, countB, deadline); seen = new FixedBitSet(nOrds); }
        @Override void block(int[] docs, int n) throws IOException {
            SortedDocValues dv = this.dv;
            for (int i = 0; i < n; i++) {
                if (!dv.advanceExact(docs[i])) continue; // no TraceId: '' never joins
                int g = global(dv.ordValue()), c = countB[g];
                if (c != 0) { pairs += c; seen.set(g); }
            }
        }
    }

    // ---- a small JSON reader/writer -------------------------------------------------------------

    static final class Json {
        final String s; int i;
        Json(String s) { this.s = s; }

        @SuppressWarnings("unchecked")
        static Map<String, Object> obj(String s) {
            Json j = new Json(s);
            Object v = j.value();
            j.ws();
            if (j.i != s.length() || !(v instanceof Map)) throw new IllegalArgumentException("not one JSON object");
            return (Map<String, Object>) v;
        }

        void ws() { while (i < s.length() && s.charAt(i) <= ' ') i++; }

        Object value() {
            ws();
            char c = s.charAt(i);
            switch (c) {
                case '{': {
                    i++;
                    Map<String, Object> m = new HashMap<>();
                    ws();
                    if (s.charAt(i) == '}') { i++; return m; }
                    while (true) {
                        ws();
                        String k = string();
                        ws();
                        expect(':');
                        m.put(k, value());
                        ws();
                        if (s.charAt(i) == ',') { i++; continue; }
                        expect('}');
                        return m;
                    }
                }
                case '[': {
                    i++;
                    List<Object> l = new ArrayList<>();
                    ws();
                    if (s.charAt(i) == ']') { i++; return l; }
                    while (true) {
                        l.add(value());
                        ws();
                        if (s.charAt(i) == ',') { i++; continue; }
                        expect(']');
                        return l;
                    }
                }
                case '"': return string();
                case 't': lit("true"); return Boolean.TRUE;
                case 'f': lit("false"); return Boolean.FALSE;
                case 'n': lit("null"); return null;
                default: {
                    int a = i;
                    boolean fp = false;
                    while (i < s.length()) {
                        char d = s.charAt(i);
                        if (d == '.' || d == 'e' || d == 'E') fp = true;
                        else if (!(d == '-' || d == '+' || (d >= '0' && d <= '9'))) break;
                        i++;
                    }
                    String t = s.substring(a, i);
                    if (t.isEmpty()) throw new IllegalArgumentException("bad JSON at " + a);
                    return fp ? (Object) Double.parseDouble(t) : (Object) Long.parseLong(t);
                }
            }
        }

        void expect(char c) {
            if (i >= s.length() || s.charAt(i) != c) throw new IllegalArgumentException("expected " + c + " at " + i);
            i++;
        }

        void lit(String w) {
            if (!s.startsWith(w, i)) throw new IllegalArgumentException("bad JSON at " + i);
            i += w.length();
        }

        String string() {
            expect('"');
            int a = i;
            while (true) { // fast path: no escapes
                char c = s.charAt(i);
                if (c == '"') { i++; return s.substring(a, i - 1); }
                if (c == '\\') break;
                i++;
            }
            StringBuilder b = new StringBuilder(s.substring(a, i));
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') return b.toString();
                if (c != '\\') { b.append(c); continue; }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: b.append(e); // " \ /
                }
            }
        }

        static void str(StringBuilder b, String s) {
            b.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"': b.append("\\\""); break;
                    case '\\': b.append("\\\\"); break;
                    case '\n': b.append("\\n"); break;
                    case '\r': b.append("\\r"); break;
                    case '\t': b.append("\\t"); break;
                    default:
                        if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                        else b.append(c);
                }
            }
            b.append('"');
        }
    }
}
