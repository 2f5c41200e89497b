/* test_workloads_tick.c - the tick's packed replicas (workloads_tick.c):
 * the clocks of a service's replicas taken from their runs' loads in
 * one loop (work__replica_phis), and with the loads the replicas hold
 * given to it, are, replica by replica, the slowest of
 * their GPUs' rack_gpu_phi, to the bit; on fleets of replicas of random
 * sizes laid end to end as the services place them, across racks of two
 * GPU types, with caps that differ inside a replica (several runs),
 * thermal caps, and loads and caps that repeat from one replica to the
 * next (the near clock's hits) or do not; and replicas of one run each
 * (the held clocks' paths for them, racks of one type or of several,
 * thermal caps under the caps or not). The drive's loads, a
 * service's taken a chunk at a time (workloads_loads.c), at every run
 * of their replicas. (The replicas' stretches, the background on the
 * free GPUs and a class's priority: test_workloads_stretch.c.) */
#define WORK_SCENARIO "work_tick.yaml"
#include "lanes.h"
#include "test_workloads_run.h"

#include <stdint.h>

#include "test_catalogs.h"
#include "workloads_internal.h"

#include "reps_fixture.h"

/* The packed clocks, both ways: through the fleet's loads
 * (work__replica_phis, no loads given) and with the loads the replicas
 * hold (given), each with its own near clock kept across
 * rounds; each replica's the slowest of its GPUs'. */
static void replica_clocks_are_their_gpus_slowest(void **state) {
  (void)state;
  static uint32_t size[MAX_REPS];
  static gpu_load load[MAX_REPS];
  static double phi[MAX_REPS], held[MAX_REPS];
  static packed p;
  two_types t;
  rack_fleet *f = fleet_make(&t, "B200", "GB200", NULL);
  srand(27);
  rack_phi_last last = {.type = RACK_PHI_NONE}, last_held = last;
  uint32_t several = 0; /* replicas of more than one run */
  for (int round = 0; round < 60; round++) {
    uint32_t nrep = lay_out(f, size, load);
    for (uint32_t r = 0; r < f->nracks; r++)
      f->thermal_cap_w[r] = rand() % 3 ? INFINITY : 800;
    rack_fleet_update(f, NULL);
    assert_true(rack_fleet_runs_fresh(f));
    pack(f, size, nrep, &p);
    work_reps r = {nrep, p.run0, p.runs, p.rack, p.type, false, false,
                   false, 0, false};
    work__replica_phis(f, &r, phi, &last);
    r.held = true;
    work__replica_phis(f, &r, held, &last_held);
    several += check_slowest(f, size, nrep, &p, phi);
    check_slowest(f, size, nrep, &p, held);
  }
  assert_true(several > 100);
  two_types_free(&t);
}

/* A round of loads_reach_every_run and chunks_reach_every_run: replicas
 * laid out in one of three ways by the round (several runs, one run, one
 * run in order), the fleet updated and packed, a fresh load drawn for
 * each replica; their work_reps. */
static work_reps lay_round(rack_fleet *f, int round, uint32_t *size,
                           gpu_load *load, gpu_load *fresh, packed *p) {
  int way = round % 3;
  uint32_t nrep =
      way == 0 ? lay_out(f, size, load) : lay_out_one(f, size, load, 2);
  rack_fleet_update(f, NULL);
  pack(f, size, nrep, p);
  for (uint32_t k = 0; k < nrep; k++)
    fresh[k] = drawn_load();
  return (work_reps){nrep, p->run0,  p->runs, p->rack, p->type,
                     true, way == 2, false,   0,       false};
}

/* The drive's loads, a service's replicas at a time
 * (work__reps_loads_to_runs), reach every run of each replica (and its
 * GPUs), whatever the services' sizes: replicas of several runs
 * (lay_out), of one run each (lay_out_one), and those in order at once
 * (r.seq); the held clocks read them back from the runs as the slowest
 * of the GPUs'. */
