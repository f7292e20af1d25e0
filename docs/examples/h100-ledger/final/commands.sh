#!/bin/bash
# Issue 45 on one H100, the final layer: leak's four modes traced (two paths, images and SVM, sub-buffers,
# one helper for two callers) and the layer's cost with the ledger off and on. From a clone's top folder,
# after scripts/setup.sh --tests, scripts/probe.sh and scripts/traceprog/build.sh bin/traceprog:
#   bash docs/examples/h100-ledger/final/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
TP=${TRACEPROG:-bin/traceprog}
R=${1:-h100-ledger-final}
mkdir -p "$R"
R=$(cd "$R" && pwd)
export XDG_CACHE_HOME="$R/cache"
for m in "" images subs paths; do
  "$B" trace --out "$R/leak-${m:-default}" -- "$TP/leak" $m > "$R/leak-${m:-default}.txt" 2>&1
done
CLMEMPROBE=$B TRACEPROG=$TP/traceprog PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 9 --ledger-sample off,512KiB > "$R/bench-1k-final.txt" 2>&1
