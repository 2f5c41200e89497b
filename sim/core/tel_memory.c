/* tel_memory.c - the memory sink: a telemetry sink (tel.h) that keeps every
 * row, for tests and for runs that need no file.
 *
 * Design: a group keeps the caller's declaration (borrowed: tel.h says it
 * stays valid until destroy), its rows' times in one array and each column
 * in its own [rows][width] array, so tel_memory_column hands out a column
 * without copying. The arrays double when full, so an append is amortised
 * O(ncolumns * width). Summary metrics, metadata and texts are small lists
 * searched linearly; their keys and strings are copied, since callers pass
 * temporaries. Invariants: rows <= cap for every group; every column array
 * holds cap * width doubles; after commit only destroy is accepted. */
#include "tel.h"
#include "tel_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "vec.h"

typedef struct mem_group {
  tel_group *decl; /* our own copy (tel_internal.h) */
  size_t rows, cap;
  double last_time; /* of the last row; -inf before the first */
  double *times;    /* [cap] */
  double **cols;    /* ncolumns arrays of [cap][width] */
} mem_group;

/* One entry of the summary, metadata and text lists. */
typedef struct mem_entry {
  char *key;
  char *str; /* metadata string or text; NULL for numbers */
  double num;
  int64_t inum;
} mem_entry;

typedef struct mem_list {
  mem_entry *items;
  size_t n, cap;
} mem_list;

/* A table column: its name and a copy of its cells (values or texts). */
typedef struct mem_tcol {
  char *name;
  double *values;
  char **texts;
} mem_tcol;

typedef struct mem_table {
  char *name;
  mem_tcol *cols;
  size_t ncols, nrows;
} mem_table;

typedef struct mem_sink {
  tel_sink base; /* first, so a tel_sink * is a mem_sink * */
  mem_group *groups;
  size_t ngroups, gcap;
  mem_table *tables;
  size_t ntables, tcap;
  mem_list summary, meta, texts;
  mem_list attrs; /* "GROUP:KEY" */
  int committed;
} mem_sink;

static const tel_sink_ops mem_ops;

/* A copy of s from the default allocator, or NULL. */
static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = sim_alloc(NULL, n);
  if (p != NULL)
    memcpy(p, s, n);
  return p;
}

static const mem_sink *as_mem(const tel_sink *s) {
  return s != NULL && s->ops == &mem_ops ? (const mem_sink *)s : NULL;
}

static int check_open(mem_sink *m, const char *what) {
  if (!m->committed)
    return SIM_OK;
  return sim_error_set(&m->base.err, SIM_ESTATE, "memory sink: %s after commit",
                       what);
}

/* ---- Lists of entries ------------------------------------------------ */

static mem_entry *list_find(const mem_list *l, const char *key) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->items[i].key, key) == 0)
      return &l->items[i];
  return NULL;
}

/* The entry for key, added (zeroed, with a copied key) if new; NULL when
 * out of memory. */
static mem_entry *list_get(mem_list *l, const char *key) {
  mem_entry *e = list_find(l, key);
  if (e != NULL)
    return e;
  if (sim_vec_reserve(NULL, &l->items, &l->cap, l->n + 1, sizeof *l->items) !=
      SIM_OK)
    return NULL;
  char *k = dup_str(key);
  if (k == NULL)
    return NULL;
  e = &l->items[l->n++];
  memset(e, 0, sizeof *e);
  e->key = k;
  return e;
}

/* Sets e's string to a copy of str, replacing the old one. */
static int entry_set_str(mem_entry *e, const char *str) {
  char *p = dup_str(str);
  if (p == NULL)
    return SIM_ENOMEM;
  sim_free(NULL, e->str);
  e->str = p;
  return SIM_OK;
}

static void list_free(mem_list *l) {
  for (size_t i = 0; i < l->n; i++) {
    sim_free(NULL, l->items[i].key);
    sim_free(NULL, l->items[i].str);
  }
  sim_free(NULL, l->items);
}

