/* inference_fluid.c - inference services as flows (inference.h,
 * granularity fluid; docs/ARCHITECTURE.md, "The fluid inference mode").
 * No request events: whenever the factory calls (set_clock,
 * take_activity, sample), the service is brought up to now in one step
 * over the span since it last was, a control period. The step takes the
 * span's expected arrivals and length moments from the generator
 * (arr_window_take: no draws), splits them evenly over the up replicas
 * (what least-loaded routing does on average) and solves each replica's
 * queueing in closed form:
 *
 * - Prefill: a prompt of n tokens takes S(n) = s0 + s1 n + s2 n^2
 *   (rl_prefill_s is exactly quadratic in n), so E[S] and E[S^2] follow
 *   from the prompt's first four moments (a lognormal fitted to the
 *   first two). Prefills pre-empt decoding, so the replica prefills a
 *   share rp = lambda E[S] of the time, whatever the batch.
 * - Decode: in the rest of the time the batch is a processor-sharing
 *   queue whose speed depends on its size b (a step of t(b), from
 *   rl_decode_step at the batch's mean context). With R replicas kept
 *   even by least-loaded routing, N requests decoding sit floor(N/R) or
 *   ceil(N/R) to a replica, and N is a birth-death chain: arrivals at R
 *   lambda, departures at the replicas' token rate / the mean decode
 *   tokens. Its stationary law (insensitive to the length distribution,
 *   as processor sharing is) is summed over a window of +-8 standard
 *   deviations around its mean, with a geometric tail of waiting
 *   requests once every replica holds the batch cap (max_batch, or the
 *   KV cache at the batch's mean holding). From it: the time shares at
 *   each batch size, hence activity, compute share, batch and TPOT
 *   (Little's law), and the chance an arrival finds no room.
 * - Latency: TTFT = wait + S. The wait is 0, or exponential: behind a
 *   prefill (Pollaczek-Khinchine's mean, with a chance routing lowers:
 *   prefill_wait) or for room in a full batch (M/M/c's 1 / R(mu - lambda)
 *   times the Allen-Cunneen factor of the output length). The SLO share
 *   is P(wait + S <= ttft_slo) from the prompt distribution (S is
 *   monotone in n), times the token-weighted share of steps within
 *   tpot_slo.
 * - Overload: when lambda reaches the capacity mu (a full batch, with
 *   its prefills), the excess becomes a fluid backlog, served first-in
 *   first-out at mu; a request waits backlog / mu, and the backlog is
 *   cut to mu x timeout (the rest time out) and to max_queue (the rest
 *   are rejected). A backlog drains at mu - lambda before the stationary
 *   state resumes within the span.
 *
 * Replicas in the same state (clock, backlog) give the same answer, so
 * each span solves once per distinct state (a small memo): a service of
 * 200 replicas at one clock costs one solve per control period.
 * Percentiles come from weighted points of each span's TTFT and TPOT
 * distributions (prompt nodes x wait nodes), kept in log-spaced
 * histograms like the request model's. Everything is deterministic: the
 * same scenario gives the same figures, seed or not (an MMPP's state
 * path is the one random input, drawn as at request level). */
#include "inference_internal.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "vec.h"

enum {
  NODES = 12, /* prompt-length nodes */
  WAITS = 4,  /* nodes of an exponential wait */
  MEMO = 8,   /* distinct replica states solved per span */
  PARTS = 2,  /* a span's saturated and stationary stretches */
  MAX_POINTS = PARTS * NODES * (1 + WAITS)
};

/* Probability bins of the prompt nodes: equal ones to the 96th
 * percentile, finer ones in the tail where a p99 lives. */
static const double node_edge[NODES + 1] = {0,   .12, .24, .36, .48,  .60, .72,
                                            .84, .96, .98, .99, .995, 1};
static const double wait_edge[WAITS + 1] = {0, .5, .9, .99, 1};

/* A length distribution: its moments and the lognormal fitted to them. */
typedef struct lengths {
  double mean, sq, mu, sigma;
} lengths;

/* What one span brings each up replica. */
typedef struct span_load {
  double dt;
  double rate;  /* requests/s offered to each up replica */
  double p_one; /* share with a one-token output: no decode */
  lengths prompt;
  double node_n[NODES]; /* prompt lengths at the nodes */
  double work;          /* decode tokens per request: E[output] - 1 */
  double work_cv2;      /* their squared coefficient of variation */
  double ctx;           /* mean context of a decoding request */
  double held;          /* mean output a batch member holds at its end */
  uint32_t nup;
} span_load;

