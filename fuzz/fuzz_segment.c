/* fuzz_segment.c - libFuzzer target for the segment reader: any bytes as a
 * segment file must open, verify and read back without a crash, a hang or
 * a sanitizer report (errors are fine). Seeds: small valid segments. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "format/segment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/quarry-fuzz-seg-%d.qseg", (int)getpid());
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
    if (qr_seg_verify(s, &e) == 0) {
        qr_colreader *rd[QR_OTEL_NCOLS] = {0};
        int ok = 1;
        for (int c = 0; c < QR_OTEL_NCOLS; c++)
            if (!(rd[c] = qr_colr_open(s, c, &e)))
                ok = 0;
        qr_buf out;
        qr_buf_init(&out);
        for (uint32_t r = 0; ok && r < s->rows && r < 100000; r++) {
            qr_buf_clear(&out);
            if (qr_row_json(tu_otel(), rd, r, &out, &e) != 0)
                break;
        }
        qr_buf_free(&out);
        for (int c = 0; c < QR_OTEL_NCOLS; c++)
            qr_colr_close(rd[c]);
    }
    qr_seg_close(s);
    return 0;
}
