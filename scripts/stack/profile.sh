# Ports and folders of one stack profile. Sourced after lib.sh.
# `dev` (./edgefleet up), `test` (./edgefleet test), `bench` (pnpm bench:edge), `load` (pnpm bench:console), `ha` (pnpm bench:ha) and the others use disjoint
# ports and data folders so they can run at once on one machine.
# shellcheck shell=bash
EDGEFLEET_PROFILE="${EDGEFLEET_PROFILE:-dev}"
case "$EDGEFLEET_PROFILE" in
  dev) PORT_OFFSET=0 ;;
  test) PORT_OFFSET=10000 ;;
  # Used only by the stack scripts' own tests (scripts/test), never by people.
  check) PORT_OFFSET=1000 ;;
  # The edge data path benchmark (packages/bench); none of its ports meets dev, test or check.
  bench) PORT_OFFSET=2000 ;;
  # The console/API benchmark at 100,000 nodes (pnpm bench:console); disjoint from all the above.
  load) PORT_OFFSET=3000 ;;
  # Extra stacks for people (or agents) developing several things at once on one machine.
  work1) PORT_OFFSET=20000 ;;
  work2) PORT_OFFSET=30000 ;;
  work3) PORT_OFFSET=40000 ;;
  work4) PORT_OFFSET=50000 ;;
  work5) PORT_OFFSET=25000 ;;
  work6) PORT_OFFSET=35000 ;;
  # The 100,000-node scale scenario (pnpm bench:scale); its site leaves take ports of their own (10730+).
  # All its ports stay below Linux's ephemeral range (32768+): at 100,000 connections a restarted leaf or
  # gateway would otherwise find its port taken as the source port of some outgoing connection.
  scale) PORT_OFFSET=6500 ;;
  # High availability (pnpm bench:ha, docs/ha.md): a 3-node NATS cluster, two gateways, two consoles.
  ha) PORT_OFFSET=5500 ;;
  *) die "unknown profile '$EDGEFLEET_PROFILE'" "use dev, test, ha or work1..work6 (bench, load and scale are for the benchmarks, check for the scripts' own tests)" ;;
esac

# The shape: one of each everywhere but in `ha` (node i of the hub cluster, gateway and console
# replica i take the base ports + i - 1; see nats_name and replica_name in process.sh).
if [ "$EDGEFLEET_PROFILE" = ha ]; then
  NATS_CLUSTER_SIZE=3 GATEWAY_REPLICAS=2 WEB_REPLICAS=2
else
  NATS_CLUSTER_SIZE=1 GATEWAY_REPLICAS=1 WEB_REPLICAS=1
fi

PORT_POSTGRES=$((15432 + PORT_OFFSET))
PORT_NATS=$((4222 + PORT_OFFSET))
PORT_NATS_LEAF=$((7422 + PORT_OFFSET))
PORT_NATS_MONITOR=$((8222 + PORT_OFFSET))
# Routes between the nodes of a hub cluster (ha only).
PORT_NATS_CLUSTER=$((6222 + PORT_OFFSET))
PORT_MIMIR_HTTP=$((9009 + PORT_OFFSET))
PORT_MIMIR_GRPC=$((9095 + PORT_OFFSET))
PORT_MIMIR_MEMBERLIST=$((7946 + PORT_OFFSET))
PORT_KEYCLOAK=$((8080 + PORT_OFFSET))
PORT_KEYCLOAK_MANAGEMENT=$((9000 + PORT_OFFSET))
PORT_GATEWAY=$((8090 + PORT_OFFSET))
PORT_WEB=$((3000 + PORT_OFFSET))
# mailpit: SMTP for alert e-mail, and its HTTP API where the mail is read.
PORT_SMTP=$((2525 + PORT_OFFSET))
PORT_MAIL_HTTP=$((8125 + PORT_OFFSET))
# nats-server's Go profiler (pprof), on the scale profile only: bench:scale profiles the hub's idle
# CPU with it (/debug/pprof/profile). Loopback, like the monitoring port.
PORT_NATS_PROF=$((8322 + PORT_OFFSET))
# The demo's site leaf nodes (dev: one per demo site, 4230..4239).
PORT_DEMO_LEAF_BASE=$((4230 + PORT_OFFSET))
# load's 6000 is X11's port, which Next.js and browsers refuse to use.
if [ "$PORT_WEB" = 6000 ]; then PORT_WEB=6080; fi

VAR_DIR="$REPO_ROOT/var/$EDGEFLEET_PROFILE"
LOG_DIR="$VAR_DIR/logs"
PID_DIR="$VAR_DIR/pids"
STACK_ENV="$VAR_DIR/stack.env"
mkdir -p "$LOG_DIR" "$PID_DIR"
