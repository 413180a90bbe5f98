# bench/grid/queries.py - the benchmark grid: ~90 queries over the
# OpenTelemetry logs table, each a family (count, topk, group, recent, join)
# crossed with a filter kind and tagged with the term-frequency band of
# ../shared/DATASET.md. A filter is a tree of plain dicts (the form the Lucene
# driver and the brute-force oracle read); the translators below turn it
# into each engine's SQL. bench/grid/REVIEW.md says, kind by kind, why each
# translation means the same rows (or why a peer cannot express it).

import hashlib, json, os


def term(w): return {"t": "term", "w": w}
def AND(*c): return {"t": "and", "c": list(c)}
def OR(*c): return {"t": "or", "c": list(c)}
def NOT(c): return {"t": "not", "c": c}
def terms(ws): return [term(w) for w in ws.split()]

SVC = lambda v: {"t": "field", "col": "ServiceName", "op": "=", "v": v}
SEV = lambda v: {"t": "field", "col": "SeverityNumber", "op": ">=", "v": v}

# (name, kind, band, filter); "WINDOW" is replaced by the time window
FILTERS = [
    ("failed", "term", "high", term("failed")),
    ("place", "term", "mid", term("place")),
    ("refused", "term", "low", term("refused")),
    ("failed AND order", "and2", "high", AND(*terms("failed order"))),
    ("failed AND charge AND card AND cache", "and4", "mixed", AND(*terms("failed charge card cache"))),
    ("AND of 8: post to email service expected 200 got 500", "and8", "low",
     AND(*terms("post to email service expected 200 got 500"))),
    ("error OR failed", "or2", "high", OR(*terms("error failed"))),
    ("connection OR request OR conversion OR post", "or4", "mid", OR(*terms("connection request conversion post"))),
    ("OR of 8 low words", "or8", "low", OR(*terms("email confirmation send refused payment expected validated zip"))),
    ("atleast(2, error, failed, charge, cache)", "atleast", "high",
     {"t": "atleast", "k": 2, "c": terms("error failed charge cache")}),
    ('"place order"', "phrase2", "mid", {"t": "phrase", "w": ["place", "order"]}),
    ('"failed to place order"', "phrase4", "mid", {"t": "phrase", "w": "failed to place order".split()}),
    ('"post to email service expected 200 got 500"', "phrase8", "low",
     {"t": "phrase", "w": "post to email service expected 200 got 500".split()}),
    ('"failed ? ? order" (gap 2)', "gap", "high", {"t": "gap", "w": ["failed", "order"], "gap": 2}),
    ('"failed order"~3 (proximity)', "near", "high", {"t": "near", "w": ["failed", "order"], "n": 3}),
    ("ord*", "prefix", "high", {"t": "prefix", "p": "ord"}),
    ("conn*", "prefix", "mid", {"t": "prefix", "p": "conn"}),
    ("/c.che/", "regexp", "high", {"t": "regexp", "re": "c.che"}),
    ("like conn%", "like_prefix", "mid", {"t": "like", "p": "conn%"}),
    ("like %tion", "like_suffix", "high", {"t": "like", "p": "%tion"}),
    ("like %nnec%", "like_infix", "mid", {"t": "like", "p": "%nnec%"}),
    ("cahce~1", "fuzzy1", "high", {"t": "fuzzy", "w": "cahce", "d": 1}),
    ("conection~2", "fuzzy2", "mid", {"t": "fuzzy", "w": "conection", "d": 2}),
    ("error AND NOT cache", "not", "high", AND(term("error"), NOT(term("cache")))),
    ("service checkout AND failed", "service", "high", AND(term("failed"), SVC("checkout"))),
    ("severity >= 17 AND failed", "severity", "high", AND(term("failed"), SEV(17))),
    ("failed in a time window", "time", "high", AND(term("failed"), "WINDOW")),
]
F = {f[0]: f for f in FILTERS}
TEXTLESS = [("all rows", "none", "none", None), ("service checkout", "service", "none", SVC("checkout")),
            ("time window", "time", "none", "WINDOW"), ("NOT failed", "not", "high", NOT(term("failed")))]


