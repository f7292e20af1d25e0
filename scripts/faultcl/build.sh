#!/usr/bin/env bash
# Builds the fault-injection OpenCL runtime and its .icd file into DIR (default: scripts/faultcl/build).
# Use it with the real ICD loader: OCL_ICD_VENDORS=DIR/vendors clmemprobe devices
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-$here/build}
mkdir -p "$out/vendors"
${CC:-cc} -O2 -g -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden -o "$out/libfaultcl.so" "$here/faultcl.c" -lpthread
echo "$out/libfaultcl.so" > "$out/vendors/faultcl.icd"
echo "$out/vendors"
