#!/usr/bin/env bash
# Benchmarks `clmemprobe merge` at fleet scale (issue 43) on fixtures from scripts/fleetgen:
#   - 10,000 files of the issue's shape (-shape issue: a five-strategy PoCL run of 3,000 buffers, ~94 KiB,
#     its samples ~36% of it; about 1 GB), merged by this build and by the baseline build, alternately,
#     --runs times each;
#   - 1,000,000 synthetic nodes (-shape small: the same run without its bulk, ~8.5 KB of compact JSON; about
#     12 GB on disk with a folder each), merged by this build only: fe3862d kept ~700 bytes of rows a node
#     (2.05 GiB peak); this build keeps them as columns (~490 MiB peak, docs/performance.md).
# Each merge is `--format json > /dev/null` under /usr/bin/time: wall time and peak RSS, against the targets
# (4 s and 256 MiB at 10,000; 300 s and 256 MiB at 1,000,000). It prints met or MISSED and never fails on
# a miss: machines are noisy.
#   scripts/merge-bench.sh [--baseline REF] [--runs N] [--issue-nodes N] [--nodes N]
# --baseline: the build to compare with (default: the merge-base with main, else 0c97925), built in a
# temporary worktree. --nodes 0 skips the synthetic fleet. Fixtures go to a folder under
# ${MERGE_BENCH_DIR:-/var/tmp}, removed at the end; merges read them from a warm page cache.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
baseline="" runs=3 issue_nodes=10000 nodes=1000000
count() { [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "merge-bench: $1 needs a count" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) [ -n "${2:-}" ] || { echo "merge-bench: --baseline needs a git ref" >&2; exit 2; }; baseline=$2; shift 2 ;;
    --runs) count "$1" "${2:-}"; runs=$2; shift 2 ;;
    --issue-nodes) count "$1" "${2:-}"; issue_nodes=$2; shift 2 ;;
    --nodes) count "$1" "${2:-}"; nodes=$2; shift 2 ;;
    *) echo "merge-bench: unknown argument $1 (use --baseline REF, --runs N, --issue-nodes N, --nodes N)" >&2; exit 2 ;;
  esac
done
[ -x /usr/bin/time ] || { echo "merge-bench: /usr/bin/time is missing (apt-get install time): it gives the peak RSS" >&2; exit 2; }
if [ -z "$baseline" ]; then
  baseline=$(git merge-base HEAD main 2>/dev/null || true)
  if [ -z "$baseline" ] || [ "$(git rev-parse HEAD)" = "$baseline" ]; then baseline=0c97925; fi
fi
git rev-parse --verify -q "$baseline^{commit}" >/dev/null || { echo "merge-bench: --baseline $baseline is not a commit here" >&2; exit 2; }

base=${MERGE_BENCH_DIR:-/var/tmp}
work=$(mktemp -d "$base/clmemprobe-merge-bench.XXXXXX")
old_tree="$work/baseline-tree"
cleanup() {
  git worktree remove --force "$old_tree" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

# A small node takes 3 blocks of 4 KiB and its folder one more; an issue-shaped one 24 and one.
need_kib=$((nodes * 16 + issue_nodes * 100))
free_kib=$(df -Pk "$work" | awk 'NR == 2 { print $4 }')
gib() { awk -v k="$1" 'BEGIN { printf "%.1f GiB", k / 1024 / 1024 }'; }
if [ "$free_kib" -lt "$need_kib" ]; then
  echo "merge-bench: the fixtures need about $(gib "$need_kib") under $base, and only $(gib "$free_kib") are free" >&2
  echo "merge-bench: set MERGE_BENCH_DIR to a larger disk, or use --nodes with fewer" >&2
  exit 2
fi

mkdir -p bin
CGO_ENABLED=0 go build -o bin/clmemprobe ./cmd/clmemprobe
go build -o bin/fleetgen ./scripts/fleetgen
git worktree add -q --detach "$old_tree" "$baseline"
(cd "$old_tree" && CGO_ENABLED=0 go build -o "$work/clmemprobe-baseline" ./cmd/clmemprobe)
echo "this build: $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' with uncommitted changes'); baseline: $(git rev-parse --short "$baseline")"
echo "fixtures in $work: $(gib "$free_kib") free, about $(gib "$need_kib") needed"

secs_since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f s", b - a }'; }
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t ? "met" : "MISSED") }'; }
# timed BIN DIR: one merge of DIR as json; prints "seconds MiB".
timed() {
  local rc=0
  /usr/bin/time -f '%e %M' -o "$work/time" "$1" merge --format json "$2" >/dev/null 2>"$work/stderr" || rc=$?
  # Exit 1 is outliers found, as the fixtures hold some; anything else means the merge itself failed.
  if [ "$rc" -gt 1 ]; then
    echo "merge-bench: $1 merge of $2: exit $rc: $(tail -n 3 "$work/stderr")" >&2
    exit 1
  fi
  # The last line: a merge that exits 1 has time say so on a line before it.
  tail -n 1 "$work/time" | awk '{ printf "%s %d\n", $1, $2 / 1024 }'
}
range() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf (lo == hi ? "%s" : "%s-%s"), lo, hi }'; }

rows=()
if [ "$issue_nodes" -gt 0 ]; then
  start=$(date +%s.%N)
  bin/fleetgen -n "$issue_nodes" -shape issue -out "$work/issue"
  sync # the merges should not share the disk and the CPU with the writeback of what was just written
  echo "generated $issue_nodes issue-shaped nodes ($(du -sh "$work/issue" | cut -f1)) in $(secs_since "$start")"
  : >"$work/new" && : >"$work/old"
  for _ in $(seq "$runs"); do # alternately, so that both builds see the same machine
    timed "$work/clmemprobe-baseline" "$work/issue" >>"$work/old"
    timed bin/clmemprobe "$work/issue" >>"$work/new"
  done
  worst=$(cut -d' ' -f1 "$work/new" | sort -n | tail -n 1)
  peak=$(cut -d' ' -f2 "$work/new" | sort -n | tail -n 1)
  rows+=("$(printf '%-10s %-7s %12s s %10s MiB   %12s s %10s MiB   4 s: %s, 256 MiB: %s' "$issue_nodes" issue \
    "$(cut -d' ' -f1 "$work/old" | range)" "$(cut -d' ' -f2 "$work/old" | range)" \
    "$(cut -d' ' -f1 "$work/new" | range)" "$(cut -d' ' -f2 "$work/new" | range)" "$(verdict "$worst" 4)" "$(verdict "$peak" 256)")")
  rm -rf "$work/issue"
fi
if [ "$nodes" -gt 0 ]; then
  start=$(date +%s.%N)
  bin/fleetgen -n "$nodes" -shape small -fanout 1000 -out "$work/small"
  sync
  echo "generated $nodes synthetic nodes ($(du -sh "$work/small" | cut -f1)) in $(secs_since "$start")"
  read -r s m < <(timed bin/clmemprobe "$work/small")
  rows+=("$(printf '%-10s %-7s %12s   %10s       %12s s %10s MiB   300 s: %s, 256 MiB: %s' "$nodes" small "not run" "" "$s" "$m" \
    "$(verdict "$s" 300)" "$(verdict "$m" 256)")")
fi
printf '\n%-10s %-7s %14s %14s   %14s %14s   %s\n' nodes shape "baseline wall" "baseline RSS" "this wall" "this RSS" "targets (worst run)"
printf '%s\n' "${rows[@]}"
