/* test_record.c - the HDF5 writer (record.c), read back with the HDF5 C
 * API: layout, values, attributes, dimension scales, summary, metadata,
 * texts, the partial file and its commit, byte-identical output, errors;
 * and the same file read back through h5read.h's group readers (export). */
#include "test_util.h"

#include <signal.h>
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

static double value(int group, size_t c, size_t i, size_t j, double bump) {
  double v =
      1e6 * group + 1e5 * (double)c + 4.0 * (double)i + 0.125 * (double)j;
  return i == 777 && c == 0 && j == 0 ? v + bump : v;
}

static double time_of(size_t i) { return 10.0 * (double)(i + 1); }

#define ORIGIN "2023-07-01T00:00:00Z"
#define DATED "seconds since " ORIGIN
static const h5w_options layout_opts = {CHUNK, 4, ORIGIN, 0};

/* Path of a test file, removed (with its partial file) beforehand. */
static void fresh_path(const char *name, char *path, char *partial) {
  snprintf(path, 4096, "%s", test_out_path(name));
  snprintf(partial, 4200, "%s.partial", path);
  unlink(path);
  unlink(partial);
}

static int file_exists(const char *path) { return access(path, F_OK) == 0; }

static void append_rows(tel_sink *s, const size_t id[3], size_t rows,
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
static tel_sink *fill_run(const char *path, size_t rows, double bump) {
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

static void write_run(const char *path, size_t rows, double bump) {
  tel_sink *s = fill_run(path, rows, bump);
  if (tel_commit(s) != SIM_OK)
    fail_msg("commit: %s", tel_errmsg(s));
  tel_destroy(s);
}

/* No HDF5 handle may outlive a test: neither the writer's nor ours. The
 * leftovers are closed before failing, so one failure does not cascade
 * into every later test. */
static void assert_no_open_ids(void) {
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

static char layout_path[4096];

static int write_layout_file(void **state) {
  (void)state;
  char partial[4200];
  fresh_path("layout.h5", layout_path, partial);
  write_run(layout_path, NROWS, 0.0);
  return 0;
}

/* ---- Reading back ------------------------------------------------------ */

static hid_t open_ro(const char *path) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0)
    fail_msg("cannot open %s", path);
  return f;
}

static hid_t open_dset(hid_t f, const char *name) {
  hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
  if (d < 0)
    fail_msg("no dataset %s", name);
  return d;
}

/* The shape of a dataset: returns its rank. */
static int get_dims(hid_t d, hsize_t dims[2], hsize_t maxdims[2]) {
  hid_t space = H5Dget_space(d);
  int rank = H5Sget_simple_extent_ndims(space);
  assert_in_range(rank, 0, 2);
  H5Sget_simple_extent_dims(space, dims, maxdims);
  H5Sclose(space);
  return rank;
}

/* All of a float64 dataset, in a buffer the caller frees. */
static double *read_all(hid_t d, size_t n) {
  double *buf = malloc((n != 0 ? n : 1) * sizeof *buf);
  assert_non_null(buf);
  assert_true(
      H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
  return buf;
}

static hid_t utf8_type(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

/* Checks that attribute key of obj is a UTF-8 variable-length string
 * equal to want. */
static void assert_str_attr(hid_t f, const char *obj, const char *key,
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

static double num_attr(hid_t f, const char *obj, const char *key) {
  double v = -1;
  hid_t a = H5Aopen_by_name(f, obj, key, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0)
    fail_msg("no attribute %s of %s", key, obj);
  assert_true(H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0);
  H5Aclose(a);
  return v;
}

static int64_t int_attr(hid_t f, const char *obj, const char *key) {
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

/* ---- Layout: one row per series -------------------------------------- */

typedef struct series_case {
  const char *name;
  const char *group;
  const char *dset;
  int gindex; /* for value(); -1 for time */
  size_t column;
  size_t rows;
  size_t width; /* 1 for a 1-D series */
  const char *units;
  const char *long_name;
} series_case;

static const char time_long_name[] =
    "simulated time at the end of the sample interval";

static const series_case series_cases[] = {
    {"facility/power_w", "/facility", "power_w", 0, 0, NROWS, 1, "W",
     "facility power drawn from the feed"},
    {"facility/pue", "/facility", "pue", 0, 1, NROWS, 1, "1",
     "power usage effectiveness"},
    {"facility/time", "/facility", "time", -1, 0, NROWS, 1, DATED,
     time_long_name},
    {"racks/power_w", "/racks", "power_w", 1, 0, NROWS, WIDTH, "W",
     "rack power"},
    {"racks/inlet_c", "/racks", "inlet_c", 1, 1, NROWS, WIDTH, "degC",
     "rack inlet temperature"},
    {"racks/time", "/racks", "time", -1, 0, NROWS, 1, DATED, time_long_name},
    {"services/chat/tokens_per_s", "/services/chat", "tokens_per_s", 2, 0,
     NROWS / 3, 1, "1/s", "tokens served per second"},
    {"services/chat/time", "/services/chat", "time", -1, 0, NROWS / 3, 1, DATED,
     time_long_name},
};

/* Row k of a group's series is sample i = k * step. */
static size_t step_of(const series_case *c) {
  return strcmp(c->group, "/services/chat") == 0 ? 3 : 1;
}

/* Extendible float64, chunked [CHUNK(, width)], shuffled, deflated and
 * checksummed. */
static void check_storage(const series_case *c, hid_t d, int rank) {
  hid_t type = H5Dget_type(d);
  assert_true(H5Tequal(type, H5T_IEEE_F64LE) > 0);
  H5Tclose(type);
  hid_t dcpl = H5Dget_create_plist(d);
  hsize_t chunk[2] = {0, 0};
  assert_int_equal(H5Pget_layout(dcpl), H5D_CHUNKED);
  assert_int_equal(H5Pget_chunk(dcpl, 2, chunk), rank);
  assert_int_equal(chunk[0], CHUNK);
  if (rank == 2)
    assert_int_equal(chunk[1], c->width);
  assert_int_equal(H5Pget_nfilters(dcpl), 3);
  unsigned flags;
  assert_int_equal(H5Pget_filter2(dcpl, 0, &flags, NULL, NULL, 0, NULL, NULL),
                   H5Z_FILTER_SHUFFLE);
  assert_int_equal(H5Pget_filter2(dcpl, 1, &flags, NULL, NULL, 0, NULL, NULL),
                   H5Z_FILTER_DEFLATE);
  assert_int_equal(H5Pget_filter2(dcpl, 2, &flags, NULL, NULL, 0, NULL, NULL),
                   H5Z_FILTER_FLETCHER32);
  H5Pclose(dcpl);
}

static void check_values(const series_case *c, hid_t d) {
  double *got = read_all(d, c->rows * c->width);
  size_t step = step_of(c);
  for (size_t k = 0; k < c->rows; k++)
    for (size_t j = 0; j < c->width; j++) {
      double want = c->gindex < 0
                        ? time_of(k * step)
                        : value(c->gindex, c->column, k * step, j, 0.0);
      assert_close(got[k * c->width + j], want, 0, 0);
    }
  free(got);
}

/* time is the scale of dimension 0; for 2-D the axis of dimension 1. */
static void check_scales(const series_case *c, hid_t g, hid_t d) {
  hid_t t = open_dset(g, "time");
  assert_true(H5DSis_scale(t) > 0);
  char name[64] = "";
  assert_true(H5DSget_scale_name(t, name, sizeof name) > 0);
  assert_string_equal(name, "time");
  if (c->gindex >= 0) {
    assert_true(H5DSis_scale(d) == 0);
    assert_true(H5DSis_attached(d, t, 0) > 0);
    assert_int_equal(H5DSget_num_scales(d, 0), 1);
  }
  if (c->width > 1) {
    hid_t axis = open_dset(g, "rack");
    assert_true(H5DSis_scale(axis) > 0);
    assert_true(H5DSget_scale_name(axis, name, sizeof name) > 0);
    assert_string_equal(name, "rack");
    assert_true(H5DSis_attached(d, axis, 1) > 0);
    assert_true(H5DSis_attached(d, t, 1) == 0);
    H5Dclose(axis);
  }
  H5Dclose(t);
}

static void test_series(void **state) {
  const series_case *c = *state;
  hid_t f = open_ro(layout_path);
  hid_t g = H5Gopen2(f, c->group, H5P_DEFAULT);
  assert_true(g >= 0);
  hid_t d = open_dset(g, c->dset);
  hsize_t dims[2], maxdims[2];
  int rank = get_dims(d, dims, maxdims);
  assert_int_equal(rank, c->width > 1 ? 2 : 1);
  assert_int_equal(dims[0], c->rows);
  assert_true(maxdims[0] == H5S_UNLIMITED);
  if (rank == 2) {
    assert_int_equal(dims[1], c->width);
    assert_int_equal(maxdims[1], c->width);
  }
  check_storage(c, d, rank);
  check_values(c, d);
  char obj[256];
  snprintf(obj, sizeof obj, "%s/%s", c->group, c->dset);
  assert_str_attr(f, obj, "units", c->units);
  assert_str_attr(f, obj, "long_name", c->long_name);
  /* A dated time coordinate says its calendar (CF 4.4.1). */
  if (c->gindex < 0)
    assert_str_attr(f, obj, "calendar", "proleptic_gregorian");
  assert_true(H5Aexists(d, "comment") == 0);
  check_scales(c, g, d);
  H5Dclose(d);
  H5Gclose(g);
  H5Fclose(f);
  assert_no_open_ids();
}

/* ---- Whole-file checks on the layout file ----------------------------- */

static void test_axis_labels(void **state) {
  (void)state;
  hid_t f = open_ro(layout_path);
  hid_t d = open_dset(f, "/racks/rack");
  hsize_t dims[2], maxdims[2];
  assert_int_equal(get_dims(d, dims, maxdims), 1);
  assert_int_equal(dims[0], WIDTH);
  hid_t ftype = H5Dget_type(d);
  assert_true(H5Tis_variable_str(ftype) > 0);
  assert_int_equal(H5Tget_cset(ftype), H5T_CSET_UTF8);
  hid_t mtype = utf8_type();
  char *got[WIDTH] = {NULL};
  assert_true(H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
  for (size_t j = 0; j < WIDTH; j++)
    assert_string_equal(got[j], rack_labels[j]);
  hid_t space = H5Dget_space(d);
  H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, got);
  H5Sclose(space);
  H5Tclose(mtype);
  H5Tclose(ftype);
  H5Dclose(d);
  assert_true(H5Lexists(f, "/facility/rack", H5P_DEFAULT) == 0);
  H5Fclose(f);
  assert_no_open_ids();
}

static void test_summary_and_meta(void **state) {
  (void)state;
  hid_t f = open_ro(layout_path);
  assert_close(num_attr(f, "/summary", "energy_mwh"), 13.5, 0, 0);
  assert_close(num_attr(f, "/summary", "mean_pue"), 1.25, 0, 0);
  assert_str_attr(f, "/", "aifsim_version", "0.1.0");
  assert_str_attr(f, "/", "scenario_name", "quick");
  assert_int_equal(int_attr(f, "/", "seed"), 42);
  assert_int_equal(int_attr(f, "/", "complete"), 1);
  H5Fclose(f);
  assert_no_open_ids();
}

static void test_scenario_text(void **state) {
  (void)state;
  hid_t f = open_ro(layout_path);
  hid_t d = open_dset(f, "/scenario");
  hid_t space = H5Dget_space(d);
  assert_int_equal(H5Sget_simple_extent_type(space), H5S_SCALAR);
  hid_t ftype = H5Dget_type(d);
  assert_true(H5Tis_variable_str(ftype) > 0);
  assert_int_equal(H5Tget_cset(ftype), H5T_CSET_UTF8);
  hid_t mtype = utf8_type();
  char *got = NULL;
  assert_true(H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, &got) >= 0);
  assert_string_equal(got, scenario_text);
  H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, &got);
  H5Tclose(mtype);
  H5Tclose(ftype);
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
  assert_no_open_ids();
}

/* A table is a group of whole 1-D columns: numbers with units, text as
 * UTF-8 strings; a name is put once. */
static void test_table(void **state) {
  (void)state;
  hid_t f = open_ro(layout_path);
  hid_t d = open_dset(f, "/jobs/gpus");
  double gpus[2] = {0};
  assert_true(
      H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, gpus) >= 0);
  assert_true(gpus[0] == 8 && gpus[1] == 72);
  H5Dclose(d);
  assert_str_attr(f, "/jobs/gpus", "units", "1");
  assert_close(num_attr(f, "/services/chat", "requests"), 9, 0, 0);
  d = open_dset(f, "/jobs/name");
  hid_t mtype = utf8_type();
  char *names[2] = {NULL, NULL};
  assert_true(H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) >= 0);
  assert_string_equal(names[0], "pretrain");
  assert_string_equal(names[1], "chat-\xc3\xbc");
  hid_t space = H5Dget_space(d);
  H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, names);
  H5Sclose(space);
  H5Tclose(mtype);
  H5Dclose(d);
  H5Fclose(f);
  assert_no_open_ids();
}

