#!/bin/bash
# Issue 43 on one H100 (nvidia-h100-x1: NVIDIA H100 80GB HBM3, driver 580.159.04, persistence mode on, 16
# cores): scripts/bench's figures with this build, then the fixed costs of the build before the work
# (0c97925) and of this build again, in one call; and, earlier the same day on another H100 of the same
# kind with 0c97925, the loops against the C loop with sampling as it is and with --sample-interval 1h (only
# the forced samples) in rotated order, and the workers' CPU profiles. Run from a clone's top folder, on a
# machine with NVIDIA's OpenCL driver, an ICD loader and clinfo, after scripts/setup.sh --tests:
#   bash docs/examples/h100-fixed-costs/commands.sh OUTDIR
# OLD names a clmemprobe built from 0c97925 (git worktree add ../old 0c97925, then go build in it).
set -eu
out=${1:?usage: commands.sh OUTDIR}
OLD=${OLD:-../old/clmemprobe}
mkdir -p "$out/new" "$out/old" "$out/new2" "$out/prof-fill" "$out/prof-create"
go build -o bin/clmemprobe ./cmd/clmemprobe
go build -o bin/bench ./scripts/bench
cc -O2 -Wall -pthread -o bin/cloop scripts/cloop/cloop.c -ldl
bin/bench -tool bin/clmemprobe -cloop bin/cloop -gpu 150000 -devices 1 -reps 7 -fixed-reps 9 -out "$out/new" > "$out/bench-this-build.md"
bin/bench -tool "$OLD" -cloop bin/cloop -loops=false -fixed-reps 9 -out "$out/old" > "$out/fixed-0c97925.md"
bin/bench -tool bin/clmemprobe -cloop bin/cloop -loops=false -fixed-reps 9 -out "$out/new2" > "$out/fixed-this-build-again.md"
# The sampling experiment (fill-sampling-0c97925.txt, create-sampling-0c97925.txt: buffers reached and the
# loop's seconds of the C loop, the tool, the tool with --sample-interval 1h), 7 rounds; the recorded rounds
# took the three in turn first (C T T1h, T T1h C, T1h C T), which this loop leaves out.
tool() { "$OLD" run --strategies shared --devices 0 --format json "$@" | python3 -c 'import json,sys; j=json.load(sys.stdin)["strategies"][0]; print(j["allocations_ok"], j["loop_seconds"])'; }
cl() { bin/cloop 0 "$@" 1 64 | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["allocations_ok"], d["loop_seconds"])'; }
for i in $(seq 7); do
  echo "C $(cl 150000 1048576 fill) T $(tool --touch fill --max-allocs 150000) T1h $(tool --touch fill --max-allocs 150000 --sample-interval 1h)"
done > "$out/fill-sampling-0c97925.txt"
for i in $(seq 7); do
  echo "C $(cl 260000 1048576 none) T $(tool --touch none --max-allocs 260000) T1h $(tool --touch none --max-allocs 260000 --sample-interval 1h)"
done > "$out/create-sampling-0c97925.txt"
CLMEMPROBE_CPUPROFILE_DIR="$out/prof-fill" "$OLD" run --strategies shared --devices 0 --touch fill --max-allocs 150000 --format json > /dev/null
CLMEMPROBE_CPUPROFILE_DIR="$out/prof-create" "$OLD" run --strategies shared --devices 0 --touch none --max-allocs 260000 --format json > /dev/null
go tool pprof -top -nodecount=25 "$out"/prof-fill/*.pprof > "$out/worker-fill-profile.txt"
go tool pprof -top -nodecount=25 "$out"/prof-create/*.pprof > "$out/worker-create-profile.txt"
