"""The hostile inputs of tests/badinput, built fresh for every case (cases.json names them).

Each fixture writes files into the case's work folder and returns nothing; the commands of a case
refer to them as {work}/NAME. Models are written with the onnx helper (Debian's python3-onnx), so
they are exactly the files a stranger could hand us: nothing here goes through Tessel.
"""
import json
import os
import shutil
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _save(model_graph, path, opset=17):
    model = helper.make_model(model_graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, path)


def _write_pb(array, name, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def _float_io(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


# ─── Models ───────────────────────────────────────────────────────────────────────────────────────

def mlp(work, source_dir):
    """The shipped sample model and its inputs folder, as a user's own files."""
    models = os.path.join(source_dir, "resources", "models")
    shutil.copy(os.path.join(models, "mlp.onnx"), os.path.join(work, "mlp.onnx"))
    shutil.copytree(os.path.join(models, "mlp"), os.path.join(work, "mlp_inputs"))


def earlier_output(work, source_dir):
    """An out/ folder holding the output of an earlier, successful run."""
    os.makedirs(os.path.join(work, "out"), exist_ok=True)
    _write_pb(np.full((2, 3), 42, dtype=np.float32), "y", os.path.join(work, "out", "output_0.pb"))


def truncated_model(work, source_dir):
    """The sample model cut in the middle of a tensor."""
    with open(os.path.join(source_dir, "resources", "models", "mlp.onnx"), "rb") as f:
        data = f.read()
    with open(os.path.join(work, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])


def gather_index_input(work, source_dir):
    """Gather of a constant table at runtime indices; input_0.pb holds one index past the end."""
    table = numpy_helper.from_array(np.arange(15, dtype=np.float32).reshape(5, 3), "table")
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "idx"], ["y"], name="lookup", axis=0)],
        "gather_index_input",
        [helper.make_tensor_value_info("idx", TensorProto.INT64, [2])],
        [_float_io("y", [2, 3])],
        [table])
    _save(graph, os.path.join(work, "gather.onnx"))
    os.mkdir(os.path.join(work, "gather_inputs"))
    _write_pb(np.array([1, 7], dtype=np.int64), "idx", os.path.join(work, "gather_inputs", "input_0.pb"))


def gather_index_constant(work, source_dir):
    """Gather whose index is a constant initializer out of range."""
    idx = numpy_helper.from_array(np.array([0, -6], dtype=np.int64), "idx")
    graph = helper.make_graph(
        [helper.make_node("Gather", ["x", "idx"], ["y"], name="pick", axis=0)],
        "gather_index_constant", [_float_io("x", [5, 3])], [_float_io("y", [2, 3])], [idx])
    _save(graph, os.path.join(work, "gather_const.onnx"))
    os.mkdir(os.path.join(work, "gather_const_inputs"))
    _write_pb(np.ones((5, 3), dtype=np.float32), "x", os.path.join(work, "gather_const_inputs", "input_0.pb"))


def gather_elements_index_input(work, source_dir):
    """GatherElements with a runtime index tensor holding 3 on an axis of length 3."""
    graph = helper.make_graph(
        [helper.make_node("GatherElements", ["x", "idx"], ["y"], name="pick_elements", axis=1)],
        "gather_elements_index_input",
        [_float_io("x", [2, 3]), helper.make_tensor_value_info("idx", TensorProto.INT64, [2, 2])],
        [_float_io("y", [2, 2])])
    _save(graph, os.path.join(work, "gather_elements.onnx"))
    folder = os.path.join(work, "gather_elements_inputs")
    os.mkdir(folder)
    _write_pb(np.arange(6, dtype=np.float32).reshape(2, 3), "x", os.path.join(folder, "input_0.pb"))
    _write_pb(np.array([[0, 2], [3, 1]], dtype=np.int64), "idx", os.path.join(folder, "input_1.pb"))