/* The row axis: row numbers, a dimension scale named "job", attached to
 * dimension 0 of every column (netCDF readers need no phony dimensions). */
static void test_table_axis(void **state) {
  (void)state;
  hid_t f = open_ro(layout_path);
  hid_t axis = open_dset(f, "/jobs/job");
  int64_t rows[2] = {-1, -1};
  assert_true(H5Dread(axis, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                      rows) >= 0);
  assert_true(rows[0] == 0 && rows[1] == 1);
  assert_true(H5DSis_scale(axis) > 0);
  char name[16] = "";
  assert_true(H5DSget_scale_name(axis, name, sizeof name) > 0);
  assert_string_equal(name, "job");
  for (size_t c = 0; c < N_OF(job_cols); c++) {
    char path[64];
    snprintf(path, sizeof path, "/jobs/%s", job_cols[c].name);
    hid_t d = open_dset(f, path);
    assert_true(H5DSis_attached(d, axis, 0) > 0);
    H5Dclose(d);
  }
  H5Dclose(axis);
  assert_str_attr(f, "/jobs/job", "long_name", "row number");
  H5Fclose(f);
  assert_no_open_ids();
}

/* Without a date, time stays in seconds and a comment says why. */
static void test_undated_time(void **state) {
  (void)state;
  char path[4096], partial[4200];
  fresh_path("undated.h5", path, partial);
  tel_sink *s = h5w_create(path, NULL, NULL);
  size_t id;
  double v[2] = {1, 2};
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_OK);
  assert_int_equal(tel_append(s, id, 60, v), SIM_OK);
  assert_int_equal(tel_commit(s), SIM_OK);
  tel_destroy(s);
  hid_t f = open_ro(path);
  assert_str_attr(f, "/facility/time", "units", "s");
  hid_t d = open_dset(f, "/facility/time");
  assert_true(H5Aexists(d, "calendar") == 0);
  assert_true(H5Aexists(d, "comment") > 0);
  H5Dclose(d);
  H5Fclose(f);
  assert_no_open_ids();
}

