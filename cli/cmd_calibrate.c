/* cmd_calibrate.c - `aifsim calibrate SCENARIO MEASURED.csv --fit KEY...`:
 * fits scenario keys to a meter's power series by nonlinear least squares
 * (GSL's multifit_nlinear, trust region with Levenberg-Marquardt steps),
 * running the simulator through the library for every trial value. The
 * series' first rows are fitted, its last --holdout share held out and
 * only scored (ASHRAE Guideline 14's CV(RMSE) and NMBE). Writes an overlay
 * that --set-file applies (docs/CALIBRATION.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_multifit_nlinear.h>

#include "cmd_calibrate.h"
#include "cmd_internal.h"
#include "factory.h"
#include "runfile.h"
#include "scenario.h"
#include "sig.h"

enum { MAX_FIT = 16 };

typedef struct cal_param {
  char key[256];
  units_dim dim;
  double start, value, se;
} cal_param;

typedef struct cal_args {
  const char *scenario, *measured, *out, *column, *start;
  const char *sets[MAX_SETS + 1];
  size_t nsets;
  const char *fit[MAX_FIT];
  size_t nfit;
  double holdout;
} cal_args;

typedef struct cal_ctx {
  const cal_args *args;
  cal_param par[MAX_FIT];
  size_t np;
  ms_series s;
  double *sim, scale;
  const char *sets[MAX_SETS + MAX_FIT + 1];
  char text[MAX_FIT][320];
  size_t runs;
  sim_error err;
  bool bad_input;
} cal_ctx;

/* ------------------------------------------------------------------ */
/* Arguments                                                           */
/* ------------------------------------------------------------------ */

static int need(int argc, char **argv, int i) {
  return i + 1 < argc ? 0 : cmd__usage_error("%s needs a value", argv[i]);
}

static int parse_holdout(cal_args *c, const char *v) {
  units_problem pr;
  double f;
  if (units_parse(v, UNITS_FRACTION, &f, &pr) != 0 || f <= 0 || f >= 0.9)
    return cmd__usage_error("--holdout takes a share of the rows above 0 "
                            "and below 90%%, e.g. 25%%, not '%s'", v);
  c->holdout = f;
  return 0;
}

static int parse_one(cal_args *c, int argc, char **argv, int *i) {
  const char *a = argv[*i];
  if (strcmp(a, "--fit") == 0) {
    int n0 = (int)c->nfit;
    while (*i + 1 < argc && argv[*i + 1][0] != '-' && c->nfit < MAX_FIT)
      c->fit[c->nfit++] = argv[++*i];
    return (int)c->nfit > n0 ? 0
                             : cmd__usage_error("%s", "--fit needs one or "
                                                "more KEY or KEY=START "
                                                "(at most 16)");
  }
  static const char *const valued[] = {"--set", "--set-file", "-o",
                                       "--column", "--start", "--holdout"};
  size_t k = 0;
  while (k < 6 && strcmp(a, valued[k]) != 0)
    k++;
  if (k == 6)
    return a[0] == '-' ? cmd__usage_error("unknown option '%s'", a)
           : c->scenario == NULL ? (c->scenario = a, 0)
           : c->measured == NULL ? (c->measured = a, 0)
                                 : cmd__usage_error("unexpected argument "
                                                    "'%s'", a);
  if (need(argc, argv, *i) != 0)
    return EXIT_BAD_INPUT;
  const char *v = argv[++*i];
  if (k == 0)
    return c->nsets < MAX_SETS ? (c->sets[c->nsets++] = v, 0)
                               : cmd__usage_error("more than %s --set "
                                                  "options", "256");
  if (k == 1)
    return cmd__set_file(c->sets, &c->nsets, v);
  if (k == 5)
    return parse_holdout(c, v);
  *(k == 2 ? &c->out : k == 3 ? &c->column : &c->start) = v;
  return 0;
}

static int parse_args(cal_args *c, int argc, char **argv) {
  memset(c, 0, sizeof *c);
  c->holdout = 0.25;
  for (int i = 2; i < argc; i++) {
    int rc = parse_one(c, argc, argv, &i);
    if (rc != 0)
      return rc;
  }
  if (c->scenario == NULL || c->measured == NULL || c->nfit == 0)
    return cmd__usage_error("%s", "calibrate needs SCENARIO MEASURED.csv "
                            "--fit KEY...");
  return 0;
}

