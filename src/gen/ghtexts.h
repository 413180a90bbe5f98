/* ghtexts.h - the github_events generator's data tables (internal to
 * src/gen): names, words, and the text templates of commit messages, issue
 * titles and bodies, comments, pull request bodies and repository
 * descriptions.
 *
 * Texts are plain UTF-8 (ghevents.c JSON-escapes them once at start-up) and
 * may hold placeholders of one letter in braces: {f} a file name, {n} a small
 * number, {v} a version, {b} a branch, {u} a user login, {h} a short sha,
 * {r} the repository name. Any other '{' is literal text. Names, words,
 * files, branches and labels are JSON-safe as they are (checked at start-up).
 */
#ifndef QR_GEN_GHTEXTS_H
#define QR_GEN_GHTEXTS_H

#include <stddef.h>

typedef struct gh_name {
    const char *display; /* as people write it, UTF-8: "José" */
    const char *ascii;   /* folded for logins and emails: "jose" */
} gh_name;

typedef struct gh_label {
    const char *name, *color;
} gh_label;

typedef struct gh_texts {
    const char *const *items;
    size_t n;
} gh_texts;

extern const gh_name gh_first_names[];
extern const size_t gh_nfirst_names;
extern const gh_name gh_last_names[];
extern const size_t gh_nlast_names;
extern const gh_label gh_labels[];
extern const size_t gh_nlabels;

extern const gh_texts gh_words;          /* login and repository name parts, [a-z0-9] */
extern const gh_texts gh_companies;      /* organisation logins and mail domains */
extern const gh_texts gh_files;          /* {f} */
extern const gh_texts gh_branches;       /* {b}, branch refs other than master */
extern const gh_texts gh_languages;      /* repository languages */
extern const gh_texts gh_commit_msgs;    /* templates */
extern const gh_texts gh_issue_titles;   /* templates */
extern const gh_texts gh_issue_bodies;   /* templates */
extern const gh_texts gh_comments;       /* templates */
extern const gh_texts gh_pr_titles;      /* templates */
extern const gh_texts gh_pr_bodies;      /* templates */
extern const gh_texts gh_descriptions;   /* templates */
extern const gh_texts gh_release_bodies; /* templates */

#endif
