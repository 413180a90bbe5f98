/* test_search_chunks.c - segments verified by chunk (format 9): a query
 * verifies only the chunks it reads, so a byte flipped in a chunk far from
 * them leaves its answer right, while a query that reads that chunk fails
 * with XX001 naming the segment, the block and the chunk; `quarry verify`
 * (qr_seg_verify) finds every such byte; threads sharing a segment verify
 * the same chunks at once; a format 8 segment written by the old writer
 * still reads and answers as its format 9 rewrite does, and a format 9
 * one (every block directory in the footer) as its format 10 rewrite;
 * format 12's chunk checksum table holds what the blocks hash to, and a
 * format 11 segment (checksums in the footer) reads as before.
 *
 * The segments here use 1 KiB chunks (the writer's default is 4 KiB), so
 * a 3000-row segment's blocks have dozens of them. */
#include "testutil.h"

#include <pthread.h>

#include "format/segfmt.h"
#include "gen/otelgen.h"
#include "index/invfmt.h"
#include "match/segsearch.h"
#include "search/topk.h"
#include "util/hash.h"

#define ROWS  3000
#define SHIFT 10 /* 1 KiB chunks */

static char *dir;
static char good[4200];

/* NDJSON of `n` generated OpenTelemetry rows (NUL-terminated, malloc'ed). */
static char *gen_text(uint64_t seed, int n)
{
    gen_ctx *g = gen_new(seed, 0);
    qr_buf text;
    qr_buf_init(&text);
    for (int i = 0; i < n; i++)
        gen_row(g, &text);
    qr_buf_put_u8(&text, 0);
    gen_free(g);
    return (char *)text.p;
}

/* Write `text` (rows of the OpenTelemetry table) as a segment with chunks
 * of 2^shift bytes. */
