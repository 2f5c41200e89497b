/* h5read.h - HDF5 for the sweep (h5r): reading a run file back (its
 * completeness, resolved scenario and /summary metrics) and writing the
 * sweep's summary table. Part of sim_output, the one library that links HDF5;
 * record.h is the streaming writer of run files, this is the small rest.
 *
 * A table is columns of equal length, each one dataset at its path (groups
 * made on the way): int64, float64 or variable-length UTF-8 strings,
 * uncompressed (a summary is small) but with a Fletcher32 checksum, with
 * an optional "units" attribute. It is written as run files are
 * (record.h): under PATH.lock, in HDF5 1.10's checksummed format, sealed
 * (seal.h). Object time tracking is off, so the same table gives the same
 * bytes. */
#ifndef SIM_H5READ_H
#define SIM_H5READ_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* What a run file says about itself. */
typedef struct h5r_run {
  int64_t complete; /* the root attribute complete; 0 when absent */
  char *format;     /* the root attribute format, or NULL when absent */
  char *scenario;   /* the /scenario text, or NULL when absent */
  size_t nmetrics;
  char **names;   /* the /summary attributes' names, sorted by strcmp */
  double *values; /* their values (numeric attributes only) */
  char *units;    /* /summary's units attribute: each metric's units as a
                     JSON object (tel_metric_lookup), or NULL when absent */
} h5r_run;

/* Reads the run file at path into *out (zeroed first). SIM_OK; SIM_EIO
 * with a message if the file cannot be opened or read as HDF5 (a missing
 * /summary or /scenario is not an error: they come back empty); SIM_ENOMEM.
 * Release *out with h5r_run_release, on failure too. */
int h5r_run_read(const char *path, h5r_run *out, sim_error *err);

void h5r_run_release(h5r_run *r);

/* Reads every dataset of the file at path back whole (through HDF5's
 * filters, so a chunk whose Fletcher32 checksum fails, or a damaged
 * index, shows), and every attribute of every object, holding at most
 * about 8 MiB at a time. SIM_OK, or SIM_EIO with a message naming the
 * first object that could not be read. HDF5 itself may crash on a damaged
 * file: h5r_run_check runs this in a child process. */
int h5r_run_verify(const char *path, sim_error *err);

/* The root attribute format of a run file aifsim writes. */
#define H5R_RUN_FORMAT "aifsim-run"

/* Everything a sweep asks of a point file before it takes it as done, in
 * a child process, so that damage that crashes HDF5 (or makes it loop)
 * ends the child only: the seal (seal.h), then h5r_run_read and
 * h5r_run_verify. SIM_OK with *out filled; SIM_ENOTFOUND when the file
 * is not an aifsim run file of this format (no seal, or format is not
 * H5R_RUN_FORMAT: foreign, or older than seals); SIM_EIO when it is
 * damaged or cannot be read (the seal, a checksum, the reader crashing
 * or not finishing); SIM_ENOMEM. err says which and why. Release *out
 * with h5r_run_release, on failure too. (h5check.c) */
int h5r_run_check(const char *path, h5r_run *out, sim_error *err);

typedef enum h5r_type { H5R_INT64, H5R_FLOAT64, H5R_STRING } h5r_type;

typedef struct h5r_column {
  const char *path; /* "point", "metrics/energy_mwh" */
  h5r_type type;
  const void *data;  /* nrows int64_t, double, or const char * (NULL: "") */
  const char *units; /* the "units" attribute, or NULL for none */
} h5r_column;

typedef struct h5r_table {
  size_t nrows; /* at least 1 */
  const h5r_column *cols;
  size_t ncols;
  const char *const *attr_keys; /* string attributes of the root */
  const char *const *attr_values;
  size_t nattrs;
} h5r_table;

/* Writes the table to path through path.partial, renamed at the end with
 * the root attribute complete=1 set, as run files are. SIM_OK, SIM_EBUSY
 * when another process holds path.lock, or SIM_EIO with a message
 * (nothing is left under path or path.partial then). */
int h5r_table_write(const char *path, const h5r_table *t, sim_error *err);

/* ---- A run's groups read back, for export (h5read_groups.c) ----------
 * Generic over what the groups hold: a column the simulator adds later is
 * exported without a change here. Every call returns SIM_OK, or SIM_EIO
 * with "h5r: FILE: cannot WHAT: HDF5's reason", or SIM_ENOMEM. */

/* A group of series ("time" and columns along it) or a table (equal-length
 * 1-D columns, as /jobs). */
typedef enum h5r_kind { H5R_SERIES, H5R_ROWS } h5r_kind;

typedef struct h5r_entry {
  char *name; /* "facility", "jobs", "services/chat" */
  h5r_kind kind;
} h5r_entry;

/* The groups of the run file at path that hold series or a table, sorted
 * by name, in *out (n of them; groups with neither, as /summary, are left
 * out). Free with h5r_entries_free, on failure too. */
int h5r_groups_list(const char *path, h5r_entry **out, size_t *n,
                    sim_error *err);
void h5r_entries_free(h5r_entry *e, size_t n);

/* What an open group of series holds. The strings live as long as the
 * group. */
typedef struct h5r_series_info {
  size_t nrows;
  size_t width;              /* positions along the axis; 1 for 1-D */
  const char *time_units;    /* "s", or "seconds since 2023-07-01T..." */
  const char *axis;          /* "rack", or NULL for a 1-D group */
  const char *const *labels; /* width labels, or NULL */
  size_t ncols;
  const char *const *names; /* the columns, in the file's (name) order */
  const char *const *units; /* their units; "" when none */
} h5r_series_info;

/* An open group of series, read a block of rows at a time so memory stays
 * flat however long the run (opaque; h5r_series_close). */
typedef struct h5r_series h5r_series;

/* Opens the group of series name in the file at path. *out is NULL on
 * failure. */
int h5r_series_open(const char *path, const char *name, h5r_series **out,
                    sim_error *err);
const h5r_series_info *h5r_series_info_of(const h5r_series *s);
/* Rows [start, start + count) (within nrows): their times into time[count]
 * and column c's values at row i, position j into
 * values[(c * count + i) * width + j]. */
int h5r_series_rows(h5r_series *s, size_t start, size_t count, double *time,
                    double *values, sim_error *err);
void h5r_series_close(h5r_series *s); /* NULL does nothing */

/* A table read whole (tables are small: a row per job). */
typedef struct h5r_rows {
  size_t nrows, ncols;
  char **names, **units; /* units "" when none */
  double **values;       /* per column: nrows numbers, or NULL for text */
  char ***texts;         /* per column: nrows strings, or NULL */
} h5r_rows;

int h5r_rows_read(const char *path, const char *name, h5r_rows *out,
                  sim_error *err);
void h5r_rows_release(h5r_rows *r);

/* The scalar attributes of one object ("/", "/summary"), sorted by name:
 * numbers (texts[i] NULL) or UTF-8 texts (values[i] NaN). */
typedef struct h5r_attrs {
  size_t n;
  char **names;
  double *values;
  char **texts;
} h5r_attrs;

int h5r_attrs_read(const char *path, const char *object, h5r_attrs *out,
                   sim_error *err);
void h5r_attrs_release(h5r_attrs *a);

#endif
