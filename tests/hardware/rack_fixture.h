/* rack_fixture.h - what the fleet's tests share (test_rack.c,
 * test_rack_runs.c, test_rack_runs_whole.c): a conversion curve, a fleet
 * made or the test failed; the runs' tests' fleets, random layouts and
 * state copied from one fleet to another; and the oracles a fleet's sums
 * are held to. The fleets' GPUs and systems are the built-in catalogs'
 * (cats.gpu, cats.sys), loaded by the group fixture
 * test_catalogs_load_hardware (test_catalogs.h). */
#ifndef TESTS_RACK_FIXTURE_H
#define TESTS_RACK_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rack.h"
#include "test_catalogs.h"

/* 80 PLUS Titanium (230 V internal redundant) minimum efficiencies at
 * 10, 20, 50 and 100% load: 90, 94, 96, 91%. Four points. */
extern const rack_conv_point rack_fixture_titanium[4];

/* A fleet of the groups; fails the test when it cannot be made. */
rack_fleet *rack_fixture_fleet(const rack_group_spec *g, size_t n);

/* The runs' tests' group of five racks, by kind: RACK_FIXTURE_PLAIN, plain
 * NVL72 racks (72 GB200s, the Titanium curve); RACK_FIXTURE_NVL_SERVER, one
 * GB200-NVL72 server a rack; RACK_FIXTURE_DGX, four DGX-H100 servers a
 * rack (of 32 H100s). */
enum { RACK_FIXTURE_PLAIN, RACK_FIXTURE_NVL_SERVER, RACK_FIXTURE_DGX };
rack_group_spec rack_fixture_five(int kind);

/* A fleet of five racks: DGX-H100 servers when system, else plain. */
rack_fleet *rack_fixture_make(bool system);

/* Two groups of plain racks, three each: GB200 and the second GPU (with
 * its gpus_per_rack); with units, each rack's GPUs in slots of 8. */
rack_fleet *rack_fixture_two(const char *second, uint32_t per_rack, bool units);

/* rack_fixture_two("H100-SXM", 32, true) with every GPU at a load of
 * 0.6, its runs made, every rack capped 150 W above its type's minimum
 * and rack 1's thermal cap at thermal_w (NaN: left as it is), updated:
 * the fleet the sample's, the known clocks' and the keys' tests move. */
rack_fleet *rack_fixture_capped(double thermal_w);

/* A draw in [0, 1] from seed (rand_r: the test's own stream). */
double rack_fixture_uniform(unsigned *seed);

/* A new random layout given to f's keys (key, f->n of them), as the
 * workloads' slots take them: stretches of up to max adjacent GPUs (in a
 * rack or across racks) keyed 1, 2, ...; some GPUs free (key 0). */
void rack_fixture_new_layout(rack_fleet *f, uint32_t *key, uint32_t max,
                             unsigned *seed);

/* The caps, thermal caps and faults of from to to; not the loads. */
void rack_fixture_copy_caps(rack_fleet *to, rack_fleet *from);
/* ... and the loads too. */
void rack_fixture_copy_state(rack_fleet *to, rack_fleet *from);
/* f's state copied to ref, then both updated (ref GPU by GPU, f as it
 * is kept), ready to be compared. */
void rack_fixture_update_both(rack_fleet *ref, rack_fleet *f);

/* Rack r's clocks summed GPU by GPU as the samples did (a GPU equal to
 * the one before taking its clock), on a fleet whose GPUs are filled. */
double rack_fixture_phi_over_gpus(const rack_fleet *f, uint32_t r);

/* What rack r's sums must be, to the bit: the two-pass run-by-run update
 * (main before the one pass). Run q's power is its first GPU's under the
 * per-GPU update (ref); the rack adds k p and k min(1, share) run by
 * run, each server k p and k min(1, load share) over its runs, then its
 * supplies (sys_server_power); a plain rack its conversion curve. */
typedef struct rack_want {
  double gpu, mean, rack, loss, fan;
  uint32_t held;
} rack_want;

rack_want rack_fixture_want_of(const rack_fleet *f, const rack_fleet *ref,
                               uint32_t r);

/* Rack r's sums are w's, to the bit. */
void rack_fixture_assert_rack_is(const rack_fleet *f, uint32_t r, rack_want w);
/* Every rack's sums of f are the ones ref's GPUs give, to the bit. */
void rack_fixture_assert_racks_are(const rack_fleet *f, const rack_fleet *ref);

#endif
