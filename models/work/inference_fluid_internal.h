/* inference_fluid_internal.h - what the two files of the fluid
 * granularity share: the state of a fluid service and the figures of one
 * span. inference_fluid.c brings a service up to now span by span and
 * books what each replica did; inference_fluid_solve.c solves one
 * replica over one span in closed form (the method is described at the
 * top of inference_fluid.c). */
#ifndef AIFSIM_INFERENCE_FLUID_INTERNAL_H
#define AIFSIM_INFERENCE_FLUID_INTERNAL_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inference_internal.h"
#include "lanes.h"

enum {
  NODES = 12, /* prompt-length nodes */
  WAITS = 4,  /* nodes of an exponential wait */
  MEMO = 8,   /* distinct replica states solved per span */
  PARTS = 2,  /* a span's saturated and stationary stretches */
  MAX_POINTS = PARTS * NODES * (1 + WAITS)
};

/* A length distribution: its moments and the lognormal fitted to them. */
typedef struct lengths {
  double mean, sq, mu, sigma;
} lengths;

/* inference_fluid_solve.c: the lognormal of moments mean and sq (its
 * mean and sq those bits); fit_to makes *l that, kept when it is that
 * already (a span's moments are mostly the last span's, the synthetic
 * kinds' every span: two logs and a root a fit, to the same bits). */
lengths inf__fit(double mean, double sq);
void inf__fit_to(lengths *l, double mean, double sq);

/* What one span brings each up replica. */
typedef struct span_load {
  double dt;
  double rate;  /* requests/s offered to each up replica */
  double p_one; /* share with a one-token output: no decode */
  lengths prompt;
  double node_n[NODES]; /* prompt lengths at the nodes */
  double work;          /* decode tokens per request: E[output] - 1 */
  double work_cv2;      /* their squared coefficient of variation */
  double ctx;           /* mean context of a decoding request */
  double held;          /* mean output a batch member holds at its end */
  uint32_t nup;
} span_load;

/* One replica's prefill at one clock. */
typedef struct prefill {
  double s0, s1, s2;  /* S(n) = s0 + s1 n + s2 n^2 */
  double mean, sq;    /* E[S], E[S^2] */
  gpu_load load;      /* time-weighted: E[S L(n)] / E[S] */
  double node[NODES]; /* S at the prompt nodes */
} prefill;

/* A decode step at one batch size, priced once per clock and context. */
typedef struct step_row {
  double t, g;    /* s; tokens/s: b / t */
  gpu_load act;   /* the step's load (roofline.h): the full clock's */
  double comp;    /* share a faster clock speeds up; after act.busy, so the
                     chain reads the two as one pair */
  double act_ctx; /* the context act is for (NaN: none); the clock's not */
  uint64_t gen;   /* the table's generation it was priced in */
  /* The batch's terms (rl_batch_of), whatever the clock and context:
   * kept across generations; key NaN: not yet. */
  rl_batch bat;
  /* Bounds on g at any clock, for context bnd_ctx (NaN: none): b / t at
   * the slowest clock and at full (inf__row_bounds). */
  double g_lo, g_hi, bnd_ctx;
} step_row;

/* A step row's load and compute share as the chain adds them: (act.sm,
 * act.mem) and (act.busy, comp), each pair read in one load. */
enum { AM_AT = offsetof(step_row, act), BC_AT = AM_AT + 2 * sizeof(double) };
_Static_assert(offsetof(gpu_load, busy) == 2 * sizeof(double) &&
                   offsetof(step_row, comp) == BC_AT + sizeof(double),
               "the chain reads act.busy and comp as a pair");

/* The pair of row r at byte at (AM_AT or BC_AT). */
static inline sim_d2 row_pair(const step_row *r, size_t at) {
  return sim_d2_at((const char *)r + at);
}

/* A stretch of a span in one regime, per replica: its time means and
 * the latency of the requests it serves. TTFT = shift + wait + S with
 * wait 0 or (with p_wait) exponential of mean wait_mean. */
typedef struct part {
  gpu_load load;
  double compute, batch, waiting;
  double ttft_mean, tpot_mean; /* tpot_mean: of decoding requests */
  double p_slo;                /* share of the served within both SLOs */
  double lost, shed;           /* shares timed out, rejected (queue full) */
  double shift, p_wait, wait_mean;
  double tpot_v[NODES], tpot_w[NODES]; /* TPOT points, weights sum to 1 */
  size_t ntpot;
} part;

/* One replica over one span. */
typedef struct outcome {
  gpu_load load; /* time means */
  double compute, batch;
  double waiting, in_batch, backlog; /* at the end */
  double served, timed_out, shed;    /* requests */
  double slo_met, ttft_sum, tpot_sum, tokens, prompt_tokens;
  size_t nttft, ntpot;
  double ttft_v[MAX_POINTS], ttft_w[MAX_POINTS];
  double tpot_v[PARTS * NODES], tpot_w[PARTS * NODES];
} outcome;

