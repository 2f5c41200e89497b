/* factory_scn_faults.c - the factory's scenario check, its faults part
 * (factory__check_faults, called by factory_scn.c): each fault names rack
 * groups, racks and loops the factory has, and its timing fits the run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factory_internal.h"
#include "suggest.h"

/* The factory's rack groups and loops as fault.h names them, in arrays
 * borrowed from c; free with site_free. SIM_OK or SIM_ENOMEM. */
static int site_of(const factory_config *c, fault_site *site) {
  /* One block: group names, loop names, then the counts. */
  size_t names = c->nracks + c->nloops + 1;
  void *block = malloc(names * sizeof(char *) + c->nracks * sizeof(uint32_t));
  if (block == NULL)
    return SIM_ENOMEM;
  const char **groups = block, **loops = groups + c->nracks;
  uint32_t *counts = (uint32_t *)(groups + names);
  for (size_t g = 0; g < c->nracks; g++) {
    groups[g] = c->racks[g].name;
    counts[g] = (uint32_t)c->racks[g].count;
  }
  for (size_t l = 0; l < c->nloops; l++)
    loops[l] = c->loops[l].name;
  *site = (fault_site){groups, counts, c->nracks, loops, c->nloops};
  return SIM_OK;
}

static void site_free(fault_site *site) {
  free((void *)site->groups);
  memset(site, 0, sizeof *site);
}

/* More fault intervals than this in one run is a typo (mtbf: 1 s), not
 * a study; they would be held in memory. */
#define MAX_FAULT_EVENTS 1e5

/* A fault's names exist in the factory. */
static int check_fault_names(const factory_config *c, const fault_site *site,
                             size_t k, const scn_loc *loc, sim_error *err) {
  const fault_config *f = &c->faults[k];
  char where[64], hint[256];
  for (size_t i = 0; i < f->nracks; i++) {
    uint32_t first, n;
    snprintf(where, sizeof where, "faults.%zu.racks.%zu", k, i);
    if (!fault_rack_range(site, f->racks[i], &first, &n))
      return scn_fail(loc, where, err,
                      factory__group_hint(c, f->racks[i],
                                          "a rack group's name, or a rack's: "
                                          "GROUP-K with K from 0 to count - 1",
                                          hint, sizeof hint),
                      "no rack or rack group is called '%s'", f->racks[i]);
  }
  snprintf(where, sizeof where, "faults.%zu.loop", k);
  if (f->kind == FAULT_COOLING && fault_loop_index(site, f->loop) < 0) {
    sim_suggest near;
    sim_suggest_init(&near, f->loop);
    for (size_t l = 0; l < c->nloops; l++)
      sim_suggest_add(&near, c->loops[l].name);
    size_t len = sim_suggest_text(&near, hint, sizeof hint);
    snprintf(hint + len, sizeof hint - len, "%s",
             c->nloops > 0 ? "name one of the loops under 'loops'"
                           : "the scenario has no cooling loops");
    return scn_fail(loc, where, err, hint, "no cooling loop is called '%s'",
                    f->loop);
  }
  return SIM_OK;
}

/* A fault's timing fits the run: listed ones on control ticks (so the
 * fault takes effect when it says and fault_s is exact), random ones not
 * so frequent that their intervals would swamp memory. */
static int check_fault_timing(const factory_config *c, size_t k,
                              const scn_loc *loc, sim_error *err) {
  const fault_config *f = &c->faults[k];
  sim_time ctl = factory__to_ns(c->control_period_s);
  char where[64];
  if (fault_is_random(f)) {
    double n = fault_expected_events(f, c->duration_s);
    snprintf(where, sizeof where, "faults.%zu.mtbf", k);
    if (n > MAX_FAULT_EVENTS)
      return scn_fail(loc, where, err, "lengthen mtbf or mttr",
                      "about %.3g faults over the run; at most %.0e are "
                      "allowed",
                      n, MAX_FAULT_EVENTS);
    return SIM_OK;
  }
  bool at_ok = factory__to_ns(f->at_s) % ctl == 0;
  snprintf(where, sizeof where, "faults.%zu.%s", k, at_ok ? "duration" : "at");
  if (!at_ok || factory__to_ns(f->duration_s) % ctl != 0)
    return scn_fail(loc, where, err, "or shorten control_period",
                    "fault %zu must start and last whole multiples of "
                    "control_period",
                    k + 1);
  return SIM_OK;
}

int factory__check_faults(const factory_config *c, const scn_loc *loc,
                          sim_error *err) {
  if (c->nfaults == 0)
    return SIM_OK;
  fault_site site;
  if (site_of(c, &site) != SIM_OK)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  int rc = SIM_OK;
  for (size_t k = 0; k < c->nfaults && rc == SIM_OK; k++) {
    rc = check_fault_names(c, &site, k, loc, err);
    if (rc == SIM_OK)
      rc = check_fault_timing(c, k, loc, err);
  }
  site_free(&site);
  return rc;
}
