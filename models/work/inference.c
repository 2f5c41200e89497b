/* inference.c - inference services at request level (DESIGN 4.6): routing,
 * continuous batching with a prefill phase, processor-sharing decode in
 * virtual time, the KV-cache limit, activity, TTFT/TPOT statistics. The
 * model is specified in inference.h; the step times come from roofline.h.
 *
 * Data structures and their invariants:
 * - Requests live in one pool (an array grown by doubling, free slots
 *   chained through `next`); everything else names them by index, since
 *   growing the pool moves it. Nothing is allocated per request once the
 *   pool, the heaps and the sample buffers have grown to the load.
 * - A replica holds three sets: the FIFO of waiting requests, the joiners
 *   being prefilled (a list) and the decoding batch (a min-heap on finish
 *   tags). in_batch = joiners + decoding, and kv_used = the sum of their
 *   prompt + output tokens <= kv_cap.
 * - A replica's state is exact at clock_s, a double: between changes it
 *   evolves linearly (V grows at 1 / t_step while decoding, the prefill's
 *   share left shrinks at 1 / pre_s while prefilling), and next_s is the
 *   time of the next change (the smallest tag reached, or the prefill's
 *   end; +inf when idle). Changes are processed at their exact times,
 *   whatever event brings the replica up to date, so the rounding of event
 *   times to nanoseconds never reaches TTFT or TPOT.
 * - One engine event per replica is pending, at ceil(next_s). A replica
 *   that could take a new arrival at once gets a scheduling pass when the
 *   last arrival of that instant has been queued (pass_due, listed in
 *   due), so requests arriving together are prefilled together.
 * - The routing heap orders replicas by load (waiting + in_batch), then by
 *   index; it is fixed whenever a load changes.
 * - Conservation: arrived = completed + rejected + dropped + waiting +
 *   in_batch.
 * - A down replica (inf_set_down) holds nothing, is idle and sorts after
 *   every up replica in the routing heap, so an arrival goes to it only
 *   when all are down, and is then dropped. */
#include "inference.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#define NONE UINT32_MAX

/* Run-wide latency histograms: log-spaced from 1 us to 1e4 s, 100 bins a
 * decade (adjacent edges 2.3% apart), with an underflow bin below 1 us
 * (where one-token outputs' TPOT of 0 goes) and an overflow bin above. */
#define HIST_LO_S 1e-6
#define HIST_PER_DECADE 100
#define HIST_BINS (10 * HIST_PER_DECADE)

/* ------------------------------------------------------------------ */
/* Schema                                                              */
/* ------------------------------------------------------------------ */

static int check_service(void *obj, const scn_loc *loc, void *user,
                         sim_error *err);

#define INT_FIELD(k, field, lo, hi, def, h)                                    \
  {                                                                            \
    .key = k, .type = SCN_INT, .offset = offsetof(inf_config, field),          \
    .min = lo, .max = hi, .dflt = def, .help = h                               \
  }

#define STRING_FIELD(k, field, fl, def, h)                                     \
  {                                                                            \
    .key = k, .type = SCN_STRING, .offset = offsetof(inf_config, field),       \
    .flags = fl, .dflt = def, .help = h                                        \
  }

/* SLO defaults: the MLPerf Inference server scenario's p99 limits for
 * Llama-3.1-8B (v5.1: TTFT 2 s, TPOT 100 ms; Llama-2-70B has 2 s and
 * 200 ms), MLCommons inference_rules.adoc and loadgen/mlperf.conf. They
 * are anchored on reading speed: 100 ms a token is about 480 words a
 * minute. */
static const scn_field inf_fields[] = {
    STRING_FIELD("name", name, SCN_REQUIRED | SCN_NONEMPTY, NULL,
                 "the service's name; its telemetry is services/NAME"),
    STRING_FIELD("model", model, SCN_REQUIRED | SCN_NONEMPTY, NULL,
                 "an LLM of the catalog, e.g. Llama-3.1-8B"),
    STRING_FIELD("precision", precision, SCN_NONEMPTY, "fp16",
                 "weight precision: fp16, fp8, fp4, int8, int4"),
    STRING_FIELD("gpu", gpu, SCN_NONEMPTY, NULL,
                 "GPU type of its replicas, e.g. H100-SXM; absent: any"),
    INT_FIELD("tp", tp, 1, 1024, "1",
              "GPUs per replica (tensor parallelism), at least 1"),
    INT_FIELD("ep", ep, 1, 1024, "1",
              "expert parallelism of an MoE: 1 none, or tp (experts split "
              "whole over the replica's GPUs)"),
    INT_FIELD("replicas", replicas, 1, 1e6, "1",
              "copies of the model, at least 1"),
    INT_FIELD("max_batch", max_batch, 1, 1e6, "256",
              "requests per batch at most (vLLM max_num_seqs: 256)"),
    {.key = "ttft_slo",
     .type = SCN_QUANTITY,
     .offset = offsetof(inf_config, ttft_slo_s),
     .dim = UNITS_TIME,
     .flags = SCN_POSITIVE,
     .dflt = "2 s",
     .help = "time-to-first-token target (MLPerf server: 2 s)"},
    {.key = "tpot_slo",
     .type = SCN_QUANTITY,
     .offset = offsetof(inf_config, tpot_slo_s),
     .dim = UNITS_TIME,
     .flags = SCN_POSITIVE,
     .dflt = "100 ms",
     .help = "time-per-output-token target (MLPerf 8B server: 100 ms)"},
    INT_FIELD("priority", priority, -1e9, 1e9, "0",
              "higher is served first by the priority power policy"),
    {.key = "arrivals",
     .type = SCN_MAP,
     .offset = offsetof(inf_config, arrivals),
     .sub = &arr_schema,
     .flags = SCN_REQUIRED,
     .help = "the request process, e.g. {kind: poisson, rate: 5}"},
};

