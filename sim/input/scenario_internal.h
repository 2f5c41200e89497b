/* scenario_internal.h - what the files of the scenario module share: the
 * document with its overrides, and the messages that point into the document.
 * scenario.c reads a file and places messages, scenario_set.c applies --set,
 * scenario_bind.c binds a document to a schema, scenario_emit.c writes the
 * resolved scenario. */
#ifndef AIFSIM_SCENARIO_INTERNAL_H
#define AIFSIM_SCENARIO_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include <libfyaml.h>

#include "alloc.h"
#include "scenario.h"

typedef struct override {
  char *text;            /* "key=value" as given */
  size_t value_column;   /* 1-based column of the value in text */
  struct fy_node *value; /* the node it put in the document */
  struct fy_node *key;   /* the key it added, or NULL */
} override;

struct scn_doc {
  char *name;
  char *text; /* the input; libfyaml parses it in place */
  struct fy_diag *diag;
  struct fy_parser *parser;
  struct fy_document *fyd;
  override *overrides;
  size_t noverrides, overrides_cap;
};

/* Sets err to "FILE:LINE:COLUMN: MESSAGE" for node n (NULL: the file's
 * start), the column shifted right by extra, with "\n  hint: HINT" when
 * hint is not NULL; a node that came from --set is placed in its
 * override's text. Returns SIM_EINPUT. */
int scn__vfail_at(const scn_doc *doc, struct fy_node *n, size_t extra,
                  sim_error *err, const char *hint, const char *fmt,
                  va_list ap);

/* scn__vfail_at with the message's arguments given inline. */
int scn__fail_at(const scn_doc *doc, struct fy_node *n, size_t extra,
                 sim_error *err, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Splits "a.b[2].c" into at most max segments "a", "b", "2", "c", in
 * place; returns how many. */
size_t scn__split_path(char *path, char **seg, size_t max);

/* The offset of the first byte of text[0..len) that is not well-formed
 * UTF-8, or len (scenario.c). */
size_t scn__utf8_invalid_at(const char *text, size_t len);

/* The item of sequence seq that s names: 0 with *index set, or -1 when s
 * is not a whole number or is out of range. */
int scn__seq_index(struct fy_node *seq, const char *s, int *index);

#endif
