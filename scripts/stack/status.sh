#!/usr/bin/env bash
# Shows which processes of a profile run (EDGEFLEET_PROFILE=dev|test|ha|…).
source "$(dirname "$0")/lib.sh"
source "$STACK_DIR/profile.sh"
source "$STACK_DIR/process.sh"
step "$EDGEFLEET_PROFILE stack"
if [ -f "$VAR_DIR/postgres/postmaster.pid" ]; then ok "postgres  :$PORT_POSTGRES"; else warn "postgres  stopped"; fi
names=()
for i in $(seq 1 "$NATS_CLUSTER_SIZE"); do names+=("$(replica_name nats "$i")"); done
names+=(mimir keycloak)
for i in $(seq 1 "$GATEWAY_REPLICAS"); do names+=("$(replica_name gateway "$i")"); done
for i in $(seq 1 "$WEB_REPLICAS"); do names+=("$(replica_name web "$i")"); done
for name in "${names[@]}"; do
  if is_running "$name"; then ok "$name (pid $(pid_of "$name"))"; else warn "$name stopped"; fi
done
# The live demo (dev): the hollow agents and one leaf node per demo site.
for pidfile in "$PID_DIR"/demo-fleet.pid "$PID_DIR"/demo-leaf-*.pid; do
  [ -e "$pidfile" ] || continue
  name="$(basename "$pidfile" .pid)"
  if is_running "$name"; then ok "$name (pid $(pid_of "$name"))"; else warn "$name stopped"; fi
done