def scatter_elements_index_input(work, source_dir):
    """ScatterElements writing through a runtime index 4 into an axis of length 3."""
    graph = helper.make_graph(
        [helper.make_node("ScatterElements", ["x", "idx", "u"], ["y"], name="scatter", axis=1)],
        "scatter_elements_index_input",
        [_float_io("x", [2, 3]), helper.make_tensor_value_info("idx", TensorProto.INT64, [2, 1]),
         _float_io("u", [2, 1])],
        [_float_io("y", [2, 3])])
    _save(graph, os.path.join(work, "scatter.onnx"))
    folder = os.path.join(work, "scatter_inputs")
    os.mkdir(folder)
    _write_pb(np.zeros((2, 3), dtype=np.float32), "x", os.path.join(folder, "input_0.pb"))
    _write_pb(np.array([[1], [4]], dtype=np.int64), "idx", os.path.join(folder, "input_1.pb"))
    _write_pb(np.ones((2, 1), dtype=np.float32), "u", os.path.join(folder, "input_2.pb"))


def no_outputs(work, source_dir):
    """A graph that computes something and declares no output."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "no_outputs",
                              [_float_io("x", [4])], [])
    _save(graph, os.path.join(work, "no_outputs.onnx"))


def huge_input(work, source_dir):
    """An input declared f32[2^62, 4]: its element count overflows 64 bits."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "huge_input",
                              [_float_io("x", [2**62, 4])], [_float_io("y", [2**62, 4])])
    _save(graph, os.path.join(work, "huge.onnx"))


def big_plan(work, source_dir, rows=2**31, name="big_plan"):
    """Expand of a scalar to f32[2^31, 4] (32 GiB) then a reduction: the plan cannot fit."""
    shape = numpy_helper.from_array(np.array([rows, 4], dtype=np.int64), "shape")
    graph = helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["big"], name="expand"),
         helper.make_node("ReduceSum", ["big"], ["y"], name="sum", keepdims=0)],
        name, [_float_io("x", [1])], [_float_io("y", [])], [shape])
    _save(graph, os.path.join(work, name + ".onnx"))
    os.mkdir(os.path.join(work, name + "_inputs"))
    _write_pb(np.ones(1, dtype=np.float32), "x", os.path.join(work, name + "_inputs", "input_0.pb"))


def mid_plan(work, source_dir):
    """The same at f32[2^28, 4] (4 GiB): fits the machine, not a process limited to 4 GiB."""
    big_plan(work, source_dir, rows=2**28, name="mid_plan")


def bfloat16_cast(work, source_dir):
    """f32 -> bf16 -> f32: rounding to 8 significant bits, ties to even, NaN and infinities kept."""
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["h"], name="to_bf16", to=TensorProto.BFLOAT16),
         helper.make_node("Cast", ["h"], ["y"], name="to_f32", to=TensorProto.FLOAT)],
        "bfloat16_cast", [_float_io("x", [6])], [_float_io("y", [6])])
    _save(graph, os.path.join(work, "bf16.onnx"))
    os.mkdir(os.path.join(work, "bf16_inputs"))
    x = np.array([1.0, 1.00390625, 1.01171875, -3.3999e38, np.inf, np.nan], dtype=np.float32)
    _write_pb(x, "x", os.path.join(work, "bf16_inputs", "input_0.pb"))


# ─── Other files a user hands over ────────────────────────────────────────────────────────────────

def fifo(work, source_dir):
    """A named pipe nobody writes to: reading it would block forever."""
    os.mkfifo(os.path.join(work, "pipe"))


def empty_folder(work, source_dir):
    os.mkdir(os.path.join(work, "folder"))


def binary_schedule(work, source_dir):
    """A schedule file holding control bytes (a terminal escape among them)."""
    with open(os.path.join(work, "binary.sched"), "wb") as f:
        f.write(b"split(C.i, 8)\n\x1b[2J\x00\x07garbage(\x01)\n")


def nested_unroll_schedule(work, source_dir):
    """Three nested unrolls of 64 iterations: 262144 statements if nothing stops it."""
    with open(os.path.join(work, "unroll.sched"), "w") as f:
        f.write("unroll(C.i)\nunroll(C.j)\nunroll(C.k)\n")


