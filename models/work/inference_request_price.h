/* inference_request_price.h - a request-level replica's prices
 * (inference_request_price.c): its prefill's length and load, its decode
 * step, at its clock, from roofline.h. */
#ifndef AIFSIM_INFERENCE_REQUEST_PRICE_H
#define AIFSIM_INFERENCE_REQUEST_PRICE_H

#include "inference_internal.h"

#include <stddef.h>
#include <string.h>

/* Sets r's load and compute share as two 16-byte stores, {sm, mem} and
 * {busy, compute}: the pairs drift reads them in (its products two
 * lanes at a time), so that a drift soon after a price (the next change
 * of advance_changes' loop, its last drift) finds each of its loads in
 * one store. A load across two stores not yet in the cache waits for
 * both to get there (store-to-load forwarding fails); the compiler's own
 * merging of the five stores of a price made {t_step, sm}, {mem, busy}
 * and {compute, next_s}. The same values: the same bits. */
static inline void inf__rep_set_load(replica *r, gpu_load l, double compute) {
  double lo[2] = {l.sm, l.mem}, hi[2] = {l.busy, compute};
  memcpy((char *)r + offsetof(replica, load), lo, sizeof lo);
  memcpy((char *)r + offsetof(replica, load) + sizeof lo, hi, sizeof hi);
}

/* Replica r's step terms at its clock (rl_clock_of's at inf__rep_phi),
 * worked out the first time they are asked for after a clock change. */
const rl_clock *inf__rep_clock(const inf_service *s, replica *r);

/* The joiners' prefill at r's clock: sets pre_s, load, compute and next_s
 * (the prefill's end, pre_left of it still to run). */
void inf__price_prefill(inf_service *s, replica *r);

/* The decode step at the batch's mean context now: sets t_step, load,
 * compute and next_s (the smallest tag reached). */
void inf__price_decode(inf_service *s, replica *r);

/* Whether request q's client has given up waiting for its first token by
 * time t. */
static inline bool inf__gave_up(const inf_service *s, const request *q,
                                double t) {
  return s->c->timeout_s > 0 && t - q->arrival_s > s->c->timeout_s;
}

/* The time r, prefilling, has its next change anyone beyond it sees: the
 * first completion after its prefill's end when nothing else changes at
 * that end (its joiners only start decoding: no load routing reads
 * changes), else that end (next_s). The replica's one event is there;
 * the end is processed at its own time by whatever brings r up to date. */
double inf__after_prefill(inf_service *s, replica *r);

/* Tokens replica r has made since its clock, which lags now by up to the
 * time since its last change, as advance would count them, and in
 * *prompts the prompts a folded prefill's end before now has prefilled
 * (const: it cannot catch up). */
double inf__tokens_since_clock(const inf_service *s, const replica *r,
                               double now, double *prompts);

/* The request level's operations of inf_ops that only read the replicas
 * (inference_internal.h): down, totals, compute_share, compute_shares. */
bool inf__req_down(const inf_service *s, uint32_t k);
inf_totals inf__req_totals(const inf_service *s);
double inf__req_compute_share(const inf_service *s, uint32_t r);
void inf__req_compute_shares(const inf_service *s, uint32_t k0, uint32_t n,
                             double *out);

#endif
