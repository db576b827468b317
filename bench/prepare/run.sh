#!/usr/bin/env bash
# Cold `nuv cluster prepare` both ways, measured once each (a source build takes minutes: it is not
# looped): from a loopback HTTPS mirror of the release download layouts (download + SHA-256
# verification of the five binaries into an empty cache), and from source with an empty Go build
# cache (modules already in the module cache); each followed by a cluster create on the result.
# Prints both figures and their ratio. NUV_BENCH_SKIP_SOURCE=1 measures the mirror only.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec go test -count=1 -run '^$' -bench ColdPrepare -benchtime 1x -timeout 90m ./internal/cluster/local/
