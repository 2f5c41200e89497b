/* roofline.c - the roofline step model of one replica; the equations and
 * the sources of the defaults are in roofline.h. */
#include "roofline.h"

#include <math.h>

#include "vec.h"

void rl_config_default(rl_config *cfg) {
  cfg->eff_bw = 0.8;
  cfg->eff_flops = 0.6;
  cfg->mem_utilization = 0.9;
  cfg->act_fixed = 0.42;
  cfg->link_bps = 450e9;
  cfg->link_latency_s = 10e-6;
  cfg->seq_overhead_s = 0;
  cfg->moe_layer_overhead_s = 0;
  cfg->step_overhead_s = 0;
  cfg->kv_reserve = 1;
  cfg->beams = 1;
}

void rl_config_engine(rl_config *cfg, const llm_engine *e) {
  cfg->eff_bw = e->eff_bw;
  cfg->eff_flops = e->eff_flops;
  cfg->act_fixed = e->act_fixed;
  cfg->seq_overhead_s = e->seq_overhead_s;
  cfg->moe_layer_overhead_s = e->moe_layer_overhead_s;
  cfg->step_overhead_s = e->step_overhead_s;
  cfg->kv_reserve = e->kv_reserve;
}

int rl_replica_init(rl_replica *r, const gpu_spec *g, const llm_model *m,
                    const llm_precision *w, const llm_engine *e, int tp,
                    sim_error *err) {
  r->gpu = g;
  r->model = m;
  r->weights = w;
  r->kv = NULL;
  r->tp = tp;
  r->ep = 1;
  r->ep_table = NULL;
  rl_config_default(&r->cfg);
  if (e == NULL)
    return sim_error_set(err, SIM_EINPUT,
                         "%s on %s: no serving engine (none named %s)", m->name,
                         g->name, LLM_ENGINE_DEFAULT);
  rl_config_engine(&r->cfg, e);
  return rl_check(r, err);
}

double rl_kv_tokens(const rl_replica *r, double prompt, double held) {
  return prompt + r->cfg.beams * held;
}

double rl_memory_budget(const rl_replica *r) {
  return r->cfg.mem_utilization * r->gpu->memory_bytes;
}

static bool share_ok(double x) { return x > 0 && x <= 1; }

/* Expert parallelism: an MoE's experts split whole over all tp GPUs. */
static int check_ep(const rl_replica *r, sim_error *err) {
  const llm_model *m = r->model;
  if (r->ep == 0 || r->ep == 1)
    return SIM_OK;
  if (m->experts == 0)
    return sim_error_set(err, SIM_EINPUT,
                         "expert parallelism ep %d for %s: a dense model has "
                         "no experts to split",
                         r->ep, m->name);
  if (r->ep != r->tp || m->experts % r->ep != 0)
    return sim_error_set(err, SIM_EINPUT,
                         "expert parallelism ep %d for %s on %d GPUs: ep must "
                         "equal tp and divide its %lld experts",
                         r->ep, m->name, r->tp, (long long)m->experts);
  return SIM_OK;
}

/* The replica's configuration: degrees, shares and costs in range. */
static int check_config(const rl_replica *r, sim_error *err) {
  const rl_config *c = &r->cfg;
  if (r->tp < 1)
    return sim_error_set(err, SIM_EINPUT,
                         "tensor-parallel degree %d for %s on %s: must be >= 1",
                         r->tp, r->model->name, r->gpu->name);
  if (!share_ok(c->eff_bw) || !share_ok(c->eff_flops) ||
      !share_ok(c->mem_utilization) ||
      !(c->act_fixed >= 0 && c->act_fixed <= 1))
    return sim_error_set(err, SIM_EINPUT,
                         "efficiencies and memory utilisation must be in (0, "
                         "1], the fixed costs' activity in [0, 1]: %g, %g, "
                         "%g, %g",
                         c->eff_bw, c->eff_flops, c->mem_utilization,
                         c->act_fixed);
  if (!(c->beams >= 1))
    return sim_error_set(err, SIM_EINPUT,
                         "beams per request %g for %s: must be >= 1", c->beams,
                         r->model->name);
  if (r->tp > 1 && !(c->link_bps > 0 && c->link_latency_s >= 0))
    return sim_error_set(err, SIM_EINPUT,
                         "all-reduce link: bandwidth must be > 0 and latency "
                         ">= 0 (%g B/s, %g s)",
                         c->link_bps, c->link_latency_s);
  if (!(c->seq_overhead_s >= 0 && c->moe_layer_overhead_s >= 0 &&
        c->step_overhead_s >= 0))
    return sim_error_set(err, SIM_EINPUT,
                         "per-sequence, per-MoE-layer and per-step costs must "
                         "be >= 0 (%g s, %g s, %g s)",
                         c->seq_overhead_s, c->moe_layer_overhead_s,
                         c->step_overhead_s);
  return SIM_OK;
}

