#!/bin/bash
# The bug ticket bundle writes (issue 30), on one H200 with NVIDIA's OpenCL driver and an ICD loader: a
# fill-to-failure run repeated three times, each run in its own worker, bundled; beside it what the machine
# itself says of the driver (its version files, dpkg-query, the kernel log). From a clone, after
# scripts/probe.sh has built bin/clmemprobe:
#   bash docs/examples/h200-ticket/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
R=${1:-h200-ticket}
mkdir -p "$R/bundle"
{
  cat /proc/driver/nvidia/version
  cat /sys/module/nvidia/version
  dpkg-query -W cuda-compat-13-0 cuda-opencl-13-0 ocl-icd-libopencl1
  dmesg | grep -c NVRM
} > "$R/check.txt" 2>&1
echo '$ clmemprobe run --touch fill --strategies shared --max-allocs 200000 --repeat 3 --out fill' > "$R/fill.txt"
"$B" run --touch fill --strategies shared --max-allocs 200000 --repeat 3 --out "$R/fill" -q >> "$R/fill.txt" 2>&1
echo "exit $?" >> "$R/fill.txt"
"$B" bundle -o "$R/ticket.tar.gz" "$R/fill" 2>> "$R/fill.txt"
tar xzf "$R/ticket.tar.gz" -C "$R/bundle" --strip-components=1
# The result, its charts and the run's folder are left out here for size.
rm -rf "$R/ticket.tar.gz" "$R/fill" "$R/bundle/run.png" "$R/bundle/run.svg" "$R/bundle/run.json"