def grid(window):
    """The query list; window = (from_ns, to_ns), inclusive."""
    def fill(node):
        if node == "WINDOW":
            return {"t": "time", "from_ns": window[0], "to_ns": window[1]}
        if isinstance(node, dict) and "c" in node:
            c = node["c"]
            return dict(node, c=[fill(x) for x in c] if isinstance(c, list) else fill(c))
        return node
    qs = []
    def add(fam, name, kind, band, flt, **kw):
        q = {"id": "%s%02d" % (fam[0], sum(1 for x in qs if x["family"] == fam) + 1), "family": fam,
             "name": name, "kind": kind, "band": band, "filter": fill(flt), "order": "none", "limit": None}
        q.update(kw)
        qs.append(q)
    for name, kind, band, flt in FILTERS + TEXTLESS:
        add("count", name, kind, band, flt)
    for name in ["failed", "place", "refused", "failed AND order", "failed AND charge AND card AND cache",
                 "AND of 8: post to email service expected 200 got 500", "error OR failed",
                 "connection OR request OR conversion OR post", "OR of 8 low words",
                 "atleast(2, error, failed, charge, cache)", '"place order"', '"failed to place order"',
                 '"post to email service expected 200 got 500"', '"failed ? ? order" (gap 2)',
                 '"failed order"~3 (proximity)', "ord*", "/c.che/", "like %tion", "cahce~1",
                 "error AND NOT cache", "service checkout AND failed", "failed in a time window"]:
        n, kind, band, flt = F[name]
        add("topk", n, kind, band, flt, order="bm25", limit=100)
    for name in ["all rows", "failed", "refused", "failed AND order", '"failed to place order"', "service checkout"]:
        n, kind, band, flt = F.get(name) or next(t for t in TEXTLESS if t[0] == name)
        add("recent", n, kind, band, flt, order="time", limit=100)
    for name in ["all rows", "failed", "service checkout AND failed"]:
        n, kind, band, flt = F.get(name) or next(t for t in TEXTLESS if t[0] == name)
        win = AND(flt, "WINDOW") if flt else "WINDOW"
        add("recent", n + " in a time window", "time", band, win, order="time", limit=100)
    for name in ["all rows", "failed", "refused", '"failed to place order"']:
        n, kind, band, flt = F.get(name) or next(t for t in TEXTLESS if t[0] == name)
        add("recent", n + " (no ORDER BY)", kind, band, flt, order="none", limit=100)
    for keys, names in [(["SeverityText"], ["all rows", "failed", "error OR failed", '"failed to place order"']),
                        (["ScopeName"], ["all rows", "failed", "conn*"]),
                        (["SeverityText", "ScopeName"], ["all rows", "failed", "refused"]),
                        (["second"], ["all rows", "failed", "service checkout", "time window"])]:
        for name in names:
            n, kind, band, flt = F.get(name) or next(t for t in TEXTLESS if t[0] == name)
            add("group", "by %s: %s" % ("+".join(keys), n), kind, band, flt, group_by=keys)
    for a, b, name in [("frontend", "checkout", None), ("frontend", "checkout", "failed"),
                       ("checkout", "payment", None), ("checkout", "email", None),
                       ("checkout", "frontend", '"failed to place order"')]:
        flt = F[name][3] if name else None
        add("join", "%s x %s%s" % (a, b, ", b: " + name if name else ""), F[name][1] if name else "none",
            F[name][2] if name else "none", None, join={"a_service": a, "b_service": b, "b_filter": flt})
    return qs


# ---- translation -------------------------------------------------------------

class Unsupported(Exception):
    pass


def lit(s):
    return "'" + str(s).replace("'", "''") + "'"


def ts_text(ns):
    import datetime
    d = datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc)
    return d.strftime("%Y-%m-%d %H:%M:%S") + ".%09d" % (ns % 10**9)


def is_text(n):
    return n["t"] not in ("field", "time") and all(is_text(c) for c in kids(n))


def kids(n):
    c = n.get("c")
    return [] if c is None else (c if isinstance(c, list) else [c])


