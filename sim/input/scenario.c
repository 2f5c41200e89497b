/* scenario.c - reading a scenario file into a document, and the messages
 * that point into it. The overrides are in scenario_set.c, binding to a
 * schema in scenario_bind.c, the resolved-scenario writer in
 * scenario_emit.c.
 *
 * Reading keeps libfyaml's document (and the parser that owns it) for the
 * life of the scn_doc, so any later check can point at a node. Every
 * message carries a position: libfyaml's own for syntax errors (1-based),
 * a scalar token's start mark (0-based, hence the +1) for everything else,
 * and for a value that came from --set, the override text itself. */
#include "scenario.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "file.h"
#include "scenario_internal.h"

/* ------------------------------------------------------------------ */
/* Positions and messages                                              */
/* ------------------------------------------------------------------ */

static struct fy_node *first_scalar(struct fy_node *n) {
  void *it = NULL;
  switch (fy_node_get_type(n)) {
  case FYNT_SCALAR:
    return n;
  case FYNT_SEQUENCE: {
    struct fy_node *item = fy_node_sequence_iterate(n, &it);
    return item != NULL ? first_scalar(item) : NULL;
  }
  case FYNT_MAPPING: {
    struct fy_node_pair *p = fy_node_mapping_iterate(n, &it);
    return p != NULL ? first_scalar(fy_node_pair_key(p)) : NULL;
  }
  }
  return NULL;
}

static const override *override_of(const scn_doc *doc, struct fy_node *n) {
  for (; n != NULL; n = fy_node_get_parent(n))
    for (size_t i = 0; i < doc->noverrides; i++)
      if (doc->overrides[i].value == n || doc->overrides[i].key == n)
        return &doc->overrides[i];
  return NULL;
}

static const struct fy_mark *token_mark(struct fy_node *scalar) {
  struct fy_token *t = scalar ? fy_node_get_scalar_token(scalar) : NULL;
  return t != NULL ? fy_token_start_mark(t) : NULL;
}

/* The key under which n sits in mapping map, or NULL. */
static struct fy_node *key_of(struct fy_node *map, struct fy_node *n) {
  void *it = NULL;
  struct fy_node_pair *p;
  while ((p = fy_node_mapping_iterate(map, &it)) != NULL)
    if (fy_node_pair_value(p) == n)
      return fy_node_pair_key(p);
  return NULL;
}

/* The first position inside n; failing that (an empty collection, a null
 * value), the position of the key it sits under, climbing outwards. */
static const struct fy_mark *mark_of(struct fy_node *n) {
  for (; n != NULL; n = fy_node_get_parent(n)) {
    const struct fy_mark *m = token_mark(first_scalar(n));
    struct fy_node *parent = fy_node_get_parent(n);
    if (m == NULL && parent != NULL && fy_node_get_type(parent) == FYNT_MAPPING)
      m = token_mark(key_of(parent, n));
    if (m != NULL)
      return m;
  }
  return NULL;
}

/* Writes "FILE:LINE:COLUMN" for node n, shifted right by extra columns. */
static void where(const scn_doc *doc, struct fy_node *n, size_t extra,
                  char *buf, size_t size) {
  const override *o = override_of(doc, n);
  if (o != NULL) {
    snprintf(buf, size, "--set %s:1:%zu", o->text,
             (n == o->key ? 1 : o->value_column) + extra);
    return;
  }
  const struct fy_mark *m = mark_of(n);
  if (m != NULL)
    snprintf(buf, size, "%s:%d:%zu", doc->name, m->line + 1,
             (size_t)m->column + 1 + extra);
  else
    snprintf(buf, size, "%s:1:1", doc->name);
}

int scn__vfail_at(const scn_doc *doc, struct fy_node *n, size_t extra,
                  sim_error *err, const char *hint, const char *fmt,
                  va_list ap) {
  char pos[512], msg[600];
  where(doc, n, extra, pos, sizeof pos);
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (hint != NULL)
    return sim_error_set(err, SIM_EINPUT, "%s: %s\n  hint: %s", pos, msg, hint);
  return sim_error_set(err, SIM_EINPUT, "%s: %s", pos, msg);
}

int scn__fail_at(const scn_doc *doc, struct fy_node *n, size_t extra,
                 sim_error *err, const char *hint, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = scn__vfail_at(doc, n, extra, err, hint, fmt, ap);
  va_end(ap);
  return rc;
}

