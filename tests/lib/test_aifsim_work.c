/* test_aifsim_work.c - libaifsim's wider observation and its actions on
 * the workloads and the plant (include/aifsim.h): per service and per job
 * power, queues and SLOs, the GPUs' caps and clocks, loops and battery
 * read between steps; a cap series, job and service budgets, held jobs
 * and a loop's setpoint, each checked against what it must do by hand,
 * and refused with a code and a message when out of range or out of
 * order. The fixture is tests/lib/work.yaml. */
#include "test_util.h"

#include <aifsim.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WORK AIFSIM_SOURCE_DIR "/tests/lib/work.yaml"
#define QUICKSTART AIFSIM_SOURCE_DIR "/scenarios/quickstart.yaml"

enum { CHAT = 0, LONG = 0, SHORT = 1 };

static aifsim *open_with(const char *path, const char *const *sets, size_t n) {
  aifsim *a = NULL;
  if (aifsim_open(path, sets, n, NULL, &a) != AIFSIM_OK)
    fail_msg("aifsim_open: %s", aifsim_errmsg(a));
  return a;
}

static aifsim *open_work(void) { return open_with(WORK, NULL, 0); }

static aifsim_job job(const aifsim *a, size_t j) {
  aifsim_job s;
  assert_int_equal(aifsim_job_now(a, j, &s), AIFSIM_OK);
  return s;
}

static aifsim_service service(const aifsim *a, size_t k) {
  aifsim_service s;
  assert_int_equal(aifsim_service_now(a, k, &s), AIFSIM_OK);
  return s;
}

static double cap_now(const aifsim *a) {
  aifsim_power p;
  assert_int_equal(aifsim_power_now(a, &p), AIFSIM_OK);
  return p.cap_w;
}

/* The work fixture's one service and two jobs, by name; none past them. */
static void names_are_read(const aifsim *a) {
  assert_int_equal(aifsim_nservices(a), 1);
  assert_string_equal(aifsim_service_name(a, CHAT), "chat");
  assert_null(aifsim_service_name(a, 1));
  assert_int_equal(aifsim_njobs(a), 2);
  assert_string_equal(aifsim_job_name(a, LONG), "long");
  assert_string_equal(aifsim_job_name(a, SHORT), "short");
  assert_null(aifsim_job_name(a, 2));
}

/* The services' and jobs' names, GPUs and power, within the GPUs'; the
 * short job arrives at 60 s and fits at once; the queues agree. */
static void workloads_are_read(void **state) {
  (void)state;
  aifsim *a = open_work();
  names_are_read(a);
  assert_int_equal(aifsim_step(a, 30), AIFSIM_OK);
  aifsim_service s = service(a, CHAT);
  assert_close(s.gpus, 8, 0, 0);
  assert_true(s.power_w > 0 && isinf(s.budget_w));
  assert_true(s.queued >= 0 && s.in_batch > 0 && s.ended > 0);
  assert_true(s.slo_attainment >= 0 && s.slo_attainment <= 1);
  aifsim_job l = job(a, LONG), sh = job(a, SHORT);
  assert_int_equal(l.phase, AIFSIM_JOB_RUNNING);
  assert_close(l.gpus, 64, 0, 0);
  assert_true(l.power_w > 0 && !l.held);
  assert_int_equal(sh.phase, AIFSIM_JOB_COMING);
  assert_close(sh.gpus, 16, 0, 0);
  assert_close(sh.power_w, 0, 0, 0);
  aifsim_power p;
  assert_int_equal(aifsim_power_now(a, &p), AIFSIM_OK);
  assert_true(s.power_w + l.power_w < p.gpu_w); /* idle GPUs draw too */
  aifsim_queue q;
  assert_int_equal(aifsim_queue_now(a, &q), AIFSIM_OK);
  assert_close(q.jobs_running, 1, 0, 0);
  assert_close(q.jobs_waiting, 0, 0, 0);
  assert_close(q.requests_queued, s.queued, 0, 0);
  assert_int_equal(aifsim_run_to(a, 60), AIFSIM_OK);
  assert_int_equal(job(a, SHORT).phase, AIFSIM_JOB_RUNNING);
  assert_int_equal(aifsim_queue_now(a, &q), AIFSIM_OK);
  assert_close(q.jobs_running, 2, 0, 0);
  assert_int_equal(aifsim_service_now(a, 1, &s), AIFSIM_EINVAL);
  assert_int_equal(aifsim_job_now(a, 2, &l), AIFSIM_EINVAL);
  assert_int_equal(aifsim_job_now(a, 0, NULL), AIFSIM_EINVAL);
  assert_int_equal(aifsim_queue_now(NULL, &q), AIFSIM_EINVAL);
  aifsim_close(a);
}

