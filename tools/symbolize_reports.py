#!/usr/bin/env python3
"""Names the frames of sanitizer reports that were printed without symbols.

tools/test.sh runs the asan stage's tests with ASAN_OPTIONS=symbolize=0 (why: docs/reliability.md,
"The test command's time"), so a report's frames read "#3 0x7f.. (/path/libx.so+0x1a2b)". After
the stage, this reads the logs of the tests that failed and prints each sanitizer report again
with the function, file and line of every frame, from addr2line on the binaries the run left.

  symbolize_reports.py EXECROOT LOG...

A module's path inside Bazel's sandbox (gone after the test) is looked up under EXECROOT, the
output of `bazel info execution_root`, from its "execroot/<workspace>/" part on.
"""
import os
import re
import subprocess
import sys

# "    #3 0x55d3c2a1b2c3  (/path/to/module+0x1a2b)" as the sanitizers print it without symbols,
# maybe after a launcher's "[rank] " tag.
FRAME = re.compile(r"^((?:\[[^\]]*\] ?)?\s*#\d+\s+0x[0-9a-f]+)\s+\((.+)\+(0x[0-9a-f]+)\)\s*$")
# The lines of a report worth printing again beside its frames.
REPORT_LINE = re.compile(r"^==\d+==|^SUMMARY: |runtime error: |^\S.*(allocated|freed|thread T\d+)")
EXECROOT_PART = re.compile(r"/execroot/[^/]+/(.*)$")


def resolve(module, execroot):
    """The module's path on disk now, or None."""
    if os.path.exists(module):
        return module
    match = EXECROOT_PART.search(module)
    if match and execroot:
        candidate = os.path.join(execroot, match.group(1))
        if os.path.exists(candidate):
            return candidate
    return None


def names(module, offsets):
    """addr2line's 'function at file:line' per offset (inlined frames joined by ' / ')."""
    try:
        output = subprocess.run(
            ["addr2line", "-C", "-f", "-i", "-a", "-e", module] + offsets,
            capture_output=True, text=True, timeout=120, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    result = {}
    current = None
    lines = output.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("0x"):
            current = "0x%x" % int(line, 16)
            result[current] = []
            i += 1
            continue
        if current is not None and i + 1 < len(lines):
            result[current].append("%s at %s" % (line, lines[i + 1]))
        i += 2
    return {offset: " / ".join(frames) for offset, frames in result.items()}


def symbolize(path, execroot):
    try:
        with open(path, errors="replace") as log:
            lines = log.read().splitlines()
    except OSError:
        return
    # Each frame line once: (prefix, module as printed, module on disk or None, offset).
    frames = {}
    wanted = {}
    for i, line in enumerate(lines):
        match = FRAME.match(line)
        if match:
            module = resolve(match.group(2), execroot)
            offset = "0x%x" % int(match.group(3), 16)
            frames[i] = (match.group(1), match.group(2), module, offset)
            if module:
                wanted.setdefault(module, set()).add(offset)
    if not wanted:
        return
    named = {}
    for module, offsets in wanted.items():
        for offset, name in names(module, sorted(offsets)).items():
            named[(module, offset)] = name
    print("=== sanitizer reports of %s, symbolized by addr2line" % path)
    for i, line in enumerate(lines):
        if i in frames:
            prefix, printed, module, offset = frames[i]
            name = named.get((module, offset))
            where = "%s+%s" % (os.path.basename(printed), offset)
            print("%s in %s (%s)" % (prefix, name, where) if name else line)
        elif REPORT_LINE.search(line):
            print(line)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: symbolize_reports.py EXECROOT LOG...")
    for path in sys.argv[2:]:
        symbolize(path, sys.argv[1])


if __name__ == "__main__":
    main()
