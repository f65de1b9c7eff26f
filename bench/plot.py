#!/usr/bin/env python3
"""Turns the benchmarks' --json lines into the PNGs of docs/performance.md.

    bench/plot.py --out docs/img [--mpi compare_mpi.json] [--kill launcher_events.json]
                  [--sim sim_detect.json]

--mpi:  bench/compare_mpi.sh --json (rft beside Open MPI 5, one run): latency and bandwidth
        versus message size, and the collectives and ULFM operations side by side.
--kill: rft_bench_launcher_events --json: the time until every survivor knew of a SIGKILL,
        one distribution per job size.
--sim:  rft_bench_sim_detect --json: detection versus the number of ranks in the simulator.
Each input is optional; each PNG it makes is named on stdout. Needs python3-matplotlib.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display: files only
import matplotlib.pyplot as plt  # noqa: E402

RFT_COLOR, OMPI_COLOR = "#1f6fb4", "#d9822b"


def read_lines(path):
    rows = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                sys.exit(f"plot.py: {path}:{number}: not JSON ({e})")
    if not rows:
        sys.exit(f"plot.py: {path}: no JSON lines")
    return rows


def size_label(n):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n // scale} {unit}"
    return f"{n} B"


def save(fig, out, name, title_note):
    path = os.path.join(out, name)
    fig.text(0.99, 0.01, title_note, ha="right", va="bottom", fontsize=7, color="#555555")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"plot.py: wrote {path}")


def plot_mpi(rows, out):
    note = "bench/compare_mpi.sh --json (2 ranks, one node; medians over rounds)"
    for bench, unit, name, title in (
        ("pingpong", "µs", "mpi_latency.png", "MPI ping-pong, one-way latency (lower is better)"),
        ("bandwidth", "MB/s", "mpi_bandwidth.png",
         "MPI bandwidth, window of 64 (higher is better)"),
    ):
        series = sorted((r for r in rows if r["bench"] == bench), key=lambda r: r["size"])
        if not series:
            continue
        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        sizes = [r["size"] for r in series]
        ax.plot(sizes, [r["rft"] for r in series], "o-", color=RFT_COLOR, label="rft")
        if all("ompi" in r for r in series):
            ax.plot(sizes, [r["ompi"] for r in series], "s--", color=OMPI_COLOR,
                    label="Open MPI 5 ULFM")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.set_xticklabels([size_label(s) for s in sizes], rotation=30, fontsize=8)
        ax.set_ylabel(unit)
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        save(fig, out, name, note)

    ops = [("barrier", 0), ("allreduce", 8), ("bcast", 8), ("reduce", 8), ("dup", 0),
           ("agree", 0), ("iagree", 0), ("shrink", 0), ("ishrink", 0), ("revoke", 0)]
    by_key = {(r["bench"], r["size"]): r for r in rows}
    present = [k for k in ops if k in by_key]
    if present:
        fig, ax = plt.subplots(figsize=(7.4, 3.8))
        xs = range(len(present))
        width = 0.4
        ax.bar([x - width / 2 for x in xs], [by_key[k]["rft"] for k in present], width,
               color=RFT_COLOR, label="rft")
        ompi = [by_key[k].get("ompi") for k in present]
        if any(v is not None for v in ompi):
            ax.bar([x + width / 2 for x in xs], [v or 0 for v in ompi], width,
                   color=OMPI_COLOR, label="Open MPI 5 ULFM")
        ax.set_yscale("log")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([k[0] + (f" {k[1]} B" if k[1] else "") for k in present],
                           rotation=30, fontsize=8)
        ax.set_ylabel("µs (lower is better)")
        ax.set_title("Collectives and ULFM operations, nothing failed (revoke: until the "
                     "waiting rank answered)", fontsize=9)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.legend()
        save(fig, out, "mpi_operations.png", note)


def plot_kill(rows, out):
    rows = [r for r in rows if r.get("all_know_ms")]
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ax.boxplot([r["all_know_ms"] for r in rows], labels=[f"n = {r['n']}" for r in rows],
               showfliers=True)
    ax.set_ylabel("ms until every survivor knew")
    ax.set_title("A SIGKILL known at every survivor (rftrun's event), per job size",
                 fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    save(fig, out, "detect_kill.png", "rft_bench_launcher_events --json")


def plot_sim(rows, out):
    rows = sorted((r for r in rows if r.get("bench") == "sim_detect"), key=lambda r: r["n"])
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    ns = [r["n"] for r in rows]
    ax.plot(ns, [r["p50_ms"] for r in rows], "o-", color=RFT_COLOR, label="crash known "
            "everywhere, p50")
    ax.plot(ns, [r["p99_ms"] for r in rows], "^--", color=RFT_COLOR, alpha=0.6, label="p99")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("ranks (simulated)")
    ax.set_ylabel("ms")
    ax.set_title("Detection versus job size in the simulator", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    save(fig, out, "detect_sim.png", "rft_bench_sim_detect --json")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for the PNGs")
    parser.add_argument("--mpi", help="bench/compare_mpi.sh --json output")
    parser.add_argument("--kill", help="rft_bench_launcher_events --json output")
    parser.add_argument("--sim", help="rft_bench_sim_detect --json output")
    args = parser.parse_args()
    if not (args.mpi or args.kill or args.sim):
        parser.error("give at least one of --mpi, --kill, --sim")
    os.makedirs(args.out, exist_ok=True)
    if args.mpi:
        plot_mpi(read_lines(args.mpi), args.out)
    if args.kill:
        plot_kill(read_lines(args.kill), args.out)
    if args.sim:
        plot_sim(read_lines(args.sim), args.out)


if __name__ == "__main__":
    main()
