/* termdict.h - the term dictionary of an indexed field: sorted terms in
 * front-coded blocks of up to 64 with a sparse index of each block's first term.
 *
 * Dictionary order is code point length first, then bytes (qr_term_cmp).
 * TERMDICT block: a sequence of blocks of up to 64 terms of one code point
 * length (a new length starts a new block). A block holds its terms,
 * then their infos: a seek scans terms and never touches an info it does
 * not want, which halves the bytes an automaton walk streams through.
 *   terms part: per term, varint shared-prefix length (0 for a block's
 *     first term), varint suffix length, suffix bytes;
 *   infos part: per term, in the same order, varint info length, term
 *     info (postings.h).
 * TERMINDEX block (format 9): u32 number K of dictionary blocks, u32 0,
 *   u64 number of terms; K records (qr_tblk, 32 bytes: first term's key8,
 *   postings and positions bases where the block's first term's lists
 *   start, offset in TERMDICT, length of the terms part, offset of the
 *   first term in TERMINDEX, code point length, first term's length, 0);
 *   K u64 byte-class masks: bit qr_tdict_byte_class(b) is set when some
 *   term of the block has byte b; the K first terms, concatenated. A
 *   pattern whose every match must contain certain bytes (LIKE '%tion',
 *   /.*nnec.* /: qr_aut_required_bytes) skips blocks that lack one of them
 *   without decoding them: most blocks hold only hex ids. Format 8 stored per block: u32 offset,
 * varint postings base, varint positions base, varint length + first term, u64 mask, u32 terms
 * length (after u32 K, u64 terms). Supports exact lookup (binary search on the index, then a scan
 * of one block), ordered iteration, seeking to the first term >= a key, and so intersection with
 * automata that prune by prefix.
 */
#ifndef QR_TERMDICT_H
#define QR_TERMDICT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format/segfmt.h"
#include "format/segment.h"
#include "index/postings.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/json.h"

/* A term's length in code points (bytes that are not UTF-8 continuation
 * bytes; any byte string has one). The dictionary orders terms by it
 * first, then by bytes: terms of one length are contiguous, so a fuzzy
 * walk, whose matches are within k code points of the term's length,
 * never reads the 8- and 12-digit hex chunks of ids around a 5-letter
 * word, as it would in plain byte order. */
static inline uint32_t qr_term_cpl(const char *t, size_t n)
{
    uint32_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += ((unsigned char)t[i] & 0xC0) != 0x80;
    return c;
}

/* Dictionary order: code point length, then bytes. */
static inline int qr_term_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    uint32_t ca = qr_term_cpl(a, an), cb = qr_term_cpl(b, bn);
    if (ca != cb)
        return ca < cb ? -1 : 1;
    size_t m = an < bn ? an : bn;
    int c = memcmp(a, b, m);
    if (c)
        return c;
    return an < bn ? -1 : an > bn;
}

/* The longest term info a dictionary entry may hold. */
#define QR_TERMINFO_MAX 1024

/* The class (0..63) of a term byte in the blocks' masks: a-z, 0-9 each
 * their own, other bytes folded into the rest. */
static inline unsigned qr_tdict_byte_class(unsigned char b)
{
    if (b >= 'a' && b <= 'z')
        return b - 'a';
    if (b >= '0' && b <= '9')
        return 26u + (b - '0');
    return 36u + b % 28u;
}

/* ---- writing: terms must be added in strictly increasing dictionary order ---- */
typedef struct qr_tdictw {
    qr_buf dict, index;    /* the TERMDICT and TERMINDEX blocks (index: at finish) */
    qr_buf infos;          /* the current block's infos part */
    qr_buf recs, masks, firsts; /* the index's parts while terms come */
    qr_buf vmasks;              /* with variable masks: theirs */
    int variable_masks;         /* write them (set before the first term) */
    size_t blk_start;           /* where the current block starts in dict */
    uint64_t mask, vmask;
    uint32_t in_block, nblocks;
    uint64_t nterms;
    char prev[QR_MAX_TERM];
    size_t prev_len;
    uint32_t prev_cpl;
} qr_tdictw;

void qr_tdictw_init(qr_tdictw *w);
/* Format 13: also write each block's variable mask, the byte classes of
 * its variable terms only (qr_shape_variable: ids, numbers, hex pieces).
 * A full-text index with row shapes has its other terms in SHAPEWORDS,
 * so a pattern's walk of the dictionary need only enter the blocks whose
 * variable terms could match (qr_tdict_find_vmask). */
