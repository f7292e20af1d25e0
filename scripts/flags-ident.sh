#!/usr/bin/env bash
# Checks that two builds answer the same command lines byte for byte (stdout, stderr, exit code): every
# command's --help, every flag given a bad value, flags that contradict each other, and good lines that
# allocate nothing (run and remedy --dry-run or a listing, report of a saved result). The check the typed
# flag values are held to (issue 44): a value parsed when it is set must say the line the command said.
#   scripts/flags-ident.sh OLD_BINARY NEW_BINARY
# Lines run in a temporary folder, removed at the end, with the OpenCL runtime of the environment (PoCL:
# POCL_DEVICES). Exit 1 on any difference; each one is named, with the line.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: scripts/flags-ident.sh OLD_BINARY NEW_BINARY" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2")
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fx=$(mktemp -d "${TMPDIR:-/tmp}/flags-ident.XXXXXX") || exit 2
trap 'rm -rf "$fx"' EXIT
run=$top/docs/examples/faultcl-case-a/run.json
trace=$(find "$top/docs/examples" -name trace.json | sort | head -1)
cp "$run" "$fx/run.json"
cp "$trace" "$fx/trace.json"
compared=0 differ=0

# same LINE: runs both builds with the words of LINE (split as the shell splits them, quotes kept) in the
# temporary folder and compares what they said.
same() {
  local line=$1 b o
  compared=$((compared + 1))
  for b in old new; do
    local bin=$old
    [ "$b" = new ] && bin=$new
    (cd "$fx" && eval "\"$bin\" $line" >"$fx/$b.out" 2>"$fx/$b.err" </dev/null; echo $? >"$fx/$b.rc")
    # A dry run says how much memory the machine has free now, which moves between the two runs.
    sed -i -E 's/"host_available_bytes": [0-9]+/"host_available_bytes": N/; s/\([0-9.]+ [KMGT]?i?B (of system memory available )?now\)/(N now)/' "$fx/$b.out"
  done
  for o in out err rc; do
    if ! cmp -s "$fx/old.$o" "$fx/new.$o"; then
      echo "DIFFERS ($o): clmemprobe $line"
      diff "$fx/old.$o" "$fx/new.$o" | head -4 | sed 's/^/    /'
      differ=$((differ + 1))
    fi
  done
}

# Every command's help, asked both ways, and the program's.
same "--help"
same "help"
for c in devices run report compare merge check bundle exchange largest remedy trace env version completion; do
  same "$c --help"
  same "help $c"
done
# Help wins over a flag's value, good or bad, as it did when every value was a string.
same "run --size bogus --help"
same "run --touch=nope -h"
same "trace --timeout x --help -- true"
same "run --size --help"

while IFS= read -r line; do
  [ -z "$line" ] || [ "${line:0:1}" = "#" ] || same "$line"
