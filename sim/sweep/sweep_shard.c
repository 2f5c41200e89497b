/* sweep_shard.c - shards of a sweep's points (sweep.h): parsed from
 * --shard K/N or from a Slurm array task's or job step's environment,
 * one split within another, and which points a shard holds. */
#include "sweep.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

static int parse_size(const char *text, size_t *out) {
  uint64_t v;
  if (units_parse_count(text, &v) != 0 || v > SIZE_MAX)
    return -1;
  *out = (size_t)v;
  return 0;
}

int sweep_shard_parse(const char *text, sweep_shard *out, sim_error *err) {
  char buf[64];
  const char *slash = strchr(text, '/');
  size_t len = slash != NULL ? (size_t)(slash - text) : 0;
  if (slash != NULL && len < sizeof buf) {
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (parse_size(buf, &out->index) == 0 &&
        parse_size(slash + 1, &out->count) == 0 && out->count > 0 &&
        out->index < out->count)
      return SIM_OK;
  }
  return sim_error_set(err, SIM_EINPUT,
                       "--shard takes I/N with 0 <= I < N (shard I of N), "
                       "not '%s'",
                       text);
}

int sweep_shard_from_slurm(const char *id, const char *min, const char *step,
                           const char *count, sweep_shard *out, bool *found,
                           sim_error *err) {
  size_t i, lo = 0, st = 1, n;
  *found = id != NULL && count != NULL;
  if (!*found)
    return SIM_OK;
  if (parse_size(id, &i) != 0 || parse_size(count, &n) != 0 ||
      (min != NULL && parse_size(min, &lo) != 0) ||
      (step != NULL && parse_size(step, &st) != 0) || n == 0 || st == 0 ||
      i < lo || (i - lo) % st != 0 || (i - lo) / st >= n)
    return sim_error_set(
        err, SIM_EINPUT,
        "SLURM_ARRAY_TASK_ID=%s (min %s, step %s) of "
        "SLURM_ARRAY_TASK_COUNT=%s does not make a shard; use a plain "
        "range such as --array=0-%s, or --shard I/N",
        id, min ? min : "-", step ? step : "-", count, count);
  out->index = (i - lo) / st;
  out->count = n;
  return SIM_OK;
}

int sweep_shard_from_step(const char *procid, const char *ntasks,
                          sweep_shard *out, bool *found, sim_error *err) {
  *found = procid != NULL && ntasks != NULL;
  if (!*found)
    return SIM_OK;
  if (parse_size(procid, &out->index) != 0 ||
      parse_size(ntasks, &out->count) != 0 || out->count == 0 ||
      out->index >= out->count)
    return sim_error_set(err, SIM_EINPUT,
                         "SLURM_PROCID=%s of SLURM_STEP_NUM_TASKS=%s does not "
                         "make a shard; use --shard I/N",
                         procid, ntasks);
  return SIM_OK;
}

sweep_shard sweep_shard_split(sweep_shard outer, sweep_shard inner) {
  if (outer.count == 0)
    outer = (sweep_shard){0, 1};
  if (inner.count == 0)
    inner = (sweep_shard){0, 1};
  return (sweep_shard){outer.index + outer.count * inner.index,
                       outer.count * inner.count};
}

bool sweep_shard_has(const sweep_shard *sh, size_t p) {
  return sh->count <= 1 || p % sh->count == sh->index;
}
