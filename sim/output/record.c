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
 * however long the run. A full block is filtered on a worker thread and
 * stored in the same order and with the same bytes (record_deflate.c);
 * HDF5 is only called from the caller's thread. Invariants: rows in the file
 * (nrows) are a multiple of block until commit writes the rest; nbuf < block
 * between calls; every hid_t is open or H5I_INVALID_HID.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5_hl.h>

#include "alloc.h"
#include "h5room.h"
#include "record_internal.h"
#include "seal.h"
#include "vec.h"

static const tel_sink_ops h5w_ops;

/* Points the failed file's descriptor at an anonymous file in memory,
 * and lifts a soft file-size limit, before the close. Why: a failed
 * H5Fclose of HDF5 1.10 leaves the file half torn down, and the library
 * then crashes closing it again at exit (H5F__close_cb). With the disk
 * out of the way the closing flush succeeds; the partial file is garbage
 * and removed anyway. The memory holds HDF5's last metadata only: the
 * file is sparse. A hard file-size limit below the file's size is
 * beyond this; then HDF5 may still fail the close. */
void h5w__divert(h5w *w, struct rlimit *saved) {
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
    r |= h5w__group_close(&w->groups[i]);
  r |= h5w__close_id(&w->summary, H5Gclose);
  r |= h5w__close_id(&w->lcpl, H5Pclose) | h5w__close_id(&w->gcpl, H5Pclose);
  r |=
      h5w__close_id(&w->dapl, H5Pclose) | h5w__close_id(&w->str_type, H5Tclose);
  return r | h5w__close_id(&w->file, H5Fclose);
}

/* Writes what is buffered, sets the root attribute complete (1 for a
 * finished run, 0 for one kept unfinished), closes the file and seals it
 * (seal.h). */
static int finish_file(h5w *w, int64_t complete) {
  int rc = h5w__drain(w);
  if (rc == SIM_OK)
    rc = h5w__check_room(w, 0);
  sim_error e = {0};
  for (size_t i = 0; i < w->ngroups && rc == SIM_OK; i++)
    rc = h5w__flush_group(w, &w->groups[i]);
  /* The last blocks, filtered by both threads meanwhile, written in turn */
  if (rc == SIM_OK)
    rc = h5w__drain(w);
  if (rc == SIM_OK)
    rc = h5w__put_int_attr(w, "complete", complete);
  if (rc == SIM_OK && close_all(w) < 0)
    rc = h5w__io_fail(w, "close the file");
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
  int rc = h5w__ready(w, "commit");
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
  if (!w->keep_partial || !w->created || w->state != H5W_OPEN ||
      h5w__hdf5_spent())
    return false;
  return finish_file(w, 0) == SIM_OK;
}

static void h5w_destroy(tel_sink *s) {
  h5w *w = (h5w *)s;
  /* A run ended by a failed allocation anywhere (errno, as the failure
   * left it): HDF5 may have had one fail inside it and gone on, and
   * closing its datasets then crashed (record_fail.c's hdf5_spent) */
  if (w->state != H5W_COMMITTED && errno == ENOMEM)
    h5w__hdf5_spend();
  struct rlimit saved = {RLIM_INFINITY, RLIM_INFINITY};
  bool kept = w->state != H5W_COMMITTED && keep_unfinished(w);
  h5w__pipe_stop(w); /* joined before any buffer goes */
  if (w->state == H5W_FAILED)
    h5w__divert(w, &saved); /* and the limit back after the close */
  close_all(w);
  if (saved.rlim_cur != RLIM_INFINITY)
    setrlimit(RLIMIT_FSIZE, &saved);
  H5Eclear2(H5E_DEFAULT);
  if (w->created && w->state != H5W_COMMITTED && !kept)
    unlink(w->partial);
  wlock_release(&w->lock); /* after the partial is gone or whole */
  for (size_t i = 0; i < w->ngroups; i++)
    h5w__group_free(&w->groups[i]);
  sim_free(NULL, w->groups);
  sim_free(NULL, w->partial);
  sim_free(NULL, w->path);
  sim_free(NULL, w);
}

