#!/usr/bin/env bash
# Nightly regression run: runs a matrix of probes, keeps the results in a folder named by date and driver
# version, compares each with the same entry of the last earlier results and exits non-zero on regression.
#
#   scripts/regress.sh [--matrix FILE] [--results DIR] [--baseline DIR] [--tolerance 10%]
#
# The matrix file has one set of `clmemprobe run` flags per line (# starts a comment); the default matrix
# is the user's loop (touch none) and a placed-buffer run (touch fill). Results: DIR/<date>_<driver>/<n>/.
# Exit status: 0 nothing regressed (or no baseline yet), 1 a threshold regressed, 2 unusable results,
# 3 no OpenCL, other codes as clmemprobe's.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
matrix="" results="$top/results" baseline="" tolerance="10%"
while [ $# -gt 0 ]; do
  case "$1" in
    --matrix) matrix=$2; shift 2 ;;
    --results) results=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --tolerance) tolerance=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "regress: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
tool=${CLMEMPROBE:-}
if [ -z "$tool" ]; then
  (cd "$top" && CGO_ENABLED=0 go build -o bin/clmemprobe ./cmd/clmemprobe)
  tool="$top/bin/clmemprobe"
fi
if [ -n "$matrix" ]; then
  mapfile -t runs < <(grep -v '^\s*\(#\|$\)' "$matrix")
else
  runs=("--touch none --max-allocs 100000" "--touch fill --max-allocs 2000")
fi
driver=$("$tool" devices --json | grep -o '"driver_version": "[^"]*"' | head -1 | sed 's/.*: "//; s/"$//; s/[^A-Za-z0-9._+-]/_/g')
stamp="$(date -u +%Y-%m-%dT%H%M%SZ)_${driver:-unknown}"
mkdir -p "$results"
if [ -z "$baseline" ]; then
  baseline=$(ls -1d "$results"/*/ 2>/dev/null | sort | tail -1 || true)
fi
here="$results/$stamp"
mkdir -p "$here"
status=0
for i in "${!runs[@]}"; do
  dir="$here/$i"
  echo "regress: [$i] clmemprobe run ${runs[$i]}" >&2
  # shellcheck disable=SC2086
  "$tool" run ${runs[$i]} --out "$dir" > "$dir.txt" || { rc=$?; [ $rc -eq 5 ] || exit $rc; }
  printf '%s\n' "${runs[$i]}" > "$dir/flags"
  if [ -n "$baseline" ] && [ -f "$baseline/$i/run.json" ]; then
    if ! cmp -s "$baseline/$i/flags" "$dir/flags"; then
      echo "regress: [$i] the baseline ran other flags ($(cat "$baseline/$i/flags")): not compared" >&2
      continue
    fi
    rc=0
    "$tool" compare --tolerance "$tolerance" "$baseline/$i/run.json" "$dir/run.json" || rc=$?
    if [ $rc -gt $status ]; then status=$rc; fi
  fi
done
if [ -z "$baseline" ]; then
  echo "regress: first results in $here; later runs compare against them" >&2
else
  echo "regress: results in $here, compared with $baseline" >&2
fi
exit $status
