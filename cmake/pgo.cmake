# pgo.cmake - profile-guided optimisation (SIM_PGO, GCC, optimised builds).
#
# A second build of aifsim under BUILD/pgo/build is compiled with
# -fprofile-generate, runs the training scenarios (pgo_train.cmake), and
# every target of this build is then compiled with -fprofile-use on what
# those runs counted: GCC lays out branches, inlines and unrolls by the
# counts. It changes no arithmetic: the build keeps -ffp-contract=off and
# no -ffast-math, so every output keeps its bytes (docs/PERFORMANCE.md,
# "A profile-guided build"). The profile is made again whenever a source
# changes, so it never describes other code than it optimises.
#
# SIM_PGO_GENERATE=DIR is the instrumented build's own switch.

if(SIM_PGO AND SIM_PGO_GENERATE)
  message(FATAL_ERROR "SIM_PGO and SIM_PGO_GENERATE exclude each other")
endif()
if(SIM_PGO OR SIM_PGO_GENERATE)
  if(NOT CMAKE_C_COMPILER_ID STREQUAL "GNU")
    message(FATAL_ERROR "SIM_PGO needs GCC (its -fprofile-use)")
  endif()
  if(NOT CMAKE_BUILD_TYPE MATCHES "^Rel" OR SIM_ENABLE_ASAN OR SIM_FUZZ)
    message(FATAL_ERROR "SIM_PGO is for optimised builds "
                        "(Release, RelWithDebInfo), not sanitised ones")
  endif()
endif()

# Object files are named by their path under the build directory in the
# profile, so the instrumented build's counts find this build's objects.
if(SIM_PGO_GENERATE)
  add_compile_options(-fprofile-generate=${SIM_PGO_GENERATE}
                      -fprofile-update=prefer-atomic
                      -fprofile-prefix-path=${CMAKE_BINARY_DIR})
  add_link_options(-fprofile-generate=${SIM_PGO_GENERATE})
endif()

if(SIM_PGO)
  set(SIM_PGO_DIR ${CMAKE_BINARY_DIR}/pgo)
  file(GLOB_RECURSE sim_pgo_sources CONFIGURE_DEPENDS
       ${PROJECT_SOURCE_DIR}/sim/*.[ch] ${PROJECT_SOURCE_DIR}/models/*.[ch]
       ${PROJECT_SOURCE_DIR}/cli/*.[ch] ${PROJECT_SOURCE_DIR}/lib/*.[ch]
       ${PROJECT_SOURCE_DIR}/include/*.h
       ${PROJECT_SOURCE_DIR}/scenarios/catalog/*.yaml)
  # The profile is made again when what compiles the code changes too: a
  # function compiled otherwise than it was counted does not match its
  # counts, which GCC reports as an error.
  file(CONFIGURE OUTPUT ${SIM_PGO_DIR}/flags.txt CONTENT
       "${CMAKE_C_COMPILER} ${CMAKE_C_COMPILER_VERSION} ${CMAKE_BUILD_TYPE} \
${CMAKE_C_FLAGS} ${SIM_LTO} ${AIFSIM_MPI}\n")
  # Its own make, not the caller's jobserver (which it cannot reach).
  cmake_host_system_information(RESULT sim_pgo_jobs
                                QUERY NUMBER_OF_LOGICAL_CORES)
  add_custom_command(
    OUTPUT ${SIM_PGO_DIR}/profile.stamp
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${SIM_PGO_DIR}/profile
    COMMAND ${CMAKE_COMMAND} -S ${PROJECT_SOURCE_DIR} -B ${SIM_PGO_DIR}/build
            -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}
            -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE} -DSIM_LTO=${SIM_LTO}
            "-DCMAKE_C_FLAGS=${CMAKE_C_FLAGS}"
            -DSIM_BUILD_TESTS=OFF -DAIFSIM_MPI=${AIFSIM_MPI} -DSIM_PGO=OFF
            -DSIM_PGO_GENERATE=${SIM_PGO_DIR}/profile
    COMMAND ${CMAKE_COMMAND} -E env --unset=MAKEFLAGS --unset=MFLAGS
            ${CMAKE_COMMAND} --build ${SIM_PGO_DIR}/build --target aifsim
            --parallel ${sim_pgo_jobs}
    COMMAND ${CMAKE_COMMAND} -DAIFSIM=${SIM_PGO_DIR}/build/aifsim
            -DSRC=${PROJECT_SOURCE_DIR} -DOUT=${SIM_PGO_DIR}/runs
            -P ${PROJECT_SOURCE_DIR}/cmake/pgo_train.cmake
    COMMAND ${CMAKE_COMMAND} -E touch ${SIM_PGO_DIR}/profile.stamp
    DEPENDS ${sim_pgo_sources} ${SIM_PGO_DIR}/flags.txt
            ${PROJECT_SOURCE_DIR}/cmake/pgo_train.cmake
    COMMENT "Profiling aifsim's training runs (SIM_PGO)"
    VERBATIM)
  add_custom_target(sim_pgo_profile DEPENDS ${SIM_PGO_DIR}/profile.stamp)
endif()

# sim_pgo_use(TARGET): TARGET compiled on the profile, after it is made and
# again whenever it is made anew. Translation units the training never
# ran (the tests') have no counts: GCC optimises them as without a profile.
function(sim_pgo_use target)
  if(NOT SIM_PGO)
    return()
  endif()
  target_compile_options(${target} PRIVATE -fprofile-use=${SIM_PGO_DIR}/profile
    -fprofile-prefix-path=${CMAKE_BINARY_DIR} -fprofile-partial-training
    -Wno-missing-profile)
  target_link_options(${target} PRIVATE -fprofile-use=${SIM_PGO_DIR}/profile
    -fprofile-partial-training)
  add_dependencies(${target} sim_pgo_profile)
  get_target_property(sources ${target} SOURCES)
  set_property(SOURCE ${sources} APPEND PROPERTY OBJECT_DEPENDS
               ${SIM_PGO_DIR}/profile.stamp)
endfunction()
