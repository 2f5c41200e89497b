#!/usr/bin/env bash
# test_slurm.sh - sweeps on a real Slurm: a single-node cluster (slurmctld,
# slurmd and munged under a temporary config) started by this script.
#
#   bash tests/cli/test_slurm.sh AIFSIM_BINARY SOURCE_DIR [MPIEXEC]
#
# Needs root and Debian's slurmctld, slurmd, slurm-client and munge (.ci/run
# installs them). Where they are missing or the daemons do not start, the
# test FAILS with the reason and the daemons' logs; it never skips.
# On scenarios/sweep-powercap.yaml (30 points), each case's summary.csv and
# summary.h5 must be byte-identical to a serial sweep's:
#   a. scenarios/sweep-powercap.sbatch as an array of 3 with --set
#      duration=2h passed through, then a dependent --collect job that
#      reads the options from the sweep's folder (2 h points: duration_s);
#   b. srun -n 2 inside sbatch -n 2: each task its half, exit 0, the last
#      task to finish writes the summary; and an array of 2 with srun -n 2
#      in each task: each array task's shard split again by srun's task;
#   c. mpirun -np 2 inside sbatch -n 2 (MPI's ranks win over srun's);
#   d. the array, one task cancelled with scancel mid-run, resubmitted: no
#      finished point recomputed (inode and mtime unchanged).
# The daemons are stopped and the folder removed on any exit (trap); the
# last check is that none of them is left.
set -u

if [ $# -lt 2 ]; then
  echo "usage: bash $0 AIFSIM_BINARY SOURCE_DIR [MPIEXEC]" >&2
  exit 2
fi
AIFSIM=$(realpath "$1")
SRC=$(realpath "$2")
MPIEXEC=${3:-}
SWEEP=scenarios/sweep-powercap.yaml # relative to SRC, as the sbatch has it
SBATCH_SCRIPT=$SRC/scenarios/sweep-powercap.sbatch
NPOINTS=30
RED=(--set duration=2h)  # the reduced sweep
LONG=(--set duration=1d) # long enough to cancel a task mid-run
WAIT_JOB=300             # seconds a job may take before the test gives up

# Nothing of the environment this runs in may shard the sweeps or point
# the commands at another cluster.
for v in $(env | sed -n 's/^\(SLURM_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset OMPI_COMM_WORLD_SIZE PMI_SIZE PMIX_RANK MPI_LOCALNRANKS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

NAME=slurm
. "$(dirname "$0")/lib.sh"
# Under `make asan`: full stacks on malloc, so that LSan names OpenMPI's
# frames and tests/asan/lsan.supp matches them (the fast unwinder loses
# frames in libraries built without frame pointers).
# Its points run about ten times slower there, so the long sweep's days
# are 6 h: a point still takes seconds, so task 0 is cancelled mid-run,
# and the suite stays inside its timeout (the 1 d sweep took over 900 s).
if [ -n "${ASAN_OPTIONS:-}" ]; then
  export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
  LONG=(--set duration=6h)
fi
chmod 755 "$TMP"
CONF=$TMP/slurm/slurm.conf

# ---- The cluster ---------------------------------------------------------

# Our own daemons and job steps: the processes whose environment names
# our slurm.conf (slurmstepd inherits slurmd's), and munged by its pid.
our_pids() {
  local d comm
  # From /proc rather than pgrep: procps may be missing on a bare machine.
  for d in /proc/[0-9]*; do
    comm=$(cat "$d/comm" 2>/dev/null) || continue
    case $comm in slurmctld | slurmd | slurmstepd) ;; *) continue ;; esac
    # A process gone since (or a zombie) has no environment.
    if tr '\0' '\n' 2>/dev/null <"$d/environ" |
      grep -qx "SLURM_CONF=$CONF"; then
      echo "${d#/proc/}"
    fi
  done
  if [ -s "$TMP/munge/pid" ] && kill -0 "$(cat "$TMP/munge/pid")" 2>/dev/null; then
    cat "$TMP/munge/pid"
  fi
}

