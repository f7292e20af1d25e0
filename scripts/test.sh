#!/usr/bin/env bash
# Runs the whole test suite: sets up what it needs (PoCL, the ICD loader, a C compiler and the OpenCL
# headers for the fault-injection runtime), then go vet and go test. With OpenCL set up, a test that needs
# it fails instead of skipping (CLMEMPROBE_REQUIRE_OPENCL=1).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
bash scripts/setup.sh --tests
export CLMEMPROBE_REQUIRE_OPENCL=1
go vet ./...
go test -count=1 -timeout 20m ./... "$@"