static void loads_reach_every_run(void **state) {
  (void)state;
  static uint32_t size[MAX_REPS];
  static gpu_load load[MAX_REPS], fresh[MAX_REPS];
  static double phi[MAX_REPS];
  static packed p;
  two_types t;
  rack_fleet *f = fleet_make(&t, "B200", "GB200", NULL);
  srand(31);
  for (int round = 0; round < 30; round++) {
    work_reps r = lay_round(f, round, size, load, fresh, &p);
    uint32_t nrep = r.n;
    for (uint32_t k0 = 0, n; k0 < nrep; k0 += n) { /* the services */
      n = 1 + (uint32_t)(rand() % 40);
      n = n < nrep - k0 ? n : nrep - k0;
      work__reps_loads_to_runs(f, &r, k0, n, fresh + k0);
    }
    for (uint32_t k = 0, at = 0; k < nrep; at += size[k++]) {
      for (uint32_t q = p.run0[k]; q < p.run0[k + 1]; q++) {
        gpu_load l = rack_run_load(f, p.runs[q]);
        assert_memory_equal(&l, &fresh[k], sizeof l);
      }
      rack_fleet_gpu_loads(f);
      gpu_load g = rack_gpu_load(f, at + size[k] - 1);
      assert_memory_equal(&g, &fresh[k], sizeof g);
    }
    rack_phi_last last = {.type = RACK_PHI_NONE};
    work__replica_phis(f, &r, phi, &last);
    check_slowest(f, size, nrep, &p, phi);
  }
  two_types_free(&t);
}

/* A service's take as the drive's chunks ask it (work__reps_take_to_runs):
 * its loads src from its first replica, the chunks checked to go up from
 * it one after another, none empty nor over room. */
typedef struct chunk_take {
  const gpu_load *src;
  uint32_t next, room;
} chunk_take;

static void take_chunk(void *svc, uint32_t first, uint32_t n, gpu_load *out) {
  chunk_take *t = svc;
  assert_int_equal(first, t->next);
  assert_true(n > 0 && n <= t->room);
  memcpy(out, t->src + first, n * sizeof *out);
  t->next += n;
}

/* The drive's loads taken a chunk at a time (work__reps_take_to_runs,
 * rooms of 1 to more than a service) reach every run of each replica,
 * in the three layouts of loads_reach_every_run, services of 1 to 40
 * replicas: a chunk's loads at its own replicas' runs. */
static void chunks_reach_every_run(void **state) {
  (void)state;
  static const uint32_t room[] = {1, 3, 7, 40};
  static uint32_t size[MAX_REPS];
  static gpu_load load[MAX_REPS], fresh[MAX_REPS], buf[40];
  static packed p;
  two_types t;
  rack_fleet *f = fleet_make(&t, "B200", "GB200", NULL);
  srand(32);
  for (int round = 0; round < 24; round++) {
    work_reps r = lay_round(f, round, size, load, fresh, &p);
    uint32_t nrep = r.n;
    for (uint32_t k0 = 0, n; k0 < nrep; k0 += n) { /* the services */
      n = 1 + (uint32_t)(rand() % 40);
      n = n < nrep - k0 ? n : nrep - k0;
      chunk_take c = {fresh + k0, 0, room[(uint32_t)round / 3 % 4]};
      work__reps_take_to_runs(f, &r, k0, n, take_chunk, &c, buf, c.room);
      assert_int_equal(c.next, n);
    }
    for (uint32_t k = 0; k < nrep; k++)
      for (uint32_t q = p.run0[k]; q < p.run0[k + 1]; q++) {
        gpu_load l = rack_run_load(f, p.runs[q]);
        assert_memory_equal(&l, &fresh[k], sizeof l);
      }
  }
  two_types_free(&t);
}

/* 60 rounds of replicas of one run each (lay_out_one, a load and cap new
 * one time in odds) over racks of types a, b (and c), every other round
 * with a thermal cap on every other rack, the odd ones or the even
 * (under some replicas' caps, so a cap like the replica before's is not
 * always held alike): each
 * replica's clock from the loads held is the slowest of its GPUs', and
 * the runs in order (r.seq: the caps read in place, hits_seq's eight a
 * turn, four lanes a register and two; the racks' type known or read)
 * give the same clocks as read through the runs' indices. */
