/* record_series.c - the HDF5 writer's telemetry groups: each declared
 * group's datasets (chunked series, the time coordinate and the axis
 * labels) and its rows, buffered a chunk at a time (record.c says why). */
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
#include "vec.h"

/* ---- Groups ------------------------------------------------------------ */

/* 1 if the object at path exists, 0 if not, -1 on error. H5Lexists of
 * HDF5 1.10 fails when a parent is missing, so check parents first. */
static int path_exists(h5w *w, const char *path) {
  size_t n = strlen(path);
  char *p = sim_alloc(NULL, n + 1);
  if (p == NULL)
    return -1;
  memcpy(p, path, n + 1);
  htri_t e = 1;
  for (size_t i = 0; i <= n && e > 0; i++) {
    if (p[i] != '/' && p[i] != '\0')
      continue;
    p[i] = '\0';
    e = H5Lexists(w->file, p, H5P_DEFAULT);
    p[i] = '/';
  }
  sim_free(NULL, p);
  return e < 0 ? -1 : e > 0;
}

/* Creates the missing parent groups of name ("a" and "a/b" of "a/b/c")
 * with the sink's group properties: groups HDF5 makes on the way would
 * take the defaults, which stamp times in the v110 format. */
int h5w__make_parents(h5w *w, const char *name) {
  char buf[1024];
  if (snprintf(buf, sizeof buf, "%s", name) >= (int)sizeof buf)
    return sim_error_set(&w->base.err, SIM_EINVAL, "h5w: /%s: name too long",
                         name);
  for (char *p = strchr(buf, '/'); p != NULL; p = strchr(p + 1, '/')) {
    *p = '\0';
    htri_t e = H5Lexists(w->file, buf, H5P_DEFAULT);
    hid_t g = e == 0
                  ? H5Gcreate2(w->file, buf, H5P_DEFAULT, w->gcpl, H5P_DEFAULT)
                  : H5I_INVALID_HID;
    if (e < 0 || (e == 0 && g < 0) || h5w__close_id(&g, H5Gclose) < 0)
      return h5w__io_fail(w, "create group /%s", buf);
    *p = '/';
  }
  return SIM_OK;
}

/* Opens the HDF5 group of g, creating it and its missing parents. It may
 * exist already as the parent of a group declared earlier ("services"
 * after "services/chat"); tel.c and the duplicate check rule out more. */
static int make_group(h5w *w, h5w_group *hg) {
  const char *name = hg->decl->name;
  int e = path_exists(w, name);
  if (e > 0)
    hg->gid = H5Gopen2(w->file, name, H5P_DEFAULT);
  else if (e == 0 && h5w__make_parents(w, name) == SIM_OK)
    hg->gid = H5Gcreate2(w->file, name, w->lcpl, w->gcpl, H5P_DEFAULT);
  else if (e == 0)
    return w->base.err.code;
  return hg->gid < 0 ? h5w__io_fail(w, "create group /%s", name) : SIM_OK;
}

/* Chunk dimensions: [block, chunk_width], at most H5W_CHUNK_ELEMS values
 * and at most chunk_rows rows. A row wider than a chunk is split. */
static void plan_chunks(h5w_group *hg, size_t chunk_rows) {
  size_t width = hg->decl->width;
  hg->chunk_width = width < H5W_CHUNK_ELEMS ? width : H5W_CHUNK_ELEMS;
  size_t rows = H5W_CHUNK_ELEMS / hg->chunk_width;
  hg->block = chunk_rows < rows ? chunk_rows : rows;
}

/* The creation properties of a series in *dcpl (the caller closes it):
 * chunked, shuffled and deflated, no object times. Negative on error. */
static herr_t series_dcpl(h5w *w, const h5w_group *hg, int rank,
                          hid_t *dcpl_out) {
  hsize_t chunk[2] = {hg->block, hg->chunk_width};
  hid_t dcpl = *dcpl_out = H5Pcreate(H5P_DATASET_CREATE);
  herr_t r = dcpl < 0 ? -1 : H5Pset_chunk(dcpl, rank, chunk);
  if (r >= 0)
    r = H5Pset_obj_track_times(dcpl, 0);
  /* Shuffle puts the bytes of equal significance together, which is what
   * lets deflate squeeze slowly varying doubles. */
  if (r >= 0 && w->deflate > 0)
    r = H5Pset_shuffle(dcpl);
  if (r >= 0 && w->deflate > 0)
    r = H5Pset_deflate(dcpl, (unsigned)w->deflate);
  /* A checksum of every chunk as stored, last, so a reader (the sweep's
   * done-ness check) tells a damaged chunk from data before inflating. */
  if (r >= 0)
    r = H5Pset_fletcher32(dcpl);
  return r;
}

