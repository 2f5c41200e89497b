/* inference_fluid_solve.c - one replica of a fluid service over one
 * span, in closed form (inference_fluid.c describes the method): the
 * prefill's moments from the prompt's, the decode steps by batch size,
 * the stationary chain of the decoding requests, the stationary and
 * saturated stretches of the span with their TTFT and TPOT points, and
 * the backlog. */
#include "inference_fluid_internal.h"

#include "bits.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "vec.h"

/* Probability bins of the prompt nodes: equal ones to the 96th
 * percentile, finer ones in the tail where a p99 lives. */
static const double node_edge[NODES + 1] = {0,   .12, .24, .36, .48,  .60, .72,
                                            .84, .96, .98, .99, .995, 1};
static const double wait_edge[WAITS + 1] = {0, .5, .9, .99, 1};

/* ------------------------------------------------------------------ */
/* Lengths                                                             */
/* ------------------------------------------------------------------ */

lengths inf__fit(double mean, double sq) {
  double s2 = log(fmax(1, sq / (mean * mean)));
  return (lengths){mean, sq, log(mean) - 0.5 * s2, sqrt(s2)};
}

void inf__fit_to(lengths *l, double mean, double sq) {
  if (!(sim_same_bits(l->mean, mean) && sim_same_bits(l->sq, sq)))
    *l = inf__fit(mean, sq);
}

/* E[n^k] of the fitted lognormal. */
static double moment(const lengths *l, int k) {
  return exp(k * l->mu + 0.5 * k * k * l->sigma * l->sigma);
}

static double quantile_of(const lengths *l, double u) {
  return l->sigma > 0 ? exp(l->mu + l->sigma * gsl_cdf_ugaussian_Pinv(u))
                      : l->mean;
}

static double cdf_of(const lengths *l, double x) {
  if (!(x > 0))
    return 0;
  return l->sigma > 0 ? gsl_cdf_ugaussian_P((log(x) - l->mu) / l->sigma)
                      : (x >= l->mean);
}
void inf__fluid_waits(double wait_ln[WAITS]) {
  for (int j = 0; j < WAITS; j++)
    wait_ln[j] = log1p(-0.5 * (wait_edge[j] + wait_edge[j + 1]));
}

void inf__fluid_nodes(const lengths *prompt, double node_n[NODES]) {
  for (int i = 0; i < NODES; i++)
    node_n[i] = quantile_of(prompt, 0.5 * (node_edge[i] + node_edge[i + 1]));
}

/* ------------------------------------------------------------------ */
/* A replica's prefill                                                 */
/* ------------------------------------------------------------------ */

/* The prefill at clock phi. S(n) and its loaded parts S(n) L(n) are
 * quadratics in n (FLOPs 2 N n + 2 L d n^2, all-reduces affine in n, the
 * weights read once), read off at three lengths far enough apart to be
 * well conditioned. */
static double quad_mean(double f0, double f1, double f2, double a,
                        const lengths *n) {
  double c2 = (f2 - 2 * f1 + f0) / (2 * a * a), c1 = (f1 - f0) / a - c2 * a;
  return f0 + c1 * n->mean + c2 * n->sq;
}

/* A prefill of n tokens at the step table's clock (table_for made it
 * the solve's): its time S(n) (rl_prefill_s's bits) and its loaded parts
 * S(n) L(n) (rl_prefill_load's load scaled), from one rl_prefill_at with
 * the clocks' terms kept: each length was priced twice, and every call
 * worked the clock's rates out again. */
static double prefill_at(const inf_service *s, double n, gpu_load *busy) {
  double t;
  gpu_load load;
  rl_prefill_at(&s->proto, n, &s->fluid->tab_at, &s->fluid->full, &t, &load);
  *busy = gpu_load_scale(load, t);
  return t;
}

