/* rows_run.c - the grid connection, power control and the workloads as
 * the factory's descriptors (factory_model.h): power quality's window,
 * the grid's books and bill, the control of the cap, the services and
 * training jobs, and the grid code's verdict. The workloads keep
 * theirs in their slot (self); the others' state is still in the
 * factory's struct (factory_internal.h), and they take self as NULL. */
#include "factory_model.h"

#include <math.h>

#include "factory_internal.h"

/* ------------------------------------------------------------------ */
/* Power quality: the high-rate window                                 */
/* ------------------------------------------------------------------ */

static int pq_create(factory *f, void **self, sim_error *err) {
  (void)self;
  return pq_init(&f->pq, &f->cfg->power_quality, f->cfg->duration_s, f->alloc,
                 err);
}

/* The period's power is set: the window steps through it, as the grid
 * sees it (the share a disturbance's trip left on the grid). */
static void pq_after(factory *f, void *self, double t) {
  (void)self;
  pq_step(&f->pq, t, f->p_facility * f->coming.grid_share);
}

static int pq_close(factory *f, void *self, factory_summary *s,
                    sim_error *err) {
  (void)self;
  pq_result pq;
  int rc = pq_finish(&f->pq, s->duration_s, &pq, err);
  if (rc == SIM_OK)
    factory__close_grid(s, &pq);
  return rc;
}

static int pq_write_window(factory *f, void *self, factory_summary *s,
                           sim_error *err) {
  (void)self, (void)s;
  return f->sink != NULL ? pq_write(&f->pq, f->sink, err) : SIM_OK;
}

static void pq_destroy(factory *f, void *self) {
  (void)self;
  pq_fini(&f->pq);
}

const factory_model factory_model_power_quality = {
    .name = "power_quality",
    .schema = &pq_schema,
    .create = pq_create,
    .after = pq_after,
    .close = pq_close,
    .write = pq_write_window,
    .destroy = pq_destroy,
};

/* ------------------------------------------------------------------ */
/* The grid: energy, cost and CO2 booked as drawn, the bill at the end */
/* ------------------------------------------------------------------ */

static void grid_advance(factory *f, void *self, sim_time now, double dt) {
  (void)self, (void)dt;
  grid_account(&f->sc->feed, f->p_facility, sim_time_to_s(f->last),
               sim_time_to_s(now), &f->books);
}

/* The bill: with neither a price nor a tariff there is no cost. */
static int grid_bill_close(factory *f, void *self, factory_summary *s,
                           sim_error *err) {
  (void)self, (void)err;
  const grid *g = &f->sc->feed;
  grid_bill bill;
  grid_close(g, s->duration_s, &f->books, &bill);
  bool priced = g->price.kind != SIG_NONE || grid_has_tariff(g);
  s->cost = priced ? bill.total : NAN;
  s->cost_energy = priced ? bill.energy : NAN;
  s->cost_demand = priced ? bill.demand : NAN;
  s->cost_fees = priced ? bill.fees : NAN;
  s->peak_demand_kw = bill.peak_w / 1e3;
  s->carbon_basis = grid_carbon_basis(g);
  s->co2_kg = g->carbon.kind == SIG_NONE ? NAN : f->books.co2_kg;
  return SIM_OK;
}

/* The end of the demand-response event under way at t; NaN: none. */
static double dr_end(const grid *g, double t) {
  for (size_t k = 0; k < g->ndr; k++)
    if (t >= g->dr[k].start_s && t < g->dr[k].start_s + g->dr[k].duration_s)
      return g->dr[k].start_s + g->dr[k].duration_s;
  return NAN;
}

/* Demand response lowers the cap for the period (never above the
 * contracted cap, grid_cap_at's start). */
static void grid_period(factory *f, void *self, double t, factory_period *p) {
  (void)self;
  const grid *g = &f->sc->feed;
  double cap = grid_cap_at(g, t);
  p->dr = cap < f->cfg->power.cap_w;
  p->dr_end_s = dr_end(g, t);
  p->cap_w = fmin(p->cap_w, cap);
}

/* Its /summary metrics: the bill (absent with neither a price nor a
 * tariff) and the CO2 (absent without a carbon signal).
 * Key, units, long name, group and value of each. */