/* ---- Reading back for export (h5read_groups.c) ------------------------ */

/* The groups: series and the table, by name; /summary and /services hold
 * neither. */
static void test_read_groups(void **state) {
  (void)state;
  h5r_entry *e = NULL;
  size_t n = 0;
  sim_error err = {0};
  assert_int_equal(h5r_groups_list(layout_path, &e, &n, &err), SIM_OK);
  static const struct {
    const char *name;
    h5r_kind kind;
  } want[] = {{"facility", H5R_SERIES},
              {"jobs", H5R_ROWS},
              {"racks", H5R_SERIES},
              {"services/chat", H5R_SERIES}};
  assert_int_equal(n, N_OF(want));
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(e[i].name, want[i].name);
    assert_int_equal(e[i].kind, want[i].kind);
  }
  h5r_entries_free(e, n);
  assert_no_open_ids();
}

/* A 2-D group a block of rows at a time: its axis, units, dated time and
 * the values as written. */
static void test_read_series(void **state) {
  (void)state;
  h5r_series *s = NULL;
  sim_error err = {0};
  assert_int_equal(h5r_series_open(layout_path, "racks", &s, &err), SIM_OK);
  const h5r_series_info *i = h5r_series_info_of(s);
  assert_int_equal(i->nrows, NROWS);
  assert_int_equal(i->width, WIDTH);
  assert_string_equal(i->axis, "rack");
  assert_string_equal(i->labels[2], rack_labels[2]);
  assert_string_equal(i->time_units, DATED);
  assert_int_equal(i->ncols, 2);
  /* name order: inlet_c, power_w */
  assert_string_equal(i->names[0], "inlet_c");
  assert_string_equal(i->units[0], "degC");
  enum { AT = 995, COUNT = 10 }; /* across a chunk boundary */
  double t[COUNT], v[2 * COUNT * WIDTH];
  assert_int_equal(h5r_series_rows(s, AT, COUNT, t, v, &err), SIM_OK);
  for (size_t r = 0; r < COUNT; r++) {
    assert_close(t[r], time_of(AT + r), 0, 0);
    for (size_t j = 0; j < WIDTH; j++) {
      assert_close(v[(0 * COUNT + r) * WIDTH + j], value(1, 1, AT + r, j, 0), 0,
                   0);
      assert_close(v[(1 * COUNT + r) * WIDTH + j], value(1, 0, AT + r, j, 0), 0,
                   0);
    }
  }
  assert_int_equal(h5r_series_rows(s, NROWS - 1, 2, t, v, &err), SIM_EINVAL);
  h5r_series_close(s);
  assert_int_equal(h5r_series_open(layout_path, "nope", &s, &err), SIM_EIO);
  assert_null(s);
  assert_no_open_ids();
}

