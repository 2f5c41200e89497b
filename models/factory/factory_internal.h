/* factory_internal.h - what the factory's files share: the factory's
 * state, and the functions one file of it calls in another. factory.c is
 * the run time (the control tick and the hooks of power control),
 * factory_build.c the construction, factory_books.c the telemetry and the
 * books, factory_metrics.c the /summary, factory_view.c what they all
 * read, factory_scn.c and factory_scn_workloads.c the scenario;
 * rows_facility.c and rows_run.c are the descriptors (factory_model.h) of
 * the models whose state is still here. */
#ifndef MODELS_FACTORY_INTERNAL_H
#define MODELS_FACTORY_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "factory.h"
#include "factory_model.h"
#include "plant.h"
#include "workloads.h"

/* Seconds to engine time, rounded to the nearest nanosecond. */
static inline sim_time factory__to_ns(double s) {
  return (sim_time)llround(s * 1e9);
}

/* A rack's power at full load with every GPU at TDP: what smoothing's
 * floor is a share of. */
static inline double factory__rack_tdp_w(const rack_group_spec *s) {
  return rack_group_full_w(s);
}

/* The schema of one rack group (racks_scn.c). */
extern const scn_schema factory__group_schema;

/* The fleet's view of a scenario's rack group (factory_view.c): its GPU
 * and system resolved in the scenario's catalogs. */
rack_group_spec factory__group_spec(const factory_scenario *sc,
                                    const rack_group_config *g);

/* ------------------------------------------------------------------ */
/* Run time                                                            */
/* ------------------------------------------------------------------ */

/* Integrals over the current sample interval, per rack and in total. */
typedef struct interval {
  double energy_j, it_j, loss_j, cool_j, smooth_j, bat_j, gpu_j, activity_s;
  double psu_j, fan_j; /* inside it_j: the racks' conversion losses, fans */
  double stranded_j;
  double peak_w;
  double *rack_j, *rack_gpu_j, *rack_activity_s;
} interval;

struct factory {
  const sim_allocator *alloc; /* the engine's: everything here lives on it */
  const factory_scenario *sc;
  const factory_config *cfg;
  sim_engine *engine;
  tel_sink *sink;
  rack_fleet *fleet;
  gsl_rng **noise_rng;  /* per rack */
  double *noise;        /* per rack: the OU state */
  load_noise *noise_of; /* per group: its coefficients */
  double *level_of;     /* per group: the pattern's level now */
  /* The fleet's free runs (unit key 0, rack.h), rack r's at
   * free_runs[free_run0[r] .. free_run0[r + 1]), made from the fleet's
   * runs number free_seen (0: none yet): the background load goes to
   * them (factory.c move_load). */
  uint32_t *free_runs, *free_run0;
  uint64_t free_seen;
  uint32_t tick_kind;
  sim_time period, sample_every, last;
  double control_dt_s;
  tel_group facility_group, racks_group;
  size_t facility_id, racks_id;
  double *row; /* a racks row: R_NCOLS x nracks */
  const char **rack_labels;
  /* In force since `last`: */
  /* p_it is the racks' inlet power (IT by The Green Grid), p_psu and
   * p_fan the conversion losses and fans inside it; p_loss the power
   * chain's losses and fixed load, outside it. */
  double p_facility, p_it, p_loss, p_cool, p_smooth, p_bat, p_gpu, activity;
  double p_psu, p_fan;
  /* Inside p_it: the racks' own, and what models outside them draw (the
   * network fabric). */
  double p_rack_it, p_outside;
  double cap;
  double limit; /* what the split holds the facility to: the cap, or a
                   load target below it */
  smo_bank *smooth;  /* NULL when smoothing is off */
  double *rack_load; /* per rack: its IT at the inlet */
  double *rack_heat; /* per rack: that plus what smoothing burned */
  plant plant;
  double *group_heat; /* per group: IT heat now */
  long *group_loop;   /* per group: the loop taking most of its heat, -1 */
  double reserve_outdoor_c; /* the outdoor temperature the split assumed */
  tel_group loops_group;
  size_t loops_id;
  double *loop_row;
  grid_books books;
  /* The signals' integrals at the last tick's end (sig_integral_next):
   * the carbon the workloads' energy is charged with (work_advance), the
   * outdoor air and humidity of the cooling's coming period. */
  sig_run carbon_run, outdoor_run, humidity_run;
  pq_window pq;
  interval iv;
  control *control; /* the budget, the policy, demand response */
  /* What the models decided for the period in force (factory.c's
   * decide_period), and per group its racks whose caps the split decides
   * (neither dark nor in emergency) and its emergency racks. */
  factory_period coming;
  double cap_set; /* a client's cap (factory_set_cap); NaN: power.cap */
  bool resplit;   /* a client moved a loop's setpoint: the split's
                     reserve for cooling is redone at the next tick */
  uint32_t *group_free, *group_emergency;
  factory_summary sum;
  double sampled_energy_j;
  factory_break broken; /* a test seam (factory__test_break) */
  void **state;         /* per row of factory_models: the model's own state */
  /* The row of the one model that holds GPUs (the workloads: the first
   * with a slots hook), found once: power control asks it for every
   * unit every period. */
  size_t holder;
};

