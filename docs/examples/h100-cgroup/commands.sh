#!/bin/bash
# Issue 46 on one H100 with NVIDIA's OpenCL driver and an ICD loader: largest and run inside a memory
# cgroup of 4 GiB (as root, cgroup v2) while another process (scripts/holdmem) holds 20 GiB of the device,
# then Ctrl-C during a largest of every pattern size. From a clone, as root, after scripts/probe.sh has
# built bin/clmemprobe:
#   bash docs/examples/h100-cgroup/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
R=${1:-h100-cgroup}
mkdir -p "$R" bin
cc -O2 -o bin/holdmem scripts/holdmem/holdmem.c -ldl
bin/holdmem 0 0 20 600 > "$R/holdmem.txt" 2>&1 &
hold=$!
for i in $(seq 1 120); do grep -q holding "$R/holdmem.txt" && break; sleep 0.5; done
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv > "$R/smi-before.csv"
cg=/sys/fs/cgroup/clmemprobe-example
echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
mkdir -p "$cg" && echo $((4 << 30)) > "$cg/memory.max" && echo 0 > "$cg/memory.swap.max"
incg() { sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"; }
incg "$B" largest --patterns 128 --format json -o "$R/largest-cgroup.json" 2> "$R/largest-cgroup.stderr"
echo "largest rc=$?" > "$R/rc.txt"
incg "$B" run --touch fill --strategies shared,migrate-first --out "$R/run-cgroup" -q > "$R/run-cgroup.txt" 2>&1
echo "run rc=$?" >> "$R/rc.txt"
cat "$cg/memory.events" > "$R/cgroup-events.txt"
# Every pattern size: the 1-byte fill of 2 GiB hangs on NVIDIA's driver, so the search is in flight at 4 s.
# A simple command in the background, so that $! is the tool itself once sh has exec'd it.
sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$B" largest --format json \
  -o "$R/largest-interrupted.json" 2> "$R/largest-interrupted.stderr" &
p=$!
sleep 4
kill -INT "$p"
wait "$p"
echo "interrupted largest rc=$?" >> "$R/rc.txt"
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv > "$R/smi-after.csv"
kill "$hold"
wait "$hold" 2>/dev/null
for q in $(cat "$cg/cgroup.procs"); do kill -9 "$q"; done
sleep 0.5
rmdir "$cg"
