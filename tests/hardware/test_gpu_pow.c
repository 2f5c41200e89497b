/* test_gpu_pow.c - gpu_power.c's cap solve against its definition (the
 * largest clock whose P is at most the cap, gpu_ref.h), bit for bit: the
 * solve from the ends kept in a type's memo against a copy of the type
 * without one (test_gpu's clock_is_the_largest_held holds every type to
 * the definition; tests/sim/core/test_pow.c, sim_pow); the solve built
 * for fma with x^2.5 in line, caps strictly inside the knee's span; and
 * the edges: caps at an end's power, at a clock's power and between two
 * adjacent clocks' powers. */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu.h"
#include "gpu_internal.h"
#include "gpu_ref.h"
#include "lanes.h"
#include "test_catalogs.h"


/* The cap's solve keeps phi_min's and the knee's powers in the type's
 * memo (cap_ends): a copy of a type with another gamma, knee or lowest
 * clock shares the memo, and each still gets the clock a copy without a
 * memo solves (its ends made afresh), asked in turn so the memo's ends
 * are made again each time. */
typedef struct ends_row {
  const char *name;
  double dgamma, knee_k, clock_min_k;
} ends_row;

static const ends_row ends_rows[] = {
    {"cap ends: another gamma", 0.25, 1, 1},
    {"cap ends: another knee", 0, 0.8, 1},
    {"cap ends: another lowest clock", 0, 1, 2},
};

static void cap_ends_follow_the_type(void **state) {
  const ends_row *row = *state;
  uint64_t s = 19;
  for (size_t t = 0; t < cats.gpu.n; t++) {
    gpu_spec other = cats.gpu.gpus[t];
    other.gamma += row->dgamma;
    other.knee *= row->knee_k;
    other.clock_min_hz *= row->clock_min_k;
    for (int i = 0; i < 4000; i++) {
      const gpu_spec *h = i % 2 ? &other : &cats.gpu.gpus[t];
      gpu_spec bare = *h;
      bare.pow_memo = NULL;
      gpu_load l = draw_load(&s);
      double cap = h->idle_w + (h->tdp_w - h->idle_w) * draw(&s);
      double want = gpu_load_clock_under_cap(&bare, cap, l);
      double got = gpu_load_clock_under_cap(h, cap, l);
      if (memcmp(&want, &got, sizeof got) != 0)
        fail_msg("%s cap %a: %a, without the memo %a", h->name, cap, got, want);
    }
  }
}

/* Caps strictly inside the load's [P(phi_min), P(knee)], from lo to hi
 * of that span: every one Newton's solve, on the solve built for fma
 * (x^2.5 in line, sim_pow25_fma) for the catalog's power laws of gamma 2.5
 * where the CPU has it; each the definition's clock (gpu_ref.h) held
 * exactly, and all but a few strictly inside (phi_min, knee). */
typedef struct knee_row {
  const char *name;
  double lo, hi;
  bool zero_min; /* the type's lowest clock 0: phi_min 0, so the solve's
                    bracket starts at 0 */
  bool above;    /* the span [P(knee), P(1)] instead: a lone solve there
                    is the closed form's and four neighbouring doubles'
                    (gpu_newton4.c's lone_above) where the CPU has AVX2 */
} knee_row;

static const knee_row knee_rows[] = {
    {"fma solve: caps near phi_min", 1e-6, 0.05, false, false},
    {"fma solve: caps mid span", 0.05, 0.95, false, false},
    {"fma solve: caps near the knee", 0.95, 1 - 1e-6, false, false},
    {"fma solve: phi_min 0, caps near it", 1e-6, 0.05, true, false},
    {"fma solve: phi_min 0, caps mid span", 0.05, 0.95, true, false},
    {"lone solve above the knee: caps near it", 1e-6, 0.05, false, true},
    {"lone solve above the knee: caps mid span", 0.05, 0.95, false, true},
    {"lone solve above the knee: caps near p_1", 0.95, 1 - 1e-6, false, true},
};

/* got, and the scalar path's answer (sim_lanes_narrow: no lanes), the
 * definition's to the bit. */
static void held_or_fail(const gpu_spec *g, double cap, gpu_load l,
                         double got) {
  double want = ref_clock_under_cap(g, cap, l);
  sim_lanes_narrow = true;
  double scalar = gpu_load_clock_under_cap(g, cap, l);
  sim_lanes_narrow = false;
  if (memcmp(&want, &got, sizeof got) != 0 ||
      memcmp(&want, &scalar, sizeof got) != 0 ||
      !ref_held_exactly(g, cap, l, got))
    fail_msg("%s cap %a load {%a, %a, %a}: %a (scalar %a), the largest held "
             "%a",
             g->name, cap, l.sm, l.mem, l.busy, got, scalar, want);
}