/* ------------------------------------------------------------------ */
/* The keys to fit                                                     */
/* ------------------------------------------------------------------ */

/* A value's dimension: the first whose units read the text. */
static int read_quantity(const char *text, units_dim *dim, double *v) {
  units_problem pr;
  for (int d = 0; d < UNITS_NDIMS; d++)
    if (units_parse(text, (units_dim)d, v, &pr) == 0) {
      *dim = (units_dim)d;
      return 0;
    }
  return -1;
}

/* "KEY=VALUE" with the value in canonical units at full precision. */
static void set_text(char *buf, size_t size, const cal_param *p, double v) {
  const char *u = units_canonical(p->dim);
  snprintf(buf, size, "%s=%.17g%s%s", p->key, v, u[0] ? " " : "", u);
}

static int bad_key(const char *key, const char *why) {
  fprintf(stderr, "aifsim: calibrate: --fit %s: %s\n", key, why);
  return EXIT_BAD_INPUT;
}

/* One --fit KEY[=START]: its start from the text or the resolved
 * scenario. */
static int take_param(const char *spec, scn_doc *resolved, cal_param *p) {
  size_t klen = strcspn(spec, "=");
  if (klen == 0 || klen >= sizeof p->key)
    return bad_key(spec, "expected KEY or KEY=START");
  memcpy(p->key, spec, klen);
  p->key[klen] = '\0';
  const char *text = spec[klen] == '=' ? spec + klen + 1
                                       : scn_doc_scalar(resolved, p->key);
  if (text == NULL)
    return bad_key(p->key, "the scenario has no value there (an unknown "
                   "key, or one left to a default it computes); fit a key "
                   "of a number or quantity, or give a start: --fit "
                   "KEY=VALUE");
  if (read_quantity(text, &p->dim, &p->start) != 0)
    return bad_key(p->key, "not a number or a quantity, so it cannot be "
                   "fitted");
  if (!(p->start > 0) || !isfinite(p->start))
    return bad_key(p->key, "the fit scales a positive value; give a start "
                   "above 0: --fit KEY=VALUE");
  p->value = p->start;
  return 0;
}

/* Loads the scenario with the sets and every start, so an unknown key or
 * a start it refuses is reported before any fit; reads the starts, the
 * run's start and length. */
static int load_params(cal_ctx *x, double *start_utc, double *duration_s) {
  const cal_args *c = x->args;
  factory_scenario sc;
  sim_error err = {0};
  int rc = factory_scenario_load(c->scenario, c->sets, c->nsets, &sc, &err);
  if (rc != SIM_OK)
    return cmd__report(&err);
  scn_doc *doc = scn_doc_read_string("resolved", sc.resolved,
                                     strlen(sc.resolved), &err);
  const char *start = factory_start_utc(&sc.cfg);
  *start_utc = NAN;
  if (start != NULL)
    sig_parse_time(start, start_utc, NULL);
  *duration_s = sc.cfg.duration_s;
  factory_scenario_release(&sc);
  if (doc == NULL)
    return cmd__report(&err);
  for (x->np = 0; rc == 0 && x->np < c->nfit; x->np++)
    rc = take_param(c->fit[x->np], doc, &x->par[x->np]);
  scn_doc_destroy(doc);
  if (rc != 0)
    return rc;
  for (size_t j = 0; j < x->np; j++) {
    set_text(x->text[j], sizeof x->text[j], &x->par[j], x->par[j].start);
    x->sets[c->nsets + j] = x->text[j];
  }
  rc = factory_scenario_load(c->scenario, x->sets, c->nsets + x->np, &sc,
                             &err);
  if (rc != SIM_OK)
    return cmd__report(&err);
  factory_scenario_release(&sc);
  return 0;
}

/* ------------------------------------------------------------------ */
/* The fit                                                             */
/* ------------------------------------------------------------------ */

/* Runs the scenario at values start * exp(x) into x->sim: fitting the
 * logarithm keeps every value positive, and each of the same order. */
