/* wire.h - PostgreSQL v3 message framing: big-endian writers that build
 * backend messages into a buffer, a bounds-checked reader for frontend
 * message bodies, and the connection's byte channel (a socket with
 * timeouts, or memory for tests and the fuzzer).
 *
 * A frontend message is a type byte, an int32 length (counting itself) and
 * the body; the startup packet has no type byte. Lengths are never trusted:
 * below 4 or above the channel's limit the message is refused (08P01)
 * before any byte of its body is buffered. */
#ifndef QR_SERVER_WIRE_H
#define QR_SERVER_WIRE_H
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "util/buf.h"
#include "util/err.h"

#define PGW_E_PROTOCOL  "08P01"     /* protocol violation */
#define PGW_MAX_MSG     (16u << 20) /* the largest frontend message accepted */
#define PGW_MAX_STARTUP 10000u      /* the largest startup packet (as PostgreSQL) */
#define PGW_FLUSH_AT    (64u << 10) /* rows are sent in batches of about this */

/* ---- writing backend messages (into a qr_buf) ---- */
void pgw_put_i16(qr_buf *b, int16_t v);
void pgw_put_i32(qr_buf *b, int32_t v);
void pgw_put_i64(qr_buf *b, int64_t v);
void pgw_put_str(qr_buf *b, const char *s); /* with its NUL */
/* Start a message of `type`; returns the offset pgw_msg_end patches. */
size_t pgw_msg_begin(qr_buf *b, char type);
void pgw_msg_end(qr_buf *b, size_t at);
static inline uint32_t pgw_load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- reading frontend message bodies ---- */
typedef struct pgw_rd {
    const uint8_t *p, *end;
    int bad; /* a read ran past the end, or a string had no NUL */
} pgw_rd;
static inline void pgw_rd_init(pgw_rd *r, const uint8_t *p, size_t n)
{
    r->p = p;
    r->end = p + n;
    r->bad = 0;
}
int16_t pgw_rd_i16(pgw_rd *r);
int32_t pgw_rd_i32(pgw_rd *r);
/* A NUL-terminated string inside the body (pointer into it), or "" with bad set. */
const char *pgw_rd_str(pgw_rd *r);
/* n bytes (pointer into the body), or NULL with bad set. */
const uint8_t *pgw_rd_bytes(pgw_rd *r, size_t n);
static inline size_t pgw_rd_left(const pgw_rd *r) { return (size_t)(r->end - r->p); }

/* ---- the channel ---- */
typedef struct pgw_io {
    int fd;            /* a connected socket (non-blocking), or -1: memory */
    SSL *ssl;          /* TLS on the socket, once pgw_tls_accept set it up */
    const uint8_t *in; /* memory: the bytes the "client" sent */
    size_t inlen, inpos;
    qr_buf *sink;                 /* memory: what was sent goes here (NULL: dropped) */
    qr_buf out;                   /* backend messages not yet sent */
    int64_t deadline_ns;          /* reads fail past it (startup phase); 0 = none */
    const atomic_int *idle_stop;  /* != 0 while waiting for a message: give up */
    const atomic_int *write_stop; /* != 0: a blocked write gives up */
    int closed;                   /* the peer went away or a write failed */
} pgw_io;

void pgw_io_init_fd(pgw_io *io, int fd);
void pgw_io_init_mem(pgw_io *io, const uint8_t *in, size_t n, qr_buf *sink);
void pgw_io_free(pgw_io *io);
/* Send io->out (blocking, in this connection's thread only). 0, or -1 with
 * io->closed set. */
int pgw_flush(pgw_io *io);
/* The server's side of a TLS handshake on io's socket (after the 'S'
 * answer to SSLRequest); later reads and writes go through it. 0, or -1
 * with e set (io->closed then: the stream is unusable). */
int pgw_tls_accept(pgw_io *io, SSL_CTX *ctx, qr_err *e);
/* Read exactly n bytes. 0; 1 at a clean end of input before the first byte
 * when `idle` (or idle_stop was seen then); -1 with e set (a timeout, a
 * read error, input ending inside a message). */
int pgw_read_exact(pgw_io *io, void *dst, size_t n, int idle, qr_err *e);
/* Read one frontend message: *type, and its body into body (replacing what
 * it held). 0; 1 at a clean end (no byte of a next message); -1 with e set
 * (08P01 for a bad length, naming it). */
int pgw_read_msg(pgw_io *io, uint8_t *type, qr_buf *body, uint32_t max, qr_err *e);
/* The startup packet (no type byte): its body without the length. Same
 * returns as pgw_read_msg. */
int pgw_read_startup(pgw_io *io, qr_buf *body, qr_err *e);

/* ---- common backend messages ---- */
/* ErrorResponse (or NoticeResponse with type 'N') from e: S and V = severity
 * ("ERROR", "FATAL"), C = e->code, M = the message without a trailing
 * " at character N", P = N when there was one (through map_pos when it is
 * not NULL: a position in rewritten text back to what the client sent; a
 * position <= 0 is left out). */
void pgw_put_error(qr_buf *b, char type, const char *severity, const qr_err *e,
                   long (*map_pos)(void *, long), void *map_arg);
/* The position N of a message ending in " at character N" (0 if none);
 * *msglen gets the length of the message without that suffix. */
long pgw_err_position(const char *msg, size_t *msglen);
void pgw_put_ready(qr_buf *b, char status);
void pgw_put_param_status(qr_buf *b, const char *name, const char *value);
void pgw_put_complete(qr_buf *b, const char *tag);
#endif
