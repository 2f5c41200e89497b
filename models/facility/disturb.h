/* disturb.h - disturbances at the point of interconnection and how the
 * facility's power chain answers them (prefix dist_; docs/MODELS.md,
 * Disturbances).
 *
 * A disturbance is a voltage sag (the share of nominal voltage retained,
 * for a duration) or a frequency excursion (the frequency held, for a
 * duration), listed in the scenario's grid.disturbances. The facility
 * answers as its UPS and transfer scheme would:
 *
 *   - A sag trips it off the grid when it outlasts the protection curve
 *     at its depth (trip: points {voltage, duration}; a sag retaining v
 *     is tolerated for the duration of the last point at or below v, so
 *     the curve is a staircase), at start + that duration; a frequency
 *     excursion trips it at its start when it leaves [frequency_low,
 *     frequency_high].
 *   - Off the grid, the UPS carries the IT load for ups_autonomy; a
 *     generator, if there is one and it starts within the autonomy
 *     (generator_start), carries it from then on. Otherwise the IT goes
 *     dark from trip + autonomy until the facility is back.
 *   - The facility reconnects reconnect_delay after the last disturbance
 *     it met while off ends, and its draw returns to the grid linearly
 *     over return_ramp. A disturbance while it is off (not during the
 *     ramp) only moves the reconnection later; one during the ramp may
 *     trip it again.
 *
 * Ride-through is judged against a separate curve (curve: the region a
 * grid code says the load must stay connected in, default ITIC's) and,
 * for frequency, a band [ride_low, ride_high] (none by default): a
 * disturbance inside it is met when the facility was on the grid at its
 * start and stayed on through it.
 *
 * The grid sees share(t) of the facility's power, 1 before any trip; the
 * rest is carried by the backup. */
#ifndef MODELS_DISTURB_H
#define MODELS_DISTURB_H

#include <stdbool.h>
#include <stddef.h>

#include "scenario.h"

typedef enum dist_kind { DIST_SAG, DIST_FREQUENCY } dist_kind;

/* One disturbance as a scenario lists it (grid.disturbances). */
typedef struct dist_event {
  int kind; /* dist_kind */
  double start_s, duration_s;
  double voltage;      /* sag: the share of nominal retained, [0, 1) */
  double frequency_hz; /* excursion: the frequency held */
} dist_event;

extern const scn_schema dist_event_schema;

/* A point of a voltage curve: a sag retaining `voltage` or more is
 * tolerated for `duration` (INFINITY: for good). */
typedef struct dist_point {
  double voltage, duration_s;
} dist_point;

/* The facility's answer (the scenario's `ride_through:` map). */
typedef struct dist_config {
  dist_point *curve; /* must ride through; none: ITIC's */
  size_t ncurve;
  dist_point *trip; /* the protection; none: the curve */
  size_t ntrip;
  double frequency_low_hz, frequency_high_hz; /* trip band */
  double ride_low_hz, ride_high_hz;           /* must ride; NaN: none */
  double ups_autonomy_s;
  bool generator;
  double generator_start_s;
  double reconnect_delay_s, return_ramp_s;
} dist_config;

extern const scn_schema dist_schema;

/* ITIC (CBEMA) curve, Information Technology Industry Council, 2000:
 * its lower boundary, the no-interruption region, as points. */
extern const dist_point dist_itic[];
extern const size_t dist_nitic;

/* How long a sag retaining v is tolerated under points p[0..n) (sorted by
 * voltage, ascending): the duration of the last point at or below v; 0
 * below the first. */
double dist_tolerated_s(const dist_point *p, size_t n, double v);

/* What disturbance i came to. Times in s from the run's start; NaN where
 * a time does not apply. */
typedef struct dist_response {
  bool must;          /* inside the ride-through curve or band */
  bool connected;     /* the facility was on the grid at its start */
  bool tripped;       /* it took the facility off the grid */
  bool met;           /* must, connected, and not tripped */
  double trip_s;      /* tripped: when the facility left the grid */
  double reconnect_s; /* tripped: when it started back */
  double back_s;      /* tripped: when its draw was all back, or when
                         the next trip cut its return short */
  double ramp_s;      /* tripped: the return ramp's full length */
  double dark_start_s, dark_end_s; /* tripped: IT without power; NaN */
} dist_response;

/* The responses to n disturbances in time order (starts ascending) into
 * out[0..n). Pure; cannot fail. */
void dist_respond(const dist_config *c, const dist_event *ev, size_t n,
                  dist_response *out);

/* The share of the facility's power the grid carries at t, and its mean
 * over [t0, t1] (t1 > t0), under responses r[0..n). 1 without trips. */
double dist_share(const dist_response *r, size_t n, double t);
double dist_share_mean(const dist_response *r, size_t n, double t0,
                       double t1);

#endif
