#!/usr/bin/python3
"""live.py - ingest into a running server while it answers queries.

Starts `quarry serve` on a fresh data directory, creates the OpenTelemetry
table from the corpus' first lines, then at once:
  - loaders send the corpus (NDJSON, as `quarry gen` writes it) through one
    path: Elasticsearch `_bulk` over HTTP (--path bulk) or COPY ... FROM
    STDIN (FORMAT json) over the PostgreSQL protocol (--path copy), in
    batches of --batch rows, --clients connections;
  - a probe sends one marked row every 200 ms (HTTP NDJSON) and measures
    the time from its acknowledgement until a query (another connection)
    returns it;
  - a query client runs the query families in a loop (count, top-k by BM25,
    GROUP BY, newest 100) and records each one's latency;
  - every second the table's segment count is sampled.
Then, at rest, the same queries again. Prints a markdown report: rows/s,
rows/s per server CPU core-second (utime + stime of the server process;
also without the queries: the query client's and the probe's connection
threads, which are known because they connect first, and the shared
pool's threads (quarry-worker), which during a load only queries use (the
connections that ingest, the flusher and the merger run on their own
threads); and until the merges settle after the load),
freshness p50/p99/max, query medians during ingest and at rest, segment
count over time, bytes per row.

usage: bench/live.py QUARRY CORPUS.ndjson ROWS [--path bulk|copy] [--batch N]
       [--clients N] [--refresh-ms MS] [--out FILE]
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import psycopg2

ap = argparse.ArgumentParser()
ap.add_argument("quarry")
ap.add_argument("corpus")
ap.add_argument("rows", type=int)
ap.add_argument("--path", default="bulk", choices=["bulk", "copy"])
ap.add_argument("--batch", type=int, default=5000)
ap.add_argument("--clients", type=int, default=2)
ap.add_argument("--refresh-ms", type=int, default=1000)
ap.add_argument("--out", default=None)
ap.add_argument("--keep", default=None, help="keep the data directory here")
a = ap.parse_args()
Q = os.path.abspath(a.quarry)

QUERIES = [
    ("count", "SELECT count(*) FROM logs WHERE Body @@ 'failed'"),
    ("top-k", "SELECT Timestamp, ServiceName, Body FROM logs WHERE Body @@ ts_any(['failed', "
              "'error']) ORDER BY bm25(logs.tableoid) DESC LIMIT 100"),
    ("group-by", "SELECT SeverityText, count(*) FROM logs GROUP BY SeverityText"),
    ("recent", "SELECT Timestamp, Body FROM logs WHERE Body @@ 'failed' ORDER BY Timestamp DESC "
               "LIMIT 100"),
]


def pct(v, p):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    return (int(parts[11]) + int(parts[12])) / tck


def cpu_by_thread(pid):
    """Server CPU seconds by thread name (quarry-flusher, quarry-merger,
    quarry-conn, MHD-connection, quarry-worker, ...), summed per name,
    including threads that ended (their time moved to the process: the
    remainder is reported as "other")."""
    tck = os.sysconf("SC_CLK_TCK")
    out = {}
    d = "/proc/%d/task" % pid
    for tid in os.listdir(d):
        try:
            with open("%s/%s/comm" % (d, tid)) as f:
                name = f.read().strip()
            with open("%s/%s/stat" % (d, tid)) as f:
                parts = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[name] = out.get(name, 0.0) + (int(parts[11]) + int(parts[12])) / tck
    return out


def by_thread_now(pid, name):
    return cpu_by_thread(pid).get(name, 0.0)


def task_ids(pid):
    return set(os.listdir("/proc/%d/task" % pid))


def cpu_of(pid, tids):
    """CPU seconds of the server's threads tids (those still running)."""
    tck = os.sysconf("SC_CLK_TCK")
    n = 0.0
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                parts = f.read().rsplit(")", 1)[1].split()
            n += (int(parts[11]) + int(parts[12])) / tck
        except OSError:
            pass
    return n


def connect(port):
    c = psycopg2.connect(host="127.0.0.1", port=port, user="quarry", dbname="quarry")
    c.autocommit = True
    return c


def segs(d):
    return sum(1 for f in os.listdir(d) if f.startswith("seg-") and f.endswith(".qseg"))