static int no_memory(mem_sink *m, const char *what) {
  return sim_error_set(&m->base.err, SIM_ENOMEM, "memory sink: %s: %s", what,
                       sim_strerror(SIM_ENOMEM));
}

/* ---- Groups ----------------------------------------------------------- */

static void group_free(mem_group *g) {
  if (g->cols != NULL && g->decl != NULL)
    for (size_t c = 0; c < g->decl->ncolumns; c++)
      sim_free(NULL, g->cols[c]);
  sim_free(NULL, g->cols);
  sim_free(NULL, g->times);
  tel__group_destroy(g->decl);
  g->decl = NULL;
}

/* Resizes g's arrays to cap rows; on failure the arrays that were resized
 * keep their rows, so the group stays usable at its old capacity. */
static int group_reserve(mem_group *g, size_t cap) {
  size_t width = g->decl->width;
  if (cap == 0 || cap > SIZE_MAX / sizeof(double) / width)
    return SIM_ENOMEM;
  double *t = sim_resize(NULL, g->times, cap * sizeof *t);
  if (t == NULL)
    return SIM_ENOMEM;
  g->times = t;
  for (size_t c = 0; c < g->decl->ncolumns; c++) {
    double *p = sim_resize(NULL, g->cols[c], cap * width * sizeof *p);
    if (p == NULL)
      return SIM_ENOMEM;
    g->cols[c] = p;
  }
  g->cap = cap;
  return SIM_OK;
}

/* Starts with room for one row, so a declared column with no rows still
 * has storage and tel_memory_column can tell it from an unknown one. */
static int group_init(mem_group *g, const tel_group *decl) {
  memset(g, 0, sizeof *g);
  if ((g->decl = tel__group_dup(decl)) == NULL)
    return SIM_ENOMEM;
  g->last_time = -INFINITY;
  g->cols = sim_calloc(NULL, decl->ncolumns, sizeof *g->cols);
  if (g->cols == NULL || group_reserve(g, 1) != SIM_OK) {
    group_free(g);
    return SIM_ENOMEM;
  }
  return SIM_OK;
}

static const mem_group *find_group(const mem_sink *m, const char *name) {
  for (size_t i = 0; i < m->ngroups; i++)
    if (strcmp(m->groups[i].decl->name, name) == 0)
      return &m->groups[i];
  return NULL;
}

/* ---- Ops ------------------------------------------------------------- */

static int mem_open_group(tel_sink *s, const tel_group *g, size_t *id) {
  mem_sink *m = (mem_sink *)s;
  int rc = check_open(m, "open_group");
  if (rc != SIM_OK)
    return rc;
  if (find_group(m, g->name) != NULL)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "memory sink: group %s declared twice", g->name);
  if (sim_vec_reserve(NULL, &m->groups, &m->gcap, m->ngroups + 1,
                      sizeof *m->groups) != SIM_OK)
    return no_memory(m, g->name);
  if (group_init(&m->groups[m->ngroups], g) != SIM_OK)
    return no_memory(m, g->name);
  *id = m->ngroups++;
  return SIM_OK;
}

/* Times must not run backwards within a group: a row out of order is a
 * caller's bug, and the time axis of a file must stay sorted. */
static int check_time(mem_sink *m, const mem_group *g, double time_s) {
  if (time_s >= g->last_time && isfinite(time_s))
    return SIM_OK;
  return sim_error_set(&m->base.err, SIM_EINVAL,
                       "memory sink: group %s: time %.17g s is not finite "
                       "or before the last row's %.17g s",
                       g->decl->name, time_s, g->last_time);
}

