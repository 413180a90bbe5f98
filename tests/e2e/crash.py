#!/usr/bin/python3
"""crash.py - durability of acknowledged rows under SIGKILL, and disk full.

Crash rounds: one data directory; each round starts `quarry serve` (with a
refresh interval that alternates between 50 ms and 30 s, so that rows are
sometimes only in the write-ahead log when the server dies), runs loaders
over every ingest path at once (INSERT and COPY FROM STDIN through libpq,
a transaction block of an INSERT and a COPY, HTTP NDJSON, Elasticsearch
_bulk, OTLP/HTTP JSON), and kills the server
with SIGKILL after a random delay. Each loader sends batches of rows tagged
with a batch id and records, per batch, whether it was acknowledged. After
every restart, one query per table checks against that ledger:
  - every acknowledged batch is present, each of its rows exactly once;
  - a batch that was sent but not acknowledged is present whole or not at
    all (never half-visible), and never twice;
  - no row of a batch that was never sent.
The ledger accumulates, so later rounds check every earlier one again.

Disk full: a data directory on a small tmpfs (or, where mounting is not
permitted, injected ENOSPC on the log's writes); loaders insert until the
server refuses; refusals must be 53100 (HTTP 507) with a message, the server
must keep answering queries, and after the space is grown and the server
restarted, exactly the acknowledged batches are there.

Usage: crash.py QUARRY ROUNDS SEED  (prints ok/FAIL lines and a summary;
exit 1 on any failure). Servers listen on 127.0.0.1 only, on free ports.
"""
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import psycopg2

Q = os.path.abspath(sys.argv[1])
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 50
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 1
TAG = os.path.basename(os.path.dirname(Q))
rng = random.Random(SEED)
passed = failed = 0


def ok(name):
    global passed
    passed += 1
    print("ok   e2e-crash[%s] %s" % (TAG, name), flush=True)


def bad(name, why):
    global failed
    failed += 1
    print("FAIL e2e-crash[%s] %s\n     %s" % (TAG, name, str(why)[:2000]), flush=True)


class Server:
    def __init__(self, data, tmp, refresh_ms, env=None):
        self.tmp = tmp
        pf, hf = os.path.join(tmp, "pg.port"), os.path.join(tmp, "http.port")
        for f in (pf, hf):
            if os.path.exists(f):
                os.unlink(f)
        self.log = open(os.path.join(tmp, "server.log"), "ab")
        self.p = subprocess.Popen([Q, "serve", "--data", data, "--listen", "127.0.0.1:0",
                                   "--port-file", pf, "--http", "127.0.0.1:0",
                                   "--http-port-file", hf, "--refresh-ms", str(refresh_ms)],
                                  stdout=self.log, stderr=self.log,
                                  env=dict(os.environ, **(env or {})))
        deadline = time.time() + 60
        while time.time() < deadline:
            if os.path.exists(hf) and os.path.getsize(hf) and os.path.exists(pf) \
                    and os.path.getsize(pf):
                break
            if self.p.poll() is not None:
                raise RuntimeError("server exited with %s (see %s)" % (self.p.returncode,
                                                                         self.log.name))
            time.sleep(0.02)
        else:
            raise RuntimeError("server did not start in 60 s")
        self.pg = int(open(pf).read())
        self.http = int(open(hf).read())

    def kill(self):
        self.p.send_signal(signal.SIGKILL)
        self.p.wait(30)
        self.log.close()

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        rc = self.p.wait(120)
        self.log.close()
        return rc


def connect(port):
    c = psycopg2.connect(host="127.0.0.1", port=port, user="quarry", dbname="quarry",
                         connect_timeout=10)
    c.autocommit = True
    return c


class Ledger:
    """batch id -> [table, size, state]: 'sent' or 'acked'."""

    def __init__(self):
        self.b = {}
        self.mu = threading.Lock()
        self.next = 0

    def new(self, table, size):
        with self.mu:
            self.next += 1
            bid = "b%06d" % self.next
            self.b[bid] = [table, size, "sent"]
            return bid

    def ack(self, bid):
        with self.mu:
            self.b[bid][2] = "acked"


def rows_of(bid, size):
    return [("%s-%04d" % (bid, i), i) for i in range(size)]


TS = "2025-06-01T00:00:%02dZ"


