/* inference_internal.h - what the files of inference share: the state
 * of a service (the request pool, the replicas with their lists and
 * heaps, the statistics), the ops table through which inference.c hands
 * each public operation to the service's granularity (request level,
 * inference_request.c; fluid, inference_fluid.c), and the private
 * operations on the state (inference_heap.c, inference_stats.c). The
 * request level's invariants are at the top of inference_request.c. */
#ifndef AIFSIM_INFERENCE_INTERNAL_H
#define AIFSIM_INFERENCE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bits.h"
#include "inference.h"

#define NONE UINT32_MAX

/* Run-wide latency histograms: log-spaced from 1 us to 1e4 s, 100 bins a
 * decade (adjacent edges 2.3% apart), with an underflow bin below 1 us
 * (where one-token outputs' TPOT of 0 goes) and an overflow bin above. */
#define HIST_LO_S 1e-6
#define HIST_PER_DECADE 100
#define HIST_BINS (10 * HIST_PER_DECADE)

/* 64 bytes: one cache line in the pool (pool_grow aligns it). */
typedef struct request {
  double arrival_s, first_s;
  double prompt, output; /* tokens; output >= 1 */
  double join_v;         /* V when it joined the decoding batch */
  double tag;            /* V at which it finishes: join_v + output - 1 */
  uint32_t next;         /* FIFO, prefill list or free list */
  uint32_t prompt_id;    /* its prompt in the pool; NONE: unique */
  bool shared;           /* joined while its prompt was held: no prefill */
} request;

typedef struct req_list {
  uint32_t head, tail, n;
} req_list;

typedef enum phase { IDLE, PREFILL, DECODE } phase;

/* A decoding request in its replica's heap: its finish tag, kept here
 * (pool[i].tag, set once before the push) so that the heap's compares and
 * the replica's next change read no pool entry, and its index. */
typedef struct heap_entry {
  double tag;
  uint32_t i;
} heap_entry;

/* A replica's state, laid out by when it is read, in four 64-byte lines
 * (the array is aligned: inference_request.c's alloc_replicas): a
 * decoding replica's change reads all four, the period's take of its
 * load the first three, and its clock's terms are its own (per replica:
 * the policy's clocks under caps differ replica by replica). */
typedef struct replica {
  /* line 0: the lists, the heap, the event */
  _Alignas(64) req_list waiting;
  req_list prefill;
  uint32_t nheap, heap_cap;
  sim_handle ev; /* the pending event ... */
  /* heap[0].i while nheap > 0 (set where the heap changes: end_prefill,
   * finish_due): the request a decoding replica's event finishes, its
   * line asked for with r's first (on_replica), not after the heap's */
  uint32_t top;
  uint8_t phase;    /* a phase: one byte, so that top fits this line */
  bool pass_due;    /* an arrival waits for this instant's pass */
  bool down;        /* its GPUs are gone (a fault): routing skips it */
  heap_entry *heap; /* decoding requests, min-heap on (tag, i) */
  double kv_used;   /* tokens held by the batch */
  /* line 1: the state between changes */
  double clock_s;  /* the state below is exact at this time */
  double v;        /* virtual time: tokens each decoding request gained */
  double ctx_base; /* sum over the heap of prompt + 1 - join_v */
  double t_step;   /* s per decode step, while decoding */
  gpu_load load;   /* per GPU, now, at full clock (gpu.h) */
  double compute;  /* share of the work now that the clock speeds up */
  /* line 2: the next change and the integrals */
  double next_s;    /* time of the next change; +inf when idle */
  double ev_s;      /* ... and the time it stands for */
  gpu_load act_int; /* load x seconds since act_since */
  double comp_int;  /* compute share x seconds since act_since */
  double comp_mean; /* the compute share's mean over the last window */
  double act_since;
  /* line 3: the clock, the prefill. clk.key is the replica's clock (phi,
   * inf__rep_phi); the other terms are rl_clock_of's at it once priced,
   * clk.phi 0 until then (a clamped phi is > 0): inf__rep_clock. */
  rl_clock clk;
  double pre_left; /* share of the prefill still to run */
  double pre_s;    /* the whole prefill's duration at phi */
} replica;