# Quarry: the SereneDB dialect (docs/SQL.md)
def quarry_pred(n, al=""):
    t, col = n["t"], al + "Body"
    if t == "term": return "%s @@ %s" % (col, lit(n["w"]))
    if t in ("and", "or"):
        if all(c["t"] == "term" for c in n["c"]):
            return "%s @@ %s([%s])" % (col, "ts_all" if t == "and" else "ts_any", ", ".join(lit(c["w"]) for c in n["c"]))
        return "(" + (" %s " % t.upper()).join(quarry_pred(c, al) for c in n["c"]) + ")"
    if t == "not": return "NOT " + quarry_pred(n["c"], al)
    if t == "atleast": return "%s @@ ts_any([%s], %d)" % (col, ", ".join(lit(c["w"]) for c in n["c"]), n["k"])
    if t == "phrase": return "%s @@ ts_phrase(%s)" % (col, ", ".join(lit(w) for w in n["w"]))
    if t == "gap": return "%s @@ ts_phrase(%s) ## %d ## %s" % (col, lit(n["w"][0]), n["gap"], lit(n["w"][1]))
    if t == "near": return "%s @@@ %s" % (col, lit('"%s %s"~%d' % (n["w"][0], n["w"][1], n["n"])))
    if t == "prefix": return "%s @@ ts_starts_with(%s)" % (col, lit(n["p"]))
    if t == "regexp": return "%s @@ ts_regexp(%s)" % (col, lit(n["re"]))
    if t == "like": return "%s @@ ts_like(%s)" % (col, lit(n["p"]))
    if t == "fuzzy": return "%s @@ ts_levenshtein(%s, %d)" % (col, lit(n["w"]), n["d"])
    if t == "field": return "%s%s %s %s" % (al, n["col"], n["op"], n["v"] if isinstance(n["v"], int) else lit(n["v"]))
    if t == "time":
        return "%sTimestamp BETWEEN TIMESTAMP %s AND TIMESTAMP %s" % (al, lit(ts_text(n["from_ns"])), lit(ts_text(n["to_ns"])))
    raise ValueError(t)


# DuckDB: no text index can be installed here (the fts extension is a
# download), so word predicates are RE2 regular expressions with Quarry's
# word rule: a word is a maximal run of letters and digits, case folded.
NW, W = "[^[:alnum:]]", "[[:alnum:]]"


def word_re(core):
    return "(^|%s)%s(%s|$)" % (NW, core, NW)


def like_re(p):
    return "".join(W + "*" if ch == "%" else W if ch == "_" else ch for ch in p)


def regexp_re(r):
    return r.replace(".", W)  # inside a word '.' can only be a letter or digit


def duck_pred(n, al=""):
    t, col = n["t"], al + "Body"
    rx = lambda core: "regexp_matches(%s, %s)" % (col, lit("(?i)" + word_re(core)))
    if t == "term": return rx(n["w"])
    if t in ("and", "or"): return "(" + (" %s " % t.upper()).join(duck_pred(c, al) for c in n["c"]) + ")"
    if t == "not": return "NOT " + duck_pred(n["c"], al)
    if t == "atleast": return "(" + " + ".join("CAST(%s AS INTEGER)" % duck_pred(c, al) for c in n["c"]) + ") >= %d" % n["k"]
    if t == "phrase": return rx((NW + "+").join(n["w"]))
    if t == "gap": return rx(n["w"][0] + ("(%s+%s+){%d}" % (NW, W, n["gap"])) + NW + "+" + n["w"][1])
    if t == "near": return rx(n["w"][0] + ("(%s+%s+){0,%d}" % (NW, W, n["n"])) + NW + "+" + n["w"][1])
    if t == "prefix": return "regexp_matches(%s, %s)" % (col, lit("(?i)(^|%s)%s" % (NW, n["p"])))
    if t == "regexp": return rx(regexp_re(n["re"]))
    if t == "like": return rx(like_re(n["p"]))
    if t == "fuzzy":
        return ("len(list_filter(regexp_split_to_array(lower(%s), '[^a-z0-9]+'), x -> damerau_levenshtein(x, %s) <= %d)) > 0"
                % (col, lit(n["w"]), n["d"]))
    if t == "field": return quarry_pred(n, al)
    if t == "time":
        return "%sTimestamp BETWEEN CAST(%s AS TIMESTAMP_NS) AND CAST(%s AS TIMESTAMP_NS)" % (
            al, lit(ts_text(n["from_ns"])), lit(ts_text(n["to_ns"])))
    raise ValueError(t)


