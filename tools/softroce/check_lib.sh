# The soft-RoCE self-test's check helpers, sourced by selftest.sh (not run alone). They count
# into its globals: passed, failed, last_passed; and use run (softroce.sh), root (the
# repository), out (a scratch file), stage (the directory that becomes the guests' /job),
# sanitized (the sanitizer builds' binaries) and here (this directory).
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

# judge NAME EXPECTED_STATUS PATTERNS STATUS SECONDS [WHERE]: counts check NAME, whose output is
# in $out, as passed when STATUS is the one wanted and every line of PATTERNS matches a line of
# it, and prints its line (WHERE, e.g. where it ran, after the time).
judge() {
  local name=$1 want=$2 pattern=$3 status=$4 seconds=$5 where=${6:+, $6}
  if ((status == want)) && all_match "$pattern" "$out"; then
    last_passed=1
    passed=$((passed + 1))
    # A guest booted again after a stalled boot (softroce.sh --boot-limit) is said, never hidden.
    local again=''
    grep -q '^softroce: booting again' "$out" && again=', a guest booted again after a stalled boot'
    echo "softroce check $name: passed ($seconds s$where$again)"
  else
    last_passed=0
    failed=$((failed + 1))
    echo "softroce check $name: FAILED (status $status, wanted $want$where; output ends:)"
    tail -n 30 "$out" | sed 's/^/  /'
  fi
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
  judge "$name" "$want" "$pattern" "$status" $((SECONDS - start))
}

