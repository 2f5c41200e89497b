# aifsim.cmake - the functions every CMakeLists here shares: warnings on
# our own targets, one model library per call, and catalogs compiled in.

# Warnings go on each target of ours, never on imported ones.
function(sim_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic
                         -Wshadow -Wstrict-prototypes)
  if(SIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  target_compile_definitions(${target} PRIVATE _POSIX_C_SOURCE=200809L)
endfunction()

# aifsim_model_library(NAME SOURCES file... DEPS target...): the library
# models_NAME (alias models::NAME) from SOURCES in the calling folder,
# which it puts on its dependents' include path; DEPS are its public
# dependencies. A model sees only the folders of the targets it names, so
# a header from a layer above is not on its path and does not build.
function(aifsim_model_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;DEPS")
  add_library(models_${name} ${arg_SOURCES})
  add_library(models::${name} ALIAS models_${name})
  target_include_directories(models_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(models_${name} PUBLIC ${arg_DEPS})
  sim_warnings(models_${name})
endfunction()

# aifsim_embed(YAML SYMBOL OUT_VAR): a C source, generated at build time,
# holding the file YAML as `const unsigned char SYMBOL[]` (NUL-terminated)
# and `SYMBOL_size`; its path goes in OUT_VAR. The catalogs are compiled in
# so that aifsim runs from anywhere.
function(aifsim_embed yaml symbol out_var)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${symbol}.c)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${yaml} -DOUT=${out} -DSYMBOL=${symbol}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    DEPENDS ${yaml} ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    COMMENT "Embedding ${yaml}")
  set(${out_var} ${out} PARENT_SCOPE)
endfunction()
