/* err.c - formatting of qr_err messages (see err.h). */
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int qr_errf(qr_err *e, const char *code, const char *fmt, ...)
{
    if (!e)
        return -1;
    snprintf(e->code, sizeof e->code, "%s", code);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int qr_err_prefix(qr_err *e, const char *fmt, ...)
{
    if (!e)
        return -1;
    char pre[QR_ERR_MSG_MAX], old[QR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, e->msg, sizeof old);
    size_t np = strlen(pre), no = strlen(old);
    if (np > sizeof e->msg - 1)
        np = sizeof e->msg - 1;
    if (no > sizeof e->msg - 1 - np)
        no = sizeof e->msg - 1 - np;
    memcpy(e->msg, pre, np);
    memcpy(e->msg + np, old, no);
    e->msg[np + no] = 0;
    return -1;
}

int qr_err_is_input_fault(const qr_err *e)
{
    if (!e)
        return 0;
    /* 22 data exception, 23 integrity constraint (NOT NULL), 42 syntax or
     * access rule (wrong type, unknown column) */
    return (e->code[0] == '2' && (e->code[1] == '2' || e->code[1] == '3')) ||
           (e->code[0] == '4' && e->code[1] == '2');
}
