#!/usr/bin/env bash
# Builds the provider, cached by the hash of its sources outside the work tree (like apps/agent):
# ${EDGEFLEET_CACHE:-~/.cache/edgefleet}/terraform-provider/<hash>/terraform-provider-edgefleet.
# Prints the binary's path.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
version="$(tr -d '[:space:]' < VERSION)"
hash="$({ find . -path ./node_modules -prune -o -type f \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum -o -name VERSION \) -print \
  | LC_ALL=C sort | xargs sha256sum; go env GOVERSION; } | sha256sum | cut -c1-16)"
dir="${EDGEFLEET_CACHE:-$HOME/.cache/edgefleet}/terraform-provider/$hash"
out="$dir/terraform-provider-edgefleet"
if [[ ! -x "$out" ]]; then
  mkdir -p "$dir"
  echo "building terraform-provider-edgefleet $version ($hash)" >&2
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$out.tmp" .
  mv "$out.tmp" "$out"
fi
echo "$out"
