#!/usr/bin/env bash
# The Slurm recipes on a real single-node Slurm: installs Debian's packages where missing, then runs the Go
# test that starts the cluster (local-cluster.sh), submits clmemprobe.sbatch as a 4-task array on PoCL and
# merge.sbatch after it, checks the merge field by field, adds a deviant fifth node, and tears it all down.
# Needs root.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top"
. scripts/go-path.sh
bash scripts/slurm/local-cluster.sh install
CLMEMPROBE_SLURM_TEST=1 go test -count=1 -v -run TestSlurmRecipes ./scripts/slurm/ 2>&1 | grep -v '^=== RUN'
