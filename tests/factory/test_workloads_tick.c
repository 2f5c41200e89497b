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
 * thermal caps under the caps or not). The stretches of a service's
 * replicas that take their worth in one call (work__replica_stretch)
 * against the slot-reading loop they replaced. The drive's loads, a
 * service's taken a chunk at a time (workloads_loads.c), at every run
 * of their replicas. And the background load
 * on the free GPUs (factory.c's list of free runs) after jobs have come
 * and gone, and the noise of racks with no free GPU stepping on. */
#define WORK_SCENARIO "work_tick.yaml"
#include "lanes.h"
#include "test_workloads_run.h"

#include <stdint.h>

#include "test_catalogs.h"
#include "workloads_internal.h"

enum { MAX_REPS = 600 };

static double uniform(void) { return (double)rand() / RAND_MAX; }

/* A load drawn field by field, busy mostly 1: an initializer list's
 * evaluations are unspecified in order, and the draws are to be the same
 * whatever the compiler. */
static gpu_load drawn_load(void) {
  gpu_load l;
  l.sm = uniform();
  l.mem = uniform();
  l.busy = rand() % 4 ? 1 : uniform();
  return l;
}

/* A fleet with units of groups of 4 racks: B200 then GB200 (so a
 * replica laid across them has runs of two types), or types a, b and c
 * (c NULL: two groups). */
typedef struct two_types {
  rack_group_spec grp[3];
  rack_fleet *f;
} two_types;

static rack_fleet *fleet_make(two_types *t, const char *a, const char *b,
                              const char *c) {
  sim_error err = {0};
  const char *names[3] = {a, b, c};
  size_t n = c != NULL ? 3 : 2;
  for (size_t k = 0; k < n; k++)
    t->grp[k] = (rack_group_spec){names[k], gpu_catalog_find(&cats.gpu, names[k]),
                                  4, 72, 1e9, 0, 0, NULL, 0, NAN, NULL, 0,
                                  false, 0};
  t->f = rack_fleet_create(t->grp, n, NULL, &err);
  assert_non_null(t->f);
  assert_int_equal(rack_fleet_keep_units(t->f), SIM_OK);
  return t->f;
}

static void two_types_free(two_types *t) {
  rack_fleet_destroy(t->f);
}

/* A cap in GPU i's range. */
static double some_cap(const rack_fleet *f, uint32_t i) {
  const gpu_spec *g = f->types[f->type[i]];
  return g->cap_min_w + uniform() * (g->cap_max_w - g->cap_min_w);
}

/* Replicas end to end over the fleet's GPUs from 0: replica k has
 * size[k] GPUs, key k + 1 and load[k]; a load and a cap per replica,
 * repeated from the one before at times; now and then a GPU of its own
 * cap (a run apart). How many replicas fit. */
static uint32_t lay_out(rack_fleet *f, uint32_t *size, gpu_load *load) {
  uint32_t k = 0, at = 0;
  gpu_load l = {0.5, 0.5, 1};
  double cap = some_cap(f, 0);
  while (k < MAX_REPS) {
    uint32_t n = 1 + (uint32_t)(rand() % 16);
    if (at + n > f->n)
      break;
    if (rand() % 3 != 0) /* else as the replica before */
      l = drawn_load();
    if (rand() % 3 != 0)
      cap = some_cap(f, at);
    for (uint32_t i = at; i < at + n; i++) {
      rack_set_unit_key(f, i, k + 1);
      rack_set_load(f, i, l);
      f->cap_w[i] = rand() % 11 == 0 ? f->types[f->type[i]]->cap_min_w : cap;
    }
    load[k] = l;
    size[k++] = n;
    at += n;
  }
  return k;
}

/* Replicas of 1 to 8 GPUs end to end over the fleet's GPUs from 0, none
 * across a rack and none with a GPU of a cap of its own: each one run
 * (the services' layouts at bench-10k). A load and a cap per replica,
 * each new one time in odds (else the replica before's); how many
 * replicas. */
static uint32_t lay_out_one(rack_fleet *f, uint32_t *size, gpu_load *load,
                            int odds) {
  uint32_t k = 0, at = 0;
  gpu_load l = {0.5, 0.5, 1};
  double cap = some_cap(f, 0);
  while (k < MAX_REPS && at < f->n) {
    uint32_t n = 1 + (uint32_t)(rand() % 8), room = 72 - at % 72;
    n = n < room ? n : room;
    if (rand() % odds == 0) /* else as the replica before */
      l = drawn_load();
    if (rand() % odds == 0)
      cap = some_cap(f, at);
    for (uint32_t i = at; i < at + n; i++) {
      rack_set_unit_key(f, i, k + 1);
      rack_set_load(f, i, l);
      f->cap_w[i] = cap;
    }
    load[k] = l;
    size[k++] = n;
    at += n;
  }
  return k;
}

/* The packed runs of replicas laid end to end (as the tick packs them:
 * work__slot_runs, each run's first GPU, its rack and type). */
typedef struct packed {
  uint32_t run0[MAX_REPS + 1], runs[12 * 72], gpu0[12 * 72], rack[12 * 72];
  uint16_t type[12 * 72];
} packed;

static void pack(const rack_fleet *f, const uint32_t *size, uint32_t nrep,
                 packed *p) {
  static uint32_t gpus[16], runs[16];
  uint32_t at = 0, m = 0;
  for (uint32_t k = 0; k < nrep; k++) {
    for (uint32_t i = 0; i < size[k]; i++)
      gpus[i] = at + i;
    uint32_t nr = work__slot_runs(f, gpus, size[k], runs);
    p->run0[k] = m;
    for (uint32_t q = 0; q < nr; q++, m++) {
      p->runs[m] = runs[q];
      p->gpu0[m] = f->run_first[runs[q]];
      p->rack[m] = f->rack[p->gpu0[m]];
      p->type[m] = f->type[p->gpu0[m]];
    }
    at += size[k];
  }
  p->run0[nrep] = m;
}

/* Replica k's clock is the slowest of its GPUs' rack_gpu_phi, to the bit;
 * how many of them have more than one run. */
static uint32_t check_slowest(const rack_fleet *f, const uint32_t *size,
                              uint32_t nrep, const packed *p,
                              const double *phi) {
  uint32_t at = 0, several = 0;
  for (uint32_t k = 0; k < nrep; k++) {
    double want = 1;
    for (uint32_t i = at; i < at + size[k]; i++) {
      double q = rack_gpu_phi(f, i);
      want = q < want || isnan(want) ? q : want;
    }
    assert_memory_equal(&phi[k], &want, sizeof want);
    several += p->run0[k + 1] - p->run0[k] > 1;
    at += size[k];
  }
  return several;
}

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
                   false, 0};
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
                     true, way == 2, false,   0};
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
                   false, 0};
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

