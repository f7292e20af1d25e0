# Issue 21 on one H200 (2026-12-01): three device calls, in order. The first one's "faultcl" series
# (saved here as bench-pocl-auto-*.txt) ran on PoCL: faultcl did not build there (-Werror on the carried
# headers' deprecations), OCL_ICD_VENDORS came out empty, and the loader fell back to the machine's
# OCL_ICD_FILENAMES, PoCL first. The second call carried a libfaultcl.so built on the dev machine.

## .device/h200-bench3.sh
#!/bin/bash
# Issue 21 on one H200: the layer's added time per create measured against faultcl on this host's CPU
# (a create there costs tens of ns and barely varies), and one more NVIDIA series of 21 pairs.
source .device/opencl-env.sh
B=$PWD/.device/clmemprobe
TP=$PWD/.device/traceprog
export CPATH=$PWD/.device/include XDG_CACHE_HOME=/tmp/clmcache
R=$OUT/r; mkdir -p $R
lscpu > $R/lscpu.txt 2>&1
fcl=$(bash scripts/faultcl/build.sh /tmp/fcl 2>$R/faultcl-build.txt | tail -1)
echo "faultcl: $fcl" >> $R/faultcl-build.txt
for s in 1 2; do
  OCL_ICD_VENDORS=$fcl CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 15 > $R/bench-faultcl-$s.txt 2>&1
done
CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 21 > $R/bench-nvidia-21.txt 2>&1
tar -C $OUT -czf $OUT/h200-bench3.tgz r && rm -rf $R
ls -la $OUT

## .device/h200-bench4.sh
#!/bin/bash
# Issue 21 on one H200: the layer's added time per create against faultcl (built on the dev machine, carried)
# on this host's CPU, where a create costs tens of ns and barely varies; the platform each series ran on.
source .device/opencl-env.sh
B=$PWD/.device/clmemprobe
TP=$PWD/.device/traceprog
export CPATH=$PWD/.device/include XDG_CACHE_HOME=/tmp/clmcache
R=$OUT/r; mkdir -p $R
mkdir -p /tmp/fcl/vendors && echo "$PWD/.device/faultcl/libfaultcl.so" > /tmp/fcl/vendors/faultcl.icd
OCL_ICD_VENDORS=/tmp/fcl/vendors $B devices > $R/devices-faultcl.txt 2>&1
$B devices > $R/devices-nvidia.txt 2>&1
ls -la /etc/OpenCL/vendors > $R/etc-vendors.txt 2>&1
for s in 1 2; do
  OCL_ICD_VENDORS=/tmp/fcl/vendors CLMEMPROBE=$B TRACEPROG=$TP PIN_CPU=3 bash scripts/trace-bench.sh --count 1000000 --size 1024 --reps 15 > $R/bench-faultcl-$s.txt 2>&1
done
tar -C $OUT -czf $OUT/h200-bench4.tgz r && rm -rf $R

## .device/h200-bench5.sh
#!/bin/bash
# Issue 21 on the H200 host's CPU: what the layer costs a create loop on PoCL and faultcl, split into the
# loader's layer alone (the layer loaded through OPENCL_LAYERS with no tool: it only forwards) and the
# recording, 15 interleaved rounds each, the program on CPU 3.
source .device/opencl-env.sh
B=$PWD/.device/clmemprobe
TP=$PWD/.device/traceprog
export CPATH=$PWD/.device/include XDG_CACHE_HOME=/tmp/clmcache POCL_DEVICES=pthread
R=$OUT/r; mkdir -p $R
mkdir -p /tmp/fcl/vendors && echo "$PWD/.device/faultcl/libfaultcl.so" > /tmp/fcl/vendors/faultcl.icd
for rt in pocl faultcl; do
  if [ $rt = pocl ]; then export OCL_ICD_VENDORS=/etc/OpenCL/vendors; else export OCL_ICD_VENDORS=/tmp/fcl/vendors; fi
  $B trace -q --via layer --format json --out /tmp/warm-$rt -- $TP bench 1000 1024 > /dev/null 2>&1
  layer=$(ls -t /tmp/clmcache/clmemprobe/*.so | head -1)
  for i in $(seq 15); do
    echo "plain $(taskset -c 3 $TP bench 1000000 1024)" >> $R/$rt.txt
    echo "alone $(OPENCL_LAYERS=$layer taskset -c 3 $TP bench 1000000 1024)" >> $R/$rt.txt
    rm -rf /tmp/o; echo "traced $($B trace -q --via layer --format json --out /tmp/o -- taskset -c 3 $TP bench 1000000 1024)" >> $R/$rt.txt
  done
done
tar -C $OUT -czf $OUT/h200-bench5.tgz r && rm -rf $R
