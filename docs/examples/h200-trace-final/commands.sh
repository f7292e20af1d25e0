#!/bin/bash
# Issue 21 on one H200, the final layer: a failed command on the newest buffer (fill) and on an older one
# (later: all buffers made first, filled after), one cost series, and threads taking turns.
# From a clone's top folder, on a machine with NVIDIA's OpenCL driver and an ICD loader, after
# scripts/setup.sh --tests (the C compiler, the OpenCL headers and libOpenCL.so that trace's layer and the
# test programs build with), scripts/probe.sh (it builds bin/clmemprobe) and
# scripts/traceprog/build.sh bin/traceprog (the trace test programs):
#   bash docs/examples/h200-trace-final/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
TP=${TRACEPROG:-bin/traceprog/traceprog}
R=${1:-h200-trace-final}
mkdir -p "$R"
R=$(cd "$R" && pwd) # trace builds its layer under XDG_CACHE_HOME, which must be an absolute path
export XDG_CACHE_HOME="$R/cache"
nvidia-smi --query-gpu=index,name,memory.used,driver_version --format=csv > "$R/gpu.csv" 2>&1
"$B" trace --timeout 300s --out "$R/trace-fill" -- "$TP" fill 1048576 > "$R/trace-fill.txt" 2>&1; echo "rc=$?" >> "$R/trace-fill.txt"
"$B" trace --timeout 300s --out "$R/trace-later" -- "$TP" later 1048576 200000 > "$R/trace-later.txt" 2>&1; echo "rc=$?" >> "$R/trace-later.txt"
CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 9 > "$R/bench-auto.txt" 2>&1
"$TP" relay 8 500 > "$R/relay-plain.txt" 2>&1
"$B" trace -q --via layer --format json --out "$R/relay" -- "$TP" relay 8 500 > /dev/null 2>&1; echo "rc=$?" > "$R/relay-rc.txt"
rm -f "$R"/*/samples.jsonl
