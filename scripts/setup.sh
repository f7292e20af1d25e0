#!/usr/bin/env bash
# Installs what clmemprobe needs on Debian or Ubuntu, only what is missing, and says each step on one line:
#   - the OpenCL ICD loader, and PoCL (a CPU OpenCL runtime) when no vendor runtime is registered;
#   - Go: a Go of at least the version go.mod names on PATH, else the official toolchain fetched from the
#     Go module proxy ($GOPROXY, as the go command itself fetches toolchains), checked against the checksum
#     pinned below and unpacked under .toolchain/ in this repository (CLMEMPROBE_TOOLCHAIN moves it);
#   - with --trace, the C compiler and the OpenCL headers (CL/cl_layer.h) that `clmemprobe trace` builds its
#     layer with on first use;
#   - with --tests, also the C compiler, the OpenCL headers and libOpenCL.so that build the fault-injection
#     runtime and the C reproducers, and promtool (Debian's prometheus package) that tests the Prometheus
#     rules in scripts/prometheus, Debian's python3-pyopencl (a real OpenCL client trace is tested with), and
#     Debian's intel-opencl-icd without its .icd file (a runtime that finds no device, for the setup tests).
# Run as root or with sudo. Safe to run again: it installs nothing that is already there. Afterwards,
# `. scripts/go-path.sh` puts the fetched Go on PATH (scripts/probe.sh and scripts/test.sh do).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The Go this project builds with: at least go.mod's go line; GO_FETCH is fetched when no such Go is here.
GO_MIN=$(awk '$1 == "go" { print $2; exit }' "$top/go.mod")
GO_FETCH=1.26.8
declare -A GO_SHA256=(
  [amd64]=30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7
  [arm64]=02b36b6787b3ac767668f630e2998df45a3b1f9ffee08d1bf3ef6487cd658d99
)
toolchain=${CLMEMPROBE_TOOLCHAIN:-$top/.toolchain}

say() { echo "setup: $*" >&2; }
fail() { echo "setup: $*" >&2; exit 1; }

want_tests=0
[ "${1:-}" = "--tests" ] && want_tests=1
want_trace=$want_tests
[ "${1:-}" = "--trace" ] && want_trace=1

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
fi

