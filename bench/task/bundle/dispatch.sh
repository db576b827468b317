#!/usr/bin/env bash
# Bundle dispatch benchmark: median wall time of `nuv bench noop` (discovery through NUV_ROOT, one
# folder, nuvroot.json/config merge, docopt, one trivial task in the embedded go-task) against the
# same task run directly with `nuv -task -t .../nuvfile.yml noop`, and `nuv -version` for the
# process start-up floor; prints each median and the ratio dispatch / -task.
#
# usage: bench/task/bundle/dispatch.sh [runs]     (NUV=/path/to/nuv to skip the build)
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

median_ms() { # command... -> median milliseconds over $runs runs (after one warm-up)
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  local i s e
  for ((i = 0; i < runs; i++)); do
    s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
    echo $(((e - s) / 1000))
  done | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.1f", m/1000}'
}

cd "$tmp"
version=$(median_ms "$nuv" -version)
direct=$(median_ms "$nuv" -task -t "$here/bench/nuvfile.yml" noop)
dispatch=$(median_ms "$nuv" bench noop)
docopt=$(median_ms "$nuv" bench hello --name=x)
echo "runs: $runs"
echo "nuv -version:                    median ${version} ms"
echo "nuv -task -t bench/nuvfile noop: median ${direct} ms"
echo "nuv bench noop (dispatch):       median ${dispatch} ms"
echo "nuv bench hello --name=x:        median ${docopt} ms"
awk -v d="$dispatch" -v t="$direct" 'BEGIN {printf "ratio dispatch / -task: %.2f\n", d / t}'
