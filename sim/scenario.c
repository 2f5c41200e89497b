/* scenario.c - the schema-driven YAML loader, the override mechanism and
 * the resolved-scenario writer.
 *
 * Reading keeps libfyaml's document (and the parser that owns it) for the
 * life of the scn_doc, so any later check can point at a node. Every
 * message carries a position: libfyaml's own for syntax errors (1-based),
 * a scalar token's start mark (0-based, hence the +1) for everything else,
 * and for a value that came from --set, the override text itself. */
#include "scenario.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "file.h"

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
  size_t noverrides;
};

/* Where a struct came from: its mapping node (NULL when the struct was
 * defaulted whole) and the struct that holds it. */
struct scn_loc {
  scn_doc *doc;
  struct fy_node *map;
  const scn_loc *parent;
  const char *key; /* the key the struct sits under in its parent */
};

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

static int vfail_at(const scn_doc *doc, struct fy_node *n, size_t extra,
                    sim_error *err, const char *hint, const char *fmt,
                    va_list ap) {
  char pos[512], msg[600];
  where(doc, n, extra, pos, sizeof pos);
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (hint != NULL)
    return sim_error_set(err, SIM_EINPUT, "%s: %s\n  hint: %s", pos, msg, hint);
  return sim_error_set(err, SIM_EINPUT, "%s: %s", pos, msg);
}

