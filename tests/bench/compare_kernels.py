#!/usr/bin/python3
"""Two Tessel builds, kernel by kernel, on one model: which kernels a change made faster.

    tests/bench/compare_kernels.py MODEL --baseline OTHER_BUILD [--build build-check]
                                   [--threads 2] [--rounds 6] [--repeat 10] [--in-model]

End-to-end times on a shared, noisy machine move by 5-30% between runs of the same library, so a
change of a few percent in some kernels does not show there. This bench profiles the model with
each build's `tessel profile` in alternation, round after round, and keeps each kernel's minimum
over all rounds: a kernel's minimum is reached in the quiet moments, which both builds get.

    round 1: baseline profile ─ build profile      per kernel: min over rounds, each build
    round 2: baseline profile ─ build profile  ──▶ sum of the minima, and the ratio per kernel
    ...

By default a kernel's time is `tessel profile`'s (the kernel repeated: its weights warm in the
caches). With --in-model it is the kernel's span in the trace of one pass over the model, in
order, each kernel once: the cold weights, the caches as the model leaves them (one sample per
round, so use more rounds). Session 11 of tests/bench/RESULTS.md used both.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))


def tessel_of(build):
    path = os.path.join(build, "app", "cli", "tessel")
    if not os.access(path, os.X_OK):
        sys.exit("compare_kernels: no tessel at %s (build the target `tessel` there)" % path)
    return path


def profile(tessel, model, threads, repeat, in_model, trace):
    """Kernel name -> ms for one profile of the model (in the model's order)."""
    command = [tessel, "profile", model, "--target", "llvm -num_threads=%d" % threads, "--repeat", str(repeat),
               "--json"]
    if in_model:
        command += ["--trace", trace]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit("compare_kernels: %s failed:\n%s" % (" ".join(command), run.stderr.strip()))
    if not in_model:
        return {k["name"]: k["ms_min"] for k in json.loads(run.stdout)["kernels"]}
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    return {e["name"]: e["dur"] / 1e3 for e in events if e.get("cat") == "kernel"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    parser.add_argument("model")
    parser.add_argument("--baseline", required=True, help="the other build folder (the commit before a change)")
    parser.add_argument("--build", default=os.path.join(SOURCE, "build-check"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=10, help="repeats per kernel in one profile")
    parser.add_argument("--in-model", action="store_true", help="time each kernel in one pass over the model")
    args = parser.parse_args()
    builds = collections.OrderedDict([("baseline", tessel_of(args.baseline)), ("build", tessel_of(args.build))])
    best = {b: collections.OrderedDict() for b in builds}
    totals = {b: [] for b in builds}
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        for _ in range(args.rounds):
            for b, tessel in builds.items():
                times = profile(tessel, args.model, args.threads, args.repeat, args.in_model, trace)
                totals[b].append(sum(times.values()))
                for name, ms in times.items():
                    best[b][name] = min(best[b].get(name, ms), ms)
    print("%s, %d thread(s), %d rounds, %s" % (os.path.basename(args.model), args.threads, args.rounds,
                                               "in the model (one pass)" if args.in_model else "kernels repeated"))
    for b in builds:
        print("%-8s sum of the kernels per round: %s" % (b, " ".join("%.2f" % t for t in totals[b])))
    print("%-44s %10s %10s %7s" % ("kernel", "baseline", "build", "ratio"))
    for name, base_ms in best["baseline"].items():
        ms = best["build"].get(name)
        if ms is None:
            print("%-44s %10.3f %10s" % (name, base_ms, "-"))
            continue
        print("%-44s %10.3f %10.3f %6.2fx" % (name, base_ms, ms, ms / base_ms))
    base_sum, sum_ = sum(best["baseline"].values()), sum(best["build"].values())
    print("%-44s %10.3f %10.3f %6.2fx  (ms; ratio = build / baseline)" % ("sum of the minima", base_sum, sum_,
                                                                          sum_ / base_sum))


if __name__ == "__main__":
    main()
