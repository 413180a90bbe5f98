/* fuzz_index.c - libFuzzer target for the inverted index decoders, below
 * the checksums: the input is split into a term index, a term dictionary,
 * a postings and a positions stream; every term is iterated, looked up and
 * its postings (with their skip tables' block-max data) and positions
 * walked. The first byte says full text (bit 0) and the term index's
 * format (bit 1: format 8's varint entries, else format 9's records).
 * Malformed input must give errors (or
 * corrupt flags), never a crash, a hang or an out-of-bounds read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index/postings.h"
#include "index/termdict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 7)
        return 0;
    int ft = data[0] & 1;
    uint64_t need = 1ull << (data[0] >> 2); /* a byte class for the variable masks' walk */
    uint32_t version = data[0] & 2 ? 8 : QR_SEG_VERSION;
    size_t l1 = (size_t)data[1] << 8 | data[2], l2 = (size_t)data[3] << 8 | data[4];
    size_t l3 = (size_t)data[5] << 8 | data[6];
    data += 7;
    size -= 7;
    if (l1 > size)
        l1 = size;
    if (l2 > size - l1)
        l2 = size - l1;
    if (l3 > size - l1 - l2)
        l3 = size - l1 - l2;
    /* copies of exact size so ASan sees any overread */
    unsigned char *idx = malloc(l1 + 1), *dict = malloc(l2 + 1), *post = malloc(l3 + 1);
    size_t l4 = size - l1 - l2 - l3;
    unsigned char *pos = malloc(l4 + 1);
    memcpy(idx, data, l1);
    memcpy(dict, data + l1, l2);
    memcpy(post, data + l1 + l2, l3);
    memcpy(pos, data + l1 + l2 + l3, l4);
    qr_tdict d;
    qr_err e;
    if (qr_tdict_open(&d, version, idx, l1, dict, l2, ft, ft, "fuzz", &e) == 0) {
        /* format 13: blocks found and counted by their variable masks */
        uint32_t cpl, passing;
        if (d.blk_vmask && qr_tdict_count_masks(&d, need, &passing, &e) == 0)
            for (uint32_t b = 0; qr_tdict_find_vmask(&d, b, need, &b, &e) == 0 && b < d.nblocks;
                 b++)
                if (qr_tdict_block_cpl(&d, b, &cpl, &e) != 0)
                    break;
        qr_titer it;
        int r = qr_tdict_seek(&d, &it, "", 0, &e);
        for (int n = 0; r == 1 && n < 10000; n++) {
            qr_terminfo ti, li;
            (void)qr_tdict_lookup(&d, it.term, it.len, &li, &e);
            qr_pcursor c;
            if (qr_titer_info(&it, &ti, &e) == 0 &&
                qr_pc_open(&c, post, l3, pos, l4, ft, ft, &ti) == 0) {
                /* block-max data of the skip table (top-k reads it undecoded) */
                uint32_t nb = qr_pc_skip_blocks(&c), acc = 0;
                for (uint32_t k = 0; nb > 1 && k < nb; k++) {
                    uint8_t n1, n2;
                    acc += qr_pc_block_last(&c, k) + qr_pc_block_max_tf(&c, k) +
                           qr_pc_block_min_norm(&c, k) + (uint32_t)qr_pc_block_impacts(&c, k, &n1, &n2) +
                           n1 + n2;
                }
                if (acc == 0xdeadbeef)
                    c.doc = 0; /* keep the reads */
                uint32_t positions[64];
                uint32_t prev = 0;
                int first = 1;
                for (uint32_t doc = qr_pc_next(&c), k = 0; doc != QR_NO_DOC && k < 100000;
                     doc = (k & 1) ? qr_pc_next(&c) : qr_pc_advance(&c, doc + 2), k++) {
                    if (!first && doc <= prev)
                        abort(); /* docs must strictly increase */
                    first = 0;
                    prev = doc;
                    if (ft)
                        (void)qr_pc_positions(&c, positions, 64);
                }
            }
            r = qr_titer_next(&it, &e);
        }
        qr_tdict_close(&d);
    }
    free(idx);
    free(dict);
    free(post);
    free(pos);
    return 0;
}
