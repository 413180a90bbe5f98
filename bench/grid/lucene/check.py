#!/usr/bin/python3
"""bench/grid/lucene/check.py - correctness check of the Lucene peer.

Builds (or reuses) a Lucene index of a 100k-row corpus, runs a set of queries
through bench/grid/lucene/run.sh and compares every answer with a brute-force
evaluation in Python over the same NDJSON:
  tokens  = re.findall(r'[^\\W_]+', body.lower())   (letters and digits; '_' separates)
  phrase  = consecutive tokens; gap = exactly k tokens between; near = 1..n+1 after
  fuzzy   = Damerau-Levenshtein as optimal string alignment
Counts, the whole set of group (key, count) pairs, join counts, the timestamps
of the newest rows (ns, exact); for top-k and LIMIT without ORDER BY: the row
count, that every returned row matches the filter, and scores non-increasing.

  python3 bench/grid/lucene/check.py [--rows 100000] [--rebuild]
Exit status 1 on any mismatch. Stdlib only.
"""
import argparse, json, os, re, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "../../.."))
OUT = os.path.join(ROOT, "bench/out")
RUN = os.path.join(HERE, "run.sh")
TOK = re.compile(r"[^\W_]+")


def log(s):
    print("check: " + s, file=sys.stderr, flush=True)


# the grid's own oracle helpers: one Damerau (optimal string alignment) and one timestamp parser
sys.path.insert(0, os.path.dirname(HERE))
from grid import damerau, parse_ts  # noqa: E402


def like_re(p):
    return re.compile("".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in p))


def word_pred(n):
    t = n["t"]
    if t == "prefix": return lambda w: w.startswith(n["p"])
    if t == "regexp":
        rx = re.compile(n["re"])
        return lambda w: rx.fullmatch(w) is not None
    if t == "like":
        rx = like_re(n["p"])
        return lambda w: rx.fullmatch(w) is not None
    if t == "fuzzy": return lambda w: damerau(w, n["w"], n["d"]) <= n["d"]


def seq_at(toks, ws, offs):
    """some i with toks[i + offs[k]] == ws[k] for every k"""
    for i, t in enumerate(toks):
        if t == ws[0] and all(i + o < len(toks) and toks[i + o] == w for w, o in zip(ws[1:], offs[1:])):
            return True
    return False


def compile_f(n):
    """a function row -> bool; row = dict with toks, set, ts, svc, sevtext, sev"""
    t = n["t"]
    if t == "term": return lambda r: n["w"] in r["set"]
    if t == "and":
        fs = [compile_f(c) for c in n["c"]]
        return lambda r: all(f(r) for f in fs)
    if t == "or":
        fs = [compile_f(c) for c in n["c"]]
        return lambda r: any(f(r) for f in fs)
    if t == "not":
        f = compile_f(n["c"])
        return lambda r: not f(r)
    if t == "atleast":
        fs = [compile_f(c) for c in n["c"]]
        return lambda r: sum(1 for f in fs if f(r)) >= n["k"]
    if t == "phrase":
        ws = n["w"]
        return lambda r: all(w in r["set"] for w in ws) and seq_at(r["toks"], ws, list(range(len(ws))))
    if t == "gap":
        a, b, g = n["w"][0], n["w"][1], n["gap"]
        return lambda r: a in r["set"] and b in r["set"] and seq_at(r["toks"], [a, b], [0, g + 1])
    if t == "near":
        a, b, k = n["w"][0], n["w"][1], n["n"]
        def near(r):
            if a not in r["set"] or b not in r["set"]: return False
            toks = r["toks"]
            return any(toks[i] == a and b in toks[i + 1:i + k + 2] for i in range(len(toks)))
        return near
    if t in ("prefix", "regexp", "like", "fuzzy"):
        p, memo = word_pred(n), {}
        def anyword(r):
            for w in r["set"]:
                v = memo.get(w)
                if v is None:
                    v = memo[w] = p(w)
                if v: return True
            return False
        return anyword
    if t == "field":
        col, op, v = n["col"], n["op"], n["v"]
        key = {"ServiceName": "svc", "SeverityText": "sevtext", "SeverityNumber": "sev", "ScopeName": "scope"}[col]
        ops = {"=": lambda x: x == v, ">=": lambda x: x >= v, ">": lambda x: x > v, "<=": lambda x: x <= v,
               "<": lambda x: x < v}
        f = ops[op]
        return lambda r: f(r[key])
    if t == "time": return lambda r: n["from_ns"] <= r["ts"] <= n["to_ns"]
    raise ValueError(n)


