/* sweep_internal.h - what the files of the sweep module share (sweep.h
 * is its public face): sweep_run.c runs the points, sweep_summary.c
 * rebuilds the summary from the point files, and sweep_point.c reads a
 * point file for both, so that their calls run one way. */
#ifndef SIM_SWEEP_INTERNAL_H
#define SIM_SWEEP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "h5read.h"
#include "sweep.h"

/* Room for a path in the output directory. */
#define SWEEP_PATH 4096

typedef struct point_file {
  bool exists, done;
  char why[sizeof(((sim_error *)NULL)->msg)]; /* why a file is not done */
  h5r_run run;
} point_file;

/* SIM_ENOMEM with "out of memory" in err. */
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

#endif
