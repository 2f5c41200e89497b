# Thin wrapper over CMake: `make run` and `make test` set up a fresh Debian
# machine (missing packages), configure, build, and run. `make run` installs
# only what running needs; `make test` adds what the tests need.
BUILD    ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
CLANG_BUILD ?= build-clang
BENCH_BUILD ?= build-bench
FUZZ_SECONDS ?= 60
WERROR   ?= ON
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
SCENARIO ?= scenarios/quickstart.yaml
OUT      ?= out/quickstart.h5

# What the project needs, as Debian packages (.ci/run installs both lists;
# the test `deps` checks they agree and that RUN_PACKAGES pulls in no test
# package on a fresh machine).
# - running: the compiler and CMake; GSL, HDF5, zlib and libfyaml, whose -dev
#   packages bring the libraries aifsim links; the analysis package's
#   Python (h5py, numpy, pandas, matplotlib, yaml; xarray and h5netcdf for
#   run.to_xarray and xarray.open_dataset).
RUN_PACKAGES = cmake gcc make pkg-config libgsl-dev libhdf5-dev zlib1g-dev \
               libfyaml-dev python3 python3-h5py python3-numpy \
               python3-pandas python3-matplotlib python3-yaml \
               python3-xarray python3-h5netcdf
# - testing only: cmocka (unit tests), h5dump and h5diff (hdf5-tools),
#   pytest and Jupyter's nbclient/nbformat/ipykernel (the package's tests,
#   notebooks), setuptools (its pip install test), git (the CI guard),
#   OpenMPI (MPI sweeps), Slurm and munge (the Slurm test), clang with its
#   runtime (libFuzzer: make fuzz).
TEST_PACKAGES = libcmocka-dev hdf5-tools python3-pytest python3-nbclient \
                python3-nbformat python3-ipykernel python3-setuptools git \
                libopenmpi-dev openmpi-bin \
                slurmctld slurmd slurm-client munge clang libclang-rt-14-dev
PACKAGES = $(RUN_PACKAGES) $(TEST_PACKAGES)

.PHONY: all deps deps-run build build-run run test unit asan clang-unit fuzz \
        bench bench-build docs \
        calibrate validate gallery picture clean

all: build

deps:
	@./tools/deps.sh $(PACKAGES)

deps-run:
	@./tools/deps.sh $(RUN_PACKAGES)

# The full build: every test program, and MPI (the sweep tests need it;
# a build first configured by `make run`, without MPI, is switched over).
build: deps
	cmake -S . -B $(BUILD) -DSIM_WERROR=$(WERROR) -DSIM_BUILD_TESTS=ON \
	      -DAIFSIM_MPI=ON
	cmake --build $(BUILD) -j $(JOBS)

# Only the aifsim program and libaifsim (aifsim.Factory loads it): no
# cmocka needed, MPI used if it is there. A build directory already
# configured (by `make build` or `make test`) is kept as it is.
build-run: deps-run
	@[ -f $(BUILD)/CMakeCache.txt ] || \
	  cmake -S . -B $(BUILD) -DSIM_WERROR=$(WERROR) -DSIM_BUILD_TESTS=OFF
	cmake --build $(BUILD) -j $(JOBS) --target aifsim aifsim_lib