static int mem_append(tel_sink *s, size_t id, double time_s,
                      const double *values) {
  mem_sink *m = (mem_sink *)s;
  int rc = check_open(m, "append");
  if (rc != SIM_OK)
    return rc;
  if (id >= m->ngroups)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "memory sink: append to unknown group id %zu", id);
  mem_group *g = &m->groups[id];
  if ((rc = check_time(m, g, time_s)) != SIM_OK)
    return rc;
  if (g->rows == g->cap &&
      group_reserve(g, sim_vec_grown_cap(g->cap, g->rows + 1,
                                         g->decl->width * sizeof(double))) !=
          SIM_OK)
    return no_memory(m, g->decl->name);
  size_t w = g->decl->width;
  g->times[g->rows] = time_s;
  for (size_t c = 0; c < g->decl->ncolumns; c++)
    memcpy(g->cols[c] + g->rows * w, values + c * w, w * sizeof *values);
  g->rows++;
  g->last_time = time_s;
  return SIM_OK;
}

static int mem_put_summary(tel_sink *s, const char *key, double value) {
  mem_sink *m = (mem_sink *)s;
  int rc = check_open(m, "put_summary");
  if (rc != SIM_OK)
    return rc;
  mem_entry *e = list_get(&m->summary, key);
  if (e == NULL)
    return no_memory(m, key);
  e->num = value;
  return SIM_OK;
}

static int mem_put_summary_str(tel_sink *s, const char *key,
                               const char *value) {
  mem_sink *m = (mem_sink *)s;
  int rc = check_open(m, "put_summary_str");
  if (rc != SIM_OK)
    return rc;
  mem_entry *e = list_get(&m->summary, key);
  if (e == NULL || entry_set_str(e, value) != SIM_OK)
    return no_memory(m, key);
  e->num = NAN;
  return SIM_OK;
}

/* Metadata: a key holds a string or a number; the last put wins. */
static int mem_put_meta_str(tel_sink *s, const char *key, const char *value) {
  mem_sink *m = (mem_sink *)s;
  int rc = check_open(m, "put_meta_str");
  if (rc != SIM_OK)
    return rc;
  mem_entry *e = list_get(&m->meta, key);
  if (e == NULL || entry_set_str(e, value) != SIM_OK)
    return no_memory(m, key);
  return SIM_OK;
}

static int mem_put_meta_int(tel_sink *s, const char *key, int64_t value) {
  mem_sink *m = (mem_sink *)s;
  int rc = check_open(m, "put_meta_int");
  if (rc != SIM_OK)
    return rc;
  mem_entry *e = list_get(&m->meta, key);
  if (e == NULL)
    return no_memory(m, key);
  sim_free(NULL, e->str);
  e->str = NULL;
  e->inum = value;
  return SIM_OK;
}

/* A text is put once, as the HDF5 writer can write a dataset only once. */
static int mem_put_text(tel_sink *s, const char *name, const char *text) {
  mem_sink *m = (mem_sink *)s;
  int rc = check_open(m, "put_text");
  if (rc != SIM_OK)
    return rc;
  if (list_find(&m->texts, name) != NULL)
    return sim_error_set(&s->err, SIM_EINVAL, "memory sink: text %s put twice",
                         name);
  mem_entry *e = list_get(&m->texts, name);
  if (e == NULL || entry_set_str(e, text) != SIM_OK)
    return no_memory(m, name);
  return SIM_OK;
}

/* A group attribute's key in the attrs list. */
static void attr_key(const char *group, const char *key, char *buf,
                     size_t size) {
  snprintf(buf, size, "%s:%s", group, key);
}

static int mem_put_group_attr(tel_sink *s, const char *group, const char *key,
                              double value) {
  mem_sink *m = (mem_sink *)s;
  int rc = check_open(m, "put_group_attr");
  if (rc != SIM_OK)
    return rc;
  if (find_group(m, group) == NULL)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "memory sink: attribute on unknown group %s", group);
  char k[512];
  attr_key(group, key, k, sizeof k);
  mem_entry *e = list_get(&m->attrs, k);
  if (e == NULL)
    return no_memory(m, key);
  e->num = value;
  return SIM_OK;
}

static void table_free(mem_table *t) {
  for (size_t c = 0; c < t->ncols; c++) {
    for (size_t r = 0; t->cols[c].texts != NULL && r < t->nrows; r++)
      sim_free(NULL, t->cols[c].texts[r]);
    sim_free(NULL, t->cols[c].texts);
    sim_free(NULL, t->cols[c].values);
    sim_free(NULL, t->cols[c].name);
  }
  sim_free(NULL, t->cols);
  sim_free(NULL, t->name);
}