# SQLite: FTS5 (unicode61 tokenizer: letters and digits, case folded, the
# same words as Quarry's on this corpus), external content over the table.
def fts_expr(n):
    t = n["t"]
    q = lambda w: '"%s"' % w
    if t == "term": return q(n["w"])
    if t == "and":
        pos = [c for c in n["c"] if c["t"] != "not"]
        neg = [c["c"] for c in n["c"] if c["t"] == "not"]
        e = "(" + " AND ".join(fts_expr(c) for c in pos) + ")"
        for c in neg:
            e = "(%s NOT %s)" % (e, fts_expr(c))
        return e
    if t == "or": return "(" + " OR ".join(fts_expr(c) for c in n["c"]) + ")"
    if t == "atleast":
        import itertools
        return "(" + " OR ".join("(" + " AND ".join(fts_expr(x) for x in comb) + ")"
                                 for comb in itertools.combinations(n["c"], n["k"])) + ")"
    if t == "phrase": return '"%s"' % " ".join(n["w"])
    if t == "prefix": return '"%s"*' % n["p"]
    if t == "like": return "{LIKE:%s}" % n["p"]  # expanded by the driver from the fts5vocab table
    if t in ("gap", "near"): raise Unsupported("FTS5 NEAR is unordered and has no exact gap")
    if t in ("regexp", "fuzzy"): raise Unsupported("FTS5 has no %s query" % ("regular-expression" if t == "regexp" else "fuzzy"))
    if t == "not": raise Unsupported("FTS5 NOT needs a positive side")
    raise ValueError(t)


def sqlite_pred(n, al=""):
    t = n["t"]
    if t == "field": return quarry_pred(n, al)
    if t == "time": return "%sts BETWEEN %d AND %d" % (al, n["from_ns"], n["to_ns"])
    if t == "not" and is_text(n["c"]):
        return "%srowid NOT IN (SELECT rowid FROM body_fts WHERE body_fts MATCH %s)" % (al, lit(fts_expr(n["c"])))
    if is_text(n):
        return "%srowid IN (SELECT rowid FROM body_fts WHERE body_fts MATCH %s)" % (al, lit(fts_expr(n)))
    if t == "and":
        return "(" + " AND ".join(sqlite_pred(c, al) for c in n["c"]) + ")"
    raise Unsupported("mixed text and field predicates under %s" % t)


# PostgreSQL 15: tsquery over a stored tsvector of the Body with every
# non-alphanumeric run replaced by a space (so its parser sees exactly
# Quarry's words; 'simple' lowercases), pg_trgm GIN for regular expressions
# and LIKE on words (POSIX classes, case-insensitive ~*).
def tsq(n):
    t = n["t"]
    if t == "term": return n["w"]
    if t == "and":
        return "(" + " & ".join(("!" + tsq(c["c"])) if c["t"] == "not" else tsq(c) for c in n["c"]) + ")"
    if t == "or": return "(" + " | ".join(tsq(c) for c in n["c"]) + ")"
    if t == "not": return "!" + tsq(n["c"])
    if t == "atleast":
        import itertools
        return "(" + " | ".join("(" + " & ".join(tsq(x) for x in comb) + ")"
                                 for comb in itertools.combinations(n["c"], n["k"])) + ")"
    if t == "phrase": return "(" + " <-> ".join(n["w"]) + ")"
    if t == "gap": return "(%s <%d> %s)" % (n["w"][0], n["gap"] + 1, n["w"][1])
    if t == "near": return "(" + " | ".join("%s <%d> %s" % (n["w"][0], d, n["w"][1]) for d in range(1, n["n"] + 2)) + ")"
    if t == "prefix": return n["p"] + ":*"
    raise Unsupported(t)


def pg_pred(n, al=""):
    t, col = n["t"], al + "Body"
    if t in ("regexp", "like"):
        core = regexp_re(n["re"]) if t == "regexp" else like_re(n["p"])
        return "%s ~* %s" % (col, lit(word_re(core)))
    if t == "fuzzy": raise Unsupported("no Damerau-Levenshtein in PostgreSQL (fuzzystrmatch's levenshtein counts a swap as 2)")
    if t == "field": return quarry_pred(n, al)
    if t == "time":
        return "%sTimestamp BETWEEN %s::timestamptz AND %s::timestamptz" % (
            al, lit(ts_text(n["from_ns"]) + "Z"), lit(ts_text(n["to_ns"]) + "Z"))
    if t in ("and", "or") and not all(c["t"] not in ("regexp", "like", "fuzzy", "field", "time") and is_text(c)
                                      for c in n["c"]):
        return "(" + (" %s " % t.upper()).join(
            ("NOT " + pg_pred(c["c"], al)) if c["t"] == "not" else pg_pred(c, al) for c in n["c"]) + ")"
    if t == "not": return "NOT " + pg_pred(n["c"], al)
    return "%sbody_tsv @@ to_tsquery('simple', %s)" % (al, lit(tsq(n)))


