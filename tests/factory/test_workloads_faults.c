/* test_workloads_faults.c - faults on a factory's racks (docs/MODELS.md,
 * Faults) seen by its services and training jobs, and the checks of fault
 * input. */
#define WORK_SCENARIO "work-faults.yaml"
#include "test_workloads_run.h"

#include "factory_alloc.h"

/* ------------------------------------------------------------------ */
/* Faults (docs/MODELS.md, Faults)                                      */
/* ------------------------------------------------------------------ */

/* Two NVL72 racks: the chat service's replicas on nvl-0 (placed first,
 * best fit), a job on all 72 GPUs of nvl-1 from the start, checkpoints
 * every 5 min, a 2 min restart. nvl-1's PDU trips from 10 to 30 min,
 * nvl-0's breaker from 40 to 45 min. */
static const char two_racks[] =
    "name: f\nseed: 5\nduration: 1 h\nsample_period: 1 min\n"
    "power: {cap: 400 kW}\n"
    "racks:\n"
    "  - {name: nvl, count: 2, gpu: GB200, gpus_per_rack: 72,\n"
    "     other_power_idle: 16.8 kW, other_power_max: 33.6 kW,\n"
    "     load: {level: 0%, noise: 0}}\n"
    "services:\n"
    "  - name: chat\n    model: Llama-3.1-8B\n    precision: fp8\n"
    "    replicas: 4\n"
    "    arrivals: {kind: poisson, rate: 10, prompt: {mean: 500},\n"
    "               output: {mean: 200}}\n"
    "training:\n"
    "  - {name: all, model: Llama-3.1-8B, dp: 18, tp: 4,\n"
    "     tokens_per_iteration: 4194304, iterations: 100000,\n"
    "     checkpoint_every: 5 min, checkpoint_time: 30 s,\n"
    "     restart_time: 2 min}\n"
    "faults:\n"
    "  - {kind: pdu, racks: [nvl-1], at: 10 min, duration: 20 min}\n"
    "  - {kind: pdu, racks: [nvl-0], at: 40 min, duration: 5 min}\n";

/* Column col of /racks at rack r for the sample at row i. */
static double rack_at(const run *r, const char *col, size_t i, size_t rack) {
  size_t rows, width;
  const double *v = tel_memory_column(r->sink, "racks", col, &rows, &width);
  if (v == NULL || i >= rows || rack >= width)
    fail_msg("no /racks %s at row %zu, rack %zu", col, i, rack);
  return v[i * width + rack];
}

/* At every sample of two_racks: nvl-1 dark with its job through the
 * first trip, nvl-0 through the second, the other rack drawing; the
 * fault flag exactly then; the job computing again once its rack is back
 * and its checkpoint reloaded. */
static void trips_hold_at_every_sample(const run *r) {
  size_t n;
  const double *t = tel_memory_times(r->sink, "facility", &n);
  const double *train = facility(r, "training_power_w", &n);
  const double *active = facility(r, "faults_active", &n);
  for (size_t i = 0; i < n; i++) {
    bool trip1 = t[i] > 600 && t[i] <= 1800,
         trip0 = t[i] > 2400 && t[i] <= 2700;
    double p1 = rack_at(r, "power_w", i, 1), p0 = rack_at(r, "power_w", i, 0);
    if (trip1 && !(p1 == 0 && train[i] == 0 && p0 > 0))
      fail_msg("at %.0f s nvl-1 draws %g W, the job %g W", t[i], p1, train[i]);
    if (trip0 && !(p0 == 0 && p1 > 0))
      fail_msg("at %.0f s nvl-0 draws %g W", t[i], p0);
    assert_true(active[i] == (trip1 || trip0));
    /* The restart ran out while the rack was dark: back, the job reloads
     * its checkpoint for its 2 min restart, then computes. */
    if (t[i] > 1800 + 120 + 60 && t[i] <= 2400)
      assert_true(train[i] > 0 && rack_at(r, "activity", i, 1) > 0.3);
  }
}

/* A PDU trip takes a rack's power to 0 W while it lasts; the job on it is
 * interrupted as by a GPU failure (a failure, GPU-hours lost, all of them
 * to the fault), held through the rest of the trip and resumed after;
 * the other rack's service loses nothing until its own breaker trips,
 * when its requests are dropped; the books close (factory_finish). */