/* A message about a whole file, before any node exists. */
static int fail_file(sim_error *err, const char *name, int line, int col,
                     const char *hint, const char *msg) {
  if (hint != NULL)
    return sim_error_set(err, SIM_EINPUT, "%s:%d:%d: %s\n  hint: %s", name,
                         line, col, msg, hint);
  return sim_error_set(err, SIM_EINPUT, "%s:%d:%d: %s", name, line, col, msg);
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

void scn_doc_destroy(scn_doc *doc) {
  if (doc == NULL)
    return;
  if (doc->fyd != NULL)
    fy_parse_document_destroy(doc->parser, doc->fyd);
  fy_parser_destroy(doc->parser);
  if (doc->diag != NULL)
    fy_diag_destroy(doc->diag);
  for (size_t i = 0; i < doc->noverrides; i++)
    sim_free(NULL, doc->overrides[i].text);
  sim_free(NULL, doc->overrides);
  sim_free(NULL, doc->text);
  sim_free(NULL, doc->name);
  sim_free(NULL, doc);
}

const char *scn_doc_name(const scn_doc *doc) { return doc->name; }

/* Line and column (1-based) of byte offset at in text. */
static void line_col(const char *text, size_t at, int *line, int *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < at; i++) {
    if (text[i] == '\n') {
      ++*line;
      *col = 1;
    } else {
      ++*col;
    }
  }
}

/* The length of the UTF-8 sequence that starts with byte b, 0 if none,
 * and the range its second byte must be in (RFC 3629's table: no
 * overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_length(unsigned char b, unsigned char *lo,
                          unsigned char *hi) {
  *lo = 0x80, *hi = 0xbf;
  if (b < 0x80)
    return 1;
  if (b >= 0xc2 && b <= 0xdf)
    return 2;
  if (b >= 0xe0 && b <= 0xef) {
    if (b == 0xe0)
      *lo = 0xa0;
    if (b == 0xed)
      *hi = 0x9f;
    return 3;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    if (b == 0xf0)
      *lo = 0x90;
    if (b == 0xf4)
      *hi = 0x8f;
    return 4;
  }
  return 0;
}

/* The offset of the first byte that is not well-formed UTF-8, or len.
 * Strict, overlong forms and surrogates included: besides telling a
 * binary file from text, it keeps from libfyaml the malformed sequences
 * its directive scanner loops on for ever (an overlong form after '%':
 * fuzz_sweep's finding). */
size_t scn__utf8_invalid_at(const char *text, size_t len) {
  const unsigned char *s = (const unsigned char *)text;
  for (size_t i = 0; i < len;) {
    unsigned char lo, hi;
    size_t n = utf8_length(s[i], &lo, &hi);
    if (n == 0 || i + n > len)
      return i;
    if (n > 1 && (s[i + 1] < lo || s[i + 1] > hi))
      return i;
    for (size_t k = 2; k < n; k++)
      if ((s[i + k] & 0xc0) != 0x80)
        return i;
    i += n;
  }
  return len;
}

static int check_bytes(const char *name, const char *text, size_t len,
                       sim_error *err) {
  if (len > SCN_MAX_BYTES) {
    char msg[128];
    snprintf(msg, sizeof msg,
             "the file is %zu bytes; a scenario may have "
             "at most %zu",
             len, SCN_MAX_BYTES);
    return fail_file(err, name, 1, 1, "is this the right file?", msg);
  }
  const char *nul = memchr(text, '\0', len);
  if (nul != NULL) {
    int line, col;
    line_col(text, (size_t)(nul - text), &line, &col);
    return fail_file(err, name, line, col,
                     "a scenario is UTF-8 text; is this a binary file?",
                     "NUL byte in the input");
  }
  size_t bad = scn__utf8_invalid_at(text, len);
  if (bad < len) {
    int line, col;
    char msg[64];
    line_col(text, bad, &line, &col);
    snprintf(msg, sizeof msg, "not UTF-8 text (byte 0x%02x)",
             (unsigned char)text[bad]);
    return fail_file(err, name, line, col,
                     "a scenario is UTF-8 text; is this a binary file?", msg);
  }
  return SIM_OK;
}

/* libfyaml 0.7 has no allocator hook and reports a failed allocation
 * inside fy_parse_load_document by no document and no diagnostic: to the
 * caller an empty stream and a parser that could not allocate look alike
 * (under `ulimit -v` the built-in catalog read as "the scenario is
 * empty", exit 2). What tells them apart is errno, which malloc sets to
 * ENOMEM when it fails and which a parse of text in memory (no I/O) has
 * no other cause to set; so errno is cleared before each load and read
 * right after, and a failed load with ENOMEM is the run's failure
 * (SIM_ENOMEM, exit 1) even with a diagnostic, which the parser may have
 * written about its own failure. The one way to be wrong: glibc's malloc
 * can leave ENOMEM behind when brk fails and its mmap fallback succeeds,
 * so text that really is empty or wrong, read within a few hundred KB of
 * an address-space limit, may be called out of memory (exit 1, not 2). */
static int out_of_memory(const scn_doc *doc, sim_error *err) {
  return sim_error_set(err, SIM_ENOMEM, "%s: out of memory parsing it",
                       doc->name);
}