static const tel_sink_ops h5w_ops = {
    .open_group = h5w__open_group,
    .append = h5w__append,
    .put_summary = h5w__put_summary,
    .put_summary_str = h5w__put_summary_str,
    .put_meta_str = h5w__put_meta_str,
    .put_meta_int = h5w__put_meta_int,
    .put_text = h5w__put_text,
    .put_group_attr = h5w__put_group_attr,
    .put_table = h5w__put_table,
    .commit = h5w_commit,
    .destroy = h5w_destroy,
};

void h5w__set_worker(tel_sink *s, int on) { ((h5w *)s)->worker = on; }

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
  return r < 0 ? h5w__io_fail(w, "set up property lists") : SIM_OK;
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
  if (!h5_room_to_create())
    return h5w__no_memory(w, "cannot create the file");
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  herr_t r = file_props(fcpl, fapl);
  /* Not after a failed step: its errno (malloc's ENOMEM) is the cause
   * h5w__io_fail reports, and a file not there would turn it to ENOENT. */
  if (r >= 0 && unlink(w->partial) != 0 && errno != ENOENT)
    r = -1;
  if (r >= 0)
    w->file = H5Fcreate(w->partial, H5F_ACC_EXCL, fcpl, fapl);
  w->created = w->file >= 0;
  /* H5Fcreate can fail (out of memory) after making the file: under the
   * lock, with the old one removed above, what is there is its */
  if (r >= 0 && !w->created) {
    int cause = errno; /* h5w__io_fail reads malloc's ENOMEM from it, */
    unlink(w->partial); /* which a file not made would turn to ENOENT */
    errno = cause;
  }
  int rc = w->file < 0 ? h5w__io_fail(w, "create the file") : SIM_OK;
  return h5w__closed(
      w, rc, h5w__close_id(&fcpl, H5Pclose) | h5w__close_id(&fapl, H5Pclose));
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

/* HDF5 1.10 cleans up at exit (an atexit of its own). After an
 * allocation failed inside the library, that cleanup can free a property
 * class twice and abort the process (exit 134: test_reliability.sh's
 * out-of-memory scan met it) once the run had already failed cleanly with
 * exit 1. The writer and the readers (h5read.c) close every file before
 * they return, so the cleanup has nothing to flush, and the library's
 * memory goes back with the process. H5dont_atexit works only before the
 * library starts, hence a constructor. */
__attribute__((constructor)) static void h5_no_exit_cleanup(void) {
  (void)H5dont_atexit();
}

/* Whether a writer of path may be made: a path, and HDF5 not out of
 * memory earlier in the process (record_fail.c's hdf5_spent). */
static bool may_create(const char *path, sim_error *err) {
  if (path == NULL || path[0] == '\0') {
    sim_error_set(err, SIM_EINVAL, "h5w: no output path");
    return false;
  }
  if (h5w__hdf5_spent()) {
    sim_error_set(err, SIM_ENOMEM,
                  "h5w: %s: HDF5 ran out of memory earlier in this process: "
                  "out of memory",
                  path);
    return false;
  }
  return true;
}

tel_sink *h5w_create(const char *path, const h5w_options *opts,
                     sim_error *err) {
  size_t chunk_rows = 0;
  int deflate = 0;
  sim_error_clear(err);
  /* HDF5 prints its error stack to stderr by default; a library must not
   * print, and h5w__io_fail reads the stack into the message instead. */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if (!may_create(path, err) ||
      read_options(opts, &chunk_rows, &deflate, err) != SIM_OK)
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
  w->worker = 1;
  if (h5w__time_units_init(w, opts != NULL ? opts->time_origin : NULL, err) !=
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
