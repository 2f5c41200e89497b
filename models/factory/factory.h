/* factory.h - builds an AI factory from a scenario and wires its models
 * to the engine and to a telemetry sink.
 *
 * Today the factory is racks of GPUs under a facility power cap with a
 * static per-GPU cap split, driven by a synthetic utilisation schedule per
 * rack group. Power is piecewise constant between control ticks, so energy
 * is integrated exactly; every sample is the mean over the interval that
 * ends at its time, so the samples' mean times the duration is the energy. */
#ifndef MODELS_FACTORY_H
#define MODELS_FACTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "battery.h"
#include "control.h"
#include "cooling.h"
#include "electrical.h"
#include "engine.h"
#include "err.h"
#include "fault.h"
#include "gpu.h"
#include "grid.h"
#include "gridcode.h"
#include "inference.h"
#include "llm.h"
#include "load.h"
#include "power_quality.h"
#include "rack.h"
#include "scenario.h"
#include "scheduler.h"
#include "smooth.h"
#include "system.h"
#include "tel.h"
#include "training.h"
#include "gpujob.h"

typedef struct rack_group_config {
  char *name;
  int64_t count;
  char *gpu;        /* a catalog name; default: the system's */
  char *system;     /* a systems-catalog name, or NULL */
  double host_load; /* with a system: its host load at full activity */
  int64_t gpus_per_rack;
  double limit_w; /* default: the rack at its most (rack_group_full_w) */
  double other_idle_w, other_max_w; /* with a system: NaN unless given */
  rack_conv_point *conv; /* conversion efficiency by load; none: lossless */
  double r_th;           /* GPU junction over its loop, K/W; NaN: none */
  double gpu_limit_w;    /* nvidia-smi -pl on every GPU; NaN: none */
  size_t nconv;
  int64_t nvlink_domain; /* GPUs per NVLink domain; 0: the whole rack */
  load_config load;
  /* Set by the checks, not keys: other_power_* were given; the group has
   * neither a system nor host power (its IT excludes the host). */
  bool other_given, no_host;
} rack_group_config;

/* The models that bring a scenario key of their own, one row each:
 * XX(key, config type, schema, on, descriptor, help). The row is the
 * whole of such a model's wiring into the factory: its config (a field
 * `key` of factory_config), its key in the scenario (after the others,
 * written in the resolved scenario only when the config's bool `on` is
 * set, so files from before the model stay the same) and its descriptor
 * (factory_model.h) at the end of the table of models. Its header
 * (config, schema) is included above. */
#include "fabric.h"
#define FACTORY_MODEL_MAP(XX)                                                  \
  XX(fabric, fab_config, fab_schema, enabled, fabric_model,                    \
     "the back-end network fabric's switches and optics, as IT: {enabled, "    \
     "nics_per_gpu, nic_gbps, switch_ports, port_gbps, switch_power, "         \
     "transceiver_power}")

typedef struct factory_config {
  char *name;
  char *description;
  int64_t seed;
  double duration_s;
  double control_period_s;
  double sample_period_s;
  char *catalog;   /* a catalog file instead of the built-in one, or NULL */
  char *models;    /* an LLM catalog file instead of the built-in one */
  char *grid_code; /* a grid-code file the run is held to, or NULL */
  power_config power;
  grid_config grid;
  pq_config power_quality;
  rack_group_config *racks;
  size_t nracks;
  cool_loop_config *loops; /* absent: a default plant (factory_facility.c) */
  size_t nloops;
  elec_config electrical; /* the power chain's losses and fixed load */
  smo_config smoothing;   /* in-rack power smoothing, every rack */
  bat_config battery;     /* on-site battery behind the feed */
  dist_config ride_through; /* the answer to grid.disturbances */
  inf_config *services;   /* inference services */
  size_t nservices;
  train_config *training; /* training jobs */
  size_t ntraining;
  gjob_config *gjobs; /* generic GPU jobs: the `jobs` key */
  size_t ngjobs;
  sched_config scheduler;
  fault_config *faults; /* PDU trips, cooling losses, feed drops */
  size_t nfaults;
  inf_settings inference; /* every service's granularity */
  /* Keys an overlay of `aifsim calibrate` set (--set-file), and that
   * overlay: calibrated values, apart from modelled ones. */
  char **calibrated_keys;
  size_t ncalibrated_keys;
  char *calibration_overlay;
#define XX(key, type, schema, on, desc, help) type key;
  FACTORY_MODEL_MAP(XX)
#undef XX
} factory_config;

