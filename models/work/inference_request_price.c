/* inference_request_price.c - a request-level replica's prices
 * (inference_request_price.h): the joiners' prefill and the decode step at
 * the replica's clock, from roofline.h's terms, kept between the changes
 * of the clock and of the batch's size; the tokens made at those prices
 * since the replica's clock, and the operations that only read a
 * replica's state (the totals, the compute shares, whether it is down). */
#include "inference_request_price.h"

#include <math.h>

#include "vec.h"

/* c, the proto's step terms at phi, worked out again only when phi is
 * not the one they were for (a zeroed c is for none: phi > 0). */
static const rl_clock *clock_at(const inf_service *s, rl_clock *c, double phi) {
  if (c->key != phi)
    rl_clock_of(&s->proto, phi, c);
  return c;
}

const rl_clock *inf__rep_clock(const inf_service *s, replica *r) {
  if (r->clk.phi == 0)
    rl_clock_of(&s->proto, r->clk.key, &r->clk);
  return &r->clk;
}

/* The joiners' prefill at the replica's clock: its length and its
 * time-weighted load, from the service's prefill terms (kept). */
void inf__price_prefill(inf_service *s, replica *r) {
  double t = 0;
  gpu_load busy = {0, 0, 0};
  const rl_clock *at = inf__rep_clock(s, r);
  const rl_clock *full = clock_at(s, &s->full_clk, 1);
  if (!s->pre.ready)
    rl_prefill_terms_of(&s->proto, &s->pre);
  for (uint32_t i = r->prefill.head, n = 0; n < r->prefill.n;
       i = s->pool[i].next, n++) {
    if (s->pool[i].shared)
      continue; /* its prompt's KV is there: no prefill */
    double ti;
    gpu_load li;
    rl_prefill_kept(&s->proto, &s->pre, s->pool[i].prompt, at, full, &ti, &li);
    t += ti;
    busy = gpu_load_axpy(busy, ti, li);
  }
  r->pre_s = t;
  /* prefill is compute-bound */
  inf__rep_set_load(
      r, t > 0 ? gpu_load_scale(busy, 1 / t) : (gpu_load){0, 0, 0}, 1);
  r->next_s = r->clock_s + r->pre_left * t;
}

/* batch_at's entry for b worked out (the table grown to hold it): out of
 * line, for a lookup's few instructions in line. When the table cannot
 * grow, the run fails (SIM_ENOMEM, reported by the next handler) and
 * this price is worked out in spare. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((noinline))
#endif
static const rl_batch_full *
batch_fill(inf_service *s, double b, rl_batch_full *spare) {
  size_t k = (size_t)b, cap = s->nbt;
  const rl_clock *full = clock_at(s, &s->full_clk, 1);
  if (k >= cap) {
    if (sim_vec_reserve(s->alloc, &s->bt, &cap, k + 1, sizeof *s->bt) !=
        SIM_OK) {
      s->rc = s->rc != SIM_OK ? s->rc : SIM_ENOMEM;
      rl_batch_full_of(&s->proto, b, full, spare);
      return spare;
    }
    for (size_t i = s->nbt; i < cap; i++)
      s->bt[i].b.key = 0; /* none yet: b > 0 */
    s->nbt = cap;
  }
  rl_batch_full_of(&s->proto, b, full, &s->bt[k]);
  return &s->bt[k];
}

/* The table's terms for b requests (whole, >= 1: a batch's size),
 * worked out the first time b is asked for (batch_fill, which works out
 * s->full_clk first); they depend on the service alone. */
static inline const rl_batch_full *batch_at(inf_service *s, double b,
                                            rl_batch_full *spare) {
  size_t k = (size_t)b;
  if (k < s->nbt && s->bt[k].b.key == b)
    return &s->bt[k];
  return batch_fill(s, b, spare);
}

/* The decode step at the batch's mean context now; the clock's terms are
 * the same between the replica's clock changes, the batch's for the
 * service's life (batch_at). */
void inf__price_decode(inf_service *s, replica *r) {
  rl_price p;
  rl_batch_full spare;
  double b = r->nheap;
  rl_decode_price(batch_at(s, b, &spare), r->ctx_base / b + r->v,
                  inf__rep_clock(s, r), &s->full_clk, &p);
  r->t_step = p.t;
  inf__rep_set_load(r, p.load, p.t_comp >= p.t_mem ? p.t_comp / p.t : 0);
  double tag = r->heap[0].tag;
  r->next_s = r->clock_s + (tag - r->v) * r->t_step;
}

