/* fuzz_query.c - libFuzzer target for the search syntax parser: any text
 * parses or fails with a message naming a byte, and a parsed tree prints
 * back without a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "query/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    qr_arena a;
    qr_arena_init(&a, 1 << 12, 64u << 20);
    qr_err e;
    qr_err_clear(&e);
    qr_query *q = qr_query_parse(copy, size, &a, &e);
    if (q) {
        char buf[1024];
        qr_query_print(q, buf, sizeof buf);
    } else if (!e.msg[0]) {
        abort(); /* a failure always says why */
    }
    qr_arena_free(&a);
    free(copy);
    return 0;
}
