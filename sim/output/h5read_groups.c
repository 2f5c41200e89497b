/* h5read_groups.c - a run file's groups read back for export (h5read.h):
 * which groups hold series or a table, a group of series a block of rows
 * at a time, a table whole, an object's attributes. Part of sim_output.
 *
 * A group of series is one with a 1-D "time" dataset; its columns are the
 * other numeric datasets whose first dimension runs along time, all of one
 * width, and its axis is the string dataset that is a dimension scale (the
 * rack names). A table is a group of equal-length 1-D datasets and no
 * "time". Every hid_t is closed on every path. */
#include "h5read.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <hdf5_hl.h>

#include "h5read_internal.h"

herr_t h5r__innermost(unsigned n, const H5E_error2_t *e, void *data) {
  if (n == 0 && e->desc != NULL)
    snprintf(data, H5R_DETAIL, "%s", e->desc);
  return 0;
}

/* SIM_EIO with "h5r: PATH: cannot WHAT NAME: HDF5 detail". */
static int io_fail(sim_error *err, const char *path, const char *what,
                   const char *name) {
  char detail[H5R_DETAIL] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5r__innermost, detail);
  H5Eclear2(H5E_DEFAULT);
  return sim_error_set(err, SIM_EIO, "h5r: %s: cannot %s /%s%s%s", path, what,
                       name, detail[0] != '\0' ? ": " : "", detail);
}

static int no_memory(sim_error *err) {
  return sim_error_set(err, SIM_ENOMEM, "h5r: out of memory");
}

typedef herr_t (*close_fn)(hid_t);

static int close_id(hid_t *id, close_fn fn) {
  herr_t r = *id >= 0 ? fn(*id) : 0;
  *id = H5I_INVALID_HID;
  return r < 0 ? -1 : 0;
}

static hid_t open_file(const char *path) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
}

/* A growable array of strings. */
typedef struct strs {
  char **v;
  size_t n;
} strs;

static int strs_push(strs *s, const char *text) {
  char **grown = realloc(s->v, (s->n + 1) * sizeof *grown);
  if (grown == NULL)
    return SIM_ENOMEM;
  s->v = grown;
  if ((s->v[s->n] = strdup(text)) == NULL)
    return SIM_ENOMEM;
  s->n++;
  return SIM_OK;
}

static void strs_free(strs *s) {
  for (size_t i = 0; i < s->n; i++)
    free(s->v[i]);
  free(s->v);
  s->v = NULL;
  s->n = 0;
}

/* The names of loc's links, in name order. */
static herr_t link_cb(hid_t loc, const char *name, const H5L_info_t *info,
                      void *data) {
  (void)loc;
  (void)info;
  return strs_push(data, name) == SIM_OK ? 0 : -1;
}

static int link_names(hid_t loc, strs *out) {
  return H5Literate(loc, H5_INDEX_NAME, H5_ITER_INC, NULL, link_cb, out) < 0
             ? -1
             : 0;
}

char *h5r__str_attr(hid_t obj, const char *key) {
  char *v = NULL;
  hid_t a = H5Aexists(obj, key) > 0 ? H5Aopen(obj, key, H5P_DEFAULT)
                                    : H5I_INVALID_HID;
  hid_t ft = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
  hid_t mt = H5Tcopy(H5T_C_S1);
  /* In the file's character set: HDF5 does not convert between them. */
  if (ft >= 0 && mt >= 0 && H5Tis_variable_str(ft) > 0 &&
      H5Tset_size(mt, H5T_VARIABLE) >= 0 &&
      H5Tset_cset(mt, H5Tget_cset(ft)) >= 0 && H5Aread(a, mt, &v) < 0)
    v = NULL;
  char *copy = strdup(v != NULL ? v : "");
  H5free_memory(v);
  close_id(&mt, H5Tclose);
  close_id(&ft, H5Tclose);
  close_id(&a, H5Aclose);
  H5Eclear2(H5E_DEFAULT);
  return copy;
}

