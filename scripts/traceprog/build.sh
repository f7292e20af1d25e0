#!/usr/bin/env bash
# Builds traceprog (the test programs of clmemprobe trace) into DIR (default: scripts/traceprog/build) and
# prints the binary's path. Needs cc, the OpenCL headers and libOpenCL.so (ocl-icd-opencl-dev).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-$here/build}
mkdir -p "$out"
${CC:-cc} -O2 -g -Wall -Wextra -Werror -pthread -o "$out/traceprog" "$here/traceprog.c" -lOpenCL
echo "$out/traceprog"
