/* cancel.c - the backend key table (conn.h): each session's pid and random
 * secret (OpenSSL RAND_bytes), sent in BackendKeyData; a CancelRequest
 * naming both sets that session's cancel flag, which its running statement
 * sees through its query context. The table's mutex is held only for these
 * lookups, never across a socket operation. */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "server/conn.h"

int pgw_keys_init(pgw_keys *t, uint32_t cap, qr_err *e)
{
    memset(t, 0, sizeof *t);
    t->k = calloc(cap ? cap : 1, sizeof *t->k);
    if (!t->k)
        return qr_errf(e, QR_E_NOMEM, "out of memory for %u backend keys", cap);
    t->cap = cap ? cap : 1;
    t->next_pid = 1000;
    pthread_mutex_init(&t->mu, NULL);
    return 0;
}

void pgw_keys_free(pgw_keys *t)
{
    if (!t->k)
        return;
    pthread_mutex_destroy(&t->mu);
    free(t->k);
    t->k = NULL;
}

int pgw_keys_add(pgw_keys *t, atomic_int *flag, int32_t *pid, int32_t *secret, qr_err *e)
{
    uint32_t s;
    if (RAND_bytes((unsigned char *)&s, sizeof s) != 1)
        return qr_errf(e, QR_E_INTERNAL, "RAND_bytes failed");
    pthread_mutex_lock(&t->mu);
    uint32_t i = 0;
    while (i < t->cap && t->k[i].flag)
        i++;
    if (i == t->cap) {
        pthread_mutex_unlock(&t->mu);
        return qr_errf(e, "53300", "sorry, too many clients already");
    }
    t->k[i].pid = t->next_pid++;
    if (t->next_pid == INT32_MAX)
        t->next_pid = 1000;
    t->k[i].secret = (int32_t)s;
    t->k[i].flag = flag;
    *pid = t->k[i].pid;
    *secret = t->k[i].secret;
    pthread_mutex_unlock(&t->mu);
    return 0;
}

void pgw_keys_remove(pgw_keys *t, int32_t pid)
{
    pthread_mutex_lock(&t->mu);
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->k[i].flag && t->k[i].pid == pid)
            t->k[i].flag = NULL;
    pthread_mutex_unlock(&t->mu);
}

int pgw_keys_cancel(pgw_keys *t, int32_t pid, int32_t secret)
{
    int hit = 0;
    pthread_mutex_lock(&t->mu);
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->k[i].flag && t->k[i].pid == pid &&
            CRYPTO_memcmp(&t->k[i].secret, &secret, sizeof secret) == 0) {
            atomic_store(t->k[i].flag, 1);
            hit = 1;
        }
    pthread_mutex_unlock(&t->mu);
    return hit;
}

void pgw_keys_cancel_all(pgw_keys *t)
{
    pthread_mutex_lock(&t->mu);
    for (uint32_t i = 0; i < t->cap; i++)
        if (t->k[i].flag)
            atomic_store(t->k[i].flag, 1);
    pthread_mutex_unlock(&t->mu);
}
