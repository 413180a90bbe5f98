/* fuzz_wal.c - libFuzzer target for the write-ahead log's replay
 * (index/wal.c): the input becomes one or two log files of a scratch table
 * directory (byte 0 bit 0: two, split where bytes 1-2 say; the second
 * named by the first record number its header gives), byte 3 picks
 * the manifest's wal_seq (0-3); the log is opened, every record handed out
 * is walked as a payload of rows (sql/live.h), one record is appended and
 * the log reopened. Damage must be cut (the newest file) or refused
 * (XX001, an older one), never a crash, a hang or an out-of-bounds read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_tmp.h"
#include "index/wal.h"
#include "sql/live.h"

static char dir[4096];

static int row(void *arg, const char *line, size_t n, qr_err *e)
{
    (void)e;
    size_t *sum = arg;
    for (size_t i = 0; i < n; i++)
        *sum += (unsigned char)line[i];
    return 0;
}

static int rec(void *arg, uint64_t seq, const unsigned char *p, size_t n, qr_err *e)
{
    (void)seq;
    qr_live_each_row(p, n, row, arg, e); /* a bad payload is an error, not a crash */
    return 0;
}

static void put(uint64_t first, const uint8_t *p, size_t n)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/wal-%016llx.log", dir, (unsigned long long)first);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (n && fwrite(p, 1, n, f) != n)
        abort();
    fclose(f);
}

static void clean(void)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -f '%s'/wal-*.log", dir);
    if (system(cmd) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        fuzz_tmp_path(dir, sizeof dir, "quarry-fuzz-wal-XXXXXX");
        if (!mkdtemp(dir))
            abort();
    }
    if (size < 4)
        return 0;
    int two = data[0] & 1;
    size_t cut = (size_t)data[1] << 8 | data[2];
    uint64_t after = data[3] & 3;
    data += 4;
    size -= 4;
    if (cut > size)
        cut = size;
    clean();
    if (two) { /* the second named as its header says, when it says */
        uint64_t first2 = 2;
        if (size - cut >= 16)
            memcpy(&first2, data + cut + 8, 8);
        put(1, data, cut);
        put(first2 > 1 && first2 < (1u << 20) ? first2 : 2, data + cut, size - cut);
    } else {
        put(1, data, size);
    }
    size_t sum = 0;
    qr_err e;
    qr_wal *w = qr_wal_open(dir, after, 0, rec, &sum, &e);
    if (w) {
        uint64_t seq;
        if (qr_wal_write(w, "\x02\x00\x00\x00{}", 6, &seq, &e) == 0)
            qr_wal_sync(w, seq, &e);
        qr_wal_close(w);
        w = qr_wal_open(dir, after, 0, rec, &sum, &e);
        if (!w)
            abort(); /* what the log wrote itself must read back */
        qr_wal_close(w);
    }
    return 0;
}
