// bench/grid/duck.cjs - the DuckDB session of bench/grid/grid.py: opens the
// database file read-only and answers one JSON request per stdin line,
// {"sql": "...", "cap": seconds}, with {"ms": time of runAndReadAll,
// "rows": [[...]]} (BigInts and DuckDB values as text), {"timeout": true}
// when the cap passed (the query is interrupted) or {"error": "..."}.
'use strict';
const { DuckDBInstance } = require('@duckdb/node-api');
const readline = require('readline');

function plain(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'object') return v.toString();
  return v;
}

async function main() {
  const inst = await DuckDBInstance.create(process.argv[2], { access_mode: 'READ_ONLY' });
  const con = await inst.connect();
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    const req = JSON.parse(line);
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; con.interrupt(); }, req.cap * 1000);
    const t0 = process.hrtime.bigint();
    let out;
    try {
      const rows = (await con.runAndReadAll(req.sql)).getRows();
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      out = { ms, rows: rows.map((r) => r.map(plain)) };
    } catch (e) {
      out = timedOut ? { timeout: true } : { error: String(e && e.message ? e.message : e) };
    }
    clearTimeout(timer);
    process.stdout.write(JSON.stringify(out) + '\n');
  }
  con.closeSync();
  inst.closeSync();
}
main().catch((e) => { console.error(`duck.cjs: ${e && e.message ? e.message : e}`); process.exit(1); });
