#!/bin/bash
# Issue 45 on one H100: trace's ledger on NVIDIA's runtime (the two-path program and a fill to the device's
# first failure), the layer's cost with the ledger off and on after the same plain run, and a fill run's
# timeline. From a clone's top folder, on a machine with NVIDIA's OpenCL driver and an ICD loader, after
# scripts/setup.sh --tests, scripts/probe.sh (it builds bin/clmemprobe) and
# scripts/traceprog/build.sh bin/traceprog (the trace test programs, leak among them):
#   bash docs/examples/h100-ledger/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
TP=${TRACEPROG:-bin/traceprog}
R=${1:-h100-ledger}
mkdir -p "$R"
R=$(cd "$R" && pwd)
export XDG_CACHE_HOME="$R/cache"
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv > "$R/smi.csv"
"$B" trace --out "$R/leak" -- "$TP/leak" > "$R/leak.txt" 2>&1
"$B" report --format markdown "$R/leak/trace.json" > "$R/leak.md" 2>&1
"$B" trace --out "$R/tfill" -- "$TP/traceprog" fill $((1 << 20)) > "$R/tfill.txt" 2>&1
CLMEMPROBE=$B TRACEPROG=$TP/traceprog PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 15 --ledger-sample off,512KiB > "$R/bench-1k.txt" 2>&1
CLMEMPROBE=$B TRACEPROG=$TP/traceprog PIN_CPU=3 bash scripts/trace-bench.sh --count 260000 --size 1048576 --reps 15 --ledger-sample off,512KiB > "$R/bench-1m.txt" 2>&1
nvidia-smi --query-gpu=index,memory.used --format=csv -lms 250 > "$R/fill-smi.csv" 2>&1 &
smi=$!
"$B" run --touch fill --out "$R/fill" > "$R/fill.txt" 2>&1
kill $smi
# Read here with pprof (any machine with Go):
#   go tool pprof -top h100-ledger/leak/live-at-exit.pb.gz
