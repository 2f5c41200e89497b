/* rack_fixture.h - what the fleet's tests share (test_rack.c,
 * test_rack_runs.c): the built-in GPU and system catalogs, loaded once a
 * group, a conversion curve, and a fleet made or the test failed. */
#ifndef TESTS_RACK_FIXTURE_H
#define TESTS_RACK_FIXTURE_H

#include <stddef.h>

#include "rack.h"

extern gpu_catalog rack_fixture_gpus;
extern sys_catalog rack_fixture_systems;

/* 80 PLUS Titanium (230 V internal redundant) minimum efficiencies at
 * 10, 20, 50 and 100% load: 90, 94, 96, 91%. Four points. */
extern const rack_conv_point rack_fixture_titanium[4];

/* cmocka group setup and teardown: the catalogs loaded and freed. */
int rack_fixture_setup(void **state);
int rack_fixture_teardown(void **state);

/* A fleet of the groups; fails the test when it cannot be made. */
rack_fleet *rack_fixture_fleet(const rack_group_spec *g, size_t n);

#endif
