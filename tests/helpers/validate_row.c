/* validate_row.c - rows of docs/VALIDATION.md (validate_row.h). */
#include "validate_row.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Appends s to buf at *len with tabs and newlines turned into spaces,
 * then a tab. */
static void put_field(char *buf, size_t size, size_t *len, const char *s) {
  for (; s != NULL && *s != '\0' && *len + 2 < size; s++)
    buf[(*len)++] = (*s == '\t' || *s == '\n' || *s == '\r') ? ' ' : *s;
  if (*len + 1 < size)
    buf[(*len)++] = '\t';
  buf[*len] = '\0';
}

const char *validate_kind_name(validate_kind kind) {
  switch (kind) {
  case VALIDATE_KIND_IDENTITY:
    return "identity";
  case VALIDATE_KIND_CALIBRATION:
    return "calibration";
  case VALIDATE_KIND_BAR:
    return "bar";
  case VALIDATE_KIND_VALIDATION:
    return "validation";
  }
  return "?";
}

void validate_row(validate_kind kind, const char *basis, const char *topic,
                  const char *figure, const char *source,
                  const char *conditions, const char *unit, double published,
                  double model, double lo, double hi, const char *band_text) {
  const char *path = getenv("AIFSIM_VALIDATE");
  if (path == NULL || path[0] == '\0')
    return;
  char buf[4096];
  size_t len = 0;
  put_field(buf, sizeof buf, &len, "VALIDATE");
  put_field(buf, sizeof buf, &len, validate_kind_name(kind));
  put_field(buf, sizeof buf, &len, basis);
  put_field(buf, sizeof buf, &len, topic);
  put_field(buf, sizeof buf, &len, figure);
  put_field(buf, sizeof buf, &len, source);
  put_field(buf, sizeof buf, &len, conditions);
  put_field(buf, sizeof buf, &len, unit);
  int k = snprintf(buf + len, sizeof buf - len, "%.17g\t%.17g\t%.17g\t%.17g\t",
                   published, model, lo, hi);
  if (k > 0 && (size_t)k < sizeof buf - len)
    len += (size_t)k;
  put_field(buf, sizeof buf, &len, band_text);
  buf[len - 1] = '\n'; /* the last tab */
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0666);
  if (fd < 0) {
    fprintf(stderr, "AIFSIM_VALIDATE: cannot open %s\n", path);
    return;
  }
  if (write(fd, buf, len) != (ssize_t)len)
    fprintf(stderr, "AIFSIM_VALIDATE: cannot write %s\n", path);
  close(fd);
}

void validate_row_rel(validate_kind kind, const char *basis, const char *topic,
                      const char *figure, const char *source,
                      const char *conditions, const char *unit,
                      double published, double model, double rel) {
  char band[32];
  snprintf(band, sizeof band, "+-%g%%", 100 * rel);
  validate_row(kind, basis, topic, figure, source, conditions, unit, published,
               model, published * (1 - rel), published * (1 + rel), band);
}
