# The soft-RoCE self-test's check helpers, sourced by selftest.sh (not run alone). They count
# into its globals: passed, failed, last_passed; and use run (softroce.sh), root (the
# repository), out (a scratch file) and stage (the directory that becomes the guests' /job).
# shellcheck shell=bash

# all_match PATTERNS FILE: each line of PATTERNS (extended regular expressions) matches a line
# of FILE.
all_match() {
  local pattern
  while IFS= read -r pattern; do
    [[ -z "$pattern" ]] || grep -Eq "$pattern" "$2" || return 1
  done <<<"$1"
}

# selected NAME: whether check NAME runs. SOFTROCE_ONLY=REGEX runs only the checks whose names
# match, while working on them; the summary then counts only those (CI never sets it).
selected() {
  [[ -z ${SOFTROCE_ONLY:-} || $1 =~ $SOFTROCE_ONLY ]]
}

# check NAME EXPECTED_STATUS PATTERNS SOFTROCE_ARGS...: runs the harness, wants the status and,
# for each line of PATTERNS (none when empty), a line of output matching it.
check() {
  local name=$1 want=$2 pattern=$3 status
  shift 3
  last_passed=0
  selected "$name" || return
  local start=$SECONDS
  "$run" "$@" >"$out" 2>&1
  status=$?
  if ((status == want)) && all_match "$pattern" "$out"; then
    last_passed=1
    passed=$((passed + 1))
    # A guest booted again after a stalled boot (softroce.sh --boot-limit) is said, never hidden.
    local again=''
    grep -q '^softroce: booting again' "$out" && again=', a guest booted again after a stalled boot'
    echo "softroce check $name: passed ($((SECONDS - start)) s$again)"
  else
    failed=$((failed + 1))
    echo "softroce check $name: FAILED (status $status, wanted $want; output ends:)"
    tail -n 30 "$out" | sed 's/^/  /'
  fi
}

# stage NAME BINARIES: copies BINARIES (paths under the repository root separated by spaces,
# e.g. bazel-bin/tools/rft_info/rft_info, or absolute paths) alone into the directory that
# becomes the guests' /job. A binary that was not built fails check NAME, saying so.
stage() {
  local name=$1 binaries=$2 binary path
  rm -rf "${stage:?}"/*
  for binary in $binaries; do
    path=$binary
    [[ $path == /* ]] || path=$root/$binary
    if [[ ! -f "$path" ]]; then
      failed=$((failed + 1))
      echo "softroce check $name: FAILED ($binary is missing: run bazel build //... first)"
      return 1
    fi
    if ! cp "$path" "$stage/"; then
      failed=$((failed + 1))
      echo "softroce check $name: FAILED (cannot copy $binary)"
      return 1
    fi
  done
}

# check_binary NAME EXPECTED_STATUS PATTERNS BINARIES COMMAND: like check, with BINARIES (see
# stage) in the guest's /job.
check_binary() {
  last_passed=0
  selected "$1" || return 0
  stage "$1" "$4" && check "$1" "$2" "$3" --add "$stage" -- "$5"
}

# check_two_nodes NAME EXPECTED_STATUS PATTERNS BINARIES ENV RFTRUN_ARGS: one rft job across two
# guests (--pair), each its own node with its own rxe device: guest1 runs rftrun as node 0,
# listening on its address, and guest2 joins it. ENV is run first in both; RFTRUN_ARGS (the
# per-node options, the program and its arguments) are the same on both.
check_two_nodes() {
  local name=$1 want=$2 pattern=$3 binaries=$4 env=$5 args=$6
  last_passed=0
  selected "$name" || return 0
  stage "$name" "$binaries" &&
    check "$name" "$want" "$pattern" --pair --add "$stage" -- \
      "$env; rftrun --nodes 2 --listen \$SOFTROCE_IP:7000 $args" \
      "$env; rftrun --join \$SOFTROCE_PEER:7000 $args"
}
