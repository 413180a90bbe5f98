/* plan.c - choosing the scan for a bound SELECT, and EXPLAIN (plan.h). */
#include "sql/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "exec/aggregate.h"
#include "exec/join.h"
#include "search/topk.h"
#include "sql/run_int.h"

int qr_sql_plan(const qr_sqlsel *s, int *kind, qr_err *e)
{
    int has_bm25 = s->uses_score;
    for (uint32_t i = 0; i < s->nitems; i++)
        has_bm25 |= s->items[i].kind == QR_SI_BM25;
    int distinct = 0;
    for (uint32_t i = 0; i < s->naggs; i++)
        distinct |= s->aggs[i].distinct;
    int derived = 0;
    for (uint32_t r = 0; r < s->scope.n; r++)
        derived |= s->rng[r].sub != NULL;
    if (s->scope.n >= 2 || distinct || derived) {
        if (has_bm25)
            return qr_errf(e, QR_E_FEATURE, "bm25() is not available in a join or with "
                                            "count(DISTINCT)");
        *kind = QR_PLAN_JOIN;
        return 0;
    }
    if (!s->def) {
        *kind = QR_PLAN_CONST;
        return 0;
    }
    if (s->grouped) {
        int only_count = s->ngroup == 0 && !s->rest && !s->having && s->naggs == 1 &&
                         s->aggs[0].fn == QR_AGG_COUNT_STAR;
        for (uint32_t i = 0; i < s->nitems; i++)
            only_count &= s->items[i].x->kind == QR_EX_COL;
        *kind = only_count ? QR_PLAN_COUNT : QR_PLAN_AGGREGATE;
        return 0;
    }
    for (uint32_t i = 0; i < s->norder; i++)
        has_bm25 |= s->order[i].kind == QR_SO_BM25;
    if (s->norder == 0) {
        if (has_bm25)
            return qr_errf(e, QR_E_FEATURE,
                           "bm25() needs ORDER BY bm25() DESC LIMIT k in this version");
        *kind = QR_PLAN_FIRST;
        return 0;
    }
    const qr_sqlorder *o = &s->order[0];
    int by_score = s->norder == 1 && o->kind == QR_SO_BM25 && o->desc;
    int by_time = s->norder == 1 && o->kind == QR_SO_COL && o->col == s->def->sort_col && o->desc &&
                  !o->nulls_flip;
    if ((by_score || by_time) && s->limit != UINT64_MAX) {
        if (s->limit + s->offset > QR_TOPK_MAX || s->limit + s->offset < s->limit)
            return qr_errf(e, QR_E_TOO_LONG, "LIMIT + OFFSET with ORDER BY %s is at most %u",
                           by_score ? "bm25()" : "the sort column", QR_TOPK_MAX);
        *kind = by_score ? QR_PLAN_TOPK_SCORE : QR_PLAN_TOPK_TIME;
        return 0;
    }
    if (has_bm25)
        return qr_errf(e, QR_E_FEATURE,
                       "bm25() needs ORDER BY bm25() DESC LIMIT k (alone) in this version");
    *kind = QR_PLAN_SORT;
    return 0;
}