/* Creates the float64 series name of hg, [0] or [0, width] extendible
 * along time, with its units and long name, in *out. */
static int make_series(h5w *w, h5w_group *hg, const tel_column *col, int rank,
                       hid_t *out) {
  const char *g = hg->decl->name;
  hsize_t dims[2] = {0, hg->decl->width};
  hsize_t maxdims[2] = {H5S_UNLIMITED, hg->decl->width};
  hid_t dcpl = H5I_INVALID_HID;
  hid_t space = H5Screate_simple(rank, dims, maxdims);
  if (space >= 0 && series_dcpl(w, hg, rank, &dcpl) >= 0)
    *out = H5Dcreate2(hg->gid, col->name, H5T_IEEE_F64LE, space, H5P_DEFAULT,
                      dcpl, w->dapl);
  int rc = *out < 0 ? h5w__io_fail(w, "create dataset /%s/%s", g, col->name)
                    : SIM_OK;
  rc = h5w__closed(
      w, rc, h5w__close_id(&dcpl, H5Pclose) | h5w__close_id(&space, H5Sclose));
  if (rc != SIM_OK)
    return rc;
  char obj[1024];
  snprintf(obj, sizeof obj, "/%s/%s", g, col->name);
  return h5w__put_series_attrs(w, *out, obj, col->units, col->long_name);
}

/* ---- Time coordinates ---------------------------------------------------
 * Every group's time is seconds since the run's start. When the start is a
 * known UTC date the units say so as CF conventions (section 4.4) write a
 * time coordinate, "seconds since 2023-07-01T00:00:00Z", with the calendar
 * the date is in; netCDF readers (xarray, ncdump -t) then show dates, and
 * the values stay the same seconds. Without a date the units stay "s", a
 * duration, and a comment says why there is no date. */

#define H5W_CALENDAR "proleptic_gregorian" /* ISO 8601's calendar */
#define H5W_UNDATED                                                            \
  "seconds from the start of the run; the scenario gives no start date "       \
  "(a grid signal's start), so times are not dates"

/* The units every time dataset gets, from the options' origin. SIM_EINVAL
 * for an origin too long or with control characters. */
int h5w__time_units_init(h5w *w, const char *origin, sim_error *err) {
  if (origin == NULL) {
    snprintf(w->time_units, sizeof w->time_units, "s");
    return SIM_OK;
  }
  size_t n = strlen(origin);
  bool printable = true;
  for (size_t i = 0; i < n; i++)
    printable = printable && (unsigned char)origin[i] >= 0x20;
  if (n == 0 || n > 63 || !printable)
    return sim_error_set(err, SIM_EINVAL,
                         "h5w: time origin is not a date of 1 to 63 printable "
                         "bytes");
  snprintf(w->time_units, sizeof w->time_units, "seconds since %s", origin);
  return SIM_OK;
}

/* The calendar of a dated time dataset, or the comment of an undated one. */
static int put_time_attrs(h5w *w, hid_t time, const char *group) {
  char obj[1024];
  snprintf(obj, sizeof obj, "/%s/time", group);
  if (strcmp(w->time_units, "s") == 0)
    return h5w__put_str_attr(w, time, obj, "comment", H5W_UNDATED);
  return h5w__put_str_attr(w, time, obj, "calendar", H5W_CALENDAR);
}

/* The time dataset of hg, made the scale of dimension 0. */
static int make_time(h5w *w, h5w_group *hg) {
  const tel_column col = {"time", w->time_units,
                          "simulated time at the end of the sample interval"};
  int rc = make_series(w, hg, &col, 1, &hg->time);
  if (rc == SIM_OK)
    rc = put_time_attrs(w, hg->time, hg->decl->name);
  if (rc == SIM_OK && H5DSset_scale(hg->time, "time") < 0)
    rc = h5w__io_fail(w, "make /%s/time a dimension scale", hg->decl->name);
  return rc;
}

