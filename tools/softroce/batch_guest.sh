#!/bin/bash
# The guest's side of a batch of soft-RoCE checks (check_lib.sh's run_batches copies it to
# /job/batch.sh): runs the checks named in /job/batch.order in turn, each in its own directory
# /job/NAME (links to its binaries; its command in .command), in a session of its own, with a
# time limit of LIMIT seconds. Each check's output lies between a line
# "@@softroce-check-begin NAME@@" and a line "@@softroce-check-end NAME STATUS SECONDS@@".
# Whatever a check leaves running is killed before the next one starts.
#
#   bash /job/batch.sh LIMIT
limit=${1:?usage: batch.sh LIMIT}

# kill_session ID: SIGKILL to every process of session ID (field 6 of /proc/PID/stat; the
# command name in field 2 may hold spaces, so fields are counted after its closing parenthesis).
kill_session() {
  local stat rest pid
  for stat in /proc/[0-9]*/stat; do
    rest=$(cat "$stat" 2>/dev/null) || continue
    pid=${rest%% *}
    rest=${rest##*) }
    read -r _ _ _ session _ <<<"$rest"
    [[ $session == "$1" ]] && kill -9 "$pid" 2>/dev/null
  done
}

while read -r name; do
  [[ -n $name ]] || continue
  cd "/job/$name" || exit 1
  echo "@@softroce-check-begin $name@@"
  start=$SECONDS
  # setsid: not a group leader here (no job control in a script), so it does not fork and $! is
  # the new session's id.
  PATH="/job/$name:$PATH" setsid timeout -k 5 "$limit" bash .command </dev/null 2>&1 &
  leader=$!
  wait "$leader"
  status=$?
  kill_session "$leader"
  echo
  echo "@@softroce-check-end $name $status $((SECONDS - start))@@"
done </job/batch.order
