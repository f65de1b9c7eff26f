#!/usr/bin/env python3
"""Counts test cases from one `bazel test` run: prints "PASSED FAILED".

Bazel treats each cc_test as one test; CI wants test cases. For every target in Bazel's
summary, the test cases come from its test.xml (GoogleTest writes one per case), or from
each shard's for a sharded target. A target that failed without a usable test.xml (build
failure, crash, timeout) counts as one failure; so does a build that never reached the summary.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

STATUS_LINE = re.compile(
    r"^(//\S+)\s+(?:\(cached\)\s+)?(PASSED|FAILED|TIMEOUT|NO STATUS|FLAKY|FAILED TO BUILD|"
    r"INCOMPLETE|REMOTE FAILURE)\b")


SHARD_DIR = re.compile(r"^shard_\d+_of_\d+$")


def count_xml(path):
    """Returns (passed, failed) test cases in one test.xml, or None when unreadable."""
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return None
    passed = failed = 0
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.get("result") == "skipped" or case.find("skipped") is not None:
            continue
        else:
            passed += 1
    return passed, failed


def count_target(directory):
    """Sums a target's test.xml, or its shards' (shard_K_of_N/test.xml); None if any is unreadable."""
    # Exactly shard_K_of_N: a developer's --runs_per_test leaves shard_K_of_N_run_R_of_M beside
    # them, which this run did not write.
    shards = sorted(d for d in (os.listdir(directory) if os.path.isdir(directory) else [])
                    if SHARD_DIR.match(d))
    paths = [os.path.join(directory, d, "test.xml") for d in shards] or [
        os.path.join(directory, "test.xml")]
    passed = failed = 0
    for path in paths:
        counted = count_xml(path)
        if counted is None:
            return None
        passed += counted[0]
        failed += counted[1]
    return passed, failed


def main():
    log_path, testlogs = sys.argv[1], sys.argv[2]
    passed = failed = 0
    targets = 0
    build_failed = False
    with open(log_path, errors="replace") as log:
        for line in log:
            if line.startswith("ERROR:") and "Build did NOT complete" in line:
                build_failed = True
            match = STATUS_LINE.match(line.strip())
            if not match:
                continue
            targets += 1
            target, status = match.group(1), match.group(2)
            package, _, name = target[2:].partition(":")
            counted = None
            if status in ("PASSED", "FAILED", "FLAKY"):
                counted = count_target(os.path.join(testlogs, package, name))
            if counted is None or counted == (0, 0):
                if status in ("PASSED", "FLAKY"):
                    passed += 1
                else:
                    failed += 1
                continue
            p, f = counted
            if status == "FAILED" and f == 0:
                f = 1  # the binary failed outside any test case (crash, sanitizer at exit)
            passed += p
            failed += f
    if targets == 0 or (build_failed and failed == 0):
        failed += 1
    print(passed, failed)


if __name__ == "__main__":
    main()
