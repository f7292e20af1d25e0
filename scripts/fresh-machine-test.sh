#!/usr/bin/env bash
# The newcomer's test: builds a minimal Debian root (12, bookworm, unless FRESH_SUITE names another) with
# mmdebstrap from the Debian archive this
# machine is configured with, copies this machine's CA bundle in (so HTTPS there behaves as here), clones
# this repository into it, and runs the README's two quick-start commands inside it as a new user would:
# scripts/probe.sh, then scripts/test.sh. It fails if either fails, and prints the wall time of each step.
#
# Needs root, mmdebstrap (apt-get install mmdebstrap, done here when missing) and about 2 GB of disk.
#   FRESH_REF=<commit>   test that commit instead of HEAD (to show an old set-up failing)
#   FRESH_KEEP=1         keep the root afterwards, for a look inside
#   FRESH_SUITE=trixie   a Debian 13 root instead (CI builds Debian 12, the release its machines run; 13 is
#                        tested on demand: FRESH_SUITE=trixie scripts/fresh-machine-test.sh)
# Exit codes: 0 both commands passed, 1 one of them failed, 2 not root, 3 the root could not be built (no
# mmdebstrap, no archive: nothing was tested).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { echo "fresh-machine: $*" >&2; }
if [ "$(id -u)" -ne 0 ]; then
  say "needs root (it builds a Debian root and runs commands in it with chroot)"
  exit 2
fi
if ! command -v mmdebstrap >/dev/null 2>&1; then
  say "installing mmdebstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null ||
    { say "cannot install mmdebstrap: nothing was tested"; exit 3; }
fi

# The Debian archive this machine uses (deb822 sources or the one-line format), else Debian's own.
mirror=$(awk '/^URIs:/ && $2 ~ /debian\/?$/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

work=$(mktemp -d /var/tmp/clmemprobe-fresh.XXXXXX)
root=$work/root
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -R -l "${mounted[$i]}" 2>/dev/null || true; done
  if [ "${FRESH_KEEP:-}" = 1 ]; then say "kept $root"; else rm -rf --one-file-system "$work"; fi
}
trap cleanup EXIT

step() {
  local name=$1
  shift
  local t0=$SECONDS
  say "$name ..."
  if "$@"; then
    say "$name: done in $((SECONDS - t0)) s"
  else
    say "$name: FAILED after $((SECONDS - t0)) s"
    return 1
  fi
}

suite=${FRESH_SUITE:-bookworm}
case $suite in
  bookworm) release="Debian 12" ;;
  trixie) release="Debian 13" ;;
  *) say "FRESH_SUITE=$suite: choose bookworm (Debian 12) or trixie (Debian 13)"; exit 2 ;;
esac
build_root() {
  mmdebstrap --quiet --variant=minbase "$suite" "$root" "deb $mirror $suite main" "deb $mirror $suite-updates main"
}
prepare_root() {
  mkdir -p "$root/etc/ssl/certs" "$root/home/newcomer"
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  # /sys with everything mounted below it, as on a booted machine: slurmd (the Slurm test) needs the cgroup
  # hierarchy under /sys/fs/cgroup, which a fresh sysfs mount does not have.
  for m in proc sys dev dev/pts; do
    mkdir -p "$root/$m"
    case $m in
      proc) mount -t proc proc "$root/proc" ;;
      sys) mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys" ;;
      dev) mount --bind /dev "$root/dev" ;;
      dev/pts) mount -t devpts devpts "$root/dev/pts" ;;
    esac
    mounted+=("$root/$m")
  done
  mount -t tmpfs tmpfs "$root/tmp"
  mounted+=("$root/tmp")
  git clone --quiet "$top" "$root/home/newcomer/clmemprobe"
  if [ -n "${FRESH_REF:-}" ]; then
    git -C "$root/home/newcomer/clmemprobe" checkout --quiet "$FRESH_REF"
  fi
}
# inside runs a command in the root as the newcomer would type it, in the clone, with this machine's proxy
# settings and nothing else of its environment.
inside() {
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb \
    ${GOPROXY:+GOPROXY=$GOPROXY} ${http_proxy:+http_proxy=$http_proxy} ${https_proxy:+https_proxy=$https_proxy} \
    /bin/bash -c "cd /home/newcomer/clmemprobe && $1"
}

start=$SECONDS
step "building a minimal $release root from $mirror" build_root || { say "nothing was tested"; exit 3; }
step "copying the CA bundle in and cloning the repository" prepare_root
step "quick start, first command: scripts/probe.sh" inside "scripts/probe.sh"
step "quick start, second command: scripts/test.sh" inside "scripts/test.sh"
say "both quick-start commands passed on a fresh $release in $((SECONDS - start)) s"
