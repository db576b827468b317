#!/usr/bin/env bash
# Cold `nuv cluster prepare` both ways, measured once each (a source build takes minutes: it is not
# looped): from a loopback HTTPS mirror of the release download layouts (download + SHA-256
# verification of the five binaries into an empty cache), and from source with an empty Go build
# cache (modules already in the module cache); each followed by a cluster create on the result.
# Also the shipped path: kwok (no published checksums) built alone while the rest downloads.
# Prints the figures and the ratio. NUV_BENCH_SKIP_SOURCE=1 skips the whole source build.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec go test -count=1 -run '^$' -bench ColdPrepare -benchtime 1x -timeout 90m ./internal/cluster/localkube/
