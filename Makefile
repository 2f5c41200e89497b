# Thin wrapper over CMake: `make run` and `make test` set up a fresh Debian
# machine (missing packages), configure, build, and run.
BUILD    ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
WERROR   ?= ON
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
SCENARIO ?= scenarios/quickstart.yaml
OUT      ?= out/quickstart.h5

# Everything the project needs, as Debian packages.
PACKAGES = cmake gcc make pkg-config libgsl-dev libhdf5-dev hdf5-tools zlib1g-dev \
           libcmocka-dev libfyaml-dev python3 python3-h5py python3-numpy \
           python3-pandas python3-matplotlib python3-yaml python3-xarray \
           python3-h5netcdf python3-pytest python3-nbclient python3-nbformat \
           python3-ipykernel python3-setuptools git \
           libopenmpi-dev openmpi-bin \
           slurmctld slurmd slurm-client munge clang libclang-rt-14-dev

.PHONY: all deps build run test unit asan fuzz bench validate gallery clean

all: build

deps:
	@./tools/deps.sh $(PACKAGES)

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DSIM_WERROR=$(WERROR)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

run: build
	@mkdir -p $(dir $(OUT))
	$(BUILD)/aifsim run $(SCENARIO) -o $(OUT)

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

# The fuzz targets (tests/fuzz) built with clang's libFuzzer, ASan and
# UBSan, each run for FUZZ_SECONDS; fails on any finding.
fuzz: deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DSIM_FUZZ=ON \
	      -DSIM_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	./tools/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: build
	cmake --build $(BUILD) --target benchmarks -j $(JOBS)
	./tools/bench.sh $(BUILD)

# Every published-figure case against the model: regenerates
# docs/VALIDATION.md and docs/validation/mlenergy_runs.csv (commit them;
# the test validation_fresh fails when they are stale).
validate: build
	/usr/bin/python3 tools/validate.py $(BUILD)

# The what-if gallery: runs every scenario of scenarios/README.md at full
# size (a few minutes) and rewrites its numbers and scenarios/gallery.json
# (commit both; the test gallery_fresh fails when they are stale).
gallery: build
	/usr/bin/python3 tools/gallery.py $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) out
