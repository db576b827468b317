#!/usr/bin/env bash
# Benchmark: `nuv all-kubes -- dtest` over N local clusters (default 10, flavours cycling) on this
# machine, parallel (--parallel auto, or $PARALLEL) against serial (--parallel 1) in the same run,
# with the ratio parallel/serial (target: <= 0.30 for 10 clusters on 2 cores), the idle memory of
# each local cluster (PSS of its etcd, kube-apiserver, controller-manager, scheduler and kwok after
# a minute idle; target <= 250 MB), and the peak memory of the whole parallel run (PSS of every
# cluster process plus all-kubes and everything it started, sampled every second).
# Prints the figures; asserts nothing.
#
#   bash bench/allkubes/run.sh        # CLUSTERS=N (10), ROUNDS=N pairs of runs (1), PARALLEL=auto
#
# Needs Go and the nuv-kube companion (built on first use and cached, or `nuv cluster prepare`).
# Everything lives in a temporary NUV_HOME and project, deleted at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=${CLUSTERS:-10}
rounds=${ROUNDS:-1}
parallel=${PARALLEL:-auto}
work=$(mktemp -d /tmp/nuv-bench-allkubes.XXXXXX)
export NUV_HOME=$work/home NUV_PROJECT=$work/project
nuv=$work/nuv
all_flavors=(eks gke kind aks k3s lks generic m8s osh "")
names=()
for i in $(seq 1 "$n"); do names+=("bench-$i"); done

cleanup() {
  [ -n "${sampler:-}" ] && kill "$sampler" 2>/dev/null || true
  for c in "${names[@]}"; do "$nuv" cluster delete --yes "$c" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# pss_kb PID... -> the sum of their proportional set sizes (kB); gone processes count 0.
pss_kb() { local p t=0 v; for p in "$@"; do v=$(awk '/^Pss:/{print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || true); t=$((t + ${v:-0})); done; echo "$t"; }
cluster_pids() { local f; for f in "$NUV_HOME/clusters/$1/pids/"*.pid; do cut -d' ' -f1 "$f"; done; }
all_cluster_pids() { local c; for c in "${names[@]}"; do cluster_pids "$c"; done; }
# session_pids SID -> every process of that session (all-kubes runs under setsid: its children,
# their process groups and whatever they start share its session).
session_pids() { awk -v s="$1" '{ sub(/^.*\) /, ""); if ($4 == s) print FILENAME }' /proc/[0-9]*/stat 2>/dev/null | cut -d/ -f3; }

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

t0=$(now)
for i in $(seq 1 "$n"); do
  fl=${all_flavors[$(((i - 1) % ${#all_flavors[@]}))]}
  "$nuv" cluster create local ${fl:+--flavor "$fl"} --name "bench-$i" >/dev/null
done
echo "created $n local clusters in $(secs "$t0" "$(now)")s"

# Warm-up (not timed): builds and caches the host-run operator binary once.
"$nuv" all-kubes --only bench-1 --no-progress -- dtest >/dev/null

echo "idle for 60s, then the memory of each cluster (PSS, MB):"
sleep 60
tot=0; max=0
for c in "${names[@]}"; do
  kb=$(pss_kb $(cluster_pids "$c"))
  tot=$((tot + kb)); [ "$kb" -gt "$max" ] && max=$kb
  printf '  %-10s %6d\n' "$c" $((kb / 1024))
done
idle_mean=$((tot / n / 1024))
echo "idle memory per local cluster: mean ${idle_mean} MB PSS, max $((max / 1024)) MB (target <= 250), all $n: $((tot / 1024)) MB"

peak_file=$work/peak
run() { # args: all-kubes flags; prints seconds, fails the benchmark if a cluster failed
  local t0 t1 pid sid
  : >"$peak_file"
  t0=$(now)
  setsid "$nuv" all-kubes --no-progress "$@" -- dtest >"$work/last.log" 2>&1 &
  pid=$!
  sid=$pid
  ( peak=0
    while kill -0 "$pid" 2>/dev/null; do
      kb=$(pss_kb $(all_cluster_pids) $(session_pids "$sid"))
      [ "$kb" -gt "$peak" ] && { peak=$kb; echo "$peak" >"$peak_file"; }
      sleep 1
    done ) &
  sampler=$!
  if ! wait "$pid"; then
    echo "all-kubes failed:" >&2; tail -30 "$work/last.log" >&2; exit 1
  fi
  t1=$(now)
  wait "$sampler" 2>/dev/null || true
  sampler=
  secs "$t0" "$t1"
}

echo "machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.1f GB", $2/1048576}' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %12s %12s %8s %14s\n' round parallel_s serial_s ratio peak_pss_mb
tp=0; ts=0; peak=0
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then
    p=$(run --parallel "$parallel"); pk=$(cat "$peak_file"); cp "$work/last.log" "$work/parallel.log"; s=$(run --parallel 1)
  else
    s=$(run --parallel 1); p=$(run --parallel "$parallel"); pk=$(cat "$peak_file"); cp "$work/last.log" "$work/parallel.log"
  fi
  ratio=$(awk -v p="$p" -v s="$s" 'BEGIN { printf "%.2f", p / s }')
  printf '%-6s %12s %12s %8s %14d\n' "$r" "$p" "$s" "$ratio" $((${pk:-0} / 1024))
  [ "${pk:-0}" -gt "$peak" ] && peak=$pk
  tp=$(awk -v a="$tp" -v b="$p" 'BEGIN { print a + b }')
  ts=$(awk -v a="$ts" -v b="$s" 'BEGIN { print a + b }')
done
grep -m1 'parallel auto' "$work/parallel.log" || true
awk -v p="$tp" -v s="$ts" -v r="$rounds" -v n="$n" -v par="$parallel" -v pk=$((peak / 1024)) -v idle="$idle_mean" 'BEGIN {
  printf "all-kubes -- dtest over %d local clusters: parallel (%s) %.2fs, serial (--parallel 1) %.2fs, ratio %.2f (target <= 0.30); peak memory of the parallel run %d MB PSS; idle %d MB PSS per cluster (target <= 250)\n", n, par, p / r, s / r, p / s, pk, idle }'
