#!/usr/bin/env bash
# Generates docs/ from the provider's schema and examples/ with tfplugindocs, offline: OpenTofu
# reads the schema from a locally installed build (-plugin-dir), and tfplugindocs renders it
# (it looks the schema up under registry.terraform.io/hashicorp/<name>). Commit docs/ after.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
source "$here/../../scripts/stack/versions.env"
cache="${EDGEFLEET_CACHE:-$HOME/.cache/edgefleet}"
tofu="$cache/opentofu/$OPENTOFU_VERSION/tofu"
tfplugindocs="$cache/tfplugindocs/$TFPLUGINDOCS_VERSION/tfplugindocs"
[ -x "$tofu" ] || { echo "OpenTofu is not built: ./edgefleet install --tofu" >&2; exit 1; }
if [ ! -x "$tfplugindocs" ]; then
  echo "building tfplugindocs $TFPLUGINDOCS_VERSION (first time only, ~1 min)" >&2
  GOBIN="$(dirname "$tfplugindocs")" go install "github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs@$TFPLUGINDOCS_VERSION"
fi
version="$(tr -d '[:space:]' < VERSION)"
binary="$(scripts/build.sh)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
platform="$(go env GOOS)_$(go env GOARCH)"
plugin="$work/plugins/registry.terraform.io/hashicorp/edgefleet/$version/$platform"
mkdir -p "$plugin"
cp "$binary" "$plugin/terraform-provider-edgefleet_v$version"
cat > "$work/main.tf" <<'TF'
terraform {
  required_providers {
    edgefleet = { source = "registry.terraform.io/hashicorp/edgefleet" }
  }
}
TF
export TF_CLI_CONFIG_FILE=/dev/null CHECKPOINT_DISABLE=1
(cd "$work" && "$tofu" init -input=false -plugin-dir=plugins >/dev/null && "$tofu" providers schema -json > schema.json)
"$tfplugindocs" generate --provider-name edgefleet --rendered-provider-name Edgefleet \
  --providers-schema "$work/schema.json" --examples-dir examples --provider-dir .
echo "docs generated in infra/terraform/docs"
