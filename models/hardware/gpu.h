/* gpu.h - the GPU catalog and the GPU power/DVFS model (docs/MODELS.md, GPU).
 * The catalog is data (scenarios/catalog/gpus.yaml, compiled in): one
 * gpu_spec per type, every figure with its source. The model follows what
 * the GPU is doing, given as a gpu_load at full clock: the SM activity
 * sm (1: the tensor pipes busy the whole time), the HBM traffic mem as a
 * share of the datasheet bandwidth, and the share of time busy that any
 * kernel runs:
 *
 *   P(phi, L) = P_idle + P_mem mem s_m(phi)
 *             + (P_busy busy + (P_tdp - P_idle - P_busy) sm) d(phi)
 *
 * phi = f / f_max is the normalised SM clock. The split is a DVFS power
 * model's: a memory domain and a core domain, each with a part that does
 * not depend on the work and one that does (Guerreiro et al., "GPGPU
 * Power Modeling for Multi-Domain Voltage-Frequency Scaling", HPCA 2018).
 * P_mem is the power of moving the datasheet bandwidth through the HBM
 * and its interface, a fixed energy per byte (the catalog's pj_per_byte,
 * the published HBM figure). P_busy is what the core draws while a kernel
 * runs, whatever it does (clock tree, L2, crossbar, the SMs' issue); it
 * and the SM part, what is left to the TDP (a compute-bound kernel at
 * full clock draws exactly the TDP), sit on the core's voltage and clock
 * and follow d(phi). The HBM clock does not follow the SM clock (Chips
 * and Cheese, "Nvidia's H100: Funny L2, and Tons of Bandwidth", 2023:
 * "Memory Clock ... does not change under load"), so memory power and
 * memory-bound speed hold as the SM clock falls, until the SMs can no
 * longer issue the traffic: below the knee phi_k both fall as phi / phi_k
 * (s_m). d(phi) = phi^gamma (P ~ f V^2, V rising with f) or, when the
 * type has a measured curve, the monotone interpolation of that table.
 * Under a power cap C the clock is the largest phi in [phi_min, 1] with
 * P(phi, L) <= C, P as gpu_load_power evaluates it, to the last double
 * (Newton's method, then the neighbouring doubles: gpu_power.c). Compute-bound work runs at speed phi, memory-bound work
 * at s_m(phi).
 *
 * A load is what the work would put on the GPU at full clock; the power
 * at a lower clock follows from it (the work's own slowdown is second
 * order and left out). gpu_power and gpu_clock_under_cap take a single
 * activity a, the synthetic level {sm a, mem 0, busy a}: idle + a (P_tdp
 * - P_idle) at full clock. */
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
struct gpu_pow_memo;

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
  /* What a streaming microbenchmark reaches (catalog's
   * memory_bandwidth_achievable; the datasheet's when not measured):
   * the roofline's memory-bound time divides by it, power by the above. */
  double achievable_bps;
  gpu_dense dense;
  double fp16_headline; /* FLOP/s as the datasheet headlines it */
  bool fp16_headline_sparse;
  double gamma;  /* d(phi) = phi^gamma when there is no curve */
  double knee;   /* memory-bound speed and power fall below this phi */
  double busy_w; /* P_busy: core floor while busy (at d(phi)); derived too */
  double mem_w;  /* P_mem: power at the datasheet bandwidth; derived too */
  gpu_curve_point *curve;
  size_t ncurve;
  char **sources;
  size_t nsources;
  struct gpu_curve *interp; /* NULL without a curve */
  /* The last powers phi^gamma asked of the type (gpu_power.c), a cache
   * that changes no result; NULL (a type not from a catalog): none. */
  struct gpu_pow_memo *pow_memo;
} gpu_spec;

/* The catalog's power model: what derives a type's busy floor and memory
 * power when its entry does not give them. Calibrated (make calibrate,
 * tools/calibrate.py) on the ML.ENERGY H100 fit set; the catalog file
 * carries the figures with their provenance. */
