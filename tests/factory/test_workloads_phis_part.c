/* test_workloads_phis_part.c - the replicas' clocks service by service
 * (workloads_phis.c's work__reps_part, as workloads_crew.c runs them on
 * the members' threads): each service's replicas from a last of its
 * own, the fleet's cache left alone, on a crew of two threads at once,
 * give every clock of the one-thread walk over all the replicas, to the
 * bit; over table rows of replicas alike and unlike, of several runs
 * and of one, across racks of one, two and three GPU types, under
 * thermal caps, with a replica down (its load idle) and with the loads
 * compared run by run (not held). The walk's cache and gate are as the
 * parts found them, and the parts' services of any sizes. */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crew.h"
#include "rack_internal.h"
#include "reps_fixture.h"
#include "workloads_internal.h"

typedef struct part_row {
  const char *name;
  const char *a, *b, *c; /* the groups' GPU types (c NULL: two groups) */
  bool one;              /* one run a replica (lay_out_one), else lay_out */
  int odds;              /* lay_out_one's: a load and a cap new one in odds */
  double thermal;        /* the odd racks' thermal caps (INFINITY: none) */
  bool down;             /* a replica of each service at an idle load */
  bool held;             /* the loads held (compared once a replica) */
} part_row;

static const part_row rows[] = {
    {"alike replicas, one type", "GB200", "GB200", NULL, true, 40, INFINITY,
     false, true},
    {"unlike replicas (the peak)", "GB200", "GB200", NULL, true, 1, INFINITY,
     false, true},
    {"every other alike, two types", "B200", "GB200", NULL, true, 2, INFINITY,
     false, true},
    {"one in nine new, three types", "GB200", "B200", "GB200", true, 9,
     INFINITY, false, true},
    {"thermal caps under some caps", "GB200", "GB200", NULL, true, 2, 800,
     false, true},
    {"several runs a replica", "B200", "GB200", NULL, false, 0, INFINITY, false,
     true},
    {"several runs, thermal caps", "B200", "GB200", NULL, false, 0, 800, false,
     true},
    {"a replica down", "GB200", "GB200", NULL, true, 9, INFINITY, true, true},
    {"a replica down, thermal caps", "GB200", "GB200", NULL, true, 40, 800,
     true, true},
    {"loads not held", "B200", "GB200", NULL, false, 0, 800, false, false},
};

/* Services of 1 to max replicas each over nrep: their first replicas in
 * k0[0 .. n], k0[n] nrep; how many. */
static size_t services_drawn(uint32_t nrep, uint32_t max, uint32_t *k0) {
  size_t n = 0;
  k0[0] = 0;
  while (k0[n] < nrep) {
    uint32_t m = 1 + (uint32_t)(rand() % max);
    k0[n + 1] = k0[n] + (m < nrep - k0[n] ? m : nrep - k0[n]);
    n++;
  }
  return n;
}

/* What the crew's items share: the whole list, the services, their own
 * lists' run0 (service s's at run0 + k0[s] + s) and order, the clocks. */
typedef struct parts {
  const rack_fleet *f;
  const work_reps *all;
  const uint32_t *k0;
  uint32_t *run0;
  bool *seq;
  double *phi;
} parts;

/* Service s's clocks, as workloads_crew.c's replica_clocks_of takes them. */
static int part_clocks(void *ctx, size_t s) {
  const parts *p = ctx;
  uint32_t k0 = p->k0[s], n = p->k0[s + 1] - k0;
  work_reps r = work__reps_part(p->all, k0, n, p->run0 + k0 + s, p->seq[s]);
  rack_phi_last last = {.type = RACK_PHI_NONE};
  work__replica_phis(p->f, &r, p->phi + k0, &last);
  return SIM_OK;
}

/* A crew of two threads, its members idle: sim_crew_for's items on both. */
typedef struct two_threads {
  sim_crew *crew;
  sim_engine *lead, *member[2];
} two_threads;

static void two_threads_open(two_threads *t) {
  const sim_allocator *a = sim_allocator_default();
  t->crew = sim_crew_create(a, 2);
  t->lead = sim_engine_create(a);
  assert_non_null(t->crew);
  assert_non_null(t->lead);
  for (int i = 0; i < 2; i++) {
    t->member[i] = sim_engine_create(a);
    assert_non_null(t->member[i]);
    assert_int_equal(sim_crew_add(t->crew, t->member[i], 1), SIM_OK);
  }
  assert_int_equal(sim_crew_lead(t->crew, t->lead), SIM_OK);
  assert_int_equal(sim_crew_threads(t->crew), 2);
}

static void two_threads_close(two_threads *t) {
  sim_engine_follow(t->lead, NULL, NULL);
  sim_crew_destroy(t->crew);
  for (int i = 0; i < 2; i++)
    sim_engine_destroy(t->member[i]);
  sim_engine_destroy(t->lead);
}

/* One round's layout: replicas laid, a replica of each service at an
 * idle load where the row says, the thermal caps, the fleet updated and
 * packed; how many replicas. */
