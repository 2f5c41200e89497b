/* h5read.c - reading run files back and writing the sweep's summary table
 * (h5read.h). Every hid_t is closed on every path; HDF5's own error
 * printing is off and its innermost message goes into ours instead. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE (h5room.h) */
#include "h5read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "h5read_internal.h"
#include "h5room.h"
#include "seal.h"
#include "writelock.h"

/* ---- Errors ------------------------------------------------------------ */

/* SIM_EIO with "h5r: PATH: cannot WHAT: HDF5 detail"; clears HDF5's stack. */
static int io_fail(sim_error *err, const char *path, const char *what) {
  char detail[H5R_DETAIL] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, h5r__innermost, detail);
  H5Eclear2(H5E_DEFAULT);
  return sim_error_set(err, SIM_EIO, "h5r: %s: cannot %s%s%s", path, what,
                       detail[0] != '\0' ? ": " : "", detail);
}

typedef herr_t (*close_fn)(hid_t);

/* Closes id if open; -1 if the close failed. */
static int close_id(hid_t id, close_fn fn) {
  return id >= 0 && fn(id) < 0 ? -1 : 0;
}

/* ---- Reading a run file ------------------------------------------------ */

typedef struct reader {
  const char *path;
  h5r_run *run;
  sim_error *err;
} reader;

static int read_complete(reader *r, hid_t file) {
  htri_t e = H5Aexists(file, "complete");
  if (e <= 0)
    return e < 0 ? io_fail(r->err, r->path, "look up 'complete'") : SIM_OK;
  hid_t a = H5Aopen(file, "complete", H5P_DEFAULT);
  herr_t s = a < 0 ? -1 : H5Aread(a, H5T_NATIVE_INT64, &r->run->complete);
  if (close_id(a, H5Aclose) < 0 || s < 0)
    return io_fail(r->err, r->path, "read 'complete'");
  return SIM_OK;
}

/* The root attribute format (a string), as a malloc'd copy; absent: NULL. */
static int read_format(reader *r, hid_t file) {
  htri_t e = H5Aexists(file, "format");
  if (e <= 0)
    return e < 0 ? io_fail(r->err, r->path, "look up 'format'") : SIM_OK;
  r->run->format = h5r__str_attr(file, "format");
  return r->run->format != NULL
             ? SIM_OK
             : sim_error_set(r->err, SIM_ENOMEM, "out of memory");
}

/* The scalar variable-length string dataset /scenario, as a malloc'd copy. */
static int read_scenario(reader *r, hid_t file) {
  htri_t e = H5Lexists(file, "scenario", H5P_DEFAULT);
  if (e <= 0)
    return e < 0 ? io_fail(r->err, r->path, "look up /scenario") : SIM_OK;
  hid_t d = H5Dopen2(file, "scenario", H5P_DEFAULT);
  hid_t t = H5Tcopy(H5T_C_S1);
  char *text = NULL;
  herr_t s = d < 0 || t < 0 ? -1 : H5Tset_size(t, H5T_VARIABLE);
  if (s >= 0)
    s = H5Tset_cset(t, H5T_CSET_UTF8);
  if (s >= 0)
    s = H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &text);
  int closes = close_id(t, H5Tclose) | close_id(d, H5Dclose);
  if (s < 0 || closes < 0) {
    H5free_memory(text);
    return io_fail(r->err, r->path, "read /scenario");
  }
  r->run->scenario = strdup(text != NULL ? text : "");
  H5free_memory(text);
  return r->run->scenario != NULL
             ? SIM_OK
             : sim_error_set(r->err, SIM_ENOMEM, "out of memory");
}

/* Takes the numbers of a into run's metrics, and the units attribute;
 * the other texts stay. */
