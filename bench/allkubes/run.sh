#!/usr/bin/env bash
# Benchmark: wall time of `nuv all-kubes -- dtest` over 3 local clusters (flavours eks, gke, kind)
# run in parallel (the default) against the same runs in series (--parallel 1), in one run, and the
# ratio parallel/serial (target: <= 0.5 on 2 cores). Prints the figures; asserts nothing.
#
#   bash bench/allkubes/run.sh            # ROUNDS=N pairs of runs (default 2; order alternates)
#
# Needs Go and the nuv-kube companion (built on first use and cached, or `nuv cluster prepare`).
# Everything lives in a temporary NUV_HOME and project, deleted at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${ROUNDS:-2}
work=$(mktemp -d /tmp/nuv-bench-allkubes.XXXXXX)
export NUV_HOME=$work/home NUV_PROJECT=$work/project
nuv=$work/nuv
flavors=(eks gke kind)

cleanup() {
  for f in "${flavors[@]}"; do "$nuv" cluster delete "bench-$f" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

echo "building nuv..."
(cd "$root" && go build -o "$nuv" ./nuv)

# A project that deploys this repository's operator with its instance files.
mkdir -p "$NUV_PROJECT/tests"
cp "$root/go.mod" "$root/go.sum" "$NUV_PROJECT/"
ln -s "$root/operator" "$NUV_PROJECT/operator"
(cd "$root/tests" && find . -type f -not -path '*/itest/*') | while read -r f; do
  mkdir -p "$NUV_PROJECT/tests/$(dirname "$f")"
  ln -s "$root/tests/$f" "$NUV_PROJECT/tests/$f"
done
cd "$NUV_PROJECT"

for f in "${flavors[@]}"; do
  "$nuv" cluster create local --flavor "$f" --name "bench-$f" >/dev/null
done
echo "clusters: ${flavors[*]/#/bench-}"

# Warm-up (not timed): builds and caches the host-run operator binary once.
"$nuv" all-kubes --only "bench-${flavors[0]}" --no-progress -- dtest >/dev/null

run() { # args: all-kubes flags; prints seconds, fails the benchmark if a cluster failed
  local t0 t1
  t0=$(now)
  if ! "$nuv" all-kubes --no-progress "$@" -- dtest >"$work/last.log" 2>&1; then
    echo "all-kubes failed:" >&2; tail -20 "$work/last.log" >&2; exit 1
  fi
  t1=$(now)
  secs "$t0" "$t1"
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %12s %12s %8s\n' round parallel_s serial_s ratio
tp=0; ts=0
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then p=$(run); s=$(run --parallel 1); else s=$(run --parallel 1); p=$(run); fi
  ratio=$(awk -v p="$p" -v s="$s" 'BEGIN { printf "%.2f", p / s }')
  printf '%-6s %12s %12s %8s\n' "$r" "$p" "$s" "$ratio"
  tp=$(awk -v a="$tp" -v b="$p" 'BEGIN { print a + b }')
  ts=$(awk -v a="$ts" -v b="$s" 'BEGIN { print a + b }')
done
awk -v p="$tp" -v s="$ts" -v n="$rounds" 'BEGIN {
  printf "all-kubes -- dtest over 3 local clusters: parallel %.2fs, serial (--parallel 1) %.2fs, ratio %.2f (target <= 0.50)\n", p / n, s / n, p / s }'
