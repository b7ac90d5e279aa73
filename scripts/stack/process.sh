# Starting, watching and stopping the stack's processes. Sourced after profile.sh.
# Each process runs in its own session (setsid) so that stopping it ends its whole
# process group (pnpm → node, kc.sh → java) and nothing is left behind.
# shellcheck shell=bash

# Process names of the replicas of one server: `gateway`, `gateway-2`, `gateway-3`… (the first keeps
# the plain name, so single-replica profiles and their tools never see a suffix).
replica_name() { if [ "$2" -gt 1 ]; then echo "$1-$2"; else echo "$1"; fi; }

pid_of() { cat "$PID_DIR/$1.pid" 2>/dev/null || true; }

is_running() {
  local pid
  pid="$(pid_of "$1")"
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# start_process NAME CMD... : runs CMD detached, output to $LOG_DIR/NAME.log.
start_process() {
  local name="$1"
  shift
  : >"$LOG_DIR/$name.log"
  setsid "$@" >>"$LOG_DIR/$name.log" 2>&1 </dev/null &
  echo $! >"$PID_DIR/$name.pid"
}

# stop_process NAME [TIMEOUT_S]: SIGTERM to the group, SIGKILL after the timeout.
stop_process() {
  local name="$1" timeout="${2:-20}" pid
  pid="$(pid_of "$name")"
  if [ -z "$pid" ]; then return 0; fi
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    local waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt $((timeout * 10)) ]; do
      sleep 0.1
      waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
      warn "$name did not stop within ${timeout}s: killing it"
      kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  # Children that outlived the group leader (rare) are still in its process group.
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$PID_DIR/$name.pid"
  ok "stopped $name"
}

# wait_http NAME URL TIMEOUT_S [EXPECTED_CODES_REGEX]: waits until URL answers, failing
# early (with the log's tail) if the process dies first.
wait_http() {
  local name="$1" url="$2" timeout="$3" expect="${4:-^2}" start=$SECONDS code last_report=$SECONDS
  while true; do
    code="$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$url" 2>/dev/null || true)"
    if [[ "$code" =~ $expect ]]; then
      ok "$name ready in $((SECONDS - start))s"
      return 0
    fi
    if [ -n "$(pid_of "$name")" ] && ! is_running "$name"; then
      echo "---- last lines of $LOG_DIR/$name.log ----" >&2
      tail -n 25 "$LOG_DIR/$name.log" >&2
      die "$name exited during start-up" "full log: $LOG_DIR/$name.log"
    fi
    if [ $((SECONDS - start)) -ge "$timeout" ]; then
      tail -n 25 "$LOG_DIR/$name.log" >&2
      die "$name did not become ready at $url within ${timeout}s (last HTTP code: ${code:-none})" \
        "full log: $LOG_DIR/$name.log"
    fi
    if [ $((SECONDS - last_report)) -ge 10 ]; then
      printf '    %swaiting for %s… %ds%s\n' "$C_DIM" "$name" "$((SECONDS - start))" "$C_OFF"
      last_report=$SECONDS
    fi
    sleep 0.5
  done
}