extern const scn_schema factory_schema;

/* A scenario as loaded: the config, the catalog it names, the grid feed
 * with its signal files read, and the resolved YAML (every default filled
 * in) that reproduces it. */
typedef struct factory_scenario {
  factory_config cfg;
  gpu_catalog catalog;
  sys_catalog systems;
  llm_catalog llms;
  grid feed;
  gcode code; /* the grid_code file's (zeroed: none named) */
  char *resolved;
  char *path;  /* the scenario file, for paths relative to it */
  int cooling; /* factory_cooling: how the loops came about */
  /* Not of the file: how many threads run the services' request events
   * (workloads.h's work_config.threads; 0, as loaded: one). How the run
   * is executed, never the model: it changes no output. */
  unsigned threads;
} factory_scenario;

/* How a scenario's cooling loops came about (factory_facility.c). */
typedef enum factory_cooling {
  FACTORY_COOLING_GIVEN,   /* the scenario lists them */
  FACTORY_COOLING_DEFAULT, /* no `loops` key: one plant per rack group */
  FACTORY_COOLING_NONE,    /* `loops: []`: no cooling power at all */
} factory_cooling;

/* One line for the run's summary on the scenario's cooling when the
 * scenario did not list it: the default loops, or a warning that PUE
 * excludes cooling; "" when it listed its loops. Returns buf. */
const char *factory_cooling_note(const factory_scenario *sc, char *buf,
                                 size_t size);

/* One line naming the rack groups with neither a system nor host power
 * (other_power_*), whose IT figures exclude the host: "rack groups
 * without host power (no system, no other_power_*): a, b: their IT
 * excludes CPUs, memory, NICs, switches and fans"; "" when every group
 * has one. Returns buf. */
const char *factory_host_note(const factory_config *c, char *buf, size_t size);

/* Reads the scenario at path, applies the overrides ("key.path=value",
 * nsets of them) and checks everything, the GPU names against the catalog
 * and the cap against what the factory can be held to. SIM_OK, or an error
 * with FILE:LINE:COLUMN (SIM_EINPUT) or SIM_EIO / SIM_ENOMEM. On success
 * release *sc with factory_scenario_release. */
int factory_scenario_load(const char *path, const char *const *sets,
                          size_t nsets, factory_scenario *sc, sim_error *err);

void factory_scenario_release(factory_scenario *sc);

/* The UTC time the run's t = 0 stands for, as the scenario's grid signals
 * give it (the first signal with a `start`), or NULL when none does. */
const char *factory_start_utc(const factory_config *cfg);

/* The run's length and tick, in engine time. */
sim_time factory_duration(const factory_config *cfg);

/* What service k of sc can serve flat out, for the estimate of a run's
 * memory (requests waiting without a timeout grow with the backlog). */
typedef struct factory_service_capacity {
  double rps;       /* requests per second its replicas complete, every
                       GPU at full clock, with prompt_mean and output_mean
                       tokens per request (the roofline's step times) */
  double in_flight; /* requests its full batches hold at once */
} factory_service_capacity;

/* Fills *out for service k of the loaded scenario sc. SIM_OK, or the
 * roofline's error (SIM_EINPUT) with err set. (factory_capacity.c) */
int factory_service_capacity_of(const factory_scenario *sc, size_t k,
                                double prompt_mean, double output_mean,
                                factory_service_capacity *out, sim_error *err);

typedef struct factory factory;

/* Builds the factory for sc (borrowed: it must outlive the factory),
 * registers its handlers and first events on e and declares its telemetry
 * on sink (which may be NULL: nothing is written). NULL with err set. */
factory *factory_create(const factory_scenario *sc, sim_engine *e,
                        tel_sink *sink, sim_error *err);

void factory_destroy(factory *f);

/* For a client that steps the run (libaifsim, include/aifsim.h): the
 * power in force over the period under way, W (factory_view.c). */
typedef struct factory_power_now {
  double facility_w, it_w, gpu_w, cooling_w, cap_w;
  /* The rest of the facility's: the power chain's losses and fixed load,
   * what smoothing draws beyond the racks' load, and what the battery
   * delivers (negative: charging); facility = it + loss + smoothing +
   * cooling - battery. */
  double loss_w, smoothing_w, battery_w;
} factory_power_now;
void factory_power_of(const factory *f, factory_power_now *out);

