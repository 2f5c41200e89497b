/* test_record_run.h - what the HDF5 writer's tests share: the run every
 * layout test reads, how it is written, and the readers that check it
 * with the HDF5 C API (test_record.c, test_record_write.c,
 * test_record_deflate.c). Header only. */
#ifndef TEST_RECORD_RUN_H
#define TEST_RECORD_RUN_H

#include "test_util.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <hdf5.h>
#include <hdf5_hl.h>

#include "h5read.h"
#include "record.h"
#include "tel.h"

#define NROWS 10500 /* ten full chunks of CHUNK rows and a partial one */
#define CHUNK 1000
#define WIDTH 3

/* ---- The run every layout test reads ----------------------------------- */

static const tel_metric m_energy = {"energy_mwh", "MWh", "Facility energy",
                                    "Energy"};
static const tel_metric m_pue = {"mean_pue", "1", "PUE", "Energy"};

static const tel_column facility_cols[] = {
    {"power_w", "W", "facility power drawn from the feed"},
    {"pue", "1", "power usage effectiveness"},
};
static const tel_group facility = {"facility", facility_cols, 2, 1, NULL, NULL};

static const tel_column rack_cols[] = {
    {"power_w", "W", "rack power"},
    {"inlet_c", "degC", "rack inlet temperature"},
};
static const char *const rack_labels[WIDTH] = {"r0", "r1", "r2-\xc3\xbc"};
static const tel_group racks = {"racks", rack_cols, 2,
                                WIDTH,   "rack",    rack_labels};

static const tel_column chat_cols[] = {
    {"tokens_per_s", "1/s", "tokens served per second"},
};
static const tel_group chat = {"services/chat", chat_cols, 1, 1, NULL, NULL};

static const char scenario_text[] =
    "name: quickstart\nseed: 42\npower:\n  cap: 18 MW # \xe2\x80\x94 UTF-8\n";

/* Value of column c at row i and position j; exact in a double. bump
 * changes one value only, to make two runs differ. */
static const double job_gpus[] = {8, 72};
static const char *const job_names[] = {"pretrain", "chat-\xc3\xbc"};
static const tel_table_column job_cols[] = {
    {"gpus", "1", "GPUs held", job_gpus, NULL},
    {"name", NULL, "job name", NULL, job_names},
};
static const tel_table jobs = {"jobs", job_cols, 2, 2, "job"};

static inline double value(int group, size_t c, size_t i, size_t j,
                           double bump) {
  double v =
      1e6 * group + 1e5 * (double)c + 4.0 * (double)i + 0.125 * (double)j;
  return i == 777 && c == 0 && j == 0 ? v + bump : v;
}

static inline double time_of(size_t i) { return 10.0 * (double)(i + 1); }

#define ORIGIN "2023-07-01T00:00:00Z"
#define DATED "seconds since " ORIGIN
static const h5w_options layout_opts = {CHUNK, 4, ORIGIN, 0};

/* Path of a test file, removed (with its partial file) beforehand. */
static inline void fresh_path(const char *name, char *path, char *partial) {
  snprintf(path, 4096, "%s", test_out_path(name));
  snprintf(partial, 4200, "%s.partial", path);
  unlink(path);
  unlink(partial);
}

static inline int file_exists(const char *path) {
  return access(path, F_OK) == 0;
}

static inline void append_rows(tel_sink *s, const size_t id[3], size_t rows,
                               double bump) {
  double v[2 * WIDTH];
  for (size_t i = 0; i < rows; i++) {
    for (size_t c = 0; c < 2; c++)
      v[c] = value(0, c, i, 0, bump);
    assert_int_equal(tel_append(s, id[0], time_of(i), v), SIM_OK);
    for (size_t c = 0; c < 2; c++)
      for (size_t j = 0; j < WIDTH; j++)
        v[c * WIDTH + j] = value(1, c, i, j, bump);
    assert_int_equal(tel_append(s, id[1], time_of(i), v), SIM_OK);
    v[0] = value(2, 0, i, 0, bump);
    if (i % 3 == 0)
      assert_int_equal(tel_append(s, id[2], time_of(i), v), SIM_OK);
  }
}

/* The standard run, written but not committed. */
static inline tel_sink *fill_run(const char *path, size_t rows, double bump) {
  sim_error err;
  tel_sink *s = h5w_create(path, &layout_opts, &err);
  if (s == NULL)
    fail_msg("h5w_create: %s", err.msg);
  size_t id[3];
  assert_int_equal(tel_open_group(s, &facility, &id[0]), SIM_OK);
  assert_int_equal(tel_open_group(s, &racks, &id[1]), SIM_OK);
  assert_int_equal(tel_open_group(s, &chat, &id[2]), SIM_OK);
  append_rows(s, id, rows, bump);
  assert_int_equal(tel_put_meta_str(s, "aifsim_version", "0.1.0"), SIM_OK);
  assert_int_equal(tel_put_meta_str(s, "scenario_name", "quick"), SIM_OK);
  assert_int_equal(tel_put_meta_int(s, "seed", -42), SIM_OK);
  assert_int_equal(tel_put_meta_int(s, "seed", 42), SIM_OK); /* replaced */
  assert_int_equal(tel_put_summary(s, &m_energy, 12.5), SIM_OK);
  assert_int_equal(tel_put_summary(s, &m_pue, 1.25), SIM_OK);
  assert_int_equal(tel_put_summary(s, &m_energy, 13.5), SIM_OK);
  assert_int_equal(tel_put_text(s, "scenario", scenario_text), SIM_OK);
  assert_int_equal(tel_put_table(s, &jobs), SIM_OK);
  assert_int_equal(tel_put_group_attr(s, "services/chat", "requests", 9),
                   SIM_OK);
  return s;
}

