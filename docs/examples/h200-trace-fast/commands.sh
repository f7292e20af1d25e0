#!/bin/bash
# Issue 21 on one H200, with the fast-ring layer: its cost to a create loop, threads taking turns (the order),
# threads at once (the counts), and the traced fill against run's loop.
# From a clone's top folder, on a machine with NVIDIA's OpenCL driver and an ICD loader, after
# scripts/setup.sh --tests (the C compiler, the OpenCL headers and libOpenCL.so that trace's layer and the
# test programs build with), scripts/probe.sh (it builds bin/clmemprobe) and
# scripts/traceprog/build.sh bin/traceprog (the trace test programs):
#   bash docs/examples/h200-trace-fast/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
TP=${TRACEPROG:-bin/traceprog/traceprog}
R=${1:-h200-trace-fast}
mkdir -p "$R"
R=$(cd "$R" && pwd) # trace builds its layer under XDG_CACHE_HOME, which must be an absolute path
export XDG_CACHE_HOME="$R/cache"
nvidia-smi --query-gpu=index,name,memory.used,driver_version --format=csv > "$R/gpu.csv" 2>&1
nproc > "$R/nproc.txt"
CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 9 > "$R/bench-auto.txt" 2>&1
CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 9 --via layer > "$R/bench-layer.txt" 2>&1
CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 5 --via preload > "$R/bench-preload.txt" 2>&1
for v in layer preload; do
  "$TP" relay 8 500 > "$R/relay-plain-$v.txt" 2>&1
  "$B" trace -q --via $v --format json --out "$R/relay-$v" -- "$TP" relay 8 500 > "$R/relay-$v.txt" 2>&1; echo "rc=$?" >> "$R/relay-$v.txt"
done
"$B" trace -q --format json --out "$R/threads" -- "$TP" threads 16 5001 > "$R/threads.txt" 2>&1; echo "rc=$?" >> "$R/threads.txt"
"$B" trace --timeout 300s --out "$R/trace-fill" -- "$TP" fill 1048576 > "$R/trace-fill.txt" 2>&1; echo "rc=$?" >> "$R/trace-fill.txt"
rm -f "$R"/*/samples.jsonl
