#!/bin/bash
# Issue 44 on one H100: the restructured build beside an older one (B_OLD), the same commands one after the
# other; the figures and verdicts are compared in summary.md.
#   bash docs/examples/h100-structure/commands.sh OUTDIR
set -u
R=${1:-h100-structure}; mkdir -p "$R"
B_NEW=${B_NEW:-clmemprobe} B_OLD=${B_OLD:-clmemprobe-old} TP=${TP:-scripts/traceprog/build}
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv > "$R/smi.csv"
for b in new old; do
  T=$B_NEW; [ $b = old ] && T=$B_OLD
  $T devices --format json > "$R/devices-$b.json"; echo "devices-$b rc=$?" >> "$R/rc.txt"
  $T run --format json --max-allocs 3000 > "$R/default-$b.json"; echo "default-$b rc=$?" >> "$R/rc.txt"
  $T run --touch fill --strategies shared,migrate-first --format json > "$R/fill-$b.json"; echo "fill-$b rc=$?" >> "$R/rc.txt"
  $T run --touch kernel --strategies per-device,device-list,pool --max-allocs 2000 --size 4MiB --format json > "$R/kernel-$b.json"; echo "kernel-$b rc=$?" >> "$R/rc.txt"
  $T largest --max-bytes 16GiB --format json > "$R/largest-$b.json"; echo "largest-$b rc=$?" >> "$R/rc.txt"
  $T exchange --format json > "$R/exchange-$b.json"; echo "exchange-$b rc=$?" >> "$R/rc.txt"
  $T trace --out "$R/tfill-$b" -- "$TP/traceprog" fill $((1<<20)) > "$R/tfill-$b.txt" 2>&1; echo "tfill-$b rc=$?" >> "$R/rc.txt"
  $T trace --out "$R/leak-$b" -- "$TP/leak" > "$R/leak-$b.txt" 2>&1; echo "leak-$b rc=$?" >> "$R/rc.txt"
  $T remedy --touch fill --strategies shared --max-allocs 100000 --format json > "$R/remedy-$b.json"; echo "remedy-$b rc=$?" >> "$R/rc.txt"
done
$B_NEW bundle -q -o "$R/fill-bundle.tar.gz" "$R/tfill-new/trace.json"; echo "bundle rc=$?" >> "$R/rc.txt"
