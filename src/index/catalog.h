/* catalog.h - the catalog of a data directory: every table's definition.
 *
 *   DATA/CATALOG        {"format": 1, "generation": N, "tables": [...]}
 *   DATA/CATALOG.lock   flock()ed by whoever changes the catalog
 *
 * The file is JSON (docs/FORMAT.md "CATALOG"; each table in the form of
 * qr_tabdef_to_json). A change takes the lock, re-reads the file, and
 * replaces it atomically (CATALOG.tmp, fsync, rename, fsync of the
 * directory) with the generation one higher, so changes from concurrent
 * processes serialise and none is lost. Readers take no lock: they see the
 * old or the new file, never a mix. A missing CATALOG is an empty catalog.
 */
#ifndef QR_CATALOG_H
#define QR_CATALOG_H

#include <stdint.h>

#include "format/schema.h"
#include "util/err.h"

#define QR_CATALOG_FORMAT 1

typedef struct qr_catalog {
    uint64_t generation; /* +1 per change; 0 when there is no CATALOG yet */
    uint32_t ntables;
    qr_tabdef **tables; /* owned (each, and the array), in creation order */
} qr_catalog;

/* Read DATA/CATALOG into *c (which the caller frees with qr_catalog_free,
 * also after a failure). No CATALOG (or no DATA) gives an empty catalog.
 * Errors: XX002 for a format other than 1 ("catalog DATA/CATALOG: format 2,
 * this build reads 1"); XX001 for malformed JSON or a bad definition,
 * naming the file, line and column ("catalog DATA/CATALOG:7:30: ..."); 58030
 * when the file cannot be read. */
int qr_catalog_load(const char *datadir, qr_catalog *c, qr_err *e);
/* Free the tables and reset *c to empty; safe on an empty catalog. */
void qr_catalog_free(qr_catalog *c);
/* The table named `name` (case-insensitive), or NULL. Owned by c. */
const qr_tabdef *qr_catalog_find(const qr_catalog *c, const char *name);

/* Table names: 1-63 of [A-Za-z0-9_], not starting with a digit (the rule of
 * qr_table_name_ok) and not "CATALOG" in any case (the name of the file that
 * DATA/<table> would collide with). */
int qr_catalog_name_ok(const char *name);

/* Add table d->name with definition d (copied; d stays the caller's).
 * Creates DATA (mode 0755) when missing, takes the lock, re-reads the
 * catalog. When a table of that name (any case) exists: returns 0 with
 * *created = 0 if its definition is qr_tabdef_equal to d, else fails with
 * 42P07 "table X already exists with another definition". Otherwise
 * appends it, writes the catalog and sets *created = 1. Errors: 22023 for a
 * missing or bad name or an invalid definition; the errors of
 * qr_catalog_load; 58030 for I/O. Nothing is changed on failure. */
int qr_catalog_create_table(const char *datadir, const qr_tabdef *d, int *created, qr_err *e);
/* Remove table `name` (any case) from the catalog (its data files are not
 * touched). 42P01 "table X does not exist" when it is not there; else the
 * errors of qr_catalog_create_table. */
int qr_catalog_drop_table(const char *datadir, const char *name, qr_err *e);
/* Replace the definition of table d->name (any case) with d (copied), in
 * its place in the catalog (CREATE INDEX). 42P01 when it is not there; 22023
 * for an invalid definition; else the errors of qr_catalog_create_table.
 * Nothing is changed on failure. The caller makes sure the table's
 * segments agree with the new definition (index/table.h: hold its writer
 * lock). */
int qr_catalog_replace_table(const char *datadir, const qr_tabdef *d, qr_err *e);

#endif
