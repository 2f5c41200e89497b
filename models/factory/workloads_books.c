/* workloads_books.c - the workloads' books at the end of a run: request
 * and job conservation, the energy attribution against the IT energy, the
 * /jobs table and the /services attributes. */
#include "workloads.h"

#include <math.h>
#include <stdlib.h>

#include "workloads_internal.h"

/* ------------------------------------------------------------------ */
/* The books                                                           */
/* ------------------------------------------------------------------ */

/* An owner's CO2; NaN without a carbon signal. */
static double co2_of(const work *w, size_t owner) {
  return w->cfg->carbon->kind == SIG_NONE ? NAN : w->owner_co2_kg[owner];
}

/* Requests: every one that arrived is done, rejected, timed out,
 * dropped, waiting or being served; the summary's request and token
 * figures. */
static int close_services(work *w, work_summary *s, sim_error *err) {
  double met = 0, ttft = 0, tpot = 0;
  for (size_t k = 0; k < w->cfg->nservices; k++) {
    inf_totals t = inf_totals_of(w->svc[k]);
    if (t.arrived != inf_totals_ended(&t) + t.waiting + t.in_batch)
      return sim_error_set(
          err, SIM_ESTATE,
          "service %s: %llu requests arrived but %llu completed, %llu "
          "rejected, %llu timed out, %llu dropped, %llu waiting and %llu "
          "in a batch",
          w->cfg->services[k].name, (unsigned long long)t.arrived,
          (unsigned long long)t.completed, (unsigned long long)t.rejected,
          (unsigned long long)t.timed_out, (unsigned long long)t.dropped,
          (unsigned long long)t.waiting, (unsigned long long)t.in_batch);
    s->requests_arrived += t.arrived;
    s->requests_completed += t.completed;
    s->requests_rejected += t.rejected;
    s->requests_dropped += t.dropped;
    s->requests_timed_out += t.timed_out;
    s->tokens += t.tokens_generated;
    s->inference_energy_j += w->owner_j[k];
    met += (double)t.slo_met;
    ttft += t.ttft_sum_s;
    tpot += t.tpot_sum_s;
  }
  double done = (double)s->requests_completed;
  s->ttft_mean_s = done > 0 ? ttft / done : NAN;
  s->tpot_mean_s = done > 0 ? tpot / done : NAN;
  s->tokens_per_joule =
      s->inference_energy_j > 0 ? s->tokens / s->inference_energy_j : NAN;
  /* A request rejected, timed out or dropped missed its SLOs: it counts
   * against attainment. */
  double served = (double)(s->requests_completed + s->requests_rejected +
                           s->requests_timed_out + s->requests_dropped);
  s->slo_attainment = served > 0 ? met / served : NAN;
  return SIM_OK;
}

/* Jobs: arrived = done + running + queued + rejected; completion times
 * and the work lost to failures. */
static int close_jobs(work *w, double duration_s, work_summary *s,
                      sim_error *err) {
  double jct = 0;
  for (size_t j = 0; j < w->njobs; j++) {
    const train_stats *st = train_stats_of(w->train, j);
    s->training_energy_j += w->owner_j[w->cfg->nservices + j];
    s->lost_gpu_hours += st->lost_gpu_s / 3600;
    s->fault_lost_gpu_hours += st->fault_lost_gpu_s / 3600;
    s->job_failures += st->failures;
    s->training_tokens += st->iterations_done * w->jobs[j].tokens_per_iteration;
    if (train_state_of(w->train, j) == TRAIN_DONE)
      jct += st->end_s - w->jobs[j].arrival_s;
    /* Late: done after its deadline, or not done when it passed. */
    double end =
        train_state_of(w->train, j) == TRAIN_DONE ? st->end_s : duration_s;
    if (end > w->deadline_s[j]) /* false for NaN: no deadline */
      s->jobs_late++;
    s->training_co2_kg += co2_of(w, w->cfg->nservices + j);
    s->job_pauses += st->pauses;
  }
  s->jobs_arrived = w->arrived;
  s->jobs_done = w->done;
  s->jobs_running = w->running;
  s->jobs_queued = w->queued;
  s->jobs_rejected = w->rejected;
  s->jct_mean_s = w->done > 0 ? jct / (double)w->done : NAN;
  if (w->arrived != w->done + w->running + w->queued + w->rejected)
    return sim_error_set(
        err, SIM_ESTATE,
        "jobs: %llu arrived but %llu done, %llu running, "
        "%llu queued and %llu rejected",
        (unsigned long long)w->arrived, (unsigned long long)w->done,
        (unsigned long long)w->running, (unsigned long long)w->queued,
        (unsigned long long)w->rejected);
  return SIM_OK;
}

