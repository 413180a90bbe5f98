// Loads an OpenTelemetry NDJSON corpus into a native DuckDB table in a
// persistent database file (the DuckDB peer of bench/ingest.sh); measures the
// in-process load + CHECKPOINT time. The caller measures the whole process
// with /usr/bin/time -v (wall, CPU, peak RSS) and the file size afterwards.
//
// usage: NODE_PATH=bench/peers/node_modules node bench/duckdb-load.cjs FILE.ndjson DB.duckdb
// prints one JSON line: {"version","threads","rows","load_s"}
//
// Schema: explicit, so DuckDB does not sample-and-guess. Timestamp is
// TIMESTAMP_NS (read_json parses the RFC 3339 "...T..:..:...123456789Z" text
// with full nanosecond precision); the three attribute objects are
// MAP(VARCHAR, VARCHAR), DuckDB's native key/value type; TraceFlags UTINYINT,
// SeverityNumber INTEGER, all other columns VARCHAR. The database file uses
// storage_compatibility_version 'latest' (DICT_FSST and the other newer
// compressions: ~7% smaller than the default v1.0 file format, and no slower;
// DUCKDB_STORAGE=v1.0.0 selects the default). Default settings otherwise:
// threads = number of CPUs, automatic compression, insertion order preserved.
'use strict';

const { DuckDBInstance } = require('@duckdb/node-api');

const COLUMNS = {
  Timestamp: 'TIMESTAMP_NS',
  TraceId: 'VARCHAR',
  SpanId: 'VARCHAR',
  TraceFlags: 'UTINYINT',
  SeverityText: 'VARCHAR',
  SeverityNumber: 'INTEGER',
  ServiceName: 'VARCHAR',
  Body: 'VARCHAR',
  ResourceSchemaUrl: 'VARCHAR',
  ResourceAttributes: 'MAP(VARCHAR, VARCHAR)',
  ScopeSchemaUrl: 'VARCHAR',
  ScopeName: 'VARCHAR',
  ScopeVersion: 'VARCHAR',
  ScopeAttributes: 'MAP(VARCHAR, VARCHAR)',
  LogAttributes: 'MAP(VARCHAR, VARCHAR)',
};

function sqlString(s) {
  return "'" + String(s).replace(/'/g, "''") + "'";
}

async function main() {
  const [file, db] = process.argv.slice(2);
  if (!file || !db) {
    console.error('usage: node duckdb-load.cjs FILE.ndjson DB.duckdb');
    process.exit(2);
  }
  const cols = '{' + Object.entries(COLUMNS)
    .map(([k, v]) => `${sqlString(k)}: ${sqlString(v)}`).join(', ') + '}';
  const inst = await DuckDBInstance.create(db, {
    storage_compatibility_version: process.env.DUCKDB_STORAGE || 'latest',
  });
  const con = await inst.connect();
  const t0 = process.hrtime.bigint();
  await con.run(`CREATE TABLE logs AS SELECT * FROM read_json(${sqlString(file)},
      format = 'newline_delimited', columns = ${cols})`);
  await con.run('CHECKPOINT');
  const loadS = Number(process.hrtime.bigint() - t0) / 1e9;
  const one = async (q) => (await con.runAndReadAll(q)).getRows()[0];
  const [version, threads] = await one("SELECT version(), current_setting('threads')");
  const [rows] = await one('SELECT count(*) FROM logs');
  con.closeSync();
  inst.closeSync();
  console.log(JSON.stringify({ version, threads: Number(threads), rows: Number(rows), load_s: loadS }));
}

main().catch((e) => {
  console.error(`duckdb-load: ${e && e.message ? e.message : e}`);
  process.exit(1);
});
