#!/usr/bin/env bash
# Installs what clmemprobe needs on Debian/Ubuntu, only where it is missing:
#   an OpenCL runtime and the ICD loader (PoCL, a CPU runtime, when no vendor runtime is registered),
#   a Go toolchain (Go 1.21+ fetches the version go.mod asks for by itself),
#   with --tests also the C compiler and OpenCL headers that build the fault-injection runtime.
# Safe to run again: it installs nothing that is already there.
set -euo pipefail

want_tests=0
[ "${1:-}" = "--tests" ] && want_tests=1

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
fi

packages=()
have_icd_loader() { ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1'; }
have_platform() { compgen -G "${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}/*.icd" >/dev/null 2>&1 || [ -f "${OCL_ICD_VENDORS:-}" ]; }
have_pocl() { compgen -G "/etc/OpenCL/vendors/*pocl*.icd" >/dev/null 2>&1; }

have_icd_loader || packages+=(ocl-icd-libopencl1)
# The tests run on PoCL's two CPU devices, so they need PoCL even where a GPU runtime is present.
if ! have_platform || { [ $want_tests = 1 ] && ! have_pocl; }; then packages+=(pocl-opencl-icd); fi
if [ $want_tests = 1 ]; then
  command -v cc >/dev/null 2>&1 || packages+=(gcc libc6-dev)
  [ -f /usr/include/CL/cl_icd.h ] || packages+=(opencl-c-headers)
fi
command -v go >/dev/null 2>&1 || packages+=(golang-go)

if [ ${#packages[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: missing ${packages[*]} and no apt-get here: install them with your package manager" >&2
    exit 1
  fi
  if [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
    echo "setup: missing ${packages[*]}: run as root or install sudo" >&2
    exit 1
  fi
  echo "setup: installing ${packages[*]}" >&2
  $SUDO apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi

# go.mod names the Go version; Go 1.21 and later download it through the module proxy when older.
gov=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
major=${gov%%.*}; rest=${gov#*.}; minor=${rest%%.*}
if [ -z "$gov" ] || [ "$major" -lt 1 ] || { [ "$major" -eq 1 ] && [ "$minor" -lt 21 ]; }; then
  echo "setup: Go ${gov:-?} is too old to fetch the toolchain go.mod asks for; install Go 1.21 or later (https://go.dev/dl)" >&2
  exit 1
fi
