/* parse.c - SQL text to libpg_query's protobuf parse tree: the list-literal
 * rewrite (pg_query_scan tokens), the parse, and mapping the tree's byte
 * locations back to character positions of the user's text. */
#include "sql/parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

#define SQL_MAX_TEXT (1u << 20)

/* 1 when a '[' after this token starts a list literal rather than a
 * subscript: after '(', ',' or an operator. */
static int opens_list(PgQuery__Token t)
{
    switch ((int)t) {
    case '(':
    case ',':
    case '+':
    case '-':
    case '*':
    case '/':
    case '%':
    case '^':
    case '<':
    case '>':
    case '=':
    case PG_QUERY__TOKEN__Op:
    case PG_QUERY__TOKEN__LESS_EQUALS:
    case PG_QUERY__TOKEN__GREATER_EQUALS:
    case PG_QUERY__TOKEN__NOT_EQUALS:
        return 1;
    default:
        return 0;
    }
}

/* Tokens that can each add a level to the parse tree (an operator of a
 * left-deep chain, a NOT, a CASE, a cast, an opening parenthesis). libpg_query's
 * own output of a tree recurses per level and overflows the stack past a
 * few tens of thousands of them, before any depth could be measured. */
#define SQL_MAX_OPERATORS 20000

static int deepening(int t)
{
    return (t < 128 && t > 0 && strchr("+-*/%^<>=|(", t)) || t == PG_QUERY__TOKEN__Op ||
           t == PG_QUERY__TOKEN__TYPECAST || t == PG_QUERY__TOKEN__LESS_EQUALS ||
           t == PG_QUERY__TOKEN__GREATER_EQUALS || t == PG_QUERY__TOKEN__NOT_EQUALS ||
           t == PG_QUERY__TOKEN__EQUALS_GREATER || t == PG_QUERY__TOKEN__NOT ||
           t == PG_QUERY__TOKEN__CASE;
}

/* The rewritten text, and the insertion table. -1 when out of memory or
 * past SQL_MAX_OPERATORS (54001); a text the scanner rejects is left as it
 * is (the parser reports it). */
static int rewrite_lists(qr_sqlparse *p, const char *src, qr_err *e)
{
    PgQueryScanResult sr = pg_query_scan(src);
    PgQuery__ScanResult *toks = NULL;
    if (!sr.error)
        toks = pg_query__scan_result__unpack(NULL, sr.pbuf.len, (const uint8_t *)sr.pbuf.data);
    uint32_t cap = 0, deep = 0;
    if (toks)
        for (size_t i = 0; i < toks->n_tokens; i++) {
            deep += (uint32_t)deepening(toks->tokens[i]->token);
            if (i && toks->tokens[i]->token == '[' && opens_list(toks->tokens[i - 1]->token))
                cap++;
        }
    if (deep > SQL_MAX_OPERATORS) {
        if (toks)
            pg_query__scan_result__free_unpacked(toks, NULL);
        pg_query_free_scan_result(sr);
        return qr_errf(e, QR_E_STACK_DEPTH,
                       "statement too complex: %u operators, parentheses and NOTs (at most %d)",
                       deep, SQL_MAX_OPERATORS);
    }
    int rc = 0;
    p->len = p->orig_len + 5u * cap;
    p->text = malloc(p->len + 1);
    p->ins = malloc(sizeof *p->ins * (cap ? cap : 1));
    if (!p->text || !p->ins) {
        rc = qr_errf(e, QR_E_NOMEM, "out of memory parsing SQL");
    } else {
        size_t w = 0, r = 0;
        for (size_t i = 1; toks && i < toks->n_tokens; i++) {
            const PgQuery__ScanToken *t = toks->tokens[i];
            if (t->token != '[' || !opens_list(toks->tokens[i - 1]->token))
                continue;
            size_t at = (size_t)t->start;
            memcpy(p->text + w, src + r, at - r);
            w += at - r;
            memcpy(p->text + w, "ARRAY", 5);
            w += 5;
            r = at;
            p->ins[p->nins++] = (uint32_t)at;
        }
        memcpy(p->text + w, src + r, p->orig_len - r);
        p->text[p->len] = 0;
    }
    if (toks)
        pg_query__scan_result__free_unpacked(toks, NULL);
    pg_query_free_scan_result(sr);
    return rc;
}

int64_t qr_sqlp_origoff(const qr_sqlparse *p, int32_t loc)
{
    if (loc < 0)
        return -1;
    int64_t off = loc;
    for (uint32_t i = 0; i < p->nins; i++) {
        int64_t at = (int64_t)p->ins[i] + 5 * (int64_t)i; /* where "ARRAY" starts, rewritten */
        if (loc < at)
            break;
        if (loc < at + 5)
            return p->ins[i]; /* on the inserted keyword: its '[' */
        off -= 5;
    }
    if (off > (int64_t)p->orig_len)
        off = (int64_t)p->orig_len;
    return off;
}

int qr_sqlp_charpos(const qr_sqlparse *p, int32_t loc)
{
    int64_t off = qr_sqlp_origoff(p, loc);
    if (off < 0)
        return 0;
    int n = 1;
    for (int64_t i = 0; i < off; i++)
        n += ((unsigned char)p->orig[i] & 0xC0) != 0x80;
    return n;
}

