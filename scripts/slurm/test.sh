#!/usr/bin/env bash
# The Slurm recipes on a real single-node Slurm: installs Debian's packages where missing, then runs the Go
# test that starts the cluster (local-cluster.sh), submits clmemprobe.sbatch as a 4-task array on PoCL and
# merge.sbatch after it, checks the merge field by field, adds a deviant fifth node, and tears it all down.
# Needs root, and a machine that can host slurmd: without a cgroup file system (a container that mounts
# none) slurmd does not start ("No filesystem mounted on /sys/fs/cgroup"), so the test says so and is
# skipped, unless CLMEMPROBE_REQUIRE_SLURM=1 (CI as root) asks for it, which makes that a failure.
# CLMEMPROBE_CGROUP_ROOT is where to look (default /sys/fs/cgroup), for the test of this decision.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top"
cgroup_root=${CLMEMPROBE_CGROUP_ROOT:-/sys/fs/cgroup}
# slurmd needs cgroup v2 mounted there, or the v1 hierarchies under it: a mount of type cgroup or cgroup2
# at that path or one level below (the mount table escapes spaces, which a cgroup path never holds).
if ! awk -v root="${cgroup_root%/}" '($3 == "cgroup2" || $3 == "cgroup") && ($2 == root || index($2, root "/") == 1) { found = 1 }
    END { exit !found }' /proc/self/mounts; then
  if [ "${CLMEMPROBE_REQUIRE_SLURM:-}" = 1 ]; then
    echo "slurm: no cgroup file system mounted on $cgroup_root, so slurmd cannot run here; CLMEMPROBE_REQUIRE_SLURM=1 asks for the test" >&2
    exit 1
  fi
  echo "slurm: skipped the Slurm recipe test: no cgroup file system mounted on $cgroup_root, which slurmd needs (a container without one cannot host it)"
  exit 0
fi
. scripts/go-path.sh
bash scripts/slurm/local-cluster.sh install
CLMEMPROBE_SLURM_TEST=1 go test -count=1 -v -run TestSlurmRecipes ./scripts/slurm/ 2>&1 | grep -v '^=== RUN'