#define GRID_METRICS(X)                                                        \
  X("cost", "$", "Electricity cost", "Grid", s->cost)                          \
  X("cost_energy", "$", "Energy charges", "Grid", s->cost_energy)              \
  X("cost_demand", "$", "Demand charges", "Grid", s->cost_demand)              \
  X("cost_fees", "$", "Fees", "Grid", s->cost_fees)                            \
  X("peak_demand_kw", "kW", "Billed peak demand", "Grid", s->peak_demand_kw)   \
  X("co2_t", "t", "CO\u2082 emitted", "Grid", s->co2_kg / 1000)                \
  X("carbon_g_per_kwh", "gCO2/kWh", "Carbon intensity (mean)", "Grid",         \
    s->energy_j > 0 ? s->co2_kg / s->energy_j * 3.6e9 : NAN)

static const tel_metric grid_rows[] = {GRID_METRICS(TEL_METRIC_ROW)};

/* Why one can be undefined (the summary's "absent"). */
static const factory_reason grid_reasons[] = {
    {"cost", "no price signal or tariff"},
    {"co2_t", "no carbon signal"},
    {"carbon_g_per_kwh", "no carbon signal"},
    {NULL, NULL},
};

static int grid_metrics(const factory *f, const void *self, tel_sink *sink,
                        char *absent, size_t size) {
  (void)self;
  const factory_summary *s = &f->sum;
  const double v[] = {GRID_METRICS(TEL_METRIC_VALUE)};
  return factory__put_metrics(sink, grid_rows, v, sizeof v / sizeof v[0],
                              grid_reasons, absent, size);
}

const factory_model factory_model_grid = {
    .name = "grid",
    .schema = &grid_schema,
    .advance = grid_advance,
    .period = grid_period,
    .close = grid_bill_close,
    .metrics = grid_metrics,
    .metric_rows = grid_rows,
    .nmetric_rows = sizeof grid_rows / sizeof grid_rows[0],
};

/* ------------------------------------------------------------------ */
/* Power control: the cap's split, demand response                     */
/* ------------------------------------------------------------------ */

/* Control on the factory's hooks, and the first split, at t = 0: a cap
 * the factory cannot be held under even at its minimum caps, cooling
 * included, is refused before the run. */
static int control_make(factory *f, void **self, sim_error *err) {
  (void)self;
  control_hooks h = factory__control_hooks(f);
  f->control = control_create(&f->cfg->power, f->fleet, f->engine, &h, err);
  if (f->control == NULL)
    return err->code;
  f->reserve_outdoor_c = factory__warmest(f, 0);
  int rc = control_split(f->control, err);
  if (rc == SIM_OK || rc == SIM_ENOMEM)
    return rc;
  return sim_error_set(err, SIM_EINPUT,
                       "%s: power.cap %.6g kW is below what the factory "
                       "draws with every GPU at its minimum cap, with its "
                       "conversion losses and cooling at the start",
                       f->cfg->name, f->cfg->power.cap_w / 1e3);
}

static void control_advance(factory *f, void *self, sim_time now, double dt) {
  (void)self, (void)now;
  control_account(f->control, f->p_facility - f->cap, dt);
}

/* Demand response: power control's books. */
static int control_close(factory *f, void *self, factory_summary *s,
                         sim_error *err) {
  (void)self, (void)err;
  control_books dr;
  control_finish(f->control, factory_duration(f->cfg), &dr);
  s->dr_events = dr.dr_events;
  s->dr_s = dr.dr_s;
  s->dr_time_to_cut_s = dr.dr_time_to_cut_s;
  s->dr_over_j = dr.dr_over_j;
  s->dr_slo_attainment = dr.dr_slo_attainment;
  s->dr_alignment = dr.dr_judged_s > 0 ? dr.dr_aligned_s / dr.dr_judged_s
                                         : NAN;
  return SIM_OK;
}

/* Its /summary metrics (0, or absent, without an event).
 * Key, units, long name, group and value of each. */
#define CONTROL_METRICS(X)                                                     \
  X("dr_events", "1", "Demand-response events", "Grid", (double)s->dr_events)  \
  X("dr_s", "s", "Demand response", "Grid", s->dr_s)                           \
  X("dr_time_to_cut_s", "s", "DR: time to cut", "Grid", s->dr_time_to_cut_s)   \
  X("dr_energy_above_j", "J", "DR: energy above the cut", "Grid",              \
    s->dr_over_j)                                                              \
  X("dr_slo_attainment", "1", "DR: SLO attainment", "Grid",                    \
    s->dr_slo_attainment)

/* The last row, alignment, is put only with a response window
 * (control_metrics). */
static const tel_metric control_rows[] = {
    CONTROL_METRICS(TEL_METRIC_ROW){"dr_alignment", "1",
                                    "DR: alignment with the targets", "Grid"}};

