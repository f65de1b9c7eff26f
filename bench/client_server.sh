# Sourced by bench/verbs_compare.sh and bench/verbs_p2p_compare.sh (keep it beside them when
# copying them into a guest): their common options, and how they run a reference program that
# has a server and a client (perftest, ucx_perftest), in one machine or across two. Sets and uses
# the caller's variables: reps, iters, device, gid, address, mode (one, collect or serve), peer,
# work, and port, the last port used.

# usage: line 6 of the calling script is its synopsis.
usage() {
  sed -n '6p' "$0" | sed 's/^#  */usage: /' >&2
  exit 2
}

# parse_options "$@": the options both scripts take (synopsis on line 6), with their defaults;
# a bad option or count ends the script with its usage.
parse_options() {
  reps=3 iters=2000 device=rxe0 gid=1 address=${SOFTROCE_IP:-127.0.0.1} mode=one peer=
  while (($# > 0)); do
    case $1 in
      --reps | --iters | --device | --gid | --address | --collect | --serve) (($# > 1)) || usage ;;&
      --reps) reps=$2 ;;
      --iters) iters=$2 ;;
      --device) device=$2 ;;
      --gid) gid=$2 ;;
      --address) address=$2 ;;
      --collect | --serve)
        [[ $mode == one ]] || usage
        mode=${1#--} peer=$2
        ;;
      *) usage ;;
    esac
    shift 2
  done
  [[ "$reps" =~ ^[1-9][0-9]*$ && "$iters" =~ ^[1-9][0-9]*$ ]] || usage
}

# end_if_serving STATUS: the serving side prints no figures (they are the collecting side's):
# it says what it served and ends with STATUS.
end_if_serving() {
  [[ $mode == serve ]] || return 0
  echo "$(basename "$0" .sh): served $reps reps for $peer (status $1)"
  exit "$1"
}

# describe_pair ON: sets where (ON, the device, in one machine; between this machine and the
# peer in two) and nodes, for the table's title and the JSON lines.
describe_pair() {
  where="on $1" nodes=1
  [[ $mode == collect ]] && where="between this machine and $peer, $1" nodes=2
  return 0
}

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
