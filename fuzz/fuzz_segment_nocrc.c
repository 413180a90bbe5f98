/* fuzz_segment_nocrc.c - the segment reader target in the fuzzing-only mode
 * that takes every checksum as right (QR_FUZZ_NO_CHECKSUMS, segreader.c), so
 * mutations reach the block decoders behind the checksums.
 * fuzz-cflags: -DQR_FUZZ_NO_CHECKSUMS
 * fuzz-corpus: segment
 */
#include "fuzz_segment.c"
