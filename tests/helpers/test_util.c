/* test_util.c - shared helpers of the unit tests. */
#include "test_util.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void test_assert_close(double a, double b, double rel_tol, double abs_tol,
                       const char *a_text, const char *b_text, const char *file,
                       int line) {
  double scale = fmax(fabs(a), fabs(b));
  double tol = fmax(abs_tol, rel_tol * scale);
  if (fabs(a - b) <= tol && !isnan(a) && !isnan(b))
    return;
  print_error("%s = %.17g, %s = %.17g, |diff| = %.3g > tol %.3g\n", a_text, a,
              b_text, b, fabs(a - b), tol);
  _fail(file, line);
}

static void *counting_realloc(void *ctx, void *ptr, size_t size) {
  test_alloc *t = ctx;
  if (size == 0) {
    if (ptr != NULL)
      t->live--;
    free(ptr);
    return NULL;
  }
  t->calls++;
  if (t->fail_at > 0 && t->calls == t->fail_at)
    return NULL;
  void *p = realloc(ptr, size);
  if (p != NULL && ptr == NULL)
    t->live++;
  return p;
}

void test_alloc_init(test_alloc *t, long fail_at) {
  t->hook.realloc = counting_realloc;
  t->hook.ctx = t;
  t->fail_at = fail_at;
  t->calls = 0;
  t->live = 0;
}

long test_alloc_failures(const char *name, test_make_fn make, test_drop_fn drop,
                         void *ctx) {
  enum { MAX_ALLOCATIONS = 100000 };
  for (long k = 1; k <= MAX_ALLOCATIONS; k++) {
    test_alloc t;
    test_alloc_init(&t, k);
    sim_error err = {0};
    void *obj = make(&t.hook, ctx, &err);
    if (obj != NULL) {
      if (t.calls >= k)
        fail_msg("%s: allocation %ld failed, yet it succeeded", name, k);
      drop(obj);
      if (t.live != 0)
        fail_msg("%s: %ld blocks live after freeing", name, t.live);
      return t.calls;
    }
    if (err.code != SIM_ENOMEM || t.live != 0)
      fail_msg("%s: allocation %ld of %ld failed: got %s (%s), %ld blocks "
               "live; want SIM_ENOMEM, none",
               name, k, t.calls, sim_err_name(err.code), err.msg, t.live);
  }
  fail_msg("%s: still failing after %d allocations", name, MAX_ALLOCATIONS);
  return 0;
}

const char *test_out_path(const char *name) {
  static char path[8192];
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/tests/out", AIFSIM_TEST_BINARY_DIR);
  mkdir(dir, 0777);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return path;
}

const char *test_data_path(const char *rel) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/data/%s", AIFSIM_TEST_SOURCE_DIR, rel);
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
    fail_msg("data file %s is missing (the repository's data/ folder)", path);
  return path;
}

FILE *test_data_open(const char *rel) {
  const char *path = test_data_path(rel);
  FILE *f = fopen(path, "r");
  if (f == NULL)
    fail_msg("cannot open %s", path);
  return f;
}

void test_schema_rejects(const scn_schema *schema, const char *file,
                         const char *yaml, const char *want) {
  void *obj = calloc(1, schema->size);
  sim_error err = {0};
  int rc = scn_bind_string(file, yaml, schema, obj, NULL, &err);
  if (rc == SIM_OK)
    scn_release(schema, obj);
  free(obj);
  if (rc != SIM_EINPUT || strstr(err.msg, want) == NULL)
    fail_msg("'%s': got %d '%s', want SIM_EINPUT with '%s'", yaml, rc, err.msg,
             want);
}

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif

/* The address space this process maps now (VmSize), in bytes; 0 if the
 * kernel does not say. */
static size_t mapped_bytes(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  unsigned long kb = 0;
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "VmSize: %lu kB", &kb) == 1)
      break;
  if (f != NULL)
    fclose(f);
  return (size_t)kb * 1024;
}

int test_with_room(size_t room, int (*fn)(void *ctx), void *ctx) {
#ifdef TEST_ASAN
  skip();
#endif
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0)
    fail_msg("fork: cannot");
  if (pid == 0) {
    /* A crash in the child is a crash (-1 to the caller): cmocka's
     * handlers, inherited, would report it as a failed test and carry on
     * running the tests in the child, at the limit, to whatever exit
     * status that happens to reach (test_scenario's children read 1, the
     * status of a failure it expects, from libfyaml's crash). */
    static const int crashes[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof crashes / sizeof crashes[0]; i++)
      signal(crashes[i], SIG_DFL);
    size_t now = mapped_bytes();
    struct rlimit r;
    if (now == 0 || getrlimit(RLIMIT_AS, &r) != 0)
      _exit(254);
    r.rlim_cur = now + room;
    if (setrlimit(RLIMIT_AS, &r) != 0)
      _exit(254);
    _exit(fn(ctx) & 0xff);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      fail_msg("waitpid: %s", strerror(errno));
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
