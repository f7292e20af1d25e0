#!/usr/bin/env bash
# Benchmarks clmemprobe against its baselines, each measured in the same run (issue 43's figures):
#   - the allocation loops against a plain C loop on the same runtime, and the fixed costs: devices against
#     clinfo -l, run's set-up against the C loop's, a short traced program against it untraced
#     (scripts/bench/main.go);
#   - merge at fleet scale against the build before this work (scripts/merge-bench.sh).
#   scripts/bench.sh            the loops on a CPU runtime (1,000,000 creates of 1 KiB, 2,000 fills of 1 MiB, 5
#                               repetitions), the fixed costs (9 each), and merge (10,000 files, 1,000,000 nodes)
#   scripts/bench.sh --quick    small counts, 3 repetitions, no merge (CI runs this)
#   scripts/bench.sh --gpu N --devices 1 --reps 7   one GPU: fills to the first failure (N 1 MiB buffers, more than
#                               it holds), 64 MiB fills to the first failure, 260,000 creates, and the fixed
#                               costs; no merge (it is the CPU's: run it where the files are)
#   scripts/bench.sh --no-merge the same without merge
# Other flags go to the harness: --platform N, --devices N, --reps N, --fixed-reps N, --out DIR, --clinfo PATH.
# merge-bench takes its own (--nodes N, --issue-nodes N, --baseline REF): run scripts/merge-bench.sh for those.
# PoCL alone gets two devices, as in scripts/probe.sh.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
merge=1
args=()
for a in "$@"; do
  case "$a" in
    --no-merge) merge=0 ;;
    --quick|--gpu|-quick|-gpu|--quick=*|--gpu=*|-quick=*|-gpu=*) merge=0; args+=("$a") ;;
    *) args+=("$a") ;;
  esac
done
mkdir -p bin
CGO_ENABLED=0 go build -o bin/clmemprobe ./cmd/clmemprobe
${CC:-cc} -O2 -Wall -Wextra -pthread -o bin/cloop scripts/cloop/cloop.c -ldl
vendors=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}
if [ -z "${POCL_DEVICES:-}" ] && [ -d "$vendors" ] && [ "$(ls "$vendors"/*.icd 2>/dev/null | grep -vc pocl)" = 0 ]; then
  export POCL_DEVICES="pthread pthread"
fi
go run ./scripts/bench "${args[@]+"${args[@]}"}"
if [ $merge = 1 ]; then
  echo
  bash scripts/merge-bench.sh
fi
