/* factory_metrics.c - the run's /summary: its metrics in the order the
 * summary lists them, a metric the run cannot give left out and noted in
 * the string attribute "absent", the models' own metrics after the
 * factory's (factory_model.h), and ITUE and TUE. factory_books.c closes
 * the books and calls it last. */
#include "factory.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "factory_internal.h"
#include "factory_model.h"

/* A /summary metric. */
typedef struct metric {
  const char *key;
  double value;
} metric;

/* Appends "key: why" to the summary's list of absent metrics, the why
 * from the first of reasons whose prefix starts the key. */
static void note_absent(char *absent, size_t size, const char *key,
                        const factory_reason *reasons) {
  const char *why = "undefined for this run";
  for (const factory_reason *r = reasons; r != NULL && r->prefix != NULL; r++)
    if (strncmp(key, r->prefix, strlen(r->prefix)) == 0) {
      why = r->why;
      break;
    }
  size_t len = strlen(absent);
  snprintf(absent + len, size - len, "%s%s: %s", len > 0 ? "; " : "", key, why);
}

/* Writes the metrics; a NaN one is declared without a value and noted in
 * absent (the summary's string attribute "absent"), never written as NaN. */
int factory__put_metrics(tel_sink *sink, const tel_metric *m, const double *v,
                         size_t n, const factory_reason *reasons, char *absent,
                         size_t size) {
  int rc = SIM_OK;
  for (size_t i = 0; i < n && rc == SIM_OK; i++) {
    if (isnan(v[i]))
      note_absent(absent, size, m[i].key, reasons);
    rc = tel_put_summary(sink, &m[i], v[i]);
  }
  return rc;
}

int factory__put_metric(tel_sink *sink, const tel_metric *m, double value,
                        const factory_reason *reasons, char *absent,
                        size_t size) {
  return factory__put_metrics(sink, m, &value, 1, reasons, absent, size);
}

/* The factory's own metrics: its energy and power, the cap, the fleet
 * and the run (the models' follow, each from its descriptor's metrics
 * hook, in table order: factory_model.h).
 * Key, units, long name, group and value of each. */
#define FACTORY_METRICS(X)                                                     \
  X("energy_mwh", "MWh", "Facility energy", "Energy", s->energy_j / 3.6e9)     \
  X("it_energy_mwh", "MWh", "IT energy", "Energy", s->it_energy_j / 3.6e9)     \
  X("gpu_energy_mwh", "MWh", "GPU energy", "Energy", s->gpu_energy_j / 3.6e9)  \
  X("loss_energy_mwh", "MWh", "Power-chain losses", "Energy",                  \
    s->loss_energy_j / 3.6e9)                                                  \
  X("cooling_energy_mwh", "MWh", "Cooling", "Energy",                          \
    s->cooling_energy_j / 3.6e9)                                               \
  X("psu_loss_energy_mwh", "MWh", "Power-supply losses (in IT)", "Energy",     \
    s->psu_loss_energy_j / 3.6e9)                                              \
  X("fan_energy_mwh", "MWh", "Server fans (in IT)", "Energy",                  \
    s->fan_energy_j / 3.6e9)                                                   \
  X("mean_pue", "1", "PUE", "Energy",                                          \
    s->it_energy_j > 0 ? s->energy_j / s->it_energy_j : NAN)                   \
  X("itue", "1", "ITUE", "Energy", factory_itue(s))                            \
  X("tue", "1", "TUE", "Energy", factory_tue(s))                               \
  X("mean_power_w", "W", "Mean facility power", "Power", s->mean_power_w)      \
  X("peak_power_w", "W", "Peak facility power", "Power", s->peak_power_w)      \
  X("cap_w", "W", "Power cap", "Power", s->cap_w)                              \
  X("cap_violation_s", "s", "Time over the cap", "Power", s->cap_violation_s)  \
  X("cap_violation_j", "J", "Energy over the cap", "Power",                    \
    s->cap_violation_j)                                                        \
  X("stranded_mwh", "MWh", "Stranded power (energy)", "Power",                 \
    s->stranded_j / 3.6e9)                                                     \
  X("throttled_gpu_s", "s", "Thermal throttling (GPU time)", "Power",          \
    s->throttled_gpu_s)                                                        \
  X("mean_activity", "1", "Mean GPU activity", "Power", s->mean_activity)      \
  X("max_ramp_w_per_s", "W/s", "Largest power ramp", "Power",                  \
    s->max_ramp_w_per_s)                                                       \
  X("max_ramp_1s_w_per_s", "W/s", "Largest ramp over 1 s", "Power",            \
    factory__max_ramp(s, 0))                                                   \
  X("max_ramp_1min_w_per_s", "W/s", "Largest ramp over 1 min", "Power",        \
    factory__max_ramp(s, 1))                                                   \
  X("max_ramp_10min_w_per_s", "W/s", "Largest ramp over 10 min", "Power",      \
    factory__max_ramp(s, 2))                                                   \
  X("oscillation_j", "J", "Oscillation 0.1-20 Hz (energy)", "Power",           \
    s->oscillation_j)                                                          \
  X("oscillation_w_rms", "W", "Oscillation 0.1-20 Hz (RMS)", "Power",          \
    s->oscillation_w_rms)                                                      \
  X("band_share", "1", "Swing energy in 0.1-20 Hz (share)", "Power",           \
    s->band_share)                                                             \
  X("dynamic_range_w", "W", "Dynamic range", "Power", s->dynamic_range_w)      \
  X("duration_s", "s", "Simulated time", "Run", s->duration_s)                 \
  X("gpus", "1", "GPUs", "Run", (double)s->gpus)                               \
  X("racks", "1", "Racks", "Run", (double)s->racks)