def term(w): return {"t": "term", "w": w}
def AND(*c): return {"t": "and", "c": list(c)}
def OR(*c): return {"t": "or", "c": list(c)}
def NOT(c): return {"t": "not", "c": c}


def queries(win):
    T = {"t": "time", "from_ns": win[0], "to_ns": win[1]}
    svc = lambda v: {"t": "field", "col": "ServiceName", "op": "=", "v": v}
    filters = [
        term("failed"), term("refused"), term("zzznotaword"),
        AND(term("failed"), term("order")), AND(*map(term, "post to email service expected 200 got 500".split())),
        OR(term("error"), term("failed")), OR(*map(term, "email confirmation send refused".split())),
        {"t": "atleast", "k": 2, "c": list(map(term, "error failed charge cache".split()))},
        {"t": "phrase", "w": ["place", "order"]}, {"t": "phrase", "w": "failed to place order".split()},
        {"t": "phrase", "w": "post to email service expected 200 got 500".split()},
        {"t": "gap", "w": ["failed", "order"], "gap": 2}, {"t": "gap", "w": ["failed", "cart"], "gap": 1},
        {"t": "near", "w": ["failed", "order"], "n": 3}, {"t": "near", "w": ["error", "connection"], "n": 1},
        {"t": "prefix", "p": "ord"}, {"t": "prefix", "p": "conn"},
        {"t": "regexp", "re": "c.che"}, {"t": "regexp", "re": "(re|de)[a-z]+ed"}, {"t": "regexp", "re": "[0-9]+"},
        {"t": "like", "p": "conn%"}, {"t": "like", "p": "%tion"}, {"t": "like", "p": "%nnec%"}, {"t": "like", "p": "c_che"},
        {"t": "fuzzy", "w": "cahce", "d": 1}, {"t": "fuzzy", "w": "conection", "d": 2}, {"t": "fuzzy", "w": "eror", "d": 1},
        {"t": "fuzzy", "w": "ordre", "d": 2},
        AND(term("error"), NOT(term("cache"))), NOT(term("failed")),
        AND(term("failed"), svc("checkout")), svc("checkout"),
        AND(term("failed"), {"t": "field", "col": "SeverityNumber", "op": ">=", "v": 17}),
        {"t": "field", "col": "SeverityNumber", "op": "<", "v": 13},
        {"t": "field", "col": "SeverityNumber", "op": "=", "v": 9},
        {"t": "field", "col": "SeverityText", "op": "=", "v": "ERROR"},
        AND(term("failed"), T), T, None,
        OR(AND(term("failed"), svc("cart")), {"t": "phrase", "w": ["place", "order"]}),
    ]
    qs = []
    def add(fam, flt, **kw):
        q = {"id": "%s%02d" % (fam[0], sum(1 for x in qs if x["family"] == fam) + 1), "family": fam,
             "filter": flt, "order": "none", "limit": None}
        q.update(kw)
        qs.append(q)
    for f in filters:
        add("count", f)
    for f in [term("failed"), AND(term("failed"), term("order")), OR(term("error"), term("failed")),
              {"t": "phrase", "w": "failed to place order".split()}, {"t": "near", "w": ["failed", "order"], "n": 3},
              {"t": "fuzzy", "w": "cahce", "d": 1}, {"t": "prefix", "p": "ord"}, AND(term("error"), NOT(term("cache"))),
              AND(term("failed"), svc("checkout")), AND(term("failed"), T), term("refused")]:
        add("topk", f, order="bm25", limit=100)
    for f in [None, term("failed"), term("refused"), {"t": "phrase", "w": "failed to place order".split()},
              svc("checkout"), T, AND(term("failed"), T)]:
        add("recent", f, order="time", limit=100)
    for f in [None, term("refused"), AND(term("failed"), T)]:
        add("recent", f, order="none", limit=100)
    for keys, fl in [(["SeverityText"], [None, term("failed")]), (["ScopeName"], [None, {"t": "prefix", "p": "conn"}]),
                     (["SeverityText", "ScopeName"], [None, term("refused")]), (["minute"], [None, term("failed")]),
                     (["second"], [svc("checkout"), T])]:
        for f in fl:
            add("group", f, group_by=keys)
    for a, b, f in [("frontend", "checkout", None), ("frontend", "checkout", term("failed")),
                    ("checkout", "payment", None), ("checkout", "frontend", {"t": "phrase", "w": "failed to place order".split()}),
                    ("cart", "cart", None)]:
        add("join", None, join={"a_service": a, "b_service": b, "b_filter": f})
    return qs