done <<'LINES'
# run: every flag with a bad value
run --devices x
run --devices 1,1
run --devices 3-1
run --strategies bogus
run --strategies shared,shared
run --strategies sharde
run --pool-size 10XB --strategies pool
run --pool-size 1MiB
run --pool-size 1KiB --strategies pool
run --size 1.5
run --size ''
run --dry-run --size '1.5 MB'
run --size 1.5 MB
run --sizes 1MiB,x
run --sizes 1MiB,1MiB --dry-run
run --max-allocs 1.2345e2
run --max-allocs 0
run --max-allocs -3
run --max-allocs many
run --repeat 0
run --repeat 1000
run --max-bytes abc
run --max-bytes 1KiB
run --flags bogus
run --flags read-write,read-only
run --flag-sets 'read-write;;use-host-ptr'
run --flag-sets 'read-write;read-write'
run --flags read-write --flag-sets use-host-ptr
run --like /nonexistent/trace.json
run --like run.json
run --like trace.json --size 2MiB
run --touch write
run --touch flil
run --timeout 0
run --timeout forever
run --hang-timeout -1s
run --setup-timeout NaN
run --host-reserve 1MiB
run --host-reserve lots
run --sample-interval 0s
run --variant bad
run --variant 'a:FOO'
run --variant default --no-default-variant
run --no-default-variant
run --variant-preset nope
run --variant-preset neo-pool --variant-preset neo-pool --dry-run
run --dry-run --variant-preset neo-pool --variant 'x:FOO=1' --format json
run --dry-run --variant-preset neo-pool --variant 'pool-off:FOO=1'
run --variant 'a:FOO=1' --variant 'a:FOO=2' --dry-run
run --variant 'b:RLIMIT_NOFILE=x'
run --variant 'c:OCL_ICD_VENDORS=x'
run --dry-run --variant 'a:FOO=1,BAR=x,y' --variant-preset list
run --dry-run --variant default --variant 'x:FOO=1'
run --dry-run --no-default-variant --variant 'x:FOO=1' --format json
remedy --variant-preset nope
run --attribution each
run --format yaml
run --format jsno
run --quiet --verbose
run extra
run --prom run.json --out .
run --prom a.prom --output a.prom
run --force=maybe
run --bogus
run --tuoch fill
# run: good lines that allocate nothing
run --dry-run
run --dry-run --format json --strategies all --touch FILL
run --dry-run --size 1mb --max-allocs 1e3
run --dry-run --sizes 4KiB,2GB --flag-sets 'read-write;alloc-host-ptr' --max-bytes 1GiB
run --dry-run --host-reserve off
run --dry-run --variant-preset list
run --variant-preset list --format json
run --dry-run --like trace.json
# remedy
remedy --touch nope
remedy --size x
remedy --repeat 2
remedy a b
remedy --quiet --verbose
remedy /nonexistent.json
# largest
largest --flags bogus
largest --max-bytes 1KiB
largest --max-bytes x
largest --patterns 3
largest --patterns 1,1
largest --host-reserve x
largest --setup-timeout 0
largest --format csv
largest --devices a
largest extra
# exchange
exchange --cells 1e3.5
exchange --cells 0
exchange --halo 0
exchange --steps 2.5
exchange --verify-every x
exchange --bench-bytes 1.5
exchange --bench-reps -1
exchange --buffer-flags alloc-host-ptr
exchange --buffer-flags bogus
exchange --sync maybe
exchange --hang-timeout 0
exchange --devices 0
exchange --format yaml
exchange extra
# trace
trace
trace --timeout x -- true
trace --timeout 0 --ledger-sample x -- true
trace --via inject -- true
trace --format csv -- true
trace --output trace.json --out . -- true
trace -- /nonexistent/program
# devices and env
devices --json --format table
devices --format yaml
devices --setup-timeout 0
devices extra
devices --format json --json
env --format yaml
env --wide
# report, compare, merge, check, bundle
report
report --format yaml run.json
report --format pprof run.json
report --max-samples 1 run.json
report --max-samples 1.5 run.json
report --strategy shared run.json
report --flags bogus --format repro run.json
report --format repro --flags CL_MEM_READ_WRITE run.json
report --max-samples 5 --format csv run.json
report --format json trace.json
compare run.json
compare --tolerance x run.json run.json
compare --tolerance -5 run.json run.json
compare --format yaml run.json run.json
compare --tolerance 5% run.json run.json
merge
merge --tolerance 2000 run.json
merge --format yaml run.json
merge --all --format csv run.json
check
check --expect run.json extra
check --expect run.json --time-limit 1s
check --expect run.json --time-limit x
check --expect run.json --budget 2s
check --expect run.json --tolerance x
check --expect run.json --format yaml
check --expect run.json -o x.json
check --record
check --record run.json --expect run.json
check --quiet --verbose
bundle
bundle run.json
bundle -o x.zip run.json
completion
completion fish
version extra
--version
hlep
LINES

echo "compared $compared command lines; $differ differences"
[ "$differ" -eq 0 ]