/* The prefill at the step table's clock (the solve's phi). */
static void price_prefill(const inf_service *s, const span_load *l,
                          prefill *p) {
  const double a = 1024;
  gpu_load b0, b1, b2;
  double f0 = prefill_at(s, 0, &b0), f1 = prefill_at(s, a, &b1),
         f2 = prefill_at(s, 2 * a, &b2);
  p->s0 = f0;
  p->s2 = (f2 - 2 * f1 + f0) / (2 * a * a);
  p->s1 = (f1 - f0) / a - p->s2 * a;
  const lengths *n = &l->prompt;
  double m1 = n->mean, m2 = n->sq, m3 = moment(n, 3), m4 = moment(n, 4);
  p->mean = p->s0 + p->s1 * m1 + p->s2 * m2;
  p->sq = p->s0 * p->s0 + 2 * p->s0 * p->s1 * m1 +
          (p->s1 * p->s1 + 2 * p->s0 * p->s2) * m2 + 2 * p->s1 * p->s2 * m3 +
          p->s2 * p->s2 * m4;
  gpu_load sum = {quad_mean(b0.sm, b1.sm, b2.sm, a, n),
                  quad_mean(b0.mem, b1.mem, b2.mem, a, n),
                  quad_mean(b0.busy, b1.busy, b2.busy, a, n)};
  p->load =
      p->mean > 0 ? gpu_load_scale(sum, 1 / p->mean) : (gpu_load){1, 0, 1};
  p->load.sm = fmin(1, p->load.sm);
  p->load.busy = fmin(1, p->load.busy);
  for (int i = 0; i < NODES; i++) {
    double x = l->node_n[i];
    p->node[i] = p->s0 + p->s1 * x + p->s2 * x * x;
  }
}

/* P(S <= y): S is increasing in n, so it is the prompt's CDF at the n
 * whose prefill takes y. */
static double prefill_cdf(const prefill *p, const lengths *n, double y) {
  if (y < p->s0)
    return 0;
  double x = p->s2 > 0
                 ? (-p->s1 + sqrt(p->s1 * p->s1 + 4 * p->s2 * (y - p->s0))) /
                       (2 * p->s2)
                 : (y - p->s0) / p->s1;
  return cdf_of(n, x);
}

/* ------------------------------------------------------------------ */
/* Decode steps by batch size                                          */
/* ------------------------------------------------------------------ */

/* Keeps the step table for clock phi and context ctx with rows 0 ..
 * bcap; SIM_OK or SIM_ENOMEM. */
static int table_for(inf_service *s, double phi, double ctx, uint32_t bcap) {
  inf_fluid *f = s->fluid;
  size_t want = (size_t)bcap + 2, had = f->tok_cap, had_tab = f->tab_cap;
  if (sim_vec_reserve(s->alloc, &f->tab, &f->tab_cap, want, sizeof *f->tab) !=
          SIM_OK ||
      sim_vec_reserve(s->alloc, &f->tok_b, &f->tok_cap, want,
                      sizeof *f->tok_b) != SIM_OK)
    return SIM_ENOMEM;
  if (f->tok_cap != had) { /* grown: all of it unknown */
    f->tok_lo = 0;
    f->tok_hi = f->tok_cap;
  }
  for (size_t b = had_tab; b < f->tab_cap; b++) { /* grown: unknown */
    f->tab[b].gen = 0;
    f->tab[b].bat.key = NAN;
    f->tab[b].act_ctx = NAN;
    f->tab[b].bnd_ctx = NAN;
  }
  /* A new clock or context makes every row unknown at once, by a new
   * generation (the clock is new every span: clearing the rows cost a
   * store a row). Rows are priced below the table's want only, so any
   * past it, whatever it grows to, are of an older generation. */
  if (!(phi == f->tab_phi && ctx == f->tab_ctx)) {
    f->tab_gen++;
    rl_clock_of(&s->proto, phi, &f->tab_at);
  }
  if (f->full.key != 1) {
    rl_clock_of(&s->proto, 1, &f->full);
    rl_clock_of(&s->proto, 0, &f->slow); /* clamped to the slowest */
  }
  f->ctx_steady = ctx == f->tab_ctx;
  f->tab_phi = phi;
  f->tab_ctx = ctx;
  return SIM_OK;
}

