/* csv.c - the data-file reader of csv.h. */
#include "csv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

int csv_open(csv_reader *r, const char *path, size_t max, sim_error *err) {
  size_t len = 0;
  *r = (csv_reader){.path = path, .err = err};
  r->text = sim_file_read(path, max, &len, err);
  if (r->text == NULL) {
    if (err != NULL && err->code == SIM_ERANGE)
      err->code = SIM_EINPUT;
    return err != NULL ? err->code : SIM_EIO;
  }
  if (memchr(r->text, '\0', len) != NULL) {
    csv_close(r);
    return sim_error_set(err, SIM_EINPUT, "%s: NUL byte: not a text file",
                         path);
  }
  r->cur = r->text;
  return SIM_OK;
}

void csv_close(csv_reader *r) {
  free(r->text);
  r->text = r->cur = NULL;
}

char *csv_next_line(csv_reader *r) {
  if (r->cur == NULL || *r->cur == '\0')
    return NULL;
  char *line = r->line_start = r->cur;
  char *nl = strchr(line, '\n');
  r->cur = nl != NULL ? nl + 1 : NULL;
  if (nl != NULL)
    *nl = '\0';
  size_t len = strlen(line);
  if (len > 0 && line[len - 1] == '\r')
    line[len - 1] = '\0';
  r->line++;
  return line;
}

size_t csv_split(char *line, char **fields) {
  size_t n = 0;
  for (char *p = line; n < CSV_MAX_FIELDS;) {
    fields[n++] = p;
    p = strchr(p, ',');
    if (p == NULL)
      break;
    *p++ = '\0';
  }
  return n;
}

long csv_column(char **header, size_t n, const char *name) {
  if (name[0] == '#') {
    char *end;
    long k = strtol(name + 1, &end, 10);
    return *end == '\0' && k >= 1 && (size_t)k <= n ? k - 1 : -1;
  }
  for (size_t i = 0; i < n; i++)
    if (strcmp(header[i], name) == 0)
      return (long)i;
  return -1;
}

int csv_fail(csv_reader *r, const char *field, const char *column,
             const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  long col = field != NULL && r->line_start != NULL && field >= r->line_start
                 ? (long)(field - r->line_start) + 1
                 : 1;
  if (column != NULL)
    return sim_error_set(r->err, SIM_EINPUT, "%s:%ld:%ld: column '%s': %s",
                         r->path, r->line, col, column, msg);
  return sim_error_set(r->err, SIM_EINPUT, "%s:%ld:%ld: %s", r->path, r->line,
                       col, msg);
}
