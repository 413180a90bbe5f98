/* scram.c - SCRAM-SHA-256 server messages (scram.h; the verifiers'
 * math is util/scram.c): a proof is checked as
 * SHA-256(proof XOR HMAC(StoredKey, AuthMessage)) == StoredKey, in constant
 * time. */
#include "server/scram.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "server/wire.h"

static void hmac(const uint8_t *key, size_t kl, const void *msg, size_t n, uint8_t out[32])
{
    unsigned int ol = 32;
    HMAC(EVP_sha256(), key, (int)kl, msg, n, out, &ol);
}

void pgw_scram_mock(const char *user, pgw_scram_secret *sec)
{
    uint8_t h[32];
    SHA256((const uint8_t *)user, strlen(user), h);
    memset(sec, 0, sizeof *sec);
    sec->iters = PGW_SCRAM_ITERS;
    memcpy(sec->salt, h, 16);
    sec->saltlen = 16;
    hmac(h, 32, "mock stored", 11, sec->stored_key); /* matches no proof anyone can make */
    hmac(h, 32, "mock server", 11, sec->server_key);
}

/* The value of attribute `k` ("k=value,...") at the start of p. */
static int attr(const char **p, const char *end, char k, const char **v, size_t *vn)
{
    if (end - *p < 2 || (*p)[0] != k || (*p)[1] != '=')
        return -1;
    *v = *p + 2;
    const char *c = memchr(*v, ',', (size_t)(end - *v));
    *vn = (size_t)((c ? c : end) - *v);
    *p = c ? c + 1 : end;
    return 0;
}

static int printable(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x21 || s[i] > 0x7e || s[i] == ',')
            return 0;
    return n > 0;
}

int pgw_scram_first(pgw_scram *st, const char *msg, size_t n, const char *snonce, qr_buf *out,
                    qr_err *e)
{
    const char *p = msg, *end = msg + n, *v;
    size_t vn;
    if (memchr(msg, 0, n))
        return qr_errf(e, PGW_E_PROTOCOL, "malformed SCRAM message (NUL byte)");
    /* gs2 header: "n,," or "y,," (no channel binding), an optional authzid */
    if (n < 3 || (p[0] != 'n' && p[0] != 'y') || p[1] != ',')
        return qr_errf(e, PGW_E_PROTOCOL,
                       "malformed SCRAM message: channel binding is not supported");
    p += 2;
    const char *c = memchr(p, ',', (size_t)(end - p));
    if (!c)
        return qr_errf(e, PGW_E_PROTOCOL, "malformed SCRAM message: no gs2 header end");
    p = c + 1;
    const char *bare = p;
    if (attr(&p, end, 'n', &v, &vn) != 0 || attr(&p, end, 'r', &v, &vn) != 0 || !printable(v, vn))
        return qr_errf(e, PGW_E_PROTOCOL, "malformed SCRAM client-first message");
    size_t bl = (size_t)(end - bare), sl = strlen(snonce);
    if (bl >= sizeof st->client_first_bare || vn + sl >= sizeof st->nonce)
        return qr_errf(e, PGW_E_PROTOCOL, "SCRAM client-first message too long");
    memcpy(st->client_first_bare, bare, bl);
    st->client_first_bare[bl] = 0;
    memcpy(st->nonce, v, vn);
    memcpy(st->nonce + vn, snonce, sl + 1);
    char s64[100];
    pgw_b64_encode(st->sec.salt, st->sec.saltlen, s64);
    snprintf(st->server_first, sizeof st->server_first, "r=%s,s=%s,i=%d", st->nonce, s64,
             st->sec.iters);
    qr_buf_put(out, st->server_first, strlen(st->server_first));
    return 0;
}

int pgw_scram_final(pgw_scram *st, const char *msg, size_t n, qr_buf *out, qr_err *e)
{
    const char *p = msg, *end = msg + n, *cb, *r, *pf;
    size_t cbn, rn, pfn;
    if (memchr(msg, 0, n))
        return qr_errf(e, PGW_E_PROTOCOL, "malformed SCRAM message (NUL byte)");
    if (attr(&p, end, 'c', &cb, &cbn) != 0 || attr(&p, end, 'r', &r, &rn) != 0)
        return qr_errf(e, PGW_E_PROTOCOL, "malformed SCRAM client-final message");
    const char *without_proof_end = p - 1; /* before ",p=" */
    if (attr(&p, end, 'p', &pf, &pfn) != 0 || p != end)
        return qr_errf(e, PGW_E_PROTOCOL, "malformed SCRAM client-final message (proof)");
    if (!((cbn == 4 && !memcmp(cb, "biws", 4)) || (cbn == 4 && !memcmp(cb, "eSws", 4))))
        return qr_errf(e, PGW_E_PROTOCOL, "SCRAM channel binding is not supported");
    if (rn != strlen(st->nonce) || memcmp(r, st->nonce, rn) != 0)
        return qr_errf(e, PGW_E_PROTOCOL, "SCRAM nonce does not match");
    uint8_t proof[32];
    if (pgw_b64_decode(pf, pfn, proof, sizeof proof) != 32)
        return qr_errf(e, PGW_E_PROTOCOL, "malformed SCRAM proof");
    qr_buf am;
    qr_buf_init(&am);
    qr_buf_put(&am, st->client_first_bare, strlen(st->client_first_bare));
    qr_buf_put_u8(&am, ',');
    qr_buf_put(&am, st->server_first, strlen(st->server_first));
    qr_buf_put_u8(&am, ',');
    qr_buf_put(&am, msg, (size_t)(without_proof_end - msg));
    if (am.oom) {
        qr_buf_free(&am);
        return qr_errf(e, QR_E_NOMEM, "out of memory in SCRAM");
    }
    uint8_t sig[32], ck[32], h[32];
    hmac(st->sec.stored_key, 32, am.p, am.len, sig);
    for (int i = 0; i < 32; i++)
        ck[i] = proof[i] ^ sig[i];
    SHA256(ck, 32, h);
    int ok = CRYPTO_memcmp(h, st->sec.stored_key, 32) == 0;
    if (ok) {
        uint8_t ss[32];
        char s64[48];
        hmac(st->sec.server_key, 32, am.p, am.len, ss);
        pgw_b64_encode(ss, 32, s64);
        qr_buf_put(out, "v=", 2);
        qr_buf_put(out, s64, strlen(s64));
    }
    qr_buf_free(&am);
    if (!ok)
        return qr_errf(e, PGW_E_AUTH, "password authentication failed");
    return 0;
}
