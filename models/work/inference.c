/* inference.c - an inference service (inference.h): its telemetry
 * columns, its construction and the public operations, each handed to
 * the service's granularity through its ops table (inference_internal.h):
 * inference_request.c simulates every request, inference_fluid.c solves
 * flows per control period. The schema is in inference_scn.c. */
#include "inference.h"

#include "inference_internal.h"

/* ------------------------------------------------------------------ */
/* Telemetry columns                                                   */
/* ------------------------------------------------------------------ */

const tel_column inf_columns[INF_NCOLS] = {
    [INF_REQUESTS_PER_S] = {"requests_per_s", "1/s",
                            "requests completed per second over the interval"},
    [INF_ARRIVALS_PER_S] = {"arrivals_per_s", "1/s",
                            "requests arrived per second over the interval "
                            "(rejected ones included)"},
    [INF_TOKENS_PER_S] = {"tokens_per_s", "1/s",
                          "output tokens generated per second over the "
                          "interval"},
    [INF_QUEUE] = {"queue", "1", "requests waiting, at sample time"},
    [INF_BATCH] = {"batch", "1",
                   "mean requests in a replica's batch over the interval"},
    [INF_TTFT_P50] = {"ttft_p50", "s",
                      "median time to first token of the requests "
                      "completed in the interval (NaN if none)"},
    [INF_TTFT_P99] = {"ttft_p99", "s",
                      "99th percentile time to first token, same requests"},
    [INF_TPOT_P50] = {"tpot_p50", "s",
                      "median time per output token, same requests"},
    [INF_TPOT_P99] = {"tpot_p99", "s",
                      "99th percentile time per output token, same "
                      "requests"},
    [INF_SLO] = {"slo_attainment", "1",
                 "share of the requests completed, rejected or timed out "
                 "in the interval meeting both SLOs (NaN if none)"},
    [INF_TOKENS_PER_J] = {"tokens_per_joule", "1/J",
                          "output tokens per joule of the service's GPUs "
                          "over the interval (NaN without energy)"},
    [INF_POWER_W] = {"power_w", "W",
                     "the service's GPU power, mean over the interval"},
};
/* ------------------------------------------------------------------ */
/* Life cycle                                                          */
/* ------------------------------------------------------------------ */

static int check_shape(const inf_config *c, const rl_replica *proto,
                       sim_error *err) {
  if (c->replicas < 1 || c->replicas > UINT32_MAX || c->max_batch < 1)
    return sim_error_set(err, SIM_EINVAL,
                         "service %s: %lld replicas, max_batch %lld: each "
                         "must be at least 1",
                         c->name, (long long)c->replicas,
                         (long long)c->max_batch);
  if (c->tp != proto->tp)
    return sim_error_set(err, SIM_EINVAL,
                         "service %s: tp %lld, but its replica has tp %d",
                         c->name, (long long)c->tp, proto->tp);
  return SIM_OK;
}

/* A service at either granularity: the checks and the KV capacity are
 * common, the rest is the granularity's (ops->start). */