/* The jobs, idle and overhead add up to the IT energy. */
static int close_energy(const work *w, double it_energy_j, work_summary *s,
                        sim_error *err) {
  s->idle_energy_j = w->idle_j;
  s->overhead_energy_j = w->overhead_j;
  double sum =
      s->inference_energy_j + s->training_energy_j + w->idle_j + w->overhead_j;
  if (!(fabs(sum - it_energy_j) <= 1e-9 * fmax(1, it_energy_j)))
    return sim_error_set(err, SIM_ESTATE,
                         "energy attribution: workloads %.17g J + idle "
                         "%.17g J + overhead %.17g J = %.17g J, but the IT "
                         "energy is %.17g J",
                         s->inference_energy_j + s->training_energy_j,
                         w->idle_j, w->overhead_j, sum, it_energy_j);
  return SIM_OK;
}

/* The numeric columns of the /jobs table, in job_numbers' order. */
enum {
  J_ARRIVAL,
  J_START,
  J_END,
  J_GPUS,
  J_ENERGY,
  J_WORK,
  J_FAILURES,
  J_LOST,
  J_REQUESTS,
  J_SLO,
  J_TOKENS_PER_J,
  J_CO2,
  J_DEADLINE,
  J_PAUSES,
  JOB_NUMBERS
};

/* One row of the /jobs table. */
typedef struct job_row {
  const char *kind, *name, *status;
  double v[JOB_NUMBERS];
} job_row;

static const char *const train_status[] = {
    [TRAIN_WAITING] = "queued",        [TRAIN_COMPUTING] = "running",
    [TRAIN_CHECKPOINTING] = "running", [TRAIN_RESTARTING] = "running",
    [TRAIN_PAUSED] = "paused",         [TRAIN_DONE] = "done",
};

/* A row with every number NaN (not applicable) to start from. */
static job_row blank_row(const char *kind, const char *name,
                         const char *status) {
  job_row r = {kind, name, status, {0}};
  for (size_t c = 0; c < JOB_NUMBERS; c++)
    r.v[c] = NAN;
  return r;
}

static job_row service_row(const work *w, size_t k) {
  const inf_config *c = &w->cfg->services[k];
  inf_totals t = inf_totals_of(w->svc[k]);
  job_row r = blank_row("inference", c->name, "serving");
  r.v[J_ARRIVAL] = r.v[J_START] = 0;
  r.v[J_END] = w->cfg->duration_s;
  r.v[J_GPUS] = (double)(c->replicas * c->tp);
  r.v[J_ENERGY] = w->owner_j[k];
  r.v[J_WORK] = t.tokens_generated;
  r.v[J_REQUESTS] = (double)t.completed;
  if (inf_totals_ended(&t) > 0) /* an unserved request missed */
    r.v[J_SLO] = (double)t.slo_met / (double)inf_totals_ended(&t);
  if (r.v[J_ENERGY] > 0)
    r.v[J_TOKENS_PER_J] = t.tokens_generated / r.v[J_ENERGY];
  r.v[J_CO2] = co2_of(w, k);
  return r;
}