int rl_check(const rl_replica *r, sim_error *err) {
  int rc = check_config(r, err);
  if (rc == SIM_OK)
    rc = check_ep(r, err);
  if (rc == SIM_OK)
    rc = llm_check_precision(r->gpu, r->weights, err);
  if (rc != SIM_OK)
    return rc;
  double per_gpu = llm_weight_bytes(r->model, r->weights) / r->tp;
  double budget = rl_memory_budget(r);
  if (per_gpu > budget)
    return sim_error_set(
        err, SIM_EINPUT,
        "%s at %s does not fit %d x %s: weights %.1f GB per GPU (%.1f GB / "
        "%d), memory for weights and KV %.1f GB (%.2f of %.1f GB)",
        r->model->name, r->weights->name, r->tp, r->gpu->name, per_gpu / 1e9,
        llm_weight_bytes(r->model, r->weights) / 1e9, r->tp, budget / 1e9,
        r->cfg.mem_utilization, r->gpu->memory_bytes / 1e9);
  return SIM_OK;
}

int rl_max_batch_tokens(const rl_replica *r, double *tokens, sim_error *err) {
  *tokens = 0;
  int rc = rl_check(r, err);
  if (rc != SIM_OK)
    return rc;
  double free_b =
      rl_memory_budget(r) - llm_weight_bytes(r->model, r->weights) / r->tp;
  *tokens = floor(free_b / (llm_kv_bytes_per_token(r->model, r->kv) / r->tp));
  return SIM_OK;
}

static double clamp_phi(const rl_replica *r, double phi) {
  double lo = gpu_phi_min(r->gpu);
  return phi < lo ? lo : phi > 1 ? 1 : phi;
}

/* Width of the attention, d_attn = heads x head_dim (= hidden for Llama). */
static double d_attn(const llm_model *m) {
  return (double)(m->attention_heads * m->head_dim);
}

/* The replica's compute rate at compute speed s_c, FLOP/s. */
static double rate_at_speed(const rl_replica *r, double s_c) {
  return r->tp * gpu_peak_flops(r->gpu, r->weights->compute) *
         r->cfg.eff_flops * s_c;
}

/* The replica's compute rate at phi, FLOP/s. */
static double flop_rate(const rl_replica *r, double phi) {
  return rate_at_speed(r, gpu_speed_compute(r->gpu, phi));
}

/* One ring all-reduce of tokens x hidden 16-bit activations. */
static double ring_s(const rl_replica *r, double tokens) {
  double msg = tokens * (double)r->model->hidden_size * 2;
  return r->cfg.link_latency_s +
         2.0 * (r->tp - 1) / r->tp * msg / r->cfg.link_bps;
}

/* One all-to-all (dispatch or combine) of an MoE layer under ep: each GPU
 * sends its tokens / ep tokens' hidden states to k experts, (ep-1)/ep of
 * them to other GPUs. */
static double all_to_all_s(const rl_replica *r, double tokens) {
  const llm_model *m = r->model;
  double ep = r->ep;
  double bytes = tokens / ep * (double)m->experts_per_token *
                 (double)m->hidden_size * 2 * (ep - 1) / ep;
  return r->cfg.link_latency_s + bytes / r->cfg.link_bps;
}

/* The step's communication: two all-reduces per layer (tensor
 * parallelism); under ep, an MoE layer's second one is replaced by the
 * dispatch and combine all-to-alls (roofline.h, t_ep). */
