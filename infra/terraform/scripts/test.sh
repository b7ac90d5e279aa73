#!/usr/bin/env bash
# The provider's tests: gofmt, vet and unit tests always (the client's retries and 404s, the
# OpenAPI drift check against a document freshly generated from packages/api, schemas,
# validators); then, when a stack is up (WEB_URL and DATABASE_URL set, as `./edgefleet test`
# and `source var/<profile>/stack.env` do), the acceptance tests with OpenTofu against its real
# REST API, as the owner of an organization made for the run.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
source "$here/../../scripts/stack/versions.env"
tofu="${EDGEFLEET_CACHE:-$HOME/.cache/edgefleet}/opentofu/$OPENTOFU_VERSION/tofu"

mkdir -p internal/client/testdata
node_modules/.bin/tsx scripts/openapi.ts > internal/client/testdata/openapi.gen.json
unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
  echo "gofmt: not formatted: $unformatted" >&2
  exit 1
fi
go vet ./...
go test ./...

if [ -z "${WEB_URL:-}" ] || [ -z "${DATABASE_URL:-}" ]; then
  echo "acceptance tests skipped: no stack (source var/<profile>/stack.env after ./edgefleet up)"
  exit 0
fi
if [ ! -x "$tofu" ]; then
  echo "OpenTofu $OPENTOFU_VERSION is not built: run ./edgefleet install --tofu (or --test)" >&2
  exit 1
fi
eval "$(node_modules/.bin/tsx scripts/acceptance-org.ts)"
# OpenTofu, offline: no HashiCorp downloads, the provider served in-process, no CLI config of the machine's.
export TF_ACC=1 TF_ACC_TERRAFORM_PATH="$tofu" TF_ACC_PROVIDER_HOST=registry.opentofu.org \
  TF_ACC_PROVIDER_NAMESPACE=hashicorp CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE=/dev/null \
  EDGEFLEET_ENDPOINT="$WEB_URL" EDGEFLEET_OPENAPI_URL="$WEB_URL/api/openapi.json"
unset TF_ACC_TERRAFORM_VERSION
start=$SECONDS
status=0
# The drift check again, against the document the running console serves.
go test ./internal/client -run OpenAPI -count=1 || status=1
go test ./internal/provider -run '^TestAcc' -count=1 -parallel "${TF_ACC_PARALLEL:-4}" -timeout 20m || status=1
echo "acceptance tests: $([ $status = 0 ] && echo passed || echo FAILED) in $((SECONDS - start))s"
exit "$status"
