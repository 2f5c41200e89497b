/* factory_scn_workloads.c - the factory's scenario check, its workloads
 * part (factory__check_work, called by factory_scn.c): the checks of the
 * services and training entries that need the catalogs and the fleet:
 * model and precision names, the GPU type, tensor parallelism against the
 * model's heads and the NVLink domain, memory, sizes against the fleet,
 * and the request traces (read once here, so a bad row is reported before
 * anything runs). A factory file: the workloads' run time (workloads.c
 * and its kin) includes nothing of the factory. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "factory_internal.h"
#include "file.h"
#include "names.h"
#include "roofline.h"
#include "suggest.h"

/* Bytes per parameter a training GPU holds for mixed-precision Adam: 2
 * (16-bit weights) + 2 (gradients) + 12 (32-bit master weights, momentum
 * and variance): Rajbhandari et al. 2020, "ZeRO", arXiv:1910.02054,
 * section 3.1. Sharding across data-parallel ranks (ZeRO, FSDP) is not
 * modelled, so the check is for plain Megatron-style 3D parallelism. */
#define TRAIN_BYTES_PER_PARAM 16.0

/* What a workload's entry says about where it runs. */
typedef struct placement {
  const char *list; /* "services" or "training" */
  size_t index;
  const char *name, *model, *precision, *gpu;
  int64_t tp, gpus;
} placement;

static int fail_at(const scn_loc *loc, const placement *p, const char *key,
                   sim_error *err, const char *hint, const char *msg) {
  char where[96];
  snprintf(where, sizeof where, "%s.%zu.%s", p->list, p->index, key);
  return scn_fail(loc, where, err, hint, "%s", msg);
}

/* GPUs of a type in the fleet, and its largest NVLink domain. */
static void type_capacity(const factory_config *c, const char *gpu,
                          double *gpus, int64_t *domain) {
  *gpus = 0;
  *domain = 0;
  for (size_t g = 0; g < c->nracks; g++) {
    const rack_group_config *r = &c->racks[g];
    if (strcmp(r->gpu, gpu) != 0)
      continue;
    *gpus += (double)r->count * (double)r->gpus_per_rack;
    *domain = r->nvlink_domain > *domain ? r->nvlink_domain : *domain;
  }
}

/* The GPU type a workload runs on: the one it names, which some rack
 * group must have, or the fleet's only type. */
static int find_gpu(const factory_scenario *sc, const scn_loc *loc,
                    placement *p, sim_error *err) {
  const factory_config *c = &sc->cfg;
  if (p->gpu == NULL) {
    for (size_t g = 1; g < c->nracks; g++)
      if (strcmp(c->racks[g].gpu, c->racks[0].gpu) != 0)
        return fail_at(loc, p, "name", err, "add gpu: NAME",
                       "the factory has several GPU types: say which one "
                       "this runs on");
    p->gpu = c->racks[0].gpu;
    return SIM_OK;
  }
  sim_suggest near;
  sim_suggest_init(&near, p->gpu);
  for (size_t g = 0; g < c->nracks; g++) {
    if (strcmp(c->racks[g].gpu, p->gpu) == 0)
      return SIM_OK;
    sim_suggest_add(&near, c->racks[g].gpu);
  }
  char msg[256], hint[256];
  snprintf(msg, sizeof msg, "no rack group has %s GPUs", p->gpu);
  size_t len = sim_suggest_text(&near, hint, sizeof hint);
  snprintf(hint + len, sizeof hint - len, "name a GPU type of the racks");
  return fail_at(loc, p, "gpu", err, hint, msg);
}

/* "did you mean 'X'? known WHAT: A, B, C" into hint, from near. */
static void name_hint(const sim_suggest *near, const char *what,
                      const char *names, char *hint, size_t size) {
  size_t len = sim_suggest_text(near, hint, size);
  snprintf(hint + len, size - len, "known %s: %s", what, names);
}

