/* inference_request.c - inference services at request level
 * (docs/MODELS.md), the request granularity's operations
 * (inf__request_ops, inference_internal.h): routing,
 * continuous batching with a prefill phase, processor-sharing decode in
 * virtual time, the KV-cache limit, activity, TTFT/TPOT statistics. The
 * model is specified in inference.h; the step times come from roofline.h.
 * inference.c builds a service and hands each public operation to this
 * file or to inference_fluid.c; the request pool and the heaps are in
 * inference_heap.c (with the freeing of the state), the latency
 * statistics in inference_stats.c, the replica's prices in
 * inference_request_price.c.
 *
 * Data structures and their invariants:
 * - Requests live in one pool (an array grown by doubling, free slots
 *   chained through `next`); everything else names them by index, since
 *   growing the pool moves it. Nothing is allocated per request once the
 *   pool, the heaps and the sample buffers have grown to the load.
 * - A replica holds three sets: the FIFO of waiting requests, the joiners
 *   being prefilled (a list) and the decoding batch (a min-heap on finish
 *   tags). in_batch = joiners + decoding, and kv_used = the sum of their
 *   prompt + kv_reserve x output tokens <= kv_cap (roofline.h).
 * - A replica's state is exact at clock_s, a double: between changes it
 *   evolves linearly (V grows at 1 / t_step while decoding, the prefill's
 *   share left shrinks at 1 / pre_s while prefilling), and next_s is the
 *   time of the next change (the smallest tag reached, or the prefill's
 *   end; +inf when idle). Changes are processed at their exact times,
 *   whatever event brings the replica up to date, so the rounding of event
 *   times to nanoseconds never reaches TTFT or TPOT.
 * - One engine event per replica is pending, at ceil(next_s), or, when
 *   its prefill's end changes nothing beyond it, at the first completion
 *   after that end (inf__after_prefill): the end is then processed at its
 *   own time by whatever brings the replica up to date. A replica
 *   that could take a new arrival at once gets a scheduling pass when the
 *   last arrival of that instant has been queued (pass_due, listed in
 *   due), so requests arriving together are prefilled together.
 * - The routing tree orders replicas by load (waiting + in_batch), then by
 *   index; it is fixed whenever a load changes.
 * - Conservation: arrived = completed + rejected + timed_out + dropped +
 *   waiting + in_batch.
 * - Each replica's FIFO is in arrival order, so the requests whose
 *   clients have given up (older than timeout) are at its head: they are
 *   taken off lazily (expire), never by an event of their own.
 * - A down replica (inf_set_down) holds nothing, is idle and sorts after
 *   every up replica in the routing tree, so an arrival goes to it only
 *   when all are down, and is then dropped. */
#include "arrivals_draw.h"
#include "inference_internal.h"
#include "inference_request_price.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* Helpers (the state itself is in inference_internal.h)               */
/* ------------------------------------------------------------------ */

/* Whether a time t s is beyond any run (or NaN, +inf: never): its
 * nanoseconds would not fit a sim_time. */
static inline bool beyond_any_run(double t) { return !(t * 1e9 < 9e18); }

static double now_s(const inf_service *s) {
  return sim_time_to_s(sim_engine_now(s->e));
}

/* Records the first failure; the next handler stops the run with it. */
static void fail(inf_service *s, int rc) {
  if (s->rc == SIM_OK)
    s->rc = rc;
}

static uint32_t replica_index(const inf_service *s, const replica *r) {
  return (uint32_t)(r - s->rep);
}

/* ------------------------------------------------------------------ */
/* Statistics (a request's end: inf__record, inference_stats.c)        */
/* ------------------------------------------------------------------ */

static void add_tokens(inf_service *s, double n) {
  s->tot.tokens_generated += n;
  s->iv.tokens += n;
}

/* ------------------------------------------------------------------ */
/* A replica's work: pricing, the changes, catching up with time        */
/* ------------------------------------------------------------------ */

static bool fits(const inf_service *s, const replica *r, const request *q) {
  return in_batch(r) < (uint64_t)s->c->max_batch &&
         r->kv_used + inf__kv_need(s, replica_index(s, r), q) <= s->kv_cap;
}

/* expire with its head given up: it and those after it that have. */
static __attribute__((noinline)) void expire_heads(inf_service *s, replica *r,
                                                   double t) {
  uint32_t n = 0;
  while (r->waiting.n > 0 && inf__gave_up(s, &s->pool[r->waiting.head], t)) {
    inf__pool_give(s, inf__list_pop(s->pool, &r->waiting));
    inf__count_timed_out(s);
    n++;
  }
  if (n > 0)
    inf__load_changed(s, replica_index(s, r));
}

