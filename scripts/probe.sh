#!/usr/bin/env bash
# Quick start: sets up an OpenCL runtime where none is registered (PoCL, with two CPU devices, like the
# two-GPU case the tool comes from) and a Go toolchain, builds clmemprobe into bin/ and runs the allocation
# probe with its defaults. Arguments go to `clmemprobe run`, for example:
#   scripts/probe.sh --touch fill --max-allocs 300
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
bash scripts/setup.sh
. scripts/go-path.sh
echo "probe: building bin/clmemprobe" >&2
CGO_ENABLED=0 go build -o bin/clmemprobe ./cmd/clmemprobe
# PoCL alone: give it two devices so the multi-device strategies mean something.
vendors=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}
if [ -z "${POCL_DEVICES:-}" ] && [ -d "$vendors" ] && [ "$(ls "$vendors"/*.icd 2>/dev/null | grep -vc pocl)" = 0 ]; then
  export POCL_DEVICES="pthread pthread"
fi
bin/clmemprobe devices
exec bin/clmemprobe run "$@"
