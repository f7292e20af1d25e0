#!/bin/bash
# Issue 29 on one H200: a program that reaches OpenCL through a plugin opened with dlopen(RTLD_LOCAL) (the
# loader in a local scope, as a Python extension module has it; the machine has no pyopencl) fails at the
# same buffer traced as untraced, through each way in; one that opens the loader itself (dlopen + dlsym);
# beside another process holding 37 GiB, the trace's limit and run's; the layer's cost to the create loop.
source .device/opencl-env.sh
B=$PWD/.device/clmemprobe
TP=$PWD/.device/tp
export CPATH=$PWD/.device/include XDG_CACHE_HOME=/tmp/clmcache
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=index,name,memory.used,driver_version --format=csv > $R/gpu.csv 2>&1
P="$TP/classhost $TP/classprog-plugin.so fill 1048576 0"
$P > $R/plugin-plain.out 2> $R/plugin-plain.err; echo "rc=$?" > $R/plugin-plain.rc
for via in auto layer preload; do
  $B trace -q --via $via --timeout 300s --out $R/plugin-$via -o $R/plugin-$via.txt -- $P > $R/plugin-$via.out 2> $R/plugin-$via.err
  echo "rc=$?" > $R/plugin-$via.rc
done
$TP/classprog-dlopen fill 1048576 0 > $R/dlopen-plain.out 2>&1
$B trace -q --timeout 300s --out $R/dlopen-auto -o $R/dlopen-auto.txt -- $TP/classprog-dlopen fill 1048576 0 > $R/dlopen-auto.out 2>&1
.device/holdmem 0 0 37 600 > $R/holdmem.txt 2>&1 &
H=$!
for i in $(seq 90); do grep -q holding $R/holdmem.txt && break; sleep 1; done
$P > $R/shared-plain.out 2>&1
$B trace -q --timeout 300s --out $R/plugin-shared -o $R/plugin-shared.txt -- $P > $R/plugin-shared.out 2>&1
$B run -q --touch fill --strategies shared --max-allocs 200000 --out $R/run-shared > $R/run-shared.txt 2>&1
kill $H; wait $H 2>/dev/null
CLMEMPROBE=$B TRACEPROG=$TP/traceprog PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 9 > $R/bench-auto.txt 2>&1
rm -f $R/*/samples.jsonl $R/*/run.png $R/*/run.svg
tar -C $OUT -czf $OUT/h200-trace-classes.tgz r && rm -rf $R
ls -la $OUT
# bench.sh (run second): the layer's cost once more, this build and the one before this issue (4d5ffa9,
# built as .device/clmemprobe-4d5ffa9), 11 repetitions each, back to back.
