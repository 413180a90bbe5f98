#!/usr/bin/env python3
# bench/server-first.py - the first queries a fresh `quarry serve` answers,
# with its warm start (segments and index fields opened once it listens;
# measured after it says so) against --no-warm, ROUNDS times alternating:
# one psycopg2 connection per server, each query once, in order, min-max ms
# per mode. Note: a server's merger may combine small segments of the table
# while it runs (docs/SERVER.md "Live ingest"): measure on a copy if the
# table must stay as it is.
# Usage: python3 bench/server-first.py QUARRY DATA_DIR ROUNDS
import os, subprocess, sys, tempfile, time

import psycopg2

Q, D, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
QS = ["SELECT count(*) FROM logs WHERE Body @@ 'failed'",
      "SELECT count(*) FROM logs WHERE Body @@ ts_phrase('failed to place order')",
      "SELECT count(*) FROM logs WHERE Body @@ ts_starts_with('ord')",
      "SELECT count(*) FROM logs WHERE Body @@ ts_levenshtein('cahce', 1)",
      "SELECT count(*) FROM logs WHERE Body @@ ts_like('%tion')",
      "SELECT Body, bm25() FROM logs WHERE Body @@ ts_any(['connection', 'request', 'conversion', 'post']) ORDER BY bm25() DESC LIMIT 100",
      "SELECT Timestamp, Body FROM logs WHERE ServiceName = 'checkout' AND Body @@ ts_all(['failed', 'order']) ORDER BY Timestamp DESC LIMIT 100"]
res = {}
tmp = tempfile.mkdtemp()
for r in range(rounds):
    for mode in ("warm", "no-warm"):
        pf = os.path.join(tmp, "port")
        if os.path.exists(pf): os.unlink(pf)
        args = [Q, "serve", "--data", D, "--listen", "127.0.0.1:0", "--port-file", pf] + (["--no-warm"] if mode == "no-warm" else [])
        log = open(os.path.join(tmp, "log"), "w")
        p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        t0 = time.time()
        while not (os.path.exists(pf) and open(pf).read().strip()): time.sleep(0.01)
        port = int(open(pf).read())
        if mode == "warm":
            while "opened" not in open(os.path.join(tmp, "log")).read(): time.sleep(0.01)
        wline = [l for l in open(os.path.join(tmp, "log")) if "opened" in l]
        c = psycopg2.connect(host="127.0.0.1", port=port, user="quarry", dbname="quarry")
        cur = c.cursor()
        for i, q in enumerate(QS):
            t = time.perf_counter(); cur.execute(q); cur.fetchall(); ms = (time.perf_counter() - t) * 1e3
            res.setdefault((mode, i), []).append(ms)
        c.close(); p.terminate(); p.wait()
        if wline: res.setdefault(("warmline", 0), []).append(wline[0].strip())
print("| first query of a fresh server | --no-warm ms | warm ms |")
print("|---|---:|---:|")
for i, q in enumerate(QS):
    w = sorted(res[("warm", i)]); n = sorted(res[("no-warm", i)])
    print("| `%s` | %.1f-%.1f | %.1f-%.1f |" % (q, n[0], n[-1], w[0], w[-1]))
for line in res.get(("warmline", 0), []):
    print(line)
