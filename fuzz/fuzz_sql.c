/* fuzz_sql.c - libFuzzer target for the SQL front end: any text parses,
 * binds against an OpenTelemetry table and plans, or fails with a SQLSTATE
 * and a message; never a crash or a leak (parse trees, rewritten text and
 * the binder's arena are all freed). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static qr_catalog cat;
    if (!cat.ntables) {
        cat.tables = malloc(sizeof *cat.tables);
        cat.tables[0] = qr_tabdef_otel("logs");
        cat.ntables = 1;
    }
    qr_err e;
    qr_err_clear(&e);
    if (qr_sql_check(&cat, (const char *)data, size, &e) != 0 && (!e.msg[0] || !e.code[0]))
        abort(); /* a failure always says why, with a code */
    return 0;
}