run: build-run
	@mkdir -p $(dir $(OUT))
	$(BUILD)/aifsim run $(SCENARIO) -o $(OUT)
	@echo
	@echo "Wrote $(OUT). Next, its report, a one-page PNG:"
	@echo "  tools/aifsim-py report $(OUT) --png $(basename $(OUT)).png"
	@echo "Then README.md's 'Four things to try next' and the gallery,"
	@echo "scenarios/README.md."

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The whole ctest suite again (every label: unit, CLI, scenarios,
# sweeps, Slurm) under AddressSanitizer and UBSan: the CLI and python
# tests take the ASan build's aifsim from CMake. Leaks inside libraries
# outside the project (OpenMPI) are suppressed in tests/asan/lsan.supp.
# For those to match, OpenMPI keeps its plugins loaded at exit (a plugin
# unloaded by then leaves its frames "<unknown module>"), and the MPI
# tests (cli_sweep, slurm) take full stacks on malloc (the fast unwinder
# loses frames in libraries built without frame pointers; too slow for
# the whole suite). Slurm's jobs inherit the environment.
asan: deps
	cmake -S . -B $(ASAN_BUILD) -DSIM_WERROR=$(WERROR) -DSIM_ENABLE_ASAN=ON \
	      -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  OMPI_MCA_mca_component_disable_dlclose=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/asan/lsan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

# The unit tests built with clang (-Werror): C leaves the order of a
# call's arguments and of an initializer list's members unspecified, and
# tests that drew random values or grew a pool inside one call did
# differently under clang than under GCC (a fleet drawn otherwise, a pool
# read before it was made); this build keeps them honest.
clang-unit: deps
	cmake -S . -B $(CLANG_BUILD) -DCMAKE_C_COMPILER=clang \
	      -DSIM_WERROR=$(WERROR) -DSIM_BUILD_TESTS=ON
	cmake --build $(CLANG_BUILD) -j $(JOBS)
	cd $(CLANG_BUILD) && ctest --output-on-failure -j $(JOBS) -L unit

# The fuzz targets (tests/fuzz) built with clang's libFuzzer, ASan and
# UBSan, each run for FUZZ_SECONDS; fails on any finding.
fuzz: deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DSIM_FUZZ=ON \
	      -DSIM_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	./tools/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The build the benchmarks measure, in its own folder: Release (-O3, with
# link-time optimisation), the build docs/PERFORMANCE.md's figures are
# of. The default build (RelWithDebInfo, -O2) writes the same bytes and
# takes 2-4% longer on bench-10k.
bench-build: deps
	cmake -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release \
	      -DSIM_WERROR=$(WERROR) -DSIM_BUILD_TESTS=ON -DAIFSIM_MPI=ON
	cmake --build $(BENCH_BUILD) -j $(JOBS) \
	      --target aifsim aifsim_lib benchmarks

bench: bench-build
	./tools/bench.sh $(BENCH_BUILD)

# Every fitted constant from its fit set alone (tools/calibrate.py):
# rewrites the fitted blocks of the catalogs with their provenance (commit
# them, then `make validate`; the test calibration_fresh fails when the
# catalog is not what this writes).
calibrate: build
	/usr/bin/python3 tools/calibrate.py $(BUILD)

# Every published-figure case against the model: regenerates
# docs/VALIDATION.md, docs/validation/mlenergy_runs.csv and the figures
# between validation markers in README.md, scenarios/README.md and docs/
# (commit them; the test validation_fresh fails when they are stale).
validate: build
	/usr/bin/python3 tools/validate.py $(BUILD)

# docs/OUTPUT.md's list of /summary metrics, from the models' rows
# (`aifsim metrics`; commit it; the test metrics_fresh fails when stale).
docs: build
	/usr/bin/python3 tools/metrics_doc.py $(BUILD)

# The what-if gallery: runs every scenario of scenarios/README.md at full
# size (a few minutes) and rewrites its numbers and scenarios/gallery.json
# (commit both; the test gallery_fresh fails when they are stale).
gallery: build
	/usr/bin/python3 tools/gallery.py $(BUILD)

# README.md's picture: the report of the run `make run` makes
# (docs/img/quickstart-report.png; `make gallery` draws it too).
picture: build-run
	/usr/bin/python3 tools/gallery.py --picture $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(CLANG_BUILD) $(BENCH_BUILD) out

# `make print-RUN_PACKAGES` and the like: a variable's value, for scripts
# (the test `deps` reads the package lists this way).
print-%:
	@echo $($*)
