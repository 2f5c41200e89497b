/* record_root.c - what the HDF5 writer puts beside the series: the
 * /summary attributes, the root's metadata, texts and tables. */
#include "record_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5_hl.h>

#include "alloc.h"

/* ---- Summary, metadata, texts ----------------------------------------- */

/* The /summary group, created on the first metric; SIM_OK or the error
 * of the sink's state or of HDF5. */
static int open_summary(h5w *w, const char *op) {
  int rc = h5w__ready(w, op);
  if (rc != SIM_OK)
    return rc;
  if (w->summary < 0)
    w->summary =
        H5Gcreate2(w->file, "summary", H5P_DEFAULT, w->gcpl, H5P_DEFAULT);
  return w->summary < 0 ? h5w__io_fail(w, "create group /summary") : SIM_OK;
}

int h5w__put_summary(tel_sink *s, const char *key, double value) {
  h5w *w = (h5w *)s;
  int rc = open_summary(w, "put_summary");
  return rc != SIM_OK
             ? rc
             : h5w__put_attr(w, w->summary, "/summary", key, H5T_IEEE_F64LE,
                             H5T_NATIVE_DOUBLE, &value);
}

int h5w__put_summary_str(tel_sink *s, const char *key, const char *value) {
  h5w *w = (h5w *)s;
  int rc = open_summary(w, "put_summary_str");
  return rc != SIM_OK
             ? rc
             : h5w__put_str_attr(w, w->summary, "/summary", key, value);
}

int h5w__put_meta_str(tel_sink *s, const char *key, const char *value) {
  h5w *w = (h5w *)s;
  int rc = h5w__ready(w, "put_meta_str");
  return rc != SIM_OK ? rc : h5w__put_str_attr(w, w->file, "/", key, value);
}

/* Integers are stored as 64-bit, whatever their size. */
int h5w__put_int_attr(h5w *w, const char *key, int64_t value) {
  return h5w__put_attr(w, w->file, "/", key, H5T_STD_I64LE, H5T_NATIVE_INT64,
                       &value);
}

int h5w__put_meta_int(tel_sink *s, const char *key, int64_t value) {
  h5w *w = (h5w *)s;
  int rc = h5w__ready(w, "put_meta_int");
  return rc != SIM_OK ? rc : h5w__put_int_attr(w, key, value);
}

