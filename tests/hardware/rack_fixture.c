/* rack_fixture.c - the fleet tests' shared setup (rack_fixture.h). */
#include "rack_fixture.h"

#include "test_util.h"

gpu_catalog rack_fixture_gpus;
sys_catalog rack_fixture_systems;

const rack_conv_point rack_fixture_titanium[4] = {
    {0.1, 0.90}, {0.2, 0.94}, {0.5, 0.96}, {1.0, 0.91}};

int rack_fixture_setup(void **state) {
  (void)state;
  sim_error err = {0};
  return gpu_catalog_load_builtin(&rack_fixture_gpus, &err) == SIM_OK &&
                 sys_catalog_load_builtin(&rack_fixture_systems, &err) ==
                     SIM_OK
             ? 0
             : -1;
}

int rack_fixture_teardown(void **state) {
  (void)state;
  sys_catalog_fini(&rack_fixture_systems);
  gpu_catalog_fini(&rack_fixture_gpus);
  return 0;
}

rack_fleet *rack_fixture_fleet(const rack_group_spec *g, size_t n) {
  sim_error err = {0};
  rack_fleet *f = rack_fleet_create(g, n, NULL, &err);
  if (f == NULL)
    fail_msg("%s", err.msg);
  return f;
}