static inline void qr_tdictw_variable_masks(qr_tdictw *w) { w->variable_masks = 1; }
void qr_tdictw_free(qr_tdictw *w);
/* Add a term with its encoded term info (terms in dictionary order,
 * qr_term_cmp; a block holds terms of one code point length); post_off / pos_off are where its
 * lists start in the field's streams (kept per block: infos hold lengths;
 * below 4 GiB, as every block is). -1 when out of memory or out of range. */
int qr_tdictw_add(qr_tdictw *w, const char *term, size_t n, const void *info, size_t info_len,
                  uint64_t post_off, uint64_t pos_off);
/* Finish: lays out the TERMINDEX block in w->index. */
int qr_tdictw_finish(qr_tdictw *w);

/* ---- reading ---- */
/* A dictionary block as a seek sees it, in one place: landing in a block
 * costs one cache line of this, not one per array. It is the record of the
 * TERMINDEX block (format 9: little-endian, read in place), so opening an
 * index parses nothing and allocates nothing: the first query after an
 * open used to spend most of its time making these. */
typedef struct qr_tblk {
    uint64_t key8;       /* the first term's first 8 bytes, big-endian, zero
                          * padded: compares without touching its bytes */
    uint32_t post, pos;  /* where the first term's lists start */
    uint32_t off, tlen;  /* offset in TERMDICT, length of the terms part */
    uint32_t first;      /* the first term: its offset in TERMINDEX */
    uint16_t cpl;        /* code point length of every term of the block */
    uint8_t first_len;   /* the first term's length in bytes */
    uint8_t zero;        /* 0 */
} qr_tblk;
#define QR_TDICT_HEADER 16u /* u32 blocks, u32 flags (0 before format 13), u64 terms */
#define QR_TDICT_VMASKS 1u  /* header flag (format 13): variable masks follow the masks */
#define QR_TDICT_REC    32u /* sizeof(qr_tblk) */

typedef struct qr_tdict {
    const unsigned char *dict, *index;
    size_t dict_len, index_len;
    uint32_t nblocks;
    uint64_t nterms;
    const qr_tblk *blk;       /* per block, what a seek needs: in the TERMINDEX
                               * block, or in `own` */
    const uint64_t *blk_mask; /* byte classes present in each block (likewise) */
    const uint64_t *blk_vmask; /* those of its variable terms (format 13), or NULL */
    size_t firsts_at;          /* where the first terms start in TERMINDEX */
    void *own;                /* malloc'ed records of a format 8 index (parsed)
                               * or of a misaligned one (copied), else NULL */
    int has_freqs, has_pos;
    /* Where the TERMDICT bytes are verified: a dictionary block is checked
     * (qr_seg_check: the chunks holding it) when an iterator enters it.
     * seg NULL: the bytes are trusted (verified whole, or a test's buffer). */
    const qr_segment *seg;
    const qr_blockref *ref;
    /* Where the TERMINDEX bytes are verified, when lazily (qr_tdict_open_in):
     * a record, its byte mask and its first term are checked (chunks and
     * bounds) before a seek or a scan reads them; NULL: checked at open. */
    const qr_blockref *iref;
    /* with iref: 2 bits a block (atomic; the dictionary is shared by the
     * threads of a search): its record checked; its block entered (the
     * records around it and their order checked). Malloc'ed, or NULL. */
    uint64_t *okbits;
    /* What walks learned of each code point length (qr_tdict_len_below):
     * 256 words, malloc'ed on first use and published atomically (the
     * dictionary is shared by the threads of a search); NULL until then. */
    uint64_t *lens;
} qr_tdict;

/* Open the dictionary of TERMINDEX block `index` (verified by the caller,
 * kept mapped: records and first terms are read in place) in segment
 * format `version` (QR_SEG_VERSION; 8: varint entries, parsed into
 * memory), checking every record's offsets and lengths (format 9: the
 * records alone are read; each block's first term against its record and
 * the block before is checked when an iterator first enters the block,
 * so an open does not touch the first terms). The TERMDICT bytes are not
 * read here. */
int qr_tdict_open(qr_tdict *d, uint32_t version, const unsigned char *index, size_t index_len,
                  const unsigned char *dict, size_t dict_len, int has_freqs, int has_pos,
                  const char *what, qr_err *e);
