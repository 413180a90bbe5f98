/* fuzz_tmp.h - where a fuzz target keeps its scratch files: under $TMPDIR
 * (fuzz/run.sh gives each target a directory of its own and removes it
 * after the run, so a target that crashes or is stopped leaves nothing
 * behind), else /tmp. */
#ifndef QR_FUZZ_TMP_H
#define QR_FUZZ_TMP_H

#include <stdio.h>
#include <stdlib.h>

/* "<tmp>/<name>" into out (size bytes); name may end in XXXXXX for mkdtemp. */
static inline void fuzz_tmp_path(char *out, size_t size, const char *name)
{
    const char *t = getenv("TMPDIR");
    snprintf(out, size, "%s/%s", t && *t ? t : "/tmp", name);
}

#endif
