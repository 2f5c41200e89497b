/* scenario_emit.c - the resolved-scenario writer: a bound struct written
 * back as YAML with every default filled in, which reads back to the same
 * struct. */
#include "scenario.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

/* ------------------------------------------------------------------ */
/* Emitting the resolved scenario                                      */
/* ------------------------------------------------------------------ */

static const void *cat(const void *obj, size_t off) {
  return (const char *)obj + off;
}

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
    if (n < 0 || sim_vec_reserve(NULL, &b->s, &b->cap, b->len + (size_t)n + 1,
                                 1) != SIM_OK) {
      b->failed = true;
      return;
    }
  }
}

static void emit_quoted(strbuf *b, const char *s) {
  sb_put(b, "\"");
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      sb_put(b, "\\%c", ch);
    else if (ch < 0x20 || ch == 0x7f)
      sb_put(b, "\\x%02x", ch);
    else
      sb_put(b, "%c", ch);
  }
  sb_put(b, "\"");
}

int scn_yaml_quote(const char *text, char *buf, size_t size) {
  strbuf b = {0};
  emit_quoted(&b, text);
  int n = !b.failed && b.len < size ? (int)b.len : -1;
  if (size > 0)
    snprintf(buf, size, "%s", n >= 0 ? b.s : "");
  sim_free(NULL, b.s);
  return n;
}

static void emit_struct(strbuf *b, const scn_schema *s, const void *obj,
                        int indent, bool first_inline);

static bool omitted(const scn_field *f, const void *obj) {
  if (f->type == SCN_QUANTITY)
    return isnan(*(const double *)cat(obj, f->offset));
  if (f->type == SCN_STRING)
    return *(char *const *)cat(obj, f->offset) == NULL;
  if ((f->flags & SCN_OMIT_EMPTY) &&
      (f->type == SCN_LIST || f->type == SCN_STRINGS))
    return *(const size_t *)cat(obj, f->count_offset) == 0;
  if ((f->flags & SCN_OMIT_EMPTY) && f->type == SCN_INT)
    return *(const int64_t *)cat(obj, f->offset) == 0;
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
    sim_free(NULL, b.s);
    return NULL;
  }
  if (b.s == NULL && (b.s = sim_alloc(NULL, sizeof "{}\n")) != NULL)
    memcpy(b.s, "{}\n", sizeof "{}\n");
  return b.s;
}