/* A dataset's rank, dims and type class; rank -1 on failure. */
static int shape(hid_t d, hsize_t dims[2], H5T_class_t *cls) {
  hid_t sp = H5Dget_space(d), t = H5Dget_type(d);
  int rank = sp < 0 ? -1 : H5Sget_simple_extent_ndims(sp);
  if (rank >= 0 && rank <= 2)
    H5Sget_simple_extent_dims(sp, dims, NULL);
  *cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
  close_id(&t, H5Tclose);
  close_id(&sp, H5Sclose);
  return rank;
}

/* Reads a 1-D string dataset of n strings into copies (NULL: failure). */
static char **read_strings(hid_t d, size_t n) {
  hid_t mt = H5Tcopy(H5T_C_S1);
  char **raw = calloc(n + 1, sizeof *raw), **out = calloc(n + 1, sizeof *out);
  herr_t r =
      mt < 0 || raw == NULL || out == NULL ? -1 : H5Tset_size(mt, H5T_VARIABLE);
  if (r >= 0 && n > 0)
    r = H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw);
  for (size_t i = 0; r >= 0 && i < n; i++)
    if ((out[i] = strdup(raw[i] != NULL ? raw[i] : "")) == NULL)
      r = -1;
  for (size_t i = 0; raw != NULL && i < n; i++)
    H5free_memory(raw[i]);
  free(raw);
  close_id(&mt, H5Tclose);
  if (r < 0 && out != NULL) {
    for (size_t i = 0; i < n; i++)
      free(out[i]);
    free(out);
    out = NULL;
  }
  return out;
}

/* ---- Listing ------------------------------------------------------------ */

typedef struct lister {
  h5r_entry *e;
  size_t n;
  int rc;
} lister;

/* What group g holds: 0 series, 1 a table, -1 neither. */
static int group_kind(hid_t g) {
  if (H5Lexists(g, "time", H5P_DEFAULT) > 0)
    return 0;
  strs names = {NULL, 0};
  int kind = link_names(g, &names) < 0 || names.n == 0 ? -1 : 1;
  hsize_t first = 0;
  for (size_t i = 0; kind == 1 && i < names.n; i++) {
    hid_t d = H5Dopen2(g, names.v[i], H5P_DEFAULT);
    hsize_t dims[2] = {0, 0};
    H5T_class_t cls;
    int rank = d >= 0 ? shape(d, dims, &cls) : -1;
    if (rank != 1 || (i > 0 && dims[0] != first))
      kind = -1;
    first = dims[0];
    close_id(&d, H5Dclose);
  }
  strs_free(&names);
  H5Eclear2(H5E_DEFAULT);
  return kind;
}

static herr_t list_cb(hid_t loc, const char *name, const H5O_info_t *info,
                      void *data) {
  lister *l = data;
  if (info->type != H5O_TYPE_GROUP || strcmp(name, ".") == 0)
    return 0;
  hid_t g = H5Gopen2(loc, name, H5P_DEFAULT);
  int kind = g >= 0 ? group_kind(g) : -1;
  close_id(&g, H5Gclose);
  if (kind < 0)
    return 0;
  h5r_entry *grown = realloc(l->e, (l->n + 1) * sizeof *grown);
  if (grown == NULL || (grown[l->n].name = strdup(name)) == NULL) {
    l->e = grown != NULL ? grown : l->e;
    l->rc = SIM_ENOMEM;
    return -1;
  }
  l->e = grown;
  l->e[l->n++].kind = kind == 0 ? H5R_SERIES : H5R_ROWS;
  return 0;
}

int h5r_groups_list(const char *path, h5r_entry **out, size_t *n,
                    sim_error *err) {
  *out = NULL;
  *n = 0;
  hid_t f = open_file(path);
  if (f < 0)
    return io_fail(err, path, "open", "");
  lister l = {NULL, 0, SIM_OK};
  herr_t r = H5Ovisit(f, H5_INDEX_NAME, H5_ITER_INC, list_cb, &l);
  *out = l.e;
  *n = l.n;
  int rc = l.rc != SIM_OK ? no_memory(err)
           : r < 0        ? io_fail(err, path, "list the groups of", "")
                          : SIM_OK;
  if (close_id(&f, H5Fclose) < 0 && rc == SIM_OK)
    rc = io_fail(err, path, "close", "");
  return rc;
}