/* One replica's prefill at one clock. */
typedef struct prefill {
  double s0, s1, s2;  /* S(n) = s0 + s1 n + s2 n^2 */
  double mean, sq;    /* E[S], E[S^2] */
  gpu_load load;      /* time-weighted: E[S L(n)] / E[S] */
  double node[NODES]; /* S at the prompt nodes */
} prefill;

/* A decode step at one batch size, priced once per clock and context. */
typedef struct step_row {
  double t, comp; /* s; share a faster clock speeds up */
  gpu_load act;   /* the step's load (roofline.h) */
} step_row;

/* A stretch of a span in one regime, per replica: its time means and
 * the latency of the requests it serves. TTFT = shift + wait + S with
 * wait 0 or (with p_wait) exponential of mean wait_mean. */
typedef struct part {
  gpu_load load;
  double compute, batch, waiting;
  double ttft_mean, tpot_mean; /* tpot_mean: of decoding requests */
  double p_slo;                /* share of the served within both SLOs */
  double lost, shed;           /* shares timed out, rejected (queue full) */
  double shift, p_wait, wait_mean;
  double tpot_v[NODES], tpot_w[NODES]; /* TPOT points, weights sum to 1 */
  size_t ntpot;
} part;

/* One replica over one span. */
typedef struct outcome {
  gpu_load load; /* time means */
  double compute, batch;
  double waiting, in_batch, backlog; /* at the end */
  double served, timed_out, shed;    /* requests */
  double slo_met, ttft_sum, tpot_sum, tokens, prompt_tokens;
  size_t nttft, ntpot;
  double ttft_v[MAX_POINTS], ttft_w[MAX_POINTS];
  double tpot_v[PARTS * NODES], tpot_w[PARTS * NODES];
} outcome;

typedef struct memo {
  double phi, backlog;
  uint32_t hits;
  outcome out;
} memo;

/* A histogram of weighted values, on the request model's bins. */
typedef struct wt_hist {
  double bin[HIST_BINS];
  double under, n, min, max;
} wt_hist;

typedef struct frep {
  double phi;
  bool down;
  double backlog;           /* the fluid queue, requests */
  double waiting, in_batch; /* at the last span's end */
  gpu_load act_int, last_act;
  double comp_int, act_since, comp_mean;
} frep;

/* What the current sampling interval has seen. */
typedef struct fl_interval {
  double arrivals, served, missed, slo_met, tokens, batch_s;
} fl_interval;

struct inf_fluid {
  frep *rep;
  double clock_s;
  lengths prompt, output; /* the last span's, kept through empty ones */
  /* The prompt nodes and a prefill priced for them, kept while the
   * lengths and the clock stay (every span, for the synthetic kinds). */
  lengths node_for, pre_for;
  double node_n[NODES];
  double pre_phi;
  prefill pre;
  /* Decode steps priced at (tab_phi, tab_ctx), by batch size; t NaN:
   * not yet. */
  step_row *tab;
  size_t tab_n, tab_cap;
  double tab_phi, tab_ctx;
  double *tok_b; /* scratch: token weight by batch size */
  size_t tok_cap;
  memo memo[MEMO];
  uint32_t nmemo;
  outcome spare; /* a solve that did not fit the memo */
  /* The run's flows, in requests (fractions: expectations). */
  double arrived, rejected, timed_out, dropped, served, slo_met;
  double tokens, prompt_tokens, ttft_sum, tpot_sum;
  fl_interval iv;
  wt_hist ttft_iv, tpot_iv, ttft_run, tpot_run;
};

/* ------------------------------------------------------------------ */
/* Small pieces: lengths, histograms                                   */
/* ------------------------------------------------------------------ */

