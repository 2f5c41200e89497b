/* file.c - whole-file reads and relative paths (file.h). */
#include "file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char *fail_null(sim_error *err, int code, const char *path,
                       const char *why) {
  sim_error_set(err, code, "%s: %s", path, why);
  return NULL;
}

/* What a file that is not regular is, for the message. */
static const char *kind(mode_t m) {
  if (S_ISDIR(m))
    return "a directory";
  if (S_ISFIFO(m))
    return "a FIFO";
  if (S_ISCHR(m) || S_ISBLK(m))
    return "a device";
  if (S_ISSOCK(m))
    return "a socket";
  return "not a regular file";
}

static char *not_regular(sim_error *err, const char *path, mode_t m) {
  sim_error_set(err, SIM_EIO, "%s: cannot open: not a regular file (%s)", path,
                kind(m));
  return NULL;
}

/* Opens path for reading only if it is a regular file: stat first, so a
 * FIFO is never opened (opening one blocks until a writer comes), then
 * O_NONBLOCK and fstat again, in case the name was swapped in between. */
static int open_regular(const char *path, struct stat *st, sim_error *err) {
  if (stat(path, st) != 0) {
    sim_error_set(err, SIM_EIO, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  if (!S_ISREG(st->st_mode)) {
    not_regular(err, path, st->st_mode);
    return -1;
  }
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    sim_error_set(err, SIM_EIO, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    close(fd);
    not_regular(err, path, st->st_mode);
    return -1;
  }
  return fd;
}

/* Reads len bytes of fd into buf, with a NUL after them; false on a
 * short read. */
static bool read_all(int fd, char *buf, size_t len) {
  size_t n = 0;
  while (n < len) {
    ssize_t r = read(fd, buf + n, len - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    n += (size_t)r;
  }
  buf[n] = '\0';
  return n == len;
}

char *sim_file_read(const char *path, size_t max, size_t *len, sim_error *err) {
  return sim_file_read_with(NULL, path, max, len, err);
}

char *sim_file_read_with(const sim_allocator *a, const char *path, size_t max,
                         size_t *len, sim_error *err) {
  struct stat st;
  int fd = open_regular(path, &st, err);
  if (fd < 0)
    return NULL;
  *len = (size_t)st.st_size;
  if (*len > max) {
    close(fd);
    sim_error_set(err, SIM_ERANGE, "%s: %zu bytes, more than %zu", path, *len,
                  max);
    return NULL;
  }
  /* Out of memory is the run's failure, not the input's (exit 1, not 2). */
  char *buf = sim_alloc(a, *len + 1);
  if (buf == NULL) {
    close(fd);
    return fail_null(err, SIM_ENOMEM, path, "out of memory reading it");
  }
  bool whole = read_all(fd, buf, *len);
  close(fd);
  if (whole)
    return buf;
  sim_free(a, buf);
  return fail_null(err, SIM_EIO, path, "cannot read");
}

void sim_path_dir(const char *path, char *out, size_t size) {
  const char *slash = strrchr(path, '/');
  if (slash == NULL)
    snprintf(out, size, "%s", "");
  else if (slash == path)
    snprintf(out, size, "%s", "/");
  else
    snprintf(out, size, "%.*s", (int)(slash - path), path);
}

void sim_path_beside(const char *base, const char *rel, char *out,
                     size_t size) {
  char dir[4096];
  sim_path_dir(base, dir, sizeof dir);
  if (rel[0] == '/' || dir[0] == '\0')
    snprintf(out, size, "%s", rel);
  else if (strcmp(dir, "/") == 0)
    snprintf(out, size, "/%s", rel);
  else
    snprintf(out, size, "%s/%s", dir, rel);
}
