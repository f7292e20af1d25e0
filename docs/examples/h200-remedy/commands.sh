#!/bin/bash
# clmemprobe remedy on one H200 (issue 31): the fill-to-failure job of one device and the known changes to
# it. The run recorded here was ended by a time limit of 300 s during its last change (the descriptor limit),
# so its ranking holds the other five. From a clone, after scripts/probe.sh has built bin/clmemprobe:
#   bash docs/examples/h200-remedy/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
R=${1:-h200-remedy}
mkdir -p "$R"
echo '$ clmemprobe remedy --touch fill --strategies shared --max-allocs 200000' > "$R/remedy.txt"
timeout 300 "$B" remedy --touch fill --strategies shared --max-allocs 200000 >> "$R/remedy.txt" 2>&1
echo "exit $?" >> "$R/remedy.txt"