static int simulate_at(cal_ctx *x, const gsl_vector *v) {
  for (size_t j = 0; j < x->np; j++) {
    cal_param *p = &x->par[j];
    p->value = p->start * exp(gsl_vector_get(v, j));
    set_text(x->text[j], sizeof x->text[j], p, p->value);
  }
  x->runs++;
  return ms_simulate(x->args->scenario, x->sets, x->args->nsets + x->np,
                     &x->s, x->sim, &x->bad_input, &x->err);
}

static int residual(const gsl_vector *v, void *ctx, gsl_vector *f) {
  cal_ctx *x = ctx;
  if (simulate_at(x, v) != SIM_OK)
    return GSL_EBADFUNC;
  for (size_t i = 0; i < x->s.nfit; i++)
    gsl_vector_set(f, i, (x->sim[i] - x->s.w[i]) / x->scale);
  return GSL_SUCCESS;
}

/* The standard errors from the covariance at the solution, scaled by the
 * residual variance and carried through the logarithm; then the solution
 * run again into x->sim (the last run may have been a trial step). */
static int finish_fit(cal_ctx *x, gsl_multifit_nlinear_workspace *w,
                      gsl_matrix *cov) {
  size_t n = x->s.nfit, p = x->np;
  double chi2;
  gsl_blas_ddot(w->f, w->f, &chi2);
  gsl_multifit_nlinear_covar(w->J, 0.0, cov);
  double var = n > p ? chi2 / (double)(n - p) : NAN;
  gsl_vector *sol = gsl_multifit_nlinear_position(w);
  for (size_t j = 0; j < p; j++)
    x->par[j].se = x->par[j].start * exp(gsl_vector_get(sol, j)) *
                   sqrt(gsl_matrix_get(cov, j, j) * var);
  return simulate_at(x, sol) == SIM_OK ? GSL_SUCCESS : GSL_EBADFUNC;
}

/* Fits; the standard errors from the covariance at the solution, scaled
 * by the residual variance. The iterations in *iters. */
static int fit(cal_ctx *x, size_t *iters) {
  size_t n = x->s.nfit, p = x->np;
  gsl_multifit_nlinear_fdf fdf = {.f = residual, .n = n, .p = p,
                                  .params = x};
  gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
  /* A run's power moves in steps of its events: a difference step of
   * 0.1% of the value reads the slope, not that grain. */
  fp.h_df = 1e-3;
  gsl_multifit_nlinear_workspace *w =
      gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, n, p);
  gsl_vector *x0 = gsl_vector_calloc(p);
  gsl_matrix *cov = gsl_matrix_alloc(p, p);
  int info, rc = w != NULL && x0 != NULL && cov != NULL ? GSL_SUCCESS
                                                         : GSL_ENOMEM;
  if (rc == GSL_SUCCESS)
    rc = gsl_multifit_nlinear_init(x0, &fdf, w);
  if (rc == GSL_SUCCESS)
    rc = gsl_multifit_nlinear_driver(60, 1e-6, 1e-8, 1e-10, NULL, NULL,
                                     &info, w);
  if (rc == GSL_SUCCESS || rc == GSL_EMAXITER) {
    *iters = gsl_multifit_nlinear_niter(w);
    if (rc == GSL_EMAXITER)
      fprintf(stderr, "aifsim: calibrate: the fit stopped after %zu "
              "iterations before it converged\n", *iters);
    rc = finish_fit(x, w, cov);
  }
  if (w != NULL)
    gsl_multifit_nlinear_free(w);
  gsl_vector_free(x0);
  gsl_matrix_free(cov);
  return rc;
}

/* ------------------------------------------------------------------ */
/* What it prints and writes                                           */
/* ------------------------------------------------------------------ */

static const char *utc(double utc_s, char *buf) {
  return runfile_utc_text(utc_s, buf, 40) != NULL ? buf : "?";
}

static void put_metrics(FILE *f, const char *indent, const ms_metrics *m,
                        const char *res) {
  if (m->n < 2) {
    fprintf(f, "%s%s: {rows: %zu}\n", indent, res, m->n);
    return;
  }
  fprintf(f, "%s%s: {rows: %zu, cv_rmse: %.4g%%, nmbe: %.4g%%, "
          "mape: %.4g%%}\n", indent, res, m->n, 100 * m->cv_rmse,
          100 * m->nmbe, 100 * m->mape);
}