const scn_schema inf_schema = SCN_SCHEMA("inference service", inf_config,
                                         inf_fields, .check = check_service);

/* The name becomes one part of a telemetry path (services/NAME). */
static int check_service(void *obj, const scn_loc *loc, void *user,
                         sim_error *err) {
  (void)user;
  const inf_config *c = obj;
  if (c->name == NULL)
    return SIM_OK;
  if (strchr(c->name, '/') != NULL || strcmp(c->name, ".") == 0 ||
      strcmp(c->name, "..") == 0)
    return scn_fail(loc, "name", err, "e.g. name: chat",
                    "service name '%s' cannot be a telemetry group name (no "
                    "'/', not '.' or '..')",
                    c->name);
  return SIM_OK;
}

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
                 "share of those requests meeting both SLOs (NaN if none)"},
    [INF_TOKENS_PER_J] = {"tokens_per_joule", "1/J",
                          "output tokens per joule of the service's GPUs "
                          "over the interval (NaN without energy)"},
    [INF_POWER_W] = {"power_w", "W",
                     "the service's GPU power, mean over the interval"},
};

/* ------------------------------------------------------------------ */
/* State                                                               */
/* ------------------------------------------------------------------ */

typedef struct request {
  double arrival_s, first_s;
  double prompt, output; /* tokens; output >= 1 */
  double join_v;         /* V when it joined the decoding batch */
  double tag;            /* V at which it finishes: join_v + output - 1 */
  uint32_t next;         /* FIFO, prefill list or free list */
} request;

typedef struct req_list {
  uint32_t head, tail, n;
} req_list;

typedef enum phase { IDLE, PREFILL, DECODE } phase;

typedef struct replica {
  req_list waiting, prefill;
  uint32_t *heap; /* decoding requests, min-heap on tag */
  uint32_t nheap, heap_cap;
  double kv_used; /* tokens held by the batch */
  phase phase;
  double phi;
  double clock_s;   /* the state below is exact at this time */
  double v;         /* virtual time: tokens each decoding request gained */
  double ctx_base;  /* sum over the heap of prompt + 1 - join_v */
  double t_step;    /* s per decode step, while decoding */
  double pre_left;  /* share of the prefill still to run */
  double pre_s;     /* the whole prefill's duration at phi */
  double activity;  /* per GPU, now */
  double compute;   /* share of the work now that the clock speeds up */
  double next_s;    /* time of the next change; +inf when idle */
  bool pass_due;    /* an arrival waits for this instant's pass */
  sim_handle ev;    /* the pending event ... */
  double ev_s;      /* ... and the time it stands for */
  double act_int;   /* activity x seconds since act_since */
  double comp_int;  /* compute share x seconds since act_since */
  double comp_mean; /* the compute share's mean over the last window */
  double act_since;
  uint32_t load_pos; /* slot in the routing heap */
  bool down;         /* its GPUs are gone (a fault): routing skips it */
} replica;

/* What the current sampling interval has seen. */
typedef struct interval {
  uint64_t arrivals, completed, slo_met;
  double tokens, batch_s, energy_j;
  double *ttft, *tpot;
  size_t n, cap;
} interval;

typedef struct histogram {
  uint64_t bin[HIST_BINS];
  uint64_t n, under;
  double min, max;
} histogram;

struct inf_service {
  sim_engine *e;
  const inf_config *c;
  rl_replica proto;
  arr_gen *gen;
  double horizon_s, kv_cap;
  uint32_t arrival_kind, replica_kind;
  replica *rep;
  uint32_t nrep;
  uint32_t *load_heap; /* replica indices, lightest first */
  uint32_t *due;       /* replicas with pass_due, ndue of them */
  uint32_t ndue;
  request *pool;
  uint32_t pool_cap, free_head;
  int64_t next_prompt, next_output; /* the pending arrival's lengths */
  sim_time next_at;                 /* its time; SIM_TIME_MAX: none */
  inf_totals tot;                   /* waiting, in_batch: see totals_of */
  interval iv;
  histogram ttft_h, tpot_h;
  int rc; /* a failure inside the model, for the next handler to report */
};