static const factory_reason control_reasons[] = {
    {"dr_slo_attainment", "no demand-response event with requests"},
    {NULL, NULL},
};

/* With a response window (grid.dr_window, or an operator's targets):
 * alignment, the share of event periods a window or more after a cut at
 * or under the target. Only then, so runs without one write as before. */
static const factory_reason alignment_reasons[] = {
    {"dr_alignment", "no event period after the response window"},
    {NULL, NULL},
};

static int control_metrics(const factory *f, const void *self, tel_sink *sink,
                           char *absent, size_t size) {
  (void)self;
  const factory_summary *s = &f->sum;
  const double v[] = {CONTROL_METRICS(TEL_METRIC_VALUE)};
  int rc = factory__put_metrics(sink, control_rows, v, sizeof v / sizeof v[0],
                                control_reasons, absent, size);
  if (rc == SIM_OK && !isnan(f->cfg->grid.dr_window_s))
    rc = factory__put_metric(sink, &control_rows[sizeof v / sizeof v[0]],
                             s->dr_alignment,
                             alignment_reasons, absent, size);
  return rc;
}

static void control_drop(factory *f, void *self) {
  (void)self;
  control_destroy(f->control);
}

const factory_model factory_model_control = {
    .name = "power",
    .schema = &control_power_schema,
    .create = control_make,
    .advance = control_advance,
    .close = control_close,
    .metrics = control_metrics,
    .metric_rows = control_rows,
    .nmetric_rows = sizeof control_rows / sizeof control_rows[0],
    .destroy = control_drop,
};

/* ------------------------------------------------------------------ */
/* The workloads: services, training jobs, the scheduler               */
/* ------------------------------------------------------------------ */

/* The workloads on the fleet, configured from the scenario, in their
 * slot; they open their own groups and register their events as they are
 * made, so they start after the telemetry is declared. */
