#!/bin/bash
# Issue 46 on one H100 with NVIDIA's OpenCL driver and an ICD loader: the host guard under an address-space
# limit the tool inherits (ulimit -v), checked against the same limit with the guard off and against the
# plain C loop, and the OOM decoy beside a traced program. From a clone, after scripts/probe.sh has built
# bin/clmemprobe:
#   bash docs/examples/h100-address-space/commands.sh OUTDIR
set -u
B=${CLMEMPROBE:-bin/clmemprobe}
R=${1:-h100-address-space}
mkdir -p "$R" bin
cc -O2 -o bin/cloop scripts/cloop/cloop.c -ldl
# 1. What a worker maps with a few buffers filled, without a limit (the base).
$B run --strategies shared --touch fill --max-allocs 16 --out "$R/free" -q > "$R/run-free.txt" 2>&1; echo "free rc=$?" >> "$R/rc.txt"
base=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(max(s['host_vms_bytes'] for s in r['strategies'][0]['samples']))" "$R/free/run.json")
echo "base_vms=$base" >> "$R/rc.txt"
# 2. shared and pool with fill under ulimit -v at the base + 4 GiB, 20000 buffers asked (20 GiB).
lim=$(( (base + (4<<30)) / 1024 )); echo "limit_kib=$lim" >> "$R/rc.txt"
( ulimit -v $lim; exec $B run --strategies shared,pool --touch fill --max-allocs 20000 --out "$R/guarded" ) > "$R/run-guarded.txt" 2>&1; echo "guarded rc=$?" >> "$R/rc.txt"
# 3. The same limit with the guard off (--host-reserve 0): where the runtime itself fails.
( ulimit -v $lim; exec $B run --strategies shared --touch fill --max-allocs 20000 --host-reserve 0 --out "$R/off" ) > "$R/run-guard-off.txt" 2>&1; echo "off rc=$?" >> "$R/rc.txt"
# 4. The plain C loop under the same limit, and without it.
( ulimit -v $lim; exec bin/cloop 0 20000 1048576 fill ) > "$R/cloop-limited.json" 2>&1; echo "cloop rc=$?" >> "$R/rc.txt"
bin/cloop 0 20000 1048576 fill > "$R/cloop-free.json" 2>&1; echo "cloop-free rc=$?" >> "$R/rc.txt"
# 5. A tighter limit: the base + 1 GiB.
lim2=$(( (base + (1<<30)) / 1024 )); echo "limit2_kib=$lim2" >> "$R/rc.txt"
( ulimit -v $lim2; exec $B run --strategies shared --touch fill --max-allocs 20000 --out "$R/tight" ) > "$R/run-guarded-tight.txt" 2>&1; echo "tight rc=$?" >> "$R/rc.txt"
# 6. The tool's children beside a traced program, as the program sees them.
$B trace -q -- /bin/sh -c 'for p in /proc/[0-9]*; do [ "$(cut -d" " -f4 $p/stat 2>/dev/null)" = "$PPID" ] && echo "$(tr "\0" " " < $p/cmdline) adj=$(cat $p/oom_score_adj) $(grep RssAnon $p/status)"; done' > "$R/trace.txt" 2>&1
grep -a 'adj=' "$R/trace.txt" | grep -av '^/bin/sh\|^Trace' > "$R/trace-children.txt"
