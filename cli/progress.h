/* progress.h - the one-line progress display of long runs: simulated time,
 * share done, events per second and the time left, redrawn in place on a
 * terminal and silent otherwise. It never reads a clock: the caller passes
 * the wall time, so nothing here can touch a simulation's results. */
#ifndef SIM_PROGRESS_H
#define SIM_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct progress {
  FILE *out;
  bool enabled;
  double last_draw_s; /* wall time of the last redraw */
  int width;          /* characters of the last line, to wipe it */
} progress;

/* Enabled only when out is a terminal and quiet is false. */
void progress_init(progress *p, FILE *out, bool quiet);

/* Redraws at most ten times a second. sim_s of total_s simulated, events
 * run so far, wall_s seconds since the run started. */
void progress_update(progress *p, double sim_s, double total_s, uint64_t events,
                     double wall_s);

/* Wipes the line, so the summary starts on a clean one. */
void progress_done(progress *p);

/* Writes seconds as "1d 02:03:04" / "02:03:04" into buf. */
char *progress_hms(double seconds, char *buf, size_t size);

#endif