/* Keeps frac[i] = (double)i / rr, i = 0 .. rr, for the chain's sums,
 * and after them frac[rr + 1 + i] = frac[rr - i] (the chain's wide path
 * reads row k's shares four states a load by ascending j); SIM_OK or
 * SIM_ENOMEM. */
static int frac_for(inf_service *s, uint32_t rr) {
  inf_fluid *f = s->fluid;
  if (f->frac_rr == rr && f->frac != NULL)
    return SIM_OK;
  size_t n = (size_t)rr + 1;
  if (sim_vec_reserve(s->alloc, &f->frac, &f->frac_cap, 2 * n,
                      sizeof *f->frac) != SIM_OK)
    return SIM_ENOMEM;
  for (uint32_t i = 0; i <= rr; i++)
    f->frac[i] = (double)i / rr;
  for (uint32_t i = 0; i <= rr; i++)
    f->frac[n + i] = f->frac[rr - i];
  f->frac_rr = rr;
  return SIM_OK;
}

/* Prices row b of the step table (kept unknown until first asked for) at
 * the table's clock, its load the full clock's: rl_decode_step's bits,
 * from the batch's terms kept in the row (they are the same at every
 * clock and context) and the clocks' made once a generation. Only the
 * clock moves from one span to the next, and the load is the full
 * clock's whatever the clock, so it is kept with the context it is for
 * and a row at a new clock prices its parts at that clock only
 * (rl_decode_step_batch priced them twice, at the clock and at full). */
const step_row *inf__price_step(inf_service *s, uint32_t b) {
  inf_fluid *f = s->fluid;
  step_row *row = &f->tab[b];
  if (!(row->bat.key == b))
    rl_batch_of(&s->proto, b, &row->bat);
  rl_step st;
  if (row->act_ctx == f->tab_ctx) {
    rl_decode_step_batch_parts(&row->bat, f->tab_ctx, &f->tab_at, &st);
  } else {
    rl_decode_step_batch(&s->proto, &row->bat, f->tab_ctx, &f->tab_at,
                         &f->full, &st);
    row->act = st.load;
    row->act_ctx = f->tab_ctx;
  }
  row->t = st.t;
  row->comp = st.t_comp >= st.t_mem ? st.t_comp / st.t : 0;
  row->g = b / st.t;
  row->gen = f->tab_gen;
  /* The bounds hold (their doubles within the margin), or the search
   * that reads them (mean_batch) could go another way. */
  assert(!(row->bnd_ctx == f->tab_ctx) ||
         (!(row->g > row->g_hi * (1 + INF_BOUND_EPS)) &&
          !(row->g < row->g_lo * (1 - INF_BOUND_EPS))));
  return row;
}

/* The batch a replica can hold: max_batch, or fewer when the KV cache
 * at the members' mean admission is the limit. */
static uint32_t batch_cap(const inf_service *s, const span_load *l) {
  double per = rl_kv_tokens(&s->proto, l->prompt.mean,
                            s->proto.cfg.kv_reserve * l->held);
  double kv = floor(s->kv_cap / fmax(per, 1));
  double cap = fmin((double)s->c->max_batch, kv);
  return cap < 1 ? 1 : (uint32_t)fmin(cap, 1e7);
}

/* ------------------------------------------------------------------ */
/* A replica's stretches: stationary and saturated                     */
/* ------------------------------------------------------------------ */

/* The chain's load: its (sm, mem) and busy sums. */
static gpu_load chain_act(const chain *c) {
  return (gpu_load){c->am[0], c->am[1], c->bc[0]};
}

