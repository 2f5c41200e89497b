/* sweep_internal.h - what the files of the sweep module share (sweep.h
 * is its public face): sweep.c loads the file and checks its points,
 * sweep_grid.c builds their grid, sweep_run.c runs the points,
 * sweep_summary.c rebuilds the summary from the point files, and
 * sweep_point.c reads a point file for both, so that their calls run one
 * way. */
#ifndef SIM_SWEEP_INTERNAL_H
#define SIM_SWEEP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "h5read.h"
#include "scenario.h"
#include "sweep.h"

/* Room for a path in the output directory. */
#define SWEEP_PATH 4096

typedef struct point_file {
  bool exists, done;
  char why[sizeof(((sim_error *)NULL)->msg)]; /* why a file is not done */
  h5r_run run;
} point_file;

/* SIM_ENOMEM with "out of memory" in err (sweep_grid.c). */
int sweep__no_memory(sim_error *err);

/* The whole of a small text file (malloc'd: free it), or NULL. */
char *sweep__read_text_file(const char *path);

/* The path of point p's file with suffix (".h5", ".error", ...) in dir,
 * into buf of SWEEP_PATH bytes (the sweep checked the length early). */
void sweep__point_path(const sweep *s, const char *dir, size_t p,
                       const char *suffix, char *buf);

/* Reads point p's file if there is one. It is done when complete, whole
 * and of this point's scenario; an unreadable, damaged or incomplete one
 * is not (a rerun replaces it); one of another scenario is SIM_EINPUT.
 * Release f->run. */
int sweep__read_point(const sweep *s, const char *dir, size_t p, point_file *f,
                      sim_error *err);

/* Rebuilds summary.h5 and summary.csv in dir from its point files, in
 * point order; the counts of failed and missing points come back. SIM_OK
 * or an error with err set. */
int sweep__write_summary(const sweep *s, const char *dir, const char *version,
                         size_t *failed, size_t *missing, sim_error *err);

/* ---- The sweep's state (sweep.c, sweep_grid.c) ---------------------- */

/* The file as bound by its schema (sweep.c). */
typedef struct range_cfg {
  char *from, *to, *step;
} range_cfg;

typedef struct axis_cfg {
  char *key;
  char **values;
  size_t nvalues;
  range_cfg range;
  struct axis_cfg *zip;
  size_t nzip;
} axis_cfg;

typedef struct sweep_cfg {
  char *base;
  char **set;
  size_t nset;
  axis_cfg *axes;
  size_t naxes;
  char **seeds;
  size_t nseeds;
  int64_t replicates;
} sweep_cfg;

/* Where a column's values were written, for messages. */
typedef enum src_kind {
  SRC_VALUES,    /* WHERE.values.J */
  SRC_RANGE,     /* WHERE.range.from */
  SRC_SEEDS,     /* seeds.J */
  SRC_REPLICATES /* replicates */
} src_kind;

typedef struct column {
  char *key;     /* normalized: racks.0.count */
  char **values; /* n, as written */
  char **sets;   /* n, "key=value" */
  size_t n;
  size_t axis;
  src_kind src;
  char where[64]; /* "axes.2" or "axes.2.zip.1"; "" for seeds */
} column;

typedef struct axis {
  size_t n;      /* values */
  size_t stride; /* points between two of its values */
} axis;

struct sweep {
  scn_doc *doc;
  sweep_cfg cfg;
  char *base;
  char **fixed; /* the file's set, then the command line's (copies) */
  size_t nfixed, nfile_sets;
  column *cols;
  size_t ncols;
  axis *axes;
  size_t naxes;
  size_t npoints;
  uint64_t *hash;
  int width;
  const char **scratch;
};

/* sweep_grid.c: a malloc'd printf (NULL when out of memory); frees n
 * strings and the array; frees a column's strings; the file's axes into
 * columns; the key part of a fixed override "key=value", normalized
 * (malloc'd; NULL if none); the seed column (the last axis); and the
 * strides and the number of points, refusing grids beyond the limit. */
char *sweep__format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sweep__free_strings(char **v, size_t n);
void sweep__column_fini(column *c);
int sweep__read_axes(sweep *s, sim_error *err);
char *sweep__set_key(const char *set);
int sweep__add_seeds(sweep *s, int64_t base_seed, sim_error *err);
int sweep__count_points(sweep *s, sim_error *err);

#endif
