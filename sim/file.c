/* file.c - whole-file reads and relative paths (file.h). */
#include "file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *fail_null(sim_error *err, int code, const char *path,
                       const char *why) {
  sim_error_set(err, code, "%s: %s", path, why);
  return NULL;
}

char *sim_file_read(const char *path, size_t max, size_t *len, sim_error *err) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    sim_error_set(err, SIM_EIO, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return fail_null(err, SIM_EIO, path, "cannot open: not a regular file");
  }
  *len = (size_t)st.st_size;
  if (*len > max) {
    fclose(f);
    sim_error_set(err, SIM_ERANGE, "%s: %zu bytes, more than %zu", path, *len,
                  max);
    return NULL;
  }
  char *buf = malloc(*len + 1);
  size_t n = buf != NULL ? fread(buf, 1, *len, f) : 0;
  int bad = buf == NULL || n != *len || ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return fail_null(err, SIM_EIO, path, "cannot read");
  }
  buf[n] = '\0';
  return buf;
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