typedef struct memo {
  double phi, backlog;
  uint32_t hits;
  outcome out;
} memo;

/* A histogram of weighted values, on the request model's bins. */
typedef struct wt_hist {
  double bin[HIST_BINS];
  double under, n, min, max;
} wt_hist;

/* inf__hist_bin's bins by a double's top bits (sign, exponent and six
 * bits of mantissa: 64 stretches an octave, each narrower than 0.68 of
 * a bin, so each holds at most one edge): at[i] is the bin of the
 * smallest double of stretch WH_LO + i, the stretches below WH_LO
 * counted as WH_LO's and those above WH_HI (2^14 and up, the sign's,
 * inf's and NaN's) as WH_HI's. */
enum {
  WH_SHIFT = 46,
  WH_LO = (1023 - 20) << 6, /* 2^-20, under HIST_LO_S */
  WH_HI = (1023 + 14) << 6  /* 2^14, over the top edge */
};
typedef struct wh_bins {
  uint16_t at[WH_HI - WH_LO + 1];
} wh_bins;

/* inference_fluid_hist.c: t's stretches, each by inf__hist_bin. */
void inf__wh_bins_init(wh_bins *t);

/* inf__hist_bin(x), the same for every double: the stretch's bin, or
 * the next when x is at its edge or above (a load and a compare for
 * the quadratic guess's dozen instructions). */
static inline size_t inf__wh_bin(const wh_bins *t, double x) {
  uint64_t i = sim_bits(x) >> WH_SHIFT;
  i = i < WH_LO ? WH_LO : i;
  i = i > WH_HI ? WH_HI : i;
  size_t b = t->at[i - WH_LO];
  return b + (inf__hist_edge[b + 1] <= x);
}

/* inf__wh_bin(x) for x from 2^-20 up (HIST_LO_S is above it), NaN or
 * negative: one clamp, the stretches below WH_LO being none of these
 * (the book's points, tested against HIST_LO_S first). */
static inline size_t inf__wh_bin_above(const wh_bins *t, double x) {
  uint64_t i = sim_bits(x) >> WH_SHIFT;
  i = i < WH_HI ? i : WH_HI;
  size_t b = t->at[i - WH_LO];
  return b + (inf__hist_edge[b + 1] <= x);
}

/* A replica's state: all that tells one replica from another (down: 0
 * or 1; phi: the clock of the span last run). Replicas whose states are
 * equal bit for bit do the same from then on, so they are kept as one
 * group (inference_fluid_groups.c). */
typedef struct fstate {
  double phi, down;
  double backlog;           /* the fluid queue, requests */
  double waiting, in_batch; /* at the last span's end */
  gpu_load act_int, last_act;
  double comp_int, act_since, comp_mean;
} fstate;

/* Replicas in one state, n of them. Those whose load was taken at
 * take_at (their took) are in st but for the take: last_act t_last,
 * comp_mean t_comp, the integrals 0 since take_at (NaN: none taken). */
typedef struct fgrp {
  fstate st;
  double take_at;
  gpu_load t_last;
  double t_comp;
  uint32_t n;
  bool spare; /* its state did not fit the span's memo */
} fgrp;

/* What the current sampling interval has seen. */
typedef struct fl_interval {
  double arrivals, served, missed, slo_met, tokens, batch_s;
} fl_interval;

/* A stretch of consecutive replicas of one group: from k0 to the next
 * run's k0 (the last's: to nrep). */
typedef struct frun {
  uint32_t k0, g;
} frun;

