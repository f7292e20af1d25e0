#!/usr/bin/env bash
# Measures what clmemprobe trace's layer costs a program's create loop: scripts/traceprog's bench mode
# (COUNT creates of SIZE bytes in one context, timed by the program itself around the loop only), run
# plainly and under `clmemprobe trace`, alternating, REPS times each; prints each median and the ratio.
#   scripts/trace-bench.sh [--count N] [--size BYTES] [--reps N] [--via auto|layer|preload] [--ledger-sample S]
# (--ledger-sample is trace's own flag: the ledger's sampling, 0 for every buffer, off for no ledger; a list
# such as off,512KiB traces each way in every repetition, after the same plain run, in turn first.)
# (CLMEMPROBE=path/to/clmemprobe uses that build instead of building one, TRACEPROG=path/to/traceprog that
# program; PIN_CPU=N runs the program, plain and traced, on CPU N alone (taskset), the tool on the others, so
# that the scheduler's placement does not swamp a difference of a few percent.)
# Defaults: 1,000,000 creates of 1 KiB, 5 repetitions, --via auto, on the default platform (PoCL alone gets
# one device: POCL_DEVICES=pthread). The target: a ratio under 1.10 on PoCL. It prints the ratio of the
# medians and, beside it, the median of the pairs' ratios.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
count=1000000 size=1024 reps=5 via=auto ledger=512KiB
while [ $# -gt 0 ]; do
  case $1 in
    --count) count=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --via) via=$2; shift 2 ;;
    --ledger-sample) ledger=$2; shift 2 ;;
    *) echo "trace-bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p bin
# CLMEMPROBE names a clmemprobe already built (a machine without Go); else it is built here.
tool=${CLMEMPROBE:-bin/clmemprobe}
[ -n "${CLMEMPROBE:-}" ] || CGO_ENABLED=0 go build -o bin/clmemprobe ./cmd/clmemprobe
prog=${TRACEPROG:-$(bash scripts/traceprog/build.sh bin/traceprog)}
pin=()
[ -z "${PIN_CPU:-}" ] || pin=(taskset -c "$PIN_CPU")
export POCL_DEVICES=${POCL_DEVICES:-pthread}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# seconds OUTPUT: the loop's time the program printed ("creates N seconds S").
seconds() { awk '$1 == "creates" { print $4 }' <<<"$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: >"$work/plain"
IFS=, read -r -a ledgers <<<"$ledger"
for l in "${ledgers[@]}"; do : >"$work/traced-$l"; done
for i in $(seq "$reps"); do
  seconds "$("${pin[@]}" "$prog" bench "$count" "$size")" >>"$work/plain"
  line="trace-bench: run $i: plain $(tail -n1 "$work/plain") s"
  # The ways in turn take the place right after the plain run: a machine that slows as it goes (a warming
  # runtime, its caches) weighs on each alike.
  order=()
  for k in "${!ledgers[@]}"; do order+=("${ledgers[$(((k + i) % ${#ledgers[@]}))]}"); done
  for l in "${order[@]}"; do
    out=$("$tool" trace -q --via "$via" --ledger-sample "$l" --format json --out "$work/t$i-$l" -- "${pin[@]}" "$prog" bench "$count" "$size")
    seconds "$out" >>"$work/traced-$l"
    dropped=$(awk -F': ' '/"records_dropped"/ { gsub(",", "", $2); print $2; exit }' "$work/t$i-$l/trace.json")
    mech=$(awk -F'"' '/"interception"/ { print $4; exit }' "$work/t$i-$l/trace.json")
    line="$line, traced (ledger $l) $(tail -n1 "$work/traced-$l") s ($mech, $dropped records dropped)"
  done
  echo "$line" >&2
done
p=$(median <"$work/plain")
for l in "${ledgers[@]}"; do
  t=$(median <"$work/traced-$l")
  # The median of each pair's ratio too: a pair ran back to back, so a slow spell of the machine moves both.
  pairs=$(paste "$work/plain" "$work/traced-$l" | awk '{ print $2 / $1 }' | median)
  awk -v p="$p" -v t="$t" -v q="$pairs" -v n="$count" -v s="$size" -v r="$reps" -v l="$l" 'BEGIN {
    printf "%d creates of %d bytes, median of %d (ledger: %s): plain %.3f s, traced %.3f s, ratio %.3f (%.0f ns per create added); median of the pairs\x27 ratios %.3f\n", n, s, r, l, p, t, t / p, (t - p) / n * 1e9, q }'
done
