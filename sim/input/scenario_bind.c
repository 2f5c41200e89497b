/* scenario_bind.c - binding a document to a schema: each field read,
 * checked against its type and bounds, or defaulted; unknown keys refused
 * with a "did you mean"; the schema's check hook run; and the release of
 * what binding allocated. Also the lookups that later checks use to point
 * at a key (scn_fail, scn_doc_fail, scn_doc_scalar). */
#include "scenario.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "scenario_internal.h"
#include "suggest.h"

/* ------------------------------------------------------------------ */
/* Binding                                                             */
/* ------------------------------------------------------------------ */

/* Where a struct came from: its mapping node (NULL when the struct was
 * defaulted whole) and the struct that holds it. */
struct scn_loc {
  scn_doc *doc;
  struct fy_node *map;
  const scn_loc *parent;
  const char *key; /* the key the struct sits under in its parent */
};

typedef struct bind_ctx {
  scn_doc *doc;
  void *user;
  sim_error *err;
} bind_ctx;

static int bind_struct(bind_ctx *c, const scn_schema *s, void *obj,
                       struct fy_node *map, const scn_loc *parent,
                       const char *key);

static void *at(void *obj, size_t off) { return (char *)obj + off; }

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
/* Whether libfyaml has scalar n's token but could not make its text:
 * it builds a text with escapes or folds on demand, and a NULL then is a
 * failed allocation, not an empty value (which has no token). Without
 * this a run short of memory blamed the built-in catalog's values. */
static bool text_lost(struct fy_node *n) {
  size_t len = 0;
  return fy_node_get_type(n) == FYNT_SCALAR &&
         fy_node_get_scalar(n, &len) == NULL &&
         fy_node_get_scalar_token(n) != NULL;
}

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
  if (text_lost(n))
    return sim_error_set(c->err, SIM_ENOMEM, "out of memory");
  if (fy_node_is_alias(n))
    return scn__fail_at(c->doc, n, 0, c->err, "write the value out in full",
                        "'%s': YAML aliases are not supported", f->key);
  if (fy_node_get_type(n) == FYNT_SCALAR && is_null(n))
    return scn__fail_at(c->doc, n, 0, c->err, f->help, "'%s' has no value",
                        f->key);
  if (fy_node_get_type(n) == want)
    return SIM_OK;
  if (fy_node_get_type(fy_node_get_parent(n)) == FYNT_SEQUENCE)
    return scn__fail_at(c->doc, n, 0, c->err, f->help,
                        "each item of '%s' must be %s", f->key,
                        want == FYNT_MAPPING ? "a mapping" : "a single value");
  return scn__fail_at(c->doc, n, 0, c->err, f->help, "'%s' must be %s", f->key,
                      type_name(f->type));
}

/* Every quantity has an upper bound: its field's, or else the largest
 * of its kind (units_ceiling), which also bounds it from below when the
 * field sets no minimum. */
static int check_ceiling(bind_ctx *c, const scn_field *f, struct fy_node *n,
                         double v, const char *text) {
  double top = units_ceiling(f->dim);
  bool own = f->min < f->max;
  char hi[64];
  bool ok = own && f->max <= top ? true : own ? v <= top : fabs(v) <= top;
  if (ok)
    return SIM_OK;
  units_format(top, f->dim, hi, sizeof hi);
  return scn__fail_at(c->doc, n, 0, c->err, f->help,
                      "'%s' is %s; a %s may be at %s %s%s", f->key, text,
                      units_dim_name(f->dim), v > 0 ? "most" : "least",
                      v > 0 ? "" : "-", hi);
}