static int fail_at(const scn_doc *doc, struct fy_node *n, size_t extra,
                   sim_error *err, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int fail_at(const scn_doc *doc, struct fy_node *n, size_t extra,
                   sim_error *err, const char *hint, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = vfail_at(doc, n, extra, err, hint, fmt, ap);
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
    free(doc->overrides[i].text);
  free(doc->overrides);
  free(doc->text);
  free(doc->name);
  free(doc);
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

/* The length of the UTF-8 sequence that starts with byte b, 0 if none. */
static size_t utf8_length(unsigned char b) {
  if (b < 0x80)
    return 1;
  if (b >= 0xc2 && b <= 0xdf)
    return 2;
  if (b >= 0xe0 && b <= 0xef)
    return 3;
  if (b >= 0xf0 && b <= 0xf4)
    return 4;
  return 0;
}

/* The offset of the first byte that is not well-formed UTF-8, or len.
 * Overlong and surrogate forms are left to the parser: this is about
 * telling a binary file from text, with the position of the first byte
 * that gives it away. */
static size_t utf8_invalid_at(const char *text, size_t len) {
  const unsigned char *s = (const unsigned char *)text;
  for (size_t i = 0; i < len;) {
    size_t n = utf8_length(s[i]);
    if (n == 0 || i + n > len)
      return i;
    for (size_t k = 1; k < n; k++)
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
  size_t bad = utf8_invalid_at(text, len);
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

static int syntax_error(scn_doc *doc, sim_error *err) {
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

static int parse_text(scn_doc *doc, size_t len, sim_error *err) {
  struct fy_diag_cfg dcfg;
  fy_diag_cfg_default(&dcfg);
  dcfg.fp = NULL;
  dcfg.colorize = false;
  doc->diag = fy_diag_create(&dcfg);
  if (doc->diag == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  fy_diag_set_collect_errors(doc->diag, true);
  struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET, .diag = doc->diag};
  doc->parser = fy_parser_create(&cfg);
  if (doc->parser == NULL || fy_parser_set_string(doc->parser, doc->text, len))
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  doc->fyd = fy_parse_load_document(doc->parser);
  if (doc->fyd == NULL || fy_document_root(doc->fyd) == NULL)
    return syntax_error(doc, err);
  struct fy_document *next = fy_parse_load_document(doc->parser);
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
    return syntax_error(doc, err);
  return SIM_OK;
}

static int check_root(scn_doc *doc, sim_error *err) {
  struct fy_node *root = fy_document_root(doc->fyd);
  if (fy_node_get_type(root) != FYNT_MAPPING)
    return fail_at(doc, root, 0, err,
                   "a scenario is a YAML mapping, e.g. 'name: test'",
                   "the scenario must be a mapping of keys to values");
  return SIM_OK;
}

scn_doc *scn_doc_read_string(const char *name, const char *text, size_t len,
                             sim_error *err) {
  if (check_bytes(name, text, len, err) != SIM_OK)
    return NULL;
  scn_doc *doc = calloc(1, sizeof *doc);
  if (doc == NULL || (doc->name = strdup(name)) == NULL ||
      (doc->text = malloc(len + 1)) == NULL) {
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    scn_doc_destroy(doc);
    return NULL;
  }
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
  free(text);
  return doc;
}

/* ------------------------------------------------------------------ */
/* Overrides (--set key.path=value)                                    */
/* ------------------------------------------------------------------ */

/* Splits "a.b[2].c" into segments "a", "b", "2", "c" in place. */
static size_t split_path(char *path, char **seg, size_t max) {
  size_t n = 0;
  for (char *p = path; *p != '\0' && n < max;) {
    seg[n++] = p;
    p += strcspn(p, ".[]");
    while (*p == '.' || *p == '[' || *p == ']')
      *p++ = '\0';
  }
  return n;
}

static int set_fail(sim_error *err, const char *text, const char *msg) {
  return sim_error_set(err, SIM_EINPUT, "--set %s:1:1: %s", text, msg);
}

static struct fy_node *make_key(scn_doc *doc, const char *key) {
  return fy_node_create_scalar_copy(doc->fyd, key, strlen(key));
}

/* Puts value at key of map, replacing an old value or adding the pair;
 * *added is the key node when one was added. */
static int map_put(scn_doc *doc, struct fy_node *map, const char *key,
                   struct fy_node *value, struct fy_node **added) {
  struct fy_node_pair *p =
      fy_node_mapping_lookup_pair_by_string(map, key, FY_NT);
  *added = NULL;
  if (p != NULL)
    return fy_node_pair_set_value(p, value);
  struct fy_node *k = make_key(doc, key);
  if (k == NULL || fy_node_mapping_append(map, k, value) != 0) {
    fy_node_free(k);
    return -1;
  }
  *added = k;
  return 0;
}

static int seq_index(struct fy_node *seq, const char *s, int *index) {
  char *end;
  long i = strtol(s, &end, 10);
  if (*s == '\0' || *end != '\0' || i < 0 ||
      i >= fy_node_sequence_item_count(seq))
    return -1;
  *index = (int)i;
  return 0;
}

/* Walks segs[0..n-1) from the root, creating mappings that are missing;
 * returns the container of the last segment or NULL with err set. */
static struct fy_node *walk_to_parent(scn_doc *doc, char **segs, size_t n,
                                      const char *text, sim_error *err) {
  struct fy_node *cur = fy_document_root(doc->fyd);
  for (size_t i = 0; i + 1 < n; i++) {
    struct fy_node *next = NULL;
    if (fy_node_get_type(cur) == FYNT_SEQUENCE) {
      int k;
      if (seq_index(cur, segs[i], &k) != 0) {
        set_fail(err, text, "list index out of range or not a number");
        return NULL;
      }
      next = fy_node_sequence_get_by_index(cur, k);
    } else if (fy_node_get_type(cur) == FYNT_MAPPING) {
      next = fy_node_mapping_lookup_by_string(cur, segs[i], FY_NT);
      if (next == NULL) {
        struct fy_node *added;
        next = fy_node_create_mapping(doc->fyd);
        if (next == NULL || map_put(doc, cur, segs[i], next, &added) != 0) {
          sim_error_set(err, SIM_ENOMEM, "out of memory");
          return NULL;
        }
      }
    } else {
      set_fail(err, text,
               "the path goes through a value that is not a "
               "mapping or a list");
      return NULL;
    }
    cur = next;
  }
  return cur;
}

static int put_value(scn_doc *doc, struct fy_node *parent, const char *key,
                     struct fy_node *value, override *o, sim_error *err) {
  int k;
  switch (fy_node_get_type(parent)) {
  case FYNT_MAPPING:
    return map_put(doc, parent, key, value, &o->key) == 0
               ? SIM_OK
               : sim_error_set(err, SIM_ENOMEM, "out of memory");
  case FYNT_SEQUENCE:
    if (seq_index(parent, key, &k) != 0)
      return set_fail(err, o->text,
                      "list index out of range or not a "
                      "number");
    struct fy_node *old = fy_node_sequence_get_by_index(parent, k);
    if (fy_node_sequence_insert_after(parent, old, value) != 0)
      return sim_error_set(err, SIM_ENOMEM, "out of memory");
    fy_node_free(fy_node_sequence_remove(parent, old));
    return SIM_OK;
  default:
    return set_fail(err, o->text,
                    "the path goes through a value that is "
                    "not a mapping or a list");
  }
}

static int add_override(scn_doc *doc, const override *o, sim_error *err) {
  override *all =
      realloc(doc->overrides, (doc->noverrides + 1) * sizeof *doc->overrides);
  if (all == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  doc->overrides = all;
  all[doc->noverrides] = *o;
  if ((all[doc->noverrides].text = strdup(o->text)) == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  doc->noverrides++;
  return SIM_OK;
}

int scn_doc_set(scn_doc *doc, const char *assignment, sim_error *err) {
  const char *eq = strchr(assignment, '=');
  if (eq == NULL || eq == assignment || eq[1] == '\0')
    return set_fail(err, assignment,
                    "expected KEY=VALUE, e.g. "
                    "power.cap=18MW");
  char path[512], *segs[32];
  size_t plen = (size_t)(eq - assignment);
  if (plen >= sizeof path)
    return set_fail(err, assignment, "key path too long");
  memcpy(path, assignment, plen);
  path[plen] = '\0';
  size_t n = split_path(path, segs, 32);
  if (n == 0)
    return set_fail(err, assignment, "empty key path");
  struct fy_node *value = fy_node_build_from_string(doc->fyd, eq + 1, FY_NT);
  if (value == NULL)
    return set_fail(err, assignment, "the value is not valid YAML");
  override o = {(char *)assignment, plen + 2, value, NULL};
  struct fy_node *parent = walk_to_parent(doc, segs, n, assignment, err);
  int rc = parent != NULL ? put_value(doc, parent, segs[n - 1], value, &o, err)
                          : SIM_EINPUT;
  if (rc != SIM_OK) {
    fy_node_free(value);
    return rc;
  }
  return add_override(doc, &o, err);
}

/* ------------------------------------------------------------------ */
/* Binding                                                             */
/* ------------------------------------------------------------------ */

typedef struct bind_ctx {
  scn_doc *doc;
  void *user;
  sim_error *err;
} bind_ctx;

static int bind_struct(bind_ctx *c, const scn_schema *s, void *obj,
                       struct fy_node *map, const scn_loc *parent,
                       const char *key);

static void *at(void *obj, size_t off) { return (char *)obj + off; }
static const void *cat(const void *obj, size_t off) {
  return (const char *)obj + off;
}

static const char *type_name(scn_type t) {
  static const char *const names[] = {"a quantity with a unit",
                                      "an integer",
                                      "true or false",
                                      "a string",
                                      "one of a set of names",
                                      "a mapping",
                                      "a list",
                                      "a list of strings"};
  return names[t];
}

/* The scalar text of n as a NUL-terminated copy in buf; -1 if too long. */
static int scalar_text(struct fy_node *n, char *buf, size_t size) {
  size_t len = 0;
  const char *s = fy_node_get_scalar(n, &len);
  if (s == NULL || len >= size)
    return -1;
  memcpy(buf, s, len);
  buf[len] = '\0';
  return 0;
}

static bool is_null(struct fy_node *n) {
  if (fy_node_get_style(n) != FYNS_PLAIN)
    return false;
  size_t len = 0;
  const char *s = fy_node_get_scalar(n, &len);
  return len == 0 || (len == 1 && *s == '~') ||
         (len == 4 && memcmp(s, "null", 4) == 0);
}

static int need_kind(bind_ctx *c, const scn_field *f, struct fy_node *n,
                     enum fy_node_type want) {
  if (fy_node_is_alias(n))
    return fail_at(c->doc, n, 0, c->err, "write the value out in full",
                   "'%s': YAML aliases are not supported", f->key);
  if (fy_node_get_type(n) == FYNT_SCALAR && is_null(n))
    return fail_at(c->doc, n, 0, c->err, f->help, "'%s' has no value", f->key);
  if (fy_node_get_type(n) == want)
    return SIM_OK;
  if (fy_node_get_type(fy_node_get_parent(n)) == FYNT_SEQUENCE)
    return fail_at(c->doc, n, 0, c->err, f->help,
                   "each item of '%s' must be %s", f->key,
                   want == FYNT_MAPPING ? "a mapping" : "a single value");
  return fail_at(c->doc, n, 0, c->err, f->help, "'%s' must be %s", f->key,
                 type_name(f->type));
}

static int check_range(bind_ctx *c, const scn_field *f, struct fy_node *n,
                       double v, const char *text) {
  char lo[64], hi[64];
  if (!isfinite(v))
    return fail_at(c->doc, n, 0, c->err, f->help, "'%s' is out of range (%s)",
                   f->key, text);
  if ((f->flags & SCN_POSITIVE) && !(v > 0))
    return fail_at(c->doc, n, 0, c->err, f->help,
                   "'%s' must be greater than zero (got %s)", f->key, text);
  if (f->min < f->max && (v < f->min || v > f->max)) {
    units_format(f->min, f->dim, lo, sizeof lo);
    units_format(f->max, f->dim, hi, sizeof hi);
    if (isinf(f->max))
      return fail_at(c->doc, n, 0, c->err, f->help,
                     "'%s' is %s; it must be at least %s", f->key, text, lo);
    return fail_at(c->doc, n, 0, c->err, f->help,
                   "'%s' is %s; it must be between %s and %s", f->key, text, lo,
                   hi);
  }
  return SIM_OK;
}

static int parse_int(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*s == '\0' || *end != '\0' || errno == ERANGE)
    return -1;
  *out = v;
  return 0;
}

/* Reads a scalar field's text (from the document or the default) into obj.
 * n is the node for positions (NULL for a default: then it cannot fail but
 * through a schema bug, reported at the struct). */
static int load_scalar(bind_ctx *c, const scn_field *f, void *obj,
                       const char *text, struct fy_node *n) {
  units_problem p;
  double v;
  int64_t i;
  switch (f->type) {
  case SCN_QUANTITY:
    if (units_parse(text, f->dim, &v, &p) != 0)
      return fail_at(c->doc, n, p.offset, c->err, f->help, "'%s': %s", f->key,
                     p.msg);
    *(double *)at(obj, f->offset) = v;
    return check_range(c, f, n, v, text);
  case SCN_INT:
    if (parse_int(text, &i) != 0)
      return fail_at(c->doc, n, 0, c->err, f->help,
                     "'%s' must be an integer, not '%s'", f->key, text);
    *(int64_t *)at(obj, f->offset) = i;
    return check_range(c, f, n, (double)i, text);
  case SCN_BOOL:
    if (strcmp(text, "true") != 0 && strcmp(text, "false") != 0)
      return fail_at(c->doc, n, 0, c->err, f->help,
                     "'%s' must be true or false, not '%s'", f->key, text);
    *(bool *)at(obj, f->offset) = strcmp(text, "true") == 0;
    return SIM_OK;
  default:
    break;
  }
  return SIM_EINVAL;
}

static int load_enum(bind_ctx *c, const scn_field *f, void *obj,
                     const char *text, struct fy_node *n) {
  char names[400] = "";
  for (int k = 0; f->names[k] != NULL; k++) {
    if (strcmp(text, f->names[k]) == 0) {
      *(int *)at(obj, f->offset) = k;
      return SIM_OK;
    }
    size_t len = strlen(names);
    snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "",
             f->names[k]);
  }
  char hint[480];
  snprintf(hint, sizeof hint, "one of: %s", names);
  return fail_at(c->doc, n, 0, c->err, hint, "'%s' cannot be '%s'", f->key,
                 text);
}

static int load_string(bind_ctx *c, const scn_field *f, char **dst,
                       const char *text, struct fy_node *n) {
  if ((f->flags & SCN_NONEMPTY) && *text == '\0')
    return fail_at(c->doc, n, 0, c->err, f->help, "'%s' must not be empty",
                   f->key);
  *dst = strdup(text);
  return *dst != NULL ? SIM_OK
                      : sim_error_set(c->err, SIM_ENOMEM, "out of memory");
}

/* A scalar-typed field from node n (NULL: from the default text). */
static int load_leaf(bind_ctx *c, const scn_field *f, void *obj,
                     struct fy_node *n, struct fy_node *map) {
  char buf[4096];
  const char *text = f->dflt;
  if (n != NULL) {
    int rc = need_kind(c, f, n, FYNT_SCALAR);
    if (rc != SIM_OK)
      return rc;
    if (scalar_text(n, buf, sizeof buf) != 0)
      return fail_at(c->doc, n, 0, c->err, NULL, "'%s' is too long", f->key);
    text = buf;
  }
  struct fy_node *pos = n != NULL ? n : map;
  if (f->type == SCN_STRING)
    return load_string(c, f, (char **)at(obj, f->offset), text, pos);
  if (f->type == SCN_ENUM)
    return load_enum(c, f, obj, text, pos);
  return load_scalar(c, f, obj, text, pos);
}

static int load_strings(bind_ctx *c, const scn_field *f, void *obj,
                        struct fy_node *n) {
  size_t count = (size_t)fy_node_sequence_item_count(n);
  char **items = calloc(count ? count : 1, sizeof *items);
  if (items == NULL)
    return sim_error_set(c->err, SIM_ENOMEM, "out of memory");
  *(char ***)at(obj, f->offset) = items;
  void *it = NULL;
  struct fy_node *item;
  size_t k = 0;
  while ((item = fy_node_sequence_iterate(n, &it)) != NULL) {
    int rc = need_kind(c, f, item, FYNT_SCALAR);
    char buf[4096];
    if (rc == SIM_OK && scalar_text(item, buf, sizeof buf) != 0)
      rc = fail_at(c->doc, item, 0, c->err, NULL, "item too long");
    if (rc == SIM_OK)
      rc = load_string(c, f, &items[k], buf, item);
    if (rc != SIM_OK)
      return rc;
    *(size_t *)at(obj, f->count_offset) = ++k;
  }
  return SIM_OK;
}

static int load_list(bind_ctx *c, const scn_field *f, void *obj,
                     struct fy_node *n, const scn_loc *loc) {
  size_t count = (size_t)fy_node_sequence_item_count(n);
  if ((f->flags & SCN_NONEMPTY) && count == 0)
    return fail_at(c->doc, n, 0, c->err, f->help,
                   "'%s' needs at least one item", f->key);
  char *items = calloc(count ? count : 1, f->sub->size);
  if (items == NULL)
    return sim_error_set(c->err, SIM_ENOMEM, "out of memory");
  *(void **)at(obj, f->offset) = items;
  void *it = NULL;
  struct fy_node *item;
  for (size_t k = 0; (item = fy_node_sequence_iterate(n, &it)) != NULL; k++) {
    int rc = need_kind(c, f, item, FYNT_MAPPING);
    if (rc == SIM_OK)
      rc = bind_struct(c, f->sub, items + k * f->sub->size, item, loc, f->key);
    if (rc != SIM_OK)
      return rc;
    /* Counted only once bound, so release never frees a half-made item
     * twice: bind_struct cleans up its own on failure. */
    *(size_t *)at(obj, f->count_offset) = k + 1;
  }
  return SIM_OK;
}

static int load_field(bind_ctx *c, const scn_field *f, void *obj,
                      struct fy_node *n, const scn_loc *loc) {
  int rc;
  switch (f->type) {
  case SCN_MAP:
    if (n != NULL && (rc = need_kind(c, f, n, FYNT_MAPPING)) != SIM_OK)
      return rc;
    return bind_struct(c, f->sub, at(obj, f->offset), n, loc, f->key);
  case SCN_LIST:
    if (n == NULL)
      return (f->flags & SCN_NONEMPTY)
                 ? fail_at(c->doc, loc->map, 0, c->err, f->help,
                           "'%s' needs at least one item", f->key)
                 : SIM_OK;
    if ((rc = need_kind(c, f, n, FYNT_SEQUENCE)) != SIM_OK)
      return rc;
    return load_list(c, f, obj, n, loc);
  case SCN_STRINGS:
    if (n == NULL)
      return SIM_OK;
    if ((rc = need_kind(c, f, n, FYNT_SEQUENCE)) != SIM_OK)
      return rc;
    return load_strings(c, f, obj, n);
  default:
    break;
  }
  if (n == NULL && f->dflt == NULL) {
    if (f->type == SCN_QUANTITY)
      *(double *)at(obj, f->offset) = NAN;
    return SIM_OK;
  }
  return load_leaf(c, f, obj, n, loc->map);
}

static const scn_field *find_field(const scn_schema *s, const char *key) {
  for (size_t i = 0; i < s->nfields; i++)
    if (strcmp(s->fields[i].key, key) == 0)
      return &s->fields[i];
  return NULL;
}

/* Edit distance, for "did you mean"; capped, keys are short. */
static size_t distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b), row[64];
  if (la >= 63 || lb >= 63)
    return 99;
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t sub = diag + (tolower((unsigned char)a[i - 1]) !=
                           tolower((unsigned char)b[j - 1]));
      size_t best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
      row[j] = sub < best ? sub : best;
      diag = up;
    }
  }
  return row[lb];
}

static void key_hint(const scn_schema *s, const char *key, char *hint,
                     size_t size) {
  const char *best = NULL;
  size_t best_d = 3;
  for (size_t i = 0; i < s->nfields; i++) {
    size_t d = distance(key, s->fields[i].key);
    if (d < best_d) {
      best_d = d;
      best = s->fields[i].key;
    }
  }
  size_t len = 0;
  if (best != NULL)
    len = (size_t)snprintf(hint, size, "did you mean '%s'? ", best);
  len += (size_t)snprintf(hint + len, size - len, "%s keys:", s->name);
  for (size_t i = 0; i < s->nfields && len < size; i++)
    len += (size_t)snprintf(hint + len, size - len, "%s %s", i ? "," : "",
                            s->fields[i].key);
}

static int check_keys(bind_ctx *c, const scn_schema *s, struct fy_node *map) {
  void *it = NULL;
  struct fy_node_pair *p;
  while ((p = fy_node_mapping_iterate(map, &it)) != NULL) {
    struct fy_node *k = fy_node_pair_key(p);
    char key[256], hint[1024];
    if (fy_node_get_type(k) != FYNT_SCALAR ||
        scalar_text(k, key, sizeof key) != 0)
      return fail_at(c->doc, k, 0, c->err, NULL,
                     "keys must be short plain names");
    if (find_field(s, key) != NULL)
      continue;
    key_hint(s, key, hint, sizeof hint);
    return fail_at(c->doc, k, 0, c->err, hint, "unknown key '%s' in %s", key,
                   s->name);
  }
  return SIM_OK;
}

static int bind_fields(bind_ctx *c, const scn_schema *s, void *obj,
                       const scn_loc *loc) {
  for (size_t i = 0; i < s->nfields; i++) {
    const scn_field *f = &s->fields[i];
    struct fy_node *n =
        loc->map ? fy_node_mapping_lookup_by_string(loc->map, f->key, FY_NT)
                 : NULL;
    if (n == NULL && (f->flags & SCN_REQUIRED)) {
      struct fy_node *pos = loc->map;
      for (const scn_loc *l = loc; pos == NULL && l != NULL; l = l->parent)
        pos = l->map;
      return fail_at(c->doc, pos, 0, c->err, f->help,
                     "missing required key '%s' in %s", f->key, s->name);
    }
    int rc = load_field(c, f, obj, n, loc);
    if (rc != SIM_OK)
      return rc;
  }
  return SIM_OK;
}

static int bind_struct(bind_ctx *c, const scn_schema *s, void *obj,
                       struct fy_node *map, const scn_loc *parent,
                       const char *key) {
  scn_loc loc = {c->doc, map, parent, key};
  int rc = map != NULL ? check_keys(c, s, map) : SIM_OK;
  if (rc == SIM_OK)
    rc = bind_fields(c, s, obj, &loc);
  if (rc == SIM_OK && s->check != NULL)
    rc = s->check(obj, &loc, c->user, c->err);
  if (rc != SIM_OK)
    scn_release(s, obj);
  return rc;
}

int scn_bind(scn_doc *doc, const scn_schema *schema, void *obj, void *user,
             sim_error *err) {
  bind_ctx c = {doc, user, err};
  return bind_struct(&c, schema, obj, fy_document_root(doc->fyd), NULL, NULL);
}

int scn_bind_string(const char *name, const char *text,
                    const scn_schema *schema, void *obj, void *user,
                    sim_error *err) {
  scn_doc *doc = scn_doc_read_string(name, text, strlen(text), err);
  if (doc == NULL)
    return err != NULL ? err->code : SIM_EINPUT;
  int rc = scn_bind(doc, schema, obj, user, err);
  scn_doc_destroy(doc);
  return rc;
}

/* The node at a key path below map ("racks.2.gpu"), or the deepest one
 * found. */
static struct fy_node *lookup_path(struct fy_node *map, const char *key) {
  char path[256], *segs[16];
  snprintf(path, sizeof path, "%s", key);
  size_t n = split_path(path, segs, 16);
  struct fy_node *cur = map;
  for (size_t i = 0; i < n; i++) {
    struct fy_node *next = NULL;
    int k;
    if (fy_node_get_type(cur) == FYNT_MAPPING)
      next = fy_node_mapping_lookup_by_string(cur, segs[i], FY_NT);
    else if (fy_node_get_type(cur) == FYNT_SEQUENCE &&
             seq_index(cur, segs[i], &k) == 0)
      next = fy_node_sequence_get_by_index(cur, k);
    if (next == NULL)
      break;
    cur = next;
  }
  return cur;
}

int scn_doc_fail(scn_doc *doc, const char *path, sim_error *err,
                 const char *hint, const char *fmt, ...) {
  struct fy_node *root = fy_document_root(doc->fyd);
  va_list ap;
  va_start(ap, fmt);
  vfail_at(doc, lookup_path(root, path), 0, err, hint, fmt, ap);
  va_end(ap);
  return SIM_EINPUT;
}

const char *scn_doc_scalar(scn_doc *doc, const char *path) {
  struct fy_node *root = fy_document_root(doc->fyd);
  struct fy_node *n = lookup_path(root, path);
  if (n == root || fy_node_get_type(n) != FYNT_SCALAR || is_null(n))
    return NULL;
  return fy_node_get_scalar0(n);
}

int scn_fail(const scn_loc *loc, const char *key, sim_error *err,
             const char *hint, const char *fmt, ...) {
  struct fy_node *n = NULL;
  if (key != NULL && loc->map != NULL)
    n = lookup_path(loc->map, key);
  for (const scn_loc *l = loc; n == NULL && l != NULL; l = l->parent)
    n = l->map;
  va_list ap;
  va_start(ap, fmt);
  vfail_at(loc->doc, n, 0, err, hint, fmt, ap);
  va_end(ap);
  return SIM_EINPUT;
}

const char *scn_loc_file(const scn_loc *loc) { return loc->doc->name; }

bool scn_given(const scn_loc *loc, const char *key) {
  return loc->map != NULL &&
         fy_node_mapping_lookup_by_string(loc->map, key, FY_NT) != NULL;
}

const char *scn_enum_name(const scn_field *f, int value) {
  for (int k = 0; f->names[k] != NULL; k++)
    if (k == value)
      return f->names[k];
  return "?";
}

/* ------------------------------------------------------------------ */
/* Release                                                             */
/* ------------------------------------------------------------------ */

static void release_field(const scn_field *f, void *obj) {
  size_t *count = at(obj, f->count_offset);
  switch (f->type) {
  case SCN_STRING:
    free(*(char **)at(obj, f->offset));
    break;
  case SCN_MAP:
    scn_release(f->sub, at(obj, f->offset));
    break;
  case SCN_LIST: {
    char *items = *(char **)at(obj, f->offset);
    for (size_t k = 0; items != NULL && k < *count; k++)
      scn_release(f->sub, items + k * f->sub->size);
    free(items);
    break;
  }
  case SCN_STRINGS: {
    char **items = *(char ***)at(obj, f->offset);
    for (size_t k = 0; items != NULL && k < *count; k++)
      free(items[k]);
    free(items);
    break;
  }
  default:
    break;
  }
}

void scn_release(const scn_schema *schema, void *obj) {
  if (obj == NULL)
    return;
  if (schema->release != NULL)
    schema->release(obj);
  for (size_t i = 0; i < schema->nfields; i++)
    release_field(&schema->fields[i], obj);
  memset(obj, 0, schema->size);
}

/* ------------------------------------------------------------------ */
/* Emitting the resolved scenario                                      */
/* ------------------------------------------------------------------ */

typedef struct strbuf {
  char *s;
  size_t len, cap;
  bool failed;
} strbuf;

static void sb_put(strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sb_put(strbuf *b, const char *fmt, ...) {
  for (int tries = 0; tries < 2 && !b->failed; tries++) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0,
                      fmt, ap);
    va_end(ap);
    if (b->s != NULL && (size_t)n < b->cap - b->len) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = (b->cap + (size_t)n + 1) * 2;
    char *s = realloc(b->s, cap);
    if (s == NULL) {
      b->failed = true;
      return;
    }
    b->s = s;
    b->cap = cap;
  }
}

