/* plan.h - what evaluation chose, node by node of a filter tree, summed
 * over the segments a search compiled it in: how each node found its rows
 * (postings, a dense word's bitmap, bitmap algebra, leapfrog, a heap, a
 * range index run, a column scan, ...), how many terms a multi-term node
 * matched, how many column blocks a scan read or skipped by min/max, and
 * how scoring went (term at a time, dense bitmaps, block-max). `quarry
 * search --explain` prints it now; EXPLAIN will.
 *
 * Recording is off unless a run has a plan (qr_qrun.plan): then the tree
 * compiler and the scorers call qr_plan_way/qr_plan_at, a linear lookup by
 * node over a handful of nodes, once per node and segment. One plan per
 * worker (no locks); qr_plan_merge sums them. The plan points at the tree's
 * nodes: the tree outlives it. */
#ifndef QR_PLAN_H
#define QR_PLAN_H

#include <stdint.h>

#include "query/query.h"
#include "util/buf.h"

#define QR_PLAN_WAYS 6

typedef struct qr_plan_node {
    const qr_query *q;
    uint32_t segments;   /* segments it was compiled in */
    uint64_t est_rows;   /* the iterators' cost summed: rows it may match */
    uint64_t terms;      /* multi-term and range-index nodes: terms matched */
    uint64_t dict_blocks; /* multi-term nodes: dictionary blocks their walks entered */
    uint64_t blocks_read, blocks_skipped; /* column scans: blocks by min/max */
    struct {
        const char *name; /* static text */
        uint32_t n;       /* segments that went this way */
    } way[QR_PLAN_WAYS];
} qr_plan_node;

typedef struct qr_plan {
    uint32_t n, cap;
    qr_plan_node *v; /* malloc'ed */
    int oom;         /* a node could not be added: the plan is partial */
} qr_plan;

void qr_plan_init(qr_plan *p);
void qr_plan_free(qr_plan *p);
/* q's entry (added on first use; NULL when p is NULL or memory ran out). */
qr_plan_node *qr_plan_at(qr_plan *p, const qr_query *q);
/* Count one segment of q going the way `name` (a static string). */
void qr_plan_way(qr_plan *p, const qr_query *q, const char *name);
void qr_plan_merge(qr_plan *into, const qr_plan *from);
/* The tree, indented, each node with what the plan says of it. */
void qr_plan_print(const qr_plan *p, const qr_query *tree, qr_buf *out);

#endif