static lengths fit(double mean, double sq) {
  double s2 = log(fmax(1, sq / (mean * mean)));
  return (lengths){mean, sq, log(mean) - 0.5 * s2, sqrt(s2)};
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

static void wh_add(wt_hist *h, double x, double w) {
  if (!(w > 0))
    return;
  h->min = h->n == 0 || x < h->min ? x : h->min;
  h->max = h->n == 0 || x > h->max ? x : h->max;
  h->n += w;
  if (!(x >= HIST_LO_S)) {
    h->under += w;
    return;
  }
  double pos = log10(x / HIST_LO_S) * HIST_PER_DECADE;
  if (pos < HIST_BINS)
    h->bin[(size_t)pos] += w;
}

/* Quantile q by the cumulative weight, log-interpolated inside a bin;
 * NaN when empty. */
static double wh_quantile(const wt_hist *h, double q) {
  if (!(h->n > 0) || !(q >= 0 && q <= 1))
    return NAN;
  double target = q * h->n, seen = h->under;
  if (target <= seen)
    return h->min;
  for (size_t b = 0; b < HIST_BINS; b++) {
    if (h->bin[b] > 0 && seen + h->bin[b] >= target) {
      double frac = (target - seen) / h->bin[b];
      double x = HIST_LO_S * pow(10, (b + frac) / HIST_PER_DECADE);
      return fmin(fmax(x, h->min), h->max);
    }
    seen += h->bin[b];
  }
  return h->max;
}

/* ------------------------------------------------------------------ */
/* The span's load and a replica's prefill                             */
/* ------------------------------------------------------------------ */

/* The span's lengths, kept from the last span when this one has none
 * (a trace's quiet stretch). */
static void take_lengths(inf_fluid *f, const arr_window *w) {
  if (!(w->prompt_mean >= 0 && w->output_mean >= 1))
    return;
  f->prompt = fit(fmax(w->prompt_mean, 1e-9), w->prompt_sq);
  f->output = fit(w->output_mean, w->output_sq);
}

static void make_load(inf_fluid *f, const arr_window *w, double dt,
                      uint32_t nup, span_load *l) {
  take_lengths(f, w);
  const lengths *o = &f->output;
  double fitting = w->count - w->over;
  *l = (span_load){.dt = dt,
                   .rate = fitting / (dt * nup),
                   .p_one = isnan(w->output_one) ? 0 : w->output_one,
                   .prompt = f->prompt,
                   .work = o->mean - 1,
                   .nup = nup};
  /* A member with output o decodes o - 1 steps at context p + 1 .. p +
   * o - 1 and is admitted for p + kv_reserve x o of KV (roofline.h): both
   * means weigh it by o - 1. */
  double held = l->work > 1e-9 ? (o->sq - o->mean) / l->work : 2;
  l->held = held;
  l->work_cv2 = l->work > 1e-9
                    ? fmax(0, o->sq - o->mean * o->mean) / (l->work * l->work)
                    : 0;
  l->ctx = f->prompt.mean + 0.5 * held;
  if (memcmp(&f->node_for, &f->prompt, sizeof f->prompt) != 0) {
    for (int i = 0; i < NODES; i++)
      f->node_n[i] =
          quantile_of(&f->prompt, 0.5 * (node_edge[i] + node_edge[i + 1]));
    f->node_for = f->prompt;
  }
  memcpy(l->node_n, f->node_n, sizeof l->node_n);
}

/* The prefill at clock phi. S(n) and its loaded parts S(n) L(n) are
 * quadratics in n (FLOPs 2 N n + 2 L d n^2, all-reduces affine in n, the
 * weights read once), read off at three lengths far enough apart to be
 * well conditioned. */
static double quad_mean(double f0, double f1, double f2, double a,
                        const lengths *n) {
  double c2 = (f2 - 2 * f1 + f0) / (2 * a * a), c1 = (f1 - f0) / a - c2 * a;
  return f0 + c1 * n->mean + c2 * n->sq;
}

static gpu_load busy_at(const rl_replica *r, double n, double phi) {
  return gpu_load_scale(rl_prefill_load(r, n), rl_prefill_s(r, n, phi));
}

static void price_prefill(const inf_service *s, const span_load *l, double phi,
                          prefill *p) {
  const rl_replica *r = &s->proto;
  const double a = 1024;
  double f0 = rl_prefill_s(r, 0, phi), f1 = rl_prefill_s(r, a, phi),
         f2 = rl_prefill_s(r, 2 * a, phi);
  p->s0 = f0;
  p->s2 = (f2 - 2 * f1 + f0) / (2 * a * a);
  p->s1 = (f1 - f0) / a - p->s2 * a;
  gpu_load b0 = busy_at(r, 0, phi), b1 = busy_at(r, a, phi),
           b2 = busy_at(r, 2 * a, phi);
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
  size_t want = (size_t)bcap + 2;
  if (sim_vec_reserve(s->alloc, &f->tab, &f->tab_cap, want, sizeof *f->tab) !=
          SIM_OK ||
      sim_vec_reserve(s->alloc, &f->tok_b, &f->tok_cap, want,
                      sizeof *f->tok_b) != SIM_OK)
    return SIM_ENOMEM;
  bool same = phi == f->tab_phi && ctx == f->tab_ctx;
  for (size_t b = same ? f->tab_n : 0; b < want; b++)
    f->tab[b].t = NAN;
  if (!same || want > f->tab_n)
    f->tab_n = want;
  f->tab_phi = phi;
  f->tab_ctx = ctx;
  return SIM_OK;
}

static const step_row *step_at(inf_service *s, uint32_t b) {
  step_row *row = &s->fluid->tab[b];
  if (isnan(row->t)) {
    rl_step st;
    rl_decode_step(&s->proto, b, s->fluid->tab_ctx, s->fluid->tab_phi, &st);
    *row =
        (step_row){st.t, st.t_comp >= st.t_mem ? st.t_comp / st.t : 0, st.load};
  }
  return row;
}

/* Tokens per second of a replica decoding a batch of b. */
static double rate_at(inf_service *s, uint32_t b) {
  return b == 0 ? 0 : b / step_at(s, b)->t;
}

/* The batch a replica can hold: max_batch, or fewer when the KV cache
 * at the members' mean admission is the limit. */
static uint32_t batch_cap(const inf_service *s, const span_load *l) {
  double per = l->prompt.mean + s->proto.cfg.kv_reserve * l->held;
  double kv = floor(s->kv_cap / fmax(per, 1));
  double cap = fmin((double)s->c->max_batch, kv);
  return cap < 1 ? 1 : (uint32_t)fmin(cap, 1e7);
}

/* ------------------------------------------------------------------ */
/* The stationary chain of the decoding requests                       */
/* ------------------------------------------------------------------ */

/* Running sums over the chain's states, unnormalised. */
typedef struct chain {
  double z, busy, comp, members, tokens, waiting, full, block, tpot_ok;
  gpu_load act;
} chain;

/* Adds the chain's state N (weight p): N = k R + j puts k requests on
 * R - j replicas and k + 1 on j of them. */
static void add_state(inf_service *s, uint64_t n, uint32_t rr, double p,
                      double tpot_lim, chain *c) {
  uint32_t k = (uint32_t)(n / rr), j = (uint32_t)(n % rr);
  double lo = (double)(rr - j) / rr, hi = (double)j / rr;
  double g0 = rate_at(s, k), g1 = j > 0 ? rate_at(s, k + 1) : 0;
  const step_row *r0 = k > 0 ? step_at(s, k) : NULL;
  const step_row *r1 = j > 0 ? step_at(s, k + 1) : NULL;
  c->z += p;
  c->busy += p * (k > 0 ? 1 : hi);
  c->members += p * (double)n / rr;
  c->tokens += p * (lo * g0 + hi * g1);
  if (r0 != NULL) {
    c->act = gpu_load_axpy(c->act, p * lo, r0->act);
    c->comp += p * lo * r0->comp;
    s->fluid->tok_b[k] += p * lo * g0;
    c->tpot_ok += r0->t <= tpot_lim ? p * lo * g0 : 0;
  }
  if (r1 != NULL) {
    c->act = gpu_load_axpy(c->act, p * hi, r1->act);
    c->comp += p * hi * r1->comp;
    s->fluid->tok_b[k + 1] += p * hi * g1;
    c->tpot_ok += r1->t <= tpot_lim ? p * hi * g1 : 0;
  }
}

/* The requests waiting beyond a full chain (every replica at bcap): a
 * geometric tail of ratio r, cut at jmax waiting (0: no limit). Adds its
 * mass as full-batch states, its mean queue and the chance an arrival
 * finds it full. */
static void add_tail(inf_service *s, double p_full, double r, double jmax,
                     uint32_t rr, uint32_t bcap, double tpot_lim, chain *c) {
  double rj = jmax > 0 ? pow(r, jmax) : 0;
  double mass = p_full * r * (1 - rj) / (1 - r);
  double queue =
      p_full * r * (1 - (jmax + 1) * rj + jmax * rj * r) / ((1 - r) * (1 - r));
  const step_row *row = step_at(s, bcap);
  double g = bcap / row->t;
  c->z += mass;
  c->busy += mass;
  c->members += mass * bcap;
  c->tokens += mass * g;
  c->act = gpu_load_axpy(c->act, mass, row->act);
  c->comp += mass * row->comp;
  s->fluid->tok_b[bcap] += mass * g;
  c->tpot_ok += row->t <= tpot_lim ? mass * g : 0;
  c->waiting += queue / rr;
  c->full += p_full + mass;
  c->block += p_full * rj;
}

/* The per-replica decode rate rho (tokens/s) sits between the batch
 * sizes k and k + 1: the balanced mean batch k + frac. */
static double mean_batch(inf_service *s, double rho, uint32_t bcap) {
  uint32_t lo = 0, hi = bcap;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (rate_at(s, mid) <= rho)
      lo = mid;
    else
      hi = mid;
  }
  double g0 = rate_at(s, lo), g1 = rate_at(s, lo + 1);
  return lo + fmin(1, (rho - g0) / (g1 - g0));
}

