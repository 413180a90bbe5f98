// otel_logs.js URL - the OpenTelemetry JS SDK's OTLP log exporters (npm
// @opentelemetry/exporter-logs-otlp-proto and -http) against quarry serve
// --http: 20 records each, services js-proto and js-http, into table
// otel_js (X-Quarry-Table); every export must report success. Prints one
// summary line for tests/e2e/http.sh.
const { LoggerProvider, BatchLogRecordProcessor } = require('@opentelemetry/sdk-logs');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { OTLPLogExporter: ProtoExporter } = require('@opentelemetry/exporter-logs-otlp-proto');
const { OTLPLogExporter: HttpExporter } = require('@opentelemetry/exporter-logs-otlp-http');

async function run(service, Exporter, sev, sevText) {
  const exporter = new Exporter({ url: process.argv[2] + '/v1/logs', headers: { 'X-Quarry-Table': 'otel_js' } });
  const codes = [];
  const checked = {
    export(logs, done) {
      exporter.export(logs, (res) => { codes.push(res.code === 0 ? 'ok' : String(res.error)); done(res); });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => (exporter.forceFlush ? exporter.forceFlush() : Promise.resolve()),
  };
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    processors: [new BatchLogRecordProcessor({ exporter: checked, maxExportBatchSize: 8 })],
  });
  const logger = provider.getLogger('e2e', '1.0.0');
  for (let i = 0; i < 20; i++)
    logger.emit({ severityNumber: sev, severityText: sevText, body: `${service} record ${i}`, attributes: { i } });
  await provider.forceFlush();
  await provider.shutdown();
  if (codes.length === 0 || codes.some((c) => c !== 'ok')) throw new Error(`${service}: ${codes.join(', ')}`);
}

async function main() {
  await run('js-proto', ProtoExporter, 13, 'WARN');
  await run('js-http', HttpExporter, 9, 'INFO');
  console.log('otel: proto ok, http ok');
}
main().catch((e) => { console.error(e && e.stack ? e.stack : e); process.exit(1); });