def shell_session(work, source_dir):
    """A studio session whose c target would run a shell command if it reached a shell."""
    mlp(work, source_dir)
    session = {"format": "tessel-session", "version": 1, "model": {"path": "mlp.onnx"},
               "target": 'c -cc="cc;touch ' + os.path.join(work, "pwned") + '"'}
    with open(os.path.join(work, "evil.tessel"), "w") as f:
        json.dump(session, f)


def measure_shell_request(work, source_dir):
    """One tessel-measure request whose target hides a command substitution in the c flags."""
    mlp(work, source_dir)
    request = {"id": 1, "op": "measure", "model": os.path.join(work, "mlp.onnx"),
               "target": 'c -cflags="-O2 $(touch ' + os.path.join(work, "pwned") + ')"',
               "kernel": "fused_dense_relu_0", "schedule": "", "seed": 1}
    with open(os.path.join(work, "request.jsonl"), "w") as f:
        f.write(json.dumps(request) + "\n")


def bad_recovery(work, source_dir):
    """A recovery (autosave) file whose session fields have the wrong JSON types."""
    mlp(work, source_dir)
    session = {"format": "tessel-session", "version": 1, "model": {"path": os.path.join(work, "mlp.onnx")},
               "target": ["llvm"], "pass_options": 3, "schedules": {"fused_dense_relu_0": 5}}
    with open(os.path.join(work, "recovery.tessel"), "w") as f:
        json.dump({"session": session, "modified": True}, f)


def pending_recovery(work, source_dir):
    """A valid recovery file holding an edit (another target) the user has not been asked about."""
    mlp(work, source_dir)
    session = {"format": "tessel-session", "version": 1, "model": {"path": os.path.join(work, "mlp.onnx")},
               "target": "interp", "pass_options": {}}
    with open(os.path.join(work, "recovery.tessel"), "w") as f:
        json.dump({"session": session, "modified": True}, f)


def broken_plugin_folder(work, source_dir):
    """A plugin folder whose entries are each broken in a different way."""
    folder = os.path.join(work, "plugins")
    os.mkdir(folder)
    os.mkdir(os.path.join(folder, "folder.json"))                      # a folder named like metadata
    os.symlink("loop_b.json", os.path.join(folder, "loop_a.json"))     # a symlink loop
    os.symlink("loop_a.json", os.path.join(folder, "loop_b.json"))
    with open(os.path.join(folder, "long.json"), "w") as f:            # an over-long library name
        f.write('{"name": "long", "version": "0.1.0", "core_version": "0.1", "library": "' + "x" * 5000 +
                '.so", "provides": {"target_kinds": ["long"], "codegens": [], "device_types": []}}')
    with open(os.path.join(folder, "not_json.json"), "w") as f:
        f.write("{ this is not json")


def _plugin_library(folder, name, c_source):
    """Compiles c_source into folder/lib<name>.so with the system's cc (an argument vector, no shell)."""
    os.makedirs(folder, exist_ok=True)
    source = os.path.join(folder, name + ".c")
    with open(source, "w") as f:
        f.write(c_source)
    library = os.path.join(folder, "lib" + name + ".so")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", library, source], check=True)
    return library


def _plugin_description(folder, name, library):
    with open(os.path.join(folder, name + ".json"), "w") as f:
        json.dump({"name": name, "version": "0.1.0", "core_version": "0.1", "library": library,
                   "provides": {"target_kinds": [name], "codegens": [], "device_types": []}}, f)


def hostile_plugin_folder(work, source_dir):
    """Plugins that would run code they must not: a library outside the folder (relative, absolute, and
    through a link; loading it would create {work}/pwned), a registration that crashes, and one that never returns."""
    folder = os.path.join(work, "plugins")
    evil = _plugin_library(os.path.join(work, "elsewhere"), "evil",
                           '#include <stdio.h>\n'
                           '__attribute__((constructor)) static void run(void) {\n'
                           '  FILE* f = fopen("%s", "w"); if (f) fclose(f);\n}\n'
                           'int tessel_plugin_register(void* context) { (void)context; return 0; }\n'
                           % os.path.join(work, "pwned"))
    os.makedirs(folder)
    _plugin_description(folder, "escape", "../elsewhere/libevil.so")
    _plugin_description(folder, "absolute", evil)
    os.symlink(evil, os.path.join(folder, "liblink.so"))  # a link in the folder pointing out of it
    _plugin_description(folder, "link", "liblink.so")
    _plugin_library(folder, "crash", 'int tessel_plugin_register(void* context) {\n'
                                     '  (void)context; return *(volatile int*)0;\n}\n')
    _plugin_description(folder, "crash", "libcrash.so")
    _plugin_library(folder, "hang", '#include <unistd.h>\n'
                                    'int tessel_plugin_register(void* context) {\n'
                                    '  (void)context; for (;;) sleep(1);\n}\n')
    _plugin_description(folder, "hang", "libhang.so")