int qr_sqlp_at(const qr_sqlparse *p, int32_t loc, qr_err *e)
{
    int pos = qr_sqlp_charpos(p, loc);
    if (pos > 0 && e) {
        size_t l = strlen(e->msg);
        snprintf(e->msg + l, sizeof e->msg - l, " at character %d", pos);
    }
    return -1;
}

/* A rewritten-text character position (PostgreSQL's cursorpos, 1-based) as
 * a byte location of the rewritten text. */
static int32_t cursor_to_loc(const qr_sqlparse *p, int cursorpos)
{
    int chars = 1;
    size_t i = 0;
    for (; i < p->len && chars < cursorpos; i++)
        if (((unsigned char)p->text[i + 1] & 0xC0) != 0x80)
            chars++;
    while (i < p->len && ((unsigned char)p->text[i] & 0xC0) == 0x80)
        i++;
    return (int32_t)i;
}

/* protobuf-c unpacks a tree by recursion, one C frame or two per level,
 * and libpg_query gives a left-deep tree for `1 + 1 + 1 ...`: a statement
 * of a few thousand operators would overflow the stack. The packed bytes'
 * nesting is measured first, without recursion, through the messages'
 * descriptors. */
#define SQL_MAX_DEPTH 1000

static int rd_varint(const uint8_t *b, size_t n, size_t *at, uint64_t *v)
{
    *v = 0;
    for (int sh = 0; sh < 64 && *at < n; sh += 7) {
        uint8_t c = b[(*at)++];
        *v |= (uint64_t)(c & 0x7f) << sh;
        if (!(c & 0x80))
            return 0;
    }
    return -1;
}

static int depth_ok(const uint8_t *b, size_t n)
{
    struct {
        size_t end;
        const ProtobufCMessageDescriptor *d;
    } st[SQL_MAX_DEPTH + 1];
    int top = 0;
    st[0].end = n;
    st[0].d = &pg_query__parse_result__descriptor;
    size_t at = 0;
    while (at < n) {
        while (top > 0 && at >= st[top].end)
            top--;
        uint64_t key, v;
        if (rd_varint(b, st[top].end, &at, &key) != 0)
            return 1; /* malformed: unpack will say so */
        switch (key & 7) {
        case 0:
            if (rd_varint(b, st[top].end, &at, &v) != 0)
                return 1;
            break;
        case 1:
            at += 8;
            break;
        case 5:
            at += 4;
            break;
        case 2: {
            if (rd_varint(b, st[top].end, &at, &v) != 0 || v > st[top].end - at)
                return 1;
            const ProtobufCFieldDescriptor *f =
                protobuf_c_message_descriptor_get_field(st[top].d, (unsigned)(key >> 3));
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                if (top == SQL_MAX_DEPTH)
                    return 0;
                top++;
                st[top].end = at + v;
                st[top].d = f->descriptor;
            } else {
                at += v;
            }
            break;
        }
        default:
            return 1;
        }
    }
    return 1;
}

int qr_sqlp_parse(qr_sqlparse *p, const char *sql, size_t n, qr_err *e)
{
    memset(p, 0, sizeof *p);
    p->orig = sql;
    p->orig_len = n;
    if (n > SQL_MAX_TEXT)
        return qr_errf(e, QR_E_TOO_LONG, "SQL text of %zu bytes is over the limit of %u", n,
                       SQL_MAX_TEXT);
    if (memchr(sql, 0, n))
        return qr_errf(e, QR_E_SYNTAX, "SQL text holds a NUL byte at character %d",
                       (int)((const char *)memchr(sql, 0, n) - sql) + 1);
    char *src = malloc(n + 1);
    if (!src)
        return qr_errf(e, QR_E_NOMEM, "out of memory parsing SQL");
    memcpy(src, sql, n);
    src[n] = 0;
    int rc = rewrite_lists(p, src, e);
    free(src);
    if (rc != 0)
        return rc;
    PgQueryProtobufParseResult r = pg_query_parse_protobuf(p->text);
    if (r.error) {
        qr_errf(e, QR_E_SYNTAX, "%s", r.error->message);
        rc = r.error->cursorpos > 0 ? qr_sqlp_at(p, cursor_to_loc(p, r.error->cursorpos), e) : -1;
    } else if (!depth_ok((const uint8_t *)r.parse_tree.data, r.parse_tree.len)) {
        rc = qr_errf(e, QR_E_STACK_DEPTH,
                     "statement nested too deeply (more than %d levels: a chain of thousands of "
                     "operators or parentheses)",
                     SQL_MAX_DEPTH);
    } else {
        p->tree = pg_query__parse_result__unpack(NULL, r.parse_tree.len,
                                                 (const uint8_t *)r.parse_tree.data);
        if (!p->tree)
            rc = qr_errf(e, QR_E_NOMEM, "out of memory unpacking the SQL parse tree");
    }
    pg_query_free_protobuf_parse_result(r);
    return rc;
}

void qr_sqlp_free(qr_sqlparse *p)
{
    if (p->tree)
        pg_query__parse_result__free_unpacked(p->tree, NULL);
    free(p->text);
    free(p->ins);
    memset(p, 0, sizeof *p);
}
