/* test_cooling_throttle.c - cooling loops at and past their limits:
 * junction temperature and throttling, loops derated by a fault, and the
 * refusals (the schema's checks, construction and bad steps). */
#include "test_cooling_loop.h"


/* ------------------------------------------------------------------ */
/* Junction temperature and throttling                                 */
/* ------------------------------------------------------------------ */

typedef struct gpu_case {
  const char *name;
  double loop_c, power_w, r_th;
  double junction_c; /* expected */
  double share;      /* clock share at slowdown 87, shutdown 92 degC */
} gpu_case;

static const gpu_case gpus[] = {
    {"cold plate at TDP", 40, 1000, 0.04, 80, 1},
    {"at the slowdown", 47, 1000, 0.04, 87, 1},
    {"half way to shutdown", 49.5, 1000, 0.04, 89.5, 0.5},
    {"at shutdown", 52, 1000, 0.04, 92, 0},
    {"beyond shutdown", 22, 1000, 0.08, 102, 0},
    {"idle", 45, 0, 0.04, 45, 1},
};

static void junction_and_throttle(void **state) {
  const gpu_case *g = *state;
  double tj = cool_junction_c(g->loop_c, g->power_w, g->r_th);
  assert_close(tj, g->junction_c, 1e-12, 1e-12);
  assert_close(cool_throttle_share(tj, 87, 92), g->share, 0, 1e-12);
  /* The power that holds the junction at the slowdown temperature. */
  double p = cool_thermal_power_w(g->loop_c, 87, g->r_th);
  assert_close(cool_junction_c(g->loop_c, p, g->r_th), 87, 1e-12, 0);
  assert_close(cool_thermal_power_w(90, 87, g->r_th), 0, 0, 0);
}

/* ------------------------------------------------------------------ */
/* Schema                                                              */
/* ------------------------------------------------------------------ */

/* Per-kind defaults fill what a scenario leaves out; given values stay;
 * the resolved YAML binds back to the same numbers. */
static void defaults_follow_the_kind(void **state) {
  (void)state;
  cool_loop_config l, a, given, again;
  bind_ok(LIQUID, &l);
  bind_ok(AIR, &a);
  bind_ok(LIQUID "supply: 45 degC\nmin_flow: 50%\n", &given);
  assert_close(l.supply_c, 35, 0, 0);
  assert_close(l.hx_approach_k, 3, 0, 0);
  assert_close(l.aux_share, 0.04, 0, 0);
  assert_close(a.supply_c, 22, 0, 0);
  assert_close(a.hx_approach_k, 15, 0, 0);
  assert_close(a.aux_share, 0.10, 0, 0);
  assert_close(a.econ_approach_k, 10, 0, 0);
  assert_close(given.supply_c, 45, 0, 0);
  assert_close(given.flow_min, 0.5, 0, 0);
  assert_close(given.tau_s, 60, 0, 0);
  char *yaml = scn_emit(&cool_loop_schema, &a);
  assert_non_null(yaml);
  bind_ok(yaml, &again);
  assert_memory_equal(&again.capacity_w, &a.capacity_w,
                      sizeof a - offsetof(cool_loop_config, capacity_w));
  free(yaml);
  scn_release(&cool_loop_schema, &l);
  scn_release(&cool_loop_schema, &a);
  scn_release(&cool_loop_schema, &given);
  scn_release(&cool_loop_schema, &again);
}

typedef struct bad_case {
  const char *name;
  const char *yaml;
  const char *message; /* a part of err.msg, position included */
} bad_case;

static const bad_case bad[] = {
    {"unknown kind", "name: x\nkind: water\ncapacity: 1 MW\n",
     "loop.yaml:2:7: 'kind' cannot be 'water'"},
    {"negative capacity", "name: x\nkind: air\ncapacity: -2 MW\n",
     "loop.yaml:3:11: 'capacity' must be greater than zero"},
    {"capacity missing", "name: x\nkind: air\n", "capacity"},
    {"supply above any class", LIQUID "supply: 80 degC\n",
     "loop.yaml:4:9: 'supply' is 80 degC; it must be between"},
    {"air supply above A4", AIR "supply: 50 degC\n",
     "loop.yaml:4:9: crah: air supply 50 degC is above 45 degC"},
    {"cop bounds crossed", LIQUID "cop_min: 12\n",
     "loop.yaml:4:10: dlc: cop_min 12 is above cop_max 10"},
    {"difference written in K", LIQUID "delta_t: 10 K\n",
     "loop.yaml:4:10: 'delta_t'"},
    {"plant water frozen", AIR "supply: 10 degC\n",
     "loop.yaml:4:9: crah: supply 10 degC less approach 15 K"},
    {"approach too wide", LIQUID "supply: 20 degC\nhx_approach: 25 degC\n",
     "loop.yaml:5:14: dlc: supply 20 degC less approach 25 K"},
    {"capacity in degrees", "name: x\nkind: air\ncapacity: 30 degC\n",
     "loop.yaml:3:14: 'capacity': 'degC' is a unit of temperature"},
};

