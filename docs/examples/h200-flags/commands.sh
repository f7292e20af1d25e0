#!/bin/bash
# Issue 21 proof on one H200: buffer flags, their host cost per buffer, touch fill and none.
# From a clone, on a machine with NVIDIA's OpenCL driver and an ICD loader, after scripts/probe.sh has built
# bin/clmemprobe:
#   bash docs/examples/h200-flags/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
R=${1:-h200-flags}
mkdir -p "$R"
nvidia-smi --query-gpu=index,name,memory.used,memory.total,driver_version --format=csv > "$R/gpu.csv" 2>&1
free -b > "$R/free.txt"
for touch in fill none; do
  "$B" run --devices 0 --strategies shared,per-device --touch $touch --max-allocs 3000 \
    --flag-sets "read-write;use-host-ptr;copy-host-ptr;alloc-host-ptr" --out "$R/flags-$touch" -q --format table > "$R/flags-$touch.txt" 2>&1
  echo "rc=$?" >> "$R/flags-$touch.txt"
  "$B" report --format markdown "$R/flags-$touch" > "$R/flags-$touch.md" 2>&1
done
# A vendor flag NVIDIA's runtime may not take, and the size it would lift.
"$B" run --devices 0 --strategies shared --max-allocs 10 --flags 0x800000 --out "$R/vendor" -q > "$R/vendor.txt" 2>&1; echo "rc=$?" >> "$R/vendor.txt"
"$B" run --devices 0 --strategies shared --size 36GiB --max-allocs 1 --out "$R/oversize" -q > "$R/oversize.txt" 2>&1; echo "rc=$?" >> "$R/oversize.txt"
"$B" run --devices 0 --strategies shared --size 36GiB --max-allocs 1 --flags 0x800000 --out "$R/oversize-flag" -q > "$R/oversize-flag.txt" 2>&1; echo "rc=$?" >> "$R/oversize-flag.txt"
# alloc-host-ptr to the end: where does a host-visible buffer's memory come from?
"$B" run --devices 0 --strategies per-device --touch fill --max-allocs 200000 --flags alloc-host-ptr --timeout 150s --out "$R/alloc-to-end" -q > "$R/alloc-to-end.txt" 2>&1; echo "rc=$?" >> "$R/alloc-to-end.txt"
rm -f "$R"/*/samples.jsonl