_Static_assert(sizeof(replica) == 256 && offsetof(replica, clock_s) == 64 &&
                   offsetof(replica, heap) == 48 &&
                   offsetof(replica, next_s) == 128 &&
                   offsetof(replica, clk) == 192,
               "a replica is four cache lines, as laid out");
_Static_assert(offsetof(replica, load) % 16 == 0 &&
                   offsetof(replica, compute) ==
                       offsetof(replica, load) + 3 * sizeof(double),
               "a replica's load and compute share are two 16-byte pairs "
               "(inf__rep_set_load)");

/* Sets r->top after r's heap changed (end_prefill, finish_due). */
static inline void inf__rep_keep_top(replica *r) {
  r->top = r->nheap > 0 ? r->heap[0].i : NONE;
}

/* Replica r's clock, phi (its kept terms' key). */
static inline double inf__rep_phi(const replica *r) { return r->clk.key; }

/* Sets replica r's clock to phi: its terms are worked out when next
 * priced (inf__rep_clock). */
static inline void inf__rep_set_phi(replica *r, double phi) {
  r->clk = (rl_clock){.key = phi};
}

/* What the current sampling interval has seen. */
typedef struct interval {
  uint64_t arrivals, completed, slo_met;
  uint64_t rejected, timed_out; /* misses for the interval's attainment */
  double tokens, batch_s, energy_j;
  double *ttft, *tpot;
  size_t n, cap;
} interval;

/* The loads kept as bitmaps in a route_tree (its top and loads words
 * hold a bit a load). */
#define ROUTE_LOADS 64

/* The replicas' keys (load_key's, distinct), the smallest found in a few
 * instructions. Those of up replicas with a load below ROUTE_LOADS are
 * bits: bit k of bits[load * words + k / 64]; bit w of sums[load * nsum +
 * w / 64] marks a nonzero bits word w, bit s of top[load] a nonzero sums
 * word s, bit load of loads a load with any. The other keys are in a
 * tournament tree: leaves at node[leaves + k] (UINT64_MAX for bucketed
 * keys, and padding to a power of two); node[i] is the smaller of
 * node[2i] and node[2i + 1], so node[1] is the smallest. Without bits
 * (more than 64^3 replicas) the tree holds every key. One allocation,
 * from node. */
typedef struct route_tree {
  uint64_t *node, *key, *bits, *sums;
  uint64_t top[ROUTE_LOADS], loads;
  uint32_t leaves, words, nsum;
} route_tree;

/* The state of a fluid service (inference_fluid.c). */
typedef struct inf_fluid inf_fluid;

/* A granularity: how a service simulates its requests. inference.c sets
 * the table at creation and calls through it; each entry is the public
 * operation of inference.h of the same name (down: inf_replica_down;
 * totals: inf_totals_of; quantile: inf_ttft_quantile, or with ttft false
 * inf_tpot_quantile). start builds the granularity's state once the
 * common fields (engine, config, replica, generator, KV capacity, nrep)
 * are set: SIM_OK, or an error with err set. free releases it, whatever
 * start got to; inf_add_energy needs no entry: both read s->iv.energy_j
 * and s->tot.energy_j. */
typedef struct inf_ops {
  int (*start)(inf_service *s, sim_error *err);
  void (*free)(inf_service *s);
  int (*set_clock)(inf_service *s, uint32_t k, double phi);
  int (*set_down)(inf_service *s, uint32_t k, bool down);
  bool (*down)(const inf_service *s, uint32_t k);
  gpu_load (*take_load)(inf_service *s, uint32_t k);
  /* The batch forms (inf_set_clocks, inf_take_loads,
   * inf_compute_shares): NULL, the
   * per-replica op in a loop. */
  int (*set_clocks)(inf_service *s, uint32_t k0, uint32_t n, const double *phi);
  void (*take_loads)(inf_service *s, uint32_t k0, uint32_t n, gpu_load *out);
  void (*compute_shares)(const inf_service *s, uint32_t k0, uint32_t n,
                         double *out);
  double (*compute_share)(const inf_service *s, uint32_t k);
  void (*sample)(inf_service *s, double dt, double *row);
  inf_totals (*totals)(const inf_service *s);
  double (*quantile)(const inf_service *s, bool ttft, double q);
} inf_ops;

