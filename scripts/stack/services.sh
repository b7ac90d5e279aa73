# Start functions for each server of the stack. Sourced after process.sh.
# shellcheck shell=bash

# render TEMPLATE OUT: replaces @@NAME@@ with the value of $NAME.
render() {
  local template="$1" out="$2" content name
  content="$(cat "$template")"
  for name in $(grep -o '@@[A-Z_]*@@' "$template" | sort -u | tr -d '@'); do
    content="${content//@@$name@@/${!name}}"
  done
  printf '%s\n' "$content" >"$out"
}

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start_postgres() {
  local data="$VAR_DIR/postgres" sock="$VAR_DIR/pgsock"
  if as_postgres "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    ok "postgres already running on :$PORT_POSTGRES"
    return 0
  fi
  require_free_port "$PORT_POSTGRES" postgres
  mkdir -p "$data" "$sock"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$data" "$sock" && touch "$LOG_DIR/postgres.log" && chown postgres "$LOG_DIR/postgres.log"
  if [ ! -f "$data/PG_VERSION" ]; then
    as_postgres "$PG_BIN/initdb" -D "$data" --auth=trust --username=postgres -E UTF8 >"$LOG_DIR/initdb.log" 2>&1 ||
      die "initdb failed" "log: $LOG_DIR/initdb.log"
  fi
  as_postgres "$PG_BIN/pg_ctl" -D "$data" -l "$LOG_DIR/postgres.log" -w -t 30 \
    -o "-p $PORT_POSTGRES -k $sock -c listen_addresses=127.0.0.1 -c max_connections=300 -c shared_buffers=256MB" start >/dev/null ||
    { tail -n 20 "$LOG_DIR/postgres.log" >&2; die "postgres did not start" "log: $LOG_DIR/postgres.log"; }
  local psql=("$PG_BIN/psql" -h 127.0.0.1 -p "$PORT_POSTGRES" -U postgres -v ON_ERROR_STOP=1 -qAt)
  "${psql[@]}" -d postgres -c "select 1 from pg_roles where rolname='edgefleet'" | grep -q 1 ||
    "${psql[@]}" -d postgres -c "create role edgefleet login superuser"
  local db
  for db in edgefleet keycloak; do
    "${psql[@]}" -d postgres -c "select 1 from pg_database where datname='$db'" | grep -q 1 ||
      "${psql[@]}" -d postgres -c "create database $db owner edgefleet"
  done
  ok "postgres on :$PORT_POSTGRES (databases edgefleet, keycloak)"
}

stop_postgres() {
  local data="$VAR_DIR/postgres"
  if [ -f "$data/postmaster.pid" ]; then
    as_postgres "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
    ok "stopped postgres"
  fi
}

# The hub: one nats-server, or a cluster of NATS_CLUSTER_SIZE (the ha profile), each node with its own
# ports (base + i - 1), JetStream store and account resolver folder, and routes to all the others.
# Starts whichever nodes are not running (a restart after a crash takes the same command).
start_nats() {
  local DATA_DIR="$VAR_DIR/nats" PROFILE="$EDGEFLEET_PROFILE" node name started=() node_dirs=()
  mkdir -p "$DATA_DIR"
  if [ "$NATS_CLUSTER_SIZE" -gt 1 ]; then
    for node in $(seq 1 "$NATS_CLUSTER_SIZE"); do node_dirs+=(--cluster-node "$DATA_DIR/node-$node"); done
  fi
  # The trust root (operator, system/platform/enroll accounts) is made once per data folder.
  (cd "$REPO_ROOT/packages/nats-tenancy" && node_modules/.bin/tsx src/cli.ts bootstrap "$DATA_DIR/auth" "${node_dirs[@]}") \
    >"$LOG_DIR/nats-bootstrap.log" 2>&1 || { cat "$LOG_DIR/nats-bootstrap.log" >&2; die "NATS bootstrap failed"; }
  for node in $(seq 1 "$NATS_CLUSTER_SIZE"); do
    name="$(replica_name nats "$node")"
    if is_running "$name"; then ok "$name already running on :$((PORT_NATS + node - 1))"; continue; fi
    start_nats_node "$node"
    started+=("$node")
  done
  # A cluster node is healthy once JetStream has a meta leader, which takes a quorum of nodes: all are
  # started before any is waited for.
  for node in "${started[@]}"; do
    wait_http "$(replica_name nats "$node")" \
      "http://127.0.0.1:$((PORT_NATS_MONITOR + node - 1))/healthz$([ "$NATS_CLUSTER_SIZE" -gt 1 ] || echo '?js-enabled-only=true')" 60
  done
}

