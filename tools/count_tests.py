#!/usr/bin/env python3
"""Counts test cases from one `bazel test` run: prints "PASSED FAILED".

Bazel treats each cc_test as one test; CI wants test cases. For every target in Bazel's
summary, the test cases come from its test.xml (GoogleTest writes one per case). A target
that failed without a usable test.xml (build failure, crash, timeout) counts as one failure;
so does a build that never reached the summary.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

STATUS_LINE = re.compile(
    r"^(//\S+)\s+(?:\(cached\)\s+)?(PASSED|FAILED|TIMEOUT|NO STATUS|FLAKY|FAILED TO BUILD|"
    r"INCOMPLETE|REMOTE FAILURE)\b")


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
            xml = os.path.join(testlogs, package, name, "test.xml")
            counted = count_xml(xml) if status in ("PASSED", "FAILED", "FLAKY") else None
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
