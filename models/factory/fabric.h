/* fabric.h - the network fabric's power (docs/MODELS.md, Network
 * fabric): the back-end fabric's leaf, spine (and, for a large fleet,
 * core) switches and their optical transceivers, sized from the fleet's
 * GPUs and NICs as a non-blocking folded Clos (a fat tree: Al-Fares et
 * al., SIGCOMM 2008), and their power, drawn as IT outside the racks.
 *
 * The NICs and their own optics are the servers' (the system catalog's
 * `nic` parts); the fabric adds what is beyond them: the switches and the
 * modules in the switches' ports. Off by default. The model is one file,
 * fabric.c, with its descriptor (factory_model.h), wired to the factory
 * by one row of factory.h's FACTORY_MODEL_MAP. */
#ifndef MODELS_FACTORY_FABRIC_H
#define MODELS_FACTORY_FABRIC_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"
#include "scenario.h"

/* The scenario's `fabric` key (fab_schema); every default is a figure
 * of data/network/fabric.csv. */
typedef struct fab_config {
  bool enabled;
  double nics_per_gpu;  /* back-end NIC ports per GPU */
  double nic_gbps;      /* each NIC port's line rate, Gb/s */
  int64_t switch_ports; /* a switch's ports at port_gbps (its radix) */
  double port_gbps;     /* a switch port's line rate, Gb/s */
  double switch_w;      /* one switch, without the modules in its ports */
  double transceiver_w; /* one module in a switch port */
} fab_config;

extern const scn_schema fab_schema;

/* The fabric for a fleet. */
typedef struct fab_size {
  double endpoints;    /* NIC ports: GPUs x nics_per_gpu */
  uint64_t down_ports; /* leaf ports facing the NICs (a port carries
                          port_gbps / nic_gbps NICs) */
  uint64_t tiers;      /* 1: one switch; 2: leaf-spine; 3: fat tree */
  uint64_t leaves, spines, cores; /* switches per tier (aggregation is
                                     spines in a fat tree) */
  uint64_t switches;
  uint64_t links;        /* switch-to-switch links */
  uint64_t transceivers; /* a module per leaf down port, two per link */
  double power_w;        /* switches x switch_w + transceivers x
                            transceiver_w */
} fab_size;

/* Sizes the fabric of gpus GPUs under c. SIM_OK, or SIM_EINPUT with err
 * set when the fleet needs more than three tiers of switches. */
int fab_size_of(const fab_config *c, double gpus, fab_size *out,
                sim_error *err);

#endif