/* The table, its row axis first; the summary's and root's attributes. */
static void test_read_rows_and_attrs(void **state) {
  (void)state;
  h5r_rows t;
  sim_error err = {0};
  assert_int_equal(h5r_rows_read(layout_path, "jobs", &t, &err), SIM_OK);
  assert_int_equal(t.nrows, 2);
  assert_int_equal(t.ncols, 3);
  assert_string_equal(t.names[0], "job");
  assert_close(t.values[0][1], 1, 0, 0);
  assert_string_equal(t.names[1], "gpus");
  assert_close(t.values[1][1], 72, 0, 0);
  assert_string_equal(t.names[2], "name");
  assert_string_equal(t.texts[2][1], job_names[1]);
  h5r_rows_release(&t);
  h5r_attrs a;
  assert_int_equal(h5r_attrs_read(layout_path, "/summary", &a, &err), SIM_OK);
  /* The two metrics and their declarations (by name, as read). */
  assert_int_equal(a.n, 5);
  assert_string_equal(a.names[0], "energy_mwh");
  assert_close(a.values[0], 13.5, 0, 0);
  assert_string_equal(a.names[1], "groups");
  assert_string_equal(a.names[2], "long_names");
  assert_string_equal(a.texts[2], "{\"energy_mwh\": \"Facility energy\", "
                                  "\"mean_pue\": \"PUE\"}");
  assert_string_equal(a.names[4], "units");
  assert_string_equal(a.texts[4],
                      "{\"energy_mwh\": \"MWh\", \"mean_pue\": \"1\"}");
  h5r_attrs_release(&a);
  assert_int_equal(h5r_attrs_read(layout_path, "/", &a, &err), SIM_OK);
  int found = 0;
  for (size_t k = 0; k < a.n; k++)
    if (strcmp(a.names[k], "scenario_name") == 0)
      found = a.texts[k] != NULL && strcmp(a.texts[k], "quick") == 0;
  assert_true(found);
  h5r_attrs_release(&a);
  assert_no_open_ids();
}

