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

/* Why a metric can be undefined, by the start of its key. */
static const struct metric_reason {
  const char *prefix, *why;
} reasons[] = {
    {"cost", "no price signal or tariff"},
    {"co2_t", "no carbon signal"},
    {"carbon_g_per_kwh", "no carbon signal"},
    {"training_co2_kg", "no carbon signal"},
    {"jct_mean_s", "no job finished"},
    {"dr_slo_attainment", "no demand-response event with requests"},
    {"slo_attainment", "no requests"},
    {"tokens_per_joule", "no tokens served"},
    {"mean_pue", "no IT energy"},
    {"itue", "no IT energy"},
    {"tue", "no IT energy"},
    {"max_ramp_1", "the run is shorter than two of the ramp's windows"},
    {"band_share", "no power-quality window, or no swing in it"},
};

/* Appends "key: why" to the summary's list of absent metrics. */
static void note_absent(char *absent, size_t size, const char *key) {
  const char *why = "undefined for this run";
  for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
    if (strncmp(key, reasons[i].prefix, strlen(reasons[i].prefix)) == 0) {
      why = reasons[i].why;
      break;
    }
  size_t len = strlen(absent);
  snprintf(absent + len, size - len, "%s%s: %s", len > 0 ? "; " : "", key, why);
}

/* Writes the defined metrics; a NaN one is left out and noted in absent
 * (the summary's string attribute "absent"), never written as NaN. */
static int put_metrics(tel_sink *sink, const metric *m, size_t n, char *absent,
                       size_t size) {
  int rc = SIM_OK;
  for (size_t i = 0; i < n && rc == SIM_OK; i++)
    if (isnan(m[i].value))
      note_absent(absent, size, m[i].key);
    else
      rc = tel_put_summary(sink, m[i].key, m[i].value);
  return rc;
}

int factory__put_metric(tel_sink *sink, const char *key, double value,
                        char *absent, size_t size) {
  const metric m = {key, value};
  return put_metrics(sink, &m, 1, absent, size);
}

/* Energy, power and the bill. */
static int put_energy_metrics(tel_sink *sink, const factory_summary *s,
                              char *absent, size_t size) {
  const metric m[] = {
      {"energy_mwh", s->energy_j / 3.6e9},
      {"it_energy_mwh", s->it_energy_j / 3.6e9},
      {"loss_energy_mwh", s->loss_energy_j / 3.6e9},
      {"cooling_energy_mwh", s->cooling_energy_j / 3.6e9},
      {"smoothing_energy_mwh", s->smoothing_energy_j / 3.6e9},
      {"smoothing_violation_s", s->smoothing_violation_s},
      {"throttled_gpu_s", s->throttled_gpu_s},
      {"battery_net_mwh", s->battery_net_j / 3.6e9},
      {"battery_loss_mwh", s->battery_loss_j / 3.6e9},
      {"mean_pue", s->it_energy_j > 0 ? s->energy_j / s->it_energy_j : NAN},
      {"psu_loss_energy_mwh", s->psu_loss_energy_j / 3.6e9},
      {"fan_energy_mwh", s->fan_energy_j / 3.6e9},
      {"itue", factory_itue(s)},
      {"tue", factory_tue(s)},
      {"max_ramp_w_per_s", s->max_ramp_w_per_s},
      {"oscillation_j", s->oscillation_j},
      {"oscillation_w_rms", s->oscillation_w_rms},
      {"max_ramp_1s_w_per_s", factory__max_ramp(s, 0)},
      {"max_ramp_1min_w_per_s", factory__max_ramp(s, 1)},
      {"max_ramp_10min_w_per_s", factory__max_ramp(s, 2)},
      {"band_share", s->band_share},
      {"dynamic_range_w", s->dynamic_range_w},
      {"gpu_energy_mwh", s->gpu_energy_j / 3.6e9},
      {"mean_power_w", s->mean_power_w},
      {"peak_power_w", s->peak_power_w},
      {"cap_w", s->cap_w},
      {"cap_violation_s", s->cap_violation_s},
      {"cap_violation_j", s->cap_violation_j},
      {"cost", s->cost},
      {"cost_energy", s->cost_energy},
      {"cost_demand", s->cost_demand},
      {"cost_fees", s->cost_fees},
      {"peak_demand_kw", s->peak_demand_kw},
  };
  return put_metrics(sink, m, sizeof m / sizeof m[0], absent, size);
}

