/* strmap.c - open-addressing (linear probing) byte-string -> id map. */
#include "util/strmap.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

void qr_strmap_init(qr_strmap *m) { memset(m, 0, sizeof *m); }

void qr_strmap_free(qr_strmap *m)
{
    free(m->slots);
    free(m->hashes);
    free(m->keys);
    memset(m, 0, sizeof *m);
}

static int grow(qr_strmap *m)
{
    uint32_t nslots = m->mask ? (m->mask + 1) * 2 : 64;
    uint32_t *s = calloc(nslots, sizeof *s);
    if (!s)
        return -1;
    for (uint32_t id = 0; id < m->count; id++) {
        uint32_t i = (uint32_t)m->hashes[id] & (nslots - 1);
        while (s[i])
            i = (i + 1) & (nslots - 1);
        s[i] = id + 1;
    }
    free(m->slots);
    m->slots = s;
    m->mask = nslots - 1;
    return 0;
}

uint64_t qr_strmap_hash(const char *p, size_t n) { return qr_hash64(p, n); }

int64_t qr_strmap_get(const qr_strmap *m, const char *p, size_t n)
{
    return m->slots ? qr_strmap_get_h(m, p, n, qr_hash64(p, n)) : -1;
}

int64_t qr_strmap_get_h(const qr_strmap *m, const char *p, size_t n, uint64_t h)
{
    if (!m->slots)
        return -1;
    for (uint32_t i = (uint32_t)h & m->mask;; i = (i + 1) & m->mask) {
        uint32_t s = m->slots[i];
        if (!s)
            return -1;
        uint32_t id = s - 1;
        if (m->hashes[id] == h && m->keys[id].n == n && memcmp(m->keys[id].p, p, n) == 0)
            return id;
    }
}

int64_t qr_strmap_put(qr_strmap *m, const char *p, size_t n, int *added)
{
    return qr_strmap_put_h(m, p, n, qr_hash64(p, n), added);
}

int64_t qr_strmap_put_h(qr_strmap *m, const char *p, size_t n, uint64_t h, int *added)
{
    *added = 0;
    if ((uint64_t)(m->count + 1) * 4 > (uint64_t)(m->mask + 1) * 3 && grow(m) != 0)
        return -1;
    uint32_t i = (uint32_t)h & m->mask;
    for (;; i = (i + 1) & m->mask) {
        uint32_t s = m->slots[i];
        if (!s)
            break;
        uint32_t id = s - 1;
        if (m->hashes[id] == h && m->keys[id].n == n && memcmp(m->keys[id].p, p, n) == 0)
            return id;
    }
    if (m->count == m->cap_ids) {
        uint32_t nc = m->cap_ids ? m->cap_ids * 2 : 64;
        uint64_t *nh = realloc(m->hashes, sizeof *nh * nc);
        if (!nh)
            return -1;
        m->hashes = nh;
        qr_slice *nk = realloc(m->keys, sizeof *nk * nc);
        if (!nk)
            return -1;
        m->keys = nk;
        m->cap_ids = nc;
    }
    uint32_t id = m->count++;
    m->hashes[id] = h;
    m->keys[id].p = p;
    m->keys[id].n = n;
    m->key_bytes += n;
    m->slots[i] = id + 1;
    *added = 1;
    return id;
}
