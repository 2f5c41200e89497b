/* queue_internal.h - what the two files of the event queue share: the
 * queue's state (the heap's array and the radix heap's ring, blocks and
 * chains), the packed (time, seq, slot) keys, and the radix heap's operations
 * (queue_radix.c) that queue.c calls while the radix heap holds the
 * entries or when it switches between the two. */
#ifndef SIM_QUEUE_INTERNAL_H
#define SIM_QUEUE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue.h"

/* Flipping the sign bit maps int64 order onto uint64 order. */
#define SIGN_BIT ((uint64_t)1 << 63)

/* (time, seq, slot) as one unsigned integer whose order is the heap's
 * order: the time's bits high, the seq (< EVQ_SEQS) and the slot (its
 * EVQ_TRACKED bit included) in the low word. Seqs are unique, so the
 * slot never decides an order; it rides in the key so that a walk moves
 * one 16-byte key and reads no second array. */
#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 evq_key;

static inline evq_key key_make(uint64_t time_bits, uint64_t seq,
                               uint32_t slot) {
  return (evq_key)time_bits << 64 | (seq << 32 | slot);
}
static inline uint64_t key_hi(evq_key k) { return (uint64_t)(k >> 64); }
static inline uint64_t key_lo(evq_key k) { return (uint64_t)k; }
static inline bool key_less(evq_key x, evq_key y) { return x < y; }
#else
/* Without a 128-bit type: correct, but the compiler may branch. */
typedef struct evq_key {
  uint64_t hi, lo;
} evq_key;

static inline evq_key key_make(uint64_t time_bits, uint64_t seq,
                               uint32_t slot) {
  return (evq_key){time_bits, seq << 32 | slot};
}
static inline uint64_t key_hi(evq_key k) { return k.hi; }
static inline uint64_t key_lo(evq_key k) { return k.lo; }
static inline bool key_less(evq_key x, evq_key y) {
  return (x.hi < y.hi) | ((x.hi == y.hi) & (x.lo < y.lo));
}
#endif

/* The parts of the key's low word. */
static inline uint64_t key_seq(evq_key k) { return key_lo(k) >> 32; }
static inline uint32_t key_slot(evq_key k) { return (uint32_t)key_lo(k); }

/* The time back from a key; written to avoid an implementation-defined
 * conversion of values above INT64_MAX. */
static inline int64_t key_time(evq_key k) {
  uint64_t u = key_hi(k) ^ SIGN_BIT;
  return u <= INT64_MAX ? (int64_t)u : -(int64_t)~u - 1;
}
/* Keeps the radix heap's operations out of the public functions, so that
 * the heap's path through them compiles much as it would alone (inlined,
 * evq_pop's share of the reference day rose from 9.5% to 10.6%). */
#if defined(__GNUC__) || defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif
/* ---- The radix heap's types ------------------------------------------- */

/* The index of no block: the end of a chain or of the free list. */
#define NO_BLOCK UINT32_MAX

enum {
  EVQ_B = 16,                           /* entries per block */
  EVQ_R = 4,                            /* bits per digit */
  EVQ_DIGITS = 1 << EVQ_R,              /* chains per level */
  EVQ_CHAINS = 64 / EVQ_R * EVQ_DIGITS, /* chains in all */
  EVQ_WORDS = EVQ_CHAINS / 64,          /* words of the mask */
  EVQ_SPARE = EVQ_CHAINS + 2,           /* blocks beyond ceil(n / EVQ_B) */
  EVQ_RING_MIN = 64,                    /* first size of the ring */
};

/* One entry of a chain. */
typedef struct item {
  uint64_t t; /* time with the sign bit flipped */
  uint64_t seq;
  uint32_t slot;
} item;

typedef struct block {
  item e[EVQ_B];
  uint32_t next; /* the next block of its chain or of the free list */
} block;

/* One chain. An empty chain has head and tail NO_BLOCK and fill
 * EVQ_B, so that the first add takes a block. */
typedef struct chain {
  uint32_t head, tail;
  uint32_t fill; /* entries in the tail block */
  item min;      /* the smallest (t, seq) held, when not empty */
} chain;

/* An entry of the ring: its time is last. */
typedef struct tie {
  uint64_t seq;
  uint32_t slot;
} tie;

/* Both structures; radix says which holds the entries. */
struct evq {
  size_t n;   /* entries held */
  bool radix; /* the entries are in the radix heap, else in the heap */
  /* The heap's root is vacant: the last pop took it and left filling it
   * to the next operation (then the n entries sit at 1 .. n). */
  bool hole;
  /* The heap's walks down ask for the grandchildren's lines (evq_prefetch). */
  bool ask;
  /* The heap. Its array keeps its size while the radix heap is used,
   * so that going back never allocates. */
  evq_key *key; /* heap order; key[0] is the smallest */
  size_t cap;   /* entries the array can hold */
  /* pos[s]: where the heap's entry with slot s | EVQ_TRACKED sits, kept
   * for those entries only (evq_decrease checks it before use). */
  uint32_t *pos;
  size_t pcap;
  /* The radix heap. */
  uint64_t last;            /* every bucket index is relative to it */
  uint64_t mask[EVQ_WORDS]; /* bit i set iff chain i is not empty */
  size_t room;              /* entries its push can hold without growing */
  tie *ring;                /* bucket 0; rcap is a power of two */
  size_t head, nring, rcap;
  block *blk;
  size_t nblk;         /* blocks allocated */
  uint32_t free_blk;   /* the free list */
  chain b[EVQ_CHAINS]; /* b[level * EVQ_DIGITS + digit] */
  sim_allocator alloc;
};

/* queue_radix.c. Its chains start empty (init, at creation). grow makes
 * room for one more entry (SIM_ENOMEM: none, nothing changed); place
 * puts an entry relative to last (room made). push, peek, pop and compact
 * are evq_push's and the others' while the radix heap holds the entries.
 * to_heap copies its entries into the heap's array (unordered: the
 * caller heapifies) and leaves it empty. */
void evq__rdx_init(evq *q);
int evq__rdx_grow(evq *q);
void evq__rdx_place(evq *q, uint64_t t, uint64_t seq, uint32_t slot);
int evq__rdx_push(evq *q, evq_entry e);
bool evq__rdx_peek(const evq *q, evq_entry *out);
bool evq__rdx_pop(evq *q, evq_entry *out);
void evq__rdx_compact(evq *q, evq_keep_fn keep, void *ctx);
void evq__rdx_to_heap(evq *q);

#endif
