/* scenario.h - YAML scenarios into plain config structs (scn).
 * A schema (a static table of fields, as Redis's config table) says which
 * keys a struct has, their types, units, bounds and defaults, and where
 * each lives (offsetof). The loader walks a YAML document against it,
 * rejects what does not fit with FILE:LINE:COLUMN and a hint, fills in
 * defaults, and runs each schema's cross-field check. The same schema
 * writes the resolved scenario back out as YAML. This module knows nothing
 * of GPUs: models own their structs and schemas; the factory composes them.
 *
 * Field storage by type: SCN_QUANTITY double (canonical units, units.h),
 * SCN_INT int64_t, SCN_BOOL bool, SCN_STRING char * (owned), SCN_ENUM int
 * (index into names), SCN_MAP an embedded struct of schema sub, SCN_LIST a
 * pointer to an array of sub structs plus a size_t count at count_offset,
 * SCN_STRINGS a char ** array plus a size_t count at count_offset. */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "units.h"

typedef enum scn_type {
  SCN_QUANTITY,
  SCN_INT,
  SCN_BOOL,
  SCN_STRING,
  SCN_ENUM,
  SCN_MAP,
  SCN_LIST,
  SCN_STRINGS,
} scn_type;

enum scn_flags {
  SCN_REQUIRED = 1u << 0, /* absent is an error */
  SCN_POSITIVE = 1u << 1, /* must be > 0 (on top of min/max) */
  SCN_NONEMPTY = 1u << 2, /* lists and strings: at least one */
  /* Lists: the resolved scenario leaves the key out when it is empty
   * (integers: when 0), so a key added to a model writes nothing new
   * into files without it. */
  SCN_OMIT_EMPTY = 1u << 3,
};

typedef struct scn_schema scn_schema;
typedef struct scn_loc scn_loc;

typedef struct scn_field {
  const char *key;
  scn_type type;
  size_t offset;
  units_dim dim;    /* SCN_QUANTITY */
  double min, max;  /* inclusive bounds, canonical units; on when min < max */
  unsigned flags;   /* scn_flags */
  const char *dflt; /* default, written as in a scenario; NULL: none */
  const scn_schema *sub;    /* SCN_MAP and SCN_LIST */
  size_t count_offset;      /* SCN_LIST and SCN_STRINGS */
  const char *const *names; /* SCN_ENUM, NULL-terminated */
  const char *help;         /* one line, shown in hints */
} scn_field;

/* Called after every field of one struct is loaded (defaults included) to
 * check what spans fields and to fill computed defaults. user is what was
 * passed to scn_bind. Report problems with scn_fail. */
typedef int (*scn_check_fn)(void *obj, const scn_loc *loc, void *user,
                            sim_error *err);

struct scn_schema {
  const char *name; /* "rack group": used in messages */
  size_t size;      /* sizeof the struct */
  const scn_field *fields;
  size_t nfields;
  scn_check_fn check; /* may be NULL */
  /* Frees what check built beyond the fields (may be NULL); scn_release
   * calls it first. */
  void (*release)(void *obj);
};

/* A schema over a static field table: SCN_SCHEMA("rack group", rack_config,
 * rack_fields, .check = check_rack). */
#define SCN_SCHEMA(label, type, table, ...)                                    \
  {                                                                            \
    .name = label, .size = sizeof(type), .fields = table,                      \
    .nfields = sizeof table / sizeof table[0], __VA_ARGS__                     \
  }

/* A field absent with no default (and not required) is left as NaN
 * (quantities), 0, false or NULL; the check hook may fill it in. The
 * resolved scenario omits NaN quantities and NULL strings. */

typedef struct scn_doc scn_doc;

/* Limits on what is read, so no input can exhaust the machine: files
 * larger than this are refused, and nesting deeper than 64 levels (the
 * parser's own limit) is an error. */
#define SCN_MAX_BYTES ((size_t)1 << 20)

/* Reads a YAML scenario. Returns NULL with err set (SIM_EINPUT and a
 * "FILE:LINE:COLUMN: message" text, or SIM_EIO) on a file that cannot be
 * read, is empty, too large, holds a NUL byte, more than one document, or
 * is not valid YAML. The caller owns the result (scn_doc_destroy). */
scn_doc *scn_doc_read_file(const char *path, sim_error *err);

