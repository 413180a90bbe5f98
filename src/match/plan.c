/* plan.c - recording and printing what evaluation chose (see plan.h). */
#include "match/plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void qr_plan_init(qr_plan *p) { memset(p, 0, sizeof *p); }

void qr_plan_free(qr_plan *p)
{
    free(p->v);
    memset(p, 0, sizeof *p);
}

qr_plan_node *qr_plan_at(qr_plan *p, const qr_query *q)
{
    if (!p)
        return NULL;
    for (uint32_t i = 0; i < p->n; i++)
        if (p->v[i].q == q)
            return &p->v[i];
    if (p->n == p->cap) {
        uint32_t nc = p->cap ? p->cap * 2 : 16;
        qr_plan_node *nv = realloc(p->v, sizeof *nv * nc);
        if (!nv) {
            p->oom = 1;
            return NULL;
        }
        p->v = nv;
        p->cap = nc;
    }
    qr_plan_node *n = &p->v[p->n++];
    memset(n, 0, sizeof *n);
    n->q = q;
    return n;
}

static void add_way(qr_plan_node *n, const char *name, uint32_t count)
{
    for (int i = 0; i < QR_PLAN_WAYS; i++) {
        if (n->way[i].name && strcmp(n->way[i].name, name) != 0)
            continue;
        n->way[i].name = name;
        n->way[i].n += count;
        return;
    }
    /* more ways than slots: the last one says "other" */
    n->way[QR_PLAN_WAYS - 1].name = "other";
    n->way[QR_PLAN_WAYS - 1].n += count;
}

void qr_plan_way(qr_plan *p, const qr_query *q, const char *name)
{
    qr_plan_node *n = qr_plan_at(p, q);
    if (n && name)
        add_way(n, name, 1);
}

void qr_plan_merge(qr_plan *into, const qr_plan *from)
{
    into->oom |= from->oom;
    for (uint32_t i = 0; i < from->n; i++) {
        const qr_plan_node *f = &from->v[i];
        qr_plan_node *n = qr_plan_at(into, f->q);
        if (!n)
            return;
        n->segments += f->segments;
        n->est_rows += f->est_rows;
        n->terms += f->terms;
        n->dict_blocks += f->dict_blocks;
        n->blocks_read += f->blocks_read;
        n->blocks_skipped += f->blocks_skipped;
        for (int w = 0; w < QR_PLAN_WAYS && f->way[w].name; w++)
            add_way(n, f->way[w].name, f->way[w].n);
    }
}

static const qr_plan_node *find(const qr_plan *p, const qr_query *q)
{
    for (uint32_t i = 0; i < p->n; i++)
        if (p->v[i].q == q)
            return &p->v[i];
    return NULL;
}

static void label(const qr_query *q, char *buf, size_t size)
{
    switch (q->type) {
    case Q_AND:
        snprintf(buf, size, "AND");
        return;
    case Q_OR:
        snprintf(buf, size, "OR");
        return;
    case Q_NOT:
        snprintf(buf, size, "NOT");
        return;
    case Q_MINMATCH:
        snprintf(buf, size, "atleast(%u)", q->k);
        return;
    default:
        qr_query_print(q, buf, size);
    }
}

static void print_node(const qr_plan *p, const qr_query *q, int depth, qr_buf *out)
{
    char text[256], line[768];
    label(q, text, sizeof text);
    int at = snprintf(line, sizeof line, "%*s%s", depth * 2, "", text);
    const qr_plan_node *n = find(p, q);
    if (n && (n->segments || n->way[0].name)) {
        at += snprintf(line + at, sizeof line - (size_t)at, "  [");
        for (int w = 0; w < QR_PLAN_WAYS && n->way[w].name && at < (int)sizeof line; w++)
            at += snprintf(line + at, sizeof line - (size_t)at, "%s%s %u", w ? ", " : "",
                           n->way[w].name, n->way[w].n);
        if (n->terms && at < (int)sizeof line)
            at += snprintf(line + at, sizeof line - (size_t)at, "; %" PRIu64 " terms", n->terms);
        if (n->dict_blocks && at < (int)sizeof line)
            at += snprintf(line + at, sizeof line - (size_t)at,
                           " from %" PRIu64 " dictionary blocks", n->dict_blocks);
        if ((n->blocks_read || n->blocks_skipped) && at < (int)sizeof line)
            at += snprintf(line + at, sizeof line - (size_t)at,
                           "; column blocks %" PRIu64 " read, %" PRIu64 " skipped by min/max",
                           n->blocks_read, n->blocks_skipped);
        if (n->segments && at < (int)sizeof line)
            at += snprintf(line + at, sizeof line - (size_t)at, "; <= %" PRIu64 " rows",
                           n->est_rows);
        if (at < (int)sizeof line)
            at += snprintf(line + at, sizeof line - (size_t)at, "]");
    } else if (!n && depth == 0) {
        at += snprintf(line + at, sizeof line - (size_t)at, "  [not evaluated]");
    }
    if (at >= (int)sizeof line)
        at = (int)sizeof line - 1;
    qr_buf_put(out, line, (size_t)at);
    qr_buf_put(out, "\n", 1);
    if (q->type == Q_AND || q->type == Q_OR || q->type == Q_NOT || q->type == Q_MINMATCH)
        for (uint32_t i = 0; i < q->n; i++)
            print_node(p, q->kids[i], depth + 1, out);
}

void qr_plan_print(const qr_plan *p, const qr_query *tree, qr_buf *out)
{
    print_node(p, tree, 0, out);
    if (p->oom)
        qr_buf_put(out, "(plan incomplete: out of memory recording it)\n", 46);
}
