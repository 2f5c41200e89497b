/* sweep_point.c - the point files of a sweep's output directory, which
 * both sweep_run.c (which points are done) and sweep_summary.c (the rows
 * of the summary) read: their paths, and one read back and judged. */
#include "sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5read.h"
#include "sweep_internal.h"

/* The whole of a small text file (malloc'd), or NULL. */
char *sweep__read_text_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return NULL;
  char *buf = malloc(8192);
  size_t n = buf != NULL ? fread(buf, 1, 8191, f) : 0;
  fclose(f);
  if (buf != NULL)
    buf[n] = '\0';
  return buf;
}

void sweep__point_path(const sweep *s, const char *dir, size_t p,
                       const char *suffix, char *buf) {
  sweep_point_path(s, dir, p, suffix, buf, SWEEP_PATH); /* checked early */
}

/* Reads point p's file if there is one, in a child process
 * (h5r_run_check: its seal, then every object and attribute read back).
 * It is done when whole, complete and of this point's scenario; a damaged,
 * unreadable, foreign or incomplete one is not (a rerun replaces it); one
 * of another scenario is SIM_EINPUT. A damaged /scenario fails the seal,
 * so only a whole file can say the sweep changed. Release f->run. */
int sweep__read_point(const sweep *s, const char *dir, size_t p, point_file *f,
                      sim_error *err) {
  char path[SWEEP_PATH];
  sim_error e = {0};
  memset(f, 0, sizeof *f);
  sweep__point_path(s, dir, p, ".h5", path);
  if (access(path, F_OK) != 0)
    return SIM_OK;
  f->exists = true;
  int rc = h5r_run_check(path, &f->run, &e);
  if (rc == SIM_ENOMEM)
    return sim_error_set(err, rc, "%s", e.msg);
  if (rc != SIM_OK)
    memcpy(f->why, e.msg, sizeof f->why);
  else if (f->run.complete != 1)
    snprintf(f->why, sizeof f->why, "%.900s is not marked complete", path);
  else if (f->run.scenario == NULL ||
           sweep_hash_text(f->run.scenario) != sweep_point_hash(s, p))
    return sim_error_set(
        err, SIM_EINPUT,
        "%s holds another scenario than point %zu of %s: the sweep, its "
        "base scenario or aifsim changed since it ran\n  hint: use another "
        "output directory, or delete the old point files",
        path, p, sweep_path(s));
  else
    f->done = true;
  return SIM_OK;
}