void h5r_entries_free(h5r_entry *e, size_t n) {
  for (size_t i = 0; e != NULL && i < n; i++)
    free(e[i].name);
  free(e);
}

/* ---- A group of series ----------------------------------------------------
 */

struct h5r_series {
  h5r_series_info info;
  const char *path;
  char *name;
  hid_t file, time;
  hid_t *cols;
  strs names, units, labels;
  char *time_units, *axis;
};

const h5r_series_info *h5r_series_info_of(const h5r_series *s) {
  return &s->info;
}

void h5r_series_close(h5r_series *s) {
  if (s == NULL)
    return;
  for (size_t c = 0; c < s->names.n; c++)
    close_id(&s->cols[c], H5Dclose);
  close_id(&s->time, H5Dclose);
  close_id(&s->file, H5Fclose);
  free(s->cols);
  strs_free(&s->names);
  strs_free(&s->units);
  strs_free(&s->labels);
  free(s->time_units);
  free(s->axis);
  free(s->name);
  free(s);
  H5Eclear2(H5E_DEFAULT);
}

/* The axis: a string dimension scale other than time; its labels. */
static int take_axis(h5r_series *s, hid_t d, const char *name, size_t n) {
  char **labels = read_strings(d, n);
  if (labels == NULL || (s->axis = strdup(name)) == NULL) {
    for (size_t j = 0; labels != NULL && j < n; j++)
      free(labels[j]);
    free(labels);
    return SIM_ENOMEM;
  }
  s->labels = (strs){labels, n};
  return SIM_OK;
}

/* A column: numeric, along time, of the group's width (the first 2-D
 * column sets it). The dataset stays open in s; d is taken over. */
static int take_column(h5r_series *s, hid_t *d, const char *name,
                       const hsize_t dims[2], int rank) {
  size_t width = rank == 2 ? (size_t)dims[1] : 1;
  if (s->names.n == 0)
    s->info.width = width;
  if (width != s->info.width)
    return SIM_OK; /* not of this group's shape: left out */
  hid_t *grown = realloc(s->cols, (s->names.n + 1) * sizeof *grown);
  if (grown == NULL)
    return SIM_ENOMEM;
  s->cols = grown;
  char *u = h5r__str_attr(*d, "units");
  int rc = u == NULL ? SIM_ENOMEM : strs_push(&s->units, u);
  free(u);
  if (rc == SIM_OK && (rc = strs_push(&s->names, name)) == SIM_OK) {
    s->cols[s->names.n - 1] = *d;
    *d = H5I_INVALID_HID;
  }
  return rc;
}

/* Sorts one dataset of the group into axis, column or neither. */
static int take_dataset(h5r_series *s, hid_t g, const char *name) {
  hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
  if (d < 0)
    return SIM_EIO; /* the caller reads HDF5's reason */
  hsize_t dims[2] = {0, 0};
  H5T_class_t cls;
  int rank = shape(d, dims, &cls);
  int rc = SIM_OK;
  bool along = rank >= 1 && rank <= 2 && dims[0] == s->info.nrows;
  if (H5DSis_scale(d) > 0 && cls == H5T_STRING && rank == 1 && !s->axis)
    rc = take_axis(s, d, name, (size_t)dims[0]);
  else if (H5DSis_scale(d) <= 0 && along &&
           (cls == H5T_FLOAT || cls == H5T_INTEGER))
    rc = take_column(s, &d, name, dims, rank);
  close_id(&d, H5Dclose);
  H5Eclear2(H5E_DEFAULT);
  return rc;
}

