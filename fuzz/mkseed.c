/* mkseed.c - write an index fuzz seed (fuzz_index.c input) from a segment:
 * the TERMINDEX, TERMDICT, POSTINGS and POSITIONS blocks of one section.
 * Used by fuzz/seeds.sh; not part of the product. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/segment.h"
#include "index/invfmt.h"
int main(int argc, char **argv) {
    qr_err e; qr_segment *s = qr_seg_open(argv[1], &e); if (!s) { puts(e.msg); return 1; }
    int sec_id = atoi(argv[2]);
    const qr_section *sec = qr_seg_section(s, (uint16_t)sec_id);
    const unsigned char *p[4] = {0}; size_t n[4] = {0};
    int kinds[4] = {IBLK_TERMINDEX, IBLK_TERMDICT, IBLK_POSTINGS, IBLK_POSITIONS};
    for (uint32_t i = 0; i < sec->nblocks; i++) for (int k = 0; k < 4; k++) if (sec->blocks[i].kind == kinds[k]) qr_seg_sec_block(s, sec, i, &p[k], &n[k], &e);
    FILE *f = fopen(argv[3], "wb");
    unsigned char h[7] = {sec_id == 1, n[0] >> 8, n[0] & 255, n[1] >> 8, n[1] & 255, n[2] >> 8, n[2] & 255};
    if (n[0] > 65535 || n[1] > 65535 || n[2] > 65535) { puts("too big"); return 1; }
    fwrite(h, 1, 7, f); for (int k = 0; k < 4; k++) fwrite(p[k], 1, n[k], f); fclose(f); return 0; }