static void a_pdu_trip_darkens_racks_and_interrupts_jobs(void **state) {
  (void)state;
  run r;
  run_scenario(&r, two_racks, NULL, 0);
  const factory_summary *s = &r.sum;
  trips_hold_at_every_sample(&r);
  print_message("PDU trip: %llu failures, %.2f GPU-h lost (%.2f to faults), "
                "%llu requests dropped of %llu\n",
                (unsigned long long)s->job_failures, s->lost_gpu_hours,
                s->fault_lost_gpu_hours,
                (unsigned long long)s->requests_dropped,
                (unsigned long long)s->requests_arrived);
  assert_int_equal(s->job_failures, 1);
  assert_true(s->fault_lost_gpu_hours > 0);
  /* At least the 2 min restart and the 2 min reload after the trip on 72
   * GPUs, at most also the time since the last checkpoint began (5 min
   * and its 30 s). */
  assert_true(s->fault_lost_gpu_hours >= 72 * 240 / 3600.0 - 1e-9);
  assert_true(s->fault_lost_gpu_hours <= 72 * (330 + 240) / 3600.0 + 1e-9);
  assert_close(s->lost_gpu_hours, s->fault_lost_gpu_hours, 1e-12, 0);
  assert_int_equal(s->job_pauses, 0); /* a hold is not a grid-aware pause */
  assert_int_equal(s->fault_events, 2);
  assert_true(s->fault_s == 1500);
  assert_true(s->requests_dropped > 0);
  assert_true(s->requests_arrived >= s->requests_completed +
                                         s->requests_rejected +
                                         s->requests_dropped);
  size_t rows;
  assert_true(job_column(&r, "failures", &rows)[1] == 1);
  run_free(&r);
}

/* A feed fault: the cap is the backup limit while it lasts, and no policy
 * lets the facility above it at any sample; it is no DR event. */
static void a_feed_fault_holds_power_under_the_backup_limit(void **state) {
  (void)state;
  for (size_t p = 0; power_policy_names[p] != NULL; p++) {
    char set[64];
    policy_set(set, power_policy_names[p]);
    const char *sets[] = {set, "faults=[{kind: feed, limit: 55 kW, at: 20 "
                               "min, duration: 30 min}]"};
    run r;
    run_scenario(&r, base, sets, 2);
    size_t n;
    const double *t = tel_memory_times(r.sink, "facility", &n);
    const double *power = facility(&r, "power_w", &n);
    const double *peak = facility(&r, "peak_power_w", &n);
    const double *cap = facility(&r, "cap_w", &n);
    double before = 0;
    for (size_t i = 0; i < n; i++) {
      if (t[i] > 1200 && t[i] <= 3000) {
        assert_true(cap[i] == 55e3);
        if (!(power[i] <= 55e3 && peak[i] <= 55e3))
          fail_msg("%s: %g W (peak %g W) at %.0f s under a 55 kW feed",
                   power_policy_names[p], power[i], peak[i], t[i]);
      } else if (t[i] <= 1200) {
        before = fmax(before, power[i]);
      }
    }
    assert_true(before > 60e3); /* the limit binds */
    assert_true(r.sum.cap_violation_s == 0);
    assert_int_equal(r.sum.dr_events, 0);
    assert_int_equal(r.sum.fault_events, 1);
    assert_true(r.sum.fault_s == 1800);
    run_free(&r);
  }
}

/* A backup limit below what the rack draws even idle (its GPUs' 72 x
 * 166 W and its other IT's 16.8 kW) cannot be held: every second of it
 * is reported as cap violation, with at least that much energy over. */
static void a_feed_below_the_floor_is_reported(void **state) {
  (void)state;
  const char *sets[] = {
      "faults=[{kind: feed, limit: 20 kW, at: 20 min, duration: 30 min}]"};
  run r;
  run_scenario(&r, base, sets, 1);
  print_message("feed at 20 kW for 1800 s: %.0f s, %.3g J over the cap\n",
                r.sum.cap_violation_s, r.sum.cap_violation_j);
  assert_true(r.sum.cap_violation_s == 1800);
  assert_true(r.sum.cap_violation_j >= 1800 * (72 * 166 + 16.8e3 - 20e3));
  run_free(&r);
}

