#!/usr/bin/env bash
# Builds the native agent: static (CGO_ENABLED=0), stripped, version-stamped from VERSION.
# Binaries are cached by the hash of the sources (tests excluded) outside the work tree, in
# ${EDGEFLEET_CACHE:-~/.cache/edgefleet}/agent/<hash>/, so nothing is rebuilt when nothing changed.
#
#   apps/agent/build.sh              this machine's platform; prints the binary's path
#   apps/agent/build.sh --release    linux amd64, arm64 and armv7 (and the systemd unit) into apps/agent/dist/
set -euo pipefail
shopt -s inherit_errexit
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
version="$(tr -d '[:space:]' < VERSION)"
cache_root="${EDGEFLEET_CACHE:-$HOME/.cache/edgefleet}/agent"

source_hash() {
  { find . -path ./dist -prune -o -type f \( -name '*.go' ! -name '*_test.go' -o -name go.mod -o -name go.sum -o -name VERSION \) -print \
      | LC_ALL=C sort | xargs sha256sum; go env GOVERSION; } | sha256sum | cut -c1-16
}

# build GOOS GOARCH GOARM → prints the cached binary's path
build() {
  local goos="$1" goarch="$2" goarm="${3:-}" hash dir out
  hash="$(source_hash)"
  dir="$cache_root/$hash/$goos-$goarch${goarm:+v$goarm}"
  out="$dir/edgefleet-agent"
  if [[ ! -x "$out" ]]; then
    mkdir -p "$dir"
    echo "building edgefleet-agent $version for $goos/$goarch${goarm:+ v$goarm} ($hash)" >&2
    CGO_ENABLED=0 GOOS="$goos" GOARCH="$goarch" GOARM="$goarm" \
      go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$out.tmp.$$" ./cmd/edgefleet-agent
    # Our own temporary name: two builds at once (the agent's and the bench's tests under turbo)
    # must not write into one file; the rename puts either complete binary in place.
    mv "$out.tmp.$$" "$out"
  fi
  echo "$out"
}

case "${1:-}" in
  --release)
    mkdir -p dist
    for target in "linux amd64" "linux arm64" "linux arm 7"; do
      # shellcheck disable=SC2086
      binary="$(build $target)"
      read -r goos goarch goarm <<<"$target"
      name="edgefleet-agent-$version-$goos-$goarch${goarm:+v$goarm}"
      cp "$binary" "dist/$name"
      echo "dist/$name ($(stat -c %s "dist/$name") bytes)"
    done
    # The console serves dist/ to install commands (apps/web /downloads/agent): the unit goes along.
    cp packaging/edgefleet-agent.service dist/
    ;;
  "")
    build "$(go env GOOS)" "$(go env GOARCH)"
    ;;
  *)
    echo "usage: $0 [--release]" >&2
    exit 2
    ;;
esac