static void bad_loops_are_rejected(void **state) {
  const bad_case *b = *state;
  cool_loop_config c;
  sim_error err = {0};
  assert_int_equal(bind(b->yaml, &c, &err), SIM_EINPUT);
  if (strstr(err.msg, b->message) == NULL)
    fail_msg("got '%s', want '%s'", err.msg, b->message);
}

/* ------------------------------------------------------------------ */
/* Construction and bad steps                                          */
/* ------------------------------------------------------------------ */

/* A plant of two loops over three rack groups, into a heap copy so that
 * test_alloc_failures can drive plant_init. */
static void *make_plant(const sim_allocator *a, void *ctx, sim_error *err) {
  const cool_loop_config *loops = ctx;
  /* Loop 0 takes all of group 0 and half of group 1, loop 1 the rest. */
  static const plant_link links[4] = {
      {0, 0, 1}, {0, 1, 0.5}, {1, 1, 0.5}, {1, 2, 1}};
  plant *p = malloc(sizeof *p);
  assert_non_null(p);
  if (plant_init(p, loops, 2, links, 4, 3, a, err) == SIM_OK)
    return p;
  assert_null(p->loops);
  free(p);
  return NULL;
}

static void drop_plant(void *p) {
  plant_fini(p);
  free(p);
}

static void plant_fails_cleanly(void **state) {
  (void)state;
  cool_loop_config loops[2];
  bind_ok(LIQUID, &loops[0]);
  bind_ok(AIR, &loops[1]);
  /* Nine arrays and the two loops. */
  assert_true(test_alloc_failures("plant_init", make_plant, drop_plant, loops) >
              9);
  scn_release(&cool_loop_schema, &loops[0]);
  scn_release(&cool_loop_schema, &loops[1]);
}

/* The sparse share matrix (issue 28: a dense one grew with the square of
 * the scenario): links from the loops' rack names (a loop naming none
 * serves every group), any order, a pair given twice counted once; each
 * group's main loop is the one taking most of its heat. */
static void plant_links_follow_the_loops(void **state) {
  (void)state;
  cool_loop_config loops[2];
  bind_ok(LIQUID "racks: [a, b]\nheat_share: 60%\n", &loops[0]);
  bind_ok(AIR "heat_share: 40%\n", &loops[1]);
  static const char *const names[3] = {"a", "b", "c"};
  plant_link *links;
  size_t n;
  sim_error err = {0};
  assert_int_equal(plant_links(loops, 2, names, 3, &links, &n, &err), SIM_OK);
  assert_int_equal(n, 5);
  plant_link shuffled[6] = {links[4], links[1], links[3],
                            links[0], links[2], {0, 1, 9}};
  free(links);
  plant p;
  assert_int_equal(plant_init(&p, loops, 2, shuffled, 6, 3, NULL, &err),
                   SIM_OK);
  assert_int_equal(p.main_loop[0], 0);
  assert_int_equal(p.main_loop[1], 0);
  assert_int_equal(p.main_loop[2], 1);
  static const double heat[3] = {1e5, 2e5, 4e5};
  assert_close(plant_loop_heat_w(&p, 0, heat), 0.6 * 1e5 + 0.6 * 2e5, 0, 0);
  assert_close(plant_loop_heat_w(&p, 1, heat),
               0.4 * 1e5 + 0.4 * 2e5 + 0.4 * 4e5, 0, 0);
  plant_fini(&p);
  scn_release(&cool_loop_schema, &loops[0]);
  scn_release(&cool_loop_schema, &loops[1]);
}

