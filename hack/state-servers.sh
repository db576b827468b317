#!/usr/bin/env bash
# Builds the servers the shared state stores are tested against (internal/cluster/state/objstore
# and its adapters) into the user's cache, each in a directory named by its pinned version (where
# the tests look for it, internal/cluster/state/objstore/servertest), and prints each binary's
# path. Cold minutes (a Go build of each server's module), warm nothing.
#
# One function per server, each printing the path of its binary; run them all (no argument) or
# name some: bash hack/state-servers.sh seaweedfs
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${XDG_CACHE_HOME:-$HOME/.cache}/nuv/test-servers

# pinned VAR FILE: the version a Go constant VAR = "..." in FILE pins (the test reads the same).
pinned() { sed -n "s/.*\b$1[[:space:]]*=[[:space:]]*\"\([^\"]*\)\".*/\1/p" "$2" | head -1; }

# go_module_build MODULE VERSION PKG NAME: builds PKG of MODULE@VERSION from the module's own
# directory (go install refuses modules with replace directives) into $cache/NAME-VERSION/NAME.
go_module_build() {
  local module=$1 version=$2 pkg=$3 name=$4
  local dir=$cache/$name-$version
  if [ ! -x "$dir/$name" ]; then
    mkdir -p "$cache"
    local src tmp
    src=$(go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    [ -n "$src" ] || { echo "go mod download $module@$version gave no directory" >&2; return 1; }
    tmp=$(mktemp -d "$cache/.build-$name-XXXXXX")
    cp -r "$src" "$tmp/src"
    chmod -R u+w "$tmp/src"
    echo "building $name $version from source once" >&2
    (cd "$tmp/src" && GOFLAGS=-mod=mod go build -trimpath -o "$tmp/$name" "$pkg" >&2)
    mkdir -p "$dir"
    mv "$tmp/$name" "$dir/$name"
    rm -rf "$tmp"
  fi
  echo "$dir/$name"
}

# SeaweedFS's weed: S3 (with If-None-Match / If-Match writes and If-Match deletes).
seaweedfs() {
  go_module_build github.com/seaweedfs/seaweedfs \
    "$(pinned SeaweedFSVersion internal/cluster/state/objstore/servertest/seaweedfs.go)" ./weed weed
}

servers=("$@")
[ ${#servers[@]} -gt 0 ] || servers=(seaweedfs)
for s in "${servers[@]}"; do "$s"; done