/* The GPUs by rack group add up to the GPUs' power, with the IT parts
 * beside them under the IT power; per GPU, their caps average to the
 * group's. */
static void gpus_are_read(aifsim *a) {
  aifsim_gpus g;
  assert_int_equal(aifsim_group_gpus(a, 0, &g), AIFSIM_OK);
  assert_close(g.n, 128, 0, 0);
  assert_true(g.cap_min_w <= g.cap_mean_w && g.cap_mean_w <= g.cap_max_w);
  assert_true(g.clock_min > 0 && g.clock_min <= g.clock_mean &&
              g.clock_mean <= 1);
  aifsim_power p;
  assert_int_equal(aifsim_power_now(a, &p), AIFSIM_OK);
  assert_close(g.power_w, p.gpu_w, 1e-12, 0);
  aifsim_it_parts it; /* DGX H100: supplies and fans; no fabric */
  assert_int_equal(aifsim_it_parts_now(a, &it), AIFSIM_OK);
  assert_true(it.psu_loss_w > 0 && it.fan_w > 0);
  assert_close(it.outside_racks_w, 0, 0, 0);
  assert_true(p.gpu_w + it.psu_loss_w + it.fan_w < p.it_w);
  assert_int_equal(aifsim_it_parts_now(a, NULL), AIFSIM_EINVAL);
  size_t n = aifsim_ngpus(a);
  assert_int_equal(n, 128);
  double *cap = calloc(n, sizeof *cap), *clock = calloc(n, sizeof *clock);
  assert_int_equal(aifsim_gpu_caps(a, cap, clock, n), AIFSIM_OK);
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += cap[i];
  assert_close(sum / (double)n, g.cap_mean_w, 1e-12, 0);
  assert_int_equal(aifsim_gpu_caps(a, cap, NULL, n - 1), AIFSIM_EINVAL);
  free(cap);
  free(clock);
  assert_int_equal(aifsim_group_gpus(a, 1, &g), AIFSIM_EINVAL);
}

/* The work fixture's one loop, air-cooled, reads sensibly. */
static void loop_is_read(const aifsim *a) {
  assert_int_equal(aifsim_nloops(a), 1);
  assert_string_equal(aifsim_loop_name(a, 0), "air");
  assert_null(aifsim_loop_name(a, 1));
  aifsim_loop l;
  assert_int_equal(aifsim_loop_now(a, 0, &l), AIFSIM_OK);
  assert_true(l.temp_c >= l.supply_c && l.heat_w > 0 && l.power_w > 0);
  assert_close(l.supply_max_c, 45, 0, 0); /* air: ASHRAE A4 */
  assert_true(l.supply_min_c >= 5 && l.supply_min_c < l.supply_c);
  assert_int_equal(aifsim_loop_now(a, 1, &l), AIFSIM_EINVAL);
}

/* The GPUs, the loop and the battery read sensibly; a scenario without a
 * battery or work reads none. */
static void gpus_plant_battery_are_read(void **state) {
  (void)state;
  aifsim *a = open_work();
  assert_close(aifsim_battery_soc(a), 0.5, 0.01, 0); /* soc_initial */
  assert_int_equal(aifsim_step(a, 20), AIFSIM_OK);
  gpus_are_read(a);
  loop_is_read(a);
  double soc = aifsim_battery_soc(a);
  assert_true(soc >= 0.1 && soc <= 0.9);
  aifsim_close(a);
  a = open_with(QUICKSTART, (const char *const[]){"duration=1min"}, 1);
  assert_true(isnan(aifsim_battery_soc(a))); /* none */
  assert_int_equal(aifsim_nservices(a), 0);
  assert_int_equal(aifsim_njobs(a), 0);
  aifsim_close(a);
  assert_true(isnan(aifsim_battery_soc(NULL)));
  assert_int_equal(aifsim_ngpus(NULL), 0);
}

static const char *const cap_sets[] = {"duration=10min"};

/* The steps t, cap (400 kW from 60 s, then the scenario's again from
 * 90.5 s) in force from the first tick at or after each time, the client
 * stepping by periods or running past them; no cap violated. */