static job_row training_row(const work *w, size_t j) {
  const train_config *c = &w->jobs[j];
  const train_stats *st = train_stats_of(w->train, j);
  /* A job replayed as logged comes in at its logged start (gpujob.h). */
  bool arrived =
      (c->fixed_start ? c->start_s : c->arrival_s) < w->cfg->duration_s;
  job_row r =
      blank_row(c->model != NULL ? "training" : "gpu_job", c->name,
                arrived ? train_status[train_state_of(w->train, j)] : "future");
  r.v[J_ARRIVAL] = c->arrival_s;
  r.v[J_START] = st->start_s;
  r.v[J_END] = st->end_s;
  r.v[J_GPUS] = (double)train_gpus(w->train, j);
  r.v[J_ENERGY] = w->owner_j[w->cfg->nservices + j];
  r.v[J_WORK] = st->iterations_done;
  r.v[J_FAILURES] = (double)st->failures;
  r.v[J_LOST] = st->lost_gpu_s / 3600;
  r.v[J_CO2] = co2_of(w, w->cfg->nservices + j);
  r.v[J_DEADLINE] = w->deadline_s[j];
  r.v[J_PAUSES] = (double)st->pauses;
  return r;
}

/* Idle GPUs and the racks' other IT power, so the table adds up. */
static job_row rest_row(const char *kind, double energy_j, double gpus,
                        double duration_s) {
  job_row r = blank_row(kind, kind, "");
  r.v[J_START] = 0;
  r.v[J_END] = duration_s;
  r.v[J_GPUS] = gpus;
  r.v[J_ENERGY] = energy_j;
  return r;
}

static const tel_table_column job_numbers[JOB_NUMBERS] = {
    {"arrival_s", "s", "when it was submitted", NULL, NULL},
    {"start_s", "s", "when it started (NaN: never)", NULL, NULL},
    {"end_s", "s", "when it ended (NaN: not yet)", NULL, NULL},
    {"gpus", "1", "GPUs it holds when running", NULL, NULL},
    {"energy_j", "J",
     "GPU energy attributed to it; with idle and overhead the IT energy", NULL,
     NULL},
    {"work", "1", "tokens generated (inference), iterations done (training)",
     NULL, NULL},
    {"failures", "1", "interruptions by GPU failures", NULL, NULL},
    {"lost_gpu_hours", "h", "GPU-hours lost to failures", NULL, NULL},
    {"requests", "1", "requests completed", NULL, NULL},
    {"slo_attainment", "1",
     "share of ended requests (completed, rejected, timed out, dropped) "
     "within both SLOs",
     NULL, NULL},
    {"tokens_per_j", "1/J", "tokens generated per joule of its GPUs", NULL,
     NULL},
    {"co2_kg", "kg",
     "CO2 of its GPU energy at the grid's carbon intensity (NaN: no "
     "carbon signal)",
     NULL, NULL},
    {"deadline_s", "s", "when a training job had to be done", NULL, NULL},
    {"pauses", "1", "grid-aware pauses at checkpoints", NULL, NULL},
};

/* The rows of the /jobs table: the services, the jobs, idle, overhead. */
static void fill_rows(const work *w, double duration_s, job_row *rows) {
  size_t r = 0;
  for (size_t k = 0; k < w->cfg->nservices; k++)
    rows[r++] = service_row(w, k);
  for (size_t j = 0; j < w->njobs; j++)
    rows[r++] = training_row(w, j);
  rows[r++] = rest_row("idle", w->idle_j, w->fleet->n - w->busy, duration_s);
  rows[r++] = rest_row("overhead", w->overhead_j, 0, duration_s);
}

/* The n rows as columns: num holds the ids then each number's column,
 * text the kinds, the names and the statuses; cols points into them. */
static void fill_columns(const job_row *rows, size_t n, double *num,
                         const char **text, tel_table_column *cols) {
  cols[0] = (tel_table_column){"id", "1", "row number", num, NULL};
  for (size_t i = 0; i < n; i++) {
    num[i] = (double)i;
    for (size_t c = 0; c < JOB_NUMBERS; c++)
      num[(c + 1) * n + i] = rows[i].v[c];
    text[i] = rows[i].kind;
    text[n + i] = rows[i].name;
    text[2 * n + i] = rows[i].status;
  }
  cols[1] = (tel_table_column){
      "kind", NULL, "inference, training, idle or overhead", NULL, text};
  cols[2] =
      (tel_table_column){"name", NULL, "service or job name", NULL, text + n};
  cols[3] = (tel_table_column){"status", NULL,
                               "done, running, queued, serving, future", NULL,
                               text + 2 * n};
  for (size_t c = 0; c < JOB_NUMBERS; c++) {
    cols[4 + c] = job_numbers[c];
    cols[4 + c].values = num + (c + 1) * n;
  }
}