static int syntax_error(scn_doc *doc, int load_errno, sim_error *err) {
  if (load_errno == ENOMEM)
    return out_of_memory(doc, err);
  void *it = NULL;
  struct fy_diag_error *e = fy_diag_errors_iterate(doc->diag, &it);
  if (e == NULL)
    return fail_file(err, doc->name, 1, 1,
                     "a scenario is a YAML mapping, e.g. 'name: test'",
                     "the scenario is empty");
  char msg[400];
  snprintf(msg, sizeof msg, "YAML syntax error: %s", e->msg);
  return fail_file(err, doc->name, e->line > 0 ? e->line : 1,
                   e->column > 0 ? e->column : 1,
                   "check the indentation, colons and quotes here", msg);
}

/* libfyaml 0.7.12's fy_parser_set_string writes through the NULL of its
 * input's allocation when that allocation fails (fy_parse_input_append
 * checks the parser where it means the input): a crash, not an error,
 * seen by test_scenario stepping malloc's free memory up 256 bytes at a
 * time. A block well above the input's size (a few hundred bytes),
 * allocated and freed just before, leaves malloc a free chunk to serve
 * it from; a block malloc cannot give is out of memory, told as the
 * parser's other failures are. Written to, so that the pair is not
 * optimised away. */
enum { INPUT_ROOM = 4096 };

static bool input_room(void) {
  volatile char *p = malloc(INPUT_ROOM);
  if (p == NULL)
    return false;
  p[0] = 0;
  free((void *)p);
  return true;
}

static int parse_text(scn_doc *doc, size_t len, sim_error *err) {
  struct fy_diag_cfg dcfg;
  fy_diag_cfg_default(&dcfg);
  dcfg.fp = NULL;
  dcfg.colorize = false;
  doc->diag = fy_diag_create(&dcfg);
  if (doc->diag == NULL)
    return out_of_memory(doc, err);
  fy_diag_set_collect_errors(doc->diag, true);
  struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET, .diag = doc->diag};
  doc->parser = fy_parser_create(&cfg);
  if (doc->parser == NULL || !input_room() ||
      fy_parser_set_string(doc->parser, doc->text, len))
    return out_of_memory(doc, err);
  errno = 0;
  doc->fyd = fy_parse_load_document(doc->parser);
  int load_errno = errno;
  if (doc->fyd == NULL)
    return syntax_error(doc, load_errno, err);
  if (fy_document_root(doc->fyd) == NULL) /* loaded, and empty */
    return syntax_error(doc, 0, err);
  errno = 0;
  struct fy_document *next = fy_parse_load_document(doc->parser);
  load_errno = errno;
  if (next != NULL) {
    struct fy_node *root = fy_document_root(next);
    char pos[512];
    where(doc, root, 0, pos, sizeof pos);
    fy_parse_document_destroy(doc->parser, next);
    return sim_error_set(err, SIM_EINPUT,
                         "%s: a second YAML document ('---'); a scenario "
                         "is one document",
                         pos);
  }
  if (fy_diag_got_error(doc->diag))
    return syntax_error(doc, load_errno, err);
  return SIM_OK;
}

static int check_root(scn_doc *doc, sim_error *err) {
  struct fy_node *root = fy_document_root(doc->fyd);
  if (fy_node_get_type(root) != FYNT_MAPPING)
    return scn__fail_at(doc, root, 0, err,
                        "a scenario is a YAML mapping, e.g. 'name: test'",
                        "the scenario must be a mapping of keys to values");
  return SIM_OK;
}

scn_doc *scn_doc_read_string(const char *name, const char *text, size_t len,
                             sim_error *err) {
  if (check_bytes(name, text, len, err) != SIM_OK)
    return NULL;
  size_t name_len = strlen(name) + 1;
  scn_doc *doc = sim_calloc(NULL, 1, sizeof *doc);
  if (doc == NULL || (doc->name = sim_alloc(NULL, name_len)) == NULL ||
      (doc->text = sim_alloc(NULL, len + 1)) == NULL) {
    sim_error_set(err, SIM_ENOMEM, "%s: out of memory parsing it", name);
    scn_doc_destroy(doc);
    return NULL;
  }
  memcpy(doc->name, name, name_len);
  memcpy(doc->text, text, len);
  doc->text[len] = '\0';
  if (parse_text(doc, len, err) != SIM_OK || check_root(doc, err) != SIM_OK) {
    scn_doc_destroy(doc);
    return NULL;
  }
  return doc;
}

scn_doc *scn_doc_read_file(const char *path, sim_error *err) {
  size_t len = 0;
  sim_error why = {0};
  char *text = sim_file_read(path, SCN_MAX_BYTES, &len, &why);
  if (text == NULL && why.code == SIM_ERANGE) {
    char msg[128];
    snprintf(msg, sizeof msg,
             "the file is %zu bytes; a scenario may have at most %zu", len,
             SCN_MAX_BYTES);
    fail_file(err, path, 1, 1, "is this the right file?", msg);
    return NULL;
  }
  if (text == NULL) {
    sim_error_set(err, why.code, "%s", why.msg);
    return NULL;
  }
  scn_doc *doc = scn_doc_read_string(path, text, len, err);
  sim_free(NULL, text);
  return doc;
}
