# Verdicts and checks shared by the stages that run scenarios and print one line each
# (tools/compat/run.sh, tools/slurm/run.sh). Sourced after setting
#   scenario_stage   the stage's name, the prefix of every line ("compat", "slurm")
#   logs             the folder of the scenarios' outputs
# A scenario's runner sets out (its output file), status (its exit status), limit (its time
# bound, s) and empties why; the expect_* checks append reasons to why, and decide prints the
# verdict. finish prints the stage's summary line, "STAGE: N passed, N failed".
passed=0
failed=0
started=$(date +%s)
out=""
status=0
limit=0
why=()

finish() {
  echo "$scenario_stage: logs in $logs; $(($(date +%s) - started)) s"
  echo "$scenario_stage: $passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}

verdict() {  # NAME REASON... : passed when no reason is given
  local name=$1
  shift
  if [[ $# -eq 0 ]]; then
    passed=$((passed + 1))
    echo "$scenario_stage $name: passed"
  else
    failed=$((failed + 1))
    local reasons
    reasons=$(printf '%s; ' "$@")
    echo "$scenario_stage $name: failed (${reasons%; })"
  fi
}

expect_status() {  # N
  # timeout(1) exits 124 when it had to stop the command (137 is a launcher's verdict on a
  # rank killed by SIGKILL, e.g. rftrun after a crash it did not cause).
  if [[ $status -eq 124 ]]; then
    why+=("hung: killed by timeout after ${limit} s (status $status)")
  elif [[ $status -ne $1 ]]; then
    why+=("exit status $status, expected $1")
  fi
}
expect_lines() {  # FIXED_TEXT N : exactly N lines contain the text
  local n
  n=$(grep -cF -- "$1" "$out" || true)
  [[ $n -eq $2 ]] || why+=("$n line(s) with '$1', expected $2")
}
expect_at_least() {  # FIXED_TEXT N
  local n
  n=$(grep -cF -- "$1" "$out" || true)
  [[ $n -ge $2 ]] || why+=("$n line(s) with '$1', expected >= $2")
}
expect_none() {  # FIXED_TEXT
  local n
  n=$(grep -cF -- "$1" "$out" || true)
  [[ $n -eq 0 ]] || why+=("$n line(s) with '$1'")
}
decide() {  # NAME : prints the verdict and, on failure, the decisive lines of the output
  local name=$1
  verdict "$name" "${why[@]}"
  if [[ ${#why[@]} -gt 0 ]]; then
    # Assertions, aborts and checks first (deduplicated: every rank prints the same), then the end.
    # Rank tags, [host:pid:tid:thread] prefixes and addresses are dropped so that identical
    # messages of different ranks count as one; backtrace frames are left out.
    grep -E 'Assertion|FAILED|abort|Abort|signal|error|Error|not found|timed out' "$out" |
      grep -vE '^(\[[0-9]+\] )?[[:space:]]*[0-9]+ +/' |
      sed -E 's/^\[[0-9]+\] //; s/^\[[^]]*:[0-9]+:[0-9]+(:[0-9]+)?\] +//; s/0x[0-9a-f]+/0x_/g' |
      sort | uniq -c | sort -rn | head -8 | sed 's/^/    | /' || true
    echo "    | ... last lines of $out:"
    tail -n 6 "$out" | sed 's/^/    | /'
  fi
}
