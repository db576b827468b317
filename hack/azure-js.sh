#!/usr/bin/env bash
# Installs Azure's JavaScript SDK that the Azure emulator's TestIntegrationJavaScriptSDK drives
# (internal/emulator/azure/testdata/jsclient/package.json: pinned @azure/identity,
# @azure/arm-resources, @azure/arm-containerservice; install scripts off) into the user's cache,
# in a directory named by the package.json's digest (the one the test computes when
# NUV_AZURE_JS_DIR is not set), and prints that directory. Cold about 15 s and 60 MB; warm nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=internal/emulator/azure/testdata/jsclient/package.json
key=$(sha256sum "$pkg" | cut -c1-16)
dir=${XDG_CACHE_HOME:-$HOME/.cache}/nuv/test-npm/azure-js-$key
if [ ! -d "$dir/node_modules/@azure/identity" ]; then
  mkdir -p "$(dirname "$dir")"
  tmp=$(mktemp -d "$(dirname "$dir")/.install-XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  cp "$pkg" "$tmp/package.json"
  (cd "$tmp" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  mv "$tmp" "$dir"
fi
echo "$dir"
