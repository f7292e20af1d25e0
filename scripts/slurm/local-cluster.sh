#!/usr/bin/env bash
# A real single-node Slurm on this machine, from Debian's packages, to try the recipes in this folder and to
# test them: munged, slurmctld and slurmd run as plain daemons (no systemd), with every file (config, key,
# spool, state, logs, sockets, pids) under one folder and ports of their own, so nothing of the machine's own
# Slurm or munge is touched. Needs root.
#
#   scripts/slurm/local-cluster.sh install      apt-get the packages (slurmctld slurmd slurm-client munge)
#   scripts/slurm/local-cluster.sh up DIR       start a cluster in DIR (wiped first); prints the SLURM_CONF line
#   scripts/slurm/local-cluster.sh down DIR     cancel every job, stop the daemons, check nothing is left
#
# Then: export SLURM_CONF=DIR/slurm.conf; sbatch ...
set -euo pipefail

say() { echo "slurm: $*" >&2; }
die() { say "$*"; exit 1; }

# The node's name in Slurm; slurmd is told it (-N), so the machine's host name does not matter.
node=clmemprobe-node

install() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null && command -v munged >/dev/null; then
    say "slurmctld, slurmd, slurm-client and munge are installed"
    return
  fi
  command -v apt-get >/dev/null || die "no apt-get: install slurmctld, slurmd, slurm-client and munge with your package manager"
  say "installing slurmctld slurmd slurm-client munge"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null ||
    die "apt-get install slurmctld slurmd slurm-client munge failed; run it by hand to see why"
}

failed_to_start() {
  say "$1 did not start; the last lines of its log:"
  tail -n 5 "$2/$1.log" >&2 || true
  down "$2" >/dev/null 2>&1 || true
  exit 1
}

up() {
  local dir=$1
  [ "$(id -u)" = 0 ] || die "a local cluster needs root (slurmd starts jobs as their users)"
  case "$dir" in /*) ;; *) dir=$(pwd)/$dir ;; esac
  # Wipe what an earlier cluster left: stale state makes slurmctld recover old jobs.
  [ -e "$dir/slurmctld.pid" ] && down "$dir" || true
  rm -rf "$dir"
  mkdir -p "$dir"/{state,spool,munge}
  chmod 700 "$dir/munge"
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge/munge.key"
  # --force: munged otherwise refuses a key or socket under a folder others can write into (/tmp).
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"
  local mem
  mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
  cat >"$dir/slurm.conf" <<EOF
ClusterName=clmemprobe-local
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MinJobAge=3600
SlurmdTimeout=30
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$dir/slurm.conf"
  # A daemon that cannot start says why only in its log file (slurmd needs cgroup mounted under /sys/fs/cgroup,
  # for example); show those lines instead of exiting without a word.
  slurmctld -f "$SLURM_CONF" || failed_to_start slurmctld "$dir"
  slurmd -f "$SLURM_CONF" -N "$node" || failed_to_start slurmd "$dir"
  local i
  for i in $(seq 1 60); do
    if sinfo -h -N -o '%T' 2>/dev/null | grep -qx idle; then
      say "up in $dir: export SLURM_CONF=$SLURM_CONF"
      return
    fi
    sleep 0.5
  done
  say "the node did not become idle in 30 s; the last lines of the logs:"
  tail -n 5 "$dir/slurmctld.log" "$dir/slurmd.log" "$dir/munge/munged.log" >&2 || true
  down "$dir"
  exit 1
}

# ours lists the processes of the cluster in $1 other than this script and its children: the daemons
# started with its slurm.conf in their environment (slurmctld, slurmd), and what slurmd started from them
# (slurmstepd, the jobs).
ours() {
  local p pid ppid
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [ "$pid" = $$ ] && continue
    ppid=$(awk '/^PPid:/ {print $2}' "$p/status" 2>/dev/null) || continue
    [ "$ppid" = $$ ] && continue
    if { tr "\0" "\n" <"$p/environ"; } 2>/dev/null | grep -qxF "SLURM_CONF=$1/slurm.conf"; then
      echo "$pid"
    fi
  done
}

down() {
  local dir=$1
  case "$dir" in /*) ;; *) dir=$(pwd)/$dir ;; esac
  local conf="$dir/slurm.conf" i f pid
  # Jobs first: killing only the daemons leaves job steps (slurmstepd and the job's processes) running.
  if [ -f "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
    SLURM_CONF=$conf scancel --full --quiet --partition=local 2>/dev/null || true
    for i in $(seq 1 40); do
      [ -z "$(SLURM_CONF=$conf squeue -h -t RUNNING,PENDING,COMPLETING 2>/dev/null)" ] && break
      sleep 0.25
    done
  fi
  for f in slurmd.pid slurmctld.pid munge/munged.pid; do
    [ -f "$dir/$f" ] || continue
    pid=$(cat "$dir/$f")
    kill "$pid" 2>/dev/null || true
    for i in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  done
  # Whatever a step still runs goes too.
  for pid in $(ours "$dir"); do kill -9 "$pid" 2>/dev/null || true; done
  sleep 0.2
  local left
  left=$(ours "$dir")
  if [ -f "$dir/munge/munged.pid" ] && kill -0 "$(cat "$dir/munge/munged.pid")" 2>/dev/null; then
    left="$left $(cat "$dir/munge/munged.pid")"
  fi
  if [ -n "${left// /}" ]; then
    say "processes of the cluster in $dir are still running:"
    ps -o pid,args -p "${left// /,}" >&2 || true
    exit 1
  fi
  say "down: no daemon or job of $dir is left"
}

case "${1:-}" in
  install) install ;;
  up) up "${2:?usage: local-cluster.sh up DIR}" ;;
  down) down "${2:?usage: local-cluster.sh down DIR}" ;;
  *) die "usage: local-cluster.sh install | up DIR | down DIR" ;;
esac
