#!/usr/bin/env bash
# Shows which processes of a profile run (EDGEFLEET_PROFILE=dev|test).
source "$(dirname "$0")/lib.sh"
source "$STACK_DIR/profile.sh"
source "$STACK_DIR/process.sh"
step "$EDGEFLEET_PROFILE stack"
if [ -f "$VAR_DIR/postgres/postmaster.pid" ]; then ok "postgres  :$PORT_POSTGRES"; else warn "postgres  stopped"; fi
for name in nats mimir keycloak gateway web demo-fleet-acme demo-fleet-globex; do
  if is_running "$name"; then ok "$name (pid $(pid_of "$name"))"; else warn "$name stopped"; fi
done
