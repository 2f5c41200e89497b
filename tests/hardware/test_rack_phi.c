/* test_rack_phi.c - the fleet's cache of clocks (rack_phi.c): runs'
 * clocks taken a stretch at a time (rack__runs_phi_remember, the cache's
 * misses solved together, the Brent solves four at a time) are
 * gpu_load_clock_under_cap's for each run's held cap and load, to the
 * bit, and leave last and the cache as one by one would: last the
 * stretch's last run's, every entry an exact answer. The gate on the
 * cache's reads (rack_internal.h rack_phi_gate): skipping while fewer
 * than half of a window's reads hit, one lookup in RACK_PHI_SAMPLE read
 * while it skips, and a fleet whose reads are skipped giving the same
 * clocks as one that reads every time, its entries exact answers; the
 * recent entries in front of the cache answering a key asked again
 * without a read of it. Keys' clocks a batch at a time (rack__phis_at,
 * a rack's sums' lookups) are the solves', whatever the batch's types,
 * repeats and gate, and leave the cache exact. The fleet's kept worst
 * racks (rack_fleet_group_worst_w) are rack_group_worst_w's, to the bit,
 * whatever groups share what is kept. The same clocks and last without
 * the cache (rack__run(s)_phi_solve), the cache left alone. */
#include "test_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu.h"
#include "lanes.h"
#include "rack.h"
#include "rack_fixture.h"
#include "rack_internal.h"

/* Runs of two GPUs, each at a drawn load and a cap from lo to hi of the
 * type's [idle, TDP]; every nan_every-th run's cap NaN and the next
 * one's sm NaN (0: none); every repeat-th run the inputs of the run
 * three before (0: none: a key asked twice in one stretch); the odd
 * racks' thermal caps at thermal (INFINITY: none). */
typedef struct phi_row {
  const char *name;
  double lo, hi, thermal;
  unsigned nan_every, repeat;
  bool sparse; /* the gate sparse at each stretch: its keys thinned */
} phi_row;

static const phi_row phi_rows[] = {
    {"runs' clocks: caps across the span", 0, 1, INFINITY, 0, 0, false},
    {"runs' clocks: caps under the lowest clock's and over TDP", -0.3, 1.3,
     INFINITY, 0, 0, false},
    {"runs' clocks: thermal caps under some caps", 0, 1, 900, 0, 0, false},
    {"runs' clocks: NaN caps and loads", 0, 1, INFINITY, 5, 0, false},
    {"runs' clocks: keys again in a stretch", 0, 1, INFINITY, 0, 4, false},
    {"runs' clocks: keys again, the gate sparse", 0, 1, INFINITY, 0, 4, true},
};

/* The fleet's runs given the row's inputs (draws from seed). */
static void runs_drawn(rack_fleet *f, const phi_row *row, unsigned *seed) {
  const gpu_spec *g = f->types[f->type[0]];
  gpu_load l[512];
  double cap[512];
  for (uint32_t k = 0; 2 * k < f->n; k++) {
    double u = rack_fixture_uniform(seed);
    l[k] = (gpu_load){rack_fixture_uniform(seed), rack_fixture_uniform(seed),
                      rack_fixture_uniform(seed)};
    cap[k] = g->idle_w +
             (g->tdp_w - g->idle_w) * (row->lo + (row->hi - row->lo) * u);
    if (row->nan_every != 0 && k % row->nan_every == 0)
      cap[k] = NAN;
    if (row->nan_every != 0 && k % row->nan_every == 1)
      l[k].sm = NAN;
    if (row->repeat != 0 && k >= 3 && k % row->repeat == 0)
      l[k] = l[k - 3], cap[k] = cap[k - 3];
    for (uint32_t i = 2 * k; i < 2 * k + 2 && i < f->n; i++) {
      rack_set_load(f, i, l[k]);
      f->cap_w[i] = cap[k];
    }
  }
  for (uint32_t r = 0; r < f->nracks; r++)
    f->thermal_cap_w[r] = r % 2 ? row->thermal : INFINITY;
  rack_fleet_caps_written(f);
  rack_fleet_update(f, NULL);
  assert_true(rack_fleet_runs_fresh(f));
}

