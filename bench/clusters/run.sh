#!/usr/bin/env bash
# Scale benchmark of nuv's local clusters: create to 3 nodes Ready, a 1,000-node cluster (time, peak
# RSS/PSS, CPU seconds) and the PSS of 10 idle clusters. See bench/clusters/main.go.
# Usage: bench/clusters/run.sh [-runs 3] [-nodes 1000] [-idle 10] [-nuv PATH]
set -euo pipefail
cd "$(dirname "$0")/../.."
exec go run ./bench/clusters "$@"
