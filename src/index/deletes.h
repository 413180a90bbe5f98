/* deletes.h - rows removed by DELETE: one immutable deletion file per
 * segment and generation, named by the manifest entry (index/table.h:
 * del_gen, deleted), attached to the segment when a table opens it.
 *
 *   DATA/<table>/del-<segment id>-<generation>.qdel
 *
 * A segment file never changes, so a DELETE writes a new deletion file (the
 * old bits and the new ones) and commits a manifest naming it; readers of
 * the old manifest keep the old file's bits. Merges, VACUUM, retention and
 * CREATE INDEX rewrite rows without the deleted ones (sql/rows.c), which is
 * when the space comes back. Layout in docs/FORMAT.md "Deletion files".
 */
#ifndef QR_DELETES_H
#define QR_DELETES_H

#include <stddef.h>
#include <stdint.h>

#include "format/segment.h"
#include "index/table.h"
#include "util/err.h"

/* Path of the deletion file of segment id at generation gen in dir. */
void qr_del_path_in(const char *dir, uint64_t id, uint64_t gen, char *buf, size_t n);
/* Write the deletion file of segment id (rows rows, bits[] as in
 * qr_segment.deleted, count of them set) at generation gen, atomically and
 * durably (fsync'ed, then renamed into place). 0, or -1 with e set. */
int qr_del_write(const char *dir, uint64_t id, uint64_t gen, uint64_t rows, const uint64_t *bits,
                 uint64_t count, qr_err *e);
/* Read and check the deletion file that manifest entry s names (magic,
 * segment id, rows, count, checksum, no bit past the rows): *bits
 * malloc'ed. XX001 naming the file when it does not check out. */
int qr_del_read(const char *dir, const qr_seg_entry *s, uint64_t **bits, qr_err *e);
/* Attach entry s's deletions to seg (opened from s's file), when it has
 * any. 0, or -1 with e set. */
int qr_del_attach(const char *dir, const qr_seg_entry *s, qr_segment *seg, qr_err *e);
/* Open manifest entry s's segment in dir: the file, the row count checked
 * against the manifest's (XX001), its deletions attached. NULL with e set. */
qr_segment *qr_table_open_segment(const char *dir, const qr_seg_entry *s, qr_err *e);

#endif
