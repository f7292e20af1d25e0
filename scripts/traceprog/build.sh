#!/usr/bin/env bash
# Builds traceprog (the test programs of clmemprobe trace) into DIR (default: scripts/traceprog/build) and
# prints the binary's path. Beside it, classprog built each way a program reaches OpenCL (classprog.c says
# which), classhost, and bundled/libOpenCL-bundled.so.1: a copy of the ICD loader under another name, as a
# Python wheel bundles one; and leak (two allocation paths, one that keeps its buffers: the ledger's
# example). Needs cc, the OpenCL headers and libOpenCL.so (ocl-icd-opencl-dev).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-$here/build}
cc=${CC:-cc}
flags=(-O2 -g -Wall -Wextra -Werror -pthread)
mkdir -p "$out/bundled"
"$cc" "${flags[@]}" -o "$out/classprog-linked" "$here/classprog.c" -lOpenCL
"$cc" "${flags[@]}" -DCLASSPROG_DLOPEN -o "$out/classprog-dlopen" "$here/classprog.c" -ldl
"$cc" "${flags[@]}" -DCLASSPROG_PLUGIN -fPIC -shared -fvisibility=hidden -o "$out/classprog-plugin.so" "$here/classprog.c" -lOpenCL
"$cc" "${flags[@]}" -o "$out/classhost" "$here/classhost.c" -ldl
loader=$("$cc" -print-file-name=libOpenCL.so.1)
if [ "$loader" = libOpenCL.so.1 ]; then
  loader=$(/sbin/ldconfig -p | awk '/libOpenCL\.so\.1 / { print $NF; exit }')
fi
[ -f "$loader" ] || { echo "build.sh: no libOpenCL.so.1 to copy (ocl-icd-libopencl1)" >&2; exit 1; }
cp -L "$loader" "$out/bundled/libOpenCL-bundled.so.1"
"$cc" "${flags[@]}" -o "$out/traceprog" "$here/traceprog.c" -lOpenCL
"$cc" "${flags[@]}" -o "$out/leak" "$here/leak.c" -lOpenCL
echo "$out/traceprog"
