#!/usr/bin/env bash
# Runs nuv's native Go fuzz targets (every FuzzXxx in a *_test.go file), one after the other,
# each for a set time, and prints the executions and crashes per target.
#
#   bash bench/fuzz/run.sh [-t DURATION] [-p WORKERS] [-m DURATION] [PATTERN...]
#
#   -t DURATION  how long each target runs (go test -fuzztime: 10m, 45s, 100000x); default 10m
#   -p WORKERS   fuzzing processes per target (go test -parallel); default Go's (GOMAXPROCS)
#   -m DURATION  how long an input that found new code (or crashed) is minimised
#                (go test -fuzzminimizetime); default 5s, so short runs fuzz rather than minimise
#   PATTERN      run only the targets whose package path or name contains one of them
#
# A crash stops its target: go test writes the input to the package's testdata/fuzz/FuzzXxx/,
# where it stays as a regression case that the ordinary test command runs. The seed corpora (the
# f.Add seeds and testdata/fuzz/FuzzXxx/*) run as ordinary tests in `go test` without -fuzz.
# Exit status: 1 if any target crashed or did not build, else 0.
set -euo pipefail
cd "$(dirname "$0")/../.."

duration=10m
workers=""
minimize=5s
while getopts "t:p:m:h" opt; do
  case $opt in
    t) duration=$OPTARG ;;
    p) workers=$OPTARG ;;
    m) minimize=$OPTARG ;;
    h) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))

# Every fuzz target: "package-dir FuzzName", from the test files (generated and vendored trees have none).
targets=$(grep -rl --include='*_test.go' -E '^func Fuzz[A-Z][A-Za-z0-9_]*\(f \*testing\.F\)' . |
  while read -r file; do
    dir=$(dirname "$file")
    grep -oE '^func Fuzz[A-Z][A-Za-z0-9_]*' "$file" | sed "s|^func |$dir |"
  done | sort)
if [ $# -gt 0 ]; then
  want=$(printf '%s\n' "$targets" | grep -F "$(printf '%s\n' "$@")" || true)
  targets=$want
fi
if [ -z "$targets" ]; then
  echo "no fuzz target matches" >&2
  exit 1
fi

logs=$(mktemp -d /tmp/nuv-fuzz.XXXXXX)
results=()
failed=0
while read -r dir name; do
  log="$logs/$(echo "$dir" | tr '/.' '__')-$name.log"
  echo "== $dir $name ($duration)" >&2
  args=(test -run '^$' -fuzz "^${name}\$" -fuzztime "$duration" -fuzzminimizetime "$minimize")
  [ -n "$workers" ] && args+=(-parallel "$workers")
  start=$SECONDS
  set +e
  go "${args[@]}" "$dir" >"$log" 2>&1
  rc=$?
  set -e
  secs=$((SECONDS - start))
  # go test -fuzz prints "fuzz: elapsed: 30s, execs: 12345 (411/sec), new interesting: 3 (total: 10)"
  execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
  interesting=$(grep -oE 'new interesting: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+' || true)
  crashes=0
  what=ok
  if [ $rc -ne 0 ]; then
    failed=1
    if grep -q 'Failing input written to' "$log"; then
      crashes=1
      what="crash: $(grep -oE 'testdata/fuzz/[^ ]+' "$log" | tail -1)"
    else
      what="failed (see $log)"
    fi
  fi
  results+=("$(printf '%-34s %-24s %12s %8s %8s %6ss  %s' "$dir" "$name" "${execs:-0}" "$crashes" "${interesting:-0}" "$secs" "$what")")
  tail -3 "$log" >&2
done <<<"$targets"

printf '\n%-34s %-24s %12s %8s %8s %7s  %s\n' PACKAGE TARGET EXECUTIONS CRASHES NEW TIME RESULT
printf '%s\n' "${results[@]}"
echo "logs: $logs"
exit $failed
