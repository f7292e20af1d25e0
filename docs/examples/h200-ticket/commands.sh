#!/bin/bash
# The bug ticket bundle writes (issue 30), on one H200 with NVIDIA's OpenCL driver and an ICD loader: a
# fill-to-failure run repeated three times, each run in its own worker, bundled; beside it what the machine
# itself says of the driver (its version files, dpkg-query) and nvidia-smi's memory samples. From a clone,
# after scripts/probe.sh has built bin/clmemprobe:
#   bash docs/examples/h200-ticket/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
R=${1:-h200-ticket}
mkdir -p "$R/bundle"
{
  echo '$ cat /proc/driver/nvidia/version'; cat /proc/driver/nvidia/version
  echo '$ cat /sys/module/nvidia/version'; cat /sys/module/nvidia/version
  echo '$ dpkg-query -W cuda-compat-13-0 cuda-opencl-13-0 ocl-icd-libopencl1'; dpkg-query -W cuda-compat-13-0 cuda-opencl-13-0 ocl-icd-libopencl1
  echo '$ dmesg | grep -c NVRM'; dmesg | grep -c NVRM
} > "$R/check.txt" 2>&1
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader -lms 250 > "$R/gpu.csv" 2>&1 &
smi=$!
echo '$ clmemprobe run --touch fill --strategies shared --max-allocs 200000 --repeat 3 --out fill' > "$R/fill.txt"
"$B" run --touch fill --strategies shared --max-allocs 200000 --repeat 3 --out "$R/fill" -q >> "$R/fill.txt" 2>&1
echo "exit $?" >> "$R/fill.txt"
kill "$smi"
"$B" bundle -o "$R/ticket.tar.gz" "$R/fill" 2>> "$R/fill.txt"
tar xzf "$R/ticket.tar.gz" -C "$R/bundle" --strip-components=1 clmemprobe-ticket/ISSUE.md clmemprobe-ticket/README.md \
  clmemprobe-ticket/report.md clmemprobe-ticket/environment.txt clmemprobe-ticket/repro.c
rm -rf "$R/fill" "$R/ticket.tar.gz"
