#!/usr/bin/env bash
# nuv's test command (the README names it; CI runs it through .ci/run).
#
# On a fresh Debian 12 machine with Go it installs what the tests need (Debian's docker-registry and
# apache2-utils for the registry tests, awscli for the AWS emulator's, git), builds nuv and the
# companion binary of local clusters (cached after the first run), then runs every package's tests,
# integration tests included.
# Pass -short to skip the integration tests; extra arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s (%ds)\n' "$*" "$SECONDS"; }

step "system packages"
missing=()
command -v git >/dev/null || missing+=(git)
command -v docker-registry >/dev/null || missing+=(docker-registry)
command -v htpasswd >/dev/null || missing+=(apache2-utils)
command -v aws >/dev/null || missing+=(awscli) # the AWS emulator's tests drive the aws CLI too
command -v kubectl >/dev/null || echo "note: kubectl not found; the tests that drive kubectl are skipped"
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "missing packages: ${missing[*]} (install them with apt-get, as root)" >&2
    exit 1
  fi
fi
# Debian's docker-registry package starts a system service on :5000; the tests start their own.
if command -v systemctl >/dev/null && systemctl is-active --quiet docker-registry 2>/dev/null; then
  systemctl stop docker-registry || true
fi

step "build nuv"
mkdir -p bin
go build -o bin/nuv ./nuv
ln -sf nuv bin/task
export PATH="$PWD/bin:$PATH"

step "vet"
go vet ./...

step "local-cluster binaries (built once, then cached)"
nuv cluster prepare

step "tests"
# -count=1: every run really runs the tests (results are never taken from the build cache)
go test -count=1 -timeout 70m "$@" ./...
