# Sourced by the scripts after setup.sh: puts the Go that setup.sh fetched (.toolchain/go, or
# $CLMEMPROBE_TOOLCHAIN/go) first on PATH when the Go on PATH is missing or older than go.mod asks for.
_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_toolchain=${CLMEMPROBE_TOOLCHAIN:-$_top/.toolchain}
_min=$(awk '$1 == "go" { print $2; exit }' "$_top/go.mod")
if [ -x "$_toolchain/go/bin/go" ]; then
  _have=$(GOTOOLCHAIN=local go env GOVERSION 2>/dev/null || true)
  if [ -z "$_have" ] || [ "$(printf '%s\n%s\n' "$_min" "${_have#go}" | sort -V | head -n1)" != "$_min" ]; then
    export PATH="$_toolchain/go/bin:$PATH"
  fi
fi
# The toolchain in use is the one to build with: no second download for go.mod's go line.
export GOTOOLCHAIN=local
unset _top _toolchain _min _have
