#!/usr/bin/env bash
# Shows which processes of a profile run (EDGEFLEET_PROFILE=dev|test).
source "$(dirname "$0")/lib.sh"
source "$STACK_DIR/profile.sh"
source "$STACK_DIR/process.sh"
step "$EDGEFLEET_PROFILE stack"
if [ -f "$VAR_DIR/postgres/postmaster.pid" ]; then ok "postgres  :$PORT_POSTGRES"; else warn "postgres  stopped"; fi
for name in nats mimir keycloak gateway web; do
  if is_running "$name"; then ok "$name (pid $(pid_of "$name"))"; else warn "$name stopped"; fi
done
# The live demo (dev): the hollow agents and one leaf node per demo site.
for pidfile in "$PID_DIR"/demo-fleet.pid "$PID_DIR"/demo-leaf-*.pid; do
  [ -e "$pidfile" ] || continue
  name="$(basename "$pidfile" .pid)"
  if is_running "$name"; then ok "$name (pid $(pid_of "$name"))"; else warn "$name stopped"; fi
done