typedef struct gpu_power_model {
  double busy_share;  /* P_busy / (P_tdp - P_idle) */
  double pj_per_byte; /* P_mem = this x memory_bandwidth */
  char **fitted;      /* "keys: fit set, data, method, residual" lines */
  size_t nfitted;
} gpu_power_model;

typedef struct gpu_catalog {
  gpu_spec *gpus;
  size_t n;
  gpu_power_model power;
  bool replace; /* a user file's `replace: true`: it is the whole catalog */
} gpu_catalog;

/* What a GPU is doing, as shares at full clock (the header comment). */
typedef struct gpu_load {
  double sm;   /* SM activity, [0, 1] */
  double mem;  /* HBM traffic / datasheet bandwidth, [0, 1] */
  double busy; /* share of the time a kernel runs, [0, 1] */
} gpu_load;

/* The schema of one catalog entry, so a scenario can embed a custom type. */
extern const scn_schema gpu_spec_schema;

/* Loads the catalog compiled into the program. SIM_OK, or an error with
 * the position in the catalog text. Free with gpu_catalog_fini. */
int gpu_catalog_load_builtin(gpu_catalog *cat, sim_error *err);

/* Loads a catalog file in the same format, alone; one without a
 * power_model map takes the built-in catalog's. */
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

/* Loads add as time means do: x + k y, component by component. */
static inline gpu_load gpu_load_axpy(gpu_load x, double k, gpu_load y) {
  return (gpu_load){x.sm + k * y.sm, x.mem + k * y.mem, x.busy + k * y.busy};
}

static inline gpu_load gpu_load_scale(gpu_load x, double k) {
  return (gpu_load){k * x.sm, k * x.mem, k * x.busy};
}

/* The SM part of the model, P_tdp - P_idle - P_busy, W. */
double gpu_sm_span(const gpu_spec *g);

/* The synthetic level a: {sm a, mem 0, busy a}, a clamped to [0, 1]. */
gpu_load gpu_load_level(double a);

/* P(phi, L) in W. phi is clamped to [phi_min, 1], the shares to [0, 1]. */
double gpu_load_power(const gpu_spec *g, double phi, gpu_load l);

/* The largest phi in [phi_min, 1] with P(phi, L) <= cap_w; phi_min when
 * even that draws more than the cap (the GPU then runs over its cap: the
 * caller sees it in gpu_load_power). */
double gpu_load_clock_under_cap(const gpu_spec *g, double cap_w, gpu_load l);

/* gpu_load_clock_under_cap(g, cap[k], l[k]) in phi[k] for k < n, the
 * same bits: the type's view (its cap's ends, P at full clock's terms)
 * taken once for the batch (the request level's peak asks a stretch of
 * replicas' clocks, nearly all of them new). */
void gpu_load_clocks_under_caps(const gpu_spec *g, size_t n, const double *cap,
                                const gpu_load *l, double *phi);

/* Whether types[0 .. n)'s clocks under caps (the two calls above) may
 * be solved on several threads at once until a type's fields change:
 * each type's cap ends made now in its memo, so the solves only read
 * them, and none has a measured curve (gsl's accelerator is written by
 * every lookup). False too where two of the types share one memo with
 * different ends (a copy of a type changed): each solve would make
 * them again. Not while another thread solves for one of them. */
bool gpu_solves_shareable(const gpu_spec *const *types, size_t n);

/* The power share of a load at full clock, (P(1, L) - P_idle) / (P_tdp -
 * P_idle): the single "activity" the telemetry reports. */
double gpu_load_share(const gpu_spec *g, gpu_load l);

/* P(phi, a) and the clock under a cap for the synthetic level a. */
double gpu_power(const gpu_spec *g, double phi, double activity);
double gpu_clock_under_cap(const gpu_spec *g, double cap_w, double activity);

/* Relative speed of compute-bound work (phi) and of memory-bound work
 * (s_m: 1 down to the knee, then phi / knee) at phi. */
double gpu_speed_compute(const gpu_spec *g, double phi);
double gpu_speed_memory(const gpu_spec *g, double phi);

#endif
