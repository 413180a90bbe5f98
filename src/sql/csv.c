/* csv.c - a byte-at-a-time state machine for COPY's CSV and text records
 * (csv.h), so that a chunk boundary may fall anywhere. */
#include "sql/csv.h"

#include <stdlib.h>
#include <string.h>

#define QR_E_COPY_FORMAT "22P04" /* bad copy file format */

enum { ST_START, ST_UNQUOTED, ST_QUOTED, ST_QUOTE_IN_QUOTED, ST_CR, ST_ESC, ST_OCTAL };

void qr_rec_init(qr_recparser *rp, int csv, char delim, const char *null_str)
{
    memset(rp, 0, sizeof *rp);
    rp->csv = csv;
    rp->delim = delim;
    rp->null_str = null_str ? null_str : "";
    qr_buf_init(&rp->rec);
    rp->line = 1;
    rp->rec_line = 1;
}

void qr_rec_free(qr_recparser *rp)
{
    qr_buf_free(&rp->rec);
    free(rp->end);
    free(rp->flags);
    memset(rp, 0, sizeof *rp);
}

int qr_rec_field(const qr_recparser *rp, uint32_t i, const char **p, size_t *n)
{
    uint32_t from = i ? rp->end[i - 1] : 0;
    *p = rp->rec.p ? (const char *)rp->rec.p + from : ""; /* no byte yet: empty */
    *n = rp->end[i] - from;
    if (rp->flags[i] & 2)
        return 1;
    if (rp->csv && !(rp->flags[i] & 1) && *n == strlen(rp->null_str) &&
        !memcmp(*p, rp->null_str, *n))
        return 1;
    return 0;
}

static int grow(qr_recparser *rp, qr_err *e)
{
    uint32_t nc = rp->cap ? rp->cap * 2 : 64;
    uint32_t *ne = realloc(rp->end, sizeof *ne * nc);
    if (ne)
        rp->end = ne;
    uint8_t *nf = ne ? realloc(rp->flags, nc) : NULL;
    if (!nf)
        return qr_errf(e, QR_E_NOMEM, "out of memory reading a record");
    rp->flags = nf;
    rp->cap = nc;
    return 0;
}

/* Open field nfields (its flags cleared) if not open yet. */
static int field_open(qr_recparser *rp, qr_err *e)
{
    if (rp->nfields == rp->cap && grow(rp, e) != 0)
        return -1;
    rp->flags[rp->nfields] = 0;
    return 0;
}

static int field_end(qr_recparser *rp)
{
    rp->end[rp->nfields++] = (uint32_t)rp->rec.len;
    return 0;
}

static int record_end(qr_recparser *rp, qr_rec_fn fn, void *arg, qr_err *e)
{
    field_end(rp);
    int rc = 0;
    const char *p;
    size_t n;
    int blank = rp->nfields == 1 && rp->end[0] == 0 && !(rp->flags[0] & 3);
    if (rp->nfields == 1 && !(rp->flags[0] & 1) && (qr_rec_field(rp, 0, &p, &n), 1) &&
        ((rp->csv && n == 2 && !memcmp(p, "\\.", 2)) || (!rp->csv && (rp->flags[0] & 4) && n == 0)))
        rp->done = 1; /* end-of-data marker */
    else if (!blank)
        rc = fn(arg, rp, e);
    qr_buf_clear(&rp->rec);
    rp->nfields = 0;
    rp->in_record = 0;
    rp->state = ST_START;
    return rc;
}

static int bad(qr_recparser *rp, qr_err *e, const char *why)
{
    return qr_errf(e, QR_E_COPY_FORMAT, "line %llu: %s", (unsigned long long)rp->line, why);
}