/* The group's time: its length and units. */
static int open_time(h5r_series *s, hid_t g, sim_error *err) {
  s->time = H5Dopen2(g, "time", H5P_DEFAULT);
  hsize_t dims[2] = {0, 0};
  H5T_class_t cls;
  if (s->time < 0 || shape(s->time, dims, &cls) != 1 || cls != H5T_FLOAT)
    return io_fail(err, s->path, "read a time axis from", s->name);
  s->info.nrows = (size_t)dims[0];
  s->time_units = h5r__str_attr(s->time, "units");
  return s->time_units != NULL ? SIM_OK : no_memory(err);
}

/* The info's pointers into s, once s is complete. */
static void point_info(h5r_series *s) {
  h5r_series_info *i = &s->info;
  i->time_units = s->time_units;
  i->axis = s->axis;
  i->labels = (const char *const *)s->labels.v;
  i->ncols = s->names.n;
  i->names = (const char *const *)s->names.v;
  i->units = (const char *const *)s->units.v;
  if (s->axis == NULL || s->labels.n != i->width) {
    i->axis = NULL; /* a 1-D group, or labels that do not fit */
    i->labels = NULL;
  }
}

static int open_columns(h5r_series *s, hid_t g, sim_error *err) {
  strs links = {NULL, 0};
  int rc = link_names(g, &links) < 0 ? io_fail(err, s->path, "list", s->name)
                                     : SIM_OK;
  for (size_t i = 0; i < links.n && rc == SIM_OK; i++)
    if (strcmp(links.v[i], "time") != 0)
      rc = take_dataset(s, g, links.v[i]);
  strs_free(&links);
  if (rc == SIM_ENOMEM)
    return no_memory(err);
  return rc != SIM_OK ? io_fail(err, s->path, "read", s->name) : SIM_OK;
}

int h5r_series_open(const char *path, const char *name, h5r_series **out,
                    sim_error *err) {
  h5r_series *s = calloc(1, sizeof *s);
  *out = NULL;
  if (s == NULL || (s->name = strdup(name)) == NULL) {
    free(s);
    return no_memory(err);
  }
  s->path = path;
  s->time = H5I_INVALID_HID;
  s->info.width = 1;
  s->file = open_file(path);
  hid_t g =
      s->file >= 0 ? H5Gopen2(s->file, name, H5P_DEFAULT) : H5I_INVALID_HID;
  int rc = g < 0 ? io_fail(err, path, "open", name) : open_time(s, g, err);
  if (rc == SIM_OK)
    rc = open_columns(s, g, err);
  close_id(&g, H5Gclose);
  if (rc != SIM_OK) {
    h5r_series_close(s);
    return rc;
  }
  point_info(s);
  *out = s;
  return SIM_OK;
}

/* Rows [start, start + count) of dataset d ([n] or [n, width]) into buf. */
static herr_t read_rows(hid_t d, size_t start, size_t count, size_t width,
                        int rank, double *buf) {
  hsize_t off[2] = {start, 0}, cnt[2] = {count, width};
  hid_t fs = H5Dget_space(d);
  hid_t ms = H5Screate_simple(rank, cnt, NULL);
  herr_t r = fs < 0 || ms < 0 ? -1
                              : H5Sselect_hyperslab(fs, H5S_SELECT_SET, off,
                                                    NULL, cnt, NULL);
  if (r >= 0)
    r = H5Dread(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, buf);
  if (close_id(&ms, H5Sclose) | close_id(&fs, H5Sclose))
    r = -1;
  return r;
}

int h5r_series_rows(h5r_series *s, size_t start, size_t count, double *time,
                    double *values, sim_error *err) {
  const h5r_series_info *i = &s->info;
  if (start > i->nrows || count > i->nrows - start)
    return sim_error_set(err, SIM_EINVAL, "h5r: rows %zu..%zu past /%s's %zu",
                         start, start + count, s->name, i->nrows);
  if (count == 0)
    return SIM_OK;
  herr_t r = read_rows(s->time, start, count, 1, 1, time);
  for (size_t c = 0; r >= 0 && c < i->ncols; c++) {
    hsize_t dims[2];
    H5T_class_t cls;
    int rank = shape(s->cols[c], dims, &cls);
    r = read_rows(s->cols[c], start, count, i->width, rank,
                  values + c * count * i->width);
  }
  return r < 0 ? io_fail(err, s->path, "read rows of", s->name) : SIM_OK;
}