static double allreduce_s(const rl_replica *r, double tokens) {
  if (r->tp <= 1)
    return 0;
  double layers = (double)r->model->layers;
  if (r->ep <= 1)
    return 2.0 * layers * ring_s(r, tokens);
  double moe = (double)r->model->moe_layers;
  return (2.0 * layers - moe) * ring_s(r, tokens) +
         2.0 * moe * all_to_all_s(r, tokens);
}

/* The fixed costs at full clock: the host's per-sequence and per-step
 * gaps and the MoE layers' fixed kernels. */
static double fixed_work_s(const rl_replica *r, double batch) {
  const rl_config *c = &r->cfg;
  return batch * c->seq_overhead_s +
         (double)r->model->moe_layers * c->moe_layer_overhead_s +
         c->step_overhead_s;
}

/* Expected distinct routed experts the batch touches on the busiest of
 * the ep GPUs in one MoE layer, ep > 1. Each GPU holds n = E / ep whole
 * experts; each expert is touched with q = D(B) / E (llm_expected_experts),
 * and a GPU's count is taken as Binomial(n, q), the GPUs independent. The
 * expected maximum of ep of them is sum_{x=0}^{n-1} (1 - F(x)^ep) (the
 * maximum's tail sum): at batch 8 of Maverick, k 1 of 128 experts on 8
 * GPUs, 2.47 against a mean of 0.97. Against a Monte Carlo of the
 * occupancy itself (1,500 batches each) it is within 1% for k 1 and 8 of
 * 128 experts on 4 and 8 GPUs at batches 2-256 and within 4% for 16
 * experts on 8; at batch 1 the independence loses the certainty that one
 * GPU holds ceil(k / ep) of the token's experts, which is the floor. The
 * pmf runs in logs from x = 0 so that no term underflows. */
static double busiest_gpu_experts(const rl_replica *r, double batch) {
  const llm_model *m = r->model;
  double n = (double)(m->experts / r->ep);
  double q = llm_expected_experts(m, batch < 1 ? 1 : batch) / m->experts;
  if (!(q < 1))
    return n;
  double logpmf = n * log1p(-q), odds = log(q) - log1p(-q);
  double cdf = 0, sum = 0;
  for (double x = 0; x < n; x++) {
    cdf = fmin(1, cdf + exp(logpmf));
    sum += 1 - pow(cdf, r->ep);
    logpmf += log((n - x) / (x + 1)) + odds;
  }
  return fmax(sum, ceil((double)m->experts_per_token / r->ep));
}

/* Batches past this are summed each time (no decode batch comes near). */
#define EP_TABLE_MAX 65536

void rl_ep_table_free(rl_ep_table *t) {
  if (t == NULL)
    return;
  sim_free(t->alloc, t->v);
  t->v = NULL;
  t->n = 0;
}

/* busiest_gpu_experts through r's table, for a whole batch: the same
 * value, bit for bit, summed once per batch. */
static double busiest_experts(const rl_replica *r, double batch) {
  rl_ep_table *t = r->ep_table;
  if (t == NULL || !(batch >= 0 && batch < EP_TABLE_MAX) ||
      batch != floor(batch))
    return busiest_gpu_experts(r, batch);
  size_t b = (size_t)batch;
  if (b >= t->n) {
    size_t cap = t->n;
    if (sim_vec_reserve(t->alloc, &t->v, &cap, b + 1, sizeof *t->v) != SIM_OK)
      return busiest_gpu_experts(r, batch);
    for (size_t i = t->n; i < cap; i++)
      t->v[i] = NAN;
    t->n = cap;
  }
  if (isnan(t->v[b]))
    t->v[b] = busiest_gpu_experts(r, batch);
  return t->v[b];
}

/* The weight bytes of the step's critical path, as a replica total (tp x
 * the busiest GPU's). Under ep a layer's combine all-to-all waits for the
 * GPU whose experts the batch touched most, so the step streams that
 * GPU's share, D_max(B) experts a layer, not the mean D(B) / ep, and the
 * other GPUs wait in the collective (expert load imbalance under expert
 * parallelism: Huang et al., "Towards MoE Deployment: Mitigating
 * Inefficiencies in Mixture-of-Expert (MoE) Inference", arXiv:2303.06182,
 * 2023; MoEShard, "Accelerating MoE Model Inference with Expert
 * Sharding", arXiv:2503.08467, 2025: imbalanced expert assignments leave
 * GPUs idle). The mean, weights, is what the HBMs carry (the power). */
