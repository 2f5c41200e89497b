/* record_fail.c - the HDF5 writer's errors (a message naming the file
 * and HDF5's innermost reason; a full disk said as such), its handles
 * (closed once, failures counted) and its scalar attributes. */
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

/* ---- Errors and handles ------------------------------------------------ */

/* Set once HDF5 failed for want of memory. HDF5 1.10's state after an
 * allocation failed inside it cannot be trusted: closing a dataset of the
 * failed file then crashed in the library's list of open objects
 * (H5Dclose -> H5FO_top_decr -> H5SL_search), seen with every allocation
 * failing from the Nth on over quickstart's run. After that the process
 * makes no HDF5 call on its files: the handles go with the process, the
 * partial file is removed by unlink, and no writer is made again. */
static bool hdf5_spent;

bool h5w__hdf5_spent(void) { return hdf5_spent; }

void h5w__hdf5_spend(void) { hdf5_spent = true; }

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
int h5w__disk_fail(h5w *w, int e) {
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
int h5w__io_fail(h5w *w, const char *fmt, ...) {
  char what[512], detail[H5W_DETAIL] = "";
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  /* errno first: the walks below may set it. HDF5's high-level calls
   * (H5DSattach_scale) and some of its inner ones report an allocation
   * that failed under their own error ("cannot attach scales"), the
   * resource error not on the stack; malloc's ENOMEM is the cause. */
  int oom = errno == ENOMEM;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, detail);
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, memory_error, &oom);
  H5Eclear2(H5E_DEFAULT);
  w->state = H5W_FAILED;
  if (oom)
    h5w__hdf5_spend();
  if (oom) /* the run failed, not its input: SIM_ENOMEM, exit 1 */
    return sim_error_set(&w->base.err, SIM_ENOMEM,
                         "h5w: %s: cannot %s: out of memory", w->partial, what);
  int e = driver_errno(detail);
  if (e == ENOSPC || e == EFBIG || e == EDQUOT)
    return h5w__disk_fail(w, e);
  detail[strcspn(detail, "\n")] = '\0';
  char *t = strstr(detail, ": time =");
  if (t != NULL)
    *t = '\0';
  return sim_error_set(&w->base.err, SIM_EIO, "h5w: %s: cannot %s%s%s",
                       w->partial, what, detail[0] != '\0' ? ": " : "", detail);
}

int h5w__no_memory(h5w *w, const char *what) {
  return sim_error_set(&w->base.err, SIM_ENOMEM, "h5w: %s: %s: %s", w->partial,
                       what, sim_strerror(SIM_ENOMEM));
}

/* Closes *id if open and marks it h5w__closed. Returns 0, or -1 if the close
 * failed (the handle is forgotten either way: retrying would not help). */
int h5w__close_id(hid_t *id, close_fn fn) {
  herr_t r = *id >= 0 && !hdf5_spent ? fn(*id) : 0;
  *id = H5I_INVALID_HID;
  return r < 0 ? -1 : 0;
}

/* The end of a step with temporary handles: rc of the step (reported by
 * h5w__io_fail before the closes, which clear HDF5's error stack), else the
 * failure of a close (closes, the OR of h5w__close_id results). */
int h5w__closed(h5w *w, int rc, int closes) {
  if (rc != SIM_OK || closes == 0)
    return rc;
  return h5w__io_fail(w, "close a temporary handle");
}

/* SIM_OK while open; the sticky code once failed; SIM_ESTATE after
 * commit. */
int h5w__check_state(h5w *w, const char *what) {
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
int h5w__put_attr(h5w *w,          /* the sink, for messages */
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
    return h5w__io_fail(w, "replace attribute %s of %s", key, obj);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t attr =
      space < 0 ? H5I_INVALID_HID
                : H5Acreate2(loc, key, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t r = attr < 0 ? -1 : H5Awrite(attr, mtype, buf);
  int rc =
      r < 0 ? h5w__io_fail(w, "write attribute %s of %s", key, obj) : SIM_OK;
  return h5w__closed(
      w, rc, h5w__close_id(&attr, H5Aclose) | h5w__close_id(&space, H5Sclose));
}

int h5w__put_str_attr(h5w *w, hid_t loc, const char *obj, const char *key,
                      const char *value) {
  return h5w__put_attr(w, loc, obj, key, w->str_type, w->str_type, &value);
}

/* units and long_name of a series. */
int h5w__put_series_attrs(h5w *w, hid_t dset, const char *obj,
                          const char *units, const char *long_name) {
  int rc = h5w__put_str_attr(w, dset, obj, "units", units);
  return rc != SIM_OK ? rc
                      : h5w__put_str_attr(w, dset, obj, "long_name", long_name);
}
