/* csv.c - the data-file reader of csv.h. */
#include "csv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

/* The UTF-8 byte-order mark some tools (Excel among them) write first. */
static const char bom[] = "\xEF\xBB\xBF";

/* Reports the first NUL byte of text at its line and column. */
static int nul_byte(csv_reader *r, size_t len) {
  const char *nul = memchr(r->text, '\0', len);
  long line = 1;
  const char *start = r->text;
  for (const char *p = r->text; p < nul; p++)
    if (*p == '\n') {
      line++;
      start = p + 1;
    }
  int rc =
      sim_error_set(r->err, SIM_EINPUT, "%s:%ld:%ld: NUL byte: not a text file",
                    r->path, line, (long)(nul - start) + 1);
  csv_close(r);
  return rc;
}

int csv_open(csv_reader *r, const char *path, size_t max, sim_error *err) {
  size_t len = 0;
  *r = (csv_reader){.path = path, .err = err};
  r->text = sim_file_read(path, max, &len, err);
  if (r->text == NULL && err != NULL && err->code == SIM_ERANGE)
    return sim_error_set(err, SIM_EINPUT,
                         "%s:1:1: %zu bytes, more than the %zu a data file "
                         "may have",
                         path, len, max);
  if (r->text == NULL)
    return err != NULL ? err->code : SIM_EIO;
  if (memchr(r->text, '\0', len) != NULL)
    return nul_byte(r, len);
  r->cur = r->text;
  if (len >= 3 && memcmp(r->text, bom, 3) == 0)
    r->cur += 3;
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

/* ------------------------------------------------------------------ */
/* Numbers                                                             */
/* ------------------------------------------------------------------ */

static const char *skip_spaces(const char *p) {
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

static size_t digit_run(const char *p) {
  size_t n = 0;
  while (isdigit((unsigned char)p[n]))
    n++;
  return n;
}

/* The length of the plain decimal number at p ([+-]digits[.digits]
 * [(e|E)[+-]digits], a digit on one side of the point at least), or 0
 * when none starts there. strtod alone would also take hex, inf and nan. */
static size_t decimal_length(const char *p) {
  const char *q = p + (*p == '+' || *p == '-');
  size_t whole = digit_run(q), frac = 0;
  q += whole;
  if (*q == '.') {
    frac = digit_run(q + 1);
    q += 1 + frac;
  }
  if (whole + frac == 0)
    return 0;
  if (*q == 'e' || *q == 'E') {
    const char *e = q + 1 + (q[1] == '+' || q[1] == '-');
    size_t n = digit_run(e);
    if (n == 0)
      return 0;
    q = e + n;
  }
  return (size_t)(q - p);
}

/* Whether field is a plain decimal number, spaces around it allowed;
 * *start and *len give the number itself. */
static bool plain_decimal(const char *field, const char **start, int *len) {
  *start = skip_spaces(field);
  size_t n = decimal_length(*start);
  *len = (int)n;
  return n > 0 && *skip_spaces(*start + n) == '\0';
}

/* A header field that reads as data: a number, or digits with the
 * punctuation of a date or time ("2023-06-01 00:00"). */
static bool looks_like_data(const char *field, bool *number) {
  const char *start;
  int len;
  *number = plain_decimal(field, &start, &len);
  if (*number)
    return true;
  bool digit = false;
  for (const char *p = field; *p != '\0'; p++) {
    if (strchr("0123456789+-.:/ TZ", *p) == NULL)
      return false;
    digit |= isdigit((unsigned char)*p) != 0;
  }
  return digit;
}

int csv_header(csv_reader *r, char **h, size_t *n, const char *want) {
  char *line = csv_next_line(r);
  if (line == NULL)
    return csv_fail(r, NULL, NULL,
                    "the file is empty; expected a header naming columns %s",
                    want);
  *n = csv_split(line, h);
  bool number;
  for (size_t i = 0; i < *n; i++)
    if (looks_like_data(h[i], &number))
      return csv_fail(r, h[i], NULL,
                      "expected a header naming columns %s; found a %s", want,
                      number ? "number" : "time");
  return SIM_OK;
}

int csv_number(csv_reader *r, const char *field, const char *column,
               const csv_range *range, double scale, double *out) {
  const char *num;
  int len;
  if (!plain_decimal(field, &num, &len))
    return csv_fail(r, field, column,
                    "not a plain decimal number (such as 12.5 or -3e2)");
  double v = strtod(num, NULL) * scale;
  bool in = range == NULL ? isfinite(v) : v >= range->min && v <= range->max;
  if (in) {
    *out = v;
    return SIM_OK;
  }
  char product[64] = "";
  if (scale != 1)
    snprintf(product, sizeof product, " x scale %g = %g", scale, v);
  if (range == NULL)
    return csv_fail(r, field, column, "%.*s%s is not a finite number", len, num,
                    product);
  return csv_fail(r, field, column, "%.*s%s %s is outside %g..%g %s, %s", len,
                  num, product, range->unit, range->min, range->max,
                  range->unit, range->what);
}

int csv_count(csv_reader *r, const char *field, const char *column, int64_t max,
              const char *unit, int64_t *out) {
  const char *p = skip_spaces(field);
  size_t n = digit_run(p);
  if (n == 0 || *skip_spaces(p + n) != '\0')
    return csv_fail(r, field, column, "not a whole number of %s (digits only)",
                    unit);
  errno = 0;
  long long v = strtoll(p, NULL, 10);
  if (errno == ERANGE || v > max)
    return csv_fail(r, field, column, "%.*s %s is outside 0..%lld %s", (int)n,
                    p, unit, (long long)max, unit);
  *out = (int64_t)v;
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

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
  long line = r->line > 0 ? r->line : 1;
  if (column != NULL)
    return sim_error_set(r->err, SIM_EINPUT, "%s:%ld:%ld: column '%s': %s",
                         r->path, line, col, column, msg);
  return sim_error_set(r->err, SIM_EINPUT, "%s:%ld:%ld: %s", r->path, line, col,
                       msg);
}
