#!/usr/bin/env bash
# Builds or installs the servers the GCS, Azure Blob and MongoDB state stores are tested on, each
# cached by its version under ${XDG_CACHE_HOME:-~/.cache}/nuv/test-servers, and prints the path of
# the program (the tests look there when NUV_TEST_FAKE_GCS, NUV_TEST_AZURITE or NUV_TEST_FERRETDB is
# not set):
#   gcs    fake-gcs-server, built from its Go module's own directory
#   azure  Azurite's blob service (npm, install scripts off)
#   mongo  FerretDB with its SQLite backend, built from its Go module's own directory
#   all    the three, one path a line
# Cold: a few minutes of compiling for the Go servers, about 20 s of npm; warm: nothing.
set -euo pipefail
cache=${XDG_CACHE_HOME:-$HOME/.cache}/nuv/test-servers

FAKE_GCS_VERSION=v1.56.1
AZURITE_VERSION=3.37.0
FERRETDB_VERSION=v1.24.2

# gobuild MODULE VERSION OUT PKG [TAGS [PREPARE]]: builds PKG of the module's own directory (copied
# out of the module cache, whose files are read-only) into OUT, atomically; PREPARE, a function,
# runs first in the copy.
gobuild() {
  local mod=$1 version=$2 out=$3 pkg=$4 tags=${5:-} prepare=${6:-}
  local dir tmp
  echo "state-servers-b: building ${mod##*/} $version once" >&2
  dir=$(go mod download -json "$mod@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "state-servers-b: cannot download $mod@$version" >&2; return 1; }
  mkdir -p "$(dirname "$out")"
  tmp=$(mktemp -d "$(dirname "$out")/.build-XXXXXX")
  cp -r "$dir" "$tmp/src"
  chmod -R u+w "$tmp/src"
  if [ -n "$prepare" ]; then (cd "$tmp/src" && "$prepare"); fi
  (cd "$tmp/src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -tags "$tags" -o "$tmp/bin" "$pkg" >&2)
  mv "$tmp/bin" "$out"
  rm -rf "$tmp"
}

gcs() {
  local out=$cache/fake-gcs-server-$FAKE_GCS_VERSION/fake-gcs-server
  [ -x "$out" ] || gobuild github.com/fsouza/fake-gcs-server "$FAKE_GCS_VERSION" "$out" .
  echo "$out"
}

# FerretDB reads its version from build/version/version.txt, which its release process writes.
ferretdb_version() { echo "$FERRETDB_VERSION" >build/version/version.txt; }

mongo() {
  local out=$cache/ferretdb-$FERRETDB_VERSION/ferretdb
  [ -x "$out" ] || gobuild github.com/FerretDB/FerretDB "$FERRETDB_VERSION" "$out" ./cmd/ferretdb ferretdb_no_postgresql ferretdb_version
  echo "$out"
}

azure() {
  local dir=$cache/azurite-$AZURITE_VERSION
  local bin=$dir/node_modules/.bin/azurite-blob
  if [ ! -x "$bin" ]; then
    echo "state-servers-b: installing azurite $AZURITE_VERSION once" >&2
    mkdir -p "$cache"
    local tmp
    tmp=$(mktemp -d "$cache/.install-XXXXXX")
    printf '{"private":true,"dependencies":{"azurite":"%s"}}\n' "$AZURITE_VERSION" >"$tmp/package.json"
    (cd "$tmp" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    rm -rf "$dir"
    mv "$tmp" "$dir"
  fi
  echo "$bin"
}

case ${1:-} in
gcs | azure | mongo) "$1" ;;
all) gcs && azure && mongo ;;
*)
  echo "usage: $0 gcs|azure|mongo|all" >&2
  exit 2
  ;;
esac