static double now_s(const inf_service *s) {
  return sim_time_to_s(sim_engine_now(s->e));
}

static uint32_t in_batch(const replica *r) { return r->prefill.n + r->nheap; }

static uint32_t load(const inf_service *s, uint32_t k) {
  return s->rep[k].waiting.n + in_batch(&s->rep[k]);
}

static double need_tokens(const request *q) { return q->prompt + q->output; }

/* Records the first failure; the next handler stops the run with it. */
static void fail(inf_service *s, int rc) {
  if (s->rc == SIM_OK)
    s->rc = rc;
}

/* ------------------------------------------------------------------ */
/* Request pool and lists                                              */
/* ------------------------------------------------------------------ */

static int pool_grow(inf_service *s) {
  if (s->pool_cap >= UINT32_MAX / 2)
    return SIM_ENOMEM;
  uint32_t cap = s->pool_cap ? 2 * s->pool_cap : 1024;
  request *p = realloc(s->pool, cap * sizeof *p);
  if (p == NULL)
    return SIM_ENOMEM;
  for (uint32_t i = s->pool_cap; i < cap; i++)
    p[i].next = i + 1 < cap ? i + 1 : s->free_head;
  s->free_head = s->pool_cap;
  s->pool = p;
  s->pool_cap = cap;
  return SIM_OK;
}

/* A free slot, or NONE when out of memory. */
static uint32_t pool_take(inf_service *s) {
  if (s->free_head == NONE && pool_grow(s) != SIM_OK)
    return NONE;
  uint32_t i = s->free_head;
  s->free_head = s->pool[i].next;
  return i;
}

static void pool_give(inf_service *s, uint32_t i) {
  s->pool[i].next = s->free_head;
  s->free_head = i;
}

static void list_push(request *pool, req_list *l, uint32_t i) {
  pool[i].next = NONE;
  if (l->n++ == 0)
    l->head = i;
  else
    pool[l->tail].next = i;
  l->tail = i;
}

static uint32_t list_pop(request *pool, req_list *l) {
  if (l->n == 0)
    return NONE;
  uint32_t i = l->head;
  l->head = pool[i].next;
  l->n--;
  return i;
}

/* ------------------------------------------------------------------ */
/* The decoding heap: smallest finish tag first, lower index on ties    */
/* ------------------------------------------------------------------ */

static bool finishes_first(const request *pool, uint32_t a, uint32_t b) {
  return pool[a].tag < pool[b].tag || (pool[a].tag == pool[b].tag && a < b);
}

static void heap_swap(uint32_t *h, uint32_t i, uint32_t j) {
  uint32_t t = h[i];
  h[i] = h[j];
  h[j] = t;
}

