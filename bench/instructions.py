#!/usr/bin/env python3
"""Instructions per round trip from pairs of callgrind runs (bench/count_instructions.sh).

    instructions.py [--json] [--top N] NAME:SHORT:LONG:EXTRA ...

Each program ran twice under callgrind; SHORT and LONG are `callgrind_annotate --auto=no`
outputs of the two runs and EXTRA the round trips the longer one made in addition. The
difference of a function's own count between the runs, divided by EXTRA, is what one round trip
costs it: start-up, set-up and exit cancel out. Functions are grouped by kind; "polling" are the
ones that spin while a process waits for its reply, whose count depends on how long the other
side takes and so varies from run to run (every other figure is the same to the instruction).
"""
import collections
import json
import re
import sys

LINE = re.compile(r"\s*([\d,]+) \([^)]*\)\s+(\S.*)$")

# Spin while waiting: rft's wait loop and the progress calls each pass makes, UCX's worker and
# interface progress (unnamed in Debian's stripped libuct/libucp) and the verbs channel's poll
# of its completion queue (the provider's is in POLLING_AT). The channel's Progress is inline in
# ProgressVerbs since 2026-11-29; what it does with completions it found (HandlePolled) is work
# per message, counted as rft's.
POLLING = {
    "rft::transport::DataPlane::Progress",
    "rft::transport::DataPlane::Wait",
    "rft::transport::DataPlane::Waitall",
    "rft::transport::DataPlane::ProgressVerbs",
    "rft::verbs::EagerChannel::Progress",
    "ucp_worker_progress",
}


# Unnamed functions of stripped libraries that poll, by library and address: rxe's poll_cq in
# Debian 12's rdma-core 44 (librxe-rdmav34), called by UCX's rc progress and by the eager
# channel's Progress (found with callgrind_annotate --tree=caller).
POLLING_AT = {("librxe-rdmav34.so", "0x0000000000002ca0")}


def own_counts(path):
    """Self instructions by function name (inlined pieces in other files added together)."""
    counts, lib = collections.Counter(), {}
    for line in open(path, errors="replace"):
        m = LINE.match(line)
        if not m or "PROGRAM TOTALS" in m.group(2):
            continue
        where = m.group(2)
        name = where.split(" [")[0]
        name = name.split(":", 1)[1] if ":" in name else name
        name = re.sub(r"\(.*", "", name)
        counts[name] += int(m.group(1).replace(",", ""))
        if "[" in where:
            lib[name] = where.rsplit("[", 1)[1].rstrip("]").rsplit("/", 1)[-1]
    return counts, lib


def kind(name, lib):
    if (name in POLLING or (lib, name) in POLLING_AT or
            (lib.startswith(("libucp", "libuct")) and name.startswith("0x"))):
        return "polling"
    if name.startswith("rft::"):
        return "rft"
    if lib.startswith(("libucp", "libuct", "libucs")):
        return "ucx"
    if lib.startswith(("libibverbs", "librxe", "libmlx", "librdmacm")):
        return "verbs"
    if "memcpy" in name or "memmove" in name:
        return "memcpy"
    return "other"  # the benchmark's own loop, clock reads, ...


KINDS = ["rft", "ucx", "verbs", "memcpy", "other", "polling"]


def main(argv):
    as_json, top, programs = False, 15, []
    args = iter(argv)
    for arg in args:
        if arg == "--json":
            as_json = True
        elif arg == "--top":
            top = int(next(args))
        else:
            name, short, long, extra = arg.rsplit(":", 3)
            programs.append((name, short, long, float(extra)))
    results = []
    for name, short, long, extra in programs:
        a, lib_a = own_counts(short)
        b, lib_b = own_counts(long)
        lib = {**lib_a, **lib_b}
        rows = {n: (b[n] - a[n]) / extra for n in set(a) | set(b)}
        rows = {n: v for n, v in rows.items() if abs(v) >= 0.5}
        sums = collections.Counter()
        for n, v in rows.items():
            sums[kind(n, lib.get(n, ""))] += v
        ordered = sorted(((round(v, 1), n) for n, v in rows.items()), reverse=True)
        results.append({
            "program": name,
            "by_kind": {k: round(sums.get(k, 0), 1) for k in KINDS},
            "rft": [r for r in ordered if kind(r[1], lib.get(r[1], "")) == "rft"],
            "others": [r for r in ordered if kind(r[1], lib.get(r[1], "")) != "rft"],
        })
    if as_json:
        for r in results:
            print(json.dumps({"bench": "instructions_per_round_trip", "size": 8,
                              "program": r["program"], **r["by_kind"],
                              "rft_functions": {n: v for v, n in r["rft"][:top]}}))
        return 0
    print("instructions per 8 B round trip, per process (callgrind; polling varies with timing)")
    print("%-18s" % "program" + "".join("%9s" % k for k in KINDS) + "%9s" % "total")
    for r in results:
        work = sum(v for k, v in r["by_kind"].items() if k != "polling")
        print("%-18s" % r["program"] + "".join("%9.1f" % r["by_kind"][k] for k in KINDS) +
              "%9.1f" % work)
    print("(total: all but polling)")
    for r in results:
        for title, rows in (("rft's functions (own instructions, inlined code included)",
                             r["rft"]), ("the other functions", r["others"])):
            if rows:
                print(f"\n{r['program']}: {title}")
                for v, n in rows[:top]:
                    print("%8.1f  %s" % (v, n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
