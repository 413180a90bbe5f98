/* schema.c - the column table of the OpenTelemetry log schema. */
#include "format/schema.h"

#include <string.h>

const qr_col_def qr_schema[COL_COUNT] = {
    [COL_TIMESTAMP] = {"Timestamp", TYPE_TIMESTAMP, 0},
    [COL_TRACE_ID] = {"TraceId", TYPE_HEXID, 16},
    [COL_SPAN_ID] = {"SpanId", TYPE_HEXID, 8},
    [COL_TRACE_FLAGS] = {"TraceFlags", TYPE_UINT8, 0},
    [COL_SEVERITY_TEXT] = {"SeverityText", TYPE_STRING, 0},
    [COL_SEVERITY_NUMBER] = {"SeverityNumber", TYPE_INT32, 0},
    [COL_SERVICE_NAME] = {"ServiceName", TYPE_STRING, 0},
    [COL_BODY] = {"Body", TYPE_STRING, 0},
    [COL_RESOURCE_SCHEMA_URL] = {"ResourceSchemaUrl", TYPE_STRING, 0},
    [COL_RESOURCE_ATTRIBUTES] = {"ResourceAttributes", TYPE_MAP, 0},
    [COL_SCOPE_SCHEMA_URL] = {"ScopeSchemaUrl", TYPE_STRING, 0},
    [COL_SCOPE_NAME] = {"ScopeName", TYPE_STRING, 0},
    [COL_SCOPE_VERSION] = {"ScopeVersion", TYPE_STRING, 0},
    [COL_SCOPE_ATTRIBUTES] = {"ScopeAttributes", TYPE_MAP, 0},
    [COL_LOG_ATTRIBUTES] = {"LogAttributes", TYPE_MAP, 0},
};

int qr_col_lookup(const char *name, size_t n)
{
    for (int i = 0; i < COL_COUNT; i++)
        if (strlen(qr_schema[i].name) == n && memcmp(qr_schema[i].name, name, n) == 0)
            return i;
    return -1;
}