/* TPOT points at the node levels of the token-weighted batch sizes. */
static void tpot_points(inf_service *s, uint32_t bcap, double total,
                        double stretch, part *pt) {
  const double *w = s->fluid->tok_b;
  double seen = 0;
  uint32_t b = 0;
  pt->ntpot = 0;
  for (int i = 0; i < NODES && total > 0; i++) {
    double level = 0.5 * (node_edge[i] + node_edge[i + 1]) * total;
    while (b < bcap && seen + w[b] < level)
      seen += w[b++];
    if (b == 0)
      continue;
    pt->tpot_v[pt->ntpot] = inf__step_at(s, b)->t * stretch;
    pt->tpot_w[pt->ntpot++] = node_edge[i + 1] - node_edge[i];
  }
}

/* P(shift + wait + S <= y) by the prompt distribution, the wait's
 * exponential part by quadrature over the prompt nodes. */
static double ttft_within(const prefill *pre, const span_load *l,
                          const part *pt, double y) {
  y -= pt->shift;
  double p = prefill_cdf(pre, &l->prompt, y);
  if (pt->p_wait > 0 && pt->wait_mean > 0) {
    double e = 0;
    for (int i = 0; i < NODES; i++)
      if (pre->node[i] <= y)
        e += (node_edge[i + 1] - node_edge[i]) *
             exp(-(y - pre->node[i]) / pt->wait_mean);
    p -= pt->p_wait * e;
  }
  return fmin(1, fmax(0, p));
}

/* The share of served requests within both SLOs. */
static void slo_share(const inf_service *s, const prefill *pre,
                      const span_load *l, double tpot_ok, part *pt) {
  double t = ttft_within(pre, l, pt, s->c->ttft_slo_s);
  pt->p_slo = t * (l->p_one + (1 - l->p_one) * tpot_ok);
}

/* Waiting behind a prefill: a replica prefills a share rp of the
 * time, and an arrival routed to one that is prefilling waits for it to
 * end (mean of the Pollaczek-Khinchine wait, lambda E[S^2] / 2(1 - rp),
 * over rp). With several replicas, least-loaded routing spares arrivals
 * the idle replicas' share (1 - busy) entirely, and about half of the
 * rest: a replica that prefills has just been given a request, so it is
 * above the lightest about half the time. The half is empirical: the
 * request model's mean TTFT at 8 replicas and 1.4 and 6 requests a
 * replica (tests/factory/test_inference_fluid.c) shows it, where plain
 * M/G/1 per replica gives twice the wait and Erlang C for R prefill
 * servers (perfect avoidance) almost none. At one replica it is M/G/1. */
static void prefill_wait(const prefill *pre, double lam, double busy,
                         uint32_t rr, double *p_wait, double *mean) {
  double rp = lam * pre->mean;
  *p_wait = rp * busy * (rr > 1 ? 0.5 : 1);
  *mean = rp > 0 ? lam * pre->sq / (2 * (1 - rp)) / rp : 0;
}

/* A part's figures all 0 and no TPOT points, field by field: the
 * compound literal that did it also zeroed the 24 point slots (a 312-byte
 * rep stos, slow to start on AMD's cores, twice a solve), which are read
 * only below ntpot. */
_Static_assert(offsetof(part, tpot_v) == 14 * sizeof(double),
               "part_clear clears each figure before the points");
static void part_clear(part *pt) {
  pt->load = (gpu_load){0, 0, 0};
  pt->compute = pt->batch = pt->waiting = 0;
  pt->ttft_mean = pt->tpot_mean = pt->p_slo = 0;
  pt->lost = pt->shed = 0;
  pt->shift = pt->p_wait = pt->wait_mean = 0;
  pt->ntpot = 0;
}