/* The cache's clocks phi and last for runs q .. q + n - 1 are those
 * without it (rack__runs_phi_solve, rack__run_phi_solve one by one,
 * the threads' calls), which leave the gate and the recent entries as
 * they were. */
static void solves_are_the_cache(const rack_fleet *f, uint32_t q, uint32_t n,
                                 const double *phi, const rack_phi_last *last) {
  double solved[RACK_RUNS_BATCH];
  rack_phi_gate gate = *f->phi_gate;
  rack_phi_last got = {.type = RACK_PHI_NONE}, one = got;
  rack__runs_phi_solve(f, q, f->run_rack + q, n, solved, &got);
  assert_memory_equal(solved, phi, n * sizeof *phi);
  assert_memory_equal(&got, last, sizeof got);
  for (uint32_t j = 0; j < n; j++) {
    double p = rack__run_phi_solve(f, q + j, f->run_rack[q + j], &one);
    assert_memory_equal(&p, &phi[j], sizeof p);
  }
  assert_memory_equal(&one, last, sizeof one);
  assert_memory_equal(f->phi_gate, &gate, sizeof gate);
}

/* Runs q .. q + n - 1 a stretch: each clock the solve's, last the last's. */
static void stretch_is_the_solves(const rack_fleet *f, uint32_t q, uint32_t n) {
  double phi[RACK_RUNS_BATCH];
  rack_phi_last last = {.type = RACK_PHI_NONE};
  rack__runs_phi_remember(f, q, f->run_rack + q, n, phi, &last);
  for (uint32_t j = 0; j < n; j++) {
    uint16_t t = f->run_type[q + j];
    double cap = rack_run_cap_w(f, q + j, f->run_rack[q + j]);
    double want =
        gpu_load_clock_under_cap(f->types[t], cap, rack_run_load(f, q + j));
    if (memcmp(&phi[j], &want, sizeof want) != 0)
      fail_msg("run %u: %a, the solve %a", q + j, phi[j], want);
    double kept = rack__phi_at(f, t, cap, rack_run_load(f, q + j));
    assert_memory_equal(&kept, &want, sizeof want); /* the cache's entry */
  }
  rack_phi_last one = {.type = RACK_PHI_NONE};
  rack__run_phi_remember(f, q + n - 1, f->run_rack[q + n - 1], &one);
  assert_memory_equal(&last, &one, sizeof last);
  solves_are_the_cache(f, q, n, phi, &last);
}

static void runs_clocks_are_the_solves(void **state) {
  const phi_row *row = *state;
  static const uint32_t sizes[] = {1, 2, 3, 4, 5, 8, 9, 17, 31, 32};
  rack_fleet *f = rack_fixture_two("GB200", 36, true);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_unit_key(f, i, 1 + i / 2);
  unsigned seed = 41;
  for (int narrow = 0; narrow < 2; narrow++)
    for (int round = 0; round < 20; round++) {
      runs_drawn(f, row, &seed);
      sim_lanes_narrow = narrow;
      for (uint32_t q = 0, s = 0; q < f->nruns; s++) {
        uint32_t n = sizes[s % (sizeof sizes / sizeof *sizes)];
        n = f->nruns - q < n ? f->nruns - q : n;
        f->phi_gate->skip = f->phi_gate->skip || row->sparse;
        f->phi_gate->sparse = f->phi_gate->sparse || row->sparse;
        stretch_is_the_solves(f, q, n);
        q += n;
      }
      sim_lanes_narrow = false;
    }
  assert_true(f->nruns > 100);
  rack_fleet_destroy(f);
}

/* A window's reads, hits of them, and what the gate does next: skip or
 * not, sparse or not, from each state. */
typedef struct gate_row {
  const char *name;
  uint32_t hits;
  bool skip_before, sparse_before, skip_after, sparse_after;
} gate_row;

#define SPARSE_LINE (RACK_PHI_WINDOW / RACK_PHI_SPARSE_HITS)

