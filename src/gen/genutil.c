/* genutil.c - shared machinery of the corpus generators (see genutil.h):
 * chunk seeding, the integer alias sampler, RFC 3339 seconds, canonical JSON
 * escaping and the ordered multi-threaded chunk writer.
 *
 * The writer: thread i generates chunks i, i + T, i + 2T, ... into its own
 * buffer, then waits for its turn (the chunk counter) and writes the buffer.
 * The bytes on fd are therefore those of chunk 0, 1, 2, ... whatever T is.
 */
#include "gen/genutil.h"

#include "util/timefmt.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

void gu_rng_seed_chunk(gu_rng *r, uint64_t seed, uint64_t chunk)
{
    uint64_t x = gu_mix64(seed ^ gu_mix64(chunk + 0x6a09e667f3bcc909ULL));
    for (int i = 0; i < 4; i++) {
        x += 0x9e3779b97f4a7c15ULL;
        r->s[i] = gu_mix64(x);
    }
}

int gu_alias_build(const uint64_t *w, uint32_t n, gu_alias *tab)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += w[i];
    if (!n || !total)
        return -1;
    uint64_t *p = malloc((size_t)n * sizeof *p); /* weight * n, against total */
    uint32_t *small = malloc((size_t)n * sizeof *small), *large = malloc((size_t)n * sizeof *large);
    if (!p || !small || !large) {
        free(p);
        free(small);
        free(large);
        return -1;
    }
    uint32_t ns = 0, nl = 0;
    for (uint32_t i = 0; i < n; i++) {
        p[i] = w[i] * n;
        if (p[i] < total)
            small[ns++] = i;
        else
            large[nl++] = i;
    }
    while (ns && nl) {
        uint32_t s = small[--ns], l = large[nl - 1];
        tab[s].thr = (uint32_t)(((unsigned __int128)p[s] << 32) / total);
        tab[s].to = l;
        p[l] -= total - p[s];
        if (p[l] < total) {
            nl--;
            small[ns++] = l;
        }
    }
    while (nl) {
        uint32_t l = large[--nl];
        tab[l].thr = UINT32_MAX;
        tab[l].to = l;
    }
    while (ns) { /* rounding leftovers */
        uint32_t s = small[--ns];
        tab[s].thr = UINT32_MAX;
        tab[s].to = s;
    }
    free(p);
    free(small);
    free(large);
    return 0;
}

char *gu_put_rfc3339(char *p, int64_t secs)
{
    /* the canonical form to the second ("YYYY-MM-DDTHH:MM:SS") and a Z */
    char t[QR_TIME_TEXT_LEN];
    qr_time_format(secs * 1000000000, t);
    memcpy(p, t, 19);
    p[19] = 'Z';
    return p + GU_RFC3339_LEN;
}

size_t gu_json_escape(const char *s, size_t n, char *out)
{
    static const char hexd[] = "0123456789abcdef";
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c >= 0x20) {
            out[o++] = (char)c;
        } else {
            out[o++] = '\\';
            switch (c) {
            case '\b':
                out[o++] = 'b';
                break;
            case '\f':
                out[o++] = 'f';
                break;
            case '\n':
                out[o++] = 'n';
                break;
            case '\r':
                out[o++] = 'r';
                break;
            case '\t':
                out[o++] = 't';
                break;
            default:
                out[o++] = 'u';
                out[o++] = '0';
                out[o++] = '0';
                out[o++] = hexd[c >> 4];
                out[o++] = hexd[c & 15];
            }
        }
    }
    return o;
}

/* ---------- streaming to a file descriptor ---------- */

typedef struct writer {
    int fd;
    uint64_t rows, seed, nchunks;
    unsigned nthreads;
    const gu_dataset *ds;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t turn; /* the chunk whose bytes go out next */
    int failed;
    qr_err err;
} writer;

typedef struct worker_arg {
    writer *w;
    unsigned id;
} worker_arg;

static int write_all(int fd, const unsigned char *p, size_t n, qr_err *e)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return qr_errf(e, QR_E_IO, "gen: write to fd %d failed: %s", fd, strerror(errno));
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static void *worker_main(void *arg)
{
    worker_arg *a = arg;
    writer *w = a->w;
    const gu_dataset *ds = w->ds;
    qr_buf b;
    qr_buf_init(&b);
    qr_err e;
    qr_err_clear(&e);
    int bad = 0;
    void *g = ds->open(w->seed);
    if (!g)
        bad = qr_errf(&e, QR_E_NOMEM, "gen: out of memory for a generator");
    for (uint64_t c = a->id; c < w->nchunks; c += w->nthreads) {
        if (!bad) {
            uint64_t first = c * ds->chunk_rows;
            uint64_t last = first + ds->chunk_rows < w->rows ? first + ds->chunk_rows : w->rows;
            qr_buf_clear(&b);
            ds->chunk(g, first, last, &b);
            if (b.oom)
                bad = qr_errf(&e, QR_E_NOMEM, "gen: out of memory buffering chunk %llu",
                              (unsigned long long)c);
        }
        pthread_mutex_lock(&w->mu);
        while (w->turn != c && !w->failed)
            pthread_cond_wait(&w->cv, &w->mu);
        int stop = w->failed;
        pthread_mutex_unlock(&w->mu);
        if (stop)
            break;
        if (!bad)
            bad = write_all(w->fd, b.p, b.len, &e);
        pthread_mutex_lock(&w->mu);
        if (bad) {
            w->failed = 1;
            w->err = e;
        }
        w->turn = c + 1;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        if (bad)
            break;
    }
    if (g)
        ds->close(g);
    qr_buf_free(&b);
    return NULL;
}

int gu_write_ndjson(int fd, uint64_t rows, uint64_t seed, int threads, const gu_dataset *ds,
                    qr_err *e)
{
    if (threads < 1 || threads > 64)
        return qr_errf(e, QR_E_ARGS, "gen: threads must be 1..64, got %d", threads);
    writer w = {.fd = fd, .rows = rows, .seed = seed, .ds = ds};
    w.nchunks = (rows + ds->chunk_rows - 1) / ds->chunk_rows;
    w.nthreads = (unsigned)threads;
    if ((uint64_t)threads > w.nchunks)
        w.nthreads = w.nchunks ? (unsigned)w.nchunks : 1;
    qr_err_clear(&w.err);
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    worker_arg args[64];
    pthread_t tids[64] = {0};
    unsigned started = 0;
    for (unsigned i = 1; i < w.nthreads; i++) {
        args[i] = (worker_arg){&w, i};
        if (pthread_create(&tids[i], NULL, worker_main, &args[i]) != 0)
            break;
        started = i;
    }
    if (started + 1 < w.nthreads) {
        /* Could not start them all. Nothing is written yet (chunk 0 belongs to this
         * thread), so stop the started workers and report. */
        pthread_mutex_lock(&w.mu);
        w.failed = 1;
        pthread_cond_broadcast(&w.cv);
        pthread_mutex_unlock(&w.mu);
        for (unsigned i = 1; i <= started; i++)
            pthread_join(tids[i], NULL);
        pthread_mutex_destroy(&w.mu);
        pthread_cond_destroy(&w.cv);
        return qr_errf(e, QR_E_NOMEM, "gen: could not start %u threads", w.nthreads);
    }
    args[0] = (worker_arg){&w, 0};
    worker_main(&args[0]);
    for (unsigned i = 1; i < w.nthreads; i++)
        pthread_join(tids[i], NULL);
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
    if (w.failed) {
        if (e)
            *e = w.err;
        return -1;
    }
    return 0;
}
