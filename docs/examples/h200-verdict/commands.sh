#!/bin/bash
# The verdict a terminal shows (issue 33), on one H200 with NVIDIA's OpenCL driver and an ICD loader: flag
# sweeps over one and two strategies, without and with --touch fill, at 120 columns, each beside the
# Markdown report that keeps every finding; the default run; devices and env. From a clone, after
# scripts/probe.sh has built bin/clmemprobe:
#   bash docs/examples/h200-verdict/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
R=${1:-h200-verdict}
mkdir -p "$R"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > "$R/gpu.csv" 2>&1
"$B" devices > "$R/devices.txt" 2>&1
COLUMNS=120 "$B" env > "$R/env.txt" 2>&1
COLUMNS=120 "$B" run -q --max-allocs 3000 --out "$R/default" > "$R/default.txt" 2>&1
for touch in none fill; do
  for strategies in shared shared,per-device; do
    name=flags-$touch-${strategies/,/-}
    COLUMNS=120 "$B" run -q --strategies "$strategies" --touch "$touch" --max-allocs 3000 \
      --flag-sets "read-write;use-host-ptr;alloc-host-ptr;read-only" --out "$R/$name" > "$R/$name.txt" 2>&1
    "$B" report "$R/$name" --format markdown > "$R/$name.md" 2>&1
  done
done
# report of a saved run shows the same short verdict as run did.
COLUMNS=120 "$B" report "$R/flags-fill-shared-per-device" > "$R/flags-fill-shared-per-device.report.txt" 2>&1
rm -f "$R"/*/samples.jsonl "$R"/*/run.png "$R"/*/run.svg