static inline void write_run(const char *path, size_t rows, double bump) {
  tel_sink *s = fill_run(path, rows, bump);
  if (tel_commit(s) != SIM_OK)
    fail_msg("commit: %s", tel_errmsg(s));
  tel_destroy(s);
}

/* No HDF5 handle may outlive a test: neither the writer's nor ours. The
 * leftovers are closed before failing, so one failure does not cascade
 * into every later test. */
static inline void assert_no_open_ids(void) {
  ssize_t n = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  if (n == 0)
    return;
  hid_t ids[64];
  ssize_t got = H5Fget_obj_ids(H5F_OBJ_ALL, H5F_OBJ_ALL, 64, ids);
  for (ssize_t i = 0; i < got; i++) {
    H5I_type_t type = H5Iget_type(ids[i]);
    if (type == H5I_ATTR)
      H5Aclose(ids[i]);
    else if (type != H5I_FILE)
      H5Oclose(ids[i]);
  }
  for (ssize_t i = 0; i < got; i++)
    if (H5Iget_type(ids[i]) == H5I_FILE)
      H5Fclose(ids[i]);
  fail_msg("%zd HDF5 objects still open", n);
}
/* ---- Reading back ------------------------------------------------------ */

static inline hid_t open_ro(const char *path) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0)
    fail_msg("cannot open %s", path);
  return f;
}

static inline hid_t open_dset(hid_t f, const char *name) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  if (d < 0)
    fail_msg("no dataset %s", name);
  return d;
}

/* The shape of a dataset: returns its rank. */
static inline int get_dims(hid_t d, hsize_t dims[2], hsize_t maxdims[2]) {
  hid_t space = H5Dget_space(d);
  int rank = H5Sget_simple_extent_ndims(space);
  assert_in_range(rank, 0, 2);
  H5Sget_simple_extent_dims(space, dims, maxdims);
  H5Sclose(space);
  return rank;
}

/* All of a float64 dataset, in a buffer the caller frees. */
static inline double *read_all(hid_t d, size_t n) {
  double *buf = malloc((n != 0 ? n : 1) * sizeof *buf);
  assert_non_null(buf);
  assert_true(
      H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
  return buf;
}

static inline hid_t utf8_type(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

/* Checks that dataset d holds the n UTF-8 strings of want. */
static inline void assert_texts(hid_t d, const char *const *want, size_t n) {
  hid_t mtype = utf8_type();
  char **got = calloc(n > 0 ? n : 1, sizeof *got);
  assert_true(H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
  for (size_t i = 0; i < n; i++)
    assert_string_equal(got[i], want[i]);
  hid_t space = H5Dget_space(d);
  H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, got);
  H5Sclose(space);
  H5Tclose(mtype);
  free(got);
}

/* Checks that attribute key of obj is a UTF-8 variable-length string
 * equal to want. */
static inline void assert_str_attr(hid_t f, const char *obj, const char *key,
                                   const char *want) {
  hid_t a = H5Aopen_by_name(f, obj, key, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0)
    fail_msg("no attribute %s of %s", key, obj);
  hid_t ftype = H5Aget_type(a);
  assert_true(H5Tis_variable_str(ftype) > 0);
  assert_int_equal(H5Tget_cset(ftype), H5T_CSET_UTF8);
  hid_t mtype = utf8_type();
  char *got = NULL;
  assert_true(H5Aread(a, mtype, &got) >= 0);
  assert_non_null(got);
  if (strcmp(got, want) != 0)
    fail_msg("%s@%s = \"%s\", want \"%s\"", obj, key, got, want);
  H5free_memory(got);
  H5Tclose(mtype);
  H5Tclose(ftype);
  H5Aclose(a);
}

static inline double num_attr(hid_t f, const char *obj, const char *key) {
  double v = -1;
  hid_t a = H5Aopen_by_name(f, obj, key, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0)
    fail_msg("no attribute %s of %s", key, obj);
  assert_true(H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0);
  H5Aclose(a);
  return v;
}

static inline int64_t int_attr(hid_t f, const char *obj, const char *key) {
  int64_t v = -1;
  hid_t a = H5Aopen_by_name(f, obj, key, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0)
    fail_msg("no attribute %s of %s", key, obj);
  hid_t t = H5Aget_type(a);
  assert_int_equal(H5Tget_class(t), H5T_INTEGER);
  assert_true(H5Aread(a, H5T_NATIVE_INT64, &v) >= 0);
  H5Tclose(t);
  H5Aclose(a);
  return v;
}

/* Lowers the file-size limit to 1 MB + 200 kB, the recorder's seam for a
 * disk that fills up (SIGXFSZ ignored, so a refused write is an error,
 * not a signal); false where the hard limit is lower (skip the test). */
static inline bool limit_file_size(struct rlimit *old) {
  assert_int_equal(getrlimit(RLIMIT_FSIZE, old), 0);
  struct rlimit lim = *old;
  lim.rlim_cur = ((rlim_t)1 << 20) + 200000;
  if (old->rlim_max != RLIM_INFINITY && old->rlim_max < lim.rlim_cur)
    return false;
  signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
  return true;
}

/* A sink failed by the limit: commit refused, and destroy leaves neither
 * file nor an open HDF5 handle; the limit put back. */
static inline void assert_failed_leaves_nothing(tel_sink *s,
                                                const struct rlimit *old,
                                                const char *path,
                                                const char *partial) {
  assert_int_equal(tel_commit(s), SIM_EIO);
  tel_destroy(s);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, old), 0);
  assert_false(file_exists(partial));
  assert_false(file_exists(path));
  assert_no_open_ids();
}

#endif
