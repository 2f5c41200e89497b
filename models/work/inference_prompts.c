/* inference_prompts.c - prompts shared between requests (inf_config's
 * prompt_pool; the model is in inference.h) and the KV cache a request
 * holds, at request level (inference_internal.h).
 *
 * Without a pool a request holds rl_kv_tokens(prompt, kv_reserve x
 * output), as ever, computed by the same expression so that a service
 * without the key is bit-identical. With one, the KV a replica holds is
 * the sum over its requests of their output shares plus, over the
 * prompts it holds at least once, each prompt's tokens: joining adds the
 * prompt only when its count was 0, leaving frees it only when its count
 * returns to 0. rl_kv_tokens is linear (prompt + beams x output), so the
 * two parts add up to a lone request's figure, and the sum does not
 * depend on the order in which copies leave. */
#include "inference_internal.h"

#include <math.h>

/* prompt_refs holds replicas x pool counts: 2^28 of them is 1 GiB. */
#define MAX_REFS (1u << 28)

int inf__prompts_start(inf_service *s, sim_error *err) {
  int64_t n = s->c->prompt_pool;
  if (n <= 0)
    return SIM_OK;
  if (s->ops != &inf__request_ops) /* the fluid mode has no request ids */
    return sim_error_set(err, SIM_EINVAL,
                         "service %s: prompt_pool is modelled at request "
                         "granularity only",
                         s->c->name);
  if ((double)n * s->nrep > MAX_REFS)
    return sim_error_set(err, SIM_EINVAL,
                         "service %s: prompt_pool %lld x %u replicas is "
                         "over %u prompt counts",
                         s->c->name, (long long)n, s->nrep, MAX_REFS);
  s->prompt_n = (uint32_t)n;
  s->prompt_len = sim_calloc(s->alloc, s->prompt_n, sizeof *s->prompt_len);
  s->prompt_refs = sim_calloc(s->alloc, (size_t)s->prompt_n * s->nrep,
                              sizeof *s->prompt_refs);
  if (s->prompt_len == NULL || s->prompt_refs == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < s->prompt_n; i++)
    s->prompt_len[i] = NAN;
  return SIM_OK;
}

void inf__prompts_free(inf_service *s) {
  sim_free(s->alloc, s->prompt_len);
  sim_free(s->alloc, s->prompt_refs);
  s->prompt_len = NULL;
  s->prompt_refs = NULL;
}

void inf__prompt_assign(inf_service *s, request *q) {
  q->prompt_id = NONE;
  q->shared = false;
  if (s->prompt_n == 0)
    return;
  q->prompt_id = (uint32_t)((s->tot.arrived - 1) % s->prompt_n);
  double *len = &s->prompt_len[q->prompt_id];
  if (isnan(*len))
    *len = q->prompt; /* its first copy: the prompt is this draw */
  else
    q->prompt = *len;
}

/* The KV of q's output share, each beam's. */
static double output_kv(const inf_service *s, const request *q) {
  return rl_kv_tokens(&s->proto, 0, s->proto.cfg.kv_reserve * q->output);
}

static uint32_t *refs(const inf_service *s, uint32_t k, const request *q) {
  return &s->prompt_refs[(size_t)k * s->prompt_n + q->prompt_id];
}

double inf__kv_need(const inf_service *s, uint32_t k, const request *q) {
  if (q->prompt_id == NONE)
    return rl_kv_tokens(&s->proto, q->prompt,
                        s->proto.cfg.kv_reserve * q->output);
  return (*refs(s, k, q) > 0 ? 0 : q->prompt) + output_kv(s, q);
}

double inf__kv_join(inf_service *s, uint32_t k, request *q) {
  double need = inf__kv_need(s, k, q);
  if (q->prompt_id != NONE)
    q->shared = (*refs(s, k, q))++ > 0;
  return need;
}

double inf__kv_leave(inf_service *s, uint32_t k, const request *q) {
  if (q->prompt_id == NONE)
    return inf__kv_need(s, k, q);
  uint32_t *n = refs(s, k, q);
  return (--*n > 0 ? 0 : q->prompt) + output_kv(s, q);
}

void inf__kv_clear(inf_service *s, uint32_t k) {
  for (uint32_t i = 0; i < s->prompt_n; i++)
    s->prompt_refs[(size_t)k * s->prompt_n + i] = 0;
}