static int check_range(bind_ctx *c, const scn_field *f, struct fy_node *n,
                       double v, const char *text) {
  char lo[64], hi[64];
  if (!isfinite(v))
    return scn__fail_at(c->doc, n, 0, c->err, f->help,
                        "'%s' is out of range (%s)", f->key, text);
  if (f->type == SCN_QUANTITY && check_ceiling(c, f, n, v, text) != SIM_OK)
    return SIM_EINPUT;
  if ((f->flags & SCN_POSITIVE) && !(v > 0))
    return scn__fail_at(c->doc, n, 0, c->err, f->help,
                        "'%s' must be greater than zero (got %s)", f->key,
                        text);
  if (f->min < f->max && (v < f->min || v > f->max)) {
    units_format(f->min, f->dim, lo, sizeof lo);
    units_format(f->max, f->dim, hi, sizeof hi);
    if (isinf(f->max))
      return scn__fail_at(c->doc, n, 0, c->err, f->help,
                          "'%s' is %s; it must be at least %s", f->key, text,
                          lo);
    return scn__fail_at(c->doc, n, 0, c->err, f->help,
                        "'%s' is %s; it must be between %s and %s", f->key,
                        text, lo, hi);
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
      return scn__fail_at(c->doc, n, p.offset, c->err, f->help, "'%s': %s",
                          f->key, p.msg);
    *(double *)at(obj, f->offset) = v;
    return check_range(c, f, n, v, text);
  case SCN_INT:
    if (parse_int(text, &i) != 0)
      return scn__fail_at(c->doc, n, 0, c->err, f->help,
                          "'%s' must be an integer, not '%s'", f->key, text);
    *(int64_t *)at(obj, f->offset) = i;
    return check_range(c, f, n, (double)i, text);
  case SCN_BOOL:
    if (strcmp(text, "true") != 0 && strcmp(text, "false") != 0)
      return scn__fail_at(c->doc, n, 0, c->err, f->help,
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
  sim_suggest near;
  sim_suggest_init(&near, text);
  for (int k = 0; f->names[k] != NULL; k++) {
    if (strcmp(text, f->names[k]) == 0) {
      *(int *)at(obj, f->offset) = k;
      return SIM_OK;
    }
    size_t len = strlen(names);
    snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "",
             f->names[k]);
    sim_suggest_add(&near, f->names[k]);
  }
  char hint[560];
  size_t len = sim_suggest_text(&near, hint, sizeof hint);
  snprintf(hint + len, sizeof hint - len, "one of: %s", names);
  return scn__fail_at(c->doc, n, 0, c->err, hint, "'%s' cannot be '%s'", f->key,
                      text);
}

static int load_string(bind_ctx *c, const scn_field *f, char **dst,
                       const char *text, struct fy_node *n) {
  if ((f->flags & SCN_NONEMPTY) && *text == '\0')
    return scn__fail_at(c->doc, n, 0, c->err, f->help, "'%s' must not be empty",
                        f->key);
  size_t len = strlen(text) + 1;
  if ((*dst = sim_alloc(NULL, len)) == NULL)
    return sim_error_set(c->err, SIM_ENOMEM, "out of memory");
  memcpy(*dst, text, len);
  return SIM_OK;
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
      return scn__fail_at(c->doc, n, 0, c->err, NULL, "'%s' is too long",
                          f->key);
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
  char **items = sim_calloc(NULL, count ? count : 1, sizeof *items);
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
      rc = scn__fail_at(c->doc, item, 0, c->err, NULL, "item too long");
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
    return scn__fail_at(c->doc, n, 0, c->err, f->help,
                        "'%s' needs at least one item", f->key);
  char *items = sim_calloc(NULL, count ? count : 1, f->sub->size);
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
                 ? scn__fail_at(c->doc, loc->map, 0, c->err, f->help,
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

static void key_hint(const scn_schema *s, const char *key, char *hint,
                     size_t size) {
  sim_suggest near;
  sim_suggest_init(&near, key);
  for (size_t i = 0; i < s->nfields; i++)
    sim_suggest_add(&near, s->fields[i].key);
  size_t len = sim_suggest_text(&near, hint, size);
  len += (size_t)snprintf(hint + len, size - len, "%s keys:", s->name);
  for (size_t i = 0; i < s->nfields && len < size; i++)
    len += (size_t)snprintf(hint + len, size - len, "%s %s", i ? "," : "",
                            s->fields[i].key);
}

/* Whether key looks like a key (letters, digits, _ - .), so a message may
 * quote it. Why: a file that is not a scenario at all (--set
 * catalog=/etc/shadow) must not have its first line echoed. */
static bool quotable(const char *key) {
  size_t n = strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789_-.");
  return n > 0 && key[n] == '\0' && n <= 64;
}

static int check_keys(bind_ctx *c, const scn_schema *s, struct fy_node *map) {
  void *it = NULL;
  struct fy_node_pair *p;
  while ((p = fy_node_mapping_iterate(map, &it)) != NULL) {
    struct fy_node *k = fy_node_pair_key(p);
    char key[256], hint[1024];
    if (text_lost(k))
      return sim_error_set(c->err, SIM_ENOMEM, "out of memory");
    if (fy_node_get_type(k) != FYNT_SCALAR ||
        scalar_text(k, key, sizeof key) != 0)
      return scn__fail_at(c->doc, k, 0, c->err, NULL,
                          "keys must be short plain names");
    if (find_field(s, key) != NULL)
      continue;
    key_hint(s, key, hint, sizeof hint);
    if (!quotable(key))
      return scn__fail_at(c->doc, k, 0, c->err, hint,
                          "unknown key in %s (not a plain name: is this "
                          "the right file?)",
                          s->name);
    return scn__fail_at(c->doc, k, 0, c->err, hint, "unknown key '%s' in %s",
                        key, s->name);
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
      return scn__fail_at(c->doc, pos, 0, c->err, f->help,
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
  size_t n = scn__split_path(path, segs, 16);
  struct fy_node *cur = map;
  for (size_t i = 0; i < n; i++) {
    struct fy_node *next = NULL;
    int k;
    if (fy_node_get_type(cur) == FYNT_MAPPING)
      next = fy_node_mapping_lookup_value_by_simple_key(cur, segs[i],
                                                        strlen(segs[i]));
    else if (fy_node_get_type(cur) == FYNT_SEQUENCE &&
             scn__seq_index(cur, segs[i], &k) == 0)
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
  scn__vfail_at(doc, lookup_path(root, path), 0, err, hint, fmt, ap);
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
  scn__vfail_at(loc->doc, n, 0, err, hint, fmt, ap);
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
    sim_free(NULL, *(char **)at(obj, f->offset));
    break;
  case SCN_MAP:
    scn_release(f->sub, at(obj, f->offset));
    break;
  case SCN_LIST: {
    char *items = *(char **)at(obj, f->offset);
    for (size_t k = 0; items != NULL && k < *count; k++)
      scn_release(f->sub, items + k * f->sub->size);
    sim_free(NULL, items);
    break;
  }
  case SCN_STRINGS: {
    char **items = *(char ***)at(obj, f->offset);
    for (size_t k = 0; items != NULL && k < *count; k++)
      sim_free(NULL, items[k]);
    sim_free(NULL, items);
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

static const char *item_name(const void *items, size_t i, size_t size,
                             size_t name_offset) {
  return *(char *const *)((const char *)items + i * size + name_offset);
}

/* The index of the item of items called name, or n. */
static size_t find_item(const void *items, size_t n, size_t size,
                        size_t name_offset, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(item_name(items, i, size, name_offset), name) == 0)
      return i;
  return n;
}

int scn_list_merge(const scn_schema *item, size_t name_offset, void **base,
                   size_t *nbase, void **add, size_t *nadd) {
  size_t size = item->size, n = *nbase;
  /* Room for every added item first, so a failure changes nothing. */
  char *out = sim_resize(NULL, *base, (n + *nadd ? n + *nadd : 1) * size);
  if (out == NULL)
    return SIM_ENOMEM;
  *base = out;
  for (size_t k = 0; k < *nadd; k++) {
    char *from = (char *)*add + k * size;
    size_t at = find_item(out, n, size, name_offset,
                          item_name(*add, k, size, name_offset));
    if (at < n)
      scn_release(item, out + at * size);
    else
      n++;
    memcpy(out + at * size, from, size);
  }
  *nbase = n;
  sim_free(NULL, *add);
  *add = NULL;
  *nadd = 0;
  return SIM_OK;
}
