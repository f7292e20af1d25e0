#!/usr/bin/env bash
# Checks that two builds write byte for byte the same answers (stdout, stderr, exit code, and every file a
# bundle holds) from the saved results under docs/examples: report in every format, compare, check
# --record, bundle and merge. A change to how the tool judges or renders a result must not show in its
# answer unless it is a named fix.
#   scripts/outputs-ident.sh OLD_BINARY NEW_BINARY
# Outputs go to a temporary folder, removed at the end. Exit 1 on any difference; each one is named.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: scripts/outputs-ident.sh OLD_BINARY NEW_BINARY" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 2
fx=$(mktemp -d "${TMPDIR:-/tmp}/outputs-ident.XXXXXX") || exit 2
trap 'rm -rf "$fx"' EXIT
compared=0 differ=0

# same NAME ARGS...: runs both builds with ARGS and compares what they wrote. Inside ARGS, @OUT@ is a file
# name of the build's own, compared too where the command wrote it.
same() {
  local name=$1 b o
  shift
  for b in old new; do
    local bin=$old
    [ "$b" = new ] && bin=$new
    local args=()
    for a in "$@"; do args+=("${a//@OUT@/$fx/$name.$b.file}"); done
    (cd "$fx" && "$bin" "${args[@]}" >"$fx/$name.$b.out" 2>"$fx/$name.$b.err"; echo $? >"$fx/$name.$b.rc")
    # The output file's own path differs between the builds: said on stderr, it is made the same.
    sed -i "s#$fx/$name.$b.file#OUT#g; s#$fx/$name.$b#OUT#g" "$fx/$name.$b.err" "$fx/$name.$b.out" 2>/dev/null
  done
  compared=$((compared + 1))
  for o in out err rc; do
    cmp -s "$fx/$name.old.$o" "$fx/$name.new.$o" || { echo "DIFFERS: $name ($o)"; differ=$((differ + 1)); }
  done
  if [ -e "$fx/$name.old.file" ] || [ -e "$fx/$name.new.file" ]; then
    cmp -s "$fx/$name.old.file" "$fx/$name.new.file" || { echo "DIFFERS: $name (file)"; differ=$((differ + 1)); }
  fi
}

# bundled NAME INPUT: bundles INPUT with both builds and compares every file of the two bundles.
bundled() {
  local name=$1 in=$2 b
  same "$name" bundle -q -o @OUT@.tar.gz "$top/$in"
  for b in old new; do
    mkdir -p "$fx/$name.$b.d"
    # A result bundle refuses (an exchange) writes none: the exit codes and stderr were compared.
    [ ! -e "$fx/$name.$b.file.tar.gz" ] || tar -xzf "$fx/$name.$b.file.tar.gz" -C "$fx/$name.$b.d"
    rm -f "$fx/$name.$b.file.tar.gz"
  done
  diff -r "$fx/$name.old.d" "$fx/$name.new.d" >/dev/null || {
    echo "DIFFERS: $name (bundle: $(diff -rq "$fx/$name.old.d" "$fx/$name.new.d" | sed "s#$fx/##g" | head -3 | tr '\n' ';'))"
    differ=$((differ + 1))
  }
}

runs=$(find docs/examples -name '*.json' -size +1k -print0 | xargs -0 grep -l '"schema_version"' | xargs grep -L '"kind": "trace"' | xargs grep -L '"kind": "clmemprobe-' | sort)
traces=$(find docs/examples -name trace.json | sort)
n=0
for r in $runs; do
  n=$((n + 1))
  for f in table json markdown csv prom repro timeline; do same "run$n-$f" report --format "$f" "$top/$r"; done
  for f in png svg; do same "run$n-$f" report --format "$f" -o @OUT@ "$top/$r"; done
  same "run$n-wide" report --wide "$top/$r"
  same "run$n-thin" report --format json --max-samples 7 "$top/$r"
  same "run$n-record" check --record "$top/$r"
  bundled "run$n-bundle" "$r"
done
n=0
for t in $traces; do
  n=$((n + 1))
  for f in table json markdown repro timeline; do same "trace$n-$f" report --format "$f" "$top/$t"; done
  for f in pprof pprof-failure; do same "trace$n-$f" report --format "$f" -o @OUT@ "$top/$t"; done
  bundled "trace$n-bundle" "$t"
done
set -- $runs
first=$1
while [ $# -ge 2 ]; do
  for f in table json markdown; do same "compare-$(basename "$(dirname "$1")")-$f" compare --format "$f" "$top/$1" "$top/$2"; done
  shift
done
for f in table json markdown; do same "compare-self-$f" compare --format "$f" "$top/$first" "$top/$first"; done
for f in table json markdown csv; do same "merge-$f" merge --format "$f" "$top/docs/examples"; done
ok=$(cat "$fx"/*.new.rc | grep -c '^0$')
echo "outputs-ident: $compared outputs compared, $ok of them with exit 0 ($(echo "$runs" | wc -w) runs, $(echo "$traces" | wc -w) traces), $differ differences"
[ "$differ" -eq 0 ]
