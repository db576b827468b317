#!/usr/bin/env bash
# Benchmark of nuv's local clusters against kwokctl in the same run: see bench/cluster/main.go.
# Usage: bench/cluster/run.sh [RUNS]      (needs only Go; NUV_KUBE_BIN to use a prebuilt companion)
set -euo pipefail
cd "$(dirname "$0")/../.."
exec go run ./bench/cluster -runs "${1:-3}"
