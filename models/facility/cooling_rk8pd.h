/* cooling_rk8pd.h - one step of the Prince-Dormand 8(7) Runge-Kutta pair
 * (P.J. Prince and J.R. Dormand, "High order embedded Runge-Kutta
 * formulae", J. Comp. Appl. Math. 7, 67-75, 1981; 13 stages) over the
 * cooling loop's five-double state, for cooling.c's one-step ticks.
 *
 * Why not GSL's stepper alone: a loop's tick is one step of GSL's driver
 * (its first step is the whole tick, h = dt <= tau / 8, and is accepted),
 * and the driver's machinery around that step (the reset, the evolve
 * frame, the copies, the control, a 14th right-hand side for a dydt_out
 * the y-only control never reads, the right-hand side through a pointer)
 * cost more instructions than the step's own arithmetic.
 *
 * The bits: every stage is the tableau's rationals as doubles (the same
 * divisions, made at compile time), and each stage's state, the 8th-order
 * solution and the error estimate are the same operations in the same
 * order as GSL 2.7's rk8pd (ode-initval2/rk8pd.c): y + (a21 h) k1 for the
 * second stage, y + h (sum of the row's nonzero terms, left to right) for
 * the others, y + h (the 8th-order weights' sum) for the solution and
 * h (7th-order sum - 8th-order sum) for the error. The project builds
 * with -ffp-contract=off, so none of them becomes an FMA (GSL's x86-64
 * build has none either). test_cooling_step's rk8pd_step_is_gsls compares it
 * with gsl_odeiv2_step_rk8pd to the bit. */
#ifndef MODELS_COOLING_RK8PD_H
#define MODELS_COOLING_RK8PD_H

#include <string.h>

#include <gsl/gsl_odeiv2.h>

enum { RK8PD_DIM = 5, RK8PD_STAGES = 13 };

/* The state padded to whole pairs: each sum is taken two elements at a
 * time (GCC's vector extension; SSE2's, which every x86-64 has), the same
 * operations on each element as the scalar sum's, so the same bits. The
 * pad (element 5) is 0 throughout: f never writes it. */
enum { RK8PD_PAD = 6 };
typedef double rk8pd_v2 __attribute__((vector_size(16)));

/* The nodes c2..c11 (c12 = c13 = 1) */
static const double rk8pd_c[] = {1.0 / 18.0,   1.0 / 12.0,
                                 1.0 / 8.0,    5.0 / 16.0,
                                 3.0 / 8.0,    59.0 / 400.0,
                                 93.0 / 200.0, 5490023248.0 / 9719169821.0,
                                 13.0 / 20.0,  1201146811.0 / 1299019798.0};

/* The stages' rows a[s][j], j < s: the sums skip the zeros of columns 2
 * and 3 as GSL's do, and add a row's terms in column order. Row 13's
 * last (k12's) is 0 and still added, as GSL adds it (0 k12 can turn a
 * -0 sum into +0). */
static const double rk8pd_a21 = 1.0 / 18.0;
static const double rk8pd_a3[] = {1.0 / 48.0, 1.0 / 16.0};
static const double rk8pd_a4[] = {1.0 / 32.0, 3.0 / 32.0}; /* k1, k3 */
static const double rk8pd_a5[] = {5.0 / 16.0, -75.0 / 64.0, 75.0 / 64.0};
static const double rk8pd_a6[] = {3.0 / 80.0, 3.0 / 16.0, 3.0 / 20.0};
/* Rows 7-13: the k1 term, then k4 onwards */
static const double rk8pd_a7[] = {
    29443841.0 / 614563906.0, 77736538.0 / 692538347.0,
    -28693883.0 / 1125000000.0, 23124283.0 / 1800000000.0};
static const double rk8pd_a8[] = {
    16016141.0 / 946692911.0, 61564180.0 / 158732637.0,
    22789713.0 / 633445777.0, 545815736.0 / 2771057229.0,
    -180193667.0 / 1043307555.0};
static const double rk8pd_a9[] = {
    39632708.0 / 573591083.0,    -433636366.0 / 683701615.0,
    -421739975.0 / 2616292301.0, 100302831.0 / 723423059.0,
    790204164.0 / 839813087.0,   800635310.0 / 3783071287.0};
static const double rk8pd_a10[] = {
    246121993.0 / 1340847787.0,  -37695042795.0 / 15268766246.0,
    -309121744.0 / 1061227803.0, -12992083.0 / 490766935.0,
    6005943493.0 / 2108947869.0, 393006217.0 / 1396673457.0,
    123872331.0 / 1001029789.0};
