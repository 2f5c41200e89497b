/* h5check.c - a run file checked in a child process (h5r_run_check in
 * h5read.h). HDF5 trusts the bytes it reads: one flipped bit in a damaged
 * file can make it read out of bounds and crash (a red team found one that
 * did, in a sweep's resume and --collect), or loop. So the parent never
 * opens a point file with HDF5: a child does everything, and sends back
 * what it found through a pipe as a short binary message. The child is
 * a fork, not an exec: nothing to find on the path, and the parent's
 * HDF5 state is copied, never shared.
 *
 * Message: int32 code, then the error text (u32 length, bytes); on
 * SIM_OK, int64 complete, the format and the scenario (each u32 length
 * or UINT32_MAX for absent, bytes), u32 metric count, then per metric
 * its name (u32 length, bytes) and value (double). A child that dies of
 * a signal, exits early or sends a short message found the file
 * damaged. */
#include "h5read.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seal.h"

#define ABSENT UINT32_MAX

/* Seconds the child may take: a minute, and a second per 20 MB (HDF5
 * reads and inflates some 100 MB/s on one core). */
static unsigned time_limit(const char *path) {
  struct stat st;
  double mb = stat(path, &st) == 0 ? (double)st.st_size / 1e6 : 0;
  return 60 + (unsigned)(mb / 20);
}

/* ---- The message ------------------------------------------------------- */

typedef struct buf {
  char *data;
  size_t len, cap;
  bool failed;
} buf;

static void put(buf *b, const void *p, size_t n) {
  if (b->failed || n == 0)
    return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 4096;
    while (cap < b->len + n)
      cap *= 2;
    char *d = realloc(b->data, cap);
    if (d == NULL) {
      b->failed = true;
      return;
    }
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

static void put_text(buf *b, const char *s) {
  uint32_t n = s != NULL ? (uint32_t)strlen(s) : ABSENT;
  put(b, &n, sizeof n);
  if (s != NULL)
    put(b, s, n);
}

static void put_run(buf *b, const h5r_run *r) {
  uint32_t n = (uint32_t)r->nmetrics;
  put(b, &r->complete, sizeof r->complete);
  put_text(b, r->format);
  put_text(b, r->scenario);
  put_text(b, r->units);
  put(b, &n, sizeof n);
  for (size_t i = 0; i < r->nmetrics; i++) {
    put_text(b, r->names[i]);
    put(b, &r->values[i], sizeof r->values[i]);
  }
}

/* A reader over the message; any short read marks it failed. */
typedef struct cursor {
  const char *p, *end;
  bool failed;
} cursor;

static void get(cursor *c, void *out, size_t n) {
  if (c->failed || (size_t)(c->end - c->p) < n) {
    c->failed = true;
    memset(out, 0, n);
    return;
  }
  memcpy(out, c->p, n);
  c->p += n;
}

/* A malloc'd copy of a text of the message; NULL when absent or failed. */
static char *get_text(cursor *c) {
  uint32_t n;
  get(c, &n, sizeof n);
  if (c->failed || n == ABSENT)
    return NULL;
  char *s = (size_t)(c->end - c->p) >= n ? malloc((size_t)n + 1) : NULL;
  if (s == NULL) {
    c->failed = true;
    return NULL;
  }
  get(c, s, n);
  s[n] = '\0';
  return s;
}

static void get_run(cursor *c, h5r_run *r) {
  uint32_t n;
  get(c, &r->complete, sizeof r->complete);
  r->format = get_text(c);
  r->scenario = get_text(c);
  r->units = get_text(c);
  get(c, &n, sizeof n);
  if (!c->failed && n <= (size_t)(c->end - c->p)) {
    r->names = calloc((size_t)n + 1, sizeof *r->names);
    r->values = calloc((size_t)n + 1, sizeof *r->values);
  }
  c->failed = c->failed || r->names == NULL || r->values == NULL;
  for (uint32_t i = 0; i < n && !c->failed; i++) {
    r->names[i] = get_text(c);
    get(c, &r->values[i], sizeof r->values[i]);
    c->failed = c->failed || r->names[i] == NULL;
    r->nmetrics = i + 1;
  }
}

/* ---- The child --------------------------------------------------------- */

/* What the child does: everything that touches the file. */
static int check_here(const char *path, h5r_run *r, sim_error *err) {
  int rc = seal_check(path, err);
  if (rc == SIM_OK)
    rc = h5r_run_read(path, r, err);
  if (rc == SIM_OK &&
      (r->format == NULL || strcmp(r->format, H5R_RUN_FORMAT) != 0))
    rc = sim_error_set(err, SIM_ENOTFOUND,
                       "%s: not an aifsim run file (root attribute format is "
                       "'%s', not '%s')",
                       path, r->format ? r->format : "absent", H5R_RUN_FORMAT);
  if (rc == SIM_OK)
    rc = h5r_run_verify(path, err);
  return rc;
}

static void write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    p += w;
    n -= (size_t)w;
  }
}

