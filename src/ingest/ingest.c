/* ingest.c - the NDJSON ingest pipeline (see ingest.h).
 *
 * Reader (calling thread) -> bounded queue of units -> workers (parse into a
 * batch, write a segment) -> results reported and committed in input order.
 * A unit owns its input buffer until its segment is written; strings in the
 * batch point into that buffer (zero-copy).
 */
#include "ingest/ingest.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "index/invindex.h"
#include "ingest/ndjson.h"

#define READ_CHUNK (1u << 20)

typedef struct line_err {
    uint64_t line;
    qr_err err;
} line_err;

typedef struct unit {
    char *buf;
    size_t len, cap;
    uint64_t first_line, nlines, seg_id;
    /* results */
    uint64_t rows, bad, blank, oversize;
    line_err *errs; /* first max_reported bad lines */
    unsigned nerrs;
    int failed; /* this unit stops the ingest: err says why (a bad line in
                 * strict mode, or any failure that is not the input's) */
    qr_err err;
    qr_seg_summary seg;
    int written;
    atomic_int done;
} unit;

typedef struct pipeline {
    qr_table *t;
    const qr_ingest_opts *o;
    const char *name;
    pthread_mutex_t mu;
    pthread_cond_t cv_put, cv_get, cv_done;
    unit **q;
    unsigned qcap, qhead, qlen;
    atomic_int abort; /* a unit failed: the ingest will not commit */
    /* the earliest line known to stop the ingest: units keep parsing the
     * lines before it, so with --strict the error reported is the first bad
     * line of the input whichever worker met a later one first */
    _Atomic uint64_t fail_line;
    size_t prefix_at; /* bytes of o->prefix already handed out */
    /* input buffers of finished units, reused so their pages stay mapped */
    char *pool[8];
    size_t pool_cap[8];
    unsigned npool;
} pipeline;

