#!/usr/bin/env bash
# Installs whatever is missing for the local stack, idempotently.
#   install.sh           servers + node deps (what `./edgefleet up` needs)
#   install.sh --test    also Chromium for browser tests, the REST fuzzer and OpenTofu
#   install.sh --tofu    only OpenTofu (the Terraform provider's acceptance tests)
# Servers are cached by version under $EDGEFLEET_CACHE (default ~/.cache/edgefleet):
# a first run takes ~10 minutes (Go builds of Mimir and nats-server, Keycloak download),
# later runs take seconds.
source "$(dirname "$0")/lib.sh"

WITH_TEST=0
[ "${1:-}" = "--test" ] && WITH_TEST=1
ONLY_TOFU=0
[ "${1:-}" = "--tofu" ] && ONLY_TOFU=1

apt_install() {
  step "apt-get install $*"
  if [ "$(id -u)" != 0 ]; then
    die "need root to install Debian packages: $*" "run as root, or install them yourself: apt-get install -y $*"
  fi
  run_with_progress "apt-get install $*" 90 "$EDGEFLEET_CACHE/logs/apt.log" \
    bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $*"
}

check_prereqs() {
  step "checking prerequisites"
  command -v node >/dev/null || die "node is missing" "install Node.js ${NODE_MAJOR}.x (https://nodejs.org) and retry"
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$major" -ge "$NODE_MAJOR" ] || die "node $major is too old" "Edgefleet needs Node.js >= ${NODE_MAJOR}"
  command -v go >/dev/null || die "go is missing" "install Go >= 1.25 (https://go.dev/dl) and retry: it builds nats-server and Mimir"
  command -v mvn >/dev/null || die "mvn is missing" "apt-get install -y maven (it downloads Keycloak from Maven Central)"
  [ -x "$KEYCLOAK_JAVA_HOME/bin/java" ] || die "Java 21+ not found at $KEYCLOAK_JAVA_HOME" \
    "Keycloak $KEYCLOAK_VERSION needs Java 21 or newer; set KEYCLOAK_JAVA_HOME to a JDK 21+ home"
  ok "node $(node -v), $(go version | awk '{print $3}'), java at $KEYCLOAK_JAVA_HOME"
}

ensure_debian_packages() {
  local missing=()
  [ -x "$PG_BIN/pg_ctl" ] || missing+=("postgresql-$POSTGRES_MAJOR")
  command -v unzip >/dev/null || missing+=(unzip)
  if [ "$WITH_TEST" = 1 ]; then
    [ -x /usr/bin/chromium ] || missing+=(chromium)
  fi
  if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
  ok "postgresql $POSTGRES_MAJOR$([ "$WITH_TEST" = 1 ] && echo ", chromium")"
}

ensure_pnpm() {
  if ! command -v pnpm >/dev/null || [ "$(pnpm -v)" != "$PNPM_VERSION" ]; then
    step "installing pnpm $PNPM_VERSION"
    npm install -g --silent "pnpm@$PNPM_VERSION" >/dev/null
  fi
  ok "pnpm $(pnpm -v)"
}

ensure_nats() {
  if [ ! -x "$NATS_BIN" ]; then
    step "building nats-server $NATS_SERVER_VERSION (first time only, ~1.5 min)"
    local tmp="$EDGEFLEET_CACHE/nats-server/$NATS_SERVER_VERSION.tmp"
    rm -rf "$tmp" && mkdir -p "$tmp"
    run_with_progress "go install nats-server" 120 "$EDGEFLEET_CACHE/logs/nats-build.log" \
      env GOBIN="$tmp" go install -v "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION"
    mkdir -p "$(dirname "$NATS_BIN")"
    mv "$tmp/nats-server" "$NATS_BIN" && rm -rf "$tmp"
  fi
  ok "nats-server $("$NATS_BIN" --version | awk '{print $NF}')"
}

ensure_mailpit() {
  if [ ! -x "$MAILPIT_BIN" ]; then
    step "building mailpit $MAILPIT_VERSION, the stack's SMTP server (first time only, ~2 min)"
    local tmp="$EDGEFLEET_CACHE/mailpit/$MAILPIT_VERSION.tmp"
    rm -rf "$tmp" && mkdir -p "$tmp"
    run_with_progress "go install mailpit" 240 "$EDGEFLEET_CACHE/logs/mailpit-build.log" \
      env GOBIN="$tmp" go install "github.com/axllent/mailpit@$MAILPIT_VERSION"
    mkdir -p "$(dirname "$MAILPIT_BIN")"
    mv "$tmp/mailpit" "$MAILPIT_BIN" && rm -rf "$tmp"
  fi
  ok "mailpit $MAILPIT_VERSION"
}

ensure_mimir() {
  if [ ! -x "$MIMIR_BIN" ]; then
    step "building Grafana Mimir $MIMIR_VERSION (first time only, ~7 min, ~2 GB RAM)"
    # `go install` fails on Mimir's replace directives, so build inside the module.
    local src
    run_with_progress "download mimir source" 120 "$EDGEFLEET_CACHE/logs/mimir-download.log" \
      go mod download -json "github.com/grafana/mimir@$MIMIR_MODULE_VERSION"
    src="$(go mod download -json "github.com/grafana/mimir@$MIMIR_MODULE_VERSION" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).Dir))')"
    local build="$EDGEFLEET_CACHE/mimir/src-$MIMIR_VERSION"
    mkdir -p "$(dirname "$MIMIR_BIN")"
    rm -rf "$build"
    cp -r "$src" "$build"
    chmod -R u+w "$build"
    run_with_progress "go build mimir" 420 "$EDGEFLEET_CACHE/logs/mimir-build.log" \
      bash -c "cd '$build' && go build -v -o '$MIMIR_BIN.tmp' ./cmd/mimir"
    mv "$MIMIR_BIN.tmp" "$MIMIR_BIN" && rm -rf "$build"
  fi
  ok "mimir $MIMIR_VERSION"
}

