/* system.h - the systems catalog and the server power model: what holds
 * the GPUs (a DGX or HGX server, or a rack-scale NVL72) and what it draws
 * besides them. The catalog is data (scenarios/catalog/systems.yaml,
 * compiled in), every figure with its source. One server (a "unit": eight
 * GPUs for an HGX, the whole rack for an NVL72) draws
 *
 *   parts   sum over parts of count x (idle + (max - idle) x driver),
 *           the driver the host load u for cpu, memory, storage and other,
 *           and the GPUs' activity a for nic and nvswitch;
 *   fans    max_power x s^3, s = clamp(heat / design heat, min_speed, 1),
 *           heat = (1 - liquid_heat_share) x (GPUs + parts): the affinity
 *           laws (airflow ~ speed, power ~ speed^3) at a fixed air
 *           temperature rise;
 *   DC      GPUs + parts + fans, what its power supplies deliver;
 *   wall    DC / eta(DC / (psu count x rating)), eta the supplies'
 *           efficiency curve, linear between points and held at its ends.
 *
 * The wall (inlet) power is the server's IT power as The Green Grid counts
 * it; the supplies' losses (wall - DC) and the fans are inside it. Patterson
 * et al.'s ITUE (ISC 2013) divides it by the compute components' power: the
 * GPUs and the parts, without the fans and the supplies' losses.
 *
 * Typical use, one server's wall power from its GPUs' power and host load:
 *
 *   sys_catalog sc;  gpu_catalog gc;
 *   gpu_catalog_load_builtin(&gc, &err);
 *   sys_catalog_load_builtin(&sc, &err);
 *   const sys_spec *s = sys_catalog_find(&sc, "DGX-H100");
 *   const gpu_spec *g = gpu_catalog_find(&gc, s->gpu);
 *   sys_power p = sys_server_power(s, g, 8 * 650.0, 0.9, 0.9 * s->host_load);
 *   ... p.wall_w ...
 *   sys_catalog_fini(&sc);  gpu_catalog_fini(&gc); */
#ifndef MODELS_SYSTEM_H
#define MODELS_SYSTEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "gpu.h"
#include "scenario.h"

/* What a part's power follows. */
typedef enum sys_kind {
  SYS_CPU,
  SYS_MEMORY,
  SYS_NIC,
  SYS_NVSWITCH,
  SYS_STORAGE,
  SYS_OTHER,
  SYS_NKINDS
} sys_kind;

/* One kind of part: count units, each drawing idle..max. */
typedef struct sys_part {
  int kind; /* sys_kind */
  char *model;
  int64_t count;
  double idle_w, max_w; /* per unit */
  /* Made at load, for sys_parts_w (every server every period): count as
   * a double, max_w - idle_w, and whether it follows the GPUs' activity
   * (nic, nvswitch) rather than the host load. */
  double units, span_w;
  bool follows_gpus;
} sys_part;

typedef struct sys_fans {
  double max_w;     /* all fans at full speed */
  double min_speed; /* the controller's floor, a share of full speed */
} sys_fans;

/* A point of a power supply's efficiency curve: at this share of the
 * supplies' rated output, this share of the inlet power comes out. */
typedef struct sys_eff_point {
  double load, efficiency;
} sys_eff_point;

typedef struct sys_psu {
  int64_t count;
  double rating_w; /* each */
  sys_eff_point *curve;
  size_t ncurve;
} sys_psu;

enum { SYS_PARTS_LANED = 8 };

