#!/usr/bin/env bash
# Builds or installs the servers the shared state stores are tested against into the user's
# cache, each in a directory named by its pinned version (where the tests look for it), and prints
# each program's path, one a line:
#   seaweedfs  SeaweedFS's weed (S3), built from its Go module (internal/cluster/state/objstore/servertest)
#   gcs        fake-gcs-server, built from its Go module
#   azure      Azurite's blob service (npm, install scripts off)
#   mongo      FerretDB with its SQLite backend, built from its Go module
# (gcs, azure and mongo: internal/testservers; NUV_TEST_FAKE_GCS, NUV_TEST_AZURITE and
# NUV_TEST_FERRETDB name another program.) No argument or `all`: every one; or name some:
# bash hack/state-servers.sh seaweedfs gcs. Cold: minutes of compiling per Go server (SeaweedFS
# the most), about 20 s of npm; warm: nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${XDG_CACHE_HOME:-$HOME/.cache}/nuv/test-servers

FAKE_GCS_VERSION=v1.56.1
AZURITE_VERSION=3.37.0
FERRETDB_VERSION=v1.24.2

# pinned VAR FILE: the version a Go constant VAR = "..." in FILE pins (the test reads the same).
pinned() { sed -n "s/.*\b$1[[:space:]]*=[[:space:]]*\"\([^\"]*\)\".*/\1/p" "$2" | head -1; }

# gobuild MODULE VERSION OUT PKG [TAGS [PREPARE]]: builds PKG of the module's own directory (copied
# out of the module cache, whose files are read-only; go install refuses modules with replace
# directives) into OUT, atomically; PREPARE, a function, runs first in the copy.
gobuild() {
  local mod=$1 version=$2 out=$3 pkg=$4 tags=${5:-} prepare=${6:-}
  local dir tmp
  echo "building ${mod##*/} $version from source once" >&2
  dir=$(go mod download -json "$mod@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "state-servers: cannot download $mod@$version" >&2; return 1; }
  mkdir -p "$(dirname "$out")"
  tmp=$(mktemp -d "$(dirname "$out")/.build-XXXXXX")
  cp -r "$dir" "$tmp/src"
  chmod -R u+w "$tmp/src"
  if [ -n "$prepare" ]; then (cd "$tmp/src" && "$prepare"); fi
  (cd "$tmp/src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -tags "$tags" -o "$tmp/bin" "$pkg" >&2)
  mv "$tmp/bin" "$out"
  rm -rf "$tmp"
}

# SeaweedFS's weed: S3 (with If-None-Match / If-Match writes and If-Match deletes).
seaweedfs() {
  local version out
  version=$(pinned SeaweedFSVersion internal/cluster/state/objstore/servertest/seaweedfs.go)
  out=$cache/weed-$version/weed
  [ -x "$out" ] || gobuild github.com/seaweedfs/seaweedfs "$version" "$out" ./weed
  echo "$out"
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
    echo "installing azurite $AZURITE_VERSION once" >&2
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

servers=("$@")
if [ ${#servers[@]} -eq 0 ] || [ "${servers[0]}" = all ]; then servers=(seaweedfs gcs azure mongo); fi
for s in "${servers[@]}"; do
  case $s in
  seaweedfs | gcs | azure | mongo) "$s" ;;
  *)
    echo "usage: $0 [all | seaweedfs gcs azure mongo ...]" >&2
    exit 2
    ;;
  esac
done