static double critical_weight_bytes(const rl_replica *r, double batch,
                                    double weights) {
  const llm_model *m = r->model;
  if (r->ep <= 1 || m->experts == 0)
    return weights;
  double mean = llm_expected_experts(m, batch < 1 ? 1 : batch) / r->ep;
  double excess = busiest_experts(r, batch) - mean;
  return weights + r->tp * excess * m->expert_parameters *
                       (double)m->moe_layers * r->weights->bits_per_weight /
                       8;
}

/* The share of the achievable bandwidth the weights stream at: the
 * engine's, or less where the format's GEMMs cannot reach it (block-scaled
 * FP8's, llm_precision.weight_stream; roofline.h, t_dequant). */
static double weight_bw_share(const rl_replica *r) {
  return rl_fmin(r->cfg.eff_bw, r->weights->weight_stream);
}

/* The SM time the weights' GEMMs spend beyond the engine's stream (t_w0,
 * the weights at eff_bw), where the tensor pipes are not already counted
 * busy (t_gemm): 0 unless the format caps the stream. */
static double dequant_s(const rl_step *s, double t_w0) {
  double beyond = s->t_weights - t_w0;
  if (!(beyond > 0))
    return 0;
  return rl_fmin(beyond, rl_fmax(0, s->t_weights - s->t_gemm));
}

/* What a decode step does, whatever the clock: the bytes it moves and
 * the FLOPs it computes, its all-reduces' time and its fixed costs at
 * full clock. A step at phi < 1 is priced twice (at phi and, for its
 * load, at full clock): this part once. */
typedef struct step_work {
  double bytes, crit, kv; /* all, the critical path's weights, the KV's */
  double gemm, attn;      /* FLOPs */
  double t_tp, fixed;     /* s */
} step_work;

void rl_batch_of(const rl_replica *r, double requests, rl_batch *b) {
  const llm_model *m = r->model;
  double batch = requests * r->cfg.beams; /* the sequences it decodes */
  b->key = requests;
  b->batch = batch;
  b->weights = llm_decode_weight_bytes(m, r->weights, batch);
  b->crit = critical_weight_bytes(r, batch, b->weights);
  b->gemm = batch * llm_flops_per_token(m);
  b->kv_token = llm_kv_bytes_per_token(m, r->kv);
  b->attn_token = batch * 4.0 * (double)m->layers * d_attn(m);
  b->t_tp = allreduce_s(r, batch);
  b->fixed = fixed_work_s(r, batch);
}

/* The step's work at a context: the products in the order they were
 * always taken, so the same bits whether b is fresh or kept. */
static void step_work_at(const rl_batch *b, double context, step_work *w) {
  w->kv = b->batch * context * b->kv_token;
  w->crit = b->crit;
  w->bytes = b->weights + w->kv;
  w->gemm = b->gemm;
  w->attn = b->attn_token * context;
  w->t_tp = b->t_tp;
  w->fixed = b->fixed;
}

static void step_work_of(const rl_replica *r, double requests, double context,
                         step_work *w) {
  rl_batch b;
  rl_batch_of(r, requests, &b);
  step_work_at(&b, context, w);
}

void rl_clock_of(const rl_replica *r, double phi, rl_clock *c) {
  const rl_config *cfg = &r->cfg;
  c->key = phi;
  c->phi = clamp_phi(r, phi);
  /* eff_bw is a share of what the GPU's HBM can stream (achievable_bps,
   * a published microbenchmark's), so that it is the engine's and not the
   * family's: B200 reaches a lower share of its datasheet than H100. */
  double bw = r->tp * r->gpu->achievable_bps * gpu_speed_memory(r->gpu, c->phi);
  c->bw_weights = bw * weight_bw_share(r);
  c->bw_engine = bw * cfg->eff_bw;
  /* flop_rate's, the speed asked for once: the fixed costs read it too */
  double s_c = gpu_speed_compute(r->gpu, c->phi);
  c->rate = rate_at_speed(r, s_c);
  /* The fixed costs (fixed_work_s) at phi are t x this: the share
   * act_fixed of them is the engine's small kernels on the SMs,
   * latency-bound, so counted in SM cycles and stretched as 1 / s_c(phi);
   * the rest is the host's gaps between them, off the GPU's clock
   * (roofline.h, t_fixed). */
  c->fixed = 1 - cfg->act_fixed + cfg->act_fixed / s_c;
}