/* CO2, the fleet and the services. */
static int put_work_metrics(tel_sink *sink, const factory_summary *s,
                            char *absent, size_t size) {
  const metric m[] = {
      {"co2_t", s->co2_kg / 1000},
      {"carbon_g_per_kwh",
       s->energy_j > 0 ? s->co2_kg / s->energy_j * 3.6e9 : NAN},
      {"mean_activity", s->mean_activity},
      {"duration_s", s->duration_s},
      {"gpus", (double)s->gpus},
      {"racks", (double)s->racks},
      {"inference_energy_mwh", s->inference_energy_j / 3.6e9},
      {"training_energy_mwh", s->training_energy_j / 3.6e9},
      {"idle_energy_mwh", s->idle_energy_j / 3.6e9},
      {"overhead_energy_mwh", s->overhead_energy_j / 3.6e9},
      {"tokens", s->tokens},
      {"tokens_per_joule", s->tokens_per_joule},
      {"tokens_per_joule_facility",
       s->energy_j > 0 && s->tokens > 0 ? s->tokens / s->energy_j : NAN},
      {"slo_attainment", s->slo_attainment},
      {"requests_arrived", (double)s->requests_arrived},
      {"requests_completed", (double)s->requests_completed},
      {"requests_rejected", (double)s->requests_rejected},
  };
  return put_metrics(sink, m, sizeof m / sizeof m[0], absent, size);
}

/* Training jobs, demand response and faults. */
static int put_job_metrics(tel_sink *sink, const factory_summary *s,
                           char *absent, size_t size) {
  const metric m[] = {
      {"jobs_arrived", (double)s->jobs_arrived},
      {"jobs_done", (double)s->jobs_done},
      {"jobs_running", (double)s->jobs_running},
      {"jobs_queued", (double)s->jobs_queued},
      {"jobs_rejected", (double)s->jobs_rejected},
      {"job_failures", (double)s->job_failures},
      {"jct_mean_s", s->jct_mean_s},
      {"lost_gpu_hours", s->lost_gpu_hours},
      {"stranded_mwh", s->stranded_j / 3.6e9},
      {"dr_events", (double)s->dr_events},
      {"dr_s", s->dr_s},
      {"dr_time_to_cut_s", s->dr_time_to_cut_s},
      {"dr_energy_above_j", s->dr_over_j},
      {"dr_slo_attainment", s->dr_slo_attainment},
      {"training_tokens", s->training_tokens},
      {"training_co2_kg", s->training_co2_kg},
      {"jobs_late", (double)s->jobs_late},
      {"job_pauses", (double)s->job_pauses},
      {"fault_events", (double)s->fault_events},
      {"fault_s", s->fault_s},
      {"fault_lost_gpu_hours", s->fault_lost_gpu_hours},
      {"requests_dropped", (double)s->requests_dropped},
      {"requests_timed_out", (double)s->requests_timed_out},
  };
  return put_metrics(sink, m, sizeof m / sizeof m[0], absent, size);
}

/* The /summary metrics, in the order the summary lists them. */
int factory__put_summary(factory *f) {
  const factory_summary *s = &f->sum;
  char absent[2048] = "";
  int rc = put_energy_metrics(f->sink, s, absent, sizeof absent);
  if (rc == SIM_OK)
    rc = put_work_metrics(f->sink, s, absent, sizeof absent);
  if (rc == SIM_OK)
    rc = put_job_metrics(f->sink, s, absent, sizeof absent);
  for (size_t m = 0; m < factory_nmodels && rc == SIM_OK; m++)
    if (factory_models[m]->metrics != NULL)
      rc = factory_models[m]->metrics(f, f->state[m], f->sink, absent,
                                      sizeof absent);
  if (rc == SIM_OK)
    rc = tel_put_summary_str(f->sink, "absent", absent);
  if (rc != SIM_OK)
    return rc;
  char note[1024];
  if (*factory_host_note(f->cfg, note, sizeof note) != '\0')
    rc = tel_put_summary_str(f->sink, "host_power_note", note);
  if (rc != SIM_OK)
    return rc;
  return tel_put_summary_str(f->sink, "carbon_basis", s->carbon_basis);
}

double factory_itue(const factory_summary *s) {
  double compute = s->it_energy_j - s->psu_loss_energy_j - s->fan_energy_j;
  return compute > 0 ? s->it_energy_j / compute : NAN;
}

double factory_tue(const factory_summary *s) {
  double compute = s->it_energy_j - s->psu_loss_energy_j - s->fan_energy_j;
  return compute > 0 ? s->energy_j / compute : NAN;
}