start_nats_node() {
  local node="$1" config conf_dir of_node=""
  local PORT_NATS=$((PORT_NATS + node - 1)) PORT_NATS_LEAF=$((PORT_NATS_LEAF + node - 1))
  local PORT_NATS_MONITOR=$((PORT_NATS_MONITOR + node - 1))
  # Which node, on a cluster only: a single hub's messages stay as they were (scripts/test checks them).
  [ "$NATS_CLUSTER_SIZE" -eq 1 ] || of_node=" (node $node)"
  require_free_port "$PORT_NATS" "nats client port$of_node"
  require_free_port "$PORT_NATS_LEAF" "nats leafnode port$of_node"
  require_free_port "$PORT_NATS_MONITOR" "nats monitoring port$of_node"
  if [ "$NATS_CLUSTER_SIZE" -eq 1 ]; then
    conf_dir="$DATA_DIR"
  else
    # The node's folder holds its config, its JetStream store and auth/auth.conf (with its own resolver).
    conf_dir="$DATA_DIR/node-$node"
    require_free_port "$((PORT_NATS_CLUSTER + node - 1))" "nats cluster port (node $node)"
  fi
  config="$conf_dir/hub.conf"
  DATA_DIR="$conf_dir" render "$STACK_DIR/config/nats-hub.conf" "$config"
  if [ "$NATS_CLUSTER_SIZE" -gt 1 ]; then
    sed -i "s/^server_name: .*/server_name: edgefleet-hub-$PROFILE-$node/" "$config"
    local routes=() peer
    for peer in $(seq 1 "$NATS_CLUSTER_SIZE"); do routes+=("\"nats-route://127.0.0.1:$((PORT_NATS_CLUSTER + peer - 1))\""); done
    cat >>"$config" <<CLUSTER

# Node $node of $NATS_CLUSTER_SIZE of the hub cluster (JetStream replicates EF_UP and the artifact
# stores across the nodes: the gateway sizes their replicas to the cluster).
cluster {
  name: edgefleet-hub-$PROFILE
  listen: 127.0.0.1:$((PORT_NATS_CLUSTER + node - 1))
  routes: [$(IFS=,; echo "${routes[*]}")]
}
CLUSTER
  fi
  if [ "$EDGEFLEET_PROFILE" = scale ]; then
    require_free_port "$PORT_NATS_PROF" "nats profiling port"
    printf '\n# Go profiler for bench:scale (where the hub'"'"'s idle CPU goes).\nprof_port: %s\n' "$PORT_NATS_PROF" >>"$config"
  fi
  start_process "$(replica_name nats "$node")" "$NATS_BIN" -c "$config"
}

start_mimir() {
  if is_running mimir; then ok "mimir already running on :$PORT_MIMIR_HTTP"; return 0; fi
  require_free_port "$PORT_MIMIR_HTTP" "mimir http"
  require_free_port "$PORT_MIMIR_GRPC" "mimir grpc"
  require_free_port "$PORT_MIMIR_MEMBERLIST" "mimir memberlist"
  local DATA_DIR="$VAR_DIR/mimir"
  mkdir -p "$DATA_DIR"
  render "$STACK_DIR/config/mimir.yaml.template" "$DATA_DIR/mimir.yaml"
  start_process mimir "$MIMIR_BIN" -config.file="$DATA_DIR/mimir.yaml"
  wait_http mimir "http://127.0.0.1:$PORT_MIMIR_HTTP/ready" 90
}