static const gate_row gate_rows[] = {
    {"gate: no hit skips, sparse", 0, false, false, true, true},
    {"gate: one under the sparse line", SPARSE_LINE - 1, false, false, true,
     true},
    {"gate: at the sparse line skips", SPARSE_LINE, false, false, true, false},
    {"gate: one under half skips", RACK_PHI_WINDOW / 2 - 1, false, false, true,
     false},
    {"gate: half reads", RACK_PHI_WINDOW / 2, false, false, false, false},
    {"gate: all hits read", RACK_PHI_WINDOW, false, false, false, false},
    {"gate: skipping, one under half goes on", RACK_PHI_WINDOW / 2 - 1, true,
     false, true, false},
    {"gate: skipping, half reads again", RACK_PHI_WINDOW / 2, true, false,
     false, false},
    {"gate: skipping, no hit goes sparse", 0, true, false, true, true},
    {"gate: sparse, one under the line stays", SPARSE_LINE - 1, true, true,
     true, true},
    {"gate: sparse, at the line skips", SPARSE_LINE, true, true, true, false},
    {"gate: sparse, half reads again", RACK_PHI_WINDOW / 2, true, true, false,
     false},
};

/* A window of reads: the state holds until its last read, then the
 * row's; while skipping, exactly one lookup in RACK_PHI_SAMPLE reads,
 * one in RACK_PHI_SPARSE while sparse too. */
static void gate_decides_by_window(void **state) {
  const gate_row *row = *state;
  rack_phi_gate g = {.skip = row->skip_before, .sparse = row->sparse_before};
  uint32_t every = !row->skip_before    ? 1
                   : row->sparse_before ? RACK_PHI_SPARSE
                                        : RACK_PHI_SAMPLE;
  uint32_t lookups = 0;
  for (uint32_t k = 0; k < RACK_PHI_WINDOW; k++) {
    uint32_t passed = 0;
    while (!rack__phi_reads(&g, true)) {
      assert_true(g.skip);
      passed++, lookups++;
    }
    lookups++;
    assert_int_equal(passed, every - 1);
    assert_true(g.skip == row->skip_before);
    assert_true(g.sparse == row->sparse_before);
    rack__phi_read_was(&g, k < row->hits);
  }
  assert_int_equal(lookups, RACK_PHI_WINDOW * every);
  assert_true(g.skip == row->skip_after);
  assert_true(g.sparse == row->sparse_after);
  assert_int_equal(g.seen, 0);
  assert_int_equal(g.hits, 0);
}

/* Every entry of n an exact answer: the solve of its key, to the bit.
 * Returns how many entries are filled. */
static size_t entries_exact(const rack_fleet *f, const rack_phi_memo *m,
                            size_t n) {
  size_t filled = 0;
  for (size_t k = 0; k < n; k++) {
    const rack_phi_memo *e = &m[k];
    if (e->type == UINT32_MAX)
      continue;
    gpu_load l = {e->sm, e->mem, e->busy};
    double want = gpu_load_clock_under_cap(f->types[e->type], e->cap, l);
    if (memcmp(&want, &e->phi, sizeof want) != 0)
      fail_msg("entry %zu: %a, the solve %a", k, e->phi, want);
    filled++;
  }
  return filled;
}

/* Every entry of f's cache and of its recent ones exact; how many of the
 * cache's are filled. */
static size_t cache_exact(const rack_fleet *f) {
  entries_exact(f, f->phi_gate->recent, RACK_PHI_RECENT);
  return entries_exact(f, f->phi_memo, (size_t)1 << rack__phi_memo_bits(f->n));
}

/* A drawn key of type 0: its load and a cap in the type's [idle, TDP]. */
static void key_drawn(const gpu_spec *g, unsigned *seed, double *cap,
                      gpu_load *l) {
  *l = (gpu_load){rack_fixture_uniform(seed), rack_fixture_uniform(seed),
                  rack_fixture_uniform(seed)};
  *cap = g->idle_w + (g->tdp_w - g->idle_w) * rack_fixture_uniform(seed);
}

/* Keys asked again: while its recent entry holds it, a key's clock is
 * that entry's and the cache is not read (the gate counts no read); a
 * key found in the cache is copied to its recent entry. */
