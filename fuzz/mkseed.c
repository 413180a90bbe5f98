/* mkseed.c - fuzz seeds from segments. Used by fuzz/seeds.sh; not part of
 * the product.
 *   mkseed SEG SECTION OUT   an index seed (fuzz_index.c input): the
 *                            TERMINDEX, TERMDICT, POSTINGS and POSITIONS
 *                            blocks of one section
 *   mkseed --chunked NDJSON OUT   an OpenTelemetry segment of those rows
 *                            with 1 KiB chunks, so that even a small seed
 *                            has chunk checksum tables to mutate */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/segfmt.h"
#include "format/segment.h"
#include "index/invfmt.h"
#include "index/invindex.h"
#include "ingest/ndjson.h"

static int chunked(const char *in, const char *out)
{
    FILE *f = fopen(in, "rb");
    if (!f)
        return 1;
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    qr_err e;
    qr_tabdef *d = qr_tabdef_otel("t");
    qr_batch b;
    qr_ndjson nj;
    if (!d || qr_batch_init(&b, d, 100000, &e) != 0 || qr_ndjson_init(&nj, d, NULL) != 0)
        return 1;
    for (char *p = text, *end = text + n; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (qr_ndjson_parse(&nj, &b, p, len, &e) < 0) {
            puts(e.msg);
            return 1;
        }
        p += len + 1;
    }
    qr_seg_opts o;
    qr_seg_opts_default(&o);
    o.chunk_shift = QR_SEG_CHUNK_SHIFT_MIN;
    int rc = qr_segment_build(out, &b, &o, NULL, &e);
    if (rc)
        puts(e.msg);
    qr_ndjson_free(&nj);
    qr_batch_free(&b);
    qr_tabdef_free(d);
    return rc ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "--chunked")) return chunked(argv[2], argv[3]);
    qr_err e; qr_segment *s = qr_seg_open(argv[1], &e); if (!s) { puts(e.msg); return 1; }
    int sec_id = atoi(argv[2]);
    const qr_section *sec = qr_seg_section(s, (uint16_t)sec_id);
    const unsigned char *p[4] = {0}; size_t n[4] = {0};
    int kinds[4] = {IBLK_TERMINDEX, IBLK_TERMDICT, IBLK_POSTINGS, IBLK_POSITIONS};
    for (uint32_t i = 0; i < sec->nblocks; i++) for (int k = 0; k < 4; k++) if (sec->blocks[i].kind == kinds[k]) qr_seg_sec_block(s, sec, i, &p[k], &n[k], &e);
    FILE *f = fopen(argv[3], "wb");
    /* byte 0: bit 0 full text, bit 1 a format 8 term index (fuzz_index.c) */
    unsigned char h[7] = {(sec_id == 1) | (s->version == 8) << 1, n[0] >> 8, n[0] & 255, n[1] >> 8, n[1] & 255, n[2] >> 8, n[2] & 255};
    if (n[0] > 65535 || n[1] > 65535 || n[2] > 65535) { puts("too big"); return 1; }
    fwrite(h, 1, 7, f); for (int k = 0; k < 4; k++) fwrite(p[k], 1, n[k], f); fclose(f); return 0; }