/* The columns of the /facility row (factory_books.c declares them); a
 * model's columns hook fills its cells. */
enum {
  F_POWER,
  F_IT,
  F_LOSS,
  F_COOL,
  F_SMOOTH,
  F_BATTERY,
  F_SOC,
  F_PUE,
  F_GPU,
  F_CAP,
  F_PEAK,
  F_ENERGY,
  F_ACTIVITY,
  F_CARBON,
  F_PRICE,
  F_OUTDOOR,
  F_CO2,
  F_COST,
  F_TOKENS,
  F_BUSY,
  F_RUNNING,
  F_QUEUED,
  F_STRANDED,
  F_INFERENCE,
  F_TRAINING,
  F_FAULTS,
  F_NCOLS
};

/* "did you mean 'G'? " for the rack group closest to name, then base, in
 * hint (racks_scn.c). */
const char *factory__group_hint(const factory_config *c, const char *name,
                                const char *base, char *hint, size_t size);

/* Each fault's names and timing against the factory (factory_scn_faults.c).
 * SIM_OK, or SIM_EINVAL with err at the fault's key, or SIM_ENOMEM. */
int factory__check_faults(const factory_config *c, const scn_loc *loc,
                          sim_error *err);

/* The checks of the services and training jobs that need the catalogs and
 * the fleet (factory_scn_workloads.c); reads request traces. */
int factory__check_work(factory_scenario *sc, const scn_loc *loc,
                        sim_error *err);

/* factory.c: the control tick (an engine handler on f), the hooks power
 * control calls on f, and booking the energy up to now before GPUs change
 * hands (a work_settle_fn on f). */
int factory__on_tick(sim_engine *e, void *ctx, const sim_event *ev);
control_hooks factory__control_hooks(factory *f);
void factory__settle(void *ctx, sim_time now);

/* factory_view.c, which calls no other file of the factory: the warmest
 * outdoor temperature over [now, now + sample period], the loop
 * temperature rack r's GPUs sit on (NaN without loops), and the mean of a
 * signal over [t0, t1] (NaN for a signal the scenario does not give). */
double factory__warmest(const factory *f, sim_time now);
double factory__rack_loop_c(const factory *f, uint32_t r);
double factory__mean_of(const sig_series *s, double t0, double t1);
/* factory__mean_of over intervals that follow each other, through r
 * (sig_integral_next): the same mean. */
double factory__mean_next(const sig_series *s, sig_run *r, double t0,
                          double t1);
/* Adds to w[g] what the models draw in rack group g (their group_w). */
void factory__models_group_w(const factory *f, double *w);

/* factory_books.c: opens the /facility, /racks and /loops groups on the
 * sink (nothing without one; SIM_OK or the sink's error, with err set),
 * and closes the sample interval that ends at now: the /facility,
 * /racks and /loops rows and the interval's energy into the summary
 * (SIM_OK or the sink's error). */
int factory__declare_telemetry(factory *f, sim_error *err);
int factory__sample(factory *f, sim_time now);

/* factory_metrics.c: the /summary metrics and their notes to the sink
 * (SIM_OK or the sink's error). */
int factory__put_summary(factory *f);

/* factory_grid.c: copies power quality's figures into the summary; the
 * larger of window k's ramps up and down (NaN: neither known); and, at
 * the end, the verdict against the grid code into the summary and the
 * group /grid_connection to the sink (SIM_OK or the sink's error). */
void factory__close_grid(factory_summary *s, const pq_result *pq);
double factory__max_ramp(const factory_summary *s, size_t k);
int factory__finish_grid(factory *f, factory_summary *s, sim_error *err);

/* The facility the scenario leaves out (factory_facility.c): default
 * loops from each group's GPU, the outdoor temperature they need, the
 * electrical chain's rating. Called by check_factory once the groups are
 * checked and before the loops are. */
/* The operator's DR targets of grid.dr_file into the loaded feed
 * (factory_facility.c): SIM_OK, or the CSV's FILE:LINE:COL (SIM_EINPUT),
 * a scenario position for a file that cannot be read. */
int factory__read_targets(factory_scenario *sc, const scn_loc *loc,
                          sim_error *err);
int factory__default_facility(factory_scenario *sc, const scn_loc *loc,
                              sim_error *err);

#endif