/* The decoding rate of rr replicas holding n requests evenly. */
static double total_rate(inf_service *s, uint64_t n, uint32_t rr) {
  uint32_t k = (uint32_t)(n / rr), j = (uint32_t)(n % rr);
  return (rr - j) * rate_at(s, k) + (j > 0 ? j * rate_at(s, k + 1) : 0);
}

/* Sums the chain over a window around its mean; the states' weights
 * are products of birth-death ratios from the mean outwards (no
 * logarithms: they fall away from the mean, so nothing overflows). */
static void sum_chain(inf_service *s, double rho, uint32_t rr, uint32_t bcap,
                      double tpot_lim, chain *c) {
  double m = mean_batch(s, rho, bcap) * rr;
  double half = 8 * sqrt(m + 1) + 4;
  uint64_t top = (uint64_t)rr * bcap;
  uint64_t lo = m > half ? (uint64_t)(m - half) : 0;
  uint64_t hi = (uint64_t)fmin((double)top, ceil(m + half));
  uint64_t mid = (uint64_t)fmin((double)hi, fmax((double)lo, round(m)));
  memset(s->fluid->tok_b, 0, ((size_t)bcap + 2) * sizeof *s->fluid->tok_b);
  double up = rr * rho, p = 1, p_top = 0;
  for (uint64_t n = mid; n <= hi; n++) {
    add_state(s, n, rr, p, tpot_lim, c);
    if (n == top)
      p_top = p;
    if (n < hi)
      p *= up / total_rate(s, n + 1, rr);
  }
  p = 1;
  for (uint64_t n = mid; n > lo; n--) {
    p *= total_rate(s, n, rr) / up;
    add_state(s, n - 1, rr, p, tpot_lim, c);
  }
  if (hi == top && p_top > 0) {
    double r = fmin(rho / rate_at(s, bcap), 1 - 1e-9);
    double jmax = (double)s->c->max_queue * rr;
    add_tail(s, p_top, r, jmax, rr, bcap, tpot_lim, c);
  }
}

