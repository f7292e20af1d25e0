#!/bin/sh
# A Slurm HealthCheckProgram (or a step of one): clmemprobe check holds this node to its recorded
# expectations and drains the node when it falls below them. In slurm.conf:
#   HealthCheckProgram=/usr/local/sbin/clmemprobe-healthcheck   (this file)
#   HealthCheckInterval=86400
#   HealthCheckNodeState=IDLE      # the check fills the GPUs: never while jobs run
# Expectations: CLMEMPROBE_EXPECT (default /etc/clmemprobe/expect.json), made once per node type with
#   clmemprobe check --record --output expect.json RUN.json
# Slurm kills a health check after 60 s; the check ends within --time-limit (50 s here). Exit codes: 0 healthy
# (or nothing to judge), 1 drained. A check that could not run (no OpenCL, bad expectations) drains too:
# the node cannot do what it is there for, or its configuration is wrong.
bin=${CLMEMPROBE:-clmemprobe}
expect=${CLMEMPROBE_EXPECT:-/etc/clmemprobe/expect.json}
node=${SLURMD_NODENAME:-$(hostname -s)}
out=$("$bin" check --expect "$expect" --time-limit "${CLMEMPROBE_BUDGET:-50s}" 2>&1)
code=$?
logger -t clmemprobe "$out" 2>/dev/null || true
[ "$code" = 0 ] && exit 0
# Slurm keeps a drain reason short: the start of the line says what failed.
reason=$(printf '%s' "$out" | tr '\n' ' ' | sed 's/^clmemprobe check: //; s/^clmemprobe: //' | cut -c1-180)
scontrol update NodeName="$node" State=DRAIN Reason="clmemprobe (exit $code): $reason"
exit 1
