#!/usr/bin/env bash
# Quick start: sets up an OpenCL runtime where none is registered (PoCL, with two CPU devices, like the
# two-GPU case the tool comes from) and a Go toolchain, builds clmemprobe into bin/ and runs the allocation
# probe with its defaults. Arguments go to `clmemprobe run`, for example:
#   scripts/probe.sh --touch fill --max-allocs 300
set -euo pipefail

# pocl_alone CLMEMPROBE succeeds when PoCL is the only platform with devices, as the runtime itself lists
# them (`devices --json`, under PoCL's default of one device). It decides by devices, not by ICD files:
# Mesa registers ICDs (rusticl, clover) that often have no device at all, and a platform without devices
# is no other runtime to probe.
pocl_alone() {
  local json
  json=$(env -u POCL_DEVICES "$1" devices --json 2>/dev/null) || return 1
  # The listing is indented two spaces a level: a platform's own fields at four, its devices' at eight.
  # Count, per platform, the devices ("index" at eight spaces) and note whether its name is PoCL's.
  printf '%s\n' "$json" | awk '
    /^  \{/ { if (n) count(); n = 0; pocl = 0 }
    /^    "(name|vendor)": / && /Portable Computing Language|pocl/ { pocl = 1 }
    /^        "index": / { n++ }
    function count() { if (pocl) withpocl++; else others++ }
    END { if (n) count(); exit !(withpocl == 1 && others == 0) }'
}

# Sourced (by the tests of the decision), define the function and stop.
if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  return 0
fi

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
bash scripts/setup.sh
. scripts/go-path.sh
echo "probe: building bin/clmemprobe" >&2
CGO_ENABLED=0 go build -o bin/clmemprobe ./cmd/clmemprobe
# PoCL the only runtime with devices: give it two so the multi-device strategies mean something.
if [ -z "${POCL_DEVICES:-}" ] && pocl_alone bin/clmemprobe; then
  echo "probe: PoCL is the only platform with devices: giving it two (POCL_DEVICES=\"pthread pthread\")" >&2
  export POCL_DEVICES="pthread pthread"
fi
# The device list is for the person watching: on stderr, so that stdout is run's output alone (a
# `--format json > r.json` is JSON).
bin/clmemprobe devices >&2
exec bin/clmemprobe run "$@"
