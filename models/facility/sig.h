/* sig.h - time-varying signals of the grid feed: carbon intensity,
 * price, outdoor temperature. A signal is read from a CSV file (the
 * formats of Electricity Maps, market price files and Open-Meteo weather)
 * or synthesised: a constant, a daily schedule of steps, a diurnal cosine,
 * or, for carbon, a generation mix whose solar share follows daylight.
 *
 * Every kind has an exact integral over any interval, so energy-weighted
 * cost and CO2 over piecewise-constant power come out exact, not sampled. */
#ifndef MODELS_SIG_H
#define MODELS_SIG_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc.h"
#include "csv.h"
#include "err.h"
#include "scenario.h"
#include "units.h"

typedef enum sig_kind {
  SIG_NONE, /* not configured: the signal is 0 */
  SIG_CONSTANT,
  SIG_FILE,
  SIG_DAILY,
  SIG_DIURNAL,
  SIG_MIX,
} sig_kind;

typedef struct sig_daily_step {
  double from_s; /* time of day the value starts */
  double value;
} sig_daily_step;

/* Shares of a generation mix (fractions summing to 1). */
typedef struct sig_mix {
  double coal, gas, nuclear, hydro, wind, solar;
  double sunrise_s, sunset_s; /* time of day */
} sig_mix;

/* What a carbon intensity counts: the life-cycle emissions of the
 * generation (building, fuel supply; Electricity Maps' "(LCA)" column, the
 * IPCC factors of the mix) or only the direct ones at the stack. */
typedef enum sig_basis {
  SIG_BASIS_LIFECYCLE,
  SIG_BASIS_DIRECT,
} sig_basis;

/* "lifecycle", "direct", NULL-terminated (the scenario's words). */
extern const char *const sig_basis_names[];

/* One signal as a scenario writes it; exactly one way of giving it. */
typedef struct sig_config {
  /* A CSV file. */
  char *file;
  char *time_column;      /* header name, or "#N" for the N-th column */
  char *value_column;     /* header name, or "#N"; carbon: NULL picks the
                             column of the basis, by "(LCA)" or "(direct)" */
  double time_offset_s;   /* added to the file's times to make them UTC */
  char *start;            /* UTC time at simulated t = 0; default first row */
  int interpolation;      /* 0 step, 1 linear */
  double max_gap_s;       /* a larger gap between rows is an error */
  bool repeat;            /* wrap around past the end of the file */
  double scale;           /* multiplies the file's values (e.g. EUR->USD) */
  int basis;              /* carbon: sig_basis; the mix is always life-cycle */
  const csv_range *range; /* what the values (after scale) may be; set by
                             the schema's check; NULL: any finite number */
  /* Or a constant. */
  double value;
  /* Or a daily schedule of steps. */
  sig_daily_step *daily;
  size_t ndaily;
  /* Or a diurnal cosine. */
  double low, high, peak_s;
  bool diurnal;
  /* Or a generation mix (carbon only). */
  sig_mix mix;
  bool has_mix;
} sig_config;

/* The physical ranges of the three signals' values, in g/kWh, $/MWh and
 * degC; sig.c says where the bounds come from. */
extern const csv_range sig_carbon_range;
extern const csv_range sig_price_range;
extern const csv_range sig_temperature_range;
extern const csv_range sig_humidity_range; /* relative humidity, % */

/* Schemas of the three signals: the value dimensions differ. */
extern const scn_schema sig_carbon_schema;
extern const scn_schema sig_price_schema;
extern const scn_schema sig_temperature_schema;
/* Relative humidity in % as a plain number (60, not 60%), as weather
 * files give it. */
extern const scn_schema sig_humidity_schema;

/* The emission factors of the mix, kg CO2 per MWh (= g/kWh). */
typedef struct sig_factors {
  double coal, gas, nuclear, hydro, wind, solar;
} sig_factors;

extern const sig_factors sig_seed_factors;

/* A signal ready to evaluate. */
typedef struct sig_series {
  const sim_allocator *alloc; /* what t and v live on; NULL: the C library */
  sig_kind kind;
  double value;  /* constant */
  double *t, *v; /* file: times (s since t = 0) and values */
  size_t n;      /* daily: t = time of day */
  bool linear;
  double period; /* file with repeat: the wrap period; daily: 86400 */
  double low, high, peak_s; /* diurnal */
  double flat, swing;       /* mix: I(t) = flat + swing * shape(t) */
  double rise_s, set_s;     /* mix: daylight */
} sig_series;

/* Builds a signal from its config. Files are read relative to base_dir
 * (NULL: the working directory). Errors (unreadable file, no header,
 * missing column, unparsable time, out-of-order or duplicate times, gaps
 * beyond max_gap, a value that is not a plain decimal or is outside
 * c->range) come as "FILE:LINE:COL: column 'NAME': ...", SIM_EINPUT; a
 * start outside the file's times is SIM_ERANGE (the scenario's error);
 * both leave nothing to free. A file or daily signal allocates on alloc (NULL
 * means the C library), which must outlive it; out of memory is SIM_ENOMEM.
 * Free a built signal with sig_fini. */
int sig_init(sig_series *s, const sig_config *c, const char *base_dir,
             const sim_allocator *alloc, sim_error *err);

void sig_fini(sig_series *s);

/* True if the signal has data for all of [t0, t1]: files without repeat
 * cover their rows (a step file one step past its last row). */
bool sig_covers(const sig_series *s, double t0, double t1);

/* The time (seconds since the start) up to which the signal has data:
 * INFINITY unless it is a file without repeat. */
double sig_end(const sig_series *s);

/* The value at t_s (seconds since the start). */
double sig_at(const sig_series *s, double t_s);

/* The largest value of the signal over [t0, t1], exactly: for files the
 * ends and every row between them, for a diurnal curve its peak when the
 * interval holds it, for a mix solar noon or an end. */
double sig_max(const sig_series *s, double t0, double t1);

/* The exact integral of the signal over [t0, t1] (value x seconds). */
double sig_integral(const sig_series *s, double t0, double t1);

/* Integrals over intervals that follow each other (a run's ticks): the
 * cumulative integral at the last interval's end, kept for the next
 * one's start. sig_integral is the difference of two cumulative ones, a
 * function of the series and the time alone, so the kept one is the one
 * it would compute again (to the bit), and a tick's integral takes one
 * evaluation of the signal (a diurnal price's two sines, a file's
 * search), not two. Zeroed: nothing kept. One series a sig_run. */
typedef struct sig_run {
  bool kept;
  double t, cum; /* the last interval's end and the integral up to it */
} sig_run;

/* sig_integral(s, t0, t1), from r's kept end where t0 is it (to the
 * bit); t1 kept for the next. */
double sig_integral_next(const sig_series *s, sig_run *r, double t0, double t1);

/* UTC seconds since 1970 of "YYYY-MM-DD[ T]HH:MM[:SS[.f...]][Z|+HH:MM]";
 * -1 with *bad_at set to the offending offset when it does not parse. */
int sig_parse_time(const char *text, double *utc_s, size_t *bad_at);

#endif
