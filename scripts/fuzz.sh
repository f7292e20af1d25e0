#!/usr/bin/env bash
# Fuzzes the result loader and every renderer (FuzzLoadAndRender in ./report) for N inputs (default 8,000,
# about 20 s on a 2-core machine once built; building with the fuzzer's instrumentation takes about two
# minutes more on a fresh machine). The seeds (files that broke a renderer once, and what earlier fuzzing
# found) run in the suite (scripts/test.sh) on every change; this looks further, and writes what it finds
# under report/testdata/fuzz/FuzzLoadAndRender, where the suite then runs it as a seed.
#   scripts/fuzz.sh [N]
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
n=${1:-8000}
case $n in
  '' | *[!0-9]*) echo "fuzz: N is a count of inputs, such as 8000 (got '$n')" >&2; exit 2 ;;
esac
bash scripts/setup.sh --tests
. scripts/go-path.sh
# Budgets in executions, not seconds: Go 1.26's fuzzing coordinator can report its own -fuzztime deadline as
# a failure ("context deadline exceeded", no input written: go.dev/issue/75804, fixed in Go 1.27).
# Minimizing a new finding takes at most 100 more.
go test -run '^$' -fuzz FuzzLoadAndRender -fuzztime "${n}x" -fuzzminimizetime 100x ./report
