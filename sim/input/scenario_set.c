/* scenario_set.c - overrides: `--set key.path=value` puts value into the
 * document at the path, creating the mappings that are missing, and
 * remembers the override so that messages about it point at its text. */
#include "scenario.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "scenario_internal.h"
#include "vec.h"

/* ------------------------------------------------------------------ */
/* Overrides (--set key.path=value)                                    */
/* ------------------------------------------------------------------ */

/* Splits "a.b[2].c" into segments "a", "b", "2", "c" in place. */
size_t scn__split_path(char *path, char **seg, size_t max) {
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

/* A key path holds no white space: "power.cap =650kW" is not the key
 * power.cap, and a key of a space could never be found (the loader would
 * call it unknown, far from the typo). The error is at the first space,
 * 1-based. len is the key path's length. */
static int check_key_text(const char *text, size_t len, sim_error *err) {
  for (size_t i = 0; i < len; i++)
    if (isspace((unsigned char)text[i]))
      return sim_error_set(err, SIM_EINPUT,
                           "--set %s:1:%zu: the key has a space in it; "
                           "write KEY=VALUE with no space in the key, e.g. "
                           "power.cap=650kW",
                           text, i + 1);
  return SIM_OK;
}

static struct fy_node *make_key(scn_doc *doc, const char *key) {
  return fy_node_create_scalar_copy(doc->fyd, key, strlen(key));
}

/* Puts value at key of map, replacing an old value or adding the pair;
 * *added is the key node when one was added. */
static int map_put(scn_doc *doc, struct fy_node *map, const char *key,
                   struct fy_node *value, struct fy_node **added) {
  struct fy_node_pair *p =
      fy_node_mapping_lookup_pair_by_simple_key(map, key, strlen(key));
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

int scn__seq_index(struct fy_node *seq, const char *s, int *index) {
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
      if (scn__seq_index(cur, segs[i], &k) != 0) {
        set_fail(err, text, "list index out of range or not a number");
        return NULL;
      }
      next = fy_node_sequence_get_by_index(cur, k);
    } else if (fy_node_get_type(cur) == FYNT_MAPPING) {
      /* A key is matched as written, not parsed as YAML: "a # b" is
       * that key, not "a" and a comment. */
      next = fy_node_mapping_lookup_value_by_simple_key(cur, segs[i],
                                                        strlen(segs[i]));
      if (next == NULL) {
        struct fy_node *added;
        next = fy_node_create_mapping(doc->fyd);
        if (next == NULL || map_put(doc, cur, segs[i], next, &added) != 0) {
          fy_node_free(next);
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
    if (scn__seq_index(parent, key, &k) != 0)
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
  if (sim_vec_reserve(NULL, &doc->overrides, &doc->overrides_cap,
                      doc->noverrides + 1, sizeof *doc->overrides) != SIM_OK)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  override *all = doc->overrides;
  all[doc->noverrides] = *o;
  size_t len = strlen(o->text) + 1;
  if ((all[doc->noverrides].text = sim_alloc(NULL, len)) == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  memcpy(all[doc->noverrides].text, o->text, len);
  doc->noverrides++;
  return SIM_OK;
}

int scn_doc_set(scn_doc *doc, const char *assignment, sim_error *err) {
  /* Text only, as for a scenario file: libfyaml can loop for ever on a
   * value that opens a directive ('%') with bytes that are not UTF-8
   * (found by fuzz_scenario). The bytes are not echoed. */
  size_t len = strlen(assignment), bad = scn__utf8_invalid_at(assignment, len);
  if (bad < len)
    return sim_error_set(err, SIM_EINPUT,
                         "--set: not UTF-8 text (byte 0x%02x at character "
                         "%zu)",
                         (unsigned char)assignment[bad], bad + 1);
  const char *eq = strchr(assignment, '=');
  if (eq == NULL || eq == assignment || eq[1] == '\0')
    return set_fail(err, assignment,
                    "expected KEY=VALUE, e.g. "
                    "power.cap=18MW");
  char path[512], *segs[32];
  size_t plen = (size_t)(eq - assignment);
  if (plen >= sizeof path)
    return set_fail(err, assignment, "key path too long");
  if (check_key_text(assignment, plen, err) != SIM_OK)
    return SIM_EINPUT;
  memcpy(path, assignment, plen);
  path[plen] = '\0';
  size_t n = scn__split_path(path, segs, 32);
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
/* Overlays (--set-file OVERLAY)                                       */
/* ------------------------------------------------------------------ */

/* The text of a scalar node, NUL-terminated into buf; NULL when n is not
 * a scalar or does not fit. */
static const char *scalar_text(struct fy_node *n, char *buf, size_t size) {
  size_t len;
  const char *s = fy_node_get_type(n) == FYNT_SCALAR
                      ? fy_node_get_scalar(n, &len)
                      : NULL;
  if (s == NULL || len >= size)
    return NULL;
  memcpy(buf, s, len);
  buf[len] = '\0';
  return buf;
}

/* Checks every pair of the overlay's set mapping and adds the length of
 * its "key=value" text to *bytes. */
static int overlay_measure(scn_doc *doc, struct fy_node *set, size_t *bytes,
                           size_t *n, sim_error *err) {
  void *it = NULL;
  struct fy_node_pair *p;
  char k[512], v[512];
  *bytes = 0;
  *n = 0;
  while ((p = fy_node_mapping_iterate(set, &it)) != NULL) {
    struct fy_node *kn = fy_node_pair_key(p), *vn = fy_node_pair_value(p);
    if (scalar_text(kn, k, sizeof k) == NULL || k[0] == '\0')
      return scn__fail_at(doc, kn, 0, err, "write KEY.PATH: VALUE",
                          "an overlay's key is a key path (a text)");
    if (vn == NULL || scalar_text(vn, v, sizeof v) == NULL)
      return scn__fail_at(doc, vn != NULL ? vn : kn, 0, err,
                          "e.g. racks.0.other_power_idle: 1.2 kW",
                          "an overlay's value is one value (a text of at "
                          "most 511 characters)");
    *bytes += strlen(k) + strlen(v) + 2;
    ++*n;
  }
  return SIM_OK;
}

/* Writes the n "key=value" texts of set after the n pointers at out. */
static void overlay_fill(struct fy_node *set, char **out, size_t n) {
  void *it = NULL;
  struct fy_node_pair *p;
  char *at = (char *)(out + n), k[512], v[512];
  for (size_t i = 0; (p = fy_node_mapping_iterate(set, &it)) != NULL; i++) {
    scalar_text(fy_node_pair_key(p), k, sizeof k);
    scalar_text(fy_node_pair_value(p), v, sizeof v);
    out[i] = at;
    at += sprintf(at, "%s=%s", k, v) + 1;
  }
}

int scn_overlay_read(const char *path, char ***sets, size_t *n,
                     sim_error *err) {
  *sets = NULL;
  *n = 0;
  scn_doc *doc = scn_doc_read_file(path, err);
  if (doc == NULL)
    return err->code;
  struct fy_node *root = fy_document_root(doc->fyd);
  struct fy_node *set =
      fy_node_get_type(root) == FYNT_MAPPING
          ? fy_node_mapping_lookup_value_by_simple_key(root, "set", 3)
          : NULL;
  size_t bytes = 0;
  int rc = SIM_OK;
  if (set == NULL || fy_node_get_type(set) != FYNT_MAPPING)
    rc = scn__fail_at(doc, set, 0, err,
                      "aifsim calibrate writes overlays: set: {KEY.PATH: "
                      "VALUE, ...}",
                      "an overlay needs a mapping 'set' of key paths to "
                      "values");
  if (rc == SIM_OK)
    rc = overlay_measure(doc, set, &bytes, n, err);
  if (rc == SIM_OK && *n == 0)
    rc = scn__fail_at(doc, set, 0, err, NULL, "the overlay sets nothing");
  if (rc == SIM_OK &&
      (*sets = malloc(*n * sizeof **sets + bytes)) == NULL)
    rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
  if (rc == SIM_OK)
    overlay_fill(set, *sets, *n);
  else
    *n = 0;
  scn_doc_destroy(doc);
  return rc;
}
