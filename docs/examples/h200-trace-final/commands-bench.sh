#!/bin/bash
# Issue 21 on one H200: two more series of the layer's cost, 15 pairs each, with the final layer.
# From a clone's top folder, on a machine with NVIDIA's OpenCL driver and an ICD loader, after
# scripts/setup.sh --tests (the C compiler, the OpenCL headers and libOpenCL.so that trace's layer and the
# test programs build with), scripts/probe.sh (it builds bin/clmemprobe) and
# scripts/traceprog/build.sh bin/traceprog (the trace test programs):
#   bash docs/examples/h200-trace-final/commands-bench.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
TP=${TRACEPROG:-bin/traceprog/traceprog}
R=${1:-h200-trace-final}
mkdir -p "$R"
R=$(cd "$R" && pwd) # trace builds its layer under XDG_CACHE_HOME, which must be an absolute path
export XDG_CACHE_HOME="$R/cache"
for s in 1 2; do
  CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 15 > "$R/bench-auto-$s.txt" 2>&1
done