void qr_ingest_opts_default(qr_ingest_opts *o)
{
    memset(o, 0, sizeof *o);
    o->segment_rows = 1000000;
    o->segment_bytes = 128ull << 20;
    o->max_line = 16ull << 20;
    o->max_reported = 20;
    qr_seg_opts_default(&o->seg);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void add_err(pipeline *pl, unit *u, uint64_t line, const qr_err *err)
{
    if (u->nerrs < pl->o->max_reported) {
        line_err *ne = realloc(u->errs, sizeof *ne * (u->nerrs + 1));
        if (!ne)
            return;
        u->errs = ne;
        ne[u->nerrs].line = line;
        ne[u->nerrs].err = *err;
        u->nerrs++;
    }
}

/* Give a unit's input buffer back to the pool (or free it if full). */
static void pool_put(pipeline *pl, unit *u)
{
    pthread_mutex_lock(&pl->mu);
    if (u->buf && pl->npool < sizeof pl->pool / sizeof *pl->pool) {
        pl->pool[pl->npool] = u->buf;
        pl->pool_cap[pl->npool++] = u->cap;
        u->buf = NULL;
    }
    pthread_mutex_unlock(&pl->mu);
    free(u->buf);
    u->buf = NULL;
}

/* Mark the unit as the one that stops the ingest, with `err` at `line` (0:
 * not about a line). */
static void fail_unit(pipeline *pl, unit *u, uint64_t line, const qr_err *err)
{
    u->failed = 1;
    if (line)
        qr_errf(&u->err, err->code, "%s:%llu: %s", pl->name, (unsigned long long)line, err->msg);
    else
        u->err = *err;
    uint64_t at = line ? line : u->first_line, cur = atomic_load(&pl->fail_line);
    while (at < cur && !atomic_compare_exchange_weak(&pl->fail_line, &cur, at))
        ;
    atomic_store(&pl->abort, 1);
}

static void process_unit(pipeline *pl, unit *u, qr_batch *b, qr_ndjson *nj)
{
    qr_batch_clear(b);
    const char *p = u->buf, *end = u->buf + u->len;
    uint64_t line = u->first_line;
    for (; p < end; line++) {
        if (atomic_load(&pl->abort) && line > atomic_load(&pl->fail_line))
            break; /* a unit failed earlier: nothing will be committed */
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        qr_err err;
        qr_err_clear(&err);
        if (!nl) { /* read_input hands out whole lines only */
            qr_errf(&err, QR_E_INTERNAL, "input unit ends inside a line");
            fail_unit(pl, u, line, &err);
            break;
        }
        size_t n = (size_t)(nl - p);
        if (n && p[n - 1] == '\r')
            n--; /* CRLF input */
        int rc = n > pl->o->max_line ? qr_errf(&err, QR_E_LINE_TOO_LONG,
                                               "line longer than the %llu-byte limit (--max-line)",
                                               (unsigned long long)pl->o->max_line)
                                     : qr_ndjson_parse(nj, b, p, n, &err);
        p = nl + 1;
        if (rc == 1) {
            u->blank++;
        } else if (rc < 0 && !qr_err_is_input_fault(&err)) {
            /* out of memory, a limit, a bug: not the line's fault, so it
             * must not be skipped as a bad line */
            fail_unit(pl, u, line, &err);
            break;
        } else if (rc < 0) {
            u->bad++;
            add_err(pl, u, line, &err);
            if (pl->o->strict) {
                fail_unit(pl, u, line, &err);
                break;
            }
        }
    }
    u->rows = b->nrows;
    if (!u->failed && b->nrows > 0 && !atomic_load(&pl->abort)) {
        char path[PATH_MAX];
        qr_table_seg_path(pl->t, u->seg_id, path, sizeof path);
        qr_err err;
        qr_err_clear(&err);
        if (qr_segment_build(path, b, &pl->o->seg, &u->seg, &err) != 0)
            fail_unit(pl, u, 0, &err); /* it removed its temp file */
        else
            u->written = 1;
    }
    pool_put(pl, u);
}

static void *worker(void *arg)
{
    pipeline *pl = arg;
    qr_batch b;
    qr_ndjson nj;
    int ok = qr_ndjson_init(&nj, pl->t->def, NULL) == 0;
    if (ok && qr_batch_init(&b, pl->t->def, pl->o->segment_rows, NULL) != 0) {
        qr_ndjson_free(&nj);
        ok = 0;
    }
    if (ok)
        b.arena.limit = pl->o->arena_limit;
    for (;;) {
        pthread_mutex_lock(&pl->mu);
        while (pl->qlen == 0)
            pthread_cond_wait(&pl->cv_get, &pl->mu);
        unit *u = pl->q[pl->qhead];
        pl->qhead = (pl->qhead + 1) % pl->qcap;
        pl->qlen--;
        pthread_cond_signal(&pl->cv_put);
        pthread_mutex_unlock(&pl->mu);
        if (!u)
            break;
        if (ok) {
            process_unit(pl, u, &b, &nj);
        } else {
            qr_err err;
            qr_errf(&err, QR_E_NOMEM, "out of memory for a batch of %u rows", pl->o->segment_rows);
            fail_unit(pl, u, 0, &err);
            free(u->buf);
            u->buf = NULL;
        }
        pthread_mutex_lock(&pl->mu);
        atomic_store(&u->done, 1);
        pthread_cond_broadcast(&pl->cv_done);
        pthread_mutex_unlock(&pl->mu);
    }
    if (ok)
        qr_batch_free(&b);
    qr_ndjson_free(&nj);
    return NULL;
}

/* Hand a unit to a worker and wait until one has taken it, so at most one
 * unit is being filled while every worker holds one (memory bound). */
static void enqueue(pipeline *pl, unit *u)
{
    pthread_mutex_lock(&pl->mu);
    while (pl->qlen == pl->qcap)
        pthread_cond_wait(&pl->cv_put, &pl->mu);
    pl->q[(pl->qhead + pl->qlen) % pl->qcap] = u;
    pl->qlen++;
    pthread_cond_signal(&pl->cv_get);
    while (u && pl->qlen == pl->qcap)
        pthread_cond_wait(&pl->cv_put, &pl->mu);
    pthread_mutex_unlock(&pl->mu);
}

typedef struct reader_state {
    unit **units;
    size_t nunits, cap_units, reported;
    uint64_t shown_errs;
    qr_ingest_stats *st;
    double t0, last_progress;
} reader_state;

/* Print errors of finished units, in input order, and fold their counts. */
static void report_done(pipeline *pl, reader_state *rs, int wait_all)
{
    while (rs->reported < rs->nunits) {
        unit *u = rs->units[rs->reported];
        if (!atomic_load(&u->done)) {
            if (!wait_all)
                break;
            pthread_mutex_lock(&pl->mu);
            while (!atomic_load(&u->done))
                pthread_cond_wait(&pl->cv_done, &pl->mu);
            pthread_mutex_unlock(&pl->mu);
        }
        for (unsigned i = 0; i < u->nerrs && pl->o->report; i++) {
            if (rs->shown_errs++ >= pl->o->max_reported)
                break;
            if (pl->o->progress)
                fputc('\n', pl->o->report);
            fprintf(pl->o->report, "%s:%llu: %s\n", pl->name, (unsigned long long)u->errs[i].line,
                    u->errs[i].err.msg);
        }
        rs->st->lines += u->nlines;
        rs->st->rows += u->rows;
        rs->st->bad_lines += u->bad;
        rs->st->blank_lines += u->blank - u->oversize;
        if (u->written) {
            rs->st->segments++;
            rs->st->segment_bytes += u->seg.file_bytes;
        }
        rs->reported++;
    }
}

static void progress(pipeline *pl, reader_state *rs, int final)
{
    if (!pl->o->progress || !pl->o->report)
        return;
    double t = now_s();
    if (!final && t - rs->last_progress < 1.0)
        return;
    rs->last_progress = t;
    double el = t - rs->t0;
    fprintf(pl->o->report, "\r%s: %llu rows, %.1f MiB read, %.0f rows/s   ", pl->name,
            (unsigned long long)rs->st->rows, rs->st->input_bytes / 1048576.0,
            el > 0 ? rs->st->rows / el : 0.0);
    if (final)
        fputc('\n', pl->o->report);
    fflush(pl->o->report);
}

/* Units start small and grow (up to the bound computed by read_input) so
 * that small inputs and tests never touch large buffers. */
#define UNIT_START_CAP (4u << 20)

static unit *new_unit(pipeline *pl, size_t need, uint64_t first_line)
{
    unit *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    pthread_mutex_lock(&pl->mu);
    if (pl->npool) {
        pl->npool--;
        u->buf = pl->pool[pl->npool];
        u->cap = pl->pool_cap[pl->npool];
    }
    pthread_mutex_unlock(&pl->mu);
    if (u->buf && u->cap >= need && u->cap >= UNIT_START_CAP) {
        u->first_line = first_line;
        return u;
    }
    free(u->buf);
    u->cap = need > UNIT_START_CAP ? need : UNIT_START_CAP;
    u->buf = malloc(u->cap);
    if (!u->buf) {
        free(u);
        return NULL;
    }
    u->first_line = first_line;
    return u;
}

static int push_unit(pipeline *pl, reader_state *rs, unit *u, qr_err *e)
{
    if (rs->nunits == rs->cap_units) {
        size_t nc = rs->cap_units ? rs->cap_units * 2 : 64;
        unit **nu = realloc(rs->units, sizeof *nu * nc);
        if (!nu)
            return qr_errf(e, QR_E_NOMEM, "out of memory");
        rs->units = nu;
        rs->cap_units = nc;
    }
    rs->units[rs->nunits++] = u;
    u->seg_id = qr_table_reserve_ids(pl->t, 1);
    enqueue(pl, u);
    return 0;
}

/* Hand unit *pu (its complete lines [0, keep)) to the workers and start a
 * new unit holding the bytes after `keep`. */
static int cut_unit(pipeline *pl, reader_state *rs, unit **pu, size_t keep, uint64_t line_no,
                    qr_err *e)
{
    unit *u = *pu, *next = new_unit(pl, u->len - keep + READ_CHUNK + 1, line_no);
    if (!next)
        return qr_errf(e, QR_E_NOMEM, "out of memory for an input buffer");
    next->len = u->len - keep;
    memcpy(next->buf, u->buf + keep, next->len);
    u->len = keep;
    if (push_unit(pl, rs, u, e) != 0) {
        free(next->buf);
        free(next);
        return -1;
    }
    *pu = next;
    report_done(pl, rs, 0);
    progress(pl, rs, 0);
    return 0;
}

/* The reader loop: fills units with whole lines and hands them out. */
/* read(2), served first from the bytes the caller already took from fd
 * (qr_ingest_opts.prefix: a sample it inferred the table from). */
static ssize_t read_some(pipeline *pl, int fd, char *buf, size_t n)
{
    if (pl->prefix_at < pl->o->prefix_len) {
        size_t k = pl->o->prefix_len - pl->prefix_at;
        k = k < n ? k : n;
        memcpy(buf, pl->o->prefix + pl->prefix_at, k);
        pl->prefix_at += k;
        return (ssize_t)k;
    }
    return read(fd, buf, n);
}

static int read_input(pipeline *pl, reader_state *rs, int fd, qr_err *e)
{
    const qr_ingest_opts *o = pl->o;
    /* a unit never holds more than: complete lines (< segment_bytes + one
     * line), a partial line (<= max_line), one read and a final '\n' */
    size_t cap = o->segment_bytes + 2 * o->max_line + READ_CHUNK + 1;
    uint64_t line_no = 1; /* number of the next line to complete */
    unit *u = new_unit(pl, 0, line_no);
    if (!u)
        return qr_errf(e, QR_E_NOMEM, "out of memory for an input buffer");
    size_t scan = 0;  /* bytes of u->buf already scanned for newlines */
    int skipping = 0; /* discarding the rest of an oversize line */
    int rc = 0, eof = 0;
    while (!eof && !atomic_load(&pl->abort)) {
        if (u->cap - u->len < READ_CHUNK + 1) {
            size_t nc = u->cap * 2 > cap ? cap : u->cap * 2;
            char *nb = nc >= u->len + READ_CHUNK + 1 ? realloc(u->buf, nc) : NULL;
            if (!nb) {
                rc = qr_errf(e, QR_E_NOMEM, "out of memory for a %zu-byte input buffer", nc);
                break;
            }
            u->buf = nb;
            u->cap = nc;
        }
        ssize_t r = read_some(pl, fd, u->buf + u->len, READ_CHUNK);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = qr_errf(e, QR_E_IO, "read %s: %s", pl->name, strerror(errno));
            break;
        }
        rs->st->input_bytes += (uint64_t)r;
        eof = r == 0;
        if (skipping && !eof) {
            char *nl = memchr(u->buf + u->len, '\n', (size_t)r);
            if (!nl)
                continue; /* all of it belongs to the oversize line */
            size_t rest = (size_t)(u->buf + u->len + r - (nl + 1));
            memmove(u->buf + u->len, nl + 1, rest);
            r = (ssize_t)rest;
            skipping = 0;
        }
        u->len += (size_t)r;
        if (eof && u->len > scan && u->buf[u->len - 1] != '\n')
            u->buf[u->len++] = '\n'; /* last line without a newline */
        /* count complete lines, cutting a unit every segment_rows lines */
        for (;;) {
            char *nl = memchr(u->buf + scan, '\n', u->len - scan);
            if (!nl)
                break;
            scan = (size_t)(nl - u->buf) + 1;
            u->nlines++;
            line_no++;
            if (u->nlines == o->segment_rows || scan >= o->segment_bytes) {
                if ((rc = cut_unit(pl, rs, &u, scan, line_no, e)) != 0)
                    goto out;
                scan = 0;
            }
        }
        if (u->len - scan > o->max_line) {
            /* oversize line: report it, keep an empty placeholder line */
            qr_err err;
            qr_errf(&err, QR_E_LINE_TOO_LONG, "line longer than the %llu-byte limit (--max-line)",
                    (unsigned long long)o->max_line);
            u->bad++;
            u->oversize++; /* its placeholder parses as blank: report_done subtracts */
            add_err(pl, u, line_no, &err);
            if (o->strict)
                fail_unit(pl, u, line_no, &err);
            u->len = scan;
            u->buf[u->len++] = '\n';
            scan = u->len;
            u->nlines++;
            line_no++;
            skipping = 1;
            if (u->nlines == o->segment_rows && (rc = cut_unit(pl, rs, &u, scan, line_no, e)) != 0)
                goto out;
            if (u->nlines == 0)
                scan = 0;
        }
    }
    /* A unit holds whole lines only. At the end of the input scan == len (a
     * last line without a newline got one); when a failure ended the loop
     * early, the partial line after `scan` is dropped, and the unit is still
     * handed over as it may hold this reader's error (a strict oversize
     * line): the workers skip its lines, as the ingest is aborted. */
    u->len = scan;
    if (rc == 0 && u->nlines > 0) {
        rc = push_unit(pl, rs, u, e);
        if (rc == 0)
            u = NULL;
    }
out:
    if (u) {
        free(u->buf);
        free(u);
    }
    return rc;
}