/* A cooling fault: the loop keeps 40% of its capacity and the racks it
 * serves have every GPU at the minimum cap (200 W for GB200) while it
 * lasts, under the static split and under a dynamic policy alike; the
 * loop removes no more than what it has left. */
static void a_cooling_fault_caps_the_racks_it_serves(void **state) {
  (void)state;
  static const char *const policies[] = {"static", "efficiency"};
  for (size_t p = 0; p < N_OF(policies); p++) {
    char set[64];
    policy_set(set, policies[p]);
    const char *sets[] = {
        set, "loops=[{name: liquid, kind: liquid, capacity: 300 kW}]",
        "grid.outdoor={value: 20 degC}",
        "faults=[{kind: cooling, loop: liquid, capacity: 40%, at: 20 min, "
        "duration: 20 min}]"};
    run r;
    run_scenario(&r, base, sets, 4);
    size_t n, rows, width;
    const double *t = tel_memory_times(r.sink, "facility", &n);
    const double *heat =
        tel_memory_column(r.sink, "loops", "heat_removed_w", &rows, &width);
    assert_non_null(heat);
    for (size_t i = 0; i < n; i++) {
      double cap = rack_at(&r, "gpu_cap_w", i, 0);
      bool during = t[i] > 1200 && t[i] <= 2400;
      if (during != (cap == 200))
        fail_msg("%s: GPU cap %g W at %.0f s", policies[p], cap, t[i]);
      if (during)
        assert_true(heat[i] <= 0.4 * 300e3 * (1 + 1e-12));
    }
    assert_int_equal(r.sum.fault_events, 1);
    assert_true(r.sum.fault_s == 1200);
    assert_true(r.sum.cap_violation_s == 0);
    run_free(&r);
  }
}

/* scenarios/faults.yaml: a PDU trip, a cooling loss, a feed drop and
 * random breaker trips through the mixed factory's day; the books close,
 * the cap holds (the backup limit included) and the losses are shown. */
static void the_faults_scenario_runs(void **state) {
  (void)state;
  run r;
  run_file(&r, "faults.yaml", NULL, 0);
  const factory_summary *s = &r.sum;
  print_message("faults.yaml: %llu fault events over %.0f s; %llu job "
                "failures, %.1f GPU-h lost to faults; %llu of %llu requests "
                "dropped\n",
                (unsigned long long)s->fault_events, s->fault_s,
                (unsigned long long)s->job_failures, s->fault_lost_gpu_hours,
                (unsigned long long)s->requests_dropped,
                (unsigned long long)s->requests_arrived);
  assert_true(s->fault_events >= 4);
  assert_true(s->fault_s >= 1800 + 3600 + 1200);
  assert_true(s->fault_lost_gpu_hours > 0);
  assert_true(s->requests_dropped > 0);
  assert_true(s->cap_violation_s == 0);
  assert_int_equal(s->jobs_done, 2);
  size_t n;
  const double *t = tel_memory_times(r.sink, "facility", &n);
  const double *power = facility(&r, "power_w", &n);
  for (size_t i = 0; i < n; i++)
    if (t[i] > 13 * 3600.0 && t[i] <= 13 * 3600.0 + 1200)
      assert_true(power[i] <= 420e3);
  run_free(&r);
}

static const bad_case bad_faults[] = {
    {"fault on an unknown rack",
     "faults=[{kind: pdu, racks: [nvl-1], at: 1 h, duration: 1 h}]",
     "no rack or rack group is called 'nvl-1'"},
    {"fault on an unknown loop",
     "faults=[{kind: cooling, loop: water, capacity: 50%, at: 1 h, "
     "duration: 1 h}]",
     "no cooling loop is called 'water'"},
    {"fault off the control ticks",
     "faults=[{kind: feed, limit: 100 kW, at: 1.5 s, duration: 1 h}]",
     "whole multiples of control_period"},
    {"faults too frequent",
     "faults=[{kind: feed, limit: 100 kW, mtbf: 10 ms, mttr: 10 ms}]",
     "at most 1e+05 are allowed"},
    {"fault with both timings",
     "faults=[{kind: feed, limit: 100 kW, at: 1 h, duration: 1 h, "
     "mtbf: 1 d, mttr: 1 h}]",
     "not both"},
    {"fault without timing", "faults=[{kind: pdu, racks: [nvl]}]",
     "needs a timing"},
};

