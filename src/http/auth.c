/* auth.c - HTTP Basic authentication for --auth scram: the user and
 * password of the Authorization header are checked against the same SCRAM-
 * SHA-256 verifiers as the PostgreSQL port (the users file, then the data
 * directory's LOGIN users of CREATE USER): the password's StoredKey,
 * PBKDF2-HMAC-SHA-256 with the verifier's salt and iterations, must equal
 * the verifier's, and so must its ServerKey (compared in constant time).
 * Unknown users and users without a password cost the same PBKDF2 (a mock
 * salt), so the time does not tell which names exist. */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "http/http_int.h"
#include "util/scram.h"

static int keys_of(const char *password, const qr_scram_secret *s, uint8_t stored[32],
                   uint8_t server[32])
{
    uint8_t salted[32], client[32];
    unsigned int len = 32;
    if (PKCS5_PBKDF2_HMAC(password, (int)strlen(password), s->salt, (int)s->saltlen, s->iters,
                          EVP_sha256(), 32, salted) != 1)
        return -1;
    if (!HMAC(EVP_sha256(), salted, 32, (const unsigned char *)"Client Key", 10, client, &len))
        return -1;
    SHA256(client, 32, stored);
    len = 32;
    if (!HMAC(EVP_sha256(), salted, 32, (const unsigned char *)"Server Key", 10, server, &len))
        return -1;
    return 0;
}

int qh_auth_check(const qh_config *cfg, qr_sql_db *db, const char *user, const char *password)
{
    const char *v = NULL;
    for (uint32_t i = 0; cfg->users && i < cfg->users->n; i++)
        if (!strcmp(cfg->users->u[i].name, user))
            v = cfg->users->u[i].verifier;
    qr_sql_user u;
    qr_err e;
    int login = 1;
    if (!v && qr_sql_user_find(db, user, &u, &e) == 1 && u.verifier[0]) {
        v = u.verifier;
        login = u.login;
    }
    qr_scram_secret s;
    int known = v && qr_scram_parse(v, &s, &e) == 0;
    if (!known) {
        memset(&s, 0, sizeof s);
        s.iters = QR_SCRAM_ITERS;
        s.saltlen = 16;
        memset(s.salt, 0x5a, 16);
    }
    uint8_t stored[32], server[32];
    if (keys_of(password, &s, stored, server) != 0)
        return -1;
    int ok = known && login && CRYPTO_memcmp(stored, s.stored_key, 32) == 0 &&
             CRYPTO_memcmp(server, s.server_key, 32) == 0;
    return ok ? 0 : -1;
}