ensure_keycloak() {
  if [ ! -x "$KEYCLOAK_HOME/bin/kc.sh" ]; then
    step "downloading Keycloak $KEYCLOAK_VERSION from Maven Central (first time only, ~1 min)"
    local dl="$EDGEFLEET_CACHE/keycloak/download"
    mkdir -p "$dl"
    run_with_progress "mvn dependency:copy keycloak" 120 "$EDGEFLEET_CACHE/logs/keycloak-download.log" \
      mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
      "-Dartifact=org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION:zip" "-DoutputDirectory=$dl"
    local dest="$(dirname "$KEYCLOAK_HOME")"
    rm -rf "$dest" && mkdir -p "$dest"
    unzip -q "$dl/keycloak-quarkus-dist-$KEYCLOAK_VERSION.zip" -d "$dest"
    rm -rf "$dl"
  fi
  # Build-time options are baked into the cached distribution once, so every start is
  # `kc.sh start --optimized` (~15 s) instead of start-dev's ~65 s re-augmentation.
  local options="--db=postgres --health-enabled=true --cache=local"
  if [ "$(cat "$KEYCLOAK_HOME/.edgefleet-build" 2>/dev/null)" != "$options" ]; then
    run_with_progress "kc.sh build" 90 "$EDGEFLEET_CACHE/logs/keycloak-build.log" \
      env JAVA_HOME="$KEYCLOAK_JAVA_HOME" "$KEYCLOAK_HOME/bin/kc.sh" build $options
    echo "$options" >"$KEYCLOAK_HOME/.edgefleet-build"
  fi
  ok "keycloak $KEYCLOAK_VERSION"
}

# The test command fuzzes the REST API from its OpenAPI document with schemathesis (PyPI).
ensure_schemathesis() {
  if [ ! -x "$SCHEMATHESIS_BIN" ]; then
    command -v python3 >/dev/null || die "python3 is missing" "install Python 3.9+ (the REST fuzzer, schemathesis, runs on it)"
    local venv
    venv="$(dirname "$(dirname "$SCHEMATHESIS_BIN")")"
    rm -rf "$venv"
    run_with_progress "pip install schemathesis $SCHEMATHESIS_VERSION" 60 "$EDGEFLEET_CACHE/logs/schemathesis.log" \
      bash -c "python3 -m venv '$venv' && '$venv/bin/pip' install -q 'schemathesis==$SCHEMATHESIS_VERSION'"
  fi
  ok "schemathesis $SCHEMATHESIS_VERSION"
}

# The Terraform provider's acceptance tests drive OpenTofu. `go install` fails on the module's
# replace directive and there is no HashiCorp download site here, so build inside the module.
ensure_tofu() {
  if [ ! -x "$TOFU_BIN" ]; then
    command -v go >/dev/null || die "go is missing" "install Go >= 1.26.6 (https://go.dev/dl): it builds OpenTofu"
    step "building OpenTofu $OPENTOFU_VERSION (first time only, ~6 min)"
    run_with_progress "download opentofu source" 120 "$EDGEFLEET_CACHE/logs/tofu-download.log" \
      go mod download -json "github.com/opentofu/opentofu@$OPENTOFU_VERSION"
    local src build="$EDGEFLEET_CACHE/opentofu/src-$OPENTOFU_VERSION"
    src="$(go mod download -json "github.com/opentofu/opentofu@$OPENTOFU_VERSION" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).Dir))')"
    mkdir -p "$(dirname "$TOFU_BIN")"
    rm -rf "$build"
    cp -r "$src" "$build"
    chmod -R u+w "$build"
    run_with_progress "go build tofu" 420 "$EDGEFLEET_CACHE/logs/tofu-build.log" \
      bash -c "cd '$build' && CGO_ENABLED=0 go build -v -trimpath -ldflags '-s -w -X github.com/opentofu/opentofu/version.dev=no' -o '$TOFU_BIN.tmp' ./cmd/tofu"
    mv "$TOFU_BIN.tmp" "$TOFU_BIN" && rm -rf "$build"
  fi
  # TF_CLI_CONFIG_FILE may name a missing file (tofu then warns on stdout): read no CLI config here.
  ok "opentofu $(TF_CLI_CONFIG_FILE=/dev/null "$TOFU_BIN" version -json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).terraform_version))')"
}

ensure_node_modules() {
  step "installing node packages (pnpm install)"
  (cd "$REPO_ROOT" && pnpm install --frozen-lockfile --reporter=append-only 2>&1 | grep -vE '^(Progress|\s*$)' | tail -n 5) ||
    die "pnpm install failed" "see the output above"
  ok "node packages"
}

main() {
  local start=$SECONDS
  if [ "$ONLY_TOFU" = 1 ]; then
    ensure_tofu
    return
  fi
  check_prereqs
  ensure_debian_packages
  ensure_pnpm
  [ "${EDGEFLEET_SKIP_NODE_MODULES:-0}" = 1 ] || ensure_node_modules
  ensure_nats
  ensure_mailpit
  ensure_keycloak
  ensure_mimir
  if [ "$WITH_TEST" = 1 ]; then
    ensure_schemathesis
    ensure_tofu
  fi
  step "install complete in $((SECONDS - start))s (cache: $EDGEFLEET_CACHE)"
}

main
