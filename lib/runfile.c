/* runfile.c - a run's root attributes and time origin (runfile.h), moved
 * here from the command so that `aifsim run` and the library write the
 * same file. */
#include "runfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sig.h"

const char *runfile_utc_text(double utc_s, char *buf, size_t size) {
  double us = round(utc_s * 1e6);
  time_t whole = (time_t)floor(us / 1e6);
  long frac = (long)(us - (double)whole * 1e6);
  struct tm tm;
  if (gmtime_r(&whole, &tm) == NULL)
    return NULL;
  size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
  if (n > 0 && frac > 0) {
    n += (size_t)snprintf(buf + n, size - n, ".%06ld", frac);
    while (buf[n - 1] == '0')
      buf[--n] = '\0';
  }
  return n > 0 && n + 2 <= size && snprintf(buf + n, size - n, "Z") == 1 ? buf
                                                                         : NULL;
}

const char *runfile_time_origin(const factory_config *cfg, char *buf,
                                size_t size) {
  const char *start = factory_start_utc(cfg);
  double utc_s;
  if (start == NULL || sig_parse_time(start, &utc_s, NULL) != 0)
    return NULL;
  return runfile_utc_text(utc_s, buf, size);
}

/* The --set options the run was given (with --seed's), one a line, as the
 * root attribute overrides: what a report names as changed from the
 * scenario file. Written when there are none too (empty), so a reader
 * tells "none" from a file older than the attribute. */
static int write_overrides(tel_sink *sink, const char *const *sets,
                           size_t nsets) {
  size_t len = 1;
  for (size_t i = 0; i < nsets; i++)
    len += strlen(sets[i]) + 1;
  char *text = malloc(len);
  if (text == NULL)
    return SIM_ENOMEM;
  size_t at = 0;
  text[0] = '\0';
  for (size_t i = 0; i < nsets; i++)
    at += (size_t)sprintf(text + at, i + 1 < nsets ? "%s\n" : "%s", sets[i]);
  int rc = tel_put_meta_str(sink, "overrides", text);
  free(text);
  return rc;
}

static int write_scenario(tel_sink *sink, const factory_scenario *sc) {
  /* What the file is, so that readers refuse files aifsim did not write
   * (docs/OUTPUT.md), and the layout's version: readers refuse newer. */
  int rc = tel_put_meta_str(sink, "format", "aifsim-run");
  if (rc == SIM_OK)
    rc = tel_put_meta_int(sink, "format_version", 1);
  if (rc == SIM_OK)
    rc = tel_put_meta_str(sink, "aifsim_version", AIFSIM_VERSION);
  if (rc == SIM_OK)
    rc = tel_put_meta_str(sink, "scenario_name", sc->cfg.name);
  if (rc == SIM_OK)
    rc = tel_put_meta_int(sink, "seed", sc->cfg.seed);
  if (rc == SIM_OK)
    rc = tel_put_text(sink, "scenario", sc->resolved);
  const char *start = factory_start_utc(&sc->cfg);
  if (rc == SIM_OK && start != NULL)
    rc = tel_put_meta_str(sink, "start_utc", start);
  return rc;
}

int runfile_write_meta(tel_sink *sink, const factory_scenario *sc,
                       const char *const *sets, size_t nsets,
                       int64_t sweep_point) {
  int rc = write_scenario(sink, sc);
  if (rc == SIM_OK)
    rc = write_overrides(sink, sets, nsets);
  if (rc == SIM_OK && sweep_point >= 0)
    rc = tel_put_meta_int(sink, "sweep_point", sweep_point);
  return rc;
}