/* ---- A table ------------------------------------------------------------ */

void h5r_rows_release(h5r_rows *r) {
  for (size_t c = 0; c < r->ncols; c++) {
    for (size_t i = 0; r->texts != NULL && r->texts[c] != NULL && i < r->nrows;
         i++)
      free(r->texts[c][i]);
    if (r->texts != NULL)
      free(r->texts[c]);
    if (r->values != NULL)
      free(r->values[c]);
    free(r->names[c]);
    free(r->units[c]);
  }
  free(r->texts);
  free(r->values);
  free(r->names);
  free(r->units);
  memset(r, 0, sizeof *r);
}

/* Column c of the table from dataset d (numbers or strings). */
static int read_cell_column(h5r_rows *r, size_t c, hid_t d) {
  hsize_t dims[2] = {0, 0};
  H5T_class_t cls;
  shape(d, dims, &cls);
  r->units[c] = h5r__str_attr(d, "units");
  if (r->units[c] == NULL)
    return SIM_ENOMEM;
  if (cls == H5T_STRING) {
    r->texts[c] = read_strings(d, r->nrows);
    return r->texts[c] != NULL ? SIM_OK : SIM_EIO;
  }
  r->values[c] = calloc(r->nrows + 1, sizeof *r->values[c]);
  if (r->values[c] == NULL)
    return SIM_ENOMEM;
  return r->nrows == 0 || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL,
                                  H5P_DEFAULT, r->values[c]) >= 0
             ? SIM_OK
             : SIM_EIO;
}

/* The table's columns in g, named in links. */
static int read_cells(h5r_rows *r, hid_t g, const strs *links) {
  size_t n = links->n;
  r->names = calloc(n, sizeof *r->names);
  r->units = calloc(n, sizeof *r->units);
  r->values = calloc(n, sizeof *r->values);
  r->texts = calloc(n, sizeof *r->texts);
  if (r->names == NULL || r->units == NULL || r->values == NULL ||
      r->texts == NULL)
    return SIM_ENOMEM;
  int rc = SIM_OK;
  for (size_t c = 0; c < n && rc == SIM_OK; c++) {
    r->ncols = c + 1;
    if ((r->names[c] = strdup(links->v[c])) == NULL)
      return SIM_ENOMEM;
    hid_t d = H5Dopen2(g, links->v[c], H5P_DEFAULT);
    hsize_t dims[2] = {0, 0};
    H5T_class_t cls;
    if (d < 0 || shape(d, dims, &cls) != 1)
      rc = SIM_EIO;
    else if (c == 0)
      r->nrows = (size_t)dims[0];
    if (rc == SIM_OK)
      rc = dims[0] == r->nrows ? read_cell_column(r, c, d) : SIM_EIO;
    close_id(&d, H5Dclose);
  }
  return rc;
}

/* The row axis (a dimension scale, as /jobs/job) first: it names the
 * rows. */
static void axis_first(hid_t g, strs *links) {
  for (size_t i = 1; i < links->n; i++) {
    hid_t d = H5Dopen2(g, links->v[i], H5P_DEFAULT);
    bool scale = d >= 0 && H5DSis_scale(d) > 0;
    close_id(&d, H5Dclose);
    if (scale) {
      char *axis = links->v[i];
      memmove(links->v + 1, links->v, i * sizeof *links->v);
      links->v[0] = axis;
      break;
    }
  }
  H5Eclear2(H5E_DEFAULT);
}