static int take_numbers(h5r_run *run, h5r_attrs *a, sim_error *err) {
  run->names = malloc((a->n + 1) * sizeof *run->names);
  run->values = malloc((a->n + 1) * sizeof *run->values);
  if (run->names == NULL || run->values == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  for (size_t i = 0; i < a->n; i++)
    if (a->texts[i] != NULL && strcmp(a->names[i], "units") == 0) {
      run->units = a->texts[i];
      a->texts[i] = NULL;
    } else if (a->texts[i] == NULL) {
      run->names[run->nmetrics] = a->names[i];
      run->values[run->nmetrics++] = a->values[i];
      a->names[i] = NULL;
    }
  return SIM_OK;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts names and values together (few metrics: insertion sort). */
static void sort_metrics(h5r_run *run) {
  for (size_t i = 1; i < run->nmetrics; i++)
    for (size_t j = i; j > 0 && by_name(&run->names[j - 1], &run->names[j]) > 0;
         j--) {
      char *n = run->names[j];
      double v = run->values[j];
      run->names[j] = run->names[j - 1];
      run->values[j] = run->values[j - 1];
      run->names[j - 1] = n;
      run->values[j - 1] = v;
    }
}

/* The numeric /summary attributes: the run's metrics. */
static int read_summary(reader *r, hid_t file) {
  htri_t e = H5Lexists(file, "summary", H5P_DEFAULT);
  if (e <= 0)
    return e < 0 ? io_fail(r->err, r->path, "look up /summary") : SIM_OK;
  h5r_attrs a = {0};
  int rc = h5r__attrs_of(file, "summary", &a) < 0
               ? io_fail(r->err, r->path, "read the /summary attributes")
               : take_numbers(r->run, &a, r->err);
  h5r_attrs_release(&a);
  H5Eclear2(H5E_DEFAULT);
  sort_metrics(r->run);
  return rc;
}

int h5r_run_read(const char *path, h5r_run *out, sim_error *err) {
  memset(out, 0, sizeof *out);
  /* A library must not print: HDF5 prints its error stack by default. */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0)
    return io_fail(err, path, "open");
  reader r = {path, out, err};
  int rc = read_complete(&r, file);
  if (rc == SIM_OK)
    rc = read_format(&r, file);
  if (rc == SIM_OK)
    rc = read_scenario(&r, file);
  if (rc == SIM_OK)
    rc = read_summary(&r, file);
  if (H5Fclose(file) < 0 && rc == SIM_OK)
    rc = io_fail(err, path, "close");
  return rc;
}

/* ---- Reading every dataset back ------------------------------------- */

/* Rows of dataset d per read: about 8 MiB. */
static hsize_t rows_per_read(hsize_t row_bytes) {
  hsize_t rows = ((hsize_t)8 << 20) / (row_bytes > 0 ? row_bytes : 1);
  return rows > 0 ? rows : 1;
}

/* Reads the numeric dataset d whole, in slabs along dimension 0, as
 * stored: checksums and filters run, so damage inside a chunk shows. */
static herr_t read_numeric(hid_t d, hid_t space, hid_t mtype) {
  hsize_t dims[H5S_MAX_RANK];
  int rank = H5Sget_simple_extent_dims(space, dims, NULL);
  if (rank < 0)
    return -1;
  if (rank == 0)
    dims[0] = 1;
  hsize_t row = H5Tget_size(mtype);
  for (int i = 1; i < rank; i++)
    row *= dims[i];
  hsize_t step = rows_per_read(row);
  void *buf = malloc((size_t)(row * (step < dims[0] ? step : dims[0]) + 1));
  herr_t r = buf != NULL ? 0 : -1;
  for (hsize_t at = 0; r >= 0 && at < dims[0] && rank > 0; at += step) {
    hsize_t start[H5S_MAX_RANK] = {at}, count[H5S_MAX_RANK];
    memcpy(count, dims, sizeof dims);
    count[0] = dims[0] - at < step ? dims[0] - at : step;
    hid_t mem = H5Screate_simple(rank, count, NULL);
    r = mem < 0 ? -1
                : H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count,
                                      NULL);
    if (r >= 0)
      r = H5Dread(d, mtype, mem, space, H5P_DEFAULT, buf);
    if (mem >= 0)
      H5Sclose(mem);
  }
  if (r >= 0 && rank == 0)
    r = H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  free(buf);
  return r;
}

/* Reads a string dataset (labels, texts, table columns: small) whole. */
static herr_t read_strings(hid_t d, hid_t space, hid_t mtype) {
  hssize_t n = H5Sget_simple_extent_npoints(space);
  size_t size = H5Tget_size(mtype);
  void *buf = n >= 0 ? calloc((size_t)n + 1, size) : NULL;
  herr_t r =
      buf != NULL ? H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) : -1;
  if (r >= 0 && H5Tis_variable_str(mtype) > 0)
    H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, buf);
  free(buf);
  return r;
}

