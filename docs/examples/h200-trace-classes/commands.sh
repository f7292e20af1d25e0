#!/bin/bash
# Issue 29 on one H200: a program that reaches OpenCL through a plugin opened with dlopen(RTLD_LOCAL) (the
# loader in a local scope, as a Python extension module has it; the machine has no pyopencl) fails at the
# same buffer traced as untraced, through each way in; one that opens the loader itself (dlopen + dlsym);
# beside another process holding 37 GiB, the trace's limit and run's; the layer's cost to the create loop.
# From a clone's top folder, on a machine with NVIDIA's OpenCL driver and an ICD loader, after
# scripts/setup.sh --tests (the C compiler, the OpenCL headers and libOpenCL.so that trace's layer and the
# test programs build with), scripts/probe.sh (it builds bin/clmemprobe),
# scripts/traceprog/build.sh bin/traceprog (traceprog, classhost and the classprog builds, in that folder),
# and cc -O2 -o bin/holdmem scripts/holdmem/holdmem.c -ldl (holdmem, the other process on the GPU):
#   bash docs/examples/h200-trace-classes/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
TP=${TRACEPROG_DIR:-bin/traceprog}
HOLDMEM=${HOLDMEM:-bin/holdmem}
R=${1:-h200-trace-classes}
mkdir -p "$R"
R=$(cd "$R" && pwd) # trace builds its layer under XDG_CACHE_HOME, which must be an absolute path
export XDG_CACHE_HOME="$R/cache"
nvidia-smi --query-gpu=index,name,memory.used,driver_version --format=csv > "$R/gpu.csv" 2>&1
P=("$TP/classhost" "$TP/classprog-plugin.so" fill 1048576 0)
"${P[@]}" > "$R/plugin-plain.out" 2> "$R/plugin-plain.err"; echo "rc=$?" > "$R/plugin-plain.rc"
for via in auto layer preload; do
  "$B" trace -q --via $via --timeout 300s --out "$R/plugin-$via" -o "$R/plugin-$via.txt" -- "${P[@]}" > "$R/plugin-$via.out" 2> "$R/plugin-$via.err"
  echo "rc=$?" > "$R/plugin-$via.rc"
done
"$TP/classprog-dlopen" fill 1048576 0 > "$R/dlopen-plain.out" 2>&1
"$B" trace -q --timeout 300s --out "$R/dlopen-auto" -o "$R/dlopen-auto.txt" -- "$TP/classprog-dlopen" fill 1048576 0 > "$R/dlopen-auto.out" 2>&1
"$HOLDMEM" 0 0 37 600 > "$R/holdmem.txt" 2>&1 &
H=$!
for i in $(seq 90); do grep -q holding "$R/holdmem.txt" && break; sleep 1; done
"${P[@]}" > "$R/shared-plain.out" 2>&1
"$B" trace -q --timeout 300s --out "$R/plugin-shared" -o "$R/plugin-shared.txt" -- "${P[@]}" > "$R/plugin-shared.out" 2>&1
"$B" run -q --touch fill --strategies shared --max-allocs 200000 --out "$R/run-shared" > "$R/run-shared.txt" 2>&1
kill $H; wait $H 2>/dev/null
CLMEMPROBE=$B TRACEPROG=$TP/traceprog PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 9 > "$R/bench-auto.txt" 2>&1
rm -f "$R"/*/samples.jsonl "$R"/*/run.png "$R"/*/run.svg
# bench.sh (run second): the layer's cost once more, this build and the one before this issue (a build of
# commit 4d5ffa9), 11 repetitions each, back to back.