/* What a visit of every object found. */
typedef struct visit {
  int objects;
  char stamped[256]; /* first object with a time stamp, or "" */
} visit;

/* Object times would make every file different; all must be zero. The
 * callback only records: failing inside HDF5's iteration would leave the
 * library mid-call. */
static herr_t check_no_times(hid_t o, const char *name, const H5O_info_t *i,
                             void *data) {
  (void)o;
  visit *v = data;
  v->objects++;
  if ((i->atime != 0 || i->mtime != 0 || i->ctime != 0 || i->btime != 0) &&
      v->stamped[0] == '\0')
    snprintf(v->stamped, sizeof v->stamped, "%s", name);
  return 0;
}

static void test_no_object_times(void **state) {
  (void)state;
  hid_t f = open_ro(layout_path);
  visit v = {0, ""};
  herr_t r = H5Ovisit(f, H5_INDEX_NAME, H5_ITER_INC, check_no_times, &v);
  H5Fclose(f);
  assert_true(r >= 0);
  if (v.stamped[0] != '\0')
    fail_msg("object %s carries a time stamp", v.stamped);
  /* /, facility (3), racks (4), services, chat (2), summary, scenario,
   * jobs (2 and the row axis) */
  assert_int_equal(v.objects,
                   1 + 1 + 3 + 1 + 4 + 1 + 1 + 2 + 1 + 1 + 1 + 2 + 1);
  assert_no_open_ids();
}

/* ---- The partial file and its commit ----------------------------------- */