def main():
    tmp = tempfile.mkdtemp(prefix="quarry-live-")
    data = os.path.join(tmp, "data")
    with open(a.corpus, "rb") as f:
        head = b"".join(f.readline() for _ in range(2000))
    subprocess.run([Q, "ingest", "--data", data, "--table", "logs", "-"], input=head, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pf, hf = os.path.join(tmp, "pg.port"), os.path.join(tmp, "http.port")
    log = open(os.path.join(tmp, "server.log"), "w")
    srv = subprocess.Popen([Q, "serve", "--data", data, "--listen", "127.0.0.1:0", "--port-file",
                            pf, "--http", "127.0.0.1:0", "--http-port-file", hf, "--refresh-ms",
                            str(a.refresh_ms), "--http-max-body", str(1 << 30)],
                           stdout=log, stderr=log)
    while not (os.path.exists(hf) and os.path.getsize(hf)):
        time.sleep(0.05)
    pg, hp = int(open(pf).read()), int(open(hf).read())
    tdir = os.path.join(data, "logs")

    # the corpus in batches, read by the loaders in turn (from the page cache)
    corpus = open(a.corpus, "rb")
    feed = {"left": a.rows}
    action = b'{"index":{"_index":"logs"}}\n'

    def next_batch():
        """(body, rows) of the next batch, or None at the end (under lock)."""
        if feed["left"] <= 0:
            return None
        lines = []
        for _ in range(min(a.batch, feed["left"])):
            ln = corpus.readline()
            if not ln:
                corpus.seek(0)
                ln = corpus.readline()
            lines.append(ln)
        feed["left"] -= len(lines)
        if a.path == "bulk":
            return b"".join(action + ln for ln in lines), len(lines)
        return b"".join(lines), len(lines)

    done = threading.Event()
    stop_probe = threading.Event()
    lock = threading.Lock()
    state = {"next": 0, "rows": 0, "errors": []}

    def loader():
        conn = None
        cur = None
        if a.path == "copy":
            import io
            conn = connect(pg)
            cur = conn.cursor()
        h = http.client.HTTPConnection("127.0.0.1", hp, timeout=120)
        while True:
            with lock:
                nb = next_batch()
            if nb is None:
                break
            body, nrows = nb
            try:
                if a.path == "bulk":
                    h.request("POST", "/_bulk", body=body,
                              headers={"Content-Type": "application/x-ndjson"})
                    r = h.getresponse()
                    rb = r.read()
                    if r.status != 200 or b'"errors":true' in rb[:100]:
                        raise RuntimeError("%d %s" % (r.status, rb[:300]))
                else:
                    import io
                    cur.copy_expert("COPY logs FROM STDIN (FORMAT json)", io.BytesIO(body))
            except Exception as ex:
                state["errors"].append(repr(ex))
                break
            with lock:
                state["rows"] += nrows

    fresh = []

    # the query client's and the probe's connections first, so that their
    # server threads (one per connection) are known: what queries cost is
    # then told apart from what ingest costs
    before = task_ids(srv.pid)
    qconn, pconn = connect(pg), connect(pg)
    for c in (qconn, pconn):
        c.cursor().execute("SELECT 1")
    time.sleep(0.1)
    query_tids = task_ids(srv.pid) - before

    def probe():
        cur = pconn.cursor()
        h = http.client.HTTPConnection("127.0.0.1", hp, timeout=60)
        n = 0
        while not stop_probe.is_set():
            n += 1
            mark = "probe%08d" % n
            row = json.dumps({"Timestamp": "2025-06-01T00:00:00Z", "Body": mark,
                              "SeverityText": "INFO", "ServiceName": "probe"}) + "\n"
            h.request("POST", "/v1/ingest/logs", body=row,
                      headers={"Content-Type": "application/x-ndjson"})
            r = h.getresponse()
            r.read()
            t_ack = time.time()
            if r.status != 200:
                continue
            while True:
                cur.execute("SELECT count(*) FROM logs WHERE Body @@ %s", (mark,))
                if cur.fetchone()[0] == 1:
                    break
                time.sleep(0.001)
            fresh.append(time.time() - t_ack)
            time.sleep(0.2)

    def run_queries(until, out, qc=None):
        cur = (qc or connect(pg)).cursor()
        while not until():
            for name, q in QUERIES:
                t0 = time.time()
                cur.execute(q)
                cur.fetchall()
                out.setdefault(name, []).append(time.time() - t0)

    seg_samples = []
    rss = [0]

    def rss_mib():
        with open("/proc/%d/status" % srv.pid) as f:
            for ln in f:
                if ln.startswith("VmRSS:"):
                    return int(ln.split()[1]) // 1024
        return 0

    def sampler():
        t0 = time.time()
        while not done.is_set():
            seg_samples.append((time.time() - t0, segs(tdir)))
            rss[0] = max(rss[0], rss_mib())
            time.sleep(1)

    busy = {}
    cpu0 = cpu_seconds(srv.pid)
    th0 = cpu_by_thread(srv.pid)
    q0 = cpu_of(srv.pid, query_tids)
    w0 = by_thread_now(srv.pid, "quarry-worker")
    t0 = time.time()
    th = [threading.Thread(target=loader) for _ in range(a.clients)]
    aux = [threading.Thread(target=probe), threading.Thread(target=sampler),
           threading.Thread(target=run_queries, args=(done.is_set, busy, qconn))]
    for t in th + aux:
        t.start()
    for t in th:
        t.join()
    elapsed = time.time() - t0
    cpu = cpu_seconds(srv.pid) - cpu0
    # the pool's threads run only queries' work here (ingest, flushes and
    # merges have threads of their own)
    qcpu = cpu_of(srv.pid, query_tids) - q0 + by_thread_now(srv.pid, "quarry-worker") - w0
    th1 = cpu_by_thread(srv.pid)
    by_thread = {k: th1.get(k, 0.0) - th0.get(k, 0.0) for k in set(th0) | set(th1)}
    by_thread["ended threads"] = cpu - sum(by_thread.values())  # e.g. the loaders' connections
    stop_probe.set()
    done.set()
    for t in aux:
        t.join()
    # settle: merges finish, then the same queries at rest
    last = segs(tdir)
    quiet = 0
    settle0 = time.time()
    while time.time() - settle0 < 600:
        time.sleep(2)
        s = segs(tdir)
        quiet = quiet + 1 if s == last else 0
        last = s
        if quiet >= 5:  # 10 s: the merger's idle rule waits 2 s after the last commit
            break
    # everything the load cost, the merges that ran after it included (the
    # merger yields to ingest, so a load window alone leaves some out)
    cpu_all = (cpu_seconds(srv.pid) - cpu0 - (cpu_of(srv.pid, query_tids) - q0) -
               (by_thread_now(srv.pid, "quarry-worker") - w0))
    settle_s = time.time() - settle0
    rest = {}
    t_end = time.time() + 10
    run_queries(lambda: time.time() > t_end, rest)
    c = connect(pg)
    cur = c.cursor()
    cur.execute("SELECT count(*) FROM logs")
    total = cur.fetchone()[0]
    c.close()
    nbytes = sum(os.path.getsize(os.path.join(tdir, f)) for f in os.listdir(tdir)
                 if f.startswith("seg-"))
    srv.send_signal(signal.SIGTERM)
    srv.wait(120)
    log.close()
    merges = sum(1 for ln in open(os.path.join(tmp, "server.log")) if "merged" in ln)

    rep = []
    rep.append("# Live ingest: %s, %d rows, batches of %d, %d clients, refresh %d ms"
               % (a.path, a.rows, a.batch, a.clients, a.refresh_ms))
    rep.append("")
    rep.append("- acknowledged rows: %d in %.1f s = **%.0f rows/s**; server CPU %.1f core-s = "
               "**%.0f rows per core-second**" % (state["rows"], elapsed, state["rows"] / elapsed,
                                                   cpu, state["rows"] / cpu if cpu else 0))
    merger = by_thread.get("quarry-merger", 0.0)
    rep.append("- server CPU by thread: %s; without the merger's %.1f core-s: **%.0f rows per "
               "core-second**" % (", ".join("%s %.1f s" % (k, v) for k, v in
                                            sorted(by_thread.items(), key=lambda kv: -kv[1])
                                            if abs(v) >= 0.05),
                                  merger, state["rows"] / (cpu - merger) if cpu > merger else 0))
    rep.append("- of that, the queries during the load (the query client's and the probe's "
               "connections, and the pool's threads they use): %.1f core-s; ingest alone: **%.0f rows per core-second** (%.0f without the "
               "merger too)" % (qcpu, state["rows"] / (cpu - qcpu) if cpu > qcpu else 0,
                                state["rows"] / (cpu - qcpu - merger) if cpu > qcpu + merger
                                else 0))
    rep.append("- until the merges settled (%.0f s after the load): %.1f core-s without the "
               "queries: **%.0f rows per core-second, merges included**"
               % (settle_s, cpu_all, state["rows"] / cpu_all if cpu_all else 0))
    rep.append("- rows in the table afterwards: %d (%d rows that created the table + "
               "acknowledged %d + %d probe rows)" % (total, len(head.splitlines()), state["rows"],
                                                     len(fresh)))
    if state["errors"]:
        rep.append("- loader errors: %s" % state["errors"][:3])
    rep.append("- freshness (acknowledged -> returned by a query), %d probes: p50 %.1f ms, p99 "
               "%.1f ms, max %.1f ms" % (len(fresh), 1000 * pct(fresh, 50), 1000 * pct(fresh, 99),
                                         1000 * max(fresh) if fresh else float("nan")))
    rep.append("- segments: max %d during ingest, %d at the end; %d background merges; %.1f "
               "bytes/row on disk" % (max(s for _, s in seg_samples) if seg_samples else 0, last,
                                      merges, nbytes / total if total else 0))
    rep.append("- server memory: peak RSS %d MiB while loading (sampled each second)" % rss[0])
    rep.append("")
    rep.append("| query | during ingest p50 | p99 | at rest p50 | runs (ingest/rest) |")
    rep.append("|---|---:|---:|---:|---:|")
    for name, _ in QUERIES:
        b, r = busy.get(name, []), rest.get(name, [])
        rep.append("| %s | %.1f ms | %.1f ms | %.1f ms | %d / %d |" % (
            name, 1000 * pct(b, 50), 1000 * pct(b, 99), 1000 * pct(r, 50), len(b), len(r)))
    rep.append("")
    rep.append("segment count over time (s: segments): " + ", ".join(
        "%d: %d" % (t, n) for t, n in seg_samples[:: max(1, len(seg_samples) // 20)]))
    text = "\n".join(rep) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    if a.keep:
        shutil.rmtree(a.keep, ignore_errors=True)
        shutil.move(data, a.keep)
    shutil.rmtree(tmp, ignore_errors=True)


main()