/* The control period, in engine time: the factory's ticks fall on its
 * whole multiples from t = 0. */
sim_time factory_tick_period(const factory_config *cfg);

/* The grid's signals over one control period from the engine's now
 * (means, NaN for a signal the scenario does not give: $/MWh, gCO2/kWh,
 * degC) and the cap demand response holds the facility to now (the
 * contracted cap when no event is under way), W. */
typedef struct factory_grid_now {
  double price_per_mwh, carbon_g_per_kwh, outdoor_c, dr_cap_w;
} factory_grid_now;
void factory_grid_of(const factory *f, factory_grid_now *out);

/* Each rack group's IT at its racks' inlets over the period under way,
 * W, into w[0..cfg->nracks). */
void factory_group_power(const factory *f, double *w);

/* The facility cap from the next control tick on, in place of the
 * scenario's power.cap (NaN: that again); demand response and a feed
 * fault still lower it. The caller keeps it in (0, power.cap]. */
void factory_set_cap(factory *f, double cap_w);

/* Power groups and the grid's load target (steer.h; rows_steer.c): the
 * scenario's power groups, how many and p's name (NULL out of range). */
size_t factory_npower_groups(const factory *f);
const char *factory_power_group_name(const factory *f, size_t p);

/* Group p (< factory_npower_groups) at the last allocation, W: its cap in
 * force (NaN: none), its own budget, its budget after borrowing and
 * lending, its GPUs' demand within their ranges, and their power over
 * the period under way. */
typedef struct factory_power_group {
  double cap_w, own_w, budget_w, want_w, gpu_w;
} factory_power_group;
void factory_power_group_of(const factory *f, size_t p,
                            factory_power_group *out);

/* From the next allocation: group p's cap (NaN: the scenario's again;
 * INFINITY: none), and whether it borrows and lends. The caller checks
 * p and that cap_w > 0. */
void factory_set_group_cap(factory *f, size_t p, double cap_w);
void factory_set_group_lending(factory *f, size_t p, bool borrow, bool lend);

/* The grid's load target from the next control tick on (NaN: the
 * scenario's again; INFINITY: none), and the one in force over the
 * period under way (NaN: none). */
void factory_set_load_target(factory *f, double target_w);
double factory_load_target(const factory *f);

/* A client's power policy from the next allocation on (control.h's
 * control_set_split; NULL: the scenario's policy again). */
void factory_set_split(factory *f, control_split_fn fn, void *ctx);

/* A client's view of the workloads, the GPUs and the plant, and its
 * actions on them (factory_client.c; the workloads' own in
 * workloads.h). Services and jobs by index, owners being the services
 * then the jobs; a factory without workloads has none. */
size_t factory_nservices(const factory *f);
const char *factory_service_name(const factory *f, size_t k);
size_t factory_njobs(const factory *f);
const char *factory_job_name(const factory *f, size_t j);

/* Service k now: its GPUs' power in force (W) and count, its budget
 * (INFINITY: none), its requests waiting and in a batch, and so far
 * those ended and those within both SLOs. */
typedef struct factory_service_now {
  double power_w, gpus, budget_w;
  double waiting, in_batch, ended, met;
} factory_service_now;
void factory_service_of(const factory *f, size_t k, factory_service_now *out);

/* Job j now: its phase (work_job_phase), whether a client holds it,
 * the GPUs it asks for, its GPUs' power in force (W, 0 unless running)
 * and its budget (INFINITY: none). */
typedef struct factory_job_now {
  int phase, held;
  double gpus, power_w, budget_w;
} factory_job_now;
void factory_job_of(const factory *f, size_t j, factory_job_now *out);

/* The queues now: jobs waiting (held ones included), of them those a
 * client holds, jobs running, and requests waiting over every service. */
typedef struct factory_queue_now {
  double jobs_waiting, jobs_held, jobs_running, requests_waiting;
} factory_queue_now;
void factory_queue_of(const factory *f, factory_queue_now *out);

/* work_hold_job on job j (< factory_njobs): SIM_OK, SIM_EINVAL (running
 * or done), SIM_ENOMEM or the pass's failure. */
int factory_hold_job(factory *f, size_t j, bool hold);