def huge_loop(work, source_dir):
    """A Loop whose trip count is 2^62: y = x + 1 per iteration, forever as far as anyone waits."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.ones([1], np.float32), "one")),
         helper.make_node("Add", ["v_in", "one"], ["v_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), _float_io("v_in", [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), _float_io("v_out", [1])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "cond", "x"], ["y"], body=body)], "huge_loop", [_float_io("x", [1])],
        [_float_io("y", [1])],
        initializer=[numpy_helper.from_array(np.array(2 ** 62, np.int64), "M"),
                     numpy_helper.from_array(np.array(True), "cond")])
    _save(graph, os.path.join(work, "loop.onnx"))
    os.mkdir(os.path.join(work, "loop_inputs"))
    _write_pb(np.zeros([1], np.float32), "x", os.path.join(work, "loop_inputs", "input_0.pb"))


def _nested_ifs(depth):
    """y = x + 1 at the bottom of `depth` Ifs on one cond, each nesting in its then branch: a model
    linear in depth that took 2.5x longer per level before session 20 (issue 40). Built top-down in
    place: helper.make_graph copies its nodes, bodies included, which is quadratic in depth."""
    def fill_leaf(g, name):
        g.name = name
        g.node.extend([helper.make_node("Constant", [], [name + "_one"],
                                        value=numpy_helper.from_array(np.ones([1], np.float32), name + "_c")),
                       helper.make_node("Add", ["x", name + "_one"], [name + "_y"])])
        g.output.extend([_float_io(name + "_y", [1])])

    top = helper.make_graph([], "nested_ifs", [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                                               _float_io("x", [1])], [_float_io("level%d_y" % depth, [1])])
    g = top
    for level in range(depth, 0, -1):
        node = g.node.add()
        node.op_type, node.name = "If", "if%d" % level
        node.input.append("cond")
        node.output.append("level%d_y" % level)
        then_attr, else_attr = node.attribute.add(), node.attribute.add()
        then_attr.name, then_attr.type = "then_branch", onnx.AttributeProto.GRAPH
        else_attr.name, else_attr.type = "else_branch", onnx.AttributeProto.GRAPH
        fill_leaf(else_attr.g, "level%d_else" % level)
        g = then_attr.g
        g.name = "level%d" % (level - 1)
        if level > 1:
            g.output.extend([_float_io("level%d_y" % (level - 1), [1])])
    fill_leaf(g, "level0")
    return top


def _save_deep(graph, path):
    """onnx.save walks the model recursively (Python's recursion limit); the bytes need no walk."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def nested_ifs(work, source_dir):
    """256 nested Ifs (the most Tessel takes) and 1000 (refused by name), with inputs cond=true, x=2."""
    _save_deep(_nested_ifs(256), os.path.join(work, "ifs256.onnx"))
    _save_deep(_nested_ifs(1000), os.path.join(work, "ifs1000.onnx"))
    os.mkdir(os.path.join(work, "ifs_inputs"))
    _write_pb(np.array(True), "cond", os.path.join(work, "ifs_inputs", "input_0.pb"))
    _write_pb(np.array([2], np.float32), "x", os.path.join(work, "ifs_inputs", "input_1.pb"))


def _sparse_matmul(path, indices):
    values = numpy_helper.from_array(np.array([1.5, -2.0, 4.0], np.float32), "w")
    sparse = helper.make_sparse_tensor(values, numpy_helper.from_array(np.array(indices, np.int64), "w_indices"), [4, 3])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "sparse_weight", [_float_io("x", [1, 4])],
                              [_float_io("y", [1, 3])], sparse_initializer=[sparse])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(path, "wb") as f:  # onnx.save's checks are the importer's job here
        f.write(model.SerializeToString())


