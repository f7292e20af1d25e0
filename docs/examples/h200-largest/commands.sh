#!/bin/bash
# The largest single buffer the H200 takes (issue 31): clmemprobe largest with its default pattern sizes
# (1, 4 and 128 bytes), every try listed (-v), with nvidia-smi's memory samples beside it. From a clone,
# after scripts/probe.sh has built bin/clmemprobe:
#   bash docs/examples/h200-largest/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
R=${1:-h200-largest}
mkdir -p "$R"
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader -lms 250 > "$R/gpu.csv" 2>&1 &
smi=$!
echo '$ clmemprobe largest -v' > "$R/largest.txt"
"$B" largest -v >> "$R/largest.txt" 2> "$R/largest-progress.txt"
echo "exit $?" >> "$R/largest.txt"
kill "$smi"
