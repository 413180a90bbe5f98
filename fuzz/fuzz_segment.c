/* fuzz_segment.c - libFuzzer target for the segment reader: any bytes as a
 * segment file must open, verify and read back (through a definition made
 * from the segment's own footer), and each index section must open and
 * have its dictionary walked and searched (term index records verified as
 * seeks read them), without a crash, a hang or a sanitizer report (errors
 * are fine). Seeds: small valid segments of several table shapes.
 * fuzz_segment_nocrc.c is the same with checksums taken as right. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_tmp.h"
#include "format/segment.h"
#include "index/invindex.h"

/* Walk section sec's dictionary (bounded), looking up some of its terms,
 * keys just past them, and reading the blocks' masks. */
static void walk_index(const qr_segment *s, uint16_t sec)
{
    qr_invfield f;
    qr_err e;
    if (qr_invfield_open(&f, s, sec, &e) != 0)
        return;
    qr_titer it;
    int r = qr_tdict_seek(&f.dict, &it, "", 0, &e);
    for (int k = 0; r == 1 && k < 4000; k++) {
        if (k % 37 == 0) {
            char key[QR_MAX_TERM + 2];
            memcpy(key, it.term, it.len);
            key[it.len] = 'z';
            qr_terminfo ti;
            qr_titer at;
            (void)qr_tdict_lookup(&f.dict, key, it.len, &ti, &e);
            (void)qr_tdict_seek(&f.dict, &at, key, it.len + 1, &e);
            uint32_t b;
            (void)qr_tdict_find_mask(&f.dict, it.blk, (uint64_t)k, &b, &e);
        }
        r = qr_titer_next(&it, &e);
    }
    qr_invfield_close(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[4096];
    if (!path[0])
        {
            char name[64];
            snprintf(name, sizeof name, "quarry-fuzz-seg-%d.qseg", (int)getpid());
            fuzz_tmp_path(path, sizeof path, name);
        }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    close(fd);
    qr_err e;
    qr_segment *s = qr_seg_open(path, &e);
    if (!s)
        return 0;
    qr_tabdef *d = qr_seg_tabdef(s, &e);
    qr_colreader **rd = d ? calloc(d->ncols, sizeof *rd) : NULL;
    if (rd && qr_seg_verify(s, &e) == 0 && qr_row_readers_open(s, d, rd, &e) == 0) {
        qr_buf out;
        qr_buf_init(&out);
        for (uint32_t r = 0; r < s->rows && r < 100000; r++) {
            qr_buf_clear(&out);
            if (qr_row_json(d, rd, r, &out, &e) != 0)
                break;
        }
        qr_buf_free(&out);
        qr_row_readers_close(d, rd);
    }
    for (uint32_t i = 0; i < s->nsecs; i++)
        walk_index(s, s->secs[i].id);
    free(rd);
    qr_tabdef_free(d);
    qr_seg_close(s);
    return 0;
}