static void emit_quoted(strbuf *b, const char *s) {
  sb_put(b, "\"");
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      sb_put(b, "\\%c", ch);
    else if (ch < 0x20)
      sb_put(b, "\\x%02x", ch);
    else
      sb_put(b, "%c", ch);
  }
  sb_put(b, "\"");
}

static void emit_struct(strbuf *b, const scn_schema *s, const void *obj,
                        int indent, bool first_inline);

static bool omitted(const scn_field *f, const void *obj) {
  if (f->type == SCN_QUANTITY)
    return isnan(*(const double *)cat(obj, f->offset));
  if (f->type == SCN_STRING)
    return *(char *const *)cat(obj, f->offset) == NULL;
  return false;
}

static void emit_list(strbuf *b, const scn_field *f, const void *obj,
                      int indent) {
  size_t n = *(const size_t *)cat(obj, f->count_offset);
  if (n == 0) {
    sb_put(b, " []\n");
    return;
  }
  sb_put(b, "\n");
  for (size_t k = 0; k < n; k++) {
    sb_put(b, "%*s- ", indent + 2, "");
    if (f->type == SCN_STRINGS) {
      emit_quoted(b, (*(char **const *)cat(obj, f->offset))[k]);
      sb_put(b, "\n");
    } else {
      const char *items = *(char *const *)cat(obj, f->offset);
      emit_struct(b, f->sub, items + k * f->sub->size, indent + 4, true);
    }
  }
}

