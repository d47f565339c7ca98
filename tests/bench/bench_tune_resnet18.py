#!/usr/bin/python3
"""Tunes ResNet-18 for a fixed budget, then times the whole model built with the default schedules
and with the tuning log, side by side:

    tests/bench/bench_tune_resnet18.py [--build build] [--model FILE] [--trials N] [--time-budget S]
                                       [--cache MODE] [--target SPEC] [--repeat N] [--work DIR] [--mpi N]
                                       [--no-tune]

  1. tessel tune MODEL --records LOG --trials N --time-budget S   (N trials and S seconds per kernel
     on average: the tune spreads N x kernels trials over them by their time in the model; `--cache`
     is passed on, default auto; `--mpi N` runs it as `mpirun --enable-recovery -np N`, rank 0
     searching and N-1 workers measuring; `--no-tune` keeps the log as it is and only re-times)
  2. tessel build MODEL -o default.so            and   tessel build MODEL -o tuned.so --records LOG
  3. both libraries loaded here (ctypes) and run in alternation on the same random input, so a
     machine whose speed drifts affects both alike; min and median of the end-to-end times.

The model is tests/bench/gen_bench_models.py's resnet18 (torchvision's definition, random weights),
written to BUILD/tests/bench/resnet18.onnx when --model is not given (it needs python3-torch). The
log is appended to, so a second run continues the search with what the first one measured.
"""
import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
NUMPY_OF_ONNX = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64,
                 onnx.TensorProto.INT32: np.int32, onnx.TensorProto.UINT8: np.uint8, onnx.TensorProto.INT8: np.int8}


def run(command):
    print("$ " + " ".join(command), flush=True)
    subprocess.run(command, check=True)


def value_infos(model, which):
    initializers = {i.name for i in model.graph.initializer}
    out = []
    for v in getattr(model.graph, which):
        if v.name in initializers:
            continue
        t = v.type.tensor_type
        out.append((v.name, NUMPY_OF_ONNX[t.elem_type], [d.dim_value for d in t.shape.dim]))
    return out


class Library:
    def __init__(self, path, name, inputs, outputs):
        self.lib = ctypes.CDLL(path)
        self.run = getattr(self.lib, name + "_run")
        self.run.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p)]
        self.run.restype = ctypes.c_int
        self.inputs = inputs
        self.outputs = [np.zeros(shape, dtype) for _, dtype, shape in outputs]
        self.in_ptrs = (ctypes.c_void_p * len(inputs))(*[a.ctypes.data for a in inputs])
        self.out_ptrs = (ctypes.c_void_p * len(self.outputs))(*[a.ctypes.data for a in self.outputs])

    def call(self):
        t0 = time.perf_counter()
        status = self.run(self.in_ptrs, self.out_ptrs)
        elapsed = time.perf_counter() - t0
        if status != 0:
            sys.exit(f"the model library's run returned {status}")
        return elapsed


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build", help="the build folder (tessel, tessel-measure)")
    p.add_argument("--model", help="the ONNX model (default: generated resnet18)")
    p.add_argument("--trials", type=int, default=32, help="measurements per kernel (default 32)")
    p.add_argument("--time-budget", type=float, default=60, help="seconds per kernel (default 60)")
    p.add_argument("--target", default="llvm -num_threads=1")
    p.add_argument("--repeat", type=int, default=20, help="end-to-end runs of each library (default 20)")
    p.add_argument("--work", default=None, help="where the log and libraries go (default BUILD/tune_resnet18)")
    p.add_argument("--mpi", type=int, default=0, help="tune under mpirun with this many ranks")
    p.add_argument("--cache", choices=("cold", "warm", "auto"), help="tessel tune's --cache (default: its own, auto)")
    p.add_argument("--no-tune", action="store_true", help="time the libraries with the log as it is")
    args = p.parse_args()

    tessel = os.path.join(args.build, "app", "cli", "tessel")
    work = args.work or os.path.join(args.build, "tune_resnet18")
    os.makedirs(work, exist_ok=True)
    model_path = args.model
    if not model_path:
        model_path = os.path.join(args.build, "tests", "bench", "resnet18.onnx")
        if not os.path.exists(model_path):
            run([sys.executable, os.path.join(HERE, "gen_bench_models.py"), os.path.dirname(model_path), "--only",
                 "resnet18"])
    model_path = os.path.abspath(model_path)
    log = os.path.join(work, "resnet18.jsonl")

    tune = [tessel, "tune", model_path, "--records", log, "--trials", str(args.trials), "--time-budget",
            str(args.time_budget), "--target", args.target]
    if args.cache:
        tune += ["--cache", args.cache]
    if args.mpi > 1:
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        tune = ["mpirun", "--enable-recovery", "--oversubscribe", "-np", str(args.mpi)] + tune
    t0 = time.time()
    if not args.no_tune:
        run(tune)
    tune_s = time.time() - t0

    libraries = {}
    for kind in ("default", "tuned"):
        so = os.path.join(work, kind + ".so")
        command = [tessel, "build", model_path, "-o", so, "--name", "model", "--target", args.target]
        if kind == "tuned":
            command += ["--records", log]
        run(command)
        libraries[kind] = so

    model = onnx.load(model_path, load_external_data=False)
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal(shape).astype(dtype) for _, dtype, shape in value_infos(model, "input")]
    outputs = value_infos(model, "output")
    default = Library(libraries["default"], "model", inputs, outputs)
    tuned = Library(libraries["tuned"], "model", inputs, outputs)
    default.call(), tuned.call()  # warm-up (first-touch of the arena, thread start)
    for a, b in zip(default.outputs, tuned.outputs):
        scale = max(1.0, float(np.max(np.abs(a))))
        error = float(np.max(np.abs(a - b)))
        if error > 1e-3 * scale:
            sys.exit(f"the tuned library's output differs from the default one's by {error} (scale {scale})")
    times = {"default": [], "tuned": []}
    for _ in range(args.repeat):
        times["default"].append(default.call())
        times["tuned"].append(tuned.call())

    print(f"\nResNet-18, {args.target}: tuned for {tune_s:.0f} s ({args.trials} trials or {args.time_budget:.0f} s "
          f"per kernel on average), {args.repeat} end-to-end runs each, alternating")
    print(f"{'schedules':<10} {'min ms':>9} {'median ms':>10}")
    for kind in ("default", "tuned"):
        t = times[kind]
        print(f"{kind:<10} {1000 * min(t):9.2f} {1000 * statistics.median(t):10.2f}")
    speedup = min(times["default"]) / min(times["tuned"])
    print(f"speed-up (min): {speedup:.2f}x; medians {statistics.median(times['default']) / statistics.median(times['tuned']):.2f}x")


if __name__ == "__main__":
    main()
