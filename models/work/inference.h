/* inference.h - inference services simulated at request level (docs/MODELS.md).
 *
 * A service serves one model at one precision on replicas of tp GPUs each.
 * Requests come from an arrival process (arrivals.h); each goes to the
 * replica with the fewest requests (waiting plus in the batch; the lowest
 * index on ties). Per replica, continuous batching as vLLM does it:
 *
 * - A waiting request joins the batch when the batch has fewer than
 *   max_batch requests and the KV cache has room for its prompt plus its
 *   output, each beam's (`beams`, roofline.h: rl_kv_tokens; a request
 *   holds prompt + output tokens of KV from admission:
 *   what it will hold at its end, so it is never preempted). Requests join
 *   in arrival order (FCFS, no overtaking).
 * - Joining requests are prefilled together, before decoding resumes: the
 *   replica runs a prefill of sum of rl_prefill_s over the joiners, during
 *   which the batch's decoding waits (vLLM's default scheduler prefers
 *   prefills). At its end each joiner has its first token (TTFT).
 * - Decoding is processor sharing in virtual time: while the batch is
 *   unchanged every request in it gains one token per step, the step time
 *   t = rl_decode_step_s(B, mean context, phi). The replica keeps the
 *   virtual time V (tokens each request of the batch has gained) and each
 *   request's finish tag (V at joining + output - 1); the smallest tag
 *   finishes next, at an event scheduled for it, so a request costs a few
 *   events, never one per token. The step time is re-evaluated whenever
 *   the batch or the clock changes (the mean context at that moment).
 * - A request whose prompt plus output can never fit the replica's KV
 *   cache is rejected on arrival. Every request yields at least one token
 *   (its first, from the prefill): an output of 0 counts as 1.
 * - Requests arriving at the same instant are prefilled together (the
 *   replica's scheduling pass runs after that instant's arrivals).
 *
 * Overload, as clients and serving engines bound it:
 * - timeout: a client that has no first token timeout after sending its
 *   request gives up. A request still waiting then leaves the queue
 *   unserved (timed out); one whose prefill ends after it is timed out
 *   too, its prefill wasted, its KV freed (the engine aborts a request
 *   whose client has gone). One that is decoding has its first token and
 *   completes. No event per request: the queue is in arrival order, so
 *   the expired requests are its head, taken off when the replica next
 *   admits, when an arrival finds the queue full and at each sample. So
 *   a completed request's TTFT is at most timeout. 0: clients wait.
 * - max_queue: at most that many requests wait at a replica (the one the
 *   routing picks, the lightest); an arrival beyond is rejected at once
 *   (load shedding, as an HTTP 429). 0: no limit.
 * Rejected, timed-out and dropped requests all miss their SLOs.
 *
 * Load: a prefill at rl_prefill_load, a decode step at the roofline load
 * of its batch (roofline.h), none while idle. The factory reads each
 * replica's time-mean activity over the last period and sets its GPUs to
 * it: power follows the work with one period of lag, as telemetry does.
 *
 * Shared prompts (prompt_pool N > 0; request level only, a fluid service
 * refuses it): the n-th arrival (from 0, rejected ones included) sends
 * prompt n mod N, whose length is the one drawn for its first copy (later
 * draws are discarded, so the generator's stream is the same). A replica
 * counts the requests it holds (prefilling or decoding) per prompt; as
 * vLLM's prefix caching does, the prompt's KV is held once while any of
 * them is held: a request joining while its prompt is held needs KV for
 * its own output share only, and skips its prefill (no prefill time, its
 * prompt not counted in prompt_tokens); it still decodes at its whole
 * context, since attention reads every sequence's context. The prompt's
 * KV is freed when the last of its holders leaves, in whatever order they
 * leave. Not modelled: blocks vLLM keeps cached after the last holder
 * leaves (evictable, in LRU order), which spare a later copy's prefill
 * but not its KV until evicted, so a copy arriving after its prompt left
 * pays its prefill here (an upper bound on prefill work); prompts shared
 * across replicas (each replica has its own cache); block granularity
 * (vLLM shares whole 16-token blocks, the prompt's last partial block
 * is each sequence's own: at most 15 tokens a copy, left out); and a copy
 * admitted in the same pass as the first holder counts as a hit, though
 * vLLM may compute both when they are scheduled in one step. Waiting
 * requests hold nothing. N absent (0): every prompt is unique, as before.
 *
 * TTFT = first token - arrival; TPOT = (finish - first token) / (output -
 * 1), 0 for one-token outputs. A request meets its SLO when both are
 * within the service's targets. */
