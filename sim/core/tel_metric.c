/* tel_metric.c - the /summary metrics a sink was told of (tel.h), kept in
 * the order they came and written at commit as JSON string attributes of
 * /summary (units, long_names, groups), so that a reader learns each
 * metric's unit and name from the file rather than from a list of its
 * own. Every sink gets them through the wrappers; no sink implements them. */
#include "tel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tel_internal.h"

struct tel_metric_list {
  tel_metric *rows;
  size_t n, cap;
};

static const char *const reserved[] = {"units", "long_names", "groups"};

int tel__metric_reserved(const char *key) {
  for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
    if (strcmp(key, reserved[i]) == 0)
      return 1;
  return 0;
}

static int grow(tel_sink *s) {
  struct tel_metric_list *l = s->metrics;
  if (l == NULL && (l = s->metrics = calloc(1, sizeof *l)) == NULL)
    return SIM_ENOMEM;
  if (l->n < l->cap)
    return SIM_OK;
  size_t cap = l->cap > 0 ? 2 * l->cap : 64;
  tel_metric *rows = realloc(l->rows, cap * sizeof *rows);
  if (rows == NULL)
    return SIM_ENOMEM;
  l->rows = rows;
  l->cap = cap;
  return SIM_OK;
}

int tel__metric_note(tel_sink *s, const tel_metric *m) {
  for (size_t i = 0; s->metrics != NULL && i < s->metrics->n; i++)
    if (strcmp(s->metrics->rows[i].key, m->key) == 0) {
      s->metrics->rows[i] = *m;
      return SIM_OK;
    }
  if (grow(s) != SIM_OK)
    return sim_error_set(&s->err, SIM_ENOMEM, "telemetry: out of memory");
  s->metrics->rows[s->metrics->n++] = *m;
  return SIM_OK;
}

const tel_metric *tel_metrics(const tel_sink *s, size_t *n) {
  *n = s != NULL && s->metrics != NULL ? s->metrics->n : 0;
  return *n > 0 ? s->metrics->rows : NULL;
}

/* Writes text as a JSON string (quoted, escaped) at out, or only counts
 * when out is NULL; returns the bytes. UTF-8 passes as it is. */
static size_t json_string(char *out, const char *text) {
  size_t n = 0;
  char buf[8];
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    const char *esc = buf;
    if (*p == '"' || *p == '\\')
      snprintf(buf, sizeof buf, "\\%c", *p);
    else if (*p < 0x20)
      snprintf(buf, sizeof buf, "\\u%04x", *p);
    else
      snprintf(buf, sizeof buf, "%c", *p);
    size_t len = strlen(esc);
    if (out != NULL)
      memcpy(out + n + 1, esc, len);
    n += len;
  }
  if (out != NULL) {
    out[0] = out[n + 1] = '"';
  }
  return n + 2;
}

/* The field of a row a JSON object maps each key to. */
static const char *field(const tel_metric *m, int which) {
  return which == 0 ? m->units : which == 1 ? m->long_name : m->group;
}

/* {"key": "field", ...} over the rows that have the field, at out (or
 * only counted when out is NULL); returns the bytes without the NUL. */
static size_t json_object(char *out, const struct tel_metric_list *l,
                          int which) {
  size_t n = 1;
  if (out != NULL)
    out[0] = '{';
  for (size_t i = 0; i < l->n; i++) {
    const char *v = field(&l->rows[i], which);
    if (v == NULL)
      continue;
    if (n > 1 && out != NULL)
      memcpy(out + n, ", ", 2);
    n += n > 1 ? 2 : 0;
    n += json_string(out != NULL ? out + n : NULL, l->rows[i].key);
    if (out != NULL)
      memcpy(out + n, ": ", 2);
    n += 2;
    n += json_string(out != NULL ? out + n : NULL, v);
  }
  if (out != NULL)
    out[n] = '}';
  return n + 1;
}

int tel__metric_commit(tel_sink *s) {
  const struct tel_metric_list *l = s->metrics;
  if (l == NULL || l->n == 0 || s->ops->put_summary_str == NULL)
    return SIM_OK;
  int rc = SIM_OK;
  for (int which = 0; which < 3 && rc == SIM_OK; which++) {
    size_t size = json_object(NULL, l, which) + 1;
    char *text = malloc(size);
    if (text == NULL)
      return sim_error_set(&s->err, SIM_ENOMEM, "telemetry: out of memory");
    text[json_object(text, l, which)] = '\0';
    rc = s->ops->put_summary_str(s, reserved[which], text);
    free(text);
  }
  return rc;
}

void tel__metric_free(tel_sink *s) {
  if (s->metrics != NULL)
    free(s->metrics->rows);
  free(s->metrics);
  s->metrics = NULL;
}