static herr_t read_dataset(hid_t d) {
  hid_t ftype = H5Dget_type(d), space = H5Dget_space(d);
  hid_t mtype = ftype >= 0 ? H5Tget_native_type(ftype, H5T_DIR_ASCEND) : -1;
  herr_t r = -1;
  if (mtype >= 0 && space >= 0)
    r = H5Tget_class(ftype) == H5T_STRING ? read_strings(d, space, mtype)
                                          : read_numeric(d, space, mtype);
  if (close_id(mtype, H5Tclose) | close_id(ftype, H5Tclose) |
      close_id(space, H5Sclose))
    r = -1;
  return r;
}

typedef struct verifier {
  char bad[512]; /* the object that failed */
} verifier;

/* Reads one attribute back whole, whatever its type (numbers, strings,
 * the references of dimension scales), and frees what HDF5 allocated. */
static herr_t read_attr(hid_t loc, const char *name, const H5A_info_t *info,
                        void *data) {
  (void)info, (void)data;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  hid_t ft = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
  hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
  hid_t mt = ft >= 0 ? H5Tget_native_type(ft, H5T_DIR_ASCEND) : -1;
  hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
  size_t size = mt >= 0 ? H5Tget_size(mt) : 0;
  void *buf = n >= 0 && size > 0 ? calloc((size_t)n + 1, size) : NULL;
  herr_t r = buf != NULL ? H5Aread(a, mt, buf) : -1;
  if (r >= 0 &&
      (H5Tdetect_class(mt, H5T_VLEN) > 0 || H5Tis_variable_str(mt) > 0))
    r = H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, buf);
  free(buf);
  if (close_id(mt, H5Tclose) | close_id(sp, H5Sclose) | close_id(ft, H5Tclose) |
      close_id(a, H5Aclose))
    r = -1;
  return r < 0 ? -1 : 0;
}

/* Every object: its attributes, and a dataset's values, read back. */
static herr_t visit(hid_t loc, const char *name, const H5O_info_t *info,
                    void *data) {
  verifier *v = data;
  herr_t r = H5Aiterate_by_name(loc, name, H5_INDEX_NAME, H5_ITER_NATIVE, NULL,
                                read_attr, NULL, H5P_DEFAULT);
  if (r >= 0 && info->type == H5O_TYPE_DATASET) {
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    r = d < 0 ? -1 : read_dataset(d);
    if (close_id(d, H5Dclose) < 0)
      r = -1;
  }
  if (r < 0)
    snprintf(v->bad, sizeof v->bad, "/%.500s",
             strcmp(name, ".") == 0 ? "" : name);
  return r < 0 ? -1 : 0;
}

int h5r_run_verify(const char *path, sim_error *err) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0)
    return io_fail(err, path, "open");
  verifier v = {""};
  herr_t r = H5Ovisit(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit, &v);
  int rc = SIM_OK;
  if (r < 0) {
    char what[600];
    snprintf(what, sizeof what, "read %s back",
             v.bad[0] != '\0' ? v.bad : "every object");
    rc = io_fail(err, path, what);
  }
  if (H5Fclose(file) < 0 && rc == SIM_OK)
    rc = io_fail(err, path, "close");
  H5Eclear2(H5E_DEFAULT);
  return rc;
}

void h5r_run_release(h5r_run *r) {
  for (size_t i = 0; i < r->nmetrics; i++)
    free(r->names[i]);
  free(r->names);
  free(r->values);
  free(r->scenario);
  free(r->format);
  free(r->units);
  memset(r, 0, sizeof *r);
}

/* ---- Writing a table --------------------------------------------------- */

typedef struct tw {
  const char *partial; /* the file being written */
  sim_error *err;
  hid_t file, str, gcpl, dcpl, dcpl_str; /* dcpl: numbers, checksummed */
} tw;

static int tw_fail(tw *w, const char *what, const char *name) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s %.200s", what, name);
  return io_fail(w->err, w->partial, buf);
}