/* A span's record: its time, rows and metrics at the meter's interval and
 * hourly. */
static void put_span(FILE *f, const cal_ctx *x, const char *name, size_t a,
                     size_t b) {
  char t0[40], t1[40];
  const ms_series *s = &x->s;
  fprintf(f, "  %s:\n    from: \"%s\"\n    to: \"%s\"\n", name,
          utc(s->start_utc + s->t[a], t0),
          utc(s->start_utc + s->t[b - 1] + s->len[b - 1], t1));
  ms_metrics m = ms_metrics_of(s, x->sim, a, b, false);
  ms_metrics h = ms_metrics_of(s, x->sim, a, b, true);
  put_metrics(f, "    ", &m, "interval");
  put_metrics(f, "    ", &h, "hourly");
}

static void put_overlay(FILE *f, const cal_ctx *x, size_t iters) {
  const cal_args *c = x->args;
  char b[64];
  fprintf(f, "# A calibration overlay written by aifsim calibrate "
          "(docs/CALIBRATION.md).\n# Apply it: aifsim run %s --set-file "
          "THIS_FILE\nset:\n", c->scenario);
  for (size_t j = 0; j < x->np; j++)
    fprintf(f, "  %s: %s\n", x->par[j].key, strchr(x->text[j], '=') + 1);
  fprintf(f, "calibration:\n  scenario: \"%s\"\n  measured: \"%s\"\n"
          "  column: \"%s\"\n  start_utc: \"%s\"\n  sets: [", c->scenario,
          c->measured, x->s.column, utc(x->s.start_utc, b));
  for (size_t i = 0; i < c->nsets; i++)
    fprintf(f, "%s\"%s\"", i ? ", " : "", c->sets[i]);
  fprintf(f, "]\n  iterations: %zu\n  runs: %zu\n  keys:\n", iters, x->runs);
  for (size_t j = 0; j < x->np; j++) {
    const cal_param *p = &x->par[j];
    const char *u = units_canonical(p->dim), *sp = u[0] ? " " : "";
    fprintf(f, "    %s: {start: %.10g%s%s, value: %.10g%s%s, std_error: "
            "%.4g%s%s}\n", p->key, p->start, sp, u, p->value, sp, u,
            p->se, sp, u);
  }
  double ss = 0;
  for (size_t i = 0; i < x->s.nfit; i++)
    ss += (x->sim[i] - x->s.w[i]) * (x->sim[i] - x->s.w[i]);
  fprintf(f, "  residual_rms: %.6g W\n", sqrt(ss / (double)x->s.nfit));
  put_span(f, x, "fit", 0, x->s.nfit);
  put_span(f, x, "held_out", x->s.nfit, x->s.n);
}

/* Writes the overlay through OUT.partial, so nothing half-written is left
 * at OUT. */
static int write_overlay(const cal_ctx *x, const char *out, size_t iters) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.partial", out) >= (int)sizeof tmp)
    return cmd__usage_error("%s", "-o: the path is too long");
  FILE *f = fopen(tmp, "w");
  if (f == NULL) {
    fprintf(stderr, "aifsim: %s: %s\n", tmp, strerror(errno));
    return EXIT_BAD_INPUT;
  }
  put_overlay(f, x, iters);
  if (ferror(f) | fclose(f) || rename(tmp, out) != 0) {
    fprintf(stderr, "aifsim: %s: %s\n", out, strerror(errno));
    remove(tmp);
    return EXIT_RUN_FAILED;
  }
  return 0;
}

static void print_span(const cal_ctx *x, const char *name, size_t a,
                       size_t b) {
  ms_metrics m = ms_metrics_of(&x->s, x->sim, a, b, false);
  ms_metrics h = ms_metrics_of(&x->s, x->sim, a, b, true);
  printf("%-9s %5zu rows: CV(RMSE) %6.2f%%  NMBE %+6.2f%%  MAPE %6.2f%%",
         name, m.n, 100 * m.cv_rmse, 100 * m.nmbe, 100 * m.mape);
  if (h.n >= 2)
    printf("   hourly (%zu h): CV(RMSE) %.2f%% %s, NMBE %+.2f%% %s", h.n,
           100 * h.cv_rmse, h.cv_rmse <= 0.30 ? "<= 30% ok" : "> 30% FAIL",
           100 * h.nmbe, fabs(h.nmbe) <= 0.10 ? "within 10% ok" : "FAIL");
  printf("\n");
}

