#!/usr/bin/env bash
# Benchmark of the deploy verbs on a local cluster (binaries cached: nuv-kube and the operator).
# Prints, over RUNS runs (default 3):
#   nuv up from an empty clusters/ (create cluster dev + operator + instance Ready)   target <= 20 s
#   nuv up again (everything reused, nothing changes)
#   nuv operator: apply to Available (host operator started)                         target <= 5 s
#   nuv instance: apply to Whisk Ready                                                 target <= 10 s
#   peer: kubectl apply --server-side -k + kubectl rollout status for the operator, same cluster,
#         and the ratio nuv/kubectl (nuv also builds with krusty and starts the host operator)
# Usage: bench/deploy/run.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
runs=${1:-3}

work=$(mktemp -d)
trap 'NUV_HOME=$work/home NUV_PROJECT=$work/project "$work/nuv" cluster delete dev >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
go build -o "$work/nuv" ./nuv
mkdir -p "$work/project" "$work/home"
for f in go.mod go.sum operator tests; do ln -s "$root/$f" "$work/project/$f"; done
export NUV_HOME=$work/home NUV_PROJECT=$work/project
unset NUV_CLUSTER MY_OPERATOR_IMAGE TAG WHISK
nuv() { "$work/nuv" "$@"; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", b-a}'; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }

# warm the caches (companion binary, operator binary) outside the measurement
nuv cluster prepare >/dev/null
( cd "$work/project" && go build -o /dev/null ./operator/cmd/whisk-operator )

up1=() up2=() op=() inst=() peer=()
for i in $(seq 1 "$runs"); do
  t0=$(now); nuv up >"$work/up.log" 2>&1 || { cat "$work/up.log"; exit 1; }; t1=$(now)
  up1+=("$(secs "$t0" "$t1")")
  t0=$(now); nuv up >"$work/up2.log" 2>&1 || { cat "$work/up2.log"; exit 1; }; t1=$(now)
  up2+=("$(secs "$t0" "$t1")")
  nuv destroy >/dev/null
  t0=$(now); nuv operator >"$work/op.log" 2>&1 || { cat "$work/op.log"; exit 1; }; t1=$(now)
  op+=("$(secs "$t0" "$t1")")
  t0=$(now); nuv instance >"$work/inst.log" 2>&1 || { cat "$work/inst.log"; exit 1; }; t1=$(now)
  inst+=("$(secs "$t0" "$t1")")
  nuv destroy >/dev/null
  if command -v kubectl >/dev/null; then
    kc=$work/project/clusters/dev.kubeconfig
    t0=$(now)
    kubectl --kubeconfig "$kc" apply --server-side --force-conflicts -k "$root/operator/config/default" >/dev/null
    kubectl --kubeconfig "$kc" -n nuv-system rollout status deployment/whisk-operator --timeout=120s >/dev/null
    t1=$(now)
    peer+=("$(secs "$t0" "$t1")")
    kubectl --kubeconfig "$kc" delete -k "$root/operator/config/default" --wait >/dev/null 2>&1 || true
  fi
  nuv cluster delete dev >/dev/null
done

m_up1=$(echo "${up1[*]}" | median); m_up2=$(echo "${up2[*]}" | median)
m_op=$(echo "${op[*]}" | median); m_inst=$(echo "${inst[*]}" | median)
printf '\nnuv deploy benchmark, %d runs (median; all runs)\n' "$runs"
printf '  nuv up, empty clusters/ -> Ready   %6.2f s  (target <= 20)  [%s]\n' "$m_up1" "${up1[*]}"
printf '  nuv up again (no change)           %6.2f s                  [%s]\n' "$m_up2" "${up2[*]}"
printf '  nuv operator -> Available          %6.2f s  (target <= 5)   [%s]\n' "$m_op" "${op[*]}"
printf '  nuv instance -> Whisk Ready        %6.2f s  (target <= 10)  [%s]\n' "$m_inst" "${inst[*]}"
if [ ${#peer[@]} -gt 0 ]; then
  m_peer=$(echo "${peer[*]}" | median)
  printf '  peer: kubectl apply -k + rollout   %6.2f s                  [%s]\n' "$m_peer" "${peer[*]}"
  awk -v a="$m_op" -v b="$m_peer" 'BEGIN{printf "  ratio nuv operator / kubectl       %6.2f\n", a/b}'
fi