# The stack's SMTP server: every alert e-mail of the stack lands here (nothing leaves the machine).
# Skipped with a warning when the binary is missing (EDGEFLEET_SKIP_INSTALL on an old cache).
start_mailpit() {
  if is_running mailpit; then ok "mailpit already running on :$PORT_SMTP"; return 0; fi
  if [ ! -x "$MAILPIT_BIN" ]; then warn "mailpit not installed ($MAILPIT_BIN): alert e-mail is not sent"; return 0; fi
  require_free_port "$PORT_SMTP" "mailpit smtp"
  require_free_port "$PORT_MAIL_HTTP" "mailpit http"
  start_process mailpit "$MAILPIT_BIN" --listen "127.0.0.1:$PORT_MAIL_HTTP" --smtp "127.0.0.1:$PORT_SMTP" \
    --database "$VAR_DIR/mailpit.db" --smtp-auth-accept-any --smtp-auth-allow-insecure --disable-version-check
  # Mail is not what the stack is for: a mailpit that does not come up is a warning, not a failure.
  if ! (wait_http mailpit "http://127.0.0.1:$PORT_MAIL_HTTP/api/v1/info" 30); then
    stop_process mailpit 5
    warn "mailpit did not start (log: $LOG_DIR/mailpit.log): alert e-mail of this stack is not delivered"
  fi
}

start_keycloak() {
  if is_running keycloak; then ok "keycloak already running on :$PORT_KEYCLOAK"; return 0; fi
  require_free_port "$PORT_KEYCLOAK" "keycloak http"
  require_free_port "$PORT_KEYCLOAK_MANAGEMENT" "keycloak management"
  # --import-realm reads <home>/data/import; it skips a realm that already exists.
  # --cache=local at start as well as at build: Keycloak 26 otherwise starts its JGroups cluster
  # transport on *:57800 and <host>:7800, beyond loopback (scripts/test/loopback-only.test.ts).
  mkdir -p "$KEYCLOAK_HOME/data/import"
  cp "$STACK_DIR/keycloak/edgefleet-realm.json" "$KEYCLOAK_HOME/data/import/edgefleet-realm.json"
  start_process keycloak env JAVA_HOME="$KEYCLOAK_JAVA_HOME" \
    KC_BOOTSTRAP_ADMIN_USERNAME=admin KC_BOOTSTRAP_ADMIN_PASSWORD=admin \
    JAVA_OPTS_KC_HEAP="-XX:InitialRAMPercentage=1 -XX:MaxRAMPercentage=4" \
    "$KEYCLOAK_HOME/bin/kc.sh" start --optimized \
    --cache=local \
    --http-enabled=true --http-host=127.0.0.1 --http-port="$PORT_KEYCLOAK" \
    --http-management-port="$PORT_KEYCLOAK_MANAGEMENT" --hostname-strict=false \
    --db-url="jdbc:postgresql://127.0.0.1:$PORT_POSTGRES/keycloak" --db-username=edgefleet --db-password=edgefleet \
    --import-realm
  # ~27 s on an idle machine; a loaded one (a build or a benchmark beside it) was seen past 180 s.
  wait_http keycloak "http://127.0.0.1:$PORT_KEYCLOAK_MANAGEMENT/health/ready" "${EDGEFLEET_KEYCLOAK_READY_S:-420}"
}

