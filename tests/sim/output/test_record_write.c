/* test_record_write.c - the HDF5 writer (record.c) as it writes: the
 * partial file and its commit, byte-identical output, nested, empty and
 * wide groups, and errors. */
#include "test_record_run.h"

#include <errno.h>

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
  struct rlimit old;
  if (!limit_file_size(&old))
    skip();
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
  assert_failed_leaves_nothing(s, &old, path, partial);
}

/* ---- Out of memory at create ------------------------------------------ */

/* In the child: 0 when h5w_create failed with SIM_ENOMEM, saying out of
 * memory, and left neither the partial file nor the lock. */
static int create_cramped(void *ctx) {
  char *const *paths = ctx; /* the path, its partial file, its lock */
  sim_error err = {0};
  tel_sink *s = h5w_create(paths[0], NULL, &err);
  if (s != NULL) {
    tel_destroy(s);
    return 3;
  }
  if (err.code != SIM_ENOMEM || strstr(err.msg, "out of memory") == NULL) {
    fprintf(stderr, "child: %s (%s)\n", err.msg, sim_err_name(err.code));
    return 2;
  }
  return file_exists(paths[1]) || file_exists(paths[2]) ? 1 : 0;
}

typedef struct room_case {
  const char *name;
  size_t room; /* address space left above what the process maps */
} room_case;

/* Below the 2 MB record.c makes sure of before H5Fcreate, whose failed
 * allocation crashes HDF5 1.10 (a child that does not exit gives -1).
 * This checks the guard's side; whether H5Fcreate itself would fail here
 * depends on the heap's free space (in this process it does not: without
 * the guard the create succeeds), so the crash it prevents is reached by
 * cli_reliability's ulimit -v grid on the whole run instead. */
static const room_case room_cases[] = {
    {"create with 256 KB left", (size_t)256 << 10},
    {"create with 1 MB left", (size_t)1 << 20},
    {"create with 1.75 MB left", (size_t)7 << 18},
};

static void test_create_out_of_memory(void **state) {
  const room_case *c = *state;
  char path[4096], partial[4200], lock[4200];
  fresh_path("cramped.h5", path, partial);
  snprintf(lock, sizeof lock, "%s.lock", path);
  H5open(); /* HDF5 set up before the limit, as in a run */
  char *paths[] = {path, partial, lock};
  assert_int_equal(test_with_room(c->room, create_cramped, paths), 0);
}

/* ---- Text columns of every size ------------------------------------------
 * Text columns of fewer and more elements than HDF5's 1 MiB conversion
 * buffer takes in one pass (65536 of 16 bytes) read back whole. */

typedef struct text_case {
  const char *name;
  size_t rows;
} text_case;

static const text_case text_rows[] = {
    {"1 text row", 1},          {"3 text rows", 3},
    {"16384 text rows", 16384}, {"65536 text rows", 65536},
    {"70000 text rows", 70000},
};

static void test_text_column_sizes(void **state) {
  size_t nrows = ((const text_case *)*state)->rows;
  char path[4096], partial[4200];
  fresh_path("texts.h5", path, partial);
  char(*names)[32] = calloc(nrows, sizeof *names);
  const char **texts = calloc(nrows, sizeof *texts);
  for (size_t i = 0; i < nrows; i++) {
    snprintf(names[i], sizeof names[i], "row-%zu", i);
    texts[i] = names[i];
  }
  const tel_table_column col = {"name", NULL, "a name", NULL, texts};
  const tel_table t = {"things", &col, 1, nrows, "thing"};
  tel_sink *s = h5w_create(path, NULL, NULL);
  assert_non_null(s);
  assert_int_equal(tel_put_table(s, &t), SIM_OK);
  assert_int_equal(tel_commit(s), SIM_OK);
  tel_destroy(s);
  hid_t f = open_ro(path), d = open_dset(f, "/things/name");
  assert_texts(d, texts, nrows);
  H5Dclose(d);
  H5Fclose(f);
  free(texts);
  free(names);
  assert_no_open_ids();
}

/* ---- After memory ran out (last: it holds for the process) ------------
 * A run that failed for want of memory, with its writer open: HDF5 may
 * have had an allocation fail inside it and gone on, and closing the
 * file's datasets then crashed (cli_reliability's preloaded malloc). The
 * writer destroyed with malloc's ENOMEM in errno removes its partial file
 * and lock without an HDF5 call, and no writer is made after it in the
 * process: each would close its file through the same library. */
static void test_destroyed_out_of_memory(void **state) {
  (void)state;
  char path[4096], partial[4200], lock[4200];
  fresh_path("starved.h5", path, partial);
  snprintf(lock, sizeof lock, "%s.lock", path);
  tel_sink *s = fill_run(path, 2500, 0.0);
  assert_true(file_exists(partial));
  errno = ENOMEM;
  tel_destroy(s);
  assert_false(file_exists(partial));
  assert_false(file_exists(lock));
  assert_false(file_exists(path));
  sim_error err = {0};
  assert_null(h5w_create(path, NULL, &err));
  assert_int_equal(err.code, SIM_ENOMEM);
  assert_non_null(strstr(err.msg, "out of memory"));
  assert_false(file_exists(partial));
  assert_false(file_exists(lock));
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
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
  TEST_ROWS(tests, n, test_create_out_of_memory, room_cases);
  TEST_ROWS(tests, n, test_text_column_sizes, text_rows);
  TEST_ADD(tests, n, test_destroyed_out_of_memory); /* last */
  return _cmocka_run_group_tests("record_write", tests, n, NULL, NULL);
}
