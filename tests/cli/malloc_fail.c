/* malloc_fail.c - a preloaded malloc that fails from the Nth call on, for
 * test_reliability.sh: every allocation of the process (aifsim's, HDF5's,
 * libfyaml's, on any thread) counts, and from AIFSIM_FAIL_AT on each one
 * fails with ENOMEM, as under an address-space limit but at any point of
 * the run, not only where the heap happens to grow. Unset or 0: never.
 * AIFSIM_FAIL_COUNT names a file the count of calls is written to at exit.
 *
 *   cc -shared -fPIC -o malloc_fail.so malloc_fail.c -ldl
 *   AIFSIM_FAIL_AT=20000 LD_PRELOAD=./malloc_fail.so aifsim run ...
 *
 * calloc is left to the C library: dlsym itself allocates with it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_long calls;
static long fail_at = -1;

static int failing(void) {
  if (fail_at < 0) {
    const char *s = getenv("AIFSIM_FAIL_AT");
    fail_at = s != NULL ? atol(s) : 0;
  }
  if (atomic_fetch_add(&calls, 1) + 1 >= fail_at && fail_at > 0) {
    errno = ENOMEM;
    return 1;
  }
  return 0;
}

void *malloc(size_t size) {
  static void *(*next)(size_t);
  if (next == NULL)
    next = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
  return failing() ? NULL : next(size);
}

void *realloc(void *p, size_t size) {
  static void *(*next)(void *, size_t);
  if (next == NULL)
    next = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
  return failing() ? NULL : next(p, size);
}

__attribute__((destructor)) static void write_count(void) {
  const char *path = getenv("AIFSIM_FAIL_COUNT");
  FILE *f = path != NULL && fail_at <= 0 ? fopen(path, "w") : NULL;
  if (f != NULL) {
    fprintf(f, "%ld\n", (long)atomic_load(&calls));
    fclose(f);
  }
}