/* The child's whole life; it never returns. The parent's signal handlers
 * and timer are not its own: a stop signal ends it at once, a crash ends
 * it (a handler the parent has for SIGSEGV, a test harness's, would go on
 * in the child), and the time limit is an alarm whose default action ends
 * it too. */
static void child(const char *path, int fd) {
  static const int sigs[] = {SIGINT,  SIGTERM, SIGHUP,  SIGXCPU, SIGALRM,
                             SIGSEGV, SIGBUS,  SIGABRT, SIGFPE,  SIGILL};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
    signal(sigs[i], SIG_DFL);
  alarm(time_limit(path));
  h5r_run r;
  sim_error err = {0};
  buf b = {0};
  int32_t code = check_here(path, &r, &err);
  put(&b, &code, sizeof code);
  put_text(&b, err.msg);
  if (code == SIM_OK)
    put_run(&b, &r);
  if (!b.failed)
    write_all(fd, b.data, b.len);
  _exit(b.failed ? 3 : 0); /* no atexit: HDF5's are the parent's */
}

/* ---- The parent -------------------------------------------------------- */

/* Reads fd to its end into b. */
static void read_all(int fd, buf *b) {
  char chunk[65536];
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    put(b, chunk, (size_t)n);
  }
}

/* Why a child that did not report found the file unreadable. */
static int child_failed(const char *path, int status, sim_error *err) {
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    return sim_error_set(err, SIM_EIO,
                         "%s: damaged: reading it did not finish in %u s", path,
                         time_limit(path));
  if (WIFSIGNALED(status))
    return sim_error_set(err, SIM_EIO,
                         "%s: damaged: reading it crashed HDF5 (signal %d)",
                         path, WTERMSIG(status));
  return sim_error_set(err, SIM_EIO, "%s: damaged: its reader failed", path);
}

/* Turns the child's message into the result. */
static int take_message(const char *path, const buf *b, int status,
                        h5r_run *out, sim_error *err) {
  cursor c = {b->data, b->data + b->len, false};
  int32_t code;
  get(&c, &code, sizeof code);
  char *msg = get_text(&c);
  if (!c.failed && code == SIM_OK)
    get_run(&c, out);
  int rc = c.failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0
               ? child_failed(path, status, err)
           : code != SIM_OK ? sim_error_set(err, code, "%s", msg ? msg : "")
                            : SIM_OK;
  free(msg);
  return rc;
}

int h5r_run_check(const char *path, h5r_run *out, sim_error *err) {
  int fds[2], status = 0;
  buf b = {0};
  memset(out, 0, sizeof *out);
  fflush(NULL); /* nothing buffered is written twice */
  if (pipe(fds) != 0)
    return sim_error_set(err, SIM_EIO, "%s: cannot check it: %s", path,
                         strerror(errno));
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    child(path, fds[1]);
  }
  close(fds[1]);
  if (pid > 0)
    read_all(fds[0], &b);
  close(fds[0]);
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
    continue;
  int rc = pid < 0    ? sim_error_set(err, SIM_EIO, "%s: cannot check it: %s",
                                      path, strerror(errno))
           : b.failed ? sim_error_set(err, SIM_ENOMEM, "out of memory")
                      : take_message(path, &b, status, out, err);
  free(b.data);
  if (rc != SIM_OK)
    h5r_run_release(out);
  return rc;
}