static void one_run_rounds(const char *a, const char *b, const char *c,
                           int odds) {
  static uint32_t size[MAX_REPS];
  static gpu_load load[MAX_REPS];
  static double held[MAX_REPS], seq[MAX_REPS], narrow[MAX_REPS],
      typed[MAX_REPS];
  static packed p;
  two_types t;
  rack_fleet *f = fleet_make(&t, a, b, c);
  rack_phi_last last = {.type = RACK_PHI_NONE}, last_seq = last,
                last_narrow = last, last_typed = last;
  for (int round = 0; round < 60; round++) {
    uint32_t nrep = lay_out_one(f, size, load, odds);
    for (uint32_t r = 0; r < f->nracks; r++)
      f->thermal_cap_w[r] =
          round % 2 && (r + round / 2) % 2 ? 800 : INFINITY;
    rack_fleet_update(f, NULL);
    assert_true(rack_fleet_runs_fresh(f));
    pack(f, size, nrep, &p);
    assert_int_equal(p.run0[nrep], nrep); /* one run a replica */
    work_reps r = {nrep, p.run0, p.runs, p.rack, p.type, true, false,
                   false, 0, false};
    work__replica_phis(f, &r, held, &last);
    check_slowest(f, size, nrep, &p, held);
    assert_true(work__runs_seq(p.run0, p.runs, nrep)); /* from GPU 0 on */
    r.seq = true;
    work__replica_phis(f, &r, seq, &last_seq);
    assert_memory_equal(seq, held, nrep * sizeof *held);
    sim_lanes_narrow = true; /* two lanes a register where AVX2 is too */
    work__replica_phis(f, &r, narrow, &last_narrow);
    sim_lanes_narrow = false;
    assert_memory_equal(narrow, held, nrep * sizeof *held);
    r.typed = work__racks_type(f, &r.racks_type); /* the type known */
    assert_true(r.typed);
    work__replica_phis(f, &r, typed, &last_typed);
    assert_memory_equal(typed, held, nrep * sizeof *held);
  }
  two_types_free(&t);
}

/* The held clocks of replicas of one run each, on a fleet of one GPU type
 * (racks alike: hits_plain, or hits_seq, while no thermal cap is at or
 * under the clock's cap) and on ones of two (rack by rack: hits_one),
 * each type after the other; loads and caps new at every replica (the
 * request level's peak: seq_from's misses one after another), every
 * other replica, one in nine or one in forty (stretches of hits broken
 * at every place of hits_seq's eight a turn, its four and its last
 * few). */
static void one_run_replicas_are_their_gpus_slowest(void **state) {
  (void)state;
  srand(29);
  static const int odds[] = {1, 2, 9, 40};
  for (size_t k = 0; k < sizeof odds / sizeof *odds; k++) {
    one_run_rounds("GB200", "GB200", NULL, odds[k]);
    one_run_rounds("B200", "GB200", NULL, odds[k]);
    one_run_rounds("GB200", "B200", "GB200", odds[k]);
  }
}

/* Replicas of one run each, in order, all at one load and cap but
 * replica j, whose one word is another's of the load (sm at the mem's
 * value, ...) or whose cap is another: every j, every such word, each
 * compare of hits_seq's (one at a time, two lanes a register and four)
 * sees it, the clocks the slowest of the GPUs'. A lane compared against
 * the wrong word would take j for a hit; or replica 36 on (rack 1)
 * held under the cap by its rack's thermal cap. The same replicas to j
 * as one slot's runs (work__runs_phi, each run compared with last)
 * leave last at j's. */
enum { OFF_REPS = 40 };

/* OFF_REPS replicas of two GPUs, one run each, in order from GPU 0
 * (packed in p), every GPU at load l and its type's least cap (cap). */
typedef struct off_rig {
  uint32_t size[OFF_REPS];
  double phi[OFF_REPS];
  packed p;
  two_types t;
  rack_fleet *f;
  double cap;
} off_rig;

