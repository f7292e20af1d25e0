#!/usr/bin/env bash
# Benchmarks clmemprobe against a plain C loop on the same runtime (see scripts/bench/main.go).
#   scripts/bench.sh            1,000,000 creates of 1 KiB and 2,000 fills of 1 MiB, 5 repetitions (CPU runtimes)
#   scripts/bench.sh --quick    small counts, 3 repetitions (CI runs this)
#   scripts/bench.sh --gpu N --devices 1 --reps 3   one GPU: fills to the first failure (N 1 MiB buffers, more than it
#                               holds), 64 MiB fills to the first failure, 260,000 creates; and the time to the loop
# Other flags go to the harness: --platform N, --devices N, --reps N, --out DIR.
# PoCL alone gets two devices, as in scripts/probe.sh.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
mkdir -p bin
CGO_ENABLED=0 go build -o bin/clmemprobe ./cmd/clmemprobe
${CC:-cc} -O2 -Wall -Wextra -pthread -o bin/cloop scripts/cloop/cloop.c -ldl
vendors=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}
if [ -z "${POCL_DEVICES:-}" ] && [ -d "$vendors" ] && [ "$(ls "$vendors"/*.icd 2>/dev/null | grep -vc pocl)" = 0 ]; then
  export POCL_DEVICES="pthread pthread"
fi
exec go run ./scripts/bench "$@"
