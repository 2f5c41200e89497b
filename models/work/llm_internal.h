/* llm_internal.h - what llm.c and llm_engine.c share inside the LLM
 * catalog module (llm.h); not part of its interface. */
#ifndef MODELS_LLM_INTERNAL_H
#define MODELS_LLM_INTERNAL_H

#include "llm.h"

/* Binds the built-in engines.yaml into e (zeroed first). SIM_OK, or the
 * loader's error with the position in the file; e holds what was bound
 * either way (free it with llm__engines_fini). */
int llm__engines_load_builtin(llm_engines *e, sim_error *err);

/* Frees what a load allocated and zeroes e. */
void llm__engines_fini(llm_engines *e);

#endif