def split_text(n):
    """(text part, other conjuncts) of an AND filter"""
    if n is None: return None, []
    if is_text(n): return n, []
    if n["t"] == "and":
        tx = [c for c in n["c"] if is_text(c)]
        other = [c for c in n["c"] if not is_text(c)]
        if len(tx) == 1: return tx[0], other
        if tx: return {"t": "and", "c": tx}, other
        return None, other
    return None, [n]


COLS = "Timestamp, ServiceName, Body"


# Lucene: no SQL. The driver (bench/grid/lucene/QuarryLuceneBench.java) reads
# the query itself and builds the Lucene query from the filter tree; what
# stands in its "sql" (results JSON, --reuse) is that request, plus a digest
# of the driver's source, so an edited translation is measured again.
LUCENE_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lucene", "QuarryLuceneBench.java")


def lucene_request(q):
    with open(LUCENE_SRC, "rb") as f:
        digest = hashlib.sha1(f.read()).hexdigest()[:12]
    req = {k: q[k] for k in ("family", "filter", "order", "limit", "group_by", "join") if k in q}
    return "lucene %s %s" % (digest, json.dumps(req, sort_keys=True, separators=(",", ":")))


def sql_for(q, engine):
    if engine == "lucene":
        return lucene_request(q)
    fam, f = q["family"], q["filter"]
    pred = {"quarry": quarry_pred, "duckdb": duck_pred, "sqlite": sqlite_pred, "postgres": pg_pred}[engine]
    ts = "ts" if engine == "sqlite" else "Timestamp"
    where = (" WHERE " + pred(f)) if f else ""
    if fam == "count":
        if engine == "sqlite" and f and is_text(f) and f["t"] != "not":
            return "SELECT count(*) FROM body_fts WHERE body_fts MATCH %s" % lit(fts_expr(f))
        return "SELECT count(*) FROM logs" + where
    if fam == "topk":
        if engine == "duckdb": raise Unsupported("no BM25: DuckDB's fts extension cannot be installed here")
        if engine == "postgres": raise Unsupported("no BM25 in PostgreSQL (ts_rank is another score)")
        if engine == "quarry":
            return "SELECT %s, bm25() FROM logs%s ORDER BY bm25() DESC LIMIT %d" % (COLS, where, q["limit"])
        tx, other = split_text(f)
        extra = "".join(" AND " + sqlite_pred(c, "l.") for c in other)
        return ("SELECT l.ts, l.ServiceName, l.Body, -body_fts.rank FROM body_fts JOIN logs l ON l.rowid = body_fts.rowid"
                " WHERE body_fts MATCH %s%s ORDER BY body_fts.rank LIMIT %d" % (lit(fts_expr(tx)), extra, q["limit"]))
    if fam == "recent":
        cols = "ts, ServiceName, Body" if engine == "sqlite" else COLS
        order = " ORDER BY %s DESC" % ts if q["order"] == "time" else ""
        return "SELECT %s FROM logs%s%s LIMIT %d" % (cols, where, order, q["limit"])
    if fam == "group":
        keys = []
        for k in q["group_by"]:
            if k == "second":
                keys.append({"quarry": "date_trunc('second', Timestamp)", "duckdb": "date_trunc('second', Timestamp)",
                             "postgres": "date_trunc('second', Timestamp)",
                             "sqlite": "ts / 1000000000 * 1000000000"}[engine])
            else:
                keys.append(k)
        ks = ", ".join(keys)
        pos = ", ".join(str(i + 1) for i in range(len(keys)))
        return "SELECT %s, count(*) FROM logs%s GROUP BY %s" % (ks, where, pos)
    if fam == "join":
        j = q["join"]
        w = "a.ServiceName = %s AND b.ServiceName = %s AND a.TraceId <> ''" % (lit(j["a_service"]), lit(j["b_service"]))
        if j["b_filter"]:
            w += " AND " + pred(j["b_filter"], "b.")
        return ("SELECT count(*), count(DISTINCT a.TraceId) FROM logs a JOIN logs b ON a.TraceId = b.TraceId WHERE " + w)
    raise ValueError(fam)