static void emit_value(strbuf *b, const scn_field *f, const void *obj,
                       int indent) {
  const void *v = cat(obj, f->offset);
  char buf[64];
  switch (f->type) {
  case SCN_QUANTITY:
    sb_put(b, " %s\n",
           units_format(*(const double *)v, f->dim, buf, sizeof buf));
    break;
  case SCN_INT:
    sb_put(b, " %lld\n", (long long)*(const int64_t *)v);
    break;
  case SCN_BOOL:
    sb_put(b, " %s\n", *(const bool *)v ? "true" : "false");
    break;
  case SCN_STRING:
    sb_put(b, " ");
    emit_quoted(b, *(char *const *)v);
    sb_put(b, "\n");
    break;
  case SCN_ENUM:
    sb_put(b, " %s\n", scn_enum_name(f, *(const int *)v));
    break;
  case SCN_MAP:
    sb_put(b, "\n");
    emit_struct(b, f->sub, v, indent + 2, false);
    break;
  case SCN_LIST:
  case SCN_STRINGS:
    emit_list(b, f, obj, indent);
    break;
  }
}

static void emit_struct(strbuf *b, const scn_schema *s, const void *obj,
                        int indent, bool first_inline) {
  bool inline_next = first_inline;
  for (size_t i = 0; i < s->nfields; i++) {
    const scn_field *f = &s->fields[i];
    if (omitted(f, obj))
      continue;
    sb_put(b, "%*s%s:", inline_next ? 0 : indent, "", f->key);
    inline_next = false;
    emit_value(b, f, obj, indent);
  }
  if (inline_next)
    sb_put(b, "{}\n");
}

char *scn_emit(const scn_schema *schema, const void *obj) {
  strbuf b = {0};
  emit_struct(&b, schema, obj, 0, false);
  if (b.failed) {
    free(b.s);
    return NULL;
  }
  return b.s != NULL ? b.s : strdup("{}\n");
}
