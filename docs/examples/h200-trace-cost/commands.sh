#!/bin/bash
# Issue 21 on one H200 (2026-12-01): three device calls, in order. The first one's "faultcl" series
# (saved here as bench-pocl-auto-*.txt) ran on PoCL: faultcl did not build there (-Werror on the carried
# headers' deprecations), OCL_ICD_VENDORS came out empty, and the loader fell back to the machine's
# OCL_ICD_FILENAMES, PoCL first. The second call carried a libfaultcl.so built on the dev machine.
# Each call is a part below; run from a clone, the parts run one after the other, each into a folder of its
# own (OUTDIR/part3, part4, part5). From a clone's top folder, on a machine with NVIDIA's OpenCL driver, an
# ICD loader and (part 5) PoCL registered in /etc/OpenCL/vendors, after scripts/setup.sh --tests (the C
# compiler, the OpenCL headers and libOpenCL.so that trace's layer, the test programs and faultcl build
# with), scripts/probe.sh (it builds bin/clmemprobe), scripts/traceprog/build.sh bin/traceprog (the
# trace test programs) and, for parts 4 and 5, scripts/faultcl/build.sh bin/faultcl (the fault-injection
# runtime; FAULTCL names its libfaultcl.so):
#   bash docs/examples/h200-trace-cost/commands.sh OUTDIR
set -u

## part 3
# Issue 21 on one H200: the layer's added time per create measured against faultcl on this host's CPU
# (a create there costs tens of ns and barely varies), and one more NVIDIA series of 21 pairs.
B=${CLMEMPROBE:-bin/clmemprobe}
TP=${TRACEPROG:-bin/traceprog/traceprog}
R=${1:-h200-trace-cost}/part3
mkdir -p "$R"
R=$(cd "$R" && pwd) # trace builds its layer under XDG_CACHE_HOME, which must be an absolute path
export XDG_CACHE_HOME="$R/cache"
lscpu > "$R/lscpu.txt" 2>&1
fcl=$(bash scripts/faultcl/build.sh "$R/faultcl" 2>"$R/faultcl-build.txt" | tail -1)
echo "faultcl: $fcl" >> "$R/faultcl-build.txt"
for s in 1 2; do
  OCL_ICD_VENDORS=$fcl CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 15 > "$R/bench-faultcl-$s.txt" 2>&1
done
CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 21 > "$R/bench-nvidia-21.txt" 2>&1

## part 4
# Issue 21 on one H200: the layer's added time per create against faultcl (built on the dev machine, carried)
# on this host's CPU, where a create costs tens of ns and barely varies; the platform each series ran on.
B=${CLMEMPROBE:-bin/clmemprobe}
TP=${TRACEPROG:-bin/traceprog/traceprog}
FAULTCL=${FAULTCL:-bin/faultcl/libfaultcl.so}
R=${1:-h200-trace-cost}/part4
mkdir -p "$R"
R=$(cd "$R" && pwd) # trace builds its layer under XDG_CACHE_HOME, which must be an absolute path
export XDG_CACHE_HOME="$R/cache"
mkdir -p "$R/fcl/vendors" && echo "$(realpath "$FAULTCL")" > "$R/fcl/vendors/faultcl.icd"
OCL_ICD_VENDORS=$R/fcl/vendors "$B" devices > "$R/devices-faultcl.txt" 2>&1
"$B" devices > "$R/devices-nvidia.txt" 2>&1
ls -la /etc/OpenCL/vendors > "$R/etc-vendors.txt" 2>&1
for s in 1 2; do
  OCL_ICD_VENDORS=$R/fcl/vendors CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 15 > "$R/bench-faultcl-$s.txt" 2>&1
done

## part 5
# Issue 21 on the H200 host's CPU: what the layer costs a create loop on PoCL and faultcl, split into the
# loader's layer alone (the layer loaded through OPENCL_LAYERS with no tool: it only forwards) and the
# recording, 15 interleaved rounds each, the program on CPU 3.
B=${CLMEMPROBE:-bin/clmemprobe}
TP=${TRACEPROG:-bin/traceprog/traceprog}
FAULTCL=${FAULTCL:-bin/faultcl/libfaultcl.so}
R=${1:-h200-trace-cost}/part5
mkdir -p "$R"
R=$(cd "$R" && pwd) # trace builds its layer under XDG_CACHE_HOME, which must be an absolute path
export XDG_CACHE_HOME="$R/cache" POCL_DEVICES=pthread
# S: scratch folder for the traces whose output is not kept.
S=$(mktemp -d)
mkdir -p "$R/fcl/vendors" && echo "$(realpath "$FAULTCL")" > "$R/fcl/vendors/faultcl.icd"
for rt in pocl faultcl; do
  if [ $rt = pocl ]; then export OCL_ICD_VENDORS=/etc/OpenCL/vendors; else export OCL_ICD_VENDORS=$R/fcl/vendors; fi
  "$B" trace -q --via layer --format json --out "$S/warm-$rt" -- "$TP" bench 1000 1024 > /dev/null 2>&1
  layer=$(ls -t "$XDG_CACHE_HOME"/clmemprobe/*.so | head -1)
  for i in $(seq 15); do
    echo "plain $(taskset -c 3 "$TP" bench 1000000 1024)" >> "$R/$rt.txt"
    echo "alone $(OPENCL_LAYERS=$layer taskset -c 3 "$TP" bench 1000000 1024)" >> "$R/$rt.txt"
    rm -rf "$S/o"; echo "traced $("$B" trace -q --via layer --format json --out "$S/o" -- taskset -c 3 "$TP" bench 1000000 1024)" >> "$R/$rt.txt"
  done
done
rm -rf "$S"
