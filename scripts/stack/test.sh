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

# On failure, say which servers were still up and show the end of the log of any that died (or of
# all of them), before the stack and its logs' context are gone: a test failing on "fetch failed"
# or ECONNREFUSED then names the server that went away, and why.
report_stack_on_failure() {
  local code=$?
  if [ "$code" -ne 0 ] && [ -d "$PID_DIR" ]; then
    step "the test stack at the failure (exit $code)"
    bash "$STACK_DIR/status.sh" || true
    for pidfile in "$PID_DIR"/*.pid; do
      [ -e "$pidfile" ] || continue
      name="$(basename "$pidfile" .pid)"
      if ! is_running "$name" && [ -s "$LOG_DIR/$name.log" ]; then
        warn "$name is not running; the end of $LOG_DIR/$name.log:"
        tail -n 40 "$LOG_DIR/$name.log" | cut -c1-400 >&2
      fi
    done
  fi
  bash "$STACK_DIR/down.sh"
  exit "$code"
}
trap report_stack_on_failure EXIT
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