/* The same from memory; name stands for the file in messages. */
scn_doc *scn_doc_read_string(const char *name, const char *text, size_t len,
                             sim_error *err);

void scn_doc_destroy(scn_doc *doc);

/* The name given at reading (the path). Valid while doc lives. */
const char *scn_doc_name(const scn_doc *doc);

/* Applies an override "key.path=value" (value parsed as YAML; list items
 * as racks.0.count or racks[0].count), creating missing mappings on the way.
 * Whether the key exists and the value fits is checked by scn_bind, which
 * reports problems in an override as "--set KEY=VALUE:1:COLUMN: ...".
 * SIM_OK, or SIM_EINPUT with a message. */
int scn_doc_set(scn_doc *doc, const char *assignment, sim_error *err);

/* Reads an overlay (docs/CALIBRATION.md): a YAML file whose mapping
 * `set` holds key paths and values, as `aifsim calibrate` writes them;
 * its other keys (the fit's record) are not read. *sets gets the *n
 * "key=value" texts, for scn_doc_set, in the file's order: one block the
 * caller frees with free(*sets). SIM_OK, or SIM_EINPUT (FILE:LINE:COLUMN:
 * no `set` mapping, an empty one, a value that is not one scalar) or
 * SIM_EIO with err set and *sets NULL. */
int scn_overlay_read(const char *path, char ***sets, size_t *n,
                     sim_error *err);

/* The text of the scalar at key path (as scn_doc_set's) in the document,
 * or NULL if absent or not a scalar. Valid while doc lives. For values
 * needed before binding, such as the file a scenario draws a catalog from. */
const char *scn_doc_scalar(scn_doc *doc, const char *path);

/* Reports a problem at the node at key path in the document (before or
 * without binding). Always returns SIM_EINPUT. */
int scn_doc_fail(scn_doc *doc, const char *path, sim_error *err,
                 const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Fills obj (zeroed by the caller, schema->size bytes) from the document's
 * root mapping. On failure obj holds nothing to free and err says why, with
 * FILE:LINE:COLUMN. Free a filled obj with scn_release. */
int scn_bind(scn_doc *doc, const scn_schema *schema, void *obj, void *user,
             sim_error *err);

/* The same from a string, for catalogs and tests. */
int scn_bind_string(const char *name, const char *text,
                    const scn_schema *schema, void *obj, void *user,
                    sim_error *err);

/* Frees what scn_bind allocated inside obj (strings, lists) and zeroes it. */
void scn_release(const scn_schema *schema, void *obj);

/* Merges a bound list into another, for catalogs a user extends: each of
 * the nadd items of *add (item->size bytes each, bound with item) whose
 * name (the char * at name_offset) equals an item of *base replaces that
 * item whole, in place (the old one is released); the others are appended
 * in their order. *add's items then belong to *base: *add is freed and
 * set to NULL, *nadd to 0. SIM_OK, or SIM_ENOMEM with both lists as they
 * were. */
int scn_list_merge(const scn_schema *item, size_t name_offset, void **base,
                   size_t *nbase, void **add, size_t *nadd);

/* Writes obj as YAML, every field included, in units that read back to the
 * identical values. Returns a malloc'd string (caller frees) or NULL when
 * out of memory. */
char *scn_emit(const scn_schema *schema, const void *obj);

/* Writes text as a YAML double-quoted scalar into buf ("a\"b" for a"b;
 * backslashes and control characters escaped), as scn_emit writes
 * strings, for any YAML a model generates from a user's names. Returns
 * the length written, or -1 (buf holding "") when it does not fit. */
int scn_yaml_quote(const char *text, char *buf, size_t size);

/* For check hooks: reports a problem at the value of key in the struct loc
 * stands for; key may be a path into nested mappings and lists
 * ("power.cap", "racks.2.gpu").
 * When key is NULL or absent, at the deepest part of it that was written. hint
 * may be NULL. Always returns SIM_EINPUT. */
int scn_fail(const scn_loc *loc, const char *key, sim_error *err,
             const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* The name of the file the struct was read from (for relative paths). */
const char *scn_loc_file(const scn_loc *loc);

/* True if key was written in the struct loc stands for (not defaulted). */
bool scn_given(const scn_loc *loc, const char *key);

/* The name of a schema's enum value, for messages and output. */
const char *scn_enum_name(const scn_field *f, int value);

#endif