static uint32_t round_laid(rack_fleet *f, const part_row *row, uint32_t *size,
                           packed *p, const uint32_t *k0, size_t nsvc) {
  static gpu_load load[MAX_REPS];
  uint32_t nrep =
      row->one ? lay_out_one(f, size, load, row->odds) : lay_out(f, size, load);
  for (uint32_t r = 0; r < f->nracks; r++)
    f->thermal_cap_w[r] = r % 2 ? row->thermal : INFINITY;
  for (size_t s = 0; row->down && s < nsvc && k0[s] < nrep; s++) {
    uint32_t at = 0, k = k0[s] + (uint32_t)rand() % (k0[s + 1] - k0[s]);
    for (uint32_t j = 0; j < k && j < nrep; j++)
      at += size[j];
    for (uint32_t i = at; k < nrep && i < at + size[k]; i++)
      rack_set_load(f, i, (gpu_load){0, 0, 0});
  }
  rack_fleet_caps_written(f);
  rack_fleet_update(f, NULL);
  assert_true(rack_fleet_runs_fresh(f));
  pack(f, size, nrep, p);
  return nrep;
}

/* The services k0[0 .. nsvc] of all, each from its own last on a thread
 * of crew: their clocks are want, and the fleet's gate is as it was. */
static void parts_on_threads(const rack_fleet *f, const work_reps *all,
                             const uint32_t *k0, size_t nsvc,
                             const double *want, sim_crew *crew) {
  static uint32_t run0[2 * MAX_REPS + 1];
  static bool seq[MAX_REPS];
  static double got[MAX_REPS];
  for (size_t s = 0; s < nsvc; s++)
    seq[s] =
        work__reps_part_made(all, k0[s], k0[s + 1] - k0[s], run0 + k0[s] + s);
  assert_true(rack_fleet_phis_shareable(f));
  rack_phi_gate gate = *f->phi_gate;
  memset(got, 0xff, sizeof got);
  parts ps = {f, all, k0, run0, seq, got};
  assert_int_equal(sim_crew_for(crew, nsvc, part_clocks, &ps), SIM_OK);
  assert_memory_equal(got, want, all->n * sizeof *want);
  assert_memory_equal(f->phi_gate, &gate, sizeof gate); /* left alone */
}

static void parts_are_the_walk(void **state) {
  const part_row *row = *state;
  static uint32_t size[MAX_REPS], k0[MAX_REPS + 1];
  static double want[MAX_REPS];
  static packed p;
  two_types t;
  two_threads crew;
  rack_fleet *f = fleet_make(&t, row->a, row->b, row->c);
  two_threads_open(&crew);
  srand(43);
  for (int round = 0; round < 24; round++) {
    /* the services drawn first (for the idle replicas), then cut to nrep */
    size_t nsvc = services_drawn(MAX_REPS, round % 2 ? 40 : 300, k0);
    uint32_t nrep = round_laid(f, row, size, &p, k0, nsvc);
    nsvc = services_drawn(nrep, round % 2 ? 40 : 300, k0);
    work_reps all = {nrep,
                     p.run0,
                     p.runs,
                     p.rack,
                     p.type,
                     row->held,
                     work__runs_seq(p.run0, p.runs, nrep),
                     false,
                     0,
                     false};
    all.typed = row->one && work__racks_type(f, &all.racks_type);
    rack_phi_last last = {.type = RACK_PHI_NONE};
    work__replica_phis(f, &all, want, &last);
    check_slowest(f, size, nrep, &p, want);
    parts_on_threads(f, &all, k0, nsvc, want, crew.crew);
  }
  two_threads_close(&crew);
  two_types_free(&t);
}

/* gpu_solves_shareable: catalog types without a curve are; a type with
 * a measured curve (gsl's accelerator written each lookup) is not, nor
 * two types that share a memo with different ends (a copy of a type
 * changed), each making them over the other's; a type without a memo
 * (each solve its own ends) is. */
static void which_types_share_their_solves(void **state) {
  (void)state;
  const gpu_spec *gb = gpu_catalog_find(&cats.gpu, "GB200");
  const gpu_spec *b2 = gpu_catalog_find(&cats.gpu, "B200");
  const gpu_spec *a100 = gpu_catalog_find(&cats.gpu, "A100-SXM");
  assert_non_null(a100);
  assert_non_null(a100->interp);
  gpu_spec copy = *gb, bare = *gb;
  copy.knee = gb->knee * 0.5; /* the memo's ends not the copy's */
  bare.pow_memo = NULL;
  static const struct {
    int a, b;
    bool shareable;
  } cases[] = {{0, 1, true},  {0, 0, true}, {2, 0, false},
               {0, 3, false}, {4, 1, true}, {1, 4, true}};
  const gpu_spec *types[] = {gb, b2, a100, &copy, &bare};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    const gpu_spec *two[2] = {types[cases[k].a], types[cases[k].b]};
    if (gpu_solves_shareable(two, 2) != cases[k].shareable)
      fail_msg("case %zu: not %d", k, cases[k].shareable);
  }
  const gpu_spec *one[1] = {gb}; /* the ends made again for gb alone */
  assert_true(gpu_solves_shareable(one, 1));
}

int main(void) {
  struct CMUnitTest tests[sizeof rows / sizeof *rows + 1];
  size_t n = 0;
  TEST_ROWS(tests, n, parts_are_the_walk, rows);
  TEST_ADD(tests, n, which_types_share_their_solves);
  return _cmocka_run_group_tests("workloads_phis_part", tests, n,
                                 test_catalogs_load_gpu, test_catalogs_release);
}