int qr_ingest(qr_table *t, int fd, const char *name, const qr_ingest_opts *o, qr_ingest_stats *st,
              qr_err *e)
{
    memset(st, 0, sizeof *st);
    if (o->segment_rows == 0 || o->segment_bytes == 0 || o->max_line == 0)
        return qr_errf(e, QR_E_ARGS, "segment rows, segment bytes and max line must be > 0");
    if (t->lock_fd < 0)
        return qr_errf(e, QR_E_INTERNAL, "table %s is not open for writing", t->name);
    int threads = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    if (threads > 64)
        threads = 64;
    pipeline pl;
    memset(&pl, 0, sizeof pl);
    pl.t = t;
    pl.o = o;
    pl.name = name;
    atomic_init(&pl.fail_line, UINT64_MAX);
    pl.qcap = 1; /* a hand-off slot: memory is about threads + 1 units */
    pl.q = calloc(pl.qcap, sizeof *pl.q);
    pthread_t *tids = calloc((size_t)threads, sizeof *tids);
    if (!pl.q || !tids) {
        free(pl.q);
        free(tids);
        return qr_errf(e, QR_E_NOMEM, "out of memory");
    }
    pthread_mutex_init(&pl.mu, NULL);
    pthread_cond_init(&pl.cv_put, NULL);
    pthread_cond_init(&pl.cv_get, NULL);
    pthread_cond_init(&pl.cv_done, NULL);
    int started = 0;
    for (; started < threads; started++)
        if (pthread_create(&tids[started], NULL, worker, &pl) != 0)
            break;
    reader_state rs;
    memset(&rs, 0, sizeof rs);
    rs.st = st;
    rs.t0 = now_s();
    int rc = started ? read_input(&pl, &rs, fd, e)
                     : qr_errf(e, QR_E_INTERNAL, "cannot start worker threads");
    for (int i = 0; i < started; i++)
        enqueue(&pl, NULL);
    for (int i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    report_done(&pl, &rs, 1);
    progress(&pl, &rs, 1);
    /* first fatal problem, in input order */
    for (size_t i = 0; i < rs.nunits && rc == 0; i++)
        if (rs.units[i]->failed) {
            *e = rs.units[i]->err;
            rc = -1;
        }
    qr_seg_entry *add = calloc(rs.nunits ? rs.nunits : 1, sizeof *add);
    uint32_t nadd = 0;
    if (!add && rc == 0)
        rc = qr_errf(e, QR_E_NOMEM, "out of memory");
    for (size_t i = 0; i < rs.nunits && rc == 0; i++) {
        unit *u = rs.units[i];
        if (!u->written)
            continue;
        add[nadd].id = u->seg_id;
        add[nadd].rows = u->seg.rows;
        add[nadd].min_ts = u->seg.min_ts;
        add[nadd].max_ts = u->seg.max_ts;
        add[nadd].file_bytes = u->seg.file_bytes;
        nadd++;
    }
    if (rc == 0 && o->publish)
        rc = o->publish(o->publish_ctx, t, add, nadd, e);
    else if (rc == 0 && nadd)
        rc = qr_table_commit(t, add, nadd, e);
    if (rc != 0) {
        /* nothing of this run may survive */
        for (size_t i = 0; i < rs.nunits; i++) {
            char path[PATH_MAX];
            qr_table_seg_path(t, rs.units[i]->seg_id, path, sizeof path);
            if (rs.units[i]->written)
                unlink(path);
        }
        st->segments = 0;
        st->segment_bytes = 0;
    }
    free(add);
    for (size_t i = 0; i < rs.nunits; i++) {
        free(rs.units[i]->buf);
        free(rs.units[i]->errs);
        free(rs.units[i]);
    }
    free(rs.units);
    for (unsigned i = 0; i < pl.npool; i++)
        free(pl.pool[i]);
    free(pl.q);
    free(tids);
    pthread_mutex_destroy(&pl.mu);
    pthread_cond_destroy(&pl.cv_put);
    pthread_cond_destroy(&pl.cv_get);
    pthread_cond_destroy(&pl.cv_done);
    st->seconds = now_s() - rs.t0;
    return rc;
}