/* Makes the groups on the way to path ("a/b/c" makes a and a/b). */
static int make_parents(tw *w, const char *path) {
  char buf[1024];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
    return sim_error_set(w->err, SIM_EINVAL, "h5r: %s: name too long", path);
  for (char *p = strchr(buf, '/'); p != NULL; p = strchr(p + 1, '/')) {
    *p = '\0';
    htri_t e = H5Lexists(w->file, buf, H5P_DEFAULT);
    hid_t g = e == 0
                  ? H5Gcreate2(w->file, buf, H5P_DEFAULT, w->gcpl, H5P_DEFAULT)
                  : H5I_INVALID_HID;
    if (e < 0 || (e == 0 && g < 0) || close_id(g, H5Gclose) < 0)
      return tw_fail(w, "create group", buf);
    *p = '/';
  }
  return SIM_OK;
}

/* Writes a scalar attribute; -1 on failure (the caller says what). */
static herr_t put_attr(hid_t loc, const char *key, hid_t ftype, hid_t mtype,
                       const void *value) {
  hid_t sp = H5Screate(H5S_SCALAR);
  hid_t a = sp < 0 ? H5I_INVALID_HID
                   : H5Acreate2(loc, key, ftype, sp, H5P_DEFAULT, H5P_DEFAULT);
  herr_t s = a < 0 ? -1 : H5Awrite(a, mtype, value);
  int closes = close_id(a, H5Aclose) | close_id(sp, H5Sclose);
  return s < 0 || closes < 0 ? -1 : 0;
}

/* The column's data as HDF5 takes it; strings with NULL made "". */
static const void *column_data(const h5r_column *c, size_t n,
                               const char **strs) {
  if (c->type != H5R_STRING)
    return c->data;
  const char *const *in = c->data;
  for (size_t i = 0; i < n; i++)
    strs[i] = in[i] != NULL ? in[i] : "";
  return strs;
}

static int write_column(tw *w, const h5r_column *c, size_t n,
                        const char **strs) {
  hid_t ft = c->type == H5R_INT64     ? H5T_STD_I64LE
             : c->type == H5R_FLOAT64 ? H5T_IEEE_F64LE
                                      : w->str;
  hid_t mt = c->type == H5R_INT64     ? H5T_NATIVE_INT64
             : c->type == H5R_FLOAT64 ? H5T_NATIVE_DOUBLE
                                      : w->str;
  hsize_t dims[1] = {n};
  int rc = make_parents(w, c->path);
  if (rc != SIM_OK)
    return rc;
  hid_t sp = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = c->type == H5R_STRING ? w->dcpl_str : w->dcpl;
  hid_t d = sp < 0 ? H5I_INVALID_HID
                   : H5Dcreate2(w->file, c->path, ft, sp, H5P_DEFAULT, dcpl,
                                H5P_DEFAULT);
  herr_t s = d < 0 ? -1
                   : H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                              column_data(c, n, strs));
  if (s >= 0 && c->units != NULL)
    s = put_attr(d, "units", w->str, w->str, &c->units);
  int closes = close_id(d, H5Dclose) | close_id(sp, H5Sclose);
  return s < 0 || closes < 0 ? tw_fail(w, "write column", c->path) : SIM_OK;
}

static int write_all(tw *w, const h5r_table *t) {
  const char **strs = calloc(t->nrows, sizeof *strs);
  if (strs == NULL)
    return sim_error_set(w->err, SIM_ENOMEM, "out of memory");
  int rc = SIM_OK;
  for (size_t i = 0; i < t->ncols && rc == SIM_OK; i++)
    rc = write_column(w, &t->cols[i], t->nrows, strs);
  free(strs);
  for (size_t i = 0; i < t->nattrs && rc == SIM_OK; i++)
    if (put_attr(w->file, t->attr_keys[i], w->str, w->str, &t->attr_values[i]) <
        0)
      rc = tw_fail(w, "write attribute", t->attr_keys[i]);
  int64_t one = 1;
  if (rc == SIM_OK &&
      put_attr(w->file, "complete", H5T_STD_I64LE, H5T_NATIVE_INT64, &one) < 0)
    rc = tw_fail(w, "write attribute", "complete");
  return rc;
}