# Cancels every job, then stops our daemons by pid (TERM, then KILL after
# a bounded wait). Safe to call twice.
stop_cluster() {
  local pids i
  if [ -s "$TMP/slurm/run/slurmctld.pid" ]; then
    timeout 10 scancel --quiet --user=root 2>/dev/null
    for i in $(seq 1 50); do
      [ -z "$(timeout 5 squeue -h 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  pids=$(our_pids)
  [ -n "$pids" ] && kill -TERM $pids 2>/dev/null
  for i in $(seq 1 50); do
    [ -z "$(our_pids)" ] && break
    sleep 0.2
  done
  pids=$(our_pids)
  [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
  sleep 0.2
}
slurm_cleanup() {
  stop_cluster
  cleanup
}
trap slurm_cleanup EXIT

# Prints the daemons' logs, for a failure's details.
daemon_logs() {
  local f
  for f in "$TMP"/munge/log "$TMP"/slurm/log/*.log; do
    [ -e "$f" ] && printf '%s:\n%s\n' "$f" "$(tail -n 15 "$f")"
  done
}

# Fails the whole test with the reason: what cannot run is not skipped.
cannot_run() {
  not_ok "a single-node Slurm cluster starts" "$@"
  finish
  exit 1
}

# Two free TCP ports on localhost.
free_ports() {
  python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])'
}

start_munge() {
  mkdir -p "$TMP/munge"
  dd if=/dev/urandom bs=1 count=1024 of="$TMP/munge/key" 2>/dev/null
  chmod 0400 "$TMP/munge/key"
  # As root (--force): the key and the socket live in our folder.
  munged --force --key-file="$TMP/munge/key" --socket="$TMP/munge/sock" \
    --pid-file="$TMP/munge/pid" --log-file="$TMP/munge/log" \
    --seed-file="$TMP/munge/seed" ||
    cannot_run "munged did not start" "$(daemon_logs)"
}

write_conf() {
  local host ports
  host=$(hostname -s)
  read -r -a ports <<<"$(free_ports)"
  mkdir -p "$TMP/slurm/state" "$TMP/slurm/spool" "$TMP/slurm/log" \
    "$TMP/slurm/run"
  cat >"$CONF" <<CONF
ClusterName=aifsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=${ports[0]}
SlurmdPort=${ports[1]}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$TMP/munge/sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$TMP/slurm/state
SlurmdSpoolDir=$TMP/slurm/spool
SlurmctldPidFile=$TMP/slurm/run/slurmctld.pid
SlurmdPidFile=$TMP/slurm/run/slurmd.pid
SlurmctldLogFile=$TMP/slurm/log/slurmctld.log
SlurmdLogFile=$TMP/slurm/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
MinJobAge=600
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
# Array tasks share the $(nproc) cores (OverSubscribe), so 3 run at once.
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
  export SLURM_CONF=$CONF
}

# Starts the cluster and waits (bounded) until the node is idle.
start_cluster() {
  local cmd state i
  [ "$(id -u)" -eq 0 ] || cannot_run "this test runs the daemons as root"
  for cmd in munged slurmctld slurmd sbatch srun squeue scontrol scancel \
    sinfo python3; do
    command -v "$cmd" >/dev/null ||
      cannot_run "$cmd not found: apt-get install slurmctld slurmd" \
        "slurm-client munge (.ci/run does)"
  done
  start_munge
  write_conf
  slurmctld -i || cannot_run "slurmctld did not start" "$(daemon_logs)"
  slurmd || cannot_run "slurmd did not start" "$(daemon_logs)"
  for i in $(seq 1 150); do
    state=$(timeout 5 sinfo -h -o %t 2>/dev/null)
    [ "$state" = idle ] && return 0
    sleep 0.2
  done
  cannot_run "the node is not idle after 30 s (sinfo: '$state')" \
    "$(daemon_logs)"
}

# ---- Jobs ------------------------------------------------------------------

# Submits with sbatch (arguments as for it) from SRC; prints the job id.
submit() {
  sbatch --parsable --chdir="$SRC" "$@" 2>>"$TMP/sbatch.err" | cut -d';' -f1
}

# Waits until none of the jobs is queued or running; 1 after WAIT_JOB s.
wait_jobs() {
  local i ids
  ids=$(
    IFS=,
    echo "$*"
  )
  for i in $(seq 1 $((WAIT_JOB * 5))); do
    [ -z "$(squeue -h -j "$ids" 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  return 1
}

# The states of a job (every task of an array), one a line.
job_states() {
  scontrol -o show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}

# Whether every task of the job completed with exit code 0.
job_ok() {
  local states
  states=$(job_states "$1")
  [ -n "$states" ] && [ -z "$(echo "$states" | grep -vx COMPLETED)" ] &&
    [ -z "$(scontrol -o show job "$1" | grep -v 'ExitCode=0:0')" ]
}

# Details of a job for a failure: its states and logs.
job_details() {
  echo "states: $(job_states "$1" | tr '\n' ' ')"
  cat "$TMP"/log/*"$1"* 2>/dev/null | head -n 20
  cat "$TMP/sbatch.err" 2>/dev/null | tail -n 5
}

# check LABEL JOB CONDITION-COMMAND...: ok if the command succeeds.
check() {
  local label=$1 job=$2
  shift 2
  if "$@"; then ok "$label"; else not_ok "$label" "$(job_details "$job")"; fi
}

same_summary() {
  cmp -s "$1/summary.csv" "$2/summary.csv" && cmp -s "$1/summary.h5" "$2/summary.h5"
}
count_points() { find "$1" -maxdepth 1 -name 'point-*.h5' | wc -l; }

# Every row's duration_s in summary.csv is $2 seconds.
durations_are() {
  local col
  col=$(head -n 1 "$1/summary.csv" | tr ',' '\n' | grep -nx duration_s | cut -d: -f1)
  [ -n "$col" ] &&
    [ "$(tail -n +2 "$1/summary.csv" | cut -d, -f"$col" | sort -u)" = "$2" ]
}

# ---- Setup: the serial references and the cluster -------------------------

T0=$(date +%s)
mkdir -p "$TMP/bin" "$TMP/log"
ln -s "$AIFSIM" "$TMP/bin/aifsim"
export PATH=$TMP/bin:$PATH
cd "$SRC" || exit 1

echo "# serial references"
aifsim sweep "$SWEEP" -o "$TMP/serial" "${RED[@]}" --quiet >/dev/null 2>&1 &&
  aifsim sweep "$SWEEP" -o "$TMP/serial-long" "${LONG[@]}" --quiet >/dev/null 2>&1 ||
  cannot_run "the serial reference sweeps failed"

echo "# the cluster"
start_cluster
ok "a single-node Slurm cluster starts (node idle)"

# ---------------------------------------------------------------------------
echo "# a. an sbatch array of 3 with --set, then a dependent --collect job"
# ---------------------------------------------------------------------------
ARR=$TMP/array
jid=$(submit --array=0-2 --output="$TMP/log/array-%A_%a.log" \
  "$SBATCH_SCRIPT" -o "$ARR" "${RED[@]}")
cid=$(submit --dependency=afterany:"$jid" --output="$TMP/log/collect-%j.log" \
  --wrap "aifsim sweep $SWEEP --collect $ARR")
if ! wait_jobs "$jid" "$cid"; then
  not_ok "array + collect: done within $WAIT_JOB s" "$(job_details "$jid")"
fi
check "array of 3: every task completed, exit 0" "$jid" job_ok "$jid"
check "array task 1 says the array decided its shard" "$jid" \
  grep -q "shard 1/3 of $NPOINTS points, from the Slurm array (task 1 of 3)" \
  "$TMP/log/array-${jid}_1.log"
check "collect job: completed, exit 0" "$cid" job_ok "$cid"
check "collect job: read --set duration=2h from the folder" "$cid" \
  grep -q -- "--set duration=2h: $NPOINTS points: $NPOINTS ok" \
  "$TMP/log/collect-$cid.log"
check "array + collect: summary identical to serial" "$cid" \
  same_summary "$TMP/serial" "$ARR"
check "array + collect: 2 h points (duration_s 7200)" "$cid" \
  durations_are "$ARR" 7200

# ---------------------------------------------------------------------------
echo "# b. srun -n 2 inside sbatch -n 2"
# ---------------------------------------------------------------------------
SRUN=$TMP/srun
jid=$(submit -n 2 --output="$TMP/log/srun-%j.log" \
  --wrap "srun -n 2 aifsim sweep $SWEEP -o $SRUN ${RED[*]} --quiet")
wait_jobs "$jid" || not_ok "srun -n 2: done within $WAIT_JOB s"
check "srun -n 2: completed, exit 0" "$jid" job_ok "$jid"
check "srun -n 2: each task says srun decided its shard" "$jid" \
  [ "$(grep -c "from srun (task [01] of 2)" "$TMP/log/srun-$jid.log")" -eq 2 ]
check "srun -n 2: $((NPOINTS / 2)) points each, none left to another process" "$jid" \
  [ "$(grep -c "$((NPOINTS / 2)) of $NPOINTS points: $((NPOINTS / 2)) run, 0 already complete, 0 failed;" \
    "$TMP/log/srun-$jid.log")" -eq 2 ]
check "srun -n 2: the last task wrote the summary" "$jid" \
  grep -q "every shard is done: summary in" "$TMP/log/srun-$jid.log"
check "srun -n 2: summary identical to serial" "$jid" \
  same_summary "$TMP/serial" "$SRUN"

# ---------------------------------------------------------------------------
echo "# b2. an array of 2, srun -n 2 in each task"
# ---------------------------------------------------------------------------
MIX=$TMP/array-srun
jid=$(submit --array=0-1 -n 2 --output="$TMP/log/mix-%A_%a.log" \
  --wrap "srun -n 2 aifsim sweep $SWEEP -o $MIX ${RED[*]} --quiet")
wait_jobs "$jid" || not_ok "array of srun: done within $WAIT_JOB s"
check "array of 2 x srun -n 2: every task completed, exit 0" "$jid" \
  job_ok "$jid"
check "array task 1, srun task 1: shard 3/4, from both" "$jid" \
  grep -q "shard 3/4 of $NPOINTS points, from the Slurm array (task 1 of 2) split by srun (task 1 of 2)" \
  "$TMP/log/mix-${jid}_1.log"
check "array of 2 x srun -n 2: summary identical to serial" "$jid" \
  same_summary "$TMP/serial" "$MIX"

# ---------------------------------------------------------------------------
echo "# c. mpirun -np 2 inside sbatch -n 2"
# ---------------------------------------------------------------------------
MPI=$TMP/mpi
if [ -z "$MPIEXEC" ]; then
  not_ok "mpirun -np 2 inside sbatch -n 2" \
    "no MPIEXEC given: aifsim was built without MPI (AIFSIM_MPI off)"
else
  jid=$(submit -n 2 --output="$TMP/log/mpi-%j.log" \
    --wrap "$MPIEXEC -np 2 --oversubscribe aifsim sweep $SWEEP -o $MPI ${RED[*]} --quiet")
  wait_jobs "$jid" || not_ok "mpirun -np 2: done within $WAIT_JOB s"
  check "mpirun -np 2: completed, exit 0" "$jid" job_ok "$jid"
  check "mpirun -np 2: MPI's ranks decided (not srun's variables)" "$jid" \
    grep -q "$NPOINTS points over 2 MPI ranks" "$TMP/log/mpi-$jid.log"
  check "mpirun -np 2: summary identical to serial" "$jid" \
    same_summary "$TMP/serial" "$MPI"
fi

# ---------------------------------------------------------------------------
echo "# d. an array task cancelled mid-run, the array resubmitted"
# ---------------------------------------------------------------------------
CAN=$TMP/cancel
jid=$(submit --array=0-2 --output="$TMP/log/cancel-%A_%a.log" \
  "$SBATCH_SCRIPT" -o "$CAN" "${LONG[@]}")
# Task 0 runs points 0, 3, ..., NPOINTS - 3: cancel it once its first is
# complete.
PER=$((NPOINTS / 3)) # points a task of the array of 3 runs
for _ in $(seq 1 $((WAIT_JOB * 20))); do
  [ -e "$CAN/point-0000.h5" ] && break
  [ -z "$(squeue -h -j "${jid}_0" 2>/dev/null)" ] && break
  sleep 0.05
done
scancel "${jid}_0"
wait_jobs "$jid" || not_ok "cancelled array: done within $WAIT_JOB s"
mine0=$(for p in $(seq 0 3 $((NPOINTS - 1))); do
  [ -e "$CAN/$(printf point-%04d.h5 "$p")" ] && echo
done | wc -l)
check "scancel: task 0 cancelled" "$jid" \
  [ "$(scontrol -o show job "${jid}_0" | sed -n 's/.*JobState=\([A-Z]*\).*/\1/p')" = CANCELLED ]
check "scancel: task 0 stopped mid-run ($mine0 of its $PER points complete)" \
  "$jid" [ "$mine0" -ge 1 -a "$mine0" -lt "$PER" ]
check "scancel: no summary while points are missing" "$jid" \
  [ ! -e "$CAN/summary.csv" ]
before=$(cd "$CAN" && stat -c '%n %i %.9Y' point-*.h5)
jid=$(submit --array=0-2 --output="$TMP/log/resubmit-%A_%a.log" \
  "$SBATCH_SCRIPT" -o "$CAN" "${LONG[@]}")
wait_jobs "$jid" || not_ok "resubmitted array: done within $WAIT_JOB s"
check "resubmitted: every task completed, exit 0" "$jid" job_ok "$jid"
check "resubmitted: task 0 ran only its $((PER - mine0)) missing points" "$jid" \
  grep -q "$PER of $NPOINTS points: $((PER - mine0)) run, $mine0 already complete" \
  "$TMP/log/resubmit-${jid}_0.log"
check "resubmitted: tasks 1 and 2 ran nothing" "$jid" \
  [ "$(cat "$TMP/log/resubmit-${jid}_1.log" "$TMP/log/resubmit-${jid}_2.log" |
    grep -c "0 run, $PER already complete")" -eq 2 ]
after=$(cd "$CAN" && stat -c '%n %i %.9Y' $(echo "$before" | cut -d' ' -f1))
check "resubmitted: no finished point recomputed (inode, mtime)" "$jid" \
  [ "$before" = "$after" ]
check "resubmitted: $NPOINTS point files" "$jid" \
  [ "$(count_points "$CAN")" -eq "$NPOINTS" ]
check "resubmitted: summary identical to serial" "$jid" \
  same_summary "$TMP/serial-long" "$CAN"

# ---------------------------------------------------------------------------
echo "# the daemons stop"
# ---------------------------------------------------------------------------
stop_cluster
left=$(our_pids)
if [ -z "$left" ]; then
  ok "daemons and job steps gone"
else
  not_ok "daemons and job steps gone" "left: $(for p in $left; do
    echo "$p $(tr '\0' ' ' <"/proc/$p/cmdline")"
  done)"
fi
echo "# run time $(($(date +%s) - T0)) s"
finish
