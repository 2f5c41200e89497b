/* power.h - how a budget for GPU power is shared (docs/MODELS.md): the
 * allocation policies behind one interface, so a new policy is a file.
 *
 * The factory works out, every control period, the GPU budget of each rack
 * group: what the cap leaves for its GPUs once cooling, conversion losses,
 * other IT power and smoothing are reserved (the static split's reserve,
 * factory.c). A policy shares that budget among "units": GPUs that work in
 * step and so share type, activity and cap (a replica of a service, a
 * pipeline stage of a job, the GPUs of a rack no workload holds). Each
 * unit's cap stays within [lo, hi]: the GPU's settable range, and at most
 * the GPU's share of its rack's room (limit less other IT), so rack limits
 * hold. The caps never add up to more than the budget, so the facility
 * stays under its cap whatever the policy: a policy decides who gets the
 * watts, not how many there are.
 *
 * Policies:
 * - static:       every GPU the same cap (the budget over the GPUs).
 * - proportional: caps in proportion to demand (the power a unit would
 *                 draw uncapped at its activity), water-filled within
 *                 [lo, hi].
 * - priority:     every unit its minimum, then inference up to demand,
 *                 then training, then the rest (within a class, the
 *                 workloads of higher priority first), each level
 *                 proportional to demand when the budget runs short.
 * - efficiency:   water-filling on marginal useful work per watt. A unit's
 *                 useful work is its speed as a share of full speed,
 *                 modelled as phi^c (c: the compute-bound share of its
 *                 work; c = 1 for compute-bound training, near 0 for
 *                 memory-bound decode, which the clock barely speeds up),
 *                 times its weight; its power is idle + span a phi^gamma.
 *                 The marginal w c phi^(c-1) / (span a gamma phi^(gamma-1))
 *                 falls with phi, so the optimum gives every unit the clock
 *                 where its marginal equals a common level mu, found by
 *                 bisection; units without useful work (weight 0) get what
 *                 is left, up to demand.
 * - uniform_floor: every unit its minimum, then the same watts more per
 *                 GPU for every unit, up to its demand; the plain
 *                 baseline that ignores classes and the work's value.
 * Every policy but static hands a unit no more than its demand while
 * others want more: headroom a unit leaves unused returns to the pool at
 * the next allocation (stranded-power recovery); what no unit wants is
 * spread last, in proportion to the range left. */
#ifndef MODELS_POWER_H
#define MODELS_POWER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The classes of the priority policy, first served first. */
typedef enum power_class {
  POWER_INFERENCE,
  POWER_TRAINING,
  POWER_OTHER,
  POWER_NCLASSES
} power_class;

typedef struct power_unit {
  /* 96 bytes, no padding: a unit's worth (cls, n, priority, weight, c)
   * is its first 32, so a store of it in a 32-byte aligned array of
   * units stays in one cache line (workloads_units.c's worth_puts); n
   * shares cls's word. weight .. phi_min are one block
   * (power_classes.c), hi and demand a pair (control_units_alike.h). */
  int cls;          /* power_class */
  uint32_t n;       /* GPUs in it */
  int64_t priority; /* within a class, higher served first (priority) */
  double weight;    /* useful work per GPU at full speed; 0: none */
  double c;         /* compute-bound share of its work, [0, 1] */
  double idle;      /* per-GPU power model P = idle + span a phi^gamma */
  double span;      /* the SM part of gpu.h */
  double activity;  /* a: what follows the clock (SM and memory) / span */
  double gamma;
  double phi_min;   /* the lowest clock share */
  double lo, hi;    /* per-GPU cap range, W */
  double demand;    /* per GPU, uncapped at its activity, W (>= 0) */
} power_unit;

_Static_assert(sizeof(power_unit) == 96, "a unit is 96 bytes");

/* What a policy remembers of one group's last allocation, to start the
 * next from: the efficiency policy's level (log mu), NaN for none. The
 * answer never depends on it, only the work of finding it. */