/* The file and the property lists and string type every object shares.
 * As run files (record.h): HDF5 1.10's checksummed format, and a partial
 * file another process may hold never truncated (the caller holds
 * PATH.lock; a stale partial is removed first). */
static int tw_open(tw *w, size_t nrows) {
  if (!h5_room_to_create())
    return sim_error_set(w->err, SIM_ENOMEM,
                         "h5r: %s: cannot create the file: %s", w->partial,
                         sim_strerror(SIM_ENOMEM));
  hsize_t chunk[1] = {nrows < 65536 ? nrows : 65536};
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  herr_t s = fcpl < 0 || fapl < 0 ? -1 : H5Pset_obj_track_times(fcpl, 0);
  if (s >= 0)
    s = H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110);
  if (unlink(w->partial) != 0 && errno != ENOENT)
    s = -1;
  w->gcpl = H5Pcreate(H5P_GROUP_CREATE);
  w->dcpl = H5Pcreate(H5P_DATASET_CREATE);
  w->dcpl_str = H5Pcreate(H5P_DATASET_CREATE);
  w->str = H5Tcopy(H5T_C_S1);
  if (s >= 0 && (w->gcpl < 0 || w->dcpl < 0 || w->dcpl_str < 0 || w->str < 0))
    s = -1;
  if (s >= 0)
    s = H5Pset_obj_track_times(w->gcpl, 0);
  if (s >= 0)
    s = H5Pset_obj_track_times(w->dcpl, 0);
  if (s >= 0)
    s = H5Pset_obj_track_times(w->dcpl_str, 0);
  /* Each column a chunk (of 64 Ki rows at most) with its checksum. */
  if (s >= 0)
    s = H5Pset_chunk(w->dcpl, 1, chunk);
  if (s >= 0)
    s = H5Pset_fletcher32(w->dcpl);
  if (s >= 0)
    s = H5Tset_size(w->str, H5T_VARIABLE);
  if (s >= 0)
    s = H5Tset_cset(w->str, H5T_CSET_UTF8);
  if (s >= 0)
    w->file = H5Fcreate(w->partial, H5F_ACC_EXCL, fcpl, fapl);
  close_id(fcpl, H5Pclose);
  close_id(fapl, H5Pclose);
  return s < 0 || w->file < 0 ? io_fail(w->err, w->partial, "create the file")
                              : SIM_OK;
}

static int tw_close(tw *w) {
  int r = close_id(w->file, H5Fclose) | close_id(w->str, H5Tclose) |
          close_id(w->gcpl, H5Pclose) | close_id(w->dcpl, H5Pclose) |
          close_id(w->dcpl_str, H5Pclose);
  return r < 0 ? io_fail(w->err, w->partial, "close the file") : SIM_OK;
}

int h5r_table_write(const char *path, const h5r_table *t, sim_error *err) {
  char partial[4096];
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  sim_error_clear(err);
  if (snprintf(partial, sizeof partial, "%s.partial", path) >=
      (int)sizeof partial)
    return sim_error_set(err, SIM_EINVAL, "h5r: %s: path too long", path);
  if (t->nrows == 0)
    return sim_error_set(err, SIM_EINVAL, "h5r: %s: a table needs rows", path);
  tw w = {partial,         err,
          H5I_INVALID_HID, H5I_INVALID_HID,
          H5I_INVALID_HID, H5I_INVALID_HID,
          H5I_INVALID_HID};
  wlock lock;
  int rc = wlock_take(&lock, path, err);
  if (rc != SIM_OK)
    return rc;
  rc = tw_open(&w, t->nrows);
  if (rc == SIM_OK)
    rc = write_all(&w, t);
  int closed = tw_close(&w);
  if (rc == SIM_OK)
    rc = closed;
  if (rc == SIM_OK)
    rc = seal_write(partial, err);
  if (rc == SIM_OK && rename(partial, path) != 0)
    rc = sim_error_set(err, SIM_EIO, "h5r: cannot rename %s to %s: %s", partial,
                       path, strerror(errno));
  if (rc != SIM_OK)
    unlink(partial);
  wlock_release(&lock);
  return rc;
}