/* The stationary stretch at lam requests/s per replica (below mu). */
static void stationary(inf_service *s, const span_load *l, const prefill *pre,
                       uint32_t bcap, double mu, double lam, part *pt) {
  part_clear(pt);
  if (!(lam > 0))
    return;
  double rp = lam * pre->mean, free = 1 - rp;
  double rho = lam * l->work / free;
  chain c = {0};
  double lim = s->c->tpot_slo_s * free;
  if (rho > 0)
    inf__sum_chain(s, rho, l->nup, bcap, lim, &c);
  else
    c.z = c.busy = 1; /* one-token outputs only: prefills, no batch */
  pt->load =
      gpu_load_axpy(gpu_load_scale(pre->load, rp), free / c.z, chain_act(&c));
  pt->compute = rp + free * c.bc[1] / c.z;
  pt->batch = c.members / c.z + rp;
  pt->waiting = c.waiting / c.z;
  double step = c.tokens > 0 ? c.members / c.tokens : inf__step_at(s, 1)->t;
  pt->tpot_mean = step / free;
  /* Waits: for room in a full batch, or behind a prefill. Room comes
   * with departures from R full batches: M/M/c's mean wait 1 / (R (mu -
   * lambda)) scaled by the Allen-Cunneen factor (1 + cv^2) / 2 of the
   * time a request holds its place (its decode, as long as its output). */
  double p_full = c.full / c.z;
  double mq = 0.5 * (1 + l->work_cv2) / (l->nup * (mu - lam));
  double p_pre, mp;
  prefill_wait(pre, lam, c.busy / c.z, l->nup, &p_pre, &mp);
  pt->p_wait = 1 - (1 - p_full) * (1 - p_pre);
  double wait = p_full * mq + (1 - p_full) * p_pre * mp;
  pt->wait_mean = pt->p_wait > 0 ? wait / pt->p_wait : 0;
  pt->ttft_mean = pre->mean + wait;
  pt->lost = s->c->timeout_s > 0 ? p_full * exp(-s->c->timeout_s / mq) : 0;
  pt->shed = c.block / c.z;
  slo_share(s, pre, l, c.tokens > 0 ? c.tpot_ok / c.tokens : 1, pt);
  tpot_points(s, bcap, c.tokens, 1 / free, pt);
}

/* The saturated stretch: every batch full, served at mu, each request
 * having waited shift first. */
static void saturated(inf_service *s, const span_load *l, const prefill *pre,
                      uint32_t bcap, double mu, double shift, part *pt) {
  part_clear(pt);
  const step_row *row = inf__step_at(s, bcap);
  double rp = fmin(1, mu * pre->mean), free = 1 - rp;
  pt->load = gpu_load_axpy(gpu_load_scale(pre->load, rp), free, row->act);
  pt->compute = rp + free * row->comp;
  pt->batch = bcap + rp;
  pt->tpot_mean = free > 0 ? row->t / free : INFINITY;
  pt->shift = shift;
  pt->ttft_mean = shift + pre->mean;
  slo_share(s, pre, l, pt->tpot_mean <= s->c->tpot_slo_s, pt);
  pt->tpot_v[0] = pt->tpot_mean;
  pt->tpot_w[0] = 1;
  pt->ntpot = 1;
}

/* ------------------------------------------------------------------ */
/* One replica over one span                                           */
/* ------------------------------------------------------------------ */

/* TTFT points of a stretch: prompt nodes, each with no wait or at the
 * wait's nodes, weighted by the requests served in it. */
static void add_points(outcome *o, const prefill *pre, const part *pt,
                       const double *wait_ln, double served) {
  for (int i = 0; i < NODES; i++) {
    double w = served * (node_edge[i + 1] - node_edge[i]);
    double x = pt->shift + pre->node[i];
    o->ttft_v[o->nttft] = x;
    o->ttft_w[o->nttft++] = w * (1 - pt->p_wait);
    for (int j = 0; j < WAITS && pt->p_wait > 1e-9; j++) {
      o->ttft_v[o->nttft] = x - pt->wait_mean * wait_ln[j];
      o->ttft_w[o->nttft++] =
          w * pt->p_wait * (wait_edge[j + 1] - wait_edge[j]);
    }
  }
  for (size_t k = 0; k < pt->ntpot; k++) {
    o->tpot_v[o->ntpot] = pt->tpot_v[k];
    o->tpot_w[o->ntpot++] = served * pt->tpot_w[k];
  }
}

