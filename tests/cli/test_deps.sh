#!/usr/bin/env bash
# test_deps.sh SOURCE_DIR - `make run` installs only what running needs
# (issue 27: it used to install Slurm, munge, clang and MPI to run one
# scenario), and the package lists stay in step:
#   a. the Makefile's RUN_PACKAGES and TEST_PACKAGES do not overlap, and
#      together are exactly the list .ci/run installs;
#   b. on a fresh machine (apt-get's simulation against an empty package
#      database, so every dependency counts), RUN_PACKAGES pulls in no
#      MPI, Slurm, munge, clang/LLVM, cmocka, pytest or Jupyter package;
#   c. what `make run` configures (no tests, no MPI) configures with
#      neither cmocka nor MPI to be found.
# It reads the apt lists of the machine (CI runs apt-get update first); it
# fails, never skips, where apt-get cannot simulate.
set -u
SRC=$(realpath "$1")
NAME=deps
. "$(dirname "$0")/lib.sh"

run_pkgs=$(make -s -C "$SRC" --no-print-directory print-RUN_PACKAGES)
test_pkgs=$(make -s -C "$SRC" --no-print-directory print-TEST_PACKAGES)
words() { tr ' ' '\n' | sed '/^$/d' | sort; }

echo "# a. the lists"
both=$(comm -12 <(words <<<"$run_pkgs") <(words <<<"$test_pkgs"))
[ -z "$both" ] && ok "RUN_PACKAGES and TEST_PACKAGES are apart" ||
  not_ok "RUN_PACKAGES and TEST_PACKAGES are apart" "in both: $both"
# .ci/run's install command: the lines after "apt-get install" up to the
# first that does not end in a backslash.
ci=$(awk '/apt-get install/ {on = 1} on {print; if ($0 !~ /\\$/) exit}' \
  "$SRC/.ci/run" | sed 's/apt-get install//; s/\\//g' | tr ' ' '\n' |
  grep -v '^-' | words)
mk=$(words <<<"$run_pkgs $test_pkgs")
if [ -n "$ci" ] && [ "$ci" = "$mk" ]; then
  ok ".ci/run installs RUN_PACKAGES and TEST_PACKAGES ($(wc -l <<<"$ci") packages)"
else
  not_ok ".ci/run installs RUN_PACKAGES and TEST_PACKAGES" \
    "only in .ci/run: $(comm -23 <(echo "$ci") <(echo "$mk") | tr '\n' ' ')" \
    "only in the Makefile: $(comm -13 <(echo "$ci") <(echo "$mk") | tr '\n' ' ')"
fi

echo "# b. a fresh machine"
: >"$TMP/status"
# shellcheck disable=SC2086
if apt-get install -s --no-install-recommends \
  -o Dir::State::status="$TMP/status" $run_pkgs >"$TMP/sim" 2>&1; then
  awk '/^Inst / {print $2}' "$TMP/sim" | sort >"$TMP/inst"
  bad=$(grep -E '^(lib)?(openmpi|mpi-|libmpi|mpich|slurm|munge|libmunge|clang|libclang|llvm|libllvm|libcmocka|python3-pytest|python3-nbclient|python3-nbformat|python3-ipykernel|python3-h5py-mpi|libhdf5-openmpi|libhdf5-mpich)' \
    "$TMP/inst" | tr '\n' ' ')
  n=$(wc -l <"$TMP/inst")
  [ -z "$bad" ] && [ "$n" -gt 0 ] &&
    ok "make run's packages install $n packages on a fresh machine, none of them a test package" ||
    not_ok "make run's packages pull in no test package" "$n packages; test ones: $bad"
else
  not_ok "apt-get simulates make run's install" "$(tail -n 5 "$TMP/sim")"
fi

echo "# c. make run's configuration"
if cmake -S "$SRC" -B "$TMP/build" -DSIM_BUILD_TESTS=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON >"$TMP/cmake" 2>&1; then
  if grep -q 'AIFSIM_MPI:BOOL=OFF' "$TMP/build/CMakeCache.txt" &&
    ! grep -qi 'cmocka' "$TMP/build/CMakeCache.txt"; then
    ok "configures without tests, MPI or cmocka"
  else
    not_ok "configures without tests, MPI or cmocka" \
      "$(grep -iE 'AIFSIM_MPI|cmocka' "$TMP/build/CMakeCache.txt")"
  fi
else
  not_ok "configures with -DSIM_BUILD_TESTS=OFF and no MPI" \
    "$(tail -n 10 "$TMP/cmake")"
fi
finish
