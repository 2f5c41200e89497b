# pgo_train.cmake - the training runs of a SIM_PGO build (cmake/pgo.cmake):
# cmake -DAIFSIM=EXE -DSRC=SOURCE_DIR -DOUT=DIR -P pgo_train.cmake
#
# What a profile should count is what users run: every example scenario
# (the sweeps' files are grids of them) for its first hour, and
# bench-10k, the facility made to exercise every model at once, for its
# first hour in the fluid mode and ten minutes at the request level. About
# half a minute on two cores. A run that fails stops the build: a profile
# of a broken binary would optimise for its error path.

file(GLOB scenarios ${SRC}/scenarios/*.yaml)
list(FILTER scenarios EXCLUDE REGEX "/sweep-[^/]*\\.yaml$")
set(bench ${SRC}/tests/bench/bench-10k.yaml)
file(MAKE_DIRECTORY ${OUT})

function(train name scenario)
  execute_process(
    COMMAND ${AIFSIM} run ${scenario} -o ${OUT}/${name}.h5 --quiet --force
            ${ARGN}
    OUTPUT_QUIET RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "SIM_PGO training run ${name} failed (${rc}): ${err}")
  endif()
endfunction()

foreach(scenario IN LISTS scenarios)
  get_filename_component(name ${scenario} NAME_WE)
  train(${name} ${scenario} --set duration=1h)
endforeach()
train(bench-10k-fluid ${bench} --set duration=1h
      --set inference.granularity=fluid)
train(bench-10k-request ${bench} --set duration=10min)
file(REMOVE_RECURSE ${OUT})
