#!/bin/bash
# Issue 21 proof on one H200: what trace's layer costs a create loop, and a traced program of the project's own
# (fill and wait until the device is full) against run's loop.
source .device/opencl-env.sh
B=$PWD/.device/clmemprobe
TP=$PWD/.device/traceprog
export CPATH=$PWD/.device/include XDG_CACHE_HOME=/tmp/clmcache
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=index,name,memory.used,driver_version --format=csv > $R/gpu.csv 2>&1
CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 9 > $R/bench-auto.txt 2>&1
CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 5 --via layer > $R/bench-layer.txt 2>&1
$B trace --timeout 300s --out $R/trace-fill -- $TP fill 1048576 > $R/trace-fill.txt 2>&1; echo "rc=$?" >> $R/trace-fill.txt
$B report --format markdown $R/trace-fill/trace.json > $R/trace-fill.md 2>&1
$B run --devices 0 --strategies shared --touch fill --attribution per-buffer --out $R/run-fill -q > $R/run-fill.txt 2>&1; echo "rc=$?" >> $R/run-fill.txt
rm -f $R/*/samples.jsonl
tar -C $OUT -czf $OUT/h200-trace.tgz r && rm -rf $R
ls -la $OUT
