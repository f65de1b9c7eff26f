# Sourced by bench/verbs_compare.sh and bench/verbs_p2p_compare.sh (keep it beside them when
# copying them into a guest): how they run a reference program that has a server and a client
# (perftest, ucx_perftest), in one machine or across two. Uses the caller's variables: mode (one,
# collect or serve), peer, address, work, and port, the last port used.

# first_port: sets port before the first run. Between two machines both ends count the same
# ports from 19000; in one, a random start keeps a lingering socket of an earlier run away.
first_port() {
  port=19000
  [[ $mode == one ]] && port=$((19000 + RANDOM % 1000))
  return 0
}

# client_server LOG PROGRAM ARGS...: runs PROGRAM as a server (ARGS -p PORT) and, retrying until
# it listens (an emulated machine starts programs slowly), as its client (ARGS -p PORT ADDRESS),
# whose output goes to LOG. Each call takes the next port, so that one run's lingering socket
# does not meet the next. Between two machines only the server (--serve: LOG stays empty) or
# only the client (--collect) runs here; the server is bounded in time, so that a client that
# never comes (its side gave up) does not stop the rest.
client_server() {
  local log=$1 server=
  shift
  port=$((port + 1))
  : >"$log"
  if [[ $mode == serve ]]; then
    timeout 300 "$@" -p "$port" >"$work/server.log" 2>&1 ||
      echo "$(basename "$0"): $1 server on port $port ended with status $?" >&2
    return 0
  fi
  if [[ $mode == one ]]; then
    "$@" -p "$port" >"$work/server.log" 2>&1 &
    server=$!
  fi
  for _ in $(seq 1 20); do
    timeout 300 "$@" -p "$port" "${peer:-$address}" >"$log" 2>&1 && break
    sleep 1
  done
  if [[ -n $server ]]; then
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
  fi
  return 0
}
