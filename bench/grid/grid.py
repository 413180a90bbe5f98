#!/usr/bin/python3
# bench/grid/grid.py - runs the query grid (bench/grid/queries.py) on Quarry
# and its peers over the same generated corpus, and writes per-engine
# results JSON and a markdown report with per-family medians, geometric means
# and ratios.
#
#   /usr/bin/python3 bench/grid/grid.py (Debian's, for python3-psycopg2)
#   [--rows 1000000] [--engines quarry,quarry-embedded,duckdb,sqlite,postgres,lucene] [--reuse]
#                              [--oracle auto|on|off] [--cap 60] [--lucene-warmup 3]
#
# Method (the issue's, ClickBench's): every engine loads the same corpus
# (load time includes its index build; bytes on disk after); each query runs
# 3 times: the first cold (the engine restarted, the OS page cache dropped
# when this user may), then twice in one warm session (the grid run
# round-robin twice); the result is the best of the two hot runs. Quarry is
# measured through its server (libpq, psycopg2: the wire protocol a client
# uses) and, as quarry-embedded, in-process too (`quarry sql --timing`: the
# like-for-like comparison with the in-process peers), PostgreSQL through
# its server; DuckDB and SQLite in-process, their
# natural form, and Lucene 8 in-process too (a JVM running the driver in
# bench/grid/lucene/: cold = a new JVM per query; hot = one JVM, untimed
# warm-up rounds for HotSpot, then the two timed rounds). Every answer is
# normalised (counts, group sets, the newest timestamps, row counts) and
# compared across engines and with a brute-force oracle over the NDJSON.
import json, os, subprocess, sys, time, re, math, statistics, socket, platform, argparse, sqlite3, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import queries as G

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
Q = os.environ.get("Q", os.path.join(ROOT, "build/rel/quarry"))
PEERS = os.path.join(ROOT, "bench/peers")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def drop_caches():
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def du(path):
    return int(subprocess.check_output(["du", "-sb", path]).split()[0])


def parse_ts(v):
    """nanoseconds since the epoch, UTC, from an integer or any engine's text"""
    if isinstance(v, int):
        return v
    s = str(v)
    if re.fullmatch(r"-?\d+", s):
        return int(s)
    m = re.match(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d+))?", s)
    import calendar
    secs = calendar.timegm(tuple(int(x) for x in m.groups()[:6]))
    frac = (m.group(7) or "").ljust(9, "0")[:9]
    return secs * 10**9 + int(frac)


# ---- the corpus and the time window -------------------------------------------

def corpus(rows, where):
    path = os.path.join(where, "otel-%d.ndjson" % rows)
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        log("generating %d rows -> %s" % (rows, path))
        with open(path + ".tmp", "wb") as f:
            subprocess.check_call([Q, "gen", "--rows", str(rows), "--seed", "42"], stdout=f)
        os.rename(path + ".tmp", path)
    return path


def window(path, rows):
    """[from, to] covering rows 40%..50% of the corpus, each bound half-way
    between two neighbouring rows"""
    w0, w1 = int(rows * 0.40), int(rows * 0.50)
    ts = {}
    with open(path, "rb") as f:
        for i, line in enumerate(f):
            if i in (w0 - 1, w0, w1, w1 + 1):
                ts[i] = parse_ts(line[14:44].split(b'"')[0].decode())
            if i > w1:
                break
    return (ts[w0 - 1] + ts[w0]) // 2, (ts[w1] + ts[w1 + 1]) // 2


# ---- the oracle: brute force over the NDJSON ---------------------------------------

def damerau(a, b, limit):
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1): d[i][0] = i
    for j in range(len(b) + 1): d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            c = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + c)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


class Row:
    __slots__ = ("toks", "set", "ts", "svc", "sev", "r")


def like_ok(p, w):
    return re.fullmatch("".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in p), w) is not None


def word_pred(n):
    t = n["t"]
    if t == "prefix": return lambda w: w.startswith(n["p"])
    if t == "regexp": return lambda w: re.fullmatch(n["re"], w) is not None
    if t == "like": return lambda w: like_ok(n["p"], w)
    if t == "fuzzy": return lambda w: damerau(w, n["w"], n["d"]) <= n["d"]


def compile_oracle(n):
    """a function Row -> bool"""
    t = n["t"]
    if t == "term": return lambda r: n["w"] in r.set
    if t == "and":
        fs = [compile_oracle(c) for c in n["c"]]
        return lambda r: all(f(r) for f in fs)
    if t == "or":
        fs = [compile_oracle(c) for c in n["c"]]
        return lambda r: any(f(r) for f in fs)
    if t == "not":
        f = compile_oracle(n["c"])
        return lambda r: not f(r)
    if t == "atleast":
        fs = [compile_oracle(c) for c in n["c"]]
        return lambda r: sum(1 for f in fs if f(r)) >= n["k"]
    if t in ("phrase", "gap", "near"):
        ws = n["w"]
        if t == "phrase": offs = [list(range(len(ws)))]
        elif t == "gap": offs = [[0, n["gap"] + 1]]
        else: offs = [[0, d] for d in range(1, n["n"] + 2)]
        def ph(r):
            if not all(w in r.set for w in ws): return False
            tk = r.toks
            for i, w in enumerate(tk):
                if w != ws[0]: continue
                for off in offs:
                    if all(i + o < len(tk) and tk[i + o] == ws[k] for k, o in enumerate(off)):
                        return True
            return False
        return ph
    if t in ("prefix", "regexp", "like", "fuzzy"):
        wp, cache = word_pred(n), {}
        def anyword(r):
            for w in r.set:
                v = cache.get(w)
                if v is None:
                    v = cache[w] = wp(w)
                if v: return True
            return False
        return anyword
    if t == "field":
        if n["col"] == "ServiceName": return lambda r: r.svc == n["v"]
        if n["col"] == "SeverityNumber" and n["op"] == ">=": return lambda r: r.sev >= n["v"]
    if t == "time": return lambda r: n["from_ns"] <= r.ts <= n["to_ns"]
    raise ValueError(n)