static void test_partial_then_commit(void **state) {
  (void)state;
  char path[4096], partial[4200];
  fresh_path("partial.h5", path, partial);
  tel_sink *s = fill_run(path, 50, 0.0);
  assert_true(file_exists(partial));
  assert_false(file_exists(path));
  /* Before commit the partial file says nothing of being complete. The
   * writer has it open with close degree "semi", and HDF5 lets the same
   * process open it again only with the same degree. */
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fclose_degree(fapl, H5F_CLOSE_SEMI);
  hid_t f = H5Fopen(partial, H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  assert_true(f >= 0);
  assert_true(H5Aexists(f, "complete") == 0);
  assert_true(H5Aexists(f, "seed") > 0);
  H5Fclose(f);
  assert_int_equal(tel_commit(s), SIM_OK);
  assert_false(file_exists(partial));
  assert_true(file_exists(path));
  tel_destroy(s); /* keeps the committed file */
  assert_true(file_exists(path));
  f = open_ro(path);
  assert_int_equal(int_attr(f, "/", "complete"), 1);
  H5Fclose(f);
  assert_no_open_ids();
}

static void test_destroy_without_commit(void **state) {
  (void)state;
  char path[4096], partial[4200];
  fresh_path("uncommitted.h5", path, partial);
  tel_sink *s = fill_run(path, 2500, 0.0);
  assert_true(file_exists(partial));
  tel_destroy(s);
  assert_false(file_exists(partial));
  assert_false(file_exists(path));
  assert_no_open_ids();
}

static void write_junk(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  assert_non_null(fp);
  fputs(text, fp);
  fclose(fp);
}

static int file_equals_text(const char *path, const char *text) {
  char buf[64] = "";
  FILE *fp = fopen(path, "r");
  if (fp == NULL)
    return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  fclose(fp);
  buf[n] = '\0';
  return strcmp(buf, text) == 0;
}

/* An old partial file is replaced; PATH is left alone until commit, which
 * replaces it. */
static void test_old_files(void **state) {
  (void)state;
  char path[4096], partial[4200];
  fresh_path("old.h5", path, partial);
  write_junk(path, "old complete run");
  write_junk(partial, "old partial run");
  sim_error err;
  tel_sink *s = h5w_create(path, NULL, &err);
  assert_non_null(s);
  assert_false(file_equals_text(partial, "old partial run"));
  tel_destroy(s);
  assert_true(file_equals_text(path, "old complete run"));
  assert_false(file_exists(partial));
  write_run(path, 10, 0.0);
  assert_false(file_equals_text(path, "old complete run"));
  hid_t f = open_ro(path);
  assert_int_equal(int_attr(f, "/", "complete"), 1);
  H5Fclose(f);
  assert_no_open_ids();
}

/* ---- Byte-identical output --------------------------------------------- */

/* 1 if the two files hold the same bytes. */
static int same_bytes(const char *a, const char *b) {
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  assert_non_null(fa);
  assert_non_null(fb);
  int same = 1, ca, cb;
  do {
    ca = getc(fa);
    cb = getc(fb);
    same = ca == cb;
  } while (same && ca != EOF);
  fclose(fa);
  fclose(fb);
  return same;
}

static void test_identical_bytes(void **state) {
  (void)state;
  char a[4096], b[4096], c[4096], partial[4200];
  fresh_path("same_a.h5", a, partial);
  fresh_path("same_b.h5", b, partial);
  fresh_path("same_c.h5", c, partial);
  write_run(a, 2500, 0.0);
  write_run(b, 2500, 0.0);
  write_run(c, 2500, 1.0); /* one value differs */
  assert_true(same_bytes(a, b));
  assert_false(same_bytes(a, c));
  assert_no_open_ids();
}

/* ---- Groups: nesting, empty groups, wide groups ----------------------- */

static const tel_column one_col[] = {{"x", "1", "a value"}};
static const tel_group services = {"services", one_col, 1, 1, NULL, NULL};
static const tel_group deep = {"a/b/c/d", one_col, 1, 1, NULL, NULL};

/* "services" after "services/chat" reuses the group made for the path. */
static void test_nested_groups(void **state) {
  (void)state;
  char path[4096], partial[4200];
  fresh_path("nested.h5", path, partial);
  tel_sink *s = h5w_create(path, NULL, NULL);
  assert_non_null(s);
  size_t id[3];
  double v = 3;
  assert_int_equal(tel_open_group(s, &chat, &id[0]), SIM_OK);
  assert_int_equal(tel_open_group(s, &services, &id[1]), SIM_OK);
  assert_int_equal(tel_open_group(s, &deep, &id[2]), SIM_OK);
  for (size_t k = 0; k < 3; k++)
    assert_int_equal(tel_append(s, id[k], 1.0, &v), SIM_OK);
  assert_int_equal(tel_commit(s), SIM_OK);
  tel_destroy(s);
  static const char *const names[] = {"/services/chat/tokens_per_s",
                                      "/services/x", "/services/time",
                                      "/a/b/c/d/x", "/a/b/c/d/time"};
  hid_t f = open_ro(path);
  for (size_t k = 0; k < N_OF(names); k++) {
    hid_t d = open_dset(f, names[k]);
    hsize_t dims[2], maxdims[2];
    assert_int_equal(get_dims(d, dims, maxdims), 1);
    assert_int_equal(dims[0], 1);
    H5Dclose(d);
  }
  H5Fclose(f);
  assert_no_open_ids();
}

/* Chunk rows: the option, clipped so a chunk holds at most 1 MiB. */
typedef struct chunk_case {
  const char *name;
  size_t chunk_rows; /* option; 0 = default */
  size_t width;
  hsize_t want_rows, want_width;
} chunk_case;

static const chunk_case chunk_cases[] = {
    {"default", 0, 1, 4096, 1},
    {"option", 100, 1, 100, 1},
    {"1-D cap", 1000000, 1, 131072, 1},
    {"wide", 0, 1000, 131, 1000},
    {"wider than a chunk", 0, 200000, 1, 131072},
};

static void test_chunks(void **state) {
  const chunk_case *c = *state;
  char path[4096], partial[4200];
  fresh_path("chunks.h5", path, partial);
  h5w_options opts = {c->chunk_rows, 1, NULL, 0};
  tel_sink *s = h5w_create(path, &opts, NULL);
  assert_non_null(s);
  const char **labels = calloc(c->width, sizeof *labels);
  for (size_t j = 0; j < c->width; j++)
    labels[j] = "g";
  tel_group g = {"gpus", one_col, 1, c->width, "gpu", labels};
  double *v = calloc(c->width, sizeof *v);
  size_t id;
  assert_int_equal(tel_open_group(s, &g, &id), SIM_OK);
  for (int i = 0; i < 3; i++) {
    v[c->width - 1] = i;
    assert_int_equal(tel_append(s, id, i, v), SIM_OK);
  }
  assert_int_equal(tel_commit(s), SIM_OK);
  tel_destroy(s);
  hid_t f = open_ro(path);
  hid_t d = open_dset(f, "/gpus/x");
  hid_t dcpl = H5Dget_create_plist(d);
  hsize_t chunk[2] = {0, 1};
  H5Pget_chunk(dcpl, 2, chunk);
  assert_int_equal(chunk[0], c->want_rows);
  assert_int_equal(chunk[1], c->want_width);
  double *got = read_all(d, 3 * c->width);
  for (int i = 0; i < 3; i++)
    assert_close(got[i * c->width + c->width - 1], i, 0, 0);
  free(got);
  H5Pclose(dcpl);
  H5Dclose(d);
  H5Fclose(f);
  free(v);
  free(labels);
  assert_no_open_ids();
}

/* A declared group with no rows: empty, extendible datasets. */
static void test_empty_group(void **state) {
  (void)state;
  char path[4096], partial[4200];
  fresh_path("empty.h5", path, partial);
  tel_sink *s = h5w_create(path, &(h5w_options){0, -1, NULL, 0}, NULL);
  size_t id;
  assert_int_equal(tel_open_group(s, &racks, &id), SIM_OK);
  assert_int_equal(tel_commit(s), SIM_OK);
  tel_destroy(s);
  hid_t f = open_ro(path);
  hid_t d = open_dset(f, "/racks/inlet_c");
  hsize_t dims[2], maxdims[2];
  assert_int_equal(get_dims(d, dims, maxdims), 2);
  assert_int_equal(dims[0], 0);
  assert_int_equal(dims[1], WIDTH);
  hid_t dcpl = H5Dget_create_plist(d);
  /* Deflate level -1: no compression, but the checksum stays. */
  assert_int_equal(H5Pget_nfilters(dcpl), 1);
  H5Pclose(dcpl);
  H5Dclose(d);
  H5Fclose(f);
  assert_no_open_ids();
}

/* ---- Errors ------------------------------------------------------------ */

static void test_unwritable_path(void **state) {
  (void)state;
  const char *path = "/nonexistent-aifsim-dir/sub/run.h5";
  sim_error err;
  assert_null(h5w_create(path, NULL, &err));
  assert_int_equal(err.code, SIM_EIO);
  if (strstr(err.msg, path) == NULL)
    fail_msg("message \"%s\" lacks the path", err.msg);
  assert_null(h5w_create(path, NULL, NULL)); /* err may be NULL */
  assert_no_open_ids();
}

typedef struct option_case {
  const char *name;
  const char *path;
  h5w_options opts;
  int code;
} option_case;

static const option_case option_cases[] = {
    {"deflate -2", "x.h5", {0, -2, NULL, 0}, SIM_EINVAL},
    {"deflate 10", "x.h5", {0, 10, NULL, 0}, SIM_EINVAL},
    {"empty path", "", {0, 4, NULL, 0}, SIM_EINVAL},
    {"null path", NULL, {0, 4, NULL, 0}, SIM_EINVAL},
    {"empty origin", "x.h5", {0, 4, "", 0}, SIM_EINVAL},
    {"origin with a newline",
     "x.h5",
     {0, 4, "2023-07-01\nT00:00Z", 0},
     SIM_EINVAL},
    {"origin too long",
     "x.h5",
     {0, 4,
      "2023-07-01T00:00:00.000000000000000000000000000000000000000000000Z", 0},
     SIM_EINVAL},
};

static void test_bad_options(void **state) {
  const option_case *c = *state;
  sim_error err;
  assert_null(h5w_create(c->path, &c->opts, &err));
  assert_int_equal(err.code, c->code);
  assert_true(strlen(err.msg) > 0);
}

/* After commit only destroy is valid; the file stays complete. */
static void test_after_commit(void **state) {
  (void)state;
  char path[4096], partial[4200];
  fresh_path("after.h5", path, partial);
  tel_sink *s = fill_run(path, 5, 0.0);
  double v[2 * WIDTH] = {0};
  assert_int_equal(tel_commit(s), SIM_OK);
  assert_int_equal(tel_append(s, 0, 100.0, v), SIM_ESTATE);
  assert_true(strstr(tel_errmsg(s), "after commit") != NULL);
  assert_int_equal(tel_open_group(s, &services, &(size_t){0}), SIM_ESTATE);
  assert_int_equal(tel_put_summary(s, &m_energy, 1), SIM_ESTATE);
  assert_int_equal(tel_put_meta_str(s, "k", "v"), SIM_ESTATE);
  assert_int_equal(tel_put_meta_int(s, "k", 1), SIM_ESTATE);
  assert_int_equal(tel_put_text(s, "k", "v"), SIM_ESTATE);
  assert_int_equal(tel_commit(s), SIM_ESTATE);
  tel_destroy(s);
  assert_true(file_exists(path));
  assert_no_open_ids();
}

/* Argument errors leave the sink usable. */
static void test_argument_errors(void **state) {
  (void)state;
  char path[4096], partial[4200];
  fresh_path("args.h5", path, partial);
  tel_sink *s = fill_run(path, 5, 0.0);
  double v[2 * WIDTH] = {0};
  size_t id;
  assert_int_equal(tel_append(s, 3, 100.0, v), SIM_EINVAL);
  assert_true(strstr(tel_errmsg(s), "unknown group id 3") != NULL);
  assert_int_equal(tel_append(s, 0, 1.0, v), SIM_EINVAL); /* backwards */
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_EINVAL);
  assert_int_equal(tel_put_text(s, "scenario", "again"), SIM_EINVAL);
  assert_int_equal(tel_put_text(s, "racks", "shadows a group"), SIM_EINVAL);
  assert_int_equal(tel_put_table(s, &jobs), SIM_EINVAL); /* put once */
  assert_int_equal(tel_append(s, 0, 100.0, v), SIM_OK);
  assert_int_equal(tel_commit(s), SIM_OK);
  tel_destroy(s);
  hid_t f = open_ro(path);
  hid_t d = open_dset(f, "/facility/time");
  hsize_t dims[2], maxdims[2];
  get_dims(d, dims, maxdims);
  assert_int_equal(dims[0], 6);
  H5Dclose(d);
  H5Fclose(f);
  assert_no_open_ids();
}