/* Every allocation of a factory with services, training jobs (one of them
 * deferred on the carbon signal), a cooling loop, smoothing and PDU
 * faults goes through the engine's allocator: each one failing in turn
 * makes factory_create return NULL with SIM_ENOMEM and nothing left, a
 * full run leaves nothing after destroy, and runs whose allocations fail
 * part-way stop with SIM_ENOMEM or finish, leaving nothing either. */
static void allocation_failures_leave_nothing(void **state) {
  (void)state;
  const char *sets[] = {
      "duration=20 min",
      "loops=[{name: liquid, kind: liquid, capacity: 1.2 MW}]",
      ("smoothing={enabled: true, floor: 0%, hysteresis: 0 s, "
       "ramp_up: 1 kW/s, ramp_down: 1 kW/s, store: 2 MJ}"),
      "grid={carbon: {value: 300 gCO2/kWh}, outdoor: {value: 20 degC}}",
      "training.0.deferral=threshold",
      "training.0.flexibility=50%",
  };
  alloc_check_scenario(write_scenario(two_racks), sets, N_OF(sets), 12);
}

/* What a service serves flat out (factory_capacity.c: the roofline's
 * steps, for the estimate of a run's memory) against a run that offers it
 * three times as much with no timeout: its completions per second are
 * within 2x of the estimate, which is what the estimate needs (a backlog
 * estimated within 2x). Full clocks: the cap is far above the racks. */
static void capacity_matches_an_overloaded_run(void **state) {
  (void)state;
  static const char text[] =
      "name: cap\nseed: 3\nduration: 5 min\nsample_period: 1 min\n"
      "power: {cap: 1 MW}\n"
      "racks: [{name: h, count: 1, gpu: H100-SXM, gpus_per_rack: 8,\n"
      "         load: {level: 0%, noise: 0}}]\n"
      "services:\n"
      "  - {name: chat, model: Llama-3.1-8B, precision: fp8, replicas: 2,\n"
      "     timeout: 0 s, arrivals: {kind: poisson, rate: 1,\n"
      "     prompt: {mean: 500}, output: {mean: 200}}}\n";
  factory_scenario sc;
  factory_service_capacity cap, twice;
  sim_error err = {0};
  const char *path = write_scenario(text);
  assert_int_equal(factory_scenario_load(path, NULL, 0, &sc, &err), SIM_OK);
  assert_int_equal(factory_service_capacity_of(&sc, 0, 500, 200, &cap, &err),
                   SIM_OK);
  sc.cfg.services[0].replicas = 4;
  assert_int_equal(factory_service_capacity_of(&sc, 0, 500, 200, &twice, &err),
                   SIM_OK);
  factory_scenario_release(&sc);
  assert_close(twice.rps, 2 * cap.rps, 1e-12, 0);
  assert_close(twice.in_flight, 2 * cap.in_flight, 1e-12, 0);
  char rate[64];
  snprintf(rate, sizeof rate, "services.0.arrivals.rate=%.0f", 3 * cap.rps);
  const char *sets[] = {rate};
  run r;
  run_scenario(&r, text, sets, 1);
  double served = (double)r.sum.requests_completed / 300;
  print_message("capacity %.1f req/s estimated, %.1f served, %.0f in flight\n",
                cap.rps, served, cap.in_flight);
  assert_true(served > cap.rps / 2 && served < cap.rps * 2);
  run_free(&r);
}

int main(void) {
  struct CMUnitTest tests[64];
  size_t n = 0;
  TEST_ADD(tests, n, capacity_matches_an_overloaded_run);
  TEST_ADD(tests, n, a_pdu_trip_darkens_racks_and_interrupts_jobs);
  TEST_ADD(tests, n, a_feed_fault_holds_power_under_the_backup_limit);
  TEST_ADD(tests, n, a_feed_below_the_floor_is_reported);
  TEST_ADD(tests, n, a_cooling_fault_caps_the_racks_it_serves);
  TEST_ADD(tests, n, the_faults_scenario_runs);
  TEST_ROWS(tests, n, bad_workload_input, bad_faults);
  TEST_ADD(tests, n, allocation_failures_leave_nothing);
  return _cmocka_run_group_tests("work_faults", tests, n, NULL, NULL);
}
