/* queue_fixture.c - what the pending-event set's tests share
 * (test_queue.c, test_queue_switch.c): the (time, seq) order written
 * apart from the queue, and a queue's pops checked against a sorted
 * reference. */
#include "queue_fixture.h"

#include "test_util.h"

int queue_entry_cmp(const void *x, const void *y) {
  const evq_entry *a = x, *b = y;
  if (a->time != b->time)
    return a->time < b->time ? -1 : 1;
  if (a->seq != b->seq)
    return a->seq < b->seq ? -1 : 1;
  return 0;
}

/* Pops every entry of q and checks it against want[0..n), which must be
 * sorted. */
void queue_assert_pops(evq *q, const evq_entry *want, size_t n) {
  evq_entry got;
  for (size_t i = 0; i < n; i++) {
    assert_true(evq_pop(q, &got));
    if (got.time != want[i].time || got.seq != want[i].seq ||
        got.slot != want[i].slot)
      fail_msg("pop %zu: got (%lld, %llu, %u), want (%lld, %llu, %u)", i,
               (long long)got.time, (unsigned long long)got.seq, got.slot,
               (long long)want[i].time, (unsigned long long)want[i].seq,
               want[i].slot);
  }
  assert_false(evq_pop(q, &got));
  assert_int_equal(evq_size(q), 0);
}
