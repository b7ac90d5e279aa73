#!/usr/bin/env bash
# Stops exactly the processes this checkout's profile started (pid files in var/<profile>/pids).
source "$(dirname "$0")/lib.sh"
source "$STACK_DIR/profile.sh"
source "$STACK_DIR/process.sh"
source "$STACK_DIR/services.sh"

step "stopping the $EDGEFLEET_PROFILE stack"
stop_demo_fleet
for name in web gateway keycloak mimir mailpit nats; do
  stop_process "$name" 30
done
stop_postgres
