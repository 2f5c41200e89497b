/* arrivals_internal.h - the generator's state, shared by arrivals.c (the
 * requests one at a time) and arrivals_window.c (their expected number
 * and lengths over a span, for the fluid mode). Not for other modules. */
#ifndef MODELS_ARRIVALS_INTERNAL_H
#define MODELS_ARRIVALS_INTERNAL_H

#include "arrivals.h"
#include "arrivals_draw.h"
#include "arrivals_zig.h"

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"

#define DAY_S 86400.0
#define PI 3.14159265358979323846

/* One trace in memory: times in seconds since the first row (unscaled),
 * tokens as read. */
typedef struct trace {
  const sim_allocator *a; /* what the arrays live on */
  double *t;
  int64_t *prompt, *output;
  size_t n, cap;
} trace;

enum { NSTREAMS = 5 };

/* An arrival drawn ahead (arr_draw_ahead). */
typedef struct arr_drawn {
  double t;
  int64_t prompt, output;
} arr_drawn;

/* The fields an arrival's draws read first, together: the tables, the
 * Poisson candidates' state, the lengths' mu and the streams' states. */
struct arr_gen {
  const arr_config *c;
  const arr_zig *gaps, *normals; /* the ziggurats' tables */
  double t;                      /* time of the last request (synthetic kinds) */
  double peak;                   /* Poisson: the rate candidates are drawn at */
  double win_end;                /* diurnal: the bounds below hold until then */
  double win_lo, win_hi;         /* ... the rate lies between them */
  arr_mu mu[2]; /* prompt, output: the lognormal's mu, kept */
  /* by arr_purpose - 1: taus2 states, drawn by arrivals_draw.h, copied
   * out of their GSL streams when made (seed_streams), so a draw reads
   * its words here and not through the stream and its state's pointers */
  arr_taus st[NSTREAMS];
  const sim_allocator *alloc; /* what the generator lives on */
  int state;                  /* MMPP: 0 or 1 */
  double state_end;           /* MMPP: when the current state ends */
  trace tr;                   /* trace: the rows */
  size_t next;                /* trace: the next row */
  double offset, period;      /* trace: start of this pass, length of a pass */
  arr_trace_stats stats;
  /* Synthetic windows: the lengths' moments and the share over a limit
   * are the same every control period; kept with the inputs they came
   * from (compared bit for bit) and recomputed when one changes. */
  bool have_lengths;
  arr_length len_for[2]; /* prompt, output */
  double len[5];         /* prompt mean, sq; output mean, sq, one */
  /* Drawn ahead: a ring of ahead_cap, ahead_n of them from ahead_head. */
  arr_drawn *ahead;
  size_t ahead_cap, ahead_head, ahead_n;
  bool have_over;
  arr_length over_for[2];
  double over_limit, over_share;
};

static inline arr_taus *taus(arr_gen *g, arr_purpose p) { return &g->st[p - 1]; }

static inline double sojourn(const arr_config *c, int state) {
  return state == 0 ? c->sojourn1 : c->sojourn2;
}

#endif
