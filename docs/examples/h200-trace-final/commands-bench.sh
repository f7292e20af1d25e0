#!/bin/bash
# Issue 21 on one H200: two more series of the layer's cost, 15 pairs each, with the final layer.
source .device/opencl-env.sh
B=$PWD/.device/clmemprobe
TP=$PWD/.device/traceprog
export CPATH=$PWD/.device/include XDG_CACHE_HOME=/tmp/clmcache
R=$OUT/r; mkdir -p $R
for s in 1 2; do
  CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 15 > $R/bench-auto-$s.txt 2>&1
done
tar -C $OUT -czf $OUT/h200-bench2.tgz r && rm -rf $R
