/* record.c - the HDF5 writer (h5w): a telemetry sink (tel.h) that writes
 * the run file of docs/OUTPUT.md. The only file of aifsim that links
 * HDF5; record.h gives the layout.
 *
 * Design: every declared group keeps its HDF5 group, its "time" dataset,
 * its axis-label dataset (2-D groups) and one dataset per column open
 * until commit, and buffers up to `block` rows in memory. A full buffer is
 * written as one block (extend, select the new rows, write), and blocks
 * are as many rows as a chunk and start on a chunk boundary, so every
 * chunk is compressed and written exactly once and memory stays flat
 * however long the run. Invariants: rows in the file (nrows) are a
 * multiple of block until commit writes the rest; nbuf < block between
 * calls; every hid_t is open or H5I_INVALID_HID.
 *
 * State: OPEN -> COMMITTED on a successful commit, or OPEN -> FAILED on
 * the first I/O error. A failed sink keeps its first message and answers
 * every call but destroy with that code, because the file may now hold
 * half a block and nothing more written to it could be trusted. After
 * commit every call but destroy gives SIM_ESTATE. A row for an unknown
 * group id, or a time before the group's last, is SIM_EINVAL and leaves
 * the sink usable, like every argument error. */
#define _GNU_SOURCE /* memfd_create */
#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>
#include <hdf5_hl.h>

#include "alloc.h"
#include "seal.h"
#include "tel_internal.h"
#include "vec.h"
#include "writelock.h"

#define H5W_CHUNK_ROWS 4096
#define H5W_DEFLATE 4
/* Chunks of about 1 MiB at most: big enough to compress well and few
 * enough for the chunk index, small enough that a wide group (thousands
 * of racks or GPUs) keeps little in memory per column. */
#define H5W_CHUNK_ELEMS (((size_t)1 << 20) / sizeof(double))

#define H5W_DETAIL 256 /* bytes of HDF5's error text kept in a message */

enum { H5W_OPEN, H5W_COMMITTED, H5W_FAILED };

typedef struct h5w_group {
  tel_group *decl; /* our own copy (tel_internal.h) */
  hid_t gid;
  hid_t time;   /* the "time" dataset, scale of dimension 0 */
  hid_t labels; /* the axis dataset, scale of dimension 1; width 1: none */
  hid_t *cols;  /* one dataset per column */
  size_t block; /* rows per chunk and per write */
  size_t chunk_width;
  size_t nbuf;   /* rows buffered, < block between calls */
  hsize_t nrows; /* rows in the file */
  double last_time;
  double *tbuf; /* [block] times */
  double *vbuf; /* [ncolumns][block][width]: each column's rows together */
} h5w_group;

typedef struct h5w {
  tel_sink base; /* first, so a tel_sink * is an h5w * */
  char *path;    /* the final name */
  char *partial; /* path + ".partial", written until commit */
  int state;
  int created; /* partial exists and is ours to remove */
  int keep_partial; /* destroy before commit keeps it, marked complete=0 */
  wlock lock;       /* PATH.lock, held from create to commit or destroy */
  size_t chunk_rows;
  int deflate; /* 0 = no filters */
  hid_t file, summary;
  hid_t str_type; /* variable-length UTF-8 string */
  hid_t lcpl, gcpl, dapl;
  h5w_group *groups;
  size_t ngroups, gcap;
  char time_units[96]; /* "s" or "seconds since ORIGIN" (time_units_init) */
} h5w;

static const tel_sink_ops h5w_ops;

/* ---- Errors and handles ------------------------------------------------ */

/* Keeps the description of the innermost HDF5 error: it says what went
 * wrong ("No such file or directory"), the outer ones only where. */
static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data) {
  if (n == 0 && e->desc != NULL)
    snprintf(data, H5W_DETAIL, "%s", e->desc);
  return 0;
}

/* Sets *(int *)data when an error of the stack is HDF5 failing to
 * allocate memory ("memory allocation failed for chunk"). */
static herr_t memory_error(unsigned n, const H5E_error2_t *e, void *data) {
  (void)n;
  if (e->maj_num == H5E_RESOURCE &&
      (e->min_num == H5E_CANTALLOC || e->min_num == H5E_NOSPACE))
    *(int *)data = 1;
  return 0;
}

/* The errno HDF5's file driver saw ("errno = 28" in its message), or 0. */
static int driver_errno(const char *detail) {
  const char *e = strstr(detail, "errno = ");
  return e != NULL ? atoi(e + 8) : 0;
}