/* An HDF5 failure is SIM_EIO naming the file and object, and sticks: the
 * file may hold half of what was asked, so nothing more is written and
 * destroy removes it. */
static void test_io_error_sticks(void **state) {
  (void)state;
  char path[4096], partial[4200];
  fresh_path("broken.h5", path, partial);
  tel_sink *s = fill_run(path, 5, 0.0);
  /* A group below a dataset cannot be made. */
  static const tel_group under_dset = {
      "facility/pue/x", one_col, 1, 1, NULL, NULL};
  size_t id;
  double v[2 * WIDTH] = {0};
  assert_int_equal(tel_open_group(s, &under_dset, &id), SIM_EIO);
  const char *msg = tel_errmsg(s);
  if (strstr(msg, partial) == NULL || strstr(msg, "facility/pue/x") == NULL)
    fail_msg("message \"%s\" lacks the file or the object", msg);
  char first[1024];
  snprintf(first, sizeof first, "%s", msg);
  assert_int_equal(tel_append(s, 0, 100.0, v), SIM_EIO);
  assert_int_equal(tel_put_summary(s, &m_energy, 1), SIM_EIO);
  assert_int_equal(tel_commit(s), SIM_EIO);
  assert_string_equal(tel_errmsg(s), first);
  tel_destroy(s);
  assert_false(file_exists(partial));
  assert_false(file_exists(path));
  assert_no_open_ids();
}