def oracle(path, qs):
    """normalised answers for every query, by brute force"""
    tok = re.compile(r"[^\W_]+")
    fs = {}
    for q in qs:
        f = q["filter"] if q["family"] != "join" else q["join"]["b_filter"]
        key = json.dumps(f, sort_keys=True)
        if f is not None and key not in fs:
            fs[key] = compile_oracle(f)
    state = {q["id"]: None for q in qs}
    counts = {q["id"]: 0 for q in qs}
    groups = {q["id"]: {} for q in qs if q["family"] == "group"}
    newest = {q["id"]: [] for q in qs if q["family"] == "recent" and q["order"] == "time"}
    traces = {q["id"]: ({}, {}) for q in qs if q["family"] == "join"}
    plan = []
    for q in qs:
        f = q["filter"] if q["family"] != "join" else q["join"]["b_filter"]
        plan.append((q, fs[json.dumps(f, sort_keys=True)] if f is not None else None))
    n = 0
    with open(path) as fh:
        for line in fh:
            j = json.loads(line)
            r = Row()
            r.toks = tok.findall((j["Body"] or "").lower())
            r.set = set(r.toks)
            r.ts = parse_ts(j["Timestamp"])
            r.svc, r.sev = j["ServiceName"], j["SeverityNumber"]
            memo = {}
            for q, f in plan:
                if f is None:
                    ok = True
                else:
                    ok = memo.get(id(f))
                    if ok is None:
                        ok = memo[id(f)] = f(r)
                fam = q["family"]
                if fam == "join":
                    a, b = traces[q["id"]]
                    tid = j["TraceId"]
                    if tid:
                        if r.svc == q["join"]["a_service"]:
                            a[tid] = a.get(tid, 0) + 1
                        if r.svc == q["join"]["b_service"] and ok:
                            b[tid] = b.get(tid, 0) + 1
                    continue
                if not ok:
                    continue
                counts[q["id"]] += 1
                if fam == "group":
                    key = tuple((r.ts // 10**9 * 10**9) if k == "second" else j[k] for k in q["group_by"])
                    g = groups[q["id"]]
                    g[key] = g.get(key, 0) + 1
                elif q["id"] in newest:
                    newest[q["id"]].append(r.ts)
                    if len(newest[q["id"]]) > 4096:
                        newest[q["id"]] = sorted(newest[q["id"]], reverse=True)[:100]
            n += 1
            if n % 200000 == 0:
                log("oracle: %d rows" % n)
    out = {}
    for q in qs:
        i, fam = q["id"], q["family"]
        if fam == "count": out[i] = counts[i]
        elif fam == "topk": out[i] = min(100, counts[i])
        elif fam == "group": out[i] = sorted([list(k) + [c] for k, c in groups[i].items()], key=repr)
        elif fam == "recent":
            out[i] = [t // 1000 for t in sorted(newest[i], reverse=True)[:100]] if i in newest else min(100, counts[i])
        elif fam == "join":
            a, b = traces[i]
            pairs = sum(a[t] * b[t] for t in a if t in b)
            out[i] = [pairs, sum(1 for t in a if t in b)]
    return out


def normalise(q, rows):
    fam = q["family"]
    if fam == "count": return int(rows[0][0])
    if fam == "join": return [int(rows[0][0]), int(rows[0][1])]
    if fam == "topk": return len(rows)
    if fam == "recent":
        # microseconds: PostgreSQL's wire format for timestamps (what Quarry's server sends)
        return [parse_ts(r[0]) // 1000 for r in rows] if q["order"] == "time" else len(rows)
    if fam == "group":
        out = []
        for r in rows:
            keys = [parse_ts(v) if k == "second" else v for k, v in zip(q["group_by"], r)]
            out.append(keys + [int(r[-1])])
        return sorted(out, key=repr)


def show(a):
    if isinstance(a, int): return str(a)
    if isinstance(a, list) and a and isinstance(a[0], list): return "%d groups" % len(a)
    if isinstance(a, list) and a and a[0] > 10**12: return "%d newest" % len(a)
    if isinstance(a, list): return ", ".join(map(str, a))
    return str(a)


# ---- engines -----------------------------------------------------------------------
# Each engine: load(corpus, dir) -> info; session(dir) -> object with run(sql) -> rows
# and close(); version().

class QuarryServer:
    name = "quarry"
    path = "server, libpq (psycopg2)"

    def __init__(self, data):
        import psycopg2, psycopg2.extensions
        self.pg = psycopg2
        self.data = data
        pf = data + ".port"
        if os.path.exists(pf): os.unlink(pf)
        self.proc = subprocess.Popen([Q, "serve", "--data", data, "--listen", "127.0.0.1:0", "--port-file", pf],
                                     stdout=subprocess.DEVNULL, stderr=open(data + ".serve.log", "a"))
        for _ in range(300):
            if os.path.exists(pf) and os.path.getsize(pf) > 0: break
            time.sleep(0.02)
        port = int(open(pf).read())
        self.con = psycopg2.connect(host="127.0.0.1", port=port, user="bench", dbname="quarry")
        self.con.autocommit = True
        keep = psycopg2.extensions.new_type((1114, 1184), "TSTEXT", lambda v, c: v)
        psycopg2.extensions.register_type(keep, self.con)
        self.cur = self.con.cursor()

    def set_cap(self, s):
        self.cur.execute("SET statement_timeout = '%ds'" % s)

    def run(self, sql):
        self.cur.execute(sql)
        return self.cur.fetchall()

    def close(self):
        self.con.close()
        self.proc.terminate()
        # a clean stop exits 0; a sanitizer's report at exit does not
        if self.proc.wait() != 0:
            raise RuntimeError("quarry serve exited with status %d (see %s.serve.log)" % (self.proc.returncode,
                                                                                       self.data))

    @staticmethod
    def load(path, data):
        # Segments of 1M rows straight from the input: the same table as
        # ingest's default 128 MiB segments merged by `quarry optimize`
        # (same segments, same bytes), without writing everything twice; the
        # price is memory, ~2.4 GB a worker at 10M rows (1 GiB of input each).
        shutil.rmtree(data, ignore_errors=True)
        t0 = time.time()
        subprocess.check_call([Q, "ingest", "--data", data, "--table", "logs", "--quiet",
                               "--segment-rows", "1048576", "--segment-mb", "1024", path])
        return {"load_s": time.time() - t0, "ingest_s": time.time() - t0,
                "note": "quarry ingest, segments of 1048576 rows (--segment-mb 1024)"}

    @staticmethod
    def version():
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()


class QuarryEmbedded:
    """Quarry in-process, the form Lucene, DuckDB and SQLite are measured in: `quarry sql
    --timing` times each execution inside the process (planning and executing the statement
    and materialising its result; printing it and the process's start excluded). One process
    per query: started after dropping the page cache, its first run is the cold one and the
    next two the hot ones (without --cold: two runs, both hot)."""
    name = "quarry-embedded"
    path = "in-process (`quarry sql --timing`, a process per query)"
    load = staticmethod(QuarryServer.load)
    version = staticmethod(QuarryServer.version)

    @classmethod
    def run_batch(cls, data, todo, res, cap, cold):
        for q, sql in todo:
            r = res[q["id"]]
            dropped = drop_caches() if cold else False
            try:
                p = subprocess.run([Q, "sql", "--data", data, "--format", "ndjson", "--timing", "--timeout",
                                    str(cap * 1000), "--repeat", "3" if cold else "2", sql],
                                   capture_output=True, text=True, timeout=3 * cap + 60)
            except subprocess.TimeoutExpired:
                r.update(status="timeout", msg="no answer in %d s" % (3 * cap + 60))
                continue
            times = [float(m) for m in re.findall(r"^Time: ([0-9.]+) ms$", p.stderr, re.M)]
            if p.returncode != 0 or len(times) != (3 if cold else 2):
                r.update(status="timeout" if "57014" in p.stderr else "error",
                         msg=(p.stderr.strip() or "exit status %d" % p.returncode)[:300])
                continue
            if cold:
                r["cold_ms"], r["cache_dropped"] = times[0], dropped
            r["hot_ms"] = times[-2:]
            # the values in column order (two columns may share a name: count, count)
            r["answer"] = normalise(q, [json.loads(line, object_pairs_hook=lambda kv: [v for _, v in kv])
                                        for line in p.stdout.splitlines()])


class SQLiteFTS:
    name = "sqlite"
    path = "in-process (Python sqlite3)"

    def __init__(self, db):
        self.con = sqlite3.connect(db)
        self.con.execute("PRAGMA cache_size = -2000000")
        self.con.execute("PRAGMA mmap_size = 17179869184")
        self.deadline = None
        self.con.set_progress_handler(self._tick, 100000)

    def _tick(self):
        return 1 if self.deadline and time.time() > self.deadline else 0

    def set_cap(self, s):
        self.cap = s

    def run(self, sql):
        def expand(m):
            terms = [r[0] for r in self.con.execute("SELECT term FROM body_vocab WHERE term LIKE ?", (m.group(1),))]
            return "(" + " OR ".join('"%s"' % t for t in terms) + ")" if terms else '"\x01none"'
        # the MATCH text is a literal: expansion rewrites it in place, and the
        # doubled quotes of lit() survive because terms hold no quote
        sql = re.sub(r"\{LIKE:([^}]*)\}", expand, sql)
        self.deadline = time.time() + getattr(self, "cap", 60)
        try:
            return self.con.execute(sql).fetchall()
        except sqlite3.OperationalError as e:
            if "interrupted" in str(e): raise TimeoutError()
            raise

    def close(self):
        self.con.close()

    @staticmethod
    def load(path, db):
        for p in (db, db + "-journal"):
            if os.path.exists(p): os.unlink(p)
        t0 = time.time()
        con = sqlite3.connect(db)
        con.executescript("""
            PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -2000000;
            CREATE TABLE logs (ts INTEGER, TraceId TEXT, SpanId TEXT, TraceFlags INTEGER, SeverityText TEXT,
              SeverityNumber INTEGER, ServiceName TEXT, Body TEXT, ResourceSchemaUrl TEXT, ResourceAttributes TEXT,
              ScopeSchemaUrl TEXT, ScopeName TEXT, ScopeVersion TEXT, ScopeAttributes TEXT, LogAttributes TEXT);
            CREATE TEMP TABLE raw (j TEXT);""")
        ins = """INSERT INTO logs SELECT
              unixepoch(substr(j->>'Timestamp', 1, 19)) * 1000000000 + CAST(substr(j->>'Timestamp', 21, 9) AS INTEGER),
              j->>'TraceId', j->>'SpanId', j->>'TraceFlags', j->>'SeverityText', j->>'SeverityNumber',
              j->>'ServiceName', j->>'Body', j->>'ResourceSchemaUrl', j->'ResourceAttributes', j->>'ScopeSchemaUrl',
              j->>'ScopeName', j->>'ScopeVersion', j->'ScopeAttributes', j->'LogAttributes' FROM raw"""
        with open(path) as f:
            while True:
                chunk = [(l,) for _, l in zip(range(100000), f)]
                if not chunk: break
                con.executemany("INSERT INTO raw VALUES (?)", chunk)
                con.execute(ins)
                con.execute("DELETE FROM raw")
        con.executescript("""
            CREATE VIRTUAL TABLE body_fts USING fts5(Body, content='logs', content_rowid='rowid',
              tokenize = "unicode61 remove_diacritics 0");
            INSERT INTO body_fts(body_fts) VALUES ('rebuild');
            INSERT INTO body_fts(body_fts) VALUES ('optimize');
            CREATE VIRTUAL TABLE body_vocab USING fts5vocab(body_fts, 'row');
            CREATE INDEX logs_ts ON logs(ts);
            CREATE INDEX logs_service ON logs(ServiceName, TraceId);
            CREATE INDEX logs_trace ON logs(TraceId);
            ANALYZE;""")
        con.commit()
        con.close()
        return {"load_s": time.time() - t0,
                "note": "rows through SQLite's JSON functions; FTS5 external content, unicode61; indexes on ts, (ServiceName, TraceId), TraceId"}

    @staticmethod
    def version():
        return sqlite3.sqlite_version


class DuckDB:
    """in-process through @duckdb/node-api: one node process per session"""
    name = "duckdb"
    path = "in-process (@duckdb/node-api)"

    def __init__(self, db):
        env = dict(os.environ, NODE_PATH=os.path.join(PEERS, "node_modules"))
        self.proc = subprocess.Popen(["node", os.path.join(ROOT, "bench/grid/duck.cjs"), db], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env)
        self.cap = 60

    def set_cap(self, s):
        self.cap = s

    def run(self, sql):
        self.proc.stdin.write(json.dumps({"sql": sql, "cap": self.cap}) + "\n")
        self.proc.stdin.flush()
        r = json.loads(self.proc.stdout.readline())
        if r.get("timeout"): raise TimeoutError()
        if "error" in r: raise RuntimeError(r["error"])
        self.last_ms = r["ms"]
        return r["rows"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()

    @staticmethod
    def ensure():
        if not os.path.exists(os.path.join(PEERS, "node_modules/@duckdb/node-api/package.json")):
            log("installing @duckdb/node-api into bench/peers")
            subprocess.check_call(["npm", "install", "--prefix", PEERS, "--no-audit", "--no-fund", "--loglevel=error",
                                   "@duckdb/node-api"])

    @staticmethod
    def load(path, db):
        DuckDB.ensure()
        for p in (db, db + ".wal"):
            if os.path.exists(p): os.unlink(p)
        env = dict(os.environ, NODE_PATH=os.path.join(PEERS, "node_modules"))
        t0 = time.time()
        out = subprocess.check_output(["node", os.path.join(ROOT, "bench/duckdb-load.cjs"), path, db], env=env)
        info = json.loads(out)
        return {"load_s": time.time() - t0, "version": info["version"], "note": "native table (read_json, explicit schema)"}

    @staticmethod
    def version():
        return "duckdb"


PGBIN = "/usr/lib/postgresql/15/bin"
PGCONF = ["shared_buffers=4GB", "work_mem=256MB", "maintenance_work_mem=2GB", "effective_cache_size=16GB",
          "max_parallel_workers_per_gather=2", "max_worker_processes=8", "random_page_cost=1.1",
          "wal_level=minimal", "max_wal_senders=0", "max_wal_size=8GB", "synchronous_commit=off",
          "listen_addresses=127.0.0.1", "jit=off"]


class Postgres:
    """PostgreSQL 15, a cluster of its own under the output folder, run as the
    postgres user on a free loopback port; queried through psycopg2 (libpq)"""
    name = "postgres"
    path = "server, libpq (psycopg2)"

    def __init__(self, cluster):
        import psycopg2
        Postgres.start(cluster)
        self.cluster = cluster
        self.con = psycopg2.connect(host="127.0.0.1", port=Postgres.port, user="postgres", dbname="postgres")
        self.con.autocommit = True
        self.cur = self.con.cursor()

    def set_cap(self, s):
        self.cur.execute("SET statement_timeout = '%ds'" % s)

    def run(self, sql):
        import psycopg2
        try:
            self.cur.execute(sql)
        except psycopg2.errors.QueryCanceled:
            raise TimeoutError()
        return [[str(v) if hasattr(v, "isoformat") else v for v in r] for r in self.cur.fetchall()]

    def close(self):
        self.con.close()
        Postgres.stop(self.cluster)

    port = None

    @staticmethod
    def start(cluster):
        if not os.path.exists(os.path.join(PGBIN, "postgres")):
            subprocess.check_call(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "postgresql-15"])
        if not os.path.exists(os.path.join(cluster, "PG_VERSION")):
            os.makedirs(cluster, exist_ok=True)
            shutil.chown(cluster, "postgres", "postgres")
            subprocess.check_call(["runuser", "-u", "postgres", "--", PGBIN + "/initdb", "-D", cluster, "-E", "UTF8",
                                   "--locale=C.UTF-8", "--auth=trust"], stdout=subprocess.DEVNULL)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        Postgres.port = s.getsockname()[1]
        s.close()
        opts = " ".join("-c " + c for c in PGCONF + ["port=%d" % Postgres.port, "unix_socket_directories=/tmp"])
        subprocess.check_call(["runuser", "-u", "postgres", "--", PGBIN + "/pg_ctl", "-D", cluster, "-w", "-s", "-l",
                               cluster + "/server.log", "-o", opts, "start"])

    @staticmethod
    def stop(cluster):
        subprocess.check_call(["runuser", "-u", "postgres", "--", PGBIN + "/pg_ctl", "-D", cluster, "-w", "-s",
                               "-m", "fast", "stop"])

    @staticmethod
    def load(path, cluster):
        import psycopg2
        shutil.rmtree(cluster, ignore_errors=True)
        t0 = time.time()
        Postgres.start(cluster)
        con = psycopg2.connect(host="127.0.0.1", port=Postgres.port, user="postgres", dbname="postgres")
        con.autocommit = True
        c = con.cursor()
        tsv = "to_tsvector('simple', regexp_replace(Body, '[^[:alnum:]]+', ' ', 'g'))"
        for sql in [
            "CREATE EXTENSION pg_trgm",
            "CREATE UNLOGGED TABLE raw (j text)",
            # each line one field: no character of JSON text is the quote or the delimiter
            "COPY raw FROM %s WITH (FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02')" % G.lit(os.path.abspath(path)),
            """CREATE TABLE logs (Timestamp timestamptz, TraceId text, SpanId text, TraceFlags smallint,
                 SeverityText text, SeverityNumber integer, ServiceName text, Body text, ResourceSchemaUrl text,
                 ResourceAttributes jsonb, ScopeSchemaUrl text, ScopeName text, ScopeVersion text,
                 ScopeAttributes jsonb, LogAttributes jsonb,
                 body_tsv tsvector GENERATED ALWAYS AS (%s) STORED)""" % tsv,
            # microseconds truncated, as Quarry's wire format sends them (the cast would round)
            """INSERT INTO logs SELECT (left(x->>'Timestamp', 26) || 'Z')::timestamptz, x->>'TraceId', x->>'SpanId',
                 (x->>'TraceFlags')::smallint, x->>'SeverityText', (x->>'SeverityNumber')::integer,
                 x->>'ServiceName', x->>'Body', x->>'ResourceSchemaUrl', x->'ResourceAttributes',
                 x->>'ScopeSchemaUrl', x->>'ScopeName', x->>'ScopeVersion', x->'ScopeAttributes', x->'LogAttributes'
               FROM (SELECT j::jsonb AS x FROM raw) r""",
            "DROP TABLE raw",
            "CREATE INDEX logs_tsv ON logs USING gin (body_tsv)",
            "CREATE INDEX logs_trgm ON logs USING gin (Body gin_trgm_ops)",
            "CREATE INDEX logs_ts ON logs (Timestamp)",
            "CREATE INDEX logs_service ON logs (ServiceName, TraceId)",
            "CREATE INDEX logs_trace ON logs (TraceId)",
            "VACUUM ANALYZE logs",
            "CHECKPOINT"]:
            c.execute(sql)
        c.execute("SELECT version()")
        ver = c.fetchone()[0].split(" on ")[0]
        con.close()
        Postgres.stop(cluster)
        return {"load_s": time.time() - t0, "version": ver,
                "note": "COPY of the lines, jsonb into typed columns, stored tsvector + GIN, pg_trgm GIN on Body, "
                        "B-trees on Timestamp, (ServiceName, TraceId), TraceId; " + ", ".join(PGCONF)}

    @staticmethod
    def version():
        return "PostgreSQL 15"


LUCENE = os.path.join(ROOT, "bench/grid/lucene")


class Lucene:
    """Lucene 8 (Debian's liblucene8-java) through the driver in bench/grid/lucene/ (README.md
    there): its own JSON request per query, not SQL. The driver runs a batch of queries in one
    JVM, round-robin, and times each inside the JVM (System.nanoTime around building the query,
    searching and fetching the result rows; JVM start and opening the index excluded, as a
    DuckDB or SQLite session's start is). Cold: one JVM per query, after dropping the page
    cache. Hot: one JVM, `warmup` untimed rounds over every query (HotSpot compiles; see
    REVIEW.md), then the 2 timed rounds."""
    name = "lucene"
    path = "in-process (JVM, bench/grid/lucene)"
    warmup = 20  # --lucene-warmup (REVIEW.md, "Warming Lucene up")
    java = None

    @staticmethod
    def ensure():
        """build.sh installs liblucene8-java (and a JDK) when missing and compiles the driver"""
        if Lucene.java:
            return
        r = subprocess.run([os.path.join(LUCENE, "build.sh")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
        if r.returncode != 0:
            raise RuntimeError("bench/grid/lucene/build.sh exited with status %d:\n%s" % (r.returncode,
                                                                                       r.stderr[-2000:]))
        v = subprocess.run(["java", "-version"], capture_output=True, text=True)
        Lucene.java = (v.stderr.splitlines() or ["java"])[0]

    @staticmethod
    def java_opts():
        own = os.environ.get("LUCENE_JAVA_OPTS")
        if own:
            return own
        m = re.search(r"LUCENE_JAVA_OPTS:-([^}]*)\}", open(os.path.join(LUCENE, "run.sh")).read())
        return m.group(1) if m else "?"

    @classmethod
    def settings(cls, cap):
        cls.ensure()
        return {"warmup_rounds": cls.warmup, "timed_hot_rounds": 2, "java": cls.java, "java_opts": cls.java_opts(),
                "timeout_ms": cap * 1000, "query_cache": "on" if os.environ.get("LUCENE_QUERY_CACHE") == "1" else "off",
                "recent": os.environ.get("LUCENE_RECENT", "time window")}

    @staticmethod
    def load(path, index):
        Lucene.ensure()
        with open(index + ".load.log", "w") as errf:
            t0 = time.time()
            out = subprocess.check_output([os.path.join(LUCENE, "run.sh"), "load", path, index], stderr=errf)
            t = time.time() - t0
        info = json.loads(out.decode().strip().splitlines()[-1])
        return {"load_s": t, "jvm_load_s": info["load_s"], "version": "Lucene " + info["version"],
                "note": "bench/grid/lucene run.sh load: 2 indexing threads, index sorted by Timestamp, "
                        "forceMerge(1) and commit, all in the load time (JVM start included)"}

    @staticmethod
    def version():
        return "Lucene 8"

    @classmethod
    def run_batch(cls, index, todo, res, cap, cold):
        """fills res (as run_engine's loop would) from the driver's runs"""
        qfile = index + ".queries.json"
        with open(qfile, "w") as f:
            json.dump({"queries": [q for q, _ in todo]}, f)
        env = dict(os.environ, LUCENE_JAVA_PROPS="-Dquarry.timeout_ms=%d" % (cap * 1000))
        errlog = index + ".run.log"

        def driver(ids, rounds, warm):
            with open(errlog, "a") as errf:
                errf.write("== run %s, %d rounds after %d warm-up\n" % (",".join(ids)[:200], rounds, warm))
                errf.flush()
                p = subprocess.run([os.path.join(LUCENE, "run.sh"), "run", index, qfile, ",".join(ids), str(rounds)],
                                   env=dict(env, LUCENE_WARMUP_ROUNDS=str(warm)), stdout=subprocess.PIPE,
                                   stderr=errf, text=True)
            out = {}
            for line in p.stdout.splitlines():
                if line.startswith("{"):
                    r = json.loads(line)
                    out[r["id"]] = r
            for i in ids:  # a JVM that died (or printed nothing) answers nothing: an error, never a gap
                out.setdefault(i, {"id": i, "status": "error", "times_ms": [], "rows": [],
                                   "msg": "no answer from the JVM (exit status %d; see %s)" % (p.returncode, errlog)})
            return out

        def failed(r, o):
            r.update(status=o["status"], msg=(o.get("msg") or o["status"])[:300])

        if cold:
            for q, _ in todo:
                r = res[q["id"]]
                dropped = drop_caches()
                o = driver([q["id"]], 1, 0)[q["id"]]
                if o["status"] == "ok" and o["times_ms"]:
                    r["cold_ms"] = o["times_ms"][0]
                    r["cache_dropped"] = dropped
                else:
                    failed(r, o)
        ids = [q["id"] for q, _ in todo if res[q["id"]]["status"] == "ok"]
        if ids:
            out = driver(ids, 2, cls.warmup)
            for q, _ in todo:
                r = res[q["id"]]
                if q["id"] not in out: continue
                o = out[q["id"]]
                if o["status"] == "ok":
                    r["hot_ms"] = list(o["times_ms"])
                    r["answer"] = normalise(q, o["rows"])
                else:
                    failed(r, o)


ENGINES = {"quarry": QuarryServer, "quarry-embedded": QuarryEmbedded, "duckdb": DuckDB, "sqlite": SQLiteFTS, "postgres": Postgres, "lucene": Lucene}
STORES = {"quarry": "quarry-data", "quarry-embedded": "quarry-data", "duckdb": "duck.duckdb", "sqlite": "sqlite.db", "postgres": "pg-cluster",
          "lucene": "lucene-index"}


def translate(q, eng):
    try:
        return G.sql_for(q, "quarry" if eng == "quarry-embedded" else eng), None
    except G.Unsupported as e:
        return None, str(e)


def timed(sess, sql):
    t0 = time.perf_counter()
    rows = sess.run(sql)
    ms = (time.perf_counter() - t0) * 1e3
    return getattr(sess, "last_ms", None) or ms, rows


def run_engine(cls, store, qs, cap, cold):
    res = {}
    todo = []
    for q in qs:
        sql, why = translate(q, cls.name)
        res[q["id"]] = {"id": q["id"], "sql": sql, "status": "unsupported" if why else "ok", "msg": why,
                        "cold_ms": None, "hot_ms": []}
        if sql: todo.append((q, sql))
    if hasattr(cls, "run_batch"):
        cls.run_batch(store, todo, res, cap, cold)
    else:
        run_rounds(cls, store, todo, res, cap, cold)
    for r in res.values():
        r["best_ms"] = min(r["hot_ms"]) if len(r["hot_ms"]) == 2 else None
    return res


def run_rounds(cls, store, todo, res, cap, cold):
    if cold:
        for q, sql in todo:
            dropped = drop_caches()
            s = cls(store)
            s.set_cap(cap)
            try:
                res[q["id"]]["cold_ms"] = timed(s, sql)[0]
                res[q["id"]]["cache_dropped"] = dropped
            except Exception as e:
                res[q["id"]].update(status="timeout" if isinstance(e, TimeoutError) else "error", msg=str(e)[:300])
            s.close()
    s = cls(store)
    s.set_cap(cap)
    for rnd in range(2):
        for q, sql in todo:
            r = res[q["id"]]
            if r["status"] != "ok": continue
            try:
                ms, rows = timed(s, sql)
                r["hot_ms"].append(ms)
                if rnd == 1:
                    r["answer"] = normalise(q, rows)
            except Exception as e:
                r.update(status="timeout" if isinstance(e, TimeoutError) else "error", msg=str(e)[:300])
                s.close()
                s = cls(store)
                s.set_cap(cap)
    s.close()


# ---- report ------------------------------------------------------------------------

FAMS = ["count", "topk", "group", "recent", "join"]


def gmean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(x):
    return "-" if x is None else ("%.2f" % x if x < 10 else "%.1f" % x if x < 100 else "%.0f" % x)


def report(rows, qs, results, loads, settings, truth, outdir):
    # Quarry first; every other engine is a peer with its ratio column
    mine = ["quarry"] + (["quarry-embedded"] if "quarry-embedded" in results else [])
    engines = mine + [e for e in results if e not in mine]
    peers = engines[len(mine):]
    warm = ["%s: after %d untimed warm-up round%s over every query in the same %s" % (
        e, settings[e]["warmup_rounds"], "" if settings[e]["warmup_rounds"] == 1 else "s",
        "JVM" if e == "lucene" else "session") for e in engines if settings[e].get("warmup_rounds")]
    L = []
    L.append("# Query grid at %d rows (%s, %d CPUs, %s)" % (rows, time.strftime("%Y-%m-%d"), os.cpu_count(),
                                                          platform.platform()))
    L.append("")
    L.append("Generated by `bench/grid/grid.py --rows %d --engines %s`. %d queries; hot = best of two warm"
             " runs%s, cold = first run after restarting the engine (Lucene: a new JVM) and dropping the page"
             " cache. Times in ms." % (rows, ",".join(engines), len(qs), " (%s)" % "; ".join(warm) if warm else ""))
    L.append("")
    L.append("| engine | how measured | version | load s | bytes on disk | B/row |")
    L.append("|---|---|---|---:|---:|---:|")
    for e in engines:
        ld = loads[e]
        how = ENGINES[e].path + ("; %d warm-up rounds" % settings[e]["warmup_rounds"]
                                 if settings[e].get("warmup_rounds") else "")
        L.append("| %s | %s | %s | %.1f | %d | %.1f |" % (e, how, ld.get("version", ""), ld["load_s"],
                                                       ld["bytes"], ld["bytes"] / rows))
    L.append("")
    L.append("## Per family: hot medians (geometric means in brackets), ratio = peer / Quarry")
    L.append("")
    L.append("| family | queries | " + " | ".join(engines) + " | " + " | ".join("%s/quarry" % e for e in peers) + " |")
    L.append("|---|---:|" + "---:|" * (len(engines) + len(peers)))
    allratio = {e: [] for e in engines}
    for fam in FAMS:
        ids = [q["id"] for q in qs if q["family"] == fam]
        cells, ratios = [], []
        for e in engines:
            xs = [results[e][i]["best_ms"] for i in ids if results[e][i]["best_ms"] is not None]
            cells.append("%s (%s) n=%d" % (fmt(statistics.median(xs)) if xs else "-", fmt(gmean(xs)), len(xs)))
        for e in peers:
            both = [(results[e][i]["best_ms"], results["quarry"][i]["best_ms"]) for i in ids
                    if results[e][i]["best_ms"] and results["quarry"][i]["best_ms"]]
            r = gmean([a / b for a, b in both])
            allratio[e] += [a / b for a, b in both]
            ratios.append(fmt(r) + "x" if r else "unsupported")
        L.append("| %s | %d | %s | %s |" % (fam, len(ids), " | ".join(cells), " | ".join(ratios)))
    L.append("| all (geometric mean of per-query ratios) | %d | %s | %s |" % (
        len(qs), " | ".join("" for _ in engines), " | ".join(fmt(gmean(allratio[e])) + "x" if allratio[e] else "-"
                                                             for e in peers)))
    L.append("")
    like_for_like(L, qs, results, peers)
    targets(L, rows, qs, results, loads, peers)
    L.append("## Cross-check")
    L.append("")
    bad = []
    for q in qs:
        for e in engines:
            r = results[e][q["id"]]
            if r["status"] != "ok": continue
            ref = truth.get(q["id"]) if truth else results["quarry"][q["id"]].get("answer")
            if ref is not None and r.get("answer") != ref:
                bad.append((q, e, r.get("answer"), ref))
    L.append("Answers compared with %s: %d mismatches." % ("the brute-force oracle" if truth else "Quarry's", len(bad)))
    for q, e, got, ref in bad:
        why = known_difference(q, e)
        L.append("- **%s** %s on %s: %s, expected %s%s" % (q["id"], q["name"], e, show(got)[:80], show(ref)[:80],
                                                           " (known: %s)" % why if why else ""))
    L.append("")
    L.append("## Every query (hot ms; cold in brackets)")
    L.append("")
    L.append("| id | family | kind | band | query | answer | " + " | ".join(engines) + " |")
    L.append("|---|---|---|---|---|---|" + "---:|" * len(engines))
    for q in qs:
        cells = []
        for e in engines:
            r = results[e][q["id"]]
            cells.append("%s (%s)" % (fmt(r["best_ms"]), fmt(r["cold_ms"])) if r["status"] == "ok" else r["status"])
        ans = truth.get(q["id"]) if truth else results["quarry"][q["id"]].get("answer")
        L.append("| %s | %s | %s | %s | %s | %s | %s |" % (q["id"], q["family"], q["kind"], q["band"],
                                                          q["name"].replace("|", "\\|"), show(ans), " | ".join(cells)))
    L.append("")
    L.append("Unsupported: " + "; ".join(sorted({"%s: %s" % (e, results[e][i]["msg"]) for e in engines
                                                 for i in results[e] if results[e][i]["status"] == "unsupported"})))
    L.append("")
    L.append("![family medians](chart.svg)")
    chart(os.path.join(outdir, "chart.svg"), rows, engines, qs, results)
    path = os.path.join(outdir, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    return path, len(bad)


def has_time(f):
    return f.get("t") == "time" or any(has_time(c) for c in f.get("c", []))


def known_difference(q, e):
    """why an engine's answer may differ from the others' where the semantics
    do not quite agree (REVIEW.md), or None"""
    if e == "postgres" and has_time(q["filter"]):
        return ("timestamptz holds microseconds: the rows' timestamps are truncated and the window's bounds "
                "rounded to the microsecond, which moves a row lying within a microsecond of a bound")
    return None


def inproc(e):
    return ENGINES[e].path.startswith("in-process")


def like(e, results):
    """the Quarry a peer is compared with like for like: in-process with in-process"""
    return "quarry-embedded" if inproc(e) and "quarry-embedded" in results else "quarry"


def fam_median(results, e, ids):
    xs = [results[e][i]["best_ms"] for i in ids if results[e][i]["best_ms"] is not None]
    return (statistics.median(xs), len(xs)) if xs else (None, 0)


def like_for_like(L, qs, results, peers):
    if "quarry-embedded" not in results or not peers:
        return
    L.append("## Like for like: ratio = peer / Quarry measured the same way")
    L.append("")
    L.append("In-process peers (%s) against Quarry in-process (quarry-embedded); peers behind a client "
             "(%s) against Quarry's server. Geometric mean of the per-query ratios over the queries both "
             "answer." % (", ".join(e for e in peers if inproc(e)) or "none",
                         ", ".join(e for e in peers if not inproc(e)) or "none"))
    L.append("")
    L.append("| family | " + " | ".join("%s/%s" % (e, like(e, results)) for e in peers) + " |")
    L.append("|---|" + "---:|" * len(peers))
    every = {e: [] for e in peers}
    for fam in FAMS + ["all"]:
        ids = [q["id"] for q in qs if fam in ("all", q["family"])]
        cells = []
        for e in peers:
            mq = like(e, results)
            rs = [results[e][i]["best_ms"] / results[mq][i]["best_ms"] for i in ids
                  if results[e][i]["best_ms"] and results[mq][i]["best_ms"]]
            cells.append(fmt(gmean(rs)) + "x" if rs else "unsupported")
        L.append("| %s | %s |" % (fam, " | ".join(cells)))
    L.append("")


# issue 15's targets at 10M rows: hot medians through the server
TARGET_MS = {"count": 2.5, "topk": 10, "recent": 5, "group": 5, "join": 15}


def targets(L, rows, qs, results, loads, peers):
    L.append("## Targets")
    L.append("")
    L.append("Hot medians through the server against the targets (ms); the fastest peer of each family by "
             "its hot median, compared like for like (an in-process peer with quarry-embedded when it ran), "
             "against the goal of 3x.")
    L.append("")
    L.append("| family | Quarry | target | target met | fastest peer | its median | Quarry compared | ratio | 3x |")
    L.append("|---|---:|---:|---|---|---:|---:|---:|---|")
    for fam in FAMS:
        ids = [q["id"] for q in qs if q["family"] == fam]
        mq, _ = fam_median(results, "quarry", ids)
        t = TARGET_MS[fam]
        met = "-" if mq is None else ("met" if mq <= t else "missed by %.1fx" % (mq / t))
        best = min(((fam_median(results, e, ids)[0], e) for e in peers if fam_median(results, e, ids)[0]),
                   default=(None, None))
        if best[1]:
            mine = like(best[1], results)
            me, _ = fam_median(results, mine, ids)
            ratio = best[0] / me if me else None
            three = "-" if ratio is None else ("met" if ratio >= 3 else "missed: %.2fx of 3x" % ratio)
            L.append("| %s | %s | %s | %s | %s | %s | %s %s | %s | %s |" % (
                fam, fmt(mq), fmt(t), met, best[1], fmt(best[0]), mine, fmt(me),
                fmt(ratio) + "x" if ratio else "-", three))
        else:
            L.append("| %s | %s | %s | %s | - | - | - | - | - |" % (fam, fmt(mq), fmt(t), met))
    ls = sorted((loads[e]["load_s"], e) for e in ["quarry"] + peers if e in loads)
    bs = sorted((loads[e]["bytes"], e) for e in ["quarry"] + peers if e in loads)
    L.append("")
    L.append("Load: fastest %s (%.1f s); Quarry %.1f s%s. On disk: smallest %s (%.1f B/row); Quarry %.1f B/row%s."
             % (ls[0][1], ls[0][0], loads["quarry"]["load_s"],
                "" if ls[0][1] == "quarry" else " (%.2fx the fastest)" % (loads["quarry"]["load_s"] / ls[0][0]),
                bs[0][1], bs[0][0] / rows, loads["quarry"]["bytes"] / rows,
                "" if bs[0][1] == "quarry" else " (%.2fx the smallest)" % (loads["quarry"]["bytes"] / bs[0][0])))
    L.append("")


def chart(path, rows, engines, qs, results):
    """per-family hot medians as grouped bars on a log scale (0.01 ms .. 10 s)"""
    colours = ["#1f77b4", "#aec7e8", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    W, H, left, top, bottom = 60 + 140 * len(engines), 360, 60, 40, 60
    lo, hi = -2, 4
    y = lambda ms: top + (H - top - bottom) * (1 - (math.log10(max(ms, 10 ** lo)) - lo) / (hi - lo))
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">'
           % (W, H), '<text x="%d" y="20" font-size="14">Hot median per family, ms (log scale), %d rows</text>'
           % (left, rows)]
    for p in range(lo, hi + 1):
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%s'
                   '</text>' % (left, W - 10, y(10 ** p), y(10 ** p), left - 5, y(10 ** p) + 4, "%g" % 10 ** p))
    slot = (W - left - 10) / len(FAMS)
    bw = slot * 0.8 / len(engines)
    for fi, fam in enumerate(FAMS):
        ids = [q["id"] for q in qs if q["family"] == fam]
        for ei, e in enumerate(engines):
            xs = [results[e][i]["best_ms"] for i in ids if results[e][i]["best_ms"] is not None]
            x = left + fi * slot + slot * 0.1 + ei * bw
            if xs:
                m = statistics.median(xs)
                out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s %.3g ms</title>'
                           '</rect>' % (x, y(m), bw - 2, H - bottom - y(m), colours[ei % len(colours)], e, fam, m))
            else:
                out.append('<text x="%.1f" y="%d" font-size="9" transform="rotate(-90 %.1f %d)">n/a</text>'
                           % (x + bw / 2, H - bottom - 4, x + bw / 2, H - bottom - 4))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (left + fi * slot + slot / 2, H - bottom + 18, fam))
    for ei, e in enumerate(engines):
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>'
                   % (left + ei * 140, H - 22, colours[ei % len(colours)], left + ei * 140 + 16, H - 12, e))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--engines", default="quarry,quarry-embedded,duckdb,sqlite,postgres,lucene")
    ap.add_argument("--oracle", default="auto")
    ap.add_argument("--cap", type=int, default=60)
    ap.add_argument("--no-cold", action="store_true")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--reuse", action="store_true", help="keep an engine's results JSON from an earlier run")
    ap.add_argument("--only", default="", help="comma-separated query ids")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/out"), help="corpus and results under here")
    ap.add_argument("--lucene-warmup", type=int, default=Lucene.warmup,
                    help="untimed rounds over every query in Lucene's hot JVM before the 2 timed ones")
    a = ap.parse_args()
    Lucene.warmup = a.lucene_warmup
    engines = a.engines.split(",")
    for e in engines:
        if e not in ENGINES:
            sys.exit("grid: unknown engine %r (engines: %s)" % (e, ", ".join(ENGINES)))
    if "lucene" in engines:
        # before any work: Java and liblucene8-java are installed here when missing (build.sh)
        try:
            Lucene.ensure()
        except Exception as ex:
            sys.exit("grid: the engine lucene is unavailable: %s\n(leave it out: --engines %s)"
                     % (ex, ",".join(e for e in engines if e != "lucene")))
    outdir = os.path.join(a.out, "grid/%d" % a.rows)
    os.makedirs(outdir, exist_ok=True)
    path = corpus(a.rows, a.out)
    win = window(path, a.rows)
    qs = G.grid(win)
    if a.only:
        qs = [q for q in qs if q["id"] in a.only.split(",")]
    for q in qs:
        q["sql"] = {e: translate(q, e)[0] for e in ENGINES}
    with open(os.path.join(outdir, "queries.json"), "w") as f:
        json.dump({"rows": a.rows, "window": win, "queries": qs}, f, indent=1)
    truth = None
    if a.oracle == "on" or (a.oracle == "auto" and a.rows <= 1000000):
        tp = os.path.join(outdir, "oracle.json")
        key = json.dumps([q["filter"] for q in qs] + [q.get("join") for q in qs] + ["us"], sort_keys=True)
        cached = json.load(open(tp)) if os.path.exists(tp) else {}
        if cached.get("key") == key:
            truth = cached["answers"]
        else:
            log("oracle: brute force over %s" % path)
            truth = oracle(path, qs)
            json.dump({"key": key, "answers": truth}, open(tp, "w"))
    results, loads, settings = {}, {}, {}
    for e in engines:
        cls = ENGINES[e]
        store = os.path.join(outdir, STORES[e])
        settings[e] = dict({"cold": not a.no_cold, "cap_s": a.cap, "warmup_rounds": 0, "timed_hot_rounds": 2},
                           **(cls.settings(a.cap) if hasattr(cls, "settings") else {}))
        lp = store + ".load.json"
        ld = json.load(open(lp)) if os.path.exists(lp) and os.path.exists(store) else None
        if ld is None or ld.get("corpus_mtime") != os.path.getmtime(path):
            log("%s: loading %s" % (e, path))
            ld = cls.load(path, store)
            ld["corpus_mtime"] = os.path.getmtime(path)
            ld["bytes"] = du(store)
            ld.setdefault("version", cls.version())
            json.dump(ld, open(lp, "w"))
        loads[e] = ld
        rp = os.path.join(outdir, "%s.json" % e)
        kept = {}
        if a.reuse and os.path.exists(rp):
            old = json.load(open(rp))
            # (Lucene's warm-up rounds change what its hot times mean: another count measures again)
            if old["load"].get("corpus_mtime") == ld["corpus_mtime"] and \
                    old.get("settings", {}).get("warmup_rounds", 0) == settings[e]["warmup_rounds"]:
                # a query's earlier result stands while its SQL is unchanged
                now = {q["id"]: translate(q, e)[0] for q in qs}
                kept = {r["id"]: r for r in old["queries"] if r["sql"] and r["sql"] == now.get(r["id"])}
        todo = [q for q in qs if q["id"] not in kept]
        log("%s: running %d queries (%d results reused)" % (e, len(todo), len(kept)))
        results[e] = run_engine(cls, store, todo, a.cap, not a.no_cold) if todo else {}
        for q in qs:
            if q["id"] in kept:
                results[e][q["id"]] = kept[q["id"]]
        with open(os.path.join(outdir, "%s.json" % e), "w") as f:
            json.dump({"engine": e, "how": cls.path, "load": ld, "settings": settings[e], "rows": a.rows,
                       "machine": platform.platform(),
                       "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "queries": list(results[e].values())}, f, indent=1)
    if "quarry" not in results:
        sys.exit("the report compares with quarry: include it in --engines")
    rp, bad = report(a.rows, qs, results, loads, settings, truth, outdir)
    print(rp)
    failed = [e + " " + r["id"] + ": " + str(r["msg"]) for e in ("quarry", "quarry-embedded") if e in results
              for r in results[e].values() if r["status"] != "ok"]
    for f in failed:
        log("failed: " + f)
    # --strict (the test suite): any mismatch, or any Quarry query not answered, fails
    sys.exit(1 if a.strict and (bad or failed) else 0)


if __name__ == "__main__":
    main()
