#!/bin/bash
# Issue 21 on one H200: a traced program with device memory sampled (NVML in the tool's child), the same with
# another process holding 40 GiB of the GPU, run --like the trace, and the trace's bundle.
source .device/opencl-env.sh
B=$PWD/.device/clmemprobe
TP=$PWD/.device/traceprog
export CPATH=$PWD/.device/include XDG_CACHE_HOME=/tmp/clmcache
R=$OUT/r; mkdir -p $R
$B trace --timeout 300s --out $R/trace-fill -- $TP fill 1048576 > $R/trace-fill.txt 2>&1; echo "rc=$?" >> $R/trace-fill.txt
$B report --format markdown $R/trace-fill > $R/trace-fill.md 2>&1
$B bundle -q -o $R/trace-fill-ticket.tar.gz $R/trace-fill > $R/bundle.txt 2>&1; echo "rc=$?" >> $R/bundle.txt
.device/holdmem 0 0 40 600 > $R/holdmem.txt 2>&1 &
H=$!
for i in $(seq 60); do grep -q holding $R/holdmem.txt && break; sleep 1; done
$B trace --timeout 300s --out $R/trace-shared -- $TP fill 1048576 > $R/trace-shared.txt 2>&1; echo "rc=$?" >> $R/trace-shared.txt
kill $H; wait $H 2>/dev/null
$B run -q --like $R/trace-fill --touch fill --strategies shared,per-device --max-allocs 200000 --out $R/like > $R/like.txt 2>&1; echo "rc=$?" >> $R/like.txt
rm -f $R/*/samples.jsonl $R/*/run.png $R/*/run.svg
tar -C $OUT -czf $OUT/h200-trace2.tgz r && rm -rf $R
ls -la $OUT