static void one_word_off(void **state) {
  (void)state;
  static uint32_t size[OFF_REPS];
  static double phi[OFF_REPS];
  static packed p;
  two_types t;
  rack_fleet *f = fleet_make(&t, "GB200", "GB200", NULL);
  const gpu_load l = {0.9, 0.6, 1};
  const double cap = f->types[f->type[0]]->cap_min_w;
  for (uint32_t k = 0; k < OFF_REPS; k++) {
    size[k] = 2;
    for (uint32_t i = 2 * k; i < 2 * k + 2; i++) {
      rack_set_unit_key(f, i, k + 1);
      rack_set_load(f, i, l);
      f->cap_w[i] = cap;
    }
  }
  rack_fleet_update(f, NULL);
  pack(f, size, OFF_REPS, &p);
  assert_true(work__runs_seq(p.run0, p.runs, OFF_REPS));
  assert_true(f->rack[72] == 1 && f->rack[71] == 0); /* replica 36 on */
  const double th1 = f->thermal_cap_w[1];
  static gpu_load load[OFF_REPS];
  for (uint32_t j = 1; j < OFF_REPS; j++)
    for (int v = 0; v < 8; v++) {
      if (v == 7 && j != 36) /* 7: rack 1's thermal cap under the cap */
        continue;
      f->thermal_cap_w[1] = v == 7 ? cap - 1 : th1;
      for (uint32_t k = 0; k < OFF_REPS; k++)
        load[k] = l;
      double w[3] = {l.sm, l.mem, l.busy};
      if (v < 6) /* word v / 2 at the value of one of the other two */
        w[v / 2] = w[(v / 2 + 1 + v % 2) % 3];
      load[j] = (gpu_load){w[0], w[1], w[2]};
      for (uint32_t i = 2 * j; i < 2 * j + 2; i++) {
        rack_set_load(f, i, load[j]);
        f->cap_w[i] = v == 6 ? cap + 1 : cap;
      }
      rack_fleet_caps_written(f);
      work_reps r = {OFF_REPS, p.run0, p.runs, p.rack, p.type,
                     true,     true,   false,  0};
      for (int narrow = 0; narrow < 2; narrow++) {
        rack_phi_last last = {.type = RACK_PHI_NONE};
        sim_lanes_narrow = narrow;
        work__replica_phis(f, &r, phi, &last);
        sim_lanes_narrow = false;
        check_slowest(f, size, OFF_REPS, &p, phi);
        assert_false(sim_same_bits(phi[j], phi[0]));
      }
      /* The replicas 0 .. j as one slot's runs (work__runs_phi): j last,
       * so a hit taken for it would leave last at the others' keys. */
      rack_phi_last last = {.type = RACK_PHI_NONE};
      double got = work__runs_phi(f, p.runs, j + 1, &last), want = 1;
      for (uint32_t i = 0; i < 2 * j + 2; i++)
        want = fmin(want, rack_gpu_phi(f, i));
      assert_memory_equal(&got, &want, sizeof got);
      gpu_load kept = {last.sm, last.mem, last.busy};
      assert_memory_equal(&kept, &load[j], sizeof kept);
      assert_true(sim_same_bits(last.cap, rack_gpu_cap_w(f, 2 * j)));
      f->thermal_cap_w[1] = th1;
      for (uint32_t i = 2 * j; i < 2 * j + 2; i++) {
        rack_set_load(f, i, l);
        f->cap_w[i] = cap;
      }
      rack_fleet_caps_written(f);
    }
  two_types_free(&t);
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

/* Whether runs are in order (work__runs_seq): one a replica, each the one
 * before's plus one, from any first. */
static void runs_in_order(void **state) {
  (void)state;
  static const struct {
    uint32_t n, run0[5], runs[4];
    bool seq;
  } rows[] = {
      {0, {0}, {0}, false},
      {1, {0, 1}, {7}, true},
      {4, {0, 1, 2, 3, 4}, {5, 6, 7, 8}, true},
      {4, {0, 1, 2, 3, 4}, {5, 6, 8, 9}, false},
      {4, {0, 1, 2, 3, 4}, {5, 7, 6, 8}, false},
      {3, {0, 1, 3, 4}, {5, 6, 7, 8}, false}, /* two runs a replica */
  };
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++)
    assert_int_equal(work__runs_seq(rows[k].run0, rows[k].runs, rows[k].n),
                     rows[k].seq);
}

