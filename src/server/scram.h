/* scram.h - SCRAM-SHA-256 (RFC 5802, RFC 7677), the server's side, with
 * OpenSSL's PBKDF2 and HMAC-SHA-256: stored verifiers in PostgreSQL's
 * text form, and the two steps of the exchange.
 *
 *   verifier: "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>"
 *             (base64; what PostgreSQL keeps in pg_authid.rolpassword)
 *   client-first "n,,n=user,r=cnonce"  -> server-first "r=cnonce+snonce,s=salt,i=N"
 *   client-final "c=biws,r=nonce,p=proof" -> server-final "v=signature"
 * Channel binding is not offered (the client's gs2 header must be "n" or
 * "y"). Passwords are used as their bytes (no SASLprep: ASCII passwords
 * behave as in PostgreSQL). */
#ifndef QR_SERVER_SCRAM_H
#define QR_SERVER_SCRAM_H
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/scram.h"

#define PGW_SCRAM_ITERS QR_SCRAM_ITERS
#define PGW_E_AUTH      "28P01" /* invalid password */

/* The verifiers and base64 are util/scram.h's (the SQL layer makes them
 * too); these names are the server's for them. */
typedef qr_scram_secret pgw_scram_secret;
static inline int pgw_scram_verifier(const char *password, const uint8_t *salt, size_t saltlen,
                                     int iters, char *out, size_t cap, qr_err *e)
{
    return qr_scram_verifier(password, salt, saltlen, iters, out, cap, e);
}
static inline int pgw_scram_parse(const char *s, pgw_scram_secret *sec, qr_err *e)
{
    return qr_scram_parse(s, sec, e);
}
static inline void pgw_b64_encode(const uint8_t *p, size_t n, char *out)
{
    qr_b64_encode(p, n, out);
}
static inline long pgw_b64_decode(const char *s, size_t n, uint8_t *out, size_t cap)
{
    return qr_b64_decode(s, n, out, cap);
}

/* A verifier for a user that does not exist: fixed per name, so that an
 * attempt reads the same as for a real user and fails at the proof. */
void pgw_scram_mock(const char *user, pgw_scram_secret *sec);

typedef struct pgw_scram {
    pgw_scram_secret sec;
    char client_first_bare[512];
    char server_first[640];
    char nonce[320]; /* the client's nonce followed by ours */
} pgw_scram;

/* Step 1: from the client-first message (n bytes), the server-first message
 * into out (snonce: our printable nonce). 0, or -1 with e set (08P01). */
int pgw_scram_first(pgw_scram *st, const char *msg, size_t n, const char *snonce, qr_buf *out,
                    qr_err *e);
/* Step 2: check the client-final message; on success the server-final
 * message into out. 0, or -1 with e set (28P01 for a wrong proof, 08P01 for
 * a malformed message). */
int pgw_scram_final(pgw_scram *st, const char *msg, size_t n, qr_buf *out, qr_err *e);

#endif
