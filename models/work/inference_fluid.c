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
 * 200 replicas at one clock costs one solve per control period. Replicas
 * whose whole state is equal are one group (inference_fluid_groups.c):
 * a span is applied once per group, and a replica's calls read it.
 * Percentiles come from weighted points of each span's TTFT and TPOT
 * distributions (prompt nodes x wait nodes), kept in log-spaced
 * histograms like the request model's. Everything is deterministic: the
 * same scenario gives the same figures, seed or not (an MMPP's state
 * path is the one random input, drawn as at request level). */
#include "inference_internal.h"

#include "bits.h"
#include "inference_fluid.h"
#include "inference_fluid_internal.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Small pieces: lengths, histograms                                   */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* The span's load                                                     */
/* ------------------------------------------------------------------ */

/* The span's lengths, kept from the last span when this one has none
 * (a trace's quiet stretch). */
static void take_lengths(inf_fluid *f, const arr_window *w) {
  if (!(w->prompt_mean >= 0 && w->output_mean >= 1))
    return;
  inf__fit_to(&f->prompt, fmax(w->prompt_mean, 1e-9), w->prompt_sq);
  inf__fit_to(&f->output, w->output_mean, w->output_sq);
}

static void make_load(inf_fluid *f, const arr_window *w, double dt,
                      uint32_t nup, span_load *l) {
  take_lengths(f, w);
  const lengths *o = &f->output;
  double fitting = w->count - w->over;
  /* Not a compound literal: it zeroed node_n, copied below, first. */
  l->dt = dt;
  l->rate = fitting / (dt * nup);
  l->p_one = isnan(w->output_one) ? 0 : w->output_one;
  l->prompt = f->prompt;
  l->work = o->mean - 1;
  l->nup = nup;
  /* A member with output o decodes o - 1 steps at context p + 1 .. p +
   * o - 1 and is admitted for p + kv_reserve x o of KV (roofline.h): both
   * means weigh it by o - 1. */
  l->held = l->work > 1e-9 ? (o->sq - o->mean) / l->work : 2;
  l->work_cv2 = l->work > 1e-9
                    ? fmax(0, o->sq - o->mean * o->mean) / (l->work * l->work)
                    : 0;
  l->ctx = f->prompt.mean + 0.5 * l->held;
  if (memcmp(&f->node_for, &f->prompt, sizeof f->prompt) != 0) {
    inf__fluid_nodes(&f->prompt, f->node_n);
    f->node_for = f->prompt;
  }
  memcpy(l->node_n, f->node_n, sizeof l->node_n);
}

/* ------------------------------------------------------------------ */
/* The service over one span                                           */
/* ------------------------------------------------------------------ */

/* The outcome for a replica in state (phi, q0): a memo entry solved
 * this span, or a new solve. NULL when out of memory. */
static memo *outcome_for(inf_service *s, const span_load *l, double phi,
                         double q0) {
  inf_fluid *f = s->fluid;
  /* Entries never match each other (one is added only when none
   * matches), so the last one found, if it matches, is the one. */
  memo *last = &f->memo[f->last_memo];
  if (f->last_memo < f->nmemo && last->phi == phi && last->backlog == q0)
    return last;
  for (uint32_t i = 0; i < f->nmemo; i++)
    if (f->memo[i].phi == phi && f->memo[i].backlog == q0) {
      f->last_memo = i;
      return &f->memo[i];
    }
  if (f->nmemo == MEMO)
    return NULL; /* full: the caller solves it alone */
  memo *m = &f->memo[f->nmemo];
  m->phi = phi;
  m->backlog = q0;
  m->hits = 0;
  if (inf__fluid_solve(s, l, phi, q0, &m->out) != SIM_OK)
    return NULL;
  f->last_memo = f->nmemo++;
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
  inf__wh_add_points(&f->ttft_iv, &f->ttft_run, &f->bins, o->ttft_v, o->ttft_w,
                     o->nttft, hits);
  inf__wh_add_runs(&f->tpot_iv, &f->tpot_run, &f->bins, o->tpot_v, o->tpot_w,
                   o->ntpot, hits);
}