write_stack_env() {
  local secret_file="$VAR_DIR/auth-secret"
  [ -s "$secret_file" ] || head -c 32 /dev/urandom | base64 | tr -d '\n' >"$secret_file"
  # Shared secret between the console's API and the gateway's internal API (leaf bundles).
  local internal_token_file="$VAR_DIR/gateway-internal-token"
  [ -s "$internal_token_file" ] || head -c 32 /dev/urandom | base64 | tr -d '\n/+=' >"$internal_token_file"
  # Derives each organization's bearer token for its Alertmanager's webhook to the gateway's relay.
  local alert_relay_secret_file="$VAR_DIR/gateway-alert-relay-secret"
  [ -s "$alert_relay_secret_file" ] || head -c 48 /dev/urandom | base64 | tr -d '\n/+=' >"$alert_relay_secret_file"
  # Web Push: this install's VAPID key pair (web-push's own generator) and the secret that signs
  # the notifications' action tokens. Generated once per profile, never committed.
  local vapid_file="$VAR_DIR/vapid-keys"
  [ -s "$vapid_file" ] || (cd "$REPO_ROOT/apps/gateway" &&
    node -e 'const k = require("web-push").generateVAPIDKeys(); console.log(k.publicKey + " " + k.privateKey)') >"$vapid_file"
  local push_action_secret_file="$VAR_DIR/push-action-secret"
  [ -s "$push_action_secret_file" ] || head -c 48 /dev/urandom | base64 | tr -d '\n/+=' >"$push_action_secret_file"
  local vapid_public vapid_private
  read -r vapid_public vapid_private <"$vapid_file"
  # Every node of the hub and every gateway replica, comma-separated (one of each outside `ha`).
  local nats_urls=() leaf_urls=() monitor_urls=() gateway_urls=() i
  for i in $(seq 1 "$NATS_CLUSTER_SIZE"); do
    nats_urls+=("nats://127.0.0.1:$((PORT_NATS + i - 1))")
    leaf_urls+=("nats-leaf://127.0.0.1:$((PORT_NATS_LEAF + i - 1))")
    monitor_urls+=("http://127.0.0.1:$((PORT_NATS_MONITOR + i - 1))")
  done
  for i in $(seq 1 "$GATEWAY_REPLICAS"); do gateway_urls+=("http://127.0.0.1:$((PORT_GATEWAY + i - 1))"); done
  cat >"$STACK_ENV" <<ENV
# Written by scripts/stack/up.sh for the '$EDGEFLEET_PROFILE' profile. Source it to talk to this stack.
EDGEFLEET_PROFILE=$EDGEFLEET_PROFILE
DATABASE_URL=postgresql://edgefleet@127.0.0.1:$PORT_POSTGRES/edgefleet
NATS_URL=$(IFS=,; echo "${nats_urls[*]}")
NATS_LEAF_URL=$(IFS=,; echo "${leaf_urls[*]}")
NATS_MONITOR_URL=$(IFS=,; echo "${monitor_urls[*]}")
$([ "$EDGEFLEET_PROFILE" = scale ] && echo "NATS_PROFILE_URL=http://127.0.0.1:$PORT_NATS_PROF")
NATS_SERVER_BIN=$NATS_BIN
SCHEMATHESIS_BIN=$SCHEMATHESIS_BIN
AGENT_SERVER_URL=nats://127.0.0.1:$PORT_NATS
NATS_CREDS=$VAR_DIR/nats/auth/gateway.creds
NATS_SYSTEM_CREDS=$VAR_DIR/nats/auth/gateway-system.creds
NATS_TENANCY_FILE=$VAR_DIR/nats/auth/tenancy.json
NATS_ENROLL_CREDS=$VAR_DIR/nats/auth/enroll.creds
MIMIR_URL=http://127.0.0.1:$PORT_MIMIR_HTTP
KEYCLOAK_URL=http://127.0.0.1:$PORT_KEYCLOAK
KEYCLOAK_ADMIN_USERNAME=admin
KEYCLOAK_ADMIN_PASSWORD=admin
AUTH_KEYCLOAK_ISSUER=http://127.0.0.1:$PORT_KEYCLOAK/realms/edgefleet
AUTH_KEYCLOAK_ID=edgefleet-console
AUTH_KEYCLOAK_SECRET=edgefleet-console-secret
AUTH_SECRET=$(cat "$secret_file")
AUTH_URL=http://127.0.0.1:$PORT_WEB
AUTH_TRUST_HOST=true
WEB_URL=http://127.0.0.1:$PORT_WEB
WEB_PORT=$PORT_WEB
GATEWAY_HTTP_PORT=$PORT_GATEWAY
GATEWAY_URL=$(IFS=,; echo "${gateway_urls[*]}")
GATEWAY_INTERNAL_TOKEN=$(cat "$internal_token_file")
GATEWAY_ALERT_RELAY_SECRET=$(cat "$alert_relay_secret_file")
GATEWAY_CONSOLE_URL=http://127.0.0.1:$PORT_WEB
EDGEFLEET_VAPID_PUBLIC_KEY=$vapid_public
EDGEFLEET_VAPID_PRIVATE_KEY=$vapid_private
EDGEFLEET_VAPID_SUBJECT=mailto:alerts@edgefleet.invalid
EDGEFLEET_PUSH_ACTION_SECRET=$(cat "$push_action_secret_file")
$([ -x "$MAILPIT_BIN" ] && printf 'GATEWAY_SMTP_URL=smtp://127.0.0.1:%s\nMAIL_URL=http://127.0.0.1:%s\n' "$PORT_SMTP" "$PORT_MAIL_HTTP")
NEXT_TELEMETRY_DISABLED=1
TURBO_TELEMETRY_DISABLED=1
ENV
}

