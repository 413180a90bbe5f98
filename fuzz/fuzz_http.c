/* fuzz_http.c - libFuzzer target for the HTTP layer's body parsers: the
 * first byte picks the _bulk parser (the rest cut into lines as the
 * listener cuts them, then the end-of-body check), the OTLP protobuf
 * decoder or the OTLP JSON decoder. Every row a decoder makes must be one
 * JSON object that the OpenTelemetry table's NDJSON parser either takes or
 * refuses with a reason (never a crash, never an internal error); every
 * _bulk item's source must lie inside its line. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/batch.h"
#include "http/http.h"
#include "ingest/ndjson.h"

static qr_tabdef *otel;
static qr_ndjson nj;
static qr_batch batch;

static int row(void *arg, const char *line, size_t n, qr_err *e)
{
    (void)arg;
    if (batch.nrows == batch.cap)
        qr_batch_clear(&batch);
    char *copy = malloc(n ? n : 1);
    memcpy(copy, line, n);
    int rc = qr_ndjson_parse(&nj, &batch, copy, n, e);
    if (rc < 0 && !qr_err_is_input_fault(e))
        abort();
    if (rc == 0)
        qr_batch_clear(&batch); /* the batch's strings point into copy */
    free(copy);
    return rc < 0 ? 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!otel) {
        qr_err e;
        otel = qr_tabdef_otel("otel_logs");
        if (!otel || qr_ndjson_init(&nj, otel, &e) != 0 || qr_batch_init(&batch, otel, 64, &e) != 0)
            abort();
    }
    if (size == 0)
        return 0;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    uint64_t recs, rej;
    qr_err e;
    switch (data[0] % 3) {
    case 0: {
        qh_bulk b;
        qh_bulk_init(&b);
        qh_bulk_item it;
        while (n) {
            const char *nl = memchr(p, '\n', n);
            size_t len = nl ? (size_t)(nl - p) : n;
            int r = qh_bulk_line(&b, p, len, &it, &e);
            if (r < 0)
                return 0;
            if (r == 1 && it.doc && (it.doc < p || it.doc + it.ndoc > p + len))
                abort();
            p += len + (nl ? 1 : 0);
            n -= len + (nl ? 1 : 0);
        }
        qh_bulk_finish(&b, &e);
        break;
    }
    case 1:
        if (qh_otlp_pb_rows((const uint8_t *)p, n, row, NULL, &recs, &rej, &e) == 0 && rej > recs)
            abort();
        break;
    default:
        if (qh_otlp_json_rows(p, n, row, NULL, &recs, &rej, &e) == 0 && rej > recs)
            abort();
        break;
    }
    return 0;
}
