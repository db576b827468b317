#!/usr/bin/env bash
# Benchmark of nuv's local clusters. Prints, over RUNS runs (default 3) for a plain 3-node cluster and
# for an --ha one:
#   create   seconds of `nuv cluster create local --nodes 3` until it returns (all nodes Ready;
#            companion binary already cached)
#   deploy   seconds until a 10-replica Deployment is Available afterwards (kubectl apply + wait)
#   rss      total VmRSS of the cluster's processes (MB); every component runs the same nuv-kube
#            binary, so this counts its shared text pages once per process
#   pss      total proportional set size (MB): shared pages split between processes, the honest sum
#   unique   anonymous memory of all processes plus the binary's resident file pages once (MB)
# and nuv's start-up: median of `nuv -version` against `nuv-kube version` (a binary that links the
# control plane), measured in the same run, with their ratio.
# Usage: bench/cluster/run.sh [RUNS]      (needs go and kubectl; NUV_KUBE_BIN to use a prebuilt companion)
set -euo pipefail
RUNS=${1:-3}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d /tmp/nuv-bench-cluster.XXXXXX)
export NUV_HOME=$WORK/home NUV_PROJECT=$WORK/project
mkdir -p "$NUV_PROJECT"
NUV=$WORK/nuv
cleanup() { "$NUV" cluster delete --all >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT

now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }

(cd "$ROOT" && go build -o "$NUV" ./nuv)
KUBE=$("$NUV" cluster prepare | cut -f2)
echo "nuv-kube: $KUBE"

deployment='apiVersion: apps/v1
kind: Deployment
metadata: {name: bench}
spec:
  replicas: 10
  selector: {matchLabels: {app: bench}}
  template:
    metadata: {labels: {app: bench}}
    spec: {containers: [{name: c, image: nginx}]}'

memory() { # cluster name -> "rss pss unique" in MB
  local rss=0 pss=0 anon=0 file=0 f pid r p a fl
  for f in "$NUV_HOME/clusters/$1/pids/"*.pid; do
    pid=$(cut -d' ' -f1 "$f")
    r=$(awk '/^VmRSS/{print $2}' /proc/$pid/status); a=$(awk '/^RssAnon/{print $2}' /proc/$pid/status)
    fl=$(awk '/^RssFile/{print $2}' /proc/$pid/status); p=$(awk '/^Pss:/{print $2}' /proc/$pid/smaps_rollup)
    rss=$((rss + r)); pss=$((pss + p)); anon=$((anon + a)); [ "$fl" -gt "$file" ] && file=$fl
  done
  echo "$((rss / 1024)) $((pss / 1024)) $(((anon + file) / 1024))"
}

bench() { # label, extra create flags
  local label=$1; shift
  printf '%-6s %-4s %8s %8s %8s %8s %8s\n' "$label" run create deploy rss pss unique
  local creates=() deploys=() rsss=()
  for i in $(seq 1 "$RUNS"); do
    local name="b$i-$label"
    local t0; t0=$(now)
    "$NUV" cluster create local --name "$name" --nodes 3 "$@" >/dev/null 2>"$WORK/create.log" || { cat "$WORK/create.log"; exit 1; }
    local c; c=$(since "$t0")
    local kc="$NUV_PROJECT/clusters/$name.kubeconfig"
    t0=$(now)
    echo "$deployment" | kubectl --kubeconfig "$kc" apply -f - >/dev/null
    kubectl --kubeconfig "$kc" wait --for=condition=Available deployment/bench --timeout=120s >/dev/null
    local d; d=$(since "$t0")
    read -r rss pss uniq < <(memory "$name")
    printf '%-6s %-4s %8.2f %8.2f %8s %8s %8s\n' "$label" "$i" "$c" "$d" "$rss" "$pss" "$uniq"
    "$NUV" cluster delete "$name" >/dev/null
  done
}

echo "== local clusters, $RUNS runs (seconds, MB); targets: create <= 6 s, deploy <= 3 s, memory <= 700 MB"
bench plain
bench ha --ha

# Start-up: the two binaries alternate, so load from other work on the machine hits both alike.
for _ in $(seq 1 31); do
  a=$(date +%s%N); "$NUV" -version >/dev/null 2>&1
  b=$(date +%s%N); "$KUBE" version >/dev/null 2>&1
  c=$(date +%s%N); echo "$(( (b - a) / 1000 )) $(( (c - b) / 1000 ))"
done >"$WORK/startup"
n=$(cut -d' ' -f1 "$WORK/startup" | sort -n | sed -n 16p)
k=$(cut -d' ' -f2 "$WORK/startup" | sort -n | sed -n 16p)
printf '== start-up, median of 31 (ms): nuv -version %.1f, nuv-kube version %.1f (links the control plane); ratio nuv-kube/nuv %.2f\n' \
  "$(echo "$n / 1000" | bc -l)" "$(echo "$k / 1000" | bc -l)" "$(echo "$k / $n" | bc -l)"
nrss=$( { /usr/bin/time -f %M "$NUV" -version >/dev/null; } 2>&1 | tail -1)
krss=$( { /usr/bin/time -f %M "$KUBE" version >/dev/null; } 2>&1 | tail -1)
echo "== start-up max RSS (MB): nuv -version $((nrss / 1024)), nuv-kube version $((krss / 1024))"
echo "== load average during the run: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
