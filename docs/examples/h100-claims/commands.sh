#!/bin/bash
# Issue 42 on one H100 with NVIDIA's OpenCL driver and an ICD loader: every sentence of the default run, a
# fill run of all five strategies, a trace of a program beside another process and largest, each held
# against nvidia-smi and a plain C loop (scripts/cloop). From a clone's top folder, as root, with
# bin/clmemprobe (scripts/probe.sh builds it), the C loop, the trace test program and holdmem built
# (scripts/cloop/cloop.c, scripts/traceprog/build.sh, scripts/holdmem/holdmem.c) and the OpenCL headers on
# the compiler's path (trace builds its layer with cc):
#   bash docs/examples/h100-claims/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
CLOOP=${CLOOP:-bin/cloop}
TP=${TRACEPROG:-bin/traceprog/traceprog}
HOLD=${HOLDMEM:-bin/holdmem}
R=${1:-h100-claims}
mkdir -p "$R"
R=$(cd "$R" && pwd)
export XDG_CACHE_HOME="$R/cache"
smi() { nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv,noheader > "$R/smi-$1.csv"; }
smi start
"$B" version > "$R/version.txt" 2>&1
# 1. The default run, as a new user types it: 1 MiB, 100,000 buffers, no touch. nvidia-smi sampled beside it.
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > "$R/smi-default-run.csv" &
s=$!
"$B" run --out "$R/run-default" > "$R/run-default.txt" 2>&1; echo "run-default rc=$?" >> "$R/rc.txt"
kill "$s"
# 2. The plain C loop: create and fill 1 MiB buffers until one fails.
"$CLOOP" 0 200000 1048576 fill > "$R/cloop-fill.json" 2>&1; echo "cloop rc=$?" >> "$R/rc.txt"
# 3. A fill run of all five strategies.
"$B" run --touch fill --strategies shared,per-device,migrate-first,device-list,pool --out "$R/run-fill" > "$R/run-fill.txt" 2>&1
echo "run-fill rc=$?" >> "$R/rc.txt"
# 4. Beside another process holding 20 GiB of the device: the C loop, a trace of a program that fills
#    1 MiB buffers until one fails, and largest.
"$HOLD" 0 0 20 900 > "$R/holdmem.txt" 2>&1 &
h=$!
for i in $(seq 1 120); do grep -q holding "$R/holdmem.txt" && break; sleep 0.5; done
smi held
"$CLOOP" 0 200000 1048576 fill > "$R/cloop-fill-held.json" 2>&1; echo "cloop held rc=$?" >> "$R/rc.txt"
"$B" trace --timeout 300s --out "$R/trace-held" -- "$TP" fill 1048576 > "$R/trace-held.txt" 2>&1; echo "trace rc=$?" >> "$R/rc.txt"
"$B" largest --patterns 128 --format json -o "$R/largest-held.json" 2> "$R/largest-held.stderr"; echo "largest held rc=$?" >> "$R/rc.txt"
kill "$h"; wait "$h" 2>/dev/null
# 5. largest alone.
"$B" largest --patterns 128 > "$R/largest.txt" 2>&1; echo "largest rc=$?" >> "$R/rc.txt"
smi end
rm -rf "$R/cache" "$R"/*/samples.jsonl