#ifndef MODELS_INFERENCE_H
#define MODELS_INFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arrivals.h"
#include "engine.h"
#include "err.h"
#include "roofline.h"
#include "scenario.h"
#include "tel.h"

/* One service as a scenario writes it. */
typedef struct inf_config {
  char *name;
  char *model;     /* LLM catalog name */
  char *precision; /* weights; default "fp16" */
  char *kv_precision; /* the KV cache; default "fp16" */
  char *gpu;       /* GPU type; NULL: any */
  char *engine;    /* serving engine of the LLM catalog; default "vllm" */
  int64_t tp;      /* GPUs per replica */
  int64_t ep;      /* expert parallelism: 1 none, or = tp (an MoE) */
  int64_t replicas;
  int64_t max_batch; /* requests per batch, vLLM max_num_seqs: 256 */
  int64_t beams;     /* sequences per request, beam search; 1 (roofline.h) */
  double ttft_slo_s, tpot_slo_s;
  double timeout_s;  /* a client gives up without a first token; 0: never */
  int64_t max_queue; /* waiting requests a replica holds; 0: no limit */
  int64_t prompt_pool; /* unique prompts, sent in order and repeated; 0:
                          every prompt unique (the shared prompts below) */
  int64_t priority;
  arr_config arrivals;
} inf_config;

extern const scn_schema inf_schema;

/* The columns a service samples into /services/NAME, in this order. */
enum {
  INF_REQUESTS_PER_S, /* completed per second over the interval */
  INF_ARRIVALS_PER_S,
  INF_TOKENS_PER_S, /* generated per second */
  INF_QUEUE,        /* waiting, at sample time */
  INF_BATCH,        /* mean batch size over the interval, per replica */
  INF_TTFT_P50,
  INF_TTFT_P99, /* over requests completed in the interval; NaN if none */
  INF_TPOT_P50,
  INF_TPOT_P99,
  INF_SLO,          /* share of the requests ended in the interval
                       (completed, rejected, timed out) meeting both
                       SLOs; NaN if none */
  INF_TOKENS_PER_J, /* tokens / energy given by inf_add_energy */
  INF_POWER_W,      /* that energy / the interval */
  INF_NCOLS
};
extern const tel_column inf_columns[INF_NCOLS];

/* A service's totals over the run. */
typedef struct inf_totals {
  uint64_t arrived, completed, waiting, in_batch;
  uint64_t rejected;       /* never fit the KV cache, or the queue was full */
  uint64_t timed_out;      /* their clients gave up before a first token */
  uint64_t dropped;        /* lost to replicas going down (inf_set_down) */
  double tokens_generated; /* includes first tokens */
  double prompt_tokens;    /* prefilled */
  uint64_t slo_met;        /* completed requests meeting both SLOs */
  double energy_j;
  double ttft_sum_s, tpot_sum_s; /* over the completed requests */
} inf_totals;

typedef struct inf_service inf_service;

/* How finely a service is simulated: request by request (the model
 * above), or as flows per control period (inference_fluid.c: the same
 * replicas, lengths and SLOs, the queueing in closed form; for wide
 * sweeps). A scenario's top-level `inference: {granularity: fluid}`. */
typedef enum inf_granularity { INF_REQUEST, INF_FLUID } inf_granularity;

typedef struct inf_settings {
  int granularity; /* inf_granularity */
} inf_settings;

extern const scn_schema inf_settings_schema;

/* A service of config c (borrowed) on replicas like proto (copied; its tp
 * must be c->tp), with requests from gen (owned by the service from now
 * on, also on failure). Registers its handlers on e and schedules the
 * first arrival; requests arriving at or after horizon_s are not
 * scheduled. NULL with err set (SIM_ENOMEM, SIM_EINVAL when c and proto
 * disagree, or SIM_EINPUT when proto cannot hold its weights). */
inf_service *inf_create(sim_engine *e, const inf_config *c,
                        const rl_replica *proto, arr_gen *gen, double horizon_s,
                        sim_error *err);

/* The same service at the fluid granularity: no events of its own; it
 * is brought up to date by the calls below, once per control period. */
inf_service *inf_create_fluid(sim_engine *e, const inf_config *c,
                              const rl_replica *proto, arr_gen *gen,
                              double horizon_s, sim_error *err);