load_stack_env() {
  set -a
  # shellcheck disable=SC1090
  source "$STACK_ENV"
  set +a
}

prepare_database() {
  step "migrating and seeding the database"
  (cd "$REPO_ROOT" && pnpm --silent --filter @edgefleet/db db:migrate >"$LOG_DIR/db-migrate.log" 2>&1) ||
    { tail -n 20 "$LOG_DIR/db-migrate.log" >&2; die "database migration failed" "log: $LOG_DIR/db-migrate.log"; }
  ok "migrations applied"
  local seed_args=()
  if demo_is_live; then seed_args=(--live); fi
  (cd "$REPO_ROOT" && pnpm --silent --filter @edgefleet/db db:seed "${seed_args[@]}" >"$LOG_DIR/db-seed.log" 2>&1) ||
    { tail -n 20 "$LOG_DIR/db-seed.log" >&2; die "database seed failed" "log: $LOG_DIR/db-seed.log"; }
  ok "demo organizations seeded"
}

# Every gateway replica (GATEWAY_REPLICAS; replica i on GATEWAY_HTTP_PORT + i - 1). Replicas share
# the work through JetStream queue groups and Postgres leases and locks (docs/ha.md).
start_gateway() {
  local replica name port
  for replica in $(seq 1 "$GATEWAY_REPLICAS"); do
    name="$(replica_name gateway "$replica")" port=$((PORT_GATEWAY + replica - 1))
    if is_running "$name"; then ok "$name already running on :$port"; continue; fi
    require_free_port "$port" "$name"
    start_process "$name" bash -c "cd '$REPO_ROOT/apps/gateway' && GATEWAY_HTTP_PORT=$port exec node_modules/.bin/tsx src/main.ts"
    wait_http "$name" "http://127.0.0.1:$port/readyz" 60
  done
}

build_web() {
  step "building the console (next build, ~1 min)"
  run_with_progress "next build" 90 "$LOG_DIR/web-build.log" \
    bash -c "cd '$REPO_ROOT/apps/web' && node_modules/.bin/next build"
}

# The native agent's release binaries, which the console serves to install commands
# (/downloads/agent). Cached by source hash: a build with nothing changed takes well under a second.
build_agent_release() {
  step "building the native agent for linux amd64, arm64 and armv7 (cached by source hash)"
  run_with_progress "agent build" 120 "$LOG_DIR/agent-build.log" bash "$REPO_ROOT/apps/agent/build.sh" --release
}