static void steps_in_force(bool by_periods, double *t, double *cap) {
  aifsim *a = open_with(QUICKSTART, cap_sets, 1);
  double contracted = cap_now(a);
  assert_int_equal(aifsim_set_cap_series(a, t, cap, 2), AIFSIM_OK);
  if (by_periods) {
    assert_int_equal(aifsim_step(a, 59), AIFSIM_OK);
    assert_close(cap_now(a), contracted, 0, 0);
    aifsim_power before;
    assert_int_equal(aifsim_power_now(a, &before), AIFSIM_OK);
    assert_true(before.facility_w > 400e3);
    assert_int_equal(aifsim_step(a, 1), AIFSIM_OK);
    assert_close(cap_now(a), 400e3, 0, 0);
    aifsim_power p;
    assert_int_equal(aifsim_power_now(a, &p), AIFSIM_OK);
    assert_true(p.facility_w <= 400e3);
    assert_int_equal(aifsim_step(a, 30), AIFSIM_OK); /* 90 s */
    assert_close(cap_now(a), 400e3, 0, 0);
  } else {
    assert_int_equal(aifsim_run_to(a, 75), AIFSIM_OK);
    assert_close(cap_now(a), 400e3, 0, 0);
  }
  assert_int_equal(aifsim_run_to(a, 91), AIFSIM_OK);
  assert_close(cap_now(a), contracted, 0, 0);
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  double v;
  assert_int_equal(aifsim_summary(a, "cap_violation_s", &v), AIFSIM_OK);
  assert_close(v, 0, 0, 0);
  aifsim_close(a);
}

/* Refused, nothing changed: a time past or not increasing, a cap out of
 * range, no arrays. */
static void bad_series_refused(aifsim *a, double *cap) {
  double past[] = {10}, same[] = {200, 200}, big[] = {1e30};
  assert_int_equal(aifsim_set_cap_series(a, past, cap, 1), AIFSIM_ERANGE);
  assert_non_null(strstr(aifsim_errmsg(a), "before now"));
  assert_int_equal(aifsim_set_cap_series(a, same, cap, 2), AIFSIM_ERANGE);
  assert_int_equal(aifsim_set_cap_series(a, (double[]){200}, big, 1),
                   AIFSIM_ERANGE);
  assert_non_null(strstr(aifsim_errmsg(a), "contracted"));
  assert_int_equal(aifsim_set_cap_series(a, NULL, NULL, 1), AIFSIM_EINVAL);
  assert_int_equal(aifsim_set_cap_series(a, NULL, NULL, 0), AIFSIM_OK);
}

/* Steps at 60 s (400 kW, under the 430 kW drawn then) and 90.5 s (the
 * scenario's again): each in force from the first tick at or after its
 * time, whether the client steps by periods or runs past them. */
static void cap_series_steps(void **state) {
  (void)state;
  double t[] = {60, 90.5}, cap[] = {400e3, NAN}; /* 400 kW binds */
  for (int by_periods = 0; by_periods < 2; by_periods++)
    steps_in_force(by_periods, t, cap);
  /* aifsim_set_cap drops the steps not yet in force. */
  aifsim *a = open_with(QUICKSTART, cap_sets, 1);
  double contracted = cap_now(a);
  assert_int_equal(aifsim_set_cap_series(a, t, cap, 1), AIFSIM_OK);
  assert_int_equal(aifsim_set_cap(a, NAN), AIFSIM_OK);
  assert_int_equal(aifsim_step(a, 100), AIFSIM_OK);
  assert_close(cap_now(a), contracted, 0, 0);
  bad_series_refused(a, cap);
  aifsim_close(a);
}

/* A budget on the long job holds its GPUs' power at or under it from
 * the next allocation; lifted, the power comes back; the books close.
 * A budget on the service likewise. */
static void budgets_hold_power(void **state) {
  (void)state;
  aifsim *a = open_work();
  assert_int_equal(aifsim_step(a, 30), AIFSIM_OK);
  double free_w = job(a, LONG).power_w, budget = 0.6 * free_w;
  assert_int_equal(aifsim_set_job_budget(a, LONG, budget), AIFSIM_OK);
  assert_close(job(a, LONG).budget_w, budget, 0, 0);
  for (int k = 0; k < 30; k++) {
    assert_int_equal(aifsim_step(a, 1), AIFSIM_OK);
    double w = job(a, LONG).power_w;
    assert_true(w <= budget * (1 + 1e-12));
    assert_true(w > 0.9 * budget); /* training fills its caps */
  }
  assert_int_equal(aifsim_set_service_budget(a, CHAT, 100),
                   AIFSIM_ERANGE); /* below its minimum caps */
  assert_non_null(strstr(aifsim_errmsg(a), "minimum caps"));
  double sbudget = 0.8 * service(a, CHAT).power_w;
  assert_int_equal(aifsim_set_service_budget(a, CHAT, sbudget), AIFSIM_OK);
  for (int k = 0; k < 10; k++) {
    assert_int_equal(aifsim_step(a, 1), AIFSIM_OK);
    assert_true(service(a, CHAT).power_w <= sbudget * (1 + 1e-12));
  }
  assert_int_equal(aifsim_set_job_budget(a, LONG, INFINITY), AIFSIM_OK);
  assert_int_equal(aifsim_step(a, 2), AIFSIM_OK);
  assert_true(job(a, LONG).power_w > 1.5 * budget); /* near free_w again */
  assert_true(isinf(job(a, LONG).budget_w));
  assert_int_equal(aifsim_finish(a), AIFSIM_OK); /* the invariants hold */
  aifsim_close(a);
}

