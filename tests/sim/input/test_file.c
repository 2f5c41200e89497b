/* test_file.c - whole-file reads and paths beside a file. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

static void reads_whole_files_and_refuses_the_rest(void **state) {
  (void)state;
  const char *path = test_out_path("file.txt");
  FILE *f = fopen(path, "w");
  fputs("hello\nworld\n", f);
  fclose(f);
  size_t len = 0;
  sim_error err = {0};
  char *text = sim_file_read(path, 100, &len, &err);
  assert_non_null(text);
  assert_int_equal(len, 12);
  assert_string_equal(text, "hello\nworld\n");
  free(text);
  assert_null(sim_file_read(path, 5, &len, &err));
  assert_int_equal(err.code, SIM_ERANGE);
  assert_int_equal(len, 12);
  assert_null(sim_file_read("/nonexistent/x", 100, &len, &err));
  assert_int_equal(err.code, SIM_EIO);
  assert_non_null(strstr(err.msg, "/nonexistent/x: cannot open"));
  assert_null(sim_file_read("/tmp", 100, &len, &err));
  assert_non_null(strstr(err.msg, "not a regular file"));
}

/* The buffer that cannot be had is the run's failure (SIM_ENOMEM, exit
 * 1), not the input's: nothing is left allocated, and the next read on a
 * working allocator gets the file. */
static void out_of_memory_is_not_an_input_error(void **state) {
  (void)state;
  const char *path = test_out_path("file-oom.txt");
  FILE *f = fopen(path, "w");
  fputs("hello\n", f);
  fclose(f);
  size_t len = 0;
  sim_error err = {0};
  test_alloc t;
  test_alloc_init(&t, 1);
  assert_null(sim_file_read_with(&t.hook, path, 100, &len, &err));
  assert_int_equal(err.code, SIM_ENOMEM);
  assert_non_null(strstr(err.msg, "file-oom.txt: out of memory reading it"));
  assert_int_equal(t.live, 0);
  test_alloc_init(&t, 0);
  char *text = sim_file_read_with(&t.hook, path, 100, &len, &err);
  assert_non_null(text);
  assert_string_equal(text, "hello\n");
  sim_free(&t.hook, text);
  assert_int_equal(t.live, 0);
}

typedef struct path_case {
  const char *name;
  const char *base, *rel, *beside, *dir;
} path_case;

static const path_case paths[] = {
    {"nested", "scenarios/a.yaml", "data/x.csv", "scenarios/data/x.csv",
     "scenarios"},
    {"no folder", "a.yaml", "x.csv", "x.csv", ""},
    {"absolute", "scenarios/a.yaml", "/d/x.csv", "/d/x.csv", "scenarios"},
    {"at the root", "/a.yaml", "x.csv", "/x.csv", "/"},
    {"up", "s/t/a.yaml", "../x.csv", "s/t/../x.csv", "s/t"},
};

static void paths_beside_a_file(void **state) {
  const path_case *c = *state;
  char out[256];
  sim_path_beside(c->base, c->rel, out, sizeof out);
  assert_string_equal(out, c->beside);
  sim_path_dir(c->base, out, sizeof out);
  assert_string_equal(out, c->dir);
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ADD(tests, n, reads_whole_files_and_refuses_the_rest);
  TEST_ADD(tests, n, out_of_memory_is_not_an_input_error);
  TEST_ROWS(tests, n, paths_beside_a_file, paths);
  return _cmocka_run_group_tests("file", tests, n, NULL, NULL);
}
