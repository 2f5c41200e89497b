/* fuzz_sweep.c - libFuzzer target: the sweep-file loader (its keys, axes,
 * ranges, point expansion) with --set overrides after NUL bytes. The base
 * scenario's check is a stub that accepts every point: this target is
 * about the sweep file; fuzz_scenario covers the scenario loader. */
#include "fuzz_input.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(void *user, const char *base, const char *const *sets,
                 size_t nsets, int64_t *seed, char **resolved,
                 sim_error *err) {
  (void)user;
  (void)base;
  (void)sets;
  (void)nsets;
  *seed = 1;
  *resolved = strdup("name: fuzz\n");
  return *resolved != NULL ? SIM_OK
                           : sim_error_set(err, SIM_ENOMEM, "out of memory");
}

static int run(void *user, const sweep_job *job, sim_error *err) {
  (void)user;
  (void)job;
  return sim_error_set(err, SIM_ESTATE, "not run while fuzzing");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *sets[4];
  size_t nsets;
  size_t head = fuzz_split(data, size, sets, 4, &nsets);
  const char *path = fuzz_write("sweep.yaml", data, head);
  if (path != NULL) {
    sweep_hooks h = {.check = check, .run = run};
    sim_error err = {0};
    sweep_destroy(sweep_load(path, (const char *const *)sets, nsets, &h, &err));
  }
  fuzz_sets_free(sets, nsets);
  return 0;
}
