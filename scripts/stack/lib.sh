# Shared helpers for the stack scripts. Sourced, never run.
# shellcheck shell=bash
set -euo pipefail

STACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$STACK_DIR/../.." && pwd)"
# shellcheck source=versions.env
source "$STACK_DIR/versions.env"

# Slow installs (Go builds, Keycloak) are cached by version outside the work tree.
EDGEFLEET_CACHE="${EDGEFLEET_CACHE:-$HOME/.cache/edgefleet}"
mkdir -p "$EDGEFLEET_CACHE"

NATS_BIN="$EDGEFLEET_CACHE/nats-server/$NATS_SERVER_VERSION/nats-server"
MIMIR_BIN="$EDGEFLEET_CACHE/mimir/$MIMIR_VERSION/mimir"
MAILPIT_BIN="$EDGEFLEET_CACHE/mailpit/$MAILPIT_VERSION/mailpit"
KEYCLOAK_HOME="$EDGEFLEET_CACHE/keycloak/$KEYCLOAK_VERSION-stack/keycloak-$KEYCLOAK_VERSION"
PG_BIN="/usr/lib/postgresql/$POSTGRES_MAJOR/bin"
SCHEMATHESIS_BIN="$EDGEFLEET_CACHE/schemathesis/$SCHEMATHESIS_VERSION/venv/bin/st"
TOFU_BIN="$EDGEFLEET_CACHE/opentofu/$OPENTOFU_VERSION/tofu"

if [ -t 1 ]; then
  C_BOLD=$'\e[1m'; C_DIM=$'\e[2m'; C_RED=$'\e[31m'; C_GREEN=$'\e[32m'; C_YELLOW=$'\e[33m'; C_OFF=$'\e[0m'
else
  C_BOLD=""; C_DIM=""; C_RED=""; C_GREEN=""; C_YELLOW=""; C_OFF=""
fi

step() { printf '%s==>%s %s\n' "$C_BOLD" "$C_OFF" "$*"; }
ok() { printf '    %s✓%s %s\n' "$C_GREEN" "$C_OFF" "$*"; }
warn() { printf '    %s!%s %s\n' "$C_YELLOW" "$C_OFF" "$*" >&2; }
die() {
  printf '%serror:%s %s\n' "$C_RED" "$C_OFF" "$1" >&2
  [ $# -gt 1 ] && printf '       %s\n' "${@:2}" >&2
  exit 1
}

# Runs a long command with its output in a log file, printing a heartbeat with the
# elapsed time and the log's last line so a 6-minute build is never silent.
#   run_with_progress "label" expected_seconds logfile cmd...
run_with_progress() {
  local label="$1" expected="$2" logfile="$3"
  shift 3
  mkdir -p "$(dirname "$logfile")"
  local start=$SECONDS
  ("$@") >"$logfile" 2>&1 &
  local pid=$!
  # Checked every second (a cached step ends at once), reported every 5 s.
  local ticks=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    kill -0 "$pid" 2>/dev/null || break
    ticks=$((ticks + 1))
    [ $((ticks % 5)) -eq 0 ] || continue
    local elapsed=$((SECONDS - start)) pct=$(( (SECONDS - start) * 100 / expected ))
    [ "$pct" -gt 99 ] && pct=99
    local last
    last="$(tail -n 1 "$logfile" 2>/dev/null | cut -c1-70 || true)"
    printf '    %s[%3d%%] %s %ds / ~%ds  %s%s\n' "$C_DIM" "$pct" "$label" "$elapsed" "$expected" "$last" "$C_OFF"
  done
  if ! wait "$pid"; then
    tail -n 30 "$logfile" >&2
    die "$label failed" "full log: $logfile"
  fi
  ok "$label done in $((SECONDS - start))s"
}

# Fails with a clear message if a TCP port on loopback is already taken.
require_free_port() {
  local port="$1" what="$2"
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    local owner
    owner="$(ss -ltnp "sport = :$port" 2>/dev/null | awk 'NR==2 {print $6}')"
    die "port $port (for $what) is already in use ${owner:+by $owner}" \
      "stop whatever listens there, or run the stack under another profile" \
      "(\`./edgefleet down\` stops a stack this checkout started)."
  fi
}
