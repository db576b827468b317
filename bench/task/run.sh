#!/bin/sh
# The interpreter benchmark: a trivial task under `nuv -task` and under the stock go-task v3.54.0
# CLI (installed from the Go module proxy), `nuv -version` and a bundle dispatch, in one run.
# Prints medians and ratios; asserts nothing. Usage: bench/task/run.sh [-n RUNS]
set -eu
cd "$(dirname "$0")/../.."
exec go run ./bench/task "$@"
