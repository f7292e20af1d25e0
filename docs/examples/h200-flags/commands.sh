#!/bin/bash
# Issue 21 proof on one H200: buffer flags, their host cost per buffer, touch fill and none.
source .device/opencl-env.sh
B=.device/clmemprobe
nvidia-smi --query-gpu=index,name,memory.used,memory.total,driver_version --format=csv > $OUT/gpu.csv 2>&1
free -b > $OUT/free.txt
for touch in fill none; do
  $B run --devices 0 --strategies shared,per-device --touch $touch --max-allocs 3000 \
    --flag-sets "read-write;use-host-ptr;copy-host-ptr;alloc-host-ptr" --out $OUT/flags-$touch -q --format table > $OUT/flags-$touch.txt 2>&1
  echo "rc=$?" >> $OUT/flags-$touch.txt
  $B report --format markdown $OUT/flags-$touch > $OUT/flags-$touch.md 2>&1
done
# A vendor flag NVIDIA's runtime may not take, and the size it would lift.
$B run --devices 0 --strategies shared --max-allocs 10 --flags 0x800000 --out $OUT/vendor -q > $OUT/vendor.txt 2>&1; echo "rc=$?" >> $OUT/vendor.txt
$B run --devices 0 --strategies shared --size 36GiB --max-allocs 1 --out $OUT/oversize -q > $OUT/oversize.txt 2>&1; echo "rc=$?" >> $OUT/oversize.txt
$B run --devices 0 --strategies shared --size 36GiB --max-allocs 1 --flags 0x800000 --out $OUT/oversize-flag -q > $OUT/oversize-flag.txt 2>&1; echo "rc=$?" >> $OUT/oversize-flag.txt
# alloc-host-ptr to the end: where does a host-visible buffer's memory come from?
$B run --devices 0 --strategies per-device --touch fill --max-allocs 200000 --flags alloc-host-ptr --timeout 150s --out $OUT/alloc-to-end -q > $OUT/alloc-to-end.txt 2>&1; echo "rc=$?" >> $OUT/alloc-to-end.txt
rm -f $OUT/*/samples.jsonl
ls -la $OUT
