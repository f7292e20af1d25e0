#!/usr/bin/env bash
# Runs every check and the whole test suite: sets up what it needs (PoCL, the ICD loader, a C compiler and
# the OpenCL headers for the fault-injection runtime), then the gates and the tests. With OpenCL set up, a
# test that needs it fails instead of skipping (CLMEMPROBE_REQUIRE_OPENCL=1). Arguments go to the last
# `go test`, for example: scripts/test.sh -run Exchange (and then the Kubernetes and Slurm recipe tests are
# left out). As root, the Slurm recipes are tested on a real single-node Slurm (Debian's packages).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
bash scripts/setup.sh --tests
. scripts/go-path.sh
export CLMEMPROBE_REQUIRE_OPENCL=1
# Each step says how long the one before it took, so a slow step shows in CI's log.
last=$SECONDS
step() {
  echo "test: ($((SECONDS - last)) s) $*" >&2
  last=$SECONDS
}

step "go vet"
go vet ./...
step "go mod tidy -diff"
go mod tidy -diff
step "staticcheck and deadcode (versions pinned in scripts/tools)"
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
(cd scripts/tools && go build -o "$tools/" honnef.co/go/tools/cmd/staticcheck golang.org/x/tools/cmd/deadcode)
"$tools/staticcheck" ./...
dead=$("$tools/deadcode" -test ./...)
if [ -n "$dead" ]; then
  echo "$dead" >&2
  echo "test: the functions above are not reachable from any command or test: remove them" >&2
  exit 1
fi
step "no function over 80 lines (scripts/funclen: tests count, generated files do not)"
go run ./scripts/funclen .
step "go test -race on the engine's packages that start no worker (report/ starts no goroutine: its tests run once, below)"
CGO_ENABLED=1 go test -race -count=1 ./probe/...
step "the whole suite, one package at a time"
# One package at a time: the end-to-end tests read system-wide figures (MemAvailable, Committed_AS) that
# another package's tests, run beside them, would move.
# The output goes by as it comes; a failed suite ends with the names of what failed, which a long run's
# scrollback would otherwise hide.
log="$tools/suite.log"
if ! go test -p 1 -count=1 -timeout 20m ./... "$@" 2>&1 | tee "$log"; then
  echo "test: the suite failed; these failed:" >&2
  grep -E '^(\s*--- FAIL: |FAIL\s|panic: )' "$log" | sed 's/^/test:   /' >&2 || true
  exit 1
fi
[ $# -eq 0 ] || exit 0
step "the Kubernetes recipes, built with kustomize and decoded strictly into the API types (their own module)"
(cd scripts/kubernetes && go vet ./... && go test -count=1 ./...)
if [ "$(id -u)" = 0 ]; then
  step "the Slurm recipes on a real single-node Slurm"
  bash scripts/slurm/test.sh
elif [ "${CLMEMPROBE_REQUIRE_SLURM:-}" = 1 ]; then
  echo "test: the Slurm test starts daemons and needs root; CLMEMPROBE_REQUIRE_SLURM=1 asks for it" >&2
  exit 1
else
  step "skipped the Slurm test: it starts daemons and needs root (run scripts/slurm/test.sh as root)"
fi
step "done"