def sparse_weight(work, source_dir):
    """MatMul by a weight stored as a sparse_initializer (3 of 12 values, linear indices), and the
    same with an index outside the tensor."""
    _sparse_matmul(os.path.join(work, "sparse.onnx"), [0, 5, 11])
    _sparse_matmul(os.path.join(work, "sparse_bad.onnx"), [0, 5, 12])
    os.mkdir(os.path.join(work, "sparse_inputs"))
    _write_pb(np.array([[1, 2, 3, 4]], np.float32), "x", os.path.join(work, "sparse_inputs", "input_0.pb"))


def damaged_records(work, source_dir):
    """A shared tuning log: a record whose schedule does not parse, then a line cut off mid-write."""
    record = {"kernel_key": "0123456789abcdef", "kernel": "fused_mat_mul_0", "target": "llvm",
              "schedule": "split(C.i,", "ms_min": 0.1, "ms_median": 0.1, "error": ""}
    with open(os.path.join(work, "records.jsonl"), "w") as f:
        f.write(json.dumps(record) + "\n")
        f.write(json.dumps(dict(record, schedule=""))[:40])


FIXTURES = {fn.__name__: fn for fn in [
    mlp, earlier_output, truncated_model, gather_index_input, gather_index_constant, gather_elements_index_input,
    scatter_elements_index_input, no_outputs, huge_input, big_plan, bfloat16_cast, fifo, empty_folder,
    binary_schedule, nested_unroll_schedule, shell_session, measure_shell_request, bad_recovery,
    pending_recovery, broken_plugin_folder, hostile_plugin_folder, damaged_records, huge_loop, nested_ifs, sparse_weight, mid_plan]}


# ─── Checks of what a case wrote ──────────────────────────────────────────────────────────────────

def _bfloat16_round(x):
    """float32 -> nearest bfloat16 (ties to even) -> float32, written with integer operations."""
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32).copy()
    out[np.isnan(x)] = np.nan
    return out


def bfloat16_values(work):
    """out/output_0.pb holds the input rounded to bfloat16, exactly."""
    x = numpy_helper.to_array(onnx.load_tensor(os.path.join(work, "bf16_inputs", "input_0.pb")))
    y = numpy_helper.to_array(onnx.load_tensor(os.path.join(work, "out", "output_0.pb")))
    want = _bfloat16_round(x)
    same = (y == want) | (np.isnan(y) & np.isnan(want))
    return [] if same.all() else ["bfloat16 round trip gave %s, expected %s" % (y.tolist(), want.tolist())]


def recovery_keeps_the_edit(work):
    """recovery.tessel (rewritten by the restored session's autosave, or not) still holds the
    recovered edit: the interp target of pending_recovery."""
    with open(os.path.join(work, "recovery.tessel")) as f:
        target = json.load(f)["session"]["target"]
    return [] if target == "interp" else ["the recovery file now holds target %r, not the recovered 'interp'" % target]


def nested_ifs_value(work):
    y = numpy_helper.to_array(onnx.load_tensor(os.path.join(work, "out", "output_0.pb")))
    return [] if y.tolist() == [3.0] else ["the 256 nested Ifs gave %r, expected [3.0]" % y.tolist()]


def sparse_weight_value(work):
    w = np.zeros(12, np.float32)
    w[[0, 5, 11]] = [1.5, -2.0, 4.0]
    want = np.array([[1, 2, 3, 4]], np.float32) @ w.reshape(4, 3)
    y = numpy_helper.to_array(onnx.load_tensor(os.path.join(work, "out", "output_0.pb")))
    return [] if np.allclose(y, want) else ["the sparse weight gave %r, expected %r" % (y.tolist(), want.tolist())]


CHECKS = {fn.__name__: fn for fn in [bfloat16_values, recovery_keeps_the_edit, nested_ifs_value, sparse_weight_value]}
