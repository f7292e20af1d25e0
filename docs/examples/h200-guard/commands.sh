#!/bin/bash
# The host guard after 1231cd5 on one H200: a batched NVIDIA fill loop of use-host-ptr buffers (1 MiB of
# host memory each) with the reserve 2 GiB below available memory, MemAvailable watched beside it; and the
# plain fill loop to the device's failure with the default reserve.
source .device/opencl-env.sh
B=$PWD/.device/clmemprobe
R=$OUT/r; mkdir -p $R
for k in 1 2 3; do
  avail=$(awk '/^MemAvailable:/ { print $2 * 1024 }' /proc/meminfo)
  reserve=$((avail - 2 * 1024 * 1024 * 1024))
  ( low=$avail; while [ ! -e /tmp/stopwatch ]; do
      a=$(awk '/^MemAvailable:/ { print $2 * 1024 }' /proc/meminfo); [ "$a" -lt "$low" ] && low=$a
    done; echo "$low" > /tmp/low ) &
  $B run --strategies shared --flags use-host-ptr --touch fill --max-allocs 100000 --host-reserve ${reserve}B --out $R/guard-$k > $R/guard-$k.txt 2>&1
  echo "rc=$?" >> $R/guard-$k.txt
  touch /tmp/stopwatch; wait; rm -f /tmp/stopwatch
  echo "reserve $reserve lowest $(cat /tmp/low) below_by $((reserve - $(cat /tmp/low)))" >> $R/guard-$k.txt
  rm -f $R/guard-$k/samples.jsonl
done
$B run --strategies shared --touch fill --max-allocs 200000 --out $R/fill > $R/fill.txt 2>&1; echo "rc=$?" >> $R/fill.txt
rm -f $R/fill/samples.jsonl
tar -C $OUT -czf $OUT/h200-guard.tgz r && rm -rf $R
