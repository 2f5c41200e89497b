/* test_util.h - what every cmocka test here shares.
 * cmocka 1.1.5's assert_float_equal converts to float, so doubles go
 * through assert_close, which prints both values on failure. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "alloc.h"
#include "scenario.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Registers fn as the next test of tests[n]. */
#define TEST_ADD(tests, n, fn)                                                 \
  ((tests)[(n)++] = (struct CMUnitTest)cmocka_unit_test(fn))

/* Registers fn once per row of table (a static array whose rows begin
 * with a `name`), with the row as the test's state: table-driven tests. */
#define TEST_ROWS(tests, n, fn, table)                                         \
  for (size_t row_ = 0; row_ < sizeof(table) / sizeof((table)[0]); row_++) {   \
    (tests)[n] = (struct CMUnitTest)cmocka_unit_test_prestate(                 \
        fn, (void *)&(table)[row_]);                                           \
    (tests)[(n)++].name = (table)[row_].name;                                  \
  }

/* A fragment a schema must refuse, and a part of the message it must
 * give (a FILE:LINE:COLUMN: prefix, the problem's words). */
typedef struct test_bad_yaml {
  const char *name;
  const char *yaml;
  const char *message;
} test_bad_yaml;

/* Binds yaml (called file in messages) against schema and fails unless it
 * is refused with SIM_EINPUT and a message that starts with file's
 * position and contains want. */
void test_schema_rejects(const scn_schema *schema, const char *file,
                         const char *yaml, const char *want);

/* Fails unless |a - b| <= max(abs_tol, rel_tol * max(|a|, |b|)). */
#define assert_close(a, b, rel_tol, abs_tol)                                   \
  test_assert_close((a), (b), (rel_tol), (abs_tol), #a, #b, __FILE__, __LINE__)

void test_assert_close(double a, double b, double rel_tol, double abs_tol,
                       const char *a_text, const char *b_text, const char *file,
                       int line);

/* An allocator that fails the k-th allocation (1-based; 0 never fails) and
 * counts what is live, so tests can check that constructors clean up. */
typedef struct test_alloc {
  sim_allocator hook; /* pass &t.hook where an allocator is wanted */
  long fail_at;
  long calls;
  long live;
} test_alloc;

void test_alloc_init(test_alloc *t, long fail_at);

/* Builds an object on allocator a; returns it, or NULL with err set. */
typedef void *(*test_make_fn)(const sim_allocator *a, void *ctx,
                              sim_error *err);
/* Frees what a test_make_fn built. */
typedef void (*test_drop_fn)(void *obj);

/* The allocation-failure test of a constructor: for k = 1, 2, ... fails
 * the k-th allocation of make until make succeeds, and fails the running
 * test unless each failure returned NULL with SIM_ENOMEM and left no block
 * live. Then frees the object with drop and checks that nothing is left.
 * name is for messages. Returns the allocations a successful make took. */
long test_alloc_failures(const char *name, test_make_fn make, test_drop_fn drop,
                         void *ctx);

/* Runs fn(ctx) in a child process whose address space (RLIMIT_AS) stops
 * room bytes above what it had mapped at the fork: out of memory for real,
 * for allocations no allocator hook reaches (libfyaml's, HDF5's). Returns
 * fn's result (0..255; it must not use cmocka's asserts), or -1 when the
 * child did not exit (a crash). Skips the running test under
 * AddressSanitizer, whose shadow memory no such limit admits. */
int test_with_room(size_t room, int (*fn)(void *ctx), void *ctx);

/* A fresh path under the build tree's tests folder for output files:
 * AIFSIM_BINARY_DIR/tests/out/NAME. Returns a static buffer. */
const char *test_out_path(const char *name);

/* The path of a file under the repository's data/ folder (e.g.
 * "carbon/DE-LU_2023_hourly.csv"). Fails the running test, naming the
 * path, when the file is not there: a test that needs data never skips.
 * Returns a static buffer, valid until the next call. */
const char *test_data_path(const char *rel);

/* test_data_path(rel) opened for reading; fails the test if it cannot be. */
FILE *test_data_open(const char *rel);

#endif
