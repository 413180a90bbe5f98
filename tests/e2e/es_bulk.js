// es_bulk.js URL - the official Elasticsearch client (npm @elastic/elasticsearch
// 8) against quarry serve --http: helpers.bulk with 100 create actions with
// ids (none dropped), then bulk() with an id-less index, a new create and a
// create of an id the helper stored (a 409 conflict). Prints one summary
// line for tests/e2e/http.sh.
const { Client } = require('@elastic/elasticsearch');

async function main() {
  const client = new Client({ node: process.argv[2], requestTimeout: 20000, maxRetries: 0 });
  const docs = Array.from({ length: 100 }, (_, i) => ({
    '@timestamp': new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
    src: 'es',
    n: i,
  }));
  let dropped = 0;
  const r = await client.helpers.bulk({
    datasource: docs,
    flushBytes: 2000, // several requests
    onDocument: (doc) => ({ create: { _index: 'es_docs', _id: 'h' + doc.n } }),
    onDrop: () => { dropped++; },
  });
  if (r.successful !== 100 || r.failed !== 0 || dropped !== 0)
    throw new Error('helper: ' + JSON.stringify(r));
  const b = await client.bulk({
    operations: [
      { index: { _index: 'es_docs' } },
      { '@timestamp': '2025-01-01T01:00:00Z', src: 'es', n: 1000 },
      { create: { _index: 'es_docs', _id: 'b1' } },
      { '@timestamp': '2025-01-01T01:00:01Z', src: 'es', n: 1001 },
      { create: { _index: 'es_docs', _id: 'h0' } },
      { '@timestamp': '2025-01-01T01:00:02Z', src: 'es', n: 1002 },
    ],
  });
  const st = b.items.map((it) => Object.values(it)[0].status);
  const created = st.filter((s) => s === 201).length;
  const conflicts = st.filter((s) => s === 409).length;
  if (!b.errors) throw new Error('bulk: errors should be true');
  console.log(`es: helper ${r.successful} ok, bulk ${created} created ${conflicts} conflict`);
}
main().catch((e) => { console.error(e && e.stack ? e.stack : e); process.exit(1); });