static void line(qr_buf *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(qr_buf *out, const char *fmt, ...)
{
    char t[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
    qr_buf_put(out, t, strlen(t));
    qr_buf_put_u8(out, '\n');
}

static void columns(const qr_sqlsel *s, char *t, size_t n)
{
    size_t w = 0;
    t[0] = 0;
    qr_binder b = {0};
    b.def = s->def;
    b.scope = s->def ? NULL : &s->scope;
    for (uint32_t i = 0; i < s->nitems && w + 1 < n; i++)
        if (s->items[i].kind == QR_SI_COL)
            w += (size_t)snprintf(t + w, n - w, "%s%s", w ? ", " : "",
                                  qr_bind_coldef(&b, s->items[i].col)->name);
    if (!w)
        snprintf(t, n, "(none)");
}

static void analyze_lines(const qr_sqlsel *s, int kind, qr_buf *out)
{
    const qr_sqlstats *st = s->stats;
    line(out, "Execution: %.3f ms, %llu row%s out", (double)st->t_total / 1e6,
         (unsigned long long)st->out, st->out == 1 ? "" : "s");
    if (kind == QR_PLAN_JOIN && st->termjoin) {
        char map[64];
        if (st->tj_map_built)
            snprintf(map, sizeof map, "built in %.3f ms", (double)st->tj_map_ns / 1e6);
        else
            snprintf(map, sizeof map, "cached");
        if (st->tj_grouped)
            line(out,
                 "  keys counted by ordinal, rows weighed by group: %.3f ms; key map %s, %llu "
                 "keys in several segments%s",
                 (double)st->t_join[1] / 1e6, map, (unsigned long long)st->tj_shared,
                 st->tj_terms ? "" : "; no term read");
        else
            line(out,
                 "  keys counted by ordinal: %.3f ms; key map %s, %llu keys in several segments; "
                 "%llu keys settled in their segment, %llu summed across segments%s",
                 (double)st->t_join[1] / 1e6, map, (unsigned long long)st->tj_shared,
                 (unsigned long long)st->tj_settled, (unsigned long long)st->tj_summed,
                 st->tj_terms ? "" : "; no term read");
        if (st->tj_terms)
            line(out, "  key residuals: %llu terms read", (unsigned long long)st->tj_terms);
        if (st->tj_distinct)
            line(out, "  rows with a key: %llu; %llu distinct keys",
                 (unsigned long long)st->ent_rows[0], (unsigned long long)st->tj_keys);
        else if (st->tj_grouped)
            line(out, "  rows with a key: %llu and %llu; %llu joined rows",
                 (unsigned long long)st->ent_rows[0], (unsigned long long)st->ent_rows[1],
                 (unsigned long long)st->join_rows[1]);
        else
            line(out, "  rows with a key: %llu and %llu; %llu keys on both sides, %llu joined rows",
                 (unsigned long long)st->ent_rows[0], (unsigned long long)st->ent_rows[1],
                 (unsigned long long)st->tj_keys, (unsigned long long)st->join_rows[1]);
        line(out, "  having, select list: %.3f ms", (double)st->t_post / 1e6);
        return;
    }
    if (kind == QR_PLAN_JOIN) {
        for (uint32_t r = 0; r < st->nent && r < 8; r++) {
            const char *nm = s->scope.n ? (s->scope.r[r].alias ? s->scope.r[r].alias
                                                               : s->scope.r[r].relname)
                                        : s->def->name;
            line(out, "  scan %s: %.3f ms, %llu rows (after its residual)", nm,
                 (double)st->t_ent[r] / 1e6, (unsigned long long)st->ent_rows[r]);
            if (r > 0)
                line(out, "  join %s: %.3f ms, %llu joined rows", nm, (double)st->t_join[r] / 1e6,
                     (unsigned long long)st->join_rows[r]);
        }
        line(out, "  aggregate / project, sort, limit: %.3f ms", (double)st->t_post / 1e6);
        return;
    }
    if (kind == QR_PLAN_AGGREGATE) {
        line(out, "  scan + hash aggregate: %.3f ms, %llu groups", (double)st->t_agg / 1e6,
             (unsigned long long)st->groups);
        line(out, "  having, select list, sort, limit: %.3f ms", (double)st->t_post / 1e6);
        return;
    }
    if (st->have_matched)
        line(out, "  index scan: %.3f ms, %llu %s", (double)st->t_scan / 1e6,
             (unsigned long long)st->matched, kind == QR_PLAN_COUNT ? "rows counted" : "hits");
    else
        line(out, "  index scan + columns: %.3f ms", (double)st->t_scan / 1e6);
    if (st->have_kept)
        line(out, "  rows kept (residual filter, limit): %llu", (unsigned long long)st->kept);
    if (kind == QR_PLAN_SORT)
        line(out, "  sort, limit: %.3f ms", (double)st->t_post / 1e6);
}

void qr_sql_explain(const qr_sqlsel *s, int kind, qr_buf *out)
{
    if (s->stats)
        analyze_lines(s, kind, out);
    char filter[700], cols[300], lim[64] = "";
    qr_query_print(s->filter, filter, sizeof filter);
    columns(s, cols, sizeof cols);
    if (s->limit != UINT64_MAX || s->offset)
        snprintf(lim, sizeof lim, " limit %llu offset %llu",
                 s->limit == UINT64_MAX ? 0ull : (unsigned long long)s->limit,
                 (unsigned long long)s->offset);
    if (kind == QR_PLAN_CONST) {
        line(out, "Result (one row, no table)");
        return;
    }
    if (kind == QR_PLAN_JOIN) {
        if (s->norder || s->limit != UINT64_MAX || s->offset)
            line(out, "Sort%s%s", s->norder ? " by the ORDER BY keys" : "", lim);
        qr_tjshape sh;
        int tj = qr_run_term_join_shape(s, &sh);
        int td = !tj && qr_run_term_distinct_shape(s, &sh);
        if (td)
            line(out, "Aggregate (one group): distinct keys counted by the keyword index's "
                      "ordinals and key map, no row read (by hash where a segment lacks the "
                      "index)");
        else if (tj && sh.gside >= 0) {
            const char *g = s->scope.r[sh.gside].alias ? s->scope.r[sh.gside].alias
                                                       : s->scope.r[sh.gside].relname;
            line(out,
                 "Aggregate by %s.%s: counts of the merge join, each row of %s weighing its "
                 "key's rows on the other side",
                 g, s->scope.r[sh.gside].def->cols[sh.gcol].name, g);
        } else if (tj) {
            line(out, "Aggregate (one group): counts of the merge join");
        }
        else if (s->grouped)
            line(out, "HashAggregate%s (over cells)",
                 s->ngroup ? " by the GROUP BY keys" : " (one group)");
        if (s->rest && s->scope.n)
            line(out, "  Filter on joined rows");
        uint32_t n = s->scope.n ? s->scope.n : 1;
        for (uint32_t r = n; r-- > 0;) {
            const qr_tabdef *d = s->scope.n ? s->scope.r[r].def : s->def;
            const qr_query *f = s->scope.n ? s->rng[r].filter : s->filter;
            int hw = s->scope.n ? s->rng[r].has_where : s->has_where;
            char fl[700];
            qr_query_print(f, fl, sizeof fl);
            static const char *const kinds[] = {[QR_JOIN_INNER] = "",
                                                [QR_JOIN_LEFT] = " LEFT",
                                                [QR_JOIN_SEMI] = " SEMI (IN)",
                                                [QR_JOIN_RIGHT] = " RIGHT",
                                                [QR_JOIN_FULL] = " FULL"};
            if (r > 0 && s->rng[r].on_rest)
                line(out, "  Filter on joined rows (ON)");
            if (r > 0 && tj)
                line(out, "  MergeJoin on 1 equal key: the keyword indexes' ordinals and key map, "
                          "no row read (hash join where a segment lacks the index)");
            else if (r > 0)
                line(out, "  HashJoin%s on %u equal key%s (build: %s)",
                     s->rng[r].kind < 5 ? kinds[s->rng[r].kind] : "", s->rng[r].nkeys,
                     s->rng[r].nkeys == 1 ? "" : "s",
                     s->scope.r[r].alias ? s->scope.r[r].alias : s->scope.r[r].relname);
            if (s->scope.n && s->rng[r].sub) {
                line(out, "    Subquery %s: its rows (planned on its own)", d->name);
            } else {
                line(out, "    IndexScan on %s%s%s: %s", d->name,
                     s->scope.n && s->scope.r[r].alias ? " " : "",
                     s->scope.n && s->scope.r[r].alias ? s->scope.r[r].alias : "",
                     tj || td ? "each segment's matches as a bitmap"
                        : "every match, the columns used");
                line(out, "      index filter: %s", hw ? fl : "(all rows)");
            }
            if (tj || td ? sh.rest[r] != NULL : s->scope.n ? s->rng[r].rest != NULL : s->rest != NULL)
                line(out, "      residual filter: %s",
                     tj || td ? "on the key, once per key" : "on column values of the matches");
        }
        return;
    }
    const char *tab = s->def->name;
    switch (kind) {
    case QR_PLAN_COUNT:
        line(out, "IndexScan on %s: row count only (no column opened)", tab);
        break;
    case QR_PLAN_TOPK_SCORE:
        line(out, "Project %s (the winners' rows only)", cols);
        line(out, "  IndexScan on %s: top %llu by bm25 (block-max pruning)%s", tab,
             (unsigned long long)(s->limit + s->offset), lim);
        break;
    case QR_PLAN_TOPK_TIME:
        line(out, "Project %s (the winners' rows only)", cols);
        line(out, "  IndexScan on %s: newest %llu by %s%s", tab,
             (unsigned long long)(s->limit + s->offset), s->def->cols[s->def->sort_col].name, lim);
        break;
    case QR_PLAN_FIRST:
        line(out, "Project %s", cols);
        line(out, "  IndexScan on %s: first matches in table order%s", tab, lim);
        break;
    case QR_PLAN_SORT:
        line(out, "Sort by the ORDER BY keys%s", lim);
        line(out, "  Project %s", cols);
        line(out, "    IndexScan on %s: every match in table order", tab);
        break;
    default: {
        char keys[300] = "";
        size_t w = 0;
        for (uint32_t g = 0; g < s->ngroup; g++)
            w += (size_t)snprintf(keys + w, sizeof keys - w, "%s%s", g ? ", " : "",
                                  s->group[g] >= 0 ? s->def->cols[s->group[g]].name
                                                   : "(expression)");
        if (s->having)
            line(out, "Filter (HAVING)");
        if (s->norder || s->limit != UINT64_MAX || s->offset)
            line(out, "Sort%s%s", s->norder ? " by the ORDER BY keys" : "", lim);
        line(out, "HashAggregate%s%s", s->ngroup ? " by " : " (one group)", keys);
        line(out, "  IndexScan on %s: selections, column vectors", tab);
    }
    }
    line(out, "    index filter: %s", s->has_where ? filter : "(all rows)");
    line(out, "    pushed down: %s",
         s->rest       ? (s->has_where ? "part of the WHERE clause" : "nothing the index answers")
         : s->has_where ? "the whole WHERE clause"
                        : "nothing to push");
    if (s->rest)
        line(out, "    residual filter: on column values of the matches");
}
