#!/usr/bin/env bash
# Stops exactly the processes this checkout's profile started (pid files in var/<profile>/pids).
source "$(dirname "$0")/lib.sh"
source "$STACK_DIR/profile.sh"
source "$STACK_DIR/process.sh"
source "$STACK_DIR/services.sh"

step "stopping the $EDGEFLEET_PROFILE stack"
stop_demo_fleet
names=()
for i in $(seq "$WEB_REPLICAS" -1 1); do names+=("$(replica_name web "$i")"); done
for i in $(seq "$GATEWAY_REPLICAS" -1 1); do names+=("$(replica_name gateway "$i")"); done
names+=(keycloak mimir mailpit)
for i in $(seq "$NATS_CLUSTER_SIZE" -1 1); do names+=("$(replica_name nats "$i")"); done
for name in "${names[@]}"; do
  stop_process "$name" 30
done
stop_postgres