def load_insert(srv, led, stop):
    c = connect(srv.pg)
    cur = c.cursor()
    while not stop.is_set():
        size = rng.randint(1, 40)
        bid = led.new("crash", size)
        vals = ",".join("('%s','%s','%s',%d)" % (TS % (i % 60), k, bid, i)
                        for k, i in rows_of(bid, size))
        cur.execute("INSERT INTO crash VALUES " + vals)
        led.ack(bid)


def load_copy(srv, led, stop):
    import io
    c = connect(srv.pg)
    cur = c.cursor()
    while not stop.is_set():
        size = rng.randint(50, 800)
        bid = led.new("crash", size)
        buf = io.StringIO("".join("%s,%s,%s,%d\n" % (TS % (i % 60), k, bid, i)
                                  for k, i in rows_of(bid, size)))
        cur.copy_expert("COPY crash FROM STDIN (FORMAT csv)", buf)
        led.ack(bid)


def load_block(srv, led, stop):
    """A transaction block: an INSERT and a COPY of one batch, then COMMIT;
    the batch is acknowledged when COMMIT answers, and is never half there
    (a kill between its statements, or before COMMIT, stores none of it)."""
    import io
    c = connect(srv.pg)
    c.autocommit = False  # psycopg2 sends BEGIN before the first statement
    cur = c.cursor()
    while not stop.is_set():
        size = rng.randint(2, 400)
        bid = led.new("crash", size)
        rows = rows_of(bid, size)
        half = size // 2
        cur.execute("INSERT INTO crash VALUES " + ",".join(
            "('%s','%s','%s',%d)" % (TS % (i % 60), k, bid, i) for k, i in rows[:half]))
        cur.copy_expert("COPY crash FROM STDIN (FORMAT csv)", io.StringIO("".join(
            "%s,%s,%s,%d\n" % (TS % (i % 60), k, bid, i) for k, i in rows[half:])))
        c.commit()
        led.ack(bid)


def post(srv, path, body, headers):
    h = http.client.HTTPConnection("127.0.0.1", srv.http, timeout=30)
    h.request("POST", path, body=body, headers=headers)
    r = h.getresponse()
    data = r.read()
    h.close()
    return r.status, data


def load_ndjson(srv, led, stop):
    while not stop.is_set():
        size = rng.randint(1, 300)
        bid = led.new("crash", size)
        body = "".join(json.dumps({"ts": TS % (i % 60), "k": k, "bat": bid, "n": i}) + "\n"
                       for k, i in rows_of(bid, size))
        st, data = post(srv, "/v1/ingest/crash", body, {"Content-Type": "application/x-ndjson"})
        if st != 200:
            raise RuntimeError("ndjson: %d %s" % (st, data[:200]))
        led.ack(bid)


def load_bulk(srv, led, stop):
    while not stop.is_set():
        size = rng.randint(1, 300)
        bid = led.new("crash", size)
        body = "".join('{"index":{"_index":"crash"}}\n'
                       + json.dumps({"ts": TS % (i % 60), "k": k, "bat": bid, "n": i}) + "\n"
                       for k, i in rows_of(bid, size))
        st, data = post(srv, "/_bulk", body, {"Content-Type": "application/x-ndjson"})
        r = json.loads(data) if st == 200 else None
        if st != 200 or r["errors"]:
            raise RuntimeError("bulk: %d %s" % (st, data[:300]))
        led.ack(bid)


def load_otlp(srv, led, stop):
    while not stop.is_set():
        size = rng.randint(1, 200)
        bid = led.new("crash_otel", size)
        recs = [{"timeUnixNano": str(1748736000000000000 + i), "severityText": "INFO",
                 "body": {"stringValue": k},
                 "attributes": [{"key": "bat", "value": {"stringValue": bid}}]}
                for k, i in rows_of(bid, size)]
        body = json.dumps({"resourceLogs": [{"resource": {"attributes": [
            {"key": "service.name", "value": {"stringValue": "crash"}}]},
            "scopeLogs": [{"scope": {"name": "t"}, "logRecords": recs}]}]})
        st, data = post(srv, "/v1/logs?table=crash_otel", body,
                        {"Content-Type": "application/json"})
        if st != 200:
            raise RuntimeError("otlp: %d %s" % (st, data[:200]))
        led.ack(bid)