extern const inf_ops inf__request_ops; /* inference_request.c */
extern const inf_ops inf__fluid_ops;   /* inference_fluid.c */

typedef struct histogram {
  uint64_t bin[HIST_BINS];
  uint64_t n, under;
  double min, max;
} histogram;

struct inf_service {
  sim_engine *e;
  const sim_allocator *alloc; /* the engine's: everything below */
  const inf_ops *ops;         /* the granularity */
  const inf_config *c;
  rl_replica proto;
  rl_clock full_clk; /* proto's step terms at full clock (key 0: none) */
  rl_batch_full *bt; /* request level: bt[b], b requests' (key 0: none) */
  size_t nbt;
  rl_prefill_terms pre; /* request level: proto's prefill terms */
  rl_ep_table ep_table; /* proto's, when it is expert-parallel */
  arr_gen *gen;
  double horizon_s, kv_cap;
  uint32_t arrival_kind, replica_kind;
  uint32_t arrival_source; /* the arrivals' (sim_engine_source) */
  replica *rep, *rep_mem;  /* rep: rep_mem's first 64-byte boundary */
  uint32_t nrep;
  route_tree route; /* replicas' routing keys (load_key): the lightest */
  uint32_t *due;    /* replicas with pass_due, ndue of them */
  uint32_t ndue;
  /* pool: pool_mem's first 64-byte boundary, so each 64-byte request is
   * one cache line (inference_heap.c, pool_grow) */
  request *pool, *pool_mem;
  uint32_t pool_cap, free_head;
  int64_t next_prompt, next_output; /* the pending arrival's lengths */
  sim_time next_at;                 /* its time; SIM_TIME_MAX: none */
  inf_totals tot;                   /* waiting, in_batch: see totals_of */
  interval iv;
  histogram ttft_h, tpot_h;
  int rc; /* a failure inside the model, for the next handler to report */
  inf_fluid *fluid; /* granularity fluid: its state; NULL at request level */
  /* Shared prompts (inference.h; inference_prompts.c): prompt_n = the
   * pool's size, 0 when every prompt is unique; prompt_len[id] the length
   * of prompt id, NAN until its first copy arrives; prompt_refs[k *
   * prompt_n + id] the requests replica k holds with prompt id. */
  uint32_t prompt_n;
  double *prompt_len;
  uint32_t *prompt_refs;
};

/* Requests in the batch: being prefilled or decoding. */
static inline uint32_t in_batch(const replica *r) {
  return r->prefill.n + r->nheap;
}

/* ------------------------------------------------------------------ */
/* The request pool and lists (inference_heap.c)                       */
/* ------------------------------------------------------------------ */

/* Frees the request level's state: the replicas and their heaps, the
 * routing tree, the pool and the sample buffers. */
void inf__req_free(inf_service *s);

/* A free slot of the pool, grown by doubling when none is left, or NONE
 * when out of memory. Growing moves the pool: hold indices, not
 * pointers. */
uint32_t inf__pool_take(inf_service *s);

/* Gives slot i back to the pool's free list. Cannot fail. In line, as
 * the two below: a few instructions each, twice or more a request, their
 * calls were a third of them. */
static inline void inf__pool_give(inf_service *s, uint32_t i) {
  s->pool[i].next = s->free_head;
  s->free_head = i;
}

/* Appends request i to list l (FIFO), chained through pool[i].next. */
static inline void inf__list_push(request *pool, req_list *l, uint32_t i) {
  pool[i].next = NONE;
  if (l->n++ == 0)
    l->head = i;
  else
    pool[l->tail].next = i;
  l->tail = i;
}

/* Takes the head of list l off it; NONE when l is empty. */
static inline uint32_t inf__list_pop(request *pool, req_list *l) {
  if (l->n == 0)
    return NONE;
  uint32_t i = l->head;
  l->head = pool[i].next;
  l->n--;
  return i;
}

