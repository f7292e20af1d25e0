#!/bin/bash
# run --touch fill proves placement (issue 31): 8 GiB and 16 GiB buffers, whose 4-byte fills the H200's
# driver hangs on or leaves unwritten, filled with a pattern that keeps the element count under 2^31 and the
# first buffer's last page read back; nvidia-smi's memory samples beside them. From a clone, after
# scripts/probe.sh has built bin/clmemprobe:
#   bash docs/examples/h200-fill-proof/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
R=${1:-h200-fill-proof}
mkdir -p "$R"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader -lms 250 > "$R/gpu.csv" 2>&1 &
smi=$!
for s in 8GiB 16GiB; do
  echo "\$ clmemprobe run --touch fill --size $s --strategies shared --max-allocs 100" > "$R/fill-$s.txt"
  "$B" run --touch fill --size "$s" --strategies shared --max-allocs 100 --out "$R/fill-$s" -q >> "$R/fill-$s.txt" 2>&1
  echo "exit $?" >> "$R/fill-$s.txt"
done
kill "$smi"
cp "$R/fill-16GiB/run.json" "$R/fill-16GiB.json"
rm -rf "$R/fill-8GiB" "$R/fill-16GiB"
