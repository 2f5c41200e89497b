/* serve_run.h - one service run to its steady state, as the factory runs
 * it, for the validation harnesses: replicas of a replica prototype, a
 * Poisson arrival process at twice what they can serve, so the batch
 * forms from the arrivals, max_batch and the KV cache (inference.h) and
 * is never given; every 100 ms the replicas' mean load sets their GPUs'
 * clock under the power limit (the GPU's own TDP, or an operator's) and
 * their power (gpu.h), with the factory's one period of lag. Figures are
 * read over a window after the batch has filled.
 *
 * It calls the library's public functions only (inference, roofline,
 * gpu), so it measures the simulator, not a copy of it. */
#ifndef SERVE_RUN_H
#define SERVE_RUN_H

#include <stdint.h>

#include "roofline.h"

typedef struct serve_spec {
  const rl_replica *replica;   /* the prototype (borrowed) */
  int replicas;                /* copies, >= 1 */
  int max_batch;               /* requests per batch, vLLM max_num_seqs */
  double prompt;               /* tokens, fixed */
  double output, output_sigma; /* lognormal mean (tokens) and shape */
  double limit_w;              /* per-GPU power limit; <= 0: the TDP */
  int prompt_pool;             /* unique prompts, sent in order and
                                  repeated (inference.h); 0: all unique */
  uint64_t seed;
} serve_spec;

typedef struct serve_result {
  double tokens_per_s; /* generated, all replicas, over the window */
  double batch;        /* mean per replica */
  double power_w;      /* mean per GPU */
  double tokens_per_j; /* tokens / GPU energy */
  double phi;          /* mean SM clock share */
  double window_s;
} serve_result;

/* Runs s; SIM_OK or an error (the service refused, the engine failed)
 * with a message in err. */
int serve_run(const serve_spec *s, serve_result *out, sim_error *err);

#endif
