/* aifsim_work.c - the library's reads of the workloads, the GPUs, the
 * plant and the battery, and its actions on them (include/aifsim.h):
 * each checks the handle and the arguments, then reads or calls the
 * factory (factory.h, factory_client.c). */
#include <aifsim.h>

#include <math.h>

#include "aifsim_internal.h"
#include "factory.h"

/* The factory of a handle a read may use, or NULL. */
static factory *readable(const aifsim *a, const void *out) {
  return out != NULL ? aifsim__factory((aifsim *)a) : NULL;
}

/* The factory of an open handle an action may use (a's message set when
 * not). */
static factory *actable(aifsim *a, const char *call) {
  return aifsim__check_open(a, call) == AIFSIM_OK ? aifsim__factory(a) : NULL;
}

size_t aifsim_nservices(const aifsim *a) {
  const factory *f = aifsim__factory((aifsim *)a);
  return f != NULL ? factory_nservices(f) : 0;
}

const char *aifsim_service_name(const aifsim *a, size_t k) {
  const factory *f = aifsim__factory((aifsim *)a);
  return f != NULL ? factory_service_name(f, k) : NULL;
}

size_t aifsim_njobs(const aifsim *a) {
  const factory *f = aifsim__factory((aifsim *)a);
  return f != NULL ? factory_njobs(f) : 0;
}

const char *aifsim_job_name(const aifsim *a, size_t j) {
  const factory *f = aifsim__factory((aifsim *)a);
  return f != NULL ? factory_job_name(f, j) : NULL;
}

int aifsim_service_now(const aifsim *a, size_t k, aifsim_service *s) {
  const factory *f = readable(a, s);
  if (f == NULL || k >= factory_nservices(f))
    return AIFSIM_EINVAL;
  factory_service_now n;
  factory_service_of(f, k, &n);
  *s = (aifsim_service){.power_w = n.power_w,
                        .gpus = n.gpus,
                        .budget_w = n.budget_w,
                        .queued = n.waiting,
                        .in_batch = n.in_batch,
                        .ended = n.ended,
                        .slo_attainment = n.ended > 0 ? n.met / n.ended : NAN};
  return AIFSIM_OK;
}

int aifsim_job_now(const aifsim *a, size_t j, aifsim_job *s) {
  const factory *f = readable(a, s);
  if (f == NULL || j >= factory_njobs(f))
    return AIFSIM_EINVAL;
  factory_job_now n;
  factory_job_of(f, j, &n);
  *s = (aifsim_job){.phase = n.phase,
                    .held = n.held,
                    .gpus = n.gpus,
                    .power_w = n.power_w,
                    .budget_w = n.budget_w};
  return AIFSIM_OK;
}

int aifsim_queue_now(const aifsim *a, aifsim_queue *q) {
  const factory *f = readable(a, q);
  if (f == NULL)
    return AIFSIM_EINVAL;
  factory_queue_now n;
  factory_queue_of(f, &n);
  *q = (aifsim_queue){.jobs_waiting = n.jobs_waiting,
                      .jobs_held = n.jobs_held,
                      .jobs_running = n.jobs_running,
                      .requests_queued = n.requests_waiting};
  return AIFSIM_OK;
}

int aifsim_group_gpus(const aifsim *a, size_t g, aifsim_gpus *s) {
  const factory *f = readable(a, s);
  if (f == NULL || g >= aifsim_ngroups(a))
    return AIFSIM_EINVAL;
  factory_gpus_now n;
  factory_gpus_of(f, g, &n);
  *s = (aifsim_gpus){.n = n.n,
                     .cap_mean_w = n.cap_mean_w,
                     .cap_min_w = n.cap_min_w,
                     .cap_max_w = n.cap_max_w,
                     .clock_mean = n.clock_mean,
                     .clock_min = n.clock_min,
                     .power_w = n.power_w};
  return AIFSIM_OK;
}

size_t aifsim_ngpus(const aifsim *a) {
  const factory *f = aifsim__factory((aifsim *)a);
  return f != NULL ? factory_ngpus(f) : 0;
}

int aifsim_gpu_caps(const aifsim *a, double *cap_w, double *clock, size_t n) {
  const factory *f = aifsim__factory((aifsim *)a);
  if (f == NULL || n != factory_ngpus(f))
    return AIFSIM_EINVAL;
  factory_gpus_each(f, cap_w, clock);
  return AIFSIM_OK;
}

size_t aifsim_nloops(const aifsim *a) {
  const factory *f = aifsim__factory((aifsim *)a);
  return f != NULL ? factory_nloops(f) : 0;
}

const char *aifsim_loop_name(const aifsim *a, size_t l) {
  const factory *f = aifsim__factory((aifsim *)a);
  return f != NULL ? factory_loop_name(f, l) : NULL;
}