static int find_model(const factory_scenario *sc, const scn_loc *loc,
                      const placement *p, sim_error *err) {
  char names[1024], hint[1200], msg[256];
  const llm_catalog *cat = &sc->llms;
  sim_suggest near;
  if (llm_catalog_find(cat, p->model) == NULL) {
    sim_suggest_init(&near, p->model);
    for (size_t i = 0; i < cat->n; i++)
      sim_suggest_add(&near, cat->models[i].name);
    llm_catalog_names(cat, names, sizeof names);
    name_hint(&near, "models", names, hint, sizeof hint);
    snprintf(msg, sizeof msg, "unknown model '%s'", p->model);
    return fail_at(loc, p, "model", err, hint, msg);
  }
  if (llm_catalog_precision(cat, p->precision) == NULL) {
    sim_suggest_init(&near, p->precision);
    for (size_t i = 0; i < cat->nprecisions; i++)
      sim_suggest_add(&near, cat->precisions[i].name);
    llm_catalog_precision_names(cat, names, sizeof names);
    name_hint(&near, "precisions", names, hint, sizeof hint);
    snprintf(msg, sizeof msg, "unknown precision '%s'", p->precision);
    return fail_at(loc, p, "precision", err, hint, msg);
  }
  return SIM_OK;
}

/* Tensor parallelism splits the attention heads and stays inside one
 * NVLink domain; the whole workload fits the GPUs of its type. */
static int check_size(const factory_scenario *sc, const scn_loc *loc,
                      const placement *p, sim_error *err) {
  const llm_model *m = llm_catalog_find(&sc->llms, p->model);
  const gpu_spec *g = gpu_catalog_find(&sc->catalog, p->gpu);
  const llm_precision *w = llm_catalog_precision(&sc->llms, p->precision);
  char msg[sizeof err->msg];
  if (llm_check_precision(g, w, err) != SIM_OK) {
    snprintf(msg, sizeof msg, "%s", err->msg);
    return fail_at(loc, p, "precision", err, NULL, msg);
  }
  if (m->attention_heads % p->tp != 0) {
    snprintf(msg, sizeof msg,
             "tp %lld does not divide %s's %lld attention heads",
             (long long)p->tp, m->name, (long long)m->attention_heads);
    return fail_at(loc, p, "tp", err, "tensor parallelism splits the heads",
                   msg);
  }
  double gpus;
  int64_t domain;
  type_capacity(&sc->cfg, p->gpu, &gpus, &domain);
  if (p->tp > domain) {
    snprintf(msg, sizeof msg,
             "tp %lld spans more than an NVLink domain (%lld "
             "%s GPUs)",
             (long long)p->tp, (long long)domain, p->gpu);
    return fail_at(loc, p, "tp", err, "see the rack groups' nvlink_domain",
                   msg);
  }
  if ((double)p->gpus > gpus) {
    snprintf(msg, sizeof msg, "%s needs %lld %s GPUs; the factory has %.0f",
             p->name, (long long)p->gpus, p->gpu, gpus);
    return fail_at(loc, p, "name", err, NULL, msg);
  }
  return SIM_OK;
}

static int check_placement(const factory_scenario *sc, const scn_loc *loc,
                           placement *p, sim_error *err) {
  int rc = find_gpu(sc, loc, p, err);
  if (rc == SIM_OK)
    rc = find_model(sc, loc, p, err);
  if (rc == SIM_OK)
    rc = check_size(sc, loc, p, err);
  return rc;
}

/* The service's serving engine and KV precision, named in the catalogs. */
static int find_engine(const factory_scenario *sc, const scn_loc *loc,
                       const inf_config *c, const placement *p,
                       const llm_engine **eng, const llm_precision **kv,
                       sim_error *err) {
  char msg[sizeof err->msg], names[512], hint[600];
  *eng = llm_catalog_engine(&sc->llms, c->engine);
  if (*eng == NULL) {
    llm_catalog_engine_names(&sc->llms, names, sizeof names);
    snprintf(hint, sizeof hint, "known engines: %s", names);
    snprintf(msg, sizeof msg, "unknown serving engine '%s'", c->engine);
    return fail_at(loc, p, "engine", err, hint, msg);
  }
  *kv = llm_catalog_precision(&sc->llms, c->kv_precision);
  if (*kv == NULL) {
    llm_catalog_precision_names(&sc->llms, names, sizeof names);
    snprintf(hint, sizeof hint, "known precisions: %s", names);
    snprintf(msg, sizeof msg, "unknown KV precision '%s'", c->kv_precision);
    return fail_at(loc, p, "kv_precision", err, hint, msg);
  }
  return SIM_OK;
}

/* The weights at the service's precision and a KV cache must fit each
 * replica. */
