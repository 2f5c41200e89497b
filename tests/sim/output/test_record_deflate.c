/* test_record_deflate.c - the HDF5 writer's worker thread
 * (record_deflate.c): its filter pipeline stores what HDF5 stores, a file
 * written with the worker has the bytes of one written without, and its
 * error paths leave no file that looks complete. */
#include "test_record_run.h"

#include "record_internal.h"

/* ---- Data -------------------------------------------------------------- */

enum { SMOOTH, RANDOM, ZEROS, FLAT };

/* Row i, position j of a series: slowly varying (deflate shrinks it),
 * random bytes (it does not), zeros, or one value for 512 rows whatever
 * the position (blocks of one value, the same in groups of every width:
 * record_deflate.c's flat_chunk). */
static double datum(int kind, size_t i, size_t j, uint64_t *rng) {
  if (kind == ZEROS)
    return 0;
  if (kind == FLAT)
    return (double)(i / 512 % 3);
  if (kind == SMOOTH)
    return 1e3 + 0.25 * (double)i + (double)j;
  *rng = *rng * 6364136223846793005u + 1442695040888963407u;
  uint64_t bits = *rng ^ (*rng >> 29);
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

static const char *const labels4[] = {"a", "b", "c", "d"};
static const tel_column x_col[] = {{"x", "1", "a value"}};

/* ---- The pipeline against HDF5 ---------------------------------------- */

typedef struct pipe_case {
  const char *name;
  int kind;
  size_t width; /* 1: rank 1; more: rank 2 */
  size_t rows;  /* per chunk */
} pipe_case;

static const pipe_case pipe_cases[] = {
    {"smooth rank 1", SMOOTH, 1, 512},   {"random rank 1", RANDOM, 1, 512},
    {"zeros rank 1", ZEROS, 1, 512},     {"smooth rank 2", SMOOTH, 4, 300},
    {"random rank 2", RANDOM, 4, 300},   {"zeros rank 2", ZEROS, 4, 300},
    {"one value a chunk", RANDOM, 1, 1},
};

/* One chunk of /g/x written by HDF5 (the worker off), in rows. */
static void write_one_chunk(const char *path, const pipe_case *c,
                            double *rows) {
  h5w_options opts = {c->rows, 0, NULL, 0};
  tel_sink *s = h5w_create(path, &opts, NULL);
  assert_non_null(s);
  h5w__set_worker(s, 0);
  tel_group g = {"g",
                 x_col,
                 1,
                 c->width,
                 c->width > 1 ? "k" : NULL,
                 c->width > 1 ? labels4 : NULL};
  size_t id;
  assert_int_equal(tel_open_group(s, &g, &id), SIM_OK);
  uint64_t rng = 7;
  for (size_t i = 0; i < c->rows; i++) {
    for (size_t j = 0; j < c->width; j++)
      rows[i * c->width + j] = datum(c->kind, i, j, &rng);
    assert_int_equal(tel_append(s, id, (double)i, &rows[i * c->width]), SIM_OK);
  }
  assert_int_equal(tel_commit(s), SIM_OK);
  tel_destroy(s);
}

static void test_pipeline_bytes(void **state) {
  const pipe_case *c = *state;
  char path[4096], partial[4200];
  fresh_path("pipeline.h5", path, partial);
  size_t n = c->rows * c->width * sizeof(double);
  unsigned char *mine = calloc(1, h5w__chunk_room(n));
  unsigned char *scratch = malloc(n);
  write_one_chunk(path, c, (double *)mine);
  uint32_t mask = 9;
  size_t size = h5w__filter_chunk(mine, n, scratch, H5W_DEFLATE, &mask);
  hid_t f = open_ro(path);
  hid_t d = open_dset(f, "/g/x");
  hsize_t offset[2] = {0, 0}, stored = 0;
  assert_true(H5Dget_chunk_storage_size(d, offset, &stored) >= 0);
  assert_int_equal(stored, size);
  unsigned char *theirs = malloc(stored);
  uint32_t filters = 9;
  assert_true(H5Dread_chunk(d, H5P_DEFAULT, offset, &filters, theirs) >= 0);
  assert_int_equal(filters, mask);
  assert_memory_equal(theirs, mine, size);
  free(theirs);
  free(scratch);
  free(mine);
  H5Dclose(d);
  H5Fclose(f);
  assert_no_open_ids();
}

/* ---- The same file with the worker or without ------------------------- */

/* Three groups of different widths, rows enough for full blocks and a
 * partial one, metadata between the blocks: the worker on or off. */
static void write_groups(const char *path, int worker, int kind, size_t rows) {
  h5w_options opts = {256, 0, NULL, 0};
  tel_sink *s = h5w_create(path, &opts, NULL);
  assert_non_null(s);
  h5w__set_worker(s, worker);
  const tel_group g[3] = {{"one", x_col, 1, 1, NULL, NULL},
                          {"four", x_col, 1, 4, "k", labels4},
                          {"sub/two", x_col, 1, 2, "k", labels4}};
  size_t id[3];
  for (int k = 0; k < 3; k++)
    assert_int_equal(tel_open_group(s, &g[k], &id[k]), SIM_OK);
  uint64_t rng = 11;
  double v[4];
  for (size_t i = 0; i < rows; i++) {
    for (int k = 0; k < 3; k++) {
      for (size_t j = 0; j < g[k].width; j++)
        v[j] = datum(kind, i, j + (size_t)k, &rng);
      if (k != 2 || i % 3 == 0)
        assert_int_equal(tel_append(s, id[k], (double)i, v), SIM_OK);
    }
    if (i == 700)
      assert_int_equal(tel_put_meta_int(s, "seed", 42), SIM_OK);
  }
  assert_int_equal(tel_put_summary(s, &m_energy, 1.5), SIM_OK);
  assert_int_equal(tel_commit(s), SIM_OK);
  tel_destroy(s);
}

static int same_file(const char *a, const char *b) {
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
  return system(cmd) == 0;
}

typedef struct same_case {
  const char *name;
  int kind;
  size_t rows;
} same_case;

static const same_case same_cases[] = {
    {"smooth, a partial block", SMOOTH, 2000},
    {"random, a partial block", RANDOM, 1300},
    {"zeros, whole blocks only", ZEROS, 768},
    {"smooth, the last block only (the worker starts at commit)", SMOOTH, 40},
    {"random, one row", RANDOM, 1},
    {"blocks of one value, kept and repeated", FLAT, 4000},
};

static void test_same_bytes(void **state) {
  const same_case *c = *state;
  char on[4096], off[4096], partial[4200];
  fresh_path("worker_on.h5", on, partial);
  fresh_path("worker_off.h5", off, partial);
  write_groups(on, 1, c->kind, c->rows);
  write_groups(off, 0, c->kind, c->rows);
  assert_true(same_file(on, off));
  assert_no_open_ids();
}

/* ---- A wide group ------------------------------------------------------ */

/* A group wide enough that a column's block is over 2 MiB, as
 * bench-10k's racks (142 wide, 923 rows a chunk, 1 MiB a column): the
 * same file with the worker as without, full blocks and a partial one. */
static void write_wide(const char *path, int worker) {
  enum { WIDE = 300, ROWS = 1024 };
  static char names[WIDE][8];
  static const char *labels[WIDE];
  for (size_t j = 0; j < WIDE; j++) {
    snprintf(names[j], sizeof names[j], "r%zu", j);
    labels[j] = names[j];
  }
  h5w_options opts = {ROWS, 0, NULL, 0};
  tel_sink *s = h5w_create(path, &opts, NULL);
  assert_non_null(s);
  h5w__set_worker(s, worker);
  const tel_group g = {"racks", x_col, 1, WIDE, "rack", labels};
  size_t id;
  assert_int_equal(tel_open_group(s, &g, &id), SIM_OK);
  static double v[WIDE];
  uint64_t rng = 5;
  for (size_t i = 0; i < 2 * ROWS + 333; i++) {
    for (size_t j = 0; j < WIDE; j++)
      v[j] = datum(j % 7 == 0 ? RANDOM : SMOOTH, i, j, &rng);
    assert_int_equal(tel_append(s, id, (double)i, v), SIM_OK);
  }
  assert_int_equal(tel_commit(s), SIM_OK);
  tel_destroy(s);
}

static void test_wide_same_bytes(void **state) {
  (void)state;
  char on[4096], off[4096], partial[4200];
  fresh_path("wide_on.h5", on, partial);
  fresh_path("wide_off.h5", off, partial);
  write_wide(on, 1);
  write_wide(off, 0);
  assert_true(same_file(on, off));
  assert_no_open_ids();
}

/* ---- Errors ------------------------------------------------------------ */

/* Blocks still queued when the sink is destroyed: the thread is joined,
 * nothing is left. */
static void test_destroy_with_queued_blocks(void **state) {
  (void)state;
  char path[4096], partial[4200];
  fresh_path("queued.h5", path, partial);
  h5w_options opts = {64, 0, NULL, 0};
  tel_sink *s = h5w_create(path, &opts, NULL);
  assert_non_null(s);
  size_t id;
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_OK);
  double v[2] = {1, 2};
  for (size_t i = 0; i < 64 * 5; i++)
    assert_int_equal(tel_append(s, id, (double)i, v), SIM_OK);
  tel_destroy(s);
  assert_false(file_exists(partial));
  assert_false(file_exists(path));
  assert_no_open_ids();
}

