/* test_cooling_step.c - the loop's own RK8PD step (cooling_rk8pd.h) is
 * GSL's to the bit, and a loop's steps, where they take it, are those of
 * GSL's driver alone (cool__loop_set_plain) to the bit. */
#include "test_cooling_loop.h"

#include <gsl/gsl_odeiv2.h>

#include "cooling_internal.h"
#include "cooling_rk8pd.h"

/* ------------------------------------------------------------------ */
/* One step against gsl_odeiv2_step_rk8pd                              */
/* ------------------------------------------------------------------ */

/* Right-hand sides with a term of each kind: linear, products, a kink,
 * a sine, signs that cancel and a constant 0 (its sums' signed zeros). */
static int rhs_mixed(double t, const double y[], double dydt[], void *p) {
  const double *a = p;
  dydt[0] = a[0] * (a[1] - y[0]);
  dydt[1] = y[0] * y[1] * a[2] - sin(t + y[2]);
  dydt[2] = fmax(0, y[0] - a[3]) - 0.5 * y[2];
  dydt[3] = -y[3] * y[3] + a[4] * t;
  dydt[4] = 0 * y[4];
  return GSL_SUCCESS;
}

static int rhs_stiffish(double t, const double y[], double dydt[], void *p) {
  const double *a = p;
  (void)t;
  for (size_t i = 0; i < RK8PD_DIM; i++)
    dydt[i] = -a[i] * (y[i] - (i > 0 ? y[i - 1] : 1)) * (1 + 1e-3 * y[i]);
  return GSL_SUCCESS;
}

static double uniform(unsigned *s, double lo, double hi) {
  *s = *s * 1103515245u + 12345u;
  return lo + (hi - lo) * ((*s >> 8) / 16777216.0);
}

/* Each element the same bits, or both NaN: which NaN an operation
 * passes on depends on the order of its operands, which C leaves to the
 * compiler for + and * (an ASan build's GSL-order sums gave another NaN's
 * sign); cooling.c's one step never keeps a NaN (step_kept), so GSL's
 * driver makes those. */
static void assert_same_or_nan(const double *got, const double *want) {
  for (size_t i = 0; i < RK8PD_DIM; i++)
    if (isnan(want[i]))
      assert_true(isnan(got[i]));
    else
      assert_memory_equal(&got[i], &want[i], sizeof *got);
}

static void rk8pd_step_is_gsls(void **state) {
  (void)state;
  int (*fs[])(double, const double[], double[], void *) = {rhs_mixed,
                                                           rhs_stiffish};
  gsl_odeiv2_step *st = gsl_odeiv2_step_alloc(gsl_odeiv2_step_rk8pd, RK8PD_DIM);
  unsigned seed = 7;
  for (size_t n = 0; n < 4000; n++) {
    double a[RK8PD_DIM], y0[RK8PD_DIM];
    for (size_t i = 0; i < RK8PD_DIM; i++) {
      a[i] = uniform(&seed, -2, 3);
      y0[i] = uniform(&seed, -40, 40) * (n % 3 == 0 ? 1e5 : 1);
    }
    if (n % 7 == 0)
      y0[4] = -0.0;
    double t = uniform(&seed, 0, 100), h = uniform(&seed, 1e-3, 2);
    int (*f)(double, const double[], double[], void *) = fs[n % 2];
    gsl_odeiv2_system sys = {f, NULL, RK8PD_DIM, a};
    double want[RK8PD_DIM], werr[RK8PD_DIM], dydt[RK8PD_DIM];
    memcpy(want, y0, sizeof want);
    assert_int_equal(f(t, want, dydt, a), GSL_SUCCESS);
    assert_int_equal(
        gsl_odeiv2_step_apply(st, t, h, want, werr, dydt, NULL, &sys),
        GSL_SUCCESS);
    double got[RK8PD_DIM], gerr[RK8PD_DIM];
    memcpy(got, y0, sizeof got);
    assert_int_equal(rk8pd_step(f, a, t, h, got, gerr), GSL_SUCCESS);
    assert_same_or_nan(got, want);
    assert_same_or_nan(gerr, werr);
  }
  gsl_odeiv2_step_free(st);
}

/* ------------------------------------------------------------------ */
/* A loop's steps against GSL's driver alone                           */
/* ------------------------------------------------------------------ */

typedef struct loop_case {
  const char *name;
  const char *yaml;
  double derate;
} loop_case;

static const loop_case loops[] = {
    {"liquid", LIQUID, 1},
    {"liquid derated", LIQUID, 0.7},
    {"air", AIR, 1},
    {"liquid with a tower", LIQUID "heat_rejection: evaporative\n", 1},
    {"a slow liquid loop", LIQUID "time_constant: 600 s\n", 1},
};

/* Steps of every length around tau / 8 (the one-step path's edge), heat
 * from none to past the capacity, the outdoor air across the economizer's
 * edges, and jumps the driver cuts into several steps: every step's
 * outputs and the loop's temperature to the bit. */
static void steps_are_the_drivers(void **state) {
  const loop_case *lc = *state;
  cool_loop_config c;
  bind_ok(lc->yaml, &c);
  cool_loop *fast = make_loop(&c), *plain = make_loop(&c);
  cool__loop_set_plain(plain, true);
  assert_int_equal(cool_loop_set_derate(fast, lc->derate), SIM_OK);
  assert_int_equal(cool_loop_set_derate(plain, lc->derate), SIM_OK);
  unsigned seed = 11;
  double dts[] = {
      1,           0.25, c.tau_s / 8, nextafter(c.tau_s / 8, INFINITY),
      c.tau_s / 4, 1,    10,          1e-6};
  for (size_t k = 0; k < 3000; k++) {
    double q = c.capacity_w * uniform(&seed, 0, 1.3);
    if (k % 50 == 0)
      q = 0;
    double out = uniform(&seed, -10, 45), wet = out - uniform(&seed, 0, 8);
    double dt = dts[k % (sizeof dts / sizeof *dts)];
    if (k % 97 == 0) /* a cold or hot start */
      cool_loop_set_temp(fast, uniform(&seed, 5, 70)),
          cool_loop_set_temp(plain, cool_loop_temp_c(fast));
    cool_step a, b;
    sim_error ea = {0}, eb = {0};
    assert_int_equal(cool_loop_step_wet(fast, q, out, wet, dt, &a, &ea),
                     SIM_OK);
    assert_int_equal(cool_loop_step_wet(plain, q, out, wet, dt, &b, &eb),
                     SIM_OK);
    const double got[] = {a.temp_c, a.removed_j, a.free_j,  a.chiller_j,
                          a.aux_j,  a.energy_j,  a.water_kg},
                 want[] = {b.temp_c, b.removed_j, b.free_j,  b.chiller_j,
                           b.aux_j,  b.energy_j,  b.water_kg};
    assert_memory_equal(got, want, sizeof want);
    assert_int_equal(a.at_capacity, b.at_capacity);
  }
  cool_loop_destroy(fast);
  cool_loop_destroy(plain);
  scn_release(&cool_loop_schema, &c);
}

int main(void) {
  gsl_set_error_handler_off();
  struct CMUnitTest tests[16];
  size_t n = 0;
  TEST_ADD(tests, n, rk8pd_step_is_gsls);
  TEST_ROWS(tests, n, steps_are_the_drivers, loops);
  return _cmocka_run_group_tests("cooling_step", tests, n, NULL, NULL);
}