/* The step's parts and time at clock k (the header comment); no load. */
static void step_parts(const step_work *w, const rl_clock *k, rl_step *out) {
  double rate = k->rate;
  out->bytes = w->bytes;
  out->t_weights = w->crit / k->bw_weights;
  out->t_kv = w->kv / k->bw_engine;
  out->t_gemm = w->gemm / rate;
  out->t_dequant = dequant_s(out, w->crit / k->bw_engine);
  out->t_attn = w->attn / rate;
  out->flops = (out->t_gemm + out->t_attn) * rate;
  out->t_mem = out->t_weights + out->t_kv;
  out->t_comp = out->t_gemm + out->t_attn;
  out->t_tp = w->t_tp;
  out->t_fixed = w->fixed * k->fixed;
  out->t = rl_fmax(out->t_weights, out->t_gemm) +
           rl_fmax(out->t_kv, out->t_attn) + out->t_tp + out->t_fixed;
}

/* The load of a step priced at full clock (the header comment). */
static gpu_load step_load(const rl_replica *r, const rl_step *s) {
  double bw = r->tp * r->gpu->bandwidth_bps;
  double sm = (s->t_comp + s->t_dequant + r->cfg.act_fixed * s->t_fixed) / s->t;
  double busy = 1 - (1 - r->cfg.act_fixed) * s->t_fixed / s->t;
  return (gpu_load){rl_fmin(1, sm), rl_fmin(1, s->bytes / (bw * s->t)), busy};
}

/* The step from its work: its parts at clock at, its load at full. */
static void step_from(const rl_replica *r, const step_work *w,
                      const rl_clock *at, const rl_clock *full, rl_step *out) {
  step_parts(w, at, out);
  if (at->phi == 1) {
    out->load = step_load(r, out);
    return;
  }
  rl_step s1;
  step_parts(w, full, &s1);
  out->load = step_load(r, &s1);
}

void rl_decode_step_at(const rl_replica *r, double batch, double context,
                       const rl_clock *at, const rl_clock *full, rl_step *out) {
  step_work w;
  step_work_of(r, batch, context, &w);
  step_from(r, &w, at, full, out);
}

void rl_decode_step_batch(const rl_replica *r, const rl_batch *b,
                          double context, const rl_clock *at,
                          const rl_clock *full, rl_step *out) {
  step_work w;
  step_work_at(b, context, &w);
  step_from(r, &w, at, full, out);
}

double rl_decode_step_batch_s(const rl_batch *b, double context,
                              const rl_clock *at) {
  step_work w;
  rl_step st;
  step_work_at(b, context, &w);
  step_parts(&w, at, &st);
  return st.t;
}

void rl_batch_full_of(const rl_replica *r, double requests,
                      const rl_clock *full, rl_batch_full *f) {
  step_work w;
  rl_step s;
  rl_batch_of(r, requests, &f->b);
  /* step_parts' context-free terms are those of a context of 0 */
  step_work_at(&f->b, 0, &w);
  step_parts(&w, full, &s);
  f->tw = s.t_weights;
  f->tg = s.t_gemm;
  f->twg = rl_fmax(s.t_weights, s.t_gemm);
  f->tdq = s.t_dequant;
  f->tf = s.t_fixed;
  f->sm_fixed = r->cfg.act_fixed * s.t_fixed;
  f->idle_fixed = (1 - r->cfg.act_fixed) * s.t_fixed;
  f->bw = r->tp * r->gpu->bandwidth_bps;
}

/* The step at full clock from f and its context's KV bytes and attention
 * FLOPs: step_parts' and step_load's operations, in their order. */