/* The creation properties of a 1-D dataset of n values written whole (a
 * table column, an axis) in *dcpl: no object times, and for numbers,
 * chunked with a Fletcher32 checksum on each chunk, as the series have.
 * Strings are variable-length, which HDF5 cannot filter: the file's seal
 * covers them (seal.h). Negative on error. */
herr_t h5w__whole_dcpl(hsize_t n, bool numeric, hid_t *dcpl_out) {
  hsize_t chunk[1] = {n < 65536 ? n : 65536};
  hid_t dcpl = *dcpl_out = H5Pcreate(H5P_DATASET_CREATE);
  herr_t r = dcpl < 0 ? -1 : H5Pset_obj_track_times(dcpl, 0);
  if (r >= 0 && n > 0 && numeric)
    r = H5Pset_chunk(dcpl, 1, chunk);
  if (r >= 0 && n > 0 && numeric)
    r = H5Pset_fletcher32(dcpl);
  return r;
}

/* The axis dataset of a 2-D group: its labels as UTF-8 strings, made the
 * scale of dimension 1 under the axis name. */
static int make_labels(h5w *w, h5w_group *hg) {
  const tel_group *g = hg->decl;
  hsize_t dims[1] = {g->width};
  hid_t dcpl = H5I_INVALID_HID;
  hid_t space = H5Screate_simple(1, dims, NULL);
  herr_t r = space < 0 ? -1 : h5w__whole_dcpl(g->width, false, &dcpl);
  if (r >= 0)
    hg->labels = H5Dcreate2(hg->gid, g->axis_name, w->str_type, space,
                            H5P_DEFAULT, dcpl, H5P_DEFAULT);
  r = hg->labels < 0 ? -1
                     : H5Dwrite(hg->labels, w->str_type, H5S_ALL, H5S_ALL,
                                H5P_DEFAULT, g->axis_labels);
  if (r >= 0)
    r = H5DSset_scale(hg->labels, g->axis_name);
  int rc = r < 0 ? h5w__io_fail(w, "write axis /%s/%s", g->name, g->axis_name)
                 : SIM_OK;
  return h5w__closed(
      w, rc, h5w__close_id(&dcpl, H5Pclose) | h5w__close_id(&space, H5Sclose));
}

/* Column c of hg, with time (and the axis) attached as its scales. */
static int make_column(h5w *w, h5w_group *hg, size_t c) {
  const tel_group *g = hg->decl;
  int rank = g->axis_name != NULL ? 2 : 1;
  int rc = make_series(w, hg, &g->columns[c], rank, &hg->cols[c]);
  if (rc != SIM_OK)
    return rc;
  herr_t r = H5DSattach_scale(hg->cols[c], hg->time, 0);
  if (r >= 0 && rank == 2)
    r = H5DSattach_scale(hg->cols[c], hg->labels, 1);
  return r < 0 ? h5w__io_fail(w, "attach scales to /%s/%s", g->name,
                              g->columns[c].name)
               : SIM_OK;
}

/* Everything hg has in the file. */
static int make_objects(h5w *w, h5w_group *hg) {
  int rc = make_group(w, hg);
  if (rc == SIM_OK)
    rc = make_time(w, hg);
  if (rc == SIM_OK && hg->decl->axis_name != NULL)
    rc = make_labels(w, hg);
  for (size_t c = 0; c < hg->decl->ncolumns && rc == SIM_OK; c++)
    rc = make_column(w, hg, c);
  return rc;
}

/* Closes what hg has open; -1 if any close failed. */
int h5w__group_close(h5w_group *hg) {
  int r = 0;
  for (size_t c = 0; hg->cols != NULL && c < hg->decl->ncolumns; c++)
    r |= h5w__close_id(&hg->cols[c], H5Dclose);
  r |=
      h5w__close_id(&hg->labels, H5Dclose) | h5w__close_id(&hg->time, H5Dclose);
  return r | h5w__close_id(&hg->gid, H5Gclose);
}

