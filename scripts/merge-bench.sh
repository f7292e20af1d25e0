#!/usr/bin/env bash
# Benchmarks `clmemprobe merge` at fleet scale on fixtures from scripts/fleetgen (copies of a real
# four-strategy run.json, ~44 KB each, with varied host names, drivers, thresholds and a few outliers).
#   scripts/merge-bench.sh              10,000 and 100,000 nodes (about 4.6 GB of fixtures on disk)
#   scripts/merge-bench.sh --nodes N    N nodes only
# Each size is merged twice, `--format json > /dev/null` and `--format table > /dev/null`, under
# /usr/bin/time: wall time and peak RSS, per 10,000 nodes too, against the targets (6 s per 10,000 nodes,
# so 60 s at 100,000; 256 MiB peak RSS at any size). It prints met or MISSED and never fails on a miss:
# machines are noisy. The fixtures go to a folder under ${MERGE_BENCH_DIR:-/var/tmp}, removed at the end;
# the merges read them from a warm page cache, as they were just written (and synced).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
sizes=(10000 100000)
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "merge-bench: --nodes needs a count" >&2; exit 2; }; sizes=("$2"); shift 2 ;;
    *) echo "merge-bench: unknown argument $1 (use --nodes N)" >&2; exit 2 ;;
  esac
done
[ -x /usr/bin/time ] || { echo "merge-bench: /usr/bin/time is missing (apt-get install time): it gives the peak RSS" >&2; exit 2; }
mkdir -p bin
CGO_ENABLED=0 go build -o bin/clmemprobe ./cmd/clmemprobe
go build -o bin/fleetgen ./scripts/fleetgen
base=${MERGE_BENCH_DIR:-/var/tmp}
work=$(mktemp -d "$base/clmemprobe-merge-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A node takes 11 blocks of 4 KiB and its folder one more: 48 KiB each, with a margin.
largest=${sizes[-1]}
need_kib=$((largest * 48))
free_kib=$(df -Pk "$work" | awk 'NR == 2 { print $4 }')
if [ "$free_kib" -lt "$need_kib" ]; then
  echo "merge-bench: $largest nodes need about $((need_kib / 1024 / 1024 + 1)) GiB under $base, and only $((free_kib / 1024 / 1024)) GiB are free" >&2
  echo "merge-bench: set MERGE_BENCH_DIR to a larger disk, or use --nodes with fewer" >&2
  exit 2
fi
gib() { awk -v k="$1" 'BEGIN { printf "%.1f GiB", k / 1024 / 1024 }'; }
echo "fixtures in $work: $(gib "$free_kib") free, about $(gib "$need_kib") needed"

# Fixtures are added size by size (nodes 1-10,000 in part-1, 10,001-100,000 in part-2), so each size
# merges the parts up to it and nothing is written twice.
fmt_secs() { awk -v s="$1" 'BEGIN { printf "%.1f s", s }'; }
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t ? "met" : "MISSED") }'; }
rows=()
parts=()
made=0
for n in "${sizes[@]}"; do
  part="$work/part-$(( ${#parts[@]} + 1 ))"
  start=$(date +%s.%N)
  bin/fleetgen -n $((n - made)) -start $((made + 1)) -out "$part"
  parts+=("$part")
  made=$n
  # The merge should not share the disk and the CPU with the writeback of what was just written.
  sync
  echo "generated $n nodes ($(du -sh "$work" | cut -f1)) in $(fmt_secs "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')")"
  for format in json table; do
    rc=0
    /usr/bin/time -f '%e %M' -o "$work/time" bin/clmemprobe merge --format "$format" "${parts[@]}" >/dev/null 2>"$work/stderr" || rc=$?
    # Exit 1 is outliers found, as the fixtures hold some; anything else means the merge itself failed.
    if [ "$rc" -gt 1 ]; then
      echo "merge-bench: merge --format $format of $n nodes: exit $rc: $(tail -n 3 "$work/stderr")" >&2
      exit 1
    fi
    read -r secs kib < <(tail -n 1 "$work/time")
    mib=$((kib / 1024))
    t_target=$(awk -v n="$n" 'BEGIN { print 6 * n / 10000 }')
    per=$(awk -v s="$secs" -v m="$mib" -v n="$n" 'BEGIN { printf "%.2f s, %d MiB", s * 10000 / n, m * 10000 / n }')
    rows+=("$(printf '%-8s %-6s %10s %6s MiB %24s   %s s: %s, 256 MiB: %s' "$n" "$format" "$(fmt_secs "$secs")" "$mib" "$per" \
      "$t_target" "$(verdict "$secs" "$t_target")" "$(verdict "$mib" 256)")")
  done
done
printf '\n%-8s %-6s %10s %10s %24s   %s\n' nodes format wall "peak RSS" "per 10,000 nodes" "targets"
printf '%s\n' "${rows[@]}"