static void price_full(const rl_batch_full *f, double kv, double attn,
                       const rl_clock *full, rl_price *p) {
  double t_kv = kv / full->bw_engine, t_attn = attn / full->rate;
  p->t_comp = f->tg + t_attn;
  p->t_mem = f->tw + t_kv;
  p->t = f->twg + rl_fmax(t_kv, t_attn) + f->b.t_tp + f->tf;
  double sm = (p->t_comp + f->tdq + f->sm_fixed) / p->t;
  p->load = (gpu_load){rl_fmin(1, sm),
                       rl_fmin(1, (f->b.weights + kv) / (f->bw * p->t)),
                       1 - f->idle_fixed / p->t};
}

/* The step's times at a clock below full (step_parts' operations). */
static double price_at(const rl_batch *b, double kv, double attn,
                       const rl_clock *at, double *t_comp, double *t_mem) {
  double tw = b->crit / at->bw_weights, t_kv = kv / at->bw_engine;
  double tg = b->gemm / at->rate, ta = attn / at->rate;
  *t_comp = tg + ta;
  *t_mem = tw + t_kv;
  return rl_fmax(tw, tg) + rl_fmax(t_kv, ta) + b->t_tp + b->fixed * at->fixed;
}

/* At phi 1 the clock's terms are full's (rl_clock_of works them out from
 * the clamped phi alone), so the full step is the step. */
void rl_decode_price(const rl_batch_full *f, double context, const rl_clock *at,
                     const rl_clock *full, rl_price *out) {
  const rl_batch *b = &f->b;
  double kv = b->batch * context * b->kv_token, attn = b->attn_token * context;
  price_full(f, kv, attn, full, out);
  if (at->phi != 1)
    out->t = price_at(b, kv, attn, at, &out->t_comp, &out->t_mem);
}

double rl_decode_price_s(const rl_batch_full *f, double context,
                         const rl_clock *at, const rl_clock *full) {
  const rl_batch *b = &f->b;
  double kv = b->batch * context * b->kv_token, attn = b->attn_token * context;
  double t_comp, t_mem;
  if (at->phi != 1)
    return price_at(b, kv, attn, at, &t_comp, &t_mem);
  return f->twg + rl_fmax(kv / full->bw_engine, attn / full->rate) + b->t_tp +
         f->tf;
}

void rl_decode_step(const rl_replica *r, double batch, double context,
                    double phi, rl_step *out) {
  rl_clock at, full;
  rl_clock_of(r, phi, &at);
  if (at.phi != 1)
    rl_clock_of(r, 1, &full);
  rl_decode_step_at(r, batch, context, &at, &full, out);
}

void rl_decode_step_parts(const rl_replica *r, double batch, double context,
                          double phi, rl_step *out) {
  step_work w;
  rl_clock at;
  step_work_of(r, batch, context, &w);
  rl_clock_of(r, phi, &at);
  step_parts(&w, &at, out);
}

double rl_decode_step_s(const rl_replica *r, double batch, double context,
                        double phi) {
  rl_step s;
  rl_decode_step(r, batch, context, phi, &s);
  return s.t;
}

static double prefill_flops(const llm_model *m, double n) {
  return llm_flops_per_token(m) * n +
         2.0 * (double)m->layers * d_attn(m) * n * n;
}

double rl_prefill_s(const rl_replica *r, double prompt_tokens, double phi) {
  phi = clamp_phi(r, phi);
  return prefill_flops(r->model, prompt_tokens) / flop_rate(r, phi) +
         allreduce_s(r, prompt_tokens);
}

double rl_step_power_w(const rl_replica *r, double batch, double context,
                       double phi) {
  rl_step s;
  rl_decode_step(r, batch, context, phi, &s);
  return gpu_load_power(r->gpu, clamp_phi(r, phi), s.load);
}

/* The load of a prefill of flops FLOPs whose all-reduces take tp_s, at
 * full clock's rate rate1 (flop_rate(r, 1)). */
static gpu_load prefill_load(const rl_replica *r, double flops, double tp_s,
                             double rate1) {
  double comp = flops / rate1;
  double t = comp + tp_s;
  /* An empty prompt (a trace row with no context) computes nothing. */
  if (!(t > 0))
    return (gpu_load){0, 0, 0};
  double bytes = llm_weight_bytes(r->model, r->weights) / r->tp;
  return (gpu_load){comp / t, rl_fmin(1, bytes / (r->gpu->bandwidth_bps * t)),
                    1};
}