static int tcol_copy(mem_tcol *d, const tel_table_column *c, size_t nrows) {
  size_t n = nrows != 0 ? nrows : 1;
  if ((d->name = dup_str(c->name)) == NULL)
    return SIM_ENOMEM;
  if (c->values != NULL) {
    if ((d->values = sim_calloc(NULL, n, sizeof *d->values)) == NULL)
      return SIM_ENOMEM;
    memcpy(d->values, c->values, nrows * sizeof *d->values);
    return SIM_OK;
  }
  if ((d->texts = sim_calloc(NULL, n, sizeof *d->texts)) == NULL)
    return SIM_ENOMEM;
  for (size_t r = 0; r < nrows; r++)
    if ((d->texts[r] = dup_str(c->texts[r])) == NULL)
      return SIM_ENOMEM;
  return SIM_OK;
}

static const mem_table *find_table(const mem_sink *m, const char *name) {
  for (size_t i = 0; i < m->ntables; i++)
    if (strcmp(m->tables[i].name, name) == 0)
      return &m->tables[i];
  return NULL;
}

static int mem_put_table(tel_sink *s, const tel_table *t) {
  mem_sink *m = (mem_sink *)s;
  int rc = check_open(m, "put_table");
  if (rc != SIM_OK)
    return rc;
  if (find_table(m, t->name) != NULL)
    return sim_error_set(&s->err, SIM_EINVAL, "memory sink: table %s put twice",
                         t->name);
  if (sim_vec_reserve(NULL, &m->tables, &m->tcap, m->ntables + 1,
                      sizeof *m->tables) != SIM_OK)
    return no_memory(m, t->name);
  mem_table *d = &m->tables[m->ntables];
  *d = (mem_table){.nrows = t->nrows};
  d->name = dup_str(t->name);
  d->cols = sim_calloc(NULL, t->ncolumns, sizeof *d->cols);
  rc = d->name != NULL && d->cols != NULL ? SIM_OK : SIM_ENOMEM;
  if (rc == SIM_OK)
    d->ncols = t->ncolumns; /* zeroed: table_free copes with a partial copy */
  for (size_t c = 0; c < d->ncols && rc == SIM_OK; c++)
    rc = tcol_copy(&d->cols[c], &t->columns[c], t->nrows);
  if (rc != SIM_OK) {
    table_free(d);
    return no_memory(m, t->name);
  }
  m->ntables++;
  return SIM_OK;
}

static int mem_commit(tel_sink *s) {
  mem_sink *m = (mem_sink *)s;
  int rc = check_open(m, "commit");
  if (rc == SIM_OK)
    m->committed = 1;
  return rc;
}

static void mem_destroy(tel_sink *s) {
  mem_sink *m = (mem_sink *)s;
  for (size_t i = 0; i < m->ngroups; i++)
    group_free(&m->groups[i]);
  sim_free(NULL, m->groups);
  list_free(&m->summary);
  list_free(&m->meta);
  list_free(&m->texts);
  list_free(&m->attrs);
  for (size_t i = 0; i < m->ntables; i++)
    table_free(&m->tables[i]);
  sim_free(NULL, m->tables);
  sim_free(NULL, m);
}

static const tel_sink_ops mem_ops = {
    .open_group = mem_open_group,
    .append = mem_append,
    .put_summary = mem_put_summary,
    .put_summary_str = mem_put_summary_str,
    .put_meta_str = mem_put_meta_str,
    .put_meta_int = mem_put_meta_int,
    .put_text = mem_put_text,
    .put_group_attr = mem_put_group_attr,
    .put_table = mem_put_table,
    .commit = mem_commit,
    .destroy = mem_destroy,
};