static inf_service *create(sim_engine *e, const inf_config *c,
                           const rl_replica *proto, arr_gen *gen,
                           double horizon_s, const inf_ops *ops,
                           sim_error *err) {
  const sim_allocator *a = sim_engine_allocator(e);
  inf_service *s = sim_calloc(a, 1, sizeof *s);
  if (s == NULL) {
    arr_destroy(gen);
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  *s = (inf_service){.e = e,
                     .alloc = a,
                     .ops = ops,
                     .c = c,
                     .proto = *proto,
                     .gen = gen,
                     .horizon_s = horizon_s,
                     .free_head = NONE,
                     .nrep = (uint32_t)c->replicas};
  s->proto.ep = (int)c->ep;
  s->proto.cfg.beams = (double)c->beams;
  s->ep_table = (rl_ep_table){.alloc = a};
  s->proto.ep_table = &s->ep_table;
  int rc = check_shape(c, proto, err);
  if (rc == SIM_OK)
    rc = rl_max_batch_tokens(&s->proto, &s->kv_cap, err);
  if (rc == SIM_OK)
    rc = inf__prompts_start(s, err);
  if (rc == SIM_OK)
    rc = ops->start(s, err);
  if (rc != SIM_OK) {
    inf_destroy(s);
    return NULL;
  }
  return s;
}

inf_service *inf_create(sim_engine *e, const inf_config *c,
                        const rl_replica *proto, arr_gen *gen, double horizon_s,
                        sim_error *err) {
  return create(e, c, proto, gen, horizon_s, &inf__request_ops, err);
}

inf_service *inf_create_fluid(sim_engine *e, const inf_config *c,
                              const rl_replica *proto, arr_gen *gen,
                              double horizon_s, sim_error *err) {
  return create(e, c, proto, gen, horizon_s, &inf__fluid_ops, err);
}

bool inf_is_fluid(const inf_service *s) { return s->ops == &inf__fluid_ops; }

void inf_destroy(inf_service *s) {
  if (s == NULL)
    return;
  s->ops->free(s);
  inf__prompts_free(s);
  rl_ep_table_free(&s->ep_table);
  arr_destroy(s->gen);
  sim_free(s->alloc, s);
}

const inf_config *inf_config_of(const inf_service *s) { return s->c; }

uint32_t inf_replicas(const inf_service *s) { return s->nrep; }

int inf_ahead_reserve(inf_service *s, double span_s) {
  if (inf_is_fluid(s)) /* its windows take the stream whole */
    return SIM_EINVAL;
  return arr_ahead_reserve(s->gen, span_s);
}

size_t inf_draw_ahead(inf_service *s, double until_s, size_t max_n) {
  return inf_is_fluid(s) ? 0 : arr_draw_ahead(s->gen, until_s, max_n);
}

/* ------------------------------------------------------------------ */
/* What the factory calls                                              */
/* ------------------------------------------------------------------ */

int inf_set_clock(inf_service *s, uint32_t k, double phi) {
  return s->ops->set_clock(s, k, phi);
}

int inf_set_clocks(inf_service *s, uint32_t first, uint32_t n,
                   const double *phi) {
  if (s->ops->set_clocks != NULL)
    return s->ops->set_clocks(s, first, n, phi);
  int rc = SIM_OK;
  for (uint32_t i = 0; i < n; i++) {
    int r = s->ops->set_clock(s, first + i, phi[i]);
    rc = rc != SIM_OK ? rc : r;
  }
  return rc;
}

int inf_set_down(inf_service *s, uint32_t k, bool down) {
  return s->ops->set_down(s, k, down);
}

bool inf_replica_down(const inf_service *s, uint32_t k) {
  return s->ops->down(s, k);
}

gpu_load inf_take_load(inf_service *s, uint32_t k) {
  return s->ops->take_load(s, k);
}

void inf_take_loads(inf_service *s, uint32_t first, uint32_t n, gpu_load *out) {
  if (s->ops->take_loads != NULL) {
    s->ops->take_loads(s, first, n, out);
    return;
  }
  for (uint32_t i = 0; i < n; i++)
    out[i] = s->ops->take_load(s, first + i);
}

/* Both granularities read the energy from here (s->iv, s->tot). */
void inf_add_energy(inf_service *s, double joules) {
  s->iv.energy_j += joules;
  s->tot.energy_j += joules;
}

void inf_sample(inf_service *s, double dt, double *row) {
  s->ops->sample(s, dt, row);
}

inf_totals inf_totals_of(const inf_service *s) { return s->ops->totals(s); }

double inf_ttft_quantile(const inf_service *s, double q) {
  return s->ops->quantile(s, true, q);
}

double inf_tpot_quantile(const inf_service *s, double q) {
  return s->ops->quantile(s, false, q);
}

double inf_compute_share(const inf_service *s, uint32_t r) {
  return s->ops->compute_share(s, r);
}

void inf_compute_shares(const inf_service *s, uint32_t first, uint32_t n,
                        double *out) {
  if (s->ops->compute_shares != NULL) {
    s->ops->compute_shares(s, first, n, out);
    return;
  }
  for (uint32_t i = 0; i < n; i++)
    out[i] = s->ops->compute_share(s, first + i);
}