static const double rk8pd_a11[] = {
    -1028468189.0 / 846180014.0,   8478235783.0 / 508512852.0,
    1311729495.0 / 1432422823.0,   -10304129995.0 / 1701304382.0,
    -48777925059.0 / 3047939560.0, 15336726248.0 / 1032824649.0,
    -45442868181.0 / 3398467696.0, 3065993473.0 / 597172653.0};
static const double rk8pd_a12[] = {
    185892177.0 / 718116043.0,   -3185094517.0 / 667107341.0,
    -477755414.0 / 1098053517.0, -703635378.0 / 230739211.0,
    5731566787.0 / 1027545527.0, 5232866602.0 / 850066563.0,
    -4093664535.0 / 808688257.0, 3962137247.0 / 1805957418.0,
    65686358.0 / 487910083.0};
static const double rk8pd_a13[] = {
    403863854.0 / 491063109.0,   -5068492393.0 / 434740067.0,
    -411421997.0 / 543043805.0,  652783627.0 / 914296604.0,
    11173962825.0 / 925320556.0, -13158990841.0 / 6184727034.0,
    3936647629.0 / 1978049680.0, -160528059.0 / 685178525.0,
    248638103.0 / 1413531060.0,  0.0};
/* The 8th-order weights (k1, then k6..k13) and the 7th-order ones (k1,
 * then k6..k12) */
static const double rk8pd_w8[] = {14005451.0 / 335480064.0,
                                  -59238493.0 / 1068277825.0,
                                  181606767.0 / 758867731.0,
                                  561292985.0 / 797845732.0,
                                  -1041891430.0 / 1371343529.0,
                                  760417239.0 / 1151165299.0,
                                  118820643.0 / 751138087.0,
                                  -528747749.0 / 2220607170.0,
                                  1.0 / 4.0};
static const double rk8pd_w7[] = {
    13451932.0 / 455176623.0,     -808719846.0 / 976000145.0,
    1757004468.0 / 5645159321.0,  656045339.0 / 265891186.0,
    -3867574721.0 / 1518517206.0, 465885868.0 / 322736535.0,
    53011238.0 / 667516719.0,     2.0 / 45.0};