/* Services of 5, 70 and 130 replicas, their slots first as
 * lay_out_slots makes them, then a job's 9 stages. */
enum { NSVC = 3, NREP = 5 + 70 + 130, NSLOTS = NREP + 9, NKEYS = 4000 };

/* The loop work__replica_stretch replaced, which read every slot's owner
 * and part: the reference. */
static size_t stretch_ref(const work *w, const uint32_t *key, size_t j,
                          size_t n) {
  const slot *s0 = &w->slots[key[j]];
  size_t e = j + 1;
  while (e < n && e - j < WORK_CHUNK && key[e] == key[j] + (e - j) &&
         key[e] < w->nrep && w->slots[key[e]].owner == s0->owner &&
         w->slots[key[e]].part == s0->part + (e - j))
    e++;
  return e - j;
}

/* work__replica_stretch against stretch_ref on keys in stretches of
 * consecutive slots that cross services' ends and run into the job's
 * slots, broken by jumps and free GPUs (NO_SLOT), at every service slot
 * of them, with the keys' end there or further on. */
static void replica_stretches(void **state) {
  (void)state;
  static inf_config svc[NSVC];
  static slot slots[NSLOTS];
  static uint32_t key[NKEYS];
  const int64_t reps[NSVC + 1] = {5, 70, 130, 9}; /* and the job's stages */
  work_config cfg = {.services = svc, .nservices = NSVC};
  work w = {.cfg = &cfg, .slots = slots, .nslots = NSLOTS, .nrep = NREP};
  for (uint32_t s = 0, at = 0; s <= NSVC; s++)
    for (uint32_t r = 0; r < reps[s]; r++, at++)
      slots[at] = (slot){s, r, 0, 1, true, false};
  for (uint32_t s = 0; s < NSVC; s++)
    svc[s].replicas = reps[s];
  srand(28);
  for (uint32_t j = 0; j < NKEYS;) {
    uint32_t from = (uint32_t)(rand() % NSLOTS), len = 1 + rand() % 90;
    for (; len > 0 && j < NKEYS; len--, j++)
      key[j] = rand() % 50 == 0 ? NO_SLOT : (from++) % NSLOTS;
  }
  for (size_t j = 0; j < NKEYS; j++) {
    size_t n = j % 3 == 0 ? j + 1 + (size_t)(rand() % 80) : NKEYS;
    n = n < NKEYS ? n : NKEYS;
    if (key[j] < NREP)
      assert_int_equal(work__replica_stretch(&w, key, j, n),
                       stretch_ref(&w, key, j, n));
  }
}