tel_sink *tel_memory_create(void) {
  mem_sink *m = sim_calloc(NULL, 1, sizeof *m);
  if (m == NULL)
    return NULL;
  m->base.ops = &mem_ops;
  sim_error_clear(&m->base.err);
  return &m->base;
}

/* ---- Read-back --------------------------------------------------------- */

const double *tel_memory_column(const tel_sink *s, const char *group,
                                const char *column, size_t *rows,
                                size_t *width) {
  const mem_sink *m = as_mem(s);
  const mem_group *g = m != NULL && group != NULL ? find_group(m, group) : NULL;
  for (size_t c = 0; g != NULL && column != NULL && c < g->decl->ncolumns;
       c++) {
    if (strcmp(g->decl->columns[c].name, column) != 0)
      continue;
    if (rows != NULL)
      *rows = g->rows;
    if (width != NULL)
      *width = g->decl->width;
    return g->cols[c];
  }
  if (rows != NULL)
    *rows = 0;
  if (width != NULL)
    *width = 0;
  return NULL;
}

const double *tel_memory_times(const tel_sink *s, const char *group,
                               size_t *rows) {
  const mem_sink *m = as_mem(s);
  const mem_group *g = m != NULL && group != NULL ? find_group(m, group) : NULL;
  if (rows != NULL)
    *rows = g != NULL ? g->rows : 0;
  return g != NULL ? g->times : NULL;
}

int tel_memory_summary(const tel_sink *s, const char *key, double *value) {
  const mem_sink *m = as_mem(s);
  if (m == NULL || key == NULL || value == NULL)
    return SIM_EINVAL;
  const mem_entry *e = list_find(&m->summary, key);
  if (e == NULL)
    return SIM_ENOTFOUND;
  *value = e->num;
  return SIM_OK;
}

const char *tel_memory_summary_str(const tel_sink *s, const char *key) {
  const mem_sink *m = as_mem(s);
  const mem_entry *e =
      m != NULL && key != NULL ? list_find(&m->summary, key) : NULL;
  return e != NULL ? e->str : NULL;
}

const char *tel_memory_text(const tel_sink *s, const char *name) {
  const mem_sink *m = as_mem(s);
  const mem_entry *e =
      m != NULL && name != NULL ? list_find(&m->texts, name) : NULL;
  return e != NULL ? e->str : NULL;
}

int tel_memory_group_attr(const tel_sink *s, const char *group, const char *key,
                          double *value) {
  const mem_sink *m = as_mem(s);
  if (m == NULL || group == NULL || key == NULL || value == NULL)
    return SIM_EINVAL;
  char k[512];
  attr_key(group, key, k, sizeof k);
  const mem_entry *e = list_find(&m->attrs, k);
  if (e == NULL)
    return SIM_ENOTFOUND;
  *value = e->num;
  return SIM_OK;
}

static const mem_tcol *find_tcol(const tel_sink *s, const char *table,
                                 const char *column, size_t *rows) {
  const mem_sink *m = as_mem(s);
  const mem_table *t = m != NULL && table != NULL ? find_table(m, table) : NULL;
  for (size_t c = 0; t != NULL && column != NULL && c < t->ncols; c++)
    if (strcmp(t->cols[c].name, column) == 0) {
      *rows = t->nrows;
      return &t->cols[c];
    }
  *rows = 0;
  return NULL;
}

const double *tel_memory_table_column(const tel_sink *s, const char *table,
                                      const char *column, size_t *rows) {
  size_t n;
  const mem_tcol *c = find_tcol(s, table, column, &n);
  if (rows != NULL)
    *rows = c != NULL && c->values != NULL ? n : 0;
  return c != NULL ? c->values : NULL;
}

const char *tel_memory_table_text(const tel_sink *s, const char *table,
                                  const char *column, size_t row) {
  size_t n;
  const mem_tcol *c = find_tcol(s, table, column, &n);
  return c != NULL && c->texts != NULL && row < n ? c->texts[row] : NULL;
}

int tel_memory_committed(const tel_sink *s) {
  const mem_sink *m = as_mem(s);
  return m != NULL && m->committed;
}