/* Gives back every request replica r holds, its queue's, its prefill's,
 * then its decoding heap's from the last, to the pool in that order, and
 * returns how many: the lists and the heap are left empty. */
uint64_t inf__replica_empty(inf_service *s, replica *r);

/* Replica r, going down, loses what it holds (inf__replica_empty, counted
 * dropped) with its KV cache, and is left idle. */
void inf__replica_drop(inf_service *s, replica *r);

/* ------------------------------------------------------------------ */
/* The decoding heap and the routing tree (inference_heap.c)           */
/* ------------------------------------------------------------------ */

/* Makes room for want requests in r's decoding heap, so pushes after
 * admission cannot fail. Returns SIM_OK or SIM_ENOMEM (r unchanged). */
int inf__heap_reserve(const sim_allocator *a, replica *r, uint32_t want);

/* Adds request i, its tag set, to r's decoding heap; room must have been
 * reserved. */
void inf__heap_push(replica *r, const request *pool, uint32_t i);

/* Takes the request with the smallest finish tag (lower index on ties)
 * off r's decoding heap, which must not be empty. */
uint32_t inf__heap_pop(replica *r);

/* Builds t over n keys, key k = k (every replica up with load 0).
 * Returns SIM_OK or SIM_ENOMEM (t unchanged); sim_free(a, t->node)
 * releases it. */
int inf__route_init(const sim_allocator *a, route_tree *t, uint32_t n);

/* Sets key k of t to key: a few instructions within the buckets,
 * O(log n) into, out of or within the tree. */
void inf__route_set(route_tree *t, uint32_t k, uint64_t key);

/* The smallest key of t: the first bit of the lightest bucketed load, or
 * the tree's root when no key is bucketed. */
static inline uint64_t inf__route_min(const route_tree *t) {
  if (t->loads == 0)
    return t->node[1];
  uint32_t load = (uint32_t)__builtin_ctzll(t->loads);
  uint32_t s = (uint32_t)__builtin_ctzll(t->top[load]);
  uint32_t w =
      s * 64 + (uint32_t)__builtin_ctzll(t->sums[(size_t)load * t->nsum + s]);
  uint32_t b = (uint32_t)__builtin_ctzll(t->bits[(size_t)load * t->words + w]);
  return (uint64_t)load << 32 | (w * 64 + b);
}

/* Updates the routing tree after replica k's load (waiting + in_batch)
 * or its being down changed. */
void inf__load_changed(inf_service *s, uint32_t k);

/* ------------------------------------------------------------------ */
/* Shared prompts and the KV they hold (inference_prompts.c)           */
/* ------------------------------------------------------------------ */

/* Allocates the pool's tables when c->prompt_pool > 0. SIM_OK, or an
 * error with err set (SIM_EINVAL for too large a table, SIM_ENOMEM). */
int inf__prompts_start(inf_service *s, sim_error *err);

/* Frees them; cannot fail. */
void inf__prompts_free(inf_service *s);

/* Gives request q, the service's arrived-th arrival (from 1), its prompt
 * id and its prompt's length (inference.h); without a pool, id NONE. */
void inf__prompt_assign(inf_service *s, request *q);

/* The KV tokens q would add to replica k's cache by joining now. */
double inf__kv_need(const inf_service *s, uint32_t k, const request *q);

/* q joins replica k: counts its prompt held, sets q->shared, and returns
 * the KV tokens it adds. */
double inf__kv_join(inf_service *s, uint32_t k, request *q);

/* q leaves replica k: returns the KV tokens that frees (its prompt's only
 * when it was the last holder). */
double inf__kv_leave(inf_service *s, uint32_t k, const request *q);

/* Replica k holds nothing any more (it went down). */
void inf__kv_clear(inf_service *s, uint32_t k);

/* ------------------------------------------------------------------ */
/* Statistics (inference_stats.c)                                      */
/* ------------------------------------------------------------------ */

/* Makes h empty. */
void inf__hist_init(histogram *h);

