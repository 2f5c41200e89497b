/* inference_request_price.h - a request-level replica's prices
 * (inference_request_price.c): its prefill's length and load, its decode
 * step, at its clock, from roofline.h. */
#ifndef AIFSIM_INFERENCE_REQUEST_PRICE_H
#define AIFSIM_INFERENCE_REQUEST_PRICE_H

#include "inference_internal.h"

/* The joiners' prefill at r's clock: sets pre_s, load, compute and next_s
 * (the prefill's end, pre_left of it still to run). */
void inf__price_prefill(inf_service *s, replica *r);

/* The decode step at the batch's mean context now: sets t_step, load,
 * compute and next_s (the smallest tag reached). */
void inf__price_decode(inf_service *s, replica *r);

#endif
