#!/bin/bash
# The layer's cost to traceprog's create loop on one H200 (1,000,000 creates of 1 KiB, the program on CPU 3
# alone): this build, and the build before issue 29 (4d5ffa9, .device/clmemprobe-4d5ffa9), one series after
# the other, 11 pairs each.
source .device/opencl-env.sh
TP=$PWD/.device/tp
export CPATH=$PWD/.device/include XDG_CACHE_HOME=/tmp/clmcache
for b in clmemprobe clmemprobe-4d5ffa9 clmemprobe clmemprobe-4d5ffa9; do
  CLMEMPROBE=$PWD/.device/$b TRACEPROG=$TP/traceprog PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 11 >> $OUT/bench-$b.txt 2>&1
done
