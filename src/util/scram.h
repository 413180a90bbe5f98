/* scram.h - SCRAM-SHA-256 verifiers in PostgreSQL's text form (what
 * pg_authid.rolpassword holds), made from a password or parsed back, and
 * base64 (RFC 4648). The exchange with a client is server/scram.h's; the
 * verifiers are here so that the SQL layer (CREATE USER) can make them.
 *
 *   "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>" (base64)
 *
 * Passwords are used as their bytes (no SASLprep). */
#ifndef QR_UTIL_SCRAM_H
#define QR_UTIL_SCRAM_H
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define QR_SCRAM_ITERS 4096

typedef struct qr_scram_secret {
    int iters;
    uint8_t salt[64];
    size_t saltlen;
    uint8_t stored_key[32], server_key[32];
} qr_scram_secret;

/* The verifier of password with salt and iters, as text into out (cap >=
 * 160). 0, or -1 with e set. */
int qr_scram_verifier(const char *password, const uint8_t *salt, size_t saltlen, int iters,
                      char *out, size_t cap, qr_err *e);
/* The same with a random 16-byte salt and QR_SCRAM_ITERS iterations. */
int qr_scram_new_verifier(const char *password, char *out, size_t cap, qr_err *e);
/* Parse a verifier's text. 0, or -1 with e naming what is wrong (22023). */
int qr_scram_parse(const char *s, qr_scram_secret *sec, qr_err *e);

/* base64 (padded) of n bytes into out (NUL-terminated; cap >= 4 * ceil(n
 * / 3) + 1), and back: the decoded length, or -1. */
void qr_b64_encode(const uint8_t *p, size_t n, char *out);
long qr_b64_decode(const char *s, size_t n, uint8_t *out, size_t cap);
#endif
