#!/bin/bash
# Issue 21 on one H200, the final layer: a failed command on the newest buffer (fill) and on an older one
# (later: all buffers made first, filled after), one cost series, and threads taking turns.
source .device/opencl-env.sh
B=$PWD/.device/clmemprobe
TP=$PWD/.device/traceprog
export CPATH=$PWD/.device/include XDG_CACHE_HOME=/tmp/clmcache
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=index,name,memory.used,driver_version --format=csv > $R/gpu.csv 2>&1
$B trace --timeout 300s --out $R/trace-fill -- $TP fill 1048576 > $R/trace-fill.txt 2>&1; echo "rc=$?" >> $R/trace-fill.txt
$B trace --timeout 300s --out $R/trace-later -- $TP later 1048576 200000 > $R/trace-later.txt 2>&1; echo "rc=$?" >> $R/trace-later.txt
CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 9 > $R/bench-auto.txt 2>&1
$TP relay 8 500 > $R/relay-plain.txt 2>&1
$B trace -q --via layer --format json --out $R/relay -- $TP relay 8 500 > /dev/null 2>&1; echo "rc=$?" > $R/relay-rc.txt
rm -f $R/*/samples.jsonl
tar -C $OUT -czf $OUT/h200-trace4.tgz r && rm -rf $R
ls -la $OUT
