#!/usr/bin/env bash
# Installs what is missing and starts the stack of one profile (EDGEFLEET_PROFILE, default dev):
# PostgreSQL, NATS hub, Mimir, Keycloak, then migrations + demo seed, gateway and console.
#   up.sh              everything
#   up.sh --services   only the servers (for `pnpm dev` style work on the apps)
# On any failure it stops everything this profile runs, so nothing is left behind.
source "$(dirname "$0")/lib.sh"
source "$STACK_DIR/profile.sh"
source "$STACK_DIR/process.sh"
source "$STACK_DIR/services.sh"

SERVICES_ONLY=0
[ "${1:-}" = "--services" ] && SERVICES_ONLY=1

on_failure() {
  local code="${1:-1}"
  trap - ERR INT TERM EXIT
  echo >&2
  warn "start-up failed: stopping what was started (logs stay in $LOG_DIR)"
  bash "$STACK_DIR/down.sh" >/dev/null 2>&1 || true
  exit "$code"
}
trap 'on_failure $?' ERR
trap 'on_failure 130' INT TERM
# `exit` inside die() does not fire ERR; catch it on EXIT instead while starting.
trap 'code=$?; [ "$code" -eq 0 ] || on_failure "$code"' EXIT

start=$SECONDS
if [ "${EDGEFLEET_SKIP_INSTALL:-0}" != 1 ]; then bash "$STACK_DIR/install.sh"; fi

step "starting the $EDGEFLEET_PROFILE stack (data in ${VAR_DIR#"$REPO_ROOT"/})"
write_stack_env
start_postgres
start_nats
start_mimir
start_mailpit
# Benchmarks that sign nobody in skip Keycloak (its start-up is the slowest part on a busy machine).
if [ "${EDGEFLEET_SKIP_KEYCLOAK:-0}" != 1 ] || [ "$SERVICES_ONLY" = 0 ]; then start_keycloak; fi
load_stack_env

if [ "$SERVICES_ONLY" = 0 ]; then
  prepare_database
  build_agent_release
  if [ "${EDGEFLEET_SKIP_WEB_BUILD:-0}" != 1 ] || [ ! -d "$REPO_ROOT/apps/web/.next" ]; then build_web; fi
  step "starting the gateway and the console"
  start_gateway
  start_web
  start_demo
fi
trap - ERR INT TERM EXIT

printf '\n%s%sEdgefleet (%s) is up%s in %ss.\n\n' "$C_GREEN" "$C_BOLD" "$EDGEFLEET_PROFILE" "$C_OFF" "$((SECONDS - start))"
if [ "$SERVICES_ONLY" = 0 ]; then
  cat <<DONE
  Console        $WEB_URL
  Demo logins    alice / edgefleet   (Acme Energy)
                 bob   / edgefleet   (Globex Logistics)
                 carol / edgefleet   (Acme, viewer until alice changes her role)
  Gateway        $GATEWAY_URL/readyz   $GATEWAY_URL/metrics
DONE
else
  echo "  Servers only: run the apps yourself with the variables of ${STACK_ENV#"$REPO_ROOT"/}"
fi
cat <<DONE
  Keycloak admin $KEYCLOAK_URL/admin   (admin / admin)
  NATS           $NATS_URL   (leaf nodes: $NATS_LEAF_URL; monitor: $NATS_MONITOR_URL)
  Mimir          $MIMIR_URL
  PostgreSQL     $DATABASE_URL

  Environment for tools: ${STACK_ENV#"$REPO_ROOT"/}   Logs: ${LOG_DIR#"$REPO_ROOT"/}/
  Stop everything: ./edgefleet down
DONE
