#!/usr/bin/python3
"""bench/grid/lucene/warmup.py - how many untimed rounds Lucene's hot JVM needs.

Runs the grid's queries (the queries file grid.py left beside the index) in
one JVM for ROUNDS timed rounds without warm-up, round-robin as grid.py's
hot run does, and prints per round the median time of each family, the
round's total, and that total over the best total of any round. The round
where the totals stop falling is where HotSpot has finished compiling; the
grid's --lucene-warmup should cover the rounds before it.

  /usr/bin/python3 bench/grid/lucene/warmup.py [--rows 1000000] [--rounds 16] [--out bench/out]
      [--jsonl FILE]   (read a saved run instead of running the JVM)
"""
import argparse, json, os, statistics, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "../../.."))
FAMS = ["count", "topk", "group", "recent", "join"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=16)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out"))
    ap.add_argument("--jsonl", help="a saved driver output to read instead")
    a = ap.parse_args()
    if a.jsonl:
        lines = open(a.jsonl).read().splitlines()
    else:
        d = os.path.join(a.out, "grid/%d" % a.rows)
        index, qfile = os.path.join(d, "lucene-index"), os.path.join(d, "lucene-index.queries.json")
        if not os.path.exists(qfile):
            sys.exit("warmup: no %s: run grid.py --rows %d --engines quarry,lucene first" % (qfile, a.rows))
        out = subprocess.run([os.path.join(HERE, "run.sh"), "run", index, qfile, "all", str(a.rounds)],
                             env=dict(os.environ, LUCENE_WARMUP_ROUNDS="0"), stdout=subprocess.PIPE, text=True,
                             check=True).stdout
        lines = out.splitlines()
    rs = [json.loads(l) for l in lines if l.startswith("{")]
    rs = [r for r in rs if r["status"] == "ok"]
    fam = {"c": "count", "t": "topk", "g": "group", "r": "recent", "j": "join"}
    n = min(len(r["times_ms"]) for r in rs)
    totals = [sum(r["times_ms"][k] for r in rs) for k in range(n)]
    best = min(totals)
    print("round " + "".join("%9s" % f for f in FAMS) + "  total ms  / best")
    for k in range(n):
        meds = [statistics.median([r["times_ms"][k] for r in rs if fam[r["id"][0]] == f] or [0]) for f in FAMS]
        print("%5d " % (k + 1) + "".join("%9.2f" % m for m in meds) + "%10.0f  %5.2f" % (totals[k], totals[k] / best))


if __name__ == "__main__":
    main()