static const tel_metric factory_rows[] = {FACTORY_METRICS(TEL_METRIC_ROW)};

/* Why one of the factory's own can be undefined (a model states its
 * own, beside its rows). */
static const factory_reason factory_reasons[] = {
    {"mean_pue", "no IT energy"},
    {"itue", "no IT energy"},
    {"tue", "no IT energy"},
    {"max_ramp_1", "the run is shorter than two of the ramp's windows"},
    {"band_share", "no power-quality window, or no swing in it"},
    {NULL, NULL},
};

static int put_factory_metrics(tel_sink *sink, const factory_summary *s,
                               char *absent, size_t size) {
  const double v[] = {FACTORY_METRICS(TEL_METRIC_VALUE)};
  return factory__put_metrics(sink, factory_rows, v, sizeof v / sizeof v[0],
                              factory_reasons, absent, size);
}

/* The summary's texts: what the run cannot give, what its IT leaves out,
 * and how its CO2 was counted. */
static const tel_metric absent_metric = {
    "absent", NULL, "Figures the run cannot give, each with why", "Run"};
static const tel_metric host_note_metric = {
    "host_power_note", NULL, "Rack groups whose IT excludes host power",
    "Energy"};
static const tel_metric carbon_basis_metric = {"carbon_basis", NULL,
                                               "Carbon basis", "Grid"};

/* The /summary metrics, in the order the summary lists them, the
 * models' own after the factory's. */
int factory__put_summary(factory *f) {
  const factory_summary *s = &f->sum;
  char absent[2048] = "";
  int rc = put_factory_metrics(f->sink, s, absent, sizeof absent);
  for (size_t m = 0; m < factory_nmodels && rc == SIM_OK; m++)
    if (factory_models[m]->metrics != NULL)
      rc = factory_models[m]->metrics(f, f->state[m], f->sink, absent,
                                      sizeof absent);
  if (rc == SIM_OK)
    rc = tel_put_summary_str(f->sink, &absent_metric, absent);
  if (rc != SIM_OK)
    return rc;
  char note[1024];
  if (*factory_host_note(f->cfg, note, sizeof note) != '\0')
    rc = tel_put_summary_str(f->sink, &host_note_metric, note);
  if (rc != SIM_OK)
    return rc;
  return tel_put_summary_str(f->sink, &carbon_basis_metric, s->carbon_basis);
}

/* Appends n rows to rows[*k..max), counting them all in *k. */
static void list_rows(const tel_metric **rows, size_t max, size_t *k,
                      const tel_metric *from, size_t n) {
  for (size_t i = 0; i < n; i++, (*k)++)
    if (*k < max)
      rows[*k] = &from[i];
}

size_t factory_metrics(const tel_metric **rows, size_t max) {
  size_t k = 0;
  list_rows(rows, max, &k, factory_rows,
            sizeof factory_rows / sizeof factory_rows[0]);
  for (size_t m = 0; m < factory_nmodels; m++)
    list_rows(rows, max, &k, factory_models[m]->metric_rows,
              factory_models[m]->nmetric_rows);
  list_rows(rows, max, &k, &absent_metric, 1);
  list_rows(rows, max, &k, &host_note_metric, 1);
  list_rows(rows, max, &k, &carbon_basis_metric, 1);
  for (size_t m = 0; m < factory_nmodels; m++)
    if (factory_models[m]->text_rows != NULL) {
      size_t n;
      const tel_metric *texts = factory_models[m]->text_rows(&n);
      list_rows(rows, max, &k, texts, n);
    }
  return k;
}

double factory_itue(const factory_summary *s) {
  double compute = s->it_energy_j - s->psu_loss_energy_j - s->fan_energy_j;
  return compute > 0 ? s->it_energy_j / compute : NAN;
}

double factory_tue(const factory_summary *s) {
  double compute = s->it_energy_j - s->psu_loss_energy_j - s->fan_energy_j;
  return compute > 0 ? s->energy_j / compute : NAN;
}

double factory_wue(const factory_summary *s) {
  return s->it_energy_j > 0 ? s->water_kg / (s->it_energy_j / 3.6e6) : NAN;
}
