#!/usr/bin/env python3
"""`mpirun -np 3 tessel tune` on localhost (app/cli/mpi_tune.h): the log rank 0 writes is valid and
complete, and `tessel run --records` applies it; with --kill-worker, one worker is killed with
SIGKILL in the middle of the run: rank 0 must name it and go on, and the log must still hold every
trial (the killed worker's trial measured again by the other worker). With --kill-idle-worker,
candidates go out one at a time (--batch 1), so worker rank 2 never gets one; it is killed early,
unnoticed during the run, and rank 0 must find it gone at the end instead of waiting in
MPI_Finalize for it forever.

usage: tune_under_mpirun.py MPIRUN TESSEL MODEL_DIR WORK_DIR [--kill-worker | --kill-idle-worker]
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

TRIALS = 12
FIELDS = ("kernel_key", "kernel", "target", "schedule", "ms_min", "ms_median", "error")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def read_log(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = [line for line in f.read().split("\n") if line.strip()]
    records = []
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            fail(f"{path}:{number}: not JSON ({e}): {line[:200]}")
        for field in FIELDS:
            if field not in record:
                fail(f"{path}:{number}: no field '{field}': {line[:200]}")
        records.append(record)
    return records


def main():
    if len(sys.argv) < 5:
        fail(__doc__)
    mpirun, tessel, model_dir, work = sys.argv[1:5]
    idle = "--kill-idle-worker" in sys.argv[5:]
    kill = idle or "--kill-worker" in sys.argv[5:]
    victim = 2 if idle else 1
    name = "idle" if idle else "kill" if kill else "tune"
    os.makedirs(work, exist_ok=True)
    model = os.path.join(model_dir, "mlp.onnx")
    log = os.path.join(work, name + ".jsonl")
    if os.path.exists(log):
        os.remove(log)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # Longer timings when a worker is to be killed, so that the run is still going when it is.
    min_time_ms = "30" if kill else "2"
    command = [mpirun, "-np", "3", "--oversubscribe", "--enable-recovery", tessel, "tune", model, "--records", log,
               "--trials", str(TRIALS), "--batch", "1" if idle else "4", "--min-time-ms", min_time_ms, "--target", "llvm",
               "--worker-timeout", "4"]
    print("$ " + " ".join(command), flush=True)
    err_path = os.path.join(work, name + ".err")
    with open(err_path, "w") as err:
        run = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, env=env, text=True)
        killed = None
        if kill:
            # Rank 0 names its workers at start ("worker rank 1 (pid 123 on host)"); rank 1 is killed
            # in the middle of the second kernel's search.
            deadline = time.time() + 240
            while time.time() < deadline and run.poll() is None and killed is None:
                pids = re.findall(rf"worker rank {victim} \(pid (\d+) on ", open(err_path).read())
                if pids and len(read_log(log)) >= (2 if idle else TRIALS + TRIALS // 2):
                    killed = int(pids[0])
                    os.kill(killed, signal.SIGKILL)
                    print(f"killed worker rank {victim} (pid {killed}) with {len(read_log(log))} trials in the log",
                          flush=True)
                time.sleep(0.05)
            if killed is None:
                run.kill()
                fail("the run ended (or never started its workers) before a worker could be killed:\n" +
                     open(err_path).read())
        try:
            out, _ = run.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            run.kill()
            fail("mpirun did not end within 600 s:\n" + open(err_path).read())
    err_text = open(err_path).read()
    print(out)
    print(err_text)
    if run.returncode != 0:
        fail(f"mpirun exited with {run.returncode}")

    records = read_log(log)
    kernels = {}
    for r in records:
        kernels.setdefault(r["kernel"], []).append(r)
    if len(kernels) != 3:
        fail(f"expected the 3 kernels of mlp.onnx in the log, got {sorted(kernels)}")
    # A whole model's budget is TRIALS per kernel in all, spread by time (core/tune/task_scheduler.h),
    # then the final race of each best against its default (core/tune/verify.h), marked verified.
    searched = [r for r in records if not r.get("verified")]
    if len(searched) != 3 * TRIALS or (len(records) - len(searched)) % 6 != 0:
        fail(f"{len(searched)} records of the search, expected {3 * TRIALS} (one per trial), and "
             f"{len(records) - len(searched)} of the race, expected a multiple of 6")
    for name, rows in kernels.items():
        if rows[0]["error"] or rows[0]["ms_min"] <= 0:
            fail(f"kernel {name}: the default schedule, measured first, failed: {rows[0]}")
    errors = [r for r in records if r["error"]]
    if kill and not idle and not re.search(rf"worker rank 1 \(pid {killed} on [^)]*\) stopped answering", err_text):
        fail("rank 0 did not say that the killed worker stopped answering")
    if idle and not re.search(rf"worker rank 2 \(pid {killed} on [^)]*\) did not answer at the end", err_text):
        fail("rank 0 did not say that the killed idle worker did not answer at the end")
    if errors:
        fail("trials that failed: " + "; ".join(r["error"][:200] for r in errors))

    # The log applies like any other.
    out_dir = os.path.join(work, "run_out_" + name)
    applied = subprocess.run([tessel, "run", model, "--inputs", os.path.join(model_dir, "mlp"), "--out-dir", out_dir,
                              "--records", log], capture_output=True, text=True)
    if applied.returncode != 0 or "3 of 3 compiled kernels use tuned schedules" not in applied.stderr:
        fail("tessel run --records did not apply the log:\n" + applied.stderr)
    print(f"PASS: {len(records)} records, {len(kernels)} kernels" + (", a worker killed" if kill else ""))


if __name__ == "__main__":
    main()