# repository_path BINARY: BINARY's absolute path (a path under the repository root, e.g.
# bazel-bin/tools/rft_info/rft_info, or already absolute).
repository_path() {
  if [[ $1 == /* ]]; then echo "$1"; else echo "$root/$1"; fi
}

# copy_binary NAME BINARY DIR: copies BINARY (see repository_path) into DIR. A binary that was
# not built, or cannot be copied, fails check NAME, saying so.
copy_binary() {
  local name=$1 binary=$2 path
  path=$(repository_path "$binary")
  if [[ ! -f "$path" ]]; then
    failed=$((failed + 1))
    echo "softroce check $name: FAILED ($binary is missing: run bazel build //... first)"
    return 1
  fi
  if ! cp "$path" "$3/"; then
    failed=$((failed + 1))
    echo "softroce check $name: FAILED (cannot copy $binary)"
    return 1
  fi
}

# stage NAME BINARIES: copies BINARIES (separated by spaces; see copy_binary) alone into the
# directory that becomes the guests' /job.
stage() {
  local name=$1 binaries=$2 binary
  rm -rf "${stage:?}"/*
  for binary in $binaries; do
    copy_binary "$name" "$binary" "$stage" || return 1
  done
}

# check_binary NAME EXPECTED_STATUS PATTERNS BINARIES COMMAND: like check, with BINARIES (see
# stage) in the guest's /job. With batching on (below) the check joins a batch instead, and its
# line is printed when run_batches runs it.
check_binary() {
  last_passed=0
  selected "$1" || return 0
  if ((batching)); then
    queue "$@"
    return 0
  fi
  stage "$1" "$4" && check "$1" "$2" "$3" --add "$stage" -- "$5"
}

# Batches. A guest's boot and its job's archive cost 3-5 s per check, as much as many checks'
# own work: check_binary's checks (one guest each, no boot options) run instead in a few guests
# that each serve many checks in turn, one guest per build of the binaries they run (plain, tsan,
# asan), through batch_guest.sh: each check in its own directory /job/NAME (links to its
# binaries and nothing else, so a name means the binary this check was given), in a session of
# its own, with a time limit; what it leaves running is killed before the next starts. Its
# output and status are cut out of the guest's and judged as a lone check's would be. A check
# its guest never finished (the guest stopped or ran out of time in it or before it) runs again
# alone, saying so: a batch can cost a check time, never its verdict. SOFTROCE_BATCH=0 gives
# every check a guest of its own.
batching=1
[[ ${SOFTROCE_BATCH:-1} == 0 ]] && batching=0
batch_limit=360 # seconds per check in a shared guest (above rftrun's --timeout 300)
batch_root=''   # the batches' staging trees (made on first use; the caller removes it)
batch_names=()  # the queued checks, in order
declare -A batch_want=() batch_pattern=() batch_binaries=() batch_command=() batch_group=() batch_files=()

# queue NAME EXPECTED_STATUS PATTERNS BINARIES COMMAND: stages NAME's binaries into its group's
# tree, each distinct binary once (files/K/BASENAME), linked from NAME's directory.
queue() {
  local name=$1 binaries=$4 group=plain binary path key dir files
  [[ $binaries == *"$sanitized/tsan/"* ]] && group=tsan
  [[ $binaries == *"$sanitized/asan/"* ]] && group=asan
  [[ -n $batch_root ]] || batch_root=$(mktemp -d)
  dir=$batch_root/$group/$name
  mkdir -p "$dir"
  for binary in $binaries; do
    path=$(repository_path "$binary")
    key=$group:$path
    if [[ -z ${batch_files[$key]:-} ]]; then
      files=files/${#batch_files[@]}
      mkdir -p "$batch_root/$group/$files"
      copy_binary "$name" "$binary" "$batch_root/$group/$files" || return 1
      batch_files[$key]=$files
    fi
    ln -s "../${batch_files[$key]}/$(basename "$path")" "$dir/"
  done
  printf '%s\n' "$5" >"$dir/.command"
  batch_names+=("$name")
  batch_want[$name]=$2
  batch_pattern[$name]=$3
  batch_binaries[$name]=$binaries
  batch_command[$name]=$5
  batch_group[$name]=$group
}

# run_batches: runs the queued checks, a guest per group, and judges each; the ones a guest did
# not finish then run alone.
run_batches() {
  local group name names count log end status seconds where unfinished=()
  ((${#batch_names[@]} > 0)) || return 0
  for group in plain tsan asan; do
    names=()
    for name in "${batch_names[@]}"; do
      [[ ${batch_group[$name]} == "$group" ]] && names+=("$name")
    done
    count=${#names[@]}
    ((count > 0)) || continue
    printf '%s\n' "${names[@]}" >"$batch_root/$group/batch.order"
    cp "$here/batch_guest.sh" "$batch_root/$group/batch.sh"
    log=$batch_root/$group.log
    # The guest's own limit: ~20 s a check beyond a margin (they take 2-18 s); past it, the checks
    # not yet finished run alone, each with the usual 600 s.
    "$run" --memory 2048 --timeout $((600 + count * 20)) --add "$batch_root/$group" -- \
      "bash /job/batch.sh $batch_limit" >"$log" 2>&1
    where="in a guest shared with $((count - 1)) more"
    grep -q '^softroce: booting again' "$log" && where+=', booted again after a stalled boot'
    for name in "${names[@]}"; do
      # The check's output lies between its begin and end lines; the end line has its status
      # and its seconds.
      end=$(grep -a -m 1 "^@@softroce-check-end $name [0-9]* [0-9]*@@$" "$log")
      if [[ -z $end ]]; then
        unfinished+=("$name")
        continue
      fi
      sed -n "/^@@softroce-check-begin $name@@\$/,/^@@softroce-check-end $name /p" "$log" |
        sed '1d;$d' >"$out"
      end=${end%@@}
      read -r _ _ status seconds <<<"$end"
      judge "$name" "${batch_want[$name]}" "${batch_pattern[$name]}" "$status" "$seconds" "$where"
    done
  done
  ((${#unfinished[@]} > 0)) || return 0
  echo "softroce: the shared guests did not finish ${unfinished[*]}; each runs in a guest of its own"
  echo "softroce: the last shared guest's output ended:"
  tail -n 20 "$log" | sed 's/^/  /'
  batching=0
  for name in "${unfinished[@]}"; do
    check_binary "$name" "${batch_want[$name]}" "${batch_pattern[$name]}" \
      "${batch_binaries[$name]}" "${batch_command[$name]}"
  done
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