static int check_replica(const factory_scenario *sc, const scn_loc *loc,
                         const inf_config *c, const placement *p,
                         sim_error *err) {
  const llm_engine *eng;
  const llm_precision *kv;
  int rc = find_engine(sc, loc, c, p, &eng, &kv, err);
  if (rc != SIM_OK)
    return rc;
  char msg[sizeof err->msg];
  rl_replica r;
  if (rl_replica_init(&r, gpu_catalog_find(&sc->catalog, p->gpu),
                      llm_catalog_find(&sc->llms, c->model),
                      llm_catalog_precision(&sc->llms, c->precision), eng,
                      (int)c->tp, err) != SIM_OK) {
    snprintf(msg, sizeof msg, "%s", err->msg);
    return fail_at(loc, p, "tp", err, "raise tp or choose a narrower precision",
                   msg);
  }
  r.ep = (int)c->ep;
  r.kv = kv;
  if (rl_check(&r, err) != SIM_OK) {
    snprintf(msg, sizeof msg, "%s", err->msg);
    return fail_at(loc, p, "ep", err, "ep is 1 or tp, for an MoE", msg);
  }
  return SIM_OK;
}

/* The service's request trace, if it has one, must read. */
static int check_trace(const scn_loc *loc, const inf_config *c, size_t k,
                       const placement *p, sim_error *err) {
  if (c->arrivals.kind != ARR_TRACE)
    return SIM_OK;
  char dir[4096], msg[sizeof err->msg];
  sim_path_dir(scn_loc_file(loc), dir, sizeof dir);
  arr_gen *gen = arr_create(&c->arrivals, dir, 0, k, NULL, err);
  if (gen != NULL) {
    arr_destroy(gen);
    return SIM_OK;
  }
  if (err->code != SIM_EIO)
    return err->code; /* the file's own FILE:LINE:COLUMN says it */
  snprintf(msg, sizeof msg, "%s", err->msg);
  return fail_at(loc, p, "arrivals.file", err,
                 "paths are relative to the scenario's folder", msg);
}

static int check_service(factory_scenario *sc, const scn_loc *loc, size_t k,
                         sim_error *err) {
  inf_config *c = &sc->cfg.services[k];
  placement p = {"services",   k,      c->name, c->model,
                 c->precision, c->gpu, c->tp,   c->tp * c->replicas};
  int rc = check_placement(sc, loc, &p, err);
  if (rc == SIM_OK)
    rc = check_replica(sc, loc, c, &p, err);
  if (rc == SIM_OK)
    rc = check_trace(loc, c, k, &p, err);
  if (rc == SIM_OK && c->prompt_pool > 0 &&
      sc->cfg.inference.granularity != INF_REQUEST)
    rc = fail_at(loc, &p, "prompt_pool", err,
                 "leave prompt_pool out, or use inference: {granularity: "
                 "request}",
                 "prompt_pool (shared prompts) is modelled at request "
                 "granularity only");
  return rc;
}

/* The pipeline's layers split over the stages, and each GPU holds its
 * share of the weights, gradients and optimizer state. */
/* GPUs of type gpu the services hold for the whole run. */
static double service_gpus(const factory_config *c, const char *gpu) {
  double n = 0;
  for (size_t k = 0; k < c->nservices; k++) {
    const inf_config *s = &c->services[k];
    const char *type = s->gpu != NULL ? s->gpu : c->racks[0].gpu;
    if (strcmp(type, gpu) == 0)
      n += (double)(s->replicas * s->tp);
  }
  return n;
}

/* A job must fit beside the services, or it would queue for ever (and
 * block every job behind it under FCFS). */
static int check_room(const factory_scenario *sc, const scn_loc *loc,
                      const placement *p, sim_error *err) {
  double gpus;
  int64_t domain;
  type_capacity(&sc->cfg, p->gpu, &gpus, &domain);
  double left = gpus - service_gpus(&sc->cfg, p->gpu);
  if ((double)p->gpus <= left)
    return SIM_OK;
  char msg[256];
  snprintf(msg, sizeof msg,
           "%s needs %lld %s GPUs; %.0f are left beside the services", p->name,
           (long long)p->gpus, p->gpu, left);
  return fail_at(loc, p, "name", err, "fewer GPUs, or fewer replicas", msg);
}