/* A group's replicas over the span: each as one replica alone. */
static void apply(fgrp *g, const outcome *o, double dt) {
  fstate *r = &g->st;
  r->act_int = gpu_load_axpy(r->act_int, dt, o->load);
  r->comp_int += o->compute * dt;
  r->backlog = o->backlog;
  r->waiting = o->waiting;
  r->in_batch = o->in_batch;
}

/* The groups whose state did not fit the memo (more than MEMO states):
 * each replica solved and booked alone in replica order, as replicas
 * kept one by one would be, and each group moved once. */
static int run_spares(inf_service *s, const span_load *l) {
  inf_fluid *f = s->fluid;
  for (uint32_t k = 0; k < s->nrep; k++) {
    const fgrp *g = inf__grp(f, k);
    if (!g->spare)
      continue;
    if (inf__fluid_solve(s, l, g->st.phi, g->st.backlog, &f->spare) != SIM_OK)
      return SIM_ENOMEM;
    book(f, &f->spare, 1, l->dt);
  }
  for (uint32_t i = 0; i < f->ngrp; i++) {
    fgrp *g = &f->grp[i];
    if (!g->spare)
      continue;
    if (inf__fluid_solve(s, l, g->st.phi, g->st.backlog, &f->spare) != SIM_OK)
      return SIM_ENOMEM;
    apply(g, &f->spare, l->dt);
  }
  return SIM_OK;
}

/* Every up replica over the span, each distinct state solved once and
 * each group moved once. The memo's entries come in the order of their
 * first replicas, as a pass over the replicas would make them, so the
 * books add up in the same order. */
static int run_replicas(inf_service *s, const span_load *l) {
  inf_fluid *f = s->fluid;
  f->nmemo = 0;
  bool spare = false;
  for (uint32_t i = 0; i < f->ngrp; i++) {
    fgrp *g = &f->grp[i];
    g->spare = false;
    if (g->st.down != 0)
      continue;
    memo *m = outcome_for(s, l, g->st.phi, g->st.backlog);
    if (m == NULL) {
      g->spare = spare = true;
      continue;
    }
    m->hits += g->n;
    apply(g, &m->out, l->dt);
  }
  if (spare && run_spares(s, l) != SIM_OK)
    return SIM_ENOMEM;
  for (uint32_t i = 0; i < f->nmemo; i++)
    book(f, &f->memo[i].out, f->memo[i].hits, l->dt);
  return SIM_OK;
}

/* Brings the service from its clock to now (engine time t), over the
 * span since it last was. */