gpu_load rl_prefill_load(const rl_replica *r, double prompt_tokens) {
  return prefill_load(r, prefill_flops(r->model, prompt_tokens),
                      allreduce_s(r, prompt_tokens), flop_rate(r, 1));
}

void rl_prefill(const rl_replica *r, double prompt_tokens, double phi,
                double *t_s, gpu_load *load) {
  double flops = prefill_flops(r->model, prompt_tokens);
  double tp_s = allreduce_s(r, prompt_tokens);
  *t_s = flops / flop_rate(r, clamp_phi(r, phi)) + tp_s;
  *load = prefill_load(r, flops, tp_s, flop_rate(r, 1));
}

void rl_prefill_at(const rl_replica *r, double prompt_tokens,
                   const rl_clock *at, const rl_clock *full, double *t_s,
                   gpu_load *load) {
  double flops = prefill_flops(r->model, prompt_tokens);
  double tp_s = allreduce_s(r, prompt_tokens);
  /* full's rate is flop_rate(r, 1) unless the GPU's floor clamped 1 */
  double rate1 = full->phi == 1 ? full->rate : flop_rate(r, 1);
  *t_s = flops / at->rate + tp_s;
  *load = prefill_load(r, flops, tp_s, rate1);
}

void rl_prefill_terms_of(const rl_replica *r, rl_prefill_terms *p) {
  const llm_model *m = r->model;
  p->flops_token = llm_flops_per_token(m);
  p->attn = 2.0 * (double)m->layers * d_attn(m);
  p->rings = 2.0 * (double)m->layers;
  p->ring_share = 2.0 * (r->tp - 1) / r->tp;
  p->w_bytes = llm_weight_bytes(m, r->weights) / r->tp;
  p->ready = true;
}

/* allreduce_s from p: ring_s's and allreduce_s's operations in their
 * order; expert parallelism's all-to-alls through allreduce_s itself. */
static double allreduce_kept(const rl_replica *r, const rl_prefill_terms *p,
                             double tokens) {
  if (r->tp <= 1)
    return 0;
  if (r->ep > 1)
    return allreduce_s(r, tokens);
  double msg = tokens * (double)r->model->hidden_size * 2;
  return p->rings *
         (r->cfg.link_latency_s + p->ring_share * msg / r->cfg.link_bps);
}

void rl_prefill_kept(const rl_replica *r, const rl_prefill_terms *p,
                     double prompt_tokens, const rl_clock *at,
                     const rl_clock *full, double *t_s, gpu_load *load) {
  double n = prompt_tokens;
  double flops = p->flops_token * n + p->attn * n * n;
  double tp_s = allreduce_kept(r, p, n);
  /* full's rate is flop_rate(r, 1) unless the GPU's floor clamped 1 */
  double rate1 = full->phi == 1 ? full->rate : flop_rate(r, 1);
  *t_s = flops / at->rate + tp_s;
  /* prefill_load's operations, the bytes a GPU reads kept */
  double comp = flops / rate1;
  double t = comp + tp_s;
  *load =
      !(t > 0)
          ? (gpu_load){0, 0, 0}
          : (gpu_load){comp / t,
                       rl_fmin(1, p->w_bytes / (r->gpu->bandwidth_bps * t)), 1};
}

double rl_prefill_power_w(const rl_replica *r, double prompt_tokens,
                          double phi) {
  return gpu_load_power(r->gpu, clamp_phi(r, phi),
                        rl_prefill_load(r, prompt_tokens));
}

double rl_decode_tokens_per_joule(const rl_replica *r, double batch,
                                  double context, double phi) {
  rl_step s;
  rl_decode_step(r, batch, context, phi, &s);
  double p = gpu_load_power(r->gpu, clamp_phi(r, phi), s.load);
  return batch / (s.t * r->tp * p);
}

void rl_decode_step_batch_parts(const rl_batch *b, double context,
                                const rl_clock *at, rl_step *out) {
  step_work w;
  step_work_at(b, context, &w);
  step_parts(&w, at, out);
}
