/* arrivals_window.c - a generator's expected arrivals over a span
 * (arr_window_take): the rate's integral and the lengths' moments, for
 * the fluid mode, which takes rates instead of requests. */
#include "arrivals.h"
#include "arrivals_internal.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

/* ------------------------------------------------------------------ */
/* Windows (arr_window_take): rates instead of requests                */
/* ------------------------------------------------------------------ */

/* Draws below 1.5 round to 1 (or are clamped up to it); the others
 * round to the nearest integer, which on average adds nothing to the
 * mean and 1/12 to the mean square. The partial moments of a lognormal
 * above a: E[X; X > a] = m Q((ln a - mu - s^2) / s), E[X^2; X > a] =
 * m^2 e^(s^2) Q((ln a - mu - 2 s^2) / s). */
void arr_length_moments(const arr_length *l, double *mean, double *mean_sq,
                        double *share_one) {
  double m = l->mean, s = l->sigma;
  if (l->dist != ARR_LOGNORMAL || !(s > 0)) {
    double n = fmax(1, (double)llround(m));
    *mean = n;
    *mean_sq = n * n;
    *share_one = n == 1;
    return;
  }
  double mu = log(m) - 0.5 * s * s, a = log(1.5);
  double low = gsl_cdf_ugaussian_P((a - mu) / s);
  *share_one = low;
  *mean = low + m * gsl_cdf_ugaussian_Q((a - mu - s * s) / s);
  *mean_sq = low + m * m * exp(s * s) *
                       gsl_cdf_ugaussian_Q((a - mu - 2 * s * s) / s) +
             (1 - low) / 12;
}

double arr_rate_integral(const arr_config *c, double t0_s, double t1_s) {
  if (c->profile != ARR_DIURNAL)
    return c->rate * (t1_s - t0_s);
  double w = 2 * PI / DAY_S, half = 0.5 * (c->high - c->low);
  double sine = sin(w * (t1_s - c->peak_s)) - sin(w * (t0_s - c->peak_s));
  double s = (c->low + half) * (t1_s - t0_s) + half * sine / w;
  return c->rate * s / (0.5 * (c->low + c->high));
}

/* The expected share of requests with prompt + output above limit, by
 * quadrature over 16 equal-probability nodes of the output length. */
static double share_over(const arr_config *c, double limit) {
  const arr_length *p = &c->prompt, *o = &c->output;
  double over = 0;
  for (int i = 0; i < 16; i++) {
    double u = (i + 0.5) / 16, on = o->mean;
    if (o->dist == ARR_LOGNORMAL && o->sigma > 0)
      on = gsl_cdf_lognormal_Pinv(u, log(o->mean) - 0.5 * o->sigma * o->sigma,
                                  o->sigma);
    double room = limit - fmax(1, on);
    if (p->dist == ARR_LOGNORMAL && p->sigma > 0)
      over += room <= 0 ? 1
                        : gsl_cdf_lognormal_Q(
                              room, log(p->mean) - 0.5 * p->sigma * p->sigma,
                              p->sigma);
    else
      over += fmax(1, p->mean) > room;
  }
  return over / 16;
}

static bool same_lengths(const arr_length kept[2], const arr_config *c) {
  return memcmp(&kept[0], &c->prompt, sizeof c->prompt) == 0 &&
         memcmp(&kept[1], &c->output, sizeof c->output) == 0;
}

static void keep_lengths(arr_length kept[2], const arr_config *c) {
  memcpy(&kept[0], &c->prompt, sizeof c->prompt);
  memcpy(&kept[1], &c->output, sizeof c->output);
}

/* share_over(c, limit), from the last call's when its inputs are the
 * same bits. */
static double share_over_kept(arr_gen *g, double limit) {
  const arr_config *c = g->c;
  if (!g->have_over || memcmp(&g->over_limit, &limit, sizeof limit) != 0 ||
      !same_lengths(g->over_for, c)) {
    g->over_share = share_over(c, limit);
    g->over_limit = limit;
    keep_lengths(g->over_for, c);
    g->have_over = true;
  }
  return g->over_share;
}

/* The synthetic kinds' lengths: the distributions' moments. */
static void synthetic_lengths(arr_gen *g, double limit, arr_window *w) {
  const arr_config *c = g->c;
  if (!g->have_lengths || !same_lengths(g->len_for, c)) {
    double one_p;
    arr_length_moments(&c->prompt, &g->len[0], &g->len[1], &one_p);
    arr_length_moments(&c->output, &g->len[2], &g->len[3], &g->len[4]);
    keep_lengths(g->len_for, c);
    g->have_lengths = true;
  }
  w->prompt_mean = g->len[0];
  w->prompt_sq = g->len[1];
  w->output_mean = g->len[2];
  w->output_sq = g->len[3];
  w->output_one = g->len[4];
  w->over = w->count > 0 ? w->count * share_over_kept(g, limit) : 0;
}

/* The MMPP's expected arrivals along its state path up to t1, drawing
 * each next sojourn as next_mmpp does when its state ends. */
static double mmpp_integral(arr_gen *g, double t1) {
  const arr_config *c = g->c;
  double n = 0;
  while (g->state_end < t1) {
    n += (g->state == 0 ? c->rate1 : c->rate2) * (g->state_end - g->t);
    g->t = g->state_end;
    g->state ^= 1;
    g->state_end +=
        arr_exponential(taus(g, ARR_RNG_STATE), sojourn(c, g->state));
  }
  n += (g->state == 0 ? c->rate1 : c->rate2) * (t1 - g->t);
  g->t = t1;
  return n;
}

/* Adds the rows of a trace arriving before t1 to w's sums (means still
 * to divide); the generator's cursor moves past them. */
static void trace_rows(arr_gen *g, double t1, double limit, arr_window *w) {
  for (;;) {
    if (g->next == g->tr.n) {
      if (!g->c->loop)
        return;
      g->next = 0;
      g->offset += g->period;
    }
    size_t i = g->next;
    if (!(g->offset + g->tr.t[i] * g->c->time_scale < t1))
      return;
    g->next++;
    double p = (double)(g->tr.prompt[i] < 0 ? 0 : g->tr.prompt[i]);
    double o = (double)(g->tr.output[i] < 1 ? 1 : g->tr.output[i]);
    w->count++;
    if (p + o > limit) {
      w->over++;
      continue;
    }
    w->prompt_mean += p;
    w->prompt_sq += p * p;
    w->output_mean += o;
    w->output_sq += o * o;
    w->output_one += o == 1;
  }
}

static void trace_window(arr_gen *g, double t1, double limit, arr_window *w) {
  trace_rows(g, t1, limit, w);
  double n = w->count - w->over;
  w->prompt_mean /= n; /* NaN without rows, as documented */
  w->prompt_sq /= n;
  w->output_mean /= n;
  w->output_sq /= n;
  w->output_one /= n;
}

void arr_window_take(arr_gen *g, double t0_s, double t1_s, double limit,
                     arr_window *w) {
  *w = (arr_window){0};
  const arr_config *c = g->c;
  if (c->kind == ARR_TRACE) {
    trace_window(g, t1_s, limit, w);
    return;
  }
  w->count = c->kind == ARR_MMPP ? mmpp_integral(g, t1_s)
                                 : arr_rate_integral(c, t0_s, t1_s);
  synthetic_lengths(g, limit, w);
}