static void create_fails_cleanly(void **state) {
  (void)state;
  cool_loop_config c;
  bind_ok(LIQUID, &c);
  test_alloc t;
  test_alloc_init(&t, 1);
  sim_error err = {0};
  assert_null(cool_loop_create(&c, &t.hook, &err));
  assert_int_equal(err.code, SIM_ENOMEM);
  assert_int_equal(t.live, 0);
  test_alloc_init(&t, 0);
  cool_loop *l = cool_loop_create(&c, &t.hook, &err);
  assert_non_null(l);
  assert_int_equal(t.live, 1);
  /* The loop keeps a copy (its setpoint may move: cool_loop_set_supply). */
  assert_ptr_not_equal(cool_loop_config_of(l), &c);
  assert_close(cool_loop_config_of(l)->capacity_w, c.capacity_w, 0, 0);
  assert_close(cool_loop_config_of(l)->supply_c, c.supply_c, 0, 0);
  assert_close(cool_loop_temp_c(l), c.supply_c, 0, 0);
  /* A setpoint within the range moves the copy alone; outside, nothing. */
  double lo, hi;
  cool_loop_supply_range(l, &lo, &hi);
  assert_true(lo >= 5 && lo < c.supply_c && c.supply_c < hi && hi <= 60);
  assert_int_equal(cool_loop_set_supply(l, lo), SIM_OK);
  assert_int_equal(cool_loop_set_supply(l, hi), SIM_OK);
  assert_close(cool_loop_config_of(l)->supply_c, hi, 0, 0);
  assert_int_equal(cool_loop_set_supply(l, hi + 1), SIM_ERANGE);
  assert_int_equal(cool_loop_set_supply(l, NAN), SIM_ERANGE);
  assert_int_equal(cool_loop_set_supply(l, 4), SIM_ERANGE);
  assert_close(cool_loop_config_of(l)->supply_c, hi, 0, 0);
  cool_loop_destroy(l);
  assert_int_equal(t.live, 0);
  cool_loop_destroy(NULL);
  cool_loop_config zero = {0};
  assert_null(cool_loop_create(&zero, NULL, &err));
  assert_int_equal(err.code, SIM_EINVAL);
  scn_release(&cool_loop_schema, &c);
}

static void bad_steps_leave_the_state(void **state) {
  (void)state;
  cool_loop_config c;
  bind_ok(AIR, &c);
  cool_loop *l = make_loop(&c);
  cool_step s;
  sim_error err = {0};
  assert_int_equal(cool_loop_step(l, -1, 20, 1, &s, &err), SIM_EINVAL);
  assert_int_equal(cool_loop_step(l, 1e5, NAN, 1, &s, &err), SIM_EINVAL);
  assert_int_equal(cool_loop_step(l, 1e5, 20, -1, &s, &err), SIM_EINVAL);
  assert_int_equal(cool_loop_step(l, 1e5, 20, INFINITY, &s, &err), SIM_EINVAL);
  assert_close(cool_loop_temp_c(l), c.supply_c, 0, 0);
  step_ok(l, 1e5, 20, 0, &s);
  assert_close(s.temp_c, c.supply_c, 0, 0);
  assert_close(s.energy_j, 0, 0, 0);
  cool_loop_destroy(l);
  scn_release(&cool_loop_schema, &c);
}

/* ------------------------------------------------------------------ */
/* Cooling faults: a loop derated to a share of its capacity           */
/* ------------------------------------------------------------------ */

/* At steady state under 80% of its capacity, a loop cut to 50% heats at
 * exactly (0.8 - 0.5) capacity / C (its removal is at the derated
 * capacity all along, UA and C unchanged), and once restored relaxes
 * back to its old steady state, first order. */
static void a_derated_loop_heats_at_the_shortfall(void **state) {
  (void)state;
  cool_loop_config c;
  bind_ok(LIQUID, &c);
  cool_loop *l = make_loop(&c);
  double q = 0.8 * c.capacity_w, hot = c.supply_c + q / cool_ua(&c);
  cool_loop_set_temp(l, hot);
  assert_true(cool_loop_derate(l) == 1);
  assert_int_equal(cool_loop_set_derate(l, 0.5), SIM_OK);
  double rate = 0.3 * c.capacity_w / cool_heat_capacity(&c), dt = 10;
  for (int k = 1; k <= 30; k++) {
    cool_step s;
    step_ok(l, q, 20, dt, &s);
    assert_close(s.temp_c, hot + rate * k * dt, 0, 1e-6);
    assert_close(s.removed_j, 0.5 * c.capacity_w * dt, 1e-9, 0);
    assert_true(s.at_capacity);
  }
  /* Restored: at capacity, it cools at 0.2 capacity / C down to the
   * knee at T_s + dT, then first order back to where it was. */
  double peak = cool_loop_temp_c(l), knee = c.supply_c + c.delta_t_k;
  double t_knee = (peak - knee) / (0.2 * c.capacity_w / cool_heat_capacity(&c));
  assert_int_equal(cool_loop_set_derate(l, 1), SIM_OK);
  cool_step s;
  step_ok(l, q, 20, 20 * c.tau_s, &s);
  double want = hot + (knee - hot) * exp(-(20 * c.tau_s - t_knee) / c.tau_s);
  assert_close(s.temp_c, want, 0, 1e-6);
  assert_false(s.at_capacity);
  cool_loop_destroy(l);
  scn_release(&cool_loop_schema, &c);
}