void h5w__group_free(h5w_group *hg) {
  tel__group_destroy(hg->decl);
  hg->decl = NULL;
  sim_free(NULL, hg->cols);
  sim_free(NULL, hg->tbuf);
  sim_free(NULL, hg->vbuf);
  h5w__job_free(hg);
}

/* Doubles for n values and the room to filter them in place (the worker
 * stores a chunk where its rows were: record_deflate.c). */
static size_t padded(size_t n) {
  size_t bytes = n * sizeof(double);
  return n +
         (h5w__chunk_room(bytes) - bytes + sizeof(double) - 1) / sizeof(double);
}

/* The memory of hg: handles (all h5w__closed) and row buffers. */
static int group_init(h5w_group *hg, const tel_group *g, size_t chunk_rows) {
  memset(hg, 0, sizeof *hg);
  if ((hg->decl = tel__group_dup(g)) == NULL)
    return SIM_ENOMEM;
  hg->gid = hg->time = hg->labels = H5I_INVALID_HID;
  hg->last_time = -INFINITY;
  plan_chunks(hg, chunk_rows);
  /* tel.c bounds ncolumns * width * sizeof(double) */
  hg->tstride = padded(hg->block);
  hg->stride = padded(hg->block * g->width);
  hg->cols = sim_calloc(NULL, g->ncolumns, sizeof *hg->cols);
  hg->tbuf = h5w__buffers(1, hg->tstride);
  hg->vbuf = h5w__buffers(g->ncolumns, hg->stride);
  if (hg->cols == NULL || hg->tbuf == NULL || hg->vbuf == NULL) {
    h5w__group_free(hg);
    return SIM_ENOMEM;
  }
  for (size_t c = 0; c < g->ncolumns; c++)
    hg->cols[c] = H5I_INVALID_HID;
  return SIM_OK;
}

const h5w_group *h5w__find_group(const h5w *w, const char *name) {
  for (size_t i = 0; i < w->ngroups; i++)
    if (strcmp(w->groups[i].decl->name, name) == 0)
      return &w->groups[i];
  return NULL;
}

/* Room for one more group. */
static int reserve_group(h5w *w) {
  return sim_vec_reserve(NULL, &w->groups, &w->gcap, w->ngroups + 1,
                         sizeof *w->groups);
}

int h5w__open_group(tel_sink *s, const tel_group *g, size_t *id) {
  h5w *w = (h5w *)s;
  int rc = h5w__ready(w, "open_group");
  if (rc != SIM_OK)
    return rc;
  if (h5w__find_group(w, g->name) != NULL)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "h5w: %s: group %s declared twice", w->partial,
                         g->name);
  if (reserve_group(w) != SIM_OK)
    return h5w__no_memory(w, g->name);
  h5w_group *hg = &w->groups[w->ngroups];
  if (group_init(hg, g, w->chunk_rows) != SIM_OK)
    return h5w__no_memory(w, g->name);
  if ((rc = make_objects(w, hg)) != SIM_OK) {
    h5w__group_close(hg);
    h5w__group_free(hg);
    return rc;
  }
  *id = w->ngroups++;
  return SIM_OK;
}

/* ---- Rows -------------------------------------------------------------- */

/* Writes the nbuf buffered rows of one series of hg from buf, after the
 * nrows already in the file. */
static int write_block(h5w *w, h5w_group *hg, hid_t dset, const char *name,
                       int rank, const double *buf) {
  hsize_t size[2] = {hg->nrows + hg->nbuf, hg->decl->width};
  hsize_t start[2] = {hg->nrows, 0};
  hsize_t count[2] = {hg->nbuf, hg->decl->width};
  hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
  herr_t r = H5Dset_extent(dset, size);
  if (r >= 0 && (fspace = H5Dget_space(dset)) < 0)
    r = -1;
  if (r >= 0 && (mspace = H5Screate_simple(rank, count, NULL)) < 0)
    r = -1;
  if (r >= 0)
    r = H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
  if (r >= 0)
    r = H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, buf);
  int rc = r < 0
               ? h5w__io_fail(w, "write rows %llu to %llu of /%s/%s",
                              (unsigned long long)hg->nrows,
                              (unsigned long long)size[0], hg->decl->name, name)
               : SIM_OK;
  return h5w__closed(w, rc,
                     h5w__close_id(&mspace, H5Sclose) |
                         h5w__close_id(&fspace, H5Sclose));
}

