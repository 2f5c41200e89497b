/* csv.h - reading the comma-separated data files the models draw on (grid
 * signals, request traces): lines and fields in place, columns by header
 * name, numbers checked against a physical range, and every message as
 * FILE:LINE:COL: column 'NAME': ...
 *
 * One behaviour for every reader: a UTF-8 byte-order mark at the start is
 * skipped, lines may end in LF or CRLF, numbers are plain decimals (no hex,
 * inf or nan), and a message never quotes a field that did not read as
 * what was expected, so a file of another kind is never echoed. */
#ifndef SIM_CSV_H
#define SIM_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Fields per line the reader splits; data files here have a dozen. */
#define CSV_MAX_FIELDS 64

typedef struct csv_reader {
  const char *path;
  char *text; /* the whole file, cut up in place as lines are read */
  char *cur;
  long line;        /* of the line last returned, 1-based */
  char *line_start; /* of that line, for the column of a field */
  sim_error *err;
} csv_reader;

/* The physical range of a column's values, with the unit they are in and
 * what they are, for messages ("a carbon intensity"). */
typedef struct csv_range {
  double min, max;
  const char *unit;
  const char *what;
} csv_range;

/* Reads the file at path (at most max bytes; NUL bytes refused), skipping
 * a UTF-8 byte-order mark. SIM_OK, SIM_EIO when it cannot be read,
 * SIM_EINPUT when it is not text or too large (FILE:LINE:COL of the NUL
 * byte, FILE:1:1 for the size). err is kept for csv_fail. Free with
 * csv_close. */
int csv_open(csv_reader *r, const char *path, size_t max, sim_error *err);

void csv_close(csv_reader *r);

/* The next line without its line ending, NUL-terminated in place; NULL
 * at the end of the file. */
char *csv_next_line(csv_reader *r);

/* Splits line at its commas in place (no quoting: none of these files
 * quote) into at most CSV_MAX_FIELDS fields; returns how many. */
size_t csv_split(char *line, char **fields);

/* Reads the first line as the header and splits it into h (*n fields).
 * SIM_EINPUT at FILE:1:1 when the file is empty, and at the field when a
 * field reads as a number or a time, so that a file without a header does
 * not lose its first row to it: "expected a header naming columns WANT;
 * found a number". */
int csv_header(csv_reader *r, char **h, size_t *n, const char *want);

/* The index of the column called name among n header fields, or "#N" for
 * the N-th (1-based); -1 if none. */
long csv_column(char **header, size_t n, const char *name);

/* Reads field (of column, for messages) as a plain decimal number
 * ([+-]digits[.digits][(e|E)[+-]digits], spaces around it allowed),
 * multiplies it by scale and checks the product against range (NULL: any
 * finite number). SIM_OK with *out, or SIM_EINPUT at the field naming the
 * column and the range. */
int csv_number(csv_reader *r, const char *field, const char *column,
               const csv_range *range, double scale, double *out);

/* Reads field as a whole number of digits from 0 to max (spaces around it
 * allowed). SIM_OK with *out, or SIM_EINPUT at the field naming the column
 * and the range; unit names what is counted ("tokens"). */
int csv_count(csv_reader *r, const char *field, const char *column, int64_t max,
              const char *unit, int64_t *out);

/* Records "PATH:LINE:COL: column 'COLUMN': message" and returns
 * SIM_EINPUT. COL is the character column where field (a field of the
 * line last returned, split in place) starts, 1 when field is NULL; LINE
 * is 1 before the first line. The column part is left out when column is
 * NULL. */
int csv_fail(csv_reader *r, const char *field, const char *column,
             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
