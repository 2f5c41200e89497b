/* h5read.h - HDF5 for the sweep (h5r): reading a run file back (its
 * completeness, resolved scenario and /summary metrics) and writing the
 * sweep's summary table. Part of sim_io, the one library that links HDF5;
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

#endif
