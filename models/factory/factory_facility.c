/* factory_facility.c - the facility a scenario leaves out: a default
 * cooling plant for each rack group from its GPU's liquid_heat_share, the
 * outdoor temperature those loops need, and the rating of the electrical
 * chain (electrical.h). check_factory calls it, so the defaults are
 * scenario keys like any other: the resolved scenario lists them. */
#include "factory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factory_internal.h"
#include "file.h"

/* A default plant is sized 10% above its racks' power limits: their heat
 * at full load with conversion losses of up to about 9% (80 PLUS Titanium
 * is 91% at full load). Assumption; redundancy (N+1) would add standby
 * units that are off and draw nothing in this model. */
#define PLANT_MARGIN 1.1

/* The outdoor temperature default loops see when the scenario gives none:
 * 15 degC, the sea-level temperature of the ISO 2533 standard atmosphere
 * and close to the annual mean of temperate sites (Frankfurt's 2023 mean
 * is 11.6 degC, Dallas's 20.3 degC, in tests/data/weather). */
#define DEFAULT_OUTDOOR_C 15.0

static double group_limit_w(const rack_group_config *g) {
  return (double)g->count * g->limit_w;
}

static int add_loop(factory_config *c, const rack_group_config *g,
                    cool_kind kind, double share, sim_error *err) {
  char name[256];
  snprintf(name, sizeof name, "%s-%s", kind == COOL_LIQUID ? "liquid" : "air",
           g->name);
  int rc = cool_loop_default(&c->loops[c->nloops], name, kind, g->name,
                             PLANT_MARGIN * share * group_limit_w(g), share,
                             err);
  if (rc == SIM_OK)
    c->nloops++;
  return rc;
}

/* One liquid loop for the share of a group's heat its GPU puts into cold
 * plates, one air loop for the rest. Each loop serves one group, since a
 * loop takes the same share of every group it serves. */
static int default_loops(factory_scenario *sc, sim_error *err) {
  factory_config *c = &sc->cfg;
  free(c->loops); /* `loops` absent: nothing was bound */
  c->loops = calloc(2 * c->nracks, sizeof *c->loops);
  if (c->loops == NULL)
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
  int rc = SIM_OK;
  for (size_t g = 0; g < c->nracks && rc == SIM_OK; g++) {
    const rack_group_config *rg = &c->racks[g];
    double s = gpu_catalog_find(&sc->catalog, rg->gpu)->liquid_heat_share;
    if (s > 0)
      rc = add_loop(c, rg, COOL_LIQUID, s, err);
    if (rc == SIM_OK && s < 1)
      rc = add_loop(c, rg, COOL_AIR, 1 - s, err);
  }
  return rc;
}

static bool outdoor_given(const sig_config *o) {
  return o->file != NULL || !isnan(o->value) || o->ndaily > 0 || o->diurnal;
}

int factory__default_facility(factory_scenario *sc, const scn_loc *loc,
                              sim_error *err) {
  factory_config *c = &sc->cfg;
  if (isnan(c->electrical.rating_w)) {
    c->electrical.rating_w = 0;
    for (size_t g = 0; g < c->nracks; g++)
      c->electrical.rating_w += group_limit_w(&c->racks[g]);
  }
  sc->cooling = FACTORY_COOLING_GIVEN;
  if (scn_given(loc, "loops")) {
    if (c->nloops == 0)
      sc->cooling = FACTORY_COOLING_NONE;
    return SIM_OK;
  }
  sc->cooling = FACTORY_COOLING_DEFAULT;
  int rc = default_loops(sc, err);
  if (rc == SIM_OK && !outdoor_given(&c->grid.outdoor))
    c->grid.outdoor.value = DEFAULT_OUTDOOR_C;
  return rc;
}

const char *factory_cooling_note(const factory_scenario *sc, char *buf,
                                 size_t size) {
  const factory_config *c = &sc->cfg;
  size_t n = 0;
  buf[0] = '\0';
  if (sc->cooling == FACTORY_COOLING_NONE) {
    snprintf(buf, size, "none (loops: []): PUE excludes cooling");
    return buf;
  }
  if (sc->cooling != FACTORY_COOLING_DEFAULT)
    return buf;
  n += (size_t)snprintf(buf, size, "default:");
  for (size_t l = 0; l < c->nloops && n < size; l++) {
    const cool_loop_config *lc = &c->loops[l];
    const rack_group_config *g = NULL;
    for (size_t k = 0; k < c->nracks; k++)
      if (strcmp(c->racks[k].name, lc->racks[0]) == 0)
        g = &c->racks[k];
    n += (size_t)snprintf(buf + n, size - n, "%s %s loop for %s (%s, %.0f%%)",
                          l > 0 ? "," : "",
                          lc->kind == COOL_LIQUID ? "liquid" : "air",
                          lc->racks[0], g != NULL ? g->gpu : "?",
                          100 * lc->heat_share);
  }
  if (n < size && c->grid.outdoor.file == NULL &&
      c->grid.outdoor.value == DEFAULT_OUTDOOR_C)
    snprintf(buf + n, size - n, "; outdoor %.0f degC", DEFAULT_OUTDOOR_C);
  return buf;
}

/* The operator's DR targets (grid.dr_file), beside the scenario, on the
 * sample period's grain as every DR event; a bad row's FILE:LINE:COL is
 * the CSV's own. */
int factory__read_targets(factory_scenario *sc, const scn_loc *loc,
                          sim_error *err) {
  char full[4096], msg[sizeof err->msg];
  sim_path_beside(scn_loc_file(loc), sc->cfg.grid.dr_file, full, sizeof full);
  int rc = grid_read_targets(&sc->feed, full, sc->cfg.sample_period_s,
                             sc->cfg.duration_s, err);
  if (rc != SIM_EIO)
    return rc;
  snprintf(msg, sizeof msg, "%s", err->msg);
  return scn_fail(loc, "grid.dr_file", err,
                  "paths are relative to the scenario's folder", "%s", msg);
}
