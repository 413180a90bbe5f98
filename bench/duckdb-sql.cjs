// The DuckDB peer of bench/sql.sh: each query of bench/sql-queries.tsv on a
// native DuckDB table (bench/duckdb-load.cjs), run REPS times hot in one
// connection; prints one JSON line per query: {"name","ms","rows","check"}
// (median ms; check = the last cell of each row, the counts, or the row
// count past 20 rows: the two engines are compared on the answer before
// their latencies are).
//
// usage: NODE_PATH=bench/peers/node_modules node bench/duckdb-sql.cjs DB.duckdb REPS QUERIES.tsv
'use strict';

const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');

function cellText(v) {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toFixed(6);
  if (typeof v === 'object' && 'micros' in v) return String(v.micros);
  if (typeof v === 'object' && 'nanos' in v) return String(v.nanos);
  return String(v);
}

async function main() {
  const [db, repsArg, qfile] = process.argv.slice(2);
  const reps = Number(repsArg || 5);
  const inst = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY' });
  const con = await inst.connect();
  for (const line of fs.readFileSync(qfile, 'utf8').split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const [, name, qsql, dsql] = line.split('\t');
    const sql = dsql === '=' ? qsql : dsql;
    const times = [];
    let rows = [];
    for (let r = 0; r < reps + 1; r++) {
      const t0 = process.hrtime.bigint();
      rows = (await con.runAndReadAll(sql)).getRows();
      if (r > 0) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    // the answer to compare: the last cell of each row (counts), or the row count
    const check = rows.length <= 20
      ? rows.map((r) => cellText(r[r.length - 1])).join(';') : `${rows.length} rows`;
    console.log(JSON.stringify({ name, ms: times[Math.floor(times.length / 2)], rows: rows.length, check }));
  }
  con.closeSync();
  inst.closeSync();
}

main().catch((e) => {
  console.error(`duckdb-sql: ${e && e.message ? e.message : e}`);
  process.exit(1);
});