static off_rig *off_open(gpu_load l) {
  static off_rig o;
  rack_fleet *f = o.f = fleet_make(&o.t, "GB200", "GB200", NULL);
  o.cap = f->types[f->type[0]]->cap_min_w;
  for (uint32_t k = 0; k < OFF_REPS; k++) {
    o.size[k] = 2;
    for (uint32_t i = 2 * k; i < 2 * k + 2; i++) {
      rack_set_unit_key(f, i, k + 1);
      rack_set_load(f, i, l);
      f->cap_w[i] = o.cap;
    }
  }
  rack_fleet_update(f, NULL);
  pack(f, o.size, OFF_REPS, &o.p);
  assert_true(work__runs_seq(o.p.run0, o.p.runs, OFF_REPS));
  return &o;
}

/* Replica j's GPUs at load (variant v's word off, cap v == 6 one watt
 * over the others', rack 1's thermal cap under the cap for v == 7);
 * load[j] is j's load. */
static void off_set(off_rig *o, uint32_t j, int v, gpu_load l, double th1,
                    gpu_load *load) {
  rack_fleet *f = o->f;
  f->thermal_cap_w[1] = v == 7 ? o->cap - 1 : th1;
  for (uint32_t k = 0; k < OFF_REPS; k++)
    load[k] = l;
  double w[3] = {l.sm, l.mem, l.busy};
  if (v < 6) /* word v / 2 at the value of one of the other two */
    w[v / 2] = w[(v / 2 + 1 + v % 2) % 3];
  load[j] = (gpu_load){w[0], w[1], w[2]};
  for (uint32_t i = 2 * j; i < 2 * j + 2; i++) {
    rack_set_load(f, i, load[j]);
    f->cap_w[i] = v == 6 ? o->cap + 1 : o->cap;
  }
  rack_fleet_caps_written(f);
}

/* Every GPU back at load l and the cap, rack 1's thermal cap th1. */
static void off_reset(off_rig *o, uint32_t j, gpu_load l, double th1) {
  rack_fleet *f = o->f;
  f->thermal_cap_w[1] = th1;
  for (uint32_t i = 2 * j; i < 2 * j + 2; i++) {
    rack_set_load(f, i, l);
    f->cap_w[i] = o->cap;
  }
  rack_fleet_caps_written(f);
}

/* The clocks, one at a time and in lanes: the slowest of the GPUs', j's
 * not the others'. */
static void off_clocks_seen(off_rig *o, uint32_t j) {
  work_reps r = {OFF_REPS, o->p.run0, o->p.runs, o->p.rack, o->p.type,
                 true,     true,      false,     0,         false};
  for (int narrow = 0; narrow < 2; narrow++) {
    rack_phi_last last = {.type = RACK_PHI_NONE};
    sim_lanes_narrow = narrow;
    work__replica_phis(o->f, &r, o->phi, &last);
    sim_lanes_narrow = false;
    check_slowest(o->f, o->size, OFF_REPS, &o->p, o->phi);
    assert_false(sim_same_bits(o->phi[j], o->phi[0]));
  }
}

/* The replicas 0 .. j as one slot's runs (work__runs_phi): j last, so a
 * hit taken for it would leave last at the others' keys. */
static void off_runs_leave_last_at_j(off_rig *o, uint32_t j, gpu_load lj) {
  rack_fleet *f = o->f;
  rack_phi_last last = {.type = RACK_PHI_NONE};
  double got = work__runs_phi(f, o->p.runs, j + 1, &last), want = 1;
  for (uint32_t i = 0; i < 2 * j + 2; i++)
    want = fmin(want, rack_gpu_phi(f, i));
  assert_memory_equal(&got, &want, sizeof got);
  gpu_load kept = {last.sm, last.mem, last.busy};
  assert_memory_equal(&kept, &lj, sizeof kept);
  assert_true(sim_same_bits(last.cap, rack_gpu_cap_w(f, 2 * j)));
}