static int put_jobs(work *w, double duration_s) {
  size_t n = work__nowners(w) + 2;
  job_row *rows = sim_calloc(w->alloc, n, sizeof *rows);
  double *num = sim_calloc(w->alloc, n * (JOB_NUMBERS + 1), sizeof *num);
  const char **text = sim_calloc(w->alloc, 3 * n, sizeof *text);
  int rc = SIM_ENOMEM;
  if (rows != NULL && num != NULL && text != NULL) {
    tel_table_column cols[JOB_NUMBERS + 4];
    fill_rows(w, duration_s, rows);
    fill_columns(rows, n, num, text, cols);
    tel_table t = {"jobs", cols, JOB_NUMBERS + 4, n, "job"};
    rc = tel_put_table(w->sink, &t);
  }
  sim_free(w->alloc, rows);
  sim_free(w->alloc, num);
  sim_free(w->alloc, text);
  return rc;
}

/* Only fluid runs state it: request-level files stay unchanged. */
static const tel_metric granularity_metric = {"inference_granularity", NULL,
                                              "Inference granularity", "Work"};

const tel_metric *work_summary_metrics(size_t *n) {
  *n = 1;
  return &granularity_metric;
}

/* Service k's attributes on its /services group: its request counts,
 * SLOs and run-wide p99s, and (fluid services only, so request-level
 * files stay unchanged) that it ran as flows. */
static int put_attrs_of(work *w, size_t k) {
  inf_totals t = inf_totals_of(w->svc[k]);
  const inf_config *c = &w->cfg->services[k];
  const struct {
    const char *key;
    double v;
  } attrs[] = {
      {"requests_arrived", (double)t.arrived},
      {"requests_completed", (double)t.completed},
      {"requests_rejected", (double)t.rejected},
      {"requests_dropped", (double)t.dropped},
      {"requests_timed_out", (double)t.timed_out},
      {"tokens_generated", t.tokens_generated},
      {"ttft_slo_s", c->ttft_slo_s},
      {"tpot_slo_s", c->tpot_slo_s},
      {"ttft_p99_s", inf_ttft_quantile(w->svc[k], 0.99)},
      {"tpot_p99_s", inf_tpot_quantile(w->svc[k], 0.99)},
  };
  int rc = SIM_OK;
  for (size_t i = 0; i < sizeof attrs / sizeof *attrs && rc == SIM_OK; i++)
    rc = tel_put_group_attr(w->sink, w->svc_group[k], attrs[i].key, attrs[i].v);
  if (rc == SIM_OK && inf_is_fluid(w->svc[k]))
    rc = tel_put_group_attr(w->sink, w->svc_group[k], "fluid", 1);
  return rc;
}

static int put_service_attrs(work *w) {
  int rc = SIM_OK;
  for (size_t k = 0; k < w->cfg->nservices && rc == SIM_OK; k++)
    rc = put_attrs_of(w, k);
  if (rc == SIM_OK && w->cfg->granularity == INF_FLUID)
    rc = tel_put_summary_str(w->sink, &granularity_metric, "fluid");
  return rc;
}

int work_finish(work *w, double duration_s, double it_energy_j, work_summary *s,
                sim_error *err) {
  *s = (work_summary){0};
  int rc = close_services(w, s, err);
  if (rc == SIM_OK)
    rc = close_jobs(w, duration_s, s, err);
  if (rc == SIM_OK)
    rc = close_energy(w, it_energy_j, s, err);
  if (rc != SIM_OK || w->sink == NULL)
    return rc;
  rc = put_service_attrs(w);
  if (rc == SIM_OK)
    rc = put_jobs(w, duration_s);
  return rc != SIM_OK
             ? sim_error_set(err, rc, "telemetry: %s", tel_errmsg(w->sink))
             : SIM_OK;
}