/* The short job held before it arrives waits past its arrival while the
 * GPUs it needs are free, and starts the moment it is released. */
static void held_job_waits_until_released(void **state) {
  (void)state;
  aifsim *a = open_work();
  assert_int_equal(aifsim_hold_job(a, SHORT, 1), AIFSIM_OK);
  assert_int_equal(aifsim_run_to(a, 200), AIFSIM_OK);
  aifsim_job s = job(a, SHORT);
  assert_int_equal(s.phase, AIFSIM_JOB_WAITING);
  assert_int_equal(s.held, 1);
  assert_close(s.power_w, 0, 0, 0);
  aifsim_queue q;
  assert_int_equal(aifsim_queue_now(a, &q), AIFSIM_OK);
  assert_close(q.jobs_waiting, 1, 0, 0);
  assert_close(q.jobs_held, 1, 0, 0);
  assert_int_equal(aifsim_hold_job(a, SHORT, 0), AIFSIM_OK);
  assert_int_equal(job(a, SHORT).phase, AIFSIM_JOB_RUNNING);
  assert_int_equal(aifsim_hold_job(a, SHORT, 1), AIFSIM_EINVAL);
  assert_non_null(strstr(aifsim_errmsg(a), "has started"));
  assert_int_equal(aifsim_hold_job(a, LONG, 1), AIFSIM_EINVAL);
  assert_int_equal(aifsim_hold_job(a, 2, 1), AIFSIM_EINVAL);
  assert_non_null(strstr(aifsim_errmsg(a), "no job 2"));
  assert_int_equal(aifsim_finish(a), AIFSIM_OK); /* jobs are conserved */
  aifsim_close(a);
}

/* A job in the scheduler's queue (the long job takes 112 of 128 GPUs, so
 * the short one does not fit) leaves it when held and is queued again
 * when released; held to the end, the books still close. */
static void queued_job_is_withdrawn(void **state) {
  (void)state;
  const char *const sets[] = {"training.0.dp=14"};
  aifsim *a = open_with(WORK, sets, 1);
  assert_int_equal(aifsim_run_to(a, 61), AIFSIM_OK);
  assert_int_equal(job(a, SHORT).phase, AIFSIM_JOB_WAITING);
  assert_int_equal(aifsim_hold_job(a, SHORT, 1), AIFSIM_OK);
  assert_int_equal(job(a, SHORT).held, 1);
  assert_int_equal(aifsim_step(a, 10), AIFSIM_OK);
  assert_int_equal(aifsim_hold_job(a, SHORT, 0), AIFSIM_OK);
  aifsim_job s = job(a, SHORT);
  assert_int_equal(s.phase, AIFSIM_JOB_WAITING); /* still does not fit */
  assert_int_equal(s.held, 0);
  assert_int_equal(aifsim_hold_job(a, SHORT, 1), AIFSIM_OK);
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  double queued;
  assert_int_equal(aifsim_summary(a, "jobs_queued", &queued), AIFSIM_OK);
  assert_close(queued, 1, 0, 0);
  aifsim_close(a);
}

/* The loop's temperature after 10 min with its supply setpoint at 16,
 * at the scenario's and at 30 degC: in that order, each above its
 * setpoint; a setpoint outside the plant's range is refused. */
