#!/usr/bin/env bash
# Benchmarks clmemprobe against a plain C loop on the same runtime (see scripts/bench/main.go).
#   scripts/bench.sh            full: 1,000,000 buffers touch none, 2,000 touch fill, 5 repetitions
#   scripts/bench.sh --quick    small counts, 3 repetitions (CI runs this)
# Other flags go to the harness: --platform N, --devices N, --out DIR, --fill-count N, --none-count N.
# PoCL alone gets two devices, as in scripts/probe.sh.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
mkdir -p bin
CGO_ENABLED=0 go build -o bin/clmemprobe ./cmd/clmemprobe
${CC:-cc} -O2 -Wall -Wextra -o bin/cloop scripts/cloop/cloop.c -ldl
vendors=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}
if [ -z "${POCL_DEVICES:-}" ] && [ -d "$vendors" ] && [ "$(ls "$vendors"/*.icd 2>/dev/null | grep -vc pocl)" = 0 ]; then
  export POCL_DEVICES="pthread pthread"
fi
exec go run ./scripts/bench "$@"