static int check_job(factory_scenario *sc, const scn_loc *loc, size_t k,
                     sim_error *err) {
  train_config *c = &sc->cfg.training[k];
  int64_t dp = c->dp; /* the largest a stream of jobs may draw */
  for (size_t i = 0; c->count > 1 && i < c->ndp_choices; i++)
    dp = c->dp_choices[i] > dp ? c->dp_choices[i] : dp;
  placement p = {"training",   k,      c->name, c->model,
                 c->precision, c->gpu, c->tp,   dp * c->pp * c->tp};
  int rc = check_placement(sc, loc, &p, err);
  if (rc == SIM_OK)
    rc = check_room(sc, loc, &p, err);
  if (rc != SIM_OK)
    return rc;
  const llm_model *m = llm_catalog_find(&sc->llms, c->model);
  const gpu_spec *g = gpu_catalog_find(&sc->catalog, p.gpu);
  char msg[512];
  const sig_series *sig = c->deferral_signal == TRAIN_SIGNAL_PRICE
                              ? &sc->feed.price
                              : &sc->feed.carbon;
  if (c->deferral != 0 && sig->kind == SIG_NONE)
    return fail_at(loc, &p, "deferral", err,
                   "give grid.carbon (or grid.price) a file or a value",
                   "deferral follows the grid's signal, and the scenario "
                   "has none");
  if (c->pp > m->layers) {
    snprintf(msg, sizeof msg, "pp %lld is more stages than %s's %lld layers",
             (long long)c->pp, m->name, (long long)m->layers);
    return fail_at(loc, &p, "pp", err, NULL, msg);
  }
  double need = TRAIN_BYTES_PER_PARAM * m->parameters / (double)(c->pp * c->tp);
  if (need > g->memory_bytes) {
    snprintf(msg, sizeof msg,
             "%s needs %.0f GB per GPU for weights, gradients and Adam "
             "states (16 B per parameter over pp x tp = %lld); %s has %.0f GB",
             m->name, need / 1e9, (long long)(c->pp * c->tp), g->name,
             g->memory_bytes / 1e9);
    return fail_at(loc, &p, "pp", err, "raise pp or tp", msg);
  }
  return SIM_OK;
}

/* A generic GPU job (gpujob.h) names a GPU type of the racks, or the
 * fleet has one, and fits beside the services. */
static int check_gjob_entry(factory_scenario *sc, const scn_loc *loc,
                            size_t k, sim_error *err) {
  const gjob_config *c = &sc->cfg.gjobs[k];
  placement p = {"jobs", k, c->name, NULL, NULL, c->gpu, 1, c->gpus};
  int rc = find_gpu(sc, loc, &p, err);
  return rc == SIM_OK ? check_room(sc, loc, &p, err) : rc;
}

/* The name of workload i: services, training, then generic jobs. */
static const char *workload_name(const factory_config *c, size_t i,
                                 char *where, size_t size) {
  const char *list = "services", *name;
  size_t k = i;
  if (k < c->nservices) {
    name = c->services[k].name;
  } else if ((k -= c->nservices) < c->ntraining) {
    list = "training";
    name = c->training[k].name;
  } else {
    k -= c->ntraining;
    list = "jobs";
    name = c->gjobs[k].name;
  }
  snprintf(where, size, "%s.%zu.name", list, k);
  return name;
}

/* Names identify rows of /jobs and groups under /services. */
static int check_names(const factory_config *c, const scn_loc *loc,
                       sim_error *err) {
  size_t n = c->nservices + c->ntraining + c->ngjobs;
  sim_names *ix = sim_names_create(n, NULL); /* linear, not pairwise */
  int rc =
      ix != NULL ? SIM_OK : sim_error_set(err, SIM_ENOMEM, "out of memory");
  for (size_t i = 0; i < n && rc == SIM_OK; i++) {
    char where[96];
    const char *name = workload_name(c, i, where, sizeof where);
    if (strchr(name, '/') != NULL || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0)
      rc =
          scn_fail(loc, where, err, NULL,
                   "'%s' cannot name an HDF5 group: no '/', '.' or '..'", name);
    else if (sim_names_add(ix, name, i, NULL) != SIM_OK)
      rc = scn_fail(loc, where, err, "names identify rows of /jobs",
                    "two workloads are called '%s'", name);
  }
  sim_names_destroy(ix);
  return rc;
}

int factory__check_work(factory_scenario *sc, const scn_loc *loc,
                        sim_error *err) {
  const factory_config *c = &sc->cfg;
  int rc = check_names(c, loc, err);
  for (size_t k = 0; k < c->nservices && rc == SIM_OK; k++)
    rc = check_service(sc, loc, k, err);
  for (size_t k = 0; k < c->ntraining && rc == SIM_OK; k++)
    rc = check_job(sc, loc, k, err);
  for (size_t k = 0; k < c->ngjobs && rc == SIM_OK; k++)
    rc = check_gjob_entry(sc, loc, k, err);
  return rc;
}