LOADERS = [load_insert, load_copy, load_block, load_ndjson, load_bulk, load_otlp]


def run_loaders(srv, led, seconds):
    stop = threading.Event()
    errors = []

    def wrap(fn):
        try:
            fn(srv, led, stop)
        except Exception as ex:  # the server died under it: expected
            if not stop.is_set():
                errors.append("%s: %r" % (fn.__name__, ex))

    th = [threading.Thread(target=wrap, args=(f,), daemon=True) for f in LOADERS]
    for t in th:
        t.start()
    return stop, th, errors


def per_batch(cur, bat, key, table):
    """batch -> (rows, distinct keys): the rows per batch, less the extra
    copies of keys stored more than once (two GROUP BYs; a count(DISTINCT)
    over millions of rows takes the join path, which holds every row in
    memory and passed the 2 GiB limit in a 200-round run). A GROUP BY of
    millions of (batch, key) groups passes it too (~450 bytes a group, a
    defect of its own), so the checking session has no memory limit."""
    cur.execute("SELECT %s, count(*) FROM %s GROUP BY 1" % (bat, table))
    rows = dict(cur.fetchall())
    cur.execute("SELECT %s, %s, count(*) FROM %s GROUP BY 1, 2 HAVING count(*) > 1"
                % (bat, key, table))
    extra = {}
    for b, _, n in cur.fetchall():
        extra[b] = extra.get(b, 0) + n - 1
    return {b: (n, n - extra.get(b, 0)) for b, n in rows.items()}


def present(port):
    """table -> batch -> (rows, distinct keys)."""
    c = connect(port)
    cur = c.cursor()
    cur.execute("SET memory_limit = 0")
    out = {"crash": per_batch(cur, "bat", "k", "crash")}
    cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'crash_otel'")
    if cur.fetchone()[0]:
        out["crash_otel"] = per_batch(cur, "LogAttributes['bat']", "Body", "crash_otel")
    else:
        out["crash_otel"] = {}
    c.close()
    return out


def verify(name, port, led):
    got = present(port)
    problems = []
    acked = unacked_present = 0
    with led.mu:
        items = list(led.b.items())
    known = set()
    for bid, (table, size, state) in items:
        known.add((table, bid))
        have = got[table].get(bid)
        if state == "acked":
            acked += 1
            if have != (size, size):
                problems.append("acked %s %s: want %d rows once, got %s" % (table, bid, size,
                                                                            have))
        elif have is not None:
            unacked_present += 1
            if have != (size, size):
                problems.append("unacknowledged %s %s half-visible or doubled: %d rows, got %s"
                                % (table, bid, size, have))
    for table, bats in got.items():
        for bid in bats:
            if (table, bid) not in known:
                problems.append("%s: batch %s was never sent" % (table, bid))
    if problems:
        bad(name, "; ".join(problems[:10]))
    else:
        ok("%s (%d acknowledged batches all there exactly once; %d sent but unanswered "
           "there whole)" % (name, acked, unacked_present))
    return acked


def crash_rounds(tmp):
    data = os.path.join(tmp, "data")
    subprocess.run([Q, "sql", "--data", data,
                    "CREATE TABLE crash (ts TIMESTAMP, k TEXT, bat TEXT, n BIGINT)"],
                   check=True, stdout=subprocess.DEVNULL)
    led = Ledger()
    started = time.time()
    worst_start = 0.0
    for r in range(ROUNDS):
        refresh = 50 if r % 2 == 0 else 30000
        t0 = time.time()
        try:
            srv = Server(data, tmp, refresh)
        except Exception as ex:
            bad("round %d: the server restarts after SIGKILL" % r, "%s\n%s" % (
                ex, open(os.path.join(tmp, "server.log"), errors="replace").read()[-2000:]))
            return
        worst_start = max(worst_start, time.time() - t0)
        if r:
            verify("round %d: after the restart" % r, srv.pg, led)
        stop, th, errors = run_loaders(srv, led, 0)
        time.sleep(rng.uniform(0.05, 0.6))
        stop.set()  # what fails from here on is the kill's doing
        srv.kill()
        for t in th:
            t.join(30)
        if errors:
            bad("round %d: loaders" % r, errors)
    srv = Server(data, tmp, 50)
    acked = verify("after %d SIGKILL rounds" % ROUNDS, srv.pg, led)
    rc = srv.stop()
    if rc == 0:
        ok("the last server shuts down cleanly on SIGTERM (exit 0)")
    else:
        bad("the last server shuts down cleanly on SIGTERM", "exit %s; %s" % (
            rc, open(os.path.join(tmp, "server.log"), errors="replace").read()[-3000:]))
    n = sum(1 for b in led.b.values() if b[2] == "acked")
    rows = sum(b[1] for b in led.b.values() if b[2] == "acked")
    print("crash: %d rounds in %.1f s; %d batches (%d rows) acknowledged, %d sent; slowest "
          "restart %.2f s" % (ROUNDS, time.time() - started, n, rows, len(led.b), worst_start),
          flush=True)
    return acked


