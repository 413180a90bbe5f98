/* timefmt.h - nanosecond UTC timestamps <-> RFC 3339 text.
 *
 * Canonical text form (what Quarry prints): "YYYY-MM-DDTHH:MM:SS.fffffffffZ",
 * always 9 fractional digits. Parsing also accepts a space for 'T', 0-9
 * fractional digits, 'Z' or a "+HH:MM"/"-HH:MM" offset, or no zone (= UTC).
 * Range: years 1678..2261 (what fits int64 nanoseconds since 1970).
 */
#ifndef QR_TIMEFMT_H
#define QR_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

#define QR_TIME_TEXT_LEN 30 /* canonical text length, without NUL */

/* Returns 0 and sets *ns, or -1 with a reason in *why (static string). */
int qr_time_parse(const char *s, size_t n, int64_t *ns, const char **why);
/* Writes exactly QR_TIME_TEXT_LEN chars (no NUL) into out. */
void qr_time_format(int64_t ns, char *out);

#endif
