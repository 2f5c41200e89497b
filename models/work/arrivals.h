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

/* ------------------------------------------------------------------ */
/* Drawing ahead: the same stream, drawn before it is taken             */
/* ------------------------------------------------------------------ */

/* The most arrivals a generator holds drawn ahead. */
#define ARR_AHEAD_MAX ((size_t)1 << 16)

/* Room for the arrivals of span_s seconds at the process's highest rate
 * to be drawn ahead (with a margin; at least 64, at most ARR_AHEAD_MAX),
 * on the generator's allocator. Again: the room is made anew, while none
 * is held (else SIM_ESTATE). SIM_OK; SIM_ENOMEM (no room: nothing is
 * drawn ahead and the generator draws as before); SIM_EINVAL for a trace
 * (its rows are read, not drawn) or a span not positive and finite. */
int arr_ahead_reserve(arr_gen *g, double span_s);

/* Draws g's next arrivals ahead, in order, into its room (above), until
 * the last drawn is at or after until_s, the room is full or max_n are
 * drawn; arr_next takes them first. The requests arr_next returns are
 * the same, bit for bit, however many were drawn ahead and when, since
 * the stream depends only on the generator's state and config. The
 * count drawn; 0 without room. Not while another thread calls arr_next
 * on g (the caller keeps them apart: crew.h's sim_crew_post). */
size_t arr_draw_ahead(arr_gen *g, double until_s, size_t max_n);

/* How many arrivals g holds drawn ahead; the room for them. */
size_t arr_ahead_held(const arr_gen *g);
size_t arr_ahead_room(const arr_gen *g);

/* A trace generator's file statistics; zeroes for synthetic kinds. */
arr_trace_stats arr_trace_info(const arr_gen *g);

/* ------------------------------------------------------------------ */
/* Windows: what arrives over a span, for models that take rates        */
/* ------------------------------------------------------------------ */

/* The requests arriving over a span and the moments of their lengths,
 * for a fluid model that takes flows instead of requests
 * (inference_fluid.c). Lengths count as the services count them: an
 * output of at least 1 token. */
typedef struct arr_window {
  double count;      /* requests arriving in the span */
  double over;       /* of them, with prompt + output above the limit */
  double prompt_mean; /* mean prompt length of the others, tokens */
  double prompt_sq;   /* the mean of its square, tokens^2 */
  double output_mean; /* the same for the output length */
  double output_sq;
  double output_one; /* share of the others with a one-token output */
} arr_window;

/* The moments of a synthetic length distribution as arr_next draws it
 * (rounded, at least 1): the mean, the mean square and the share of
 * draws of 1 token. The rounding's own spread (1/12 token^2) is
 * counted; its bias, a few thousandths of a token for a smooth density,
 * is not. */
void arr_length_moments(const arr_length *l, double *mean, double *mean_sq,
                        double *share_one);

/* The integral of the Poisson rate (arr_rate_at) over [t0_s, t1_s]:
 * the expected number of arrivals. */
double arr_rate_integral(const arr_config *c, double t0_s, double t1_s);

/* What arrives in [t0_s, t1_s), into *w: for Poisson the expected count
 * (arr_rate_integral) with the length distributions' moments; for an
 * MMPP the count expected along the state path, which is drawn from the
 * same stream as arr_next draws it (so one seed gives one path in both
 * uses); for a trace its rows, exactly (a looped trace wraps as
 * arr_next does). over: requests whose prompt + output exceeds limit
 * (expected, for the synthetic kinds; their moments still include them).
 * Spans must follow each other from 0 (t0_s the last call's t1_s), and
 * a generator used here must not also be used with arr_next. Moments
 * are NaN for a span without a trace row. Cannot fail. */
void arr_window_take(arr_gen *g, double t0_s, double t1_s, double limit,
                     arr_window *w);

#endif
