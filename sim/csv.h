/* csv.h - reading the comma-separated data files the models draw on (grid
 * signals, request traces): lines and fields in place, columns by header
 * name, and every message as FILE:LINE: column 'NAME': ... */
#ifndef SIM_CSV_H
#define SIM_CSV_H

#include <stddef.h>

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

/* Reads the file at path (at most max bytes; NUL bytes refused). SIM_OK,
 * SIM_EIO when it cannot be read, SIM_EINPUT when it is not text or too
 * large. err is kept for csv_fail. Free with csv_close. */
int csv_open(csv_reader *r, const char *path, size_t max, sim_error *err);

void csv_close(csv_reader *r);

/* The next line without its line ending, NUL-terminated in place; NULL
 * at the end of the file. */
char *csv_next_line(csv_reader *r);

/* Splits line at its commas in place (no quoting: none of these files
 * quote) into at most CSV_MAX_FIELDS fields; returns how many. */
size_t csv_split(char *line, char **fields);

/* The index of the column called name among n header fields, or "#N" for
 * the N-th (1-based); -1 if none. */
long csv_column(char **header, size_t n, const char *name);

/* Records "PATH:LINE:COL: column 'COLUMN': message" and returns
 * SIM_EINPUT. COL is the character column where field (a field of the
 * line last returned, split in place) starts, 1 when field is NULL; the
 * column part is left out when column is NULL. */
int csv_fail(csv_reader *r, const char *field, const char *column,
             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