static void build(const char *path, const char *text, uint32_t rows, uint8_t shift)
{
    qr_batch b;
    qr_err e;
    assert_int_equal(qr_batch_init(&b, tu_otel(), rows, &e), 0);
    tu_fill_batch(&b, text);
    qr_seg_opts o;
    qr_seg_opts_default(&o);
    o.chunk_shift = shift;
    if (qr_segment_build(path, &b, &o, NULL, &e) != 0)
        fail_msg("%s", e.msg);
    qr_batch_free(&b);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*n ? *n : 1);
    assert_int_equal(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static void spit(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

/* The intact segment's bytes (malloc'ed, *len of them), and in bad the
 * path a damaged copy of them is written to (spit). */
static unsigned char *good_copy(size_t *len, char *bad, size_t badn)
{
    snprintf(bad, badn, "%s/bad.qseg", dir);
    return slurp(good, len);
}

/* ---- what a one-term count reads ---- */
typedef struct span {
    const qr_blockref *b; /* in the intact segment's directory */
    uint64_t off, n;
} span;

typedef struct probe {
    uint16_t sec;
    char term[QR_MAX_TERM + 1];
    size_t len;
    qr_terminfo ti;
    span reads[2]; /* its dictionary block; its bitmap words or postings */
    int nreads;
} probe;

static probe probes[1200];
static int nprobes;
static qr_segment *gs; /* the intact segment, open for the whole run */

static const qr_blockref *kind_block(const qr_section *sec, uint8_t kind)
{
    for (uint32_t i = 0; i < sec->nblocks; i++)
        if (sec->blocks[i].kind == kind)
            return &sec->blocks[i];
    return NULL;
}

/* Every `step`-th term of section sec: the bytes a count of it reads. */
static void add_probes(uint16_t sec, int step)
{
    qr_invfield f;
    qr_err e;
    assert_int_equal(qr_invfield_open(&f, gs, sec, &e), 0);
    qr_titer it;
    int k = 0;
    for (int r = qr_tdict_seek(&f.dict, &it, "", 0, &e); r == 1; r = qr_titer_next(&it, &e)) {
        if (k++ % step || nprobes == (int)(sizeof probes / sizeof *probes))
            continue;
        probe *p = &probes[nprobes++];
        p->sec = sec;
        memcpy(p->term, it.term, it.len);
        p->len = it.len;
        assert_int_equal(qr_titer_info(&it, &p->ti, &e), 0);
        const qr_tblk *b = &f.dict.blk[it.blk];
        uint64_t end = it.blk + 1 < f.dict.nblocks ? b[1].off : f.dict.dict_len;
        p->reads[0] = (span){f.dict.ref, b->off, end - b->off};
        p->nreads = 1;
        if (p->ti.has_bitmap)
            p->reads[p->nreads++] =
                (span){kind_block(f.sec, IBLK_BITMAPS), p->ti.bm_word * 8, (f.rows + 63) / 64 * 8};
        else if (p->ti.kind != TI_INLINE)
            p->reads[p->nreads++] =
                (span){kind_block(f.sec, IBLK_POSTINGS), p->ti.post_off, p->ti.post_len};
    }
    qr_invfield_close(&f);
}

/* The chunks of block b that bytes [off, off + n) lie in. */
static int span_has_chunk(const span *s, const qr_blockref *b, uint32_t c)
{
    if (s->b != b || s->n == 0)
        return 0;
    uint32_t c0 = b->chunk_shift ? (uint32_t)(s->off >> b->chunk_shift) : 0;
    uint32_t c1 = b->chunk_shift ? (uint32_t)((s->off + s->n - 1) >> b->chunk_shift) : 0;
    return c >= c0 && c <= c1;
}

static int probe_reads(const probe *p, const qr_blockref *b, uint32_t c)
{
    for (int i = 0; i < p->nreads; i++)
        if (span_has_chunk(&p->reads[i], b, c))
            return 1;
    return 0;
}

/* The rows holding term p in segment s, walked one by one (what a search
 * reads: its dictionary block, then its bitmap or postings), or with
 * count_only its count (qr_segsearch_count: the dictionary entry's
 * document frequency, the dictionary block alone). 0 with *n, or -1. */
static int probe_matches(qr_segsearch *ss, const probe *p, int count_only, uint64_t *n, qr_err *e)
{
    qr_query q;
    memset(&q, 0, sizeof q);
    q.type = Q_TERM;
    q.field = p->sec;
    q.text = p->term;
    q.len = p->len;
    qr_arena a;
    qr_arena_init(&a, 1 << 16, 0);
    int rc = 0;
    if (count_only) {
        rc = qr_segsearch_count(ss, &q, &a, n, e);
    } else {
        qr_it *it = qr_segsearch_compile(ss, &q, &a, e);
        *n = 0;
        if (!it)
            rc = -1;
        else
            while (qr_it_next(it) != QR_NO_DOC)
                ++*n;
        if (it && qr_it_failed(it))
            rc = qr_errf(e, QR_E_CORRUPT, "corrupt postings met");
    }
    qr_arena_free(&a);
    return rc;
}

static int count_probe(qr_segsearch *ss, const probe *p, uint64_t *n, qr_err *e)
{
    return probe_matches(ss, p, 0, n, e);
}

static const char *sec_name(uint16_t sec) { return sec == SEC_BODY ? "Body" : "TraceId"; }

static int setup(void **st)
{
    (void)st;
    dir = tu_tmpdir();
    char *text = gen_text(7, ROWS);
    snprintf(good, sizeof good, "%s/good.qseg", dir);
    build(good, text, ROWS, SHIFT);
    free(text);
    qr_err e;
    gs = qr_seg_open(good, &e);
    assert_non_null(gs);
    add_probes(SEC_BODY, 23);
    add_probes(SEC_KW_TRACE, 5);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    qr_seg_close(gs);
    tu_rmdir(dir);
    return 0;
}

/* The segment's blocks are chunked as asked, and the answers of the
 * probes are their document frequencies. */
static void test_blocks_are_chunked(void **st)
{
    (void)st;
    assert_int_equal(gs->version, QR_SEG_VERSION);
    const qr_section *body = qr_seg_section(gs, SEC_BODY);
    int chunked = 0;
    for (uint32_t i = 0; i < body->nblocks; i++) {
        const qr_blockref *b = &body->blocks[i];
        if (b->length > (1u << SHIFT)) {
            assert_int_equal(b->chunk_shift, SHIFT);
            assert_int_equal(b->nchunks, (b->length + (1u << SHIFT) - 1) >> SHIFT);
            chunked++;
        } else {
            assert_int_equal(b->chunk_shift, 0);
        }
    }
    assert_true(chunked >= 5); /* TERMINDEX, TERMDICT, POSTINGS, POSITIONS, NORMS, ... */
    for (uint32_t c = 0; c < gs->ncols; c++) { /* column blocks keep one checksum */
        qr_err ce;
        const qr_colmeta *cm = qr_seg_colmeta(gs, (int)c, &ce);
        assert_non_null(cm);
        for (uint32_t i = 0; i < cm->nblocks; i++)
            assert_int_equal(cm->blocks[i].chunk_shift, 0);
    }
    assert_true(nprobes > 100);
    qr_segsearch ss;
    qr_segsearch_init(&ss, gs);
    for (int i = 0; i < nprobes; i++) {
        uint64_t n;
        qr_err e;
        assert_int_equal(count_probe(&ss, &probes[i], &n, &e), 0);
        assert_int_equal(n, probes[i].ti.df);
    }
    qr_segsearch_close(&ss);
}

/* Write img (len bytes) to path with one byte flipped in the middle of
 * chunk c of block b (the whole block when it is not chunked). */
static void spit_flipped(const char *path, unsigned char *img, size_t len, const qr_blockref *b,
                         uint32_t c)
{
    uint64_t cs = b->chunk_shift ? 1ull << b->chunk_shift : b->length;
    uint64_t start = (uint64_t)c * cs;
    uint64_t clen = b->length - start < cs ? b->length - start : cs;
    size_t at = (size_t)(b->offset + start + clen / 2);
    img[at] ^= 0x5a;
    spit(path, img, len);
    img[at] ^= 0x5a;
}

/* A byte flipped in each chunk of the term dictionaries, postings and
 * bitmaps of Body and TraceId: a count whose bytes avoid that chunk gives
 * its right answer; one that reads it fails naming segment, block and
 * chunk; verify always finds it. */
static void test_flipped_chunk_fails_only_its_readers(void **st)
{
    (void)st;
    size_t len;
    char bad[4200];
    unsigned char *img = good_copy(&len, bad, sizeof bad);
    static const uint16_t secs[] = {SEC_BODY, SEC_KW_TRACE};
    static const uint8_t kinds[] = {IBLK_TERMDICT, IBLK_POSTINGS, IBLK_BITMAPS};
    static const char *const kind_names[] = {"TERMDICT", "POSTINGS", "BITMAPS"};
    int flipped = 0, failed = 0, passed = 0;
    for (size_t si = 0; si < 2; si++) {
        const qr_section *sec = qr_seg_section(gs, secs[si]);
        for (size_t ki = 0; ki < 3; ki++) {
            const qr_blockref *b = kind_block(sec, kinds[ki]);
            if (!b)
                continue;
            uint32_t bi = (uint32_t)(b - sec->blocks);
            /* every chunk of small blocks, a spread of those of large ones */
            uint32_t step = b->nchunks > 40 ? b->nchunks / 40 : 1;
            for (uint32_t c = 0; c < b->nchunks; c += step) {
                spit_flipped(bad, img, len, b, c);
                flipped++;
                qr_err e;
                qr_segment *s = qr_seg_open(bad, &e);
                assert_non_null(s); /* the footer is intact: opening works */
                qr_segsearch ss;
                qr_segsearch_init(&ss, s);
                char want[200], chunk[64] = " (offset"; /* unchunked: the block */
                if (b->chunk_shift)
                    snprintf(chunk, sizeof chunk, " chunk %u of %u", c, b->nchunks);
                snprintf(want, sizeof want, "index section %u (%s) block %u (%s)%s", secs[si],
                         sec_name(secs[si]), bi, kind_names[ki], chunk);
                for (int i = 0; i < nprobes; i++) {
                    uint64_t n = 0;
                    qr_err_clear(&e);
                    /* a count reads the term's dictionary block alone */
                    uint64_t df = 0;
                    qr_err de;
                    int drc = probe_matches(&ss, &probes[i], 1, &df, &de);
                    if (span_has_chunk(&probes[i].reads[0], b, c)) {
                        assert_int_equal(drc, -1);
                        assert_string_equal(de.code, QR_E_CORRUPT);
                    } else {
                        if (drc != 0)
                            fail_msg("%s chunk %u flipped: count of '%.*s' failed: %s",
                                     kind_names[ki], c, (int)probes[i].len, probes[i].term, de.msg);
                        assert_int_equal(df, probes[i].ti.df);
                    }
                    int rc = count_probe(&ss, &probes[i], &n, &e);
                    if (probe_reads(&probes[i], b, c)) {
                        if (rc == 0)
                            fail_msg("%s chunk %u flipped: count of '%.*s' read it, no error",
                                     kind_names[ki], c, (int)probes[i].len, probes[i].term);
                        assert_string_equal(e.code, QR_E_CORRUPT);
                        assert_non_null(strstr(e.msg, "bad.qseg"));
                        if (!strstr(e.msg, want))
                            fail_msg("message '%s' does not name '%s'", e.msg, want);
                        assert_non_null(strstr(e.msg, "checksum mismatch"));
                        failed++;
                    } else {
                        if (rc != 0)
                            fail_msg("%s chunk %u flipped: count of '%.*s' failed: %s",
                                     kind_names[ki], c, (int)probes[i].len, probes[i].term, e.msg);
                        assert_int_equal(n, probes[i].ti.df);
                        passed++;
                    }
                }
                qr_segsearch_close(&ss);
                qr_seg_close(s);
                /* verify reads every chunk */
                s = qr_seg_open(bad, &e);
                assert_non_null(s);
                assert_int_equal(qr_seg_verify(s, &e), -1);
                assert_string_equal(e.code, QR_E_CORRUPT);
                snprintf(want, sizeof want, "block %u (kind %u)%s", bi, kinds[ki], chunk);
                if (!strstr(e.msg, want) || !strstr(e.msg, "bad.qseg"))
                    fail_msg("verify message '%s' does not name '%s'", e.msg, want);
                qr_seg_close(s);
            }
        }
    }
    assert_true(flipped >= 30);
    assert_true(failed > 0 && passed > 10 * failed);
    free(img);
}

/* A count of pattern t over segment s alone, into *n (0), or -1 with e. */
static int count_text(qr_segment *s, const char *t, uint64_t *n, qr_err *e)
{
    qr_par_search ps;
    if (qr_par_init(&ps, tu_otel(), &s, 1, t, strlen(t), 1, e) != 0)
        return -1;
    int rc = qr_par_count(&ps, n, e);
    qr_par_free(&ps);
    return rc;
}

/* Patterns whose counts walk the dictionary by its masks: in format 13
 * Body's by the variable masks (the chunks holding those are read by
 * nothing else), a fuzzy term's a length at a time. */
static const char *const mask_patterns[] = {"like:%tion", "/c.che/", "like:%0%", "like:%a1%",
                                            "like:%ed",   "cahce~1", "failde~1", "paymnet~2"};
#define NMASK_PATTERNS (sizeof mask_patterns / sizeof *mask_patterns)

/* The term index (format 9 records, masks, format 13 variable masks,
 * first terms) is verified as seeks and walks read it, not whole when a
 * field opens: a byte flipped in any of its chunks still opens (but for
 * the header's chunk, which the open reads), every count that reads the
 * chunk fails with XX001 naming it, and every other count is right; each
 * chunk is read by some count; verify finds every one. */
static void test_flipped_term_index_chunk(void **st)
{
    (void)st;
    size_t len;
    char bad[4200];
    unsigned char *img = good_copy(&len, bad, sizeof bad);
    static const uint16_t secs[] = {SEC_BODY, SEC_KW_TRACE};
    int chunks = 0;
    uint64_t want[NMASK_PATTERNS];
    qr_err ge;
    for (size_t i = 0; i < NMASK_PATTERNS; i++)
        if (count_text(gs, mask_patterns[i], &want[i], &ge) != 0)
            fail_msg("%s: %s", mask_patterns[i], ge.msg);
    for (size_t si = 0; si < 2; si++) {
        const qr_section *sec = qr_seg_section(gs, secs[si]);
        const qr_blockref *b = kind_block(sec, IBLK_TERMINDEX);
        assert_non_null(b);
        uint32_t nc = b->chunk_shift ? b->nchunks : 1;
        for (uint32_t c = 0; c < nc; c++) {
            spit_flipped(bad, img, len, b, c);
            chunks++;
            qr_err e;
            qr_segment *s = qr_seg_open(bad, &e);
            assert_non_null(s);
            qr_segsearch ss;
            qr_segsearch_init(&ss, s);
            int failed = 0;
            for (int i = 0; i < nprobes; i++) {
                if (probes[i].sec != secs[si])
                    continue;
                uint64_t n = 0;
                qr_err_clear(&e);
                if (count_probe(&ss, &probes[i], &n, &e) != 0) {
                    assert_string_equal(e.code, QR_E_CORRUPT);
                    assert_non_null(strstr(e.msg, "bad.qseg"));
                    assert_non_null(strstr(e.msg, "(TERMINDEX)"));
                    assert_non_null(strstr(e.msg, "checksum mismatch"));
                    failed++;
                } else {
                    assert_int_equal(n, probes[i].ti.df); /* never a wrong answer */
                }
            }
            for (size_t i = 0; secs[si] == SEC_BODY && i < NMASK_PATTERNS; i++) {
                uint64_t n = 0;
                qr_err_clear(&e);
                if (count_text(s, mask_patterns[i], &n, &e) != 0) {
                    assert_string_equal(e.code, QR_E_CORRUPT);
                    if (!strstr(e.msg, "bad.qseg") || !strstr(e.msg, "(TERMINDEX)"))
                        fail_msg("%s: %s", mask_patterns[i], e.msg);
                    failed++;
                } else {
                    assert_int_equal(n, want[i]);
                }
            }
            if (!failed)
                fail_msg("%s term index chunk %u flipped: no count read it", sec_name(secs[si]), c);
            qr_segsearch_close(&ss);
            qr_seg_close(s);
            s = qr_seg_open(bad, &e);
            assert_non_null(s);
            assert_int_equal(qr_seg_verify(s, &e), -1);
            assert_string_equal(e.code, QR_E_CORRUPT);
            qr_seg_close(s);
        }
    }
    assert_true(chunks >= 3);
    free(img);
}

/* A phrase walk verifies its words' positions; a count of the same word alone
 * reads none of them, and the norms only scoring reads. A phrase count
 * over a segment without deletions is the rows of the shapes whose text
 * holds it: it reads no positions either, unless shapes are off. */
static void test_positions_and_norms_are_read_by_their_users(void **st)
{
    (void)st;
    size_t len;
    char bad[4200];
    unsigned char *img = good_copy(&len, bad, sizeof bad);
    qr_invfield f;
    qr_err e;
    assert_int_equal(qr_invfield_open(&f, gs, SEC_BODY, &e), 0);
    qr_terminfo ti;
    assert_int_equal(qr_tdict_lookup(&f.dict, "failed", 6, &ti, &e), 1);
    assert_true(ti.pos_len > 0);
    const qr_blockref *pb = f.pos_ref, *nb = f.norms_ref;
    qr_invfield_close(&f);
    static const char *const phrase = "\"failed to place order\"";
    for (int which = 0; which < 2; which++) {
        size_t at = which == 0 ? (size_t)(pb->offset + ti.pos_off + ti.pos_len / 2)
                               : (size_t)(nb->offset + nb->length / 2);
        img[at] ^= 0x5a;
        spit(bad, img, len);
        img[at] ^= 0x5a;
        qr_segment *s = qr_seg_open(bad, &e);
        assert_non_null(s);
        /* counts: 'failed' alone is right; the phrase reads failed's positions */
        const char *qs[] = {"failed", phrase};
        for (int q = 0; q < 2; q++) {
            qr_arena a;
            qr_arena_init(&a, 1 << 16, 0);
            qr_query *qq = qr_query_parse(qs[q], strlen(qs[q]), &a, &e);
            assert_non_null(qq);
            qr_segsearch ss, ok;
            qr_segsearch_init(&ss, s);
            qr_segsearch_init(&ok, gs);
            uint64_t n, want;
            assert_int_equal(qr_segsearch_count(&ok, qq, &a, &want, &e), 0);
            qr_err_clear(&e);
            /* counted by the shapes' text first: no positions read */
            int rc = qr_segsearch_count(&ss, qq, &a, &n, &e);
            if (rc != 0)
                fail_msg("%s: %s", qs[q], e.msg);
            assert_int_equal(n, want);
            if (which == 0 && q == 1) { /* walked, it reads them */
                qr_segsearch_close(&ss);
                qr_segsearch_init(&ss, s);
                setenv("QUARRY_NO_SHAPES", "1", 1);
                rc = qr_segsearch_count(&ss, qq, &a, &n, &e);
                unsetenv("QUARRY_NO_SHAPES");
                assert_int_equal(rc, -1);
                assert_string_equal(e.code, QR_E_CORRUPT);
                if (!strstr(e.msg, "(POSITIONS) chunk") || !strstr(e.msg, "bad.qseg"))
                    fail_msg("%s", e.msg);
            }
            qr_segsearch_close(&ss);
            qr_segsearch_close(&ok);
            qr_query_release(qq);
            qr_arena_free(&a);
        }
        /* scoring reads the norms (of any row): by score fails, by time not */
        for (int by = QR_BY_SCORE; by <= QR_BY_TIME; by++) {
            qr_par_search ps;
            qr_hit hits[10];
            uint32_t nh;
            qr_err_clear(&e);
            assert_int_equal(qr_par_init(&ps, tu_otel(), &s, 1, "failed", 6, 1, &e), 0);
            int rc = qr_par_topk(&ps, (qr_topk_by)by, 10, 0, hits, &nh, NULL, &e);
            if (which == 1 && by == QR_BY_SCORE) {
                assert_int_equal(rc, -1);
                if (!strstr(e.msg, "(NORMS) chunk"))
                    fail_msg("%s", e.msg);
            } else {
                assert_int_equal(rc, 0);
            }
            qr_par_free(&ps);
        }
        qr_seg_close(s);
    }
    free(img);
}

/* A segment of 40,000 generated rows (masks over several chunks) built
 * with 1 KiB chunks at dir/name (its path into path), opened. */
static qr_segment *open_big(char *path, size_t cap, const char *name)
{
    enum { BIG = 40000 };
    char *text = gen_text(11, BIG);
    snprintf(path, cap, "%s/%s", dir, name);
    build(path, text, BIG, SHIFT);
    free(text);
    qr_err e;
    qr_segment *s = qr_seg_open(path, &e);
    assert_non_null(s);
    return s;
}

/* A walk asking for blocks by their byte classes verifies the masks a
 * chunk at a time, as far as the block it finds: not those to the end. */
static void test_masks_verified_as_far_as_found(void **st)
{
    (void)st;
    char path[4200];
    qr_segment *s = open_big(path, sizeof path, "big.qseg");
    qr_err e;
    qr_invfield f;
    assert_int_equal(qr_invfield_open(&f, s, SEC_BODY, &e), 0);
    const qr_tdict *d = &f.dict;
    size_t at0 = QR_TDICT_HEADER + (size_t)d->nblocks * QR_TDICT_REC;
    assert_true((size_t)d->nblocks * 8 > 3u << SHIFT); /* masks over several chunks */
    /* the first block holding a digit (ids' blocks: near the start), then
     * one needing every class (none has them all: to the end) */
    uint64_t digit = 1ull << qr_tdict_byte_class('7');
    uint32_t b = 0;
    assert_int_equal(qr_tdict_find_mask(d, 0, digit, &b, &e), 0);
    assert_true(b < d->nblocks && (d->blk_mask[b] & digit));
    for (uint32_t i = 0; i < b; i++)
        assert_false(d->blk_mask[i] & digit);
    assert_true(qr_seg_checked(s, d->iref, at0, (size_t)(b + 1) * 8));
    assert_false(qr_seg_checked(s, d->iref, at0 + (size_t)d->nblocks * 8 - 1, 1));
    assert_int_equal(qr_tdict_find_mask(d, b + 1, ~0ull, &b, &e), 0);
    assert_int_equal(b, d->nblocks);
    assert_true(qr_seg_checked(s, d->iref, at0, (size_t)d->nblocks * 8));
    qr_invfield_close(&f);
    qr_seg_close(s);
    unlink(path);
}

/* A fuzzy term's count scans the variable masks of the lengths its
 * matches may have, verified before they are read, and no others:
 * failde~1's lengths 5 to 7 are checked after the count, the masks of the
 * longest terms (hex ids, at the end) are not. */
static void test_fuzzy_count_verifies_the_masks_it_scans(void **st)
{
    (void)st;
    char path[4200];
    qr_segment *s = open_big(path, sizeof path, "fuzzy.qseg");
    qr_err e;
    uint64_t n = 0;
    assert_int_equal(count_text(s, "failde~1", &n, &e), 0);
    assert_true(n > 0);
    qr_invfield f;
    assert_int_equal(qr_invfield_open(&f, s, SEC_BODY, &e), 0);
    const qr_tdict *d = &f.dict;
    assert_non_null(d->blk_vmask);
    uint32_t lo, hi;
    assert_int_equal(qr_tdict_len_start(d, 5, &lo, &e), 0);
    assert_int_equal(qr_tdict_len_start(d, 8, &hi, &e), 0);
    assert_true(lo < hi && (size_t)(d->nblocks - hi) * 8 > 2u << SHIFT);
    size_t at0 = qr_tdict_vmasks_at(d);
    assert_true(qr_seg_checked(s, d->iref, at0 + (size_t)lo * 8, (size_t)(hi - lo) * 8));
    assert_false(qr_seg_checked(s, d->iref, at0 + (size_t)d->nblocks * 8 - 1, 1));
    qr_invfield_close(&f);
    qr_seg_close(s);
    unlink(path);
}

/* Reading a few rows' shape numbers (a pattern's variable matches, the
 * deleted rows) verifies the SHAPES header and the chunks holding those
 * numbers, not the shapes' text: a byte flipped in the text leaves them
 * right, one flipped in the header is XX001 naming SHAPES. */
static void test_shape_numbers_read_the_header_alone(void **st)
{
    (void)st;
    size_t len;
    char bad[4200];
    unsigned char *img = good_copy(&len, bad, sizeof bad);
    qr_err e;
    qr_invfield f;
    assert_int_equal(qr_invfield_open(&f, gs, SEC_BODY, &e), 0);
    assert_int_equal(qr_invfield_load_shapes(&f, &e), 0);
    const qr_shapes *all = qr_invfield_shapes(&f);
    assert_non_null(all);
    size_t hdr = (size_t)(all->dict - f.shapes_map);
    assert_true(all->dict_len > 3u << SHIFT); /* text over several chunks */
    /* a chunk of text alone: neither the header nor any row's number */
    uint64_t mid = ((hdr + all->dict_len / 2) >> SHIFT) << SHIFT;
    assert_true(mid >= hdr && mid + (1u << SHIFT) <= hdr + all->dict_len);
    uint64_t text_at = f.shapes_ref->offset + mid + 5;
    uint32_t want[ROWS];
    for (uint32_t r = 0; r < ROWS; r++)
        want[r] = qr_shape_of(all, r);
    qr_invfield_close(&f);
    for (int flip = 0; flip < 3; flip++) { /* none, the text's last byte, the header */
        size_t at = flip == 1 ? (size_t)text_at : (size_t)f.shapes_ref->offset + 4;
        /* the header: K's lowest bit, which keeps it parsing (the width K
         * takes is the same): only its checksum tells */
        unsigned char x = flip == 2 ? 0x01 : 0x21;
        if (flip)
            img[at] ^= x;
        spit(bad, img, len);
        if (flip)
            img[at] ^= x;
        qr_segment *s = qr_seg_open(bad, &e);
        assert_non_null(s);
        qr_invfield g;
        assert_int_equal(qr_invfield_open(&g, s, SEC_BODY, &e), 0);
        const qr_shapes *sh = NULL;
        int rc = qr_invfield_shape_numbers(&g, &sh, &e);
        if (flip == 2) {
            assert_int_equal(rc, -1);
            assert_string_equal(e.code, QR_E_CORRUPT);
            if (!strstr(e.msg, "SHAPES") || !strstr(e.msg, "bad.qseg"))
                fail_msg("%s", e.msg);
        } else {
            if (rc != 0)
                fail_msg("%s", e.msg);
            assert_non_null(sh);
            assert_true(qr_seg_checked(s, g.shapes_ref, 0, hdr));
            assert_false(qr_seg_checked(s, g.shapes_ref, mid, 1));
            for (uint32_t r = 0; r < ROWS; r += 97) {
                uint32_t j;
                assert_int_equal(qr_invfield_row_shape(&g, sh, r, &j, &e), 0);
                assert_int_equal(j, want[r]);
            }
            assert_false(qr_seg_checked(s, g.shapes_ref, mid, 1));
        }
        qr_invfield_close(&g);
        qr_seg_close(s);
    }
    free(img);
}

/* ---- threads sharing one segment ---- */
typedef struct reader {
    qr_segment *s;
    const qr_blockref *bad_b; /* in gs's directory: the damaged chunk, or NULL */
    uint32_t bad_c;
    int id, wrong;
    qr_err first;
} reader;

static void *read_all(void *arg)
{
    reader *r = arg;
    qr_segsearch ss;
    qr_segsearch_init(&ss, r->s);
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < nprobes; k++) {
            const probe *p = &probes[(k * 7 + r->id * 53 + round * 11) % nprobes];
            uint64_t n = 0;
            qr_err e;
            qr_err_clear(&e);
            int rc = count_probe(&ss, p, &n, &e);
            int expect_fail = r->bad_b && probe_reads(p, r->bad_b, r->bad_c);
            if (expect_fail ? rc == 0 || strcmp(e.code, QR_E_CORRUPT) != 0
                            : rc != 0 || n != p->ti.df) {
                if (!r->wrong++)
                    r->first = e;
            }
        }
    qr_segsearch_close(&ss);
    return NULL;
}

static void run_readers(const char *path, const qr_blockref *bad_b, uint32_t bad_c)
{
    qr_err e;
    qr_segment *s = qr_seg_open(path, &e);
    assert_non_null(s);
    enum { N = 4 };
    reader rs[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        rs[i] = (reader){s, bad_b, bad_c, i, 0, {{0}, {0}}};
        assert_int_equal(pthread_create(&th[i], NULL, read_all, &rs[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        if (rs[i].wrong)
            fail_msg("reader %d: %d wrong answers, first: %s", i, rs[i].wrong, rs[i].first.msg);
    }
    qr_seg_close(s);
}

/* 4 threads count the same terms of one shared segment at once, so they
 * verify the same chunks at the same time (clean under ASan; TSan by hand:
 * docs/ARCHITECTURE.md), intact and with a damaged dictionary chunk. */
static void test_concurrent_readers_share_verification(void **st)
{
    (void)st;
    run_readers(good, NULL, 0);
    const qr_blockref *b = kind_block(qr_seg_section(gs, SEC_BODY), IBLK_TERMDICT);
    uint32_t c = b->nchunks / 2;
    size_t len;
    unsigned char *img = slurp(good, &len);
    img[b->offset + ((uint64_t)c << b->chunk_shift) + 7] ^= 1;
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/bad-mt.qseg", dir);
    spit(bad, img, len);
    free(img);
    run_readers(bad, b, c);
}

/* ---- format 8 ---- */
/* tests/data/v8_otel_150_seed11.qseg was written by the format 8 writer
 * (`quarry gen --rows 150 --seed 11 | quarry ingest`, before chunks): it
 * verifies, reads row for row, and answers every query as the same rows
 * written now do. */
static const char *v8_queries[] = {"failed",
                                   "error OR failed",
                                   "failed AND order",
                                   "ord*",
                                   "\"failed to place order\"",
                                   "/c.che/",
                                   "cahce~1",
                                   "like:%tion",
                                   "service:cart",
                                   "severity:ERROR",
                                   "sevnum:>=13",
                                   "error -cache",
                                   "atleast(2, error, failed, cache)"};

/* Every query of v8_queries counts and ranks the same on both segments. */
static void same_answers(qr_segment *old, qr_segment *cur)
{
    qr_err e;
    for (size_t q = 0; q < sizeof v8_queries / sizeof *v8_queries; q++) {
        const char *t = v8_queries[q];
        uint64_t count[2];
        qr_hit hits[2][20];
        uint32_t nh[2];
        qr_segment *segs[2] = {old, cur};
        for (int v = 0; v < 2; v++) {
            qr_par_search ps;
            if (qr_par_init(&ps, tu_otel(), &segs[v], 1, t, strlen(t), 1, &e) != 0 ||
                qr_par_count(&ps, &count[v], &e) != 0 ||
                qr_par_topk(&ps, QR_BY_SCORE, 20, 0, hits[v], &nh[v], NULL, &e) != 0)
                fail_msg("%s: %s", t, e.msg);
            qr_par_free(&ps);
        }
        assert_int_equal(count[0], count[1]);
        assert_int_equal(nh[0], nh[1]);
        assert_memory_equal(hits[0], hits[1], sizeof(qr_hit) * nh[0]);
    }
}

/* The two segment files read back the same rows (their NDJSON). */
static void same_rows(const char *p1, const char *p2)
{
    qr_err e;
    qr_buf a, b;
    qr_buf_init(&a);
    qr_buf_init(&b);
    assert_int_equal(tu_seg_json(p1, &a, &e), 0);
    assert_int_equal(tu_seg_json(p2, &b, &e), 0);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.p, b.p, a.len);
    qr_buf_free(&a);
    qr_buf_free(&b);
}

/* Fixture `path`, a segment of an old writer: open, of format `version`,
 * and every block verifies. */
static qr_segment *open_fixture(const char *path, uint32_t version)
{
    qr_err e;
    qr_segment *s = qr_seg_open(path, &e);
    if (!s)
        fail_msg("%s (run from the repository root)", e.msg);
    assert_int_equal(s->version, version);
    assert_int_equal(qr_seg_verify(s, &e), 0);
    return s;
}

/* The fixtures' rows (`quarry gen --rows rows --seed 11`) as this build
 * writes them, at dir/name (path in now, 4200 bytes), opened. */
static qr_segment *rewrite(char *now, const char *name, int rows, uint8_t shift)
{
    char *text = gen_text(11, rows);
    snprintf(now, 4200, "%s/%s", dir, name);
    build(now, text, (uint32_t)rows, shift);
    free(text);
    qr_err e;
    qr_segment *cur = qr_seg_open(now, &e);
    if (!cur)
        fail_msg("%s", e.msg);
    assert_int_equal(cur->version, QR_SEG_VERSION);
    return cur;
}

static void test_format8_segment_reads(void **st)
{
    (void)st;
    const char *fixture = "tests/data/v8_otel_150_seed11.qseg";
    qr_err e;
    qr_segment *old = open_fixture(fixture, 8);
    for (size_t i = 0; i < old->nall; i++)
        assert_int_equal(old->all_blocks[i].nchunks, 1);
    char now[4200];
    qr_segment *cur = rewrite(now, "v9.qseg", 150, QR_SEG_CHUNK_SHIFT_MIN);
    same_rows(fixture, now);
    same_answers(old, cur);
    /* a byte flipped in a block: named as format 8 names it (no chunk) */
    const qr_blockref *pb = kind_block(qr_seg_section(old, SEC_BODY), IBLK_TERMDICT);
    size_t len;
    unsigned char *img = slurp(fixture, &len);
    img[pb->offset + pb->length / 2] ^= 1;
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/v8-bad.qseg", dir);
    spit(bad, img, len);
    free(img);
    qr_segment *s = qr_seg_open(bad, &e);
    assert_non_null(s);
    qr_par_search ps;
    uint64_t n;
    assert_int_equal(qr_par_init(&ps, tu_otel(), &s, 1, "failed", 6, 1, &e), 0);
    assert_int_equal(qr_par_count(&ps, &n, &e), -1);
    assert_string_equal(e.code, QR_E_CORRUPT);
    if (!strstr(e.msg, "(TERMDICT) (offset") || strstr(e.msg, "chunk"))
        fail_msg("%s", e.msg);
    qr_par_free(&ps);
    qr_seg_close(s);
    qr_seg_close(cur);
    qr_seg_close(old);
}

/* Another format 8 segment of the old writer, of a table with a column of
 * every type and full-text, paths and range indexes (fuzz/seeds.sh's wide
 * table): every block verifies, every row reads, every term of every index
 * and its postings and positions decode. */
/* A format 9 segment of the old writer (`quarry gen --rows 1000 --seed
 * 11 | quarry ingest`, every block directory in the footer) reads, verifies
 * and answers as its format 10 rewrite does, whose paged and id columns
 * keep their directories out of line and read them on first use. */
static void test_format9_segment_reads(void **st)
{
    (void)st;
    const char *fixture = "tests/data/v9_otel_1000_seed11.qseg";
    qr_err e;
    qr_segment *old = open_fixture(fixture, 9);
    for (uint32_t c = 0; c < old->ncols; c++)
        assert_false(old->cols[c].lazy);
    char now[4200];
    qr_segment *cur = rewrite(now, "v10.qseg", 1000, QR_SEG_CHUNK_SHIFT);
    int body = qr_seg_col(cur, "Body"), lazy = 0;
    assert_true(body >= 0);
    assert_true(cur->cols[body].lazy);
    for (uint32_t c = 0; c < cur->ncols; c++) {
        lazy += cur->cols[c].lazy;
        assert_int_equal(cur->cols[c].loaded, !cur->cols[c].lazy);
    }
    same_answers(old, cur); /* searching reads no column directory */
    for (uint32_t c = 0; c < cur->ncols; c++)
        assert_int_equal(cur->cols[c].loaded, !cur->cols[c].lazy);
    same_rows(fixture, now);
    assert_int_equal(qr_seg_verify(cur, &e), 0);
    for (uint32_t c = 0; c < cur->ncols; c++) {
        assert_true(cur->cols[c].loaded);
        assert_int_equal(cur->cols[c].nblocks, old->cols[c].nblocks);
        for (uint32_t i = 0; i < cur->cols[c].nblocks; i++) {
            assert_int_equal(cur->cols[c].blocks[i].kind, old->cols[c].blocks[i].kind);
            assert_int_equal(cur->cols[c].blocks[i].rows, old->cols[c].blocks[i].rows);
        }
    }
    assert_true(lazy >= 1); /* Body at least (1000 ids fit in 2 pages) */
    qr_seg_close(cur);
    qr_seg_close(old);
}

/* Format 12 keeps the chunk checksums in a table just before the footer,
 * read where it is mapped: it holds exactly each chunked block's
 * checksums in directory order (recomputed here from the file's bytes),
 * and a byte flipped anywhere in it fails the open, naming the table. */
static void test_checksum_table(void **st)
{
    (void)st;
    size_t len;
    unsigned char *img = slurp(good, &len);
    uint64_t foot_off = qr_load_u64(img + len - QR_SEG_TRAILER_LEN);
    assert_true(gs->nsums > 100);
    assert_int_equal(gs->data_end + gs->nsums * 4, foot_off);
    assert_ptr_equal(gs->chunk_sums, gs->map + gs->data_end);
    assert_null(gs->own_sums);
    size_t next = 0;
    for (size_t i = 0; i < gs->nall; i++) { /* footer order: columns, then sections */
        const qr_blockref *b = &gs->all_blocks[i];
        if (!b->chunk_shift)
            continue;
        assert_int_equal(b->sum0, next);
        for (uint32_t c = 0; c < b->nchunks; c++) {
            uint64_t at = (uint64_t)c << b->chunk_shift;
            uint64_t n =
                b->length - at < (1ull << b->chunk_shift) ? b->length - at : 1ull << b->chunk_shift;
            assert_int_equal(qr_load_u32(img + gs->data_end + (next + c) * 4),
                             qr_checksum32(img + b->offset + at, (size_t)n));
        }
        next += b->nchunks;
    }
    assert_int_equal(next, gs->nsums);
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/sums.qseg", dir);
    for (size_t at = gs->data_end; at < foot_off; at += 3) {
        img[at] ^= 0x10;
        spit(bad, img, len);
        img[at] ^= 0x10;
        qr_err e;
        assert_null(qr_seg_open(bad, &e));
        assert_string_equal(e.code, QR_E_CORRUPT);
        if (!strstr(e.msg, "sums.qseg") || !strstr(e.msg, "chunk checksum table"))
            fail_msg("byte %zu of the table flipped: %s", at, e.msg);
    }
    free(img);
}

/* A format 11 segment of the old writer (`quarry gen --rows 1000 --seed
 * 11 | quarry ingest`: chunk checksums inside the footer's entries, copied
 * out at open) reads, verifies and answers as its rewrite by this writer
 * does, with the same checksums but for Body's term index (which format
 * 13 gives its variable masks), and verify names a byte flipped in any
 * chunk of its term dictionary. */
/* Block a of segment `from` in segment `to`: a column's at the same place,
 * an index's the block of its kind in the same section (a writer may lay
 * an index's blocks out in another order). */
static const qr_blockref *same_block(const qr_segment *from, const qr_blockref *a,
                                     const qr_segment *to)
{
    for (uint32_t i = 0; i < from->nsecs; i++) {
        const qr_section *fs = &from->secs[i];
        if (a < fs->blocks || a >= fs->blocks + fs->nblocks)
            continue;
        const qr_section *ts = qr_seg_section(to, fs->id);
        assert_non_null(ts);
        for (uint32_t k = 0; k < ts->nblocks; k++)
            if (ts->blocks[k].kind == a->kind)
                return &ts->blocks[k];
        fail_msg("section %u has no block of kind %u", fs->id, a->kind);
    }
    return &to->all_blocks[a - from->all_blocks];
}

static void test_format11_segment_reads(void **st)
{
    (void)st;
    const char *fixture = "tests/data/v11_otel_1000_seed11.qseg";
    qr_err e;
    qr_segment *old = open_fixture(fixture, 11);
    assert_true(old->nsums > 10);
    assert_ptr_equal(old->chunk_sums, old->own_sums);
    char now[4200];
    qr_segment *cur = rewrite(now, "now.qseg", 1000, QR_SEG_CHUNK_SHIFT);
    assert_null(cur->own_sums);
    assert_int_equal(cur->nall, old->nall);
    uint32_t grown = 0, extra = 0;
    for (size_t i = 0; i < cur->nall; i++) {
        const qr_blockref *a = &old->all_blocks[i], *b = same_block(old, a, cur);
        if (a->kind == IBLK_TERMINDEX && a->length != b->length) {
            const qr_section *bs = qr_seg_section(cur, SEC_BODY);
            assert_true(b >= bs->blocks && b < bs->blocks + bs->nblocks); /* Body's alone */
            assert_true(b->length > a->length);
            grown++;
            /* (a block of one chunk has no checksums in the table) */
            extra += (b->chunk_shift ? b->nchunks : 0) - (a->chunk_shift ? a->nchunks : 0);
            continue;
        }
        assert_int_equal(a->nchunks, b->nchunks);
        for (uint32_t c = 0; a->chunk_shift && c < a->nchunks; c++)
            assert_int_equal(qr_load_u32(old->chunk_sums + ((size_t)a->sum0 + c) * 4),
                             qr_load_u32(cur->chunk_sums + ((size_t)b->sum0 + c) * 4));
    }
    assert_int_equal(grown, 1);
    assert_int_equal(cur->nsums, old->nsums + extra);
    same_answers(old, cur);
    same_rows(fixture, now);
    /* each chunk of Body's term dictionary flipped in turn: verify names it */
    const qr_section *sec = qr_seg_section(old, SEC_BODY);
    const qr_blockref *pb = kind_block(sec, IBLK_TERMDICT);
    assert_non_null(pb);
    assert_true(pb->chunk_shift && pb->nchunks >= 2);
    size_t len;
    unsigned char *img = slurp(fixture, &len);
    char bad[4200];
    snprintf(bad, sizeof bad, "%s/v11-bad.qseg", dir);
    for (uint32_t c = 0; c < pb->nchunks; c++) {
        spit_flipped(bad, img, len, pb, c);
        qr_segment *s = qr_seg_open(bad, &e);
        assert_non_null(s);
        assert_int_equal(qr_seg_verify(s, &e), -1);
        assert_string_equal(e.code, QR_E_CORRUPT);
        char want[100];
        snprintf(want, sizeof want, "chunk %u of %u", c, pb->nchunks);
        if (!strstr(e.msg, want) || !strstr(e.msg, "checksum mismatch"))
            fail_msg("verify message '%s' does not name '%s'", e.msg, want);
        qr_seg_close(s);
    }
    free(img);
    qr_seg_close(cur);
    qr_seg_close(old);
}

static void test_format8_every_index_kind_reads(void **st)
{
    (void)st;
    qr_err e;
    qr_segment *s = qr_seg_open("tests/data/v8_wide_types.qseg", &e);
    if (!s)
        fail_msg("%s (run from the repository root)", e.msg);
    assert_int_equal(s->version, 8);
    assert_int_equal(qr_seg_verify(s, &e), 0);
    qr_tabdef *d = qr_seg_tabdef(s, &e);
    assert_non_null(d);
    qr_colreader **rd = calloc(d->ncols, sizeof *rd);
    assert_int_equal(qr_row_readers_open(s, d, rd, &e), 0);
    qr_buf out;
    qr_buf_init(&out);
    for (uint32_t r = 0; r < s->rows; r++)
        assert_int_equal(qr_row_json(d, rd, r, &out, &e), 0);
    assert_true(out.len > 0);
    qr_buf_free(&out);
    qr_row_readers_close(d, rd);
    free(rd);
    qr_tabdef_free(d);
    assert_true(s->nsecs >= 5);
    for (uint32_t i = 0; i < s->nsecs; i++) {
        qr_invfield f;
        assert_int_equal(qr_invfield_open(&f, s, s->secs[i].id, &e), 0);
        assert_int_equal(qr_invfield_load_positions(&f, &e), 0);
        qr_titer it;
        uint64_t terms = 0;
        for (int r = qr_tdict_seek(&f.dict, &it, "", 0, &e); r == 1;
             r = qr_titer_next(&it, &e), terms++) {
            qr_terminfo ti;
            assert_int_equal(qr_titer_info(&it, &ti, &e), 0);
            qr_pcursor c;
            assert_int_equal(qr_invfield_cursor(&f, &ti, &c, &e), 0);
            uint32_t docs = 0, pos[64];
            for (uint32_t doc = qr_pc_next(&c); doc != QR_NO_DOC; doc = qr_pc_next(&c), docs++)
                if (f.def.positions)
                    assert_true(qr_pc_positions(&c, pos, 64) >= 1);
            assert_false(c.corrupt);
            assert_int_equal(docs, ti.df);
        }
        assert_int_equal(terms, f.dict.nterms);
        qr_invfield_close(&f);
    }
    qr_seg_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_are_chunked),
        cmocka_unit_test(test_flipped_chunk_fails_only_its_readers),
        cmocka_unit_test(test_flipped_term_index_chunk),
        cmocka_unit_test(test_positions_and_norms_are_read_by_their_users),
        cmocka_unit_test(test_shape_numbers_read_the_header_alone),
        cmocka_unit_test(test_masks_verified_as_far_as_found),
        cmocka_unit_test(test_fuzzy_count_verifies_the_masks_it_scans),
        cmocka_unit_test(test_concurrent_readers_share_verification),
        cmocka_unit_test(test_format8_segment_reads),
        cmocka_unit_test(test_format8_every_index_kind_reads),
        cmocka_unit_test(test_format9_segment_reads),
        cmocka_unit_test(test_checksum_table),
        cmocka_unit_test(test_format11_segment_reads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