/* Verify each dictionary block, before reading it, against the checksums of
 * block `ref` of segment s (where `dict` of qr_tdict_open lies). */
void qr_tdict_verify_by(qr_tdict *d, const qr_segment *s, const qr_blockref *ref);
/* qr_tdict_open of the index in segment s's block iref (TERMINDEX) and its
 * dictionary in block dref (TERMDICT), neither verified yet. Format 9
 * records are read in place and verified as they are first read: an open
 * checks the header alone, so opening the 525 segments of a 100M-row
 * table does not hash and fault in 100 MB of records of which a query
 * reads a few dozen. Format 8 (parsed at open) is verified whole first. */
int qr_tdict_open_in(qr_tdict *d, const qr_segment *s, const qr_blockref *iref,
                     const qr_blockref *dref, const unsigned char *index, size_t index_len,
                     const unsigned char *dict, size_t dict_len, int has_freqs, int has_pos,
                     const char *what, qr_err *e);
/* Blocks' masks of byte classes are what automaton walks skip blocks by.
 * The first block from b on whose mask has every class of `need` (nblocks
 * when none) in *out: the masks from b on are verified a range at a time
 * (one check of the chunks they lie in, not one per block) and scanned in
 * a tight loop, as a LIKE or regexp passes over thousands of hex-id blocks.
 * 0, or -1 (e set). */
static inline int qr_tdict_find_in(const qr_tdict *d, const uint64_t *m, size_t at0, uint32_t b,
                                   uint64_t need, uint32_t *out, qr_err *e)
{
    while (b < d->nblocks) {
        /* verified a chunk at a time (512 masks of 4 KiB): a walk that
         * finds its block near b (a fuzzy term's few lengths) does not
         * fault in and hash the masks to the end */
        uint32_t end = d->nblocks;
        if (d->iref && d->iref->chunk_shift) {
            size_t stop = ((at0 + (size_t)b * 8) >> d->iref->chunk_shift) + 1;
            stop = ((stop << d->iref->chunk_shift) - at0 + 7) / 8; /* masks begun in it */
            end = stop < end ? (uint32_t)stop : end;
        }
        if (d->iref && qr_seg_check(d->seg, d->iref, at0 + (size_t)b * 8, (size_t)(end - b) * 8,
                                    "TERMINDEX", e) != 0)
            return -1;
        while (b < end && (m[b] & need) != need)
            b++;
        if (b < end)
            break;
    }
    *out = b;
    return 0;
}
static inline int qr_tdict_find_mask(const qr_tdict *d, uint32_t b, uint64_t need, uint32_t *out,
                                     qr_err *e)
{
    return qr_tdict_find_in(d, d->blk_mask, QR_TDICT_HEADER + (size_t)d->nblocks * QR_TDICT_REC, b,
                            need, out, e);
}
/* Where the variable masks start in TERMINDEX (after the records and the
 * byte-class masks). */
static inline size_t qr_tdict_vmasks_at(const qr_tdict *d)
{
    return QR_TDICT_HEADER + (size_t)d->nblocks * (QR_TDICT_REC + 8);
}
/* The same over the blocks' variable masks (d->blk_vmask, not NULL). */
static inline int qr_tdict_find_vmask(const qr_tdict *d, uint32_t b, uint64_t need, uint32_t *out,
                                      qr_err *e)
{
    return qr_tdict_find_in(d, d->blk_vmask, qr_tdict_vmasks_at(d), b, need, out, e);
}
/* The variable masks of blocks [b, b + n) verified (the chunks they lie
 * in; nothing when the index was checked whole), for a scan that reads
 * them in place: 0, or -1 with e set. */
static inline int qr_tdict_check_vmasks(const qr_tdict *d, uint32_t b, uint32_t n, qr_err *e)
{
    return d->iref ? qr_seg_check(d->seg, d->iref, qr_tdict_vmasks_at(d) + (size_t)b * 8,
                                  (size_t)n * 8, "TERMINDEX", e)
                   : 0;
}
void qr_tdict_close(qr_tdict *d);
/* Lengths below a literal prefix. A walk over a literal prefix seeks at
 * each term length (~17 a segment) and mostly lands past the length: its
 * terms all sort below the prefix (`zzz*`). The dictionary remembers what
 * such seeks found (qr_tdict_note_below: every term of length cpl is below
 * key, a key of at most 8 bytes), so later walks pass those lengths over
 * without a seek; it learns from seeks made anyway, so a first query reads
 * nothing more.
 * qr_tdict_len_below: 1 when no term of length cpl is >= key (so none
 * starts with it), as noted for this key or a smaller one; 2 when no term
 * is that long or longer; 0 when some may be, or nothing is known (or
 * memory ran out); -1 with e set when the last block's record does not
 * verify. */
