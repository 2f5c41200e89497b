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

/* A run advances in slices (of events), between which the command
 * redraws the line and checks for signals. The next slice is sized from
 * the last (last units of work took last_wall_s seconds) to take about
 * target_s of wall time: it shrinks at once to that pace, grows at most
 * 4x a slice (a pace measured on a short slice is noisy), and is at least
 * 1. With target_s 0.1 a run, long or short, redraws about ten times a
 * second, where slices of a fixed share of the simulated time (0.5%) left
 * a long run's line still for minutes. */
int64_t progress_next_slice(int64_t last, double last_wall_s, double target_s);

#endif
