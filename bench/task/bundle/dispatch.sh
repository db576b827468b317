#!/usr/bin/env bash
# Bundle dispatch benchmark: median wall time of `nuv bench noop` (discovery through NUV_ROOT, one
# folder, nuvroot.json/config merge, docopt, one trivial task in the embedded go-task) against the
# same task run directly with `nuv -task -t .../nuvfile.yml noop`, and `nuv -version` for the
# process start-up floor; prints each median and the ratio dispatch / -task.
#
# usage: bench/task/bundle/dispatch.sh [runs]     (NUV=/path/to/nuv skips the build; the paths must
# not contain spaces)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
runs=${1:-30}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nuv=${NUV:-}
if [ -z "$nuv" ]; then
  nuv=$tmp/nuv
  (cd "$root" && go build -o "$nuv" ./nuv)
fi
export NUV_HOME=$tmp/home NUV_ROOT=$here

# The commands are interleaved run by run, so a change in machine load hits all of them alike.
labels=("nuv -version" "nuv -task -t bench/nuvfile.yml noop" "nuv bench noop (dispatch)" "nuv bench hello --name=x (docopt)")
cmds=("$nuv -version" "$nuv -task -t $here/bench/nuvfile.yml noop" "$nuv bench noop" "$nuv bench hello --name=x")
cd "$tmp"
for c in "${cmds[@]}"; do $c >/dev/null 2>&1 || { echo "failed: $c" >&2; exit 1; }; done # warm-up
for ((i = 0; i < runs; i++)); do
  for j in "${!cmds[@]}"; do
    s=$(date +%s%N); ${cmds[$j]} >/dev/null 2>&1; e=$(date +%s%N)
    echo $(((e - s) / 1000)) >>"$tmp/t$j"
  done
done
median() { sort -n "$1" | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.1f", m/1000}'; }
echo "runs: $runs (load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo n/a))"
for j in "${!cmds[@]}"; do
  printf '%-40s median %s ms\n' "${labels[$j]}:" "$(median "$tmp/t$j")"
done
awk -v d="$(median "$tmp/t2")" -v t="$(median "$tmp/t1")" 'BEGIN {printf "ratio dispatch / -task: %.2f\n", d / t}'