/* Takes the waiting requests whose clients have given up by time t off
 * r's queue: its head, since it is in arrival order. Costs one
 * comparison, in line, when none has (every admission asks). */
static inline void expire(inf_service *s, replica *r, double t) {
  if (r->waiting.n > 0 && inf__gave_up(s, &s->pool[r->waiting.head], t))
    expire_heads(s, r, t);
}

/* Moves waiting requests into the prefill, in order, while they fit
 * (FCFS: the first that does not fit stops the others), after the
 * expired ones have left; with none waiting (most calls), a test. */
static uint32_t admit(inf_service *s, replica *r) {
  uint32_t n = 0;
  if (r->waiting.n == 0)
    return 0;
  expire(s, r, r->clock_s);
  while (r->waiting.n > 0 && fits(s, r, &s->pool[r->waiting.head])) {
    /* the batch is under max_batch (<= 1e6): held room is granted room */
    if (in_batch(r) + 1 > r->heap_cap &&
        inf__heap_reserve(s->alloc, r, in_batch(r) + 1) != SIM_OK) {
      fail(s, SIM_ENOMEM);
      break;
    }
    uint32_t i = inf__list_pop(s->pool, &r->waiting);
    r->kv_used += inf__kv_join(s, replica_index(s, r), &s->pool[i]);
    inf__list_push(s->pool, &r->prefill, i);
    n++;
  }
  return n;
}

static void start_prefill(inf_service *s, replica *r) {
  r->phase = PREFILL;
  r->pre_left = 1;
  inf__price_prefill(s, r);
}

/* After a change: prefill whoever can join, else decode, else rest. */
static void resume(inf_service *s, replica *r) {
  admit(s, r);
  if (r->prefill.n > 0) {
    start_prefill(s, r);
  } else if (r->nheap > 0) {
    r->phase = DECODE;
    inf__price_decode(s, r);
  } else {
    r->phase = IDLE;
    inf__rep_set_load(r, (gpu_load){0, 0, 0}, 0);
    r->next_s = INFINITY;
  }
}

static void complete(inf_service *s, replica *r, uint32_t i) {
  const request *q = &s->pool[i];
  double ttft = q->first_s - q->arrival_s;
  double tpot = q->output > 1 ? (r->clock_s - q->first_s) / (q->output - 1) : 0;
  r->kv_used -= inf__kv_leave(s, replica_index(s, r), q);
  inf__pool_give(s, i);
  fail(s, inf__record(s, ttft, tpot));
  inf__load_changed(s, replica_index(s, r));
}

/* A joiner whose client gave up during its prefill: the prefill was done
 * (its prompt counts) but its first token reaches no one, and its KV is
 * freed. */
static void abandon(inf_service *s, replica *r, uint32_t i) {
  r->kv_used -= inf__kv_leave(s, replica_index(s, r), &s->pool[i]);
  inf__pool_give(s, i);
  inf__count_timed_out(s);
  inf__load_changed(s, replica_index(s, r));
}

/* The prefill is over: each joiner has its first token and decodes from
 * the current V (or is done, with a one-token output), unless its client
 * has given up. */
static void end_prefill(inf_service *s, replica *r) {
  uint32_t i;
  while ((i = inf__list_pop(s->pool, &r->prefill)) != NONE) {
    request *q = &s->pool[i];
    q->first_s = r->clock_s;
    s->tot.prompt_tokens += q->shared ? 0 : q->prompt;
    if (inf__gave_up(s, q, q->first_s)) {
      abandon(s, r, i);
      continue;
    }
    add_tokens(s, 1);
    if (q->output <= 1) {
      complete(s, r, i);
      continue;
    }
    q->join_v = r->v;
    q->tag = r->v + q->output - 1;
    r->ctx_base += q->prompt + 1 - r->v;
    inf__heap_push(r, s->pool, i);
  }
  inf__rep_keep_top(r);
}

/* The smallest tag is reached: that request (and any with the same tag)
 * is done. An empty batch restarts V at 0, so tags stay small numbers. */