struct inf_fluid {
  /* Replica k is in group grp[of[k]] of ngrp (in the order of their
   * first replicas after a regroup), runs the next span at phi[k] and
   * had its load last taken at took[k] (inf__took_at: but those of
   * [tr_lo, tr_hi), taken at tr_at, whose took is not written). nxt:
   * the next groups, built. */
  fgrp *grp, *nxt;
  uint32_t *of;
  double *phi, *took;
  uint32_t ngrp;
  uint32_t tr_lo, tr_hi;
  double tr_at;
  /* The last instant's range less the new one's first take, while the
   * takes at the new instant go up from its start (a chunk at a time):
   * their took at pd_at, not yet written (inf__took_settle writes it). */
  uint32_t pd_lo, pd_hi;
  double pd_at;
  /* The replicas' groups as runs (nrun of them, of[] the same), while
   * runs_ok: a regroup makes them (into nxt_run), a replica put alone
   * undoes them. run_at: the run last found (calls go up the replicas). */
  frun *run, *nxt_run;
  uint32_t nrun, run_at;
  bool runs_ok;
  bool alone;       /* each replica in a group of its own, always (tests) */
  sim_time clock_t; /* the engine time last brought up to */
  double clock_s;
  lengths prompt, output; /* the last span's, kept through empty ones */
  /* The prompt nodes and a prefill priced for them, kept while the
   * lengths and the clock stay (every span, for the synthetic kinds). */
  lengths node_for, pre_for;
  double node_n[NODES];
  double pre_phi;
  prefill pre;
  /* Decode steps priced at (tab_phi, tab_ctx), by batch size; a row of
   * a generation other than tab_gen: not yet. */
  step_row *tab;
  size_t tab_cap;
  uint64_t tab_gen;
  double tab_phi, tab_ctx;
  /* The table's clock terms (rl_clock_of at tab_phi), made with its
   * generation, and the full clock's (key 1; 0: not yet) and the slowest
   * one's (made with full). ctx_steady: tab_ctx was the generation
   * before's too (a row's rate bounds, made once a context, pay). */
  rl_clock tab_at, full, slow;
  bool ctx_steady;
  double *tok_b; /* scratch: token weight by batch size */
  size_t tok_cap;
  size_t tok_lo, tok_hi; /* where tok_b may not be 0 */
  double *frac; /* frac[i] = (double)i / frac_rr, the chain's (frac_for) */
  size_t frac_cap;
  uint32_t frac_rr;
  memo memo[MEMO];
  uint32_t nmemo, last_memo; /* last_memo: the entry last found */
  uint32_t nup;              /* replicas not down */
  double inv_for, inv;       /* a span and 1 / span (fl_take_load) */
  outcome spare;             /* a solve that did not fit the memo */
  double wait_ln[WAITS];     /* inf__fluid_waits */
  /* The run's flows, in requests (fractions: expectations). */
  double arrived, rejected, timed_out, dropped, served, slo_met;
  double tokens, prompt_tokens, ttft_sum, tpot_sum;
  fl_interval iv;
  wt_hist ttft_iv, tpot_iv, ttft_run, tpot_run;
  wh_bins bins;
};

/* inference_fluid_solve.c: prices row b of the step table at the
 * table's clock (out of line: a row is priced once a generation). */
const step_row *inf__price_step(inf_service *s, uint32_t b);

/* inference_fluid_chain.c: row b's bounds on its rate g at any clock,
 * for the table's context: b / t at full clock and at the slowest (the
 * clock speeds up every part of a step, gpu_speed_compute and
 * gpu_speed_memory rising with it, so t at any clock lies between). */
void inf__row_bounds(inf_service *s, uint32_t b);

/* The bounds' margin: t's few roundings at each clock are some 1e-15 of
 * it, so a rate beyond a bound by this much is beyond it in the
 * doubles too. */
#define INF_BOUND_EPS 1e-9

/* Row b of the step table, priced if not yet this generation: the
 * chain reads a row a few times for each of its hundreds of states, so
 * the check is inline. */
static inline const step_row *inf__step_at(inf_service *s, uint32_t b) {
  const step_row *row = &s->fluid->tab[b];
  return row->gen != s->fluid->tab_gen ? inf__price_step(s, b) : row;
}

/* Tokens per second of a replica decoding a batch of b (b / t, kept in
 * the row). */
static inline double inf__rate_at(inf_service *s, uint32_t b) {
  return b == 0 ? 0 : inf__step_at(s, b)->g;
}

/* Running sums over the chain's states, unnormalised; am: the load's
 * (sm, mem), bc: (the load's busy, the compute share). */
typedef struct chain {
  double z, busy, members, tokens, waiting, full, block, tpot_ok;
  sim_d2 am, bc;
} chain;

/* inference_fluid_chain.c: adds the stationary chain of a replica's
 * decoding requests (rr replicas, rho tokens/s asked of each, batches of
 * at most bcap, steps within tpot_lim counted) to *c, with the token
 * weights by batch size in the service's tok_b. The step table and
 * frac_for's table must be the solve's. */
void inf__sum_chain(inf_service *s, double rho, uint32_t rr, uint32_t bcap,
                    double tpot_lim, chain *c);

/* inference_fluid_solve.c: the prompt lengths at the nodes of the
 * prompt distribution (the middles of its probability bins), and replica
 * state (phi, q0) over the span l into *o: SIM_OK or SIM_ENOMEM (the
 * step table could not grow). */
void inf__fluid_nodes(const lengths *prompt, double node_n[NODES]);
/* log(1 - u) at the middles u of the wait's probability bins: constants,
 * worked out once per service (a TTFT point each, every solve). */
void inf__fluid_waits(double wait_ln[WAITS]);
int inf__fluid_solve(inf_service *s, const span_load *l, double phi, double q0,
                     outcome *o);