typedef struct power_memo {
  double level;
  /* The efficiency policy's water-filling of the units without measured
   * work: its lambda (power_fill_from's memo), 0 for none. */
  double fill;
  /* The last level found strictly inside the search's range (0 for
   * none yet): where the search starts when level is at an end of it
   * that no longer holds. */
  double inner;
  /* The search's arrays, kept from call to call so that a split neither
   * allocates nor zeroes them again; NULL until the first. The caller
   * frees them with power_memo_clear. */
  struct power_work *work;
} power_memo;

/* Frees what memo keeps beyond its level (its work arrays); the memo
 * stays usable. */
void power_memo_clear(power_memo *memo);

/* Whether the efficiency policy's split of n units from memo finds its
 * work arrays made (a split of as many units before made them): it then
 * reads of the units only each run's first (split_from's alike), where
 * without them it reads every unit. */
bool power_memo_ready(const power_memo *memo, size_t n);

/* Asks the memory for the lines the efficiency policy's next split from
 * memo probes at random (its class hash), a while before it: a split
 * comes once a period and finds them out of the caches. Changes nothing
 * but the timing; a memo without work arrays is left alone. */
void power_memo_ask(const power_memo *memo);

/* For tests: how many times the efficiency policy has summed its power
 * at a level (unit by unit or class by class), over every split so far. */
unsigned long power__level_evals(void);

/* For tests: how many times the efficiency policy has worked out a class
 * of units' clock at a level (its pow calls), over every split so far. */
unsigned long power__clock_evals(void);

/* For tests: the classes the memo's last split found (0: none yet). */
size_t power__memo_classes(const power_memo *memo);

/* For tests: how many splits put back the caps kept at their last fit
 * (a group of many classes); none while power__plain has
 * POWER_PLAIN_CAPS_KEPT (the caps worked out again at the answer). */
unsigned long power__caps_put_back(void);

/* For tests: the efficiency policy's shortcuts, each beside a plain path
 * that must give the same bits, left off while its bit is set in
 * power__plain (0, the default: every shortcut taken), so a test runs
 * both paths through one switch. */
enum {
  /* the caps kept at the last fit put back, not worked out again
   * (power_efficiency.c, good_kept_for) */
  POWER_PLAIN_CAPS_KEPT = 1u << 0,
  /* an idle unit's class from the last idle class met, not the class
   * hash (power_classes.c) */
  POWER_PLAIN_IDLE_CLASS = 1u << 1,
  /* the classes' clocks sixteen at a time, not one class at a time
   * (power_efficiency.c, chunk_at) */
  POWER_PLAIN_CLOCK_CHUNKS = 1u << 2,
};
extern unsigned power__plain;

typedef struct power_policy_ops {
  const char *name;
  /* Writes each unit's per-GPU cap to cap[u], within [lo, hi], with
   * sum n_u cap_u <= budget_w. budget_w >= sum n_u lo_u (the caller
   * guarantees it). */
  void (*split)(const power_unit *units, size_t n, double budget_w,
                double *cap);
  /* The same split starting from what memo remembers, which it updates;
   * NULL for a policy with nothing to remember. The caps are split's,
   * bit for bit. alike (NULL: none said) is what the caller knows of the
   * units' runs: alike[u] (u > 0; alike[0] is not read) nonzero says
   * unit u is alike unit u - 1 to the bit in every field but cls and
   * priority (power_alike_ok); 0 says nothing. The policy then takes
   * its runs from it instead of comparing the units: a run's units need
   * not be read. A mark left 0 between alike units costs work, never
   * bits; a nonzero one between units that differ gives wrong caps. The
   * efficiency policy with its work arrays made (power_memo_ready) reads
   * nothing of a marked unit but in its debug check (power_alike_ok):
   * control passes marked units it did not write (control_units.h's
   * lazy; with assertions on, it writes them). */
  void (*split_from)(const power_unit *units, size_t n, double budget_w,
                     double *cap, power_memo *memo, const uint8_t *alike);
} power_policy_ops;

/* The policies themselves, their enum and their names: power_policy.h. */

/* The efficiency policy from a memo (split_from's contract). */
void power_split_efficiency_from(const power_unit *units, size_t n,
                                 double budget_w, double *cap,
                                 power_memo *memo, const uint8_t *alike);