# version_ok V: V (as "go1.26.8" or "1.26.8") is at least GO_MIN.
version_ok() {
  local v=${1#go} want=$GO_MIN
  [ -n "$v" ] || return 1
  [ "$(printf '%s\n%s\n' "$want" "$v" | sort -V | head -n1)" = "$want" ]
}
# go_version GO: the version of the go binary GO, or nothing.
go_version() { GOTOOLCHAIN=local "$1" env GOVERSION 2>/dev/null || true; }

need_go=1
if command -v go >/dev/null 2>&1 && version_ok "$(go_version go)"; then
  need_go=0
elif [ -x "$toolchain/go/bin/go" ] && version_ok "$(go_version "$toolchain/go/bin/go")"; then
  need_go=0
fi

packages=()
# grep reads the whole list: with pipefail, grep -q leaving early would end ldconfig with SIGPIPE, read as "no loader".
have_icd_loader() { "$(command -v ldconfig || echo /sbin/ldconfig)" -p 2>/dev/null | grep 'libOpenCL\.so\.1' >/dev/null; }
have_platform() { compgen -G "${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}/*.icd" >/dev/null 2>&1 || [ -f "${OCL_ICD_VENDORS:-}" ]; }
have_pocl() { compgen -G "/etc/OpenCL/vendors/*pocl*.icd" >/dev/null 2>&1; }

have_icd_loader || packages+=(ocl-icd-libopencl1)
# The tests run on PoCL's CPU devices, so they need PoCL even where a GPU runtime is present.
if ! have_platform || { [ $want_tests = 1 ] && ! have_pocl; }; then packages+=(pocl-opencl-icd); fi
if [ $want_trace = 1 ]; then
  command -v cc >/dev/null 2>&1 || packages+=(gcc libc6-dev)
  [ -f /usr/include/CL/cl_icd.h ] && [ -f /usr/include/CL/cl_layer.h ] || packages+=(opencl-c-headers)
fi
if [ $want_tests = 1 ]; then
  # The C reproducers the tests compile link against the loader: libOpenCL.so.
  compgen -G "/usr/lib/*/libOpenCL.so" >/dev/null 2>&1 || [ -e /usr/lib/libOpenCL.so ] || packages+=(ocl-icd-opencl-dev)
  # Debian has no package of promtool alone: it comes with the server, in prometheus (see below).
  command -v promtool >/dev/null 2>&1 || packages+=(prometheus)
  # trace's tests run a real Python client of OpenCL, Debian's pyopencl, whose extension module links the
  # loader in a local scope; it is installed for Debian's own python3.
  /usr/bin/python3 -c 'import pyopencl' >/dev/null 2>&1 || packages+=(python3-pyopencl)
  # The terminal tests draw the live line in an 80-column tmux pane and drive the zsh completion script.
  command -v tmux >/dev/null 2>&1 || packages+=(tmux)
  command -v zsh >/dev/null 2>&1 || packages+=(zsh)
  # scripts/bench.sh times `devices` against clinfo -l, and /usr/bin/time gives merge's peak memory.
  command -v clinfo >/dev/null 2>&1 || packages+=(clinfo)
  [ -x /usr/bin/time ] || packages+=(time)
fi
if [ $need_go = 1 ]; then
  command -v curl >/dev/null 2>&1 || packages+=(curl)
  [ -f /etc/ssl/certs/ca-certificates.crt ] || packages+=(ca-certificates)
  command -v unzip >/dev/null 2>&1 || packages+=(unzip)
fi

if [ ${#packages[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    fail "missing ${packages[*]} and there is no apt-get here: install them with this system's package manager, then run this again"
  fi
  if [ "$(id -u)" -ne 0 ] && [ -z "$SUDO" ]; then
    fail "missing ${packages[*]}: run this as root, or install sudo"
  fi
  say "installing ${packages[*]} with apt-get"
  log=$(mktemp)
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${packages[@]}"; } >"$log" 2>&1; then
    tail -n 15 "$log" >&2
    rm -f "$log"
    fail "apt-get could not install ${packages[*]} (its last lines are above): check the network and /etc/apt/sources.list, then run this again"
  fi
  rm -f "$log"
  # On a booted machine, installing prometheus also enables and starts its server (port 9090, a database in
  # /var/lib/prometheus). The tests need only promtool, so the server this script brought is stopped and
  # disabled again; in a chroot or a container nothing was started.
  if [[ " ${packages[*]} " == *" prometheus "* ]]; then
    if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
      $SUDO systemctl disable --now --quiet prometheus.service >/dev/null 2>&1 || true
    elif [ -x /etc/init.d/prometheus ] && command -v update-rc.d >/dev/null 2>&1; then
      $SUDO invoke-rc.d prometheus stop >/dev/null 2>&1 || true
      $SUDO update-rc.d prometheus disable >/dev/null 2>&1 || true
    fi
    say "installed prometheus for promtool; its server is stopped and disabled"
  fi
else
  say "the OpenCL loader and a runtime are installed"
fi

# The setup-diagnosis tests load Intel's runtime (Debian's intel-opencl-icd), which finds no platform on a
# machine without an Intel GPU, through .icd files of their own. It is installed without its .icd file
# (dpkg leaves /etc/OpenCL/vendors/intel.icd out), so what the programs on this machine see does not change.
neo_lib=/usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so
if [ $want_tests = 1 ] && [ ! -e "$neo_lib" ] && [ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ]; then
  say "installing intel-opencl-icd with apt-get, not registered (for the setup-diagnosis tests)"
  log=$(mktemp)
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      -o DPkg::Options::=--path-exclude=/etc/OpenCL/vendors/intel.icd intel-opencl-icd; } >"$log" 2>&1; then
    tail -n 15 "$log" >&2
    rm -f "$log"
    fail "apt-get could not install intel-opencl-icd (its last lines are above): check the network and /etc/apt/sources.list, then run this again"
  fi
  rm -f "$log"
fi

if [ $need_go = 0 ]; then
  say "Go $(go_version "$(command -v go 2>/dev/null || echo "$toolchain/go/bin/go")" | sed 's/^go//') is installed"
  exit 0
fi

case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) fail "no pinned Go toolchain for $(uname -m): install Go $GO_MIN or later from https://go.dev/dl and put it on PATH" ;;
esac
# The first proxy of GOPROXY that is a URL ("direct" and "off" are not).
proxy=https://proxy.golang.org
if [ -n "${GOPROXY:-}" ]; then
  proxy=""
  for p in ${GOPROXY//[,|]/ }; do
    case "$p" in http://* | https://*) proxy=${p%/}; break ;; esac
  done
  [ -n "$proxy" ] || fail "GOPROXY=$GOPROXY names no proxy to fetch Go from: set GOPROXY to one (the default is https://proxy.golang.org), or install Go $GO_MIN or later yourself"
fi
url="$proxy/golang.org/toolchain/@v/v0.0.1-go$GO_FETCH.linux-$arch.zip"
say "no Go $GO_MIN or later here: fetching Go $GO_FETCH for linux/$arch from $proxy"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! curl -fsSL --retry 2 -o "$tmp/go.zip" "$url" 2>"$tmp/curl.err"; then
  fail "could not fetch $url ($(tail -n1 "$tmp/curl.err")): is the module proxy reachable from here? set GOPROXY to one that is, or install Go $GO_MIN or later yourself (https://go.dev/dl)"
fi
sum=$(sha256sum "$tmp/go.zip" | cut -d' ' -f1)
if [ "$sum" != "${GO_SHA256[$arch]}" ]; then
  fail "checksum mismatch for $url: got $sum, want ${GO_SHA256[$arch]}; this is not the official toolchain (a proxy that rewrites downloads?): fetch again elsewhere, or install Go yourself"
fi
say "checksum of go$GO_FETCH.linux-$arch verified"
unzip -q "$tmp/go.zip" -d "$tmp/unpacked" || fail "could not unpack $tmp/go.zip: is there space in $tmp?"
mkdir -p "$toolchain"
rm -rf "$toolchain/go"
mv "$tmp/unpacked/golang.org/toolchain@v0.0.1-go$GO_FETCH.linux-$arch" "$toolchain/go"
# Zip files keep no modes: the toolchain's programs must be executable.
chmod -R a+rX "$toolchain/go"
find "$toolchain/go/bin" "$toolchain/go/pkg/tool" -type f -exec chmod a+x {} +
version_ok "$(go_version "$toolchain/go/bin/go")" || fail "the fetched Go in $toolchain/go does not run"
say "Go $GO_FETCH is ready in $toolchain/go (scripts/go-path.sh puts it on PATH)"