/* Room for metadata HDF5 writes later (chunk index, attributes, the
 * closing flush), kept under a file-size limit. */
#define H5W_META_MARGIN ((hsize_t)1 << 20)

/* SIM_OK if bytes more (an upper bound) fit under the process's file-size
 * limit with the margin; else the disk error EFBIG, before HDF5 tries.
 * Why: a write refused past the limit fails HDF5's closing flush too,
 * which HDF5 1.10 does not survive (see h5w__divert), and a hard limit cannot
 * be lifted for the close as a soft one can. */
int h5w__check_room(h5w *w, hsize_t bytes) {
  struct rlimit lim;
  hsize_t size = 0;
  if (getrlimit(RLIMIT_FSIZE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
    return SIM_OK;
  /* The size as today's path would see it: with the queued blocks. */
  int rc = h5w__drain(w);
  if (rc != SIM_OK)
    return rc;
  if (H5Fget_filesize(w->file, &size) < 0)
    return SIM_OK;
  if (size + bytes + bytes / 64 + H5W_META_MARGIN <= (hsize_t)lim.rlim_cur)
    return SIM_OK;
  w->state = H5W_FAILED;
  return h5w__disk_fail(w, EFBIG);
}

/* Writes hg's buffered rows: time first, then each column; a full block,
 * and the last rows at commit, go to the worker (record_deflate.c),
 * which gives the same file. The
 * queued blocks of every group are written before any write of our own,
 * so HDF5 sees the blocks in the order they filled. */
int h5w__flush_group(h5w *w, h5w_group *hg) {
  const tel_group *g = hg->decl;
  if (hg->nbuf == 0)
    return SIM_OK;
  size_t values = hg->nbuf * (1 + g->ncolumns * g->width);
  if (h5w__check_room(w, (hsize_t)values * sizeof(double)) != SIM_OK)
    return w->base.err.code;
  bool handed = false;
  int rc = hg->nbuf == hg->block ? h5w__hand_over(w, hg, &handed)
                                 : h5w__hand_over_tail(w, hg, &handed);
  if (rc == SIM_OK && !handed)
    rc = h5w__drain(w);
  int rank = g->axis_name != NULL ? 2 : 1;
  if (rc == SIM_OK && !handed)
    rc = write_block(w, hg, hg->time, "time", 1, hg->tbuf);
  for (size_t c = 0; c < g->ncolumns && rc == SIM_OK && !handed; c++)
    rc = write_block(w, hg, hg->cols[c], g->columns[c].name, rank,
                     hg->vbuf + c * hg->stride);
  if (rc == SIM_OK) {
    hg->nrows += hg->nbuf;
    hg->nbuf = 0;
  }
  return rc;
}

/* Times must not run backwards within a group: the time scale of a file
 * must stay sorted, and a row out of order is a caller's bug. */
static int check_time(h5w *w, const h5w_group *hg, double time_s) {
  if (time_s >= hg->last_time && isfinite(time_s))
    return SIM_OK;
  return sim_error_set(&w->base.err, SIM_EINVAL,
                       "h5w: %s: group %s: time %.17g s is not finite or "
                       "before the last row's %.17g s",
                       w->partial, hg->decl->name, time_s, hg->last_time);
}

int h5w__append(tel_sink *s, size_t id, double time_s, const double *values) {
  h5w *w = (h5w *)s;
  /* Not h5w__ready, which drains: a row makes no HDF5 call. */
  int rc = h5w__check_state(w, "append");
  if (rc != SIM_OK)
    return rc;
  if (id >= w->ngroups)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "h5w: %s: append to unknown group id %zu", w->partial,
                         id);
  h5w_group *hg = &w->groups[id];
  if ((rc = check_time(w, hg, time_s)) != SIM_OK)
    return rc;
  size_t width = hg->decl->width;
  hg->tbuf[hg->nbuf] = time_s;
  for (size_t c = 0; c < hg->decl->ncolumns; c++)
    memcpy(hg->vbuf + c * hg->stride + hg->nbuf * width, values + c * width,
           width * sizeof *values);
  hg->nbuf++;
  hg->last_time = time_s;
  return hg->nbuf == hg->block ? h5w__flush_group(w, hg) : SIM_OK;
}