def oracle(path, qs):
    fs = {}
    for q in qs:
        f = q["join"]["b_filter"] if q["family"] == "join" else q["filter"]
        if f is not None:
            fs[q["id"]] = compile_f(f)
    res = {q["id"]: {"n": 0, "groups": {}, "ts": [], "a": {}, "b": {}} for q in qs}
    with open(path) as fh:
        for line in fh:
            j = json.loads(line)
            toks = TOK.findall(j["Body"].lower())
            r = {"toks": toks, "set": set(toks), "ts": parse_ts(j["Timestamp"]), "svc": j["ServiceName"],
                 "sev": j["SeverityNumber"], "sevtext": j["SeverityText"], "scope": j["ScopeName"]}
            for q in qs:
                f = fs.get(q["id"])
                ok = f is None or f(r)
                s = res[q["id"]]
                if q["family"] == "join":
                    tid = j["TraceId"]
                    if tid:
                        if r["svc"] == q["join"]["a_service"]:
                            s["a"][tid] = s["a"].get(tid, 0) + 1
                        if r["svc"] == q["join"]["b_service"] and ok:
                            s["b"][tid] = s["b"].get(tid, 0) + 1
                    continue
                if not ok:
                    continue
                s["n"] += 1
                if q["family"] == "group":
                    key = tuple(r["ts"] - r["ts"] % 60_000_000_000 if k == "minute" else
                                r["ts"] - r["ts"] % 1_000_000_000 if k == "second" else j[k] for k in q["group_by"])
                    s["groups"][key] = s["groups"].get(key, 0) + 1
                elif q["family"] == "recent" and q["order"] == "time":
                    s["ts"].append(r["ts"])
                    if len(s["ts"]) > 4096:
                        s["ts"] = sorted(s["ts"], reverse=True)[:q["limit"]]
    return res


