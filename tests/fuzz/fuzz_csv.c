/* fuzz_csv.c - libFuzzer target: the CSV readers, signals (sig.h) and
 * request traces (arrivals.h), over sim/input/csv.h. The first byte picks the
 * reader (its value modulo 4: a price signal stepped, a carbon signal by
 * its basis column, a temperature interpolated and repeated, a trace);
 * the rest is the file. Errors are fine; crashes, leaks, sanitizer
 * reports and hangs are not. */
#include <math.h>
#include <stdint.h>

#include "arrivals.h"
#include "fuzz_input.h"
#include "sig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_signal(const char *path, int which) {
  sig_config c = {0};
  c.file = (char *)path;
  c.time_column = (char *)"#1";
  c.value_column = which == 1 ? NULL : (char *)"#2";
  c.interpolation = which == 2;
  c.repeat = which == 2;
  c.max_gap_s = INFINITY;
  c.scale = 1;
  c.basis = which == 1 ? SIG_BASIS_LIFECYCLE : 0;
  static const csv_range *const ranges[] = {
      &sig_price_range, &sig_carbon_range, &sig_temperature_range};
  c.range = ranges[which];
  sig_series s;
  sim_error err = {0};
  if (sig_init(&s, &c, NULL, NULL, &err) == SIM_OK) {
    (void)sig_at(&s, 0);
    (void)sig_end(&s);
    sig_fini(&s);
  }
}

static void read_trace(const char *path) {
  arr_config c = {0};
  c.kind = ARR_TRACE;
  c.file = (char *)path;
  c.time_scale = 1;
  c.loop = true;
  sim_error err = {0};
  arr_gen *g = arr_create(&c, NULL, 1, 0, NULL, &err);
  double t;
  int64_t prompt, output;
  for (int i = 0; g != NULL && i < 64 && arr_next(g, &t, &prompt, &output);
       i++)
    ;
  arr_destroy(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  int which = data[0] % 4;
  const char *path = fuzz_write("input.csv", data + 1, size - 1);
  if (path == NULL)
    return 0;
  if (which < 3)
    read_signal(path, which);
  else
    read_trace(path);
  return 0;
}