static inline rk8pd_v2 rk8pd_ld(const double *p) {
  rk8pd_v2 v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* k_n at elements j, j + 1 (k[0] is k1) */
#define RK8PD_K(n) rk8pd_ld(&k[(n)-1][j])
/* Stage n's input: y + h (the row's sum at each element), then k_n = f
 * there at t + c h; a failing f's status returned. */
#define RK8PD_STAGE(n, c, sum)                                                 \
  do {                                                                         \
    _Pragma("GCC unroll 3") for (size_t j = 0; j < RK8PD_PAD; j += 2) {        \
      rk8pd_v2 v_ = rk8pd_ld(&y[j]) + h * (sum);                               \
      memcpy(&ytmp[j], &v_, sizeof v_);                                        \
    }                                                                          \
    int s_ = f(t + (c)*h, ytmp, k[(n)-1], params);                             \
    if (s_ != GSL_SUCCESS)                                                     \
      return s_;                                                               \
  } while (0)

/* One step of h from (t, y) with the right-hand side f (GSL's signature;
 * a failing f's status is returned, y untouched): in y the 8th-order
 * solution, in yerr GSL's error estimate. k1 is f at (t, y), as GSL's
 * evolve hands it in. Each row written out, as GSL's. */
static inline int rk8pd_step(int (*f)(double, const double[], double[], void *),
                             void *params, double t, double h,
                             double y5[RK8PD_DIM], double yerr[RK8PD_DIM]) {
  double k[RK8PD_STAGES][RK8PD_PAD], ytmp[RK8PD_PAD], y[RK8PD_PAD];
  memcpy(y, y5, RK8PD_DIM * sizeof *y);
  y[RK8PD_DIM] = 0;
  for (size_t n = 0; n < RK8PD_STAGES; n++)
    k[n][RK8PD_DIM] = 0;
  int s = f(t, y, k[0], params);
  if (s != GSL_SUCCESS)
    return s;
  const double h21 = rk8pd_a21 * h; /* GSL's b21 * h * k1: (b21 h) k1 */
#pragma GCC unroll 3
  for (size_t j = 0; j < RK8PD_PAD; j += 2) {
    rk8pd_v2 v = rk8pd_ld(&y[j]) + h21 * RK8PD_K(1);
    memcpy(&ytmp[j], &v, sizeof v);
  }
  s = f(t + rk8pd_c[0] * h, ytmp, k[1], params);
  if (s != GSL_SUCCESS)
    return s;
  const double *a = rk8pd_a3;
  RK8PD_STAGE(3, rk8pd_c[1], a[0] * RK8PD_K(1) + a[1] * RK8PD_K(2));
  a = rk8pd_a4;
  RK8PD_STAGE(4, rk8pd_c[2], a[0] * RK8PD_K(1) + a[1] * RK8PD_K(3));
  a = rk8pd_a5;
  RK8PD_STAGE(5, rk8pd_c[3],
              a[0] * RK8PD_K(1) + a[1] * RK8PD_K(3) + a[2] * RK8PD_K(4));
  a = rk8pd_a6;
  RK8PD_STAGE(6, rk8pd_c[4],
              a[0] * RK8PD_K(1) + a[1] * RK8PD_K(4) + a[2] * RK8PD_K(5));
  a = rk8pd_a7;
  RK8PD_STAGE(7, rk8pd_c[5],
              a[0] * RK8PD_K(1) + a[1] * RK8PD_K(4) + a[2] * RK8PD_K(5) +
                  a[3] * RK8PD_K(6));
  a = rk8pd_a8;
  RK8PD_STAGE(8, rk8pd_c[6],
              a[0] * RK8PD_K(1) + a[1] * RK8PD_K(4) + a[2] * RK8PD_K(5) +
                  a[3] * RK8PD_K(6) + a[4] * RK8PD_K(7));
  a = rk8pd_a9;
  RK8PD_STAGE(9, rk8pd_c[7],
              a[0] * RK8PD_K(1) + a[1] * RK8PD_K(4) + a[2] * RK8PD_K(5) +
                  a[3] * RK8PD_K(6) + a[4] * RK8PD_K(7) + a[5] * RK8PD_K(8));
  a = rk8pd_a10;
  RK8PD_STAGE(10, rk8pd_c[8],
              a[0] * RK8PD_K(1) + a[1] * RK8PD_K(4) + a[2] * RK8PD_K(5) +
                  a[3] * RK8PD_K(6) + a[4] * RK8PD_K(7) + a[5] * RK8PD_K(8) +
                  a[6] * RK8PD_K(9));
  a = rk8pd_a11;
  RK8PD_STAGE(11, rk8pd_c[9],
              a[0] * RK8PD_K(1) + a[1] * RK8PD_K(4) + a[2] * RK8PD_K(5) +
                  a[3] * RK8PD_K(6) + a[4] * RK8PD_K(7) + a[5] * RK8PD_K(8) +
                  a[6] * RK8PD_K(9) + a[7] * RK8PD_K(10));
  a = rk8pd_a12;
  RK8PD_STAGE(12, 1.0,
              a[0] * RK8PD_K(1) + a[1] * RK8PD_K(4) + a[2] * RK8PD_K(5) +
                  a[3] * RK8PD_K(6) + a[4] * RK8PD_K(7) + a[5] * RK8PD_K(8) +
                  a[6] * RK8PD_K(9) + a[7] * RK8PD_K(10) + a[8] * RK8PD_K(11));
  a = rk8pd_a13;
  RK8PD_STAGE(13, 1.0,
              a[0] * RK8PD_K(1) + a[1] * RK8PD_K(4) + a[2] * RK8PD_K(5) +
                  a[3] * RK8PD_K(6) + a[4] * RK8PD_K(7) + a[5] * RK8PD_K(8) +
                  a[6] * RK8PD_K(9) + a[7] * RK8PD_K(10) + a[8] * RK8PD_K(11) +
                  a[9] * RK8PD_K(12));
  const double *w8 = rk8pd_w8, *w7 = rk8pd_w7;
  double err[RK8PD_PAD];
#pragma GCC unroll 3
  for (size_t j = 0; j < RK8PD_PAD; j += 2) {
    rk8pd_v2 sum8 =
        w8[0] * RK8PD_K(1) + w8[1] * RK8PD_K(6) + w8[2] * RK8PD_K(7) +
        w8[3] * RK8PD_K(8) + w8[4] * RK8PD_K(9) + w8[5] * RK8PD_K(10) +
        w8[6] * RK8PD_K(11) + w8[7] * RK8PD_K(12) + w8[8] * RK8PD_K(13);
    rk8pd_v2 sum7 = w7[0] * RK8PD_K(1) + w7[1] * RK8PD_K(6) +
                    w7[2] * RK8PD_K(7) + w7[3] * RK8PD_K(8) +
                    w7[4] * RK8PD_K(9) + w7[5] * RK8PD_K(10) +
                    w7[6] * RK8PD_K(11) + w7[7] * RK8PD_K(12);
    rk8pd_v2 yj = rk8pd_ld(&y[j]) + h * sum8, ej = h * (sum7 - sum8);
    memcpy(&y[j], &yj, sizeof yj);
    memcpy(&err[j], &ej, sizeof ej);
  }
  memcpy(y5, y, RK8PD_DIM * sizeof *y);
  memcpy(yerr, err, RK8PD_DIM * sizeof *err);
  return GSL_SUCCESS;
}

#undef RK8PD_STAGE
#undef RK8PD_K

#endif
