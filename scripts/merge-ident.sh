#!/usr/bin/env bash
# Checks that `clmemprobe merge` writes byte for byte what a baseline build writes (stdout, stderr, exit
# code) on the docs' examples, fleetgen fleets of every shape with outliers, broken files, every format,
# --all and --tolerance: a change to how merge keeps its rows must not show in its answer.
#   scripts/merge-ident.sh OLD_BINARY NEW_BINARY
# Fixtures and outputs go to a temporary folder, removed at the end. Exit 1 on any difference.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: scripts/merge-ident.sh OLD_BINARY NEW_BINARY" >&2; exit 2; }
old=$1 new=$2
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 2
fx=$(mktemp -d "${TMPDIR:-/tmp}/merge-ident.XXXXXX") || exit 2
trap 'rm -rf "$fx"' EXIT
go build -o "$fx/fleetgen" ./scripts/fleetgen || exit 2
# Node 997 of each shape reaches fewer buffers in one strategy, node 2503 crashes in one (fleetgen).
"$fx/fleetgen" -n 60 -start 960 -shape example -out "$fx/example" >/dev/null
"$fx/fleetgen" -n 120 -start 940 -shape issue -out "$fx/issue" >/dev/null
"$fx/fleetgen" -n 400 -start 2300 -shape small -fanout 37 -out "$fx/small" >/dev/null
bad=$fx/bad
good=$fx/issue/node-0000997/run.json
[ -s "$good" ] || { echo "merge-ident: fleetgen wrote no $good" >&2; exit 2; }
mk() { mkdir -p "$bad/$1"; cat > "$bad/$1/run.json"; }
printf '{not json' | mk notjson
head -c 30000 "$good" | mk truncated
sed 's/"schema_version": 1/"schema_version": 2/' "$good" | mk schema2
sed 's/"allocations_ok": \([0-9]*\)/"allocations_ok": "\1"/' "$good" | mk typeerr
sed '0,/"outcome": "failed"/s//"outcome": "fine"/' "$good" | mk badoutcome
sed '0,/"hostname": "\([^"]*\)"/s//"hostname": "dup", "hostname": "\1"/' "$good" | mk dupkey
sed '0,/"hostname": "gpu/s//"hostname": "=g\\u00e9pu/' "$good" | mk escaped
printf '' | mk empty
mkdir -p "$bad/dir/run.json"
# A damaged file that came out the same as the good one damages nothing: the fixtures went stale.
for d in schema2 typeerr badoutcome dupkey escaped; do
  cmp -s "$good" "$bad/$d/run.json" && { echo "merge-ident: the $d fixture is the good file unchanged" >&2; exit 2; }
done
compared=0 differ=0
run() { # name, merge's arguments
  local name=$1; shift
  "$old" merge "$@" >"$fx/$name.old.out" 2>"$fx/$name.old.err"; echo $? >"$fx/$name.old.rc"
  "$new" merge "$@" >"$fx/$name.new.out" 2>"$fx/$name.new.err"; echo $? >"$fx/$name.new.rc"
  compared=$((compared + 1))
  for s in out err rc; do
    cmp -s "$fx/$name.old.$s" "$fx/$name.new.$s" || { echo "DIFFERS: $name ($s)"; differ=$((differ + 1)); }
  done
}
for f in table json markdown csv png; do
  run "docs-$f" --format "$f" docs/examples
  run "example-$f" --format "$f" "$fx/example"
  run "issue-$f" --format "$f" "$fx/issue"
  run "small-$f" --format "$f" "$fx/small"
  run "mixed-$f" --format "$f" "$fx/small" "$fx/issue" "$fx/example"
  run "bad-$f" --format "$f" "$fx/issue" "$bad"
  run "all-$f" --all --format "$f" "$fx/small" "$fx/issue"
  run "tol-$f" --tolerance 0.5% --format "$f" "$fx/small" "$fx/example"
  run "wide-$f" --wide --tolerance 3% --format "$f" "$fx/issue"
done
for d in "$bad"/*; do run "one-$(basename "$d")" "$d/run.json"; done
run none "$bad"
run output -o "$fx/issue/node-0000940/run.json" "$fx/issue"
echo "merge-ident: $compared merges compared (stdout, stderr, exit code), $differ differences"
[ "$differ" -eq 0 ]