/* Writes text as the scalar UTF-8 string dataset /name. */
static int write_text(h5w *w, const char *name, const char *text) {
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  hid_t dset = H5I_INVALID_HID;
  herr_t r = space < 0 || dcpl < 0 ? -1 : H5Pset_obj_track_times(dcpl, 0);
  if (r >= 0 && (dset = H5Dcreate2(w->file, name, w->str_type, space,
                                   H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
    r = -1;
  if (r >= 0)
    r = H5Dwrite(dset, w->str_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text);
  int rc = r < 0 ? h5w__io_fail(w, "write text /%s", name) : SIM_OK;
  return h5w__closed(w, rc,
                     h5w__close_id(&dset, H5Dclose) |
                         h5w__close_id(&dcpl, H5Pclose) |
                         h5w__close_id(&space, H5Sclose));
}

/* A name already in the file (a text put before, or a group) is
 * SIM_EINVAL: HDF5 cannot reclaim the space of a replaced dataset, and a
 * group must not be shadowed. */
int h5w__put_text(tel_sink *s, const char *name, const char *text) {
  h5w *w = (h5w *)s;
  int rc = h5w__ready(w, "put_text");
  if (rc != SIM_OK)
    return rc;
  htri_t e = H5Lexists(w->file, name, H5P_DEFAULT);
  if (e < 0)
    return h5w__io_fail(w, "look up /%s", name);
  if (e > 0)
    return sim_error_set(&s->err, SIM_EINVAL, "h5w: %s: /%s already exists",
                         w->partial, name);
  return write_text(w, name, text);
}

/* A group attribute goes on a group this sink declared. */
int h5w__put_group_attr(tel_sink *s, const char *group, const char *key,
                        double value) {
  h5w *w = (h5w *)s;
  int rc = h5w__ready(w, "put_group_attr");
  if (rc != SIM_OK)
    return rc;
  const h5w_group *hg = h5w__find_group(w, group);
  if (hg == NULL)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "h5w: attribute %s on undeclared group %s", key,
                         group);
  char obj[1024];
  snprintf(obj, sizeof obj, "/%s", group);
  return h5w__put_attr(w, hg->gid, obj, key, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                       &value);
}

/* ---- Tables -------------------------------------------------------------- */

/* The row axis of table t: int64 row numbers 0..nrows-1 in the dataset
 * t->axis_name, made a dimension scale, in *out; H5I_INVALID_HID when t
 * has no axis. Why numbers and not a column such as the names: a netCDF
 * dimension needs unique coordinates, and names need not be unique. */
static int make_row_axis(h5w *w, hid_t gid, const tel_table *t, hid_t *out) {
  *out = H5I_INVALID_HID;
  if (t->axis_name == NULL)
    return SIM_OK;
  int64_t *rows = sim_calloc(NULL, t->nrows > 0 ? t->nrows : 1, sizeof *rows);
  if (rows == NULL)
    return h5w__no_memory(w, t->name);
  for (size_t i = 0; i < t->nrows; i++)
    rows[i] = (int64_t)i;
  hsize_t dims[1] = {t->nrows};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  herr_t r = space < 0 || dcpl < 0 ? -1 : H5Pset_obj_track_times(dcpl, 0);
  if (r >= 0 && (*out = H5Dcreate2(gid, t->axis_name, H5T_STD_I64LE, space,
                                   H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0)
    r = -1;
  if (r >= 0 && t->nrows > 0)
    r = H5Dwrite(*out, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows);
  if (r >= 0)
    r = H5DSset_scale(*out, t->axis_name);
  sim_free(NULL, rows);
  char obj[1024];
  snprintf(obj, sizeof obj, "/%s/%s", t->name, t->axis_name);
  int rc = r < 0 ? h5w__io_fail(w, "write the row axis %s", obj) : SIM_OK;
  if (rc == SIM_OK)
    rc = h5w__put_series_attrs(w, *out, obj, "1", "row number");
  return h5w__closed(
      w, rc, h5w__close_id(&dcpl, H5Pclose) | h5w__close_id(&space, H5Sclose));
}

/* One column of a table: a 1-D dataset of float64 (with units) or of
 * UTF-8 strings, written whole, with the row axis (if any, else
 * H5I_INVALID_HID) attached as its scale; empty tables get empty
 * datasets. */
static int write_table_column(h5w *w, hid_t gid, const char *table,
                              const tel_table_column *c, size_t nrows,
                              hid_t axis) {
  hsize_t dims[1] = {nrows};
  hid_t dcpl = H5I_INVALID_HID;
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t type = c->values != NULL ? H5T_IEEE_F64LE : w->str_type;
  hid_t mem = c->values != NULL ? H5T_NATIVE_DOUBLE : w->str_type;
  const void *buf =
      c->values != NULL ? (const void *)c->values : (const void *)c->texts;
  hid_t dset = H5I_INVALID_HID;
  herr_t r = space < 0 ? -1 : h5w__whole_dcpl(nrows, c->values != NULL, &dcpl);
  if (r >= 0 && (dset = H5Dcreate2(gid, c->name, type, space, H5P_DEFAULT, dcpl,
                                   H5P_DEFAULT)) < 0)
    r = -1;
  if (r >= 0 && nrows > 0)
    r = H5Dwrite(dset, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  char obj[1024];
  snprintf(obj, sizeof obj, "/%s/%s", table, c->name);
  int rc = r < 0 ? h5w__io_fail(w, "write %s", obj) : SIM_OK;
  if (rc == SIM_OK)
    rc = h5w__put_series_attrs(w, dset, obj, c->values != NULL ? c->units : "",
                               c->long_name);
  if (rc == SIM_OK && axis >= 0 && H5DSattach_scale(dset, axis, 0) < 0)
    rc = h5w__io_fail(w, "attach the row axis to %s", obj);
  return h5w__closed(w, rc,
                     h5w__close_id(&dset, H5Dclose) |
                         h5w__close_id(&dcpl, H5Pclose) |
                         h5w__close_id(&space, H5Sclose));
}

int h5w__put_table(tel_sink *s, const tel_table *t) {
  h5w *w = (h5w *)s;
  int rc = h5w__ready(w, "put_table");
  if (rc != SIM_OK)
    return rc;
  htri_t e = H5Lexists(w->file, t->name, H5P_DEFAULT);
  if (e < 0)
    return h5w__io_fail(w, "look up /%s", t->name);
  if (e > 0)
    return sim_error_set(&s->err, SIM_EINVAL, "h5w: %s: /%s already exists",
                         w->partial, t->name);
  rc = h5w__make_parents(w, t->name);
  if (rc != SIM_OK)
    return rc;
  hid_t gid = H5Gcreate2(w->file, t->name, w->lcpl, w->gcpl, H5P_DEFAULT);
  if (gid < 0)
    return h5w__io_fail(w, "create group /%s", t->name);
  hid_t axis = H5I_INVALID_HID;
  rc = make_row_axis(w, gid, t, &axis);
  for (size_t c = 0; c < t->ncolumns && rc == SIM_OK; c++)
    rc = write_table_column(w, gid, t->name, &t->columns[c], t->nrows, axis);
  return h5w__closed(
      w, rc, h5w__close_id(&axis, H5Dclose) | h5w__close_id(&gid, H5Gclose));
}