/* Adds a stretch of share `share` of the span, serving `served`. */
static void add_part(const inf_service *s, outcome *o, const span_load *l,
                     const prefill *pre, const part *pt, double share,
                     double served) {
  o->load = gpu_load_axpy(o->load, share, pt->load);
  o->compute += share * pt->compute;
  o->batch += share * pt->batch;
  o->served += served;
  o->slo_met += served * pt->p_slo;
  o->ttft_sum += served * pt->ttft_mean;
  o->tpot_sum += served * (1 - l->p_one) * pt->tpot_mean;
  o->tokens += served * (l->work + 1);
  o->prompt_tokens += served * l->prompt.mean;
  add_points(o, pre, pt, s->fluid->wait_ln, served);
}

/* The backlog over the span: how long it stays (sat, a share of the
 * span), where it ends and what it loses to timeouts and max_queue. */
static double run_backlog(const inf_service *s, const span_load *l, double mu,
                          double q0, outcome *o) {
  double lam = l->rate, dt = l->dt, sat = 0;
  double q1 = q0 + (lam - mu) * dt;
  if (lam >= mu)
    sat = 1;
  else if (q0 > 0)
    sat = fmin(1, q0 / ((mu - lam) * dt));
  q1 = fmax(0, q1);
  double by_age = s->c->timeout_s > 0 ? mu * s->c->timeout_s : INFINITY;
  double by_size = s->c->max_queue > 0 ? (double)s->c->max_queue : INFINITY;
  if (q1 > by_size) {
    o->shed += q1 - by_size;
    q1 = by_size;
  }
  if (q1 > by_age) {
    o->timed_out += q1 - by_age;
    q1 = by_age;
  }
  o->backlog = q1;
  return sat;
}
/* An outcome's figures all 0 and no points, field by field (as
 * part_clear: a memset of them was a rep stos, slow to start). */
_Static_assert(offsetof(outcome, ttft_v) ==
                   16 * sizeof(double) + 2 * sizeof(size_t),
               "outcome_clear clears each figure before the points");
static void outcome_clear(outcome *o) {
  o->load = (gpu_load){0, 0, 0};
  o->compute = o->batch = 0;
  o->waiting = o->in_batch = o->backlog = 0;
  o->served = o->timed_out = o->shed = 0;
  o->slo_met = o->ttft_sum = o->tpot_sum = o->tokens = o->prompt_tokens = 0;
  o->nttft = o->ntpot = 0;
}

int inf__fluid_solve(inf_service *s, const span_load *l, double phi, double q0,
                     outcome *o) {
  outcome_clear(o);
  uint32_t bcap = batch_cap(s, l);
  if (table_for(s, phi, l->ctx, bcap) != SIM_OK ||
      frac_for(s, l->nup) != SIM_OK)
    return SIM_ENOMEM;
  inf_fluid *f = s->fluid;
  if (phi != f->pre_phi ||
      memcmp(&f->pre_for, &l->prompt, sizeof l->prompt) != 0) {
    price_prefill(s, l, &f->pre); /* at phi: the table's clock */
    f->pre_phi = phi;
    f->pre_for = l->prompt;
  }
  prefill pre = f->pre;
  double mu = 1 / (pre.mean + l->work * inf__step_at(s, bcap)->t / bcap);
  double sat = run_backlog(s, l, mu, q0, o);
  part pt;
  if (sat > 0) {
    double q_end = sat < 1 ? 0 : o->backlog;
    saturated(s, l, &pre, bcap, mu, 0.5 * (q0 + q_end) / mu, &pt);
    add_part(s, o, l, &pre, &pt, sat, mu * sat * l->dt);
    o->in_batch = pt.batch;
    o->waiting = o->backlog;
  }
  if (sat < 1) {
    stationary(s, l, &pre, bcap, mu, l->rate, &pt);
    double offered = l->rate * (1 - sat) * l->dt;
    o->timed_out += offered * pt.lost;
    o->shed += offered * pt.shed;
    add_part(s, o, l, &pre, &pt, 1 - sat,
             offered * fmax(0, 1 - pt.lost - pt.shed));
    o->in_batch = pt.batch;
    o->waiting = pt.waiting;
  }
  return SIM_OK;
}