/* work__key_stretch against one key at a time: keys from bases near 0
 * and near UINT32_MAX (where a lane of the many-a-turn compare could
 * carry or wrap), every length up to KEYS_MAX, sixteen a turn or eight
 * (sim_lanes_narrow), the first break at every
 * place (or none), the keys after it as they were or not, the break a
 * step, a jump back, a key a lane over. */
typedef struct key_case {
  const char *name;
  uint64_t base;
  uint32_t wrong; /* what a broken key is, from the key it should be */
  bool narrow;    /* eight a turn where AVX2 is (sim_lanes_narrow) */
} key_case;

/* Every length to two turns of sixteen from key 0, the eight, the four,
 * the last few one at a time, and one more. */
enum { KEYS_MAX = 32 + 8 + 4 + 3 + 1 };

static const key_case key_cases[] = {
    {"from 0, one more", 0, 1, false},
    {"from 7, back to the base", 7, 0, false},
    {"from 2^32 - 20, one more", UINT32_MAX - 19, 1, false},
    {"from 2^32 - 3, lanes at the top", UINT32_MAX - 2, 1, false},
    {"from 2^32 - 1, lanes wrap", UINT32_MAX, 2, false},
    {"from 2^31, a high bit", 1u << 31, 1u << 31, false},
    {"from 2^32 - 48, the last that fits", UINT32_MAX - 47, 1, false},
    {"from 5, four lanes over", 5, 4, false},
    {"from 5, eight lanes over", 5, 8, false},
    {"from 30, one less", 30, UINT32_MAX, false},
    {"from 30, eight less", 30, UINT32_MAX - 7, false},
    {"from 30, sixteen less", 30, UINT32_MAX - 15, false},
    {"from 0, one more, eight a turn", 0, 1, true},
    {"from 7, back to the base, eight a turn", 7, 0, true},
    {"from 2^32 - 20, one more, eight a turn", UINT32_MAX - 19, 1, true},
    {"from 2^32 - 3, lanes at the top, eight a turn", UINT32_MAX - 2, 1, true},
    {"from 2^32 - 1, lanes wrap, eight a turn", UINT32_MAX, 2, true},
    {"from 2^31, a high bit, eight a turn", 1u << 31, 1u << 31, true},
    {"from 2^32 - 48, the last that fits, eight a turn", UINT32_MAX - 47, 1, true},
    {"from 5, four lanes over, eight a turn", 5, 4, true},
    {"from 5, eight lanes over, eight a turn", 5, 8, true},
    {"from 30, one less, eight a turn", 30, UINT32_MAX, true},
    {"from 30, eight less, eight a turn", 30, UINT32_MAX - 7, true},
    {"from 30, sixteen less, eight a turn", 30, UINT32_MAX - 15, true},
};

static void key_stretches(void **state) {
  const key_case *c = *state;
  uint32_t k[KEYS_MAX];
  /* brk == m: no break; alone: only k[brk] off, the rest as they were. */
  for (size_t m = 1; m <= KEYS_MAX; m++)
    for (size_t brk = 1; brk <= m; brk++)
      for (int alone = 0; alone < 2; alone++) {
        for (size_t i = 0; i < m; i++) {
          bool off = alone ? i == brk : i >= brk;
          k[i] = (uint32_t)(c->base + i + (off ? c->wrong : 0));
        }
        size_t want = 1;
        while (want < m && k[want] == (uint64_t)k[0] + want)
          want++;
        sim_lanes_narrow = c->narrow;
        size_t got = work__key_stretch(k, m);
        sim_lanes_narrow = false;
        assert_int_equal(got, want);
      }
}

/* Jobs start and end on a rack whose background steps from 30% to 60%
 * once they have ended: every GPU is free again, so the mean activity
 * after the step is 60% (the free runs' list made again with the runs;
 * a list kept from the start leaves the jobs' old GPUs behind). */