def row_ok(q, row):
    """a returned [ts, service, body, ...] row matches the filter (what can be checked from it)"""
    toks = TOK.findall(row[2].lower())
    r = {"toks": toks, "set": set(toks), "ts": row[0], "svc": row[1], "sev": None, "sevtext": None, "scope": None}
    try:
        return compile_f(q["filter"])(r) if q["filter"] else True
    except TypeError:
        return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--rebuild", action="store_true")
    a = ap.parse_args()
    corpus = os.path.join(OUT, "otel-%d.ndjson" % a.rows)
    if not os.path.exists(corpus):
        log("generating " + corpus)
        with open(corpus + ".tmp", "wb") as f:
            subprocess.check_call([os.path.join(ROOT, "build/rel/quarry"), "gen", "--rows", str(a.rows), "--seed", "42"], stdout=f)
        os.rename(corpus + ".tmp", corpus)
    work = os.path.join(OUT, "grid/lucene-check/%d" % a.rows)
    os.makedirs(work, exist_ok=True)
    idx = os.path.join(work, "index")
    stamp = os.path.join(work, "load.json")
    if a.rebuild or not os.path.exists(stamp) or os.path.getmtime(stamp) < os.path.getmtime(corpus):
        log("loading " + corpus)
        out = subprocess.check_output([RUN, "load", corpus, idx])
        open(stamp, "wb").write(out)
    log("load: " + open(stamp).read().strip())
    # the time window: rows 40%..50%, bounds half-way between neighbouring rows (as grid.py)
    tss = []
    with open(corpus) as f:
        for line in f:
            tss.append(parse_ts(json.loads(line)["Timestamp"]))
    w0, w1 = int(len(tss) * 0.4), int(len(tss) * 0.5)
    win = ((tss[w0 - 1] + tss[w0]) // 2, (tss[w1] + tss[w1 + 1]) // 2)
    qs = queries(win)
    qp = os.path.join(work, "queries.json")
    json.dump({"rows": a.rows, "window": win, "queries": qs}, open(qp, "w"), indent=1)
    log("running %d queries" % len(qs))
    t0 = time.time()
    out = subprocess.check_output([RUN, "run", idx, qp, "all", "1"]).decode()
    got = {}
    for line in out.splitlines():
        r = json.loads(line)
        got[r["id"]] = r
    log("lucene: %.1f s; brute force over %s" % (time.time() - t0, corpus))
    truth = oracle(corpus, qs)
    bad = 0
    for q in qs:
        i, fam, r, t = q["id"], q["family"], got.get(q["id"]), truth[q["id"]]
        desc = json.dumps(q.get("join") or q["filter"])[:110] + (" by %s" % q["group_by"] if fam == "group" else "")
        if r is None or r["status"] != "ok":
            print("FAIL %s %s: %s" % (i, desc, r and (r["status"] + " " + str(r.get("msg")))))
            bad += 1
            continue
        rows = r["rows"]
        if fam == "count":
            ok, want, have = rows[0][0] == t["n"], t["n"], rows[0][0]
        elif fam == "join":
            pairs = sum(c * t["b"][k] for k, c in t["a"].items() if k in t["b"])
            dist = sum(1 for k in t["a"] if k in t["b"])
            want, have = [pairs, dist], rows[0]
            ok = want == have
        elif fam == "group":
            want = sorted([list(k) + [c] for k, c in t["groups"].items()], key=repr)
            have = sorted(rows, key=repr)
            ok = want == have
            want, have = "%d groups %d rows" % (len(want), sum(x[-1] for x in want)), "%d groups %d rows" % (len(have), sum(x[-1] for x in have))
        elif fam == "recent" and q["order"] == "time":
            want = sorted(t["ts"], reverse=True)[:q["limit"]]
            have = [x[0] for x in rows]
            ok = want == have and all(row_ok(q, x) for x in rows)
            want, have = "newest %d, last %s" % (len(want), want[-1:]), "newest %d, last %s" % (len(have), have[-1:])
        else:  # topk, recent without order: the number of rows, each matching, scores non-increasing
            want = min(q["limit"], t["n"])
            have = len(rows)
            ok = want == have and all(row_ok(q, x) for x in rows)
            if fam == "topk":
                sc = [x[3] for x in rows]
                ok = ok and all(sc[k] >= sc[k + 1] for k in range(len(sc) - 1))
        print("%s %s %-8s %s%s: %s%s" % ("ok  " if ok else "FAIL", i, r["times_ms"][0], desc, "", have,
                                         "" if ok else "  (brute force: %s)" % (want,)))
        bad += 0 if ok else 1
    print("%d queries, %d mismatches" % (len(qs), bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