/* The file's size so far, as "1.2 GB". */
static void size_text(const char *path, char *buf, size_t size) {
  struct stat st;
  double b = stat(path, &st) == 0 ? (double)st.st_size : 0;
  static const char *const unit[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  for (; b >= 1000 && u < 4; u++)
    b /= 1000;
  snprintf(buf, size, u == 0 ? "%.0f %s" : "%.1f %s", b, unit[u]);
}

/* A full disk, a quota or a file-size limit: one line that says so,
 * "out/x.h5: no space left on device after 1.2 GB". */
static int disk_fail(h5w *w, int e) {
  char msg[128], size[32];
  snprintf(msg, sizeof msg, "%s", strerror(e));
  msg[0] = (char)(msg[0] >= 'A' && msg[0] <= 'Z' ? msg[0] - 'A' + 'a' : msg[0]);
  size_text(w->partial, size, sizeof size);
  return sim_error_set(&w->base.err, SIM_EIO, "%s: %s after %s", w->path, msg,
                       size);
}

/* Records SIM_EIO with "h5w: FILE: cannot WHAT: HDF5 detail", marks the
 * sink failed and clears HDF5's error stack. Returns SIM_EIO. The detail
 * is HDF5's first line, without the driver's dump of its arguments. */
static int io_fail(h5w *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int io_fail(h5w *w, const char *fmt, ...) {
  char what[512], detail[H5W_DETAIL] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  int oom = 0;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, detail);
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, memory_error, &oom);
  H5Eclear2(H5E_DEFAULT);
  w->state = H5W_FAILED;
  if (oom) /* the run failed, not its input: SIM_ENOMEM, exit 1 */
    return sim_error_set(&w->base.err, SIM_ENOMEM,
                         "h5w: %s: cannot %s: out of memory", w->partial, what);
  int e = driver_errno(detail);
  if (e == ENOSPC || e == EFBIG || e == EDQUOT)
    return disk_fail(w, e);
  detail[strcspn(detail, "\n")] = '\0';
  char *t = strstr(detail, ": time =");
  if (t != NULL)
    *t = '\0';
  return sim_error_set(&w->base.err, SIM_EIO, "h5w: %s: cannot %s%s%s",
                       w->partial, what, detail[0] != '\0' ? ": " : "", detail);
}

static int no_memory(h5w *w, const char *what) {
  return sim_error_set(&w->base.err, SIM_ENOMEM, "h5w: %s: %s: %s", w->partial,
                       what, sim_strerror(SIM_ENOMEM));
}

typedef herr_t (*close_fn)(hid_t);

/* Closes *id if open and marks it closed. Returns 0, or -1 if the close
 * failed (the handle is forgotten either way: retrying would not help). */
static int close_id(hid_t *id, close_fn fn) {
  herr_t r = *id >= 0 ? fn(*id) : 0;
  *id = H5I_INVALID_HID;
  return r < 0 ? -1 : 0;
}

/* The end of a step with temporary handles: rc of the step (reported by
 * io_fail before the closes, which clear HDF5's error stack), else the
 * failure of a close (closes, the OR of close_id results). */
static int closed(h5w *w, int rc, int closes) {
  if (rc != SIM_OK || closes == 0)
    return rc;
  return io_fail(w, "close a temporary handle");
}

/* SIM_OK while open; the sticky code once failed; SIM_ESTATE after
 * commit. */
static int check_state(h5w *w, const char *what) {
  if (w->state == H5W_OPEN)
    return SIM_OK;
  if (w->state == H5W_FAILED)
    return w->base.err.code;
  return sim_error_set(&w->base.err, SIM_ESTATE, "h5w: %s: %s after commit",
                       w->path, what);
}

/* ---- Attributes -------------------------------------------------------- */

/* Writes a scalar attribute key on loc (replacing an old one) from buf of
 * memory type mtype, stored as ftype. obj names loc in messages. */