static void freed_gpus_take_the_background(void **state) {
  (void)state;
  static const char jobs[] =
      "name: w\nseed: 5\nduration: 2 h\nsample_period: 1 min\n"
      "power: {cap: 200 kW}\n"
      "racks:\n"
      "  - {name: nvl, count: 1, gpu: GB200, gpus_per_rack: 72,\n"
      "     other_power_idle: 16.8 kW, other_power_max: 33.6 kW,\n"
      "     load: {pattern: steps, noise: 0, steps: [{at: 0 s, level: 30%},\n"
      "                                              {at: 100 min, level: 60%}]}}\n"
      "training:\n"
      "  - {name: first, model: Llama-3.1-8B, dp: 8, tp: 4,\n"
      "     tokens_per_iteration: 1048576, iterations: 1500}\n"
      "  - {name: small, model: Llama-3.1-8B, dp: 1, tp: 4, arrival: 20 min,\n"
      "     tokens_per_iteration: 65536, iterations: 200}\n";
  run r;
  run_scenario(&r, jobs, NULL, 0);
  assert_int_equal(r.sum.jobs_done, 2);
  size_t n, rows;
  const double *end = job_column(&r, "end_s", &n);
  assert_true(fmax(end[0], end[1]) < 100 * 60);
  const double *act = facility(&r, "activity", &rows);
  const double *t = tel_memory_times(r.sink, "facility", &rows);
  size_t after = 0;
  for (size_t i = 0; i < rows; i++)
    if (t[i] - 60 > 100 * 60 + 1) { /* the interval began after the step */
      assert_close(act[i], 0.6, 1e-12, 0);
      after++;
    }
  assert_true(after > 10);
  run_free(&r);
}

/* Two noisy racks, with a job on all of rack 0's GPUs for its first
 * minutes or without it: once the job has ended, each rack's activity is
 * the run without the job's, to the bit. A rack with no free GPU gives
 * its level to none, but its noise steps on every tick all the same
 * (its own stream's draws). */
static void busy_racks_keep_their_noise(void **state) {
  (void)state;
  static const char text[] =
      "name: w\nseed: 9\nduration: 40 min\nsample_period: 1 min\n"
      "power: {cap: 400 kW}\n"
      "racks:\n"
      "  - {name: nvl, count: 2, gpu: GB200, gpus_per_rack: 72,\n"
      "     other_power_idle: 16.8 kW, other_power_max: 33.6 kW,\n"
      "     load: {level: 40%%, noise: 10%%, noise_time: 2 min}}\n"
      "%s";
  static const char job[] =
      "training:\n"
      "  - {name: all, model: Llama-3.1-8B, dp: 18, tp: 4,\n"
      "     tokens_per_iteration: 1048576, iterations: 600}\n";
  char with[1024], without[1024];
  snprintf(with, sizeof with, text, job);
  snprintf(without, sizeof without, text, "");
  run a, b;
  run_scenario(&a, with, NULL, 0);
  double end = job_column(&a, "end_s", &(size_t){0})[0];
  assert_true(end > 120 && end < 30 * 60);
  run_scenario(&b, without, NULL, 0);
  size_t rows, rb, w, wb;
  const double *t = tel_memory_times(a.sink, "racks", &rows);
  const double *x = tel_memory_column(a.sink, "racks", "activity", &rows, &w);
  const double *y = tel_memory_column(b.sink, "racks", "activity", &rb, &wb);
  assert_int_equal(rows, rb);
  assert_int_equal(w, 2);
  size_t after = 0;
  for (size_t i = 0; i < rows; i++)
    if (t[i] - 60 > end + 1) { /* the interval began after the job's end */
      assert_memory_equal(x + i * w, y + i * w, w * sizeof *x);
      after++;
    }
  assert_true(after > 5);
  run_free(&a);
  run_free(&b);
}

/* work__class_priority: the sixteen bytes of a unit made of zeros from
 * its cls on, with the class and priority set (the padding between them
 * zeros), to the byte. */
static void class_priority_as_a_unit(void **state) {
  (void)state;
  static const struct {
    int cls;
    int64_t priority;
  } rows[] = {
      {POWER_INFERENCE, 0},        {POWER_INFERENCE, 7},
      {POWER_TRAINING, -1},        {POWER_INFERENCE, INT64_MIN},
      {POWER_TRAINING, INT64_MAX}, {POWER_INFERENCE, (int64_t)1 << 40},
  };
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
    power_unit t;
    memset(&t, 0, sizeof t);
    t.cls = rows[k].cls;
    t.priority = rows[k].priority;
    unsigned char got[16];
    sim_u2_put(got, work__class_priority(rows[k].cls, rows[k].priority));
    assert_memory_equal(got, (const char *)&t + offsetof(power_unit, cls),
                        sizeof got);
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
  TEST_ADD(tests, n, racks_type_of_the_fleet);
  TEST_ADD(tests, n, runs_in_order);
  TEST_ADD(tests, n, class_priority_as_a_unit);
  TEST_ADD(tests, n, replica_stretches);
  TEST_ROWS(tests, n, key_stretches, key_cases);
  TEST_ADD(tests, n, freed_gpus_take_the_background);
  TEST_ADD(tests, n, busy_racks_keep_their_noise);
  return _cmocka_run_group_tests("workloads_tick", tests, n,
                                 test_catalogs_load_gpu, test_catalogs_release);
}
