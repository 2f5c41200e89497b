/* test_record.c - the HDF5 writer (record.c), read back with the HDF5 C
 * API: layout, values, attributes, dimension scales, summary, metadata,
 * texts; and the same file read back through h5read.h's group readers
 * (export). The partial file, byte-identical output, groups and errors are
 * in test_record_write.c. */
#include "test_record_run.h"

static char layout_path[4096];

static int write_layout_file(void **state) {
  (void)state;
  char partial[4200];
  fresh_path("layout.h5", layout_path, partial);
  write_run(layout_path, NROWS, 0.0);
  return 0;
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
  assert_texts(d, rack_labels, WIDTH);
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

/* ---- Registration ------------------------------------------------------ */

/* H5dont_atexit asked before any other HDF5 call in main. */
static herr_t exit_cleanup_asked;

/* record.c's constructor turned HDF5's own clean-up at exit off before
 * main (after an allocation failed inside HDF5 1.10 that clean-up freed a
 * property class twice and aborted a run that had failed cleanly): asked
 * again, HDF5 answers that it already is. */
static void test_exit_cleanup_off(void **state) {
  (void)state;
  assert_true(exit_cleanup_asked < 0);
}

int main(void) {
  exit_cleanup_asked = H5dont_atexit();
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ADD(tests, n, test_exit_cleanup_off);
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
  return _cmocka_run_group_tests("record", tests, n, write_layout_file, NULL);
}