/* inference_fluid_hist.c: adds points (v[i], hits x w[i]), i < n, to two
 * histograms at once (an interval's and the run's: a and b distinct),
 * the same bits as adding each point with weight above 0 to each in
 * turn. */
void inf__wh_add_points(wt_hist *a, wt_hist *b, const wh_bins *t,
                        const double *v, const double *w, size_t n,
                        double hits);
/* inf__wh_add_points for points in runs of one value (a span's TPOT
 * points, often all one step's): a run's adds to its bin in registers,
 * stored once; the same bits. */
void inf__wh_add_runs(wt_hist *a, wt_hist *b, const wh_bins *t, const double *v,
                      const double *w, size_t n, double hits);

/* inference_fluid_hist.c: a quantile scan's place: bin b next, seen the
 * weight below it. scan starts one at h's lowest bin that can hold
 * weight (the min's: bins below it are +0, and adding +0 leaves the
 * sum's bits); quantile q by the cumulative weight, log-interpolated
 * inside a bin (NaN when h is empty or q is outside [0, 1]), going on
 * from *at and leaving it at q's bin, so a higher quantile may go on
 * from there: the adds before it are the same. */
typedef struct wh_scan {
  size_t b;
  double seen;
} wh_scan;
wh_scan inf__wh_scan(const wh_bins *t, const wt_hist *h);
double inf__wh_quantile(const wt_hist *h, double q, wh_scan *at);

/* inference_fluid_groups.c: the groups of replicas in one state. start
 * puts every replica in one group at state st (SIM_OK or SIM_ENOMEM).
 * regroup, at the start of a span, puts the replicas in groups of their
 * states now (their clocks and takes applied), in the order of their
 * first replicas. state is replica k's state; alone moves it to a group
 * of its own at state st. */
int inf__groups_start(const sim_allocator *a, inf_fluid *f, uint32_t nrep,
                      const fstate *st);
void inf__groups_free(const sim_allocator *a, inf_fluid *f);
void inf__groups_regroup(inf_fluid *f, uint32_t nrep);
fstate inf__rep_state(const inf_fluid *f, uint32_t k);
void inf__rep_alone(inf_fluid *f, uint32_t k, const fstate *st);
/* Puts each replica of a service just started in a group of its own
 * for good: the replica-by-replica computation the groups must equal,
 * bit for bit (tests/work/test_inference_fluid_groups.c). */
void inf__groups_alone(inf_fluid *f, uint32_t nrep);

/* Replica k's group. */
static inline fgrp *inf__grp(const inf_fluid *f, uint32_t k) {
  return &f->grp[f->of[k]];
}

/* When replica k's load was last taken. */
static inline double inf__took_at(const inf_fluid *f, uint32_t k) {
  assert(f->pd_lo >= f->pd_hi); /* settled */
  return k - f->tr_lo < f->tr_hi - f->tr_lo ? f->tr_at : f->took[k];
}

/* Whether replica k's load was taken at its group's take. */
static inline bool inf__took(const inf_fluid *f, uint32_t k) {
  return inf__took_at(f, k) == f->grp[f->of[k]].take_at;
}

/* The run holding replica k (runs_ok), found from the last one. */
static inline uint32_t inf__run_of(inf_fluid *f, uint32_t k) {
  uint32_t i = f->run[f->run_at].k0 <= k ? f->run_at : 0;
  while (i + 1 < f->nrun && f->run[i + 1].k0 <= k)
    i++;
  f->run_at = i;
  return i;
}

/* Where run i ends (nrep: the last). */
static inline uint32_t inf__run_end(const inf_fluid *f, uint32_t i,
                                    uint32_t nrep) {
  return i + 1 < f->nrun ? f->run[i + 1].k0 : nrep;
}

/* inference_fluid_groups.c: replicas [lo, hi) taken at now; the took of
 * the last range's others written out. */
void inf__took_range(inf_fluid *f, uint32_t lo, uint32_t hi, double now);

/* inference_fluid_groups.c: the took held back by inf__took_range
 * written (before any reader of took). */
void inf__took_settle(inf_fluid *f);

/* inference_fluid_groups.c: out[i .. e) = l (a group's load to a
 * stretch of its members), eight loads a loop: 24 doubles in four-lane
 * stores where the CPU has AVX2, two-lane ones else (a loop's compare
 * and branch a value were most of its cost). */
void inf__fill_loads(gpu_load *out, uint32_t i, uint32_t e, gpu_load l);

/* inference_fluid_groups.c: out[i .. e) = v (a group's compute share to
 * a stretch of its members), sixteen a loop: two 64-byte stores where the
 * CPU has AVX-512, eight two-lane ones else. */
void inf__fill_shares(double *out, uint32_t i, uint32_t e, double v);

#endif
