// The DuckDB peer of bench/topk.sh: newest-100 (ORDER BY Timestamp DESC
// LIMIT 100) and first-100 (LIMIT 100) for the same filters, on a native
// DuckDB table loaded from the same NDJSON (bench/duckdb-load.cjs). DuckDB
// has no text index here (its fts extension cannot be downloaded on this
// machine), so word filters are regular expressions with Quarry's word
// rule: a word is a maximal run of letters and digits, case-insensitive.
// The match count of every filter is printed so the two engines can be
// checked to agree on the rows before their latencies are compared.
//
// usage: NODE_PATH=bench/peers/node_modules node bench/duckdb-topk.cjs DB.duckdb REPS
// prints one JSON line per filter: {"name","count","newest_ms","first_ms"}
// (medians of REPS hot runs, all 15 columns of the 100 rows read).
'use strict';

const { DuckDBInstance } = require('@duckdb/node-api');

const W = (w) => `regexp_matches(Body, '(?i)(^|[^[:alnum:]])${w}([^[:alnum:]]|$)')`;
const SEP = '[^[:alnum:]]+';
const FILTERS = [
  ['failed', W('failed')],
  ['error OR failed', `(${W('error')} OR ${W('failed')})`],
  ['"failed to place order"', W(['failed', 'to', 'place', 'order'].join(SEP))],
  ['timeout', W('timeout')],
  ['service:cart', "ServiceName = 'cart'"],
  ['sevnum:>=17', 'SeverityNumber >= 17'],
];

async function main() {
  const [db, repsArg] = process.argv.slice(2);
  const reps = Number(repsArg || 10);
  const inst = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY' });
  const con = await inst.connect();
  const time = async (q) => {
    const t = [];
    for (let i = 0; i < reps + 1; i++) {
      const t0 = process.hrtime.bigint();
      const r = await con.runAndReadAll(q);
      if (r.getRows().length > 100) throw new Error('too many rows');
      if (i > 0) t.push(Number(process.hrtime.bigint() - t0) / 1e6); // first run warms up
    }
    t.sort((a, b) => a - b);
    return t[Math.floor(t.length / 2)];
  };
  for (const [name, where] of FILTERS) {
    const count = Number((await con.runAndReadAll(`SELECT count(*) FROM logs WHERE ${where}`)).getRows()[0][0]);
    const newest = await time(`SELECT * FROM logs WHERE ${where} ORDER BY Timestamp DESC LIMIT 100`);
    const first = await time(`SELECT * FROM logs WHERE ${where} LIMIT 100`);
    console.log(JSON.stringify({ name, count, newest_ms: newest, first_ms: first }));
  }
  con.closeSync();
  inst.closeSync();
}

main().catch((e) => {
  console.error(`duckdb-topk: ${e && e.message ? e.message : e}`);
  process.exit(1);
});