static void heap_up(uint32_t *h, const request *pool, uint32_t i) {
  while (i > 0 && finishes_first(pool, h[i], h[(i - 1) / 2])) {
    heap_swap(h, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
}

static void heap_down(uint32_t *h, uint32_t n, const request *pool,
                      uint32_t i) {
  for (;;) {
    uint32_t l = 2 * i + 1, m = i;
    if (l < n && finishes_first(pool, h[l], h[m]))
      m = l;
    if (l + 1 < n && finishes_first(pool, h[l + 1], h[m]))
      m = l + 1;
    if (m == i)
      return;
    heap_swap(h, i, m);
    i = m;
  }
}

/* Room for want requests, so pushes after admission cannot fail. */
static int heap_reserve(replica *r, uint32_t want) {
  if (want <= r->heap_cap)
    return SIM_OK;
  uint32_t cap = r->heap_cap ? 2 * r->heap_cap : 16;
  while (cap < want)
    cap *= 2;
  uint32_t *h = realloc(r->heap, cap * sizeof *h);
  if (h == NULL)
    return SIM_ENOMEM;
  r->heap = h;
  r->heap_cap = cap;
  return SIM_OK;
}

static void heap_push(replica *r, const request *pool, uint32_t i) {
  assert(r->nheap < r->heap_cap);
  r->heap[r->nheap] = i;
  heap_up(r->heap, pool, r->nheap++);
}

static uint32_t heap_pop(replica *r, const request *pool) {
  uint32_t top = r->heap[0];
  r->heap[0] = r->heap[--r->nheap];
  heap_down(r->heap, r->nheap, pool, 0);
  return top;
}

/* ------------------------------------------------------------------ */
/* Routing: replicas by load, an indexed heap so an arrival is O(log R) */
/* ------------------------------------------------------------------ */

/* Up replicas before down ones, then by load, then by index. */
static bool lighter(const inf_service *s, uint32_t a, uint32_t b) {
  if (s->rep[a].down != s->rep[b].down)
    return !s->rep[a].down;
  uint32_t la = load(s, a), lb = load(s, b);
  return la < lb || (la == lb && a < b);
}

static void load_swap(inf_service *s, uint32_t i, uint32_t j) {
  heap_swap(s->load_heap, i, j);
  s->rep[s->load_heap[i]].load_pos = i;
  s->rep[s->load_heap[j]].load_pos = j;
}

/* Restores the routing heap after replica k's load changed. */
static void load_changed(inf_service *s, uint32_t k) {
  uint32_t *h = s->load_heap, i = s->rep[k].load_pos;
  while (i > 0 && lighter(s, h[i], h[(i - 1) / 2])) {
    load_swap(s, i, (i - 1) / 2);
    i = (i - 1) / 2;
  }
  for (;;) {
    uint32_t l = 2 * i + 1, m = i;
    if (l < s->nrep && lighter(s, h[l], h[m]))
      m = l;
    if (l + 1 < s->nrep && lighter(s, h[l + 1], h[m]))
      m = l + 1;
    if (m == i)
      return;
    load_swap(s, i, m);
    i = m;
  }
}

static uint32_t replica_index(const inf_service *s, const replica *r) {
  return (uint32_t)(r - s->rep);
}

/* ------------------------------------------------------------------ */
/* Statistics                                                          */
/* ------------------------------------------------------------------ */

static void hist_add(histogram *h, double x) {
  h->min = h->n == 0 || x < h->min ? x : h->min;
  h->max = h->n == 0 || x > h->max ? x : h->max;
  h->n++;
  if (!(x >= HIST_LO_S)) {
    h->under++;
    return;
  }
  /* Above the top bin a value counts only in n: its rank reads as max. */
  double pos = log10(x / HIST_LO_S) * HIST_PER_DECADE;
  if (pos < HIST_BINS)
    h->bin[(size_t)pos]++;
}

/* The k-th smallest value (0-based), as the geometric middle of its bin
 * (within 1.2% of it), kept within the extremes seen. */
static double hist_order_stat(const histogram *h, uint64_t k) {
  if (k < h->under)
    return h->min;
  uint64_t seen = h->under;
  for (size_t b = 0; b < HIST_BINS; b++) {
    seen += h->bin[b];
    if (k < seen) {
      double x = HIST_LO_S * pow(10, (b + 0.5) / HIST_PER_DECADE);
      return fmin(fmax(x, h->min), h->max);
    }
  }
  return h->max;
}

/* Interpolates between order statistics as GSL's quantile does, so the
 * run-wide figure matches an interval's on the same requests. */
static double hist_quantile(const histogram *h, double q) {
  if (h->n == 0 || !(q >= 0 && q <= 1))
    return NAN;
  double rank = q * (double)(h->n - 1);
  uint64_t k = (uint64_t)rank;
  double lo = hist_order_stat(h, k);
  if (k + 1 >= h->n)
    return lo;
  double d = rank - (double)k;
  return d > 0 ? (1 - d) * lo + d * hist_order_stat(h, k + 1) : lo;
}

static int interval_push(interval *iv, double ttft, double tpot) {
  if (iv->n == iv->cap) {
    size_t cap = iv->cap ? 2 * iv->cap : 256;
    double *a = realloc(iv->ttft, cap * sizeof *a);
    if (a != NULL)
      iv->ttft = a;
    double *b = a ? realloc(iv->tpot, cap * sizeof *b) : NULL;
    if (b == NULL)
      return SIM_ENOMEM;
    iv->tpot = b;
    iv->cap = cap;
  }
  iv->ttft[iv->n] = ttft;
  iv->tpot[iv->n++] = tpot;
  return SIM_OK;
}

static void record(inf_service *s, double ttft, double tpot) {
  bool met = ttft <= s->c->ttft_slo_s && tpot <= s->c->tpot_slo_s;
  s->tot.completed++;
  s->tot.slo_met += met;
  s->iv.completed++;
  s->iv.slo_met += met;
  hist_add(&s->ttft_h, ttft);
  hist_add(&s->tpot_h, tpot);
  if (interval_push(&s->iv, ttft, tpot) != SIM_OK)
    fail(s, SIM_ENOMEM);
}

static void add_tokens(inf_service *s, double n) {
  s->tot.tokens_generated += n;
  s->iv.tokens += n;
}

/* ------------------------------------------------------------------ */
/* A replica's work: pricing, the changes, catching up with time        */
/* ------------------------------------------------------------------ */

/* The activity of a prefill, from its roofline power: gpu_power is linear
 * in activity, so (P - P_idle) / ((P_tdp - P_idle) d(phi)) inverts it
 * (1 at tp = 1; lower with tensor parallelism, waiting on all-reduces). */
static double prefill_activity(const rl_replica *p, double prompt, double phi) {
  const gpu_spec *g = p->gpu;
  double dyn = (g->tdp_w - g->idle_w) * gpu_dynamic_fraction(g, phi);
  if (!(dyn > 0))
    return 1;
  return (rl_prefill_power_w(p, prompt, phi) - g->idle_w) / dyn;
}

/* The joiners' prefill at the replica's clock: its length and its
 * time-weighted activity. */
static void price_prefill(inf_service *s, replica *r) {
  double t = 0, busy = 0;
  for (uint32_t i = r->prefill.head, n = 0; n < r->prefill.n;
       i = s->pool[i].next, n++) {
    double prompt = s->pool[i].prompt;
    double ti = rl_prefill_s(&s->proto, prompt, r->phi);
    t += ti;
    busy += ti * prefill_activity(&s->proto, prompt, r->phi);
  }
  r->pre_s = t;
  r->activity = t > 0 ? busy / t : 0;
  r->compute = 1; /* prefill is compute-bound */
  r->next_s = r->clock_s + r->pre_left * t;
}

/* The decode step at the batch's mean context now. */
static void price_decode(inf_service *s, replica *r) {
  rl_step st;
  double b = r->nheap;
  rl_decode_step(&s->proto, b, r->ctx_base / b + r->v, r->phi, &st);
  r->t_step = st.t;
  r->activity = st.activity;
  r->compute = st.t_comp >= st.t_mem ? st.t_comp / st.t : 0;
  double tag = s->pool[r->heap[0]].tag;
  r->next_s = r->clock_s + (tag - r->v) * r->t_step;
}

static bool fits(const inf_service *s, const replica *r, const request *q) {
  return in_batch(r) < (uint64_t)s->c->max_batch &&
         r->kv_used + need_tokens(q) <= s->kv_cap;
}

/* Moves waiting requests into the prefill, in order, while they fit
 * (FCFS: the first that does not fit stops the others). */
static uint32_t admit(inf_service *s, replica *r) {
  uint32_t n = 0;
  while (r->waiting.n > 0 && fits(s, r, &s->pool[r->waiting.head])) {
    if (heap_reserve(r, in_batch(r) + 1) != SIM_OK) {
      fail(s, SIM_ENOMEM);
      break;
    }
    uint32_t i = list_pop(s->pool, &r->waiting);
    r->kv_used += need_tokens(&s->pool[i]);
    list_push(s->pool, &r->prefill, i);
    n++;
  }
  return n;
}

static void start_prefill(inf_service *s, replica *r) {
  r->phase = PREFILL;
  r->pre_left = 1;
  price_prefill(s, r);
}

/* After a change: prefill whoever can join, else decode, else rest. */
static void resume(inf_service *s, replica *r) {
  admit(s, r);
  if (r->prefill.n > 0) {
    start_prefill(s, r);
  } else if (r->nheap > 0) {
    r->phase = DECODE;
    price_decode(s, r);
  } else {
    r->phase = IDLE;
    r->compute = 0;
    r->activity = 0;
    r->next_s = INFINITY;
  }
}

static void complete(inf_service *s, replica *r, uint32_t i) {
  const request *q = &s->pool[i];
  double ttft = q->first_s - q->arrival_s;
  double tpot = q->output > 1 ? (r->clock_s - q->first_s) / (q->output - 1) : 0;
  r->kv_used -= need_tokens(q);
  pool_give(s, i);
  record(s, ttft, tpot);
  load_changed(s, replica_index(s, r));
}

/* The prefill is over: each joiner has its first token and decodes from
 * the current V (or is done, with a one-token output). */
static void end_prefill(inf_service *s, replica *r) {
  uint32_t i;
  while ((i = list_pop(s->pool, &r->prefill)) != NONE) {
    request *q = &s->pool[i];
    q->first_s = r->clock_s;
    s->tot.prompt_tokens += q->prompt;
    add_tokens(s, 1);
    if (q->output <= 1) {
      complete(s, r, i);
      continue;
    }
    q->join_v = r->v;
    q->tag = r->v + q->output - 1;
    r->ctx_base += q->prompt + 1 - r->v;
    heap_push(r, s->pool, i);
  }
}

/* The smallest tag is reached: that request (and any with the same tag)
 * is done. An empty batch restarts V at 0, so tags stay small numbers. */
static void finish_due(inf_service *s, replica *r) {
  r->v = s->pool[r->heap[0]].tag;
  while (r->nheap > 0 && s->pool[r->heap[0]].tag <= r->v) {
    uint32_t i = heap_pop(r, s->pool);
    const request *q = &s->pool[i];
    r->ctx_base -= q->prompt + 1 - q->join_v;
    complete(s, r, i);
  }
  if (r->nheap == 0)
    r->v = r->ctx_base = 0;
}

/* Integrates over [clock_s, t], within which nothing changes. */
static void drift(inf_service *s, replica *r, double t) {
  double dt = t - r->clock_s;
  if (!(dt > 0))
    return;
  r->act_int += r->activity * dt;
  r->comp_int += r->compute * dt;
  s->iv.batch_s += in_batch(r) * dt;
  if (r->phase == DECODE) {
    double steps = dt / r->t_step;
    r->v += steps;
    add_tokens(s, r->nheap * steps);
  } else if (r->phase == PREFILL) {
    r->pre_left -= dt / r->pre_s;
  }
  r->clock_s = t;
}

/* Brings the replica to time t, processing every change up to t at its
 * own time. */
static void advance(inf_service *s, replica *r, double t) {
  while (r->next_s <= t) {
    drift(s, r, r->next_s);
    if (r->phase == PREFILL) {
      r->pre_left = 0;
      end_prefill(s, r);
    } else {
      finish_due(s, r);
    }
    resume(s, r);
  }
  drift(s, r, t);
}

/* Keeps the replica's one pending event at its next change; does nothing
 * when that is already the pending one. */
static void reschedule(inf_service *s, replica *r) {
  sim_time now = sim_engine_now(s->e);
  double at_s = r->next_s;
  if (at_s == r->ev_s && sim_engine_pending(s->e, r->ev))
    return;
  sim_engine_cancel(s->e, &r->ev);
  r->ev_s = at_s;
  if (!(at_s * 1e9 < 9e18)) /* idle, or beyond any run */
    return;
  sim_time at = (sim_time)ceil(at_s * 1e9);
  int rc = sim_engine_schedule(s->e, at < now ? now : at, s->replica_kind,
                               replica_index(s, r), 0, &r->ev);
  if (rc != SIM_OK)
    fail(s, rc);
}

static void catch_up(inf_service *s, replica *r) {
  advance(s, r, now_s(s));
  reschedule(s, r);
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

static int status(inf_service *s) {
  if (s->rc == SIM_OK)
    return SIM_OK;
  return sim_engine_fail(s->e, s->rc, "service %s: %s", s->c->name,
                         sim_strerror(s->rc));
}

/* A replica's change is due. The event may run up to a nanosecond before
 * the change it stands for (rounding): that change is still processed, at
 * its exact time. */
static int on_replica(sim_engine *e, void *ctx, const sim_event *ev) {
  inf_service *s = ctx;
  replica *r = &s->rep[ev->a];
  advance(s, r, fmax(sim_time_to_s(sim_engine_now(e)), r->ev_s));
  reschedule(s, r);
  return status(s);
}

/* Pulls the next request from the generator and schedules its arrival,
 * unless the generator has ended or the request is past the horizon. */
static int schedule_arrival(inf_service *s) {
  double t;
  int64_t prompt, output;
  s->next_at = SIM_TIME_MAX;
  if (!arr_next(s->gen, &t, &prompt, &output) || !(t < s->horizon_s) ||
      !(t * 1e9 < 9e18))
    return SIM_OK;
  s->next_prompt = prompt;
  s->next_output = output;
  sim_time at = (sim_time)llround(t * 1e9), now = sim_engine_now(s->e);
  s->next_at = at < now ? now : at;
  return sim_engine_schedule(s->e, s->next_at, s->arrival_kind, 0, 0, NULL);
}

/* A request arrives: rejected if it can never fit, else queued at the
 * lightest replica. A replica that could take it now is listed for this
 * instant's scheduling pass. */
static void accept(inf_service *s, int64_t prompt, int64_t output) {
  s->tot.arrived++;
  s->iv.arrivals++;
  /* A request yields at least its first token, made by the prefill. */
  request q = {.arrival_s = now_s(s),
               .prompt = (double)(prompt < 0 ? 0 : prompt),
               .output = (double)(output < 1 ? 1 : output)};
  if (need_tokens(&q) > s->kv_cap) {
    s->tot.rejected++;
    return;
  }
  uint32_t k = s->load_heap[0];
  replica *r = &s->rep[k];
  if (r->down) { /* the lightest is down: all are */
    s->tot.dropped++;
    return;
  }
  uint32_t i = pool_take(s);
  if (i == NONE) {
    s->tot.rejected++;
    fail(s, SIM_ENOMEM);
    return;
  }
  s->pool[i] = q;
  bool was_empty = r->waiting.n == 0;
  list_push(s->pool, &r->waiting, i);
  load_changed(s, k);
  if (was_empty && r->phase != PREFILL && !r->pass_due && fits(s, r, &q)) {
    r->pass_due = true;
    s->due[s->ndue++] = k;
  }
}

/* The scheduling pass of the replicas that got arrivals they could take
 * at once: they start prefilling them, pausing any decode. */
static void run_passes(inf_service *s) {
  double now = now_s(s);
  for (uint32_t j = 0; j < s->ndue; j++) {
    replica *r = &s->rep[s->due[j]];
    r->pass_due = false;
    advance(s, r, now);
    if (r->phase != PREFILL && admit(s, r) > 0)
      start_prefill(s, r);
    reschedule(s, r);
  }
  s->ndue = 0;
}

static int on_arrival(sim_engine *e, void *ctx, const sim_event *ev) {
  (void)ev;
  inf_service *s = ctx;
  int64_t prompt = s->next_prompt, output = s->next_output;
  int rc = schedule_arrival(s);
  if (rc != SIM_OK)
    fail(s, rc);
  accept(s, prompt, output);
  /* The instant's last arrival runs the passes. */
  if (s->next_at != sim_engine_now(e))
    run_passes(s);
  return status(s);
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                          */
/* ------------------------------------------------------------------ */

static int alloc_replicas(inf_service *s) {
  s->rep = calloc(s->nrep, sizeof *s->rep);
  s->load_heap = calloc(s->nrep, sizeof *s->load_heap);
  s->due = calloc(s->nrep, sizeof *s->due);
  if (s->rep == NULL || s->load_heap == NULL || s->due == NULL)
    return SIM_ENOMEM;
  for (uint32_t k = 0; k < s->nrep; k++) {
    replica *r = &s->rep[k];
    r->phi = 1;
    r->next_s = r->ev_s = INFINITY;
    r->clock_s = r->act_since = now_s(s);
    r->load_pos = k;
    s->load_heap[k] = k; /* all loads 0: index order is a heap */
  }
  return SIM_OK;
}

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

static int start(inf_service *s, sim_error *err) {
  int rc = sim_engine_register(s->e, "inference replica", on_replica, s,
                               &s->replica_kind);
  if (rc == SIM_OK)
    rc = sim_engine_register(s->e, "inference arrival", on_arrival, s,
                             &s->arrival_kind);
  if (rc == SIM_OK)
    rc = schedule_arrival(s);
  if (rc != SIM_OK)
    return sim_error_set(err, rc, "service %s: cannot start: %s", s->c->name,
                         sim_strerror(rc));
  return SIM_OK;
}

inf_service *inf_create(sim_engine *e, const inf_config *c,
                        const rl_replica *proto, arr_gen *gen, double horizon_s,
                        sim_error *err) {
  inf_service *s = calloc(1, sizeof *s);
  if (s == NULL) {
    arr_destroy(gen);
    sim_error_set(err, SIM_ENOMEM, "out of memory");
    return NULL;
  }
  *s = (inf_service){.e = e,
                     .c = c,
                     .proto = *proto,
                     .gen = gen,
                     .horizon_s = horizon_s,
                     .free_head = NONE,
                     .nrep = (uint32_t)c->replicas};
  s->proto.ep = (int)c->ep;
  int rc = check_shape(c, proto, err);
  if (rc == SIM_OK)
    rc = rl_max_batch_tokens(&s->proto, &s->kv_cap, err);
  if (rc == SIM_OK && alloc_replicas(s) != SIM_OK)
    rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
  if (rc == SIM_OK)
    rc = start(s, err);
  if (rc != SIM_OK) {
    inf_destroy(s);
    return NULL;
  }
  return s;
}

void inf_destroy(inf_service *s) {
  if (s == NULL)
    return;
  for (uint32_t k = 0; s->rep != NULL && k < s->nrep; k++)
    free(s->rep[k].heap);
  free(s->rep);
  free(s->load_heap);
  free(s->due);
  free(s->pool);
  free(s->iv.ttft);
  free(s->iv.tpot);
  arr_destroy(s->gen);
  free(s);
}

const inf_config *inf_config_of(const inf_service *s) { return s->c; }

uint32_t inf_replicas(const inf_service *s) { return s->nrep; }

/* ------------------------------------------------------------------ */
/* What the factory calls                                              */
/* ------------------------------------------------------------------ */

int inf_set_clock(inf_service *s, uint32_t k, double phi) {
  if (k >= s->nrep || !(phi > 0 && phi <= 1))
    return SIM_EINVAL;
  replica *r = &s->rep[k];
  if (phi == r->phi)
    return SIM_OK; /* the same clock: nothing to re-evaluate */
  advance(s, r, now_s(s));
  r->phi = phi;
  if (r->phase == PREFILL)
    price_prefill(s, r);
  else if (r->phase == DECODE)
    price_decode(s, r);
  reschedule(s, r);
  return s->rc;
}

/* Gives back every request of list l, counting them dropped. */
static void drop_list(inf_service *s, req_list *l) {
  uint32_t i;
  while ((i = list_pop(s->pool, l)) != NONE) {
    pool_give(s, i);
    s->tot.dropped++;
  }
}

/* A replica that goes down loses what it holds: its queue, its prefill
 * and its batch, with their KV cache. */
static void drop_all(inf_service *s, replica *r) {
  drop_list(s, &r->waiting);
  drop_list(s, &r->prefill);
  while (r->nheap > 0) {
    pool_give(s, r->heap[--r->nheap]);
    s->tot.dropped++;
  }
  r->kv_used = r->v = r->ctx_base = 0;
  r->pre_left = 0;
  r->phase = IDLE;
  r->activity = r->compute = 0;
  r->next_s = INFINITY;
}

int inf_set_down(inf_service *s, uint32_t k, bool down) {
  if (k >= s->nrep)
    return SIM_EINVAL;
  replica *r = &s->rep[k];
  if (r->down == down)
    return SIM_OK;
  advance(s, r, now_s(s)); /* what finished before now is done */
  if (down)
    drop_all(s, r);
  r->down = down;
  load_changed(s, k);
  reschedule(s, r);
  return s->rc;
}

bool inf_replica_down(const inf_service *s, uint32_t k) {
  return k < s->nrep && s->rep[k].down;
}

double inf_take_activity(inf_service *s, uint32_t k) {
  if (k >= s->nrep)
    return NAN;
  replica *r = &s->rep[k];
  catch_up(s, r);
  double span = r->clock_s - r->act_since;
  double a = span > 0 ? r->act_int / span : r->activity;
  r->comp_mean = span > 0 ? r->comp_int / span : r->compute;
  r->act_int = r->comp_int = 0;
  r->act_since = r->clock_s;
  return a;
}

void inf_add_energy(inf_service *s, double joules) {
  s->iv.energy_j += joules;
  s->tot.energy_j += joules;
}

/* Quantile q of x[0..n) as gsl_stats_quantile_from_sorted_data gives it
 * (linear between the order statistics around (n - 1) q), by selection
 * instead of a sort: O(n) per order statistic, where sorting every
 * interval's latencies cost a tenth of a busy run. Reorders x. */
static double quantile(double *x, size_t n, double q) {
  double index = (double)(n - 1) * q;
  size_t k = (size_t)index;
  double delta = index - (double)k;
  double lo = gsl_stats_select(x, 1, n, k);
  if (delta == 0 || k + 1 >= n)
    return lo;
  return (1 - delta) * lo + delta * gsl_stats_select(x, 1, n, k + 1);
}

/* Reads two quantiles of the interval's values (reordering them). */
static void quantiles(double *x, size_t n, double *p50, double *p99) {
  if (n == 0) {
    *p50 = *p99 = NAN;
    return;
  }
  *p50 = quantile(x, n, 0.5);
  *p99 = quantile(x, n, 0.99);
}

static double ratio(double num, double den) {
  return den > 0 ? num / den : NAN;
}

void inf_sample(inf_service *s, double dt, double *row) {
  uint64_t waiting = 0;
  for (uint32_t k = 0; k < s->nrep; k++) {
    catch_up(s, &s->rep[k]);
    waiting += s->rep[k].waiting.n;
  }
  interval *iv = &s->iv;
  row[INF_REQUESTS_PER_S] = ratio((double)iv->completed, dt);
  row[INF_ARRIVALS_PER_S] = ratio((double)iv->arrivals, dt);
  row[INF_TOKENS_PER_S] = ratio(iv->tokens, dt);
  row[INF_QUEUE] = (double)waiting;
  row[INF_BATCH] = ratio(iv->batch_s, dt * s->nrep);
  quantiles(iv->ttft, iv->n, &row[INF_TTFT_P50], &row[INF_TTFT_P99]);
  quantiles(iv->tpot, iv->n, &row[INF_TPOT_P50], &row[INF_TPOT_P99]);
  row[INF_SLO] = ratio((double)iv->slo_met, (double)iv->completed);
  row[INF_TOKENS_PER_J] = ratio(iv->tokens, iv->energy_j);
  row[INF_POWER_W] = ratio(iv->energy_j, dt);
  *iv = (interval){.ttft = iv->ttft, .tpot = iv->tpot, .cap = iv->cap};
}

/* Tokens a decoding replica has made since its clock, which lags now by
 * up to the time since its last change (const: it cannot catch up). */
static double tokens_since_clock(const replica *r, double now) {
  if (r->phase != DECODE || !(now > r->clock_s))
    return 0;
  return r->nheap * (fmin(now, r->next_s) - r->clock_s) / r->t_step;
}

inf_totals inf_totals_of(const inf_service *s) {
  inf_totals t = s->tot;
  double now = now_s(s);
  for (uint32_t k = 0; k < s->nrep; k++) {
    const replica *r = &s->rep[k];
    t.waiting += r->waiting.n;
    t.in_batch += in_batch(r);
    t.tokens_generated += tokens_since_clock(r, now);
  }
  return t;
}

double inf_ttft_quantile(const inf_service *s, double q) {
  return hist_quantile(&s->ttft_h, q);
}

double inf_tpot_quantile(const inf_service *s, double q) {
  return hist_quantile(&s->tpot_h, q);
}

double inf_compute_share(const inf_service *s, uint32_t r) {
  return r < s->nrep ? s->rep[r].comp_mean : 0;
}