static void setpoint_moves_the_loop(void **state) {
  (void)state;
  double temp[3], sp[3] = {16, NAN, 30};
  for (int k = 0; k < 3; k++) {
    aifsim *a = open_work();
    if (!isnan(sp[k]))
      assert_int_equal(aifsim_set_supply(a, 0, sp[k]), AIFSIM_OK);
    assert_int_equal(aifsim_step(a, 600), AIFSIM_OK);
    aifsim_loop l;
    assert_int_equal(aifsim_loop_now(a, 0, &l), AIFSIM_OK);
    if (!isnan(sp[k]))
      assert_close(l.supply_c, sp[k], 0, 0);
    assert_true(l.temp_c > l.supply_c);
    temp[k] = l.temp_c;
    assert_int_equal(aifsim_finish(a), AIFSIM_OK);
    aifsim_close(a);
  }
  assert_true(temp[0] < temp[1] && temp[1] < temp[2]);
  aifsim *a = open_work();
  assert_int_equal(aifsim_set_supply(a, 0, 46), AIFSIM_ERANGE);
  assert_non_null(strstr(aifsim_errmsg(a), "range"));
  assert_int_equal(aifsim_set_supply(a, 0, 4), AIFSIM_ERANGE);
  assert_int_equal(aifsim_set_supply(a, 0, NAN), AIFSIM_ERANGE);
  assert_int_equal(aifsim_set_supply(a, 1, 20), AIFSIM_EINVAL);
  aifsim_loop l;
  assert_int_equal(aifsim_loop_now(a, 0, &l), AIFSIM_OK);
  assert_true(l.supply_c < 30); /* unchanged */
  aifsim_close(a);
}

/* Every action after finish, on NULL, or with an unknown index: a code,
 * a message, nothing changed; reads still work after finish. */
static void misuse_is_refused(void **state) {
  (void)state;
  aifsim *a = open_work();
  assert_int_equal(aifsim_set_job_budget(a, 7, 1e5), AIFSIM_EINVAL);
  assert_non_null(strstr(aifsim_errmsg(a), "no job 7"));
  assert_int_equal(aifsim_set_service_budget(a, 3, 1e5), AIFSIM_EINVAL);
  assert_non_null(strstr(aifsim_errmsg(a), "no service 3"));
  assert_int_equal(aifsim_set_job_budget(a, LONG, -1), AIFSIM_ERANGE);
  assert_int_equal(aifsim_finish(a), AIFSIM_OK);
  assert_int_equal(aifsim_set_job_budget(a, LONG, 1e5), AIFSIM_EINVAL);
  assert_non_null(strstr(aifsim_errmsg(a), "finished"));
  assert_int_equal(aifsim_set_service_budget(a, CHAT, 1e5), AIFSIM_EINVAL);
  assert_int_equal(aifsim_hold_job(a, SHORT, 1), AIFSIM_EINVAL);
  assert_int_equal(aifsim_set_supply(a, 0, 20), AIFSIM_EINVAL);
  double t[] = {2000}, c[] = {1e5};
  assert_int_equal(aifsim_set_cap_series(a, t, c, 1), AIFSIM_EINVAL);
  aifsim_job j;
  assert_int_equal(aifsim_job_now(a, SHORT, &j), AIFSIM_OK);
  assert_int_equal(j.phase, AIFSIM_JOB_DONE);
  aifsim_close(a);
  assert_int_equal(aifsim_set_job_budget(NULL, 0, 1), AIFSIM_EINVAL);
  assert_int_equal(aifsim_set_service_budget(NULL, 0, 1), AIFSIM_EINVAL);
  assert_int_equal(aifsim_hold_job(NULL, 0, 1), AIFSIM_EINVAL);
  assert_int_equal(aifsim_set_supply(NULL, 0, 20), AIFSIM_EINVAL);
  assert_int_equal(aifsim_set_cap_series(NULL, t, c, 1), AIFSIM_EINVAL);
  assert_int_equal(aifsim_service_now(NULL, 0, NULL), AIFSIM_EINVAL);
  assert_int_equal(aifsim_loop_now(NULL, 0, NULL), AIFSIM_EINVAL);
  assert_int_equal(aifsim_group_gpus(NULL, 0, NULL), AIFSIM_EINVAL);
  assert_int_equal(aifsim_gpu_caps(NULL, NULL, NULL, 0), AIFSIM_EINVAL);
  assert_null(aifsim_job_name(NULL, 0));
  assert_null(aifsim_loop_name(NULL, 0));
  assert_int_equal(aifsim_nloops(NULL), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(workloads_are_read),
      cmocka_unit_test(gpus_plant_battery_are_read),
      cmocka_unit_test(cap_series_steps),
      cmocka_unit_test(budgets_hold_power),
      cmocka_unit_test(held_job_waits_until_released),
      cmocka_unit_test(queued_job_is_withdrawn),
      cmocka_unit_test(setpoint_moves_the_loop),
      cmocka_unit_test(misuse_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
