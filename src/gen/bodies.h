/* bodies.h - the generator's data tables (internal to src/gen): the 17
 * services with their resource/scope metadata, and the weighted log-line
 * templates whose mix reproduces the DATASET.md token statistics.
 *
 * Template text uses {name} placeholders (see the var list in otelgen.c:
 * uid, pid, oid, amt, cur, email, uuid, h16, n, ms, ...). Body templates are
 * plain text (otelgen.c escapes them once at start-up); attribute templates
 * are already JSON. A '{' not followed by [a-z0-9]+ '}' is literal text.
 */
#ifndef QR_GEN_BODIES_H
#define QR_GEN_BODIES_H

#include <stddef.h>
#include <stdint.h>

enum gen_sev { GEN_TRACE, GEN_DEBUG, GEN_INFO, GEN_WARN, GEN_ERROR, GEN_SEV_COUNT };

typedef struct gen_sev_def {
    const char *text;
    int number; /* OTel SeverityNumber */
} gen_sev_def;

typedef struct gen_svc_def {
    const char *name;
    const char *res_schema_url;
    const char *scope_schema_url;
    const char *scope_name;
    const char *scope_version;
    const char *scope_attrs; /* JSON object, constant */
    const char *res_attrs;   /* JSON object template: {pod} {node} {cid} {poduid} {ppid} */
    const char *log_attrs;   /* default LogAttributes template (JSON object) */
    unsigned pods;           /* replicas; each row picks one */
    unsigned trace_pct;      /* share of rows carrying a TraceId */
} gen_svc_def;

typedef struct gen_tmpl_def {
    uint8_t svc;     /* index into gen_services */
    uint8_t sev;     /* enum gen_sev */
    uint32_t weight; /* expected rows per 1M */
    const char *body;
    const char *log_attrs; /* NULL: the service's default */
} gen_tmpl_def;

extern const gen_sev_def gen_sevs[GEN_SEV_COUNT];
extern const gen_svc_def gen_services[];
extern const size_t gen_nservices;
extern const gen_tmpl_def gen_templates[];
extern const size_t gen_ntemplates;

#endif
