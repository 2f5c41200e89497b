/* fuzz_scenario.c - libFuzzer target: the scenario loader whole (YAML,
 * units, the catalog checks) with --set overrides. The input is the
 * scenario file; NUL bytes in it start --set overrides. Any outcome but
 * a crash, a leak or a sanitizer report is fine: a bad file is an error
 * with its position. */
#include <stdint.h>

#include "factory.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *sets[4];
  size_t nsets;
  size_t head = fuzz_split(data, size, sets, 4, &nsets);
  const char *path = fuzz_write("scenario.yaml", data, head);
  if (path != NULL) {
    factory_scenario sc;
    sim_error err = {0};
    if (factory_scenario_load(path, (const char *const *)sets, nsets, &sc,
                              &err) == SIM_OK)
      factory_scenario_release(&sc);
  }
  fuzz_sets_free(sets, nsets);
  return 0;
}
