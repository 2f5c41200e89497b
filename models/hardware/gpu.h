/* gpu.h - the GPU catalog and the GPU power/DVFS model (DESIGN 4.1).
 * The catalog is data (scenarios/catalog/gpus.yaml, compiled in): one
 * gpu_spec per type, every figure with its source. The model:
 *
 *   P(phi, a) = P_idle + (P_tdp - P_idle) * a * d(phi)
 *
 * with phi = f / f_max the normalised SM clock, a in [0, 1] the activity,
 * and d(phi) = phi^gamma (P ~ f V^2, V rising with f) or, when the type has
 * a measured curve, the monotone interpolation of that table. Under a
 * power cap C the clock is the largest phi in [phi_min, 1] with
 * P(phi, a) <= C: closed form for the power law, a GSL root finder for a
 * table. Compute-bound work runs at speed phi, memory-bound work at
 * phi^beta. */
#ifndef MODELS_GPU_H
#define MODELS_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "scenario.h"

typedef enum gpu_precision {
  GPU_FP16, /* FP16/BF16 with FP32 accumulate */
  GPU_FP8,
  GPU_FP4,
  GPU_INT8,
  GPU_INT4,
  GPU_NPRECISIONS
} gpu_precision;

/* Dense peak tensor throughput per precision, FLOP/s (or op/s for the
 * integer ones); NaN where the hardware lacks the precision. The order
 * matches gpu_precision. */
typedef struct gpu_dense {
  double flops[GPU_NPRECISIONS];
} gpu_dense;

typedef struct gpu_curve_point {
  double clock_hz;
  double power; /* dynamic power at full activity, as a fraction of TDP's */
} gpu_curve_point;

struct gpu_curve; /* GSL interpolation state, built at load time */

/* One GPU type. Plain data from the catalog, plus the derived curve. */
typedef struct gpu_spec {
  char *name; /* the identifier scenarios use, e.g. "H100-SXM" */
  char *full_name;
  char *architecture;
  int64_t year;
  double tdp_w, idle_w;
  double cap_min_w, cap_max_w; /* the settable power-limit range */
  double clock_max_hz, clock_min_hz;
  double slowdown_c, shutdown_c; /* thermal thresholds; NaN: unknown */
  double liquid_heat_share; /* share of its rack's heat its cold plates take
                               (0: air-cooled); the rest goes to air */
  double memory_bytes, bandwidth_bps;
  gpu_dense dense;
  double fp16_headline; /* FLOP/s as the datasheet headlines it */
  bool fp16_headline_sparse;
  double gamma; /* d(phi) = phi^gamma when there is no curve */
  double beta;  /* memory-bound speed = phi^beta */
  gpu_curve_point *curve;
  size_t ncurve;
  char **sources;
  size_t nsources;
  struct gpu_curve *interp; /* NULL without a curve */
} gpu_spec;

typedef struct gpu_catalog {
  gpu_spec *gpus;
  size_t n;
  bool replace; /* a user file's `replace: true`: it is the whole catalog */
} gpu_catalog;

/* The schema of one catalog entry, so a scenario can embed a custom type. */
extern const scn_schema gpu_spec_schema;

/* Loads the catalog compiled into the program. SIM_OK, or an error with
 * the position in the catalog text. Free with gpu_catalog_fini. */
int gpu_catalog_load_builtin(gpu_catalog *cat, sim_error *err);

/* Loads a catalog file in the same format, alone. */
int gpu_catalog_load_file(gpu_catalog *cat, const char *path, sim_error *err);

/* Loads the catalog a scenario sees: the built-in one with the types of
 * the file at path (NULL: none) added, a type of a built-in name replacing
 * that type whole; or the file's types alone when it says `replace: true`.
 * SIM_OK, or an error (SIM_EIO: path cannot be read; SIM_EINPUT with the
 * file's position). Free with gpu_catalog_fini. */
int gpu_catalog_load(gpu_catalog *cat, const char *path, sim_error *err);

/* Frees what a load allocated; the catalog is empty afterwards. */
void gpu_catalog_fini(gpu_catalog *cat);

/* The type called name, or NULL. Borrowed: valid while cat lives. */
const gpu_spec *gpu_catalog_find(const gpu_catalog *cat, const char *name);

/* Writes the known names as "A, B, C" into buf (for hints). */
void gpu_catalog_names(const gpu_catalog *cat, char *buf, size_t size);

const char *gpu_precision_name(gpu_precision p);

/* Dense peak throughput at precision p and full clock; NaN if absent. */
double gpu_peak_flops(const gpu_spec *g, gpu_precision p);

/* The lowest normalised clock, clock_min / clock_max. */
double gpu_phi_min(const gpu_spec *g);

/* d(phi): dynamic power at full activity as a fraction of its value at
 * phi = 1. */
double gpu_dynamic_fraction(const gpu_spec *g, double phi);

/* P(phi, a) in W. phi is clamped to [phi_min, 1], a to [0, 1]. */
double gpu_power(const gpu_spec *g, double phi, double activity);

/* The largest phi in [phi_min, 1] with P(phi, a) <= cap_w; phi_min when
 * even that draws more than the cap (the GPU then runs over its cap: the
 * caller sees it in gpu_power). */
double gpu_clock_under_cap(const gpu_spec *g, double cap_w, double activity);

/* Relative speed of compute-bound and of memory-bound work at phi. */
double gpu_speed_compute(const gpu_spec *g, double phi);
double gpu_speed_memory(const gpu_spec *g, double phi);

#endif
