#!/bin/bash
# The host guard after 1231cd5 on one H200: a batched NVIDIA fill loop of use-host-ptr buffers (1 MiB of
# host memory each) with the reserve 2 GiB below available memory, MemAvailable watched beside it; and the
# plain fill loop to the device's failure with the default reserve.
# From a clone, on a machine with NVIDIA's OpenCL driver and an ICD loader, after scripts/probe.sh has built
# bin/clmemprobe:
#   bash docs/examples/h200-guard/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
R=${1:-h200-guard}
mkdir -p "$R"
# MemAvailable is in KiB; the shell multiplies it (mawk, Debian's and Ubuntu's awk, prints a product this
# large as 2.48363e+10, which the shell's arithmetic refuses). S: scratch files (the watcher's stop signal
# and the lowest MemAvailable it saw).
S=$(mktemp -d)
for k in 1 2 3; do
  avail=$(($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) * 1024))
  reserve=$((avail - 2 * 1024 * 1024 * 1024))
  ( low=$avail; while [ ! -e "$S/stopwatch" ]; do
      a=$(($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) * 1024)); [ "$a" -lt "$low" ] && low=$a
    done; echo "$low" > "$S/low" ) &
  "$B" run --strategies shared --flags use-host-ptr --touch fill --max-allocs 100000 --host-reserve ${reserve}B --out "$R/guard-$k" > "$R/guard-$k.txt" 2>&1
  echo "rc=$?" >> "$R/guard-$k.txt"
  touch "$S/stopwatch"; wait; rm -f "$S/stopwatch"
  echo "reserve $reserve lowest $(cat "$S/low") below_by $((reserve - $(cat "$S/low")))" >> "$R/guard-$k.txt"
  rm -f "$R/guard-$k/samples.jsonl"
done
"$B" run --strategies shared --touch fill --max-allocs 200000 --out "$R/fill" > "$R/fill.txt" 2>&1; echo "rc=$?" >> "$R/fill.txt"
rm -f "$R/fill/samples.jsonl"
rm -rf "$S"