static int work_start(factory *f, void **self, sim_error *err) {
  const factory_config *c = f->cfg;
  uint32_t *nvlink = sim_calloc(f->alloc, c->nracks + 1, sizeof *nvlink);
  if (nvlink == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  for (size_t g = 0; g < c->nracks; g++)
    nvlink[g] = (uint32_t)c->racks[g].nvlink_domain;
  work_config wc = {.services = c->services,
                    .nservices = c->nservices,
                    .training = c->training,
                    .ntraining = c->ntraining,
                    .gjobs = c->gjobs,
                    .ngjobs = c->ngjobs,
                    .scheduler = c->scheduler,
                    .llms = &f->sc->llms,
                    .price = &f->sc->feed.price,
                    .carbon = &f->sc->feed.carbon,
                    .scenario_path = f->sc->path,
                    .nvlink_domain = nvlink,
                    .seed = c->seed,
                    .duration_s = c->duration_s,
                    .cap_w = c->power.cap_w,
                    .granularity = c->inference.granularity,
                    .threads = f->sc->threads};
  work *w =
      work_create(&wc, f->engine, f->fleet, f->sink, factory__settle, f, err);
  sim_free(f->alloc, nvlink);
  if (w == NULL)
    return err->code;
  *self = w;
  if (!isnan(c->grid.dr_window_s) && work_dr_enable(w, err) != SIM_OK)
    return err->code;
  /* The rack groups' splits beside each other on the services' threads,
   * between their events (control_set_each): the same caps on any. */
  if (work_on_threads(w) && f->control != NULL)
    control_set_each(f->control, work_for_each, w);
  /* The jobs' phases inside each period (power quality, smoothing). */
  pq_set_wave(&f->pq, work_wave_w, w, f->control_dt_s,
              f->cfg->smoothing.enabled);
  return SIM_OK;
}

/* The period ending now: the workloads learn the power, the cap and when
 * a demand-response event ends (grid-aware jobs), then take its clocks. */
static void work_take_clocks(factory *f, void *self) {
  work_set_power(self, f->p_facility, f->cap, f->coming.dr_end_s);
  work_clocks(self);
}

static void work_sample_ahead(factory *f, void *self) {
  (void)f;
  work_sample_clocks(self);
}

static void work_give_load(factory *f, void *self, double dt) {
  (void)f;
  work_drive(self, dt);
}

/* A fault's step: the workloads let go of the racks that went dark. */
static void work_fault(factory *f, void *self) {
  (void)f;
  work_faults(self);
}

static const uint32_t *work_slots(const void *self) {
  return work_gpu_slots(self);
}

static uint64_t work_slots_changed(const void *self) {
  return work_gpu_slot_changes(self);
}

static void work_units(const void *self, const uint32_t *key, size_t n,
                       power_unit *u) {
  work_slot_units(self, key, n, u);
}

static void work_requests(const void *self, uint64_t *done, uint64_t *met) {
  work_request_counts(self, done, met);
}

/* The GPUs' energy split among the jobs that held them. */
static void work_advance(factory *f, void *self, sim_time now, double dt) {
  work_attribute(self, dt,
                 factory__mean_next(&f->sc->feed.carbon, &f->carbon_run,
                                    sim_time_to_s(f->last),
                                    sim_time_to_s(now)));
  work_dr_step(self, f->coming.dr, dt);
}

/* What demand response cost each service and job, with alignment on. */
static int work_write(factory *f, void *self, factory_summary *s,
                      sim_error *err) {
  (void)s;
  return work_dr_write(self, f->sink, err);
}

/* The workloads' /facility columns (and their /services rows). */
static int work_columns(factory *f, void *self, double t, double dt,
                        double *row) {
  (void)f;
  work_row w;
  int rc = work_sample(self, t, dt, &w);
  if (rc != SIM_OK)
    return rc;
  row[F_TOKENS] = w.tokens_per_s;
  row[F_BUSY] = w.gpus_busy;
  row[F_RUNNING] = w.jobs_running;
  row[F_QUEUED] = w.jobs_queued;
  row[F_INFERENCE] = w.inference_w;
  row[F_TRAINING] = w.training_w;
  return SIM_OK;
}

/* The workloads' figures in the factory's summary; they are held to the
 * IT energy the racks drew (the models outside the racks, such as the
 * fabric, book theirs apart). */
static int work_close(factory *f, void *self, factory_summary *s,
                      sim_error *err) {
  (void)f;
  work_summary w;
  int rc = work_finish(self, s->duration_s,
                       s->it_energy_j - s->it_outside_racks_j, &w, err);
  if (rc != SIM_OK)
    return rc;
  s->inference_energy_j = w.inference_energy_j;
  s->training_energy_j = w.training_energy_j;
  s->idle_energy_j = w.idle_energy_j;
  s->overhead_energy_j = w.overhead_energy_j;
  s->tokens = w.tokens;
  s->tokens_per_joule = w.tokens_per_joule;
  s->slo_attainment = w.slo_attainment;
  s->ttft_mean_s = w.ttft_mean_s;
  s->tpot_mean_s = w.tpot_mean_s;
  s->requests_arrived = w.requests_arrived;
  s->requests_completed = w.requests_completed;
  s->requests_rejected = w.requests_rejected;
  s->requests_dropped = w.requests_dropped;
  s->requests_timed_out = w.requests_timed_out;
  s->jobs_arrived = w.jobs_arrived;
  s->jobs_done = w.jobs_done;
  s->jobs_running = w.jobs_running;
  s->jobs_queued = w.jobs_queued;
  s->jobs_rejected = w.jobs_rejected;
  s->job_failures = w.job_failures;
  s->training_tokens = w.training_tokens;
  s->training_co2_kg = w.training_co2_kg;
  s->jobs_late = w.jobs_late;
  s->job_pauses = w.job_pauses;
  s->jct_mean_s = w.jct_mean_s;
  s->lost_gpu_hours = w.lost_gpu_hours;
  s->fault_lost_gpu_hours = w.fault_lost_gpu_hours;
  return SIM_OK;
}

/* Its /summary metrics: the GPUs' energy by use, the services' tokens
 * and requests, the training jobs, and what faults cost them.
 * Key, units, long name, group and value of each. */
#define WORK_ENERGY_METRICS(X)                                                 \
  X("inference_energy_mwh", "MWh", "Inference (GPU)", "Energy",                \
    s->inference_energy_j / 3.6e9)                                             \
  X("training_energy_mwh", "MWh", "Training (GPU)", "Energy",                  \
    s->training_energy_j / 3.6e9)                                              \
  X("idle_energy_mwh", "MWh", "Idle and background (GPU)", "Energy",           \
    s->idle_energy_j / 3.6e9)                                                  \
  X("overhead_energy_mwh", "MWh", "Other IT (CPUs, network)", "Energy",        \
    s->overhead_energy_j / 3.6e9)                                              \
  X("tokens", "1", "Output tokens", "Work", s->tokens)                         \
  X("tokens_per_joule", "1/J", "Tokens per joule (GPU)", "Work",               \
    s->tokens_per_joule)                                                       \
  X("tokens_per_joule_facility", "1/J", "Tokens per joule (facility)", "Work", \
    s->energy_j > 0 && s->tokens > 0 ? s->tokens / s->energy_j : NAN)          \
  X("slo_attainment", "1", "SLO attainment", "Work", s->slo_attainment)        \
  X("requests_arrived", "1", "Requests arrived", "Work",                       \
    (double)s->requests_arrived)                                               \
  X("requests_completed", "1", "Requests completed", "Work",                   \
    (double)s->requests_completed)                                             \
  X("requests_rejected", "1", "Requests rejected", "Work",                     \
    (double)s->requests_rejected)                                              \
  X("requests_dropped", "1", "Requests dropped", "Work",                       \
    (double)s->requests_dropped)                                               \
  X("requests_timed_out", "1", "Requests timed out", "Work",                   \
    (double)s->requests_timed_out)

#define WORK_JOB_METRICS(X)                                                    \
  X("jobs_arrived", "1", "Training jobs arrived", "Work",                      \
    (double)s->jobs_arrived)                                                   \
  X("jobs_done", "1", "Training jobs done", "Work", (double)s->jobs_done)      \
  X("jobs_running", "1", "Jobs still running", "Work",                         \
    (double)s->jobs_running)                                                   \
  X("jobs_queued", "1", "Jobs still queued", "Work", (double)s->jobs_queued)   \
  X("jobs_rejected", "1", "Jobs rejected", "Work", (double)s->jobs_rejected)   \
  X("jct_mean_s", "s", "Mean job completion time", "Work", s->jct_mean_s)      \
  X("training_tokens", "1", "Training tokens", "Work", s->training_tokens)     \
  X("training_co2_kg", "kg", "Training CO\u2082", "Grid", s->training_co2_kg)  \
  X("jobs_late", "1", "Jobs past their deadline", "Work",                      \
    (double)s->jobs_late)                                                      \
  X("job_pauses", "1", "Job pauses (grid-aware)", "Work",                      \
    (double)s->job_pauses)                                                     \
  X("job_failures", "1", "Job failures", "Reliability",                        \
    (double)s->job_failures)                                                   \
  X("lost_gpu_hours", "h", "GPU-hours lost", "Reliability", s->lost_gpu_hours) \
  X("fault_lost_gpu_hours", "h", "GPU-hours lost to faults", "Reliability",    \
    s->fault_lost_gpu_hours)

static const tel_metric work_rows[] = {
    WORK_ENERGY_METRICS(TEL_METRIC_ROW) WORK_JOB_METRICS(TEL_METRIC_ROW)};

static const factory_reason work_reasons[] = {
    {"training_co2_kg", "no carbon signal"},
    {"jct_mean_s", "no job finished"},
    {"slo_attainment", "no requests"},
    {"tokens_per_joule", "no tokens served"},
    {NULL, NULL},
};

static int work_metrics(const factory *f, const void *self, tel_sink *sink,
                        char *absent, size_t size) {
  (void)self;
  const factory_summary *s = &f->sum;
  const double v[] = {WORK_ENERGY_METRICS(TEL_METRIC_VALUE)
                          WORK_JOB_METRICS(TEL_METRIC_VALUE)};
  return factory__put_metrics(sink, work_rows, v, sizeof v / sizeof v[0],
                              work_reasons, absent, size);
}

static void work_drop(factory *f, void *self) {
  (void)f;
  work_destroy(self);
}

const factory_model factory_model_work = {
    .name = "services",
    .schema = &inf_schema,
    .start = work_start,
    .advance = work_advance,
    .fault = work_fault,
    .clocks = work_take_clocks,
    .drive = work_give_load,
    .sample_clocks = work_sample_ahead,
    .slots = work_slots,
    .slots_changed = work_slots_changed,
    .units = work_units,
    .requests = work_requests,
    .metrics = work_metrics,
    .metric_rows = work_rows,
    .nmetric_rows = sizeof work_rows / sizeof work_rows[0],
    .text_rows = work_summary_metrics,
    .columns = work_columns,
    .close = work_close,
    .write = work_write,
    .destroy = work_drop,
};

/* ------------------------------------------------------------------ */
/* The grid code: its verdict on the run, at the end                   */
/* ------------------------------------------------------------------ */

/* The grid-connection figures and the verdict, from the summary's
 * figures once every model has closed them; its texts (gridcode.h) are
 * the registry's last, after the workloads'. */
static int code_write(factory *f, void *self, factory_summary *s,
                      sim_error *err) {
  (void)self;
  return factory__finish_grid(f, s, err);
}

const factory_model factory_model_grid_code = {
    .name = "grid_code",
    .write = code_write,
    .text_rows = gcode_summary_metrics,
};