/* Owner o's budget on its GPUs' caps from the next allocation on (the
 * caller keeps budget_w >= factory_owner_floor_w or INFINITY):
 * work_set_budget, with power control told to apply it. SIM_OK or
 * SIM_ENOMEM. */
int factory_set_budget(factory *f, size_t owner, double budget_w);
double factory_owner_floor_w(const factory *f, size_t owner);

/* Rack group g's GPUs now: how many, their caps in force (mean, least,
 * most; W), their clocks as shares of the full clock (mean, least) and
 * their power (W). */
typedef struct factory_gpus_now {
  double n, cap_mean_w, cap_min_w, cap_max_w, clock_mean, clock_min;
  double power_w;
} factory_gpus_now;
void factory_gpus_of(const factory *f, size_t g, factory_gpus_now *out);

/* Every GPU's cap in force (W) and clock share, in the fleet's order
 * (rack group by rack group), into cap_w and clock (NULL: not wanted),
 * factory_ngpus of each. */
size_t factory_ngpus(const factory *f);
void factory_gpus_each(const factory *f, double *cap_w, double *clock);

/* The cooling loops: how many, l's name, and l now: its temperature, its
 * supply setpoint and the range the plant allows it (cooling.h), the
 * heat it removes and its cooling power over the period (W). */
size_t factory_nloops(const factory *f);
const char *factory_loop_name(const factory *f, size_t l);
typedef struct factory_loop_now {
  double temp_c, supply_c, supply_min_c, supply_max_c, heat_w, power_w;
} factory_loop_now;
void factory_loop_of(const factory *f, size_t l, factory_loop_now *out);
/* cool_loop_set_supply on loop l (< factory_nloops). */
int factory_set_supply(factory *f, size_t l, double supply_c);

/* Inside the IT over the period under way, W: the racks' conversion
 * losses and fans, and what models outside the racks draw. */
void factory_it_parts_of(const factory *f, double *psu_w, double *fan_w,
                         double *outside_w);

/* The battery's state of charge now, [0, 1]; NaN without a battery. */
double factory_battery_soc(const factory *f);