# Every console replica (WEB_REPLICAS; replica i on WEB_PORT + i - 1, its own AUTH_URL: there is no
# load balancer in front of them here).
start_web() {
  local replica name port
  for replica in $(seq 1 "$WEB_REPLICAS"); do
    name="$(replica_name web "$replica")" port=$((PORT_WEB + replica - 1))
    if is_running "$name"; then ok "$name already running on :$port"; continue; fi
    require_free_port "$port" "web console ($name)"
    start_process "$name" bash -c "cd '$REPO_ROOT/apps/web' && AUTH_URL=http://127.0.0.1:$port NODE_ENV=production exec node server.mjs -H 127.0.0.1 -p $port"
    wait_http "$name" "http://127.0.0.1:$port/" 60 "^(2|3)"
  done
}

# The demo of `up`. In every profile the seeded versions get their real artifacts (uploaded into
# the organizations' object stores). With a live fleet (the dev profile, see demo_is_live) every
# seeded node of both demo organizations also runs as a hollow agent (real protocol, simulated
# runtime, real artifact downloads) on its site's leaf nats-server, made from the site leaf bundle,
# and the controller drives two rollouts (one finished, one waiting for approval). Idempotent:
# `down` + `up` keeps the data, the keys and the rollouts; only the processes are new.
demo_is_live() {
  case "${EDGEFLEET_DEMO:-}" in
    live) return 0 ;;
    simulated) return 1 ;;
    *) [ "$EDGEFLEET_PROFILE" = dev ] ;;
  esac
}

demo_cli() {
  (cd "$REPO_ROOT/apps/gateway" && node_modules/.bin/tsx src/cli/demo.ts "$@")
}

stop_demo_fleet() {
  local pidfile stopped=0
  for pidfile in "$PID_DIR"/demo-fleet*.pid "$PID_DIR"/demo-leaf-*.pid; do
    [ -e "$pidfile" ] || continue
    stop_process "$(basename "$pidfile" .pid)" 10 >/dev/null
    stopped=$((stopped + 1))
  done
  if [ "$stopped" -gt 0 ]; then ok "stopped the demo fleet and its site leaf nodes"; fi
  return 0
}

start_demo() {
  local out line kind name path leaves=0 nodes=0 nodes_file=""
  if ! demo_is_live; then
    out="$(demo_cli prepare 2>"$LOG_DIR/demo.log")" || { cat "$LOG_DIR/demo.log" >&2; die "could not prepare the demo" "log: $LOG_DIR/demo.log"; }
    ok "demo: $out"
    return 0
  fi
  stop_demo_fleet >/dev/null
  out="$(demo_cli prepare --live --dir "$VAR_DIR/demo" --leaf-port-base "$PORT_DEMO_LEAF_BASE" 2>"$LOG_DIR/demo.log")" ||
    { cat "$LOG_DIR/demo.log" >&2; die "could not prepare the demo fleet" "log: $LOG_DIR/demo.log"; }
  while read -r kind name path port; do
    case "$kind" in
      leaf)
        require_free_port "$port" "the demo's site leaf node $name"
        start_process "demo-leaf-$name" "$NATS_BIN" -c "$path"
        leaves=$((leaves + 1))
        ;;
      fleet) nodes="$name" nodes_file="$path" ;;
    esac
  done <<<"$out"
  # Artifacts are really downloaded (96 KiB each, through the gateway), as a real agent does.
  start_process demo-fleet node "$REPO_ROOT/packages/agent-sdk/bin/edgefleet-agent.mjs" hollow \
    --nodes "$nodes_file" --enroll-url "$NATS_URL" --enroll-creds "$NATS_ENROLL_CREDS" --fetch-artifacts
  while read -r line; do
    case "$line" in
      artifacts*) ok "demo: $line" ;;
      alerts*) ok "demo: $line" ;;
      rollout*) ok "demo: $line" ;;
    esac
  done <<<"$out"
  ok "demo fleet: $nodes hollow agents, each on its site's leaf node ($leaves sites), online in a few seconds"
}
