/* factory_capacity.c - what a service can serve flat out (factory.h), for
 * the command's estimate of a run's memory: a service whose requests wait
 * without a timeout holds every request its replicas cannot keep up with,
 * and a day of that at 1e4 requests per second is tens of GB.
 *
 * Throughput of one replica in steady state, every GPU at full clock:
 * its batch is max_batch requests, or as many as its KV cache holds at
 * prompt + output tokens each (as inference.h admits them); a request
 * costs one prefill (rl_prefill_s, which stops decoding, as vLLM's
 * scheduler does) and output - 1 decode steps shared with the batch
 * (rl_decode_step_s at the batch's mean context, prompt + output / 2).
 * So a replica completes 1 / (prefill + (output - 1) x step / batch)
 * requests per second. A first-order figure, as an estimate needs: it
 * leaves out power caps (which only slow the replicas, so the backlog is
 * if anything larger) and the arrivals' burstiness. */
#include "factory.h"

#include <math.h>

#include "factory_internal.h"
#include "roofline.h"

/* The service's replica as the run builds it (workloads_build.c): its GPU,
 * or the racks' only type when it names none. */
static int replica_of(const factory_scenario *sc, const inf_config *c,
                      rl_replica *r, sim_error *err) {
  const char *gpu = c->gpu != NULL ? c->gpu : sc->cfg.racks[0].gpu;
  int rc = rl_replica_init(r, gpu_catalog_find(&sc->catalog, gpu),
                           llm_catalog_find(&sc->llms, c->model),
                           llm_catalog_precision(&sc->llms, c->precision),
                           llm_catalog_engine(&sc->llms, LLM_ENGINE_DEFAULT),
                           (int)c->tp, err);
  r->ep = (int)c->ep;
  return rc;
}

int factory_service_capacity_of(const factory_scenario *sc, size_t k,
                                double prompt_mean, double output_mean,
                                factory_service_capacity *out, sim_error *err) {
  const inf_config *c = &sc->cfg.services[k];
  rl_replica r;
  double kv_tokens = 0;
  *out = (factory_service_capacity){0, 0};
  int rc = replica_of(sc, c, &r, err);
  if (rc == SIM_OK)
    rc = rl_max_batch_tokens(&r, &kv_tokens, err);
  if (rc != SIM_OK)
    return rc;
  double prompt = fmax(1, prompt_mean), output = fmax(1, output_mean);
  double batch =
      fmin((double)c->max_batch, floor(kv_tokens / (prompt + output)));
  batch = fmax(1, batch);
  double step = rl_decode_step_s(&r, batch, prompt + output / 2, 1);
  double per_request =
      rl_prefill_s(&r, prompt, 1) + (output - 1) * step / batch;
  out->rps = (double)c->replicas / per_request;
  out->in_flight = (double)c->replicas * batch;
  return SIM_OK;
}
