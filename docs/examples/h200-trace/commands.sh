#!/bin/bash
# Issue 21 proof on one H200: what trace's layer costs a create loop, and a traced program of the project's own
# (fill and wait until the device is full) against run's loop.
# From a clone's top folder, on a machine with NVIDIA's OpenCL driver and an ICD loader, after
# scripts/setup.sh --tests (the C compiler, the OpenCL headers and libOpenCL.so that trace's layer and the
# test programs build with), scripts/probe.sh (it builds bin/clmemprobe) and
# scripts/traceprog/build.sh bin/traceprog (the trace test programs):
#   bash docs/examples/h200-trace/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
TP=${TRACEPROG:-bin/traceprog/traceprog}
R=${1:-h200-trace}
mkdir -p "$R"
R=$(cd "$R" && pwd) # trace builds its layer under XDG_CACHE_HOME, which must be an absolute path
export XDG_CACHE_HOME="$R/cache"
nvidia-smi --query-gpu=index,name,memory.used,driver_version --format=csv > "$R/gpu.csv" 2>&1
CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 9 > "$R/bench-auto.txt" 2>&1
CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 5 --via layer > "$R/bench-layer.txt" 2>&1
"$B" trace --timeout 300s --out "$R/trace-fill" -- "$TP" fill 1048576 > "$R/trace-fill.txt" 2>&1; echo "rc=$?" >> "$R/trace-fill.txt"
"$B" report --format markdown "$R/trace-fill/trace.json" > "$R/trace-fill.md" 2>&1
"$B" run --devices 0 --strategies shared --touch fill --attribution per-buffer --out "$R/run-fill" -q > "$R/run-fill.txt" 2>&1; echo "rc=$?" >> "$R/run-fill.txt"
rm -f "$R"/*/samples.jsonl
