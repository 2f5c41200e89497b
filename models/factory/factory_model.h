/* factory_model.h - a model as the factory sees it: one constant
 * descriptor (docs/ARCHITECTURE.md, "How to add a model").
 *
 * The factory keeps its models in one table (factory_models.c) and, at
 * every stage of a run, loops over it in the table's order; it knows no
 * model by name beyond the table's rows. A hook left NULL is a stage the
 * model takes no part in. A model keeps its state in its own slot (self:
 * what its create put in *self, NULL until then); the models that came
 * before the descriptors still keep theirs in the factory's struct
 * (factory_internal.h) and take self as NULL.
 *
 * The stages, in the order a run meets them:
 *
 *   build    create, in table order, after the fleet; then declare (its
 *            telemetry groups, after /facility and /racks; only with a
 *            sink), then start (what registers events on the engine; a
 *            model whose state must come after the telemetry, such as the
 *            workloads', makes it here);
 *   tick     advance (book the interval since the last tick at the power
 *            in force), then, for the coming period: period (each model
 *            may lower the cap, or step its faults) and fault (when one
 *            said the fleet changed: the others react); then power
 *            control's period, which calls clocks (the clocks of the
 *            period ending go to the models, before a new split rewrites
 *            the caps they ran under), moves the factory's
 *            background load, calls drive (a model's activity on the GPUs
 *            it holds, over that load) and asks the holder of the GPUs
 *            for its slots, their units and its requests; then it_w (the
 *            IT a model draws outside the racks, added to the racks' IT),
 *            power (in table order, each model reading what the rows
 *            above it set: smoothing, cooling, the chain's losses and the
 *            battery, which sets what the grid sees), group_w (what a
 *            model draws in each rack group: its heat, and its share of
 *            the cap's worst case, whenever the split asks) and after
 *            (once the period's power is set);
 *   sample   columns (its cells of the /facility row), then sample (its
 *            own groups' rows, after /facility and /racks);
 *   finish   close (its figures into the summary), then, once the books
 *            are checked, write (its groups at the end) and metrics (its
 *            /summary metrics, after the factory's);
 *   end      destroy, in reverse table order. */
#ifndef MODELS_FACTORY_MODEL_H
#define MODELS_FACTORY_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "engine.h"
#include "err.h"
#include "power.h"
#include "rack.h"
#include "scenario.h"
#include "tel.h"

/* factory.h's types, declared here rather than included, so that the
 * factory's files include this header without a cycle of modules. */
typedef struct factory factory;
typedef struct factory_summary factory_summary;

/* What the models decide at a tick for the coming period (the period
 * hook), down the table: each may lower the cap (a demand-response event,
 * a feed fault's backup limit), and say that the fleet changed (a fault's
 * step: the split is redone and the fault hooks run). The factory keeps
 * it until the next tick (factory__period). */
typedef struct factory_period {
  double cap_w;   /* starts at the contracted cap (power.cap) */
  bool dr;        /* a demand-response event lowers it (not a fault) */
  double dr_end_s; /* the end of that event; NaN: none under way */
  bool changed;   /* the fleet or the plant changed at this tick */
  bool fault_on;  /* a fault is in force */
  double target_w; /* the grid's load target (steer.h); NaN: none */
  double grid_share; /* of the facility's power, what the grid carries
                        (1 but after a disturbance's trip: disturb.h) */
} factory_period;

typedef struct factory_model {
  const char *name;         /* its scenario key, and its name in messages */
  const scn_schema *schema; /* the key's schema (the model's own); NULL */
  int (*create)(factory *f, void **self, sim_error *err);
  int (*declare)(factory *f, void *self, sim_error *err);
  int (*start)(factory *f, void **self, sim_error *err);
  void (*advance)(factory *f, void *self, sim_time now, double dt);
  void (*period)(factory *f, void *self, double t, factory_period *p);
  void (*fault)(factory *f, void *self);
  /* Power control's view of the workloads (control.h's hooks). clocks
   * and drive run in every model that has them; slots and units are the
   * first model's that has slots (the table has one holder of GPUs);
   * requests adds to *done and *met. */
  void (*clocks)(factory *f, void *self);
  void (*drive)(factory *f, void *self, double dt);
  const uint32_t *(*slots)(const void *self);
  /* How many times any GPU's slot changed (NULL: not counted). */
  uint64_t (*slots_changed)(const void *self);
  void (*units)(const void *self, const uint32_t *key, size_t n,
                power_unit *u);
  void (*requests)(const void *self, uint64_t *done, uint64_t *met);
  double (*it_w)(const factory *f, const void *self);
  int (*power)(factory *f, void *self, double t0, double dt, sim_error *err);
  void (*group_w)(const factory *f, const void *self, double *group_w);
  void (*after)(factory *f, void *self, double t);
  int (*columns)(factory *f, void *self, double t, double dt, double *row);
  int (*sample)(factory *f, void *self, double t, double dt);
  /* Before the racks' row at a sample: clocks the model can solve
   * elsewhere made known to the fleet (rack.h's rack_fleet_phis_known);
   * the factory takes them back after the row. */
  void (*sample_clocks)(factory *f, void *self);
  int (*close)(factory *f, void *self, factory_summary *s, sim_error *err);
  int (*write)(factory *f, void *self, factory_summary *s, sim_error *err);
  int (*metrics)(const factory *f, const void *self, tel_sink *sink,
                 char *absent, size_t size);
  /* The rows its metrics hook may put: the registry lists them
   * (factory_metrics: `aifsim metrics`, docs/OUTPUT.md). */
  const tel_metric *metric_rows;
  size_t nmetric_rows;
  /* The texts it puts into the summary itself (tel_put_summary_str),
   * n of them: the registry lists them after the factory's texts, in
   * table order. NULL: none. */
  const tel_metric *(*text_rows)(size_t *n);
  void (*destroy)(factory *f, void *self);
} factory_model;

/* The table, in the order of every stage (factory_models.c). */
extern const factory_model *const factory_models[];
extern const size_t factory_nmodels;

/* What a model sees of the factory (factory_view.c): the fleet, the sink
 * (NULL: nothing is written), the allocator everything lives on, and the
 * config of a model of factory.h's map (NULL for another). */
const rack_fleet *factory__fleet(const factory *f);
tel_sink *factory__sink(const factory *f);
const sim_allocator *factory__alloc(const factory *f);
const void *factory__model_config(const factory *f, const factory_model *m);
/* The period in force: what the models decided at the last tick. */
const factory_period *factory__period(const factory *f);

/* Why a model's metric can be undefined: the first row whose prefix
 * starts its key gives the why the summary's "absent" notes beside it.
 * Each model states its own, beside its rows, in a table ended by a row
 * of NULLs; a key none matches is "undefined for this run". */
typedef struct factory_reason {
  const char *prefix, *why;
} factory_reason;

/* Writes one /summary metric, declared by its row (tel.h: key, units,
 * long name, group), noting it in absent when it is NaN, with its why
 * from reasons (NULL: none; factory_metrics.c): what a model's metrics
 * hook calls. */
int factory__put_metric(tel_sink *sink, const tel_metric *m, double value,
                        const factory_reason *reasons, char *absent,
                        size_t size);
/* The same for n rows m[i] with values v[i]. */
int factory__put_metrics(tel_sink *sink, const tel_metric *m, const double *v,
                         size_t n, const factory_reason *reasons, char *absent,
                         size_t size);

#endif
