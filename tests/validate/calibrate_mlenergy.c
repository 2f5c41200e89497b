/* calibrate_mlenergy.c - what tools/calibrate.py needs to fit the vLLM
 * engine's step costs (scenarios/catalog/engines.yaml): for every
 * catalogued run of the CSV it is given, the roofline's parts of the run
 * with no step costs, one CSV row each (numbers as %.17g). The model is
 * linear in the costs: a replica's decode step is base + B x seq_overhead +
 * L x moe_layer_overhead (roofline.h, t_fixed), and the modelled tokens/s
 * of the run are dp / (step / B + prefill / output) (mlenergy_runs.c), so
 * the script fits the costs without calling back into C. So that this
 * stays true when the harness changes, each row also carries the run's
 * modelled tokens/s with the costs given on the command line, which the
 * script compares with its own formula at the fitted costs.
 *
 * Usage: calibrate_mlenergy RUNS.csv SEQ_S MOE_S. calibrate.py passes a
 * file holding only its fit set's rows: this program reads no other
 * data. A refused run is an error (exit 1): a fit set must be modelled
 * whole. */
#include <stdio.h>
#include <stdlib.h>

#include "mlenergy_runs.h"

/* bare: modelled with no step costs; at: with the costs given. */
static void print_runs(const mlr_run *bare, const mlr_run *at, size_t n) {
  printf("model_id,gpu,class,dp,step_batch,moe_layers,base_step_s,"
         "prefill_s,output_len,measured_tokens_per_s,model_tokens_per_s\n");
  for (size_t i = 0; i < n; i++) {
    const mlr_run *r = &bare[i];
    printf("%s,%s,%s,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n",
           r->model_id, r->gpu_model, r->moe ? "MoE" : "dense", r->dp,
           r->step_batch, r->moe_layers, r->step_ms / 1e3, r->prefill_ms / 1e3,
           r->output, r->tps, at[i].model_tps);
  }
}

static int refused(const mlr_run *runs, size_t n) {
  int bad = 0;
  for (size_t i = 0; i < n; i++)
    if (runs[i].refused[0] != '\0') {
      fprintf(stderr, "calibrate_mlenergy: %s on %d %s refused: %s\n",
              runs[i].model_id, runs[i].gpus, runs[i].gpu_model,
              runs[i].refused);
      bad = 1;
    }
  return bad;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: calibrate_mlenergy RUNS.csv SEQ_S MOE_S\n");
    return 2;
  }
  const llm_engine bare = {.name = "none", .full_name = "no step costs"};
  const llm_engine given = {.name = "given",
                            .full_name = "the costs given",
                            .seq_overhead_s = atof(argv[2]),
                            .moe_layer_overhead_s = atof(argv[3])};
  llm_catalog llms = {0};
  gpu_catalog gpus = {0};
  sim_error err = {0};
  mlr_run *runs = NULL, *at = NULL;
  size_t n = 0, n_at = 0;
  int rc = llm_catalog_load_builtin(&llms, &err);
  if (rc == SIM_OK)
    rc = gpu_catalog_load_builtin(&gpus, &err);
  if (rc == SIM_OK)
    rc = mlr_runs_load(argv[1], &llms, &gpus, &bare, &runs, &n, &err);
  if (rc == SIM_OK)
    rc = mlr_runs_load(argv[1], &llms, &gpus, &given, &at, &n_at, &err);
  if (rc != SIM_OK)
    fprintf(stderr, "calibrate_mlenergy: %s\n", err.msg);
  else if (refused(runs, n) || refused(at, n_at) || n != n_at)
    rc = SIM_EINPUT;
  else
    print_runs(runs, at, n);
  free(runs);
  free(at);
  llm_catalog_fini(&llms);
  gpu_catalog_fini(&gpus);
  return rc == SIM_OK ? 0 : 1;
}