static void recent_keys_read_no_cache(void **state) {
  (void)state;
  rack_fleet *f = rack_fixture_two("GB200", 36, true);
  const gpu_spec *g = f->types[0];
  unsigned seed = 3;
  for (int k = 0; k < 200; k++) {
    double cap;
    gpu_load l;
    key_drawn(g, &seed, &cap, &l);
    double want = gpu_load_clock_under_cap(g, cap, l);
    *f->phi_gate = (rack_phi_gate){.recent = {{0}}};
    for (size_t e = 0; e < RACK_PHI_RECENT; e++)
      f->phi_gate->recent[e].type = UINT32_MAX;
    double first = rack__phi_at(f, 0, cap, l);
    assert_int_equal(f->phi_gate->seen, 1); /* read: a miss, solved */
    assert_int_equal(f->phi_gate->hits, 0);
    double again = rack__phi_at(f, 0, cap, l);
    assert_int_equal(f->phi_gate->seen, 1); /* its recent entry's */
    for (size_t e = 0; e < RACK_PHI_RECENT; e++)
      f->phi_gate->recent[e].type = UINT32_MAX;
    double cached = rack__phi_at(f, 0, cap, l);
    assert_int_equal(f->phi_gate->hits, 1); /* the cache's, read */
    double recent = rack__phi_at(f, 0, cap, l);
    assert_int_equal(f->phi_gate->seen, 2);
    double got[4] = {first, again, cached, recent};
    for (int j = 0; j < 4; j++)
      assert_memory_equal(&got[j], &want, sizeof want);
  }
  rack_fleet_destroy(f);
}

/* While the gate is sparse, a one-by-one miss's solve goes to its recent
 * entry always and to the cache's one time in RACK_PHI_SAMPLE (the
 * RACK_PHI_SAMPLE-th, then every RACK_PHI_SAMPLE-th), the clocks the
 * solves'; out of it, every time; rack__phis_at's misses the same (a
 * stretch's are not written while sparse: sparse_stretch_leaves_cache). */
/* One key at a time (rack__phi_at), sparse or not: the solve's clock,
 * kept every time or once a sample, and a recent entry either way. */
static void sparse_one_at_a_time(rack_fleet *f, unsigned *seed) {
  const gpu_spec *g = f->types[0];
  for (int sparse = 0; sparse < 2; sparse++) {
    f->phi_gate->skip = true;
    f->phi_gate->sparse = sparse;
    for (uint32_t k = 0; k < 8 * RACK_PHI_SAMPLE; k++) {
      double cap;
      gpu_load l;
      key_drawn(g, seed, &cap, &l);
      double got = rack__phi_at(f, 0, cap, l);
      double want = gpu_load_clock_under_cap(g, cap, l);
      assert_memory_equal(&got, &want, sizeof want);
      bool kept = rack__memo_is(rack__memo_slot(f, 0, cap, l), 0, cap, l);
      assert_int_equal(kept, !sparse || k % RACK_PHI_SAMPLE ==
                                            RACK_PHI_SAMPLE - 1);
      rack_phi_memo *at[2];
      assert_true(rack__memo_find(f, 0, cap, l, at, true)); /* recent */
    }
  }
}

/* A batch's misses (rack__phis_at), sparse or not: the solves' clocks,
 * each kept, or the sample's last alone. */
static void sparse_batch(rack_fleet *f, unsigned *seed) {
  const gpu_spec *g = f->types[0];
  for (int sparse = 0; sparse < 2; sparse++) {
    f->phi_gate->sparse = sparse;
    f->phi_gate->unkept = 0;
    uint16_t type[RACK_PHI_SAMPLE] = {0};
    double cap[RACK_PHI_SAMPLE], phi[RACK_PHI_SAMPLE];
    gpu_load l[RACK_PHI_SAMPLE];
    for (int k = 0; k < RACK_PHI_SAMPLE; k++)
      key_drawn(g, seed, &cap[k], &l[k]);
    rack__phis_at(f, RACK_PHI_SAMPLE, type, cap, l, phi);
    for (int k = 0; k < RACK_PHI_SAMPLE; k++) {
      double want = gpu_load_clock_under_cap(g, cap[k], l[k]);
      assert_memory_equal(&phi[k], &want, sizeof want);
      bool kept = rack__memo_is(rack__memo_slot(f, 0, cap[k], l[k]), 0, cap[k],
                                l[k]);
      assert_int_equal(kept, !sparse || k == RACK_PHI_SAMPLE - 1);
    }
  }
}