/* The position log10 gives x >= HIST_LO_S: log10(x / HIST_LO_S) x
 * HIST_PER_DECADE, whose floor is x's bin (HIST_BINS or more: above the
 * top bin). What the edges are made from (tools/hist_edges.py); nothing
 * bins by it. */
double inf__hist_pos(double x);

/* The bins' edges (inference_hist_edges.c, written by
 * tools/hist_edges.py): edge[b] the smallest x >= HIST_LO_S whose
 * position is b or more, b = 0 .. HIST_BINS; edge[HIST_BINS + 1] +inf. */
extern const double inf__hist_edge[HIST_BINS + 2];

/* The bin of x >= HIST_LO_S as log10 places it (HIST_BINS or more:
 * above the top bin), without a log10: both histograms' (inf__hist_add, the
 * fluid mode's wh_add2). x's position is guessed from its bits, log2 of the
 * mantissa by a quadratic (within 0.0077 of it, 0.24 of a bin), so the
 * bin is the guess's or the next, and one edge tells which
 * (test_inference_hist.c holds it to log10 around every edge). About 20
 * instructions against log10's 90. */
static inline size_t inf__hist_bin(double x) {
  uint64_t u = sim_bits(x);
  double f = sim_of_bits((u & 0xfffffffffffffu) | 0x3ff0000000000000u) - 1;
  double log2x = (double)((int)(u >> 52) - 1023) + f * (1.3466 - 0.3466 * f);
  /* 100 log10(2) a binary order, 600 from HIST_LO_S, less a half: the
   * guess is at most the bin and the bin at most the guess + 1. */
  double guess = log2x * (HIST_PER_DECADE * 0.30102999566398120) + 599.5;
  size_t b = guess <= 0 ? 0 : guess >= HIST_BINS ? HIST_BINS : (size_t)guess;
  return b + (inf__hist_edge[b + 1] <= x);
}

/* Counts x (seconds) in the run-wide histogram h (inf__hist_init'ed), in
 * inf__hist_bin's bin. In line: twice a completion. */
static inline void inf__hist_add(histogram *h, double x) {
  h->min = h->n == 0 || x < h->min ? x : h->min;
  h->max = h->n == 0 || x > h->max ? x : h->max;
  h->n++;
  if (!(x >= HIST_LO_S)) {
    h->under++;
    return;
  }
  /* Above the top bin a value counts only in n: its rank reads as max. */
  size_t b = inf__hist_bin(x);
  if (b < HIST_BINS)
    h->bin[b]++;
}

/* Quantile q in [0, 1] of the values h has counted, interpolated as GSL's
 * quantile does; NaN when h is empty or q is outside [0, 1]. */
double inf__hist_quantile(const histogram *h, double q);

/* The request level's run-wide TTFT (ttft) or TPOT quantile q
 * (inf__hist_quantile of its histogram): its quantile op. */
double inf__req_quantile(const inf_service *s, bool ttft, double q);

/* inf__interval_push when the buffers are full: grows them, then
 * appends. Returns SIM_OK or SIM_ENOMEM. */
int inf__interval_grow(const sim_allocator *a, interval *iv, double ttft,
                       double tpot);

/* Appends one completed request's TTFT and TPOT to the interval's
 * buffers, growing them. Returns SIM_OK or SIM_ENOMEM. In line: once a
 * request, and the buffers have room at all but the growths. */
static inline int inf__interval_push(const sim_allocator *a, interval *iv,
                                     double ttft, double tpot) {
  if (!(iv->n < iv->cap))
    return inf__interval_grow(a, iv, ttft, tpot);
  iv->ttft[iv->n] = ttft;
  iv->tpot[iv->n++] = tpot;
  return SIM_OK;
}

/* The median and 99th percentile of x[0..n), reordering x; NaN for both
 * when n is 0. */
void inf__quantiles(double *x, size_t n, double *p50, double *p99);
/* A request's end in the statistics (inference_stats.c): a completion's
 * latencies (SIM_ENOMEM when the interval's buffers cannot grow), a
 * rejection, a client that gave up. */
int inf__record(inf_service *s, double ttft, double tpot);
void inf__count_rejected(inf_service *s);
void inf__count_timed_out(inf_service *s);

#endif