/* Whether units a and b are alike to the bit in every field but cls and
 * priority: what a nonzero alike mark vouches for (split_from). */
bool power_alike(const power_unit *a, const power_unit *b);

/* Whether every nonzero mark of alike[1 .. n) (NULL: none) holds of
 * units: a check for tests and debug builds, which reads every unit. */
bool power_alike_ok(const power_unit *units, size_t n, const uint8_t *alike);

/* How many units from u on (0 < u <= n) are each alike the one before
 * (power_alike): the runs of a split whose caller marks none. */
size_t power_alike_from(const power_unit *units, size_t u, size_t n);

/* Helpers the policies share (power.c). */

/* A function of one variable the policies solve for; it also writes its
 * derivative at x to *slope (0 where it is flat). */
typedef double (*power_fn)(const void *ctx, double x, double *slope);

/* The end on good's side of the two adjacent doubles between good and
 * bad (either order) where f crosses target, for f monotone between them
 * with f(good) <= target < f(bad). The crossing is unique, so the answer
 * is the one bisection to the bit gives, in a fraction of the
 * evaluations: Newton steps while each at least halves the step before
 * last (else bisection), then, once a step is within the rounding of f,
 * probes galloping across the crossing 1, 2, 4 ... doubles at a time. */
double power_boundary(power_fn f, const void *ctx, double target, double good,
                      double bad);

/* The same, searched from x, a point strictly between good and bad (a
 * guess: last period's answer). Neither end is evaluated: the answer is
 * power_boundary's where f(good) <= target < f(bad) holds; otherwise the
 * caller checks the end it may have hit (the result is good, or the
 * double next to bad). */
double power_boundary_from(power_fn f, const void *ctx, double target,
                           double good, double bad, double x);

/* The same crossing searched from x, a guess strictly between the ends
 * of the range [good_end, bad_end] (either order): a step past Newton's
 * estimate, growing fourfold until f crosses target, brackets it, and
 * power_boundary_from closes the bracket. f is monotone, so the answer is
 * power_boundary(f, ctx, target, good_end, bad_end)'s, bit for bit,
 * wherever f(bad_end) > target; where even bad_end fits, bad_end. Only
 * the work depends on x. */
double power_boundary_warm(power_fn f, const void *ctx, double target,
                           double good_end, double bad_end, double x);

/* What may close a bracket [good, bad] (either order) without the
 * search: the search's own answer there, bit for bit, or NaN (the search
 * goes on). The search asks it before each point it would try inside a
 * bracket, bad the last point f was evaluated at or good, and while it
 * walks from a bad point towards the range's good end, good that end
 * (not evaluated: where f is the same there as at bad, the answer). */
typedef double (*power_finish)(const void *ctx, double good, double bad);

/* power_boundary_warm asking fin (NULL: none) to close its brackets: the
 * same answer wherever fin gives the search's own. */
double power_boundary_warm_finish(power_fn f, power_finish fin,
                                  const void *ctx, double target,
                                  double good_end, double bad_end, double x);

/* power_boundary_warm with a first step short of Newton's estimate (at
 * least a few doubles) and steps growing twofold, for a start within a
 * few stairs of a staircase's crossing (a sum of long runs' roundings):
 * the same answer, bit for bit, in fewer evaluations there. */
double power_boundary_near(power_fn f, const void *ctx, double target,
                           double good_end, double bad_end, double x);

/* power_boundary_warm with a first step of Newton's estimate (at least
 * one double) and steps growing twofold, for a start a few doubles from
 * a crossing whose sum's roundings are fine (the efficiency policy's
 * large groups of a unit a run, level_close): the same answer, bit for
 * bit, in fewer evaluations there. */
double power_boundary_newton(power_fn f, const void *ctx, double target,
                             double good_end, double bad_end, double x);

/* Water-filling: caps cap_u = clamp(lambda x weight_u, lo_u, top_u) with
 * the lambda that spends budget_w (or every unit at top_u if the budget
 * is larger). Units with weight 0 get lo_u. */
void power_fill(const power_unit *units, size_t n, const double *weight,
                const double *top, double budget_w, double *cap);