static void one_word_off(void **state) {
  (void)state;
  const gpu_load l = {0.9, 0.6, 1};
  off_rig *o = off_open(l);
  assert_true(o->f->rack[72] == 1 && o->f->rack[71] == 0); /* replica 36 on */
  const double th1 = o->f->thermal_cap_w[1];
  static gpu_load load[OFF_REPS];
  for (uint32_t j = 1; j < OFF_REPS; j++)
    for (int v = 0; v < 8; v++) {
      if (v == 7 && j != 36) /* 7: rack 1's thermal cap under the cap */
        continue;
      off_set(o, j, v, l, th1, load);
      off_clocks_seen(o, j);
      off_runs_leave_last_at_j(o, j, load[j]);
      off_reset(o, j, l, th1);
    }
  two_types_free(&o->t);
}

/* Replicas of one run each, in order, their loads one known stretch
 * (rack_set_run_loads_fill, as a fluid service's group hands them over;
 * hits_seq then compares the caps alone, work__hits_known): all at one
 * cap but replica j's, or all at one but replica j's load written after
 * the fill (rack_set_run_load drops the stretch, so the loads are
 * compared again). Every j, each way: the clocks the slowest of the
 * GPUs', j's not the others'. */
static void known_stretch_clocks(void **state) {
  (void)state;
  const gpu_load l = {0.9, 0.6, 1}, other = {0.6, 0.9, 1};
  off_rig *o = off_open(l);
  rack_fleet *f = o->f;
  for (uint32_t j = 1; j < OFF_REPS; j++)
    for (int v = 0; v < 2; v++) {
      rack_set_run_loads_fill(f, o->p.runs[0], OFF_REPS, l);
      if (v == 0)
        rack_set_run_cap(f, o->p.runs[j], o->cap + 1);
      else
        rack_set_run_load(f, o->p.runs[j], other);
      assert_true((rack_known_at(f, o->p.runs[j]) != NULL) == (v == 0));
      work_reps r = {OFF_REPS, o->p.run0, o->p.runs, o->p.rack, o->p.type,
                     true,     true,      false,     0,         false};
      rack_phi_last last = {.type = RACK_PHI_NONE};
      work__replica_phis(f, &r, o->phi, &last);
      rack_fleet_gpu_loads(f);
      rack_fleet_gpu_caps(f);
      check_slowest(f, o->size, OFF_REPS, &o->p, o->phi);
      assert_false(sim_same_bits(o->phi[j], o->phi[0]));
      rack_set_run_cap(f, o->p.runs[j], o->cap);
    }
  two_types_free(&o->t);
}

/* work__racks_type: the racks' one GPU type where they share it, none
 * where two groups' differ. */
static void racks_type_of_the_fleet(void **state) {
  (void)state;
  static const struct {
    const char *a, *b, *c;
    bool one;
  } rows[] = {{"GB200", "GB200", NULL, true},
              {"B200", "GB200", NULL, false},
              {"GB200", "B200", "GB200", false},
              {"GB200", "GB200", "GB200", true}};
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
    two_types t;
    rack_fleet *f = fleet_make(&t, rows[k].a, rows[k].b, rows[k].c);
    uint32_t type = 0;
    assert_true(work__racks_type(f, &type));
    assert_int_equal(type, rows[k].one ? f->type[0] : RACK_PHI_NONE);
    two_types_free(&t);
  }
}

int main(void) {
  struct CMUnitTest tests[40];
  size_t n = 0;
  TEST_ADD(tests, n, replica_clocks_are_their_gpus_slowest);
  TEST_ADD(tests, n, one_run_replicas_are_their_gpus_slowest);
  TEST_ADD(tests, n, chunks_reach_every_run);
  TEST_ADD(tests, n, loads_reach_every_run);
  TEST_ADD(tests, n, one_word_off);
  TEST_ADD(tests, n, known_stretch_clocks);
  TEST_ADD(tests, n, racks_type_of_the_fleet);
  return _cmocka_run_group_tests("workloads_tick", tests, n,
                                 test_catalogs_load_gpu, test_catalogs_release);
}