static void print_result(const cal_ctx *x, const char *out, size_t iters) {
  printf("calibrate: %zu keys on %zu rows of %s (held out: %zu rows), "
         "%zu iterations, %zu runs\n", x->np, x->s.nfit, x->s.column,
         x->s.n - x->s.nfit, iters, x->runs);
  for (size_t j = 0; j < x->np; j++) {
    const cal_param *p = &x->par[j];
    const char *u = units_canonical(p->dim);
    printf("  %-40s %.6g%s%s +- %.3g (start %.6g)\n", p->key, p->value,
           u[0] ? " " : "", u, p->se, p->start);
  }
  print_span(x, "fit", 0, x->s.nfit);
  print_span(x, "held out", x->s.nfit, x->s.n);
  printf("wrote %s\n", out);
}

/* ------------------------------------------------------------------ */

/* The series, its fit and held-out spans, and its scale. */
static int read_series(cal_ctx *x, double start_utc, double duration_s) {
  const cal_args *c = x->args;
  sim_error err = {0};
  if (c->start != NULL && sig_parse_time(c->start, &start_utc, NULL) != 0)
    return cmd__usage_error("--start takes a time such as "
                            "2026-07-01T00:00:00Z, not '%s'", c->start);
  if (ms_read(c->measured, c->column, start_utc, duration_s, &x->s, &err) !=
      SIM_OK)
    return cmd__report(&err);
  size_t held = (size_t)ceil(c->holdout * (double)x->s.n);
  x->s.nfit = x->s.n - (held < 2 ? 2 : held);
  if (x->s.n < 2 + x->np + 1 || x->s.nfit <= x->np) {
    fprintf(stderr, "aifsim: calibrate: %zu rows overlap the run: too few "
            "to fit %zu keys and hold out %.0f%%\n", x->s.n, x->np,
            100 * c->holdout);
    return EXIT_BAD_INPUT;
  }
  x->scale = 0;
  for (size_t i = 0; i < x->s.nfit; i++)
    x->scale += x->s.w[i] / (double)x->s.nfit;
  if (!(x->scale > 0))
    x->scale = 1;
  if (x->s.dropped > 0)
    fprintf(stderr, "aifsim: calibrate: %zu rows of %s fall outside the "
            "run and are not used\n", x->s.dropped, c->measured);
  return (x->sim = calloc(x->s.n, sizeof *x->sim)) != NULL
             ? 0
             : cmd__usage_error("%s", "out of memory");
}

static const char *default_out(const char *measured, char *buf, size_t n) {
  size_t len = strlen(measured);
  if (len > 4 && strcmp(measured + len - 4, ".csv") == 0)
    len -= 4;
  snprintf(buf, n, "%.*s.overlay.yaml", (int)len, measured);
  return buf;
}

int cmd__calibrate(int argc, char **argv) {
  static cal_args c;
  static cal_ctx x;
  double start_utc = NAN, duration_s = 0;
  size_t iters = 0;
  char out[4096];
  int rc = parse_args(&c, argc, argv);
  x.args = &c;
  memcpy(x.sets, c.sets, c.nsets * sizeof *c.sets);
  if (rc == 0)
    rc = load_params(&x, &start_utc, &duration_s);
  if (rc == 0)
    rc = read_series(&x, start_utc, duration_s);
  if (rc == 0 && fit(&x, &iters) != GSL_SUCCESS) {
    if (x.err.code == SIM_OK)
      sim_error_set(&x.err, SIM_ESTATE, "calibrate: the fit failed");
    fprintf(stderr, "aifsim: %s\n", x.err.msg);
    rc = x.bad_input ? EXIT_BAD_INPUT : EXIT_RUN_FAILED;
  }
  if (c.out == NULL)
    c.out = default_out(c.measured != NULL ? c.measured : "", out,
                        sizeof out);
  if (rc == 0)
    rc = write_overlay(&x, c.out, iters);
  if (rc == 0)
    print_result(&x, c.out, iters);
  ms_free(&x.s);
  free(x.sim);
  return rc;
}