static void sparse_misses_kept_one_in_sample(void **state) {
  (void)state;
  rack_fleet *f = rack_fixture_two("GB200", 36, true);
  unsigned seed = 11;
  sparse_one_at_a_time(f, &seed);
  sparse_batch(f, &seed);
  assert_true(cache_exact(f) > 0);
  rack_fleet_destroy(f);
}

/* A sparse gate whose keys come again (more of them than the recent
 * entries hold) ends sparse and then skipping: the misses it still
 * writes are found by its sampled reads. */
static void sparse_gate_comes_back(void **state) {
  (void)state;
  rack_fleet *f = rack_fixture_two("GB200", 36, true);
  const gpu_spec *g = f->types[0];
  enum { KEYS = 3 * RACK_PHI_RECENT + 1 };
  double cap[KEYS];
  gpu_load l[KEYS];
  unsigned seed = 5;
  for (int k = 0; k < KEYS; k++)
    key_drawn(g, &seed, &cap[k], &l[k]);
  f->phi_gate->skip = f->phi_gate->sparse = true;
  uint32_t lookups = 0;
  while (f->phi_gate->skip && lookups < 4 * RACK_PHI_WINDOW * RACK_PHI_SPARSE) {
    uint32_t k = lookups++ % KEYS;
    double got = rack__phi_at(f, 0, cap[k], l[k]);
    double want = gpu_load_clock_under_cap(g, cap[k], l[k]);
    assert_memory_equal(&got, &want, sizeof want);
  }
  assert_false(f->phi_gate->skip);
  assert_false(f->phi_gate->sparse);
  cache_exact(f);
  rack_fleet_destroy(f);
}

/* While the gate is sparse, a stretch's keys are solved without the
 * cache (rack_phi.c's keys_looked_up): its clocks the solves', none of
 * its keys written to its entry, and the gate's counts of reads and
 * lookups as they were; out of the sparse state its keys are written. */
static void sparse_stretch_leaves_cache(void **state) {
  (void)state;
  rack_fleet *f = rack_fixture_two("GB200", 36, true);
  for (uint32_t i = 0; i < f->n; i++)
    rack_set_unit_key(f, i, 1 + i / 2);
  unsigned seed = 23;
  runs_drawn(f, &phi_rows[0], &seed);
  uint32_t n = f->nruns < RACK_RUNS_BATCH ? f->nruns : RACK_RUNS_BATCH;
  assert_true(n >= 2 * RACK_PHI_SAMPLE);
  for (int sparse = 1; sparse >= 0; sparse--) {
    size_t entries = (size_t)1 << rack__phi_memo_bits(f->n);
    for (size_t e = 0; e < entries; e++)
      f->phi_memo[e].type = UINT32_MAX;
    f->phi_gate->skip = true;
    f->phi_gate->sparse = sparse;
    rack_phi_gate before = *f->phi_gate;
    double phi[RACK_RUNS_BATCH];
    rack_phi_last last = {.type = RACK_PHI_NONE};
    rack__runs_phi_remember(f, 0, f->run_rack, n, phi, &last);
    uint32_t written = 0;
    for (uint32_t j = 0; j < n; j++) {
      uint16_t t = f->run_type[j];
      double cap = rack_run_cap_w(f, j, f->run_rack[j]);
      gpu_load l = rack_run_load(f, j);
      double want = gpu_load_clock_under_cap(f->types[t], cap, l);
      assert_memory_equal(&phi[j], &want, sizeof want);
      written += rack__memo_is(rack__memo_slot(f, t, cap, l), t, cap, l);
    }
    if (sparse) {
      assert_int_equal(written, 0);
      assert_int_equal(f->phi_gate->seen, before.seen);
      assert_int_equal(f->phi_gate->passed, before.passed);
      assert_int_equal(f->phi_gate->unkept, before.unkept);
    } else {
      assert_true(written > n / 2); /* all but keys sharing an entry */
    }
  }
  cache_exact(f);
  rack_fleet_destroy(f);
}