static int put_attr(h5w *w,          /* the sink, for messages */
                    hid_t loc,       /* file (root), group or dataset */
                    const char *obj, /* its path, for messages */
                    const char *key, /* attribute name */
                    hid_t ftype,     /* type in the file */
                    hid_t mtype,     /* type of *buf */
                    const void *buf) {
  htri_t old = H5Aexists(loc, key);
  if (old > 0 && H5Adelete(loc, key) < 0)
    old = -1;
  if (old < 0)
    return io_fail(w, "replace attribute %s of %s", key, obj);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t attr =
      space < 0 ? H5I_INVALID_HID
                : H5Acreate2(loc, key, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t r = attr < 0 ? -1 : H5Awrite(attr, mtype, buf);
  int rc = r < 0 ? io_fail(w, "write attribute %s of %s", key, obj) : SIM_OK;
  return closed(w, rc, close_id(&attr, H5Aclose) | close_id(&space, H5Sclose));
}

static int put_str_attr(h5w *w, hid_t loc, const char *obj, const char *key,
                        const char *value) {
  return put_attr(w, loc, obj, key, w->str_type, w->str_type, &value);
}

/* units and long_name of a series. */
static int put_series_attrs(h5w *w, hid_t dset, const char *obj,
                            const char *units, const char *long_name) {
  int rc = put_str_attr(w, dset, obj, "units", units);
  return rc != SIM_OK ? rc : put_str_attr(w, dset, obj, "long_name", long_name);
}

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
static int make_parents(h5w *w, const char *name) {
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
    if (e < 0 || (e == 0 && g < 0) || close_id(&g, H5Gclose) < 0)
      return io_fail(w, "create group /%s", buf);
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
  else if (e == 0 && make_parents(w, name) == SIM_OK)
    hg->gid = H5Gcreate2(w->file, name, w->lcpl, w->gcpl, H5P_DEFAULT);
  else if (e == 0)
    return w->base.err.code;
  return hg->gid < 0 ? io_fail(w, "create group /%s", name) : SIM_OK;
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
  int rc =
      *out < 0 ? io_fail(w, "create dataset /%s/%s", g, col->name) : SIM_OK;
  rc = closed(w, rc, close_id(&dcpl, H5Pclose) | close_id(&space, H5Sclose));
  if (rc != SIM_OK)
    return rc;
  char obj[1024];
  snprintf(obj, sizeof obj, "/%s/%s", g, col->name);
  return put_series_attrs(w, *out, obj, col->units, col->long_name);
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
static int time_units_init(h5w *w, const char *origin, sim_error *err) {
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
    return put_str_attr(w, time, obj, "comment", H5W_UNDATED);
  return put_str_attr(w, time, obj, "calendar", H5W_CALENDAR);
}

/* The time dataset of hg, made the scale of dimension 0. */
static int make_time(h5w *w, h5w_group *hg) {
  const tel_column col = {"time", w->time_units,
                          "simulated time at the end of the sample interval"};
  int rc = make_series(w, hg, &col, 1, &hg->time);
  if (rc == SIM_OK)
    rc = put_time_attrs(w, hg->time, hg->decl->name);
  if (rc == SIM_OK && H5DSset_scale(hg->time, "time") < 0)
    rc = io_fail(w, "make /%s/time a dimension scale", hg->decl->name);
  return rc;
}

/* The creation properties of a 1-D dataset of n values written whole (a
 * table column, an axis) in *dcpl: no object times, and for numbers,
 * chunked with a Fletcher32 checksum on each chunk, as the series have.
 * Strings are variable-length, which HDF5 cannot filter: the file's seal
 * covers them (seal.h). Negative on error. */
static herr_t whole_dcpl(hsize_t n, bool numeric, hid_t *dcpl_out) {
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
  herr_t r = space < 0 ? -1 : whole_dcpl(g->width, false, &dcpl);
  if (r >= 0)
    hg->labels = H5Dcreate2(hg->gid, g->axis_name, w->str_type, space,
                            H5P_DEFAULT, dcpl, H5P_DEFAULT);
  r = hg->labels < 0 ? -1
                     : H5Dwrite(hg->labels, w->str_type, H5S_ALL, H5S_ALL,
                                H5P_DEFAULT, g->axis_labels);
  if (r >= 0)
    r = H5DSset_scale(hg->labels, g->axis_name);
  int rc =
      r < 0 ? io_fail(w, "write axis /%s/%s", g->name, g->axis_name) : SIM_OK;
  return closed(w, rc, close_id(&dcpl, H5Pclose) | close_id(&space, H5Sclose));
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
  return r < 0 ? io_fail(w, "attach scales to /%s/%s", g->name,
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
static int group_close(h5w_group *hg) {
  int r = 0;
  for (size_t c = 0; hg->cols != NULL && c < hg->decl->ncolumns; c++)
    r |= close_id(&hg->cols[c], H5Dclose);
  r |= close_id(&hg->labels, H5Dclose) | close_id(&hg->time, H5Dclose);
  return r | close_id(&hg->gid, H5Gclose);
}

static void group_free(h5w_group *hg) {
  tel__group_destroy(hg->decl);
  hg->decl = NULL;
  sim_free(NULL, hg->cols);
  sim_free(NULL, hg->tbuf);
  sim_free(NULL, hg->vbuf);
}

/* The memory of hg: handles (all closed) and row buffers. */
static int group_init(h5w_group *hg, const tel_group *g, size_t chunk_rows) {
  memset(hg, 0, sizeof *hg);
  if ((hg->decl = tel__group_dup(g)) == NULL)
    return SIM_ENOMEM;
  hg->gid = hg->time = hg->labels = H5I_INVALID_HID;
  hg->last_time = -INFINITY;
  plan_chunks(hg, chunk_rows);
  size_t n = g->ncolumns * g->width; /* tel.c bounds n * sizeof(double) */
  hg->cols = sim_calloc(NULL, g->ncolumns, sizeof *hg->cols);
  hg->tbuf = sim_calloc(NULL, hg->block, sizeof *hg->tbuf);
  hg->vbuf = sim_calloc(NULL, hg->block, n * sizeof *hg->vbuf);
  if (hg->cols == NULL || hg->tbuf == NULL || hg->vbuf == NULL) {
    group_free(hg);
    return SIM_ENOMEM;
  }
  for (size_t c = 0; c < g->ncolumns; c++)
    hg->cols[c] = H5I_INVALID_HID;
  return SIM_OK;
}

static const h5w_group *find_group(const h5w *w, const char *name) {
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

static int h5w_open_group(tel_sink *s, const tel_group *g, size_t *id) {
  h5w *w = (h5w *)s;
  int rc = check_state(w, "open_group");
  if (rc != SIM_OK)
    return rc;
  if (find_group(w, g->name) != NULL)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "h5w: %s: group %s declared twice", w->partial,
                         g->name);
  if (reserve_group(w) != SIM_OK)
    return no_memory(w, g->name);
  h5w_group *hg = &w->groups[w->ngroups];
  if (group_init(hg, g, w->chunk_rows) != SIM_OK)
    return no_memory(w, g->name);
  if ((rc = make_objects(w, hg)) != SIM_OK) {
    group_close(hg);
    group_free(hg);
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
  int rc = r < 0 ? io_fail(w, "write rows %llu to %llu of /%s/%s",
                           (unsigned long long)hg->nrows,
                           (unsigned long long)size[0], hg->decl->name, name)
                 : SIM_OK;
  return closed(w, rc,
                close_id(&mspace, H5Sclose) | close_id(&fspace, H5Sclose));
}

/* Room for metadata HDF5 writes later (chunk index, attributes, the
 * closing flush), kept under a file-size limit. */
#define H5W_META_MARGIN ((hsize_t)1 << 20)

/* SIM_OK if bytes more (an upper bound) fit under the process's file-size
 * limit with the margin; else the disk error EFBIG, before HDF5 tries.
 * Why: a write refused past the limit fails HDF5's closing flush too,
 * which HDF5 1.10 does not survive (see divert), and a hard limit cannot
 * be lifted for the close as a soft one can. */
static int check_room(h5w *w, hsize_t bytes) {
  struct rlimit lim;
  hsize_t size = 0;
  if (getrlimit(RLIMIT_FSIZE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY ||
      H5Fget_filesize(w->file, &size) < 0)
    return SIM_OK;
  if (size + bytes + bytes / 64 + H5W_META_MARGIN <= (hsize_t)lim.rlim_cur)
    return SIM_OK;
  w->state = H5W_FAILED;
  return disk_fail(w, EFBIG);
}

/* Writes hg's buffered rows: time first, then each column. */
static int flush_group(h5w *w, h5w_group *hg) {
  const tel_group *g = hg->decl;
  if (hg->nbuf == 0)
    return SIM_OK;
  size_t values = hg->nbuf * (1 + g->ncolumns * g->width);
  if (check_room(w, (hsize_t)values * sizeof(double)) != SIM_OK)
    return w->base.err.code;
  int rank = g->axis_name != NULL ? 2 : 1;
  int rc = write_block(w, hg, hg->time, "time", 1, hg->tbuf);
  size_t stride = hg->block * g->width;
  for (size_t c = 0; c < g->ncolumns && rc == SIM_OK; c++)
    rc = write_block(w, hg, hg->cols[c], g->columns[c].name, rank,
                     hg->vbuf + c * stride);
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

static int h5w_append(tel_sink *s, size_t id, double time_s,
                      const double *values) {
  h5w *w = (h5w *)s;
  int rc = check_state(w, "append");
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
    memcpy(hg->vbuf + (c * hg->block + hg->nbuf) * width, values + c * width,
           width * sizeof *values);
  hg->nbuf++;
  hg->last_time = time_s;
  return hg->nbuf == hg->block ? flush_group(w, hg) : SIM_OK;
}

/* ---- Summary, metadata, texts ----------------------------------------- */

/* The /summary group, created on the first metric; SIM_OK or the error
 * of the sink's state or of HDF5. */
static int open_summary(h5w *w, const char *op) {
  int rc = check_state(w, op);
  if (rc != SIM_OK)
    return rc;
  if (w->summary < 0)
    w->summary =
        H5Gcreate2(w->file, "summary", H5P_DEFAULT, w->gcpl, H5P_DEFAULT);
  return w->summary < 0 ? io_fail(w, "create group /summary") : SIM_OK;
}

static int h5w_put_summary(tel_sink *s, const char *key, double value) {
  h5w *w = (h5w *)s;
  int rc = open_summary(w, "put_summary");
  return rc != SIM_OK ? rc
                      : put_attr(w, w->summary, "/summary", key, H5T_IEEE_F64LE,
                                 H5T_NATIVE_DOUBLE, &value);
}

static int h5w_put_summary_str(tel_sink *s, const char *key,
                               const char *value) {
  h5w *w = (h5w *)s;
  int rc = open_summary(w, "put_summary_str");
  return rc != SIM_OK ? rc
                      : put_str_attr(w, w->summary, "/summary", key, value);
}

static int h5w_put_meta_str(tel_sink *s, const char *key, const char *value) {
  h5w *w = (h5w *)s;
  int rc = check_state(w, "put_meta_str");
  return rc != SIM_OK ? rc : put_str_attr(w, w->file, "/", key, value);
}

/* Integers are stored as 64-bit, whatever their size. */
static int put_int_attr(h5w *w, const char *key, int64_t value) {
  return put_attr(w, w->file, "/", key, H5T_STD_I64LE, H5T_NATIVE_INT64,
                  &value);
}

static int h5w_put_meta_int(tel_sink *s, const char *key, int64_t value) {
  h5w *w = (h5w *)s;
  int rc = check_state(w, "put_meta_int");
  return rc != SIM_OK ? rc : put_int_attr(w, key, value);
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
  int rc = r < 0 ? io_fail(w, "write text /%s", name) : SIM_OK;
  return closed(w, rc,
                close_id(&dset, H5Dclose) | close_id(&dcpl, H5Pclose) |
                    close_id(&space, H5Sclose));
}

/* A name already in the file (a text put before, or a group) is
 * SIM_EINVAL: HDF5 cannot reclaim the space of a replaced dataset, and a
 * group must not be shadowed. */
static int h5w_put_text(tel_sink *s, const char *name, const char *text) {
  h5w *w = (h5w *)s;
  int rc = check_state(w, "put_text");
  if (rc != SIM_OK)
    return rc;
  htri_t e = H5Lexists(w->file, name, H5P_DEFAULT);
  if (e < 0)
    return io_fail(w, "look up /%s", name);
  if (e > 0)
    return sim_error_set(&s->err, SIM_EINVAL, "h5w: %s: /%s already exists",
                         w->partial, name);
  return write_text(w, name, text);
}

/* A group attribute goes on a group this sink declared. */
static int h5w_put_group_attr(tel_sink *s, const char *group, const char *key,
                              double value) {
  h5w *w = (h5w *)s;
  int rc = check_state(w, "put_group_attr");
  if (rc != SIM_OK)
    return rc;
  const h5w_group *hg = find_group(w, group);
  if (hg == NULL)
    return sim_error_set(&s->err, SIM_EINVAL,
                         "h5w: attribute %s on undeclared group %s", key,
                         group);
  char obj[1024];
  snprintf(obj, sizeof obj, "/%s", group);
  return put_attr(w, hg->gid, obj, key, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
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
    return no_memory(w, t->name);
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
  int rc = r < 0 ? io_fail(w, "write the row axis %s", obj) : SIM_OK;
  if (rc == SIM_OK)
    rc = put_series_attrs(w, *out, obj, "1", "row number");
  return closed(w, rc, close_id(&dcpl, H5Pclose) | close_id(&space, H5Sclose));
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
  herr_t r = space < 0 ? -1 : whole_dcpl(nrows, c->values != NULL, &dcpl);
  if (r >= 0 && (dset = H5Dcreate2(gid, c->name, type, space, H5P_DEFAULT, dcpl,
                                   H5P_DEFAULT)) < 0)
    r = -1;
  if (r >= 0 && nrows > 0)
    r = H5Dwrite(dset, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
  char obj[1024];
  snprintf(obj, sizeof obj, "/%s/%s", table, c->name);
  int rc = r < 0 ? io_fail(w, "write %s", obj) : SIM_OK;
  if (rc == SIM_OK)
    rc = put_series_attrs(w, dset, obj, c->values != NULL ? c->units : "",
                          c->long_name);
  if (rc == SIM_OK && axis >= 0 && H5DSattach_scale(dset, axis, 0) < 0)
    rc = io_fail(w, "attach the row axis to %s", obj);
  return closed(w, rc,
                close_id(&dset, H5Dclose) | close_id(&dcpl, H5Pclose) |
                    close_id(&space, H5Sclose));
}

static int h5w_put_table(tel_sink *s, const tel_table *t) {
  h5w *w = (h5w *)s;
  int rc = check_state(w, "put_table");
  if (rc != SIM_OK)
    return rc;
  htri_t e = H5Lexists(w->file, t->name, H5P_DEFAULT);
  if (e < 0)
    return io_fail(w, "look up /%s", t->name);
  if (e > 0)
    return sim_error_set(&s->err, SIM_EINVAL, "h5w: %s: /%s already exists",
                         w->partial, t->name);
  rc = make_parents(w, t->name);
  if (rc != SIM_OK)
    return rc;
  hid_t gid = H5Gcreate2(w->file, t->name, w->lcpl, w->gcpl, H5P_DEFAULT);
  if (gid < 0)
    return io_fail(w, "create group /%s", t->name);
  hid_t axis = H5I_INVALID_HID;
  rc = make_row_axis(w, gid, t, &axis);
  for (size_t c = 0; c < t->ncolumns && rc == SIM_OK; c++)
    rc = write_table_column(w, gid, t->name, &t->columns[c], t->nrows, axis);
  return closed(w, rc, close_id(&axis, H5Dclose) | close_id(&gid, H5Gclose));
}

/* Points the failed file's descriptor at an anonymous file in memory,
 * and lifts a soft file-size limit, before the close. Why: a failed
 * H5Fclose of HDF5 1.10 leaves the file half torn down, and the library
 * then crashes closing it again at exit (H5F__close_cb). With the disk
 * out of the way the closing flush succeeds; the partial file is garbage
 * and removed anyway. The memory holds HDF5's last metadata only: the
 * file is sparse. A hard file-size limit below the file's size is
 * beyond this; then HDF5 may still fail the close. */
static void divert(h5w *w, struct rlimit *saved) {
  void *handle = NULL;
  if (w->file < 0 || H5Fget_vfd_handle(w->file, H5P_DEFAULT, &handle) < 0 ||
      handle == NULL)
    return;
  struct rlimit lim;
  if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    *saved = lim;
    struct rlimit up = {RLIM_INFINITY, RLIM_INFINITY};
    if (setrlimit(RLIMIT_FSIZE, &up) != 0) {
      lim.rlim_cur = lim.rlim_max;
      setrlimit(RLIMIT_FSIZE, &lim);
    }
  }
  int mem = memfd_create("aifsim-discard", MFD_CLOEXEC);
  if (mem >= 0) {
    dup2(mem, *(int *)handle);
    close(mem);
  }
}

/* ---- Commit and destroy ------------------------------------------------ */

/* Closes every handle of w; -1 if any close failed. */
static int close_all(h5w *w) {
  int r = 0;
  for (size_t i = 0; i < w->ngroups; i++)
    r |= group_close(&w->groups[i]);
  r |= close_id(&w->summary, H5Gclose);
  r |= close_id(&w->lcpl, H5Pclose) | close_id(&w->gcpl, H5Pclose);
  r |= close_id(&w->dapl, H5Pclose) | close_id(&w->str_type, H5Tclose);
  return r | close_id(&w->file, H5Fclose);
}

/* Writes what is buffered, sets the root attribute complete (1 for a
 * finished run, 0 for one kept unfinished), closes the file and seals it
 * (seal.h). */
static int finish_file(h5w *w, int64_t complete) {
  int rc = check_room(w, 0);
  sim_error e = {0};
  for (size_t i = 0; i < w->ngroups && rc == SIM_OK; i++)
    rc = flush_group(w, &w->groups[i]);
  if (rc == SIM_OK)
    rc = put_int_attr(w, "complete", complete);
  if (rc == SIM_OK && close_all(w) < 0)
    rc = io_fail(w, "close the file");
  if (rc == SIM_OK && seal_write(w->partial, &e) != SIM_OK) {
    w->state = H5W_FAILED;
    rc = sim_error_set(&w->base.err, SIM_EIO, "h5w: %s", e.msg);
  }
  return rc;
}

/* The rename is the commit point: rename(2) replaces PATH atomically, so
 * a reader sees the old complete file or the new one, never half of it.
 * Only the holder of PATH.lock renames onto PATH. */
static int h5w_commit(tel_sink *s) {
  h5w *w = (h5w *)s;
  int rc = check_state(w, "commit");
  if (rc == SIM_OK)
    rc = finish_file(w, 1);
  if (rc != SIM_OK)
    return rc;
  if (rename(w->partial, w->path) != 0) {
    w->state = H5W_FAILED;
    return sim_error_set(&s->err, SIM_EIO, "h5w: cannot rename %s to %s: %s",
                         w->partial, w->path, strerror(errno));
  }
  w->state = H5W_COMMITTED;
  wlock_release(&w->lock);
  return SIM_OK;
}

/* A sink destroyed before its commit: its partial file is removed, or,
 * when the sink was made to keep it and has written nothing it could not
 * finish, kept readable with complete=0. Whether it was kept. */
static bool keep_unfinished(h5w *w) {
  if (!w->keep_partial || !w->created || w->state != H5W_OPEN)
    return false;
  return finish_file(w, 0) == SIM_OK;
}

static void h5w_destroy(tel_sink *s) {
  h5w *w = (h5w *)s;
  struct rlimit saved = {RLIM_INFINITY, RLIM_INFINITY};
  bool kept = w->state != H5W_COMMITTED && keep_unfinished(w);
  if (w->state == H5W_FAILED)
    divert(w, &saved); /* and the limit back after the close */
  close_all(w);
  if (saved.rlim_cur != RLIM_INFINITY)
    setrlimit(RLIMIT_FSIZE, &saved);
  H5Eclear2(H5E_DEFAULT);
  if (w->created && w->state != H5W_COMMITTED && !kept)
    unlink(w->partial);
  wlock_release(&w->lock); /* after the partial is gone or whole */
  for (size_t i = 0; i < w->ngroups; i++)
    group_free(&w->groups[i]);
  sim_free(NULL, w->groups);
  sim_free(NULL, w->partial);
  sim_free(NULL, w->path);
  sim_free(NULL, w);
}

static const tel_sink_ops h5w_ops = {
    .open_group = h5w_open_group,
    .append = h5w_append,
    .put_summary = h5w_put_summary,
    .put_summary_str = h5w_put_summary_str,
    .put_meta_str = h5w_put_meta_str,
    .put_meta_int = h5w_put_meta_int,
    .put_text = h5w_put_text,
    .put_group_attr = h5w_put_group_attr,
    .put_table = h5w_put_table,
    .commit = h5w_commit,
    .destroy = h5w_destroy,
};

/* ---- Create ------------------------------------------------------------ */

/* Chunk rows and deflate level from opts, checked. */
static int read_options(const h5w_options *opts, size_t *chunk_rows,
                        int *deflate, sim_error *err) {
  h5w_options o = opts != NULL ? *opts : (h5w_options){0, 0, NULL, 0};
  if (o.deflate_level < -1 || o.deflate_level > 9)
    return sim_error_set(err, SIM_EINVAL,
                         "h5w: deflate level %d is not -1 (none) or 0-9",
                         o.deflate_level);
  *chunk_rows = o.chunk_rows > 0 ? o.chunk_rows : H5W_CHUNK_ROWS;
  *deflate = o.deflate_level == 0  ? H5W_DEFLATE
             : o.deflate_level < 0 ? 0
                                   : o.deflate_level;
  return SIM_OK;
}

/* Whether this HDF5 can compress with deflate. Without it the file is
 * written uncompressed rather than not at all: size is not correctness. */
static int deflate_usable(void) {
  unsigned config = 0;
  if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0 ||
      H5Zget_filter_info(H5Z_FILTER_DEFLATE, &config) < 0)
    return 0;
  return (config & H5Z_FILTER_CONFIG_ENCODE_ENABLED) != 0;
}

/* The property lists and string type every object shares. */
static int make_props(h5w *w) {
  w->lcpl = H5Pcreate(H5P_LINK_CREATE);
  w->gcpl = H5Pcreate(H5P_GROUP_CREATE);
  w->dapl = H5Pcreate(H5P_DATASET_ACCESS);
  w->str_type = H5Tcopy(H5T_C_S1);
  herr_t r = -1;
  if (w->lcpl >= 0 && w->gcpl >= 0 && w->dapl >= 0 && w->str_type >= 0)
    r = H5Pset_create_intermediate_group(w->lcpl, 1);
  if (r >= 0)
    r = H5Pset_obj_track_times(w->gcpl, 0);
  /* Each chunk is written whole and once, so HDF5's chunk cache would
   * only hold a second copy of what the row buffers already hold. */
  if (r >= 0)
    r = H5Pset_chunk_cache(w->dapl, H5D_CHUNK_CACHE_NSLOTS_DEFAULT, 0,
                           H5D_CHUNK_CACHE_W0_DEFAULT);
  if (r >= 0)
    r = H5Tset_size(w->str_type, H5T_VARIABLE);
  if (r >= 0)
    r = H5Tset_cset(w->str_type, H5T_CSET_UTF8);
  return r < 0 ? io_fail(w, "set up property lists") : SIM_OK;
}

/* The file's properties: no object times on the root group; HDF5 1.10's
 * file format (libver v110), whose superblock, object headers and indexes
 * carry checksums; and closing that fails while an object is open
 * ("semi"), so a leaked handle shows up as a failed commit instead of a
 * file left open. (The seal goes after the file: seal.h.) */
static herr_t file_props(hid_t fcpl, hid_t fapl) {
  herr_t r = fcpl < 0 || fapl < 0 ? -1 : H5Pset_obj_track_times(fcpl, 0);
  if (r >= 0)
    r = H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110);
  if (r >= 0)
    r = H5Pset_fclose_degree(fapl, H5F_CLOSE_SEMI);
  return r;
}

/* Creates PATH.partial, which the lock makes ours: a partial file left by
 * a killed run is removed first, and the new one created exclusively, so
 * that nothing another process may still hold open is ever truncated. */
static int make_file(h5w *w) {
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  herr_t r = file_props(fcpl, fapl);
  if (unlink(w->partial) != 0 && errno != ENOENT)
    r = -1;
  if (r >= 0)
    w->file = H5Fcreate(w->partial, H5F_ACC_EXCL, fcpl, fapl);
  w->created = w->file >= 0;
  int rc = w->file < 0 ? io_fail(w, "create the file") : SIM_OK;
  return closed(w, rc, close_id(&fcpl, H5Pclose) | close_id(&fapl, H5Pclose));
}

/* The sink with no handles open and its two names. */
static h5w *h5w_alloc(const char *path) {
  static const char suffix[] = ".partial";
  size_t n = strlen(path);
  h5w *w = sim_calloc(NULL, 1, sizeof *w);
  if (w == NULL)
    return NULL;
  w->base.ops = &h5w_ops;
  w->file = w->summary = w->str_type = H5I_INVALID_HID;
  w->lcpl = w->gcpl = w->dapl = H5I_INVALID_HID;
  w->path = sim_alloc(NULL, n + 1);
  w->partial = sim_alloc(NULL, n + sizeof suffix);
  if (w->path == NULL || w->partial == NULL) {
    h5w_destroy(&w->base);
    return NULL;
  }
  memcpy(w->path, path, n + 1);
  memcpy(w->partial, path, n);
  memcpy(w->partial + n, suffix, sizeof suffix);
  return w;
}

tel_sink *h5w_create(const char *path, const h5w_options *opts,
                     sim_error *err) {
  size_t chunk_rows = 0;
  int deflate = 0;
  sim_error_clear(err);
  /* HDF5 prints its error stack to stderr by default; a library must not
   * print, and io_fail reads the stack into the message instead. */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if (path == NULL || path[0] == '\0') {
    sim_error_set(err, SIM_EINVAL, "h5w: no output path");
    return NULL;
  }
  if (read_options(opts, &chunk_rows, &deflate, err) != SIM_OK)
    return NULL;
  h5w *w = h5w_alloc(path);
  if (w == NULL) {
    sim_error_set(err, SIM_ENOMEM, "h5w: %s: %s", path,
                  sim_strerror(SIM_ENOMEM));
    return NULL;
  }
  w->chunk_rows = chunk_rows;
  w->deflate = deflate_usable() ? deflate : 0;
  w->keep_partial = opts != NULL && opts->keep_partial;
  if (time_units_init(w, opts != NULL ? opts->time_origin : NULL, err) !=
      SIM_OK) {
    h5w_destroy(&w->base);
    return NULL;
  }
  if (wlock_take(&w->lock, path, &w->base.err) != SIM_OK ||
      make_props(w) != SIM_OK || make_file(w) != SIM_OK) {
    if (err != NULL)
      *err = w->base.err;
    h5w_destroy(&w->base);
    return NULL;
  }
  return &w->base;
}
