#!/usr/bin/env bash
# The test command: installs what is missing (Chromium too), starts a fresh `test` stack
# beside any dev stack, runs lint, typecheck, unit + integration tests and the browser
# tests against the real servers, and stops the stack whatever happens.
source "$(dirname "$0")/lib.sh"
export EDGEFLEET_PROFILE=test
source "$STACK_DIR/profile.sh"
source "$STACK_DIR/process.sh"
source "$STACK_DIR/services.sh"

start=$SECONDS
bash "$STACK_DIR/install.sh" --test

# A test run always starts from empty data, so results never depend on a previous run.
bash "$STACK_DIR/down.sh" >/dev/null 2>&1 || true
rm -rf "$VAR_DIR"
mkdir -p "$LOG_DIR" "$PID_DIR"

trap 'bash "$STACK_DIR/down.sh"' EXIT
EDGEFLEET_SKIP_INSTALL=1 bash "$STACK_DIR/up.sh"
load_stack_env

cd "$REPO_ROOT"
step "lint (biome)"
pnpm lint
step "typecheck"
pnpm turbo run typecheck --output-logs=errors-only
step "unit and integration tests (real Postgres, NATS, Mimir, Keycloak)"
pnpm turbo run test --concurrency=1 --continue --output-logs=full
step "browser tests (Debian Chromium through the real Keycloak sign-in)"
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 pnpm --filter @edgefleet/web test:e2e

step "all tests passed in $((SECONDS - start))s"
