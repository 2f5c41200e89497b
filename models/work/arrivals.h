/* arrivals.h - when inference requests arrive, and how long they are.
 * Three processes: Poisson at a mean rate, flat or with a diurnal profile
 * (thinned against the peak rate, Lewis & Shedler 1979); a bursty 2-state
 * Markov-modulated Poisson process (MMPP); and replay of a trace CSV in the
 * Azure LLM inference format (TIMESTAMP,ContextTokens,GeneratedTokens),
 * scaled in time and optionally looped. A model above the engine layer:
 * it sees sim/ (scenario, rng, file) and models/sig.h for time parsing. */
#ifndef MODELS_ARRIVALS_H
#define MODELS_ARRIVALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "err.h"
#include "rng.h"
#include "scenario.h"

typedef enum arr_kind { ARR_POISSON, ARR_MMPP, ARR_TRACE } arr_kind;

typedef enum arr_profile { ARR_FLAT, ARR_DIURNAL } arr_profile;

typedef enum arr_dist { ARR_LOGNORMAL, ARR_FIXED } arr_dist;

/* The RNG entity kind of arrival generators; the index is the generator's
 * (one per workload), the purposes are arr_purpose. */
enum { ARR_RNG_KIND = RNG_KIND_MODEL + 0x41 };

typedef enum arr_purpose {
  ARR_RNG_TIMES = 1,  /* candidate inter-arrival gaps */
  ARR_RNG_THIN = 2,   /* thinning acceptance draws */
  ARR_RNG_STATE = 3,  /* MMPP sojourn times and initial state */
  ARR_RNG_PROMPT = 4, /* prompt lengths */
  ARR_RNG_OUTPUT = 5, /* output lengths */
} arr_purpose;

/* A token-length distribution: lognormal with the given mean and the
 * sigma of the underlying normal (so mu = ln(mean) - sigma^2 / 2), or a
 * fixed length. Draws are rounded to the nearest integer, at least 1. */
typedef struct arr_length {
  int dist;     /* arr_dist */
  double mean;  /* tokens */
  double sigma; /* lognormal: shape, dimensionless */
} arr_length;

/* One workload's arrivals as a scenario writes them. Rates are plain
 * numbers of requests per second (UNITS_NUMBER, no unit written): "Hz"
 * would read as a clock, not as a request rate. */
typedef struct arr_config {
  int kind; /* arr_kind */
  /* Poisson. */
  double rate;      /* mean requests per second, over a day if diurnal */
  int profile;      /* arr_profile */
  double low, high; /* diurnal: trough and peak in proportion (shares) */
  double peak_s;    /* diurnal: time of day of the peak, seconds */
  /* MMPP. */
  double rate1, rate2;       /* requests per second in each state */
  double sojourn1, sojourn2; /* mean time spent in each state, s */
  /* Trace. */
  char *file;        /* CSV, relative to the scenario's folder */
  double time_scale; /* multiplies the trace's gaps: 2 halves the rate */
  bool loop;         /* repeat the trace after its end */
  /* Synthetic kinds: token lengths. */
  arr_length prompt, output;
} arr_config;

extern const scn_schema arr_schema;

/* The diurnal rate at time t_s (t = 0 is midnight): rate x s(t) / mean(s)
 * with s the load.c cosine from low to high, so the day's mean is rate. A
 * flat profile gives rate. Not meaningful for the other kinds. */
double arr_rate_at(const arr_config *c, double t_s);

/* The long-run mean rate of the process: rate (Poisson), the stationary
 * mix pi1 r1 + pi2 r2 with pi_i = sojourn_i / (sojourn1 + sojourn2)
 * (MMPP); NaN for traces (it depends on the file). */
double arr_mean_rate(const arr_config *c);

typedef struct arr_gen arr_gen;

/* The statistics of a loaded trace, before scaling. */
typedef struct arr_trace_stats {
  size_t n;           /* data rows */
  double span_s;      /* last time - first time */
  double prompt_mean; /* mean ContextTokens */
  double output_mean; /* mean GeneratedTokens */
} arr_trace_stats;

/* A generator for c, with its own streams from (seed, ARR_RNG_KIND,
 * index, purpose); a trace file is read now, relative to base_dir (NULL
 * or "": the working directory). c must stay valid while the generator
 * lives. Returns NULL with err: SIM_ENOMEM, SIM_EIO (unreadable file), or
 * SIM_EINPUT with "FILE:LINE: column 'NAME': message" for a missing
 * column, an unparsable time, a time earlier than the row before (equal
 * times are allowed), or tokens that are not non-negative integers. A
 * looped trace needs two distinct times. The generator allocates on
 * alloc (NULL means the C library), which must outlive it; the random
 * streams are GSL's own. Free with arr_destroy. */
arr_gen *arr_create(const arr_config *c,        /* the validated config */
                    const char *base_dir,       /* folder of the scenario */
                    uint64_t seed,              /* run seed */
                    uint64_t index,             /* which workload */
                    const sim_allocator *alloc, /* NULL: the C library */
                    sim_error *err);            /* detail on failure */

/* Frees the generator; NULL does nothing. */
void arr_destroy(arr_gen *g);

/* The next request in time order: its time (seconds from the start; a
 * trace's first row is at 0) and token lengths. Times never decrease.
 * Returns false, leaving the outputs alone, once a trace without loop is
 * exhausted; synthetic processes never end. A looped trace starts again
 * one mean gap (span / (n - 1), scaled) after its last row, so each pass
 * has the file's count and its rate is (n - 1) / span. */
bool arr_next(arr_gen *g, double *t_s, int64_t *prompt_tokens,
              int64_t *output_tokens);

/* A trace generator's file statistics; zeroes for synthetic kinds. */
arr_trace_stats arr_trace_info(const arr_gen *g);

#endif