int qr_rec_feed(qr_recparser *rp, const char *p, size_t n, qr_rec_fn fn, void *arg, qr_err *e)
{
    for (size_t i = 0; i < n && !rp->done; i++) {
        char c = p[i];
        if (!rp->in_record) {
            rp->in_record = 1;
            rp->rec_line = rp->line;
            if (field_open(rp, e) != 0)
                return -1;
        }
        switch (rp->state) {
        case ST_CR:
            rp->state = rp->csv ? ST_UNQUOTED : ST_START;
            if (c == '\n') {
                rp->line++;
                if (record_end(rp, fn, arg, e) != 0)
                    return -1;
                continue;
            }
            qr_buf_put_u8(&rp->rec, '\r'); /* a lone CR is data */
            i--;                           /* read c again */
            continue;
        case ST_QUOTED:
            if (c == '"')
                rp->state = ST_QUOTE_IN_QUOTED;
            else {
                if (c == '\n')
                    rp->line++;
                qr_buf_put_u8(&rp->rec, (uint8_t)c);
            }
            continue;
        case ST_QUOTE_IN_QUOTED:
            if (c == '"') {
                qr_buf_put_u8(&rp->rec, '"');
                rp->state = ST_QUOTED;
                continue;
            }
            if (c != rp->delim && c != '\n' && c != '\r')
                return bad(rp, e, "text after the closing quote of a field");
            rp->state = ST_UNQUOTED; /* c ends the field below */
            break;
        case ST_OCTAL:
            if (c >= '0' && c <= '7' && rp->oct_digits < 3) {
                rp->oct = rp->oct * 8 + (c - '0');
                rp->oct_digits++;
                continue;
            }
            qr_buf_put_u8(&rp->rec, (uint8_t)rp->oct);
            rp->state = ST_UNQUOTED;
            break; /* c is read as usual */
        case ST_ESC:
            rp->state = ST_UNQUOTED;
            if (c >= '0' && c <= '7') { /* \ooo: one byte in octal */
                rp->oct = c - '0';
                rp->oct_digits = 1;
                rp->state = ST_OCTAL;
                continue;
            }
            switch (c) {
            case 'N':
                rp->flags[rp->nfields] |= 2;
                continue;
            case '.':
                if (rp->nfields == 0 && rp->rec.len == 0)
                    rp->flags[rp->nfields] |= 4;
                continue;
            case 't':
                c = '\t';
                break;
            case 'n':
                c = '\n';
                break;
            case 'r':
                c = '\r';
                break;
            case 'b':
                c = '\b';
                break;
            case 'f':
                c = '\f';
                break;
            case 'v':
                c = '\v';
                break;
            default:
                break;
            }
            qr_buf_put_u8(&rp->rec, (uint8_t)c);
            continue;
        default:
            break;
        }
        /* ST_START or ST_UNQUOTED */
        if (c == rp->delim) {
            field_end(rp);
            if (field_open(rp, e) != 0)
                return -1;
            rp->state = ST_START;
        } else if (c == '\n') {
            rp->line++;
            if (record_end(rp, fn, arg, e) != 0)
                return -1;
        } else if (c == '\r') {
            rp->state = ST_CR;
        } else if (rp->csv && c == '"') {
            if (rp->state != ST_START)
                return bad(rp, e, "a quote inside an unquoted field (quote the whole field)");
            rp->flags[rp->nfields] |= 1;
            rp->state = ST_QUOTED;
        } else if (!rp->csv && c == '\\') {
            rp->state = ST_ESC;
        } else {
            qr_buf_put_u8(&rp->rec, (uint8_t)c);
            rp->state = ST_UNQUOTED;
        }
    }
    if (rp->rec.len > QR_REC_MAX)
        return qr_errf(e, QR_E_TOO_LONG, "line %llu: a record longer than %u bytes",
                       (unsigned long long)rp->rec_line, QR_REC_MAX);
    return rp->rec.oom ? qr_errf(e, QR_E_NOMEM, "out of memory reading a record") : 0;
}

int qr_rec_finish(qr_recparser *rp, qr_rec_fn fn, void *arg, qr_err *e)
{
    if (rp->done || !rp->in_record)
        return 0;
    if (rp->state == ST_QUOTED)
        return qr_errf(e, QR_E_COPY_FORMAT, "line %llu: a quoted field is not closed",
                       (unsigned long long)rp->rec_line);
    if (rp->state == ST_CR)
        rp->state = ST_START;
    if (rp->state == ST_OCTAL)
        qr_buf_put_u8(&rp->rec, (uint8_t)rp->oct);
    return record_end(rp, fn, arg, e);
}