/* Share 1 is the loop as built, bit for bit; below the derated capacity
 * a derated loop's steady state is the same as the whole loop's; above
 * it there is none, and the removal is the share. */
static bool same_power(const cool_power *a, const cool_power *b) {
  return a->removed_w == b->removed_w && a->free_w == b->free_w &&
         a->chiller_w == b->chiller_w && a->aux_w == b->aux_w &&
         a->total_w == b->total_w && a->free_share == b->free_share &&
         a->cop == b->cop && a->temp_c == b->temp_c &&
         a->at_capacity == b->at_capacity;
}

static void derated_power_and_steady_state(void **state) {
  (void)state;
  cool_loop_config c;
  bind_ok(AIR, &c);
  for (double t = c.supply_c; t < c.supply_c + 2 * c.delta_t_k; t += 0.7) {
    cool_power a = cool_power_at(&c, t, 25),
               b = cool_power_derated(&c, 1, t, 25);
    assert_true(same_power(&a, &b));
  }
  cool_power low = cool_steady_derated(&c, 0.5, 0.3 * c.capacity_w, 25);
  cool_power whole = cool_steady(&c, 0.3 * c.capacity_w, 25);
  assert_true(same_power(&low, &whole));
  cool_power over = cool_steady_derated(&c, 0.5, 0.8 * c.capacity_w, 25);
  assert_true(over.at_capacity);
  assert_close(over.removed_w, 0.5 * c.capacity_w, 1e-12, 0);
  /* The reserve for 80% of the heat shrinks with the plant that is left:
   * less removed, less to run the chillers and pumps for. */
  assert_true(over.total_w < cool_steady(&c, 0.8 * c.capacity_w, 25).total_w);
  scn_release(&cool_loop_schema, &c);
}

static void a_derate_must_be_a_share(void **state) {
  (void)state;
  cool_loop_config c;
  bind_ok(LIQUID, &c);
  cool_loop *l = make_loop(&c);
  assert_int_equal(cool_loop_set_derate(l, 0.25), SIM_OK);
  assert_int_equal(cool_loop_set_derate(l, 1.5), SIM_EINVAL);
  assert_int_equal(cool_loop_set_derate(l, -0.1), SIM_EINVAL);
  assert_int_equal(cool_loop_set_derate(l, NAN), SIM_EINVAL);
  assert_true(cool_loop_derate(l) == 0.25);
  assert_int_equal(cool_loop_set_derate(l, 0), SIM_OK); /* all lost */
  cool_step s;
  step_ok(l, 1e5, 20, 60, &s);
  assert_true(s.removed_j == 0 && s.energy_j > 0); /* pumps still run */
  assert_close(s.temp_c, c.supply_c + 1e5 * 60 / cool_heat_capacity(&c), 0,
               1e-6);
  cool_loop_destroy(l);
  scn_release(&cool_loop_schema, &c);
}

/* A step held at its temperature (the heat in is what the plant removes
 * there) integrates cool_power_wet's powers at that temperature: the
 * ODE's right-hand side is its expressions, with the step's COP at the
 * sink (the wet bulb for a tower, else the outdoor air), made again at
 * each step as the weather moves, and a derated plant's removal. */
typedef struct held_case {
  const char *name, *yaml;
  double share;
} held_case;

static const held_case helds[] = {
    {"held: dry liquid loop", LIQUID, 1},
    {"held: tower", LIQUID "heat_rejection: evaporative\n", 1},
    {"held: derated tower", LIQUID "heat_rejection: evaporative\n", 0.6},
    {"held: air loop", AIR, 1},
};