int qr_tdict_len_below(const qr_tdict *d, uint32_t cpl, const char *key, size_t n, qr_err *e);
/* A seek to (cpl, key) found no term of length cpl >= key: remembered when
 * key has at most 8 bytes and no NUL (its first 8 bytes stand for it). */
void qr_tdict_note_below(const qr_tdict *d, uint32_t cpl, const char *key, size_t n);

typedef struct qr_titer {
    const qr_tdict *d;
    uint32_t blk;            /* current dictionary block */
    uint32_t in_blk;         /* entries read in this block */
    qr_rd r;                 /* reader positioned after the current entry */
    char term[QR_MAX_TERM + 16]; /* current term (+16: suffixes are copied 16 bytes at a time) */
    size_t len;
    size_t shared;           /* bytes shared with the previous entry read */
    /* Infos are read lazily, when a term's info is asked for: a seek steps
     * over dozens of terms whose infos nobody reads. acc_p is where the info
     * of the block's term acc_i starts in the infos part (up to info_end);
     * post_run / pos_run are where that term's lists start. */
    const unsigned char *acc_p, *info_end;
    uint32_t acc_i;
    uint64_t post_run, pos_run;
    int corrupt;
} qr_titer;

/* Decode the current term's info (0, or -1 corrupt). */
int qr_titer_info(qr_titer *it, qr_terminfo *info, qr_err *e);

/* Exact lookup: 1 found (info set), 0 absent, -1 corrupt (e set). */
int qr_tdict_lookup(const qr_tdict *d, const char *term, size_t n, qr_terminfo *info,
                    qr_err *e);
/* Position `it` on the first term >= key (n may be 0 = first term).
 * Returns 1 on a term, 0 past the end, -1 corrupt. */
int qr_tdict_seek(const qr_tdict *d, qr_titer *it, const char *key, size_t n, qr_err *e);
/* Seeks with the key's code point length given: (cpl, key) is compared in
 * dictionary order, so an automaton walk can seek to a prefix among the
 * terms of one length. */
int qr_tdict_seek_at(const qr_tdict *d, qr_titer *it, uint32_t cpl, const char *key, size_t n,
                     qr_err *e);
int qr_titer_seek_at(qr_titer *it, uint32_t cpl, const char *key, size_t n, qr_err *e);
/* The code point length of the current term. */
static inline uint32_t qr_titer_cpl(const qr_titer *it) { return it->d->blk[it->blk].cpl; }
/* Move `it` (positioned by a seek) to the first term >= key. A key ahead
 * of the current term costs a gallop over the block index and a scan from
 * where it lands (or from here, when the key is in this block), not a
 * search of the whole index: automaton walks seek forward in small steps.
 * Returns as qr_tdict_seek. */
int qr_titer_seek(qr_titer *it, const char *key, size_t n, qr_err *e);
/* Position `it` on the first term of dictionary block b (no search):
 * 1, 0 when b is past the last block, -1 corrupt. */
int qr_tdict_seek_block(const qr_tdict *d, qr_titer *it, uint32_t b, qr_err *e);
/* The code point length of block b's terms (its record, checked), into
 * *cpl: 0, or -1 with e set. */
int qr_tdict_block_cpl(const qr_tdict *d, uint32_t b, uint32_t *cpl, qr_err *e);
/* The first block whose terms have cpl code points or more (d->nblocks
 * when none has), into *b: the blocks of one length lie between two of
 * these; a binary search over the records alone (checked), entering no
 * block. 0, or -1 with e set. */
int qr_tdict_len_start(const qr_tdict *d, uint32_t cpl, uint32_t *b, qr_err *e);
/* How many blocks have every class of `need` in their masks, into *n:
 * 0, or -1 with e set (the masks do not verify). */
int qr_tdict_count_masks(const qr_tdict *d, uint64_t need, uint32_t *n, qr_err *e);
/* Next term in order: 1, 0 at end, -1 corrupt. */
int qr_titer_next(qr_titer *it, qr_err *e);

#endif
