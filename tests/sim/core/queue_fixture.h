/* queue_fixture.h - what the pending-event set's tests share
 * (test_queue.c, test_queue_switch.c). */
#ifndef TESTS_QUEUE_FIXTURE_H
#define TESTS_QUEUE_FIXTURE_H

#include <stddef.h>

#include "queue.h"

/* qsort's comparison of two evq_entry by (time, seq): the queue's order. */
int queue_entry_cmp(const void *x, const void *y);

/* Pops every entry of q and checks it against want[0..n), which must be
 * sorted by queue_entry_cmp; then q is empty. */
void queue_assert_pops(evq *q, const evq_entry *want, size_t n);

#endif