static void a_held_step_is_the_plant_power(void **state) {
  const held_case *h = *state;
  cool_loop_config c;
  bind_ok(h->yaml, &c);
  cool_loop *l = make_loop(&c);
  assert_int_equal(cool_loop_set_derate(l, h->share), SIM_OK);
  static const double weather[][2] = {{30, 18}, {12, 9}, {35, 27}, {22, 21}};
  for (size_t k = 0; k < sizeof weather / sizeof *weather; k++) {
    double out = weather[k][0], wet = weather[k][1], dt = 7;
    double temp = c.supply_c + 0.4 * c.delta_t_k * h->share;
    cool_power p = cool_power_wet(&c, h->share, temp, out, wet);
    cool_loop_set_temp(l, temp);
    cool_step s;
    sim_error err = {0};
    if (cool_loop_step_wet(l, p.removed_w, out, wet, dt, &s, &err) != SIM_OK)
      fail_msg("%s", err.msg);
    assert_true(s.temp_c == temp);
    assert_close(s.removed_j, p.removed_w * dt, 1e-13, 0);
    assert_close(s.free_j, p.free_w * dt, 1e-13, 1e-9);
    assert_close(s.chiller_j, p.chiller_w * dt, 1e-13, 1e-9);
    assert_close(s.aux_j, p.aux_w * dt, 1e-13, 0);
  }
  cool_loop_destroy(l);
  scn_release(&cool_loop_schema, &c);
}

/* A loop's steps to the bit: the ODE's right-hand side takes
 * cool_power_wet's expressions in its order (cooling.c's loop_rhs, with
 * the quotients that do not move within a step kept by the loop), so a
 * change of an operation there moves these bits, which the tolerances
 * of the tests above do not see. Ten one-second steps of a liquid loop
 * and of a tower at loads and air that move (the chillers running, the
 * pumps and fans at their floor), the last step's figures as 747f06e
 * computed them. */
typedef struct bits_case {
  const char *name, *yaml;
  double temp, removed, chiller, aux; /* the last step's, to the bit */
} bits_case;

static const bits_case bits_cases[] = {
    {"liquid, dry", LIQUID,
     0x1.21a5a5846eb83p+5, 0x1.bb921692f9ab6p+16, 0x1.721c257373fb9p+15,
     0x1.ep+6},
    {"liquid, tower", LIQUID "heat_rejection: evaporative\n",
     0x1.21a5a5846eb82p+5, 0x1.bb921692f9a86p+16, 0x1.073988faf0481p+15,
     0x1.4p+8},
};

static void steps_to_the_bit(void **state) {
  const bits_case *bc = *state;
  cool_loop_config c;
  bind_ok(bc->yaml, &c);
  cool_loop *l = make_loop(&c);
  cool_step s;
  for (int k = 0; k < 10; k++) {
    sim_error err = {0};
    double q = c.capacity_w * (0.6 + 0.04 * k), out = 25 + 1.5 * k;
    assert_int_equal(cool_loop_step_wet(l, q, out, out - 2, 1, &s, &err),
                     SIM_OK);
  }
  const double got[] = {s.temp_c, s.removed_j, s.chiller_j, s.aux_j},
               want[] = {bc->temp, bc->removed, bc->chiller, bc->aux};
  assert_memory_equal(got, want, sizeof want);
  cool_loop_destroy(l);
  scn_release(&cool_loop_schema, &c);
}

int main(void) {
  gsl_set_error_handler_off();
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ROWS(tests, n, junction_and_throttle, gpus);
  TEST_ADD(tests, n, defaults_follow_the_kind);
  TEST_ROWS(tests, n, bad_loops_are_rejected, bad);
  TEST_ADD(tests, n, create_fails_cleanly);
  TEST_ADD(tests, n, plant_fails_cleanly);
  TEST_ADD(tests, n, plant_links_follow_the_loops);
  TEST_ADD(tests, n, bad_steps_leave_the_state);
  TEST_ADD(tests, n, a_derated_loop_heats_at_the_shortfall);
  TEST_ADD(tests, n, derated_power_and_steady_state);
  TEST_ADD(tests, n, a_derate_must_be_a_share);
  TEST_ROWS(tests, n, a_held_step_is_the_plant_power, helds);
  TEST_ROWS(tests, n, steps_to_the_bit, bits_cases);
  return _cmocka_run_group_tests("cooling_throttle", tests, n, NULL, NULL);
}
