/* fuzz_input.h - the loaders read files: a fuzz input goes to one file
 * in a private folder (made once per process), rewritten for each input.
 * Shared by the fuzz targets (tests/fuzz); no part of the program. */
#ifndef FUZZ_INPUT_H
#define FUZZ_INPUT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes size bytes of data to NAME in the process's folder and returns
 * its path (static storage; valid until the next call), or NULL. */
static inline const char *fuzz_write(const char *name, const uint8_t *data,
                                     size_t size) {
  static char dir[256];
  static char path[512];
  if (dir[0] == '\0') {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/aifsim-fuzz-XXXXXX",
             tmp != NULL ? tmp : "/tmp");
    if (mkdtemp(dir) == NULL)
      return NULL;
  }
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL)
    return NULL;
  size_t put = size > 0 ? fwrite(data, 1, size, f) : 0;
  if (fclose(f) != 0 || put != size)
    return NULL;
  return path;
}

/* Splits data at its NUL bytes: the first part is the file, the others
 * (up to max) --set overrides, copied into sets[] (free with
 * fuzz_sets_free). Returns the length of the first part. */
static inline size_t fuzz_split(const uint8_t *data, size_t size,
                                char **sets, size_t max, size_t *nsets) {
  const uint8_t *nul = memchr(data, 0, size);
  size_t head = nul != NULL ? (size_t)(nul - data) : size;
  *nsets = 0;
  size_t at = head;
  while (at < size && *nsets < max) {
    at++; /* the NUL */
    const uint8_t *end = memchr(data + at, 0, size - at);
    size_t len = end != NULL ? (size_t)(end - (data + at)) : size - at;
    char *s = malloc(len + 1);
    if (s == NULL)
      break;
    memcpy(s, data + at, len);
    s[len] = '\0';
    sets[(*nsets)++] = s;
    at += len;
  }
  return head;
}

static inline void fuzz_sets_free(char **sets, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(sets[i]);
}

#endif