/* A file-size limit (the recorder's seam for a disk that fills up): the
 * append that would pass it fails with one line naming the final file
 * and the cause, the sink stays failed, and destroy leaves nothing and no
 * open HDF5 handle (a failed close used to crash HDF5 at exit). */
static void test_file_size_limit(void **state) {
  (void)state;
  char path[4096], partial[4200];
  fresh_path("limited.h5", path, partial);
  struct rlimit old, lim;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  lim = old;
  lim.rlim_cur = ((rlim_t)1 << 20) + 200000;
  if (old.rlim_max != RLIM_INFINITY && old.rlim_max < lim.rlim_cur)
    skip();
  signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
  sim_error err;
  const h5w_options opts = {1024, -1, NULL, 0};
  tel_sink *s = h5w_create(path, &opts, &err);
  assert_non_null(s);
  size_t id;
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_OK);
  int rc = SIM_OK;
  double v[2] = {1, 2};
  for (size_t i = 0; i < 200000 && rc == SIM_OK; i++)
    rc = tel_append(s, id, (double)i, v);
  assert_int_equal(rc, SIM_EIO);
  if (strstr(tel_errmsg(s), "limited.h5: file too large after ") == NULL ||
      strchr(tel_errmsg(s), '\n') != NULL)
    fail_msg("message \"%s\"", tel_errmsg(s));
  assert_int_equal(tel_commit(s), SIM_EIO);
  tel_destroy(s);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
  assert_false(file_exists(partial));
  assert_false(file_exists(path));
  assert_no_open_ids();
}

/* ---- Registration ------------------------------------------------------ */

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ROWS(tests, n, test_series, series_cases);
  TEST_ADD(tests, n, test_axis_labels);
  TEST_ADD(tests, n, test_summary_and_meta);
  TEST_ADD(tests, n, test_scenario_text);
  TEST_ADD(tests, n, test_table);
  TEST_ADD(tests, n, test_table_axis);
  TEST_ADD(tests, n, test_undated_time);
  TEST_ADD(tests, n, test_read_groups);
  TEST_ADD(tests, n, test_read_series);
  TEST_ADD(tests, n, test_read_rows_and_attrs);
  TEST_ADD(tests, n, test_no_object_times);
  TEST_ADD(tests, n, test_partial_then_commit);
  TEST_ADD(tests, n, test_destroy_without_commit);
  TEST_ADD(tests, n, test_old_files);
  TEST_ADD(tests, n, test_identical_bytes);
  TEST_ADD(tests, n, test_nested_groups);
  TEST_ROWS(tests, n, test_chunks, chunk_cases);
  TEST_ADD(tests, n, test_empty_group);
  TEST_ADD(tests, n, test_unwritable_path);
  TEST_ROWS(tests, n, test_bad_options, option_cases);
  TEST_ADD(tests, n, test_after_commit);
  TEST_ADD(tests, n, test_argument_errors);
  TEST_ADD(tests, n, test_io_error_sticks);
  TEST_ADD(tests, n, test_file_size_limit);
  return _cmocka_run_group_tests("record", tests, n, write_layout_file, NULL);
}
