#!/usr/bin/env bash
# On one H100 (nvidia-h100-x1): largest and run in a memory cgroup of 4 GiB while another process holds
# 20 GiB of the device, and a Ctrl-C during largest. Run from the checkout's root after
# `source .device/opencl-env.sh`; results go to $OUT.
set -u
B=.device/clmemprobe
cc -O2 -o /tmp/holdmem scripts/holdmem/holdmem.c -ldl
/tmp/holdmem 0 0 20 900 > "$OUT/holdmem.txt" 2>&1 &
hold=$!
for i in $(seq 1 120); do grep -q holding "$OUT/holdmem.txt" && break; sleep 0.5; done
cat "$OUT/holdmem.txt"
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv > "$OUT/smi-before.csv"
cg=/sys/fs/cgroup/clmemprobe-h100
echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
mkdir -p "$cg" && echo $((4 << 30)) > "$cg/memory.max" && echo 0 > "$cg/memory.swap.max"
incg() { sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"; }
incg $B largest --patterns 128 --format json -o "$OUT/largest-cgroup.json"; echo "largest rc=$?" | tee "$OUT/rc.txt"
incg $B run --touch fill --strategies shared,migrate-first --out "$OUT/run-cgroup" -q; echo "run rc=$?" | tee -a "$OUT/rc.txt"
cat "$cg/memory.events" > "$OUT/cgroup-events.txt"
incg $B largest --patterns 128 --format json -o "$OUT/largest-interrupted.json" &
p=$!; sleep 15; kill -INT $p; wait $p; echo "interrupted largest rc=$?" | tee -a "$OUT/rc.txt"
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv > "$OUT/smi-after.csv"
kill $hold; wait $hold 2>/dev/null
for p in $(cat "$cg/cgroup.procs"); do kill -9 "$p"; done; sleep 0.5; rmdir "$cg"