/* Whether s was made by inf_create_fluid. */
bool inf_is_fluid(const inf_service *s);

/* Frees the service and its generator; NULL does nothing. Its events stay
 * in the engine (which may be gone already): do not run e afterwards. */
void inf_destroy(inf_service *s);

const inf_config *inf_config_of(const inf_service *s);
uint32_t inf_replicas(const inf_service *s);

/* The service's arrivals drawn ahead (arrivals.h, arr_draw_ahead): room
 * for span_s seconds of them (SIM_OK; SIM_EINVAL for a fluid service or
 * a trace's, which do not draw ahead; SIM_ENOMEM), and the drawing, up
 * to until_s, at most max_n: the count drawn. The service's requests are
 * the same bits whatever was drawn ahead. Never while the service's
 * events run on another thread (crew.h's sim_crew_post keeps them
 * apart). */
int inf_ahead_reserve(inf_service *s, double span_s);
size_t inf_draw_ahead(inf_service *s, double until_s, size_t max_n);

/* Sets replica r's clock share (phi in (0, 1]) from now on: its decode
 * and prefill times follow (the work already done stays done). SIM_OK;
 * SIM_EINVAL for a bad r or phi; SIM_ENOMEM if the model failed. */
int inf_set_clock(inf_service *s, uint32_t r, double phi);

/* inf_set_clock of replicas first .. first + n - 1 to phi[0 .. n), in
 * that order, the same bits as the calls one by one: the service is
 * brought up to now once. Returns the first failure of those calls, or
 * the last's SIM_OK. */
int inf_set_clocks(inf_service *s, uint32_t first, uint32_t n,
                   const double *phi);

/* A fault takes replica r's GPUs (down true) or gives them back
 * (false). Going down, the replica is brought up to now, then loses its
 * queue, its prefill and its batch (counted in dropped; tokens already
 * generated stay counted) and goes idle; while down the routing sends it
 * nothing, and an arrival when every replica is down is dropped. Back up,
 * it takes requests again, empty. SIM_OK; SIM_EINVAL for a bad r;
 * SIM_ENOMEM if the model failed. */
int inf_set_down(inf_service *s, uint32_t r, bool down);
bool inf_replica_down(const inf_service *s, uint32_t r);

/* Replica r's mean load per GPU since the last call (or since the
 * start), at full clock (gpu.h), which closes that window. */
gpu_load inf_take_load(inf_service *s, uint32_t r);

/* out[i] = inf_take_load(s, first + i) for i in [0, n), in that order,
 * the same bits; a fluid service reads a group's load once for a stretch
 * of its members. */
void inf_take_loads(inf_service *s, uint32_t first, uint32_t n,
                    gpu_load *out);

/* The share of replica r's work that a faster clock would speed up, as a
 * time mean over the window the last inf_take_load closed: 1 while
 * prefilling, the step's compute share while decoding compute-bound (0
 * when memory-bound: decode does not speed up with the clock), 0 when
 * idle. For the efficiency power policy. */
double inf_compute_share(const inf_service *s, uint32_t r);

/* out[i] = inf_compute_share(s, first + i) for i in [0, n). */
void inf_compute_shares(const inf_service *s, uint32_t first, uint32_t n,
                        double *out);

/* Energy the service's GPUs drew (the factory's attribution), for tokens
 * per joule. */
void inf_add_energy(inf_service *s, double joules);

/* Fills row[INF_NCOLS] for the interval of dt seconds that ends now and
 * starts the next one. */
void inf_sample(inf_service *s, double dt, double *row);

/* The totals, with waiting and in_batch counted now. Conservation:
 * arrived = completed + rejected + timed_out + dropped + waiting +
 * in_batch. */
inf_totals inf_totals_of(const inf_service *s);

/* The requests that have ended, served or not: the SLO attainment's
 * denominator (slo_met / this), since a request rejected, timed out or
 * dropped missed its SLOs. */
static inline uint64_t inf_totals_ended(const inf_totals *t) {
  return t->completed + t->rejected + t->timed_out + t->dropped;
}

/* TTFT and TPOT quantiles over every request completed so far (q in
 * [0, 1]); NaN when none. From log-spaced histograms (1 us to 1e4 s, 100
 * bins per decade: within 2.3% of the exact quantile), so memory does not
 * grow with the run. */
double inf_ttft_quantile(const inf_service *s, double q);
double inf_tpot_quantile(const inf_service *s, double q);

#endif