def disk_full(tmp):
    mnt = os.path.join(tmp, "small")
    os.makedirs(mnt)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt],
                             stderr=subprocess.DEVNULL).returncode == 0
    data = os.path.join(mnt, "data")
    env = None
    if not mounted:
        print("disk full: cannot mount a tmpfs here; injecting ENOSPC into one write instead",
              flush=True)
        env = {"QUARRY_FAULT": "write:40:ENOSPC"}
    try:
        subprocess.run([Q, "sql", "--data", data,
                        "CREATE TABLE crash (ts TIMESTAMP, k TEXT, bat TEXT, n BIGINT)"],
                       check=True, stdout=subprocess.DEVNULL)
        srv = Server(data, tmp, 50, env)
        led = Ledger()
        c = connect(srv.pg)
        cur = c.cursor()
        refusals = []
        for _ in range(4000):
            size = 200
            bid = led.new("crash", size)
            vals = ",".join("('%s','%s','%s',%d)" % (TS % (i % 60), k + "x" * 200, bid, i)
                            for k, i in rows_of(bid, size))
            try:
                cur.execute("INSERT INTO crash VALUES " + vals)
                led.ack(bid)
            except psycopg2.Error as ex:
                refusals.append((ex.pgcode, str(ex).strip()))
                if len(refusals) >= 3:
                    break
        codes = set(code for code, _ in refusals)
        if refusals and codes <= {"53100", "58030", "53000"} and "53100" in codes:
            ok("disk full: INSERT refused with 53100 (%s) after %d batches" % (
                refusals[0][1].splitlines()[0][:120], sum(1 for b in led.b.values()
                                                          if b[2] == "acked")))
        else:
            bad("disk full: INSERT refused with 53100", "%s\n%s" % (
                refusals or "never refused",
                open(os.path.join(tmp, "server.log"), errors="replace").read()[-4000:]))
        st, body = post(srv, "/v1/ingest/crash", '{"ts":"2025-06-01T00:00:00Z","k":"h","bat":"hx"'
                        ',"n":1}\n' * 2000, {"Content-Type": "application/x-ndjson"})
        if st in (507, 429, 500):
            ok("disk full: HTTP ingest answers %d (%s)" % (st, body[:100]))
        else:
            bad("disk full: HTTP ingest refused", "%d %s" % (st, body[:200]))
        try:
            cur.execute("SELECT 1")
            ok("disk full: the server still answers queries")
        except psycopg2.Error as ex:
            bad("disk full: the server still answers queries", ex)
        c.close()
        srv.kill()
        if mounted:
            subprocess.run(["mount", "-o", "remount,size=256m", mnt], check=True)
        srv = Server(data, tmp, 50)
        verify("disk full: after more space and a restart, exactly the acknowledged batches",
               srv.pg, led)
        srv.stop()
    finally:
        if mounted:
            subprocess.run(["umount", "-l", mnt])


def main():
    tmp = tempfile.mkdtemp(prefix="quarry-e2e-crash-")
    try:
        crash_rounds(tmp)
        disk_full(tmp)
    finally:
        subprocess.run(["pkill", "-KILL", "-f", "quarry serve --data " + tmp],
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(tmp, ignore_errors=True)
    print("e2e-crash[%s]: %d passed, %d failed" % (TAG, passed, failed), flush=True)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    os.makedirs(os.path.join(root, "build", "results"), exist_ok=True)
    with open(os.path.join(root, "build", "results", "e2e-crash-" + TAG), "a") as f:
        f.write("%d %d\n" % (passed, failed))
    sys.exit(1 if failed else 0)


main()