int h5r_rows_read(const char *path, const char *name, h5r_rows *out,
                  sim_error *err) {
  memset(out, 0, sizeof *out);
  hid_t f = open_file(path);
  hid_t g = f >= 0 ? H5Gopen2(f, name, H5P_DEFAULT) : H5I_INVALID_HID;
  strs links = {NULL, 0};
  int rc = g < 0 || link_names(g, &links) < 0 ? SIM_EIO : SIM_OK;
  if (rc == SIM_OK)
    axis_first(g, &links);
  if (rc == SIM_OK)
    rc = read_cells(out, g, &links);
  strs_free(&links);
  if (rc == SIM_EIO)
    io_fail(err, path, "read the table", name);
  else if (rc == SIM_ENOMEM)
    no_memory(err);
  close_id(&g, H5Gclose);
  close_id(&f, H5Fclose);
  H5Eclear2(H5E_DEFAULT);
  return rc;
}

/* ---- Attributes ------------------------------------------------------- */

void h5r_attrs_release(h5r_attrs *a) {
  for (size_t i = 0; i < a->n; i++) {
    free(a->names[i]);
    free(a->texts[i]);
  }
  free(a->names);
  free(a->values);
  free(a->texts);
  memset(a, 0, sizeof *a);
}

/* Room for one more attribute in a. */
static int attrs_grow(h5r_attrs *a) {
  char **names = realloc(a->names, (a->n + 1) * sizeof *names);
  if (names != NULL)
    a->names = names;
  double *values = realloc(a->values, (a->n + 1) * sizeof *values);
  if (values != NULL)
    a->values = values;
  char **texts = realloc(a->texts, (a->n + 1) * sizeof *texts);
  if (texts != NULL)
    a->texts = texts;
  return names && values && texts ? SIM_OK : SIM_ENOMEM;
}

/* One scalar attribute, a number or a text; others are left out. */
static herr_t attr_cb(hid_t loc, const char *name, const H5A_info_t *info,
                      void *data) {
  (void)info;
  h5r_attrs *a = data;
  hid_t at = H5Aopen(loc, name, H5P_DEFAULT);
  hid_t t = at >= 0 ? H5Aget_type(at) : H5I_INVALID_HID;
  hid_t sp = at >= 0 ? H5Aget_space(at) : H5I_INVALID_HID;
  H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
  bool scalar = sp >= 0 && H5Sget_simple_extent_npoints(sp) == 1;
  double v = NAN;
  bool number = scalar && (cls == H5T_FLOAT || cls == H5T_INTEGER) &&
                H5Aread(at, H5T_NATIVE_DOUBLE, &v) >= 0;
  bool text = scalar && cls == H5T_STRING;
  close_id(&sp, H5Sclose);
  close_id(&t, H5Tclose);
  char *s = text ? h5r__str_attr(loc, name) : NULL;
  close_id(&at, H5Aclose);
  H5Eclear2(H5E_DEFAULT);
  if (!number && !text)
    return 0;
  if (attrs_grow(a) != SIM_OK || (text && s == NULL) ||
      (a->names[a->n] = strdup(name)) == NULL) {
    free(s);
    return -1;
  }
  a->values[a->n] = v;
  a->texts[a->n++] = s;
  return 0;
}

herr_t h5r__attrs_of(hid_t loc, const char *name, h5r_attrs *out) {
  hsize_t at = 0;
  return H5Aiterate_by_name(loc, name, H5_INDEX_NAME, H5_ITER_INC, &at, attr_cb,
                            out, H5P_DEFAULT);
}

int h5r_attrs_read(const char *path, const char *object, h5r_attrs *out,
                   sim_error *err) {
  memset(out, 0, sizeof *out);
  hid_t f = open_file(path);
  if (f < 0)
    return io_fail(err, path, "open", "");
  herr_t r = h5r__attrs_of(f, object, out);
  int rc = r < 0 ? io_fail(err, path, "read the attributes of",
                           object[0] == '/' ? object + 1 : object)
                 : SIM_OK;
  close_id(&f, H5Fclose);
  return rc;
}
