/* test_writelock.c - one writer per output path: the lock is taken whole,
 * refused to a second taker with the holder named, released; a lock whose
 * holder is gone (this host, a dead pid, a reboot) is taken over; one held
 * from another host, or one that does not say who holds it, is not. */
#include "test_util.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "writelock.h"

static const char *fresh(const char *name) {
  static char path[4096];
  snprintf(path, sizeof path, "%s", test_out_path(name));
  char lock[4200];
  snprintf(lock, sizeof lock, "%s.lock", path);
  unlink(lock);
  return path;
}

static void write_lock(const char *path, const char *text) {
  char lock[4200];
  snprintf(lock, sizeof lock, "%s.lock", path);
  FILE *f = fopen(lock, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static bool lock_exists(const char *path) {
  char lock[4200];
  snprintf(lock, sizeof lock, "%s.lock", path);
  return access(lock, F_OK) == 0;
}

static void taken_refused_released(void **state) {
  (void)state;
  const char *path = fresh("wlock-a.h5");
  wlock a, b;
  sim_error err = {0};
  assert_int_equal(wlock_take(&a, path, &err), SIM_OK);
  assert_true(wlock_held(&a) && lock_exists(path));
  assert_int_equal(wlock_take(&b, path, &err), SIM_EBUSY);
  assert_false(wlock_held(&b));
  char want[64];
  snprintf(want, sizeof want, "pid %ld", (long)getpid());
  assert_non_null(strstr(err.msg, "wlock-a.h5.lock"));
  assert_non_null(strstr(err.msg, want));
  wlock_release(&a);
  wlock_release(&a); /* twice is fine */
  assert_false(wlock_held(&a) || lock_exists(path));
  assert_int_equal(wlock_take(&b, path, &err), SIM_OK);
  wlock_release(&b);
}

/* The pid of a process that has ended. */
static long dead_pid(void) {
  pid_t pid = fork();
  if (pid == 0)
    _exit(0);
  waitpid(pid, NULL, 0);
  return (long)pid;
}

typedef struct stale_case {
  const char *name;
  const char *fmt; /* the lock's text: %ld the pid, %s this host */
  bool dead;       /* of a process that has ended (else of this one) */
  int code;        /* of a take over it */
  const char *msg;
} stale_case;

static const stale_case stales[] = {
    {"a dead process on this host",
     "aifsim-lock 1\npid %ld\nhost %s\nboot \nstart 0\n", true, SIM_OK, ""},
    {"before a reboot",
     "aifsim-lock 1\npid %ld\nhost %s\nboot not-this-boot\nstart 0\n", false,
     SIM_OK, ""},
    {"a reused pid", "aifsim-lock 1\npid %ld\nhost %s\nboot \nstart 1\n", false,
     SIM_OK, ""},
    {"another host",
     "aifsim-lock 1\npid %ld\nhost elsewhere-%s\nboot \nstart 0\n", true,
     SIM_EBUSY, "on host elsewhere-"},
    {"a lock that says nothing", "", true, SIM_EBUSY,
     "does not say who holds it"},
};

static void stale_locks_are_taken_over(void **state) {
  const stale_case *c = *state;
  const char *path = fresh("wlock-stale.h5");
  char host[256] = "", text[1024];
  gethostname(host, sizeof host - 1);
  snprintf(text, sizeof text, c->fmt, c->dead ? dead_pid() : (long)getpid(),
           host);
  write_lock(path, text);
  wlock lk;
  sim_error err = {0};
  int rc = wlock_take(&lk, path, &err);
  if (rc != c->code || strstr(err.msg, c->msg) == NULL)
    fail_msg("got %d '%s', want %d '%s'", rc, err.msg, c->code, c->msg);
  wlock_release(&lk);
  fresh("wlock-stale.h5");
}

static void bad_paths(void **state) {
  (void)state;
  char longpath[5000];
  memset(longpath, 'a', sizeof longpath - 1);
  longpath[sizeof longpath - 1] = '\0';
  wlock lk;
  sim_error err = {0};
  assert_int_equal(wlock_take(&lk, longpath, &err), SIM_EINVAL);
  assert_int_equal(wlock_take(&lk, "/no/such/dir/x.h5", &err), SIM_EIO);
  assert_non_null(strstr(err.msg, "/no/such/dir/x.h5.lock"));
  assert_false(wlock_held(&lk));
}

int main(void) {
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ADD(tests, n, taken_refused_released);
  TEST_ROWS(tests, n, stale_locks_are_taken_over, stales);
  TEST_ADD(tests, n, bad_paths);
  return _cmocka_run_group_tests("writelock", tests, n, NULL, NULL);
}
