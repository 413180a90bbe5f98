/* fuzz_manifest.c - libFuzzer target for a table's manifest and deletion
 * files (index/table.c, index/deletes.c): the input is decoded as a
 * MANIFEST; when it decodes, each entry that names a deletion file is given
 * the input's bytes after the manifest (bytes 0-1 of the input, little
 * endian, are the manifest's length) as that file, read and checked, and the segment-less table
 * directory opened for writing (leftover files removed). Damage must be
 * refused (XX001/XX002), never a crash or an out-of-bounds read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_tmp.h"
#include "index/deletes.h"
#include "index/table.h"
#include "util/popcount.h"

static char dir[4096];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        fuzz_tmp_path(dir, sizeof dir, "quarry-fuzz-man-XXXXXX");
        if (!mkdtemp(dir))
            abort();
    }
    if (size < 2)
        return 0;
    size_t mlen = (size_t)data[0] | (size_t)data[1] << 8;
    size_t split = 2 + (mlen < size - 2 ? mlen : size - 2);
    qr_manifest m;
    qr_err e;
    if (qr_manifest_decode(data + 2, split - 2, "MANIFEST", &m, &e) != 0)
        return 0;
    qr_buf b; /* what decodes encodes to a manifest that decodes the same */
    qr_buf_init(&b);
    qr_manifest_encode(&m, &b);
    qr_manifest again;
    if (b.oom || qr_manifest_decode(b.p, b.len, "again", &again, &e) != 0 ||
        again.nsegs != m.nsegs ||
        (m.nsegs && memcmp(again.segs, m.segs, sizeof *m.segs * m.nsegs) != 0))
        abort();
    free(again.segs);
    qr_buf_free(&b);
    for (uint32_t i = 0; i < m.nsegs && i < 4; i++) {
        const qr_seg_entry *s = &m.segs[i];
        if (!s->del_gen || s->rows > (1u << 20))
            continue;
        char path[4200];
        qr_del_path_in(dir, s->id, s->del_gen, path, sizeof path);
        FILE *f = fopen(path, "wb");
        if (!f)
            abort();
        if (size > split && fwrite(data + split, 1, size - split, f) != size - split)
            abort();
        fclose(f);
        uint64_t *bits;
        if (qr_del_read(dir, s, &bits, &e) == 0) {
            /* what reads is what the entry says */
            if (qr_popcount_words(bits, (size_t)((s->rows + 63) / 64)) != s->deleted)
                abort();
            free(bits);
        }
        unlink(path);
    }
    free(m.segs);
    return 0;
}