static void advance_to(inf_service *s, sim_time t) {
  inf_fluid *f = s->fluid;
  f->clock_t = t;
  double now = sim_time_to_s(t), dt = now - f->clock_s;
  if (!(dt > 0))
    return;
  arr_window w;
  arr_window_take(s->gen, f->clock_s, now, s->kv_cap, &w);
  f->clock_s = now;
  /* The replicas' clocks and takes since the last span, applied. */
  inf__took_settle(f);
  inf__groups_regroup(f, s->nrep);
  f->arrived += w.count;
  f->rejected += w.over;
  f->iv.arrivals += w.count;
  f->iv.missed += w.over;
  uint32_t nup = f->nup;
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

/* Every replica's set_clock and take_load calls this, a few thousand
 * times a control period, and all but the first of a period find the
 * service already there: the engine's integer time, compared, answers
 * them without advance_to's conversions and frame. */
static inline void advance(inf_service *s) {
  sim_time t = sim_engine_now(s->e);
  if (t != s->fluid->clock_t)
    advance_to(s, t);
}

/* ------------------------------------------------------------------ */
/* Life cycle and the public operations                                */
/* ------------------------------------------------------------------ */

static void free_state(const sim_allocator *a, inf_fluid *f) {
  if (f == NULL)
    return;
  inf__groups_free(a, f);
  sim_free(a, f->tab);
  sim_free(a, f->tok_b);
  sim_free(a, f->frac);
  sim_free(a, f);
}

static int fl_start(inf_service *s, sim_error *err) {
  inf_fluid *f = sim_calloc(s->alloc, 1, sizeof *f);
  sim_time now = sim_engine_now(s->e);
  fstate st = {.phi = 1, .act_since = sim_time_to_s(now)};
  if (f == NULL || inf__groups_start(s->alloc, f, s->nrep, &st) != SIM_OK) {
    free_state(s->alloc, f);
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  }
  f->nup = s->nrep;
  f->tab_phi = f->tab_ctx = f->pre_phi = f->inv_for = NAN;
  f->prompt = f->output = inf__fit(1, 1);
  inf__fluid_waits(f->wait_ln);
  inf__wh_bins_init(&f->bins);
  f->clock_t = now;
  f->clock_s = st.act_since;
  s->fluid = f;
  return SIM_OK;
}

static void fl_free(inf_service *s) { free_state(s->alloc, s->fluid); }

static bool good_phi(double phi) { return phi > 0 && phi <= 1; }

/* good_phi by a clock's bits, one subtract and compare: positive doubles
 * order as their bits do and 1's are the largest in range, while +0 (0
 * less 1 wraps), the sign bit's, inf's and NaN's fall outside. */
static inline bool good_bits(uint64_t u) { return u - 1 < 0x3ff0000000000000u; }

/* Whether the eight clocks at phi are each good, one by one. */
static bool eight_good(const double *phi) {
  bool ok = true;
  for (int j = 0; j < 8; j++)
    ok &= good_bits(sim_bits(phi[j]));
  return ok;
}

/* Copies phi[i .. m) to to[i ..) while they are good, eight at a time,
 * and returns where it stopped (a block with a bad clock, and the few
 * past the last block, are left to the caller, clock by clock). A
 * block's bits less 1, or-ed lane by lane and then the two lanes, below
 * good_bits' bound are below it each (the or is at least each): one
 * compare for eight clocks whose exponents or together to no more than
 * 1's less one (clocks in (0.5, 1], or those with ones below them);
 * other blocks are tested clock by clock. */
static uint32_t copy_good(double *to, const double *phi, uint32_t i,
                          uint32_t m) {
  const sim_u2 one = {1, 1};
  for (; i + 8 <= m; i += 8) {
    sim_u2 a = sim_u2_at(phi + i), b = sim_u2_at(phi + i + 2);
    sim_u2 c = sim_u2_at(phi + i + 4), d = sim_u2_at(phi + i + 6);
    sim_u2 o = (a - one) | (b - one) | (c - one) | (d - one);
    if ((o[0] | o[1]) >= 0x3ff0000000000000u && !eight_good(phi + i))
      break;
    sim_u2_put(to + i, a);
    sim_u2_put(to + i + 2, b);
    sim_u2_put(to + i + 4, c);
    sim_u2_put(to + i + 6, d);
  }
  return i;
}

#ifdef SIM_LANES_AVX2
/* copy_good sixteen a turn, four lanes a register (AVX2, where the CPU
 * has it): the sixteen bits less 1 or-ed lane by lane, each lane below
 * good_bits' bound (a signed compare, the sign bits flipped), or the
 * sixteen tested clock by clock. The same clocks copied, the same place
 * stopped at; copy_good goes on from there. */
__attribute__((target("avx2"))) static uint32_t
copy_good_quads(double *to, const double *phi, uint32_t i, uint32_t m) {
  const __m256i one = _mm256_set1_epi64x(1),
                flip = _mm256_set1_epi64x(INT64_MIN),
                bound = _mm256_set1_epi64x(0x3ff0000000000000 ^ INT64_MIN);
  for (; i + 16 <= m; i += 16) {
    const __m256i *x = (const __m256i *)(phi + i);
    __m256i a = _mm256_loadu_si256(x), b = _mm256_loadu_si256(x + 1);
    __m256i c = _mm256_loadu_si256(x + 2), d = _mm256_loadu_si256(x + 3);
    __m256i o = _mm256_or_si256(
        _mm256_or_si256(_mm256_sub_epi64(a, one), _mm256_sub_epi64(b, one)),
        _mm256_or_si256(_mm256_sub_epi64(c, one), _mm256_sub_epi64(d, one)));
    __m256i below = _mm256_cmpgt_epi64(bound, _mm256_xor_si256(o, flip));
    if (_mm256_movemask_pd(_mm256_castsi256_pd(below)) != 0xf &&
        !(eight_good(phi + i) && eight_good(phi + i + 8)))
      break;
    __m256i *y = (__m256i *)(to + i);
    _mm256_storeu_si256(y, a);
    _mm256_storeu_si256(y + 1, b);
    _mm256_storeu_si256(y + 2, c);
    _mm256_storeu_si256(y + 3, d);
  }
  return i;
}
#endif

static int fl_set_clock(inf_service *s, uint32_t k, double phi) {
  if (k >= s->nrep || !good_phi(phi))
    return SIM_EINVAL;
  advance(s);
  s->fluid->phi[k] = phi;
  return s->rc;
}

/* fl_set_clock of replicas k0 .. k0 + n - 1: the service is brought up
 * to now once, before the first clock is written, as the first good call
 * of the loop would (none: no advance, as none of the loop's). */
static int fl_set_clocks(inf_service *s, uint32_t k0, uint32_t n,
                         const double *phi) {
  uint32_t i = 0;
  while (i < n && !(k0 + i < s->nrep && good_phi(phi[i])))
    i++;
  if (i == n)
    return n == 0 ? SIM_OK : SIM_EINVAL;
  int rc = i > 0 ? SIM_EINVAL : SIM_OK;
  advance(s);
  double *to = s->fluid->phi + k0;
  /* The usual case, every clock good and in range: checked sixteen or
   * eight at a time and copied at once; the rest, if any, one by one. */
  uint32_t m = k0 < s->nrep ? s->nrep - k0 : 0;
  m = m < n ? m : n;
#ifdef SIM_LANES_AVX2
  if (sim_lanes_wide())
    i = copy_good_quads(to, phi, i, m);
#endif
  i = copy_good(to, phi, i, m);
  while (i < m && good_bits(sim_bits(phi[i]))) {
    to[i] = phi[i];
    i++;
  }
  for (; i < n; i++) {
    if (k0 + i < s->nrep && good_phi(phi[i]))
      to[i] = phi[i];
    else if (rc == SIM_OK)
      rc = SIM_EINVAL;
  }
  return rc != SIM_OK ? rc : s->rc;
}

/* A replica going down loses its queue and its batch (dropped). */
static int fl_set_down(inf_service *s, uint32_t k, bool down) {
  if (k >= s->nrep)
    return SIM_EINVAL;
  inf_fluid *f = s->fluid;
  if ((inf__grp(f, k)->st.down != 0) == down)
    return SIM_OK;
  advance(s);
  inf__took_settle(f);
  fstate r = inf__rep_state(f, k);
  if (down) {
    f->dropped += r.waiting + r.in_batch;
    r.backlog = r.waiting = r.in_batch = 0;
  }
  r.down = down;
  inf__rep_alone(f, k, &r);
  f->nup += down ? -1u : 1u;
  return s->rc;
}

static bool fl_down(const inf_service *s, uint32_t k) {
  return k < s->nrep && inf__grp(s->fluid, k)->st.down != 0;
}

/* 1 / span, kept: every replica of a service is usually asked over the
 * same span, one after another. */
static double inverse(inf_fluid *f, double span) {
  if (!(span == f->inv_for)) {
    f->inv = 1 / span;
    f->inv_for = span;
  }
  return f->inv;
}

/* Group g's load taken now, worked out by the first member asked. */
static gpu_load group_take(inf_fluid *f, fgrp *g) {
  if (!(g->take_at == f->clock_s)) { /* the first of its group now */
    const fstate *r = &g->st;
    double span = f->clock_s - r->act_since;
    g->t_last = r->last_act;
    g->t_comp = r->comp_mean;
    if (span > 0) {
      g->t_last = gpu_load_scale(r->act_int, inverse(f, span));
      g->t_comp = r->comp_int / span;
    }
    g->take_at = f->clock_s;
  }
  return g->t_last;
}

static gpu_load fl_take_load(inf_service *s, uint32_t k) {
  if (k >= s->nrep)
    return (gpu_load){NAN, NAN, NAN};
  advance(s);
  inf_fluid *f = s->fluid;
  inf__took_range(f, 0, 0, f->clock_s); /* an empty range: all written */
  f->took[k] = f->clock_s;
  return group_take(f, inf__grp(f, k));
}

/* The end (past i, at most m) of the stretch of replicas k0 + i .. that
 * share one group's load and shares: a run (the replicas of a group are
 * mostly next to one another), or while the next replica is of the same
 * group. */
static uint32_t stretch_end(const inf_service *s, uint32_t k0, uint32_t i,
                            uint32_t m) {
  inf_fluid *f = s->fluid;
  if (f->runs_ok) {
    uint32_t end = inf__run_end(f, inf__run_of(f, k0 + i), s->nrep) - k0;
    return end < m ? end : m;
  }
  const uint32_t *of = f->of + k0;
  uint32_t e = i + 1;
  while (e < m && of[e] == of[i])
    e++;
  return e;
}

/* A take of replicas k0 .. k0 + n - 1 begun: one advance, their took
 * kept as a range. How many of them are replicas (the rest read NaN). */
static uint32_t take_begin(inf_service *s, uint32_t k0, uint32_t n) {
  uint32_t m = k0 < s->nrep ? s->nrep - k0 : 0;
  m = m < n ? m : n;
  if (m == 0)
    return 0;
  advance(s);
  inf__took_range(s->fluid, k0, k0 + m, s->fluid->clock_s);
  return m;
}

/* fl_take_load of replicas k0 .. k0 + n - 1 (take_begin), a group's
 * load read once a stretch of its members (stretch_end). */
static void fl_take_loads(inf_service *s, uint32_t k0, uint32_t n,
                          gpu_load *out) {
  uint32_t m = take_begin(s, k0, n);
  for (uint32_t i = m; i < n; i++)
    out[i] = (gpu_load){NAN, NAN, NAN};
  inf_fluid *f = s->fluid;
  for (uint32_t i = 0, e; i < m; i = e) {
    e = stretch_end(s, k0, i, m);
    inf__fill_loads(out, i, e, group_take(f, &f->grp[f->of[k0 + i]]));
  }
}

uint32_t inf_fluid_take_stretches(inf_service *s, uint32_t k0, uint32_t n,
                                  uint32_t *end, gpu_load *l) {
  uint32_t m = take_begin(s, k0, n), c = 0;
  inf_fluid *f = s->fluid;
  for (uint32_t i = 0; i < m; i = end[c++]) {
    end[c] = stretch_end(s, k0, i, m);
    l[c] = group_take(f, &f->grp[f->of[k0 + i]]);
  }
  if (m < n) {
    end[c] = n;
    l[c++] = (gpu_load){NAN, NAN, NAN};
  }
  return c;
}

static double fl_compute_share(const inf_service *s, uint32_t k) {
  if (k >= s->nrep)
    return 0;
  inf__took_settle(s->fluid);
  const fgrp *g = inf__grp(s->fluid, k);
  return inf__took(s->fluid, k) ? g->t_comp : g->st.comp_mean;
}

/* Replicas k0 + i .. k0 + e - 1 of group gr's compute shares: one value
 * where all were taken at once (the range), else by each one's took. */
static void shares_of(const inf_fluid *f, const fgrp *gr, uint32_t k0,
                      uint32_t i, uint32_t e, double *out) {
  double at = gr->take_at, taken = gr->t_comp, kept = gr->st.comp_mean;
  if (k0 + i >= f->tr_lo && k0 + e <= f->tr_hi) {
    inf__fill_shares(out, i, e, f->tr_at == at ? taken : kept);
    return;
  }
  for (; i < e; i++)
    out[i] = inf__took_at(f, k0 + i) == at ? taken : kept;
}

/* fl_compute_share of replicas k0 .. k0 + n - 1, a stretch of one
 * group's members at a time (a run, or while the next replica is of the
 * same group): the group's two shares read once. */
static void fl_compute_shares(const inf_service *s, uint32_t k0, uint32_t n,
                              double *out) {
  inf_fluid *f = s->fluid;
  inf__took_settle(f);
  uint32_t m = k0 < s->nrep ? s->nrep - k0 : 0;
  m = m < n ? m : n;
  for (uint32_t i = m; i < n; i++)
    out[i] = 0;
  for (uint32_t i = 0, e; i < m; i = e) {
    e = stretch_end(s, k0, i, m);
    shares_of(f, &f->grp[f->of[k0 + i]], k0, i, e, out);
  }
}

static double ratio(double num, double den) {
  return den > 0 ? num / den : NAN;
}

/* The replicas' waiting requests summed in replica order. A run's
 * replicas share their group's value: its adds in a tight loop, none
 * when it is a zero (adding one leaves the sum's bits: a sum from +0 is
 * never -0). */
static double waiting_sum(const inf_service *s) {
  inf_fluid *f = s->fluid;
  double sum = 0;
  if (!f->runs_ok) {
    for (uint32_t k = 0; k < s->nrep; k++)
      sum += inf__grp(f, k)->st.waiting;
    return sum;
  }
  for (uint32_t i = 0; i < f->nrun; i++) {
    double x = f->grp[f->run[i].g].st.waiting;
    uint32_t e = inf__run_end(f, i, s->nrep);
    for (uint32_t k = x != 0 ? f->run[i].k0 : e; k < e; k++)
      sum += x;
  }
  return sum;
}

static void fl_sample(inf_service *s, double dt, double *row) {
  advance(s);
  inf_fluid *f = s->fluid;
  double waiting = waiting_sum(s);
  const fl_interval *iv = &f->iv;
  row[INF_REQUESTS_PER_S] = ratio(iv->served, dt);
  row[INF_ARRIVALS_PER_S] = ratio(iv->arrivals, dt);
  row[INF_TOKENS_PER_S] = ratio(iv->tokens, dt);
  row[INF_QUEUE] = waiting;
  row[INF_BATCH] = ratio(iv->batch_s, dt * s->nrep);
  /* Each p99 goes on from its p50's bin (the scan before it the same). */
  wh_scan at = inf__wh_scan(&f->bins, &f->ttft_iv);
  row[INF_TTFT_P50] = inf__wh_quantile(&f->ttft_iv, 0.5, &at);
  row[INF_TTFT_P99] = inf__wh_quantile(&f->ttft_iv, 0.99, &at);
  at = inf__wh_scan(&f->bins, &f->tpot_iv);
  row[INF_TPOT_P50] = inf__wh_quantile(&f->tpot_iv, 0.5, &at);
  row[INF_TPOT_P99] = inf__wh_quantile(&f->tpot_iv, 0.99, &at);
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
static inf_totals fl_totals(const inf_service *s) {
  const inf_fluid *f = s->fluid;
  double waiting = 0, in_batch = 0;
  for (uint32_t k = 0; k < s->nrep; k++) {
    waiting += inf__grp(f, k)->st.waiting;
    in_batch += inf__grp(f, k)->st.in_batch;
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

static double fl_quantile(const inf_service *s, bool ttft, double q) {
  const inf_fluid *f = s->fluid;
  const wt_hist *h = ttft ? &f->ttft_run : &f->tpot_run;
  wh_scan at = inf__wh_scan(&f->bins, h);
  return inf__wh_quantile(h, q, &at);
}

const inf_ops inf__fluid_ops = {
    .start = fl_start,
    .free = fl_free,
    .set_clock = fl_set_clock,
    .set_down = fl_set_down,
    .down = fl_down,
    .take_load = fl_take_load,
    .set_clocks = fl_set_clocks,
    .take_loads = fl_take_loads,
    .compute_shares = fl_compute_shares,
    .compute_share = fl_compute_share,
    .sample = fl_sample,
    .totals = fl_totals,
    .quantile = fl_quantile,
};