/* A file-size limit passed while blocks go through the worker: the same
 * one-line error as without it, and destroy leaves nothing. */
static void test_size_limit_with_worker(void **state) {
  (void)state;
  char path[4096], partial[4200];
  fresh_path("limited_worker.h5", path, partial);
  struct rlimit old;
  if (!limit_file_size(&old))
    skip();
  h5w_options opts = {1024, 0, NULL, 0};
  tel_sink *s = h5w_create(path, &opts, NULL);
  assert_non_null(s);
  size_t id;
  assert_int_equal(tel_open_group(s, &facility, &id), SIM_OK);
  int rc = SIM_OK;
  uint64_t rng = 3;
  for (size_t i = 0; i < 400000 && rc == SIM_OK; i++) {
    double v[2] = {datum(RANDOM, i, 0, &rng), datum(RANDOM, i, 1, &rng)};
    rc = tel_append(s, id, (double)i, v);
  }
  assert_int_equal(rc, SIM_EIO);
  if (strstr(tel_errmsg(s), "file too large after ") == NULL)
    fail_msg("message \"%s\"", tel_errmsg(s));
  assert_failed_leaves_nothing(s, &old, path, partial);
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, test_pipeline_bytes, pipe_cases);
  TEST_ROWS(tests, n, test_same_bytes, same_cases);
  TEST_ADD(tests, n, test_wide_same_bytes);
  TEST_ADD(tests, n, test_destroy_with_queued_blocks);
  TEST_ADD(tests, n, test_size_limit_with_worker);
  return _cmocka_run_group_tests("record_deflate", tests, n, NULL, NULL);
}