/* One system. Plain data from the catalog, plus sums made at load. */
typedef struct sys_spec {
  char *name; /* the identifier scenarios use, e.g. "DGX-H100" */
  char *full_name;
  char *gpu;                /* the GPU catalog's name of its GPUs */
  int64_t gpus;             /* GPUs in one unit */
  double max_power_w;       /* rated maximum at the inlet; NaN: unpublished */
  double liquid_heat_share; /* the share of heat cold plates carry */
  double host_load;         /* the host's load when the GPUs are fully busy */
  sys_part *parts;
  size_t nparts;
  sys_fans fans;
  sys_psu psu;
  char **sources;
  size_t nsources;
  double parts_idle_w, parts_max_w; /* sums over the parts, at load */
  /* Made at load, for sys_parts_w two parts a register (every server
   * every period): the parts' units, idle_w and span_w side by side, and
   * all ones where a part follows the GPUs. Up to SYS_PARTS_LANED parts;
   * a system with more adds them one by one. */
  double lane_units[SYS_PARTS_LANED], lane_idle[SYS_PARTS_LANED];
  double lane_span[SYS_PARTS_LANED];
  uint64_t lane_follows[SYS_PARTS_LANED];
  /* sys_parts_w(s, 1, host_load), made at load: a rack's worst case asks
   * for it at each of the split's trials (rack_group_worst_w). */
  double parts_full_w;
} sys_spec;

typedef struct sys_catalog {
  sys_spec *systems;
  size_t n;
} sys_catalog;

/* The schema of one catalog entry. */
extern const scn_schema sys_spec_schema;

/* One server's power, W. compute_w = gpu_w + parts_w (ITUE's
 * denominator); dc_w = compute_w + fan_w; wall_w = dc_w + psu_loss_w. */
typedef struct sys_power {
  double gpu_w, parts_w, fan_w, dc_w, psu_loss_w, wall_w, compute_w;
} sys_power;

/* Loads the catalog compiled into the program. SIM_OK, or an error with
 * the position in the catalog text. Free with sys_catalog_fini. */
int sys_catalog_load_builtin(sys_catalog *cat, sim_error *err);

/* Loads a catalog file in the same format. */
int sys_catalog_load_file(sys_catalog *cat, const char *path, sim_error *err);

/* Frees what a load allocated; the catalog is empty afterwards. */
void sys_catalog_fini(sys_catalog *cat);

/* The system called name, or NULL. Borrowed: valid while cat lives. */
const sys_spec *sys_catalog_find(const sys_catalog *cat, const char *name);

/* Writes the known names as "A, B, C" into buf (for hints). */
void sys_catalog_names(const sys_catalog *cat, char *buf, size_t size);

/* The name of a part kind ("cpu", ...). */
const char *sys_kind_name(sys_kind k);

/* The parts' power at GPU activity a and host load u (both clamped to
 * [0, 1]). W. */
double sys_parts_w(const sys_spec *s, double activity, double host_load);

/* The fans' power when everything else in the unit draws dc_w (GPUs and
 * parts). g gives the design heat (its TDP for every GPU). W. */
double sys_fan_w(const sys_spec *s, const gpu_spec *g, double dc_w);

/* An efficiency curve (n points by rising load) at load: linear between
 * points, flat beyond the ends; 1 (lossless) without points. The one
 * interpolation of the supplies' curve here and the racks' conversion
 * curve (rack_efficiency). */
double sys_curve_at(const sys_eff_point *c, size_t n, double load);

/* The supplies' efficiency when they deliver dc_w in all. */
double sys_psu_efficiency(const sys_spec *s, double dc_w);

/* The inlet power for dc_w delivered: dc_w / sys_psu_efficiency. W. */
double sys_wall_w(const sys_spec *s, double dc_w);

/* One unit's power with its GPUs drawing gpu_w in all (W), at GPU
 * activity a and host load u in [0, 1]; g is its GPU type (s->gpu in the
 * GPU catalog). Cannot fail. */
sys_power sys_server_power(const sys_spec *s, const gpu_spec *g, double gpu_w,
                           double activity, double host_load);

/* The unit at its most: every GPU at TDP, every part at its maximum and
 * the fans at full speed. */
sys_power sys_full_power(const sys_spec *s, const gpu_spec *g);

#endif