/* Two fleets of the same runs asked the same clocks, one by one and a
 * stretch at a time, keys asked again among them: one reading the cache
 * every time, the other skipping its reads (its gate held skipping, the
 * sampled reads left in). The same clocks, and each cache's entries
 * exact answers (which keys they hold may differ: in a stretch a hit
 * writes nothing, a skipped read writes its key in the stretch's order). */
static void skipped_reads_same_clocks(void **state) {
  (void)state;
  rack_fleet *f[2] = {rack_fixture_two("GB200", 36, true),
                      rack_fixture_two("GB200", 36, true)};
  static const phi_row row = {"", 0, 1, 900, 7, 3, false};
  for (int k = 0; k < 2; k++)
    for (uint32_t i = 0; i < f[k]->n; i++)
      rack_set_unit_key(f[k], i, 1 + i / 2);
  for (int round = 0; round < 6; round++) {
    unsigned seed[2] = {7u + (unsigned)round / 2, 7u + (unsigned)round / 2};
    for (int k = 0; k < 2; k++)
      runs_drawn(f[k], &row, &seed[k]);
    for (uint32_t q = 0; q < f[0]->nruns;) {
      double phi[2][RACK_RUNS_BATCH];
      uint32_t n = 1 + q % 5 > f[0]->nruns - q ? f[0]->nruns - q : 1 + q % 5;
      for (int k = 0; k < 2; k++) {
        f[k]->phi_gate->skip = k == 1;
        rack_phi_last last = {.type = RACK_PHI_NONE};
        if (n == 1)
          phi[k][0] = rack__run_phi_remember(f[k], q, f[k]->run_rack[q], &last);
        else
          rack__runs_phi_remember(f[k], q, f[k]->run_rack + q, n, phi[k],
                                  &last);
      }
      assert_memory_equal(phi[0], phi[1], n * sizeof(double));
      q += n;
    }
  }
  assert_true(cache_exact(f[0]) > 100);
  assert_true(cache_exact(f[1]) > 100);
  rack_fleet_destroy(f[0]);
  rack_fleet_destroy(f[1]);
}


/* rack__phis_at's batches: n keys (every size to RACK_RUNS_BATCH), of
 * the fleet's two types in blocks of block (0: one type), every
 * repeat-th key the one three before (0: none), the gate skipping or
 * not. */
typedef struct keys_row {
  const char *name;
  uint32_t block, repeat;
  bool skip, sparse;
} keys_row;

static const keys_row keys_rows[] = {
    {"keys' clocks: one type", 0, 0, false, false},
    {"keys' clocks: types in blocks of 3", 3, 0, false, false},
    {"keys' clocks: types alternating, keys again", 1, 4, false, false},
    {"keys' clocks: keys again, reads skipped", 0, 3, true, false},
    {"keys' clocks: types in blocks of 5, reads skipped", 5, 2, true, false},
    {"keys' clocks: keys again, the gate sparse", 0, 3, true, true},
};