/* The same caps, bit for bit, searched from *memo (last call's lambda;
 * 0 or NaN: none; negative: the last answer was 0, the one before it
 * -*memo), which it updates; memo NULL: power_fill. */
void power_fill_from(const power_unit *units, size_t n, const double *weight,
                     const double *top, double budget_w, double *cap,
                     double *memo);

/* Spreads what is left of budget_w after cap[] over the units' room up to
 * hi, in proportion to that room (never above hi). */
void power_spread_rest(const power_unit *units, size_t n, double budget_w,
                       double *cap);

/* sum n_u cap_u */
double power_total(const power_unit *units, size_t n, const double *cap);

/* s + t + t + ... (m times), added one at a time, to the bit: what
 * `for (i = 0; i < m; i++) s += t;` gives, at a cost per binade the sum
 * crosses rather than per term (inf, NaN and terms of the other sign are
 * added one at a time). An ordered sum over units that come in runs alike
 * to the bit adds a run at once with it. */
double power_add_repeat(double s, double t, size_t m);

/* Units in runs: run r is the len[r] units from first[r] on, alike to the
 * bit in every field a split reads, so that a policy works run by run and
 * gets each unit's cap, bit for bit, once for the run. first NULL: run r
 * is unit r; len NULL: one unit a run. */
typedef struct power_runs {
  size_t n; /* runs */
  const size_t *first, *len;
} power_runs;

/* Run r's first unit and its length. */
static inline const power_unit *power_run_unit(const power_unit *units,
                                               const power_runs *runs,
                                               size_t r) {
  return &units[runs->first != NULL ? runs->first[r] : r];
}

static inline size_t power_run_len(const power_runs *runs, size_t r) {
  return runs->len != NULL ? runs->len[r] : 1;
}

/* Each unit's value its run's: cap[first[r] ..] = rcap[r] for each of
 * runs' units (first and len not NULL), through AVX's 256-bit stores
 * where the CPU has it: the same doubles stored. */
void power_runs_out(const power_runs *runs, const double *rcap, double *cap);

/* s plus m terms t one at a time: power_add_repeat, or the loop itself
 * for a short run (cheaper than a binade's step). A run of one, the
 * common case (the fill's and the policy's sums, a term a unit), is the
 * one add without the loop's count. */
static inline double power_add_n(double s, double t, size_t m) {
  if (m == 1)
    return s + t;
  if (m > 8)
    return power_add_repeat(s, t, m);
  for (size_t i = 0; i < m; i++)
    s += t;
  return s;
}

/* Whether a budget is within a part in 10^6 of its units' floor (the sum
 * of their lo), as at the request level's peak under a demand-response
 * cut: the fill and the efficiency policy then take their held paths
 * (filled_kept, level.held), which pay only where the search's sums
 * differ in a term or two; elsewhere they cost more than they save.
 * Only the work depends on it, never the answer. */
static inline bool power_held_at_floor(double budget_w, double floor_w) {
  return budget_w <= floor_w * (1 + 1e-6);
}

/* power_fill_from over runs: weight[r], top[r] and cap[r] per run; its
 * caps are power_fill_from's on the units, bit for bit (its sums add
 * unit by unit in their order). */
void power_fill_runs(const power_unit *units, const power_runs *runs,
                     const double *weight, const double *top, double budget_w,
                     double *cap, double *memo);

/* For tests: the fill's brackets closed by its finish (the one term
 * that differs between a bracket's ends: power_fill.c), and a switch to
 * leave it off (the plain search's answer, bit for bit). */
unsigned long power__fill_finishes(void);
extern bool power__fill_finish_off;

/* power_spread_rest over runs: cap[r] per run, bit for bit the units'. */
void power_spread_rest_runs(const power_unit *units, const power_runs *runs,
                            double budget_w, double *cap);

/* The same, the caps' sum over runs (sum n_u cap_u, added unit by unit
 * in their order, as power_spread_rest_runs adds it) already known:
 * total, which the caller summed for its search. */
void power_spread_rest_summed(const power_unit *units, const power_runs *runs,
                              double budget_w, double *cap, double total);

#endif