static void finish_due(inf_service *s, replica *r) {
  r->v = r->heap[0].tag;
  while (r->nheap > 0 && r->heap[0].tag <= r->v) {
    uint32_t i = inf__heap_pop(r);
    const request *q = &s->pool[i];
    r->ctx_base -= q->prompt + 1 - q->join_v;
    complete(s, r, i);
  }
  if (r->nheap == 0)
    r->v = r->ctx_base = 0;
  inf__rep_keep_top(r);
}

/* Integrates over [clock_s, t], within which nothing changes. In line
 * in its callers: it runs at every change and catch-up, and its call
 * cost 45 k instructions a period of bench-10k's first minutes. */
static inline __attribute__((always_inline)) void drift(inf_service *s,
                                                        replica *r, double t) {
  double dt = t - r->clock_s;
  if (!(dt > 0))
    return;
  r->act_int = gpu_load_axpy(r->act_int, dt, r->load);
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

/* Whether r's event stands for a change after its prefill's end: that end
 * is processed only when something brings r up to date, so r's phase may
 * be behind now. */
static bool folded(const replica *r) {
  return r->phase == PREFILL && r->ev_s > r->next_s;
}

/* advance with a change due by t: every change up to t at its own time.
 * A folded prefill's end leads to the completion its event is at, to the
 * bit (inf__after_prefill): nothing came between. Out of line: its
 * prologue saves the registers the changes' steps use, which half of the
 * calls, with no change due, do not need. */
static __attribute__((noinline)) void advance_changes(inf_service *s,
                                                      replica *r, double t) {
  while (r->next_s <= t) {
    drift(s, r, r->next_s);
    if (r->phase == PREFILL) {
      bool fold = folded(r);
      r->pre_left = 0;
      end_prefill(s, r);
      resume(s, r);
      assert(!fold || (r->phase == DECODE && r->next_s == r->ev_s));
      (void)fold;
      continue;
    }
    finish_due(s, r);
    resume(s, r);
  }
  drift(s, r, t);
}

/* Brings the replica to time t, processing every change up to t at its
 * own time (advance_changes); without one, only its integrals move. */
static inline void advance(inf_service *s, replica *r, double t) {
  if (r->next_s <= t)
    advance_changes(s, r, t);
  else
    drift(s, r, t);
}

/* Keeps the replica's one pending event at its next change others see (a
 * prefill's end that changes nothing beyond it is folded into the next:
 * inf__after_prefill); does nothing when that is already the pending one.
 * A pending event is moved, not cancelled and scheduled again: the power
 * policy moves most replicas' clocks, and so their next changes, every
 * period. Whether it is pending is whether r holds a handle: cancel
 * clears it, and so does on_replica, the event having run. */
static void reschedule(inf_service *s, replica *r) {
  double at_s = r->phase == PREFILL ? inf__after_prefill(s, r) : r->next_s;
  bool pending = r->ev.slot != 0; /* test_inference_batch holds it */
  assert(pending == sim_engine_pending(s->e, r->ev));
  if (at_s == r->ev_s && pending)
    return;
  r->ev_s = at_s;
  if (beyond_any_run(at_s)) { /* idle, or beyond any run */
    sim_engine_cancel(s->e, &r->ev);
    return;
  }
  sim_time at = (sim_time)ceil(at_s * 1e9), now = sim_engine_now(s->e);
  at = at < now ? now : at;
  int rc = pending ? sim_engine_move(s->e, r->ev, at)
                   : sim_engine_schedule(s->e, at, s->replica_kind,
                                         replica_index(s, r), 0, &r->ev);
  if (rc != SIM_OK)
    fail(s, rc);
}

#ifndef NDEBUG
/* Whether reschedule would leave r as it is (or cancel a cleared handle). */
static bool event_stands(inf_service *s, replica *r) {
  double at_s = r->phase == PREFILL ? inf__after_prefill(s, r) : r->next_s;
  return at_s == r->ev_s && (r->ev.slot != 0 || beyond_any_run(at_s));
}
#endif

/* Whether r rests with nothing to catch up on: idle, its event cancelled
 * (the handle cleared), its integrals 0 (either zero) since last taken;
 * most replicas each period. As bits, one test (+inf's bits, a zero's). */
static bool resting(const replica *r) {
  uint64_t inf = sim_bits(INFINITY),
           zero = sim_bits(r->comp_int) | sim_bits(r->act_int.sm) |
                  sim_bits(r->act_int.mem) | sim_bits(r->act_int.busy);
  return r->phase == IDLE &&
         ((sim_bits(r->next_s) ^ inf) | (sim_bits(r->ev_s) ^ inf) | r->ev.slot |
          zero << 1) == 0;
}

/* A resting replica brought to t: catch_up says why only its clock moves. */
static inline void rest_to(inf_service *s, replica *r, double t) {
  if (t - r->clock_s > 0) {
    r->act_int = (gpu_load){0, 0, 0};
    r->comp_int = 0;
    s->iv.batch_s += 0.0;
    r->clock_s = t;
  }
}

/* catch_up when it only moves r to t, in line (take_loads); false, r
 * untouched, with a change due. Resting: advance and reschedule would add
 * 0 x dt (a -0 made +0) and cancel a cleared handle. Busy: it drifts, and
 * what reschedule reads is as its last call (after every change) left it. */
static inline bool quiet_to(inf_service *s, replica *r, double t) {
  if (resting(r)) {
    rest_to(s, r, t);
    return true;
  }
  if (r->next_s <= t)
    return false;
  drift(s, r, t);
  assert(event_stands(s, r));
  return true;
}

/* Brings r to now, t, and keeps its event at its next change. */
static void catch_up(inf_service *s, replica *r, double t) {
  if (quiet_to(s, r, t))
    return;
  advance_changes(s, r, t);
  reschedule(s, r);
}

/* Asks, as r's first line comes, for the lines its change reads next:
 * the heap's top and the request it finishes (r->top), and the first
 * joiner of its prefill. Read in turn, each waited on the one before it
 * (the replica's line, then the heap's, then the request's, whose load
 * came after the heap's walk down and its mispredicted compares). Always
 * in line: GCC finds a function of asks alone without effect and drops
 * the calls to it before it would inline them (-O2, GCC 12). */
static inline __attribute__((always_inline)) void
ask_change(const inf_service *s, const replica *r) {
  if (r->nheap > 0) {
    __builtin_prefetch(r->heap);
    __builtin_prefetch(&s->pool[r->top]);
  }
  if (r->prefill.n > 0)
    __builtin_prefetch(&s->pool[r->prefill.head]);
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
  ask_change(s, r);
  r->ev = (sim_handle){0, 0}; /* it has run: no longer pending */
  advance(s, r, rl_fmax(sim_time_to_s(sim_engine_now(e)), r->ev_s));
  reschedule(s, r);
  return status(s);
}

/* Pulls the next request from the generator and sets its arrival as the
 * arrivals' source's event (never queued: engine.h), unless the
 * generator has ended or the request is past the horizon. */
static int schedule_arrival(inf_service *s) {
  double t;
  int64_t prompt, output;
  s->next_at = SIM_TIME_MAX;
  if (!arr_next(s->gen, &t, &prompt, &output) || !(t < s->horizon_s) ||
      beyond_any_run(t))
    return SIM_OK;
  s->next_prompt = prompt;
  s->next_output = output;
  sim_time at = (sim_time)arr_llround(t * 1e9), now = sim_engine_now(s->e);
  s->next_at = at < now ? now : at;
  return sim_engine_source_at(s->e, s->arrival_source, s->next_at, 0, 0);
}

/* Whether replica r's queue is full for an arrival now. Only when it
 * looks full is the replica brought up to now and its expired requests
 * taken off, so a run without max_queue never pays for it. */
static bool queue_full(inf_service *s, replica *r) {
  uint64_t limit = (uint64_t)s->c->max_queue;
  if (limit == 0 || r->waiting.n < limit)
    return false;
  catch_up(s, r, now_s(s));
  expire(s, r, r->clock_s);
  return r->waiting.n >= limit;
}

/* Request i (q, its copy) joins replica k's waiting list, k's pass made
 * due if it can take it now. */
static void wait_at(inf_service *s, uint32_t k, uint32_t i, const request *q) {
  replica *r = &s->rep[k];
  /* A folded prefill's end before now is processed first (it changes no
   * routing load): the pass below needs r's phase now. */
  bool stale = folded(r);
  if (stale)
    advance(s, r, q->arrival_s);
  bool was_empty = r->waiting.n == 0;
  inf__list_push(s->pool, &r->waiting, i);
  inf__load_changed(s, k);
  if (was_empty && r->phase != PREFILL && !r->pass_due && fits(s, r, q)) {
    r->pass_due = true;
    s->due[s->ndue++] = k;
  }
  if (stale && !r->pass_due) /* a waiting request unfolds the end */
    reschedule(s, r);
}

/* A request arrives: rejected if it can never fit or its replica's queue
 * is full, else queued at the lightest replica (wait_at). */
static void accept(inf_service *s, int64_t prompt, int64_t output) {
  s->tot.arrived++;
  s->iv.arrivals++;
  /* A request yields at least its first token, made by the prefill. */
  request q = {.arrival_s = now_s(s),
               .prompt = (double)(prompt < 0 ? 0 : prompt),
               .output = (double)(output < 1 ? 1 : output)};
  inf__prompt_assign(s, &q);
  /* One that could never finish, its beams' outputs whole in the cache. */
  if (rl_kv_tokens(&s->proto, q.prompt, q.output) > s->kv_cap) {
    inf__count_rejected(s);
    return;
  }
  uint32_t k = (uint32_t)inf__route_min(&s->route);
  replica *r = &s->rep[k];
  if (r->down) { /* the lightest is down: all are */
    s->tot.dropped++;
    return;
  }
  if (queue_full(s, r)) {
    inf__count_rejected(s);
    return;
  }
  uint32_t i = inf__pool_take(s);
  if (i == NONE) {
    inf__count_rejected(s);
    fail(s, SIM_ENOMEM);
    return;
  }
  /* Field by field: a copy's 16-byte loads waited on q's narrower stores */
  s->pool[i] = (request){.arrival_s = q.arrival_s,
                         .prompt = q.prompt,
                         .output = q.output,
                         .prompt_id = q.prompt_id,
                         .shared = q.shared};
  wait_at(s, k, i, &s->pool[i]);
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

/* The replicas at 64-byte lines (one more allocated than held): each is
 * four lines (inference_internal.h), where the allocator's 16-byte
 * alignment spread the 280 bytes they were on five or six. */
static int alloc_replicas(inf_service *s) {
  s->rep_mem = sim_calloc(s->alloc, (size_t)s->nrep + 1, sizeof *s->rep);
  s->due = sim_calloc(s->alloc, s->nrep, sizeof *s->due);
  if (s->rep_mem == NULL || s->due == NULL)
    return SIM_ENOMEM;
  s->rep = sim_align_up(s->rep_mem, 64);
  if (inf__route_init(s->alloc, &s->route, s->nrep) != SIM_OK)
    return SIM_ENOMEM;
  for (uint32_t k = 0; k < s->nrep; k++) {
    replica *r = &s->rep[k];
    inf__rep_set_phi(r, 1);
    r->next_s = r->ev_s = INFINITY;
    r->clock_s = r->act_since = now_s(s);
  }
  return SIM_OK;
}

static int start(inf_service *s, sim_error *err) {
  int rc = sim_engine_register(s->e, "inference replica", on_replica, s,
                               &s->replica_kind);
  if (rc == SIM_OK) /* its next change moves with the clock (sim_engine_move) */
    rc = sim_engine_movable(s->e, s->replica_kind);
  if (rc == SIM_OK)
    rc = sim_engine_register(s->e, "inference arrival", on_arrival, s,
                             &s->arrival_kind);
  if (rc == SIM_OK)
    rc = sim_engine_source(s->e, s->arrival_kind, &s->arrival_source);
  if (rc == SIM_OK)
    rc = schedule_arrival(s);
  if (rc != SIM_OK)
    return sim_error_set(err, rc, "service %s: cannot start: %s", s->c->name,
                         sim_strerror(rc));
  return SIM_OK;
}

/* The request granularity's state: the replicas and the events. */
static int req_start(inf_service *s, sim_error *err) {
  inf__hist_init(&s->ttft_h);
  inf__hist_init(&s->tpot_h);
  if (alloc_replicas(s) != SIM_OK)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  return start(s, err);
}

/* ------------------------------------------------------------------ */
/* The operations of inference.h                                       */
/* ------------------------------------------------------------------ */

static int req_set_clock(inf_service *s, uint32_t k, double phi) {
  if (k >= s->nrep || !(phi > 0 && phi <= 1))
    return SIM_EINVAL;
  replica *r = &s->rep[k];
  if (phi == inf__rep_phi(r))
    return SIM_OK; /* the same clock: nothing to re-evaluate */
  advance(s, r, now_s(s));
  inf__rep_set_phi(r, phi);
  if (r->phase == PREFILL)
    inf__price_prefill(s, r);
  else if (r->phase == DECODE)
    inf__price_decode(s, r);
  reschedule(s, r);
  return s->rc;
}

/* The policy sets every replica's clock each period, most to the one they
 * have: those cost a comparison here, not a call. */
static int req_set_clocks(inf_service *s, uint32_t k0, uint32_t n,
                          const double *phi) {
  int rc = SIM_OK;
  for (uint32_t i = 0, k = k0; i < n; i++, k++) {
    int r = k < s->nrep && phi[i] == inf__rep_phi(&s->rep[k])
                ? SIM_OK
                : req_set_clock(s, k, phi[i]);
    rc = rc != SIM_OK ? rc : r;
  }
  return rc;
}

static int req_set_down(inf_service *s, uint32_t k, bool down) {
  if (k >= s->nrep)
    return SIM_EINVAL;
  replica *r = &s->rep[k];
  if (r->down == down)
    return SIM_OK;
  advance(s, r, now_s(s)); /* what finished before now is done */
  if (down)
    inf__replica_drop(s, r);
  r->down = down;
  inf__load_changed(s, k);
  reschedule(s, r);
  return s->rc;
}

/* r's mean load since it was last taken, r brought up to date. */
static inline gpu_load take_mean(replica *r) {
  double span = r->clock_s - r->act_since;
  gpu_load l = span > 0 ? gpu_load_scale(r->act_int, 1 / span) : r->load;
  r->comp_mean = span > 0 ? r->comp_int / span : r->compute;
  r->act_int = (gpu_load){0, 0, 0};
  r->comp_int = 0;
  r->act_since = r->clock_s;
  return l;
}

/* Replica k's mean load since it was last taken, brought to now, t. */
static gpu_load take_load(inf_service *s, uint32_t k, double t) {
  if (k >= s->nrep)
    return (gpu_load){NAN, NAN, NAN};
  catch_up(s, &s->rep[k], t);
  return take_mean(&s->rep[k]);
}

static gpu_load req_take_load(inf_service *s, uint32_t k) {
  return take_load(s, k, now_s(s));
}

/* Replicas with no change due in line: catch_up's and take_load's
 * steps, no calls. */
static void req_take_loads(inf_service *s, uint32_t k0, uint32_t n,
                           gpu_load *out) {
  double t = now_s(s);
  for (uint32_t i = 0, k = k0; i < n; i++, k++) {
    bool quiet = k < s->nrep && quiet_to(s, &s->rep[k], t);
    out[i] = quiet ? take_mean(&s->rep[k]) : take_load(s, k, t);
  }
}

static double ratio(double num, double den) {
  return den > 0 ? num / den : NAN;
}

static void req_sample(inf_service *s, double dt, double *row) {
  uint64_t waiting = 0;
  double now = now_s(s);
  for (uint32_t k = 0; k < s->nrep; k++) {
    catch_up(s, &s->rep[k], now);
    expire(s, &s->rep[k], now);
    waiting += s->rep[k].waiting.n;
  }
  interval *iv = &s->iv;
  row[INF_REQUESTS_PER_S] = ratio((double)iv->completed, dt);
  row[INF_ARRIVALS_PER_S] = ratio((double)iv->arrivals, dt);
  row[INF_TOKENS_PER_S] = ratio(iv->tokens, dt);
  row[INF_QUEUE] = (double)waiting;
  row[INF_BATCH] = ratio(iv->batch_s, dt * s->nrep);
  inf__quantiles(iv->ttft, iv->n, &row[INF_TTFT_P50], &row[INF_TTFT_P99]);
  inf__quantiles(iv->tpot, iv->n, &row[INF_TPOT_P50], &row[INF_TPOT_P99]);
  row[INF_SLO] = ratio((double)iv->slo_met,
                       (double)(iv->completed + iv->rejected + iv->timed_out));
  row[INF_TOKENS_PER_J] = ratio(iv->tokens, iv->energy_j);
  row[INF_POWER_W] = ratio(iv->energy_j, dt);
  *iv = (interval){.ttft = iv->ttft, .tpot = iv->tpot, .cap = iv->cap};
}

const inf_ops inf__request_ops = {
    .start = req_start,
    .free = inf__req_free,
    .set_clock = req_set_clock,
    .set_down = req_set_down,
    .down = inf__req_down,
    .take_load = req_take_load,
    .set_clocks = req_set_clocks,
    .take_loads = req_take_loads,
    .compute_share = inf__req_compute_share,
    .compute_shares = inf__req_compute_shares,
    .sample = req_sample,
    .totals = inf__req_totals,
    .quantile = inf__req_quantile,
};