static void keys_clocks_are_the_solves(void **state) {
  const keys_row *row = *state;
  rack_fleet *f = rack_fixture_two("H100-SXM", 32, true);
  unsigned seed = 11;
  for (int round = 0; round < 3; round++)
    for (uint32_t n = 0; n <= RACK_RUNS_BATCH; n++) {
      uint16_t type[RACK_RUNS_BATCH];
      double cap[RACK_RUNS_BATCH], phi[RACK_RUNS_BATCH];
      gpu_load l[RACK_RUNS_BATCH];
      for (uint32_t k = 0; k < n; k++) {
        type[k] = row->block == 0 ? 0 : (uint16_t)(k / row->block % 2);
        const gpu_spec *g = f->types[type[k]];
        double u = rack_fixture_uniform(&seed);
        cap[k] = g->idle_w + (g->tdp_w - g->idle_w) * (1.2 * u - 0.1);
        l[k] = (gpu_load){rack_fixture_uniform(&seed),
                          rack_fixture_uniform(&seed),
                          rack_fixture_uniform(&seed)};
        if (row->repeat != 0 && k >= 3 && k % row->repeat == 0)
          type[k] = type[k - 3], cap[k] = cap[k - 3], l[k] = l[k - 3];
      }
      f->phi_gate->skip = row->skip;
      f->phi_gate->sparse = row->sparse;
      rack__phis_at(f, n, type, cap, l, phi);
      for (uint32_t k = 0; k < n; k++) {
        double want = gpu_load_clock_under_cap(f->types[type[k]], cap[k], l[k]);
        if (memcmp(&phi[k], &want, sizeof want) != 0)
          fail_msg("n %u key %u: %a, the solve %a", n, k, phi[k], want);
      }
    }
  assert_true(cache_exact(f) > 100);
  rack_fleet_destroy(f);
}

/* Seven groups, two pairs alike in all rack_group_worst_w reads (A, B
 * with a system; D, E without) and each unlike the others in one thing
 * it reads (C's host load, F's rack size, G's other_* given; E's curve
 * the same, its other_idle_w not read): group by group in turn, at
 * powers drawn from a few (asked again, and across groups) and at
 * random, the kept answer is the group's own to the bit. */
static void worst_kept_is_the_groups(void **state) {
  (void)state;
  const sys_spec *s = sys_catalog_find(&cats.sys, "DGX-H100");
  const gpu_spec *h100 = gpu_catalog_find(&cats.gpu, "H100-SXM");
  assert_non_null(s);
  rack_group_spec sys = {.name = "a", .gpu = h100, .count = 1,
                         .gpus_per_rack = 32, .limit_w = 1e6, .r_th = NAN,
                         .system = s, .host_load = s->host_load};
  rack_group_spec plain = {.name = "d", .gpu = h100, .count = 1,
                           .gpus_per_rack = 32, .limit_w = 1e6,
                           .other_idle_w = 9200, .other_max_w = 18400,
                           .conv = rack_fixture_titanium, .nconv = 4,
                           .r_th = NAN};
  rack_group_spec g[7] = {sys, sys, sys, plain, plain, sys, sys};
  g[2].host_load = 0.5 * s->host_load;
  g[4].other_idle_w = 1000;
  g[5].gpus_per_rack = 16;
  g[6].other_given = true;
  g[6].other_idle_w = 9200;
  g[6].other_max_w = 18400;
  rack_fleet *f = rack_fixture_fleet(g, 7);
  uint64_t x = 12345;
  for (int k = 0; k < 4000; k++) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    size_t gi = (size_t)(k % 7);
    double w = (x >> 63) ? 100 + 600 * (double)(x >> 11) * 0x1p-53
                         : 200 + 25 * (double)((x >> 40) % 8);
    double got = rack_fleet_group_worst_w(f, gi, w);
    double want = rack_group_worst_w(&f->groups[gi], w);
    assert_memory_equal(&got, &want, sizeof got);
  }
  rack_fleet_destroy(f);
}

int main(void) {
  struct CMUnitTest tests[32];
  size_t n = 0;
  TEST_ROWS(tests, n, runs_clocks_are_the_solves, phi_rows);
  TEST_ROWS(tests, n, gate_decides_by_window, gate_rows);
  TEST_ADD(tests, n, skipped_reads_same_clocks);
  TEST_ADD(tests, n, recent_keys_read_no_cache);
  TEST_ADD(tests, n, sparse_misses_kept_one_in_sample);
  TEST_ADD(tests, n, sparse_gate_comes_back);
  TEST_ADD(tests, n, sparse_stretch_leaves_cache);
  TEST_ROWS(tests, n, keys_clocks_are_the_solves, keys_rows);
  TEST_ADD(tests, n, worst_kept_is_the_groups);
  return _cmocka_run_group_tests(
      "rack_phi", tests, n, test_catalogs_load_hardware, test_catalogs_release);
}
