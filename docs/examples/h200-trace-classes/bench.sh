#!/bin/bash
# The layer's cost to traceprog's create loop on one H200 (1,000,000 creates of 1 KiB, the program on CPU 3
# alone): this build, and the build before issue 29 (a build of commit 4d5ffa9), one series after the other,
# 11 pairs each. Needs NVIDIA's OpenCL driver registered with an ICD loader; from a clone, after
# scripts/probe.sh has built bin/clmemprobe and scripts/traceprog/build.sh bin/traceprog the test programs:
#   CLMEMPROBE_OLD=/path/to/clmemprobe-4d5ffa9 bash docs/examples/h200-trace-classes/bench.sh OUTDIR
set -u
NEW=${CLMEMPROBE:-bin/clmemprobe}
OLD=${CLMEMPROBE_OLD:?a build of commit 4d5ffa9}
TP=${TRACEPROG_DIR:-bin/traceprog}
R=${1:-h200-trace-classes-bench}
mkdir -p "$R"
R=$(cd "$R" && pwd)
export XDG_CACHE_HOME="$R/cache"
for b in new old new old; do
  bin=$NEW
  [ "$b" = old ] && bin=$OLD
  CLMEMPROBE=$bin TRACEPROG=$TP/traceprog PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 11 >> "$R/bench-$b.txt" 2>&1
done