/* ------------------------------------------------------------------ */
/* A replica's stretches: stationary and saturated                     */
/* ------------------------------------------------------------------ */

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
    pt->tpot_v[pt->ntpot] = step_at(s, b)->t * stretch;
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

/* The stationary stretch at lam requests/s per replica (below mu). */
static void stationary(inf_service *s, const span_load *l, const prefill *pre,
                       uint32_t bcap, double mu, double lam, part *pt) {
  *pt = (part){0};
  if (!(lam > 0))
    return;
  double rp = lam * pre->mean, free = 1 - rp;
  double rho = lam * l->work / free;
  chain c = {0};
  double lim = s->c->tpot_slo_s * free;
  if (rho > 0)
    sum_chain(s, rho, l->nup, bcap, lim, &c);
  else
    c.z = c.busy = 1; /* one-token outputs only: prefills, no batch */
  pt->load = gpu_load_axpy(gpu_load_scale(pre->load, rp), free / c.z, c.act);
  pt->compute = rp + free * c.comp / c.z;
  pt->batch = c.members / c.z + rp;
  pt->waiting = c.waiting / c.z;
  double step = c.tokens > 0 ? c.members / c.tokens : step_at(s, 1)->t;
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
  *pt = (part){0};
  const step_row *row = step_at(s, bcap);
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
                       double served) {
  for (int i = 0; i < NODES; i++) {
    double w = served * (node_edge[i + 1] - node_edge[i]);
    double x = pt->shift + pre->node[i];
    o->ttft_v[o->nttft] = x;
    o->ttft_w[o->nttft++] = w * (1 - pt->p_wait);
    for (int j = 0; j < WAITS && pt->p_wait > 1e-9; j++) {
      double u = 0.5 * (wait_edge[j] + wait_edge[j + 1]);
      o->ttft_v[o->nttft] = x - pt->wait_mean * log1p(-u);
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
static void add_part(outcome *o, const span_load *l, const prefill *pre,
                     const part *pt, double share, double served) {
  o->load = gpu_load_axpy(o->load, share, pt->load);
  o->compute += share * pt->compute;
  o->batch += share * pt->batch;
  o->served += served;
  o->slo_met += served * pt->p_slo;
  o->ttft_sum += served * pt->ttft_mean;
  o->tpot_sum += served * (1 - l->p_one) * pt->tpot_mean;
  o->tokens += served * (l->work + 1);
  o->prompt_tokens += served * l->prompt.mean;
  add_points(o, pre, pt, served);
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

/* Replica state (phi, q0) over the span into *o. */
static int solve(inf_service *s, const span_load *l, double phi, double q0,
                 outcome *o) {
  memset(o, 0, offsetof(outcome, ttft_v));
  uint32_t bcap = batch_cap(s, l);
  if (table_for(s, phi, l->ctx, bcap) != SIM_OK)
    return SIM_ENOMEM;
  inf_fluid *f = s->fluid;
  if (phi != f->pre_phi ||
      memcmp(&f->pre_for, &l->prompt, sizeof l->prompt) != 0) {
    price_prefill(s, l, phi, &f->pre);
    f->pre_phi = phi;
    f->pre_for = l->prompt;
  }
  prefill pre = f->pre;
  double mu = 1 / (pre.mean + l->work * step_at(s, bcap)->t / bcap);
  double sat = run_backlog(s, l, mu, q0, o);
  part pt;
  if (sat > 0) {
    double q_end = sat < 1 ? 0 : o->backlog;
    saturated(s, l, &pre, bcap, mu, 0.5 * (q0 + q_end) / mu, &pt);
    add_part(o, l, &pre, &pt, sat, mu * sat * l->dt);
    o->in_batch = pt.batch;
    o->waiting = o->backlog;
  }
  if (sat < 1) {
    stationary(s, l, &pre, bcap, mu, l->rate, &pt);
    double offered = l->rate * (1 - sat) * l->dt;
    o->timed_out += offered * pt.lost;
    o->shed += offered * pt.shed;
    add_part(o, l, &pre, &pt, 1 - sat,
             offered * fmax(0, 1 - pt.lost - pt.shed));
    o->in_batch = pt.batch;
    o->waiting = pt.waiting;
  }
  return SIM_OK;
}

/* ------------------------------------------------------------------ */
/* The service over one span                                           */
/* ------------------------------------------------------------------ */

/* The outcome for a replica in state (phi, q0): a memo entry solved
 * this span, or a new solve. NULL when out of memory. */
static memo *outcome_for(inf_service *s, const span_load *l, double phi,
                         double q0) {
  inf_fluid *f = s->fluid;
  for (uint32_t i = 0; i < f->nmemo; i++)
    if (f->memo[i].phi == phi && f->memo[i].backlog == q0)
      return &f->memo[i];
  if (f->nmemo == MEMO)
    return NULL; /* full: the caller solves it alone */
  memo *m = &f->memo[f->nmemo];
  m->phi = phi;
  m->backlog = q0;
  m->hits = 0;
  if (solve(s, l, phi, q0, &m->out) != SIM_OK)
    return NULL;
  f->nmemo++;
  return m;
}

/* Books an outcome, for `hits` replicas, into the service's flows. */
static void book(inf_fluid *f, const outcome *o, double hits, double dt) {
  f->served += hits * o->served;
  f->timed_out += hits * o->timed_out;
  f->rejected += hits * o->shed;
  f->slo_met += hits * o->slo_met;
  f->tokens += hits * o->tokens;
  f->prompt_tokens += hits * o->prompt_tokens;
  f->ttft_sum += hits * o->ttft_sum;
  f->tpot_sum += hits * o->tpot_sum;
  f->iv.served += hits * o->served;
  f->iv.missed += hits * (o->timed_out + o->shed);
  f->iv.slo_met += hits * o->slo_met;
  f->iv.tokens += hits * o->tokens;
  f->iv.batch_s += hits * o->batch * dt;
  for (size_t i = 0; i < o->nttft; i++) {
    wh_add(&f->ttft_iv, o->ttft_v[i], hits * o->ttft_w[i]);
    wh_add(&f->ttft_run, o->ttft_v[i], hits * o->ttft_w[i]);
  }
  for (size_t i = 0; i < o->ntpot; i++) {
    wh_add(&f->tpot_iv, o->tpot_v[i], hits * o->tpot_w[i]);
    wh_add(&f->tpot_run, o->tpot_v[i], hits * o->tpot_w[i]);
  }
}

static void apply(frep *r, const outcome *o, double dt) {
  r->act_int = gpu_load_axpy(r->act_int, dt, o->load);
  r->comp_int += o->compute * dt;
  r->backlog = o->backlog;
  r->waiting = o->waiting;
  r->in_batch = o->in_batch;
}

/* Every up replica over the span, each distinct state solved once. */
static int run_replicas(inf_service *s, const span_load *l) {
  inf_fluid *f = s->fluid;
  f->nmemo = 0;
  for (uint32_t k = 0; k < s->nrep; k++) {
    frep *r = &f->rep[k];
    if (r->down)
      continue;
    memo *m = outcome_for(s, l, r->phi, r->backlog);
    if (m == NULL) {
      if (solve(s, l, r->phi, r->backlog, &f->spare) != SIM_OK)
        return SIM_ENOMEM;
      book(f, &f->spare, 1, l->dt);
      apply(r, &f->spare, l->dt);
      continue;
    }
    m->hits++;
    apply(r, &m->out, l->dt);
  }
  for (uint32_t i = 0; i < f->nmemo; i++)
    book(f, &f->memo[i].out, f->memo[i].hits, l->dt);
  return SIM_OK;
}

static uint32_t replicas_up(const inf_service *s) {
  uint32_t n = 0;
  for (uint32_t k = 0; k < s->nrep; k++)
    n += !s->fluid->rep[k].down;
  return n;
}

/* Brings the service from its clock to now. */
static void advance(inf_service *s) {
  inf_fluid *f = s->fluid;
  double now = sim_time_to_s(sim_engine_now(s->e)), dt = now - f->clock_s;
  if (!(dt > 0))
    return;
  arr_window w;
  arr_window_take(s->gen, f->clock_s, now, s->kv_cap, &w);
  f->clock_s = now;
  f->arrived += w.count;
  f->rejected += w.over;
  f->iv.arrivals += w.count;
  f->iv.missed += w.over;
  uint32_t nup = replicas_up(s);
  if (nup == 0) { /* all down: every arrival is lost */
    f->dropped += w.count - w.over;
    f->iv.missed += w.count - w.over;
    return;
  }
  span_load l;
  make_load(f, &w, dt, nup, &l);
  if (run_replicas(s, &l) != SIM_OK && s->rc == SIM_OK)
    s->rc = SIM_ENOMEM;
}

/* ------------------------------------------------------------------ */
/* Life cycle and the public operations                                */
/* ------------------------------------------------------------------ */

int inf__fluid_start(inf_service *s, sim_error *err) {
  inf_fluid *f = sim_calloc(s->alloc, 1, sizeof *f);
  if (f != NULL)
    f->rep = sim_calloc(s->alloc, s->nrep, sizeof *f->rep);
  if (f == NULL || f->rep == NULL) {
    inf__fluid_free(s->alloc, f);
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  for (uint32_t k = 0; k < s->nrep; k++)
    f->rep[k].phi = 1;
  f->tab_phi = f->tab_ctx = f->pre_phi = NAN;
  f->prompt = f->output = fit(1, 1);
  f->clock_s = sim_time_to_s(sim_engine_now(s->e));
  for (uint32_t k = 0; k < s->nrep; k++)
    f->rep[k].act_since = f->clock_s;
  s->fluid = f;
  return SIM_OK;
}

void inf__fluid_free(const sim_allocator *a, inf_fluid *f) {
  if (f == NULL)
    return;
  sim_free(a, f->rep);
  sim_free(a, f->tab);
  sim_free(a, f->tok_b);
  sim_free(a, f);
}

int inf__fluid_set_clock(inf_service *s, uint32_t k, double phi) {
  if (k >= s->nrep || !(phi > 0 && phi <= 1))
    return SIM_EINVAL;
  advance(s);
  s->fluid->rep[k].phi = phi;
  return s->rc;
}

/* A replica going down loses its queue and its batch (dropped). */
int inf__fluid_set_down(inf_service *s, uint32_t k, bool down) {
  if (k >= s->nrep)
    return SIM_EINVAL;
  frep *r = &s->fluid->rep[k];
  if (r->down == down)
    return SIM_OK;
  advance(s);
  if (down) {
    s->fluid->dropped += r->waiting + r->in_batch;
    r->backlog = r->waiting = r->in_batch = 0;
  }
  r->down = down;
  return s->rc;
}

bool inf__fluid_down(const inf_service *s, uint32_t k) {
  return k < s->nrep && s->fluid->rep[k].down;
}

gpu_load inf__fluid_take_load(inf_service *s, uint32_t k) {
  if (k >= s->nrep)
    return (gpu_load){NAN, NAN, NAN};
  advance(s);
  frep *r = &s->fluid->rep[k];
  double span = s->fluid->clock_s - r->act_since;
  if (span > 0) {
    r->last_act = gpu_load_scale(r->act_int, 1 / span);
    r->comp_mean = r->comp_int / span;
  }
  r->act_int = (gpu_load){0, 0, 0};
  r->comp_int = 0;
  r->act_since = s->fluid->clock_s;
  return r->last_act;
}

double inf__fluid_compute_share(const inf_service *s, uint32_t k) {
  return k < s->nrep ? s->fluid->rep[k].comp_mean : 0;
}

static double ratio(double num, double den) {
  return den > 0 ? num / den : NAN;
}

void inf__fluid_sample(inf_service *s, double dt, double *row) {
  advance(s);
  inf_fluid *f = s->fluid;
  double waiting = 0;
  for (uint32_t k = 0; k < s->nrep; k++)
    waiting += f->rep[k].waiting;
  const fl_interval *iv = &f->iv;
  row[INF_REQUESTS_PER_S] = ratio(iv->served, dt);
  row[INF_ARRIVALS_PER_S] = ratio(iv->arrivals, dt);
  row[INF_TOKENS_PER_S] = ratio(iv->tokens, dt);
  row[INF_QUEUE] = waiting;
  row[INF_BATCH] = ratio(iv->batch_s, dt * s->nrep);
  row[INF_TTFT_P50] = wh_quantile(&f->ttft_iv, 0.5);
  row[INF_TTFT_P99] = wh_quantile(&f->ttft_iv, 0.99);
  row[INF_TPOT_P50] = wh_quantile(&f->tpot_iv, 0.5);
  row[INF_TPOT_P99] = wh_quantile(&f->tpot_iv, 0.99);
  row[INF_SLO] = ratio(iv->slo_met, iv->served + iv->missed);
  row[INF_TOKENS_PER_J] = ratio(iv->tokens, s->iv.energy_j);
  row[INF_POWER_W] = ratio(s->iv.energy_j, dt);
  f->iv = (fl_interval){0};
  s->iv.energy_j = 0;
  memset(&f->ttft_iv, 0, sizeof f->ttft_iv);
  memset(&f->tpot_iv, 0, sizeof f->tpot_iv);
}

static uint64_t whole(double x) { return x > 0 ? (uint64_t)x : 0; }

/* The flows as counts: the arrivals rounded, each other state floored
 * and the batch the rest, so the counts are conserved exactly and the
 * batch, at least the fluid's minus a half, never goes below 0. */
inf_totals inf__fluid_totals(const inf_service *s) {
  const inf_fluid *f = s->fluid;
  double waiting = 0, in_batch = 0;
  for (uint32_t k = 0; k < s->nrep; k++) {
    waiting += f->rep[k].waiting;
    in_batch += f->rep[k].in_batch;
  }
  inf_totals t = s->tot;
  t.arrived = (uint64_t)llround(f->arrived);
  t.rejected = whole(f->rejected);
  t.timed_out = whole(f->timed_out);
  t.dropped = whole(f->dropped);
  t.waiting = whole(waiting);
  /* Early on the stationary batch can exceed what has arrived (the run
   * starts empty): the batch is what is left. */
  double left = f->arrived - f->rejected - f->timed_out - f->dropped - waiting;
  t.completed = whole(left - fmin(in_batch, fmax(0, left)));
  uint64_t ended = t.completed + t.rejected + t.timed_out + t.dropped;
  t.in_batch =
      t.arrived > ended + t.waiting ? t.arrived - ended - t.waiting : 0;
  t.slo_met = whole(f->slo_met);
  t.slo_met = t.slo_met > t.completed ? t.completed : t.slo_met;
  t.tokens_generated = f->tokens;
  t.prompt_tokens = f->prompt_tokens;
  t.ttft_sum_s = f->ttft_sum * ratio((double)t.completed, f->served);
  t.tpot_sum_s = f->tpot_sum * ratio((double)t.completed, f->served);
  return t;
}

double inf__fluid_quantile(const inf_service *s, bool ttft, double q) {
  return wh_quantile(ttft ? &s->fluid->ttft_run : &s->fluid->tpot_run, q);
}