int aifsim_loop_now(const aifsim *a, size_t l, aifsim_loop *s) {
  const factory *f = readable(a, s);
  if (f == NULL || l >= factory_nloops(f))
    return AIFSIM_EINVAL;
  factory_loop_now n;
  factory_loop_of(f, l, &n);
  *s = (aifsim_loop){.temp_c = n.temp_c,
                     .supply_c = n.supply_c,
                     .supply_min_c = n.supply_min_c,
                     .supply_max_c = n.supply_max_c,
                     .heat_w = n.heat_w,
                     .power_w = n.power_w};
  return AIFSIM_OK;
}

int aifsim_it_parts_now(const aifsim *a, aifsim_it_parts *p) {
  const factory *f = readable(a, p);
  if (f == NULL)
    return AIFSIM_EINVAL;
  factory_it_parts_of(f, &p->psu_loss_w, &p->fan_w, &p->outside_racks_w);
  return AIFSIM_OK;
}

double aifsim_battery_soc(const aifsim *a) {
  const factory *f = aifsim__factory((aifsim *)a);
  return f != NULL ? factory_battery_soc(f) : NAN;
}

/* A budget on owner o (a service, or nservices + a job), checked against
 * the least its GPUs can be held to. */
static int set_budget(aifsim *a, factory *f, size_t o, double budget_w,
                      const char *call, const char *what) {
  double floor = factory_owner_floor_w(f, o);
  if (isnan(budget_w))
    budget_w = INFINITY;
  if (!(budget_w >= floor))
    return aifsim__fail(a, AIFSIM_ERANGE,
                        "%s: %g W is below %s's GPUs' minimum caps, %g W in "
                        "all",
                        call, budget_w, what, floor);
  if (factory_set_budget(f, o, budget_w) != AIFSIM_OK)
    return aifsim__fail(a, AIFSIM_ENOMEM, "%s: out of memory", call);
  return AIFSIM_OK;
}

int aifsim_set_service_budget(aifsim *a, size_t k, double budget_w) {
  const char *call = "aifsim_set_service_budget";
  factory *f = actable(a, call);
  if (f == NULL)
    return a != NULL ? aifsim_errcode(a) : AIFSIM_EINVAL;
  if (k >= factory_nservices(f))
    return aifsim__fail(a, AIFSIM_EINVAL,
                        "%s: no service %zu (the scenario has %zu)", call, k,
                        factory_nservices(f));
  return set_budget(a, f, k, budget_w, call, factory_service_name(f, k));
}

int aifsim_set_job_budget(aifsim *a, size_t j, double budget_w) {
  const char *call = "aifsim_set_job_budget";
  factory *f = actable(a, call);
  if (f == NULL)
    return a != NULL ? aifsim_errcode(a) : AIFSIM_EINVAL;
  if (j >= factory_njobs(f))
    return aifsim__fail(a, AIFSIM_EINVAL,
                        "%s: no job %zu (the scenario has %zu)", call, j,
                        factory_njobs(f));
  return set_budget(a, f, factory_nservices(f) + j, budget_w, call,
                    factory_job_name(f, j));
}

int aifsim_hold_job(aifsim *a, size_t j, int hold) {
  const char *call = "aifsim_hold_job";
  factory *f = actable(a, call);
  if (f == NULL)
    return a != NULL ? aifsim_errcode(a) : AIFSIM_EINVAL;
  if (j >= factory_njobs(f))
    return aifsim__fail(a, AIFSIM_EINVAL,
                        "%s: no job %zu (the scenario has %zu)", call, j,
                        factory_njobs(f));
  int rc = factory_hold_job(f, j, hold != 0);
  if (rc == AIFSIM_EINVAL)
    return aifsim__fail(a, rc,
                        "%s: job %s has started (running or done): only a "
                        "job not started can be held or released",
                        call, factory_job_name(f, j));
  if (rc != AIFSIM_OK)
    return aifsim__fail(a, rc, "%s: scheduling job %s failed", call,
                        factory_job_name(f, j));
  return AIFSIM_OK;
}

int aifsim_set_supply(aifsim *a, size_t l, double supply_c) {
  const char *call = "aifsim_set_supply";
  factory *f = actable(a, call);
  if (f == NULL)
    return a != NULL ? aifsim_errcode(a) : AIFSIM_EINVAL;
  if (l >= factory_nloops(f))
    return aifsim__fail(a, AIFSIM_EINVAL,
                        "%s: no cooling loop %zu (the scenario has %zu)", call,
                        l, factory_nloops(f));
  if (factory_set_supply(f, l, supply_c) == AIFSIM_OK)
    return AIFSIM_OK;
  factory_loop_now n;
  factory_loop_of(f, l, &n);
  return aifsim__fail(a, AIFSIM_ERANGE,
                      "%s: %g degC is outside loop %s's range [%g, %g] "
                      "degC (the scenario's bounds, and above its heat "
                      "exchanger's approach)",
                      call, supply_c, factory_loop_name(f, l), n.supply_min_c,
                      n.supply_max_c);
}
