/* scram.c - SCRAM-SHA-256 verifiers (RFC 5802, RFC 7677; util/scram.h):
 * SaltedPassword = PBKDF2-HMAC-SHA-256(password, salt, i), ClientKey =
 * HMAC(SaltedPassword, "Client Key"), StoredKey = SHA-256(ClientKey),
 * ServerKey = HMAC(SaltedPassword, "Server Key"), in PostgreSQL's text
 * form; and base64. OpenSSL does the math. */
#include "util/scram.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

void qr_b64_encode(const uint8_t *p, size_t n, char *out)
{
    EVP_EncodeBlock((unsigned char *)out, p, (int)n);
}

long qr_b64_decode(const char *s, size_t n, uint8_t *out, size_t cap)
{
    if (n % 4 || n / 4 * 3 > cap + 2 || n > 4096)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '+' || c == '/' || (c == '=' && i >= n - 2);
        if (!ok || (c != '=' && i == n - 1 && s[n - 2] == '='))
            return -1;
    }
    uint8_t tmp[4096];
    int len = EVP_DecodeBlock(tmp, (const unsigned char *)s, (int)n);
    if (len < 0)
        return -1;
    if (n && s[n - 1] == '=')
        len--;
    if (n > 1 && s[n - 2] == '=')
        len--;
    if ((size_t)len > cap)
        return -1;
    memcpy(out, tmp, (size_t)len);
    return len;
}

static void hmac(const uint8_t *key, size_t kl, const void *msg, size_t n, uint8_t out[32])
{
    unsigned int ol = 32;
    HMAC(EVP_sha256(), key, (int)kl, msg, n, out, &ol);
}

static int derive(const char *password, const uint8_t *salt, size_t saltlen, int iters,
                  qr_scram_secret *sec, qr_err *e)
{
    uint8_t salted[32], ck[32];
    if (PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, (int)saltlen, iters, EVP_sha256(),
                          32, salted) != 1)
        return qr_errf(e, QR_E_INTERNAL, "PBKDF2 failed");
    hmac(salted, 32, "Client Key", 10, ck);
    SHA256(ck, 32, sec->stored_key);
    hmac(salted, 32, "Server Key", 10, sec->server_key);
    sec->iters = iters;
    memcpy(sec->salt, salt, saltlen);
    sec->saltlen = saltlen;
    OPENSSL_cleanse(salted, sizeof salted);
    return 0;
}

int qr_scram_verifier(const char *password, const uint8_t *salt, size_t saltlen, int iters,
                      char *out, size_t cap, qr_err *e)
{
    qr_scram_secret sec;
    if (saltlen > sizeof sec.salt || iters < 1)
        return qr_errf(e, QR_E_ARGS, "bad salt length %zu or iterations %d", saltlen, iters);
    if (derive(password, salt, saltlen, iters, &sec, e) != 0)
        return -1;
    char s64[100], k1[48], k2[48];
    qr_b64_encode(sec.salt, sec.saltlen, s64);
    qr_b64_encode(sec.stored_key, 32, k1);
    qr_b64_encode(sec.server_key, 32, k2);
    if ((size_t)snprintf(out, cap, "SCRAM-SHA-256$%d:%s$%s:%s", iters, s64, k1, k2) >= cap)
        return qr_errf(e, QR_E_TOO_LONG, "verifier buffer too small");
    return 0;
}

int qr_scram_parse(const char *s, qr_scram_secret *sec, qr_err *e)
{
    const char *pre = "SCRAM-SHA-256$";
    if (strncmp(s, pre, strlen(pre)) != 0)
        return qr_errf(e, QR_E_ARGS, "a verifier starts with SCRAM-SHA-256$");
    const char *p = s + strlen(pre);
    char *end;
    long it = strtol(p, &end, 10);
    if (end == p || *end != ':' || it < 1 || it > 10000000)
        return qr_errf(e, QR_E_ARGS, "bad iteration count in verifier");
    const char *salt = end + 1, *d = strchr(salt, '$');
    if (!d)
        return qr_errf(e, QR_E_ARGS, "verifier: no '$' after the salt");
    const char *k1 = d + 1, *c = strchr(k1, ':');
    if (!c)
        return qr_errf(e, QR_E_ARGS, "verifier: no ':' between the keys");
    const char *k2 = c + 1;
    long sl = qr_b64_decode(salt, (size_t)(d - salt), sec->salt, sizeof sec->salt);
    if (sl <= 0)
        return qr_errf(e, QR_E_ARGS, "verifier: bad base64 salt");
    if (qr_b64_decode(k1, (size_t)(c - k1), sec->stored_key, 32) != 32 ||
        qr_b64_decode(k2, strlen(k2), sec->server_key, 32) != 32)
        return qr_errf(e, QR_E_ARGS, "verifier: keys must be 32 bytes of base64");
    sec->saltlen = (size_t)sl;
    sec->iters = (int)it;
    return 0;
}

int qr_scram_new_verifier(const char *password, char *out, size_t cap, qr_err *e)
{
    uint8_t salt[16];
    if (RAND_bytes(salt, sizeof salt) != 1)
        return qr_errf(e, QR_E_INTERNAL, "RAND_bytes failed");
    return qr_scram_verifier(password, salt, sizeof salt, QR_SCRAM_ITERS, out, cap, e);
}