static void fma_solve_is_the_largest_held(void **state) {
  const knee_row *row = *state;
  uint64_t s = 23;
  for (size_t t = 0; t < cats.gpu.n; t++) {
    gpu_spec h = cats.gpu.gpus[t];
    if (row->zero_min)
      h.clock_min_hz = 0;
    const gpu_spec *g = &h;
    double phi_min = gpu_phi_min(g), knee = fmax(phi_min, fmin(1, g->knee));
    double from = row->above ? knee : phi_min, to = row->above ? 1 : knee;
    int inside = 0;
    for (int i = 0; i < 20000; i++) {
      gpu_load l = draw_load(&s);
      double lo = gpu_load_power(g, from, l);
      double span = gpu_load_power(g, to, l) - lo;
      double cap = lo + span * (row->lo + (row->hi - row->lo) * draw(&s));
      double got = gpu_load_clock_under_cap(g, cap, l);
      held_or_fail(g, cap, l, got);
      inside += got > from && got < to;
    }
    if (to > from && inside < 19900)
      fail_msg("%s: %d of 20000 inside (%a, %a)", g->name, inside, from, to);
  }
}

/* Caps on the edges of the definition, at a clock phi drawn in [phi_min,
 * 1] (or one of its ends, or the knee): P(phi) itself (the answer at
 * least phi, past it where P stays the same), the double under P(phi)
 * (the answer under phi), and halfway between P(phi) and P at the next
 * double up where they differ (phi itself: nothing between two adjacent
 * clocks to find). */
typedef enum edge_cap { AT_POWER, UNDER_POWER, BETWEEN_NEIGHBOURS } edge_cap;

typedef enum edge_clock { DRAWN, AT_FLOOR, AT_KNEE, AT_ONE } edge_clock;

typedef struct edge_row {
  const char *name;
  edge_cap cap;
  edge_clock clock;
} edge_row;

static const edge_row edge_rows[] = {
    {"edge: cap at a clock's power", AT_POWER, DRAWN},
    {"edge: cap a double under a clock's power", UNDER_POWER, DRAWN},
    {"edge: cap between adjacent clocks' powers", BETWEEN_NEIGHBOURS, DRAWN},
    {"edge: cap at the floor's power", AT_POWER, AT_FLOOR},
    {"edge: cap a double under the floor's power", UNDER_POWER, AT_FLOOR},
    {"edge: cap between the floor's and the next", BETWEEN_NEIGHBOURS,
     AT_FLOOR},
    {"edge: cap at the knee's power", AT_POWER, AT_KNEE},
    {"edge: cap a double under the knee's power", UNDER_POWER, AT_KNEE},
    {"edge: cap at p_1", AT_POWER, AT_ONE},
    {"edge: cap a double under p_1", UNDER_POWER, AT_ONE},
};

static double edge_clock_of(const gpu_spec *g, edge_clock c, uint64_t *s) {
  double phi_min = gpu_phi_min(g);
  switch (c) {
  case AT_FLOOR:
    return phi_min;
  case AT_KNEE:
    return fmax(phi_min, fmin(1, g->knee));
  case AT_ONE:
    return 1;
  default:
    return phi_min + (1 - phi_min) * draw(s);
  }
}

static void edges_are_held(void **state) {
  const edge_row *row = *state;
  uint64_t s = 29;
  for (size_t t = 0; t < cats.gpu.n; t++) {
    const gpu_spec *g = &cats.gpu.gpus[t];
    for (int i = 0; i < 4000; i++) {
      gpu_load l = draw_load(&s);
      double phi = edge_clock_of(g, row->clock, &s);
      double p = gpu_load_power(g, phi, l);
      double up = gpu_load_power(g, nextafter(phi, 2), l);
      double cap = row->cap == AT_POWER      ? p
                   : row->cap == UNDER_POWER ? nextafter(p, 0)
                                             : p + 0.5 * (up - p);
      double got = gpu_load_clock_under_cap(g, cap, l);
      held_or_fail(g, cap, l, got);
      bool apart = row->cap == BETWEEN_NEIGHBOURS && up > p && cap < up;
      if (apart && phi < 1 && got != phi)
        fail_msg("%s: cap between P(%a) and the next: %a", g->name, phi, got);
    }
  }
}

int main(void) {
  struct CMUnitTest tests[24];
  size_t n = 0;
  TEST_ROWS(tests, n, cap_ends_follow_the_type, ends_rows);
  TEST_ROWS(tests, n, fma_solve_is_the_largest_held, knee_rows);
  TEST_ROWS(tests, n, edges_are_held, edge_rows);
  return _cmocka_run_group_tests("gpu_pow", tests, n, test_catalogs_load_gpu,
                                 test_catalogs_release);
}