/* What a run comes to; filled by factory_finish. */
typedef struct factory_summary {
  double duration_s;
  double energy_j, it_energy_j, gpu_energy_j;
  /* it_energy_j is at the racks' inlets (The Green Grid's IT): the
   * racks' power-supply losses and fans are in it, and apart in
   * psu_loss_energy_j and fan_energy_j; loss_energy_j is the power
   * chain's (transformer, UPS, distribution) with the fixed load. */
  double cost, co2_kg, loss_energy_j, cooling_energy_j;
  double psu_loss_energy_j, fan_energy_j;
  /* Site water of the evaporative loops' towers, kg (= L), by source;
   * all 0 for a dry plant. */
  double water_kg, water_evaporation_kg, water_blowdown_kg, water_drift_kg;
  /* Inside it_energy_j, drawn by models outside the racks (the network
   * fabric's switches and optics): not the workloads' to share. */
  double it_outside_racks_j;
  double cost_energy, cost_demand, cost_fees; /* cost is their sum; NaN */
  double peak_demand_kw;     /* the billed peak interval-average power */
  const char *carbon_basis;  /* "lifecycle", "direct" or "none"; static */
  double smoothing_energy_j; /* fed beyond the racks' load: burned + stored */
  double battery_net_j;      /* delivered minus drawn by the battery */
  double battery_loss_j, smoothing_violation_s;
  double throttled_gpu_s; /* GPU-seconds held below their cap by heat */
  double max_ramp_w_per_s, oscillation_j, oscillation_w_rms;
  /* The grid connection (power_quality.h): ramps over pq_ramp_windows,
   * the swing's band shares, the dynamic range; and the verdict against
   * the scenario's grid code, one line ("" when none is named). */
  double ramp_up_w_per_s[PQ_NRAMPS], ramp_down_w_per_s[PQ_NRAMPS];
  double band_share, sub_share[PQ_NSUBBANDS], dynamic_range_w;
  double dynamic_range_share;
  char grid_verdict[512];
  /* Disturbances (disturb.h; NaN, 0 without any): the share of those
   * inside the ride-through curve that the facility rode through, the
   * largest load the grid lost at a trip, the time the facility was off
   * the grid (return ramps not counted), the grid energy its backup
   * carried instead, the time its IT was dark, and the trips. */
  double ride_through_met, dist_lost_w, dist_off_s, dist_backup_j;
  double dist_dark_s;
  uint64_t dist_events, dist_trips;
  double mean_power_w, peak_power_w, cap_w;
  double cap_violation_s, cap_violation_j;
  double mean_activity;
  uint64_t gpus, racks, ticks, samples;
  /* Workloads: energy by owner (they add up to it_energy_j less
   * it_outside_racks_j), tokens and
   * requests, training jobs. */
  double inference_energy_j, training_energy_j, idle_energy_j;
  double overhead_energy_j;
  double tokens, tokens_per_joule; /* over the services' energy */
  double slo_attainment; /* share of ended requests (unserved: missed) */
  uint64_t requests_arrived, requests_completed, requests_rejected;
  uint64_t jobs_arrived, jobs_done, jobs_running, jobs_queued;
  uint64_t jobs_rejected, job_failures;
  double stranded_j; /* the cap's energy the factory left unused */
  /* Demand response: time under events, the longest wait for power to
   * reach an event's cap after it began, energy above it, and the SLO
   * attainment of the requests completed during events (NaN: none). */
  double dr_s, dr_time_to_cut_s, dr_over_j, dr_slo_attainment;
  uint64_t dr_events;
  /* With a response window: the share of event periods that began a
   * window or more after a cut at or under the target (NaN: none). */
  double dr_alignment;
  double training_tokens; /* trained: iterations done x their tokens */
  double training_co2_kg; /* of the jobs' GPU energy; NaN: no carbon */
  uint64_t jobs_late;     /* done after their deadline, or not by it */
  uint64_t job_pauses;    /* grid-aware pauses */
  double jct_mean_s;      /* over finished jobs, arrival to end; NaN */
  double lost_gpu_hours;  /* to failures */
  /* Faults: intervals that took effect, the time any fault was in force,
   * the training GPU-hours lost to PDU trips (part of lost_gpu_hours) and
   * the requests lost with the replicas that went dark. */
  uint64_t fault_events;
  double fault_s;
  double fault_lost_gpu_hours;
  uint64_t requests_dropped;
  /* Overload: requests whose clients gave up before a first token (the
   * services' timeout); they count against slo_attainment. */
  uint64_t requests_timed_out;
  /* Means over the completed requests (NaN: none), for tests and
   * callers: not written to /summary. */
  double ttft_mean_s, tpot_mean_s;
} factory_summary;

/* ITUE (Patterson et al., ISC 2013): IT energy over the compute
 * components' (IT less the racks' power-supply losses and fans); TUE =
 * ITUE x PUE, facility energy over the compute components'. NaN without
 * IT energy. */
double factory_itue(const factory_summary *s);
double factory_tue(const factory_summary *s);

/* The Green Grid's WUE: site water (L) per IT kWh; 0 for a dry plant,
 * NaN without IT energy. */
double factory_wue(const factory_summary *s);

/* The registry of /summary metrics: every row a run may put (the
 * factory's and its models'), grouped as the summary tables show them.
 * Fills rows[0..max) and returns how many there are in all. */
size_t factory_metrics(const tel_metric **rows, size_t max);

/* Closes the books after the engine has run to the end: checks that the
 * sampled energy adds up to the integrated energy, that the workloads'
 * energy adds up to the IT energy, that requests and jobs are conserved,
 * that the cap's accounting holds and that no energy or CO2 is NaN or
 * negative and no cost NaN (a figure the run cannot give, such as a cost
 * without a price, is absent, not wrong). SIM_ESTATE naming the invariant
 * and its numbers if one fails; else writes the /summary metrics to the
 * sink and fills *out. */
int factory_finish(factory *f, factory_summary *out, sim_error *err);

/* A test seam, not for programs: makes the next factory_finish find its
 * books broken, to show that the invariants catch it. No scenario key or
 * command-line option reaches it. */
typedef enum factory_break {
  FACTORY_BREAK_NONE,
  FACTORY_BREAK_BALANCE, /* the samples miss a joule */
  FACTORY_BREAK_NAN,     /* the cooling energy is NaN */
  FACTORY_BREAK_CO2,     /* the CO2 is negative */
  FACTORY_BREAK_COST,    /* the cost is NaN although priced */
  FACTORY_BREAK_CAP      /* cap violation longer than the run */
} factory_break;
void factory__test_break(factory *f, factory_break which);

#endif
