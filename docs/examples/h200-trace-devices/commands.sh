#!/bin/bash
# Issue 21 on one H200: a traced program with device memory sampled (NVML in the tool's child), the same with
# another process holding 40 GiB of the GPU, run --like the trace, and the trace's bundle.
# From a clone's top folder, on a machine with NVIDIA's OpenCL driver and an ICD loader, after
# scripts/setup.sh --tests (the C compiler, the OpenCL headers and libOpenCL.so that trace's layer and the
# test programs build with), scripts/probe.sh (it builds bin/clmemprobe),
# scripts/traceprog/build.sh bin/traceprog (the trace test programs), and
# cc -O2 -o bin/holdmem scripts/holdmem/holdmem.c -ldl (holdmem, the other process on the GPU):
#   bash docs/examples/h200-trace-devices/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
TP=${TRACEPROG:-bin/traceprog/traceprog}
HOLDMEM=${HOLDMEM:-bin/holdmem}
R=${1:-h200-trace-devices}
mkdir -p "$R"
R=$(cd "$R" && pwd) # trace builds its layer under XDG_CACHE_HOME, which must be an absolute path
export XDG_CACHE_HOME="$R/cache"
"$B" trace --timeout 300s --out "$R/trace-fill" -- "$TP" fill 1048576 > "$R/trace-fill.txt" 2>&1; echo "rc=$?" >> "$R/trace-fill.txt"
"$B" report --format markdown "$R/trace-fill" > "$R/trace-fill.md" 2>&1
"$B" bundle -q -o "$R/trace-fill-ticket.tar.gz" "$R/trace-fill" > "$R/bundle.txt" 2>&1; echo "rc=$?" >> "$R/bundle.txt"
"$HOLDMEM" 0 0 40 600 > "$R/holdmem.txt" 2>&1 &
H=$!
for i in $(seq 60); do grep -q holding "$R/holdmem.txt" && break; sleep 1; done
"$B" trace --timeout 300s --out "$R/trace-shared" -- "$TP" fill 1048576 > "$R/trace-shared.txt" 2>&1; echo "rc=$?" >> "$R/trace-shared.txt"
kill $H; wait $H 2>/dev/null
"$B" run -q --like "$R/trace-fill" --touch fill --strategies shared,per-device --max-allocs 200000 --out "$R/like" > "$R/like.txt" 2>&1; echo "rc=$?" >> "$R/like.txt"
rm -f "$R"/*/samples.jsonl "$R"/*/run.png "$R"/*/run.svg