/* The decoding batch once r's prefill has ended, its joiners in it: its
 * size b, its sum ctx (ctx_base's) and its smallest tag, by end_prefill's
 * sums in end_prefill's order, so to the bit. False when that end is seen
 * beyond the replica, by routing or a count: a request waits (to be
 * taken at that end, or to give up), or a joiner leaves at once (its
 * client gave up, or its first token is its whole output). */
static bool joined(const inf_service *s, const replica *r, double *b,
                   double *ctx, double *tag) {
  if (r->waiting.n > 0)
    return false;
  *b = r->nheap;
  *ctx = r->ctx_base;
  *tag = r->nheap > 0 ? r->heap[0].tag : INFINITY;
  for (uint32_t i = r->prefill.head, n = 0; n < r->prefill.n;
       i = s->pool[i].next, n++) {
    const request *q = &s->pool[i];
    if (q->output <= 1 || inf__gave_up(s, q, r->next_s))
      return false;
    double qt = r->v + q->output - 1;
    *tag = qt < *tag ? qt : *tag;
    *ctx += q->prompt + 1 - r->v;
    *b += 1;
  }
  return true;
}

double inf__after_prefill(inf_service *s, replica *r) {
  double b, ctx, tag;
  rl_batch_full spare;
  if (!joined(s, r, &b, &ctx, &tag))
    return r->next_s;
  const rl_clock *at = inf__rep_clock(s, r);
  double t = rl_decode_price_s(batch_at(s, b, &spare), ctx / b + r->v, at,
                               &s->full_clk);
  return r->next_s + (tag - r->v) * t;
}

/* What r, prefilling with its end (next_s) folded and at or before now,
 * has counted since, as advance would count it: in *prompts its joiners'
 * prompts prefilled, in the return its joiners' first tokens and the
 * decode's steps after (a decoding replica's count below). 0 and 0
 * before that end. */
static double tokens_after_prefill(const inf_service *s, const replica *r,
                                   double now, double *prompts) {
  double b, ctx, tag;
  *prompts = 0;
  if (!(now >= r->next_s) || !joined(s, r, &b, &ctx, &tag))
    return 0;
  for (uint32_t i = r->prefill.head, n = 0; n < r->prefill.n;
       i = s->pool[i].next, n++)
    *prompts += s->pool[i].shared ? 0 : s->pool[i].prompt;
  /* price_decode's step at that end, its time alone */
  rl_batch bat;
  rl_clock at = {.key = 0};
  rl_batch_of(&s->proto, b, &bat);
  double t = rl_decode_step_batch_s(&bat, ctx / b + r->v,
                                    clock_at(s, &at, inf__rep_phi(r)));
  double end = r->next_s + (tag - r->v) * t;
  return r->prefill.n + b * (rl_fmin(now, end) - r->next_s) / t;
}

double inf__tokens_since_clock(const inf_service *s, const replica *r,
                               double now, double *prompts) {
  *prompts = 0;
  if (r->phase == PREFILL && r->ev_s > r->next_s) /* folded (advance) */
    return tokens_after_prefill(s, r, now, prompts);
  if (r->phase != DECODE || !(now > r->clock_s))
    return 0;
  return r->nheap * (rl_fmin(now, r->next_s) - r->clock_s) / r->t_step;
}

/* ------------------------------------------------------------------ */
/* The request level's operations that only read (inf__request_ops)    */
/* ------------------------------------------------------------------ */

bool inf__req_down(const inf_service *s, uint32_t k) {
  return k < s->nrep && s->rep[k].down;
}

inf_totals inf__req_totals(const inf_service *s) {
  inf_totals t = s->tot;
  double now = sim_time_to_s(sim_engine_now(s->e));
  for (uint32_t k = 0; k < s->nrep; k++) {
    const replica *r = &s->rep[k];
    t.waiting += r->waiting.n;
    t.in_batch += in_batch(r);
    double prompts;
    t.tokens_generated += inf__tokens_since_clock(s, r, now, &prompts);
    t.prompt_tokens += prompts;
  }
  return t;
}

double inf__req_compute_share(const inf_service *s, uint32_t r) {
  return r < s->nrep ? s->rep[r].comp_mean : 0;
}

/* inf__req_compute_share of replicas k0 .. k0 + n - 1 in one loop: the
 * factory reads every replica's each period. */
void inf__req_compute_shares(const inf_service *s, uint32_t k0, uint32_t n,
                             double *out) {
  for (uint32_t i = 0, k = k0; i < n; i++, k++)
    out[i] = k < s->nrep ? s->rep[k].comp_mean : 0;
}
